/* model.c - the schedule-aware time of a memory-bound region (docs/cost-model.md "Model"):
 * resident blocks per SM from threads and shared memory, the SMs the grid keeps busy, the bytes
 * each thread has in flight as codegen emits the schedule (vector width, held elements, unrolled
 * groups), Little's law against the GPU's loaded memory latency for the bandwidth those bytes
 * sustain, and the tail wave. Matrix products and attention keep the roofline. */
#include "passes/passes.h"
#include "passes/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_THREADS_SM = 2048, MAX_BLOCKS_SM = 32, VEC_BYTES = 16 };
/* The PTX instructions that split an element's offset by one extent into a quotient and a
 * remainder: a known power of two by a shift and a mask, another known extent by a
 * multiply-high, a shift, a multiply and a subtraction, an unbound one by the 32-bit division
 * NVPTX emits where both fit (its SASS expansion). */
enum { PW_DIV_POW2 = 2, PW_DIV_CONST = 4, PW_DIV_SYM = 20 };
/* A combine kernel (reduction.row_split2, attention's split KV) or a split row's last block
 * (reduction.row_split): two dependent DRAM round trips (the partials' stores becoming visible or
 * the fenced ticket, then the partials' loads) at the DRAM's loaded latency (~0.6 us on Hopper;
 * docs/cost-model.md: an assumption, not yet measured). */
enum { COMBINE_ROUNDS = 2 };
/* A kernel's fill and drain: its first loads and the drain of its last stores each wait one DRAM
 * round trip, and a busy SM moves its share of the bytes at no more than its share of the HBM
 * bandwidth: the floor of a kernel of one wave or less (few rows, small tensors). */
enum { FILL_ROUNDS = 2 };
#define DRAM_LATENCY_US 0.6
/* One cluster barrier of a row held across a thread-block cluster (reduction.cluster_rows): the
 * exchange's arrive and wait and the distributed shared-memory reads after it, measured on the
 * H200 by bench/red_wide.sh (TX_RED_XBAR: more barriers a row, the time per barrier from the
 * difference: softmax f32 [264, 65536], 8 waves of 33 clusters, 61.0 -> 75.9 us with 4 more a
 * row, 0.47 us each; docs/cost-model.md "Cluster barriers"). */
#define CLUSTER_SYNC_US 0.47

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* The key-split kernel's block (codegen/attention.c attn_tc_block, ks mode): 128 threads, key
 * tiles of KS_BN keys through a ring of KS_STAGES cp.async stages; its shared memory: the Q tile
 * of 16 rows, then the stages of a K and a V tile (rows padded by 8 elements; the warps' combine,
 * 2048 + 512 bytes per 8 value columns, reuses the ring after the last tile). */
enum { KS_BN = 64, KS_STAGES = 3, KS_THREADS = 128, KS_MIN_TILES = 4, KS_MAX_SPLITS = 64 };
/* The time one key-split block takes per 64-key tile of K and V, whatever else runs (it waits on
 * its own chain: copies, ldmatrix, mma, the softmax, one barrier a tile): measured on the H200
 * (bench/results/2026-12-01-h200-decode: B1 H32 D128 unsplit, 32 blocks, 1073 GB/s at L32768 and
 * 1040 at L8192: 33 GB/s, a 32 KiB tile per 0.99 us); other head dims are assumed to take the
 * same time per tile; the other GPUs are assumed equal. */
#define KS_TILE_US 1.0

static int64_t ks_block_smem(int64_t d, int64_t dv) {
    int64_t dp = cdiv(d, 16) * 16, dvp = cdiv(dv, 16) * 16;
    int64_t stage = (int64_t)KS_BN * (dp + 8) * 2 + (int64_t)KS_BN * (dvp + 8) * 2;
    int64_t q = 16 * (dp + 8) * 2, comb = 2048 + dvp / 8 * 512;
    return (stage * KS_STAGES >= comb || q > comb ? q : comb) + stage * KS_STAGES;
}

void pass_attention_split_price(const pass_gpu *gpu, int64_t nb, int64_t rows, int64_t sk,
                                int64_t d, int64_t dv, int e, double bytes, int splits,
                                pass_attn_split *o) {
    memset(o, 0, sizeof *o);
    if (splits < 1) splits = 1;
    o->splits = splits;
    o->chunk = cdiv(cdiv(sk, KS_BN), splits) * KS_BN;
    o->blocks = nb * splits;
    int64_t per = gpu->smem_per_sm / ks_block_smem(d, dv);
    if (per > MAX_THREADS_SM / KS_THREADS) per = MAX_THREADS_SM / KS_THREADS;
    o->per_sm = per < 1 ? 1 : per;
    int64_t slots = (int64_t)gpu->sms * o->per_sm;
    int64_t resident = o->blocks < slots ? o->blocks : slots;
    /* each resident block streams one tile of K and V per KS_TILE_US; the blocks' demand meets
     * the HBM rate softly: bw = hbm (1 - exp(-demand / hbm)) */
    double tile = (double)KS_BN * (double)(d + dv) * e;
    double sustain = (double)resident * tile / (KS_TILE_US * 1e3);
    o->bw_GBps = gpu->hbm_GBps * (1.0 - exp(-sustain / gpu->hbm_GBps));
    double waves = (double)o->blocks / (double)slots;
    double tail = waves > 1 ? ceil(waves) / waves : 1.0;
    o->mem_us = o->bw_GBps > 0 ? bytes / (o->bw_GBps * 1e3) * tail : 0;
    if (splits > 1) {
        o->scratch_bytes = (int64_t)splits * nb * rows * (dv + 2) * 4;
        o->comb_us = gpu->launch_us + COMBINE_ROUNDS * DRAM_LATENCY_US +
                     2.0 * (double)o->scratch_bytes / (gpu->hbm_GBps * 1e3);
    }
    o->time_us = o->mem_us + o->comb_us;
}

int pass_attention_split_pick(const pass_gpu *gpu, int64_t nb, int64_t rows, int64_t sk, int64_t d,
                              int64_t dv, int e, double bytes, pass_attn_split *o) {
    pass_attention_split_price(gpu, nb, rows, sk, d, dv, e, bytes, 1, o);
    if (!gpu || nb < 1 || rows < 1 || sk < 1 || d < 1 || dv < 1 || bytes <= 0) return 1;
    int64_t smax = cdiv(sk, KS_BN) / KS_MIN_TILES;
    if (smax > KS_MAX_SPLITS) smax = KS_MAX_SPLITS;
    pass_attn_split t;
    for (int s = 2; s <= smax; s++) {
        pass_attention_split_price(gpu, nb, rows, sk, d, dv, e, bytes, s, &t);
        if (t.time_us < 0.99 * o->time_us) *o = t;
    }
    return o->splits;
}

/* Access classes of the walk (pw_walk), of the index a node is evaluated at: a lane of the
 * anchor's vector group (its shape, reached by elementwise operations only: PW_LANE); a lane of a
 * group codegen derives through a view or a broadcast that keeps groups whole (passes/vecview.c),
 * then elementwise operations of the same shape (PW_ALANE); such a lane behind reshapes (PW_RLANE:
 * the same offset, its reads one vector load per group, but no view or broadcast keeps it a
 * lane); a varying index that is no lane (PW_VAR); or constant along the innermost dim (PW_CONST:
 * the value's shape, right-aligned to the anchor's, has innermost extent 1). */
enum { PW_LANE = 1, PW_VAR = 2, PW_CONST = 4, PW_ALANE = 8, PW_RLANE = 16 };
#define PW_VECTOR (PW_LANE | PW_ALANE | PW_RLANE) /* classes whose reads are vector loads */

/* True when every dim of s is 1 (rank 0 included). */
static bool pw_unit(const ir_shape *s) {
    for (unsigned i = 0; i < s->rank; i++)
        if (s->dim[i] != 1) return false;
    return true;
}

/* The instructions that split an offset into the components of shape s (each non-unit extent
 * after the first: PW_DIV_POW2, PW_DIV_CONST or PW_DIV_SYM). */
