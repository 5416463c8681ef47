#!/usr/bin/env bash
# column_combine.sh TXC ROOT - [reduction.column_blocks] is one kernel whose column tiles' last
# blocks combine the partials (docs/cost-model.md "Schedules"): for a column mean and a
# middle-axis max at the sizes of the sweep and at ragged ones, --explain names the rule and why
# it (not the model's ranking) chose it, the model line and the text report say the last blocks
# combine in the same kernel (no combine kernel), the sm_90a PTX has one kernel with the ticket's
# atomic and assembles with ptxas without spills, and `txc bench --device=cpu` (the host code of
# the same kernel, verified against the reference interpreter) agrees at ragged sizes when the
# program runs twice on one workspace (TX_HOST_RUNS=2: the second run needs the tickets the first
# reset). Needs no NumPy.
set -u
TXC=$1
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
P=$2/tests/colcomb # the programs and the cases, shared with bench/colcomb_gpu.sh
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0
bad() {
  echo "FAIL $*"
  fail=1
}

# text FILE DIMS...: the explain and report lines, the PTX.
text() {
  local f=$1 d=()
  shift
  for kv in "$@"; do d+=(-D "$kv"); done
  local ex rep
  ex=$("$TXC" "$P/$f" "${d[@]}" --target=sm_90a --explain -o "$W/e.ptx" 2>&1)
  grep -q '^k0: \[reduction.column_blocks\] ([^)]*) chosen by the rule (no tuning measurement): the column split.s narrowest tile ([0-9]* x vec [0-9]* of [0-9]* kept elements) gives [0-9]* blocks\?, fewer than 2 x 132 SMs' <<<"$ex" ||
    bad "$f $*: --explain does not name the rule and its reason: $(head -1 <<<"$ex")"
  grep -q "model: + each column tile's last block combines its partials in the same kernel (no combine kernel, no launch)" <<<"$ex" ||
    bad "$f $*: --explain lacks the last-block combine line"
  ! grep -q 'combine kernel of the partials' <<<"$ex" || bad "$f $*: --explain still prices a combine kernel"
  rep=$("$TXC" "$P/$f" "${d[@]}" --target=sm_90a --emit=report -o - 2>&1)
  grep -q "schedule: reduction.column_blocks([^)]*) from the rule (the column split" <<<"$rep" ||
    bad "$f $*: the report's schedule line does not name the rule"
  grep -q "last block combines its partials in the same kernel" <<<"$rep" ||
    bad "$f $*: the report lacks the last-block combine line"
  "$TXC" "$P/$f" "${d[@]}" --target=sm_90a -o "$W/k.ptx" 2>"$W/err" || bad "$f $*: no PTX: $(head -2 "$W/err")"
  [ "$(grep -c '^\.visible \.entry' "$W/k.ptx")" = 1 ] || bad "$f $*: not one kernel"
  grep -q 'atom.relaxed.gpu.global.add.u32' "$W/k.ptx" || bad "$f $*: no ticket atomic in the PTX"
  if [ -x "$PTXAS" ]; then
    if ! "$PTXAS" -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" >"$W/ptxas" 2>&1; then
      bad "$f $*: ptxas: $(grep -m2 -i error "$W/ptxas")"
    elif grep -qE '[1-9][0-9]* bytes spill' "$W/ptxas"; then
      bad "$f $*: ptxas spills: $(grep -m1 -E '[1-9][0-9]* bytes spill' "$W/ptxas")"
    fi
  fi
}

# twice FILE DIMS...: the host code against the reference, run twice on one workspace.
twice() {
  local f=$1 d=()
  shift
  for kv in "$@"; do d+=(-D "$kv"); done
  "$TXC" "$P/$f" "${d[@]}" --explain -o "$W/e.ptx" 2>&1 | grep -q '^k0: \[reduction.column_blocks\]' ||
    bad "$f $*: not planned as column blocks"
  if ! TX_HOST_RUNS=2 timeout 300 "$TXC" bench "$P/$f" "${d[@]}" --device=cpu --random-inputs=5 \
    --iters 1 >"$W/out" 2>&1 || ! grep -q ': verified, reference ref' "$W/out"; then
    bad "$f $*: cpu (two runs) vs ref: $(head -3 "$W/out" | tr '\n' ' ')"
  fi
}

text colmean.tx M=1048576 N=16
text midmax.tx B=16 R=8191 C=129
text colmean.tx M=100003 N=20
mapfile -t cases < <(grep -E '^[a-z]+\|.*\|cpu$' "$P/cases.txt")
[ ${#cases[@]} -gt 0 ] || bad "no cpu cases in $P/cases.txt"
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes _ <<<"$c"
  # shellcheck disable=SC2086
  twice "$prog.tx" $sizes
done
[ $fail = 0 ] && echo "column_combine: ok"
exit $fail
