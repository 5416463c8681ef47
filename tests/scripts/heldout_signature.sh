#!/usr/bin/env bash
# heldout_signature.sh TXC ROOT - bench/heldout/check_cpu.py reads a signature written over
# several lines: ret_dtypes gives the declared return dtypes of the entry when parameters, `->`
# and the return tuple stand on lines of their own among comments, and the program compiles and
# runs on --device=cpu with outputs of those dtypes that match NumPy at their tolerance (compare).
# Also every bench/heldout/*.tx: its entry declares its return dtypes. Skips (77) without
# /usr/bin/python3 + NumPy.
set -u
TXC=${1:-} ROOT=${2:-}
PY=/usr/bin/python3
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then echo "heldout_signature: txc '$TXC' not found; skipped"; exit 77; fi
if ! $PY -c 'import numpy' 2>/dev/null; then echo "heldout_signature: no $PY with NumPy; skipped"; exit 77; fi
case "$TXC" in /*) ;; *) TXC="$PWD/$TXC" ;; esac
ROOT=$(realpath "$ROOT")
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/sig.tx" <<'EOF'
# a helper first: ret_dtypes reads the entry, the last fn
fn twice(x: f32[N]) -> f32[N] { return x * 2 }
fn sig(x: bf16[N],  # the input -> (not a return type)
       w: f32[N])
  # two outputs, one a line
  ->
  (bf16[N],
   f32[N])
{
  return x + 1, twice(w)
}
EOF
cd "$tmp" || exit 1
TXC="$TXC" $PY - "$ROOT" <<'EOF'
import glob, os, subprocess, sys
import numpy as np
root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench", "heldout"))
import check_cpu
fails = 0
got = check_cpu.ret_dtypes("sig.tx")
if got != ["bf16", "f32"]:
    print("FAIL ret_dtypes(sig.tx) = %r, want ['bf16', 'f32']" % got)
    fails += 1
x = np.linspace(-2, 2, 37, dtype=np.float32)
w = np.linspace(0, 1, 37, dtype=np.float32)
np.save("x.npy", x)
np.save("w.npy", w)
r = subprocess.run([os.environ["TXC"], "run", "sig.tx", "--device=cpu", "--output-dir", "out", "-D", "N=37",
                    "--input", "x=x.npy", "--input", "w=w.npy"], capture_output=True, text=True)
if r.returncode:
    print("FAIL txc run sig.tx: " + r.stderr.strip()[-300:])
    fails += 1
else:
    for i, want in enumerate([x.astype(np.float64) + 1, w.astype(np.float64) * 2]):
        msg = check_cpu.compare(np.load("out/out%d.npy" % i), want, got[i] if i < len(got) else "f32")
        if msg:
            print("FAIL sig.tx out%d: %s" % (i, msg))
            fails += 1
for f in sorted(glob.glob(os.path.join(root, "bench", "heldout", "*.tx"))):
    d = check_cpu.ret_dtypes(f)
    if not d or any(t not in check_cpu.TOL for t in d):
        print("FAIL ret_dtypes(%s) = %r" % (os.path.basename(f), d))
        fails += 1
print("heldout_signature: %s" % ("ok" if not fails else "%d failed" % fails))
sys.exit(1 if fails else 0)
EOF
