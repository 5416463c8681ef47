#!/usr/bin/env python3
"""bench/wgmma_check.py - checks and times tx's sm_90a GEMM kernels (wgmma + TMA) on one GPU.

Run from the repository root on the GPU machine with dist/ built by tools/make-dist.sh
(normally through bench/wgmma_check.sh). Steps, each printing one line per case:

  0. env       the GPU, its compute capability, txc, ptxas, torch
  1. compile   txc --target=sm_90a for every case; the kernel template the manifest names
               (wgmma-tma-ws ... or the mma.sync fallback) and `ptxas -arch=sm_90a -v`
               registers / spills / warnings (C7510/C7508 serialisation warnings are failures)
  2. verify    txc run --device=gpu (the device's own target: sm_90a on Hopper) on seeded
               inputs; outputs against torch on the GPU in float64 (products) with the
               graph's own roundings applied: relative Frobenius error, largest error
               relative to the output's scale, NaNs (the runtime poisons outputs with 0xFF
               bytes, so an unwritten element is a NaN)
  3. time      txc bench --device=gpu --json (median kernel time, cold L2 between runs) at
               the device's target, and at sm_90 (mma.sync) for the big GEMM; torch.matmul
               (cuBLAS) alone, torch eager and torch.compile of the same function, timed with
               CUDA events in the same process
  4. sanitize  compute-sanitizer memcheck / racecheck / synccheck on small ragged runs (run
               before the timings, so a run cut short still has its correctness checks)
Environment: SAN_TOOLS=memcheck[,racecheck,synccheck] picks the sanitizer tools, SAN_ONLY=PAT,...
the sanitized cases (fnmatch), WG_NO_VERIFY=1 skips step 2 (timings only; txc bench still checks
its own outputs).
The summary table is printed last and written to $OUT/wgmma_check.txt; everything else goes to
$OUT/wgmma_check.log and $OUT/wgmma_check.json. Exit status 1 when a check failed.
"""
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time

import checklib

OUT = os.environ.get("OUT") or "wgmma-check-out"
TXC = os.environ.get("TXC", "dist/bin/txc")
QUICK = "--quick" in sys.argv  # skip the largest shapes
# --only PAT[,PAT...]: only the cases (and sanitizer runs) whose names match one of the fnmatch patterns
ONLY = next((sys.argv[i + 1].split(",") for i, a in enumerate(sys.argv[:-1]) if a == "--only"), None)
COMPILE_DEADLINE = float(os.environ.get("COMPILE_DEADLINE", 260))  # s: no torch.compile after this
TIME_DEADLINE = float(os.environ.get("TIME_DEADLINE", 360))  # s: no more timing after this
CK = checklib.Check(OUT, "wgmma_check")
log, say, step, FAILS = CK.log, CK.say, CK.step, CK.fails
WORK = tempfile.mkdtemp(prefix="wgmma-")
T0 = time.time()
RESULTS = {"steps": CK.steps, "cases": {}}


def run(cmd, timeout=300):
    return CK.run(cmd, timeout)


