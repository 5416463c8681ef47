#!/bin/bash
# split_side.sh TXC ROOT - [reduction.row_split] with side outputs: a long row reduction that also
# stores the elementwise values of its domain it reads (GradScaler.unscale_: u = g * (1 / scale),
# stored, with all-finite flags and the norm of u). For each case: the plan at a size of the
# held-out benchmark (sm_90a: the kernel count and the split rule in --explain), the PTX of that
# plan assembled by ptxas (no spills), then txc run --device=cpu (the fused host code) and
# --device=ref (the interpreter) at a ragged size on the same NumPy inputs (with infs and NaNs
# where the case checks finiteness), every output against NumPy in float64. Exit 77 without NumPy.
TXC=$1
ROOT=${2:-.}
. "$(dirname "$0")/lib/setup.sh" "$@"
exec "$PY" - "$TXC" "$ROOT" "$W" "$PTXAS" <<'PYEOF'
import os, re, subprocess, sys
import numpy as np
txc, root, work, ptxas = sys.argv[1:5]
rng = np.random.default_rng(7)

def norm_of_half(g):
    u = g.astype(np.float64) * 0.5
    return [u, np.array(np.sum(u * u))]

def amp(g1, g2, scale):
    inv = 1.0 / np.float64(scale)
    u1, u2 = g1.astype(np.float64) * inv, g2.astype(np.float64) * inv
    bad1 = float(not np.all(np.abs(u1) < np.inf))
    bad2 = float(not np.all(np.abs(u2) < np.inf))
    with np.errstate(invalid="ignore"):
        nrm = np.sqrt(np.sum(u1 * u1))
    return [u1, u2, np.array(max(bad1, bad2)), np.array(bool(np.all(np.abs(u2) < np.inf))),
            np.array(nrm)]

def multi3(x):
    x = x.astype(np.float64)
    d = x - x.mean(axis=-1, keepdims=True)
    e = d - d.mean(axis=-1, keepdims=True)
    return [e / np.sum(e * e, axis=-1, keepdims=True)]

MULTI3 = ("fn f(x: f32[M, N]) -> f32[M, N] {\n  d = x - mean(x, axis=-1, keepdim=true)\n"
          "  e = d - mean(d, axis=-1, keepdim=true)\n  return e / sum(e * e, axis=-1, keepdim=true)\n}\n")
MIN = "fn f(g1: f32[N]) -> (f32[N], f32[]) {\n  u1 = g1 * 0.5\n  return u1, sum(u1 * u1)\n}\n"
CASES = [
    # name, source or file, plan dims, kernels planned there, ragged dims, input shapes, ref, poison
    ("half_norm", MIN, {"N": 16777216}, 1, {"N": 1000003}, [(1000003,)], norm_of_half, None),
    # [fusion.model_guard] rejects the merged kernel of three dependent means (cluster_stream):
    # its reductions apart, each with its pointwise work (4 regions), not one per operation (7);
    # 6 kernels launched: the two row splits' statistics kernels (the report counts them)
    ("guard_apart", MULTI3, {"M": 1, "N": 1048576}, 6, {"M": 1, "N": 1048573}, [(1, 1048573)],
     multi3, None),
    ("amp_unscale", os.path.join(root, "bench/heldout/amp_unscale.tx"),
     {"N": 16777216, "R": 4096, "C": 4096}, 2, {"N": 1000003, "R": 1001, "C": 999},
     [(1000003,), (1001, 999), ()], amp, None),
    ("amp_unscale_inf", os.path.join(root, "bench/heldout/amp_unscale.tx"),
     {"N": 16777216, "R": 4096, "C": 4096}, 2, {"N": 1000003, "R": 1001, "C": 999},
     [(1000003,), (1001, 999), ()], amp, "inf"),
    ("amp_unscale_nan", os.path.join(root, "bench/heldout/amp_unscale.tx"),
     {"N": 16777216, "R": 4096, "C": 4096}, 2, {"N": 1000003, "R": 1001, "C": 999},
     [(1000003,), (1001, 999), ()], amp, "nan"),
]

