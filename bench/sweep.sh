#!/usr/bin/env bash
# bench/sweep.sh - the public shape sweep (bench/sweep.py: ~50 program x shape rows) against
# torch.compile, in one command on the GPU machine, from the repository root with dist/ carried
# (bash tools/make-dist.sh):
#
#   bash bench/sweep.sh [--only SUBSTR,...] [--iters N] [--deadline SECONDS]
#
# Writes $OUT/sweep.json, sweep.md, sweep_log.txt and calib.json (default ./sweep-out).
# Prints one line per row (tx us, torch.compile us, ratio = torch.compile / tx, % of copy, the cost
# model's predicted us and its error), then the geomean, the worst row and the model's error.
# Rows still pending when the deadline (default 430 s of work) passes are reported as skipped, so
# the whole run stays under 8 minutes. Exit status 0 when every tx row ran and verified.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-sweep-out}
[ -x "$TXC" ] || { echo "sweep: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
echo "sweep: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
exec "$PY" bench/sweep.py "$@"
