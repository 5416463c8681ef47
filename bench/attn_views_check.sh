#!/usr/bin/env bash
# bench/attn_views_check.sh - the sm_90a attention kernel over split-heads views, on a Hopper GPU,
# from the repository root with dist/ carried (tools/make-dist.sh). Within BUDGET seconds
# (default 95), most important first:
#
# 0. the held-out programs of tests/attention/views/ (split heads with a batch dim: 4-D tensor
#    maps; GQA 16 over 4 over split heads; a key mask from lengths; D 64 and 128; causal via
#    iota; head dims 80 and 96 on the padded kernel; the attention half of a block with its
#    projections), written as a PyTorch user
#    writes them: the kernels and templates each plans (`kernels.txt`), verified by
#    `txc bench --device=gpu` against the reference interpreter at ragged sizes (B 2-3, S 130 /
#    300 / 1000, lengths 0, 1 and S), then timed at B=4 S=2048 with SDPA on the same views in the
#    same run (bench/attn_views_torch.py: SDPA alone and the whole expression with the merge back
#    to [B, S, H * D]); compute-sanitizer memcheck of the 4-D kernel;
# 1. (older checks, as time allows) split heads without a batch, causal, GQA, the LLaMA block,
#    decode.
# A summary last. Files in $OUT: kernels.txt, verify.txt, tx-*.json, torch*.json, log.txt.
set -uo pipefail
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup attn_views_check attn-views-out 95 0
V=tests/attention/views

# split heads of [S, H * D] projections, as in bench/suite-extra/llama_block.tx
cat >"$W/split_causal.tx" <<'EOF'
fn sh(t) {
  return permute(reshape(t, (S, 8, 128)), (1, 0, 2))
}
fn f(q: bf16[S, 1024], k: bf16[S, 1024], v: bf16[S, 1024]) -> bf16[8, S, 128] {
  s = f32(sh(q) @ transpose(sh(k), -1, -2)) * 0.08838834764831845
  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)
  return bf16(p) @ sh(v)
}
EOF
cat >"$W/split_d64.tx" <<'EOF'
fn f(q: bf16[S, 768], k: bf16[S, 768], v: bf16[S, 768]) -> bf16[S, 768] {
  qh = permute(reshape(q, (S, 12, 64)), (1, 0, 2))
  kh = permute(reshape(k, (S, 12, 64)), (1, 2, 0))
  vh = permute(reshape(v, (S, 12, 64)), (1, 0, 2))
  a = bf16(softmax(f32(qh @ kh) * 0.125, axis=-1)) @ vh
  return reshape(permute(a, (1, 0, 2)), (S, 768))
}
EOF
cat >"$W/split_llama.tx" <<'EOF'
fn sh(t) {
  return permute(reshape(t, (S, 32, 128)), (1, 0, 2))
}
fn f(q: bf16[S, 4096], k: bf16[S, 4096], v: bf16[S, 4096]) -> bf16[32, S, 128] {
  s = f32(sh(q) @ transpose(sh(k), -1, -2)) * 0.08838834764831845
  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)
  return bf16(p) @ sh(v)
}
EOF
# decode lengths: $1 = B, $2 = L, $3 = file -> 1, L, 0 (a wholly masked row), then spread
dlens() { "$PY" -c "import numpy as np,sys; b,l=int(sys.argv[1]),int(sys.argv[2]); a=np.array([[1,l,0][i%3] if i<3 else (i*7919)%l+1 for i in range(b)],'<i4'); np.save(sys.argv[3],a)" "$1" "$2" "$3"; }
# the attention kernel's template and the number of kernels (compile only)
tmpl() {
  "$TXC" "$@" --target=sm_90a -o "$W/t.ptx" >/dev/null 2>&1 || { echo "compile failed"; return; }
  "$PY" -c "import json,sys; m=json.load(open(sys.argv[1])); ks=m['kernels']; print('%d kernel(s): %s' % (len(ks), '; '.join(k.get('template') or k['name'] for k in ks)))" "$W/t.ptx.json" 2>/dev/null
}

