#!/usr/bin/env bash
# stage_view.sh TXC ROOT - [matmul.stage_view] (passes/stage.c): matrix products whose operand is a
# chain of reshapes and permutes without a stride form (tests/stage/*.tx: ViT-style patch matrices
# in bf16, f16 and f32 with a pointwise producer, a channel-interleaving view, a B operand through
# such a view), a small one the model reads in place, and views with a stride form that are never
# staged; [matmul.stage_concat]: operands that are concats of views (im2col's nine shifted windows
# on the channel axis, concats along the row axis and along N), staged or read in place by the
# same prices. For each program and size (ragged),
#  1. --explain prices the operand (the rule with its numbers) and says "staged" or "read in
#     place" as expected, and the sm_90a plan has one kernel more (the copy) exactly when staged (pitch
#     copies of [matmul.wgmma.stage] not counted);
#     ptxas accepts the PTX (copy kernels included) when /usr/local/cuda/bin/ptxas exists;
#  2. `txc run --device=cpu` (fused and --no-fuse) agrees with `--device=ref` on the same random
#     inputs (tests/gen/compare.py).
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
# file | -D sizes | staged, read in place or none (no operand priced) | kernels of the sm_90a plan
# (besides [matmul.wgmma.stage]'s pitch copies)
cases=(
  "patches|B=5 E=40|read in place|1"
  "patches|B=64 E=136|staged|2"
  "patches_f16|B=50 E=300|staged|2"
  "patches_f32|B=41 E=257|staged|2"
  "channels|N=1001 E=200|staged|2"
  "channels|N=300 E=72|read in place|1"
  "weight_view|M=20001|staged|2"
  "small_view||read in place|1"
  "strided|K=129 M=77 N=40|none|2"
  "im2col|B=16 C=32 K=288 O=40|staged|2"
  "im2col|B=1 C=8 K=72 O=16|read in place|1"
  "concat_rows|B=40 K=136|staged|3"
  "concat_rows|B=2 K=24|read in place|1"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes want nk <<<"$c"
  f="$ROOT/tests/stage/$prog.tx"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! "$TXC" "$f" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>&1; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/explain")"
    fail=1
    continue
  fi
  line=$(grep -E "\[matmul.stage_view\] read through views|\[matmul.stage_concat\] a concat" "$W/explain")
  case "$want" in
    none) [ -z "$line" ] || { echo "FAIL $label: a view with a stride form priced: $line"; bad=1; } ;;
    *) case "$line" in
         *"sectors per 32-lane request"*": $want") ;;
         *) echo "FAIL $label: want '$want': ${line:-no [matmul.stage_view] line}"; bad=1 ;;
       esac ;;
  esac
  got=$($PY -c 'import json, sys; print(len([k for k in json.load(open(sys.argv[1]))["kernels"]
                                         if "_stage" not in k["name"]]))' "$W/k.ptx.json")
  [ "$got" = "$nk" ] || { echo "FAIL $label: $got kernels, want $nk"; bad=1; }
  ptxas_ok "$label" || bad=1
  half=""
  grep -qE '\b(f16|bf16)\b' "$f" && half=--half
  # shellcheck disable=SC2086
  fused_unfused_vs_ref $half "$label" 5 "$f" $defs || bad=1
  [ $bad = 0 ] || fail=1
done
echo "stage_view: $n programs, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
[ $fail = 0 ]
