#!/usr/bin/python3
"""Attention at head dims above 128 against NumPy (run by tests/scripts/attention_wide_d.sh).

usage: wide_check.py TXC ROOT

Programs written as users write them at head dims 160, 192 and 256 (dense [B, H, S, D] with a
symbolic D scaled by / sqrt(D), causal via iota, and split heads of a [B, S, 4 * 256] projection merged back): each
runs with `txc run` on --device=cpu (the fused host code) and --device=ref (the reference
interpreter) at ragged sizes (S = 1, 77, 130), and on --target=sm_90a it must plan its attention as
one FA3 kernel whose template names the head dim and the key tile the plan takes from it
(cg_attn_wg_plan_for: 96 keys at 192, 64 at 256, 80 for a masked F at 192; 160 padded to 192)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import attend, bf, compare, rb  # noqa: E402

PLAIN = """fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D], v: bf16[B, H, S, D]) -> bf16[B, H, S, D] {
  return bf16(softmax(f32(q @ transpose(k, -1, -2)) / %r, axis=-1)) @ v
}
"""
CAUSAL = """fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D], v: bf16[B, H, S, D]) -> bf16[B, H, S, D] {
  s = f32(q @ transpose(k, -1, -2)) * 0.0625
  keep = iota((S, S), axis=0) >= iota((S, S), axis=1)
  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v
}
"""
# q.view(B, S, 4, 256).transpose(1, 2) ... o.transpose(1, 2).reshape(B, S, 1024)
SPLIT = """fn heads(t) { return permute(reshape(t, (B, S, 4, 256)), (0, 2, 1, 3)) }
fn f(q: bf16[B, S, 1024], k: bf16[B, S, 1024], v: bf16[B, S, 1024]) -> bf16[B, S, 1024] {
  s = f32(heads(q) @ transpose(heads(k), -1, -2)) * 0.0625
  o = bf16(softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)) @ heads(v)
  return reshape(permute(o, (0, 2, 1, 3)), (B, S, 1024))
}
"""


def causal(s):
    return np.arange(s)[:, None] >= np.arange(s)[None, :]


def plain(b, h, s, d):
    q, k, v = bf((b, h, s, d)), bf((b, h, s, d)), bf((b, h, s, d))
    sc = rb(q @ np.swapaxes(k, -1, -2)) / np.sqrt(d)
    return {"q": q, "k": k, "v": v}, attend(sc, v)


def masked(b, h, s, d):
    q, k, v = bf((b, h, s, d)), bf((b, h, s, d)), bf((b, h, s, d))
    sc = rb(q @ np.swapaxes(k, -1, -2)) * 0.0625
    return {"q": q, "k": k, "v": v}, attend(np.where(causal(s), sc, -np.inf), v)


def split(b, s):
    q, k, v = bf((b, s, 1024)), bf((b, s, 1024)), bf((b, s, 1024))
    qh, kh, vh = (t.reshape(b, s, 4, 256).transpose(0, 2, 1, 3) for t in (q, k, v))
    o = attend(np.where(causal(s), rb(qh @ np.swapaxes(kh, -1, -2)) * 0.0625, -np.inf), vh)
    return {"q": q, "k": k, "v": v}, o.transpose(0, 2, 1, 3).reshape(b, s, 1024)


# (label, source, dims, inputs + expected, the sm_90a template's expected fragment)
CASES = []
for d, frag in ((160, "128x96 d160p192 "), (192, "128x96 d192 "), (256, "128x64 d256 ")):
    for b, h, s in ((1, 2, 1), (2, 1, 77), (1, 2, 130)):
        CASES.append((f"plain D={d} B={b} H={h} S={s}", PLAIN % float(np.sqrt(d)), {"B": b, "H": h, "S": s, "D": d},
                      lambda b=b, h=h, s=s, d=d: plain(b, h, s, d), frag))
for d, frag in ((192, "128x80 d192 "), (256, "128x64 d256 ")):
    for b, h, s in ((1, 2, 77), (2, 1, 130)):
        CASES.append((f"causal D={d} B={b} H={h} S={s}", CAUSAL, {"B": b, "H": h, "S": s, "D": d},
                      lambda b=b, h=h, s=s, d=d: masked(b, h, s, d), frag))
for b, s in ((2, 77), (1, 130)):
    CASES.append((f"split heads 4 x 256 B={b} S={s}", SPLIT, {"B": b, "S": s}, lambda b=b, s=s: split(b, s),
                  "128x64 d256 "))


def fa3_plan(txc, path, dims, frag, work):
    """None when the sm_90a plan (S = 1000) is one attention kernel on the FA3 template with frag."""
    ptx = os.path.join(work, "p.ptx")
    args = [txc, path, "--target=sm_90a", "-o", ptx]
    for n, val in dims.items():
        args += ["-D", f"{n}={1000 if n == 'S' else val}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode:
        return r.stderr.strip()
    ks = json.load(open(ptx + ".json"))["kernels"]
    t = [k.get("template", "") for k in ks]
    if len(ks) != 1 or not t[0].startswith("fa3-wgmma-tma-ws ") or frag not in t[0]:
        return f"kernels {t or [k['name'] for k in ks]}: not one FA3 kernel with '{frag}'"
    return None


def main():
    txc = sys.argv[1]
    fails = runs = 0
    with tempfile.TemporaryDirectory() as work:
        for label, src, dims, make, frag in CASES:
            path = os.path.join(work, "p.tx")
            with open(path, "w") as f:
                f.write(src)
            msg = fa3_plan(txc, path, dims, frag, work)
            print(("FAIL " if msg else "ok   ") + f"{label} --target=sm_90a" + (": " + msg if msg else ""))
            fails += bool(msg)
            runs += 1
            inputs, want = make()
            args = []
            for n, arr in inputs.items():
                p = os.path.join(work, n + ".npy")
                np.save(p, arr.astype(np.float32))
                args += ["--input", f"{n}={p}"]
            for n, val in dims.items():
                args += ["-D", f"{n}={val}"]
            for dev in ("cpu", "ref"):
                od = os.path.join(work, "out")
                r = subprocess.run([txc, "run", path, "--device=" + dev, "--output-dir", od] + args,
                                   capture_output=True, text=True, timeout=300)
                msg = r.stderr.strip() if r.returncode else compare(np.load(os.path.join(od, "out0.npy")), want)
                print(("FAIL " if msg else "ok   ") + f"{label} --device={dev}" + (": " + msg if msg else ""))
                fails += bool(msg)
                runs += 1
    print(f"attention at head dims above 128: {runs - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
