"""The GEMV tiles of the SIMT schedule ([matmul.simt.gemv]) on the GPU against cuBLAS SGEMM
(torch.mm, allow_tf32 False) in the same run; run by bench/gemv_gpu.sh.

    python3 bench/gemv_gpu.py [--budget S]

Within BUDGET seconds (default 60), one line per case:
  1. full verification (`txc bench --iters 1`, every output against the host) of GEMV tiles
     forced by TX_SIMT_TILE at ragged sizes: M = 1, 3, 4 (batch), 7, 13, 16; N odd (scalar
     loads of w) and multiples of 4 (16-byte loads); K not a multiple of the k step; unsplit and
     clusters of 2, 4, 8 ranks; bias + tanh;
  2. f32 rows M = 1 .. 16 of x @ w (bench/sgemm/mm.tx, K = N = 4096, and LLaMA-like 4096 x 11008
     both ways) as the model plans them: verified, timed, cuBLAS in the same run, the schedule,
     measured / predicted us, and GB/s of w streamed;
  3. M = 1 and 8 pinned to the standard tile the model chose before (32x32x8s8) in the same run
     (the A/B of the GEMV tile)."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sgemm_check as S  # noqa: E402

RAGGED = [  # program, sizes, TX_SIMT_TILE
    ("gemv_f32", dict(K=1001, N=257), "1x128x8s8"),
    ("gemv_f32", dict(K=600, N=300), "1x128x16s1"),
    ("mm", dict(M=3, K=77, N=256), "4x128x8s1"),
    ("mm", dict(M=7, K=517, N=1000), "8x128x8s4"),
    ("mm", dict(M=13, K=2000, N=333), "16x128x8s1"),
    ("mm", dict(M=16, K=2000, N=200), "16x128x8s2"),
    ("bmm", dict(B=2, M=4, K=300, N=96), "4x128x8s2"),
    ("mm", dict(M=2, K=4096, N=4096), "2x128x16s8"),
]
ROWS = [("mm", dict(M=m, K=4096, N=4096), (1, m, 4096, 4096, False, False), "") for m in (1, 2, 4, 8, 16)]
ROWS += [("mm", dict(M=1, K=4096, N=11008), (1, 1, 4096, 11008, False, False), ""),
         ("mm", dict(M=1, K=11008, N=4096), (1, 1, 11008, 4096, False, False), ""),
         ("gemv_f32", dict(K=4096, N=4096), (1, 1, 4096, 4096, False, False), ""),
         ("mm", dict(M=1, K=4096, N=4096), (1, 1, 4096, 4096, False, False), "32x32x8s8"),
         ("mm", dict(M=8, K=4096, N=4096), (1, 8, 4096, 4096, False, False), "32x32x8s8")]


def run(name, dims, pin, iters, extra, lf):
    if pin:
        os.environ["TX_SIMT_TILE"] = pin
    else:
        os.environ.pop("TX_SIMT_TILE", None)
    try:
        return S.bench(name, dims, iters, extra, lf)
    finally:
        os.environ.pop("TX_SIMT_TILE", None)


def main():
    budget = 60.0
    if sys.argv[1:2] == ["--budget"]:
        budget = float(sys.argv[2])
    t0 = time.time()
    end = t0 + budget
    out = os.environ.get("OUT", "gemv-out")
    os.makedirs(out, exist_ok=True)
    wd = tempfile.mkdtemp(prefix="tx-gemv-")
    lf = open(os.path.join(out, "log.txt"), "w")
    cb = S.cublas([(n, d, p) for n, d, p, _ in ROWS], t0 + 0.2 * budget, lf)
    bad = 0
    for n, d, pin in RAGGED:
        sz = " ".join(f"{k}={v}" for k, v in d.items())
        if time.time() > t0 + 0.5 * budget:
            print(f"gemv ragged {n} {sz} pin {pin}: skipped (out of time)", flush=True)
            continue
        fu, err = run(n, d, pin, 1, [], lf)
        ok = not err and fu.get("verified")
        bad += not ok
        tm = [k.get("template", "") for k in (fu or {}).get("kernels", [])]
        print(f"gemv ragged {n} {sz} pin {pin}: {err or ('verified' if ok else 'NOT VERIFIED')} {tm}", flush=True)
    for i, (n, d, prod, pin) in enumerate(ROWS):
        sz = " ".join(f"{k}={v}" for k, v in d.items())
        if time.time() > end - 2:
            print(f"gemv row {n} {sz}{' pin ' + pin if pin else ''}: skipped (out of time)", flush=True)
            continue
        if pin:
            os.environ["TX_SIMT_TILE"] = pin
        sc = " / ".join(S.sched(n, d, wd))[:160]
        os.environ.pop("TX_SIMT_TILE", None)
        fu, err = run(n, d, pin, 20, ["--timing-budget=0.3"], lf)
        if err:
            bad += 1
            print(f"gemv row {n} {sz}{' pin ' + pin if pin else ''}: {err}", flush=True)
            continue
        tx, cu = fu.get("graph_us"), cb.get(i)
        wbytes = 4.0 * prod[2] * prod[3]
        ks = "; ".join(f"{k['name'].split('_')[-1]} {k.get('us')}/{k.get('predicted_us')}" for k in fu.get("kernels", []))
        bad += not fu.get("verified")
        print(f"gemv row {n} {sz}{' pin ' + pin if pin else ''}: tx {tx:.1f} us ({wbytes / tx / 1e3:.0f} GB/s of w), "
              f"cuBLAS {cu and '%.1f' % cu} us, cuBLAS/tx {cu / tx if cu and tx else 0:.2f}x, "
              f"verified {fu.get('verified')}, measured/predicted {ks} | {sc}", flush=True)
    print(f"gemv summary: {bad} failed or unverified; wall {time.time() - t0:.0f} s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
