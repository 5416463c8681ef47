#!/usr/bin/env bash
# bench/epi_check.sh - the wgmma kernels' TMA-store epilogue on the GPU machine, in under 2 minutes,
# from the repository root with dist/ built by `bash tools/make-dist.sh` and carried:
#
#   bash bench/epi_check.sh
#
# Two runs of bench/wgmma_check.py (its steps and tolerances), most important first:
# 1. ragged sizes verified against torch on the GPU (float64 products with the graph's roundings):
#    silu / bias+gelu / two outputs of two dtypes (bf16 + f32) at 300 x 264 x 136, Q/K/V (f16,
#    300 x 264 x 136), SwiGLU 200 x 136 x 72 and f16 16 x 264 x 136, merged heads 300 x 264 x 1024,
#    split-K 16 x 1000 x 4104, mlp 200 x 136 x 264, silu 4000 x 11000 x 4096; compute-sanitizer
#    memcheck on two_out 300 x 264 x 136 (both store-unit widths, both swizzle spans);
# 2. timings, tx against cuBLAS (the GEMMs alone) and torch.compile in the same process: the
#    suite's matmul_bias_gelu (8192^3), silu(a @ b) 4000 x 11000 x 4096, the twin SwiGLU
#    8192 x 11008 x 4096, Q/K/V 2048 x 4096 x 4096 and mlp_block M 8192 D 4096 F 11008.
# Files in $OUT: ragged/ and timed/ (wgmma_check.{txt,log,json} each). Both summaries are printed
# last. Exit 1 when a check failed.
set -uo pipefail
export OUT=${OUT:-epi-check-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT/ragged" "$OUT/timed"
PY=$(command -v python3 || command -v python)
if [ -z "$PY" ]; then echo "FAIL env: no python3"; exit 1; fi
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
rc=0
OUT="$OUT/ragged" SAN_TOOLS=memcheck SAN_ONLY=two_out_300x264x136 TIME_DEADLINE=0 \
  timeout -k 5 ${EPI_RAGGED_S:-50} "$PY" bench/wgmma_check.py --only \
  'two_out_300x264x136,silu_300x264x136,gelu_300x264x136,qkv_f16_300x264x136,swiglu_200x136x72,swiglu_f16_16x264x136,merged_300x264x1024,linres_m16x1000x4104_sk,mlp_200x136x264,silu_4000x11000x4096' \
  >"$OUT/ragged.out" 2>&1
r=$?
[ $r -eq 124 ] || [ $r -eq 137 ] && echo "FAIL ragged: killed after ${EPI_RAGGED_S:-50} s" >>"$OUT/ragged.out"
[ $r -ne 0 ] && rc=1
OUT="$OUT/timed" WG_NO_VERIFY=1 COMPILE_DEADLINE=${EPI_COMPILE_S:-35} TIME_DEADLINE=${EPI_TIME_S:-50} \
  timeout -k 5 ${EPI_TIMED_S:-58} "$PY" bench/wgmma_check.py --only \
  'gelu_8192,silu_4000x11000x4096,swiglu_8192x11008x4096,qkv_2048x4096x4096,mlp_8192x4096x11008' \
  >"$OUT/timed.out" 2>&1
r=$?
[ $r -eq 124 ] || [ $r -eq 137 ] && echo "FAIL timed: killed after ${EPI_TIMED_S:-58} s" >>"$OUT/timed.out"
[ $r -ne 0 ] && rc=1
echo "== ragged: verify + memcheck"
grep -E "^(PASS|FAIL|SKIP)" "$OUT/ragged.out" | grep -v "^PASS env"
echo "== timed"
grep -E "^(FAIL|SKIP)" "$OUT/timed.out"
sed -n '/wgmma_check summary/,$p' "$OUT/ragged.out" | head -14
sed -n '/wgmma_check summary/,$p' "$OUT/timed.out"
exit $rc
