# tests/scripts/lib/setup.sh TXC ROOT - the common start of the script tests that compare txc's CPU
# runs with NumPy: sets TXC, ROOT, PY (TX_PYTHON or /usr/bin/python3), PTXAS (PTXAS or
# /usr/local/cuda/bin/ptxas) and W (a temporary folder removed on exit); exits 77 (ctest's skip)
# without Python + NumPy. Source it: . "$(dirname "$0")/lib/setup.sh" "$@"
set -u
TXC=$1
ROOT=$2
PY=${TX_PYTHON:-/usr/bin/python3}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "skip: /usr/bin/python3 with NumPy not found"
  exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
