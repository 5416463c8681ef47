/* simplify.c - algebraic simplification. Every rewrite keeps the node's
 * dtype and shape exactly: a node is replaced by a value of the same dtype
 * and shape, or rewritten in place into a cast or broadcast_to of the
 * simpler value, or left alone. Rewrites:
 *   x+0, 0+x, x-0, x*1, 1*x, x/1, x**1 -> x          (0 may be +0 or -0: see docs)
 *   x*0, 0*x -> 0 for i32 and bool only              (floats: NaN*0, inf*0, -x*0)
 *   neg(neg(x)) -> x;  x**2 -> x*x (exact for floats, wraps like i32 ** 2)
 *   cast to the same dtype -> x; cast(cast(x, m), t) -> cast(x, t) when x's
 *     dtype converts to m without loss (then t == x's dtype gives x itself)
 *   permute(permute(x)) composed; identity permute, reshape or broadcast_to
 *     to the same shape, full slices -> x; reshape(reshape(x)) and
 *     broadcast_to(broadcast_to(x)) collapsed
 *   an elementwise op's input broadcast_to(s) of a rank-0 s -> s, when the
 *     op's shape stays the same.
 * Deliberately not done: x**0.5 -> sqrt(x) (pow(-0, 0.5) is +0 and
 * pow(-inf, 0.5) is +inf), x-x -> 0 and x/x -> 1 (NaN, inf), exp(log(x)) and
 * log(exp(x)) (domain, overflow), f32->f16->f32 casts (they round). */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct simp {
    ir_graph *g;
    uint32_t *uses; /* number of uses of each node, counting pending forwards */
    ir_id *fwd;     /* fwd[i] != i: node i's users are to read fwd[i] instead */
} simp;

/* Counts the uses of every node of g into a new array. */
static uint32_t *count_uses(const ir_graph *g) {
    uint32_t *u = ir_xcalloc(g->n, sizeof *u);
    for (ir_id i = 0; i < g->n; i++)
        for (unsigned k = 0; k < g->nodes[i].nin; k++) u[ir_in(g, &g->nodes[i], k)]++;
    return u;
}

/* Sets input k of node i to v, keeping the use counts. */
static void set_in(simp *s, ir_id i, unsigned k, ir_id v) {
    ir_node *n = &s->g->nodes[i];
    s->uses[ir_in(s->g, n, k)]--;
    s->uses[v]++;
    ir_set_in(s->g, n, k, v);
}

/* Rewrites node i in place into the unary op `op` (cast, broadcast_to) of x, or into mul(x, x) when
 * op is IR_OP_MUL. Keeps dtype, shape, name and location; clears the attributes. */
static void become(simp *s, ir_id i, ir_op op, ir_id x) {
    ir_node *n = &s->g->nodes[i];
    for (unsigned k = 0; k < n->nin; k++) s->uses[ir_in(s->g, n, k)]--;
    n->op = (uint16_t)op;
    n->nin = op == IR_OP_MUL ? 2 : 1;
    for (unsigned k = 0; k < n->nin; k++) {
        ir_set_in(s->g, n, k, x);
        s->uses[x]++;
    }
    memset(&n->a, 0, sizeof n->a);
}

/* Makes every user of node i use the value of x instead, where x computes
 * node i's value up to dtype and shape: same dtype and shape -> the uses
 * move to x (through s->fwd; x inherits i's name when it has none); only
 * the shape differs and x broadcasts to it -> i becomes broadcast_to(x);
 * only the dtype differs -> i becomes cast(x). Returns false (nothing
 * done) when both differ. */
