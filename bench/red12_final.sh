#!/usr/bin/env bash
# bench/red12_final.sh - issue 12's second check (after bench/red12_check.sh), on the GPU machine
# from the repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red12_final.sh
#
# 1. chain8 f32 2^28 (suite) as planned and at 8 and 16 groups per thread (pointwise.vector;
#    bench/red12_variants.py), softmax f32 [4096, 65536] (suite softmax_wide) as planned (split
#    cluster barrier, backward epilogue) and held in registers across an 8-block cluster
#    (reduction.cluster_rows(512, 8): one HBM read and one write);
# 2. sweep rows, tx then torch.compile: the L2 rule's 512-thread clusters (held-out softmax f32
#    [1024, 100000], [300, 131079]), the one-read cluster form at 264 rows, chain8 2^26, the
#    column mean of rows of 16, and the latency-bound rows of the cost model's fill/drain floor.
# Stays under 74 s. $OUT gets variants.txt and the sweep's files; the sweep's summary comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red12-final}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
S=dist/shared/bench/suite
[ -d "$S" ] || S=../shared/bench/suite
timeout -k 2 16 "$PY" bench/red12_variants.py "$S/chain8.tx" "-D N=268435456" pointwise.vector 256,8 256,16 \
    2>&1 | tee "$OUT/variants.txt"
timeout -k 2 12 "$PY" bench/red12_variants.py "$S/softmax_wide.tx" "-D M=4096 -D N=65536" \
    reduction.cluster_rows 512,8 2>&1 | tee -a "$OUT/variants.txt"
LEFT=$((73 - ($(date +%s) - T0)))
[ "$LEFT" -gt 20 ] || LEFT=20
ROWS=heldout_softmax_f32_1024x100000,heldout_softmax_f32_300x131079,heldout_softmax_f32_264x,colmean
ROWS=$ROWS,chain8_f32_64M,small_add,small_softmax,small_layernorm,softmax_bf16_8x50257
ROWS=$ROWS,layernorm_f32_64x4096,midmax,heldout_rowsum
timeout -k 2 "$LEFT" bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 \
    --deadline $((LEFT - 3)) --torch-reserve $(((LEFT - 3) * 11 / 20))
echo "red12_final: sweep rc $? ($(($(date +%s) - T0)) s in all)"
grep -h "^variant" "$OUT/variants.txt"
