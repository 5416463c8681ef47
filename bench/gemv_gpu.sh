#!/usr/bin/env bash
# bench/gemv_gpu.sh - the GEMV tiles ([matmul.simt.gemv]) on an H200, from the repository root
# with dist/ carried (dist/bin/txc static, dist/shared; python3 with torch + numpy), in under
# 120 s:
#
#   bash bench/gemv_gpu.sh
#
# 1. bench/heldout_check.sh --only gemv_f32,prime_gemm_k7,bmm_broadcast,mixed_gemm,prime_bmm_f16
#    (tx against torch.compile in the same run, verified; its table's rows);
# 2. bench/gemv_gpu.py: forced GEMV tiles fully verified at ragged sizes, then the f32 rows
#    M = 1 .. 16 of x @ w against cuBLAS SGEMM, and the standard tile of before pinned for the
#    A/B. One line per case; files under $OUT (default gemv-out).
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
py_start gemv_gpu gemv
banner gemv_gpu
OUT=$OUT/heldout timeout 60 bash bench/heldout_check.sh --budget 50 \
  --only gemv_f32,prime_gemm_k7,bmm_broadcast,mixed_gemm,prime_bmm_f16 2>&1 | grep -E '^\|' | grep -vE '^\|---'
rc1=${PIPESTATUS[0]}
timeout 58 "$PY" bench/gemv_gpu.py --budget 52
rc2=$?
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
