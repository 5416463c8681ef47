/* fuzz_compile.c - libFuzzer target 2: the whole compile: frontend, the
 * pass pipeline, the three reports, LLVM IR and PTX through NVPTX. Slow per
 * input (LLVM): run with -max_len=4096 and a per-input timeout
 * (tools/fuzz.sh compile does). The checks are in fuzz_one.h. */
#include "tests/fuzz/fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *bad = fuzz_compile_one(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_compile: contract broken: %s\n", bad);
        abort();
    }
    return 0;
}
