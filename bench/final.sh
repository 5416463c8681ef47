#!/bin/bash
# bench/final.sh TOTAL_S STEP... : a session's closing measurement of the tree that dist/ was built from,
# run on the GPU machine from the repository root with dist/ carried (tools/make-dist.sh). Each STEP is
# one name from the table below; steps run in the order given, each under its cap, and none is started
# when fewer than 15 s of TOTAL_S are left, so the pack at the end always happens. Every step's log and
# files land in /tmp/final/NAME{.log,/}, packed into $OUT/final.tgz; the summary lines go to stdout.
#
#   bash bench/final.sh 540 suite heldout sgemm     # three steps within 540 s
#   bash bench/final.sh list                        # print the step names and caps
set -u
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1

# name | cap (s) | command (run with OUT set to the step's folder) | summary shown after it
STEPS='
suite|100|env PER_TIMEOUT=32 TX_ANCHOR_DEADLINE=80 bash bench/run_suite.sh --iters 20 --no-unfused|grep -E "^\|" $W/suite/report.md | head -30
heldout|170|bash bench/heldout_check.sh --budget 160 --workers 8|grep -E "^\|" $W/heldout.log | tail -3
sgemm|45|bash -c "TXC=dist/bin/txc OUT=\$OUT/sg timeout 27 python3 dist/bench/sgemm_check.py --budget 25; TXC=dist/bin/txc OUT=\$OUT/sk timeout 16 python3 dist/bench/small_k_check.py --budget 15"|tail -14 $W/sgemm.log
sgdiag|40|bash -c "TXC=dist/bin/txc python3 dist/bench/sgemm_batch_diag.py --budget 35"|tail -12 $W/sgdiag.log
rsplit2|50|bash -c "cd dist && TXC=bin/txc bash bench/rsplit2_check.sh"|tail -8 $W/rsplit2.log
swap|55|bash -c "BUDGET=52 bash dist/bench/swap_check.sh"|tail -16 $W/swap.log
rsplit|40|bash -c "cd dist && TXC=bin/txc bash bench/rsplit_variants.sh"|tail -8 $W/rsplit.log
rcheck|40|bash -c "cd dist && TXC=bin/txc bash bench/rsplit_check.sh"|tail -8 $W/rcheck.log
decode|45|bash -c "cd dist && TXC=bin/txc SUITE=shared/bench/suite BUDGET=43 STEPS=verify,verify2,b8,anchors,rows,qscale bash bench/decode_ab.sh"|tail -10 $W/decode.log
ragged|45|bash -c "cd dist && BUDGET=42 bash bench/ragged_confirm.sh"|tail -8 $W/ragged.log
vit|40|bash -c "cd dist && TXC=bin/txc BUDGET=38 bash bench/vit_probe.sh"|tail -6 $W/vit.log
bmm|35|bash bench/bmm_check.sh|grep -E "bmm_bcast_a|summary" $W/bmm.log
gemm|40|bash bench/gemm_shapes.sh|tail -6 $W/gemm.log
gragged|45|bash bench/gemm_ragged.sh|tail -4 $W/gragged.log
fa3|45|env QUICK=1 STEPS=time,sdpa,verify BUDGET=40 bash bench/fa3_perf.sh|grep -A12 "fa3_perf summary" $W/fa3.log | head -14
attn_users|40|bash bench/attn_users.sh|grep -E "^\|" $W/attn_users.log | tail -8
red|45|bash bench/red_s6.sh|grep -E "^\|" $W/red.log | tail -10
block|40|env BLOCK_TIMEOUT=36 bash bench/block_check.sh --blocks-only|tail -8 $W/block.log
sweep|60|bash bench/sweep.sh --deadline 55 --torch-reserve 24 --iters 5|tail -6 $W/sweep.log
sweepfull|300|bash bench/sweep.sh --deadline 290 --torch-reserve 150 --iters 5|tail -8 $W/sweepfull.log
'

# final_field NAME K : field K of step NAME's row (fields 1-3 end at the first three '|'; field 4 is the
# rest of the row, which may hold '|'), empty when there is no such step.
final_field() {
  printf '%s\n' "$STEPS" | awk -v n="$1" -v k="$2" '{
    r = $0; for (i = 1; i < 4; i++) { p = index(r, "|"); if (!p) next; f[i] = substr(r, 1, p - 1); r = substr(r, p + 1) }
    f[4] = r; if (f[1] == n) { print f[k]; exit } }'
}
if [ "${1:-}" = list ]; then
  for n in $(printf '%s\n' "$STEPS" | cut -d'|' -f1); do
    printf '%-11s %4s s  %s\n' "$n" "$(final_field "$n" 2)" "$(final_field "$n" 3)"
  done
  exit 0
fi
TOTAL=${1:?usage: bench/final.sh TOTAL_S STEP... | list}
shift
T0=$(date +%s)
W=/tmp/final
mkdir -p "$W" "${OUT:-/tmp/final-out}"
OUT=${OUT:-/tmp/final-out}
# The checkout that travels may be older than dist/: the measured tree's bench and examples are dist's.
cp -r dist/bench dist/examples . && mkdir -p tests && cp -r dist/oracle tests/ 2>/dev/null
cat dist/COMMIT 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for n in "$@"; do
  cap=$(final_field "$n" 2)
  if [ -z "$cap" ]; then echo "### $n: no such step (bench/final.sh list)"; continue; fi
  left=$((TOTAL - ($(date +%s) - T0) - 8))
  if [ $left -lt 15 ]; then echo "### $n skipped: out of time"; continue; fi
  [ "$cap" -gt $left ] && cap=$left
  echo "### $n $(date +%T) (+$(($(date +%s) - T0))s) cap $cap"
  mkdir -p "$W/$n"
  (OUT=$W/$n timeout -k 5 "$cap" bash -c "$(final_field "$n" 3)") >"$W/$n.log" 2>&1
  echo "   rc $?"
  W=$W bash -c "$(final_field "$n" 4)" 2>/dev/null
done
tar -C /tmp -czf "$OUT/final.tgz" final
echo "final: done in $(($(date +%s) - T0)) s"
