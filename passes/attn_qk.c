/* attn_qk.c - [attention.materialize_qk]: a q or k operand of softmax(F(q @ kT)) @ v that is a
 * concat (partial rotary: the rotated first dims beside the pass-through rest) is no TMA view, so
 * the sm_90a FA3 kernel refuses the attention and the mma.sync kernel gathers the concat in its
 * tile loads. Where the model prices FA3 plus writing and re-reading the concat below the
 * mma.sync kernel, the concat is copied (a cast to its own dtype flagged IR_NF_STAGE) that the
 * fusion planner joins to the concat's producer kernel (pointwise.concat pieces), and the
 * attention reads the dense copy by TMA (docs/fusion.md). */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The product p @ v of softmax(F(q @ kT)) @ v for m1 = q @ kT: the first matmul of the first n0
 * nodes after m1 whose A operand is computed from m1 through non-product nodes and whose B operand
 * is not; IR_NONE. mk: g->n marks. */
static ir_id second_product(const ir_graph *g, ir_id m1, uint32_t n0, uint8_t *mk) {
    for (ir_id i = 0; i < g->n; i++) mk[i] = i == m1;
    for (ir_id i = m1 + 1; i < n0; i++) {
        const ir_node *n = &g->nodes[i];
        bool from = false;
        for (unsigned k = 0; k < n->nin; k++) from |= mk[ir_in(g, n, k)] != 0;
        if (!from) continue;
        if (n->op == IR_OP_MATMUL) return mk[ir_in(g, n, 0)] && !mk[ir_in(g, n, 1)] ? i : IR_NONE;
        if (n->op != IR_OP_OUTPUT) mk[i] = 1;
    }
    return IR_NONE;
}

/* Whether operand opnd (transposed: kT) is a TMA view (pass_attn_view_of) once the attention
 * region holds its permutes and same-dtype casts: they are marked with a region id no node has
 * for the question, then restored. */
static bool tma_view(ir_graph *g, ir_id opnd, ir_dtype dt, int64_t d, bool trans) {
    enum { CHAIN = 32 };
    ir_id ch[CHAIN];
    uint32_t old[CHAIN], probe = g->nregions + 1;
    unsigned n = 0;
    for (ir_id x = opnd; n < CHAIN && g->nodes[x].nin >= 1; x = ir_in(g, &g->nodes[x], 0)) {
        const ir_node *nd = &g->nodes[x];
        if (nd->op == IR_OP_RESHAPE || nd->op == IR_OP_SLICE) continue;
        if (nd->op != IR_OP_PERMUTE && !(nd->op == IR_OP_CAST && nd->dtype == dt)) break;
        ch[n] = x, old[n] = nd->region, n++;
        g->nodes[x].region = probe;
    }
    pass_attn_view v;
    bool ok = pass_attn_view_of(g, probe, opnd, dt, d, trans, &v, NULL, 0);
    for (unsigned i = 0; i < n; i++) g->nodes[ch[i]].region = old[i];
    return ok;
}

/* The concat behind operand k of m1 (q: the concat itself; kT: a permute of it), or IR_NONE;
 * *user the node that reads it. */
static ir_id concat_of(const ir_graph *g, ir_id m1, unsigned k, ir_id *user) {
    ir_id x = ir_in(g, &g->nodes[m1], k);
    *user = m1;
    if (k == 1) {
        if (g->nodes[x].op != IR_OP_PERMUTE) return IR_NONE;
        *user = x;
        x = ir_in(g, &g->nodes[x], 0);
    }
    const ir_node *c = &g->nodes[x];
    return c->op == IR_OP_CONCAT && c->shape.rank >= 2 ? x : IR_NONE;
}

/* Elements of shape s (bound dims at their values); -1 when unbound. */
static double numel_of(const ir_graph *g, const ir_shape *s) {
    ir_poly p;
    double v;
    pass_numel(g, s, 1, &p);
    return !p.overflow && ir_poly_is_const(&p, &v) ? v : -1;
}

/* Lane instructions per element the mma.sync kernel spends gathering a concat operand in its tile
 * loads (cg_mm_opnd_load per element: the concat's column compare and the select between its
 * pieces' addresses, each piece's index arithmetic, a scalar 16-bit load, the conversion and the
 * shared store; codegen/attention.c's operand tiles), issued beside the products, not overlapped
 * with them as the cp.async tiles of dense operands are. */
enum { QK_GATHER_INSTR = 16 };

/* The rule for the attention of products m1, m2: the concats to copy (cat[k] for operand k of m1,
 * IR_NONE: none) and whether the model takes it, said on c->explain with its numbers. */
