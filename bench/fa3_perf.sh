#!/usr/bin/env bash
# bench/fa3_perf.sh - the sm_90a attention kernel's consumer (codegen/attention.c, the arithmetic
# per score) on a Hopper GPU: timings against SDPA in the same run, verification at ragged sizes,
# one ncu profile. From the repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/fa3_perf.sh                  # within BUDGET seconds (default 70, for a request killed at 75 s; a step that
#                                           # would not fit is skipped and says so)
#   STEPS=time,sdpa bash bench/fa3_perf.sh
#   QUICK=1 STEPS=time,sdpa,verify,tiles,sanitize bash bench/fa3_perf.sh   # a 75 s request
#
# Steps (interleaved, most important first; a `txc bench` at S=4096 takes a few seconds):
#   time:     `txc bench --json` (median of the whole graph; the bench checks a sample of every
#             output against the reference) of the default kernel (pipelined + ping-pong) at
#             D128 S4096, D64 S1024, causal, GQA;
#   sdpa:     bench/fa3_torch.py (SDPA, the backend PyTorch picks; is_causal, enable_gqa);
#   verify:   `txc bench` at ragged sizes (every output against the reference): D128 S=1000,
#             D64 S=1000, causal S=1100, GQA S=1000, a length mask with a wholly masked row,
#             D128 S=130 and 17, ALiBi, soft cap and sliding window S=1100, f16 S=130 (D64) and
#             S=1000 (D128), B8 H32 S=130 D128 and S=200 D64 (about 4 work tiles per CTA: both
#             Q buffers twice); skipping off; the plain loop; no ping-pong; the knobs of `tiles`;
#   tiles:    the key tile (TX_ATTN_BN=128 at D128, 176 / 192 at D64), one Q buffer (TX_ATTN_Q2=0
#             at D64), no ping-pong (TX_ATTN_PINGPONG=0) and three consumer warpgroups (192 query
#             rows, TX_ATTN_WG3=1 at D64) and the speculative exponents (TX_ATTN_SPEC=1 at D64)
#             against the default, same run;
#   sanitize: compute-sanitizer racecheck and synccheck of D128 (the wide tile) and causal S=300,
#             memcheck of causal and of D64;
#   time2:    causal with block skipping off (TX_ATTN_NO_SKIP=1: what skipping buys);
#   ncu:      one launch of the D128 kernel: SpeedOfLight, WarpStateStats, the stall reasons;
#   a summary last (SDPA/tx > 1: tx is faster). Files in $OUT: tx-*.json, torch.json,
#   verify.txt, sanitize-*.txt, ncu.txt, log.txt, summary.txt. Exit 1 when a check failed.
set -uo pipefail
STEPS=${STEPS:-time,sdpa,verify,tiles,sanitize,time2,ncu}
QUICK=${QUICK:-0} # 1: the tiles step times BN=128 at D128, WG3 and SPEC only, the sanitizers are
                  # racecheck D128 and WG3, synccheck causal, the second verify group its core
full() { [ "$QUICK" != 1 ]; }
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup fa3_perf fa3perf-out 70 10
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$LOG" 2>&1

attn_programs

tmpl() { # "ENV" FILE SIZES...: the template of the program's attention kernel (compile only)
  local cfg=$1; shift
  # shellcheck disable=SC2086
  env $cfg "$TXC" "$@" --target=sm_90a -o "$W/t.ptx" >/dev/null 2>&1 && grep -o '"template": "[^"]*"' "$W/t.ptx.json" | head -1 | cut -d'"' -f4
}

tbench() { # NAME "ENV" FILE SIZES...: txc bench --json under ENV
  local n=$1 cfg=$2 f=$3; shift 3
  # shellcheck disable=SC2086
  if env $cfg timeout 30 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --json "$@" >"$OUT/tx-$n.json" 2>>"$LOG"; then
    log "timed $n [$cfg] ($*) [$(tmpl "$cfg" "$f" "$@")]"
  else
    fail=1; log "FAIL  timing $n"; echo '{}' >"$OUT/tx-$n.json"
  fi
}
: >"$OUT/verify.txt"
verify() { # "ENV" FILE SIZES...: txc bench on the GPU, every output checked against the reference
  local cfg=$1 f=$2; shift 2
  local extra=()
  case "$f" in *lens*) extra=(--input "len=$W/len.npy") ;; esac
  # shellcheck disable=SC2086
  if env $cfg timeout 25 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 "${extra[@]}" "$@" >"$W/v.txt" 2>&1 &&
     grep -q "verified" "$W/v.txt" && ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    [$cfg] $(basename "$f" .tx) $*" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  [$cfg] $(basename "$f" .tx) $*: $(tail -c 400 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  cat "$W/v.txt" >>"$LOG"
}

