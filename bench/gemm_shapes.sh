#!/usr/bin/env bash
# bench/gemm_shapes.sh - held-out GEMM shapes on the sm_90a wgmma kernel against torch (cuBLAS),
# from the repository root on the GPU machine with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/gemm_shapes.sh
#
# Per row: the tile the cost model picks (matmul.wgmma), tx's kernel time (verified) and the
# model's prediction, cuBLAS and eager torch in the same run, and `txc tune` of the model's
# choice and its runners-up (bench/gemm_shapes.py). $OUT/gemm_shapes.txt: the table, every tuned
# candidate's predicted and measured time, the summary (printed last). About 70 s
# (GEMM_DEADLINE=62 s of rows).
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-gemm-shapes-out}
[ -x "$TXC" ] || { echo "gemm_shapes: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
timeout -k 5 ${GEMM_TIMEOUT:-72} "$PY" bench/gemm_shapes.py
rc=$?
[ $rc -eq 124 ] && echo "gemm_shapes: killed after ${GEMM_TIMEOUT:-72} s; partial results in $OUT/gemm_shapes.json"
exit $rc
