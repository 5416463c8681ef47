#!/bin/bash
# final3.sh PART : the lead's final measurement of main (repo root, dist/ carried); every step capped
set -u
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
T0=$(date +%s); W=/tmp/final; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
step() { # name cap cmd...
  local n=$1 cap=$2; shift 2
  echo "### $n $(date +%T) (+$(( $(date +%s) - T0 ))s)"
  mkdir -p $W/$n
  ( OUT=$W/$n timeout -k 5 $cap "$@" ) > $W/$n.log 2>&1
  echo "   rc $?"
}
if [ "${1:-1}" = 1 ]; then
step fa3 80 env QUICK=1 STEPS=time,sdpa,verify,tiles,sanitize BUDGET=72 bash bench/fa3_perf.sh; grep -A12 'fa3_perf summary' $W/fa3.log | head -14
step suite 150 env PER_TIMEOUT=40 TX_ANCHOR_DEADLINE=115 bash bench/run_suite.sh --iters 20 --no-unfused
grep -E '^\|' $W/suite/report.md 2>/dev/null | head -30 || tail -30 $W/suite.log
step block 65 env BLOCK_TIMEOUT=55 bash bench/block_check.sh --blocks-only; tail -8 $W/block.log
step sweep 128 bash bench/sweep.sh --deadline 118 --torch-reserve 45 --iters 5; tail -8 $W/sweep.log
step gemm 58 bash bench/gemm_shapes.sh; tail -32 $W/gemm.log
step decode 52 env BUDGET=48 bash bench/decode_check.sh; tail -12 $W/decode.log
else
step variants 62 bash bench/attn_check.sh; tail -25 $W/variants.log
step views 55 env BUDGET=50 bash bench/attn_views_check.sh; tail -20 $W/views.log
step pitch 36 bash bench/pitch_check.sh; tail -8 $W/pitch.log
step btime 36 env DEADLINE=28 KILL_AT=34 bash bench/bench_time.sh; tail -16 $W/btime.log
fi
tar -C /tmp -czf $OUT/final${1:-1}.tgz final
echo "final: done in $(( $(date +%s) - T0 )) s"
