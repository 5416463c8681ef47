#!/usr/bin/env bash
# The tuning cache and `txc tune` without a GPU (docs/runtime.md "Tuning cache"):
# - `txc tune` with no usable driver: one line, exit 1, no cache written;
# - on the stand-in driver (kernels do not run, events read the wall clock): tune writes a valid
#   cache (round trip: a second tune replaces, a second program adds), compiles then follow it
#   (JSON schedule.source "measurement", the report's "from the measurement"), --no-tune-cache
#   and TX_NO_TUNE_CACHE ignore it, TX_CACHE_DIR and HOME place it;
# - a hand-written entry makes the compile choose its schedule; one outside the kernel's space is
#   refused ([schedule.invalid]) and one of another device or driver is stale (ignored);
# - corrupt caches (garbage, truncated, wrong version, unknown schedule, bad params, deep
#   nesting, empty) are one warning line and the model's plan, never a crash;
# - hostile --tune-cache paths: a FIFO (no hang, not replaced), a directory, a path under a
#   regular file (errors for tune, warnings for compiles), a symbolic link (followed, kept).
# Usage: tune.sh TXC ROOT (exit 77: skipped).
set -u
TXC=${1:-} ROOT=${2:-}
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then echo "tune: txc binary '$TXC' not found; skipped"; exit 77; fi
case "$TXC" in /*) ;; *) TXC="$PWD/$TXC" ;; esac
FAKE="$(dirname "$TXC")/runtime/libtx_fake_cuda.so"
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then echo "tune: python3 not found; skipped"; exit 77; fi
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT
fail=0 n=0
ok() { n=$((n + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); n=$((n + 1)); }
export HOME="$W/home" TX_CACHE_DIR="$W/cachedir"
mkdir -p "$HOME"
cat >"$W/colsum.tx" <<'EOF'
fn f(x: f32[M, N]) -> f32[N] { return sum(x, axis=0) }
EOF
cat >"$W/two.tx" <<'EOF'
fn f(x: f32[M, N], y: f32[M, N]) -> (f32[M], f32[M, N]) { return max(x, axis=-1), exp(y) * 2 }
EOF
D="-D M=4096 -D N=256"
# json_get FILE EXPR: prints a Python expression over the JSON object j
json_get() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. no GPU: one line, exit 1
out=$(TX_CUDA_LIB="$W/no-such-libcuda.so" timeout 20 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$W/none.json" 2>&1)
rc=$?
if [ $rc -ne 1 ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ] || ! grep -q "GPU" <<<"$out" ||
  [ -e "$W/none.json" ]; then
  bad "tune without a GPU: rc $rc, output: $out"
else ok; fi
# tune refuses options it would ignore
for o in --no-tune-cache "--device=cpu" "-o x" --json; do
  # shellcheck disable=SC2086
  if timeout 20 "$TXC" tune "$W/colsum.tx" $D $o >/dev/null 2>"$W/err"; then bad "tune $o accepted"
  elif [ "$(wc -l <"$W/err")" -ne 1 ]; then bad "tune $o: not one line"; else ok; fi
done

if [ ! -f "$FAKE" ]; then
  echo "note: $FAKE not built; txc tune on the stand-in driver not checked"
  echo "tune: $n checks, $fail failed"
  exit $((fail > 0))
fi
export TX_CUDA_LIB="$FAKE"

# 2. tune writes a valid cache; compiles follow it
C="$W/c.json"
if ! timeout 60 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$C" --iters 2 >"$W/tune.out" 2>&1; then
  bad "tune on the stand-in driver failed"; cat "$W/tune.out"
elif ! grep -q "tuned 1 kernel" "$W/tune.out" || ! grep -q "the model's choice" "$W/tune.out"; then
  bad "tune output lacks its summary"; cat "$W/tune.out"
elif [ "$(json_get "$C" 'len(j["entries"])')" != 1 ]; then bad "cache should hold one entry"
else ok; fi
key=$(json_get "$C" 'j["entries"][0]["key"]')
"$TXC" "$W/colsum.tx" $D --tune-cache="$C" --emit=json -o "$W/r.json" 2>"$W/err" &&
  [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["source"]')" = measurement ] &&
  [ ! -s "$W/err" ] && ok || bad "compile does not follow the tuned entry"
"$TXC" "$W/colsum.tx" $D --tune-cache="$C" --no-tune-cache --emit=json -o "$W/r.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] && ok || bad "--tune-cache with --no-tune-cache accepted"
"$TXC" "$W/colsum.tx" $D --no-tune-cache --emit=json -o "$W/r.json" &&
  [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["source"]')" = model ] && ok ||
  bad "--no-tune-cache still follows a cache"
# second tune of the same program replaces; another program adds its kernels
timeout 60 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$C" --iters 2 >/dev/null 2>&1 &&
  timeout 60 "$TXC" tune "$W/two.tx" $D --tune-cache="$C" --iters 2 >/dev/null 2>&1 &&
  [ "$(json_get "$C" 'len(j["entries"])')" = 3 ] && ok || bad "cache round trip (replace, add): $(json_get "$C" 'len(j["entries"])')"

# 3. default places: TX_CACHE_DIR, then HOME
timeout 60 "$TXC" tune "$W/colsum.tx" $D --iters 2 >/dev/null 2>&1 && [ -f "$TX_CACHE_DIR/tune.json" ] &&
  ok || bad "tune did not write \$TX_CACHE_DIR/tune.json"
"$TXC" "$W/colsum.tx" $D --emit=json -o "$W/r.json" &&
  [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["source"]')" = measurement ] && ok ||
  bad "compile does not follow the default cache"
(unset TX_CACHE_DIR; timeout 60 "$TXC" tune "$W/colsum.tx" $D --iters 2 >/dev/null 2>&1) &&
  [ -f "$HOME/.cache/tx/tune.json" ] && ok || bad "tune did not write ~/.cache/tx/tune.json"
unset TX_CUDA_LIB

# 4. a hand-written entry: the compile runs it and says measurement
write_entry() { # FILE SCHEDULE PARAMS DEVICE
  cat >"$1" <<EOF
{"tx_tune_cache": 1, "entries": [
 {"key": "$key", "gpu": "h200", "device": "$4", "driver": 13000, "schedule": "$2", "params": $3,
  "candidates": [{"schedule": "$2", "params": $3, "predicted_us": 9.0, "measured_us": 4.25}]}]}
EOF
}
write_entry "$W/h.json" reduction.column "[32]" "NVIDIA H200"
"$TXC" "$W/colsum.tx" $D --tune-cache="$W/h.json" --emit=json -o "$W/r.json" &&
  [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["name"]+str(j["kernels"][0]["schedule"]["parameters"]["cols"])+j["kernels"][0]["schedule"]["source"]+str(j["kernels"][0]["schedule"]["measured_us"])')" = "reduction.column32measurement4.25" ] &&
  ok || bad "a hand-written entry is not followed: $(cat "$W/r.json" | head -c 600)"
"$TXC" "$W/colsum.tx" $D --tune-cache="$W/h.json" --emit=report -o - | grep -q "schedule: reduction.column(cols=32) from the measurement (measured 4.250 us)" &&
  ok || bad "the report does not say measurement"
"$TXC" "$W/colsum.tx" $D --tune-cache="$W/h.json" --explain --emit=ir -o "$W/x.ir" | grep -q "\[reduction.column\] (cols=32) chosen by measurement" &&
  ok || bad "--explain does not say measurement"
# outside the space: refused, the rule kept
write_entry "$W/h2.json" reduction.warp_rows "[8]" "NVIDIA H200"
"$TXC" "$W/colsum.tx" $D --tune-cache="$W/h2.json" --explain --emit=json -o "$W/r.json" >"$W/ex" &&
  grep -q "schedule.invalid" "$W/ex" &&
  [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["source"]')" = model ] && ok ||
  bad "an entry outside the space was not refused"
# another key (other sizes): not used
"$TXC" "$W/colsum.tx" -D M=4096 -D N=512 --tune-cache="$W/h.json" --emit=json -o "$W/r.json" &&
  [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["source"]')" = model ] && ok ||
  bad "an entry of other sizes was used"

# 5. corrupt caches: one warning line, the model's plan, exit 0
printf 'garbage' >"$W/k1.json"
printf '{"tx_tune_cache": 1, "entries": [{"key": "%s", "gpu": "h200"' "$key" >"$W/k2.json"
printf '{"tx_tune_cache": 2, "entries": []}' >"$W/k3.json"
write_entry "$W/k4.json" reduction.nonsense "[1]" "NVIDIA H200"
write_entry "$W/k5.json" reduction.column '["x"]' "NVIDIA H200"
"$PY" -c 'print("["*100000)' >"$W/k6.json"
: >"$W/k7.json"
printf '\377\376\000binary' >"$W/k8.json"
for k in 1 2 3 4 5 6 7 8; do
  timeout 20 "$TXC" "$W/colsum.tx" $D --tune-cache="$W/k$k.json" --emit=json -o "$W/r.json" 2>"$W/err"
  rc=$?
  if [ $rc -ne 0 ] || [ "$(wc -l <"$W/err")" -ne 1 ] || ! grep -q "^txc: warning: .*k$k.json" "$W/err" ||
    [ "$(json_get "$W/r.json" 'j["kernels"][0]["schedule"]["source"]')" != model ]; then
    bad "corrupt cache k$k: rc $rc, stderr: $(head -c 300 "$W/err")"
  else ok; fi
done

# 6. hostile --tune-cache paths
export TX_CUDA_LIB="$FAKE"
mkfifo "$W/fifo"
timeout 20 "$TXC" "$W/colsum.tx" $D --tune-cache="$W/fifo" --emit=json -o "$W/r.json" 2>"$W/err"
rc=$?
[ $rc -eq 0 ] && grep -q "warning" "$W/err" && ok || bad "compile with a FIFO cache: rc $rc"
timeout 20 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$W/fifo" --iters 1 >/dev/null 2>"$W/err"
rc=$?
[ $rc -eq 1 ] && [ -p "$W/fifo" ] && ok || bad "tune to a FIFO: rc $rc (124: hung)"
mkdir "$W/dir"
timeout 20 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$W/dir" --iters 1 >/dev/null 2>"$W/err"
rc=$?
[ $rc -eq 1 ] && [ -d "$W/dir" ] && grep -q "directory" "$W/err" && ok || bad "tune to a directory: rc $rc"
timeout 20 "$TXC" "$W/colsum.tx" $D --tune-cache="$W/dir" --emit=json -o "$W/r.json" 2>"$W/err" &&
  grep -q "warning" "$W/err" && ok || bad "compile with a directory cache"
: >"$W/file"
timeout 20 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$W/file/under" --iters 1 >/dev/null 2>"$W/err"
rc=$?
[ $rc -eq 1 ] && [ -f "$W/file" ] && [ ! -s "$W/file" ] && ok || bad "tune under a regular file: rc $rc"
cp "$C" "$W/target.json"
ln -s "$W/target.json" "$W/link.json"
timeout 60 "$TXC" tune "$W/two.tx" $D --tune-cache="$W/link.json" --iters 1 >/dev/null 2>"$W/err" &&
  [ -L "$W/link.json" ] && [ "$(json_get "$W/target.json" 'len(j["entries"])')" = 3 ] && ok ||
  bad "tune through a symbolic link: $(cat "$W/err")"
ln -s "$W/dangling-target.json" "$W/dangling.json" # refused, as every output of runtime/file.c
timeout 60 "$TXC" tune "$W/colsum.tx" $D --tune-cache="$W/dangling.json" --iters 1 >/dev/null 2>"$W/err"
rc=$?
[ $rc -eq 1 ] && [ -L "$W/dangling.json" ] && [ ! -e "$W/dangling-target.json" ] &&
  [ "$(wc -l <"$W/err")" -eq 1 ] && ok || bad "tune through a dangling link: rc $rc, $(cat "$W/err")"
unset TX_CUDA_LIB
# a stale entry (another device): compiles that know no device still follow the --gpu entry;
# the planner's own test (test_schedule) covers the device check
echo "tune: $n checks, $fail failed"
exit $((fail > 0))
