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
ir_graph *fe_compile(const char *file, const char *src, size_t len, const fe_options *opt,
                     tx_diag *d);

/* The composites' source (frontend/prelude.tx), embedded at build time. */
extern const char fe_prelude_src[];
extern const size_t fe_prelude_len;

/* ======================================================================
 * Internal: used only inside frontend/ and by its unit tests.
 * ====================================================================== */

/* Bump allocator: every AST node and sema temporary lives in one arena and
 * is freed at once by fe_arena_free. Allocation never fails (exits on OOM). */
typedef struct fe_arena {
    struct fe_chunk *head;
} fe_arena;
void *fe_alloc(fe_arena *a, size_t n); /* zeroed, 16-byte aligned */
char *fe_strndup(fe_arena *a, const char *s, size_t n);
void fe_arena_free(fe_arena *a);

typedef struct fe_loc {
    unsigned line, col; /* 1-based; col counts bytes, a tab is one column */
} fe_loc;

typedef enum {
    FE_E_INT,   /* ival */
    FE_E_FLOAT, /* fval */
    FE_E_BOOL,  /* ival 0/1 */
    FE_E_NAME,  /* name */
    FE_E_NEG,   /* unary minus: kids[0] */
    FE_E_NOT,   /* boolean not `~`: kids[0] */
    FE_E_BIN,   /* binary operator `op`: kids[0], kids[1] */
    FE_E_CALL,  /* name(kids[0..nkids), kw[0..nkw)) */
    FE_E_TUPLE, /* (kids...) */
} fe_expr_kind;

/* Binary operators (FE_E_BIN.op). */
typedef enum {
    FE_OP_ADD,
    FE_OP_SUB,
    FE_OP_MUL,
    FE_OP_DIV,
    FE_OP_MATMUL,
    FE_OP_POW,
    FE_OP_LT,
    FE_OP_LE,
    FE_OP_GT,
    FE_OP_GE,
    FE_OP_EQ,
    FE_OP_NE,
    FE_OP_AND,
    FE_OP_OR, /* boolean `&`, `|` */
} fe_binop;
const char *fe_binop_str(fe_binop op); /* "+", "<=", ... */

typedef struct fe_kwarg {
    const char *name;
    fe_loc loc;
    struct fe_expr *val;
} fe_kwarg;

typedef struct fe_expr {
    uint8_t kind;   /* fe_expr_kind */
    uint8_t op;     /* fe_binop for FE_E_BIN */
    uint16_t depth; /* nesting depth: 0 for atoms, 1 + max(children) otherwise */
    fe_loc loc;     /* operator token (unary/binary), callee name, '(' of a tuple, or the token */
    int64_t ival;
    double fval;
    const char *name;
    struct fe_expr **kids;
    unsigned nkids;
    fe_kwarg *kw;
    unsigned nkw;
} fe_expr;

typedef struct fe_dimx {
    int64_t value;    /* > 0 when name is NULL */
    const char *name; /* symbolic dim */
    fe_loc loc;
} fe_dimx;

typedef struct fe_type {
    int dtype; /* ir_dtype */
    fe_loc loc;
    unsigned rank; /* may exceed IR_MAX_RANK (sema reports it) */
    fe_dimx *dims;
} fe_type;

typedef struct fe_param {
    const char *name;
    fe_loc loc;
    fe_type *type; /* NULL: untyped */
    fe_expr *dflt; /* default value (prelude only); NULL: required */
} fe_param;

typedef enum { FE_S_ASSIGN, FE_S_RETURN } fe_stmt_kind;
typedef struct fe_stmt {
    uint8_t kind;
    fe_loc loc;
    const char **names; /* ASSIGN targets */
    fe_loc *name_locs;
    unsigned nnames;
    fe_expr **vals; /* ASSIGN: one value; RETURN: the returned values */
    unsigned nvals;
} fe_stmt;

typedef struct fe_func {
    const char *name;
    fe_loc loc;
    fe_param *params;
    unsigned nparams;
    fe_type **rets; /* declared return types; nrets 0: undeclared */
    unsigned nrets;
    bool ret_tuple; /* declared as `-> (T, ...)` */
    fe_stmt **body;
    unsigned nbody;
    bool prelude; /* defined in prelude.tx */
} fe_func;

typedef struct fe_program {
    fe_func **funcs;
    unsigned nfuncs, cap;
} fe_program;

/* A token, for tests and debugging of the scanner. */
typedef struct fe_token {
    int kind;         /* bison token kind; 0 at the end */
    const char *name; /* the token's grammar name, e.g. "NAME", "'('", "end of file" */
    const char *text; /* the token's text (arena) */
    fe_loc loc;
    int64_t ival;
    double fval;
} fe_token;

/* Scans `src` into tokens (ending with the end-of-file token) allocated in
 * `a`. Returns the count, or -1 after reporting a lexical error to `d`. */
int fe_lex_all(fe_arena *a, const char *src, size_t len, tx_diag *d, fe_token **out);

/* Parses `src` into a program allocated in `a`, appending to `prog` (so the
 * prelude and the user file share one table); functions get `prelude` set
 * as given. Returns false after reporting the first error to `d`. Nesting
 * deeper than IR_MAX_NEST is an error, and no input can overflow the stack. */
bool fe_parse(fe_arena *a, const char *src, size_t len, bool prelude, fe_program *prog, tx_diag *d);

/* Writes an expression as an S-expression, e.g. "(+ a (neg (** x 2)))". */
void fe_expr_print(const fe_expr *e, FILE *out);

/* The name of a token kind as the grammar spells it (e.g. "'('", "name"). */
const char *fe_token_name(int kind);

/* Lowers the parsed program (prelude and user functions, `file` names the
 * user source) to a verified graph of the entry function: checks names,
 * recursion, types and shapes, inlines every call. Reports the first error
 * to `d` and returns NULL on failure. Temporaries live in `a`. */
ir_graph *fe_lower(fe_arena *a, const fe_program *p, const char *file, const fe_options *opt,
                   tx_diag *d);

/* The candidate a user most likely meant by the unknown `name`: a known
 * PyTorch/NumPy spelling of one of them (`keepdims` -> `keepdim`, `dim` ->
 * `axis`, `True` -> `true`), else the closest by edit distance (case
 * ignored; at most 1-3 edits depending on the length). NULL entries and
 * names starting with '_' are skipped. Returns a candidate or NULL. */
const char *fe_suggest(const char *name, const char *const *cands, unsigned n);

/* What to write in tx for a PyTorch/NumPy function or constant that tx
 * does not have (`sign`, `isnan`, `argmax`, `softplus`, `None`, `pi`, ...),
 * as text that completes "write ..." or "...: TEXT"; NULL when `name` is
 * not one of them. */
const char *fe_instead(const char *name);

/* What to write instead when built-in `name` gets the wrong number of
 * positional arguments the way PyTorch code passes them (`more`: too many),
 * e.g. max(a, b) for the elementwise maximum or permute(x, 0, 2, 1); NULL when
 * the plain arity message says it all. */
const char *fe_arity_hint(const char *name, bool more);

/* What to write for a dtype name tx does not have (float32, int64, f64,
 * ...): the tx dtype and why, or NULL. */
const char *fe_dtype_hint(const char *name);

/* Checks the source bytes before scanning: NUL bytes, invalid UTF-8 and an
 * empty file are errors (reported to `d`). Returns true when clean. */
bool fe_check_bytes(const char *src, size_t len, tx_diag *d);

#endif
