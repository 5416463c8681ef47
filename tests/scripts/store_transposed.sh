#!/usr/bin/env bash
# store_transposed.sh TXC ROOT - [attention.store_transposed] (passes/fuse.c, codegen/program.c):
# the attention output merged back to [B, S, H x D] for o_proj, reshape(transpose(o, 1, 2),
# (B, S, E)) @ wo (tests/ostore/mha.tx) and the GQA form over 5-D grouped heads
# (tests/ostore/gqa.tx), at the sizes of tests/ostore/cases.txt (ragged S = 1, 77, 197, 1500).
#  1. sm_90a: --explain names the rule with the bytes saved exactly where the case says so; the
#     plan has the case's kernel count, and with TX_ATTN_OSTORE=0 (the rule off) one kernel more
#     where it is taken (the [matmul.stage_view] copy) and the same count elsewhere; ptxas
#     accepts the PTX; the sm_90 plan (the mma.sync attention kernel) takes the rule too where
#     sm_90a does (sm_90 has no wgmma to read the view in place, so it may take it elsewhere);
#  2. at the case's CPU sizes, `txc run --device=cpu` (and with the rule off) agrees with
#     `--device=ref` on the same random inputs (tests/gen/compare.py), its plan taking the rule
#     as the case says.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
nk() { $PY -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["kernels"]))' "$1"; }
fail=0
n=0
while IFS='|' read -r prog sizes want kern csizes cwant; do
  case "$prog" in '#'* | '') continue ;; esac
  f="$ROOT/tests/ostore/$prog.tx"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  for t in sm_90a sm_90; do
    # shellcheck disable=SC2086
    if ! "$TXC" "$f" --target=$t $defs --explain -o "$W/k.ptx" >"$W/explain" 2>&1; then
      echo "FAIL $label: $t compile: $(head -2 "$W/explain")"
      bad=1
      continue
    fi
    line=$(grep "\[attention.store_transposed\]" "$W/explain")
    case "$want:$t:$line" in
      yes:*"MB not read and written again"*) ;;
      no:sm_90a:) ;;
      no:sm_90:*) ;;
      *) echo "FAIL $label: $t: want the rule '$want', got '${line:-no line}'"; bad=1 ;;
    esac
    [ "$t" = sm_90a ] || continue
    got=$(nk "$W/k.ptx.json")
    [ "$got" = "$kern" ] || { echo "FAIL $label: $got kernels, want $kern"; bad=1; }
    ptxas_ok "$label" || bad=1
    # shellcheck disable=SC2086
    TX_ATTN_OSTORE=0 "$TXC" "$f" --target=sm_90a $defs -o "$W/off.ptx" >/dev/null 2>&1 || bad=1
    off=$(nk "$W/off.ptx.json")
    exp=$kern
    [ "$want" = yes ] && exp=$((kern + 1))
    [ "$off" = "$exp" ] || { echo "FAIL $label: rule off: $off kernels, want $exp"; bad=1; }
  done
  cdefs=""
  for d in $csizes; do cdefs="$cdefs -D $d"; done
  # shellcheck disable=SC2086
  "$TXC" run "$f" $cdefs --device=cpu --explain --random-inputs=3 --output-dir "$W/c" >"$W/cx" 2>&1
  took=no
  grep -q "\[attention.store_transposed\]" "$W/cx" && took=yes
  [ "$cwant" = any ] || [ "$took" = "$cwant" ] ||
    { echo "FAIL $label: the CPU plan at $csizes takes the rule: $took, want $cwant"; bad=1; }
  # shellcheck disable=SC2086
  cpu_vs_ref --half "$prog $csizes" 3 "$f" $cdefs || bad=1
  # shellcheck disable=SC2086
  TX_ATTN_OSTORE=0 cpu_vs_ref --half "$prog $csizes (rule off)" 3 "$f" $cdefs || bad=1
  [ $bad = 0 ] || fail=1
done <"$ROOT/tests/ostore/cases.txt"
echo "store_transposed: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
[ $fail = 0 ]
