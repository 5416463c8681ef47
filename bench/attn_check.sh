#!/usr/bin/env bash
# bench/attn_check.sh - the attention variants (bench/suite-extra/attn_*.tx) on the GPU, in one run,
# from the repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/attn_check.sh
#
# 1. verification: every variant at ragged sizes (S not a multiple of a tile, S = 1, decode caches
#    of 1 and of the full length, rows wholly masked by a length of 0) through `txc bench`, whose
#    check compares every output with the reference interpreter;
# 2. timing: every variant at its "bench:" size (`txc bench --json`, median of the whole graph);
# 3. anchors: bench/attn_torch.py times SDPA (is_causal, enable_gqa), torch.compile of the same
#    PyTorch expression and FlexAttention where it runs, in the same run;
# 4. prints a summary table last (ratios > 1: tx is faster) with the issue-13 targets.
# Files in $OUT: verify.txt, tx.json, torch.json, summary.md, log.txt. Exit 1 when a check failed.
set -uo pipefail
TXC=${TXC:-dist/bin/txc}
DIR=${DIR:-bench/suite-extra}
OUT=${OUT:-attn-out}
PY=$(command -v python3 || command -v python)
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -x "$TXC" ] || { echo "attn_check: no txc at $TXC (carry dist/)"; exit 2; }
fail=0
log() { echo "$*" | tee -a "$LOG"; }

# lengths for the decode program: $1 = B, $2 = L -> a len.npy with 1, L, 0 (a wholly masked row), ...
lens() { "$PY" -c "import numpy as np,sys; b,l=int(sys.argv[1]),int(sys.argv[2]); a=np.array([[1,l,0][i%3] if i<3 else (i*7919)%l+1 for i in range(b)],'<i4'); np.save(sys.argv[3],a)" "$1" "$2" "$3"; }

: >"$OUT/verify.txt"
verify() { # FILE SIZES... : txc bench on the GPU, checked against the reference
  local f=$1; shift
  local extra=()
  case "$f" in *decode*) lens "$(echo "$@" | sed 's/.*B=\([0-9]*\).*/\1/')" "$(echo "$@" | sed 's/.*L=\([0-9]*\).*/\1/')" "$W/len.npy"; extra=(--input "len=$W/len.npy") ;; esac
  if timeout 120 "$TXC" bench "$f" --device=gpu --random-inputs=7 --iters 2 "${extra[@]}" "$@" >"$W/v.txt" 2>&1 &&
     ! grep -qi "mismatch\|not verified\|FAIL" "$W/v.txt"; then
    echo "ok    $(basename "$f" .tx) $*" | tee -a "$OUT/verify.txt"
  else
    fail=1; echo "FAIL  $(basename "$f" .tx) $*: $(tail -c 300 "$W/v.txt" | tr '\n' ' ')" | tee -a "$OUT/verify.txt"
  fi
  cat "$W/v.txt" >>"$LOG"
}
for f in "$DIR"/attn_causal.tx "$DIR"/attn_window.tx "$DIR"/attn_alibi.tx "$DIR"/attn_softcap.tx; do
  verify "$f" -D B=1 -D H=3 -D S=77
  verify "$f" -D B=2 -D H=2 -D S=1
  verify "$f" -D B=1 -D H=2 -D S=1100
done
verify "$DIR/attn_gqa.tx" -D B=1 -D S=77
verify "$DIR/attn_gqa.tx" -D B=2 -D S=130
verify "$DIR/attn_decode.tx" -D B=5 -D H=3 -D T=1 -D L=1000
verify "$DIR/attn_decode.tx" -D B=4 -D H=2 -D T=16 -D L=333
verify "$DIR/attn_decode.tx" -D B=3 -D H=2 -D T=3 -D L=1

# timing at the bench sizes
echo "{" >"$OUT/tx.json"
sep=""
for f in "$DIR"/attn_*.tx; do
  name=$(basename "$f" .tx)
  sizes=$(grep -o 'bench:.*' "$f" | head -1 | sed 's/^bench://')
  extra=()
  case "$name" in *decode*) lens 8 32768 "$W/len.npy"; "$PY" -c "import numpy as np; np.save('$W/len.npy', np.full(8, 32768, '<i4'))"; extra=(--input "len=$W/len.npy") ;; esac
  # shellcheck disable=SC2086
  if timeout 150 "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 20 --json "${extra[@]}" $sizes >"$W/$name.json" 2>>"$LOG"; then
    log "timed $name ($sizes)"
  else
    fail=1; log "FAIL  timing $name"; echo '{}' >"$W/$name.json"
  fi
  printf '%s"%s": ' "$sep" "$name" >>"$OUT/tx.json"; cat "$W/$name.json" >>"$OUT/tx.json"; sep=","
done
echo "}" >>"$OUT/tx.json"

timeout 300 "$PY" bench/attn_torch.py "$OUT/torch.json" >>"$LOG" 2>&1 || log "attn_torch.py failed (see log.txt)"

"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.md"
import json, os, sys
out = sys.argv[1]
def load(p):
    try: return json.load(open(os.path.join(out, p)))
    except Exception: return {}
tx, th = load("tx.json"), load("torch.json")
def us(name):
    r = tx.get(name) or {}
    r = r.get("fused") or r  # txc bench --json nests the fused plan's figures
    return r.get("graph_us"), r.get("verified")
full = (th.get("attn_full_sdpa_reference") or {}).get("compile_ms")
print("| variant | verified | tx ms | SDPA ms | compile ms | Flex ms | SDPA/tx | compile/tx | Flex/tx | target |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
targets = {"attn_causal": "SDPA/tx >= 1.0", "attn_window": "compile/tx >= 1.5", "attn_alibi": "compile/tx >= 1.5",
           "attn_softcap": "compile/tx >= 1.5", "attn_gqa": "SDPA/tx >= 1.0 (enable_gqa)",
           "attn_decode": "SDPA/tx >= 1.0, >= 80% of copy"}
for name in ["attn_causal", "attn_window", "attn_alibi", "attn_softcap", "attn_gqa", "attn_decode"]:
    t, ver = us(name)
    a = th.get(name) or {}
    ms = t / 1000 if t else None
    def r(k):
        v = a.get(k + "_ms")
        return "%.2fx" % (v / ms) if v and ms else "-"
    def f(k):
        v = a.get(k + "_ms")
        return "%.3f" % v if v else ("err" if a.get(k + "_error") else "-")
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (name, ver, "%.3f" % ms if ms else "-", f("sdpa"),
          f("compile"), f("flex"), r("sdpa"), r("compile"), r("flex"), targets[name]))
t, _ = us("attn_decode")
if t and th.get("copy_GBps"):
    gb = th["decode_bytes"] / (t * 1e3)
    print("\ndecode: %.0f GB/s = %.0f%% of copy (%.0f GB/s)" % (gb, 100 * gb / th["copy_GBps"], th["copy_GBps"]))
print("\nverification (ragged sizes, against the reference):")
print(open(os.path.join(out, "verify.txt")).read())
PYEOF
exit $fail
