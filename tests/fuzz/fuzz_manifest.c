/* fuzz_manifest.c - libFuzzer target 4: the manifest reader of libtx_rt
 * (rt_manifest_parse) and the launch plan it builds (rt_manifest_plan), on
 * any bytes. The checks are in fuzz_one.h. Run with tools/fuzz.sh manifest. */
#define FUZZ_WITH_CODEGEN 0
#include "tests/fuzz/fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *bad = fuzz_manifest_one(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_manifest: contract broken: %s\n", bad);
        abort();
    }
    return 0;
}
