#!/usr/bin/env bash
# bench/split_stats_gpu.sh - [reduction.split_column_var] on the GPU (dist/ carried): the accuracy
# check of tests/scripts/split_stats.sh with --device=gpu (columns of mean 1000 and spread 0.3,
# against the exact statistics within f32 bounds), then `txc bench` of the split programs it
# touches and of multi_axis_reduce (a split sum of 32768 terms: the scaled verdict; seed 1),
# timed and verified against the host. Writes $OUT/split_stats.txt.
set -u
TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-split-out}
mkdir -p "$OUT"
PY=$(command -v python3)
{
  TX_PYTHON=$PY bash tests/scripts/split_stats.sh "$TXC" . gpu
  echo "rc=$?"
  for c in "bench/heldout/batch_stats.tx -D N=32768 -D C=512" \
    "tests/split/midvar.tx -D B=3 -D T=4096 -D C=45" \
    "tests/split/colvar.tx -D N=32768 -D C=118" \
    "bench/heldout/seq_batchnorm.tx -D B=32 -D C=512 -D L=1000" \
    "bench/heldout/multi_axis_reduce.tx -D A=32 -D B=512 -D C=1024"; do
    echo "== txc bench $c"
    # shellcheck disable=SC2086
    "$TXC" bench $c --device=gpu --random-inputs=1 2>&1 | grep -E "VERIFIED|verified|FAIL|ok  |scaled|graph|^  k[0-9]" | head -16
  done
} 2>&1 | tee "$OUT/split_stats.txt"
