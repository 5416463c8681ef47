"""numpy_oracle: end-to-end check of `txc run --device=ref` against NumPy.

Usage: /usr/bin/python3 oracle.py TXC ROOT WORKDIR

The programs of EVERY_DEVICE (the IEEE edges of pow and the i32 rules, on
tensors and on folded constants) run on --device=cpu and --device=cpu
--no-fuse as well, and on --device=gpu when TX_ORACLE_GPU=1 (bench/gpu_check.sh):
every path must give NumPy's answer.

For each program in tests/oracle/*.tx this writes the inputs as .npy files
(or asks for --random-inputs), runs the CLI, and compares every outK.npy with
an expectation written by hand in NumPy below. Nothing here calls tx code:
the expected values come from NumPy in float64 (with explicit f16/bf16
rounding where the program's values are half precision).

Tolerances per output dtype (|got - want| <= atol + rtol * |want|; NaN must
meet NaN, an infinity the same infinity; i32 and bool exactly equal):
    f32  atol 1e-6  rtol 1e-5
    f16  atol 1e-4  rtol 1e-3   (about one f16 ulp)
    bf16 atol 1e-3  rtol 8e-3   (about one bf16 ulp)
bf16 outputs arrive as <f4 files and must hold bf16-representable values.
"""
import math
import os
import subprocess
import sys

import numpy as np

TOL = {"f32": (1e-6, 1e-5), "f16": (1e-4, 1e-3), "bf16": (1e-3, 8e-3)}
FILE_DTYPE = {"f32": "<f4", "f16": "<f2", "bf16": "<f4", "i32": "<i4", "bool": "|b1"}


# ---- rounding helpers (independent of the tx runtime) ----------------------
def rh(x):
    """Round float64 values to f16 (NumPy's conversion is correctly rounded)."""
    return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)