if has verify; then # first: a kernel that hangs costs its timeout only
  verify "" "$A" -D B=1 -D H=3 -D S=1000 -D D=128
fi
if has time; then
  tbench d128 "" "$A" -D B=4 -D H=32 -D S=4096 -D D=128
fi
if has sdpa 25; then
  timeout 40 "$PY" bench/fa3_torch.py "$OUT/torch.json" >>"$LOG" 2>&1 || log "fa3_torch.py failed (see log.txt)"
fi
if has verify; then
  verify "" "$A" -D B=2 -D H=2 -D S=1000 -D D=64
  verify "" "$X/attn_causal.tx" -D B=1 -D H=3 -D S=1100
  verify "" "$A" -D B=1 -D H=3 -D S=130 -D D=128
fi
if has time; then
  tbench d64 "" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  tbench causal "" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
  tbench gqa "" "$X/attn_gqa.tx" -D B=4 -D S=4096
fi
if has tiles; then # the key tile and the second Q buffer against the default, same run
  tbench d64_spec "TX_ATTN_SPEC=1" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  tbench d128_bn128 "TX_ATTN_BN=128" "$A" -D B=4 -D H=32 -D S=4096 -D D=128
  tbench d64_wg3 "TX_ATTN_WG3=1" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  full && tbench d64_q1 "TX_ATTN_Q2=0" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  full && tbench d64_bn176 "TX_ATTN_BN=176" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  full && tbench d64_nopp "TX_ATTN_PINGPONG=0" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  full && tbench d128_nopp "TX_ATTN_PINGPONG=0" "$A" -D B=4 -D H=32 -D S=4096 -D D=128
  full && tbench d64_bn192 "TX_ATTN_BN=192" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
