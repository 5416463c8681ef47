/* plan_tile.c - the tile plan of every region kind against the SRAM budget
 * (docs/cost-model.md "Tile plans"), and the tile scheduler simulation of
 * each planned region. The on-chip bytes of a region are exactly the
 * formula of its plan; a plan that does not fit is replaced by the next
 * smaller one, ending in plans that need no shared memory, so no region is
 * ever planned over the budget. */
#include "passes/passes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t pass_matmul_sram(int64_t bm, int64_t bn, int64_t bk, int64_t nb, int e, int st) {
    return (bm * bk + nb * bk * bn) * e * st;
}

int64_t pass_attention_sram(int64_t bq, int64_t bkv, int64_t d, int64_t dv, int e, int st) {
    return bq * d * e + (int64_t)st * bkv * (d + dv) * e + bq * bkv * 4;
}

static const struct {
    int64_t bq, bkv;
    int st;
} att_ladder[] = {
    {128, 64, 2}, {128, 32, 2}, {64, 64, 2}, {64, 32, 2}, {32, 32, 1}, {16, 16, 1},
};

bool pass_attention_fit(int64_t d, int64_t dv, int e, int64_t budget, int64_t *bq, int64_t *bkv,
                        int *st) {
    if (d <= 0 || dv <= 0 || d > 1024 || dv > 1024) return false;
    for (size_t i = 0; i < sizeof att_ladder / sizeof att_ladder[0]; i++)
        if (pass_attention_sram(att_ladder[i].bq, att_ladder[i].bkv, d, dv, e, att_ladder[i].st) <=
            budget) {
            *bq = att_ladder[i].bq;
            *bkv = att_ladder[i].bkv;
            *st = att_ladder[i].st;
            return true;
        }
    return false;
}

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

bool pass_attention_simt_wide(int64_t d, int64_t dv) { return d > 128 || dv > 128; }

bool pass_attention_simt_tile(int64_t sq, int64_t sk, int64_t d, int64_t dv, int64_t *bm,
                              int64_t *bn) {
    if (d < 1 || dv < 1 || d > PASS_ATTN_SG_MAXD || dv > PASS_ATTN_SG_MAXD) return false;
    *bm = sq >= 1 && sq <= 16 ? 16 : sq >= 1 && sq <= 32 ? 32 : 64;
    *bn = d <= 64 && dv <= 64 ? 64 : 32;
    /* above head dim 128: 64 rows (one block of 254 registers an SM, O in 64 registers a thread),
     * measured on the H200 (2026-12-04) 1.12-1.47x faster than 32 rows (two blocks an SM, O in 32
     * registers; TX_ATTN_SG_WIDE=0 for the A/B): GPT-J's d256 attention 3892 against 5724 us */
    const char *wide = getenv("TX_ATTN_SG_WIDE");
    if (pass_attention_simt_wide(d, dv) && *bm > 32 && wide && wide[0] == '0') *bm = 32;
    if (sk >= 1 && sk <= 32 && *bn > 32) *bn = 32;
    if (sk >= 1 && sk <= 16) *bn = 16;
    return true;
}

bool pass_attention_simt_geom(int64_t bm, int64_t bn, int64_t d, int64_t dv, pass_attn_sg *s) {
    if ((bm != 16 && bm != 32 && bm != 64) || (bn != 16 && bn != 32 && bn != 64) || d < 1 ||
        dv < 1 || d > PASS_ATTN_SG_MAXD || dv > PASS_ATTN_SG_MAXD)
        return false;
    memset(s, 0, sizeof *s);
    s->bm = bm, s->bn = bn, s->tm = (int)(bm / 16), s->tn = (int)(bn / 16);
    s->dp = (d + 3) / 4 * 4;
    s->pq = s->dp / 4 % 2 ? s->dp : s->dp + 4;
    s->dvp = (dv + 15) / 16 * 16;
    s->nc = (int)(s->dvp / 16);
    s->vw = s->nc % 4 == 0 ? 4 : s->nc % 2 == 0 ? 2 : 1;
    if (s->nc > PASS_ATTN_SG_MAXC || s->tm * s->nc > 64) return false;
    s->pp = bn;
    while ((s->tm * s->pp) % 32 != 16) s->pp += 4; /* tm pp = 16 mod 32 within 8 steps */
    s->qoff = 0;
    s->koff = s->qoff + bm * s->pq * 4;
    s->voff = s->koff + bn * s->pq * 4;
    s->poff = s->voff + bn * s->dvp * 4;
    s->bytes = s->poff + bm * s->pp * 4;
    return true;
}

/* The smallest power of two >= x, at least 16 and at most cap. */
static int64_t clamp_tile(int64_t x, int64_t cap) {
    if (IR_DIM_IS_SYM(x)) return cap;
    int64_t t = 16;
    while (t < x && t < cap) t *= 2;
    return t;
}

static const char *nm(const ir_graph *g, ir_id i, char *buf, size_t cap) {
    if (g->nodes[i].name)
        snprintf(buf, cap, "%%%u %s", i, ir_str(g, g->nodes[i].name));
    else
        snprintf(buf, cap, "%%%u", i);
    return buf;
}

/* ---- reductions ------------------------------------------------------------ */

/* What the reduction plan needs to know about region r. */
typedef struct redinfo {
    ir_shape dom;
    int64_t rext;    /* elements per reduced row; -1 symbolic */
    int64_t nrows;   /* rows (kept combinations); -1 symbolic */
    int nred;        /* reductions in the region */
    int stages;      /* longest chain of dependent reductions */
    bool needs_rows; /* some full-domain value is computed after a reduction */
    bool online;     /* the reduction chain has an online (streaming) form */
    bool online_exp; /* ... of two stages whose second-stage reductions are all exp sums of a max
                        (softmax, logsumexp: a running max and rescaled sum; no Welford) */
    bool epi;  /* a written value of the domain's shape depends on a reduction (an epilogue pass) */
    int held;  /* row inputs held on chip when onchip */
    int elem;  /* widest stored dtype (bytes) of the row inputs; 4 when there is none */
    int velem; /* widest dtype (bytes) of the row-shaped HBM values read or written (the vector
                  groups of row mode, codegen's cg_red_vec_width) */
    bool dom_writes;  /* the region writes a value of the domain's shape (prologue or epilogue) */
    int wbytes;       /* bytes it writes per element of the domain (values of the domain's shape) */
    int nrowreads;    /* row inputs (reads covering the whole domain) */
    ir_poly rowbytes; /* bytes of the row inputs (one pass) */
    bool stream;      /* [reduction.occupancy]: the plan streams a row that would fit on chip */
} redinfo;

/* The in-region source of operand k of m through views, or IR_NONE. */
static ir_id in_region_src(const ir_graph *g, const ir_node *nd, unsigned k, uint32_t r) {
    ir_id src[PASS_SRC_CAP];
    unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
    for (unsigned s = 0; s < ns; s++)
        if (g->nodes[src[s]].region == r && pass_is_compute((ir_op)g->nodes[src[s]].op))
            return src[s];
    return IR_NONE;
}

/* Steps over casts inside region r. */
static ir_id skip_casts(const ir_graph *g, ir_id x) {
    while (g->nodes[x].op == IR_OP_CAST) x = ir_in(g, &g->nodes[x], 0);
    return x;
}

