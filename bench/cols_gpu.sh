#!/usr/bin/env bash
# bench/cols_gpu.sh - the GPU checks of the split stage (passes/split.c: [reduction.split_axes],
# [reduction.split_prologue], [reduction.split_var], [reduction.split_column_var]), from the
# repository root on the GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/cols_gpu.sh
#
# 1. verify: tests/split/*.tx through `txc bench --device=gpu --random-inputs=1` (verified against
#    the host reference of the unsplit graph) at ragged sizes that take each rule (and one that
#    must not split);
# 2. heldout: bench/heldout_check.sh --only the column / middle / strided statistics programs
#    (tx against torch.compile in the same run; seq_batchnorm 0.40x and batch_stats 0.64x before);
# 3. sweep: bench/sweep.sh --only the column and middle-axis reduction rows (unchanged plans: no
#    regression expected).
# About 115 s in all; one line per case. Writes $OUT/cols.txt (the summary, also printed last),
# $OUT/cols.log and the sub-scripts' files under $OUT.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_start cols

# ---- 1. verify at ragged sizes ------------------------------------------------------------------
verify() { # PROGRAM DIMS...
  local f=tests/split/$1.tx
  shift
  local d=() rules
  for kv in "$@"; do d+=(-D "$kv"); done
  nv=$((nv + 1))
  rules=$("$TXC" "$f" "${d[@]}" --target=sm_90a --explain 2>&1 | grep -o '\[reduction\.split_[a-z_]*\]' |
    sort | uniq -c | tr -s ' \n' ' ')
  if timeout 10 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 3 "${d[@]}" >"$OUT/v.txt" 2>&1 &&
    verified "$OUT/v.txt"; then
    say "ok   verify $(basename "$f") $* ${rules:-(no split)}"
  else
    nfail=$((nfail + 1))
    say "FAIL verify $(basename "$f") $* ${rules}: $(why "$OUT/v.txt")"
  fi
  cat "$OUT/v.txt" >>"$LOG"
}
verify seqbn B=7 C=33 L=1001
verify seqbn B=2 C=3 L=31
verify outer A=5 B=17 C=1000
verify prologue A=3 B=7 C=5 D=333
verify colvar N=30000 C=129
verify midvar B=3 T=4096 C=45
say "verify: $((nv - nfail)) of $nv split programs verified on the GPU ($(elapsed) s)"

# ---- 2. held-out statistics programs against torch.compile -------------------------------------
BUDGET=$(left 68)
OUT=$OUT/heldout timeout -k 2 $((BUDGET + 4)) bash bench/heldout_check.sh --budget "$BUDGET" \
  --only seq_batchnorm,batch_stats,multi_axis_reduce,var_mid_axis,group_norm,masked_mean_pool,instance_norm,group_norm_odd \
  >"$OUT/heldout.txt" 2>&1
echo "heldout rc $?" >>"$LOG"
grep -E '^\| (seq_batchnorm|batch_stats|multi_axis_reduce|var_mid_axis|group_norm|masked_mean_pool|instance_norm|group_norm_odd|geomean)' \
  "$OUT/heldout.txt" | tee -a "$SUM"

# ---- 3. the sweep's column / middle-axis rows ---------------------------------------------------
sweep_rows "$(left 113)" colsum,colmax,colmean,midsum,midmax,midmean
summary
