#!/usr/bin/env bash
# column_blocks: blocks per SM (TX_DBG_WAVE, a temporary knob) against the time of each column row
export PATH="$PATH:/usr/local/cuda/bin"
for p in "colsum_bf16 -D M=16384 -D N=4096" "colmean_f32 -D M=1048576 -D N=16" "colmax_f32 -D M=100000 -D N=333" \
         "midmax_f32 -D A=16 -D B=8191 -D C=129" "colsum_f32 -D M=65536 -D N=1024" "colsum_bf16 -D M=8192 -D N=2048" \
         "colsum_bf16 -D M=65536 -D N=1024" "colsum_f32 -D M=100003 -D N=777"; do
  set -- $p; f=$1; shift
  line="$f $*:"
  for w in 1 2 3 4 6; do
    t=$(TX_DBG_WAVE=$w dist/bin/txc bench dist/cols/$f.tx "$@" --device=gpu --random-inputs=1 2>&1 | awk '/verified/{v=1} /^  graph/{print $2}')
    line="$line w$w=$t"
  done
  echo "$line"
done
