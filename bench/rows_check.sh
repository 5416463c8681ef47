#!/usr/bin/env bash
# bench/rows_check.sh - issue 12's row reductions on the GPU machine (dist/ carried; bash
# tools/make-dist.sh), in under 150 s: (1) the public sweep's row reductions named in ROWS against
# torch.compile (bench/sweep.sh --only; tx rows until SWEEP_DEADLINE - 100 s); (2) the loaded
# latency of vector and scalar streaming loads (bench/latency.sh, the model's constants); (3) every
# row schedule (subwarp_rows, warp_rows, row, row_wide, cluster_rows, row_few, streamed) verified
# against the CPU reference at ragged widths that cross each schedule boundary, cluster rows'
# DSMEM exchanges included (txc bench --iters 3: outputs compared, poisoned outputs caught; until
# CHECK_DEADLINE s after the start). Results under $OUT (default ./rows-out): sweep/, latency.txt,
# check.txt. Prints the check's summary, the latencies and the sweep's table last.
set -uo pipefail
cd "$(dirname "$0")/.."
TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-rows-out}
mkdir -p "$OUT/progs" "$OUT/sweep"
[ -x "$TXC" ] || { echo "rows_check: no txc at $TXC (run bash tools/make-dist.sh, carry dist/)"; exit 2; }
P="$OUT/progs"
printf 'fn f(x: f32[M, N]) -> f32[M, N] {\n  return softmax(x, axis=-1)\n}\n' >"$P/softmax.tx"
printf 'fn f(x: bf16[M, N]) -> bf16[M, N] {\n  return softmax(x, axis=-1)\n}\n' >"$P/softmax_bf16.tx"
printf 'fn f(x: bf16[M, N], w: bf16[N], b: bf16[N]) -> bf16[M, N] {\n  return layernorm(x, w, b, eps=1e-5)\n}\n' >"$P/layernorm_bf16.tx"
printf 'fn f(x: f32[M, N], w: f32[N]) -> f32[M, N] {\n  return rmsnorm(x, w, eps=1e-6)\n}\n' >"$P/rmsnorm.tx"
printf 'fn f(x: f32[M, N]) -> f32[M] {\n  return max(x, axis=-1)\n}\n' >"$P/rowmax.tx"
printf 'fn f(x: f32[M, N]) -> f32[M] {\n  return sum(x, axis=-1)\n}\n' >"$P/rowsum.tx"
printf 'fn f(x: f32[M, N]) -> f32[M, 1] {\n  m = max(x, axis=-1, keepdim=true)\n  return log(sum(exp(x - m), axis=-1, keepdim=true)) + m\n}\n' >"$P/logsumexp.tx"
CHECK_DEADLINE=${CHECK_DEADLINE:-120}
SWEEP_DEADLINE=${SWEEP_DEADLINE:-160}
ROWS=${ROWS:-softmax_f32_4096x65536,softmax_f32_128x150001,softmax_f32_256x262144,softmax_bf16_8x50257,log_softmax_bf16_8192x32000,layernorm_bf16_8192x5120,layernorm_f32_100000x768,rmsnorm_f32_2048x12288,logsumexp,rowmax_f32_1048576x64,rowsum_f32_512x262144,rowsum_f32_65536x1024,rowmean}
t0=$(date +%s)
pass=0 fail=0 skip=0
# The sweep first (its table is written when it ends; tx rows until SWEEP_DEADLINE - 100 s).
OUT="$OUT/sweep" bash bench/sweep.sh --only "$ROWS" --deadline "$SWEEP_DEADLINE" \
  >"$OUT/sweep_stdout.txt" 2>&1
src=$?
# The loaded-latency micro-benchmark for vector and scalar streaming loads (the model's constants).
OUT="$OUT" bash bench/latency.sh >"$OUT/latency_stdout.txt" 2>&1
: >"$OUT/check.txt"
# M x N pairs: odd row counts (a partial last block of subwarp/warp rows), widths 1, 7, 31, 33,
# 63/64/65 (subwarp edge), 1000, 1024/1025 (warp hold edge), 4096/4097 (row / row_wide),
# 5120, 12288, 16384/16385 (row_wide / cluster rows), 20001-65536 (cluster rows of 2-8 blocks:
# DSMEM exchanges at ragged sizes), 65537 and 150001 (streamed, few rows: row_few).
# The widths of the newest schedules come first (the deadline may cut the rest).
for mn in 5x16385 7x20001 3x32000 9x40000 5x50257 2x65536 4x65537 3x150001 1001x1 333x7 257x31 \
          129x33 999x63 1025x64 77x65 1003x1000 65x1024 63x1025 33x4096 31x4097 17x5120 9x12288 \
          5x16384; do
  for prog in rowmax softmax softmax_bf16 layernorm_bf16 rmsnorm logsumexp rowsum; do
    if [ $(( $(date +%s) - t0 )) -gt "$CHECK_DEADLINE" ]; then skip=$((skip + 1)); continue; fi
    M=${mn%x*} N=${mn#*x}
    js=$(timeout 60 "$TXC" bench "$P/$prog.tx" -D M=$M -D N=$N --device=gpu --random-inputs=7 \
         --iters 3 --json 2>"$OUT/err.txt")
    rc=$?
    v=$(printf '%s' "$js" | python3 -c 'import json,sys
try:
    d=json.loads(sys.stdin.read()); f=d["fused"]; print("yes" if f["verified"] else "NO", f.get("graph_us", 0))
except Exception: print("ERR 0")' 2>/dev/null)
    echo "$prog $mn rc=$rc verified=$v $(tail -1 "$OUT/err.txt" | cut -c1-160)" >>"$OUT/check.txt"
    case "$v" in yes*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
  done
done
echo "=== rows_check: ragged-width GPU verification: $pass verified, $fail failed, $skip skipped (deadline)"
grep -v "verified=yes" "$OUT/check.txt" | head -20
echo "=== latency (bench/latency.sh)"
grep "median" "$OUT/latency.txt" 2>/dev/null || tail -3 "$OUT/latency_stdout.txt"
echo "=== sweep (rc $src): $OUT/sweep/sweep.md"
cat "$OUT/sweep/sweep.md" 2>/dev/null || tail -20 "$OUT/sweep_stdout.txt"
