#!/usr/bin/env bash
# odd_pitch.sh TXC ROOT - GEMMs whose operand or output rows are not a multiple of 16 bytes
# (bf16/f16 N = 999, 1500, 3001, K = 1001, 4099, f32 outputs of odd width, M = 1 .. 64): for each
# program and shape,
#  1. `txc --target=sm_90a` plans the wgmma kernel with [matmul.wgmma.stage] (a staging kernel
#     per operand whose rows TMA cannot read, the GEMM's tensor maps at the copy's pitch), or for
#     at most 64 rows the skinny kernel that reads them in place ([matmul.skinny]: one kernel, no
#     staging), and --explain names the rule with its numbers;
#  2. `txc run --device=cpu` (or TX_DIFF_DEVICE=gpu on a GPU machine: the staged and skinny
#     kernels themselves) agrees with `--device=ref` on the same random inputs
#     (tests/gen/compare.py).
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
DEV=${TX_DIFF_DEVICE:-cpu}
cp "$ROOT"/tests/gemm/{xw,linres,gelu,swiglu}.tx "$W"/ # the shared GEMM programs
printf 'fn f(xt: bf16[K, M], w: bf16[N, K]) -> bf16[M, N] {\n  return transpose(xt, 0, 1) @ transpose(w, 0, 1)\n}\n' >"$W/at.tx"
# file | -D sizes | staged operands the plan must name (A, B or A, B; none: only the output's
# rows are odd, stored by the register epilogue; skinny: at most 64 rows, read in place)
cases=(
  "xw|M=300 N=999 K=1001|A, B"
  "xw|M=16 N=1500 K=256|skinny"
  "linres|M=70 N=3001 K=200|none"
  "linres|M=16 N=128 K=4099|skinny"
  "gelu|M=65 N=999 K=1001|A, B"
  "swiglu|M=33 N=999 K=128|skinny"
  "xw|M=1 N=999 K=1001|skinny"
  "linres|M=7 N=301 K=1001|skinny"
  "xw|M=37 N=999 K=1001|skinny"
  "gelu|M=64 N=1001 K=515|skinny"
  "at|M=17 N=200 K=999|skinny"
  "swiglu|M=64 N=257 K=1001|skinny"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes want <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! "$TXC" "$W/$prog.tx" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if [ "$want" = none ]; then
    grep -q "matmul.wgmma.stage" "$W/explain" && { echo "FAIL $label: stages an operand TMA can read"; bad=1; }
  elif [ "$want" = skinny ]; then
    grep -q "\[matmul.skinny\] operands read in place" "$W/explain" || {
      echo "FAIL $label: --explain does not name [matmul.skinny]:"
      grep "model:" "$W/explain" | head -3
      bad=1
    }
  elif ! grep -q "\[matmul.wgmma.stage\] [0-9] operands\? ($want)" "$W/explain"; then
    echo "FAIL $label: --explain does not name [matmul.wgmma.stage] for ($want):"
    grep "model:" "$W/explain" | head -3
    bad=1
  fi
  if ! $PY - "$W/k.ptx.json" "$label" "$want" <<'PYEOF'; then
import json, sys
m, label, want = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
ks = m["kernels"]
st = [k for k in ks if k.get("template", "").startswith("stage")]
wg = [k for k in ks if k.get("template", "").startswith("wgmma")]
maps = [t for k in wg for t in k.get("tensor_maps", []) if "pitch" in t]
sk = [k for k in ks if k.get("template", "").startswith("mma-skinny")]
if want == "skinny":
    ok = len(ks) == 1 and len(sk) == 1 and not st
elif want == "none":
    ok = wg and not st and not maps
else:
    ok = st and wg and len(maps) >= len(want.split(", ")) and all(
        t["pitch"] * 2 % 128 == 0 and t["pitch"] >= t["dims"][0] for t in maps)
if not ok:
    print("FAIL %s: manifest: %d staging, %d wgmma, %d skinny kernels, pitched maps %s" % (
        label, len(st), len(wg), len(sk), maps))
sys.exit(0 if ok else 1)
PYEOF
    bad=1
  fi
  # shellcheck disable=SC2086
  cpu_vs_ref --half "$label" 3 "$W/$prog.tx" $defs || { fail=1; continue; }
  [ $bad = 1 ] && { fail=1; continue; }
  echo "ok $label: sm_90a: $([ "$want" = skinny ] && echo 'skinny kernel' || echo "staged operands: $want"); $DEV agrees with the reference"
done
echo "odd_pitch: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
