#!/usr/bin/env python3
"""bench/block_check.py - transformer blocks under tx against torch.compile of the same block written
in PyTorch, on one GPU, in the same run (normally through bench/block_check.sh).

Blocks: bench/suite-extra/llama_block.tx (D 4096, 32 heads of 128, SwiGLU F 11008, causal) and
examples/transformer_block.tx (D 1024, 8 heads of 128, F 2816, no mask), at S = 2048 (timing) and
S = 300 (ragged; verification). Steps, one line each:

  compile  txc --target=sm_90a: each kernel's template (wgmma-tma-ws ... or the mma.sync one) and
           `ptxas -arch=sm_90a -v` registers / spills
  verify   txc run --device=gpu on seeded inputs at S = 300 and S = 2048 (transformer_block only:
           the LLaMA weights are 0.8 GB of .npy): the output against a float32 PyTorch evaluation of
           the same block on the GPU; passes when tx's relative Frobenius error is at most
           2x that of PyTorch eager in bf16 (the same block, the same inputs) + 2e-3, and no NaN
  time     txc bench --device=gpu --json (graph time, per-kernel times; cold L2) and, with CUDA
           events in this process (L2 flushed between runs), PyTorch eager and torch.compile of the
           block written with F.scaled_dot_product_attention (what a PyTorch user writes) and
           with the explicit softmax (the same math as the .tx file)
The table is printed last and written to $OUT/block_check.txt; $OUT/block_check.{log,json}.
"""
import json
import math
import os
import shutil
import sys
import tempfile
import time

import checklib

OUT = os.environ.get("OUT") or "block-check-out"
TXC = os.environ.get("TXC", "dist/bin/txc")
ROOT = os.environ.get("TX_ROOT", "dist" if os.path.isdir("dist/examples") else ".")
DEADLINE = float(os.environ.get("BLOCK_DEADLINE", 200))  # s: no torch.compile after this
CK = checklib.Check(OUT, "block_check")
log, step, FAILS = CK.log, CK.step, CK.fails
WORK = tempfile.mkdtemp(prefix="block-")
T0 = time.time()
RES = {"steps": CK.steps, "blocks": {}}

BLOCKS = [
    # name, file, D, heads, head dim, F, causal
    ("llama", os.path.join(ROOT, "bench/suite-extra/llama_block.tx"), 4096, 32, 128, 11008, True),
    ("transformer_block", os.path.join(ROOT, "examples/transformer_block.tx"), 1024, 8, 128, 2816, False),
]


def run(cmd, timeout=240):
    return CK.run(cmd, timeout, keep=3000)


def block_fn(H, Dh, causal, sdpa):
    """The block in PyTorch (bf16 tensors in, bf16 out), as the .tx file writes it."""
    import torch
    F = torch.nn.functional

    def rms(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)

    def f(x, wn1, wq, wk, wv, wo, wn2, w1, w3, w2):
        S = x.shape[0]
        n = rms(x, wn1)
        q = (n @ wq).view(S, H, Dh).transpose(0, 1)
        k = (n @ wk).view(S, H, Dh).transpose(0, 1)
        v = (n @ wv).view(S, H, Dh).transpose(0, 1)
        if sdpa:  # [1, H, S, Dh]: the layout SDPA's flash kernels take
            a = F.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                                               is_causal=causal)[0]
        else:
            s = (q @ k.transpose(-1, -2)).float() * (1.0 / math.sqrt(Dh))
            if causal:
                s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            a = torch.softmax(s, -1).to(x.dtype) @ v
        h = x + a.transpose(0, 1).reshape(S, H * Dh) @ wo
        m = rms(h, wn2)
        return h + (F.silu(m @ w1) * (m @ w3)) @ w2
    return f


def inputs(S, D, F_, seed):
    import torch
    g = torch.Generator().manual_seed(seed)

    def u(*shape, scale=1.0, off=0.0):
        return ((torch.rand(*shape, generator=g) * 2 - 1) * scale + off).to(torch.bfloat16)
    sd, sf = 1 / math.sqrt(D), 1 / math.sqrt(F_)
    return [("x", u(S, D)), ("wn1", u(D, scale=0.1, off=1.0)), ("wq", u(D, D, scale=sd * 2)),
            ("wk", u(D, D, scale=sd * 2)), ("wv", u(D, D, scale=sd * 2)), ("wo", u(D, D, scale=sd)),
            ("wn2", u(D, scale=0.1, off=1.0)), ("w1", u(D, F_, scale=sd * 2)), ("w3", u(D, F_, scale=sd * 2)),
            ("w2", u(F_, D, scale=sf))]


