"""torch.compile of bench/bmm3d_check.py's cases (the PyTorch expressions of bench/bmm3d/*.tx):

    python3 bench/bmm3d_torch.py OUT_JSON LOCK DEADLINE NAME [NAME ...]

Compiles each named case with torch.compile (default mode) at its GPU sizes, runs it once, then
times it with triton's do_bench (median) while holding LOCK (fcntl), so no two timings share the
GPU. Cases still pending at DEADLINE (Unix time) are skipped. Writes {name: {"us": ...} or
{"error": ...}} to OUT_JSON after every case (a killed run keeps what it has)."""
import fcntl
import json
import sys
import time

import torch
import torch.nn.functional as tf
from triton.testing import do_bench


def t_block(x, n1, wq, wk, wv, wo, n2, wg, wu, wd, d):
    b, s = d["B"], d["S"]
    h = tf.rms_norm(x.float(), (2048,), n1.float(), 1e-5).to(x.dtype)
    q, k, v = ((h @ w).view(b, s, 16, 128).transpose(1, 2) for w in (wq, wk, wv))
    o = tf.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + o.transpose(1, 2).reshape(b, s, 2048) @ wo
    g = tf.rms_norm(x.float(), (2048,), n2.float(), 1e-5).to(x.dtype)
    return x + (tf.silu(g @ wg) * (g @ wu)) @ wd


# name -> (inputs [(shape with dim names, kind)], expression); every input bf16
CASES = {
    "mlp_3d": ([("BSD", "n"), ("DF", "w"), ("F", "n"), ("FD", "w"), ("D", "n")],
               lambda x, w1, b1, w2, b2, d: x + (tf.gelu(x @ w1 + b1) @ w2 + b2)),
    "block_bsd": ([(("B", "S", 2048), "n"), ((2048,), "n")] + [((2048, 2048), "w")] * 4 +
                  [((2048,), "n"), ((2048, 5632), "w"), ((2048, 5632), "w"), ((5632, 2048), "w")], t_block),
    "linear_3d": ([("BSK", "n"), ("NK", "w"), ("N", "n"), ("BSN", "n")],
                  lambda x, w, b, r, d: tf.linear(x, w, b) + r),
    "heads_proj": ([("BHSD", "n"), ("DE", "w")], lambda x, w, d: tf.gelu(x @ w, approximate="tanh")),
    "swiglu_3d": ([("BSD", "n"), ("DF", "w"), ("DF", "w")], lambda x, wg, wu, d: tf.silu(x @ wg) * (x @ wu)),
}


def make(shape, kind, d):
    sh = [d[c] if isinstance(c, str) else c for c in shape]
    x = torch.randn(sh, device="cuda")
    if kind == "w":
        x = x * sh[0] ** -0.5
    return x.to(torch.bfloat16)


def main():
    out, lock, deadline, args = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    torch.manual_seed(0)
    res, todo = {}, []
    for a in args:  # NAME:B=4,S=1024,...
        name, dims = a.split(":")
        d = {k: int(v) for k, v in (x.split("=") for x in dims.split(","))}
        if time.time() > deadline:
            res[name] = {"error": "skipped: deadline"}
            continue
        try:
            ins, fn = CASES[name]
            xs = [make(s, k, d) for s, k in ins] + [d]
            cf = torch.compile(fn)
            t0 = time.time()
            cf(*xs)
            torch.cuda.synchronize()
            res[name] = {"compile_s": round(time.time() - t0, 1)}
            todo.append((name, cf, xs))
        except Exception as e:  # noqa: BLE001 (report, go on)
            res[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        json.dump(res, open(out, "w"))
    for name, cf, xs in todo:
        if time.time() > deadline:
            res[name]["error"] = "skipped: deadline"
            continue
        with open(lock, "w") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            try:
                res[name]["us"] = do_bench(lambda: cf(*xs), warmup=5, rep=30, return_mode="median") * 1e3
            except Exception as e:  # noqa: BLE001
                res[name]["error"] = f"{type(e).__name__}: {str(e)[:200]}"
            finally:
                fcntl.flock(lf, fcntl.LOCK_UN)
        json.dump(res, open(out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
