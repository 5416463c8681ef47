#!/usr/bin/env bash
# bench/gemm_split_check.sh - wgmma GEMMs whose output tiles do not fill the GPU (stream-K and the
# tile choice, bench/gemm_split_check.py) and the tile-order A/B of the suite's matmul_bias_gelu
# 8192^3 (TX_WG_GROUP_M 16 against 8, torch.compile in the same run), from the repository root on
# the GPU machine with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/gemm_split_check.sh
#
# 1. bench/gemm_split_check.py (SPLIT_TIMEOUT s): the A/B, then rows against cuBLAS (each tx row
#    verified by txc bench against the reference; the other side of stream-K beside it), then
#    torch.compile of the A/B's program;
# 2. tests/scripts/stream_k.sh with TX_DIFF_DEVICE=gpu (SPLIT_VERIFY_S s): the stream-K kernels
#    at small ragged sizes on the GPU against the reference.
# Under 60 s by default. $OUT/gemm_split.txt: the summary (printed last, with step 2's lines).
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-gemm-split-out}
[ -x "$TXC" ] || { echo "gemm_split_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
export SPLIT_DEADLINE=${SPLIT_DEADLINE:-38}
timeout -k 2 ${SPLIT_TIMEOUT:-42} "$PY" bench/gemm_split_check.py >"$OUT/split.out" 2>&1
rc=$?
[ $rc -eq 124 ] && echo "gemm_split_check: killed after ${SPLIT_TIMEOUT:-42} s; partial results in $OUT/gemm_split.json" >>"$OUT/split.out"
TX_PYTHON="$PY" TX_DIFF_DEVICE=gpu timeout -k 2 ${SPLIT_VERIFY_S:-13} bash tests/scripts/stream_k.sh "$TXC" . >"$OUT/stream_k_gpu.txt" 2>&1
vrc=$?
cat "$OUT/split.out"
echo "== stream-K kernels on the GPU against the reference (tests/scripts/stream_k.sh, rc $vrc):"
cat "$OUT/stream_k_gpu.txt"
[ $vrc -ne 0 ] && rc=1
exit $rc
