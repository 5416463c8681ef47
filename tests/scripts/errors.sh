#!/usr/bin/env bash
# errors.sh TXC ROOT - golden diagnostics. Every tests/errors/NAME.tx must
# make `txc NAME.tx --emit=ir -o /dev/null [ARGS]` exit with status 1 (never
# crash or hang) and print exactly tests/errors/NAME.expected on stderr.
# NAME.args, when present, holds extra command-line arguments (one line).
# Runs from tests/errors with relative file names so the paths are stable.
TXC=$1
ROOT=$2
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
    echo "skipped: txc binary '$TXC' not found (tools/txc.c not built yet?)"
    exit 77
fi
case "$TXC" in /*) ;; *) TXC="$PWD/$TXC" ;; esac
cd "$ROOT/tests/errors" || { echo "no tests/errors under '$ROOT'"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for tx in *.tx; do
    name=${tx%.tx}
    n=$((n + 1))
    args=()
    if [ -f "$name.args" ]; then read -r -a args < "$name.args"; fi
    timeout 30 "$TXC" "$tx" --emit=ir -o /dev/null "${args[@]}" > /dev/null 2> "$tmp/err"
    rc=$?
    if [ $rc -eq 124 ]; then
        echo "FAIL $name: timed out"; fail=$((fail + 1)); continue
    fi
    if [ $rc -ge 128 ]; then
        echo "FAIL $name: crashed (exit status $rc)"; fail=$((fail + 1)); continue
    fi
    if [ $rc -ne 1 ]; then
        echo "FAIL $name: exit status $rc, expected 1"; fail=$((fail + 1)); continue
    fi
    if [ ! -f "$name.expected" ]; then
        echo "FAIL $name: no $name.expected"; fail=$((fail + 1)); continue
    fi
    if ! cmp -s "$name.expected" "$tmp/err"; then
        echo "FAIL $name: stderr differs from $name.expected:"
        diff "$name.expected" "$tmp/err" | head -20
        fail=$((fail + 1))
    fi
done
if [ $n -eq 0 ]; then echo "no golden files found"; exit 1; fi
echo "$((n - fail))/$n golden diagnostics match"
[ $fail -eq 0 ]
