#!/usr/bin/env bash
# bench/red3_gpu.sh - issue 12 (red3): global and few-row reductions that feed a consumer of the
# same elements, on the GPU machine from the repository root with dist/ carried (dist/bin/txc built
# from this branch, dist/shared), in under 120 s:
#
#   bash bench/red3_gpu.sh
#
# First the plans (--explain at the held-out GPU sizes: [reduction.row_split2] of one stage for
# grad_clip_norm, [reduction.occupancy] streamed for entropy_logits, [fusion.model_guard] if it
# fires), then bench/heldout_check.sh --only of the cases side by side with torch.compile (each
# verified by txc bench against the host reference, then timed): grad_clip_norm (f32 67108879),
# entropy_logits (bf16 [4096, 32000]), label_smooth_ce and ce_smooth_ignore (also streamed by
# [reduction.occupancy] now), whisper_logmel (a global max then the same elements: one-stage
# row_split2), sum_of_products, focal_loss, ppo_loss, dice_loss (global scalar reductions,
# row_split, unchanged plans) and softmax_one_row (f32 [1, 16777219], the two-stage row_split2: no
# regression). One table row per case (heldout_check.py orders them and skips what the budget
# leaves no time for); files under $OUT (default red3-out).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red3-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
T0=$(date +%s)
plan() { # NAME -D ...: the k lines of the reduction and guard rules
    local n=$1
    shift
    "$TXC" "bench/heldout/$n.tx" "$@" --target=sm_90a --explain --emit=report -o /dev/null \
        >"$OUT/plan_$n.txt" 2>&1
    grep -E '^(k[0-9]+: \[(reduction|fusion)|\[fusion)|^totals' "$OUT/plan_$n.txt" | cut -c1-200 |
        sed "s/^/$n: /"
}
plan grad_clip_norm -D N=67108879
plan entropy_logits -D N=4096 -D V=32000
plan softmax_one_row -D N=16777219
LEFT=$((112 - ($(date +%s) - T0)))
timeout -k 2 "$LEFT" bash bench/heldout_check.sh --budget $((LEFT - 8)) \
    --only grad_clip_norm,entropy_logits,label_smooth_ce,ce_smooth_ignore,whisper_logmel,softmax_one_row,sum_of_products,focal_loss,ppo_loss,dice_loss
echo "red3_gpu: heldout_check rc $? ($(($(date +%s) - T0)) s in all)"
