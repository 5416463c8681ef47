"""The held-out programs of bench/heldout/*.tx: their sizes, inputs, a NumPy reference of each
(the CPU check, tests/scripts/heldout.sh -> bench/heldout/check_cpu.py) and the PyTorch expression
a user would have written instead (the GPU check, bench/heldout_check.sh -> bench/heldout_torch.py).

Every NumPy reference is written from the PyTorch expression beside it, not from the tx source:
float64 arithmetic on the stored values, bf16/f16 rounding where a tensor of that dtype is
returned. Sizes live only here and are passed to txc as -D bindings; the compiler never sees a name.

CASE fields: name (the .tx file), cpu (a list of -D dicts: small, ragged, the CI sizes), gpu (the
-D dict timed on the GPU), inputs [(name, shape as a tuple of dim names / ints, dtype, kind)],
ref(np inputs dict, dims) -> list of outputs, torch(tensors..., dims) -> output(s), attention
(the program must plan one attention kernel), fast (in the CI subset)."""
import math

try:
    import numpy as np
except ImportError:  # the GPU check runs without NumPy (random inputs only)
    np = None

CASES = []
SC128 = 0.08838834764831845


def case(name, cpu, gpu, inputs, ref, torch, attention=False, fast=True, kernels=None):
    CASES.append(dict(name=name, cpu=cpu, gpu=gpu, inputs=inputs, ref=ref, torch=torch,
                      attention=attention, fast=fast, kernels=kernels))


# ---- rounding helpers (NumPy side) ---------------------------------------------------------------
def rb(x):
    """Round to bf16 (nearest even), returned as float64."""
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    r = b.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(x), np.nan, r)


def rh(x):
    return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)


ROUND = {"bf16": rb, "f16": rh, "f32": lambda x: np.asarray(x, np.float64).astype(np.float32).astype(np.float64)}


def shape_of(shape, dims):
    return tuple(dims[d] if isinstance(d, str) else d for d in shape)


def np_input(rng, shape, dtype, kind, dims):
    """One input array for the CPU check (what is saved as .npy: f32 for bf16/f32, f16, i32, bool)."""
    if kind == "lens":  # lengths 0, 1, full, then spread (a wholly masked row first where allowed)
        n = shape[0]
        full = dims.get("L", dims.get("S"))
        lo = dims.get("T", 0)  # a decode step's T new tokens are in the cache
        vals = [max(lo, 0), max(lo, 1), full] + [int(rng.integers(max(lo, 1), full + 1)) for _ in range(n)]
        return np.array(vals[:n], dtype=np.int32)
    if kind == "pos":  # the first new token's position: 0, the last that fits, then spread
        n, top = shape[0], dims["L"] - dims["T"]
        vals = [0, top] + [int(rng.integers(0, top + 1)) for _ in range(n)]
        return np.array(vals[:n], dtype=np.int32)
    if kind == "labels":
        return rng.integers(0, dims["V"], size=shape).astype(np.int32)
    if kind == "bool":
        return rng.random(shape) < 0.7
    a = rng.standard_normal(shape)
    if kind == "small":
        a = a * 0.05
    if kind == "w":  # a weight at its usual initialisation: 1 / sqrt(fan_in)
        a = a / math.sqrt(shape[0])
    if kind == "unit":
        a = rng.random(shape)
    if kind == "big":
        a = a * 6.0
    if dtype == "f16":
        return a.astype(np.float16)
    if dtype == "bf16":
        return rb(a).astype(np.float32)
    return a.astype(np.float32)


def attend(s, v, out):
    """softmax over the last axis (f32 in PyTorch: here float64), rounded to v's dtype, then @ v."""
    with np.errstate(invalid="ignore"):
        m = s.max(axis=-1, keepdims=True)
        e = np.exp(s - m)
        p = e / e.sum(axis=-1, keepdims=True)
    return ROUND[out](ROUND[out](p) @ v)


def causal(sq, sk=None):
    sk = sq if sk is None else sk
    return np.arange(sq)[:, None] >= np.arange(sk)[None, :]


def f64(d):
    return {k: (v.astype(np.float64) if v.dtype.kind == "f" else v) for k, v in d.items()}


def T():
    import torch
    return torch


def F():
    import torch.nn.functional as f
    return f


# ---- norms ------------------------------------------------------------------------------------------
def ref_rmsnorm_residual(a, d):
    h = rb(a["x"] + a["a"])
    y = h / np.sqrt((h * h).mean(-1, keepdims=True) + 1e-5) * a["w"]
    return [h, rb(y)]


def t_rmsnorm_residual(x, a, w, d):
    h = x + a
    hf = h.float()
    return h, (hf * T().rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()).to(h.dtype)


