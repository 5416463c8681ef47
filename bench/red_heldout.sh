#!/usr/bin/env bash
# bench/red_heldout.sh - the held-out reduction composites that missed (batch_stats, softmax over a
# middle axis, cross-entropy over a 50257 vocabulary) and the odd-width streams, on the GPU
# machine from the repository root with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red_heldout.sh
#
# 1. the sweep's held-out rows batch_stats f32 [32768, 512] ([reduction.column_stages]: column
#    mean, column variance, normalise apart), softmax_mid f32 [64, 1024, 768] (column streams in
#    unrolled groups of 8), cross_entropy bf16 [2048, 50257] (peeled vector groups), softmax f32
#    [128, 150001], tx then torch.compile, the copy ceiling measured first (txc bench
#    --calibrate), every tx output verified against the CPU;
# 2. softmax_mid at the other block widths of reduction.column (32, 64, 256 kept elements).
# Stays under 48 s; the sweep's summary comes first, the variants last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red-heldout}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
ROWS=heldout_batch_stats,heldout_softmax_mid,heldout_cross_entropy,softmax_f32_128x150001
timeout -k 2 34 bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline 32 --torch-reserve 17
echo "red_heldout: sweep rc $? ($(($(date +%s) - T0)) s)"
printf 'fn f(x: f32[B, S, C]) -> f32[B, S, C] {\n  return softmax(x, axis=1)\n}\n' >"$OUT/softmax_mid.tx"
LEFT=$((47 - ($(date +%s) - T0)))
[ "$LEFT" -gt 4 ] || LEFT=4
timeout -k 1 "$LEFT" "$PY" bench/red12_variants.py "$OUT/softmax_mid.tx" "-D B=64 -D S=1024 -D C=768" \
    reduction.column 32 64 256 2>&1 | tee "$OUT/variants.txt"
echo "red_heldout: done in $(($(date +%s) - T0)) s"
