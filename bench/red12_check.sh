#!/usr/bin/env bash
# bench/red12_check.sh - issue 12's open reduction rows in one run against torch.compile, on the
# GPU machine from the repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red12_check.sh
#
# 1. softmax f32 [4096, 65536] (the suite's softmax_wide) as planned and under cluster_stream
#    schedules of 512 / 1024 threads x 4 / 8 blocks per row, chain8 f32 2^28 as planned (256
#    threads x 2 groups) and with 8 and 16 groups per thread (bench/red12_variants.py: a tuning
#    cache names the schedule);
# 2. the launch probe (bench/launch_probe.py: one tiny kernel behind a memset vs back to back);
# 3. the sweep rows: log_softmax bf16, few long rows, the column mean of rows of 16, two latency
#    rows, and issue 12's held-out widths (100000, 131072 + 7, 4 rows, bf16, 3000) and a long
#    random-valued row sum (the per-thread partials' accuracy), tx then torch.compile.
# Stays under 97 s. $OUT gets the tuning caches, sweep.json, sweep.md, sweep_log.txt, calib.json;
# the sweep's table, geomean, worst row and model error come last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red12-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
SW=dist/shared/bench/suite/softmax_wide.tx
[ -f "$SW" ] || SW=../shared/bench/suite/softmax_wide.tx
timeout -k 2 26 "$PY" bench/red12_variants.py "$SW" "-D M=4096 -D N=65536" reduction.cluster_stream \
    1024,8 512,8 1024,4 2>&1 | tee "$OUT/variants.txt"
C8=dist/shared/bench/suite/chain8.tx
[ -f "$C8" ] || C8=../shared/bench/suite/chain8.tx
timeout -k 2 16 "$PY" bench/red12_variants.py "$C8" "-D N=268435456" pointwise.vector 256,8 256,16 2>&1 |
    tee -a "$OUT/variants.txt"
timeout -k 2 10 "$PY" bench/launch_probe.py 2>&1 | tail -3 | tee "$OUT/launch_probe.txt"
LEFT=$((96 - ($(date +%s) - T0)))
[ "$LEFT" -gt 20 ] || LEFT=20
ROWS=log_softmax_bf16_8192,colmean,small_add,small_softmax
ROWS=$ROWS,heldout_softmax_f32_1024x100000,heldout_softmax_f32_300x131079,heldout_softmax_f32_4x
ROWS=$ROWS,heldout_softmax_bf16_2048x65536,heldout_softmax_bf16_6000x3000,heldout_rowsum,heldout_softmax_f32_264x
timeout -k 2 "$LEFT" bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 \
    --deadline $((LEFT - 4)) --torch-reserve $(((LEFT - 4) / 2))
echo "red12_check: sweep rc $? ($(($(date +%s) - T0)) s in all)"
grep -h "^variant" "$OUT/variants.txt"
cat "$OUT/launch_probe.txt"
