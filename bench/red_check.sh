#!/usr/bin/env bash
# bench/red_check.sh - the reduction and pointwise rows of the sweep that issue 12 still misses
# (column and middle-axis reductions, few/wide rows, the odd-width row mean, chain8, softplus,
# rmsnorm f32) plus the held-out shapes of bench/sweep.py (--heldout), tx against torch.compile in
# one run, on the GPU machine from the repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red_check.sh [extra sweep.py options]
#
# Stays under 2 minutes (--deadline 105: tx rows first, then torch). $OUT gets sweep.json,
# sweep.md, sweep_log.txt and calib.json; the table, geomean, worst row and model error come last.
set -uo pipefail
cd "$(dirname "$0")/.."
ROWS=colsum,colmax,colmean,midsum,midmean,midmax,rowmean,rowsum_f32_512x,softmax_f32_4096x65536
ROWS=$ROWS,softmax_f32_256x,softmax_f32_128x,softmax_bf16_8x,layernorm_f32_64x,rmsnorm_f32
ROWS=$ROWS,chain8,softplus,heldout
exec bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline 105 --torch-reserve 40 "$@"
