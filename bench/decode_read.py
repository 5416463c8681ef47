"""The bandwidth anchors of decode attention, for bench/decode_ab.sh: what SDPA reads the cache
at, against what the memory does for a copy and for a read alone, in one process.

Usage: python3 bench/decode_read.py OUT.json [--backends]
Writes, each a median of triton's do_bench (L2 cleared between runs):
  per shape (decode_check.sh's names: b8h32l32k, b1h32l32k, b1h32l8k, gqa_b4l16k, b2h32t4l32k):
  sdpa_ms of F.scaled_dot_product_attention as PyTorch picks its backend (enable_gqa for GQA)
  and kv_bytes (every position is read: no mask, full cache); with --backends, for B8 H32 L32768
  also sdpa_<backend>_ms for each backend forced (flash, efficient, cudnn; a refusal records its
  error);
  copy_GBps: PyTorch's device copy of 4 GiB (read + write bytes / time);
  read_GBps: a Triton kernel that reads 4 GiB once (one f32 sum per program: read bytes / time),
  the read-only ceiling decode can reach; read_torch_sum_GBps: torch's sum of the same 4 GiB."""
import json
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench

out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
dev = "cuda"
SC = 0.08838834764831845
SHAPES = {  # name: B, H, Hkv, T, L
    "b8h32l32k": (8, 32, 32, 1, 32768),
    "b1h32l32k": (1, 32, 32, 1, 32768),
    "b1h32l8k": (1, 32, 32, 1, 8192),
    "gqa_b4l16k": (4, 32, 8, 1, 16384),
    "b2h32t4l32k": (2, 32, 32, 4, 32768),
}
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
        if name == "b8h32l32k" and "--backends" in sys.argv:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            for bk in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
                key = "sdpa_%s_ms" % bk.split("_")[0].lower()
                try:
                    with sdpa_kernel(getattr(SDPBackend, bk)):
                        fn()
                        torch.cuda.synchronize()
                        row[key] = round(do_bench(fn, warmup=3, rep=40, return_mode="median"), 5)
                except Exception as e:  # noqa: BLE001
                    row[key + "_error"] = repr(e)[:160]
        del q, k, v
    except Exception as e:  # noqa: BLE001
        row["sdpa_error"] = repr(e)[:200]
    torch.cuda.empty_cache()
    out[name] = row
    print(name, json.dumps(row), flush=True)


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
for progs in (132 * 64,):
    n_per = x.numel() // progs // 4096 * 4096
    o = torch.empty(progs, device=dev, dtype=torch.float32)
    g = lambda: read_sum[(progs,)](x, o, n_per, BLOCK=4096, num_warps=8)  # noqa: E731
    g()
    torch.cuda.synchronize()
    ok = abs(float(o.double().sum()) - progs * n_per) < 1e-3 * progs * n_per
    gbps = round(progs * n_per * 2 / (do_bench(g, warmup=3, rep=40) * 1e6), 1)
    out["read_GBps_%d" % progs] = gbps if ok else None
    out["read_GBps"] = max(out.get("read_GBps") or 0, gbps if ok else 0)
# PyTorch's own read-only stream: a sum of the same 4 GiB (f32 accumulation)
ts = lambda: x.sum(dtype=torch.float32)  # noqa: E731
ok = abs(float(ts()) - x.numel()) < 1e-3 * x.numel()
out["read_torch_sum_GBps"] = round(x.numel() * 2 / (do_bench(ts, warmup=3, rep=40) * 1e6), 1) if ok else None
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out))
