#!/usr/bin/env bash
# gemv_shapes.sh TXC ROOT - the SIMT schedule's GEMV tiles ([matmul.simt.gemv], passes/simt.c,
# codegen/gemv.c) end to end:
#  - f32 products of at most 16 rows with B N-contiguous plan the GEMV tile where the model
#    prices it fastest (the held-out gemv_f32 at 4096 x 4096, M = 2, M = 16), and
#    TX_SIMT_TILE forces it at ragged sizes (M = 1, 3, 7, 16; N odd, K not a multiple of the k
#    step, split over clusters of 2, 4, 8 and unsplit, a batch); --explain names the rule with its
#    numbers and the manifest's template is `simt gemv BMx128xBK w8` (+ ` skS` with "cluster":
#    [1, S, 1]);
#  - K below one step a warp, B K-contiguous (x @ w^T) and M = 17 never take it (a pin of it is
#    refused: the standard tiles instead);
#  - ptxas -arch=sm_90a accepts every kernel;
#  - `txc run --device=cpu` (the host sums the GEMV tile's k chunks in the GPU's chunk order)
#    agrees with `--device=ref` on the same random inputs (tests/gen/compare.py);
#  - [matmul.simt.gemv_rows] (16-bit x @ w^T, w [N, K]): bf16/f16 at M = 1, 3, 5, 8, 16 with
#    residual, bias + residual and bias + GELU epilogues, N odd, K not a multiple of a warp's
#    step, planned by the model (decode_linear_res at M = 5, 4096 x 11008) or pinned by
#    TX_SIMT_TILE: template `simt gemv-rows BMxBNxBK w8`, the --explain line, ptxas, and the
#    host's copy of the lanes' order (`--device=cpu --target=sm_90a`) against the reference;
#    M = 17, K odd (skinny) and TX_SIMT_GEMV=0 keep the tensor-core forms.
# Skips (77) without Python + NumPy; the ptxas step is skipped without ptxas.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
S=$ROOT/bench/sgemm
H=$ROOT/bench/heldout
# program|sizes|TX_SIMT_TILE pin|expected (gemv: the GEMV tile, simt: a standard tile)|M|run (1/0)
cases=(
  "$H/gemv_f32.tx|K=4096 N=4096||gemv|1|0"
  "$H/gemv_f32.tx|K=1001 N=257|1x128x8s8|gemv|1|1"
  "$H/gemv_f32.tx|K=600 N=300|1x128x16s1|gemv|1|1"
  "$S/mm.tx|M=2 N=130 K=333||gemv|2|1"
  "$S/mm.tx|M=3 N=256 K=77|4x128x8s1|gemv|3|1"
  "$S/mm.tx|M=7 N=1000 K=517|8x128x8s4|gemv|7|1"
  "$S/mm.tx|M=16 N=200 K=2000|16x128x8s2|gemv|16|1"
  "$S/mm.tx|M=16 N=4096 K=4096||gemv|16|0"
  "$S/bmm.tx|B=2 M=4 N=96 K=300|4x128x8s2|gemv|4|1"
  "$S/mm.tx|M=1 N=64 K=20|1x128x8s1|simt|1|1"
  "$S/mm_nt.tx|M=1 N=300 K=1000|1x128x8s1|simt|1|0"
  "$S/mm.tx|M=17 N=4096 K=4096|32x128x8s1|simt|17|0"
)
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog sizes pin rule rows run <<<"$c"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$(basename "$prog" .tx) $sizes${pin:+ pin $pin}"
  # shellcheck disable=SC2086
  if ! TX_SIMT_TILE=$pin "$TXC" "$prog" --target=sm_90a $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! $PY - "$W/k.ptx.json" "$W/explain" "$label" "$rule" "$rows" "$pin" <<'PYEOF'; then
import json, re, sys
m, ex, label, rule, rows, pin = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), *sys.argv[3:]
t = [k.get("template", "") for k in m["kernels"]]
bad = []
gv = [k for k in m["kernels"] if k.get("template", "").startswith("simt gemv ")]
line = re.search(r"\[matmul\.simt\.gemv\] M = (\d+) <= 16 rows, exact f32 FMAs: \d+ column tiles "
                 r"of 128 x 8 warps x (\d+) cluster ranks = (\d+) k chunks", ex)
if rule == "gemv":
    if len(gv) != 1 or len(t) != 1:
        bad.append("templates %s, want one GEMV kernel" % t)
    elif not line or line.group(1) != rows or int(line.group(3)) != 8 * int(line.group(2)):
        bad.append("--explain lacks the [matmul.simt.gemv] line of M = %s" % rows)
    else:
        sk = re.search(r" sk(\d+)$", gv[0]["template"])
        S = int(line.group(2))
        if (S > 1) != bool(sk) or (sk and (int(sk.group(1)) != S or gv[0].get("cluster") != [1, S, 1])):
            bad.append("split: template %s, cluster %s, --explain %d ranks" % (
                gv[0]["template"], gv[0].get("cluster"), S))
        if pin:
            want = "simt gemv %s w8" % re.sub(r"s\d+$", "", pin)
            if not gv[0]["template"].startswith(want):
                bad.append("template %s, pinned %s" % (gv[0]["template"], want))
