#!/usr/bin/env bash
# leading_dims.sh TXC ROOT - matrix products whose LHS has leading dims, as nn.Linear users write
# them (x: [B, S, D] @ w: [D, F], a 4-D [B, H, S, D] @ [D, E], x @ transpose(w, 0, 1), a RHS
# whose leading dims are 1, epilogues of bias, activation, residual, casts, SwiGLU twins, merged
# heads [B, S, H x D] of an attention output [B, H, S, D] as A: wgmma when S is a multiple of
# 128; a transformer block on [B, S, 256]: every GEMM), and true batched products
# ([matmul.wgmma.batch]: [B, M, K] @ [B, K, N], broadcast batch dims on either side, q @ k^T per
# head, a transposed LHS, epilogues; tests/unit/test_bmm.c): for each program and shape,
#  1. `txc --target=sm_90a` plans the wgmma kernel where the leading dims fold into M (pass_wg_fold:
#     --explain names the matmul.wgmma schedule, the manifest a wgmma template whose A and output
#     tensor maps have the rows of the leading dims as "outer") or the product is batched (the
#     template says " bat", every map rank 3), and keeps mma.sync (wgmma "no") for batched
#     products too small for the fill rule, which --explain names;
#  2. ptxas -arch=sm_90a assembles the kernels without spills (skipped without ptxas);
#  3. `txc run --device=cpu` (or TX_DIFF_DEVICE=gpu on a GPU machine: the wgmma kernels
#     themselves) agrees with `--device=ref` on the same random inputs at ragged sizes.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
DEV=${TX_DIFF_DEVICE:-cpu}
cat >"$W/mlp.tx" <<'EOF'
fn f(x: bf16[B, S, D], w1: bf16[D, F], b1: bf16[F], w2: bf16[F, D], b2: bf16[D]) -> bf16[B, S, D] {
  return x + (gelu(x @ w1 + b1) @ w2 + b2)
}
EOF
cat >"$W/lint.tx" <<'EOF'
fn f(x: f16[B, S, K], w: f16[N, K], r: f16[B, S, N]) -> f32[B, S, N] {
  return f32(x @ transpose(w, 0, 1) + r)
}
EOF
cat >"$W/heads4.tx" <<'EOF'
fn f(x: bf16[B, H, S, D], w: bf16[D, E], r: bf16[S, E]) -> bf16[B, H, S, E] {
  return silu(x @ w) + r
}
EOF
cat >"$W/lead1.tx" <<'EOF'
fn f(x: bf16[B, S, K], w: bf16[1, K, N]) -> bf16[B, S, N] {
  return relu(x @ w)
}
EOF
cat >"$W/lead1t.tx" <<'EOF'
fn f(x: bf16[B, S, K], w: bf16[1, N, K]) -> bf16[B, S, N] {
  return x @ transpose(w, -1, -2)
}
EOF
cat >"$W/swiglu.tx" <<'EOF'
fn f(x: bf16[B, S, D], wg: bf16[D, F], wu: bf16[D, F]) -> bf16[B, S, F] {
  return silu(x @ wg) * (x @ wu)
}
EOF
cat >"$W/oddn.tx" <<'EOF'
fn f(x: bf16[B, S, K], w: bf16[K, N]) -> bf16[B, S, N] {
  return x @ w
}
EOF
cat >"$W/merged.tx" <<'EOF'
fn f(o: bf16[B, H, S, D], w: bf16[K, N], r: bf16[B, S, N]) -> bf16[B, S, N] {
  return r + reshape(transpose(o, 1, 2), (B, S, -1)) @ w
}
EOF
cat >"$W/block.tx" <<'EOF'
fn attend(q, k, v) {
  s = f32(q @ transpose(k, -1, -2)) * 0.125
  return bf16(softmax(s, axis=-1)) @ v
}
fn split_heads(t) {
  return transpose(reshape(t, (B, S, 4, 64)), 1, 2)
}
fn block(x: bf16[B, S, 256], wn1: bf16[256], wq: bf16[256, 256], wk: bf16[256, 256],
         wv: bf16[256, 256], wo: bf16[256, 256], wn2: bf16[256],
         w1: bf16[256, 704], w3: bf16[256, 704], w2: bf16[704, 256]) -> bf16[B, S, 256] {
  n = rmsnorm(x, wn1, eps=1e-6)
  a = attend(split_heads(n @ wq), split_heads(n @ wk), split_heads(n @ wv))
  h = x + reshape(transpose(a, 1, 2), (B, S, 256)) @ wo
  m = rmsnorm(h, wn2, eps=1e-6)
  return h + (silu(m @ w1) * (m @ w3)) @ w2
}
EOF
cat >"$W/bmm.tx" <<'EOF'
fn f(a: bf16[B, M, K], b: bf16[B, K, N]) -> bf16[B, M, N] {
  return a @ b
}
EOF
cat >"$W/bmmh.tx" <<'EOF'
fn f(a: bf16[B, 1, M, K], b: bf16[1, H, K, N]) -> bf16[B, H, M, N] {
  return a @ b
}
EOF
cat >"$W/lhs1.tx" <<'EOF'
fn f(a: bf16[1, M, K], b: bf16[B, K, N]) -> bf16[B, M, N] {
  return a @ b
}
EOF
cat >"$W/qkt.tx" <<'EOF'
fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D]) -> bf16[B, H, S, S] {
  return (q @ transpose(k, 2, 3)) * 0.125
}
EOF
cat >"$W/bmmat.tx" <<'EOF'
fn f(a: bf16[B, K, M], b: bf16[B, K, N], r: bf16[B, M, N]) -> bf16[B, M, N] {
  return transpose(a, 1, 2) @ b + r
}
EOF
cat >"$W/bmmgelu.tx" <<'EOF'
fn f(a: bf16[B, M, K], b: bf16[B, K, N], c: bf16[N]) -> bf16[B, M, N] {
  return gelu_tanh(a @ b + c)
}
EOF
cat >"$W/bmm2d.tx" <<'EOF'
fn f(a: f16[M, K], b: f16[B, K, N]) -> f32[B, M, N] {
  return f32(a @ b)
}
EOF
# file | -D sizes | wgmma kernels the plan must have (no: none; the GEMMs keep mma.sync)
cases=(
  "mlp|B=3 S=37 D=72 F=136|2"
  "mlp|B=2 S=64 D=64 F=256|2"
  "lint|B=2 S=45 K=64 N=72|1"
  "heads4|B=2 H=3 S=21 D=40 E=24|1"
  "lead1|B=3 S=50 K=48 N=40|1"
  "lead1t|B=2 S=33 K=32 N=80|1"
  "swiglu|B=2 S=70 D=64 F=96|1"
  "oddn|B=2 S=300 K=264 N=999|1"
  "oddn|B=4 S=1024 K=32 N=99|no"
  "merged|B=3 H=2 S=128 D=64 K=128 N=72|1"
  "merged|B=2 H=3 S=256 D=64 K=192 N=40|1"
  "merged|B=2 H=2 S=100 D=64 K=128 N=72|no"
  "block|B=2 S=128|4"
  "bmm|B=3 M=77 K=200 N=136|1"
  "bmm|B=3 M=33 K=40 N=24|no"
  "bmmh|B=2 H=3 M=130 K=72 N=40|1"
  "bmmh|B=2 H=3 M=17 K=24 N=16|no"
  "lhs1|B=2 M=70 K=64 N=48|1"
  "qkt|B=2 H=3 S=100 D=64|1"
  "bmmat|B=2 M=200 K=72 N=96|1"
  "bmmgelu|B=3 M=70 K=136 N=264|1"
  "bmm2d|B=5 M=33 K=64 N=48|1"
  "bmm|B=4 M=256 K=257 N=512|1"
  "bmm|B=4 M=300 K=136 N=999|1"
  "bmm2d|B=6 M=300 K=1001 N=256|1"
)
HAVE_PTXAS=0
command -v ptxas >/dev/null 2>&1 && HAVE_PTXAS=1
[ $HAVE_PTXAS = 1 ] || echo "note: ptxas not found: kernels not assembled"
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes want <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! "$TXC" "$W/$prog.tx" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! $PY - "$W/k.ptx.json" "$W/explain" "$label" "$want" <<'PYEOF'; then
import json, sys
m, text, label, want = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
wg = [k for k in m["kernels"] if k.get("template", "").startswith("wgmma")]
bat = [k for k in wg if " bat" in k["template"]]
if want == "no":
    ok = not wg and "[matmul.wgmma] (" not in text
    why = "plans %d wgmma kernels" % len(wg)
    if label.startswith(("bmm", "lhs1")):  # a batched product: --explain names the rule
        ok = ok and "[matmul.wgmma.batch]" in text
        why += ", [matmul.wgmma.batch] in --explain: %s" % ("[matmul.wgmma.batch]" in text)
    if label.startswith("oddn"):  # an odd pitch: staging priced above the in-place mma.sync
        st = "[matmul.wgmma.stage]" in text and "kept on mma.sync" in text
        ok = ok and st
        why += ", [matmul.wgmma.stage] keeps mma.sync in --explain: %s" % st
