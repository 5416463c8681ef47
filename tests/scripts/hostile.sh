#!/usr/bin/env bash
# hostile.sh TXC ROOT - hostile input to the command line (docs/reliability.md).
#
# Every case is generated on the fly in a temporary directory and run with
# `timeout 20` in a fresh, empty working directory. An "error" case must:
# exit exactly 1; print a "txc: error: " or "FILE:LINE:COL: error: " line;
# print no sanitizer report and under 64 KiB on stderr; leave no file in its
# working directory, at its -o path or in its --output-dir, and no *.tmp*
# file anywhere. An "either" case (input the contract does not rule on, such
# as a 10 MB identifier that is used correctly) may also succeed, but must
# not crash or hang. "ok" cases are the positive controls: they must succeed
# and write their output, else the error cases beside them prove nothing.
# The reproducers of findings live in tests/hostile/ and run here too.
set -u
TXC=${1:-}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ -z "$TXC" ] || [ ! -x "$TXC" ]; then
  echo "hostile: txc binary '$TXC' not found or not executable; skipping"
  exit 77
fi
TXC=$(cd "$(dirname "$TXC")" && pwd)/$(basename "$TXC")
W=$(mktemp -d "${TMPDIR:-/tmp}/tx-hostile.XXXXXX")
trap 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"' EXIT
IN=$W/in
mkdir -p "$IN" "$W/run" "$W/adir" "$W/adir.tx"
: >"$W/afile"
npass=0 nfail=0
EXTRA_PATHS=() # set per case: paths that must not exist afterwards

