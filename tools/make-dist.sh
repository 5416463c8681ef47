#!/usr/bin/env bash
# Builds txc with LLVM linked statically and lays out dist/ for the GPU
# machine (which has no LLVM): dist/bin/txc, the examples, the public suite
# and anchors from ../shared, the bench and test scripts. dist/ is
# git-ignored; name it in the device tool's `carry`. dist/bin/txc runs on
# dist/lib/libtx.so (LLVM inside), which the Python package loads too.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-static -DCMAKE_BUILD_TYPE=Release -DTX_LLVM_STATIC=ON -DTX_TXC_SHARED=ON ${TX_DIST_CMAKE_ARGS:-} >/dev/null
cmake --build build-static -j2 --target txc tx_shared
rm -rf dist && mkdir -p dist/bin dist/lib dist/shared
# txc is linked against libtx.so (one copy of LLVM; the device tool carries 64 MiB at most), which
# the Python package uses too: PYTHONPATH=python TX_LIBRARY=dist/lib/libtx.so
cp build-static/txc dist/bin/txc && strip dist/bin/txc
cp build-static/lib/libtx.so dist/lib/libtx.so && strip --strip-unneeded dist/lib/libtx.so
dist/bin/txc --version >/dev/null
cp -r ../shared/spec ../shared/bench dist/shared/
cp -r examples bench tests/oracle dist/ 2>/dev/null || cp -r examples bench dist/
du -sh dist
