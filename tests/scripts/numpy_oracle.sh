#!/bin/bash
# numpy_oracle.sh TXC ROOT - end-to-end check of `txc run --device=ref`
# against NumPy expectations written by hand (tests/oracle/oracle.py) for the
# programs in tests/oracle/*.tx: every built-in and composite, f16/bf16
# rounding, i32 edge cases, --random-inputs, and malformed input files.
# Exit 77 (skipped) while txc is missing or has no `run` subcommand, or
# when /usr/bin/python3 lacks NumPy.
TXC=$1
ROOT=${2:-.}
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
    echo "skip: txc binary '$TXC' not found"
    exit 77
fi
if ! "$TXC" --help 2>&1 | grep -q 'txc run'; then
    echo "skip: '$TXC' has no run subcommand yet"
    exit 77
fi
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "skip: $PY has no NumPy"
    exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tx_oracle.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
"$PY" "$ROOT/tests/oracle/oracle.py" "$TXC" "$ROOT" "$WORK"
