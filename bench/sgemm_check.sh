#!/usr/bin/env bash
# bench/sgemm_check.sh - exact-f32 GEMMs (the SIMT kernel, matmul.simt) on a GPU against cuBLAS
# SGEMM (torch, allow_tf32=False) in one run, from the repository root with dist/ carried
# (bash tools/make-dist.sh):
#
#   bash bench/sgemm_check.sh [--budget S]
#
# bench/sgemm_check.py has the details: cuBLAS timed first, then full verification at ragged
# sizes (split-K, small-K bf16 products, masks), then tx verified and timed at 10 shapes (split-K
# shapes, 4096^3, transposed operands, a batched product, held-out f32 rows); a table and a summary
# line last; files under $OUT (default sgemm-out). Exit 1 when a verification failed.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
py_start sgemm_check sgemm
banner sgemm_check
exec "$PY" bench/sgemm_check.py "$@"
