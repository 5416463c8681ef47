"""The public shape sweep: tx against torch.compile over program x shape rows chosen to cover the
schedule space (row reductions of widths 64 to 262144, column and middle-axis reductions, few wide
rows and many narrow ones, pointwise with transcendental mixes, GEMMs from M = 1 to 8192, small
latency-bound sizes). Run it through bench/sweep.sh on the GPU machine (dist/ carried):

    python3 bench/sweep.py [--only SUBSTR,...] [--heldout] [--iters N] [--deadline S] [--torch-reserve S] [--list]

Phase 1 runs `txc bench --json` for every row (compile, verify against the CPU reference, time;
the first row also measures the copy ceiling and launch overhead: --calibrate). Phase 2 times the
same computation under torch.compile (triton do_bench, median, L2 flushed). Then it prints one
line per row: tx and torch.compile times, the ratio (torch.compile / tx: > 1 means tx is faster),
tx's % of copy bandwidth on the minimal bytes, the cost model's prediction and its error against
the measurement; then the geomean ratio, the worst row, and the model's error summary. Files under
$OUT: sweep.json (everything), sweep.md (the table), sweep_log.txt (txc stderr, failures),
calib.json. Rows still pending at the deadline (default 430 s: tx until 330 s, then torch) are
reported as skipped. A row is NOT VERIFIED when txc bench found outputs out of tolerance against
its CPU reference (sweep_log.txt has its message).

Rows marked `exact` (the plain sum/mean/max reductions) are verified on inputs that every
summation order adds exactly: multiples of 1/32 in [-1, 1] (6 significant bits), written as .npy
and passed with --input. An f32 sum of up to 2^19 such values is exact whatever the order, so the
GPU's tree sums must equal the host reference's sums (up to the mean's one rounding); with
random f32 inputs a column sum near zero differs from an exact reference by more than the f32
tolerance (rounding of the partial sums, not an error of the schedule), which is why these rows
used to read NOT VERIFIED. The timing does not depend on the values.

The row table is the only place sizes live; tx never sees the row names (it compiles the .tx text
below with -D sizes, like any user program)."""
import json, math, os, subprocess, sys, time

