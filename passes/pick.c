/* pick.c - the rule [reduction.pick]: a one-hot sum along a row,
 *
 *     sum(cast*(where(iota(axis a) == idx, A, 0)), axis=a)      (eq in either operand order)
 *
 * with idx constant along a (a per-row value broadcast over the row, or an iota along another
 * axis) is the row's element of the sum's input at e = idx when 0 <= idx < len, else 0: every
 * other term is the constant zero, so the sum of the terms is exactly +0 + that element (NaN and
 * infinities of A at the index as the one-hot sum; those elsewhere are not read by either). The
 * planner records the reductions the rule takes on the region (ir_region.picks); codegen reads
 * the one element per row after (outside) the streaming loop, and the model counts no
 * per-element instructions for it. Not taken (their meaning would change, or it is not one
 * element): a one-hot product sum(f32(hit) * A) (0 * inf = NaN where the one-hot sum of a where
 * gives A[idx]), a where summed with other terms (the split would round differently), a mean, a
 * float compare, column reductions and several reduced axes. TX_RED_PICK=0 turns the rule off
 * (A/B benchmarks). */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x behind casts. */
static ir_id pk_casts(const ir_graph *g, ir_id x) {
    while (g->nodes[x].op == IR_OP_CAST) x = ir_in(g, &g->nodes[x], 0);
    return x;
}

/* True when x is the constant zero (+0 or -0) behind single-input views and casts. */
static bool pk_is_zero(const ir_graph *g, ir_id x) {
    for (;;) {
        const ir_node *n = &g->nodes[x];
        bool view =
            (ir_op_traits((ir_op)n->op) & IR_T_VIEW) && n->op != IR_OP_CONCAT && n->nin == 1;
        if (!view && n->op != IR_OP_CAST) return n->op == IR_OP_CONST && n->a.cval == 0.0;
        x = ir_in(g, n, 0);
    }
}

/* The axis of S that iota node v counts along when broadcast to S (right-aligned, NumPy rules),
 * or -1 when it is not an iota or its extent there is not S's. */
static int pk_iota_axis(const ir_graph *g, ir_id v, const ir_shape *S) {
    const ir_node *n = &g->nodes[v];
    if (n->op != IR_OP_IOTA || n->shape.rank > S->rank || n->a.axis < 0 ||
        n->a.axis >= (int32_t)n->shape.rank)
        return -1;
    int a = n->a.axis + (int)(S->rank - n->shape.rank);
    return n->shape.dim[n->a.axis] == S->dim[a] ? a : -1;
}

/* True when the value of v broadcast to S does not change along axis a of S: v has extent 1 (or
 * no axis) there, or it is an iota along another axis. */
static bool pk_row_const(const ir_graph *g, ir_id v, const ir_shape *S, unsigned a) {
    const ir_node *n = &g->nodes[v];
    if (n->shape.rank > S->rank) return false;
    unsigned off = S->rank - n->shape.rank;
    if (a < off || n->shape.dim[a - off] == 1) return true;
    int ia = pk_iota_axis(g, v, S);
    return ia >= 0 && (unsigned)ia != a;
}

bool pass_red_pick(const ir_graph *g, ir_id id, pass_pick *o) {
    const ir_node *rn = &g->nodes[id];
    if (rn->op != IR_OP_SUM || rn->nin != 1) return false;
    ir_id in = ir_in(g, rn, 0);
    const ir_shape *S = &g->nodes[in].shape;
    if (S->rank == 0 || rn->a.red.axes != (1u << (S->rank - 1))) return false;
    unsigned a = S->rank - 1u;
    const ir_node *w = &g->nodes[pk_casts(g, in)];
    if (w->op != IR_OP_WHERE || !ir_shape_eq(&w->shape, S) || !pk_is_zero(g, ir_in(g, w, 2)))
        return false;
    const ir_node *c = &g->nodes[ir_in(g, w, 0)];
    if (c->op != IR_OP_EQ || !ir_shape_eq(&c->shape, S)) return false;
    for (unsigned s = 0; s < 2; s++) { /* eq(iota, idx) or eq(idx, iota) */
        ir_id it = ir_in(g, c, s), ix = ir_in(g, c, 1 - s);
        if (pk_iota_axis(g, it, S) != (int)a) continue;
        if (g->nodes[it].dtype != IR_I32 || g->nodes[ix].dtype != IR_I32) continue;
        if (!pk_row_const(g, ix, S, a)) continue;
        o->red = id;
        o->idx = ix;
        o->axis = a;
        return true;
    }
    return false;
}

