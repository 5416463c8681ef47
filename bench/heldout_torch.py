"""torch.compile of the held-out programs' PyTorch expressions (bench/heldout/cases.py), one worker
of bench/heldout_check.py:

    python3 bench/heldout_torch.py OUT_JSON LOCK DEADLINE NAME [NAME ...]

Compiles each named case's expression with torch.compile (default mode) at its GPU sizes and runs
it once, writes OUT_JSON.compiled, waits for OUT_JSON.go (the rows tx timed, written when tx's
timings are over, so no compilation loads the machine while anything is timed), then times it (and, for attention, torch's SDPA on the same inputs: cases.SDPA) with
triton's do_bench (median, L2 flushed) while holding LOCK (flock), so
no two timings (tx's or another worker's) share the GPU. Cases still pending at DEADLINE (a Unix
time) are skipped. Writes {name: {"us": ..., "compile_s": ...} or {"error": ...}} to OUT_JSON
after every case (a killed run keeps what it has)."""
import fcntl
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "heldout"))
import cases as C  # noqa: E402

TD = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "i32": "int32", "bool": "bool"}


def t_input(torch, shape, dt, kind, dims):
    dev = "cuda"
    if kind == "lens":
        full = dims.get("L", dims.get("S"))
        return torch.randint(max(dims.get("T", 1), 1), full + 1, shape, device=dev, dtype=torch.int32)
    if kind in ("pos", "pos3"):  # pos3: the first of 3 new tokens
        return torch.randint(0, dims["L"] - (3 if kind == "pos3" else dims["T"]) + 1, shape, device=dev,
                             dtype=torch.int32)
    if kind == "labels":
        return torch.randint(0, dims["V"], shape, device=dev, dtype=torch.int32)
    if kind == "labels_ign":
        a = torch.randint(0, dims["V"], shape, device=dev, dtype=torch.int32)
        a[1::3] = -100
        return a
    if kind == "bool":
        return torch.rand(shape, device=dev) < 0.7
    if kind == "i8":  # int8 codes, stored as torch.int8 (1 byte; tx reads them as i32)
        return torch.randint(-128, 128, shape, device=dev, dtype=torch.int8)
    if kind == "lens1":
        return torch.randint(1, dims.get("L", dims.get("S")) + 1, shape, device=dev, dtype=torch.int32)
    if kind == "ids":
        a = torch.randint(0, 50, shape, device=dev, dtype=torch.int32)
        return a * (torch.arange(shape[-1], device=dev) < shape[-1] // 2 + (torch.arange(shape[0], device=dev)[:, None] % 2) * shape[-1])
    if kind in ("temp", "lr", "bc"):
        u = torch.rand(shape, device=dev)
        return {"temp": 0.5 + u, "lr": 1e-3 * (1 + u), "bc": 0.1 + 0.9 * u}[kind]
    if kind == "mel":
        return 10.0 ** (torch.rand(shape, device=dev) * 14 - 12)
    if kind == "hot":
        return ((9 + 3 * torch.rand(shape, device=dev)) * torch.where(torch.rand(shape, device=dev) < 0.2, -1, 1)).half()
    if kind == "special":
        u, x = torch.rand(shape, device=dev), torch.randn(shape, device=dev)
        return torch.where(u < 0.1, float("nan"), torch.where(u < 0.15, float("inf"), torch.where(u < 0.2, float("-inf"), x)))
    if kind == "unit":
        return torch.rand(shape, device=dev, dtype=getattr(torch, TD[dt]))
    x = torch.randn(shape, device=dev, dtype=torch.float32)
    x = x * (0.05 if kind == "small" else 6.0 if kind == "big" else shape[0] ** -0.5 if kind == "w" else 1.0)
    return x.to(getattr(torch, TD[dt]))


def main():
    out, lock, deadline, names = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    import torch
    import torch.nn.functional as tf
    from triton.testing import do_bench
    C.T, C.F = (lambda: torch), (lambda: tf)  # no import statement inside a traced function
    torch.manual_seed(0)
    torch._dynamo.config.cache_size_limit = 64
    res = {}
    by = {c["name"]: c for c in C.CASES}
    compiled = []
    for n in names:  # compile all first (CPU), then time each under the lock
        c = by[n]
        if time.time() > deadline:
            res[n] = {"error": "skipped: deadline"}
            continue
        try:
            d = c["gpu"]
            xs = [t_input(torch, C.shape_of(s, d), dt, k, d) for _, s, dt, k in c["inputs"]]
            cf = torch.compile(c["torch"])  # each case's function has its own code object
            xs.append(d)
            ts = time.time()
            cf(*xs)
            torch.cuda.synchronize()
            res[n] = {"compile_s": round(time.time() - ts, 2)}
            compiled.append((n, cf, xs))
        except Exception as e:
            res[n] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        json.dump(res, open(out, "w"), indent=1)
    open(out + ".compiled", "w").close()  # tells bench/heldout_check.py this worker is idle now
    go = out + ".go"  # written by heldout_check.py once tx's timings are done: the rows to time
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.1)
    timed = set(open(go).read().split()) if os.path.exists(go) else set()
    for n, cf, xs in compiled:
        if time.time() > deadline or n not in timed:
            res[n]["error"] = "skipped: deadline" if n in timed or not timed else "skipped: tx not timed"
            continue
        with open(lock, "w") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            try:
                res[n]["us"] = do_bench(lambda: cf(*xs), warmup=25, rep=100, return_mode="median") * 1e3
                sd = C.SDPA.get(n)  # torch's fused attention on the same inputs (eager)
                if sd:
                    res[n]["sdpa_us"] = do_bench(lambda: sd(*xs), warmup=25, rep=100, return_mode="median") * 1e3
            except Exception as e:
                res[n]["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            finally:
                fcntl.flock(lf, fcntl.LOCK_UN)
        json.dump(res, open(out, "w"), indent=1)
    json.dump(res, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
