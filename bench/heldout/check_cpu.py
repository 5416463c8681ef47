#!/usr/bin/python3
"""The held-out programs of bench/heldout/ on the CPU path (run by tests/scripts/heldout.sh).

usage: check_cpu.py TXC ROOT [--all] [--only NAME,...] [--round N] [--plan-only] [--sizes K=V,...]

For each case of cases.py (the `fast` subset unless --all): the sm_90a plan at the case's GPU sizes
(`txc FILE --target=sm_90a`, the manifest): an attention program must be one attention kernel and
nothing else, and no matmul may fall off wgmma onto mma.sync; then `txc run` on --device=cpu (the
fused host code) and --device=ref (the reference interpreter) at each small ragged CPU size, every
output against the NumPy reference of cases.py (NaN where NumPy has NaN, else within the tolerance
of the returned dtype). Prints one line per check and a summary; exit 1 when any check failed."""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402

# Plans known to miss what a compiler engineer expects (each with the reason; the report of the
# heldout helper has the details). Their plan lines print "known" and do not fail the check; one
# that starts passing prints "fixed" (then remove it here).
KNOWN = {
    "attn_f16_d128": "a scale applied to q before q @ k^T stays a separate pointwise kernel ([attention.closed])",
    "swin_window_attn": "49 query rows per window: [attention.fa3] not taken (128-row tiles would idle), the mma.sync "
                        "online-softmax kernel runs",
    "attn_mla_dv": "q/k head dim 192, v head dim 128: [attention.fa3] takes D = Dv only; the mma.sync kernel runs "
                   "and visits every key tile",
    "attn_sd_cross": "head dim 40 (Stable Diffusion 1.5): [attention.fa3] takes D a multiple of 16 only; the "
                     "mma.sync online-softmax kernel runs",
    "attn_many_short": "S = 32: [attention.fa3] not taken: 32 query rows (decode): the 128-row tiles would idle; the "
                       "mma.sync online-softmax kernel runs (predicted 13.0 us against an HBM floor of 10.5 us)",
    "ner_head_n9": "log_softmax over N = 9 in its own kernel: [matmul.epilogue_reduction]: %6 reduces over "
                   "[64, 256, 9]; a matmul kernel fuses elementwise work only",
}
# (atol x the output's rms, rtol) by dtype; "bf16x2" (a case's tol): twice bf16's, for a bf16 block
# whose norms amplify the FlashAttention rounding of P (cases.py gemma2_block says why)
TOL = {"bf16": (2e-2, 2e-2), "bf16x2": (4e-2, 4e-2), "f16": (5e-3, 5e-3), "f32": (1e-4, 1e-4), "i32": (0, 0),
       "bool": (0, 0)}


def compare(got, want, dt):
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    atol, rtol = TOL[dt]
    g, w = got.astype(np.float64).ravel(), want.ravel()
    # sums over many terms: the absolute tolerance scales with the output's root mean square
    fin = w[np.isfinite(w)]
    scale = float(np.sqrt(np.mean(fin * fin))) if fin.size else 1.0
    scale = scale if scale > 0 else 1.0
    with np.errstate(invalid="ignore"):
        ok = np.where(np.isnan(w), np.isnan(g), np.where(np.isinf(w), g == w,
                                                         np.abs(g - w) <= atol * scale + rtol * np.abs(w)))
    bad = np.flatnonzero(~ok)
    if bad.size:
        i = bad[0]
        return "%d of %d elements differ; first at %d: got %r, want %r" % (bad.size, w.size, i, g[i], w[i])
    return None


def dims_args(dims):
    out = []
    for k, v in dims.items():
        out += ["-D", f"{k}={v}"]
    return out


