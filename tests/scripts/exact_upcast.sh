#!/usr/bin/env bash
# exact_upcast.sh TXC ROOT - [matmul.exact_upcast] (passes/upcast.c) end to end on tests/upcast/:
#  - f32(a) @ f32(b) of one 16-bit dtype (an attention's q @ k^T, bf16 and f16; a plain GEMM, a
#    transposed f16 weight) is rewritten (one --explain line) and planned on the tensor cores: the
#    kernel template names FA3 or wgmma at sm_90a; an f32 operand, mixed f16 / bf16 casts and i32
#    casts are not (no line, SIMT kernels);
#  - ptxas -arch=sm_90a accepts every kernel;
#  - `txc run --device=cpu` agrees with `--device=ref` at small ragged sizes (f32 tolerance for
#    the f32 products, the bf16 one for the attentions' 16-bit outputs);
#  - Phi-2's block (bench/heldout/phi2_block.tx) at its GPU size B=2 S=2048: the rule fires once,
#    the block plans 7 kernels (the attention stores O transposed), its attention on the tensor
#    cores (not [attention.simt]); with
#    TX_EXACT_UPCAST=0 the attention is the SIMT kernel again (the knob's A/B).
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
U=$ROOT/tests/upcast
# program|sizes|rule lines|a template every plan has (prefix)|half tolerance
cases=(
  "attn_bf16|B=2 H=3 S=77 D=80|1|fa3-wgmma|--half"
  "attn_bf16|B=1 H=2 S=130 D=16|1|fa3-wgmma|--half"
  "attn_f16|B=1 H=2 S=131 D=48|1|fa3-wgmma|--half"
  "gemm_bf16|M=67 N=45 K=131|1|wgmma-tma|"
  "gemm_bf16|M=256 N=128 K=64|1|wgmma-tma|"
  "gemm_f16t|B=2 M=33 N=70 K=96|1|wgmma-tma|"
  "not_taken|M=19 N=21 K=40|0|simt|"
)
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes rules tmpl half <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  # shellcheck disable=SC2086
  if ! "$TXC" "$U/$prog.tx" $defs --target=sm_90a --explain -o "$W/k.ptx" >"$W/explain" 2>&1; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/explain")"
    fail=1
    continue
  fi
  got=$(grep -c '^simplify: \[matmul.exact_upcast\] .* f32 product' "$W/explain")
  [ "$got" = "$rules" ] || { echo "FAIL $label: $got [matmul.exact_upcast] lines, want $rules"; fail=1; }
  grep -q "\"template\": \"$tmpl" "$W/k.ptx.json" || {
    echo "FAIL $label: no '$tmpl' kernel: $(grep -o '"template": "[^"]*' "$W/k.ptx.json" | tr '\n' ' ')"
    fail=1
  }
  if [ "$rules" = 0 ] && grep -qE '"template": "(wgmma|fa3|mma)' "$W/k.ptx.json"; then
    echo "FAIL $label: an f32 product of f32 operands left the CUDA cores"
    fail=1
  fi
  ptxas_ok "$label" || fail=1
  # shellcheck disable=SC2086
  cpu_vs_ref $half "$label" 5 "$U/$prog.tx" $defs || fail=1
done

P=$ROOT/bench/heldout/phi2_block.tx
if "$TXC" "$P" -D B=2 -D S=2048 --target=sm_90a --explain --emit=report -o "$W/r.txt" >"$W/explain" 2>&1; then
  got=$(grep -c '^simplify: \[matmul.exact_upcast\]' "$W/explain")
  [ "$got" = 1 ] || { echo "FAIL phi2_block: $got [matmul.exact_upcast] lines, want 1"; fail=1; }
  grep -q '^totals: 7 kernels' "$W/r.txt" || { echo "FAIL phi2_block: $(grep '^totals' "$W/r.txt")"; fail=1; }
  if grep -q '\[attention.simt\]' "$W/explain"; then
    echo "FAIL phi2_block: the attention is still on the SIMT kernel"
    fail=1
  fi
else
  echo "FAIL phi2_block: compile: $(head -2 "$W/explain")"
  fail=1
fi
if TX_EXACT_UPCAST=0 "$TXC" "$P" -D B=2 -D S=2048 --target=sm_90a --explain -o "$W/off.ptx" >"$W/explain" 2>&1; then
  grep -q '\[attention.simt\]' "$W/explain" || { echo "FAIL phi2_block TX_EXACT_UPCAST=0: not the SIMT attention"; fail=1; }
else
  echo "FAIL phi2_block TX_EXACT_UPCAST=0: compile: $(head -2 "$W/explain")"
  fail=1
fi
[ "$fail" = 0 ] && echo "ok exact_upcast"
exit $fail
