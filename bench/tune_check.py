"""txc tune on a few rows of the public sweep (bench/sweep.py): for each row, `txc bench` from the
cost model alone (--no-tune-cache), `txc tune` into $OUT/tune.json (wall time: the issue's target
is <= 20 s per program), `txc bench` again following the cache, and the compile's JSON report
(which schedule each kernel runs, from the model or the measurement, with the runners-up). Prints
one line per row: the model's schedule and prediction, the tuned schedule, untuned and tuned
times, their gap (untuned / tuned), and the tune wall time; then the warm-cache compile overhead
(median of 7 compiles with and without the cache) and a summary. Run through bench/tune_check.sh.
"""
import json, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep  # noqa: E402  (the row table; tx never sees row names)

OUT = os.environ.get("OUT", "tune-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
DEFAULT_ROWS = ["colsum_f32_65536x1024", "softmax_f32_262144x64", "colmean_f32_1048576x16",
                "rowsum_f32_65536x1024", "layernorm_f32_64x4096", "softmax_bf16_8x50257",
                "midmax_f32_16x8191x129", "add_relu_f32_64M", "erf_gelu_mul_bf16_8192x8192",
                "colmax_f32_100000x333"]


def run(cmd, lf, timeout=120):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, so, se = 124, "", f"timed out after {timeout} s"
    dt = time.time() - t
    print(f"$ {' '.join(cmd)}\n(rc {rc}, {dt:.1f} s)\n{so[-4000:]}{se[-2000:]}", file=lf, flush=True)
    return rc, so, se, dt


def bench_us(path, dims, extra, lf):
    rc, so, se, _ = run([TXC, "bench", path, "--device=gpu", "--random-inputs=1", "--iters", "10",
                         "--json"] + dims + extra, lf)
    try:
        j = json.loads(so[so.index("{"):])
        return j["fused"]["graph_us"], j["fused"]["verified"], j["fused"]["predicted_us"]
    except (ValueError, KeyError):
        return None, False, None


def schedules(path, dims, extra, lf):
    rc, so, se, _ = run([TXC, path, "--emit=json", "-o", "-"] + dims + extra, lf)
    try:
        j = json.loads(so)
    except ValueError:
        return []
    out = []
    for k in j["kernels"]:
        s = k.get("schedule")
        if not s:
            continue
        par = ",".join(f"{a}={b}" for a, b in s["parameters"].items())
        out.append((k["name"], f"{s['name']}({par})", s["source"], s["predicted_us"], s.get("measured_us")))
    return out


def compile_ms(path, dims, extra, n=7):
    ts = []
    for _ in range(n):
        t = time.time()
        subprocess.run([TXC, path, "--emit=ptx", "-o", os.devnull] + dims + extra, capture_output=True)
        ts.append((time.time() - t) * 1e3)
    return statistics.median(ts)


def gap_of(tune_out):
    """(model's us, kept us) per kernel from txc tune's 'kept ...' lines."""
    out = []
    for line in tune_out.splitlines():
        line = line.strip()
        if line.startswith("kept the fastest:"):
            w = line.split()
            out.append((float(w[9]), float(w[3])))
        elif line.startswith("kept the model's choice ("):
            v = float(line.split("(")[1].split()[0])
            out.append((v, v))
    return out


def calibrate(lf):
    prog = os.path.join(OUT, "calib_prog.tx")
    with open(prog, "w") as f:
        f.write("fn f(x: f32[N]) -> f32[N] { return x * 2 }\n")
    rc, so, se, dt = run([TXC, "bench", prog, "-D", "N=1048576", "--random-inputs=1", "--iters", "3",
                          "--calibrate", "--calib=" + os.path.join(OUT, "calib.json")], lf)
    line = [l for l in (so + se).splitlines() if "calibration written" in l or "error" in l]
    print(f"calibrate (rc {rc}, {dt:.1f} s): {line[-1] if line else 'no line'}", flush=True)


def main():
    names = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else DEFAULT_ROWS
    deadline = float(os.environ.get("TUNE_DEADLINE", "55"))
    os.makedirs(OUT, exist_ok=True)
    cache = os.path.join(OUT, "tune.json")
    if os.path.exists(cache):
        os.remove(cache)
    wd = tempfile.mkdtemp(prefix="tx-tune-")
    rows = {r["name"]: r for r in sweep.ROWS}
    t0 = time.time()
    res = []
    lf = open(os.path.join(OUT, "tune_log.txt"), "w")
    for n, name in enumerate(names):
        r = rows.get(name)
        if r is None:
            print(f"tune_check: no sweep row {name}")
            continue
        if time.time() - t0 > deadline:
            res.append(dict(name=name, skipped=True))
            continue
        path = os.path.join(wd, name + ".tx")
        with open(path, "w") as f:
            f.write(r["src"])
        dims = sum((["-D", f"{k}={v}"] for k, v in r["dims"].items()), [])
        model = schedules(path, dims, ["--no-tune-cache"], lf)
        rc, so, se, tune_s = run([TXC, "tune", path, "--tune-cache=" + cache, "--iters", "10"] + dims, lf)
        tuned = schedules(path, dims, ["--tune-cache=" + cache], lf)
        print(f"== {name}: txc tune rc {rc} in {tune_s:.1f} s\n{so.strip()}{se.strip()[-500:]}", flush=True)
        res.append(dict(name=name, model=model, tuned=tuned, gaps=gap_of(so), tune_rc=rc, tune_s=tune_s))
        if n == 0:
            calibrate(lf)
    warm = cold = None
    done = [x for x in res if not x.get("skipped")]
    if done:
        r = rows[done[0]["name"]]
        path = os.path.join(wd, done[0]["name"] + ".tx")
        dims = sum((["-D", f"{k}={v}"] for k, v in r["dims"].items()), [])
        cold = compile_ms(path, dims, ["--no-tune-cache"])
        warm = compile_ms(path, dims, ["--tune-cache=" + cache])
    with open(os.path.join(OUT, "tune_check.json"), "w") as f:
        json.dump(dict(rows=res, compile_ms_no_cache=cold, compile_ms_warm_cache=warm), f, indent=1)
    print("\n== txc tune on sweep rows (per kernel: the model's choice measured, the kept one; gap = model / kept) ==")
    gaps = []
    for x in res:
        if x.get("skipped"):
            print(f"{x['name']:34} skipped (deadline)")
            continue
        for k, (m, t) in enumerate(zip(x["model"], x["tuned"])):
            g = x["gaps"][k] if k < len(x["gaps"]) else None
            if g and g[1] > 0:
                gaps.append(g[0] / g[1])
            gs = f"{g[0]:9.1f} {g[1]:9.1f} {g[0] / g[1]:5.2f}x" if g and g[1] > 0 else "        -         -      -"
            print(f"{x['name']:34} {m[0]:4} {gs}  predicted {m[3] or 0:9.1f}  {m[1]} -> {t[1]} [{t[2]}]"
                  f"  tune {x['tune_s']:.1f} s{'' if x['tune_rc'] == 0 else ' rc %d' % x['tune_rc']}")
    if gaps:
        within = sum(1 for v in gaps if v <= 1.15)
        print(f"summary: {len(gaps)} kernels; geomean model/kept {statistics.geometric_mean(gaps):.3f}; "
              f"model's choice within 15% of the tuned one on {within}/{len(gaps)}; worst {max(gaps):.2f}x; "
              f"max tune wall {max(x['tune_s'] for x in done):.1f} s (target <= 20 s)")
    if warm is not None:
        print(f"compile of {done[0]['name']}: {cold:.1f} ms without the cache, {warm:.1f} ms with it "
              f"(warm-cache overhead {warm - cold:+.1f} ms; target <= 5 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
