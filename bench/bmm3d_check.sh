#!/usr/bin/env bash
# bench/bmm3d_check.sh - products whose LHS has leading dims ([B, S, D] @ [D, F], x @ w^T on
# [B, S, K], a 4-D [B, H, S, D] @ [D, E], SwiGLU and a LLaMA-style block on [B, S, 2048]) on a
# Hopper GPU against torch.compile in one run, from the repository root with dist/ carried
# (bash tools/make-dist.sh):
#
#   bash bench/bmm3d_check.sh [--budget S]
#
# bench/bmm3d_check.py has the details: the sm_90a plans, tx verified and timed at the GPU sizes,
# full verification at ragged sizes, torch.compile timed under the same lock; a table and a
# summary line last; files under $OUT (default bmm3d-out). Exit 1 when a verification failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-bmm3d-out}
export PATH="$PATH:/usr/local/cuda/bin"
[ -x "$TXC" ] || { echo "bmm3d_check: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2; exit 2; }
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
echo "bmm3d_check: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
exec "$PY" bench/bmm3d_check.py "$@"
