/* testkit.h - helpers shared by the cmocka unit tests (not a test itself). */
#ifndef TX_TESTKIT_H
#define TX_TESTKIT_H

#include <stdio.h>
#include <stdlib.h>

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

#endif
