#!/usr/bin/env bash
# bench/attn_d256_check.sh - the sm_90a attention kernel at head dims above 128 (192 and 256
# natively, 144-240 padded to them; cg_attn_wg_plan_for) and at D128 with measurement knobs, on a
# Hopper GPU: verification at ragged sizes against the reference, timings against SDPA in the same
# run. From the repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/attn_d256_check.sh                 # within BUDGET seconds (default 55)
#   STEPS=wide,sdpa bash bench/attn_d256_check.sh
#   D128_KNOBS="TX_ATTN_BN=176 TX_ATTN_ONES=1,TX_ATTN_POLY=8" ROUNDS=3 bash bench/attn_d256_check.sh
#
# Steps, in this order (a step that would not fit is skipped and says so):
#   verify: ragged sizes against the reference, each with its template: D256 S=17, causal D192
#           S=1100 (80 keys), D256 B8 H32 S=130 (about four work tiles per CTA), D240 S=300, f16
#           D256, the plain key loop at D256 (TX_ATTN_PIPELINE=0), D128 with TX_ATTN_ONES=1 and
#           TX_ATTN_POLY=8 (S=1000, a length mask with a wholly masked row: NaN), D256 S=1000,
#           D192 S=1000, causal D256 S=1100, D160 S=130;
#   ab:     D128 B4 H32 S4096: one warm-up run (not reported), then ROUNDS (default 2) rounds of
#           the default kernel and each knob set of D128_KNOBS (words; a word is
#           VAR=VALUE[,VAR=VALUE...]; default TX_ATTN_POLY=8 and TX_ATTN_ONES=1,TX_ATTN_POLY=8),
#           interleaved (the clocks drift within a run); the summary gives each one's mean;
#   sdpa:   SDPA (bench/attn_wide_torch.py) at D128 (first and last), D64, causal D128 and
#           B4 H16 S2048 at D256 (plain and causal), D192, D160;
#   wide:   B4 H16 S2048 at D256, D192, causal D256, D160 (padded to 192);
#   mma:    D256 on the mma.sync kernel (TX_ATTN_FA3=0: what the FA3 kernel buys);
#   a summary last (SDPA/tx > 1: tx is faster). Files in $OUT: tx-*.json, torch.json, verify.txt,
#   log.txt, summary.txt. Exit 1 when a check failed.
# The first H200 run (bench/results/2026-12-02-h200-attn-wide/run1) timed D64, causal and the ONES
# knob as well; their rows stay in the summary when their files exist.
set -uo pipefail
D128_KNOBS=${D128_KNOBS:-TX_ATTN_POLY=8 TX_ATTN_ONES=1,TX_ATTN_POLY=8}
ROUNDS=${ROUNDS:-2}
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup attn_d256_check attn-d256-out 55 5
STEPS=${STEPS:-verify,ab,sdpa,wide,mma}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$LOG" 2>&1
attn_programs
cat >"$W/causal.tx" <<'TX'
fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D], v: bf16[B, H, S, D]) -> bf16[B, H, S, D] {
  s = f32(q @ transpose(k, -1, -2)) * 0.0625
  keep = iota((S, S), axis=0) >= iota((S, S), axis=1)
  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v
}
TX

