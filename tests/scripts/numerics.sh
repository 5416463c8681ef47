#!/usr/bin/env bash
# numerics.sh TXC ROOT - numerics at the edges (docs/reliability.md): the
# programs of tests/numerics/ on NaN, Inf, denormal, empty, ragged and size-1
# broadcast inputs, on --device=cpu (fused and --no-fuse) against
# --device=ref; NaN positions must match. The cases are in
# tests/numerics/check.py. Skipped (77) without txc or NumPy.
set -u
TXC=${1:-}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=/usr/bin/python3
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
  echo "numerics: txc binary '$TXC' not found; skipping"
  exit 77
fi
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "numerics: $PY with NumPy is needed (apt-get install python3-numpy); skipping"
  exit 77
fi
exec "$PY" "$ROOT/tests/numerics/check.py" "$TXC" "$ROOT" ${TX_NUMERICS_ONLY:+"$TX_NUMERICS_ONLY"}
