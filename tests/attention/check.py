#!/usr/bin/python3
"""Attention variants against NumPy (run by tests/scripts/attention_variants.sh).

usage: check.py TXC ROOT

Each examples/attention_*.tx runs with `txc run` on --device=cpu (the fused host code: the one
online-softmax kernel) and --device=ref (the reference interpreter) on .npy inputs, at ragged sizes
(S = 1, S not a multiple of any tile), with rows wholly masked (a length of 0, a mask row of false)
and decode caches of length 1 and full. Every output must match the NumPy expression written
below: NaN exactly where NumPy has NaN (softmax of a row of -inf is NaN, as in PyTorch eager),
finite values within the bf16 tolerance. Exit status 0 when every case agrees."""
import os
import subprocess
import sys
import tempfile

import numpy as np

SC = 0.08838834764831845
ATOL, RTOL = 2e-2, 2e-2
RNG = np.random.default_rng(13)


def rb(x):
    """Round to bf16 (nearest even), in float64."""
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    r = b.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(x), np.nan, r)


def bf(shape):
    return rb(RNG.standard_normal(shape).astype(np.float32))


def attend(s, v):
    with np.errstate(invalid="ignore"):
        m = s.max(axis=-1, keepdims=True)
        e = np.exp(s - m)
        p = e / e.sum(axis=-1, keepdims=True)
    return rb(rb(p) @ v)


def scores(q, k):
    """f32(q @ kT) * scale: the product of bf16 operands is a bf16 value."""
    return rb(q @ np.swapaxes(k, -1, -2)) * SC


def ij(s):
    return np.arange(s)[:, None], np.arange(s)[None, :]


def case_causal(b, h, s):
    q, k, v = bf((b, h, s, 128)), bf((b, h, s, 128)), bf((b, h, s, 128))
    i, j = ij(s)
    return {"q": q, "k": k, "v": v}, attend(np.where(i >= j, scores(q, k), -np.inf), v)


def case_scale_last(b, h, s):
    """GPT-2 / GPT-J eager order: mask, then / sqrt(128)"""
    q, k, v = bf((b, h, s, 128)), bf((b, h, s, 128)), bf((b, h, s, 128))
    i, j = ij(s)
    return {"q": q, "k": k, "v": v}, attend(np.where(i >= j, rb(q @ np.swapaxes(k, -1, -2)), -np.inf) / 11.313708498984761, v)


def case_window(b, h, s):
    q, k, v = bf((b, h, s, 128)), bf((b, h, s, 128)), bf((b, h, s, 128))
    i, j = ij(s)
    return {"q": q, "k": k, "v": v}, attend(np.where((i - j >= 0) & (i - j < 1024), scores(q, k), -np.inf), v)


def case_alibi(b, h, s):
    q, k, v = bf((b, h, s, 128)), bf((b, h, s, 128)), bf((b, h, s, 128))
    sl = (2.0 ** (-8.0 * np.arange(1, h + 1) / h)).astype(np.float32)
    i, j = ij(s)
    bias = sl.astype(np.float64)[:, None, None] * (j - i)
    return {"q": q, "k": k, "v": v, "slopes": sl}, attend(np.where(i >= j, scores(q, k) + bias, -np.inf), v)


def case_softcap(b, h, s):
    q, k, v = bf((b, h, s, 128)) * 8, bf((b, h, s, 128)), bf((b, h, s, 128))
    q = rb(q)
    i, j = ij(s)
    c = 50.0 * np.tanh(scores(q, k) / 50.0)
    return {"q": q, "k": k, "v": v}, attend(np.where(i >= j, c, -np.inf), v)


