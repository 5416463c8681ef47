#!/usr/bin/env bash
# cast_precision.sh TXC ROOT - verification at the precision an output's values carry
# (rt_bench_check_output_at, driver/bench.c out_prec): bench/bmm/bmm_bcast_a.tx returns
# f32(a @ b) of an f16 product, f16 values widened to f32. On normal f16 inputs at K = 768 the host
# JIT's f32 sums and the interpreter's double sums round some elements to neighbouring f16 values
# (one f16 ulp, e.g. -19.0625 against -19.046875), which a correct kernel does too; the check
# uses f16's tolerance for such an output (it failed 53 of 25600 elements at f32's), and f32's
# for an output computed in f32 (f32(a) @ f32(b) here: its tolerance is checked, not its verdict).
# Products, quotients and selections of such values keep their relative error: the per-row
# scaling n / (max(abs(n)) / 127) of bf16 rmsnorm rows (bench/heldout/rmsnorm_quant.tx) is checked
# at bf16's tolerance, a sum f32(x) + f32(y) of bf16 values at f32's. Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
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
cat >"$W/sum.tx" <<'TXEOF'
fn sum2(x: bf16[M, D], y: bf16[M, D]) -> (f32[M, D], f32[M, D]) {
  return f32(x) + f32(y), minimum(f32(x) * 3.0, f32(y))
}
TXEOF
"$TXC" bench "$ROOT/bench/heldout/rmsnorm_quant.tx" --device=cpu -D M=5 -D D=77 --random-inputs=1 \
  --iters 1 >"$W/out3" 2>&1
if ! grep -q "out1 f32  ok .*(atol 0.01 rtol 0.016)" "$W/out3"; then
  echo "FAIL rmsnorm_quant: the scaled bf16 rows are not checked at bf16's tolerance:"
  head -4 "$W/out3"
  fail=1
fi
"$TXC" bench "$W/sum.tx" --device=cpu -D M=3 -D D=5 --random-inputs=1 --iters 1 >"$W/out4" 2>&1
if ! grep -q "out0 f32 .*(atol 1e-05 rtol 0.0001)" "$W/out4" ||
  ! grep -q "out1 f32 .*(atol 0.01 rtol 0.016)" "$W/out4"; then
  echo "FAIL sum2: a sum of widened bf16 values is not at f32's tolerance, or a min of products not at bf16's:"
  head -3 "$W/out4"
  fail=1
fi
[ $fail = 0 ] && echo "ok: f32(f16 product) and scaled bf16 rows checked at f16/bf16 tolerance, f32 products and sums at f32's"
exit $fail
