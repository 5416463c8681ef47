#!/usr/bin/env bash
# bench/latency.sh - measures the loaded DRAM latency the cost model's Little's law uses
# (pass_gpu.mem_latency_us, docs/cost-model.md "Model"), on the GPU machine with dist/ carried:
#
#   bash bench/latency.sh        # prints one line per row count, then the median latency
#
# The micro-benchmark is tx's own streaming reduction: max(x, axis=-1) over R rows of N f32 (8 MiB
# each), one block of T threads per row (T from `txc --emit=json`: reduction.row_few gives these
# few long rows 1024), each thread one load group in flight per loop step: 16 bytes when N is a
# multiple of 4 (N = 2^21: vector loads), 4 bytes for N = 2^21 + 1 (scalar loads). With R <= 8
# every row has an SM to itself, far from the HBM limit, so a row's bandwidth is
# T x group / latency and latency = T x group x time / (row bytes), independent of R. Writes
# $OUT/latency.txt: one line per row count and load, then the median latency of each load.
# LAT_LOADS (default "vector scalar") and LAT_ROWS (default "1 2 8") narrow the runs.
set -uo pipefail
cd "$(dirname "$0")/.."
TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-sweep-out}
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf 'fn f(x: f32[R, N]) -> f32[R] {\n  return max(x, axis=-1)\n}\n' >"$W/rowsum.tx"
for load in ${LAT_LOADS:-vector scalar}; do
  if [ $load = vector ]; then N=2097152 G=16; else N=2097153 G=4; fi
  : >"$W/lat"
  # T: the threads of one row (block threads x blocks per row: cluster_stream splits a row).
  T=$("$TXC" "$W/rowsum.tx" -D R=1 -D N=$N --emit=json -o - 2>/dev/null |
      python3 -c 'import json,sys; m=json.load(sys.stdin)["kernels"][0]["model"]; print(m["threads"] * m["grid"])') || T=256
  for R in ${LAT_ROWS:-1 2 8}; do
    us=$("$TXC" bench "$W/rowsum.tx" -D R=$R -D N=$N --device=gpu --random-inputs=1 --iters 10 --json 2>/dev/null |
         python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["fused"]["kernels"][0]["us"])') || us=""
    if [ -z "$us" ]; then echo "latency: $load R=$R failed"; continue; fi
    lat=$(python3 -c "print(f'{$T * $G * $us / ($N * 4.0):.4f}')")
    echo "$load loads, rows $R, $T threads x $G B: $us us per kernel -> latency $lat us" | tee -a "$OUT/latency.txt"
    echo "$lat" >>"$W/lat"
  done
  python3 -c "
v = sorted(float(x) for x in open('$W/lat') if x.strip())
print('latency $load (median of %d): %.3f us' % (len(v), v[len(v) // 2]) if v else 'latency $load: no measurement')" | tee -a "$OUT/latency.txt"
done
