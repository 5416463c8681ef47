/* attention.c - the attention region, as the planner matched it (region
 * facts mm1, scores; docs/fusion.md):
 *   s = F(q @ kT)  (F: any elementwise graph of the product and of values
 *                   broadcast over it, computed per score through
 *                   cg_emit_value with the product substituted)
 *   p = softmax(s, axis=-1) (the prelude's max / sub / exp / sum / div)
 *   o = cast(p) @ v, then the region's epilogue
 * as one kernel with an online softmax: running max m and sum l per query
 * row, rescaled as each key tile arrives; o divided by l once at the end.
 *
 * GPU, f16/bf16 with D, Dv <= 256 known at compile time: a Q tile of BM
 * rows (16 per warp) held in registers as mma fragments; K and V tiles of
 * BN keys staged in shared memory (two cp.async stages when they qualify);
 * scores and P @ V with mma m16n8k16 (fragments by ldmatrix); P
 * re-packed from the score fragments (no shared-memory round trip).
 * GPU otherwise: one warp per query row (lanes split D and Dv). Host: the
 * same online recurrence, one key at a time. Notes: docs/codegen-matmul.md. */
#include "codegen/cg_impl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The matched region (read from the region's facts). */
typedef struct attn_match {
    ir_id mm1, mm2, scores, q, kt, v;
    ir_dtype pdt;
} attn_match;

/* The emission state shared by the bodies. */
typedef struct attn_gen {
    cg_ctx *cx;
    bool failed; /* the score graph could not be emitted */
    const attn_match *am;
    cg_attn_desc d;
    LLVMValueRef bidx[IR_MAX_RANK];
    unsigned walk; /* node visits left to the block-sparsity walks (ATTN_WALK_MAX each) */
    int64_t sqmax; /* compile-time query rows (0: unknown) */
    bool ksplit;   /* the planner's strategy: the key split (IR_RED_KSPLIT) */
    /* Split-KV across blocks ([attention.split_kv], splits > 1): the partials kernel's block
     * visits only keys [kc0, kc1) (its chunk) and stores its rows' unnormalised O, running max
     * and sum (f32) at word (pbase + row) x (Dv + 2) + col of the scratch (cx->xtemp_ptr): col
     * < Dv O, Dv the max, Dv + 1 the sum. */
    int splits;
    LLVMValueRef kc0, kc1, pbase;
    /* split_rt > 0: sizes bound only at run time; the chunks in use are min(splits, split_rt /
     * blocks, key tiles / 4), at least 1 (split_rt: the region's split_slots), the blocks of the
     * others find no key and store empty partials. */
    int64_t split_rt;
    /* Grouped-query packing ([attention.gqa_pack], key split only; gpack > 1): K and V broadcast
     * over the last batch axis (the group, gpack query heads), so one block takes the group's
     * gpack x gT query rows as packed tile rows r = g gT + t (g the group axis index, t the query
     * row) and loads each K/V tile once for them; the batch loop runs with that axis at 1. */
    int gpack;
    int64_t gT;
    /* [attention.lse]: the region's row logsumexp output (IR_NONE: none), stored per row after
     * the last key tile (lse_store) */
    ir_id lse;
    /* [attention.ks_tma]: the key split's K and V tiles arrive by TMA (tensor maps ktm[] of the
     * views kvw[], the kernel's parameters) into an mbarrier ring of 128-byte swizzled boxes */
    bool ktma;
    LLVMValueRef ktm[2];
    pass_attn_view kvw[2];
    /* [attention.simt]: the CUDA-core block of the planner's tile (GPU, operands not one 16-bit
     * dtype, head dims <= PASS_ATTN_SG_MAXD known, not split) */
    bool simt;
    pass_attn_sg sg;
} attn_gen;

/* Node visits one block-sparsity question may make: the walks recurse into every operand and the
 * score graph is a DAG (i = i + i forty times has 2^40 paths), so they stop there, as unknown. */
enum { ATTN_WALK_MAX = 1 << 14 };

static void attn_tma_copy(cg_ctx *cx, const cg_attn_wg_view *v, LLVMValueRef tm, int64_t d,
                          int64_t rows, LLVMValueRef r0, const LLVMValueRef *bc, LLVMValueRef dst,
                          LLVMValueRef bar);
static void attn_view_batch(attn_gen *a, const cg_attn_wg_view *v, LLVMValueRef bc[CG_TMAP_MAXR]);
static void awg_expect(cg_ctx *cx, LLVMValueRef bar, int64_t bytes);

/* ---- matching ------------------------------------------------------------- */

static const ir_node *nd(const ir_graph *g, ir_id id) { return &g->nodes[id]; }

/* A measurement knob of the attention kernels (docs/codegen-attention.md): the environment
 * variable `name` of the compiling process set to 1 or 0, else dflt. Read at compile time only;
 * for benchmarks that measure what one ingredient buys. */
static bool attn_knob(const char *name, bool dflt) {
    const char *v = getenv(name);
    return v && (v[0] == '0' || v[0] == '1') && !v[1] ? v[0] == '1' : dflt;
}

/* Reads the planner's match of the region: mm1 and the scores from the
 * region, mm2 its anchor, P's dtype that of mm2's first operand. False when
 * the facts do not describe two products of one batch. */
static bool attn_match_region(const ir_graph *g, unsigned region, attn_match *am) {
    const ir_region *r = &g->regions[region];
    memset(am, 0, sizeof *am);
    if (r->mm1 >= g->n || r->scores >= g->n || r->anchor >= g->n) return false;
    am->mm1 = r->mm1, am->scores = r->scores, am->mm2 = r->anchor;
    const ir_node *m1 = nd(g, am->mm1), *m2 = nd(g, am->mm2);
    if (m1->op != IR_OP_MATMUL || m2->op != IR_OP_MATMUL ||
        !ir_shape_eq(&nd(g, am->scores)->shape, &m1->shape))
        return false;
    am->q = ir_in(g, m1, 0);
    am->kt = ir_in(g, m1, 1);
    am->v = ir_in(g, m2, 1);
    am->pdt = (ir_dtype)nd(g, ir_in(g, m2, 0))->dtype;
    unsigned nb = m2->shape.rank - 2;
    if (m1->shape.rank != m2->shape.rank) return false;
    for (unsigned i = 0; i < nb; i++)
        if (m1->shape.dim[i] != m2->shape.dim[i]) return false;
    return m1->shape.dim[nb] == m2->shape.dim[nb];
}

/* ---- shared pieces ---------------------------------------------------------- */

/* min(i, n - 1) for i64 values: an index kept inside the scores (rows and
 * keys past the end are computed, then masked or not stored). */
static LLVMValueRef clamp_idx(cg_ctx *cx, LLVMValueRef i, LLVMValueRef n) {
    LLVMValueRef hi = LLVMBuildSub(cx->b, n, cg_i64(cx, 1), "");
    return LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, i, hi, ""), i, hi, "");
}

/* The softmax input at query `row`, key `col` (i64) of batch a->bidx, from
 * the raw f32 product s: s rounded to the product's dtype, then the
 * region's score graph F through cg_emit_value with the product
 * substituted (masks, biases and soft caps computed per score; inputs they
 * read are loaded at the score's index). */
static LLVMValueRef score_f(attn_gen *a, LLVMValueRef s, LLVMValueRef row, LLVMValueRef col);
static LLVMValueRef score(attn_gen *a, LLVMValueRef s, LLVMValueRef row, LLVMValueRef col) {
    return score_f(a, cg_round_f32(a->cx, s, a->d.sdt), row, col);
}

/* score() of a product s already rounded to the product's dtype. */
static LLVMValueRef score_f(attn_gen *a, LLVMValueRef s, LLVMValueRef row, LLVMValueRef col) {
    cg_ctx *cx = a->cx;
    if (a->am->scores == a->am->mm1) return s;
    const ir_node *x = &cx->g->nodes[a->am->scores];
    LLVMValueRef dims[IR_MAX_RANK];
    for (unsigned i = 0; i < a->d.nb; i++) dims[i] = a->bidx[i];
    dims[a->d.nb] = clamp_idx(cx, row, a->d.Sq);
    dims[a->d.nb + 1] = clamp_idx(cx, col, a->d.Sk);
    cg_index idx = cg_index_from_dims(cx, &x->shape, dims);
    unsigned mark = cg_memo_mark(cx);
    cx->subst[a->am->mm1] = s;
    LLVMValueRef v = cg_emit_value(cx, a->am->scores, &idx);
    cx->subst[a->am->mm1] = NULL;
    cg_memo_reset(cx, mark);
    if (!v) {
        a->failed = true;
        return s;
    }
    return cg_convert(cx, v, (ir_dtype)x->dtype, IR_F32);
}

/* ---- block sparsity: the key tiles a block must visit ------------------------ */
/* An abstract value of a score-graph node over a tile of scores (query rows
 * [r0, r1], keys [c0, c1] of the block's batch index): bounds of an i32
 * value (lo, hi as i64), of a float (f32), or whether a bool may be false
 * (lo) and may be true (hi), as i1. `top` (a compile-time fact): nothing is
 * known (a value computed from the product, or an op without a rule). */
typedef struct attn_iv {
    bool top;
    uint8_t kind; /* 0 int, 1 float, 2 bool */
    LLVMValueRef lo, hi;
} attn_iv;

/* The tile a bound is taken over. */
typedef struct attn_tile {
    LLVMValueRef r0, r1, c0, c1; /* i64, inclusive */
} attn_tile;

static attn_iv iv_top(void) { return (attn_iv){.top = true}; }

static LLVMValueRef imin(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, a, b, ""), a, b, "");
}
static LLVMValueRef imax(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGT, a, b, ""), a, b, "");
}
static LLVMValueRef fmn(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOLT, a, b, ""), a, b, "");
}
static LLVMValueRef fmx(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOGT, a, b, ""), a, b, "");
}

/* The exact value of a node that is constant over the block's rows and
 * keys (its extent is 1 on both axes after broadcasting: a constant, a
 * per-batch or per-head input such as sequence lengths), computed at the
 * block's batch index; false when the node varies over the tile. */
/* True when node id may depend on the product mm1 (ids are topological:
 * nothing before mm1 does; deep graphs count as dependent). */
static bool dep_mm1(const ir_graph *g, ir_id id, ir_id mm1, unsigned depth, unsigned *walk) {
    if (id == mm1) return true;
    if (id < mm1) return false;
    if (depth > 64 || *walk == 0) return true;
    --*walk;
    const ir_node *n = &g->nodes[id];
    for (unsigned k = 0; k < n->nin; k++)
        if (dep_mm1(g, ir_in(g, n, k), mm1, depth + 1, walk)) return true;
    return false;
}

static bool exact_ok(attn_gen *a, ir_id id) {
    const ir_node *n = &a->cx->g->nodes[id];
    unsigned R = a->d.nb + 2, r = n->shape.rank;
    if (r > R || dep_mm1(a->cx->g, id, a->am->mm1, 0, &a->walk)) return false;
    for (unsigned k = 0; k < r; k++)
        if (k + R - r >= a->d.nb && n->shape.dim[k] != 1) return false;
    return true;
}

static bool iv_exact(attn_gen *a, ir_id id, attn_iv *out) {
    cg_ctx *cx = a->cx;
    const ir_node *n = &cx->g->nodes[id];
    unsigned R = a->d.nb + 2, r = n->shape.rank;
    if (!exact_ok(a, id)) return false;
    LLVMValueRef dims[IR_MAX_RANK];
    for (unsigned k = 0; k < r; k++)
        dims[k] = n->shape.dim[k] == 1 ? cg_i64(a->cx, 0) : a->bidx[k + R - r];
    cg_index idx = cg_index_from_dims(cx, &n->shape, dims);
    unsigned mark = cg_memo_mark(cx);
    LLVMValueRef v = cg_emit_value(cx, id, &idx);
    cg_memo_reset(cx, mark);
    if (!v) return false;
    ir_dtype dt = (ir_dtype)n->dtype;
    if (dt == IR_BOOL) {
        *out = (attn_iv){false, 2, LLVMBuildNot(a->cx->b, v, ""), v};
    } else if (dt == IR_I32) {
        LLVMValueRef w = LLVMBuildSExt(a->cx->b, v, a->cx->i64, "");
        *out = (attn_iv){false, 0, w, w};
    } else {
        LLVMValueRef f = cg_convert(cx, v, dt, IR_F32);
        *out = (attn_iv){false, 1, f, f};
    }
    return true;
}

/* Bounds of an iota over the tile: its axis maps (trailing-aligned, as
 * broadcasting does) to the rows, the keys, or a batch axis. */
static attn_iv iv_iota(attn_gen *a, const ir_node *n, const attn_tile *t) {
    unsigned R = a->d.nb + 2, r = n->shape.rank, ax = (unsigned)n->a.axis, sa = ax + R - r;
    if (r > R) return iv_top();
    if (n->shape.dim[ax] == 1) return (attn_iv){false, 0, cg_i64(a->cx, 0), cg_i64(a->cx, 0)};
    if (sa == R - 2) return (attn_iv){false, 0, t->r0, t->r1};
    if (sa == R - 1) return (attn_iv){false, 0, t->c0, t->c1};
    return (attn_iv){false, 0, a->bidx[sa], a->bidx[sa]};
}

/* Whether an int comparison may be true (*t) and may be false (*f). */
static void iv_cmp(cg_ctx *cx, ir_op op, const attn_iv *x, const attn_iv *y, LLVMValueRef *t,
                   LLVMValueRef *f) {
    LLVMBuilderRef b = cx->b;
    switch (op) {
        case IR_OP_LT:
            *t = LLVMBuildICmp(b, LLVMIntSLT, x->lo, y->hi, "");
            *f = LLVMBuildICmp(b, LLVMIntSGE, x->hi, y->lo, "");
            break;
        case IR_OP_LE:
            *t = LLVMBuildICmp(b, LLVMIntSLE, x->lo, y->hi, "");
            *f = LLVMBuildICmp(b, LLVMIntSGT, x->hi, y->lo, "");
            break;
        case IR_OP_GT:
            *t = LLVMBuildICmp(b, LLVMIntSGT, x->hi, y->lo, "");
            *f = LLVMBuildICmp(b, LLVMIntSLE, x->lo, y->hi, "");
            break;
        case IR_OP_GE:
            *t = LLVMBuildICmp(b, LLVMIntSGE, x->hi, y->lo, "");
            *f = LLVMBuildICmp(b, LLVMIntSLT, x->lo, y->hi, "");
            break;
        default: { /* EQ, NE */
            LLVMValueRef meet = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLE, x->lo, y->hi, ""),
                                             LLVMBuildICmp(b, LLVMIntSLE, y->lo, x->hi, ""), "");
            LLVMValueRef one =
                LLVMBuildAnd(b,
                             LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, x->lo, x->hi, ""),
                                          LLVMBuildICmp(b, LLVMIntEQ, y->lo, y->hi, ""), ""),
                             LLVMBuildICmp(b, LLVMIntEQ, x->lo, y->lo, ""), "");
            LLVMValueRef ne = LLVMBuildNot(b, one, "");
            *t = op == IR_OP_EQ ? meet : ne;
            *f = op == IR_OP_EQ ? ne : meet;
        }
    }
}

/* The abstract value of node id over tile t (docs/codegen.md, block
 * sparsity); `depth` bounds the recursion. */
static attn_iv iv_eval(attn_gen *a, ir_id id, const attn_tile *t, unsigned depth) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    const ir_graph *g = a->cx->g;
    const ir_node *n = &g->nodes[id];
    attn_iv r;
    if (depth > 64 || id == a->am->mm1 || a->walk == 0) return iv_top();
    a->walk--;
    if (n->op == IR_OP_IOTA) return iv_iota(a, n, t);
    if (iv_exact(a, id, &r)) return r;
    ir_op op = (ir_op)n->op;
    if (op == IR_OP_BROADCAST)
        return iv_eval(a, ir_in(g, n, 0), t, depth + 1); /* trailing-aligned */
    if (!(ir_op_traits(op) & IR_T_ELEM) || n->nin > 3) return iv_top();
    attn_iv x[3];
    bool logic = op == IR_OP_AND || op == IR_OP_OR;
    for (unsigned k = 0; k < n->nin; k++) {
        x[k] = iv_eval(a, ir_in(g, n, k), t, depth + 1);
        if (x[k].top && logic) /* an unknown bool (a mask input) may be true and may be false */
            x[k] = (attn_iv){false, 2, LLVMConstInt(cx->i1, 1, 0), LLVMConstInt(cx->i1, 1, 0)};
        if (x[k].top && !(op == IR_OP_WHERE && k > 0)) return iv_top();
    }
    switch (op) {
        case IR_OP_WHERE: { /* c false everywhere: b; true everywhere: a; else both */
            if (x[1].top || x[2].top) {
                if (x[1].top == x[2].top) return iv_top();
                /* one side unknown (the scores): known only where c always picks the other
                 * (where(keep, s, -inf) where keep is false, where(pad, -inf, s) where pad is) */
                const attn_iv *kn = x[1].top ? &x[2] : &x[1];
                if (kn->kind != 1) return iv_top();
                LLVMValueRef unk = x[1].top ? x[0].hi : x[0].lo; /* c may pick the unknown side */
                LLVMValueRef hi = LLVMBuildSelect(b, unk, cg_f32c(cx, INFINITY), kn->hi, "");
                LLVMValueRef lo = LLVMBuildSelect(b, unk, cg_f32c(cx, -INFINITY), kn->lo, "");
                return (attn_iv){false, 1, lo, hi};
            }
            if (x[1].kind != x[2].kind) return iv_top();
            bool f = x[1].kind == 1;
            LLVMValueRef lo = f           ? fmn(cx, x[1].lo, x[2].lo)
                              : x[1].kind ? LLVMBuildOr(b, x[1].lo, x[2].lo, "")
                                          : imin(cx, x[1].lo, x[2].lo);
            LLVMValueRef hi = f           ? fmx(cx, x[1].hi, x[2].hi)
                              : x[1].kind ? LLVMBuildOr(b, x[1].hi, x[2].hi, "")
                                          : imax(cx, x[1].hi, x[2].hi);
            lo = LLVMBuildSelect(b, x[0].hi, LLVMBuildSelect(b, x[0].lo, lo, x[1].lo, ""), x[2].lo,
                                 "");
            hi = LLVMBuildSelect(b, x[0].hi, LLVMBuildSelect(b, x[0].lo, hi, x[1].hi, ""), x[2].hi,
                                 "");
            return (attn_iv){false, x[1].kind, lo, hi};
        }
        case IR_OP_AND:
            return (attn_iv){false, 2, LLVMBuildOr(b, x[0].lo, x[1].lo, ""),
                             LLVMBuildAnd(b, x[0].hi, x[1].hi, "")};
        case IR_OP_OR:
            return (attn_iv){false, 2, LLVMBuildAnd(b, x[0].lo, x[1].lo, ""),
                             LLVMBuildOr(b, x[0].hi, x[1].hi, "")};
        case IR_OP_NOT: return (attn_iv){false, 2, x[0].hi, x[0].lo};
        case IR_OP_CAST:
            if (x[0].kind == 0 && ir_dtype_is_float((ir_dtype)n->dtype))
                return (attn_iv){false, 1, LLVMBuildSIToFP(b, x[0].lo, cx->f32, ""),
                                 LLVMBuildSIToFP(b, x[0].hi, cx->f32, "")};
            return x[0].kind == 1 && ir_dtype_is_float((ir_dtype)n->dtype) ? x[0] : iv_top();
        default: break;
    }
    double sm;
    int si = pass_attn_pos_scale(g, id, &sm);
    if (si >= 0 && x[si].kind == 1) /* a positive scale keeps the order and -inf */
        return (attn_iv){false, 1, LLVMBuildFMul(b, x[si].lo, cg_f32c(cx, (float)sm), ""),
                         LLVMBuildFMul(b, x[si].hi, cg_f32c(cx, (float)sm), "")};
    if (ir_op_traits(op) & IR_T_CMP) {
        if (x[0].kind != 0 || x[1].kind != 0) return iv_top();
        LLVMValueRef mt, mf;
        iv_cmp(cx, op, &x[0], &x[1], &mt, &mf);
        return (attn_iv){false, 2, mf, mt};
    }
    if (n->nin == 2 && x[0].kind == 0 && x[1].kind == 0 && n->dtype == IR_I32) {
        if (op == IR_OP_ADD)
            return (attn_iv){false, 0, LLVMBuildAdd(b, x[0].lo, x[1].lo, ""),
                             LLVMBuildAdd(b, x[0].hi, x[1].hi, "")};
        if (op == IR_OP_SUB)
            return (attn_iv){false, 0, LLVMBuildSub(b, x[0].lo, x[1].hi, ""),
                             LLVMBuildSub(b, x[0].hi, x[1].lo, "")};
    }
    return iv_top();
}

/* The kind iv_eval gives node id (0 int, 1 float, 2 bool), or -1 for top:
 * the same rules, decided at compile time without emitting anything. */
static int iv_static(attn_gen *a, ir_id id, unsigned depth) {
    const ir_graph *g = a->cx->g;
    const ir_node *n = &g->nodes[id];
    if (depth > 64 || id == a->am->mm1 || a->walk == 0) return -1;
    a->walk--;
    if (n->op == IR_OP_IOTA) return n->shape.rank > a->d.nb + 2 ? -1 : 0;
    if (exact_ok(a, id)) return n->dtype == IR_BOOL ? 2 : n->dtype == IR_I32 ? 0 : 1;
    ir_op op = (ir_op)n->op;
    if (op == IR_OP_BROADCAST) return iv_static(a, ir_in(g, n, 0), depth + 1);
    if (!(ir_op_traits(op) & IR_T_ELEM) || n->nin > 3) return -1;
    int k[3];
    for (unsigned i = 0; i < n->nin; i++) k[i] = iv_static(a, ir_in(g, n, i), depth + 1);
    if (op == IR_OP_WHERE) {
        if (k[0] != 2 || (k[1] < 0 && k[2] < 0)) return -1;
        if (k[1] < 0 || k[2] < 0) return k[1] == 1 || k[2] == 1 ? 1 : -1; /* one side the scores */
        return k[1] == k[2] ? k[1] : -1;
    }
    double sm;
    int si = pass_attn_pos_scale(g, id, &sm);
    if (si >= 0) return k[si] == 1 ? 1 : -1;
    /* m & causal: one known side decides where it is false (|: where it is true) */
    if ((op == IR_OP_AND || op == IR_OP_OR) && (k[0] == 2 || k[1] == 2)) return 2;
    for (unsigned i = 0; i < n->nin; i++)
        if (k[i] < 0) return -1;
    if (op == IR_OP_AND || op == IR_OP_OR || op == IR_OP_NOT) return 2;
    if (op == IR_OP_CAST)
        return (k[0] == 0 || k[0] == 1) && ir_dtype_is_float((ir_dtype)n->dtype) ? 1 : -1;
    if (ir_op_traits(op) & IR_T_CMP) return k[0] == 0 && k[1] == 0 ? 2 : -1;
    if ((op == IR_OP_ADD || op == IR_OP_SUB) && k[0] == 0 && k[1] == 0 && n->dtype == IR_I32)
        return 0;
    return -1;
}

/* The range [*kb, *ke) of keys a block of query rows [r0, r1] must visit:
 * from the first to the last tile of bn keys whose scores are not all -inf
 * (block sparsity: causal, sliding-window, prefix and length masks). False
 * (nothing emitted) when the mask is not a function of positions and
 * per-batch values: then every key is visited. */
static bool attn_key_range(attn_gen *a, LLVMValueRef r0, LLVMValueRef r1, int64_t bn,
                           LLVMValueRef *kb, LLVMValueRef *ke) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    a->walk = ATTN_WALK_MAX;
    if (a->am->scores == a->am->mm1 || iv_static(a, a->am->scores, 0) != 1) return false;
    LLVMValueRef nt =
        LLVMBuildUDiv(b, LLVMBuildAdd(b, a->d.Sk, cg_i64(cx, bn - 1), ""), cg_i64(cx, bn), "");
    LLVMValueRef first = cg_var(cx, nt), last = cg_var(cx, cg_i64(cx, -1));
    cg_loop l;
    LLVMValueRef ti = cg_loop_begin(cx, &l, cg_i64(cx, 0), nt, cg_i64(cx, 1), "tile");
    LLVMValueRef c0 = LLVMBuildMul(b, ti, cg_i64(cx, bn), "");
    LLVMValueRef c1 = imin(cx, LLVMBuildAdd(b, c0, cg_i64(cx, bn - 1), ""),
                           LLVMBuildSub(b, a->d.Sk, cg_i64(cx, 1), ""));
    attn_tile t = {r0, r1, c0, c1};
    a->walk = ATTN_WALK_MAX;
    attn_iv s = iv_eval(a, a->am->scores, &t, 0);
    /* (iv_static said float; should the walk still give up, every tile is live) */
    LLVMValueRef live = s.top || s.kind != 1
                            ? LLVMConstInt(cx->i1, 1, 0)
                            : LLVMBuildFCmp(b, LLVMRealUNE, s.hi, cg_f32c(cx, -INFINITY), "live");
    LLVMValueRef fo = LLVMBuildLoad2(b, cx->i64, first, ""),
                 lo = LLVMBuildLoad2(b, cx->i64, last, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, live, imin(cx, fo, ti), fo, ""), first);
    LLVMBuildStore(b, LLVMBuildSelect(b, live, imax(cx, lo, ti), lo, ""), last);
    cg_loop_end(cx, &l);
    LLVMValueRef f = LLVMBuildLoad2(b, cx->i64, first, ""),
                 la = LLVMBuildLoad2(b, cx->i64, last, "");
    *kb = LLVMBuildMul(b, f, cg_i64(cx, bn), "kb");
    *ke = imin(cx, LLVMBuildMul(b, LLVMBuildAdd(b, la, cg_i64(cx, 1), ""), cg_i64(cx, bn), ""),
               a->d.Sk);
    *ke = imax(cx, *ke, *kb);
    return true;
}

/* 1 / l; when l is 0: 0 without keys (the product over an empty axis is
 * 0), NaN when every key of the row is masked (-inf scores: softmax of all
 * -inf is NaN, as in PyTorch eager and the reference interpreter). */
static LLVMValueRef inv_sum(cg_ctx *cx, LLVMValueRef l, LLVMValueRef sk) {
    LLVMValueRef z = LLVMBuildFCmp(cx->b, LLVMRealOEQ, l, cg_f32c(cx, 0), "");
    LLVMValueRef none = LLVMBuildICmp(cx->b, LLVMIntEQ, sk, cg_i64(cx, 0), "");
    LLVMValueRef zv = LLVMBuildSelect(cx->b, none, cg_f32c(cx, 0), cg_f32c(cx, NAN), "");
    return LLVMBuildSelect(cx->b, z, zv, LLVMBuildFDiv(cx->b, cg_f32c(cx, 1.0), l, ""), "");
}

/* maxnum(a, b) of two f32 (the larger; a NaN operand yields the other). */
static LLVMValueRef fmaxnum(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef ab[2] = {a, b};
    return cg_call_intrinsic(cx, "llvm.maxnum", true, ab, 2);
}

static LLVMValueRef ld(cg_ctx *cx, LLVMValueRef p) { return LLVMBuildLoad2(cx->b, cx->f32, p, ""); }
static void st(cg_ctx *cx, LLVMValueRef v, LLVMValueRef p) { LLVMBuildStore(cx->b, v, p); }

/* Split-KV: [*kb, *ke) cut to the block's chunk of keys (unchanged when not split). */
static void chunk_clip(attn_gen *a, LLVMValueRef *kb, LLVMValueRef *ke) {
    if (a->splits <= 1) return;
    *kb = imax(a->cx, *kb, a->kc0);
    *ke = imin(a->cx, *ke, a->kc1);
}

/* The scratch word of (row, col) of the block's partials (split-KV; see attn_gen). */
static LLVMValueRef part_at(attn_gen *a, LLVMValueRef row, LLVMValueRef col) {
    cg_ctx *cx = a->cx;
    LLVMValueRef w = LLVMBuildAdd(cx->b, a->d.Dv, cg_i64(cx, 2), "");
    LLVMValueRef i = LLVMBuildAdd(
        cx->b, LLVMBuildMul(cx->b, LLVMBuildAdd(cx->b, a->pbase, row, ""), w, ""), col, "");
    return LLVMBuildGEP2(cx->b, cx->f32, cx->xtemp_ptr, &i, 1, "part");
}

