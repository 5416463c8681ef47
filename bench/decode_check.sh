#!/usr/bin/env bash
# bench/decode_check.sh - decode attention (1-16 query rows against a long KV cache) on the GPU, in
# one run, from the repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/decode_check.sh            (BUDGET=S seconds, default 95; STEPS=verify,torch,time,ncu)
#
# 1. verify: split-KV ([attention.split_kv]) and unsplit decode at ragged sizes through
#    `txc bench`, every output checked against the reference interpreter (cache lengths 1, 17,
#    1000, 2048, 32768 + 5, the full cache and 0: rows wholly masked; T = 1..16 rows; GQA 32/8;
#    f16; 3 chunks forced by TX_ATTN_SPLITS=3 where the planner would not split);
# 2. torch: bench/decode_torch.py times SDPA (enable_gqa for GQA) on the timed shapes and
#    PyTorch's copy, in the same run;
# 3. time: tx at B1 H32 L8192 and L32768, B8 H32 L32768, B4 GQA 32/8 L16384, B2 H32 T4 L32768
#    (full caches; `txc bench --json`, its sampled check verifies each), the split shapes also
#    B1 L32768 with TX_ATTN_SPLITS=1 (what the split buys), other chunk counts beside the
#    planner's (GQA 4, B1 16); then the rest of the verification;
# 4. ncu of the B8 H32 L32768 kernel where time is left ($OUT/ncu-b8.txt);
# 5. a summary table last: tx us, % of txc bench's measured copy, SDPA us, SDPA/tx.
# Files in $OUT: verify.txt, tx_*.json, torch.json, summary.txt, log.txt. Exit 1 when a check failed.
set -uo pipefail
STEPS=${STEPS:-verify,torch,time,ncu}
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup decode_check decode-out 95 10
DEC=$X/attn_decode.tx
GQA=examples/attention_decode_gqa.tx
sed 's/bf16/f16/g' "$DEC" >"$W/decode_f16.tx"