# ---- the programs ----------------------------------------------------------------------------
PROGS = {
    "bias_gelu": """fn mm_bias_gelu(a: {t}[M, K], b: {t}[K, N], c: {t}[N]) -> {t}[M, N] {{
  return gelu_tanh(a @ b + c)
}}
""",
    # an activation alone on the product (the ragged 4000 x 11000 x 4096 case of issue 11)
    "silu": """fn mm_silu(a: {t}[M, K], b: {t}[K, N]) -> {t}[M, N] {{
  return silu(a @ b)
}}
""",
    "linear_res": """fn linear_res(x: {t}[M, K], w: {t}[N, K], r: {t}[M, N]) -> {t}[M, N] {{
  return x @ transpose(w, 0, 1) + r
}}
""",
    "two_out": """fn two_out(a: {t}[M, K], b: {t}[K, N]) -> ({t}[M, N], f32[M, N]) {{
  y = a @ b
  return y, f32(silu(y))
}}
""",
    "at_b": """fn at_b(a: {t}[K, M], b: {t}[K, N]) -> {t}[M, N] {{
  return transpose(a, 0, 1) @ b
}}
""",
    # x @ w with w [K, N] (N-contiguous: the weight layout of a .tx program); skinny M splits K
    "xw": """fn xw(x: {t}[M, K], w: {t}[K, N]) -> {t}[M, N] {{
  return x @ w
}}
""",
    # twin GEMMs sharing A with the SwiGLU epilogue (a horizontal region: one kernel, two accumulators)
    "swiglu": """fn swiglu(x: {t}[M, K], w1: {t}[K, N], w3: {t}[K, N]) -> {t}[M, N] {{
  return silu(x @ w1) * (x @ w3)
}}
""",
    # three products of one input, each stored (Q, K, V projections; weights [N, K] as nn.Linear)
    "qkv": """fn qkv(x: {t}[M, K], wq: {t}[N, K], wk: {t}[N, K], wv: {t}[N, K]) -> ({t}[M, N], {t}[M, N], {t}[M, N]) {{
  return x @ transpose(wq, 0, 1), x @ transpose(wk, 0, 1), x @ transpose(wv, 0, 1)
}}
""",
    # an attention output o[H, M, 128] read as merged heads [M, H*128] (a 3-D TMA map), residual epilogue
    "merged": """fn merged(o: {t}[H, M, 128], w: {t}[K, N], r: {t}[M, N]) -> {t}[M, N] {{
  return r + reshape(permute(o, (1, 0, 2)), (M, K)) @ w
}}
""",
    # the suite's mlp_block: SwiGLU kernel, then the down projection (N = D here, K = F)
    "mlp": """fn mlp(x: {t}[M, N], w1: {t}[N, K], w3: {t}[N, K], w2: {t}[K, N]) -> {t}[M, N] {{
  return (silu(x @ w1) * (x @ w3)) @ w2
}}
""",
}

# products of M x N x K per program (for TFLOP/s)
NPROD = {"swiglu": 2, "qkv": 3, "mlp": 3}

# (case name, program, dtype, M, N, K, time it)
CASES = [
    ("gelu_8192", "bias_gelu", "bf16", 8192, 8192, 8192, True),
    ("gelu_4000x11000x4096", "bias_gelu", "bf16", 4000, 11000, 4096, True),
    ("silu_4000x11000x4096", "silu", "bf16", 4000, 11000, 4096, True),
    ("silu_300x264x136", "silu", "bf16", 300, 264, 136, False),
    ("gelu_300x264x136", "bias_gelu", "bf16", 300, 264, 136, False),
    ("two_out_300x264x136", "two_out", "bf16", 300, 264, 136, False),
    ("gelu_4000x4096x11000", "bias_gelu", "bf16", 4000, 4096, 11000, True),
    ("gelu_1000", "bias_gelu", "bf16", 1000, 1000, 1000, True),
    ("gelu_f16_1000x4104x520", "bias_gelu", "f16", 1000, 4104, 520, False),
    ("linres_m16_bf16", "linear_res", "bf16", 16, 4096, 4096, True),
    ("linres_m16_f16", "linear_res", "f16", 16, 4096, 4096, True),
    ("linres_4000x4096x11000_f16", "linear_res", "f16", 4000, 4096, 11000, True),
    ("two_out_1000", "two_out", "bf16", 1000, 1000, 1000, False),
    ("two_out_200x136x72", "two_out", "bf16", 200, 136, 72, False),
    ("at_b_1000", "at_b", "bf16", 1000, 1000, 1000, False),
    ("linres_m1_bf16", "linear_res", "bf16", 1, 4096, 4096, True),
    ("linres_m64_bf16", "linear_res", "bf16", 64, 4096, 4096, True),
    ("linres_m128_bf16", "linear_res", "bf16", 128, 4096, 4096, True),
    ("linres_m16_ragged", "linear_res", "bf16", 16, 4000, 4104, False),
    ("linres_m16x1000x4104_sk", "linear_res", "bf16", 16, 1000, 4104, False),
    ("linres_m16_n1024", "linear_res", "bf16", 16, 1024, 4096, True),
    ("xw_m16x1000x4104_sk", "xw", "bf16", 16, 1000, 4104, False),
    ("xw_m1_bf16", "xw", "bf16", 1, 4096, 4096, True),
    ("xw_m16_bf16", "xw", "bf16", 16, 4096, 4096, True),
    ("xw_m64_bf16", "xw", "bf16", 64, 4096, 4096, True),
    ("swiglu_m16x1000x4104_sk", "swiglu", "bf16", 16, 1000, 4104, False),
    ("swiglu_1000x1000x520", "swiglu", "bf16", 1000, 1000, 520, False),
    ("swiglu_200x136x72", "swiglu", "bf16", 200, 136, 72, False),
    ("swiglu_f16_16x264x136", "swiglu", "f16", 16, 264, 136, False),
    ("swiglu_8192x11008x4096", "swiglu", "bf16", 8192, 11008, 4096, True),
    ("qkv_f16_300x264x136", "qkv", "f16", 300, 264, 136, False),
    ("qkv_2048x4096x4096", "qkv", "bf16", 2048, 4096, 4096, True),
    # mlp: M x N(=D) x K(=F)
    ("merged_300x264x1024", "merged", "bf16", 300, 264, 1024, False),
    ("merged_2048x4096x4096", "merged", "bf16", 2048, 4096, 4096, True),
    ("mlp_200x136x264", "mlp", "bf16", 200, 136, 264, False),
    ("mlp_8192x4096x11008", "mlp", "bf16", 8192, 4096, 11008, True),
]
if QUICK:
    CASES = [c for c in CASES if c[3] * c[4] * c[5] <= 4096 * 4096 * 4096]
