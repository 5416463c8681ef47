"""The held-out programs (bench/heldout/*.tx, sizes and PyTorch expressions in bench/heldout/cases.py)
on the GPU: run by bench/heldout_check.sh from the repository root with dist/ carried.

    python3 bench/heldout_check.py [--budget S] [--only NAME,...] [--round N] [--workers N]

For every case, most important first ([B, S, D] layers, attention variants and decode, then GEMMs
and MLPs, then norms, reductions and pointwise, then the tiny ones):
  0. the sm_90a plan (`txc FILE --target=sm_90a`, compile only, six at a time): kernels, templates;
  1. `txc bench --device=gpu --iters 1` at the case's last ragged CPU size, six at a time: a full
     verification against the host reference (no timing runs meanwhile: this holds the lock);
  2. once the torch workers have compiled, one at a time, `txc bench --device=gpu --json` at the
     case's GPU sizes: verified against the host (sampled where the outputs are too large) and
     timed (graph time);
  3. the workers time torch.compile (and SDPA for attention) of the rows tx timed, one at a time.
Meanwhile (during 0 and 1) N worker processes (bench/heldout_torch.py) compile the same
expressions with torch.compile; no timing overlaps another or a compilation (the machine is quiet:
torch.compile anchors varied 1.5x between runs while the workers compiled beside the timings). Prints one row per case (tx us, torch.compile us, torch.compile / tx: > 1
means tx is faster, SDPA us and SDPA / tx where SDPA expresses the variant, verified at the bench
size and at the ragged size, the plan) and the geomean / worst row last.
Files under $OUT: heldout.json, heldout.md, heldout_log.txt, torch-*.json."""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "heldout"))
import cases as C  # noqa: E402

OUT = os.environ.get("OUT", "heldout-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
ORDER = ["block", "mlp_3d", "attn", "bert_add", "gpt2", "t5_attn", "swin", "decode", "gelu", "swiglu", "geglu", "layerscale",
         "llama_mlp", "vit_patch", "conv3x3", "sigmoid_attn", "skinny", "swiglu_packed", "gemv", "linear_nt", "ragged", "prime",
         "bmm", "mixed", "l2norm", "clip", "dual", "cosine", "moe", "cross", "label", "kl_", "entropy", "log_softmax",
         "temperature", "rmsnorm", "llama", "t5_layer", "sandwich", "layernorm", "bert_embed", "vit_cls", "qk_", "group",
         "instance", "batchnorm", "seq_", "squeeze", "softmax", "seg_", "colsum", "batch", "row_", "center", "multi", "losses",
         "focal", "triplet", "dice", "ppo", "masked", "rotary", "rope", "causal_conv", "ema", "lerp", "adamw", "lion", "sgd",
         "grad_clip", "sum_of", "activations", "final", "whisper", "nan_", "f16_", "int_", "broadcast", "pixel", "f32_", "tiny",
         "huge"]


def prio(c):
    for i, p in enumerate(ORDER):
        if c["name"].startswith(p):
            return i
    return len(ORDER)


def dargs(d):
    return [x for k, v in d.items() for x in ("-D", f"{k}={v}")]


def special_inputs(c, dims, wd, tag, weights=False):
    """.npy files for the inputs --random-inputs cannot fill meaningfully (lengths, positions,
    labels, bool masks) and, with weights, the weight matrices at 1 / sqrt(fan_in) (kind "w"):
    --random-inputs fills [-1, 1), which makes a block's attention scores ~1e4 and its softmax an
    argmax that one bf16 rounding of q flips (Falcon-7B's K = 4544 projection), so the ragged
    verification takes the case's own weights; the rest are random. Returns txc --input options."""
    try:
        import numpy as np
    except ImportError:
        return []
    rng = np.random.default_rng(5)
    opts = []
    for nm, shape, dt, kind in c["inputs"]:
        if kind not in ("n", "small", "big") and (weights or kind != "w"):  # lengths, positions, labels, masks, ids, scalars, special values
            p = os.path.join(wd, f"{c['name']}_{tag}_{nm}.npy")
            np.save(p, C.np_input(rng, C.shape_of(shape, dims), dt, kind, dims))
            opts += ["--input", f"{nm}={p}"]
    return opts


def plan(path, dims, wd):
    ptx = os.path.join(wd, "p.ptx")
    r = subprocess.run([TXC, path, "--target=sm_90a", "-o", ptx] + dargs(dims), capture_output=True, text=True,
                       timeout=60)
    if r.returncode:
        return None, r.stderr.strip()[-300:]
    ks = json.load(open(ptx + ".json"))["kernels"]
    return [k.get("template") or k["name"].split("_")[-1] for k in ks], None


def bench(path, dims, extra, lock, iters, lf):
    import fcntl
    with open(lock, "w") as lk:  # no other timing on the GPU meanwhile
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            return bench_locked(path, dims, extra, iters, lf)
        finally:
            fcntl.flock(lk, fcntl.LOCK_UN)


def bench_locked(path, dims, extra, iters, lf):
    cmd = [TXC, "bench", path, "--device=gpu", "--random-inputs=1", "--iters", str(iters),
           "--json"] + extra + dargs(dims)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=40)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, so, se = 124, "", "timed out after 40 s"
    if se.strip():
        print(f"--- {os.path.basename(path)} {dims} (rc {rc})\n{se.strip()[-1500:]}", file=lf, flush=True)
    try:
        res = json.loads(so[so.index("{"):]) if "{" in so else None
    except ValueError:
        res = None
    if not res or "fused" not in res:
        return None, f"rc {rc}: " + ((se.strip().splitlines() or ["no output"])[-1][:160])
    return res["fused"], None


