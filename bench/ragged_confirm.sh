#!/usr/bin/env bash
# bench/ragged_confirm.sh - [matmul.wgmma.epi]'s stage trade (one tile a CTA: a ring of 5+ stages
# gives its deepest up for a second TMA-store entry) on the GPU machine from dist/ (bash
# tools/make-dist.sh), under 45 s, files in $OUT:
#   1. confirm.txt: cuBLAS and `txc bench` (verified, median, L2 flushed) of x @ w at the shapes
#      whose template the rule changes, with the rule (plan) and without it (TX_WG_EPI_TRADE=0)
#   2. ragged/: bench/gemm_shapes.py GEMM_ROWS=ragged (no tuning) with what time is left
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-ragged-confirm-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
[ -x bin/txc ] && TXC=${TXC:-$PWD/bin/txc}; TXC=${TXC:-$PWD/dist/bin/txc}; export TXC
T0=$(date +%s); BUDGET=${BUDGET:-43}
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
P=bench/ragged_xw.tx
dims() { IFS=x read -r m n k <<<"$1"; echo "-D M=$m -D N=$n -D K=$k"; }
bench() { # LABEL TRADE SHAPE: one verified txc bench line (TRADE 0: the rule off)
  local out
  out=$(TX_WG_EPI_TRADE=$2 timeout 12 "$TXC" bench $P --device=gpu --random-inputs=1 --iters 20 \
        --json --no-tune-cache $(dims $3) 2>&1)
  echo "== $*" >>"$OUT/confirm.log"; echo "$out" >>"$OUT/confirm.log"
  python3 bench/ragged_line.py "$1" "$3" <<<"$out"
}
S="300x5000x3000 1536x1536x1536 777x3000x1000 100x4096x4096"
{
  python3 bench/ragged_cublas.py time $S
  for s in $S; do
    [ "$(left)" -gt 22 ] || { echo "confirm: out of time at $s"; break; }
    bench trade "" $s
    bench no-trade 0 $s
  done
} 2>&1 | tee "$OUT/confirm.txt"
l=$(( $(left) - 3 ))
if [ $l -gt 8 ]; then
  OUT=$OUT/ragged GEMM_ROWS=ragged GEMM_TUNE=0 GEMM_DEADLINE=$(( l - 4 )) GEMM_TIMEOUT=$l \
    bash bench/gemm_shapes.sh > "$OUT/ragged.log" 2>&1
  grep -E " tx .* us  cuBLAS|^summary|killed" "$OUT/ragged.log" | cut -c1-120
fi
echo "ragged_confirm done in $(( $(date +%s) - T0 )) s"
