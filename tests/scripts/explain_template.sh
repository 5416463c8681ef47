#!/usr/bin/env bash
# explain_template.sh TXC ROOT - `txc FILE --target=sm_90a --explain` names the template of each
# kernel it builds on one (the wgmma + TMA GEMM: tile, stages, operand orders, products, split-K,
# merged-heads A) with its threads and dynamic shared memory, matching the manifest; the default
# target (sm_90, no template) prints no such line. No GPU needed.
set -u
TXC=$1
ROOT=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0
check() { # FILE DEFS... : every manifest template appears in --explain with its smem bytes
  f=$1
  shift
  "$TXC" "$f" --target=sm_90a "$@" --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err" || {
    echo "FAIL $f: txc: $(head -2 "$W/err")"
    fail=1
    return
  }
  /usr/bin/python3 - "$W/k.ptx.json" "$W/explain" "$f" <<'PYEOF' || fail=1
import json, sys
man, text, f = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
ks = [k for k in man["kernels"] if k.get("template")]
if not ks:
    print("FAIL %s: no template kernel in the manifest" % f); sys.exit(1)
for k in ks:
    want = "k%d: template %s: %d threads, %d B dynamic shared memory" % (
        k["region"], k["template"], k["block"][0], k["smem_bytes"])
    if want not in text:
        print("FAIL %s: --explain lacks '%s'" % (f, want)); sys.exit(1)
    c = k.get("cluster")
    c = max(c) if isinstance(c, list) else c
    if c and c > 1 and "clusters of %d CTAs" % c not in text:
        print("FAIL %s: --explain lacks the cluster of k%d" % (f, k["region"])); sys.exit(1)
print("ok %s: %d template kernels" % (f, len(ks)))
PYEOF
}
check "$ROOT/bench/suite-extra/llama_block.tx" -D S=2048
printf 'fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' >"$W/xw.tx"
check "$W/xw.tx" -D M=16 -D N=1024 -D K=4096
grep -q "clusters of [24] CTAs" "$W/explain" || { echo "FAIL: the 16 x 1024 product (16 tiles) is not split"; fail=1; }
"$TXC" "$W/xw.tx" -D M=16 -D N=4096 -D K=4096 --explain -o "$W/k90.ptx" >"$W/e90" 2>&1
if grep -q "template" "$W/e90"; then
  echo "FAIL: sm_90 (mma.sync) names a template"
  fail=1
fi
exit $fail
