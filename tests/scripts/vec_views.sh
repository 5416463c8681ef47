#!/usr/bin/env bash
# vec_views.sh TXC ROOT - vector groups through views (codegen/value.c: cg_vec_slice,
# cg_vec_concat along the innermost axis, cg_vec_bcast_outer, cg_vec_group's second start):
#  - the sm_90a PTX of each program in tests/vec_views/ has at least the expected count of
#    vector global loads and at most the expected count of scalar ones (the group-aligned cases
#    none; the unaligned ones fall back to scalar loads);
#  - ptxas -arch=sm_90a accepts it;
#  - `txc run --device=cpu` (the host runs the same vector groups) agrees with `--device=ref` on
#    random inputs (tests/gen/compare.py);
#  - the held-out rope_rotate_half at its GPU size reads q, k, cos and sin with vector loads only;
#  - cosine_sim_bcast's [N, 1, E] operand read by 8-lane host groups (32 bytes from 16-byte
#    aligned buffers: the host's vector accesses claim at most 16 bytes of alignment).
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
V=$ROOT/tests/vec_views
# program|sizes|least vector loads|most scalar loads|run (1/0)
cases=(
  "$V/slice_inner.tx|A=3 B=5|2|0|1"
  "$V/rotate_half_bf16.tx|N=7|3|0|1"
  "$V/concat_slice_f32.tx|N=9|3|0|1"
  "$V/outer_bcast.tx|B=2 H=3 S=5|4|0|1"
  "$V/outer_bcast_dims.tx|B=2 H=3 S=5 D=16|2|0|1"
  "$V/outer_bcast_dims.tx|B=2 H=3 S=5 D=12|0|-|1"
  "$V/rotate_rmsnorm.tx|N=37|3|0|1"
  "$V/softmax_bcast.tx|B=2 H=3 Q=5 K=64|3|0|1"
  "$V/softmax_bcast.tx|B=2 H=3 Q=5 K=4096|3|0|0"
  "$V/unaligned_f32.tx|N=9|0|-|1"
  "$ROOT/bench/heldout/rope_rotate_half.tx|B=4 S=4096|10|0|0"
  "$ROOT/bench/heldout/cosine_sim_bcast.tx|N=128 M=1024 E=256|4|-|1"
)
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes minv maxs run <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$(basename "$prog" .tx) $sizes"
  # shellcheck disable=SC2086
  if ! "$TXC" "$prog" $defs --target=sm_90a -o "$W/k.ptx" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  vec=$(grep -cE 'ld\.global(\.nc)?\.v[248]\.' "$W/k.ptx")
  scalar=$(grep -cE 'ld\.global(\.nc)?\.(u16|b16|s16|u32|b32|s32|f32)\s' "$W/k.ptx")
  bad=0
  [ "$vec" -ge "$minv" ] || { echo "FAIL $label: $vec vector loads, want at least $minv"; bad=1; }
  [ "$maxs" = - ] || [ "$scalar" -le "$maxs" ] ||
    { echo "FAIL $label: $scalar scalar loads, want at most $maxs"; bad=1; }
  ptxas_ok "$label" || bad=1
  # shellcheck disable=SC2086
  if [ "$run" = 1 ]; then cpu_vs_ref "$label" 3 "$prog" $defs || bad=1; fi
  [ $bad = 0 ] && echo "ok   $label: $vec vector loads, $scalar scalar"
  fail=$((fail | bad))
done
exit $fail