def compile_block(name, path, ptxas):
    ptx = os.path.join(WORK, name + ".ptx")
    rc, _, err = run([TXC, path, "-D", "S=2048", "--target=sm_90a", "-o", ptx])
    if rc:
        step("compile " + name, False, (err.strip().splitlines() or ["rc %d" % rc])[-1][:200])
        return None
    man = json.load(open(ptx + ".json"))
    ks = [(k["name"], k.get("template", "-")) for k in man["kernels"] if k.get("region", -1) >= 0]
    info = {"kernels": ks}
    detail = "; ".join("%s %s" % (n.rsplit("_", 1)[-1], t) for n, t in ks)
    if ptxas:
        pi = checklib.ptxas_info(CK, ptxas, ptx)
        info["spills"] = pi["spills"]
        detail += "; ptxas rc %d, %d B spills" % (pi["rc"], pi["spills"])
    nwg = sum(1 for _, t in ks if t.startswith("wgmma"))
    info["wgmma_kernels"] = nwg
    step("compile " + name, True, "%d of %d kernels on a wgmma template: %s" % (nwg, len(ks), detail))
    return info


def verify_block(name, path, D, H, Dh, F_, causal, S):
    import numpy as np
    import torch
    ins = inputs(S, D, F_, seed=7 + S)
    args = []
    for nm, v in ins:
        p = os.path.join(WORK, "%s_%s.npy" % (name, nm))
        np.save(p, v.float().numpy())  # txc reads bf16 parameters from float32 .npy (exact)
        args += ["--input", "%s=%s" % (nm, p)]
    od = os.path.join(WORK, name + "_out")
    os.makedirs(od, exist_ok=True)
    rc, _, err = run([TXC, "run", path, "--device=gpu", "-D", "S=%d" % S] + args + ["--output-dir", od])
    for nm, _ in ins:
        os.remove(os.path.join(WORK, "%s_%s.npy" % (name, nm)))
    tag = "verify %s S=%d" % (name, S)
    if rc:
        step(tag, False, "txc run failed: " + (err.strip().splitlines() or ["rc %d" % rc])[-1][:200])
        return None
    got = torch.from_numpy(np.load(os.path.join(od, "out0.npy"))).cuda().double()
    x = [v.cuda() for _, v in ins]
    with torch.no_grad():
        ref = block_fn(H, Dh, causal, False)(*[t.float() for t in x]).double()
        eager = block_fn(H, Dh, causal, False)(*x).double()
    nan = int(torch.isnan(got).sum())
    e_tx = float((torch.nan_to_num(got) - ref).norm() / ref.norm())
    e_eager = float((eager - ref).norm() / ref.norm())
    ok = nan == 0 and e_tx <= 2 * e_eager + 2e-3
    step(tag, ok, "rel Frobenius vs f32: tx %.2e, torch eager bf16 %.2e; %d NaN" % (e_tx, e_eager, nan))
    return {"tx_rel": e_tx, "eager_rel": e_eager, "nan": nan, "ok": ok}


def cuda_time(fn, iters=10):
    return checklib.cuda_time(fn, iters, warmup=2)


