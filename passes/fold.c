/* fold.c - constant folding. A value is "uniform" when every element is
 * the same known scalar: a CONST, or a broadcast_to of a CONST. Folding
 * replaces, in place,
 *  - an elementwise op whose inputs are all uniform,
 *  - a view (permute, reshape, broadcast_to, slice, concat) of uniform values,
 *  - a sum/mean/max/min of a uniform value over a known, non-empty extent,
 * by a CONST (rank 0) or a broadcast_to of a CONST (rank > 0). Elementwise
 * values come from the shared scalar rules of ir/scalar.c (ir_scalar_eval,
 * then ir_scalar_round): computed in double from the inputs' exact values and
 * rounded once to the result dtype, the reference interpreter's own
 * arithmetic, so a folded constant equals what `--device=ref` computes bit
 * for bit. */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Value of elementwise node `n` whose inputs have the uniform values x[]
 * (each in its own dtype): the shared scalar rule (ir_scalar_eval) at the
 * node's compute dtype, rounded once to the result dtype by the store rule,
 * exactly as the reference interpreter computes every element. */
static bool eval_elem(const ir_graph *g, const ir_node *n, const double *x, double *r) {
    double v;
    if (!ir_scalar_eval((ir_op)n->op, ir_elem_compute_dtype(g, n), x, &v)) return false;
    *r = ir_scalar_round(v, (ir_dtype)n->dtype);
    return true;
}

/* Value of reduction `n` of a uniform input with value v, by the shared rule
 * ir_scalar_reduce_uniform: max/min/mean give v over any non-empty extent,
 * sum gives v times the (concrete) count, rounded once to the dtype. */
static bool eval_reduce(const ir_graph *g, const ir_node *n, double v, double *r) {
    const ir_shape *s = &g->nodes[ir_in(g, n, 0)].shape;
    int64_t count = 1;
    bool known = true;
    for (int i = 0; i < s->rank; i++) {
        if (!(n->a.red.axes & (1u << i))) continue;
        if (IR_DIM_IS_SYM(s->dim[i]))
            known = false; /* symbolic dims are positive */
        else if (!ir_mul_ok(count, s->dim[i], &count))
            return false;
    }
    if (count == 0 || n->dtype == IR_BOOL) return false;
    if (n->op == IR_OP_SUM && !known) return false; /* the others do not depend on the count */
    if (n->op == IR_OP_SUM && n->dtype == IR_I32 && count >= (1LL << 31))
        return false; /* exact below */
    double u;
    if (!ir_scalar_reduce_uniform((ir_op)n->op, v, (double)count, &u)) return false;
    if (n->op == IR_OP_SUM && n->dtype == IR_I32) /* wraps like i32 adds: the product modulo 2^32 */
        *r = (double)(int32_t)(uint32_t)((uint64_t)(int64_t)v * (uint64_t)count);
    else
        *r = ir_scalar_round(u, (ir_dtype)n->dtype);
    return true;
}

/* Pass state. Nodes [0, n0) are the graph as it came; constants the pass
 * creates are appended after them and moved behind the parameters at the
 * end (finish), so ids stay stable during the walk. */
typedef struct fold_st {
    ir_graph *g;
    uint32_t n0;
    bool *known;    /* known[i]: every element of node i is val[i] */
    double *val;    /* in node i's dtype */
    ir_id *root;    /* a CONST before i holding exactly val[i] in i's dtype, or IR_NONE */
    uint32_t *slot; /* constants by (dtype, value bits): id + 1; 0 empty */
    uint32_t cap;   /* power of two, more than twice the most constants */
} fold_st;

/* Hash slot where constant (dt, v) is or would go. */
static uint32_t ctab_slot(const fold_st *f, ir_dtype dt, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t h = (bits ^ (bits >> 29) ^ ((uint64_t)dt << 7)) * 0x9e3779b97f4a7c15ull;
    uint32_t s = (uint32_t)(h >> 32) & (f->cap - 1);
    for (;; s = (s + 1) & (f->cap - 1)) {
        if (!f->slot[s]) return s;
        const ir_node *n = &f->g->nodes[f->slot[s] - 1];
        if (n->dtype == dt && !memcmp(&n->a.cval, &v, sizeof v)) return s;
    }
}

/* Records CONST node `id` unless an equal constant is recorded. */
static void ctab_put(fold_st *f, ir_id id) {
    const ir_node *n = &f->g->nodes[id];
    uint32_t s = ctab_slot(f, (ir_dtype)n->dtype, n->a.cval);
    if (!f->slot[s]) f->slot[s] = id + 1;
}

/* Computes known/val/root of node i from its inputs' (already computed)
 * entries. Returns true when node i is fully known but not yet in folded
 * form (a CONST, or a broadcast_to of a CONST). */