OUT = os.environ.get("OUT", "sweep-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
ROWS = []


def row(name, kind, src, dims, torch_fn, inputs, exact=False):
    """name: unique row id; kind: reduction/pointwise/matmul/latency; src: the .tx program;
    dims: {symbol: int}; torch_fn(*tensors) -> result; inputs: [(shape tuple, dtype name)];
    exact: tx verifies on exactly summable inputs (see the module comment)."""
    ROWS.append(dict(name=name, kind=kind, src=src, dims=dims, torch_fn=torch_fn, inputs=inputs,
                     exact=exact))


def exact_inputs(r, wd):
    """Writes the exactly summable inputs of row r (.npy, multiples of 1/32 in [-1, 1], seeded)
    and returns the txc options naming them. The .tx parameters are x (one input)."""
    import numpy as np
    rng = np.random.default_rng(1)
    opts, paths = [], []
    for i, (shape, dt) in enumerate(r["inputs"]):
        a = (rng.integers(-32, 33, size=shape, dtype=np.int32).astype(np.float32) / 32)
        path = os.path.join(wd, f"{r['name']}_in{i}.npy")
        # f32 files; txc converts f32 to a bf16 parameter on load (exact for these values)
        np.save(path, a if dt != "f16" else a.astype(np.float16))
        opts += ["--input", f"x={path}"]
        paths.append(path)
    return opts, paths


TD = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def _t():
    import torch
    return torch


def up(x):  # tx computes f16/bf16 in f32 and rounds once: compare against the same in torch
    return x.float() if x.dtype != _t().float32 else x


def down(y, like):
    return y.to(like.dtype)


# ---- row reductions (the reduced axis is the innermost) -------------------------------------------
def softmax_src(dt):
    return f"fn f(x: {dt}[M, N]) -> {dt}[M, N] {{\n  return softmax(x, axis=-1)\n}}\n"


def log_softmax_src(dt):
    return f"fn f(x: {dt}[M, N]) -> {dt}[M, N] {{\n  return log_softmax(x, axis=-1)\n}}\n"


def t_softmax(x):
    return down(_t().softmax(up(x), dim=-1), x)


def t_log_softmax(x):
    return down(_t().log_softmax(up(x), dim=-1), x)


for dt, M, N in [("f32", 262144, 64), ("f32", 65536, 100), ("bf16", 32768, 1000), ("f32", 16384, 4096),
                 ("bf16", 16384, 4096), ("f32", 4096, 65536), ("f32", 256, 262144), ("f32", 128, 150001),
                 ("f32", 64, 4096), ("bf16", 8, 50257)]:
    row(f"softmax_{dt}_{M}x{N}", "reduction", softmax_src(dt), {"M": M, "N": N}, t_softmax, [((M, N), dt)])
for dt, M, N in [("bf16", 8192, 32000), ("f32", 4096, 3000)]:
    row(f"log_softmax_{dt}_{M}x{N}", "reduction", log_softmax_src(dt), {"M": M, "N": N}, t_log_softmax,
        [((M, N), dt)])


def t_layernorm(x, w, b):
    import torch.nn.functional as F
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


for dt, M, N in [("f32", 64, 4096), ("bf16", 8192, 4096), ("bf16", 8192, 5120), ("f32", 100000, 768)]:
    row(f"layernorm_{dt}_{M}x{N}", "reduction",
        f"fn f(x: {dt}[M, N], w: {dt}[N], b: {dt}[N]) -> {dt}[M, N] {{\n  return layernorm(x, w, b, eps=1e-5)\n}}\n",
        {"M": M, "N": N}, t_layernorm, [((M, N), dt), ((N,), dt), ((N,), dt)])


def t_rmsnorm(x, w):
    xf = up(x)
    return down(xf * _t().rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6), x) * w


for dt, M, N in [("bf16", 16384, 2048), ("f32", 2048, 12288)]:
    row(f"rmsnorm_{dt}_{M}x{N}", "reduction",
        f"fn f(x: {dt}[M, N], w: {dt}[N]) -> {dt}[M, N] {{\n  return rmsnorm(x, w, eps=1e-6)\n}}\n",
        {"M": M, "N": N}, t_rmsnorm, [((M, N), dt), ((N,), dt)])

for op, M, N in [("sum", 65536, 1024), ("max", 1048576, 64), ("sum", 512, 262144), ("mean", 3000, 7777)]:
    tfn = {"sum": lambda x: x.sum(-1), "max": lambda x: x.amax(-1), "mean": lambda x: x.mean(-1)}[op]
    row(f"row{op}_f32_{M}x{N}", "reduction", f"fn f(x: f32[M, N]) -> f32[M] {{\n  return {op}(x, axis=-1)\n}}\n",
        {"M": M, "N": N}, tfn, [((M, N), "f32")], exact=True)
row("logsumexp_f32_16384x8192", "reduction",
    "fn f(x: f32[M, N]) -> f32[M] {\n  m = max(x, axis=-1, keepdim=true)\n"
    "  return reshape(log(sum(exp(x - m), axis=-1, keepdim=true)) + m, (M,))\n}\n",
    {"M": 16384, "N": 8192}, lambda x: _t().logsumexp(x, dim=-1), [((16384, 8192), "f32")])

# ---- column and middle-axis reductions ----------------------------------------------------------
for op, dt, M, N in [("sum", "f32", 65536, 1024), ("sum", "f32", 4096, 65536), ("sum", "bf16", 16384, 4096),
                     ("max", "f32", 100000, 333), ("mean", "f32", 1048576, 16)]:
    tfn = {"sum": lambda x: x.sum(0), "max": lambda x: x.amax(0), "mean": lambda x: x.mean(0)}[op]
    row(f"col{op}_{dt}_{M}x{N}", "reduction", f"fn f(x: {dt}[M, N]) -> {dt}[N] {{\n  return {op}(x, axis=0)\n}}\n",
        {"M": M, "N": N}, tfn, [((M, N), dt)], exact=True)
