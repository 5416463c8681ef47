"""SDPA anchors for bench/fa3_check.sh, in the same run as tx's timings.

Usage: python3 bench/fa3_torch.py OUT.json [decode]   (decode: only the decode anchor)
Median times (triton do_bench) in ms of torch.nn.functional.scaled_dot_product_attention (bf16,
the backend PyTorch picks) at the shapes fa3_check.sh times tx at: B4 H32 S4096 D128, B8 H12 S1024
D64, causal B4 H32 S4096 D128 (is_causal), GQA 32 over 8 heads causal (enable_gqa), decode (one
query row, B8 H32, a 32768-key cache). A failed
anchor is recorded with its error instead of a time."""
import json, sys
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
    torch.cuda.empty_cache()


only_decode = len(sys.argv) > 2 and sys.argv[2] == "decode"
if not only_decode:
    q, k, v = rnd(4, 32, 4096, 128), rnd(4, 32, 4096, 128), rnd(4, 32, 4096, 128)
    timed("sdpa_d128", lambda: F.scaled_dot_product_attention(q, k, v))
    timed("sdpa_causal", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    kg, vg = rnd(4, 8, 4096, 128), rnd(4, 8, 4096, 128)
    timed("sdpa_gqa", lambda: F.scaled_dot_product_attention(q, kg, vg, is_causal=True, enable_gqa=True))
    del q, k, v, kg, vg
    q, k, v = rnd(8, 12, 1024, 64), rnd(8, 12, 1024, 64), rnd(8, 12, 1024, 64)
    timed("sdpa_d64", lambda: F.scaled_dot_product_attention(q, k, v))
    del q, k, v
q, k, v = rnd(8, 32, 1, 128), rnd(8, 32, 32768, 128), rnd(8, 32, 32768, 128)
timed("sdpa_decode", lambda: F.scaled_dot_product_attention(q, k, v))
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out))
