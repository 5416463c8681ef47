/* ir.c - graph arena, op and dtype tables, builders, uses, compaction. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

/* ---- allocation ---------------------------------------------------------- */
static void oom(void) {
    fputs("txc: error: out of memory\n", stderr);
    exit(1);
}
void *ir_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom();
    return p;
}
void *ir_xcalloc(size_t n, size_t m) {
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p) oom();
    return p;
}
void *ir_xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) oom();
    return p;
}
char *ir_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(ir_xmalloc(n), s, n);
}
bool ir_mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool ir_add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

/* ---- tables ---------------------------------------------------------------- */
static const struct {
    const char *name;
    int size;
    bool is_float;
} dtype_tab[] = {
#define X(e, s, b, f) {s, b, f},
    IR_DTYPES(X)
#undef X
};
static const struct {
    const char *name;
    int arity;
    unsigned traits;
    int flops, issue;
} op_tab[] = {
#define X(e, s, a, t, f, i) {s, a, t, f, i},
    IR_OPS(X)
#undef X
};
/* Every elementwise row charges the model at least one instruction per element. */
#define X(e, s, a, t, f, i) \
    _Static_assert(!((t)&IR_T_ELEM) || (i) >= 1, "elementwise op " s " has no issue count");
IR_OPS(X)
#undef X
static const char *const rk_names[] = {
#define X(e, s) s,
    IR_REGION_KINDS(X)
#undef X
};

const char *ir_dtype_name(ir_dtype t) { return t < IR_NDTYPES ? dtype_tab[t].name : "?"; }
int ir_dtype_size(ir_dtype t) { return t < IR_NDTYPES ? dtype_tab[t].size : 0; }
bool ir_dtype_is_float(ir_dtype t) { return t < IR_NDTYPES && dtype_tab[t].is_float; }
int ir_dtype_parse(const char *s, size_t len) {
    for (int i = 0; i < IR_NDTYPES; i++)
        if (strlen(dtype_tab[i].name) == len && !memcmp(dtype_tab[i].name, s, len)) return i;
    return -1;
}
ir_dtype ir_dtype_promote(ir_dtype a, ir_dtype b) {
    if (a == b) return a;
    bool fa = ir_dtype_is_float(a), fb = ir_dtype_is_float(b);
    if (fa && fb) return IR_F32; /* f16/bf16 mixed, or either with f32 */
    if (fa) return a;
    if (fb) return b;
    return IR_I32; /* i32 with bool */
}
const char *ir_op_name(ir_op op) { return op < IR_NOPS ? op_tab[op].name : "?"; }
int ir_op_arity(ir_op op) { return op < IR_NOPS ? op_tab[op].arity : 0; }
unsigned ir_op_traits(ir_op op) { return op < IR_NOPS ? op_tab[op].traits : 0; }
int ir_op_flops(ir_op op) { return op < IR_NOPS ? op_tab[op].flops : 0; }
int ir_op_issue(ir_op op) { return op < IR_NOPS ? op_tab[op].issue : 0; }
int ir_op_parse(const char *s, size_t len) {
    for (int i = 0; i < IR_NOPS; i++)
        if (strlen(op_tab[i].name) == len && !memcmp(op_tab[i].name, s, len)) return i;
    return -1;
}
const char *ir_region_kind_name(ir_region_kind k) { return k < IR_NRKINDS ? rk_names[k] : "?"; }
const char *ir_red_strategy_name(unsigned s) {
    static const char *const names[] = {"onchip", "online", "multipass", "ksplit"};
    return s < 4 ? names[s] : "?";
}
void ir_print_fusions(FILE *out, unsigned mask, char quote) {
    static const char *const names[] = {"vertical", "horizontal", "epilogue", "attention"};
    const char *sep = "";
    for (unsigned b = 0; b < 4; b++)
        if (mask & (1u << b)) {
            if (quote)
                fprintf(out, "%s%c%s%c", sep, quote, names[b], quote);
            else
                fprintf(out, "%s%s", sep, names[b]);
            sep = ", ";
        }
}

