#!/usr/bin/env bash
# bench/attn_views_check.sh - the sm_90a attention kernel over split-heads views (a transformer
# block's q, k, v: permute(reshape(t, (S, H, D)), (1, 0, 2)) of the projections), GQA without the
# copy kernel of its returned reshape, and decode attention, on a Hopper GPU, from the repository
# root with dist/ carried (tools/make-dist.sh). Within BUDGET seconds (default 110), most
# important first:
#
# 1. verify: `txc bench --device=gpu` (every output against the reference interpreter) at ragged
#    S: split-heads causal D128, causal attention and GQA (the paired tile order; GQA's output
#    stored straight into the returned buffer);
# 2. blocks: bench/block_check.py (the LLaMA-width block and examples/transformer_block.tx:
#    verified at S = 300 against PyTorch, timed at S = 2048 against torch.compile);
# 3. time: causal B4 H32 S4096 (the default, TX_ATTN_ZIGZAG=0, TX_ATTN_NO_SKIP=1), SDPA in the
#    same run (bench/fa3_torch.py), GQA B4 S4096; compute-sanitizer memcheck and racecheck of
#    the split-heads kernel; decode B8 H32 L32768 last (its inputs take 8 s);
# 4. a summary last (rows this run did not reach come from bench/results/2026-12-01-h200-attn-views/,
#    the first run). Files in $OUT: verify.txt, tx-*.json, torch.json, block_check.*, log.txt.
set -uo pipefail
# shellcheck source=bench/attn_lib.sh
. "$(dirname "$0")/attn_lib.sh"
attn_setup attn_views_check attn-views-out 110 0

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
