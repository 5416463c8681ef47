#!/usr/bin/env bash
# bench/block_check.sh - issue 11's block and GEMM targets on the GPU machine, from the repository
# root with dist/ built by `bash tools/make-dist.sh` and carried:
#
#   bash bench/block_check.sh [--blocks-only | --gemms-only] [--only PAT,...]
#
# 1. bench/block_check.py: the LLaMA-width block (bench/suite-extra/llama_block.tx) and
#    examples/transformer_block.tx, verified on the GPU (S = 300 and 2048) and timed at S = 2048
#    against PyTorch eager and torch.compile of the same block in the same process;
# 2. bench/wgmma_check.py: the GEMM shapes (M = 1, 16, 64, 128 x 4096^2, ragged, 8192^3 with an
#    epilogue, the SwiGLU twin GEMM, Q/K/V, mlp_block) verified, timed against cuBLAS and
#    torch.compile, sanitized (--only PAT,... selects cases by fnmatch pattern).
# 3. --ncu: Nsight Compute's speed-of-light section of two GEMM kernels that miss their targets
#    (x @ w^T + r at 16 x 4096 x 4096; gelu(a @ b + c) at 4000 x 11000 x 4096), $OUT/ncu.txt.
# Files in $OUT: block_check.{txt,log,json}, wgmma_check.{txt,log,json}. Both summaries are printed
# last. Under 4 minutes: each part has its own time limit (BLOCK_TIMEOUT, WG_TIMEOUT seconds).
set -uo pipefail
export OUT=${OUT:-block-check-out}
export TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
blocks=1 gemms=1 ncu=0 only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --blocks-only) gemms=0; shift ;;
    --gemms-only) blocks=0; shift ;;
    --only) only=(--only "$2"); shift 2 ;;
    --ncu) ncu=1; shift ;;
    *) echo "block_check: unknown option $1" >&2; exit 2 ;;
  esac
done
rc=0
if [ $blocks = 1 ]; then
  BLOCK_DEADLINE=${BLOCK_DEADLINE:-90} timeout -k 10 ${BLOCK_TIMEOUT:-130} "$PY" bench/block_check.py >"$OUT/block_check.out" 2>&1
  r=$?
  [ $r -eq 124 ] || [ $r -eq 137 ] && echo "FAIL block_check: killed after ${BLOCK_TIMEOUT:-130} s" >>"$OUT/block_check.out"
  [ $r -ne 0 ] && rc=1
fi
if [ $gemms = 1 ]; then
  COMPILE_DEADLINE=${COMPILE_DEADLINE:-90} TIME_DEADLINE=${TIME_DEADLINE:-120} WG_TIMEOUT=${WG_TIMEOUT:-150} \
    bash bench/wgmma_check.sh "${only[@]}" >"$OUT/wgmma_check.out" 2>&1
  [ $? -ne 0 ] && rc=1
fi
if [ $ncu = 1 ]; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  W=$(mktemp -d)
  printf 'fn linres(x: bf16[M, K], w: bf16[N, K], r: bf16[M, N]) -> bf16[M, N] {\n  return x @ transpose(w, 0, 1) + r\n}\n' >"$W/linres.tx"
  printf 'fn mm_gelu(a: bf16[M, K], b: bf16[K, N], c: bf16[N]) -> bf16[M, N] {\n  return gelu_tanh(a @ b + c)\n}\n' >"$W/mm_gelu.tx"
  : >"$OUT/ncu.txt"
  for c in "linres 16 4096 4096" "mm_gelu 4000 11000 4096"; do
    set -- $c
    echo "== ncu $1 M=$2 N=$3 K=$4" >>"$OUT/ncu.txt"
    timeout -k 5 ${NCU_TIMEOUT:-25} "$NCU" -k "regex:${1}_k" --launch-count 1 --section SpeedOfLight --section LaunchStats \
      --section Occupancy "$TXC" run "$W/$1.tx" --device=gpu --random-inputs=1 -D M=$2 -D N=$3 -D K=$4 >>"$OUT/ncu.txt" 2>&1
    echo "   rc $?" >>"$OUT/ncu.txt"
  done
  rm -rf "$W"
fi
[ $blocks = 1 ] && { grep -E "^(PASS|FAIL|SKIP)" "$OUT/block_check.out" | grep -v "^PASS env"; }
[ $gemms = 1 ] && { grep -E "^(FAIL|SKIP)" "$OUT/wgmma_check.out"; grep -c "^PASS" "$OUT/wgmma_check.out" | sed 's/^/wgmma_check PASS lines: /'; }
[ $blocks = 1 ] && sed -n '/^block_check summary/,$p' "$OUT/block_check.out"
[ $ncu = 1 ] && grep -E "^== ncu|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Registers Per|Grid Size|   rc" "$OUT/ncu.txt"
[ $gemms = 1 ] && sed -n '/^wgmma_check summary/,$p' "$OUT/wgmma_check.out"
exit $rc
