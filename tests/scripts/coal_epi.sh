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
# The cases are tests/coal/cases.txt's (shared with bench/coal_check.sh).
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
DEV=${TX_DIFF_DEVICE:-cpu}
# the cases (tests/coal/cases.txt) but those only bench/coal_check.sh runs (form `-`)
mapfile -t cases < <(grep -v -e '^#' -e '^-|' "$ROOT/tests/coal/cases.txt")
[ ${#cases[@]} -gt 0 ] || { echo "FAIL: no cases in $ROOT/tests/coal/cases.txt"; exit 1; }
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r form envs path sizes bytes run <<<"$c"
  f=$ROOT/$path
  prog=$(basename "$path" .tx)
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  ev=()
  [ "$envs" != "-" ] && read -r -a ev <<<"$envs"
  label="$prog $sizes"
  [ "$envs" != "-" ] && label="$label ($envs)"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! env "${ev[@]}" "$TXC" "$f" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>&1; then
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
    if ! "$TXC" run "$f" $defs --device=ref --random-inputs=5 --output-dir "$W/ref" 2>"$W/err"; then
      echo "FAIL $label: reference run: $(head -2 "$W/err")"
      fail=1
      continue
    fi
    # shellcheck disable=SC2086
    if ! env "${ev[@]}" timeout 300 "$TXC" run "$f" $defs --device="$DEV" --random-inputs=5 --output-dir "$W/dev" 2>"$W/err"; then
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
