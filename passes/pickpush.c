/* pickpush.c - [simplify.pick_push]: a one-hot pick ([reduction.pick], passes/pick.c)
 *
 *     sum(cast*(where(hit, F(x..., r...), 0)), axis=a)      hit = (iota(a) == idx), idx per row
 *
 * of an elementwise F of row-shaped values x and row-constant values r (extent 1 along a: the
 * row's statistics, such as log_softmax's max and log-sum) is F evaluated at the index, F(x[idx],
 * r), when 0 <= idx < len, else 0: every other term of the one-hot sum is +0, so the sum is that
 * one element (the same operations on the same values: exact but for the sign of a zero, as the
 * one-hot sum's +0 + v). The rewrite builds
 *
 *     cast*(where(0 <= idx & idx < len, F(pick(x)..., r...), 0))   (keepdim, reshaped as the sum)
 *
 * with each row-shaped leaf x of F picked by its own one-hot sum of the same hit, which
 * [reduction.pick] reads at the index. So `log_softmax(x).gather(-1, ids)` written with a one-hot
 * sum (TRL's selective log-softmax, per-token NLL) needs the row's max and sum only: one online
 * pass, where the pick of the whole log_softmax was a third level (a multipass plan). Taken when F
 * depends on a reduction (else the pick already reads its operand at the index), the row length
 * is bound, every leaf is float or i32, and the pick rule is on (TX_RED_PICK). */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>

/* Most nodes of F the rewrite walks (a larger F keeps the sum). */
enum { PUSH_MAX = 64 };

/* The rewrite's state: the matched pick, the new nodes' placement and a memo of pushed nodes. */
typedef struct push {
    ir_graph *g;
    ir_id hit, sum;
    unsigned axis;
    ir_shape S; /* the one-hot's shape (a copy: appending nodes moves g->nodes) */
    ir_id from[PUSH_MAX], to[PUSH_MAX];
    unsigned nmemo, nops, nleaves;
    pass_placed placed; /* the appended nodes, each before the sum */
} push;

/* True when v, broadcast to S (right-aligned), is constant along axis a: extent 1 there, or no
 * such axis. */
static bool push_row_const(const ir_graph *g, ir_id v, const ir_shape *S, unsigned a) {
    const ir_node *n = &g->nodes[v];
    unsigned off = S->rank - n->shape.rank;
    return n->shape.rank <= S->rank && (a < off || n->shape.dim[a - off] == 1);
}

/* Whether x's elementwise cone (through elementwise nodes that are not row-constant) reaches a
 * reduction among its row-constant operands, within *budget nodes. */
static bool push_needs_stats(const ir_graph *g, ir_id x, const ir_shape *S, unsigned a,
                             unsigned *budget) {
    if (!(*budget)--) return false;
    const ir_node *n = &g->nodes[x];
    if (ir_op_traits((ir_op)n->op) & IR_T_REDUCE) return true;
    if (!(ir_op_traits((ir_op)n->op) & IR_T_ELEM) && !(ir_op_traits((ir_op)n->op) & IR_T_VIEW))
        return false;
    for (unsigned k = 0; k < n->nin; k++)
        if (push_needs_stats(g, ir_in(g, n, k), S, a, budget)) return true;
    return false;
}

/* Places node id, the last one appended, before the sum (pass_placed_at); returns id. */
static ir_id push_placed(push *p, ir_id id) { return pass_placed_at(p->g, &p->placed, id, p->sum); }

/* The one-hot pick of row-shaped leaf x: sum(where(hit, x, 0), axis, keepdim). */
static ir_id push_leaf(push *p, ir_id x) {
    ir_graph *g = p->g;
    ir_id z = push_placed(p, ir_add_const(g, 0.0, (ir_dtype)g->nodes[x].dtype));
    ir_id w = push_placed(p, ir_add_where(g, p->hit, x, z));
    p->nleaves++;
    return push_placed(p, ir_add_reduce(g, IR_OP_SUM, w, 1u << p->axis, true));
}

/* F at the index: x itself when row-constant, its pick when a row-shaped leaf, else the same
 * elementwise node over its operands at the index. IR_NONE when F is too large or a leaf is
 * neither float nor i32. */
