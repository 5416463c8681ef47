#!/usr/bin/env bash
# bench/pitch_check.sh - GEMMs whose operand rows are not a multiple of 16 bytes on sm_90a: products
# of at most 64 rows on the skinny kernel that reads them in place ([matmul.skinny]), the others on
# the wgmma kernel through staged copies ([matmul.wgmma.stage]) (docs/codegen-matmul.md), from the
# repository root on the GPU machine with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/pitch_check.sh
#
# 1. bench/gemm_shapes.py on its skinny rows, then the other odd-pitch rows while the deadline
#    allows (GEMM_ROWS=pitch, no tuning; PITCH_ROWS=skinny or odd for one set): the kernels the
#    planner picks, tx (verified against the reference by txc bench) against cuBLAS in the same
#    run, the model's prediction; $OUT/gemm_shapes.txt
# 2. the staged wgmma form of the three M = 16 rows (TX_SKINNY=0), then compute-sanitizer
#    memcheck and racecheck of small skinny products (split-K clusters, ragged
#    M, N, K, odd pitches) and of a staged product, under txc bench (verified)
# 3. tests/scripts/odd_pitch.sh on the GPU (TX_DIFF_DEVICE=gpu): skinny and staged kernels of the
#    odd-pitch programs against the reference interpreter
# Prints a summary last. About 75 s (PITCH_DEADLINE: step 1's seconds, default 26; PITCH_ROWS=skinny
# and PITCH_DEADLINE=18 keep it under 60 s).
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-pitch-check-out}
mkdir -p "$OUT"
[ -x "$TXC" ] || { echo "pitch_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
GEMM_ROWS=${PITCH_ROWS:-pitch} GEMM_TUNE=0 GEMM_DEADLINE=${PITCH_DEADLINE:-26} timeout -k 3 36 "$PY" bench/gemm_shapes.py >"$OUT/gemm.out" 2>&1
grc=$?
W=$(mktemp -d)
printf 'fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' >"$W/xw.tx"
printf 'fn f(x: f16[M, K], w: f16[N, K], r: f16[M, N]) -> f16[M, N] {\n  return x @ transpose(w, 0, 1) + r\n}\n' >"$W/lr.tx"
printf 'fn f(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N]) -> bf16[M, N] {\n  return silu(x @ w1) * (x @ w3)\n}\n' >"$W/sw.tx"
sed 's/bf16/f16/g' "$W/xw.tx" >"$W/xwh.tx"
sed 's/f16/bf16/g' "$W/lr.tx" >"$W/lrb.tx"
san=""
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
# the staged wgmma form of the M = 16 rows in the same run (TX_SKINNY=0 leaves the skinny kernel
# out of the planner's space): what the skinny kernel replaced
ab=""
for t in "xw.tx M=16 N=999 K=4096" "xwh.tx M=16 N=3001 K=4096" "lrb.tx M=16 N=4096 K=1001"; do
  set -- $t
  f=$1
  shift
  defs=""
  for d in "$@"; do defs="$defs -D $d"; done
  us=$(TX_SKINNY=0 timeout -k 2 15 "$TXC" bench "$W/$f" --device=gpu --random-inputs=1 --iters 20 --json --no-tune-cache $defs 2>/dev/null |
    "$PY" -c 'import json,sys; t=sys.stdin.read(); j=json.loads(t[t.index("{"):]); k=j["fused"]["kernels"]; print("%.1f us (%s)" % (sum(x["us"] for x in k), "verified" if j["fused"].get("verified") else "NOT verified"))' 2>/dev/null)
  ab="$ab; ${f%.tx} $*: staged wgmma ${us:-failed}"
done
for t in "memcheck xw.tx M=7 N=999 K=1001" "memcheck lr.tx M=16 N=1000 K=999" "racecheck xw.tx M=7 N=130 K=515" \
  "memcheck sw.tx M=33 N=257 K=515" "racecheck lr.tx M=64 N=67 K=300" "memcheck xw.tx M=300 N=999 K=1001"; do
  set -- $t
  tool=$1 f=$2
  shift 2
  defs=""
  for d in "$@"; do defs="$defs -D $d"; done
  if [ $(( $(date +%s) - T0 )) -gt 62 ]; then san="$san; $tool $f $*: not run (time)"; continue; fi
  timeout -k 2 14 "$CS" --tool "$tool" --error-exitcode 9 "$TXC" bench "$W/$f" --device=gpu --random-inputs=1 --iters 1 --no-tune-cache $defs >"$OUT/san_${tool}_${f%.tx}_$3.log" 2>&1
  rc=$?
  tm=$("$TXC" "$W/$f" --target=sm_90a $defs -o "$W/k.ptx" >/dev/null 2>&1 && grep -o '"template": "[^"]*"' "$W/k.ptx.json" | sed 's/"template": //' | tr '\n' ' ')
  san="$san; $tool $f $* [$tm]: rc $rc$( [ $rc -eq 0 ] && echo ' clean')$(grep -q 'verified' "$OUT/san_${tool}_${f%.tx}_$3.log" 2>/dev/null && echo ', verified')"
done
rm -rf "$W"
orc=skipped
if [ $(( $(date +%s) - T0 )) -lt 66 ]; then
  TX_PYTHON="$PY" TX_DIFF_DEVICE=gpu timeout -k 2 $(( 76 - ($(date +%s) - T0) )) bash tests/scripts/odd_pitch.sh "$TXC" . >"$OUT/odd_pitch.out" 2>&1
  orc=$?
fi
echo "=== gemm_shapes (odd-pitch rows) ==="
cat "$OUT/gemm.out"
echo "=== summary ==="
echo "gemm_shapes rc $grc: $(grep '^summary' "$OUT/gemm.out" || echo 'no summary (see gemm.out)')"
echo "odd_pitch (gpu vs reference) rc $orc: $(tail -1 "$OUT/odd_pitch.out" 2>/dev/null)"
grep FAIL "$OUT/odd_pitch.out" 2>/dev/null | head -5
echo "A/B${ab}"
echo "sanitizer${san}"
