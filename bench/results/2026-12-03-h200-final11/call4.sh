#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export TX_PYTHON=$(command -v python3) PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
OUT=$OUT bash bench/final.sh 440 suite sweepfull 2>&1 | tail -70
