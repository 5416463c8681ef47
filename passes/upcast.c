/* upcast.c - [matmul.exact_upcast] (run by pass_simplify): a product f32(a) @ f32(b) of f32 casts
 * of one 16-bit dtype (a and b both f16 or both bf16, each cast possibly behind views: permutes,
 * reshapes, broadcasts, slices) becomes the product of the 16-bit values themselves with an f32
 * result, a @ b -> f32. Each product of two bf16 (8-bit significand) or f16 (11-bit) values is
 * exact in f32, so the tensor cores' 16-bit operands with f32 accumulation compute the IR's f32
 * product; only the order of the f32 sums differs, as in any f32 GEMM (and bf16 products below
 * f32's normal range, |a b| < 2^-126, which f32 rounds and tensor cores may flush). Nothing is
 * rounded to 16 bits: the product's dtype stays f32. TX_EXACT_UPCAST=0 turns the rule off. */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most views between a product's operand and its cast that the rule walks. */
#define UPCAST_MAX_VIEWS 8 /* the arrays of pass_exact_upcast_ok */

static bool is_16bit(ir_dtype dt) { return dt == IR_BF16 || dt == IR_F16; }

/* The f32 cast of a 16-bit value behind operand x through at most UPCAST_MAX_VIEWS one-input views
 * (their ids in views[], outermost first, *nv of them), or IR_NONE. */
static ir_id upcast_of(const ir_graph *g, ir_id x, ir_id *views, unsigned *nv) {
    *nv = 0;
    for (;;) {
        const ir_node *n = &g->nodes[x];
        if (n->op == IR_OP_CAST && n->dtype == IR_F32 &&
            is_16bit((ir_dtype)g->nodes[ir_in(g, n, 0)].dtype))
            return x;
        bool view = (ir_op_traits((ir_op)n->op) & IR_T_VIEW) && n->nin == 1;
        if (!view || *nv >= UPCAST_MAX_VIEWS) return IR_NONE;
        views[(*nv)++] = x;
        x = ir_in(g, n, 0);
    }
}

/* The 16-bit source of cast c seen through views[0 .. nv) (outermost first): the same views
 * rebuilt on c's input, appended before node at (pass_place_appended's before[]). Returns the
 * outermost. */
static ir_id rebuild(ir_graph *g, ir_id c, const ir_id *views, unsigned nv, ir_id at,
                     ir_id **before, uint32_t *nb, uint32_t *cap) {
    ir_id x = ir_in(g, &g->nodes[c], 0);
    for (unsigned k = nv; k-- > 0;) {
        ir_node v = g->nodes[views[k]];
        ir_id y = ir_add(g, (ir_op)v.op, (ir_dtype)g->nodes[x].dtype, &v.shape, &x, 1);
        g->nodes[y].a = v.a, g->nodes[y].line = v.line, g->nodes[y].col = v.col;
        if (*nb >= *cap) *before = ir_xrealloc(*before, (*cap = 2 * *cap + 16) * sizeof **before);
        (*before)[(*nb)++] = at;
        x = y;
    }
    return x;
}

/* Says on c->explain that product i, its operands' casts ca and cb, became product `to`. */
static void explain(const ir_graph *g, pass_ctx *c, ir_id i, ir_id ca, ir_id cb, ir_id to) {
    if (!c || !c->explain) return;
    ir_id sa = ir_in(g, &g->nodes[ca], 0), sb = ir_in(g, &g->nodes[cb], 0);
    const char *dt = ir_dtype_name((ir_dtype)g->nodes[sa].dtype);
    fprintf(c->explain,
            "simplify: [matmul.exact_upcast] %%%u = f32(%%%u) @ f32(%%%u) (through the views of "
            "each operand) of %s values: %%%u = %%%u @ %%%u with %s operands and an f32 product "
            "(%s x %s is exact in f32: tensor cores, f32 accumulation, nothing rounded to 16 "
            "bits)\n",
            i, sa, sb, dt, to, ir_in(g, &g->nodes[to], 0), ir_in(g, &g->nodes[to], 1), dt, dt, dt);
}

bool pass_exact_upcast_ok(const ir_graph *g, ir_id i, ir_id *ca, ir_id *cb, ir_id va[],
                          unsigned *na, ir_id vb[], unsigned *nb) {
    *ca = *cb = IR_NONE, *na = *nb = 0;
    const ir_node *n = &g->nodes[i];
    if (n->op != IR_OP_MATMUL || n->nin != 2 || n->dtype != IR_F32) return false;
    *ca = upcast_of(g, ir_in(g, n, 0), va, na);
    *cb = upcast_of(g, ir_in(g, n, 1), vb, nb);
    if (*ca == IR_NONE || *cb == IR_NONE) return false;
    return g->nodes[ir_in(g, &g->nodes[*ca], 0)].dtype ==
           g->nodes[ir_in(g, &g->nodes[*cb], 0)].dtype;
}

bool pass_exact_upcast(ir_graph *g, pass_ctx *c) {
    const char *knob = getenv("TX_EXACT_UPCAST");
    if (knob && !strcmp(knob, "0")) return false;
    ir_uses u;
    if (!ir_uses_build(g, &u)) return false;
    uint32_t n0 = g->n, nb = 0, cap = 0;
    ir_id *before = NULL;
    bool changed = false;
    for (ir_id i = 0; i < n0; i++) {
        if (g->nodes[i].op != IR_OP_MATMUL || g->nodes[i].dtype != IR_F32 || !ir_nuses(&u, i))
            continue;
        ir_id ca, cb, va[UPCAST_MAX_VIEWS], vb[UPCAST_MAX_VIEWS];
        unsigned na, nvb;
        if (!pass_exact_upcast_ok(g, i, &ca, &cb, va, &na, vb, &nvb)) continue;
        ir_id a = rebuild(g, ca, va, na, i, &before, &nb, &cap);
        ir_id b = rebuild(g, cb, vb, nvb, i, &before, &nb, &cap);
        ir_id ins[2] = {a, b};
        ir_id m = ir_add(g, IR_OP_MATMUL, IR_F32, &g->nodes[i].shape, ins, 2);
        if (nb >= cap) before = ir_xrealloc(before, (cap = 2 * cap + 16) * sizeof *before);
        before[nb++] = i;
        g->nodes[m].line = g->nodes[i].line, g->nodes[m].col = g->nodes[i].col;
        g->nodes[m].name = g->nodes[i].name, g->nodes[i].name = 0;
        ir_replace_uses(g, i, m);
        explain(g, c, i, ca, cb, m);
        changed = true;
    }
    ir_uses_free(&u);
    pass_place_appended(g, n0, before);
    free(before);
    return changed;
}

ir_dtype pass_mm_tc_dtype(const ir_graph *g, const ir_node *mm) {
    ir_dtype dt = (ir_dtype)mm->dtype;
    if (mm->op != IR_OP_MATMUL || mm->nin != 2) return dt;
    ir_dtype da = (ir_dtype)g->nodes[ir_in(g, mm, 0)].dtype;
    bool ok = is_16bit(da) && g->nodes[ir_in(g, mm, 1)].dtype == da && (dt == da || dt == IR_F32);
    return ok ? da : dt;
}