for op, dt, B, R, C in [("sum", "f32", 64, 4096, 256), ("mean", "bf16", 32, 1024, 1024), ("max", "f32", 16, 8191, 129)]:
    tfn = {"sum": lambda x: x.sum(1), "max": lambda x: x.amax(1), "mean": lambda x: x.mean(1)}[op]
    row(f"mid{op}_{dt}_{B}x{R}x{C}", "reduction",
        f"fn f(x: {dt}[B, R, C]) -> {dt}[B, C] {{\n  return {op}(x, axis=1)\n}}\n",
        {"B": B, "R": R, "C": C}, tfn, [((B, R, C), dt)], exact=True)

# ---- pointwise -------------------------------------------------------------------------------------
N26 = 1 << 26
row("add_relu_f32_64M", "pointwise", "fn f(a: f32[N], b: f32[N]) -> f32[N] {\n  return relu(a + b)\n}\n",
    {"N": N26}, lambda a, b: _t().relu(a + b), [((N26,), "f32"), ((N26,), "f32")])


def t_chain8(x):
    t = _t().tanh(x * 1.5 + 0.5)
    return _t().sigmoid(t * x - 0.25) * _t().exp(-x * x)


row("chain8_f32_64M", "pointwise",
    "fn f(x: f32[N]) -> f32[N] {\n  t = tanh(x * 1.5 + 0.5)\n  return sigmoid(t * x - 0.25) * exp(-x * x)\n}\n",
    {"N": N26}, t_chain8, [((N26,), "f32")])
row("tanh_f32_64M", "pointwise", "fn f(x: f32[N]) -> f32[N] {\n  return tanh(x)\n}\n", {"N": N26},
    lambda x: _t().tanh(x), [((N26,), "f32")])
row("erf_gelu_mul_bf16_8192x8192", "pointwise",
    "fn f(a: bf16[M, N], b: bf16[M, N], g: bf16[M, N]) -> bf16[M, N] {\n  return gelu(a + b) * g\n}\n",
    {"M": 8192, "N": 8192}, lambda a, b, g: down(_t().nn.functional.gelu(up(a + b)) * up(g), a),
    [((8192, 8192), "bf16")] * 3)
row("exp_sigmoid_bf16_8192x4096", "pointwise",
    "fn f(x: bf16[M, N], y: bf16[M, N]) -> bf16[M, N] {\n  return exp(x) * sigmoid(y)\n}\n",
    {"M": 8192, "N": 4096}, lambda x, y: down(_t().exp(up(x)) * _t().sigmoid(up(y)), x), [((8192, 4096), "bf16")] * 2)
row("swiglu_bf16_8192x8192", "pointwise",
    "fn f(a: bf16[M, N], b: bf16[M, N]) -> bf16[M, N] {\n  return silu(a) * b\n}\n",
    {"M": 8192, "N": 8192}, lambda a, b: down(_t().nn.functional.silu(up(a)) * up(b), a), [((8192, 8192), "bf16")] * 2)
row("bias_gelu_tanh_bf16_4096x11008", "pointwise",
    "fn f(x: bf16[M, N], c: bf16[N]) -> bf16[M, N] {\n  return gelu_tanh(x + c)\n}\n",
    {"M": 4096, "N": 11008}, lambda x, c: down(_t().nn.functional.gelu(up(x + c), approximate="tanh"), x),
    [((4096, 11008), "bf16"), ((11008,), "bf16")])
row("softplus_f32_30000001", "pointwise", "fn f(x: f32[N]) -> f32[N] {\n  return log(1 + exp(-abs(x))) + relu(x)\n}\n",
    {"N": 30000001}, lambda x: _t().log(1 + _t().exp(-x.abs())) + _t().relu(x), [((30000001,), "f32")])