static double pw_split(const ir_shape *s) {
    double d = 0;
    for (unsigned i = 1; i < s->rank; i++)
        if (s->dim[i] != 1)
            d += IR_DIM_IS_SYM(s->dim[i])             ? PW_DIV_SYM
                 : (s->dim[i] & (s->dim[i] - 1)) == 0 ? PW_DIV_POW2
                                                      : PW_DIV_CONST;
    return d;
}

/* The class of v's input of shape is, v read at class cls, groups of w (codegen's index of the
 * input, value.c cg_emit_view and cg_index_bcast): a slice or concat keeps a lane a lane where
 * pass_vec_slice or pass_vec_concat holds, a reshape keeps a derived lane's offset, elementwise
 * operands and broadcasts keep the class at v's shape and give a lane a derived one where
 * pass_vec_bcast holds; other views index each element alone. The row constant stays one. */
static int pw_in_class(const ir_graph *g, const ir_node *v, int cls, const ir_shape *is,
                       unsigned w) {
    bool lane = cls & (PW_LANE | PW_ALANE);
    if (cls == PW_CONST) return PW_CONST;
    switch ((ir_op)v->op) {
        case IR_OP_SLICE: return lane && pass_vec_slice(g, v, w) ? PW_ALANE : PW_VAR;
        case IR_OP_CONCAT: return lane && pass_vec_concat(g, v, w) ? PW_ALANE : PW_VAR;
        case IR_OP_RESHAPE: return cls & (PW_ALANE | PW_RLANE) ? PW_RLANE : PW_VAR;
        case IR_OP_BROADCAST: break;
        default:
            if (ir_op_traits((ir_op)v->op) & IR_T_VIEW) return PW_VAR;
    }
    if (ir_shape_eq(is, &v->shape)) return cls;
    return lane && pass_vec_bcast(&v->shape, is, w) != PASS_VB_NONE ? PW_ALANE : PW_VAR;
}

/* Whether codegen's vector path through node v (read at class cls) splits the group's first
 * element into components (cg_vec_base, cg_vec_concat_group): a vector slice or concat, or an
 * operand broadcast along outer dims only (PASS_VB_OUTER). */
static bool pw_view_splits(const ir_graph *g, const ir_node *v, int cls, unsigned w) {
    if (!(cls & (PW_LANE | PW_ALANE))) return false;
    if (v->op == IR_OP_SLICE) return pass_vec_slice(g, v, w);
    if (v->op == IR_OP_CONCAT) return pass_vec_concat(g, v, w);
    if (!(ir_op_traits((ir_op)v->op) & IR_T_ELEM) && v->op != IR_OP_BROADCAST) return false;
    for (unsigned q = 0; q < v->nin; q++)
        if (pass_vec_bcast(&v->shape, &g->nodes[ir_in(g, v, q)].shape, w) == PASS_VB_OUTER)
            return true;
    return false;
}

/* Walks pointwise region r from its stored values to its HBM reads, as codegen evaluates it
 * (cg_emit_value: each node once per index class), summing into o the instructions per element
 * of its operations and loads: a load at a lane of a vector group (the anchor's, or one a view
 * or broadcast keeps whole: pw_in_class) costs 2 per group of w plus a conversion for 16-bit
 * dtypes (o->gcomps where such a view splits the group's start, pw_view_splits); any other load 2
 * plus the conversion per element and needs the element's components; what a row constant computes
 * or loads is also summed into o->rowconst. */
static void pw_walk(const ir_graph *g, const pass_io *io, const ir_shape *an, unsigned w,
                    pass_pw_issue *o) {
    uint8_t *seen = ir_xcalloc(g->n ? g->n : 1, 1), *rd = ir_xcalloc(g->n ? g->n : 1, 1);
    for (uint32_t i = 0; i < io->nreads; i++) rd[io->reads[i]] = 1;
    ir_dim last = an->rank ? an->dim[an->rank - 1] : 1;
    uint32_t cap = 64, n = 0;
    struct pw_item {
        ir_id v;
        int cls;   /* the index class it is read at (pw_in_class), before the row-constant test */
        bool view; /* read by a view: an index of its own (each view's reads counted apart) */
    } *st = ir_xmalloc(cap * sizeof *st);
    for (uint32_t i = 0; i < io->nwrites; i++) {
        const ir_node *v = &g->nodes[io->writes[i]];
        o->flat += (ir_dtype_size((ir_dtype)v->dtype) == 2) + 2.0 / w;
        o->nvec++;
        if (n == cap) st = ir_xrealloc(st, (cap *= 2) * sizeof *st);
        st[n++] =
            (struct pw_item){io->writes[i], ir_shape_eq(an, &v->shape) ? PW_LANE : PW_VAR, false};
    }
    while (n > 0) {
        struct pw_item it = st[--n];
        const ir_node *v = &g->nodes[it.v];
        int cls = it.cls;
        if (last != 1 && (v->shape.rank == 0 || v->shape.dim[v->shape.rank - 1] == 1))
            cls = PW_CONST;
        if (!(rd[it.v] && it.view)) {
            if (seen[it.v] & cls) continue;
            seen[it.v] |= (uint8_t)cls;
        }
        double c = 0;
        if (rd[it.v] && (cls & PW_VECTOR)) {
            c = (ir_dtype_size((ir_dtype)v->dtype) == 2) + 2.0 / w;
            o->nvec++;
        } else if (rd[it.v]) {
            if (!pw_unit(&v->shape)) {
                c = (ir_dtype_size((ir_dtype)v->dtype) == 2) + 2.0;
                o->comps = true;
            }
        } else {
            c = ir_op_issue((ir_op)v->op);
            o->gcomps |= pw_view_splits(g, v, cls, w);
            bool view = ir_op_traits((ir_op)v->op) & IR_T_VIEW;
            for (unsigned q = 0; q < v->nin; q++) {
                ir_id in = ir_in(g, v, q);
                if (n == cap) st = ir_xrealloc(st, (cap *= 2) * sizeof *st);
                st[n++] =
                    (struct pw_item){in, pw_in_class(g, v, cls, &g->nodes[in].shape, w), view};
            }
        }
        o->flat += c;
        if (cls == PW_CONST) o->rowconst += c;
    }
    free(st);
    free(rd);
    free(seen);
}

void pass_model_pw_issue(const ir_graph *g, const pass_index *ix, uint32_t r, int elem,
                         pass_pw_issue *o) {
    memset(o, 0, sizeof *o);
    const ir_region *rg = &g->regions[r];
    if (rg->kind != IR_RK_POINTWISE || rg->anchor >= g->n) return;
    const ir_shape *an = &g->nodes[rg->anchor].shape;
    unsigned w = (unsigned)(VEC_BYTES / (elem > 0 ? elem : 1));
    pass_io io;
    pass_region_io(g, ix, r, &io);
    pw_walk(g, &io, an, w, o);
    pass_io_free(&io);
    o->flat += 4.0 / w; /* the group's index, bound test and step */
    /* the element's offset into components, or the group's first element's once a group (the
     * views' splits of one start are one computation after LLVM's common-subexpression pass) */
    double split = o->comps ? pw_split(an) : o->gcomps ? pw_split(an) / w : 0;
    o->div += split;
    o->flat += split;
}

/* Marks v live, and what it reads through views outside the region (a view carries no
 * instruction of its own, its input is read at the same element). */
static void issue_mark(const ir_graph *g, uint8_t *live, ir_id v) {
    for (;;) {
        live[v] = 1;
        const ir_node *n = &g->nodes[v];
        if (!(ir_op_traits((ir_op)n->op) & IR_T_VIEW) || n->nin == 0) return;
        for (unsigned j = 1; j < n->nin; j++) live[ir_in(g, n, j)] = 1;
        v = ir_in(g, n, 0);
    }
}

