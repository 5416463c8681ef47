#!/usr/bin/env bash
# bench/gpu_check.sh - the GPU-side test command, run by the lead on the GPU
# machine from the repository root with dist/ carried:
#
#   bash bench/gpu_check.sh [--no-sanitizer] [--only a,b,...]
#
# 1. verify: every suite program (dist/shared/bench/suite) at moderate sizes
#    with ragged tails, every example (examples/) and every oracle test
#    program (tests/oracle) runs through `txc bench --device=gpu` (and with
#    --compare-unfused, so the --no-fuse kernels are verified too), which
#    compares every output against the reference interpreter and fails on
#    any element out of tolerance or never written;
# 2. memcheck: `compute-sanitizer --tool memcheck` on `txc run --device=gpu`
#    of every suite program at small ragged sizes;
#    and `--tool initcheck` on the same runs (reads of never-written device memory);
# 3. racecheck: `compute-sanitizer --tool racecheck` on the same runs of the
#    programs whose PTX uses shared memory;
#    the sanitizers also run on a shared-memory-staged row (softmax_wide at
#    N=20000; --only staged) and on every tests/oracle program (--only oracle);
# 4. math: bench/gpu_math.py, the ulp errors of the GPU's f32 math functions
#    (exp, tanh, sigmoid, ...) against NumPy float64 (--only math selects it).
# 5. numpy: tests/oracle/oracle.py with TX_ORACLE_GPU=1: pow at the IEEE
#    edges and the i32 rules (tests/oracle/pow_edges.tx, pow_folded.tx,
#    int_edges.tx) on --device=gpu (fused and --no-fuse) against NumPy itself
#    (--only numpy selects it).
# One summary line per check (PASS/FAIL/SKIP) on stdout and in
# $OUT/gpu_check.txt; everything else in $OUT/gpu_check.log. Exit 1 when any
# check failed.
set -uo pipefail

TXC=${TXC:-dist/bin/txc}
SUITE=${SUITE:-dist/shared/bench/suite}
OUT=${OUT:-gpu-check-out}
TMO=${TMO:-180}
SAN=1
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-sanitizer) SAN=0; shift ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$TXC" ] || { echo "gpu_check: no txc at $TXC (carry dist/)" >&2; exit 2; }
PY=$(command -v python3 || command -v python)
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
mkdir -p "$OUT"
SUM="$OUT/gpu_check.txt"
LOGF="$OUT/gpu_check.log"
: >"$SUM"
: >"$LOGF"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
npass=0 nfail=0 nskip=0

result() { # STATUS WHAT DETAIL
  echo "$1 $2${3:+ $3}" | tee -a "$SUM"
  case "$1" in PASS) npass=$((npass + 1)) ;; FAIL) nfail=$((nfail + 1)) ;; *) nskip=$((nskip + 1)) ;; esac
}

wanted() { [ -z "$ONLY" ] || echo ",$ONLY," | grep -q ",$1,"; }

# Moderate sizes (verify) and small sizes (sanitizers) of the suite, with
# ragged tails; a program not listed gets sizes from sizes_for below.
declare -A MOD=(
  [add_relu]="-D N=1000003" [chain8]="-D N=1000003" [adam]="-D N=1000003"
  [bias_gelu]="-D M=301 -D N=1031" [swiglu]="-D M=301 -D N=1031"
  [softmax]="-D M=301 -D N=4096" [layernorm]="-D M=301 -D N=4096" [add_rmsnorm]="-D M=301 -D N=4096"
  [softmax_wide]="-D M=37 -D N=65536" [matmul_bias_gelu]="-D M=257 -D N=263 -D K=129"
  [attention]="-D B=1 -D H=2 -D S=257 -D D=128" [mlp_block]="-D M=129 -D D=256 -D F=344"
)
declare -A SMALL=(
  [add_relu]="-D N=1003" [chain8]="-D N=1003" [adam]="-D N=1003"
  [bias_gelu]="-D M=5 -D N=1001" [swiglu]="-D M=5 -D N=1001"
  [softmax]="-D M=5 -D N=1000" [layernorm]="-D M=5 -D N=1000" [add_rmsnorm]="-D M=5 -D N=1000"
  [softmax_wide]="-D M=3 -D N=65536" [matmul_bias_gelu]="-D M=67 -D N=71 -D K=35"
  [attention]="-D B=1 -D H=1 -D S=67 -D D=128" [mlp_block]="-D M=33 -D D=64 -D F=96"
)

# -D bindings for every unbound dim of FILE's entry parameters: small ragged
# extents (a "check:" comment in the file, if any, wins).
sizes_for() {
  "$PY" - "$1" <<'PYEOF'
import re, sys
src = open(sys.argv[1]).read()
m = re.search(r"#\s*check:(.*)", src)
if m:
    print(m.group(1).strip()); sys.exit(0)
default = {"B": 2, "H": 3, "S": 77, "D": 32, "M": 67, "N": 133, "K": 45, "G": 2, "F": 96, "T": 29}
fns = list(re.finditer(r"fn\s+\w+\s*\(([^)]*)\)", src))
params = fns[-1].group(1) if fns else ""
names = []
for dims in re.findall(r"\[([^\]]*)\]", params):
    for d in dims.split(","):
        d = d.strip()
        if re.fullmatch(r"[A-Za-z_]\w*", d) and d not in names:
            names.append(d)
print(" ".join("-D %s=%d" % (n, default.get(n, 37)) for n in names))
PYEOF
}

