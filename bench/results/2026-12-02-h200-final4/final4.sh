#!/bin/bash
# final4.sh TOTAL_S : the lead's final measurement of main (repo root, dist/ carried); steps in priority
# order, each capped, none started past the total
set -u
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
TOTAL=${1:-420}
T0=$(date +%s); W=/tmp/final; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
step() { # name cap cmd...
  local n=$1 cap=$2; shift 2
  local left=$(( TOTAL - ($(date +%s) - T0) - 8 ))
  if [ $left -lt 15 ]; then echo "### $n skipped: out of time"; return; fi
  [ $cap -gt $left ] && cap=$left
  echo "### $n $(date +%T) (+$(( $(date +%s) - T0 ))s) cap $cap"
  mkdir -p $W/$n
  ( OUT=$W/$n timeout -k 5 $cap "$@" ) > $W/$n.log 2>&1
  echo "   rc $?"
}
step suite 115 env PER_TIMEOUT=35 TX_ANCHOR_DEADLINE=90 bash bench/run_suite.sh --iters 20 --no-unfused
grep -E '^\|' $W/suite/report.md 2>/dev/null | head -30 || tail -30 $W/suite.log
step heldout 70 bash bench/heldout_check.sh; grep -E '^\|' $W/heldout.log | tail -50
step fa3 50 env QUICK=1 STEPS=time,sdpa,verify BUDGET=45 bash bench/fa3_perf.sh; grep -A12 'fa3_perf summary' $W/fa3.log | head -14
step gemm 45 bash bench/gemm_shapes.sh; tail -32 $W/gemm.log
step block 40 env BLOCK_TIMEOUT=36 bash bench/block_check.sh --blocks-only; tail -8 $W/block.log
step decode 40 env BUDGET=36 bash bench/decode_check.sh; tail -12 $W/decode.log
step sweep 70 bash bench/sweep.sh --deadline 64 --torch-reserve 28 --iters 5; tail -8 $W/sweep.log
step views 40 env BUDGET=35 bash bench/attn_views_check.sh; tail -20 $W/views.log
step variants 45 bash bench/attn_check.sh; tail -25 $W/variants.log
step pitch 30 bash bench/pitch_check.sh; tail -8 $W/pitch.log
tar -C /tmp -czf $OUT/final.tgz final
echo "final: done in $(( $(date +%s) - T0 )) s"
