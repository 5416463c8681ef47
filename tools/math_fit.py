#!/usr/bin/env python3
"""tools/math_fit.py - derives the polynomial coefficients of codegen/math.c's erf and log1p and
checks the formulas in an f32 emulation (NumPy; an fma is the double product and sum rounded once
to f32, a 2^q is exact), printing the coefficients as math.c holds them and the largest error in
f32 ulps against double-precision math.erf / numpy.log.

    python3 tools/math_fit.py [erf|log] [--a 0.9 --n1 6 --n2 7 --b 4.0] [--nq 8]

Method: Lawson's algorithm (iteratively reweighted least squares, which converges to the weighted
minimax fit) on Chebyshev nodes in double, then each coefficient rounded to f32.
- erf(x) = x + x P(x^2) for |x| < a, P fitted to erf(x)/x - 1 with weight x/erf(x) (the relative
  error of erf); erf(x) = 1 - 2^Q(min(|x|, b)) above, Q fitted to log2(erfc(x)) with weight
  erfc(x) ln 2 / 2^-24 (the error of erf in units of 2^-24, its ulp on [0.5, 1)).
- log1p(f) = f + f^2 Q(f) for f = m - 1, m in [2/3, 4/3), Q fitted to (log1p(f) - f) / f^2 with
  weight f^2 / |log1p(f)| (the relative error of log1p)."""
import argparse, math
import numpy as np

f32 = np.float32


def fma(a, b, c):
    """f32 fma: a * b is exact in double, the sum rounds once to double then to f32 (a double
    rounding that can differ from one f32 rounding only in rare ties)."""
    return f32(np.float64(a) * np.float64(b) + np.float64(c))


def cheb(a, b, n):
    k = np.arange(n)
    return (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)


def lawson(t, n, target, weight, iters=300):
    """The n coefficients c minimising max |sum c_k t^k - target| * weight over the nodes (t:
    their values of the polynomial's variable), and that maximum."""
    A = np.stack([t ** k for k in range(n)], 1)
    u = np.ones(len(target)) / len(target)
    for _ in range(iters):
        w = np.sqrt(u) * weight
        c, *_ = np.linalg.lstsq(A * w[:, None], target * w, rcond=None)
        e = np.abs(A @ c - target) * weight
        u = u * e
        u /= u.sum()
    return c, e.max()


def horner(c, t):
    p = np.full_like(t, c[-1])
    for v in c[-2::-1]:
        p = fma(p, t, v)
    return p


def ulps(got, ref):
    sp = np.spacing(np.abs(ref.astype(f32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / np.maximum(sp, 2.0 ** -149)


def fit_erf(a, n1, n2, b):
    verf, verfc = np.vectorize(math.erf), np.vectorize(math.erfc)
    xs = cheb(1e-6, a, 4000)
    p, e1 = lawson(xs * xs, n1, verf(xs) / xs - 1, xs / verf(xs))
    xt = cheb(a, b, 4000)
    q, e2 = lawson(xt, n2, np.log2(verfc(xt)), verfc(xt) * math.log(2) / 2.0 ** -24)
    p, q = [f32(v) for v in p], [f32(v) for v in q]
    print("P (|x| < %g): fit %.3f ulp\n  %s" % (a, e1 * 2 ** 24, [float(v) for v in p]))
    print("Q (log2 erfc on [%g, %g]): fit %.3f ulp\n  %s" % (a, b, e2, [float(v) for v in q]))
    x = np.concatenate([np.linspace(0, b + 0.5, 2000001), np.logspace(-30, 0, 100001)]).astype(f32)
    small = fma(x, horner(p, f32(x * x)), x)
    qq = horner(q, np.minimum(x, f32(b)))
    big = f32(1) - f32(np.exp2(np.float64(qq)))
    r = np.where(x >= f32(a), big, small)
    u = ulps(r, np.vectorize(math.erf)(x.astype(np.float64)))
    i = int(np.argmax(u))
    print("f32 emulation: max %.3f ulp at x = %.7g; Q(%g) = %.2f" % (u[i], x[i], b, qq[np.argmax(x)]))


def fit_log(nq):
    f = cheb(2 / 3 - 1, 4 / 3 - 1, 6000)
    tq = np.where(np.abs(f) < 1e-3, -0.5 + f / 3 - f * f / 4 + f ** 3 / 5 - f ** 4 / 6,
                  (np.log1p(f) - f) / np.where(f == 0, 1, f) ** 2)
    q, e = lawson(f, nq, tq, f * f / np.abs(np.log1p(f)))
    q = [f32(v) for v in q]
    print("Q (log1p on [-1/3, 1/3]): fit %.3f ulp\n  %s" % (e * 2 ** 24, [float(v) for v in q]))
    x = np.concatenate([np.arange(0x3f000000, 0x40000000, 3, dtype=np.uint32).view(f32),
                        np.exp(np.linspace(-87, 88, 400001)).astype(f32)])
    i = x.view(np.uint32).astype(np.int64)
    k = (i - 0x3f2aaaab) & 0xff800000
    k = np.where(k >= 2 ** 31, k - 2 ** 32, k)
    m = (i - k).astype(np.uint32).view(f32)
    fm = f32(m - f32(1))
    p = fma(f32(fm * fm), horner(q, fm), fm)
    kf = k.astype(f32)
    hi = f32(math.log(2))
    lo = f32(math.log(2) - float(hi))
    r = fma(kf, f32(float(hi) * 2 ** -23), fma(kf, f32(float(lo) * 2 ** -23), p))
    u = ulps(r, np.log(x.astype(np.float64)))
    j = int(np.argmax(u))
    print("f32 emulation of log: max %.3f ulp at x = %.9g" % (u[j], x[j]))
    r2 = fma(p, f32(1 / math.log(2)), f32(kf * f32(2.0 ** -23)))
    u2 = ulps(r2, np.log2(x.astype(np.float64)))
    j = int(np.argmax(u2))
    print("f32 emulation of log2: max %.3f ulp at x = %.9g" % (u2[j], x[j]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="?", default="all", choices=["erf", "log", "all"])
    ap.add_argument("--a", type=float, default=0.9)
    ap.add_argument("--n1", type=int, default=6)
    ap.add_argument("--n2", type=int, default=7)
    ap.add_argument("--b", type=float, default=4.0)
    ap.add_argument("--nq", type=int, default=8)
    a = ap.parse_args()
    if a.what in ("erf", "all"):
        fit_erf(a.a, a.n1, a.n2, a.b)
    if a.what in ("log", "all"):
        fit_log(a.nq)


if __name__ == "__main__":
    main()
