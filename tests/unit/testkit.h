/* testkit.h - helpers shared by the cmocka unit tests (not a test itself). */
#ifndef TX_TESTKIT_H
#define TX_TESTKIT_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir.h"

/* Diagnostics captured in memory: cap_open routes a tx_diag for `file`
 * (source `src`, len bytes) to a buffer that cap_text returns. */
typedef struct cap {
    char *buf;
    size_t len;
    FILE *f;
    tx_diag d;
} cap;

static inline void cap_open(cap *c, const char *file, const char *src, size_t len) {
    c->buf = NULL;
    c->f = open_memstream(&c->buf, &c->len);
    tx_diag_init(&c->d, c->f, file, src, len);
}
static inline const char *cap_text(cap *c) {
    fflush(c->f);
    return c->buf ? c->buf : "";
}
static inline void cap_close(cap *c) {
    fclose(c->f);
    free(c->buf);
}

/* Host JIT against the interpreter, per element: NaN only matches NaN, an infinity only itself,
 * else |a - b| <= tol (1 + |b|) with tol 1e-4 (f32), 1e-2 (f16), 3e-2 (bf16), 0 (i32, bool). */
static inline bool tk_close_enough(ir_dtype t, double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    double tol = t == IR_F32 ? 1e-4 : t == IR_F16 ? 1e-2 : t == IR_BF16 ? 3e-2 : 0.0;
    return fabs(a - b) <= tol + tol * fabs(b);
}

#define TK_PTXAS "/usr/local/cuda/bin/ptxas"

/* Assembles len bytes of PTX with the toolkit's ptxas for arch ("sm_90"): -1 when ptxas is not
 * installed, else its exit status. With `log` (a path), runs `ptxas -v` and leaves its output
 * there. The PTX goes through a temporary file, removed on success and kept (and named on
 * stderr) on failure. */
static inline int tk_ptxas(const char *ptx, size_t len, const char *arch, const char *log) {
    if (access(TK_PTXAS, X_OK) != 0) return -1;
    char path[] = "/tmp/tx_test_ptx_XXXXXX", cmd[512];
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) return 1;
    bool wrote = fwrite(ptx, 1, len, f) == len;
    if (fclose(f) != 0 || !wrote) return 1;
    if (log)
        snprintf(cmd, sizeof cmd, TK_PTXAS " -arch=%s -v -o /dev/null %s > %s 2>&1", arch, path,
                 log);
    else
        snprintf(cmd, sizeof cmd, TK_PTXAS " -arch=%s -o /dev/null %s", arch, path);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "ptxas -arch=%s failed (PTX kept in %s)\n", arch, path);
    else
        unlink(path);
    return rc;
}

/* What `ptxas -v` says of a module: the most registers of any kernel, the most bytes of spill
 * stores of any kernel (-1 when no kernel reported a stack frame), and the first warning line
 * (the wgmma serialisation warnings C7508/C7510/C7515 or any other "warning"; "" when none). */
typedef struct tk_ptxas_stats {
    int regs, spill;
    char warning[512];
} tk_ptxas_stats;

/* Assembles len bytes of PTX for arch with -v and fills st: -1 when ptxas is not installed (st
 * untouched), else ptxas's exit status. */
static inline int tk_ptxas_stats_of(const char *ptx, size_t len, const char *arch,
                                    tk_ptxas_stats *st) {
    char log[] = "/tmp/tx_test_ptxas_log_XXXXXX", line[512];
    int fd = mkstemp(log);
    if (fd < 0) return 1;
    close(fd);
    int rc = tk_ptxas(ptx, len, arch, log);
    FILE *f = rc == -1 ? NULL : fopen(log, "r");
    st->regs = st->spill = -1;
    st->warning[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *s;
        int v;
        if (!st->warning[0] && (strstr(line, "C7510") || strstr(line, "C7508") ||
                                strstr(line, "C7515") || strstr(line, "arning")))
            snprintf(st->warning, sizeof st->warning, "%s", line);
        if ((s = strstr(line, "bytes stack frame, ")) &&
            sscanf(s, "bytes stack frame, %d bytes spill stores", &v) == 1 && v > st->spill)
            st->spill = v;
        if ((s = strstr(line, "Used ")) != NULL && atoi(s + 5) > st->regs) st->regs = atoi(s + 5);
    }
    if (f) fclose(f);
    unlink(log);
    return rc;
}

#endif
