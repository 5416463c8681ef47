#!/usr/bin/env bash
# session 11 call 1: risk checks of the tenth session's unmeasured GPU paths + the suite
set -u
R=$OUT; export OUT=/tmp/s10
T0=$(date +%s)
bash bench/session10_gpu.sh f32attn gemmop split
echo "session10 steps took $(( $(date +%s) - T0 )) s"
OUT=/tmp/fo bash bench/final.sh $(( 575 - ($(date +%s) - T0) )) suite
tar czf $R/s10.tgz -C /tmp s10 2>/dev/null; cp /tmp/fo/final.tgz $R/ 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