static ir_id push_node(push *p, ir_id x) {
    ir_graph *g = p->g;
    if (push_row_const(g, x, &p->S, p->axis)) return x;
    for (unsigned k = 0; k < p->nmemo; k++)
        if (p->from[k] == x) return p->to[k];
    if (p->nmemo == PUSH_MAX) return IR_NONE;
    ir_node n = g->nodes[x];
    ir_id r;
    if ((ir_op_traits((ir_op)n.op) & IR_T_ELEM) && n.nin <= 3) {
        ir_id ins[3];
        ir_shape sh = {0};
        for (unsigned k = 0; k < n.nin; k++) {
            if ((ins[k] = push_node(p, ir_in(g, &n, k))) == IR_NONE) return IR_NONE;
            if (!ir_shape_broadcast(&sh, &g->nodes[ins[k]].shape, &sh)) return IR_NONE;
        }
        r = push_placed(p, ir_add(g, (ir_op)n.op, (ir_dtype)n.dtype, &sh, ins, n.nin));
        g->nodes[r].a = n.a;
        p->nops++;
    } else {
        if (!ir_dtype_is_float((ir_dtype)n.dtype) && n.dtype != IR_I32) return IR_NONE;
        r = push_leaf(p, x);
    }
    p->from[p->nmemo] = x, p->to[p->nmemo++] = r;
    return r;
}

/* The value pick i (a match of pass_red_pick) becomes, built before it: where(idx in range,
 * F at idx, 0) through the sum's casts, reshaped to its shape; IR_NONE when not taken. */
static ir_id push_rewrite(push *p, const pass_pick *pk) {
    ir_graph *g = p->g;
    const ir_shape rs = g->nodes[p->sum].shape; /* copies: appending nodes moves g->nodes */
    ir_id in = ir_in(g, &g->nodes[p->sum], 0), w = pass_behind_casts(g, in),
          a = ir_in(g, &g->nodes[w], 1);
    p->hit = ir_in(g, &g->nodes[w], 0), p->axis = pk->axis, p->S = g->nodes[w].shape;
    ir_dim len = p->S.dim[p->axis];
    unsigned budget = PUSH_MAX;
    if (IR_DIM_IS_SYM(len) || len > INT32_MAX || push_row_const(g, a, &p->S, p->axis) ||
        !(ir_op_traits((ir_op)g->nodes[a].op) & IR_T_ELEM) ||
        !push_needs_stats(g, a, &p->S, p->axis, &budget))
        return IR_NONE;
    ir_id v = push_node(p, a);
    if (v == IR_NONE) return IR_NONE;
    ir_id idx = pk->idx, z = push_placed(p, ir_add_const(g, 0.0, IR_I32));
    ir_id n = push_placed(p, ir_add_const(g, (double)len, IR_I32));
    ir_id ok = push_placed(p, ir_add_binary(g, IR_OP_AND,
                                            push_placed(p, ir_add_binary(g, IR_OP_GE, idx, z)),
                                            push_placed(p, ir_add_binary(g, IR_OP_LT, idx, n))));
    ir_id zero = push_placed(p, ir_add_const(g, 0.0, (ir_dtype)g->nodes[v].dtype));
    v = push_placed(p, ir_add_where(g, ok, v, zero));
    ir_shape kd = p->S, vs = g->nodes[v].shape;
    kd.dim[p->axis] = 1;
    if (!ir_shape_eq(&vs, &kd)) v = push_placed(p, ir_add_broadcast(g, v, &kd));
    ir_id casts[16];
    unsigned nc = 0;
    for (ir_id c = in; c != w && nc < 16; c = ir_in(g, &g->nodes[c], 0)) casts[nc++] = c;
    while (nc--) {
        ir_dtype dt = (ir_dtype)g->nodes[casts[nc]].dtype;
        v = push_placed(p, ir_add_cast(g, v, dt));
    }
    vs = g->nodes[v].shape;
    if (!ir_shape_eq(&vs, &rs)) v = push_placed(p, ir_add_reshape(g, v, &rs));
    return v;
}

/* See passes.h. */
bool pass_pick_push(ir_graph *g, pass_ctx *c) {
    if (!pass_red_pick_on()) return false;
    uint32_t n0 = g->n;
    push p = {.g = g};
    bool changed = false;
    for (ir_id i = 0; i < n0; i++) {
        pass_pick pk;
        if (!pass_red_pick(g, i, &pk)) continue;
        p.sum = i, p.nmemo = p.nops = p.nleaves = 0;
        ir_id v = push_rewrite(&p, &pk);
        if (v == IR_NONE) continue; /* nodes appended before it gave up have no users: dce */
        g->nodes[v].name = g->nodes[i].name, g->nodes[i].name = 0;
        ir_replace_uses(g, i, v);
        changed = true;
        if (c && c->explain)
            fprintf(c->explain,
                    "simplify: [simplify.pick_push] %%%u = a one-hot sum over axis %u of an "
                    "elementwise function of the row's statistics: the function (%u operations) "
                    "at the index, on %u picked value(s) each read at the index, 0 outside the "
                    "row's %lld elements (no pass over the picked value)\n",
                    i, pk.axis, p.nops, p.nleaves, (long long)p.S.dim[pk.axis]);
    }
    pass_placed_apply(g, n0, &p.placed);
    return changed;
}
