/* reduction.c - the emitter of reduction regions: an elementwise prologue,
 * one or more reductions over the same axes of the same shape (each may
 * use the previous ones' results), and an elementwise epilogue on the
 * broadcast-back rows or on the reduced values.
 *
 * Row mode (the innermost axis is reduced): one block per row, threads
 * stride over the row, warp shuffles then shared memory combine.
 * Column mode (the innermost axis is kept): one thread per kept element,
 * a serial loop over the reduced elements; neighbouring threads read
 * neighbouring addresses. When the plan is onchip and the row is short
 * enough (a concrete length of at most CG_RED_HOLD elements per thread)
 * every reduction is unrolled and the row's values stay in registers (one
 * HBM read). When it is onchip but longer (row mode, concrete length), the
 * values later passes re-read are staged in shared memory by the first
 * pass (one HBM read; cg_red_stage_plan). Otherwise the row is streamed: one loop (one HBM pass)
 * per reduction level, levels 1 and 2 fused into one online pass when the chain streams (softmax's
 * running max and rescaled sum, Welford for a variance), then one epilogue loop for the row-shaped
 * outputs that depend on a reduction: the planner's `passes` (docs/codegen.md). */
#include "codegen/cg_impl.h"
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CG_RED_MAXRED 32
_Static_assert(CG_RED_MAXRED >= IR_REGION_MAX_REDUCTIONS,
               "the planner plans no more reductions per region than codegen tracks");
#define CG_RED_HOLD PASS_ROW_HOLD_WARP /* most elements a thread holds (lin arrays) */
_Static_assert(CG_RED_HOLD <= CG_VEC_MAXLIN, "a held row's groups fit the vector-load cache");
#define CG_RED_MAXST  8                   /* most values staged in shared memory */
#define CG_RED_XSLOTS (3 * CG_RED_MAXRED) /* cluster exchanges per row */
#define CG_RED_PFN    2                   /* most row inputs a persistent cluster row prefetches */

typedef struct cg_red {
    unsigned region;
    const ir_shape *S; /* shape the reductions read */
    uint32_t axes;     /* reduced axes of S */
    ir_shape kept;     /* S without the reduced axes (rows) */
    ir_shape red;      /* the reduced axes of S (one row) */
    ir_id reds[CG_RED_MAXRED];
    unsigned nred;
    uint32_t picks; /* bit k: reds[k] is a one-hot sum the planner's [reduction.pick] reads at its
                       index once per row (cg_red_pick), outside the streaming loops */
    ir_id pidx[CG_RED_MAXRED]; /* picks: the index (pass_pick.idx) */
    bool rowmode;
    bool trailing, leading; /* reduced axes are the last / first ones */
    unsigned threads;
    unsigned cols, slices; /* column mode: a block is cols kept elements x slices of the reduced
                              axis (the planner's tile[1], tile[2]); slices > 1 only on the GPU */
    LLVMValueRef slice;    /* slices > 1: this thread's slice (i64), its column's validity */
    LLVMValueRef colok;
    unsigned kv;     /* column mode: kept elements per thread (the schedule's vec), consecutive
                        and aligned (kv divides the innermost kept extent): one vector load per
                        reduced element; 1: one column per thread */
    unsigned splits; /* > 1: the reduced axis in `splits` chunks, one per grid row: column mode
                        [reduction.column_blocks] (one kernel, a column tile's last block
                        combines); row mode [reduction.row_split] (one kernel, the row's last
                        block combines) */
    LLVMValueRef partv[CG_RED_MAXRED]; /* the partials kernel: the block's combined partials */
    LLVMValueRef wsp;   /* splits > 1, zero between launches: row mode ([reduction.row_split]) the
                           workspace (i32 words: a ticket per row, then the partials); column mode
                           ([reduction.column_blocks]) a ticket per tile */
    LLVMValueRef chunk; /* row mode, splits > 1: this block's chunk of its row (i64) */
    LLVMValueRef lastf; /* splits > 1 (not two): shared i32, the block drew its row's or its
                           column tile's last ticket */
    LLVMValueRef tile;  /* the row loop's index (i64): column mode, its tile of
                           cg_red_tile_cols kept elements ([reduction.column_blocks]'s ticket) */
    bool two;         /* [reduction.row_split2]: two kernels over the same rows x splits blocks, the
                         chunks' statistics (cg_red_stats_row) then their combine and the chunk's
                         outputs (cg_red_norm_row); every output is stored by the second */
    unsigned ptemp;   /* the partials' scratch temp */
    unsigned wrows;   /* row mode: rows per block (the planner's rows; > 1 only on the GPU), one
                         warp or one power-of-two group of `threads` < 32 lanes each */
    unsigned lshift;  /* wrows > 1: log2(threads): a thread's row in the block is tid >> lshift */
    unsigned cluster; /* row mode: blocks per row, a thread-block cluster (GPU, sm_90, held rows
                         only); 1: none */
    LLVMValueRef rank;  /* cluster > 1: this block's rank in its cluster (i64, = ctaid.y) */
    LLVMValueRef xslot; /* cluster > 1: the shared words the blocks publish their partials in */
    unsigned nx;        /* cluster > 1: exchanges emitted so far in the row body (next slot) */
    LLVMValueRef wide;  /* GPU row mode, more than one warp: 32 f64 words (cg_red_wide_sum) */
    bool arrived;   /* cluster > 1: the row body arrived at its closing barrier (cg_red_store) */
    unsigned pgrid; /* cluster > 1, GPU: clusters launched (the schedule's grid), each looping over
                       the rows pgrid apart, its exchange slots in two sets by row parity (no
                       closing barrier per row: one after the loop); 0: a cluster per row */
    LLVMValueRef xpar, parv; /* pgrid: the row's slot set offset (i32, 0 or CG_RED_XSLOTS), its
                                alloca */
    LLVMValueRef xtag, tagv; /* pgrid: the row's tag (i64: its iteration + 1, high word), alloca */
    unsigned npf; /* > 0 (pgrid, a held row of vector groups): the groups of its npf row inputs
                     pfn[] are loaded one row ahead into pfbuf (cg_red_prefetch) before the stores
                     (at the row's start measured the same on the H200: 1001 against 1004 us) */
    ir_id pfn[CG_RED_PFN];
    LLVMValueRef pfbuf[CG_RED_PFN]; /* allocas of hold / vec storage vectors */
    LLVMValueRef rstep;             /* pgrid: the row loop's step */
    unsigned hold;                  /* > 0: unrolled passes, elements per thread */
    unsigned peel; /* > 0 (GPU): a held row whose length vec does not divide: its groups
                      start at the row's first aligned element a; the thread's first hold - 1
                      elements are groups, element hold - 1 its one of the row's leftover
                      elements (the a before the groups, the rest after them) */
    unsigned vec;  /* > 1: hold elements come in aligned groups of vec (vector loads) */
    unsigned svec; /* > 1: streaming loops take aligned groups of svec elements (vector loads and
                      stores) */
    bool speel;    /* GPU, a streamed row whose length svec does not divide: the groups start at
                      the row's first aligned element pa (pg of them), and a loop of single
                      elements takes the len - pg svec left over (pa before the groups, the rest
                      after them; lane l takes leftover l), in rank 0 of a cluster */
    bool lmode;    /* speel: the loop being emitted is the leftovers' (one element, svec aside) */
    LLVMValueRef pa, pg; /* speel: the row's first aligned element and its groups (i64) */
    LLVMValueRef nrows, rowlen;
    /* Streaming structure (used when the row is not held): */
    uint8_t level[CG_RED_MAXRED]; /* 1 + the deepest region reduction its input depends on */
    unsigned nlev;                /* deepest level (the planner's `stages`) */
    uint32_t *dep; /* per node: bitmask of the region's reductions its value depends on */
    bool online;   /* levels 1 and 2 run as one online pass (cg_red_online_match) */
    uint8_t okind[CG_RED_MAXRED]; /* level-2 reduction: CG_ON_EXP or CG_ON_VAR */
    uint8_t ostat[CG_RED_MAXRED]; /* its level-1 statistic (index into reds) */
    ir_id oa[CG_RED_MAXRED]; /* CG_ON_VAR: the minuend A of (A - stat), accumulated by Welford */
    /* Staged rows (onchip rows too long for registers, cg_red_stage_plan):
     * the first pass writes st[j] at element e of the row to word
     * j * len + e of stbuf; later passes read it back instead of HBM. */
    unsigned nst; /* > 0: staged mode */
    ir_id st[CG_RED_MAXST];
    unsigned stbytes;   /* shared bytes: nst * len words, then (GPU, > 1 warp) the block scratch */
    LLVMValueRef stbuf; /* 32-bit words (addrspace 3 on GPU, an alloca on the host) */
} cg_red;

enum { CG_ON_EXP = 1, CG_ON_VAR = 2 };

static unsigned cg_red_vec_width(cg_ctx *cx, const cg_red *p, int64_t len, int64_t count);
static bool cg_red_plan_kv(cg_ctx *cx, unsigned r, cg_red *p);

/* Column mode: the kept elements per thread of region r's schedule (column_split's or
 * column_blocks' vec) into p->kv, checked: a power of two of at most 16 dividing the innermost
 * kept extent (so a thread's elements are consecutive and their vector aligned). On the host the
 * one thread of a program takes kv columns (one column block, one slice), so CI runs the path. */
static bool cg_red_plan_kv(cg_ctx *cx, unsigned r, cg_red *p) {
    const ir_region *rg = &cx->g->regions[r];
    int32_t kv = rg->sched.id == PASS_SCH_REDUCTION_COLUMN_SPLIT    ? rg->sched.p[2]
                 : rg->sched.id == PASS_SCH_REDUCTION_COLUMN_BLOCKS ? rg->sched.p[3]
                                                                    : 1;
    if (kv <= 1) return true;
    int64_t kin = p->S->rank ? p->S->dim[p->S->rank - 1] : 0;
    if (kv > 16 || (kv & (kv - 1)) || IR_DIM_IS_SYM(kin) || kin % kv) {
        tx_error(cx->diag,
                 "codegen: reduction region %u: %d kept elements per thread do not divide the "
                 "innermost kept extent",
                 r, (int)kv);
        return false;
    }
    p->kv = (unsigned)kv;
    if (!cx->gpu) p->cols = p->slices = 1, p->threads = 1;
    return true;
}

/* The planner's picks of region r (ir_region.picks) into p->picks and p->pidx, each checked
 * against pass_red_pick (the rule's form: a sum over the innermost axis, row mode). */
static bool cg_red_plan_picks(cg_ctx *cx, unsigned r, cg_red *p) {
    uint32_t m = cx->g->regions[r].picks;
    for (unsigned k = 0; k < 32 && m >> k; k++) {
        if (!(m & (1u << k))) continue;
        pass_pick pk;
        if (k >= p->nred || !pass_red_pick(cx->g, p->reds[k], &pk)) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: the planner's pick %u is not a one-hot sum "
                     "over the innermost axis",
                     r, k);
            return false;
        }
        p->pidx[k] = pk.idx;
        p->picks |= 1u << k;
    }
    return true;
}

/* True when reduction k of p is a [reduction.pick]. */
static bool cg_red_is_pick(const cg_red *p, unsigned k) { return (p->picks >> k) & 1u; }

/* Collects the reductions of region r and checks they share shape and
 * axes; fills the layout facts. */
static bool cg_red_plan(cg_ctx *cx, unsigned r, cg_red *p) {
    const ir_graph *g = cx->g;
    memset(p, 0, sizeof *p);
    p->region = r;
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->region != r || !(ir_op_traits((ir_op)n->op) & IR_T_REDUCE)) continue;
        const ir_shape *in = &g->nodes[ir_in(g, n, 0)].shape;
        if (p->nred == 0) {
            p->S = in;
            p->axes = n->a.red.axes;
        } else if (!ir_shape_eq(in, p->S) || n->a.red.axes != p->axes || p->nred == CG_RED_MAXRED) {
            tx_error(cx->diag,
                     "codegen: reduction region %u mixes reductions of different shapes or axes",
                     r);
            return false;
        }
        p->reds[p->nred++] = i;
    }
    if (!p->nred) {
        tx_error(cx->diag, "codegen: reduction region %u holds no reduction", r);
        return false;
    }
    if (!cg_red_plan_picks(cx, r, p)) return false;
    const ir_shape *S = p->S;
    unsigned nk = 0, nr = 0;
    for (unsigned a = 0; a < S->rank; a++) {
        if (p->axes & (1u << a))
            p->red.dim[nr++] = S->dim[a];
        else
            p->kept.dim[nk++] = S->dim[a];
    }
    p->kept.rank = (uint8_t)nk;
    p->red.rank = (uint8_t)nr;
    p->rowmode = S->rank == 0 || (p->axes & (1u << (S->rank - 1))) || nk == 0;
    p->trailing = true;
    for (unsigned a = 0; a + 1 < S->rank; a++)
        if ((p->axes & (1u << a)) && !(p->axes & (1u << (a + 1)))) p->trailing = false;
    p->leading = true;
    for (unsigned a = 1; a < S->rank; a++)
        if ((p->axes & (1u << a)) && !(p->axes & (1u << (a - 1)))) p->leading = false;
    int64_t len = ir_shape_numel(&p->red);
    if (!cx->gpu) {
        p->threads = 1;
    } else if (p->rowmode) {
        /* The planner's row block (its schedule's plan, passes/schedule.c): lanes per row, rows
         * per block. */
        const ir_region *rg = &g->regions[r];
        if (pass_schedule_kind(rg->sched.id) != IR_RK_REDUCTION ||
            rg->sched.id == PASS_SCH_REDUCTION_COLUMN ||
            rg->sched.id == PASS_SCH_REDUCTION_COLUMN_SPLIT ||
            rg->sched.id == PASS_SCH_REDUCTION_COLUMN_BLOCKS) {
            tx_error(cx->diag, "codegen: reduction region %u: row mode without a row schedule (%s)",
                     r, pass_schedule_name(rg->sched.id));
            return false;
        }
        int64_t lanes = rg->tile[1], w = rg->rows > 1 && nk > 0 ? rg->rows : 1;
        bool pow2 = lanes > 0 && !(lanes & (lanes - 1));
        if (lanes <= 0 || lanes * w > PASS_ROW_THREADS_MAX || (w > 1 && (!pow2 || lanes > 32)) ||
            (lanes > 32 && lanes % 32)) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: row block of %lld lanes x %lld rows is not one "
                     "codegen emits",
                     r, (long long)lanes, (long long)w);
            return false;
        }
        p->threads = (unsigned)lanes;
        p->wrows = (unsigned)w;
        p->cluster = rg->tile[2] > 1 && w == 1 && cx->target >= CG_SM90 ? (unsigned)rg->tile[2] : 1;
        while ((1u << p->lshift) < p->threads) p->lshift++;
    } else {
        const ir_region *rg = &g->regions[r];
        if (rg->sched.id != PASS_SCH_REDUCTION_COLUMN &&
            rg->sched.id != PASS_SCH_REDUCTION_COLUMN_SPLIT &&
            rg->sched.id != PASS_SCH_REDUCTION_COLUMN_BLOCKS) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: column mode without a column schedule (%s)", r,
                     pass_schedule_name(rg->sched.id));
            return false;
        }
        p->cols = rg->tile[1] > 0 ? (unsigned)rg->tile[1] : 128;
        p->slices = rg->tile[2] > 1 ? (unsigned)rg->tile[2] : 1;
        if (p->slices > 1 && (p->cols & (p->cols - 1))) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: column block of %u kept elements is not a "
                     "power of two",
                     r, p->cols);
            return false;
        }
        p->threads = p->cols * p->slices;
        if (rg->sched.id == PASS_SCH_REDUCTION_COLUMN_BLOCKS &&
            rg->splits != (uint32_t)rg->sched.p[2]) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: column blocks of %d splits planned as %u", r,
                     (int)rg->sched.p[2], rg->splits);
            return false;
        }
    }
    if (!p->rowmode) p->splits = g->regions[r].splits > 1 ? g->regions[r].splits : 0;
    if (p->rowmode && (g->regions[r].sched.id == PASS_SCH_REDUCTION_ROW_SPLIT ||
                       g->regions[r].sched.id == PASS_SCH_REDUCTION_ROW_SPLIT2)) {
        const ir_region *rg = &g->regions[r];
        if (rg->splits < 2 || rg->splits != (uint32_t)rg->sched.p[1] || len <= 0) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: a split row of %d chunks planned as %u (of a "
                     "concrete length)",
                     r, (int)rg->sched.p[1], rg->splits);
            return false;
        }
        p->splits = rg->splits;
        p->cluster = 1;
        p->two = rg->sched.id == PASS_SCH_REDUCTION_ROW_SPLIT2;
    }
    p->kv = 1;
    if (!p->rowmode && !cg_red_plan_kv(cx, r, p)) return false;
    /* Held rows: aligned groups of vec elements, pass_row_hold of them per thread. */
    unsigned v = len > 0 && p->rowmode && p->trailing ? cg_red_vec_width(cx, p, len, len) : 1;
    if (p->cluster < 1) p->cluster = 1;
    int64_t per = p->rowmode ? pass_row_hold(len, v, (int64_t)p->threads * p->cluster) : len;
    int64_t lim = cx->gpu && p->rowmode && p->threads <= 32 ? PASS_ROW_HOLD_WARP : PASS_ROW_HOLD;
    if (p->wrows < 1) p->wrows = 1;
    p->hold = (len > 0 && per <= lim && g->regions[r].strategy == IR_RED_ONCHIP && p->slices <= 1 &&
               p->kv <= 1 && p->splits <= 1)
                  ? (unsigned)per
                  : 0;
    p->vec = p->hold ? v : 1;
    if (len <= 0 || !p->rowmode) p->cluster = 1;
    /* A held row of a length no vector divides (GPU, one block per row): aligned groups from the
     * row's first aligned element, one leftover element per thread (at most 2 vp - 2 of them). */
    unsigned vp = cx->gpu && p->hold && v == 1 && p->rowmode && p->trailing && p->cluster == 1 &&
                          p->wrows == 1
                      ? cg_red_vec_width(cx, p, 16, 16)
                      : 1;
    int64_t per2 = vp > 1 ? pass_row_hold(len, vp, p->threads) : 0;
    if (vp > 1 && p->threads >= 2 * vp && len >= 2 * (int64_t)vp && per2 + 1 <= CG_RED_HOLD) {
        p->peel = 1;
        p->hold = (unsigned)per2 + 1;
        p->vec = vp;
    }
    return true;
}

/* Elements per vector access of the row-shaped values region p reads or writes: 16 bytes of the
 * widest such dtype (at most 8), halved until it divides the row length len and `count` (the
 * elements per thread, or len again). */
static unsigned cg_red_vec_width(cg_ctx *cx, const cg_red *p, int64_t len, int64_t count) {
    const ir_graph *g = cx->g;
    int maxb = 1;
    for (ir_id i = 0; i < ir_output(g); i++) {
        const ir_node *n = &g->nodes[i];
        if (n->region != p->region) continue;
        for (unsigned j = 0; j <= n->nin; j++) { /* its HBM inputs, and itself when stored */
            ir_id v = j < n->nin ? ir_in(g, n, j) : i;
            const ir_node *vn = &g->nodes[v];
            bool hbm = cx->bufidx_kind[v] && (j == n->nin || vn->region != p->region);
            if (hbm && ir_shape_eq(&vn->shape, p->S) && ir_dtype_size((ir_dtype)vn->dtype) > maxb)
                maxb = ir_dtype_size((ir_dtype)vn->dtype);
        }
    }
    unsigned v = 16u / (unsigned)maxb;
    if (v > 8) v = 8;
    while (v > 1 && (len % v || count % v)) v /= 2;
    return v;
}

