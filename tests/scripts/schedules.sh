#!/usr/bin/env bash
# schedules.sh TXC ROOT - the reduction and pointwise schedule rules at ragged shapes on both sides
# of each rule's boundary (docs/cost-model.md "Schedules"): for every case the rule --explain
# names must be the expected one, `txc run --device=cpu` (the host code of that schedule: the same
# kernels, chunks and partials as the GPU's) must agree with --device=ref (tests/gen/compare.py),
# and, when ptxas is installed, the sm_90a PTX of the case must assemble (errors fail; spills are
# listed). Skips (77) without Python + NumPy.
# shellcheck source=tests/scripts/lib/setup.sh
. "$(dirname "$0")/lib/setup.sh" "$@"
PTXAS=$(command -v ptxas || true)
[ -n "$PTXAS" ] || echo "schedules: ptxas not installed; the PTX of the cases is not assembled"

cat >"$W/col.tx" <<'EOF'
fn f(x: f32[M, N]) -> (f32[N], f32[N], f32[N], f32[N]) {
  return sum(x, axis=0), max(x, axis=0), mean(x * 2, axis=0) + 1, min(x, axis=0)
}
EOF
cat >"$W/colw.tx" <<'EOF'
fn f(x: f32[M, N], w: f32[N]) -> f32[1, N] {
  return sum(exp(x * 0.5), axis=0, keepdim=true) * w + 1
}
EOF
cat >"$W/colh.tx" <<'EOF'
fn f(x: bf16[M, N]) -> (bf16[N], bf16[N]) {
  return sum(x, axis=0), max(x, axis=0)
}
EOF
cat >"$W/coli.tx" <<'EOF'
fn f(x: i32[M, N]) -> (i32[N], i32[N]) {
  return sum(x, axis=0), min(x, axis=0)
}
EOF
cat >"$W/colrow.tx" <<'EOF'
fn f(x: f32[M, N]) -> (f32[M, N], f32[N]) {
  y = x * 2
  return y, sum(y, axis=0)
}
EOF
cat >"$W/mid.tx" <<'EOF'
fn f(x: f32[B, R, C]) -> (f32[B, C], f32[B, C]) {
  return sum(x, axis=1), max(x, axis=1)
}
EOF
cat >"$W/midh.tx" <<'EOF'
fn f(x: bf16[B, R, C], w: bf16[C]) -> bf16[B, C] {
  return mean(x * w, axis=1) + 1
}
EOF
cat >"$W/smid.tx" <<'EOF'
fn f(x: f32[B, S, C]) -> f32[B, S, C] {
  return softmax(x, axis=1)
}
EOF
cat >"$W/cnorm.tx" <<'EOF'
fn f(x: f32[N, C]) -> (f32[N, C], f32[C]) {
  mu = mean(x, axis=0, keepdim=true)
  d = x - mu
  v = mean(d * d, axis=0, keepdim=true)
  return d * rsqrt(v + 1e-5), reshape(v, (C,))
}
EOF
cat >"$W/cchain.tx" <<'EOF'
fn f(x: bf16[B, S, C]) -> f32[B, S, C] {
  m = max(f32(x), axis=1, keepdim=true)
  t = sum(abs(f32(x) - m), axis=1, keepdim=true)
  return (f32(x) - m) / (t + 1.0)
}
EOF
cat >"$W/rowiota.tx" <<'EOF'
fn f(x: bf16[N, V], l: i32[N]) -> (f32[N], f32[N]) {
  hit = iota((N, V), axis=1) < reshape(l, (N, 1)) * 37
  y = f32(x)
  return sum(where(hit, y, 0.0), axis=-1), log(sum(exp(y - max(y, axis=-1, keepdim=true)), axis=-1))
}
EOF
cat >"$W/midiota.tx" <<'EOF'
fn f(x: f32[B, S, C], l: i32[B, C]) -> f32[B, S, C] {
  keep = iota((B, S, C), axis=1) < reshape(l, (B, 1, C)) * 5
  z = where(keep, x, -1.0)
  return softmax(z, axis=1)
}
EOF