: >"$OUT/verify.txt"
verify() { # ENV FILE SIZES...
  local cfg=$1 f=$2; shift 2
  local extra=() a
  case "$f" in
    *decode*) dlens "$(echo "$@" | sed 's/.*B=\([0-9]*\).*/\1/')" "$(echo "$@" | sed 's/.*L=\([0-9]*\).*/\1/')" "$W/dlen.npy"
              extra=(--input "len=$W/dlen.npy") ;;
  esac
  [ "$(left)" -gt 6 ] || { log "skipped verify $(basename "$f" .tx) $*: out of time"; return; }
  for a in $cfg; do export "${a?}"; done
  if timeout 40 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 "${extra[@]}" "$@" >"$W/v.txt" 2>&1 &&
     grep -q "verified" "$W/v.txt" && ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    $(basename "$f" .tx) $* $cfg [$(tmpl "$f" "$@")]" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  $(basename "$f" .tx) $* $cfg [$(tmpl "$f" "$@")]: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  for a in $cfg; do unset "${a%%=*}"; done
  cat "$W/v.txt" >>"$LOG"
}
tbench() { # NAME ENV FILE SIZES...
  local n=$1 cfg=$2 f=$3 a; shift 3
  local extra=()
  case "$f" in *decode*) "$PY" -c "import numpy as np; np.save('$W/flen.npy', np.full(8, 32768, '<i4'))"; extra=(--input "len=$W/flen.npy") ;; esac
  [ "$(left)" -gt 8 ] || { log "skipped timing $n: out of time"; echo '{}' >"$OUT/tx-$n.json"; return; }
  for a in $cfg; do export "${a?}"; done
  if timeout 40 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --json "${extra[@]}" "$@" >"$OUT/tx-$n.json" 2>>"$LOG"; then
    log "timed $n ($* $cfg) [$(tmpl "$f" "$@")]"
  else
    fail=1; log "FAIL  timing $n"; echo '{}' >"$OUT/tx-$n.json"
  fi
  for a in $cfg; do unset "${a%%=*}"; done
}

# verify_in NAME=FILE.npy FILE SIZES... / tbench_in NAME=FILE.npy TAG FILE SIZES...: with one input given
verify_in() {
  local inp=$1 f=$2; shift 2
  [ "$(left)" -gt 6 ] || { log "skipped verify $(basename "$f" .tx) $*: out of time"; return; }
  if timeout 40 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 --input "$inp" "$@" >"$W/v.txt" 2>&1 &&
     grep -q "verified" "$W/v.txt" && ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    $(basename "$f" .tx) $* ($inp) [$(tmpl "$f" "$@")]" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  $(basename "$f" .tx) $* ($inp) [$(tmpl "$f" "$@")]: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  cat "$W/v.txt" >>"$LOG"
}
tbench_in() {
  local inp=$1 n=$2 f=$3; shift 3
  [ "$(left)" -gt 8 ] || { log "skipped timing $n: out of time"; echo '{}' >"$OUT/tx-$n.json"; return; }
  if timeout 40 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --json --input "$inp" "$@" >"$OUT/tx-$n.json" 2>>"$LOG"; then
    log "timed $n ($*) [$(tmpl "$f" "$@")]"
  else
    fail=1; log "FAIL  timing $n"; echo '{}' >"$OUT/tx-$n.json"
  fi
}