/* The value behind a chain of single-input views and casts starting at x
 * (casts only when `casts`). */
static ir_id cg_red_skip(const ir_graph *g, ir_id x, bool casts) {
    for (;;) {
        const ir_node *n = &g->nodes[x];
        bool view =
            (ir_op_traits((ir_op)n->op) & IR_T_VIEW) && n->op != IR_OP_CONCAT && n->nin == 1;
        if (!view && !(casts && n->op == IR_OP_CAST)) return x;
        x = ir_in(g, n, 0);
    }
}

/* Index of node id among p->reds, or -1. */
static int cg_red_index(const cg_red *p, ir_id id) {
    for (unsigned k = 0; k < p->nred; k++)
        if (p->reds[k] == id) return (int)k;
    return -1;
}

/* Fills p->dep (which region reductions each value depends on, through
 * in-region elementwise nodes and views, not through HBM values), p->level
 * and p->nlev. The caller frees p->dep. */
static void cg_red_levels(cg_ctx *cx, cg_red *p) {
    const ir_graph *g = cx->g;
    p->dep = ir_xcalloc(g->n ? g->n : 1, sizeof *p->dep);
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        int k = cg_red_index(p, i);
        if (k >= 0) {
            p->dep[i] = 1u << k;
            continue;
        }
        bool view = (ir_op_traits((ir_op)n->op) & IR_T_VIEW) != 0;
        if (n->op == IR_OP_OUTPUT || cg_is_hbm(cx, i) || (!view && n->region != p->region))
            continue;
        for (unsigned j = 0; j < n->nin; j++) p->dep[i] |= p->dep[ir_in(g, n, j)];
    }
    p->nlev = 0;
    for (unsigned k = 0; k < p->nred; k++) {
        uint32_t d = p->dep[ir_in(g, &g->nodes[p->reds[k]], 0)];
        unsigned lv = 1;
        for (unsigned j = 0; j < k; j++)
            if ((d & (1u << j)) && p->level[j] + 1u > lv) lv = p->level[j] + 1u;
        p->level[k] = (uint8_t)lv;
        if (lv > p->nlev) p->nlev = lv;
    }
}

/* True when the two levels stream in one pass (the planner's `online`
 * chains, docs/codegen.md): every level-2 reduction is a sum or mean of
 * cast*(exp(cast*(A - M))) with M a level-1 max, or of cast*(D * D) or
 * cast*(pow(D, 2)) with D = cast*(A - S), S a level-1 mean or sum; A
 * depends on no reduction of the region. Fills okind, ostat, oa. */
static bool cg_red_online_match(const ir_graph *g, cg_red *p) {
    if (p->nlev != 2) return false;
    for (unsigned k = 0; k < p->nred; k++) {
        if (p->level[k] != 2) continue;
        const ir_node *rn = &g->nodes[p->reds[k]];
        if ((rn->op != IR_OP_SUM && rn->op != IR_OP_MEAN) ||
            !ir_dtype_is_float((ir_dtype)rn->dtype))
            return false;
        ir_id x = cg_red_skip(g, ir_in(g, rn, 0), true), d = IR_NONE;
        const ir_node *xn = &g->nodes[x];
        int kind = 0;
        if (xn->op == IR_OP_EXP) {
            kind = CG_ON_EXP;
            d = cg_red_skip(g, ir_in(g, xn, 0), true);
        } else if (xn->op == IR_OP_MUL && ir_in(g, xn, 0) == ir_in(g, xn, 1)) {
            kind = CG_ON_VAR;
            d = cg_red_skip(g, ir_in(g, xn, 0), true);
        } else if (xn->op == IR_OP_POW) {
            const ir_node *e = &g->nodes[cg_red_skip(g, ir_in(g, xn, 1), true)];
            if (e->op != IR_OP_CONST || e->shape.rank != 0 || e->a.cval != 2.0) return false;
            kind = CG_ON_VAR;
            d = cg_red_skip(g, ir_in(g, xn, 0), true);
        }
        if (!kind || g->nodes[d].op != IR_OP_SUB) return false;
        ir_id a = ir_in(g, &g->nodes[d], 0);
        int st = cg_red_index(p, cg_red_skip(g, ir_in(g, &g->nodes[d], 1), false));
        if (st < 0 || p->level[st] != 1 || p->dep[a]) return false;
        ir_op so = (ir_op)g->nodes[p->reds[st]].op;
        if (kind == CG_ON_EXP ? so != IR_OP_MAX : (so != IR_OP_MEAN && so != IR_OP_SUM))
            return false;
        if (!ir_dtype_is_float((ir_dtype)g->nodes[p->reds[st]].dtype)) return false;
        p->okind[k] = (uint8_t)kind;
        p->ostat[k] = (uint8_t)st;
        p->oa[k] = a;
    }
    return true;
}

enum { CG_ST_ID = 1, CG_ST_OTHER = 2, CG_ST_CAND = 4, CG_ST_NOID = 8, CG_ST_DIVR = 16 };

/* Marks what the later passes evaluate from node n, reached at the pass's
 * element index (`ident`) or at another index (through a view or a
 * broadcast): CG_ST_CAND on the reduction-free nodes of the row shape S
 * reached at the element index (they stop the walk: staged values are
 * substituted), CG_ST_NOID on such nodes also reached at another index,
 * CG_ST_DIVR on divisors of a division seen through views (value.c turns
 * a division by a substituted value into a reciprocal product). */
static void cg_red_stage_walk(cg_ctx *cx, const cg_red *p, uint8_t *fl, ir_id n, bool ident) {
    const ir_graph *g = cx->g;
    const ir_node *nd = &g->nodes[n];
    uint8_t bit = ident ? CG_ST_ID : CG_ST_OTHER;
    if (fl[n] & bit) return;
    fl[n] |= bit;
    if (cg_red_index(p, n) >= 0 || nd->op == IR_OP_CONST) return;
    bool rowshaped = p->dep[n] == 0 && ir_shape_eq(&nd->shape, p->S);
    if (rowshaped && ident) {
        fl[n] |= CG_ST_CAND;
        return;
    }
    if (rowshaped) fl[n] |= CG_ST_NOID;
    if (cg_is_hbm(cx, n)) return;
    unsigned tr = ir_op_traits((ir_op)nd->op);
    if (tr & IR_T_VIEW) {
        for (unsigned j = 0; j < nd->nin; j++) cg_red_stage_walk(cx, p, fl, ir_in(g, nd, j), false);
        return;
    }
    if (nd->region != p->region || !(tr & IR_T_ELEM)) return;
    if (nd->op == IR_OP_DIV && nd->nin > 1) {
        ir_id x = ir_in(g, nd, 1);
        for (;;) {
            fl[x] |= CG_ST_DIVR;
            if (!(ir_op_traits((ir_op)g->nodes[x].op) & IR_T_VIEW)) break;
            x = ir_in(g, &g->nodes[x], 0);
        }
    }
    bool same = ident && ir_shape_eq(&nd->shape, p->S);
    for (unsigned j = 0; j < nd->nin; j++) {
        ir_id in = ir_in(g, nd, j);
        cg_red_stage_walk(cx, p, fl, in, same && ir_shape_eq(&g->nodes[in].shape, p->S));
    }
}

/* Decides whether the row is staged in shared memory: the plan is onchip,
 * the row (row mode, concrete length) is too long for the register hold,
 * something is read after the first pass (a deeper level or an epilogue),
 * and the values those passes re-read (the reduction-free values of the
 * row shape at the frontier of what they evaluate) are each read only at
 * the pass's element index and never as a divisor; their words (plus the
 * block scratch) fit the plan's sram_bytes and (GPU) the target's
 * per-block shared memory (the plan may be for a larger GPU). Fills nst, st and stbytes
 * (nst = 0: streamed as before). Needs p->dep. */
static void cg_red_stage_plan(cg_ctx *cx, cg_red *p) {
    const ir_graph *g = cx->g;
    const ir_region *rg = &g->regions[p->region];
    int64_t len = ir_shape_numel(&p->red);
    p->nst = 0;
    if (p->hold || !p->rowmode || rg->strategy != IR_RED_ONCHIP || rg->red_extent <= 0 || len <= 0)
        return;
    uint8_t *fl = ir_xcalloc(g->n ? g->n : 1, 1);
    bool roots = false;
    for (unsigned k = 0; k < p->nred; k++)
        if (p->level[k] >= 2) {
            cg_red_stage_walk(cx, p, fl, ir_in(g, &g->nodes[p->reds[k]], 0), true);
            roots = true;
        }
    for (ir_id o = 0; o < g->n; o++)
        if (cg_is_region_output(cx, o) && ir_shape_eq(&g->nodes[o].shape, p->S) && p->dep[o]) {
            cg_red_stage_walk(cx, p, fl, o, true);
            roots = true;
        }
    bool ok = roots;
    for (ir_id i = 0; ok && i < g->n; i++) {
        if (!(fl[i] & CG_ST_CAND)) continue;
        if ((fl[i] & (CG_ST_NOID | CG_ST_DIVR)) || p->nst == CG_RED_MAXST)
            ok = false;
        else
            p->st[p->nst++] = i;
    }
    free(fl);
    int64_t scratch = cx->gpu && p->threads > 32 ? 4 * (int64_t)(p->threads / 32) : 0;
    int64_t bytes = 0; /* a row of 2^62 elements overflows: then it is not staged */
    bool sized = ir_mul_ok(len, 4 * (int64_t)p->nst, &bytes) && ir_add_ok(bytes, scratch, &bytes);
    if (!ok || !p->nst || !sized || bytes > rg->sram_bytes ||
        (cx->gpu && bytes > cg_mm_smem_limit(cx->target))) {
        p->nst = 0;
        return;
    }
    p->stbytes = (unsigned)bytes;
}

/* The address of word `j * len + e` of the staged buffer (e: i64 element of the row). */
static LLVMValueRef cg_red_stage_ptr(cg_ctx *cx, const cg_red *p, unsigned j, LLVMValueRef e) {
    LLVMValueRef off =
        j ? LLVMBuildNUWAdd(cx->b, LLVMBuildNUWMul(cx->b, p->rowlen, cg_i64(cx, j), ""), e, "") : e;
    return LLVMBuildInBoundsGEP2(cx->b, cx->f32, p->stbuf, &off, 1, "stage");
}

/* First pass: writes every staged value at element e (index idx) as a 32-bit word. */
static bool cg_red_stage_write(cg_ctx *cx, const cg_red *p, LLVMValueRef e, cg_index *idx) {
    for (unsigned j = 0; j < p->nst; j++) {
        LLVMValueRef v = cg_emit_value(cx, p->st[j], idx);
        if (!v) return false;
        if (LLVMTypeOf(v) == cx->i1) v = LLVMBuildZExt(cx->b, v, cx->i32, "");
        LLVMBuildStore(cx->b, v, cg_red_stage_ptr(cx, p, j, e));
    }
    return true;
}

/* Later passes: substitutes every staged value by its word at element e
 * (cleared by cg_red_stage_clear at the end of the loop body). */
static void cg_red_stage_read(cg_ctx *cx, const cg_red *p, LLVMValueRef e) {
    for (unsigned j = 0; j < p->nst; j++) {
        ir_dtype t = (ir_dtype)cx->g->nodes[p->st[j]].dtype;
        LLVMTypeRef ct = cg_ctype(cx, t);
        LLVMValueRef v = LLVMBuildLoad2(cx->b, ct == cx->i1 ? cx->i32 : ct,
                                        cg_red_stage_ptr(cx, p, j, e), "staged");
        if (ct == cx->i1) v = LLVMBuildTrunc(cx->b, v, cx->i1, "");
        cx->subst[p->st[j]] = v;
    }
}

/* Ends the substitutions of cg_red_stage_read (staged values are per element). */
static void cg_red_stage_clear(cg_ctx *cx, const cg_red *p) {
    for (unsigned j = 0; j < p->nst; j++) cx->subst[p->st[j]] = NULL;
}

/* Decomposes linear v over the dims of s into comps (C order). */
static void cg_delin(cg_ctx *cx, LLVMValueRef v, const ir_shape *s, LLVMValueRef *comps) {
    for (int i = (int)s->rank - 1; i >= 0; i--) {
        if (i == 0) {
            comps[i] = v;
        } else {
            LLVMValueRef d = cg_dim(cx, s->dim[i]);
            comps[i] = LLVMBuildURem(cx->b, v, d, "");
            v = LLVMBuildUDiv(cx->b, v, d, "");
        }
    }
}

/* Linear offset into S of element e of row `row`. */
static LLVMValueRef cg_red_lin(cg_ctx *cx, const cg_red *p, LLVMValueRef row, LLVMValueRef e) {
    if (p->trailing)
        return LLVMBuildNUWAdd(cx->b, LLVMBuildNUWMul(cx->b, row, p->rowlen, ""), e, "");
    if (p->leading) return LLVMBuildNUWAdd(cx->b, LLVMBuildNUWMul(cx->b, e, p->nrows, ""), row, "");
    LLVMValueRef kc[IR_MAX_RANK], rc[IR_MAX_RANK], d[IR_MAX_RANK];
    cg_delin(cx, row, &p->kept, kc);
    cg_delin(cx, e, &p->red, rc);
    unsigned nk = 0, nr = 0;
    for (unsigned a = 0; a < p->S->rank; a++) d[a] = (p->axes & (1u << a)) ? rc[nr++] : kc[nk++];
    return cg_index_from_dims(cx, p->S, d).lin;
}

/* The index of element e of row `row` with its dims known: the kept ones from the row, the
 * reduced ones from e (no division of the linear offset per element: an iota along the reduced
 * axis is e itself, a per-row operand's index the row's, hoisted out of the element loops). */
static cg_index cg_red_idx(cg_ctx *cx, const cg_red *p, LLVMValueRef row, LLVMValueRef e) {
    cg_index idx = cg_index_lin(p->S, cg_red_lin(cx, p, row, e));
    if (p->S->rank == 0) return idx;
    LLVMValueRef kc[IR_MAX_RANK], rc[IR_MAX_RANK];
    cg_delin(cx, row, &p->kept, kc);
    cg_delin(cx, e, &p->red, rc);
    unsigned nk = 0, nr = 0;
    for (unsigned a = 0; a < p->S->rank; a++)
        idx.dim[a] = (p->axes & (1u << a)) ? rc[nr++] : kc[nk++];
    return idx;
}

/* The compute dtype of a reduction's accumulator: f32 for floats, i32. */
static ir_dtype cg_acc_dtype(const ir_node *n) {
    return ir_dtype_is_float((ir_dtype)n->dtype) ? IR_F32 : IR_I32;
}

/* The thread's index among the threads of its row (i32): the thread id,
 * or its lane when a block holds one row per warp. */
static LLVMValueRef cg_red_lane(cg_ctx *cx, const cg_red *p) {
    LLVMValueRef tid = cg_thread_id(cx);
    return p->wrows > 1 ? LLVMBuildAnd(cx->b, tid, LLVMConstInt(cx->i32, p->threads - 1, 0), "lane")
                        : tid;
}

/* Column split (slices > 1): combines the partials v (f32 or i32) of the
 * block's slices of each column through `scratch` (threads words): every
 * thread writes its own word, then every thread adds its column's words in
 * slice order, so all threads of a column receive the same result. Two
 * barriers; every thread of the block must call it. */
static LLVMValueRef cg_red_slices(cg_ctx *cx, const cg_red *p, ir_op op, LLVMValueRef v,
                                  LLVMValueRef scratch) {
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMBuildStore(cx->b, v, LLVMBuildInBoundsGEP2(cx->b, t, scratch, &tid, 1, ""));
    cg_barrier(cx);
    LLVMValueRef c = LLVMBuildAnd(cx->b, tid, LLVMConstInt(cx->i32, p->cols - 1, 0), "col");
    LLVMValueRef r = NULL;
    for (unsigned s = 0; s < p->slices; s++) {
        LLVMValueRef at =
            LLVMBuildAdd(cx->b, c, LLVMConstInt(cx->i32, (unsigned long long)s * p->cols, 0), "");
        LLVMValueRef x =
            LLVMBuildLoad2(cx->b, t, LLVMBuildInBoundsGEP2(cx->b, t, scratch, &at, 1, ""), "");
        r = r ? cg_reduce_combine(cx, op, r, x) : x;
    }
    cg_barrier(cx);
    return r;
}

/* Cluster rows: combines the block results v (f32 or i32, the same in every thread of a block)
 * of the cluster's blocks: thread 0 publishes v in its next exchange slot, a cluster barrier,
 * then every thread reads the cluster's slots through distributed shared memory and combines
 * them in rank order (so every block gets the same bits). The slot is reused by the next row
 * only after the row's closing cluster barrier; persistent rows (pgrid) alternate two slot sets
 * instead: a block writes a set again two rows later, after every block arrived at an exchange
 * of the row between, so after it read the set. Every thread of the cluster must call it. */
static LLVMValueRef cg_red_xasm(cg_ctx *cx, LLVMTypeRef ret, const char *text, const char *cons,
                                LLVMValueRef *args, unsigned n) {
    LLVMTypeRef pt[4];
    for (unsigned i = 0; i < n && i < 4; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret ? ret : LLVMVoidTypeInContext(cx->llctx), pt, n, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons),
                                      1, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(cx->b, fty, a, args, n, "");
}

/* Persistent cluster rows (GPU): the exchange of cg_red_cluster without a cluster barrier, whose
 * release would wait for every memory access in flight (the next row's loads, this row's
 * stores): thread 0 publishes v with the row's tag in one 64-bit word of its slot (a relaxed
 * cluster-scope store), every thread polls each block's slot (relaxed loads through
 * distributed shared memory) until it carries the row's tag, then combines in rank order. A slot
 * set is written again two rows later, after every block published the row between, which it
 * does only after reading this row's words. */
static LLVMValueRef cg_red_cluster_tagged(cg_ctx *cx, cg_red *p, ir_op op, LLVMValueRef v,
                                          unsigned slot) {
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMValueRef si = LLVMBuildAdd(cx->b, LLVMConstInt(cx->i32, slot, 0), p->xpar, "xslot.set");
    LLVMValueRef at = LLVMBuildInBoundsGEP2(cx->b, cx->i64, p->xslot, &si, 1, "xslot");
    LLVMValueRef sa =
        LLVMBuildTrunc(cx->b, LLVMBuildPtrToInt(cx->b, at, cx->i64, ""), cx->i32, "saddr");
    LLVMValueRef bits = t == cx->f32 ? LLVMBuildBitCast(cx->b, v, cx->i32, "") : v;
    LLVMValueRef word =
        LLVMBuildOr(cx->b, p->xtag, LLVMBuildZExt(cx->b, bits, cx->i64, ""), "xword");
    LLVMBasicBlockRef join = cg_if_begin(
        cx, LLVMBuildICmp(cx->b, LLVMIntEQ, cg_thread_id(cx), LLVMConstInt(cx->i32, 0, 0), ""));
    LLVMValueRef sargs[2] = {sa, word};
    cg_red_xasm(cx, NULL, "st.relaxed.cluster.shared::cta.b64 [$0], $1;", "r,l,~{memory}", sargs,
                2);
    cg_if_end(cx, join);
    LLVMValueRef r = NULL;
    for (unsigned c = 0; c < p->cluster; c++) {
        LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
        LLVMBasicBlockRef poll = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "xpoll");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "xgot");
        LLVMBuildBr(cx->b, poll);
        LLVMPositionBuilderAtEnd(cx->b, poll);
        (void)pre;
        LLVMValueRef largs[2] = {sa, LLVMConstInt(cx->i32, c, 0)};
        LLVMValueRef w =
            cg_red_xasm(cx, cx->i64,
                        "{\n\t.reg .b32 ra;\n\tmapa.shared::cluster.u32 ra, $1, $2;\n\t"
                        "ld.relaxed.cluster.shared::cluster.b64 $0, [ra];\n\t}",
                        "=l,r,r,~{memory}", largs, 2);
        LLVMValueRef tag = LLVMBuildAnd(cx->b, w, cg_i64(cx, (int64_t)0xffffffff00000000ll), "");
        LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, tag, p->xtag, ""), done, poll);
        LLVMPositionBuilderAtEnd(cx->b, done);
        LLVMValueRef x = LLVMBuildTrunc(cx->b, w, cx->i32, "");
        if (t == cx->f32) x = LLVMBuildBitCast(cx->b, x, cx->f32, "");
        r = r ? cg_reduce_combine(cx, op, r, x) : x;
    }
    return r;
}

