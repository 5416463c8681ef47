#!/usr/bin/env bash
# bench/bench_time.sh - how long `txc bench` takes per workload of the public suite on the GPU
# (issue 15 row S: at most 10 s each), and where the time goes (the report's wall_s phases:
# inputs, compile, reference, verification, gpu, timing), plus the memory checks of row J on the device.
# The memory probes run first (seconds), then the workloads, slowest-last-time first, until DEADLINE
# seconds have passed (the rest are reported as skipped), then bench/xfer_probe.py (host<->device
# copy rates: pageable, registered, pinned) when time is left. Run on the GPU machine from the
# repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/bench_time.sh            # OUT=... (default ./bench-time-out)
#
# Each workload runs as bench/run_suite.sh runs it: `txc bench --device=gpu --random-inputs=1
# --iters 50 --json --compare-unfused` at the sizes of its "bench:" comment. Files in $OUT:
# NAME.json, NAME.err, memcheck-*.txt, summary.txt (printed last). Exit status 0 when every
# workload ran, verified and took at most 10 s, and every memory probe gave its one-line error
# quickly.
set -u

TXC=${TXC:-dist/bin/txc}
SUITE=${SUITE:-dist/shared/bench/suite}
OUT=${OUT:-bench-time-out}
LIMIT=${LIMIT:-10}
DEADLINE=${DEADLINE:-95}
mkdir -p "$OUT"
PY=$(command -v python3 || command -v python)
[ -x "$TXC" ] || { echo "bench_time: no txc at $TXC (carry dist/)"; exit 2; }
SUM="$OUT/summary.txt"
: >"$SUM"
bad=0
start=$(date +%s)
now_ms() { date +%s%3N; }

echo "bench_time: $("$TXC" --version 2>&1 | head -1); $(nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader 2>/dev/null | head -1); $(nproc) cores, $(free -g | awk '/Mem:/{print $2 " GB host"}')" | tee -a "$SUM"
# Row J: sizes that do not fit are refused at once with one line naming the bytes.
probe() { # name expect-substring command...
  local pname=$1 want=$2
  shift 2
  local t0 t1 rc
  t0=$(now_ms)
  timeout 20 "$@" >"$OUT/memcheck-$pname.txt" 2>&1
  rc=$?
  t1=$(now_ms)
  local wall line
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", (b-a)/1000}')
  line=$(grep -m1 'error:' "$OUT/memcheck-$pname.txt" | cut -c1-200)
  if [ "$rc" = 1 ] && grep -q "$want" "$OUT/memcheck-$pname.txt" &&
    awk -v w="$wall" 'BEGIN{exit !(w < 10)}'; then
    echo "ok    memcheck $pname: rc 1 in $wall s: $line" | tee -a "$SUM"
  else
    echo "FAIL  memcheck $pname: rc $rc in $wall s: ${line:-$(tail -c 200 "$OUT/memcheck-$pname.txt" | tr '\n' ' ')}" | tee -a "$SUM"
    bad=1
  fi
}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
probe host_inputs "host memory" "$TXC" run "$SUITE/add_relu.tx" -D N=60000000000 --device=gpu --random-inputs=1
probe host_bench "host memory" "$TXC" bench "$SUITE/add_relu.tx" -D N=20000000000 --device=gpu --random-inputs=1
cat >"$W/outer.tx" <<'EOF'
fn outer(x: f32[M], y: f32[N]) -> f32[M] {
  return sum(reshape(x, (M, 1)) * reshape(y, (1, N)), axis=1)
}
EOF
# unfused, the M x N product is an intermediate of 160 GB on the device (more than an H200 has)
probe gpu_temps "GPU memory" "$TXC" run "$W/outer.tx" --no-fuse -D M=200000 -D N=200000 --device=gpu --random-inputs=1
# control: the same fused (one reduction kernel, no intermediate) runs
t0=$(now_ms)
if timeout 60 "$TXC" run "$W/outer.tx" -D M=200000 -D N=200000 --device=gpu --random-inputs=1 >"$OUT/memcheck-control.txt" 2>&1; then
  echo "ok    memcheck control (fused outer product runs): $(head -c 120 "$OUT/memcheck-control.txt")" | tee -a "$SUM"
