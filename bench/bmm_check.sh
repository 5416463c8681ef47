#!/usr/bin/env bash
# bench/bmm_check.sh - true batched products ([B, M, K] @ [B, K, N], broadcast batch dims,
# q @ k^T per head, a transposed LHS, epilogues; [matmul.wgmma.batch]) on a Hopper GPU against
# cuBLAS and torch.compile in one run, from the repository root with dist/ carried
# (bash tools/make-dist.sh):
#
#   bash bench/bmm_check.sh [--budget S]
#
# bench/bmm_check.py has the details: the sm_90a plans, tx verified and timed at the GPU sizes,
# full verification at ragged sizes, cuBLAS and torch.compile timed under the same lock; a table
# and a summary line last; files under $OUT (default bmm-out). Exit 1 when a verification failed.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
py_start bmm_check bmm
banner bmm_check
exec "$PY" bench/bmm_check.py "$@"
