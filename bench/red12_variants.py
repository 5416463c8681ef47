#!/usr/bin/env python3
"""bench/red12_variants.py - times one program under several schedules of its first kernel's space
(the tuning cache names the schedule), on the GPU machine from the repository root with dist/:

    python3 bench/red12_variants.py FILE.tx "-D M=4096 -D N=65536" SCHED P0,P1[,..][@VAR=VALUE] [...]

The planned program is timed first (`txc bench --no-tune-cache`, which also names the device); then
for each parameter list a tuning cache of one entry (the kernel's key from `txc --emit=json`, that
device) names the schedule and `txc bench --tune-cache=...` times it (graph time, verified or not).
A variant's `@VAR=VALUE` suffix runs it with that environment variable set (a codegen measurement
knob). ITERS (default 10) sets the timed iterations; SKIP_PLANNED=1 leaves out the planned run.
Prints one line per variant, then the fastest. Each step is capped; a failing one is reported and
the others go on."""
import json
import os
import subprocess
import sys

TXC = os.environ.get("TXC", "dist/bin/txc")
OUT = os.environ.get("OUT", "red12-out")


def run(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **env) if env else None)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"


def bench(src, dims, extra, env=None):
    """graph us, verified, device name of one txc bench run (None on failure, with why)."""
    rc, so, se = run([TXC, "bench", src, *dims, "--device=gpu", "--random-inputs=1", "--iters",
                      os.environ.get("ITERS", "10"), "--json", *extra], 40, env)
    try:
        res = json.loads(so[so.index("{"):])
        return res["fused"]["graph_us"], res["fused"]["verified"], res.get("device", ""), ""
    except Exception:
        return None, False, "", f"rc {rc}: " + (se.strip().splitlines() or ["no output"])[-1][:200]


def main():
    src, dims, sched, variants = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4:]
    base = os.path.splitext(os.path.basename(src))[0] + "_" + "_".join(d.replace("=", "") for d in dims if d != "-D")
    rc, so, se = run([TXC, src, *dims, "--emit=json", "-o", "-", "--no-tune-cache"], 30)
    try:
        ks = json.loads(so)["kernels"]
        k = next(k for k in ks if k.get("schedule"))
        key, planned = k["schedule"]["key"], k["schedule"]
    except Exception as e:
        print(f"variants {base}: no kernel schedule key (rc {rc}, {e})")
        return 1
    pl = ",".join(str(v) for v in planned.get("parameters", {}).values())
    best, device = None, ""
    if os.environ.get("SKIP_PLANNED") != "1":
        us, ok, device, why = bench(src, dims, ["--no-tune-cache"])
        if us is None:
            print(f"variant {base} planned {planned['name']}({pl}): FAILED {why}")
            return 1
        print(f"variant {base} planned {planned['name']}({pl}): {us:.1f} us{'' if ok else '  NOT VERIFIED'}",
              flush=True)
        best = (f"planned {planned['name']}({pl})", us) if ok else None
    for v in variants:
        v, _, ev = v.partition("@")
        env = dict([ev.split("=", 1)]) if ev else None
        doc = {"tx_tune_cache": 1, "entries": [{"key": key, "gpu": "h200", "device": device, "driver": 0,
                                                "schedule": sched, "params": [int(x) for x in v.split(",")],
                                                "candidates": []}]}
        path = os.path.join(OUT, f"tv_{base}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        rc, so, se = run([TXC, src, *dims, "--explain", "-o", os.devnull, "--tune-cache=" + path], 30)
        if "[schedule.invalid]" in so + se:
            print(f"variant {base} {sched}({v}): not in the kernel's schedule space", flush=True)
            continue
        us, ok, _, why = bench(src, dims, ["--tune-cache=" + path], env)
        tag = f"{sched}({v}){' ' + ev if ev else ''}"
        if us is None:
            print(f"variant {base} {tag}: FAILED {why}", flush=True)
            continue
        print(f"variant {base} {tag}: {us:.1f} us{'' if ok else '  NOT VERIFIED'}", flush=True)
        if ok and (best is None or us < best[1]):
            best = (tag, us)
    if best:
        print(f"variants {base}: fastest {best[0]} {best[1]:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