def case_mask(b, h, s):
    q, k, v = bf((b, h, s, 128)), bf((b, h, s, 128)), bf((b, h, s, 128))
    m = RNG.random((b, 1, s, s)) < 0.7
    m[0, 0, s // 2, :] = False  # a row wholly masked: NaN
    bias = bf((h, s, s))
    return {"q": q, "k": k, "v": v, "m": m, "bias": bias}, attend(np.where(m, scores(q, k) + bias, -np.inf), v)


def case_padmask(b, h, s):
    """HF's additive mask (1 - keep) * finfo(f32).min from lengths 1, S, 0 (a wholly padded row:
    every score -3.4e38 in f32, softmax uniform as in PyTorch eager, not NaN)."""
    q, k, v = bf((b, h, s, 64)), bf((b, h, s, 64)), bf((b, h, s, 64))
    ln = lengths(b, s)
    keep = (np.arange(s)[None, :] < ln[:, None]).astype(np.float32)[:, None, None, :]
    ext = (np.float32(1) - keep) * np.float32(-3.4028234663852886e38)
    sc = (rb(q @ np.swapaxes(k, -1, -2)) / 8).astype(np.float32) + ext
    return {"q": q, "k": k, "v": v, "len": ln}, attend(sc.astype(np.float64), v)


def case_gqa(b, s):
    q, k, v = bf((b, 32, s, 128)), bf((b, 8, s, 128)), bf((b, 8, s, 128))
    i, j = ij(s)
    sg = scores(q.reshape(b, 8, 4, s, 128), k[:, :, None])
    o = attend(np.where(i >= j, sg, -np.inf), v[:, :, None])
    return {"q": q, "k": k, "v": v}, o.reshape(b, 32, s, 128)


def rh(x):
    """Round to f16 (nearest even), in float64."""
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)


def lengths(b, l):
    """Cache lengths per sequence: 1, the full cache, 0 (every score of the row masked: NaN), then
    scattered ones."""
    return np.array([[1, l, 0][n % 3] if n < 3 else (n * 7919) % l + 1 for n in range(b)], dtype=np.int32)


