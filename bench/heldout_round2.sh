#!/usr/bin/env bash
# bench/heldout_round2.sh - the GPU checks of the held-out round 2 left after its first run: where
# f16_overflow's GPU outputs differ from the references (bench/heldout/gpu_diff.py), then the rows
# of bench/heldout_check.sh that run was cut before timing. From the repository root, dist/ carried.
set -u
cd "$(dirname "$0")/.."
export OUT=${OUT:-heldout-out}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
timeout 12 "$PY" bench/heldout/gpu_diff.py dist/bin/txc f16_overflow > "$OUT/gpu_diff.txt" 2>&1
echo "== gpu_diff rc=$?"; tail -30 "$OUT/gpu_diff.txt"
bash bench/heldout_check.sh --budget 44 --workers 8 --only temperature_softmax,llama_rmsnorm_hf,bert_embed_ln,vit_cls_pos,group_norm,instance_norm,batchnorm_relu,softmax_one_row,center_keepdim_false,multi_axis_reduce,losses_regression,rope_interleaved,adamw_step,lion_step,sgd_momentum,activations_zoo,final_softcap,whisper_logmel,nan_to_num,f16_overflow,int_bool_ops,broadcast_5d
