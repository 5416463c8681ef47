#!/usr/bin/env bash
# attention_variants.sh TXC ROOT - every examples/attention_*.tx (causal, sliding window, ALiBi,
# soft cap, mask and bias inputs, grouped-query, decode with lengths) on --device=cpu and
# --device=ref against NumPy at ragged sizes, with wholly masked rows (tests/attention/check.py).
# Skips (77) without /usr/bin/python3 + NumPy.
TXC=$1
ROOT=$2
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "skip: /usr/bin/python3 with NumPy not found"
  exit 77
fi
exec /usr/bin/python3 "$ROOT/tests/attention/check.py" "$TXC" "$ROOT"
