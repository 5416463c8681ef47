#!/usr/bin/env bash
# degenerate_gemm.sh TXC ROOT - products of a tiny contraction or of one column planned as what
# they are (passes/simplify.c), end to end:
#  - [simplify.small_k]: a bound K <= 8 (K = 7 with bias + sigmoid in bf16, prime N; K = 3 and
#    K = 1 of gemm_tiny_k; K = 2 with both batch dims broadcast) is one pointwise kernel: --explain
#    names the rule with K, every kernel line is a pointwise rule, no matmul rule is planned;
#  - [simplify.matvec]: N = 1 (gemm_tiny_k's value head, a batched bf16 one with an unbound K) is a
#    row reduction;
#  - K = 9 stays a product ([matmul.simt.small_k]), and so do the two products of an attention
#    with head dim 7 and value dim 1 (the fuser's attention kernel);
#  - ptxas -arch=sm_90a accepts every kernel;
#  - `txc run --device=cpu` (the rewritten graph, host JIT) agrees with `--device=ref` (the
#    interpreter on the program as written, double-precision products) at ragged sizes.
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
H=$ROOT/bench/heldout
cat >"$W/bcast.tx" <<'EOF'
fn bcast(x: f16[B, 1, M, 2], w: f16[H, 2, N]) -> f16[B, H, M, N] {
  return relu(x @ w)
}
EOF
cat >"$W/mv.tx" <<'EOF'
fn mv(h: bf16[B, M, K], w: bf16[B, K, 1], b: bf16[1]) -> bf16[B, M, 1] {
  return h @ w + b
}
EOF
cat >"$W/k9.tx" <<'EOF'
fn k9(x: bf16[M, 9], w: bf16[9, N]) -> bf16[M, N] {
  return x @ w
}
EOF
cat >"$W/attn.tx" <<'EOF'
fn attn(q: f32[S, 7], k: f32[S, 7], v: f32[S, 1]) -> f32[S, 1] {
  return softmax(q @ transpose(k, 0, 1) * 0.5) @ v
}
EOF
# program|GPU-plan sizes|CPU sizes (;-separated runs)|rules --explain must name (&)|kernel rules
# (each kernel line's rule starts with one of these; ,)|matmul: a product stays (1/0)
cases=(
  "$H/prime_gemm_k7.tx|M=8191 N=4099|M=13 N=11;M=1 N=1|simplify.small_k] %3 = %0 [8191, 7] @ %1 [7, 4099]: K = 7|pointwise|0"
  "$H/gemm_tiny_k.tx|N=65536|N=7;N=1|simplify.small_k&simplify.matvec] %12 = %5 [65536, 512] @ %6 [512, 1]: N = 1|pointwise,reduction|0"
  "$W/bcast.tx|B=2 H=3 M=1000 N=333|B=2 H=3 M=5 N=7;B=1 H=1 M=1 N=1|simplify.small_k] %2 = %0 [2, 1, 1000, 2] @ %1 [3, 2, 333]: K = 2|pointwise|0"
  "$W/mv.tx|B=4 M=4097 K=300|B=3 M=5 K=37;B=1 M=1 K=1|simplify.matvec|reduction|0"
  "$W/k9.tx|M=300 N=257|M=13 N=11|matmul.simt.small_k] K = 9|matmul|1"
  "$W/attn.tx|S=300|S=9;S=1|attention|attention|1"
)
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog gsizes csizes names kinds keep <<<"$c"
  label="$(basename "$prog" .tx)"
  defs=""
  for d in $gsizes; do defs="$defs -D $d"; done
  # shellcheck disable=SC2086
  if ! "$TXC" "$prog" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! $PY - "$W/explain" "$label" "$names" "$kinds" "$keep" <<'PYEOF'; then
import re, sys
ex, label, names, kinds, keep = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
bad = []
for n in names.split("&"):
    if "[" + n not in ex:
        bad.append("--explain lacks [%s" % n)
rules = re.findall(r"^k\d+: \[([a-z0-9_.]+)\]", ex, re.M)
if not rules:
    bad.append("no kernel rule in --explain")
for r in rules:
    if not any(r.startswith(k) for k in kinds.split(",")):
        bad.append("kernel rule [%s], want %s" % (r, kinds))
if keep == "0" and re.search(r"\[(matmul|roofline)", ex):
    bad.append("a product is still planned: %s" % re.search(r"^.*\[(matmul|roofline).*$", ex, re.M).group(0)[:160])
if keep == "1" and re.search(r"\[simplify\.(small_k|matvec)\]", ex):
    bad.append("rewritten where the product must stay")
for b in bad:
    print("FAIL %s: %s" % (label, b))
sys.exit(1 if bad else 0)
PYEOF
    fail=1
  fi
  ptxas_ok "$label" || fail=1
  IFS=';' read -r -a runs <<<"$csizes"
  for s in "${runs[@]}"; do
    defs=""
    for d in $s; do defs="$defs -D $d"; done
    # shellcheck disable=SC2086
    cpu_vs_ref "$label $s" 5 "$prog" $defs || fail=1
  done
done
[ $fail = 0 ] && echo "ok: ${#cases[@]} degenerate products planned by their rules, assembled and run"
exit $fail
