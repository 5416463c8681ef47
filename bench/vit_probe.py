"""bench/vit_probe.py - where layerscale_mlp's first GEMM and vit_cls_pos lose to torch.compile
(bench/heldout/FINDINGS.md): on the GPU machine, from dist/ (TXC=bin/txc), within BUDGET seconds.

1. layerscale_mlp's first GEMM [4616, 768] @ [768, 3072] alone with four epilogues (erf GELU + bias,
   bias, none, tanh GELU + bias; bench/vit_probe/ls_*.tx): `txc bench --device=gpu` (verified,
   per-kernel us), the first two beside cuBLAS (eager) and torch.compile of the same expression;
2. vit_cls_pos at B=256 and the same without the concatenation (bench/vit_probe/cls_slice.tx):
   tx per kernel beside torch.compile of each and a device-to-device copy of the bytes moved
   (the copy ceiling).
Prints one table; logs under $OUT (vit_probe_log.txt)."""
import json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checklib import cuda_time  # noqa: E402

TXC = os.environ.get("TXC", "bin/txc")
OUT = os.environ.get("OUT", "vit-probe-out")
END = time.time() + float(os.environ.get("BUDGET", "40"))
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "vit_probe_log.txt"), "w")
GEMM = dict(M=4616, D=768, F=3072)
CLS = dict(B=256)


def tx(prog, dims):
    cmd = [TXC, "bench", os.path.join(HERE, "vit_probe" if not prog.startswith("vit_") else
                                      "heldout", prog + ".tx"),
           "--device=gpu", "--random-inputs=1", "--iters", "30", "--json"]
    for k, v in dims.items():
        cmd += ["-D", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=40)
    LOG.write(f"--- {prog} rc {p.returncode}\n{p.stderr[-2000:]}\n{p.stdout[-4000:]}\n")
    LOG.flush()
    try:
        fu = json.loads(p.stdout[p.stdout.index("{"):])["fused"]
    except (ValueError, KeyError):
        return None, None, "rc %d" % p.returncode
    ks = "; ".join("%s %.1f" % (k.get("kind"), k.get("us") or 0) for k in fu.get("kernels", []))
    return fu.get("graph_us"), fu.get("verified"), ks


def torch_rows():
    import torch
    import torch.nn.functional as Fn
    dev, bf = "cuda", torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(GEMM["M"], GEMM["D"], device=dev, dtype=bf, generator=g)
    w = torch.randn(GEMM["D"], GEMM["F"], device=dev, dtype=bf, generator=g) * 0.03
    b = torch.randn(GEMM["F"], device=dev, dtype=bf, generator=g)
    fns = {"ls_gelu": lambda: Fn.gelu(x @ w + b), "ls_bias": lambda: x @ w + b}
    res = {}
    for n, f in fns.items():
        res[n] = (cuda_time(f), cuda_time(torch.compile(f)))
    B = CLS["B"]
    pt = torch.randn(B, 196, 768, device=dev, dtype=bf, generator=g)
    cls = torch.randn(1, 1, 768, device=dev, dtype=bf, generator=g)
    pos = torch.randn(1, 197, 768, device=dev, dtype=bf, generator=g)
    lw, lb = torch.ones(768, device=dev, dtype=bf), torch.zeros(768, device=dev, dtype=bf)

    def vit_cls():
        xx = torch.cat((cls.expand(B, 1, 768), pt), dim=1) + pos
        return xx, Fn.layer_norm(xx, (768,), lw, lb, 1e-6)

    def sl():
        xx = pt + pos[:, 1:]
        return xx, Fn.layer_norm(xx, (768,), lw, lb, 1e-6)
    res["vit_cls_pos"] = (cuda_time(vit_cls), cuda_time(torch.compile(vit_cls)))
    res["cls_slice"] = (cuda_time(sl), cuda_time(torch.compile(sl)))
    # vit_cls_pos moves 3 x [B, 197, 768] bf16 (read once, two outputs written): a copy of half that
    src = torch.empty(B * 197 * 768 * 3 // 4, device=dev, dtype=torch.int32)
    dst = torch.empty_like(src)
    res["copy"] = (cuda_time(lambda: dst.copy_(src)), None)
    return res


def main():
    rows = [("ls_gelu", GEMM), ("ls_bias", GEMM), ("ls_plain", GEMM), ("ls_tanh", GEMM),
            ("vit_cls_pos", CLS), ("cls_slice", CLS)]
    txr = {}
    for n, d in rows:
        if time.time() > END - 22:
            break
        txr[n] = tx(n, d)
    t = torch_rows()
    print("| program | tx us | verified | tx kernels (us) | eager us | torch.compile us | tc/tx |")
    print("|---|---:|---|---|---:|---:|---:|")
    for n, _ in rows:
        us, ok, ks = txr.get(n, (None, None, "not run"))
        e, c = t.get(n, (None, None))
        f = lambda v: "%.1f" % v if v else "-"
        print(f"| {n} | {f(us)} | {ok} | {ks} | {f(e)} | {f(c)} | {('%.2fx' % (c / us)) if us and c else '-'} |")
    if "copy" in t:
        print(f"copy ceiling: {t['copy'][0]:.1f} us for the bytes vit_cls_pos moves at B=256 (a "
              f"device-to-device copy of 116 MB: 232 MB read and written)")


main()
