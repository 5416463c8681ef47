#!/usr/bin/env bash
# Golden IR: `txc --emit=ir` of every example and every public suite program
# (dims left symbolic) must match tests/golden/ir/<name>.ir byte for byte.
# UPDATE=1 rewrites the golden files instead of comparing.
set -u
TXC=$(realpath "$1") ROOT=$(realpath "$2")
SUITE="$ROOT/../shared/bench/suite"
fail=0 n=0
for f in "$ROOT"/examples/*.tx "$SUITE"/*.tx; do
  [ -f "$f" ] || continue
  base=$(basename "$f" .tx)
  case "$f" in "$SUITE"/*) name="suite_$base" ;; *) name="$base" ;; esac
  gold="$ROOT/tests/golden/ir/$name.ir"
  out=$(cd "$(dirname "$f")" && "$TXC" "$(basename "$f")" --emit=ir -o - 2>&1); rc=$?
  n=$((n + 1))
  if [ "${UPDATE:-0}" = 1 ]; then mkdir -p "$(dirname "$gold")"; printf '%s\n' "$out" >"$gold"; continue; fi
  if [ $rc -ne 0 ]; then echo "FAIL $name: txc exited $rc"; echo "$out" | head -5; fail=$((fail + 1)); continue; fi
  if ! diff -u "$gold" <(printf '%s\n' "$out") >/tmp/golden_ir_diff.$$ 2>&1; then
    echo "FAIL $name: IR differs from $gold"; head -20 /tmp/golden_ir_diff.$$; fail=$((fail + 1))
  fi
done
rm -f /tmp/golden_ir_diff.$$
echo "golden_ir: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