def ret_dtypes(path):
    """The declared return dtypes of the entry (the last fn): 'f32', 'bf16', ... ([] when it declares
    none). The signature may span lines and hold comments anywhere, as the grammar allows."""
    src = re.sub(r"#[^\n]*", "", open(path).read())
    last = src[[m.start() for m in re.finditer(r"\bfn\s", src)][-1]:]
    depth, i = 0, last.index("(")
    for i in range(i, len(last)):  # the parameter list's closing parenthesis
        depth += {"(": 1, ")": -1}.get(last[i], 0)
        if depth == 0:
            break
    head = last[i + 1:last.index("{", i)].strip()
    if not head.startswith("->"):
        return []
    return re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\[", head[2:])


def plan(txc, path, dims, work):
    """The sm_90a manifest's kernels at dims: a list of (name, template), or an error string."""
    ptx = os.path.join(work, "p.ptx")
    r = subprocess.run([txc, path, "--target=sm_90a", "-o", ptx] + dims_args(dims),
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return r.stderr.strip()[-400:]
    text = open(ptx).read()
    body = {}  # each .entry's PTX text, by kernel name
    for part in text.split(".entry ")[1:]:
        body[part.split("(")[0].strip()] = part
    ks = []
    for k in json.load(open(ptx + ".json"))["kernels"]:
        t = k.get("template", "")
        if "mma.sync" in body.get(k["name"], "") and not t.startswith("mma-attn"):
            t = (t + " " if t else "") + "mma.sync"  # a tensor-core kernel off wgmma
        ks.append((k["name"], t))
    return ks


def skip_issue(txc, path, dims, work):
    """None when the sm_90a kernel computes a key range (its PTX is longer than the build with
    TX_ATTN_NO_SKIP=1, which visits every key tile), else what is wrong."""
    size = []
    for env in ({}, {"TX_ATTN_NO_SKIP": "1"}):
        ptx = os.path.join(work, "s.ptx")
        r = subprocess.run([txc, path, "--target=sm_90a", "-o", ptx] + dims_args(dims), capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, **env))
        if r.returncode:
            return r.stderr.strip()[-300:]
        size.append(len(open(ptx).read()))
    return None if size[0] > size[1] else "the kernel visits every key tile (no block sparsity)"


def plan_issue(c, ks):
    if isinstance(ks, str):
        return "compile failed: " + ks
    tm = [t for _, t in ks]
    if any(t.endswith("mma.sync") for t in tm) and not c.get("mma_sync"):
        return "a matmul off wgmma: %s" % tm
    if c["attention"]:
        att = [t for t in tm if ("attn" in t or t.startswith("fa3")) and "combine" not in t]
        if len(att) != 1 or (len(tm) != 1 and not any("combine" in t for t in tm)):
            return "not one attention kernel: %s" % tm
    if c["kernels"] is not None and len(tm) > c["kernels"]:
        return "%d kernels (at most %d expected): %s" % (len(tm), c["kernels"], tm)
    return None


def main():
    txc, root = sys.argv[1], sys.argv[2]
    flags = sys.argv[3:]
    only = None
    if "--only" in flags:
        only = flags[flags.index("--only") + 1].split(",")
    if "--round" in flags:  # the programs of one round: cases.ROUND<N>
        only = (only or []) + getattr(C, "ROUND" + flags[flags.index("--round") + 1])
    todo = [c for c in C.CASES if (only and c["name"] in only) or (not only and ("--all" in flags or c["fast"]))]
    if "--sizes" in flags:  # the CPU runs at these sizes instead of the case's own
        dims = {k: int(v) for k, v in (kv.split("=") for kv in flags[flags.index("--sizes") + 1].split(","))}
        todo = [dict(c, cpu=[dims]) for c in todo]
    fails = runs = 0
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as work:
        for c in todo:
            path = os.path.join(root, "bench", "heldout", c["name"] + ".tx")
            ks = plan(txc, path, c["gpu"], work)
            msg = plan_issue(c, ks)
            desc = "; ".join(t or n for n, t in ks) if not isinstance(ks, str) else ""
            known = KNOWN.get(c["name"]) if not isinstance(ks, str) else None
            tag = ("known" if msg else "fixed") if known else ("FAIL " if msg else "ok   ")
            print(f"{tag} {c['name']} sm_90a plan {C_d(c['gpu'])}: " + (msg if msg else f"{len(ks)} kernel(s): {desc}")
                  + (f" [known: {known}]" if known else ""), flush=True)
            fails += bool(msg) and not known
            runs += 1
            if c["name"] in C.BLOCK_SPARSE and not isinstance(ks, str):
                msg = skip_issue(txc, path, c["gpu"], work)
                print(("FAIL " if msg else "ok   ") + f"{c['name']} sm_90a skips dead key tiles"
                      + (": " + msg if msg else ""), flush=True)
                fails += bool(msg)
                runs += 1
            if "--plan-only" in flags:
                continue
            rdt = ret_dtypes(path)
            for dims in c["cpu"]:
                arrs = {}
                args = dims_args(dims)
                for nm, shape, dt, kind in c["inputs"]:
                    a = C.np_input(rng, C.shape_of(shape, dims), dt, kind, dims)
                    arrs[nm] = a
                    p = os.path.join(work, nm + ".npy")
                    np.save(p, a)
                    args += ["--input", f"{nm}={p}"]
                wants = {"ref": c["ref"](C.f64(arrs), dims)}
                # the host JIT against the fused plan's precision where it differs (values kept in f32 on chip)
                wants["cpu"] = c["ref_plan"](C.f64(arrs), dims) if c.get("ref_plan") else wants["ref"]
                for dev in ("cpu", "ref"):
                    want = wants[dev]
                    od = os.path.join(work, "out")
                    r = subprocess.run([txc, "run", path, "--device=" + dev, "--output-dir", od] + args,
                                       capture_output=True, text=True, timeout=300)
                    msg = r.stderr.strip()[-400:] if r.returncode else None
                    for i, w in enumerate(want):
                        if msg:
                            break
                        msg = compare(np.load(os.path.join(od, f"out{i}.npy")), w,
                                      c.get("tol") or (rdt[i] if i < len(rdt) else "f32"))
                        if msg:
                            msg = f"out{i}: {msg}"
                    print(("FAIL " if msg else "ok   ") + f"{c['name']} {C_d(dims)} --device={dev}"
                          + (": " + msg if msg else ""), flush=True)
                    fails += bool(msg)
                    runs += 1
    print(f"held-out programs: {runs - fails} of {runs} checks passed, {fails} failed")
    return 1 if fails else 0


def C_d(d):
    return " ".join(f"{k}={v}" for k, v in d.items())


if __name__ == "__main__":
    sys.exit(main())
