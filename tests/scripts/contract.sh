#!/usr/bin/env bash
# contract.sh TXC ROOT - [simplify.contract] (passes/contract.c) end to end on tests/contract/:
#  - a pairwise product summed over one axis (sum(a * b, axis=k) with a and b broadcast against
#    each other) becomes a matrix product where N, M and K are bound and >= 16, and --explain
#    says so with the numbers: f32 and bf16, batched, over a middle axis, with the b-only axis
#    first and keepdim (no permute kernel: the operands swap), and an attention whose scores are
#    written that way (one FA3 kernel at sm_90a);
#  - K = 8 and a product that is also returned keep the reduction (no rule line);
#  - the plan has the expected kernel count, ptxas -arch=sm_90a accepts every kernel;
#  - `txc run --device=cpu` agrees with `--device=ref` on random inputs (tests/gen/compare.py).
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
C=$ROOT/tests/contract
# program|sizes|rule lines|kernels|first template prefix (- any)
cases=(
  "pairwise_f32|N=40 M=37 E=33|1|3|-"
  "pairwise_f32|N=1024 M=1024 E=256|1|2|-"
  "batched_bf16|B=2 H=3 S=17 T=20 D=32|1|1|-"
  "mid_axis|N=20 K=19 M=18|1|1|simt"
  "swapped_keepdim|N=21 M=17 K=30|1|1|simt"
  "attn_bcast|B=2 S=70 T=65 D=64|1|1|fa3-"
  "not_taken|N=20 M=18 E=17|0|2|-"
)
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes rules nk first <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  # shellcheck disable=SC2086
  if ! "$TXC" "$C/$prog.tx" $defs --target=sm_90a --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  bad=0
  got=$(grep -c '^simplify: \[simplify.contract\] .* N = [0-9]*, M = [0-9]*, K = [0-9]* >= 16' "$W/explain")
  [ "$got" = "$rules" ] || { echo "FAIL $label: $got [simplify.contract] lines, want $rules"; bad=1; }
  if ! $PY - "$W/k.ptx.json" "$nk" "$first" <<'PYEOF'; then
import json, sys
ks = json.load(open(sys.argv[1]))["kernels"]
t = [k.get("template") or k["name"] for k in ks]
ok = len(ks) == int(sys.argv[2]) and (sys.argv[3] == "-" or any(x.startswith(sys.argv[3]) for x in t))
if not ok:
    print("plan %s, want %s kernels with a %s one" % (t, sys.argv[2], sys.argv[3]))
sys.exit(0 if ok else 1)
PYEOF
    echo "FAIL $label: kernels"
    bad=1
  fi
  ptxas_ok "$label" || bad=1
  # shellcheck disable=SC2086
  case $sizes in *1024*) ;; *) cpu_vs_ref "$label" 3 "$C/$prog.tx" $defs || bad=1 ;; esac
  [ $bad = 0 ] && echo "ok   $label: $got rule line(s)"
  fail=$((fail | bad))
done
exit $fail