SANITIZE = [("two_out_200x136x72", "two_out", "bf16", 200, 136, 72), ("linres_m16x264x136_f16", "linear_res", "f16", 16, 264, 136),
            ("swiglu_200x136x72", "swiglu", "bf16", 200, 136, 72), ("two_out_300x264x136", "two_out", "bf16", 300, 264, 136), ("xw_m16x1000x4104_sk", "xw", "bf16", 16, 1000, 4104), ("merged_300x264x1024", "merged", "bf16", 300, 264, 1024), ("qkv_f16_300x264x136", "qkv", "f16", 300, 264, 136)]
if os.environ.get("SAN_ONLY"):
    import fnmatch
    SANITIZE = [c for c in SANITIZE if any(fnmatch.fnmatch(c[0], p) for p in os.environ["SAN_ONLY"].split(","))]
if ONLY:
    import fnmatch
    CASES = [c for c in CASES if any(fnmatch.fnmatch(c[0], p) for p in ONLY)]
    SANITIZE = [c for c in SANITIZE if any(fnmatch.fnmatch(c[0], p) for p in ONLY)]


def prog_file(prog, t):
    path = os.path.join(WORK, "%s_%s.tx" % (prog, t))
    if not os.path.exists(path):
        open(path, "w").write(PROGS[prog].format(t=t))
    return path


