#!/usr/bin/env bash
# svg.sh TXC ROOT - structural test of --emit=svg (passes/svg.c): for a
# one-kernel program, every program of the public suite, and the
# transformer block fused and --no-fuse (37 kernels), the picture is
# well-formed XML with exactly one fused point and one timeline bar per
# kernel of --emit=json's plan, one unfused point per unfused kernel, and
# every fused kernel in the table; a symbolic program says so instead of
# placing points. tests/svg/check.py does the parsing. Skips (77) without python3.
set -u
TXC=$1
ROOT=$2
PY=${TX_PYTHON:-/usr/bin/python3}
command -v "$PY" >/dev/null || { echo "skip: $PY not found"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0
n=0
# check LABEL FILE ARGS...: the svg of FILE against its JSON report.
check() {
  local label=$1 file=$2
  shift 2
  if ! "$TXC" "$file" "$@" --emit=svg -o "$W/p.svg" 2>"$W/err" || ! "$TXC" "$file" "$@" --emit=json -o "$W/p.json" 2>>"$W/err"; then
    echo "FAIL $label: txc failed: $(head -3 "$W/err")"; fail=1; return
  fi
  if ! "$PY" "$ROOT/tests/svg/check.py" "$W/p.svg" "$W/p.json" "$label"; then fail=1; fi
  n=$((n + 1))
}
check "softmax (1 kernel)" "$ROOT/../shared/bench/suite/softmax.tx" -D M=4096 -D N=4096
check "softmax symbolic" "$ROOT/../shared/bench/suite/softmax.tx"
for f in "$ROOT"/../shared/bench/suite/*.tx; do
  args=$(sed -n '1,3s/.*bench: *//p' "$f" | head -1)
  # shellcheck disable=SC2086
  check "suite $(basename "$f")" "$f" $args
done
check "transformer_block" "$ROOT/examples/transformer_block.tx" -D S=2048
check "transformer_block --no-fuse" "$ROOT/examples/transformer_block.tx" -D S=2048 --no-fuse
# txc bench --svg on the stand-in driver (kernels do not run, so verification fails, but every
# kernel is timed): one measured point per fused and per unfused kernel. Both commands plan for
# the same target (bench's default is the device's, sm_90a on the stand-in): on sm_90 the block's
# attention output is staged for its product ([matmul.stage_view], one more kernel), on sm_90a
# the wgmma kernel reads it in place.
FAKE="$(dirname "$TXC")/runtime/libtx_fake_cuda.so"
if [ -f "$FAKE" ]; then
  for t in sm_90 sm_90a; do
    TX_CUDA_LIB="$FAKE" "$TXC" bench "$ROOT/examples/transformer_block.tx" -D S=256 --target=$t \
      --random-inputs=1 --iters 2 --compare-unfused --svg "$W/b.svg" >/dev/null 2>&1
    "$TXC" "$ROOT/examples/transformer_block.tx" -D S=256 --target=$t --emit=json -o "$W/b.json" &&
      "$PY" "$ROOT/tests/svg/check.py" "$W/b.svg" "$W/b.json" "bench --svg $t (fake driver)" \
        measured || fail=1
    n=$((n + 1))
  done
else
  echo "note: $FAKE not built; bench --svg not checked"
fi
echo "svg: $n pictures checked"
exit $fail