static LLVMValueRef cg_red_cluster(cg_ctx *cx, cg_red *p, ir_op op, LLVMValueRef v) {
    unsigned slot = p->nx < CG_RED_XSLOTS ? p->nx++ : CG_RED_XSLOTS - 1;
    if (p->xtag) return cg_red_cluster_tagged(cx, p, op, v, slot);
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMValueRef si = LLVMConstInt(cx->i32, slot, 0);
    if (p->xpar) si = LLVMBuildAdd(cx->b, si, p->xpar, "xslot.set");
    LLVMValueRef at = LLVMBuildInBoundsGEP2(cx->b, cx->f32, p->xslot, &si, 1, "xslot");
    LLVMBasicBlockRef join = cg_if_begin(
        cx, LLVMBuildICmp(cx->b, LLVMIntEQ, cg_thread_id(cx), LLVMConstInt(cx->i32, 0, 0), ""));
    LLVMBuildStore(cx->b, v, at);
    cg_if_end(cx, join);
    cg_cluster_sync(cx);
    LLVMValueRef r = NULL;
    for (unsigned c = 0; c < p->cluster; c++) {
        LLVMValueRef x = cg_cluster_load(cx, t, at, LLVMConstInt(cx->i32, c, 0));
        r = r ? cg_reduce_combine(cx, op, r, x) : x;
    }
    return r;
}

/* The threads' partials v of one row combined (op SUM, MAX or MIN): the
 * block reduction in row mode, the slice combine in a column split, v
 * itself when one thread holds the row. */
static LLVMValueRef cg_red_combine(cg_ctx *cx, cg_red *p, ir_op op, LLVMValueRef v,
                                   LLVMValueRef scratch) {
    if (p->rowmode && p->cluster > 1)
        return cg_red_cluster(cx, p, op, cg_block_reduce(cx, op, v, p->threads, scratch));
    if (p->rowmode) return cg_block_reduce(cx, op, v, p->threads, scratch);
    if (p->slices > 1) return cg_red_slices(cx, p, op, v, scratch);
    return v;
}

/* The LLVM type of a plain accumulator of reduction n: f64 for a float sum or mean on the host,
 * where one program adds a whole row in sequence (10^7 terms of 0.1 in f32 gave 1087937: the
 * error grows with n eps; in f64 it stays below 2^-53 n times the sum of |terms|, far under f32's
 * rounding of the result); the compute type of cg_acc_dtype otherwise (the GPU adds along a tree).
 */
static LLVMTypeRef cg_acc_type(cg_ctx *cx, const ir_node *n) {
    bool wide = !cx->gpu && ir_dtype_is_float((ir_dtype)n->dtype) &&
                (n->op == IR_OP_SUM || n->op == IR_OP_MEAN);
    return wide ? cx->f64 : cg_ctype(cx, cg_acc_dtype(n));
}

/* Row-element iteration state for one row: either hold (unrolled) lins or
 * a loop. */
typedef struct cg_rowit {
    LLVMValueRef row;
    LLVMValueRef e0, estep;        /* first element of this thread, stride */
    LLVMValueRef eend;             /* streaming loops' end (NULL: the row's groups) */
    LLVMValueRef lo;               /* a streamed cluster row: the block's first item */
    LLVMValueRef x0, xend;         /* element loops (the exact variance pass; NULL: e0, the row) */
    LLVMValueRef lin[CG_RED_HOLD]; /* hold mode: element lins (clamped) */
    LLVMValueRef valid[CG_RED_HOLD];
} cg_rowit;

/* Combines the thread partials of reduction k (acc: accumulator type),
 * sets cx->subst to its value (mean: divided by the row length, then
 * converted to the node's dtype) and returns the combined accumulator
 * before the mean's division. */
static LLVMValueRef cg_red_set(cg_ctx *cx, cg_red *p, unsigned k, LLVMValueRef acc);
static LLVMValueRef cg_red_finish(cg_ctx *cx, cg_red *p, unsigned k, LLVMValueRef acc,
                                  LLVMValueRef scratch) {
    const ir_node *rn = &cx->g->nodes[p->reds[k]];
    ir_dtype adt = cg_acc_dtype(rn);
    ir_op op = (ir_op)rn->op;
    if (LLVMTypeOf(acc) ==
        cx->f64) { /* the host's wide sum: the mean divides in f64, then one rounding */
        LLVMValueRef w =
            op == IR_OP_MEAN
                ? LLVMBuildFDiv(cx->b, acc, LLVMBuildSIToFP(cx->b, p->rowlen, cx->f64, ""), "mean")
                : acc;
        cx->subst[p->reds[k]] =
            cg_convert(cx, LLVMBuildFPTrunc(cx->b, w, cx->f32, ""), adt, (ir_dtype)rn->dtype);
        return LLVMBuildFPTrunc(cx->b, acc, cx->f32, "");
    }
    return cg_red_set(cx, p, k,
                      cg_red_combine(cx, p, op == IR_OP_MEAN ? IR_OP_SUM : op, acc, scratch));
}

/* Sets cx->subst of reduction k from its combined accumulator acc (f32 or i32; mean: divided by
 * the row length, then converted to the node's dtype) and returns acc. */
static LLVMValueRef cg_red_set(cg_ctx *cx, cg_red *p, unsigned k, LLVMValueRef acc) {
    const ir_node *rn = &cx->g->nodes[p->reds[k]];
    ir_dtype adt = cg_acc_dtype(rn);
    ir_op op = (ir_op)rn->op;
    LLVMValueRef v = acc;
    if (op == IR_OP_MEAN) {
        if (adt == IR_F32)
            v = LLVMBuildFDiv(cx->b, acc, LLVMBuildSIToFP(cx->b, p->rowlen, cx->f32, ""), "mean");
        else
            v = LLVMBuildSDiv(cx->b, acc, LLVMBuildTrunc(cx->b, p->rowlen, cx->i32, ""), "mean");
    }
    cx->subst[p->reds[k]] = cg_convert(cx, v, adt, (ir_dtype)rn->dtype);
    return acc;
}

/* [reduction.pick] reduction k of row `row` (docs/codegen.md): its input at element e = idx of
 * the row (idx evaluated at the row's element 0: it is constant along the row) when 0 <= e <
 * len, plus +0 for floats (a -0 there gives +0, as the one-hot sum's zero terms do), else 0; in
 * the accumulator's compute dtype (f32 or i32). Every thread of the row computes it (one address:
 * a broadcast load), so it needs no combine; the reductions it depends on must be set. */
static LLVMValueRef cg_red_pick(cg_ctx *cx, const cg_red *p, unsigned k, LLVMValueRef row) {
    const ir_graph *g = cx->g;
    const ir_node *rn = &g->nodes[p->reds[k]];
    ir_id in = ir_in(g, rn, 0);
    ir_dtype adt = cg_acc_dtype(rn);
    unsigned mark = cg_memo_mark(cx);
    cg_index i0 = cg_red_idx(cx, p, row, cg_i64(cx, 0));
    cg_index ii = cg_index_bcast(cx, &i0, &g->nodes[p->pidx[k]].shape);
    LLVMValueRef iv = cg_emit_value(cx, p->pidx[k], &ii);
    if (!iv) return NULL;
    LLVMValueRef e = LLVMBuildSExt(cx->b, iv, cx->i64, "pick.e");
    LLVMValueRef var = cg_var(cx, cg_reduce_identity(cx, IR_OP_SUM, cg_ctype(cx, adt)));
    LLVMBasicBlockRef join =
        cg_if_begin(cx, LLVMBuildICmp(cx->b, LLVMIntULT, e, p->rowlen, "pick.in"));
    unsigned inner = cg_memo_mark(cx);
    cg_index at = cg_red_idx(cx, p, row, e);
    LLVMValueRef v = cg_emit_value(cx, in, &at);
    if (!v) return NULL;
    v = cg_convert(cx, v, (ir_dtype)g->nodes[in].dtype, adt);
    if (adt == IR_F32) v = LLVMBuildFAdd(cx->b, v, cg_f32c(cx, 0.0), "pick.z");
    LLVMBuildStore(cx->b, v, var);
    cg_memo_reset(cx, inner);
    cg_if_end(cx, join);
    cg_memo_reset(cx, mark);
    return LLVMBuildLoad2(cx->b, cg_ctype(cx, adt), var, "pick");
}

/* A sum of exp(a_i - m) rescaled to exp(a_i - M) (M >= m, f32): s when
 * m == M (so an all -inf prefix keeps its NaN terms, as the reference),
 * 0 when m is -inf and M is not (terms of -inf elements vanish), else
 * s * exp(m - M). NaN in m or M gives NaN. */
static LLVMValueRef cg_red_rescale(cg_ctx *cx, LLVMValueRef s, LLVMValueRef m, LLVMValueRef M) {
    LLVMValueRef f = cg_math(cx, IR_OP_EXP, LLVMBuildFSub(cx->b, m, M, ""), NULL);
    LLVMValueRef r = LLVMBuildFMul(cx->b, s, f, "");
    LLVMValueRef ninf = LLVMBuildFCmp(cx->b, LLVMRealOEQ, m, cg_f32c(cx, -INFINITY), "");
    r = LLVMBuildSelect(cx->b, ninf, cg_f32c(cx, 0.0), r, "");
    return LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOEQ, m, M, ""), s, r, "resc");
}

/* cg_red_rescale behind a branch taken only when the running max moved
 * (m != M), so the common step costs no exponential. */
static LLVMValueRef cg_red_rescale_br(cg_ctx *cx, LLVMValueRef s, LLVMValueRef m, LLVMValueRef M) {
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    LLVMBasicBlockRef mv = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "max.moved");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "max.join");
    LLVMBuildCondBr(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOEQ, m, M, ""), join, mv);
    LLVMPositionBuilderAtEnd(cx->b, mv);
    LLVMValueRef r = cg_red_rescale(cx, s, m, M);
    LLVMBasicBlockRef mvend = LLVMGetInsertBlock(cx->b);
    LLVMBuildBr(cx->b, join);
    LLVMPositionBuilderAtEnd(cx->b, join);
    LLVMValueRef phi = LLVMBuildPhi(cx->b, cx->f32, "s.resc");
    LLVMValueRef vals[2] = {s, r};
    LLVMBasicBlockRef bbs[2] = {pre, mvend};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

/* True when output o (a node of the region's row shape S, stored by it)
 * depends on no reduction of the region: stored during the first pass. */
static bool cg_red_pro_out(const cg_red *p, const ir_graph *g, ir_id o) {
    return p->dep[o] == 0 && ir_shape_eq(&g->nodes[o].shape, p->S);
}

/* The level-2 variance reduction k from every thread's Welford state
 * w = (count, mean, M2) and the final statistic c (cx->subst of its
 * level-1 reduction): sum (A - c)^2 = sum over threads of M2 + n (m - c)^2.
 * When that is not finite (f32 overflow of the differences), one exact
 * pass sums the reduced value itself, as the reference does. */
static LLVMValueRef cg_red_var_total(cg_ctx *cx, cg_red *p, cg_rowit *it, unsigned k,
                                     const LLVMValueRef *w, LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    ir_id st = p->reds[p->ostat[k]], in = ir_in(g, &g->nodes[p->reds[k]], 0);
    LLVMValueRef c = cg_convert(cx, cx->subst[st], (ir_dtype)g->nodes[st].dtype, IR_F32);
    if (LLVMTypeOf(w[1]) == cx->f64)
        c = LLVMBuildFPExt(cx->b, c, cx->f64, ""); /* the host's f64 state */
    LLVMValueRef dm = LLVMBuildFSub(cx->b, w[1], c, "");
    LLVMValueRef part = LLVMBuildFAdd(
        cx->b, w[2], LLVMBuildFMul(cx->b, w[0], LLVMBuildFMul(cx->b, dm, dm, ""), ""), "");
    if (LLVMTypeOf(part) == cx->f64) part = LLVMBuildFPTrunc(cx->b, part, cx->f32, "");
    LLVMValueRef tot = cg_red_combine(cx, p, IR_OP_SUM, part, scratch);
    LLVMValueRef mag = cg_call_intrinsic(cx, "llvm.fabs", true, &tot, 1);
    LLVMValueRef finite = LLVMBuildFCmp(cx->b, LLVMRealOLT, mag, cg_f32c(cx, INFINITY), "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    LLVMBasicBlockRef join = cg_if_begin(cx, LLVMBuildNot(cx->b, finite, ""));
    LLVMBasicBlockRef lpre = LLVMGetInsertBlock(cx->b);
    cg_loop l;
    LLVMValueRef e = cg_loop_begin(cx, &l, it->x0 ? it->x0 : it->e0,
                                   it->xend ? it->xend : p->rowlen, it->estep, "var.exact");
    LLVMPositionBuilderBefore(cx->b, LLVMGetFirstInstruction(l.head));
    LLVMValueRef acc = LLVMBuildPhi(cx->b, cx->f32, "acc"), zero = cg_f32c(cx, 0.0);
    LLVMAddIncoming(acc, &zero, &lpre, 1);
    LLVMPositionBuilderAtEnd(cx->b, l.body);
    unsigned mark = cg_memo_mark(cx);
    cg_index idx = cg_index_lin(p->S, cg_red_lin(cx, p, it->row, e));
    LLVMValueRef v = cg_emit_value(cx, in, &idx);
    if (!v) return NULL;
    LLVMValueRef nx =
        LLVMBuildFAdd(cx->b, acc, cg_convert(cx, v, (ir_dtype)g->nodes[in].dtype, IR_F32), "");
    cg_memo_reset(cx, mark);
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
    LLVMAddIncoming(acc, &nx, &latch, 1);
    cg_loop_end(cx, &l);
    LLVMValueRef ex = cg_red_combine(cx, p, IR_OP_SUM, acc, scratch);
    LLVMBasicBlockRef thend = LLVMGetInsertBlock(cx->b);
    cg_if_end(cx, join);
    LLVMValueRef r = LLVMBuildPhi(cx->b, cx->f32, "var");
    LLVMValueRef vals[2] = {tot, ex};
    LLVMBasicBlockRef bbs[2] = {pre, thend};
    LLVMAddIncoming(r, vals, bbs, 2);
    return r;
}

#define CG_RED_MAXSLOT (3 * CG_RED_MAXRED)

/* Trip count of a streaming loop: the row's elements, or its groups of svec elements. */
static LLVMValueRef cg_red_groups(cg_ctx *cx, const cg_red *p) {
    return p->svec > 1 ? cg_i64(cx, ir_shape_numel(&p->red) / p->svec) : p->rowlen;
}

/* Indexes of the elements a streaming iteration handles at loop value e (one element, or the
 * svec elements of group e), with the vector-load cache on for a group of a row (contiguous
 * elements; cg_vec_end clears it). A column split's group is svec consecutive elements of the
 * reduced axis, strided in memory: unrolled scalar loads, all issued before their combines. */
static void cg_red_group_begin(cg_ctx *cx, const cg_red *p, const cg_rowit *it, LLVMValueRef e,
                               cg_index *idx) {
    unsigned V = p->svec > 1 && !p->lmode ? p->svec : 1;
    LLVMValueRef e0 = V > 1 ? LLVMBuildMul(cx->b, e, cg_i64(cx, V), "") : e, lins[CG_VEC_MAXLIN];
    if (p->speel && !p->lmode) /* the groups start at the row's first aligned element */
        e0 = LLVMBuildAdd(cx->b, e0, p->pa, "peel.g");
    if (p->lmode) /* leftover e: before the groups, or after them */
        e0 = LLVMBuildSelect(
            cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, e, p->pa, ""), e,
            LLVMBuildAdd(cx->b, e, LLVMBuildMul(cx->b, p->pg, cg_i64(cx, p->svec), ""), ""),
            "peel.e");
    for (unsigned j = 0; j < V; j++) {
        LLVMValueRef ej = j ? LLVMBuildAdd(cx->b, e0, cg_i64(cx, j), "") : e0;
        idx[j] = cg_red_idx(cx, p, it->row, ej);
        lins[j] = idx[j].lin;
    }
    if (V > 1 && p->rowmode) cg_vec_begin(cx, p->S, V, V, lins, NULL);
}

/* Stores row-shaped output o at the iteration's elements (one vector store for a group). */
static bool cg_red_group_store(cg_ctx *cx, const cg_red *p, ir_id o, cg_index *idx) {
    unsigned V = p->svec > 1 && !p->lmode ? p->svec : 1;
    LLVMValueRef vals[CG_VEC_MAXLIN];
    for (unsigned j = 0; j < V; j++)
        if (!(vals[j] = cg_emit_value(cx, o, &idx[j]))) return false;
    ir_dtype dt = (ir_dtype)cx->g->nodes[o].dtype;
    if (V > 1 && p->rowmode)
        cg_store_vec(cx, cg_buf_ptr(cx, o), dt, idx[0].lin, vals, V);
    else
        for (unsigned j = 0; j < V; j++) cg_store(cx, cg_buf_ptr(cx, o), dt, idx[j].lin, vals[j]);
    return true;
}

/* Butterfly shuffle of an f64 value (its two 32-bit halves). */
static LLVMValueRef cg_shfl_xor64(cg_ctx *cx, LLVMValueRef v, unsigned mask) {
    LLVMTypeRef v2 = LLVMVectorType(cx->i32, 2);
    LLVMValueRef w = LLVMBuildBitCast(cx->b, v, v2, ""), r = LLVMGetUndef(v2);
    for (unsigned h = 0; h < 2; h++) {
        LLVMValueRef hi = LLVMConstInt(cx->i32, h, 0);
        r = LLVMBuildInsertElement(
            cx->b, r, cg_shfl_xor(cx, LLVMBuildExtractElement(cx->b, w, hi, ""), mask), hi, "");
    }
    return LLVMBuildBitCast(cx->b, r, cx->f64, "");
}

/* The f64 sum of the row's thread partials d (GPU, row mode; every thread of the row's block, or
 * of its cluster, calls it): the warp's butterfly, then (more than one warp) the warps' sums in
 * order through p->wide, then (a cluster) the blocks' sums through the exchange slots as two f32
 * words each (hi = the sum rounded, lo = the rest: 48 bits), added in rank order, so every
 * block gets the same bits. */