/* Stores the partial max m and sum l of `row` (split-KV). */
static void part_store_ml(attn_gen *a, LLVMValueRef row, LLVMValueRef m, LLVMValueRef l) {
    cg_ctx *cx = a->cx;
    st(cx, m, part_at(a, row, a->d.Dv));
    st(cx, l, part_at(a, row, LLVMBuildAdd(cx->b, a->d.Dv, cg_i64(cx, 1), "")));
}
static LLVMValueRef fmul(cg_ctx *cx, LLVMValueRef x, LLVMValueRef y) {
    return LLVMBuildFMul(cx->b, x, y, "");
}
static LLVMValueRef fadd(cg_ctx *cx, LLVMValueRef x, LLVMValueRef y) {
    return LLVMBuildFAdd(cx->b, x, y, "");
}

/* Online-softmax update of one row: given the running max *m (variable)
 * and the tile max mx, stores the new max and returns (alpha, msafe):
 * alpha rescales old sums, msafe is subtracted from the scores (0 while the
 * max is still -inf, so exp gives 0, never NaN). */
static void online_max(cg_ctx *cx, LLVMValueRef mvar, LLVMValueRef mx, LLVMValueRef *alpha,
                       LLVMValueRef *msafe, bool fast) {
    LLVMValueRef mo = ld(cx, mvar);
    LLVMValueRef mn = fmaxnum(cx, mo, mx);
    LLVMValueRef ninf = LLVMBuildFCmp(cx->b, LLVMRealOEQ, mn, cg_f32c(cx, -INFINITY), "");
    *msafe = LLVMBuildSelect(cx->b, ninf, cg_f32c(cx, 0), mn, "");
    LLVMValueRef dm = LLVMBuildFSub(cx->b, mo, *msafe, "");
    *alpha = fast ? cg_exp_fast(cx, dm) : cg_math(cx, IR_OP_EXP, dm, NULL);
    st(cx, mn, mvar);
}

/* ---- GPU tensor-core body --------------------------------------------------- */

/* Picks BM (query rows, 16 per warp) and BN (keys per tile) so that the
 * Q/K buffer and the V buffer fit in 48 KiB of static shared memory. */
static bool attn_tc_tile(int64_t dp, int64_t dvp, int64_t *bm, int64_t *bn) {
    static const int64_t cand[][2] = {{64, 64}, {64, 32}, {32, 32}, {16, 32}, {16, 16}};
    for (unsigned i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        int64_t m = cand[i][0], n = cand[i][1];
        int64_t rows = m > n ? m : n;
        int64_t vb = dvp * (n + 8) > n * (dvp + 8) ? dvp * (n + 8) : n * (dvp + 8);
        if ((rows * (dp + 8) + vb) * 2 <= 48 * 1024) {
            *bm = m, *bn = n;
            return true;
        }
    }
    return false;
}

/* Bytes of shared memory ks_combine needs for dt column groups of 8 (DVP / 8). */
static int64_t ks_bytes(int dt) { return 4 * (2 * 4 * 2 * 32) + (int64_t)dt * 4 * 32 * 4; }

/* The key split's cp.async ring depth: 3 (two tiles in flight while one is computed; with the
 * Q/combine buffer 112 KiB at D = Dv = 128, two blocks per SM), TX_ATTN_KS_STAGES=2..4 in the
 * compiling process's environment for benchmarks. */
enum { KS_STAGES_DEFAULT = 3 };
static int attn_ks_stages(void) {
    const char *v = getenv("TX_ATTN_KS_STAGES");
    return v && v[0] >= '2' && v[0] <= '4' && !v[1] ? v[0] - '0' : KS_STAGES_DEFAULT;
}

/* The key-split combine of 4 warps (shared memory `sm`, ks_bytes): each lane's running max
 * mv[h] (variables) and quad-summed sum lt[h] for its rows h = 0, 1 meet those of the same lane
 * in the other warps: M = max of the maxima, every warp's O scaled by exp(m_w - M), summed into
 * warp 0's ov (through one slab, warp after warp); lt[h] becomes sum_w l_w exp(m_w - M) and
 * mv[h] M (the max the combined O and sum are relative to; -inf when every score was). */
static void ks_combine(cg_ctx *cx, LLVMValueRef sm, LLVMValueRef warp, LLVMValueRef lane, int DT,
                       LLVMValueRef *mv, LLVMValueRef *lt, LLVMValueRef (*ov)[4]) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef f = cx->f32;
/* m at [0][w][h][lane], l at [1][w][h][lane], then the slab [t][q][lane] */
#define KS_AT(i) LLVMBuildGEP2(b, f, sm, (LLVMValueRef[]){i}, 1, "")
    LLVMValueRef mine[2];
    for (int h = 0; h < 2; h++) {
        LLVMValueRef wi = LLVMBuildAdd(
            b,
            LLVMBuildMul(
                b, LLVMBuildAdd(b, LLVMBuildMul(b, warp, cg_i32(cx, 2), ""), cg_i32(cx, h), ""),
                cg_i32(cx, 32), ""),
            lane, "");
        mine[h] = ld(cx, mv[h]);
        st(cx, mine[h], KS_AT(wi));
        st(cx, lt[h], KS_AT(LLVMBuildAdd(b, wi, cg_i32(cx, 256), "")));
    }
    cg_barrier(cx);
    for (int h = 0; h < 2; h++) {
        LLVMValueRef mw[4], M = cg_f32c(cx, -INFINITY);
        for (int w = 0; w < 4; w++) {
            mw[w] = ld(cx, KS_AT(LLVMBuildAdd(b, lane, cg_i32(cx, (w * 2 + h) * 32), "")));
            M = fmaxnum(cx, M, mw[w]);
        }
        LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, M, cg_f32c(cx, -INFINITY), "");
        LLVMValueRef Ms = LLVMBuildSelect(b, ninf, cg_f32c(cx, 0), M, "");
        st(cx, M, mv[h]);
        LLVMValueRef L = cg_f32c(cx, 0);
        for (int w = 0; w < 4; w++) {
            LLVMValueRef lw =
                ld(cx, KS_AT(LLVMBuildAdd(b, lane, cg_i32(cx, 256 + (w * 2 + h) * 32), "")));
            L = fadd(cx, L, fmul(cx, lw, cg_exp_fast(cx, LLVMBuildFSub(b, mw[w], Ms, ""))));
        }
        lt[h] = L;
        LLVMValueRef sc = cg_exp_fast(cx, LLVMBuildFSub(b, mine[h], Ms, ""));
        for (int t = 0; t < DT; t++)
            for (int q = h * 2; q < h * 2 + 2; q++)
                st(cx, fmul(cx, ld(cx, ov[t][q]), sc), ov[t][q]);
    }
    for (int w = 1; w < 4; w++) {
        cg_barrier(cx);
        LLVMBasicBlockRef j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, warp, cg_i32(cx, w), ""));
        for (int t = 0; t < DT; t++)
            for (int q = 0; q < 4; q++)
                st(cx, ld(cx, ov[t][q]),
                   KS_AT(LLVMBuildAdd(b, lane, cg_i32(cx, 512 + (t * 4 + q) * 32), "")));
        cg_if_end(cx, j);
        cg_barrier(cx);
        j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, warp, cg_i32(cx, 0), ""));
        for (int t = 0; t < DT; t++)
            for (int q = 0; q < 4; q++) {
                LLVMValueRef x =
                    ld(cx, KS_AT(LLVMBuildAdd(b, lane, cg_i32(cx, 512 + (t * 4 + q) * 32), "")));
                st(cx, fadd(cx, ld(cx, ov[t][q]), x), ov[t][q]);
            }
        cg_if_end(cx, j);
    }
#undef KS_AT
}

/* The L2 prefetch size the key split's copies ask for: 128 bytes (B8 H32 L32768 on the H200:
 * 1021 us against 1050 without, 1039 with 256; bench/results/2026-12-02-h200-decode), or
 * TX_ATTN_KS_L2=0|64|128|256 (0: none) in the compiling process's environment for benchmarks;
 * the template names it (` l2pN`). */
enum { KS_L2_DEFAULT = 128 };
static int attn_ks_l2(void) {
    const char *v = getenv("TX_ATTN_KS_L2");
    if (!v) return KS_L2_DEFAULT;
    int n = atoi(v);
    return n == 64 || n == 128 || n == 256 ? n : 0;
}

/* The key split's tile: 64 keys, or TX_ATTN_KS_BN=128 in the compiling process's environment
 * (benchmarks; each warp then takes 32 keys of a tile, the ring's stages twice the bytes). */
static int64_t attn_ks_bn(void) {
    const char *v = getenv("TX_ATTN_KS_BN");
    return v && !strcmp(v, "128") ? 128 : 64;
}

/* TX_ATTN_KS_BLOCKS=N (2..8) in the compiling process's environment: the key split's kernel
 * asks ptxas for N resident blocks per SM (nvvm minctasm: registers capped at 64K / (N x threads)),
 * for benchmarks (template ` bN`); 0 (the default) leaves ptxas free. */
static int attn_ks_blocks(cg_ctx *cx) {
    const char *v = getenv("TX_ATTN_KS_BLOCKS");
    int n = v && v[0] >= '2' && v[0] <= '8' && !v[1] ? v[0] - '0' : 0;
    if (n && cx->gpu) {
        LLVMMetadataRef md[3] = {LLVMValueAsMetadata(cx->fn),
                                 LLVMMDStringInContext2(cx->llctx, "minctasm", 8),
                                 LLVMValueAsMetadata(LLVMConstInt(cx->i32, (unsigned)n, 0))};
        LLVMAddNamedMetadataOperand(
            cx->mod, "nvvm.annotations",
            LLVMMetadataAsValue(cx->llctx, LLVMMDNodeInContext2(cx->llctx, md, 3)));
    }
    return n;
}

/* True when ks_tile_async can copy tile t with nthreads threads: every thread's vectors lie on
 * one fast-axis position (the vectors per fast line divide nthreads), each thread copies the
 * same number of vectors, and the slow axis has a compile-time stride. */
static bool ks_lean_ok(const cg_mm_tile *t, unsigned nthreads) {
    bool rf = t->o->unit_r && !t->o->unit_c;
    int64_t fv = (rf ? t->rows : t->cols) / 8, nvec = t->rows * t->cols / 8;
    LLVMValueRef ss = rf ? t->o->sc : t->o->sr;
    return fv > 0 && nthreads % fv == 0 && nvec % nthreads == 0 && ss && LLVMIsAConstantInt(ss) &&
           attn_knob("TX_ATTN_KS_LEAN", true);
}

/* cg_mm_tile_async's copy of tile t (same vectors, same shared layout) with the address
 * arithmetic the key split's steady loop can afford (ks_lean_ok): the thread's first vector's
 * global and shared offsets once, every further vector a compile-time step further (slow lines
 * nthreads / fv apart), so the copies take immediate offsets from two bases. `ragged`: the tile
 * may cross its slow-axis bound (vectors past it are zero-filled from the operand's first
 * element); else only the fast-axis bound of the thread's position is tested (a constant for
 * head dims that are a multiple of 8 of the padded width). l2: the prefetch size (0: none). */
static void ks_tile_async(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads,
                          bool ragged, int l2) {
    LLVMBuilderRef b = cx->b;
    bool rf = t->o->unit_r && !t->o->unit_c;
    int64_t fv = (rf ? t->rows : t->cols) / 8, nper = t->rows * t->cols / 8 / nthreads;
    int64_t lines = (int64_t)nthreads / fv, ps_slow = rf ? t->ps_c : t->ps_r;
    int64_t gstep = lines * LLVMConstIntGetSExtValue(rf ? t->o->sc : t->o->sr);
    LLVMValueRef f = LLVMBuildMul(b, LLVMBuildURem(b, tid, cg_i32(cx, fv), ""), cg_i32(cx, 8), "");
    LLVMValueRef s = LLVMBuildUDiv(b, tid, cg_i32(cx, fv), "");
    LLVMValueRef f64 = LLVMBuildZExt(b, f, cx->i64, ""), s64 = LLVMBuildZExt(b, s, cx->i64, "");
    LLVMValueRef gr = LLVMBuildAdd(b, t->r0, rf ? f64 : s64, "");
    LLVMValueRef gc = LLVMBuildAdd(b, t->c0, rf ? s64 : f64, "");
    /* the fast-axis bound: a constant true when the tile's fast extent lies inside it */
    LLVMValueRef fo = rf ? t->r0 : t->c0, flim = rf ? t->rlim : t->clim;
    bool fall =
        LLVMIsAConstantInt(fo) && LLVMIsAConstantInt(flim) &&
        LLVMConstIntGetSExtValue(fo) + (rf ? t->rows : t->cols) <= LLVMConstIntGetSExtValue(flim);
    LLVMValueRef fin = fall ? LLVMConstInt(LLVMInt1TypeInContext(cx->llctx), 1, 0)
                            : LLVMBuildICmp(b, LLVMIntSLT, rf ? gr : gc, flim, "");
    LLVMValueRef sl = rf ? gc : gr, slim = rf ? t->clim : t->rlim;
    LLVMTypeRef gp = LLVMPointerTypeInContext(cx->llctx, 1);
    LLVMValueRef base = t->o->ptr;
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(base)) != 1)
        base = LLVMBuildAddrSpaceCast(b, base, gp, "");
    LLVMValueRef z = cg_i64(cx, 0);
    LLVMValueRef off = cg_mm_offset(cx, t->o, t->nb, t->bidx, LLVMBuildSelect(b, fin, gr, z, ""),
                                    LLVMBuildSelect(b, fin, gc, z, ""));
    LLVMValueRef g0 = LLVMBuildGEP2(b, cx->i16, base, &off, 1, "");
    LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, f, cg_i32(cx, rf ? t->ps_r : t->ps_c), ""),
                                   LLVMBuildMul(b, s, cg_i32(cx, ps_slow), ""), "");
    LLVMValueRef s0 = LLVMBuildGEP2(b, cx->i16, t->smem, &so, 1, "");
    /* a whole vector whatever the thread (no src-size operand): the plain copy, which the
     * memory system coalesces across the warp */
    bool whole = !ragged && LLVMIsAConstantInt(fin) && LLVMConstIntGetZExtValue(fin);
    char text[128], pf[16] = "";
    if (l2) snprintf(pf, sizeof pf, ".L2::%dB", l2);
    snprintf(text, sizeof text, "cp.async.cg.shared.global%s [$0], [$1], 16%s;", pf,
             whole ? "" : ", $2");
    for (int64_t i = 0; i < nper; i++) {
        LLVMValueRef gi =
            LLVMBuildGEP2(b, cx->i16, g0, (LLVMValueRef[]){cg_i64(cx, i * gstep)}, 1, "");
        LLVMValueRef si = LLVMBuildGEP2(
            b, cx->i16, s0, (LLVMValueRef[]){cg_i32(cx, (int)(i * lines * ps_slow))}, 1, "");
        LLVMValueRef in = fin;
        if (ragged) {
            LLVMValueRef li = LLVMBuildAdd(b, sl, cg_i64(cx, i * lines), "");
            in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSLT, li, slim, ""), "");
            gi = LLVMBuildSelect(b, in, gi, base, "");
        }
        LLVMValueRef args[3] = {si, gi, LLVMBuildSelect(b, in, cg_i32(cx, 16), cg_i32(cx, 0), "")};
        if (l2)
            cg_wg_asm(cx, NULL, text, whole ? "l,l,~{memory}" : "l,l,r,~{memory}", args,
                      whole ? 2 : 3);
        else
            cg_call_intrinsic(cx,
                              whole ? "llvm.nvvm.cp.async.cg.shared.global.16"
                                    : "llvm.nvvm.cp.async.cg.shared.global.16.s",
                              false, args, whole ? 2 : 3);
    }
}

/* The key split's copy of the K and V tiles starting at key j (a multiple of bn) into shared
 * tk->smem / tv->smem: ks_tile_async where both qualify, the whole tile inside the keys tested
 * once (a tile crossing Sk takes the per-vector test; none can when Sk is a known multiple of
 * bn), else cg_mm_tile_async. */
static void ks_copy_kv(cg_ctx *cx, cg_mm_tile *tk, cg_mm_tile *tv, LLVMValueRef j, int64_t bn,
                       LLVMValueRef sk, LLVMValueRef tid, unsigned nthreads, int l2) {
    tk->c0 = j, tv->r0 = j;
    if (!ks_lean_ok(tk, nthreads) || !ks_lean_ok(tv, nthreads)) {
        cg_mm_tile_async(cx, tk, tid, nthreads);
        cg_mm_tile_async(cx, tv, tid, nthreads);
        return;
    }
    LLVMBuilderRef b = cx->b;
    if (LLVMIsAConstantInt(sk) && LLVMConstIntGetSExtValue(sk) % bn == 0) {
        /* tiles start at multiples of bn below sk: all whole */
        ks_tile_async(cx, tk, tid, nthreads, false, l2);
        ks_tile_async(cx, tv, tid, nthreads, false, l2);
        return;
    }
    LLVMValueRef full =
        LLVMBuildICmp(b, LLVMIntSLE, LLVMBuildAdd(b, j, cg_i64(cx, bn), ""), sk, "");
    LLVMBasicBlockRef c = cg_if_begin(cx, full);
    ks_tile_async(cx, tk, tid, nthreads, false, l2);
    ks_tile_async(cx, tv, tid, nthreads, false, l2);
    cg_if_end(cx, c);
    c = cg_if_begin(cx, LLVMBuildNot(b, full, ""));
    ks_tile_async(cx, tk, tid, nthreads, true, l2);
    ks_tile_async(cx, tv, tid, nthreads, true, l2);
    cg_if_end(cx, c);
}

/* Packed tile row `prow` (i64, [attention.gqa_pack]) -> its query row; sets the block's batch
 * index of the group axis to the row's group (rows past the group's, clamped to the last). */
static LLVMValueRef gq_row(attn_gen *a, LLVMValueRef prow) {
    cg_ctx *cx = a->cx;
    LLVMValueRef gt = cg_i64(cx, a->gT);
    a->bidx[a->d.nb - 1] = imin(cx, LLVMBuildUDiv(cx->b, prow, gt, ""), cg_i64(cx, a->gpack - 1));
    return LLVMBuildURem(cx->b, prow, gt, "");
}

/* The output fragment element (t, q) of a thread whose rows start at row0 and columns at c0: its
 * row and column, and whether it lies inside the output (row < rlim, col < dv). */
static LLVMValueRef ks_frag(cg_ctx *cx, LLVMValueRef row0, LLVMValueRef c0, int t, int q,
                            LLVMValueRef rlim, LLVMValueRef dv, LLVMValueRef *row,
                            LLVMValueRef *col) {
    LLVMBuilderRef b = cx->b;
    *row = LLVMBuildAdd(b, row0, cg_i64(cx, (q >> 1) * 8), "");
    *col = LLVMBuildAdd(b, c0, cg_i64(cx, t * 8 + (q & 1)), "");
    return LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, *row, rlim, ""),
                        LLVMBuildICmp(b, LLVMIntSLT, *col, dv, ""), "");
}

/* [attention.ks_tma]: the K and V tiles of bn keys from key j (i64) into the ring stage at i32
 * shared address dst (K's d/64 boxes of bn x 128 bytes, then V's), both completing on the
 * stage's barrier bar with their bytes (keys past the cache arrive as zeros and count); issued
 * by the calling thread alone. bc: the K and V views' batch coordinates. */
static void ks_tma_tiles(attn_gen *a, LLVMValueRef j, LLVMValueRef dst, LLVMValueRef bar,
                         LLVMValueRef bc[2][CG_TMAP_MAXR], int64_t bn, int64_t d) {
    cg_ctx *cx = a->cx;
    LLVMValueRef j32 = LLVMBuildTrunc(cx->b, j, cx->i32, "");
    awg_expect(cx, bar, 2 * bn * d * 2);
    attn_tma_copy(cx, &a->kvw[0], a->ktm[0], d, bn, j32, bc[0], dst, bar);
    attn_tma_copy(cx, &a->kvw[1], a->ktm[1], d, bn, j32, bc[1],
                  LLVMBuildAdd(cx->b, dst, cg_i32(cx, bn * d * 2), ""), bar);
}

int64_t cg_attn_ks_swz(int64_t bn, int64_t r, int64_t col) {
    return (col >> 6) * bn * 64 + r * 64 + ((((col >> 3) & 7) ^ (r & 7)) << 3);
}

/* cg_attn_ks_swz of row r and column col (i32 values) as IR. */
static LLVMValueRef ks_swz_idx(cg_ctx *cx, int64_t bn, LLVMValueRef r, LLVMValueRef col) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef box =
        LLVMBuildMul(b, LLVMBuildLShr(b, col, cg_i32(cx, 6), ""), cg_i32(cx, (int)(bn * 64)), "");
    LLVMValueRef c = LLVMBuildAnd(b, LLVMBuildLShr(b, col, cg_i32(cx, 3), ""), cg_i32(cx, 7), "");
    LLVMValueRef x = LLVMBuildXor(b, c, LLVMBuildAnd(b, r, cg_i32(cx, 7), ""), "");
    return LLVMBuildAdd(b, LLVMBuildAdd(b, box, LLVMBuildMul(b, r, cg_i32(cx, 64), ""), ""),
                        LLVMBuildShl(b, x, cg_i32(cx, 3), ""), "");
}

/* Key split (ks, for a few query rows: decode): every warp takes the same 16 query rows and
 * its own 16 keys of each BN-key tile, with its own running max, sum and O; after the last
 * tile the warps' partials are combined through shared memory (sqk) and warp 0 stores. */
