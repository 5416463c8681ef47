#!/usr/bin/python3
"""The held-out split-heads attention programs of tests/attention/views/ against NumPy (run by
tests/scripts/attention_views.sh).

usage: views_check.py TXC ROOT

Each program runs with `txc run` on --device=cpu (the fused host code) and --device=ref (the
reference interpreter) at small ragged sizes (S = 1, 77, 130; batch 1-3; lengths 0, 1 and S: a
length of 0 masks whole rows, NaN as in PyTorch eager), and on --target=sm_90a it must plan its
attention as one kernel on the FA3 template (the manifest of `txc FILE --target=sm_90a`). The NumPy
expressions below are written from the PyTorch code each program's comment names, not from tx."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import RNG, attend, bf, compare, rb  # noqa: E402

SC = 0.08838834764831845


def heads(t, b, s, h, d):
    """t.view(B, S, H, D).transpose(1, 2)"""
    return t.reshape(b, s, h, d).transpose(0, 2, 1, 3)


def merge(o):
    b, h, s, d = o.shape
    return o.transpose(0, 2, 1, 3).reshape(b, s, h * d)


def sc(q, k, c):
    return rb(q @ np.swapaxes(k, -1, -2)) * c


def causal(s):
    return np.arange(s)[:, None] >= np.arange(s)[None, :]


def mha_causal(b, s):
    q, k, v = bf((b, s, 1024)), bf((b, s, 1024)), bf((b, s, 1024))
    qh, kh, vh = (heads(t, b, s, 8, 128) for t in (q, k, v))
    return {"q": q, "k": k, "v": v}, merge(attend(np.where(causal(s), sc(qh, kh, SC), -np.inf), vh))


def mha_d64(b, s):
    q, k, v = bf((b, s, 768)), bf((b, s, 768)), bf((b, s, 768))
    qh, kh, vh = (heads(t, b, s, 12, 64) for t in (q, k, v))
    return {"q": q, "k": k, "v": v}, merge(attend(rb(qh @ np.swapaxes(kh, -1, -2)) / 8.0, vh))


def gqa_causal(b, s):
    q, k, v = bf((b, s, 2048)), bf((b, s, 512)), bf((b, s, 512))
    qh = heads(q, b, s, 16, 128)
    kh, vh = np.repeat(heads(k, b, s, 4, 128), 4, axis=1), np.repeat(heads(v, b, s, 4, 128), 4, axis=1)
    return {"q": q, "k": k, "v": v}, merge(attend(np.where(causal(s), sc(qh, kh, SC), -np.inf), vh))


def mha_lens(b, s):
    q, k, v = bf((b, s, 1024)), bf((b, s, 1024)), bf((b, s, 1024))
    ln = np.array([[0, 1, s][n % 3] for n in range(b)], dtype=np.int32)
    qh, kh, vh = (heads(t, b, s, 16, 64) for t in (q, k, v))
    keep = np.arange(s)[None, None, None, :] < ln[:, None, None, None]
    return {"q": q, "k": k, "v": v, "lens": ln}, merge(attend(np.where(keep, sc(qh, kh, 0.125), -np.inf), vh))


def mha_d80(b, s):
    q, k, v = bf((b, s, 2560)), bf((b, s, 2560)), bf((b, s, 2560))
    qh, kh, vh = (heads(t, b, s, 32, 80) for t in (q, k, v))
    return {"q": q, "k": k, "v": v}, merge(attend(np.where(causal(s), sc(qh, kh, 0.11180339887498948), -np.inf), vh))


def mha_d96(b, s):
    q, k, v = bf((b, s, 1536)), bf((b, s, 1536)), bf((b, s, 1536))
    qh, kh, vh = (heads(t, b, s, 16, 96) for t in (q, k, v))
    return {"q": q, "k": k, "v": v}, merge(attend(rb(qh @ np.swapaxes(kh, -1, -2)) / 9.797958971132712, vh))


def attn_block(b, s):
    x = bf((b, s, 1024))
    w = {n: rb(RNG.standard_normal((1024, 1024)) * 0.03) for n in ("wq", "wk", "wv", "wo")}
    q, k, v = (heads(rb(x @ w[n]), b, s, 8, 128) for n in ("wq", "wk", "wv"))
    o = merge(attend(np.where(causal(s), sc(q, k, SC), -np.inf), v))
    return dict(x=x, **w), rb(x + rb(o @ w["wo"]))


def qkv_timm(b, s):
    qkv = bf((b, s, 2304))
    t = qkv.reshape(b, s, 3, 12, 64).transpose(2, 0, 3, 1, 4)
    return {"qkv": qkv}, merge(attend(rb(t[0] @ np.swapaxes(t[1], -1, -2)) * 0.125, t[2]))


def mqa_qkv(b, s):
    """Falcon's _split_heads for multi_query: qkv.view(B, S, 9, 64), heads :7 q, 7 k, 8 v"""
    t = bf((b, s, 576)).reshape(b, s, 9, 64).transpose(0, 2, 1, 3)
    q, k, v = t[:, :7], t[:, 7:8], t[:, 8:9]
    return {"qkv": t.transpose(0, 2, 1, 3).reshape(b, s, 576)}, merge(
        attend(np.where(causal(s), rb(q @ np.swapaxes(k, -1, -2)) * 0.125, -np.inf), v))