def main():
    args = sys.argv[1:]
    budget, only, workers = 150.0, None, 8
    while args:
        a = args.pop(0)
        if a == "--budget":
            budget = float(args.pop(0))
        elif a == "--only":
            only = (only or []) + args.pop(0).split(",")
        elif a == "--round":  # the programs of one round: cases.ROUND<N>
            only = (only or []) + getattr(C, "ROUND" + args.pop(0))
        elif a == "--workers":
            workers = int(args.pop(0))
    t0 = time.time()
    end = t0 + budget
    os.makedirs(OUT, exist_ok=True)
    todo = sorted([c for c in C.CASES if not only or c["name"] in only], key=prio)
    wd = tempfile.mkdtemp(prefix="tx-heldout-")
    lock = os.path.join(wd, "gpu.lock")
    lf = open(os.path.join(OUT, "heldout_log.txt"), "w")
    py = sys.executable
    for w in range(workers):  # markers of an earlier run in the same OUT
        for ext in (".compiled", ".go"):
            if os.path.exists(os.path.join(OUT, f"torch-{w}.json{ext}")):
                os.remove(os.path.join(OUT, f"torch-{w}.json{ext}"))
    procs = []
    for w in range(workers):  # torch.compile in parallel with tx's work; timings serialised by the lock
        names = [c["name"] for c in todo[w::workers]]
        if names:
            procs.append(subprocess.Popen([py, os.path.join(HERE, "heldout_torch.py"), os.path.join(OUT, f"torch-{w}.json"),
                                           lock, str(end - 6)] + names, stdout=lf, stderr=lf))
    rows = {}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(6) as ex:  # the sm_90a plans, compile only, in parallel
        plans = dict(zip([c["name"] for c in todo], ex.map(
            lambda c: plan(os.path.join(HERE, "heldout", c["name"] + ".tx"), c["gpu"],
                           tempfile.mkdtemp(dir=wd)), todo)))
    import fcntl
    with open(lock, "w") as lk, ThreadPoolExecutor(6) as ex:
        # phase 1: a full verification at a ragged size, six at a time; the lock keeps torch's
        # timings off the GPU meanwhile (its workers compile)
        fcntl.flock(lk, fcntl.LOCK_EX)

        def ragged(c):
            path = os.path.join(HERE, "heldout", c["name"] + ".tx")
            dims = c["cpu"][-1]
            if time.time() > end - 30:
                return dims, None, "skipped: out of time"
            fu, err = bench_locked(path, dims, special_inputs(c, dims, wd, "r", weights=True), 1, lf)
            return dims, (False if err else fu.get("verified")), err
        for c, (dims, ok, err) in zip(todo, ex.map(ragged, todo)):
            rows[c["name"]] = {"name": c["name"], "dims": c["gpu"], "ragged": dims, "ragged_verified": ok}
            if err:
                rows[c["name"]]["ragged_error"] = err
        print(f"phase 1 (ragged verification) done at {time.time() - t0:.0f} s", file=lf, flush=True)
        # the workers' compilations end before any timing: the machine is quiet while tx times
        marks = [os.path.join(OUT, f"torch-{w}.json.compiled") for w in range(len(procs))]
        while not all(os.path.exists(m) for m in marks) and time.time() < end - 20 and \
                all(p.poll() is None for p in procs):
            time.sleep(0.1)
        print(f"torch compiled at {time.time() - t0:.0f} s", file=lf, flush=True)
        timed = []
        for c in todo:  # phase 2: verify (sampled) and time at the GPU sizes, one at a time
            r = rows[c["name"]]
            path = os.path.join(HERE, "heldout", c["name"] + ".tx")
            r["plan"], err = plans[c["name"]]
            if time.time() > end - 4 - 0.45 * (len(timed) + 1):  # torch's timings of the rows after
                r["error"] = "skipped: out of time"
                continue
            if err:
                r["error"] = "compile: " + err
                continue
            fu, err = bench_locked(path, c["gpu"], special_inputs(c, c["gpu"], wd, "g") + ["--timing-budget=0.3"],
                                   50, lf)
            if err:
                r["error"] = err
                continue
            timed.append(c["name"])
            r["tx_us"], r["verified"] = fu.get("graph_us"), fu.get("verified")
            r["kernels_us"] = [(k.get("name"), k.get("kind"), k.get("us")) for k in fu.get("kernels", [])]
            print(f"tx {'ok ' if r['verified'] else 'BAD'} {c['name']}: {r['tx_us']:.1f} us [{'; '.join(r['plan'])}]",
                  file=lf, flush=True)
        for w in range(len(procs)):  # the workers time these rows now, one at a time (the lock)
            go = os.path.join(OUT, f"torch-{w}.json.go")
            with open(go + ".tmp", "w") as g:
                g.write("\n".join(timed) + "\n")
            os.replace(go + ".tmp", go)  # whole when it appears
        fcntl.flock(lk, fcntl.LOCK_UN)
    for p in procs:
        try:
            p.wait(timeout=max(1.0, end - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
    th = {}
    for w in range(workers):
        try:
            th.update(json.load(open(os.path.join(OUT, f"torch-{w}.json"))))
        except Exception:
            pass
    lines = ["| program | sizes | tx us | torch.compile us | tc/tx | SDPA us | SDPA/tx | verified (bench size / ragged) "
             "| plan on sm_90a |", "|---|---|---:|---:|---:|---:|---:|---|---|"]
    ratios = []
    for c in todo:
        r = rows[c["name"]]
        t = th.get(c["name"], {})
        tx, tc, sd = r.get("tx_us"), t.get("us"), t.get("sdpa_us")
        ratio = tc / tx if tx and tc else None
        if ratio:
            ratios.append((ratio, c["name"]))
        v = "%s / %s" % ({True: "yes", False: "NO", None: "-"}[r.get("verified")],
                         {True: "yes", False: "NO", None: "-"}[r.get("ragged_verified")])
        note = r.get("error") or t.get("error") or ""
        pl = "%d: %s" % (len(r["plan"]), "; ".join(r["plan"])) if r.get("plan") else "-"
        f = lambda x: "%.1f" % x if x else "-"
        lines.append(f"| {c['name']} | {' '.join(f'{k}={v}' for k, v in c['gpu'].items())} | {f(tx)} | {f(tc)} | "
                     f"{'%.2fx' % ratio if ratio else '-'} | {f(sd)} | {'%.2fx' % (sd / tx) if sd and tx else '-'} | "
                     f"{v} | {pl}{' (' + note + ')' if note else ''} |")
    if ratios:
        gm = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
        w = min(ratios)
        sr = [th[c["name"]]["sdpa_us"] / rows[c["name"]]["tx_us"] for c in todo
              if th.get(c["name"], {}).get("sdpa_us") and rows[c["name"]].get("tx_us")]
        sg = "%.2fx / %.2fx" % (math.exp(sum(math.log(x) for x in sr) / len(sr)), min(sr)) if sr else "-"
        lines.append(f"| geomean over {len(ratios)} / worst | | | | {gm:.2f}x / {w[0]:.2f}x ({w[1]}) | | {sg} | "
                     f"{sum(1 for c in todo if rows[c['name']].get('verified'))} of {len(todo)} verified at the bench "
                     f"size, {sum(1 for c in todo if rows[c['name']].get('ragged_verified'))} at a ragged size | |")
    else:
        lines.append("| geomean / worst | | | | - | | | | |")
    txt = "\n".join(lines)
    print(txt)
    open(os.path.join(OUT, "heldout.md"), "w").write(txt + "\n")
    json.dump({"rows": rows, "torch": th, "wall_s": round(time.time() - t0, 1)}, open(os.path.join(OUT, "heldout.json"), "w"),
              indent=1)
    bad = [c["name"] for c in todo if rows[c["name"]].get("verified") is False or rows[c["name"]].get("ragged_verified") is False]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
