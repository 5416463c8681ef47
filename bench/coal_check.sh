#!/usr/bin/env bash
# bench/coal_check.sh - the GPU checks and the A/B timing of [matmul.wgmma.epi]'s staged
# coalesced stores (wgmma outputs whose rows are not a multiple of 16 bytes: the slots copied
# out by the warpgroup's threads instead of the register stores), from the repository root on the
# GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/coal_check.sh
#
# The cases are tests/coal/cases.txt's (shared with tests/scripts/coal_epi.sh), in its order:
# 1. A/B: `txc bench --device=gpu --random-inputs=1` (verified against the reference, timed) of
#    the held-out prime_bmm_f16 (B=7 M=509 K=257 N=1021) and ragged_gemm (M=3001 K=2005 N=1999),
#    an f32 gelu output and SwiGLU at odd N, each with the default plan (` cs`) and with
#    TX_WG_EPI_COAL=0 (the register stores of before): the wgmma kernel's us and the model's
#    prediction, the graph's us;
# 2. ragged verifications (slots forced at small shapes by TX_WG_MAX_STAGES=4, a 128x256 tile by
#    TX_WG_TILE, multicast pairs, two outputs, 64x32 tiles), then compute-sanitizer memcheck and
#    racecheck of a batched and a looped kernel;
# 3. heldout: bench/heldout_check.sh --only prime_bmm_f16,ragged_gemm (torch.compile in the same
#    run).
# About 150 s. Prints one line per case; writes $OUT/coal.txt (the summary) and $OUT/coal.log
# (everything). Exit status 1 when a verification failed.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_start coal
H=bench/heldout
# bench ENV FILE DIMS...: one verified, timed run; prints the plan, the wgmma kernel's line
bench() {
  local envs=$1 f=$2
  shift 2
  local d=() ev=()
  for kv in "$@"; do d+=(-D "$kv"); done
  [ "$envs" != "-" ] && read -r -a ev <<<"$envs"
  nv=$((nv + 1))
  env "${ev[@]}" "$TXC" "$f" "${d[@]}" --target=sm_90a -o "$W/k.ptx" >/dev/null 2>&1
  local plan wg graph
  plan=$(plan_of "$W/k.ptx.json")
  if env "${ev[@]}" timeout 60 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 50 "${d[@]}" >"$OUT/o" 2>&1 &&
    verified "$OUT/o"; then
    wg=$(grep -E '^  [A-Za-z0-9_]+_k[0-9]+ ' "$OUT/o" | tail -1 | tr -s ' ')
    graph=$(grep -m1 -E '^  graph ' "$OUT/o" | tr -s ' ' | cut -c8-)
    say "ok   $(basename "$f" .tx) $* ${envs/#-/default} | $plan | wgmma:${wg} | graph:$graph"
  else
    nfail=$((nfail + 1))
    say "FAIL $(basename "$f" .tx) $* ${envs/#-/default} | $plan: $(why "$OUT/o")"
  fi
  { echo "== $envs $f $*"; cat "$OUT/o"; } >>"$LOG"
}
mapfile -t cases < <(grep -v '^#' tests/coal/cases.txt)
for c in "${cases[@]}"; do
  IFS='|' read -r _ envs prog sizes _ <<<"$c"
  # shellcheck disable=SC2086
  bench "$envs" "$prog" $sizes
done
say "verify: $((nv - nfail)) of $nv runs verified on the GPU"

if [ -x "$CS" ]; then
  for tool in memcheck racecheck; do
    for c in "$H/prime_bmm_f16.tx -D B=3 -D M=131 -D K=257 -D N=517" "$H/ragged_gemm.tx -D M=300 -D K=200 -D N=333"; do
      # shellcheck disable=SC2086
      TX_WG_MAX_STAGES=4 sanitize $tool 120 $c
    done
  done
else
  say "skip sanitizer: no compute-sanitizer"
fi

heldout_tail 80 70 prime_bmm_f16,ragged_gemm 6
[ $nfail = 0 ]
