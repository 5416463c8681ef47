#!/usr/bin/env bash
# bench/coal_check.sh - the GPU checks and the A/B timing of [matmul.wgmma.epi]'s staged
# coalesced stores (wgmma outputs whose rows are not a multiple of 16 bytes: the slots copied
# out by the warpgroup's threads instead of the register stores), from the repository root on the
# GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/coal_check.sh
#
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
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-coal-out}
mkdir -p "$OUT"
LOG=$OUT/coal.log
SUM=$OUT/coal.txt
: >"$LOG"
: >"$SUM"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
say() { echo "$*" | tee -a "$SUM"; }
[ -x "$TXC" ] || { say "FAIL: no txc at $TXC (carry dist/)"; exit 1; }
H=bench/heldout
cat >"$W/gelu_f32.tx" <<'EOF'
fn f(x: bf16[M, K], w: bf16[K, N], b: bf16[N]) -> f32[M, N] {
  return f32(gelu_tanh(x @ w + b))
}
EOF
cat >"$W/two.tx" <<'EOF'
fn f(a: bf16[K, M], b: bf16[K, N]) -> (bf16[M, N], f32[M, N]) {
  y = transpose(a, 0, 1) @ b
  return y, f32(silu(y))
}
EOF
nv=0
nfail=0
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
  plan=$(python3 -c 'import json,sys; print("; ".join(k.get("template") or k["name"] for k in json.load(open(sys.argv[1]))["kernels"]))' "$W/k.ptx.json" 2>/dev/null)
  if env "${ev[@]}" timeout 60 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 50 "${d[@]}" >"$OUT/o" 2>&1 &&
    grep -qE ': verified, ' "$OUT/o" && ! grep -q 'FAIL' "$OUT/o"; then
    wg=$(grep -E '^  [A-Za-z0-9_]+_k[0-9]+ ' "$OUT/o" | tail -1 | tr -s ' ')
    graph=$(grep -m1 -E '^  graph ' "$OUT/o" | tr -s ' ' | cut -c8-)
    say "ok   $(basename "$f" .tx) $* ${envs/#-/default} | $plan | wgmma:${wg} | graph:$graph"
  else
    nfail=$((nfail + 1))
    say "FAIL $(basename "$f" .tx) $* ${envs/#-/default} | $plan: $(grep -m2 -E 'FAIL|error' "$OUT/o" | tr '\n' ' ' | head -c 300)"
  fi
  { echo "== $envs $f $*"; cat "$OUT/o"; } >>"$LOG"
}
for e in - TX_WG_EPI_COAL=0; do
  bench "$e" $H/prime_bmm_f16.tx B=7 M=509 K=257 N=1021
  bench "$e" $H/ragged_gemm.tx M=3001 K=2005 N=1999
  bench "$e" "$W/gelu_f32.tx" M=3001 K=2005 N=1999
  bench "$e" tests/gemm/swiglu.tx M=2000 N=3001 K=1024
done
bench - $H/prime_bmm_f16.tx B=7 M=509 K=257 N=1024 # 16-byte rows: TMA's stores (control)
bench TX_WG_MAX_STAGES=4 $H/prime_bmm_f16.tx B=3 M=131 K=257 N=203
bench "TX_WG_MAX_STAGES=4 TX_WG_TILE=128x256" $H/prime_bmm_f16.tx B=3 M=131 K=257 N=517
bench - $H/prime_bmm_f16.tx B=3 M=300 K=257 N=517
bench TX_WG_MAX_STAGES=4 $H/ragged_gemm.tx M=300 K=200 N=333
bench TX_WG_MAX_STAGES=4 "$W/gelu_f32.tx" M=200 K=264 N=517
bench TX_WG_MAX_STAGES=4 tests/gemm/swiglu.tx M=200 N=301 K=128
bench - tests/gemm/swiglu.tx M=777 N=3001 K=1000 # 2-CTA multicast pairs, a phantom tile
bench TX_WG_MAX_STAGES=4 "$W/two.tx" M=130 N=199 K=72
bench - tests/gemm/linres.tx M=256 N=1001 K=256 # 64x32 tiles: 64-byte slot rows
say "verify: $((nv - nfail)) of $nv runs verified on the GPU"

CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$CS" ]; then
  for tool in memcheck racecheck; do
    for c in "$H/prime_bmm_f16.tx -D B=3 -D M=131 -D K=257 -D N=517" "$H/ragged_gemm.tx -D M=300 -D K=200 -D N=333"; do
      # shellcheck disable=SC2086
      TX_WG_MAX_STAGES=4 timeout 120 "$CS" --tool $tool --error-exitcode 9 "$TXC" run $c --device=gpu \
        --random-inputs=3 --output-dir "$W/so" >"$W/cs" 2>&1
      rc=$?
      cat "$W/cs" >>"$LOG"
      if [ $rc = 0 ]; then say "ok   $tool $c: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/cs" | tail -1)"
      else nfail=$((nfail + 1)); say "FAIL $tool $c (rc $rc): $(grep -m2 -E 'ERROR|error|hazard' "$W/cs" | tr '\n' ' ' | head -c 300)"; fi
    done
  done
else
  say "skip sanitizer: no compute-sanitizer"
fi

OUT=$OUT/heldout timeout 80 bash bench/heldout_check.sh --budget 70 \
  --only prime_bmm_f16,ragged_gemm >"$OUT/heldout.txt" 2>&1
echo "heldout_check rc $?" >>"$LOG"
cat "$OUT/heldout.txt" >>"$LOG"
tail -6 "$OUT/heldout.txt" | tee -a "$SUM"
[ $nfail = 0 ]
