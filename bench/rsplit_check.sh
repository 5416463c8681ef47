#!/usr/bin/env bash
# bench/rsplit_check.sh - [reduction.row_split] (issue 12) against torch.compile, on the GPU machine
# from the repository root with dist/ carried (bash tools/make-dist.sh), in under 58 s:
#
#   bash bench/rsplit_check.sh
#
# The sweep's split rows (bench/sweep.py, heldout_split_*: a global sum of 16777219 f32, the global
# max of [32, 512, 1024], losses_regression's three scalar means of [8192, 1000], three rows of
# 1000003, softmax of one row of 16777219), each verified by txc bench against the host reference,
# timed, then torch.compile of the same expressions; the copy ceiling from --calibrate (% of copy).
# Files under $OUT (sweep.json, sweep.md, sweep_log.txt, calib.json, the plans); the table last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-rsplit-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
T0=$(date +%s)
printf 'fn f(x: f32[N]) -> f32[] {\n  return sum(x)\n}\n' >"$OUT/gsum.tx"
"$TXC" "$OUT/gsum.tx" -D N=16777219 --target=sm_90a --explain --emit=report >"$OUT/plans.txt" 2>&1
"$TXC" bench/heldout/losses_regression.tx -D N=8192 -D D=1000 --target=sm_90a --explain \
    --emit=report >>"$OUT/plans.txt" 2>&1
"$TXC" bench/heldout/softmax_one_row.tx -D N=16777219 --target=sm_90a --explain --emit=report \
    >>"$OUT/plans.txt" 2>&1
grep -E '^k[0-9]' "$OUT/plans.txt"
LEFT=$((56 - ($(date +%s) - T0)))
timeout -k 2 "$LEFT" bash bench/sweep.sh --only heldout_split_ --heldout --iters 10 \
    --deadline $((LEFT - 3)) --torch-reserve $(((LEFT - 3) * 11 / 20))
echo "rsplit_check: sweep rc $? ($(($(date +%s) - T0)) s in all)"