static LLVMValueRef cg_red_wide_sum(cg_ctx *cx, cg_red *p, LLVMValueRef d) {
    unsigned w = p->threads < 32 ? p->threads : 32;
    for (unsigned m = w / 2; m >= 1; m /= 2)
        d = LLVMBuildFAdd(cx->b, d, cg_shfl_xor64(cx, d, m), "");
    if (p->threads > 32) {
        LLVMValueRef tid = cg_thread_id(cx);
        LLVMValueRef lane = LLVMBuildAnd(cx->b, tid, LLVMConstInt(cx->i32, 31, 0), "lane");
        LLVMValueRef warp = LLVMBuildLShr(cx->b, tid, LLVMConstInt(cx->i32, 5, 0), "warp");
        LLVMBasicBlockRef join =
            cg_if_begin(cx, LLVMBuildICmp(cx->b, LLVMIntEQ, lane, LLVMConstInt(cx->i32, 0, 0), ""));
        LLVMBuildStore(cx->b, d, LLVMBuildInBoundsGEP2(cx->b, cx->f64, p->wide, &warp, 1, ""));
        cg_if_end(cx, join);
        cg_barrier(cx);
        LLVMValueRef r = NULL;
        for (unsigned i = 0; i < p->threads / 32; i++) {
            LLVMValueRef ii = LLVMConstInt(cx->i32, i, 0);
            LLVMValueRef x = LLVMBuildLoad2(
                cx->b, cx->f64, LLVMBuildInBoundsGEP2(cx->b, cx->f64, p->wide, &ii, 1, ""), "");
            r = r ? LLVMBuildFAdd(cx->b, r, x, "") : x;
        }
        cg_barrier(cx);
        d = r;
    }
    if (p->cluster <= 1) return d;
    unsigned slot = p->nx + 2 <= CG_RED_XSLOTS ? p->nx : CG_RED_XSLOTS - 2;
    p->nx = slot + 2;
    LLVMValueRef hi = LLVMBuildFPTrunc(cx->b, d, cx->f32, "hi");
    LLVMValueRef lo = LLVMBuildFPTrunc(
        cx->b, LLVMBuildFSub(cx->b, d, LLVMBuildFPExt(cx->b, hi, cx->f64, ""), ""), cx->f32, "lo");
    LLVMValueRef at[2];
    for (unsigned h = 0; h < 2; h++) {
        LLVMValueRef si = LLVMConstInt(cx->i32, slot + h, 0);
        at[h] = LLVMBuildInBoundsGEP2(cx->b, cx->f32, p->xslot, &si, 1, "xslot");
    }
    LLVMBasicBlockRef join = cg_if_begin(
        cx, LLVMBuildICmp(cx->b, LLVMIntEQ, cg_thread_id(cx), LLVMConstInt(cx->i32, 0, 0), ""));
    LLVMBuildStore(cx->b, hi, at[0]);
    LLVMBuildStore(cx->b, lo, at[1]);
    cg_if_end(cx, join);
    cg_cluster_sync(cx);
    LLVMValueRef r = NULL;
    for (unsigned c = 0; c < p->cluster; c++) {
        LLVMValueRef rk = LLVMConstInt(cx->i32, c, 0);
        LLVMValueRef x = LLVMBuildFAdd(
            cx->b, LLVMBuildFPExt(cx->b, cg_cluster_load(cx, cx->f32, at[0], rk), cx->f64, ""),
            LLVMBuildFPExt(cx->b, cg_cluster_load(cx, cx->f32, at[1], rk), cx->f64, ""), "");
        r = r ? LLVMBuildFAdd(cx->b, r, x, "") : x;
    }
    return r;
}

/* Sets cx->subst of reduction k (an f32 sum or mean) from its f64 row total: a mean divides in
 * f64, then one rounding to f32 and the node's dtype. Returns the total rounded to f32. */
static LLVMValueRef cg_red_wide_set(cg_ctx *cx, cg_red *p, unsigned k, LLVMValueRef tot) {
    const ir_node *rn = &cx->g->nodes[p->reds[k]];
    LLVMValueRef w =
        rn->op == IR_OP_MEAN
            ? LLVMBuildFDiv(cx->b, tot, LLVMBuildSIToFP(cx->b, p->rowlen, cx->f64, ""), "mean")
            : tot;
    cx->subst[p->reds[k]] =
        cg_convert(cx, LLVMBuildFPTrunc(cx->b, w, cx->f32, ""), IR_F32, (ir_dtype)rn->dtype);
    return LLVMBuildFPTrunc(cx->b, tot, cx->f32, "");
}

/* True when a streaming loop adds reduction n's terms with Kahan's compensation: an f32 sum or
 * mean (accumulator type at); the host adds in f64 instead (cg_acc_type). A thread's partial then
 * carries an error of about 2 eps times the sum of its terms' magnitudes whatever its count
 * (plain: up to count x eps), before the block's and the cluster's tree; 3 more f32 adds per
 * element, under a streamed row's memory time. */
static bool cg_red_kahan(const cg_ctx *cx, const ir_node *n, LLVMTypeRef at) {
    return cx->gpu && at == cx->f32 && (n->op == IR_OP_SUM || n->op == IR_OP_MEAN);
}

/* One loop over the thread's elements of the row (one HBM pass): every
 * reduction of level `lev` (p->online: levels 1 and 2 together, with the
 * running-statistic recurrences of docs/codegen.md), and, when `pro`, the
 * stores of the row-shaped outputs that depend on no reduction. Leaves
 * cx->subst set for the reductions it computed. */
/* One loop of cg_red_stream over items [e0, end) by step (groups of the row, or with p->lmode its
 * leftover elements): the ns accumulators (slot[k]: reduction k's first) enter with the values
 * cur[] and leave with the loop's exit values there. */
static bool cg_red_stream_loop(cg_ctx *cx, cg_red *p, cg_rowit *it, unsigned lev, bool pro,
                               const unsigned *slot, unsigned ns, LLVMValueRef *cur,
                               LLVMValueRef e0, LLVMValueRef end, LLVMValueRef step) {
    const ir_graph *g = cx->g;
    LLVMValueRef phi[CG_RED_MAXSLOT], nxt[CG_RED_MAXSLOT];
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    cg_loop l;
    unsigned V = p->svec > 1 && !p->lmode ? p->svec : 1;
    LLVMValueRef e = cg_loop_begin(cx, &l, e0, end, step, "red");
    LLVMPositionBuilderBefore(cx->b, LLVMGetFirstInstruction(l.head));
    for (unsigned i = 0; i < ns; i++) {
        phi[i] = LLVMBuildPhi(cx->b, LLVMTypeOf(cur[i]), "acc");
        LLVMAddIncoming(phi[i], &cur[i], &pre, 1);
    }
    LLVMPositionBuilderAtEnd(cx->b, l.body);
    unsigned mark = cg_memo_mark(cx);
    cg_index idx[CG_VEC_MAXLIN];
    cg_red_group_begin(cx, p, it, e, idx);
    if (p->nst && !pro) cg_red_stage_read(cx, p, e);
    if (p->nst && pro && !cg_red_stage_write(cx, p, e, &idx[0])) return false;
    for (unsigned k = 0; k < p->nred; k++) { /* plain accumulators: this level (online: level 1) */
        if (p->level[k] != (p->online ? 1 : lev) || cg_red_is_pick(p, k)) continue;
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_id in = ir_in(g, rn, 0);
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        LLVMValueRef acc = phi[slot[k]];
        bool kahan = cg_red_kahan(cx, rn, LLVMTypeOf(acc));
        LLVMValueRef c = kahan ? phi[slot[k] + 1] : NULL;
        for (unsigned j = 0; j < V; j++) {
            LLVMValueRef v = cg_emit_value(cx, in, &idx[j]);
            if (!v) return false;
            v = cg_convert(cx, v, (ir_dtype)g->nodes[in].dtype, cg_acc_dtype(rn));
            if (kahan) { /* y = v - c, t = acc + y, c = (t - acc) - y, acc = t */
                LLVMValueRef y = LLVMBuildFSub(cx->b, v, c, "");
                LLVMValueRef t = LLVMBuildFAdd(cx->b, acc, y, "");
                c = LLVMBuildFSub(cx->b, LLVMBuildFSub(cx->b, t, acc, ""), y, "");
                acc = t;
            } else {
                acc = cg_reduce_combine(cx, op, acc, v);
            }
        }
        nxt[slot[k]] = acc;
        if (kahan) nxt[slot[k] + 1] = c;
    }
    for (unsigned k = 0; p->online && k < p->nred; k++) { /* online statistics: level 2 */
        if (p->level[k] != 2) continue;
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_id in = ir_in(g, rn, 0), st = p->reds[p->ostat[k]];
        unsigned s = slot[k], j = slot[p->ostat[k]];
        const ir_node *sn = &g->nodes[st];
        if (p->okind[k] == CG_ON_EXP) {
            /* s' = s exp(m - m') + sum of exp(a - m') over the group, m' the running max
             * including the group's elements. */
            cx->subst[st] = cg_convert(cx, nxt[j], IR_F32, (ir_dtype)sn->dtype);
            LLVMValueRef acc = cg_red_rescale_br(cx, phi[s], phi[j], nxt[j]);
            for (unsigned q = 0; q < V; q++) {
                LLVMValueRef t = cg_emit_value(cx, in, &idx[q]);
                if (!t) return false;
                acc = LLVMBuildFAdd(cx->b, acc,
                                    cg_convert(cx, t, (ir_dtype)g->nodes[in].dtype, IR_F32), "");
            }
            nxt[s] = acc;
        } else {
            /* Welford per element: n' = n + 1, m' = m + (a - m) / n', M2' = M2 + (a - m)(a - m').
             */
            LLVMValueRef n = phi[s], m = phi[s + 1], m2 = phi[s + 2];
            for (unsigned q = 0; q < V; q++) {
                LLVMValueRef a = cg_emit_value(cx, p->oa[k], &idx[q]);
                if (!a) return false;
                a = cg_convert(cx, a, (ir_dtype)g->nodes[p->oa[k]].dtype, IR_F32);
                if (LLVMTypeOf(n) == cx->f64) a = LLVMBuildFPExt(cx->b, a, cx->f64, "");
                n = LLVMBuildFAdd(cx->b, n, LLVMConstReal(LLVMTypeOf(n), 1.0), "");
                LLVMValueRef dl = LLVMBuildFSub(cx->b, a, m, "");
                m = LLVMBuildFAdd(cx->b, m, LLVMBuildFDiv(cx->b, dl, n, ""), "");
                m2 = LLVMBuildFAdd(
                    cx->b, m2, LLVMBuildFMul(cx->b, dl, LLVMBuildFSub(cx->b, a, m, ""), ""), "");
            }
            nxt[s] = n;
            nxt[s + 1] = m;
            nxt[s + 2] = m2;
        }
        cx->subst[st] = NULL;
    }
    for (ir_id o = 0; pro && o < g->n; o++) {
        if (!cg_is_region_output(cx, o) || !cg_red_pro_out(p, g, o)) continue;
        if (!cg_red_group_store(cx, p, o, idx)) return false;
    }
    cg_red_stage_clear(cx, p);
    cg_vec_end(cx);
    cg_memo_reset(cx, mark);
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
    for (unsigned i = 0; i < ns; i++) LLVMAddIncoming(phi[i], &nxt[i], &latch, 1);
    cg_loop_end(cx, &l);
    for (unsigned i = 0; i < ns; i++) cur[i] = phi[i];
    return true;
}

static bool cg_red_stream(cg_ctx *cx, cg_red *p, cg_rowit *it, unsigned lev, bool pro,
                          LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    unsigned slot[CG_RED_MAXRED], ns = 0;
    LLVMValueRef cur[CG_RED_MAXSLOT];
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        bool sel = (p->online ? p->level[k] <= 2 : p->level[k] == lev) && !cg_red_is_pick(p, k);
        slot[k] = ns;
        if (!sel) continue;
        bool welford =
            p->online && p->level[k] == 2 && p->okind[k] == CG_ON_VAR; /* count, mean, M2 */
        bool lev2 = p->online &&
                    p->level[k] == 2; /* running statistics: f32, but Welford's f64 on the host */
        LLVMTypeRef at = lev2 && !(welford && !cx->gpu) ? cg_ctype(cx, cg_acc_dtype(rn))
                         : welford                      ? cx->f64
                                                        : cg_acc_type(cx, rn);
        cur[ns++] = cg_reduce_identity(cx, lev2 ? IR_OP_SUM : (ir_op)rn->op, at);
        if (welford) cur[ns++] = LLVMConstReal(at, 0.0), cur[ns++] = LLVMConstReal(at, 0.0);
        if (!lev2 && cg_red_kahan(cx, rn, at)) cur[ns++] = LLVMConstReal(at, 0.0);
    }
    if (!cg_red_stream_loop(cx, p, it, lev, pro, slot, ns, cur, it->e0,
                            it->eend ? it->eend : cg_red_groups(cx, p), it->estep))
        return false;
    if (p->speel) { /* the row's leftover elements, one per lane (rank 0 of a cluster) */
        LLVMValueRef nleft = LLVMBuildSub(
            cx->b, p->rowlen, LLVMBuildMul(cx->b, p->pg, cg_i64(cx, p->svec), ""), "peel.n");
        LLVMValueRef l0 = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "");
        if (p->cluster > 1 || p->chunk) /* rank 0 of a cluster, chunk 0 of a split row */
            l0 =
                LLVMBuildSelect(cx->b,
                                LLVMBuildICmp(cx->b, LLVMIntEQ, p->cluster > 1 ? p->rank : p->chunk,
                                              cg_i64(cx, 0), ""),
                                l0, nleft, "");
        p->lmode = true;
        bool ok = cg_red_stream_loop(cx, p, it, lev, pro, slot, ns, cur, l0, nleft,
                                     cg_i64(cx, p->threads));
        p->lmode = false;
        if (!ok) return false;
    }
    LLVMValueRef fin[CG_RED_MAXRED] = {0};
    for (unsigned k = 0; k < p->nred; k++) {
        if (p->level[k] != (p->online ? 1 : lev)) continue;
        if (cg_red_is_pick(p, k)) {
            /* the row's value in every thread; a split row's partial in chunk 0 only (0 in the
             * others: adding them keeps its bits) */
            LLVMValueRef v = cg_red_pick(cx, p, k, it->row);
            if (!v) return false;
            if (p->chunk)
                v = LLVMBuildSelect(cx->b,
                                    LLVMBuildICmp(cx->b, LLVMIntEQ, p->chunk, cg_i64(cx, 0), ""), v,
                                    cg_reduce_identity(cx, IR_OP_SUM, LLVMTypeOf(v)), "pick.part");
            p->partv[k] = fin[k] = cg_red_set(cx, p, k, v);
            continue;
        }
        LLVMValueRef acc = cur[slot[k]];
        bool kahan = cg_red_kahan(cx, &g->nodes[p->reds[k]], LLVMTypeOf(acc));
        if (kahan && p->rowmode && !p->nst && (p->wide || p->threads <= 32)) {
            /* the row's tree in f64 (not staged: its shared memory is the planner's): s - c of
             * every thread, one rounding */
            LLVMValueRef d =
                LLVMBuildFSub(cx->b, LLVMBuildFPExt(cx->b, acc, cx->f64, ""),
                              LLVMBuildFPExt(cx->b, cur[slot[k] + 1], cx->f64, ""), "kahan");
            p->partv[k] = fin[k] = cg_red_wide_set(cx, p, k, cg_red_wide_sum(cx, p, d));
            continue;
        }
        if (kahan) acc = LLVMBuildFSub(cx->b, acc, cur[slot[k] + 1], "kahan");
        p->partv[k] = fin[k] = cg_red_finish(cx, p, k, acc, scratch);
    }
    for (unsigned k = 0; p->online && k < p->nred; k++) {
        if (p->level[k] != 2) continue;
        const ir_node *rn = &g->nodes[p->reds[k]];
        unsigned s = slot[k];
        LLVMValueRef tot;
        if (p->okind[k] == CG_ON_EXP) {
            /* Every thread's sum moves to the row's max, then the block adds them. */
            LLVMValueRef part =
                cg_red_rescale(cx, cur[s], cur[slot[p->ostat[k]]], fin[p->ostat[k]]);
            p->partv[k] = tot = cg_red_combine(cx, p, IR_OP_SUM, part, scratch);
        } else {
            tot = cg_red_var_total(cx, p, it, k, cur + s, scratch);
            if (!tot) return false;
        }
        if (rn->op == IR_OP_MEAN)
            tot = LLVMBuildFDiv(cx->b, tot, LLVMBuildSIToFP(cx->b, p->rowlen, cx->f32, ""), "mean");
        cx->subst[p->reds[k]] = cg_convert(cx, tot, IR_F32, (ir_dtype)rn->dtype);
    }
    return true;
}

/* Hold mode: accumulates reduction k over the thread's held elements (in
 * registers, memoised across passes) and sets its substitution. */
static bool cg_red_pass(cg_ctx *cx, cg_red *p, cg_rowit *it, unsigned k, LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    const ir_node *rn = &g->nodes[p->reds[k]];
    ir_id in = ir_in(g, rn, 0);
    ir_dtype idt = (ir_dtype)g->nodes[in].dtype, adt = cg_acc_dtype(rn);
    ir_op op = (ir_op)rn->op;
    if (cg_red_is_pick(p, k)) { /* the one element at the index, in every thread: no combine */
        LLVMValueRef v = cg_red_pick(cx, p, k, it->row);
        if (!v) return false;
        cg_red_set(cx, p, k, v);
        return true;
    }
    LLVMValueRef acc = cg_reduce_identity(cx, op, cg_acc_type(cx, rn));
    for (unsigned i = 0; i < p->hold; i++) {
        cg_index idx = cg_index_lin(p->S, it->lin[i]);
        LLVMValueRef v = cg_emit_value(cx, in, &idx);
        if (!v) return false;
        v = cg_convert(cx, v, idt, adt);
        LLVMValueRef c = cg_reduce_combine(cx, op, acc, v);
        acc = it->valid[i] ? LLVMBuildSelect(cx->b, it->valid[i], c, acc, "") : c;
    }
    cg_red_finish(cx, p, k, acc, scratch);
    return true;
}

/* How output o is stored: 1 = per row element (shape S), 2 = once per row
 * (the reduced shape, keepdim or not), 0 = unsupported. */
static int cg_red_out_kind(const cg_red *p, const ir_shape *o) {
    if (ir_shape_eq(o, p->S)) return 1;
    if (ir_shape_eq(o, &p->kept)) return 2;
    ir_shape kd = *p->S;
    for (unsigned a = 0; a < kd.rank; a++)
        if (p->axes & (1u << a)) kd.dim[a] = 1;
    if (ir_shape_eq(o, &kd)) return 2;
    int64_t n1 = ir_shape_numel(o), n2 = ir_shape_numel(&p->kept);
    if (n1 >= 0 && n1 == n2 && n1 == 1) return 2;
    return 0;
}

/* Stores the region's outputs for one row: per-row outputs once (thread
 * 0), row-shaped ones from the held registers, or (streaming) in one
 * epilogue loop over the row for those that depend on a reduction. */
static LLVMValueRef cg_red_hold_e0(cg_ctx *cx, const cg_red *p);
static void cg_red_prefetch(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef e0);
static bool cg_red_epi_loop(cg_ctx *cx, cg_red *p, cg_rowit *it, LLVMValueRef e0, LLVMValueRef end,
                            LLVMValueRef step, bool back);
