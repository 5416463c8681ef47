#!/usr/bin/env bash
# bench/red_wide.sh - issue 12's open reduction rows, on the GPU machine from the repository root
# with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/red_wide.sh
#
# 1. softmax f32 [4096, 65536] (the suite's softmax_wide) as planned, then held in registers
#    across 8-block clusters (reduction.cluster_rows: one HBM read, one write) with persistent
#    clusters (grid G: each cluster loops over the rows G apart, loading the next row while it
#    finishes this one) at several G and block sizes, and the prefetch placed at the row's start
#    (TX_RED_PREFETCH=top) instead of before its stores; a cluster per row (grid 0) last;
# 2. rowmean f32 [3000, 7777] as planned (held, peeled) and streamed (reduction.row 256, 128:
#    vector groups from each row's first aligned element, the leftovers one a lane);
# 3. the SASS of chain8's loop (cuobjdump, when the machine has it): instructions per element;
# 4. the sweep's rows softmax f32 [4096, 65536], rowmean f32 [3000, 7777], the odd-width streams
#    (softmax f32 [128, 150001], held-out bf16 [1000, 30011], f32 [300, 131079]: peeled vector
#    groups, verified against the CPU) and chain8, tx then torch.compile, with the copy ceiling
#    measured first (txc bench --calibrate).
# Stays under 78 s. $OUT gets variants.txt, sass_chain8.txt and the sweep's files; the summary
# comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red-wide}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
S=dist/shared/bench/suite
[ -d "$S" ] || S=../shared/bench/suite
ITERS=5 timeout -k 2 34 "$PY" bench/red12_variants.py "$S/softmax_wide.tx" "-D M=4096 -D N=65536" \
    reduction.cluster_rows 512,8,33 512,8,32 1024,8,16 512,8,33@TX_RED_PREFETCH=top \
    2>&1 | tee "$OUT/variants.txt"
printf 'fn f(x: f32[M, N]) -> f32[M] {\n  return mean(x, axis=-1)\n}\n' >"$OUT/rowmean.tx"
timeout -k 2 10 "$PY" bench/red12_variants.py "$OUT/rowmean.tx" "-D M=3000 -D N=7777" reduction.row 256 128 \
    2>&1 | tee -a "$OUT/variants.txt"
{
    "$TXC" "$S/chain8.tx" -D N=268435456 --target=sm_90a -o "$OUT/chain8.ptx" &&
        ptxas -arch=sm_90a "$OUT/chain8.ptx" -o "$OUT/chain8.cubin" &&
        command -v cuobjdump >/dev/null && cuobjdump -sass "$OUT/chain8.cubin" >"$OUT/sass_chain8.txt" &&
        echo "chain8 SASS: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$OUT/sass_chain8.txt") instructions," \
            "$(grep -cE 'MUFU' "$OUT/sass_chain8.txt") MUFU, $(grep -cE 'LDG' "$OUT/sass_chain8.txt") LDG"
} 2>&1 | tail -3
LEFT=$((76 - ($(date +%s) - T0)))
[ "$LEFT" -gt 15 ] || LEFT=15
ROWS=softmax_f32_4096x65536,rowmean_f32_3000x7777,softmax_f32_128x150001,heldout_softmax_bf16_1000x30011
ROWS=$ROWS,heldout_softmax_f32_300x131079,chain8_f32_64M
timeout -k 2 "$LEFT" bash bench/sweep.sh --only "$ROWS" --heldout --iters 10 --deadline $((LEFT - 3)) --torch-reserve $(((LEFT - 3) / 2))
echo "red_wide: sweep rc $? ($(($(date +%s) - T0)) s in all)"
grep -h "^variant" "$OUT/variants.txt"
