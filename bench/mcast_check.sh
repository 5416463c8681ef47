#!/usr/bin/env bash
# bench/mcast_check.sh - the 2-CTA multicast wgmma kernel (template ` mc2`, schedule bm = 256) on
# one H200, from the repository root with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/mcast_check.sh
#
# 0. smoke: x @ w 2000 x 1000 x 3000 on the multicast kernel, verified, within 20 s (a hang or a
#    wrong result turns the multicast tiles off for the rest: TX_WG_MCAST=0).
# 1. x @ w^T + r 777 x 4096 x 1024 (a K-contiguous B, an odd count of M tiles) forced onto the
#    multicast kernel (txc tune, then bench/mcast_force.py makes the cache take it), verified.
# 2. the suite's mlp_block (M 8192, D 4096, F 11008): `txc tune` (each region's model choice and
#    runners-up, multicast and plain, timed), then `txc bench` at the default tile order and at
#    TX_WG_GROUP_M=16.
# 3. bench/gemm_shapes.sh with what is left of ~70 s: the held-out GEMM rows, cuBLAS in the same
#    run, every tx output verified, each row's tune candidates (multicast and plain) timed.
# A summary last.
set -u
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-mcast-out}
mkdir -p "$OUT"
[ -x "$TXC" ] || { echo "mcast_check: no txc at $TXC (run bash tools/make-dist.sh)" >&2; exit 2; }
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
printf 'fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' > "$OUT/xw.tx"
printf 'fn f(x: bf16[M, K], w: bf16[N, K], r: bf16[M, N]) -> bf16[M, N] {\n  return x @ transpose(w, 0, 1) + r\n}\n' \
    > "$OUT/linres.tx"
timeout -k 3 20 "$TXC" bench "$OUT/xw.tx" --device=gpu --random-inputs=1 --iters 10 --no-tune-cache \
    -D M=2000 -D N=1000 -D K=3000 > "$OUT/smoke.txt" 2>&1
rc=$?
echo "== smoke xw 2000x1000x3000 (rc $rc, +$(el) s): $(grep -E 'fused:' "$OUT/smoke.txt" | head -1)"
grep -E "^  f_k0|template" "$OUT/smoke.txt" | head -3
if [ $rc -ne 0 ] || ! grep -q ": verified" "$OUT/smoke.txt"; then
    echo "SMOKE FAILED (rc $rc): multicast off for the rest (TX_WG_MCAST=0)"; export TX_WG_MCAST=0
fi
# 1. a forced K-contiguous multicast kernel, verified
L=(-D M=777 -D N=4096 -D K=1024)
timeout -k 3 12 "$TXC" tune "$OUT/linres.tx" --tune-cache="$OUT/force.json" --iters 3 "${L[@]}" \
    > "$OUT/force_tune.txt" 2>&1
python3 bench/mcast_force.py "$OUT/force.json"
"$TXC" "$OUT/linres.tx" --target=sm_90a --tune-cache="$OUT/force.json" -o "$OUT/force.ptx" "${L[@]}" \
    >/dev/null 2>&1 && grep -o '"template": "[^"]*"' "$OUT/force.ptx.json"
timeout -k 3 15 "$TXC" bench "$OUT/linres.tx" --device=gpu --random-inputs=1 --iters 10 \
    --tune-cache="$OUT/force.json" "${L[@]}" > "$OUT/force_bench.txt" 2>&1
echo "== forced multicast linres 777x4096x1024 (rc $?, +$(el) s): $(grep -E 'fused:' "$OUT/force_bench.txt" | head -1)"
grep -E "matmul\.wgmma|^  f_k0" "$OUT/force_tune.txt" "$OUT/force_bench.txt" | sed 's/  */ /g' | head -6
# 2. mlp_block
SUITE=${SUITE:-dist/shared/bench/suite}
MLP=(-D M=8192 -D D=4096 -D F=11008)
timeout -k 3 22 "$TXC" tune "$SUITE/mlp_block.tx" --tune-cache="$OUT/mlp_tune.json" --iters 5 "${MLP[@]}" \
    > "$OUT/mlp_tune.txt" 2>&1
echo "== mlp_block tune (rc $?, +$(el) s)"
grep -E "matmul\.wgmma" "$OUT/mlp_tune.txt" | sed 's/matmul.wgmma//; s/  */ /g'
for g in 8 16; do
    TX_WG_GROUP_M=$g timeout -k 3 14 "$TXC" bench "$SUITE/mlp_block.tx" --device=gpu --random-inputs=1 \
        --iters 10 --no-tune-cache "${MLP[@]}" > "$OUT/mlp_g$g.txt" 2>&1
    echo "== mlp_block TX_WG_GROUP_M=$g (rc $?, +$(el) s): $(grep -E 'fused:' "$OUT/mlp_g$g.txt" | head -1)"
    grep -E "^  (mlp_k|graph)" "$OUT/mlp_g$g.txt" | sed 's/  */ /g' | cut -c1-80
done
# 3. the held-out rows with what is left
left=$(( 66 - $(el) ))
[ $left -lt 12 ] && left=12
GEMM_DEADLINE=$(( left - 9 )) GEMM_TIMEOUT=$left bash bench/gemm_shapes.sh > "$OUT/gemm_shapes.out" 2>&1
echo "== gemm_shapes rc=$? (+$(el) s; rows with mc2 run the multicast kernel)"
if [ -f "$OUT/gemm_shapes.txt" ]; then
    grep -E "^  [a-z]+_[0-9]" "$OUT/gemm_shapes.txt" | grep -B3 -A3 "bm=256" | sed 's/matmul.wgmma//; s/  */ /g' | head -40
    grep -E "^\| [a-z]|summary" "$OUT/gemm_shapes.txt" | cut -d'|' -f2-6,10
else
    grep -E "^[a-z]+_[0-9]" "$OUT/gemm_shapes.out" | cut -c1-120
fi
