#!/usr/bin/env python3
"""bench/gemm_split_check.py - wgmma GEMMs whose output tiles do not fill the GPU (stream-K, the tile
choice) and the tile order of the suite's matmul_bias_gelu, against cuBLAS and torch.compile in the
same run. Run from the repository root on the GPU machine with dist/ built by tools/make-dist.sh
(normally through bench/gemm_split_check.sh). Most important first, a deadline (SPLIT_DEADLINE s)
keeps the whole short:
  1. matmul_bias_gelu 8192^3 (the suite's program): txc bench with TX_WG_GROUP_M=16 and =8
     alternated (two runs each), then torch.compile of the same function and cuBLAS's GEMM alone
  2. rows (program, M, N, K): the template the planner picks, txc bench (verified against the
     reference, the model's prediction), the same row with TX_WG_STREAMK=0 (the planner without
     stream-K) when the template is a stream-K one, and cuBLAS (the GEMM alone) and eager torch
Files in $OUT: gemm_split.txt (the summary, printed last), gemm_split.json, gemm_shapes.log (every
command and its output)."""
import json, math, os, sys, time

import gemm_shapes as gs
from checklib import cuda_time

OUT = gs.OUT
DEADLINE = float(os.environ.get("SPLIT_DEADLINE", 38))
T0 = time.time()
GELU = os.environ.get("SUITE", "dist/shared/bench/suite") + "/matmul_bias_gelu.tx"
# slow rows of bench/results/2026-12-01-h200-final3/gemm_shapes.txt, then held-out ragged shapes
ROWS = [
    ("linres", 777, 4096, 11008),
    ("xw", 1536, 1536, 1536),
    ("xw", 300, 5000, 3000),
    ("xw", 3000, 2000, 5000),
    ("xw", 700, 3000, 2000),
    ("xw", 1000, 1000, 1000),
    ("xw", 4096, 4096, 4096),
    ("xw", 2000, 700, 4096),
    ("xw", 5000, 300, 1000),
    ("gelu", 1200, 1800, 2500),
    ("xw", 2000, 1000, 3000),
    ("swiglu", 1000, 2816, 1024),
]
if os.environ.get("SPLIT_ROWS"):  # a subset by name, e.g. SPLIT_ROWS=xw_1536x1536x1536
    ROWS = [r for r in ROWS if gs.name_of(r) in os.environ["SPLIT_ROWS"].split(",")]


def left():
    return DEADLINE - (time.time() - T0)


