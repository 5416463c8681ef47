#!/usr/bin/env python3
"""bench/red12_variants.py - times one program under several schedules of its first kernel's space
(the tuning cache names the schedule), on the GPU machine from the repository root with dist/:

    python3 bench/red12_variants.py FILE.tx "-D M=4096 -D N=65536" SCHED P0,P1[,..] [P0,P1 ...]

`txc tune` first writes a cache for the program (its key, device and driver; it prints the model's
candidates with their measured times); then for each parameter list the script rewrites that entry's
schedule and times `txc bench --tune-cache=...` (graph time, verified or not). Prints one line per
variant, then the fastest. Each step is capped; a failing one is reported and the others go on."""
import json
import os
import subprocess
import sys

TXC = os.environ.get("TXC", "dist/bin/txc")
OUT = os.environ.get("OUT", "red12-out")


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"


def main():
    src, dims, sched, variants = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4:]
    base = os.path.splitext(os.path.basename(src))[0] + "_" + "_".join(d.replace("=", "") for d in dims if d != "-D")
    cache = os.path.join(OUT, f"tune_{base}.json")
    rc, so, se = run([TXC, "tune", src, *dims, "--tune-cache=" + cache, "--iters", "10"], 40)
    print(f"variants {base}: txc tune rc {rc}")
    print("\n".join("  " + l for l in (so + se).strip().splitlines()[-12:]))
    try:
        doc = json.load(open(cache))
        entry = doc["entries"][0]
    except Exception as e:
        print(f"variants {base}: no tuning cache entry ({e}); nothing to vary")
        return 1
    best = None
    for v in variants:
        params = [int(x) for x in v.split(",")]
        entry["schedule"], entry["params"] = sched, params
        path = os.path.join(OUT, f"tv_{base}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        rc, so, se = run([TXC, "bench", src, *dims, "--device=gpu", "--random-inputs=1", "--iters", "10",
                          "--json", "--tune-cache=" + path], 40)
        try:
            res = json.loads(so[so.index("{"):])["fused"]
            us, ok = res["graph_us"], res["verified"]
            print(f"variant {base} {sched}({v}): {us:.1f} us{'' if ok else '  NOT VERIFIED'}", flush=True)
            if ok and (best is None or us < best[1]):
                best = (v, us)
        except Exception:
            print(f"variant {base} {sched}({v}): FAILED rc {rc}: {(se.strip().splitlines() or ['no output'])[-1][:200]}",
                  flush=True)
    if best:
        print(f"variants {base}: fastest {sched}({best[0]}) {best[1]:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
