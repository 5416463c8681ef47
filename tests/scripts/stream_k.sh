#!/usr/bin/env bash
# stream_k.sh TXC ROOT - GEMMs under stream-K ([matmul.wgmma.streamk]: the tiles x k steps cut
# evenly over persistent CTAs, partial tiles added by the CTA that starts the tile, the epilogue
# once after): ragged shapes of a plain product, a bias + gelu with an f32 output, a residual add
# and SwiGLU's twin products. For each program and shape,
#  1. `txc --target=sm_90a` with TX_WG_STREAMK=1 (the knob that takes the model's best stream-K
#     tile where the shape has one) plans it: --explain names the rule with its numbers, the
#     manifest's template says streamkN and lists the workspace temp with "zero": true;
#  2. `txc run --device=cpu` (TX_DIFF_DEVICE=gpu on a GPU machine: the stream-K kernel itself)
#     agrees with `--device=ref` on the same random inputs (tests/gen/compare.py).
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
DEV=${TX_DIFF_DEVICE:-cpu}
cp "$ROOT"/tests/gemm/{xw,linres,gelu,swiglu}.tx "$W"/ # the shared GEMM programs
cases=(
  "xw|M=300 N=520 K=700"
  "xw|M=129 N=264 K=1000"
  "gelu|M=200 N=640 K=960"
  "linres|M=77 N=384 K=1100"
  "swiglu|M=130 N=384 K=512"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! TX_WG_STREAMK=1 "$TXC" "$W/$prog.tx" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! grep -q "\[matmul.wgmma.streamk\] [0-9]* tiles x [0-9]* k steps = [0-9]* units on [0-9]* CTAs" "$W/explain"; then
    echo "FAIL $label: --explain does not name [matmul.wgmma.streamk]:"
    grep "model:" "$W/explain" | head -3
    bad=1
  fi
  if ! $PY - "$W/k.ptx.json" "$label" <<'PYEOF'; then
import json, sys
m, label = json.load(open(sys.argv[1])), sys.argv[2]
wg = [k for k in m["kernels"] if "streamk" in k.get("template", "")]
zt = [t for t in m["temps"] if t.get("zero")]
ok = len(wg) == 1 and len(zt) == 1 and zt[0]["dtype"] == "f32"
if not ok:
    print("FAIL %s: manifest: %d stream-K kernels (%s), zeroed temps %s" % (
        label, len(wg), [k.get("template") for k in m["kernels"]], zt))
sys.exit(0 if ok else 1)
PYEOF
    bad=1
  fi
  # shellcheck disable=SC2086
  TX_WG_STREAMK=1 cpu_vs_ref --half "$label" 3 "$W/$prog.tx" $defs || { fail=1; continue; }
  [ $bad = 1 ] && { fail=1; continue; }
  echo "ok $label: stream-K for sm_90a ($(grep -o 'streamk[0-9]*' "$W/k.ptx.json" | head -1)); $DEV agrees with the reference"
done
echo "stream_k: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
