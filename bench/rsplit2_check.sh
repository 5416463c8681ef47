#!/usr/bin/env bash
# bench/rsplit2_check.sh - [reduction.row_split2] (issue 12) against torch.compile, on the GPU
# machine from the repository root with dist/ carried (bash tools/make-dist.sh), in under 44 s:
#
#   bash bench/rsplit2_check.sh
#
# The sweep's two-stage split rows (bench/sweep.py, heldout_split_softmax / heldout_split2_*:
# softmax f32 of one row of 16777219 and of [4, 1048576], log_softmax f32 [4, 1000003]), each
# verified by txc bench against the host reference, timed, then torch.compile of the same
# expressions; the copy ceiling from --calibrate (% of copy). The plans first (--explain), files
# under $OUT (sweep.json, sweep.md, sweep_log.txt, calib.json, plans.txt); the table last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-rsplit2-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
T0=$(date +%s)
"$TXC" bench/heldout/softmax_one_row.tx -D N=16777219 --target=sm_90a --explain --emit=report \
    >"$OUT/plans.txt" 2>&1
grep -E '^k[0-9]: \[reduction' "$OUT/plans.txt" | cut -c1-160
LEFT=$((43 - ($(date +%s) - T0)))
timeout -k 2 "$LEFT" bash bench/sweep.sh --only heldout_split_softmax,heldout_split2_ --heldout \
    --iters 10 --deadline $((LEFT - 3)) --torch-reserve $(((LEFT - 3) * 11 / 20))
echo "rsplit2_check: sweep rc $? ($(($(date +%s) - T0)) s in all)"