static bool qk_decide(ir_graph *g, const pass_ctx *c, ir_id m1, ir_id m2, ir_id cat[2],
                      ir_id user[2]) {
    const pass_gpu *gpu = pass_ctx_gpu(c);
    if (!gpu || gpu->attn_eff <= 0 || gpu->tc_eff <= 0 || gpu->hbm_GBps <= 0) return false;
    if (!pass_attention_fa3_shape(g, m1, m2, NULL, 0)) return false;
    const ir_node *q = &g->nodes[ir_in(g, &g->nodes[m1], 0)];
    ir_dtype dt = (ir_dtype)q->dtype;
    int64_t d = q->shape.dim[q->shape.rank - 1];
    unsigned ncat = 0;
    for (unsigned k = 0; k < 2; k++) {
        cat[k] = concat_of(g, m1, k, &user[k]);
        ncat += cat[k] != IR_NONE;
        if (cat[k] == IR_NONE && !tma_view(g, ir_in(g, &g->nodes[m1], k), dt, d, k == 1))
            return false;
    }
    if (!ncat || !tma_view(g, ir_in(g, &g->nodes[m2], 1), dt, d, false)) return false;
    double s = numel_of(g, &g->nodes[m1].shape), o = numel_of(g, &g->nodes[m2].shape), bytes = 0;
    const ir_node *p = &g->nodes[ir_in(g, &g->nodes[m2], 0)];
    for (unsigned k = 0; k < 2; k++) {
        double e = cat[k] != IR_NONE ? numel_of(g, &g->nodes[cat[k]].shape) : 0;
        if (e < 0) return false;
        bytes += e * (double)ir_dtype_size(dt);
    }
    if (s < 0 || o < 0) return false;
    double flops = 2.0 * s * (double)d + 2.0 * o * (double)p->shape.dim[p->shape.rank - 1];
    double pad = (double)((d + 63) / 64 * 64) / (double)d, peak = gpu->peak_TFLOPs[dt] * 1e6;
    double t_mma = flops / (peak * gpu->tc_eff), t_fa3 = flops * pad / (peak * gpu->attn_eff);
    double t_copy = 2.0 * bytes / (gpu->hbm_GBps * 1e3);
    /* in place, the mma.sync kernel gathers q's concat once and k's once per query tile of its
     * row tile bq (pass_attention_fit, as plan_tile.c plans it) */
    int64_t bq = 64, bkv = 0, dv = p->shape.dim[p->shape.rank - 1]; /* 64: no tile fits */
    int st = 0;
    pass_attention_fit(d, IR_DIM_IS_SYM(dv) ? d : dv, ir_dtype_size(dt), pass_sram_budget(c), &bq,
                       &bkv, &st);
    ir_dim sqd = g->nodes[m1].shape.dim[g->nodes[m1].shape.rank - 2];
    double sq = (double)(IR_DIM_IS_SYM(sqd) ? g->syms[IR_DIM_SYMIDX(sqd)].value : sqd);
    double gathered = 0, rate = pass_issue_rate(gpu);
    for (unsigned k = 0; k < 2; k++)
        if (cat[k] != IR_NONE)
            gathered += numel_of(g, &g->nodes[cat[k]].shape) *
                        (k == 0 || sq < 1 ? 1.0 : ceil(sq / (double)bq));
    double t_gather = rate > 0 ? gathered * QK_GATHER_INSTR / rate : 0;
    bool take = t_fa3 + t_copy < t_mma + t_gather;
    if (c->explain)
        fprintf(c->explain,
                "attention %%%u .. %%%u: [attention.materialize_qk] %s%s%s a concat (no TMA "
                "view): written whole by its producer kernel, %.2f MB written and read back -> "
                "%.1f us; FA3 %.1f us + %.1f us vs the mma.sync kernel %.1f us (%.2f GFLOP) + "
                "its in-place gather %.1f us (%.1f M elements x %d instructions, k once per "
                "%lld-row query tile): %s\n",
                m1, m2, cat[0] != IR_NONE ? "q" : "", ncat == 2 ? " and " : "",
                cat[1] != IR_NONE ? "k" : "", bytes / 1e6, t_copy, t_fa3, t_copy, t_mma,
                flops / 1e9, t_gather, gathered / 1e6, (int)QK_GATHER_INSTR, (long long)bq,
                take ? "materialised" : "read in place");
    return take;
}

bool pass_attn_materialize_qk(ir_graph *g, pass_ctx *c) {
    uint32_t n0 = g->n, nb = 0;
    ir_id *before = ir_xmalloc(((size_t)n0 * 2 + 2) * sizeof *before);
    uint8_t *mk = ir_xcalloc((size_t)n0 * 3 + 1, 1); /* the graph grows by 2 casts a product */
    for (ir_id m1 = 0; m1 < n0; m1++) {
        if (g->nodes[m1].op != IR_OP_MATMUL) continue;
        ir_id m2 = second_product(g, m1, n0, mk), cat[2], user[2];
        if (m2 == IR_NONE || !qk_decide(g, c, m1, m2, cat, user)) continue;
        for (unsigned k = 0; k < 2; k++) {
            if (cat[k] == IR_NONE) continue;
            ir_id cp = ir_add_cast(g, cat[k], (ir_dtype)g->nodes[cat[k]].dtype);
            g->nodes[cp].flags |= IR_NF_STAGE;
            g->nodes[cp].line = g->nodes[cat[k]].line, g->nodes[cp].col = g->nodes[cat[k]].col;
            ir_set_in(g, &g->nodes[user[k]], 0, cp); /* q: m1's A operand; k: kT's permute */
            before[nb++] = user[k];
        }
    }
    free(mk);
    pass_place_appended(g, n0, before);
    free(before);
    return nb > 0;
}
