#!/usr/bin/env python3
"""bench/report.py - merges `txc bench --json` results (tx.json from run_suite.sh)
with the PyTorch anchors (anchors.json from anchors.py) into a markdown table
and a JSON table.

usage: report.py TX_JSON ANCHORS_JSON REPORT_MD REPORT_JSON [--anchors-note TEXT]

Per workload: tx time (fused graph, median), ratios to PyTorch eager and
torch.compile (> 1: tx is faster), effective GB/s on the anchors' minimal byte
count and its share of the copy bandwidth measured in the same tx run, the
fused vs --no-fuse speed-up, the planner's prediction and its error, and
whether every output verified. Standard library only."""
import json
import sys

# suite program -> anchors.py workload (same computation and sizes)
ANCHOR_OF = {
    "add_relu": "add_relu_f32", "chain8": "chain8_f32", "bias_gelu": "bias_gelu_bf16",
    "swiglu": "swiglu_bf16", "softmax": "softmax_bf16", "layernorm": "layernorm_bf16",
    "add_rmsnorm": "add_rmsnorm_bf16", "softmax_wide": "softmax_wide_f32",
    "matmul_bias_gelu": "matmul_bias_gelu_bf16", "attention": "attention_bf16",
    "mlp_block": "mlp_block_bf16", "adam": "adam_256x1M_f32",
}
# extra library baselines worth a column when present
EXTRA = {"attention": "sdpa", "adam": "fused_adam"}


def anchor_us(row, variant):
    """Median time of an anchor variant in microseconds, or None. Rows that
    only kept a TFLOP/s figure are converted back with their FLOP count."""
    if not row:
        return None
    if variant + "_ms" in row:
        return row[variant + "_ms"] * 1e3
    tf, fl = row.get(variant + "_TFLOPs"), row.get("flops")
    if tf and fl:
        return fl / (tf * 1e6)
    return None


def fmt(v, spec="{:.1f}", none="-"):
    return none if v is None else spec.format(v)


def ratio(base_us, tx_us):
    return base_us / tx_us if base_us and tx_us else None


def row_for(name, w, anchors, copy_fallback):
    res = w.get("result") or {}
    fused, unfused = res.get("fused") or {}, res.get("unfused") or {}
    a = anchors.get(ANCHOR_OF.get(name, ""), None)
    tx_us = fused.get("graph_us")
    copy = res.get("copy_GBps") or copy_fallback
    ideal, own = (a or {}).get("ideal_bytes"), fused.get("bytes")
    if not ideal or (own and not 0.25 <= own / ideal <= 4):  # not the anchors' sizes: tx's own count
        ideal = own
    gbps = ideal / (tx_us * 1e3) if ideal and tx_us else None
    flops = (a or {}).get("flops") or fused.get("flops") or 0
    pred = fused.get("predicted_us")
    r = {
        "workload": name, "sizes": w.get("sizes", ""), "rc": w.get("rc"),
        "verified": bool(fused.get("verified")) and w.get("rc") == 0,
        "reference": res.get("reference"),
        "kernels": len(fused.get("kernels") or []), "unfused_kernels": len(unfused.get("kernels") or []) or None,
        "tx_us": tx_us, "unfused_us": unfused.get("graph_us"),
        "fusion_speedup": res.get("speedup"),
        "eager_us": anchor_us(a, "eager"), "compile_us": anchor_us(a, "compile"),
        "ideal_bytes": ideal, "GBps": gbps, "pct_copy": 100.0 * gbps / copy if gbps and copy else None,
        "TFLOPs": flops / (tx_us * 1e6) if flops and tx_us else None,
        "predicted_us": pred, "pred_err_pct": 100.0 * (pred - tx_us) / tx_us if pred and tx_us else None,
        "error": None if w.get("rc") == 0 else (w.get("stderr") or "failed")[-300:],
    }
    r["vs_eager"] = ratio(r["eager_us"], tx_us)
    r["vs_compile"] = ratio(r["compile_us"], tx_us)
    if name in EXTRA:
        r[EXTRA[name] + "_us"] = anchor_us(a, EXTRA[name])
        r["vs_" + EXTRA[name]] = ratio(r[EXTRA[name] + "_us"], tx_us)
    return r


def markdown(rows, meta):
    out = ["# tx benchmark: %s" % meta["device"], "",
           "copy bandwidth %s GB/s and launch overhead %s us (measured by txc bench); anchors: %s (%s)."
           % (fmt(meta["copy_GBps"]), fmt(meta["launch_us"], "{:.2f}"), meta["anchors_device"], meta["anchors_note"]),
           "Ratios are baseline time / tx time (> 1: tx is faster). GB/s counts the minimal bytes of anchors.py.", "",
           "| workload | verified | kernels (unfused) | tx us | eager us | compile us | vs eager | vs compile "
           "| GB/s | % copy | TFLOP/s | fusion speed-up | predicted us | pred err |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ver = "yes" if r["verified"] else ("FAIL" if r["rc"] is not None else "-")
        out.append("| %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], ver, r["kernels"], fmt(r["unfused_kernels"], "{}"), fmt(r["tx_us"]),
            fmt(r["eager_us"]), fmt(r["compile_us"]), fmt(r["vs_eager"], "{:.2f}x"),
            fmt(r["vs_compile"], "{:.2f}x"), fmt(r["GBps"], "{:.0f}"), fmt(r["pct_copy"], "{:.0f}%"),
            fmt(r["TFLOPs"], "{:.1f}"), fmt(r["fusion_speedup"], "{:.2f}x"), fmt(r["predicted_us"]),
            fmt(r["pred_err_pct"], "{:+.0f}%")))
    extras = [r for r in rows if any(k in r for k in ("vs_sdpa", "vs_fused_adam"))]
    if extras:
        out += ["", "Library baselines: " + "; ".join(
            "%s: %s %s us (%s)" % (r["workload"], k[3:], fmt(r.get(k[3:] + "_us")), fmt(r[k], "{:.2f}x"))
            for r in extras for k in ("vs_sdpa", "vs_fused_adam") if k in r)]
    out += ["", "Sizes and references:"]
    for r in rows:
        out.append("- %s: %s; reference: %s%s" % (r["workload"], r["sizes"] or "-", r["reference"] or "-",
                                                 "; error: " + r["error"].replace("\n", " ") if r["error"] else ""))
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    note = argv[argv.index("--anchors-note") + 1] if "--anchors-note" in argv else "anchors.json"
    tx = json.load(open(argv[1]))["workloads"]
    try:
        anchors = json.load(open(argv[2]))
    except (OSError, ValueError):
        anchors = {}
    results = [w.get("result") or {} for w in tx.values()]
    meta = {
        "device": next((r["device"] for r in results if r.get("device")), "unknown GPU"),
        "copy_GBps": next((r["copy_GBps"] for r in results if r.get("copy_GBps")), None),
        "launch_us": next((r["launch_us"] for r in results if r.get("launch_us")), None),
        "anchors_device": anchors.get("device", "-"), "anchors_note": note,
        "anchors_copy_GBps": anchors.get("copy_GBps"),
    }
    copy_fallback = meta["copy_GBps"] or anchors.get("copy_GBps")
    rows = [row_for(name, w, anchors, copy_fallback) for name, w in sorted(tx.items())]
    open(argv[3], "w").write(markdown(rows, meta))
    json.dump({"meta": meta, "rows": rows}, open(argv[4], "w"), indent=1)
    print(markdown(rows, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