static bool eval_node(fold_st *f, ir_id i) {
    const ir_graph *g = f->g;
    const ir_node *n = &g->nodes[i];
    unsigned t = ir_op_traits((ir_op)n->op);
    double x[3] = {0, 0, 0}, *r = &f->val[i];
    f->known[i] = false;
    f->root[i] = IR_NONE;
    if (n->op == IR_OP_CONST) {
        f->root[i] = i;
        *r = ir_scalar_round(n->a.cval, (ir_dtype)n->dtype);
        f->known[i] = true;
        return false; /* already folded */
    }
    if (n->op == IR_OP_INPUT || n->op == IR_OP_OUTPUT || n->op == IR_OP_MATMUL || n->nin == 0)
        return false; /* iota varies */
    if (n->nin > 3 && !(t & IR_T_VIEW)) return false;
    ir_id in0 = ir_in(g, n, 0);
    for (unsigned k = 0; k < n->nin; k++) {
        ir_id v = ir_in(g, n, k);
        if (!f->known[v]) return false;
        if (k < 3) x[k] = f->val[v];
        if (k && (t & IR_T_VIEW) &&
            (memcmp(&f->val[v], &f->val[in0], sizeof x[0]) || g->nodes[v].dtype != n->dtype))
            return false;
    }
    if (t & IR_T_ELEM) return (f->known[i] = eval_elem(g, n, x, r));
    if (t & IR_T_REDUCE) return (f->known[i] = eval_reduce(g, n, x[0], r));
    if (g->nodes[in0].dtype != n->dtype) return false; /* views keep the dtype */
    f->known[i] = true;
    *r = x[0];
    f->root[i] = f->root[in0];
    return !(n->op == IR_OP_BROADCAST && g->nodes[in0].op == IR_OP_CONST);
}

/* Rewrites node i (known) into a CONST, or into a broadcast_to of a CONST
 * that precedes it: its root, an equal constant already in the graph, or a
 * new one appended for finish() to move. Keeps name, location, dtype and
 * shape. */
static void materialise(fold_st *f, ir_id i) {
    ir_graph *g = f->g;
    ir_dtype dt = (ir_dtype)g->nodes[i].dtype;
    double v = f->val[i];
    if (g->nodes[i].shape.rank == 0) {
        ir_node *n = &g->nodes[i];
        n->op = IR_OP_CONST;
        n->nin = 0;
        memset(&n->a, 0, sizeof n->a);
        n->a.cval = v;
        f->root[i] = i;
        ctab_put(f, i);
        return;
    }
    ir_id c = f->root[i];
    if (c == IR_NONE) {
        uint32_t s = ctab_slot(f, dt, v);
        c = f->slot[s] ? f->slot[s] - 1 : ir_add_const(g, v, dt);
        f->slot[s] = c + 1;
    }
    ir_node *n = &g->nodes[i]; /* after ir_add_const, which may move the array */
    n->op = IR_OP_BROADCAST;
    n->nin = 1;
    ir_set_in(g, n, 0, c);
    memset(&n->a, 0, sizeof n->a);
    f->root[i] = c;
}

/* Moves the constants appended during the walk (ids >= n0) to just after
 * the parameters, renumbering every input; restores topological order. */
static void finish(fold_st *f) {
    ir_graph *g = f->g;
    uint32_t n0 = f->n0, k = g->n - n0, pos = 0;
    if (!k) return;
    while (pos < n0 && g->nodes[pos].op == IR_OP_INPUT) pos++;
    for (ir_id i = 0; i < g->n; i++) {
        ir_node *n = &g->nodes[i];
        for (unsigned a = 0; a < n->nin; a++) {
            ir_id v = ir_in(g, n, a);
            ir_set_in(g, n, a, v < pos ? v : v < n0 ? v + k : pos + (v - n0));
        }
    }
    ir_node *tmp = ir_xmalloc((size_t)k * sizeof *tmp);
    memcpy(tmp, &g->nodes[n0], (size_t)k * sizeof *tmp);
    memmove(&g->nodes[pos + k], &g->nodes[pos], (size_t)(n0 - pos) * sizeof *tmp);
    memcpy(&g->nodes[pos], tmp, (size_t)k * sizeof *tmp);
    free(tmp);
}

/* One forward walk, linear in the graph size: every node whose value is
 * fully known becomes a CONST or a broadcast_to of a CONST. Inputs are
 * evaluated before their users, so whole constant subtrees fold in one
 * walk. Unused constants are left for dce. Returns true when a node was
 * rewritten. */
bool pass_fold(ir_graph *g, pass_ctx *c) {
    (void)c;
    fold_st f = {.g = g, .n0 = g->n, .cap = 16};
    while (f.cap <= 4 * (uint64_t)g->n) f.cap *= 2;
    f.known = ir_xcalloc(g->n + 1, sizeof *f.known);
    f.val = ir_xcalloc(g->n + 1, sizeof *f.val);
    f.root = ir_xcalloc(g->n + 1, sizeof *f.root);
    f.slot = ir_xcalloc(f.cap, sizeof *f.slot);
    bool changed = false;
    for (ir_id i = 0; i < f.n0; i++) {
        if (eval_node(&f, i)) {
            materialise(&f, i);
            changed = true;
        } else if (g->nodes[i].op == IR_OP_CONST) {
            ctab_put(&f, i);
        }
    }
    finish(&f);
    free(f.known);
    free(f.val);
    free(f.root);
    free(f.slot);
    return changed;
}
