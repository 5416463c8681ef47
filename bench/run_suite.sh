#!/usr/bin/env bash
# bench/run_suite.sh - the public benchmark suite on the GPU machine, in one
# command, from the repository root with dist/ carried (tools/make-dist.sh):
#
#   bash bench/run_suite.sh [--iters N] [--only a,b,...] [--no-anchors] [--no-unfused]
#
# 1. every program of dist/shared/bench/suite/*.tx runs through
#    `txc bench --json --compare-unfused --random-inputs=1` with the -D sizes
#    of its "bench:" comment (the first one also writes the calibration file);
# 2. dist/shared/bench/anchors.py times PyTorch eager / torch.compile and the
#    copy ceiling (skipped with --no-anchors, or when the tx part used more
#    than TX_ANCHOR_DEADLINE seconds: then the committed anchors-h200.json is
#    used and the report says so);
# 3. bench/report.py merges both into report.md and report.json.
#
# Files written to $OUT (default ./bench-out): tx.json (every bench result),
# anchors.json, calib.json, report.md, report.json, log.txt.
# Exit status: 0 when every workload ran and verified, else 1.
set -uo pipefail

TXC=${TXC:-dist/bin/txc}
SUITE=${SUITE:-dist/shared/bench/suite}
ANCHORS_PY=${ANCHORS_PY:-dist/shared/bench/anchors.py}
ANCHORS_JSON=${ANCHORS_JSON:-dist/shared/bench/anchors-h200.json}
OUT=${OUT:-bench-out}
PER_TIMEOUT=${PER_TIMEOUT:-240}
TX_ANCHOR_DEADLINE=${TX_ANCHOR_DEADLINE:-330}
ITERS=50
ONLY=""
ANCHORS=1
UNFUSED=1
while [ $# -gt 0 ]; do
  case "$1" in
    --iters) ITERS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --no-anchors) ANCHORS=0; shift ;;
    --no-unfused) UNFUSED=0; shift ;;
    *) echo "run_suite: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$TXC" ] || { echo "run_suite: no txc at $TXC (carry dist/)" >&2; exit 2; }
[ -d "$SUITE" ] || { echo "run_suite: no suite at $SUITE" >&2; exit 2; }
PY=$(command -v python3 || command -v python)
mkdir -p "$OUT"
LOG="$OUT/log.txt"
: >"$LOG"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)
failed=0
first=1

log() { echo "$*" | tee -a "$LOG"; }

log "run_suite: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
for f in "$SUITE"/*.tx; do
  name=$(basename "$f" .tx)
  if [ -n "$ONLY" ] && ! echo ",$ONLY," | grep -q ",$name,"; then continue; fi
  sizes=$(grep -o 'bench:.*' "$f" | head -1 | sed 's/^bench://')
  extra=()
  [ "$UNFUSED" = 1 ] && extra+=(--compare-unfused)
  # The first workload measures the copy ceiling and launch overhead; the others predict with them.
  if [ "$first" = 1 ]; then extra+=(--calibrate "--calib=$OUT/calib.json"); first=0; else extra+=("--calib=$OUT/calib.json"); fi
  t0=$(date +%s)
  # shellcheck disable=SC2086
  timeout "$PER_TIMEOUT" "$TXC" bench "$f" --device=gpu --random-inputs=1 --iters "$ITERS" --json \
    "${extra[@]}" $sizes >"$WORK/$name.json" 2>"$WORK/$name.err"
  rc=$?
  t1=$(date +%s)
  printf '%s\t%s\t%s\n' "$name" "$rc" "$sizes" >>"$WORK/index.tsv"
  if [ $rc -eq 0 ]; then
    log "ok    $name ($sizes) $((t1 - t0)) s"
  else
    failed=1
    log "FAIL  $name ($sizes) rc=$rc $((t1 - t0)) s: $(tail -c 400 "$WORK/$name.err" | tr '\n' ' ')"
  fi
  cat "$WORK/$name.err" >>"$LOG"
done

# Collect every bench result into tx.json.
"$PY" - "$WORK" "$OUT/tx.json" <<'PYEOF'
import json, os, sys
work, dest = sys.argv[1], sys.argv[2]
res = {}
for line in open(os.path.join(work, "index.tsv")):
    name, rc, sizes = line.rstrip("\n").split("\t")
    row = {"rc": int(rc), "sizes": sizes.strip()}
    try:
        row["result"] = json.load(open(os.path.join(work, name + ".json")))
    except Exception:
        pass
    err = open(os.path.join(work, name + ".err")).read().strip()
    if err:
        row["stderr"] = err[-2000:]
    res[name] = row
json.dump({"workloads": res}, open(dest, "w"), indent=1)
PYEOF

elapsed=$(( $(date +%s) - start ))
anchors_note="measured in this run"
if [ "$ANCHORS" = 1 ] && [ "$elapsed" -le "$TX_ANCHOR_DEADLINE" ] && [ -f "$ANCHORS_PY" ]; then
  log "anchors: running $ANCHORS_PY (tx part took $elapsed s)"
  OUT="$OUT" timeout $((560 - elapsed)) "$PY" "$ANCHORS_PY" >>"$LOG" 2>&1 || {
    log "anchors: anchors.py failed or timed out; using $ANCHORS_JSON"; anchors_note="committed file (anchors.py failed)"
    cp "$ANCHORS_JSON" "$OUT/anchors.json"; }
else
  anchors_note="committed file $(basename "$ANCHORS_JSON") (not re-measured)"
  cp "$ANCHORS_JSON" "$OUT/anchors.json"
  log "anchors: using $ANCHORS_JSON"
fi

"$PY" bench/report.py "$OUT/tx.json" "$OUT/anchors.json" "$OUT/report.md" "$OUT/report.json" \
  --anchors-note "$anchors_note" | tee -a "$LOG"
log "run_suite: done in $(( $(date +%s) - start )) s; results in $OUT"
exit $failed