def time_block(name, path, D, H, Dh, F_, causal):
    import torch
    out = {}
    rc, so, err = run([TXC, "bench", path, "--device=gpu", "-D", "S=2048", "--random-inputs=1", "--iters", "10",
                       "--json"], timeout=240)
    try:
        j = json.loads(so[so.index("{"):])
        fu = j.get("fused", {})
        out["tx_us"] = fu.get("graph_us")
        out["tx_kernels_us"] = [round(k.get("us", 0), 1) for k in fu.get("kernels", [])]
        out["tx_verified"] = fu.get("verified")
    except Exception:  # noqa: BLE001
        step("time %s tx" % name, False, "txc bench rc %d: %s" % (rc, (err.strip().splitlines() or ["no output"])[-1][:200]))
    x = [v.cuda() for _, v in inputs(2048, D, F_, seed=1)]
    with torch.no_grad():
        out["eager_us"] = cuda_time(lambda: block_fn(H, Dh, causal, True)(*x))
        for tag, sdpa in (("compile_sdpa_us", True), ("compile_softmax_us", False)):
            if time.time() - T0 > DEADLINE:
                log("torch.compile %s skipped: %.0f s into the run" % (tag, time.time() - T0))
                continue
            try:
                c = torch.compile(block_fn(H, Dh, causal, sdpa), dynamic=False)
                c(*x)
                out[tag] = cuda_time(lambda: c(*x))
            except Exception as e:  # noqa: BLE001
                log("torch.compile failed: %s" % e)
    us = out.get("tx_us")
    step("time " + name, us is not None, "tx %s us (kernels %s; bench verified: %s)" % (
        "%.0f" % us if us else "-", out.get("tx_kernels_us"), out.get("tx_verified")))
    return out


def main():
    ok = os.access(TXC, os.X_OK)
    step("env txc", ok, TXC)
    ptxas = checklib.find_ptxas()
    if not ok:
        return finish()
    try:
        import torch
        gpu = torch.cuda.is_available()
    except Exception as e:  # noqa: BLE001
        step("env torch", False, str(e))
        gpu = False
    for name, path, D, H, Dh, F_, causal in BLOCKS:
        RES["blocks"][name] = {"compile": compile_block(name, path, ptxas)}
    if not gpu:
        step("env gpu", False, "torch sees no CUDA device")
        return finish()
    step("env gpu", True, "%s, torch %s" % (torch.cuda.get_device_name(), torch.__version__))
    for name, path, D, H, Dh, F_, causal in BLOCKS:
        b = RES["blocks"][name]
        b["verify"] = [verify_block(name, path, D, H, Dh, F_, causal, 300)]
        if name == "transformer_block":
            b["verify"].append(verify_block(name, path, D, H, Dh, F_, causal, 2048))
    for name, path, D, H, Dh, F_, causal in BLOCKS:
        try:
            RES["blocks"][name]["time"] = time_block(name, path, D, H, Dh, F_, causal)
        except Exception as e:  # noqa: BLE001
            step("time " + name, False, "exception: %s" % e)
    finish()


def finish():
    rows = ["", "block_check summary (%.0f s): %d checks failed%s" % (
        time.time() - T0, len(FAILS), (": " + ", ".join(FAILS[:8])) if FAILS else ""),
        "%-18s %7s %9s %9s %11s %11s %9s %9s" % ("block S=2048", "wgmma", "tx us", "eager us", "compile us",
                                                 "(softmax)", "tx/comp", "tx/eager")]
    for name, b in RES["blocks"].items():
        t = b.get("time") or {}
        c = b.get("compile") or {}
        us, cs, cm, eg = t.get("tx_us"), t.get("compile_sdpa_us"), t.get("compile_softmax_us"), t.get("eager_us")
        best = min([v for v in (cs, cm) if v] or [0])
        f = lambda v, w=9, p=0: ("%*.*f" % (w, p, v)) if isinstance(v, (int, float)) and v else "%*s" % (w, "-")  # noqa: E731
        rows.append("%-18s %7s %s %s %s %s %s %s" % (
            name, "%s/%s" % (c.get("wgmma_kernels", "-"), len(c.get("kernels", []))), f(us), f(eg), f(cs, 11),
            f(cm, 11), f(best / us if us and best else None, 9, 2), f(eg / us if us and eg else None, 9, 2)))
    rows.append("compile us: torch.compile of the block written with SDPA; (softmax): of the explicit-softmax form; "
                "tx/comp: the faster of the two / tx's graph time (> 1: tx faster)")
    text = "\n".join(rows)
    print(text, flush=True)
    log(text)
    open(os.path.join(OUT, "block_check.txt"), "w").write(CK.steps_text() + "\n" + text + "\n")
    json.dump(RES, open(os.path.join(OUT, "block_check.json"), "w"), indent=1, default=str)
    shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
