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
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-bmm-out}
export PATH="$PATH:/usr/local/cuda/bin"
[ -x "$TXC" ] || { echo "bmm_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
echo "bmm_check: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
exec "$PY" bench/bmm_check.py "$@"
