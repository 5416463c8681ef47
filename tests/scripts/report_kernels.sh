#!/usr/bin/env bash
# report_kernels.sh TXC ROOT - the cost report counts the kernels the program launches: the JSON
# report's totals.kernels equals the number of kernels in the manifest of `txc -o p.ptx` (a row
# split's statistics kernel, split KV's combine and [matmul.wgmma.stage]'s copies included), and
# totals.unfused_kernels the manifest's of `--no-fuse`; the text report's totals line says the
# same count. Every public suite program at its bench sizes (sm_90a and the default target) and
# with its dims unbound, and the held-out programs whose splits and staging launch extra kernels.
# Skips (77) without /usr/bin/python3 or the suite.
set -u
TXC=${1:-} ROOT=${2:-}
SUITE="$ROOT/../shared/bench/suite"
HELD="$ROOT/bench/heldout"
PY=/usr/bin/python3
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then echo "report_kernels: txc '$TXC' not found; skipped"; exit 77; fi
if ! $PY -c 'import json' 2>/dev/null; then echo "report_kernels: no $PY; skipped"; exit 77; fi
if [ ! -d "$SUITE" ]; then echo "report_kernels: suite $SUITE not found; skipped"; exit 77; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# program | options
cases=(
  "$HELD/sample_probs_128k.tx|-D B=4 -D V=128256 --target=sm_90a"
  "$HELD/bert_mlm_head.tx|-D M=4096 -D V=30522 --target=sm_90a"
  "$HELD/llama_decode_step.tx|-D B=1 -D L=4095 -D H=32 -D D=4096 -D F=11008 --target=sm_90a"
)
for f in "$SUITE"/*.tx; do
  sizes=$(grep -o 'bench:.*' "$f" | head -1 | sed 's/^bench://')
  cases+=("$f|$sizes --target=sm_90a" "$f|$sizes" "$f|--target=sm_90a")
done
# manifest_count PTX: the number of kernels the manifest PTX.json lists
manifest_count() { $PY -c 'import json, sys; print(len(json.load(open(sys.argv[1] + ".json"))["kernels"]))' "$1"; }
fail=0 n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog opts <<<"$c"
  name="$(basename "$prog" .tx) $opts"
  n=$((n + 1))
  # shellcheck disable=SC2086
  if ! "$TXC" "$prog" $opts -o "$tmp/p.ptx" 2>"$tmp/err" ||
     ! "$TXC" "$prog" $opts --no-fuse -o "$tmp/u.ptx" 2>>"$tmp/err" ||
     ! "$TXC" "$prog" $opts --emit=json -o "$tmp/r.json" 2>>"$tmp/err" ||
     ! "$TXC" "$prog" $opts --emit=report -o "$tmp/r.txt" 2>>"$tmp/err"; then
    echo "FAIL $name: txc failed"; head -3 "$tmp/err"; fail=$((fail + 1)); continue
  fi
  got=$($PY -c 'import json, sys; t = json.load(open(sys.argv[1]))["totals"]; print(t["kernels"], t["unfused_kernels"])' "$tmp/r.json")
  want="$(manifest_count "$tmp/p.ptx") $(manifest_count "$tmp/u.ptx")"
  line=$(grep '^totals:' "$tmp/r.txt" | sed 's/,.*//')
  if [ "$got" != "$want" ] || [ "$line" != "totals: ${want% *} kernels (unfused ${want#* })" ]; then
    echo "FAIL $name: report says '$got' ($line), manifests launch '$want' (fused, unfused)"
    fail=$((fail + 1))
  fi
done
echo "report_kernels: $((n - fail)) of $n reports count the kernels launched"
[ $fail -eq 0 ]
