#!/usr/bin/env python3
"""plan-lines.py TXC [SUITE]: the plan of every held-out program at its GPU size (bench/heldout/
cases.py) and of every suite program (SUITE, default ../shared/bench/suite; its `bench:` sizes):
`TXC prog -D ... --target=sm_90a --explain` lines naming a kernel's rule or schedule, with the
predicted times cut, on stdout. Two compilers plan alike where their outputs are equal:

    diff <(tools/plan-lines.py OLD_TXC) <(tools/plan-lines.py build/txc)

(drop the `sed` of times, --times, to compare predictions too). Run from the repository root."""
import ast, glob, os, re, subprocess, sys


def heldout_jobs():
    tree = ast.parse(open("bench/heldout/cases.py").read())
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "case" and len(n.args) >= 3:
            gpu = n.args[2]
            dims = {k.arg: eval(compile(ast.Expression(k.value), "cases.py", "eval"), {})
                    for k in gpu.keywords}
            yield n.args[0].value, "bench/heldout/%s.tx" % n.args[0].value, dims


def suite_jobs(suite):
    for f in sorted(glob.glob(os.path.join(suite, "*.tx"))):
        m = re.search(r"bench:(.*)", open(f).read())
        defs = m.group(1).split() if m else []
        yield "suite/" + os.path.basename(f), f, dict(d.split("=") for d in defs if "=" in d)


def main():
    args = [a for a in sys.argv[1:] if a != "--times"]
    times = "--times" in sys.argv
    txc, suite = args[0], args[1] if len(args) > 1 else "../shared/bench/suite"
    for name, prog, dims in list(heldout_jobs()) + list(suite_jobs(suite)):
        defs = sum([["-D", "%s=%s" % kv] for kv in dims.items()], [])
        r = subprocess.run([txc, prog, *defs, "--target=sm_90a", "--explain", "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
        print("=== %s %s rc=%d" % (name, " ".join(defs), r.returncode))
        for line in (r.stdout + r.stderr).splitlines():
            if times or re.match(r"^k[0-9]+: \[", line):
                print(line if times else re.sub(r"predicted [0-9.]+ us.*", "", line))


main()
