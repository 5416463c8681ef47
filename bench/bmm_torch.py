"""cuBLAS (torch.matmul eager) and torch.compile of bench/bmm_check.py's cases (the PyTorch
expressions of bench/bmm/*.tx):

    python3 bench/bmm_torch.py OUT_JSON LOCK DEADLINE NAME:DIMS [NAME:DIMS ...]

Compiles each named case with torch.compile (default mode) at its GPU sizes, runs it once, then
times the eager expression (cuBLAS's batched GEMM, plus the epilogue's own kernels) and the
compiled one with triton's do_bench (median) while holding LOCK (fcntl), so no two timings share
the GPU. Cases still pending at DEADLINE (Unix time) are skipped. Writes {name: {"us": compiled,
"eager_us": eager} or {"error": ...}} to OUT_JSON after every case (a killed run keeps what it
has)."""
import fcntl
import json
import sys
import time

import torch
import torch.nn.functional as tf
from triton.testing import do_bench

bf, hf = torch.bfloat16, torch.float16
# name -> (inputs [(shape with dim names, dtype)], expression)
CASES = {
    "bmm_plain": ([("BMK", bf), ("BKN", bf)], lambda a, b: a @ b),
    "bmm_heads": ([(("B", 1, "M", "K"), bf), ((1, "H", "K", "N"), bf)], lambda a, b: a @ b),
    "qk_t": ([("BHSD", bf), ("BHSD", bf)], lambda q, k: (q @ k.transpose(2, 3)) * 0.125),
    "bmm_bias_gelu": ([("BMK", bf), ("BKN", bf), ("N", bf)], lambda a, b, c: tf.gelu(a @ b + c, approximate="tanh")),
    "bmm_at": ([("BKM", bf), ("BKN", bf), ("BMN", bf)], lambda a, b, r: a.transpose(1, 2) @ b + r),
    "bmm_bcast_a": ([("MK", hf), ("BKN", hf)], lambda a, b: (a @ b).float()),
    "pv_f16": ([("BHST", hf), ("BHTD", hf)], lambda p, v: p @ v),
}


def make(shape, dt, d):
    sh = [d[c] if isinstance(c, str) else c for c in shape]
    return (torch.randn(sh, device="cuda") * 0.5).to(dt)


def main():
    out, lock, deadline, args = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    torch.manual_seed(0)
    res, todo = {}, []
    for a in args:  # NAME:B=4,M=1024,...
        name, dims = a.split(":")
        d = {k: int(v) for k, v in (x.split("=") for x in dims.split(","))}
        if time.time() > deadline:
            res[name] = {"error": "skipped: deadline"}
            continue
        try:
            ins, fn = CASES[name]
            xs = [make(s, t, d) for s, t in ins]
            cf = torch.compile(fn)
            t0 = time.time()
            cf(*xs)
            torch.cuda.synchronize()
            res[name] = {"compile_s": round(time.time() - t0, 1)}
            todo.append((name, fn, cf, xs))
        except Exception as e:  # noqa: BLE001 (report, go on)
            res[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        json.dump(res, open(out, "w"))
    for name, fn, cf, xs in todo:
        if time.time() > deadline:
            res[name]["error"] = "skipped: deadline"
            continue
        with open(lock, "w") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            try:
                res[name]["eager_us"] = do_bench(lambda: fn(*xs), warmup=5, rep=25, return_mode="median") * 1e3
                res[name]["us"] = do_bench(lambda: cf(*xs), warmup=5, rep=25, return_mode="median") * 1e3
            except Exception as e:  # noqa: BLE001
                res[name]["error"] = f"{type(e).__name__}: {str(e)[:200]}"
            finally:
                fcntl.flock(lf, fcntl.LOCK_UN)
        json.dump(res, open(out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
