"""Exact-f32 GEMMs on the SIMT kernel (matmul.simt) against cuBLAS SGEMM (torch.mm with
allow_tf32=False) in the same run: run by bench/sgemm_check.sh from the repository root with
dist/.

    python3 bench/sgemm_check.py [--budget S]

Within BUDGET seconds (default 34), most important first:
  1. cuBLAS timed (CUDA events, allow_tf32 False) for each case's product;
  2. full verification (`--iters 1`) at ragged sizes: split-K ([matmul.simt.splitk]: K >> M, N,
     both operand orders, a batch), bf16 products of K = 1, 3, 7, 13 ([matmul.simt.small_k]), the
     unsplit kernel's masks;
  3. `txc bench --device=gpu --json` of each case at its GPU size: verified against the host
     (sampled where outputs are large), timed, the plan's schedule and the model's prediction.
Prints a table (tx us, cuBLAS us, cuBLAS/tx: > 1 tx faster, TFLOP/s, verified, schedule,
measured / predicted us) and a summary line last. Files under $OUT: sgemm.md, sgemm.json,
log.txt."""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "sgemm-out")
TXC = os.environ.get("TXC", "dist/bin/txc")


def P(n):
    for d in ("sgemm", "heldout"):
        p = os.path.join(HERE, d, n + ".tx")
        if os.path.exists(p):
            return p
    return n


# name, sizes, the cuBLAS product: (batch, M, K, N, a transposed, b transposed); the held-out rows'
# torch.compile times of the last session's table are printed beside them
CASES = [
    ("mm", dict(M=512, K=8192, N=512), (1, 512, 8192, 512, False, False)),
    ("mm", dict(M=256, K=16384, N=256), (1, 256, 16384, 256, False, False)),
    ("mm", dict(M=4096, K=4096, N=4096), (1, 4096, 4096, 4096, False, False)),
    ("mm_nt", dict(M=3000, K=1000, N=2999), (1, 3000, 1000, 2999, False, True)),
    ("mm_tn", dict(M=1536, K=4096, N=1536), (1, 1536, 4096, 1536, True, False)),
    ("bmm", dict(B=32, M=256, K=512, N=256), (32, 256, 512, 256, False, False)),
    ("mm", dict(M=2048, K=2048, N=2048), (1, 2048, 2048, 2048, False, False)),
    ("mm_nt", dict(M=384, K=6144, N=384), (1, 384, 6144, 384, False, True)),
    ("bmm_broadcast", dict(B=16, T=256, K=1024, N=1024), (1, 4096, 1024, 1024, False, False)),
    ("f32_gemm_small", dict(M=64, K=256, N=64), (1, 64, 256, 64, False, False)),
]
# then txc tune of TUNE with the time left
TC_PREV = {"bmm_broadcast": 184.6, "mixed_gemm": 370.0, "l2norm_sim": 113.2, "f32_gemm_small": 15.9}
TUNE = [("mm", dict(M=512, K=8192, N=512))]
# split-K ([matmul.simt.splitk]) and small-K ([matmul.simt.small_k]) kernels first, then the
# unsplit kernel's masks
RAGGED = [
    ("mm", dict(M=300, K=5000, N=200)),
    ("mm", dict(M=33, K=2049, N=65)),
    ("mm_nt", dict(M=257, K=3001, N=130)),
    ("mm_tn", dict(M=100, K=2000, N=300)),
    ("bmm", dict(B=2, M=70, K=3000, N=33)),
    ("small_k", dict(M=300, K=1, N=257)),
    ("small_k", dict(M=130, K=3, N=77)),
    ("prime_gemm_k7", dict(M=1000, N=999)),
    ("small_k", dict(M=257, K=13, N=130)),
    ("mm", dict(M=257, K=300, N=391)),
    ("mm_tn", dict(M=100, K=77, N=250)),
]


def dargs(d):
    return [x for k, v in d.items() for x in ("-D", f"{k}={v}")]


def sched(name, dims, wd):
    r = subprocess.run([TXC, P(name), "--target=sm_90a", "--explain", "-o", os.path.join(wd, "x.ptx")] + dargs(dims),
                       capture_output=True, text=True)
    return [ln.strip()[:150] for ln in (r.stdout + r.stderr).splitlines() if "[matmul." in ln][:2]


def bench(name, dims, iters, extra, lf):
    cmd = [TXC, "bench", P(name), "--device=gpu", "--random-inputs=1", "--iters", str(iters), "--json"] + extra + dargs(dims)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=40)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, so, se = 124, "", "timed out"
    if se.strip():
        print(f"--- {name} {dims} rc {rc}\n{se.strip()[-1200:]}", file=lf, flush=True)
    try:
        return json.loads(so[so.index("{"):])["fused"], None
    except (ValueError, KeyError):
        return None, f"rc {rc}: " + ((se.strip().splitlines() or ["no output"])[-1][:160])


def cublas(cases, end, lf):
    out = {}
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        for i, (n, d, (B, M, K, N, ta, tb)) in enumerate(cases):
            if time.time() > end:
                break
            a = torch.randn((B, K, M) if ta else (B, M, K), device="cuda").transpose(1, 2) if ta else \
                torch.randn((B, M, K), device="cuda")
            b = torch.randn((B, N, K), device="cuda").transpose(1, 2) if tb else torch.randn((B, K, N), device="cuda")
            f = (lambda: torch.bmm(a, b)) if B > 1 else (lambda: torch.mm(a[0], b[0]))
            for _ in range(3):
                f()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            it = 20
            e0.record()
            for _ in range(it):
                f()
            e1.record()
            torch.cuda.synchronize()
            out[i] = e0.elapsed_time(e1) * 1e3 / it
            del a, b
    except Exception as e:  # noqa: BLE001
        print(f"cuBLAS timing failed: {e}", file=lf, flush=True)
    return out


