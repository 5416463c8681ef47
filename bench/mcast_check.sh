#!/usr/bin/env bash
# bench/mcast_check.sh - the 2-CTA multicast wgmma kernel (template ` mc2`, schedule bm = 256) on
# one H200, from the repository root with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/mcast_check.sh
#
# 1. bench/gemm_shapes.sh: the held-out GEMM rows with cuBLAS in the same run, every tx output
#    verified; rows whose model choice is ` mc2` run the multicast kernel, and `txc tune` times it
#    against the plain kernel of the same tile (the candidates' measured times).
# 2. `txc tune` of the suite's mlp_block (M 8192, D 4096, F 11008): each region's model choice and
#    runners-up (multicast and plain tiles) timed.
# $OUT/gemm_shapes.txt, $OUT/mlp_tune.txt; a summary last. About 95 s.
set -u
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-mcast-out}
mkdir -p "$OUT"
[ -x "$TXC" ] || { echo "mcast_check: no txc at $TXC (run bash tools/make-dist.sh)" >&2; exit 2; }
t0=$(date +%s)
# 0. smoke: the first multicast row alone, verified, in 20 s (a hang or a wrong result turns the
#    multicast tiles off for the rest, TX_WG_MCAST=0, so the plain kernel's rows still come back)
printf 'fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' > "$OUT/xw.tx"
"$TXC" "$OUT/xw.tx" --target=sm_90a -o "$OUT/xw.ptx" -D M=2000 -D N=1000 -D K=3000 >/dev/null 2>&1
grep -o '"template": "[^"]*"' "$OUT/xw.ptx.json" 2>/dev/null
timeout -k 3 20 "$TXC" bench "$OUT/xw.tx" --device=gpu --random-inputs=1 --iters 10 --no-tune-cache \
    -D M=2000 -D N=1000 -D K=3000 > "$OUT/smoke.txt" 2>&1
rc=$?
grep -iE "verif|fused|error" "$OUT/smoke.txt" | head -6
if [ $rc -ne 0 ] || ! grep -q ": verified" "$OUT/smoke.txt"; then
    echo "SMOKE FAILED (rc $rc): multicast off for the rest (TX_WG_MCAST=0)"; export TX_WG_MCAST=0
fi
GEMM_DEADLINE=${GEMM_DEADLINE:-50} GEMM_TIMEOUT=${GEMM_TIMEOUT:-62} bash bench/gemm_shapes.sh \
    > "$OUT/gemm_shapes.out" 2>&1
echo "gemm_shapes rc=$? ($(( $(date +%s) - t0 )) s)"
SUITE=${SUITE:-dist/shared/bench/suite}
timeout -k 3 ${MLP_TIMEOUT:-26} "$TXC" tune "$SUITE/mlp_block.tx" --tune-cache="$OUT/mlp_tune.json" \
    --iters 5 -D M=8192 -D D=4096 -D F=11008 > "$OUT/mlp_tune.txt" 2>&1
echo "mlp_block tune rc=$? ($(( $(date +%s) - t0 )) s)"
echo "== mlp_block tune (predicted -> measured per candidate; * kept)"
grep -E "matmul\.wgmma|^k[0-9]|region" "$OUT/mlp_tune.txt" | head -20
echo "== gemm_shapes (rows with mc2 run the multicast kernel)"
[ -f "$OUT/gemm_shapes.txt" ] && grep -E "^  [a-z]+_[0-9]" "$OUT/gemm_shapes.txt" | sed 's/matmul.wgmma//'
[ -f "$OUT/gemm_shapes.txt" ] && grep -E "^\| [a-z]|summary" "$OUT/gemm_shapes.txt" | cut -d'|' -f2-6,10
[ -f "$OUT/gemm_shapes.txt" ] || tail -30 "$OUT/gemm_shapes.out"