static bool cg_red_store(cg_ctx *cx, cg_red *p, cg_rowit *it) {
    const ir_graph *g = cx->g;
    unsigned nepi = 0;
    /* Cluster rows: every exchange of the row is read by now; the row's closing cluster barrier
     * arrives here and waits after the stores (cg_red_emit), so a block's stores overlap the
     * other blocks' (a block waits only for the others to have read its slots). */
    if (p->rowmode && p->cluster > 1 && !p->pgrid) cg_cluster_arrive(cx), p->arrived = true;
    if (p->npf) cg_red_prefetch(cx, p, it->row, cg_red_hold_e0(cx, p));
    for (ir_id o = 0; o < g->n; o++) {
        if (!cg_is_region_output(cx, o)) continue;
        const ir_node *on = &g->nodes[o];
        int kind = cg_red_out_kind(p, &on->shape);
        LLVMValueRef dst = cg_buf_ptr(cx, o);
        if (kind == 0) {
            char b1[96], b2[96];
            tx_error(
                cx->diag,
                "codegen: reduction region %u stores %%%u of shape %s, neither its row shape %s "
                "nor the reduced shape",
                p->region, o, ir_shape_str(g, &on->shape, b1, sizeof b1),
                ir_shape_str(g, p->S, b2, sizeof b2));
            return false;
        }
        if (kind == 2) {
            cg_index idx = cg_index_lin(&on->shape, it->row);
            LLVMValueRef v = cg_emit_value(cx, o, &idx);
            if (!v) return false;
            LLVMValueRef first = LLVMBuildICmp(cx->b, LLVMIntEQ, cg_red_lane(cx, p),
                                               LLVMConstInt(cx->i32, 0, 0), "");
            LLVMValueRef once = p->rowmode ? first : LLVMConstInt(cx->i1, 1, 0);
            if (p->cluster > 1) /* rank 0's thread 0 of the cluster */
                once = LLVMBuildAnd(
                    cx->b, once, LLVMBuildICmp(cx->b, LLVMIntEQ, p->rank, cg_i64(cx, 0), ""), "");
            if (p->two) /* chunk 0's thread 0 of a split row */
                once = LLVMBuildAnd(
                    cx->b, once, LLVMBuildICmp(cx->b, LLVMIntEQ, p->chunk, cg_i64(cx, 0), ""), "");
            if (p->slices > 1) /* slice 0 of a column inside the kept range */
                once =
                    LLVMBuildAnd(cx->b, p->colok,
                                 LLVMBuildICmp(cx->b, LLVMIntEQ, p->slice, cg_i64(cx, 0), ""), "");
            LLVMBasicBlockRef join = cg_if_begin(cx, once);
            cg_store(cx, dst, (ir_dtype)on->dtype, it->row, v);
            cg_if_end(cx, join);
            continue;
        }
        if (p->hold && p->vec > 1) {
            unsigned nv = p->hold - (p->peel ? 1 : 0);
            if (p->peel) { /* the leftover element */
                cg_index idx = cg_index_lin(p->S, it->lin[nv]);
                LLVMValueRef v = cg_emit_value(cx, o, &idx);
                if (!v) return false;
                LLVMBasicBlockRef join = cg_if_begin(cx, it->valid[nv]);
                cg_store(cx, dst, (ir_dtype)on->dtype, it->lin[nv], v);
                cg_if_end(cx, join);
            }
            for (unsigned i = 0; i < nv; i += p->vec) {
                LLVMValueRef vals[8];
                for (unsigned j = 0; j < p->vec; j++) {
                    cg_index idx = cg_index_lin(p->S, it->lin[i + j]);
                    if (!(vals[j] = cg_emit_value(cx, o, &idx))) return false;
                }
                LLVMBasicBlockRef join = it->valid[i] ? cg_if_begin(cx, it->valid[i]) : NULL;
                cg_store_vec(cx, dst, (ir_dtype)on->dtype, it->lin[i], vals, p->vec);
                if (join) cg_if_end(cx, join);
            }
            continue;
        }
        if (p->hold) {
            for (unsigned i = 0; i < p->hold; i++) {
                cg_index idx = cg_index_lin(p->S, it->lin[i]);
                LLVMValueRef v = cg_emit_value(cx, o, &idx);
                if (!v) return false;
                if (!it->valid[i]) {
                    cg_store(cx, dst, (ir_dtype)on->dtype, it->lin[i], v);
                    continue;
                }
                LLVMBasicBlockRef join = cg_if_begin(cx, it->valid[i]);
                cg_store(cx, dst, (ir_dtype)on->dtype, it->lin[i], v);
                cg_if_end(cx, join);
            }
            continue;
        }
        /* the rest were stored by the first pass (but by the second kernel of a split2 row) */
        if (!cg_red_pro_out(p, g, o) || p->two) nepi++;
    }
    if (p->hold || !nepi) return true;
    /* The epilogue pass: one loop storing every row-shaped output that depends on a reduction
     * (cg_red_epi_loop), then the leftovers of a peeled stream. */
    LLVMValueRef end = it->eend ? it->eend : cg_red_groups(cx, p);
    if (!cg_red_epi_loop(cx, p, it, it->e0, end, it->estep,
                         (p->rowmode || p->slices > 1) && !p->nst))
        return false;
    if (p->speel) { /* the leftover elements (cg_red_stream) */
        LLVMValueRef nleft = LLVMBuildSub(
            cx->b, p->rowlen, LLVMBuildMul(cx->b, p->pg, cg_i64(cx, p->svec), ""), "peel.n");
        LLVMValueRef l0 = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "");
        if (p->cluster > 1 || p->two) /* rank 0 of a cluster, chunk 0 of a split row */
            l0 = LLVMBuildSelect(
                cx->b,
                LLVMBuildICmp(cx->b, LLVMIntEQ, p->two ? p->chunk : p->rank, cg_i64(cx, 0), ""), l0,
                nleft, "");
        p->lmode = true;
        bool ok = cg_red_epi_loop(cx, p, it, l0, nleft, cg_i64(cx, p->threads), false);
        p->lmode = false;
        if (!ok) return false;
    }
    return true;
}

/* The epilogue loop of cg_red_store over items [e0, end) by step, storing every row-shaped
 * output that depends on a reduction. `back`: a streamed row (not staged; or a column split,
 * whose slices all hold the column's statistics) runs it backwards:
 * item e of [lo, end) goes to lo + end - 1 - e (lo: the first item of the block's slice), so the
 * pass re-reads first what the previous pass read last, the part of the row still in the L2; on
 * the GPU its loads and stores stream (cx->last_use: evict first), the last use of the row. */
static bool cg_red_epi_loop(cg_ctx *cx, cg_red *p, cg_rowit *it, LLVMValueRef e0, LLVMValueRef end,
                            LLVMValueRef step, bool back) {
    const ir_graph *g = cx->g;
    cg_loop l;
    LLVMValueRef e = cg_loop_begin(cx, &l, e0, end, step, "st");
    if (back) {
        LLVMValueRef lo = it->lo ? it->lo : cg_i64(cx, 0);
        e = LLVMBuildSub(cx->b,
                         LLVMBuildAdd(cx->b, lo, LLVMBuildSub(cx->b, end, cg_i64(cx, 1), ""), ""),
                         e, "st.back");
        cx->last_use = true;
    }
    unsigned mark = cg_memo_mark(cx);
    cg_index idx[CG_VEC_MAXLIN];
    cg_red_group_begin(cx, p, it, e, idx);
    cg_red_stage_read(cx, p, e);
    for (ir_id o = 0; o < g->n; o++) {
        if (!cg_is_region_output(cx, o) || cg_red_out_kind(p, &g->nodes[o].shape) != 1 ||
            (cg_red_pro_out(p, g, o) && !p->two))
            continue;
        if (!cg_red_group_store(cx, p, o, idx)) return false;
    }
    cg_red_stage_clear(cx, p);
    cg_vec_end(cx);
    cx->last_use = false;
    cg_memo_reset(cx, mark);
    cg_loop_end(cx, &l);
    return true;
}

/* A held row of vector groups: the thread's first element e0 of the row (its lane, plus the
 * cluster rank's offset: block rank c holds groups [c gpb, (c + 1) gpb), gpb its groups). */
static LLVMValueRef cg_red_hold_e0(cg_ctx *cx, const cg_red *p) {
    LLVMValueRef e0 = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "");
    int64_t gpb = (int64_t)(p->hold / (p->vec > 1 ? p->vec : 1)) * p->threads;
    if (p->cluster > 1)
        e0 = LLVMBuildAdd(cx->b, e0, LLVMBuildMul(cx->b, p->rank, cg_i64(cx, gpb), ""), "e0");
    return e0;
}

/* A held row of vector groups (no peel): the row element that starts the thread's group i,
 * elements [(i T + e0) vec, + vec) (T threads, e0 from cg_red_hold_e0), clamped to the row's
 * last group past its end; *valid the test (NULL when the group is always inside). */
static LLVMValueRef cg_red_hold_group(cg_ctx *cx, const cg_red *p, LLVMValueRef e0, unsigned i,
                                      LLVMValueRef *valid) {
    unsigned V = p->vec;
    int64_t len = ir_shape_numel(&p->red);
    int64_t gpb = (int64_t)(p->hold / V) * p->threads, off = (int64_t)(p->cluster - 1) * gpb;
    LLVMValueRef g0 = LLVMBuildMul(
        cx->b, LLVMBuildAdd(cx->b, e0, cg_i64(cx, (int64_t)i * p->threads), ""), cg_i64(cx, V), "");
    bool always = (off + (int64_t)(i + 1) * p->threads) * V <= len;
    *valid = always ? NULL : LLVMBuildICmp(cx->b, LLVMIntSLT, g0, p->rowlen, "");
    if (*valid) g0 = LLVMBuildSelect(cx->b, *valid, g0, cg_i64(cx, len - V), "");
    return g0;
}

/* The storage vector type of prefetched row input k, and its slot for group i. */
static LLVMTypeRef cg_red_pf_type(cg_ctx *cx, const cg_red *p, unsigned k) {
    return LLVMVectorType(cg_stype(cx, (ir_dtype)cx->g->nodes[p->pfn[k]].dtype), p->vec);
}
static LLVMValueRef cg_red_pf_slot(cg_ctx *cx, const cg_red *p, unsigned k, unsigned i) {
    LLVMValueRef ix[2] = {cg_i64(cx, 0), cg_i64(cx, i)};
    LLVMTypeRef at = LLVMArrayType(cg_red_pf_type(cx, p, k), p->hold / p->vec);
    return LLVMBuildInBoundsGEP2(cx->b, at, p->pfbuf[k], ix, 2, "pf.slot");
}

/* Persistent cluster rows (npf > 0): loads the thread's groups of the row the cluster takes after
 * `row` (row + the loop step; `row` again past the last row, so the loads stay inside) into the
 * prefetch slots, which the next row body reads instead of loading. e0: cg_red_hold_e0. */
static void cg_red_prefetch(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef e0) {
    LLVMValueRef nx = row;
    if (p->rstep) {
        nx = LLVMBuildAdd(cx->b, row, p->rstep, "row.next");
        nx = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, nx, p->nrows, ""), nx, row,
                             "row.next");
    }
    for (unsigned i = 0; i < p->hold / p->vec; i++) {
        LLVMValueRef valid, lin = cg_red_lin(cx, p, nx, cg_red_hold_group(cx, p, e0, i, &valid));
        for (unsigned k = 0; k < p->npf; k++) {
            LLVMValueRef v = cg_load_vec(cx, cx->b, cx->valptr[p->pfn[k]],
                                         (ir_dtype)cx->g->nodes[p->pfn[k]].dtype, lin, p->vec);
            LLVMBuildStore(cx->b, v, cg_red_pf_slot(cx, p, k, i));
        }
    }
}

/* Emits the body for one row: element lins (hold mode), every reduction
 * pass, then the stores. */
/* The trip count of row `row`'s streaming loops: cg_red_groups, or with speel the groups from the
 * row's first aligned element, which it sets (p->pa, p->pg). */
static LLVMValueRef cg_red_row_groups(cg_ctx *cx, cg_red *p, LLVMValueRef row) {
    if (!p->speel) return cg_red_groups(cx, p);
    LLVMValueRef v = cg_i64(cx, p->svec);
    LLVMValueRef r0 = LLVMBuildURem(cx->b, cg_red_lin(cx, p, row, cg_i64(cx, 0)), v, "");
    p->pa = LLVMBuildURem(cx->b, LLVMBuildSub(cx->b, v, r0, ""), v, "peel.a");
    p->pg = LLVMBuildUDiv(cx->b, LLVMBuildSub(cx->b, p->rowlen, p->pa, ""), v, "peel.g");
    return p->pg;
}

/* A split row's block (row, chunk p->chunk): its items [chunk q, min(G, (chunk + 1) q)) of the
 * row's G streaming items (cg_red_row_groups; q = ceil(G / splits)) into *it, thread `lane` from
 * the chunk's first item by the block's threads; it->lo: the chunk's first item (a backward
 * epilogue stays inside the chunk). Chunk 0 takes a peeled row's leftovers (cg_red_stream). */
static void cg_red_chunk_it(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef lane,
                            cg_rowit *it) {
    LLVMValueRef G = cg_red_row_groups(cx, p, row);
    LLVMValueRef q = LLVMBuildUDiv(cx->b, LLVMBuildAdd(cx->b, G, cg_i64(cx, p->splits - 1), ""),
                                   cg_i64(cx, p->splits), "chunk.q");
    LLVMValueRef g0 = LLVMBuildMul(cx->b, p->chunk, q, "chunk.g0");
    LLVMValueRef g1 = LLVMBuildAdd(cx->b, g0, q, "");
    LLVMValueRef lt = LLVMBuildICmp(cx->b, LLVMIntULT, g1, G, "");
    it->eend = LLVMBuildSelect(cx->b, lt, g1, G, "chunk.g1");
    it->lo = g0;
    it->e0 = LLVMBuildAdd(cx->b, g0, lane, "");
    it->estep = cg_i64(cx, p->threads);
    it->x0 = it->e0;
    it->xend = p->rowlen;
}

static bool cg_red_row(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef scratch) {
    cg_rowit it;
    memset(&it, 0, sizeof it);
    it.row = row;
    if (p->pgrid) { /* this row's slot set and tag; the next row takes the other set */
        p->xpar = LLVMBuildLoad2(cx->b, cx->i32, p->parv, "xpar");
        LLVMBuildStore(cx->b,
                       LLVMBuildXor(cx->b, p->xpar, LLVMConstInt(cx->i32, CG_RED_XSLOTS, 0), ""),
                       p->parv);
        if (p->tagv) {
            p->xtag = LLVMBuildLoad2(cx->b, cx->i64, p->tagv, "xtag");
            LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, p->xtag, cg_i64(cx, 1ll << 32), ""), p->tagv);
        }
    }
    if (p->rowmode) {
        it.e0 = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "");
        it.estep = cg_i64(cx, p->threads);
    } else if (p->slices > 1) {
        it.e0 = p->slice;
        it.estep = cg_i64(cx, p->slices);
    } else {
        it.e0 = cg_i64(cx, 0);
        it.estep = cg_i64(cx, 1);
    }
    it.eend = cg_red_row_groups(cx, p, row);
    it.x0 = it.e0;
    it.xend = p->rowlen;
    if (!p->hold && p->cluster > 1) {
        /* A streamed cluster row: block rank c takes items [c S, min((c + 1) S, items)), S =
         * ceil(items / C) (items: the loops' groups of svec elements, or elements); the element
         * loop the same elements. */
        int64_t items = p->svec > 1 ? ir_shape_numel(&p->red) / p->svec : ir_shape_numel(&p->red);
        int64_t S = (items + p->cluster - 1) / p->cluster, V = p->svec > 1 ? p->svec : 1;
        LLVMValueRef lo = LLVMBuildMul(cx->b, p->rank, cg_i64(cx, S), "slice.lo");
        LLVMValueRef hi = LLVMBuildAdd(cx->b, lo, cg_i64(cx, S), "");
        LLVMValueRef lt = LLVMBuildICmp(cx->b, LLVMIntULT, hi, it.eend, "");
        it.eend = LLVMBuildSelect(cx->b, lt, hi, it.eend, "slice.hi");
        it.e0 = LLVMBuildAdd(cx->b, it.e0, lo, "");
        it.lo = lo;
        LLVMValueRef vv = cg_i64(cx, V);
        it.x0 = LLVMBuildAdd(cx->b, it.x0, LLVMBuildMul(cx->b, lo, vv, ""), "");
        it.xend = LLVMBuildMul(cx->b, it.eend, vv, "");
    }
    /* Cluster rows: block rank c holds groups [c gpb, (c + 1) gpb) of the row (gpb: its groups);
     * `off` is the last block's offset, for the always-valid tests below. */
    int64_t gpb = p->hold ? (int64_t)(p->hold / (p->vec > 1 ? p->vec : 1)) * p->threads : 0;
    int64_t off = (int64_t)(p->cluster - 1) * gpb;
    LLVMValueRef e0 = it.e0;
    if (p->hold && p->cluster > 1)
        e0 = LLVMBuildAdd(cx->b, e0, LLVMBuildMul(cx->b, p->rank, cg_i64(cx, gpb), ""), "e0");
    if (p->hold && p->peel) {
        /* Group i of the thread: elements a + [(i T + tid) vec, + vec), a = the row's first
         * element at an aligned lin, valid while inside the row; its leftover element (lane l
         * < len - G vec, G = (len - a) / vec groups): l before a, else G vec + l. */
        unsigned V = p->vec, nv = p->hold - 1;
        int64_t len = ir_shape_numel(&p->red);
        LLVMValueRef r0 = cg_red_lin(cx, p, row, cg_i64(cx, 0));
        LLVMValueRef a = LLVMBuildURem(
            cx->b,
            LLVMBuildSub(cx->b, cg_i64(cx, V), LLVMBuildURem(cx->b, r0, cg_i64(cx, V), ""), ""),
            cg_i64(cx, V), "peel.a");
        for (unsigned i = 0; i < nv / V; i++) {
            LLVMValueRef g0 = LLVMBuildAdd(
                cx->b, a,
                LLVMBuildMul(cx->b,
                             LLVMBuildAdd(cx->b, e0, cg_i64(cx, (int64_t)i * p->threads), ""),
                             cg_i64(cx, V), ""),
                "");
            LLVMValueRef valid = LLVMBuildICmp(
                cx->b, LLVMIntSLE, LLVMBuildAdd(cx->b, g0, cg_i64(cx, V), ""), p->rowlen, "");
            g0 = LLVMBuildSelect(cx->b, valid, g0, a, "");
            for (unsigned j = 0; j < V; j++) {
                LLVMValueRef e = j ? LLVMBuildAdd(cx->b, g0, cg_i64(cx, j), "") : g0;
                it.lin[i * V + j] = cg_red_lin(cx, p, row, e);
                it.valid[i * V + j] = valid;
            }
        }
        LLVMValueRef gv = LLVMBuildMul(
            cx->b,
            LLVMBuildUDiv(cx->b, LLVMBuildSub(cx->b, cg_i64(cx, len), a, ""), cg_i64(cx, V), ""),
            cg_i64(cx, V), "peel.gv");
        LLVMValueRef x = LLVMBuildSub(cx->b, cg_i64(cx, len), gv, "peel.x");
        LLVMValueRef l = it.e0;
        LLVMValueRef e = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, l, a, ""), l,
                                         LLVMBuildAdd(cx->b, gv, l, ""), "");
        it.valid[nv] = LLVMBuildICmp(cx->b, LLVMIntULT, l, x, "peel.ok");
        e = LLVMBuildSelect(cx->b, it.valid[nv], e, cg_i64(cx, 0), "");
        it.lin[nv] = cg_red_lin(cx, p, row, e);
        cg_vec_begin(cx, p->S, V, nv, it.lin, NULL);
    } else if (p->hold && p->vec > 1) {
        unsigned V = p->vec;
        for (unsigned i = 0; i < p->hold / V; i++) {
            LLVMValueRef valid, g0 = cg_red_hold_group(cx, p, e0, i, &valid);
            for (unsigned j = 0; j < V; j++) {
                LLVMValueRef e = j ? LLVMBuildAdd(cx->b, g0, cg_i64(cx, j), "") : g0;
                it.lin[i * V + j] = cg_red_lin(cx, p, row, e);
                it.valid[i * V + j] = valid;
            }
        }
        cg_vec_begin(cx, p->S, V, p->hold, it.lin, NULL);
        if (p->npf) { /* this row's groups, loaded one row ahead */
            for (unsigned k = 0; k < p->npf; k++)
                for (unsigned i = 0; i < p->hold / V; i++) {
                    cx->veccache[(size_t)p->pfn[k] * CG_VEC_MAXLIN + i] = LLVMBuildLoad2(
                        cx->b, cg_red_pf_type(cx, p, k), cg_red_pf_slot(cx, p, k, i), "pf");
                    cx->vecbase[(size_t)p->pfn[k] * CG_VEC_MAXLIN + i] = it.lin[i * V];
                }
        }
    } else if (p->hold) {
        LLVMValueRef last = LLVMBuildSub(cx->b, p->rowlen, cg_i64(cx, 1), "");
        int64_t len = ir_shape_numel(&p->red);
        for (unsigned i = 0; i < p->hold; i++) {
            LLVMValueRef e =
                LLVMBuildAdd(cx->b, e0, cg_i64(cx, (int64_t)i * (p->rowmode ? p->threads : 1)), "");
            bool always = !p->rowmode || off + (int64_t)(i + 1) * p->threads <= len;
            it.valid[i] = always ? NULL : LLVMBuildICmp(cx->b, LLVMIntSLT, e, p->rowlen, "");
            if (it.valid[i]) e = LLVMBuildSelect(cx->b, it.valid[i], e, last, "");
            it.lin[i] = cg_red_lin(cx, p, row, e);
        }
    }
    bool ok = true;
    if (p->hold) {
        for (unsigned k = 0; k < p->nred && ok; k++) ok = cg_red_pass(cx, p, &it, k, scratch);
    } else if (p->online) {
        ok = cg_red_stream(cx, p, &it, 0, true, scratch);
    } else {
        for (unsigned lev = 1; lev <= p->nlev && ok; lev++) {
            ok = cg_red_stream(cx, p, &it, lev, lev == 1, scratch);
            /* Staged: the row's words are written before any later pass reads them. */
            if (ok && lev == 1 && p->nst) cg_barrier(cx);
        }
    }
    if (ok) ok = cg_red_store(cx, p, &it);
    cg_vec_end(cx);
    return ok;
}

