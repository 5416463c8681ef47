#!/usr/bin/env bash
# call3 (session 13): merged main (upcast, r7fix, gemv_rows off) on the H200: held-out checks, suite, blocks, sweep
cd "$(dirname "$0")/.."
export TX_PYTHON=$(command -v python3) PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
T=dist/bin/txc
mkdir -p $OUT/h $OUT/x
echo "== bert ragged"
for s in 1 2; do timeout 60 $T bench bench/heldout/bert_layer_postln.tx -D B=3 -D S=67 --device=gpu --random-inputs=$s --iters 1 2>&1 | grep -iE "verif|differ|error|max|fail" | head -6; done
echo "== phi2 A/B"
timeout 60 $T bench bench/heldout/phi2_block.tx -D B=2 -D S=2048 --device=gpu --random-inputs=1 2>&1 | grep -E "total|verif|k[0-9]+ " | head -14
TX_EXACT_UPCAST=0 timeout 60 $T bench bench/heldout/phi2_block.tx -D B=2 -D S=2048 --device=gpu --random-inputs=1 2>&1 | grep -E "total|verif" | head -4
timeout 40 $T bench tests/upcast/gemm_bf16.tx -D M=4096 -D N=4096 -D K=4096 --device=gpu --random-inputs=1 2>&1 | grep -E "total|verif|TFLOP" | head -4
echo "== heldout"
OUT=$OUT/h timeout 130 bash bench/heldout_check.sh --budget 120 --workers 8 --only phi2_block,bert_layer_postln,decode_linear_res,sample_probs_128k,bert_mlm_head,llama_decode_step,gemma2_block,colsum_bf16,layernorm_bwd > $OUT/h/run.log 2>&1; grep -E "^\|" $OUT/h/run.log | tail -14
grep -iE "bert_layer_postln.*(differ|fail|NO)" -A3 $OUT/h/*.txt $OUT/h/*log* 2>/dev/null | head -12
echo "== blocks"
BLOCK_TIMEOUT=85 timeout 95 bash bench/block_check.sh --blocks-only > $OUT/x/block.log 2>&1; tail -10 $OUT/x/block.log
