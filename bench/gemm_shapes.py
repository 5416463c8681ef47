#!/usr/bin/env python3
"""bench/gemm_shapes.py - held-out GEMM shapes on the sm_90a wgmma kernel: the tile, split-K and
stages the cost model picks from the shape (matmul.wgmma), tx against torch (cuBLAS) in the same
run, outputs verified, and `txc tune` (the model's choice and its best runners-up, each timed)
on as many rows as the time allows. Run from the repository root on the GPU machine with dist/
built by tools/make-dist.sh (normally through bench/gemm_shapes.sh).

Per row (most important first, a deadline keeps the whole under GEMM_DEADLINE seconds):
  1. txc FILE --target=sm_90a: the kernel's template (tile, stages, split-K) from the manifest
  2. txc bench --device=gpu --json: the kernel's time (median, L2 flushed), verified against the
     reference, and the model's prediction (untuned, no calibration file)
  3. torch: the same function eagerly (cuBLAS GEMMs plus PyTorch's pointwise kernels) and the
     GEMM(s) alone, CUDA events, L2 flushed
  4. txc tune: every candidate's predicted and measured time (the model's choice first)
Files in $OUT: gemm_shapes.txt (the table and summary), gemm_shapes.json, gemm_shapes.log."""
import json, math, os, re, subprocess, sys, tempfile, time

from checklib import cuda_time

OUT = os.environ.get("OUT") or "gemm-shapes-out"
TXC = os.environ.get("TXC", "dist/bin/txc")
DEADLINE = float(os.environ.get("GEMM_DEADLINE", 62))
T0 = time.time()
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "gemm_shapes.log"), "w")
WORK = tempfile.mkdtemp(prefix="gemm-shapes-")

PROGS = {
    "xw": "fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n",
    "linres": "fn f(x: bf16[M, K], w: bf16[N, K], r: bf16[M, N]) -> bf16[M, N] {\n"
              "  return x @ transpose(w, 0, 1) + r\n}\n",
    "silu": "fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] {\n  return silu(a @ b)\n}\n",
    "swiglu": "fn f(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N]) -> bf16[M, N] {\n"
              "  return silu(x @ w1) * (x @ w3)\n}\n",
    "qkv": "fn f(x: bf16[M, K], wq: bf16[N, K], wk: bf16[N, K], wv: bf16[N, K]) -> "
           "(bf16[M, N], bf16[M, N], bf16[M, N]) {\n"
           "  return x @ transpose(wq, 0, 1), x @ transpose(wk, 0, 1), x @ transpose(wv, 0, 1)\n}\n",
}
PROGS["xwh"] = PROGS["xw"].replace("bf16", "f16")
PROGS["gelu"] = ("fn f(x: bf16[M, K], w: bf16[K, N], b: bf16[N]) -> bf16[M, N] {\n"
                 "  return gelu_tanh(x @ w + b)\n}\n")
