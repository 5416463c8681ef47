#!/usr/bin/env bash
# split_stats.sh TXC ROOT [DEVICE] - [reduction.split_column_var] and [reduction.split_var] on
# statistics whose mean (1000) dwarfs their spread (0.3, normal): tests/split/midvar.tx (z = x +
# 1000, x of spread 0.3) and tests/split/colvar.tx (x of mean 1000) at 2, 4 and 64 to 128 chunks
# per column, tests/split/colvar02.tx (over (0, 2) of [B, C, T, F]: 8 chunks of T, and T = 97
# whole), tests/split/colrun.tx (over the run (1, 2): 16 chunks), tests/split/seqbn.tx (over
# (0, 2), w = 1, b = 0) at 32 and 8 runs. For each program and size,
#  1. --explain names the rule once (the split plan is what runs);
#  2. `txc run --device=ref` and `--device=DEVICE` (default cpu; gpu on the GPU machine:
#     bench/split_stats_gpu.sh) on the same NumPy inputs, every output checked by
#     tests/gen/split_stats.py against the exact f64 statistics within f32 bounds that do not grow
#     with the mean (mean: 0.5 ulp + 32 u x spread; variance: 32 u relative). Chunk statistics
#     about an unshifted origin fail them: f32 chunk means near 1000 carry 0.5 ulp(1000) each.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
DEV=${3:-cpu}
# program | -D sizes | x's shape | x's mean | reduced axes | added constant | eps | roles | rule |
# other inputs (NAME:SHAPE:VALUE, constant)
cases=(
  "midvar|B=3 T=64 C=45|3,64,45|0|1|1000|1e-3|var,norm|split_column_var|"
  "midvar|B=3 T=4096 C=45|3,4096,45|0|1|1000|1e-3|var,norm|split_column_var|"
  "colvar|N=128 C=40|128,40|1000|0|0|1e-5|mean,var,norm|split_column_var|"
  "colvar|N=4096 C=64|4096,64|1000|0|0|1e-5|mean,var,norm|split_column_var|"
  "colvar02|B=4 C=3 T=256 F=5|4,3,256,5|1000|0,2|0|1e-5|norm,mean,var|split_column_var|"
  "colvar02|B=8 C=2 T=97 F=3|8,2,97,3|1000|0,2|0|1e-5|norm,mean,var|split_column_var|"
  "colrun|B=2 T=64 H=8 C=5|2,64,8,5|1000|1,2|0|1e-5|norm,var|split_column_var|"
  "seqbn|B=32 C=16 L=64|32,16,64|1000|0,2|0|1e-5|norm,var,mean|split_var|w:16,1:1 b:16,1:0"
  "seqbn|B=8 C=24 L=1000|8,24,1000|1000|0,2|0|1e-5|norm,var,mean|split_var|w:24,1:1 b:24,1:0"
)
[ "$DEV" = gpu ] && cases+=("colvar02|B=32 C=8 T=1000 F=80|32,8,1000,80|1000|0,2|0|1e-5|norm,mean,var|split_column_var|"
  "colvar|N=32768 C=118|32768,118|1000|0|0|1e-5|mean,var,norm|split_column_var|"
  "seqbn|B=32 C=512 L=1000|32,512,1000|1000|0,2|0|1e-5|norm,var,mean|split_var|w:512,1:1 b:512,1:0")
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes shape mean axis add eps roles rule more <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  n=$((n + 1))
  bad=0
  $PY -c "import numpy as np; g = np.random.default_rng($n); np.save('$W/x.npy', ($mean + 0.3 * g.standard_normal(($shape,))).astype(np.float32))"
  ins="--input x=$W/x.npy"
  for m in $more; do
    IFS=':' read -r nm sh val <<<"$m"
    $PY -c "import numpy as np; np.save('$W/$nm.npy', np.full(($sh), $val, np.float32))"
    ins="$ins --input $nm=$W/$nm.npy"
  done
  # shellcheck disable=SC2086
  "$TXC" "$ROOT/tests/split/$prog.tx" $defs --explain -o "$W/k.ptx" >"$W/explain" 2>&1
  got=$(grep -c "\[reduction.$rule\]" "$W/explain")
  [ "$got" = 1 ] || { echo "FAIL $label: [reduction.$rule] $got times, want 1"; bad=1; }
  for dev in ref "$DEV"; do
    rm -rf "$W/o"
    # shellcheck disable=SC2086
    if ! "$TXC" run "$ROOT/tests/split/$prog.tx" $defs --device="$dev" $ins --output-dir "$W/o" \
      2>"$W/err"; then
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
