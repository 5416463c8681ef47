#!/usr/bin/env bash
# bench/decode_bulk.sh - the key split's copy paths at decode B8 H32 T1 L32768 D128 bf16 in one
# run (< 60 s), against SDPA, PyTorch's copy and a read-only stream; from the repository root
# with dist/ carried (tools/make-dist.sh):
#
#   bash bench/decode_bulk.sh   (BUDGET=S seconds, default 57; STEPS=ncu,b8,anchors,verify,rows;
#                                VARIANTS="ENV ..." for the B8 variants, comma-separated, - for
#                                the planner's plan)
#
# 1. ncu of the B8 kernel (L2 sectors read, read hit rate, DRAM bytes): the planner's plan
#    (cp.async, L2::128B prefetch), then 128-key tiles (TX_ATTN_KS_BN=128) where time is left;
# 2. b8: tx at B8 H32 L32768 per variant (`txc bench --json`, median, L2 flushed, its sampled
#    check against the reference): the plan, 128-key tiles (TX_ATTN_KS_BN=128) with 2 stages and
#    with a 256-byte prefetch;
# 3. anchors (bench/decode_read.py): SDPA on every timed shape, PyTorch's 4 GiB copy, a Triton
#    kernel reading 4 GiB once (the read-only ceiling);
# 4. verify through `txc bench` against the reference interpreter at ragged lengths (1, the
#    full cache, 0, scattered): 128-key tiles at B3 H2 T16 L1000, 2 stages at 3 blocks an SM at
#    B1 H4 L32773;
# 5. rows: B1 H32 L32768 with the plan, 12 chunks (384 blocks) at 3 blocks an SM (2 stages)
#    and at 2, 128-key tiles; B4 GQA 32/8 L16384 with the plan and 12 chunks at 3 blocks an SM;
# 6. a summary last. Files in $OUT: tx_*.json, read.json, ncu-*.txt, summary.txt, log.txt.
set -uo pipefail
STEPS=${STEPS:-ncu,b8,anchors,verify,rows}
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup decode_bulk decode-bulk-out 57 4
DEC=$X/attn_decode.tx
GQA=examples/attention_decode_gqa.tx
VARIANTS=${VARIANTS:-"- TX_ATTN_KS_BN=128,TX_ATTN_KS_STAGES=2 TX_ATTN_KS_BN=128,TX_ATTN_KS_L2=256"}
dimval() { echo "$*" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
# lengths B L FILE [full]: every length L (full), else 1, L, 0, then scattered ones
lens() { "$PY" -c "import numpy as np,sys; b,l,full=int(sys.argv[1]),int(sys.argv[2]),sys.argv[4]=='full'; np.save(sys.argv[3], np.array([l if full else ([1,l,0][i%3] if i<3 else (i*7919)%l+1) for i in range(b)],'<i4'))" "$1" "$2" "$3" "${4:-}"; }
tmpl() { # ENV FILE SIZES...: the partials kernel's template
  local env=$1 f=$2; shift 2
  # shellcheck disable=SC2086
  env $env "$TXC" "$f" "$@" --target=sm_90a --explain -o /dev/null 2>&1 | grep -o 'template mma[^:]*' | head -1
}
tx_time() { # SHAPE ENV FILE SIZES...: random inputs, full caches -> tx_SHAPE_TAG.json
  local shape=$1 env=${2//,/ } tag=${2//[=,]/_} f=$3; shift 3
  [ "$env" = - ] && env="" && tag=planner
  if [ "$(left)" -lt 5 ]; then log "skipped $shape $tag: $(left) s left"; return; fi
  lens "$(dimval B "$@")" "$(dimval L "$@")" "$W/full.npy" full
  # shellcheck disable=SC2086
  if env $env timeout $(( $(left) - 2 )) "$TXC" bench "$f" --device=gpu --iters 20 --timing-budget=1 --json --random-inputs=1 --input "len=$W/full.npy" "$@" >"$OUT/tx_${shape}_$tag.json" 2>>"$LOG"; then
    log "timed $shape $tag: $("$PY" -c "import json,sys; f=json.load(open(sys.argv[1]))['fused']; print(f['graph_us'], 'verified' if f['verified'] else 'NOT VERIFIED')" "$OUT/tx_${shape}_$tag.json" 2>&1) [$(tmpl "$env" "$f" "$@")]"
  else
    fail=1; log "FAIL  timing $shape $tag"
  fi
}
verify() { # ENV FILE SIZES...: ragged lengths, txc bench on the GPU against the reference
  local env=${1//,/ } f=$2; shift 2
  [ "$env" = - ] && env=""
  if [ "$(left)" -lt 4 ]; then log "skipped verify $env $*"; return; fi
  lens "$(dimval B "$@")" "$(dimval L "$@")" "$W/len.npy"
  # shellcheck disable=SC2086
  if env $env timeout 20 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 --input "len=$W/len.npy" "$@" >"$W/v.txt" 2>&1 &&
     ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    log "ok    verify $(basename "$f" .tx) $* $env [$(tmpl "$env" "$f" "$@")]"
  else
    fail=1; log "FAIL  verify $(basename "$f" .tx) $* $env: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')"
  fi
  cat "$W/v.txt" >>"$LOG"
}
B8="-D B=8 -D H=32 -D T=1 -D L=32768"
if has ncu 20 && command -v ncu >/dev/null; then
  lens 8 32768 "$W/full.npy" full
  for e in - TX_ATTN_KS_BN=128; do
    [ "$(left)" -lt 42 ] && [ "$e" != - ] && break
    tag=${e//[=,]/_}; [ "$e" = - ] && e="" && tag=planner
    # shellcheck disable=SC2086
    env $e timeout $(( $(left) - 2 )) ncu --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum \
      -k regex:_k0 -c 1 "$TXC" run "$DEC" --device=gpu --random-inputs=1 --input "len=$W/full.npy" $B8 --output-dir "$W/o" >"$OUT/ncu-$tag.txt" 2>&1 ||
      log "ncu $tag ran out of time (see ncu-$tag.txt)"
    grep -E "lts__|dram__|gpu__time" "$OUT/ncu-$tag.txt" | sed "s/^/ncu $tag: /" | tee -a "$LOG"
  done
fi
if has b8; then
  # shellcheck disable=SC2086
  for v in $VARIANTS; do tx_time b8h32l32k "$v" "$DEC" $B8; done
fi
if has anchors 12; then
  timeout $(( $(left) - 2 )) "$PY" bench/decode_read.py "$OUT/read.json" >>"$LOG" 2>&1 || log "decode_read.py failed (see log.txt)"
fi
if has verify; then
  verify TX_ATTN_KS_BN=128 "$DEC" -D B=3 -D H=2 -D T=16 -D L=1000
  verify TX_ATTN_KS_STAGES=2,TX_ATTN_KS_BLOCKS=3 "$DEC" -D B=1 -D H=4 -D T=1 -D L=32773
fi
if has rows; then
  B1="-D B=1 -D H=32 -D T=1 -D L=32768"
  # shellcheck disable=SC2086
  for v in - TX_ATTN_KS_STAGES=2,TX_ATTN_KS_BLOCKS=3,TX_ATTN_SPLITS=12 TX_ATTN_SPLITS=12 TX_ATTN_KS_BN=128; do
    tx_time b1h32l32k "$v" "$DEC" $B1
  done
  tx_time gqa_b4l16k - "$GQA" -D B=4 -D T=1 -D L=16384
  tx_time gqa_b4l16k TX_ATTN_KS_STAGES=2,TX_ATTN_KS_BLOCKS=3,TX_ATTN_SPLITS=12 "$GQA" -D B=4 -D T=1 -D L=16384
fi
"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(p))
    except Exception: return {}
r = load(os.path.join(out, "read.json"))
print("decode attention D128 bf16 (H200), one run: tx (txc bench median, L2 flushed), SDPA (PyTorch's pick), copy, read")
b8 = (r.get("b8h32l32k") or {}).get("kv_bytes") or 2 * 8 * 32 * 32768 * 128 * 2
for key, what in (("copy_GBps", "copy (read + write)"), ("read_GBps", "read-only (Triton)")):
    if r.get(key): print("%-20s %6.0f GB/s: the B8 H32 L32768 cache (%.3f GB) in %.1f us" % (what, r[key], b8 / 1e9, b8 / r[key] / 1e3))
print("%-12s %-40s %9s %7s %9s %8s  %s" % ("shape", "variant", "tx us", "GB/s", "SDPA us", "SDPA/tx", "verified"))
for p in sorted(glob.glob(os.path.join(out, "tx_*.json"))):
    n = os.path.basename(p)[3:-5]
    shape = next((s for s in ("b8h32l32k", "b1h32l32k", "b1h32l8k", "gqa_b4l16k") if n.startswith(s)), n)
    var = n[len(shape) + 1:]
    f = load(p).get("fused") or {}; t = f.get("graph_us")
    a = r.get(shape) or {}; kv = a.get("kv_bytes"); sd = a.get("sdpa_ms")
    print("%-12s %-40s %9s %7s %9s %8s  %s" % (shape, var[:40], "%.1f" % t if t else "-", "%.0f" % (kv / t / 1e3) if t and kv else "-",
          "%.1f" % (sd * 1e3) if sd else "-", "%.3fx" % (sd * 1e3 / t) if t and sd else "-", f.get("verified")))
print("targets (issue 13): B8 H32 L32768 SDPA/tx >= 1.0 and >= 80% of copy")
PYEOF
log "decode_bulk: $(( $(date +%s) - T0 )) s, $([ "$fail" = 0 ] && echo all ok || echo FAILURES)"
exit "$fail"
