"""PyTorch anchors for bench/decode_check.sh: SDPA on the decode shapes it times, and the copy.

Usage: python3 bench/decode_torch.py OUT.json
Per shape (the names decode_check.sh uses): SDPA of q [B, H, T, 128] against a full bf16 cache
[B, Hkv, L, 128] (enable_gqa where Hkv < H), median of triton's do_bench in ms, and the bytes of K
and V; then PyTorch's device copy of 4 GiB (read + write) in GB/s. A failed anchor is recorded with
its error instead of a time."""
import json
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

dev = "cuda"
SC = 0.08838834764831845
SHAPES = {  # name: B, H, Hkv, T, L
    "b1h32l8k": (1, 32, 32, 1, 8192),
    "b1h32l32k": (1, 32, 32, 1, 32768),
    "b8h32l32k": (8, 32, 32, 1, 32768),
    "gqa_b4l16k": (4, 32, 8, 1, 16384),
    "b2h32t4l32k": (2, 32, 32, 4, 32768),
}
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
torch.manual_seed(0)
for name, (b, h, hkv, t, l) in SHAPES.items():
    row = {"kv_bytes": 2 * b * hkv * l * 128 * 2}
    try:
        q = torch.randn(b, h, t, 128, device=dev, dtype=torch.bfloat16)
        k = torch.randn(b, hkv, l, 128, device=dev, dtype=torch.bfloat16)
        v = torch.randn_like(k)
        kw = {"enable_gqa": True} if hkv < h else {}
        fn = lambda: F.scaled_dot_product_attention(q, k, v, scale=SC, **kw)  # noqa: E731
        fn()
        torch.cuda.synchronize()
        row["sdpa_ms"] = round(do_bench(fn, warmup=5, rep=60, return_mode="median"), 5)
        del q, k, v
    except Exception as e:  # noqa: BLE001
        row["sdpa_error"] = repr(e)[:200]
    torch.cuda.empty_cache()
    out[name] = row
    print(name, json.dumps(row), flush=True)
x = torch.empty(1 << 30, dtype=torch.float32, device=dev)
y = torch.empty_like(x)
out["copy_GBps"] = round(2 * x.numel() * 4 / (do_bench(lambda: y.copy_(x), warmup=3, rep=40) * 1e6), 1)
json.dump(out, open(sys.argv[1], "w"), indent=1)
print("copy", out["copy_GBps"], "GB/s")