def main():
    budget = 34.0
    if sys.argv[1:2] == ["--budget"]:
        budget = float(sys.argv[2])
    t0 = time.time()
    end = t0 + budget
    os.makedirs(OUT, exist_ok=True)
    wd = tempfile.mkdtemp(prefix="tx-sgemm-")
    lf = open(os.path.join(OUT, "log.txt"), "w")
    cb = cublas(CASES, t0 + 0.25 * budget, lf)
    print(f"cuBLAS us: {cb}", file=lf, flush=True)
    rag = []
    for n, d in RAGGED:
        if time.time() > t0 + 0.55 * budget:
            rag.append((n, d, "skipped: out of time", ""))
            continue
        fu, err = bench(n, d, 1, [], lf)
        rag.append((n, d, err or ("verified" if fu.get("verified") else "NOT VERIFIED"),
                    "; ".join(sched(n, d, wd))))
        print(f"ragged {n} {d}: {rag[-1][2]}", file=lf, flush=True)
    rows = []
    for i, (n, d, prod) in enumerate(CASES):
        r = {"name": n, "dims": d, "flop": 2.0 * prod[0] * prod[1] * prod[2] * prod[3], "cublas_us": cb.get(i)}
        rows.append(r)
        if time.time() > end - 3:
            r["error"] = "skipped: out of time"
            continue
        r["sched"] = sched(n, d, wd)
        fu, err = bench(n, d, 20, ["--timing-budget=0.3"], lf)
        if err:
            r["error"] = err
            continue
        r["tx_us"], r["verified"] = fu.get("graph_us"), fu.get("verified")
        r["pred_us"] = fu.get("predicted_us")
        r["kernels"] = [(k["name"].split("_")[-1], k.get("us"), k.get("predicted_us")) for k in fu.get("kernels", [])]
        print(f"tx {n} {d}: {r['tx_us']} us verified {r['verified']} cuBLAS {r['cublas_us']}", file=lf, flush=True)
    tune = []
    for n, d in TUNE:  # measured times of the space's candidates (the model's constants)
        left = end - time.time()
        if left < 6:
            tune.append(f"{n}: skipped: out of time")
            continue
        try:
            p = subprocess.run([TXC, "tune", P(n), "--tune-cache=" + os.path.join(OUT, "tune.json")] + dargs(d),
                               capture_output=True, text=True, timeout=left - 1)
            tune += [f"{n} {d}: {ln.strip()}" for ln in (p.stdout + p.stderr).splitlines() if ln.strip()][-12:]
        except subprocess.TimeoutExpired:
            tune.append(f"{n}: tune timed out")
        print("\n".join(tune), file=lf, flush=True)
    f = lambda x: "%.1f" % x if x else "-"  # noqa: E731
    lines = ["| program | sizes | tx us | cuBLAS SGEMM us | cuBLAS/tx | tx TFLOP/s | torch.compile us (last table) | verified | kernels measured/predicted us | schedule |",
             "|---|---|---:|---:|---:|---:|---:|---|---|---|"]
    ratios = []
    for r in rows:
        tx, cu = r.get("tx_us"), r.get("cublas_us")
        ratio = cu / tx if tx and cu else None
        if ratio:
            ratios.append(ratio)
        ks = "; ".join(f"{k} {f(u)}/{f(pu)}" for k, u, pu in r.get("kernels", []))
        lines.append(f"| {r['name']} | {' '.join(f'{k}={v}' for k, v in r['dims'].items())} | {f(tx)} | {f(cu)} | "
                     f"{'%.2fx' % ratio if ratio else '-'} | {'%.1f' % (r['flop'] / tx / 1e6) if tx else '-'} | "
                     f"{f(TC_PREV.get(r['name']))} | {r.get('verified', '-')} | {ks} | "
                     f"{' / '.join(r.get('sched') or [])}{' (' + r['error'] + ')' if r.get('error') else ''} |")
    lines += ["", "txc tune (measured candidates):"] + ["    " + t for t in tune]
    lines += ["", "| ragged case | sizes | result | schedule |", "|---|---|---|---|"]
    for n, d, res, sc in rag:
        lines.append(f"| {n} | {' '.join(f'{k}={v}' for k, v in d.items())} | {res} | {sc} |")
    nver = sum(1 for r in rows if r.get("verified")) + sum(1 for x in rag if x[2] == "verified")
    gm = 1.0
    for x in ratios:
        gm *= x
    gm = gm ** (1 / len(ratios)) if ratios else 0
    worst = min(ratios) if ratios else 0
    lines += ["", f"sgemm summary: {nver} of {len(rows) + len(rag)} runs verified; cuBLAS/tx geomean {gm:.2f}x, "
              f"worst {worst:.2f}x over {len(ratios)} cases; wall {time.time() - t0:.0f} s"]
    txt = "\n".join(lines)
    open(os.path.join(OUT, "sgemm.md"), "w").write(txt + "\n")
    json.dump({"rows": rows, "ragged": rag}, open(os.path.join(OUT, "sgemm.json"), "w"), indent=1)
    print(txt)
    bad = [r for r in rows if r.get("verified") is False] + [x for x in rag if x[2] == "NOT VERIFIED"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
