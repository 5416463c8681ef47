#!/usr/bin/env bash
# install.sh - the Python package as a user gets it: a fresh virtual
# environment (NumPy from the system's site packages), `pip install ./python`
# from this checkout (scikit-build-core from PyPI builds libtx.so with CMake:
# only the tx_shared target, tests off, -j2, ccache when installed), then
# python/tests run from outside the checkout against the installed package.
# Run by tools/test.sh; about a minute with a warm ccache.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${TX_PYTHON:-/usr/bin/python3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$PY" -m venv --system-site-packages "$W/venv"
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
start=$(date +%s)
"$W/venv/bin/pip" install --quiet --disable-pip-version-check "$ROOT/python" >"$W/pip.log" 2>&1 || {
  tail -40 "$W/pip.log"
  echo "FAIL: pip install ./python"
  exit 1
}
echo "pip install ./python: $(($(date +%s) - start)) s"
cd "$W"
# the installed package, not the checkout's python/ folder
"$W/venv/bin/python" -c 'import tx, os; assert "site-packages" in tx.__file__, tx.__file__; print("tx from", os.path.dirname(tx.__file__), "library", tx.lib().path)'
env -u TX_LIBRARY TX_ROOT="$ROOT" "$W/venv/bin/python" -m unittest discover -s "$ROOT/python/tests" -t "$ROOT/python/tests"
