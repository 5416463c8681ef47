#!/usr/bin/env bash
# bench/compile_time.sh - compile time of every benchmark program on one CPU core (no GPU needed).
#
#   bash bench/compile_time.sh [--runs N] [--target T] [--txc PATH] [--base PATH] [--only a,b]
#                              [--md FILE]
#
# For ../shared/bench/suite/*.tx, examples/*.tx and bench/suite-extra/*.tx (each with the -D sizes
# of its `# bench:` / `# main job:` comment, the sizes the benchmarks run) runs
# `txc FILE SIZES --target=T -o TMP.ptx` N times (default 5) pinned to CPU 0 (taskset -c 0) and
# prints the median wall time and the median CPU time (user + system) per program, the number of
# kernels, and the issue-11 target line: the LLaMA-width block (bench/suite-extra/llama_block.tx)
# under 150 ms on one core. Wall time includes waiting for the core when the machine is shared;
# CPU time does not: the target line reads the CPU time. --md FILE also writes the table as
# markdown. --base PATH also times a second compiler (e.g. main's build) interleaved with the
# first run by run (so both see the same load) and adds its CPU time and the ratio new / base.
# Exit status 0 when every program compiled (the target line is information, not a failure), 1
# otherwise.
set -u
cd "$(dirname "$0")/.."
runs=5
target=sm_90a
txc=${TXC:-build/txc}
only=""
md=""
base=""
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --txc) txc=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --md) md=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    *) echo "compile_time: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$txc" ] || { echo "compile_time: no txc at $txc (build first or pass --txc)" >&2; exit 2; }
[ -z "$base" ] || [ -x "$base" ] || { echo "compile_time: no base compiler at $base" >&2; exit 2; }
command -v python3 >/dev/null || { echo "compile_time: needs python3" >&2; exit 2; }
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)

list=$(mktemp)
trap 'rm -f "$list"' EXIT
for f in ../shared/bench/suite/*.tx examples/*.tx bench/suite-extra/*.tx; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .tx)
    if [ -n "$only" ] && ! echo ",$only," | grep -q ",$name,"; then continue; fi
    sizes=$(sed -n 's/^#.*\(bench\|main job\): *\(-D.*\)$/\2/p' "$f" | head -1)
    printf '%s\t%s\t%s\n' "$name" "$f" "$sizes" >>"$list"
done

python3 - "$list" "$txc" "$target" "$runs" "$md" "$base" "${pin[@]}" <<'EOF'
import os, resource, shutil, statistics, subprocess, sys, tempfile, time
lst, txc, target, runs, md, base = sys.argv[1:7]
pin = sys.argv[7:]
runs = int(runs)
rows, failed = [], 0
tmp = tempfile.mkdtemp()
out = os.path.join(tmp, 'k.ptx')
def once(comp, path, sizes):
    """(wall ms, CPU ms) of one compile, or (None, error line)."""
    cmd = pin + [comp, path] + sizes.split() + ['--target=' + target, '-o', out]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        return None, (p.stderr.strip().splitlines() or ['exit %d' % p.returncode])[-1]
    return (t1 - t0) * 1e3, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3
for line in open(lst):
    name, path, sizes = line.rstrip('\n').split('\t')
    walls, cpus, bcpus, err = [], [], [], None
    for _ in range(runs):
        w, c = once(txc, path, sizes)
        if w is None:
            err = c
            break
        walls.append(w)
        cpus.append(c)
        if base:
            bw, bc = once(base, path, sizes)
            if bw is not None: bcpus.append(bc)
    if err:
        failed += 1
        rows.append((name, sizes, None, None, 0, err, None))
        continue
    w, c = once(txc, path, sizes)  # the kernel count of this compiler's PTX
    nk = sum(1 for l in open(out) if l.startswith('.visible .entry') or l.startswith('.entry'))
    rows.append((name, sizes, statistics.median(walls), statistics.median(cpus), nk, '',
                 statistics.median(bcpus) if bcpus else None))
shutil.rmtree(tmp, ignore_errors=True)
hdr = '| program | sizes | kernels | wall ms (median of %d) | CPU ms (median) |' % runs
sep = '|---|---|---:|---:|---:|'
if base:
    hdr += ' base CPU ms | new / base |'
    sep += '---:|---:|'
lines = [hdr, sep]
for name, sizes, w, c, nk, err, bc in rows:
    if w is None:
        lines.append('| %s | %s | - | failed: %s | |' % (name, sizes, err) + (' | |' if base else ''))
    else:
        l = '| %s | %s | %d | %.0f | %.0f |' % (name, sizes or '(unbound)', nk, w, c)
        if base: l += ' %s | %s |' % (('%.0f' % bc, '%.2f' % (c / bc)) if bc else ('-', '-'))
        lines.append(l)
tot_w = sum(r[2] for r in rows if r[2] is not None)
tot_c = sum(r[3] for r in rows if r[3] is not None)
tl_ = '| **total** | | | %.0f | %.0f |' % (tot_w, tot_c)
if base:
    tot_b = sum(r[6] for r in rows if r[6] is not None and r[3] is not None)
    tl_ += ' %.0f | %.2f |' % (tot_b, tot_c / tot_b if tot_b else 0)
lines.append(tl_)
llama = [r for r in rows if r[0] == 'llama_block' and r[2] is not None]
if llama:
    w, c = llama[0][2], llama[0][3]
    verdict = 'met' if c < 150 else 'NOT met'
    tl = ('target (issue 11): LLaMA-width block under 150 ms on one core at %s: '
          'wall %.0f ms, CPU %.0f ms -> %s' % (target, w, c, verdict))
    if llama[0][6]: tl += ' (base %.0f ms)' % llama[0][6]
else:
    tl = 'target (issue 11): llama_block was not measured'
print('compile time, %s, %s%s, pinned to %s' % (target, txc, ' against ' + base if base else '', ' '.join(pin) or 'no taskset'))
print('\n'.join(lines))
print(tl)
if md:
    with open(md, 'w') as f:
        f.write('\n'.join(lines) + '\n\n' + tl + '\n')
sys.exit(1 if failed else 0)
EOF
