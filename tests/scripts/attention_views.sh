#!/usr/bin/env bash
# attention_views.sh TXC ROOT - the held-out split-heads attention programs of
# tests/attention/views/ (a batch dim, GQA 16 over 4, multi-query slices of a fused projection, a
# key mask from lengths, D 64 / 128, a block
# with its projections): each plans one FA3 kernel over 4-D tensor maps on --target=sm_90a, and
# runs on --device=cpu and --device=ref against NumPy at small ragged sizes
# (tests/attention/views_check.py). Skips (77) without /usr/bin/python3 + NumPy.
TXC=$1
ROOT=$2
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "skip: /usr/bin/python3 with NumPy not found"
  exit 77
fi
exec /usr/bin/python3 "$ROOT/tests/attention/views_check.py" "$TXC" "$ROOT"