fi
if has sanitize 20; then
  CS=$(command -v compute-sanitizer || true)
  if [ -z "$CS" ]; then
    log "sanitize: compute-sanitizer not found"
  else
    for c in "racecheck:$A:128" "synccheck:$A:128" "racecheck:$X/attn_causal.tx:" "synccheck:$X/attn_causal.tx:" \
             "memcheck:$X/attn_causal.tx:" "memcheck:$A:64" "racecheck:$A:64"; do
      case "$QUICK:$c" in 1:synccheck:*/attention.tx:*|1:racecheck:*attn_causal*|1:memcheck:*) continue ;; esac
      tool=${c%%:*}; rest=${c#*:}; f=${rest%:*}; d=${rest##*:}
      name=$tool-$(basename "$f" .tx)$d
      [ "$(left)" -gt 10 ] || { log "skipped $name: out of time"; continue; }
      sz="-D B=1 -D H=2 -D S=300"; [ -n "$d" ] && sz="-D B=1 -D H=2 -D S=300 -D D=$d"
      cfg=""; [ "$tool:$d" = "racecheck:64" ] && cfg="TX_ATTN_WG3=1" name=$name-wg3
      # shellcheck disable=SC2086
      env $cfg timeout 20 "$CS" --tool "$tool" --error-exitcode 9 "$TXC" run "$f" --device=gpu --random-inputs=3 $sz \
        --output-dir "$W/so" >"$OUT/sanitize-$name.txt" 2>&1
      rc=$?
      summ=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-$name.txt" | tail -1)
      if [ $rc -eq 0 ]; then log "ok    $name: $summ"; else fail=1; log "FAIL  $name (rc $rc): $summ"; fi
    done
  fi
fi
if has verify; then
  verify "" "$X/attn_gqa.tx" -D B=2 -D S=1000
  verify "" "$W/lens.tx" -D B=3 -D H=2 -D S=300
  verify "" "$X/attn_alibi.tx" -D B=1 -D H=2 -D S=1100
  full && verify "" "$X/attn_softcap.tx" -D B=1 -D H=2 -D S=1100
  full && verify "" "$X/attn_window.tx" -D B=1 -D H=2 -D S=1100
  full && verify "" "$W/f16.tx" -D B=2 -D H=1 -D S=130 -D D=64
  verify "" "$W/f16.tx" -D B=1 -D H=2 -D S=1000 -D D=128
  full && verify "" "$A" -D B=1 -D H=3 -D S=17 -D D=128
  verify "" "$A" -D B=8 -D H=32 -D S=130 -D D=128
  verify "" "$A" -D B=8 -D H=32 -D S=200 -D D=64
  full && verify "TX_ATTN_NO_SKIP=1" "$X/attn_causal.tx" -D B=1 -D H=2 -D S=1000
  verify "TX_ATTN_PIPELINE=0" "$A" -D B=1 -D H=3 -D S=1000 -D D=128
  full && verify "TX_ATTN_PINGPONG=0" "$A" -D B=1 -D H=3 -D S=1000 -D D=128
  verify "TX_ATTN_BN=128" "$A" -D B=1 -D H=3 -D S=1000 -D D=128
  full && verify "TX_ATTN_BN=176" "$A" -D B=2 -D H=2 -D S=1000 -D D=64
  full && verify "TX_ATTN_BN=192" "$A" -D B=8 -D H=32 -D S=200 -D D=64
  full && verify "TX_ATTN_Q2=0" "$A" -D B=2 -D H=2 -D S=1000 -D D=64
  verify "TX_ATTN_WG3=1" "$A" -D B=2 -D H=2 -D S=1000 -D D=64
  verify "TX_ATTN_SPEC=1" "$A" -D B=2 -D H=2 -D S=1000 -D D=64
  verify "TX_ATTN_SPEC=1" "$A" -D B=2 -D H=4 -D S=1024 -D D=64
  verify "TX_ATTN_WG3=1" "$A" -D B=8 -D H=32 -D S=200 -D D=64
  full && verify "TX_ATTN_WG3=1" "$X/attn_alibi.tx" -D B=1 -D H=2 -D S=1100
fi
if has time2 15; then
  tbench causal_noskip "TX_ATTN_NO_SKIP=1" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
fi
if has ncu 12; then
  if command -v ncu >/dev/null; then
    timeout "$(( $(left) - 3 ))" ncu --clock-control none -k regex:attention --launch-count 1 --section SpeedOfLight \
      --section WarpStateStats --section ComputeWorkloadAnalysis \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" "$TXC" run "$A" --device=gpu \
      --random-inputs=1 -D B=4 -D H=32 -D S=4096 -D D=128 --output-dir "$W/no" >"$OUT/ncu.txt" 2>&1 || log "ncu failed (see ncu.txt)"
    grep -E "Duration|Compute \(SM\) Throughput|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|stalled" "$OUT/ncu.txt" | sed 's/^/ncu d128: /' | tee -a "$LOG"
  else
    log "ncu not found"
  fi
fi

"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(os.path.join(out, p)))
    except Exception: return {}
th = load("torch.json")
def fused(n):
    r = load("tx-%s.json" % n)
    return r.get("fused") or r
F128, F64, FC = 4*4*32*4096*4096*128, 4*8*12*1024*1024*64, 2*4*32*4096*4096*128
rows = [("d128", F128, "sdpa_d128", ">= 1.0x"), ("d64", F64, "sdpa_d64", ">= 0.9x"),
        ("causal", FC, "sdpa_causal", ">= 1.0x"), ("gqa", FC, "sdpa_gqa", ">= 1.0x"),
        ("causal_noskip", FC, "sdpa_causal", "-"),
        ("d128_bn128", F128, "sdpa_d128", "TX_ATTN_BN=128"), ("d128_nopp", F128, "sdpa_d128", "TX_ATTN_PINGPONG=0"),
        ("d64_q1", F64, "sdpa_d64", "TX_ATTN_Q2=0"), ("d64_bn176", F64, "sdpa_d64", "TX_ATTN_BN=176"),
        ("d64_nopp", F64, "sdpa_d64", "TX_ATTN_PINGPONG=0"), ("d64_bn192", F64, "sdpa_d64", "TX_ATTN_BN=192"),
        ("d64_wg3", F64, "sdpa_d64", "TX_ATTN_WG3=1"), ("d64_spec", F64, "sdpa_d64", "TX_ATTN_SPEC=1")]
print("fa3_perf summary (%s; the default kernel: pipelined + ping-pong)" % th.get("device", "?"))
print("| case | tx us | TFLOP/s | verified | SDPA us | SDPA/tx | target / knob |")
print("|---|---:|---:|---|---:|---:|---|")
for n, fl, an, tg in rows:
    r = fused(n); t = r.get("graph_us")
    if not t and n not in ("d128", "d64", "causal", "gqa"): continue
    sd = th.get(an); sd = sd * 1000 if sd else None
    print("| %s | %s | %s | %s | %s | %s | %s |" % (n, "%.0f" % t if t else "-", "%.0f" % (fl / t / 1e6) if t else "-",
          r.get("verified"), "%.0f" % sd if sd else "-", "%.2fx" % (sd / t) if sd and t else "-", tg))
a, b = fused("causal").get("graph_us"), fused("causal_noskip").get("graph_us")
if a and b: print("\ncausal block skipping: %.2fx the same kernel without it (target >= 1.8x)" % (b / a))
print("\nverification (ragged sizes, against the reference):")
try: print(open(os.path.join(out, "verify.txt")).read())
except Exception: print("(none)")
PYEOF
exit $fail
