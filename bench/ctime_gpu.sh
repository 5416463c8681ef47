#!/usr/bin/env bash
# bench/ctime_gpu.sh - the GPU check of a compile-time change (docs/codegen.md, "Compile time"):
# the kernels this tree's compiler emits are verified and timed, in one run, against the same
# compiler with other LLVM settings. From the repository root with dist/ carried
# (tools/make-dist.sh):
#
#   bash bench/ctime_gpu.sh
#
# Sides (each the same dist/bin/txc, settings through the measurement knobs of codegen):
#   base       the settings this tree compiles with by default
#   epiunroll  TX_WG_EPI_UNROLL=1 (the wgmma looped epilogue one copy per unit, as before its
#              runtime unit loop)
#   main       TX_LLVM_PASSES=bench/ctime_full_passes.txt (every kernel through the full GPU
#              pipeline, as before the pipeline per kernel kind) and TX_WG_EPI_UNROLL=1: the code
#              main made before this compile-time work
#   nolsr      TX_LLVM_OPTIONS=-disable-lsr (the backend without loop strength reduction)
#   o2nolsr    that and TX_LLVM_CODEGEN_LEVEL=2 (code generation level Default)
#   o2         TX_LLVM_CODEGEN_LEVEL=2 alone (Default: EarlyCSE instead of GVN in NVPTX's IR passes)
#   o1         TX_LLVM_CODEGEN_LEVEL=1 (Less)
#   SIDES="base nolsr" overrides the list (default "base epiunroll main"); a side's env in side_env().
# 1. time: `txc bench --json --iters ITERS` of the programs of TIMED (default "llama mbg attention causal"; of
#    llama: the LLaMA block at S = 2048, mbg: matmul_bias_gelu 8192^3, mlp: mlp_block M 8192
#    D 4096 F 11008, attention: the suite's B4 H32 S4096 D128, causal: B4 H32 S4096), every side
#    in turn, two rounds (round 1, then the verification, then round 2);
# 2. verify: `txc bench --device=gpu` (every output against the reference, sampled when large)
#    of the LLaMA block at S = 300 (its two RMSNorms are one kernel compiled once: the second
#    entry is a renamed copy) with each side, then with the first side the looped-epilogue GEMMs
#    at ragged sizes (matmul_bias_gelu 2900 x 5000 x 1000 and 4000^2 x 1000 on 256 x 256 tiles,
#    mlp_block M 2000 D 1000 F 3000 on 256 x 128) and attention at ragged sizes;
# 3. prints a summary last: per kernel the base us, each side's us and side / base (below 1:
#    faster), the faster of the two rounds.
# Files in $OUT: verify.txt, NAME.SIDE{1,2}.json, log.txt. Under 75 s (BUDGET).
set -u
OUT=${OUT:-ctime-gpu-out}
TXC=${TXC:-dist/bin/txc}
SUITE=${SUITE:-dist/shared/bench/suite}
[ -d "$SUITE" ] || SUITE=../shared/bench/suite
ITERS=${ITERS:-10}
BUDGET=${BUDGET:-56}
SIDES=${SIDES:-base epiunroll main}
TIMED=${TIMED:-llama mbg attention causal}
PY=$(command -v python3 || command -v python)
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
[ -x "$TXC" ] || { echo "ctime_gpu: no txc at $TXC (carry dist/)" | tee -a "$LOG"; exit 2; }
fail=0

side_env() { # SIDE -> the env assignments of that side, one per line
    case "$1" in
    base) echo "TX_CTIME_SIDE=base" ;;
    epiunroll) echo "TX_WG_EPI_UNROLL=1" ;;
    main) printf '%s\n' "TX_LLVM_PASSES=$(cat bench/ctime_full_passes.txt)" "TX_WG_EPI_UNROLL=1" ;;
    nolsr) echo "TX_LLVM_OPTIONS=-disable-lsr" ;;
    o2nolsr) printf '%s\n' "TX_LLVM_OPTIONS=-disable-lsr" "TX_LLVM_CODEGEN_LEVEL=2" ;;
    o2) echo "TX_LLVM_CODEGEN_LEVEL=2" ;;
    o1) echo "TX_LLVM_CODEGEN_LEVEL=1" ;;
    *) echo "TX_CTIME_SIDE=$1" ;;
    esac
}

