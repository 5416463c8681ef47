"""The bandwidth anchors of decode attention, for bench/decode_ab.sh: what SDPA reads the cache
at, against what the memory does for a copy and for a read alone.

Usage: python3 bench/decode_read.py OUT.json [B H L]   (default B8 H32 L32768, T = 1, D = 128)
Writes, each a median of triton's do_bench (L2 cleared between runs):
  sdpa_ms: F.scaled_dot_product_attention as PyTorch picks its backend; sdpa_<backend>_ms for
  each backend forced (flash, efficient, cudnn; a backend that refuses records its error);
  kv_bytes: the bytes of K and V (every position is read: no mask, full cache);
  copy_GBps: PyTorch's device copy of 4 GiB (read + write bytes / time);
  read_GBps: a Triton kernel that reads 4 GiB once (one f32 sum per program: read bytes / time),
  the read-only ceiling decode can reach."""
import json
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench

out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
b, h, l = (int(x) for x in sys.argv[2:5]) if len(sys.argv) >= 5 else (8, 32, 32768)
dev = "cuda"
q = torch.randn(b, h, 1, 128, device=dev, dtype=torch.bfloat16)
k = torch.randn(b, h, l, 128, device=dev, dtype=torch.bfloat16)
v = torch.randn_like(k)
out["kv_bytes"] = 2 * k.numel() * 2
fn = lambda: F.scaled_dot_product_attention(q, k, v, scale=0.08838834764831845)  # noqa: E731
fn()
torch.cuda.synchronize()
out["sdpa_ms"] = round(do_bench(fn, warmup=5, rep=60, return_mode="median"), 5)
print("sdpa", out["sdpa_ms"], flush=True)
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
    key = "sdpa_%s_ms" % name.split("_")[0].lower()
    try:
        with sdpa_kernel(getattr(SDPBackend, name)):
            fn()
            torch.cuda.synchronize()
            out[key] = round(do_bench(fn, warmup=3, rep=40, return_mode="median"), 5)
    except Exception as e:  # noqa: BLE001
        out[key + "_error"] = repr(e)[:160]
    print(key, out.get(key), flush=True)
del q, k, v
torch.cuda.empty_cache()


@triton.jit
def read_sum(x_ptr, o_ptr, n_per: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = x_ptr + pid.to(tl.int64) * n_per
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n_per, BLOCK):
        acc += tl.load(base + i + tl.arange(0, BLOCK)).to(tl.float32)
    tl.store(o_ptr + pid, tl.sum(acc))


x = torch.ones(1 << 31, dtype=torch.bfloat16, device=dev)  # 4 GiB
y = torch.empty_like(x)
out["copy_GBps"] = round(2 * x.numel() * 2 / (do_bench(lambda: y.copy_(x), warmup=3, rep=40) * 1e6), 1)
del y
for progs in (132 * 16, 132 * 64):
    n_per = x.numel() // progs // 4096 * 4096
    o = torch.empty(progs, device=dev, dtype=torch.float32)
    g = lambda: read_sum[(progs,)](x, o, n_per, BLOCK=4096, num_warps=8)  # noqa: E731
    g()
    torch.cuda.synchronize()
    ok = abs(float(o.double().sum()) - progs * n_per) < 1e-3 * progs * n_per
    gbps = round(progs * n_per * 2 / (do_bench(g, warmup=3, rep=40) * 1e6), 1)
    out["read_GBps_%d" % progs] = gbps if ok else None
    out["read_GBps"] = max(out.get("read_GBps") or 0, gbps if ok else 0)
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out))
