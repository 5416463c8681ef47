#!/usr/bin/env bash
# split_stats.sh TXC ROOT [DEVICE] - [reduction.split_column_var] on columns whose mean (1000)
# dwarfs their spread (0.3, normal): tests/split/midvar.tx (z = x + 1000, x of spread 0.3) and
# tests/split/colvar.tx (x of mean 1000), at sizes of 2, 4 and 64 to 128 chunks per column. For each
# program and size,
#  1. --explain names [reduction.split_column_var] once (the split plan is what runs);
#  2. `txc run --device=ref` and `--device=DEVICE` (default cpu; gpu on the GPU machine:
#     bench/split_stats_gpu.sh) on the same NumPy inputs, every output checked by
#     tests/gen/split_stats.py against the exact f64 statistics within f32 bounds that do not grow
#     with the mean (mean: 0.5 ulp + 32 u x spread; variance: 32 u relative). Chunk statistics
#     about an unshifted origin fail them: f32 chunk means near 1000 carry 0.5 ulp(1000) each.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
DEV=${3:-cpu}
# program | -D sizes | input shape | input mean | reduced axis | added constant | eps | roles
cases=(
  "midvar|B=3 T=64 C=45|3,64,45|0|1|1000|1e-3|var,norm"
  "midvar|B=3 T=4096 C=45|3,4096,45|0|1|1000|1e-3|var,norm"
  "colvar|N=128 C=40|128,40|1000|0|0|1e-5|mean,var,norm"
  "colvar|N=4096 C=64|4096,64|1000|0|0|1e-5|mean,var,norm"
)
[ "$DEV" = gpu ] && cases+=("colvar|N=32768 C=118|32768,118|1000|0|0|1e-5|mean,var,norm")
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes shape mean axis add eps roles <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  $PY -c "import numpy as np; g = np.random.default_rng($n); np.save('$W/x.npy', ($mean + 0.3 * g.standard_normal(($shape,))).astype(np.float32))"
  # shellcheck disable=SC2086
  "$TXC" "$ROOT/tests/split/$prog.tx" $defs --explain -o "$W/k.ptx" >"$W/explain" 2>&1
  got=$(grep -c "\[reduction.split_column_var\]" "$W/explain")
  [ "$got" = 1 ] || { echo "FAIL $label: [reduction.split_column_var] $got times, want 1"; bad=1; }
  for dev in ref "$DEV"; do
    rm -rf "$W/o"
    # shellcheck disable=SC2086
    if ! "$TXC" run "$ROOT/tests/split/$prog.tx" $defs --device="$dev" --input x="$W/x.npy" \
      --output-dir "$W/o" 2>"$W/err"; then
      echo "FAIL $label: --device=$dev failed: $(head -3 "$W/err")"
      bad=1
    elif ! $PY "$ROOT/tests/gen/split_stats.py" "$W/x.npy" "$axis" "$add" "$eps" "$W/o" "$roles" \
      "$label $dev" >"$W/check"; then
      echo "FAIL $label ($dev):"
      grep -v " 0 of " "$W/check"
      bad=1
    fi
  done
  [ $bad = 0 ] && echo "ok   $label ($(grep -o 'worst error / bound [0-9.e-]*' "$W/check" | awk '{print $5}' | tr '\n' ' '))"
  [ $bad = 0 ] || fail=1
done
echo "split_stats ($DEV): $n programs, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
[ $fail = 0 ]