case("rmsnorm_residual", [dict(M=1, D=1), dict(M=5, D=77), dict(M=33, D=1000)], dict(M=4096, D=3073),
     [("x", ("M", "D"), "bf16", "n"), ("a", ("M", "D"), "bf16", "n"), ("w", ("D",), "bf16", "n")],
     ref_rmsnorm_residual, t_rmsnorm_residual)


def np_ln(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


case("layernorm_3d", [dict(B=2, S=7, D=96), dict(B=3, S=5, D=770)], dict(B=16, S=1000, D=1536),
     [("x", ("B", "S", "D"), "bf16", "n"), ("w", ("D",), "bf16", "n"), ("b", ("D",), "bf16", "n")],
     lambda a, d: [rb(np_ln(a["x"], a["w"], a["b"], 1e-5))],
     lambda x, w, b, d: F().layer_norm(x, (x.shape[-1],), w, b, 1e-5))

case("layernorm_f32_res", [dict(B=2, S=9, D=768), dict(B=1, S=1, D=13)], dict(B=32, S=512, D=768),
     [("x", ("B", "S", "D"), "f32", "n"), ("y", ("B", "S", "D"), "f32", "n"), ("g", ("D",), "f32", "n"),
      ("b", ("D",), "f32", "n")],
     lambda a, d: [np_ln(a["x"] + a["y"], a["g"], a["b"], 1e-12)],
     lambda x, y, g, b, d: F().layer_norm(x + y, (x.shape[-1],), g, b, 1e-12))

case("qk_rmsnorm", [dict(B=2, S=5, H=3)], dict(B=8, S=2048, H=32),
     [("q", ("B", "S", "H", 128), "bf16", "n"), ("w", (128,), "bf16", "n")],
     lambda a, d: [rb(a["q"] / np.sqrt((a["q"] ** 2).mean(-1, keepdims=True) + 1e-6) * a["w"])],
     lambda q, w, d: F().rms_norm(q.float(), (128,), w.float(), 1e-6).to(q.dtype))


# ---- reductions -------------------------------------------------------------------------------------
def ref_ce(a, d):
    x = a["logits"]
    m = x.max(-1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(-1)) + m[:, 0]
    return [np.array((lse - x[np.arange(x.shape[0]), a["labels"]]).mean())]


case("cross_entropy", [dict(N=3, V=50257), dict(N=1, V=10)], dict(N=2048, V=50257),
     [("logits", ("N", "V"), "bf16", "big"), ("labels", ("N",), "i32", "labels")],
     ref_ce, lambda logits, labels, d: F().cross_entropy(logits.float(), labels.long()))


def ref_log_softmax(a, d):
    x = a["logits"]
    m = x.max(-1, keepdims=True)
    return [x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))]


case("log_softmax_vocab", [dict(T=2, V=50257), dict(T=5, V=33)], dict(T=1024, V=50257),
     [("logits", ("T", "V"), "bf16", "big")], ref_log_softmax,
     lambda logits, d: T().log_softmax(logits.float(), dim=-1))


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


case("softmax_mid", [dict(B=2, S=77, C=5), dict(B=1, S=1, C=3)], dict(B=64, S=1024, C=768),
     [("x", ("B", "S", "C"), "f32", "big")], lambda a, d: [np_softmax(a["x"], 1)],
     lambda x, d: T().softmax(x, dim=1))

case("colsum_bf16", [dict(M=1, N=5), dict(M=1000, N=33), dict(M=3, N=4099)], dict(M=8192, N=3000),
     [("g", ("M", "N"), "bf16", "n")], lambda a, d: [rb(a["g"].sum(0))], lambda g, d: g.sum(0))


def ref_batch_stats(a, d):
    x = a["x"]
    mu = x.mean(0)
    var = ((x - mu) ** 2).mean(0)
    return [mu, var, (x - mu) / np.sqrt(var + 1e-5)]


def t_batch_stats(x, d):
    var, mu = T().var_mean(x, dim=0, correction=0)
    return mu, var, (x - mu) * T().rsqrt(var + 1e-5)


case("batch_stats", [dict(N=300, C=7), dict(N=2, C=129), dict(N=1, C=3)], dict(N=32768, C=512),
     [("x", ("N", "C"), "f32", "n")], ref_batch_stats, t_batch_stats)


def ref_row_var(a, d):
    v = a["x"].var(-1, ddof=1)
    return [v, np.sqrt(v)]


def t_row_var(x, d):
    v = T().var(x, dim=-1, correction=1)
    return v, T().sqrt(v)


case("row_variance", [dict(M=4, N=1000), dict(M=3, N=2)], dict(M=8192, N=4000),
     [("x", ("M", "N"), "f32", "n")], ref_row_var, t_row_var)