static bool attn_tc_block(attn_gen *a, LLVMValueRef q0, cg_mm_launch *l, bool ks) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    LLVMBuilderRef b = cx->b;
    int64_t DP = (d->dmax + 15) / 16 * 16, DVP = (d->dvmax + 15) / 16 * 16, BM = l->bm, BN = l->bn;
    int64_t PK = DP + 8, PV = BN + 8;
    int KD = (int)(DP / 16), NT = (int)(BN / 8), DT = (int)(DVP / 8);
    int64_t rows = BM > BN ? BM : BN;
    /* V in shared memory: [j][dv] (ldmatrix.trans) when dv is contiguous in
     * HBM, else [dv][j] (ldmatrix) */
    bool vjd = d->v.unit_c && !d->v.load;
    if (vjd) PV = DVP + 8;
    int64_t vbytes = (vjd ? BN : DVP) * PV * 2;
    /* K/V tiles: a ring of `nst` cp.async stages in dynamic shared memory when the tiles qualify
     * and fit (key split: KS_STAGES, TX_ATTN_KS_STAGES=2..4 for benchmarks; else 2), else
     * synchronous copies into the static buffers (K into the Q buffer, V into sv) */
    cg_mm_tile tk = {&d->k, d->nb, a->bidx, cg_i64(cx, 0), NULL, d->D, d->Sk, DP,
                     BN,    1,     PK,      d->cdt,        NULL};
    cg_mm_tile tv = {&d->v, d->nb, a->bidx,      NULL,         cg_i64(cx, 0), d->Sk, d->Dv,
                     BN,    DVP,   vjd ? PV : 1, vjd ? 1 : PV, d->cdt,        NULL};
    int64_t kbytes = BN * PK * 2, stage = kbytes + vbytes;
    int nst = ks ? attn_ks_stages() : 2;
    /* [attention.ks_tma]: unpadded swizzled tiles (DP = DVP = D, a multiple of 64), the stages
     * 1024-aligned after 1024 bytes of slack, then a barrier per stage */
    bool tma = ks && a->ktma && DP == DVP && DP % 64 == 0 && vjd;
    if (a->ktma && !tma) {
        a->failed = true;
        return false;
    }
    if (tma) kbytes = BN * DP * 2, stage = 2 * kbytes;
    int64_t ring_extra = tma ? 1024 + 8 * (int64_t)nst : 0;
    /* with the ring, the static buffer holds the Q tile, then the key split's combine */
    int64_t qbytes = BM * PK * 2, cbytes = ks ? ks_bytes(DT) : 0;
    if (nst * stage < cbytes && qbytes < cbytes) qbytes = cbytes;
    while (nst > 2 && qbytes + nst * stage + ring_extra > cg_mm_smem_limit(cx->target)) nst--;
    if (tma) ring_extra = 1024 + 8 * (int64_t)nst;
    bool async = (tma || (cg_mm_tile_async_ok(cx, &tk) && cg_mm_tile_async_ok(cx, &tv))) &&
                 qbytes + nst * stage + ring_extra <= cg_mm_smem_limit(cx->target);
    /* the key split's combine: in the ring after the last tile (async), else in the static
     * buffer */
    int64_t sqbytes = async ? qbytes : rows * PK * 2;
    if (!async && sqbytes < cbytes) sqbytes = cbytes;
    LLVMValueRef sqk = cg_shared_bytes(cx, sqbytes),
                 sv = async ? NULL : cg_shared_bytes(cx, vbytes);
    l->smem_bytes = sqbytes + (async ? 0 : vbytes);
    tk.smem = sqk, tv.smem = sv;
    int l2 = ks && !tma ? attn_ks_l2() : 0;
    if (ks && async) { /* the template names the ring's depth (and a prefetch size) */
        size_t n = strlen(cx->k->tmpl);
        snprintf(cx->k->tmpl + n, sizeof cx->k->tmpl - n, " s%d", nst);
        n = strlen(cx->k->tmpl);
        if (l2) snprintf(cx->k->tmpl + n, sizeof cx->k->tmpl - n, " l2p%d", l2);
        if (tma) snprintf(cx->k->tmpl + n, sizeof cx->k->tmpl - n, " tma");
        int nb = attn_ks_blocks(cx);
        n = strlen(cx->k->tmpl);
        if (nb) snprintf(cx->k->tmpl + n, sizeof cx->k->tmpl - n, " b%d", nb);
    }
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMValueRef warp = LLVMBuildUDiv(b, tid, cg_i32(cx, 32), "");
    LLVMValueRef lane = LLVMBuildURem(b, tid, cg_i32(cx, 32), "");
    LLVMValueRef gq = LLVMBuildLShr(b, lane, cg_i32(cx, 2), "");
    LLVMValueRef t2 = LLVMBuildMul(b, LLVMBuildAnd(b, lane, cg_i32(cx, 3), ""), cg_i32(cx, 2), "");
    LLVMValueRef w16 = ks ? cg_i32(cx, 0) : LLVMBuildMul(b, warp, cg_i32(cx, 16), "");
    LLVMValueRef wrow = LLVMBuildAdd(b, w16, gq, "");
    /* this warp's keys within a tile: all of them, or BN / 4 at BN / 4 warp in key-split mode */
    LLVMValueRef koff = ks ? LLVMBuildMul(b, warp, cg_i32(cx, (int)(BN / 4)), "") : cg_i32(cx, 0);
    LLVMValueRef koff64 = LLVMBuildZExt(b, koff, cx->i64, "");
    int NTw = ks ? (int)(BN / 32) : NT, KPw = ks ? (int)(BN / 64) : (int)(BN / 16);
    LLVMValueRef l15 = LLVMBuildAnd(b, lane, cg_i32(cx, 15), "");
    LLVMValueRef l7 = LLVMBuildAnd(b, lane, cg_i32(cx, 7), "");
    LLVMValueRef hi8 =
        LLVMBuildMul(b, LLVMBuildLShr(b, lane, cg_i32(cx, 4), ""), cg_i32(cx, 8), "");
    LLVMValueRef b3 = LLVMBuildMul(
        b, LLVMBuildAnd(b, LLVMBuildLShr(b, lane, cg_i32(cx, 3), ""), cg_i32(cx, 1), ""),
        cg_i32(cx, 8), "");
    /* Q tile -> shared -> fragments in registers */
    cg_mm_tile tq = {&d->q, d->nb, a->bidx, q0, cg_i64(cx, 0), d->Sq, d->D,
                     BM,    DP,    PK,      1,  d->cdt,        sqk};
    /* the rows of the tile (packed: gpack x gT) */
    LLVMValueRef rlim = a->gpack > 1 ? cg_i64(cx, a->gpack * a->gT) : d->Sq;
    if (a->gpack > 1) { /* the group's heads: gT rows each, at packed row g gT */
        tq.rows = a->gT;
        for (int g = 0; g < a->gpack; g++) {
            a->bidx[d->nb - 1] = cg_i64(cx, g);
            tq.smem = LLVMBuildGEP2(b, cx->i8, sqk,
                                    (LLVMValueRef[]){cg_i64(cx, g * a->gT * PK * 2)}, 1, "");
            cg_mm_tile_load(cx, &tq, tid, l->threads);
        }
        a->bidx[d->nb - 1] = cg_i64(cx, 0); /* K and V: broadcast over the group axis */
    } else {
        cg_mm_tile_load(cx, &tq, tid, l->threads);
    }
    cg_barrier(cx);
    LLVMValueRef qf[16][4];
    for (int kk = 0; kk < KD; kk++) {
        LLVMValueRef idx =
            LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAdd(b, w16, l15, ""), cg_i32(cx, PK), ""),
                         LLVMBuildAdd(b, hi8, cg_i32(cx, kk * 16), ""), "");
        cg_ldmatrix_x4(cx, sqk, idx, false, qf[kk]);
    }
    cg_barrier(cx);
    LLVMValueRef mv[2], lv[2], ov[32][4];
    for (int h = 0; h < 2; h++)
        mv[h] = cg_var(cx, cg_f32c(cx, -INFINITY)), lv[h] = cg_var(cx, cg_f32c(cx, 0));
    for (int t = 0; t < DT; t++)
        for (int q = 0; q < 4; q++) ov[t][q] = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef t264 = LLVMBuildZExt(b, t2, cx->i64, "");
    /* block sparsity: only the key tiles with a live score for these rows */
    LLVMValueRef kb = cg_i64(cx, 0), ke = d->Sk;
    LLVMValueRef rlast = imin(cx, LLVMBuildAdd(b, q0, cg_i64(cx, BM - 1), ""),
                              LLVMBuildSub(b, d->Sq, cg_i64(cx, 1), ""));
    if (a->gpack > 1) { /* packed: the union of the group's heads' key ranges */
        LLVMValueRef ub = NULL, ue = NULL;
        for (int g = 0; g < a->gpack; g++) {
            LLVMValueRef gb = cg_i64(cx, 0), ge = d->Sk;
            a->bidx[d->nb - 1] = cg_i64(cx, g);
            attn_key_range(a, q0, rlast, BN, &gb, &ge);
            ub = ub ? imin(cx, ub, gb) : gb;
            ue = ue ? imax(cx, ue, ge) : ge;
        }
        a->bidx[d->nb - 1] = cg_i64(cx, 0);
        kb = ub, ke = ue;
    } else {
        attn_key_range(a, q0, rlast, BN, &kb, &ke);
    }
    chunk_clip(a, &kb, &ke);
    LLVMValueRef dyn = NULL, sring = NULL, sbar = NULL, par = NULL, bc[2][CG_TMAP_MAXR];
    LLVMValueRef t0 = LLVMBuildICmp(b, LLVMIntEQ, tid, cg_i32(cx, 0), "");
    if (async) {
        dyn = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
        l->dyn_smem = nst * stage + ring_extra;
        l->smem_bytes += nst * stage + ring_extra;
    }
    if (tma) { /* the ring at a 1024-aligned shared address sring, barriers at sbar */
        LLVMValueRef a0 = LLVMBuildPtrToInt(b, dyn, cx->i32, "");
        sring =
            LLVMBuildAnd(b, LLVMBuildAdd(b, a0, cg_i32(cx, 1023), ""), cg_i32(cx, ~1023), "sring");
        LLVMValueRef pad = LLVMBuildZExt(b, LLVMBuildSub(b, sring, a0, ""), cx->i64, "");
        dyn = LLVMBuildGEP2(b, cx->i8, dyn, &pad, 1, "ring");
        sbar = LLVMBuildAdd(b, sring, cg_i32(cx, (int)(nst * stage)), "sbar");
        par = cg_var(cx, cg_i32(cx, 0));
        attn_view_batch(a, &a->kvw[0], bc[0]);
        attn_view_batch(a, &a->kvw[1], bc[1]);
        LLVMBasicBlockRef c0 = cg_if_begin(cx, t0);
        for (int i = 0; i < nst; i++) {
            LLVMValueRef ia[2] = {
                LLVMBuildIntToPtr(b, LLVMBuildAdd(b, sbar, cg_i32(cx, 8 * i), ""), cx->sptr, ""),
                cg_i32(cx, 1)};
            cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.init.shared", false, ia, 2);
        }
        cg_wg_asm(cx, NULL, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
        for (int i = 0; i + 1 < nst; i++) { /* the first nst - 1 tiles (none past ke) */
            LLVMValueRef ji = LLVMBuildAdd(b, kb, cg_i64(cx, i * BN), "");
            LLVMBasicBlockRef c1 = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, ji, ke, ""));
            ks_tma_tiles(a, ji, LLVMBuildAdd(b, sring, cg_i32(cx, (int)(i * stage)), ""),
                         LLVMBuildAdd(b, sbar, cg_i32(cx, 8 * i), ""), bc, BN, DP);
            cg_if_end(cx, c1);
        }
        cg_if_end(cx, c0);
        cg_barrier(cx);
    } else if (async) { /* the first nst - 1 tiles, one commit group each (empty past ke) */
        for (int i = 0; i + 1 < nst; i++) {
            LLVMValueRef ji = LLVMBuildAdd(b, kb, cg_i64(cx, i * BN), "");
            tk.c0 = ji, tv.r0 = ji;
            tk.smem = LLVMBuildGEP2(b, cx->i8, dyn, (LLVMValueRef[]){cg_i64(cx, i * stage)}, 1, "");
            tv.smem = LLVMBuildGEP2(b, cx->i8, dyn,
                                    (LLVMValueRef[]){cg_i64(cx, i * stage + kbytes)}, 1, "");
            LLVMBasicBlockRef c0 = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, ji, ke, ""));
            if (ks) {
                ks_copy_kv(cx, &tk, &tv, ji, BN, d->Sk, tid, l->threads, l2);
            } else {
                cg_mm_tile_async(cx, &tk, tid, l->threads);
                cg_mm_tile_async(cx, &tv, tid, l->threads);
            }
            cg_if_end(cx, c0);
            cg_cp_async_commit(cx);
        }
    }
    /* the ring's slot of the current tile */
    LLVMValueRef slot = cg_var(cx, cg_i64(cx, 0));
    cg_loop jl;
    LLVMValueRef j0 = cg_loop_begin(cx, &jl, kb, ke, cg_i64(cx, BN), "kv");
    LLVMValueRef skb = sqk, svb = sv;
    if (tma) { /* every warp is done with tile jt - 1, whose stage takes tile jt + nst - 1
                * (thread 0's copies); then tile jt's barrier completes phase (jt / nst) mod 2 */
        LLVMValueRef cur = LLVMBuildLoad2(b, cx->i64, slot, "slot");
        LLVMValueRef last = LLVMBuildICmp(b, LLVMIntEQ, cur, cg_i64(cx, nst - 1), "");
        cg_barrier(cx);
        LLVMValueRef prev =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, cur, cg_i64(cx, 0), ""),
                            cg_i64(cx, nst - 1), LLVMBuildSub(b, cur, cg_i64(cx, 1), ""), "");
        LLVMValueRef prev32 = LLVMBuildTrunc(b, prev, cx->i32, ""),
                     cur32 = LLVMBuildTrunc(b, cur, cx->i32, "");
        LLVMValueRef nj = LLVMBuildAdd(b, j0, cg_i64(cx, (nst - 1) * BN), "");
        LLVMBasicBlockRef cn =
            cg_if_begin(cx, LLVMBuildAnd(b, t0, LLVMBuildICmp(b, LLVMIntSLT, nj, ke, ""), ""));
        ks_tma_tiles(
            a, nj, LLVMBuildAdd(b, sring, LLVMBuildMul(b, prev32, cg_i32(cx, (int)stage), ""), ""),
            LLVMBuildAdd(b, sbar, LLVMBuildMul(b, prev32, cg_i32(cx, 8), ""), ""), bc, BN, DP);
        cg_if_end(cx, cn);
        LLVMValueRef ph = LLVMBuildLoad2(b, cx->i32, par, "par");
        cg_wg_wait(cx, LLVMBuildAdd(b, sbar, LLVMBuildMul(b, cur32, cg_i32(cx, 8), ""), ""), ph);
        LLVMBuildStore(b, LLVMBuildXor(b, ph, LLVMBuildZExt(b, last, cx->i32, ""), ""), par);
        LLVMBuildStore(
            b, LLVMBuildSelect(b, last, cg_i64(cx, 0), LLVMBuildAdd(b, cur, cg_i64(cx, 1), ""), ""),
            slot);
        LLVMValueRef cs = LLVMBuildMul(b, cur, cg_i64(cx, stage), "");
        skb = LLVMBuildGEP2(b, cx->i8, dyn, &cs, 1, "");
        LLVMValueRef csv = LLVMBuildAdd(b, cs, cg_i64(cx, kbytes), "");
        svb = LLVMBuildGEP2(b, cx->i8, dyn, &csv, 1, "");
    } else if (async) { /* tile jt landed (nst - 2 younger groups may be pending); every warp is
                         * done with tile jt - 1, whose stage takes tile jt + nst - 1 */
        /* the ring's slot of tile jt, a variable stepped with a wrap (not jt mod nst, which
         * loop strength reduction turns into one induction variable per shared address) */
        LLVMValueRef cur = LLVMBuildLoad2(b, cx->i64, slot, "slot");
        LLVMValueRef last = LLVMBuildICmp(b, LLVMIntEQ, cur, cg_i64(cx, nst - 1), "");
        cg_cp_async_wait(cx, nst - 2);
        cg_barrier(cx);
        LLVMValueRef nxt =
            LLVMBuildSelect(b, last, cg_i64(cx, 0), LLVMBuildAdd(b, cur, cg_i64(cx, 1), ""), "");
        LLVMBuildStore(b, nxt, slot);
        LLVMValueRef nj = LLVMBuildAdd(b, j0, cg_i64(cx, (nst - 1) * BN), "");
        /* tile jt + nst - 1 takes slot jt - 1 mod nst */
        LLVMValueRef prev =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, cur, cg_i64(cx, 0), ""),
                            cg_i64(cx, nst - 1), LLVMBuildSub(b, cur, cg_i64(cx, 1), ""), "");
        LLVMValueRef ns = LLVMBuildMul(b, prev, cg_i64(cx, stage), "");
        LLVMValueRef cs = LLVMBuildMul(b, cur, cg_i64(cx, stage), "");
        LLVMTypeRef i8t = cx->i8;
        LLVMBasicBlockRef cn = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, nj, ke, ""));
        tk.c0 = nj, tv.r0 = nj;
        tk.smem = LLVMBuildGEP2(b, i8t, dyn, &ns, 1, "");
        LLVMValueRef nsv = LLVMBuildAdd(b, ns, cg_i64(cx, kbytes), "");
        tv.smem = LLVMBuildGEP2(b, i8t, dyn, &nsv, 1, "");
        if (ks) {
            ks_copy_kv(cx, &tk, &tv, nj, BN, d->Sk, tid, l->threads, l2);
        } else {
            cg_mm_tile_async(cx, &tk, tid, l->threads);
            cg_mm_tile_async(cx, &tv, tid, l->threads);
        }
        cg_if_end(cx, cn);
        cg_cp_async_commit(cx);
        skb = LLVMBuildGEP2(b, i8t, dyn, &cs, 1, "");
        LLVMValueRef csv = LLVMBuildAdd(b, cs, cg_i64(cx, kbytes), "");
        svb = LLVMBuildGEP2(b, i8t, dyn, &csv, 1, "");
    } else {
        tk.c0 = j0, tv.r0 = j0;
        cg_mm_tile_load(cx, &tk, tid, l->threads);
        cg_mm_tile_load(cx, &tv, tid, l->threads);
        cg_barrier(cx);
    }
    /* scores S = Q K^T for this warp's 16 rows x BN keys */
    LLVMValueRef s[16][4];
    for (int n = 0; n < NT; n++)
        for (int q = 0; q < 4; q++) s[n][q] = cg_f32c(cx, 0);
    for (int kk = 0; kk < KD; kk++)
        for (int n = 0; n < NTw;
             n += 2) { /* Ks[j][d]: rows j = koff + 8n + 8 (l >> 4) + (l & 7), d = 16kk + 8 bit3 */
            LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildAdd(b, hi8, l7, ""),
                                          LLVMBuildAdd(b, koff, cg_i32(cx, n * 8), ""), "");
            LLVMValueRef idx =
                tma ? ks_swz_idx(cx, BN, r, LLVMBuildAdd(b, b3, cg_i32(cx, kk * 16), ""))
                    : LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, PK), ""),
                                   LLVMBuildAdd(b, b3, cg_i32(cx, kk * 16), ""), "");
            LLVMValueRef kf[4];
            cg_ldmatrix_x4(cx, skb, idx, false, kf);
            cg_mma_m16n8k16(cx, d->cdt, qf[kk], kf, s[n], s[n]);
            cg_mma_m16n8k16(cx, d->cdt, qf[kk], kf + 2, s[n + 1], s[n + 1]);
        }
    /* score graph, mask, row max over the quad */
    LLVMValueRef mx[2] = {cg_f32c(cx, -INFINITY), cg_f32c(cx, -INFINITY)};
    LLVMValueRef srow0 = LLVMBuildAdd(b, q0, LLVMBuildZExt(b, wrow, cx->i64, ""), "");
    for (int n = 0; n < NTw; n++)
        for (int q = 0; q < 4; q++) {
            LLVMValueRef col =
                LLVMBuildAdd(b, LLVMBuildAdd(b, LLVMBuildAdd(b, j0, t264, ""), koff64, ""),
                             cg_i64(cx, n * 8 + (q & 1)), "");
            LLVMValueRef srow = LLVMBuildAdd(b, srow0, cg_i64(cx, (q >> 1) * 8), "");
            LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, col, d->Sk, "");
            if (a->gpack > 1) srow = gq_row(a, srow); /* the row's own head and query row */
            s[n][q] =
                LLVMBuildSelect(b, in, score(a, s[n][q], srow, col), cg_f32c(cx, -INFINITY), "");
            if (a->gpack > 1) a->bidx[d->nb - 1] = cg_i64(cx, 0);
            mx[q >> 1] = fmaxnum(cx, mx[q >> 1], s[n][q]);
        }
    LLVMValueRef alpha[2], msafe[2], psum[2];
    for (int h = 0; h < 2; h++) {
        mx[h] = fmaxnum(cx, mx[h], cg_shfl_xor(cx, mx[h], 1));
        mx[h] = fmaxnum(cx, mx[h], cg_shfl_xor(cx, mx[h], 2));
        online_max(cx, mv[h], mx[h], &alpha[h], &msafe[h], true);
        psum[h] = cg_f32c(cx, 0);
    }
    for (int n = 0; n < NTw; n++)
        for (int q = 0; q < 4; q++) {
            s[n][q] = cg_exp_fast(cx, LLVMBuildFSub(b, s[n][q], msafe[q >> 1], ""));
            psum[q >> 1] = fadd(cx, psum[q >> 1], s[n][q]);
        }
    for (int h = 0; h < 2; h++) st(cx, fadd(cx, fmul(cx, ld(cx, lv[h]), alpha[h]), psum[h]), lv[h]);
    /* O = O * alpha + P V; P's A fragments are the score fragments */
    LLVMValueRef oc[32][4];
    for (int t = 0; t < DT; t++)
        for (int q = 0; q < 4; q++) oc[t][q] = fmul(cx, ld(cx, ov[t][q]), alpha[q >> 1]);
    for (int kk = 0; kk < KPw; kk++) {
        LLVMValueRef kj = LLVMBuildAdd(b, koff, cg_i32(cx, kk * 16), "");
        LLVMValueRef pf[4] = {cg_mm_pack2(cx, s[2 * kk][0], s[2 * kk][1], d->cdt),
                              cg_mm_pack2(cx, s[2 * kk][2], s[2 * kk][3], d->cdt),
                              cg_mm_pack2(cx, s[2 * kk + 1][0], s[2 * kk + 1][1], d->cdt),
                              cg_mm_pack2(cx, s[2 * kk + 1][2], s[2 * kk + 1][3], d->cdt)};
        for (int t = 0; t + 1 < DT; t += 2) {
            LLVMValueRef idx;
            if (vjd) { /* Vs[j][dv]: rows j = 16kk + (l & 15), dv = 8t + 8 (l >> 4) */
                LLVMValueRef r = LLVMBuildAdd(b, l15, kj, "");
                idx = tma ? ks_swz_idx(cx, BN, r, LLVMBuildAdd(b, hi8, cg_i32(cx, t * 8), ""))
                          : LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, PV), ""),
                                         LLVMBuildAdd(b, hi8, cg_i32(cx, t * 8), ""), "");
            } else { /* Vs[dv][j]: rows dv = 8t + 8 (l >> 4) + (l & 7), j = 16kk + 8 bit3 */
                LLVMValueRef r =
                    LLVMBuildAdd(b, LLVMBuildAdd(b, hi8, l7, ""), cg_i32(cx, t * 8), "");
                idx = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, PV), ""),
                                   LLVMBuildAdd(b, b3, kj, ""), "");
            }
            LLVMValueRef vf[4];
            cg_ldmatrix_x4(cx, svb, idx, vjd, vf);
            cg_mma_m16n8k16(cx, d->cdt, pf, vf, oc[t], oc[t]);
            cg_mma_m16n8k16(cx, d->cdt, pf, vf + 2, oc[t + 1], oc[t + 1]);
        }
    }
    for (int t = 0; t < DT; t++)
        for (int q = 0; q < 4; q++) st(cx, oc[t][q], ov[t][q]);
    if (!async) cg_barrier(cx);
    cg_loop_end(cx, &jl);
    if (async) cg_barrier(cx);
    /* normalise (key split: combine the warps' partials first) and store */
    LLVMValueRef inv[2], lt[2];
    for (int h = 0; h < 2; h++) {
        lt[h] = ld(cx, lv[h]);
        lt[h] = fadd(cx, lt[h], cg_shfl_xor(cx, lt[h], 1));
        lt[h] = fadd(cx, lt[h], cg_shfl_xor(cx, lt[h], 2));
    }
    if (ks) ks_combine(cx, async && nst * stage >= cbytes ? dyn : sqk, warp, lane, DT, mv, lt, ov);
    LLVMValueRef row0 = LLVMBuildAdd(b, q0, LLVMBuildZExt(b, wrow, cx->i64, ""), "");
    if (a->splits > 1) { /* split-KV: the partials (warp 0's after the key split's combine) */
        LLVMValueRef w0 = ks ? LLVMBuildICmp(b, LLVMIntEQ, warp, cg_i32(cx, 0), "")
                             : LLVMConstInt(LLVMInt1TypeInContext(cx->llctx), 1, 0);
        for (int t = 0; t < DT; t++)
            for (int q = 0; q < 4; q++) {
                LLVMValueRef row, col;
                LLVMValueRef in = ks_frag(cx, row0, t264, t, q, rlim, d->Dv, &row, &col);
                LLVMBasicBlockRef cont = cg_if_begin(cx, LLVMBuildAnd(b, in, w0, ""));
                st(cx, ld(cx, ov[t][q]), part_at(a, row, col));
                cg_if_end(cx, cont);
            }
        LLVMValueRef lead =
            LLVMBuildAnd(b, w0, LLVMBuildICmp(b, LLVMIntEQ, t2, cg_i32(cx, 0), ""), "");
        for (int h = 0; h < 2; h++) {
            LLVMValueRef row = LLVMBuildAdd(b, row0, cg_i64(cx, h * 8), "");
            LLVMValueRef in =
                LLVMBuildAnd(b, lead, LLVMBuildICmp(b, LLVMIntSLT, row, rlim, ""), "");
            LLVMBasicBlockRef cont = cg_if_begin(cx, in);
            part_store_ml(a, row, ld(cx, mv[h]), lt[h]);
            cg_if_end(cx, cont);
        }
        return true;
    }
    for (int h = 0; h < 2; h++) inv[h] = inv_sum(cx, lt[h], d->Sk);
    for (int t = 0; t < DT; t++)
        for (int q = 0; q < 4; q++) {
            LLVMValueRef row, col;
            LLVMValueRef in = ks_frag(cx, row0, t264, t, q, rlim, d->Dv, &row, &col);
            if (ks)
                in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntEQ, warp, cg_i32(cx, 0), ""), "");
            LLVMBasicBlockRef cont = cg_if_begin(cx, in);
            LLVMValueRef o = fmul(cx, ld(cx, ov[t][q]), inv[q >> 1]);
            if (a->gpack > 1) row = gq_row(a, row); /* the row's own head and query row */
            if (!d->epi(d->user, cx, &o, a->bidx, row, col)) return false;
            cg_if_end(cx, cont);
        }
    if (a->gpack > 1) a->bidx[d->nb - 1] = cg_i64(cx, 0);
    return true;
}

/* [attention.lse]: stores the row logsumexp of query row `row` (batch a->bidx) from the final
 * softmax state: the running max m kept (in units of the scores over `scale`: the kernel's exps
 * are exp(scale (F' - m))) and the sum l against it, so lse = scale m + ln l whatever max was
 * kept; NaN for a row whose every score is -inf (as the written log(sum(exp(s - max))) + max
 * gives). Nothing without an lse output. */
static void lse_store(attn_gen *a, LLVMValueRef row, LLVMValueRef m, LLVMValueRef l, double scale) {
    if (a->lse == IR_NONE) return;
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    const ir_node *n = &cx->g->nodes[a->lse];
    LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, m, cg_f32c(cx, -INFINITY), "");
    LLVMValueRef v = fadd(cx, fmul(cx, m, cg_f32c(cx, scale)), cg_math(cx, IR_OP_LOG, l, NULL));
    v = LLVMBuildSelect(b, ninf, cg_f32c(cx, NAN), v, "lse");
    LLVMValueRef dims[IR_MAX_RANK];
    unsigned nb = n->shape.rank - 2;
    for (unsigned i = 0; i < nb; i++) dims[i] = a->bidx[i];
    dims[nb] = row, dims[nb + 1] = cg_i64(cx, 0);
    cg_index idx = cg_index_from_dims(cx, &n->shape, dims);
    cg_store(cx, cg_buf_ptr(cx, a->lse), (ir_dtype)n->dtype, cg_home_lin(cx, a->lse, &idx),
             cg_round_f32(cx, v, (ir_dtype)n->dtype));
}

/* ---- GPU SIMT body: f32 operands on the CUDA cores ([attention.simt]) -------- */
/* The block of pass_attn_sg (passes/passes.h): per key tile of bn keys, K and V into shared
 * memory (f32, zero outside the operands), S = Q K^T as tm x tn register tiles from 128-bit
 * shared loads (exact f32 fmas in head-dim order), F and the online softmax per score (row maxima
 * over the 16 lanes of a row by shuffles; each thread keeps a partial row sum), P (rounded to its
 * dtype) through shared memory, O += P V as tm x nc register tiles. Three barriers per tile. */

/* The <w x float> at float index idx (i32) of shared base p (16-byte aligned when w = 4). */
static LLVMValueRef sg_ldv(cg_ctx *cx, LLVMValueRef p, LLVMValueRef idx, int w) {
    LLVMTypeRef t = w == 1 ? cx->f32 : LLVMVectorType(cx->f32, (unsigned)w);
    LLVMValueRef v = LLVMBuildLoad2(cx->b, t, LLVMBuildGEP2(cx->b, cx->f32, p, &idx, 1, ""), "");
    LLVMSetAlignment(v, (unsigned)(4 * w));
    return v;
}

/* Element e of a value sg_ldv loaded with width w. */
static LLVMValueRef sg_el(cg_ctx *cx, LLVMValueRef v, int w, int e) {
    return w == 1 ? v : LLVMBuildExtractElement(cx->b, v, cg_i32(cx, e), "");
}

static LLVMValueRef sg_fma(cg_ctx *cx, LLVMValueRef x, LLVMValueRef y, LLVMValueRef z) {
    LLVMValueRef fa[3] = {x, y, z};
    return cg_call_intrinsic(cx, "llvm.fma", true, fa, 3);
}

/* The sum (max) of v over the 16 lanes of a row (lane bits 0-3). */
static LLVMValueRef sg_row16(cg_ctx *cx, LLVMValueRef v, bool max) {
    for (unsigned m = 8; m >= 1; m /= 2) {
        LLVMValueRef o = cg_shfl_xor(cx, v, m);
        v = max ? fmaxnum(cx, v, o) : fadd(cx, v, o);
    }
    return v;
}

/* cg_mm_tile_load of tile t (f32 in shared memory) by the block's PASS_ATTN_SG_THREADS threads,
 * each at fixed offsets from one base: F = min(32, the fast extent rounded up to a power of two)
 * threads along the operand's contiguous axis (the rows when unit_r), the others along the slow
 * one, so with compile-time strides every element's address is the thread's base plus a constant
 * (no per-element registers kept across the key loop). Elements outside the operand: zero, their
 * loads skipped. */
static void sg_tile_load(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef tid) {
    LLVMBuilderRef b = cx->b;
    bool rf = t->o->unit_r && !t->o->unit_c;
    int64_t ef = rf ? t->rows : t->cols, es = rf ? t->cols : t->rows, nf = 1;
    while (nf < ef && nf < 32) nf *= 2;
    int64_t ns = PASS_ATTN_SG_THREADS / nf;
    LLVMValueRef tf = LLVMBuildURem(b, tid, cg_i32(cx, nf), "");
    LLVMValueRef ts = LLVMBuildUDiv(b, tid, cg_i32(cx, nf), "");
    LLVMValueRef tf64 = LLVMBuildZExt(b, tf, cx->i64, ""), ts64 = LLVMBuildZExt(b, ts, cx->i64, "");
    for (int64_t k = 0; k * nf < ef; k++)
        for (int64_t i = 0; i * ns < es; i++) {
            LLVMValueRef f = LLVMBuildAdd(b, tf64, cg_i64(cx, k * nf), "");
            LLVMValueRef sl = LLVMBuildAdd(b, ts64, cg_i64(cx, i * ns), "");
            LLVMValueRef r = rf ? f : sl, c = rf ? sl : f;
            LLVMValueRef in =
                LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, r, cg_i64(cx, t->rows), ""),
                             LLVMBuildICmp(b, LLVMIntSLT, c, cg_i64(cx, t->cols), ""), "");
            LLVMBasicBlockRef cont = NULL;
            if ((k + 1) * nf > ef || (i + 1) * ns > es) cont = cg_if_begin(cx, in);
            LLVMValueRef gr = LLVMBuildAdd(b, t->r0, r, ""), gc = LLVMBuildAdd(b, t->c0, c, "");
            LLVMValueRef inop = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, gr, t->rlim, ""),
                                             LLVMBuildICmp(b, LLVMIntSLT, gc, t->clim, ""), "");
            LLVMValueRef v = cg_var(cx, cg_f32c(cx, 0));
            LLVMBasicBlockRef lc = cg_if_begin(cx, inop);
            st(cx, cg_mm_opnd_load(cx, t->o, t->nb, t->bidx, gr, gc), v);
            cg_if_end(cx, lc);
            LLVMValueRef so = LLVMBuildAdd(
                b, LLVMBuildMul(b, LLVMBuildTrunc(b, r, cx->i32, ""), cg_i32(cx, t->ps_r), ""),
                LLVMBuildMul(b, LLVMBuildTrunc(b, c, cx->i32, ""), cg_i32(cx, t->ps_c), ""), "");
            st(cx, ld(cx, v), LLVMBuildGEP2(b, cx->f32, t->smem, &so, 1, ""));
            if (cont) cg_if_end(cx, cont);
        }
}

/* acc[i][j] (vars) = sum over d of Q[ty tm + i][d] K[tx + 16 j][d]: a loop over the head dim in
 * 4-wide steps (the padding columns are zeros). */
static void sg_qk(cg_ctx *cx, const pass_attn_sg *s, LLVMValueRef sq, LLVMValueRef sk,
                  LLVMValueRef ty, LLVMValueRef tx, LLVMValueRef acc[4][4]) {
    LLVMBuilderRef b = cx->b;
    for (int i = 0; i < s->tm; i++)
        for (int j = 0; j < s->tn; j++) st(cx, cg_f32c(cx, 0), acc[i][j]);
    cg_loop dl;
    LLVMValueRef d4 =
        cg_loop_begin(cx, &dl, cg_i64(cx, 0), cg_i64(cx, s->dp / 4), cg_i64(cx, 1), "qk");
    LLVMValueRef dc = LLVMBuildMul(b, LLVMBuildTrunc(b, d4, cx->i32, ""), cg_i32(cx, 4), "");
    LLVMValueRef qv[4], kv[4];
    for (int i = 0; i < s->tm; i++) {
        LLVMValueRef r =
            LLVMBuildAdd(b, LLVMBuildMul(b, ty, cg_i32(cx, s->tm), ""), cg_i32(cx, i), "");
        qv[i] =
            sg_ldv(cx, sq, LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, s->pq), ""), dc, ""), 4);
    }
    for (int j = 0; j < s->tn; j++) {
        LLVMValueRef c = LLVMBuildAdd(b, tx, cg_i32(cx, 16 * j), "");
        kv[j] =
            sg_ldv(cx, sk, LLVMBuildAdd(b, LLVMBuildMul(b, c, cg_i32(cx, s->pq), ""), dc, ""), 4);
    }
    for (int i = 0; i < s->tm; i++)
        for (int j = 0; j < s->tn; j++) {
            LLVMValueRef x = ld(cx, acc[i][j]);
            for (int e = 0; e < 4; e++)
                x = sg_fma(cx, sg_el(cx, qv[i], 4, e), sg_el(cx, kv[j], 4, e), x);
            st(cx, x, acc[i][j]);
        }
    cg_loop_end(cx, &dl);
}

