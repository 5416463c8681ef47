#!/usr/bin/env bash
# binary_path.sh TXC ROOT - the txc binary lands where README, docs and
# scripts name it: at the top of the build tree (build/txc), not in a
# sub-folder. Fails when the built binary is elsewhere or when a doc or
# script still names build*/tools/txc.
TXC=$1
ROOT=$2
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
    echo "skipped: txc binary '$TXC' not found"
    exit 77
fi
fail=0
dir=$(cd "$(dirname "$TXC")" && pwd)
if [ ! -f "$dir/CMakeCache.txt" ]; then
    echo "FAIL: txc is built at $TXC, not at the top of its build tree"
    fail=1
fi
cd "$ROOT" || exit 1
grep -q 'cmake -B build && cmake --build build -j2 && build/txc ' README.md ||
    { echo "FAIL: README command 1 does not build and then run build/txc"; fail=1; }
stale=$(grep -rnE 'build[-a-z]*/tools/txc' README.md docs tools bench tests/scripts .ci 2>/dev/null |
    grep -v '^tests/scripts/binary_path.sh:')
if [ -n "$stale" ]; then
    echo "FAIL: these name the old binary path:"
    echo "$stale"
    fail=1
fi
[ $fail -eq 0 ] && echo "ok: $TXC is at the build root; docs and scripts agree"
exit $fail
