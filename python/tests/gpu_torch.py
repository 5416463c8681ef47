"""gpu_torch.py OUTDIR - the Python package on a GPU machine (run by
bench/python_gpu.sh): zero-copy PyTorch and CuPy calls (poisoned outputs,
a non-default stream whose producer is still running), then
torch.compile(backend="tx") on a LLaMA-style block (RMSNorm, attention
through SDPA (non-causal, and causal: tx runs causal SDPA once its
frontend has iota, else that node stays in PyTorch), SwiGLU MLP) and a GELU MLP against eager, timed beside
torch.compile's default backend in the same run; a second sequence length
checks that a size change does not recompile the tx programs. Writes
results.json and prints a summary table last. Exit 1 on any failure."""
import json
import os
import sys
import time
import traceback

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import tx

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
RESULTS = {"checks": [], "timings": []}
DEV = "cuda"


def check(name, ok, detail=""):
    RESULTS["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
    print(f"{'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


def rel_err(a, b):
    a, b = a.float(), b.float()
    return float((a - b).abs().max() / (b.abs().max() + 1e-6))


def poison_next(numel, dtype):
    """Leaves a NaN-filled block of numel elements in torch's caching
    allocator, so the next allocation of that size starts poisoned."""
    t = torch.full((numel,), float("nan"), dtype=dtype, device=DEV)
    torch.cuda.synchronize()
    del t


# ---- zero-copy calls ------------------------------------------------------------
def zero_copy():
    p = tx.compile_source("fn f(x: f32[N], y: f32[N]) -> f32[N] { return gelu_tanh(x * 0.5 + y) }")
    n = 1 << 22
    x, y = torch.randn(n, device=DEV), torch.randn(n, device=DEV)
    want = F.gelu(x * 0.5 + y, approximate="tanh")
    poison_next(n, torch.float32)
    got = p(x, y)
    torch.cuda.synchronize()
    check("torch f32 zero-copy, poisoned output", got.is_cuda and not got.isnan().any() and rel_err(got, want) < 1e-5,
          f"rel err {rel_err(got, want):.2e}, output on {got.device}")
    # a non-default stream whose producer is still running: tx must wait for it on that stream
    s = torch.cuda.Stream()
    a = torch.randn(4096, 4096, device=DEV)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        big = a @ a @ a @ a  # several ms of work on s
        xs = big.flatten()[:n].contiguous() * 1e-6
        got_s = p(xs, y)
        want_s = F.gelu(xs * 0.5 + y, approximate="tanh")
    s.synchronize()
    check("torch non-default stream (producer still running)", rel_err(got_s, want_s) < 1e-5,
          f"rel err {rel_err(got_s, want_s):.2e}")
    # bf16, 2-D, several outputs
    q = tx.compile_source("fn g(x: bf16[M, N], w: bf16[N]) -> (bf16[M, N], f32[M]) "
                          "{ n = rmsnorm(x, w, eps=1e-6)\n return n, sum(f32(n), axis=-1) }")
    xb, wb = torch.randn(512, 1024, device=DEV, dtype=torch.bfloat16), torch.randn(1024, device=DEV,
                                                                                  dtype=torch.bfloat16)
    poison_next(512 * 1024, torch.bfloat16)
    nb, sb = q(xb, wb)
    ref = F.rms_norm(xb.float(), (1024,), wb.float(), 1e-6)
    check("torch bf16 two outputs", nb.dtype == torch.bfloat16 and rel_err(nb, ref) < 2e-2 and
          rel_err(sb, ref.sum(-1)) < 2e-2, f"rel err {rel_err(nb, ref):.2e}, {rel_err(sb, ref.sum(-1)):.2e}")
    before = torch.cuda.memory_allocated()
    out = p(x, y)
    grown = torch.cuda.memory_allocated() - before
    check("no copies: only the output is allocated by torch", grown == out.numel() * 4, f"{grown} bytes")
    try:
        p(x.double(), y)
        check("wrong dtype raises tx.Error", False)
    except tx.Error as e:
        check("wrong dtype raises tx.Error naming the parameter", "'x'" in str(e), str(e))
    try:
        p(x, y.cpu())
        check("mixed devices raise tx.Error", False)
    except tx.Error as e:
        check("host array among CUDA tensors raises tx.Error", "'y'" in str(e), str(e))
    # timing of the zero-copy path against eager
    RESULTS["timings"].append(timeit("gelu f32 4M (tx call)", lambda: p(x, y)) |
                              {"eager_us": timeit("", lambda: F.gelu(x * 0.5 + y, approximate="tanh"))["us"]})
    try:
        import cupy
        cx, cy = cupy.asarray(x), cupy.asarray(y)
        st = cupy.cuda.Stream(non_blocking=True)
        with st:
            cz = p(cx, cy)
        st.synchronize()
        check("cupy zero-copy on a cupy stream", isinstance(cz, cupy.ndarray) and
              float(abs(cupy.asnumpy(cz) - want.cpu().numpy()).max()) < 1e-4)
    except ImportError:
        print("skip: cupy not installed")


def timeit(label, fn, iters=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000)
    return {"label": label, "us": float(np.median(ts))}


# ---- models in plain PyTorch ------------------------------------------------------
class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


class LlamaBlock(nn.Module):
    def __init__(self, d=1024, heads=16, ffn=2816, causal=False):
        super().__init__()
        self.causal = causal
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.w1, self.w3 = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.h, self.dh).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
        h = self.n2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class GeluMLP(nn.Module):
    def __init__(self, d=1024, f=4096):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, f), nn.Linear(f, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


def backend(name, model, shapes, tol):
    model = model.to(DEV, torch.bfloat16).eval()
    torch._dynamo.reset()
    from torch._dynamo.utils import counters
    counters.clear()
    comp_tx = torch.compile(model, backend="tx")
    comp_ind = torch.compile(model)
    with torch.no_grad():
        for i, shp in enumerate(shapes):
            x = torch.randn(*shp, device=DEV, dtype=torch.bfloat16)
            want = model(x)
            t0 = time.time()
            got = comp_tx(x)
            torch.cuda.synchronize()
            first = time.time() - t0
            err = rel_err(got, want)
            check(f"{name} {tuple(shp)}: backend tx vs eager", err < tol, f"max rel err {err:.2e} (tol {tol})")
            t0 = time.time()
            ind = comp_ind(x)
            torch.cuda.synchronize()
            first_ind = time.time() - t0
            row = {"label": f"{name} {tuple(shp)}", "tx_us": timeit("", lambda: comp_tx(x))["us"],
                   "inductor_us": timeit("", lambda: comp_ind(x))["us"], "eager_us": timeit("", lambda: model(x))["us"],
                   "tx_first_call_s": round(first, 2), "inductor_first_call_s": round(first_ind, 2),
                   "inductor_err": rel_err(ind, want)}
            RESULTS["timings"].append(row)
    frames = dict(counters["stats"])
    RESULTS.setdefault("dynamo", {})[name] = frames
    print(f"{name}: dynamo stats {frames}")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, tx library {tx.lib().path}")
    for step in (zero_copy,
                 lambda: backend("gelu_mlp", GeluMLP(), [(8, 512, 1024), (8, 384, 1024)], 3e-2),
                 lambda: backend("llama_block", LlamaBlock(), [(4, 512, 1024), (4, 256, 1024), (4, 384, 1024)], 5e-2),
                 lambda: backend("llama_block_causal", LlamaBlock(causal=True), [(4, 512, 1024)], 5e-2)):
        try:
            step()
        except Exception as e:  # noqa: BLE001 - recorded, the other steps still run
            traceback.print_exc()
            check(f"step raised {type(e).__name__}", False, str(e).splitlines()[0] if str(e) else "")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(RESULTS, f, indent=1)
    print("\n== summary: checks")
    for c in RESULTS["checks"]:
        print(f"  {'PASS' if c['ok'] else 'FAIL'}  {c['name']}")
    print("\n== summary: median us per call (CUDA events); ratio > 1: tx faster")
    print(f"  {'workload':32} {'tx':>10} {'inductor':>10} {'eager':>10} {'ind/tx':>7}")
    for t in RESULTS["timings"]:
        txu = t.get("tx_us", t.get("us"))
        ind = t.get("inductor_us")
        print(f"  {t['label']:32} {txu:10.1f} {ind if ind else float('nan'):10.1f} {t.get('eager_us', float('nan')):10.1f}"
              f" {(ind / txu) if ind else float('nan'):7.2f}")
    bad = [c for c in RESULTS["checks"] if not c["ok"]]
    print(f"\n{len(RESULTS['checks']) - len(bad)} of {len(RESULTS['checks'])} checks passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
