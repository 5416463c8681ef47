#!/usr/bin/env bash
# split_axes.sh TXC ROOT - passes/split.c on tests/split/*.tx: reductions over strided axis sets
# ([reduction.split_axes], [reduction.split_prologue], [reduction.split_var]) and column variances
# of few columns ([reduction.split_column_var]), at ragged sizes that take the rules and at sizes
# that must not (a run under 32, a prime column length). For each program and size,
#  1. --explain names each rule the expected number of times;
#  2. the sm_90a PTX assembles with ptxas (when /usr/local/cuda/bin/ptxas exists);
#  3. `txc run --device=cpu` (fused and --no-fuse) agrees with `--device=ref` on the same random
#     inputs (tests/gen/compare.py): the reference runs the frontend's graph, before the rewrite.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
# file | -D sizes | split_axes split_prologue split_var split_column_var (counts on --explain)
cases=(
  "seqbn|B=3 C=5 L=77|2 0 1 0"
  "seqbn|B=2 C=3 L=31|0 0 0 0"
  "outer|A=3 B=5 C=40|4 2 0 0"
  "outer|A=3 B=5 C=7|0 0 0 0"
  "prologue|A=2 B=3 C=5 D=9|1 1 0 0"
  "colvar|N=300 C=7|0 0 0 1"
  "colvar|N=96 C=5|0 0 0 1"
  "colvar|N=331 C=7|0 0 0 0"
  "midvar|B=2 T=128 C=3|0 0 0 1"
  "colvar02|B=3 C=2 T=64 F=5|0 0 0 1"
  "colvar02|B=2 C=3 T=33 F=4|0 0 0 1"
  "colvar02|B=2 C=3 T=31 F=4|0 0 0 0"
  "colrun|B=2 T=16 H=4 C=3|0 0 0 1"
  "colrun|B=2 T=5 H=3 C=3|0 0 0 0"
  "bn2d|N=4 C=6 H=7 W=9|2 0 1 0"
  "bn2d|N=3 C=4 H=5 W=5|0 0 0 0"
  "axes013|A=3 B=2 C=5 D=40|3 0 1 0"
)
rules=(split_axes split_prologue split_var split_column_var)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes want <<<"$c"
  f="$ROOT/tests/split/$prog.tx"
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
  read -r -a counts <<<"$want"
  for i in 0 1 2 3; do
    got=$(grep -c "\[reduction.${rules[$i]}\]" "$W/explain")
    [ "$got" = "${counts[$i]}" ] || { echo "FAIL $label: [reduction.${rules[$i]}] $got times, want ${counts[$i]}"; bad=1; }
  done
  ptxas_ok "$label" || bad=1
  # shellcheck disable=SC2086
  fused_unfused_vs_ref "$label" 7 "$f" $defs || bad=1
  [ $bad = 0 ] && echo "ok   $label"
  [ $bad = 0 ] || fail=1
done
echo "split_axes: $n programs, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
[ $fail = 0 ]
