#!/usr/bin/env bash
# bench/heldout_check.sh - the held-out programs of bench/heldout/ on a Hopper GPU against
# torch.compile of the same PyTorch expressions (bench/heldout/cases.py), in one command from the
# repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/heldout_check.sh [--budget S] [--only NAME,...] [--round N]   (N: cases.ROUND<N>)
#
# Within BUDGET seconds (default 150, every program; --budget 55 fits a 60 s slot): each program's sm_90a
# plan, `txc bench --device=gpu` verified and timed at its GPU sizes, a full verification at a
# ragged size, torch.compile timed in the same run (bench/heldout_check.py has the details). Prints
# a table tx / torch.compile per program, the verified column, and the geomean / worst row last;
# files under $OUT (default heldout-out). Exit status 1 when a verification failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-heldout-out}
export PATH="$PATH:/usr/local/cuda/bin"
[ -x "$TXC" ] || { echo "heldout_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
echo "heldout_check: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
exec "$PY" bench/heldout_check.py "$@"