/* Instructions per element of the domain of reduction region r (the shape its reductions read):
 * the operations of that shape the streaming loop computes (each once, ir_op_issue: those the
 * loop's reductions and the region's stored values read in the region), one
 * combine per reduction and element (4 for a float sum or mean: codegen's compensated sum), one
 * conversion per f16/bf16 value of that shape it loads, and the loop's addressing per group of w
 * elements as the pointwise count (pass_model_pw_issue). The reductions of `picks`
 * ([reduction.pick]: bit k for the k-th reduction in id order) read one element per row outside the
 * loop: neither their combine nor the operations only they read are counted. Values of the reduced
 * shape are per row, not counted. */
static double reduction_issue(const ir_graph *g, const pass_index *ix, uint32_t r,
                              const pass_io *io, double w, uint32_t picks) {
    const ir_shape *dom = NULL;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1] && !dom; j++) {
        const ir_node *n = &g->nodes[ix->rids[j]];
        if (ir_op_traits((ir_op)n->op) & IR_T_REDUCE) dom = &g->nodes[ir_in(g, n, 0)].shape;
    }
    if (!dom) return 0;
    uint8_t *live = ir_xcalloc(g->n ? g->n : 1, 1);
    for (uint32_t i = 0; i < io->nwrites; i++) issue_mark(g, live, io->writes[i]);
    double n = 0;
    unsigned k = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        const ir_node *v = &g->nodes[ix->rids[j]];
        if (!(ir_op_traits((ir_op)v->op) & IR_T_REDUCE)) continue;
        if (k >= 32 || !(picks & (1u << k))) {
            issue_mark(g, live, ir_in(g, v, 0));
            n +=
                (v->op == IR_OP_SUM || v->op == IR_OP_MEAN) && ir_dtype_is_float((ir_dtype)v->dtype)
                    ? 4
                    : 1;
        }
        k++;
    }
    for (uint32_t j = ix->rstart[r + 1]; j-- > ix->rstart[r];) { /* users before their inputs */
        ir_id m = ix->rids[j];
        const ir_node *v = &g->nodes[m];
        if (!live[m] || (ir_op_traits((ir_op)v->op) & IR_T_REDUCE)) continue;
        for (unsigned q = 0; q < v->nin; q++) issue_mark(g, live, ir_in(g, v, q));
        if (ir_shape_eq(&v->shape, dom)) n += ir_op_issue((ir_op)v->op);
    }
    unsigned big = 0;
    for (uint32_t i = 0; i < io->nreads; i++) {
        const ir_node *v = &g->nodes[io->reads[i]];
        if (!ir_shape_eq(&v->shape, dom) || !live[io->reads[i]]) continue;
        big++;
        n += ir_dtype_size((ir_dtype)v->dtype) == 2;
    }
    free(live);
    return n + (4.0 + 2.0 * big) / w;
}

double pass_model_instr_picks(const ir_graph *g, const pass_index *ix, uint32_t r, int elem,
                              uint32_t picks) {
    if (g->regions[r].kind != IR_RK_REDUCTION) return 0;
    pass_io io;
    pass_region_io(g, ix, r, &io);
    double n = reduction_issue(g, ix, r, &io, (double)(VEC_BYTES / (elem > 0 ? elem : 1)), picks);
    pass_io_free(&io);
    return n;
}

double pass_model_instr(const ir_graph *g, const pass_index *ix, uint32_t r, int elem) {
    if (g->regions[r].kind == IR_RK_REDUCTION)
        return pass_model_instr_picks(g, ix, r, elem, g->regions[r].picks);
    pass_pw_issue o;
    pass_model_pw_issue(g, ix, r, elem, &o);
    return o.flat;
}

/* [attention.simt]'s block (codegen/attention.c attn_sg_block): registers per thread that ptxas
 * gives it (128 at the tiles of pass_attention_simt_tile for head dims 32 .. 256: two blocks of 256
 * threads per SM), and the instructions per element of a tile load (address, bound test,
 * load, conversion, shared store). */
enum { SG_REGS = 128, SG_LOAD_INSTR = 8 };
/* The fraction of the issue rate the block sustains (barriers three times a tile, 16 warps an SM):
 * measured on the H200 (2026-12-03, this kernel against the instruction count of sg_instr):
 * Swin-V2 k2 [4704 x 64 x 64, D 32] 136 us for 78.7 at the full rate (0.58), f32 S = 64 D = 32
 * 0.51, S = 256 D = 64 0.75, S = 1024 D = 64 0.64, S = 1024 D = 128 0.61. */
#define SG_ISSUE_EFF 0.6
/* Above head dim 128 (64-row blocks of 254 registers, one an SM, O += PV's V loads 4 nc / vw per 4
 * keys): measured on the H200 (2026-12-04) f32 d256 causal S = 2048 0.44, S = 512 0.43, GPT-J's
 * k7 (finfo.min mask, every tile) 0.37. */
#define SG_ISSUE_EFF_WIDE 0.42

/* Lane instructions per score of the SIMT block sg: S = Q K^T (dp fmas, a 128-bit shared load
 * per 4 of them and tm + tn fragments), O += P V (dvp fmas; tm P fragments and 4 x nc / vw V
 * loads per 4 keys), F and the softmax per score (*f: ir_op_issue of every elementwise node of F
 * whose shape varies over the rows or keys (codegen emits them per score), of the softmax's sub,
 * exp and cast (its division is per output); one combine per row reduction; the key mask and the
 * P store), the per-row online update per tile
 * (shuffles, the rescale exponent, O's rescale) over the tn scores a thread holds, the K and V
 * tiles' loads. */
static double sg_instr(const ir_graph *g, uint32_t r, const pass_attn_sg *sg, double *qk,
                       double *pv, double *f) {
    const ir_region *rg = &g->regions[r];
    *qk = (double)sg->dp * (1.0 + (double)(sg->tm + sg->tn) / (4.0 * sg->tm * sg->tn));
    *pv = (double)sg->dvp + 4.0 * (sg->tm + 4.0 * sg->nc / sg->vw) / sg->tm;
    *f = 3;
    for (ir_id i = 0; i < rg->anchor && i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->region != r || n->op == IR_OP_MATMUL) continue;
        if (ir_op_traits((ir_op)n->op) & IR_T_REDUCE) {
            *f += 1;
            continue;
        }
        unsigned k = n->shape.rank;
        bool soft = rg->scores < g->n && i > rg->scores; /* the softmax: its sub, exp, cast */
        if (k >= 2 && (n->shape.dim[k - 1] != 1 || n->shape.dim[k - 2] != 1) &&
            (!soft || n->op == IR_OP_SUB || n->op == IR_OP_EXP || n->op == IR_OP_CAST))
            *f += ir_op_issue((ir_op)n->op);
    }
    double row = (4.0 * 2 * 2 + ir_op_issue(IR_OP_EXP) + 6 + sg->nc) / sg->tn;
    double load = SG_LOAD_INSTR * (double)sg->bn * (sg->dp + sg->dvp) / PASS_ATTN_SG_THREADS /
                  (sg->tm * sg->tn);
    return *qk + *pv + *f + row + load;
}

/* [attention.simt] (f32 operands on the CUDA cores): blocks of the planner's tile over every batch
 * element's query tiles, as many per SM as registers (SG_REGS) and shared memory allow; the time
 * is the larger of HBM's and the issue of the lane instructions of every score of the padded
 * tiles (sg_instr) at SG_ISSUE_EFF (SG_ISSUE_EFF_WIDE above head dim 128) of the GPU's issue rate
 * (pass_issue_rate: 4 warp instructions per SM per cycle; fmas issue at that rate, f32 peak = 2 x
 * it), the last wave's tail included. */
