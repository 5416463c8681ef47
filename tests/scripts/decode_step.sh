#!/usr/bin/env bash
# decode_step.sh TXC ROOT - one LLaMA decode step (bench/heldout/llama_decode_step.tx) planned at
# its GPU size for sm_90a, end to end:
#  - [simplify.permute_reshape]: at S = 1 the head transposes move only unit axes and become
#    reshapes; o_proj's A, reshape(o), is read in place by wgmma: every matmul kernel line is
#    [matmul.wgmma], none is [roofline] (mma.sync);
#  - [attention.kv_concat]: the V cache concat is read in place by the split-KV attention
#    kernel ([attention.ksplit]), no [matmul.stage_concat] copy: 9 kernels in the PTX;
#  - a transpose of two non-unit axes (S = 7) is not rewritten and its product prints
#    [matmul.wgmma] not taken with the refused operand;
#  - ptxas -arch=sm_90a accepts every kernel; `txc run --device=cpu` agrees with --device=ref
#    at L = 1 and L = 7 (S = 1) and for the o_proj alone at S = 1 and S = 7.
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
P=$ROOT/bench/heldout/llama_decode_step.tx
fail=0
if ! "$TXC" "$P" --target=sm_90a -D B=1 -D L=4095 -D H=32 -D D=4096 -D F=11008 --explain \
  -o "$W/k.ptx" >"$W/explain" 2>&1; then
  echo "FAIL llama_decode_step: sm_90a compile: $(head -2 "$W/explain")"
  exit 1
fi
if ! $PY - "$W/explain" "$W/k.ptx" <<'PYEOF'; then
import re, sys
ex, ptx = open(sys.argv[1]).read(), open(sys.argv[2]).read()
bad = []
for n in ("[simplify.permute_reshape]", "[attention.kv_concat]", "[attention.ksplit]"):
    if n not in ex:
        bad.append("--explain lacks " + n)
if re.search(r"\[matmul\.stage_concat\].*: staged$", ex, re.M):
    bad.append("a concat is staged by a copy kernel")
rules = re.findall(r"^k\d+: \[([a-z0-9_.]+)\] .*chosen", ex, re.M)
mm = [r for r in rules if r.startswith("matmul") or r == "roofline"]
if len(mm) != 4 or any(r != "matmul.wgmma" for r in mm):
    bad.append("products %s, want 4 x matmul.wgmma" % mm)
n = len(re.findall(r"^\.visible \.entry", ptx, re.M))
if n != 9:
    bad.append("%d kernels in the PTX, want 9" % n)
for b in bad:
    print("FAIL llama_decode_step: " + b)
sys.exit(1 if bad else 0)
PYEOF
  fail=1
fi
ptxas_ok llama_decode_step || fail=1
cat >"$W/oproj.tx" <<'EOF'
fn oproj(o: bf16[B, 8, S, 64], w: bf16[512, 512]) -> bf16[B, S, 512] {
  return reshape(transpose(o, 1, 2), (B, S, 512)) @ w
}
EOF
for s in 1 7; do
  "$TXC" "$W/oproj.tx" --target=sm_90a -D B=1 -D S=$s --explain -o "$W/k.ptx" >"$W/explain" 2>&1 ||
    { echo "FAIL oproj S=$s: compile: $(head -2 "$W/explain")"; fail=1; continue; }
  if [ $s = 1 ]; then
    grep -q "^k0: \[matmul.wgmma\] (" "$W/explain" || { echo "FAIL oproj S=1: not on wgmma"; fail=1; }
  else
    grep -q "permute_reshape" "$W/explain" && { echo "FAIL oproj S=7: a transpose rewritten"; fail=1; }
    grep -q "^k0: \[matmul.wgmma\] not taken: A %[0-9]* (reshape)" "$W/explain" ||
      { echo "FAIL oproj S=7: no [matmul.wgmma] not taken line"; fail=1; }
  fi
  ptxas_ok "oproj S=$s" || fail=1
  cpu_vs_ref --half "oproj S=$s" 3 "$W/oproj.tx" -D B=2 -D S=$s || fail=1
done
for l in 1 7; do
  cpu_vs_ref --half "llama_decode_step L=$l" 5 "$P" -D B=2 -D L=$l -D H=2 -D D=256 -D F=40 || fail=1
done
[ $fail = 0 ] && echo "ok: llama_decode_step on wgmma with the V cache read in place; o_proj views planned and run"
exit $fail