def case_decode(b, h, t, l, r=rb):
    q, k, v = r(bf((b, h, t, 128))), r(bf((b, h, l, 128))), r(bf((b, h, l, 128)))
    ln = lengths(b, l)
    keep = np.arange(l)[None, None, None, :] < ln[:, None, None, None]
    s = r(q @ np.swapaxes(k, -1, -2)) * SC
    with np.errstate(invalid="ignore"):
        e = np.exp(np.where(keep, s, -np.inf) - np.where(keep, s, -np.inf).max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
    return {"q": q, "k": k, "v": v, "len": ln}, r(r(p) @ v)


def case_decode_qscale(b, h, t, l):
    """The scale on the query, (q * c) @ kT: q * c rounds to bf16 (c itself a bf16 literal)."""
    q, k, v = bf((b, h, t, 128)), bf((b, h, l, 128)), bf((b, h, l, 128))
    ln = lengths(b, l)
    keep = np.arange(l)[None, None, None, :] < ln[:, None, None, None]
    s = rb(rb(q * rb(np.array([SC]))[0]) @ np.swapaxes(k, -1, -2))
    return {"q": q, "k": k, "v": v, "len": ln}, attend(np.where(keep, s, -np.inf), v)


def case_decode_gqa(b, t, l):
    q, k, v = bf((b, 32, t, 128)), bf((b, 8, l, 128)), bf((b, 8, l, 128))
    ln = lengths(b, l)
    keep = np.arange(l)[None, None, None, None, :] < ln[:, None, None, None, None]
    sg = scores(q.reshape(b, 8, 4, t, 128), k[:, :, None])
    o = attend(np.where(keep, sg, -np.inf), v[:, :, None])
    return {"q": q, "k": k, "v": v, "len": ln}, o.reshape(b, 32, t, 128)


def case_qkv_split(b, s):
    """nanoGPT's qkv.split: columns 0, 768 and 1536 of one [B, S, 2304] projection, 12 heads of 64."""
    x = bf((b, s, 2304))
    q, k, v = (x[..., 768 * i:768 * (i + 1)].reshape(b, s, 12, 64).transpose(0, 2, 1, 3) for i in range(3))
    i, j = ij(s)
    o = attend(np.where(i >= j, rb(q @ np.swapaxes(k, -1, -2)) * 0.125, -np.inf), v)
    return {"qkv": x}, o.transpose(0, 2, 1, 3).reshape(b, s, 768)


def case_lse(b, h, s):
    """O and the row logsumexp log(sum(exp(s - m))) + m, keys past len[b] masked (len 0: NaN rows)."""
    q, k, v = bf((b, h, s, 64)), bf((b, h, s, 64)), bf((b, h, s, 64))
    ln = lengths(b, s)
    keep = np.arange(s)[None, None, None, :] < ln[:, None, None, None]
    sc = np.where(keep, rb(q @ np.swapaxes(k, -1, -2)) * 0.125, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = sc.max(-1, keepdims=True)
        lse = (np.log(np.exp(sc - m).sum(-1, keepdims=True)) + m)[..., 0]
    return {"q": q, "k": k, "v": v, "len": ln}, (attend(sc, v), lse)


CASES = []
for b, h, s in ((1, 2, 1), (2, 3, 77), (1, 2, 130)):
    for name, fn in (("causal", case_causal), ("window", case_window), ("alibi", case_alibi),
                     ("softcap", case_softcap), ("mask", case_mask), ("scale_last", case_scale_last)):
        CASES.append((f"{name} B={b} H={h} S={s}", name, {"B": b, "H": h, "S": s}, lambda fn=fn, b=b, h=h, s=s: fn(b, h, s)))
for b, h, s in ((3, 2, 1), (3, 2, 67), (4, 1, 130)):
    CASES.append((f"padmask B={b} H={h} S={s}", "padmask", {"B": b, "H": h, "S": s},
                  lambda b=b, h=h, s=s: case_padmask(b, h, s)))
for b, s in ((1, 1), (1, 77)):
    CASES.append((f"gqa B={b} S={s}", "gqa", {"B": b, "S": s}, lambda b=b, s=s: case_gqa(b, s)))
for b, s in ((1, 1), (2, 77), (1, 130)):
    CASES.append((f"qkv_split B={b} S={s}", "qkv_split", {"B": b, "S": s}, lambda b=b, s=s: case_qkv_split(b, s)))
for b, h, s in ((3, 2, 1), (3, 2, 77), (3, 1, 130)):
    CASES.append((f"lse B={b} H={h} S={s}", "lse", {"B": b, "H": h, "S": s}, lambda b=b, h=h, s=s: case_lse(b, h, s)))
for b, h, t, l in ((4, 2, 1, 1), (4, 2, 1, 300), (5, 1, 16, 257), (3, 2, 5, 64), (3, 1, 2, 17),
                   (3, 2, 3, 1000), (3, 2, 3, 4000), (6, 1, 16, 2048), (3, 1, 1, 32768 + 5)):
    CASES.append((f"decode B={b} H={h} T={t} L={l}", "decode", {"B": b, "H": h, "T": t, "L": l},
                  lambda b=b, h=h, t=t, l=l: case_decode(b, h, t, l)))
# the scale on the query ([attention.q_prologue]: computed in the key split's Q tile)
for b, h, t, l in ((4, 2, 1, 1), (3, 2, 3, 1000), (3, 1, 1, 32768 + 5)):
    CASES.append((f"decode_qscale B={b} H={h} T={t} L={l}", "decode_qscale", {"B": b, "H": h, "T": t, "L": l},
                  lambda b=b, h=h, t=t, l=l: case_decode_qscale(b, h, t, l)))
# f16: the same program with every bf16 written f16
for b, h, t, l in ((3, 2, 4, 1500),):
    CASES.append((f"decode f16 B={b} H={h} T={t} L={l}", "decode:f16", {"B": b, "H": h, "T": t, "L": l},
                  lambda b=b, h=h, t=t, l=l: case_decode(b, h, t, l, rh)))
# T = 1, 3, 4: a group's 4 heads x T rows packed in one block on the GPU ([attention.gqa_pack])
for b, t, l in ((3, 2, 1000), (1, 1, 20000), (2, 1, 65), (2, 3, 300), (1, 4, 129)):
    CASES.append((f"decode_gqa B={b} T={t} L={l}", "decode_gqa", {"B": b, "T": t, "L": l},
                  lambda b=b, t=t, l=l: case_decode_gqa(b, t, l)))


# Shapes whose few batch elements leave most SMs idle: the planner must split the keys.
MUST_SPLIT = {"decode B=3 H=2 T=3 L=4000", "decode B=6 H=1 T=16 L=2048", "decode B=3 H=1 T=1 L=32773",
              "decode f16 B=3 H=2 T=4 L=1500", "decode_gqa B=1 T=1 L=20000"}
# Also run with only T bound at compile time (B, H, L from the inputs: split-KV whose chunks in
# use are chosen at run time, `split-kv N rt`), every MUST_SPLIT shape and a cache of length 1.
SYMBOLIC = MUST_SPLIT | {"decode B=4 H=2 T=1 L=1", "decode_gqa B=3 T=2 L=1000",
                         "decode_qscale B=3 H=2 T=3 L=1000"}


def compare(got, want):
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    g, w = got.astype(np.float64).ravel(), want.ravel()
    with np.errstate(invalid="ignore"):
        ok = np.where(np.isnan(w), np.isnan(g), np.abs(g - w) <= ATOL + RTOL * np.abs(w))
    bad = np.flatnonzero(~ok)
    if bad.size:
        i = bad[0]
        return "%d of %d elements differ; first at %d: got %r, want %r" % (bad.size, w.size, i, g[i], w[i])
    return None


def program(root, work, prog):
    """The example's path; NAME:f16 is example NAME with every bf16 written f16 (in work)."""
    name, _, dt = prog.partition(":")
    path = os.path.join(root, "examples", f"attention_{name}.tx")
    if not dt:
        return path
    out = os.path.join(work, f"attention_{name}_{dt}.tx")
    with open(path) as f, open(out, "w") as g:
        g.write(f.read().replace("bf16", dt))
    return out


def split_kv(txc, path, dims):
    """The chunks of [attention.split_kv] the planner picks (1: not split), from --explain."""
    args = [txc, path, "--explain", "-o", os.devnull]
    for d, val in dims.items():
        args += ["-D", f"{d}={val}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    for line in out.splitlines():
        if "split-kv " in line and "template" in line:
            return int(line.split("split-kv ")[1].split(":")[0].split()[0])
    return 1


def main():
    txc, root = sys.argv[1], sys.argv[2]
    fails = 0
    runs = 0
    with tempfile.TemporaryDirectory() as work:
        for label, prog, dims, make in CASES:
            path = program(root, work, prog)
            devs = [("cpu", {}, dims), ("ref", {}, dims)]
            if prog.startswith("decode"):
                # the planner's split, then 3 chunks whatever the shape (empty chunks included)
                n = split_kv(txc, path, dims)
                if label in MUST_SPLIT and n < 2:
                    print(f"FAIL {label}: the planner did not split the keys ([attention.split_kv])")
                    fails += 1
                label += f" (split-kv {n})"
                devs.append(("cpu", {"TX_ATTN_SPLITS": "3"}, dims))
                if label.split(" (")[0] in SYMBOLIC:
                    sym = {"T": dims["T"]}
                    n = split_kv(txc, path, sym)
                    if n < 2:
                        print(f"FAIL {label}: not split with sizes from the inputs ([attention.split_kv])")
                        fails += 1
                    devs.append(("cpu", {}, sym))
            inputs, want = make()
            inp = []
            for n, arr in inputs.items():
                p = os.path.join(work, n + ".npy")
                a = arr if arr.dtype in (np.bool_, np.int32) else arr.astype(
                    np.float16 if prog.endswith(":f16") else np.float32)
                np.save(p, a)
                inp += ["--input", f"{n}={p}"]
            for dev, env, ds in devs:
                args = inp + [x for d, val in ds.items() for x in ("-D", f"{d}={val}")]
                od = os.path.join(work, "out")
                r = subprocess.run([txc, "run", path, "--device=" + dev, "--output-dir", od] + args,
                                   capture_output=True, text=True, timeout=300,
                                   env=dict(os.environ, **env))
                wants = want if isinstance(want, tuple) else (want,)
                msg = r.stderr.strip() if r.returncode else None
                for oi, w in enumerate(wants):
                    msg = msg or compare(np.load(os.path.join(od, f"out{oi}.npy")), w)
                tag = "".join(f" {k}={v}" for k, v in env.items()) + (
                    " (sizes from the inputs)" if ds is not dims else "")
                print(("FAIL " if msg else "ok   ") + f"{label} --device={dev}{tag}" + (": " + msg if msg else ""))
                fails += bool(msg)
                runs += 1
    print(f"attention variants: {runs - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
