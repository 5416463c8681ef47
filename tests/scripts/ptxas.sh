#!/usr/bin/env bash
# ptxas.sh TXC ROOT - every program of examples/, ../shared/bench/suite and
# tests/oracle (when present) is compiled to PTX for each GPU target with the
# CLI and assembled with `ptxas -arch=TARGET -v`. Fails on a compile or
# assembly error, and when a kernel's shared memory (static from ptxas plus
# the manifest's dynamic smem_bytes) exceeds the planner's sram_bytes for its
# region by a large gap (more than 2x + 4 KiB; a wgmma-template kernel, which
# sizes its ring from the shape, only when above 227 KiB). Register spills
# are listed.
# Then every program with a `bench:` comment is compiled for sm_90a at those
# sizes (bound dims are what select the wgmma + TMA kernels) and assembled;
# a kernel whose manifest names a wgmma template fails on any spill, on the
# wgmma serialisation warnings (C7510, C7508, C7515), on shared memory above
# the 227 KiB a block may use, or on a register count other than 168 when
# it moves registers with setmaxnreg; these kernels are checked against
# their own exact smem figure, not the planner's generic one.
# Skips (77) when ptxas is absent (PATH, /usr/local/cuda/bin).
set -u
TXC=$1
ROOT=$2
PTXAS=$(command -v ptxas || true)
[ -z "$PTXAS" ] && [ -x /usr/local/cuda/bin/ptxas ] && PTXAS=/usr/local/cuda/bin/ptxas
if [ -z "$PTXAS" ]; then
  echo "skip: ptxas not found (PATH, /usr/local/cuda/bin)"
  exit 77
