#!/usr/bin/env bash
# Golden cost reports: `txc --emit=report` and `--explain` of a few public
# suite programs must match tests/golden/report/<case>.{report,explain}
# byte for byte. UPDATE=1 rewrites the golden files instead of comparing.
# Usage: golden_report.sh TXC ROOT (exit 77: skipped).
set -u
TXC=${1:-} ROOT=${2:-}
SUITE="$ROOT/../shared/bench/suite"
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then echo "golden_report: txc binary '$TXC' not found; skipped"; exit 77; fi
case "$TXC" in /*) ;; *) TXC="$PWD/$TXC" ;; esac
if [ ! -d "$SUITE" ]; then echo "golden_report: suite $SUITE not found; skipped"; exit 77; fi
GOLD="$ROOT/tests/golden/report"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# case name | program | options
cases=(
  "add_relu|add_relu.tx|-D N=1048576"
  "softmax_wide|softmax_wide.tx|-D M=4096 -D N=65536"
  "softmax_wide_onchip|softmax_wide.tx|-D M=4096 -D N=65536 --sram-budget=262208"
  "layernorm|layernorm.tx|-D M=32768 -D N=4096"
  "mlp_block|mlp_block.tx|-D M=8192 -D D=4096 -D F=11008"
  "mlp_block_sm90a|mlp_block.tx|-D M=8192 -D D=4096 -D F=11008 --target=sm_90a"
  "attention|attention.tx|-D B=4 -D H=32 -D S=4096 -D D=128"
  "attention_sm90a|attention.tx|-D B=4 -D H=32 -D S=4096 -D D=128 --target=sm_90a"
  "matmul_bias_gelu_sm80|matmul_bias_gelu.tx|-D M=4096 -D N=4096 -D K=4096 --target=sm_80"
  "attention_small_budget|attention.tx|-D B=4 -D H=32 -D S=4096 -D D=128 --sram-budget=10000"
  "attention_symbolic|attention.tx|"
  "swiglu_symbolic|swiglu.tx|"
  "matmul_bias_gelu_l4|matmul_bias_gelu.tx|-D M=4096 -D N=4096 -D K=4096 --gpu=l4"
)
fail=0 n=0
for c in "${cases[@]}"; do
  IFS='|' read -r name prog opts <<<"$c"
  n=$((n + 1))
  # shellcheck disable=SC2086
  (cd "$SUITE" && "$TXC" "$prog" $opts --emit=report --explain -o "$tmp/$name.report" >"$tmp/$name.explain" 2>"$tmp/$name.err")
  rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL $name: txc exited $rc"; head -5 "$tmp/$name.err"; fail=$((fail + 1)); continue; fi
  for kind in report explain; do
    if [ "${UPDATE:-0}" = 1 ]; then mkdir -p "$GOLD"; cp "$tmp/$name.$kind" "$GOLD/$name.$kind"; continue; fi
    if ! diff -u "$GOLD/$name.$kind" "$tmp/$name.$kind" >"$tmp/diff" 2>&1; then
      echo "FAIL $name: --emit=$kind output differs from $GOLD/$name.$kind"; head -20 "$tmp/diff"; fail=$((fail + 1))
    fi
  done
done
echo "golden_report: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
