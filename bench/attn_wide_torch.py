"""SDPA anchors for bench/attn_d256_check.sh, in the same run as tx's timings.

Usage: python3 bench/attn_wide_torch.py OUT.json
Median times (triton do_bench) in ms of torch.nn.functional.scaled_dot_product_attention (bf16,
the backend PyTorch picks): B4 H32 S4096 D128 (`sdpa_d128`, timed first and again last as
`sdpa_d128_end`: the clocks drift within a run), B8 H12 S1024 D64 (`sdpa_d64`), causal B4 H32 S4096
D128 (`sdpa_causal`), B4 H16 S2048 at D256 (`sdpa_d256`, causal
`sdpa_d256_causal`), D192 (`sdpa_d192`) and D160 (`sdpa_d160`). A failed anchor is recorded with
its error instead of a time."""
import json
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

dev = "cuda"
torch.manual_seed(0)
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}


def rnd(*shape):
    return torch.randn(*shape, device=dev, dtype=torch.bfloat16)


def timed(key, fn):
    try:
        fn()
        torch.cuda.synchronize()
        out[key] = round(do_bench(fn, warmup=10, rep=100, return_mode="median"), 4)
    except Exception as e:  # noqa: BLE001
        out[key + "_error"] = repr(e)[:200]


def sdpa(key, b, h, s, d, **kw):
    q, k, v = rnd(b, h, s, d), rnd(b, h, s, d), rnd(b, h, s, d)
    timed(key, lambda: F.scaled_dot_product_attention(q, k, v, **kw))
    del q, k, v
    torch.cuda.empty_cache()


sdpa("sdpa_d128", 4, 32, 4096, 128)
sdpa("sdpa_d64", 8, 12, 1024, 64)
sdpa("sdpa_causal", 4, 32, 4096, 128, is_causal=True)
sdpa("sdpa_d256", 4, 16, 2048, 256)
sdpa("sdpa_d192", 4, 16, 2048, 192)
sdpa("sdpa_d256_causal", 4, 16, 2048, 256, is_causal=True)
sdpa("sdpa_d160", 4, 16, 2048, 160)
sdpa("sdpa_d128_end", 4, 32, 4096, 128)
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out))
