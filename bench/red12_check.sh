#!/usr/bin/env bash
# bench/red12_check.sh - issue 12's open reduction rows in one run against torch.compile, on the
# GPU machine from the repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red12_check.sh
#
# Rows: the streamed rows whose epilogue pass re-reads the row (softmax f32 [4096, 65536] = the
# suite's softmax_wide, log_softmax bf16, few long rows), issue 12's held-out widths (100000,
# 131072 + 7, 3000, 4 rows, bf16), a long random-valued row sum (its verification: the accuracy
# of the per-thread partials), the column mean of rows of 16, and the latency-bound rows (the cost
# model's launch term). Stays under 97 s (the sweep: tx rows until 45 s, torch until 88 s).
# $OUT gets sweep.json, sweep.md, sweep_log.txt, calib.json; the table, geomean, worst row and
# model error come last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red12-out}
mkdir -p "$OUT"
ROWS=softmax_f32_4096x65536,log_softmax_bf16_8192,softmax_f32_256x,softmax_f32_128x,colmean
ROWS=$ROWS,heldout_softmax_f32_1024x100000,heldout_softmax_f32_300x131079,heldout_softmax_f32_4x
ROWS=$ROWS,heldout_softmax_bf16_2048x65536,heldout_softmax_bf16_6000x3000,heldout_rowsum
ROWS=$ROWS,small_add,small_softmax,small_axpb,small_layernorm,small_colsum
timeout -k 2 ${RED12_TIMEOUT:-96} bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 \
    --deadline ${RED12_DEADLINE:-88} --torch-reserve ${RED12_TORCH:-43}
echo "red12_check: sweep rc $?"
