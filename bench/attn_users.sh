#!/usr/bin/env bash
# bench/attn_users.sh - attention as users write it (issue 13's held-out variants) on a Hopper GPU,
# from the repository root with dist/ carried (bash tools/make-dist.sh), in under 60 s:
#
#   bash bench/attn_users.sh
#
# 1. each program's sm_90a plan (kernels, templates) and a full verification against the host
#    reference at a ragged size on the FA3 path (S > 64 query rows, not a multiple of the tile),
#    with `txc bench --device=gpu --iters 1`;
# 2. bench/heldout_check.py --only on the same programs: verified and timed at their GPU sizes
#    against torch.compile of the same PyTorch expression (and SDPA where it expresses it).
# Files under $OUT; the summary (the held-out table) last. Exit 1 when a verification failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-attn-users-out}
export PATH="$PATH:/usr/local/cuda/bin"
[ -x "$TXC" ] || { echo "attn_users: no txc at $TXC (run bash tools/make-dist.sh)" >&2; exit 2; }
mkdir -p "$OUT"
fail=0
# program and a ragged size on the FA3 path
RAGGED=(
  "attn_qkv_split -D B=2 -D S=333"
  "attn_lse -D B=2 -D S=333"
  "attn_softcap_gemma -D B=1 -D H=2 -D S=333"
  "attn_qkv_split -D B=3 -D S=1000"
)
for row in "${RAGGED[@]}"; do
  set -- $row
  p=$1; shift
  f=bench/heldout/$p.tx
  [ -f "$f" ] || { echo "attn_users: $p: no $f (skipped)"; continue; }
  plan=$("$TXC" "$f" --target=sm_90a "$@" --explain -o "$OUT/$p.ptx" 2>&1 | grep -E "attention.fa3\]|template" | cut -c1-160 | tr '\n' ';')
  if timeout 20 "$TXC" bench "$f" --device=gpu --iters 1 --random-inputs=3 "$@" > "$OUT/$p.ragged.txt" 2>&1; then
    v=$(grep -iE "verif|max err|match" "$OUT/$p.ragged.txt" | head -2 | tr '\n' ' ')
    echo "attn_users: $p ragged ($*): ok: $v | plan: $plan"
  else
    fail=1
    echo "attn_users: $p ragged ($*): FAILED: $(tail -3 "$OUT/$p.ragged.txt" | tr '\n' ' ') | plan: $plan"
  fi
done
ONLY=attn_qkv_split,attn_lse,attn_softcap_gemma,rotary
python3 bench/heldout_check.py --budget 38 --only "$ONLY" --workers 3 || fail=1
exit $fail
