#!/usr/bin/env bash
# layers.sh TXC ROOT - the dependency rule between floors (docs/architecture.md):
#   ir/ on nothing; frontend/ and passes/ on ir/; codegen/ on ir/ and passes/
#   (and LLVM); runtime/ on ir/ only (no LLVM); driver/ on all of them;
#   tools/ on the driver; include/ (the public headers) and examples/ on
#   nothing of the tree but include/.
# Part 1 greps every source's #include "..." lines (and LLVM's <llvm-c/...>)
# per folder against that rule. Part 2 runs nm -u on the built libraries: the
# runtime library must not need LLVM, fe_, pass_, cg_ or drv_ symbols, codegen
# no rt_ or drv_ ones, and no floor below the driver a drv_ one.
TXC=$1
ROOT=$2
cd "$ROOT" || exit 1
fail=0

# allowed FOLDER: the folders its files may include from ("local" = its own).
allowed() {
    case $1 in
    ir) echo "ir" ;;
    frontend) echo "frontend ir" ;;
    passes) echo "passes ir" ;;
    codegen) echo "codegen ir passes llvm" ;;
    runtime) echo "runtime ir include" ;;
    driver) echo "driver ir frontend passes codegen runtime include" ;;
    tools) echo "tools driver include" ;;
    include) echo "include" ;;
    examples) echo "include" ;;
    esac
}

# The floor an include names: its first path component, "include" for the
# public headers, "llvm" for LLVM's C API, the including folder for a bare name.
floor_of() {
    local inc=$1 self=$2
    case $inc in
    llvm-c/* | llvm/*) echo llvm ;;
    tx.h | tx_rt.h) echo include ;;
    */*) echo "${inc%%/*}" ;;
    *) echo "$self" ;;
    esac
}

for dir in ir frontend passes codegen runtime driver tools include examples; do
    [ -d "$dir" ] || continue
    ok_set=" $(allowed "$dir") "
    while IFS= read -r f; do
        while IFS= read -r inc; do
            fl=$(floor_of "$inc" "$dir")
            [ "$fl" = "$dir" ] && continue
            case $ok_set in
            *" $fl "*) ;;
            *) echo "FAIL: $f includes \"$inc\" ($dir/ may use only: $(allowed "$dir"))"; fail=1 ;;
            esac
        done < <(sed -nE -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' \
                         -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<((llvm-c|llvm)\/[^>]+)>.*/\1/p' "$f")
    done < <(find "$dir" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' -o -name '*.y' -o -name '*.l' \) | sort)
done
[ $fail -eq 0 ] && echo "ok: every #include follows the dependency rule"

# Part 2: the built libraries' undefined symbols.
build=$(cd "$(dirname "$TXC")" 2>/dev/null && pwd)
if [ -z "$TXC" ] || [ ! -f "$build/runtime/libtx_runtime.a" ] || ! command -v nm > /dev/null; then
    echo "skipped part 2: no built libraries beside '$TXC' (or no nm)"
    [ $fail -eq 0 ] && exit 77
    exit $fail
fi
check_nm() { # LIB REGEX WHAT
    local bad
    bad=$(nm -u "$build/$1" 2>/dev/null | awk '$1 == "U" {print $2}' | grep -E "$2" | sort -u)
    if [ -n "$bad" ]; then
        echo "FAIL: $1 needs $3:"
        echo "$bad" | head -20 | sed 's/^/  /'
        fail=1
    else
        echo "ok: $1 needs no $3"
    fi
}
check_nm runtime/libtx_runtime.a '^(LLVM|llvm|_ZN4llvm|fe_|pass_|cg_|drv_)' "LLVM, fe_, pass_, cg_ or drv_ symbols"
check_nm codegen/libtx_codegen.a '^(rt_|drv_|fe_)' "rt_, drv_ or fe_ symbols"
check_nm passes/libtx_passes.a '^(rt_|drv_|fe_|cg_|LLVM)' "rt_, drv_, fe_, cg_ or LLVM symbols"
check_nm frontend/libtx_frontend.a '^(rt_|drv_|pass_|cg_|LLVM)' "rt_, drv_, pass_, cg_ or LLVM symbols"
check_nm ir/libtx_ir.a '^(rt_|drv_|fe_|pass_|cg_|LLVM)' "symbols of a floor above ir/"

# The public runtime library (include/tx_rt.h) and its demo load no LLVM and no compiler.
rtlib=$build/runtime/libtx_rt.so
demo=$build/runtime/tx_load_demo
if [ -f "$rtlib" ] && [ -f "$demo" ]; then
    check_nm runtime/libtx_rt.so '^(LLVM|llvm|_ZN4llvm|fe_|pass_|cg_|drv_)' "LLVM, fe_, pass_, cg_ or drv_ symbols"
    if nm -D --defined-only "$rtlib" | grep -qE ' T (fe_|pass_|cg_|drv_|LLVM)'; then
        echo "FAIL: libtx_rt.so holds compiler code"; fail=1
    fi
    if nm -D --defined-only "$rtlib" | grep -q ' T tx_load_kernels$'; then
        echo "ok: libtx_rt.so exports tx_load_kernels"
    else
        echo "FAIL: libtx_rt.so does not export tx_load_kernels"; fail=1
    fi
    for f in "$rtlib" "$demo"; do
        if ! command -v ldd > /dev/null; then break; fi
        if ldd "$f" | grep -qiE 'libLLVM|libclang'; then
            echo "FAIL: $(basename "$f") links LLVM:"; ldd "$f" | grep -iE 'libLLVM|libclang'; fail=1
        else
            echo "ok: $(basename "$f") links no LLVM ($(ldd "$f" | awk '{print $1}' | grep -c .) libraries)"
        fi
    done
    check_nm runtime/tx_load_demo '^(LLVM|llvm|_ZN4llvm|fe_|pass_|cg_|drv_|rt_)' "LLVM or internal symbols"
else
    echo "FAIL: $rtlib or $demo was not built"; fail=1
fi
exit $fail
