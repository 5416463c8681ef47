#!/usr/bin/env bash
# bench/tune_check.sh - `txc tune` on a few rows of the public sweep (bench/tune_check.py), from the
# repository root on the GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/tune_check.sh [ROW,ROW,...]
#
# Per row: txc tune into $OUT/tune.json (which times the model's choice and its runners-up), the
# schedule each kernel runs after it (model's -> tuned), the model/kept gap and the tune wall time;
# then the warm-cache compile overhead and a summary line. After the first row, `txc bench
# --calibrate` once (the calibration's micro-benchmarks, $OUT/calib.json). Logs: $OUT/tune_log.txt.
# About 70 s (TUNE_DEADLINE=55 s of rows).
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-tune-out}
[ -x "$TXC" ] || { echo "tune_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
echo "tune_check: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
TUNE_DEADLINE=${TUNE_DEADLINE:-55} "$PY" bench/tune_check.py "${1:-}"
