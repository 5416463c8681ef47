#!/usr/bin/python3
"""compare.py DIR_A DIR_B [LABEL [half]] - compares out*.npy of two `txc run` output
directories. Tolerance per dtype: |a-b| <= atol*max(1, max|b|) + rtol*|b|
with (atol, rtol) = f32 (1e-4, 1e-3), f16 (2e-2, 2e-2), bool/int exact;
bf16 arrives as f32 and is recognised by its zero low mantissa bits
((5e-2, 5e-2)). With `half` (the program computes in f16/bf16 somewhere,
which codegen may keep in f32 while the reference rounds every node) every
float output gets the bf16 tolerance. NaN must match NaN, inf must match inf. Exit 1 on a
mismatch, with one line naming the file and the worst element."""
import glob
import os
import sys

import numpy as np


def tol_for(a, b, half):
    if half and a.dtype in (np.float16, np.float32):
        return 5e-2, 5e-2
    if a.dtype == np.float16:
        return 2e-2, 2e-2
    if a.dtype == np.float32:
        lo = np.concatenate([a.view(np.uint32).ravel() & 0xFFFF, b.view(np.uint32).ravel() & 0xFFFF])
        if lo.size and not lo.any():
            return 5e-2, 5e-2   # bf16 values
        return 1e-4, 1e-3
    return 0.0, 0.0


def main():
    da, db = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else ""
    half = len(sys.argv) > 4 and sys.argv[4] == "half"
    fa = sorted(os.path.basename(p) for p in glob.glob(os.path.join(da, "out*.npy")))
    fb = sorted(os.path.basename(p) for p in glob.glob(os.path.join(db, "out*.npy")))
    if not fb or fa != fb:
        print("%s: output files differ: %s vs %s" % (label, fa, fb))
        return 1
    bad = 0
    for f in fa:
        a = np.load(os.path.join(da, f))
        b = np.load(os.path.join(db, f))
        if a.shape != b.shape or a.dtype != b.dtype:
            print("%s %s: shape/dtype %s %s vs %s %s" % (label, f, a.shape, a.dtype, b.shape, b.dtype))
            bad += 1
            continue
        if a.size == 0:
            continue
        atol, rtol = tol_for(a, b, half)
        x = a.astype(np.float64)
        y = b.astype(np.float64)
        nan_ok = np.isnan(x) == np.isnan(y)
        fin = np.isfinite(x) & np.isfinite(y)
        inf_ok = np.where(np.isinf(x) | np.isinf(y), x == y, True)
        scale = max(1.0, float(np.max(np.abs(y[fin])))) if fin.any() else 1.0
        err = np.where(fin, np.abs(x - y), 0.0)
        lim = atol * scale + rtol * np.abs(np.where(fin, y, 0.0))
        ok = nan_ok & inf_ok & (err <= lim)
        if not ok.all():
            i = int(np.argmax(~ok.ravel()))
            print("%s %s: %d of %d elements differ (dtype %s); first at flat index %d: %r vs %r" %
                  (label, f, int((~ok).sum()), ok.size, a.dtype, i, x.ravel()[i], y.ravel()[i]))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
