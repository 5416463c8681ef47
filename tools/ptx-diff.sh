#!/usr/bin/env bash
# ptx-diff.sh - snapshot the code tx generates for a fixed set of programs, and compare a build
# against a snapshot: the guard of codegen refactors that must not change any kernel.
#
#   tools/ptx-diff.sh save DIR     compile every program into DIR (PTX + manifest at sm_80 and
#                                  sm_90, host LLVM IR), with the txc of the current build
#   tools/ptx-diff.sh check DIR    compile again into a scratch folder and diff against DIR;
#                                  exit 0 when every file is byte-identical, 1 otherwise
#
# Programs: ../shared/bench/suite/*.tx, examples/*.tx, tests/numerics/*.tx, tests/plan/*.tx,
# tests/ptx/*.tx (programs that reach the f16 and f32 matmul and attention paths) and
# the matmul/attention fuzz seeds, each with its symbols unbound and, when the file has a
# `# bench: -D ...` or `# main job: -D ...` line, with those sizes bound too (the tensor-core
# attention path needs known head dims). A program txc refuses is recorded by its error text, so
# a change in what is accepted shows up as well. For host .ll files that differ, check also says
# whether they differ only in value and block names (compared after `opt -passes=strip`).
# TXC=path overrides the compiler (default: build/txc); JOBS=n (default 2).
set -u
cd "$(dirname "$0")/.."
mode=${1:-}
dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ] || { [ "$mode" != save ] && [ "$mode" != check ]; }; then
    echo "usage: tools/ptx-diff.sh save|check DIR" >&2
    exit 2
fi
txc=${TXC:-}
if [ -z "$txc" ]; then
    txc=build/txc
fi
[ -x "$txc" ] || { echo "ptx-diff: no compiler at $txc (build first or set TXC)" >&2; exit 2; }
txc=$(realpath "$txc")

# One job per line: NAME FILE [-D ...]
jobs_list() {
    local f base sizes
    for f in ../shared/bench/suite/*.tx examples/*.tx tests/numerics/*.tx tests/plan/*.tx tests/ptx/*.tx \
        tests/fuzz/seeds/tx/s04_matmul.tx tests/fuzz/seeds/tx/s07_attention.tx; do
        [ -f "$f" ] || continue
        base=$(echo "$f" | sed 's|^\.\./shared/bench/||; s|/|_|g; s|\.tx$||')
        echo "$base $f"
        sizes=$(sed -n 's/^# *\(bench\|main job\): *\(-D.*\)$/\2/p' "$f" | head -1)
        [ -n "$sizes" ] && echo "$base.D $f $sizes"
    done
}

# Compiles one job into folder $1: NAME.sm_80.ptx (+ .json), NAME.sm_90.ptx, NAME.host.ll;
# a refused compile leaves NAME.TARGET.err with the message instead.
compile_one() {
    local out=$1 name=$2 file=$3
    shift 3
    local t
    for t in sm_80 sm_90; do
        "$txc" "$file" "$@" --target=$t -o "$out/$name.$t.ptx" 2>"$out/$name.$t.err" ||
            continue
        rm -f "$out/$name.$t.err"
    done
    if "$txc" "$file" "$@" --emit=llvm --target=host -o "$out/$name.host.ll" 2>"$out/$name.host.err"
    then rm -f "$out/$name.host.err"; fi
}
export -f compile_one
export txc

generate() {
    mkdir -p "$1"
    jobs_list | xargs -P "${JOBS:-2}" -L 1 bash -c 'compile_one "$0" "$@"' "$1"
}

if [ "$mode" = save ]; then
    rm -rf "$dir"
    generate "$dir"
    echo "ptx-diff: saved $(ls "$dir" | wc -l) files in $dir"
    exit 0
fi

[ -d "$dir" ] || { echo "ptx-diff: no snapshot $dir (run save first)" >&2; exit 2; }
new=$(mktemp -d)
trap 'rm -rf "$new"' EXIT
generate "$new"
status=0
opt=$(command -v opt-19 || command -v /usr/lib/llvm-19/bin/opt || true)
only=$(comm -3 <(cd "$dir" && ls | sort) <(cd "$new" && ls | sort))
if [ -n "$only" ]; then
    status=1
    comm -23 <(cd "$dir" && ls | sort) <(cd "$new" && ls | sort) | sed 's/^/missing now: /'
    comm -13 <(cd "$dir" && ls | sort) <(cd "$new" && ls | sort) | sed 's/^/new file:    /'
fi
for f in $(cd "$dir" && ls); do
    [ -e "$new/$f" ] || continue
    cmp -s "$dir/$f" "$new/$f" && continue
    status=1
    note=""
    case "$f" in
    *.ll)
        if [ -n "$opt" ] && "$opt" -S -passes=strip "$dir/$f" -o "$new/.a" 2>/dev/null &&
            "$opt" -S -passes=strip "$new/$f" -o "$new/.b" 2>/dev/null &&
            cmp -s <(grep -v '^; ModuleID' "$new/.a") <(grep -v '^; ModuleID' "$new/.b")
        then note=" (value/block names only)"; fi ;;
    esac
    echo "differs:     $f$note ($(diff "$dir/$f" "$new/$f" | grep -c '^[<>]') lines)"
done
n=$(ls "$dir" | wc -l)
if [ $status -eq 0 ]; then echo "ptx-diff: all $n files identical"; else echo "ptx-diff: differences (diff -r $dir <new>)"; fi
exit $status
