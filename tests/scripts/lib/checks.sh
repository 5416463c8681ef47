# shellcheck shell=bash
# tests/scripts/lib/checks.sh - the checks the script tests share; source it after setup.sh (it
# reads TXC, ROOT, PY, PTXAS and W, and DEV: the device compared with the reference, cpu when
# unset; a script that honours TX_DIFF_DEVICE sets it): . "$(dirname "$0")/lib/checks.sh"
# Each prints one `FAIL LABEL: ...` line and returns 1 when its check fails, else returns 0 and
# prints nothing but compare.py's output.

# ptxas_ok LABEL [PTX]: ptxas -arch=sm_90a assembles PTX (default $W/k.ptx); true without ptxas.
ptxas_ok() {
  local ptx=${2:-$W/k.ptx}
  [ -x "$PTXAS" ] || return 0
  "$PTXAS" -arch=sm_90a "$ptx" -o "$W/k.cubin" 2>"$W/perr" && return 0
  echo "FAIL $1: ptxas: $(head -3 "$W/perr")"
  return 1
}

# cpu_vs_ref [--half] LABEL INPUTS PROG ARGS...: `txc run PROG ARGS...` on --device=ref and on
# --device=$DEV (cpu when unset; 120 s at most) with --random-inputs=INPUTS agree by
# tests/gen/compare.py (with --half: the bf16 tolerance for every float output), its label
# `LABEL (DEV)`. The outputs are left in $W/ref and $W/dev. Variables assigned on the call's line
# (`TX_SIMT_TILE=$pin cpu_vs_ref ...`) are in both runs' environment.
cpu_vs_ref() {
  local half=""
  [ "$1" = --half ] && { half=half; shift; }
  local label=$1 inputs=$2 prog=$3 dev=${DEV:-cpu}
  shift 3
  rm -rf "${W:?}/ref" "${W:?}/dev"
  if ! "$TXC" run "$prog" "$@" --device=ref --random-inputs="$inputs" --output-dir "$W/ref" 2>"$W/err"; then
    echo "FAIL $label: reference run: $(head -2 "$W/err")"
    return 1
  fi
  if ! timeout 120 "$TXC" run "$prog" "$@" --device="$dev" --random-inputs="$inputs" --output-dir "$W/dev" 2>"$W/err"; then
    echo "FAIL $label: --device=$dev: $(head -2 "$W/err")"
    return 1
  fi
  # shellcheck disable=SC2086
  $PY "$ROOT/tests/gen/compare.py" "$W/dev" "$W/ref" "$label ($dev)" $half
}

# fused_unfused_vs_ref [--half] LABEL INPUTS PROG ARGS...: `txc run PROG ARGS...` on --device=ref
# once, then on --device=cpu fused and with --no-fuse, each with --random-inputs=INPUTS; every
# cpu run agrees with the reference by tests/gen/compare.py (label `LABEL (cpu MODE)`, --half as
# for cpu_vs_ref). The outputs are left in $W/ref and $W/cpu (the last mode's).
fused_unfused_vs_ref() {
  local half=""
  [ "$1" = --half ] && { half=half; shift; }
  local label=$1 inputs=$2 prog=$3 ok=0 mode
  shift 3
  rm -rf "${W:?}/ref"
  if ! "$TXC" run "$prog" "$@" --device=ref --random-inputs="$inputs" --output-dir "$W/ref" 2>"$W/err"; then
    echo "FAIL $label: the reference run failed: $(head -3 "$W/err")"
    return 1
  fi
  for mode in "" --no-fuse; do
    rm -rf "${W:?}/cpu"
    # shellcheck disable=SC2086
    if ! "$TXC" run "$prog" "$@" $mode --device=cpu --random-inputs="$inputs" --output-dir "$W/cpu" 2>"$W/err"; then
      echo "FAIL $label: --device=cpu $mode failed: $(head -3 "$W/err")"
      ok=1
    elif ! $PY "$ROOT/tests/gen/compare.py" "$W/cpu" "$W/ref" "$label (cpu $mode)" $half; then
      ok=1
    fi
  done
  return $ok
}
