#!/usr/bin/env bash
# fuse_rules.sh TXC ROOT - the planning rules of the held-out findings of round 4, end to end on
# bench/heldout programs:
#   [pointwise.recompute]   mamba_discretize: the bf16 casts of B and x join the big kernel at the
#                           GPU size (softplus dt stays apart by its price: 2 kernels), and at N=4
#                           dt joins too (1 kernel, on sm_90a and on the host);
#   [simplify.iota_extreme] var_mid_axis: max(arange(T)) is a constant (1 kernel);
#   [simplify.slice_of_product] geglu_chunk: the biased packed product's two column slices
#                           (1 wgmma kernel);
#   [attention.epilogue_input] gated_attn_out: the FA3 kernel's epilogue computes sigmoid(g)
#                           (1 kernel);
#   [reduction.side_outputs] f16_overflow: exp(x) and exp(x) / 16 are stored by the row sum's
#                           kernel (1 kernel, x read once); at 64 rows (fewer than the SMs) they
#                           stay a pointwise kernel of their own (2 kernels);
#   [reduction.batch]       cosine_sim_bcast N = M: the two row norms (1 MB each, less than a
#                           launch at the HBM rate) in one launch (2 kernels); N != M: 3;
#   [simplify.cast_before_reshape] mamba2_gated_norm: the bf16 cast after the group reshape
#                           joins the gated RMSNorm's kernel (1 kernel, not 2).
# For each: --explain names the rule the expected number of times, the plan has the expected
# kernels (the .ptx.json manifest), ptxas accepts the PTX (when /usr/local/cuda/bin/ptxas exists),
# and `txc run` on --device=cpu and --device=ref agrees with NumPy (bench/heldout/check_cpu.py at
# the sizes given). Skips (77) without /usr/bin/python3 + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
# shellcheck source=tests/scripts/lib/checks.sh
. "$(dirname "$0")/lib/checks.sh"
# program | target | -D sizes | rule | lines naming it | kernels | CPU sizes (- none)
cases=(
  "mamba_discretize|sm_90a|B=2 L=2048 H=32 N=128|k[0-9]*: \[pointwise.recompute\]|1|2|-"
  "mamba_discretize|sm_90a|B=2 L=2048 H=32 N=128|per element of the larger domain 46.0 instructions|2|2|-"
  "mamba_discretize|sm_90a|B=2 L=2048 H=32 N=4|k[0-9]*: \[pointwise.recompute\]|1|1|B=2,L=2048,H=32,N=4"
  "mamba_discretize|host|B=2 L=2048 H=32 N=4|k[0-9]*: \[pointwise.recompute\]|1|-|-"
  "var_mid_axis|sm_90a|B=64 T=1000 C=768|\[simplify.iota_extreme\].*the constant 999|1|1|B=3,T=37,C=5"
  "geglu_chunk|sm_90a|M=8192 D=640|\[simplify.slice_of_product\].*biased product|2|1|M=33,D=24"
  "gated_attn_out|sm_90a|B=4 H=16 S=2048|k0: \[attention.epilogue_input\].*sigmoid|1|1|B=1,H=2,S=300"
  "f16_overflow|sm_90a|N=8192 D=4096|k0: \[reduction.side_outputs\].*67108864 B not re-read|1|1|N=200,D=300"
  "f16_overflow|sm_90a|N=64 D=4096|kept apart \[reduction.side_outputs\].*64 rows, fewer than the 132 SMs|1|2|-"
  "cosine_sim_bcast|sm_90a|N=1024 M=1024 E=256|k0: \[reduction.batch\] 2 independent reductions of \[1024, 256\]|1|2|N=40,M=40,E=33"
  "cosine_sim_bcast|sm_90a|N=1024 M=512 E=256|\[reduction.batch\]|0|3|-"
  "mamba2_gated_norm|sm_90a|M=8192|\[simplify.cast_before_reshape\] .* = bf16(reshape(|1|1|M=5"
)
fail=0
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r prog target sizes rule want kernels cpu <<<"$c"
  f="$ROOT/bench/heldout/$prog.tx"
  defs=""
  for d in $sizes; do defs="$defs -D $d"; done
  label="$prog $target $sizes"
  n=$((n + 1))
  bad=0
  emit=""
  [ "$target" = host ] && emit="--emit=ir"
  # shellcheck disable=SC2086
  if ! "$TXC" "$f" --target="$target" $defs $emit --explain -o "$W/k.ptx" >"$W/explain" 2>&1; then
    echo "FAIL $label: compile: $(head -2 "$W/explain")"
    fail=1
    continue
  fi
  got=$(grep -c "$rule" "$W/explain")
  [ "$got" = "$want" ] || { echo "FAIL $label: $got lines match '$rule', want $want"; bad=1; }
  if [ "$kernels" != - ]; then
    nk=$($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["kernels"]))' "$W/k.ptx.json")
    [ "$nk" = "$kernels" ] || { echo "FAIL $label: $nk kernels, want $kernels"; bad=1; }
    ptxas_ok "$label" || bad=1
  fi
  if [ "$cpu" != - ] && ! $PY "$ROOT/bench/heldout/check_cpu.py" "$TXC" "$ROOT" --only "$prog" \
    --sizes "$cpu" >"$W/cpu" 2>&1; then
    echo "FAIL $label: CPU against NumPy at $cpu:"
    grep -v '^ok' "$W/cpu" | head -5
    bad=1
  fi
  [ $bad = 0 ] && echo "ok   $label"
  [ $bad = 0 ] || fail=1
done
echo "fuse_rules: $n cases, $([ $fail = 0 ] && echo all passed || echo FAILURES)"
[ $fail = 0 ]
