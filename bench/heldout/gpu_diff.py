"""Runs held-out cases on the GPU at their ragged CPU sizes and says where each output differs from
the NumPy references (the per-op one, and the plan-precision one where the case has it):

    python3 bench/heldout/gpu_diff.py TXC NAME [NAME ...]

For diagnosing a failed GPU verification (bench/heldout_check.sh prints only the verdict)."""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402
from check_cpu import compare, dims_args, ret_dtypes  # noqa: E402


def main():
    txc, names = sys.argv[1], sys.argv[2:]
    by = {c["name"]: c for c in C.CASES}
    rng = np.random.default_rng(11)
    root = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as work:
        for n in names:
            c, path = by[n], os.path.join(root, n + ".tx")
            rdt = ret_dtypes(path)
            for dims in c["cpu"]:
                args, arrs = dims_args(dims), {}
                for nm, shape, dt, kind in c["inputs"]:
                    a = C.np_input(rng, C.shape_of(shape, dims), dt, kind, dims)
                    arrs[nm] = a
                    np.save(os.path.join(work, nm + ".npy"), a)
                    args += ["--input", f"{nm}={os.path.join(work, nm + '.npy')}"]
                refs = {"per-op": c["ref"](C.f64(arrs), dims)}
                if c.get("ref_plan"):
                    refs["plan"] = c["ref_plan"](C.f64(arrs), dims)
                for dev in ("gpu", "cpu"):
                    od = os.path.join(work, "out-" + dev)
                    r = subprocess.run([txc, "run", path, "--device=" + dev, "--output-dir", od] + args,
                                       capture_output=True, text=True, timeout=120)
                    if r.returncode:
                        print(f"{n} {dims} {dev}: rc {r.returncode}: {r.stderr.strip()[-300:]}")
                        continue
                    for i in range(len(refs["per-op"])):
                        got = np.load(os.path.join(od, f"out{i}.npy"))
                        for rn, want in refs.items():
                            msg = compare(got, want[i], rdt[i] if i < len(rdt) else "f32")
                            print(f"{n} {dims} {dev} out{i} vs {rn}: {msg or 'ok'}")
                        if dev == "gpu":
                            cpu = os.path.join(work, "out-cpu", f"out{i}.npy")
                            if os.path.exists(cpu):
                                g, h = got.astype(np.float64).ravel(), np.load(cpu).astype(np.float64).ravel()
                                bad = np.flatnonzero(~((g == h) | (np.isnan(g) & np.isnan(h))))
                                print(f"   gpu vs a previous cpu run: {bad.size} differ" +
                                      (f"; first {[(int(j), g[j], h[j]) for j in bad[:4]]}" if bad.size else ""))
                    if dev == "gpu":
                        idx = np.flatnonzero(np.isinf(np.load(os.path.join(od, "out1.npy")))) if n == "f16_overflow" else []
                        if len(idx):
                            x = arrs[c["inputs"][0][0]].ravel()
                            print(f"   inputs where out1 is inf: {x[idx[:6]]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
