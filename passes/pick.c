/* pick.c - one-hot sums,
 *
 *     sum(cast*(where(iota(axis a) == idx, A, 0)), axis=a)      (eq in either operand order)
 *
 * with idx i32 and constant along a (a per-row value broadcast over it, or an iota along another
 * axis), the hit reaching the where directly or through reshapes that only insert or remove unit
 * axes: the sum is the element of its input at e = idx along a when 0 <= idx < len, else 0 (every
 * other term is the constant zero, so the sum is exactly +0 + that element: NaN and infinities of
 * A at the index as the one-hot sum; those elsewhere are read by neither). Two rules use it:
 *  - [reduction.pick], over the innermost axis with the hit of the sum's input shape: the planner
 *    records the reductions the rule takes on the region (ir_region.picks); codegen reads the one
 *    element per row after (outside) the streaming loop, and the model counts no per-element
 *    instructions for it;
 *  - [reduction.pick_gather] (pass_pick_gather, the `pick` stage), every other one: the sum
 *    becomes the elementwise gather pick(A, idx) (ir_add_pick), when the casts after the where
 *    keep the sign of zero.
 * Not taken (their meaning would change, or it is not one element): a one-hot product
 * sum(f32(hit) * A) (0 * inf = NaN where the one-hot sum of a where gives A[idx]), a where summed
 * with other terms (the split would round differently), a mean, a float compare, a nonzero else,
 * several reduced axes. TX_RED_PICK=0 turns both rules off (A/B benchmarks). */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* See passes.h. */