/* O (vars o[i][c], c = g vw + e) += P[ty tm + i][key] V[key][16 vw g + vw tx + e] over the tile's
 * keys, 4 at a time (P's 128-bit loads). */
static void sg_pv(cg_ctx *cx, const pass_attn_sg *s, LLVMValueRef sp, LLVMValueRef sv,
                  LLVMValueRef ty, LLVMValueRef tx, LLVMValueRef o[4][PASS_ATTN_SG_MAXC]) {
    LLVMBuilderRef b = cx->b;
    cg_loop cl;
    LLVMValueRef c4 =
        cg_loop_begin(cx, &cl, cg_i64(cx, 0), cg_i64(cx, s->bn / 4), cg_i64(cx, 1), "pv");
    LLVMValueRef cc = LLVMBuildMul(b, LLVMBuildTrunc(b, c4, cx->i32, ""), cg_i32(cx, 4), "");
    LLVMValueRef pv[4], acc[4][PASS_ATTN_SG_MAXC];
    for (int i = 0; i < s->tm; i++) {
        LLVMValueRef r =
            LLVMBuildAdd(b, LLVMBuildMul(b, ty, cg_i32(cx, s->tm), ""), cg_i32(cx, i), "");
        pv[i] =
            sg_ldv(cx, sp, LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, s->pp), ""), cc, ""), 4);
        for (int c = 0; c < s->nc; c++) acc[i][c] = ld(cx, o[i][c]);
    }
    LLVMValueRef vc = LLVMBuildMul(b, tx, cg_i32(cx, s->vw), "");
    for (int e = 0; e < 4; e++) {
        LLVMValueRef row =
            LLVMBuildMul(b, LLVMBuildAdd(b, cc, cg_i32(cx, e), ""), cg_i32(cx, s->dvp), "");
        for (int g = 0; g < s->nc / s->vw; g++) {
            LLVMValueRef at =
                LLVMBuildAdd(b, row, LLVMBuildAdd(b, vc, cg_i32(cx, 16 * s->vw * g), ""), "");
            LLVMValueRef vv = sg_ldv(cx, sv, at, s->vw);
            for (int i = 0; i < s->tm; i++)
                for (int w = 0; w < s->vw; w++)
                    acc[i][g * s->vw + w] = sg_fma(cx, sg_el(cx, pv[i], 4, e),
                                                   sg_el(cx, vv, s->vw, w), acc[i][g * s->vw + w]);
        }
    }
    for (int i = 0; i < s->tm; i++)
        for (int c = 0; c < s->nc; c++) st(cx, acc[i][c], o[i][c]);
    cg_loop_end(cx, &cl);
}

/* F, the key mask (keys at or past ke: -inf) and the online softmax of the tile at key j0 of the
 * thread's scores acc: updates m, l (this thread's partial sums) and rescales O, then stores P
 * rounded to its dtype at P[ty tm + i][tx + 16 j]. */
static void sg_softmax(attn_gen *a, const pass_attn_sg *s, LLVMValueRef acc[4][4], LLVMValueRef r0,
                       LLVMValueRef j0, LLVMValueRef ke, LLVMValueRef sp, LLVMValueRef ty,
                       LLVMValueRef tx, LLVMValueRef *m, LLVMValueRef *l,
                       LLVMValueRef o[4][PASS_ATTN_SG_MAXC]) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef sc[4][4], tx64 = LLVMBuildZExt(b, tx, cx->i64, "");
    for (int i = 0; i < s->tm; i++)
        for (int j = 0; j < s->tn; j++) {
            LLVMValueRef col =
                LLVMBuildAdd(b, j0, LLVMBuildAdd(b, tx64, cg_i64(cx, 16 * j), ""), "");
            LLVMValueRef v =
                score(a, ld(cx, acc[i][j]), LLVMBuildAdd(b, r0, cg_i64(cx, i), ""), col);
            LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, col, ke, "");
            sc[i][j] = LLVMBuildSelect(b, in, v, cg_f32c(cx, -INFINITY), "");
        }
    for (int i = 0; i < s->tm; i++) {
        LLVMValueRef mx = sc[i][0];
        for (int j = 1; j < s->tn; j++) mx = fmaxnum(cx, mx, sc[i][j]);
        LLVMValueRef alpha, msafe, sum = NULL;
        online_max(cx, m[i], sg_row16(cx, mx, true), &alpha, &msafe, false);
        LLVMValueRef r =
            LLVMBuildAdd(b, LLVMBuildMul(b, ty, cg_i32(cx, s->tm), ""), cg_i32(cx, i), "");
        LLVMValueRef rp = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, s->pp), ""), tx, "");
        for (int j = 0; j < s->tn; j++) {
            LLVMValueRef p = cg_math(cx, IR_OP_EXP, LLVMBuildFSub(b, sc[i][j], msafe, ""), NULL);
            sum = sum ? fadd(cx, sum, p) : p;
            LLVMValueRef at = LLVMBuildAdd(b, rp, cg_i32(cx, 16 * j), "");
            st(cx, cg_round_f32(cx, p, a->d.pdt), LLVMBuildGEP2(b, cx->f32, sp, &at, 1, ""));
        }
        st(cx, fadd(cx, fmul(cx, ld(cx, l[i]), alpha), sum), l[i]);
        for (int c = 0; c < s->nc; c++) st(cx, fmul(cx, ld(cx, o[i][c]), alpha), o[i][c]);
    }
}

/* Normalises and stores the thread's O (rows r0 + i below Sq, columns below Dv). */
static bool sg_store(attn_gen *a, const pass_attn_sg *s, LLVMValueRef r0, LLVMValueRef tx,
                     LLVMValueRef *l, LLVMValueRef o[4][PASS_ATTN_SG_MAXC]) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef vc = LLVMBuildZExt(b, LLVMBuildMul(b, tx, cg_i32(cx, s->vw), ""), cx->i64, "");
    for (int i = 0; i < s->tm; i++) {
        LLVMValueRef inv = inv_sum(cx, sg_row16(cx, ld(cx, l[i]), false), d->Sk);
        LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, i), "");
        LLVMBasicBlockRef rin = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, row, d->Sq, ""));
        for (int c = 0; c < s->nc; c++) {
            LLVMValueRef col =
                LLVMBuildAdd(b, vc, cg_i64(cx, 16 * s->vw * (c / s->vw) + c % s->vw), "");
            LLVMBasicBlockRef cin = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, col, d->Dv, ""));
            LLVMValueRef v = fmul(cx, ld(cx, o[i][c]), inv);
            if (!d->epi(d->user, cx, &v, a->bidx, row, col)) return false;
            cg_if_end(cx, cin);
        }
        cg_if_end(cx, rin);
    }
    return true;
}

/* The SIMT block of query rows from q0 (i64) for the batch element a->bidx; fills l's shared
 * memory (dynamic). */
static bool attn_sg_block(attn_gen *a, LLVMValueRef q0, cg_mm_launch *l, const pass_attn_sg *s) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef sm = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
    l->dyn_smem = l->smem_bytes = s->bytes;
    LLVMValueRef part[4];
    const int64_t offs[4] = {s->qoff, s->koff, s->voff, s->poff};
    for (int i = 0; i < 4; i++)
        part[i] = LLVMBuildGEP2(b, cx->i8, sm, (LLVMValueRef[]){cg_i64(cx, offs[i])}, 1, "");
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMValueRef tx = LLVMBuildAnd(b, tid, cg_i32(cx, 15), "tx");
    LLVMValueRef ty = LLVMBuildLShr(b, tid, cg_i32(cx, 4), "ty");
    LLVMValueRef r0 = LLVMBuildAdd(
        b, q0, LLVMBuildZExt(b, LLVMBuildMul(b, ty, cg_i32(cx, s->tm), ""), cx->i64, ""), "r0");
    cg_mm_tile tq = {&d->q, d->nb, a->bidx, q0, cg_i64(cx, 0), d->Sq,  d->D,
                     s->bm, s->dp, s->pq,   1,  IR_F32,        part[0]};
    sg_tile_load(cx, &tq, tid);
    LLVMValueRef m[4], lv[4], acc[4][4], o[4][PASS_ATTN_SG_MAXC];
    for (int i = 0; i < s->tm; i++) {
        m[i] = cg_var(cx, cg_f32c(cx, -INFINITY)), lv[i] = cg_var(cx, cg_f32c(cx, 0));
        for (int j = 0; j < s->tn; j++) acc[i][j] = cg_var(cx, cg_f32c(cx, 0));
        for (int c = 0; c < s->nc; c++) o[i][c] = cg_var(cx, cg_f32c(cx, 0));
    }
    LLVMValueRef kb = cg_i64(cx, 0), ke = d->Sk;
    LLVMValueRef rlast = imin(cx, LLVMBuildAdd(b, q0, cg_i64(cx, s->bm - 1), ""),
                              LLVMBuildSub(b, d->Sq, cg_i64(cx, 1), ""));
    attn_key_range(a, q0, rlast, s->bn, &kb, &ke);
    chunk_clip(a, &kb, &ke);
    cg_loop jl;
    LLVMValueRef j0 = cg_loop_begin(cx, &jl, kb, ke, cg_i64(cx, s->bn), "ktile");
    cg_barrier(cx); /* the previous tile's K, V and P are read */
    cg_mm_tile tk = {&d->k, d->nb, a->bidx, cg_i64(cx, 0), j0,     d->D,   d->Sk,
                     s->dp, s->bn, 1,       s->pq,         IR_F32, part[1]};
    cg_mm_tile tv = {&d->v, d->nb,  a->bidx, j0, cg_i64(cx, 0), d->Sk,  d->Dv,
                     s->bn, s->dvp, s->dvp,  1,  IR_F32,        part[2]};
    sg_tile_load(cx, &tk, tid);
    sg_tile_load(cx, &tv, tid);
    cg_barrier(cx);
    sg_qk(cx, s, part[0], part[1], ty, tx, acc);
    sg_softmax(a, s, acc, r0, j0, ke, part[3], ty, tx, m, lv, o);
    cg_barrier(cx);
    sg_pv(cx, s, part[3], part[2], ty, tx, o);
    cg_loop_end(cx, &jl);
    return sg_store(a, s, r0, tx, lv, o);
}

/* ---- GPU warp-per-row body and host body ------------------------------------ */

/* Sum over the warp (GPU) of a per-lane partial. */
static LLVMValueRef warp_sum(cg_ctx *cx, LLVMValueRef v) {
    for (int m = 16; m >= 1; m /= 2) v = fadd(cx, v, cg_shfl_xor(cx, v, m));
    return v;
}

/* One query row `row` (i64) processed by `lanes` lanes (32 on the GPU, 1 on
 * the host) with lane index `lane` (i64). O lives in `ov` (GPU: ceil(Dv/32)
 * variables, lane owns dv = lane + 32 t) or in the host array `orow`. */
static bool attn_row(attn_gen *a, LLVMValueRef row, LLVMValueRef lane, int lanes, LLVMValueRef *ov,
                     int nt, LLVMValueRef orow) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef f = cx->f32;
    LLVMValueRef mvar = cg_var(cx, cg_f32c(cx, -INFINITY)), lvar = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef acc = cg_var(cx, cg_f32c(cx, 0));
    cg_loop il, jl, dl;
    if (orow) {
        LLVMValueRef i = cg_loop_begin(cx, &il, cg_i64(cx, 0), d->Dv, cg_i64(cx, 1), "oz");
        st(cx, cg_f32c(cx, 0), LLVMBuildGEP2(b, f, orow, &i, 1, ""));
        cg_loop_end(cx, &il);
    } else {
        for (int t = 0; t < nt; t++) st(cx, cg_f32c(cx, 0), ov[t]);
    }
    LLVMValueRef kb = cg_i64(cx, 0), ke = d->Sk;
    attn_key_range(a, row, row, 64, &kb, &ke); /* block sparsity: only keys of live tiles */
    chunk_clip(a, &kb, &ke);
    LLVMValueRef j = cg_loop_begin(cx, &jl, kb, ke, cg_i64(cx, 1), "key");
    st(cx, cg_f32c(cx, 0), acc);
    LLVMValueRef dd = cg_loop_begin(cx, &dl, lane, d->D, cg_i64(cx, lanes), "dot");
    LLVMValueRef qv = cg_mm_opnd_load(cx, &d->q, d->nb, a->bidx, row, dd);
    LLVMValueRef kv = cg_mm_opnd_load(cx, &d->k, d->nb, a->bidx, dd, j);
    st(cx, fadd(cx, ld(cx, acc), fmul(cx, qv, kv)), acc);
    cg_loop_end(cx, &dl);
    LLVMValueRef s = ld(cx, acc);
    if (lanes > 1) s = warp_sum(cx, s);
    s = score(a, s, row, j);
    LLVMValueRef alpha, msafe;
    online_max(cx, mvar, s, &alpha, &msafe, false);
    LLVMValueRef p = cg_math(cx, IR_OP_EXP, LLVMBuildFSub(b, s, msafe, ""), NULL);
    st(cx, fadd(cx, fmul(cx, ld(cx, lvar), alpha), p), lvar);
    LLVMValueRef pr = cg_round_f32(cx, p, d->pdt);
    if (orow) {
        LLVMValueRef i = cg_loop_begin(cx, &il, cg_i64(cx, 0), d->Dv, cg_i64(cx, 1), "pv");
        LLVMValueRef op = LLVMBuildGEP2(b, f, orow, &i, 1, "");
        LLVMValueRef vv = cg_mm_opnd_load(cx, &d->v, d->nb, a->bidx, j, i);
        st(cx, fadd(cx, fmul(cx, ld(cx, op), alpha), fmul(cx, pr, vv)), op);
        cg_loop_end(cx, &il);
    } else {
        for (int t = 0; t < nt; t++) {
            LLVMValueRef dv = LLVMBuildAdd(b, lane, cg_i64(cx, 32 * t), "");
            LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, dv, d->Dv, "");
            LLVMValueRef dvc = LLVMBuildSelect(b, in, dv, cg_i64(cx, 0), "");
            LLVMValueRef vv = cg_mm_opnd_load(cx, &d->v, d->nb, a->bidx, j, dvc);
            st(cx, fadd(cx, fmul(cx, ld(cx, ov[t]), alpha), fmul(cx, pr, vv)), ov[t]);
        }
    }
    cg_loop_end(cx, &jl);
    if (a->splits > 1) { /* split-KV: the partials */
        if (orow) {
            LLVMValueRef i = cg_loop_begin(cx, &il, cg_i64(cx, 0), d->Dv, cg_i64(cx, 1), "part");
            st(cx, ld(cx, LLVMBuildGEP2(b, f, orow, &i, 1, "")), part_at(a, row, i));
            cg_loop_end(cx, &il);
        } else {
            for (int t = 0; t < nt; t++) {
                LLVMValueRef dv = LLVMBuildAdd(b, lane, cg_i64(cx, 32 * t), "");
                LLVMBasicBlockRef cont =
                    cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, dv, d->Dv, ""));
                st(cx, ld(cx, ov[t]), part_at(a, row, dv));
                cg_if_end(cx, cont);
            }
        }
        LLVMBasicBlockRef cont =
            cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_i64(cx, 0), ""));
        part_store_ml(a, row, ld(cx, mvar), ld(cx, lvar));
        cg_if_end(cx, cont);
        return true;
    }
    LLVMValueRef inv = inv_sum(cx, ld(cx, lvar), d->Sk);
    if (a->lse != IR_NONE) {
        LLVMBasicBlockRef one =
            cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_i64(cx, 0), ""));
        lse_store(a, row, ld(cx, mvar), ld(cx, lvar), 1.0);
        cg_if_end(cx, one);
    }
    if (orow) {
        LLVMValueRef i = cg_loop_begin(cx, &il, cg_i64(cx, 0), d->Dv, cg_i64(cx, 1), "out");
        LLVMValueRef o = fmul(cx, ld(cx, LLVMBuildGEP2(b, f, orow, &i, 1, "")), inv);
        if (!d->epi(d->user, cx, &o, a->bidx, row, i)) return false;
        cg_loop_end(cx, &il);
        return true;
    }
    for (int t = 0; t < nt; t++) {
        LLVMValueRef dv = LLVMBuildAdd(b, lane, cg_i64(cx, 32 * t), "");
        LLVMBasicBlockRef cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, dv, d->Dv, ""));
        LLVMValueRef o = fmul(cx, ld(cx, ov[t]), inv);
        if (!d->epi(d->user, cx, &o, a->bidx, row, dv)) return false;
        cg_if_end(cx, cont);
    }
    return true;
}

/* ---- sm_90a body: wgmma + TMA, FlashAttention-3 style --------------------- */
/* One warp-specialised persistent kernel (docs/codegen-attention.md): warpgroup 0 the producer
 * (one thread issues TMA copies of a Q tile per work tile and of K and V tiles per key step into
 * a ring of mbarrier-guarded stages), warpgroups 1-2 the consumers (64 query rows each): S = Q
 * K^T by wgmma from shared memory, F and the online softmax on the accumulator fragments, P
 * re-packed in registers as the A operand of O += P V (V the B operand, N-contiguous, transpose
 * bit set). Everything of one pipeline lives in the kernel function (ptxas C7510). */

void cg_attn_wg_acc_pos(unsigned t, unsigned i, unsigned *row, unsigned *col) {
    *row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
    *col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
}

void cg_attn_wg_pfrag(unsigned kk, unsigned r, unsigned *lo, unsigned *hi) {
    *lo = 8 * kk + 2 * r;
    *hi = *lo + 1;
}

int cg_attn_wg_wide_d_bn(int64_t d) {
    int bn = (int)((CG_ATTN_WG_TILE_REGS - d / 2) * 4 / 3) / 16 * 16;
    return bn > 128 ? 128 : bn;
}

bool cg_attn_wg_plan_for(int64_t d, int bn, int nwg, int64_t smem_max, cg_attn_wg_plan *p) {
    memset(p, 0, sizeof *p);
    if (d != 64 && d != 128 && d != 192 && d != 256) return false;
    if (bn == 0) bn = d <= 128 ? 128 : cg_attn_wg_wide_d_bn(d);
    if (nwg == 0) nwg = 2;
    /* (three consumers at d = 128 would leave 160 registers for S, P and O's 160) */
    if (bn % 16 || bn < 64 || bn > 256 || nwg < 2 || nwg > 3 || (nwg == 3 && d != 64) ||
        (d > 128 && d / 2 + bn / 2 + bn / 4 > CG_ATTN_WG_TILE_REGS))
        return false;
    p->d = (int)d, p->nwg = nwg, p->bm = 64 * nwg, p->bn = bn;
    p->q_bytes = (int64_t)p->bm * d * 2;
    p->kv_bytes = (int64_t)p->bn * d * 2;
    p->stage_bytes = 2 * p->kv_bytes;
    p->bar_bytes = 8 * (2 * CG_ATTN_WG_QBUFS + 4 * CG_ATTN_WG_MAX_STAGES);
    int64_t fixed = 1024 /* alignment slack */ + p->q_bytes + p->bar_bytes;
    int64_t st = (smem_max - fixed) / p->stage_bytes;
    if (st > CG_ATTN_WG_MAX_STAGES) st = CG_ATTN_WG_MAX_STAGES;
    if (st < 2) return false;
    p->stages = (int)st;
    p->qbufs = fixed + p->q_bytes + st * p->stage_bytes <= smem_max ? 2 : 1;
    p->smem_bytes = fixed + (p->qbufs - 1) * p->q_bytes + st * p->stage_bytes;
    return true;
}

bool cg_attn_wg_view_of(const ir_graph *g, unsigned region, ir_id opnd, ir_dtype dt, int64_t d,
                        bool trans, cg_attn_wg_view *v) {
    return pass_attn_view_of(g, region, opnd, dt, d, trans, v, NULL, 0);
}

void cg_attn_wg_view_coords(const cg_attn_wg_view *v, const int64_t *ext, const int64_t *bidx,
                            int64_t row, int64_t col, int64_t coords[CG_TMAP_MAXR]) {
    for (unsigned j = 0; j < v->rank; j++) {
        int64_t c = v->role[j] == CG_AWG_D ? col : v->role[j] == CG_AWG_ROW ? row : 0;
        for (unsigned i = v->b0[j]; v->role[j] == CG_AWG_BATCH && i < v->b0[j] + v->nb[j]; i++)
            c = c * ext[i] + (ext[i] == 1 ? 0 : bidx[i]);
        coords[j] = c;
    }
}

int64_t cg_attn_wg_dpad(int64_t d) { return (d + 63) / 64 * 64; }

/* Whether the region runs on the sm_90a kernel: the target has it and the planner's rule
 * [attention.fa3] (pass_attention_fa3: 16-bit operands, D = Dv a known multiple of 16 up to 256,
 * each operand a TMA view) holds; vw[] get the three views, p the kernel's plan at the head dim
 * cg_attn_wg_dpad(D) (TMA zero-fills the columns past D, which add nothing to the scores and give
 * O columns that are not stored). */
static bool awg_eligible(const cg_ctx *cx, const ir_graph *g, unsigned region, const attn_match *am,
                         cg_attn_wg_view vw[3], cg_attn_wg_plan *p) {
    /* (TX_ATTN_FA3=0: the mma.sync kernel instead, for benchmarks) */
    if (cx->target != CG_SM90A || !attn_knob("TX_ATTN_FA3", true)) return false;
    if (!pass_attention_fa3(g, region, vw, NULL, 0)) return false;
    const ir_node *qn = nd(g, am->q);
    return cg_attn_wg_plan_for(cg_attn_wg_dpad(qn->shape.dim[qn->shape.rank - 1]), 0, 0,
                               cg_mm_smem_limit(cx->target), p);
}

/* AWG_MAX_COND: position-only conditions the clean tiles take as true; AWG_RESCALE_LOG2: how far
 * (log2) a row's max may grow before the running max moves and O is rescaled (P <= 2^8 fits
 * bf16 and f16; O and l stay far from f32 overflow). */
enum { AWG_MAX_COND = 4, AWG_RESCALE_LOG2 = 8 };

/* The consumer's compile-time plan of the score function F (awg_fplan_for). */
typedef struct awg_fplan {
    ir_id peel;     /* F's node c x substituted by x (F' = F / c), or IR_NONE (F' = F) */
    float cl;       /* c log2(e) (c = 1 without a peeled scale): exp(F - m) = ex2(cl (F' - m')) */
    bool diff;      /* ex2((F' - m') cl) by FSUB + FMUL, not FFMA(F', cl, -m' cl): F's magnitude
                     * (awg_frange) times cl exceeds FLT_MAX, where m' cl could overflow */
    unsigned ncond; /* conditions of F's wheres that depend on positions only */
    ir_id cond[AWG_MAX_COND]; /* (iv_static: bool), taken as true in tiles where they are */
    bool always_clean;        /* no condition and Sk a known multiple of the key tile */
} awg_fplan;

/* The kernel's state. */
typedef struct attn_wgk {
    cg_attn_wg_plan p;
    int dq; /* the head dim S = Q Kᵀ reduces over: D (p.d, the tiles' width, when not padded) */
    LLVMValueRef tm[3]; /* q, k, v tensor maps (the byval parameters) */
    cg_attn_wg_view vw[3];
    LLVMValueRef smem; /* i32 shared address of the Q tile (1024-aligned) */
    LLVMValueRef bar;  /* i32 shared address of the barriers (cg_attn_wg_plan) */
    LLVMValueRef nq, ntiles;
    bool skip;          /* block sparsity (off with TX_ATTN_NO_SKIP=1, for benchmarks) */
    bool pipe;          /* the software-pipelined key loop (awg_keys; off: TX_ATTN_PIPELINE=0) */
    bool pingpong;      /* consumer turns (awg_turn_wait; pipelined; off: TX_ATTN_PINGPONG=0) */
    bool zig;           /* the paired tile order (cg_attn_wg_tile_order; TX_ATTN_ZIGZAG=0: off) */
    bool spec;          /* awg_exps_spec in the steady loop (TX_ATTN_SPEC=1) */
    bool ones;          /* row sums by the tensor cores (awg_issue_pv; pipelined; TX_ATTN_ONES=1) */
    LLVMValueRef sones; /* i32 shared address of the ones tile (with ones) */
    int poly; /* every poly-th exponent on the FMA pipe (awg_ex2_poly; TX_ATTN_POLY=n; 0: none) */
    LLVMValueRef ncta; /* i64 CTAs (with zig) */
    awg_fplan fp;      /* the consumer's plan of the score function (awg_fplan_for) */
} attn_wgk;

static LLVMValueRef i32c(cg_ctx *cx, int64_t v) { return cg_i32(cx, v); }

/* qfull[qb] (which 0: the producer's Q copies landed) or qempty[qb] (which 1: both consumers
 * are done with the tile) of Q buffer qb (i32). */
static LLVMValueRef awg_qbar(cg_ctx *cx, const attn_wgk *k, LLVMValueRef qb, int which) {
    LLVMValueRef b0 = LLVMBuildAdd(cx->b, k->bar, i32c(cx, which * 8 * CG_ATTN_WG_QBUFS), "");
    return LLVMBuildAdd(cx->b, b0, LLVMBuildMul(cx->b, qb, i32c(cx, 8), ""), "");
}
/* The barriers of a stage: K landed, V landed (one arrival with the bytes each), K read, V read
 * (one arrival per consumer warp each, awg_arrive). S = Q K^T starts when K lands and frees K as
 * soon as it completes; V is waited for only by O += P V. */
enum { AWG_KFULL, AWG_VFULL, AWG_KEMPTY, AWG_VEMPTY };
/* Barrier `which` (AWG_KFULL ...) of stage s (i32). */
static LLVMValueRef awg_sbar(cg_ctx *cx, const attn_wgk *k, LLVMValueRef s, int which) {
    LLVMValueRef b0 = LLVMBuildAdd(
        cx->b, k->bar, i32c(cx, 16 * CG_ATTN_WG_QBUFS + which * 8 * CG_ATTN_WG_MAX_STAGES), "");
    return LLVMBuildAdd(cx->b, b0, LLVMBuildMul(cx->b, s, i32c(cx, 8), ""), "");
}
/* Shared address of Q buffer qb (i32). */
static LLVMValueRef awg_qsm(cg_ctx *cx, const attn_wgk *k, LLVMValueRef qb) {
    return LLVMBuildAdd(cx->b, k->smem, LLVMBuildMul(cx->b, qb, i32c(cx, k->p.q_bytes), ""), "");
}
/* Shared address of the K (which 0) or V (1) tile of stage s. */
static LLVMValueRef awg_kv(cg_ctx *cx, const attn_wgk *k, LLVMValueRef s, int which) {
    LLVMValueRef off = LLVMBuildMul(cx->b, s, i32c(cx, k->p.stage_bytes), "");
    off = LLVMBuildAdd(cx->b, off, i32c(cx, k->p.qbufs * k->p.q_bytes + which * k->p.kv_bytes), "");
    return LLVMBuildAdd(cx->b, k->smem, off, "");
}
/* The Q buffer (i32) and its barriers' parity of the qit-th work tile (i32) of this CTA. */
static void awg_qslot(cg_ctx *cx, const attn_wgk *k, LLVMValueRef qit, LLVMValueRef *qb,
                      LLVMValueRef *qpar) {
    LLVMValueRef n = i32c(cx, k->p.qbufs);
    *qb = LLVMBuildURem(cx->b, qit, n, "qb");
    *qpar = LLVMBuildAnd(cx->b, LLVMBuildUDiv(cx->b, qit, n, ""), i32c(cx, 1), "qpar");
}

/* A consumer warp's release of barrier bar (i32): one arrival by its lane 0 (the barriers that
 * consumers release count warps, 4 per consumer warpgroup), after the warp-synchronous wgmma
 * wait or the loop that ends the warp's use of the buffer. One arrival per thread would be 32
 * same-address shared-memory atomics per warp. */
static void awg_arrive(cg_ctx *cx, LLVMValueRef bar) {
    cg_wg_asm(cx, NULL,
              "{\n.reg .pred p;\n.reg .u32 l;\nmov.u32 l, %laneid;\nsetp.eq.u32 p, l, 0;\n"
              "@p mbarrier.arrive.shared::cta.b64 _, [$0];\n}",
              "r,~{memory}", &bar, 1);
}

static void awg_expect(cg_ctx *cx, LLVMValueRef bar, int64_t bytes) {
    LLVMValueRef a[2] = {bar, i32c(cx, bytes)};
    cg_wg_asm(cx, NULL, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}",
              a, 2);
}

