/* ast.c - the arena behind the AST and sema temporaries, and the AST
 * printer used by tests. */
#include "frontend.h"

#include <stdlib.h>
#include <string.h>

struct fe_chunk {
    struct fe_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
};

/* Returns `n` zeroed bytes, 16-byte aligned, valid until fe_arena_free. */
void *fe_alloc(fe_arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    struct fe_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = ir_xmalloc(sizeof *c + cap);
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->mem + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

/* Copies n bytes of s into the arena, NUL-terminated. */
char *fe_strndup(fe_arena *a, const char *s, size_t n) {
    char *p = fe_alloc(a, n + 1);
    memcpy(p, s, n);
    return p;
}

/* Frees every allocation of the arena; the arena is empty and reusable. */
void fe_arena_free(fe_arena *a) {
    while (a->head) {
        struct fe_chunk *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

/* The operator's source spelling. */
const char *fe_binop_str(fe_binop op) {
    static const char *const s[] = {"+",  "-", "*",  "/",  "@",  "**", "<",
                                    "<=", ">", ">=", "==", "!=", "&",  "|"};
    return op < sizeof s / sizeof *s ? s[op] : "?";
}

/* Writes `e` as an S-expression: atoms as written (floats with %g), unary
 * minus as (neg x), `~x` as (not x), calls as (call f a b key=v), tuples as (tuple a b). */
void fe_expr_print(const fe_expr *e, FILE *out) {
    switch ((fe_expr_kind)e->kind) {
        case FE_E_INT: fprintf(out, "%lld", (long long)e->ival); return;
        case FE_E_FLOAT: fprintf(out, "%g", e->fval); return;
        case FE_E_BOOL: fputs(e->ival ? "true" : "false", out); return;
        case FE_E_NAME: fputs(e->name, out); return;
        case FE_E_NEG: fputs("(neg ", out); break;
        case FE_E_NOT: fputs("(not ", out); break;
        case FE_E_BIN: fprintf(out, "(%s ", fe_binop_str((fe_binop)e->op)); break;
        case FE_E_CALL: fprintf(out, "(call %s", e->name); break;
        case FE_E_TUPLE: fputs("(tuple", out); break;
    }
    for (unsigned i = 0; i < e->nkids; i++) {
        if (i || e->kind == FE_E_CALL || e->kind == FE_E_TUPLE) fputc(' ', out);
        fe_expr_print(e->kids[i], out);
    }
    for (unsigned i = 0; i < e->nkw; i++) {
        fprintf(out, " %s=", e->kw[i].name);
        fe_expr_print(e->kw[i].val, out);
    }
    fputc(')', out);
}