def mqa_v_view(b, s):
    q, k, kv = bf((b, 7, s, 64)), bf((b, 1, s, 64)), bf((b, s, 128))
    v = kv.reshape(b, s, 2, 64)[:, :, 1:2].transpose(0, 2, 1, 3)
    return {"q": q, "k": k, "kv": kv}, attend(rb(q @ np.swapaxes(k, -1, -2)) * 0.125, v)


CASES = [("mha_causal", mha_causal, 2, 77), ("mha_causal", mha_causal, 1, 1), ("mha_causal", mha_causal, 3, 130),
         ("mha_d64", mha_d64, 2, 77), ("gqa_causal", gqa_causal, 2, 77), ("gqa_causal", gqa_causal, 1, 130),
         ("mha_lens", mha_lens, 3, 77), ("attn_block", attn_block, 2, 33), ("mha_d80", mha_d80, 2, 77),
         ("mha_d96", mha_d96, 1, 130), ("qkv_timm", qkv_timm, 2, 77), ("qkv_timm", qkv_timm, 1, 1),
         ("qkv_timm", qkv_timm, 1, 197), ("mqa_qkv", mqa_qkv, 2, 77), ("mqa_qkv", mqa_qkv, 1, 130),
         ("mqa_v_view", mqa_v_view, 2, 5), ("mqa_v_view", mqa_v_view, 1, 130)]


def fa3_plan(txc, path, work):
    """The kernels of the sm_90a plan at B=2 S=1000: exactly one FA3 attention kernel over 4-D maps
    (3-D for multi-query's one key / value head: no head dim in their maps), and no other kernel (the merge back to [B, S, H * D] stored by it: view.alias) unless the program
    has projections."""
    ptx = os.path.join(work, "p.ptx")
    r = subprocess.run([txc, path, "--target=sm_90a", "-D", "B=2", "-D", "S=1000", "-o", ptx],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return r.stderr.strip()
    ks = json.load(open(ptx + ".json"))["kernels"]
    fa3 = [k for k in ks if k.get("template", "").startswith("fa3-wgmma-tma-ws")]
    att = [k for k in ks if "attention" in k.get("template", "") or k.get("template", "").startswith(("fa3", "mma-attn"))]
    if len(fa3) != 1 or len(att) != 1 or ("attn_block" not in path and len(ks) != 1):
        return "kernels %s: not one FA3 attention kernel" % [k.get("template") or k["name"] for k in ks]
    if "mqa" not in path and any(len(t["dims"]) + (1 if "outer" in t else 0) < 4 for t in fa3[0]["tensor_maps"]):
        return "the FA3 kernel's maps are not 4-D: %s" % fa3[0]["tensor_maps"]
    return None


def main():
    txc, root = sys.argv[1], sys.argv[2]
    fails = n = 0
    with tempfile.TemporaryDirectory() as work:
        for prog in sorted({c[0] for c in CASES}):
            msg = fa3_plan(txc, os.path.join(root, "tests", "attention", "views", prog + ".tx"), work)
            print(("FAIL " if msg else "ok   ") + f"{prog} --target=sm_90a plans one FA3 kernel, 4-D maps" + (": " + msg if msg else ""))
            fails += bool(msg)
            n += 1
        for prog, make, b, s in CASES:
            inputs, want = make(b, s)
            args = ["-D", f"B={b}", "-D", f"S={s}"]
            for nm, arr in inputs.items():
                p = os.path.join(work, nm + ".npy")
                np.save(p, arr if arr.dtype in (np.bool_, np.int32) else arr.astype(np.float32))
                args += ["--input", f"{nm}={p}"]
            for dev in ("cpu", "ref"):
                od = os.path.join(work, "out")
                r = subprocess.run([txc, "run", os.path.join(root, "tests", "attention", "views", prog + ".tx"),
                                    "--device=" + dev, "--output-dir", od] + args,
                                   capture_output=True, text=True, timeout=300)
                msg = r.stderr.strip() if r.returncode else compare(np.load(os.path.join(od, "out0.npy")), want)
                print(("FAIL " if msg else "ok   ") + f"{prog} B={b} S={s} --device={dev}" + (": " + msg if msg else ""))
                fails += bool(msg)
                n += 1
    print(f"split-heads attention views: {n - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