def rf(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def rb(x):
    """Round float64 values to bf16 once, to nearest with ties to even."""
    x = np.asarray(x, dtype=np.float64)
    out = np.array(x, copy=True)
    fin = np.isfinite(x) & (x != 0)
    a = np.abs(x[fin])
    _, e = np.frexp(a)                       # a = m * 2**e, m in [0.5, 1)
    e = np.maximum(e - 1, -126)              # exponent of the binade (denormals share -126)
    q = np.ldexp(1.0, e - 7)                 # spacing of bf16 values there
    r = np.round(a / q) * q                  # np.round: half to even
    bmax = (2 - 2.0 ** -7) * 2.0 ** 127
    r = np.where(r > bmax, np.inf, r)
    out[fin] = np.sign(x[fin]) * r
    return out


ERF = np.vectorize(math.erf, otypes=[np.float64])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def gelu(x):
    return 0.5 * x * (1 + ERF(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def layernorm(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps) * w + b


def rmsnorm(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def true_div(a, b):
    """`/` on i32 operands is true division (like NumPy and PyTorch): f32."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return a.astype(np.float64) / b.astype(np.float64)


def sat(x):
    return np.clip(np.asarray(x, dtype=np.int64), -2 ** 31, 2 ** 31 - 1)


# ---- the programs -------------------------------------------------------------
RNG = np.random.default_rng(20261130)


def f32(*shape, lo=-3.0, hi=3.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def prog_unary():
    x = f32(64)
    x[:6] = [-2, -0.5, 0, 0.5, 1, 3]
    p = f32(64, lo=0.05, hi=5)
    def expect(v):
        x, p = v["x"], v["p"]
        fs = [-x, np.abs(x), np.exp(x), np.exp2(x), np.log(p), np.log2(p), np.sqrt(p), 1 / np.sqrt(p), 1 / p,
              np.sin(x), np.cos(x), np.tanh(x), sigmoid(x), np.maximum(x, 0), gelu(x), gelu_tanh(x),
              x * sigmoid(x), ERF(x), np.floor(x), np.ceil(x)]
        return [(f, "f32") for f in fs]
    return {"x": (x, "f32"), "p": (p, "f32")}, expect


def prog_binary():
    a, b, p = f32(5, 7), f32(7), f32(5, 7, lo=0.1, hi=4)
    b[0] = 0.0  # a / 0 gives +-inf
    def expect(v):
        a, b, p = v["a"], v["b"], v["p"]
        with np.errstate(divide="ignore", invalid="ignore"):
            fs = [a + b, a - b, a * b, a / b, p ** b, np.maximum(a, b), np.minimum(a, b), np.power(p, b),
                  -(a ** 2), a * 0.5 + 1]
        return [(f, "f32") for f in fs]
    return {"a": (a, "f32"), "b": (b, "f32"), "p": (p, "f32")}, expect


def prog_compare():
    a, b = f32(4, 6), f32(4, 6)
    b[0] = a[0]  # some equal elements
    c = RNG.integers(0, 2, (4, 6)).astype(np.bool_)
    r = f32(6)
    def expect(v):
        a, b, c, r = v["a"], v["b"], v["c"], v["r"]
        return [(a < b, "bool"), (a <= b, "bool"), (a > b, "bool"), (a >= b, "bool"), (a == b, "bool"),
                (a != b, "bool"), (np.where(c, a, b), "f32"), (np.where(a > 0, a, 0.0), "f32"),
                (np.where(c, r, a), "f32")]
    return {"a": (a, "f32"), "b": (b, "f32"), "c": (c, "bool"), "r": (r, "f32")}, expect


def prog_casts():
    x = f32(32, lo=-100, hi=100)
    x[:8] = [1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 70000, 1e-8, 2.7, -2.7, 3e9, -3e9]
    i = RNG.integers(-5000, 5000, 32).astype(np.int32)
    i[:3] = [2049, 2051, 0]
    def expect(v):
        x, i = v["x"], v["i"]
        with np.errstate(over="ignore"):
            return [(rh(x), "f16"), (rb(x), "bf16"), (sat(np.trunc(x)), "i32"), (i.astype(np.float64), "f32"),
                    (rh(i), "f16"), ((x > 0).astype(np.float64), "f32")]
    return {"x": (x, "f32"), "i": (i, "i32")}, expect


def prog_reduce():
    x = f32(3, 4, 5)
    def expect(v):
        x = v["x"]
        return [(x.sum(), "f32"), (x.sum(axis=1), "f32"), (x.sum(axis=(0, 2), keepdims=True), "f32"),
                (x.mean(axis=-1), "f32"), (x.mean(axis=(0, 1)), "f32"), (x.max(axis=0), "f32"),
                (x.max(axis=-2, keepdims=True), "f32"), (x.min(), "f32"), (x.min(axis=(1, 2)), "f32")]
    return {"x": (x, "f32")}, expect


def prog_matmul():
    a, b, c = f32(2, 3, 8), f32(8, 5), f32(2, 5, 8)
    d, e = f32(3, 1, 3, 8), f32(2, 8, 5)
    def expect(v):
        return [(v["a"] @ v["b"], "f32"), (v["a"] @ np.swapaxes(v["c"], -1, -2), "f32"), (v["d"] @ v["e"], "f32")]
    return {"a": (a, "f32"), "b": (b, "f32"), "c": (c, "f32"), "d": (d, "f32"), "e": (e, "f32")}, expect


def prog_views():
    x, v, y = f32(2, 3, 4), f32(4), f32(2, 5, 4)
    def expect(t):
        x, v, y = t["x"], t["v"], t["y"]
        return [(np.swapaxes(x, 0, 2), "f32"), (np.transpose(x, (1, 2, 0)), "f32"), (x.reshape(2, -1), "f32"),
                (x.reshape(4, 3, 2), "f32"), (np.broadcast_to(v, (2, 3, 4)), "f32"), (x[:, 1:3], "f32"),
                (x[..., 0:2], "f32"), (np.concatenate((x, y), axis=1), "f32"),
                (np.concatenate((v, v, v), axis=0), "f32")]
    return {"x": (x, "f32"), "v": (v, "f32"), "y": (y, "f32")}, expect


def prog_composites():
    x, w, b = f32(6, 10), f32(10), f32(10)
    x[0] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 100]  # a large logit
    def expect(t):
        x, w, b = t["x"], t["w"], t["b"]
        fs = [softmax(x), softmax(x, 0), log_softmax(x), log_softmax(x, 0), layernorm(x, w, b),
              layernorm(x, w, b, 0.1), rmsnorm(x, w), rmsnorm(x, w, 0.5)]
        return [(f, "f32") for f in fs]
    return {"x": (x, "f32"), "w": (w, "f32"), "b": (b, "f32")}, expect


def prog_attention():
    q, k, v = f32(2, 2, 6, 4), f32(2, 2, 6, 4), f32(2, 2, 6, 4)
    def expect(t):
        return [(softmax(t["q"] @ np.swapaxes(t["k"], -1, -2) * 0.25) @ t["v"], "f32")]
    return {"q": (q, "f32"), "k": (k, "f32"), "v": (v, "f32")}, expect


def prog_half():
    h = f32(16, lo=-1, hi=1).astype(np.float16)
    g = f32(16, lo=-2, hi=2).astype(np.float16)
    x = f32(3, 8)  # arbitrary f32 values: rounded to bf16 on the way in
    x[0, :2] = [1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8]  # ties
    w, b = f32(8), f32(8)
    def expect(t):
        h, g, x, w, b = t["h"], t["g"], t["x"], t["w"], t["b"]
        s = rb(x - x.max(axis=-1, keepdims=True))
        e = rb(np.exp(s))
        sm = rb(e / rb(e.sum(axis=-1, keepdims=True)))
        return [(rh(h + g), "f16"), (rh(h * g), "f16"), (rh(np.exp(h)), "f16"), (rh(gelu(g)), "f16"),
                (rb(rb(x * w) + b), "bf16"), (rb(rmsnorm(x, w)), "bf16"), (rb(layernorm(x, w, b)), "bf16"),
                (rh(h.sum()), "f16"), (sm, "bf16"), (x, "bf16"), (rh(rh(h * 2) + g), "f16")]
    return {"h": (h, "f16"), "g": (g, "f16"), "x": (x, "bf16"), "w": (w, "bf16"), "b": (b, "bf16")}, expect


def prog_ints():
    a = RNG.integers(-1000, 1000, 24).astype(np.int32)
    b = RNG.integers(-50, 50, 24).astype(np.int32)
    a[:4] = [7, -7, 7, -7]
    b[:5] = [2, 2, -2, -2, 0]
    m = RNG.integers(0, 2, 24).astype(np.bool_)
    def expect(t):
        a, b, m = t["a"].astype(np.int64), t["b"].astype(np.int64), t["m"]
        return [(sat(a + b), "i32"), (sat(a - b), "i32"), (sat(a * b), "i32"), (true_div(a, b), "f32"),
                (np.maximum(a, b), "i32"), (np.minimum(a, b), "i32"), (np.where(m, a, b), "i32"),
                (sat(a.sum()), "i32"), (a.max(), "i32"), (a < b, "bool"), (np.abs(a), "i32"), (-a, "i32")]
    return {"a": (a, "i32"), "b": (b, "i32"), "m": (m, "bool")}, expect


POW_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1.5, -1.5,
             1e-30, 1e30, 100.0, -100.0, 1.4e-45, 7.0, 0.25]


def npow(a, b, dt=np.float32):
    """NumPy's power at dtype dt, as float64 values."""
    with np.errstate(all="ignore"):
        return np.power(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt)).astype(np.float64)


def prog_pow_edges():
    e = np.array(POW_EDGES, dtype=np.float32)
    a, b = e.reshape(-1, 1), e.reshape(1, -1)
    with np.errstate(over="ignore"):
        h = e.astype(np.float16).reshape(-1, 1)
    def expect(t):
        a, b, h, k = t["a"], t["b"], t["h"], t["k"]
        return [(npow(a, b), "f32"), (npow(a, b), "f32"), (npow(a, 2.0), "f32"), (npow(a, 1.0), "f32"),
                (npow(a, 0.5), "f32"), (npow(a, -1.0), "f32"), (npow(a, 0.0), "f32"),
                (npow(h, k, np.float16), "f16")]
    return {"a": (a, "f32"), "b": (b, "f32"), "h": (h, "f16"), "k": (h.reshape(1, -1).copy(), "f16")}, expect


def wrap32(x):
    """Integers reduced modulo 2^32 into the i32 range (NumPy int32 overflow)."""
    x = np.asarray(x, dtype=object)
    return np.array([((int(v) + 2 ** 31) % 2 ** 32) - 2 ** 31 for v in x.ravel()], dtype=np.int64).reshape(x.shape)


def ipow_neg(a, n):
    """The documented i32 a ** -n (n > 0): 1 / a**n truncated: 1, +-1 for a = -1, else 0."""
    a = np.asarray(a, dtype=np.int64)
    return np.where(a == 1, 1, np.where(a == -1, np.where(np.asarray(n) % 2 == 1, -1, 1), 0))


def prog_pow_folded():
    x = np.array(1.5, dtype=np.float32)
    def expect(t):
        inf, nan = np.inf, np.nan
        fl = [npow(-0.0, -1.0), npow(-1.0, inf), npow(-inf, 0.5), npow(nan, 0.0), npow(1.0, nan),
              npow(-0.0, 3.0), npow(-2.0, 0.5), npow(0.5, -inf), npow(-inf, -3.0), npow(-8.0, 3.0)]
        with np.errstate(over="ignore"):
            ints = [np.int32(2147483647) + np.int32(1), np.int32(65536) * np.int32(65536),
                    np.int32(3) ** np.int32(40), np.int32(-3) ** np.int32(41), np.int32(46341) ** np.int32(2),
                    ipow_neg(7, 1), ipow_neg(-1, 3), ipow_neg(0, 2), -np.int32(-2147483648)]
        return [(v, "f32") for v in fl] + [(np.int64(v), "i32") for v in ints] + [(t["x"], "f32")]
    return {"x": (x, "f32")}, expect


def prog_int_edges():
    big = [2147483647, -2147483648, 46341, -46341, 65536, 1 << 30, -(1 << 30), 3, -3, 7, 0, 1, -1, 2, -2, 1000]
    a = np.array(big + list(RNG.integers(-2 ** 31, 2 ** 31, 16)), dtype=np.int32)
    b = np.array(list(reversed(big)) + list(RNG.integers(-2 ** 31, 2 ** 31, 16)), dtype=np.int32)
    e = np.array([0, 1, 2, 3, 31, 32, 40, 41, 5, 17, 0, 9, 10, 11, 30, 4] + list(RNG.integers(0, 64, 16)), dtype=np.int32)
    def expect(t):
        a, b, e = t["a"], t["b"], t["e"]
        with np.errstate(over="ignore"):
            pw = a ** e
            neg = np.where(e == 0, 1, ipow_neg(a.astype(np.int64), e.astype(np.int64)))
            return [(wrap32(a.astype(np.int64) + b), "i32"), (wrap32(a.astype(np.int64) - b), "i32"),
                    (wrap32(a.astype(np.int64) * b), "i32"), (pw, "i32"), (a * a, "i32"), (a * a * a, "i32"),
                    (-a, "i32"), (np.abs(a), "i32"), (ipow_neg(a, 1), "i32"), (np.ones_like(a), "i32"),
                    (neg, "i32")]
    return {"a": (a, "i32"), "b": (b, "i32"), "e": (e, "i32")}, expect


EVERY_DEVICE = ("pow_edges", "pow_folded", "int_edges", "onehot")

def prog_index():
    x = f32(5, 7)
    x[0, 0] = 0.0
    m = RNG.integers(0, 2, (5, 7)).astype(np.bool_)
    def expect(t):
        x, m = t["x"], t["m"]
        r, c = np.indices((5, 7))
        cm = r >= c
        with np.errstate(invalid="ignore"):
            return [(((cm & m) | (~m & (x > 0))), "bool"), (np.arange(7) * 3, "i32"),
                    (np.where(np.arange(7) < 2, x, -np.inf), "f32"), (x * 0 + np.inf, "f32"),
                    (np.nan + x, "f32"), (~cm | (cm & False), "bool")]
    return {"x": (x, "f32"), "m": (m, "bool")}, expect


def prog_onehot():
    V, D, B, T = 6, 5, 2, 7
    table = f32(V, D)
    table[1] = np.nan                        # rows some ids look up and others do not
    table[3, 0], table[4, 2] = np.inf, -0.0
    w = rb(f32(V, D)).astype(np.float32)
    x = f32(V, T)
    x[2, 3] = -np.inf
    ids = RNG.integers(-2, V + 2, (B, T)).astype(np.int32)
    ids[0, :4] = [-1, V, 1, 3]
    itab = RNG.integers(-1000, 1000, (V, D)).astype(np.int32)
    def expect(t):
        hit = (t["ids"][..., None] == np.arange(V))[..., None]           # [B, T, V, 1]
        chit = np.arange(V)[None, :, None] == t["ids"][:, None, :]       # [B, V, T]
        with np.errstate(invalid="ignore"):
            return [(np.where(hit, t["table"], 0.0).sum(axis=2), "f32"),
                    (np.where(hit, t["w"], 0.0).sum(axis=2, keepdims=True) * 2.0, "f32"),
                    (np.where(chit, t["x"], 0.0).sum(axis=1), "f32"),
                    (np.where(hit, t["itab"], 0).sum(axis=2) + 1, "i32")]
    return {"table": (table, "f32"), "ids": (ids, "i32"), "w": (w, "bf16"), "x": (x, "f32"),
            "itab": (itab, "i32")}, expect


PROGRAMS = {
    "pow_edges": prog_pow_edges, "pow_folded": prog_pow_folded, "int_edges": prog_int_edges,
    "unary": prog_unary, "binary": prog_binary, "compare": prog_compare, "casts": prog_casts,
    "reduce": prog_reduce, "matmul": prog_matmul, "views": prog_views, "composites": prog_composites,
    "attention": prog_attention, "half": prog_half, "ints": prog_ints, "index": prog_index,
    "onehot": prog_onehot,
}


# ---- the documented random fill (docs/interpreter.md), written in Python --------
M64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def random_fill(seed, param, n, dtype):
    st = mix64(seed & M64) ^ mix64((0x9E3779B97F4A7C15 * (param + 1)) & M64)
    p = {"f16": 11, "bf16": 8}.get(dtype, 24)
    out = []
    for _ in range(n):
        st = (st + 0x9E3779B97F4A7C15) & M64
        r = mix64(st)
        if dtype == "i32":
            out.append((r >> 60) - 8)
        elif dtype == "bool":
            out.append(r >> 63)
        else:
            out.append((r >> (64 - p)) * 2.0 ** (1 - p) - 1.0)
    return np.array(out, dtype=np.float64)


# ---- running and comparing ------------------------------------------------------
def decode(arr, dt):
    """The values a program sees for an input file of logical dtype dt."""
    if dt == "bf16":
        return rb(arr.astype(np.float64))
    if dt in ("i32", "bool"):
        return arr.copy()
    return arr.astype(np.float64)


def compare(got, want, dt):
    """None when got matches want under dt's rule, else a message."""
    want = np.asarray(want)
    if got.dtype.str != np.dtype(FILE_DTYPE[dt]).str:
        return "file dtype %s, expected %s" % (got.dtype.str, FILE_DTYPE[dt])
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if dt in ("i32", "bool"):
        bad = np.flatnonzero(got.astype(np.int64).ravel() != want.astype(np.int64).ravel())
    else:
        g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
        atol, rtol = TOL[dt]
        with np.errstate(invalid="ignore"):
            ok = np.where(np.isnan(w), np.isnan(g),
                          np.where(np.isinf(w), g == w, np.abs(g - w) <= atol + rtol * np.abs(w)))
        bad = np.flatnonzero(~ok)
        if dt == "bf16" and not bad.size:
            bits = got.astype(np.float32).view(np.uint32).ravel()
            if np.any(bits & 0xFFFF):
                return "values are not bf16-representable"
    if bad.size:
        i = bad[0]
        return "%d of %d elements differ; first at flat index %d: got %r, want %r" % (
            bad.size, want.size, i, got.ravel()[i], want.ravel()[i])
    return None


def run_txc(txc, args):
    return subprocess.run([txc, "run"] + args, capture_output=True, text=True, timeout=120)


def check_program(txc, root, work, name, device=("--device=ref",)):
    inputs, expect = PROGRAMS[name]()
    d = os.path.join(work, name + "".join(device).replace("-", "_"))
    os.makedirs(d, exist_ok=True)
    args = [os.path.join(root, "tests", "oracle", name + ".tx")] + list(device) + ["--output-dir", os.path.join(d, "out")]
    vals = {}
    for n, (arr, dt) in inputs.items():
        path = os.path.join(d, n + ".npy")
        np.save(path, arr)
        args += ["--input", "%s=%s" % (n, path)]
        vals[n] = decode(arr, dt)
    r = run_txc(txc, args)
    if r.returncode != 0:
        return ["txc run failed (exit %d): %s" % (r.returncode, r.stderr.strip())]
    wants = expect(vals)
    errs = []
    for k, (want, dt) in enumerate(wants):
        path = os.path.join(d, "out", "out%d.npy" % k)
        if not os.path.exists(path):
            errs.append("out%d.npy missing" % k)
            continue
        msg = compare(np.load(path), want, dt)
        if msg:
            errs.append("out%d (%s): %s" % (k, dt, msg))
    extra = os.path.join(d, "out", "out%d.npy" % len(wants))
    if os.path.exists(extra):
        errs.append("more outputs than expected")
    return errs


def check_random(txc, root, work):
    tx = os.path.join(root, "tests", "oracle", "random.tx")
    specs = [("f32", (4, 5)), ("f16", (7,)), ("bf16", (6,)), ("i32", (9,)), ("bool", (8,))]
    errs = []
    outs = {}
    for seed in (7, 7, 8):
        d = os.path.join(work, "random%d_%d" % (seed, len(outs)))
        r = run_txc(txc, [tx, "--device=ref", "--random-inputs=%d" % seed, "--output-dir", d])
        if r.returncode != 0:
            return ["txc run --random-inputs failed (exit %d): %s" % (r.returncode, r.stderr.strip())]
        got = [np.load(os.path.join(d, "out%d.npy" % k)) for k in range(5)]
        outs.setdefault(seed, []).append(got)
        for k, (dt, shape) in enumerate(specs):
            want = random_fill(seed, k, int(np.prod(shape)), dt).reshape(shape)
            if dt == "bool":
                want = want.astype(np.bool_)
            msg = compare(got[k], want, dt)
            if msg:
                errs.append("seed %d param %d (%s): %s" % (seed, k, dt, msg))
    if not all(np.array_equal(a, b) for a, b in zip(outs[7][0], outs[7][1])):
        errs.append("the same seed gave different inputs")
    if np.array_equal(outs[7][0][0], outs[8][0][0]):
        errs.append("different seeds gave the same inputs")
    return errs


def check_errors(txc, root, work):
    """Bad inputs are one clear error line and exit status 1, never a crash."""
    tx = os.path.join(root, "tests", "oracle", "binary.tx")
    d = os.path.join(work, "errors")
    os.makedirs(d, exist_ok=True)
    good = os.path.join(d, "good.npy")
    np.save(good, f32(5, 7))
    cases = []
    np.save(os.path.join(d, "short.npy"), f32(6))
    cases.append(("b", "short.npy", "does not match"))
    np.save(os.path.join(d, "fortran.npy"), np.asfortranarray(f32(5, 7)))
    cases.append(("a", "fortran.npy", "Fortran"))
    np.save(os.path.join(d, "f8.npy"), np.zeros((5, 7)))
    cases.append(("a", "f8.npy", "unsupported dtype '<f8'"))
    with open(os.path.join(d, "trunc.npy"), "wb") as f:
        f.write(open(good, "rb").read()[:-3])
    cases.append(("a", "trunc.npy", "truncated"))
    with open(os.path.join(d, "garbage.npy"), "wb") as f:
        f.write(b"\x00garbage" * 10)
    cases.append(("a", "garbage.npy", "not a .npy file"))
    errs = []
    for pname, fname, want in cases:
        args = [tx, "--device=ref", "--output-dir", os.path.join(d, "out_" + fname)]
        for n in ("a", "b", "p"):
            path = os.path.join(d, fname) if n == pname else None
            if path is None:
                path = os.path.join(d, n + "_ok.npy")
                np.save(path, f32(7) if n == "b" else f32(5, 7, lo=0.1, hi=2))
            args += ["--input", "%s=%s" % (n, path)]
        r = run_txc(txc, args)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        if r.returncode != 1 or not lines or not lines[0].startswith("txc: error: ") or want not in r.stderr:
            errs.append("%s for '%s': exit %d, stderr %r (want exit 1 and '%s')" % (fname, pname, r.returncode,
                                                                                      r.stderr, want))
        if os.path.exists(os.path.join(d, "out_" + fname, "out0.npy")):
            errs.append("%s: an output was written despite the error" % fname)
    return errs


def main():
    txc, root, work = sys.argv[1:4]
    failed = 0
    checks = [(n, lambda n=n: check_program(txc, root, work, n)) for n in PROGRAMS]
    devices = [("--device=cpu",), ("--device=cpu", "--no-fuse")]
    if os.environ.get("TX_ORACLE_GPU") == "1":
        devices += [("--device=gpu",), ("--device=gpu", "--no-fuse")]
    for dev in devices:
        checks += [("%s %s" % (n, " ".join(dev)), lambda n=n, dev=dev: check_program(txc, root, work, n, dev))
                   for n in EVERY_DEVICE]
    checks += [("random", lambda: check_random(txc, root, work)), ("errors", lambda: check_errors(txc, root, work))]
    for name, fn in checks:
        errs = fn()
        print("%-32s %s" % (name, "ok" if not errs else "FAILED"))
        for e in errs:
            print("    " + e)
        failed += bool(errs)
    print("%d of %d checks failed" % (failed, len(checks)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