tl() { # the timeout of a step: at most $1 s, and 4 s short of the budget (the summary must run)
  local l=$(( $(left) - 4 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"
}
tmpl() { # "ENV" FILE SIZES...: the template of the program's attention kernel (compile only)
  local cfg=$1; shift
  # shellcheck disable=SC2086
  env $cfg "$TXC" "$@" --target=sm_90a -o "$W/t.ptx" >/dev/null 2>&1 && grep -o '"template": "[^"]*"' "$W/t.ptx.json" | head -1 | cut -d'"' -f4
}
tbench() { # NAME "ENV" FILE SIZES...: txc bench --json under ENV
  local n=$1 cfg=$2 f=$3; shift 3
  # shellcheck disable=SC2086
  if env $cfg timeout "$(tl 25)" "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --json "$@" >"$OUT/tx-$n.json" 2>>"$LOG"; then
    log "timed $n [$cfg] ($*) [$(tmpl "$cfg" "$f" "$@")]"
  else
    fail=1; log "FAIL  timing $n"; echo '{}' >"$OUT/tx-$n.json"
  fi
  echo "$cfg" >"$OUT/knob-$n.txt"
}
: >"$OUT/verify.txt"
verify() { # "ENV" FILE SIZES...: txc bench on the GPU, every output checked against the reference
  local cfg=$1 f=$2; shift 2
  [ "$(left)" -gt 5 ] || { log "skipped verify $(basename "$f" .tx) $*: out of time"; return; }
  # shellcheck disable=SC2086
  if env $cfg timeout "$(tl 20)" "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 "$@" >"$W/v.txt" 2>&1 &&
     grep -q "verified" "$W/v.txt" && ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    [$cfg] $(basename "$f" .tx) $* [$(tmpl "$cfg" "$f" "$@")]" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  [$cfg] $(basename "$f" .tx) $*: $(tail -c 400 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  cat "$W/v.txt" >>"$LOG"
}

WIDE="-D B=4 -D H=16 -D S=2048"
if has verify; then
  verify "" "$A" -D B=1 -D H=3 -D S=17 -D D=256
  verify "" "$W/causal.tx" -D B=1 -D H=2 -D S=1100 -D D=192
  verify "" "$A" -D B=8 -D H=32 -D S=130 -D D=256
  verify "" "$A" -D B=1 -D H=2 -D S=300 -D D=240
  verify "" "$W/f16.tx" -D B=1 -D H=2 -D S=1000 -D D=256
  verify "TX_ATTN_PIPELINE=0" "$A" -D B=1 -D H=3 -D S=1000 -D D=256
  verify "TX_ATTN_ONES=1 TX_ATTN_POLY=8" "$A" -D B=1 -D H=3 -D S=1000 -D D=128
  verify "TX_ATTN_ONES=1 TX_ATTN_POLY=8" "$W/lens.tx" -D B=3 -D H=2 -D S=300 --input "len=$W/len.npy"
  verify "TX_ATTN_POLY=8" "$W/causal.tx" -D B=1 -D H=3 -D S=1100 -D D=128
  verify "" "$A" -D B=1 -D H=3 -D S=1000 -D D=256
  verify "" "$A" -D B=1 -D H=3 -D S=1000 -D D=192
  verify "" "$W/causal.tx" -D B=1 -D H=3 -D S=1100 -D D=256
  verify "" "$A" -D B=2 -D H=2 -D S=130 -D D=160
fi
if has ab 15; then
  D128="-D B=4 -D H=32 -D S=4096 -D D=128"
  # shellcheck disable=SC2086
  tbench warm "" "$A" $D128
  for r in $(seq 1 "$ROUNDS"); do
    [ "$(left)" -gt 12 ] || { log "skipped round $r: $(left) s left"; break; }
    # shellcheck disable=SC2086
    tbench "ab_default_r$r" "" "$A" $D128
    i=0
    for kn in $D128_KNOBS; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      [ "$(left)" -gt 8 ] && tbench "ab_k${i}_r$r" "${kn//,/ }" "$A" $D128
    done
  done
fi
if has sdpa 20; then
  timeout "$(tl 30)" "$PY" bench/attn_wide_torch.py "$OUT/torch.json" >>"$LOG" 2>&1 || log "attn_wide_torch.py failed (see log.txt)"
fi
if has wide; then
  # shellcheck disable=SC2086
  tbench d256 "" "$A" $WIDE -D D=256
  # shellcheck disable=SC2086
  tbench d192 "" "$A" $WIDE -D D=192
  # shellcheck disable=SC2086
  tbench d256_causal "" "$W/causal.tx" $WIDE -D D=256
  # shellcheck disable=SC2086
  tbench d160 "" "$A" $WIDE -D D=160
fi
if has mma; then
  # shellcheck disable=SC2086
  tbench d256_mma "TX_ATTN_FA3=0" "$A" $WIDE -D D=256
fi

"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(os.path.join(out, p)))
    except Exception: return {}
def knob(n):
    try: return open(os.path.join(out, "knob-%s.txt" % n)).read().strip() or "default"
    except Exception: return "-"
th = load("torch.json")
def fused(n):
    r = load("tx-%s.json" % n)
    return r.get("fused") or r
def ms(k): return th[k] * 1000 if th.get(k) else None
def fl(s, d, causal=False): return 4 * 4 * 16 * s * s * d / (2 if causal else 1)
F128 = 4 * 4 * 32 * 4096 * 4096 * 128
s128 = [th[k] * 1000 for k in ("sdpa_d128", "sdpa_d128_end") if th.get(k)]
s128 = sum(s128) / len(s128) if s128 else None
rows = []
# the interleaved D128 rounds: each configuration's mean over its rounds
ab = {}
for f in sorted(os.listdir(out)):
    if f.startswith("tx-ab_") and f.endswith(".json"):
        n = f[6:-5].rsplit("_r", 1)[0]
        t = fused(f[3:-5]).get("graph_us")
        ab.setdefault(n, {"t": [], "knob": knob(f[3:-5]), "ok": True})
        if t: ab[n]["t"].append(t)
        ab[n]["ok"] = ab[n]["ok"] and fused(f[3:-5]).get("verified") is True
for n in sorted(ab, key=lambda n: (n != "default", n)):
    ts = ab[n]["t"]
    if ts: rows.append(("d128 " + n, F128, s128, "%s; rounds %s" % (ab[n]["knob"], ["%.0f" % t for t in ts]), sum(ts) / len(ts), ab[n]["ok"]))
for n in ("d128", "d128_k1", "d128_k2", "d128_k3", "d128_end"):
    if os.path.exists(os.path.join(out, "tx-%s.json" % n)): rows.append((n, F128, s128, knob(n)))
F64, FC = 4 * 8 * 12 * 1024 * 1024 * 64, 2 * 4 * 32 * 4096 * 4096 * 128
rows += [("d64", F64, ms("sdpa_d64"), ">= 0.9x"), ("d64_ones", F64, ms("sdpa_d64"), "TX_ATTN_ONES=1"),
         ("causal", FC, ms("sdpa_causal"), ">= 1.0x"), ("causal_ones", FC, ms("sdpa_causal"), "TX_ATTN_ONES=1"),
         ("d256", fl(2048, 256), ms("sdpa_d256"), "B4 H16 S2048"),
         ("d192", fl(2048, 192), ms("sdpa_d192"), "B4 H16 S2048"),
         ("d256_causal", fl(2048, 256, True), ms("sdpa_d256_causal"), "is_causal"),
         ("d160", fl(2048, 160), ms("sdpa_d160"), "padded to 192"),
         ("d256_mma", fl(2048, 256), ms("sdpa_d256"), "TX_ATTN_FA3=0 (mma.sync)")]
print("attn_d256_check summary (%s; SDPA d128: mean of the run's first and last anchor %s)" % (
    th.get("device", "?"), [th.get("sdpa_d128"), th.get("sdpa_d128_end")]))
print("| case | tx us | TFLOP/s | verified | SDPA us | SDPA/tx | note |")
print("|---|---:|---:|---|---:|---:|---|")
for row in rows:
    n, f, sd, note = row[:4]
    r = fused(n); t = r.get("graph_us")
    if len(row) > 4: t, r = row[4], {"verified": row[5]}
    if not t and not os.path.exists(os.path.join(out, "tx-%s.json" % n)): continue
    print("| %s | %s | %s | %s | %s | %s | %s |" % (n, "%.0f" % t if t else "-", "%.0f" % (f / t / 1e6) if t else "-",
          r.get("verified"), "%.0f" % sd if sd else "-", "%.2fx" % (sd / t) if sd and t else "-", note))
print("\nverification (ragged sizes, against the reference):")
try: print(open(os.path.join(out, "verify.txt")).read())
except Exception: print("(none)")
PYEOF
exit $fail
