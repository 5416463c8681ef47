#!/usr/bin/env bash
# session 11 probe: measured candidates of the sweep's rows below 0.9x
set -u
export PATH="$PATH:/usr/local/cuda/bin"
TXC=dist/bin/txc
tune() { local n=$1 f=$2; shift 2; echo "=== tune $n $*"; timeout 40 $TXC tune $f "$@" --tune-cache=/tmp/tune-$n.json 2>&1 | tail -22; }
tune mm128 .gpu/mm.tx -D M=128 -D K=4096 -D N=4096
tune mm256 .gpu/mm.tx -D M=256 -D K=4096 -D N=4096
tune mm64 .gpu/mm.tx -D M=64 -D K=4096 -D N=4096
tune rowmean .gpu/rowmean.tx -D M=3000 -D N=7777