/* True when pow node xd raises to the constant 2 (through views and casts). */
static bool pow_is_square(const ir_graph *g, const ir_node *xd) {
    ir_id e = ir_in(g, xd, 1);
    for (;;) {
        const ir_node *en = &g->nodes[e];
        if (en->op == IR_OP_CAST ||
            ((ir_op_traits((ir_op)en->op) & IR_T_VIEW) && en->op != IR_OP_CONCAT)) {
            e = ir_in(g, en, 0);
            continue;
        }
        return en->op == IR_OP_CONST && en->shape.rank == 0 && en->a.cval == 2.0;
    }
}

/* True when the two-stage chain of region r streams: max then sum(exp(x - max))
 * (softmax, logsumexp), or mean/sum then mean/sum of (x - mean)^2 (variance:
 * d * d or pow(d, 2)); x depends on no reduction of the region and the
 * reductions are floating-point (codegen/reduction.c matches the same). *var: some second-stage
 * reduction is a variance (Welford's form). */
static bool two_stage_online(const ir_graph *g, const pass_index *ix, uint32_t r, const int *lvl,
                             bool *var) {
    *var = false;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        ir_id m = ix->rids[j];
        const ir_node *nd = &g->nodes[m];
        if (!(ir_op_traits((ir_op)nd->op) & IR_T_REDUCE) || lvl[m] != 2) continue;
        if ((nd->op != IR_OP_SUM && nd->op != IR_OP_MEAN) ||
            !ir_dtype_is_float((ir_dtype)nd->dtype))
            return false;
        ir_id x = skip_casts(g, ir_in(g, nd, 0)), d = IR_NONE;
        const ir_node *xd = &g->nodes[x];
        if (xd->op == IR_OP_EXP)
            d = skip_casts(g, ir_in(g, xd, 0));
        else if (xd->op == IR_OP_MUL && ir_in(g, xd, 0) == ir_in(g, xd, 1))
            d = skip_casts(g, ir_in(g, xd, 0));
        else if (xd->op == IR_OP_POW && pow_is_square(g, xd))
            d = skip_casts(g, ir_in(g, xd, 0));
        if (d == IR_NONE || g->nodes[d].op != IR_OP_SUB) return false;
        if (xd->op != IR_OP_EXP) *var = true;
        ir_id st = in_region_src(g, &g->nodes[d], 1, r), a = in_region_src(g, &g->nodes[d], 0, r);
        if (st == IR_NONE || (a != IR_NONE && lvl[a] != 0) ||
            !ir_dtype_is_float((ir_dtype)g->nodes[st].dtype))
            return false;
        ir_op so = (ir_op)g->nodes[st].op;
        bool ok = xd->op == IR_OP_EXP ? so == IR_OP_MAX : (so == IR_OP_MEAN || so == IR_OP_SUM);
        if (!ok) return false;
    }
    return true;
}

static void red_analyse(const ir_graph *g, const pass_index *ix, uint32_t r, redinfo *ri) {
    const ir_region *rg = &g->regions[r];
    memset(ri, 0, sizeof *ri);
    ri->dom = g->nodes[ir_in(g, &g->nodes[rg->anchor], 0)].shape;
    ri->rext = ri->nrows = 1;
    for (int i = 0; i < ri->dom.rank; i++) {
        int64_t *p = (rg->red_axes & (1u << i)) ? &ri->rext : &ri->nrows;
        if (IR_DIM_IS_SYM(ri->dom.dim[i]) || *p < 0)
            *p = -1;
        else if (!ir_mul_ok(*p, ri->dom.dim[i], p))
            *p = -1;
    }
    int *lvl = ir_xcalloc(g->n ? g->n : 1,
                          sizeof *lvl); /* reductions on the longest in-region path ending here */
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        ir_id m = ix->rids[j];
        const ir_node *nd = &g->nodes[m];
        if (!pass_is_compute((ir_op)nd->op)) continue;
        int in = 0;
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id s = in_region_src(g, nd, k, r);
            if (s != IR_NONE && lvl[s] > in) in = lvl[s];
        }
        bool red = (ir_op_traits((ir_op)nd->op) & IR_T_REDUCE) != 0;
        lvl[m] = in + red;
        if (red) {
            ri->nred++;
            if (lvl[m] > ri->stages) ri->stages = lvl[m];
        } else if (in > 0 && ir_shape_eq(&nd->shape, &ri->dom)) {
            ri->needs_rows = true;
        }
    }
    bool var = false;
    ri->online = ri->stages <= 1 || (ri->stages == 2 && two_stage_online(g, ix, r, lvl, &var));
    ri->online_exp = ri->stages == 2 && ri->online && !var;
    pass_io io;
    pass_region_io(g, ix, r, &io);
    ri->velem = 1;
    for (uint32_t i = 0; i < io.nwrites; i++) {
        const ir_node *w = &g->nodes[io.writes[i]];
        if (!ir_shape_eq(&w->shape, &ri->dom)) continue;
        ri->dom_writes = true;
        ri->wbytes += ir_dtype_size((ir_dtype)w->dtype);
        if (lvl[io.writes[i]] > 0) ri->epi = true;
        if (ir_dtype_size((ir_dtype)w->dtype) > ri->velem)
            ri->velem = ir_dtype_size((ir_dtype)w->dtype);
    }
    free(lvl);
    ri->held = ri->needs_rows ? (int)io.nrowreads : 0;
    ri->nrowreads = (int)io.nrowreads;
    ir_poly_const(&ri->rowbytes, 0);
    ri->elem = 0;
    for (uint32_t i = 0; i < io.nrowreads; i++) {
        ir_poly q;
        int es = ir_dtype_size((ir_dtype)g->nodes[io.rowreads[i]].dtype);
        if (es > ri->elem) ri->elem = es;
        if (es > ri->velem) ri->velem = es;
        pass_numel(g, &g->nodes[io.rowreads[i]].shape,
                   ir_dtype_size((ir_dtype)g->nodes[io.rowreads[i]].dtype), &q);
        ir_poly_add(&ri->rowbytes, &q);
    }
    if (ri->elem == 0) ri->elem = 4;
    pass_io_free(&io);
}

enum { RED_THREADS = 256, RED_CHUNK = 2048, RED_SCRATCH_PER = (RED_THREADS / 32) * 4 };

/* Rows longer than REG_HOLD_MAX do not fit 1024 threads' registers (PASS_ROW_HOLD each) and
 * are staged in shared memory when held on chip (or held across a cluster). */
enum { REG_HOLD_MAX = PASS_ROW_THREADS_MAX * PASS_ROW_HOLD };
enum {
    CLUSTER_THREADS = 512,
    CLUSTER_SLOTS = 96
}; /* CLUSTER_SLOTS: words each block of a
      cluster row publishes partials in */

/* True when region r reduces its domain with the innermost axis kept
 * (column mode: sum(x, axis=0), middle axes). */
static bool red_is_column(const ir_region *rg, const redinfo *ri) {
    return ri->dom.rank > 0 && !(rg->red_axes & (1u << (ri->dom.rank - 1))) &&
           (rg->red_axes & ((1u << ri->dom.rank) - 1)) != ((1u << ri->dom.rank) - 1);
}

/* True when region r's reduced axes are one run ending at the innermost axis (a row is
 * contiguous). */
static bool red_is_trailing(const ir_region *rg, const redinfo *ri) {
    uint32_t m = rg->red_axes & ((1u << ri->dom.rank) - 1);
    for (int a = (int)ri->dom.rank - 1; a >= 0 && (m & (1u << a)); a--) m &= ~(1u << a);
    return m == 0;
}

int64_t pass_row_vec(int64_t len, int elem) {
    if (len <= 0 || elem <= 0) return 1;
    int64_t v = 16 / elem > 8 ? 8 : 16 / elem;
    while (v > 1 && len % v) v /= 2;
    return v < 1 ? 1 : v;
}

