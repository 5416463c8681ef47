#!/usr/bin/env bash
# bench/gemm_final_check.sh - the blocks and suite GEMM workloads at the multicast kernel and the
# tile-order groups of this branch (one H200, from the repository root with dist/ built by
# `bash tools/make-dist.sh`), in about 60 s:
#   1. bench/block_check.sh --blocks-only: the LLaMA-width block and examples/transformer_block.tx
#      against torch.compile of the same block (the LLaMA block was 1.18x)
#   2. bench/run_suite.sh --only mlp_block,matmul_bias_gelu --no-unfused with what is left
#      (torch.compile anchors when they fit; else the committed anchors file)
set -u
cd "$(dirname "$0")/.."
export OUT=${OUT:-gemm-final-out}
mkdir -p "$OUT/block" "$OUT/suite"
t0=$(date +%s)
OUT="$OUT/block" BLOCK_TIMEOUT=${BLOCK_TIMEOUT:-34} timeout -k 3 38 bash bench/block_check.sh --blocks-only \
    > "$OUT/block.log" 2>&1
echo "== block_check rc=$? (+$(( $(date +%s) - t0 )) s)"
left=$(( 56 - ($(date +%s) - t0) ))
[ $left -lt 10 ] && left=10
OUT="$OUT/suite" PER_TIMEOUT=$left TX_ANCHOR_DEADLINE=$(( left / 2 )) timeout -k 3 $left \
    bash bench/run_suite.sh --only mlp_block,matmul_bias_gelu --no-unfused --iters 10 > "$OUT/suite.log" 2>&1
echo "== suite rc=$? (+$(( $(date +%s) - t0 )) s)"
grep -E '^\| (mlp_block|matmul_bias_gelu|workload)' "$OUT/suite/report.md" 2>/dev/null || tail -8 "$OUT/suite.log"
tail -6 "$OUT/block.log"