/* ---- shapes -------------------------------------------------------------- */
bool ir_shape_eq(const ir_shape *a, const ir_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dim[i] != b->dim[i]) return false;
    return true;
}
bool ir_shape_is_concrete(const ir_shape *s) {
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i])) return false;
    return true;
}
int64_t ir_shape_numel(const ir_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (IR_DIM_IS_SYM(s->dim[i])) return -1;
        if (!ir_mul_ok(n, s->dim[i], &n)) return -1;
    }
    return n;
}
bool ir_shape_broadcast(const ir_shape *a, const ir_shape *b, ir_shape *out) {
    ir_shape r;
    r.rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r.rank; i++) {
        int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
        ir_dim da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
        if (da == db)
            r.dim[i] = da;
        else if (da == 1)
            r.dim[i] = db;
        else if (db == 1)
            r.dim[i] = da;
        else
            return false;
    }
    *out = r;
    return true;
}
bool ir_shape_matmul(const ir_shape *a, const ir_shape *b, ir_shape *out) {
    if (a->rank < 2 || b->rank < 2) return false;
    if (a->dim[a->rank - 1] != b->dim[b->rank - 2]) return false;
    ir_shape la = *a, lb = *b, lead;
    la.rank -= 2;
    lb.rank -= 2;
    if (!ir_shape_broadcast(&la, &lb, &lead)) return false;
    lead.dim[lead.rank] = a->dim[a->rank - 2];
    lead.dim[lead.rank + 1] = b->dim[b->rank - 1];
    lead.rank += 2;
    *out = lead;
    return true;
}

/* ---- graph ----------------------------------------------------------------- */
ir_graph *ir_graph_new(const char *name, const char *file) {
    ir_graph *g = ir_xcalloc(1, sizeof *g);
    g->name = ir_xstrdup(name ? name : "main");
    g->file = file ? ir_xstrdup(file) : NULL;
    g->strcap = 64;
    g->strs = ir_xcalloc(1, g->strcap);
    g->nstrs = 1; /* offset 0 is the empty string */
    return g;
}
void ir_graph_free(ir_graph *g) {
    if (!g) return;
    for (uint32_t i = 0; i < g->nsyms; i++) free(g->syms[i].name);
    free(g->syms);
    free(g->nodes);
    free(g->args);
    free(g->strs);
    free(g->regions);
    free(g->name);
    free(g->file);
    free(g);
}
static void *dup_mem(const void *p, size_t n) {
    void *q = ir_xmalloc(n);
    if (n) memcpy(q, p, n);
    return q;
}
ir_graph *ir_graph_clone(const ir_graph *g) {
    ir_graph *c = ir_xcalloc(1, sizeof *c);
    *c = *g;
    c->name = ir_xstrdup(g->name);
    c->file = g->file ? ir_xstrdup(g->file) : NULL;
    c->nodes = dup_mem(g->nodes, (size_t)g->n * sizeof *g->nodes);
    c->cap = g->n;
    c->args = dup_mem(g->args, (size_t)g->nargs * sizeof *g->args);
    c->argcap = g->nargs;
    c->syms = dup_mem(g->syms, (size_t)g->nsyms * sizeof *g->syms);
    c->symcap = g->nsyms;
    for (uint32_t i = 0; i < g->nsyms; i++) c->syms[i].name = ir_xstrdup(g->syms[i].name);
    c->strs = dup_mem(g->strs, g->nstrs);
    c->strcap = g->nstrs;
    c->regions = dup_mem(g->regions, (size_t)g->nregions * sizeof *g->regions);
    c->regcap = g->nregions;
    return c;
}
uint32_t ir_intern(ir_graph *g, const char *s) {
    if (!s || !*s) return 0;
    for (uint32_t off = 1; off < g->nstrs; off += (uint32_t)strlen(g->strs + off) + 1)
        if (!strcmp(g->strs + off, s)) return off;
    size_t n = strlen(s) + 1;
    while (g->nstrs + n > g->strcap) {
        g->strcap *= 2;
        g->strs = ir_xrealloc(g->strs, g->strcap);
    }
    uint32_t off = g->nstrs;
    memcpy(g->strs + off, s, n);
    g->nstrs += (uint32_t)n;
    return off;
}
int ir_sym_find(const ir_graph *g, const char *name) {
    for (uint32_t i = 0; i < g->nsyms; i++)
        if (!strcmp(g->syms[i].name, name)) return (int)i;
    return -1;
}
uint32_t ir_sym_get(ir_graph *g, const char *name) {
    int i = ir_sym_find(g, name);
    if (i >= 0) return (uint32_t)i;
    if (g->nsyms == g->symcap) {
        g->symcap = g->symcap ? 2 * g->symcap : 8;
        g->syms = ir_xrealloc(g->syms, g->symcap * sizeof *g->syms);
    }
    g->syms[g->nsyms].name = ir_xstrdup(name);
    g->syms[g->nsyms].value = -1;
    return g->nsyms++;
}

