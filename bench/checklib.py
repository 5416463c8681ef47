"""bench/checklib.py - what the GPU check scripts (bench/wgmma_check.py, bench/block_check.py,
bench/bmm_check.py, bench/bmm3d_check.py) share: a log and PASS/FAIL/SKIP step lines, running a
command with its output logged, the sm_90a plan of a program and a `txc bench` run under the GPU
lock, finding ptxas and reading `ptxas -v` (registers, spills, serialisation warnings), and timing a
torch callable with CUDA events and a flushed L2. Imported from the scripts' own directory
(python3 bench/X.py)."""
import os
import re
import shutil
import subprocess
import time


class Check:
    """One check run: the log file OUT/NAME.log, the steps (dicts step/ok/detail) and the names of
    the failed ones."""

    def __init__(self, out, name):
        os.makedirs(out, exist_ok=True)
        self.logf = open(os.path.join(out, name + ".log"), "w")
        self.steps = []
        self.fails = []

    def log(self, *a):
        print(" ".join(str(x) for x in a), file=self.logf, flush=True)

    def say(self, *a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        self.log(s)

    def step(self, name, ok, detail=""):
        """ok True, False or None (skipped); printed and logged as one line."""
        line = "%-4s %s %s" % ("PASS" if ok is True else "FAIL" if ok is False else "SKIP", name, detail)
        self.say(line)
        self.steps.append({"step": name, "ok": ok, "detail": detail})
        if ok is False:
            self.fails.append(name)

    def run(self, cmd, timeout=300, keep=4000):
        """(returncode, stdout, stderr); 124 and a message when it ran past timeout seconds."""
        self.log("$ " + " ".join(cmd))
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.log("  timed out after %ds" % timeout)
            return 124, "", "timed out after %ds" % timeout
        self.log("  rc=%d (%.1fs)" % (p.returncode, time.time() - t))
        if p.stdout.strip():
            self.log("  stdout: " + p.stdout[-keep:])
        if p.stderr.strip():
            self.log("  stderr: " + p.stderr[-keep:])
        return p.returncode, p.stdout, p.stderr

    def steps_text(self):
        return "\n".join("%s %s %s" % ("PASS" if s["ok"] is True else "FAIL" if s["ok"] is False else "SKIP",
                                       s["step"], s["detail"]) for s in self.steps)


def find_ptxas():
    """ptxas on PATH or in /usr/local/cuda/bin, else None."""
    p = shutil.which("ptxas")
    if p:
        return p
    return "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None


def ptxas_info(check, ptxas, ptx, arch="sm_90a"):
    """`ptxas -arch=ARCH -v` of the file ptx: {"rc", "regs" (per kernel, strings), "spills" (bytes of
    spill stores, summed), "warnings" (the serialisation warnings C7508/C7510/C7515 and any other
    warning line)}."""
    rc, out, err = check.run([ptxas, "-arch=" + arch, "-v", ptx, "-o", os.devnull])
    text = out + err
    return {"rc": rc,
            "regs": re.findall(r"Used (\d+) registers", text),
            "spills": sum(int(x) for x in re.findall(r"(\d+) bytes spill stores", text)),
            "warnings": [l.strip() for l in text.splitlines()
                         if "C7510" in l or "C7508" in l or "C7515" in l or "warning" in l.lower()]}


def cuda_time(fn, iters=20, warmup=3):
    """Median microseconds of fn() over iters runs, CUDA events around each, a 256 MiB buffer
    written before each (the L2 flushed), after warmup untimed runs."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    ts = []
    for _ in range(iters):
        flush.zero_()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000.0)
    ts.sort()
    return ts[len(ts) // 2]


def dargs(d):
    """-D NAME=VALUE arguments of the dims dict d."""
    return [x for k, v in d.items() for x in ("-D", f"{k}={v}")]


def tx_plan(txc, prog, dims, wd):
    """The sm_90a plan of program file prog at dims: each kernel's template (or its kNN name), None
    when it does not compile. Writes its PTX and manifest under wd."""
    import json
    ptx = os.path.join(wd, os.path.basename(prog) + ".ptx")
    r = subprocess.run([txc, prog, "--target=sm_90a", "-o", ptx] + dargs(dims), capture_output=True, text=True)
    if r.returncode:
        return None
    return [k.get("template") or k["name"].split("_")[-1] for k in json.load(open(ptx + ".json"))["kernels"]]


def tx_bench_locked(txc, prog, dims, iters, extra, lock, lf, env=None):
    """`txc bench --device=gpu --json` of prog at dims while holding the file lock `lock` (so the
    torch workers never time beside it); stderr logged to lf. (the "fused" result dict, None) or
    (None, a one-line error)."""
    import fcntl
    import json
    cmd = [txc, "bench", prog, "--device=gpu", "--random-inputs=1", "--iters", str(iters), "--json"] + extra + dargs(dims)
    with open(lock, "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=40,
                               env=dict(os.environ, **(env or {})))
            rc, so, se = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, so, se = 124, "", "timed out"
        finally:
            fcntl.flock(lk, fcntl.LOCK_UN)
    if se.strip():
        print(f"--- {os.path.basename(prog)[:-3]} {dims} rc {rc}\n{se.strip()[-1200:]}", file=lf, flush=True)
    try:
        res = json.loads(so[so.index("{"):])["fused"]
    except (ValueError, KeyError):
        return None, f"rc {rc}: " + ((se.strip().splitlines() or ["no output"])[-1][:160])
    return res, None
