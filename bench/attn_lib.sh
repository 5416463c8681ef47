# bench/attn_lib.sh - the set-up the attention checks on the GPU share (sourced, from the
# repository root, by bench/fa3_check.sh, bench/fa3_perf.sh, bench/attn_views_check.sh and
# bench/decode_check.sh).
#
# attn_setup NAME OUT_DEFAULT BUDGET_DEFAULT STEP_MIN sets TXC (dist/bin/txc), SUITE, X, A (the
# suite's attention.tx), PY (python3 unless set), OUT (OUT_DEFAULT unless set), LOG ($OUT/log.txt, emptied), W (a
# scratch folder removed at exit), fail=0 and T0, and puts the CUDA tools on PATH; exits 2 when
# there is no txc. It defines log (a line to stdout and LOG), left (seconds of BUDGET, default
# BUDGET_DEFAULT, still unspent) and has STEP [MIN] (STEP is in $STEPS and more than MIN seconds,
# default STEP_MIN, are left; else a "skipped" line).
# attn_programs writes $W/f16.tx (f16 attention, symbolic head dim), $W/lens.tx (causal attention
# with per-sequence lengths) and $W/len.npy (lengths 0, 1, 300: a wholly masked batch first).
attn_setup() {
  ATTN_NAME=$1 ATTN_BUDGET=$3 ATTN_STEP_MIN=$4
  TXC=${TXC:-dist/bin/txc}
  SUITE=${SUITE:-dist/shared/bench/suite}
  X=${X:-bench/suite-extra}
  A=$SUITE/attention.tx
  OUT=${OUT:-$2}
  PY=${PY:-$(command -v python3 || command -v python)}
  export PATH="$PATH:/usr/local/cuda/bin"
  mkdir -p "$OUT"
  LOG=$OUT/log.txt
  : >"$LOG"
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
  [ -x "$TXC" ] || { echo "$ATTN_NAME: no txc at $TXC (carry dist/)"; exit 2; }
  fail=0
  T0=$(date +%s)
}
left() { echo $(( ${BUDGET:-$ATTN_BUDGET} - ($(date +%s) - T0) )); }
log() { echo "$*" | tee -a "$LOG"; }
has() {
  case ",$STEPS," in *",$1,"*) ;; *) return 1 ;; esac
  [ "$(left)" -gt "${2:-$ATTN_STEP_MIN}" ] && return 0
  log "skipped $1: $(left) s left"; return 1
}
attn_programs() {
  cat >"$W/f16.tx" <<'TX'
fn f(q: f16[B, H, S, D], k: f16[B, H, S, D], v: f16[B, H, S, D]) -> f16[B, H, S, D] {
  s = f32(q @ transpose(k, -1, -2)) * 0.125
  return f16(softmax(s, axis=-1)) @ v
}
TX
  cat >"$W/lens.tx" <<'TX'
fn f(q: bf16[B, H, S, 128], k: bf16[B, H, S, 128], v: bf16[B, H, S, 128], len: i32[B]) -> bf16[B, H, S, 128] {
  s = f32(q @ transpose(k, -1, -2)) * 0.08838834764831845
  keep = (arange(S) < reshape(len, (B, 1, 1, 1))) & (iota((S, S), axis=0) >= iota((S, S), axis=1))
  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v
}
TX
  "$PY" -c "import numpy as np; np.save('$W/len.npy', np.array([0, 1, 300], '<i4'))"
}
