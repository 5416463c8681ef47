#!/usr/bin/env bash
# bench/gemmop_gpu.sh - the GPU checks of GEMM operands that are not plain TMA-able tensors, from
# the repository root on the GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/gemmop_gpu.sh
#
# 1. verify: `txc bench --device=gpu --random-inputs=1` (verified against the reference, timed)
#    of [matmul.wgmma.stage] on batched operands (prime_bmm_f16 at its GPU sizes and ragged ones,
#    a 2-D A broadcast over B's batch, an A of rank 3 folded into M) and of [matmul.stage_concat]
#    (conv3x3_im2col at its GPU sizes and a ragged batch, tests/stage/im2col.tx,
#    tests/stage/concat_rows.tx with both operands staged), each with the rule's count in
#    --explain and the plan's kernels;
# 2. compute-sanitizer memcheck of a staged batched product and a staged concat (ragged sizes);
# 3. heldout: bench/heldout_check.sh --only prime_bmm_f16, conv3x3_im2col and the 2-D staged
#    controls ragged_gemm, prime_gemm_k7 (verified and timed, torch.compile in the same run).
# About 150 s in all. Prints one line per case; writes $OUT/gemmop.txt (the summary) and
# $OUT/gemmop.log (everything). Exit status 1 when a verification failed.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_start gemmop
cat >"$W/bmm2d.tx" <<'EOF'
fn f(a: f16[M, K], b: f16[B, K, N]) -> f32[B, M, N] {
  return f32(a @ b)
}
EOF
cat >"$W/lead.tx" <<'EOF'
fn f(x: bf16[B, S, K], w: bf16[K, N]) -> bf16[B, S, N] {
  return x @ w
}
EOF
verify() { # FILE RULE DIMS...
  local f=$1 rule=$2
  shift 2
  local d=()
  for kv in "$@"; do d+=(-D "$kv"); done
  nv=$((nv + 1))
  local ex plan
  ex=$("$TXC" "$f" "${d[@]}" --target=sm_90a --explain -o "$W/k.ptx" 2>&1 | grep "\[$rule\]" | head -1 | grep -oE '(staged, wgmma|kept on mma.sync, in place|: staged|: read in place)$')
  plan=$(plan_of "$W/k.ptx.json")
  if timeout 20 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 "${d[@]}" >"$OUT/o" 2>&1 &&
    verified "$OUT/o"; then
    say "ok   verify $(basename "$f" .tx) $* [$rule]${ex:+ $ex} | $plan | graph:$(grep -m1 -E '^  graph ' "$OUT/o" | tr -s ' ' | cut -c8-)"
  else
    nfail=$((nfail + 1))
    say "FAIL verify $(basename "$f" .tx) $* [$rule] | $plan: $(why "$OUT/o")"
  fi
  { echo "== $f $*"; cat "$OUT/o"; } >>"$LOG"
}
H=bench/heldout
verify $H/prime_bmm_f16.tx matmul.wgmma.stage B=7 M=509 K=257 N=1021
verify $H/prime_bmm_f16.tx matmul.wgmma.stage B=3 M=300 K=257 N=517
verify $H/prime_bmm_f16.tx matmul.wgmma.stage B=3 M=131 K=257 N=203
verify $H/prime_bmm_f16.tx matmul.wgmma.stage B=5 M=200 K=1001 N=136
verify "$W/bmm2d.tx" matmul.wgmma.stage B=6 M=300 K=1001 N=256
verify "$W/lead.tx" matmul.wgmma.stage B=2 S=300 K=264 N=999
verify $H/conv3x3_im2col.tx matmul.stage_concat B=64 O=128
verify $H/conv3x3_im2col.tx matmul.stage_concat B=3 O=40
verify tests/stage/im2col.tx matmul.stage_concat B=16 C=32 K=288 O=40
verify tests/stage/concat_rows.tx matmul.stage_concat B=40 K=136
say "verify: $((nv - nfail)) of $nv runs verified on the GPU"

if [ -x "$CS" ]; then
  for c in "$H/prime_bmm_f16.tx -D B=3 -D M=300 -D K=257 -D N=517" "$H/conv3x3_im2col.tx -D B=3 -D O=40"; do
    # shellcheck disable=SC2086
    sanitize memcheck 60 $c
  done
else
  say "skip memcheck: no compute-sanitizer"
fi

heldout_tail 80 70 prime_bmm_f16,conv3x3_im2col,ragged_gemm,prime_gemm_k7 8
[ $nfail = 0 ]
