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
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
py_start bmm3d_check bmm3d
banner bmm3d_check
exec "$PY" bench/bmm3d_check.py "$@"
