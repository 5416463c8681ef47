#!/usr/bin/env bash
# attention_partial_rotary.sh TXC ROOT - [attention.materialize_qk]: a causal attention whose q and
# k are concats of rotated and pass-through dims (tests/attention/rotary/) takes the FA3 kernel on
# --target=sm_90a at B=4 H=16 S=2048 (the concats copied whole by the rotation's kernel: 2
# kernels), ptxas accepts its PTX, and on the host the program matches the reference at ragged
# sizes.
set -u
TXC=$1
ROOT=$2
P="$ROOT/tests/attention/rotary/partial_rotary_attention.tx"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$TXC" "$P" -D B=4 -D H=16 -D S=2048 --target=sm_90a --explain --emit=report -o "$T/r.txt" \
  >"$T/ex.txt" 2>&1 || exit 1
grep -q '\[attention.materialize_qk\].*: materialised' "$T/ex.txt" || { cat "$T/ex.txt"; exit 1; }
grep -q 'k1: \[attention.fa3\] chosen' "$T/ex.txt" || { echo "FA3 not taken"; exit 1; }
grep -q 'totals: 2 kernels' "$T/r.txt" || { grep totals "$T/r.txt"; exit 1; }
"$TXC" "$P" -D B=4 -D H=16 -D S=2048 --target=sm_90a -o "$T/p.ptx" || exit 1
if [ -x /usr/local/cuda/bin/ptxas ]; then
  /usr/local/cuda/bin/ptxas -arch=sm_90a "$T/p.ptx" -o "$T/p.cubin" || exit 1
fi
for sz in "-D B=1 -D H=2 -D S=131" "-D B=2 -D H=1 -D S=67"; do
  # shellcheck disable=SC2086
  "$TXC" bench "$P" $sz --device=cpu --random-inputs=3 --iters 1 >"$T/b.txt" 2>&1 || {
    cat "$T/b.txt"; exit 1; }
  grep -q verified "$T/b.txt" || { cat "$T/b.txt"; exit 1; }
done
echo ok
