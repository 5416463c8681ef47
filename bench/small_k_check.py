"""Small-K bf16 products on the SIMT kernel ([matmul.simt.small_k]) against torch eager,
torch.compile and the write ceiling in one run, from the directory that holds dist/:

    TXC=dist/bin/txc python3 dist/bench/small_k_check.py [--budget S]

prime_gemm_k7 (sigmoid(x @ w + b), [8191, 7] @ [7, 4099], bf16) and the same expression at
K = 1, 3, 13 (bench/sgemm/small_k.tx): torch's eager and compiled forms timed with CUDA events
(the L2 flushed before each run, as txc bench does), the write ceiling (zeroing a tensor of the
output's bytes), then `txc bench --device=gpu --json` (verified against the host, timed). Prints
a table (ratios > 1: tx faster) and a summary line; files under $OUT: small_k.md, small_k.json."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checklib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "small-k-out")
TXC = os.environ.get("TXC", "dist/bin/txc")
CASES = [(os.path.join(HERE, "heldout", "prime_gemm_k7.tx"), 8191, 7, 4099),
         (os.path.join(HERE, "sgemm", "small_k.tx"), 8192, 1, 4096),
         (os.path.join(HERE, "sgemm", "small_k.tx"), 8192, 3, 4096),
         (os.path.join(HERE, "sgemm", "small_k.tx"), 8192, 13, 4096)]


def torch_times(M, K, N, end):
    import torch
    x = torch.randn(M, K, device="cuda").bfloat16()
    w = torch.randn(K, N, device="cuda").bfloat16()
    b = torch.randn(N, device="cuda").bfloat16()
    f = lambda: torch.sigmoid(x @ w + b)  # noqa: E731
    r = {"eager_us": checklib.cuda_time(f)}
    o = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    r["write_us"] = checklib.cuda_time(lambda: o.zero_())
    if time.time() < end - 8:
        g = torch.compile(lambda x, w, b: torch.sigmoid(x @ w + b))
        r["compile_us"] = checklib.cuda_time(lambda: g(x, w, b))
    return r


def main():
    budget = 30.0
    if sys.argv[1:2] == ["--budget"]:
        budget = float(sys.argv[2])
    t0 = time.time()
    end = t0 + budget
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for path, M, K, N in CASES:
        if time.time() > end - 3:
            break
        r = {"program": os.path.basename(path)[:-3], "M": M, "K": K, "N": N}
        rows.append(r)
        dims = ["-D", f"M={M}", "-D", f"N={N}"] + (["-D", f"K={K}"] if "small_k" in path else [])
        try:
            p = subprocess.run([TXC, "bench", path, "--device=gpu", "--random-inputs=1", "--iters", "20",
                                "--timing-budget=0.3", "--json"] + dims, capture_output=True, text=True, timeout=30)
            fu = json.loads(p.stdout[p.stdout.index("{"):])["fused"]
            r["tx_us"], r["verified"] = fu.get("graph_us"), fu.get("verified")
            r["kernels"] = [k.get("name") for k in fu.get("kernels", [])]
        except Exception as e:  # noqa: BLE001
            r["error"] = f"tx: {e}"[:200]
        try:
            r.update(torch_times(M, K, N, end if len(rows) == 1 else 0))
        except Exception as e:  # noqa: BLE001
            r["error"] = (r.get("error", "") + f" torch: {e}")[:300]
        print(f"row: {r}", flush=True)
    f = lambda x: "%.1f" % x if x else "-"  # noqa: E731
    q = lambda a, b: "%.2fx" % (a / b) if a and b else "-"  # noqa: E731
    lines = ["| program | M K N | tx us | verified | torch.compile us | tc/tx | eager us | eager/tx | "
             "write ceiling us | ceiling/tx | kernels |", "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['M']} {r['K']} {r['N']} | {f(r.get('tx_us'))} | {r.get('verified', '-')} | "
                     f"{f(r.get('compile_us'))} | {q(r.get('compile_us'), r.get('tx_us'))} | {f(r.get('eager_us'))} | "
                     f"{q(r.get('eager_us'), r.get('tx_us'))} | {f(r.get('write_us'))} | "
                     f"{q(r.get('write_us'), r.get('tx_us'))} | {len(r.get('kernels', []))} {r.get('error', '')} |")
    lines.append(f"small_k summary: {sum(1 for r in rows if r.get('verified'))} of {len(rows)} verified; "
                 f"wall {time.time() - t0:.0f} s")
    txt = "\n".join(lines)
    open(os.path.join(OUT, "small_k.md"), "w").write(txt + "\n")
    json.dump(rows, open(os.path.join(OUT, "small_k.json"), "w"), indent=1)
    print(txt)
    return 1 if any(r.get("verified") is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
