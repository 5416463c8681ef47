#!/usr/bin/env bash
# bench/cols_gpu.sh - the GPU checks of the column / middle-axis reduction schedules and the
# pointwise rows of issue 12, from the repository root on the GPU machine with dist/ carried
# (bash tools/make-dist.sh):
#
#   bash bench/cols_gpu.sh
#
# 1. math: bench/gpu_math.py (the f32 math functions' ulp errors against NumPy float64; the
#    contract's limits);
# 2. sweep: bench/sweep.sh --only the column, middle-axis and pointwise rows this branch changed
#    (tx against torch.compile, the model's error, verification on exactly summable inputs);
# 3. verify: [reduction.column_blocks] through `txc bench --device=gpu` at ragged sizes against
#    the CPU reference (a prime reduced length, bf16, a middle axis);
# 4. sanitize: compute-sanitizer memcheck on one split run (when installed).
# Most important first; about 75 s in all (the batch kills requests at 80 s; what $OUT holds
# then comes back: cols.txt grows step by step, the sweep's sweep_log.txt row by row).
# Writes $OUT/cols.txt (the summary, also printed last), $OUT/cols.log, and the sweep's files.
set -uo pipefail
cd "$(dirname "$0")/.."
TXC=${TXC:-dist/bin/txc}
OUT=${OUT:-cols-out}
mkdir -p "$OUT"
LOG=$OUT/cols.log
SUM=$OUT/cols.txt
: >"$LOG"
: >"$SUM"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
PY=$(command -v python3 || command -v python)
say() { echo "$*" | tee -a "$SUM"; }
[ -x "$TXC" ] || { say "FAIL: no txc at $TXC (carry dist/)"; exit 1; }

# ---- 1. math ------------------------------------------------------------------------------------
if timeout 25 "$PY" bench/gpu_math.py --txc "$TXC" --device gpu --out "$W" >"$W/m" 2>&1; then
  say "math: PASS ($(grep -c ' ok$' "$W/m") functions within their limits)"
else
  say "FAIL math: $(grep -m2 -E 'FAIL|failed|rror' "$W/m" | tr '\n' ' ' | head -c 300)"
fi
cat "$W/m" >>"$LOG"
grep -E '^ *(exp|exp2|tanh|sigmoid|silu|gelu_tanh|log|rsqrt|erf) ' "$W/m" | head -12 | tee -a "$SUM"

# ---- 2. the sweep's rows ------------------------------------------------------------------------
ROWSEL=colsum_f32_65536,colsum_bf16,colmax,colmean,midmax,chain8,erf_gelu
OUT=$OUT timeout 52 bash bench/sweep.sh --only "$ROWSEL" --deadline 48 --torch-reserve 18 2>&1 |
  tee "$OUT/sweep_stdout.txt" >"$W/sw"
echo "sweep rc $?" >>"$LOG"
cat "$W/sw" >>"$LOG"
sed -n '/^row /,$p' "$W/sw" | tee -a "$SUM"
# ---- 3. verify at ragged sizes ------------------------------------------------------------------
cat >"$W/col.tx" <<'EOF'
fn f(x: f32[M, N]) -> (f32[N], f32[N], f32[N], f32[N]) {
  return sum(x, axis=0), max(x, axis=0), mean(x * 2, axis=0) + 1, min(x, axis=0)
}
EOF
cat >"$W/colh.tx" <<'EOF'
fn f(x: bf16[M, N]) -> (bf16[N], bf16[N]) {
  return sum(x, axis=0), max(x, axis=0)
}
EOF
cat >"$W/mid.tx" <<'EOF'
fn f(x: f32[B, R, C]) -> (f32[B, C], f32[B, C]) {
  return sum(x, axis=1), max(x, axis=1)
}
EOF
nv=0
nfail=0
# The input x: multiples of 1/32 in [-1, 1] (every summation order adds them exactly, so the GPU's
# sums must equal the reference's; random f32 sums near zero differ by more than the tolerance).
verify() { # FILE DIMS... (the dims in x's order)
  local f=$1
  shift
  local d=() rule shape=""
  for kv in "$@"; do d+=(-D "$kv"); shape="$shape${kv#*=},"; done
  nv=$((nv + 1))
  "$PY" -c "import numpy as np, sys; r = np.random.default_rng(7); np.save(sys.argv[1], \
(r.integers(-32, 33, size=($shape)).astype(np.float32) / 32))" "$W/x.npy" ||
    { say "FAIL verify $f $*: cannot write the input (NumPy?)"; nfail=$((nfail + 1)); return; }
  rule=$("$TXC" "$W/$f" "${d[@]}" --explain 2>&1 | grep -o '\[reduction\.[a-z_]*\]' | head -1)
  if timeout 8 "$TXC" bench "$W/$f" --device=gpu --input "x=$W/x.npy" --iters 3 "${d[@]}" >"$W/o" 2>&1 &&
    grep -qE ': verified, ' "$W/o" && ! grep -q 'FAIL' "$W/o"; then
    echo "ok   $f $* $rule" >>"$LOG"
  else
    nfail=$((nfail + 1))
    say "FAIL verify $f $* $rule: $(grep -m2 -E 'FAIL|error' "$W/o" | tr '\n' ' ' | head -c 300)"
  fi
  cat "$W/o" >>"$LOG"
}
verify col.tx M=100003 N=16
verify colh.tx M=20001 N=129
verify mid.tx B=3 R=20011 C=45
say "verify: $((nv - nfail)) of $nv ragged column/middle-axis runs verified on the GPU"

# ---- 4. sanitizers on one split run -------------------------------------------------------------
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck; do
    if timeout 12 compute-sanitizer --tool $tool --error-exitcode 9 "$TXC" run "$W/col.tx" -D M=100003 \
      -D N=37 --device=gpu --random-inputs=2 >"$W/s" 2>&1; then
      say "sanitize $tool: clean (column blocks, M=100003 N=37)"
    else
      say "FAIL sanitize $tool: $(grep -m2 -E 'ERROR|error|Invalid|hazard' "$W/s" | tr '\n' ' ' | head -c 300)"
    fi
    cat "$W/s" >>"$LOG"
  done
else
  say "sanitize: SKIP (no compute-sanitizer)"
fi

echo
echo "==== summary (also in $SUM) ===="
cat "$SUM"
