#!/usr/bin/env bash
# simt_shapes.sh TXC ROOT - the SIMT kernel's shape rules (passes/simt.c) end to end:
#  - [matmul.simt.splitk]: f32 products whose output tiles would not fill the GPU and whose K is
#    long (K >> M, N; ragged M, N, K; x @ w^T, A^T @ B, a batch) plan split-K ranks over a
#    cluster: --explain names the rule with its numbers, the manifest's template says skN with
#    "cluster": [1, N, 1]; a product that fills the GPU does not split;
#  - [matmul.simt.small_k]: bf16 products of K = 9, 13 plan the SIMT kernel (no staging kernel,
#    no wgmma; K <= 8 is [simplify.small_k]'s pointwise sum: degenerate_gemm.sh), K = 16 and 64
#    stay on tensor cores;
#  - ptxas -arch=sm_90a accepts every kernel of those plans;
#  - `txc run --device=cpu` (the host path sums the split ranks' k ranges in the GPU's order)
#    agrees with `--device=ref` on the same random inputs (tests/gen/compare.py).
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
S=$ROOT/bench/sgemm
# program|sizes|expected rule (splitk, small_k, simt: unsplit SIMT, wgmma)|run on the CPU (1/0)
cases=(
  "mm|M=300 N=200 K=5000|splitk|1"
  "mm|M=33 N=65 K=2049|splitk|1"
  "mm_nt|M=257 N=130 K=3001|splitk|1"
  "mm_tn|M=100 N=300 K=2000|splitk|1"
  "bmm|B=2 M=70 N=33 K=3000|splitk|1"
  "mm|M=2048 N=2048 K=2048|simt|0"
  "small_k|M=300 N=257 K=9|small_k|1"
  "small_k|M=257 N=130 K=13|small_k|1"
  "small_k|M=300 N=264 K=16|wgmma|0"
  "small_k|M=300 N=264 K=64|wgmma|0"
)
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes rule run <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $sizes"
  # shellcheck disable=SC2086
  if ! "$TXC" "$S/$prog.tx" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! $PY - "$W/k.ptx.json" "$W/explain" "$label" "$rule" <<'PYEOF'; then
import json, re, sys
m, ex, label, rule = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
t = [k.get("template", "") for k in m["kernels"]]
simt = [k for k in m["kernels"] if k.get("template", "").startswith("simt")]
bad = []
if rule == "wgmma":
    if simt or not any(x.startswith("wgmma") for x in t):
        bad.append("templates %s, want a wgmma kernel" % t)
else:
    if len(simt) != 1 or len(t) != 1:
        bad.append("templates %s, want one SIMT kernel" % t)
    sk = re.search(r" sk(\d+)", simt[0]["template"]) if simt else None
    line = re.search(r"\[matmul\.simt\.splitk\] \d+ output tiles x (\d+) split-K ranks", ex)
    if rule == "splitk":
        if not sk or not line or line.group(1) != sk.group(1) or \
                simt[0].get("cluster") != [1, int(sk.group(1)), 1]:
            bad.append("split-K: template %s, cluster %s, --explain %s" % (
                t, simt[0].get("cluster") if simt else None, bool(line)))
    elif sk or line:
        bad.append("split-K where the rule says none: %s" % t)
    small = re.search(r"\[matmul\.simt\.small_k\] K = \d+ <= \d+", ex)
    if (rule == "small_k") != bool(small):
        bad.append("--explain %s [matmul.simt.small_k]" % ("lacks" if rule == "small_k" else "names"))
for b in bad:
    print("FAIL %s: %s" % (label, b))
sys.exit(1 if bad else 0)
PYEOF
    fail=1
  fi
  ptxas_ok "$label" || fail=1
  [ "$run" = 1 ] || continue
  half=""
  [ "$prog" = small_k ] && half=--half
  # shellcheck disable=SC2086
  cpu_vs_ref $half "$label" 3 "$S/$prog.tx" $defs || fail=1
done
[ $fail = 0 ] && echo "ok: ${#cases[@]} SIMT shapes planned, assembled and run as their rules say"
exit $fail
