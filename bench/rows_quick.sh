#!/usr/bin/env bash
# bench/rows_quick.sh - bench/rows_quick.py on the GPU machine with dist/ carried: ragged checks of
# the newest row schedules, then the sweep's slowest row reductions timed by tx (ratios against
# stored torch.compile times), every line printed as it is measured; under 80 s.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc} OUT=${OUT:-rows-out}
python3 bench/rows_quick.py softmax_f32_4096x65536 softmax_f32_128x150001 layernorm_bf16_8192x5120 \
  rmsnorm_f32_2048x12288 logsumexp rowmax_f32_1048576x64 layernorm_f32_100000x768 \
  log_softmax_bf16_8192x32000 softmax_f32_256x262144 softmax_bf16_8x50257 rowsum_f32_512x262144 \
  rowmean softmax_bf16_32768x1000