# ---- small, latency-bound --------------------------------------------------------------------------
row("small_add_f32_1000", "latency", "fn f(a: f32[N], b: f32[N]) -> f32[N] {\n  return a + b\n}\n", {"N": 1000},
    lambda a, b: a + b, [((1000,), "f32")] * 2)
row("small_axpb_f32_65536", "latency", "fn f(x: f32[N]) -> f32[N] {\n  return x * 2 + 1\n}\n", {"N": 65536},
    lambda x: x * 2 + 1, [((65536,), "f32")])
row("small_softmax_f32_8x128", "latency", softmax_src("f32"), {"M": 8, "N": 128}, t_softmax, [((8, 128), "f32")])
row("small_layernorm_f32_1x768", "latency",
    "fn f(x: f32[M, N], w: f32[N], b: f32[N]) -> f32[M, N] {\n  return layernorm(x, w, b, eps=1e-5)\n}\n",
    {"M": 1, "N": 768}, t_layernorm, [((1, 768), "f32"), ((768,), "f32"), ((768,), "f32")])
row("small_colsum_f32_333x7", "latency", "fn f(x: f32[M, N]) -> f32[N] {\n  return sum(x, axis=0)\n}\n",
    {"M": 333, "N": 7}, lambda x: x.sum(0), [((333, 7), "f32")])

# ---- matrix products -------------------------------------------------------------------------------
MM = "fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n"
for M, K, N in [(1, 4096, 4096), (16, 4096, 4096), (128, 4096, 4096), (1024, 4096, 4096), (4096, 4096, 4096),
                (8192, 8192, 8192), (2000, 3000, 1000)]:
    row(f"matmul_bf16_{M}x{K}x{N}", "matmul", MM, {"M": M, "K": K, "N": N}, lambda x, w: x @ w,
        [((M, K), "bf16"), ((K, N), "bf16")])
row("matmul_residual_bf16_16x4096x4096", "matmul",
    "fn f(x: bf16[M, K], w: bf16[K, N], r: bf16[M, N]) -> bf16[M, N] {\n  return x @ w + r\n}\n",
    {"M": 16, "K": 4096, "N": 4096}, lambda x, w, r: x @ w + r, [((16, 4096), "bf16"), ((4096, 4096), "bf16"), ((16, 4096), "bf16")])
row("matmul_bias_gelu_bf16_2048x2048x8192", "matmul",
    "fn f(a: bf16[M, K], b: bf16[K, N], c: bf16[N]) -> bf16[M, N] {\n  return gelu_tanh(a @ b + c)\n}\n",
    {"M": 2048, "K": 2048, "N": 8192},
    lambda a, b, c: _t().nn.functional.gelu(a @ b + c, approximate="tanh"),
    [((2048, 2048), "bf16"), ((2048, 8192), "bf16"), ((8192,), "bf16")])


# ---- held-out shapes (only with --heldout): kinds of the rows above at sizes no rule was tuned on --
HELDOUT = []


def heldout(name, kind, src, dims, torch_fn, inputs, exact=False):
    HELDOUT.append(dict(name="heldout_" + name, kind=kind, src=src, dims=dims, torch_fn=torch_fn,
                        inputs=inputs, exact=exact))


for dt, M, N in [("bf16", 12000, 3000), ("f32", 30000, 2056)]:
    heldout(f"colsum_{dt}_{M}x{N}", "reduction", f"fn f(x: {dt}[M, N]) -> {dt}[N] {{\n  return sum(x, axis=0)\n}}\n",
            {"M": M, "N": N}, lambda x: x.sum(0), [((M, N), dt)], exact=True)
