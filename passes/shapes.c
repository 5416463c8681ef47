/* shapes.c - shape and dtype propagation: recomputes every node's result
 * dtype and shape from its inputs and attributes, checks it against what
 * the node records, and refines symbolic dims whose symbol is bound to a
 * value into that value. A mismatch is a bug of whoever built the graph:
 * it is reported as an internal error. */
#include "passes/passes.h"

#include <string.h>

/* Replaces every dim of `s` whose symbol is bound by its value. Returns
 * true when a dim changed. */
static bool bind_dims(const ir_graph *g, ir_shape *s) {
    bool changed = false;
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i]) && IR_DIM_SYMIDX(s->dim[i]) < g->nsyms &&
            g->syms[IR_DIM_SYMIDX(s->dim[i])].value >= 0) {
            s->dim[i] = g->syms[IR_DIM_SYMIDX(s->dim[i])].value;
            changed = true;
        }
    return changed;
}

/* True when two shapes of equal rank provably hold different element
 * counts: equal multisets of symbols with different concrete products, or
 * both fully concrete with different counts. */
static bool numel_differs(const ir_shape *a, const ir_shape *b) {
    int64_t pa = 1, pb = 1;
    ir_dim sa[IR_MAX_RANK], sb[IR_MAX_RANK];
    int na = 0, nb = 0;
    for (int i = 0; i < a->rank; i++) {
        if (IR_DIM_IS_SYM(a->dim[i]))
            sa[na++] = a->dim[i];
        else if (!ir_mul_ok(pa, a->dim[i], &pa))
            return false;
    }
    for (int i = 0; i < b->rank; i++) {
        if (IR_DIM_IS_SYM(b->dim[i]))
            sb[nb++] = b->dim[i];
        else if (!ir_mul_ok(pb, b->dim[i], &pb))
            return false;
    }
    if (na != nb) return false;
    for (int i = 0; i < na; i++) { /* multiset equality, small n */
        int j = 0;
        while (j < nb && sb[j] != sa[i]) j++;
        if (j == nb) return false;
        sb[j] = sb[--nb];
    }
    return pa != pb;
}

/* Computes the dtype and shape node `id` must have from its inputs and
 * attributes into *dt and *s. Returns NULL when they are consistent, or a
 * static description of what is wrong. Attribute-defined shapes (input,
 * reshape, broadcast_to) are taken from the node and checked. */
