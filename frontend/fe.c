/* fe.c - the frontend driver: byte checks, scanner and parser set-up, and
 * fe_compile (prelude + user file -> verified graph). */
#include "frontend.h"

#include <limits.h>
#include <string.h>

#include "parse.h"
#include "lex.h"

/* Line and byte column (1-based) of offset `off` in src. */
static void pos_of(const char *src, size_t off, unsigned *line, unsigned *col) {
    unsigned l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        if (src[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned b = s[0];
    size_t k;
    uint32_t cp;
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF)
        k = 2, cp = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF)
        k = 3, cp = b & 0x0F;
    else if (b >= 0xF0 && b <= 0xF4)
        k = 4, cp = b & 0x07;
    else
        return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return k;
}

/* Contract in frontend.h. */
bool fe_check_bytes(const char *src, size_t len, tx_diag *d) {
    if (len == 0) {
        tx_error_at(d, 1, 1, "empty file (no functions)");
        return false;
    }
    const unsigned char *s = (const unsigned char *)src;
    for (size_t i = 0; i < len;) {
        unsigned line, col;
        if (s[i] == 0) {
            pos_of(src, i, &line, &col);
            tx_error_at(d, line, col, "binary file: NUL byte in the source");
            return false;
        }
        size_t k = utf8_len(s + i, len - i);
        if (k == 0) {
            pos_of(src, i, &line, &col);
            tx_error_at(d, line, col, "invalid UTF-8 (byte 0x%02x)", s[i]);
            return false;
        }
        i += k;
    }
    return true;
}

/* Contract in frontend.h. */
bool fe_parse(fe_arena *a, const char *src, size_t len, bool prelude, fe_program *prog,
              tx_diag *d) {
    fe_pctx ctx = {.a = a, .d = d, .prog = prog, .prelude = prelude, .line = 1, .col = 1};
    yyscan_t sc;
    if (len > (size_t)INT_MAX - 2) { /* flex sizes buffers with int */
        tx_error(d, "%s: file too large (2 GiB or more)", d->file ? d->file : "<input>");
        return false;
    }
    if (fe_yylex_init_extra(&ctx, &sc)) {
        tx_error(d, "cannot start the scanner");
        return false;
    }
    fe_yy_scan_bytes(src, (int)len, sc);
    int rc = fe_yyparse(sc, &ctx);
    fe_yylex_destroy(sc);
    if (rc != 0 && !ctx.failed) tx_error(d, "parse failed"); /* bison gave up without a report */
    return rc == 0 && !ctx.failed;
}

/* Contract in frontend.h. */
int fe_lex_all(fe_arena *a, const char *src, size_t len, tx_diag *d, fe_token **out) {
    fe_pctx ctx = {.a = a, .d = d, .line = 1, .col = 1};
    yyscan_t sc;
    if (len > (size_t)INT_MAX - 2 || fe_yylex_init_extra(&ctx, &sc)) return -1;
    fe_yy_scan_bytes(src, (int)len, sc);
    unsigned n = 0, cap = 16;
    fe_token *v = fe_alloc(a, cap * sizeof *v);
    for (;;) {
        FE_YYSTYPE val;
        FE_YYLTYPE loc;
        memset(&val, 0, sizeof val);
        int k = fe_yylex(&val, &loc, sc);
        if (k == LEXERR || ctx.failed) {
            n = 0;
            break;
        }
        if (n == cap) {
            fe_token *nv = fe_alloc(a, 2 * cap * sizeof *nv);
            memcpy(nv, v, cap * sizeof *nv);
            v = nv;
            cap *= 2;
        }
        fe_token *t = &v[n++];
        t->kind = k;
        t->name = fe_token_name(k);
        t->text = fe_strndup(a, k ? ctx.tok : "", k ? strlen(ctx.tok) : 0);
        t->loc.line = (unsigned)loc.first_line;
        t->loc.col = (unsigned)loc.first_column;
        if (k == INT || k == TRUE || k == FALSE) t->ival = val.i;
        if (k == FLOAT) t->fval = val.f;
        if (k == 0) break;
    }
    fe_yylex_destroy(sc);
    *out = v;
    return n ? (int)n : -1;
}

/* Parses the embedded prelude into `prog`. An error there is a bug of the
 * compiler, reported as such. */
static bool parse_prelude(fe_arena *a, fe_program *prog, tx_diag *d) {
    tx_diag pd;
    tx_diag_init(&pd, d->out, "<prelude>", fe_prelude_src, fe_prelude_len);
    if (fe_parse(a, fe_prelude_src, fe_prelude_len, true, prog, &pd)) return true;
    tx_error(d, "internal error: the built-in prelude does not parse");
    return false;
}

/* Contract in frontend.h. */
ir_graph *fe_compile(const char *file, const char *src, size_t len, const fe_options *opt,
                     tx_diag *d) {
    fe_arena a = {0};
    fe_program prog = {0};
    fe_options none = {0};
    ir_graph *g = NULL;
    if (!opt) opt = &none;
    if (!src) len = 0;
    if (parse_prelude(&a, &prog, d) && fe_check_bytes(src, len, d)) {
        unsigned nprelude = prog.nfuncs;
        if (fe_parse(&a, src, len, false, &prog, d)) {
            if (prog.nfuncs == nprelude)
                tx_error_at(d, 1, 1, "empty file (no functions)");
            else
                g = fe_lower(&a, &prog, file, opt, d);
        }
    }
    fe_arena_free(&a);
    return g;
}