int64_t pass_row_hold(int64_t len, int64_t v, int64_t lanes) {
    if (len <= 0 || v <= 0 || lanes <= 0) return 0;
    return cdiv(cdiv(len, v), lanes) * v;
}

/* [reduction.cluster_rows]: a row longer than one block holds in registers, split over C <=
 * gpu->cluster_max blocks of a thread-block cluster (sm_90), each holding its slice in registers
 * (PASS_ROW_HOLD elements per thread over at most CLUSTER_THREADS threads); the blocks exchange
 * partial statistics through distributed shared memory, so the row is read once and written
 * once. Returns C (0: the rule does not apply) and the block's threads. Rows of at most two held
 * inputs (registers), and few rows (at most 2 per SM): with many rows a block waits through the
 * cluster's barriers with nothing in flight, and the online stream is faster (H200: softmax f32
 * [4096, 65536] 853 us against 786 online; log_softmax bf16 [8192, 32000] 656 against 384;
 * softmax bf16 [8, 50257] 7.2 us against 46). */
static int64_t cluster_fit(const redinfo *ri, const pass_gpu *gpu, int64_t *threads, bool many);
static int64_t cluster_rows(const redinfo *ri, const pass_gpu *gpu, int64_t *threads) {
    return cluster_fit(ri, gpu, threads, false);
}

/* The cluster of cluster_rows; `many`: whatever the row count (a schedule the tuner may time
 * against the strategy's stream). */
static int64_t cluster_fit(const redinfo *ri, const pass_gpu *gpu, int64_t *threads, bool many) {
    int64_t len = ri->rext, v = pass_row_vec(len, ri->velem);
    if (len <= REG_HOLD_MAX || gpu->cluster_max < 2 || ri->held > 2 || ri->nrows <= 0 ||
        (!many && ri->nrows > 2LL * gpu->sms))
        return 0;
    int64_t total = cdiv(cdiv(len, v), PASS_ROW_HOLD / v), c = cdiv(total, CLUSTER_THREADS);
    if (c < 2 || c > gpu->cluster_max) return 0;
    *threads = cdiv(cdiv(total, c), 32) * 32;
    return pass_row_hold(len, v, c * *threads) <= PASS_ROW_HOLD ? c : 0;
}

/* The strategy of a reduction region rg with facts ri against budget: onchip when the held rows
 * fit (rows = held rows per block, sram_bytes = their bytes + scratch), else online (streaming
 * statistics, one re-read pass for the epilogue), else multipass; fills strategy, passes, rows,
 * tile[0], red_extent, stages, sram_bytes, spilled_bytes, *row_bytes (one held row on chip, 0
 * unless held) and why. The block shape is the schedule's (pass_schedule_plan). */
static void red_strategy(const ir_graph *g, ir_region *rg, const redinfo *ri, int64_t budget,
                         const pass_gpu *gpu, int64_t scratch, int64_t *row_bytes, char *why,
                         size_t cap) {
    char n1[96];
    *row_bytes = 0;
    rg->stages = (uint8_t)ri->stages;
    rg->red_extent = ri->rext;
    rg->strategy = IR_RED_ONCHIP;
    rg->passes = 1;
    rg->rows = 1;
    rg->tile[0] = ri->rext > 0 && ri->rext < RED_CHUNK ? ri->rext : RED_CHUNK;
    bool column = red_is_column(rg, ri);
    rg->sram_bytes = column ? 0 : scratch;
    if (ri->held == 0) return; /* nothing read after a reduction: one streaming pass */
    int64_t ct = 0;
    if (!column && cluster_rows(ri, gpu, &ct) > 1 &&
        scratch + 4 * CLUSTER_SLOTS <= budget) { /* [reduction.cluster_rows]: held in registers */
        rg->tile[0] = ri->rext;
        rg->sram_bytes = scratch + 4 * CLUSTER_SLOTS;
        return;
    }
    if (column && ri->rext > PASS_ROW_HOLD) {
        /* [reduction.column_stream]: codegen holds a column in one thread's registers only up to
         * PASS_ROW_HOLD elements (codegen/reduction.c); a longer one streams, its statistics
         * online where the chain allows it, then one pass stores the domain-shaped outputs */
        rg->strategy = ri->online ? IR_RED_ONLINE : IR_RED_MULTIPASS;
        rg->passes = (uint8_t)((ri->online ? 1 : ri->stages) + (ri->epi ? 1 : 0));
        snprintf(why, cap,
                 "[reduction.column_stream] the columns of %s are %lld elements long, more than "
                 "the %d a thread holds in registers: planned %s in %u passes over HBM",
                 nm(g, rg->anchor, n1, sizeof n1), (long long)ri->rext, (int)PASS_ROW_HOLD,
                 ri->online ? "online" : "multipass", rg->passes);
    } else if (ri->rext > 0) {
        int64_t rpb = ri->rext >= RED_CHUNK ? 1 : RED_CHUNK / ri->rext;
        if (rpb > 8) rpb = 8;
        int64_t row = INT64_MAX, one = INT64_MAX,
                need = INT64_MAX; /* INT64_MAX: overflows, never fits */
        if (!ir_mul_ok(ri->rext, 4LL * ri->held, &row) || !ir_add_ok(row, scratch, &one))
            row = one = INT64_MAX;
        while (rpb > 1 && (!ir_mul_ok(row, rpb, &need) || need > budget - scratch)) rpb /= 2;
        bool fits = ir_mul_ok(row, rpb, &need) && need <= budget - scratch;
        int64_t per_sm = fits ? gpu->smem_per_sm / (need + scratch) : 0;
        if (fits && !(ri->online && ri->rext > REG_HOLD_MAX && per_sm == 1) && !ri->stream) {
            rg->rows = rpb;
            rg->tile[0] = ri->rext;
            rg->sram_bytes = need + scratch;
            *row_bytes = row;
            return;
        }
        rg->strategy = ri->online ? IR_RED_ONLINE : IR_RED_MULTIPASS;
        rg->passes = (uint8_t)((ri->online ? 1 : ri->stages) + (ri->epi ? 1 : 0));
        if (fits)
            snprintf(why, cap,
                     "[reduction.occupancy] the row of %s fits on chip in %lld B, but then only "
                     "%lld block of %u "
                     "threads fits the %lld B of shared memory of an SM: planned online in %u "
                     "passes over HBM "
                     "instead (streaming keeps the SM full)",
                     nm(g, rg->anchor, n1, sizeof n1), (long long)(need + scratch),
                     (long long)per_sm, scratch ? RED_THREADS : 32, (long long)gpu->smem_per_sm,
                     rg->passes);
        else
            snprintf(why, cap,
                     "[reduction.budget] the row of %s needs %s%lld B on chip (%lld elements x 4 B "
                     "x %d held + %lld B "
                     "scratch) > budget %lld B: planned %s in %u passes over HBM; %s%lld",
                     nm(g, rg->anchor, n1, sizeof n1), one == INT64_MAX ? "more than " : "",
                     (long long)one, (long long)ri->rext, ri->held, (long long)scratch,
                     (long long)budget, ri->online ? "online" : "multipass", rg->passes,
                     one == INT64_MAX ? "no budget fits: more than "
                                      : "fits with --sram-budget >= ",
                     (long long)one);
    } else {
        rg->strategy = ri->online ? IR_RED_ONLINE : IR_RED_MULTIPASS;
        rg->passes = (uint8_t)((ri->online ? 1 : ri->stages) + (ri->epi ? 1 : 0));
        snprintf(why, cap,
                 "[reduction.symbolic] the row of %s has an unbound extent, so holding it on chip "
                 "cannot be proven to fit: "
                 "planned %s in %u passes over HBM; fits on chip when the extent is bound with -D "
                 "and small enough",
                 nm(g, rg->anchor, n1, sizeof n1), ri->online ? "online" : "multipass", rg->passes);
    }
    ir_poly sp = ri->rowbytes;
    ir_poly_scale(&sp, rg->passes - 1);
    double v;
    rg->spilled_bytes = ir_poly_is_const(&sp, &v) && v < 9e18 ? (int64_t)v : -1;
}

