/* vecview.c - the views through which a lane of a pointwise kernel's vector group stays a lane of
 * a vector group: w consecutive elements of the view's input from a w-aligned start, read with one
 * vector load per group (docs/codegen.md "Pointwise and copy regions"). Shape facts only: codegen
 * (codegen/value.c cg_vec_slice, cg_vec_concat, cg_vec_bcast) takes its vector path exactly where
 * they hold, and the pointwise model (passes/model.c pw_walk) prices the reads behind them as
 * those vector loads. */
#include "passes/passes.h"

/* True when d is a known extent that w divides. */
static bool vv_divides(ir_dim d, unsigned w) { return !IR_DIM_IS_SYM(d) && d % (ir_dim)w == 0; }

/* See passes.h. */
bool pass_vec_slice(const ir_graph *g, const ir_node *n, unsigned w) {
    unsigned rk = n->shape.rank;
    if (n->op != IR_OP_SLICE || !w || rk == 0 || !vv_divides(n->shape.dim[rk - 1], w)) return false;
    if ((unsigned)n->a.slice.axis + 1 != rk) return true;
    const ir_shape *is = &g->nodes[ir_in(g, n, 0)].shape;
    return vv_divides(is->dim[rk - 1], w) && n->a.slice.start % (int64_t)w == 0;
}

/* See passes.h. */
bool pass_vec_concat(const ir_graph *g, const ir_node *n, unsigned w) {
    unsigned ax = (unsigned)n->a.axis, rk = n->shape.rank;
    if (n->op != IR_OP_CONCAT || !w || ax >= rk || n->nin > PASS_VEC_CAT_MAX ||
        !vv_divides(n->shape.dim[rk - 1], w))
        return false;
    for (unsigned k = 0; ax + 1 == rk && k < n->nin; k++)
        if (!vv_divides(g->nodes[ir_in(g, n, k)].shape.dim[ax], w)) return false;
    return true;
}

/* True when `to` equals the trailing dims of s after its own leading unit dims (a row operand
 * such as a bias [N] of [M, N]). */
static bool vv_trailing(const ir_shape *s, const ir_shape *to) {
    unsigned lead = 0;
    while (lead < to->rank && to->dim[lead] == 1) lead++;
    unsigned k = to->rank - lead;
    if (k > s->rank || k == 0) return false;
    for (unsigned i = 0; i < k; i++)
        if (to->dim[lead + i] != s->dim[s->rank - k + i]) return false;
    return true;
}

/* See passes.h. */
pass_vec_bcast_kind pass_vec_bcast(const ir_shape *s, const ir_shape *to, unsigned w) {
    if (!w) return PASS_VB_NONE;
    if (vv_trailing(s, to)) {
        int64_t nt = ir_shape_numel(to);
        return nt > 0 && nt % (int64_t)w == 0 ? PASS_VB_TRAILING : PASS_VB_NONE;
    }
    if (s->rank == 0 || to->rank == 0 || to->rank > s->rank) return PASS_VB_NONE;
    ir_dim in = s->dim[s->rank - 1];
    if (!vv_divides(in, w) || to->dim[to->rank - 1] != in) return PASS_VB_NONE;
    for (unsigned i = 0; i < to->rank; i++) /* NumPy broadcasting: equal dims or 1 in to */
        if (to->dim[i] != 1 && to->dim[i] != s->dim[i + s->rank - to->rank]) return PASS_VB_NONE;
    return PASS_VB_OUTER;
}
