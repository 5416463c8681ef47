#!/usr/bin/env bash
# tile_fill.sh TXC ROOT - the wgmma tiles that fill more SMs on ragged, under-filled shapes: the
# 128x192 block tile (N = 5000: 27 tiles of 192 instead of 20 of 256) and the 64-row tiles of a
# known M up to 512 (M = 300: 5 of 64 rows instead of 3 of 128). For each program and shape,
#  1. `txc --target=sm_90a` with TX_WG_TILE=BMxBN (the knob that pins one tile of the space)
#     builds that tile: the manifest's template starts `wgmma-tma-ws BMxBNx64`, and the
#     unpinned plan's --explain names [matmul.wgmma] with the model's time;
#  2. `txc run --device=cpu` (TX_DIFF_DEVICE=gpu on a GPU machine: the pinned kernel itself)
#     agrees with `--device=ref` on the same random inputs (tests/gen/compare.py).
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
DEV=${TX_DIFF_DEVICE:-cpu}
cp "$ROOT"/tests/gemm/{xw,linres,gelu,swiglu}.tx "$W"/ # the shared GEMM programs
cases=(
  "128x192|xw|M=300 N=520 K=700"
  "128x192|gelu|M=200 N=400 K=960"
  "128x192|linres|M=129 N=584 K=1000"
  "64x128|linres|M=300 N=520 K=700"
  "64x64|xw|M=77 N=450 K=300"
  "64x128|swiglu|M=130 N=300 K=512"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r tile prog sizes <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$tile $prog $sizes"
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! TX_WG_TILE=$tile "$TXC" "$W/$prog.tx" --target=sm_90a $defs -o "$W/k.ptx" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! grep -q "\"wgmma-tma-ws ${tile}x64 " "$W/k.ptx.json"; then
    echo "FAIL $label: manifest template: $(grep -o '"wgmma-tma-ws[^"]*"' "$W/k.ptx.json" | head -1)"
    bad=1
  fi
  # shellcheck disable=SC2086
  if ! "$TXC" "$W/$prog.tx" --target=sm_90a $defs --explain -o "$W/u.ptx" >"$W/explain" 2>&1 ||
    ! grep -q "\[matmul.wgmma\] (bm=[0-9]*, bn=[0-9]*, splits=[0-9]*, stages=[0-9]*) chosen by the model.*predicted [0-9.]* us" "$W/explain"; then
    echo "FAIL $label: the unpinned --explain does not name [matmul.wgmma] with the model's time:"
    grep "matmul" "$W/explain" | head -3
    bad=1
  fi
  # shellcheck disable=SC2086
  TX_WG_TILE=$tile cpu_vs_ref --half "$label" 5 "$W/$prog.tx" $defs || { fail=1; continue; }
  [ $bad = 1 ] && { fail=1; continue; }
  echo "ok $label: $(grep -o '"wgmma-tma-ws[^"]*"' "$W/k.ptx.json" | head -1) for sm_90a; $DEV agrees with the reference"
done
echo "tile_fill: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
