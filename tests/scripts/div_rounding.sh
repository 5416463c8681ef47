#!/usr/bin/env bash
# div_rounding.sh TXC ROOT - a division by a constant (x / 127, x / 3, x / 0.1; x / 4, a power of
# two) and by a row's reduced value (y / sum(y)) is the IEEE f32 quotient, bit for bit, on the host
# JIT and in the reference interpreter (codegen/value.c cg_div_by_rcp: the reciprocal product
# corrected by two FMAs), as PyTorch's division is: a quotient one ulp off flips floor(x / s + 0.5)
# of a quantiser (bench/heldout/groupwise_quant.tx: 1 code in 4096 differed from torch). Inputs
# span normal magnitudes from 1e-30 to 3e38 (x / 0.1 overflows to inf) with +-0, +-inf and NaN;
# sm_90a's PTX of the same program carries the FMAs and passes ptxas. Skips (77) without NumPy.
. "$(dirname "$0")/lib/setup.sh" "$@"
cat >"$W/divs.tx" <<'TXEOF'
fn divs(x: f32[N], y: f32[M, K]) -> (f32[N], f32[N], f32[N], f32[N], f32[M, K], f32[M, 1]) {
  s = sum(y, axis=-1, keepdim=true)
  return x / 127.0, x / 3.0, x / 0.1, x / 4.0, y / s, s
}
TXEOF
$PY - "$W" <<'PYEOF'
import sys
import numpy as np
r = np.random.default_rng(5)
x = (r.uniform(1, 2, 200000) * 10.0 ** r.integers(-30, 39, 200000)).astype(np.float32)
x = np.where(np.isfinite(x), x, np.float32(3e38)) * np.where(r.random(200000) < 0.5, -1, 1).astype(np.float32)
x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38]
np.save(sys.argv[1] + "/x.npy", x)
np.save(sys.argv[1] + "/y.npy", r.uniform(-1, 3, (64, 1001)).astype(np.float32))
PYEOF
fail=0
for dev in cpu ref; do
  if ! "$TXC" run "$W/divs.tx" --device=$dev --input x="$W/x.npy" --input y="$W/y.npy" --output-dir "$W/$dev" \
    >"$W/log" 2>&1; then
    echo "FAIL: txc run --device=$dev:"
    head -5 "$W/log"
    fail=1
    continue
  fi
  $PY - "$W" $dev <<'PYEOF' || fail=1
import sys
import numpy as np
w, dev = sys.argv[1], sys.argv[2]
x, y = np.load(w + "/x.npy"), np.load(w + "/y.npy")
s = np.load(w + "/%s/out5.npy" % dev)
f = np.float32
with np.errstate(over="ignore", invalid="ignore"):
    want = [x / f(127), x / f(3), x / f(0.1), x / f(4), y / s]
bad = 0
for i, wv in enumerate(want):
    got = np.load(w + "/%s/out%d.npy" % (dev, i))
    same = (got == wv) | (np.isnan(got) & np.isnan(wv))
    if not same.all():
        j = np.flatnonzero(~same.ravel())[0]
        print("FAIL --device=%s out%d: %d of %d quotients differ from IEEE f32; first: got %r, want %r"
              % (dev, i, (~same).sum(), same.size, got.ravel()[j], wv.ravel()[j]))
        bad = 1
sys.exit(bad)
PYEOF
done
if ! "$TXC" "$W/divs.tx" -D N=4096 -D M=64 -D K=1001 --target=sm_90a -o "$W/divs.ptx" 2>"$W/log"; then
  echo "FAIL: sm_90a compile:"
  head -3 "$W/log"
  fail=1
elif ! grep -q "fma.rn.f32" "$W/divs.ptx"; then
  echo "FAIL: sm_90a PTX has no corrected quotient (no fma.rn.f32)"
  fail=1
elif [ -x "$PTXAS" ] && ! "$PTXAS" -arch=sm_90a "$W/divs.ptx" -o "$W/divs.cubin"; then
  echo "FAIL: ptxas rejects the sm_90a PTX"
  fail=1
fi
[ $fail = 0 ] && echo "ok: divisions by constants and by row sums are IEEE f32 quotients (host JIT, interpreter, sm_90a PTX)"
exit $fail
