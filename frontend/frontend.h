/* frontend.h - .tx source to IR: scanner, parser, name resolution, inlining
 * of helpers and composites, type and shape checking (spec section 1). */
#ifndef TX_FRONTEND_H
#define TX_FRONTEND_H

#include "ir/ir.h"

typedef struct fe_define {
    const char *name; /* symbolic dim name */
    int64_t value;    /* > 0 */
} fe_define;

typedef struct fe_options {
    const char *entry;        /* entry function name; NULL: the last function in the file */
    const fe_define *defines; /* -D NAME=INT bindings */
    unsigned ndefines;
} fe_options;

/* Compiles `src` (len bytes, need not be NUL-terminated; `file` names it in
 * diagnostics) into a verified graph of the entry function. Bound dims are
 * substituted (shapes hold concrete extents) and recorded as bound symbols;
 * unbound dims stay symbolic. On any error, reports through `d`
 * (FILE:LINE:COL: error: ..., line, caret) and returns NULL. Never crashes
 * or hangs on any input. */
ir_graph *fe_compile(const char *file, const char *src, size_t len, const fe_options *opt, tx_diag *d);

/* The composites' source (frontend/prelude.tx), embedded at build time. */
extern const char fe_prelude_src[];
extern const size_t fe_prelude_len;

#endif
