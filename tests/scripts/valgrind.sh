#!/usr/bin/env bash
# valgrind.sh TXC ROOT - compiles every public suite program under valgrind
# (docs/reliability.md): --emit=ir and --emit=report for each, --emit=report
# for each example, one --emit=ptx (through LLVM) and one failing compile.
# About 5 s of CPU per run (valgrind pays for LLVM's start-up each time). Any invalid read or write, use of an
# uninitialised value, invalid free, or definite leak fails the test. LLVM's
# "still reachable" memory does not count. Skipped (exit 77) without valgrind
# or when TXC is an ASan build (the two cannot run together).
set -u
TXC=${1:-}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
  echo "valgrind: txc binary '$TXC' not found; skipping"
  exit 77
fi
if ! command -v valgrind >/dev/null; then
  echo "valgrind: valgrind is not installed (apt-get install valgrind); skipping"
  exit 77
fi
if nm "$TXC" 2>/dev/null | grep -q '__asan_init' || ldd "$TXC" 2>/dev/null | grep -q libasan ||
  grep -q __asan_init "$TXC" 2>/dev/null; then
  echo "valgrind: $TXC is an AddressSanitizer build (valgrind cannot run it); skipping"
  exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/tx-valgrind.XXXXXX")
trap 'rm -rf "$W"' EXIT
SUITE="$ROOT/../shared/bench/suite"
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
  --show-leak-kinds=definite --track-origins=no --num-callers=24)
n=0 fail=0
check() { # check NAME ARGS...: one txc run under valgrind
  local name=$1
  shift
  n=$((n + 1))
  if timeout -k 10 300 "${VG[@]}" "$TXC" "$@" >"$W/out" 2>"$W/err"; then
    echo "ok   $name"
  else
    local rc=$?
    fail=$((fail + 1))
    echo "FAIL $name (exit $rc: 99 = valgrind found errors, 124 = timeout)"
    head -c 3000 "$W/err" | sed 's/^/     | /'
  fi
}
progs=()
for f in "$SUITE"/*.tx; do [ -f "$f" ] && progs+=("$f"); done
if [ ${#progs[@]} -eq 0 ]; then
  echo "valgrind: no suite programs found under $SUITE; skipping"
  exit 77
fi
for f in "${progs[@]}"; do
  b=$(basename "$f" .tx)
  check "$b --emit=ir" "$f" --emit=ir -o "$W/$b.ir"
  check "$b --emit=report" "$f" --emit=report -o "$W/$b.txt"
done
for f in "$ROOT"/examples/*.tx; do
  [ -f "$f" ] && check "example $(basename "$f" .tx) --emit=report" "$f" --emit=report -o "$W/ex.txt"
done
# One program through LLVM and NVPTX (slow under valgrind: one is enough).
ptx=$SUITE/layernorm.tx
[ -f "$ptx" ] || ptx=${progs[0]}
check "$(basename "$ptx" .tx) --emit=ptx" "$ptx" --emit=ptx -o "$W/p.ptx"
# And one compile that fails, so the error paths free what they took.
printf 'fn f(x: f32[N]) -> f32[N] {\n  return x @ nope(x)\n}\n' >"$W/bad.tx"
n=$((n + 1))
timeout -k 10 120 "${VG[@]}" "$TXC" "$W/bad.tx" --emit=ir -o "$W/bad.ir" >"$W/out" 2>"$W/err"
rc=$?
if [ $rc -eq 1 ]; then echo "ok   error path (exit 1)"; else
  fail=$((fail + 1)); echo "FAIL error path: exit $rc, want 1"; head -c 3000 "$W/err" | sed 's/^/     | /'
fi
echo "valgrind: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
