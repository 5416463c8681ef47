#!/usr/bin/env bash
# bench/wgmma_check.sh - the sm_90a GEMM check on the GPU machine, from the repository root with
# dist/ built by `bash tools/make-dist.sh` and carried:
#
#   bash bench/wgmma_check.sh [--quick]
#
# compiles, verifies (against torch on the GPU), times (against cuBLAS and torch.compile in the
# same run) and sanitizes tx's wgmma + TMA GEMM kernels; see bench/wgmma_check.py for the steps.
# Files in $OUT: wgmma_check.txt (PASS/FAIL lines and the summary table), wgmma_check.log (every
# command and its output), wgmma_check.json. Exit 1 when a check failed. About 5-7 minutes.
set -uo pipefail
export OUT=${OUT:-wgmma-check-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
if [ -z "$PY" ]; then echo "FAIL env: no python3"; exit 1; fi
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
timeout -k 10 ${WG_TIMEOUT:-460} "$PY" bench/wgmma_check.py "$@"
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  echo "FAIL wgmma_check: killed after ${WG_TIMEOUT:-460} s; partial log in $OUT/wgmma_check.log (last lines:)"
  tail -n 5 "$OUT/wgmma_check.log"
fi
exit $rc
