#!/usr/bin/env bash
# pick_push.sh TXC ROOT - [simplify.pick_push] (passes/pickpush.c) end to end on tests/pick_push/:
#  - a one-hot pick of log_softmax (logprobs; at V = 1 the iota folds away, no pick) and of a function of two row-shaped values through
#    a bf16 rounding (two_leaves) is rewritten (--explain names the rule), the pick of the logits
#    themselves (plain_pick) is not;
#  - logprobs at V = 151936 (a row past the on-chip budget) plans `online passes=1`, not the
#    three-pass multipass plan of the unrewritten pick;
#  - ptxas -arch=sm_90a accepts every kernel;
#  - `txc run --device=cpu` (the rewritten graph) agrees with `--device=ref` (the interpreter of
#    the source graph) on random inputs and on ids that include -1, V and V + 7 (0 there).
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
P=$ROOT/tests/pick_push
fail=0
# program|sizes|rule lines|ids shape (- : random inputs only)
cases=(
  "logprobs|N=37 V=301|1|N"
  "logprobs|N=3 V=1|0|N"
  "two_leaves|N=21 V=130|1|N1"
  "plain_pick|N=19 V=77|0|N"
)
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes rules ids <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  bad=0
  # shellcheck disable=SC2086
  if ! "$TXC" "$P/$prog.tx" $defs --target=sm_90a --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  got=$(grep -c '^simplify: \[simplify.pick_push\]' "$W/explain")
  [ "$got" = "$rules" ] || { echo "FAIL $label: $got [simplify.pick_push] lines, want $rules"; bad=1; }
  ptxas_ok "$label" || bad=1
  for mode in random edge; do
    ids_arg=""
    if [ $mode = edge ]; then
      n=$(sed 's/.*N=\([0-9]*\).*/\1/' <<<"$sizes")
      v=$(sed 's/.*V=\([0-9]*\).*/\1/' <<<"$sizes")
      $PY - "$W" "$n" "$v" "$ids" <<'PYEOF'
import sys, numpy as np
w, n, v, shape = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ids = np.arange(n, dtype=np.int32) % (v + 9) - 1  # -1, 0 .. v - 1, v .. v + 7
ids[n // 2] = v
np.save(w + "/ids.npy", ids.reshape((n, 1)) if shape == "N1" else ids)
PYEOF
      ids_arg="--input ids=$W/ids.npy"
    fi
    # shellcheck disable=SC2086
    cpu_vs_ref "$label ($mode)" 3 "$P/$prog.tx" $defs $ids_arg || bad=1
  done
  [ $bad = 0 ] && echo "ok   $label: $got rule line(s), cpu = ref on random and edge ids"
  fail=$((fail | bad))
done
"$TXC" "$P/logprobs.tx" -D N=4092 -D V=151936 --target=sm_90a --emit=report -o "$W/rep" 2>"$W/err"
if grep -q 'strategy=online passes=1' "$W/rep"; then
  echo "ok   logprobs N=4092 V=151936: online, 1 pass"
else
  echo "FAIL logprobs N=4092 V=151936: $(grep -m1 strategy "$W/rep")"
  fail=1
fi
exit $fail
