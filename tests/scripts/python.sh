#!/usr/bin/env bash
# python.sh TXC ROOT - the Python package (python/tx) against the libtx.so of
# this build (build/lib/libtx.so beside TXC): python/tests/test_numpy.py
# (NumPy calls on the CPU against the reference interpreter and NumPy, the
# exceptions, threads). The installed package, built by pip into a fresh
# virtual environment, is tested by tests/python/install.sh (tools/test.sh).
# Skips (77) without python3 + NumPy, and under ASan (Python cannot load an
# ASan library without preloading the runtime).
set -u
TXC=$1
ROOT=$2
PY=${TX_PYTHON:-/usr/bin/python3}
LIB="$(dirname "$TXC")/lib/libtx.so"
if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "skip: $PY with NumPy not found"
  exit 77
fi
if [ ! -f "$LIB" ]; then
  echo "FAIL: $LIB not built (target tx_shared)"
  exit 1
fi
if ldd "$LIB" 2>/dev/null | grep -q libasan; then
  echo "skip: $LIB is an ASan build; Python would need LD_PRELOAD of the ASan runtime"
  exit 77
fi
cd "$ROOT" && TX_LIBRARY="$LIB" TX_ROOT="$ROOT" PYTHONPATH="$ROOT/python" "$PY" -m unittest discover -s python/tests -t python/tests 2>&1