# lengths: $1 = B, $2 = L, $3 = FILE, $4 = full -> every length L; else 1, L, 0 (a wholly masked
# row), then scattered ones
lens() {
  "$PY" -c "import numpy as np,sys; b,l=int(sys.argv[1]),int(sys.argv[2]); full=sys.argv[4]=='full'; a=np.array([l if full else ([1,l,0][i%3] if i<3 else (i*7919)%l+1) for i in range(b)],'<i4'); np.save(sys.argv[3],a)" "$1" "$2" "$3" "${4:-}"
}
dimval() { echo "$*" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
# the planner's chunks for ENV FILE SIZES... (the sm_90a kernel's template), e.g. "split-kv 8"
splitof() {
  local env=$1 f=$2; shift 2
  # shellcheck disable=SC2086
  env $env "$TXC" "$f" "$@" --target=sm_90a --explain -o /dev/null 2>&1 | grep -o 'split-kv [0-9]*' | head -1 | grep . || echo unsplit
}

: >"$OUT/verify.txt"
verify() { # ENV FILE SIZES... : txc bench on the GPU, checked against the reference
  local env=$1 f=$2; shift 2
  lens "$(dimval B "$@")" "$(dimval L "$@")" "$W/len.npy"
  if [ "$(left)" -lt 8 ]; then log "skipped verify $(basename "$f") $*"; return; fi
  # shellcheck disable=SC2086
  if env $env timeout 40 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 --input "len=$W/len.npy" "$@" >"$W/v.txt" 2>&1 &&
     ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    $(basename "$f" .tx) $* $env [$(splitof "$env" "$f" "$@")]" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  $(basename "$f" .tx) $* $env: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  { echo "== verify $env $f $*"; cat "$W/v.txt"; } >>"$LOG"
}
if has verify; then
  verify "" "$DEC" -D B=1 -D H=4 -D T=1 -D L=32773
  verify "" "$DEC" -D B=3 -D H=2 -D T=3 -D L=1000
  verify "" "$DEC" -D B=6 -D H=1 -D T=16 -D L=2048
  verify "" "$GQA" -D B=1 -D T=2 -D L=20000
  verify "" "$W/decode_f16.tx" -D B=3 -D H=2 -D T=4 -D L=1500
  verify "TX_ATTN_SPLITS=3" "$DEC" -D B=3 -D H=1 -D T=2 -D L=17
fi

# the timed shapes: NAME FILE SIZES
SHAPES=(
  "b1h32l8k|$DEC|-D B=1 -D H=32 -D T=1 -D L=8192"
  "b1h32l32k|$DEC|-D B=1 -D H=32 -D T=1 -D L=32768"
  "b8h32l32k|$DEC|-D B=8 -D H=32 -D T=1 -D L=32768"
  "gqa_b4l16k|$GQA|-D B=4 -D T=1 -D L=16384"
  "b2h32t4l32k|$DEC|-D B=2 -D H=32 -D T=4 -D L=32768"
)
if has torch 15; then
  timeout $(( $(left) - 5 )) "$PY" bench/decode_torch.py "$OUT/torch.json" >>"$LOG" 2>&1 || log "decode_torch.py failed (see log.txt)"
fi
tx_time() { # NAME ENV FILE SIZES...
  local name=$1 env=$2 f=$3; shift 3
  if [ "$(left)" -lt 10 ]; then log "skipped timing $name $env: $(left) s left"; return; fi
  lens "$(dimval B "$@")" "$(dimval L "$@")" "$W/len.npy" full
  # shellcheck disable=SC2086
  if env $env timeout $(( $(left) - 3 )) "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --timing-budget=1 --json --input "len=$W/len.npy" "$@" >"$OUT/tx_$name${env:+_$(echo "$env" | tr '=' '_')}.json" 2>>"$LOG"; then
    log "timed $name $env ($*)"
  else
    fail=1; log "FAIL  timing $name $env"
  fi
  "$TXC" "$f" "$@" --target=sm_90a --explain -o /dev/null 2>&1 | grep -E "split_kv|template" | sed "s/^/  $name: /" >>"$LOG"
}
if has time; then
  for s in "${SHAPES[@]}"; do
    IFS='|' read -r name f sizes <<<"$s"
    # shellcheck disable=SC2086
    tx_time "$name" "" "$f" $sizes
  done
  tx_time b1h32l32k "TX_ATTN_SPLITS=1" "$DEC" -D B=1 -D H=32 -D T=1 -D L=32768
  tx_time gqa_b4l16k "TX_ATTN_SPLITS=4" "$GQA" -D B=4 -D T=1 -D L=16384
  tx_time gqa_b4l16k "TX_ATTN_GQA_PACK=0" "$GQA" -D B=4 -D T=1 -D L=16384
  tx_time b1h32l8k "TX_ATTN_SPLITS=16" "$DEC" -D B=1 -D H=32 -D T=1 -D L=8192
  tx_time b1h32l32k "TX_ATTN_SPLITS=16" "$DEC" -D B=1 -D H=32 -D T=1 -D L=32768
fi
if has verify 12; then
  verify "TX_ATTN_SPLITS=3" "$DEC" -D B=3 -D H=2 -D T=5 -D L=1
  verify "" "$DEC" -D B=5 -D H=3 -D T=1 -D L=1000
  verify "" "$GQA" -D B=3 -D T=5 -D L=1000
fi
# ncu of the B8 H32 L32768 kernel (what bounds the stream): $OUT/ncu-b8.txt
if has ncu 25 && command -v ncu >/dev/null; then
  lens 8 32768 "$W/len.npy" full
  timeout $(( $(left) - 8 )) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section Occupancy -k regex:_k0 -c 1 "$TXC" run "$DEC" --device=gpu --random-inputs=1 \
    --input "len=$W/len.npy" -D B=8 -D H=32 -D T=1 -D L=32768 --output-dir "$W/o" >"$OUT/ncu-b8.txt" 2>&1 ||
    log "ncu failed or ran out of time (see ncu-b8.txt)"
fi

"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(p))
    except Exception: return {}
th = load(os.path.join(out, "torch.json"))
print("decode attention (H200): tx (txc bench, median, L2 flushed) against SDPA and the copy, same run")
print("%-12s %-18s %8s %8s %5s %9s %8s %8s  %s" % ("shape", "variant", "verified", "tx us", "kern", "GB/s", "%copy", "SDPA us", "SDPA/tx"))
for p in sorted(glob.glob(os.path.join(out, "tx_*.json"))):
    n = os.path.basename(p)[3:-5]
    name, _, var = n.partition("_TX_")
    j = load(p); f = j.get("fused") or {}
    t = f.get("graph_us")
    sd = (th.get(name) or {}).get("sdpa_ms")
    ks = f.get("kernels") or []
    print("%-12s %-18s %8s %8s %5s %9s %8s %8s  %s" % (
        name, ("TX_" + var) if var else "planner", f.get("verified"), "%.1f" % t if t else "-", len(ks),
        "%.0f" % f["GBps"] if f.get("GBps") else "-", "%.1f" % f["pct_copy"] if f.get("pct_copy") else "-",
        "%.1f" % (sd * 1e3) if sd else "-", "%.2fx" % (sd * 1e3 / t) if sd and t else "-"))
    if j.get("copy_GBps") and name == "b8h32l32k" and not var:
        print("  txc bench copy: %.0f GB/s; torch copy: %s GB/s" % (j["copy_GBps"], th.get("copy_GBps")))
print("targets (issue 13): B8 H32 L32768 >= 80% of copy and SDPA/tx >= 1.0")
print("\nverification (ragged sizes, against the reference interpreter):")
print(open(os.path.join(out, "verify.txt")).read())
PYEOF
log "decode_check: $(( $(date +%s) - T0 )) s, $([ $fail = 0 ] && echo all ok || echo FAILURES)"
exit $fail