/* The block scratch of a reduction region: one f32 partial per warp of a 256-thread block per
 * reduction; 0 (one warp per row, shuffles only) when that exceeds the budget. */
static int64_t red_scratch(const redinfo *ri, int64_t budget) {
    int64_t scratch = (int64_t)RED_SCRATCH_PER * ri->nred;
    return scratch > budget ? 0 : scratch;
}

/* The schedule facts of a reduction region planned as rg (strategy already set). */
static void red_facts(const ir_region *rg, const redinfo *ri, const pass_gpu *gpu, int64_t budget,
                      int64_t scratch, int64_t row_bytes, pass_sched_facts *f) {
    memset(f, 0, sizeof *f);
    f->kind = IR_RK_REDUCTION;
    f->strategy = rg->strategy;
    f->column = red_is_column(rg, ri);
    f->strided = !f->column && !red_is_trailing(rg, ri);
    f->rows = ri->nrows, f->rext = ri->rext;
    f->kin = ri->dom.rank > 0 && !IR_DIM_IS_SYM(ri->dom.dim[ri->dom.rank - 1])
                 ? ri->dom.dim[ri->dom.rank - 1]
                 : -1;
    f->n = ri->nrows < 0 || ri->rext < 0 ? -1 : ri->nrows * ri->rext;
    f->concrete = ri->nrows > 0 && ri->rext > 0;
    f->stages = ri->stages, f->nred = ri->nred, f->held = ri->held;
    f->online_exp = ri->online_exp;
    f->passes = rg->passes;
    f->elem = ri->elem;
    f->velem = ri->velem;
    f->dom_writes = ri->dom_writes;
    f->dom_epi = ri->epi;
    f->wbytes = ri->wbytes;
    f->nbig = ri->nrowreads > 0 ? ri->nrowreads : 1;
    if (ri->nrowreads == 0) f->elem = 4;
    f->scratch = scratch;
    f->row_bytes = row_bytes;
    f->rpb = rg->rows;
    f->sram_base = rg->sram_bytes;
    int64_t ct = 0, cc = !f->column && rg->strategy == IR_RED_ONCHIP && ri->held > 0 && !row_bytes
                             ? cluster_rows(ri, gpu, &ct)
                             : 0;
    if (cc > 1 && rg->sram_bytes == scratch + 4 * CLUSTER_SLOTS) /* the strategy's cluster path */
        f->cluster_blocks = cc, f->cluster_threads = ct;
    int64_t hc = !f->column && rg->strategy != IR_RED_ONCHIP && ri->held > 0 && ri->online &&
                         scratch > 0 && scratch + 4 * CLUSTER_SLOTS <= budget
                     ? cluster_fit(ri, gpu, &ct, true)
                     : 0;
    if (hc > 1)
        f->hold_blocks = hc, f->hold_threads = ct, f->hold_sram = scratch + 4 * CLUSTER_SLOTS;
    f->budget = budget;
    f->gpu = gpu;
}

/* One reduction plan for facts ri: the strategy (red_strategy), then the schedule: `want` when
 * valid (*took), else the rule's (pass_schedule_rule). */
static void plan_red_once(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                          const pass_gpu *gpu, const redinfo *ri, const ir_schedule *want,
                          bool *took, char *why, size_t cap) {
    ir_region *rg = &g->regions[r];
    int64_t scratch = red_scratch(ri, budget), row_bytes;
    red_strategy(g, rg, ri, budget, gpu, scratch, &row_bytes, why, cap);
    pass_sched_facts f;
    red_facts(rg, ri, gpu, budget, scratch, row_bytes, &f);
    if (f.n > 0) f.instr = pass_model_instr(g, ix, r, f.elem);
    ir_schedule s;
    if (want && pass_schedule_valid(&f, want)) {
        s = *want;
        *took = true;
    } else {
        pass_schedule_rule(&f, &s);
    }
    pass_schedule_plan(rg, &f, &s);
}

/* True when region rg (planned, facts ri) holds its row on chip in shared memory at one block
 * per SM (the [reduction.occupancy] case the strategy does not stream by itself: a chain with no
 * online form, or a row that registers could hold; a budget raised beyond the SM is kept), rows
 * and sizes concrete. */
static bool occ_candidate(const ir_region *rg, const redinfo *ri, const pass_gpu *gpu) {
    return gpu && rg->strategy == IR_RED_ONCHIP && ri->held > 0 && ri->rext > 0 && ri->nrows > 0 &&
           rg->tile[0] == ri->rext && rg->sram_bytes > 0 &&
           gpu->smem_per_sm / rg->sram_bytes == 1 && !red_is_column(rg, ri);
}

/* Reduction plan (plan_red_once); [reduction.occupancy] where the row is held on chip at one
 * block per SM (occ_candidate): the row streamed instead (online or multipass, plan_red_once with
 * ri.stream) when the model prices that faster, launch included; why says both times. */
static void plan_reduction(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                           const pass_gpu *gpu, const ir_schedule *want, bool *took, char *why,
                           size_t cap) {
    ir_region *rg = &g->regions[r];
    redinfo ri;
    rg->picks = pass_red_picks(g, ix, r); /* [reduction.pick]: read by the model and codegen */
    red_analyse(g, ix, r, &ri);
    plan_red_once(g, ix, r, budget, gpu, &ri, want, took, why, cap);
    if (!occ_candidate(rg, &ri, gpu)) return;
    pass_cost held, streamed;
    pass_region_cost_ix(g, ix, r, gpu, &held);
    ir_region keep = *rg;
    bool took_held = *took;
    char n1[96], why2[512];
    int64_t bytes = rg->sram_bytes;
    ri.stream = true;
    plan_red_once(g, ix, r, budget, gpu, &ri, want, took, why2, sizeof why2);
    pass_region_cost_ix(g, ix, r, gpu, &streamed);
    if (!held.concrete || !streamed.concrete || streamed.predicted_us >= held.predicted_us) {
        *rg = keep;
        *took = took_held;
        return;
    }
    snprintf(why, cap,
             "[reduction.occupancy] the row of %s fits on chip in %lld B, but then only 1 block "
             "per SM: predicted %.3f us held against %.3f us streamed (%s in %u passes over HBM): "
             "streamed",
             nm(g, rg->anchor, n1, sizeof n1), (long long)bytes, held.predicted_us,
             streamed.predicted_us, rg->strategy == IR_RED_ONLINE ? "online" : "multipass",
             rg->passes);
}

/* ---- matrix products ------------------------------------------------------ */

static const struct {
    int64_t bm, bn, bk;
    int st;
} mm_ladder[] = {
    {128, 128, 64, 3}, {128, 128, 64, 2}, {128, 128, 32, 2}, {128, 64, 32, 2},
    {64, 64, 32, 2},   {64, 64, 16, 2},   {32, 32, 16, 2},   {16, 16, 16, 1},
};

/* Matmul plan: the first ladder entry (clamped to the problem) that fits;
 * the last resort streams operands from L1/L2 with no shared memory. */
