/* simplify.c - algebraic simplification. Every rewrite keeps the node's
 * dtype and shape exactly: a node is replaced by a value of the same dtype
 * and shape, or rewritten in place into a cast or broadcast_to of the
 * simpler value, or left alone. Rewrites:
 *   x+0, 0+x, x-0, x*1, 1*x, x/1, x**1 -> x          (0 may be +0 or -0: see docs)
 *   x*0, 0*x -> 0 for i32 and bool only              (floats: NaN*0, inf*0, -x*0)
 *   neg(neg(x)) -> x;  x**2 -> x*x (exact for floats, wraps like i32 ** 2)
 *   cast to the same dtype -> x; cast(cast(x, m), t) -> cast(x, t) when x's
 *     dtype converts to m without loss (then t == x's dtype gives x itself)
 *   [simplify.permute_reshape] a permute that keeps the order of its non-unit axes (every
 *     moved axis of extent 1 but one; a symbolic extent counts as non-unit) -> reshape: the
 *     same elements in the same order (at S = 1, `transpose(o, 1, 2)` of [B, H, 1, D])
 *   permute(permute(x)) composed; identity permute, reshape or broadcast_to
 *     to the same shape, full slices -> x; reshape(reshape(x)) and
 *     broadcast_to(broadcast_to(x)) collapsed
 *   an elementwise op's input broadcast_to(s) of a rank-0 s -> s, when the
 *     op's shape stays the same.
 *   op(reshape(t), z) -> reshape(op(t, reshape(z))) for a binary elementwise op,
 *     an elementwise t and a broadcast operand z that reads as a broadcast of t's
 *     shape (simplify.reshape_operand: GroupNorm's per-channel affine after the
 *     group reshape moves into the group domain, where the reduction's kernel takes
 *     it). The new nodes are appended and moved before the rewritten node.
 *   [simplify.slice_of_product] slice(a @ b, last axis, lo:hi) -> a @ slice(b, last axis, lo:hi)
 *     when every user of the product is such a slice, the slices together are at most the
 *     product's columns, and b's slice starts and b's rows are pitched at multiples of 16 bytes
 *     (a tensor map reads the column slice in place); exact: each output element is the same dot
 *     product. Also slice(a @ b + bias, lo:hi) -> a @ slice(b, lo:hi) + slice(bias, lo:hi) for a
 *     bias broadcast along the rows (nn.Linear's, before GEGLU's chunk); exact: each element is
 *     the same sum.
 *   [simplify.iota_extreme] max/min of an iota over its own axis (n indices) -> the constant the
 *     reduction's scalar rule gives over the ends 0 and n-1 (torch's unbiased divisor T - 1
 *     written as max(arange(T))).
 *   [simplify.contract] sum(a * b, axis=k) of a pairwise product -> a' @ b' (passes/contract.c).
 *   [simplify.cast_before_reshape] cast(reshape(y)) -> reshape(cast(y)) for an elementwise y.
 *   [simplify.pick_push] a one-hot pick of F(x, stats) -> F(pick(x), stats) (passes/pickpush.c).
 * Deliberately not done: x**0.5 -> sqrt(x) (pow(-0, 0.5) is +0 and
 * pow(-inf, 0.5) is +inf), x-x -> 0 and x/x -> 1 (NaN, inf), exp(log(x)) and
 * log(exp(x)) (domain, overflow), f32->f16->f32 casts (they round). */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct simp {
    ir_graph *g;
    pass_ctx *c;
    uint32_t *uses;   /* number of uses of each node, counting pending forwards */
    ir_id *fwd;       /* fwd[i] != i: node i's users are to read fwd[i] instead */
    ir_id *owner;     /* appended node n0 + k was made for node owner[k] (nondecreasing) */
    uint32_t n0, cap; /* nodes before the walk; capacity of uses, fwd and owner */
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

/* [simplify.cast_before_reshape]: cast i of reshape(y), y computed elementwise, becomes
 * reshape(cast(y)): the same values, with the cast in y's shape, where y's kernel (a row
 * reduction's domain, [reduction.domain]) computes it instead of a pointwise kernel of the
 * reshaped shape reading y back from HBM. */
static ir_id simp_add(simp *s, ir_id i, ir_op op, ir_dtype dt, const ir_shape *sh, const ir_id *ins,
                      unsigned nin);
static bool cast_before_reshape(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_id r = ir_in(g, &g->nodes[i], 0), y = ir_in(g, &g->nodes[r], 0);
    const ir_node *yn = &g->nodes[y];
    if (!(ir_op_traits((ir_op)yn->op) & IR_T_ELEM) || ir_is_gen(g, y)) return false;
    ir_shape ys = yn->shape;
    ir_id c = simp_add(s, i, IR_OP_CAST, (ir_dtype)g->nodes[i].dtype, &ys, &y, 1);
    become(s, i, IR_OP_RESHAPE, c);
    if (s->c && s->c->explain) {
        char b[96];
        fprintf(s->c->explain,
                "simplify: [simplify.cast_before_reshape] %%%u = %s(reshape(%%%u)): the cast in "
                "%%%u's shape %s, then the reshape (the cast joins the kernel of that domain)\n",
                i, ir_dtype_name((ir_dtype)g->nodes[i].dtype), y, y,
                ir_shape_str(g, &ys, b, sizeof b));
    }
    return true;
}

/* Cast rules of node i: same dtype, and chains through a lossless step. */
static bool simplify_cast(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_node *n = &g->nodes[i];
    ir_id x = ir_in(g, n, 0);
    if (g->nodes[x].dtype == n->dtype) return replace_with(s, i, x);
    const ir_node *m = &g->nodes[x];
    if (m->op == IR_OP_RESHAPE) return cast_before_reshape(s, i);
    if (m->op != IR_OP_CAST) return false;
    ir_id y = ir_in(g, m, 0);
    if (!lossless((ir_dtype)g->nodes[y].dtype, (ir_dtype)m->dtype)) return false;
    if (g->nodes[y].dtype == n->dtype) return replace_with(s, i, y);
    set_in(s, i, 0, y);
    return true;
}

/* True when permute node n of an input of shape `in` keeps the order of every axis whose
 * extent is not a concrete 1 (symbolic extents count as not 1): the row-major order of the
 * elements is then unchanged, so the permute reads the same bytes as a reshape. */
static bool permute_is_reshape(const ir_node *n, const ir_shape *in) {
    int last = -1;
    for (int d = 0; d < n->shape.rank; d++) {
        int a = n->a.perm[d];
        if (in->dim[a] == 1) continue;
        if (a < last) return false;
        last = a;
    }
    return true;
}

/* [simplify.permute_reshape]: permute node i that keeps the order of its non-unit axes becomes
 * reshape(x) (x's own input when x is a reshape): exact, the same elements in the same order (at
 * S = 1, `transpose(o, 1, 2)` of [B, H, 1, D]). A later reshape of it then collapses, and the
 * view reads as a dense buffer. */
static bool permute_reshape(simp *s, ir_id i) {
    ir_graph *g = s->g;
    ir_id x = ir_in(g, &g->nodes[i], 0);
    if (!permute_is_reshape(&g->nodes[i], &g->nodes[x].shape)) return false;
    if (g->nodes[x].op == IR_OP_RESHAPE) x = ir_in(g, &g->nodes[x], 0);
    if (s->c && s->c->explain) {
        char b1[96], b2[96];
        fprintf(s->c->explain,
                "simplify: [simplify.permute_reshape] %%%u = permute of %s to %s moves only unit "
                "axes: a reshape (the same bytes)\n",
                i, ir_shape_str(g, &g->nodes[ir_in(g, &g->nodes[i], 0)].shape, b1, sizeof b1),
                ir_shape_str(g, &g->nodes[i].shape, b2, sizeof b2));
    }
    become(s, i, IR_OP_RESHAPE, x);
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
    if (n->op == IR_OP_PERMUTE) return permute_reshape(s, i) || changed;
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

/* Appends a node made for node i (inputs existing, placed before i by put_before_owners);
 * copies i's location. Returns its id. */
static ir_id simp_add(simp *s, ir_id i, ir_op op, ir_dtype dt, const ir_shape *sh, const ir_id *ins,
                      unsigned nin) {
    ir_graph *g = s->g;
    if (g->n >= s->cap) {
        s->cap = 2 * s->cap + 16;
        s->uses = ir_xrealloc(s->uses, s->cap * sizeof *s->uses);
        s->fwd = ir_xrealloc(s->fwd, s->cap * sizeof *s->fwd);
        s->owner = ir_xrealloc(s->owner, s->cap * sizeof *s->owner);
    }
    ir_id id = ir_add(g, op, dt, sh, ins, nin);
    g->nodes[id].line = g->nodes[i].line, g->nodes[id].col = g->nodes[i].col;
    s->uses[id] = 0, s->fwd[id] = id, s->owner[id - s->n0] = i;
    for (unsigned k = 0; k < nin; k++) s->uses[ins[k]]++;
    return id;
}

/* Moves the nodes appended during the walk (ids >= n0) each just before the node it was made
 * for, renumbering every input; restores topological order (their inputs precede that node). */
static void put_before_owners(simp *s) {
    ir_graph *g = s->g;
    uint32_t n = g->n, k = n - s->n0, j = 0, pos = 0;
    if (!k) return;
    ir_id *to = ir_xmalloc((size_t)n * sizeof *to);
    for (ir_id i = 0; i < s->n0; i++) {
        while (j < k && s->owner[j] == i) to[s->n0 + j++] = pos++;
        to[i] = pos++;
    }
    ir_node *tmp = ir_xmalloc((size_t)n * sizeof *tmp);
    for (ir_id i = 0; i < n; i++) {
        ir_node *nd = &g->nodes[i];
        for (unsigned a = 0; a < nd->nin; a++) ir_set_in(g, nd, a, to[ir_in(g, nd, a)]);
        tmp[to[i]] = *nd;
    }
    memcpy(g->nodes, tmp, (size_t)n * sizeof *tmp);
    free(tmp);
    free(to);
}

/* The shape z (broadcast onto s) takes when read in t's shape, where s is a reshape of t: the
 * dims of s and t are matched in groups of equal products (a symbolic dim only with itself, 1s
 * alone); a group where z is all 1 gives 1s, one where z has s's extents gives t's. False when z
 * covers a group partly or the shapes do not regroup. */
static bool regroup_operand(const ir_shape *s, const ir_shape *t, const ir_shape *z, ir_shape *o) {
    int zo = s->rank - z->rank, i = 0, j = 0;
    if (zo < 0) return false;
    o->rank = t->rank;
    while (i < s->rank || j < t->rank) {
        int i0 = i, j0 = j;
        if (i < s->rank && s->dim[i] == 1) {
            i++;
        } else if (j < t->rank && t->dim[j] == 1) {
            o->dim[j++] = 1;
            continue;
        } else if (i < s->rank && j < t->rank && s->dim[i] == t->dim[j]) {
            i++, j++;
        } else {
            int64_t ps = 1, pt = 1;
            do {
                if (ps <= pt && i < s->rank && s->dim[i] > 0)
                    ps *= s->dim[i++];
                else if (j < t->rank && t->dim[j] > 0)
                    pt *= t->dim[j++];
                else
                    return false;
            } while (ps != pt && ps < (INT64_C(1) << 40) && pt < (INT64_C(1) << 40));
            if (ps != pt) return false;
        }
        bool ones = true, full = true;
        for (int a = i0; a < i; a++) {
            int64_t zd = a < zo ? 1 : z->dim[a - zo];
            ones &= zd == 1, full &= zd == s->dim[a];
        }
        if (!ones && !full) return false;
        for (int b = j0; b < j; b++) o->dim[b] = ones ? 1 : t->dim[b];
    }
    return true;
}

/* simplify.reshape_operand (see the top): binary elementwise node i = op(reshape(t), z) of t
 * elementwise and z a smaller broadcast operand becomes reshape(op(t, reshape(z, z'))). */
static bool reshape_operand(simp *s, ir_id i) {
    ir_graph *g = s->g;
    const ir_node *n = &g->nodes[i];
    if (n->nin != 2) return false;
    for (unsigned k = 0; k < 2; k++) {
        ir_id r = ir_in(g, n, k), z = ir_in(g, n, 1 - k);
        const ir_node *rn = &g->nodes[r];
        if (rn->op != IR_OP_RESHAPE || !ir_shape_eq(&rn->shape, &n->shape)) continue;
        ir_id t = ir_in(g, rn, 0);
        const ir_node *tn = &g->nodes[t];
        if (!(ir_op_traits((ir_op)tn->op) & IR_T_ELEM) || !tn->nin) continue;
        int64_t zn = ir_shape_numel(&g->nodes[z].shape), nn = ir_shape_numel(&n->shape);
        if (g->nodes[z].shape.rank == 0 || zn <= 1 || (nn >= 0 && zn >= nn) || zn < 0) continue;
        ir_shape zs, ts = tn->shape;
        if (!regroup_operand(&n->shape, &ts, &g->nodes[z].shape, &zs)) continue;
        ir_dtype ndt = (ir_dtype)n->dtype;
        ir_op op = (ir_op)n->op, top = (ir_op)tn->op; /* the nodes move as simp_add appends */
        ir_id zr = simp_add(s, i, IR_OP_RESHAPE, (ir_dtype)g->nodes[z].dtype, &zs, &z, 1);
        ir_id ins[2];
        ins[k] = t, ins[1 - k] = zr;
        ir_id m = simp_add(s, i, op, ndt, &ts, ins, 2);
        if (s->c && s->c->explain) {
            char b1[128], b2[128], b3[128], b4[128];
            fprintf(
                s->c->explain,
                "%u:%u: [simplify.reshape_operand] %s %s of a reshape of %s computed as %s, its "
                "operand %s read as %s: the elementwise work joins the kernel of the value "
                "before the reshape\n",
                g->nodes[i].line, g->nodes[i].col, ir_op_name(op),
                ir_shape_str(g, &g->nodes[i].shape, b1, sizeof b1), ir_op_name(top),
                ir_shape_str(g, &ts, b2, sizeof b2),
                ir_shape_str(g, &g->nodes[z].shape, b3, sizeof b3),
                ir_shape_str(g, &zs, b4, sizeof b4));
        }
        become(s, i, IR_OP_RESHAPE, m);
        return true;
    }
    return false;
}

/* [simplify.iota_extreme] max or min node i of an iota x over axes that include the iota's own
 * axis, of concrete extent n > 0: the iota's values along that axis are its indices 0 .. n-1
 * stored in x's dtype (a non-decreasing sequence: the store rounding is monotone) and constant
 * along every other axis, so the reduction's shared scalar rule over the two ends gives every
 * element of the result. Node i becomes that constant (or a broadcast of it). */
static bool iota_extreme(simp *s, ir_id i) {
    ir_graph *g = s->g;
    const ir_node *n = &g->nodes[i], *x = &g->nodes[ir_in(g, n, 0)];
    if (x->op != IR_OP_IOTA || x->a.axis < 0 || x->a.axis >= x->shape.rank) return false;
    int ax = x->a.axis;
    ir_dim ext = x->shape.dim[ax];
    if (!(n->a.red.axes & (1u << ax)) || IR_DIM_IS_SYM(ext) || ext < 1) return false;
    ir_op op = (ir_op)n->op;
    ir_dtype dt = (ir_dtype)n->dtype, xdt = (ir_dtype)x->dtype;
    double acc, v;
    if (!ir_scalar_reduce_init(op, &acc)) return false;
    double ends[2] = {ir_scalar_round(0.0, xdt), ir_scalar_round((double)(ext - 1), xdt)};
    for (int k = 0; k < 2; k++)
        if (!ir_scalar_reduce_step(op, dt, acc, ends[k], &acc)) return false;
    if (!ir_scalar_reduce_finish(op, dt, acc, 2.0, &v)) return false;
    v = ir_scalar_round(v, dt);
    if (s->c && s->c->explain)
        fprintf(s->c->explain,
                "%u:%u: [simplify.iota_extreme] %%%u = %s of an iota along its own axis %d (%lld "
                "indices): the constant %g\n",
                n->line, n->col, i, ir_op_name(op), ax, (long long)ext, v);
    ir_shape sc = {0};
    ir_id c = simp_add(s, i, IR_OP_CONST, dt, &sc, NULL, 0);
    g->nodes[c].a.cval = v;
    return replace_with(s, i, c);
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
        case IR_OP_POW:
            if (simplify_binary(s, i)) return true;
            return reshape_operand(s, i) || changed;
        case IR_OP_NEG: {
            const ir_node *x = &g->nodes[ir_in(g, n, 0)];
            if (x->op == IR_OP_NEG) return replace_with(s, i, ir_in(g, x, 0)) || changed;
            return changed;
        }
        case IR_OP_CAST: return simplify_cast(s, i) || changed;
        case IR_OP_MAX:
        case IR_OP_MIN: return iota_extreme(s, i) || changed;
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT: return simplify_view(s, i) || changed;
        default: return changed;
    }
}

/* The product under node p for [simplify.slice_of_product]: p itself when it is a matmul; for
 * p = mm + bias (either order) whose matmul mm is read only by p, of p's shape and dtype, and
 * whose bias is broadcast along the rows (rank at most p's, every dim 1 but the last, which is
 * 1 or p's columns), mm, with the bias and its operand index in *bias, *bk. IR_NONE otherwise.
 * u covers the first n0 nodes only: an input added by an earlier rewrite (>= n0) is not a
 * candidate. */
static ir_id product_of(const ir_graph *g, const ir_uses *u, uint32_t n0, ir_id p, ir_id *bias,
                        unsigned *bk) {
    const ir_node *n = &g->nodes[p];
    *bias = IR_NONE;
    if (n->op == IR_OP_MATMUL) return p;
    if (n->op != IR_OP_ADD) return IR_NONE;
    unsigned r = n->shape.rank;
    for (unsigned k = 0; k < 2; k++) {
        ir_id m = ir_in(g, n, k), b = ir_in(g, n, 1 - k);
        const ir_node *mn = &g->nodes[m], *bn = &g->nodes[b];
        if (m >= n0 || mn->op != IR_OP_MATMUL || ir_nuses(u, m) != 1 || mn->dtype != n->dtype ||
            !ir_shape_eq(&mn->shape, &n->shape) || r < 2 || bn->shape.rank > r ||
            bn->shape.rank < 1)
            continue;
        bool rows = true;
        for (unsigned d = 0; d + 1 < bn->shape.rank; d++) rows &= bn->shape.dim[d] == 1;
        ir_dim last = bn->shape.dim[bn->shape.rank - 1];
        if (!rows || (last != 1 && last != n->shape.dim[r - 1])) continue;
        *bias = b, *bk = 1 - k;
        return m;
    }
    return IR_NONE;
}

/* Whether p, a product or a biased product (product_of gives its matmul m), is read only by
 * slices of its last axis whose widths add up to at most its columns, each starting at a multiple
 * of 16 bytes of B's rows, which are a multiple of 16 bytes too ([simplify.slice_of_product]). */
static bool slices_only(const ir_graph *g, const ir_uses *u, ir_id p, ir_id m) {
    const ir_node *n = &g->nodes[m];
    const ir_node *b = &g->nodes[ir_in(g, n, 1)];
    unsigned r = n->shape.rank;
    if (r < 2 || b->shape.rank < 2 || !ir_nuses(u, p)) return false;
    ir_dim cols = n->shape.dim[r - 1];
    int64_t es = (int64_t)ir_dtype_size((ir_dtype)b->dtype), width = 0;
    if (IR_DIM_IS_SYM(cols) || (cols * es) % 16 != 0) return false;
    for (uint32_t k = u->start[p]; k < u->start[p + 1]; k++) {
        const ir_node *s = &g->nodes[u->ids[k]];
        if (s->op != IR_OP_SLICE || s->a.slice.axis != (int32_t)r - 1 ||
            (s->a.slice.start * es) % 16 != 0)
            return false;
        width += s->a.slice.stop - s->a.slice.start;
    }
    return width <= cols;
}

void pass_place_appended(ir_graph *g, uint32_t n0, const ir_id *before) {
    uint32_t n = g->n, k = n - n0;
    if (!k) return;
    uint32_t *cnt = ir_xcalloc(n0 + 1, sizeof *cnt), *pos = ir_xmalloc((size_t)n * sizeof *pos);
    for (uint32_t j = 0; j < k; j++) cnt[before[j] + 1]++;
    for (ir_id i = 0; i < n0; i++) cnt[i + 1] += cnt[i]; /* cnt[i]: appended before node i */
    for (uint32_t j = 0; j < k; j++) pos[n0 + j] = before[j] + cnt[before[j]]++;
    for (ir_id i = 0; i < n0; i++) pos[i] = i + cnt[i]; /* cnt[i] now counts those before i too */
    for (ir_id i = 0; i < n; i++) {
        ir_node *nd = &g->nodes[i];
        for (unsigned a = 0; a < nd->nin; a++) ir_set_in(g, nd, a, pos[ir_in(g, nd, a)]);
    }
    ir_node *tmp = ir_xmalloc((size_t)n * sizeof *tmp);
    for (ir_id i = 0; i < n; i++) tmp[pos[i]] = g->nodes[i];
    memcpy(g->nodes, tmp, (size_t)n * sizeof *tmp);
    free(tmp);
    free(pos);
    free(cnt);
}

/* See passes.h. */
ir_id pass_placed_at(ir_graph *g, pass_placed *p, ir_id id, ir_id i) {
    if (p->n >= p->cap)
        p->before = ir_xrealloc(p->before, (p->cap = 2 * p->cap + 16) * sizeof *p->before);
    p->before[p->n++] = i;
    g->nodes[id].line = g->nodes[i].line, g->nodes[id].col = g->nodes[i].col;
    return id;
}

/* See passes.h. */
void pass_placed_apply(ir_graph *g, uint32_t n0, pass_placed *p) {
    pass_place_appended(g, n0, p->before);
    free(p->before);
    *p = (pass_placed){0};
}

/* Appends the column slice lo:hi of the last axis of bias (when its last dim is not 1; else bias
 * itself) added to product q in the operand order of the original add (bias operand bk), with
 * dtype dt, placed before node i (p). Returns the sum. */
static ir_id add_bias_slice(ir_graph *g, ir_id q, ir_id bias, unsigned bk, ir_dtype dt, int64_t lo,
                            int64_t hi, ir_id i, pass_placed *p) {
    int ax = g->nodes[bias].shape.rank - 1;
    ir_id bs = bias;
    if (g->nodes[bias].shape.dim[ax] != 1)
        bs = pass_placed_at(g, p, ir_add_slice(g, bias, ax, lo, hi), i);
    ir_id ins[2];
    ins[bk] = bs, ins[1 - bk] = q;
    ir_shape sh = g->nodes[q].shape;
    return pass_placed_at(g, p, ir_add(g, IR_OP_ADD, dt, &sh, ins, 2), i);
}

/* [simplify.slice_of_product] on every product (or biased product, product_of) of g that
 * slices_only accepts: each slice i becomes a new a @ slice(b) (plus the bias's matching column
 * slice), placed before i, which takes i's users and name (i and the product are left for dce).
 * Says each rewrite on c->explain. Returns true when one happened. */
static bool slice_products(ir_graph *g, pass_ctx *c) {
    ir_uses u;
    if (!ir_uses_build(g, &u)) return false;
    uint32_t n0 = g->n;
    pass_placed pl = {0};
    for (ir_id p = 0; p < n0; p++) {
        ir_id bias;
        unsigned bk = 0;
        ir_id m = product_of(g, &u, n0, p, &bias, &bk);
        if (m == IR_NONE || !slices_only(g, &u, p, m)) continue;
        for (uint32_t k = u.start[p]; k < u.start[p + 1]; k++) {
            ir_id i = u.ids[k], a = ir_in(g, &g->nodes[m], 0), b = ir_in(g, &g->nodes[m], 1);
            int64_t lo = g->nodes[i].a.slice.start, hi = g->nodes[i].a.slice.stop;
            int axis = g->nodes[b].shape.rank - 1;
            ir_dtype pdt = (ir_dtype)g->nodes[p].dtype;
            ir_id bs = pass_placed_at(g, &pl, ir_add_slice(g, b, axis, lo, hi), i);
            ir_id q = pass_placed_at(g, &pl, ir_add_matmul(g, a, bs), i);
            if (bias != IR_NONE) q = add_bias_slice(g, q, bias, bk, pdt, lo, hi, i, &pl);
            ir_node *qn = &g->nodes[q], *in = &g->nodes[i];
            qn->name = in->name, in->name = 0;
            ir_replace_uses(g, i, q);
            if (c && c->explain)
                fprintf(c->explain,
                        "simplify: [simplify.slice_of_product] %%%u = slice(%%%u, axis=-1, "
                        "%lld:%lld) of the %sproduct %%%u = %%%u @ %%%u: %%%u @ slice(%%%u, "
                        "%lld:%lld)%s, columns from byte %lld of %lld-byte rows\n",
                        i, p, (long long)lo, (long long)hi, bias != IR_NONE ? "biased " : "", m, a,
                        b, a, b, (long long)lo, (long long)hi,
                        bias != IR_NONE ? " + the bias's columns" : "",
                        (long long)(lo * (int64_t)ir_dtype_size(g->nodes[b].dtype)),
                        (long long)(g->nodes[b].shape.dim[axis] *
                                    (int64_t)ir_dtype_size(g->nodes[b].dtype)));
        }
    }
    ir_uses_free(&u);
    bool changed = pl.n > 0;
    pass_placed_apply(g, n0, &pl);
    return changed;
}

/* [simplify.small_k] unrolls products of a bound contraction extent up to this. The pointwise
 * form reads 2K operand elements for each output element (a[i, k] and b[k, j]; the operands are
 * N / K and M / K times smaller than the output, so they come from L1 / L2) and issues about 4K
 * instructions for it (two converts of 16-bit operands, a multiply, an add per k). The store of
 * an output element is 2 bytes (16-bit) or 4 (f32) of HBM; at the model's rates for an H200
 * (4800 GB/s; 132 SMs x 128 lanes x 1.98 GHz) that leaves about 14 or 28 instructions per
 * element before issue binds. At K <= 8 the f32 sum stays bound by its stores and the 16-bit one
 * within about 3x of them ([8191, 8] @ [8, 4099] bf16: 30.2 us predicted, 14.0 us of HBM; the
 * model does not charge the convert inside b's promoted multiply, about 4 us more there),
 * with the epilogue (bias, activation) in the same kernel and every store coalesced; the SIMT
 * GEMM's single k step of one tile (8 x 8 outputs a thread) measured 165 us for K = 7 with its
 * sigmoid epilogue on the H200. Above 8 the unrolled sum's issue grows past the SIMT kernel's,
 * whose register tile reuses each loaded operand 8 times. */
enum { SIMP_SMALL_K_MAX = 8 };

/* x converted to f32 (x itself when it is f32), appended before node i. */
static ir_id f32_of(ir_graph *g, pass_placed *p, ir_id x, ir_id i) {
    if (g->nodes[x].dtype == IR_F32) return x;
    return pass_placed_at(g, p, ir_add_cast(g, x, IR_F32), i);
}

/* Whether product m may be one of the two products of an attention pattern softmax(F(q @ kT)) @ v,
 * which the fuser recognises and plans as one kernel: m's value reaches the A operand of another
 * product through elementwise nodes, views and at least one reduction (the softmax's max and
 * sum), or m's A operand is reached that way from another product. A walk over u (users) forward
 * and over inputs backward; each node is visited at most twice (without, then with a reduction
 * passed). */
static bool attention_product(const ir_graph *g, const ir_uses *u, ir_id m) {
    const unsigned mask = IR_T_ELEM | IR_T_VIEW | IR_T_REDUCE;
    uint8_t *seen = ir_xcalloc(g->n, 1);
    ir_id *st = ir_xmalloc(2 * (size_t)g->n * sizeof *st);
    uint8_t *sb = ir_xmalloc(2 * (size_t)g->n);
    bool found = false;
    for (int dir = 0; dir < 2 && !found; dir++) { /* 0: forward from m, 1: backward from A */
        unsigned sp = 0;
        memset(seen, 0, g->n);
        st[sp] = dir ? ir_in(g, &g->nodes[m], 0) : m, sb[sp++] = 1;
        seen[st[0]] = 1;
        while (sp && !found) {
            ir_id y = st[--sp];
            uint8_t bits = sb[sp];
            const ir_node *n = &g->nodes[y];
            if (y != m && n->op == IR_OP_MATMUL) {
                found = dir == 1 && (bits & 2);
                continue;
            }
            if (y != m && !(ir_op_traits((ir_op)n->op) & mask)) continue;
            if (ir_op_traits((ir_op)n->op) & IR_T_REDUCE) bits |= 2;
            unsigned cnt = dir ? n->nin : ir_nuses(u, y);
            for (unsigned k = 0; k < cnt && !found; k++) {
                ir_id z = dir ? ir_in(g, n, k) : u->ids[u->start[y] + k];
                if (!dir && g->nodes[z].op == IR_OP_MATMUL && z != m) {
                    found = (bits & 2) && ir_in(g, &g->nodes[z], 0) == y;
                    continue;
                }
                if ((seen[z] | bits) == seen[z]) continue;
                seen[z] |= bits;
                st[sp] = z, sb[sp++] = bits;
            }
        }
    }
    free(seen);
    free(st);
    free(sb);
    return found;
}

/* [simplify.small_k]: product i = a @ b of float dtype with a bound K, 1 <= K <= SIMP_SMALL_K_MAX,
 * as sum_k f32(a[..., :, k:k+1]) * b[..., k:k+1, :] added in k order in f32, converted to i's
 * dtype once (the product's own rounding of its f32 sum); the leading dims broadcast as the
 * product's do. b's slices are not cast: the f32 multiply converts its f16/bf16 operand exactly
 * (promotion), so no value of b's shape but a view of b itself is made. Appends the nodes before
 * i; returns the last. */
static ir_id small_k_form(ir_graph *g, pass_placed *p, ir_id i) {
    ir_id a = ir_in(g, &g->nodes[i], 0), b = ir_in(g, &g->nodes[i], 1), acc = IR_NONE;
    int ra = g->nodes[a].shape.rank, rb = g->nodes[b].shape.rank;
    int64_t kn = g->nodes[a].shape.dim[ra - 1];
    ir_dtype dt = (ir_dtype)g->nodes[i].dtype;
    for (int64_t k = 0; k < kn; k++) {
        ir_id ak = f32_of(g, p, pass_placed_at(g, p, ir_add_slice(g, a, ra - 1, k, k + 1), i), i);
        ir_id bk = pass_placed_at(g, p, ir_add_slice(g, b, rb - 2, k, k + 1), i);
        ir_id t = pass_placed_at(g, p, ir_add_binary(g, IR_OP_MUL, ak, bk), i);
        acc = acc == IR_NONE ? t : pass_placed_at(g, p, ir_add_binary(g, IR_OP_ADD, acc, t), i);
    }
    return dt == IR_F32 ? acc : pass_placed_at(g, p, ir_add_cast(g, acc, dt), i);
}

/* [simplify.matvec]: product i = a @ b of float dtype with b [..., K, 1] as the row reduction
 * sum(f32(a) * reshape(b, [..., 1, K]), axis=-1, keepdim) converted to i's dtype once (the f32
 * multiply converts b's elements exactly; b's reshape is a view the reduction reads in place).
 * Appends the nodes before i; returns the last. */
static ir_id matvec_form(ir_graph *g, pass_placed *p, ir_id i) {
    ir_id a = ir_in(g, &g->nodes[i], 0), b = ir_in(g, &g->nodes[i], 1);
    ir_shape bs = g->nodes[b].shape;
    int r = g->nodes[i].shape.rank;
    bs.dim[bs.rank - 1] = bs.dim[bs.rank - 2], bs.dim[bs.rank - 2] = 1;
    ir_id bt = pass_placed_at(g, p, ir_add_reshape(g, b, &bs), i);
    ir_id t = pass_placed_at(g, p, ir_add_binary(g, IR_OP_MUL, f32_of(g, p, a, i), bt), i);
    ir_id s = pass_placed_at(g, p, ir_add_reduce(g, IR_OP_SUM, t, 1u << (r - 1), true), i);
    ir_dtype dt = (ir_dtype)g->nodes[i].dtype;
    return dt == IR_F32 ? s : pass_placed_at(g, p, ir_add_cast(g, s, dt), i);
}

/* Which degenerate-product rule applies to node i: 1 [simplify.small_k], 2 [simplify.matvec],
 * 0 none (not a float product, K unbound or 0, or neither K small nor N = 1). */
static int degenerate_rule(const ir_graph *g, ir_id i) {
    const ir_node *n = &g->nodes[i];
    if (n->op != IR_OP_MATMUL || !ir_dtype_is_float((ir_dtype)n->dtype)) return 0;
    const ir_node *a = &g->nodes[ir_in(g, n, 0)];
    ir_dim k = a->shape.dim[a->shape.rank - 1], cols = n->shape.dim[n->shape.rank - 1];
    if (!IR_DIM_IS_SYM(k) && k >= 1 && k <= SIMP_SMALL_K_MAX) return 1;
    return cols == 1 && k != 0 ? 2 : 0;
}

/* Says degenerate-product rewrite `rule` of product i into node `to` on c->explain. */
static void explain_degenerate(const ir_graph *g, pass_ctx *c, ir_id i, int rule, ir_id to) {
    if (!c || !c->explain) return;
    const ir_node *n = &g->nodes[i];
    ir_id a = ir_in(g, n, 0), b = ir_in(g, n, 1);
    char sa[128], sb[128];
    ir_shape_str(g, &g->nodes[a].shape, sa, sizeof sa);
    ir_shape_str(g, &g->nodes[b].shape, sb, sizeof sb);
    const ir_shape *as = &g->nodes[a].shape;
    long long kn = (long long)as->dim[as->rank - 1];
    if (rule == 1)
        fprintf(c->explain,
                "simplify: [simplify.small_k] %%%u = %%%u %s @ %%%u %s: K = %lld <= %d: the sum "
                "of %lld broadcast f32 products a[..., :, k] * b[..., k, :] in k order, "
                "rounded to %s once (%%%u; a pointwise kernel reading %lld operand elements per "
                "output element from cache instead of a GEMM tile of one k step)\n",
                i, a, sa, b, sb, kn, SIMP_SMALL_K_MAX, kn, ir_dtype_name((ir_dtype)n->dtype), to,
                2 * kn);
    else
        fprintf(
            c->explain,
            "simplify: [simplify.matvec] %%%u = %%%u %s @ %%%u %s: N = 1: sum over the last "
            "axis of the f32 products a * (b as a row), keepdim, rounded to %s once (%%%u; a row "
            "reduction reading a once instead of a GEMM tile with 1 column of its N used)\n",
            i, a, sa, b, sb, ir_dtype_name((ir_dtype)n->dtype), to);
}

/* [simplify.small_k] and [simplify.matvec] on every product of g that degenerate_rule picks and
 * that is not an attention product (attention_product): the product's users and name move to the
 * new form, placed before it (the product is left for dce). Says each rewrite on c->explain.
 * Returns true when one happened. */
static bool degenerate_products(ir_graph *g, pass_ctx *c) {
    ir_uses u;
    if (!ir_uses_build(g, &u)) return false;
    uint32_t n0 = g->n;
    pass_placed p = {0};
    bool changed = false;
    for (ir_id i = 0; i < n0; i++) {
        int rule = degenerate_rule(g, i);
        if (!rule || !ir_nuses(&u, i)) continue;
        if (attention_product(g, &u, i)) continue;
        ir_id q = rule == 1 ? small_k_form(g, &p, i) : matvec_form(g, &p, i);
        g->nodes[q].name = g->nodes[i].name, g->nodes[i].name = 0;
        ir_replace_uses(g, i, q);
        explain_degenerate(g, c, i, rule, q);
        changed = true;
    }
    ir_uses_free(&u);
    pass_placed_apply(g, n0, &p);
    return changed;
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
    bool sliced = slice_products(g, c);
    sliced |= pass_contract(g, c);
    sliced |= pass_pick_push(g, c);
    sliced |= pass_exact_upcast(g, c);
    sliced |= degenerate_products(g, c);
    simp s = {g, c, count_uses(g), ir_xmalloc((size_t)g->n * sizeof(ir_id) + 1), NULL, g->n, g->n};
    for (ir_id i = 0; i < g->n; i++) s.fwd[i] = i;
    bool changed = sliced;
    for (ir_id i = 0; i < s.n0; i++) {
        apply_forwards(&s, i);
        if (s.uses[i] && g->nodes[i].op != IR_OP_INPUT && !ir_is_gen(g, i))
            changed |= simplify_node(&s, i);
    }
    put_before_owners(&s);
    free(s.uses);
    free(s.fwd);
    free(s.owner);
    return changed;
}