elif bat:
    # batched: every map rank 3 (box {.., .., 1}: one batch element), the plan names wgmma
    r3 = all(len(t["box"]) == 3 and t["box"][2] == 1 for k in bat for t in k["tensor_maps"])
    ok = len(wg) == int(want) and r3 and text.count("[matmul.wgmma] (") >= int(want)
    why = "%d batched wgmma kernels (want %s), rank-3 maps: %s" % (len(wg), want, r3)
else:
    # every A / output map of a product with leading dims has them as its rows ("outer")
    outer = all(any("outer" in t for t in k["tensor_maps"]) for k in wg)
    ok = len(wg) == int(want) and outer and text.count("[matmul.wgmma] (") >= int(want)
    why = "%d wgmma kernels (want %s), leading dims as outer rows: %s" % (len(wg), want, outer)
if not ok:
    print("FAIL %s: plan: %s" % (label, why))
sys.exit(0 if ok else 1)
PYEOF
    bad=1
  fi
  if [ $HAVE_PTXAS = 1 ]; then
    if ! ptxas -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" >"$W/ptxas" 2>&1; then
      echo "FAIL $label: ptxas: $(head -3 "$W/ptxas")"
      bad=1
    elif grep -v " 0 bytes spill stores" "$W/ptxas" | grep -q "spill stores"; then
      echo "FAIL $label: ptxas reports spills: $(grep 'spill stores' "$W/ptxas" | head -2)"
      bad=1
    fi
  fi
  # shellcheck disable=SC2086
  cpu_vs_ref --half "$label" 5 "$W/$prog.tx" $defs || { fail=1; continue; }
  [ $bad = 1 ] && { fail=1; continue; }
  echo "ok $label: wgmma kernels at sm_90a: $want; $DEV agrees with the reference"
done
# unbound leading dims: the same kernel, its rows resolved at run time (the maps' "outer")
if ! "$TXC" "$W/mlp.tx" --target=sm_90a -D D=64 -D F=128 -o "$W/s.ptx" 2>"$W/err" ||
  [ "$(grep -c '"template": "wgmma' "$W/s.ptx.json")" != 2 ]; then
  echo "FAIL mlp with B, S unbound: no wgmma kernels: $(head -2 "$W/err")"
  fail=1
else
  echo "ok mlp with B, S unbound: 2 wgmma kernels"
fi
echo "leading_dims: $((n + 1)) cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
