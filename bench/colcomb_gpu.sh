#!/usr/bin/env bash
# bench/colcomb_gpu.sh - the GPU checks of [reduction.column_blocks] as one kernel (each column
# tile's last block combines the partials: codegen/reduction.c cg_red_col_last), from the
# repository root on the GPU machine with dist/ carried (bash tools/make-dist.sh):
#
#   bash bench/colcomb_gpu.sh
#
# 1. verify: `txc bench --device=gpu --random-inputs=1` (50 launches on one workspace, so the
#    tickets' reset is exercised; outputs verified against the reference) at ragged sizes: rows
#    not a multiple of the slices or chunks, columns not a multiple of the vector width, several
#    reductions, bf16, i32, middle axes (tests/colcomb/cases.txt, shared with
#    tests/scripts/column_combine.sh); compute-sanitizer memcheck and racecheck of two of them;
# 2. time: colmean f32 [1048576, 16], midmax f32 [16, 8191, 129], colsum [65536, 1024], colmax
#    [100000, 333] (before: 31.3, 35.7, 78.5, 49.6 us with the 3.9 us combine kernel);
# 3. sweep: bench/sweep.sh --only the column and middle-axis rows (against torch.compile).
# About 90 s; writes $OUT/colcomb.txt (the summary, also printed) and $OUT/colcomb.log.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_start colcomb
P=tests/colcomb

# ---- 1. verify at ragged sizes ------------------------------------------------------------------
verify() { # PROGRAM DIMS...
  local f=$P/$1.tx rule
  shift
  nv=$((nv + 1))
  rule=$("$TXC" "$f" $(dims "$@") --target=sm_90a --explain 2>&1 | grep -o '^k0: \[[a-z._]*\] ([^)]*)' | head -1)
  if timeout 20 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 50 $(dims "$@") >"$W/v.txt" 2>&1 &&
    verified "$W/v.txt"; then
    say "ok   verify $(basename "$f") $* $rule"
  else
    nfail=$((nfail + 1))
    say "FAIL verify $(basename "$f") $* $rule: $(why "$W/v.txt")"
  fi
  cat "$W/v.txt" >>"$LOG"
}
mapfile -t cases < <(grep -v '^#' $P/cases.txt)
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes _ <<<"$c"
  # shellcheck disable=SC2086
  verify "$prog" $sizes
done
say "verify: $((nv - nfail)) of $nv column-blocks programs verified on the GPU ($(elapsed) s)"
CS=$(command -v compute-sanitizer || true)
for c in "colstats M=600 N=2103" "midmax B=3 R=1001 C=37"; do
  set -- $c
  f=$1
  shift
  for tool in memcheck racecheck; do
    if [ -n "$CS" ]; then
      timeout 60 "$CS" --tool $tool --error-exitcode 3 "$TXC" run "$P/$f.tx" $(dims "$@") --device=gpu \
        --random-inputs=1 --output-dir "$W/cs" >"$W/cs.txt" 2>&1
      rc=$?
      say "$([ $rc = 0 ] && echo ok || echo FAIL) $tool $c (rc $rc): $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/cs.txt")"
      cat "$W/cs.txt" >>"$LOG"
    fi
  done
done

# ---- 2. time ------------------------------------------------------------------------------------
for c in "colmean M=1048576 N=16" "midmax B=16 R=8191 C=129" "colsum M=65536 N=1024" "colmax M=100000 N=333"; do
  set -- $c
  f=$1
  shift
  timeout 30 "$TXC" bench "$P/$f.tx" $(dims "$@") --device=gpu --random-inputs=1 >"$W/t.txt" 2>&1
  cat "$W/t.txt" >>"$LOG"
  say "time $c: $(grep -m1 -E 'verified|FAIL' "$W/t.txt" | head -c 120) | $(grep -E '^ *(f_k|graph)' "$W/t.txt" | tr -s ' ' | tr '\n' ';' | head -c 300)"
done

# ---- 3. the sweep's column / middle-axis rows ---------------------------------------------------
LEFT=$(left 100)
[ $LEFT -lt 40 ] && LEFT=40
sweep_rows "$LEFT" colsum,colmax,colmean,midsum,midmax,midmean
summary