static void plan_matmul(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget, char *why,
                        size_t cap) {
    ir_region *rg = &g->regions[r];
    const ir_node *mm = &g->nodes[rg->anchor];
    const ir_node *a = &g->nodes[ir_in(g, mm, 0)], *b = &g->nodes[ir_in(g, mm, 1)];
    int e = ir_dtype_size((ir_dtype)a->dtype);
    if (ir_dtype_size((ir_dtype)b->dtype) > e) e = ir_dtype_size((ir_dtype)b->dtype);
    int64_t nb = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++)
        nb += g->nodes[ix->rids[j]].op == IR_OP_MATMUL;
    int64_t M = mm->shape.dim[mm->shape.rank - 2], N = mm->shape.dim[mm->shape.rank - 1];
    int64_t K = a->shape.dim[a->shape.rank - 1];
    rg->rows = nb;
    int64_t first = -1;
    char n1[96];
    for (size_t i = 0; i < sizeof mm_ladder / sizeof mm_ladder[0]; i++) {
        int64_t bm = clamp_tile(M, mm_ladder[i].bm), bn = clamp_tile(N, mm_ladder[i].bn),
                bk = clamp_tile(K, mm_ladder[i].bk);
        int64_t need = pass_matmul_sram(bm, bn, bk, nb, e, mm_ladder[i].st);
        if (first < 0) first = need;
        if (need > budget) continue;
        rg->tile[0] = bm, rg->tile[1] = bn, rg->tile[2] = bk;
        rg->stages = (uint8_t)mm_ladder[i].st;
        rg->sram_bytes = need;
        rg->threads = (uint32_t)(bm * bn / 64 < 32 ? 32 : bm * bn / 64 > 256 ? 256 : bm * bn / 64);
        if (i > 0)
            snprintf(why, cap,
                     "[matmul.budget] %s: tiles of the first plan need %lld B on chip > budget "
                     "%lld B: planned "
                     "%lldx%lldx%lld, %d stages, at %lld B; fits with --sram-budget >= %lld",
                     nm(g, rg->anchor, n1, sizeof n1), (long long)first, (long long)budget,
                     (long long)bm, (long long)bn, (long long)bk, mm_ladder[i].st, (long long)need,
                     (long long)first);
        return;
    }
    rg->tile[0] = 16, rg->tile[1] = 16, rg->tile[2] = 16;
    rg->stages = 0;
    rg->sram_bytes = 0;
    rg->threads = 64;
    snprintf(why, cap,
             "[matmul.budget] %s: even 16x16x16 tiles need %lld B > budget %lld B: planned without "
             "shared memory "
             "(operands read through L1/L2); fits with --sram-budget >= %lld",
             nm(g, rg->anchor, n1, sizeof n1), (long long)pass_matmul_sram(16, 16, 16, nb, e, 1),
             (long long)budget, (long long)pass_matmul_sram(16, 16, 16, nb, e, 1));
}

/* ---- attention ---------------------------------------------------------- */

bool pass_attention_simt(const ir_graph *g, uint32_t r) {
    const ir_region *rg = &g->regions[r];
    if (rg->kind != IR_RK_ATTENTION || rg->mm1 >= g->n || rg->anchor >= g->n) return false;
    const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
    ir_dtype dt = (ir_dtype)g->nodes[ir_in(g, m1, 0)].dtype;
    bool half = dt == IR_F16 || dt == IR_BF16;
    return !(half && g->nodes[ir_in(g, m1, 1)].dtype == dt &&
             g->nodes[ir_in(g, m2, 1)].dtype == dt && g->nodes[ir_in(g, m2, 0)].dtype == dt);
}

/* The first product (scores) of an attention region: its other matmul. */
static ir_id att_scores(const ir_graph *g, const pass_index *ix, uint32_t r) {
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++)
        if (g->nodes[ix->rids[j]].op == IR_OP_MATMUL && ix->rids[j] != g->regions[r].anchor)
            return ix->rids[j];
    return g->regions[r].anchor;
}

/* A dim's value at compile time: its extent, a symbol's bound value, or <= 0 when unbound. */
static int64_t dim_value(const ir_graph *g, ir_dim d) {
    return IR_DIM_IS_SYM(d) ? g->syms[IR_DIM_SYMIDX(d)].value : d;
}

bool pass_attention_ksplit(const ir_graph *g, uint32_t r) {
    const ir_region *rg = &g->regions[r];
    if (rg->mm1 >= g->n || rg->anchor >= g->n) return false;
    const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
    const ir_node *q = &g->nodes[ir_in(g, m1, 0)], *k = &g->nodes[ir_in(g, m1, 1)],
                  *v = &g->nodes[ir_in(g, m2, 1)], *p = &g->nodes[ir_in(g, m2, 0)];
    ir_dtype dt = (ir_dtype)q->dtype;
    if ((dt != IR_F16 && dt != IR_BF16) || k->dtype != dt || v->dtype != dt || p->dtype != dt)
        return false;
    int64_t rows = dim_value(g, m2->shape.dim[m2->shape.rank - 2]),
            d = dim_value(g, q->shape.dim[q->shape.rank - 1]),
            dv = dim_value(g, m2->shape.dim[m2->shape.rank - 1]);
    return rows >= 1 && rows <= 16 && d >= 1 && d <= 128 && dv >= 1 && dv <= 128;
}

int pass_attention_gqa_pack(const ir_graph *g, const ir_region *rg, int64_t *t) {
    *t = 0;
    if (rg->strategy != IR_RED_KSPLIT || rg->mm1 >= g->n || rg->anchor >= g->n) return 0;
    const char *knob = getenv("TX_ATTN_GQA_PACK");
    if (knob && !strcmp(knob, "0")) return 0;
    const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
    unsigned nb = m2->shape.rank - 2;
    if (m2->shape.rank < 3) return 0;
    int64_t gs = dim_value(g, m2->shape.dim[nb - 1]), sq = dim_value(g, m2->shape.dim[nb]);
    if (gs < 2 || sq < 1 || gs * sq > 16) return 0;
    const ir_id kv[2] = {ir_in(g, m1, 1), ir_in(g, m2, 1)};
    for (int i = 0; i < 2; i++) { /* K and V: size 1 (or absent) on the group axis */
        const ir_shape *sh = &g->nodes[kv[i]].shape;
        if (sh->rank >= 3 && sh->dim[sh->rank - 3] != 1) return 0;
    }
    const ir_shape *qs = &g->nodes[ir_in(g, m1, 0)].shape;
    if (qs->rank < 3 || qs->dim[qs->rank - 3] != m2->shape.dim[nb - 1]) return 0;
    *t = sq;
    return (int)gs;
}

static double io_bytes(const ir_graph *g, const pass_index *ix, uint32_t r);

int64_t pass_attention_split_base(const ir_graph *g, const ir_region *rg) {
    if (rg->anchor >= g->n) return 1;
    const ir_node *m2 = &g->nodes[rg->anchor];
    int64_t nb = 1, gt, gp = pass_attention_gqa_pack(g, rg, &gt);
    for (unsigned i = 0; i + 2 < m2->shape.rank; i++) {
        int64_t x = dim_value(g, m2->shape.dim[i]);
        if (x > 1 && !ir_mul_ok(nb, x, &nb)) return 1;
    }
    if (gp > 1 && nb % gp == 0) nb /= gp;
    return nb;
}