def dims(M, N, K, prog=None):
    # H: heads of 128 for the merged-heads program (K = H * 128)
    return ["-D", "M=%d" % M, "-D", "N=%d" % N, "-D", "K=%d" % K] + (["-D", "H=%d" % (K // 128)] if prog == "merged" else [])


# ---- step 0: environment ---------------------------------------------------------------------
def env():
    """Returns ptxas's path (or None)."""
    ok = os.access(TXC, os.X_OK)
    step("env txc", ok, TXC if ok else "no executable txc at %s (build dist/ with tools/make-dist.sh)" % TXC)
    ptxas = checklib.find_ptxas()
    step("env ptxas", ptxas is not None, ptxas or "not found: the compile step only reports templates")
    if not ok:
        return ptxas
    try:
        import numpy  # noqa: F401
        import torch
    except Exception as e:  # noqa: BLE001
        step("env torch", False, "cannot import torch/numpy: %s" % e)
        return ptxas
    if not torch.cuda.is_available():
        step("env gpu", False, "torch sees no CUDA device")
        return ptxas
    cc = torch.cuda.get_device_capability()
    name = torch.cuda.get_device_name()
    step("env gpu", True, "%s, compute capability %d.%d, %d SMs, torch %s" % (
        name, cc[0], cc[1], torch.cuda.get_device_properties(0).multi_processor_count, torch.__version__))
    if cc != (9, 0):
        step("env sm_90", False, "this check is for sm_90 (Hopper); the device is sm_%d%d" % cc)
    return ptxas


# ---- step 1: compile --------------------------------------------------------------------------
def compile_case(ptxas, name, prog, t, M, N, K):
    f = prog_file(prog, t)
    ptx = os.path.join(WORK, name + ".ptx")
    rc, _, err = run([TXC, f, "--target=sm_90a"] + dims(M, N, K, prog) + ["-o", ptx])
    if rc:
        step("compile " + name, False, "txc failed: " + err.strip().splitlines()[-1][:200] if err.strip() else "rc %d" % rc)
        return None
    man = json.load(open(ptx + ".json"))
    tmpl = [k.get("template", "mma.sync (generic)") for k in man["kernels"] if k["region"] >= 0]
    info = {"templates": tmpl}
    if ptxas:
        pi = checklib.ptxas_info(CK, ptxas, ptx)
        regs, warns = pi["regs"], pi["warnings"]
        info.update(regs=regs, spills=pi["spills"], warnings=warns)
        ok = pi["rc"] == 0 and not warns
        step("compile " + name, ok, "%s; ptxas %s regs, %d B spills%s" % (
            ", ".join(tmpl), "/".join(regs), pi["spills"], ("; " + warns[0][:150]) if warns else ""))
    else:
        step("compile " + name, True, ", ".join(tmpl))
    return info


# ---- step 2: verify ---------------------------------------------------------------------------
def make_inputs(prog, t, M, N, K, seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    dt = torch.bfloat16 if t == "bf16" else torch.float16

    def u(*shape, scale=1.0):
        return ((torch.rand(*shape, generator=g) * 2 - 1) * scale).to(dt)

    s = 1.0 / math.sqrt(K)
    if prog == "bias_gelu":
        return [("a", u(M, K)), ("b", u(K, N, scale=s * 2)), ("c", u(N, scale=0.5))]
    if prog == "linear_res":
        return [("x", u(M, K)), ("w", u(N, K, scale=s * 2)), ("r", u(M, N))]
    if prog in ("two_out", "silu"):
        return [("a", u(M, K)), ("b", u(K, N, scale=s * 2))]
    if prog == "xw":
        return [("x", u(M, K)), ("w", u(K, N, scale=s * 2))]
    if prog == "swiglu":
        return [("x", u(M, K)), ("w1", u(K, N, scale=s * 2)), ("w3", u(K, N, scale=s * 2))]
    if prog == "qkv":
        return [("x", u(M, K)), ("wq", u(N, K, scale=s * 2)), ("wk", u(N, K, scale=s * 2)), ("wv", u(N, K, scale=s * 2))]
    if prog == "merged":
        return [("o", u(K // 128, M, 128)), ("w", u(K, N, scale=s * 2)), ("r", u(M, N))]
    if prog == "mlp":  # x [M, N], w1/w3 [N, K], w2 [K, N]
        return [("x", u(M, N)), ("w1", u(N, K, scale=2 / math.sqrt(N))), ("w3", u(N, K, scale=2 / math.sqrt(N))),
                ("w2", u(K, N, scale=2 / math.sqrt(K)))]
    return [("a", u(K, M)), ("b", u(K, N, scale=s * 2))]


def reference(prog, t, ins):
    """The graph's semantics on the GPU: products in float64, rounded to the dtype where the graph
    rounds (the product, each elementwise op), the tail in float32."""
    import torch
    dt = torch.bfloat16 if t == "bf16" else torch.float16
    x = [v.cuda() for _, v in ins]
    r = lambda v: v.to(dt)  # noqa: E731
    if prog == "bias_gelu":
        p = r(x[0].double() @ x[1].double())
        h = r(p.float() + x[2].float())
        return [r(torch.nn.functional.gelu(h.float(), approximate="tanh"))]
    if prog == "linear_res":
        p = r(x[0].double() @ x[1].double().t())
        return [r(p.float() + x[2].float())]
    if prog == "two_out":
        y = r(x[0].double() @ x[1].double())
        return [y, torch.nn.functional.silu(y.float())]
    silu = torch.nn.functional.silu
    if prog == "silu":
        return [r(silu(r(x[0].double() @ x[1].double()).float()))]
    if prog == "xw":
        return [r(x[0].double() @ x[1].double())]
    if prog == "swiglu":
        g1 = r(x[0].double() @ x[1].double())
        g3 = r(x[0].double() @ x[2].double())
        return [r(r(silu(g1.float())).float() * g3.float())]
    if prog == "qkv":
        return [r(x[0].double() @ w.double().t()) for w in x[1:]]
    if prog == "merged":
        a = x[0].permute(1, 0, 2).reshape(x[0].shape[1], -1)
        return [r(x[2].float() + r(a.double() @ x[1].double()).float())]
    if prog == "mlp":
        g1 = r(x[0].double() @ x[1].double())
        g3 = r(x[0].double() @ x[2].double())
        h = r(r(silu(g1.float())).float() * g3.float())
        return [r(h.double() @ x[3].double())]
    return [r(x[0].double().t() @ x[1].double())]


def compare(got, want):
    import torch
    got = got.double()
    want = want.double()
    nan = int(torch.isnan(got).sum())
    fin = torch.isfinite(got)
    d = torch.where(fin, got - want, torch.zeros_like(got))
    rel = float(d.norm() / max(want.norm(), 1e-30))
    scale = float(want.abs().max())
    worst = float(d.abs().max() / max(scale, 1e-30))
    return nan, rel, worst


def verify_case(name, prog, t, M, N, K):
    import numpy as np
    import torch
    ins = make_inputs(prog, t, M, N, K, seed=1234 + M + N + K)
    args = []
    for nm, v in ins:
        p = os.path.join(WORK, "%s_%s.npy" % (name, nm))
        # txc reads bf16 parameters from float32 .npy (numpy has no bf16; exact here), f16 from <f2
        np.save(p, v.numpy() if v.dtype == torch.float16 else v.float().numpy())
        args += ["--input", "%s=%s" % (nm, p)]
    od = os.path.join(WORK, name + "_out")
    os.makedirs(od, exist_ok=True)
    rc, _, err = run([TXC, "run", prog_file(prog, t), "--device=gpu"] + dims(M, N, K, prog) + args + ["--output-dir", od], timeout=240)
    if rc:
        step("verify " + name, False, "txc run failed: " + (err.strip().splitlines() or ["rc %d" % rc])[-1][:250])
        return None
    want = reference(prog, t, ins)
    res = []
    ok = True
    for i, w in enumerate(want):
        g = torch.from_numpy(np.load(os.path.join(od, "out%d.npy" % i))).cuda()
        if tuple(g.shape) != tuple(w.shape):
            step("verify " + name, False, "output %d has shape %s, expected %s" % (i, tuple(g.shape), tuple(w.shape)))
            return None
        nan, rel, worst = compare(g, w)
        # 16-bit outputs: a few ulp of rounding differences (2^-8 relative for bf16) per element
        lim_rel, lim_worst = (1e-2, 5e-2) if w.dtype in (torch.bfloat16, torch.float16) else (2e-3, 2e-2)
        this = nan == 0 and rel <= lim_rel and worst <= lim_worst
        ok = ok and this
        res.append({"out": i, "nan": nan, "rel_fro": rel, "worst_rel_to_scale": worst, "ok": this})
    step("verify " + name, ok, "; ".join("out%d: rel %.2e, worst %.2e of scale, %d NaN" % (
        r["out"], r["rel_fro"], r["worst_rel_to_scale"], r["nan"]) for r in res))
    for f in os.listdir(od):
        os.remove(os.path.join(od, f))
    for nm, _ in ins:
        os.remove(os.path.join(WORK, "%s_%s.npy" % (name, nm)))
    return res


# ---- step 3: time -----------------------------------------------------------------------------
def tx_time(name, prog, t, M, N, K, target=None):
    cmd = [TXC, "bench", prog_file(prog, t), "--device=gpu", "--random-inputs=1", "--iters", "20", "--json"] + dims(M, N, K, prog)
    if target:
        cmd.append("--target=" + target)
    rc, out, err = run(cmd, timeout=300)
    try:
        j = json.loads(out[out.index("{"):])
    except Exception:  # noqa: BLE001
        return None, "txc bench rc %d: %s" % (rc, (err.strip().splitlines() or ["no output"])[-1][:200])
    fu = j.get("fused", {})
    ks = [k.get("us", 0) for k in fu.get("kernels", [])]
    return {"graph_us": fu.get("graph_us"), "kernels_us": ks, "verified": fu.get("verified"), "rc": rc}, None


def cuda_time(fn, iters=20):
    return checklib.cuda_time(fn, iters, warmup=3)


def torch_times(prog, t, M, N, K):
    import torch
    dt = torch.bfloat16 if t == "bf16" else torch.float16
    ins = [v.cuda() for _, v in make_inputs(prog, t, M, N, K, seed=1)]
    gelu = torch.nn.functional.gelu
    if prog == "bias_gelu":
        mm = lambda: ins[0] @ ins[1]  # noqa: E731
        full = lambda a, b, c: gelu(a @ b + c, approximate="tanh")  # noqa: E731
    elif prog == "linear_res":
        mm = lambda: torch.nn.functional.linear(ins[0], ins[1])  # noqa: E731
        full = lambda x, w, r: torch.nn.functional.linear(x, w) + r  # noqa: E731
    elif prog == "xw":
        mm = lambda: ins[0] @ ins[1]  # noqa: E731
        full = lambda x, w: x @ w  # noqa: E731
    elif prog == "silu":
        mm = lambda: ins[0] @ ins[1]  # noqa: E731
        full = lambda a, b: torch.nn.functional.silu(a @ b)  # noqa: E731
    elif prog == "swiglu":  # cuBLAS: the two GEMMs alone
        mm = lambda: (ins[0] @ ins[1], ins[0] @ ins[2])  # noqa: E731
        full = lambda x, w1, w3: torch.nn.functional.silu(x @ w1) * (x @ w3)  # noqa: E731
    elif prog == "qkv":  # cuBLAS: the three GEMMs alone
        mm = lambda: tuple(torch.nn.functional.linear(ins[0], w) for w in ins[1:])  # noqa: E731
        full = lambda x, wq, wk, wv: (torch.nn.functional.linear(x, wq), torch.nn.functional.linear(x, wk),  # noqa: E731
                                      torch.nn.functional.linear(x, wv))
    elif prog == "merged":  # cuBLAS: the GEMM alone on a contiguous copy of the merged heads
        ac = ins[0].permute(1, 0, 2).reshape(M, K).contiguous()
        mm = lambda: ac @ ins[1]  # noqa: E731
        full = lambda o, w, r: r + o.permute(1, 0, 2).reshape(o.shape[1], -1) @ w  # noqa: E731
    elif prog == "mlp":  # cuBLAS: the three GEMMs alone
        def mm():
            return (ins[0] @ ins[2], (ins[0] @ ins[1]) @ ins[3])
        full = lambda x, w1, w3, w2: (torch.nn.functional.silu(x @ w1) * (x @ w3)) @ w2  # noqa: E731
    else:
        return {}
    out = {"cublas_us": cuda_time(mm), "eager_us": cuda_time(lambda: full(*ins))}
    if time.time() - T0 > COMPILE_DEADLINE:
        log("torch.compile skipped: %.0f s into the run" % (time.time() - T0))
        return out
    try:
        comp = torch.compile(full, dynamic=False)
        comp(*ins)
        out["compile_us"] = cuda_time(lambda: comp(*ins))
    except Exception as e:  # noqa: BLE001
        log("torch.compile failed: %s" % e)
    del dt
    return out


# ---- step 4: sanitizers -----------------------------------------------------------------------
def sanitize(name, prog, t, M, N, K):
    cs = shutil.which("compute-sanitizer") or ("/usr/local/cuda/bin/compute-sanitizer"
                                               if os.path.exists("/usr/local/cuda/bin/compute-sanitizer") else None)
    if not cs:
        step("sanitize " + name, None, "compute-sanitizer not found")
        return
    for tool in os.environ.get("SAN_TOOLS", "memcheck,racecheck,synccheck").split(","):
        rc, out, err = run([cs, "--tool", tool, "--error-exitcode", "99", "--print-limit", "10", TXC, "run", prog_file(prog, t),
                            "--device=gpu", "--random-inputs=3"] + dims(M, N, K, prog), timeout=240)
        text = out + err
        first = next((l.strip() for l in text.splitlines() if re.search(r"error|hazard|invalid|fail", l, re.I)), "")
        step("%s %s" % (tool, name), rc == 0, ("clean" if rc == 0 else "rc %d: %s" % (rc, first[:200])))


def main():
    ptxas = env()
    if not os.access(TXC, os.X_OK):
        return finish()
    try:
        import torch  # noqa: F401
        have_torch = torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        have_torch = False
    for name, prog, t, M, N, K, _ in CASES:
        RESULTS["cases"][name] = {"prog": prog, "dtype": t, "M": M, "N": N, "K": K,
                                  "compile": compile_case(ptxas, name, prog, t, M, N, K)}
    if not have_torch:
        return finish()
    for name, prog, t, M, N, K, _ in CASES:
        if os.environ.get("WG_NO_VERIFY"):  # timings only (txc bench still checks its outputs)
            break
        RESULTS["cases"][name]["verify"] = verify_case(name, prog, t, M, N, K)
    # sanitizers before timing: correctness first when the run is cut short
    for name, prog, t, M, N, K in SANITIZE:
        sanitize(name, prog, t, M, N, K)
    for name, prog, t, M, N, K, timed in CASES:
        if not timed:
            continue
        c = RESULTS["cases"][name]
        if time.time() - T0 > TIME_DEADLINE:
            step("time " + name, None, "skipped: %.0f s into the run (TIME_DEADLINE)" % (time.time() - T0))
            continue
        tx, why = tx_time(name, prog, t, M, N, K)
        if tx is None:
            step("time " + name, False, why)
            continue
        c["tx"] = tx
        if name == "gelu_8192" or name.startswith("linres_m16_"):
            c["tx_sm90"], _ = tx_time(name, prog, t, M, N, K, target="sm_90")
        try:
            c["torch"] = torch_times(prog, t, M, N, K)
        except Exception as e:  # noqa: BLE001
            c["torch"] = {}
            log("torch timing failed: %s" % e)
        step("time " + name, tx.get("rc") == 0, "tx %.1f us (bench verified: %s)" % (tx["graph_us"] or -1, tx["verified"]))
    finish()


def finish():
    rows = ["", "wgmma_check summary (%.0f s): %d checks failed%s" % (time.time() - T0, len(FAILS),
                                                                      (": " + ", ".join(FAILS[:8])) if FAILS else ""),
            "%-28s %-8s %-36s %-9s %9s %9s %8s %9s %9s %7s %7s" % ("case", "dtype", "kernel", "verify", "tx us", "TFLOP/s",
                                                                 "sm90 us", "cuBLAS us", "compile", "tx/cuB", "tx/comp")]
    for name, c in RESULTS["cases"].items():
        comp = c.get("compile") or {}
        tm = ",".join(comp.get("templates", ["?"]))[:36]
        ver = c.get("verify")
        vs = "-" if ver is None else ("ok" if all(r["ok"] for r in ver) else "FAIL")
        tx = c.get("tx") or {}
        us = tx.get("graph_us")
        fl = 2.0 * c["M"] * c["N"] * c["K"] * NPROD.get(c["prog"], 1)
        to = c.get("torch") or {}
        s90 = (c.get("tx_sm90") or {}).get("graph_us")
        cb, co = to.get("cublas_us"), to.get("compile_us")
        f = lambda v, w=9, p=1: ("%*.*f" % (w, p, v)) if isinstance(v, (int, float)) and v else "%*s" % (w, "-")  # noqa: E731
        rows.append("%-28s %-8s %-36s %-9s %s %s %s %s %s %s %s" % (
            name, c["dtype"], tm, vs, f(us), f(fl / us / 1e6 if us else None), f(s90, 8), f(cb), f(co),
            f(cb / us if us and cb else None, 7, 2), f(co / us if us and co else None, 7, 2)))
    rows.append("tx/cuB: cuBLAS GEMM alone (no epilogue) time / tx time with its epilogue (> 1: tx faster); "
                "tx/comp: torch.compile of the whole function / tx")
    text = "\n".join(rows)
    print(text, flush=True)
    log(text)
    open(os.path.join(OUT, "wgmma_check.txt"), "w").write(CK.steps_text() + "\n" + text + "\n")
    json.dump(RESULTS, open(os.path.join(OUT, "wgmma_check.json"), "w"), indent=1, default=str)
    shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
