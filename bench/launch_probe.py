#!/usr/bin/env python3
"""bench/launch_probe.py - what one tiny kernel costs as txc bench times it (queued behind a large
memset, between two CUDA events) against back-to-back launches, with PyTorch's own kernels on the
GPU machine: an empty kernel (torch.cuda._sleep(0)) and a one-element add. Prints medians in us."""
import statistics

import torch


def bracketed(fn, busy, n=30):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for i in range(n + 5):
        busy.zero_()
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        if i >= 5:
            ts.append(e0.elapsed_time(e1) * 1e3)
    return statistics.median(ts)


def back_to_back(fn, n=200):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    e0.record()
    for _ in range(n):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1e3 / n


def main():
    busy = torch.empty(16 << 20, dtype=torch.float32, device="cuda")  # 64 MiB
    one = torch.zeros(1, device="cuda")
    empty = lambda: torch.cuda._sleep(0)
    add = lambda: one.add_(1)
    print(f"launch_probe: empty kernel behind a 64 MiB memset {bracketed(empty, busy):.2f} us, "
          f"back to back {back_to_back(empty):.2f} us; one-element add behind the memset "
          f"{bracketed(add, busy):.2f} us, back to back {back_to_back(add):.2f} us")


if __name__ == "__main__":
    main()