static bool replace_with(simp *s, ir_id i, ir_id x) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i], *v = &g->nodes[x];
    bool same_dt = n->dtype == v->dtype, same_sh = ir_shape_eq(&n->shape, &v->shape);
    if (same_dt && same_sh) {
        s->fwd[i] = x; /* users (all later) are rewritten when the walk reaches them */
        s->uses[x] += s->uses[i];
        s->uses[i] = 0;
        if (!v->name && v->op != IR_OP_CONST) { /* the name moves: names stay unique */
            v->name = n->name;
            n->name = 0;
        }
        return true;
    }
    ir_shape b;
    if (same_dt && ir_shape_broadcast(&v->shape, &n->shape, &b) && ir_shape_eq(&b, &n->shape)) {
        become(s, i, IR_OP_BROADCAST, x);
        return true;
    }
    if (same_sh) {
        become(s, i, IR_OP_CAST, x);
        return true;
    }
    return false;
}

/* True when node id is a CONST, or a broadcast_to of one, whose value (in
 * its dtype) equals `want` (+0 and -0 both equal 0). */
static bool is_value(const ir_graph *g, ir_id id, double want) {
    const ir_node *n = &g->nodes[id];
    if (n->op == IR_OP_BROADCAST) n = &g->nodes[ir_in(g, n, 0)];
    if (n->op != IR_OP_CONST) return false;
    double v = n->a.cval;
    if (n->dtype == IR_I32)
        v = trunc(v);
    else if (n->dtype == IR_BOOL)
        v = v != 0;
    return v == want; /* 0.5, 1, 2 and 0 are exact in every float dtype */
}

/* True when converting any value of dtype `from` to `to` is exact. */
static bool lossless(ir_dtype from, ir_dtype to) {
    if (from == to || from == IR_BOOL) return true;
    return to == IR_F32 && (from == IR_F16 || from == IR_BF16);
}

/* Binary identities of node i (add, sub, mul, div, pow). */
static bool simplify_binary(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i];
    ir_id a = ir_in(g, n, 0), b = ir_in(g, n, 1);
    bool is_int = !ir_dtype_is_float((ir_dtype)n->dtype);
    bool same = n->dtype == g->nodes[a].dtype && ir_shape_eq(&n->shape, &g->nodes[a].shape);
    switch ((ir_op)n->op) {
        case IR_OP_ADD:
            if (is_value(g, b, 0)) return replace_with(s, i, a);
            if (is_value(g, a, 0)) return replace_with(s, i, b);
            return false;
        case IR_OP_SUB: return is_value(g, b, 0) && replace_with(s, i, a);
        case IR_OP_MUL:
            if (is_value(g, b, 1)) return replace_with(s, i, a);
            if (is_value(g, a, 1)) return replace_with(s, i, b);
            if (is_int && is_value(g, b, 0)) return replace_with(s, i, b);
            if (is_int && is_value(g, a, 0)) return replace_with(s, i, a);
            return false;
        case IR_OP_DIV: return is_value(g, b, 1) && replace_with(s, i, a);
        case IR_OP_POW:
            if (is_value(g, b, 1)) return replace_with(s, i, a);
            if (same && n->dtype != IR_BOOL && is_value(g, b, 2)) {
                become(s, i, IR_OP_MUL, a);
                return true;
            }
            return false;
        default: return false;
    }
}

/* Cast rules of node i: same dtype, and chains through a lossless step. */
static bool simplify_cast(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i];
    ir_id x = ir_in(g, n, 0);
    if (g->nodes[x].dtype == n->dtype) return replace_with(s, i, x);
    const ir_node *m = &g->nodes[x];
    if (m->op != IR_OP_CAST) return false;
    ir_id y = ir_in(g, m, 0);
    if (!lossless((ir_dtype)g->nodes[y].dtype, (ir_dtype)m->dtype)) return false;
    if (g->nodes[y].dtype == n->dtype) return replace_with(s, i, y);
    set_in(s, i, 0, y);
    return true;
}

