#!/usr/bin/env bash
# bench/red_s6.sh - the held-out reductions below torch.compile, on the GPU machine from the
# repository root with dist/ carried (bash tools/make-dist.sh), in under 60 s:
#
#   bash bench/red_s6.sh
#
# 1. bench/heldout_check.sh on the seven held-out reduction programs (softmax_mid, cross_entropy,
#    batch_stats, masked_mean_pool, layernorm_f32_res, colsum_bf16, qk_rmsnorm): each verified at
#    its GPU size and at a ragged size, timed against torch.compile in the same run;
# 2. the sweep's rows of softmax_mid, cross_entropy and softmax f32 [128, 150001] (tx, torch.compile,
#    the model's prediction and its error);
# 3. softmax_mid under other column splits of its space (bench/red12_variants.py).
# Files under $OUT; the summary (both tables) comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red-s6}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
OUT="$OUT/heldout" timeout -k 2 30 bash bench/heldout_check.sh --budget 27 \
    --only softmax_mid,cross_entropy,batch_stats,masked_mean_pool,layernorm_f32_res,colsum_bf16,qk_rmsnorm \
    >"$OUT/heldout_log.txt" 2>&1
echo "red_s6: heldout rc $? ($(($(date +%s) - T0)) s)"
ROWS=heldout_softmax_mid,heldout_cross_entropy,softmax_f32_128x150001
OUT="$OUT/sweep" timeout -k 2 17 bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline 15 \
    --torch-reserve 8 >"$OUT/sweep_log.txt" 2>&1
echo "red_s6: sweep rc $? ($(($(date +%s) - T0)) s)"
printf 'fn f(x: f32[B, S, C]) -> f32[B, S, C] {\n  return softmax(x, axis=1)\n}\n' >"$OUT/softmax_mid.tx"
LEFT=$((52 - ($(date +%s) - T0)))
[ "$LEFT" -gt 3 ] || LEFT=3
SKIP_PLANNED=1 timeout -k 1 "$LEFT" "$PY" bench/red12_variants.py "$OUT/softmax_mid.tx" \
    "-D B=64 -D S=1024 -D C=768" reduction.column_split 64,8,1 32,16,1 128,2,1 \
    >"$OUT/variants.txt" 2>&1
echo "red_s6: variants rc $? ($(($(date +%s) - T0)) s)"
echo "== held-out (tx vs torch.compile)"
grep -E '^\|' "$OUT/heldout_log.txt" 2>/dev/null || tail -5 "$OUT/heldout_log.txt"
echo "== sweep rows"
grep -E '^(row|softmax|heldout|geomean|cost model|tx rows)' "$OUT/sweep_log.txt" 2>/dev/null | tail -8
echo "== variants"
cat "$OUT/variants.txt"
echo "red_s6: done in $(($(date +%s) - T0)) s"