/* True unless TX_RED_PICK is set to 0. */
static bool pk_enabled(void) {
    const char *e = getenv("TX_RED_PICK");
    return !(e && strcmp(e, "0") == 0);
}

uint32_t pass_red_picks(const ir_graph *g, const pass_index *ix, uint32_t r) {
    if (g->regions[r].kind != IR_RK_REDUCTION || !pk_enabled()) return 0;
    uint32_t m = 0;
    unsigned k = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1] && k < 32; j++) {
        ir_id v = ix->rids[j];
        if (!(ir_op_traits((ir_op)g->nodes[v].op) & IR_T_REDUCE)) continue;
        pass_pick pk;
        if (pass_red_pick(g, v, &pk)) m |= 1u << k;
        k++;
    }
    return m;
}

ir_id pass_red_pick_node(const ir_graph *g, const pass_index *ix, uint32_t r, unsigned k) {
    unsigned i = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        ir_id v = ix->rids[j];
        if (!(ir_op_traits((ir_op)g->nodes[v].op) & IR_T_REDUCE)) continue;
        if (i++ == k) return v;
    }
    return IR_NONE;
}

void pass_red_pick_explain(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                           int64_t budget, FILE *out) {
    const ir_region *rg = &g->regions[r];
    if (rg->kind != IR_RK_REDUCTION || !rg->picks) return;
    pass_sched_facts f;
    pass_schedule_facts(g, ix, r, gpu, budget, &f);
    double with = pass_model_instr_picks(g, ix, r, f.elem, rg->picks);
    double without = pass_model_instr_picks(g, ix, r, f.elem, 0), rate = pass_issue_rate(gpu);
    fprintf(out, "k%u: [reduction.pick]", r);
    char len[64] = "?";
    unsigned np = 0;
    for (unsigned k = 0; k < 32; k++) {
        if (!(rg->picks & (1u << k))) continue;
        ir_id v = pass_red_pick_node(g, ix, r, k);
        pass_pick pk;
        if (v == IR_NONE || !pass_red_pick(g, v, &pk)) continue;
        const ir_node *n = &g->nodes[v];
        int64_t d = g->nodes[ir_in(g, n, 0)].shape.dim[pk.axis];
        if (IR_DIM_IS_SYM(d))
            snprintf(len, sizeof len, "%s", g->syms[IR_DIM_SYMIDX(d)].name);
        else
            snprintf(len, sizeof len, "%lld", (long long)d);
        fprintf(out, "%s %%%u%s%s = sum(where(iota == %%%u, ..., 0), axis=%u)", np++ ? "," : "", v,
                n->name ? " " : "", n->name ? ir_str(g, n->name) : "", pk.idx, pk.axis);
    }
    fprintf(out,
            ": %sthe element at the index, read once per row outside the loop (0 when the index "
            "is outside [0, %s)), instead of %s compares, selects and adds a row",
            np > 1 ? "each is " : "is ", len, len);
    if (f.n > 0 && rate > 0)
        fprintf(out, ": issue %.1f -> %.1f instructions per element (%.3f -> %.3f us)\n", without,
                with, (double)f.n * without / rate, (double)f.n * with / rate);
    else
        fprintf(out, ": issue %.1f -> %.1f instructions per element\n", without, with);
}