/* TMA copies of one tile of the view v through map tm: `rows` rows from row r0 (i32) of the
 * batch whose map coordinates are bc[] (i32 per map dim, attn_view_batch), d/64 boxes of 64
 * columns x rows, one after the other from shared address dst, completing on bar. */
static void attn_tma_copy(cg_ctx *cx, const cg_attn_wg_view *v, LLVMValueRef tm, int64_t d,
                          int64_t rows, LLVMValueRef r0, const LLVMValueRef *bc, LLVMValueRef dst,
                          LLVMValueRef bar) {
    unsigned R = v->rank;
    char text[200], cons[64];
    int n = snprintf(text, sizeof text,
                     "cp.async.bulk.tensor.%ud.shared::cluster.global.tile.mbarrier::complete_tx::"
                     "bytes [$0], [$1, {",
                     R);
    for (unsigned j = 0; j < R; j++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s$%u", j ? ", " : "", 2 + j);
    snprintf(text + n, sizeof text - (size_t)n, "}], [$%u];", 2 + R);
    n = snprintf(cons, sizeof cons, "r,l");
    for (unsigned j = 0; j <= R; j++) n += snprintf(cons + n, sizeof cons - (size_t)n, ",r");
    snprintf(cons + n, sizeof cons - (size_t)n, ",~{memory}");
    for (int i = 0; i < d / 64; i++) {
        LLVMValueRef a[3 + CG_TMAP_MAXR] = {LLVMBuildAdd(cx->b, dst, i32c(cx, rows * 128 * i), ""),
                                            tm};
        for (unsigned j = 0; j < R; j++)
            a[2 + j] = v->role[j] == CG_AWG_D     ? i32c(cx, 64 * i)
                       : v->role[j] == CG_AWG_ROW ? r0
                                                  : bc[j];
        a[2 + R] = bar;
        cg_wg_asm(cx, NULL, text, cons, a, 3 + R);
    }
}

/* attn_tma_copy of operand o (0 q, 1 k, 2 v) of the sm_90a kernel. */
static void awg_copy(cg_ctx *cx, const attn_wgk *k, int o, int64_t rows, LLVMValueRef r0,
                     const LLVMValueRef *bc, LLVMValueRef dst, LLVMValueRef bar) {
    attn_tma_copy(cx, &k->vw[o], k->tm[o], k->p.d, rows, r0, bc, dst, bar);
}

int64_t cg_attn_wg_pair_pos(int64_t t, int64_t ncta, int64_t ntiles) {
    int64_t r = t / ncta, c = t % ncta, base = r / 2 * 2 * ncta, m = ntiles - base;
    if (m <= ncta) return t;
    int64_t two = m >= 2 * ncta ? ncta : m - ncta; /* CTAs that take two positions */
    return c < two ? base + 2 * c + r % 2 : base + 2 * two + (c - two);
}

void cg_attn_wg_tile_order(int64_t pos, int64_t nq, bool zig, int64_t *bz, int64_t *qt) {
    int64_t i = pos % nq;
    *bz = pos / nq;
    *qt = !zig || i % 2 == 0 ? nq - 1 - (zig ? i / 2 : i) : i / 2;
}

/* Work tile t (i64, the persistent loop's: CTA c takes c, c + CTAs, ...) -> a->bidx (its
 * batch) and *q0 (i64, first query row): cg_attn_wg_pair_pos then cg_attn_wg_tile_order with
 * k->zig, else the plain order. */
static void awg_tile(attn_gen *a, const attn_wgk *k, LLVMValueRef t, LLVMValueRef *q0) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef one = cg_i64(cx, 1), two_ = cg_i64(cx, 2), nq1 = LLVMBuildSub(b, k->nq, one, "");
    if (k->zig) { /* the position: CTA c takes positions 2c, 2c + 1 of each block of 2 x CTAs */
        LLVMValueRef n = k->ncta, r = LLVMBuildUDiv(b, t, n, ""), c = LLVMBuildURem(b, t, n, "");
        LLVMValueRef base =
            LLVMBuildMul(b, LLVMBuildMul(b, LLVMBuildUDiv(b, r, two_, ""), two_, ""), n, "");
        LLVMValueRef m = LLVMBuildSub(b, k->ntiles, base, "");
        LLVMValueRef two = imin(cx, n, LLVMBuildSub(b, m, n, ""));
        LLVMValueRef pair = LLVMBuildAdd(
            b, base,
            LLVMBuildAdd(b, LLVMBuildMul(b, c, two_, ""), LLVMBuildURem(b, r, two_, ""), ""), "");
        LLVMValueRef single = LLVMBuildAdd(
            b, base,
            LLVMBuildAdd(b, LLVMBuildMul(b, two, two_, ""), LLVMBuildSub(b, c, two, ""), ""), "");
        LLVMValueRef pos =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, c, two, ""), pair, single, "");
        t = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLE, m, n, ""), t, pos, "pos");
    }
    LLVMValueRef bz = LLVMBuildUDiv(b, t, k->nq, "bz"), i = LLVMBuildURem(b, t, k->nq, ""), qt;
    if (k->zig) { /* nq - 1, 0, nq - 2, 1, ...: a heavy causal tile, then a light one */
        LLVMValueRef h = LLVMBuildUDiv(b, i, two_, "");
        LLVMValueRef even =
            LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, i, one, ""), cg_i64(cx, 0), "");
        qt = LLVMBuildSelect(b, even, LLVMBuildSub(b, nq1, h, ""), h, "qt");
    } else {
        qt = LLVMBuildSub(b, nq1, i, "qt");
    }
    *q0 = LLVMBuildMul(b, qt, cg_i64(cx, k->p.bm), "q0");
    cg_mm_unflatten(cx, bz, a->d.nb, a->d.bdim, a->bidx);
}

/* The batch coordinates bc[j] (i32) of view v's map dims j of role CG_AWG_BATCH for the
 * block's batch a->bidx: the linear index of the dim's operand batch indices
 * (cg_attn_wg_view_coords; the operand's batch dims are the trailing ones of the output's, an
 * extent-1 dim reads 0); the other entries are left NULL. */
static void attn_view_batch(attn_gen *a, const cg_attn_wg_view *v, LLVMValueRef bc[CG_TMAP_MAXR]) {
    cg_ctx *cx = a->cx;
    unsigned nbo = v->opnd.rank, nb = a->d.nb;
    for (unsigned j = 0; j < v->rank; j++) {
        bc[j] = NULL;
        if (v->role[j] != CG_AWG_BATCH) continue;
        LLVMValueRef c = cg_i64(cx, 0);
        for (unsigned i = v->b0[j]; i < v->b0[j] + v->nb[j] && nbo <= nb; i++) {
            ir_dim dm = v->opnd.dim[i];
            if (dm == 1) continue;
            c = LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, c, cg_dim(cx, dm), ""),
                             a->bidx[i + nb - nbo], "");
        }
        bc[j] = LLVMBuildTrunc(cx->b, c, cx->i32, "bc");
    }
}

/* attn_view_batch of operand o (0 q, 1 k, 2 v) of the sm_90a kernel. */
static void awg_batch(attn_gen *a, const attn_wgk *k, int o, LLVMValueRef bc[CG_TMAP_MAXR]) {
    attn_view_batch(a, &k->vw[o], bc);
}

/* Keys [*kb, *ke) of the work tile at q0 (block sparsity unless disabled). */
static void awg_range(attn_gen *a, const attn_wgk *k, LLVMValueRef q0, LLVMValueRef *kb,
                      LLVMValueRef *ke) {
    cg_ctx *cx = a->cx;
    *kb = cg_i64(cx, 0), *ke = a->d.Sk;
    if (!k->skip) return;
    LLVMValueRef rl = imin(cx, LLVMBuildAdd(cx->b, q0, cg_i64(cx, k->p.bm - 1), ""),
                           LLVMBuildSub(cx->b, a->d.Sq, cg_i64(cx, 1), ""));
    attn_key_range(a, q0, rl, k->p.bn, kb, ke);
}

/* The persistent loop over work tiles t = cta, cta + ncta, ... (i64 iv). */
static LLVMValueRef awg_tiles(cg_ctx *cx, const attn_wgk *k, cg_loop *l, LLVMValueRef cta,
                              LLVMValueRef ncta) {
    return cg_loop_begin(cx, l, LLVMBuildZExt(cx->b, cta, cx->i64, ""), k->ntiles,
                         LLVMBuildZExt(cx->b, ncta, cx->i64, ""), "tile");
}

/* Stage index and parity of ring step it (i32). */
static void awg_stage(cg_ctx *cx, const attn_wgk *k, LLVMValueRef it, LLVMValueRef *s,
                      LLVMValueRef *par) {
    LLVMValueRef S = i32c(cx, k->p.stages);
    *s = LLVMBuildURem(cx->b, it, S, "s");
    *par = LLVMBuildAnd(cx->b, LLVMBuildUDiv(cx->b, it, S, ""), i32c(cx, 1), "par");
}

/* Loads operand o (1 K, 2 V) of the key tile at row j32 (i32) of the batch at map coordinates
 * bc[] into ring step it's stage (i32): waits until the consumers freed it, arms its full
 * barrier. */
static void awg_load(cg_ctx *cx, const attn_wgk *k, int o, LLVMValueRef j32, const LLVMValueRef *bc,
                     LLVMValueRef it) {
    LLVMValueRef s, par;
    awg_stage(cx, k, it, &s, &par);
    int full = o == 1 ? AWG_KFULL : AWG_VFULL, empty = o == 1 ? AWG_KEMPTY : AWG_VEMPTY;
    cg_wg_wait(cx, awg_sbar(cx, k, s, empty), LLVMBuildXor(cx->b, par, i32c(cx, 1), ""));
    LLVMValueRef fb = awg_sbar(cx, k, s, full);
    awg_expect(cx, fb, k->p.kv_bytes);
    awg_copy(cx, k, o, k->p.bn, j32, bc, awg_kv(cx, k, s, o - 1), fb);
}

/* The producer thread. Per work tile: the first key tile's K (a stage the consumers free while
 * they finish the previous tile), then, once the consumers released the tile's Q buffer (with
 * two buffers: two work tiles ago), Q, then the first V and per further live key tile its K and
 * V, each into the next stage as the consumers free it. */
static void awg_producer(attn_gen *a, attn_wgk *k, LLVMValueRef cta, LLVMValueRef ncta) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef itv = cg_var(cx, i32c(cx, 0)), qtv = cg_var(cx, i32c(cx, 0));
    cg_loop tl, jl;
    LLVMValueRef t = awg_tiles(cx, k, &tl, cta, ncta), q0, kb, ke;
    awg_tile(a, k, t, &q0);
    LLVMValueRef pq[CG_TMAP_MAXR], pk[CG_TMAP_MAXR], pv[CG_TMAP_MAXR];
    awg_batch(a, k, 0, pq), awg_batch(a, k, 1, pk), awg_batch(a, k, 2, pv);
    awg_range(a, k, q0, &kb, &ke);
    LLVMValueRef live = LLVMBuildICmp(b, LLVMIntSLT, kb, ke, "live");
    LLVMValueRef kb32 = LLVMBuildTrunc(b, kb, cx->i32, "");
    LLVMBasicBlockRef e = cg_if_begin(cx, live);
    awg_load(cx, k, 1, kb32, pk, LLVMBuildLoad2(b, cx->i32, itv, ""));
    cg_if_end(cx, e);
    LLVMValueRef qit = LLVMBuildLoad2(b, cx->i32, qtv, ""), qb, qpar;
    awg_qslot(cx, k, qit, &qb, &qpar);
    cg_wg_wait(cx, awg_qbar(cx, k, qb, 1), LLVMBuildXor(b, qpar, i32c(cx, 1), ""));
    LLVMValueRef qf = awg_qbar(cx, k, qb, 0);
    awg_expect(cx, qf, k->p.q_bytes);
    awg_copy(cx, k, 0, k->p.bm, LLVMBuildTrunc(b, q0, cx->i32, ""), pq, awg_qsm(cx, k, qb), qf);
    e = cg_if_begin(cx, live);
    LLVMValueRef it = LLVMBuildLoad2(b, cx->i32, itv, "");
    awg_load(cx, k, 2, kb32, pv, it);
    LLVMBuildStore(b, LLVMBuildAdd(b, it, i32c(cx, 1), ""), itv);
    cg_if_end(cx, e);
    LLVMValueRef j0 = cg_loop_begin(cx, &jl, LLVMBuildAdd(b, kb, cg_i64(cx, k->p.bn), ""), ke,
                                    cg_i64(cx, k->p.bn), "pj");
    LLVMValueRef j32 = LLVMBuildTrunc(b, j0, cx->i32, "");
    it = LLVMBuildLoad2(b, cx->i32, itv, "");
    awg_load(cx, k, 1, j32, pk, it);
    awg_load(cx, k, 2, j32, pv, it);
    LLVMBuildStore(b, LLVMBuildAdd(b, it, i32c(cx, 1), ""), itv);
    cg_loop_end(cx, &jl);
    LLVMBuildStore(b, LLVMBuildAdd(b, qit, i32c(cx, 1), ""), qtv);
    cg_loop_end(cx, &tl);
}

/* asm `text` with the n0 f32 values v0[] and the n1 i32 values v1[] tied through it (outputs
 * replace them): a wgmma fence or wait that orders their writes and reads. */
static void awg_tied_asm(cg_ctx *cx, const char *text, LLVMValueRef *v0, unsigned n0,
                         LLVMValueRef *v1, unsigned n1) {
    char cons[2048];
    size_t o = 0;
    unsigned n = n0 + n1;
    LLVMTypeRef ft[260];
    LLVMValueRef args[260];
    for (unsigned i = 0; i < n; i++) {
        o += (size_t)snprintf(cons + o, sizeof cons - o, "%s=%s", i ? "," : "", i < n0 ? "f" : "r");
        ft[i] = i < n0 ? cx->f32 : cx->i32;
        args[i] = i < n0 ? v0[i] : v1[i - n0];
    }
    for (unsigned i = 0; i < n; i++) o += (size_t)snprintf(cons + o, sizeof cons - o, ",%u", i);
    snprintf(cons + o, sizeof cons - o, ",~{memory}");
    LLVMTypeRef st = LLVMStructTypeInContext(cx->llctx, ft, n, 0);
    LLVMValueRef r = cg_wg_asm(cx, st, text, cons, args, n);
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef e = LLVMBuildExtractValue(cx->b, r, i, "");
        if (i < n0)
            v0[i] = e;
        else
            v1[i - n0] = e;
    }
}

/* The i64 descriptor of a 128-byte-swizzled tile at shared address sa (i32) plus `off` bytes. */
static LLVMValueRef awg_desc(cg_ctx *cx, LLVMValueRef sa, int64_t off, uint32_t lbo) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef a = LLVMBuildAdd(b, sa, i32c(cx, off), "");
    LLVMValueRef lo = LLVMBuildLShr(b, LLVMBuildAnd(b, a, i32c(cx, 0x3FFFF), ""), i32c(cx, 4), "");
    return LLVMBuildAdd(b, LLVMConstInt(cx->i64, cg_wg_desc(0, lbo, 1024), 0),
                        LLVMBuildZExt(b, lo, cx->i64, ""), "");
}

/* The descriptor of desc's tile `off` bytes further (off a multiple of 16): the start address
 * field is (address mod 2^18) / 16 and shared addresses stay below 2^18, so it adds off / 16. */
static LLVMValueRef awg_desc_add(cg_ctx *cx, LLVMValueRef desc, int64_t off) {
    return off ? LLVMBuildAdd(cx->b, desc, LLVMConstInt(cx->i64, (uint64_t)off >> 4, 0), "") : desc;
}

static const char *awg_ty(const attn_gen *a) { return a->d.cdt == IR_BF16 ? "bf16" : "f16"; }

/* Appends to text[*o..cap) one wgmma of the group: "setp.ne.b32 p, $pred, 0;" then
 * "wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T REGS, A, $desc, p, 1, 1, TAIL;" (A: "$x" for a
 * descriptor, "{$x, ..}" for registers). */
static void awg_wgmma_text(char *text, size_t cap, size_t *o, unsigned pred, int n, const char *ty,
                           const char *regs, const char *a, unsigned desc, const char *tail) {
    size_t room = *o < cap ? cap - *o : 0; /* past the end: count only */
    *o +=
        (size_t)snprintf(room ? text + *o : NULL, room,
                         "setp.ne.b32 p, $%u, 0;\nwgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s "
                         "%s, %s, $%u, p, 1, 1%s;\n",
                         pred, n, ty, ty, regs, a, desc, tail);
}

/* Issues S = Q K^T (dq/16 wgmma m64 x bn x 16 from this warpgroup's Q rows at sq and the K tile
 * at sk) into s[0..bn/2) (zeros the caller tied through the fence: no other instruction may
 * define a wgmma input between the fence and the wgmma), committed as one group, not waited.
 * The d/16 wgmma are one asm statement (the accumulators cross LLVM once, not per k step). */
static void awg_issue_qk(attn_gen *a, const attn_wgk *k, LLVMValueRef sq, LLVMValueRef sk,
                         LLVMValueRef *s) {
    cg_ctx *cx = a->cx;
    unsigned NS = (unsigned)k->p.bn / 2, KK = (unsigned)k->dq / 16;
    char text[16384], cons[2048], regs[1024], mid[256], ad[16];
    size_t o = (size_t)snprintf(text, sizeof text, "{\n.reg .pred p;\n");
    cg_wg_reglist(regs, sizeof regs, 0, NS);
    LLVMValueRef pre[2 * 16 + 2], dq = awg_desc(cx, sq, 0, 16), dk = awg_desc(cx, sk, 0, 16);
    size_t mo = 0;
    for (unsigned kk = 0; kk < KK; kk++) {
        int64_t off = (kk % 4) * 32; /* the 16-deep slice within the box's 128-byte rows */
        pre[2 * kk] = awg_desc_add(cx, dq, (kk / 4) * (int64_t)k->p.bm * 128 + off);
        pre[2 * kk + 1] = awg_desc_add(cx, dk, (kk / 4) * (int64_t)k->p.bn * 128 + off);
        mo += (size_t)snprintf(mid + mo, sizeof mid - mo, "%sl,l", kk ? "," : "");
        snprintf(ad, sizeof ad, "$%u", NS + 2 * kk);
        /* scale-d: 0 (S = product) for the first, 1 (accumulate) after */
        awg_wgmma_text(text, sizeof text, &o, NS + 2 * KK + (kk > 0), k->p.bn, awg_ty(a), regs, ad,
                       NS + 2 * kk + 1, ", 0, 0");
    }
    pre[2 * KK] = i32c(cx, 0);
    pre[2 * KK + 1] = i32c(cx, 1);
    snprintf(mid + mo, sizeof mid - mo, ",r,r");
    snprintf(text + o, o < sizeof text ? sizeof text - o : 0, "}");
    cg_wg_tied(cons, sizeof cons, NS, mid);
    cg_wg_acc_asm(cx, s, NS, text, cons, pre, 2 * KK + 2);
    cg_wg_asm(cx, NULL, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0);
}

/* Issues O += P V (bn/16 wgmma m64 x d x 16, P's registers pf as the A operand, the V tile at
 * sv the N-contiguous B operand) into o[0..d/2), committed as one group, not waited; one asm
 * statement as in awg_issue_qk. With k->ones also L += P 1 (bn/16 wgmma m64 x 8 x 16 against the
 * ones tile) into o[d/2..d/2 + 4): every column of L is its row's sum of P. */
static void awg_issue_pv(attn_gen *a, const attn_wgk *k, LLVMValueRef sv, LLVMValueRef *pf,
                         LLVMValueRef *o) {
    cg_ctx *cx = a->cx;
    unsigned NO = (unsigned)k->p.d / 2, KP = (unsigned)k->p.bn / 16;
    unsigned NA = NO + (k->ones ? 4 : 0);
    char text[20000], cons[2048], regs[1024], lregs[64], mid[512], ar[64];
    size_t to = (size_t)snprintf(text, sizeof text, "{\n.reg .pred p;\n");
    cg_wg_reglist(regs, sizeof regs, 0, NO);
    cg_wg_reglist(lregs, sizeof lregs, NO, 4);
    uint32_t vlbo = (uint32_t)(k->p.bn * 128); /* the next 64 value columns: the next box */
    LLVMValueRef pre[5 * 16 + 2], dv = awg_desc(cx, sv, 0, vlbo);
    size_t mo = 0;
    for (unsigned kk = 0; kk < KP; kk++) {
        unsigned b0 = NA + 5 * kk;
        for (unsigned r = 0; r < 4; r++) pre[5 * kk + r] = pf[4 * kk + r];
        pre[5 * kk + 4] = awg_desc_add(cx, dv, (int64_t)kk * 2048);
        mo += (size_t)snprintf(mid + mo, sizeof mid - mo, "%sr,r,r,r,l", kk ? "," : "");
        snprintf(ar, sizeof ar, "{$%u, $%u, $%u, $%u}", b0, b0 + 1, b0 + 2, b0 + 3);
        awg_wgmma_text(text, sizeof text, &to, NA + 5 * KP, k->p.d, awg_ty(a), regs, ar, b0 + 4,
                       ", 1");
        if (k->ones) /* K-major ones, no transpose */
            awg_wgmma_text(text, sizeof text, &to, NA + 5 * KP, 8, awg_ty(a), lregs, ar,
                           NA + 5 * KP + 1, ", 0");
    }
    pre[5 * KP] = i32c(cx, 1);
    unsigned npre = 5 * KP + 1;
    if (k->ones) {
        /* no swizzle: 8 x 16-byte core matrices, LBO 128 (k), SBO 256; the tile holds 512
         * bytes of ones, so every address the wgmma reads is inside it */
        LLVMValueRef lo = LLVMBuildLShr(cx->b, LLVMBuildAnd(cx->b, k->sones, i32c(cx, 0x3FFFF), ""),
                                        i32c(cx, 4), "");
        pre[npre++] = LLVMBuildAdd(
            cx->b,
            LLVMConstInt(cx->i64, ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32), 0),
            LLVMBuildZExt(cx->b, lo, cx->i64, ""), "");
    }
    snprintf(mid + mo, sizeof mid - mo, k->ones ? ",r,l" : ",r");
    snprintf(text + to, to < sizeof text ? sizeof text - to : 0, "}");
    cg_wg_tied(cons, sizeof cons, NA, mid);
    cg_wg_acc_asm(cx, o, NA, text, cons, pre, npre);
    cg_wg_asm(cx, NULL, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0);
}

/* ---- the consumer's arithmetic per score ------------------------------------ */
/* Per score the consumer spends (SASS of the D128 key loop, tests/unit/test_attn_wg.c counts it):
 * half a paired convert and one integer unpack to round the product to its dtype, F (nothing for
 * a plain scale: the scale is peeled off F and folded into the exponent), one FMNMX of the row
 * max, one FFMA + MUFU.EX2 (exp2 form), one FADD of the row sum, half a paired convert of P; the
 * key-bound mask and the position-only masks only in tiles that need them. */

/* Whether node id of F is a positive scale (pass_attn_pos_scale) of the 16-bit product or its f32
 * cast; *c gets the multiplier (c, or 1 / k) when it is. */
static bool awg_scaled(const ir_graph *g, const attn_match *am, ir_id id, double *c) {
    double m;
    int s = pass_attn_pos_scale(g, id, &m);
    if (s < 0) return false;
    ir_id x = ir_in(g, &g->nodes[id], (unsigned)s);
    const ir_node *xn = &g->nodes[x];
    if (xn->op == IR_OP_CAST && xn->dtype == IR_F32 && ir_in(g, xn, 0) == am->mm1) x = am->mm1;
    if (x != am->mm1 || g->nodes[am->mm1].dtype == IR_F32) return false;
    *c = m;
    return true;
}

static bool awg_is_inf(const ir_graph *g, ir_id id) {
    const ir_node *n = &g->nodes[id];
    return n->op == IR_OP_CONST && n->shape.rank == 0 && isinf(n->a.cval);
}

/* AWG_PRODUCT_BOUND: the magnitude awg_frange takes for the product (a bf16 product past it
 * has an accumulator near f32 overflow: out of the kernel's range); AWG_BOUND_NODES: how many
 * nodes awg_frange visits. */
#define AWG_PRODUCT_BOUND 18446744073709551616.0 /* 2^64 */
enum { AWG_BOUND_NODES = 4096 };

/* An interval [lo, hi] of the finite values a node of F can take (lo > hi: none, as for an
 * infinite constant: an infinite score is a mask, exp gives 0 or NaN as in PyTorch). */
typedef struct awg_iv {
    double lo, hi;
} awg_iv;

/* The finite range of dtype t. */
static awg_iv awg_dtype_iv(ir_dtype t) {
    double m = t == IR_F16 ? 65504.0 : t == IR_BF16 ? 3.3895313892515355e38 : FLT_MAX;
    if (t == IR_I32) return (awg_iv){-2147483648.0, 2147483647.0};
    if (t == IR_BOOL) return (awg_iv){0, 1};
    return (awg_iv){-m, m};
}

static bool awg_iv_none(awg_iv v) { return v.lo > v.hi; }

/* The hull of x and y (a range of none is neutral). */
static awg_iv awg_iv_hull(awg_iv x, awg_iv y) {
    if (awg_iv_none(x)) return y;
    if (awg_iv_none(y)) return x;
    return (awg_iv){fmin(x.lo, y.lo), fmax(x.hi, y.hi)};
}

/* x op y for the arithmetic ops (ADD, SUB, MUL; a range of none gives none). */
static awg_iv awg_iv_arith(ir_op op, awg_iv x, awg_iv y) {
    if (awg_iv_none(x) || awg_iv_none(y)) return (awg_iv){1, 0};
    if (op == IR_OP_ADD) return (awg_iv){x.lo + y.lo, x.hi + y.hi};
    if (op == IR_OP_SUB) return (awg_iv){x.lo - y.hi, x.hi - y.lo};
    double p[4] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
    return (awg_iv){fmin(fmin(p[0], p[1]), fmin(p[2], p[3])),
                    fmax(fmax(p[0], p[1]), fmax(p[2], p[3]))};
}

/* The range of node id's finite values by its op from its operands' (awg_frange), before the
 * clamp to its dtype's range (an op not listed: that range). */
static awg_iv awg_range_op(const ir_graph *g, const attn_match *am, ir_id id, unsigned *budget);

/* The range of F's node id: the product taken as [-AWG_PRODUCT_BOUND, AWG_PRODUCT_BOUND],
 * each node clamped to its dtype's finite range; at most *budget nodes visited (a shared node
 * once per path), past that a node's dtype range. */
static awg_iv awg_frange(const ir_graph *g, const attn_match *am, ir_id id, unsigned *budget) {
    const ir_node *n = &g->nodes[id];
    awg_iv d = awg_dtype_iv((ir_dtype)n->dtype), v = d;
    if (id == am->mm1)
        v = (awg_iv){-AWG_PRODUCT_BOUND, AWG_PRODUCT_BOUND};
    else if (*budget > 0)
        --*budget, v = awg_range_op(g, am, id, budget);
    if (awg_iv_none(v)) return v;
    return (awg_iv){fmax(fmin(v.lo, d.hi), d.lo), fmin(fmax(v.hi, d.lo), d.hi)};
}

static awg_iv awg_range_op(const ir_graph *g, const attn_match *am, ir_id id, unsigned *budget) {
    const ir_node *n = &g->nodes[id];
    awg_iv d = awg_dtype_iv((ir_dtype)n->dtype), x = d, y = d;
    if (n->nin >= 1) x = awg_frange(g, am, ir_in(g, n, 0), budget);
    if (n->nin >= 2) y = awg_frange(g, am, ir_in(g, n, n->nin - 1), budget);
    bool none = awg_iv_none(x);
    switch (n->op) {
        case IR_OP_CONST:
            if (isinf(n->a.cval)) return (awg_iv){1, 0};
            return isnan(n->a.cval) ? d : (awg_iv){n->a.cval, n->a.cval};
        case IR_OP_IOTA: return (awg_iv){0, d.hi};
        case IR_OP_ADD:
        case IR_OP_SUB:
        case IR_OP_MUL: return awg_iv_arith((ir_op)n->op, x, y);
        case IR_OP_DIV: {
            const ir_node *kn = &g->nodes[ir_in(g, n, 1)];
            if (kn->op != IR_OP_CONST || !isfinite(kn->a.cval) || kn->a.cval == 0) return d;
            return awg_iv_arith(IR_OP_MUL, x, (awg_iv){1 / kn->a.cval, 1 / kn->a.cval});
        }
        case IR_OP_NEG: return none ? x : (awg_iv){-x.hi, -x.lo};
        case IR_OP_ABS:
            return none ? x : (awg_iv){x.lo > 0 ? x.lo : x.hi < 0 ? -x.hi : 0, fmax(-x.lo, x.hi)};
        case IR_OP_EXP:
        case IR_OP_EXP2: {
            double e = n->op == IR_OP_EXP ? 2.718281828459045 : 2;
            return none ? x : (awg_iv){0, pow(e, fmin(x.hi, 1024))};
        }
        case IR_OP_TANH: return (awg_iv){-1, 1};
        case IR_OP_SIGMOID: return (awg_iv){0, 1};
        case IR_OP_MAXIMUM:
        case IR_OP_MINIMUM: return awg_iv_hull(x, y);
        case IR_OP_WHERE: return awg_iv_hull(awg_frange(g, am, ir_in(g, n, 1), budget), y);
        case IR_OP_CAST:
        case IR_OP_MAX:
        case IR_OP_MIN:
        case IR_OP_MEAN: return x;
        default: return (ir_op_traits((ir_op)n->op) & IR_T_VIEW) ? x : d;
    }
}

