#!/usr/bin/env bash
# stats_recompute.sh TXC ROOT - [reduction.stats_recompute] end to end: the programs of
# tests/stats/ (dual softmax of bf16 scores; with the column softmax returned; with it and sim
# returned; a per-column value computed in the column kernel; a pow-heavy sim) plan as priced
# (--explain: recomputed, partly recomputed, not applied, stored) at B=2 L=512 S=384, and each runs
# on --device=cpu (fused, and --no-fuse) equal to --device=ref at that size and a ragged one.
# Skips (77) without /usr/bin/python3 + NumPy.
. "$(dirname "$0")/lib/setup.sh" "$@"
fail=0
D="-D B=2 -D L=512 -D S=384"

# expect FILE PATTERN [absent]: the --explain text of FILE at D holds (or, with absent, lacks)
# the extended regular expression PATTERN.
expect() {
  local f=$ROOT/tests/stats/$1.tx
  # shellcheck disable=SC2086
  "$TXC" "$f" $D --explain --emit=ir -o /dev/null >"$W/ex" 2>&1 || { echo "FAIL $1: compile"; fail=1; return; }
  if [ "${3:-}" = absent ]; then
    grep -qE "$2" "$W/ex" && { echo "FAIL $1: --explain has '$2'"; grep stats_recompute "$W/ex"; fail=1; }
  else
    grep -qE "$2" "$W/ex" || { echo "FAIL $1: --explain lacks '$2'"; grep stats_recompute "$W/ex"; fail=1; }
  fi
}
expect dual 'writes %[0-9]+ sim, %[0-9]+ \(3\.1 MB\).*recomputed there'
expect dual 'planned with the copies: 2 kernels.*copies kept'
expect dual_ret 'writes %[0-9]+ sim \(1\.6 MB\).*recomputed there'
expect dual_ret_all 'stats_recompute' absent
expect colnorm_rows 'reading %0 x, %[0-9]+ m, %[0-9]+ r\).*recomputed there'
expect dual_pow '155\.0 instructions per element.*: stored$'
expect dual_pow 'planned with the copies' absent

# the column kernel of dual stores only its two [2, 1, 384] statistics: 2 kernels, and the
# report's traffic is s read twice, the statistics written and read, the output written
# shellcheck disable=SC2086
"$TXC" "$ROOT/tests/stats/dual.tx" $D --emit=report -o "$W/rep" || fail=1
want=$((2 * 512 * 384 * 2 * 2 + 4 * 2 * 384 * 4 + 2 * 512 * 384 * 4))
grep -q "^totals: 2 kernels .*bytes $want " "$W/rep" || { echo "FAIL dual: report totals, want $want bytes"; grep ^totals "$W/rep"; fail=1; }

for f in dual dual_ret dual_ret_all colnorm_rows dual_pow; do
  for dims in "$D" "-D B=3 -D L=37 -D S=29"; do
    for nf in "" --no-fuse; do
      rm -rf "$W/a" "$W/r"
      # shellcheck disable=SC2086
      if ! "$TXC" run "$ROOT/tests/stats/$f.tx" $dims $nf --device=cpu --random-inputs=7 --output-dir "$W/a" 2>"$W/err" ||
        ! "$TXC" run "$ROOT/tests/stats/$f.tx" $dims --device=ref --random-inputs=7 --output-dir "$W/r" 2>>"$W/err"; then
        echo "FAIL $f $dims $nf: $(head -3 "$W/err")"
        fail=1
        continue
      fi
      $PY "$ROOT/tests/gen/compare.py" "$W/a" "$W/r" "$f $dims $nf (cpu)" half || fail=1
    done
  done
done
# the random programs of tests/gen/gen.py (seeds 1-300) the rule rewrites: fused, --no-fuse and
# ref agree (tests/gen/compare.py, as script_cpu_vs_ref)
found=0
for s in $(seq 1 300); do
  flags=$($PY "$ROOT/tests/gen/gen.py" "$s" "$W/g.tx") || continue
  # shellcheck disable=SC2086
  "$TXC" "$W/g.tx" $flags --explain --emit=ir -o /dev/null 2>&1 | grep -q "copies kept" || continue
  found=$((found + 1))
  half=""
  grep -qE '\b(f16|bf16)\b' "$W/g.tx" && half=half
  for nf in "" --no-fuse ref; do
    rm -rf "$W/a"
    dev=cpu
    [ "$nf" = ref ] && dev=ref && nf=""
    # shellcheck disable=SC2086
    "$TXC" run "$W/g.tx" $flags $nf --device=$dev --random-inputs="$s" --output-dir "$W/a$dev$nf" 2>"$W/err" ||
      { echo "FAIL gen seed $s $dev $nf: $(head -3 "$W/err")"; fail=1; }
  done
  $PY "$ROOT/tests/gen/compare.py" "$W/acpu" "$W/aref" "gen seed $s (cpu)" $half || fail=1
  $PY "$ROOT/tests/gen/compare.py" "$W/acpu--no-fuse" "$W/aref" "gen seed $s (cpu --no-fuse)" $half || fail=1
  rm -rf "$W"/acpu "$W"/acpu--no-fuse "$W"/aref
done
echo "stats_recompute: $found generated programs rewritten"
[ $found -gt 0 ] || { echo "FAIL: no generated program of seeds 1-300 is rewritten any more"; fail=1; }

[ $fail = 0 ] && echo "stats_recompute: all checks passed"
exit $fail