/* [attention.split_kv] with a size bound only at run time (batch dims or keys): the chunks that
 * would fill the resident slots of the key split's blocks (the price's per-SM count) for the
 * fewest batch blocks the known sizes allow (pass_attention_split_base: symbols counted as 1),
 * at most KS_RT_SPLITS (the scratch holds that many partials per row whatever the batch); the
 * kernel uses min(them, slots / its blocks, key tiles / 4) at run time (codegen split_chunk). */
enum { KS_RT_SPLITS = 16 };
static uint32_t att_splits_rt(const ir_graph *g, ir_region *rg, const pass_gpu *gpu, int64_t rows,
                              int64_t d, int64_t dv, int e) {
    int64_t base = pass_attention_split_base(g, rg), gt;
    if (pass_attention_gqa_pack(g, rg, &gt) > 1) rows *= pass_attention_gqa_pack(g, rg, &gt);
    pass_attn_split o;
    pass_attention_split_price(gpu, base, rows, 1 << 20, d, dv, e, 1.0, 1, &o);
    int64_t slots = (int64_t)gpu->sms * o.per_sm, s = slots / (base > 0 ? base : 1);
    if (s < 2) return 1;
    rg->split_slots = (uint32_t)slots;
    return (uint32_t)(s > KS_RT_SPLITS ? KS_RT_SPLITS : s);
}

/* [attention.split_kv] for an attention.ksplit region r: the chunks of the keys the model's price
 * picks (pass_attention_split_pick) from the shape: batch elements x query rows against the SMs
 * and the key length; 1 (not split) when a size is unknown or there is no GPU table. */
static uint32_t att_splits(ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu) {
    ir_region *rg = &g->regions[r];
    rg->split_slots = 0;
    const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
    const ir_node *q = &g->nodes[ir_in(g, m1, 0)];
    int64_t nb = 1;
    bool known = true;
    for (unsigned i = 0; i + 2 < m2->shape.rank; i++) {
        int64_t x = dim_value(g, m2->shape.dim[i]);
        if (x < 1) known = false;
        if (x >= 1 && !ir_mul_ok(nb, x, &nb)) return 1;
    }
    int64_t rows = dim_value(g, m2->shape.dim[m2->shape.rank - 2]),
            sk = dim_value(g, m1->shape.dim[m1->shape.rank - 1]),
            d = dim_value(g, q->shape.dim[q->shape.rank - 1]),
            dv = dim_value(g, m2->shape.dim[m2->shape.rank - 1]);
    if (!gpu || rows < 1 || d < 1 || dv < 1) return 1;
    if (!known || sk < 1)
        return att_splits_rt(g, rg, gpu, rows, d, dv, ir_dtype_size((ir_dtype)q->dtype));
    double bytes = io_bytes(g, ix, r);
    if (bytes <= 0) return 1;
    int64_t gt, gp = pass_attention_gqa_pack(g, rg, &gt);
    if (gp > 1) nb /= gp, rows *= gp; /* [attention.gqa_pack]: a group's heads per block */
    pass_attn_split o;
    return (uint32_t)pass_attention_split_pick(gpu, nb, rows, sk, d, dv,
                                               ir_dtype_size((ir_dtype)q->dtype), bytes, &o);
}

static void plan_attention(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                           const pass_gpu *gpu) {
    ir_region *rg = &g->regions[r];
    const ir_node *m1 = &g->nodes[att_scores(g, ix, r)], *m2 = &g->nodes[rg->anchor];
    const ir_node *q = &g->nodes[ir_in(g, m1, 0)], *v = &g->nodes[ir_in(g, m2, 1)];
    int64_t d = q->shape.dim[q->shape.rank - 1], dv = v->shape.dim[v->shape.rank - 1];
    int e = ir_dtype_size((ir_dtype)q->dtype);
    if (ir_dtype_size((ir_dtype)v->dtype) > e) e = ir_dtype_size((ir_dtype)v->dtype);
    int64_t bq = 16, bkv = 16;
    int st = 1;
    pass_attention_fit(d, dv, e, budget, &bq, &bkv,
                       &st); /* the planner formed the region only if it fits */
    int64_t sk = m1->shape.dim[m1->shape.rank - 1];
    rg->strategy = pass_attention_ksplit(g, r) ? IR_RED_KSPLIT : IR_RED_ONLINE;
    rg->split_slots = 0;
    rg->splits = rg->strategy == IR_RED_KSPLIT ? att_splits(g, ix, r, gpu) : 0;
    if (rg->splits == 1) rg->splits = 0;
    rg->ks_tma = rg->strategy == IR_RED_KSPLIT && gpu && gpu->attn_eff > 0 &&
                 pass_attention_ks_tma_pick(g, r, NULL, 0);
    rg->passes = 1;
    rg->stages = (uint8_t)st;
    rg->rows = bq;
    rg->red_extent = IR_DIM_IS_SYM(sk) ? -1 : sk;
    rg->red_axes = 1u << (m1->shape.rank - 1);
    rg->tile[0] = bq, rg->tile[1] = bkv, rg->tile[2] = d;
    rg->threads = bq >= 128 ? 256 : 128;
    rg->sram_bytes = pass_attention_sram(bq, bkv, d, dv, e, st);
    int64_t sq = m2->shape.dim[m2->shape.rank - 2], sbm, sbn;
    pass_attn_sg sg;
    if (rg->mm1 < g->n && pass_attention_simt(g, r) && !IR_DIM_IS_SYM(d) && !IR_DIM_IS_SYM(dv) &&
        pass_attention_simt_tile(IR_DIM_IS_SYM(sq) ? 0 : sq, IR_DIM_IS_SYM(sk) ? 0 : sk, d, dv,
                                 &sbm, &sbn) &&
        pass_attention_simt_geom(sbm, sbn, d, dv, &sg) && sg.bytes <= budget) {
        /* [attention.simt]: the CUDA-core block's tile and shared memory */
        rg->stages = 1;
        rg->rows = sbm;
        rg->tile[0] = sbm, rg->tile[1] = sbn;
        rg->threads = PASS_ATTN_SG_THREADS;
        rg->sram_bytes = sg.bytes;
    }
}

/* ---- copies and pointwise ---------------------------------------------- */

static void plan_copy(ir_graph *g, uint32_t r, int64_t budget) {
    ir_region *rg = &g->regions[r];
    const ir_node *a = &g->nodes[rg->anchor];
    rg->threads = 256;
    int64_t need = 32 * 33 * ir_dtype_size((ir_dtype)a->dtype);
    if (a->op == IR_OP_PERMUTE && need <= budget) { /* transpose through a padded 32x32 tile */
        rg->tile[0] = 32, rg->tile[1] = 32;
        rg->sram_bytes = need;
    } else {
        rg->tile[0] = 1024;
    }
}

/* Element count of shape s; -1 when a dim is symbolic. */
static int64_t numel_of(const ir_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i]) || !ir_mul_ok(n, s->dim[i], &n)) return -1;
    return n;
}

/* The schedule facts of pointwise region r: its elements, rows and innermost extent, the reads
 * of that many elements (their count and widest dtype), the widest dtype it touches and its
 * instruction counts. */