ir_id ir_add(ir_graph *g, ir_op op, ir_dtype dt, const ir_shape *shape, const ir_id *ins,
             unsigned nin) {
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 32;
        g->nodes = ir_xrealloc(g->nodes, g->cap * sizeof *g->nodes);
    }
    while (g->nargs + nin > g->argcap) {
        g->argcap = g->argcap ? 2 * g->argcap : 64;
        g->args = ir_xrealloc(g->args, g->argcap * sizeof *g->args);
    }
    ir_node *n = &g->nodes[g->n];
    memset(n, 0, sizeof *n);
    n->op = (uint16_t)op;
    n->dtype = (uint8_t)dt;
    n->nin = (uint16_t)nin;
    n->inoff = g->nargs;
    if (shape) n->shape = *shape;
    n->region = IR_NONE;
    for (unsigned i = 0; i < nin; i++) g->args[g->nargs++] = ins[i];
    return g->n++;
}
ir_id ir_add_input(ir_graph *g, const char *name, ir_dtype dt, const ir_shape *shape) {
    uint32_t param = 0;
    for (uint32_t i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_INPUT) param++;
    ir_id id = ir_add(g, IR_OP_INPUT, dt, shape, NULL, 0);
    g->nodes[id].a.param = param;
    g->nodes[id].name = ir_intern(g, name);
    return id;
}
ir_id ir_add_const(ir_graph *g, double v, ir_dtype dt) {
    ir_shape s = {0};
    ir_id id = ir_add(g, IR_OP_CONST, dt, &s, NULL, 0);
    g->nodes[id].a.cval = v;
    return id;
}
ir_id ir_add_iota(ir_graph *g, const ir_shape *shape, int axis) {
    ir_id id = ir_add(g, IR_OP_IOTA, IR_I32, shape, NULL, 0);
    g->nodes[id].a.axis = axis;
    return id;
}
ir_id ir_add_pick(ir_graph *g, ir_id src, ir_id idx, const ir_shape *out, int axis, ir_dim len) {
    ir_shape s = *out;
    ir_id ins[2] = {src, idx};
    ir_id id = ir_add(g, IR_OP_PICK, (ir_dtype)g->nodes[src].dtype, &s, ins, 2);
    g->nodes[id].a.pick.axis = axis;
    g->nodes[id].a.pick.len = len;
    return id;
}

/* True when shape in broadcasts to out (aligned at the last axis), with in's extent at out's axis
 * `skip` (when aligned there) allowed to be `len` instead. */
static bool pick_fits(const ir_shape *in, const ir_shape *out, int skip, ir_dim len) {
    if (in->rank > out->rank) return false;
    unsigned off = out->rank - in->rank;
    for (unsigned i = 0; i < in->rank; i++) {
        ir_dim d = in->dim[i], o = out->dim[i + off];
        if (d != 1 && d != o && !((int)(i + off) == skip && d == len)) return false;
    }
    return true;
}