static const char *infer(const ir_graph *g, ir_id id, ir_dtype *dt, ir_shape *s) {
    const ir_node *n = &g->nodes[id];
    unsigned t = ir_op_traits((ir_op)n->op);
    const ir_node *x = n->nin ? &g->nodes[ir_in(g, n, 0)] : NULL;
    *dt = (ir_dtype)n->dtype;
    *s = n->shape;
    if (n->op == IR_OP_INPUT || n->op == IR_OP_OUTPUT) return NULL;
    if (n->op == IR_OP_IOTA) {
        *dt = IR_I32;
        return n->a.axis < 0 || n->a.axis >= n->shape.rank ? "iota axis out of range" : NULL;
    }
    if (n->op == IR_OP_CONST) {
        s->rank = 0;
        return n->shape.rank ? "a constant must be a scalar" : NULL;
    }
    if (t & IR_T_ELEM) {
        if (n->op == IR_OP_WHERE && x->dtype != IR_BOOL) return "where condition is not bool";
        *s = x->shape;
        unsigned first = n->op == IR_OP_WHERE ? 1 : 0;
        ir_dtype d = (ir_dtype)g->nodes[ir_in(g, n, first)].dtype;
        for (unsigned k = 0; k < n->nin; k++) {
            const ir_node *y = &g->nodes[ir_in(g, n, k)];
            if (!ir_shape_broadcast(s, &y->shape, s)) return "inputs do not broadcast";
            if (k > first) d = ir_dtype_promote(d, (ir_dtype)y->dtype);
        }
        if (t & IR_T_CMP) d = IR_BOOL;
        if (n->op != IR_OP_CAST) *dt = d;
        return NULL;
    }
    if (t & IR_T_REDUCE) {
        if (n->a.red.axes >> x->shape.rank) return "reduction axis beyond the rank";
        s->rank = 0;
        for (int i = 0; i < x->shape.rank; i++) {
            if (!(n->a.red.axes & (1u << i)))
                s->dim[s->rank++] = x->shape.dim[i];
            else if (n->a.red.keepdim)
                s->dim[s->rank++] = 1;
        }
        *dt = (ir_dtype)x->dtype;
        return NULL;
    }
    switch ((ir_op)n->op) {
        case IR_OP_MATMUL: {
            const ir_node *y = &g->nodes[ir_in(g, n, 1)];
            if (!ir_shape_matmul(&x->shape, &y->shape, s)) return "matmul operands do not fit";
            *dt = ir_dtype_promote((ir_dtype)x->dtype, (ir_dtype)y->dtype);
            return NULL;
        }
        case IR_OP_PERMUTE: {
            uint32_t seen = 0;
            s->rank = x->shape.rank;
            for (int i = 0; i < s->rank; i++) {
                if (n->a.perm[i] >= s->rank || (seen & (1u << n->a.perm[i])))
                    return "not a permutation";
                seen |= 1u << n->a.perm[i];
                s->dim[i] = x->shape.dim[n->a.perm[i]];
            }
            break;
        }
        case IR_OP_RESHAPE:
            if (numel_differs(&x->shape, &n->shape)) return "reshape changes the element count";
            break;
        case IR_OP_BROADCAST: {
            ir_shape b;
            if (!ir_shape_broadcast(&x->shape, &n->shape, &b) || !ir_shape_eq(&b, &n->shape))
                return "input does not broadcast to the target shape";
            break;
        }
        case IR_OP_SLICE: {
            int ax = n->a.slice.axis;
            if (ax < 0 || ax >= x->shape.rank) return "slice axis out of range";
            int64_t lo = n->a.slice.start, hi = n->a.slice.stop, d = x->shape.dim[ax];
            if (lo < 0 || hi < lo || (!IR_DIM_IS_SYM(d) && hi > d))
                return "slice bounds out of range";
            *s = x->shape;
            s->dim[ax] = hi - lo;
            break;
        }
        case IR_OP_CONCAT: {
            int ax = n->a.axis;
            if (ax < 0 || ax >= x->shape.rank) return "concat axis out of range";
            *s = x->shape;
            ir_dtype d = (ir_dtype)x->dtype;
            for (unsigned k = 1; k < n->nin; k++) {
                const ir_node *y = &g->nodes[ir_in(g, n, k)];
                if (y->shape.rank != s->rank) return "concat operands differ in rank";
                for (int i = 0; i < s->rank; i++)
                    if (i != ax && y->shape.dim[i] != s->dim[i])
                        return "concat operands differ off the axis";
                if (IR_DIM_IS_SYM(s->dim[ax]) || IR_DIM_IS_SYM(y->shape.dim[ax]))
                    s->dim[ax] = n->shape.dim[ax];
                else if (!ir_add_ok(s->dim[ax], y->shape.dim[ax], &s->dim[ax]))
                    return "concat extent overflows";
                d = ir_dtype_promote(d, (ir_dtype)y->dtype);
            }
            *dt = d;
            return NULL;
        }
        case IR_OP_PICK: {
            const char *bad = ir_pick_check(g, n);
            if (bad) return bad;
            break; /* the shape is the node's, the dtype its source's */
        }
        default: return "unknown op";
    }
    *dt = (ir_dtype)x->dtype; /* views keep the dtype */
    return NULL;
}

/* True when `rec` (what a node records) may be replaced by `inf` (what
 * its inputs give): they are equal, or they differ only where `rec` holds
 * a symbol bound to the concrete value `inf` holds. */
static bool refines(const ir_graph *g, const ir_shape *rec, const ir_shape *inf) {
    if (rec->rank != inf->rank) return false;
    for (int i = 0; i < rec->rank; i++) {
        if (rec->dim[i] == inf->dim[i]) continue;
        if (!IR_DIM_IS_SYM(rec->dim[i]) || IR_DIM_IS_SYM(inf->dim[i])) return false;
        uint32_t si = IR_DIM_SYMIDX(rec->dim[i]);
        if (si >= g->nsyms || g->syms[si].value != inf->dim[i]) return false;
    }
    return true;
}

/* Walks the graph in order. Bound symbols in recorded shapes become
 * concrete first; then each node's dtype and shape are recomputed and
 * compared. Reports an internal error for the first mismatch (the graph is
 * left as it was from that node on). Returns true when a shape was
 * refined. */
bool pass_shapes(ir_graph *g, pass_ctx *c) {
    bool changed = false;
    char b1[256], b2[256];
    for (ir_id i = 0; i < g->n; i++) {
        ir_node *n = &g->nodes[i];
        if (n->op >= IR_NOPS) {
            tx_error(c->diag, "internal error: shapes: %%%u has an unknown op", i);
            return changed;
        }
        changed |= bind_dims(g, &n->shape);
        ir_dtype dt;
        ir_shape s;
        const char *why = infer(g, i, &dt, &s);
        if (!why && dt != n->dtype) why = "dtype differs from the one its inputs give";
        if (!why && !refines(g, &n->shape, &s)) why = "shape differs from the one its inputs give";
        if (why) {
            tx_error(c->diag,
                     "internal error: shapes: %%%u = %s : %s%s (from its inputs: %s%s): %s", i,
                     ir_op_name((ir_op)n->op), ir_dtype_name((ir_dtype)n->dtype),
                     ir_shape_str(g, &n->shape, b1, sizeof b1), ir_dtype_name(dt),
                     ir_shape_str(g, &s, b2, sizeof b2), why);
            return changed;
        }
        if (!ir_shape_eq(&n->shape, &s)) {
            n->shape = s;
            changed = true;
        }
    }
    return changed;
}
