#!/usr/bin/env bash
# bench/decode_ab.sh - decode attention B8 H32 T1 L32768 D128 (bf16) on the GPU: the key-split
# kernel's variants (compile-time knobs, docs/codegen-attention.md "Measurement knobs") against
# SDPA, PyTorch's copy and a read-only stream, in one run, from the repository root with dist/
# carried (tools/make-dist.sh):
#
#   bash bench/decode_ab.sh        (BUDGET=S seconds, default 78; VARIANTS="ENV ..." to choose)
#
# 1. verify: the key split at ragged sizes through `txc bench` (checked against the reference):
#    B1 H4 L32773 (a tile crossing the cache's end), B3 H2 T3 L1000 (split-KV, 3 blocks an SM);
# 2. time: tx for each variant (`txc bench --json`, median, L2 flushed; its sampled check
#    verifies each), the first three before the anchors;
# 3. anchors (bench/decode_read.py): SDPA (its own pick and each backend forced), PyTorch's
#    4 GiB copy, a Triton kernel reading 4 GiB once;
# 4. ncu of SDPA's kernel (grid, registers, shared memory, DRAM and L2) where time is left;
# 5. a summary last: tx us per variant, GB/s of K and V, SDPA/tx, and the copy and read-only
#    times of the same bytes.
# Files in $OUT: verify.txt, tx_*.json, read.json, ncu-sdpa.txt, summary.txt, log.txt.
set -uo pipefail
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup decode_ab decode-ab-out 78 6
DEC=$X/attn_decode.tx
SZ=(-D B=8 -D H=32 -D T=1 -D L=32768)
B3=TX_ATTN_KS_BLOCKS=3,TX_ATTN_KS_STAGES=2
VARIANTS=${VARIANTS:-"- TX_ATTN_KS_LEAN=0 $B3,TX_ATTN_SPLITS=3 | $B3,TX_ATTN_SPLITS=8 TX_ATTN_KS_L2=256 TX_ATTN_KS_L2=128 TX_ATTN_SPLITS=4 $B3 $B3,TX_ATTN_KS_L2=256,TX_ATTN_SPLITS=3 TX_ATTN_KS_STAGES=4 $B3,TX_ATTN_SPLITS=16"}
lens() { "$PY" -c "import numpy as np,sys; b,l,full=int(sys.argv[1]),int(sys.argv[2]),sys.argv[4]=='full'; np.save(sys.argv[3], np.array([l if full else ([1,l,0][i%3] if i<3 else (i*7919)%l+1) for i in range(b)],'<i4'))" "$1" "$2" "$3" "${4:-}"; }
verify() { # ENV (comma-separated; - for none) B L SIZES...
  local env=${1//,/ }; [ "$1" = - ] && env=""
  lens "$2" "$3" "$W/len.npy"; shift 3
  # shellcheck disable=SC2086
  if env $env timeout 30 "$TXC" bench "$DEC" --device=gpu --random-inputs=7 --iters 2 --input "len=$W/len.npy" "$@" >"$W/v.txt" 2>&1 &&
     ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    log "ok    verify $env $*"
  else
    fail=1; log "FAIL  verify $env $*: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')"
  fi
  cat "$W/v.txt" >>"$LOG"
}
verify - 1 32773 -D B=1 -D H=4 -D T=1 -D L=32773
verify "$B3,TX_ATTN_SPLITS=5" 3 1000 -D B=3 -D H=2 -D T=3 -D L=1000
lens 8 32768 "$W/full.npy" full
tx_time() { # ENV (comma-separated; - for none)
  local env=${1//,/ } tag=${1//[=,]/_}
  [ "$1" = - ] && env="" && tag=default
  if [ "$(left)" -lt 8 ]; then log "skipped $1: $(left) s left"; return; fi
  # shellcheck disable=SC2086
  if env $env timeout $(( $(left) - 3 )) "$TXC" bench "$DEC" --device=gpu --random-inputs=1 --iters 20 --timing-budget=1 --json --input "len=$W/full.npy" "${SZ[@]}" >"$OUT/tx_$tag.json" 2>>"$LOG"; then
    log "timed $1: $("$PY" -c "import json,sys; f=json.load(open(sys.argv[1]))['fused']; print(f['graph_us'], f['verified'], [k.get('template') for k in f.get('kernels',[])])" "$OUT/tx_$tag.json" 2>&1)"
  else
    fail=1; log "FAIL  timing $1"
  fi
}
anchors_done=0
for v in $VARIANTS; do
  if [ "$v" = "|" ]; then
    timeout $(( $(left) - 5 )) "$PY" bench/decode_read.py "$OUT/read.json" >>"$LOG" 2>&1 || log "decode_read.py failed (see log.txt)"
    anchors_done=1; continue
  fi
  tx_time "$v"
done
[ $anchors_done = 1 ] || timeout $(( $(left) - 5 )) "$PY" bench/decode_read.py "$OUT/read.json" >>"$LOG" 2>&1
if [ "$(left)" -gt 22 ] && command -v ncu >/dev/null; then
  cat >"$W/one.py" <<'PY'
import torch, torch.nn.functional as F
q = torch.randn(8, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
k = torch.randn(8, 32, 32768, 128, device="cuda", dtype=torch.bfloat16); v = torch.randn_like(k)
for _ in range(2): F.scaled_dot_product_attention(q, k, v, scale=0.0883883)
torch.cuda.synchronize()
PY
  timeout $(( $(left) - 4 )) ncu --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis \
    -k "regex:flash|fmha|attn|sdpa|cudnn" -c 1 "$PY" "$W/one.py" >"$OUT/ncu-sdpa.txt" 2>&1 ||
    log "ncu of SDPA failed or ran out of time (see ncu-sdpa.txt)"
  grep -E "^\s+[a-zA-Z_].*\(|Registers Per|Grid Size|Block Size|Dynamic Shared|Static Shared|DRAM Throughput|L2 Hit|L2 Cache Throughput|Duration|Achieved Occ|Theoretical Occ|Memory Throughput" "$OUT/ncu-sdpa.txt" | head -24 >>"$LOG"
fi
"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(p))
    except Exception: return {}
r = load(os.path.join(out, "read.json"))
kv = r.get("kv_bytes") or 2 * 8 * 32 * 32768 * 128 * 2
sd = r.get("sdpa_ms")
print("decode B8 H32 T1 L32768 D128 bf16 (H200), one run: tx (txc bench median, L2 flushed), SDPA, copy, read")
print("K+V bytes %.3f GB; SDPA %s us (%s GB/s)%s" % (kv / 1e9, "%.1f" % (sd * 1e3) if sd else "-",
      "%.0f" % (kv / sd / 1e6) if sd else "-",
      "".join("; %s %s" % (k[5:-3], "%.1f us" % (r[k] * 1e3)) for k in sorted(r) if k.startswith("sdpa_") and k.endswith("_ms") and k != "sdpa_ms")))
for key, what in (("copy_GBps", "copy (read + write)"), ("read_GBps", "read-only (Triton)")):
    g = r.get(key)
    if g: print("%-20s %7.0f GB/s: K+V in %.1f us" % (what, g, kv / g / 1e3))
print("%-44s %9s %9s %8s %8s  %s" % ("variant", "tx us", "GB/s", "%copy", "SDPA/tx", "verified"))
for p in sorted(glob.glob(os.path.join(out, "tx_*.json"))):
    f = (load(p).get("fused") or {}); t = f.get("graph_us")
    ks = [k.get("template") for k in f.get("kernels") or []]
    name = os.path.basename(p)[3:-5] + " [" + "; ".join(str(k) for k in ks) + "]"
    print("%-44s %9s %9s %8s %8s  %s" % (name[:44], "%.1f" % t if t else "-", "%.0f" % (kv / t / 1e3) if t else "-",
          "%.1f" % (100 * kv / t / 1e3 / r["copy_GBps"]) if t and r.get("copy_GBps") else "-",
          "%.3fx" % (sd * 1e3 / t) if t and sd else "-", f.get("verified")))
PYEOF
log "decode_ab: $(( $(date +%s) - T0 )) s, $([ $fail = 0 ] && echo all ok || echo FAILURES)"
exit $fail
