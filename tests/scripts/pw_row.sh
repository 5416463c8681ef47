#!/usr/bin/env bash
# pw_row.sh TXC ROOT - the pointwise.row schedule (codegen/pointwise.c cg_pw_rows,
# docs/codegen.md "Pointwise and copy regions"):
#  1. prime_gemm_k7 at its GPU sizes ([8191, 7] @ [7, 4099] bf16 + bias + sigmoid, rows of an odd
#     width, the 7 x values of a row constant along it) plans [pointwise.row] and --explain gives
#     its instruction count against pointwise.vector's; TX_PW_ROW=0 (the A/B knob) plans
#     pointwise.vector; the row kernel's sm_90a PTX has no multiply-high (the per-element split of
#     the offset by 4099) where the flat one has one per element, fewer instructions, the x loads
#     outside the vector loop, and passes ptxas;
#  2. TX_PW_ROW=1 (the row schedule wherever offered) on the host JIT gives bit for bit what the
#     flat loop gives (TX_PW_ROW=0) and agrees with --device=ref (tests/gen/compare.py), for
#     programs with odd rows: full-shape inputs, row constants [M, 1], biases [N], rank 3, mixed
#     dtypes, two outputs, views along the row, no input of the output's shape, at ragged sizes.
# Skips (77) without Python + NumPy.
. "$(dirname "$0")/lib/setup.sh" "$@"
fail=0
P="$ROOT/bench/heldout/prime_gemm_k7.tx"
G="-D M=8191 -D N=4099"
# shellcheck disable=SC2086
"$TXC" "$P" $G --target=sm_90a --explain -o "$W/row.ptx" >"$W/ex" 2>&1 || { echo "FAIL compile: $(head -3 "$W/ex")"; exit 1; }
# shellcheck disable=SC2086
TX_PW_ROW=0 "$TXC" "$P" $G --target=sm_90a --explain -o "$W/flat.ptx" >"$W/ex0" 2>&1 || { echo "FAIL compile (TX_PW_ROW=0): $(head -3 "$W/ex0")"; exit 1; }
grep -q '^k0: \[pointwise.row\] (threads=256, lanes=32)' "$W/ex" || { echo "FAIL: prime_gemm_k7 does not plan pointwise.row: $(grep '^k0' "$W/ex")"; fail=1; }
grep -qE 'model: \[pointwise.row\] 8191 rows of 4099 elements, 32 lanes a row: [0-9.]+ instructions per element against pointwise.vector.s [0-9.]+' "$W/ex" ||
  { echo "FAIL: --explain lacks the [pointwise.row] counts"; fail=1; }
grep -q '^k0: \[pointwise.vector\]' "$W/ex0" || { echo "FAIL: TX_PW_ROW=0 does not plan pointwise.vector: $(grep '^k0' "$W/ex0")"; fail=1; }
# the instructions of the loop that stores vectors (the block of the st.global.v4)
body() { awk '/^\$L__BB/{blk=""; next} {blk=blk"\n"$0} /st\.global\.v4/{print blk; blk=""}' "$1"; }
nr=$(body "$W/row.ptx" | grep -cE '^\s+[a-z@]')
nf=$(body "$W/flat.ptx" | grep -cE '^\s+[a-z@]')
hr=$(grep -c 'mul\.hi' "$W/row.ptx")
hf=$(grep -c 'mul\.hi' "$W/flat.ptx")
xr=$(body "$W/row.ptx" | grep -c 'ld\.global\.nc\.u16')
[ "$hr" = 0 ] && [ "$hf" -ge 8 ] || { echo "FAIL: mul.hi: $hr in the row kernel (want 0), $hf in the flat one (want >= 8)"; fail=1; }
[ "$nr" -gt 0 ] && [ $((nr * 10)) -le $((nf * 8)) ] || { echo "FAIL: vector loop of $nr PTX instructions, want at most 0.8 x the flat loop's $nf"; fail=1; }
[ "$xr" -le 64 ] || { echo "FAIL: $xr 16-bit loads in the row kernel's vector loop, want <= 64 (w and b: 8 x 8, x hoisted)"; fail=1; }
if [ -x "$PTXAS" ]; then
  "$PTXAS" -arch=sm_90a "$W/row.ptx" -o /dev/null 2>"$W/err" || { echo "FAIL ptxas: $(head -3 "$W/err")"; fail=1; }
fi
[ $fail = 0 ] && echo "ok   prime_gemm_k7 M=8191 N=4099: pointwise.row, vector loop $nr PTX instructions (flat: $nf), mul.hi $hr (flat: $hf), $xr 16-bit loads"

# program | -D sizes
cases=(
  "bench/heldout/prime_gemm_k7.tx|M=37 N=41"
  "bench/heldout/prime_gemm_k7.tx|M=3 N=9"
  "bench/heldout/prime_gemm_k7.tx|M=5 N=1003"
  "tests/pw_row/affine.tx|M=37 N=41"
  "tests/pw_row/affine.tx|M=9 N=4"
  "tests/pw_row/affine.tx|M=4 N=1001"
  "tests/pw_row/mixed3.tx|B=3 M=5 N=19"
  "tests/pw_row/mixed3.tx|B=2 M=7 N=8"
  "tests/pw_row/rot.tx|M=37"
  "tests/pw_row/colrow.tx|M=33 N=17"
  "bench/heldout/rope_rotate_half.tx|B=1 S=3"
  "bench/heldout/lerp_latents.tx|B=2 H=3 W=11"
)
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$(basename "$prog" .tx) $sizes"
  half=""
  grep -qE '\b(f16|bf16)\b' "$ROOT/$prog" && half=half
  rm -rf "$W/r" "$W/f" "$W/ref"
  # shellcheck disable=SC2086
  TX_PW_ROW=1 "$TXC" "$ROOT/$prog" $defs --explain 2>&1 | grep -q '\[pointwise.row\]' ||
    { echo "FAIL $label: TX_PW_ROW=1 plans no pointwise.row"; fail=1; continue; }
  # shellcheck disable=SC2086
  if ! TX_PW_ROW=1 "$TXC" run "$ROOT/$prog" $defs --device=cpu --random-inputs=7 --output-dir "$W/r" 2>"$W/err" ||
    ! TX_PW_ROW=0 "$TXC" run "$ROOT/$prog" $defs --device=cpu --random-inputs=7 --output-dir "$W/f" 2>>"$W/err" ||
    ! "$TXC" run "$ROOT/$prog" $defs --device=ref --random-inputs=7 --output-dir "$W/ref" 2>>"$W/err"; then
    echo "FAIL $label: a run failed: $(head -3 "$W/err")"
    fail=1
    continue
  fi
  bad=0
  for o in "$W"/f/*.npy; do
    cmp -s "$o" "$W/r/$(basename "$o")" || { echo "FAIL $label: $(basename "$o") differs between pointwise.row and pointwise.vector"; bad=1; }
  done
  $PY "$ROOT/tests/gen/compare.py" "$W/r" "$W/ref" "$label" $half || bad=1
  [ $bad = 0 ] && echo "ok   $label: pointwise.row = pointwise.vector bit for bit, = ref"
  fail=$((fail | bad))
done
exit $fail
