#!/usr/bin/env bash
# bench/pitch_check.sh - GEMMs whose operand rows are not a multiple of 16 bytes on the sm_90a
# wgmma kernel through staged copies ([matmul.wgmma.stage], docs/codegen-matmul.md), from the
# repository root on the GPU machine with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/pitch_check.sh
#
# 1. bench/gemm_shapes.py on its odd-pitch rows only (GEMM_ROWS=odd, no tuning): the kernels the
#    planner picks, tx (staging kernels + GEMM, verified) against cuBLAS in the same run, the
#    model's prediction; $OUT/gemm_shapes.txt
# 2. tests/scripts/odd_pitch.sh on the GPU (TX_DIFF_DEVICE=gpu): the staged kernels of six
#    odd-pitch programs against the reference interpreter
# 3. compute-sanitizer memcheck and racecheck of two small staged products (ragged M, N, K;
#    A and B staged; M = 16) under txc bench (verified against the reference)
# Prints a summary last. About 80 s.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-pitch-check-out}
mkdir -p "$OUT"
[ -x "$TXC" ] || { echo "pitch_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
GEMM_ROWS=odd GEMM_TUNE=0 GEMM_DEADLINE=${PITCH_DEADLINE:-30} timeout -k 3 40 "$PY" bench/gemm_shapes.py >"$OUT/gemm.out" 2>&1
grc=$?
TX_PYTHON="$PY" TX_DIFF_DEVICE=gpu timeout -k 2 25 bash tests/scripts/odd_pitch.sh "$TXC" . >"$OUT/odd_pitch.out" 2>&1
orc=$?
W=$(mktemp -d)
printf 'fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' >"$W/xw.tx"
printf 'fn f(x: f16[M, K], w: f16[N, K], r: f16[M, N]) -> f16[M, N] {\n  return x @ transpose(w, 0, 1) + r\n}\n' >"$W/lr.tx"
san=""
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in "memcheck xw.tx M=300 N=999 K=1001" "racecheck xw.tx M=300 N=999 K=1001" "memcheck lr.tx M=16 N=1000 K=999"; do
  set -- $t
  tool=$1 f=$2
  shift 2
  defs=""
  for d in "$@"; do defs="$defs -D $d"; done
  if [ $(( $(date +%s) - T0 )) -gt 58 ]; then san="$san; $tool $f $*: not run (time)"; continue; fi
  timeout -k 2 14 "$CS" --tool "$tool" --error-exitcode 9 "$TXC" bench "$W/$f" --device=gpu --random-inputs=1 --iters 1 --no-tune-cache $defs >"$OUT/san_${tool}_${f%.tx}.log" 2>&1
  rc=$?
  san="$san; $tool $f $*: rc $rc$( [ $rc -eq 0 ] && echo ' clean')"
done
rm -rf "$W"
echo "=== gemm_shapes (odd-pitch rows) ==="
cat "$OUT/gemm.out"
echo "=== summary ==="
echo "gemm_shapes rc $grc: $(grep '^summary' "$OUT/gemm.out" || echo 'no summary (see gemm.out)')"
echo "odd_pitch (gpu vs reference) rc $orc: $(tail -1 "$OUT/odd_pitch.out")"
grep FAIL "$OUT/odd_pitch.out" | head -5
echo "sanitizer${san}"
