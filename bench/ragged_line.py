#!/usr/bin/env python3
"""bench/ragged_line.py LABEL SHAPE < `txc bench --json` output: one line (tile label, shape, the
matmul kernels' time, the model's prediction, verified or not, the templates)."""
import json
import sys

s = sys.stdin.read()
try:
    f = json.loads(s[s.index("{"):])["fused"]
    ks = [k for k in f["kernels"] if k.get("kind") == "matmul"] or f["kernels"]
    print("tx %-10s %-16s %8.2f us  pred %6.1f  %s  %s" % (
        sys.argv[1], sys.argv[2], sum(k["us"] for k in ks), ks[0].get("predicted_us", 0),
        "verified" if f.get("verified") else "NOT VERIFIED", " ".join(k.get("template", "") for k in ks)))
except (ValueError, KeyError, TypeError, IndexError):
    print("tx %-10s %-16s failed: %s" % (sys.argv[1], sys.argv[2], (s.strip().splitlines() or ["-"])[-1][:150]))
