#!/bin/bash
# row_stats.sh TXC ROOT - few long rows whose statistics feed a consumer of the same elements, at
# sizes where the new plans apply, end to end on the CPU path against NumPy: [reduction.row_split2]
# of one stage (a global norm and the clipped gradient, a global max then log-mel's floor, RMSNorm
# of 2 rows), [reduction.occupancy] streaming a 3-stage entropy row the model prices faster
# streamed than held at one block per SM, and [fusion.model_guard] splitting three dependent
# means of one row. For each: the rule in --explain (the plan), then txc run --device=cpu (the
# fused host code) and --device=ref (the interpreter) on the same NumPy inputs, every output
# against NumPy in float64. Exit 77 when /usr/bin/python3 lacks NumPy.
TXC=$1
ROOT=${2:-.}
PY=/usr/bin/python3
[ -x "$TXC" ] || { echo "skip: no txc"; exit 77; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "skip: $PY has no NumPy"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tx_rowstats.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
exec "$PY" - "$TXC" "$WORK" <<'PYEOF'
import os, subprocess, sys
import numpy as np
txc, work = sys.argv[1:3]
rng = np.random.default_rng(12)

def gclip(g):
    n = np.sqrt(np.sum(g.astype(np.float64) ** 2))
    return [g * min(1.0 / (n + 1e-6), 1.0), np.array(n)]

def logmel(mel):
    l = np.log(np.maximum(mel.astype(np.float64), 1e-10)) / np.log(10.0)
    l = np.maximum(l, l.max() - 8.0)
    return [(l + 4.0) / 4.0]

def rms(x):
    x = x.astype(np.float64)
    return [x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)]

def entropy(x):
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    lp = x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))
    return [-np.sum(np.exp(lp) * lp, axis=-1)]

def multi3(x):
    x = x.astype(np.float64)
    d = x - x.mean(axis=-1, keepdims=True)
    e = d - d.mean(axis=-1, keepdims=True)
    return [e / np.sum(e * e, axis=-1, keepdims=True)]

CASES = [
    ("gclip", "fn f(g: f32[N]) -> (f32[N], f32[]) {\n  nrm = sqrt(sum(g * g))\n"
     "  return g * minimum(1.0 / (nrm + 1e-6), 1.0), nrm\n}\n", {"N": 1000003}, [(1000003,)],
     "[reduction.row_split2]", gclip),
    ("logmel", "fn f(mel: f32[80, T]) -> f32[80, T] {\n  l = log(maximum(mel, 1e-10)) / log(10.0)\n"
     "  l = maximum(l, max(l) - 8.0)\n  return (l + 4.0) / 4.0\n}\n", {"T": 3001}, [(80, 3001)],
     "[reduction.row_split2]", logmel),
    ("rms", "fn f(x: f32[M, N]) -> f32[M, N] {\n"
     "  return x * rsqrt(mean(x * x, axis=-1, keepdim=true) + 1e-6)\n}\n", {"M": 2, "N": 300007},
     [(2, 300007)], "[reduction.row_split2]", rms),
    ("entropy", "fn f(x: f32[M, N]) -> f32[M] {\n  lp = log_softmax(x, axis=-1)\n"
     "  return -sum(exp(lp) * lp, axis=-1)\n}\n", {"M": 265, "N": 30000}, [(265, 30000)],
     "streamed (multipass in 3 passes", entropy),
    ("multi3", "fn f(x: f32[M, N]) -> f32[M, N] {\n  d = x - mean(x, axis=-1, keepdim=true)\n"
     "  e = d - mean(d, axis=-1, keepdim=true)\n  return e / sum(e * e, axis=-1, keepdim=true)\n}\n",
     {"M": 1, "N": 1048576}, [(1, 1048576)], "[fusion.model_guard] the merged reduction kernel", multi3),
]
bad = 0
for name, src, dims, shapes, rule, ref in CASES:
    path = os.path.join(work, name + ".tx")
    open(path, "w").write(src)
    D = [x for k, v in dims.items() for x in ("-D", "%s=%d" % (k, v))]
    r = subprocess.run([txc, path, "--explain", "--emit=report", "-o", os.devnull] + D,
                       capture_output=True, text=True)
    if r.returncode or rule not in r.stdout + r.stderr:
        print("FAIL %s: the plan does not say %r" % (name, rule))
        bad = 1
        continue
    ins, opts = [], []
    pname = src.split("(", 1)[1].split(":", 1)[0]
    for i, sh in enumerate(shapes):
        a = (rng.standard_normal(sh) * 3).astype(np.float32)
        if name == "logmel":
            a = np.abs(a) * np.where(rng.random(sh) < 0.01, 0, 1).astype(np.float32)
        f = os.path.join(work, "%s_in%d.npy" % (name, i))
        np.save(f, a)
        ins.append(a)
        opts += ["--input", "%s=%s" % (pname, f)]
    want = ref(*ins)
    for dev in ("cpu", "ref"):
        od = os.path.join(work, name + "_" + dev)
        r = subprocess.run([txc, "run", path, "--device=" + dev, "--output-dir", od] + D + opts,
                           capture_output=True, text=True)
        if r.returncode:
            print("FAIL %s --device=%s: %s" % (name, dev, r.stderr.strip()[:300]))
            bad = 1
            continue
        for k, w in enumerate(want):
            got = np.load(os.path.join(od, "out%d.npy" % k)).astype(np.float64)
            ok = got.shape == np.shape(w) and np.allclose(got, w, rtol=1e-4, atol=1e-5)
            err = np.max(np.abs(got - w)) if got.shape == np.shape(w) else float("nan")
            print("%s %s --device=%s out%d: max |err| %.3g" % ("ok  " if ok else "FAIL", name, dev, k, err))
            bad |= not ok
print("row_stats: %s" % ("failed" if bad else "all passed"))
sys.exit(bad)
PYEOF
