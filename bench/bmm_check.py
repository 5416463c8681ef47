"""True batched products ([B, M, K] @ [B, K, N], broadcast batch dims, q @ k^T per head, a
transposed LHS, epilogues) on the H200 ([matmul.wgmma.batch]), against cuBLAS (torch.matmul
eager) and torch.compile in the same run: run by bench/bmm_check.sh from the repository root
with dist/.

    python3 bench/bmm_check.py [--budget S]

Most important first, within BUDGET seconds (default 52):
  1. each case's sm_90a plan (manifest templates: every GEMM of these programs must be wgmma);
  2. `txc bench --device=gpu --json` at its GPU size: verified against the host (sampled where the
     outputs are large) and timed, per kernel with the model's prediction;
  3. `txc bench --device=gpu --iters 1` at ragged sizes: full verification of the batched kernels
     (M, N, K not multiples of the tile in every batch element, broadcast batch dims, register
     stores of an odd-pitch output, f32 output, M-contiguous A);
  4. two cases again with TX_WG_BATCH=0 (the mma.sync kernel they had before);
  5. the fill rule's crossover: small per-batch products on the planned kernel and forced to the
     other one (TX_WG_BATCH=0 / 1);
  6. compute-sanitizer memcheck of two ragged batched kernels;
meanwhile two workers (bench/bmm_torch.py) time torch.matmul (cuBLAS) and torch.compile of the
same expressions under one lock with tx's timings. Prints a table (tx us, TFLOP/s, cuBLAS us,
torch.compile us, ratios > 1: tx faster, verified, plan, per-kernel measured / predicted us) and a
summary line last. Files under $OUT: bmm.md, bmm.json, log.txt."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import dargs, tx_bench_locked, tx_plan  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "bmm-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
P = lambda n: os.path.join(HERE, "bmm", n + ".tx")  # noqa: E731

# name, GPU sizes (torch worker 0 or 1)
CASES = [
    ("bmm_plain", dict(B=16, M=1024, K=1024, N=1024), 0),
    ("bmm_heads", dict(B=8, H=16, M=256, K=128, N=256), 1),
    ("qk_t", dict(B=8, H=16, S=512, D=128), 0),
    ("bmm_bias_gelu", dict(B=8, M=512, K=1024, N=2048), 1),
    ("bmm_at", dict(B=4, M=1000, K=512, N=768), 0),
    ("bmm_bcast_a", dict(B=12, M=384, K=768, N=1000), 1),
    ("pv_f16", dict(B=4, H=8, S=1024, T=1024, D=128), 0),
]
RAGGED = [
    ("bmm_plain", dict(B=3, M=77, K=200, N=136)),
    ("bmm_heads", dict(B=2, H=3, M=130, K=72, N=40)),
    ("qk_t", dict(B=2, H=3, S=100, D=64)),
    ("bmm_bias_gelu", dict(B=3, M=70, K=136, N=264)),
    ("bmm_at", dict(B=2, M=200, K=72, N=96)),
    ("bmm_bcast_a", dict(B=5, M=33, K=64, N=48)),
    ("pv_f16", dict(B=2, H=3, S=100, T=72, D=64)),
    ("bmm_plain", dict(B=64, M=32, K=32, N=32)),
]
# the mma.sync kernel of before, for the record (TX_WG_BATCH=0)
BEFORE = [("bmm_plain", dict(B=16, M=1024, K=1024, N=1024)), ("bmm_heads", dict(B=8, H=16, M=256, K=128, N=256))]
# the fill rule's crossover ([matmul.wgmma.batch], 1/8 of a 64^3 tile): small per-batch products
# on the planner's kernel and forced to the other (TX_WG_BATCH=0: mma.sync, 1: wgmma)
TINY = [("bmm_plain", dict(B=64, M=32, K=32, N=32), "0"), ("bmm_plain", dict(B=256, M=16, K=32, N=32), "1"),
        ("bmm_plain", dict(B=512, M=64, K=64, N=64), "0"), ("bmm_plain", dict(B=1024, M=16, K=16, N=16), "1")]
# compute-sanitizer memcheck of ragged batched kernels (rows never read across batch elements)
SANITIZE = [("bmm_heads", dict(B=2, H=3, M=130, K=72, N=40)), ("bmm_bcast_a", dict(B=5, M=33, K=64, N=48))]
FLOPS = {"bmm_plain": "B*M*N*K", "bmm_heads": "B*H*M*N*K", "qk_t": "B*H*S*S*D", "bmm_bias_gelu": "B*M*N*K",
         "bmm_at": "B*M*N*K", "bmm_bcast_a": "B*M*N*K", "pv_f16": "B*H*S*T*D"}


def plan(name, dims, wd):
    return tx_plan(TXC, P(name), dims, wd)


def bench(name, dims, iters, extra, lock, lf, env=None):
    return tx_bench_locked(TXC, P(name), dims, iters, extra, lock, lf, env)


def main():
    budget = 52.0
    if sys.argv[1:2] == ["--budget"]:
        budget = float(sys.argv[2])
    t0 = time.time()
    end = t0 + budget
    os.makedirs(OUT, exist_ok=True)
    wd = tempfile.mkdtemp(prefix="tx-bmm-")
    lock = os.path.join(wd, "gpu.lock")
    lf = open(os.path.join(OUT, "log.txt"), "w")
    procs = []
    for w in (0, 1):
        names = [f"{n}:{','.join(f'{k}={v}' for k, v in d.items())}" for n, d, ww in CASES if ww == w]
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "bmm_torch.py"),
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
    before = {}
    for n, d in BEFORE:
        if time.time() > end - 3:
            break
        fu, err = bench(n, d, 10, ["--timing-budget=0.2"], lock, lf, {"TX_WG_BATCH": "0"})
        before[n] = (fu or {}).get("graph_us")
    tiny = []
    for n, d, force in TINY:
        if time.time() > end - 3:
            break
        a, _ = bench(n, d, 10, ["--timing-budget=0.2"], lock, lf)
        b, _ = bench(n, d, 10, ["--timing-budget=0.2"], lock, lf, {"TX_WG_BATCH": force})
        tiny.append((n, d, plan(n, d, wd), (a or {}).get("graph_us"), force, (b or {}).get("graph_us"),
                     bool((a or {}).get("verified")) and bool((b or {}).get("verified"))))
    san = []
    import shutil
    cs = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    for n, d in SANITIZE:
        if time.time() > end - 6 or not os.path.exists(cs):
            san.append((n, d, "skipped"))
            continue
        try:
            p = subprocess.run([cs, "--tool", "memcheck", "--error-exitcode", "99", "--print-limit", "5", TXC, "run", P(n),
                                "--device=gpu", "--random-inputs=3"] + dargs(d), capture_output=True, text=True,
                               timeout=max(3, end - time.time() - 2))
            txt = p.stdout + p.stderr
            first = next((x.strip() for x in txt.splitlines() if "rror" in x or "nvalid" in x), "")
            san.append((n, d, "clean" if p.returncode == 0 else f"rc {p.returncode}: {first[:160]}"))
        except subprocess.TimeoutExpired:
            san.append((n, d, "timed out"))
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
    lines = ["| program | sizes | tx us | TFLOP/s | cuBLAS us | cuBLAS/tx | torch.compile us | tc/tx | verified | "
             "kernels: measured / predicted us | plan on sm_90a |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"]
    rc, rt = [], []
    for r in rows:
        t = th.get(r["name"], {})
        tx, tc, cb = r.get("tx_us"), t.get("us"), t.get("eager_us")
        fl = 2 * eval(FLOPS[r["name"]], {}, dict(r["dims"]))
        q = (tc / tx) if tx and tc else None
        qb = (cb / tx) if tx and cb else None
        if q:
            rt.append(q)
        if qb:
            rc.append(qb)
        ks = "; ".join(f"{k} {f(u)}/{f(pu)}" for k, u, pu in r.get("kernels", []))
        note = r.get("error") or t.get("error") or ""
        if r["name"] in before:
            note += f" mma.sync before: {f(before[r['name']])} us"
        lines.append(f"| {r['name']} | {' '.join(f'{k}={v}' for k, v in r['dims'].items())} | {f(tx)} | "
                     f"{'%.0f' % (fl / tx / 1e6) if tx else '-'} | {f(cb)} | {'%.2fx' % qb if qb else '-'} | {f(tc)} | "
                     f"{'%.2fx' % q if q else '-'} | {r.get('verified', '-')} | {ks} | "
                     f"{'; '.join(r['plan'] or ['-'])}{' (' + note.strip() + ')' if note.strip() else ''} |")
    lines.append("")
    lines.append("| ragged case | sizes | result | plan |")
    lines.append("|---|---|---|---|")
    for n, d, pl, res in rag:
        lines.append(f"| {n} | {' '.join(f'{k}={v}' for k, v in d.items())} | {res} | {'; '.join(pl or ['-'])} |")
    lines.append("")
    lines.append("| fill rule: case | sizes | planned | us | forced (TX_WG_BATCH) | us | verified |")
    lines.append("|---|---|---|---:|---|---:|---|")
    for n, d, pl, a, force, b, ok in tiny:
        lines.append(f"| {n} | {' '.join(f'{k}={v}' for k, v in d.items())} | {'; '.join(pl or ['-'])} | {f(a)} | "
                     f"{'mma.sync' if force == '0' else 'wgmma'} ({force}) | {f(b)} | {ok} |")
    lines.append("")
    for n, d, res in san:
        lines.append(f"memcheck {n} {' '.join(f'{k}={v}' for k, v in d.items())}: {res}")
    nver = sum(1 for r in rows if r.get("verified")) + sum(1 for x in rag if x[3] == "verified")
    gm = lambda v: (__import__("math").prod(v) ** (1 / len(v))) if v else 0  # noqa: E731
    lines.append("")
    lines.append(f"bmm summary: {nver} of {len(rows) + len(rag)} runs verified; cuBLAS/tx geomean {gm(rc):.2f}x over "
                 f"{len(rc)}, torch.compile/tx {gm(rt):.2f}x over {len(rt)}; mma.sync before: "
                 f"{', '.join(f'{k} {f(v)} us' for k, v in before.items()) or '-'}; wall {time.time() - t0:.0f} s")
    txt = "\n".join(lines)
    open(os.path.join(OUT, "bmm.md"), "w").write(txt + "\n")
    json.dump({"rows": rows, "ragged": rag, "torch": th, "before": before, "tiny": tiny, "sanitize": san}, open(os.path.join(OUT, "bmm.json"), "w"), indent=1)
    print(txt)
    bad = [r for r in rows if r.get("verified") is False] + [x for x in rag if x[3] == "NOT VERIFIED"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