def ref_pool(a, d):
    h, ln = a["h"], a["len"]
    keep = np.arange(h.shape[1])[None, :, None] < ln[:, None, None]
    return [np.where(keep, h, 0).sum(1) / np.maximum(ln, 1)[:, None]]


def t_pool(h, ln, d):
    keep = (T().arange(h.shape[1], device=h.device)[None, :, None] < ln[:, None, None])
    return (h.float() * keep).sum(1) / ln.clamp(min=1)[:, None].float()


case("masked_mean_pool", [dict(B=4, S=9, D=40), dict(B=3, S=1, D=1)], dict(B=64, S=512, D=1024),
     [("h", ("B", "S", "D"), "bf16", "n"), ("len", ("B",), "i32", "lens")], ref_pool, t_pool)

case("tiny_ops", [dict()], dict(),
     [("x", (3, 7), "f32", "n"), ("w", (7,), "f32", "n"), ("b", (7,), "f32", "n"), ("s", (1, 5), "f32", "n"),
      ("v", (17,), "f32", "n")],
     lambda a, d: [np_ln(a["x"], a["w"], a["b"], 1e-5), np_softmax(a["s"], -1), np.array(a["v"].sum())],
     lambda x, w, b, s, v, d: (F().layer_norm(x, (7,), w, b, 1e-5), T().softmax(s, -1), v.sum()))


# ---- pointwise --------------------------------------------------------------------------------------
def ref_rotary(a, d):
    q = a["q"]
    pos = np.arange(q.shape[1])[:, None, None]
    inv = 10000.0 ** (-np.arange(32) * 2 / 64.0)
    th = pos * inv
    c, s = np.cos(th), np.sin(th)
    x1, x2 = q[..., :32], q[..., 32:]
    return [rb(np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1))]


def t_rotary(q, d):
    tt = T()
    s_ = q.shape[1]
    inv = 10000.0 ** (-tt.arange(32, device=q.device, dtype=tt.float32) * 2 / 64.0)
    th = tt.arange(s_, device=q.device, dtype=tt.float32)[:, None, None] * inv
    c, s = th.cos(), th.sin()
    x1, x2 = q[..., :32].float(), q[..., 32:].float()
    return tt.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(q.dtype)


case("rotary", [dict(B=2, S=33, H=3), dict(B=1, S=1, H=1)], dict(B=4, S=4096, H=32),
     [("q", ("B", "S", "H", 64), "bf16", "n")], ref_rotary, t_rotary)

case("ema_update", [dict(N=1001)], dict(N=16777259),
     [("p", ("N",), "f32", "n"), ("q", ("N",), "f32", "n"), ("d", (), "f32", "unit")],
     lambda a, d: [a["d"] * a["p"] + (1 - a["d"]) * a["q"]],
     lambda p, q, dd, d: dd * p + (1 - dd) * q)


