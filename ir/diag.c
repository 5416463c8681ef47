/* diag.c - error reporting: source errors with line echo and caret. */
#include "ir/ir.h"

#include <string.h>

void tx_diag_init(tx_diag *d, FILE *out, const char *file, const char *src, size_t srclen) {
    memset(d, 0, sizeof *d);
    d->out = out;
    d->file = file;
    d->src = src;
    d->srclen = srclen;
    d->max_errors = 1;
}

/* Echoes source line `line` and a caret under column `col`. Bytes that are
 * not printable ASCII are shown as '?' so a binary file cannot garble the
 * terminal; tabs are kept so the caret lines up. */
static void echo_line(tx_diag *d, unsigned line, unsigned col) {
    if (!d->src || line == 0) return;
    size_t i = 0;
    unsigned l = 1;
    while (i < d->srclen && l < line) {
        if (d->src[i] == '\n') l++;
        i++;
    }
    if (l != line) return;
    size_t start = i, end = i;
    while (end < d->srclen && d->src[end] != '\n' && end - start < 400) end++;
    for (size_t k = start; k < end; k++) {
        unsigned char c = (unsigned char)d->src[k];
        fputc(c == '\t' || (c >= 32 && c < 127) ? c : (c >= 128 ? c : '?'), d->out);
    }
    fputc('\n', d->out);
    for (unsigned k = 1; k < col && start + k - 1 < end; k++)
        fputc(d->src[start + k - 1] == '\t' ? '\t' : ' ', d->out);
    fputs("^\n", d->out);
}

void tx_error_at(tx_diag *d, unsigned line, unsigned col, const char *fmt, ...) {
    d->errors++;
    if (d->errors > (d->max_errors ? d->max_errors : 1)) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(d->out, "%s:%u:%u: error: ", d->file ? d->file : "<input>", line, col);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
    echo_line(d, line, col);
}

void tx_error(tx_diag *d, const char *fmt, ...) {
    d->errors++;
    if (d->errors > (d->max_errors ? d->max_errors : 1)) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("txc: error: ", d->out);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
}