static bool model_attention_simt(const ir_graph *g, const ir_region *rg, const pass_gpu *gpu,
                                 pass_model *m) {
    uint32_t r = g->nodes[rg->anchor].region;
    if (!pass_attention_simt(g, r) || rg->threads != PASS_ATTN_SG_THREADS) return false;
    const ir_node *q = &g->nodes[ir_in(g, &g->nodes[rg->mm1], 0)];
    const ir_shape *o = &g->nodes[rg->anchor].shape;
    ir_dim d = q->shape.dim[q->shape.rank - 1], dv = o->dim[o->rank - 1], sq = o->dim[o->rank - 2];
    ir_dim sk = rg->red_extent;
    pass_attn_sg sg;
    if (IR_DIM_IS_SYM(d) || IR_DIM_IS_SYM(dv) || IR_DIM_IS_SYM(sq) || sk <= 0 || sq < 1 ||
        !pass_attention_simt_geom(rg->tile[0], rg->tile[1], d, dv, &sg))
        return false;
    int64_t nb = ir_shape_numel(o);
    if (nb < 0) return false;
    nb /= sq * dv;
    double qk, pv, f, per = sg_instr(g, r, &sg, &qk, &pv, &f), rate = pass_issue_rate(gpu);
    if (rate <= 0) return false;
    int64_t blocks = nb * cdiv(sq, sg.bm);
    bool wide = pass_attention_simt_wide(d, dv);
    m->sg_regs = wide ? 2 * SG_REGS : SG_REGS;
    m->sg_eff = wide ? SG_ISSUE_EFF_WIDE : SG_ISSUE_EFF;
    int64_t res = gpu->regs_per_sm / (m->sg_regs * PASS_ATTN_SG_THREADS),
            sm = gpu->smem_per_sm / sg.bytes;
    if (sm < res) res = sm;
    if (res < 1) res = 1;
    double scores = (double)blocks * sg.bm * (double)(cdiv(sk, sg.bn) * sg.bn);
    if (pass_attention_live(g, rg, sg.bm, sg.bn, &m->live)) scores *= m->live.frac;
    m->schedule = "attention.simt";
    m->threads = PASS_ATTN_SG_THREADS;
    m->grid = blocks;
    m->per_sm = res;
    m->active_sms = (double)(blocks < gpu->sms ? blocks : gpu->sms);
    m->waves = (double)blocks / ((double)gpu->sms * res);
    m->instr = per;
    m->sg_qk = qk, m->sg_pv = pv, m->sg_f = f;
    m->issue_us =
        scores * per / (rate * m->sg_eff) * (m->waves > 1 ? ceil(m->waves) / m->waves : 1.0);
    m->comp_us = m->issue_us;
    m->time_us = m->mem_us > m->issue_us ? m->mem_us : m->issue_us;
    return true;
}

/* The keys of one step of the FA3 kernel at head dim d (codegen/attention.c cg_attn_wg_plan_for:
 * 128 up to d = 128, then what fits beside O's registers). */
static int64_t fa3_key_tile(int64_t d) { return d <= 128 ? 128 : d <= 192 ? 96 : 64; }

/* Attention on the sm_90a kernel (codegen/attention.c; docs/codegen-attention.md) where the
 * rule [attention.fa3] (pass_attention_fa3) holds and the query rows are known: persistent CTAs of
 * 384 threads over tiles of 128 query rows, the tensor cores at gpu->attn_eff of the peak
 * (measured), over the share of the score tiles the kernel visits ([attention.block_sparse],
 * pass_attention_live: about half for causal masks; the report's FLOPs count every score). */
static bool model_attention(const ir_graph *g, const ir_region *rg, const pass_gpu *gpu,
                            const pass_cost *c, pass_model *m) {
    if (rg->strategy == IR_RED_KSPLIT && rg->anchor < g->n) {
        /* the key split (decode): one block of 128 threads per batch element, 16-row tiles;
         * the tensor cores do 16 / rows times the FLOPs (64 / rows on the 64-row tiles, the
         * runner-up) at tc_eff of the peak, K and V stream once */
        const ir_node *a = &g->nodes[rg->anchor];
        const ir_node *q = &g->nodes[ir_in(g, &g->nodes[rg->mm1], 0)];
        int64_t rows = a->shape.dim[a->shape.rank - 2], nb = ir_shape_numel(&a->shape);
        int64_t dv = a->shape.dim[a->shape.rank - 1], d = q->shape.dim[q->shape.rank - 1];
        if (IR_DIM_IS_SYM(rows) || rows < 1 || nb < 0 || IR_DIM_IS_SYM(d) || IR_DIM_IS_SYM(dv) ||
            rg->red_extent <= 0)
            return false;
        nb /= rows * dv;
        int64_t gt, gp = pass_attention_gqa_pack(g, rg, &gt);
        if (gp > 1) nb /= gp, rows *= gp; /* [attention.gqa_pack]: a group's heads per block */
        double rate = gpu->peak_TFLOPs[a->dtype] * gpu->tc_eff * 1e6;
        int e = ir_dtype_size((ir_dtype)q->dtype);
        double bytes = c->br + c->bw + c->sp;
        pass_attention_split_price(gpu, nb, rows, rg->red_extent, d, dv, e, bytes,
                                   rg->splits > 1 ? (int)rg->splits : 1, &m->split);
        pass_attn_split one;
        pass_attention_split_price(gpu, nb, rows, rg->red_extent, d, dv, e, bytes, 1, &one);
        m->split1_us = one.time_us;
        m->schedule = "attention.ksplit";
        m->threads = KS_THREADS;
        m->grid = m->split.blocks;
        m->per_sm = m->split.per_sm;
        m->active_sms = (double)(m->grid < gpu->sms ? m->grid : gpu->sms);
        m->waves = (double)m->grid / ((double)gpu->sms * (double)m->per_sm);
        m->bw_GBps = m->split.bw_GBps;
        m->mem_us = m->split.mem_us;
        m->kernels = m->split.splits > 1 ? 2 : 1;
        m->extra_us = m->split.comb_us;
        m->comp_us = rate > 0 ? c->f * (16.0 / (double)rows) / rate : 0;
        m->time_us = (m->mem_us > m->comp_us ? m->mem_us : m->comp_us) + m->extra_us;
        double c64 = rate > 0 ? c->f * (64.0 / (double)rows) / rate : 0;
        m->alt_us = (m->mem_us > c64 ? m->mem_us : c64) + m->extra_us;
        return true;
    }
    if (rg->mm1 >= g->n || rg->anchor >= g->n) return false;
    if (model_attention_simt(g, rg, gpu, m)) return true;
    if (gpu->attn_eff <= 0) return false;
    /* the rule codegen emits by ([attention.fa3], passes/attn_fa3.c) */
    if (!pass_attention_fa3(g, g->nodes[rg->anchor].region, NULL, NULL, 0)) return false;
    const ir_node *q = &g->nodes[ir_in(g, &g->nodes[rg->mm1], 0)];
    const ir_shape *o = &g->nodes[rg->anchor].shape;
    ir_dim d = q->shape.dim[q->shape.rank - 1], sq = o->dim[o->rank - 2];
    if (IR_DIM_IS_SYM(sq)) return false;
    double pad = (double)((d + 63) / 64 * 64) / (double)d; /* the kernel's head dim: 64 .. 256 */
    int64_t rows = ir_shape_numel(o) / o->dim[o->rank - 1];
    if (rows < 0) return false;
    int64_t tiles = rows / sq * cdiv(sq, 128);
    m->schedule = "attention.fa3";
    m->threads = 384;
    m->grid = tiles < gpu->sms ? tiles : gpu->sms;
    m->per_sm = 1;
    m->active_sms = (double)m->grid;
    m->waves = (double)tiles / (double)gpu->sms;
    m->comp_us = c->f * pad / (gpu->peak_TFLOPs[q->dtype] * gpu->attn_eff * 1e6);
    if (pass_attention_live(g, rg, 128, fa3_key_tile(d), &m->live)) m->comp_us *= m->live.frac;
    m->time_us = m->mem_us > m->comp_us ? m->mem_us : m->comp_us;
    return true;
}

/* Lane instructions per us the GPU issues: the calibrated special-function rate (tanh
 * element-ops, each ir_op_issue(IR_OP_TANH) instructions) when txc bench --calibrate measured one,
 * else SMs x 128 lanes x the boost clock; 0: not modelled. */
