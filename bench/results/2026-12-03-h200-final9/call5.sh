#!/usr/bin/env bash
# session 11 final call: the helpers' GPU checks, then held-out and sweep rows, then the suite
set -u
R=$OUT; W=/tmp/c5; mkdir -p $W
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1 TX_PYTHON=$(command -v python3)
T0=$(date +%s); left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
step() { # NAME CAP CMD...
  local n=$1 cap=$2; shift 2
  local l; l=$(left); [ "$l" -gt 20 ] || { echo "== $n: skipped (out of time)"; return; }
  [ "$cap" -gt "$l" ] && cap=$l
  echo "== $n (cap $cap s, at +$(( $(date +%s) - T0 )) s)"
  OUT=$W/$n timeout -k 5 "$cap" "$@" > $W/$n.log 2>&1; echo "   rc $?"
}
step colcomb 80 bash bench/colcomb_gpu.sh; grep -E "^(ok|FAIL|fail)|summary|us" $W/colcomb.log | tail -24
step coal 120 bash bench/coal_check.sh; tail -30 $W/coal.log | grep -vE "^\s*$" | tail -24
step amp 80 bash bench/amp_gpu.sh; grep -E "^\||graph|ok|FAIL|kernels" $W/amp.log | tail -20
step cepick 40 bash -c 'for p in "ce_zloss_128k -D N=4093 -D V=128256" "cross_entropy -D N=2048 -D V=50257" "label_smooth_ce -D N=4096 -D V=32000"; do set -- $p; f=$1; shift; for e in 1 0; do echo "== $f TX_RED_PICK=$e"; TX_RED_PICK=$e dist/bin/txc bench bench/heldout/$f.tx "$@" --device=gpu --random-inputs=1 2>&1 | grep -E "verified|graph|FAIL|error"; done; done'; cat $W/cepick.log
step heldout 120 bash bench/heldout_check.sh --budget 110 --only gemm_tiny_k,prime_gemm_k7,ce_zloss_128k,cross_entropy,ce_smooth_ignore,clip_loss,amp_unscale,mixup_ce,label_smooth_ce,var_mean_02_4d,prime_bmm_f16; grep -E "^\|" $W/heldout.log
step sweep 40 bash bench/sweep.sh --only matmul_bf16_128x,matmul_bf16_16x,colmean,midmax,colsum,colmax,midsum,midmean --deadline 36 --torch-reserve 18 --iters 5; grep -E "x  |geomean|worst|model" $W/sweep.log | tail -14
tar czf $R/c5.tgz -C /tmp c5 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
