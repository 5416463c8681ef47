#!/usr/bin/env bash
# attention_f32.sh TXC ROOT - f32 attention on the CUDA cores ([attention.simt]): each program of
# tests/attention/f32/ at small and ragged sizes (S = 64 / D = 32, S = 50 / D = 40 with Dv = 40,
# S = 9 / D = 7 / Dv = 5, S = 200 / D = 128 / Dv = 96, GPT-J's head dim 256 (64-row tiles of 255
# registers at most, one block an SM; S = 77 causal, S = 40 with Dv = 200; TX_ATTN_SG_WIDE=0's 32-row
# tiles within 128), the held-out Swin-V2 cosine attention):
#  1. on --target=sm_90a the plan prices the region as [attention.simt] (the f32 rate, not the
#     tensor cores), takes the tile the shape gives (64 query rows at S <= 64, 16 at S <= 16) and
#     the kernel's template names it; ptxas compiles it without spills within 128 registers (the
#     two blocks per SM the model assumes);
#  2. --device=cpu (the fused host code) agrees with --device=ref (tests/gen/compare.py); with
#     TX_DIFF_DEVICE=gpu the same comparison runs the GPU kernel (on a GPU machine).
# Skips (77) without Python + NumPy.
. "$(dirname "$0")/lib/setup.sh" "$@"
DEV=${TX_DIFF_DEVICE:-cpu}
fail=0

# check LABEL FILE TILE TEMPLATE -D...: the plan, the PTX, then DEV against ref.
check() {
  local label=$1 file=$2 tile=$3 tmpl=$4
  shift 4
  if ! "$TXC" "$file" "$@" --target=sm_90a --emit=report -o "$W/r.txt" 2>"$W/err"; then
    echo "FAIL $label: report: $(head -3 "$W/err")"
    return 1
  fi
  grep -q "model: \[attention.simt\]" "$W/r.txt" || { echo "FAIL $label: not priced as [attention.simt]"; return 1; }
  grep -q "ridge .* (f32)" "$W/r.txt" || { echo "FAIL $label: the attention's ridge is not the f32 rate"; return 1; }
  grep -q "tile ($tile, " "$W/r.txt" || { echo "FAIL $label: tile not ($tile, ...): $(grep 'tile (' "$W/r.txt" | tail -1)"; return 1; }
  "$TXC" "$file" "$@" --target=sm_90a -o "$W/k.ptx" 2>"$W/err" || { echo "FAIL $label: ptx: $(head -3 "$W/err")"; return 1; }
  grep -q "\"template\": \"$tmpl" "$W/k.ptx.json" || { echo "FAIL $label: no template '$tmpl'"; return 1; }
  if [ -x "$PTXAS" ]; then
    "$PTXAS" -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" >"$W/ptxas.txt" 2>&1 || { echo "FAIL $label: ptxas: $(head -3 "$W/ptxas.txt")"; return 1; }
    local e
    e=$(grep -o "entry function '[^']*'" "$W/ptxas.txt" | sed "s/.*'\(.*\)'/\1/" | while read -r f; do
      if grep -q "\"name\": \"$f\".*simt-attn" "$W/k.ptx.json"; then echo "$f"; fi; done | head -1)
    if [ -n "$e" ]; then
      local props
      props=$(grep -A3 "Function properties for $e\$" "$W/ptxas.txt")
      echo "$props" | grep -q " 0 bytes spill stores, 0 bytes spill loads" || { echo "FAIL $label: spills: $props"; return 1; }
      local regs
      regs=$(echo "$props" | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p')
      [ -n "$regs" ] && [ "$regs" -le "${REGS:-128}" ] || { echo "FAIL $label: $regs registers > ${REGS:-128}"; return 1; }
    fi
  fi
  rm -rf "$W/dev" "$W/ref"
  "$TXC" run "$file" "$@" --device=ref --random-inputs=7 --output-dir "$W/ref" 2>"$W/err" || { echo "FAIL $label: ref: $(head -3 "$W/err")"; return 1; }
  timeout 300 "$TXC" run "$file" "$@" --device="$DEV" --random-inputs=7 --output-dir "$W/dev" 2>"$W/err" || { echo "FAIL $label: $DEV: $(head -3 "$W/err")"; return 1; }
  local half=""
  grep -qE '\b(f16|bf16)\b' "$file" && half=half
  $PY "$ROOT/tests/gen/compare.py" "$W/dev" "$W/ref" "$label ($DEV)" $half || return 1
  echo "ok $label"
}

A=$ROOT/tests/attention/f32
check "plain S64 D32" "$A/plain.tx" 64 "simt-attn 64x64 t4x4" -D B=3 -D S=64 -D D=32 -D E=32 || fail=1
check "plain S50 D40" "$A/plain.tx" 64 "simt-attn 64x64 t4x4" -D B=2 -D S=50 -D D=40 -D E=40 || fail=1
check "plain S9 D7 E5" "$A/plain.tx" 16 "simt-attn 16x16 t1x1" -D B=3 -D S=9 -D D=7 -D E=5 || fail=1
check "plain S200 D128 E96" "$A/plain.tx" 64 "simt-attn 64x32 t4x2" -D B=1 -D S=200 -D D=128 -D E=96 || fail=1
REGS=255 check "plain S40 D256 E200" "$A/plain.tx" 64 "simt-attn 64x32 t4x2 v" -D B=1 -D S=40 -D D=256 -D E=200 || fail=1
REGS=255 check "causal S77 D256" "$A/causal.tx" 64 "simt-attn 64x32 t4x2 v4" -D B=2 -D S=77 -D D=256 || fail=1
TX_ATTN_SG_WIDE=0 check "causal S77 D256 narrow" "$A/causal.tx" 32 "simt-attn 32x32 t2x2 v4" -D B=2 -D S=77 -D D=256 || fail=1
check "causal S77 D64" "$A/causal.tx" 64 "simt-attn 64x64 t4x4" -D B=2 -D S=77 -D D=64 || fail=1
check "causal S30 D16" "$A/causal.tx" 32 "simt-attn 32x32 t2x2" -D B=2 -D S=30 -D D=16 || fail=1
check "swinv2 cosine" "$ROOT/bench/heldout/swinv2_cosine_attn.tx" 64 "simt-attn 64x64 t4x4" -D B=5 -D H=3 || fail=1
exit $fail
