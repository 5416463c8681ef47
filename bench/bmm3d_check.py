"""Products whose LHS has leading dims ([B, S, D] @ [D, F] and relatives) on the H200, against
torch.compile in the same run: run by bench/bmm3d_check.sh from the repository root with dist/.

    python3 bench/bmm3d_check.py [--budget S]

Most important first, within BUDGET seconds (default 52):
  1. each case's sm_90a plan (manifest templates: every GEMM of these programs must be wgmma);
  2. `txc bench --device=gpu --json` at its GPU size: verified against the host (sampled where the
     outputs are large) and timed, per kernel with the model's prediction;
  3. `txc bench --device=gpu --iters 1` at ragged sizes: full verification of the folded kernels
     (odd B x S rows, 4-D, a broadcast residual, SwiGLU twins, transposed weights);
meanwhile two workers (bench/bmm3d_torch.py) torch.compile the same expressions and time them
under one lock with tx's timings. Prints a table (tx us, torch.compile us, tc/tx > 1: tx faster,
verified, the plan, per-kernel measured / predicted us) and a summary line last. Files under $OUT:
bmm3d.md, bmm3d.json, log.txt."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import dargs, tx_bench_locked, tx_plan  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "bmm3d-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
P = lambda n: os.path.join(HERE, "bmm3d", n + ".tx")  # noqa: E731

# name, GPU sizes (torch worker 0 or 1)
CASES = [
    ("mlp_3d", dict(B=4, S=1024, D=1024, F=4096), 1),
    ("block_bsd", dict(B=2, S=2048), 0),
    ("linear_3d", dict(B=8, S=512, K=4096, N=4096), 1),
    ("swiglu_3d", dict(B=4, S=1000, D=2048, F=5632), 1),
    ("heads_proj", dict(B=2, H=16, S=1024, D=128, E=512), 1),
]
RAGGED = [
    ("mlp_3d", dict(B=3, S=37, D=72, F=136)),
    ("linear_3d", dict(B=2, S=45, K=64, N=200)),
    ("swiglu_3d", dict(B=3, S=70, D=128, F=96)),
    ("heads_proj", dict(B=2, H=3, S=21, D=64, E=40)),
    ("block_bsd", dict(B=1, S=256)),
    ("block_bsd", dict(B=1, S=130)),
    ("mlp_3d", dict(B=5, S=333, D=256, F=1024)),
]


def plan(name, dims, wd):
    return tx_plan(TXC, P(name), dims, wd)


def bench(name, dims, iters, extra, lock, lf):
    return tx_bench_locked(TXC, P(name), dims, iters, extra, lock, lf)


def main():
    budget = 52.0
    if sys.argv[1:2] == ["--budget"]:
        budget = float(sys.argv[2])
    t0 = time.time()
    end = t0 + budget
    os.makedirs(OUT, exist_ok=True)
    wd = tempfile.mkdtemp(prefix="tx-bmm3d-")
    lock = os.path.join(wd, "gpu.lock")
    lf = open(os.path.join(OUT, "log.txt"), "w")
    procs = []
    for w in (0, 1):
        names = [f"{n}:{','.join(f'{k}={v}' for k, v in d.items())}" for n, d, ww in CASES if ww == w]
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "bmm3d_torch.py"),
                                       os.path.join(OUT, f"torch-{w}.json"), lock, str(end - 5)] + names,
                                      stdout=lf, stderr=lf))
    rows = []
    for n, d, _ in CASES:
        r = {"name": n, "dims": d, "plan": plan(n, d, wd)}
        rows.append(r)
        if time.time() > end - 8:
            r["error"] = "skipped: out of time"
            continue
        fu, err = bench(n, d, 20, ["--timing-budget=0.3"], lock, lf)
        if err:
            r["error"] = err
            continue
        r["tx_us"], r["verified"] = fu.get("graph_us"), fu.get("verified")
        r["pred_us"] = fu.get("predicted_us")
        r["kernels"] = [(k["name"].split("_")[-1], k.get("us"), k.get("predicted_us")) for k in fu.get("kernels", [])]
        print(f"tx {n}: {r['tx_us']} us verified {r['verified']}", file=lf, flush=True)
    rag = []
    for n, d in RAGGED:
        if time.time() > end - 4:
            rag.append((n, d, None, "skipped: out of time"))
            continue
        pl = plan(n, d, wd)
        fu, err = bench(n, d, 1, [], lock, lf)
        rag.append((n, d, pl, err or ("verified" if fu.get("verified") else "NOT VERIFIED")))
    for p in procs:
        try:
            p.wait(timeout=max(0.5, end - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
    th = {}
    for w in (0, 1):
        try:
            th.update(json.load(open(os.path.join(OUT, f"torch-{w}.json"))))
        except (OSError, ValueError):
            pass
    f = lambda x: "%.1f" % x if x else "-"  # noqa: E731
    lines = ["| program | sizes | tx us | torch.compile us | tc/tx | verified | kernels: measured / predicted us | plan on sm_90a |",
             "|---|---|---:|---:|---:|---|---|---|"]
    ratios = []
    for r in rows:
        t = th.get(r["name"], {})
        tx, tc = r.get("tx_us"), t.get("us")
        ratio = tc / tx if tx and tc else None
        if ratio:
            ratios.append(ratio)
        ks = "; ".join(f"{k} {f(u)}/{f(pu)}" for k, u, pu in r.get("kernels", []))
        note = r.get("error") or t.get("error") or ""
        lines.append(f"| {r['name']} | {' '.join(f'{k}={v}' for k, v in r['dims'].items())} | {f(tx)} | {f(tc)} | "
                     f"{'%.2fx' % ratio if ratio else '-'} | {r.get('verified', '-')} | {ks} | "
                     f"{'; '.join(r['plan'] or ['-'])}{' (' + note + ')' if note else ''} |")
    lines.append("")
    lines.append("| ragged case | sizes | result | plan |")
    lines.append("|---|---|---|---|")
    for n, d, pl, res in rag:
        lines.append(f"| {n} | {' '.join(f'{k}={v}' for k, v in d.items())} | {res} | {'; '.join(pl or ['-'])} |")
    nver = sum(1 for r in rows if r.get("verified")) + sum(1 for x in rag if x[3] == "verified")
    gm = 1.0
    for x in ratios:
        gm *= x
    gm = gm ** (1 / len(ratios)) if ratios else 0
    lines.append("")
    lines.append(f"bmm3d summary: {nver} of {len(rows) + len(rag)} runs verified; tc/tx geomean {gm:.2f}x over "
                 f"{len(ratios)} cases; wall {time.time() - t0:.0f} s")
    txt = "\n".join(lines)
    open(os.path.join(OUT, "bmm3d.md"), "w").write(txt + "\n")
    json.dump({"rows": rows, "ragged": rag, "torch": th}, open(os.path.join(OUT, "bmm3d.json"), "w"), indent=1)
    print(txt)
    bad = [r for r in rows if r.get("verified") is False] + [x for x in rag if x[3] == "NOT VERIFIED"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
