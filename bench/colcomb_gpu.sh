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
#    reductions, bf16, i32, middle axes; compute-sanitizer memcheck and racecheck of two of them;
# 2. time: colmean f32 [1048576, 16], midmax f32 [16, 8191, 129], colsum [65536, 1024], colmax
#    [100000, 333] (before: 31.3, 35.7, 78.5, 49.6 us with the 3.9 us combine kernel);
# 3. sweep: bench/sweep.sh --only the column and middle-axis rows (against torch.compile).
# About 90 s; writes $OUT/colcomb.txt (the summary, also printed) and $OUT/colcomb.log.
set -uo pipefail
cd "$(dirname "$0")/.."
export TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-colcomb-out}
mkdir -p "$OUT"
LOG=$OUT/colcomb.log
SUM=$OUT/colcomb.txt
: >"$LOG"
: >"$SUM"
T0=$(date +%s)
say() { echo "$*" | tee -a "$SUM"; }
[ -x "$TXC" ] || { say "FAIL: no txc at $TXC (carry dist/)"; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/colmean.tx" <<'EOF'
fn f(x: f32[M, N]) -> f32[N] { return mean(x, axis=0) }
EOF
cat >"$W/colsum.tx" <<'EOF'
fn f(x: f32[M, N]) -> f32[N] { return sum(x, axis=0) }
EOF
cat >"$W/colmax.tx" <<'EOF'
fn f(x: f32[M, N]) -> f32[N] { return max(x, axis=0) }
EOF
cat >"$W/midmax.tx" <<'EOF'
fn f(x: f32[B, R, C]) -> f32[B, C] { return max(x, axis=1) }
EOF
cat >"$W/colstats.tx" <<'EOF'
fn f(x: f32[M, N]) -> (f32[N], f32[N], f32[N], f32[N]) {
  return sum(x, axis=0), max(x, axis=0), mean(x * 2, axis=0) + 1, min(x, axis=0)
}
EOF
cat >"$W/colh.tx" <<'EOF'
fn f(x: bf16[M, N]) -> (bf16[N], bf16[N]) { return sum(x, axis=0), max(x, axis=0) }
EOF
cat >"$W/coli.tx" <<'EOF'
fn f(x: i32[M, N]) -> (i32[N], i32[N]) { return sum(x, axis=0), min(x, axis=0) }
EOF
dims() { local d=(); for kv in "$@"; do d+=(-D "$kv"); done; echo "${d[@]}"; }

# ---- 1. verify at ragged sizes ------------------------------------------------------------------
nv=0
nfail=0
verify() { # PROGRAM DIMS...
  local f=$W/$1.tx rule
  shift
  nv=$((nv + 1))
  rule=$("$TXC" "$f" $(dims "$@") --target=sm_90a --explain 2>&1 | grep -o '^k0: \[[a-z._]*\] ([^)]*)' | head -1)
  if timeout 20 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 50 $(dims "$@") >"$W/v.txt" 2>&1 &&
    grep -qE ': verified, ' "$W/v.txt" && ! grep -q 'FAIL' "$W/v.txt"; then
    say "ok   verify $(basename "$f") $* $rule"
  else
    nfail=$((nfail + 1))
    say "FAIL verify $(basename "$f") $* $rule: $(grep -m2 -E 'FAIL|error' "$W/v.txt" | tr '\n' ' ' | head -c 300)"
  fi
  cat "$W/v.txt" >>"$LOG"
}
verify colmean M=100003 N=16
verify colmean M=70001 N=20
verify colmean M=65537 N=3
verify colstats M=513 N=37
verify colstats M=600 N=2103
verify colstats M=600 N=8416
verify colh M=4096 N=1000
verify colh M=20001 N=129
verify coli M=5000 N=3
verify midmax B=3 R=1001 C=37
verify midmax B=5 R=4099 C=129
verify midmax B=16 R=8191 C=129
say "verify: $((nv - nfail)) of $nv column-blocks programs verified on the GPU ($(($(date +%s) - T0)) s)"
CS=$(command -v compute-sanitizer || true)
for c in "colstats M=600 N=2103" "midmax B=3 R=1001 C=37"; do
  set -- $c
  f=$1
  shift
  for tool in memcheck racecheck; do
    if [ -n "$CS" ]; then
      timeout 60 "$CS" --tool $tool --error-exitcode 3 "$TXC" run "$W/$f.tx" $(dims "$@") --device=gpu \
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
  timeout 30 "$TXC" bench "$W/$f.tx" $(dims "$@") --device=gpu --random-inputs=1 >"$W/t.txt" 2>&1
  cat "$W/t.txt" >>"$LOG"
  say "time $c: $(grep -m1 -E 'verified|FAIL' "$W/t.txt" | head -c 120) | $(grep -E '^ *(f_k|graph)' "$W/t.txt" | tr -s ' ' | tr '\n' ';' | head -c 300)"
done

# ---- 3. the sweep's column / middle-axis rows ---------------------------------------------------
LEFT=$((100 - ($(date +%s) - T0)))
[ $LEFT -lt 40 ] && LEFT=40
OUT=$OUT/sweep timeout -k 2 "$LEFT" bash bench/sweep.sh --only colsum,colmax,colmean,midsum,midmax,midmean \
  --deadline $((LEFT - 4)) --torch-reserve $(((LEFT - 4) * 2 / 5)) >"$OUT/sweep.txt" 2>&1
echo "sweep rc $?" >>"$LOG"
sed -n '/^row /,$p' "$OUT/sweep.txt" | tee -a "$SUM"
echo
echo "==== summary (also in $SUM; $(($(date +%s) - T0)) s) ===="
cat "$SUM"
