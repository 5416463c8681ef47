#!/usr/bin/env bash
# math_ulp.sh TXC ROOT - accuracy of the generated f32 math functions (exp,
# exp2, tanh, sigmoid, silu, gelu_tanh, log, rsqrt, erf) in ulp against NumPy
# float64, on the host JIT, with the limits of bench/gpu_math.py (the same
# script runs on the GPU from bench/gpu_check.sh). Skipped (77) without txc
# or NumPy.
set -u
TXC=${1:-}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=/usr/bin/python3
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
  echo "math_ulp: txc binary '$TXC' not found; skipping"
  exit 77
fi
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "math_ulp: $PY with NumPy is needed (apt-get install python3-numpy); skipping"
  exit 77
fi
OUTDIR=$(mktemp -d)
trap 'rm -rf "$OUTDIR"' EXIT
"$PY" "$ROOT/bench/gpu_math.py" --txc "$TXC" --device cpu --n 1000000 --out "$OUTDIR"
