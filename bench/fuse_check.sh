#!/usr/bin/env bash
# bench/fuse_check.sh - the pointwise.concat price on the H200, both plans of each rotary program
# timed side by side (from dist/, bash bench/fuse_check.sh; files under $OUT):
#   plan   the sm_90a plan of the default cost model (h200): the half rotation with in-kernel angles
#          stays 2 kernels (fused, every element would compute its pair's angle: issue bound)
#   fused  the same program planned for --gpu=l4 (a lower HBM rate per issued instruction, so the
#          concat's pieces join), run on the same GPU
# Each txc bench verifies against the host reference (sampled at these sizes) before timing; a
# ragged size is verified first. Prints one row per program and plan: us, kernels, verified.
set -uo pipefail
cd "$(dirname "$0")/.."
TXC=${TXC:-bin/txc}
OUT=${OUT:-fuse-out}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
run() { # NAME FILE GPU DIMS...
  local name=$1 file=$2 gpu=$3
  shift 3
  local args=() d
  for d in "$@"; do args+=(-D "$d"); done
  timeout 40 "$TXC" bench "$file" --device=gpu --gpu="$gpu" "${args[@]}" --random-inputs=1 --json \
    --timing-budget=0.5 >"$OUT/$name-$gpu.json" 2>"$OUT/$name-$gpu.err"
  "$PY" - "$OUT/$name-$gpu.json" "$name" "$gpu" <<'PYEOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    fu = j["fused"]
    ks = fu.get("kernels", [])
    print("| %s | %s | %.1f | %d | %s | %s |" % (sys.argv[2], sys.argv[3], fu["graph_us"], len(ks), fu["verified"],
          " ".join("%s %.1f" % (k.get("kind"), k.get("us") or 0) for k in ks)), flush=True)
except Exception as e:
    print("| %s | %s | - | - | error %s |" % (sys.argv[2], sys.argv[3], e), flush=True)
PYEOF
}
echo "| program | cost model | us | kernels | verified | kernel us |"
echo "|---|---|---:|---:|---|---|"
for g in h200 l4; do
  run rotary_ragged bench/heldout/rotary.tx "$g" B=2 S=33 H=3
  run rotary bench/heldout/rotary.tx "$g" B=4 S=4096 H=32
  run rotary_half examples/rotary_half.tx "$g" B=4 S=4096 H=32
  run rope_interleaved bench/heldout/rope_interleaved.tx "$g" B=4 S=4096 H=32
done 2>&1 | tee "$OUT/fuse_check.md"
