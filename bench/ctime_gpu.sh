#!/usr/bin/env bash
# bench/ctime_gpu.sh - the kernels before and after the compile-time work, timed in one GPU run:
# dist/base/bin/txc (main before it) against dist/bin/txc, `txc bench` per program with the -D
# sizes of its bench comment, alternating base and new, per kernel. Run from the repository root
# with dist/ carried (tools/make-dist.sh, then the base build copied to dist/base/).
#
#   bash bench/ctime_gpu.sh [PROGRAM.tx ...]   (default: bench/suite-extra/llama_block.tx)
#
# Writes $OUT/NAME.{base,new}.json and log.txt; prints a table of per-kernel microseconds and the
# ratio new / base (below 1: faster now) last. PER_TIMEOUT (default 35 s) bounds each bench; each program's table is printed as soon as it is done.
set -u
OUT=${OUT:-bench-out}
PER_TIMEOUT=${PER_TIMEOUT:-35}
ITERS=${ITERS:-10}
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(bench/suite-extra/llama_block.tx)
for bin in dist/base/bin/txc dist/bin/txc; do
    [ -x "$bin" ] || { echo "ctime_gpu: no $bin (carry dist/ with dist/base/)" | tee -a "$LOG"; exit 2; }
done
summary() {
    python3 - "$OUT" "$@" <<'EOF' | tee -a "$LOG"
import json, os, sys
out = sys.argv[1]
print('ctime_gpu: per-kernel time, base (main before) vs new; ratio = new / base')
print('%-14s %-22s %10s %10s %7s %s' % ('program', 'kernel', 'base us', 'new us', 'ratio', 'verified'))
for f in sys.argv[2:]:
    name = os.path.basename(f)[:-3]
    r = {}
    for side in ('base', 'new'):
        try:
            r[side] = json.load(open(os.path.join(out, '%s.%s.json' % (name, side))))['fused']
        except Exception as e:
            r[side] = None
    if not r['base'] or not r['new']:
        print('%-14s (missing result: %s)' % (name, ', '.join(s for s in r if not r[s])))
        continue
    kb = {k['name']: k['us'] for k in r['base']['kernels']}
    for k in r['new']['kernels']:
        b = kb.get(k['name'])
        print('%-14s %-22s %10s %10.1f %7s' % (name, k['name'], '%.1f' % b if b else '-', k['us'],
                                            '%.3f' % (k['us'] / b) if b else '-'))
    gb, gn = r['base']['graph_us'], r['new']['graph_us']
    print('%-14s %-22s %10.1f %10.1f %7.3f base %s new %s' % (
        name, 'graph', gb, gn, gn / gb if gb else 0, r['base']['verified'], r['new']['verified']))
EOF
}
for f in "${progs[@]}"; do
    name=$(basename "$f" .tx)
    sizes=$(sed -n 's/^#.*\(bench\|main job\): *\(-D.*\)$/\2/p' "$f" | head -1)
    for side in base new; do
        bin=dist/bin/txc
        [ $side = base ] && bin=dist/base/bin/txc
        echo "== $name $side: $bin bench $f $sizes" >>"$LOG"
        # shellcheck disable=SC2086
        timeout -k 5 "$PER_TIMEOUT" "$bin" bench "$f" $sizes --device=gpu --random-inputs=1 --iters "$ITERS" \
            --json >"$OUT/$name.$side.json" 2>>"$LOG" || echo "   $name $side: exit $?" | tee -a "$LOG"
    done
    summary "$f"
done
