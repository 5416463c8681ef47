#!/usr/bin/env bash
# bench/session10_gpu.sh - the first GPU checks of what the tenth session landed unmeasured, from
# the repository root on the GPU machine with dist/ carried (bash tools/make-dist.sh), in order of
# risk (GPU-only code paths first), each step under its own cap:
#
#   bash bench/session10_gpu.sh [STEP...]     # steps: f32attn gemmop split fuse round5 ctime
#
# f32attn: [attention.simt] (the f32 attention kernel) verified on the GPU at the ragged sizes of
#          tests/scripts/attention_f32.sh, and swinv2_cosine_attn timed;
# gemmop:  bench/gemmop_gpu.sh (staged batched and concat operands, memcheck, held-out rows);
# split:   bench/split_stats_gpu.sh (pilot-shifted split statistics on the GPU, timings);
# fuse:    held-out rows of [reduction.side_outputs], [reduction.batch], the concat vector loads
#          and [reduction.stats_recompute], against torch.compile;
# round5:  the 18 round-5 held-out programs (their PyTorch expressions have never run);
# ctime:   bench/ctime_gpu.sh's base side (the paired converts keep the wgmma kernels' times).
# Logs in $OUT (default ./session10-out).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
export TXC=${TXC:-dist/bin/txc}
# the GPU machine's NumPy is on the PATH's python3, not /usr/bin/python3 (the scripts' default)
export TX_PYTHON=${TX_PYTHON:-$(command -v python3)}
OUT=${OUT:-session10-out}
mkdir -p "$OUT"
[ -x "$TXC" ] || { echo "session10_gpu: no txc at $TXC (bash tools/make-dist.sh, carry dist/)" >&2; exit 2; }
ROUND5=rmsnorm_bwd,ce_zloss_128k,rope_rotate_half,attn_alibi_keypad,attn_gqa_64_8,decode_3rows,cross_attn_keypad,augmix_jsd,layernorm_noaffine,groupwise_quant,bias_res_ln_f16,var_mean_02_4d,bmm_bcast_heads,gemm_tiny_k,t5_rel_bucket,mulaw_codec,amp_unscale,nan_masked_stats
step() { # NAME CAP_S COMMAND...
  local n=$1 cap=$2; shift 2
  echo "== $n (cap $cap s)"
  OUT=$OUT/$n timeout -k 5 "$cap" "$@" >"$OUT/$n.log" 2>&1
  echo "   rc $? (log $OUT/$n.log)"; tail -6 "$OUT/$n.log" | sed 's/^/   /'
}
for s in "${@:-f32attn gemmop split fuse round5 ctime}"; do
  for n in $s; do
    case $n in
      f32attn) step f32attn 120 bash -c "TX_DIFF_DEVICE=gpu bash tests/scripts/attention_f32.sh $TXC . && $TXC bench bench/heldout/swinv2_cosine_attn.tx -D B=1568 -D H=3 --device=gpu --random-inputs=1" ;;
      gemmop) step gemmop 180 bash bench/gemmop_gpu.sh ;;
      split) step split 120 bash bench/split_stats_gpu.sh ;;
      fuse) step fuse 240 bash bench/heldout_check.sh --budget 220 --only f16_overflow,vit_cls_pos,bert_embed_ln,cosine_sim_bcast,dual_softmax,clip_loss,swinv2_cosine_attn ;;
      round5) step round5 300 bash bench/heldout_check.sh --budget 280 --only "$ROUND5" ;;
      ctime) step ctime 120 env SIDES=base TIMED="llama mbg mlp" bash bench/ctime_gpu.sh ;;
      *) echo "session10_gpu: unknown step $n" >&2; exit 2 ;;
    esac
  done
done
