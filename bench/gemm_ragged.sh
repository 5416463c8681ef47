#!/usr/bin/env bash
# bench/gemm_ragged.sh - the ragged / under-filled GEMM rows on the sm_90a wgmma kernel against
# cuBLAS in the same run, the worst rows of the last run first. From the repository root on the
# GPU machine with dist/ built by `bash tools/make-dist.sh`; under 60 s:
#
#   bash bench/gemm_ragged.sh
#
# 1. $OUT/ragged: bench/gemm_shapes.py GEMM_ROWS=ragged: the planner's tile (128x192 and the
#    64-row tiles of a short M are in its space), tx verified by `txc bench`, cuBLAS, and
#    `txc tune` of the model's choice and its runners-up (the tiles chosen before among them).
# 2. with GEMM_PINS=1, $OUT/pin-BMxBN: rows with the tile pinned by TX_WG_TILE (tiles the model does not rank
#    first on those shapes), verified and timed the same way, no tuning.
# Last: every row's line (tile, tx, cuBLAS, cuBLAS/tx) of each part.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gemm-ragged-out}
mkdir -p "$OUT"
OUT=$OUT/ragged GEMM_ROWS=ragged GEMM_DEADLINE=${GEMM_DEADLINE:-44} GEMM_TIMEOUT=${GEMM_TIMEOUT:-52} bash bench/gemm_shapes.sh \
    > "$OUT/ragged.log" 2>&1
pin() { # TILE ROWS: the rows with the tile pinned
    OUT=$OUT/pin-$1 TX_WG_TILE=$1 GEMM_ROWS=$2 GEMM_TUNE=0 GEMM_DEADLINE=5 GEMM_TIMEOUT=9 \
        bash bench/gemm_shapes.sh > "$OUT/pin-$1.log" 2>&1
}
# GEMM_PINS=1: tiles the model does not rank first on these shapes
if [ "${GEMM_PINS:-0}" = 1 ]; then
    pin 64x256 xw:300x5000x3000,linres:300x5000x3000
    pin 128x192 xw:3000x2000x5000,xw:2000x1000x3000
fi
for f in ragged pin-64x256 pin-128x192; do
    [ -f "$OUT/$f.log" ] || continue
    echo "== $f"
    grep -E " tx .* us  cuBLAS|^summary|killed" "$OUT/$f.log" | cut -c1-120
done
grep -A40 "^tune candidates" "$OUT/ragged/gemm_shapes.txt" 2>/dev/null | grep -v "^kernels" | head -40
