#!/usr/bin/env bash
# session 12 call 2 (as run; dist/ carried): the merged work, A/B with each knob, sanitizers, held-out rows
# against torch.compile. Logs: ab.log, sanitizers.log, heldout.log.
set -u
R=$OUT; W=/tmp/c2; mkdir -p $W
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1 TX_PYTHON=$(command -v python3)
cp -r dist/bench dist/examples . 2>/dev/null; mkdir -p tests && cp -r dist/oracle tests/ 2>/dev/null
T0=$(date +%s); left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
B() { dist/bin/txc bench "$@" --device=gpu --random-inputs=1 2>&1 | grep -E "verified|FAIL|error|mismatch|^  graph" | head -3; }
ab() { # KNOB PROGRAM DEFS...
  local k=$1; shift
  for v in 1 0; do echo "-- $k=$v $*"; env $k=$v bash -c 'dist/bin/txc bench "$@" --device=gpu --random-inputs=1 2>&1 | grep -E "verified|FAIL|error|mismatch|^  graph" | head -3' _ "$@"; done
}
{
ab TX_SPLIT_COLVAR bench/heldout/var_mean_02_4d.tx -D B=32 -D C=8 -D T=1000 -D F=80
ab TX_SPLIT_COLVAR tests/split/colrun.tx -D B=4 -D T=1024 -D H=8 -D C=64
ab TX_SPLIT_COLVAR tests/split/colvar.tx -D N=32768 -D C=4096
ab TX_RED_PICK bench/heldout/t5_rel_bucket.tx -D B=8 -D H=12 -D Q=512 -D K=512
ab TX_RED_PICK bench/heldout/token_logprobs.tx -D B=4 -D T=1023 -D V=151936
ab TX_PW_ROW bench/heldout/prime_gemm_k7.tx -D M=8191 -D N=4099
B bench/heldout/cosine_sim_bcast.tx -D N=1024 -D M=1024 -D E=256
B tests/contract/pairwise_f32.tx -D N=4096 -D M=4096 -D E=256
B tests/contract/attn_bcast.tx -D B=8 -D S=2048 -D T=2048 -D D=64
B tests/contract/batched_bf16.tx -D B=4 -D H=16 -D S=1024 -D T=1024 -D D=64
B bench/heldout/layernorm_bwd.tx -D M=16384 -D D=1600
B bench/heldout/mamba2_gated_norm.tx -D M=8192
} > $W/ab.log 2>&1
{
for p in "bench/heldout/t5_rel_bucket.tx -D B=1 -D H=3 -D Q=33 -D K=45" "bench/heldout/prime_gemm_k7.tx -D M=37 -D N=41" \
         "bench/heldout/var_mean_02_4d.tx -D B=3 -D C=2 -D T=1001 -D F=12" "bench/heldout/layernorm_bwd.tx -D M=300 -D D=1600" \
         "bench/heldout/token_logprobs.tx -D B=1 -D T=3 -D V=1001" "tests/contract/attn_bcast.tx -D B=2 -D S=70 -D T=65 -D D=64"; do
  echo "-- memcheck $p"; compute-sanitizer --tool memcheck --print-limit 3 dist/bin/txc run $p --device=gpu --random-inputs=1 2>&1 | grep -E "ERROR SUMMARY|Invalid|rror:" | head -2
done
TX_PW_ROW=1 compute-sanitizer --tool racecheck --print-limit 3 dist/bin/txc run bench/heldout/prime_gemm_k7.tx -D M=37 -D N=41 --device=gpu --random-inputs=1 2>&1 | grep -E "ERROR SUMMARY|RACE" | head -2
compute-sanitizer --tool racecheck --print-limit 3 dist/bin/txc run bench/heldout/var_mean_02_4d.tx -D B=3 -D C=2 -D T=1001 -D F=12 --device=gpu --random-inputs=1 2>&1 | grep -E "ERROR SUMMARY|RACE" | head -2
timeout 60 bash tests/scripts/split_stats.sh dist/bin/txc . gpu 2>&1 | tail -4
} > $W/san.log 2>&1
L=$(left); L=$(( L - 15 ))
OUT=$W/heldout timeout -k 5 $L bash bench/heldout_check.sh --budget $(( L - 10 )) --only lora_linear,decode_linear_res,int8_dequant_gemm,layernorm_bwd,softmax_bwd,gelu_bwd,swiglu_bwd,ce_bwd,token_logprobs,grpo_loss,logsumexp_mid,vae_loss,attn_sd_cross,attn_alibi_gqa,mamba2_gated_norm,chamfer_loss,qwen2_mlp,var_mean_02_4d,t5_rel_bucket,prime_gemm_k7,cosine_sim_bcast,rope_rotate_half > $W/heldout.log 2>&1
tar czf $R/c2.tgz -C /tmp c2 2>/dev/null