static void pw_facts(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                     int64_t budget, pass_sched_facts *f) {
    memset(f, 0, sizeof *f);
    f->kind = IR_RK_POINTWISE;
    f->n = numel_of(&g->nodes[g->regions[r].anchor].shape);
    f->concrete = f->n >= 0;
    f->elem = 1;
    f->budget = budget;
    f->gpu = gpu;
    f->velem = 1;
    pass_io io;
    pass_region_io(g, ix, r, &io);
    for (uint32_t i = 0; i < io.nreads + io.nwrites; i++) {
        const ir_node *v = &g->nodes[i < io.nreads ? io.reads[i] : io.writes[i - io.nreads]];
        if (ir_dtype_size((ir_dtype)v->dtype) > f->velem)
            f->velem = ir_dtype_size((ir_dtype)v->dtype);
        if (i >= io.nreads || f->n < 0 || numel_of(&v->shape) != f->n) continue;
        f->nbig++;
        if (ir_dtype_size((ir_dtype)v->dtype) > f->elem)
            f->elem = ir_dtype_size((ir_dtype)v->dtype);
    }
    pass_io_free(&io);
    const ir_shape *an = &g->nodes[g->regions[r].anchor].shape;
    f->rext = an->rank ? (IR_DIM_IS_SYM(an->dim[an->rank - 1]) ? -1 : an->dim[an->rank - 1]) : 1;
    f->rows = f->n >= 0 && f->rext > 0 ? f->n / f->rext : -1;
    if (f->n > 0) {
        pass_model_pw_issue(g, ix, r, f->velem, &f->pw);
        f->instr = f->pw.flat;
    }
}

/* The HBM bytes region r reads and writes (each value once, at its stored dtype); -1 when a size
 * is unbound. */
static double io_bytes(const ir_graph *g, const pass_index *ix, uint32_t r) {
    pass_io io;
    pass_region_io(g, ix, r, &io);
    double b = 0;
    for (uint32_t i = 0; i < io.nreads + io.nwrites && b >= 0; i++) {
        const ir_node *v = &g->nodes[i < io.nreads ? io.reads[i] : io.writes[i - io.nreads]];
        int64_t n = numel_of(&v->shape);
        b = n < 0 ? -1 : b + (double)n * ir_dtype_size((ir_dtype)v->dtype);
    }
    pass_io_free(&io);
    return b;
}

void pass_schedule_facts(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                         int64_t budget, pass_sched_facts *f) {
    const ir_region *rg = &g->regions[r];
    if (rg->kind == IR_RK_POINTWISE) {
        pw_facts(g, ix, r, gpu, budget, f);
        return;
    }
    if (rg->kind != IR_RK_REDUCTION) {
        memset(f, 0, sizeof *f);
        f->kind = rg->kind;
        f->gpu = gpu;
        f->budget = budget;
        /* the SIMT kernel first: it takes what tensor cores cannot (f32) and, at a small K,
         * f16/bf16 products ([matmul.simt.small_k]) before the wgmma form */
        if (rg->kind == IR_RK_MATMUL && pass_simt_facts(g, ix, r, &f->sgs)) {
            f->simt = true;
            f->concrete = f->sgs.M > 0 && f->sgs.N > 0 && f->sgs.K > 0 && f->sgs.batch > 0;
            f->wg_bytes = io_bytes(g, ix, r);
        } else if (rg->kind == IR_RK_MATMUL && pass_wg_facts(g, ix, r, gpu, budget, &f->wgs)) {
            f->wg = true;
            f->concrete = f->wgs.M > 0 && f->wgs.N > 0 && f->wgs.K > 0;
            f->wg_bytes = io_bytes(g, ix, r);
            pass_simt_rows_facts(g, r, &f->wgs, &f->sgs); /* [matmul.simt.gemv_rows] */
        }
        return;
    }
    redinfo ri;
    red_analyse(g, ix, r, &ri);
    ri.stream = rg->strategy != IR_RED_ONCHIP; /* a streamed plan (the occupancy choice) */
    ir_region copy = *rg; /* the strategy again, on a copy: rows and bytes before the schedule */
    char why[512];
    int64_t scratch = red_scratch(&ri, budget), row_bytes;
    red_strategy(g, &copy, &ri, budget, gpu, scratch, &row_bytes, why, sizeof why);
    red_facts(&copy, &ri, gpu, budget, scratch, row_bytes, f);
    if (f->n > 0) f->instr = pass_model_instr(g, ix, r, f->elem);
    f->strategy = rg->strategy; /* the plan's, whatever budget the caller names */
    f->passes = rg->passes;
}

/* Appends [matmul.wgmma.stage]'s numbers to why: the staging kernels' bytes and time plus the
 * wgmma kernel's (the model's tile) against the mma.sync kernel reading the operands in place
 * (pass_wg_shape.sync_us), and which schedule s (the rule's or the wanted one) keeps. */
static void stage_why(const pass_sched_facts *f, const ir_schedule *s, char *why, size_t cap) {
    const pass_wg_shape *w = &f->wgs;
    pass_wg_tile t;
    pass_wg_time tm;
    if (!pass_wg_pick(w, f->gpu, f->wg_bytes, &t)) return;
    double us = pass_wg_model(w, &t, f->gpu, f->wg_bytes, &tm);
    const char *took = s->id == PASS_SCH_MATMUL_WGMMA || s->id == PASS_SCH_MATMUL_WGMMA_SWAP
                           ? "staged, wgmma"
                       : s->id == PASS_SCH_MATMUL_SKINNY ? "the skinny kernel (in place)"
                                                         : "kept on mma.sync, in place";
    size_t n = strlen(why);
    snprintf(why + n, cap - n,
             "%s[matmul.wgmma.stage] %d operand%s (%s%s%s) with rows not a multiple of 16 bytes: "
             "staging %.2f MB read and written %.3f us + wgmma %.3f us = %.3f us; mma.sync in "
             "place %.2f M scalar loads at %.2f per SM per clock + products = %.3f us: %s",
             n ? "; " : "", w->nstage, w->nstage > 1 ? "s" : "", w->a_staged ? "A" : "",
             w->a_staged && w->b_staged ? ", " : "", w->b_staged ? "B" : "", w->stage_bytes / 1e6,
             tm.stage_us, us - tm.stage_us, us, w->sync_loads / 1e6, PASS_ELEM_LOAD_EPC, w->sync_us,
             took);
}