# verify NAME FILE SIZES: bench on the GPU (fused and unfused) against the reference.
verify() {
  local name=$1 file=$2 sizes=$3
  # shellcheck disable=SC2086
  if timeout "$TMO" "$TXC" bench "$file" --device=gpu --random-inputs=7 --iters 3 --compare-unfused $sizes \
      >"$WORK/out" 2>"$WORK/err"; then
    result PASS "verify $name" "($sizes)"
  else
    result FAIL "verify $name" "($sizes): $( (grep -h -m1 'FAIL:' "$WORK/out"; grep -h -m1 'error' "$WORK/err") | head -n1 | sed 's/^ *//' | head -c 300)"
  fi
  { echo "== verify $name $sizes"; cat "$WORK/out" "$WORK/err"; } >>"$LOGF"
}

# sanitize TOOL NAME FILE SIZES: txc run under compute-sanitizer.
sanitize() {
  local tool=$1 name=$2 file=$3 sizes=$4
  # shellcheck disable=SC2086
  if timeout "$TMO" "$CS" --tool "$tool" --error-exitcode 99 --print-limit 20 \
      "$TXC" run "$file" --device=gpu --random-inputs=3 $sizes >"$WORK/san" 2>&1; then
    result PASS "$tool $name" "($sizes)"
  else
    result FAIL "$tool $name" "($sizes): $(grep -h -m1 -i 'error\|hazard' "$WORK/san" | head -n1 | head -c 300)"
  fi
  { echo "== $tool $name $sizes"; cat "$WORK/san"; } >>"$LOGF"
}

for f in "$SUITE"/*.tx; do
  n=$(basename "$f" .tx); wanted "$n" || continue
  verify "suite/$n" "$f" "${MOD[$n]:-$(sizes_for "$f")}"
done
for f in examples/*.tx tests/oracle/*.tx; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .tx); wanted "$n" || continue
  verify "$f" "$f" "$(sizes_for "$f")"
done

# math: ulp errors of the GPU's f32 math functions against NumPy float64 (bench/gpu_math.py).
if wanted math; then
  if "$PY" bench/gpu_math.py --txc "$TXC" --device gpu --out "$WORK" >"$WORK/math" 2>&1; then
    result PASS "math ulp" "($(grep -c ' ok$' "$WORK/math") functions within their limits)"
  else
    result FAIL "math ulp" "$(grep -m1 -E 'FAIL|failed' "$WORK/math" | head -c 300)"
  fi
  { echo "== math"; cat "$WORK/math"; } >>"$LOGF"
fi

# numpy: NumPy's answers on the GPU (pow edges, i32 wrapping, folded constants).
if wanted numpy; then
  if ! "$PY" -c 'import numpy' 2>/dev/null; then
    result SKIP "numpy oracle" "(no NumPy for $PY)"
  elif TX_ORACLE_GPU=1 "$PY" tests/oracle/oracle.py "$TXC" . "$WORK" >"$WORK/oracle" 2>&1; then
    result PASS "numpy oracle" "($(grep -c 'device=gpu.* ok$' "$WORK/oracle") GPU checks, $(grep -c ' ok$' "$WORK/oracle") in all)"
  else
    result FAIL "numpy oracle" "$(grep -m1 -A1 'FAILED' "$WORK/oracle" | tr '\n' ' ' | head -c 300)"
  fi
  { echo "== numpy oracle"; cat "$WORK/oracle"; } >>"$LOGF"
fi

if [ "$SAN" = 1 ] && [ -z "$CS" ]; then
  result SKIP "sanitizers" "(compute-sanitizer not found)"
elif [ "$SAN" = 1 ]; then
  # san_all NAME FILE SIZES: memcheck and initcheck, racecheck when the PTX uses shared memory.
  san_all() {
    sanitize memcheck "$1" "$2" "$3"
    sanitize initcheck "$1" "$2" "$3"
    # shellcheck disable=SC2086
    if "$TXC" "$2" --emit=ptx -o - $3 2>/dev/null | grep -q '\.shared'; then
      sanitize racecheck "$1" "$2" "$3"
    fi
  }
  for f in "$SUITE"/*.tx; do
    n=$(basename "$f" .tx); wanted "$n" || continue
    san_all "suite/$n" "$f" "${SMALL[$n]:-$(sizes_for "$f")}"
  done
  # Kernel kinds the suite's small sizes do not reach: a row staged in shared memory (onchip,
  # too long for registers), and the oracle programs (column and middle-axis reductions, views,
  # casts, integer ops, batched and broadcast matmuls, f16/bf16).
  if wanted staged && [ -f "$SUITE/softmax_wide.tx" ]; then
    san_all "staged/softmax_wide" "$SUITE/softmax_wide.tx" "-D M=3 -D N=20000"
  fi
  for f in tests/oracle/*.tx; do
    n=$(basename "$f" .tx); wanted "$n" || wanted oracle || continue
    san_all "$f" "$f" "$(sizes_for "$f")"
  done
fi

echo "gpu_check: $npass passed, $nfail failed, $nskip skipped" | tee -a "$SUM"
[ "$nfail" -eq 0 ]
