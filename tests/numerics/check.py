#!/usr/bin/python3
"""Numerics at the edges (docs/reliability.md), run by tests/scripts/numerics.sh.

usage: check.py TXC ROOT [CASE-SUBSTRING]

Each case runs one program of tests/numerics/ on .npy inputs holding NaN,
+-Inf, +-0, denormals, near-overflow values, empty dims, ragged sizes and
size-1 broadcasts, with `txc run` on --device=ref (the reference
interpreter), --device=cpu (the fused host code) and --device=cpu --no-fuse.
Every output of cpu and cpu --no-fuse must match ref: same dtype and shape,
NaN exactly where ref has NaN, the same infinities, finite values within a
per-dtype tolerance. A case with an empty dim may instead be refused, but
then by every device alike (exit 1 with an error line) - never a crash.
Exit status: 0 when every case agrees, 1 otherwise."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

TOL = {  # dtype: (atol, rtol), as runtime/ rt_tolerance
    np.dtype("float32"): (1e-5, 1e-4),
    np.dtype("float16"): (1e-3, 1e-2),
}
BF16_TOL = (1e-2, 2e-2)  # bf16 outputs arrive as <f4; the ref rounds every stored value to bf16
ERR_LINE = re.compile(r"^(txc: error: .+|.+:\d+:\d+: error: .+)$", re.M)


def specials(dtype):
    if dtype == "f2":
        return [np.nan, np.inf, -np.inf, 0.0, -0.0, 6e-8, -6e-8, 6.1e-5, 65504.0, -65504.0, 1.0, -1.0]
    return [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.4e-45, 3.0e38, -3.0e38, 1.0, -1.0, 1e-30]


def filled(shape, dtype="f4", seed=0, every=5, offset=0, pattern=None):
    """Normal values with a special every `every` elements (cycling through
    `pattern` or specials(dtype), starting at `offset`)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(int(np.prod(shape, dtype=np.int64))).astype(np.float64)
    sp = pattern if pattern is not None else specials(dtype)
    for j, i in enumerate(range(offset % every if every else 0, a.size, every or a.size + 1)):
        a[i] = sp[j % len(sp)]
    with np.errstate(over="ignore"):
        return a.reshape(shape).astype("<" + dtype)


