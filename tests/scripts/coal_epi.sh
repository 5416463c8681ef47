#!/usr/bin/env bash
# coal_epi.sh TXC ROOT - [matmul.wgmma.epi]'s staged coalesced stores: wgmma outputs whose rows
# are not a multiple of 16 bytes (TMA cannot store them) go through the TMA-store epilogue's
# shared-memory slots and are copied out by the warpgroup's threads, a warp one row's 32
# consecutive columns (docs/codegen-matmul.md). For each case,
#  1. `txc --target=sm_90a` builds the form the case names: the manifest's template has ` csN`
#     (` csNl` looped) and only the operands' tensor maps, --explain prints `[matmul.wgmma.epi]
#     staged coalesced stores (rows of N x E bytes are not 16-byte multiples`; under
#     TX_WG_EPI_COAL=0 (the A/B knob) the register stores (no ` cs`, no slots), and rows of 16-byte
#     multiples keep TMA's ` ts`;
#  2. ptxas -arch=sm_90a -v (when present) assembles every kernel without spills;
#  3. the small cases: `txc run --device=cpu` (TX_DIFF_DEVICE=gpu on a GPU machine: the kernel
#     itself) agrees with `--device=ref` on the same random inputs (tests/gen/compare.py).
# TX_WG_MAX_STAGES=4 gives small shapes (whose deepest rings leave no room for slots) the slots.
# Skips (77) without Python + NumPy.
set -u
TXC=$1
ROOT=$2
PY=${TX_PYTHON:-/usr/bin/python3}
DEV=${TX_DIFF_DEVICE:-cpu}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "skip: $PY with NumPy not found"
  exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
H=$ROOT/bench/heldout
cp "$H/prime_bmm_f16.tx" "$H/ragged_gemm.tx" "$W"/
cp "$ROOT"/tests/gemm/{swiglu,linres}.tx "$W"/
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
# form|env|program|sizes|explain's row bytes ("" for no coalesced line)|run on $DEV
#   form: the template's epilogue word (cs2, cs2l, ...; "regs" none; "ts" TMA's)
cases=(
  "cs2 bat|-|prime_bmm_f16|B=7 M=509 K=257 N=1021|1021 x 2|no"
  "cs1l|-|ragged_gemm|M=3001 K=2005 N=1999|1999 x 2|no"
  "cs1|-|gelu_f32|M=3001 K=2005 N=1999|1999 x 4|no"
  "regs|TX_WG_EPI_COAL=0|prime_bmm_f16|B=7 M=509 K=257 N=1021||no"
  "ts2 bat|-|prime_bmm_f16|B=7 M=509 K=257 N=1024||no"
  "cs2 bat|TX_WG_MAX_STAGES=4|prime_bmm_f16|B=3 M=131 K=257 N=203|203 x 2|yes"
  "cs2 bat|TX_WG_MAX_STAGES=4 TX_WG_TILE=128x256|prime_bmm_f16|B=3 M=131 K=257 N=517|517 x 2|yes"
  "cs2l|TX_WG_MAX_STAGES=4|ragged_gemm|M=300 K=200 N=333|333 x 2|yes"
  "cs2|TX_WG_MAX_STAGES=4|gelu_f32|M=200 K=264 N=517|517 x 4|yes"
  "cs2l|TX_WG_MAX_STAGES=4|swiglu|M=200 N=301 K=128|301 x 2|yes"
  "cs2|TX_WG_MAX_STAGES=4|two|M=130 N=199 K=72|199 x 2|yes"
  "cs2l|-|linres|M=256 N=1001 K=256|1001 x 2|yes"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r form envs prog sizes bytes run <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  ev=()
  [ "$envs" != "-" ] && read -r -a ev <<<"$envs"
  label="$prog $sizes"
  [ "$envs" != "-" ] && label="$label ($envs)"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! env "${ev[@]}" "$TXC" "$W/$prog.tx" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>&1; then
    echo "FAIL $label: sm_90a compile: $(grep -m2 error "$W/explain")"
    fail=1
    continue
  fi
  tmpl=$(grep -o '"wgmma-tma-ws[^"]*"' "$W/k.ptx.json" | head -1)
  case $form in
  regs) if [[ $tmpl == *" cs"* || $tmpl == *" ts"* || -z $tmpl ]]; then bad=1; fi ;;
  *) if [[ $tmpl != *" $form"* ]]; then bad=1; fi ;;
  esac
  [ $bad = 1 ] && echo "FAIL $label: template $tmpl, want ${form/regs/the register stores}"
  nmaps=$($PY -c 'import json,sys
k=[k for k in json.load(open(sys.argv[1]))["kernels"] if "wgmma" in (k.get("template") or "")][0]
print(len(k.get("tensor_maps", [])))' "$W/k.ptx.json" 2>/dev/null)
  nops=$([ "$prog" = swiglu ] && echo 3 || echo 2)
  if [[ $form == cs* && $nmaps != "$nops" ]]; then
    echo "FAIL $label: $nmaps tensor maps, want the $nops operands' only"
    bad=1
  fi
  if [ -n "$bytes" ]; then
    if ! grep -q "\[matmul.wgmma.epi\] staged coalesced stores (rows of $bytes bytes are not 16-byte multiples" "$W/explain"; then
      echo "FAIL $label: --explain does not name the staged coalesced stores of rows of $bytes bytes:"
      grep "matmul.wgmma.epi" "$W/explain" | head -2
      bad=1
    fi
  elif grep -q "staged coalesced" "$W/explain"; then
    echo "FAIL $label: --explain names the staged coalesced stores"
    bad=1
  fi
  if [ "$form" = regs ] && ! grep -q "\[matmul.wgmma.epi\] register stores" "$W/explain"; then
    echo "FAIL $label: --explain does not name the register stores"
    bad=1
  fi
  if [ -x "$PTXAS" ]; then
    if ! "$PTXAS" -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" >"$W/ptxas" 2>&1; then
      echo "FAIL $label: ptxas: $(head -3 "$W/ptxas")"
      bad=1
    elif grep -E "[1-9][0-9]* bytes spill" "$W/ptxas" >/dev/null; then
      echo "FAIL $label: ptxas spills: $(grep -m1 -E '[1-9][0-9]* bytes spill' "$W/ptxas")"
      bad=1
    fi
  fi
  if [ "$run" = yes ]; then
    rm -rf "${W:?}/ref" "${W:?}/dev"
    # shellcheck disable=SC2086
    if ! "$TXC" run "$W/$prog.tx" $defs --device=ref --random-inputs=5 --output-dir "$W/ref" 2>"$W/err"; then
      echo "FAIL $label: reference run: $(head -2 "$W/err")"
      fail=1
      continue
    fi
    # shellcheck disable=SC2086
    if ! env "${ev[@]}" timeout 300 "$TXC" run "$W/$prog.tx" $defs --device="$DEV" --random-inputs=5 --output-dir "$W/dev" 2>"$W/err"; then
      echo "FAIL $label: --device=$DEV: $(head -2 "$W/err")"
      fail=1
      continue
    fi
    if ! $PY "$ROOT/tests/gen/compare.py" "$W/dev" "$W/ref" "$label ($DEV)" half; then
      fail=1
      continue
    fi
  fi
  [ $bad = 1 ] && { fail=1; continue; }
  agree=""
  [ "$run" = yes ] && agree="; $DEV agrees with the reference"
  echo "ok $label: $tmpl$agree"
done
echo "coal_epi: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