# ---- 0. the held-out programs --------------------------------------------------------------
: >"$OUT/kernels.txt"
for f in "$V"/*.tx; do
  echo "$(basename "$f" .tx) B=2 S=1000: $(tmpl "$f" -D B=2 -D S=1000)" | tee -a "$OUT/kernels.txt"
done
hlens() { "$PY" -c "import numpy as np,sys; b,s=int(sys.argv[1]),int(sys.argv[2]); np.save(sys.argv[3], np.array([[0,1,s][i%3] if i<3 else (i*7919)%s+1 for i in range(b)],'<i4'))" "$1" "$2" "$3"; }
hlens 3 300 "$W/hlens.npy"
verify "" "$V/mha_d80.tx" -D B=2 -D S=1000
verify "" "$V/mha_d96.tx" -D B=3 -D S=130
verify "" "$V/mha_causal.tx" -D B=2 -D S=1000
verify "" "$V/gqa_causal.tx" -D B=2 -D S=1000
verify "" "$V/mha_d64.tx" -D B=3 -D S=130
verify_in "lens=$W/hlens.npy" "$V/mha_lens.tx" -D B=3 -D S=300
verify "" "$V/attn_block.tx" -D B=2 -D S=300
verify "" "$V/qkv_timm.tx" -D B=2 -D S=197
"$PY" -c "import numpy as np; np.save('$W/flens.npy', np.full(4, 2048, '<i4'))"
tbench h_mha_causal "" "$V/mha_causal.tx" -D B=4 -D S=2048
tbench h_gqa_causal "" "$V/gqa_causal.tx" -D B=4 -D S=2048
tbench h_mha_d64 "" "$V/mha_d64.tx" -D B=4 -D S=2048
tbench_in "lens=$W/flens.npy" h_mha_lens "$V/mha_lens.tx" -D B=4 -D S=2048
tbench h_mha_d80 "" "$V/mha_d80.tx" -D B=4 -D S=2048
tbench h_mha_d96 "" "$V/mha_d96.tx" -D B=4 -D S=2048
if [ "$(left)" -gt 15 ]; then
  timeout $(( $(left) - 5 )) "$PY" bench/attn_views_torch.py "$OUT/torch_views.json" 4 2048 >>"$LOG" 2>&1 || log "attn_views_torch.py failed (see log.txt)"
fi
CS=$(command -v compute-sanitizer || true)
if [ -n "$CS" ] && [ "$(left)" -gt 25 ]; then
  timeout 20 "$CS" --tool memcheck --error-exitcode 9 "$TXC" run "$V/mha_causal.tx" --device=gpu --random-inputs=3 \
    -D B=2 -D S=200 --output-dir "$W/so" >"$OUT/sanitize-memcheck-views.txt" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then log "ok    memcheck mha_causal B=2 S=200: $(grep -E 'ERROR SUMMARY' "$OUT/sanitize-memcheck-views.txt" | tail -1)"
  else fail=1; log "FAIL  memcheck mha_causal B=2 S=200 (rc $rc)"; fi
fi
"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary_views.txt"
import json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(os.path.join(out, p)))
    except Exception: return {}
th = load("torch_views.json")
print("held-out split-heads attention, B=4 S=2048 bf16 (%s)" % th.get("device", "?"))
print("| program | tx attention kernel us | TFLOP/s | tx program us | verified | SDPA us | SDPA/tx kernel | torch expression us | torch/tx program |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
for n, h, d, causal in [("mha_causal", 8, 128, True), ("gqa_causal", 16, 128, True), ("mha_d64", 12, 64, False), ("mha_lens", 16, 64, False),
                        ("mha_d80", 32, 80, True), ("mha_d96", 16, 96, False)]:
    r = load("tx-h_%s.json" % n); r = r.get("fused") or r
    ka = [k for k in r.get("kernels", []) if k.get("kind") == "attention"]
    ku = ka[0]["us"] if ka else None
    t = r.get("graph_us")
    fl = 4 * 4 * h * 2048 * 2048 * d * (0.5 if causal else 1.0)
    sd, fu = th.get("sdpa_" + n), th.get("full_" + n)
    sd = sd * 1000 if sd else None; fu = fu * 1000 if fu else None
    f = lambda x: "%.0f" % x if x else "-"
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (n, f(ku), "%.0f" % (fl / ku / 1e6) if ku else "-", f(t), r.get("verified"),
          f(sd), "%.2fx" % (sd / ku) if sd and ku else "-", f(fu), "%.2fx" % (fu / t) if fu and t else "-"))
for k, v in th.items():
    if k.endswith("_error"): print("torch %s: %s" % (k, v))
print("\nkernels per program (compile only, B=2 S=1000):")
try: print(open(os.path.join(out, "kernels.txt")).read())
except Exception: print("(none)")
print("verification (against the reference interpreter):")
try: print(open(os.path.join(out, "verify.txt")).read())
except Exception: print("(none)")
PYEOF

# ---- 1. older checks, as time allows --------------------------------------------------------
verify "" "$W/split_causal.tx" -D S=1000
verify "" "$X/attn_causal.tx" -D B=1 -D H=3 -D S=1100
verify "" "$X/attn_gqa.tx" -D B=2 -D S=1000
verify "" "$W/split_causal.tx" -D S=130

if [ "$(left)" -gt 50 ]; then
  BLOCK_DEADLINE=$(( $(left) - 25 )) timeout -k 5 $(( $(left) - 12 )) "$PY" bench/block_check.py >"$OUT/block_check.out" 2>&1 || fail=1
else
  log "skipped block_check: $(left) s left"
fi

tbench causal "" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
tbench causal_nozig "TX_ATTN_ZIGZAG=0" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
tbench causal_noskip "TX_ATTN_NO_SKIP=1" "$X/attn_causal.tx" -D B=4 -D H=32 -D S=4096
if [ "$(left)" -gt 12 ]; then
  timeout $(( $(left) - 3 )) "$PY" bench/fa3_torch.py "$OUT/torch.json" >>"$LOG" 2>&1 || log "fa3_torch.py failed (see log.txt)"
fi
tbench gqa "" "$X/attn_gqa.tx" -D B=4 -D S=4096
CS=$(command -v compute-sanitizer || true)
for tool in memcheck racecheck; do
  [ -n "$CS" ] && [ "$(left)" -gt 10 ] || { log "skipped $tool: $(left) s left"; continue; }
  timeout $(( $(left) - 3 )) "$CS" --tool $tool --error-exitcode 9 "$TXC" run "$W/split_causal.tx" --device=gpu --random-inputs=3 \
    -D S=300 --output-dir "$W/so" >"$OUT/sanitize-$tool-split.txt" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then log "ok    $tool split_causal S=300: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool-split.txt" | tail -1)"
  else fail=1; log "FAIL  $tool split_causal S=300 (rc $rc)"; fi
done
tbench decode "" "$X/attn_decode.tx" -D B=8 -D H=32 -D T=1 -D L=32768

"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(os.path.join(out, p)))
    except Exception: return {}
th = load("torch.json")
def fused(n):
    r = load("tx-%s.json" % n)
    if not r:  # the first run on this H200 (bench/results/2026-12-01-h200-attn-views/)
        try: r = json.load(open("bench/results/2026-12-01-h200-attn-views/tx-%s.json" % n))
        except Exception: r = {}
    return r.get("fused") or r
FC = 2*4*32*4096*4096*128
print("attn_views_check summary (%s)" % th.get("device", "?"))
print("| case | tx us | TFLOP/s | %copy | verified | SDPA us | SDPA/tx | target |")
print("|---|---:|---:|---:|---|---:|---:|---|")
for n, fl, an, tg in [("causal", FC, "sdpa_causal", ">= 1.0x"), ("causal_nozig", FC, "sdpa_causal", "(TX_ATTN_ZIGZAG=0)"),
                      ("causal_noskip", FC, "sdpa_causal", "(TX_ATTN_NO_SKIP=1)"),
                      ("gqa", FC, "sdpa_gqa", ">= 1.0x"), ("decode", 0, "sdpa_decode", ">= 1.0x, 80% of copy"),
                      ("decode_ks0", 0, "sdpa_decode", "(TX_ATTN_KSPLIT=0)"),
                      ("split_llama", 2*32*2048*2048*128, "", "(LLaMA attention alone, causal)")]:
    r = fused(n); t = r.get("graph_us")
    sd = th.get(an); sd = sd * 1000 if sd else None
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (n, "%.0f" % t if t else "-", "%.0f" % (fl / t / 1e6) if t and fl else "-",
          "%.0f%%" % r["pct_copy"] if r.get("pct_copy") and not fl else "-", r.get("verified"),
          "%.0f" % sd if sd else "-", "%.2fx" % (sd / t) if sd and t else "-", tg))
a, b, c = fused("causal").get("graph_us"), fused("causal_noskip").get("graph_us"), fused("causal_nozig").get("graph_us")
if a and b: print("\ncausal block skipping: %.2fx the same kernel without it (target >= 1.8x)" % (b / a))
if a and c: print("paired tile order: %.2fx the plain order" % (c / a))
print("\nverification (ragged sizes, against the reference; [kernels: templates]):")
try: print(open(os.path.join(out, "verify.txt")).read())
except Exception: print("(none)")
PYEOF
grep -E "^(PASS|FAIL|SKIP)" "$OUT/block_check.out" 2>/dev/null | grep -v "^PASS env"
sed -n '/^block_check summary/,$p' "$OUT/block_check.out" 2>/dev/null
grep -E "^timed|^FAIL|^skipped|memcheck" "$LOG"
exit $fail
