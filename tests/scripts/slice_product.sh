#!/usr/bin/env bash
# slice_product.sh TXC ROOT - [simplify.slice_of_product]: slices of the last axis of a product
# (tests/slice/*.tx: a packed SwiGLU weight in bf16, f16 and f32, a batched activation, and three
# programs the rule must leave alone: an unaligned slice start, a product also returned, overlapping
# slices). For each program and size (ragged M),
#  1. --explain names the rule once per rewritten slice (0 for the three others);
#  2. the sm_90a plan of an aligned 16-bit program reads the weight's column slice in place: a
#     wgmma kernel whose tensor map has the slice's offset (no staging kernel), and ptxas accepts
#     the PTX (when /usr/local/cuda/bin/ptxas exists);
#  3. `txc run --device=cpu` (fused and --no-fuse) agrees with `--device=ref` on the same random
#     inputs (tests/gen/compare.py); the reference runs the frontend's graph, before the rewrite.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
# file | -D sizes | rewritten slices | the in-place slice offset the sm_90a plan must show (- none)
cases=(
  "packed|M=37 D=72|2|40"
  "packed|M=300 D=136|2|40"
  "packed_f16|M=129 D=64|2|40"
  "packed_f32|M=33 D=24|2|-"
  "batched|B=3 M=19 D=40|2|32"
  "unaligned|M=21 D=32|0|-"
  "used|M=17 D=48|0|-"
  "overlap|M=23 D=40|0|-"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes want off <<<"$c"
  f="$ROOT/tests/slice/$prog.tx"
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
  got=$(grep -c "^simplify: \[simplify.slice_of_product\]" "$W/explain")
  [ "$got" = "$want" ] || { echo "FAIL $label: $got slices rewritten, want $want"; bad=1; }
  if [ "$off" != - ] && ! $PY - "$W/k.ptx.json" "$off" <<'PYEOF'; then
import json, sys
ks, off = json.load(open(sys.argv[1]))["kernels"], int(sys.argv[2])
st = [k for k in ks if k.get("template", "").startswith("stage")]
maps = [t for k in ks if k.get("template", "").startswith("wgmma")
        for t in k.get("tensor_maps", []) if t.get("offset") == off and "pitch" in t]
if st or not maps:
    print("  no wgmma tensor map at offset %d (or a staging kernel): %s"
          % (off, [k.get("template") for k in ks]))
    sys.exit(1)
PYEOF
    echo "FAIL $label: the column slice is not read in place"
    bad=1
  fi
  ptxas_ok "$label" || bad=1
  half=""
  grep -qE '\b(f16|bf16)\b' "$f" && half=--half
  # shellcheck disable=SC2086
  fused_unfused_vs_ref $half "$label" 7 "$f" $defs || bad=1
  [ $bad = 0 ] || fail=1
done
echo "slice_product: $n programs, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
[ $fail = 0 ]
