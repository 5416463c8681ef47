"""PyTorch anchors for the attention variants of bench/suite-extra (run by bench/attn_check.sh).

Usage: python3 bench/attn_torch.py OUT.json
For each variant at its bench size: the same expression in PyTorch eager (when it fits in memory),
torch.compile of that expression, SDPA where it has the variant (is_causal, enable_gqa, an additive
mask), and FlexAttention where it runs. Median times (triton do_bench) in ms; a failed anchor is
recorded with its error instead of a time."""
import json, math, sys, time
import torch
import torch.nn.functional as F
from triton.testing import do_bench

dev = "cuda"
torch.manual_seed(0)
SC = 0.08838834764831845
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
try:
    from torch.nn.attention.flex_attention import flex_attention, create_block_mask
    flex = torch.compile(flex_attention)
except Exception as e:  # noqa: BLE001
    flex = None
    out["flex_error"] = repr(e)[:200]


def bench(fn):
    return do_bench(fn, warmup=10, rep=100, return_mode="median")


def timed(row, key, fn):
    try:
        fn()
        torch.cuda.synchronize()
        row[key + "_ms"] = round(bench(fn), 4)
    except Exception as e:  # noqa: BLE001
        row[key + "_error"] = repr(e)[:200]
    torch.cuda.empty_cache()


def causal_mask(s):
    i = torch.arange(s, device=dev)
    return i[:, None] >= i[None, :]


def expr_causal(q, k, v):
    s = (q @ k.transpose(-1, -2)).float() * SC
    s = s.masked_fill(~causal_mask(q.shape[-2]), float("-inf"))
    return torch.softmax(s, -1).to(q.dtype) @ v


def expr_window(q, k, v):
    s = (q @ k.transpose(-1, -2)).float() * SC
    i = torch.arange(q.shape[-2], device=dev)
    d = i[:, None] - i[None, :]
    s = s.masked_fill(~((d >= 0) & (d < 1024)), float("-inf"))
    return torch.softmax(s, -1).to(q.dtype) @ v


def expr_alibi(q, k, v, slopes):
    s = (q @ k.transpose(-1, -2)).float() * SC
    i = torch.arange(q.shape[-2], device=dev)
    b = slopes[:, None, None] * (i[None, :] - i[:, None]).float()
    s = torch.where(i[:, None] >= i[None, :], s + b, float("-inf"))
    return torch.softmax(s, -1).to(q.dtype) @ v


def expr_softcap(q, k, v):
    s = (q @ k.transpose(-1, -2)).float() * SC
    s = 50.0 * torch.tanh(s / 50.0)
    s = s.masked_fill(~causal_mask(q.shape[-2]), float("-inf"))
    return torch.softmax(s, -1).to(q.dtype) @ v


def expr_gqa(q, k, v):
    b, h, s_, d = q.shape
    qg = q.reshape(b, 8, h // 8, s_, d)
    s = (qg @ k[:, :, None].transpose(-1, -2)).float() * SC
    s = s.masked_fill(~causal_mask(s_), float("-inf"))
    return (torch.softmax(s, -1).to(q.dtype) @ v[:, :, None]).reshape(b, h, s_, d)


def expr_decode(q, k, v, ln):
    s = (q @ k.transpose(-1, -2)).float() * SC
    keep = torch.arange(k.shape[-2], device=dev)[None, None, None, :] < ln[:, None, None, None]
    s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, -1).to(q.dtype) @ v


def run(name, expr, args, sdpa=None, flex_fn=None, eager=True):
    row = {}
    if eager:
        timed(row, "eager", lambda: expr(*args))
    torch._dynamo.reset()
    try:
        cf = torch.compile(expr)
        t0 = time.time(); cf(*args); torch.cuda.synchronize(); row["compile_s"] = round(time.time() - t0, 1)
        timed(row, "compile", lambda: cf(*args))
    except Exception as e:  # noqa: BLE001
        row["compile_error"] = repr(e)[:200]
    if sdpa:
        timed(row, "sdpa", sdpa)
    if flex and flex_fn:
        timed(row, "flex", flex_fn)
    out[name] = row
    print(name, json.dumps(row), flush=True)


B, H, S, D = 4, 32, 4096, 128
q = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
k = torch.randn_like(q); v = torch.randn_like(q)
slopes = torch.tensor([2 ** (-8 * (i + 1) / H) for i in range(H)], device=dev)


def fm(mask_mod, score_mod=None, hq=H):
    bm = create_block_mask(mask_mod, None, None, S, S, device=dev) if mask_mod else None
    return lambda: flex(q if hq == H else q, k, v, score_mod=score_mod, block_mask=bm, scale=SC)


run("attn_causal", expr_causal, (q, k, v), sdpa=lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=SC),
    flex_fn=fm(lambda b, h, i, j: i >= j) if flex else None, eager=False)
run("attn_full_sdpa_reference", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=SC), (q, k, v), eager=False)
run("attn_window", expr_window, (q, k, v), flex_fn=fm(lambda b, h, i, j: (i >= j) & (i - j < 1024)) if flex else None,
    eager=False)
run("attn_alibi", expr_alibi, (q, k, v, slopes),
    flex_fn=fm(lambda b, h, i, j: i >= j, lambda s, b, h, i, j: s + slopes[h] * (j - i)) if flex else None, eager=False)
run("attn_softcap", expr_softcap, (q, k, v),
    flex_fn=fm(lambda b, h, i, j: i >= j, lambda s, b, h, i, j: 50.0 * torch.tanh(s / 50.0)) if flex else None,
    eager=False)
kk = torch.randn(B, 8, S, D, device=dev, dtype=torch.bfloat16); vv = torch.randn_like(kk)
run("attn_gqa", expr_gqa, (q, kk, vv),
    sdpa=lambda: F.scaled_dot_product_attention(q, kk, vv, is_causal=True, scale=SC, enable_gqa=True), eager=False)
del q, k, v, kk, vv
torch.cuda.empty_cache()
Bd, L = 8, 32768
qd = torch.randn(Bd, H, 1, D, device=dev, dtype=torch.bfloat16)
kd = torch.randn(Bd, H, L, D, device=dev, dtype=torch.bfloat16); vd = torch.randn_like(kd)
ln = torch.full((Bd,), L, device=dev, dtype=torch.int32)
run("attn_decode", expr_decode, (qd, kd, vd, ln),
    sdpa=lambda: F.scaled_dot_product_attention(qd, kd, vd, scale=SC))
x = torch.empty(1 << 30, dtype=torch.float32, device=dev); y = torch.empty_like(x)
out["copy_GBps"] = round(2 * x.numel() * 4 / (bench(lambda: y.copy_(x)) * 1e6), 1)
out["decode_bytes"] = 2 * Bd * H * L * D * 2
json.dump(out, open(sys.argv[1], "w"), indent=1)
