#!/usr/bin/env bash
# bench/python_gpu.sh - the Python package and torch.compile(backend="tx") on
# the GPU machine (no LLVM, no network, no scikit-build-core): the package
# runs from the checkout on the prebuilt dist/lib/libtx.so (tools/make-dist.sh;
# carry dist), nothing is built. Steps (python/tests/gpu_torch.py): PyTorch
# and CuPy tensors without copies (poisoned outputs, a busy non-default
# stream), then the backend on a LLaMA-style block and a GELU MLP against
# eager, timed beside torch.compile's default backend. Also runs the CPU
# unit tests of the package. Writes $OUT/results.json, $OUT/backend.log
# (TX_LOG=backend: which nodes ran in tx and why the others did not) and
# $OUT/gpu_torch.log; the summary table is printed last.
set -uo pipefail
OUT=${OUT:-python-gpu-out}
mkdir -p "$OUT"
[ -f dist/lib/libtx.so ] || { echo "python_gpu.sh: dist/lib/libtx.so missing: run tools/make-dist.sh and carry dist"; exit 1; }
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" TX_LIBRARY="$PWD/dist/lib/libtx.so" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
echo "== CPU unit tests of the package (NumPy)"
TX_ROOT="$PWD" timeout 120 python3 -m unittest discover -s python/tests -t python/tests 2>&1 | tail -3
echo "== GPU: zero-copy calls and torch.compile(backend=\"tx\")"
TX_LOG=${TX_LOG:-backend} timeout 420 python3 python/tests/gpu_torch.py "$OUT" 2>"$OUT/backend.log" | tee "$OUT/gpu_torch.log"
rc=${PIPESTATUS[0]}
echo "backend log: $(grep -c ' tx ' "$OUT/backend.log") nodes in tx, $(grep -c ' torch ' "$OUT/backend.log") in torch ($OUT/backend.log)"
grep -m 20 "runs in PyTorch\|Traceback\|Error" "$OUT/backend.log" | cut -c1-300
exit $rc
