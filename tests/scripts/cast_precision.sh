#!/usr/bin/env bash
# cast_precision.sh TXC ROOT - verification at the precision an output's values carry
# (rt_bench_check_output_at, driver/bench.c out_prec): bench/bmm/bmm_bcast_a.tx returns
# f32(a @ b) of an f16 product, f16 values widened to f32. On normal f16 inputs at K = 768 the host
# JIT's f32 sums and the interpreter's double sums round some elements to neighbouring f16 values
# (one f16 ulp, e.g. -19.0625 against -19.046875), which a correct kernel does too; the check
# uses f16's tolerance for such an output (it failed 53 of 25600 elements at f32's), and f32's
# for an output computed in f32 (f32(a) @ f32(b) here: its tolerance is checked, not its verdict). Skips (77) without Python + NumPy.
set -u
TXC=$1
ROOT=$2
PY=${TX_PYTHON:-/usr/bin/python3}
if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "skip: /usr/bin/python3 with NumPy not found"
  exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
$PY - "$W" <<'PYEOF'
import sys
import numpy as np
r = np.random.default_rng(1)
np.save(sys.argv[1] + "/a.npy", r.standard_normal((64, 768)).astype(np.float16))
np.save(sys.argv[1] + "/b.npy", r.standard_normal((2, 768, 200)).astype(np.float16))
PYEOF
cat >"$W/wide.tx" <<'TXEOF'
fn wide(a: f16[M, K], b: f16[B, K, N]) -> f32[B, M, N] {
  return f32(a) @ f32(b)
}
TXEOF
fail=0
if ! "$TXC" bench "$ROOT/bench/bmm/bmm_bcast_a.tx" --device=cpu --input a="$W/a.npy" --input b="$W/b.npy" \
  --iters 1 >"$W/out" 2>&1; then
  echo "FAIL bmm_bcast_a: not verified at f16's tolerance:"
  head -3 "$W/out"
  fail=1
elif ! grep -q "out0 f32  ok .*(atol 0.001 rtol 0.002)" "$W/out"; then
  echo "FAIL bmm_bcast_a: not checked at f16's tolerance:"
  head -3 "$W/out"
  fail=1
fi
# (its verdict is f32's own business: near-zero sums of 768 terms can miss atol 1e-5)
"$TXC" bench "$W/wide.tx" --device=cpu --input a="$W/a.npy" --input b="$W/b.npy" --iters 1 \
  >"$W/out2" 2>&1
if ! grep -q "out0 f32 .*(atol 1e-05 rtol 0.0001)" "$W/out2"; then
  echo "FAIL wide: an f32 product is not checked at f32's tolerance:"
  head -3 "$W/out2"
  fail=1
fi
[ $fail = 0 ] && echo "ok: f32(f16 product) checked at f16's tolerance, an f32 product at f32's"
exit $fail
