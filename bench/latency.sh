#!/usr/bin/env bash
# bench/latency.sh - measures the loaded DRAM latency the cost model's Little's law uses
# (pass_gpu.mem_latency_us, docs/cost-model.md "Model"), on the GPU machine with dist/ carried:
#
#   bash bench/latency.sh        # prints one line per row count, then the median latency
#
# The micro-benchmark is tx's own streaming reduction: max(x, axis=-1) over R rows of 2^21 f32
# (8 MiB each), one block of 256 threads per row, each thread one 16-byte group in flight per loop
# step. With R <= 132 every row has an SM to itself, so a row's bandwidth is
# 256 x 16 B / latency and latency = 4096 B x time / (8 MiB) (independent of R while the SMs
# are far from the HBM limit). Writes $OUT/latency.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-sweep-out}
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf 'fn f(x: f32[R, N]) -> f32[R] {\n  return max(x, axis=-1)\n}\n' >"$W/rowsum.tx"
N=2097152
: >"$W/lat"
for R in 1 2 8 32 132; do
  us=$("$TXC" bench "$W/rowsum.tx" -D R=$R -D N=$N --device=gpu --random-inputs=1 --iters 10 --json 2>/dev/null |
       python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["fused"]["kernels"][0]["us"])') || us=""
  if [ -z "$us" ]; then echo "latency: R=$R failed"; continue; fi
  lat=$(python3 -c "print(f'{4096.0 * $us / ($N * 4.0):.4f}')")
  echo "rows $R: $us us per kernel -> latency $lat us" | tee -a "$OUT/latency.txt"
  echo "$lat" >>"$W/lat"
done
python3 -c "
import sys; v = sorted(float(x) for x in open('$W/lat') if x.strip())
print('latency (median of %d): %.3f us' % (len(v), v[len(v) // 2]) if v else 'latency: no measurement')" | tee -a "$OUT/latency.txt"