else
  echo "FAIL  memcheck control: $(tail -c 200 "$OUT/memcheck-control.txt" | tr '\n' ' ')" | tee -a "$SUM"
  bad=1
fi


printf '%-18s %6s %5s %-8s  %s\n' workload wall_s rc verified "phases (s) | reference" | tee -a "$SUM"
# most telling first: the rows that took longest last session, then attention with the unfused plan
ORDER=${ORDER:-adam attention add_rmsnorm layernorm bias_gelu softmax softmax_wide add_relu matmul_bias_gelu mlp_block chain8 swiglu}
for name in $ORDER; do
  f="$SUITE/$name.tx"
  [ -f "$f" ] || continue
  if [ $(($(date +%s) - start)) -gt "$DEADLINE" ]; then
    echo "$name: skipped (deadline ${DEADLINE} s)" | tee -a "$SUM"
    bad=1
    continue
  fi
  sizes=$(grep -o 'bench:.*' "$f" | head -1 | sed 's/^bench://')
  tl=$((${KILL_AT:-108} - ($(date +%s) - start)))
  [ "$tl" -gt 60 ] && tl=60
  t0=$(now_ms)
  # shellcheck disable=SC2086
  timeout "$tl" "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters 50 --json --compare-unfused \
    $sizes >"$OUT/$name.json" 2>"$OUT/$name.err"
  rc=$?
  t1=$(now_ms)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", (b-a)/1000}')
  info=$("$PY" - "$OUT/$name.json" <<'EOF' 2>/dev/null || echo "no json"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no json (%s)" % e); sys.exit(0)
w = r.get("wall_s", {})
ph = " ".join("%s %.1f" % (k, w[k]) for k in ("inputs", "compile", "reference", "verification", "gpu", "timing") if k in w)
ph += " | runs " + "/".join("%d of %d" % (r[l]["iters"], r[l].get("iters_asked", r[l]["iters"]))
                            for l in ("fused", "unfused") if r.get(l))
ver = r["fused"]["verified"] and (not r.get("unfused") or r["unfused"]["verified"])
samp = sum(o.get("sampled", 0) for o in r["fused"]["outputs"])
print("%s|%s | %s%s" % ("yes" if ver else "NO", ph, r.get("reference", "?"),
      " (sampled %d elements)" % samp if samp else " (full)"))
EOF
)
  ver=${info%%|*}
  rest=${info#*|}
  printf '%-18s %6s %5s %-8s  %s\n' "$name" "$wall" "$rc" "$ver" "$rest" | tee -a "$SUM"
  if [ "$rc" != 0 ] || [ "$ver" != yes ] || awk -v w="$wall" -v l="$LIMIT" 'BEGIN{exit !(w > l)}'; then
    bad=1
    [ "$rc" != 0 ] && echo "  $(tail -c 300 "$OUT/$name.err" | tr '\n' ' ')" | tee -a "$SUM"
  fi
done

# where host<->device copies stand on this machine (pageable, registered, pinned), for the record
if [ $(($(date +%s) - start)) -lt 104 ]; then
  timeout 12 "$PY" bench/xfer_probe.py 1024 2>&1 | tee "$OUT/xfer_probe.txt" | tee -a "$SUM" >/dev/null
  tail -n +1 "$OUT/xfer_probe.txt"
fi

echo "bench_time: done in $(($(date +%s) - start)) s; limit ${LIMIT} s per workload; $([ $bad = 0 ] && echo ALL OK || echo 'SOME FAILED (see above)')" | tee -a "$SUM"
exit $bad
