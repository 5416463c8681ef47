#!/usr/bin/env bash
# swap.sh TXC ROOT - [matmul.wgmma.swap], the swapped-operand wgmma kernel of a short M (C^T =
# B^T A^T: M along wgmma's N in any multiple of 8 up to 256). For each program and shape,
#  1. `txc --target=sm_90a` with TX_WG_SWAP=2 (the swapped kernel wherever it is valid;
#     TX_WG_SWAP_BM pins its row tile) builds it: the manifest's template ends ` swap`, the
#     wgmma instruction is m64n<BM>k16 with the weight's transpose bit, ptxas -arch=sm_90a
#     assembles it without spills;
#  2. `txc run --device=cpu` under the same knob (TX_DIFF_DEVICE=gpu on a GPU machine: the
#     swapped kernel itself) agrees with `--device=ref` on the same random inputs.
# Then the plan from the shape: with TX_WG_SWAP=1 (offered, priced by the model) 300 x 5000 x
# 3000 and 33 x 4096 x 4096 take matmul.wgmma_swap with the --explain line of the rule, square
# shapes (2048^3, 1024^3) and a horizontal region do not; without the knob nothing does.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
DEV=${TX_DIFF_DEVICE:-cpu}
cp "$ROOT"/tests/gemm/{xw,linres,gelu,swiglu}.tx "$W"/
cases=( # row tile (- : the model's) | program | sizes
  "-|xw|M=300 N=520 K=700"
  "104|xw|M=300 N=333 K=250"
  "8|xw|M=1 N=304 K=136"
  "16|xw|M=16 N=264 K=520"
  "40|gelu|M=33 N=200 K=136"
  "-|linres|M=77 N=130 K=1001"
  "-|xw|M=200 N=301 K=1000"
  "256|gelu|M=250 N=136 K=72"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r bm prog sizes <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="swap bm $bm $prog $sizes"
  pin=""
  [ "$bm" != - ] && pin=$bm
  n=$((n + 1))
  bad=0
  # shellcheck disable=SC2086
  if ! TX_WG_SWAP=2 TX_WG_SWAP_BM=$pin "$TXC" "$W/$prog.tx" --target=sm_90a $defs -o "$W/k.ptx" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  tm=$(grep -o '"wgmma-tma-ws [^"]*"' "$W/k.ptx.json" | head -1)
  want="[0-9]*"
  [ -n "$pin" ] && want=$pin
  if ! grep -q "\"wgmma-tma-ws [0-9]*x${want}x64 [^\"]* swap\"" "$W/k.ptx.json"; then
    echo "FAIL $label: manifest template: $tm"
    bad=1
  fi
  bmv=$(sed -n 's/.*wgmma-tma-ws [0-9]*x\([0-9]*\)x64.*/\1/p' <<<"$tm")
  if ! grep -q "wgmma.mma_async.sync.aligned.m64n${bmv}k16" "$W/k.ptx"; then
    echo "FAIL $label: no m64n${bmv}k16 wgmma in the PTX"
    bad=1
  fi
  if [ -x "$PTXAS" ]; then
    if ! "$PTXAS" -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" 2>"$W/ptxas.log"; then
      echo "FAIL $label: ptxas: $(head -3 "$W/ptxas.log")"
      bad=1
    elif grep -q "[1-9][0-9]* bytes spill" "$W/ptxas.log"; then
      echo "FAIL $label: ptxas reports spills: $(grep spill "$W/ptxas.log" | sort -u | head -2)"
      bad=1
    fi
  fi
  # shellcheck disable=SC2086
  TX_WG_SWAP=2 TX_WG_SWAP_BM=$pin cpu_vs_ref --half "$label" 5 "$W/$prog.tx" $defs || { fail=1; continue; }
  [ $bad = 1 ] && { fail=1; continue; }
  echo "ok $label: $tm for sm_90a, ptxas clean; $DEV agrees with the reference"
done
# the plan from the shape
plan() { # EXPECT(swap|plain) KNOB PROGRAM SIZES
  local defs="" d
  for d in $4; do defs="$defs -D $d"; done
  n=$((n + 1))
  # shellcheck disable=SC2086
  if ! env ${2:+TX_WG_SWAP=$2} "$TXC" "$W/$3.tx" --target=sm_90a $defs --explain -o "$W/p.ptx" >"$W/explain" 2>&1; then
    echo "FAIL plan $3 $4: $(head -2 "$W/explain")"
    fail=1
    return
  fi
  local got=plain
  grep -q "\[matmul.wgmma_swap\] (bn=128, bm=[0-9]*, splits=[0-9]*, stages=[0-9]*) chosen by the model" "$W/explain" && got=swap
  if [ "$got" != "$1" ]; then
    echo "FAIL plan $3 $4 (TX_WG_SWAP=${2:-unset}): $got, expected $1: $(grep -m1 'chosen' "$W/explain")"
    fail=1
    return
  fi
  if [ "$got" = swap ] && ! grep -q "model: \[matmul.wgmma.swap\] C^T = B^T A^T: M = [0-9]* along wgmma's N in [0-9]* tiles\? of [0-9]* .*-> [0-9.]* us" "$W/explain"; then
    echo "FAIL plan $3 $4: no [matmul.wgmma.swap] model line"
    fail=1
    return
  fi
  echo "ok plan $3 $4 (TX_WG_SWAP=${2:-unset}): $got"
}
plan swap 1 xw "M=300 N=5000 K=3000"
plan swap 1 xw "M=300 N=6000 K=2000"
plan plain 1 xw "M=2048 N=2048 K=2048"
plan plain 1 xw "M=1024 N=1024 K=1024"
plan plain 1 swiglu "M=64 N=1000 K=512"
plan plain "" xw "M=300 N=5000 K=3000"
echo "swap: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
exit $fail
