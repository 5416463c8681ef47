/* fuzz_frontend.c - libFuzzer target 1: the frontend alone (fe_compile:
 * byte checks, scanner, parser, sema, inlining of the prelude). The checks
 * are in fuzz_one.h. Run with tools/fuzz.sh frontend. */
#define FUZZ_WITH_CODEGEN 0
#include "tests/fuzz/fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *bad = fuzz_frontend_one(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_frontend: contract broken: %s\n", bad);
        abort();
    }
    return 0;
}