double pass_issue_rate(const pass_gpu *gpu) {
    if (gpu->sfu_Gops > 0) return gpu->sfu_Gops * 1e3 * (double)ir_op_issue(IR_OP_TANH);
    return gpu->sms * 128.0 * gpu->clock_GHz * 1e3;
}

void pass_model_plan(const ir_graph *g, const ir_region *rg, const pass_sched_facts *f,
                     const pass_gpu *gpu, const pass_cost *c, pass_model *m) {
    memset(m, 0, sizeof *m);
    m->schedule = "roofline";
    if (!c->concrete) return;
    double bytes = c->br + c->bw + c->sp;
    m->mem_us = bytes / (gpu->hbm_GBps * 1e3);
    m->comp_us = c->f / (c->peak_TFLOPs * 1e6);
    m->bw_GBps = gpu->hbm_GBps;
    m->time_us = c->roofline_us;
    m->concrete = true;
    if (rg->kind == IR_RK_ATTENTION && model_attention(g, rg, gpu, c, m)) return;
    if (rg->kind == IR_RK_MATMUL) { /* matmul.wgmma / skinny: the tile's model (passes/) */
        if ((rg->sched.id != PASS_SCH_MATMUL_WGMMA && rg->sched.id != PASS_SCH_MATMUL_SKINNY &&
             rg->sched.id != PASS_SCH_MATMUL_SIMT && rg->sched.id != PASS_SCH_MATMUL_WGMMA_SWAP) ||
            !pass_schedule_model_block(f, rg, m))
            m->schedule = "roofline";
        return;
    }
    if (gpu->mem_latency_us <= 0 || (rg->kind != IR_RK_POINTWISE && rg->kind != IR_RK_REDUCTION))
        return;
    bool ok = pass_schedule_model_block(f, rg, m);
    double rate = pass_issue_rate(gpu);
    if (ok && (f->kind == IR_RK_POINTWISE || f->kind == IR_RK_REDUCTION) && f->instr > 0 &&
        rate > 0 && f->n > 0) {
        m->instr = pass_schedule_instr(f, &rg->sched);
        m->issue_us = (double)f->n * m->instr / rate;
    }
    if (!ok || m->threads == 0 || m->grid <= 0) {
        m->schedule = "roofline";
        m->threads = 0;
        m->grid = 0;
        return;
    }
    if (m->regs > 0 && gpu->col_latency_us > 0) { /* a column schedule (pass_model_column) */
        m->time_us = pass_model_column(gpu, bytes, rg->sram_bytes, m);
        m->time_us -= m->extra_us;
        if (m->comp_us > m->time_us) m->time_us = m->comp_us;
        if (m->issue_us > m->time_us) m->time_us = m->issue_us;
        m->time_us += m->extra_us;
        return;
    }
    int64_t per = pass_model_resident(gpu, m->threads, rg->sram_bytes, m->res_regs);
    m->per_sm = per;
    int64_t busy = m->grid < gpu->sms ? m->grid : gpu->sms, conc = cdiv(m->grid, gpu->sms);
    if (conc > per) conc = per;
    m->active_sms = (double)busy;
    m->occupancy = (double)(conc * m->threads) / MAX_THREADS_SM;
    m->inflight = (double)conc * m->threads * m->thread_bytes;
    double lat = m->unpipelined && DRAM_LATENCY_US > gpu->mem_latency_us ? DRAM_LATENCY_US
                                                                         : gpu->mem_latency_us;
    double sustain = m->active_sms * m->inflight / (lat * 1e3); /* GB/s by Little's law */
    m->bw_GBps = sustain < gpu->hbm_GBps ? sustain : gpu->hbm_GBps;
    m->waves = (double)m->grid / ((double)gpu->sms * per);
    double tail = m->waves > 1 && sustain < gpu->hbm_GBps ? ceil(m->waves) / m->waves : 1.0;
    m->mem_us = bytes / (m->bw_GBps * 1e3) * tail;
    m->time_us = m->mem_us > m->comp_us ? m->mem_us : m->comp_us;
    if (m->issue_us > m->time_us) m->time_us = m->issue_us;
    if (m->waves <= 1) /* one wave or less: its fill and drain are not hidden behind other blocks */
        m->floor_us = FILL_ROUNDS * DRAM_LATENCY_US +
                      bytes / m->active_sms / (gpu->hbm_GBps / gpu->sms * 1e3);
    if (m->floor_us > m->time_us) m->time_us = m->floor_us;
    /* Cluster rows: a cluster's rows wait through their barriers one row after another. A
     * persistent cluster loads its next row meanwhile (the chain overlaps the memory time); a
     * cluster per row waits through them with nothing in flight, and each of its waves after the
     * first also through its own fill and drain (the first's is in the floor). */
    if (m->xrows > 0) {
        m->sync_us = (double)m->xrows * m->xsyncs * CLUSTER_SYNC_US;
        if (m->xpersist && m->sync_us > m->time_us) m->time_us = m->sync_us;
        if (!m->xpersist)
            m->time_us += m->sync_us + (double)(m->xrows - 1) * FILL_ROUNDS * DRAM_LATENCY_US;
    }
    /* A second kernel (row_split2's combine): its launch and COMBINE_ROUNDS dependent DRAM
     * round trips (the partials' loads, then the slice combine) at the true loaded latency. */
    if (m->kernels > 1)
        m->extra_us = (m->kernels - 1) * (gpu->launch_us + COMBINE_ROUNDS * DRAM_LATENCY_US);
    /* A split row's last block (the ticket): after the stream, COMBINE_ROUNDS dependent round
     * trips (the fenced ticket, then the partials' loads), no launch. A column tile's last block:
     * one round trip (the fenced ticket), then the tile's partials (comb_bytes) read by one block
     * at a busy SM's share of the HBM bandwidth, no launch. */
    if (m->ticket)
        m->extra_us += m->comb_bytes > 0
                           ? DRAM_LATENCY_US + m->comb_bytes / (gpu->hbm_GBps / gpu->sms * 1e3)
                           : COMBINE_ROUNDS * DRAM_LATENCY_US;
    m->time_us += m->extra_us;
}

int64_t pass_model_resident(const pass_gpu *gpu, unsigned threads, int64_t sram, int regs) {
    int64_t per = threads > 0 ? MAX_THREADS_SM / threads : 1;
    if (per > MAX_BLOCKS_SM) per = MAX_BLOCKS_SM;
    if (sram > 0 && gpu->smem_per_sm / sram < per) per = gpu->smem_per_sm / sram;
    if (regs > 0 && threads > 0 && gpu->regs_per_sm / ((int64_t)regs * threads) < per)
        per = gpu->regs_per_sm / ((int64_t)regs * threads);
    return per < 1 ? 1 : per;
}

/* GB/s that `blocks` resident blocks of m sustain: their bytes in flight, at most col_sm_bytes a
 * busy SM (its outstanding loads), spread at random over the HBM's channels; a channel is busy
 * while a request waits on it, so the share of the bandwidth delivered is that of channels with
 * at least one request, 1 - exp(-in flight / (HBM x col_latency_us)), the bytes in flight over
 * the bandwidth-delay product (Little's law for requests that do not queue evenly). */
static double col_gbps(const pass_gpu *gpu, const pass_model *m, int64_t blocks) {
    int64_t busy = blocks < gpu->sms ? blocks : gpu->sms;
    double fly = (double)blocks * m->threads * m->thread_bytes;
    if (gpu->col_sm_bytes > 0 && fly > (double)busy * gpu->col_sm_bytes)
        fly = (double)busy * gpu->col_sm_bytes;
    double bdp = gpu->hbm_GBps * gpu->col_latency_us * 1e3; /* bytes */
    return fly > 0 ? gpu->hbm_GBps * -expm1(-fly / bdp) : gpu->hbm_GBps;
}

