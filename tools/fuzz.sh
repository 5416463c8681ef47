#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in build-fuzz/ and runs one of
# them on one core at the lowest priority (docs/reliability.md).
#
#   tools/fuzz.sh TARGET [SECONDS] [libFuzzer options...]
#     TARGET   frontend | compile | npy | manifest | build (only build) | replay (run every
#              corpus and regression file once through all three targets) |
#              coverage (line coverage of each target's corpus, built in
#              build-fuzz-cov/ with llvm-cov instrumentation; report in
#              build-fuzz-cov/coverage-TARGET.txt)
#     SECONDS  time budget of the run (default 600)
#
# Needs clang and libFuzzer (Debian 12: apt-get install clang libclang-rt-14-dev).
# The working corpus is build-fuzz/corpus/TARGET (seeded from tests/fuzz/seeds,
# the examples, the tests, the prelude and ../shared/bench/suite); crashes,
# leaks, timeouts and out-of-memory inputs land in build-fuzz/artifacts/TARGET/;
# the log (with the final executions and coverage) in build-fuzz/TARGET.log.
# Copy each finding into tests/fuzz/regressions/TARGET/ so that
# tests/unit/test_hostile.c replays it in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${1:-}
secs=${2:-600}
shift $(($# > 2 ? 2 : $#)) || true
B=${TX_FUZZ_BUILD:-build-fuzz}

case "$target" in
  frontend | compile | npy | manifest | build | replay | coverage) ;;
  *) echo "usage: tools/fuzz.sh frontend|compile|npy|manifest|build|replay|coverage [SECONDS] [libFuzzer options]" >&2; exit 2 ;;
esac
command -v clang >/dev/null || { echo "tools/fuzz.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

if [ "$target" = coverage ]; then
  C=${TX_FUZZ_COV_BUILD:-build-fuzz-cov}
  [ -f "$C/CMakeCache.txt" ] || cmake -S . -B "$C" -DTX_FUZZ=ON -DTX_FUZZ_COVERAGE=ON -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DTX_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  for t in npy frontend compile manifest; do
    [ -d "$B/corpus/$t" ] || continue
    nice -n 19 cmake --build "$C" -j2 --target "fuzz_$t" >"$C/build-$t.log" 2>&1 || { echo "build failed: $C/build-$t.log"; exit 1; }
    rm -f "$C/$t"-*.profraw
    find "$B/corpus/$t" tests/fuzz/regressions/$t -type f 2>/dev/null | xargs -r env ASAN_OPTIONS=detect_leaks=0 \
      LLVM_PROFILE_FILE="$C/$t-%p.profraw" nice -n 19 "$C/tests/fuzz/fuzz_$t" -timeout=60 >/dev/null 2>&1
    llvm-profdata-14 merge -sparse "$C/$t"-*.profraw -o "$C/$t.profdata"
    llvm-cov-14 report "$C/tests/fuzz/fuzz_$t" -instr-profile="$C/$t.profdata" \
      -ignore-filename-regex='(tests/|build|/usr/)' >"$C/coverage-$t.txt"
    echo "== fuzz_$t corpus: line coverage ($C/coverage-$t.txt)"
    tail -1 "$C/coverage-$t.txt"
  done
  exit 0
fi

echo "== building $B (clang, libFuzzer + ASan + UBSan)"
if [ ! -f "$B/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$B" -DTX_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DTX_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
if [ "$target" = build ] || [ "$target" = replay ]; then
  nice -n 19 cmake --build "$B" -j2 --target fuzz_frontend fuzz_compile fuzz_npy fuzz_manifest
else
  nice -n 19 cmake --build "$B" -j2 --target "fuzz_$target"
fi
[ "$target" = build ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Seeds: the committed ones plus every .tx of the examples, tests, prelude and suite.
seed() {
  local t=$1 dir=$B/corpus/$1
  mkdir -p "$dir" "$B/artifacts/$t"
  if [ "$t" = manifest ]; then
    cp -n tests/fuzz/seeds/manifest/*.json "$dir"/ 2>/dev/null || true
  elif [ "$t" = npy ]; then
    cp -n tests/fuzz/seeds/npy/*.npy "$dir"/ 2>/dev/null || true
    find tests -name '*.npy' -size -64k -exec cp -n {} "$dir"/ \; 2>/dev/null || true
  else
    cp -n tests/fuzz/seeds/tx/*.tx "$dir"/ 2>/dev/null || true
    for f in examples/*.tx frontend/prelude.tx ../shared/bench/suite/*.tx $(find tests -name '*.tx' -size -4k 2>/dev/null); do
      [ -f "$f" ] && cp -n "$f" "$dir/$(echo "$f" | tr '/' '_')"
    done
  fi
}

if [ "$target" = replay ]; then
  rc=0
  for t in frontend compile npy manifest; do
    seed "$t"
    files=$(find "$B/corpus/$t" tests/fuzz/regressions/$t -type f 2>/dev/null | wc -l)
    echo "== replaying $files inputs through fuzz_$t"
    find "$B/corpus/$t" tests/fuzz/regressions/$t -type f 2>/dev/null | xargs -r nice -n 19 "$B/tests/fuzz/fuzz_$t" \
      -timeout=60 -rss_limit_mb=4096 >"$B/replay-$t.log" 2>&1 || { echo "FAIL: see $B/replay-$t.log"; rc=1; }
  done
  exit $rc
fi

seed "$target"
dict=tests/fuzz/tx.dict
opts=(-max_len=4096 -timeout=10)
case "$target" in
  compile) opts=(-max_len=4096 -timeout=20) ;;
  npy) dict=tests/fuzz/npy.dict; opts=(-max_len=4096 -timeout=5) ;;
  manifest) dict=tests/fuzz/manifest.dict; opts=(-max_len=8192 -timeout=5) ;;
esac
echo "== fuzz_$target for ${secs}s (one core, nice 19); log: $B/$target.log"
# One process, one thread: at most one core (what -jobs=1 -workers=1 asks for).
set +e
nice -n 19 "$B/tests/fuzz/fuzz_$target" "$B/corpus/$target" -dict=$dict "${opts[@]}" \
  -max_total_time="$secs" -rss_limit_mb=4096 -print_final_stats=1 -use_value_profile=1 \
  -artifact_prefix="$B/artifacts/$target/" "$@" 2>&1 | tee "$B/$target.log" | grep -E '^#[0-9]+.*(pulse|REDUCE|NEW|DONE)' | awk 'NR % 50 == 1'
rc=${PIPESTATUS[0]}
set -e
echo "== summary (fuzz_$target, exit $rc)"
grep -E '^#[0-9]+' "$B/$target.log" | tail -1
grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|Done [0-9]+ runs' "$B/$target.log" || true
echo "corpus: $(ls "$B/corpus/$target" | wc -l) files; artifacts: $(ls "$B/artifacts/$target" | wc -l)"
ls "$B/artifacts/$target" 2>/dev/null | sed 's/^/  finding: /'
exit "$rc"
