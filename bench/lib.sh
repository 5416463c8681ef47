# shellcheck shell=bash
# bench/lib.sh - the common start of the GPU checks that run from the repository root on the GPU
# machine with dist/ carried (bash tools/make-dist.sh). Source it first, from bench/, then call
# one of the starts below:
#
#   . "$(dirname "$0")/lib.sh"
#   bench_start NAME          # or: py_start NAME OUT_NAME
#
# Sourcing sets -uo pipefail, moves to the repository root and exports TXC (an environment's
# value wins; else dist/bin/txc). The functions write only to stdout, stderr, $SUM, $LOG and files
# under $OUT or $W.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
export TXC=${TXC:-dist/bin/txc}

# bench_start NAME: the start of the checks that say one line per case. Sets OUT (the
# environment's, else NAME-out; created), LOG=$OUT/NAME.log and SUM=$OUT/NAME.txt (both emptied),
# T0 (the start, epoch s), W (a temporary folder removed on exit) and the verification counters
# nv=0, nfail=0; without an executable $TXC says so and exits 1.
bench_start() {
  OUT=${OUT:-$1-out}
  mkdir -p "$OUT"
  LOG=$OUT/$1.log
  SUM=$OUT/$1.txt
  : >"$LOG"
  : >"$SUM"
  T0=$(date +%s)
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
  # shellcheck disable=SC2034 # the counters are the calling script's
  nv=0
  nfail=0
  [ -x "$TXC" ] || {
    say "FAIL: no txc at $TXC (carry dist/)"
    exit 1
  }
}

# py_start NAME OUT_NAME: the start of the checks that hand over to a Python script. Exports OUT
# (the environment's, else OUT_NAME-out; created) and PATH with the CUDA tools, sets PY (python3,
# else python); without an executable $TXC says so on stderr, as NAME, and exits 2.
py_start() {
  export OUT=${OUT:-$2-out}
  export PATH="$PATH:/usr/local/cuda/bin"
  [ -x "$TXC" ] || {
    echo "$1: no txc at $TXC (run bash tools/make-dist.sh and carry dist/)" >&2
    exit 2
  }
  mkdir -p "$OUT"
  # shellcheck disable=SC2034 # the calling script's
  PY=$(command -v python3 || command -v python)
}

# banner NAME: `NAME: <txc --version> on <the GPU's name>`.
banner() {
  echo "$1: $("$TXC" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
}

# say LINE...: prints the line and appends it to $SUM.
say() { echo "$*" | tee -a "$SUM"; }

# elapsed: the seconds since T0.
elapsed() { echo $(($(date +%s) - T0)); }

# left CAP: what is left of CAP seconds counted from T0 (negative once past it).
left() { echo $(($1 - ($(date +%s) - T0))); }

# dims K=V...: `-D K=V` for each, for an unquoted expansion.
dims() {
  local d=()
  for kv in "$@"; do d+=(-D "$kv"); done
  echo "${d[@]}"
}

# verified FILE: the `txc bench` output in FILE says `: verified, ` and has no FAIL.
verified() { grep -qE ': verified, ' "$1" && ! grep -q 'FAIL' "$1"; }

# why FILE: the first two FAIL or error lines of FILE on one line, at most 300 bytes.
why() { grep -m2 -E 'FAIL|error' "$1" | tr '\n' ' ' | head -c 300; }

# plan_of MANIFEST: the manifest's kernels, each its template (else its name), joined by "; ".
plan_of() {
  python3 -c 'import json,sys; print("; ".join(k.get("template") or k["name"] for k in json.load(open(sys.argv[1]))["kernels"]))' "$1" 2>/dev/null
}

# sanitize TOOL SECONDS PROGRAM ARGS...: compute-sanitizer --tool TOOL over `txc run PROGRAM ARGS
# --device=gpu --random-inputs=3` (SECONDS at most); says `ok   TOOL PROGRAM ARGS: <summary>` or
# counts a failure (nfail) and says `FAIL TOOL PROGRAM ARGS (rc N): <errors>`; the sanitizer's
# output goes to $LOG. Variables assigned on the call's line are in the run's environment.
sanitize() {
  local tool=$1 secs=$2 c="${*:3}" rc
  timeout "$secs" "$CS" --tool "$tool" --error-exitcode 9 "$TXC" run "${@:3}" --device=gpu \
    --random-inputs=3 --output-dir "$W/so" >"$W/cs" 2>&1
  rc=$?
  cat "$W/cs" >>"$LOG"
  if [ $rc = 0 ]; then
    say "ok   $tool $c: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/cs" | tail -1)"
  else
    nfail=$((nfail + 1))
    say "FAIL $tool $c (rc $rc): $(grep -m2 -E 'ERROR|error|hazard' "$W/cs" | tr '\n' ' ' | head -c 300)"
  fi
}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# heldout_tail SECONDS BUDGET ONLY N: bench/heldout_check.sh --budget BUDGET --only ONLY (SECONDS at
# most) into $OUT/heldout.txt (its files under $OUT/heldout), its rc and output to $LOG, then its
# last N lines said.
heldout_tail() {
  OUT=$OUT/heldout timeout "$1" bash bench/heldout_check.sh --budget "$2" --only "$3" \
    >"$OUT/heldout.txt" 2>&1
  echo "heldout_check rc $?" >>"$LOG"
  cat "$OUT/heldout.txt" >>"$LOG"
  tail -"$4" "$OUT/heldout.txt" | tee -a "$SUM"
}

# sweep_rows SECONDS ONLY: bench/sweep.sh --only ONLY in SECONDS (a deadline 4 s earlier, 2/5 of
# it kept for torch.compile) into $OUT/sweep.txt (its files under $OUT/sweep), its rc to $LOG,
# then its table (from the `row ` header on) said.
sweep_rows() {
  OUT=$OUT/sweep timeout -k 2 "$1" bash bench/sweep.sh --only "$2" --deadline $(($1 - 4)) \
    --torch-reserve $((($1 - 4) * 2 / 5)) >"$OUT/sweep.txt" 2>&1
  echo "sweep rc $?" >>"$LOG"
  sed -n '/^row /,$p' "$OUT/sweep.txt" | tee -a "$SUM"
}

# summary: $SUM again, under a header with the seconds since T0.
summary() {
  echo
  echo "==== summary (also in $SUM; $(elapsed) s) ===="
  cat "$SUM"
}
