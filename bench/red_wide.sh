#!/usr/bin/env bash
# bench/red_wide.sh - issue 12's open reduction rows, on the GPU machine from the repository root
# with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red_wide.sh
#
# 1. softmax f32 [4096, 65536] (the suite's softmax_wide) as planned, then held in registers
#    across 8-block clusters (reduction.cluster_rows: one HBM read, one write) with persistent
#    clusters (grid G: each cluster loops over the rows G apart, loading the next row while it
#    finishes this one, its exchanges tagged words polled through distributed shared memory
#    instead of cluster barriers) at several G and block sizes, and the prefetch placed at the
#    row's start (TX_RED_PREFETCH=top) instead of before its stores;
# 2. the sweep's odd-width streams (softmax f32 [128, 150001], held-out bf16 [1000, 30011], f32
#    [300, 131079]: peeled vector groups, verified against the CPU), rowmean f32 [3000, 7777] and
#    softmax bf16 [8, 50257], tx (then torch.compile as far as 4 s go), the copy ceiling first;
# 3. the cluster barrier's cost: softmax f32 [264, 65536] held across a cluster per row
#    (reduction.cluster_rows(512, 8, 0): 8 waves of 33 clusters) with 0 and 4 more barriers a row
#    (TX_RED_XBAR): the time per barrier is the difference over 8 x 4;
# 4. rowmean f32 [3000, 7777] as planned (held, peeled) and streamed (reduction.row 256, 128:
#    vector groups from each row's first aligned element, the leftovers one a lane);
# Stays under 58 s. $OUT gets variants.txt and the sweep's files; the summary comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red-wide}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
S=dist/shared/bench/suite
[ -d "$S" ] || S=../shared/bench/suite
ITERS=5 timeout -k 2 24 "$PY" bench/red12_variants.py "$S/softmax_wide.tx" "-D M=4096 -D N=65536" \
    reduction.cluster_rows 512,8,33 1024,8,16 512,8,28 \
    2>&1 | tee "$OUT/variants.txt"
ROWS=softmax_f32_128x150001,heldout_softmax_bf16_1000x30011,heldout_softmax_f32_300x131079
ROWS=$ROWS,rowmean_f32_3000x7777,softmax_bf16_8x50257
timeout -k 2 16 bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline 14 --torch-reserve 4
echo "red_wide: sweep rc $? ($(($(date +%s) - T0)) s)"
timeout -k 2 9 "$PY" bench/red12_variants.py "$S/softmax_wide.tx" "-D M=264 -D N=65536" \
    reduction.cluster_rows 512,8,0@TX_RED_XBAR=0 512,8,0@TX_RED_XBAR=4 2>&1 | tee -a "$OUT/variants.txt"
printf 'fn f(x: f32[M, N]) -> f32[M] {\n  return mean(x, axis=-1)\n}\n' >"$OUT/rowmean.tx"
timeout -k 2 6 "$PY" bench/red12_variants.py "$OUT/rowmean.tx" "-D M=3000 -D N=7777" reduction.row 256 128 \
    2>&1 | tee -a "$OUT/variants.txt"
echo "red_wide: done in $(($(date +%s) - T0)) s"
grep -h "^variant" "$OUT/variants.txt"