else:
    if gv or line or not any(x.startswith("simt ") for x in t):
        bad.append("templates %s (gemv line: %s), want a standard SIMT tile" % (t, bool(line)))
for b in bad:
    print("FAIL %s: %s" % (label, b))
sys.exit(1 if bad else 0)
PYEOF
    fail=1
  fi
  ptxas_ok "$label" || fail=1
  [ "$run" = 1 ] || continue
  # shellcheck disable=SC2086
  TX_SIMT_TILE=$pin cpu_vs_ref "$label" 3 "$prog" $defs || fail=1
done
# program|sizes|TX_SIMT_TILE pin (off: TX_SIMT_GEMV=0; rows: TX_SIMT_GEMV_ROWS=1, the rule by the model)|expected (rows / tc)|M|run (1/0)
rcases=(
  "$H/decode_linear_res.tx|M=5 K=11008 N=4096|rows|rows|5|0"
  "$H/decode_linear_res.tx|M=5 K=11008 N=4096||tc|5|0"
  "$H/decode_linear_res.tx|M=1 K=1024 N=301|1x16x32s1|rows|1|1"
  "$H/decode_linear_res.tx|M=3 K=2000 N=257|4x32x8s1|rows|3|1"
  "$S/lin_bf16.tx|M=16 K=1536 N=130|16x16x16s1|rows|16|1"
  "$S/lin_bf16.tx|M=5 K=4096 N=1000|8x16x32s1|rows|5|1"
  "$S/lin_gelu_bf16.tx|M=8 K=520 N=77|8x32x8s1|rows|8|1"
  "$H/decode_linear_res.tx|M=17 K=4096 N=4096||tc|17|0"
  "$H/decode_linear_res.tx|M=5 K=1001 N=300|8x16x8s1|tc|5|1"
  "$H/decode_linear_res.tx|M=5 K=11008 N=4096|off|tc|5|0"
)
for c in "${rcases[@]}"; do
  IFS='|' read -r prog sizes pin rule rows run <<<"$c"
  defs="--target=sm_90a"
  for d in $sizes; do defs="$defs -D $d"; done
  label="$(basename "$prog" .tx) $sizes${pin:+ pin $pin}"
  gv=1 tile=$pin rows_on=0
  [ "$pin" = off ] && gv=0 tile=""
  [ "$pin" = rows ] && rows_on=1 tile=""
  # shellcheck disable=SC2086
  if ! TX_SIMT_GEMV=$gv TX_SIMT_GEMV_ROWS=$rows_on TX_SIMT_TILE=$tile "$TXC" "$prog" $defs --explain -o "$W/k.ptx" >"$W/explain" 2>"$W/err"; then
    echo "FAIL $label: sm_90a compile: $(head -2 "$W/err")"
    fail=1
    continue
  fi
  if ! $PY - "$W/k.ptx.json" "$W/explain" "$label" "$rule" "$rows" "$tile" <<'PYEOF'; then
import json, re, sys
m, ex, label, rule, rows, pin = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), *sys.argv[3:]
t = [k.get("template", "") for k in m["kernels"]]
gv = [x for x in t if x.startswith("simt gemv-rows ")]
line = re.search(r"\[matmul\.simt\.gemv_rows\] M = (\d+) <= 16 rows, w \[N, K\] K-contiguous, "
                 r"f32 FMAs: \d+ blocks of 8 warps x \d rows of w.* HBM [0-9.]+ us at \d+ GB/s, "
                 r"issue [0-9.]+ us.* -> [0-9.]+ us \(launch included\); matmul.wgmma \d+x\d+: "
                 r"[0-9.]+ us", ex)
bad = []
if rule == "rows":
    if len(gv) != 1 or len(t) != 1:
        bad.append("templates %s, want one gemv-rows kernel" % t)
    elif not line or line.group(1) != rows:
        bad.append("--explain lacks the [matmul.simt.gemv_rows] line of M = %s" % rows)
    elif pin and gv[0] != "simt gemv-rows %s w8" % re.sub(r"s\d+$", "", pin):
        bad.append("template %s, pinned %s" % (gv[0], pin))
elif gv or line:
    bad.append("templates %s (rows line: %s), want a tensor-core form" % (t, bool(line)))
for b in bad:
    print("FAIL %s: %s" % (label, b))
sys.exit(1 if bad else 0)
PYEOF
    fail=1
  fi
  ptxas_ok "$label" || fail=1
  [ "$run" = 1 ] || continue
  # shellcheck disable=SC2086
  TX_SIMT_GEMV=$gv TX_SIMT_TILE=$tile cpu_vs_ref --half "$label" 3 "$prog" $defs || fail=1
done
[ $fail = 0 ] && echo "ok: $((${#cases[@]} + ${#rcases[@]})) GEMV shapes planned, assembled and run as their rules say"
exit $fail