def bench_env(prog_path, M, N, K, env):
    """txc bench of prog_path at M, N, K with env added: (kernel us of the matmul kernels, verified,
    predicted us) or an error string."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        rc, so, se = gs.run([gs.TXC, "bench", prog_path, "--device=gpu", "--random-inputs=1", "--iters", "20",
                             "--json", "--no-tune-cache"] + gs.dims(M, N, K),
                            timeout=40 if M * N * K > 1 << 36 else 20)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        fu = json.loads(so[so.index("{"):])["fused"]
        ks = [k for k in fu.get("kernels", []) if k.get("kind") == "matmul"] or fu.get("kernels", [])
        pred = {k.get("region"): k["predicted_us"] for k in ks}
        return {"us": sum(k["us"] for k in ks), "verified": bool(fu.get("verified")),
                "pred_us": sum(pred.values())}
    except (ValueError, KeyError, TypeError):
        return {"error": "txc bench rc %d: %s" % (rc, (se.strip().splitlines() or ["no output"])[-1][:160])}


def template_env(prog_path, M, N, K, env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        ptx = os.path.join(gs.WORK, "t_%d_%d_%d.ptx" % (M, N, K))
        rc, _, err = gs.run([gs.TXC, prog_path, "--target=sm_90a", "-o", ptx] + gs.dims(M, N, K))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if rc:
        return "compile failed: " + (err.strip().splitlines() or ["rc %d" % rc])[-1][:120]
    man = json.load(open(ptx + ".json"))
    return "; ".join(k.get("template") or "mma.sync" for k in man["kernels"] if k["region"] >= 0)


def gelu_ab(res, lines, tx_only):
    n = 8192
    path = GELU if os.path.exists(GELU) else gs.prog_file("gelu")
    if tx_only:
        runs = {"16": [], "8": []}
        tmpl = {g: template_env(path, n, n, n, {"TX_WG_GROUP_M": g}) for g in runs}
    else:
        runs, tmpl = res["gelu_ab"]["runs"], res["gelu_ab"]["templates"]
    for gm in () if not tx_only else ("16", "8", "16", "8")[:int(os.environ.get("SPLIT_AB_RUNS", 2))]:
        if left() < 8:
            break
        r = bench_env(path, n, n, n, {"TX_WG_GROUP_M": gm})
        runs[gm].append(r)
        print("gelu 8192^3 TX_WG_GROUP_M=%s: %s" % (gm, r), flush=True)
    comp = cub = None
    if tx_only:
        res["gelu_ab"] = {"runs": runs, "templates": tmpl}
        return
    try:
        import torch
        F = torch.nn.functional
        g = torch.Generator(device="cuda").manual_seed(1)
        u = lambda *s: (torch.rand(*s, generator=g, device="cuda") * 2 - 1).to(torch.bfloat16)  # noqa: E731
        a, b, c = u(n, n), u(n, n), u(n)
        cub = cuda_time(lambda: a @ b, 10)
        if left() > 0:
            f = torch.compile(lambda a, b, c: F.gelu(a @ b + c, approximate="tanh"), dynamic=False)
            comp = cuda_time(lambda: f(a, b, c), 10)
    except Exception as e:  # noqa: BLE001
        gs.log("torch: %s" % e)
    res["gelu_ab"] = {"runs": runs, "templates": tmpl, "torch_compile_us": comp, "cublas_us": cub}
    lines.append("matmul_bias_gelu 8192^3 (suite), kernel us per run; torch.compile %s us, cuBLAS GEMM alone %s us:" % (
        "%.1f" % comp if comp else "-", "%.1f" % cub if cub else "-"))
    for gm, rs in runs.items():
        us = [r["us"] for r in rs if r.get("us")]
        best = min(us) if us else None
        lines.append("  TX_WG_GROUP_M=%-2s %-44s runs %-22s best %s  torch.compile/tx %s  verified %s" % (
            gm, tmpl[gm][:44], " ".join("%.1f" % x for x in us) or "-", "%.1f" % best if best else "-",
            "%.3fx" % (comp / best) if comp and best else "-",
            "yes" if rs and all(r.get("verified") for r in rs) else "NO"))


def rows(res, lines):
    have_torch = True
    try:
        import torch  # noqa: F401
    except Exception:  # noqa: BLE001
        have_torch = False
    out = []
    for row in ROWS:
        if left() < 4:
            gs.log("deadline: %s and later rows not run" % gs.name_of(row))
            break
        prog, M, N, K = row
        p = gs.prog_file(prog)
        r = {"row": gs.name_of(row), "template": template_env(p, M, N, K, {})}
        r.update(bench_env(p, M, N, K, {}))
        # the other side of stream-K: the planner without it, or forced to it (TX_WG_STREAMK)
        alt = "0" if "streamk" in r["template"] else "1"
        at = template_env(p, M, N, K, {"TX_WG_STREAMK": alt})
        if at != r["template"] and left() > 6:
            r["alt_env"], r["alt_template"] = "TX_WG_STREAMK=" + alt, at
            r["alt"] = bench_env(p, M, N, K, {"TX_WG_STREAMK": alt})
        if have_torch:
            try:
                r.update(gs.torch_times(row))
            except Exception as e:  # noqa: BLE001
                r["torch_error"] = str(e)[:160]
        out.append(r)
        us, cb = r.get("us"), r.get("cublas_us")
        print("%-22s %-40s tx %s cuBLAS %s | %s %s %s" % (r["row"], r["template"][:40], us, cb, r.get("alt_env", ""),
                                                         r.get("alt_template", ""), r.get("alt")), flush=True)
        json.dump(res, open(os.path.join(OUT, "gemm_split.json"), "w"), indent=1)
    res["rows"] = out
    lines.append("")
    lines.append("| row (M x N x K) | template (planner) | tx us | pred us | cuBLAS us | cuBLAS/tx | verified | other side (env: template, us, pred us, cuBLAS/tx) |")
    lines.append("|---|---|---:|---:|---:|---:|---|---|")
    ratios = []
    for r in out:
        us, cb = r.get("us"), r.get("cublas_us")
        if us and cb:
            ratios.append(cb / us)
        ns = r.get("alt") or {}
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["row"], r["template"], "%.1f" % us if us else r.get("error", "-"),
            "%.1f" % r["pred_us"] if r.get("pred_us") else "-", "%.1f" % cb if cb else "-",
            "%.2fx" % (cb / us) if us and cb else "-", "yes" if r.get("verified") else "NO",
            "%s: %s %s %s %s%s" % (r.get("alt_env", ""), r.get("alt_template", ""),
                                  "%.1f" % ns["us"] if ns.get("us") else ns.get("error", ""),
                                  "%.1f" % ns["pred_us"] if ns.get("pred_us") else "",
                                  "%.2fx" % (cb / ns["us"]) if ns.get("us") and cb else "",
                                  "" if not ns or ns.get("verified") else " NOT VERIFIED") if ns else ""))
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else 0
    unver = [r["row"] for r in out if not r.get("verified")] + \
            [r["row"] + " (" + r["alt_env"] + ")" for r in out if r.get("alt") and not r["alt"].get("verified")]
    lines.append("")
    lines.append("rows: %d of %d in %.0f s; cuBLAS/tx geomean %.2fx, worst %s; unverified: %s" % (
        len(out), len(ROWS), time.time() - T0, geo, "%.2fx" % min(ratios) if ratios else "-",
        ", ".join(unver) or "none"))
    return not unver


def main():
    res, lines = {}, []
    print("gemm_split_check: txc %s" % gs.TXC, flush=True)
    ab_lines, row_lines = [], []
    global DEADLINE
    total, DEADLINE = DEADLINE, DEADLINE - float(os.environ.get("SPLIT_COMPILE_S", 18))
    try:  # the tx side of the A/B first, torch.compile after the rows (its compile is slow)
        gelu_ab(res, ab_lines, tx_only=True)
    except Exception as e:  # noqa: BLE001
        ab_lines.append("gelu A/B failed: %s" % e)
    ok = rows(res, row_lines)
    DEADLINE = total
    try:
        ab_lines = []
        gelu_ab(res, ab_lines, tx_only=False)
    except Exception as e:  # noqa: BLE001
        ab_lines.append("gelu A/B failed: %s" % e)
    lines = ["== gemm_split_check summary"] + row_lines + [""] + ab_lines
    text = "\n".join(lines)
    open(os.path.join(OUT, "gemm_split.txt"), "w").write(text + "\n")
    json.dump(res, open(os.path.join(OUT, "gemm_split.json"), "w"), indent=1)
    print(text, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
