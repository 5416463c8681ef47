#!/usr/bin/env bash
# bench/gemm_split_check.sh - wgmma GEMMs whose output tiles do not fill the GPU (stream-K and the
# tile choice, bench/gemm_split_check.py) and the tile-order A/B of the suite's matmul_bias_gelu
# 8192^3 (TX_WG_GROUP_M 16 against 8, torch.compile in the same run), from the repository root on
# the GPU machine with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/gemm_split_check.sh
#
# Every tx row is verified by txc bench against the reference; cuBLAS (the GEMM alone) in the same
# run. Under 80 s (20 s of GPU verification, then SPLIT_DEADLINE=52 s of rows). $OUT/gemm_split.txt: the summary (printed last).
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-gemm-split-out}
[ -x "$TXC" ] || { echo "gemm_split_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# 0. stream-K kernels at small ragged sizes on the GPU against the reference (tests/scripts/stream_k.sh)
TX_DIFF_DEVICE=gpu timeout -k 2 ${SPLIT_VERIFY_S:-20} bash tests/scripts/stream_k.sh "$TXC" . >"$OUT/stream_k_gpu.txt" 2>&1
vrc=$?
timeout -k 3 ${SPLIT_TIMEOUT:-56} "$PY" bench/gemm_split_check.py
rc=$?
echo "== stream-K kernels on the GPU against the reference (tests/scripts/stream_k.sh, rc $vrc):"
cat "$OUT/stream_k_gpu.txt"
[ $vrc -ne 0 ] && rc=1
[ $rc -eq 124 ] && echo "gemm_split_check: killed after ${SPLIT_TIMEOUT:-76} s; partial results in $OUT/gemm_split.json"
exit $rc