/* Persistent cluster rows (p->pgrid), before the row loop from `start` by `step`: the slot-set
 * parity and, for a held row of vector groups, the prefetch slots of its row inputs (the HBM
 * values of the row's shape the kernel reads, at most CG_RED_PFN) with the first row's groups. */
static void cg_red_persist_begin(cg_ctx *cx, cg_red *p, LLVMValueRef start, LLVMValueRef step) {
    LLVMBuilderRef eb = LLVMCreateBuilderInContext(cx->llctx);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(cx->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(eb, first);
    else
        LLVMPositionBuilderAtEnd(eb, entry);
    p->parv = LLVMBuildAlloca(eb, cx->i32, "xpar.v");
    LLVMBuildStore(cx->b, LLVMConstInt(cx->i32, 0, 0), p->parv);
    if (cx->gpu) { /* tagged exchanges: the slots cleared (no tag) before any block polls */
        p->tagv = LLVMBuildAlloca(eb, cx->i64, "xtag.v");
        LLVMBuildStore(cx->b, cg_i64(cx, 1ll << 32), p->tagv);
        cg_loop zl;
        LLVMValueRef i =
            cg_loop_begin(cx, &zl, LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, ""),
                          cg_i64(cx, 2 * CG_RED_XSLOTS), cg_i64(cx, p->threads), "xzero");
        LLVMBuildStore(cx->b, cg_i64(cx, 0),
                       LLVMBuildInBoundsGEP2(cx->b, cx->i64, p->xslot, &i, 1, ""));
        cg_loop_end(cx, &zl);
        cg_cluster_sync(cx);
    }
    p->rstep = step;
    p->npf = 0;
    if (p->hold && p->vec > 1 && !p->peel) {
        pass_io io;
        pass_region_io(cx->g, cx->pix, p->region, &io);
        bool fit = io.nrowreads <= CG_RED_PFN;
        for (uint32_t i = 0; fit && i < io.nrowreads; i++) {
            ir_id id = io.rowreads[i];
            if (cx->valptr[id] && ir_shape_eq(&cx->g->nodes[id].shape, p->S)) p->pfn[p->npf++] = id;
        }
        pass_io_free(&io);
        if (!fit) p->npf = 0;
        for (unsigned k = 0; k < p->npf; k++)
            p->pfbuf[k] = LLVMBuildAlloca(
                eb, LLVMArrayType(cg_red_pf_type(cx, p, k), p->hold / p->vec), "pf");
        if (p->npf) {
            LLVMValueRef rs = p->rstep;
            p->rstep = NULL; /* the first row itself */
            cg_red_prefetch(cx, p, start, cg_red_hold_e0(cx, p));
            p->rstep = rs;
        }
    }
    LLVMDisposeBuilder(eb);
}

/* Which kernel cg_red_emit writes: the region's one kernel, the one of [reduction.column_blocks]
 * (PARTS: the chunks' partials, combined by each tile's last block), or the two of
 * [reduction.row_split2] (STATS, NORM). */
enum { CG_RED_ONE = 0, CG_RED_PARTS = 1, CG_RED_STATS = 3, CG_RED_NORM = 4 };

static bool cg_red_col_last(cg_ctx *cx, cg_red *p, LLVMValueRef scratch);

/* [reduction.column_blocks], block (tile, chunk): reduces its columns over chunk `program_id(1)`
 * of the reduced axis (groups [chunk q, min(G, (chunk + 1) q)) of the streaming loop, q =
 * ceil(G / splits)); slice 0 of each column stores the combined partial (a mean's sum before the
 * division) to word (k splits + chunk) x kept + column of the scratch temp (an empty chunk stores
 * the identity); then the tile's last block combines them (cg_red_col_last). */
static bool cg_red_part_row(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef scratch) {
    cg_rowit it;
    memset(&it, 0, sizeof it);
    it.row = row;
    int64_t G = ir_shape_numel(&p->red) / (p->svec > 1 ? p->svec : 1);
    int64_t q = (G + p->splits - 1) / p->splits;
    LLVMValueRef chunk = cg_program_id(cx, 1);
    LLVMValueRef g0 = LLVMBuildMul(cx->b, chunk, cg_i64(cx, q), "chunk.g0");
    LLVMValueRef g1 = LLVMBuildAdd(cx->b, g0, cg_i64(cx, q), "");
    it.eend = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, g1, cg_i64(cx, G), ""), g1,
                              cg_i64(cx, G), "chunk.g1");
    it.e0 = p->slices > 1 ? LLVMBuildAdd(cx->b, g0, p->slice, "") : g0;
    it.estep = cg_i64(cx, p->slices > 1 ? p->slices : 1);
    if (!cg_red_stream(cx, p, &it, 1, true, scratch)) return false;
    LLVMValueRef once =
        p->slices > 1
            ? LLVMBuildAnd(cx->b, p->colok,
                           LLVMBuildICmp(cx->b, LLVMIntEQ, p->slice, cg_i64(cx, 0), ""), "")
            : LLVMConstInt(cx->i1, 1, 0);
    LLVMBasicBlockRef join = cg_if_begin(cx, once);
    for (unsigned k = 0; k < p->nred; k++) {
        LLVMValueRef v = p->partv[k];
        LLVMValueRef at = LLVMBuildAdd(
            cx->b, LLVMBuildMul(cx->b, cg_i64(cx, (int64_t)k * p->splits), p->nrows, ""),
            LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, chunk, p->nrows, ""), row, ""), "part.at");
        LLVMBuildStore(cx->b, v,
                       LLVMBuildInBoundsGEP2(cx->b, LLVMTypeOf(v), cx->xtemp_ptr, &at, 1, ""));
    }
    cg_if_end(cx, join);
    return cg_red_col_last(cx, p, scratch);
}

/* [reduction.column_blocks], in the block that drew its tile's last ticket: column `col`'s
 * `splits` partials of each reduction in chunk order (slice s of the combine block q takes groups
 * s, s + slices, ... of u consecutive partials, u the largest of 8, 4, 2, 1 dividing splits, loaded
 * volatile before their combines: other blocks of this launch stored them), the slices combined
 * in slice order (cg_red_finish, which sets the reductions' values). Every thread of the block
 * runs it (the slice combine's barriers). */
static void cg_red_comb_col(cg_ctx *cx, cg_red *p, LLVMValueRef col, LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    unsigned P = p->splits, U = 8;
    while (P % U) U /= 2;
    LLVMValueRef init[CG_RED_MAXRED], phi[CG_RED_MAXRED], nxt[CG_RED_MAXRED];
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        init[k] = cg_reduce_identity(cx, op, cg_acc_type(cx, rn));
    }
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    cg_loop l;
    LLVMValueRef e0 = p->slices > 1 ? p->slice : cg_i64(cx, 0);
    LLVMValueRef e = cg_loop_begin(cx, &l, e0, cg_i64(cx, P / U),
                                   cg_i64(cx, p->slices > 1 ? p->slices : 1), "comb");
    LLVMPositionBuilderBefore(cx->b, LLVMGetFirstInstruction(l.head));
    for (unsigned k = 0; k < p->nred; k++) {
        phi[k] = LLVMBuildPhi(cx->b, LLVMTypeOf(init[k]), "acc");
        LLVMAddIncoming(phi[k], &init[k], &pre, 1);
    }
    LLVMPositionBuilderAtEnd(cx->b, l.body);
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        LLVMTypeRef st = cg_ctype(cx, cg_acc_dtype(rn));
        LLVMValueRef vals[8], acc = phi[k];
        for (unsigned j = 0; j < U; j++) {
            LLVMValueRef pe =
                LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, e, cg_i64(cx, U), ""), cg_i64(cx, j), "");
            LLVMValueRef at = LLVMBuildAdd(
                cx->b,
                LLVMBuildMul(cx->b, LLVMBuildAdd(cx->b, cg_i64(cx, (int64_t)k * P), pe, ""),
                             p->nrows, ""),
                col, "part.at");
            vals[j] = LLVMBuildLoad2(
                cx->b, st, LLVMBuildInBoundsGEP2(cx->b, st, cx->xtemp_ptr, &at, 1, ""), "part");
            LLVMSetVolatile(vals[j], 1);
        }
        for (unsigned j = 0; j < U; j++) {
            LLVMValueRef v = vals[j];
            if (LLVMTypeOf(acc) == cx->f64) v = LLVMBuildFPExt(cx->b, v, cx->f64, "");
            acc = cg_reduce_combine(cx, op, acc, v);
        }
        nxt[k] = acc;
    }
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
    for (unsigned k = 0; k < p->nred; k++) LLVMAddIncoming(phi[k], &nxt[k], &latch, 1);
    cg_loop_end(cx, &l);
    for (unsigned k = 0; k < p->nred; k++) cg_red_finish(cx, p, k, phi[k], scratch);
}

/* [reduction.column_blocks]: kept elements per tile (per ticket): cols x kv (a block of column
 * vectors; kv on the host), cols (a block of slices), 1 (the host's one column a program). */
static int64_t cg_red_tile_cols(const cg_red *p) {
    return p->kv > 1 ? (int64_t)(p->cols ? p->cols : 1) * p->kv : p->slices > 1 ? p->cols : 1;
}

static LLVMValueRef cg_red_ticket(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef first);

/* [reduction.column_blocks], block (tile p->tile, chunk) after its threads stored their partials:
 * a barrier (every thread's partials stored before thread 0's release), then the tile's ticket
 * (cg_red_ticket). Only the block that draws the tile's last of `splits` tickets goes on: its
 * threads regroup as the combine block q (GPU: cols 2^j columns by slices / 2^j slices, 2^j
 * the smallest leaving at most 32 slices but at most kv, so a slice's unrolled reads stay few;
 * the host: one column), combine the tile's columns, cols(q) at a time in a loop in tile order
 * (cg_red_comb_col), and store the region's per-column outputs; thread 0 then resets the
 * tile's ticket, so the workspace is zero again when the kernel ends. Every thread of the block
 * runs it. */
static bool cg_red_col_last(cg_ctx *cx, cg_red *p, LLVMValueRef scratch) {
    LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
    LLVMValueRef first = LLVMBuildICmp(cx->b, LLVMIntEQ, tid, cg_i64(cx, 0), "");
    cg_barrier(cx);
    LLVMValueRef last = cg_red_ticket(cx, p, p->tile, first);
    LLVMBasicBlockRef jl = cg_if_begin(cx, last);
    cg_red q = *p;
    if (!cx->gpu) q.cols = 1, q.slices = 1;
    for (unsigned f = q.kv; cx->gpu && f > 1 && q.slices > 32; f /= 2) q.cols *= 2, q.slices /= 2;
    q.kv = 1;
    int64_t tc = cg_red_tile_cols(p), nsub = tc / q.cols;
    LLVMValueRef base = LLVMBuildMul(cx->b, p->tile, cg_i64(cx, tc), "tile.base");
    LLVMValueRef lane = q.slices > 1 ? LLVMBuildURem(cx->b, tid, cg_i64(cx, q.cols), "") : NULL;
    q.slice = q.slices > 1 ? LLVMBuildUDiv(cx->b, tid, cg_i64(cx, q.cols), "slice") : NULL;
    bool ok = true;
    cg_loop ls; /* the tile's columns, cols(q) at a time */
    LLVMValueRef sub =
        cg_loop_begin(cx, &ls, cg_i64(cx, 0), cg_i64(cx, nsub), cg_i64(cx, 1), "sub");
    {
        unsigned mk = cg_memo_mark(cx);
        LLVMValueRef col =
            LLVMBuildAdd(cx->b, base, LLVMBuildMul(cx->b, sub, cg_i64(cx, q.cols), ""), "");
        if (lane) col = LLVMBuildAdd(cx->b, col, lane, "");
        q.colok = LLVMBuildICmp(cx->b, LLVMIntULT, col, p->nrows, "colok");
        col = LLVMBuildSelect(cx->b, q.colok, col, LLVMBuildSub(cx->b, p->nrows, cg_i64(cx, 1), ""),
                              "col");
        cg_red_comb_col(cx, &q, col, scratch);
        cg_rowit it;
        memset(&it, 0, sizeof it);
        it.row = col;
        ok = cg_red_store(cx, &q, &it);
        for (unsigned k = 0; k < p->nred; k++) cx->subst[p->reds[k]] = NULL;
        cg_memo_reset(cx, mk);
    }
    cg_loop_end(cx, &ls);
    LLVMBasicBlockRef jz = cg_if_begin(cx, first);
    LLVMBuildStore(cx->b, LLVMConstInt(cx->i32, 0, 0),
                   LLVMBuildInBoundsGEP2(cx->b, cx->i32, p->wsp, &p->tile, 1, ""));
    cg_if_end(cx, jz);
    cg_if_end(cx, jl);
    cg_barrier(cx); /* the flag is read by every thread before the next tile sets it */
    return ok;
}

/* Column vectors (kv > 1), the region's one kernel (phase CG_RED_ONE) or the kernel of
 * [reduction.column_blocks] (CG_RED_PARTS, chunk program_id(1): the partials, then the tile's
 * last block combines them, cg_red_col_last): block `tile` covers kept
 * elements [tile C kv, (tile + 1) C kv); thread (slice s, column c) = tid (s C + c) accumulates
 * kept elements [tile C kv + c kv, + kv) over the groups of svec reduced elements of its slice
 * (s, s + R, ...; in the partials kernel those of its chunk), each group's svec x kv elements
 * through svec vector loads issued before their combines. With R > 1 slices (a multiple of kv)
 * the partials meet in shared memory (`scratch`, threads x (kv + 1) words) in two levels, every
 * thread helping, and thread t < C kv combines kept element tile C kv + t in slice order and
 * stores it; with one
 * slice (the host) the thread stores its kv elements. One stage, outputs of the reduced shape
 * only (the planner's col_vec). Every thread of the block runs it (barriers). */
