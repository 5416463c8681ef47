#!/usr/bin/env bash
# bench/swap_check.sh - [matmul.wgmma.swap] on the GPU machine from the directory holding dist/
# (bash tools/make-dist.sh), under BUDGET s (45), files in $OUT: x @ w (bf16) at short / ragged M,
# each shape with the planner's plain kernel (TX_WG_SWAP unset) and the swapped kernel
# (TX_WG_SWAP=1; TX_WG_SWAP_BM pins its row tile), every tx row verified by `txc bench` against the
# host path; cuBLAS (torch.matmul) of the same shapes in the same run. sweep.txt is the table.
set -uo pipefail
OUT=${OUT:-swap-check-out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
[ -x bin/txc ] && TXC=${TXC:-bin/txc}; TXC=${TXC:-dist/bin/txc}; T0=$(date +%s); BUDGET=${BUDGET:-45}
B=bench; [ -d dist/bench ] && B=dist/bench
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
P=$B/ragged_xw.tx
dims() { IFS=x read -r m n k <<<"$1"; echo "-D M=$m -D N=$n -D K=$k"; }
bench() { # LABEL SWAP BM SHAPE: one verified txc bench line
  local out
  out=$(env ${2:+TX_WG_SWAP=$2} ${3:+TX_WG_SWAP_BM=$3} timeout 10 "$TXC" bench $P --device=gpu \
        --random-inputs=1 --iters 20 --json --no-tune-cache $(dims $4) 2>&1)
  echo "== $*" >>"$OUT/sweep.log"; echo "$out" >>"$OUT/sweep.log"
  python3 $B/ragged_line.py "$1" "$4" <<<"$out"
}
S1=300x5000x3000 S2=16x4096x4096 S3=33x1000x1001 S4=300x5056x3008 S5=100x4096x4096 S6=200x3001x1000
{
  (cd $B && python3 ragged_cublas.py time $S1 $S2 $S3 $S4 $S5 $S6)
  for r in "swap 2 '' $S1" "plan '' '' $S1" "swap 2 '' $S2" "plan '' '' $S2" "swap 2 '' $S3" \
           "swapM1 2 '' 1x4096x4096" "swap104 2 104 $S1" "swap 2 '' 300x999x1001" "swap 2 '' $S5" \
           "plan '' '' $S5" "swap 2 '' $S6" "plan '' '' $S6" "swap 2 '' $S4" "plan '' '' $S4" \
           "swap8 2 8 $S2" "plan '' '' $S3"; do
    [ "$(left)" -gt 4 ] || { echo "sweep: out of time at $r"; break; }
    eval bench $r
  done
} 2>&1 | tee "$OUT/sweep.txt"
echo "swap_check done in $(( $(date +%s) - T0 )) s"
