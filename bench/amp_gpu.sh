#!/usr/bin/env bash
# bench/amp_gpu.sh - issue 12 (amp): [reduction.row_split] with side outputs and the
# [fusion.model_guard] level that keeps reductions apart, on the GPU machine from the repository
# root with dist/ carried (dist/bin/txc built from this branch), in under 120 s:
#
#   bash bench/amp_gpu.sh
#
# The plans (--explain at the measured sizes), then txc bench --device=gpu (verified against the
# host reference, timed; --compare-unfused times the one-kernel-per-operation plan too) of:
# the minimal form `u1 = g1 * 0.5; return u1, sum(u1 * u1)` at N = 2^24 (predicted 31.7 us, one
# row_split kernel storing u1), amp_unscale at N = 2^24, [4096, 4096] (predicted 63.3 us, 2
# kernels; it was 20 kernels, 356.7 us) and three dependent means of one row of 2^20 (the guard's
# reductions apart: 4 kernels, predicted 32.1 us against 39.1 one kernel per operation), then
# bench/heldout_check.sh --only amp_unscale against torch.compile. Files under $OUT (default
# amp-out).
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_start amp
export OUT # bench/heldout_check.sh writes under it too
printf 'fn f(g1: f32[N]) -> (f32[N], f32[]) {\n  u1 = g1 * 0.5\n  return u1, sum(u1 * u1)\n}\n' \
    >"$OUT/half_norm.tx"
printf '%s\n' 'fn f(x: f32[M, N]) -> f32[M, N] {' '  d = x - mean(x, axis=-1, keepdim=true)' \
    '  e = d - mean(d, axis=-1, keepdim=true)' '  return e / sum(e * e, axis=-1, keepdim=true)' \
    '}' >"$OUT/multi3.tx"
run() { # NAME FILE -D ...: the plan's rule lines, then the bench
    local n=$1 f=$2
    shift 2
    "$TXC" "$f" "$@" --target=sm_90a --explain --emit=report -o /dev/null >"$OUT/plan_$n.txt" 2>&1
    grep -E '^(k[0-9]+: \[(reduction|fusion)|\[fusion)|^totals' "$OUT/plan_$n.txt" | cut -c1-200 |
        sed "s/^/$n: /"
    timeout -k 2 40 "$TXC" bench "$f" "$@" --device=gpu --random-inputs=1 --compare-unfused \
        --timing-budget=2 >"$OUT/bench_$n.txt" 2>&1
    echo "$n: bench rc $?"
    grep -iE 'verif|median|measured|fused|total' "$OUT/bench_$n.txt" | head -12 | sed "s/^/$n: /"
}
run half_norm "$OUT/half_norm.tx" -D N=16777216
run amp_unscale bench/heldout/amp_unscale.tx -D N=16777216 -D R=4096 -D C=4096
run multi3 "$OUT/multi3.tx" -D M=1 -D N=1048576
LEFT=$(left 112)
timeout -k 2 "$LEFT" bash bench/heldout_check.sh --budget $((LEFT - 8)) --only amp_unscale
echo "amp_gpu: heldout_check rc $? ($(elapsed) s in all)"