const char *ir_pick_check(const ir_graph *g, const ir_node *n) {
    if (n->op != IR_OP_PICK || n->nin != 2) return "pick takes two inputs";
    const ir_node *src = &g->nodes[ir_in(g, n, 0)], *idx = &g->nodes[ir_in(g, n, 1)];
    int a = n->a.pick.axis;
    if (a < 0 || a >= (int)n->shape.rank || n->shape.dim[a] != 1)
        return "pick axis is not a unit axis of the result";
    if (idx->dtype != IR_I32) return "pick index is not i32";
    if (n->dtype != src->dtype) return "pick result dtype is not its source's";
    if (!pick_fits(&idx->shape, &n->shape, -1, 1)) return "pick index does not broadcast";
    if (!pick_fits(&src->shape, &n->shape, a, n->a.pick.len))
        return "pick source does not fit the result";
    return NULL;
}

ir_id ir_add_unary(ir_graph *g, ir_op op, ir_id x) {
    ir_shape s = g->nodes[x].shape; /* a copy: ir_add may move the node array */
    return ir_add(g, op, (ir_dtype)g->nodes[x].dtype, &s, &x, 1);
}
ir_id ir_add_cast(ir_graph *g, ir_id x, ir_dtype to) {
    ir_shape s = g->nodes[x].shape;
    return ir_add(g, IR_OP_CAST, to, &s, &x, 1);
}
ir_id ir_add_binary(ir_graph *g, ir_op op, ir_id a, ir_id b) {
    ir_shape s;
    if (!ir_shape_broadcast(&g->nodes[a].shape, &g->nodes[b].shape, &s)) s = g->nodes[a].shape;
    ir_dtype dt = (ir_op_traits(op) & IR_T_CMP)
                      ? IR_BOOL
                      : ir_dtype_promote(g->nodes[a].dtype, g->nodes[b].dtype);
    ir_id ins[2] = {a, b};
    return ir_add(g, op, dt, &s, ins, 2);
}
ir_id ir_add_where(ir_graph *g, ir_id c, ir_id a, ir_id b) {
    ir_shape s1, s;
    if (!ir_shape_broadcast(&g->nodes[a].shape, &g->nodes[b].shape, &s1) ||
        !ir_shape_broadcast(&g->nodes[c].shape, &s1, &s))
        s = g->nodes[a].shape;
    ir_id ins[3] = {c, a, b};
    return ir_add(g, IR_OP_WHERE, ir_dtype_promote(g->nodes[a].dtype, g->nodes[b].dtype), &s, ins,
                  3);
}
ir_id ir_add_reduce(ir_graph *g, ir_op op, ir_id x, uint32_t axes, bool keepdim) {
    const ir_shape *in = &g->nodes[x].shape;
    ir_shape s = {0};
    for (int i = 0; i < in->rank; i++) {
        if (axes & (1u << i)) {
            if (keepdim) s.dim[s.rank++] = 1;
        } else {
            s.dim[s.rank++] = in->dim[i];
        }
    }
    ir_id id = ir_add(g, op, (ir_dtype)g->nodes[x].dtype, &s, &x, 1);
    g->nodes[id].a.red.axes = axes;
    g->nodes[id].a.red.keepdim = keepdim;
    return id;
}
ir_id ir_add_matmul(ir_graph *g, ir_id a, ir_id b) {
    ir_shape s;
    if (!ir_shape_matmul(&g->nodes[a].shape, &g->nodes[b].shape, &s)) s = g->nodes[a].shape;
    ir_id ins[2] = {a, b};
    return ir_add(g, IR_OP_MATMUL, ir_dtype_promote(g->nodes[a].dtype, g->nodes[b].dtype), &s, ins,
                  2);
}
ir_id ir_add_permute(ir_graph *g, ir_id x, const uint8_t *perm) {
    const ir_shape *in = &g->nodes[x].shape;
    ir_shape s = {.rank = in->rank};
    for (int i = 0; i < in->rank; i++) s.dim[i] = in->dim[perm[i]];
    ir_id id = ir_add(g, IR_OP_PERMUTE, (ir_dtype)g->nodes[x].dtype, &s, &x, 1);
    memcpy(g->nodes[id].a.perm, perm, s.rank); /* not in->rank: ir_add may move the node array */
    return id;
}
ir_id ir_add_reshape(ir_graph *g, ir_id x, const ir_shape *to) {
    return ir_add(g, IR_OP_RESHAPE, (ir_dtype)g->nodes[x].dtype, to, &x, 1);
}
ir_id ir_add_broadcast(ir_graph *g, ir_id x, const ir_shape *to) {
    return ir_add(g, IR_OP_BROADCAST, (ir_dtype)g->nodes[x].dtype, to, &x, 1);
}
ir_id ir_add_slice(ir_graph *g, ir_id x, int axis, int64_t start, int64_t stop) {
    ir_shape s = g->nodes[x].shape;
    s.dim[axis] = stop > start ? stop - start : 0;
    ir_id id = ir_add(g, IR_OP_SLICE, (ir_dtype)g->nodes[x].dtype, &s, &x, 1);
    g->nodes[id].a.slice.axis = axis;
    g->nodes[id].a.slice.start = start;
    g->nodes[id].a.slice.stop = stop;
    return id;
}
ir_id ir_add_concat(ir_graph *g, const ir_id *xs, unsigned n, int axis) {
    ir_shape s = g->nodes[xs[0]].shape;
    ir_dtype dt = (ir_dtype)g->nodes[xs[0]].dtype;
    for (unsigned i = 1; i < n; i++) {
        const ir_node *o = &g->nodes[xs[i]];
        dt = ir_dtype_promote(dt, o->dtype);
        if (!IR_DIM_IS_SYM(s.dim[axis]) && !IR_DIM_IS_SYM(o->shape.dim[axis]))
            s.dim[axis] += o->shape.dim[axis];
    }
    ir_id id = ir_add(g, IR_OP_CONCAT, dt, &s, xs, n);
    g->nodes[id].a.axis = axis;
    return id;
}
ir_id ir_add_output(ir_graph *g, const ir_id *xs, unsigned n) {
    ir_shape s = {0};
    return ir_add(g, IR_OP_OUTPUT, IR_F32, &s, xs, n);
}