def dargs(dims):
    return [x for k, v in dims.items() for x in ("-D", "%s=%d" % (k, v))]

bad = 0
for name, src, pdims, nk, rdims, shapes, ref, poison in CASES:
    if src.startswith("fn "):
        path = os.path.join(work, name + ".tx")
        open(path, "w").write(src)
    else:
        path = src
    r = subprocess.run([txc, path, "--target=sm_90a", "--explain", "--emit=report", "-o", "-"]
                       + dargs(pdims), capture_output=True, text=True)
    tot = re.search(r"totals: (\d+) kernels", r.stdout)
    splits = len(re.findall(r"^k\d+: \[reduction\.row_split\]", r.stdout + r.stderr, re.M))
    if r.returncode or not tot or int(tot.group(1)) != nk or splits < 1:
        print("FAIL %s: planned %s kernels (%d row_split), want %d: %s" %
              (name, tot.group(1) if tot else "?", splits, nk, r.stderr.strip()[:300]))
        bad = 1
        continue
    print("ok   %s: %d kernels at %s, %d of them reduction.row_split" % (name, nk, pdims, splits))
    if os.access(ptxas, os.X_OK) and poison is None:
        ptx = os.path.join(work, name + ".ptx")
        r = subprocess.run([txc, path, "--target=sm_90a", "-o", ptx] + dargs(pdims),
                           capture_output=True, text=True)
        a = subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx, "-o", os.devnull],
                           capture_output=True, text=True) if not r.returncode else r
        spill = re.findall(r"(\d+) bytes spill stores", a.stderr)
        if a.returncode or any(int(s) for s in spill):
            print("FAIL %s: ptxas: %s" % (name, (a.stderr or r.stderr).strip()[:300]))
            bad = 1
        else:
            print("ok   %s: ptxas sm_90a, no spills" % name)
    ins, opts = [], []
    pnames = re.findall(r"(\w+):", src.split("(", 1)[1].split(")", 1)[0]) if src.startswith("fn ") \
        else re.findall(r"(\w+):", open(path).read().split("fn ", 1)[1].split(")", 1)[0])
    for i, sh in enumerate(shapes):
        a = (rng.standard_normal(sh) * 3).astype(np.float32)
        if sh == ():
            a = np.array(1024.0, dtype=np.float32)  # the loss scale
        elif poison and i == (1 if poison == "inf" else 0):  # one non-finite gradient (an inf
            # in g2: bad2 and the all-finite flag; a NaN in g1: bad1 and the norm)
            a.flat[a.size // 2] = np.inf if poison == "inf" else np.nan
        f = os.path.join(work, "%s_in%d.npy" % (name, i))
        np.save(f, a)
        ins.append(a)
        opts += ["--input", "%s=%s" % (pnames[i], f)]
    want = ref(*ins)
    for dev in ("cpu", "ref"):
        od = os.path.join(work, name + "_" + dev)
        r = subprocess.run([txc, "run", path, "--device=" + dev, "--output-dir", od]
                           + dargs(rdims) + opts, capture_output=True, text=True)
        if r.returncode:
            print("FAIL %s --device=%s: %s" % (name, dev, r.stderr.strip()[:300]))
            bad = 1
            continue
        for k, w in enumerate(want):
            got = np.load(os.path.join(od, "out%d.npy" % k)).astype(np.float64)
            w = np.asarray(w, dtype=np.float64)
            ok = got.shape == w.shape and np.allclose(got, w, rtol=1e-4, atol=1e-5, equal_nan=True)
            with np.errstate(invalid="ignore"):
                d = np.abs(got - w) if ok else np.zeros(1)
            err = np.max(d[np.isfinite(d)], initial=0.0)
            print("%s %s --device=%s out%d: max |err| %.3g" % ("ok  " if ok else "FAIL", name, dev,
                                                                k, err))
            bad |= not ok
print("split_side: %s" % ("failed" if bad else "all passed"))
sys.exit(bad)
PYEOF
