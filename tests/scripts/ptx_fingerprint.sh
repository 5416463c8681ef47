#!/usr/bin/env bash
# ptx_fingerprint.sh TXC ROOT - the guard of the GPU optimisation pipelines and the module split
# (docs/codegen.md, "Compile time"): for a few programs whose kernels cover every pipeline kind
# (the wgmma GEMMs, the FA3 attention, the row norms, the mma.sync GEMMs and attention at sm_80),
# at their bench sizes, the PTX of every kernel is reduced to a fingerprint (its instruction
# opcodes with their counts, its declared registers, and its loop count) and compared with
# tests/golden/ptx/NAME.TARGET.txt. It fails when a kernel goes missing, when a kernel emitted
# into one module loses its code, or when a change of the pass pipelines, of the way kernels are
# grouped into modules for optimisation or of the LLVM setup changes any kernel's instructions.
# A deliberate change of the generated code regenerates the goldens: UPDATE=1 bash this TXC ROOT.
set -u
TXC=$1
ROOT=$2
PY=$(command -v python3 || true)
[ -n "$PY" ] || { echo "skip: needs python3"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
G="$ROOT/tests/golden/ptx"
fail=0
# NAME FILE TARGET SIZES...
while read -r name file target sizes; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    if ! "$TXC" "$ROOT/$file" $sizes --target="$target" -o "$W/$name.ptx" 2>"$W/err"; then
        echo "FAIL: $name $target: compile: $(tail -n 1 "$W/err")"
        fail=1
        continue
    fi
    "$PY" - "$W/$name.ptx" "$W/$name.ptx.json" >"$W/$name.txt" <<'PYEOF'
import json, re, sys
ptx = open(sys.argv[1]).read()
man = json.load(open(sys.argv[2]))
names = [k['name'] for k in man['kernels']]
ents = re.findall(r'^\.visible \.entry (\w+)\(', ptx, re.M)
print('kernels in manifest %d, PTX entries %d' % (len(names), len(ents)))
for n in names:
    if n not in ents:
        print('MISSING %s' % n)
for n in ents:
    s = ptx.index('.visible .entry %s(' % n)
    e = ptx.find('\n}\n', s)
    body = ptx[s:e]
    ops, regs, loops = {}, [], 0
    for line in body.split('\n'):
        t = line.strip()
        if t.startswith('.reg'):
            regs.append(re.sub(r'\s+', ' ', t.rstrip(';')))
            continue
        if t.startswith('$L__BB') and t.endswith(':'):
            continue
        if t.startswith('bra') or ' bra' in t.split(';')[0]:
            loops += 1
        m = re.match(r'(@!?%p\d+\s+)?([a-z][\w.:]*)', t)
        if not m or t.startswith('.') or t.startswith('//'):
            continue
        op = m.group(2)
        ops[op] = ops.get(op, 0) + 1
    print('entry %s: %d instructions, %d branches; %s' % (n, sum(ops.values()), loops, '; '.join(regs)))
    for op in sorted(ops):
        print('  %s %d' % (op, ops[op]))
PYEOF
    gold="$G/$name.$target.txt"
    if [ "${UPDATE:-0}" = 1 ]; then
        cp "$W/$name.txt" "$gold"
        echo "updated $gold"
    elif ! [ -f "$gold" ]; then
        echo "FAIL: no golden $gold (UPDATE=1 creates it)"
        fail=1
    elif grep -q '^MISSING' "$W/$name.txt" || ! diff -u "$gold" "$W/$name.txt" >"$W/diff"; then
        echo "FAIL: $name $target: the PTX fingerprint differs from $gold:"
        head -n 40 "$W/diff"
        fail=1
    else
        echo "ok: $name $target ($(grep -c '^entry' "$gold") kernels)"
    fi
done <<'LIST'
llama_block bench/suite-extra/llama_block.tx sm_90a -D S=2048
transformer_block examples/transformer_block.tx sm_90a -D S=2048
transformer_block examples/transformer_block.tx sm_80 -D S=2048
matmul_bias_gelu ../shared/bench/suite/matmul_bias_gelu.tx sm_90a -D M=8192 -D N=8192 -D K=8192
attention ../shared/bench/suite/attention.tx sm_80 -D B=4 -D H=32 -D S=4096 -D D=128
LIST
exit $fail