# ---- running a case ----------------------------------------------------------
# run_case KIND NAME ARGS...: KIND is error, either or ok (see above). For
# "ok", OK_OUT names the file that must exist afterwards (relative to the
# case's working directory).
run_case() {
  local kind=$1 name=$2
  shift 2
  local dir=$W/run/$name
  mkdir -p "$dir"
  (cd "$dir" && exec timeout -k 5 20 "$TXC" "$@") >"$W/stdout" 2>"$W/stderr" </dev/null
  local rc=$? why=() left
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then why+=("hang: killed after 20 s")
  elif [ $rc -ge 128 ]; then why+=("crash: exit $rc (signal $((rc - 128)))")
  fi
  if grep -qE 'Sanitizer|runtime error:|stack-overflow|Segmentation fault' "$W/stderr"; then why+=("sanitizer report or crash on stderr"); fi
  local errsize
  errsize=$(wc -c <"$W/stderr")
  [ "$errsize" -gt 65536 ] && why+=("stderr is $errsize bytes (a message should be short)")
  local has_err=0
  grep -qE '^(txc: error: .+|.+:[0-9]+:[0-9]+: error: .+)$' "$W/stderr" && has_err=1
  case $kind in
    error)
      [ $rc -ne 1 ] && [ $rc -lt 124 ] && why+=("exit $rc, want 1")
      [ $has_err = 0 ] && why+=("no 'txc: error:' or 'FILE:LINE:COL: error:' line")
      ;;
    either)
      [ $rc -ne 0 ] && [ $rc -ne 1 ] && [ $rc -lt 124 ] && why+=("exit $rc, want 0 or 1")
      [ $rc -eq 1 ] && [ $has_err = 0 ] && why+=("exit 1 without an error line")
      ;;
    ok)
      [ $rc -ne 0 ] && why+=("positive control failed: exit $rc")
      [ -n "${OK_OUT:-}" ] && [ ! -s "$dir/$OK_OUT" ] && why+=("positive control wrote no $OK_OUT")
      ;;
  esac
  if [ "$kind" != ok ] && [ $rc -ne 0 ]; then
    left=$(cd "$dir" && find . -mindepth 1 | head -5 | tr '\n' ' ')
    [ -n "$left" ] && why+=("left files behind: $left")
    local p
    for p in "${EXTRA_PATHS[@]+"${EXTRA_PATHS[@]}"}"; do
      [ -e "$p" ] && why+=("left $p behind")
    done
  fi
  left=$(find "$W" -name '*.tmp*' -not -path "$IN/*" | head -3 | tr '\n' ' ')
  [ -n "$left" ] && why+=("temporary file left behind: $left") && find "$W" -name '*.tmp*' -not -path "$IN/*" -exec rm -rf {} + 2>/dev/null
  EXTRA_PATHS=()
  OK_OUT=
  if [ ${#why[@]} -eq 0 ]; then
    npass=$((npass + 1))
    echo "ok   $kind $name (exit $rc)"
  else
    nfail=$((nfail + 1))
    echo "FAIL $kind $name: $(IFS='; '; echo "${why[*]}")"
    echo "     txc $(printf '%q ' "$@" | cut -c1-300)"
    head -c 600 "$W/stderr" | sed 's/^/     | /'
    echo
  fi
  rm -rf "$dir"
}
expect_error() { run_case error "$@"; }
expect_either() { run_case either "$@"; }
expect_ok() { run_case ok "$@"; }

# ---- generators ----------------------------------------------------------------
# rep STR N: STR repeated N times (no newline).
rep() { yes -- "$1" | head -n "$2" | tr -d '\n'; }
# prog NAME BODYEXPR [PARAMS] [RET]: a one-function program returning BODYEXPR.
prog() {
  local name=$1 body=$2 params=${3:-x: f32[N]} ret=${4:-f32[N]}
  printf 'fn f(%s) -> %s {\n  return %s\n}\n' "$params" "$ret" "$body" >"$IN/$name.tx"
}
# npy NAME HEADERTEXT DATABYTES [VERSION]: a raw .npy with the given header
# dict text (padded to 64 bytes, newline-terminated) and that many zero bytes
# of data. No validation: this is how lying files are made.
npy() {
  local name=$1 text=$2 nbytes=$3 ver=${4:-1} pre=10 len
  [ "$ver" != 1 ] && pre=12
  len=$(( ${#text} + 1 ))
  while [ $(( (pre + len) % 64 )) -ne 0 ]; do text="$text "; len=$((len + 1)); done
  {
    printf '\x93NUMPY'
    printf "\\x$(printf %02x "$ver")\\x00"
    printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $(((len >> 8) & 255)))"
    [ "$ver" != 1 ] && printf '\x00\x00'
    printf '%s\n' "$text"
    head -c "$nbytes" /dev/zero
  } >"$IN/$name.npy"
}
hdr() { printf "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" "$1" "${3:-False}" "$2"; }

# ---- 1. files that are not sources -----------------------------------------------
: >"$IN/empty.tx"
expect_error empty_file "$IN/empty.tx" --emit=ir
printf '# only a comment\n\n' >"$IN/comment_only.tx"
expect_error comment_only "$IN/comment_only.tx" --emit=ir
expect_error missing_file "$IN/does_not_exist.tx" --emit=ir
expect_error directory_as_file "$W/adir.tx" --emit=ir
head -c 4096 "$TXC" >"$IN/binary.tx"
expect_error binary_file "$IN/binary.tx" --emit=ir
truncate -s 65M "$IN/sparse_65MiB.tx" 2>/dev/null && expect_error file_over_64MiB "$IN/sparse_65MiB.tx" --emit=ir
if command -v mkfifo >/dev/null && mkfifo "$IN/fifo.tx" 2>/dev/null; then
  expect_error fifo_as_file "$IN/fifo.tx" --emit=ir
fi

# ---- 2. bytes: NUL and invalid UTF-8 -------------------------------------------
good='fn f(x: f32[N]) -> f32[N] {\n  return x * 2.0\n}\n'
printf "$good" >"$IN/good.tx"
OK_OUT=out.ir expect_ok control_compile_ir_out "$IN/good.tx" --emit=ir -o out.ir
printf 'fn f(x: f32[N]) -> f32[N] {\n  return x\x00 + x\n}\n' >"$IN/nul_code.tx"
expect_error nul_in_code "$IN/nul_code.tx" --emit=ir
printf '# a comment \x00 with NUL\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n' >"$IN/nul_comment.tx"
expect_error nul_in_comment "$IN/nul_comment.tx" --emit=ir
printf 'fn f(x: f32[N]) -> f32[N] {\n  return x\n}\n\x00' >"$IN/nul_at_end.tx"
expect_error nul_at_end "$IN/nul_at_end.tx" --emit=ir
i=0
for bytes in '\xff' '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80' '\xe2\x82' '\x80' '\xfe\xfe'; do
  i=$((i + 1))
  printf "# comment $bytes\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n" >"$IN/utf8_comment_$i.tx"
  expect_error "bad_utf8_in_comment_$i" "$IN/utf8_comment_$i.tx" --emit=ir
  printf "fn f(x: f32[N]) -> f32[N] {\n  return x$bytes\n}\n" >"$IN/utf8_code_$i.tx"
  expect_error "bad_utf8_in_code_$i" "$IN/utf8_code_$i.tx" --emit=ir
done
printf 'fn f(x: f32[N]) -> f32[N] {\n  return x\n}\n\xe2\x82' >"$IN/utf8_truncated_eof.tx"
expect_error bad_utf8_truncated_at_eof "$IN/utf8_truncated_eof.tx" --emit=ir
printf '# h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n' >"$IN/utf8_ok.tx"
OK_OUT=o.ir expect_ok control_valid_utf8_comment "$IN/utf8_ok.tx" --emit=ir -o o.ir

# ---- 3. nesting and size limits ---------------------------------------------------
prog deep_parens "$(rep '(' 10000)x$(rep ')' 10000)"
expect_error deep_parens_10000 "$IN/deep_parens.tx" --emit=ir
prog deep_calls "$(rep 'exp(' 10000)x$(rep ')' 10000)"
expect_error deep_calls_10000 "$IN/deep_calls.tx" --emit=ir
prog parens_257 "$(rep '(' 257)x$(rep ')' 257)"
expect_error parens_257 "$IN/parens_257.tx" --emit=ir
prog unclosed "$(rep '(' 10000)x"
expect_error deep_unclosed_10000 "$IN/unclosed.tx" --emit=ir
printf 'fn f(x: f32[N]) -> f32[N] %s\n' "$(rep '{' 10000)" >"$IN/braces.tx"
expect_error deep_braces_10000 "$IN/braces.tx" --emit=ir
prog deep_axis "sum(x, axis=$(rep '(' 10000)0$(rep ')' 10000))" 'x: f32[N]' 'f32[]'
expect_error deep_axis_tuple_10000 "$IN/deep_axis.tx" --emit=ir
prog deep_neg "$(rep '- ' 10000)x"
expect_either deep_unary_minus_10000 "$IN/deep_neg.tx" --emit=ir
prog long_sum "x$(rep ' + x' 50000)"
expect_either chain_of_50000_adds "$IN/long_sum.tx" --emit=ir
prog long_pow "x$(rep ' ** x' 20000)"
expect_either chain_of_20000_pows "$IN/long_pow.tx" --emit=ir
{ printf 'fn f(x: f32[N]) -> f32[N] {\n'; for ((k = 0; k < 20000; k++)); do printf '  x = x + 1.0\n'; done; printf '  return x\n}\n'; } >"$IN/many_stmts.tx"
expect_either statements_20000 "$IN/many_stmts.tx" --emit=ir
{ printf 'fn h0(x) { return x }\n'; for ((k = 1; k < 5000; k++)); do printf 'fn h%d(x) { return h%d(x) + 1.0 }\n' $k $((k - 1)); done
  printf 'fn f(x: f32[N]) -> f32[N] {\n  return h4999(x)\n}\n'; } >"$IN/inline_chain.tx"
expect_either inline_chain_5000 "$IN/inline_chain.tx" --emit=ir
printf 'fn a(x) { return b(x) }\nfn b(x) { return a(x) }\nfn f(x: f32[N]) -> f32[N] {\n  return a(x)\n}\n' >"$IN/recursion.tx"
expect_error mutual_recursion "$IN/recursion.tx" --emit=ir
prog rank9 'x' 'x: f32[1, 1, 1, 1, 1, 1, 1, 1, 1]' 'f32[1, 1, 1, 1, 1, 1, 1, 1, 1]'
expect_error rank_9_param "$IN/rank9.tx" --emit=ir
prog rank9r 'reshape(x, (1, 1, 1, 1, 1, 1, 1, 1, 1))' 'x: f32[1]' 'f32[1]'
expect_error rank_9_reshape "$IN/rank9r.tx" --emit=ir
prog rank100 'x' "x: f32[$(rep '1, ' 99)1]" 'f32[1]'
expect_error rank_100_param "$IN/rank100.tx" --emit=ir
prog elems_2p62 'x' 'x: f32[4611686018427387904]' 'f32[4611686018427387904]'
expect_error elements_2p62 "$IN/elems_2p62.tx" --emit=ir
prog elems_prod 'x' 'x: f32[2147483648, 2147483648, 2]' 'f32[2147483648, 2147483648, 2]'
expect_error elements_product_2p63 "$IN/elems_prod.tx" --emit=ir
prog elems_D 'x' 'x: f32[N, N, N]' 'f32[N, N, N]'
expect_error elements_via_D_2p66 "$IN/elems_D.tx" --emit=ir -D N=4194304
prog elems_bcast 'x + y' 'x: f32[N, 1], y: f32[1, N]' 'f32[N, N]'
expect_error elements_via_broadcast_2p64 "$IN/elems_bcast.tx" --emit=ir -D N=4294967296
prog elems_mm 'x @ y' 'x: f32[N, 1], y: f32[1, N]' 'f32[N, N]'
expect_error elements_via_matmul_2p64 "$IN/elems_mm.tx" --emit=ir -D N=4294967296
prog elems_reshape 'reshape(x, (4294967296, 4294967296))' 'x: f32[N]' 'f32[4294967296, 4294967296]'
expect_error elements_via_reshape_2p64 "$IN/elems_reshape.tx" --emit=ir
prog dim_overflow 'x' 'x: f32[99999999999999999999]' 'f32[99999999999999999999]'
expect_error dim_literal_overflow "$IN/dim_overflow.tx" --emit=ir
prog dim_zero 'x' 'x: f32[0]' 'f32[0]'
expect_error dim_literal_zero "$IN/dim_zero.tx" --emit=ir
prog int_overflow 'x * 99999999999999999999999'
expect_error int_literal_overflow "$IN/int_overflow.tx" --emit=ir
prog float_overflow 'x * 1e999'
expect_error float_literal_overflow "$IN/float_overflow.tx" --emit=ir
prog float_underflow 'x * 1e-999'
expect_either float_literal_underflow "$IN/float_underflow.tx" --emit=ir
prog huge_literal "x * $(rep 1 1000000)"
expect_error literal_of_1M_digits "$IN/huge_literal.tx" --emit=ir
prog huge_float "x * 0.$(rep 1 1000000)"
expect_either float_of_1M_digits "$IN/huge_float.tx" --emit=ir
prog slice_huge 'slice(x, axis=0, start=0, stop=99999999999999999999)'
expect_error slice_stop_overflow "$IN/slice_huge.tx" --emit=ir
prog axis_huge 'sum(x, axis=4294967296)' 'x: f32[N]' 'f32[]'
expect_error axis_out_of_range "$IN/axis_huge.tx" --emit=ir
id=$(head -c 10485760 /dev/zero | tr '\0' a)
prog ident_unknown "$id" 'x: f32[N]'
expect_error identifier_10MB_unknown "$IN/ident_unknown.tx" --emit=ir
printf 'fn f(x: f32[N]) -> f32[N] {\n  %s = x * 2.0\n  return %s\n}\n' "$id" "$id" >"$IN/ident_ok.tx"
expect_either identifier_10MB_used "$IN/ident_ok.tx" --emit=ir -o out.ir
prog ident_dim 'x' "x: f32[$id]" "f32[$id]"
expect_either identifier_10MB_as_dim "$IN/ident_dim.tx" --emit=ir -o out.ir
unset id

# ---- 4. -D, --entry and other options ------------------------------------------
prog dprog 'x * 2.0' 'x: f32[N]' 'f32[N]'
OK_OUT=o.ir expect_ok control_D "$IN/dprog.tx" --emit=ir -o o.ir -D N=7
expect_error D_overflow "$IN/dprog.tx" --emit=ir -D N=99999999999999999999
expect_error D_2p62 "$IN/dprog.tx" --emit=ir -D N=4611686018427387904
expect_error D_int64_max "$IN/dprog.tx" --emit=ir -D N=9223372036854775807
expect_error D_zero "$IN/dprog.tx" --emit=ir -D N=0
expect_error D_negative "$IN/dprog.tx" --emit=ir -D N=-3
expect_error D_garbage "$IN/dprog.tx" --emit=ir -D N=12abc
expect_error D_empty_value "$IN/dprog.tx" --emit=ir -D N=
expect_error D_empty_name "$IN/dprog.tx" --emit=ir -D =4
expect_error D_no_equals "$IN/dprog.tx" --emit=ir -D N
expect_error D_missing_argument "$IN/dprog.tx" --emit=ir -D
expect_error D_contradicts_itself "$IN/dprog.tx" --emit=ir -D N=3 -D N=4
expect_error D_name_too_long "$IN/dprog.tx" --emit=ir -D "$(rep N 100000)=3"
prog dconc 'x + y' 'x: f32[N], y: f32[4]' 'f32[4]'
expect_error D_contradicts_concrete_dim "$IN/dconc.tx" --emit=ir -D N=5
expect_either D_agrees_with_concrete_dim "$IN/dconc.tx" --emit=ir -D N=4
prog dresh 'reshape(x, (2, 3))' 'x: f32[N]' 'f32[2, 3]'
expect_error D_contradicts_reshape "$IN/dresh.tx" --emit=ir -D N=7
prog dret 'x' 'x: f32[N]' 'f32[5]'
expect_error D_contradicts_declared_return "$IN/dret.tx" --emit=ir -D N=4
expect_either D_unknown_name "$IN/dprog.tx" --emit=ir -D Q=3
expect_error entry_unknown "$IN/dprog.tx" --emit=ir --entry nope
expect_error emit_unknown "$IN/dprog.tx" --emit=bogus
expect_error option_unknown "$IN/dprog.tx" --bogus
expect_error gpu_unknown "$IN/dprog.tx" --gpu=nope
expect_error target_unknown "$IN/dprog.tx" --target=sm_1
expect_error sram_budget_overflow "$IN/dprog.tx" --sram-budget=99999999999999999999
expect_error dump_stage_unknown "$IN/dprog.tx" --dump-ir=nope
expect_error two_files "$IN/dprog.tx" "$IN/good.tx"
expect_error no_file --emit=ir

# ---- 5. unwritable outputs ---------------------------------------------------------
OK_OUT=o.ir expect_ok control_o "$IN/good.tx" --emit=ir -o o.ir
EXTRA_PATHS=("$W/afile/out.ir")
expect_error o_under_a_file "$IN/good.tx" --emit=ir -o "$W/afile/out.ir"
EXTRA_PATHS=("$W/nodir")
expect_error o_in_missing_dir "$IN/good.tx" --emit=ir -o "$W/nodir/out.ir"
expect_error o_is_a_directory "$IN/good.tx" --emit=ir -o "$W/adir"
expect_error o_in_proc "$IN/good.tx" --emit=ir -o /proc/version
EXTRA_PATHS=("$W/afile/out.ptx" "$W/afile/out.ptx.json")
expect_error o_ptx_under_a_file "$IN/good.tx" --emit=ptx -o "$W/afile/out.ptx"
EXTRA_PATHS=("$W/afile/r.json")
expect_error o_json_under_a_file "$IN/good.tx" --emit=json -o "$W/afile/r.json"

# ---- 6. .npy inputs through `txc run` ----------------------------------------------
prog run1 'x * 2.0' 'x: f32[N, 3]' 'f32[N, 3]'
npy good "$(hdr '<f4' '(2, 3)')" 24
OK_OUT=out/out0.npy expect_ok control_run_ref run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --output-dir out
run_npy() { # run_npy CASE NPYPATH [extra args]: an error case on program run1
  local name=$1 f=$2
  shift 2
  EXTRA_PATHS=("$W/run/$name/out/out0.npy")
  expect_error "$name" run "$IN/run1.tx" --device=ref --input "x=$f" --output-dir out "$@"
}
run_npy npy_missing "$IN/nope.npy"
run_npy npy_is_directory "$W/adir"
: >"$IN/empty.npy"
run_npy npy_empty "$IN/empty.npy"
printf 'just some text, not an array\n' >"$IN/text.npy"
run_npy npy_text "$IN/text.npy"
head -c 8 "$IN/good.npy" >"$IN/pre8.npy"
run_npy npy_truncated_preamble "$IN/pre8.npy"
head -c 40 "$IN/good.npy" >"$IN/hdr40.npy"
run_npy npy_truncated_header "$IN/hdr40.npy"
head -c 100 "$IN/good.npy" >"$IN/data_short.npy"
run_npy npy_truncated_data "$IN/data_short.npy"
{ cat "$IN/good.npy"; printf 'XXXX'; } >"$IN/data_long.npy"
run_npy npy_extra_data "$IN/data_long.npy"
{ printf '\x93NUMPY\x01\x00\xff\xff'; tail -c +11 "$IN/good.npy"; } >"$IN/hlen_eof.npy"
run_npy npy_header_length_past_eof "$IN/hlen_eof.npy"
{ printf '\x93NUMPY\x02\x00\xff\xff\xff\xff'; tail -c +11 "$IN/good.npy"; } >"$IN/hlen4g.npy"
run_npy npy_v2_header_length_4GiB "$IN/hlen4g.npy"
{ printf '\x93NUMPY\x09\x00'; tail -c +9 "$IN/good.npy"; } >"$IN/version9.npy"
run_npy npy_unknown_version "$IN/version9.npy"
{ printf '\x93NUMPZ'; tail -c +7 "$IN/good.npy"; } >"$IN/magic.npy"
run_npy npy_bad_magic "$IN/magic.npy"
npy lie_large "$(hdr '<f4' '(1000000, 3)')" 24
run_npy npy_shape_larger_than_data "$IN/lie_large.npy"
npy lie_overflow "$(hdr '<f4' '(4294967296, 4294967296, 3)')" 24
run_npy npy_shape_product_overflows "$IN/lie_overflow.npy"
npy lie_2p62 "$(hdr '<f4' '(4611686018427387904, 3)')" 24
run_npy npy_dim_2p62 "$IN/lie_2p62.npy"
npy lie_huge "$(hdr '<f4' '(99999999999999999999999, 3)')" 24
run_npy npy_dim_overflows_int64 "$IN/lie_huge.npy"
npy lie_neg "$(hdr '<f4' '(-2, 3)')" 24
run_npy npy_negative_dim "$IN/lie_neg.npy"
npy rank9 "$(hdr '<f4' '(1, 1, 1, 1, 1, 1, 1, 2, 3)')" 24
run_npy npy_rank_9 "$IN/rank9.npy"
npy f64 "$(hdr '<f8' '(2, 3)')" 48
run_npy npy_dtype_f64 "$IN/f64.npy"
npy bigend "$(hdr '>f4' '(2, 3)')" 24
run_npy npy_big_endian "$IN/bigend.npy"
npy objdt "$(hdr '|O' '(2, 3)')" 48
run_npy npy_object_dtype "$IN/objdt.npy"
npy fortran "$(hdr '<f4' '(2, 3)' True)" 24
run_npy npy_fortran_order "$IN/fortran.npy"
npy nokey "{'descr': '<f4', 'shape': (2, 3), }" 24
run_npy npy_missing_key "$IN/nokey.npy"
npy badsyntax "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), " 24
run_npy npy_unterminated_dict "$IN/badsyntax.npy"
npy i32 "$(hdr '<i4' '(2, 3)')" 24
run_npy npy_i32_for_f32 "$IN/i32.npy"
npy b1 "$(hdr '|b1' '(2, 3)')" 6
run_npy npy_bool_for_f32 "$IN/b1.npy"
npy f16 "$(hdr '<f2' '(2, 3)')" 12
run_npy npy_f16_for_f32 "$IN/f16.npy"
npy rank1 "$(hdr '<f4' '(6,)')" 24
run_npy npy_rank_mismatch "$IN/rank1.npy"
npy dimbad "$(hdr '<f4' '(2, 4)')" 32
run_npy npy_dim_mismatch "$IN/dimbad.npy"
run_npy npy_contradicts_D "$IN/good.npy" -D N=5
if [ -p "$IN/fifo.tx" ]; then run_npy npy_fifo "$IN/fifo.tx"; fi
EXTRA_PATHS=("$W/run/npy_unknown_param/out/out0.npy")
expect_error npy_unknown_param run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --input "y=$IN/good.npy" --output-dir out
expect_error npy_input_not_given run "$IN/run1.tx" --device=ref --output-dir out
expect_error npy_input_malformed_option run "$IN/run1.tx" --device=ref --input x --output-dir out
prog run2 'x + y' 'x: f32[N], y: f32[N]' 'f32[N]'
npy three "$(hdr '<f4' '(3,)')" 12
npy four "$(hdr '<f4' '(4,)')" 16
expect_error npy_inputs_disagree_on_dim run "$IN/run2.tx" --device=ref --input "x=$IN/three.npy" --input "y=$IN/four.npy" --output-dir out
npy bf "$(hdr '<f4' '(2, 3)')" 24
prog runbf 'x * 2.0' 'x: bf16[N, 3]' 'bf16[N, 3]'
OK_OUT=out/out0.npy expect_ok control_run_bf16_from_f4 run "$IN/runbf.tx" --device=ref --input "x=$IN/bf.npy" --output-dir out
expect_error random_inputs_unbound_dim run "$IN/run1.tx" --device=ref --random-inputs=1 --output-dir out
expect_error random_inputs_bad_seed run "$IN/run1.tx" --device=ref --random-inputs=-1 -D N=2
EXTRA_PATHS=("$W/afile/sub")
expect_error output_dir_under_a_file run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --output-dir "$W/afile/sub"
expect_error output_dir_is_a_file run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --output-dir "$W/afile"
mkdir -p "$W/od/out0.npy"
expect_error output_file_is_a_directory run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --output-dir "$W/od"
rm -rf "$W/od"
# Two outputs, the second one unwritable: the first must not stay behind alone.
prog run3 'x * 2.0, x + 1.0' 'x: f32[N, 3]' '(f32[N, 3], f32[N, 3])'
mkdir -p "$W/od2/out1.npy"
EXTRA_PATHS=("$W/od2/out0.npy")
expect_error second_output_unwritable run "$IN/run3.tx" --device=ref --input "x=$IN/good.npy" --output-dir "$W/od2"
rm -rf "$W/od2"

expect_either device_gpu run "$IN/run1.tx" --device=gpu --input "x=$IN/good.npy" --output-dir out
expect_error bench_bad_npy bench "$IN/run1.tx" --device=cpu --input "x=$IN/lie_large.npy" --iters 1
expect_error bench_bad_iters bench "$IN/run1.tx" --device=cpu --input "x=$IN/good.npy" --iters 0

# ---- 6b. output targets and input files that are not plain files (issue 15 B G I L Q) ----
# check NAME CONDITION-TEXT RESULT: a hand-made case; RESULT 0 passes.
check() {
  if [ "$3" = 0 ]; then npass=$((npass + 1)); echo "ok   check $1"
  else nfail=$((nfail + 1)); echo "FAIL check $1: $2"; fi
}
O=$W/outs
mkdir -p "$O"
# -o /dev/null stays a device (rename over it replaced the machine's /dev/null as root).
# As root a device node of our own stands in for /dev/null, so that a broken txc
# cannot destroy the machine's; otherwise /dev/null itself (a rename there fails).
if [ "$(id -u)" = 0 ]; then
  if mknod -m 666 "$O/nulldev" c 1 3 2>/dev/null; then
    (cd "$O" && timeout 20 "$TXC" "$IN/good.tx" -o nulldev 2>"$W/stderr"); rc=$?
    [ -c "$O/nulldev" ] && [ $rc = 0 ] && [ ! -e "$O/nulldev.json" ]; check o_device_node "exit $rc; a device node must stay one, with no manifest beside it" $?
    rm -f "$O/nulldev"
  fi
else
  (cd "$O" && timeout 20 "$TXC" "$IN/good.tx" -o /dev/null 2>"$W/stderr"); rc=$?
  [ -c /dev/null ] && [ $rc = 0 ]; check o_dev_null "exit $rc; -o /dev/null must succeed and /dev/null stay a device" $?
fi
# A FIFO with a reader gets the bytes; one without a reader is an error, not a hang.
mkfifo "$O/ofifo"
(timeout 20 cat "$O/ofifo" >"$O/fifo_got" &)
sleep 0.2
timeout 20 "$TXC" "$IN/good.tx" --emit=ir -o "$O/ofifo" 2>"$W/stderr"; rc=$?
sleep 0.3
[ -p "$O/ofifo" ] && [ $rc = 0 ] && grep -q 'fn\|%' "$O/fifo_got"; check o_fifo_with_reader "exit $rc; the FIFO must stay one and get the IR" $?
timeout 20 "$TXC" "$IN/good.tx" --emit=ir -o "$O/ofifo" 2>"$W/stderr"; rc=$?
[ -p "$O/ofifo" ] && [ $rc = 1 ] && grep -q '^txc: error: .*no reader' "$W/stderr"; check o_fifo_without_reader "exit $rc (want 1 with 'no reader'), no hang" $?
# A symbolic link is followed: the link stays, the file it names gets the output.
echo old >"$O/target.ir"
ln -s target.ir "$O/link.ir"
timeout 20 "$TXC" "$IN/good.tx" --emit=ir -o "$O/link.ir" 2>"$W/stderr"; rc=$?
[ -L "$O/link.ir" ] && [ $rc = 0 ] && ! grep -q '^old$' "$O/target.ir"; check o_symlink_followed "exit $rc; the link must stay a link to the new file" $?
ln -s missing.ir "$O/dangling.ir"
timeout 20 "$TXC" "$IN/good.tx" --emit=ir -o "$O/dangling.ir" 2>"$W/stderr"; rc=$?
[ -L "$O/dangling.ir" ] && [ $rc = 1 ] && [ ! -e "$O/missing.ir" ]; check o_dangling_symlink "exit $rc, want a clear error" $?
# Write errors on stdout are errors (exit 1 with a message), for -o - and for run's summary.
if [ -w /dev/full ]; then
  timeout 20 "$TXC" "$IN/good.tx" --emit=ir -o - >/dev/full 2>"$W/stderr"; rc=$?
  [ $rc = 1 ] && grep -q '^txc: error: .*standard output' "$W/stderr"; check stdout_full_emit "exit $rc, want 1 with a message" $?
  timeout 20 "$TXC" run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" >/dev/full 2>"$W/stderr"; rc=$?
  [ $rc = 1 ] && grep -q '^txc: error: .*standard output' "$W/stderr"; check stdout_full_run "exit $rc, want 1 with a message" $?
fi
# --calib=FIFO and a FIFO or blocking file as the source: errors, no hang.
mkfifo "$O/cfifo"
timeout 20 "$TXC" "$IN/good.tx" --emit=report -o - --calib="$O/cfifo" >/dev/null 2>"$W/stderr"; rc=$?
[ $rc = 1 ] && grep -q '^txc: error: ' "$W/stderr"; check calib_fifo "exit $rc (124: hang), want 1" $?
if [ -e /proc/kmsg ]; then
  timeout 20 "$TXC" /proc/kmsg --emit=ir -o "$O/kmsg.ir" 2>"$W/stderr"; rc=$?
  [ $rc = 1 ] && grep -q '^txc: error: ' "$W/stderr" && [ ! -e "$O/kmsg.ir" ]; check source_proc_kmsg "exit $rc (124: hang), want 1" $?
  timeout 20 "$TXC" run "$IN/run1.tx" --device=ref --input x=/proc/kmsg 2>"$W/stderr" >/dev/null; rc=$?
  [ $rc = 1 ] && grep -q '^txc: error: ' "$W/stderr"; check npy_proc_kmsg "exit $rc (124: hang), want 1" $?
fi
# The .ptx and its manifest are committed together: no .ptx when PATH.json cannot be written.
mkdir -p "$O/m/out.ptx.json"
timeout 20 "$TXC" "$IN/good.tx" -o "$O/m/out.ptx" 2>"$W/stderr"; rc=$?
[ $rc = 1 ] && [ ! -e "$O/m/out.ptx" ] && [ -z "$(find "$O/m" -name '*.tmp*')" ]; check ptx_without_manifest "exit $rc; the .ptx must not stay without its manifest" $?
# Two programs compiled concurrently to one path, many times: the .ptx and the
# manifest left at the end always belong to the same program.
printf 'fn alpha(x: f32[N]) -> f32[N] {\n  return x * 2.0\n}\n' >"$IN/alpha.tx"
printf 'fn beta(x: f32[N]) -> f32[N] {\n  return exp(x) + 1.0\n}\n' >"$IN/beta.tx"
mixed=0
for r in 1 2 3 4 5 6; do
  timeout 20 "$TXC" "$IN/alpha.tx" -o "$O/same.ptx" 2>/dev/null &
  timeout 20 "$TXC" "$IN/beta.tx" -o "$O/same.ptx" 2>/dev/null &
  wait
  for fn in alpha beta; do
    if grep -q "\.entry ${fn}_" "$O/same.ptx" && ! grep -q "\"${fn}_" "$O/same.ptx.json"; then mixed=$((mixed + 1)); fi
  done
done
[ $mixed = 0 ] && [ -s "$O/same.ptx.json" ]; check concurrent_ptx_and_manifest "$mixed of 6 rounds left a .ptx beside another program's manifest" $?
# The same for run outputs: two runs of different programs to one --output-dir.
prog runa 'x * 2.0, x * 3.0' 'x: f32[N, 3]' '(f32[N, 3], f32[N, 3])'
prog runb 'x + 100.0, x + 200.0' 'x: f32[N, 3]' '(f32[N, 3], f32[N, 3])'
mixed=0
for r in 1 2 3 4; do
  timeout 20 "$TXC" run "$IN/runa.tx" --device=ref --input "x=$IN/good.npy" --output-dir "$O/od" 2>/dev/null &
  timeout 20 "$TXC" run "$IN/runb.tx" --device=ref --input "x=$IN/good.npy" --output-dir "$O/od" 2>/dev/null &
  wait
  a=$(tail -c 4 "$O/od/out0.npy" | od -An -tx1) b=$(tail -c 4 "$O/od/out1.npy" | od -An -tx1)
  # program a writes 0 and 0, program b writes 100 and 200: equal last floats mean program a
  if [ "$a" = "$b" ] && [ "$a" != "$(printf '\0\0\0\0' | od -An -tx1)" ]; then mixed=$((mixed + 1)); fi
  if [ "$a" != "$b" ] && [ "$a" = "$(printf '\0\0\0\0' | od -An -tx1)" ]; then mixed=$((mixed + 1)); fi
done
[ $mixed = 0 ]; check concurrent_run_outputs "$mixed of 4 rounds mixed the outputs of two runs" $?

# ---- 6c. sizes, plans and options (issue 15 A C E H R) --------------------------------
# A: a slice of a symbolic dim past the runtime size is an error on every device (the
# compiled code read past the input's buffer).
printf 'fn f(x: f32[N, 8]) -> f32[10000000, 8] {\n  return slice(x, axis=0, start=0, stop=10000000)\n}\n' >"$IN/slice_past.tx"
npy x38 "$(hdr '<f4' '(3, 8)')" 96
for dev in cpu ref; do
  expect_error "slice_past_runtime_dim_$dev" run "$IN/slice_past.tx" --device=$dev --input "x=$IN/x38.npy"
done
printf 'fn f(x: f32[N]) -> f32[4] {\n  return reshape(x, (4,)) * 2.0\n}\n' >"$IN/reshape_bound.tx"
npy x3 "$(hdr '<f4' '(3,)')" 12
expect_error reshape_count_at_run_time run "$IN/reshape_bound.tx" --device=cpu --input "x=$IN/x3.npy"
# C: 14000 chained statements compile (codegen's recursion is bounded by the region size).
{ printf 'fn f(x: f32[N]) -> f32[N] {\n'; for ((k = 0; k < 14000; k++)); do printf '  x = x * x - 0.5\n'; done; printf '  return x\n}\n'; } >"$IN/chain14k.tx"
OK_OUT=o.ll expect_ok chain_of_14000_statements_codegen "$IN/chain14k.tx" --emit=llvm --target=host -o o.ll
# E: 17 softmaxes in a row (34 reductions) are planned within codegen's 32 per region.
{ printf 'fn f(x: f32[N, 64]) -> f32[N, 64] {\n'; for ((k = 0; k < 17; k++)); do printf '  x = softmax(x, axis=-1)\n'; done; printf '  return x\n}\n'; } >"$IN/softmax17.tx"
OK_OUT=o.ptx expect_ok softmax_17_in_a_row "$IN/softmax17.tx" -o o.ptx
# H: 13 nested helpers h(sin(x)) + h(cos(x)): 2^13 distinct inlined copies; a clear error
# or a result within the time limit, not minutes and gigabytes.
{ printf 'fn h0(x) { return x }\n'; for ((k = 1; k <= 13; k++)); do printf 'fn h%d(x) { return h%d(sin(x)) + h%d(cos(x)) }\n' $k $((k - 1)) $((k - 1)); done
  printf 'fn f(x: f32[N]) -> f32[N] {\n  return h13(x)\n}\n'; } >"$IN/nested13.tx"
expect_either nested_helpers_13 "$IN/nested13.tx" -o o.ptx
# A chain of 3000 concatenations of slices: 2^3000 paths through the views; every walk
# over them enters each view once.
{ printf 'fn f(x: f32[N, 8]) -> f32[N, 8] {\n  x = exp(x)\n'; for ((k = 0; k < 3000; k++)); do printf '  x = concat((slice(x, axis=1, start=0, stop=1), slice(x, axis=1, start=1, stop=8)), axis=1)\n'; done; printf '  return x\n}\n'; } >"$IN/concat_chain.tx"
OK_OUT=o.ir expect_ok concat_chain_3000_ir "$IN/concat_chain.tx" --emit=ir -o o.ir
# F: a region whose kernel would take more parameters than the 4352 bytes of PTX parameter
# space (545 f32[N] inputs summed) is split by the planner (rule region.params, named by
# --explain), so the program compiles to PTX that ptxas accepts, and runs right on the CPU.
{ printf 'fn f('; for ((k = 0; k < 545; k++)); do printf '%sx%d: f32[N]' "$([ $k -gt 0 ] && echo ', ')" $k; done
  printf ') -> f32[N] {\n  s = x0\n'; for ((k = 1; k < 545; k++)); do printf '  s = s + x%d\n' $k; done
  printf '  return s\n}\n'; } >"$IN/params545.tx"
OK_OUT=o.ptx expect_ok params_545_ptx "$IN/params545.tx" -o o.ptx
if command -v ptxas >/dev/null 2>&1; then
  ptxas -arch=sm_90a "$W/run/params_545_ptx/o.ptx" -o /dev/null 2>"$W/stderr"
  check params_545_ptxas "ptxas rejects the PTX: $(head -c 200 "$W/stderr")" $?
fi
timeout 60 "$TXC" "$IN/params545.tx" --explain -o /dev/null >"$W/stdout" 2>&1; rc=$?
[ $rc = 0 ] && grep -q 'kept apart \[region.params\]' "$W/stdout"; check params_545_explained "exit $rc; --explain must name region.params" $?
OK_OUT=o.ll expect_ok params_545_host "$IN/params545.tx" --target=host --emit=llvm -o o.ll
timeout 60 "$TXC" bench "$IN/params545.tx" --device=cpu --random-inputs=2 -D N=33 --iters 1 >"$W/stdout" 2>"$W/stderr"; rc=$?
[ $rc = 0 ] && grep -q ': verified, reference ref' "$W/stdout"; check params_545_runs_right_cpu "exit $rc; $(head -c 200 "$W/stdout")" $?
# A concatenation of 300 columns (row E/F's sibling in the views): the planner kept a view's
# sources in 256 entries, so the 257th had no buffer ("codegen: internal error", every device).
# It compiles, assembles and verifies now; one of more than 1024 distinct tensors is one clear
# error line (no value may be made of more, nor can one kernel address them).
{ printf 'fn f(x: f32[N]) -> f32[N, 300] {\n  return concat(('
  for ((k = 1; k <= 300; k++)); do printf '%sreshape(x * %d.0, (N, 1))' "$([ $k -gt 1 ] && echo ', ')" $k; done
  printf '), axis=1)\n}\n'; } >"$IN/concat300.tx"
OK_OUT=o.ptx expect_ok concat_300_sources_ptx "$IN/concat300.tx" -o o.ptx
timeout 60 "$TXC" bench "$IN/concat300.tx" --device=cpu --random-inputs=2 -D N=5 --iters 1 >"$W/stdout" 2>"$W/stderr"; rc=$?
[ $rc = 0 ] && grep -q ': verified, reference ref' "$W/stdout"; check concat_300_sources_runs_right_cpu "exit $rc; $(head -c 200 "$W/stdout" "$W/stderr")" $?
{ printf 'fn f(x: f32[N]) -> f32[N, 1100] {\n  return concat(('
  for ((k = 1; k <= 1100; k++)); do printf '%sreshape(x * %d.0, (N, 1))' "$([ $k -gt 1 ] && echo ', ')" $k; done
  printf '), axis=1)\n}\n'; } >"$IN/concat1100.tx"
expect_error concat_1100_sources "$IN/concat1100.tx" -o o.ptx
grep -q 'error: this concatenation reads 1100 separate tensors' "$W/stderr"; check concat_1100_sources_message "$(head -c 200 "$W/stderr")" $?
# D: f32 reductions on the host JIT are accurate: 10^7 x 0.1 sums to 1e6 (1087937 with an f32
# accumulator); layernorm of rows near 1e4 verifies against the reference.
printf 'fn f(x: f32[N]) -> f32[] {\n  return sum(x * 0.0 + 0.1)\n}\n' >"$IN/sum_tenth.tx"
timeout 60 "$TXC" run "$IN/sum_tenth.tx" --device=cpu --random-inputs=1 -D N=10000000 >"$W/stdout" 2>"$W/stderr"; rc=$?
[ $rc = 0 ] && grep -q '^out0: f32\[\] = 1e+06$' "$W/stdout"; check sum_of_1e7_tenths_cpu "exit $rc; got $(head -c 80 "$W/stdout")" $?
printf 'fn f(x: f32[R, N], w: f32[N], b: f32[N]) -> f32[R, N] {\n  return layernorm(x + 10000.0, w, b)\n}\n' >"$IN/ln_1e4.tx"
timeout 60 "$TXC" bench "$IN/ln_1e4.tx" --device=cpu --random-inputs=1 -D R=4 -D N=100000 --iters 1 >"$W/stdout" 2>"$W/stderr"; rc=$?
[ $rc = 0 ] && grep -q ': verified, reference ref' "$W/stdout"; check layernorm_rows_near_1e4_cpu "exit $rc; $(head -c 200 "$W/stdout")" $?
# R: options that were ignored or misleading either work or are errors.
OK_OUT= expect_ok gpu_help "$IN/good.tx" --gpu=help
cp "$IN/good.tx" "$W/-dash.tx"
(cd "$W" && timeout 20 "$TXC" --emit=ir -o "$O.dash.ir" -- -dash.tx 2>"$W/stderr"); rc=$?
[ $rc = 0 ] && [ -s "$O.dash.ir" ]; check double_dash_ends_options "exit $rc; a file after -- may start with '-'" $?
rm -f "$O.dash.ir" "$W/-dash.tx"
OK_OUT=one.npy expect_ok run_o_one_output run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" -o one.npy
expect_error run_o_two_outputs run "$IN/run3.tx" --device=ref --input "x=$IN/good.npy" -o two.npy
expect_error run_o_and_output_dir run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" -o one.npy --output-dir out
timeout 20 "$TXC" run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --json >"$W/stdout" 2>"$W/stderr"; rc=$?
[ $rc = 0 ] && grep -q '^{"outputs": \[{"name": "out0", "dtype": "f32", "shape": \[2, 3\]' "$W/stdout"; check run_json "exit $rc; run --json must print JSON" $?
expect_error input_twice run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --input "x=$IN/good.npy"
expect_error calibrate_on_cpu bench "$IN/run1.tx" --device=cpu --input "x=$IN/good.npy" --calibrate
expect_error compare_unfused_on_cpu bench "$IN/run1.tx" --device=cpu --input "x=$IN/good.npy" --compare-unfused
expect_error bench_o bench "$IN/run1.tx" --device=cpu --input "x=$IN/good.npy" -o r.txt
expect_error compile_with_input "$IN/run1.tx" --input "x=$IN/good.npy"
expect_error compile_with_iters "$IN/run1.tx" --iters 3
expect_error run_with_emit run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --emit=ir
expect_error run_with_iters run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --iters 3
expect_error run_with_timing_budget run "$IN/run1.tx" --device=ref --input "x=$IN/good.npy" --timing-budget=1
expect_error compile_with_timing_budget "$IN/run1.tx" --timing-budget=1
expect_error timing_budget_on_cpu bench "$IN/run1.tx" --device=cpu --input "x=$IN/good.npy" --timing-budget=1
expect_error timing_budget_negative bench "$IN/run1.tx" --input "x=$IN/good.npy" --timing-budget=-1
expect_error timing_budget_garbage bench "$IN/run1.tx" --input "x=$IN/good.npy" --timing-budget=1s
timeout 60 "$TXC" bench "$IN/run1.tx" --device=cpu --input "x=$IN/good.npy" --iters 7 >"$W/stdout" 2>"$W/stderr"; rc=$?
[ $rc = 0 ] && grep -q 'median of 7)' "$W/stdout"; check bench_cpu_iters_honoured "exit $rc; --iters 7 on the CPU must run 7" $?
rm -rf "$O"

# ---- 6d. memory before a run (issue 15 J M P) ---------------------------------------------
# J: sizes that do not fit are refused before anything is allocated, at once, with one line
# giving the bytes needed and available: on every device, for run and bench.
printf 'fn f(x: f32[N], y: f32[N]) -> f32[N] {\n  return relu(x + y)\n}\n' >"$IN/add_relu.tx"
memline='needs [0-9]+ bytes \([0-9.]+ [KMGTPE]?B\) of (host|GPU) memory.*; [0-9]+ bytes \([0-9.]+ [KMGTPE]?B\) are (available|free)'
mem_case() { # NAME WANT(host|GPU) ARGS...: an error within 10 s naming the bytes
  local name=$1 want=$2 t0 t1
  shift 2
  t0=$(date +%s)
  expect_error "$name" "$@"
  t1=$(date +%s)
  grep -qE "$memline" "$W/stderr" && grep -q "of $want memory" "$W/stderr" && [ $((t1 - t0)) -lt 10 ]
  check "${name}_message" "$((t1 - t0)) s: $(head -c 300 "$W/stderr")" $?
}
for dev in cpu ref gpu; do
  mem_case "mem_run_6e10_$dev" host run "$IN/add_relu.tx" -D N=60000000000 --device=$dev --random-inputs=1
done
mem_case mem_bench_6e10_cpu host bench "$IN/add_relu.tx" -D N=60000000000 --device=cpu --random-inputs=1
mem_case mem_bench_6e10_gpu host bench "$IN/add_relu.tx" -D N=60000000000 --device=gpu --random-inputs=1
# Intermediates: a 10^6 x 10^6 outer product (4 TB) summed back to 10^6 values; the inputs
# are small. The interpreter and the unfused host JIT refuse it by the bytes.
printf 'fn f(x: f32[M], y: f32[N]) -> f32[M] {\n  return sum(reshape(x, (M, 1)) * reshape(y, (1, N)), axis=1)\n}\n' >"$IN/outer.tx"
mem_case mem_intermediate_ref host run "$IN/outer.tx" -D M=1000000 -D N=1000000 --device=ref --random-inputs=1
mem_case mem_intermediate_cpu_unfused host run "$IN/outer.tx" --no-fuse -D M=1000000 -D N=1000000 --device=cpu --random-inputs=1
# The GPU's free memory (cuMemGetInfo), through the fake driver of the unit tests: the plan's
# buffers (inputs, outputs, intermediates) against 1 MB free.
FAKE=$(dirname "$TXC")/runtime/libtx_fake_cuda.so
if [ -f "$FAKE" ]; then
  export TX_CUDA_LIB=$FAKE FAKE_CUDA_MEM_BYTES=1000000
  mem_case mem_gpu_plan_fake GPU run "$IN/add_relu.tx" -D N=1000000 --device=gpu --random-inputs=1
  mem_case mem_gpu_temps_fake GPU run "$IN/outer.tx" --no-fuse -D M=1000 -D N=1000 --device=gpu --random-inputs=1
  # before the inputs are made: 1.2 GB of inputs and outputs against the device's free memory
  if [ "$(awk '/MemAvailable/{print int($2/1048576)}' /proc/meminfo 2>/dev/null || echo 0)" -ge 3 ]; then
    mem_case mem_gpu_inputs_fake GPU run "$IN/add_relu.tx" -D N=100000000 --device=gpu --random-inputs=1
  fi
  unset FAKE_CUDA_MEM_BYTES
  # bench --svg writes like every output (siblings of B, G and L): a symbolic link stays one, a
  # path under a regular file is one error line with nothing left behind, a FIFO without a
  # reader is an error, not a hang. (The fake runs no
  # kernel, so bench itself fails verification after drawing: exit 1 either way.)
  SV=$W/svg
  mkdir -p "$SV"
  echo old >"$SV/svg_target.svg"
  ln -s svg_target.svg "$SV/svg_link.svg"
  timeout 20 "$TXC" bench "$IN/add_relu.tx" -D N=1000 --device=gpu --random-inputs=1 --iters 2 \
    --svg "$SV/svg_link.svg" >/dev/null 2>"$W/stderr"
  [ -L "$SV/svg_link.svg" ] && grep -q '<svg' "$SV/svg_target.svg"; check bench_svg_symlink_followed "the link must stay a link to the new picture" $?
  timeout 20 "$TXC" bench "$IN/add_relu.tx" -D N=1000 --device=gpu --random-inputs=1 --iters 2 \
    --svg "$SV/svg_target.svg/x.svg" >/dev/null 2>"$W/stderr"; rc=$?
  [ $rc = 1 ] && grep -q '^txc: error: --svg' "$W/stderr" && ! ls "$SV"/*.tmp* >/dev/null 2>&1; check bench_svg_unwritable "exit $rc: $(head -c 200 "$W/stderr")" $?
  # a FIFO without a reader: fopen(3) blocked forever; now one error line
  mkfifo "$SV/svg_fifo"
  timeout 20 "$TXC" bench "$IN/add_relu.tx" -D N=1000 --device=gpu --random-inputs=1 --iters 2 \
    --svg "$SV/svg_fifo" >/dev/null 2>"$W/stderr"; rc=$?
  [ $rc = 1 ] && [ -p "$SV/svg_fifo" ] && grep -q 'no reader' "$W/stderr"; check bench_svg_fifo_without_reader "exit $rc (124: hung): $(head -c 200 "$W/stderr")" $?
  unset TX_CUDA_LIB
else
  echo "skip mem_gpu_*_fake: no fake CUDA driver at $FAKE"
fi
# A .npy whose data would not fit in memory is refused by the bytes (a sparse file of 2^40
# bytes where the filesystem allows it).
npy hugenpy "$(hdr '<f4' '(274877906944,)')" 0
if truncate -s 1099511627904 "$IN/hugenpy.npy" 2>/dev/null; then
  mem_case mem_npy_data host run "$IN/add_relu.tx" --device=ref --input "x=$IN/hugenpy.npy" --input "y=$IN/hugenpy.npy"
fi
rm -f "$IN/hugenpy.npy"
# M: --no-fuse shares the buffers of dead intermediates: a 100-op chain at N = 2*10^6 peaks
# within 300 MB of the same chain at N = 1000 (one buffer per op would be 800 MB more).
{ printf 'fn f(x: f32[N]) -> f32[N] {\n'; for ((k = 0; k < 50; k++)); do printf '  x = x * 0.999 + 0.001\n'; done; printf '  return x\n}\n'; } >"$IN/chain100.tx"
peak_kb() { python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r == 0 else -1)' "$@"; }
if command -v python3 >/dev/null 2>&1; then
  small=$(peak_kb timeout 120 "$TXC" run "$IN/chain100.tx" --no-fuse -D N=1000 --device=cpu --random-inputs=1)
  big=$(peak_kb timeout 120 "$TXC" run "$IN/chain100.tx" --no-fuse -D N=2000000 --device=cpu --random-inputs=1)
  [ "$small" -gt 0 ] && [ "$big" -gt 0 ] && [ $((big - small)) -lt 300000 ]
  check no_fuse_chain_shares_buffers "peak RSS $small KB at N=1000, $big KB at N=2e6 (run failed: -1)" $?
fi

# ---- 6e. the same classes in code added since the fuzzing rounds ------------------------
# Attention's block-sparsity walks recursed into every operand of the mask: i = i + i forty
# times is a DAG of 2^40 paths (hang). Bounded now; the kernel visits every key tile instead.
{ printf 'fn f(q: f32[B, H, S, 64], k: f32[B, H, S, 64], v: f32[B, H, S, 64]) -> f32[B, H, S, 64] {\n  s = q @ transpose(k, -1, -2)\n  i = iota((S, S), axis=0)\n'
  for ((k = 0; k < 40; k++)); do printf '  i = i + i\n'; done
  printf '  keep = i >= iota((S, S), axis=1)\n  return softmax(where(keep, s, -inf), axis=-1) @ v\n}\n'; } >"$IN/attn_mask_dag.tx"
OK_OUT=o.ptx expect_ok attention_mask_dag_40 "$IN/attn_mask_dag.tx" -D B=1 -D H=2 -D S=64 -o o.ptx

# ---- 7. reproducers of earlier findings (tests/hostile/*.tx) -----------------------
for f in "$ROOT"/tests/hostile/*.tx; do
  [ -f "$f" ] || continue
  expect_either "repro_$(basename "$f" .tx)" "$f" --emit=ptx -o out.ptx
done

echo "hostile: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
