#!/bin/bash
# final5.sh PART TOTAL_S : the lead's final measurement of main (repo root, dist/ carried); steps in
# priority order, each capped, none started past the total. PART a or b (two device calls).
set -u
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
PART=${1:-a}; TOTAL=${2:-560}
T0=$(date +%s); W=/tmp/final-$PART; mkdir -p $W
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
if [ "$PART" = a ]; then
step suite 110 env PER_TIMEOUT=35 TX_ANCHOR_DEADLINE=88 bash bench/run_suite.sh --iters 20 --no-unfused
grep -E '^\|' $W/suite/report.md 2>/dev/null | head -30 || tail -30 $W/suite.log
step heldout 175 bash bench/heldout_check.sh --budget 165 --workers 8; grep -E '^\|' $W/heldout.log | tail -3
step sgemm 55 bash bench/sgemm_check.sh --budget 50; tail -20 $W/sgemm.log
step bmm 40 bash bench/bmm_check.sh; grep -E 'summary' $W/bmm.log
step attn_users 45 bash bench/attn_users.sh; grep -E '^\|' $W/attn_users.log | tail -8
step fa3 50 env QUICK=1 STEPS=time,sdpa,verify BUDGET=45 bash bench/fa3_perf.sh; grep -A12 'fa3_perf summary' $W/fa3.log | head -14
step gemm 45 bash bench/gemm_shapes.sh; tail -6 $W/gemm.log
step decode 40 env BUDGET=36 bash bench/decode_check.sh; tail -8 $W/decode.log
else
step sgemm 50 bash bench/sgemm_check.sh --budget 45; tail -16 $W/sgemm.log
step bmm 40 bash bench/bmm_check.sh; grep -E "bmm_bcast_a|summary" $W/bmm.log
step ragged 55 bash bench/gemm_ragged.sh; tail -4 $W/ragged.log
step red 55 bash bench/red_s6.sh; grep -E '^\|' $W/red.log | tail -10
step block 40 env BLOCK_TIMEOUT=36 bash bench/block_check.sh --blocks-only; tail -8 $W/block.log
step ctime 55 bash bench/ctime_gpu.sh; tail -8 $W/ctime.log
step sweep 70 bash bench/sweep.sh --deadline 64 --torch-reserve 28 --iters 5; tail -6 $W/sweep.log
step variants 45 bash bench/attn_check.sh; tail -10 $W/variants.log
fi
tar -C /tmp -czf $OUT/final-$PART.tgz final-$PART
echo "final $PART: done in $(( $(date +%s) - T0 )) s"