def rows(shape, seed=0):
    """A matrix whose rows are: normal, one NaN, one +Inf, all -Inf,
    denormals only, constant, +Inf and -Inf together, then normal."""
    rng = np.random.default_rng(seed)
    m, n = shape
    a = rng.standard_normal(shape).astype(np.float32)
    kinds = ["normal", "nan", "inf", "allneginf", "denormal", "const", "infs", "normal"]
    for i in range(m):
        k = kinds[i % len(kinds)]
        if n == 0:
            break
        if k == "nan":
            a[i, n // 2] = np.nan
        elif k == "inf":
            a[i, n - 1] = np.inf
        elif k == "allneginf":
            a[i, :] = -np.inf
        elif k == "denormal":
            a[i, :] = np.float32(1e-40) * (1 + np.arange(n) % 3)
        elif k == "const":
            a[i, :] = 3.0
        elif k == "infs":
            a[i, 0] = np.inf
            a[i, n - 1] = -np.inf if n > 1 else np.inf
    return a


def normal(shape, seed=0, dtype="f4"):
    return np.random.default_rng(seed).standard_normal(shape).astype("<" + dtype)


def cases():
    """Yields (name, program, {param: array}, empty) for every case."""
    for n in (1, 7, 33, 1031, 4099):
        yield f"pointwise N={n}", "pointwise.tx", {
            "x": filled((n,), seed=n),
            "y": filled((n,), seed=n + 1, every=3, offset=1)}, False
    for m, n in ((1, 1), (5, 7), (8, 33), (9, 1025), (3, 4097)):
        yield f"reduce {m}x{n}", "reduce.tx", {"x": rows((m, n), seed=n)}, False
    for m, n in ((0, 5), (3, 0)):
        yield f"reduce {m}x{n} (empty)", "reduce.tx", {"x": np.zeros((m, n), "<f4")}, True
        yield f"empty {m}x{n}", "empty.tx", {"x": np.zeros((m, n), "<f4")}, True
    for m, n in ((1, 1), (8, 7), (8, 1027)):
        yield f"norm {m}x{n}", "norm.tx", {"x": rows((m, n), seed=m), "w": normal((n,), 1),
                                            "b": normal((n,), 2)}, False
    for m, k, n in ((1, 1, 1), (7, 13, 5), (33, 65, 17), (2, 129, 3)):
        a = normal((m, k), 3)
        b = normal((k, n), 4)
        if m > 1:
            a[1, k // 2] = np.nan
        b[0, n - 1] = np.inf
        a[0, 0] = 0.0  # 0 * Inf = NaN in out[0, n-1]
        if k > 1:
            b[1, 0] = np.float32(1e-40)
        yield f"matmul {m}x{k}x{n}", "matmul.tx", {"a": a, "b": b, "c": filled((n,), seed=5, every=4)}, False
    yield "matmul 3x0x4 (empty K)", "matmul.tx", {"a": np.zeros((3, 0), "<f4"), "b": np.zeros((0, 4), "<f4"),
                                                   "c": normal((4,), 6)}, True
    for m, n in ((1, 1), (1, 7), (5, 1), (33, 17)):
        yield f"broadcast {m}x{n}", "broadcast.tx", {
            "x": normal((m, n), 7), "r": filled((m, 1), seed=8, every=2),
            "c": filled((1, n), seed=9, every=3, offset=1), "s": np.array(0.5, "<f4")}, False
    for m, n in ((1, 1), (3, 7), (4, 1031)):
        yield f"half {m}x{n} (bf16 tolerance)", "half.tx", {
            "x": filled((m, n), "f2", seed=10),
            "y": filled((m, n), "f4", seed=11, every=4,
                        pattern=[np.nan, np.inf, 1e-40, 3.3e38, 1.00390625, -0.0, 70000.0])}, False
    for b, h, s, d in ((1, 1, 1, 1), (1, 2, 5, 3), (2, 1, 17, 7)):
        q = normal((b, h, s, d), 12)
        if s > 1:
            q[0, 0, 1, 0] = np.nan
        yield f"attention {b}x{h}x{s}x{d}", "attention.tx", {"q": q, "k": normal((b, h, s, d), 13),
                                                             "v": normal((b, h, s, d), 14)}, False
    big = np.array([0, -2147483648, 2147483647, 7, -1, 2147483647, -2147483648, 65536], "<i4")
    yield "ints no overflow N=33", "ints.tx", {
        "x": np.arange(-16, 17, dtype="<i4") * 3, "y": np.arange(33, dtype="<i4") % 5 - 2,
        "z": (np.arange(33, dtype="<f4") - 16) * 0.75}, False
    yield "ints overflow N=8", "ints.tx", {
        "x": big, "y": np.array([0, -1, 2, 0, 0, 1, -1, 65536], "<i4"),
        "z": np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 2147483520.0], "<f4")}, False
    for s_, t in ((1, 1), (5, 7), (33, 1030)):
        yield f"index {s_}x{t}", "index.tx", {"x": filled((s_, t), seed=17), "m": normal((s_, t), 18) > 0}, False
    for n in (1, 7, 33):
        yield f"views N={n}", "views.tx", {"a": filled((n, 5), seed=15), "b": filled((5, n), seed=16)}, False


def run(txc, prog, files, device, outdir, extra=()):
    """Runs txc run; returns (exit status, stderr, outputs or None)."""
    args = [txc, "run", prog, "--device=" + device, "--output-dir", outdir, *extra]
    for name, path in files.items():
        args += ["--input", f"{name}={path}"]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=120, errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "timeout after 120 s", None
    if p.returncode != 0:
        return p.returncode, p.stderr, None
    outs, k = [], 0
    while os.path.exists(os.path.join(outdir, f"out{k}.npy")):
        outs.append(np.load(os.path.join(outdir, f"out{k}.npy")))
        k += 1
    return 0, p.stderr, outs


