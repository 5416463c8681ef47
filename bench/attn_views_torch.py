"""PyTorch anchors for bench/attn_views_check.sh: the held-out split-heads programs of
tests/attention/views/ written as a PyTorch user writes them, timed in the same run as tx.

Usage: python3 bench/attn_views_torch.py OUT.json B S
Median times (triton do_bench) in ms, bf16: per program, `sdpa_NAME` is
scaled_dot_product_attention alone on the split views (q.view(B, S, H, D).transpose(1, 2), the
backend PyTorch picks; GQA with enable_gqa, the lengths with a boolean key mask), `full_NAME`
the whole expression including the merge back to [B, S, H * D] (a copy in PyTorch; tx's
attention kernel stores it through the view).
A failed anchor is recorded with its error instead of a time."""
import json
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

dev = "cuda"
torch.manual_seed(0)
B, S = int(sys.argv[2]), int(sys.argv[3])
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "B": B, "S": S}


def rnd(*shape):
    return torch.randn(*shape, device=dev, dtype=torch.bfloat16)


def timed(key, fn):
    try:
        fn()
        torch.cuda.synchronize()
        out[key] = round(do_bench(fn, warmup=10, rep=100, return_mode="median"), 4)
    except Exception as e:  # noqa: BLE001
        out[key + "_error"] = repr(e)[:200]


def heads(t, h, d):
    return t.view(B, S, h, d).transpose(1, 2)


def merge(o):
    return o.transpose(1, 2).reshape(B, S, -1)


# (name, query heads, kv heads, head dim, causal, lengths)
for name, hq, hk, d, causal, lens in [("mha_causal", 8, 8, 128, True, False),
                                       ("mha_d64", 12, 12, 64, False, False),
                                       ("gqa_causal", 16, 4, 128, True, False),
                                       ("mha_lens", 16, 16, 64, False, True),
                                       ("mha_d80", 32, 32, 80, True, False),
                                       ("mha_d96", 16, 16, 96, False, False)]:
    q, k, v = rnd(B, S, hq * d), rnd(B, S, hk * d), rnd(B, S, hk * d)
    kw = {"is_causal": causal, "enable_gqa": hq != hk}
    if lens:
        ln = torch.randint(1, S + 1, (B,), device=dev)
        kw["attn_mask"] = (torch.arange(S, device=dev)[None, :] < ln[:, None])[:, None, None, :]
    qh, kh, vh = heads(q, hq, d), heads(k, hk, d), heads(v, hk, d)
    timed("sdpa_" + name, lambda: F.scaled_dot_product_attention(qh, kh, vh, **kw))
    timed("full_" + name, lambda: merge(F.scaled_dot_product_attention(heads(q, hq, d), heads(k, hk, d),
                                                                       heads(v, hk, d), **kw)))
    del q, k, v, qh, kh, vh
    torch.cuda.empty_cache()
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out))