/* View rules of node i: compose chains, drop identities. */
static bool simplify_view(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i];
    ir_id x = ir_in(g, n, 0);
    const ir_node *in = &g->nodes[x];
    bool changed = false;
    if (in->op == n->op && (n->op == IR_OP_RESHAPE || n->op == IR_OP_BROADCAST)) {
        x = ir_in(g, in, 0);
        set_in(s, i, 0, x);
        changed = true;
    } else if (in->op == IR_OP_PERMUTE && n->op == IR_OP_PERMUTE) {
        uint8_t p[IR_MAX_RANK] = {0};
        for (int d = 0; d < n->shape.rank; d++) p[d] = in->a.perm[n->a.perm[d]];
        memcpy(n->a.perm, p, sizeof p);
        x = ir_in(g, in, 0);
        set_in(s, i, 0, x);
        changed = true;
    }
    bool identity = ir_shape_eq(&g->nodes[x].shape, &n->shape);
    if (n->op == IR_OP_PERMUTE)
        for (int d = 0; d < n->shape.rank; d++) identity &= n->a.perm[d] == d;
    if (n->op == IR_OP_SLICE) identity &= n->a.slice.start == 0;
    if (n->op == IR_OP_CONCAT) identity &= n->nin == 1;
    if (identity) return replace_with(s, i, x) || changed;
    return changed;
}

/* Scalar broadcasts feeding elementwise node i: an input broadcast_to(x)
 * with rank-0 x is replaced by x where i's shape stays the same. */
static bool unbroadcast_inputs(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i];
    bool changed = false;
    for (unsigned k = 0; k < n->nin; k++) {
        const ir_node *b = &g->nodes[ir_in(g, n, k)];
        if (b->op != IR_OP_BROADCAST || g->nodes[ir_in(g, b, 0)].shape.rank != 0) continue;
        ir_id x = ir_in(g, b, 0);
        ir_shape sh = {0};
        for (unsigned j = 0; j < n->nin; j++)
            (void)ir_shape_broadcast(&sh, &g->nodes[j == k ? x : ir_in(g, n, j)].shape, &sh);
        if (!ir_shape_eq(&sh, &n->shape)) continue;
        set_in(s, i, k, x);
        changed = true;
    }
    return changed;
}

/* Applies the rules to node i (which has users); true when it changed. */
static bool simplify_node(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i];
    unsigned t = ir_op_traits((ir_op)n->op);
    bool changed = false;
    if ((t & IR_T_ELEM) && n->nin) changed |= unbroadcast_inputs(s, i);
    switch ((ir_op)n->op) {
        case IR_OP_ADD:
        case IR_OP_SUB:
        case IR_OP_MUL:
        case IR_OP_DIV:
        case IR_OP_POW: return simplify_binary(s, i) || changed;
        case IR_OP_NEG: {
            const ir_node *x = &g->nodes[ir_in(g, n, 0)];
            if (x->op == IR_OP_NEG) return replace_with(s, i, ir_in(g, x, 0)) || changed;
            return changed;
        }
        case IR_OP_CAST: return simplify_cast(s, i) || changed;
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT: return simplify_view(s, i) || changed;
        default: return changed;
    }
}

/* Points node i's inputs at their forwarded values. */
static void apply_forwards(simp *s, ir_id i) {
    ir_node *n = &s->g->nodes[i];
    for (unsigned k = 0; k < n->nin; k++) {
        ir_id v = ir_in(s->g, n, k);
        while (s->fwd[v] != v) v = s->fwd[v];
        ir_set_in(s->g, n, k, v);
    }
}

/* One forward walk, linear in the graph size: each node first reads the
 * forwarded values of its inputs, then, when it has users, the rules run on
 * it. Inputs are simplified before their users, so chains collapse in one
 * walk. Nodes left without users stay for dce. Returns true when a rewrite
 * happened. */
bool pass_simplify(ir_graph *g, pass_ctx *c) {
    (void)c;
    simp s = {g, count_uses(g), ir_xmalloc((size_t)g->n * sizeof(ir_id) + 1)};
    for (ir_id i = 0; i < g->n; i++) s.fwd[i] = i;
    bool changed = false;
    for (ir_id i = 0; i < g->n; i++) {
        apply_forwards(&s, i);
        if (s.uses[i] && g->nodes[i].op != IR_OP_INPUT && !ir_is_gen(g, i))
            changed |= simplify_node(&s, i);
    }
    free(s.uses);
    free(s.fwd);
    return changed;
}
