#!/usr/bin/env bash
# bench/gpu_session.sh - one batched device call (the device tool allows
# 10 minutes a call and 30 a session), run from the repository root on the
# GPU machine with dist/ carried (tools/make-dist.sh). Every step writes
# under a work folder that is packed into $OUT/session.tgz at the end (the
# tool brings back at most 8 files), and prints its summary to stdout.
#
#   bash bench/gpu_session.sh diag   # math ulp, the memory-bound suite rows (no anchors),
#                                    # ncu on three kernels, then gpu_check.sh (sanitizers)
#                                    # until the time is up
#   CHECK_ONLY=a,b ONLY=c,d bash bench/gpu_session.sh check
#                                    # gpu_check.sh --only a,b (sanitizers included), then the
#                                    # suite rows c,d without anchors
#   bash bench/gpu_session.sh suite  # the whole suite with anchors.py in the same run
#
# Each step runs under `timeout` so the pack at the end always happens.
set -uo pipefail
MODE=${1:-diag}
OUT=${OUT:-session-out}
W=$(mktemp -d)
T0=$(date +%s)
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
pack() { tar czf "$OUT/session.tgz" -C "$W" . && echo "gpu_session: packed $(du -sh "$OUT/session.tgz" | cut -f1) in $(( $(date +%s) - T0 )) s"; }
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$W/gpu.txt" 2>&1
cat "$W/gpu.txt"

case "$MODE" in
diag)
  timeout 60 python3 bench/gpu_math.py --txc dist/bin/txc --device gpu --out "$W" 2>&1 | tee "$W/math.log"
  OUT="$W/suite" TX_ANCHOR_DEADLINE=0 timeout 240 bash bench/run_suite.sh --iters 20 --no-anchors \
    --only "${ONLY:-softmax,softmax_wide,chain8,bias_gelu,swiglu,layernorm,add_rmsnorm}" 2>&1 | tail -n 30
  if command -v ncu >/dev/null; then
    for spec in "chain8 -D N=67108864" "softmax_wide -D M=1024 -D N=65536" "softmax -D M=8192 -D N=4096"; do
      set -- $spec; n=$1; shift
      timeout 60 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section Occupancy --section InstructionStats \
        dist/bin/txc run "dist/shared/bench/suite/$n.tx" --device=gpu --random-inputs=1 "$@" \
        --output-dir "$W" >"$W/ncu-$n.txt" 2>&1
      grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Executed Ipc A|Issue Slots Busy|Achieved Occupancy|Registers Per|Executed Instructions  " "$W/ncu-$n.txt" | sed "s/^/ncu $n: /" | head -n 12
    done
    rm -f "$W"/out*.npy
  else
    echo "gpu_session: ncu not found"
  fi
  t=$(left)
  if [ "$t" -gt 60 ]; then
    OUT="$W/check" timeout "$t" bash bench/gpu_check.sh 2>&1 | tail -n 60
  else
    echo "gpu_session: no time left for gpu_check.sh"
  fi
  ;;
check)
  OUT="$W/check" timeout 300 bash bench/gpu_check.sh --only "${CHECK_ONLY:-math}" 2>&1 | tail -n 60
  OUT="$W/suite" TX_ANCHOR_DEADLINE=0 timeout "$(left)" bash bench/run_suite.sh --iters 20 --no-anchors \
    --only "${ONLY:-softmax_wide,chain8}" 2>&1 | grep -E '^\||^ok|^FAIL'
  ;;
suite)
  OUT="$W/suite" PER_TIMEOUT=${PER_TIMEOUT:-100} TX_ANCHOR_DEADLINE=${TX_ANCHOR_DEADLINE:-300} \
    timeout "$(left)" bash bench/run_suite.sh --iters "${ITERS:-20}" 2>&1 | tail -n 40
  ;;
*) echo "gpu_session: unknown mode $MODE" >&2 ;;
esac
pack