static bool cg_red_colv_row(cg_ctx *cx, cg_red *p, LLVMValueRef tile, LLVMValueRef scratch,
                            int phase) {
    const ir_graph *g = cx->g;
    enum { KMAX = 16 };
    unsigned K = p->kv, V = p->svec > 1 ? p->svec : 1, C = p->cols,
             R = p->slices > 1 ? p->slices : 1;
    if (K > KMAX || V * K > CG_VEC_MAXLIN || p->nlev != 1 || (R > 1 && R % K)) {
        tx_error(cx->diag, "codegen: reduction region %u: column vectors of %u x %u elements",
                 p->region, V, K);
        return false;
    }
    LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
    LLVMValueRef col =
        R > 1 || C > 1 ? LLVMBuildURem(cx->b, tid, cg_i64(cx, C), "col") : cg_i64(cx, 0);
    LLVMValueRef slice = R > 1 ? LLVMBuildUDiv(cx->b, tid, cg_i64(cx, C), "slice") : cg_i64(cx, 0);
    LLVMValueRef base = LLVMBuildMul(cx->b, tile, cg_i64(cx, (int64_t)C * K), "tile.base");
    LLVMValueRef row0 = LLVMBuildAdd(cx->b, base, LLVMBuildMul(cx->b, col, cg_i64(cx, K), ""), "");
    LLVMValueRef last = LLVMBuildSub(cx->b, p->nrows, cg_i64(cx, K), "");
    row0 = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, row0, p->nrows, ""), row0, last,
                           "row0");
    /* The thread's groups: [e0, eend) step R. */
    int64_t G = ir_shape_numel(&p->red) / V;
    LLVMValueRef e0 = slice, eend = cg_i64(cx, G), chunk = NULL;
    if (phase == CG_RED_PARTS) {
        int64_t q = (G + p->splits - 1) / p->splits;
        chunk = cg_program_id(cx, 1);
        LLVMValueRef g0 = LLVMBuildMul(cx->b, chunk, cg_i64(cx, q), "chunk.g0");
        LLVMValueRef g1 = LLVMBuildAdd(cx->b, g0, cg_i64(cx, q), "");
        eend = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, g1, eend, ""), g1, eend,
                               "chunk.g1");
        e0 = LLVMBuildAdd(cx->b, g0, slice, "");
    }
    LLVMValueRef init[CG_RED_MAXRED * KMAX], phi[CG_RED_MAXRED * KMAX], nxt[CG_RED_MAXRED * KMAX];
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        for (unsigned q = 0; q < K; q++)
            init[k * K + q] = cg_reduce_identity(cx, op, cg_acc_type(cx, rn));
    }
    unsigned na = p->nred * K;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    cg_loop l;
    LLVMValueRef e = cg_loop_begin(cx, &l, e0, eend, cg_i64(cx, R), "red");
    LLVMPositionBuilderBefore(cx->b, LLVMGetFirstInstruction(l.head));
    for (unsigned i = 0; i < na; i++) {
        phi[i] = LLVMBuildPhi(cx->b, LLVMTypeOf(init[i]), "acc");
        LLVMAddIncoming(phi[i], &init[i], &pre, 1);
    }
    LLVMPositionBuilderAtEnd(cx->b, l.body);
    unsigned mark = cg_memo_mark(cx);
    LLVMValueRef lins[CG_VEC_MAXLIN];
    cg_index idx[CG_VEC_MAXLIN];
    LLVMValueRef ev = LLVMBuildMul(cx->b, e, cg_i64(cx, V), "");
    for (unsigned j = 0; j < V; j++) {
        LLVMValueRef ej = j ? LLVMBuildAdd(cx->b, ev, cg_i64(cx, j), "") : ev;
        LLVMValueRef l0 = cg_red_lin(cx, p, row0, ej);
        for (unsigned q = 0; q < K; q++) {
            lins[j * K + q] = q ? LLVMBuildNUWAdd(cx->b, l0, cg_i64(cx, q), "") : l0;
            idx[j * K + q] = cg_index_lin(p->S, lins[j * K + q]);
        }
    }
    cg_vec_begin(cx, p->S, K, V * K, lins, NULL);
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_id in = ir_in(g, rn, 0);
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        for (unsigned q = 0; q < K; q++) nxt[k * K + q] = phi[k * K + q];
        for (unsigned j = 0; j < V; j++)
            for (unsigned q = 0; q < K; q++) {
                LLVMValueRef v = cg_emit_value(cx, in, &idx[j * K + q]);
                if (!v) return false;
                nxt[k * K + q] = cg_reduce_combine(
                    cx, op, nxt[k * K + q],
                    cg_convert(cx, v, (ir_dtype)g->nodes[in].dtype, cg_acc_dtype(rn)));
            }
    }
    cg_vec_end(cx);
    cg_memo_reset(cx, mark);
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
    for (unsigned i = 0; i < na; i++) LLVMAddIncoming(phi[i], &nxt[i], &latch, 1);
    cg_loop_end(cx, &l);
    /* The output slots: one per thread (R > 1), else the thread's kv elements. */
    unsigned ns = R > 1 ? 1 : K;
    LLVMValueRef res[CG_RED_MAXRED * KMAX], rows[KMAX], oks[KMAX];
    if (R > 1) {
        LLVMValueRef t = LLVMBuildSelect(
            cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, tid, cg_i64(cx, (int64_t)C * K), ""), tid,
            cg_i64(cx, (int64_t)C * K - 1), "");
        LLVMValueRef r = LLVMBuildAdd(cx->b, base, t, "");
        oks[0] = LLVMBuildAnd(cx->b,
                              LLVMBuildICmp(cx->b, LLVMIntULT, tid, cg_i64(cx, (int64_t)C * K), ""),
                              LLVMBuildICmp(cx->b, LLVMIntULT, r, p->nrows, ""), "colok");
        rows[0] =
            LLVMBuildSelect(cx->b, oks[0], r, LLVMBuildSub(cx->b, p->nrows, cg_i64(cx, 1), ""), "");
        for (unsigned k = 0; k < p->nred; k++) {
            const ir_node *rn = &g->nodes[p->reds[k]];
            ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
            LLVMTypeRef ty = LLVMTypeOf(phi[k * K]);
            for (unsigned q = 0; q < K; q++) {
                LLVMValueRef at = LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, tid, cg_i64(cx, K), ""),
                                               cg_i64(cx, q), "");
                LLVMBuildStore(cx->b, phi[k * K + q],
                               LLVMBuildInBoundsGEP2(cx->b, ty, scratch, &at, 1, ""));
            }
            cg_barrier(cx);
            /* Two levels, all threads: helper h = tid / W of column w = tid % W (W = C kv) adds
             * slices [h kv, (h + 1) kv) into word T + h W + w; then column t adds its R / kv
             * helpers' words in order. */
            unsigned W = C * K, H = R / K;
            LLVMValueRef w = LLVMBuildURem(cx->b, tid, cg_i64(cx, W), "");
            LLVMValueRef h = LLVMBuildUDiv(cx->b, tid, cg_i64(cx, W), "");
            LLVMValueRef acc = NULL;
            for (unsigned sl = 0; sl < K; sl++) {
                LLVMValueRef at = LLVMBuildAdd(
                    cx->b, w,
                    LLVMBuildMul(cx->b,
                                 LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, h, cg_i64(cx, K), ""),
                                              cg_i64(cx, sl), ""),
                                 cg_i64(cx, W), ""),
                    "");
                LLVMValueRef x = LLVMBuildLoad2(
                    cx->b, ty, LLVMBuildInBoundsGEP2(cx->b, ty, scratch, &at, 1, ""), "");
                acc = acc ? cg_reduce_combine(cx, op, acc, x) : x;
            }
            LLVMValueRef at2 = LLVMBuildAdd(cx->b, tid, cg_i64(cx, (int64_t)C * R * K), "");
            LLVMBuildStore(cx->b, acc, LLVMBuildInBoundsGEP2(cx->b, ty, scratch, &at2, 1, ""));
            cg_barrier(cx);
            acc = NULL;
            for (unsigned hh = 0; hh < H; hh++) {
                LLVMValueRef at =
                    LLVMBuildAdd(cx->b, t, cg_i64(cx, (int64_t)C * R * K + hh * W), "");
                LLVMValueRef x = LLVMBuildLoad2(
                    cx->b, ty, LLVMBuildInBoundsGEP2(cx->b, ty, scratch, &at, 1, ""), "");
                acc = acc ? cg_reduce_combine(cx, op, acc, x) : x;
            }
            cg_barrier(cx);
            res[k] = acc;
        }
    } else {
        for (unsigned q = 0; q < K; q++) {
            rows[q] = q ? LLVMBuildAdd(cx->b, row0, cg_i64(cx, q), "") : row0;
            oks[q] = LLVMBuildICmp(cx->b, LLVMIntULT, rows[q], p->nrows, "colok");
            for (unsigned k = 0; k < p->nred; k++) res[q * p->nred + k] = phi[k * K + q];
        }
    }
    for (unsigned o = 0; o < ns; o++) {
        unsigned mk = cg_memo_mark(cx);
        LLVMValueRef part[CG_RED_MAXRED];
        for (unsigned k = 0; k < p->nred; k++)
            part[k] = R > 1 ? cg_red_set(cx, p, k, res[o * p->nred + k])
                            : cg_red_finish(cx, p, k, res[o * p->nred + k], scratch);
        if (phase == CG_RED_PARTS) {
            LLVMBasicBlockRef join = cg_if_begin(cx, oks[o]);
            for (unsigned k = 0; k < p->nred; k++) {
                LLVMValueRef at = LLVMBuildAdd(
                    cx->b, LLVMBuildMul(cx->b, cg_i64(cx, (int64_t)k * p->splits), p->nrows, ""),
                    LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, chunk, p->nrows, ""), rows[o], ""),
                    "part.at");
                LLVMBuildStore(
                    cx->b, part[k],
                    LLVMBuildInBoundsGEP2(cx->b, LLVMTypeOf(part[k]), cx->xtemp_ptr, &at, 1, ""));
            }
            cg_if_end(cx, join);
        } else {
            cg_rowit it;
            memset(&it, 0, sizeof it);
            it.row = rows[o];
            p->colok = oks[o];
            p->slice = cg_i64(cx, 0);
            unsigned sv = p->slices;
            p->slices = 2; /* cg_red_store's once: colok */
            bool ok = cg_red_store(cx, p, &it);
            p->slices = sv;
            if (!ok) return false;
        }
        for (unsigned k = 0; k < p->nred; k++) cx->subst[p->reds[k]] = NULL;
        cg_memo_reset(cx, mk);
    }
    return phase == CG_RED_PARTS ? cg_red_col_last(cx, p, scratch) : true;
}

/* [reduction.row_split], thread 0 of block (row, chunk): the row's ticket, after the block's
 * partials are stored (their release: a fence at GPU scope before the atomic add, seq_cst on the
 * host); true in the block that draws the row's last of `splits` tickets, through the shared
 * flag and a barrier to every thread of the block, after an acquire fence. */
static LLVMValueRef cg_red_ticket(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef first) {
    LLVMValueRef tp = LLVMBuildInBoundsGEP2(cx->b, cx->i32, p->wsp, &row, 1, "ticket");
    LLVMBasicBlockRef join = cg_if_begin(cx, first);
    LLVMValueRef old;
    if (cx->gpu) {
        LLVMValueRef a = LLVMBuildPtrToInt(cx->b, tp, cx->i64, "");
        old = cg_red_xasm(cx, cx->i32,
                          "fence.acq_rel.gpu;\n\tatom.relaxed.gpu.global.add.u32 $0, [$1], 1;",
                          "=r,l,~{memory}", &a, 1);
    } else {
        LLVMBuildFence(cx->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
        old = LLVMBuildAtomicRMW(cx->b, LLVMAtomicRMWBinOpAdd, tp, LLVMConstInt(cx->i32, 1, 0),
                                 LLVMAtomicOrderingAcquireRelease, 0);
    }
    LLVMValueRef last =
        LLVMBuildICmp(cx->b, LLVMIntEQ, old, LLVMConstInt(cx->i32, p->splits - 1, 0), "last");
    LLVMBuildStore(cx->b, LLVMBuildZExt(cx->b, last, cx->i32, ""), p->lastf);
    cg_if_end(cx, join);
    cg_barrier(cx);
    LLVMValueRef is = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildLoad2(cx->b, cx->i32, p->lastf, ""),
                                    LLVMConstInt(cx->i32, 0, 0), "is.last");
    LLVMBasicBlockRef j2 = cg_if_begin(cx, is);
    if (cx->gpu)
        cg_red_xasm(cx, NULL, "fence.acq_rel.gpu;", "~{memory}", NULL, 0);
    else
        LLVMBuildFence(cx->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
    cg_if_end(cx, j2);
    return is;
}

/* The workspace word of reduction k's partial of chunk c of row `row` (after the nrows tickets). */
static LLVMValueRef cg_red_part_at(cg_ctx *cx, const cg_red *p, unsigned k, LLVMValueRef c,
                                   LLVMValueRef row) {
    LLVMValueRef kc = LLVMBuildAdd(cx->b, cg_i64(cx, (int64_t)k * p->splits + 1), c, "");
    return LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, kc, p->nrows, ""), row, "part.at");
}

/* [reduction.row_split], block (row, chunk = program_id(1)): streams items [chunk q, min(G,
 * (chunk + 1) q)) of its row (G: the row's groups of svec elements, from its first aligned element
 * with speel, whose leftovers chunk 0 takes; q = ceil(G / splits)), combines them over the block,
 * and thread 0 stores each reduction's partial (a mean's sum before the division) to its word
 * (cg_red_part_at) and takes the row's ticket (cg_red_ticket). Only the block that draws the
 * last ticket, when every partial of the row is stored, goes on: its threads load the partials
 * (thread t: chunks t, t + threads, ...; volatile, so no cache line of an earlier launch serves
 * them), zero the words they read, combine them over the block (cg_red_finish: the mean divided
 * by the row length), thread 0 resets the ticket and the row's outputs are stored. The
 * workspace is thereby zero again when the kernel ends. */
static bool cg_red_split_row(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    cg_rowit it;
    memset(&it, 0, sizeof it);
    it.row = row;
    LLVMValueRef lane = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "lane");
    cg_red_chunk_it(cx, p, row, lane, &it);
    if (!cg_red_stream(cx, p, &it, 1, true, scratch)) return false;
    LLVMValueRef first = LLVMBuildICmp(cx->b, LLVMIntEQ, lane, cg_i64(cx, 0), "");
    LLVMBasicBlockRef join = cg_if_begin(cx, first);
    for (unsigned k = 0; k < p->nred; k++) {
        LLVMValueRef v = p->partv[k], at = cg_red_part_at(cx, p, k, p->chunk, row);
        LLVMBuildStore(cx->b, v, LLVMBuildInBoundsGEP2(cx->b, LLVMTypeOf(v), p->wsp, &at, 1, ""));
    }
    cg_if_end(cx, join);
    LLVMValueRef last = cg_red_ticket(cx, p, row, first);
    LLVMBasicBlockRef jl = cg_if_begin(cx, last);
    LLVMValueRef var[CG_RED_MAXRED];
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        var[k] = cg_var(cx, cg_reduce_identity(cx, op, cg_acc_type(cx, rn)));
    }
    cg_loop l;
    LLVMValueRef c = cg_loop_begin(cx, &l, lane, cg_i64(cx, p->splits), it.estep, "parts");
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
        LLVMTypeRef st = cg_ctype(cx, cg_acc_dtype(rn)), at = cg_acc_type(cx, rn);
        LLVMValueRef w = cg_red_part_at(cx, p, k, c, row);
        LLVMValueRef ptr = LLVMBuildInBoundsGEP2(cx->b, st, p->wsp, &w, 1, "");
        LLVMValueRef v = LLVMBuildLoad2(cx->b, st, ptr, "part");
        LLVMSetVolatile(v, 1);
        LLVMBuildStore(cx->b, LLVMConstNull(st), ptr);
        if (at == cx->f64) v = LLVMBuildFPExt(cx->b, v, cx->f64, "");
        LLVMBuildStore(cx->b, cg_reduce_combine(cx, op, LLVMBuildLoad2(cx->b, at, var[k], ""), v),
                       var[k]);
    }
    cg_loop_end(cx, &l);
    cx->nmemo = 0; /* the reductions' values change from the chunk's to the row's */
    for (unsigned k = 0; k < p->nred; k++) {
        const ir_node *rn = &g->nodes[p->reds[k]];
        cg_red_finish(cx, p, k, LLVMBuildLoad2(cx->b, cg_acc_type(cx, rn), var[k], ""), scratch);
    }
    LLVMBasicBlockRef jz = cg_if_begin(cx, first);
    LLVMBuildStore(cx->b, LLVMConstInt(cx->i32, 0, 0),
                   LLVMBuildInBoundsGEP2(cx->b, cx->i32, p->wsp, &row, 1, ""));
    cg_if_end(cx, jz);
    cg_rowit it2;
    memset(&it2, 0, sizeof it2);
    it2.row = row;
    bool ok = cg_red_store(cx, p, &it2);
    cg_if_end(cx, jl);
    cg_barrier(cx); /* the flag is read by every thread before the next row sets it */
    return ok;
}

/* [reduction.row_split2]: the scratch word of reduction k's partial of chunk c of row `row`:
 * (k splits + c) x rows + row. */
static LLVMValueRef cg_red_stat_at(cg_ctx *cx, const cg_red *p, unsigned k, LLVMValueRef c,
                                   LLVMValueRef row) {
    LLVMValueRef kc = LLVMBuildAdd(cx->b, cg_i64(cx, (int64_t)k * p->splits), c, "");
    return LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, kc, p->nrows, ""), row, "stat.at");
}

/* [reduction.row_split2], the statistics kernel, block (row, chunk): streams its chunk's items
 * (cg_red_chunk_it) in one online pass and thread 0 stores each reduction's partial over the
 * block to the scratch temp (cg_red_stat_at): a first-stage reduction's combined value (a mean's
 * sum before the division), an exp sum rescaled to its max's partial of the same chunk. It
 * stores none of the region's values (the second kernel stores them all). */
static bool cg_red_stats_row(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef scratch) {
    cg_rowit it;
    memset(&it, 0, sizeof it);
    it.row = row;
    LLVMValueRef lane = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "lane");
    cg_red_chunk_it(cx, p, row, lane, &it);
    if (!cg_red_stream(cx, p, &it, 1, false, scratch)) return false;
    LLVMValueRef first = LLVMBuildICmp(cx->b, LLVMIntEQ, lane, cg_i64(cx, 0), "");
    LLVMBasicBlockRef join = cg_if_begin(cx, first);
    for (unsigned k = 0; k < p->nred; k++) {
        LLVMValueRef v = p->partv[k], at = cg_red_stat_at(cx, p, k, p->chunk, row);
        LLVMBuildStore(cx->b, v,
                       LLVMBuildInBoundsGEP2(cx->b, LLVMTypeOf(v), cx->xtemp_ptr, &at, 1, ""));
    }
    cg_if_end(cx, join);
    return true;
}

/* [reduction.row_split2], the second kernel, block (row, chunk): every block combines all the
 * row's `splits` partials the same way (thread t: chunks t, t + threads, ..., then the block's
 * tree, so every block gets the same bits): first the first-stage reductions (cg_red_finish),
 * then each exp sum, every chunk's partial rescaled from its chunk's max to the row's
 * (cg_red_rescale); then it stores the row-shaped outputs of its chunk's items and, in chunk 0,
 * the leftovers of a peeled row and the per-row outputs (cg_red_store). */
