#!/usr/bin/env bash
# bench/mcast_check.sh - the 2-CTA multicast wgmma kernel (template ` mc2`, schedule bm = 256) on
# one H200, from the repository root with dist/ built by `bash tools/make-dist.sh`:
#
#   bash bench/mcast_check.sh
#
# 0. smoke: x @ w 2000 x 1000 x 3000 on the multicast kernel, verified, within 20 s (a hang or a
#    wrong result turns the multicast tiles off for the rest: TX_WG_MCAST=0).
# 1. `txc tune` of a few shapes and of the suite's mlp_block (M 8192, D 4096, F 11008): the model's
#    choice and its runners-up, multicast (bm=256) and plain tiles of the same width, each timed.
# 2. bench/gemm_shapes.sh: the held-out GEMM rows with cuBLAS in the same run, every tx output
#    verified (rows whose model choice is ` mc2` run the multicast kernel).
# $OUT/tune_*.txt, $OUT/gemm_shapes.txt; a summary last. About 90 s.
set -u
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
export OUT=${OUT:-mcast-out}
mkdir -p "$OUT"
[ -x "$TXC" ] || { echo "mcast_check: no txc at $TXC (run bash tools/make-dist.sh)" >&2; exit 2; }
t0=$(date +%s)
printf 'fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' > "$OUT/xw.tx"
printf 'fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] {\n  return silu(a @ b)\n}\n' > "$OUT/silu.tx"
"$TXC" "$OUT/xw.tx" --target=sm_90a -o "$OUT/xw.ptx" -D M=2000 -D N=1000 -D K=3000 >/dev/null 2>&1
grep -o '"template": "[^"]*"' "$OUT/xw.ptx.json" 2>/dev/null
timeout -k 3 20 "$TXC" bench "$OUT/xw.tx" --device=gpu --random-inputs=1 --iters 10 --no-tune-cache \
    -D M=2000 -D N=1000 -D K=3000 > "$OUT/smoke.txt" 2>&1
rc=$?
grep -E "verif|fused|error|f_k0" "$OUT/smoke.txt" | head -6
if [ $rc -ne 0 ] || ! grep -q ": verified" "$OUT/smoke.txt"; then
    echo "SMOKE FAILED (rc $rc): multicast off for the rest (TX_WG_MCAST=0)"; export TX_WG_MCAST=0
fi
tune() { # name file sizes...
    local n=$1 f=$2; shift 2
    timeout -k 3 ${TUNE_TIMEOUT:-15} "$TXC" tune "$f" --tune-cache="$OUT/tune_$n.json" --iters 5 "$@" \
        > "$OUT/tune_$n.txt" 2>&1
    echo "== tune $n (rc $?, +$(( $(date +%s) - t0 )) s)"
    grep -E "matmul\.wgmma" "$OUT/tune_$n.txt" | sed 's/matmul.wgmma//; s/  */ /g' | head -6
}
SUITE=${SUITE:-dist/shared/bench/suite}
tune xw2048 "$OUT/xw.tx" -D M=2048 -D N=1024 -D K=3072
tune xw1024k8 "$OUT/xw.tx" -D M=1024 -D N=1024 -D K=8192
tune silu4000 "$OUT/silu.tx" -D M=4000 -D N=11000 -D K=4096
TUNE_TIMEOUT=26 tune mlp "$SUITE/mlp_block.tx" -D M=8192 -D D=4096 -D F=11008
GEMM_DEADLINE=${GEMM_DEADLINE:-34} GEMM_TIMEOUT=${GEMM_TIMEOUT:-45} bash bench/gemm_shapes.sh \
    > "$OUT/gemm_shapes.out" 2>&1
echo "== gemm_shapes rc=$? (+$(( $(date +%s) - t0 )) s; rows with mc2 run the multicast kernel)"
[ -f "$OUT/gemm_shapes.txt" ] && grep -E "^\| [a-z]|summary" "$OUT/gemm_shapes.txt" | cut -d'|' -f2-6,10
[ -f "$OUT/gemm_shapes.txt" ] || tail -30 "$OUT/gemm_shapes.out"
