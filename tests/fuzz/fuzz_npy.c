/* fuzz_npy.c - libFuzzer target 3: the .npy reader, in memory
 * (rt_npy_parse) and on disk (rt_npy_read), plus a write/read round trip of
 * every accepted file. The checks are in fuzz_one.h. Run with
 * tools/fuzz.sh npy. */
#define FUZZ_WITH_CODEGEN 0
#include "tests/fuzz/fuzz_one.h"

#include <limits.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scratch directory of this process, made once by LLVMFuzzerInitialize
 * and removed at exit (libFuzzer gives the target no context argument). */
static char scratch[PATH_MAX];

static void remove_scratch(void) {
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/in.npy", scratch), unlink(p);
    snprintf(p, sizeof p, "%s/out.npy", scratch), unlink(p);
    rmdir(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/fuzz_npy.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("fuzz_npy: mkdtemp");
        exit(1);
    }
    atexit(remove_scratch);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *bad = fuzz_npy_one(data, size, scratch);
    if (bad) {
        fprintf(stderr, "fuzz_npy: contract broken: %s\n", bad);
        abort();
    }
    return 0;
}