/* Collects into fp->cond the conditions of F's wheres that are functions of positions and
 * per-batch values only (iv_static: bool), walking F from node id (not into the product). */
static void awg_conds(attn_gen *a, awg_fplan *fp, ir_id id, uint8_t *seen, unsigned *budget) {
    const ir_graph *g = a->cx->g;
    const ir_node *n = &g->nodes[id];
    if (id == a->am->mm1 || seen[id] || *budget == 0 || n->region != g->nodes[a->am->scores].region)
        return;
    seen[id] = 1, --*budget;
    if (n->op == IR_OP_WHERE && fp->ncond < AWG_MAX_COND) {
        ir_id c = ir_in(g, n, 0);
        bool dup = false;
        for (unsigned i = 0; i < fp->ncond; i++) dup |= fp->cond[i] == c;
        a->walk = ATTN_WALK_MAX;
        if (!dup && iv_static(a, c, 0) == 2) fp->cond[fp->ncond++] = c;
    }
    for (unsigned k = 0; k < n->nin; k++) awg_conds(a, fp, ir_in(g, n, k), seen, budget);
}

/* The consumer's compile-time plan of F (awg_fplan). The scale c of F = c x, or of F =
 * where(cond, c x, +-inf) with cond independent of the product (x / k: c = 1 / k), is peeled: F' =
 * F / c, whose row max is the max of F over c (c > 0), and exp(F - m) = ex2(c log2(e) (F' - m')).
 */
static void awg_fplan_for(attn_gen *a, const attn_wgk *k, awg_fplan *fp) {
    const ir_graph *g = a->cx->g;
    const attn_match *am = a->am;
    memset(fp, 0, sizeof *fp);
    fp->peel = IR_NONE;
    double c = 1;
    ir_id r = am->scores;
    const ir_node *rn = &g->nodes[r];
    if (awg_scaled(g, am, r, &c)) {
        fp->peel = r;
    } else if (rn->op == IR_OP_WHERE && rn->dtype == IR_F32) {
        unsigned walk = ATTN_WALK_MAX;
        ir_id cd = ir_in(g, rn, 0), x = ir_in(g, rn, 1), y = ir_in(g, rn, 2);
        if (!dep_mm1(g, cd, am->mm1, 0, &walk)) {
            if (awg_is_inf(g, y) && awg_scaled(g, am, x, &c))
                fp->peel = x;
            else if (awg_is_inf(g, x) && awg_scaled(g, am, y, &c))
                fp->peel = y;
        }
        if (fp->peel == IR_NONE) c = 1;
    }
    fp->cl = (float)(c * 1.4426950408889634);
    unsigned nodes = AWG_BOUND_NODES;
    awg_iv rg = awg_frange(g, am, am->scores, &nodes);
    double mag = awg_iv_none(rg) ? 0 : fmax(-rg.lo, rg.hi);
    if (fp->peel == IR_NONE) fp->diff = mag * fp->cl > FLT_MAX;
    if (am->scores != am->mm1) {
        uint8_t *seen = ir_xcalloc(g->n, 1);
        unsigned budget = 4096;
        awg_conds(a, fp, am->scores, seen, &budget);
        free(seen);
    }
    LLVMValueRef sk = a->d.Sk;
    fp->always_clean =
        fp->ncond == 0 && LLVMIsAConstantInt(sk) && LLVMConstIntGetSExtValue(sk) % k->p.bn == 0;
}

/* The paired convert of two f32 to a 16-bit pair (lo in the low half), as i32. */
static LLVMValueRef awg_cvt2(cg_ctx *cx, LLVMValueRef lo, LLVMValueRef hi, ir_dtype dt) {
    LLVMValueRef ab[2] = {hi, lo}; /* cvt.rn.{bf16,f16}x2.f32 d, a, b: a in the upper half */
    LLVMValueRef v = cg_call_intrinsic(
        cx, dt == IR_BF16 ? "llvm.nvvm.ff2bf16x2.rn" : "llvm.nvvm.ff2f16x2.rn", false, ab, 2);
    return LLVMBuildBitCast(cx->b, v, cx->i32, "");
}

/* The two f32 values of a 16-bit pair r (i32, lo in the low half) of dtype dt. */
static void awg_unpack(cg_ctx *cx, LLVMValueRef r, ir_dtype dt, LLVMValueRef *lo,
                       LLVMValueRef *hi) {
    LLVMBuilderRef b = cx->b;
    if (dt == IR_BF16) {
        *lo = LLVMBuildBitCast(b, LLVMBuildShl(b, r, i32c(cx, 16), ""), cx->f32, "");
        *hi = LLVMBuildBitCast(b, LLVMBuildAnd(b, r, i32c(cx, (int64_t)0xffff0000u), ""), cx->f32,
                               "");
        return;
    }
    LLVMValueRef h2 =
        LLVMBuildBitCast(b, r, LLVMVectorType(LLVMHalfTypeInContext(cx->llctx), 2), "");
    *lo = LLVMBuildFPExt(b, LLVMBuildExtractElement(b, h2, i32c(cx, 0), ""), cx->f32, "");
    *hi = LLVMBuildFPExt(b, LLVMBuildExtractElement(b, h2, i32c(cx, 1), ""), cx->f32, "");
}

/* s[i], s[i + 1] (i even) rounded to the product's dtype: one paired convert, two unpacks; w[i/2]
 * gets the pair (i32), NULL when the dtype is not 16-bit. */
static void awg_round(attn_gen *a, const attn_wgk *k, LLVMValueRef *s, LLVMValueRef *w) {
    cg_ctx *cx = a->cx;
    ir_dtype dt = a->d.sdt;
    unsigned NS = (unsigned)k->p.bn / 2;
    for (unsigned i = 0; i < NS; i += 2) {
        if (dt != IR_BF16 && dt != IR_F16) {
            s[i] = cg_round_f32(cx, s[i], dt), s[i + 1] = cg_round_f32(cx, s[i + 1], dt);
            w[i / 2] = NULL;
            continue;
        }
        LLVMValueRef r = awg_cvt2(cx, s[i], s[i + 1], dt);
        w[i / 2] = r;
        awg_unpack(cx, r, dt, &s[i], &s[i + 1]);
    }
}

/* Whether the key tile at j0 (i64) needs no mask for this warpgroup's rows rw .. rw + 63 (i1):
 * every key before Sk and every position-only condition of F true over the tile. */
static LLVMValueRef awg_clean(attn_gen *a, const attn_wgk *k, LLVMValueRef rw, LLVMValueRef j0) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    const awg_fplan *fp = &k->fp;
    if (fp->always_clean) return LLVMConstInt(cx->i1, 1, 0);
    LLVMValueRef je = LLVMBuildAdd(b, j0, cg_i64(cx, k->p.bn), "");
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSLE, je, a->d.Sk, "");
    attn_tile t = {rw,
                   imin(cx, LLVMBuildAdd(b, rw, cg_i64(cx, 63), ""),
                        LLVMBuildSub(b, a->d.Sq, cg_i64(cx, 1), "")),
                   j0, LLVMBuildSub(b, je, cg_i64(cx, 1), "")};
    for (unsigned i = 0; i < fp->ncond; i++) {
        a->walk = ATTN_WALK_MAX;
        attn_iv v = iv_eval(a, fp->cond[i], &t, 0);
        if (v.top || v.kind != 2) return LLVMConstInt(cx->i1, 0, 0);
        ok = LLVMBuildAnd(b, ok, LLVMBuildNot(b, v.lo, ""), "");
    }
    return ok;
}

/* F' of the rounded products s (rows r0 + 8h of this thread, keys col0 + 8 (i/4) + i%2) in
 * place; `clean`: the tile needs no mask (F's position-only conditions read true, no key-bound
 * mask), else keys past Sk read -inf. */
static void awg_scores(attn_gen *a, const attn_wgk *k, LLVMValueRef *s, LLVMValueRef r0,
                       LLVMValueRef col0, bool clean) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    const awg_fplan *fp = &k->fp;
    unsigned NS = (unsigned)k->p.bn / 2;
    if (clean)
        for (unsigned c = 0; c < fp->ncond; c++)
            cx->subst[fp->cond[c]] = LLVMConstInt(cx->i1, 1, 0);
    /* the key-bound mask as one i32 per tile: key col0 + o is live when o < lim */
    LLVMValueRef lim = NULL;
    if (!clean) {
        LLVMValueRef r = imin(cx, imax(cx, LLVMBuildSub(b, a->d.Sk, col0, ""), cg_i64(cx, 0)),
                              cg_i64(cx, k->p.bn));
        lim = LLVMBuildTrunc(b, r, cx->i32, "lim");
    }
    for (unsigned i = 0; i < NS; i++) {
        LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, 8 * ((i / 2) % 2)), "");
        LLVMValueRef col = LLVMBuildAdd(b, col0, cg_i64(cx, 8 * (i / 4) + i % 2), "");
        if (fp->peel != IR_NONE) cx->subst[fp->peel] = s[i];
        LLVMValueRef v = score_f(a, s[i], row, col);
        if (fp->peel != IR_NONE) cx->subst[fp->peel] = NULL;
        while (LLVMIsASelectInst(v) && LLVMIsAConstantInt(LLVMGetOperand(v, 0)))
            v = LLVMGetOperand(v, LLVMConstIntGetZExtValue(LLVMGetOperand(v, 0)) ? 1 : 2);
        if (!clean)
            v = LLVMBuildSelect(
                b, LLVMBuildICmp(b, LLVMIntSLT, i32c(cx, 8 * (i / 4) + i % 2), lim, ""), v,
                cg_f32c(cx, -INFINITY), "");
        s[i] = v;
    }
    for (unsigned c = 0; c < fp->ncond; c++) cx->subst[fp->cond[c]] = NULL;
}

/* The max (or the sum) of v[0..n) as a balanced tree (any n >= 1: an odd level's last value
 * moves up as it is). */
static LLVMValueRef awg_tree(cg_ctx *cx, LLVMValueRef *v, unsigned n, bool max) {
    for (; n > 1; n = (n + 1) / 2) {
        for (unsigned i = 0; i < n / 2; i++)
            v[i] = max ? fmaxnum(cx, v[2 * i], v[2 * i + 1]) : fadd(cx, v[2 * i], v[2 * i + 1]);
        if (n % 2) v[n / 2] = v[n - 1];
    }
    return v[0];
}

static LLVMValueRef awg_ex2(cg_ctx *cx, LLVMValueRef x) {
    return cg_call_intrinsic(cx, "llvm.nvvm.ex2.approx.ftz.f", false, &x, 1);
}

/* 2^y on the FMA pipe instead of the MUFU one (y <= 2^7; -inf gives 0): y clamped to -126, j =
 * rint(y) by the 1.5 2^23 shift, 2^(y - j) by a cubic (relative error below 8e-5, fitted on
 * [-0.5, 0.5]: P is rounded to 16 bits after it), times 2^j by adding j to the exponent bits. */
static LLVMValueRef awg_ex2_poly(cg_ctx *cx, LLVMValueRef y) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef y1 = fmaxnum(cx, y, cg_f32c(cx, -126.0f));
    LLVMValueRef t = LLVMBuildFAdd(b, y1, cg_f32c(cx, 12582912.0f), "");
    LLVMValueRef f = LLVMBuildFSub(b, y1, LLVMBuildFSub(b, t, cg_f32c(cx, 12582912.0f), ""), "");
    static const float c[4] = {0.99992895f, 0.69327623f, 0.24260405f, 0.05508868f};
    LLVMValueRef p = cg_f32c(cx, c[3]);
    for (int i = 2; i >= 0; i--) {
        LLVMValueRef fa[3] = {p, f, cg_f32c(cx, c[i])};
        p = cg_call_intrinsic(cx, "llvm.fma", true, fa, 3);
    }
    LLVMValueRef e = LLVMBuildShl(b, LLVMBuildBitCast(b, t, cx->i32, ""), i32c(cx, 23), "");
    LLVMValueRef r = LLVMBuildBitCast(
        b, LLVMBuildAdd(b, LLVMBuildBitCast(b, p, cx->i32, ""), e, ""), cx->f32, "");
    LLVMValueRef live = LLVMBuildFCmp(b, LLVMRealOGT, y, cg_f32c(cx, -INFINITY), "");
    return LLVMBuildSelect(b, live, r, cg_f32c(cx, 0), "");
}

/* This thread's max of F' over each of its two rows (mx[h], before the quad's shuffles) from
 * the scores s; when F' left every rounded product x as it was (s[i] == x[i]: a plain or peeled
 * scale in a clean tile), from their 16-bit pairs w with max.bf16x2 / max.f16x2 (half the
 * instructions: a 16-bit max of rounded values is exact). */
static void awg_rowmax(attn_gen *a, const attn_wgk *k, LLVMValueRef *s, const LLVMValueRef *x,
                       const LLVMValueRef *w, bool branch, LLVMValueRef *mx) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2;
    /* (the pipelined loop with a clean/masked branch has no registers for the pairs as well) */
    bool same = w[0] != NULL && (!branch || !k->pipe);
    for (unsigned i = 0; i < NS && same; i++) same = s[i] == x[i];
    LLVMValueRef rv[2][64];
    if (!same) {
        for (unsigned i = 0; i < NS; i++) rv[(i / 2) % 2][(i / 4) * 2 + i % 2] = s[i];
        for (int h = 0; h < 2; h++) mx[h] = awg_tree(cx, rv[h], NS / 2, true);
        return;
    }
    bool bf = a->d.sdt == IR_BF16;
    LLVMTypeRef v2 = LLVMVectorType(
        bf ? LLVMBFloatTypeInContext(cx->llctx) : LLVMHalfTypeInContext(cx->llctx), 2);
    for (unsigned p = 0; p < NS / 2; p++) rv[p % 2][p / 2] = LLVMBuildBitCast(b, w[p], v2, "");
    for (int h = 0; h < 2; h++) {
        unsigned n = NS / 4;
        for (; n > 1; n = (n + 1) / 2) {
            for (unsigned i = 0; i < n / 2; i++) {
                LLVMValueRef ab[2] = {rv[h][2 * i], rv[h][2 * i + 1]};
                rv[h][i] = cg_call_intrinsic(
                    cx, bf ? "llvm.nvvm.fmax.bf16x2" : "llvm.nvvm.fmax.f16x2", false, ab, 2);
            }
            if (n % 2) rv[h][n / 2] = rv[h][n - 1];
        }
        LLVMValueRef e[2];
        for (unsigned j = 0; j < 2; j++)
            e[j] = LLVMBuildFPExt(b, LLVMBuildExtractElement(b, rv[h][0], i32c(cx, j), ""), cx->f32,
                                  "");
        mx[h] = fmaxnum(cx, e[0], e[1]);
    }
}

/* The online softmax of a tile's F' values s with this thread's row maxima rmx[2] (before the
 * quad's shuffles): the running max mv moves when a row's max grew by more than
 * AWG_RESCALE_LOG2 (alpha[h] its rescale, else 1); s becomes exp(F - m) in place. */
static void awg_exps(attn_gen *a, const attn_wgk *k, LLVMValueRef *s, const LLVMValueRef *rmx,
                     LLVMValueRef *mv, LLVMValueRef *alpha) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2;
    LLVMValueRef cl = cg_f32c(cx, k->fp.cl), bias[2], msafe[2];
    for (int h = 0; h < 2; h++) {
        LLVMValueRef mx = rmx[h];
        mx = fmaxnum(cx, mx, cg_shfl_xor(cx, mx, 1));
        mx = fmaxnum(cx, mx, cg_shfl_xor(cx, mx, 2));
        /* the running max moves only when the tile's max exceeds it by more than
         * AWG_RESCALE_LOG2 in exp2 units (or it is -inf): else alpha is 1 and P <= 2^that */
        LLVMValueRef mo = ld(cx, mv[h]), mn = fmaxnum(cx, mo, mx);
        LLVMValueRef grow =
            LLVMBuildFCmp(b, LLVMRealOGT, fmul(cx, LLVMBuildFSub(b, mn, mo, ""), cl),
                          cg_f32c(cx, AWG_RESCALE_LOG2), "grow");
        LLVMValueRef mu = LLVMBuildSelect(b, grow, mn, mo, "");
        LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, mu, cg_f32c(cx, -INFINITY), "");
        msafe[h] = LLVMBuildSelect(b, ninf, cg_f32c(cx, 0), mu, "");
        alpha[h] =
            LLVMBuildSelect(b, grow, awg_ex2(cx, fmul(cx, LLVMBuildFSub(b, mo, msafe[h], ""), cl)),
                            cg_f32c(cx, 1), "alpha");
        st(cx, mu, mv[h]);
        bias[h] = k->fp.diff ? NULL : LLVMBuildFNeg(b, fmul(cx, msafe[h], cl), "");
    }
    for (unsigned i = 0; i < NS; i++) {
        unsigned h = (i / 2) % 2;
        LLVMValueRef fa[3] = {s[i], cl, bias[h]};
        LLVMValueRef y = k->fp.diff ? fmul(cx, LLVMBuildFSub(b, s[i], msafe[h], ""), cl)
                                    : cg_call_intrinsic(cx, "llvm.fma", true, fa, 3);
        s[i] = k->poly && i % (unsigned)k->poly == (unsigned)k->poly - 1 ? awg_ex2_poly(cx, y)
                                                                         : awg_ex2(cx, y);
    }
}

/* awg_exps for a clean tile whose F' values are the rounded products themselves (their pairs
 * w), speculating that no row's max grows past AWG_RESCALE_LOG2 (after the first tiles nearly
 * always): the exponents against the running max start at once, beside the max tree and the
 * quad's shuffles instead of after them; when any row of the warp grew (vote.any), the scores
 * are unpacked again from w and take awg_exps. The same values as awg_exps either way
 * (TX_ATTN_SPEC=1, for measurement). */
static void awg_exps_spec(attn_gen *a, const attn_wgk *k, LLVMValueRef *s, const LLVMValueRef *w,
                          const LLVMValueRef *rmx, LLVMValueRef *mv, LLVMValueRef *alpha) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2;
    LLVMValueRef cl = cg_f32c(cx, k->fp.cl), bias[2], grow[2], e[128];
    for (int h = 0; h < 2; h++) {
        LLVMValueRef mo = ld(cx, mv[h]);
        LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, mo, cg_f32c(cx, -INFINITY), "");
        bias[h] =
            LLVMBuildFNeg(b, fmul(cx, LLVMBuildSelect(b, ninf, cg_f32c(cx, 0), mo, ""), cl), "");
        LLVMValueRef mx = rmx[h];
        mx = fmaxnum(cx, mx, cg_shfl_xor(cx, mx, 1));
        mx = fmaxnum(cx, mx, cg_shfl_xor(cx, mx, 2));
        grow[h] = LLVMBuildFCmp(b, LLVMRealOGT,
                                fmul(cx, LLVMBuildFSub(b, fmaxnum(cx, mo, mx), mo, ""), cl),
                                cg_f32c(cx, AWG_RESCALE_LOG2), "");
    }
    for (unsigned i = 0; i < NS; i++) {
        LLVMValueRef fa[3] = {s[i], cl, bias[(i / 2) % 2]};
        e[i] = awg_ex2(cx, cg_call_intrinsic(cx, "llvm.fma", true, fa, 3));
    }
    LLVMValueRef va[2] = {cg_i32(cx, -1), LLVMBuildOr(b, grow[0], grow[1], "")};
    LLVMValueRef any = cg_call_intrinsic(cx, "llvm.nvvm.vote.any.sync", false, va, 2);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef bs = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "regrow");
    LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "exped");
    LLVMBuildCondBr(b, any, bs, bj);
    LLVMPositionBuilderAtEnd(b, bs);
    LLVMValueRef sf[128], af[2];
    for (unsigned i = 0; i < NS; i += 2) { /* fresh values: s itself need not stay live */
        LLVMValueRef r = w[i / 2];
        r = cg_wg_asm(cx, cx->i32, "mov.b32 $0, $1;", "=r,r", &r, 1);
        awg_unpack(cx, r, a->d.sdt, &sf[i], &sf[i + 1]);
    }
    awg_exps(a, k, sf, rmx, mv, af);
    LLVMBasicBlockRef es = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, bj);
    LLVMPositionBuilderAtEnd(b, bj);
    LLVMBasicBlockRef bb[2] = {es, from};
    for (unsigned i = 0; i < NS + 2; i++) {
        LLVMValueRef ph = LLVMBuildPhi(b, cx->f32, "");
        LLVMValueRef in[2] = {i < NS ? sf[i] : af[i - NS], i < NS ? e[i] : cg_f32c(cx, 1)};
        LLVMAddIncoming(ph, in, bb, 2);
        if (i < NS)
            s[i] = ph;
        else
            alpha[i - NS] = ph;
    }
}

/* Which copy of the score arithmetic a key tile takes: chosen per tile (awg_clean), or known. */
enum { AWG_DECIDE = -1, AWG_MASKED = 0, AWG_CLEAN = 1 };

/* F, the masks and the online softmax of one key tile's scores s (rows r0 + 8h of this thread,
 * keys j0 + c0 + 8 (i/4) + i%2; rw: the warpgroup's first row; want: AWG_DECIDE or the copy the
 * caller knows the tile needs): s becomes exp(F - m) in place, the running max mv (of F') and
 * sum lv are updated, alpha[2] gets the rescale factors. */
static void awg_softmax(attn_gen *a, const attn_wgk *k, LLVMValueRef *s, LLVMValueRef r0,
                        LLVMValueRef rw, LLVMValueRef c0, LLVMValueRef j0, int want,
                        LLVMValueRef *mv, LLVMValueRef *lv, LLVMValueRef *alpha) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2;
    LLVMValueRef w[64], x[128], rmx[2];
    awg_round(a, k, s, w);
    memcpy(x, s, NS * sizeof *s);
    LLVMValueRef col0 = LLVMBuildAdd(b, j0, c0, "");
    LLVMValueRef clean =
        want == AWG_DECIDE ? awg_clean(a, k, rw, j0) : LLVMConstInt(cx->i1, want == AWG_CLEAN, 0);
    bool spec = false; /* awg_exps_spec: a clean tile of the steady loop, F' the products */
    if (LLVMIsAConstantInt(clean)) {
        bool c = LLVMConstIntGetZExtValue(clean) != 0;
        awg_scores(a, k, s, r0, col0, c);
        awg_rowmax(a, k, s, x, w, false, rmx);
        spec = k->spec && !k->fp.diff && want == AWG_CLEAN && c && w[0] != NULL;
        for (unsigned i = 0; i < NS && spec; i++) spec = s[i] == x[i];
    } else {
        LLVMValueRef sc[128], sm[128], mc[2], mm[2];
        memcpy(sc, s, NS * sizeof *s), memcpy(sm, s, NS * sizeof *s);
        LLVMBasicBlockRef bc = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "clean");
        LLVMBasicBlockRef bm = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "masked");
        LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "scored");
        LLVMBuildCondBr(b, clean, bc, bm);
        LLVMPositionBuilderAtEnd(b, bc);
        awg_scores(a, k, sc, r0, col0, true);
        awg_rowmax(a, k, sc, x, w, true, mc);
        LLVMBasicBlockRef ec = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, bj);
        LLVMPositionBuilderAtEnd(b, bm);
        awg_scores(a, k, sm, r0, col0, false);
        awg_rowmax(a, k, sm, x, w, true, mm);
        LLVMBasicBlockRef em = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, bj);
        LLVMPositionBuilderAtEnd(b, bj);
        LLVMBasicBlockRef from[2] = {ec, em};
        for (unsigned i = 0; i < NS + 2; i++) {
            LLVMValueRef ph = LLVMBuildPhi(b, cx->f32, "");
            LLVMValueRef in[2] = {i < NS ? sc[i] : mc[i - NS], i < NS ? sm[i] : mm[i - NS]};
            LLVMAddIncoming(ph, in, from, 2);
            if (i < NS)
                s[i] = ph;
            else
                rmx[i - NS] = ph;
        }
    }
    if (spec)
        awg_exps_spec(a, k, s, w, rmx, mv, alpha);
    else
        awg_exps(a, k, s, rmx, mv, alpha);
    if (k->ones) return; /* the row sums come from the tensor cores (awg_issue_pv) */
    LLVMValueRef rv[2][64];
    for (unsigned i = 0; i < NS; i++) rv[(i / 2) % 2][(i / 4) * 2 + i % 2] = s[i];
    for (int h = 0; h < 2; h++) {
        LLVMValueRef ps = awg_tree(cx, rv[h], NS / 2, false);
        st(cx, fadd(cx, fmul(cx, ld(cx, lv[h]), alpha[h]), ps), lv[h]);
    }
}

/* o[0..n) *= alpha[(i / 2) % 2] (the rows of accumulator i), skipped by the whole warp when
 * every alpha of its rows is 1. */
static void awg_rescale(cg_ctx *cx, LLVMValueRef *o, unsigned n, const LLVMValueRef *alpha) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef one = cg_f32c(cx, 1);
    LLVMValueRef ch = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealUNE, alpha[0], one, ""),
                                  LLVMBuildFCmp(b, LLVMRealUNE, alpha[1], one, ""), "");
    LLVMValueRef va[2] = {cg_i32(cx, -1), ch};
    LLVMValueRef any = cg_call_intrinsic(cx, "llvm.nvvm.vote.any.sync", false, va, 2);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef bs = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "rescale");
    LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "rescaled");
    LLVMBuildCondBr(b, any, bs, bj);
    LLVMPositionBuilderAtEnd(b, bs);
    LLVMValueRef m[256];
    for (unsigned i = 0; i < n; i++) m[i] = fmul(cx, o[i], alpha[(i / 2) % 2]);
    LLVMBuildBr(b, bj);
    LLVMPositionBuilderAtEnd(b, bj);
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef ph = LLVMBuildPhi(b, cx->f32, "");
        LLVMValueRef in[2] = {m[i], o[i]};
        LLVMBasicBlockRef bb[2] = {bs, from};
        LLVMAddIncoming(ph, in, bb, 2);
        o[i] = ph;
    }
}

/* P's A fragments pf[0..4 bn/16) (16-bit pairs, one paired convert each) from the exponentiated
 * scores s. */
static void awg_pack(attn_gen *a, const attn_wgk *k, const LLVMValueRef *s, LLVMValueRef *pf) {
    for (unsigned kk = 0; kk < (unsigned)k->p.bn / 16; kk++)
        for (unsigned r = 0; r < 4; r++) {
            unsigned lo, hi;
            cg_attn_wg_pfrag(kk, r, &lo, &hi);
            pf[4 * kk + r] = awg_cvt2(a->cx, s[lo], s[hi], a->d.cdt);
        }
}

/* Ping-pong of the consumer warpgroups (TX_ATTN_PINGPONG): named barrier 1 + c is warpgroup c's
 * turn to issue its GEMMs; the turns go round 0, 1, .., nwg - 1. Before issuing, c waits for its
 * turn (bar.sync, 256 threads: its 128 and the previous warpgroup's 128 arrivals); after
 * issuing it hands the turn to the next (bar.arrive 1 + (c + 1) mod nwg), so one warpgroup's
 * softmax runs while another's GEMMs hold the tensor cores. The last warpgroup arrives once on
 * barrier 1 at the start (warpgroup 0 goes first) and warpgroup 0 takes that last turn after
 * its work (every arrival is matched). */
