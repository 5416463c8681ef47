#!/usr/bin/env python3
"""bench/xfer_probe.py - host<->device copy rates that `txc bench` pays per plan (issue 15 row S):
pageable memory fresh (pages not yet faulted in) and touched, registered (cuMemHostRegister, with
the cost of registering) and allocated pinned (cuMemAllocHost). Talks to libcuda through ctypes
(no torch), on SIZE_MB (default 1024) MiB. Prints one line per measurement and the transparent huge
page setting. Run on the GPU machine: python3 bench/xfer_probe.py [SIZE_MB]"""
import ctypes
import sys
import time

import numpy as np


def main():
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    n = mb << 20
    try:
        thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    except OSError as e:
        thp = "unknown (%s)" % e
    print("xfer_probe: %d MiB; transparent_hugepage: %s" % (mb, thp))
    cu = ctypes.CDLL("libcuda.so.1")

    def ck(r, what):
        if r != 0:
            raise SystemExit("xfer_probe: %s failed with CUresult %d" % (what, r))

    ck(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    d = ctypes.c_uint64()
    t = time.perf_counter()
    ck(cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(n)), "cuMemAlloc")
    print("  cuMemAlloc            %7.3f s" % (time.perf_counter() - t))

    def h2d(ptr, what):
        t = time.perf_counter()
        ck(cu.cuMemcpyHtoD_v2(d, ctypes.c_void_p(ptr), ctypes.c_size_t(n)), what)
        s = time.perf_counter() - t
        print("  %-22s %6.3f s  %6.1f GB/s" % (what, s, n / s / 1e9))

    def d2h(ptr, what):
        t = time.perf_counter()
        ck(cu.cuMemcpyDtoH_v2(ctypes.c_void_p(ptr), d, ctypes.c_size_t(n)), what)
        s = time.perf_counter() - t
        print("  %-22s %6.3f s  %6.1f GB/s" % (what, s, n / s / 1e9))

    touched = np.ones(n, dtype=np.uint8)
    h2d(touched.ctypes.data, "H2D pageable touched")
    fresh = np.empty(n, dtype=np.uint8)
    d2h(fresh.ctypes.data, "D2H pageable fresh")
    d2h(fresh.ctypes.data, "D2H pageable touched")
    t = time.perf_counter()
    z = np.zeros(n, dtype=np.uint8)
    z[::4096] = 1
    print("  %-22s %6.3f s" % ("fault 1 GiB, 1 thread", time.perf_counter() - t))
    del z
    t = time.perf_counter()
    r = cu.cuMemHostRegister_v2(ctypes.c_void_p(touched.ctypes.data), ctypes.c_size_t(n), 0)
    s = time.perf_counter() - t
    if r == 0:
        print("  %-22s %6.3f s" % ("cuMemHostRegister", s))
        h2d(touched.ctypes.data, "H2D registered")
        d2h(touched.ctypes.data, "D2H registered")
        t = time.perf_counter()
        cu.cuMemHostUnregister(ctypes.c_void_p(touched.ctypes.data))
        print("  %-22s %6.3f s" % ("cuMemHostUnregister", time.perf_counter() - t))
    else:
        print("  cuMemHostRegister failed: CUresult %d" % r)
    hp = ctypes.c_void_p()
    t = time.perf_counter()
    r = cu.cuMemAllocHost_v2(ctypes.byref(hp), ctypes.c_size_t(n))
    s = time.perf_counter() - t
    if r == 0:
        print("  %-22s %6.3f s" % ("cuMemAllocHost", s))
        d2h(hp.value, "D2H pinned")
        h2d(hp.value, "H2D pinned")
        cu.cuMemFreeHost(hp)
    else:
        print("  cuMemAllocHost failed: CUresult %d" % r)
    cu.cuMemFree_v2(d)


if __name__ == "__main__":
    main()
