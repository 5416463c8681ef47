#!/usr/bin/env bash
# kernel-stats.sh - what ptxas makes of every kernel tx emits, so that a compiler change that
# must not slow the kernels down (a lighter LLVM pipeline, loops instead of unrolled code) can be
# compared kernel by kernel, without a GPU.
#
#   tools/kernel-stats.sh save FILE        compile every program with build/txc (TXC=... overrides)
#                                          at sm_90a and sm_80 and write one line per kernel to FILE
#   tools/kernel-stats.sh compare OLD NEW  print the kernels whose numbers differ, then a summary
#
# Programs: ../shared/bench/suite/*.tx, examples/*.tx, bench/suite-extra/*.tx, each with its
# symbols unbound and, when the file has a `# bench: -D ...` or `# main job: -D ...` line, with
# those sizes bound (the sizes that select the tensor-core templates).
# Per kernel: ptxas -v registers, spill store/load bytes, shared memory (static), SASS instruction
# count (nvdisasm of the cubin; NVDISASM=path, else nvdisasm or cuobjdump from PATH), and the
# lengths of its loops in SASS instructions (each backward branch: target to branch, inclusive),
# longest first. Line format (tab separated):
#   PROGRAM TARGET KERNEL regs spill_st spill_ld smem sass loops(comma separated)
# JOBS=n parallel compiles (default 2).
set -u
cd "$(dirname "$0")/.."
mode=${1:-}
if [ "$mode" = compare ]; then
    [ $# -eq 3 ] || { echo "usage: tools/kernel-stats.sh compare OLD NEW" >&2; exit 2; }
    exec python3 - "$2" "$3" <<'EOF'
import sys
def load(p):
    d = {}
    for l in open(p):
        f = l.rstrip('\n').split('\t')
        if len(f) >= 8: d[tuple(f[:3])] = f[3:]
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
names = ['regs', 'spill_st', 'spill_ld', 'smem', 'sass']
worse = better = same = 0
for k in sorted(set(a) | set(b)):
    if k not in a or k not in b:
        print('%-52s %s' % (' '.join(k), 'only in ' + ('NEW' if k in b else 'OLD'))); continue
    x, y = a[k], b[k]
    if x == y: same += 1; continue
    diffs = ['%s %s->%s' % (n, x[i], y[i]) for i, n in enumerate(names) if x[i] != y[i]]
    lx = x[5].split(',')[0] if x[5] else '-'
    ly = y[5].split(',')[0] if y[5] else '-'
    if x[5] != y[5]: diffs.append('longest loop %s->%s (loops %d->%d)' % (
        lx, ly, len(x[5].split(',')) if x[5] else 0, len(y[5].split(',')) if y[5] else 0))
    w = any(int(y[i]) > int(x[i]) for i in range(1, 3)) or int(y[0]) > int(x[0])
    worse += w; better += not w
    print('%-52s %s%s' % (' '.join(k), '; '.join(diffs), '  <-- more regs/spills' if w else ''))
print('kernel-stats: %d kernels identical, %d differ (%d with more registers or spills)' % (
    same, worse + better, worse))
EOF
fi
out=${2:-}
if [ "$mode" != save ] || [ -z "$out" ]; then
    echo "usage: tools/kernel-stats.sh save FILE | compare OLD NEW" >&2
    exit 2
fi
txc=$(realpath "${TXC:-build/txc}")
[ -x "$txc" ] || { echo "kernel-stats: no compiler at $txc" >&2; exit 2; }
dis=${NVDISASM:-$(command -v nvdisasm || true)}
cuobj=$(command -v cuobjdump || true)
[ -n "$dis$cuobj" ] || { echo "kernel-stats: needs nvdisasm or cuobjdump (NVDISASM=path)" >&2; exit 2; }
command -v ptxas >/dev/null || { echo "kernel-stats: needs ptxas" >&2; exit 2; }

# One job per line: NAME FILE [-D ...]
jobs_list() {
    local f base sizes
    for f in ../shared/bench/suite/*.tx examples/*.tx bench/suite-extra/*.tx; do
        [ -f "$f" ] || continue
        base=$(basename "$f" .tx)
        echo "$base $f"
        sizes=$(sed -n 's/^#.*\(bench\|main job\): *\(-D.*\)$/\2/p' "$f" | head -1)
        [ -n "$sizes" ] && echo "$base.D $f $sizes"
    done
}

# Writes the stat lines of one program at both targets to $KS_DIR/NAME.
stats_one() {
    local name=$1 file=$2 t w
    shift 2
    w=$(mktemp -d)
    exec >"$KS_DIR/$name"
    for t in sm_90a sm_80; do
        "$txc" "$file" "$@" --target=$t -o "$w/k.ptx" 2>/dev/null || continue
        ptxas -arch=$t -v "$w/k.ptx" -o "$w/k.cubin" 2>"$w/v.txt" || continue
        if [ -n "$dis" ]; then "$dis" -c "$w/k.cubin" >"$w/sass.txt" 2>/dev/null
        else "$cuobj" -sass "$w/k.cubin" >"$w/sass.txt" 2>/dev/null; fi
        python3 - "$name" "$t" "$w/v.txt" "$w/sass.txt" <<'EOF'
import re, sys
name, tgt, vfile, sfile = sys.argv[1:]
st = {}
cur = None
for l in open(vfile):
    m = re.search(r"Compiling entry function '(\w+)'", l)
    if m: cur = m.group(1); st[cur] = {'regs': 0, 'st': 0, 'ld': 0, 'smem': 0}; continue
    if not cur: continue
    m = re.search(r'(\d+) bytes spill stores, (\d+) bytes spill loads', l)
    if m: st[cur]['st'], st[cur]['ld'] = int(m.group(1)), int(m.group(2))
    m = re.search(r'Used (\d+) registers', l)
    if m: st[cur]['regs'] = int(m.group(1))
    m = re.search(r'(\d+) bytes smem', l)
    if m: st[cur]['smem'] = int(m.group(1))
# SASS: instructions per function and backward branches (addresses are byte offsets).
sass, loops = {}, {}
fn = None
for l in open(sfile):
    m = re.match(r'\s*(?:Function : |\.text\.)(\w+)', l)
    if m and (l.lstrip().startswith('Function') or l.rstrip().endswith(':')):
        fn = m.group(1); sass.setdefault(fn, 0); loops.setdefault(fn, []); continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*)', l)
    if not fn or not m: continue
    ins = m.group(2)
    if not ins.strip() or ins.strip().startswith('/*'): continue
    sass[fn] += 1
    addr = int(m.group(1), 16)
    b = re.search(r'\bBRA\b[^;]*?(?:0x([0-9a-f]+)|`\(\.L_x_(\d+)\))', ins)
    if b and b.group(1) is not None:
        tgt_addr = int(b.group(1), 16)
        if tgt_addr <= addr: loops[fn].append((addr - tgt_addr) // 16 + 1)
    elif b:
        loops[fn].append(('L', b.group(2), addr))
labels = {}
fn = None
for l in open(sfile):
    m = re.match(r'\s*(?:Function : |\.text\.)(\w+)', l)
    if m and (l.lstrip().startswith('Function') or l.rstrip().endswith(':')): fn = m.group(1); pend = []; continue
    m = re.match(r'\.L_x_(\d+):', l.strip())
    if m: pend.append(m.group(1)); continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/', l)
    if m and pend:
        for p in pend: labels[(fn, p)] = int(m.group(1), 16)
        pend = []
for f in loops:
    out = []
    for x in loops[f]:
        if isinstance(x, tuple):
            t = labels.get((f, x[1]))
            if t is not None and t <= x[2]: out.append((x[2] - t) // 16 + 1)
        else: out.append(x)
    loops[f] = sorted(out, reverse=True)
for k in sorted(st):
    s = st[k]
    print('\t'.join(map(str, [name, tgt, k, s['regs'], s['st'], s['ld'], s['smem'],
                              sass.get(k, 0), ','.join(map(str, loops.get(k, [])))])))
EOF
    done
    rm -rf "$w"
}
export -f stats_one
KS_DIR=$(mktemp -d)
trap 'rm -rf "$KS_DIR"' EXIT
export txc dis cuobj KS_DIR

jobs_list | xargs -P "${JOBS:-2}" -L 1 bash -c 'stats_one "$@"' _
cat "$KS_DIR"/* | sort >"$out"
echo "kernel-stats: $(wc -l <"$out") kernels in $out"