fail=0
n=0
# case FILE RULE DIMS...: the rule --explain names, cpu vs ref, ptxas of the PTX.
case_() {
  local f=$1 want=$2
  shift 2
  local d=() label="$f $*" got
  for kv in "$@"; do d+=(-D "$kv"); done
  n=$((n + 1))
  got=$("$TXC" "$W/$f" "${d[@]}" --explain 2>&1 | grep -o '\[[a-z]*\.[a-z_]*\] \(([^)]*) \)\?chosen' | head -1)
  got=${got%%]*}
  [ -n "$got" ] && got="$got]"
  if [ "$got" != "[$want]" ]; then
    echo "FAIL $label: rule ${got:-none}, expected [$want]"
    fail=1
  fi
  # VEC=K before the case: the column schedule's kept elements per thread (vec=K)
  if [ -n "${VEC:-}" ] && ! "$TXC" "$W/$f" "${d[@]}" --explain 2>&1 | grep -q "vec=$VEC[,)]"; then
    echo "FAIL $label: expected vec=$VEC, got $("$TXC" "$W/$f" "${d[@]}" --explain 2>&1 | grep -o 'vec=[0-9]*' | head -1)"
    fail=1
  fi
  rm -rf "$W/ref" "$W/cpu"
  local half=""
  grep -qE '\b(f16|bf16)\b' "$W/$f" && half=half
  if ! "$TXC" run "$W/$f" "${d[@]}" --device=ref --random-inputs=11 --output-dir "$W/ref" >/dev/null 2>"$W/err"; then
    echo "FAIL $label: the reference run failed: $(head -2 "$W/err")"
    fail=1
  elif ! timeout 120 "$TXC" run "$W/$f" "${d[@]}" --device=cpu --random-inputs=11 --output-dir "$W/cpu" >/dev/null 2>"$W/err"; then
    echo "FAIL $label: --device=cpu failed: $(head -2 "$W/err")"
    fail=1
  elif ! $PY "$ROOT/tests/gen/compare.py" "$W/cpu" "$W/ref" "$label" $half; then
    fail=1
  fi
  if [ -n "$PTXAS" ]; then
    if ! "$TXC" "$W/$f" "${d[@]}" --target=sm_90a -o "$W/k.ptx" 2>"$W/err"; then
      echo "FAIL $label: no PTX: $(head -2 "$W/err")"
      fail=1
    elif ! "$PTXAS" -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" >"$W/ptxas" 2>&1; then
      echo "FAIL $label: ptxas: $(grep -m2 -i error "$W/ptxas")"
      fail=1
    elif grep -qE '[1-9][0-9]* bytes spill' "$W/ptxas"; then
      echo "note $label: ptxas spills: $(grep -m1 -E '[1-9][0-9]* bytes spill' "$W/ptxas")"
    fi
  fi
}

# [reduction.column_blocks] against its neighbours. Chunks: a 32-column block of 16 slices needs
# 512 reduced elements for 2 chunks (511: one chunk, the column split); kept elements: the column
# split stops splitting at 2 x 132 blocks of 8 columns (2103 kept: 263 blocks, 2105: 264), of 8
# columns x 4 f32 vectors when 16 bytes divide the kept axis (8416: 263, 8448: 264).
case_ col.tx reduction.column_blocks M=513 N=37
case_ col.tx reduction.column_split M=511 N=37
case_ col.tx reduction.column_blocks M=100003 N=16
VEC=1 case_ col.tx reduction.column_blocks M=600 N=2103
VEC=1 case_ col.tx reduction.column_split M=600 N=2105
VEC=4 case_ col.tx reduction.column_blocks M=600 N=8416
VEC=4 case_ col.tx reduction.column_split M=600 N=8448
VEC=1 case_ col.tx reduction.column_split M=20 N=65536 # 2 slices: fewer than the vector
VEC=8 case_ colh.tx reduction.column_blocks M=4096 N=1000
VEC=4 case_ coli.tx reduction.column_blocks M=999 N=1024
VEC=4 case_ mid.tx reduction.column_blocks B=3 R=777 C=136
VEC=8 case_ midh.tx reduction.column_split B=5 R=333 C=264
case_ col.tx reduction.column M=7 N=5
case_ colw.tx reduction.column_blocks M=4099 N=130
case_ colh.tx reduction.column_blocks M=20001 N=129
case_ colh.tx reduction.column_blocks M=4096 N=129  # groups of 16 bf16 elements
case_ coli.tx reduction.column_blocks M=5000 N=3
case_ colrow.tx reduction.column_split M=2500 N=37 # y written: one kernel while [fusion.model_guard] prices it faster (3000 or 5000 rows: apart, column blocks)
case_ mid.tx reduction.column_blocks B=3 R=20011 C=45
case_ mid.tx reduction.column_split B=64 R=64 C=256
# Column splits of several stages (streamed columns longer than a thread holds): softmax's online
# max and sum, Welford's mean and variance with a normalised output, a two-level chain that is not
# online; each slice stores its part of the domain-shaped output.
case_ smid.tx reduction.column_split B=3 S=1031 C=200
case_ smid.tx reduction.column_split B=2 S=37 C=77
case_ smid.tx reduction.column B=1 S=10 C=9
case_ cnorm.tx reduction.column_split N=3001 C=45
case_ cchain.tx reduction.column_split B=4 S=517 C=96
# Row-element indexes with their dims (codegen/reduction.c cg_red_idx): an iota along the reduced
# axis against a per-row operand, in a streamed row and in a column split, at odd sizes.
case_ rowiota.tx reduction.row_wide N=37 V=5003
case_ midiota.tx reduction.column_split B=3 S=301 C=40

echo "schedules: $n cases"
exit $fail