double pass_model_column(const pass_gpu *gpu, double bytes, int64_t sram, pass_model *m) {
    if (gpu->col_latency_us <= 0 || m->grid <= 0 || m->threads == 0 || gpu->sms <= 0) return 0;
    int64_t per = pass_model_resident(gpu, m->threads, sram, m->regs);
    int64_t slots = per * gpu->sms, full = m->grid / slots, last = m->grid % slots;
    int64_t busy = m->grid < gpu->sms ? m->grid : gpu->sms, conc = cdiv(m->grid, gpu->sms);
    if (conc > per) conc = per;
    m->per_sm = per;
    m->active_sms = (double)busy;
    m->occupancy = (double)(conc * m->threads) / MAX_THREADS_SM;
    m->inflight = (double)conc * m->threads * m->thread_bytes;
    m->waves = (double)m->grid / (double)slots;
    double block = bytes / (double)m->grid; /* each block's share, in GB per us below */
    m->mem_us = ((double)(full * slots) * block / col_gbps(gpu, m, slots) +
                 (last ? (double)last * block / col_gbps(gpu, m, last) : 0)) /
                1e3;
    m->bw_GBps = m->mem_us > 0 ? bytes / (m->mem_us * 1e3) : gpu->hbm_GBps;
    /* a column tile's last block: one round trip (the fenced ticket), then the tile's partials
     * (comb_bytes) at a busy SM's share of the HBM bandwidth */
    m->extra_us =
        m->ticket ? DRAM_LATENCY_US + m->comb_bytes / (gpu->hbm_GBps / gpu->sms * 1e3) : 0;
    return m->mem_us + m->extra_us;
}

void pass_model_region(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                       const pass_cost *c, pass_model *m) {
    pass_sched_facts f;
    const ir_region *rg = &g->regions[r];
    if (c->concrete &&
        (rg->kind == IR_RK_POINTWISE || rg->kind == IR_RK_REDUCTION || rg->kind == IR_RK_MATMUL))
        pass_schedule_facts(g, ix, r, gpu, gpu->smem_per_block, &f);
    else
        memset(&f, 0, sizeof f);
    pass_model_plan(g, rg, &f, gpu, c, m);
}

/* The wgmma kernel's epilogue form and shared memory ([matmul.wgmma.epi]; pass_wg_tile_make's
 * slots, the bytes codegen/wgmma.c's kernel takes). */
static void wg_epi_text(const pass_model *m, FILE *out) {
    const pass_wg_tile *t = &m->wgt;
    const pass_wg_shape *s = &m->wgs;
    char form[512], head[256];
    if (t->epi_nbuf > 0) {
        bool loop = s->epi_loop && t->epi_slots == s->nmm;
        if (s->epi_coal)
            snprintf(head, sizeof head,
                     "staged coalesced stores (rows of %lld x %d bytes are not 16-byte multiples: "
                     "each unit copied out of its slot row by row, a warp 32 consecutive "
                     "columns), %s (cs%d%s)",
                     (long long)s->N, s->epi_coal, loop ? "looped" : "per-register", t->epi_nbuf,
                     loop ? "l" : "");
        else
            snprintf(head, sizeof head, "%s TMA-store epilogue (ts%d%s)",
                     loop ? "looped" : "per-register", t->epi_nbuf, loop ? "l" : "");
        snprintf(form, sizeof form, "%s, %d ring entr%s x %d consumer%s x %d slot%s = %lld B%s",
                 head, t->epi_nbuf, t->epi_nbuf > 1 ? "ies" : "y", t->consumers,
                 t->consumers > 1 ? "s" : "", t->epi_slots, t->epi_slots > 1 ? "s" : "",
                 (long long)t->epi_bytes,
                 loop                              ? ""
                 : s->epi_why == PASS_WG_EPI_F32   ? "; not looped: an f32 output (the looped "
                                                     "epilogue writes 16-bit outputs in place "
                                                     "over its 16-bit slots)"
                 : s->epi_why == PASS_WG_EPI_PLAIN ? "; not looped: nothing computed beyond the "
                                                     "products, or more outputs than products"
                                                   : "; not looped: a slot per product would "
                                                     "cost a stage");
    } else {
        snprintf(form, sizeof form, "register stores (%s)",
                 s->epi_es > 0 ? "the store slots would cost the ring a stage"
                               : "an output that is not a dense [M, N] f16/bf16/f32 matrix "
                                 "of a known N, more than 8 tensor maps or outputs, or rows "
                                 "that are not 16-byte multiples under TX_WG_EPI_COAL=0");
    }
    fprintf(out,
            "  model: [matmul.wgmma.epi] %s; shared memory %lld B (%d stages x %lld B, store "
            "slots %lld B, split-K slots %lld B, barriers and alignment)\n",
            form, (long long)t->smem_bytes, t->stages, (long long)t->stage_bytes,
            (long long)t->epi_bytes, (long long)t->red_bytes);
}

/* [matmul.simt.gemv_rows]'s line: the tile, the in-flight rate, the issue time and the wgmma
 * form it was chosen against. */
static void explain_gemv_rows(const pass_model *m, FILE *out) {
    const pass_simt_time *t = &m->sgt;
    int64_t R = t->bn / PASS_SIMT_GEMV_WARPS, U = t->bk / 8;
    fprintf(out,
            "  model: [matmul.simt.gemv_rows] M = %lld <= %d rows, w [N, K] K-contiguous, f32 "
            "FMAs: %lld blocks of %d warps x %lld rows of w, lanes along K in 16-byte loads, "
            "%lld in flight a thread, %lld k steps of %lld a warp, %lld blocks per SM: HBM %.3f "
            "us at %.0f GB/s, issue %.3f us%s, butterfly and epilogue %.3f us -> %.3f us "
            "(launch included)",
            (long long)t->M, PASS_SIMT_GEMV_M, (long long)t->tiles, PASS_SIMT_GEMV_WARPS,
            (long long)R, (long long)(R * U), (long long)t->nk, (long long)(256 * U),
            (long long)t->per_sm, t->mem_us, t->gbps, t->comp_us,
            t->step_bound ? " (bound by the k steps' latency)" : "", t->red_us, t->time_us);
    if (m->wgt.bm > 0)
        fprintf(out, "; matmul.wgmma %dx%d: %.3f us", m->wgt.bm * m->wgt.mcast, m->wgt.bn,
                m->wgm.time_us);
    fprintf(out, "\n");
}

/* [attention.block_sparse]'s line: the score tiles an attention kernel was priced to visit. */
static void live_text(const pass_model *m, FILE *out) {
    const pass_attn_live *l = &m->live;
    if (l->tiles <= 0) return;
    if (l->frac >= 1) {
        fprintf(out,
                "  model: [attention.block_sparse] every one of %lld tiles of %lld x %lld scores "
                "priced: no tile is -inf by the positions and constants known at compile time\n",
                (long long)l->tiles, (long long)l->bm, (long long)l->bn);
        return;
    }
    fprintf(out,
            "  model: [attention.block_sparse] %lld of %lld tiles of %lld x %lld scores visited "
            "(%.1f%%%s): the rest are -inf by the mask's positions; compute priced for those\n",
            (long long)l->visited, (long long)l->tiles, (long long)l->bm, (long long)l->bn,
            100.0 * l->frac, l->sampled ? ", from a sample of the query tiles" : "");
}

