#!/usr/bin/env bash
# bench/gemm_ragged.sh - the ragged / under-filled GEMM rows (bench/gemm_shapes.py GEMM_ROWS=ragged,
# the worst rows of the last run first) on the sm_90a wgmma kernel against cuBLAS in the same
# run: the planner's tile (now including 128x192), tx verified by `txc bench`, and `txc tune` of
# the model's choice and its runners-up (the tiles chosen before among them). From the repository
# root on the GPU machine with dist/ built by `bash tools/make-dist.sh`; under 60 s:
#
#   bash bench/gemm_ragged.sh
#
# $OUT/gemm_shapes.txt: the table, every tuned candidate's predicted and measured time, the
# summary (printed last).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-gemm-ragged-out}
GEMM_ROWS=ragged GEMM_DEADLINE=${GEMM_DEADLINE:-46} GEMM_TIMEOUT=${GEMM_TIMEOUT:-56} \
    bash bench/gemm_shapes.sh
rc=$?
exit $rc