ir_id pass_behind_casts(const ir_graph *g, ir_id x) {
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

/* The axis of `to` that axis ax of `from` is when reshape(from -> to) only inserts or removes
 * unit axes (their other extents equal in order) and from[ax] != 1; -1 otherwise. */
static int pk_unit_reshape_axis(const ir_shape *from, const ir_shape *to, unsigned ax) {
    if (from->dim[ax] == 1) return -1;
    unsigned i = 0, j = 0;
    int at = -1;
    for (;;) {
        while (i < from->rank && from->dim[i] == 1) i++;
        while (j < to->rank && to->dim[j] == 1) j++;
        if (i == from->rank || j == to->rank) break;
        if (from->dim[i] != to->dim[j]) return -1;
        if (i == ax) at = (int)j;
        i++, j++;
    }
    return i == from->rank && j == to->rank ? at : -1;
}

/* The axis that v counts along when v is an iota, or an iota behind reshapes that only insert or
 * remove unit axes (it is then the iota of its own shape along that axis); -1 otherwise. */
static int pk_iota_of(const ir_graph *g, ir_id v) {
    const ir_node *n = &g->nodes[v];
    if (n->op == IR_OP_IOTA)
        return n->a.axis >= 0 && n->a.axis < (int32_t)n->shape.rank ? n->a.axis : -1;
    if (n->op != IR_OP_RESHAPE || n->nin != 1) return -1;
    ir_id x = ir_in(g, n, 0);
    int ax = pk_iota_of(g, x);
    return ax < 0 ? -1 : pk_unit_reshape_axis(&g->nodes[x].shape, &n->shape, (unsigned)ax);
}

/* The axis of S that iota v (pk_iota_of) counts along when broadcast to S (right-aligned,
 * NumPy rules), or -1 when it is not one or its extent there is not S's. */
static int pk_iota_axis(const ir_graph *g, ir_id v, const ir_shape *S) {
    const ir_node *n = &g->nodes[v];
    int ax = pk_iota_of(g, v);
    if (ax < 0 || n->shape.rank > S->rank) return -1;
    int a = ax + (int)(S->rank - n->shape.rank);
    return n->shape.dim[ax] == S->dim[a] ? a : -1;
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

/* The eq under where-condition c broadcast to S, directly or through unit-axis reshapes, with
 * *e its axis under axis a of S (of S's extent there); IR_NONE when there is none. */
static ir_id pk_hit(const ir_graph *g, ir_id c, const ir_shape *S, unsigned a, unsigned *e) {
    const ir_shape *cs = &g->nodes[c].shape;
    if (cs->rank > S->rank || a < (unsigned)(S->rank - cs->rank)) return IR_NONE;
    unsigned ax = a - (unsigned)(S->rank - cs->rank);
    if (cs->dim[ax] != S->dim[a]) return IR_NONE;
    while (g->nodes[c].op == IR_OP_RESHAPE && g->nodes[c].nin == 1) {
        ir_id in = ir_in(g, &g->nodes[c], 0);
        int t = pk_unit_reshape_axis(&g->nodes[c].shape, &g->nodes[in].shape, ax);
        if (t < 0) return IR_NONE;
        c = in, ax = (unsigned)t;
    }
    if (g->nodes[c].op != IR_OP_EQ) return IR_NONE;
    *e = ax;
    return c;
}

bool pass_onehot_sum(const ir_graph *g, ir_id id, pass_pick *o) {
    const ir_node *rn = &g->nodes[id];
    if (rn->op != IR_OP_SUM || rn->nin != 1) return false;
    ir_id in = ir_in(g, rn, 0);
    const ir_shape *S = &g->nodes[in].shape;
    uint32_t ax = rn->a.red.axes;
    if (S->rank == 0 || ax == 0 || (ax & (ax - 1)) || (ax >> S->rank)) return false;
    unsigned a = 0;
    while (!(ax & (1u << a))) a++;
    ir_id wi = pass_behind_casts(g, in);
    const ir_node *w = &g->nodes[wi];
    if (w->op != IR_OP_WHERE || !ir_shape_eq(&w->shape, S) || !pk_is_zero(g, ir_in(g, w, 2)))
        return false;
    unsigned e;
    ir_id ci = pk_hit(g, ir_in(g, w, 0), S, a, &e);
    if (ci == IR_NONE) return false;
    const ir_node *c = &g->nodes[ci];
    for (unsigned s = 0; s < 2; s++) { /* eq(iota, idx) or eq(idx, iota) */
        ir_id it = ir_in(g, c, s), ix = ir_in(g, c, 1 - s);
        if (pk_iota_axis(g, it, &c->shape) != (int)e) continue;
        if (g->nodes[it].dtype != IR_I32 || g->nodes[ix].dtype != IR_I32) continue;
        if (!pk_row_const(g, ix, &c->shape, e)) continue;
        *o = (pass_pick){.red = id, .idx = ix, .axis = a, .where = wi, .eq = ci, .eaxis = e};
        return true;
    }
    return false;
}

bool pass_red_pick(const ir_graph *g, ir_id id, pass_pick *o) {
    pass_pick pk;
    if (!pass_onehot_sum(g, id, &pk)) return false;
    const ir_shape *S = &g->nodes[ir_in(g, &g->nodes[id], 0)].shape;
    if (pk.axis != S->rank - 1u || ir_in(g, &g->nodes[pk.where], 0) != pk.eq ||
        !ir_shape_eq(&g->nodes[pk.eq].shape, S))
        return false;
    *o = pk;
    return true;
}

/* See passes.h. */
bool pass_red_pick_on(void) {
    const char *e = getenv("TX_RED_PICK");
    return !(e && strcmp(e, "0") == 0);
}

uint32_t pass_red_picks(const ir_graph *g, const pass_index *ix, uint32_t r) {
    if (g->regions[r].kind != IR_RK_REDUCTION || !pass_red_pick_on()) return 0;
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

/* True when a cast (or where's conversion) from f to t, applied after the gather rather than to
 * each term before the sum, gives the sum's value: it never turns a value other than -0 into -0
 * (no narrowing float conversion, which underflows tiny negatives to -0 where the sum's +0 would
 * give +0) and t is not bool. */
static bool pk_cast_ok(ir_dtype f, ir_dtype t) {
    if (t == IR_BOOL) return false;
    if (!ir_dtype_is_float(f) || !ir_dtype_is_float(t)) return true;
    return f == t || t == IR_F32 || (f == IR_F16 && t == IR_BF16);
}

enum { PK_MAX_CASTS = 8 };

/* The casts between sum input `in` and `where` (outermost first) into ts; their count, or -1 when
 * there are more than PK_MAX_CASTS or one fails pk_cast_ok. */
static int pk_cast_chain(const ir_graph *g, ir_id in, ir_id where, ir_dtype *ts) {
    int n = 0;
    for (ir_id x = in; x != where; x = ir_in(g, &g->nodes[x], 0)) {
        ir_id y = ir_in(g, &g->nodes[x], 0);
        if (n == PK_MAX_CASTS ||
            !pk_cast_ok((ir_dtype)g->nodes[y].dtype, (ir_dtype)g->nodes[x].dtype))
            return -1;
        ts[n++] = (ir_dtype)g->nodes[x].dtype;
    }
    return n;
}

/* The index of one-hot sum pk as a value that broadcasts to the sum's input shape S with extent
 * 1 at pk->axis: the eq's idx (an iota of extent > 1 along the eq's axis, which counts along
 * another, replaced by one of extent 1 there), broadcast to the eq's shape Se with extent 1 at
 * its axis and reshaped like the where's condition when reshapes lie between them. */
static ir_id pk_gather_index(ir_graph *g, const pass_pick *pk, ir_id cond) {
    ir_shape se = g->nodes[pk->eq].shape, xs = g->nodes[pk->idx].shape;
    se.dim[pk->eaxis] = 1;
    ir_id x = pk->idx;
    unsigned off = se.rank - xs.rank;
    if (pk->eaxis >= off && xs.dim[pk->eaxis - off] != 1) { /* an iota along another axis */
        int ia = pk_iota_of(g, pk->idx);
        xs.dim[pk->eaxis - off] = 1;
        x = ir_add_iota(g, &xs, ia);
    }
    if (cond == pk->eq) return x;
    if (!ir_shape_eq(&g->nodes[x].shape, &se)) x = ir_add_broadcast(g, x, &se);
    ir_shape cs = g->nodes[cond].shape;
    const ir_shape *S = &g->nodes[ir_in(g, &g->nodes[pk->red], 0)].shape;
    cs.dim[pk->axis - (S->rank - cs.rank)] = 1;
    return ir_add_reshape(g, x, &cs);
}

/* Says on c->explain what [reduction.pick_gather] made of the one-hot sum that pick node p
 * replaces (its source location is the sum's). */
static void pk_say_gather(const ir_graph *g, const pass_ctx *c, ir_id p) {
    const ir_node *n = &g->nodes[p];
    ir_shape S = n->shape;
    S.dim[n->a.pick.axis] = n->a.pick.len;
    char sb[256], lb[64];
    ir_shape l = {.rank = 1, .dim = {n->a.pick.len}};
    ir_shape_str(g, &l, lb, sizeof lb);
    lb[strlen(lb) - 1] = 0; /* "[len" */
    int64_t ne = ir_shape_numel(&n->shape);
    char cnt[64] = "each element";
    if (ne >= 0) snprintf(cnt, sizeof cnt, "each of its %lld elements", (long long)ne);
    fprintf(c->explain,
            "%u:%u: [reduction.pick_gather] sum(where(iota == idx, %%%u, 0), axis=%d) of %s is "
            "one-hot along the axis (an i32 index constant along it), so %s is %%%u at the "
            "index (0 outside [0, %s)): the gather %%%u = pick(%%%u, idx %%%u), an elementwise "
            "value that reads 1 element where the sum read %s\n",
            n->line, n->col, ir_in(g, n, 0), n->a.pick.axis, ir_shape_str(g, &S, sb, sizeof sb),
            cnt, ir_in(g, n, 0), lb + 1, p, ir_in(g, n, 0), ir_in(g, n, 1), lb + 1);
}

/* Rewrites one-hot sum pk (casts ts[0..nc), outermost first) into a gather; the sum keeps its id
 * as a reshape of the result. Appended nodes go before the sum in *before. */
static void pk_gather(ir_graph *g, const pass_pick *pk, const ir_dtype *ts, int nc, ir_id **before,
                      uint32_t *nb, uint32_t *cap) {
    uint32_t n0 = g->n;
    ir_id v = pk->red, w = pk->where, src = ir_in(g, &g->nodes[w], 1);
    ir_dtype wdt = (ir_dtype)g->nodes[w].dtype;
    ir_shape o = g->nodes[ir_in(g, &g->nodes[v], 0)].shape;
    ir_dim len = o.dim[pk->axis];
    o.dim[pk->axis] = 1;
    ir_id ix = pk_gather_index(g, pk, ir_in(g, &g->nodes[w], 0));
    ir_id x = ir_add_pick(g, src, ix, &o, (int)pk->axis, len);
    if (g->nodes[src].dtype != wdt) x = ir_add_cast(g, x, wdt);
    for (int k = nc; k-- > 0;) x = ir_add_cast(g, x, ts[k]);
    for (uint32_t j = n0; j < g->n; j++) {
        g->nodes[j].line = g->nodes[v].line, g->nodes[j].col = g->nodes[v].col;
        if (*nb + 1 > *cap) *before = ir_xrealloc(*before, (*cap = *cap * 2 + 8) * sizeof **before);
        (*before)[(*nb)++] = v;
    }
    ir_node *n = &g->nodes[v];
    n->op = IR_OP_RESHAPE;
    memset(&n->a, 0, sizeof n->a);
    ir_set_in(g, n, 0, x);
}

bool pass_pick_gather(ir_graph *g, pass_ctx *c) {
    if (!pass_red_pick_on()) return false;
    uint32_t n0 = g->n, nb = 0, cap = 0;
    ir_id *before = NULL;
    for (ir_id v = 0; v < n0; v++) {
        pass_pick pk;
        ir_dtype ts[PK_MAX_CASTS];
        if (pass_red_pick(g, v, &pk) || !pass_onehot_sum(g, v, &pk)) continue;
        int nc = pk_cast_chain(g, ir_in(g, &g->nodes[v], 0), pk.where, ts);
        if (nc < 0 || !pk_cast_ok((ir_dtype)g->nodes[ir_in(g, &g->nodes[pk.where], 1)].dtype,
                                  (ir_dtype)g->nodes[pk.where].dtype))
            continue;
        pk_gather(g, &pk, ts, nc, &before, &nb, &cap);
    }
    pass_place_appended(g, n0, before);
    free(before);
    if (nb) pass_dce(g, c);
    for (ir_id v = 0; nb && c && c->explain && v < g->n; v++)
        if (g->nodes[v].op == IR_OP_PICK) pk_say_gather(g, c, v);
    return nb > 0;
}
