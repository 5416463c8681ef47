"""bench/rows_quick.py - issue 12's row reductions in under 80 s on the GPU machine (dist/ carried):
ragged-width GPU checks of the newest schedules first (cluster rows, row_few, subwarp rows,
row_wide: txc bench --iters 3 verifies against the CPU reference), then the sweep rows named on
the command line (the table of bench/sweep.py) timed by txc bench alone. torch.compile is not run
again: the ratio uses the torch.compile time of the same row in a stored sweep (TORCH_FROM, a
sweep.json; default the H200 run of 2026-12-01). Every result is printed (and appended to
$OUT/quick.txt) as soon as it is measured, so a run cut short keeps what it did.

    python3 bench/rows_quick.py [ROW_SUBSTR ...]"""
import json, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep  # noqa: E402  (the row table; nothing runs on import)

OUT = os.environ.get("OUT", "rows-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
TORCH_FROM = os.environ.get("TORCH_FROM", "bench/results/2026-12-01-h200-sweep/run2/sweep.json")
T0 = time.time()
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "quick.txt"), "a")


def say(*a):
    line = " ".join(str(x) for x in a)
    print(line, flush=True)
    print(line, file=LOG, flush=True)


def bench(src, dims, iters):
    """txc bench of src at dims: (verified, graph_us, predicted_us, note)."""
    with tempfile.NamedTemporaryFile("w", suffix=".tx", delete=False) as f:
        f.write(src)
    cmd = [TXC, "bench", f.name, "--device=gpu", "--random-inputs=7", "--iters", str(iters), "--json"]
    for k, v in dims.items():
        cmd += ["-D", f"{k}={v}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=40)
        so, se = p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return False, 0, 0, "timed out"
    try:
        fu = json.loads(so[so.index("{"):])["fused"]
        return fu["verified"], fu["graph_us"], fu["predicted_us"], ""
    except (ValueError, KeyError):
        return False, 0, 0, (se.strip().splitlines() or ["no output"])[-1][:160]


def main():
    progs = {
        "softmax": sweep.softmax_src("f32"), "softmax_bf16": sweep.softmax_src("bf16"),
        "log_softmax_bf16": sweep.log_softmax_src("bf16"),
        "layernorm_bf16": "fn f(x: bf16[M, N], w: bf16[N], b: bf16[N]) -> bf16[M, N] {\n"
                          "  return layernorm(x, w, b, eps=1e-5)\n}\n",
        "rowsum": "fn f(x: f32[M, N]) -> f32[M] {\n  return sum(x, axis=-1)\n}\n",
        "rowmax": "fn f(x: f32[M, N]) -> f32[M] {\n  return max(x, axis=-1)\n}\n",
    }
    checks = [("softmax", 7, 20001), ("softmax", 2, 65536), ("softmax_bf16", 5, 50257),
              ("log_softmax_bf16", 3, 32000), ("layernorm_bf16", 9, 40000), ("rowsum", 3, 65536),
              ("softmax", 4, 65537), ("softmax", 3, 150001), ("rowmax", 1025, 64),
              ("softmax", 999, 63), ("layernorm_bf16", 17, 5120), ("softmax_bf16", 1003, 1000)]
    bad = 0
    for name, m, n in checks:
        if time.time() - T0 > 25:
            say(f"check {name} {m}x{n}: skipped (time)")
            continue
        ok, us, _, note = bench(progs[name], {"M": m, "N": n}, 3)
        bad += not ok
        say(f"check {name} {m}x{n}: {'verified' if ok else 'NOT VERIFIED'} {us:.1f} us {note}")
    if time.time() - T0 < 30:  # the scalar-load latency of the model (bench/latency.sh)
        env = dict(os.environ, LAT_LOADS="scalar vector", LAT_ROWS="1 8", OUT=OUT)
        p = subprocess.run(["bash", "bench/latency.sh"], capture_output=True, text=True, env=env,
                           timeout=25)
        for line in p.stdout.splitlines():
            say("latency: " + line)
    torch = {}
    try:
        torch = {r["name"]: r.get("torch_us") for r in json.load(open(TORCH_FROM))["rows"]}
    except (OSError, ValueError, KeyError):
        say(f"no stored torch.compile times in {TORCH_FROM}")
    want = sys.argv[1:] or [r["name"] for r in sweep.ROWS if r["kind"] == "reduction"]
    picked = []
    for s in want:  # in the order asked
        picked += [r for r in sweep.ROWS if s in r["name"] and r not in picked]
    for r in picked:
        if time.time() - T0 > 72:
            say(f"row {r['name']}: skipped (time)")
            continue
        ok, us, pred, note = bench(r["src"], r["dims"], 10)
        t = torch.get(r["name"])
        ratio = f"{t / us:.2f}x torch.compile ({t:.1f} us stored)" if t and us else "-"
        err = f"{100.0 * (pred - us) / us:+.0f}%" if us else "-"
        say(f"row {r['name']}: {us:.1f} us {'verified' if ok else 'NOT VERIFIED'}, {ratio}, "
            f"predicted {pred:.1f} us ({err}) {note}")
    say(f"rows_quick: {bad} checks not verified, {time.time() - T0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