timed() { # NAME SIDE ROUND FILE SIZES...
    local name=$1 side=$2 round=$3 t
    shift 3
    t=$(( $(left) < 25 ? $(left) : 25 ))
    [ "$t" -gt 5 ] || { echo "skipped $name $side $round: no time left" >>"$LOG"; return; }
    echo "== $name $side $round: $*" >>"$LOG"
    mapfile -t envs < <(side_env "$side")
    timeout -k 3 "$t" env "${envs[@]}" "$TXC" bench "$@" --device=gpu --random-inputs=1 \
        --iters "$ITERS" --json >"$OUT/$name.$side$round.json" 2>>"$LOG" ||
        echo "   $name $side $round: exit $?" >>"$LOG"
}
A=$SUITE/attention.tx
timed_prog() { # NAME SIDE ROUND: one program of TIMED
    case "$1" in
    llama) timed llama "$2" "$3" bench/suite-extra/llama_block.tx -D S=2048 ;;
    mbg) timed mbg "$2" "$3" "$SUITE/matmul_bias_gelu.tx" -D M=8192 -D N=8192 -D K=8192 ;;
    mlp) timed mlp "$2" "$3" "$SUITE/mlp_block.tx" -D M=8192 -D D=4096 -D F=11008 ;;
    attention) timed attention "$2" "$3" "$A" -D B=4 -D H=32 -D S=4096 -D D=128 ;;
    causal) timed causal "$2" "$3" bench/suite-extra/attn_causal.tx -D B=4 -D H=32 -D S=4096 ;;
    esac
}
timing_round() {
    local side name
    for name in $TIMED; do for side in $SIDES; do timed_prog "$name" "$side" "$1"; done; done
}
timing_round 1

# verification
: >"$OUT/verify.txt"
verify() { # SIDE FILE SIZES...
    local side=$1 t=$(( $(left) < 15 ? $(left) : 15 ))
    shift
    [ "$t" -gt 3 ] || { echo "skipped $side $*: no time left" | tee -a "$OUT/verify.txt"; return; }
    mapfile -t envs < <(side_env "$side")
    if timeout -k 3 "$t" env "${envs[@]}" "$TXC" bench "$@" --device=gpu --random-inputs=1 \
        --iters 2 --json >"$OUT/v.json" 2>>"$LOG" &&
        "$PY" -c "import json,sys; sys.exit(0 if json.load(open('$OUT/v.json'))['fused']['verified'] else 1)"; then
        echo "ok    $side $*" | tee -a "$OUT/verify.txt"
    else
        echo "FAIL  $side $*" | tee -a "$OUT/verify.txt"
        fail=1
    fi
}
for side in $SIDES; do verify "$side" bench/suite-extra/llama_block.tx -D S=300; done
first=${SIDES%% *}
verify "$first" "$SUITE/matmul_bias_gelu.tx" -D M=2900 -D N=5000 -D K=1000
verify "$first" "$SUITE/mlp_block.tx" -D M=2000 -D D=1000 -D F=3000
verify "$first" "$SUITE/matmul_bias_gelu.tx" -D M=4000 -D N=4000 -D K=1000
verify "$first" "$A" -D B=1 -D H=3 -D S=130 -D D=128
verify "$first" bench/suite-extra/attn_causal.tx -D B=1 -D H=3 -D S=1100
verify "$first" "$SUITE/mlp_block.tx" -D M=300 -D D=256 -D F=520

timing_round 2

# summary
"$PY" - "$OUT" "$fail" "$TIMED" $SIDES <<'EOF' | tee -a "$LOG"
import json, os, sys
out, fail, timed, sides = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
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
print('per kernel us, the faster of 2 rounds; ratio = side / %s (below 1: faster)' % sides[0])
print('%-9s %-18s ' % ('program', 'kernel') + ' '.join('%16s' % s for s in sides))
for name in timed:
    d = {s: load(name, s) for s in sides}
    b = d[sides[0]]
    if not b[0]:
        print('%-9s (no %s timing)' % (name, sides[0]))
        continue
    for k in b[0]:
        cells = []
        for s in sides:
            v = d[s][0].get(k)
            cells.append('%16s' % ('-' if v is None else ('%.1f' % v if s == sides[0] else
                                                         '%.1f %.3f' % (v, v / b[0][k]))))
        print('%-9s %-18s ' % (name, k) + ' '.join(cells))
    cells = []
    for s in sides:
        g = d[s][1]
        cells.append('%16s' % ('-' if g is None else ('%.1f' % g if s == sides[0] else
                                                     '%.1f %.3f' % (g, g / b[1]))))
    print('%-9s %-18s ' % (name, 'graph') + ' '.join(cells) +
          '  verified ' + ' '.join('%s %s' % (s, d[s][2]) for s in sides))
EOF
echo "== ctime_gpu rc=$fail $(( $(date +%s) - T0 ))s" | tee -a "$LOG"
exit $fail
