#!/usr/bin/env bash
# cpu_vs_ref.sh TXC ROOT - differential test of the host code generator:
#  1. random well-typed programs from tests/gen/gen.py (fixed seeds), each run
#     with `txc run --device=cpu`, `--device=cpu --no-fuse` and `--device=ref`
#     on the same --random-inputs, outputs compared by tests/gen/compare.py;
#  2. every examples/*.tx and ../shared/bench/suite/*.tx program at small
#     sizes (-D for each symbolic dim of its signature), cpu vs ref.
# Env: TX_GEN_SEEDS="first count" (default "1 25"; a longer run: "1 2000");
# TX_DIFF_DEVICE=gpu runs the same comparison for the CUDA path (on a GPU
# machine); TX_PYTHON overrides /usr/bin/python3.
# Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
DEV=${TX_DIFF_DEVICE:-cpu}
read -r FIRST COUNT <<<"${TX_GEN_SEEDS:-1 25}"
fail=0
n=0

# run_cmp LABEL FILE SEED FLAGS...: DEV, DEV --no-fuse and ref must agree.
run_cmp() {
  local label=$1 file=$2 seed=$3
  shift 3
  rm -rf "$W/cpu" "$W/nf" "$W/ref"
  local ok=1 half=""
  grep -qE '\b(f16|bf16)\b' "$file" && half=half
  if ! "$TXC" run "$file" "$@" --device=ref --random-inputs="$seed" --output-dir "$W/ref" 2>"$W/err"; then
    echo "FAIL $label: the reference run failed: $(head -3 "$W/err")"
    return 1
  fi
  if ! timeout 120 "$TXC" run "$file" "$@" --device="$DEV" --random-inputs="$seed" --output-dir "$W/cpu" 2>"$W/err"; then
    echo "FAIL $label: --device=$DEV failed: $(head -3 "$W/err")"
    ok=0
  elif ! $PY "$ROOT/tests/gen/compare.py" "$W/cpu" "$W/ref" "$label ($DEV)" $half; then
    ok=0
  fi
  if ! timeout 120 "$TXC" run "$file" "$@" --no-fuse --device="$DEV" --random-inputs="$seed" --output-dir "$W/nf" 2>"$W/err"; then
    echo "FAIL $label: --device=$DEV --no-fuse failed: $(head -3 "$W/err")"
    ok=0
  elif ! $PY "$ROOT/tests/gen/compare.py" "$W/nf" "$W/ref" "$label ($DEV --no-fuse)" $half; then
    ok=0
  fi
  [ $ok = 1 ]
}

for ((s = FIRST; s < FIRST + COUNT; s++)); do
  flags=$($PY "$ROOT/tests/gen/gen.py" "$s" "$W/g$s.tx") || { echo "FAIL: gen.py $s"; fail=1; continue; }
  # shellcheck disable=SC2086
  if ! run_cmp "gen seed $s" "$W/g$s.tx" "$s" $flags; then
    fail=1
    cp "$W/g$s.tx" "$W/../tx-gen-fail-$s.tx" 2>/dev/null && echo "  (program kept in $(dirname "$W")/tx-gen-fail-$s.tx)"
  fi
  n=$((n + 1))
done

# Programs of the repository at small sizes: each symbolic dim of the
# entry's signature gets a small odd value.
small=(37 19 33 5 7 3 11)
for f in "$ROOT"/examples/*.tx "$ROOT"/../shared/bench/suite/*.tx; do
  [ -f "$f" ] || continue
  sig=$(grep -E '^fn ' "$f" | tail -1)
  dims=$(echo "$sig" | grep -oE '\[[^]]*\]' | tr -d '[] ' | tr ',' '\n' | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | sort -u)
  flags=()
  i=0
  for d in $dims; do
    flags+=(-D "$d=${small[$((i % ${#small[@]}))]}")
    i=$((i + 1))
  done
  if ! run_cmp "$(basename "$f")" "$f" 7 "${flags[@]}"; then fail=1; fi
  n=$((n + 1))
done
# Medium sizes with bound dims (rows held on chip on the GPU); TX_DIFF_MEDIUM=1.
if [ "${TX_DIFF_MEDIUM:-0}" = 1 ]; then
  for spec in "softmax.tx -D M=64 -D N=4096" "layernorm.tx -D M=48 -D N=4096" "add_rmsnorm.tx -D M=40 -D N=2048" \
              "softmax_wide.tx -D M=8 -D N=50000" "softmax.tx -D M=300 -D N=100" "adam.tx -D N=1000003" \
              "bias_gelu.tx -D M=129 -D N=1000"; do
    set -- $spec
    f="$ROOT/../shared/bench/suite/$1"
    shift
    [ -f "$f" ] || continue
    if ! run_cmp "medium $spec" "$f" 9 "$@"; then fail=1; fi
    n=$((n + 1))
  done
fi
echo "cpu_vs_ref ($DEV): $n programs, $([ $fail = 0 ] && echo all agree || echo FAILURES)"
exit $fail