PROGS["linresh"] = PROGS["linres"].replace("bf16", "f16")
NPROD = {"swiglu": 2, "qkv": 3}
# operands whose row pitch is not a multiple of 16 bytes ([matmul.wgmma.stage]: staged copies);
# GEMM_ROWS=odd runs only these
ODD = [
    ("xw", 2500, 1500, 2500),
    ("xw", 4096, 1500, 4096),
    ("gelu", 2000, 3001, 1024),
    ("xwh", 1024, 999, 2048),
    ("linres", 1000, 4096, 1001),
    ("linresh", 2048, 2048, 4099),
    ("xw", 16, 999, 4096),
    ("xwh", 16, 3001, 4096),
    ("linres", 16, 4096, 1001),
    ("swiglu", 777, 1500, 1000),
]
# (program, M, N, K): output M x N, inner K
ROWS = [
    ("xw", 2000, 1000, 3000),
    ("silu", 4000, 11000, 4096),
    # held out of the model's fit (bench/results/2026-12-01-h200-gemm2 run 1 fitted it)
    ("xw", 2500, 1500, 2500),
    ("xw", 1000, 1000, 1000),
    ("linres", 64, 4096, 4096),
    ("xw", 300, 5000, 3000),
    ("silu", 8192, 2048, 1536),
    ("swiglu", 2048, 5632, 2048),
    ("qkv", 2048, 4096, 4096),
    ("xw", 16, 1024, 4096),
    ("linres", 8192, 4096, 11008),
    ("swiglu", 777, 3000, 1000),
    ("xw", 6144, 6144, 1000),
    # run 1's rows
    ("xw", 3000, 2000, 5000),
    ("xw", 1536, 1536, 1536),
    ("linres", 777, 4096, 11008),
    ("xw", 8, 4096, 4096),
    ("linres", 32, 11008, 4096),
    ("xw", 48, 4096, 11008),
    ("swiglu", 1000, 2816, 1024),
    ("qkv", 1000, 1024, 1024),
    ("xw", 2048, 1024, 3072),
    ("swiglu", 48, 11008, 4096),
    ("xw", 1024, 4096, 4096),
    ("xw", 4096, 4096, 4096),
    ("qkv", 3000, 1024, 1000),
] + [r for r in ODD if r != ("xw", 2500, 1500, 2500)]
# products of at most 64 rows with an odd-pitch operand ([matmul.skinny]: read in place, no
# staging copy); GEMM_ROWS=skinny runs these, GEMM_ROWS=pitch these and then the rest of ODD
SKINNY = [
    ("xw", 16, 999, 4096),
    ("xwh", 16, 3001, 4096),
    ("linres", 16, 4096, 1001),
    ("xw", 1, 999, 4096),
    ("linresh", 7, 4096, 1001),
    ("xw", 33, 3001, 2048),
    ("linres", 64, 4096, 1001),
    ("swiglu", 16, 2753, 4096),
    ("xw", 16, 11001, 4096),
    ("xwh", 64, 999, 1001),
]
# under-filled grids and ragged tiles, the worst rows of the last run first (GEMM_ROWS=ragged,
# bench/gemm_ragged.sh): where a 128x192 tile fills more SMs than 128x256 / 128x128
RAGGED = [
    ("linres", 32, 11008, 4096),
    ("xw", 7, 11008, 4096),
    ("xw", 16, 1024, 4096),
    ("xw", 256, 4096, 4096),
    ("xw", 1536, 1536, 1536),
    ("xw", 300, 5000, 3000),
    ("xw", 100, 4096, 4096),
    ("linres", 300, 5000, 3000),
    ("swiglu", 48, 11008, 4096),
    ("xw", 1000, 1000, 1000),
    ("silu", 8192, 2048, 1536),
    ("xw", 3000, 2000, 5000),
    ("xw", 2000, 1000, 3000),
    ("xw", 48, 4096, 11008),
]
if ":" in os.environ.get("GEMM_ROWS", ""):  # PROG:MxNxK,... (bench/gemm_ragged.sh)
    ROWS = [(q.split(":")[0],) + tuple(int(v) for v in q.split(":")[1].split("x"))
            for q in os.environ["GEMM_ROWS"].split(",")]
elif os.environ.get("GEMM_ROWS") == "ragged":
    ROWS = RAGGED
elif os.environ.get("GEMM_ROWS") == "odd":
    ROWS = ODD
elif os.environ.get("GEMM_ROWS") == "skinny":
    ROWS = SKINNY
elif os.environ.get("GEMM_ROWS") == "pitch":
    ROWS = SKINNY + [r for r in ODD if r not in SKINNY]
TUNE = os.environ.get("GEMM_TUNE", "1") != "0"


def log(s):
    print(s, file=LOG, flush=True)


def run(cmd, timeout=60):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, so, se = 124, "", "timed out after %d s" % timeout
    log("$ %s\n(rc %d, %.1f s)\n%s%s" % (" ".join(cmd), rc, time.time() - t, so[-6000:], se[-3000:]))
    return rc, so, se


def name_of(r):
    return "%s_%dx%dx%d" % r


def prog_file(prog):
    p = os.path.join(WORK, prog + ".tx")
    if not os.path.exists(p):
        open(p, "w").write(PROGS[prog])
    return p


def dims(M, N, K):
    return ["-D", "M=%d" % M, "-D", "N=%d" % N, "-D", "K=%d" % K]


def template(row):
    prog, M, N, K = row
    ptx = os.path.join(WORK, name_of(row) + ".ptx")
    rc, _, err = run([TXC, prog_file(prog), "--target=sm_90a", "-o", ptx] + dims(M, N, K))
    if rc:
        return "compile failed: " + (err.strip().splitlines() or ["rc %d" % rc])[-1][:120]
    man = json.load(open(ptx + ".json"))
    return "; ".join(k.get("template") or "mma.sync" for k in man["kernels"] if k["region"] >= 0)


