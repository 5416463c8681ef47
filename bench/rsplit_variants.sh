#!/usr/bin/env bash
# bench/rsplit_variants.sh - [reduction.row_split] under the other blocks and chunk counts of its
# space (bench/red12_variants.py: a tuning cache names the schedule), on the GPU machine from the
# repository root with dist/ carried (bash tools/make-dist.sh), in under 44 s:
#
#   bash bench/rsplit_variants.sh
#
# A global sum of 16777219 f32 as planned (256 threads x 2112 chunks: 2 waves) and at 1 and 4 waves
# of 256-thread blocks, one wave of 512- and 1024-thread ones and 2 of 1024; losses_regression
# [8192, 1000] as planned (256 x 2000) and at 256 x 1056, 512 x 528, 1024 x 264; then the held-out
# check of losses_regression and multi_axis_reduce against torch.compile. Files under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-rsplit-var}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
printf 'fn f(x: f32[N]) -> f32[] {\n  return sum(x)\n}\n' >"$OUT/gsum.tx"
timeout -k 1 13 "$PY" bench/red12_variants.py "$OUT/gsum.tx" "-D N=16777219" reduction.row_split \
    256,1056 256,4224 512,528 1024,264 1024,528 2>&1 | tee "$OUT/variants.txt"
timeout -k 1 11 "$PY" bench/red12_variants.py bench/heldout/losses_regression.tx \
    "-D N=8192 -D D=1000" reduction.row_split 256,1056 512,528 1024,264 2>&1 |
    tee -a "$OUT/variants.txt"
LEFT=$((43 - ($(date +%s) - T0)))
[ "$LEFT" -gt 5 ] || LEFT=5
OUT="$OUT/heldout" timeout -k 1 "$LEFT" bash bench/heldout_check.sh --budget $((LEFT - 2)) \
    --workers 2 --only losses_regression,multi_axis_reduce >"$OUT/heldout_log.txt" 2>&1
echo "rsplit_variants: heldout rc $? ($(($(date +%s) - T0)) s)"
grep -E '^\|' "$OUT/heldout_log.txt" 2>/dev/null || tail -5 "$OUT/heldout_log.txt"
