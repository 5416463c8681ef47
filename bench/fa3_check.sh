#!/usr/bin/env bash
# bench/fa3_check.sh - the sm_90a attention kernel (FlashAttention-3 style, codegen/attention.c)
# on a Hopper GPU, from the repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/fa3_check.sh            # everything, within BUDGET seconds (default 140: later
#                                      # steps are skipped, and say so, when time runs out)
#   STEPS=verify,sanitize bash bench/fa3_check.sh
#
# 1. verify: `txc bench --device=gpu` (the check compares every output with the reference
#    interpreter, or samples it when too large) at ragged sizes: S = 1, 17, 130, 1000 with head
#    dims 64 and 128, f16 and bf16, causal / window / ALiBi / soft cap / GQA, rows wholly masked
#    by a length of 0, the causal kernel with block skipping off (TX_ATTN_NO_SKIP=1), and the output
#    stored into [B, S, H x D] for o_proj ([attention.store_transposed], tests/ostore/*.tx), multi-query
#    slices of a fused projection (tests/attention/views/mqa_*.tx), the scale after the mask
#    (examples/attention_scale_last.tx: tiles skipped through the division);
# 2. sanitize: compute-sanitizer memcheck, racecheck and synccheck on `txc run` of a causal
#    D128 S=300 and a GQA S=130 program;
# 3. time: `txc bench --json` (median of the whole graph) at the issue's sizes, and SDPA in the
#    same run (bench/fa3_torch.py: is_causal, enable_gqa);
# 4. ncu: SpeedOfLight / occupancy of the D128 S4096 kernel (one launch);
# 5. prints a summary last (ratios > 1: tx is faster). Files in $OUT: verify.txt, tx-*.json,
#    torch.json, sanitize-*.txt, ncu.txt, summary.txt, log.txt. Exit 1 when a check failed.
set -uo pipefail
STEPS=${STEPS:-time,verify,sanitize,time2}
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup fa3_check fa3-out 76 20
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$LOG" 2>&1

# programs written here (the suite's attention.tx has a symbolic head dim D)
attn_programs
# decode lengths: $1 = B, $2 = L, $3 = file -> 1, L, 0 (a wholly masked row), then spread
dlens() { "$PY" -c "import numpy as np,sys; b,l=int(sys.argv[1]),int(sys.argv[2]); a=np.array([[1,l,0][i%3] if i<3 else (i*7919)%l+1 for i in range(b)],'<i4'); np.save(sys.argv[3],a)" "$1" "$2" "$3"; }

# the template of a program's attention kernel (compile only, for the log and the summary)
tmpl() { "$TXC" "$@" --target=sm_90a -o "$W/t.ptx" >/dev/null 2>&1 && grep -o '"template": "[^"]*"' "$W/t.ptx.json" | head -1 | cut -d'"' -f4; }

: >"$OUT/verify.txt"
verify() { # FILE SIZES... : txc bench on the GPU, checked against the reference
  local f=$1; shift
  local extra=()
  case "$f" in
    *lens*) extra=(--input "len=$W/len.npy") ;;
    *decode*) dlens "$(echo "$@" | sed 's/.*B=\([0-9]*\).*/\1/')" "$(echo "$@" | sed 's/.*L=\([0-9]*\).*/\1/')" "$W/dlen.npy"
              extra=(--input "len=$W/dlen.npy") ;;
  esac
  if timeout 120 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 "${extra[@]}" "$@" >"$W/v.txt" 2>&1 &&
     grep -q "verified" "$W/v.txt" && ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    $(basename "$f" .tx) $* [$(tmpl "$f" "$@")]" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  $(basename "$f" .tx) $* [$(tmpl "$f" "$@")]: $(tail -c 400 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  cat "$W/v.txt" >>"$LOG"
}

P1="TX_ATTN_PIPELINE=1"; PP="TX_ATTN_PIPELINE=1 TX_ATTN_PINGPONG=1"; KS="TX_ATTN_KSPLIT=1"
# tx timings: NAME FILE SIZES...
tbench() {
  local n=$1 f=$2; shift 2
  local extra=()
  case "$f" in *decode*) "$PY" -c "import numpy as np; np.save('$W/flen.npy', np.full(8, 32768, '<i4'))"; extra=(--input "len=$W/flen.npy") ;; esac
  if timeout 150 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --json "${extra[@]}" "$@" >"$OUT/tx-$n.json" 2>>"$LOG"; then
    log "timed $n ($*) [$(tmpl "$f" "$@")]"
  else
    fail=1; log "FAIL  timing $n"; echo '{}' >"$OUT/tx-$n.json"
  fi
}
tcfg() { # NAME "ENV ASSIGNMENTS" FILE SIZES...: tbench under those assignments
  local n=$1 cfg=$2 a; shift 2
  for a in $cfg; do export "${a?}"; done
  tbench "$n" "$@"
  for a in $cfg; do unset "${a%%=*}"; done
}
if has time 10; then
  # the opt-in loops at the issue's sizes first (txc bench checks a sample of every output too)
  tcfg d128_pp "$PP" "$A" -D B=4 -D H=32 -D S=4096 -D D=128
  tcfg d128_pipe "$P1" "$A" -D B=4 -D H=32 -D S=4096 -D D=128
  tcfg causal_pp "$PP" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
  tcfg decode_ks "$KS" "$X/attn_decode.tx" -D B=8 -D H=32 -D T=1 -D L=32768
  tcfg d64_pp "$PP" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  tcfg gqa_pp "$PP" "$X/attn_gqa.tx" -D B=4 -D S=4096
