#!/usr/bin/env bash
# bench/ragged_prof.sh - what bounds the wgmma GEMM at ragged / mid-size shapes (issue 11), on the
# GPU machine from dist/ (bash tools/make-dist.sh), under 60 s, files in $OUT:
#   1. sweep.txt: `txc bench` (verified, median, L2 flushed) of x @ w at 300x5000x3000 (pitches of
#      6000 / 10000 bytes), its 128-byte-pitch twin 300x5056x3008 and 1536^3, with the planner's
#      tile and tiles pinned by TX_WG_TILE (kS: S split-K ranks, k0 stream-K), stream-K CTAs set
#      by TX_WG_SK_CTAS, rings capped by TX_WG_MAX_STAGES; cuBLAS the same shapes in the same run
#   2. ncu-*.txt: Nsight Compute (--set full) of tx and of cuBLAS at 300x5000x3000 and 1536^3
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-ragged-prof-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
# from the repository root (dist/bin/txc) or from dist/ itself (bin/txc)
[ -x bin/txc ] && TXC=${TXC:-bin/txc}; TXC=${TXC:-dist/bin/txc}; T0=$(date +%s); BUDGET=${BUDGET:-58}
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
P=bench/ragged_xw.tx
dims() { IFS=x read -r m n k <<<"$1"; echo "-D M=$m -D N=$n -D K=$k"; }
bench() { # TILE SHAPE [G [S]]: one verified txc bench line (TILE plan = the planner's; G: the
  # stream-K CTAs, TX_WG_SK_CTAS; S: at most S ring stages, TX_WG_MAX_STAGES)
  local out t=$1; [ "$t" = plan ] && t=""
  out=$(TX_WG_TILE=$t TX_WG_SK_CTAS=${3:-} TX_WG_MAX_STAGES=${4:-} timeout 12 "$TXC" bench $P --device=gpu --random-inputs=1 \
        --iters 20 --json --no-tune-cache $(dims $2) 2>&1)
  echo "== $*" >>"$OUT/sweep.log"; echo "$out" >>"$OUT/sweep.log"
  python3 bench/ragged_line.py "$1${3:+/g$3}${4:+/s$4}" "$2" <<<"$out"
}
S1=300x5000x3000 S2=300x5056x3008 S3=1536x1536x1536
{
  python3 bench/ragged_cublas.py time $S1 $S2 $S3
  for r in "plan $S1" "128x192 $S2" "128x256k0 $S1 120" "128x256k0 $S3" "plan $S3" "plan $S2" \
           "128x256 $S1" "128x256 $S2" "128x256k0 $S2 120" "128x192 $S3 '' 4" "128x192 $S1 '' 4" \
           "128x256k0 $S1" "128x128k0 $S3"; do
    [ "$(left)" -gt 34 ] || { echo "sweep: out of time at $r"; break; }
    eval bench $r
  done
} 2>&1 | tee "$OUT/sweep.txt"
NCU="ncu --clock-control none --set full"
prof() { # NAME KREGEX CMD...: one kernel's report
  local n=$1 k=$2; shift 2
  [ "$(left)" -gt 6 ] || { echo "ncu $n: out of time"; return; }
  timeout $(( $(left) - 2 )) $NCU -k "regex:$k" -c 1 "$@" >"$OUT/ncu-$n.txt" 2>&1
  echo "ncu $n rc $?"
  grep -E "^  [a-z_0-9]+.*\(|Duration|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Grid Size|Cluster Size|L2 Hit Rate|Issue Slots Busy|No Eligible" "$OUT/ncu-$n.txt" | head -16
}
prof tx-300 'f_k' "$TXC" run $P --device=gpu --random-inputs=1 $(dims $S1)
prof cublas-300 'nvjet|gemm|xmma|cutlass|sm90' python3 bench/ragged_cublas.py once $S1
prof tx-1536 'f_k' "$TXC" run $P --device=gpu --random-inputs=1 $(dims $S3)
prof cublas-1536 'nvjet|gemm|xmma|cutlass|sm90' python3 bench/ragged_cublas.py once $S3
echo "ragged_prof done in $(( $(date +%s) - T0 )) s"
