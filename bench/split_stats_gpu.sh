#!/usr/bin/env bash
# bench/split_stats_gpu.sh - [reduction.split_column_var] on the GPU (dist/ carried): the accuracy
# check of tests/scripts/split_stats.sh with --device=gpu (columns of mean 1000 and spread 0.3,
# against the exact statistics within f32 bounds), then `txc bench` of the split programs it
# touches (timing; verified against the host). Writes $OUT/split_stats.txt.
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
    "tests/split/colvar.tx -D N=32768 -D C=118"; do
    echo "== txc bench $c"
    # shellcheck disable=SC2086
    "$TXC" bench $c --device=gpu --random-inputs=1 2>&1 | grep -E "verified|FAIL|ok  |graph|^  k[0-9]" | head -12
  done
} 2>&1 | tee "$OUT/split_stats.txt"
