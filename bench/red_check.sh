#!/usr/bin/env bash
# bench/red_check.sh - the reduction and pointwise rows of the sweep that issue 12 still misses
# (column and middle-axis reductions, few/wide rows, the odd-width row mean, chain8, softplus,
# rmsnorm f32) plus the held-out shapes of bench/sweep.py (--heldout), tx against torch.compile in
# one run, on the GPU machine from the repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red_check.sh
#
# Stays under 2 minutes: the sweep rows first (--deadline 92: tx rows, then torch), then `txc tune`
# on chain8 and softmax_wide (their schedule spaces measured; $OUT/tune_*.txt) while time is left.
# $OUT gets sweep.json, sweep.md, sweep_log.txt, calib.json; the sweep's table, geomean, worst row
# and model error are printed, then the tune lines.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-sweep-out}
mkdir -p "$OUT"
T0=$(date +%s)
ROWS=colsum,colmax,colmean,midsum,midmean,midmax,rowmean,softmax_f32_4096x65536
ROWS=$ROWS,softmax_f32_256x,softmax_f32_128x,softmax_bf16_8x,rmsnorm_f32
ROWS=$ROWS,log_softmax_bf16,chain8,softplus,heldout
bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline 92 --torch-reserve 44
W=$(mktemp -d)
printf 'fn f(x: f32[N]) -> f32[N] {\n  t = tanh(x * 1.5 + 0.5)\n  return sigmoid(t * x - 0.25) * exp(-x * x)\n}\n' >"$W/chain8.tx"
printf 'fn f(x: f32[M, N]) -> f32[M, N] {\n  return softmax(x, axis=-1)\n}\n' >"$W/sm.tx"
for c in "chain8 chain8.tx -D N=67108864" "softmax_wide sm.tx -D M=4096 -D N=65536"; do
  set -- $c
  name=$1 f=$2
  shift 2
  [ $(($(date +%s) - T0)) -gt 98 ] && { echo "tune $name: skipped (time)"; continue; }
  timeout 9 "$TXC" tune "$W/$f" "$@" --tune-cache="$OUT/tune_$name.json" --calib="$OUT/calib.json" \
    >"$OUT/tune_$name.txt" 2>&1
  echo "tune $name (rc $?):"
  tail -12 "$OUT/tune_$name.txt"
done
rm -rf "$W"
