#!/usr/bin/env bash
# bench/decode_ab.sh - decode attention on the GPU in one run (< 60 s): the key-split kernel at
# B8 H32 T1 L32768 D128 bf16 with its variants (compile-time knobs, docs/codegen-attention.md
# "Measurement knobs"), the decode row set, a program whose sizes come from its inputs, against
# SDPA, PyTorch's copy and a read-only stream; from the repository root with dist/ carried
# (tools/make-dist.sh):
#
#   bash bench/decode_ab.sh   (BUDGET=S seconds, default 58; STEPS=verify,b8,anchors,rows,qscale,sym,ncu
#                              by default, also verify2 and b1;
#                              VARIANTS="ENV ..." for the B8 variants, comma-separated, - for none;
#                              ROW_VARIANTS the same for the rows (default -), B1_VARIANTS for
#                              step b1 (B1 H32 L32768; default -), NCU_VARIANTS for
#                              ncu (default -), VERIFY_ENV=ENV the compiling environment of the
#                              verification, comma-separated)
#
# 1. verify: through `txc bench` against the reference interpreter: B1 H4 L32773 (a key tile
#    crossing the cache's end), GQA 32/8 B1 T2 L20000 (packed, split), and B3 H2 T3 L1000 with
#    only T bound at compile time (split-KV with sizes from the inputs: `split-kv N rt`), lengths
#    1, the full cache and 0 (a wholly masked row); verify2 (opt-in): T = 16, f16, 3 chunks at L17;
# 2. b8: tx at B8 H32 L32768 per variant (`txc bench --json`, median, L2 flushed; its sampled
#    check verifies each); b1 (opt-in): B1 H32 L32768 per B1_VARIANTS;
# 3. anchors (bench/decode_read.py): SDPA on every timed shape, PyTorch's 4 GiB copy, a Triton
#    kernel reading 4 GiB once (the read-only ceiling);
# 4. rows: tx at B1 H32 L8192 / L32768, B4 GQA 32/8 L16384, B2 H32 T4 L32768 (planner's plan);
# 5. qscale: examples/attention_decode_qscale.tx verified and timed at B8; sym: B1 H32 L8192 with
#    only T bound at compile time (B, H, L from the inputs);
# 6. ncu of the B8 kernel per NCU_VARIANTS (DRAM, L2 hit rate, occupancy, eligible warps, stall
#    reasons) where time is left;
# 7. a summary last: per shape and variant tx us, GB/s of K and V, SDPA us, SDPA/tx; the copy and
#    read-only times of the B8 cache.
# Files in $OUT: tx_*.json, read.json, ncu-b8.txt, summary.txt, log.txt. Exit 1 when a check failed.
set -uo pipefail
STEPS=${STEPS:-verify,b8,anchors,rows,qscale,sym,ncu}
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup decode_ab decode-ab-out 58 5
DEC=$X/attn_decode.tx
GQA=examples/attention_decode_gqa.tx
VARIANTS=${VARIANTS:-"- TX_ATTN_KS_BN=128 TX_ATTN_KS_L2=0 TX_ATTN_KS_LEAN=0,TX_ATTN_KS_L2=0"}
ROW_VARIANTS=${ROW_VARIANTS:--}
NCU_VARIANTS=${NCU_VARIANTS:--}
VERIFY_ENV=${VERIFY_ENV:-}
dimval() { echo "$*" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
# lengths B L FILE [full]: every length L (full), else 1, L, 0, then scattered ones
lens() { "$PY" -c "import numpy as np,sys; b,l,full=int(sys.argv[1]),int(sys.argv[2]),sys.argv[4]=='full'; np.save(sys.argv[3], np.array([l if full else ([1,l,0][i%3] if i<3 else (i*7919)%l+1) for i in range(b)],'<i4'))" "$1" "$2" "$3" "${4:-}"; }
# inputs B H HKV T L DIR: q, k, v (f32 .npy, bf16-exact) and len of the lengths above in DIR
inputs() { "$PY" -c "
import numpy as np,sys; b,h,hk,t,l=map(int,sys.argv[1:6]); d=sys.argv[6]; r=np.random.default_rng(5)
f=lambda s: (r.standard_normal(s,dtype=np.float32).view(np.uint32)&0xffff0000).view(np.float32)
np.save(d+'/q.npy',f((b,h,t,128))); np.save(d+'/k.npy',f((b,hk,l,128))); np.save(d+'/v.npy',f((b,hk,l,128)))" "$@"; lens "$1" "$5" "$6/len.npy" "${7:-}"; }
ok_run() { ! grep -qi "mismatch\|not verified\|FAIL" "$1"; }
verify() { # NAME FILE ARGS...: txc bench on the GPU, checked against the reference
  local name=$1 f=$2; shift 2
  # shellcheck disable=SC2086
  if env ${VERIFY_ENV//,/ } ${XENV:-} timeout 25 "$TXC" bench "$f" --device=gpu --iters 2 "$@" >"$W/v.txt" 2>&1 && ok_run "$W/v.txt"; then
    # shellcheck disable=SC2046,SC2086
    log "ok    verify $name ${XENV:-} [$(env ${VERIFY_ENV//,/ } ${XENV:-} "$TXC" "$f" $(echo "$*" | grep -o -- '-D [A-Z]*=[0-9]*' | tr '\n' ' ') --target=sm_90a --explain -o /dev/null 2>&1 | grep -o 'template.*' | head -1)]"
  else
    fail=1; log "FAIL  verify $name: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')"
  fi
  cat "$W/v.txt" >>"$LOG"
}
tx_time() { # SHAPE ENV FILE ARGS...: tx_SHAPE_TAG.json (TAG: the variant; $TAG when set)
  local shape=$1 env=${2//,/ } tag=${2//[=,]/_} f=$3; shift 3
  [ "$env" = - ] && env="" && tag=${TAG:-planner}
  if [ "$(left)" -lt 6 ]; then log "skipped $shape $tag: $(left) s left"; return; fi
  # shellcheck disable=SC2086
  if env $env timeout $(( $(left) - 3 )) "$TXC" bench "$f" --device=gpu --iters 20 --timing-budget=1 --json "$@" >"$OUT/tx_${shape}_$tag.json" 2>>"$LOG"; then
    log "timed $shape $tag: $("$PY" -c "import json,sys; f=json.load(open(sys.argv[1]))['fused']; print(f['graph_us'], f['verified'], [k.get('template') for k in f.get('kernels',[])])" "$OUT/tx_${shape}_$tag.json" 2>&1)"
  else
    fail=1; log "FAIL  timing $shape $tag"
  fi
}
timed() { # SHAPE ENV FILE SIZES...: random inputs, full caches
  local shape=$1 env=$2 f=$3; shift 3
  lens "$(dimval B "$@")" "$(dimval L "$@")" "$W/full.npy" full
  tx_time "$shape" "$env" "$f" --random-inputs=1 --input "len=$W/full.npy" "$@"
}
if has verify; then
  lens 1 32773 "$W/l1.npy"; verify b1h4l32773 "$DEC" --random-inputs=7 --input "len=$W/l1.npy" -D B=1 -D H=4 -D T=1 -D L=32773
  lens 1 20000 "$W/l2.npy"; verify gqa_b1t2l20000 "$GQA" --random-inputs=7 --input "len=$W/l2.npy" -D B=1 -D T=2 -D L=20000
  mkdir -p "$W/s" && inputs 3 2 2 3 1000 "$W/s" &&
    verify sym_b3h2t3l1000 "$DEC" --input "q=$W/s/q.npy" --input "k=$W/s/k.npy" --input "v=$W/s/v.npy" --input "len=$W/s/len.npy" -D T=3
fi
# verify2: T = 16 rows (split), f16, 3 chunks forced at L17 (an empty chunk, a tile crossing the
# cache's end), lengths 1, the full cache and 0
if has verify2; then
  lens 6 2048 "$W/l3.npy"; verify b6h1t16l2048 "$DEC" --random-inputs=7 --input "len=$W/l3.npy" -D B=6 -D H=1 -D T=16 -D L=2048
  sed 's/bf16/f16/g' "$DEC" >"$W/decode_f16.tx"
  lens 3 1500 "$W/l4.npy"; verify f16_b3h2t4l1500 "$W/decode_f16.tx" --random-inputs=7 --input "len=$W/l4.npy" -D B=3 -D H=2 -D T=4 -D L=1500
  lens 3 17 "$W/l5.npy"; XENV=TX_ATTN_SPLITS=3 verify b3h1t2l17 "$DEC" --random-inputs=7 --input "len=$W/l5.npy" -D B=3 -D H=1 -D T=2 -D L=17
fi
if has b8; then
  for v in $VARIANTS; do timed b8h32l32k "$v" "$DEC" -D B=8 -D H=32 -D T=1 -D L=32768; done
fi
# b1: B1 H32 L32768 per B1_VARIANTS (split counts, copy paths; comma-separated ENV, - for none)
if has b1; then
  for v in ${B1_VARIANTS:--}; do timed b1h32l32k "$v" "$DEC" -D B=1 -D H=32 -D T=1 -D L=32768; done
fi
if has anchors 10; then
  timeout $(( $(left) - 3 )) "$PY" bench/decode_read.py "$OUT/read.json" >>"$LOG" 2>&1 || log "decode_read.py failed (see log.txt)"
fi
if has rows; then
  for v in $ROW_VARIANTS; do
    timed b1h32l8k "$v" "$DEC" -D B=1 -D H=32 -D T=1 -D L=8192
    timed b1h32l32k "$v" "$DEC" -D B=1 -D H=32 -D T=1 -D L=32768
    timed gqa_b4l16k "$v" "$GQA" -D B=4 -D T=1 -D L=16384
    timed b2h32t4l32k "$v" "$DEC" -D B=2 -D H=32 -D T=4 -D L=32768
  done
fi
# qscale: the scale on the query, (q * c) @ kT ([attention.q_prologue]: one kernel), verified at
# ragged sizes and timed at B8 H32 L32768
QS=examples/attention_decode_qscale.tx
if has qscale && [ -f "$QS" ]; then
  lens 3 1000 "$W/lq.npy"; verify qscale_b3h2t3l1000 "$QS" --random-inputs=7 --input "len=$W/lq.npy" -D B=3 -D H=2 -D T=3 -D L=1000
  TAG=qscale timed b8h32l32k - "$QS" -D B=8 -D H=32 -D T=1 -D L=32768
fi
if has sym; then
  mkdir -p "$W/y" && inputs 1 32 32 1 8192 "$W/y" full &&
    TAG=sizes_from_inputs tx_time b1h32l8k - "$DEC" --input "q=$W/y/q.npy" --input "k=$W/y/k.npy" --input "v=$W/y/v.npy" --input "len=$W/y/len.npy" -D T=1
fi
# ncu of the B8 kernel per NCU_VARIANTS ($OUT/ncu-b8[_TAG].txt): DRAM and L2, occupancy, the
# schedulers' eligible warps and the warps' stall reasons
for v in $NCU_VARIANTS; do
  has ncu 14 && command -v ncu >/dev/null || break
  lens 8 32768 "$W/full.npy" full
  nf=$OUT/ncu-b8$([ "$v" = - ] || echo "_${v//[=,]/_}").txt
  # shellcheck disable=SC2046
  env $([ "$v" = - ] || echo "${v//,/ }") timeout $(( $(left) - 3 )) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section Occupancy --section SchedulerStats --section WarpStateStats -k regex:_k0 -c 1 "$TXC" run "$DEC" --device=gpu \
    --random-inputs=1 --input "len=$W/full.npy" -D B=8 -D H=32 -D T=1 -D L=32768 --output-dir "$W/o" >"$nf" 2>&1 ||
    log "ncu ran out of time (see $nf)"
  { echo "== ncu $v"; grep -E "DRAM Throughput|L2 Hit|L2 Cache Throughput|Duration|Tbyte/s|Achieved Occupancy|Eligible Warps|No Eligible|Stall" "$nf"; } >>"$LOG"
done
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
print("%-12s %-24s %9s %7s %9s %8s  %s" % ("shape", "variant", "tx us", "GB/s", "SDPA us", "SDPA/tx", "verified, kernels"))
for p in sorted(glob.glob(os.path.join(out, "tx_*.json"))):
    n = os.path.basename(p)[3:-5]
    shape = next((s for s in ("b8h32l32k", "b1h32l32k", "b1h32l8k", "gqa_b4l16k", "b2h32t4l32k") if n.startswith(s)), n)
    var = n[len(shape) + 1:]
    f = load(p).get("fused") or {}; t = f.get("graph_us")
    a = r.get(shape) or {}; kv = a.get("kv_bytes"); sd = a.get("sdpa_ms")
    ks = "; ".join(str(k.get("template")) for k in f.get("kernels") or [])
    print("%-12s %-24s %9s %7s %9s %8s  %s, %s" % (shape, var[:24], "%.1f" % t if t else "-", "%.0f" % (kv / t / 1e3) if t and kv else "-",
          "%.1f" % (sd * 1e3) if sd else "-", "%.3fx" % (sd * 1e3 / t) if t and sd else "-", f.get("verified"), ks))
print("targets (issue 13): B8 H32 L32768 SDPA/tx >= 1.0 and >= 80% of copy; the other rows at least where they were")
PYEOF
log "decode_ab: $(( $(date +%s) - T0 )) s, $([ "$fail" = 0 ] && echo all ok || echo FAILURES)"
exit "$fail"