for op, dt, B, R, C in [("mean", "f32", 24, 1000, 520), ("sum", "bf16", 7, 5000, 776)]:
    tfn = {"sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1)}[op]
    heldout(f"mid{op}_{dt}_{B}x{R}x{C}", "reduction",
            f"fn f(x: {dt}[B, R, C]) -> {dt}[B, C] {{\n  return {op}(x, axis=1)\n}}\n",
            {"B": B, "R": R, "C": C}, tfn, [((B, R, C), dt)], exact=True)
for dt, M, N in [("f32", 3000, 50000), ("bf16", 1000, 30011)]:
    heldout(f"softmax_{dt}_{M}x{N}", "reduction", softmax_src(dt), {"M": M, "N": N}, t_softmax, [((M, N), dt)])
# issue 12's held-out widths: wider than a block's shared memory (100000, 131072 + 7), few rows,
# bf16, a width of 3000; a long random-valued row sum (accuracy of the per-thread partials)
for dt, M, N in [("f32", 1024, 100000), ("f32", 300, 131079), ("f32", 4, 131072), ("bf16", 2048, 65536),
                 ("f32", 264, 65536), ("bf16", 6000, 3000)]:
    heldout(f"softmax_{dt}_{M}x{N}", "reduction", softmax_src(dt), {"M": M, "N": N}, t_softmax, [((M, N), dt)])
heldout("rowsum_f32_512x262144", "reduction", "fn f(x: f32[M, N]) -> f32[M] {\n  return sum(x, axis=-1)\n}\n",
        {"M": 512, "N": 262144}, lambda x: x.sum(-1), [((512, 262144), "f32")])
heldout("softmax_f32_2000x1999", "reduction", softmax_src("f32"), {"M": 2000, "N": 1999}, t_softmax,
        [((2000, 1999), "f32")])
heldout("layernorm_bf16_4000x3001", "reduction",
        "fn f(x: bf16[M, N], w: bf16[N], b: bf16[N]) -> bf16[M, N] {\n  return layernorm(x, w, b, eps=1e-5)\n}\n",
        {"M": 4000, "N": 3001}, t_layernorm, [((4000, 3001), "bf16"), ((3001,), "bf16"), ((3001,), "bf16")])
heldout("rowmean_f32_5000x3333", "reduction", "fn f(x: f32[M, N]) -> f32[M] {\n  return mean(x, axis=-1)\n}\n",
        {"M": 5000, "N": 3333}, lambda x: x.mean(-1), [((5000, 3333), "f32")], exact=True)
heldout("chain8_f32_50000017", "pointwise",
        "fn f(x: f32[N]) -> f32[N] {\n  t = tanh(x * 1.5 + 0.5)\n  return sigmoid(t * x - 0.25) * exp(-x * x)\n}\n",
        {"N": 50000017}, t_chain8, [((50000017,), "f32")])

# [reduction.row_split] (issue 12): reductions whose rows alone do not fill the GPU: a global sum of
# a prime-ish length, a global max, three scalar means of one region (losses_regression), three
# long rows; softmax of one row (two stages: [reduction.row_split2])
heldout("split_sum_f32_16777219", "reduction", "fn f(x: f32[N]) -> f32[] {\n  return sum(x)\n}\n",
        {"N": 16777219}, lambda x: x.sum(), [((16777219,), "f32")])
heldout("split_max_f32_32x512x1024", "reduction",
        "fn f(x: f32[A, B, C]) -> f32[] {\n  return max(x)\n}\n", {"A": 32, "B": 512, "C": 1024},
        lambda x: x.max(), [((32, 512, 1024), "f32")])


def t_losses(p, t):
    d = p - t
    a = d.abs()
    return (d * d).mean(), _t().where(a < 1.0, 0.5 * d * d, a - 0.5).mean(), a.mean()


heldout("split_losses_f32_8192x1000", "reduction",
        "fn f(pred: f32[N, D], tgt: f32[N, D]) -> (f32[], f32[], f32[]) {\n  d = pred - tgt\n"
        "  a = abs(d)\n  sl1 = where(a < 1.0, 0.5 * d * d, a - 0.5)\n"
        "  return mean(d * d), mean(sl1), mean(a)\n}\n",
        {"N": 8192, "D": 1000}, t_losses, [((8192, 1000), "f32"), ((8192, 1000), "f32")])
heldout("split_rowsum_f32_3x1000003", "reduction",
        "fn f(x: f32[M, N]) -> f32[M] {\n  return sum(x, axis=-1)\n}\n", {"M": 3, "N": 1000003},
        lambda x: x.sum(-1), [((3, 1000003), "f32")])
heldout("split_softmax_f32_1x16777219", "reduction", softmax_src("f32"), {"M": 1, "N": 16777219},
        t_softmax, [((1, 16777219), "f32")])
# [reduction.row_split2]: softmax / log_softmax of few long rows (two kernels over rows x splits)
heldout("split2_softmax_f32_4x1048576", "reduction", softmax_src("f32"), {"M": 4, "N": 1048576},
        t_softmax, [((4, 1048576), "f32")])
heldout("split2_log_softmax_f32_4x1000003", "reduction", log_softmax_src("f32"),
        {"M": 4, "N": 1000003}, t_log_softmax, [((4, 1000003), "f32")])

# held-out composites (bench/heldout of the session): BatchNorm statistics over the batch axis, a
# softmax over a middle axis, token cross-entropy over a GPT-2 vocabulary (labels: any int32;
# torch takes them modulo V)


def t_batch_stats(x):
    mu = x.mean(0, keepdim=True)
    d = x - mu
    var = (d * d).mean(0, keepdim=True)
    return mu.reshape(-1), var.reshape(-1), d * _t().rsqrt(var + 1e-5)


heldout("batch_stats_f32_32768x512", "reduction",
        "fn f(x: f32[N, C]) -> (f32[C], f32[C], f32[N, C]) {\n  mu = mean(x, axis=0, keepdim=true)\n"
        "  d = x - mu\n  var = mean(d * d, axis=0, keepdim=true)\n"
        "  return reshape(mu, (C,)), reshape(var, (C,)), d * rsqrt(var + 1e-5)\n}\n",
        {"N": 32768, "C": 512}, t_batch_stats, [((32768, 512), "f32")])
heldout("softmax_mid_f32_64x1024x768", "reduction",
        "fn f(x: f32[B, S, C]) -> f32[B, S, C] {\n  return softmax(x, axis=1)\n}\n",
        {"B": 64, "S": 1024, "C": 768}, lambda x: _t().softmax(x, dim=1), [((64, 1024, 768), "f32")])
heldout("cross_entropy_bf16_2048x50257", "reduction",
        "fn f(logits: bf16[N, V], labels: i32[N]) -> f32[] {\n  x = f32(logits)\n"
        "  m = max(x, axis=-1, keepdim=true)\n  lse = log(sum(exp(x - m), axis=-1, keepdim=true)) + m\n"
        "  hit = iota((N, V), axis=1) == reshape(labels, (N, 1))\n"
        "  picked = sum(where(hit, x, 0.0), axis=-1, keepdim=true)\n  return mean(lse - picked)\n}\n",
        {"N": 2048, "V": 50257},
        lambda x, l: _t().nn.functional.cross_entropy(x.float(), (l % x.shape[1]).long()),
        [((2048, 50257), "bf16"), ((2048,), "i32")])


# ---- driver ----------------------------------------------------------------------------------------
def log(f, *a):
    print(*a, flush=True)
    print(*a, file=f, flush=True)


def run_tx(rows, iters, deadline, lf, t0):
    """Phase 1: txc bench per row (until `deadline` seconds after t0); fills tx_us, pred_us, ..."""
    import tempfile
    wd = tempfile.mkdtemp(prefix="tx-sweep-")
    calib = os.path.join(OUT, "calib.json")
    first = True
    for r in rows:
        path = os.path.join(wd, r["name"] + ".tx")
        with open(path, "w") as f:
            f.write(r["src"])
        if time.time() - t0 > deadline:
            r["tx_error"] = "skipped: sweep deadline"
            continue
        paths = []
        try:
            inopts, paths = exact_inputs(r, wd) if r.get("exact") else (["--random-inputs=1"], [])
        except Exception as e:  # no NumPy: random inputs, as before
            print(f"--- {r['name']}: exact inputs unavailable ({e}); random inputs", file=lf, flush=True)
            inopts = ["--random-inputs=1"]
        r["inputs_used"] = "exact (multiples of 1/32)" if paths else "random"
        cmd = [TXC, "bench", path, "--device=gpu", *inopts, "--iters", str(iters), "--json"]
        cmd += ["--calibrate", "--calib=" + calib] if first else ["--calib=" + calib]
        for k, v in r["dims"].items():
            cmd += ["-D", f"{k}={v}"]
        ts = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
            rc, so, se = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, so, se = 124, "", "timed out after 90 s"
        r["tx_wall_s"] = round(time.time() - ts, 1)
        for q in paths:
            os.remove(q)
        if se.strip():
            print(f"--- {r['name']} (rc {rc})\n{se.strip()[-2000:]}", file=lf, flush=True)
        try:
            res = json.loads(so[so.index("{"):]) if "{" in so else None
        except ValueError:
            res = None
        if res is None or "fused" not in res:
            r["tx_error"] = f"rc {rc}: " + (se.strip().splitlines() or ["no output"])[-1][:200]
            log(lf, f"tx    FAIL {r['name']}: {r['tx_error']}")
            continue
        first = False
        fu = res["fused"]
        r["tx_us"] = fu["graph_us"]
        r["pred_us"] = fu["predicted_us"]
        r["bytes"] = fu["bytes"]
        r["verified"] = fu["verified"]
        r["copy_GBps"] = res.get("copy_GBps", 0)
        r["reference"] = res.get("reference", "")
        r["kernels"] = [(k["name"], k["kind"], k["us"], k["predicted_us"]) for k in fu.get("kernels", [])]
        log(lf, f"tx    {'ok  ' if r['verified'] else 'BAD '} {r['name']}: {r['tx_us']:.1f} us "
                f"(predicted {r['pred_us']:.1f}) {r['tx_wall_s']} s{'' if r['verified'] else '  VERIFICATION FAILED'}")


def run_torch(rows, deadline, lf, t0):
    import torch
    from triton.testing import do_bench
    torch.manual_seed(0)
    for r in rows:
        if time.time() - t0 > deadline:
            r["torch_error"] = "skipped: sweep deadline"
            continue
        try:
            xs = [torch.randint(0, 1 << 30, s, device="cuda", dtype=torch.int32) if d == "i32"
                  else torch.randn(*s, device="cuda", dtype=getattr(torch, TD[d])) for s, d in r["inputs"]]
            torch._dynamo.reset()
            cf = torch.compile(r["torch_fn"])
            ts = time.time()
            cf(*xs)
            torch.cuda.synchronize()
            r["torch_compile_s"] = round(time.time() - ts, 2)
            r["torch_us"] = do_bench(lambda: cf(*xs), warmup=10, rep=60, return_mode="median") * 1e3
            log(lf, f"torch ok   {r['name']}: {r['torch_us']:.1f} us (compile {r['torch_compile_s']} s)")
        except Exception as e:  # a row torch cannot run is reported, the sweep goes on
            r["torch_error"] = f"{type(e).__name__}: {str(e)[:200]}"
            log(lf, f"torch FAIL {r['name']}: {r['torch_error']}")
        finally:
            xs = None
            torch.cuda.empty_cache()


def report(rows, lf):
    lines = ["| row | kind | tx us | torch.compile us | ratio | % of copy | predicted us | model error | verified |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    ratios, errs, worst = [], [], None
    hdr = f"{'row':44s} {'kind':9s} {'tx_us':>10s} {'tc_us':>10s} {'ratio':>7s} {'%copy':>6s} {'pred_us':>10s} {'err':>7s}  note"
    log(lf, "\n" + hdr)
    for r in rows:
        tx, tc, pr = r.get("tx_us"), r.get("torch_us"), r.get("pred_us")
        ratio = tc / tx if tx and tc else None
        pc = (r["bytes"] / (tx * 1e3)) / r["copy_GBps"] * 100 if tx and r.get("copy_GBps") else None
        err = (pr - tx) / tx if tx and pr else None
        note = r.get("tx_error") or r.get("torch_error") or ("" if r.get("verified") else "NOT VERIFIED")
        if ratio:
            ratios.append(ratio)
            if worst is None or ratio < worst[1]:
                worst = (r["name"], ratio)
        if err is not None:
            errs.append((abs(err), r["name"], err))
        f = lambda v, fmt: (fmt % v) if v is not None else "-"
        log(lf, f"{r['name']:44s} {r['kind']:9s} {f(tx, '%10.1f'):>10s} {f(tc, '%10.1f'):>10s} {f(ratio, '%6.2fx'):>7s} "
                f"{f(pc, '%5.0f%%'):>6s} {f(pr, '%10.1f'):>10s} {f(err and err * 100, '%+6.0f%%'):>7s}  {note}")
        lines.append(f"| {r['name']} | {r['kind']} | {f(tx, '%.1f')} | {f(tc, '%.1f')} | {f(ratio, '%.2fx')} | "
                     f"{f(pc, '%.0f%%')} | {f(pr, '%.1f')} | {f(err and err * 100, '%+.0f%%')} | {note or 'yes'} |")
    summary = []
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        summary.append(f"geomean torch.compile/tx over {len(ratios)} rows: {gm:.3f}x (target >= 1.2x); "
                       f"worst row: {worst[0]} at {worst[1]:.2f}x (target >= 0.9x); "
                       f"rows below 0.9x: {sum(1 for x in ratios if x < 0.9)}")
    if errs:
        errs.sort()
        within = sum(1 for e in errs if e[0] <= 0.25)
        med = errs[len(errs) // 2][0]
        summary.append(f"cost model (untuned prediction vs measured tx time): within 25% on {within} of {len(errs)} "
                       f"rows; median |error| {med * 100:.0f}%; worst {errs[-1][1]} at {errs[-1][2] * 100:+.0f}%")
    failed = [r["name"] for r in rows if r.get("tx_error") or not r.get("verified", False)]
    summary.append(f"tx rows failed or unverified: {len(failed)}" + (f" ({', '.join(failed)})" if failed else ""))
    for s in summary:
        log(lf, s)
    with open(os.path.join(OUT, "sweep.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join("- " + s for s in summary) + "\n")
    keep = [{k: v for k, v in r.items() if k not in ("torch_fn",)} for r in rows]
    with open(os.path.join(OUT, "sweep.json"), "w") as f:
        json.dump({"rows": keep, "summary": summary}, f, indent=1)
    return 0 if not failed else 1


def main():
    args = sys.argv[1:]
    only, iters, deadline, reserve = None, 10, 430.0, 100.0
    while args:
        a = args.pop(0)
        if a == "--only":
            only = args.pop(0).split(",")
        elif a == "--iters":
            iters = int(args.pop(0))
        elif a == "--deadline":
            deadline = float(args.pop(0))
        elif a == "--torch-reserve":  # seconds of the deadline kept for the torch phase
            reserve = float(args.pop(0))
        elif a == "--heldout":  # also the held-out shapes (HELDOUT)
            ROWS.extend(HELDOUT)
        elif a == "--list":
            for r in ROWS:
                print(r["name"], r["kind"], " ".join(f"-D {k}={v}" for k, v in r["dims"].items()))
            print(len(ROWS), "rows")
            return 0
        else:
            print(f"sweep: unknown option {a}", file=sys.stderr)
            return 2
    rows = [r for r in ROWS if not only or any(s in r["name"] for s in only)]
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    with open(os.path.join(OUT, "sweep_log.txt"), "w") as lf:
        log(lf, f"sweep: {len(rows)} rows, txc {TXC}, OUT {OUT}")
        # tx first (its own processes), torch after: the deadline keeps the whole run under 8 minutes
        run_tx(rows, iters, deadline - reserve, lf, t0)
        log(lf, f"sweep: tx phase done in {time.time() - t0:.0f} s")
        run_torch(rows, deadline, lf, t0)
        log(lf, f"sweep: torch phase done in {time.time() - t0:.0f} s")
        return report(rows, lf)


if __name__ == "__main__":
    sys.exit(main())