fi
PY=/usr/bin/python3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
TARGETS=${TX_PTXAS_TARGETS:-"sm_80 sm_86 sm_89 sm_90 sm_90a"}
fail=0
n=0
for f in "$ROOT"/examples/*.tx "$ROOT"/../shared/bench/suite/*.tx "$ROOT"/tests/oracle/*.tx; do
  [ -f "$f" ] || continue
  b=$(basename "$f" .tx)
  for t in $TARGETS; do
    n=$((n + 1))
    # the plan of this target: fusion differs by target (e.g. [attention.lse] on sm_90a only)
    if ! "$TXC" "$f" --target="$t" --emit=json -o "$W/$b.$t.json" 2>"$W/err"; then
      echo "FAIL $b $t: --emit=json: $(head -2 "$W/err")"
      fail=1
      continue
    fi
    if ! "$TXC" "$f" --target="$t" -o "$W/$b.$t.ptx" 2>"$W/err"; then
      echo "FAIL $b $t: txc: $(head -2 "$W/err")"
      fail=1
      continue
    fi
    if ! "$PTXAS" -arch="$t" -v "$W/$b.$t.ptx" -o "$W/$b.$t.cubin" 2>"$W/$b.$t.log"; then
      echo "FAIL $b $t: ptxas:"
      grep -E "error" "$W/$b.$t.log" | head -5
      fail=1
      continue
    fi
    if [ -x "$PY" ] && ! $PY - "$W/$b.$t.log" "$W/$b.$t.ptx.json" "$W/$b.$t.json" "$b $t" <<'PYEOF'
import json, re, sys
log, man, rep, label = sys.argv[1:5]
man = json.load(open(man))
rep = json.load(open(rep))
planned = {i: k.get("sram_bytes") or 0 for i, k in enumerate(rep.get("kernels", []))}
used, spills, cur = {}, {}, None
for line in open(log):
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        cur = m.group(1)
    m = re.search(r"(\d+) bytes spill stores", line)
    if m and cur:
        spills[cur] = int(m.group(1))
    m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?(?:,|$)", line)
    if m and cur:
        s = re.search(r"(\d+) bytes smem", line)
        used[cur] = (int(m.group(1)), int(s.group(1)) if s else 0)
bad = 0
for k in man["kernels"]:
    name = k["name"]
    if name not in used:
        print("FAIL %s: ptxas did not report kernel %s" % (label, name))
        bad = 1
        continue
    regs, smem = used[name]
    smem += k.get("smem_bytes", 0)
    plan = planned.get(k["region"], 0) if k["region"] >= 0 else 0
    if k.get("template", "").startswith("wgmma"):
        # the sm_90a template sizes its ring from the shape (its own exact figure, in the
        # manifest); it must fit the 227 KiB a block may use
        if smem > 227 * 1024:
            print("FAIL %s: %s uses %d bytes of shared memory, above 227 KiB" % (label, name, smem))
            bad = 1
    elif smem > 2 * plan + 4096:
        print("FAIL %s: %s uses %d bytes of shared memory, the plan says %d" % (label, name, smem, plan))
        bad = 1
    if spills.get(name):
        print("note %s: %s spills %d bytes (%d registers)" % (label, name, spills[name], regs))
if "odd_" in label and (nwg == 0 or not any(k.get("template", "").startswith("stage") for k in man["kernels"])):
    print("FAIL %s: no staged wgmma kernel for odd pitches" % label); bad = 1
sys.exit(bad)
PYEOF
    then
      fail=1
    fi
  done
done
nw=0
# operands whose rows are not a multiple of 16 bytes: staged copies ([matmul.wgmma.stage]) and
# the wgmma kernel reading them; f16 and bf16, ragged K, M = 16, an epilogue, twin products
printf '# bench: -D M=2500 -D N=1500 -D K=2500\nfn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n' >"$W/odd_xw.tx"
printf '# bench: -D M=16 -D N=3001 -D K=4099\nfn f(x: f16[M, K], w: f16[K, N]) -> f16[M, N] {\n  return x @ w\n}\n' >"$W/odd_skinny.tx"
printf '# bench: -D M=1000 -D N=999 -D K=1001\nfn f(x: bf16[M, K], w: bf16[N, K], b: bf16[N]) -> f32[M, N] {\n  return f32(gelu_tanh(x @ transpose(w, 0, 1) + b))\n}\n' >"$W/odd_epi.tx"
printf '# bench: -D M=777 -D N=1500 -D K=1001\nfn f(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N]) -> bf16[M, N] {\n  return silu(x @ w1) * (x @ w3)\n}\n' >"$W/odd_swiglu.tx"
# reductions whose rows alone do not fill the GPU: [reduction.row_split] (the last block's ticket)
printf '# bench: -D M=8192 -D N=1000\nfn f(p: f32[M, N], t: f32[M, N]) -> (f32[], f32[]) {\n  d = p - t\n  return mean(d * d), max(abs(d))\n}\n' >"$W/odd_split_losses.tx"
printf '# bench: -D M=3 -D N=1000003\nfn f(x: bf16[M, N]) -> f32[M] {\n  return sum(f32(x), axis=-1)\n}\n' >"$W/odd_split_rows.tx"
# few long rows of two stages: [reduction.row_split2] (the chunks' statistics, then the normalisation)
printf '# bench: -D M=4 -D N=1000003\nfn f(x: bf16[M, N]) -> bf16[M, N] {\n  return log_softmax(x, axis=-1)\n}\n' >"$W/odd_split2_rows.tx"
# one stage whose domain-shaped outputs read the statistic: [reduction.row_split2] (a global norm)
printf '# bench: -D N=1000003\nfn f(g: f32[N]) -> (f32[N], f32[]) {\n  nrm = sqrt(sum(g * g))\n  return g * minimum(1.0 / (nrm + 1e-6), 1.0), nrm\n}\n' >"$W/odd_split2_norm.tx"
# three stages held at one block per SM, streamed by [reduction.occupancy] (multipass)
printf '# bench: -D M=4096 -D N=32000\nfn f(x: bf16[M, N]) -> f32[M] {\n  lp = log_softmax(f32(x), axis=-1)\n  return -sum(exp(lp) * lp, axis=-1)\n}\n' >"$W/odd_entropy_rows.tx"
for f in "$ROOT"/examples/*.tx "$ROOT"/../shared/bench/suite/*.tx "$W"/odd_*.tx; do
  [ -f "$f" ] || continue
  sizes=$(sed -n 's/.*bench: *\(-D.*\)$/\1/p' "$f" | head -1)
  [ -n "$sizes" ] || continue
  b=$(basename "$f" .tx).big
  # shellcheck disable=SC2086
  if ! "$TXC" "$f" --target=sm_90a $sizes -o "$W/$b.ptx" 2>"$W/err"; then
    echo "FAIL $b sm_90a ($sizes): txc: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! "$PTXAS" -arch=sm_90a -v "$W/$b.ptx" -o "$W/$b.cubin" 2>"$W/$b.log"; then
    echo "FAIL $b sm_90a: ptxas:"
    grep -E "error" "$W/$b.log" | head -5
    fail=1
    continue
  fi
  if [ -x "$PY" ] && ! $PY - "$W/$b.log" "$W/$b.ptx.json" "$W/$b.ptx" "$b ($sizes)" <<'PYEOF'
import json, re, sys
log, man, ptx, label = sys.argv[1:5]
man = json.load(open(man))
ptx = open(ptx).read()
info, cur = {}, None
for line in open(log):
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        cur = m.group(1)
        info[cur] = {"warn": [], "spill": 0, "regs": 0, "smem": 0}
        continue
    if cur is None:
        continue
    if re.search(r"C7510|C7508|C7515|warning", line):
        info[cur]["warn"].append(line.strip())
    m = re.search(r"(\d+) bytes spill stores", line)
    if m:
        info[cur]["spill"] = int(m.group(1))
    m = re.search(r"Used (\d+) registers", line)
    if m:
        info[cur]["regs"] = int(m.group(1))
        s = re.search(r"(\d+) bytes smem", line)
        info[cur]["smem"] = int(s.group(1)) if s else 0
bad = 0
nwg = 0
for k in man["kernels"]:
    if k.get("template", "").startswith("stage"):
        i = info.get(k["name"])
        if i is None or i["spill"] or i["warn"]:
            print("FAIL %s: staging kernel %s: %s" % (label, k["name"], "not assembled" if i is None else "spills or warns")); bad = 1
        else:
            print("stage %s: %s %s, %d registers" % (label, k["name"], k["template"], i["regs"]))
        continue
    if not k.get("template", "").startswith("wgmma"):
        continue
    nwg += 1
    name = k["name"]
    i = info.get(name)
    if i is None:
        print("FAIL %s: ptxas did not report %s" % (label, name)); bad = 1; continue
    body = ptx[ptx.find(".entry " + name + "("):]
    nxt = body.find(".entry ", 1)
    body = body if nxt < 0 else body[:nxt]
    smem = i["smem"] + k["smem_bytes"]
    if i["warn"]:
        print("FAIL %s: %s: %s" % (label, name, i["warn"][0])); bad = 1
    if i["spill"]:
        print("FAIL %s: %s (%s) spills %d bytes" % (label, name, k["template"], i["spill"])); bad = 1
    if smem > 227 * 1024:
        print("FAIL %s: %s uses %d bytes of shared memory" % (label, name, smem)); bad = 1
    if "setmaxnreg" in body and i["regs"] != 168:
        print("FAIL %s: %s uses setmaxnreg but starts with %d registers" % (label, name, i["regs"])); bad = 1
    if "wgmma.mma_async" not in body:
        print("FAIL %s: %s names a wgmma template without wgmma" % (label, name)); bad = 1
    print("wgmma %s: %s %s, %d registers, %d B smem" % (label, name, k["template"], i["regs"], smem))
sys.exit(bad)
PYEOF
  then
    fail=1
  fi
  nw=$((nw + 1))
done
echo "ptxas: $n program/target pairs and $nw sm_90a programs at bench sizes, $([ $fail = 0 ] && echo all assembled || echo FAILURES)"
exit $fail
