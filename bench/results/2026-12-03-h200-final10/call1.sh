#!/usr/bin/env bash
# session 12 call 1: vector groups through views (rope etc.) verified and timed
set -u
R=$OUT; W=/tmp/c1; mkdir -p $W
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1 TX_PYTHON=$(command -v python3)
T0=$(date +%s); left() { echo $(( ${BUDGET:-420} - ($(date +%s) - T0) )); }
step() { local n=$1 cap=$2; shift 2; local l; l=$(left); [ "$l" -gt 20 ] || { echo "== $n: skipped"; return; }
  [ "$cap" -gt "$l" ] && cap=$l; echo "== $n (cap $cap s, at +$(( $(date +%s) - T0 )) s)"
  OUT=$W/$n timeout -k 5 "$cap" "$@" > $W/$n.log 2>&1; echo "   rc $?"; }
vv() {
  for p in "slice_inner|A=512 B=1024" "rotate_half_bf16|N=1000003" "concat_slice_f32|N=1000001" \
           "outer_bcast|B=4 H=32 S=1001" "outer_bcast_dims|B=4 H=32 S=2048 D=128" "rotate_rmsnorm|N=8191" \
           "softmax_bcast|B=4 H=16 Q=256 K=1024" "unaligned_f32|N=999999"; do
    IFS='|' read -r f s <<<"$p"; d=""; for x in $s; do d="$d -D $x"; done
    echo "== $f $s"; dist/bin/txc bench tests/vec_views/$f.tx $d --device=gpu --random-inputs=1 2>&1 | grep -E "verif|FAIL|error|mismatch|graph" | head -4
  done
  echo "== memcheck rope B=1 S=7"; compute-sanitizer --tool memcheck --print-limit 5 dist/bin/txc run bench/heldout/rope_rotate_half.tx -D B=1 -D S=7 --device=gpu --random-inputs=1 2>&1 | grep -E "ERROR SUMMARY|Invalid" | head -3
  echo "== memcheck outer_bcast B=2 H=3 S=5"; compute-sanitizer --tool memcheck --print-limit 5 dist/bin/txc run tests/vec_views/outer_bcast.tx -D B=2 -D H=3 -D S=5 --device=gpu --random-inputs=1 2>&1 | grep -E "ERROR SUMMARY|Invalid" | head -3
  echo "== memcheck rotate_rmsnorm N=37"; compute-sanitizer --tool memcheck --print-limit 5 dist/bin/txc run tests/vec_views/rotate_rmsnorm.tx -D N=37 --device=gpu --random-inputs=1 2>&1 | grep -E "ERROR SUMMARY|Invalid" | head -3
}
step vv 120 vv; cat $W/vv.log
step heldout 240 bash bench/heldout_check.sh --budget 230 --only rope_rotate_half,rotary,attn_rotary,dual_softmax,sinusoid_pos_ids,mamba_discretize,broadcast_5d,causal_conv1d,cosine_sim_bcast,gemm_tiny_k
grep -E "^\||geomean|worst" $W/heldout.log | tail -16
tar czf $R/c1.tgz -C /tmp c1 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