void pass_model_text(const pass_model *m, const pass_gpu *gpu, FILE *out) {
    if (m->concrete && !strcmp(m->schedule, "attention.ksplit")) {
        const pass_attn_split *sp = &m->split;
        fprintf(out,
                "  model: attention.ksplit: %lld blocks x %u threads (mma.sync, 16-row tiles, "
                "each key tile split over 4 warps; up to %lld per SM), tensor cores at %.0f%% of "
                "peak: compute %.3f us, HBM %.3f us at %.0f GB/s; the 64-row tiles (runner-up): "
                "%.3f us\n",
                (long long)m->grid, m->threads, (long long)m->per_sm, 100.0 * gpu->tc_eff,
                m->comp_us, m->mem_us, m->bw_GBps, m->alt_us);
        if (sp->splits > 1)
            fprintf(out,
                    "  model: [attention.split_kv] %d chunks of %lld keys per batch element: "
                    "scratch %lld B of partials (max, sum, O in f32), combine kernel %.3f us "
                    "(launch, %d DRAM round trips, the scratch written and read); unsplit: "
                    "%.3f us\n",
                    sp->splits, (long long)sp->chunk, (long long)sp->scratch_bytes, sp->comb_us,
                    COMBINE_ROUNDS, m->split1_us);
        else
            fprintf(
                out,
                "  model: [attention.split_kv] not split: no split of the keys is 1%% faster by "
                "this price\n");
        return;
    }
    if (m->concrete && !strcmp(m->schedule, "attention.simt")) {
        fprintf(out,
                "  model: [attention.simt] %lld blocks x %u threads (CUDA cores, exact f32; %lld "
                "per SM at %d registers a thread), %.2f waves; %.1f lane instructions per score "
                "(S = QK^T %.1f, O += PV %.1f, F and softmax %.1f, row updates and tile loads the "
                "rest) at %.0f%% of %.0f per ns (measured): issue %.3f us, HBM %.3f us\n",
                (long long)m->grid, m->threads, (long long)m->per_sm, m->sg_regs, m->waves,
                m->instr, m->sg_qk, m->sg_pv, m->sg_f, 100.0 * m->sg_eff,
                pass_issue_rate(gpu) / 1e3, m->issue_us, m->mem_us);
        live_text(m, out);
        return;
    }
    if (m->concrete && !strcmp(m->schedule, "attention.fa3")) {
        fprintf(out,
                "  model: attention.fa3: %lld persistent CTAs x %u threads (sm_90a wgmma + TMA), "
                "%.2f waves of 128-row tiles, tensor cores at %.0f%% of peak (measured): compute "
                "%.3f us, HBM %.3f us\n",
                (long long)m->grid, m->threads, m->waves, 100.0 * gpu->attn_eff, m->comp_us,
                m->mem_us);
        live_text(m, out);
        return;
    }
    if (m->concrete && !strcmp(m->schedule, "matmul.wgmma")) {
        const pass_wg_tile *t = &m->wgt;
        const pass_wg_time *w = &m->wgm;
        if (t->splits == 0) {
            int64_t units = t->tiles * t->nk, g = t->ctas > 0 ? t->ctas : 1;
            fprintf(out,
                    "  model: matmul.wgmma: %dx%dx64 tiles, %d stages: [matmul.wgmma.streamk] "
                    "%lld tiles x %lld k steps = %lld units on %lld CTAs x %u threads (%.2f "
                    "waves of tiles without it): %lld k steps x %.3f us + %lld epilogue%s x %.3f "
                    "us + partial tiles through L2 %.3f us (workspace %.2f MB), fill %.3f us -> "
                    "compute %.3f us; HBM %.3f us\n",
                    t->bm, t->bn, t->stages, (long long)t->tiles, (long long)t->nk,
                    (long long)units, (long long)g, m->threads, w->waves,
                    (long long)((units + g - 1) / g), w->step_us, (long long)w->rounds,
                    w->rounds > 1 ? "s" : "", w->epi_us, w->red_us, (double)t->ws_bytes / 1e6,
                    w->fill_us, w->comp_us, w->mem_us);
        } else
            fprintf(
                out,
                "  model: matmul.wgmma: %dx%dx64 tiles, %d stages: %lld tiles x %d split-K ranks "
                "on "
                "%lld CTAs x %u threads, %.2f waves (the busiest CTA runs %lld); per tile %lld k "
                "steps x %.3f us + epilogue %.3f us + split-K sum %.3f us, fill %.3f us -> compute "
                "%.3f us; HBM %.3f us\n",
                t->bm * t->mcast, t->bn, t->stages, (long long)t->tiles, t->splits,
                (long long)m->grid, m->threads, w->waves, (long long)w->rounds,
                (long long)((t->nk + t->splits - 1) / t->splits), w->step_us, w->epi_us, w->red_us,
                w->fill_us, w->comp_us, w->mem_us);
        wg_epi_text(m, out);
        if (m->wgs.nstage > 0)
            fprintf(out,
                    "  model: [matmul.wgmma.stage] %d operand%s (%s%s%s) with a row pitch that is "
                    "not a multiple of 16 bytes, copied first to 128-byte-pitched scratch: %d "
                    "staging kernel%s, %.2f MB read and written -> %.3f us (launches included)\n",
                    m->wgs.nstage, m->wgs.nstage > 1 ? "s" : "", m->wgs.a_staged ? "A" : "",
                    m->wgs.a_staged && m->wgs.b_staged ? ", " : "", m->wgs.b_staged ? "B" : "",
                    m->wgs.nstage, m->wgs.nstage > 1 ? "s" : "", m->wgs.stage_bytes / 1e6,
                    w->stage_us);
        return;
    }
    if (m->concrete && !strcmp(m->schedule, "matmul.wgmma_swap")) {
        const pass_wg_tile *t = &m->wgt;
        const pass_wg_time *w = &m->wgm;
        int64_t M = m->wgs.M, q = t->bn > 0 ? (M + t->bn - 1) / t->bn : 0;
        int64_t r128 = (M + 127) / 128 * 128;
        fprintf(out,
                "  model: [matmul.wgmma.swap] C^T = B^T A^T: M = %lld along wgmma's N in %lld "
                "tile%s of %d (%lld rows computed, %lld on 128-row tiles), N along wgmma's M in "
                "tiles of %d, %d stages, register stores: %lld tiles x %d split-K ranks on %lld "
                "CTAs x %u threads, %.2f waves; per tile %lld k steps x %.3f us + epilogue %.3f "
                "us + split-K sum %.3f us, fill %.3f us -> compute %.3f us; HBM %.3f us -> "
                "%.3f us\n",
                (long long)M, (long long)q, q > 1 ? "s" : "", t->bn, (long long)(q * t->bn),
                (long long)r128, t->bm, t->stages, (long long)t->tiles, t->splits,
                (long long)m->grid, m->threads, w->waves,
                (long long)((t->nk + t->splits - 1) / t->splits), w->step_us, w->epi_us, w->red_us,
                w->fill_us, w->comp_us, w->mem_us, w->time_us);
        if (m->swt.bm > 0)
            fprintf(out,
                    "  model: [matmul.wgmma.swap] instead of matmul.wgmma %dx%d (%lld tiles, "
                    "%lld rows computed): %.3f us\n",
                    m->swt.bm * m->swt.mcast, m->swt.bn, (long long)m->swt.tiles,
                    (long long)((M + m->swt.bm - 1) / m->swt.bm * m->swt.bm), m->swm.time_us);
        return;
    }
    if (m->concrete && !strcmp(m->schedule, "matmul.skinny")) {
        const pass_sk_tile *t = &m->skt;
        const pass_sk_time *w = &m->skm;
        fprintf(out,
                "  model: [matmul.skinny] operands read in place (no staging copy): %dx%dx64 "
                "tiles (mma.sync, 16-byte cp.async at any row alignment), %d stages, %lld tiles x "
                "%d split-K ranks (a cluster) = %lld CTAs x 256 threads, %lld per SM, %.0f GB/s "
                "per CTA: HBM %.3f us, mma %.3f us, epilogue %.3f us, fill %.3f us -> %.3f us\n",
                t->mp, t->bn, t->stages, (long long)t->tiles, t->splits, (long long)w->ctas,
                (long long)w->per_sm, w->cta_GBps, w->mem_us, w->comp_us, w->epi_us, w->fill_us,
                w->time_us);
        if (m->wgt.bm > 0)
            fprintf(out,
                    "  model: [matmul.skinny] instead of matmul.wgmma %dx%d with %d staging "
                    "kernel%s (%.2f MB copied): %.3f us\n",
                    m->wgt.bm * m->wgt.mcast, m->wgt.bn, m->wgs.nstage,
                    m->wgs.nstage > 1 ? "s" : "", m->wgs.stage_bytes / 1e6, m->wgm.time_us);
        return;
    }
    if (m->concrete && !strcmp(m->schedule, "matmul.simt")) {
        const pass_simt_time *t = &m->sgt;
        if (pass_simt_is_gemv_rows(t->bm, t->bn)) {
            explain_gemv_rows(m, out);
            return;
        }
        if (pass_simt_is_gemv(t->bm)) {
            fprintf(out,
                    "  model: [matmul.simt.gemv] M = %lld <= %d rows, exact f32 FMAs: %lld "
                    "column tiles of %lld x %d warps x %d cluster ranks = %d k chunks (partials "
                    "added in chunk order), %lld k steps of %lld a chunk, %lld blocks x %u "
                    "threads, %lld per SM: HBM %.3f us at %.0f GB/s, FMA %.3f us%s, combine "
                    "%.3f us -> %.3f us (launch included)\n",
                    (long long)t->M, PASS_SIMT_GEMV_M, (long long)t->tiles, (long long)t->bn,
                    PASS_SIMT_GEMV_WARPS, t->splits, PASS_SIMT_GEMV_WARPS * t->splits,
                    (long long)t->nk, (long long)t->bk, (long long)t->tiles * t->splits, t->threads,
                    (long long)t->per_sm, t->mem_us, t->gbps, t->comp_us,
                    t->step_bound ? " (bound by the k steps' latency)" : "", t->red_us, t->time_us);
            return;
        }
        if (t->small_k)
            fprintf(out,
                    "  model: [matmul.simt.small_k] K = %lld <= %d: f16/bf16 operands as f32 FMAs "
                    "on the SIMT kernel (an outer product bound by its stores: HBM %.3f us, FMA "
                    "%.3f us), not a 64-deep tensor-core k step\n",
                    (long long)t->K, PASS_SIMT_SMALL_K, t->mem_us, t->comp_us);
        if (t->splits > 1)
            fprintf(out,
                    "  model: [matmul.simt.splitk] %lld output tiles x %d split-K ranks (a "
                    "cluster each, partials added in rank order) = %lld blocks, %lld k steps a "
                    "rank, reduction %.3f us a block\n",
                    (long long)t->tiles, t->splits, (long long)t->tiles * t->splits,
                    (long long)t->nk, t->red_us);
        fprintf(out,
                "  model: [matmul.simt] exact f32 FMAs (no tf32): %lldx%lldx%lld tiles, %lld "
                "blocks x %u threads, %lld per SM, %.2f waves: FMA %.3f us%s, HBM %.3f us -> "
                "%.3f us (launch included)\n",
                (long long)t->bm, (long long)t->bn, (long long)t->bk,
                (long long)t->tiles * t->splits, t->threads, (long long)t->per_sm, t->waves,
                t->comp_us, t->step_bound ? " (bound by the k steps' latency)" : "", t->mem_us,
                t->time_us);
        return;
    }
    if (!m->concrete || !m->threads) {
        fprintf(out, "  model: %s (max of compute and HBM time)\n", m->schedule);
        return;
    }
    if (m->regs > 0 && gpu->col_latency_us > 0) {
        fprintf(out,
                "  model: %s: %lld blocks x %u threads (up to %lld per SM at ~%d registers a "
                "thread), %.0f SMs busy at %.0f%% occupancy, %.0f B in flight per SM (%.0f per "
                "thread, at most %lld) over %.0f GB/s x %.3f us -> %.0f GB/s, %.2f waves (the "
                "last one's blocks alone)\n",
                m->schedule, (long long)m->grid, m->threads, (long long)m->per_sm, m->regs,
                m->active_sms, 100.0 * m->occupancy, m->inflight, m->thread_bytes,
                (long long)gpu->col_sm_bytes, gpu->hbm_GBps, gpu->col_latency_us, m->bw_GBps,
                m->waves);
    } else {
        fprintf(
            out,
            "  model: %s: %lld blocks x %u threads (up to %lld per SM), %.0f SMs busy at %.0f%% "
            "occupancy, "
            "%.0f B in flight per SM (%.0f per thread) / %.3f us latency -> %.0f GB/s of %.0f, "
            "%.2f waves\n",
            m->schedule, (long long)m->grid, m->threads, (long long)m->per_sm, m->active_sms,
            100.0 * m->occupancy, m->inflight, m->thread_bytes,
            m->unpipelined && DRAM_LATENCY_US > gpu->mem_latency_us ? DRAM_LATENCY_US
                                                                    : gpu->mem_latency_us,
            m->bw_GBps, gpu->hbm_GBps, m->waves);
    }
    if (m->pw_lanes > 0)
        fprintf(out,
                "  model: [pointwise.row] %lld rows of %lld elements, %u lanes a row: %.1f "
                "instructions per element against pointwise.vector's %.1f (row constants %.1f "
                "once a row, the offset split %.1f not per element; a scalar head and tail a "
                "row)\n",
                (long long)m->pw_rows, (long long)m->pw_rext, m->pw_lanes, m->instr, m->pw.flat,
                m->pw.rowconst, m->pw.div);
    const char *bound =
        m->issue_us > m->mem_us ? "instruction-issue bound" : "under the memory time";
    if (m->instr > 0 && gpu->sfu_Gops > 0)
        fprintf(out,
                "  model: issue: %.1f instructions per element -> %.3f us at the calibrated %.0f G "
                "tanh/s x %.0f instructions (%s)\n",
                m->instr, m->issue_us, gpu->sfu_Gops, (double)ir_op_issue(IR_OP_TANH), bound);
    else if (m->instr > 0)
        fprintf(out,
                "  model: issue: %.1f instructions per element -> %.3f us at %d SMs x 128 lanes x "
                "%.2f GHz (%s)\n",
                m->instr, m->issue_us, gpu->sms, gpu->clock_GHz, bound);
    if (m->floor_us > 0 && m->floor_us >= m->time_us - m->extra_us)
        fprintf(out,
                "  model: latency floor: %d DRAM round trips of %.1f us + a busy SM's share of the "
                "bytes at 1/%d of %.0f GB/s -> %.3f us (fill and drain bound)\n",
                FILL_ROUNDS, DRAM_LATENCY_US, gpu->sms, gpu->hbm_GBps, m->floor_us);
    if (m->unpipelined)
        fprintf(out, "  model: an online stream of scalar loads: one load in flight per thread at "
                     "the DRAM latency\n");
    if (m->xrows > 0)
        fprintf(out,
                "  model: cluster barriers: %lld rows a cluster x %u barriers x %.2f us -> %.3f us "
                "(%s)\n",
                (long long)m->xrows, m->xsyncs, CLUSTER_SYNC_US, m->sync_us,
                !m->xpersist                             ? "with nothing in flight: added"
                : m->sync_us >= m->time_us - m->extra_us ? "barrier bound"
                                                         : "overlapped: under the memory time");
    if (m->ticket && m->comb_bytes > 0)
        fprintf(out,
                "  model: + each column tile's last block combines its partials in the same "
                "kernel (no combine kernel, no launch): %.3f us (1 DRAM round trip of %.1f us: "
                "the ticket; %.0f B of a tile's partials at 1/%d of %.0f GB/s)\n",
                m->extra_us, DRAM_LATENCY_US, m->comb_bytes, gpu->sms, gpu->hbm_GBps);
    else if (m->ticket)
        fprintf(out,
                "  model: + the last block's combine of the partials: %.3f us (%d DRAM round "
                "trips of %.1f us: the ticket, the partials)\n",
                m->extra_us, COMBINE_ROUNDS, DRAM_LATENCY_US);
    if (m->kernels > 1)
        fprintf(out,
                "  model: + %u combine kernel%s of the partials: %.3f us (launch and %d DRAM "
                "round trips of %.1f us)\n",
                m->kernels - 1, m->kernels > 2 ? "s" : "", m->extra_us, COMBINE_ROUNDS,
                DRAM_LATENCY_US);
}