fi

verify_cfg() { # verify under the environment assignments in $VCFG (logged with the row)
  local a
  for a in $VCFG; do export "${a?}"; done
  echo "[$VCFG]" >>"$OUT/verify.txt"
  verify "$@"
  for a in $VCFG; do unset "${a%%=*}"; done
}
if has verify 10; then
  for c in "$X/attn_causal.tx|-D B=1 -D H=3 -D S=1100" "$A|-D B=2 -D H=2 -D S=1000 -D D=64" "$A|-D B=1 -D H=3 -D S=17 -D D=128" \
           "$X/attn_gqa.tx|-D B=2 -D S=1000" "$W/lens.tx|-D B=3 -D H=2 -D S=300"; do
    # shellcheck disable=SC2086
    VCFG="$PP" verify_cfg "${c%%|*}" ${c#*|}
  done
  VCFG="$KS" verify_cfg "$X/attn_decode.tx" -D B=5 -D H=3 -D T=1 -D L=1000
  VCFG="$KS" verify_cfg "$X/attn_decode.tx" -D B=4 -D H=2 -D T=16 -D L=333
  VCFG="$P1" verify_cfg "$X/attn_causal.tx" -D B=1 -D H=3 -D S=1100
  VCFG="$P1" verify_cfg "$A" -D B=1 -D H=3 -D S=1000 -D D=128
  VCFG="$KS" verify_cfg "$X/attn_decode.tx" -D B=3 -D H=2 -D T=3 -D L=1
  # [attention.store_transposed]: the output stored into [B, S, H x D] for o_proj (ragged S, GQA
  # 5-D heads), each against the copy kernel it replaces (TX_ATTN_OSTORE=0)
  for c in "tests/ostore/mha.tx|-D B=32 -D H=12 -D S=197 -D D=64 -D E=768 -D N=768" \
           "tests/ostore/mha.tx|-D B=32 -D H=12 -D S=77 -D D=64 -D E=768 -D N=768" \
           "tests/ostore/gqa.tx|-D B=16 -D KVH=4 -D G=2 -D S=77 -D D=128 -D E=1024 -D N=1024" \
           "tests/ostore/gqa.tx|-D B=2 -D KVH=4 -D G=2 -D S=1500 -D D=128 -D E=1024 -D N=1024"; do
    # shellcheck disable=SC2086
    verify "${c%%|*}" ${c#*|}
    # shellcheck disable=SC2086
    VCFG="TX_ATTN_OSTORE=0" verify_cfg "${c%%|*}" ${c#*|}
  done
  # multi-query (Falcon): one key / value head as extent-1 slices of a fused projection
  for c in "tests/attention/views/mqa_qkv.tx|-D B=2 -D S=77" "tests/attention/views/mqa_qkv.tx|-D B=1 -D S=1000" \
           "tests/attention/views/mqa_v_view.tx|-D B=2 -D S=130" \
           "examples/attention_scale_last.tx|-D B=1 -D H=3 -D S=1100" "examples/attention_scale_last.tx|-D B=2 -D H=2 -D S=77"; do
    # shellcheck disable=SC2086
    verify "${c%%|*}" ${c#*|}
  done
fi

if has sanitize 12; then
  CS=$(command -v compute-sanitizer || true)
  if [ -z "$CS" ]; then
    log "sanitize: compute-sanitizer not found"
  else
    for c in "racecheck:pp-causal:$X/attn_causal.tx:-D B=1 -D H=2 -D S=300" "synccheck:pp-causal:$X/attn_causal.tx:-D B=1 -D H=2 -D S=300" \
             "memcheck:ks-decode:$X/attn_decode.tx:-D B=3 -D H=2 -D T=2 -D L=300" "memcheck:pp-causal:$X/attn_causal.tx:-D B=1 -D H=2 -D S=300" \
             "memcheck:ostore-gqa:tests/ostore/gqa.tx:-D B=16 -D KVH=4 -D G=2 -D S=77 -D D=128 -D E=1024 -D N=1024"; do
      tool=${c%%:*}; r=${c#*:}; n=${r%%:*}; r=${r#*:}; f=${r%%:*}; sz=${r#*:}
      [ "$(left)" -gt 8 ] || { log "skipped $tool $n: out of time"; continue; }
      cfg=""
      case "$n" in pp-*) cfg=$PP ;; pipe-*) cfg=$P1 ;; ks-*) cfg=$KS ;; esac
      ex=()
      case "$f" in *decode*) dlens 3 300 "$W/slen.npy"; ex=(--input "len=$W/slen.npy") ;; esac
      # shellcheck disable=SC2086
      env $cfg timeout 20 "$CS" --tool "$tool" --error-exitcode 9 "$TXC" run "$f" --device=gpu --random-inputs=3 "${ex[@]}" $sz \
        --output-dir "$W/so" >"$OUT/sanitize-$tool-$n.txt" 2>&1
      rc=$?
      summ=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" "$OUT/sanitize-$tool-$n.txt" | tail -1)
      if [ $rc -eq 0 ]; then log "ok    $tool $n: $summ"; else fail=1; log "FAIL  $tool $n (rc $rc): $summ"; fi
    done
  fi
fi

if has time2 10; then
  tcfg causal_noskip_pp "$PP TX_ATTN_NO_SKIP=1" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
  tbench decode "$X/attn_decode.tx" -D B=8 -D H=32 -D T=1 -D L=32768
  tcfg causal_pipe "$P1" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
  tcfg d64_pipe "$P1" "$A" -D B=8 -D H=12 -D S=1024 -D D=64
  timeout 40 "$PY" bench/fa3_torch.py "$OUT/torch.json" decode >>"$LOG" 2>&1 || log "fa3_torch.py failed (see log.txt)"
fi

if has ncu; then
  if command -v ncu >/dev/null; then
    TX_ATTN_PIPELINE=1 timeout 60 ncu --clock-control none -k regex:attention --launch-count 1 --section SpeedOfLight \
      --section Occupancy --section LaunchStats "$TXC" run "$A" --device=gpu --random-inputs=1 \
      -D B=4 -D H=32 -D S=4096 -D D=128 --output-dir "$W/no" >"$OUT/ncu.txt" 2>&1 || log "ncu failed (see ncu.txt)"
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Grid Size|Block Size|Dynamic Shared" "$OUT/ncu.txt" | sed 's/^/ncu d128 pipe: /' | tee -a "$LOG"
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
first = {}  # the SDPA anchors of the first run on this H200 where this run measured none
try: first = json.load(open("bench/results/2026-12-01-h200-fa3/torch.json"))
except Exception: pass
for k, v in first.items():
    if k.startswith("sdpa_") and k not in th: th[k] = v; th.setdefault("from_first", []).append(k)
def fused(n):
    r = load("tx-%s.json" % n)
    return r.get("fused") or r
F128, F64, FC = 4*4*32*4096*4096*128, 4*8*12*1024*1024*64, 2*4*32*4096*4096*128
rows = [("d128_pp", F128, "sdpa_d128", ">= 1.0x"), ("d128_pipe", F128, "sdpa_d128", ">= 1.0x"),
        ("causal_pp", FC, "sdpa_causal", ">= 1.0x"), ("causal_pipe", FC, "sdpa_causal", ">= 1.0x"),
        ("causal_noskip_pp", FC, "sdpa_causal", "-"), ("d64_pp", F64, "sdpa_d64", ">= 0.9x"),
        ("d64_pipe", F64, "sdpa_d64", ">= 0.9x"), ("gqa_pp", FC, "sdpa_gqa", ">= 1.0x"),
        ("decode", 0, "sdpa_decode", ">= 1.0x, 80% of copy"), ("decode_ks", 0, "sdpa_decode", ">= 1.0x, 80% of copy")]
print("fa3_check summary (%s; pipe = TX_ATTN_PIPELINE=1, pp = + TX_ATTN_PINGPONG=1, ks = TX_ATTN_KSPLIT=1)" % th.get("device", "?"))
print("| case | tx us | TFLOP/s | %copy | verified | SDPA us | SDPA/tx | target |")
print("|---|---:|---:|---:|---|---:|---:|---|")
for n, fl, an, tg in rows:
    r = fused(n); t = r.get("graph_us")
    sd = th.get(an); sd = sd * 1000 if sd else None
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (n, "%.0f" % t if t else "-", "%.0f" % (fl / t / 1e6) if t and fl else "-",
          "%.0f%%" % r["pct_copy"] if r.get("pct_copy") and not fl else "-", r.get("verified"),
          "%.0f" % sd if sd else "-", "%.2fx" % (sd / t) if sd and t else "-", tg))
if th.get("from_first"): print("(SDPA of %s: bench/results/2026-12-01-h200-fa3, the same H200 earlier today)" % ", ".join(th["from_first"]))
a, b = fused("causal_pp").get("graph_us"), fused("causal_noskip_pp").get("graph_us")
if a and b: print("\ncausal block skipping: %.2fx the same kernel without it (target >= 1.8x)" % (b / a))
print("\nverification (ragged sizes, against the reference):")
try: print(open(os.path.join(out, "verify.txt")).read())
except Exception: print("(none)")
PYEOF
grep -h "^ok\|^FAIL" "$LOG" | grep -E "memcheck|racecheck|synccheck" || true
exit $fail
