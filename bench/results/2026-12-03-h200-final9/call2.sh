#!/usr/bin/env bash
# session 11 call 2: f32 attention on the GPU, round-5 and fusion held-out rows
set -u
R=$OUT; export OUT=/tmp/s10
T0=$(date +%s)
bash bench/session10_gpu.sh f32attn
ROUND5=rmsnorm_bwd,ce_zloss_128k,rope_rotate_half,attn_alibi_keypad,attn_gqa_64_8,decode_3rows,cross_attn_keypad,augmix_jsd,layernorm_noaffine,groupwise_quant,bias_res_ln_f16,var_mean_02_4d,bmm_bcast_heads,gemm_tiny_k,t5_rel_bucket,mulaw_codec,amp_unscale,nan_masked_stats
L=$(( 450 - ($(date +%s) - T0) ))
OUT=/tmp/s10/round5 timeout $((L*55/100)) bash bench/heldout_check.sh --budget $((L*55/100 - 8)) --only "$ROUND5" > /tmp/s10/round5.log 2>&1
grep -E "^\|" /tmp/s10/round5.log
L=$(( 455 - ($(date +%s) - T0) ))
OUT=/tmp/s10/fuse timeout $L bash bench/heldout_check.sh --budget $((L - 8)) --only f16_overflow,vit_cls_pos,bert_embed_ln,cosine_sim_bcast,dual_softmax,clip_loss,swinv2_cosine_attn > /tmp/s10/fuse.log 2>&1
grep -E "^\|" /tmp/s10/fuse.log
tar czf $R/s10b.tgz -C /tmp s10 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
