#!/usr/bin/env bash
# bench/red_check.sh - the reduction rows of the sweep whose schedules issue 12's work changed
# (column and middle-axis reductions with vector columns, the L2 cluster of many streamed rows,
# one-wave cluster streams, peeled odd held rows) plus held-out shapes of bench/sweep.py
# (--heldout), tx against torch.compile in one run, on the GPU machine from the repository root
# with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red_check.sh
#
# Stays under 75 s (--deadline 62: tx rows until 32 s, then torch). $OUT gets sweep.json,
# sweep.md, sweep_log.txt, calib.json; the table, geomean, worst row and model error come last.
set -uo pipefail
cd "$(dirname "$0")/.."
ROWS=colsum_f32_65536,colsum_bf16,colmax,colmean,midsum,midmean,midmax,rowmean
ROWS=$ROWS,softmax_f32_4096x65536,softmax_f32_256x,log_softmax_bf16,heldout_colsum,heldout_mid
ROWS=$ROWS,heldout_softmax_bf16,heldout_softmax_f32_2000,heldout_layernorm
exec bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline 62 --torch-reserve 30
