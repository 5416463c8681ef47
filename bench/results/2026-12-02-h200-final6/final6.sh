#!/bin/bash
# final6.sh PART TOTAL_S : the lead's final measurement (seventh session) of main (repo root, dist/ carried); steps in
# priority order, each capped, none started past the total. PART a or b (two device calls).
set -u
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
PART=${1:-a}; TOTAL=${2:-560}
T0=$(date +%s); W=/tmp/final-$PART; mkdir -p $W
# the checkout that travels may be older than dist/: use dist's bench and examples (the measured tree's)
cp -r dist/bench dist/examples . && mkdir -p tests && cp -r dist/oracle tests/ 2>/dev/null
cat dist/COMMIT 2>/dev/null
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
step suite 100 env PER_TIMEOUT=32 TX_ANCHOR_DEADLINE=80 bash bench/run_suite.sh --iters 20 --no-unfused
grep -E '^\|' $W/suite/report.md 2>/dev/null | head -30 || tail -30 $W/suite.log
step sgemm 45 bash -c 'TXC=dist/bin/txc OUT=$OUT/sg timeout 27 python3 dist/bench/sgemm_check.py --budget 25; TXC=dist/bin/txc OUT=$OUT/sk timeout 16 python3 dist/bench/small_k_check.py --budget 15'; tail -14 $W/sgemm.log
step rsplit 40 bash -c 'cd dist && TXC=bin/txc bash bench/rsplit_variants.sh'; tail -8 $W/rsplit.log
step decode 45 bash -c 'cd dist && TXC=bin/txc SUITE=shared/bench/suite BUDGET=43 STEPS=verify,verify2,b8,anchors,rows,qscale VERIFY_ENV=TX_ATTN_KS_TMA=1 VARIANTS="TX_ATTN_KS_TMA=1 -" ROW_VARIANTS="TX_ATTN_KS_TMA=1" bash bench/decode_ab.sh'; tail -10 $W/decode.log
step ragged 45 bash -c 'cd dist && BUDGET=42 bash bench/ragged_confirm.sh'; tail -8 $W/ragged.log
step vit 40 bash -c 'cd dist && TXC=bin/txc BUDGET=38 bash bench/vit_probe.sh'; tail -6 $W/vit.log
step fuse 35 bash -c 'cd dist && TXC=bin/txc bash bench/fuse_check.sh'; tail -6 $W/fuse.log
step heldout 170 bash bench/heldout_check.sh --budget 160 --workers 8; grep -E '^\|' $W/heldout.log | tail -3
else
step bmm 35 bash bench/bmm_check.sh; grep -E "bmm_bcast_a|summary" $W/bmm.log
step gemm 40 bash bench/gemm_shapes.sh; tail -6 $W/gemm.log
step gragged 45 bash bench/gemm_ragged.sh; tail -4 $W/gragged.log
step fa3 45 env QUICK=1 STEPS=time,sdpa,verify BUDGET=40 bash bench/fa3_perf.sh; grep -A12 'fa3_perf summary' $W/fa3.log | head -14
step attn_users 40 bash bench/attn_users.sh; grep -E '^\|' $W/attn_users.log | tail -8
step red 45 bash bench/red_s6.sh; grep -E '^\|' $W/red.log | tail -10
step block 40 env BLOCK_TIMEOUT=36 bash bench/block_check.sh --blocks-only; tail -8 $W/block.log
step sweep 60 bash bench/sweep.sh --deadline 55 --torch-reserve 24 --iters 5; tail -6 $W/sweep.log
fi
tar -C /tmp -czf $OUT/final-$PART.tgz final-$PART
echo "final $PART: done in $(( $(date +%s) - T0 )) s"
