#!/usr/bin/env bash
# Builds txc with LLVM linked statically and lays out dist/ for the GPU
# machine (which has no LLVM): dist/bin/txc, the examples, the public suite
# and anchors from ../shared, the bench and test scripts. dist/ is
# git-ignored; name it in the device tool's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-static -DCMAKE_BUILD_TYPE=Release -DTX_LLVM_STATIC=ON ${TX_DIST_CMAKE_ARGS:-} >/dev/null
cmake --build build-static -j2 --target txc
rm -rf dist && mkdir -p dist/bin dist/shared
cp build-static/txc dist/bin/txc && strip dist/bin/txc
cp -r ../shared/spec ../shared/bench dist/shared/
cp -r examples bench tests/oracle dist/ 2>/dev/null || cp -r examples bench dist/
du -sh dist
