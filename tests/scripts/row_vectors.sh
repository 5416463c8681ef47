#!/usr/bin/env bash
# row_vectors.sh TXC ROOT - the vector loads of row kernels (codegen/value.c: cg_vec_concat,
# cg_vec_lane) in the sm_90a PTX of held-out programs at their GPU sizes:
#   vit_cls_pos B=256: the rows of concat((broadcast cls, patches), axis=1) + pos, layer-normed,
#     read every input (both pieces of the concat) with 16-byte vector loads: no 16-bit scalar
#     global load (a concat on an axis outside the row keeps the row's vector groups);
#   vit_cls_pos, bert_embed_ln: a bf16 of a loaded vector becomes f32 in one operation on its
#     32-bit word (shl or and), so the PTX has no more 16-bit -> 32-bit unpacks (cvt.u32.u16) than
#     bf16 roundings of intermediate values (cvt.rn.bf16.f32, whose results are widened again);
# and ptxas accepts the PTX (when /usr/local/cuda/bin/ptxas exists). The CPU results of these
# programs against NumPy are script_heldout's.
set -u
TXC=$1
ROOT=$2
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0
# program | -D sizes | most 16-bit scalar global loads (- unchecked) | least 16-byte vector loads
cases=(
  "vit_cls_pos|B=256|0|15"
  "bert_embed_ln|B=64 S=512|-|15"
)
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes maxs minv <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  # shellcheck disable=SC2086
  if ! "$TXC" "$ROOT/bench/heldout/$prog.tx" $defs --target=sm_90a -o "$W/k.ptx" 2>"$W/err"; then
    echo "FAIL $prog: compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  scalar=$(grep -cE 'ld\.global(\.nc)?\.(u16|b16|s16)' "$W/k.ptx")
  vec=$(grep -cE 'ld\.global(\.nc)?\.v4\.(u32|b32)' "$W/k.ptx")
  unpack=$(grep -c 'cvt\.u32\.u16' "$W/k.ptx")
  rounds=$(grep -c 'cvt\.rn\.bf16\.f32' "$W/k.ptx")
  bad=0
  [ "$maxs" = - ] || [ "$scalar" -le "$maxs" ] ||
    { echo "FAIL $prog: $scalar scalar 16-bit loads, want at most $maxs"; bad=1; }
  [ "$vec" -ge "$minv" ] || { echo "FAIL $prog: $vec vector loads, want at least $minv"; bad=1; }
  [ "$unpack" -le "$rounds" ] ||
    { echo "FAIL $prog: $unpack cvt.u32.u16 unpacks > $rounds bf16 roundings"; bad=1; }
  if [ -x "$PTXAS" ] && ! "$PTXAS" -arch=sm_90a "$W/k.ptx" -o /dev/null 2>"$W/err"; then
    echo "FAIL $prog: ptxas: $(head -3 "$W/err")"
    bad=1
  fi
  [ $bad = 0 ] && echo "ok   $prog $sizes: $vec vector loads, $scalar scalar, $unpack unpacks, $rounds roundings"
  fail=$((fail | bad))
done
exit $fail