# ---- matrix products --------------------------------------------------------------------------------
def np_gelu(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def ref_mlp(act):
    def f(a, d):
        h = rb(act(rb(a["x"] @ a["w1"]) + a["b1"]))
        return [rb(a["x"] + rb(rb(h @ a["w2"]) + a["b2"]))]
    return f


MLP_IN = [("x", ("M", "D"), "bf16", "n"), ("w1", ("D", "F"), "bf16", "small"), ("b1", ("F",), "bf16", "n"),
          ("w2", ("F", "D"), "bf16", "small"), ("b2", ("D",), "bf16", "n")]
case("gelu_mlp", [dict(M=33, D=64, F=256), dict(M=1, D=16, F=48)], dict(M=4096, D=1024, F=4096),
     MLP_IN, ref_mlp(np_gelu), lambda x, w1, b1, w2, b2, d: x + (F().gelu(x @ w1 + b1) @ w2 + b2))
case("gelu_tanh_mlp", [dict(M=77, D=48, F=192)], dict(M=1000, D=2048, F=8192),
     MLP_IN, ref_mlp(np_gelu_tanh),
     lambda x, w1, b1, w2, b2, d: x + F().gelu(x @ w1 + b1, approximate="tanh") @ w2 + b2)


def ref_swiglu(a, d):
    g, u = rb(a["x"] @ a["wg"]), rb(a["x"] @ a["wu"])
    h = rb(rb(g / (1 + np.exp(-g))) * u)
    return [rb(h @ a["wd"])]


case("swiglu_mlp", [dict(M=21, D=64, F=176)], dict(M=2000, D=4096, F=11008),
     [("x", ("M", "D"), "bf16", "n"), ("wg", ("D", "F"), "bf16", "small"), ("wu", ("D", "F"), "bf16", "small"),
      ("wd", ("F", "D"), "bf16", "small")],
     ref_swiglu, lambda x, wg, wu, wd, d: (F().silu(x @ wg) * (x @ wu)) @ wd)


def ref_l2sim(a, d):
    n = lambda x: x / np.sqrt((x * x).sum(-1, keepdims=True) + 1e-12)
    return [14.285714 * (n(a["a"]) @ n(a["b"]).T)]


case("l2norm_sim", [dict(N=9, M=13, E=32)], dict(N=1024, M=4096, E=512),
     [("a", ("N", "E"), "f32", "n"), ("b", ("M", "E"), "f32", "n")], ref_l2sim,
     lambda a, b, d: 14.285714 * (F().normalize(a, dim=-1, eps=1e-6) @ F().normalize(b, dim=-1, eps=1e-6).T))

case("bmm_broadcast", [dict(B=3, T=5, K=40, N=24)], dict(B=16, T=256, K=1024, N=1024),
     [("x", ("B", "T", "K"), "f32", "n"), ("w", ("K", "N"), "f32", "n"), ("b", ("N",), "f32", "n")],
     lambda a, d: [a["x"] @ a["w"] + a["b"]], lambda x, w, b, d: x @ w + b)

case("bmm_heads", [dict(B=2, H=3, M=7, K=16, N=9)], dict(B=8, H=16, M=256, K=128, N=256),
     [("a", ("B", 1, "M", "K"), "bf16", "n"), ("b", (1, "H", "K", "N"), "bf16", "n")],
     lambda a, d: [rb(a["a"] @ a["b"])], lambda a, b, d: a @ b)

case("skinny_gemm", [dict(M=7, K=256, N=72)], dict(M=7, K=4096, N=11008),
     [("x", ("M", "K"), "bf16", "n"), ("w", ("K", "N"), "bf16", "small"), ("r", ("M", "N"), "bf16", "n")],
     lambda a, d: [rb(rb(a["x"] @ a["w"]) + a["r"])], lambda x, w, r, d: x @ w + r)

case("ragged_gemm", [dict(M=37, K=45, N=29)], dict(M=3001, K=2005, N=1999),
     [("x", ("M", "K"), "bf16", "n"), ("w", ("K", "N"), "bf16", "small"), ("b", ("N",), "bf16", "n")],
     lambda a, d: [rb(np.maximum(rb(a["x"] @ a["w"]) + a["b"], 0))], lambda x, w, b, d: T().relu(x @ w + b))

case("mixed_gemm", [dict(M=17, K=64, N=40)], dict(M=2048, K=2048, N=2048),
     [("x", ("M", "K"), "f16", "n"), ("w", ("K", "N"), "bf16", "small"), ("b", ("N",), "f32", "n")],
     lambda a, d: [rh(a["x"] @ a["w"] + a["b"])],
     lambda x, w, b, d: (x.float() @ w.float() + b).half())

case("f32_gemm_small", [dict(M=8, K=64, N=16)], dict(M=64, K=256, N=64),
     [("x", ("M", "K"), "f32", "n"), ("w", ("K", "N"), "f32", "small")],
     lambda a, d: [1 / (1 + np.exp(-(a["x"] @ a["w"])))], lambda x, w, d: T().sigmoid(x @ w))


# ---- attention --------------------------------------------------------------------------------------
def t_attn(q, k, v, scale, mask=None, bias=None, cap=None, gqa=False):
    """The PyTorch expression: scores in f32, softmax, cast, @ v."""
    tt = T()
    if gqa and k.shape[-3] != q.shape[-3]:
        r = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(r, dim=-3), v.repeat_interleave(r, dim=-3)
    s = (q @ k.transpose(-1, -2)).float() * scale
    if bias is not None:
        s = s + bias
    if cap is not None:
        s = tt.tanh(s / cap) * cap
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return tt.softmax(s, dim=-1).to(q.dtype) @ v


def t_causal(sq, sk, dev):
    tt = T()
    return tt.arange(sq, device=dev)[:, None] >= tt.arange(sk, device=dev)[None, :]


def ref_attn_causal_d64(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) / 8.0
    return [attend(np.where(causal(d["S"]), s, -np.inf), a["v"], "bf16")]


ATT3 = [(n, ("N", "S", 64), "bf16", "n") for n in "qkv"]
case("attn_causal_d64", [dict(N=3, S=1), dict(N=2, S=7), dict(N=2, S=130)], dict(N=96, S=2048), ATT3,
     ref_attn_causal_d64, lambda q, k, v, d: t_attn(q, k, v, 0.125, t_causal(d["S"], d["S"], q.device)),
     attention=True)


def split(t, b, s, h, dd):
    return t.reshape(b, s, h, dd).transpose(0, 2, 1, 3)


def merge(o):
    b, h, s, dd = o.shape
    return o.transpose(0, 2, 1, 3).reshape(b, s, h * dd)


def ref_window(a, d):
    b, s = d["B"], d["S"]
    q, k, v = (split(a[n], b, s, 16, 64) for n in "qkv")
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    keep = (j <= i) & (i - j < 256)
    return [merge(attend(np.where(keep, rb(q @ np.swapaxes(k, -1, -2)) * 0.125, -np.inf), v, "bf16"))]


def t_window(q, k, v, d):
    tt = T()
    b, s = d["B"], d["S"]
    qh, kh, vh = (t.view(b, s, 16, 64).transpose(1, 2) for t in (q, k, v))
    i = tt.arange(s, device=q.device)[:, None]
    j = tt.arange(s, device=q.device)[None, :]
    o = t_attn(qh, kh, vh, 0.125, (j <= i) & (i - j < 256))
    return o.transpose(1, 2).reshape(b, s, 1024)


case("attn_window_split", [dict(B=2, S=33), dict(B=1, S=300)], dict(B=4, S=4096),
     [(n, ("B", "S", 1024), "bf16", "n") for n in "qkv"], ref_window, t_window, attention=True)


def alibi_slopes(h):
    return 2.0 ** (-8.0 * (np.arange(h) + 1) / h)


def ref_alibi(a, d):
    s_ = d["S"]
    i, j = np.arange(s_)[:, None], np.arange(s_)[None, :]
    sl = alibi_slopes(16)[:, None, None]
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.10206207261596575 + sl * (j - i)
    return [attend(np.where(j <= i, s, -np.inf), a["v"], "bf16")]


def t_alibi(q, k, v, d):
    tt = T()
    h, s_ = 16, d["S"]
    sl = 2.0 ** (-8.0 * (tt.arange(h, device=q.device, dtype=tt.float32) + 1) / h)
    pos = tt.arange(s_, device=q.device)
    bias = sl[:, None, None] * (pos[None, :] - pos[:, None]).float()
    return t_attn(q, k, v, 0.10206207261596575, t_causal(s_, s_, q.device), bias=bias)


case("attn_alibi_iota", [dict(B=1, S=7), dict(B=2, S=77)], dict(B=4, S=2048),
     [(n, ("B", 16, "S", 96), "bf16", "n") for n in "qkv"], ref_alibi, t_alibi, attention=True)


def ref_softcap(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * SC128
    s = np.tanh(s / 30.0) * 30.0
    return [attend(np.where(causal(d["S"]), s, -np.inf), a["v"], "bf16")]


case("attn_softcap_gemma", [dict(B=1, H=2, S=33), dict(B=1, H=1, S=1)], dict(B=4, H=16, S=4096),
     [("q", ("B", "H", "S", 128), "bf16", "big"), ("k", ("B", "H", "S", 128), "bf16", "n"),
      ("v", ("B", "H", "S", 128), "bf16", "n")],
     ref_softcap, lambda q, k, v, d: t_attn(q, k, v, SC128, t_causal(d["S"], d["S"], q.device), cap=30.0),
     attention=True)


def ref_keypad(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.125
    pad = np.arange(d["S"])[None, None, None, :] >= a["len"][:, None, None, None]
    return [attend(np.where(pad, -np.inf, s), a["v"], "bf16")]


def t_keypad(q, k, v, ln, d):
    keep = T().arange(d["S"], device=q.device)[None, None, None, :] < ln[:, None, None, None]
    return t_attn(q, k, v, 0.125, keep)


case("attn_keypad", [dict(B=4, S=65)], dict(B=16, S=512),
     [(n, ("B", 12, "S", 64), "bf16", "n") for n in "qkv"] + [("len", ("B",), "i32", "lens")],
     ref_keypad, t_keypad, attention=True)


def ref_boolmask(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.11180339887498948
    return [attend(np.where(a["m"] & causal(d["S"]), s, -np.inf), a["v"], "bf16")]


case("attn_boolmask", [dict(B=2, H=2, S=45)], dict(B=4, H=32, S=2048),
     [(n, ("B", "H", "S", 80), "bf16", "n") for n in "qkv"] + [("m", ("B", 1, "S", "S"), "bool", "bool")],
     ref_boolmask,
     lambda q, k, v, m, d: t_attn(q, k, v, 0.11180339887498948, m & t_causal(d["S"], d["S"], q.device)),
     attention=True)


def ref_relbias(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) + a["pb"]
    return [attend(s, a["v"], "bf16")]


case("attn_relbias", [dict(B=2, H=3, S=40)], dict(B=8, H=16, S=1024),
     [(n, ("B", "H", "S", 64), "bf16", "n") for n in "qkv"] + [("pb", ("H", "S", "S"), "f32", "n")],
     ref_relbias, lambda q, k, v, pb, d: t_attn(q, k, v, 1.0, bias=pb), attention=True)


def ref_gqa(a, d):
    b, s = d["B"], d["S"]
    q = split(a["q"], b, s, 32, 128)
    k = np.repeat(split(a["k"], b, s, 8, 128), 4, axis=1)
    v = np.repeat(split(a["v"], b, s, 8, 128), 4, axis=1)
    sc = rb(q @ np.swapaxes(k, -1, -2)) * SC128
    return [merge(attend(np.where(causal(s), sc, -np.inf), v, "bf16"))]


def t_gqa(q, k, v, d):
    b, s = d["B"], d["S"]
    qh = q.view(b, s, 32, 128).transpose(1, 2)
    kh, vh = (t.view(b, s, 8, 128).transpose(1, 2) for t in (k, v))
    o = t_attn(qh, kh, vh, SC128, t_causal(s, s, q.device), gqa=True)
    return o.transpose(1, 2).reshape(b, s, 4096)


case("attn_gqa_32_8", [dict(B=1, S=1), dict(B=1, S=7), dict(B=2, S=33)], dict(B=2, S=4096),
     [("q", ("B", "S", 4096), "bf16", "n"), ("k", ("B", "S", 1024), "bf16", "n"), ("v", ("B", "S", 1024), "bf16", "n")],
     ref_gqa, t_gqa, attention=True)


def ref_mqa(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.125
    return [attend(np.where(causal(d["S"]), s, -np.inf), a["v"], "bf16")]


case("attn_mqa", [dict(B=2, S=33), dict(B=1, S=1)], dict(B=8, S=2048),
     [("q", ("B", 8, "S", 64), "bf16", "n"), ("k", ("B", 1, "S", 64), "bf16", "n"), ("v", ("B", 1, "S", 64), "bf16", "n")],
     ref_mqa, lambda q, k, v, d: t_attn(q, k, v, 0.125, t_causal(d["S"], d["S"], q.device), gqa=True),
     attention=True)


def ref_cross(a, d):
    return [attend(rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.125, a["v"], "bf16")]


case("attn_cross", [dict(B=1, SQ=7, SK=33), dict(B=2, SQ=1, SK=150), dict(B=1, SQ=130, SK=1)], dict(B=8, SQ=448, SK=1500),
     [("q", ("B", 20, "SQ", 64), "bf16", "n"), ("k", ("B", 20, "SK", 64), "bf16", "n"),
      ("v", ("B", 20, "SK", 64), "bf16", "n")],
     ref_cross, lambda q, k, v, d: t_attn(q, k, v, 0.125), attention=True)


def ref_f16(a, d):
    q = rh(a["q"] * SC128)
    return [attend(rh(q @ np.swapaxes(a["k"], -1, -2)), a["v"], "f16")]


case("attn_f16_d128", [dict(B=1, H=2, S=70)], dict(B=4, H=32, S=2048),
     [(n, ("B", "H", "S", 128), "f16", "n") for n in "qkv"], ref_f16,
     lambda q, k, v, d: T().softmax(((q * SC128) @ k.transpose(-1, -2)).float(), dim=-1).half() @ v,
     attention=True)


def ref_decode_spec(a, d):
    b, t, L = d["B"], d["T"], d["L"]
    q = a["q"].reshape(b, 8, 4, t, 128)
    k = a["k"].reshape(b, 8, 1, L, 128)
    v = a["v"].reshape(b, 8, 1, L, 128)
    s = rb(q @ np.swapaxes(k, -1, -2)) * SC128
    last = a["pos"][:, None, None, None, None] + np.arange(t)[:, None]
    keep = np.arange(L)[None, :] <= last
    return [attend(np.where(keep, s, -np.inf), v, "bf16").reshape(b, 32, t, 128)]


def t_decode_spec(q, k, v, ln, d):
    tt = T()
    t, L = d["T"], d["L"]
    last = ln[:, None, None, None] + tt.arange(t, device=q.device)[:, None]
    keep = tt.arange(L, device=q.device)[None, :] <= last
    return t_attn(q, k, v, SC128, keep, gqa=True)


case("decode_spec", [dict(B=3, T=4, L=70), dict(B=2, T=1, L=5), dict(B=2, T=16, L=16)], dict(B=8, T=4, L=8192),
     [("q", ("B", 32, "T", 128), "bf16", "n"), ("k", ("B", 8, "L", 128), "bf16", "n"),
      ("v", ("B", 8, "L", 128), "bf16", "n"), ("pos", ("B",), "i32", "pos")],
     ref_decode_spec, t_decode_spec, attention=True)


def ref_decode_f16(a, d):
    s = rh(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.125
    keep = np.arange(d["L"])[None, None, None, :] < a["len"][:, None, None, None]
    return [attend(np.where(keep, s, -np.inf), a["v"], "f16")]


def t_decode_f16(q, k, v, ln, d):
    keep = T().arange(d["L"], device=q.device)[None, None, None, :] < ln[:, None, None, None]
    return t_attn(q, k, v, 0.125, keep)


case("decode_f16", [dict(B=3, H=2, L=300)], dict(B=16, H=16, L=4100),
     [("q", ("B", "H", 1, 64), "f16", "n"), ("k", ("B", "H", "L", 64), "f16", "n"),
      ("v", ("B", "H", "L", 64), "f16", "n"), ("len", ("B",), "i32", "lens")],
     ref_decode_f16, t_decode_f16, attention=True)


# ---- [B, S, D] layers (nn.Linear on a batch) ---------------------------------------------------
case("mlp_3d", [dict(B=2, S=5, D=32, F=96)], dict(B=4, S=1024, D=1024, F=4096),
     [("x", ("B", "S", "D"), "bf16", "n"), ("w1", ("D", "F"), "bf16", "small"), ("b1", ("F",), "bf16", "n"),
      ("w2", ("F", "D"), "bf16", "small"), ("b2", ("D",), "bf16", "n")],
     ref_mlp(np_gelu), lambda x, w1, b1, w2, b2, d: x + (F().gelu(x @ w1 + b1) @ w2 + b2))


def np_rms(x, w, eps):
    return rb(x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w)


def ref_block(a, d):
    b, s = d["B"], d["S"]
    x = a["x"]
    h = np_rms(x, a["n1"], 1e-5)
    q, k, v = (split(rb(h @ a[w]), b, s, 16, 128) for w in ("wq", "wk", "wv"))
    o = merge(attend(np.where(causal(s), rb(q @ np.swapaxes(k, -1, -2)) * SC128, -np.inf), v, "bf16"))
    x = rb(x + rb(o @ a["wo"]))
    g = np_rms(x, a["n2"], 1e-5)
    gg, u = rb(g @ a["wg"]), rb(g @ a["wu"])
    return [rb(x + rb(rb(rb(gg / (1 + np.exp(-gg))) * u) @ a["wd"]))]


def t_block(x, n1, wq, wk, wv, wo, n2, wg, wu, wd, d):
    b, s = d["B"], d["S"]
    rms = lambda t, w: F().rms_norm(t.float(), (2048,), w.float(), 1e-5).to(t.dtype)
    h = rms(x, n1)
    q, k, v = ((h @ w).view(b, s, 16, 128).transpose(1, 2) for w in (wq, wk, wv))
    o = F().scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + o.transpose(1, 2).reshape(b, s, 2048) @ wo
    g = rms(x, n2)
    return x + (F().silu(g @ wg) * (g @ wu)) @ wd


case("block_bsd", [dict(B=1, S=5)], dict(B=2, S=2048),
     [("x", ("B", "S", 2048), "bf16", "n"), ("n1", (2048,), "bf16", "n"),
      ("wq", (2048, 2048), "bf16", "w"), ("wk", (2048, 2048), "bf16", "w"),
      ("wv", (2048, 2048), "bf16", "w"), ("wo", (2048, 2048), "bf16", "w"), ("n2", (2048,), "bf16", "n"),
      ("wg", (2048, 5632), "bf16", "w"), ("wu", (2048, 5632), "bf16", "w"),
      ("wd", (5632, 2048), "bf16", "w")],
     ref_block, t_block, fast=False)


def ref_qkv_split(a, d):
    b, s = d["B"], d["S"]
    qkv = a["qkv"]
    q, k, v = (split(qkv[..., i * 768:(i + 1) * 768], b, s, 12, 64) for i in range(3))
    sc = rb(q @ np.swapaxes(k, -1, -2)) * 0.125
    return [merge(attend(np.where(causal(s), sc, -np.inf), v, "bf16"))]


def t_qkv_split(qkv, d):
    b, s = d["B"], d["S"]
    q, k, v = (t.view(b, s, 12, 64).transpose(1, 2) for t in qkv.split(768, dim=2))
    o = t_attn(q, k, v, 0.125, t_causal(s, s, qkv.device))
    return o.transpose(1, 2).reshape(b, s, 768)


case("attn_qkv_split", [dict(B=2, S=33), dict(B=1, S=1)], dict(B=8, S=1024),
     [("qkv", ("B", "S", 2304), "bf16", "n")], ref_qkv_split, t_qkv_split, attention=True)


def ref_lse(a, d):
    s = rb(a["q"] @ np.swapaxes(a["k"], -1, -2)) * 0.125
    m = s.max(-1, keepdims=True)
    l = np.exp(s - m).sum(-1, keepdims=True)
    return [attend(s, a["v"], "bf16"), (np.log(l) + m)[..., 0]]


def t_lse(q, k, v, d):
    s = (q @ k.transpose(-1, -2)).float() * 0.125
    return T().softmax(s, dim=-1).to(q.dtype) @ v, T().logsumexp(s, dim=-1)


case("attn_lse", [dict(B=2, S=45)], dict(B=8, S=2048),
     [(n, ("B", 8, "S", 64), "bf16", "n") for n in "qkv"], ref_lse, t_lse, attention=True)


# ---- SDPA: torch's fused attention on the same inputs, the anchor where it expresses the variant --
def sdpa(q, k, v, scale, mask=None, causal=False, gqa=False):
    return F().scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)


def s_window(q, k, v, d):
    tt = T()
    b, s = d["B"], d["S"]
    qh, kh, vh = (t.view(b, s, 16, 64).transpose(1, 2) for t in (q, k, v))
    i = tt.arange(s, device=q.device)[:, None]
    j = tt.arange(s, device=q.device)[None, :]
    return sdpa(qh, kh, vh, 0.125, (j <= i) & (i - j < 256)).transpose(1, 2).reshape(b, s, 1024)


def s_alibi(q, k, v, d):
    tt = T()
    s_ = d["S"]
    sl = 2.0 ** (-8.0 * (tt.arange(16, device=q.device, dtype=tt.float32) + 1) / 16)
    pos = tt.arange(s_, device=q.device)
    bias = sl[:, None, None] * (pos[None, :] - pos[:, None]).float()
    bias = bias.masked_fill(pos[None, :] > pos[:, None], float("-inf")).to(q.dtype)
    return sdpa(q, k, v, 0.10206207261596575, bias)


def s_gqa(q, k, v, d):
    b, s = d["B"], d["S"]
    qh = q.view(b, s, 32, 128).transpose(1, 2)
    kh, vh = (t.view(b, s, 8, 128).transpose(1, 2) for t in (k, v))
    return sdpa(qh, kh, vh, SC128, causal=True, gqa=True).transpose(1, 2).reshape(b, s, 4096)


def s_qkv(qkv, d):
    b, s = d["B"], d["S"]
    q, k, v = (t.view(b, s, 12, 64).transpose(1, 2) for t in qkv.split(768, dim=2))
    return sdpa(q, k, v, 0.125, causal=True).transpose(1, 2).reshape(b, s, 768)


def s_decode_spec(q, k, v, ln, d):
    tt = T()
    last = ln[:, None, None, None] + tt.arange(d["T"], device=q.device)[:, None]
    return sdpa(q, k, v, SC128, tt.arange(d["L"], device=q.device)[None, :] <= last, gqa=True)


def s_decode_f16(q, k, v, ln, d):
    keep = T().arange(d["L"], device=q.device)[None, None, None, :] < ln[:, None, None, None]
    return sdpa(q, k, v, 0.125, keep)


SDPA = {
    "attn_causal_d64": lambda q, k, v, d: sdpa(q, k, v, 0.125, causal=True),
    "attn_window_split": s_window,
    "attn_alibi_iota": s_alibi,
    "attn_keypad": lambda q, k, v, ln, d: sdpa(
        q, k, v, 0.125, T().arange(d["S"], device=q.device)[None, None, None, :] < ln[:, None, None, None]),
    "attn_boolmask": lambda q, k, v, m, d: sdpa(
        q, k, v, 0.11180339887498948, m & t_causal(d["S"], d["S"], q.device)),
    "attn_relbias": lambda q, k, v, pb, d: sdpa(q, k, v, 1.0, pb.to(q.dtype)),
    "attn_gqa_32_8": s_gqa,
    "attn_mqa": lambda q, k, v, d: sdpa(q, k, v, 0.125, causal=True, gqa=True),
    "attn_cross": lambda q, k, v, d: sdpa(q, k, v, 0.125),
    "attn_f16_d128": lambda q, k, v, d: sdpa(q, k, v, SC128),
    "attn_qkv_split": s_qkv,
    "attn_lse": lambda q, k, v, d: sdpa(q, k, v, 0.125),
    "decode_spec": s_decode_spec,
    "decode_f16": s_decode_f16,
}

# The FA3 programs whose mask has a conjunct of positions (or per-batch lengths) only: their kernel
# must compute a key range (block sparsity), so it differs from the TX_ATTN_NO_SKIP=1 build.
BLOCK_SPARSE = {"attn_causal_d64", "attn_window_split", "attn_alibi_iota", "attn_softcap_gemma", "attn_keypad",
                "attn_boolmask", "attn_gqa_32_8", "attn_mqa"}
