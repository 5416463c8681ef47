#!/usr/bin/env bash
# final12 call B (after the wgmma shared-memory term): the sweep's GEMM rows, the blocks, held-out
# round 8, then round 7's targets
export PATH="$PATH:/usr/local/cuda/bin" TX_PYTHON=$(command -v python3)
echo "== commit $(cat dist/COMMIT)"; date -u
echo "== sweep matmul rows"
OUT=$OUT/sw timeout 100 bash bench/sweep.sh --only matmul --deadline 80 --torch-reserve 40 --iters 5 2>&1 | grep -E '^\||geomean|worst|below' | tail -24
echo "== blocks"; date -u
OUT=$OUT/bl BLOCK_DEADLINE=75 BLOCK_TIMEOUT=85 timeout 95 bash bench/block_check.sh --blocks-only 2>&1 | tail -12
echo "== heldout round 8"; date -u
OUT=$OUT/r8 timeout 195 bash bench/heldout_check.sh --budget 180 --round 8 2>&1 | grep -E '^\|' | tail -30
echo "== heldout round 7 targets"; date -u
OUT=$OUT/r7 timeout 140 bash bench/heldout_check.sh --budget 128 --only pythia_parallel_block,vit_b16_block,phi2_block,llama_decode_step,var_mean_02_4d,layernorm_bwd,bert_layer_postln,rope_rotate_half,whisper_enc_block,gemma2_block 2>&1 | grep -E '^\|' | tail -16
date -u
