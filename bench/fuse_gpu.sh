#!/usr/bin/env bash
# bench/fuse_gpu.sh - the GPU checks of the fuse branch's planning rules, from the repository root
# on the GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/fuse_gpu.sh
#
# 1. verify: `txc bench --device=gpu --random-inputs=1` (verified against the reference, timed) of
#    each rule's kernels at sizes the held-out sizes do not reach:
#    [pointwise.recompute] mamba_discretize at N=4 (softplus dt recomputed per element too, one
#    kernel), [attention.epilogue_input] gated_attn_out as a decode (the mma.sync key split's
#    epilogue computes sigmoid(g)) and at a ragged S (FA3), [simplify.slice_of_product] with a bias
#    geglu_chunk at a ragged M, [simplify.iota_extreme] var_mid_axis at a ragged T;
# 2. heldout: bench/heldout_check.sh --only the programs the rules change (mamba_discretize,
#    var_mid_axis, geglu_chunk, gated_attn_out, row_variance; swiglu_packed as the unbiased
#    control): each verified and timed at its GPU sizes, torch.compile timed in the same run.
# About 100 s in all (at most 6 x 10 s + 62 s). Prints one line per case; writes $OUT/fuse.txt (the summary) and
# $OUT/fuse.log (everything). Exit status 1 when a verification failed.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_start fuse
verify() { # PROGRAM RULE DIMS...
  local prog=$1 rule=$2
  shift 2
  local d=()
  for kv in "$@"; do d+=(-D "$kv"); done
  local f=bench/heldout/$prog.tx
  nv=$((nv + 1))
  local ex
  ex=$("$TXC" "$f" "${d[@]}" --target=sm_90a --explain 2>&1 | grep -c "\[$rule\]")
  if timeout 10 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 "${d[@]}" >"$OUT/o" 2>&1 &&
    verified "$OUT/o"; then
    local nk
    nk=$(sed -n '/^kernels (/,/^  graph /p' "$OUT/o" | grep -vcE '^kernels|^  kernel |^  graph ')
    say "ok   verify $prog $* [$rule] x$ex: $nk kernels, graph (us GB/s %copy TFLOP/s pred err):$(grep -m1 -E '^  graph ' "$OUT/o" | tr -s ' ' | cut -c8-)"
  else
    nfail=$((nfail + 1))
    say "FAIL verify $prog $* [$rule] x$ex: $(why "$OUT/o")"
  fi
  { echo "== $prog $*"; cat "$OUT/o"; } >>"$LOG"
}
verify mamba_discretize pointwise.recompute B=2 L=2048 H=32 N=4
verify mamba_discretize pointwise.recompute B=2 L=2048 H=32 N=16
verify gated_attn_out attention.epilogue_input B=2 H=4 S=16
verify gated_attn_out attention.epilogue_input B=1 H=2 S=333
verify geglu_chunk simplify.slice_of_product M=203 D=64
verify var_mid_axis simplify.iota_extreme B=5 T=999 C=77
say "verify: $((nv - nfail)) of $nv runs verified on the GPU"

heldout_tail 62 55 mamba_discretize,var_mid_axis,geglu_chunk,gated_attn_out,row_variance,swiglu_packed 12
[ $nfail = 0 ]