static bool cg_red_norm_row(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    LLVMValueRef lane = LLVMBuildZExt(cx->b, cg_red_lane(cx, p), cx->i64, "lane");
    LLVMValueRef step = cg_i64(cx, p->threads), nsp = cg_i64(cx, p->splits);
    LLVMValueRef fin[CG_RED_MAXRED] = {0};
    for (unsigned lev = 1; lev <= p->nlev; lev++) {
        LLVMValueRef var[CG_RED_MAXRED] = {0};
        for (unsigned k = 0; k < p->nred; k++) {
            const ir_node *rn = &g->nodes[p->reds[k]];
            ir_op op = lev == 2 || (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
            LLVMTypeRef at = lev == 2 ? cx->f32 : cg_acc_type(cx, rn);
            if (p->level[k] == lev) var[k] = cg_var(cx, cg_reduce_identity(cx, op, at));
        }
        cg_loop l;
        LLVMValueRef c = cg_loop_begin(cx, &l, lane, nsp, step, "stats");
        for (unsigned k = 0; k < p->nred; k++) {
            if (!var[k]) continue;
            const ir_node *rn = &g->nodes[p->reds[k]];
            ir_op op = (ir_op)rn->op == IR_OP_MEAN ? IR_OP_SUM : (ir_op)rn->op;
            LLVMTypeRef st = lev == 2 ? cx->f32 : cg_ctype(cx, cg_acc_dtype(rn));
            LLVMValueRef w = cg_red_stat_at(cx, p, k, c, row);
            LLVMValueRef v = LLVMBuildLoad2(
                cx->b, st, LLVMBuildInBoundsGEP2(cx->b, st, cx->xtemp_ptr, &w, 1, ""), "stat");
            LLVMValueRef acc = LLVMBuildLoad2(cx->b, LLVMGetAllocatedType(var[k]), var[k], "");
            if (lev == 2) { /* s_c exp(m_c - M), m_c the chunk's max */
                LLVMValueRef wm = cg_red_stat_at(cx, p, p->ostat[k], c, row);
                LLVMValueRef m = LLVMBuildLoad2(
                    cx->b, cx->f32,
                    LLVMBuildInBoundsGEP2(cx->b, cx->f32, cx->xtemp_ptr, &wm, 1, ""), "stat.m");
                v = cg_red_rescale(cx, v, m, fin[p->ostat[k]]);
                op = IR_OP_SUM;
            } else if (LLVMTypeOf(acc) == cx->f64) {
                v = LLVMBuildFPExt(cx->b, v, cx->f64, "");
            }
            LLVMBuildStore(cx->b, cg_reduce_combine(cx, op, acc, v), var[k]);
        }
        cg_loop_end(cx, &l);
        for (unsigned k = 0; k < p->nred; k++) {
            if (!var[k]) continue;
            LLVMValueRef acc = LLVMBuildLoad2(cx->b, LLVMGetAllocatedType(var[k]), var[k], "");
            if (lev == 1) {
                fin[k] = cg_red_finish(cx, p, k, acc, scratch);
                continue;
            }
            const ir_node *rn = &g->nodes[p->reds[k]];
            LLVMValueRef tot = cg_red_combine(cx, p, IR_OP_SUM, acc, scratch);
            if (rn->op == IR_OP_MEAN)
                tot = LLVMBuildFDiv(cx->b, tot, LLVMBuildSIToFP(cx->b, p->rowlen, cx->f32, ""),
                                    "mean");
            cx->subst[p->reds[k]] = cg_convert(cx, tot, IR_F32, (ir_dtype)rn->dtype);
        }
    }
    cg_rowit it;
    memset(&it, 0, sizeof it);
    it.row = row;
    cg_red_chunk_it(cx, p, row, lane, &it);
    return cg_red_store(cx, p, &it);
}

static bool cg_red_emit(cg_ctx *cx, cg_red *pp, int phase);
static bool cg_red_split(cg_ctx *cx, cg_red *p);
static bool cg_red_split_fits(cg_ctx *cx, const cg_red *p, bool side);
static bool cg_red_two_fits(cg_ctx *cx, const cg_red *p);
static bool cg_red_two(cg_ctx *cx, cg_red *p);

/* The staged row buffer: the kernel's dynamic shared memory as f32 words (the manifest's
 * smem_bytes). */
static LLVMValueRef cg_red_dyn_smem(cg_ctx *cx) {
    return cg_dyn_shared(cx, "tx_red_dyn_smem", cx->f32);
}

/* The widest dtype (bytes) of region r's row inputs (the HBM values of the domain's shape it
 * reads), 4 when it reads none: the planner's and the model's elem. */
static int cg_red_row_elem(cg_ctx *cx, unsigned r) {
    pass_io io;
    int e = 0;
    pass_region_io(cx->g, cx->pix, r, &io);
    for (uint32_t i = 0; i < io.nrowreads; i++)
        if (ir_dtype_size((ir_dtype)cx->g->nodes[io.rowreads[i]].dtype) > e)
            e = ir_dtype_size((ir_dtype)cx->g->nodes[io.rowreads[i]].dtype);
    pass_io_free(&io);
    return e ? e : 4;
}

/* Reduction region; see the file comment. */
bool cg_emit_reduction(cg_ctx *cx, unsigned region) {
    cg_red p;
    if (!cg_red_plan(cx, region, &p)) return false;
    bool rsplit = p.rowmode && p.splits > 1 && !p.two;
    if (p.two) { /* [reduction.row_split2]: the chunks' statistics, [reductions x splits, rows] */
        ir_shape ps = {.rank = 1, .dim = {(int64_t)p.nred * p.splits * ir_shape_numel(&p.kept)}};
        p.ptemp = cg_scratch_temp(cx, p.reds[0], IR_F32, &ps);
        cx->xtemp = p.ptemp + 1;
        cx->xtemp_dom = *p.S;
        cx->xtemp_write = true;
    }
    if (rsplit) { /* [reduction.row_split]: the workspace, [1 + reductions x splits, rows] words */
        ir_shape ws = {.rank = 1,
                       .dim = {(1 + (int64_t)p.nred * p.splits) * ir_shape_numel(&p.kept)}};
        unsigned t = cg_scratch_temp(cx, p.reds[0], IR_I32, &ws);
        cx->temps[t].zeroed = true;
        cx->wstemp = t + 1;
    }
    if (p.splits > 1 && !rsplit && !p.two) {
        /* [reduction.column_blocks]: the partials' scratch, [reductions x splits, kept] words,
         * and the tiles' tickets (a zeroed workspace, one i32 word a tile) */
        int64_t nk = ir_shape_numel(&p.kept), tc = cg_red_tile_cols(&p);
        ir_shape ps = {.rank = 2, .dim = {(int64_t)p.nred * p.splits, nk}};
        if (nk <= 0) {
            tx_error(cx->diag, "codegen: reduction region %u: split columns need concrete sizes",
                     region);
            return false;
        }
        p.ptemp = cg_scratch_temp(cx, p.reds[0], IR_F32, &ps);
        cx->xtemp = p.ptemp + 1;
        cx->xtemp_dom = *p.S;
        cx->xtemp_write = true;
        cx->xtemp_stores = true;
        ir_shape ws = {.rank = 1, .dim = {(nk + tc - 1) / tc}};
        unsigned t = cg_scratch_temp(cx, p.reds[0], IR_I32, &ws);
        cx->temps[t].zeroed = true;
        cx->wstemp = t + 1;
    }
    bool begun = cg_kernel_begin(cx, region, p.two ? "_stats" : NULL);
    cx->xtemp = 0;
    cx->wstemp = 0;
    cx->xtemp_stores = false;
    if (!begun) return false;
    p.wsp = cx->ws_ptr;
    cg_red_levels(cx, &p); /* needs the kernel's HBM homes */
    cg_red_stage_plan(cx, &p);
    if (p.nst) p.cluster = 1; /* a staged row stays in one block */
    const ir_schedule *sc = &cx->g->regions[region].sched;
    p.pgrid = cx->gpu && p.cluster > 1 && p.hold && sc->id == PASS_SCH_REDUCTION_CLUSTER_ROWS &&
                      sc->p[2] > 0
                  ? (unsigned)sc->p[2]
                  : 0;
    p.online = !p.hold && !p.nst && cg_red_online_match(cx->g, &p);
    /* Streaming rows (not held, not staged) of a static length take vector groups. */
    int64_t len = ir_shape_numel(&p.red);
    p.svec = !p.hold && !p.nst && p.rowmode && p.trailing && len > 0
                 ? cg_red_vec_width(cx, &p, len, len)
                 : 1;
    if (p.slices > 1 || p.kv > 1 || (!cx->gpu && !p.rowmode && !p.hold && p.nlev == 1 && len > 0)) {
        /* (The host's one-thread column blocks take the same unrolled groups, so CI runs them.) */
        if ((p.nlev != 1 && p.kv > 1) || p.hold || p.nst || len <= 0) {
            tx_error(cx->diag,
                     "codegen: reduction region %u: a column split needs a streamed column of a "
                     "concrete length (and one stage for vectors of kept elements)",
                     region);
            free(p.dep);
            return false;
        }
        /* Unrolled groups: 32 bytes of the widest row input (8 f32, 16 bf16/f16; at most 16),
         * halved until the group divides the length and leaves every slice a group. */
        unsigned top = 32u / (unsigned)cg_red_row_elem(cx, region);
        if (top > 16) top = 16;
        if (top > CG_VEC_MAXLIN / p.kv) top = CG_VEC_MAXLIN / p.kv; /* the kv columns' loads */
        for (p.svec = top; p.svec > 1 && (len % p.svec || len / p.svec < p.slices); p.svec /= 2) {}
    } else if (!p.rowmode && !p.hold && !p.nst && len > 0) {
        /* Column streams of several stages or a domain-shaped epilogue (one thread per kept
         * element, reduction.column): the same unrolled groups of 32 bytes, so a thread has more
         * than one load in flight along the reduced axis. */
        unsigned top = 32u / (unsigned)cg_red_row_elem(cx, region);
        if (top > 16) top = 16;
        for (p.svec = top; p.svec > 1 && len % p.svec; p.svec /= 2) {}
    }
    /* A streamed row whose length no vector divides: vector groups from each row's first aligned
     * element, its leftovers one element a lane (no exact variance pass: its element loop
     * follows the unpeeled groups). */
    bool var = false;
    for (unsigned k = 0; k < p.nred; k++)
        var |= p.online && p.level[k] == 2 && p.okind[k] == CG_ON_VAR;
    unsigned pv = !p.hold && !p.nst && p.rowmode && p.trailing && len > 0 && p.svec <= 1 &&
                          p.wrows <= 1 && !var
                      ? cg_red_vec_width(cx, &p, 16, 16)
                      : 1;
    if (pv > 1 && len >= 2 * (int64_t)pv) p.svec = pv, p.speel = true;
    if (rsplit && (p.nlev != 1 || p.online || p.nst || !cg_red_split_fits(cx, &p, true))) {
        tx_error(cx->diag,
                 "codegen: reduction region %u: a split row needs one stage and outputs of the "
                 "reduced shape or of the row's shape that depend on no reduction",
                 region);
        free(p.dep);
        return false;
    }
    if (p.two && !cg_red_two_fits(cx, &p)) {
        tx_error(cx->diag,
                 "codegen: reduction region %u: a two-kernel split row needs a streamed row of "
                 "one stage, or of an online max and exp sum",
                 region);
        free(p.dep);
        return false;
    }
    bool ok = p.two                     ? cg_red_two(cx, &p)
              : p.splits > 1 && !rsplit ? cg_red_split(cx, &p)
                                        : cg_red_emit(cx, &p, CG_RED_ONE);
    free(p.dep);
    return ok;
}

/* [reduction.row_split2]: true when region p streams (not held, not staged) one level, or its
 * two levels in one online pass whose second level is exp sums only. */
static bool cg_red_two_fits(cg_ctx *cx, const cg_red *p) {
    (void)cx;
    if (p->hold || p->nst) return false;
    if (p->nlev == 1) return !p->online;
    if (!p->online || p->nlev != 2) return false;
    for (unsigned k = 0; k < p->nred; k++)
        if (p->level[k] == 2 && p->okind[k] != CG_ON_EXP) return false;
    return true;
}

/* [reduction.row_split2] (the statistics kernel begun): its body, then the second kernel's, which
 * reads the statistics and every value the region reads. */
static bool cg_red_two(cg_ctx *cx, cg_red *p) {
    if (!cg_red_emit(cx, p, CG_RED_STATS)) return false;
    cx->xtemp = p->ptemp + 1;
    cx->xtemp_write = false;
    cx->xtemp_reads_all = true;
    bool begun = cg_kernel_begin(cx, p->region, NULL);
    cx->xtemp = 0;
    cx->xtemp_reads_all = false;
    return begun && cg_red_emit(cx, p, CG_RED_NORM);
}

/* True when every output of region p is of the reduced shape (stored once per row) or, when
 * `side`, of the row shape and depending on no reduction (cg_red_pro_out: stored by the stream
 * that reads its elements). */
static bool cg_red_split_fits(cg_ctx *cx, const cg_red *p, bool side) {
    const ir_graph *g = cx->g;
    for (ir_id o = 0; o < g->n; o++) {
        if (!cg_is_region_output(cx, o)) continue;
        int kind = cg_red_out_kind(p, &g->nodes[o].shape);
        if (kind != 2 && !(side && kind == 1 && cg_red_pro_out(p, g, o))) return false;
    }
    return true;
}

/* [reduction.column_blocks] (its kernel begun): checks the region fits the rule (one level,
 * every output of the reduced shape; on the GPU a block of slices or of column vectors, whose
 * tile a ticket counts) and emits the kernel: the partials, each tile combined by its last block;
 * its work counts the combine's operations too. */
static bool cg_red_split(cg_ctx *cx, cg_red *p) {
    if (!(p->nlev == 1 && !p->hold && !p->nst && cg_red_split_fits(cx, p, false)) ||
        (cx->gpu && p->kv <= 1 && p->slices <= 1)) {
        tx_error(cx->diag,
                 "codegen: reduction region %u: split columns need one stage, outputs of the "
                 "reduced shape only and (GPU) a block of slices or column vectors",
                 p->region);
        return false;
    }
    ir_poly comb;
    ir_poly_const(&comb, (double)p->nred * p->splits * (double)ir_shape_numel(&p->kept));
    ir_poly_add(&cx->k->flops, &comb);
    return cg_red_emit(cx, p, CG_RED_PARTS);
}

/* The body of a begun reduction kernel (levels known), then its end: the region's one kernel, or
 * (phase) the kernel of [reduction.column_blocks] or one of [reduction.row_split2]. */
static bool cg_red_emit(cg_ctx *cx, cg_red *pp, int phase) {
    cg_red p = *pp;
    bool colv = p.kv > 1;
    p.nrows = cg_numel(cx, &p.kept);
    p.rowlen = cg_numel(cx, &p.red);
    /* 32 words of shared scratch serve f32 and i32 block reductions alike. */
    LLVMValueRef scratch = NULL;
    unsigned smem = 0;
    if (p.nst) {
        /* Staged: GPU dynamic shared memory (the row words, then the block
         * scratch: threads / 32 words, all cg_block_reduce indexes); the
         * host uses a private array (one thread, no scratch). */
        int64_t words = (int64_t)p.nst * ir_shape_numel(&p.red);
        if (cx->gpu) {
            p.stbuf = cg_red_dyn_smem(cx);
            smem = p.stbytes;
            if (p.threads > 32) {
                LLVMValueRef off = cg_i64(cx, words);
                scratch = LLVMBuildInBoundsGEP2(cx->b, cx->f32, p.stbuf, &off, 1, "red.scratch");
            }
        } else {
            p.stbuf = cg_shared_array(cx, cx->f32, (unsigned)words, "red.stage");
        }
    } else if (cx->gpu && p.rowmode && p.threads > 32) {
        scratch = cg_shared_array(cx, cx->f32, 32, "red.scratch");
        p.wide = cg_shared_array(cx, cx->f64, 32, "red.wide");
    } else if (p.slices > 1) {
        /* column vectors: the threads' kv partials, then one word per thread (cg_red_colv_row) */
        scratch = cg_shared_array(cx, cx->f32, p.threads * (p.kv > 1 ? p.kv + 1 : 1), "red.slices");
    }
    if (p.splits > 1 && !p.two) /* a split row's or column tile's ticket flag */
        p.lastf = cg_shared_array(cx, cx->i32, 1, "red.last");
    if (p.rowmode && p.splits > 1) p.chunk = cg_program_id(cx, 1);
    if (p.cluster > 1) {
        p.xslot = p.pgrid && cx->gpu
                      ? cg_shared_array(cx, cx->i64, 2 * CG_RED_XSLOTS, "red.cluster")
                      : cg_shared_array(cx, cx->f32, CG_RED_XSLOTS, "red.cluster");
        p.rank = cg_program_id(cx, 1);
    }
    LLVMValueRef start, step, end = p.nrows;
    if (colv) { /* tiles of cols x kv kept elements (cg_red_colv_row) */
        end = cg_i64(cx, (ir_shape_numel(&p.kept) + (int64_t)p.cols * p.kv - 1) /
                             ((int64_t)p.cols * p.kv));
        start = cg_program_id(cx, 0);
        step = cg_program_count(cx, 0);
    } else if (p.slices > 1) {
        /* Tiles of cols kept elements, uniform per block (the slice combine's barriers); a thread
         * past the last kept element repeats the last one and stores nothing per row. */
        LLVMValueRef cols = cg_i64(cx, p.cols);
        end = LLVMBuildUDiv(cx->b, LLVMBuildAdd(cx->b, p.nrows, cg_i64(cx, p.cols - 1), ""), cols,
                            "tiles");
        start = cg_program_id(cx, 0);
        step = cg_program_count(cx, 0);
    } else if (p.rowmode && p.wrows > 1) {
        /* Row groups of `threads` lanes: group k of block b starts at row b W + k and strides by
         * W rows per block. The loop runs over the first row of the group's warp, so a warp's
         * lanes stay together (its shuffles need them all); below, a group past the last row
         * repeats the last row (the same values to the same addresses). */
        unsigned wshift = p.lshift < 5 ? 5 : p.lshift;
        LLVMValueRef warp = LLVMBuildZExt(
            cx->b, LLVMBuildLShr(cx->b, cg_thread_id(cx), LLVMConstInt(cx->i32, wshift, 0), ""),
            cx->i64, "warp");
        LLVMValueRef w = cg_i64(cx, p.wrows);
        if (p.lshift < 5) warp = LLVMBuildShl(cx->b, warp, cg_i64(cx, 5 - p.lshift), "");
        start = LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, cg_program_id(cx, 0), w, ""), warp, "");
        step = LLVMBuildMul(cx->b, cg_program_count(cx, 0), w, "");
    } else if (p.rowmode) {
        start = cg_program_id(cx, 0);
        step = cg_program_count(cx, 0);
    } else {
        LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
        start = LLVMBuildAdd(
            cx->b, LLVMBuildMul(cx->b, cg_program_id(cx, 0), cg_i64(cx, p.threads), ""), tid, "");
        step = LLVMBuildMul(cx->b, cg_program_count(cx, 0), cg_i64(cx, p.threads), "");
    }
    if (p.pgrid) cg_red_persist_begin(cx, &p, start, step);
    cg_loop l;
    LLVMValueRef row = cg_loop_begin(cx, &l, start, end, step, "row");
    p.tile = row;
    if (p.slices > 1 && !colv) {
        LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
        LLVMValueRef cols = cg_i64(cx, p.cols);
        p.slice = LLVMBuildUDiv(cx->b, tid, cols, "slice");
        row = LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, row, cols, ""),
                           LLVMBuildURem(cx->b, tid, cols, ""), "col");
        p.colok = LLVMBuildICmp(cx->b, LLVMIntULT, row, p.nrows, "colok");
        row = LLVMBuildSelect(cx->b, p.colok, row, LLVMBuildSub(cx->b, p.nrows, cg_i64(cx, 1), ""),
                              "");
    } else if (p.rowmode && p.wrows > 1 && p.lshift < 5) {
        LLVMValueRef sub = LLVMBuildZExt(
            cx->b,
            LLVMBuildLShr(cx->b,
                          LLVMBuildAnd(cx->b, cg_thread_id(cx), LLVMConstInt(cx->i32, 31, 0), ""),
                          LLVMConstInt(cx->i32, p.lshift, 0), ""),
            cx->i64, "sub");
        row = LLVMBuildAdd(cx->b, row, sub, "grow");
        LLVMValueRef ok = LLVMBuildICmp(cx->b, LLVMIntULT, row, p.nrows, "");
        row = LLVMBuildSelect(cx->b, ok, row, LLVMBuildSub(cx->b, p.nrows, cg_i64(cx, 1), ""), "");
    }
    cx->nmemo = 0;
    bool ok = colv                        ? cg_red_colv_row(cx, &p, row, scratch, phase)
              : phase == CG_RED_PARTS     ? cg_red_part_row(cx, &p, row, scratch)
              : phase == CG_RED_STATS     ? cg_red_stats_row(cx, &p, row, scratch)
              : phase == CG_RED_NORM      ? cg_red_norm_row(cx, &p, row, scratch)
              : p.rowmode && p.splits > 1 ? cg_red_split_row(cx, &p, row, scratch)
                                          : cg_red_row(cx, &p, row, scratch);
    if (!ok) return false;
    if (p.cluster > 1 && p.arrived) /* the row's slots are read before they are reused */
        cg_cluster_wait(cx);
    else if (p.cluster > 1 && !p.pgrid)
        cg_cluster_sync(cx);
    if (p.cluster > 1) { /* measurement knob (bench/red_wide.sh): n more cluster barriers a row */
        const char *xb = getenv("TX_RED_XBAR");
        for (int i = xb ? atoi(xb) : 0; i > 0 && i <= 16; i--) cg_cluster_sync(cx);
    }
    for (unsigned k = 0; k < p.nred; k++) cx->subst[p.reds[k]] = NULL;
    cx->nmemo = 0;
    cg_loop_end(cx, &l);
    if (p.pgrid) cg_cluster_sync(cx); /* no block leaves while the others read its slots */
    ir_shape work[3] = {p.kept, {0}, {0}};
    int64_t per[3] = {p.rowmode      ? p.wrows
                      : colv         ? (int64_t)p.cols * p.kv
                      : p.slices > 1 ? p.cols
                                     : p.threads,
                      1, 1};
    int64_t cap[3] = {cx->gpu ? (1 << 20) : CG_HOST_PROGRAMS, 1, 1};
    if (p.cluster > 1) { /* grid y: the cluster's blocks */
        work[1].rank = 1;
        work[1].dim[0] = p.cluster;
        cap[1] = p.cluster;
        cx->k->cluster = p.cluster;
        if (p.pgrid) cap[0] = p.pgrid; /* persistent clusters */
    }
    if (phase == CG_RED_PARTS || (p.rowmode && p.splits > 1)) /* grid y: the reduced axis chunks */
        work[1] = (ir_shape){.rank = 1, .dim = {p.splits}}, cap[1] = p.splits;
    unsigned block[3] = {p.threads * p.wrows, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, smem);
    return true;
}