/* ---- uses, rewriting ------------------------------------------------------- */
bool ir_uses_build(const ir_graph *g, ir_uses *u) {
    u->start = ir_xcalloc(g->n + 1, sizeof *u->start);
    u->ids = ir_xcalloc(g->nargs + 1, sizeof *u->ids);
    for (uint32_t i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->nin; k++) u->start[ir_in(g, n, k) + 1]++;
    }
    for (uint32_t i = 0; i < g->n; i++) u->start[i + 1] += u->start[i];
    uint32_t *fill = ir_xcalloc(g->n + 1, sizeof *fill);
    for (uint32_t i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->nin; k++) {
            ir_id v = ir_in(g, n, k);
            u->ids[u->start[v] + fill[v]++] = i;
        }
    }
    free(fill);
    return true;
}
void ir_uses_free(ir_uses *u) {
    free(u->start);
    free(u->ids);
    u->start = u->ids = NULL;
}
void ir_replace_uses(ir_graph *g, ir_id from, ir_id to) {
    for (uint32_t i = from + 1; i < g->n; i++) {
        ir_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->nin; k++)
            if (ir_in(g, n, k) == from) ir_set_in(g, n, k, to);
    }
}
uint32_t ir_compact(ir_graph *g) {
    uint32_t *map = ir_xmalloc((size_t)g->n * sizeof *map);
    uint32_t w = 0, removed = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        if (g->nodes[i].flags & IR_NF_DEAD) {
            map[i] = IR_NONE;
            removed++;
            continue;
        }
        map[i] = w;
        g->nodes[w] = g->nodes[i];
        g->nodes[w].flags &= (uint8_t)~IR_NF_DEAD;
        ir_node *n = &g->nodes[w];
        for (unsigned k = 0; k < n->nin; k++) ir_set_in(g, n, k, map[ir_in(g, n, k)]);
        w++;
    }
    g->n = w;
    free(map);
    return removed;
}