def compare(got, ref, what, bf16=False):
    """Returns a list of problems (empty when got matches ref); bf16: the
    float32 arrays hold bf16 values."""
    if got.dtype != ref.dtype:
        return [f"{what}: dtype {got.dtype}, reference {ref.dtype}"]
    if got.shape != ref.shape:
        return [f"{what}: shape {got.shape}, reference {ref.shape}"]
    if ref.dtype.kind in "biu":
        bad = np.flatnonzero(got != ref)
        return [f"{what}: {bad.size} elements differ, first at {bad[0]}: {got.flat[bad[0]]} vs {ref.flat[bad[0]]}"] if bad.size else []
    g = got.astype(np.float64).ravel()
    r = ref.astype(np.float64).ravel()
    atol, rtol = BF16_TOL if bf16 else TOL.get(ref.dtype, BF16_TOL)
    problems = []
    gn, rn = np.isnan(g), np.isnan(r)
    if (gn != rn).any():
        i = np.flatnonzero(gn != rn)
        problems.append(f"{what}: NaN positions differ at {i.size} elements, first at {i[0]}: got {g[i[0]]}, reference {r[i[0]]}")
    gi, ri = np.isinf(g), np.isinf(r)
    both = ~(gn | rn)
    infbad = both & ((gi != ri) | (gi & ri & (np.sign(g) != np.sign(r))))
    if infbad.any():
        i = np.flatnonzero(infbad)
        problems.append(f"{what}: infinities differ at {i.size} elements, first at {i[0]}: got {g[i[0]]}, reference {r[i[0]]}")
    fin = both & ~gi & ~ri
    with np.errstate(over="ignore", invalid="ignore"):
        off = fin & (np.abs(g - r) > atol + rtol * np.abs(r))
    if off.any():
        i = np.flatnonzero(off)
        problems.append(f"{what}: {i.size} finite elements out of tolerance (atol {atol}, rtol {rtol}), first at {i[0]}: got {g[i[0]]}, reference {r[i[0]]}")
    return problems


def check_case(txc, root, work, name, prog, inputs, empty):
    files = {}
    for pname, arr in inputs.items():
        path = os.path.join(work, f"{pname}.npy")
        np.save(path, arr)
        files[pname] = path
    prog = os.path.join(root, "tests", "numerics", prog)
    results = {}
    for label, dev, extra in (("ref", "ref", ()), ("cpu", "cpu", ()), ("cpu --no-fuse", "cpu", ("--no-fuse",))):
        outdir = os.path.join(work, "out_" + label.replace(" ", "_").replace("-", ""))
        results[label] = run(txc, prog, files, dev, outdir, extra)
    problems = []
    for label, (rc, err, outs) in results.items():
        if rc >= 124 or rc < 0 or re.search(r"Sanitizer|runtime error:", err):
            problems.append(f"{label}: crashed or hung (exit {rc}): {err.strip()[:300]}")
        elif rc not in (0, 1):
            problems.append(f"{label}: exit {rc}")
        elif rc == 1 and not ERR_LINE.search(err):
            problems.append(f"{label}: exit 1 without an error line: {err.strip()[:300]}")
    if problems:
        return problems
    codes = {label: r[0] for label, r in results.items()}
    if any(codes.values()):
        if empty and all(c == 1 for c in codes.values()):
            return []  # refused alike everywhere: allowed for empty dims
        return [f"{label}: exit {rc}: {results[label][1].strip()[:300]}" for label, rc in codes.items() if rc]
    ref = results["ref"][2]
    if not ref:
        return ["ref wrote no outputs"]
    for label in ("cpu", "cpu --no-fuse"):
        outs = results[label][2]
        if len(outs) != len(ref):
            problems.append(f"{label}: {len(outs)} outputs, reference {len(ref)}")
            continue
        for k, (g, r) in enumerate(zip(outs, ref)):
            problems += compare(g, r, f"{label} out{k}", bf16="bf16" in name)
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    txc, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    npass = nfail = 0
    with tempfile.TemporaryDirectory(prefix="tx-numerics.") as tmp:
        for i, (name, prog, inputs, empty) in enumerate(cases()):
            if only not in name:
                continue
            work = os.path.join(tmp, str(i))
            os.makedirs(work)
            problems = check_case(txc, root, work, name, prog, inputs, empty)
            if problems:
                nfail += 1
                print(f"FAIL {name}")
                for p in problems[:6]:
                    print(f"     {p}")
            else:
                npass += 1
                print(f"ok   {name}")
    print(f"numerics: {npass} passed, {nfail} failed")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
