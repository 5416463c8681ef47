#!/usr/bin/env bash
# bench/red12_verify.sh - issue 12's last check, tx only (every output verified against the host
# reference), on the GPU machine from the repository root with dist/ carried:
#
#   bash bench/red12_verify.sh
#
# 1. streamed f32 sums and means of random values (the f64 tree of the Kahan partials): row sum
#    [512, 262144] (one block per row), [8, 2097152] (an 8-block cluster per row), row mean
#    [4096, 65536], sum [64, 1000003] (odd: scalar loads), one line each (verified or not, graph
#    us); 2. the suite's softmax_wide and chain8 against PyTorch in the same run
#    (bench/run_suite.sh --only softmax_wide,chain8 --no-unfused). Under 58 s.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-red12-verify}
TXC=${TXC:-dist/bin/txc}
mkdir -p "$OUT"
S=dist/shared/bench/suite
[ -d "$S" ] || S=../shared/bench/suite
printf 'fn f(x: f32[M, N]) -> f32[M] {\n  return sum(x, axis=-1)\n}\n' > "$OUT/rowsum.tx"
printf 'fn f(x: f32[M, N]) -> f32[M] {\n  return mean(x, axis=-1)\n}\n' > "$OUT/rowmean.tx"
one() { # name file dims...
  local n=$1 f=$2; shift 2
  local o
  o=$(timeout -k 2 12 "$TXC" bench "$f" "$@" --device=gpu --random-inputs=7 --iters 10 --json 2>"$OUT/$n.err")
  echo "$o" > "$OUT/$n.json"
  python3 - "$n" "$OUT/$n.json" "$OUT/$n.err" <<'PY'
import json, sys
n, p, e = sys.argv[1:]
try:
    s = open(p).read(); d = json.loads(s[s.index("{"):])["fused"]
    print(f"verify {n}: {'verified' if d['verified'] else 'NOT VERIFIED'} {d['graph_us']:.1f} us")
except Exception:
    print(f"verify {n}: FAILED {(open(e).read().strip().splitlines() or ['no output'])[-1][:160]}")
PY
}
one rowsum_512x262144 "$OUT/rowsum.tx" -D M=512 -D N=262144
one rowsum_8x2097152 "$OUT/rowsum.tx" -D M=8 -D N=2097152
one rowmean_4096x65536 "$OUT/rowmean.tx" -D M=4096 -D N=65536
one rowsum_64x1000003 "$OUT/rowsum.tx" -D M=64 -D N=1000003
OUT="$OUT/suite" PER_TIMEOUT=20 TX_ANCHOR_DEADLINE=25 timeout -k 2 34 bash bench/run_suite.sh \
    --only softmax_wide,chain8 --no-unfused --iters 20 > "$OUT/suite.log" 2>&1
echo "red12_verify: suite rc $?"
grep -E "^\| (workload|chain8|softmax_wide)" "$OUT/suite/report.md" 2>/dev/null || tail -5 "$OUT/suite.log"
