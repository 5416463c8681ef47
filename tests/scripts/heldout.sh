#!/usr/bin/env bash
# heldout.sh TXC ROOT - the held-out programs of bench/heldout/ (written as ML engineers write
# them, beyond the public suite: norms with residuals at odd widths, cross-entropy over a 50257
# vocabulary, middle-axis softmax, column statistics, MLPs with twin GEMMs, rotary embeddings,
# attention variants with masks, biases, soft caps, GQA/MQA, cross-attention and decode): each
# plans as expected on --target=sm_90a (one attention kernel per attention program, GEMMs on
# wgmma) and runs on --device=cpu and --device=ref against NumPy at small ragged sizes
# (bench/heldout/check_cpu.py, references in bench/heldout/cases.py). Skips (77) without
# /usr/bin/python3 + NumPy.
TXC=$1
ROOT=$2
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "skip: /usr/bin/python3 with NumPy not found"
  exit 77
fi
exec /usr/bin/python3 "$ROOT/bench/heldout/check_cpu.py" "$TXC" "$ROOT"
