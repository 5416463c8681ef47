#!/usr/bin/env bash
# format.sh TXC ROOT - every C source and header follows .clang-format (the house style) and no
# line is over 100 columns. Skipped (77) where clang-format is not installed.
set -uo pipefail
ROOT=${2:-.}
cd "$ROOT" || exit 1
if ! command -v clang-format >/dev/null; then echo "format: clang-format not installed; skipped"; exit 77; fi
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "format: $f differs from .clang-format (run clang-format -i $f)"; bad=$((bad + 1)); fi
done
long=$(awk 'length > 100 { printf "%s:%d\n", FILENAME, FNR }' "${files[@]}")
[ -n "$long" ] && { echo "format: lines over 100 columns:"; echo "$long" | head; bad=$((bad + 1)); }
echo "format: ${#files[@]} files checked, $bad problems"
[ "$bad" -eq 0 ]
