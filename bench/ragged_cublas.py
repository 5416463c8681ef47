#!/usr/bin/env python3
"""bench/ragged_cublas.py - cuBLAS (torch.matmul, bf16) beside bench/ragged_prof.sh's tx rows.
  python3 bench/ragged_cublas.py time MxNxK ...   CUDA-event times (L2 flushed), one line a shape
  python3 bench/ragged_cublas.py once MxNxK       one x @ w launch, for ncu"""
import sys

import torch

from checklib import cuda_time


def mats(s):
    M, N, K = (int(v) for v in s.split("x"))
    g = torch.Generator(device="cuda").manual_seed(1)
    u = lambda *d: (torch.rand(*d, generator=g, device="cuda") * 2 - 1).to(torch.bfloat16)  # noqa: E731
    return u(M, K), u(K, N)


if sys.argv[1] == "once":
    x, w = mats(sys.argv[2])
    torch.cuda.synchronize()
    y = x @ w
    torch.cuda.synchronize()
else:
    for s in sys.argv[2:]:
        x, w = mats(s)
        print("cublas %-16s %8.2f us" % (s, cuda_time(lambda: x @ w, iters=30)), flush=True)