bool pass_plan_region_with(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                           const pass_gpu *gpu, const ir_schedule *want, char *why, size_t cap) {
    ir_region *rg = &g->regions[r];
    bool took = want == NULL;
    why[0] = 0;
    rg->sram_bytes = rg->spilled_bytes = 0;
    rg->tile[0] = rg->tile[1] = rg->tile[2] = 0;
    rg->passes = 1;
    rg->stages = 0;
    rg->rows = 1;
    rg->red_extent = 0;
    rg->splits = 0;
    memset(&rg->sched, 0, sizeof rg->sched);
    switch ((ir_region_kind)rg->kind) {
        case IR_RK_REDUCTION: plan_reduction(g, ix, r, budget, gpu, want, &took, why, cap); break;
        case IR_RK_MATMUL: {
            plan_matmul(g, ix, r, budget, why, cap);
            pass_sched_facts f; /* [matmul.wgmma] where the sm_90a kernel applies */
            ir_schedule s;
            pass_schedule_facts(g, ix, r, gpu, budget, &f);
            if (want && pass_schedule_valid(&f, want)) {
                s = *want;
                took = true;
            } else {
                pass_schedule_rule(&f, &s);
            }
            if (s.id == PASS_SCH_MATMUL_WGMMA || s.id == PASS_SCH_MATMUL_SKINNY ||
                s.id == PASS_SCH_MATMUL_SIMT || s.id == PASS_SCH_MATMUL_WGMMA_SWAP)
                pass_schedule_plan(rg, &f, &s);
            if (f.wg && f.concrete && f.wgs.nstage > 0) stage_why(&f, &s, why, cap);
            if (!f.wg && !f.simt && !f.wgs.batch_why)
                (void)pass_wg_why_not(g, ix, r, gpu, why, cap);
            if (!f.wg && f.wgs.batch_why) {
                size_t n = strlen(why);
                const pass_wg_shape *w = &f.wgs;
                char what[128];
                if (w->batch_why == 1)
                    snprintf(what, sizeof what,
                             "one element fills less than %.3f of a 64x64x64 wgmma tile",
                             PASS_WG_BATCH_FILL);
                else
                    snprintf(what, sizeof what,
                             "an operand row pitch is not a multiple of 16 bytes at an unbound "
                             "size (staging is priced at known sizes only)");
                if (w->batch_why == 1)
                    snprintf(why + n, cap - n,
                             "%s[matmul.wgmma.batch] %lld batch elements of %lldx%lldx%lld: %s; "
                             "the batched product stays on mma.sync",
                             n ? "; " : "", (long long)w->batch, (long long)w->M, (long long)w->N,
                             (long long)w->K, what);
                else
                    snprintf(why + n, cap - n,
                             "%s[matmul.wgmma.batch] %s; the batched product stays on mma.sync",
                             n ? "; " : "", what);
            }
            break;
        }
        case IR_RK_ATTENTION: plan_attention(g, ix, r, budget, gpu); break;
        case IR_RK_COPY: plan_copy(g, r, budget); break;
        default: {
            pass_sched_facts f;
            ir_schedule s;
            pw_facts(g, ix, r, gpu, budget, &f);
            if (want && pass_schedule_valid(&f, want)) {
                s = *want;
                took = true;
            } else {
                pass_schedule_rule(&f, &s);
            }
            pass_schedule_plan(rg, &f, &s);
            break;
        }
    }
    if (!took) {
        char b[128];
        size_t n = strlen(why);
        pass_schedule_str(want, b, sizeof b);
        snprintf(why + n, cap - n,
                 "%s[schedule.invalid] %s is not in this kernel's schedule space at these sizes: "
                 "the rule's choice is kept",
                 n ? "; " : "", b);
    }
    pass_io io;
    pass_region_io(g, ix, r, &io);
    rg->nout = (uint16_t)io.nwrites;
    pass_io_free(&io);
    return took;
}

void pass_plan_region(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                      const pass_gpu *gpu, char *why, size_t cap) {
    pass_plan_region_with(g, ix, r, budget, gpu, NULL, why, cap);
}

/* ---- the simulation ---------------------------------------------------- */

/* Product of the concrete dims [from, to) of s; -1 when one is symbolic. */
static int64_t dims_prod(const ir_shape *s, int from, int to) {
    int64_t p = 1;
    for (int i = from; i < to; i++)
        if (IR_DIM_IS_SYM(s->dim[i]) || !ir_mul_ok(p, s->dim[i], &p)) return -1;
    return p;
}

/* Programs resident at once: SMs x blocks per SM (shared memory and
 * 2048 threads per SM permitting, at most 8). */
static int64_t wave_of(const pass_gpu *gpu, const ir_region *rg) {
    int64_t per = rg->sram_bytes > 0 ? gpu->smem_per_sm / rg->sram_bytes : 8;
    int64_t tl = 2048 / (rg->threads ? rg->threads : 256);
    if (per > tl) per = tl;
    if (per > 8) per = 8;
    if (per < 1) per = 1;
    return per * gpu->sms;
}

void pass_sched_region(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                       pass_sched *s) {
    const ir_region *rg = &g->regions[r];
    const ir_node *an = &g->nodes[rg->anchor];
    memset(s, 0, sizeof *s);
    int64_t wave = wave_of(gpu, rg);
    if (rg->kind == IR_RK_MATMUL) {
        const ir_node *a = &g->nodes[ir_in(g, an, 0)];
        int64_t M = dims_prod(&an->shape, an->shape.rank - 2, an->shape.rank - 1);
        int64_t N = dims_prod(&an->shape, an->shape.rank - 1, an->shape.rank);
        int64_t K = dims_prod(&a->shape, a->shape.rank - 1, a->shape.rank);
        int64_t B = dims_prod(&an->shape, 0, an->shape.rank - 2);
        if (M < 0 || N < 0 || K < 0 || B < 0) return;
        pass_sched_matmul(cdiv(M, rg->tile[0]), cdiv(N, rg->tile[1]), B, cdiv(K, rg->tile[2]),
                          rg->rows, wave, s);
        return;
    }
    if (rg->kind == IR_RK_ATTENTION) {
        ir_id m1 = att_scores(g, ix, r);
        const ir_node *sc = &g->nodes[m1];
        int64_t sq = dims_prod(&sc->shape, sc->shape.rank - 2, sc->shape.rank - 1);
        int64_t sk = dims_prod(&sc->shape, sc->shape.rank - 1, sc->shape.rank);
        int64_t B = dims_prod(&sc->shape, 0, sc->shape.rank - 2);
        if (sq < 0 || sk < 0 || B < 0) return;
        int64_t nq = cdiv(sq, rg->tile[0]), ks = cdiv(sk, rg->tile[1]);
        pass_sched kv; /* K/V tiles keyed by (batch, step): shared by the programs of one head */
        pass_sched_matmul(1, nq, B, ks, 0, wave, &kv);
        int64_t req; /* kv.grid * ks requests of each of K and V; everything below is smaller than
                        4x req */
        if (!kv.concrete || !ir_mul_ok(kv.grid, ks, &req) || req > INT64_MAX / 4) return;
        s->concrete = true;
        s->grid = kv.grid;
        s->wave = wave;
        s->tiles_per_program = 1 + 2 * ks;   /* Q once, K and V per step */
        s->misses = s->grid + 2 * kv.misses; /* Q tiles + distinct K/V tiles per wave */
        s->hits =
            (req - s->grid) + 2 * (req - kv.misses); /* Q reuse from smem + shared K/V tiles */
        return;
    }
    pass_io io;
    pass_region_io(g, ix, r, &io);
    int64_t nin = io.nreads;
    if (rg->kind == IR_RK_REDUCTION) {
        redinfo ri;
        red_analyse(g, ix, r, &ri);
        int64_t chunk = rg->tile[0] > 0 ? rg->tile[0] : RED_CHUNK, loads, all, grid;
        int64_t logical = ri.stages + (ri.needs_rows ? 1 : 0);
        int64_t reps = rg->strategy == IR_RED_ONCHIP ? (ri.held ? logical : 1) : rg->passes;
        if (ri.rext > 0 && ri.nrows > 0 && ir_mul_ok(rg->rows, cdiv(ri.rext, chunk), &loads) &&
            ir_mul_ok(loads, nin > 0 ? nin : 1, &loads) &&
            ir_mul_ok((grid = cdiv(ri.nrows, rg->rows)), loads, &all) &&
            ir_mul_ok(all, reps, &all)) {
            s->concrete = true;
            s->grid = grid;
            s->wave = wave;
            s->misses =
                rg->strategy == IR_RED_ONCHIP ? grid * loads : all; /* onchip: later passes hit */
            s->hits = all - s->misses;
            s->tiles_per_program = loads * reps;
        }
    } else {
        int64_t n = dims_prod(&an->shape, 0, an->shape.rank);
        if (rg->kind == IR_RK_COPY || rg->kind == IR_RK_POINTWISE) {
            int64_t per = rg->tile[0] * (rg->tile[1] ? rg->tile[1] : 1);
            int64_t miss;
            if (n >= 0 && per > 0 && ir_mul_ok(cdiv(n, per), nin, &miss)) {
                s->concrete = true;
                s->grid = cdiv(n, per);
                s->wave = wave;
                s->tiles_per_program = nin;
                s->misses = miss;
            }
        }
    }
    pass_io_free(&io);
}