def tx_bench(row):
    prog, M, N, K = row
    rc, so, se = run([TXC, "bench", prog_file(prog), "--device=gpu", "--random-inputs=1", "--iters",
                      "20", "--json", "--no-tune-cache"] + dims(M, N, K), timeout=90)
    try:
        j = json.loads(so[so.index("{"):])
        fu = j["fused"]
        ks = [k for k in fu.get("kernels", []) if k.get("kind") == "matmul"] or fu.get("kernels", [])
        # every kernel of a region carries the region's prediction (staging kernels and the GEMM)
        pred = {k.get("region"): k["predicted_us"] for k in ks}
        return {"us": sum(k["us"] for k in ks), "pred_us": sum(pred.values()),
                "kernel_us": [[k.get("name", ""), k["us"]] for k in ks],
                "graph_us": fu["graph_us"], "verified": bool(fu.get("verified"))}
    except (ValueError, KeyError, TypeError):
        return {"error": "txc bench rc %d: %s" % (rc, (se.strip().splitlines() or ["no output"])[-1][:160])}


CAND = re.compile(r"^\s+(\*?)\s*(matmul\.(?:wgmma|skinny)\([^)]*\))\s+predicted\s+([\d.]+) us\s+measured\s+([\d.]+ us|failed)")


def tx_tune(row):
    prog, M, N, K = row
    cache = os.path.join(WORK, "tune_%s.json" % name_of(row))
    rc, so, se = run([TXC, "tune", prog_file(prog), "--tune-cache=" + cache, "--iters", "10"] + dims(M, N, K),
                     timeout=60)
    cands = []
    for line in so.splitlines():
        m = CAND.match(line)
        if m:
            meas = None if m.group(4) == "failed" else float(m.group(4).split()[0])
            cands.append({"schedule": m.group(2), "kept": m.group(1) == "*", "predicted_us": float(m.group(3)),
                          "measured_us": meas})
    return {"rc": rc, "candidates": cands, "note": " ".join(l for l in so.splitlines() if l.startswith("note"))[:300]}


def torch_times(row):
    import torch
    prog, M, N, K = row
    dt = torch.float16 if prog in ("xwh", "linresh") else torch.bfloat16
    prog = {"xwh": "xw", "linresh": "linres"}.get(prog, prog)
    g = torch.Generator(device="cuda").manual_seed(1)
    u = lambda *s: (torch.rand(*s, generator=g, device="cuda") * 2 - 1).to(dt)  # noqa: E731
    F = torch.nn.functional
    if prog in ("xw", "silu"):
        x, w = u(M, K), u(K, N)
        mm = lambda: x @ w  # noqa: E731
        full = (lambda: x @ w) if prog == "xw" else (lambda: F.silu(x @ w))
    elif prog == "gelu":
        x, w, b = u(M, K), u(K, N), u(N)
        mm = lambda: x @ w  # noqa: E731
        full = lambda: F.gelu(x @ w + b, approximate="tanh")  # noqa: E731
    elif prog == "linres":
        x, w, r = u(M, K), u(N, K), u(M, N)
        mm = lambda: F.linear(x, w)  # noqa: E731
        full = lambda: F.linear(x, w) + r  # noqa: E731
    elif prog == "swiglu":
        x, w1, w3 = u(M, K), u(K, N), u(K, N)
        mm = lambda: (x @ w1, x @ w3)  # noqa: E731
        full = lambda: F.silu(x @ w1) * (x @ w3)  # noqa: E731
    else:
        x, ws = u(M, K), [u(N, K) for _ in range(3)]
        mm = lambda: [F.linear(x, w) for w in ws]  # noqa: E731
        full = mm
    return {"cublas_us": cuda_time(mm), "eager_us": cuda_time(full)}


