#!/usr/bin/python3
"""split_stats.py X.npy AXES ADD EPS DIR ROLES [LABEL] - checks the mean / variance / normalised
outputs out0.npy, out1.npy, ... of a `txc run` in DIR against the exact statistics of the program's
z = f32(X + ADD) over AXES (comma-separated; kept dims), computed in float64 from the f32 values,
within f32 error bounds that do not grow with the columns' mean. ROLES names each output in order: mean, var or
norm ((z - mu) / sqrt(var + EPS)); a mean or variance output may be the kept-dim statistic
reshaped (compared flat).

Bounds per column (u = 2^-24, K = 32, r = max |z - mu| over the column, the column's spread):
  mean: 0.5 ulp(mu) + K u r            (rounded once at mu's magnitude; sums of the spread)
  var:  K u var                         (sums of squared deviations about the column's pilot)
  norm: b_mean / s + |y| (b_var / (2 s^2) + K u),  s = sqrt(var + EPS)
An unshifted f32 computation (chunk sums or means of values near mu) is off by about
ulp(mu) x the additions it rounds, which exceeds the mean's bound once mu / r is large (mean 1000,
spread 0.3: 0.5 ulp(1000) = 3.1e-5 against K u r ~ 2e-6). Prints the worst error / bound of each
output; exit 1 when one exceeds 1."""
import os
import sys

import numpy as np

U = 2.0 ** -24
K = 32.0


def exact_stats(x, axis, add):
    z = (x.astype(np.float32) + np.float32(add)).astype(np.float64)
    mu = z.mean(axis=axis, keepdims=True)
    var = ((z - mu) ** 2).mean(axis=axis, keepdims=True)
    r = np.abs(z - mu).max(axis=axis, keepdims=True)
    return z, mu, var, r


def ulp32(v):
    return np.spacing(np.abs(v).astype(np.float32)).astype(np.float64)


def check(x, axis, add, eps, outs, roles):
    """(label, worst error / bound, elements over the bound, elements) per output."""
    z, mu, var, r = exact_stats(x, axis, add)
    b_mean = 0.5 * ulp32(mu) + K * U * r
    b_var = K * U * var
    s2 = var + eps
    res = []
    for i, (role, got) in enumerate(zip(roles, outs)):
        got = got.astype(np.float64)
        if role == "mean":
            want, bound = mu.ravel(), b_mean.ravel()
            got = got.ravel()
        elif role == "var":
            want, bound = var.ravel(), b_var.ravel()
            got = got.ravel()
        elif role == "norm":
            want = (z - mu) / np.sqrt(s2)
            bound = b_mean / np.sqrt(s2) + np.abs(want) * (b_var / (2 * s2) + K * U)
        else:
            raise SystemExit("split_stats.py: unknown role %r" % role)
        if got.shape != want.shape:
            raise SystemExit("split_stats.py: out%d has shape %s, want %s" % (i, got.shape, want.shape))
        ratio = np.where(np.isfinite(got), np.abs(got - want) / bound, np.inf)
        res.append(("out%d %s" % (i, role), float(ratio.max()), int((ratio > 1).sum()), ratio.size))
    return res


def main():
    if len(sys.argv) < 7:
        print(__doc__)
        return 2
    xf, axis, add, eps, d, roles = sys.argv[1:7]
    label = sys.argv[7] if len(sys.argv) > 7 else d
    x = np.load(xf)
    roles = roles.split(",")
    outs = [np.load(os.path.join(d, "out%d.npy" % i)) for i in range(len(roles))]
    bad = 0
    axes = tuple(int(a) for a in axis.split(","))
    for name, worst, nbad, n in check(x, axes, float(add), float(eps), outs, roles):
        print("%s %s: worst error / bound %.3g, %d of %d over" % (label, name, worst, nbad, n))
        bad += nbad > 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