static void awg_turn_wait(cg_ctx *cx, const attn_wgk *k, LLVMValueRef wgc) {
    if (!k->pingpong) return;
    LLVMValueRef id = LLVMBuildAdd(cx->b, wgc, i32c(cx, 1), "");
    cg_wg_asm(cx, NULL, "bar.sync $0, 256;", "r,~{memory}", &id, 1);
}
static void awg_turn_pass(cg_ctx *cx, const attn_wgk *k, LLVMValueRef wgc) {
    if (!k->pingpong) return;
    LLVMValueRef id = LLVMBuildAdd(
        cx->b,
        LLVMBuildURem(cx->b, LLVMBuildAdd(cx->b, wgc, i32c(cx, 1), ""), i32c(cx, k->p.nwg), ""),
        i32c(cx, 1), "");
    cg_wg_asm(cx, NULL, "bar.arrive $0, 256;", "r,~{memory}", &id, 1);
}

/* One step of awg_keys' steady state at key tile j0 (want: awg_softmax's): issue S_j = Q K_j
 * and O += P_{j-1} V_{j-1}, wait for S_j, free K_j, softmax (P_j, alpha_j) under the product,
 * wait for it, free V_{j-1}, O *= alpha_j. */
static void awg_step(attn_gen *a, const attn_wgk *k, LLVMValueRef sq, LLVMValueRef r0,
                     LLVMValueRef rw, LLVMValueRef c0, LLVMValueRef j0, int want, LLVMValueRef *ov,
                     LLVMValueRef *pv, LLVMValueRef *mv, LLVMValueRef *lv, LLVMValueRef itv,
                     LLVMValueRef wgc) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2, NP = (unsigned)k->p.bn / 4;
    unsigned NO = (unsigned)k->p.d / 2 + (k->ones ? 4 : 0); /* O (and L) */
    LLVMValueRef s[128], o[264], pf[64], alpha[2], st_, par;
    char tied[2048];
    cg_wg_tied(tied, sizeof tied, NS, "");
    LLVMValueRef it = LLVMBuildLoad2(b, cx->i32, itv, "");
    LLVMValueRef ps, ppar;
    awg_stage(cx, k, it, &st_, &par);
    awg_stage(cx, k, LLVMBuildSub(b, it, i32c(cx, 1), ""), &ps, &ppar);
    cg_wg_wait(cx, awg_sbar(cx, k, st_, AWG_KFULL), par);
    cg_wg_wait(cx, awg_sbar(cx, k, ps, AWG_VFULL), ppar);
    for (unsigned i = 0; i < NO; i++) o[i] = ld(cx, ov[i]);
    for (unsigned i = 0; i < NS; i++) o[NO + i] = cg_f32c(cx, 0); /* S's zeros */
    for (unsigned i = 0; i < NP; i++) pf[i] = LLVMBuildLoad2(b, cx->i32, pv[i], "");
    awg_turn_wait(cx, k, wgc);
    awg_tied_asm(cx, "wgmma.fence.sync.aligned;", o, NO + NS, pf, NP);
    for (unsigned i = 0; i < NS; i++) s[i] = o[NO + i];
    awg_issue_qk(a, k, sq, awg_kv(cx, k, st_, 0), s);
    awg_issue_pv(a, k, awg_kv(cx, k, ps, 1), pf, o);
    awg_turn_pass(cx, k, wgc);
    cg_wg_acc_asm(cx, s, NS, "wgmma.wait_group.sync.aligned 1;", tied, NULL, 0);
    awg_arrive(cx, awg_sbar(cx, k, st_, AWG_KEMPTY));
    /* the softmax runs under the product; P's registers (the product's A operand) are written
     * only after it completes: the exponentiated scores pass through the wait */
    awg_softmax(a, k, s, r0, rw, c0, j0, want, mv, lv, alpha);
    for (unsigned i = 0; i < NS; i++) o[NO + i] = s[i];
    awg_tied_asm(cx, "wgmma.wait_group.sync.aligned 0;", o, NO + NS, NULL, 0);
    LLVMValueRef pn[64];
    awg_pack(a, k, o + NO, pn);
    awg_arrive(cx, awg_sbar(cx, k, ps, AWG_VEMPTY));
    awg_rescale(cx, o, NO, alpha);
    for (unsigned i = 0; i < NO; i++) st(cx, o[i], ov[i]);
    for (unsigned i = 0; i < NP; i++) LLVMBuildStore(b, pn[i], pv[i]);
    LLVMBuildStore(b, LLVMBuildAdd(b, it, i32c(cx, 1), ""), itv);
}

/* The key loop of a consumer warpgroup over [kb, ke), software-pipelined so that the softmax
 * of tile j runs while the tensor cores compute P_{j-1} V_{j-1}: the first tile's S and
 * softmax; then per tile: issue S_j = Q K_j and O += P_{j-1} V_{j-1}, wait for S_j, softmax
 * (P_j, alpha_j), wait for the product, free stage j-1, O *= alpha_j; finally O += P V of the
 * last tile. ov / pv / mv / lv / itv: the O, P, max, sum and ring-step variables. */
static void awg_keys(attn_gen *a, const attn_wgk *k, LLVMValueRef sq, LLVMValueRef r0,
                     LLVMValueRef rw, LLVMValueRef c0, LLVMValueRef kb, LLVMValueRef ke,
                     LLVMValueRef *ov, LLVMValueRef *pv, LLVMValueRef *mv, LLVMValueRef *lv,
                     LLVMValueRef itv, LLVMValueRef wgc) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2, NP = (unsigned)k->p.bn / 4;
    unsigned NO = (unsigned)k->p.d / 2 + (k->ones ? 4 : 0); /* O (and L) */
    LLVMValueRef s[128], o[264], pf[64], alpha[2], st_, par;
    char tied[2048];
    cg_wg_tied(tied, sizeof tied, NS, "");
    LLVMBasicBlockRef any = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, kb, ke, ""));
    /* the first tile */
    LLVMValueRef it = LLVMBuildLoad2(b, cx->i32, itv, "");
    awg_stage(cx, k, it, &st_, &par);
    cg_wg_wait(cx, awg_sbar(cx, k, st_, AWG_KFULL), par);
    for (unsigned i = 0; i < NS; i++) s[i] = cg_f32c(cx, 0);
    awg_turn_wait(cx, k, wgc);
    awg_tied_asm(cx, "wgmma.fence.sync.aligned;", s, NS, NULL, 0);
    awg_issue_qk(a, k, sq, awg_kv(cx, k, st_, 0), s);
    awg_turn_pass(cx, k, wgc);
    cg_wg_acc_asm(cx, s, NS, "wgmma.wait_group.sync.aligned 0;", tied, NULL, 0);
    awg_arrive(cx, awg_sbar(cx, k, st_, AWG_KEMPTY));
    awg_softmax(a, k, s, r0, rw, c0, kb, AWG_DECIDE, mv, lv, alpha);
    awg_pack(a, k, s, pf);
    for (unsigned i = 0; i < NP; i++) LLVMBuildStore(b, pf[i], pv[i]);
    LLVMBuildStore(b, LLVMBuildAdd(b, it, i32c(cx, 1), ""), itv);
    /* the steady state: with F's only mask the key bound (no position-only condition), every
     * tile but a partial last one is clean: a loop over those without the per-tile branch, then
     * the last one masked */
    LLVMValueRef bn = cg_i64(cx, k->p.bn), kc = ke;
    bool split = k->fp.ncond == 0 && !k->fp.always_clean;
    if (split)
        kc = LLVMBuildAdd(
            b, kb, LLVMBuildMul(b, LLVMBuildSDiv(b, LLVMBuildSub(b, ke, kb, ""), bn, ""), bn, ""),
            "kc");
    cg_loop jl;
    LLVMValueRef j0 = cg_loop_begin(cx, &jl, LLVMBuildAdd(b, kb, bn, ""), kc, bn, "cj");
    int want = split || k->fp.always_clean ? AWG_CLEAN : AWG_DECIDE;
    awg_step(a, k, sq, r0, rw, c0, j0, want, ov, pv, mv, lv, itv, wgc);
    cg_loop_end(cx, &jl);
    if (split) {
        LLVMValueRef last = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGT, kc, kb, ""),
                                         LLVMBuildICmp(b, LLVMIntSLT, kc, ke, ""), "");
        LLVMBasicBlockRef e = cg_if_begin(cx, last);
        awg_step(a, k, sq, r0, rw, c0, kc, AWG_MASKED, ov, pv, mv, lv, itv, wgc);
        cg_if_end(cx, e);
    }
    /* the last tile's product */
    LLVMValueRef ps, ppar;
    it = LLVMBuildLoad2(b, cx->i32, itv, "");
    awg_stage(cx, k, LLVMBuildSub(b, it, i32c(cx, 1), ""), &ps, &ppar);
    cg_wg_wait(cx, awg_sbar(cx, k, ps, AWG_VFULL), ppar);
    for (unsigned i = 0; i < NO; i++) o[i] = ld(cx, ov[i]);
    for (unsigned i = 0; i < NP; i++) pf[i] = LLVMBuildLoad2(b, cx->i32, pv[i], "");
    awg_turn_wait(cx, k, wgc);
    awg_tied_asm(cx, "wgmma.fence.sync.aligned;", o, NO, pf, NP);
    awg_issue_pv(a, k, awg_kv(cx, k, ps, 1), pf, o);
    awg_turn_pass(cx, k, wgc);
    awg_tied_asm(cx, "wgmma.wait_group.sync.aligned 0;", o, NO, NULL, 0);
    awg_arrive(cx, awg_sbar(cx, k, ps, AWG_VEMPTY));
    for (unsigned i = 0; i < NO; i++) st(cx, o[i], ov[i]);
    cg_if_end(cx, any);
}

/* The unpipelined key loop (TX_ATTN_PIPELINE=0; what pipelining buys is measured against it): per
 * tile S = Q K_j, wait, softmax, O *= alpha, O += P V_j, wait, free the stage. */
static void awg_keys_plain(attn_gen *a, const attn_wgk *k, LLVMValueRef sq, LLVMValueRef r0,
                           LLVMValueRef rw, LLVMValueRef c0, LLVMValueRef kb, LLVMValueRef ke,
                           LLVMValueRef *ov, LLVMValueRef *mv, LLVMValueRef *lv, LLVMValueRef itv) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    unsigned NS = (unsigned)k->p.bn / 2, NO = (unsigned)k->p.d / 2, NP = (unsigned)k->p.bn / 4;
    LLVMValueRef s[128], o[128], pf[64], alpha[2], st_, par;
    char tied[2048];
    cg_wg_tied(tied, sizeof tied, NS, "");
    cg_loop jl;
    LLVMValueRef j0 = cg_loop_begin(cx, &jl, kb, ke, cg_i64(cx, k->p.bn), "cj");
    LLVMValueRef it = LLVMBuildLoad2(b, cx->i32, itv, "");
    awg_stage(cx, k, it, &st_, &par);
    cg_wg_wait(cx, awg_sbar(cx, k, st_, AWG_KFULL), par);
    for (unsigned i = 0; i < NS; i++) s[i] = cg_f32c(cx, 0);
    awg_tied_asm(cx, "wgmma.fence.sync.aligned;", s, NS, NULL, 0);
    awg_issue_qk(a, k, sq, awg_kv(cx, k, st_, 0), s);
    cg_wg_acc_asm(cx, s, NS, "wgmma.wait_group.sync.aligned 0;", tied, NULL, 0);
    awg_arrive(cx, awg_sbar(cx, k, st_, AWG_KEMPTY));
    awg_softmax(a, k, s, r0, rw, c0, j0, AWG_DECIDE, mv, lv, alpha);
    awg_pack(a, k, s, pf);
    for (unsigned i = 0; i < NO; i++) o[i] = ld(cx, ov[i]);
    awg_rescale(cx, o, NO, alpha);
    cg_wg_wait(cx, awg_sbar(cx, k, st_, AWG_VFULL), par);
    awg_tied_asm(cx, "wgmma.fence.sync.aligned;", o, NO, pf, NP);
    awg_issue_pv(a, k, awg_kv(cx, k, st_, 1), pf, o);
    awg_tied_asm(cx, "wgmma.wait_group.sync.aligned 0;", o, NO, NULL, 0);
    awg_arrive(cx, awg_sbar(cx, k, st_, AWG_VEMPTY));
    for (unsigned i = 0; i < NO; i++) st(cx, o[i], ov[i]);
    LLVMBuildStore(b, LLVMBuildAdd(b, it, i32c(cx, 1), ""), itv);
    cg_loop_end(cx, &jl);
}

/* Whether the region's one output is the product itself in the operands' 16-bit dtype: then
 * awg_store writes two adjacent columns as one 32-bit word of one paired convert (the bits
 * cg_mm_epi_store would store: the product rounded to its dtype, stored as it is). */
static bool awg_pair_store(const attn_gen *a) {
    const cg_attn_desc *d = &a->d;
    const cg_mm_epi_state *es = d->user;
    pass_view_strides st;
    return d->epi == cg_mm_epi_store && es->nmm == 1 && es->nouts == 1 &&
           es->outs[0] == a->am->mm2 && a->cx->g->nodes[a->am->mm2].dtype == d->cdt &&
           cg_buf_ptr(a->cx, a->am->mm2) && d->dvmax % 2 == 0 &&
           (!cg_home_strides(a->cx, a->am->mm2, &st) || st.inner);
}

/* Stores this thread's normalised O values o[0..d/2) (rows r0 + 8h, columns c0 + 8 (i/4) + i%2)
 * through the region's epilogue, rows past Sq skipped: pairs of columns as 32-bit words when
 * awg_pair_store holds and the output is 4-byte aligned, else element by element. */
static bool awg_store(attn_gen *a, const attn_wgk *k, const LLVMValueRef *o, LLVMValueRef r0,
                      LLVMValueRef c0) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    const cg_attn_desc *d = &a->d;
    unsigned NO = (unsigned)k->p.d / 2;
    LLVMBasicBlockRef join = NULL;
    if (awg_pair_store(a)) {
        ir_id m2 = a->am->mm2;
        const ir_node *mn = &cx->g->nodes[m2];
        LLVMValueRef base = cg_buf_ptr(cx, m2);
        LLVMValueRef al = LLVMBuildICmp(
            b, LLVMIntEQ,
            LLVMBuildAnd(b, LLVMBuildPtrToInt(b, base, cx->i64, ""), cg_i64(cx, 3), ""),
            cg_i64(cx, 0), "");
        LLVMBasicBlockRef pw = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "pairs");
        LLVMBasicBlockRef el = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "elems");
        join = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "stored");
        LLVMBuildCondBr(b, al, pw, el);
        LLVMPositionBuilderAtEnd(b, pw);
        for (unsigned i = 0; i < NO; i += 2) {
            LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, 8 * ((i / 2) % 2)), "");
            LLVMValueRef col = LLVMBuildAdd(b, c0, cg_i64(cx, 8 * (i / 4)), "");
            LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, row, d->Sq, "");
            if (k->p.d != d->dvmax) /* padded head dim: columns past Dv are not stored */
                in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSLT, col, d->Dv, ""), "");
            LLVMBasicBlockRef e = cg_if_begin(cx, in);
            LLVMValueRef dims[IR_MAX_RANK];
            for (unsigned j = 0; j < d->nb; j++) dims[j] = a->bidx[j];
            dims[d->nb] = row, dims[d->nb + 1] = col;
            cg_index idx = cg_index_from_dims(cx, &mn->shape, dims);
            LLVMValueRef lin = cg_home_lin(cx, m2, &idx);
            LLVMValueRef p = LLVMBuildInBoundsGEP2(b, cx->i16, base, &lin, 1, "");
            LLVMValueRef s = LLVMBuildStore(b, awg_cvt2(cx, o[i], o[i + 1], d->cdt), p);
            LLVMSetAlignment(s, 4);
            cg_if_end(cx, e);
        }
        LLVMBuildBr(b, join);
        LLVMPositionBuilderAtEnd(b, el);
    }
    bool ok = true;
    for (unsigned i = 0; i < NO && ok; i++) {
        LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, 8 * ((i / 2) % 2)), "");
        LLVMValueRef col = LLVMBuildAdd(b, c0, cg_i64(cx, 8 * (i / 4) + i % 2), "");
        LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, row, d->Sq, ""),
                                       LLVMBuildICmp(b, LLVMIntSLT, col, d->Dv, ""), "");
        LLVMBasicBlockRef e = cg_if_begin(cx, in);
        LLVMValueRef ovl = o[i];
        ok = d->epi(d->user, cx, &ovl, a->bidx, row, col);
        cg_if_end(cx, e);
    }
    if (join) {
        LLVMBuildBr(b, join);
        LLVMPositionBuilderAtEnd(b, join);
    }
    return ok;
}

/* A consumer warpgroup (rows 64 wgc .. 64 wgc + 63 of each work tile). */
static bool awg_consumer(attn_gen *a, attn_wgk *k, LLVMValueRef cta, LLVMValueRef ncta,
                         LLVMValueRef wgc, LLVMValueRef wtid) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    const cg_attn_desc *d = &a->d;
    unsigned NO = (unsigned)k->p.d / 2, NA = NO + (k->ones ? 4 : 0); /* O (and L) */
    LLVMValueRef ov[132], pv[64], mv[2], lv[2];
    for (unsigned i = 0; i < NA; i++) ov[i] = cg_var(cx, cg_f32c(cx, 0));
    for (int i = 0; i < k->p.bn / 4; i++) pv[i] = cg_var(cx, i32c(cx, 0));
    for (int h = 0; h < 2; h++)
        mv[h] = cg_var(cx, cg_f32c(cx, -INFINITY)), lv[h] = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef itv = cg_var(cx, i32c(cx, 0)), qtv = cg_var(cx, i32c(cx, 0));
    LLVMValueRef warp = LLVMBuildUDiv(b, wtid, i32c(cx, 32), ""),
                 lane = LLVMBuildURem(b, wtid, i32c(cx, 32), "");
    LLVMValueRef rin = LLVMBuildAdd(b,
                                    LLVMBuildAdd(b, LLVMBuildMul(b, wgc, i32c(cx, 64), ""),
                                                 LLVMBuildMul(b, warp, i32c(cx, 16), ""), ""),
                                    LLVMBuildUDiv(b, lane, i32c(cx, 4), ""), "");
    LLVMValueRef c0 = LLVMBuildZExt(
        b, LLVMBuildMul(b, LLVMBuildURem(b, lane, i32c(cx, 4), ""), i32c(cx, 2), ""), cx->i64, "");
    LLVMValueRef wrows = LLVMBuildMul(b, wgc, i32c(cx, 64 * 128), ""); /* in each Q box */
    LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, wgc, i32c(cx, 0), "");
    if (k->pingpong) { /* warpgroup 0 takes the first turn */
        LLVMBasicBlockRef j =
            cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, wgc, i32c(cx, k->p.nwg - 1), ""));
        awg_turn_pass(cx, k, wgc);
        cg_if_end(cx, j);
    }
    cg_loop tl;
    LLVMValueRef t = awg_tiles(cx, k, &tl, cta, ncta), q0, kb, ke;
    awg_tile(a, k, t, &q0);
    awg_range(a, k, q0, &kb, &ke);
    LLVMValueRef r0 = LLVMBuildAdd(b, q0, LLVMBuildZExt(b, rin, cx->i64, ""), "r0");
    for (unsigned i = 0; i < NA; i++) st(cx, cg_f32c(cx, 0), ov[i]);
    for (int h = 0; h < 2; h++)
        st(cx, cg_f32c(cx, -INFINITY), mv[h]), st(cx, cg_f32c(cx, 0), lv[h]);
    LLVMValueRef qit = LLVMBuildLoad2(b, cx->i32, qtv, ""), qb, qpar;
    awg_qslot(cx, k, qit, &qb, &qpar);
    cg_wg_wait(cx, awg_qbar(cx, k, qb, 0), qpar);
    LLVMValueRef sq = LLVMBuildAdd(b, awg_qsm(cx, k, qb), wrows, "sq");
    LLVMValueRef rw = LLVMBuildAdd(
        b, q0, LLVMBuildZExt(b, LLVMBuildMul(b, wgc, i32c(cx, 64), ""), cx->i64, ""), "rw");
    if (k->pipe)
        awg_keys(a, k, sq, r0, rw, c0, kb, ke, ov, pv, mv, lv, itv, wgc);
    else
        awg_keys_plain(a, k, sq, r0, rw, c0, kb, ke, ov, mv, lv, itv);
    awg_arrive(cx, awg_qbar(cx, k, qb, 1));
    LLVMBuildStore(b, LLVMBuildAdd(b, qit, i32c(cx, 1), ""), qtv);
    /* normalise and store */
    LLVMValueRef inv[2];
    for (int h = 0; h < 2; h++) {
        LLVMValueRef l = ld(cx, lv[h]);
        if (k->ones) { /* the row's sum over every key, in each of its L columns */
            l = ld(cx, ov[NO + 2 * h]);
        } else {
            l = fadd(cx, l, cg_shfl_xor(cx, l, 1));
            l = fadd(cx, l, cg_shfl_xor(cx, l, 2));
        }
        inv[h] = inv_sum(cx, l, d->Sk);
        if (a->lse != IR_NONE) { /* one lane of the row's quad, rows inside Sq */
            LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, 8 * h), "");
            LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, c0, cg_i64(cx, 0), ""),
                                           LLVMBuildICmp(b, LLVMIntSLT, row, d->Sq, ""), "");
            LLVMBasicBlockRef e = cg_if_begin(cx, in);
            lse_store(a, row, ld(cx, mv[h]), l, (double)k->fp.cl / 1.4426950408889634);
            cg_if_end(cx, e);
        }
    }
    LLVMValueRef o[128];
    for (unsigned i = 0; i < NO; i++) o[i] = fmul(cx, ld(cx, ov[i]), inv[(i / 2) % 2]);
    bool ok = awg_store(a, k, o, r0, c0);
    cg_loop_end(cx, &tl);
    if (k->pingpong) { /* the turn warpgroup 1 handed over last */
        LLVMBasicBlockRef j = cg_if_begin(cx, first);
        awg_turn_wait(cx, k, wgc);
        cg_if_end(cx, j);
    }
    return ok;
}

/* The ones tile of TX_ATTN_ONES (awg_issue_pv): AWG_ONES_BYTES at awg_ones_off past the base,
 * after the barriers. */
enum { AWG_ONES_BYTES = 512 };
static int64_t awg_ones_off(const cg_attn_wg_plan *p) {
    return (p->qbufs * p->q_bytes + p->stages * p->stage_bytes + p->bar_bytes + 127) / 128 * 128;
}

/* The whole body: barriers initialised by thread 0, then the producer warpgroup (registers
 * handed to the consumers with setmaxnreg) and the two consumers. */
static bool awg_body(attn_gen *a, attn_wgk *k) {
    cg_ctx *cx = a->cx;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef tid = cg_thread_id(cx);
    k->smem = cg_wg_dyn_smem(cx);
    k->bar = LLVMBuildAdd(b, k->smem,
                          i32c(cx, k->p.qbufs * k->p.q_bytes + k->p.stages * k->p.stage_bytes), "");
    LLVMBasicBlockRef j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, tid, i32c(cx, 0), ""));
    LLVMValueRef bars[2 * CG_ATTN_WG_QBUFS + 4 * CG_ATTN_WG_MAX_STAGES];
    int cnt[2 * CG_ATTN_WG_QBUFS + 4 * CG_ATTN_WG_MAX_STAGES], nbar = 0;
    for (int q = 0; q < k->p.qbufs; q++) {
        bars[nbar] = awg_qbar(cx, k, i32c(cx, q), 0), cnt[nbar++] = 1;
        bars[nbar] = awg_qbar(cx, k, i32c(cx, q), 1), cnt[nbar++] = 4 * k->p.nwg;
    }
    for (int s = 0; s < k->p.stages; s++)
        for (int w = AWG_KFULL; w <= AWG_VEMPTY; w++)
            bars[nbar] = awg_sbar(cx, k, i32c(cx, s), w),
            cnt[nbar++] = w <= AWG_VFULL ? 1 : 4 * k->p.nwg;
    for (int i = 0; i < nbar; i++) {
        LLVMValueRef ia[2] = {LLVMBuildIntToPtr(b, bars[i], cx->sptr, ""), i32c(cx, cnt[i])};
        cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.init.shared", false, ia, 2);
    }
    cg_wg_asm(cx, NULL, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
    cg_if_end(cx, j);
    if (k->ones) { /* the ones tile: threads 0-127 write a 16-bit pair of ones each */
        k->sones = LLVMBuildAdd(b, k->smem, i32c(cx, awg_ones_off(&k->p)), "sones");
        j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, tid, i32c(cx, AWG_ONES_BYTES / 4), ""));
        LLVMValueRef sa[2] = {LLVMBuildAdd(b, k->sones, LLVMBuildMul(b, tid, i32c(cx, 4), ""), ""),
                              i32c(cx, a->d.cdt == IR_BF16 ? 0x3F803F80 : 0x3C003C00)};
        cg_wg_asm(cx, NULL, "st.shared.b32 [$0], $1;", "r,r,~{memory}", sa, 2);
        cg_wg_asm(cx, NULL, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
        cg_if_end(cx, j);
    }
    cg_barrier(cx);
    LLVMValueRef cta = LLVMBuildAdd(
        b, cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.ctaid.x", false, NULL, 0),
        LLVMBuildMul(b, cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.ctaid.y", false, NULL, 0),
                     cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.nctaid.x", false, NULL, 0), ""),
        "cta");
    LLVMValueRef ncta = LLVMBuildMul(
        b, cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.nctaid.x", false, NULL, 0),
        cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.nctaid.y", false, NULL, 0), "ncta");
    if (k->zig) k->ncta = LLVMBuildZExt(b, ncta, cx->i64, "ncta64");
    LLVMValueRef wg = LLVMBuildUDiv(b, tid, i32c(cx, 128), "wg");
    LLVMValueRef wtid = LLVMBuildURem(b, tid, i32c(cx, 128), "wtid");
    LLVMBasicBlockRef prod = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "producer");
    LLVMBasicBlockRef cons = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "consumer");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "done");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, wg, i32c(cx, 0), ""), prod, cons);
    LLVMPositionBuilderAtEnd(b, prod);
    LLVMValueRef nr = i32c(cx, CG_ATTN_WG_PRODUCER_REGS);
    cg_call_intrinsic(cx, "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32", false, &nr, 1);
    j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, wtid, i32c(cx, 0), ""));
    awg_producer(a, k, cta, ncta);
    cg_if_end(cx, j);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, cons);
    nr = i32c(cx, k->p.nwg == 3 ? CG_ATTN_WG_CONSUMER3_REGS : CG_ATTN_WG_CONSUMER_REGS);
    cg_call_intrinsic(cx, "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32", false, &nr, 1);
    bool ok = awg_consumer(a, k, cta, ncta, LLVMBuildSub(b, wg, i32c(cx, 1), ""), wtid);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
    return ok;
}

/* Describes the kernel's n tensor-map parameters (after its buffers and symbols) as maps of the
 * views vw[] (128-byte swizzle) with boxes of 64 columns x rows[i] rows; tm[] get the
 * parameters. False (reported) when a view's buffer is none of the kernel's. */
static bool attn_tmaps(cg_ctx *cx, unsigned region, const cg_attn_wg_view *vw, int n,
                       const uint32_t *rows, LLVMValueRef *tm) {
    cg_kernel *kr = cx->k;
    kr->ntmaps = (unsigned)n;
    kr->tmaps = ir_xcalloc((size_t)n, sizeof *kr->tmaps);
    unsigned np = kr->nbufs + kr->nsyms;
    for (int i = 0; i < n; i++) {
        cg_tmap *m = &kr->tmaps[i];
        m->buf = UINT32_MAX;
        for (unsigned j = 0; j < kr->nbufs; j++)
            if (kr->bufs[j].value == vw[i].base) m->buf = j;
        if (m->buf == UINT32_MAX) {
            tx_error(cx->diag,
                     "codegen: internal error: attention region k%u reads %%%u without a buffer",
                     region, vw[i].base);
            return false;
        }
        m->dtype = (uint8_t)cx->g->nodes[vw[i].base].dtype;
        m->swizzle = 128;
        m->rank = vw[i].rank;
        for (int j = 0; j < vw[i].rank; j++) {
            m->dim[j] = vw[i].dim[j];
            m->box[j] = vw[i].role[j] == CG_AWG_D ? 64 : vw[i].role[j] == CG_AWG_ROW ? rows[i] : 1;
        }
        m->outer = vw[i].outer;
        m->pitch = vw[i].pitch, m->pdim = vw[i].pdim, m->offset = vw[i].offset;
        tm[i] = LLVMGetParam(cx->fn, np + (unsigned)i);
    }
    return true;
}

/* Emits the sm_90a kernel of an eligible region (cg_kernel_begin done with three tensor-map
 * parameters): the maps of the views vw[], the body, the geometry. False (reported) on failure. */
