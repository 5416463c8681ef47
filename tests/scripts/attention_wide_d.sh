#!/usr/bin/env bash
# attention_wide_d.sh TXC ROOT - attention at head dims 160, 192 and 256 (dense with a symbolic D,
# causal, split heads of a projection merged back): each plans one FA3 kernel on --target=sm_90a
# with the key tile its head dim takes, and runs on --device=cpu and --device=ref against NumPy at
# ragged sizes (tests/attention/wide_check.py). Skips (77) without /usr/bin/python3 + NumPy.
TXC=$1
ROOT=$2
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "skip: /usr/bin/python3 with NumPy not found"
  exit 77
fi
exec /usr/bin/python3 "$ROOT/tests/attention/wide_check.py" "$TXC" "$ROOT"
