/* sema.c - name resolution, inlining, type and shape checking: lowers the
 * AST of the entry function to the IR (spec section 1). Helpers and the
 * prelude's composites are inlined at each call; literals stay weakly typed
 * until an operation fixes their dtype. The first error wins. */
#include "frontend.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FE_MAX_EVAL_DEPTH 2048 /* nesting summed over inlined helpers (stack safety) */
/* Kept out of the recursive evaluator's frame (their message buffers would
 * otherwise be inlined into it and multiply the stack used per level). */
#define FE_NOINLINE  __attribute__((noinline))
#define FE_MAX_NODES (1u << 18) /* IR nodes after inlining */
#define FE_MAX_NAMED (1u << 12) /* values given source names (ir_intern is linear) */

/* ---- values ------------------------------------------------------------ */
typedef enum {
    V_TENSOR, /* id */
    V_INT,    /* weak integer literal: i */
    V_FLOAT,  /* weak float literal: f */
    V_BOOL,   /* weak bool literal: i */
    V_DIM,    /* symbolic dim name used as a value: i (ir_dim), name */
    V_TUPLE,  /* el[0..n) */
    V_MULTI,  /* several return values of helper `name`: el[0..n) */
} vkind;

typedef struct fe_val {
    uint8_t kind;
    ir_id id;
    int64_t i;
    double f;
    const char *name;
    unsigned n;
    struct fe_val *el;
    fe_loc loc;
} fe_val;

typedef struct binding {
    const char *name;
    fe_val v;
} binding;

/* One inlined call: its local names, newest last. */
typedef struct frame {
    const fe_func *fn;
    binding *b;
    unsigned nb, cap;
    uint32_t *ht;   /* open addressing: 1 + index of the newest binding of a name */
    unsigned htcap; /* power of two, > 2 * nb */
} frame;

typedef struct fe_fref {
    const fe_func *f;
    unsigned idx; /* index in the program */
} fe_fref;

typedef struct used_name {
    char *name;
    unsigned count;
} used_name;

typedef struct sema {
    fe_arena *a;
    tx_diag *d;
    const fe_program *p;
    const fe_options *opt;
    const char *file;
    ir_graph *g;
    bool failed;
    unsigned depth;      /* eval nesting, summed over inlined calls */
    unsigned inlines;    /* helper calls being inlined */
    bool in_prelude;     /* nodes and errors take `site` */
    fe_loc site;         /* the user's call of the composite being inlined */
    const char *site_fn; /* that composite's name */
    used_name *used;
    unsigned nused, capused;
    unsigned named;         /* nodes named so far */
    struct fe_fref *sorted; /* functions by name, then file order */
} sema;

#define TRY(x)                  \
    do {                        \
        if (!(x)) return false; \
    } while (0)

/* ---- diagnostics ------------------------------------------------------- */
/* Reports the first error at `l` (inside the prelude: at the composite's
 * call site, as "in 'softmax': ..."); a message is at most 600 bytes. Always returns false so
 * callers can `return err(...)`. */
static bool err(sema *s, fe_loc l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool err(sema *s, fe_loc l, const char *fmt, ...) {
    if (s->failed) return false;
    s->failed = true;
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf) memcpy(buf + sizeof buf - 4, "...", 4); /* a huge name inside */
    if (s->in_prelude) {
        tx_error_at(s->d, s->site.line, s->site.col, "in '%s': %s", s->site_fn, buf);
        return false;
    }
    tx_error_at(s->d, l.line, l.col, "%s", buf);
    return false;
}

/* "f32[M, 4]" for a node. */
static const char *tystr(sema *s, ir_id id, char *buf, size_t cap) {
    char sb[256];
    const ir_node *n = &s->g->nodes[id];
    snprintf(buf, cap, "%s%s", ir_dtype_name((ir_dtype)n->dtype),
             ir_shape_str(s->g, &n->shape, sb, sizeof sb));
    return buf;
}

/* "f32[M, 4]" for a declared type. */
static const char *declstr(const fe_type *t, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "%s[", ir_dtype_name((ir_dtype)t->dtype));
    for (unsigned i = 0; i < t->rank && k < cap; i++) {
        if (t->dims[i].name)
            k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", t->dims[i].name);
        else
            k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "",
                                  (long long)t->dims[i].value);
    }
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

static const char *plural(unsigned n) { return n == 1 ? "" : "s"; }

/* ---- names ------------------------------------------------------------- */
typedef enum {
    B_UNARY,
    B_CAST,
    B_BINARY,
    B_WHERE,
    B_REDUCE,
    B_MATMUL,
    B_TRANSPOSE,
    B_PERMUTE,
    B_RESHAPE,
    B_BCAST,
    B_SLICE,
    B_CONCAT,
    B_ASDTYPE,
    B_ARANGE,
    B_IOTA,
} bkind;

typedef struct builtin {
    const char *name;
    uint8_t kind;     /* bkind */
    uint8_t npos;     /* positional arguments (exactly) */
    uint8_t required; /* bitmask of required keywords */
    bool internal;    /* callable from the prelude only */
    const char *kw[3];
} builtin;

/* The built-ins with a surface form of their own (casts, views, transpose,
 * the index space arange/iota, the prelude's _as_dtype). The elementwise, reduction and matmul
 * built-ins are the IR_T_CALL rows of the op table (op_builtin). */
static const builtin builtins[] = {
    {"f32", B_CAST, 1, 0, 0, {0}},
    {"f16", B_CAST, 1, 0, 0, {0}},
    {"bf16", B_CAST, 1, 0, 0, {0}},
    {"i32", B_CAST, 1, 0, 0, {0}},
    {"transpose", B_TRANSPOSE, 3, 0, 0, {0}},
    {"permute", B_PERMUTE, 2, 0, 0, {0}},
    {"reshape", B_RESHAPE, 2, 0, 0, {0}},
    {"broadcast_to", B_BCAST, 2, 0, 0, {0}},
    {"slice", B_SLICE, 1, 1, 0, {"axis", "start", "stop"}},
    {"concat", B_CONCAT, 1, 0, 0, {"axis"}},
    {"_as_dtype", B_ASDTYPE, 2, 0, 1, {0}},
    {"arange", B_ARANGE, 1, 0, 0, {0}},
    {"iota", B_IOTA, 1, 1, 0, {"axis"}},
};

/* The built-ins of the op table: its IR_T_CALL rows (name NULL in the other
 * rows), each lowered by the frontend's rule for its family, chosen by traits
 * and arity: reduction (axis=, keepdim=), matmul, elementwise unary, binary,
 * or three-operand (where). */
#define OPB_RED(t) (((t)&IR_T_REDUCE) != 0)
#define OPB_KIND(t, a)              \
    (OPB_RED(t)          ? B_REDUCE \
     : ((t)&IR_T_MATMUL) ? B_MATMUL \
     : (a) == 1          ? B_UNARY  \
     : (a) == 2          ? B_BINARY \
                         : B_WHERE)
static const builtin op_builtins[IR_NOPS] = {
#define X(e, s, a, t, f, i)                    \
    [IR_OP_##e] = {((t)&IR_T_CALL) ? s : NULL, \
                   OPB_KIND(t, a),             \
                   (a) < 0 ? 0 : (a),          \
                   0,                          \
                   0,                          \
                   {OPB_RED(t) ? "axis" : NULL, OPB_RED(t) ? "keepdim" : NULL, NULL}},
    IR_OPS(X)
#undef X
};

/* Every IR_T_CALL row belongs to one of those families (others need a surface form of their own).
 */
#define X(e, s, a, t, f, i)                                                   \
    _Static_assert(!((t)&IR_T_CALL) || ((t) & (IR_T_REDUCE | IR_T_MATMUL)) || \
                       (((t)&IR_T_ELEM) && (a) >= 1 && (a) <= 3),             \
                   "IR_T_CALL row " s                                         \
                   " has no frontend family: give it its own entry in builtins[]");
IR_OPS(X)
#undef X

/* The built-in named `name`, or NULL. */
static const builtin *find_builtin(const char *name) {
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (!strcmp(builtins[i].name, name)) return &builtins[i];
    int op = ir_op_parse(name, strlen(name));
    return op >= 0 && op_builtins[op].name ? &op_builtins[op] : NULL;
}