def main():
    try:
        import torch
        have_torch = torch.cuda.is_available()
        gpu = torch.cuda.get_device_name() if have_torch else "no CUDA device for torch"
    except Exception as e:  # noqa: BLE001
        have_torch, gpu = False, "no torch: %s" % e
    print("gemm_shapes: %s; txc %s" % (gpu, TXC), flush=True)
    res = []
    for row in ROWS:
        if time.time() - T0 > DEADLINE:
            log("deadline: %s and later rows not run" % name_of(row))
            break
        r = {"row": name_of(row), "prog": row[0], "M": row[1], "N": row[2], "K": row[3]}
        r["template"] = template(row)
        r.update(tx_bench(row))
        if have_torch:
            try:
                r.update(torch_times(row))
            except Exception as e:  # noqa: BLE001
                r["torch_error"] = str(e)[:160]
        if TUNE and time.time() - T0 < DEADLINE - 8:
            r["tune"] = tx_tune(row)
        res.append(r)
        us, cb = r.get("us"), r.get("cublas_us")
        print("%-26s %-38s tx %8s us  cuBLAS %8s us  %s  pred %8s us%s" % (
            r["row"], r["template"][:38], "%.1f" % us if us else "-", "%.1f" % cb if cb else "-",
            "%.2fx" % (cb / us) if us and cb else "   - ", "%.1f" % r["pred_us"] if us else "-",
            "" if r.get("verified") else "  NOT VERIFIED " + r.get("error", "")), flush=True)
        json.dump(res, open(os.path.join(OUT, "gemm_shapes.json"), "w"), indent=1)
    lines = ["| row (M x N x K) | tile (model) | tx us | cuBLAS us | cuBLAS/tx | eager us | predicted us | model err | verified | tuned: kept, measured (model's measured) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    errs, ratios = [], []
    for r in res:
        us, cb, pr = r.get("us"), r.get("cublas_us"), r.get("pred_us")
        err = (pr - us) / us if us and pr else None
        if err is not None:
            errs.append(err)
        if us and cb:
            ratios.append(cb / us)
        tn = ""
        cs = (r.get("tune") or {}).get("candidates") or []
        if cs:
            kept = next((c for c in cs if c["kept"]), cs[0])
            tn = "%s %s (%s)" % (kept["schedule"].replace("matmul.wgmma", ""),
                                 "%.1f" % kept["measured_us"] if kept["measured_us"] else "failed",
                                 "%.1f" % cs[0]["measured_us"] if cs[0]["measured_us"] else "failed")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["row"], r["template"], "%.1f" % us if us else "-", "%.1f" % cb if cb else "-",
            "%.2fx" % (cb / us) if us and cb else "-", "%.1f" % r["eager_us"] if r.get("eager_us") else "-",
            "%.1f" % pr if pr else "-", "%+.0f%%" % (100 * err) if err is not None else "-",
            "yes" if r.get("verified") else "NO", tn))
    # every tuned candidate: predicted against measured (the model's calibration data)
    lines.append("")
    lines.append("tune candidates (predicted -> measured us):")
    for r in res:
        for c in (r.get("tune") or {}).get("candidates") or []:
            lines.append("  %-26s %-52s %9.1f -> %s" % (r["row"], c["schedule"], c["predicted_us"],
                                                       "%.1f" % c["measured_us"] if c["measured_us"] else "failed"))
    staged = [r for r in res if len(r.get("kernel_us") or []) > 1]
    if staged:
        lines.append("")
        lines.append("kernels of the rows with staged operands ([matmul.wgmma.stage], us):")
        for r in staged:
            lines.append("  %-26s %s" % (r["row"], ", ".join("%s %.1f" % (n.split("_", 1)[-1], u)
                                                           for n, u in r["kernel_us"])))
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else 0
    within = sum(1 for e in errs if abs(e) <= 0.25)
    unver = [r["row"] for r in res if not r.get("verified")]
    lines.append("")
    lines.append("summary: %d rows in %.0f s; cuBLAS/tx geomean %.2fx, worst %s; model within 25%% on %d of %d "
                 "(worst %s); unverified: %s" % (
                     len(res), time.time() - T0, geo,
                     "%.2fx" % min(ratios) if ratios else "-", within, len(errs),
                     "%+.0f%%" % (100 * max(errs, key=abs)) if errs else "-", ", ".join(unver) or "none"))
    text = "\n".join(lines)
    open(os.path.join(OUT, "gemm_shapes.txt"), "w").write(text + "\n")
    print(text, flush=True)
    return 0 if not unver else 1


if __name__ == "__main__":
    sys.exit(main())