static bool awg_emit(attn_gen *a, unsigned region, const cg_attn_wg_view vw[3],
                     cg_attn_wg_plan *plan) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    cg_kernel *kr = cx->k;
    attn_wgk k;
    memset(&k, 0, sizeof k);
    k.p = *plan;
    k.dq = (int)d->dmax; /* a padded head dim: the zero columns past D add nothing to S */
    k.skip = !attn_knob("TX_ATTN_NO_SKIP", false);
    k.pipe = attn_knob("TX_ATTN_PIPELINE", true);
    k.pingpong = k.pipe && attn_knob("TX_ATTN_PINGPONG", true);
    k.zig = attn_knob("TX_ATTN_ZIGZAG", true);
    k.spec = attn_knob("TX_ATTN_SPEC", false);
    const char *pe = getenv("TX_ATTN_POLY"); /* every n-th exponent by awg_ex2_poly, n 2..16 */
    k.poly = pe && atoi(pe) >= 2 && atoi(pe) <= 16 ? atoi(pe) : 0;
    awg_fplan_for(a, &k, &k.fp);
    /* wide key tiles (fewer softmax chains and turns per score) at d = 128 where F is the
     * (scaled) product: no mask makes diagonal tiles and F's arithmetic needs no registers
     * beside the wider S and P (TX_ATTN_BN=n: n keys per step, for benchmarks) */
    cg_attn_wg_plan wide;
    bool bare = a->am->scores == a->am->mm1 || k.fp.peel == a->am->scores;
    int keys = bare && k.p.d == 128 ? CG_ATTN_WG_WIDE_BN : 128;
    if (k.p.d > 128) /* the plan's keys (a head dim's O registers); 16 fewer where F has more */
        keys = bare || k.p.bn <= 64 ? k.p.bn : k.p.bn - 16;
    const char *ev = getenv("TX_ATTN_BN");
    if (ev && atoi(ev) > 0) keys = atoi(ev);
    int nwg = attn_knob("TX_ATTN_WG3", false) ? 3 : 2;
    if ((keys != k.p.bn || nwg != k.p.nwg) &&
        cg_attn_wg_plan_for(k.p.d, keys, nwg, cg_mm_smem_limit(cx->target), &wide)) {
        k.p = wide;
        awg_fplan_for(a, &k, &k.fp);
    }
    if (k.p.qbufs == 2 && !attn_knob("TX_ATTN_Q2", true)) /* one Q buffer, for benchmarks */
        k.p.qbufs = 1, k.p.smem_bytes -= k.p.q_bytes;
    /* row sums by the tensor cores (TX_ATTN_ONES=1, for benchmarks) where the ones tile and
     * the 4 more accumulators fit (at most 128 per asm statement) */
    int64_t ones_end = 1024 + awg_ones_off(&k.p) + AWG_ONES_BYTES;
    k.ones = k.pipe && attn_knob("TX_ATTN_ONES", false) && k.p.d / 2 + 4 <= 128 &&
             ones_end <= cg_mm_smem_limit(cx->target);
    if (k.ones && ones_end > k.p.smem_bytes) k.p.smem_bytes = ones_end;
    *plan = k.p;
    const uint32_t rows[3] = {(uint32_t)k.p.bm, (uint32_t)k.p.bn, (uint32_t)k.p.bn};
    if (!attn_tmaps(cx, region, vw, 3, rows, k.tm)) return false;
    for (int i = 0; i < 3; i++) k.vw[i] = vw[i];
    LLVMBuilderRef b = cx->b;
    k.nq = LLVMBuildUDiv(b, LLVMBuildAdd(b, d->Sq, cg_i64(cx, k.p.bm - 1), ""), cg_i64(cx, k.p.bm),
                         "nq");
    k.ntiles = LLVMBuildMul(b, k.nq, cg_mm_batch_count(cx, d->nb, d->bdim), "ntiles");
    if (!awg_body(a, &k)) return false;
    kr->persist = CG_WG_SMS;
    char dn[32]; /* a padded head dim: "d96p128" */
    int dv = (int)d->dvmax;
    if (dv == k.p.d)
        snprintf(dn, sizeof dn, "d%d", dv);
    else
        snprintf(dn, sizeof dn, "d%dp%d", dv, k.p.d);
    char poly[16] = "";
    if (k.poly) snprintf(poly, sizeof poly, " poly%d", k.poly);
    snprintf(kr->tmpl, sizeof kr->tmpl, "fa3-wgmma-tma-ws %dx%d %s s%d%s%s%s%s%s%s%s%s%s", k.p.bm,
             k.p.bn, dn, k.p.stages, k.p.qbufs == 2 ? " q2" : "", k.skip ? "" : " noskip",
             k.pipe ? " pipe" : "", k.pingpong ? " pingpong" : "", k.fp.diff ? " ex2diff" : "",
             k.zig ? "" : " nozig", k.spec ? " spec" : "", k.ones ? " ones" : "", poly);
    return true;
}

/* ---- entry -------------------------------------------------------------------- */

/* Split-KV: the keys [kc0, kc1) of chunk z (i64) of ceil(key tiles / chunks) key tiles of bn
 * keys (the kernel's tile, at least 64: a chunk's end never cuts a tile), the chunks in use
 * being a->splits, or with sizes bound at run time (split_rt) min(splits, split_rt
 * / (nbatch x query tiles of bm rows), key tiles / 4), at least 1: chunks past them are empty. */
static void split_chunk(attn_gen *a, LLVMValueRef z, LLVMValueRef nbatch, int64_t bm, int64_t bn) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef nk =
        LLVMBuildUDiv(b, LLVMBuildAdd(b, d->Sk, cg_i64(cx, bn - 1), ""), cg_i64(cx, bn), "");
    LLVMValueRef use = cg_i64(cx, a->splits);
    if (a->split_rt > 0) {
        LLVMValueRef nq =
            LLVMBuildUDiv(b, LLVMBuildAdd(b, d->Sq, cg_i64(cx, bm - 1), ""), cg_i64(cx, bm), "");
        LLVMValueRef blocks = imax(cx, LLVMBuildMul(b, nbatch, nq, ""), cg_i64(cx, 1));
        use = imin(cx, use, LLVMBuildUDiv(b, cg_i64(cx, a->split_rt), blocks, ""));
        use = imax(cx, imin(cx, use, LLVMBuildUDiv(b, nk, cg_i64(cx, 4), "")), cg_i64(cx, 1));
    }
    LLVMValueRef per =
        LLVMBuildUDiv(b, LLVMBuildAdd(b, nk, LLVMBuildSub(b, use, cg_i64(cx, 1), ""), ""), use, "");
    LLVMValueRef chunk = LLVMBuildMul(b, per, cg_i64(cx, bn), "chunk");
    a->kc0 = LLVMBuildMul(b, z, chunk, "kc0");
    a->kc1 = imin(cx, LLVMBuildAdd(b, a->kc0, chunk, ""), d->Sk);
}

/* Emits the body for program ids pid[0] (query tile), pid[1] (flat batch, stepping by ystep)
 * and, split-KV, pid[2] (the chunk of keys). Fills l. */
static bool attn_body(attn_gen *a, const LLVMValueRef *pid, LLVMValueRef ystep, cg_mm_launch *l,
                      char *err, size_t cap) {
    cg_ctx *cx = a->cx;
    const cg_attn_desc *d = &a->d;
    LLVMBuilderRef b = cx->b;
    bool tc = false;
    if (cx->gpu && (d->cdt == IR_F16 || d->cdt == IR_BF16) && d->dmax > 0 && d->dmax <= 256 &&
        d->dvmax > 0 && d->dvmax <= 256)
        tc = attn_tc_tile((d->dmax + 15) / 16 * 16, (d->dvmax + 15) / 16 * 16, &l->bm, &l->bn);
    int nt = 0;
    bool simt = cx->gpu && !tc && a->simt && a->splits <= 1;
    if (!cx->gpu) {
        l->bm = 1, l->bn = 1, l->threads = 1;
    } else if (tc) {
        l->threads = (unsigned)(l->bm / 16 * 32);
    } else if (simt) {
        l->bm = a->sg.bm, l->bn = a->sg.bn, l->threads = PASS_ATTN_SG_THREADS;
        snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "simt-attn %dx%d t%dx%d v%d", (int)a->sg.bm,
                 (int)a->sg.bn, a->sg.tm, a->sg.tn, a->sg.vw);
    } else {
        if (d->dvmax <= 0 || d->dvmax > 1024) {
            snprintf(err, cap,
                     "attention: the value head dim must be a known size <= 1024 on the GPU");
            return false;
        }
        l->bm = 4, l->bn = 1, l->threads = 128;
        nt = (int)((d->dvmax + 31) / 32);
    }
    /* a few query rows (decode; the planner's attention.ksplit, or TX_ATTN_KSPLIT=1 / 0 for
     * benchmarks): one 16-row tile, four warps splitting each key tile */
    bool ks = tc && attn_knob("TX_ATTN_KSPLIT", a->ksplit) && a->sqmax > 0 && a->sqmax <= 16 &&
              l->bn == 64 &&
              ks_bytes((int)((d->dvmax + 15) / 16 * 2)) <= 64 * ((d->dmax + 15) / 16 * 16 + 8) * 2;
    if (!ks) a->gpack = 0;
    if (ks) {
        l->bm = 16, l->bn = attn_ks_bn(), l->threads = 128;
        snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "mma-attn-ksplit 16x%d w4", (int)l->bn);
        if (a->gpack > 1) { /* [attention.gqa_pack] */
            size_t n = strlen(cx->k->tmpl);
            snprintf(cx->k->tmpl + n, sizeof cx->k->tmpl - n, " gqa%d", a->gpack);
        }
    }
    if (a->splits > 1) {
        size_t n = strlen(cx->k->tmpl);
        snprintf(cx->k->tmpl + n, sizeof cx->k->tmpl - n, "%ssplit-kv %d%s", n ? " " : "",
                 a->splits, a->split_rt > 0 ? " rt" : "");
    }
    l->tensor_cores = tc;
    LLVMValueRef orow = NULL, ov[32];
    if (!cx->gpu) {
        orow = LLVMBuildArrayAlloca(b, cx->f32, d->Dv, "orow");
    } else if (!tc && !simt) {
        for (int t = 0; t < nt; t++) ov[t] = cg_var(cx, cg_f32c(cx, 0));
    }
    /* packed ([attention.gqa_pack]): the batch elements with the group axis at 1 */
    LLVMValueRef bdim[IR_MAX_RANK];
    for (unsigned i = 0; i < d->nb; i++) bdim[i] = d->bdim[i];
    if (a->gpack > 1) bdim[d->nb - 1] = cg_i64(cx, 1);
    LLVMValueRef nbatch = cg_mm_batch_count(cx, d->nb, bdim);
    if (a->splits > 1) split_chunk(a, pid[2], nbatch, l->bm, l->bn > 64 ? l->bn : 64);
    cg_loop bl;
    LLVMValueRef bz = cg_loop_begin(cx, &bl, pid[1], nbatch, ystep ? ystep : nbatch, "bz");
    cg_mm_unflatten(cx, bz, d->nb, bdim, a->bidx);
    /* the partials of batch element bz (packed: its group's gpack elements, packed row
     * g gT + t at bz gpack + g's row t) */
    if (a->splits > 1)
        a->pbase = LLVMBuildMul(
            b, LLVMBuildAdd(b, LLVMBuildMul(b, pid[2], nbatch, ""), bz, ""),
            a->gpack > 1 ? LLVMBuildMul(b, d->Sq, cg_i64(cx, a->gpack), "") : d->Sq, "pbase");
    LLVMValueRef q0 = LLVMBuildMul(b, pid[0], cg_i64(cx, l->bm), "q0");
    bool ok;
    if (tc) {
        ok = attn_tc_block(a, q0, l, ks);
    } else if (simt) {
        ok = attn_sg_block(a, q0, l, &a->sg);
    } else if (cx->gpu) {
        LLVMValueRef tid = cg_thread_id(cx);
        LLVMValueRef warp =
            LLVMBuildZExt(b, LLVMBuildUDiv(b, tid, cg_i32(cx, 32), ""), cx->i64, "");
        LLVMValueRef lane =
            LLVMBuildZExt(b, LLVMBuildURem(b, tid, cg_i32(cx, 32), ""), cx->i64, "");
        LLVMValueRef row = LLVMBuildAdd(b, q0, warp, "");
        LLVMBasicBlockRef cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, row, d->Sq, ""));
        ok = attn_row(a, row, lane, 32, ov, nt, NULL);
        cg_if_end(cx, cont);
    } else {
        LLVMBasicBlockRef cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, q0, d->Sq, ""));
        ok = attn_row(a, q0, cg_i64(cx, 0), 1, NULL, 0, orow);
        cg_if_end(cx, cont);
    }
    cg_loop_end(cx, &bl);
    if (!ok) snprintf(err, cap, "attention: the epilogue failed");
    return ok;
}

/* Compile-time value of a dim (0 when symbolic and unbound). */
static int64_t dim_bound(const ir_graph *g, ir_dim d) {
    if (!IR_DIM_IS_SYM(d)) return d;
    int64_t v = g->syms[IR_DIM_SYMIDX(d)].value;
    return v > 0 ? v : 0;
}

/* The region's sizes in d as values of the current kernel (symbols are its parameters). */
static void attn_desc_dims(cg_ctx *cx, const ir_graph *g, const attn_match *am, cg_attn_desc *d) {
    const ir_node *m1 = nd(g, am->mm1), *m2 = nd(g, am->mm2), *qn = nd(g, am->q);
    unsigned nb = m2->shape.rank - 2;
    d->nb = nb;
    for (unsigned i = 0; i < nb; i++) d->bdim[i] = cg_dim(cx, m2->shape.dim[i]);
    d->Sq = cg_dim(cx, m2->shape.dim[nb]);
    d->Sk = cg_dim(cx, m1->shape.dim[nb + 1]);
    d->D = cg_dim(cx, qn->shape.dim[qn->shape.rank - 1]);
    d->Dv = cg_dim(cx, m2->shape.dim[nb + 1]);
}

/* The chunks of keys of [attention.split_kv] for the region: the planner's splits
 * (TX_ATTN_SPLITS=N in the compiling process's environment replaces it for the key split, 1..64),
 * or 1. *nbatch and *sq: the batch elements and query rows when known at compile time (0 when
 * not); *rt: with a size bound only at run time, the resident slots the planner's pick assumed
 * (split_chunk; 0 when every size is known or the count is forced). */
static int attn_splits(const ir_graph *g, unsigned region, const attn_match *am, int64_t *nbatch,
                       int64_t *sq, int64_t *rt) {
    const ir_region *rg = &g->regions[region];
    const ir_node *m1 = nd(g, am->mm1), *m2 = nd(g, am->mm2);
    unsigned nb = m2->shape.rank - 2;
    int splits = rg->splits > 1 ? (int)rg->splits : 1;
    bool forced = false;
    const char *v = getenv("TX_ATTN_SPLITS");
    if (v && rg->strategy == IR_RED_KSPLIT) {
        char *end;
        long n = strtol(v, &end, 10);
        if (!*end && n >= 1 && n <= 64) splits = (int)n, forced = true;
    }
    *nbatch = 1, *rt = 0;
    for (unsigned i = 0; i < nb && *nbatch; i++) {
        int64_t x = dim_bound(g, m2->shape.dim[i]);
        if (x < 1 || !ir_mul_ok(*nbatch, x, nbatch)) *nbatch = 0;
    }
    *sq = dim_bound(g, m2->shape.dim[nb]);
    bool known = *nbatch > 0 && *sq > 0 && dim_bound(g, m1->shape.dim[nb + 1]) > 0;
    if (!known && m2->shape.rank + 1 > IR_MAX_RANK) return 1; /* the scratch's shape */
    if (!known && !forced) *rt = rg->split_slots;
    return splits;
}

/* [attention.split_kv]'s combine kernel (the partials kernel ended; ptemp its scratch): per
 * (batch element, query row, value column) M = max of the chunks' maxima, the chunks' O and
 * sums scaled by exp(m_c - M) and added, O / L through the region's epilogue (inv_sum: NaN for a
 * row whose every score is -inf, as unsplit). One block per (row, batch element), 128 threads
 * over the value columns (one program on the host). */
static bool attn_emit_combine(attn_gen *a, const ir_graph *g, unsigned region, unsigned ptemp,
                              int64_t nbatch, int64_t sq) {
    cg_ctx *cx = a->cx;
    cx->xtemp = ptemp + 1;
    cx->xtemp_write = false;
    cx->xtemp_reads_all = true;
    bool begun = cg_kernel_begin(cx, region, "_comb");
    cx->xtemp = 0;
    cx->xtemp_reads_all = false;
    if (!begun) return false;
    cg_attn_desc *d = &a->d;
    attn_desc_dims(cx, g, a->am, d);
    snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "attn-split-kv-combine %d", a->splits);
    const ir_shape *os = &nd(g, a->am->mm2)->shape;
    ir_poly_numel(&cx->k->flops, os, 4.0 * a->splits);
    LLVMBuilderRef b = cx->b;
    unsigned thr = cx->gpu ? 128 : 1;
    LLVMValueRef nb = nbatch > 0 ? cg_i64(cx, nbatch) : cg_mm_batch_count(cx, d->nb, d->bdim);
    LLVMValueRef w = LLVMBuildAdd(b, d->Dv, cg_i64(cx, 2), "");
    cg_loop bl, cl, sl;
    LLVMValueRef bz =
        cg_loop_begin(cx, &bl, cg_program_id(cx, 1), nb, cg_program_count(cx, 1), "bz");
    cg_mm_unflatten(cx, bz, d->nb, d->bdim, a->bidx);
    LLVMValueRef row = cg_program_id(cx, 0);
    LLVMValueRef tid = LLVMBuildZExt(b, cg_thread_id(cx), cx->i64, "");
    LLVMValueRef col = cg_loop_begin(cx, &cl, tid, d->Dv, cg_i64(cx, thr), "col");
    LLVMValueRef mvar = cg_var(cx, cg_f32c(cx, -INFINITY));
    LLVMValueRef lvar = cg_var(cx, cg_f32c(cx, 0)), ovar = cg_var(cx, cg_f32c(cx, 0));
    for (int pass = 0; pass < 2; pass++) { /* the max, then the scaled sums */
        LLVMValueRef ms = NULL;
        if (pass) {
            LLVMValueRef m = ld(cx, mvar);
            LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, m, cg_f32c(cx, -INFINITY), "");
            ms = LLVMBuildSelect(b, ninf, cg_f32c(cx, 0), m, "");
        }
        LLVMValueRef c =
            cg_loop_begin(cx, &sl, cg_i64(cx, 0), cg_i64(cx, a->splits), cg_i64(cx, 1), "chunk");
        LLVMValueRef base = LLVMBuildMul(
            b,
            LLVMBuildAdd(
                b, LLVMBuildMul(b, LLVMBuildAdd(b, LLVMBuildMul(b, c, nb, ""), bz, ""), d->Sq, ""),
                row, ""),
            w, "");
        LLVMValueRef im = LLVMBuildAdd(b, base, d->Dv, "");
        LLVMValueRef mc = ld(cx, LLVMBuildGEP2(b, cx->f32, cx->xtemp_ptr, &im, 1, ""));
        if (!pass) {
            st(cx, fmaxnum(cx, ld(cx, mvar), mc), mvar);
        } else {
            LLVMValueRef il = LLVMBuildAdd(b, im, cg_i64(cx, 1), "");
            LLVMValueRef io = LLVMBuildAdd(b, base, col, "");
            LLVMValueRef lc = ld(cx, LLVMBuildGEP2(b, cx->f32, cx->xtemp_ptr, &il, 1, ""));
            LLVMValueRef oc = ld(cx, LLVMBuildGEP2(b, cx->f32, cx->xtemp_ptr, &io, 1, ""));
            LLVMValueRef sc = cg_math(cx, IR_OP_EXP, LLVMBuildFSub(b, mc, ms, ""), NULL);
            st(cx, fadd(cx, ld(cx, lvar), fmul(cx, lc, sc)), lvar);
            st(cx, fadd(cx, ld(cx, ovar), fmul(cx, oc, sc)), ovar);
        }
        cg_loop_end(cx, &sl);
    }
    LLVMValueRef o = fmul(cx, ld(cx, ovar), inv_sum(cx, ld(cx, lvar), d->Sk));
    bool ok = d->epi(d->user, cx, &o, a->bidx, row, col);
    cg_loop_end(cx, &cl);
    cg_loop_end(cx, &bl);
    if (!ok) {
        tx_error(cx->diag, "codegen: attention: the epilogue of region k%u failed", region);
        return false;
    }
    ir_shape work[3] = {{.rank = 1, .dim = {sq}}, {.rank = 1, .dim = {nbatch}}, {.rank = 0}};
    if (nbatch < 1 || sq < 1) { /* sizes bound at run time: the output's rows and batch dims */
        work[0].dim[0] = os->dim[d->nb];
        work[1].rank = (uint8_t)d->nb;
        for (unsigned i = 0; i < d->nb; i++) work[1].dim[i] = os->dim[i];
    }
    int64_t per[3] = {1, 1, 1}, cap[3] = {INT32_MAX, cx->gpu ? 65535 : INT32_MAX, 1};
    unsigned block[3] = {thr, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, 0);
    return true;
}

bool cg_emit_attention(cg_ctx *cx, const ir_graph *g, unsigned region) {
    attn_match am;
    if (!attn_match_region(g, region, &am)) {
        tx_error(cx->diag,
                 "codegen: attention region k%u does not hold the planner's match (mm1, scores)",
                 region);
        return false;
    }
    cg_mm_epi_state es = {.nmm = 1, .mm = {am.mm2}};
    cg_attn_wg_view vw[3];
    cg_attn_wg_plan wp;
    bool wg = awg_eligible(cx, g, region, &am, vw, &wp);
    ir_id lse = pass_attention_lse(g, region); /* [attention.lse] */
    if (lse != IR_NONE) {
        if (cx->gpu && !wg) {
            tx_error(cx->diag,
                     "codegen: attention region k%u returns the row logsumexp, which only the "
                     "sm_90a FA3 kernel and the host kernel write; this one runs on neither",
                     region);
            return false;
        }
        es.own[es.nown++] = lse;
    }
    int64_t nbatch = 0, sq = 0, srt = 0;
    int splits = wg || lse != IR_NONE ? 1 : attn_splits(g, region, &am, &nbatch, &sq, &srt);
    unsigned ptemp = 0;
    if (splits > 1) { /* [attention.split_kv]: the partials' scratch, [chunks x batch x rows,
                       * Dv + 2], or [chunks, batch dims..., rows, Dv + 2] with sizes bound at
                       * run time (the same words) */
        const ir_shape *os = &nd(g, am.mm2)->shape;
        int64_t dv = dim_bound(g, os->dim[os->rank - 1]);
        ir_shape ps = {.rank = 2, .dim = {(int64_t)splits * nbatch * sq, dv + 2}};
        if (nbatch < 1 || sq < 1) {
            ps.rank = (uint8_t)(os->rank + 1);
            ps.dim[0] = splits;
            for (unsigned i = 0; i + 1 < os->rank; i++) ps.dim[i + 1] = os->dim[i];
            ps.dim[os->rank] = dv + 2;
        }
        if (dv < 1) {
            splits = 1;
        } else {
            ptemp = cg_scratch_temp(cx, am.mm2, IR_F32, &ps);
            cx->xtemp = ptemp + 1;
            cx->xtemp_write = true;
        }
    }
    /* [attention.ks_tma]: the key split's K and V by tensor maps (sm_90a, the model's pick) */
    pass_attn_view kvw[2];
    bool ktma = !wg && lse == IR_NONE && cx->gpu && cx->target == CG_SM90A &&
                attn_knob("TX_ATTN_KSPLIT", true) && g->regions[region].ks_tma &&
                pass_attention_ks_tma(g, region, kvw, NULL, 0);
    /* the sm_90a kernel takes the Q, K, V tensor maps, the key split by TMA those of K and V */
    cx->ntmap_params = wg ? 3 : ktma ? 2 : 0;
    if (wg) cg_use_module(cx, CG_MOD_FA3); /* its own pipeline; the caller returns to main */
    bool began = cg_kernel_begin(cx, region, splits > 1 ? "_part" : NULL);
    cx->ntmap_params = 0;
    cx->xtemp = 0;
    if (!began) return false;
    if (!cg_mm_collect_outs(cx, g, region, &es)) return false;
    attn_gen a = {.cx = cx,
                  .am = &am,
                  .sqmax = dim_bound(g, nd(g, am.mm2)->shape.dim[nd(g, am.mm2)->shape.rank - 2]),
                  .ksplit = g->regions[region].strategy == IR_RED_KSPLIT,
                  .splits = splits,
                  .split_rt = srt,
                  .lse = lse};
    a.gpack = pass_attention_gqa_pack(g, &g->regions[region], &a.gT);
    if (ktma) {
        const uint32_t rows[2] = {(uint32_t)attn_ks_bn(), (uint32_t)attn_ks_bn()};
        if (!attn_tmaps(cx, region, kvw, 2, rows, a.ktm)) return false;
        a.ktma = true, a.kvw[0] = kvw[0], a.kvw[1] = kvw[1];
    }
    cg_attn_desc *d = &a.d;
    const ir_node *m1 = nd(g, am.mm1), *m2 = nd(g, am.mm2);
    unsigned nb = m2->shape.rank - 2;
    attn_desc_dims(cx, g, &am, d);
    const ir_node *qn = nd(g, am.q);
    d->dmax = dim_bound(g, qn->shape.dim[qn->shape.rank - 1]);
    d->dvmax = dim_bound(g, m2->shape.dim[nb + 1]);
    cg_mm_resolve_opnd(cx, region, am.q, nb, &d->q);
    cg_mm_resolve_opnd(cx, region, am.kt, nb, &d->k);
    cg_mm_resolve_opnd(cx, region, am.v, nb, &d->v);
    d->sdt = (ir_dtype)m1->dtype;
    d->pdt = am.pdt;
    ir_dtype qd = (ir_dtype)qn->dtype;
    bool half = qd == IR_F16 || qd == IR_BF16;
    d->cdt =
        half && nd(g, am.kt)->dtype == qd && nd(g, am.v)->dtype == qd && am.pdt == qd ? qd : IR_F32;
    d->epi = cg_mm_epi_store;
    d->user = &es;
    const ir_region *rg = &g->regions[region];
    a.simt = cx->gpu && d->cdt == IR_F32 && pass_attention_simt(g, region) &&
             rg->threads == PASS_ATTN_SG_THREADS && d->dmax > 0 && d->dvmax > 0 &&
             pass_attention_simt_geom(rg->tile[0], rg->tile[1], d->dmax, d->dvmax, &a.sg) &&
             a.sg.bytes <= cg_mm_smem_limit(cx->target);
    ir_shape work[3] = {
        {.rank = 1, .dim = {m2->shape.dim[nb]}}, {.rank = (uint8_t)nb}, {.rank = 0}};
    for (unsigned i = 0; i < nb; i++) work[1].dim[i] = m2->shape.dim[i];
    if (wg) {
        if (!awg_emit(&a, region, vw, &wp)) return false;
        if (a.failed) {
            tx_error(cx->diag,
                     "codegen: attention: the score graph of region k%u cannot be emitted", region);
            return false;
        }
        int64_t per[3] = {wp.bm, 1, 1}, cap[3] = {INT32_MAX, 65535, 1};
        unsigned block[3] = {128 * (1 + (unsigned)wp.nwg), 1, 1};
        cg_kernel_end(cx, work, per, cap, block, (unsigned)wp.smem_bytes);
        return true;
    }
    cg_mm_launch l;
    memset(&l, 0, sizeof l);
    char err[256];
    LLVMValueRef pid[3] = {cg_program_id(cx, 0), cg_program_id(cx, 1), cg_program_id(cx, 2)};
    if (!attn_body(&a, pid, cg_program_count(cx, 1), &l, err, sizeof err) || a.failed) {
        if (a.failed)
            snprintf(err, sizeof err, "attention: the score graph of region k%u cannot be emitted",
                     region);
        tx_error(cx->diag, "codegen: %s", err);
        return false;
    }
    int64_t per[3] = {l.bm, 1, 1};
    int64_t cap[3] = {INT32_MAX, cx->gpu ? 65535 : INT32_MAX, 1};
    if (a.gpack > 1) work[1].dim[nb - 1] = 1; /* the group's heads share a block */
    if (splits > 1)                           /* grid z: the chunks of keys */
        work[2] = (ir_shape){.rank = 1, .dim = {splits}}, cap[2] = splits;
    unsigned block[3] = {l.threads, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, (unsigned)l.dyn_smem);
    return splits > 1 ? attn_emit_combine(&a, g, region, ptemp, nbatch, sq) : true;
}