/* qsort order of fe_fref: by name, then by position in the program. */
static int cmp_func(const void *a, const void *b) {
    const fe_fref *x = a, *y = b;
    int c = strcmp(x->f->name, y->f->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The entry of the first function (in file order: the prelude first)
 * named `name`, or NULL. */
static const fe_fref *find_fref(const sema *s, const char *name) {
    size_t lo = 0, hi = s->p->nfuncs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(s->sorted[mid].f->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->p->nfuncs && !strcmp(s->sorted[lo].f->name, name) ? &s->sorted[lo] : NULL;
}

/* The first function named `name`, or NULL. */
static const fe_func *find_func(const sema *s, const char *name) {
    const fe_fref *r = find_fref(s, name);
    return r ? r->f : NULL;
}

/* "; did you mean 'X'?" when fe_suggest finds a candidate, else "". */
static const char *mean_hint(const char *name, const char *const *cands, unsigned n, char *buf,
                             size_t cap) {
    const char *pick = fe_suggest(name, cands, n);
    if (pick)
        snprintf(buf, cap, "; did you mean '%s'?", pick);
    else
        buf[0] = 0;
    return buf;
}

/* The did-you-mean hint for an unknown function: the public built-ins and
 * every function of the program (the prelude's composites included). */
static const char *func_hint(const sema *s, const char *name, char *buf, size_t cap) {
    size_t nb = sizeof builtins / sizeof *builtins;
    const char **c = ir_xmalloc((nb + IR_NOPS + s->p->nfuncs + 1) * sizeof *c);
    unsigned n = 0;
    for (size_t i = 0; i < nb; i++)
        if (!builtins[i].internal) c[n++] = builtins[i].name;
    for (int i = 0; i < IR_NOPS; i++)
        if (op_builtins[i].name) c[n++] = op_builtins[i].name;
    for (unsigned i = 0; i < s->p->nfuncs; i++) c[n++] = s->p->funcs[i]->name;
    mean_hint(name, c, n, buf, cap);
    free(c);
    return buf;
}

/* The did-you-mean hint for an unknown name: the names bound in f, the
 * graph's symbolic dims and the literal keywords. */
static const char *name_hint(const sema *s, const frame *f, const char *name, char *buf,
                             size_t cap) {
    static const char *const words[] = {"true", "false", "inf", "nan"};
    unsigned nw = sizeof words / sizeof *words;
    const char **c = ir_xmalloc((f->nb + s->g->nsyms + nw + 1) * sizeof *c);
    unsigned n = 0;
    for (unsigned i = 0; i < f->nb; i++) c[n++] = f->b[i].name;
    for (uint32_t i = 0; i < s->g->nsyms; i++) c[n++] = s->g->syms[i].name;
    for (unsigned i = 0; i < nw; i++) c[n++] = words[i];
    mean_hint(name, c, n, buf, cap);
    free(c);
    return buf;
}

/* Why `name` cannot be bound by user code, or NULL when it can: built-ins
 * (including the composites) and dtype names are reserved. */
static const char *reserved(const sema *s, const char *name) {
    if (ir_dtype_parse(name, strlen(name)) >= 0) return "a dtype";
    const builtin *b = find_builtin(name);
    if (b && !b->internal) return "a built-in function";
    const fe_func *f = find_func(s, name);
    if (f && f->prelude) return "a built-in function";
    return NULL;
}

/* Registers `name` and returns its unique form: the name itself the first
 * time, then "name.1", "name.2", ... (in buf). */
static const char *unique_name(sema *s, const char *name, char *buf, size_t cap) {
    for (unsigned i = 0; i < s->nused; i++) {
        if (strcmp(s->used[i].name, name)) continue;
        snprintf(buf, cap, "%s.%u", name, ++s->used[i].count);
        return buf;
    }
    if (s->nused == s->capused) {
        s->capused = s->capused ? 2 * s->capused : 16;
        s->used = ir_xrealloc(s->used, s->capused * sizeof *s->used);
    }
    s->used[s->nused].name = ir_xstrdup(name);
    s->used[s->nused++].count = 0;
    return name;
}

/* Gives an unnamed operation node the source name `name`, made unique in
 * the graph (inputs are named after their parameters; constants stay
 * unnamed). */
static void name_node(sema *s, ir_id id, const char *name) {
    ir_node *n = &s->g->nodes[id];
    if (n->name || n->op == IR_OP_INPUT || n->op == IR_OP_CONST || s->named >= FE_MAX_NAMED) return;
    s->named++;
    char buf[512];
    uint32_t off = ir_intern(s->g, unique_name(s, name, buf, sizeof buf));
    s->g->nodes[id].name = off;
}

/* FNV-1a of a NUL-terminated name. */
static uint32_t hash_name(const char *p) {
    uint32_t h = 2166136261u;
    while (*p) h = (h ^ (unsigned char)*p++) * 16777619u;
    return h;
}

/* The hash slot of `name` in f: empty or holding that name. */
static uint32_t *slot(const frame *f, const char *name) {
    unsigned m = f->htcap - 1, i = hash_name(name) & m;
    while (f->ht[i] && strcmp(f->b[f->ht[i] - 1].name, name)) i = (i + 1) & m;
    return &f->ht[i];
}

/* Binds name to v in f, shadowing an older binding. Bindings are heap
 * memory released by frame_free (inlining may run many calls, so frames
 * must not pile up in the arena); lookups are hashed. */
static void bind(sema *s, frame *f, const char *name, const fe_val *v) {
    (void)s;
    if (f->nb == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->b = ir_xrealloc(f->b, f->cap * sizeof *f->b);
    }
    if (2 * (f->nb + 1) >= f->htcap) {
        unsigned old = f->htcap;
        uint32_t *oh = f->ht;
        f->htcap = old ? 2 * old : 32;
        f->ht = ir_xcalloc(f->htcap, sizeof *f->ht);
        for (unsigned i = 0; i < old; i++)
            if (oh[i]) *slot(f, f->b[oh[i] - 1].name) = oh[i];
        free(oh);
    }
    f->b[f->nb].name = name;
    f->b[f->nb++].v = *v;
    *slot(f, name) = f->nb;
}

/* Releases f's bindings; f is empty afterwards. */
static void frame_free(frame *f) {
    free(f->b);
    free(f->ht);
    memset(f, 0, sizeof *f);
}

/* The newest binding of `name` in f, or NULL. */
static const fe_val *lookup(const frame *f, const char *name) {
    if (!f->htcap) return NULL;
    uint32_t k = *slot(f, name);
    return k ? &f->b[k - 1].v : NULL;
}

/* ---- nodes ------------------------------------------------------------- */
/* Element count of the concrete part of `sh` is below IR_MAX_ELEMS (symbolic
 * dims count as 1); rank at most IR_MAX_RANK. */
static bool check_shape(sema *s, ir_dtype dt, const ir_shape *sh, fe_loc l) {
    int64_t n = 1;
    bool ok = true;
    for (int i = 0; i < sh->rank && ok; i++)
        if (!IR_DIM_IS_SYM(sh->dim[i])) ok = ir_mul_ok(n, sh->dim[i], &n) && n < IR_MAX_ELEMS;
    if (ok) return true;
    char sb[256];
    return err(s, l, "%s%s has too many elements (the limit is 2^62)", ir_dtype_name(dt),
               ir_shape_str(s->g, sh, sb, sizeof sb));
}

/* Finishes a new node: location, size checks; stores it in *out. */
static bool done(sema *s, ir_id id, fe_loc l, fe_val *out) {
    if (s->failed) return false; /* an error inside a cast_to() before this */
    ir_node *n = &s->g->nodes[id];
    fe_loc at = s->in_prelude ? s->site : l;
    n->line = at.line;
    n->col = at.col;
    TRY(check_shape(s, (ir_dtype)n->dtype, &n->shape, l));
    if (s->g->n > FE_MAX_NODES)
        return err(s, l, "program too large: more than %u operations after inlining", FE_MAX_NODES);
    memset(out, 0, sizeof *out);
    out->kind = V_TENSOR;
    out->id = id;
    out->loc = l;
    return true;
}

/* done() for nodes whose size cannot exceed an existing one (casts); returns id. */
static ir_id locate(sema *s, ir_id id, fe_loc l) {
    fe_val tmp;
    done(s, id, l, &tmp);
    return id;
}

static ir_dtype dt_of(const sema *s, ir_id id) { return (ir_dtype)s->g->nodes[id].dtype; }
static const ir_shape *sh_of(const sema *s, ir_id id) { return &s->g->nodes[id].shape; }

/* The dtype a weak literal takes when nothing fixes it. */
static ir_dtype weak_default(const fe_val *v) {
    return v->kind == V_FLOAT ? IR_F32 : v->kind == V_INT ? IR_I32 : IR_BOOL;
}

/* Rejects values that are not tensors or literals, with a specific message. */
static bool need_scalar_or_tensor(sema *s, const fe_val *v) {
    switch ((vkind)v->kind) {
        case V_TENSOR:
        case V_INT:
        case V_FLOAT:
        case V_BOOL: return true;
        case V_DIM:
            return err(
                s, v->loc,
                "'%s' is a symbolic dim, not a value; a dim name stands alone as an entry of "
                "a shape tuple (for a product such as B * S write -1: it is inferred)",
                v->name);
        case V_TUPLE: return err(s, v->loc, "expected a tensor, got a tuple");
        case V_MULTI:
            return err(s, v->loc, "'%s' returns %u values; unpack them with 'a, b = %s(...)'",
                       v->name, v->n, v->name);
    }
    return false;
}

/* Largest finite magnitude of a float dtype. */
static double dt_max(ir_dtype t) {
    return t == IR_F16 ? 65504.0 : t == IR_BF16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
}

/* A constant node of dtype `dt` holding weak literal `v`; its value must
 * be representable. */
static bool mk_const(sema *s, const fe_val *v, ir_dtype dt, ir_id *out) {
    double x = v->kind == V_FLOAT ? v->f : (double)v->i;
    if (dt == IR_I32 && v->kind != V_BOOL) {
        if (v->kind == V_FLOAT || v->i < INT32_MIN || v->i > INT32_MAX)
            return v->kind == V_FLOAT ? err(s, v->loc, "float literal %g used as i32", v->f)
                                      : err(s, v->loc, "integer literal %lld does not fit in i32",
                                            (long long)v->i);
    } else if (dt == IR_BOOL) {
        x = x != 0;
    } else if (ir_dtype_is_float(dt) && isfinite(x) && fabs(x) > dt_max(dt)) {
        return err(s, v->loc, "literal %g is out of range for %s", x, ir_dtype_name(dt));
    }
    fe_val tmp = {0};
    TRY(done(s, ir_add_const(s->g, x, dt), v->loc, &tmp));
    *out = tmp.id;
    return true;
}

/* A tensor id for `v`: tensors as they are, literals as constants of
 * their default dtype. */
static bool as_tensor(sema *s, const fe_val *v, ir_id *out) {
    TRY(need_scalar_or_tensor(s, v));
    if (v->kind == V_TENSOR) {
        *out = v->id;
        return true;
    }
    return mk_const(s, v, weak_default(v), out);
}

/* `id` converted to `dt` (a cast node unless it already has that dtype). */
static ir_id cast_to(sema *s, ir_id id, ir_dtype dt, fe_loc l) {
    if (dt_of(s, id) == dt) return id;
    return locate(s, ir_add_cast(s->g, id, dt), l);
}

/* A weak literal as an integer (axes, dims, slice bounds). */
static bool as_int(sema *s, const fe_val *v, const char *what, int64_t *out) {
    if (v->kind != V_INT) return err(s, v->loc, "%s must be an integer literal", what);
    *out = v->i;
    return true;
}

/* Normalises axis `a` (negative counts from the end) for `rank`. */
static bool norm_axis(sema *s, int64_t a, unsigned rank, fe_loc l, int *out) {
    if (a < -(int64_t)rank || a >= (int64_t)rank)
        return err(s, l, "axis %lld out of range for rank %u", (long long)a, rank);
    *out = (int)(a < 0 ? a + rank : a);
    return true;
}

/* ---- arithmetic --------------------------------------------------------- */
/* Binary ops on values: a fe_binop, or OP_IR + the ir_op of a binary
 * built-in (maximum, minimum, pow, ... : the op table's binary IR_T_CALL rows). */
enum { OP_IR = 1000 };

static bool is_cmp(int op) { return op >= FE_OP_LT && op <= FE_OP_NE; }

/* The IR op of a binary operator (fe_binop or OP_IR + op). */
static ir_op ir_binop(int op) {
    if (op >= OP_IR) return (ir_op)(op - OP_IR);
    switch ((fe_binop)op) {
        case FE_OP_ADD: return IR_OP_ADD;
        case FE_OP_SUB: return IR_OP_SUB;
        case FE_OP_MUL: return IR_OP_MUL;
        case FE_OP_DIV: return IR_OP_DIV;
        case FE_OP_POW: return IR_OP_POW;
        case FE_OP_LT: return IR_OP_LT;
        case FE_OP_LE: return IR_OP_LE;
        case FE_OP_GT: return IR_OP_GT;
        case FE_OP_GE: return IR_OP_GE;
        case FE_OP_EQ: return IR_OP_EQ;
        case FE_OP_NE: return IR_OP_NE;
        case FE_OP_MATMUL: return IR_OP_MATMUL;
        case FE_OP_AND: return IR_OP_AND;
        case FE_OP_OR: return IR_OP_OR;
    }
    return IR_OP_MATMUL;
}

/* True for the ops folded on integer literals exactly (64-bit, overflow an
 * error); others fold in double. */
static bool int_foldable(ir_op op) {
    return op == IR_OP_ADD || op == IR_OP_SUB || op == IR_OP_MUL || op == IR_OP_MAXIMUM ||
           op == IR_OP_MINIMUM || op == IR_OP_POW;
}

/* Folds an integer operation; false (after reporting) on overflow. */
static bool fold_int(sema *s, ir_op op, int64_t a, int64_t b, fe_loc l, fe_val *r) {
    bool ov = false;
    r->kind = V_INT;
    if (op == IR_OP_ADD)
        ov = __builtin_add_overflow(a, b, &r->i);
    else if (op == IR_OP_SUB)
        ov = __builtin_sub_overflow(a, b, &r->i);
    else if (op == IR_OP_MUL)
        ov = __builtin_mul_overflow(a, b, &r->i);
    else if (op == IR_OP_MAXIMUM)
        r->i = a > b ? a : b;
    else if (op == IR_OP_MINIMUM)
        r->i = a < b ? a : b;
    else { /* power with b >= 0; |a| >= 2 overflows within 64 steps */
        if (a == 0 || a == 1)
            r->i = (a == 0 && b > 0) ? 0 : 1;
        else if (a == -1)
            r->i = (b % 2) ? -1 : 1;
        else {
            int64_t x = 1;
            for (int64_t k = 0; k < b && !ov; k++) ov = __builtin_mul_overflow(x, a, &x);
            r->i = x;
        }
    }
    if (ov) return err(s, l, "integer overflow in constant expression");
    return true;
}

/* Folds an operation on two weak literals into a weak literal: integers
 * exactly, everything else by the op's scalar rule in double. */
static bool fold(sema *s, int op, const fe_val *a, const fe_val *b, fe_loc l, fe_val *r) {
    memset(r, 0, sizeof *r);
    r->loc = l;
    double x = a->kind == V_FLOAT ? a->f : (double)a->i,
           y = b->kind == V_FLOAT ? b->f : (double)b->i;
    bool flt = a->kind == V_FLOAT || b->kind == V_FLOAT;
    if (is_cmp(op)) {
        bool c = op == FE_OP_LT   ? x < y
                 : op == FE_OP_LE ? x <= y
                 : op == FE_OP_GT ? x > y
                 : op == FE_OP_GE ? x >= y
                 : op == FE_OP_EQ ? x == y
                                  : x != y;
        if (!flt) /* exact for large integers */
            c = op == FE_OP_LT   ? a->i < b->i
                : op == FE_OP_LE ? a->i <= b->i
                : op == FE_OP_GT ? a->i > b->i
                : op == FE_OP_GE ? a->i >= b->i
                : op == FE_OP_EQ ? a->i == b->i
                                 : a->i != b->i;
        r->kind = V_BOOL;
        r->i = c;
        return true;
    }
    if (op == FE_OP_MATMUL) return err(s, l, "matmul needs operands of rank >= 2, got literals");
    if (op == FE_OP_DIV && y == 0) return err(s, l, "division by zero in constant expression");
    ir_op iop = ir_binop(op);
    bool pow_neg = iop == IR_OP_POW && !flt && b->i < 0;
    if (!flt && int_foldable(iop) && !pow_neg) return fold_int(s, iop, a->i, b->i, l, r);
    double v = 0, xy[2] = {x, y};
    if (!ir_scalar_eval(iop, IR_F32, xy, &v))
        return err(s, l, "'%s' of two literals", ir_op_name(iop));
    if (!isfinite(v) && isfinite(x) &&
        isfinite(y)) /* inf and nan are literals; overflow of finite ones is an error */
        return err(s, l, "constant expression overflows (result is %g)", v);
    r->kind = V_FLOAT;
    r->f = v;
    return true;
}

/* The dtype an operation computes in when one side is the strong dtype `t`
 * and the other the weak literal `w` (NumPy 2 rules for Python scalars). */
static ir_dtype weak_with(ir_dtype t, const fe_val *w) {
    if (w->kind == V_FLOAT) return ir_dtype_is_float(t) ? t : IR_F32;
    if (w->kind == V_INT) return t == IR_BOOL ? IR_I32 : t;
    return t;
}

/* Brings operand `v` to the compute dtype `cd`: literals become constants of
 * `cd`; tensors of another non-float dtype (or a float feeding integer
 * math) get a cast; mixed float dtypes are left to the op's own promotion. */
static bool operand(sema *s, const fe_val *v, ir_dtype cd, fe_loc l, ir_id *out) {
    if (v->kind != V_TENSOR) return mk_const(s, v, cd, out);
    ir_dtype t = dt_of(s, v->id);
    *out = (t == cd || (ir_dtype_is_float(t) && ir_dtype_is_float(cd))) ? v->id
                                                                        : cast_to(s, v->id, cd, l);
    return true;
}

/* Checks that two shapes broadcast; reports "cannot broadcast A with B". */
static bool check_bcast(sema *s, ir_id a, ir_id b, fe_loc l) {
    ir_shape r;
    if (ir_shape_broadcast(sh_of(s, a), sh_of(s, b), &r)) return true;
    char x[300], y[300];
    return err(s, l, "cannot broadcast %s with %s", tystr(s, a, x, sizeof x),
               tystr(s, b, y, sizeof y));
}

/* The compute dtype of a binary operation on values a and b. */
static ir_dtype compute_dtype(const sema *s, int op, const fe_val *a, const fe_val *b) {
    ir_dtype cd;
    if (a->kind == V_TENSOR && b->kind == V_TENSOR)
        cd = ir_dtype_promote(dt_of(s, a->id), dt_of(s, b->id));
    else if (a->kind == V_TENSOR)
        cd = weak_with(dt_of(s, a->id), b);
    else
        cd = weak_with(dt_of(s, b->id), a);
    if (!is_cmp(op) && cd == IR_BOOL) cd = IR_I32;              /* arithmetic on bool */
    if (op == FE_OP_DIV && !ir_dtype_is_float(cd)) cd = IR_F32; /* true division */
    return cd;
}

/* a OP b with weak typing, broadcasting and folding of literal pairs. */
static FE_NOINLINE bool binop(sema *s, int op, const fe_val *a, const fe_val *b, fe_loc l,
                              fe_val *out) {
    TRY(need_scalar_or_tensor(s, a));
    TRY(need_scalar_or_tensor(s, b));
    if (a->kind != V_TENSOR && b->kind != V_TENSOR) return fold(s, op, a, b, l, out);
    ir_dtype cd = compute_dtype(s, op, a, b);
    ir_id x, y;
    TRY(operand(s, a, cd, l, &x));
    TRY(operand(s, b, cd, l, &y));
    TRY(check_bcast(s, x, y, l));
    return done(s, ir_add_binary(s->g, ir_binop(op), x, y), l, out);
}

/* Unary minus: folded on literals; bool becomes i32 first. */
static FE_NOINLINE bool negate(sema *s, const fe_val *a, fe_loc l, fe_val *out) {
    TRY(need_scalar_or_tensor(s, a));
    if (a->kind == V_FLOAT) {
        *out = *a;
        out->f = -a->f;
        out->loc = l;
        return true;
    }
    if (a->kind == V_INT || a->kind == V_BOOL) {
        if (a->i == INT64_MIN) return err(s, l, "integer overflow in constant expression");
        *out = *a;
        out->kind = V_INT;
        out->i = -a->i;
        out->loc = l;
        return true;
    }
    ir_id x = a->id;
    if (dt_of(s, x) == IR_BOOL) x = cast_to(s, x, IR_I32, l);
    return done(s, ir_add_unary(s->g, IR_OP_NEG, x), l, out);
}

/* ---- built-ins ---------------------------------------------------------- */
/* The operand dtype an op's traits ask for, given the operand's dtype t:
 * float-only ops (IR_T_FLOAT) take f32 for i32/bool; other ops take i32 for
 * bool unless they keep bool (IR_T_BOOLOK); else t. */
static ir_dtype operand_dtype(ir_op op, ir_dtype t) {
    unsigned tr = ir_op_traits(op);
    if ((tr & IR_T_FLOAT) && !ir_dtype_is_float(t)) return IR_F32;
    if (!(tr & IR_T_BOOLOK) && t == IR_BOOL) return IR_I32;
    return t;
}

/* Elementwise unary built-in: operands converted as the op's traits ask
 * (operand_dtype: float-only ops turn integers into f32, the others turn
 * bool into i32). */
static FE_NOINLINE bool b_unary(sema *s, const char *name, const fe_val *x, fe_loc l, fe_val *out) {
    ir_op op = (ir_op)ir_op_parse(name, strlen(name));
    ir_id id;
    TRY(need_scalar_or_tensor(s, x));
    if (x->kind == V_TENSOR) {
        id = x->id;
    } else {
        TRY(mk_const(s, x, operand_dtype(op, weak_default(x)), &id));
    }
    ir_dtype t = dt_of(s, id), want = operand_dtype(op, t);
    if (want != t) id = cast_to(s, id, want, l);
    return done(s, ir_add_unary(s->g, op, id), l, out);
}

/* f32(x) etc.: literals become constants of that dtype; same dtype: x. */
static FE_NOINLINE bool b_cast(sema *s, const char *name, const fe_val *x, fe_loc l, fe_val *out) {
    ir_dtype dt = (ir_dtype)ir_dtype_parse(name, strlen(name));
    TRY(need_scalar_or_tensor(s, x));
    if (x->kind != V_TENSOR) {
        ir_id id;
        fe_val v = *x;
        if (dt == IR_I32 && v.kind == V_FLOAT) { /* i32(2.7) truncates like a cast */
            if (!(v.f > -2147483649.0 && v.f < 2147483648.0))
                return err(s, v.loc, "float literal %g does not fit in i32", v.f);
            v.kind = V_INT;
            v.i = (int64_t)v.f;
        }
        TRY(mk_const(s, &v, dt, &id));
        *out = (fe_val){.kind = V_TENSOR, .id = id, .loc = l};
        return true;
    }
    if (dt_of(s, x->id) == dt) {
        *out = *x;
        return true;
    }
    return done(s, ir_add_cast(s->g, x->id, dt), l, out);
}

/* where(c, a, b): c must be bool; a and b combine like a binary op. */
static FE_NOINLINE bool b_where(sema *s, const fe_val *c, const fe_val *a, const fe_val *b,
                                fe_loc l, fe_val *out) {
    TRY(need_scalar_or_tensor(s, c));
    TRY(need_scalar_or_tensor(s, a));
    TRY(need_scalar_or_tensor(s, b));
    ir_dtype ct = c->kind == V_TENSOR ? dt_of(s, c->id) : weak_default(c);
    if (ct != IR_BOOL)
        return err(s, c->loc, "where condition must be bool, got %s", ir_dtype_name(ct));
    ir_id ci, x, y;
    TRY(as_tensor(s, c, &ci));
    ir_dtype cd;
    if (a->kind != V_TENSOR && b->kind != V_TENSOR) {
        cd = (a->kind == V_FLOAT || b->kind == V_FLOAT) ? IR_F32
             : (a->kind == V_INT || b->kind == V_INT)   ? IR_I32
                                                        : IR_BOOL;
    } else {
        cd = compute_dtype(s, FE_OP_EQ, a, b); /* no arithmetic: bool stays bool */
    }
    TRY(operand(s, a, cd, l, &x));
    TRY(operand(s, b, cd, l, &y));
    TRY(check_bcast(s, x, y, l));
    ir_shape ab;
    ir_shape_broadcast(sh_of(s, x), sh_of(s, y), &ab);
    if (!ir_shape_broadcast(sh_of(s, ci), &ab, &ab)) {
        char p[300], q[300], sb[256];
        snprintf(q, sizeof q, "%s%s", ir_dtype_name(cd), ir_shape_str(s->g, &ab, sb, sizeof sb));
        return err(s, l, "cannot broadcast %s with %s", tystr(s, ci, p, sizeof p), q);
    }
    return done(s, ir_add_where(s->g, ci, x, y), l, out);
}

/* The axes bitmask of an axis argument (an int or a tuple of ints). */
static bool axes_of(sema *s, const fe_val *v, unsigned rank, uint32_t *mask) {
    *mask = 0;
    unsigned n = v->kind == V_TUPLE ? v->n : 1;
    for (unsigned i = 0; i < n; i++) {
        const fe_val *e = v->kind == V_TUPLE ? &v->el[i] : v;
        int64_t a = 0;
        int ax = 0;
        TRY(as_int(s, e, "axis", &a));
        TRY(norm_axis(s, a, rank, e->loc, &ax));
        if (*mask & (1u << ax)) return err(s, e->loc, "duplicate axis %lld", (long long)a);
        *mask |= 1u << ax;
    }
    return true;
}

/* sum/mean/max/min(x, axis=, keepdim=): the operand converted as the op's
 * traits ask (sum of bool gives i32, mean of integers f32, max/min keep
 * bool); no axis reduces everything. */
static FE_NOINLINE bool b_reduce(sema *s, const char *name, const fe_val *xv, const fe_val *axis,
                                 const fe_val *keep, fe_loc l, fe_val *out) {
    ir_id x;
    TRY(as_tensor(s, xv, &x));
    unsigned rank = sh_of(s, x)->rank;
    uint32_t mask = rank ? (uint32_t)((1ull << rank) - 1) : 0;
    if (axis) TRY(axes_of(s, axis, rank, &mask));
    bool keepdim = false;
    if (keep) {
        if (keep->kind != V_BOOL) return err(s, keep->loc, "keepdim must be true or false");
        keepdim = keep->i != 0;
    }
    ir_op op = (ir_op)ir_op_parse(name, strlen(name));
    ir_dtype t = dt_of(s, x);
    if (operand_dtype(op, t) != t)
        x = cast_to(s, x, operand_dtype(op, t), l); /* sum(bool): i32; mean(i32): f32 */
    if (mask == 0) {                                /* a scalar: nothing to reduce */
        *out = (fe_val){.kind = V_TENSOR, .id = x, .loc = l};
        return true;
    }
    return done(s, ir_add_reduce(s->g, op, x, mask, keepdim), l, out);
}

/* a @ b over the last two dims; leading dims broadcast. */
static FE_NOINLINE bool b_matmul(sema *s, const fe_val *av, const fe_val *bv, fe_loc l,
                                 fe_val *out) {
    ir_id a = 0, b = 0;
    char x[300], y[300];
    TRY(as_tensor(s, av, &a));
    TRY(as_tensor(s, bv, &b));
    const ir_shape *sa = sh_of(s, a), *sb = sh_of(s, b);
    if (sa->rank < 2)
        return err(s, av->loc, "matmul needs operands of rank >= 2, got %s",
                   tystr(s, a, x, sizeof x));
    if (sb->rank < 2)
        return err(s, bv->loc, "matmul needs operands of rank >= 2, got %s",
                   tystr(s, b, x, sizeof x));
    if (sa->dim[sa->rank - 1] != sb->dim[sb->rank - 2])
        return err(s, l, "matmul inner dims differ: %s @ %s", tystr(s, a, x, sizeof x),
                   tystr(s, b, y, sizeof y));
    ir_shape r;
    if (!ir_shape_matmul(sa, sb, &r))
        return err(s, l, "cannot broadcast the batch dims of %s @ %s", tystr(s, a, x, sizeof x),
                   tystr(s, b, y, sizeof y));
    ir_dtype cd = ir_dtype_promote(dt_of(s, a), dt_of(s, b));
    if (cd == IR_BOOL) return err(s, l, "matmul of bool tensors is not supported");
    if (!ir_dtype_is_float(dt_of(s, a)) && ir_dtype_is_float(cd)) a = cast_to(s, a, cd, l);
    if (!ir_dtype_is_float(dt_of(s, b)) && ir_dtype_is_float(cd)) b = cast_to(s, b, cd, l);
    if (dt_of(s, a) == IR_BOOL) a = cast_to(s, a, IR_I32, l);
    if (dt_of(s, b) == IR_BOOL) b = cast_to(s, b, IR_I32, l);
    return done(s, ir_add_matmul(s->g, a, b), l, out);
}

/* A permute node of x by a valid permutation. */
static bool b_permute_ids(sema *s, ir_id x, const uint8_t *perm, fe_loc l, fe_val *out) {
    return done(s, ir_add_permute(s->g, x, perm), l, out);
}

/* transpose(x, a, b): swaps two axes. */
static FE_NOINLINE bool b_transpose(sema *s, const fe_val *xv, const fe_val *av, const fe_val *bv,
                                    fe_loc l, fe_val *out) {
    ir_id x;
    int64_t a = 0, b = 0;
    int ia = 0, ib = 0;
    TRY(as_tensor(s, xv, &x));
    unsigned rank = sh_of(s, x)->rank;
    TRY(as_int(s, av, "axis", &a));
    TRY(as_int(s, bv, "axis", &b));
    TRY(norm_axis(s, a, rank, av->loc, &ia));
    TRY(norm_axis(s, b, rank, bv->loc, &ib));
    uint8_t perm[IR_MAX_RANK];
    for (unsigned i = 0; i < rank; i++) perm[i] = (uint8_t)i;
    perm[ia] = (uint8_t)ib;
    perm[ib] = (uint8_t)ia;
    return b_permute_ids(s, x, perm, l, out);
}

/* permute(x, (axes...)): a permutation of all axes. */
static FE_NOINLINE bool b_permute(sema *s, const fe_val *xv, const fe_val *pv, fe_loc l,
                                  fe_val *out) {
    ir_id x;
    TRY(as_tensor(s, xv, &x));
    unsigned rank = sh_of(s, x)->rank;
    if (pv->kind != V_TUPLE) return err(s, pv->loc, "permute needs a tuple of axes");
    if (pv->n != rank)
        return err(s, pv->loc, "permute of a rank-%u tensor needs %u axes, got %u", rank, rank,
                   pv->n);
    uint8_t perm[IR_MAX_RANK];
    uint32_t seen = 0;
    for (unsigned i = 0; i < rank; i++) {
        int64_t a = 0;
        int ax = 0;
        TRY(as_int(s, &pv->el[i], "axis", &a));
        TRY(norm_axis(s, a, rank, pv->el[i].loc, &ax));
        if (seen & (1u << ax)) return err(s, pv->el[i].loc, "duplicate axis %lld", (long long)a);
        seen |= 1u << ax;
        perm[i] = (uint8_t)ax;
    }
    return b_permute_ids(s, x, perm, l, out);
}

/* A shape argument: an int or a tuple of ints and symbolic dims. `minus1`
 * (may be NULL) receives the index of a -1 entry, or -1. */
static bool shape_arg(sema *s, const fe_val *v, ir_shape *sh, int *minus1) {
    unsigned n = v->kind == V_TUPLE ? v->n : 1;
    if (v->kind != V_TUPLE && v->kind != V_INT && v->kind != V_DIM)
        return err(s, v->loc, "expected a shape: a tuple of dims");
    if (n > IR_MAX_RANK) return err(s, v->loc, "rank %u exceeds the limit of %d", n, IR_MAX_RANK);
    sh->rank = (uint8_t)n;
    if (minus1) *minus1 = -1;
    for (unsigned i = 0; i < n; i++) {
        const fe_val *e = v->kind == V_TUPLE ? &v->el[i] : v;
        if (e->kind == V_DIM) {
            sh->dim[i] = e->i;
            continue;
        }
        int64_t d = 0;
        TRY(as_int(s, e, "a dim", &d));
        if (d == -1 && minus1 && *minus1 < 0) {
            *minus1 = (int)i;
            sh->dim[i] = 1;
        } else if (d == -1 && minus1) {
            return err(s, e->loc, "only one dim can be -1");
        } else if (d <= 0) {
            return err(s, e->loc, "dims must be positive%s, got %lld", minus1 ? " or -1" : "",
                       (long long)d);
        } else {
            sh->dim[i] = d;
        }
    }
    return true;
}

/* Splits the element count of `sh` into a concrete product (false on
 * overflow) and a sorted list of symbol indices. */
static bool numel_parts(const ir_shape *sh, int skip, int64_t *c, uint32_t *syms, unsigned *ns) {
    *c = 1;
    *ns = 0;
    for (int i = 0; i < sh->rank; i++) {
        if (i == skip) continue;
        if (IR_DIM_IS_SYM(sh->dim[i])) {
            uint32_t x = IR_DIM_SYMIDX(sh->dim[i]);
            unsigned k = (*ns)++;
            while (k > 0 && syms[k - 1] > x) {
                syms[k] = syms[k - 1];
                k--;
            }
            syms[k] = x;
        } else if (!ir_mul_ok(*c, sh->dim[i], c)) {
            return false;
        }
    }
    return true;
}

/* reshape(x, shape): element counts must agree; one -1 is inferred when it
 * resolves to an integer or to exactly one symbolic dim. */
static FE_NOINLINE bool b_reshape(sema *s, const fe_val *xv, const fe_val *shv, fe_loc l,
                                  fe_val *out) {
    ir_id x;
    ir_shape to;
    int m1;
    char p[300], q[300];
    TRY(as_tensor(s, xv, &x));
    TRY(shape_arg(s, shv, &to, &m1));
    int64_t ci, ct;
    uint32_t si[IR_MAX_RANK], st[IR_MAX_RANK];
    unsigned nsi, nst;
    const ir_shape *from = sh_of(s, x);
    if (!numel_parts(from, -1, &ci, si, &nsi) || !numel_parts(&to, m1, &ct, st, &nst))
        return err(s, shv->loc, "reshape: element count overflows");
    /* remove the target's symbols from the input's (multiset difference) */
    uint32_t rest[IR_MAX_RANK];
    unsigned nrest = 0, j = 0;
    bool subset = true;
    for (unsigned i = 0; i < nsi; i++) {
        if (j < nst && st[j] == si[i])
            j++;
        else
            rest[nrest++] = si[i];
    }
    if (j < nst) subset = false;
    if (m1 < 0) {
        if (!subset || nrest || ci != ct)
            return err(s, shv->loc, "cannot reshape %s to %s%s: element counts differ",
                       tystr(s, x, p, sizeof p), ir_dtype_name(dt_of(s, x)),
                       ir_shape_str(s->g, &to, q, sizeof q));
    } else {
        if (!subset || ci % ct != 0)
            return err(s, shv->loc,
                       "cannot reshape %s: its element count is not a multiple of the other dims",
                       tystr(s, x, p, sizeof p));
        if (nrest > 1 || (nrest == 1 && ci / ct != 1))
            return err(s, shv->loc,
                       "cannot infer the -1 of reshape(%s, ...): it would be a product of dims, "
                       "not one dim",
                       tystr(s, x, p, sizeof p));
        to.dim[m1] = nrest == 1 ? IR_DIM_SYM(rest[0]) : ci / ct;
    }
    return done(s, ir_add_reshape(s->g, x, &to), l, out);
}

/* broadcast_to(x, shape): x must broadcast to exactly that shape. */
static FE_NOINLINE bool b_bcast(sema *s, const fe_val *xv, const fe_val *shv, fe_loc l,
                                fe_val *out) {
    ir_id x;
    ir_shape to, r;
    TRY(as_tensor(s, xv, &x));
    TRY(shape_arg(s, shv, &to, NULL));
    if (!ir_shape_broadcast(sh_of(s, x), &to, &r) || !ir_shape_eq(&r, &to)) {
        char p[300], q[300];
        return err(s, l, "cannot broadcast %s to %s", tystr(s, x, p, sizeof p),
                   ir_shape_str(s->g, &to, q, sizeof q));
    }
    return done(s, ir_add_broadcast(s->g, x, &to), l, out);
}

/* slice(x, axis=, start=0, stop=end): Python rules on concrete dims
 * (negative counts from the end, clamped); on a symbolic dim start and
 * stop must be non-negative (stop may be omitted only with start 0). */
static FE_NOINLINE bool b_slice(sema *s, const fe_val *xv, const fe_val *av, const fe_val *bv,
                                const fe_val *ev, fe_loc l, fe_val *out) {
    ir_id x;
    int64_t a = 0, start = 0, stop = 0;
    int ax = 0;
    TRY(as_tensor(s, xv, &x));
    const ir_shape *sh = sh_of(s, x);
    TRY(as_int(s, av, "axis", &a));
    TRY(norm_axis(s, a, sh->rank, av->loc, &ax));
    if (bv) TRY(as_int(s, bv, "start", &start));
    if (ev) TRY(as_int(s, ev, "stop", &stop));
    ir_dim d = sh->dim[ax];
    if (IR_DIM_IS_SYM(d)) {
        if (!ev && start == 0) {
            *out = *xv;
            out->kind = V_TENSOR;
            out->id = x;
            return true;
        }
        if (!ev || start < 0 || stop < 0)
            return err(s, l, "slice of symbolic dim '%s' needs non-negative start and stop",
                       s->g->syms[IR_DIM_SYMIDX(d)].name);
    } else {
        if (!ev) stop = d;
        if (start < 0) start = start + d < 0 ? 0 : start + d;
        if (stop < 0) stop = stop + d < 0 ? 0 : stop + d;
        if (start > d) start = d;
        if (stop > d) stop = d;
    }
    if (stop <= start)
        return err(s, l, "slice of axis %d is empty (start %lld, stop %lld)", ax, (long long)start,
                   (long long)stop);
    return done(s, ir_add_slice(s->g, x, ax, start, stop), l, out);
}

/* concat((a, b, ...), axis=0): same rank, equal dims off the axis, concrete
 * extents on the axis. */
static FE_NOINLINE bool b_concat(sema *s, const fe_val *tv, const fe_val *av, fe_loc l,
                                 fe_val *out) {
    if (tv->kind != V_TUPLE || tv->n == 0)
        return err(s, tv->loc, "concat needs a tuple of tensors");
    ir_id *ids = fe_alloc(s->a, tv->n * sizeof *ids);
    ir_dtype cd = IR_BOOL;
    for (unsigned i = 0; i < tv->n; i++) {
        TRY(as_tensor(s, &tv->el[i], &ids[i]));
        cd = i ? ir_dtype_promote(cd, dt_of(s, ids[i])) : dt_of(s, ids[i]);
    }
    const ir_shape *s0 = sh_of(s, ids[0]);
    if (s0->rank == 0) return err(s, tv->el[0].loc, "concat needs tensors of rank >= 1");
    int64_t a = 0;
    int ax = 0;
    if (av) TRY(as_int(s, av, "axis", &a));
    TRY(norm_axis(s, a, s0->rank, av ? av->loc : l, &ax));
    int64_t total = 0;
    char p[300], q[300];
    for (unsigned i = 0; i < tv->n; i++) {
        const ir_shape *si = sh_of(s, ids[i]);
        bool ok = si->rank == s0->rank;
        for (int k = 0; ok && k < si->rank; k++) ok = k == ax || si->dim[k] == s0->dim[k];
        if (!ok)
            return err(s, tv->el[i].loc, "concat: %s does not match %s outside axis %d",
                       tystr(s, ids[i], p, sizeof p), tystr(s, ids[0], q, sizeof q), ax);
    }
    for (unsigned i = 0; i < tv->n; i++) {
        const ir_shape *si = sh_of(s, ids[i]);
        if (IR_DIM_IS_SYM(si->dim[ax]))
            return err(s, tv->el[i].loc, "concat along symbolic dim '%s' is not supported",
                       s->g->syms[IR_DIM_SYMIDX(si->dim[ax])].name);
        if (!ir_add_ok(total, si->dim[ax], &total)) return err(s, l, "concat: extent overflows");
        if (!ir_dtype_is_float(dt_of(s, ids[i])) || !ir_dtype_is_float(cd))
            ids[i] = cast_to(s, ids[i], cd, l);
    }
    if (tv->n == 1) {
        *out = (fe_val){.kind = V_TENSOR, .id = ids[0], .loc = l};
        return true;
    }
    return done(s, ir_add_concat(s->g, ids, tv->n, ax), l, out);
}

/* _as_dtype(y, like): y cast to like's dtype when like is a float tensor. */
static FE_NOINLINE bool b_asdtype(sema *s, const fe_val *y, const fe_val *like, fe_loc l,
                                  fe_val *out) {
    ir_id a = 0, b = 0;
    TRY(as_tensor(s, y, &a));
    TRY(as_tensor(s, like, &b));
    ir_dtype t = dt_of(s, b);
    *out =
        (fe_val){.kind = V_TENSOR, .id = ir_dtype_is_float(t) ? cast_to(s, a, t, l) : a, .loc = l};
    return !s->failed;
}

/* ---- booleans and the index space ---------------------------------------- */
/* The dtype of a boolean operand; anything but bool is an error that says
 * how to get one. */
static bool need_bool(sema *s, const fe_val *v, const char *opname) {
    TRY(need_scalar_or_tensor(s, v));
    ir_dtype t = v->kind == V_TENSOR ? dt_of(s, v->id) : weak_default(v);
    if (t == IR_BOOL) return true;
    return err(s, v->loc, "'%s' needs bool operands, got %s (compare first, e.g. x != 0)", opname,
               ir_dtype_name(t));
}

/* a & b, a | b on bool operands (folded on literals). */
static FE_NOINLINE bool b_logic(sema *s, int op, const fe_val *a, const fe_val *b, fe_loc l,
                                fe_val *out) {
    const char *name = op == FE_OP_AND ? "&" : "|";
    TRY(need_bool(s, a, name));
    TRY(need_bool(s, b, name));
    if (a->kind != V_TENSOR && b->kind != V_TENSOR) {
        *out = (fe_val){
            .kind = V_BOOL, .i = op == FE_OP_AND ? (a->i && b->i) : (a->i || b->i), .loc = l};
        return true;
    }
    ir_id x, y;
    TRY(as_tensor(s, a, &x));
    TRY(as_tensor(s, b, &y));
    TRY(check_bcast(s, x, y, l));
    return done(s, ir_add_binary(s->g, op == FE_OP_AND ? IR_OP_AND : IR_OP_OR, x, y), l, out);
}

/* ~a on a bool operand (folded on literals). */
static FE_NOINLINE bool b_not(sema *s, const fe_val *a, fe_loc l, fe_val *out) {
    TRY(need_bool(s, a, "~"));
    if (a->kind != V_TENSOR) {
        *out = (fe_val){.kind = V_BOOL, .i = !a->i, .loc = l};
        return true;
    }
    return done(s, ir_add_unary(s->g, IR_OP_NOT, a->id), l, out);
}

/* arange(N): i32[N] holding 0 .. N-1; N an integer literal or a dim name. */
static FE_NOINLINE bool b_arange(sema *s, const fe_val *nv, fe_loc l, fe_val *out) {
    ir_shape sh = {.rank = 1};
    if (nv->kind == V_DIM) {
        sh.dim[0] = nv->i;
    } else {
        int64_t n = 0;
        TRY(as_int(s, nv, "the length of arange", &n));
        if (n <= 0)
            return err(s, nv->loc, "arange needs a positive length, got %lld", (long long)n);
        sh.dim[0] = n;
    }
    return done(s, ir_add_iota(s->g, &sh, 0), l, out);
}

/* iota(SHAPE, axis=A): i32 of SHAPE, each element its index along A. */
static FE_NOINLINE bool b_iota(sema *s, const fe_val *shv, const fe_val *av, fe_loc l,
                               fe_val *out) {
    ir_shape sh;
    int64_t a = 0;
    int ax = 0;
    TRY(shape_arg(s, shv, &sh, NULL));
    if (sh.rank == 0) return err(s, shv->loc, "iota needs a shape of rank >= 1");
    TRY(as_int(s, av, "axis", &a));
    TRY(norm_axis(s, a, sh.rank, av->loc, &ax));
    return done(s, ir_add_iota(s->g, &sh, ax), l, out);
}

/* ---- expressions ------------------------------------------------------- */
static bool eval(sema *s, frame *f, const fe_expr *e, fe_val *out);
static bool call_func(sema *s, frame *caller, const fe_func *fn, const fe_expr *e, fe_val *out);

/* Binds a built-in's arguments: exactly npos positional ones, keywords from
 * its list, required keywords present. Values go to pos[] and kw[] (NULL
 * when absent). */
static bool bind_builtin(sema *s, frame *f, const builtin *b, const fe_expr *e, fe_val *pos,
                         fe_val **kw) {
    const char *hint = e->nkids != b->npos ? fe_arity_hint(b->name, e->nkids > b->npos) : NULL;
    if (hint)
        return err(s, e->loc, "'%s' takes %u positional argument%s, got %u; %s", b->name, b->npos,
                   plural(b->npos), e->nkids, hint);
    if (e->nkids > b->npos && b->kw[0])
        return err(s, e->loc,
                   "'%s' takes %u positional argument%s, got %u; pass %s by keyword (%s=...)",
                   b->name, b->npos, plural(b->npos), e->nkids, b->kw[0], b->kw[0]);
    if (e->nkids != b->npos)
        return err(s, e->loc, "'%s' takes %u positional argument%s, got %u", b->name, b->npos,
                   plural(b->npos), e->nkids);
    for (unsigned i = 0; i < e->nkw; i++) {
        int k = -1;
        for (int j = 0; j < 3 && b->kw[j]; j++)
            if (!strcmp(b->kw[j], e->kw[i].name)) k = j;
        if (k < 0) {
            char hb[128];
            return err(s, e->kw[i].loc, "'%s' has no keyword argument '%s'%s", b->name,
                       e->kw[i].name, mean_hint(e->kw[i].name, b->kw, 3, hb, sizeof hb));
        }
        if (kw[k]) return err(s, e->kw[i].loc, "duplicate keyword argument '%s'", e->kw[i].name);
        kw[k] = fe_alloc(s->a, sizeof *kw[k]);
        TRY(eval(s, f, e->kw[i].val, kw[k]));
    }
    for (int j = 0; j < 3 && b->kw[j]; j++)
        if ((b->required & (1u << j)) && !kw[j])
            return err(s, e->loc, "'%s' missing keyword argument '%s'", b->name, b->kw[j]);
    for (unsigned i = 0; i < e->nkids; i++) TRY(eval(s, f, e->kids[i], &pos[i]));
    return true;
}

/* Evaluates a call of built-in b: binds and checks its arguments, then lowers. */
static bool call_builtin(sema *s, frame *f, const builtin *b, const fe_expr *e, fe_val *out) {
    fe_val pos[3];
    fe_val *kw[3] = {0};
    fe_loc l = e->loc;
    TRY(bind_builtin(s, f, b, e, pos, kw));
    switch ((bkind)b->kind) {
        case B_UNARY: return b_unary(s, b->name, &pos[0], l, out);
        case B_CAST: return b_cast(s, b->name, &pos[0], l, out);
        case B_BINARY:
            return binop(s, OP_IR + ir_op_parse(b->name, strlen(b->name)), &pos[0], &pos[1], l,
                         out);
        case B_WHERE: return b_where(s, &pos[0], &pos[1], &pos[2], l, out);
        case B_REDUCE: return b_reduce(s, b->name, &pos[0], kw[0], kw[1], l, out);
        case B_MATMUL: return b_matmul(s, &pos[0], &pos[1], l, out);
        case B_TRANSPOSE: return b_transpose(s, &pos[0], &pos[1], &pos[2], l, out);
        case B_PERMUTE: return b_permute(s, &pos[0], &pos[1], l, out);
        case B_RESHAPE: return b_reshape(s, &pos[0], &pos[1], l, out);
        case B_BCAST: return b_bcast(s, &pos[0], &pos[1], l, out);
        case B_SLICE: return b_slice(s, &pos[0], kw[0], kw[1], kw[2], l, out);
        case B_CONCAT: return b_concat(s, &pos[0], kw[0], l, out);
        case B_ASDTYPE: return b_asdtype(s, &pos[0], &pos[1], l, out);
        case B_ARANGE: return b_arange(s, &pos[0], l, out);
        case B_IOTA: return b_iota(s, &pos[0], kw[0], l, out);
    }
    return false;
}

/* A call: a built-in (the internal ones only from the prelude) or a function. */
static bool eval_call(sema *s, frame *f, const fe_expr *e, fe_val *out) {
    const builtin *b = find_builtin(e->name);
    if (b && (!b->internal || s->in_prelude)) return call_builtin(s, f, b, e, out);
    const fe_func *fn = find_func(s, e->name);
    if (fn) return call_func(s, f, fn, e, out);
    if (!strcmp(e->name, "bool"))
        return err(s, e->loc, "'bool' is a dtype, not a function (compare instead: x != 0)");
    const char *instead = fe_instead(e->name);
    if (instead) return err(s, e->loc, "unknown function '%s': write %s", e->name, instead);
    char hb[128];
    return err(s, e->loc, "unknown function '%s'%s", e->name, func_hint(s, e->name, hb, sizeof hb));
}

/* Whether fn's declared return types name the dim `name`. */
static bool ret_names_dim(const fe_func *fn, const char *name) {
    for (unsigned i = 0; fn && i < fn->nrets; i++)
        for (unsigned j = 0; fn->rets[i] && j < fn->rets[i]->rank; j++)
            if (fn->rets[i]->dims[j].name && !strcmp(fn->rets[i]->dims[j].name, name)) return true;
    return false;
}

/* A name: a local value, else a symbolic dim of the graph. */
static FE_NOINLINE bool eval_name(sema *s, frame *f, const fe_expr *e, fe_val *out) {
    const fe_val *v = lookup(f, e->name);
    if (v) {
        *out = *v;
        out->loc = e->loc;
        return true;
    }
    int k = ir_sym_find(s->g, e->name);
    if (k >= 0) {
        int64_t val = s->g->syms[k].value;
        *out = (fe_val){
            .kind = V_DIM, .i = val > 0 ? val : IR_DIM_SYM(k), .name = e->name, .loc = e->loc};
        return true;
    }
    if (find_func(s, e->name) || find_builtin(e->name))
        return err(s, e->loc, "'%s' is a function; call it as %s(...)", e->name, e->name);
    if (!strcmp(e->name, "None"))
        return err(
            s, e->loc,
            "tx has no None: leave the argument out (a reduction without axis reduces everything)");
    const char *instead = fe_instead(e->name);
    if (instead) return err(s, e->loc, "unknown name '%s': write %s", e->name, instead);
    if (ret_names_dim(f->fn, e->name))
        return err(s, e->loc,
                   "unknown name '%s': a dim named only in the return type has no size (dims "
                   "are bound by the parameters' shapes, and -D binds only those); add a "
                   "parameter of that shape or write the size as an integer",
                   e->name);
    char hb[128];
    return err(s, e->loc, "unknown name '%s'%s", e->name, name_hint(s, f, e->name, hb, sizeof hb));
}

/* A tuple of values; several return values cannot be an element. */
static bool eval_tuple(sema *s, frame *f, const fe_expr *e, fe_val *out) {
    *out = (fe_val){.kind = V_TUPLE, .n = e->nkids, .loc = e->loc};
    out->el = fe_alloc(s->a, (e->nkids + 1) * sizeof *out->el);
    for (unsigned i = 0; i < e->nkids; i++) {
        TRY(eval(s, f, e->kids[i], &out->el[i]));
        if (out->el[i].kind == V_MULTI) return need_scalar_or_tensor(s, &out->el[i]);
    }
    return true;
}

/* Evaluates `e` in frame `f`. Nesting summed over inlined helpers is bounded
 * so that no program can exhaust the stack. */
static bool eval(sema *s, frame *f, const fe_expr *e, fe_val *out) {
    if (++s->depth > FE_MAX_EVAL_DEPTH) {
        s->depth--;
        return err(s, e->loc, "nesting depth through helper calls exceeds %d", FE_MAX_EVAL_DEPTH);
    }
    bool ok = false;
    memset(out, 0, sizeof *out);
    out->loc = e->loc;
    switch ((fe_expr_kind)e->kind) {
        case FE_E_INT:
            out->kind = V_INT;
            out->i = e->ival;
            ok = true;
            break;
        case FE_E_FLOAT:
            out->kind = V_FLOAT;
            out->f = e->fval;
            ok = true;
            break;
        case FE_E_BOOL:
            out->kind = V_BOOL;
            out->i = e->ival;
            ok = true;
            break;
        case FE_E_NAME: ok = eval_name(s, f, e, out); break;
        case FE_E_TUPLE: ok = eval_tuple(s, f, e, out); break;
        case FE_E_CALL: ok = eval_call(s, f, e, out); break;
        case FE_E_NEG: {
            fe_val a;
            ok = eval(s, f, e->kids[0], &a) && negate(s, &a, e->loc, out);
            break;
        }
        case FE_E_NOT: {
            fe_val a;
            ok = eval(s, f, e->kids[0], &a) && b_not(s, &a, e->loc, out);
            break;
        }
        case FE_E_BIN: {
            fe_val a, b;
            ok = eval(s, f, e->kids[0], &a) && eval(s, f, e->kids[1], &b);
            if (ok && e->op == FE_OP_MATMUL)
                ok = b_matmul(s, &a, &b, e->loc, out);
            else if (ok && (e->op == FE_OP_AND || e->op == FE_OP_OR))
                ok = b_logic(s, e->op, &a, &b, e->loc, out);
            else if (ok)
                ok = binop(s, e->op, &a, &b, e->loc, out);
            break;
        }
    }
    s->depth--;
    return ok;
}

/* ---- declared types ------------------------------------------------------ */
typedef struct dimbind {
    const char *name;
    ir_dim d;
} dimbind;

typedef struct dimenv {
    dimbind *b;
    unsigned n, cap;
    bool entry; /* names resolve through the graph's symbols, not bindings */
} dimenv;

/* The dim a declared name stands for: in the entry, the graph symbol
 * (its value when bound); in a helper, the call's binding, bound here on
 * first use. */
static bool dim_for(sema *s, dimenv *env, const fe_dimx *dx, ir_dim actual, ir_dim *out) {
    if (!dx->name) {
        *out = dx->value;
        return true;
    }
    if (env->entry) {
        int k = ir_sym_find(s->g, dx->name);
        if (k < 0)
            return err(s, dx->loc, "unknown dim '%s': no parameter of '%s' has it", dx->name,
                       s->g->name);
        *out = s->g->syms[k].value > 0 ? s->g->syms[k].value : IR_DIM_SYM(k);
        return true;
    }
    for (unsigned i = 0; i < env->n; i++)
        if (!strcmp(env->b[i].name, dx->name)) {
            *out = env->b[i].d;
            return true;
        }
    if (env->n == env->cap) {
        unsigned cap = env->cap ? 2 * env->cap : 8;
        dimbind *nb = fe_alloc(s->a, cap * sizeof *nb);
        if (env->n) memcpy(nb, env->b, env->n * sizeof *nb);
        env->b = nb;
        env->cap = cap;
    }
    env->b[env->n].name = dx->name;
    env->b[env->n++].d = actual;
    *out = actual;
    return true;
}

/* Whether tensor `id` has declared type `t`; *ok says, false return means an
 * error was reported (unknown dim). */
static bool match_type(sema *s, dimenv *env, const fe_type *t, ir_id id, bool *ok) {
    const ir_shape *sh = sh_of(s, id);
    *ok = dt_of(s, id) == (ir_dtype)t->dtype && sh->rank == t->rank;
    for (unsigned i = 0; *ok && i < t->rank; i++) {
        ir_dim d = 0;
        TRY(dim_for(s, env, &t->dims[i], sh->dim[i], &d));
        *ok = d == sh->dim[i];
    }
    return true;
}

/* Checks returned values against the declared types of `fn`; literals take
 * the declared dtype. The entry (and any function with declared types)
 * returns tensors or literals only. `l` is the return statement. */
static FE_NOINLINE bool check_returns(sema *s, dimenv *env, const fe_func *fn, fe_val *v,
                                      unsigned n, fe_loc l) {
    if (fn->nrets && n != fn->nrets)
        return err(s, l, "'%s' returns %u value%s, declared %u", fn->name, n, plural(n), fn->nrets);
    for (unsigned i = 0; i < n; i++) {
        if (fn->nrets || env->entry)
            TRY(need_scalar_or_tensor(s, &v[i])); /* helpers may return tuples */
        if (v[i].kind != V_TENSOR && fn->nrets) {
            ir_id id;
            TRY(mk_const(s, &v[i], (ir_dtype)fn->rets[i]->dtype, &id));
            v[i] = (fe_val){.kind = V_TENSOR, .id = id, .loc = v[i].loc};
        }
        if (v[i].kind != V_TENSOR || !fn->nrets) continue;
        bool ok;
        TRY(match_type(s, env, fn->rets[i], v[i].id, &ok));
        if (!ok) {
            char p[300], q[300];
            return err(s, v[i].loc, "return value %u is %s, declared %s", i,
                       tystr(s, v[i].id, p, sizeof p), declstr(fn->rets[i], q, sizeof q));
        }
    }
    return true;
}

/* ---- statements ---------------------------------------------------------- */
static FE_NOINLINE bool assign(sema *s, frame *f, const fe_stmt *st) {
    fe_val v;
    TRY(eval(s, f, st->vals[0], &v));
    for (unsigned i = 0; i < st->nnames; i++) {
        const char *why = reserved(s, st->names[i]);
        if (why)
            return err(s, st->name_locs[i], "cannot assign to '%s': it names %s", st->names[i],
                       why);
    }
    if (st->nnames == 1) {
        if (v.kind == V_MULTI) return need_scalar_or_tensor(s, &v);
        bind(s, f, st->names[0], &v);
        if (v.kind == V_TENSOR && !s->in_prelude) name_node(s, v.id, st->names[0]);
        return true;
    }
    if (v.kind == V_MULTI && v.n != st->nnames)
        return err(s, v.loc, "'%s' returns %u value%s, %u names given", v.name, v.n, plural(v.n),
                   st->nnames);
    if (v.kind == V_TUPLE && v.n != st->nnames)
        return err(s, v.loc, "cannot unpack a tuple of %u into %u names", v.n, st->nnames);
    if (v.kind != V_MULTI && v.kind != V_TUPLE)
        return err(s, v.loc, "cannot unpack one value into %u names", st->nnames);
    for (unsigned i = 0; i < st->nnames; i++) {
        bind(s, f, st->names[i], &v.el[i]);
        if (v.el[i].kind == V_TENSOR && !s->in_prelude) name_node(s, v.el[i].id, st->names[i]);
    }
    return true;
}

/* Runs the body of f->fn; the returned values go to *rets. Every body ends
 * with its one return (checked before lowering). */
static bool exec_body(sema *s, frame *f, fe_val **rets, unsigned *nrets, fe_loc *retloc) {
    for (unsigned i = 0; i < f->fn->nbody; i++) {
        const fe_stmt *st = f->fn->body[i];
        if (st->kind == FE_S_ASSIGN) {
            TRY(assign(s, f, st));
            continue;
        }
        *retloc = st->loc;
        fe_val *v = fe_alloc(s->a, (st->nvals + 1) * sizeof *v);
        for (unsigned k = 0; k < st->nvals; k++) {
            TRY(eval(s, f, st->vals[k], &v[k]));
            if (v[k].kind == V_MULTI && st->nvals > 1) return need_scalar_or_tensor(s, &v[k]);
        }
        if (st->nvals == 1 && v[0].kind == V_MULTI) { /* forwards a helper's values */
            fe_val m = v[0];
            *rets = m.el;
            *nrets = m.n;
            for (unsigned k = 0; k < m.n; k++) m.el[k].loc = st->vals[0]->loc;
            return true;
        }
        *rets = v;
        *nrets = st->nvals;
        return true;
    }
    return err(s, f->fn->loc, "missing return in function '%s'", f->fn->name);
}

/* ---- calls of helpers and composites -------------------------------------- */
/* Binds call arguments to fn's parameters: required parameters by position
 * or keyword, defaulted ones (prelude only) by keyword. */
static bool bind_args(sema *s, frame *caller, const fe_func *fn, const fe_expr *e, fe_val *vals) {
    unsigned nreq = 0;
    bool *have = fe_alloc(s->a, fn->nparams + 1); /* small; heap, not stack: calls nest */
    for (unsigned i = 0; i < fn->nparams; i++) nreq += fn->params[i].dflt == NULL;
    if (e->nkids > nreq) {
        unsigned d = 0; /* the first defaulted parameter: keyword-only */
        while (d < fn->nparams && !fn->params[d].dflt) d++;
        if (d < fn->nparams)
            return err(s, e->loc,
                       "'%s' takes %u positional argument%s, got %u; pass %s by keyword (%s=...)",
                       fn->name, nreq, plural(nreq), e->nkids, fn->params[d].name,
                       fn->params[d].name);
        return err(s, e->loc, "'%s' takes %u positional argument%s, got %u", fn->name, nreq,
                   plural(nreq), e->nkids);
    }
    for (unsigned i = 0; i < e->nkids; i++) {
        TRY(eval(s, caller, e->kids[i], &vals[i]));
        have[i] = true;
    }
    for (unsigned i = 0; i < e->nkw; i++) {
        unsigned k = 0;
        while (k < fn->nparams && strcmp(fn->params[k].name, e->kw[i].name)) k++;
        if (k == fn->nparams) {
            const char **c = fe_alloc(s->a, (fn->nparams + 1) * sizeof *c);
            for (unsigned j = 0; j < fn->nparams; j++) c[j] = fn->params[j].name;
            char hb[128];
            return err(s, e->kw[i].loc, "'%s' has no keyword argument '%s'%s", fn->name,
                       e->kw[i].name, mean_hint(e->kw[i].name, c, fn->nparams, hb, sizeof hb));
        }
        if (have[k])
            return err(s, e->kw[i].loc, "'%s' got several values for '%s'", fn->name,
                       e->kw[i].name);
        TRY(eval(s, caller, e->kw[i].val, &vals[k]));
        have[k] = true;
    }
    for (unsigned k = 0; k < fn->nparams; k++) {
        if (have[k]) continue;
        if (!fn->params[k].dflt) {
            if (e->nkw == 0)
                return err(s, e->loc, "'%s' takes %u positional argument%s, got %u", fn->name, nreq,
                           plural(nreq), e->nkids);
            return err(s, e->loc, "'%s' missing argument '%s'", fn->name, fn->params[k].name);
        }
        frame empty = {.fn = fn}; /* defaults are literals: nothing gets bound */
        TRY(eval(s, &empty, fn->params[k].dflt, &vals[k]));
    }
    return true;
}

/* Checks an argument against a typed helper parameter (literals take the
 * declared dtype). */
static FE_NOINLINE bool check_param(sema *s, dimenv *env, const fe_func *fn, const fe_param *p,
                                    fe_val *v) {
    if (!p->type) return true;
    TRY(need_scalar_or_tensor(s, v));
    if (v->kind != V_TENSOR) {
        ir_id id;
        TRY(mk_const(s, v, (ir_dtype)p->type->dtype, &id));
        *v = (fe_val){.kind = V_TENSOR, .id = id, .loc = v->loc};
    }
    bool ok;
    TRY(match_type(s, env, p->type, v->id, &ok));
    if (ok) return true;
    char a[300], b[300];
    return err(s, v->loc, "argument '%s' of '%s' is %s, declared %s", p->name, fn->name,
               tystr(s, v->id, a, sizeof a), declstr(p->type, b, sizeof b));
}

/* Inlines a call of helper or composite `fn`. */
static bool call_func(sema *s, frame *caller, const fe_func *fn, const fe_expr *e, fe_val *out) {
    if (s->inlines >= IR_MAX_NEST)
        return err(s, e->loc, "helper calls nested deeper than %d", IR_MAX_NEST);
    fe_val *vals = ir_xcalloc(fn->nparams + 1, sizeof *vals);
    if (!bind_args(s, caller, fn, e, vals)) {
        free(vals);
        return false;
    }
    bool saved = s->in_prelude;
    fe_loc site = s->site;
    const char *site_fn = s->site_fn;
    if (fn->prelude && !s->in_prelude) {
        s->in_prelude = true;
        s->site = e->loc;
        s->site_fn = fn->name;
    }
    dimenv env = {0};
    frame f = {.fn = fn};
    bool ok = true;
    for (unsigned i = 0; ok && i < fn->nparams; i++) {
        ok = check_param(s, &env, fn, &fn->params[i], &vals[i]);
        bind(s, &f, fn->params[i].name, &vals[i]);
    }
    fe_val *rets = NULL;
    unsigned n = 0;
    fe_loc rl = fn->loc;
    s->inlines++;
    ok = ok && exec_body(s, &f, &rets, &n, &rl) && check_returns(s, &env, fn, rets, n, rl);
    s->inlines--;
    s->in_prelude = saved;
    s->site = site;
    s->site_fn = site_fn;
    frame_free(&f);
    free(vals);
    TRY(ok);
    if (n == 1) {
        *out = rets[0];
        out->loc = e->loc;
    } else {
        *out = (fe_val){.kind = V_MULTI, .n = n, .el = rets, .name = fn->name, .loc = e->loc};
    }
    return true;
}

/* ---- checks over the whole program ------------------------------------------ */
/* Names of a function and its parameters, and the shape of its body: one
 * return, last. */
static bool check_decl(sema *s, unsigned fi) {
    const fe_func *fn = s->p->funcs[fi];
    const char *why = fn->prelude ? NULL : reserved(s, fn->name);
    if (why) return err(s, fn->loc, "'%s' is %s and cannot name a function", fn->name, why);
    if (find_func(s, fn->name) != fn)
        return err(s, fn->loc, "redefinition of function '%s'", fn->name);
    if (fn->nparams > 1024) return err(s, fn->loc, "'%s' has more than 1024 parameters", fn->name);
    for (unsigned i = 0; i < fn->nparams; i++) {
        const fe_param *p = &fn->params[i];
        why = fn->prelude ? NULL : reserved(s, p->name);
        if (why) return err(s, p->loc, "'%s' is %s and cannot name a parameter", p->name, why);
        for (unsigned j = 0; j < i; j++)
            if (!strcmp(fn->params[j].name, p->name))
                return err(s, p->loc, "duplicate parameter '%s'", p->name);
        if (p->dflt && !fn->prelude)
            return err(s, p->loc, "parameter '%s' cannot have a default value", p->name);
    }
    for (unsigned i = 0; i < fn->nbody; i++)
        if (fn->body[i]->kind == FE_S_RETURN && i + 1 < fn->nbody)
            return err(s, fn->body[i + 1]->loc, "unreachable statement after return");
    if (!fn->nbody || fn->body[fn->nbody - 1]->kind != FE_S_RETURN)
        return err(s, fn->loc, "missing return in function '%s'", fn->name);
    return true;
}

typedef struct callvec {
    const fe_expr **v;
    unsigned n, cap;
} callvec;

/* Appends every call inside e (pre-order) to cv. */
static void collect_calls(sema *s, const fe_expr *e, callvec *cv) {
    if (e->kind == FE_E_CALL) {
        if (cv->n == cv->cap) {
            unsigned cap = cv->cap ? 2 * cv->cap : 8;
            const fe_expr **nv = fe_alloc(s->a, cap * sizeof *nv);
            if (cv->n) memcpy(nv, cv->v, cv->n * sizeof *nv);
            cv->v = nv;
            cv->cap = cap;
        }
        cv->v[cv->n++] = e;
    }
    for (unsigned i = 0; i < e->nkids; i++) collect_calls(s, e->kids[i], cv);
    for (unsigned i = 0; i < e->nkw; i++) collect_calls(s, e->kw[i].val, cv);
}

/* The function a call names: its index, -1 for a built-in; reports unknown
 * functions. */
static bool callee(sema *s, const fe_func *from, const fe_expr *c, int *out) {
    const builtin *b = find_builtin(c->name);
    if (b && (!b->internal || from->prelude)) {
        *out = -1;
        return true;
    }
    const fe_fref *f = find_fref(s, c->name);
    if (f) {
        *out = (int)f->idx;
        return true;
    }
    if (!strcmp(c->name, "bool"))
        return err(s, c->loc, "'bool' is a dtype, not a function (compare instead: x != 0)");
    const char *instead = fe_instead(c->name);
    if (instead) return err(s, c->loc, "unknown function '%s': write %s", c->name, instead);
    char hb[128];
    return err(s, c->loc, "unknown function '%s'%s", c->name, func_hint(s, c->name, hb, sizeof hb));
}

typedef struct dfs_item {
    unsigned fi, pos;
    const fe_expr *via; /* the call that entered fi */
} dfs_item;

/* Reports the cycle stack[k..top] closed by call `c`. */
static bool report_cycle(sema *s, const dfs_item *st, unsigned k, unsigned top, const fe_expr *c) {
    const char *f = s->p->funcs[st[k].fi]->name;
    if (k == top) return err(s, c->loc, "recursion: '%s' calls itself", f);
    char path[768];
    size_t n = 0;
    for (unsigned i = k + 1; i <= top && n < sizeof path; i++)
        n += (size_t)snprintf(path + n, sizeof path - n, "%s'%s'", i > k + 1 ? " -> " : "",
                              s->p->funcs[st[i].fi]->name);
    return err(s, st[k + 1].via->loc, "recursion: '%s' calls itself through %s", f, path);
}

/* Unknown functions and recursion (direct or mutual), over every function;
 * iterative so that long call chains cannot exhaust the stack. */
static bool check_calls(sema *s) {
    unsigned nf = s->p->nfuncs;
    callvec *calls = fe_alloc(s->a, (nf + 1) * sizeof *calls);
    uint8_t *color = fe_alloc(s->a, nf + 1);
    dfs_item *st = fe_alloc(s->a, (nf + 1) * sizeof *st);
    for (unsigned i = 0; i < nf; i++) {
        const fe_func *fn = s->p->funcs[i];
        for (unsigned k = 0; k < fn->nparams; k++)
            if (fn->params[k].dflt) collect_calls(s, fn->params[k].dflt, &calls[i]);
        for (unsigned k = 0; k < fn->nbody; k++)
            for (unsigned j = 0; j < fn->body[k]->nvals; j++)
                collect_calls(s, fn->body[k]->vals[j], &calls[i]);
    }
    for (unsigned r = 0; r < nf; r++) {
        if (color[r]) continue;
        unsigned top = 0;
        st[0] = (dfs_item){r, 0, NULL};
        color[r] = 1;
        for (;;) {
            dfs_item *it = &st[top];
            if (it->pos == calls[it->fi].n) {
                color[it->fi] = 2;
                if (top-- == 0) break;
                continue;
            }
            const fe_expr *c = calls[it->fi].v[it->pos++];
            int t = 0;
            TRY(callee(s, s->p->funcs[it->fi], c, &t));
            if (t < 0 || color[t] == 2) continue;
            if (color[t] == 1) {
                unsigned k = 0;
                while (st[k].fi != (unsigned)t) k++;
                return report_cycle(s, st, k, top, c);
            }
            color[t] = 1;
            st[++top] = (dfs_item){(unsigned)t, 0, c};
        }
    }
    return true;
}

/* ---- the entry ----------------------------------------------------------------- */
/* Declares the symbols of the entry's parameter types (in order of first
 * use) and applies the -D bindings. */
static bool entry_symbols(sema *s, const fe_func *fn) {
    for (unsigned i = 0; i < fn->nparams; i++) {
        const fe_param *p = &fn->params[i];
        if (!p->type)
            return err(s, p->loc, "parameter '%s' of entry function '%s' needs a type", p->name,
                       fn->name);
        if (p->type->rank > IR_MAX_RANK)
            return err(s, p->type->loc, "rank %u exceeds the limit of %d", p->type->rank,
                       IR_MAX_RANK);
        for (unsigned k = 0; k < p->type->rank; k++) {
            const fe_dimx *d = &p->type->dims[k];
            if (d->name)
                ir_sym_get(s->g, d->name);
            else if (d->value <= 0)
                return err(s, d->loc, "dims must be positive, got %lld", (long long)d->value);
        }
    }
    for (unsigned i = 0; i < s->opt->ndefines; i++) {
        const fe_define *df = &s->opt->defines[i];
        char nm[80]; /* the name as messages show it: at most 64 bytes */
        snprintf(nm, sizeof nm, "%.64s%s", df->name ? df->name : "",
                 df->name && strlen(df->name) > 64 ? "..." : "");
        int k = ir_sym_find(s->g, df->name ? df->name : "");
        s->failed = true; /* for the early returns below */
        if (df->value <= 0) {
            tx_error(s->d, "-D %s=%lld: the value must be a positive integer", nm,
                     (long long)df->value);
            return false;
        }
        if (k < 0) {
            tx_error(s->d, "-D %s=%lld: no parameter of '%s' has a dim named '%s'", nm,
                     (long long)df->value, fn->name, nm);
            return false;
        }
        if (s->g->syms[k].value > 0 && s->g->syms[k].value != df->value) {
            tx_error(s->d, "-D %s=%lld: '%s' is already bound to %lld", nm, (long long)df->value,
                     nm, (long long)s->g->syms[k].value);
            return false;
        }
        s->failed = false;
        s->g->syms[k].value = df->value;
    }
    return true;
}

/* Adds the entry's inputs and binds them in frame f. */
static bool entry_inputs(sema *s, const fe_func *fn, frame *f) {
    for (unsigned i = 0; i < fn->nparams; i++) {
        const fe_param *p = &fn->params[i];
        ir_shape sh = {.rank = (uint8_t)p->type->rank};
        for (unsigned k = 0; k < p->type->rank; k++) {
            const fe_dimx *d = &p->type->dims[k];
            int si = d->name ? ir_sym_find(s->g, d->name) : -1;
            sh.dim[k] = !d->name                   ? d->value
                        : s->g->syms[si].value > 0 ? s->g->syms[si].value
                                                   : IR_DIM_SYM(si);
        }
        fe_val v;
        TRY(check_shape(s, (ir_dtype)p->type->dtype, &sh, p->type->loc));
        TRY(done(s, ir_add_input(s->g, p->name, (ir_dtype)p->type->dtype, &sh), p->loc, &v));
        bind(s, f, p->name, &v);
        char buf[512];
        unique_name(s, p->name, buf, sizeof buf); /* later values bound to it get "x.1", ... */
    }
    return true;
}

/* Removes operations the outputs do not use (inputs stay: they are the
 * signature). */
static void drop_unused(ir_graph *g) {
    uint8_t *live = ir_xcalloc(g->n, 1);
    live[g->n - 1] = 1;
    for (uint32_t i = g->n; i-- > 0;) {
        ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT) live[i] = 1;
        if (!live[i]) {
            n->flags |= IR_NF_DEAD;
            continue;
        }
        for (unsigned k = 0; k < n->nin; k++) live[ir_in(g, n, k)] = 1;
    }
    free(live);
    ir_compact(g);
}

static bool lower_entry_in(sema *s, const fe_func *fn, frame *f);

/* Lowers entry fn into s->g: inputs, body, checked returns, output; drops
 * unused operations. */
static bool lower_entry(sema *s, const fe_func *fn) {
    frame f = {.fn = fn};
    bool ok = lower_entry_in(s, fn, &f);
    frame_free(&f);
    return ok;
}

/* lower_entry with the entry's frame `fr` owned by the caller. */
static bool lower_entry_in(sema *s, const fe_func *fn, frame *fr) {
    TRY(entry_symbols(s, fn));
    TRY(entry_inputs(s, fn, fr));
    fe_val *rets = NULL;
    unsigned n = 0;
    fe_loc rl = fn->loc;
    dimenv env = {.entry = true};
    TRY(exec_body(s, fr, &rets, &n, &rl));
    TRY(check_returns(s, &env, fn, rets, n, rl));
    ir_id *ids = fe_alloc(s->a, (n + 1) * sizeof *ids);
    for (unsigned i = 0; i < n; i++) TRY(as_tensor(s, &rets[i], &ids[i]));
    fe_val out;
    TRY(done(s, ir_add_output(s->g, ids, n), rl, &out));
    drop_unused(s->g);
    return true;
}

/* Contract in frontend.h. Order: declarations, calls (unknown functions,
 * recursion), entry selection, lowering, verification. */
ir_graph *fe_lower(fe_arena *a, const fe_program *p, const char *file, const fe_options *opt,
                   tx_diag *d) {
    sema s = {.a = a, .d = d, .p = p, .opt = opt, .file = file};
    const fe_func *entry = NULL;
    bool ok = true;
    s.sorted = fe_alloc(a, (p->nfuncs + 1) * sizeof *s.sorted);
    for (unsigned i = 0; i < p->nfuncs; i++) s.sorted[i] = (fe_fref){p->funcs[i], i};
    qsort(s.sorted, p->nfuncs, sizeof *s.sorted, cmp_func);
    for (unsigned i = 0; ok && i < p->nfuncs; i++) ok = check_decl(&s, i);
    ok = ok && check_calls(&s);
    for (unsigned i = 0; ok && i < p->nfuncs; i++)
        if (!p->funcs[i]->prelude && (!opt->entry || !strcmp(p->funcs[i]->name, opt->entry)))
            entry = p->funcs[i];
    if (ok && !entry) {
        tx_error(d, "no function named '%.64s' (--entry)", opt->entry ? opt->entry : "");
        ok = false;
    }
    if (ok) {
        s.g = ir_graph_new(entry->name, file);
        ok = lower_entry(&s, entry) && !s.failed;
    }
    for (unsigned i = 0; i < s.nused; i++) free(s.used[i].name);
    free(s.used);
    if (ok && !ir_verify(s.g, NULL)) {
        tx_error(d, "internal error: the frontend built an invalid graph:");
        ir_verify(s.g, d->out);
        ok = false;
    }
    if (!ok) {
        ir_graph_free(s.g);
        return NULL;
    }
    return s.g;
}
