#!/usr/bin/env bash
# bench/ctime_gpu.sh - the GPU check of a compile-time change (docs/codegen.md, "Compile time"):
# the kernels this tree's compiler emits are verified and timed, in one run, against the same
# compiler with the optimisation pipeline main used before (TX_LLVM_PASSES set to the text of
# bench/ctime_base_passes.txt; BASE_PASSES=TEXT overrides it). From the repository root with
# dist/ carried (tools/make-dist.sh):
#
#   bash bench/ctime_gpu.sh
#
# 1. verify: `txc bench --device=gpu` (every output against the reference, sampled when large)
#    of attention at ragged sizes (D 128 and 64, causal, GQA: the FA3 kernel's wgmma groups)
#    and of the LLaMA block at S = 300;
# 2. time: `txc bench --json --iters ITERS` of the LLaMA block at S = 2048 and the suite's
#    attention (B4 H32 S4096 D128), base and new alternating twice, the faster of each side
#    per kernel;
# 3. prints a summary last: per kernel base us, new us, new / base (below 1: faster now).
# Order: timing round 1, verification, timing round 2 (the helper batch kills a request at 75 s).
# Files in $OUT: verify.txt, NAME.{base,new}{1,2}.json, log.txt. Under 70 s (BUDGET).
set -u
OUT=${OUT:-ctime-gpu-out}
TXC=${TXC:-dist/bin/txc}
SUITE=${SUITE:-dist/shared/bench/suite}
[ -d "$SUITE" ] || SUITE=../shared/bench/suite
ITERS=${ITERS:-10}
BUDGET=${BUDGET:-68}
PY=$(command -v python3 || command -v python)
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
[ -x "$TXC" ] || { echo "ctime_gpu: no txc at $TXC (carry dist/)" | tee -a "$LOG"; exit 2; }
base_passes=${BASE_PASSES:-$(tr -d '\n' <bench/ctime_base_passes.txt 2>/dev/null)}
[ -n "$base_passes" ] || { echo "ctime_gpu: no base pipeline (bench/ctime_base_passes.txt)" | tee -a "$LOG"; exit 2; }
base_env=(TX_LLVM_PASSES="$base_passes")
fail=0

# timing: `txc bench --json`, one side
timed() { # NAME SIDE ROUND FILE SIZES...
    local name=$1 side=$2 round=$3 t
    shift 3
    t=$(( $(left) < 25 ? $(left) : 25 ))
    [ "$t" -gt 5 ] || { echo "skipped $name $side $round: no time left" >>"$LOG"; return; }
    echo "== $name $side $round: $*" >>"$LOG"
    if [ "$side" = base ]; then
        timeout -k 3 "$t" env "${base_env[@]}" "$TXC" bench "$@" --device=gpu --random-inputs=1 \
            --iters "$ITERS" --json >"$OUT/$name.$side$round.json" 2>>"$LOG"
    else
        timeout -k 3 "$t" "$TXC" bench "$@" --device=gpu --random-inputs=1 --iters "$ITERS" \
            --json >"$OUT/$name.$side$round.json" 2>>"$LOG"
    fi || echo "   $name $side $round: exit $?" >>"$LOG"
}
timing_round() {
    for side in new base; do
        timed llama $side $1 bench/suite-extra/llama_block.tx -D S=2048
    done
    for side in new base; do
        timed attention $side $1 "$A" -D B=4 -D H=32 -D S=4096 -D D=128
    done
}
A=$SUITE/attention.tx
timing_round 1

# verification
: >"$OUT/verify.txt"
verify() { # FILE SIZES...
    local t=$(( $(left) < 15 ? $(left) : 15 ))
    [ "$t" -gt 3 ] || { echo "skipped $*: no time left" | tee -a "$OUT/verify.txt"; return; }
    if timeout -k 3 "$t" "$TXC" bench "$@" --device=gpu --random-inputs=1 --iters 2 --json \
        >"$OUT/v.json" 2>>"$LOG" &&
        "$PY" -c "import json,sys; sys.exit(0 if json.load(open('$OUT/v.json'))['fused']['verified'] else 1)"; then
        echo "ok    $*" | tee -a "$OUT/verify.txt"
    else
        echo "FAIL  $*" | tee -a "$OUT/verify.txt"
        fail=1
    fi
}
verify "$A" -D B=1 -D H=3 -D S=130 -D D=128
verify "$A" -D B=2 -D H=2 -D S=1000 -D D=64
verify bench/suite-extra/attn_causal.tx -D B=1 -D H=3 -D S=1100
verify bench/suite-extra/attn_gqa.tx -D B=2 -D S=1000
verify bench/suite-extra/llama_block.tx -D S=300

timing_round 2

# summary
"$PY" - "$OUT" "$fail" <<'EOF' | tee -a "$LOG"
import json, os, sys
out, fail = sys.argv[1], int(sys.argv[2])
def load(name, side):
    ks, g, ver = {}, None, []
    for r in (1, 2):
        try:
            f = json.load(open(os.path.join(out, '%s.%s%d.json' % (name, side, r))))['fused']
        except Exception:
            continue
        ver.append(bool(f.get('verified')))
        for k in f['kernels']:
            ks[k['name']] = min(ks.get(k['name'], 1e30), k['us'])
        g = min(g, f['graph_us']) if g is not None else f['graph_us']
    return ks, g, ver
print('ctime_gpu summary: verify %s (%s)' % ('FAILED' if fail else 'all ok',
      os.path.join(out, 'verify.txt')))
print('per kernel, the faster of 2 rounds; base = TX_LLVM_PASSES of bench/ctime_base_passes.txt')
print('%-10s %-16s %10s %10s %8s' % ('program', 'kernel', 'base us', 'new us', 'new/base'))
for name in ('llama', 'attention'):
    kb, gb, vb = load(name, 'base')
    kn, gn, vn = load(name, 'new')
    if not kn or not kb:
        print('%-10s (missing: %s)' % (name, 'base' if not kb else 'new'))
        continue
    for k in kn:
        b = kb.get(k)
        print('%-10s %-16s %10s %10.1f %8s' % (name, k, '%.1f' % b if b else '-', kn[k],
                                              '%.3f' % (kn[k] / b) if b else '-'))
    print('%-10s %-16s %10.1f %10.1f %8.3f  verified base %s new %s' % (
        name, 'graph', gb, gn, gn / gb if gb else 0, vb, vn))
EOF
exit $fail
