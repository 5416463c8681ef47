#!/usr/bin/env bash
# bench/vit_probe.sh - bench/vit_probe.py on the GPU machine from dist/: cd dist && bash bench/vit_probe.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-bin/txc} OUT=${OUT:-vit-probe-out}
PY=$(command -v python3 || command -v python)
exec "$PY" bench/vit_probe.py
