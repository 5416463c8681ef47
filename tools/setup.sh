#!/usr/bin/env bash
# Installs what tx needs on Debian 12 (as root), skipping what is already there.
set -euo pipefail
pkgs=(cmake make gcc g++ flex bison llvm-19-dev libzstd-dev zlib1g-dev libcmocka-dev python3 python3-numpy python3-venv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "tools/setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
