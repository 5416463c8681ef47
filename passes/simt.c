/* simt.c - the SIMT f32 matrix-product kernel as the planner sees it (schedule matmul.simt):
 * which regions take it, its tile space, its geometry (outputs a thread and threads, which
 * codegen/matmul.c's cg_sg_geom_of reads) and its cost model. Products whose
 * operands are not both the product's f16/bf16 dtype (f32, f16 x bf16 promoted to f32, i32)
 * run on it on the GPU, exact f32 FMAs in k order (no tf32), and so do f16/bf16 products of a
 * small bound K ([matmul.simt.small_k]); products of at most 16 rows may take its GEMV tiles
 * ([matmul.simt.gemv], codegen/gemv.c). docs/codegen-matmul.md "SIMT". */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model's constants (first estimates, H200; docs/cost-model.md "SIMT products"):
 * SG_EFF8 / SG_EFF4: the share of the FMA peak an SM sustains with 8 x 8 / 4 x 4 outputs per
 * thread at full occupancy (4 / 2 128-bit shared loads per 64 / 16 FMAs);
 * SG_STEP_US: one k step's floor (the next tile's loads, issued one step ahead, land from L2 and
 * a barrier), so a short grid with a deep K is latency-bound. */
#define SG_EFF8    0.70
#define SG_EFF4    0.45
#define SG_STEP_US 0.45
/* Split-K ([matmul.simt.splitk]): SG_RED_US, two cluster barriers and the reduction's loop;
 * SG_SMEM_BPUS, the bytes per us an SM moves to and from the partial tiles (local shared stores,
 * distributed-shared-memory loads). */
#define SG_RED_US    1.0
#define SG_SMEM_BPUS 100e3

/* GEMV tiles ([matmul.simt.gemv]; first estimates, H200): GV_HBM_EFF, the share of the HBM
 * bandwidth a streaming read of w reaches; GV_LAT_US, one k step's loads from HBM under load
 * (a warp issues a step's bk 16-byte loads, then waits once), so the blocks' loads in flight
 * over it bound the rate and a chunk of many steps is latency-bound; GV_SYNC_US, the block's
 * barrier and the combine of the warps' partials. */
#define GV_HBM_EFF 0.90
#define GV_LAT_US  1.0
#define GV_SYNC_US 0.3
/* [matmul.simt.gemv_rows] (first estimates, H200): GVR_ISSUE_EFF, the share of an SM's issue
 * rate (4 warp instructions a cycle at clock_GHz) a block's step sustains (the loads, the
 * 16-bit-to-f32 conversions, the FMAs and the addresses dual-issue imperfectly); GVR_STEP_INSTR,
 * a step's address and loop instructions beside its loads, conversions and FMAs. */
#define GVR_ISSUE_EFF  0.70
#define GVR_STEP_INSTR 8.0

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool pass_simt_facts(const ir_graph *g, const pass_index *ix, uint32_t r, pass_simt_shape *s) {
    const ir_region *rg = &g->regions[r];
    memset(s, 0, sizeof *s);
    if (rg->kind != IR_RK_MATMUL || rg->anchor >= g->n) return false;
    const ir_node *mm = &g->nodes[rg->anchor];
    if (mm->op != IR_OP_MATMUL || mm->shape.rank < 2) return false;
    const ir_node *a = &g->nodes[ir_in(g, mm, 0)], *b = &g->nodes[ir_in(g, mm, 1)];
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    bool half = dt == IR_F16 || dt == IR_BF16;
    ir_dim kd = a->shape.dim[a->shape.rank - 1];
    s->small_k = half && a->dtype == dt && b->dtype == dt;
    if (s->small_k && (IR_DIM_IS_SYM(kd) || kd > PASS_SIMT_SMALL_K))
        return false; /* tensor cores */
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++)
        s->nmm += g->nodes[ix->rids[j]].op == IR_OP_MATMUL;
    unsigned rk = mm->shape.rank;
    s->M = IR_DIM_IS_SYM(mm->shape.dim[rk - 2]) ? -1 : mm->shape.dim[rk - 2];
    s->N = IR_DIM_IS_SYM(mm->shape.dim[rk - 1]) ? -1 : mm->shape.dim[rk - 1];
    s->K = IR_DIM_IS_SYM(kd) ? -1 : kd;
    s->batch = 1;
    for (unsigned i = 0; i + 2 < rk && s->batch > 0; i++)
        s->batch = IR_DIM_IS_SYM(mm->shape.dim[i]) ? -1 : s->batch * mm->shape.dim[i];
    ir_id bbase;
    bool bk_major = true;
    s->b_ncols =
        pass_wg_opnd(g, r, ir_in(g, mm, 1), (ir_dtype)b->dtype, false, &bbase, &bk_major) &&
        !bk_major;
    return true;
}

bool pass_simt_is_gemv(int64_t bm) { return bm >= 1 && bm <= PASS_SIMT_GEMV_M; }

bool pass_simt_is_gemv_rows(int64_t bm, int64_t bn) {
    return pass_simt_is_gemv(bm) && bn >= 1 && bn < PASS_SIMT_GEMV_BN;
}

bool pass_simt_rows_facts(const ir_graph *g, uint32_t r, const pass_wg_shape *w,
                          pass_simt_shape *s) {
    memset(s, 0, sizeof *s);
    const ir_region *rg = &g->regions[r];
    if (rg->kind != IR_RK_MATMUL || rg->anchor >= g->n) return false;
    const ir_node *mm = &g->nodes[rg->anchor];
    if (mm->op != IR_OP_MATMUL || mm->shape.rank != 2) return false;
    if (mm->dtype != IR_F16 && mm->dtype != IR_BF16) return false;
    if (w->nmm != 1 || !w->a_kmajor || !w->b_kmajor || w->a_staged || w->b_staged || w->a_merged ||
        w->batch != 0)
        return false;
    if (w->M < 1 || w->M > PASS_SIMT_GEMV_M || w->N <= 0 || w->K <= 0 || w->K % 8 != 0)
        return false;
    s->M = w->M, s->N = w->N, s->K = w->K, s->batch = 1, s->nmm = 1, s->w_rows = true;
    return true;
}

/* The GEMV tile height of s: the power of two at or above M (0 when M is unbound or above
 * PASS_SIMT_GEMV_M). */
static int64_t gemv_bm(const pass_simt_shape *s) {
    if (s->M <= 0 || s->M > PASS_SIMT_GEMV_M) return 0;
    int64_t bm = 1;
    while (bm < s->M) bm *= 2;
    return bm;
}

pass_simt_geom pass_simt_geom_of(int64_t bm, int64_t bn, int64_t bk, unsigned nmm) {
    pass_simt_geom g;
    if (pass_simt_is_gemv(bm)) { /* a lane: bm rows x 4 columns; warps' partials are dynamic */
        g.tm = (int)bm, g.tn = 4, g.threads = 32 * PASS_SIMT_GEMV_WARPS, g.smem_bytes = 0;
        return g;
    }
    g.tm = bm >= 64 && nmm == 1 ? 8 : 4, g.tn = bn >= 64 && nmm == 1 ? 8 : 4;
    g.threads = (unsigned)((bm / g.tm) * (bn / g.tn));
    g.smem_bytes = 2 * bk * ((bm + 4) + (bn + 4) * (int64_t)(nmm ? nmm : 1)) * 4;
    return g;
}

/* True when (bm, bn, bk) is a tile the kernel builds: every thread loads the same whole number
 * of elements of each operand's tile (at most 16 of one operand, at most 12 of all beside 8 x 8
 * accumulators, 32 beside 4 x 4: the registers of the next step's loads, so that 128 a thread
 * hold them without spilling) and the block has 64 to 256 threads. */
static bool tile_ok(int64_t bm, int64_t bn, int64_t bk, unsigned nmm) {
    pass_simt_geom g = pass_simt_geom_of(bm, bn, bk, nmm);
    if (g.threads < 64 || g.threads > 256) return false;
    int64_t na = bm * bk, nb = bn * bk, n = nmm ? nmm : 1;
    if (na % g.threads != 0 || nb % g.threads != 0) return false;
    int64_t sa = na / g.threads, sb = nb / g.threads;
    return sa <= 16 && sb <= 16 && sa + n * sb <= (g.tm == 8 ? 12 : 32);
}

/* True when (bm, bk, splits) is a GEMV tile the kernel builds for s ([matmul.simt.gemv]): one
 * product of bound sizes, B N-contiguous, bm the shape's gemv_bm, bn PASS_SIMT_GEMV_BN, k steps
 * of 8 (16 at bm <= 4: more loads in flight where the accumulators leave registers), splits
 * cluster ranks the target has, every chunk at least one k step; none under TX_SIMT_GEMV=0. */
static bool gemv_builds(const pass_simt_shape *s, const pass_gpu *gpu, int64_t bm, int64_t bn,
                        int64_t bk, int splits) {
    if (!pass_simt_is_gemv(bm) || bm != gemv_bm(s) || bn != PASS_SIMT_GEMV_BN) return false;
    const char *e = getenv("TX_SIMT_GEMV"); /* 0: no GEMV tiles (benchmarks of the others) */
    if (e && !strcmp(e, "0")) return false;
    if (s->nmm != 1 || s->small_k || !s->b_ncols || s->N <= 0 || s->K <= 0 || s->batch <= 0)
        return false;
    if (bk != 8 && !(bk == 16 && bm <= 4)) return false;
    if (splits != 1 && splits != 2 && splits != 4 && splits != PASS_SIMT_MAX_SPLITS) return false;
    if (splits > 1 && (!gpu || gpu->cluster_max < splits)) return false;
    return cdiv(s->K, bk) >= (int64_t)PASS_SIMT_GEMV_WARPS * splits;
}

/* True when (bm, bn, bk) is a [matmul.simt.gemv_rows] tile the kernel builds for s: s.w_rows,
 * bm the shape's gemv_bm, R = bn / 8 rows of w a warp (1, 2, 4), U = bk / 8 loads a row (1, 2,
 * 4), M x R <= PASS_SIMT_ROWS_ACC, R x U <= PASS_SIMT_ROWS_LOADS, unsplit; none under
 * TX_SIMT_GEMV=0. */
static bool rows_builds(const pass_simt_shape *s, int64_t bm, int64_t bn, int64_t bk, int splits) {
    const char *e = getenv("TX_SIMT_GEMV");
    if ((e && !strcmp(e, "0")) || !s->w_rows || bm != gemv_bm(s) || splits != 1) return false;
    int64_t R = bn / PASS_SIMT_GEMV_WARPS, U = bk / 8;
    if (bn != R * PASS_SIMT_GEMV_WARPS || bk != 8 * U || (R != 1 && R != 2 && R != 4) ||
        (U != 1 && U != 2 && U != 4))
        return false;
    return s->M * R <= PASS_SIMT_ROWS_ACC && R * U <= PASS_SIMT_ROWS_LOADS;
}

/* The [matmul.simt.gemv_rows] tiles of s into out (R-major, then U), at most cap; the count. */
static unsigned rows_space(const pass_simt_shape *s, int64_t (*out)[4], unsigned cap) {
    unsigned n = 0;
    for (int64_t R = 1; R <= 4; R *= 2)
        for (int64_t U = 1; U <= 4 && n < cap; U *= 2) {
            int64_t bn = R * PASS_SIMT_GEMV_WARPS, bk = 8 * U;
            if (!rows_builds(s, gemv_bm(s), bn, bk, 1)) continue;
            out[n][0] = gemv_bm(s), out[n][1] = bn, out[n][2] = bk, out[n][3] = 1;
            n++;
        }
    return n;
}

static const int64_t sg_tiles[][2] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}, {32, 32}};
static const int64_t sg_bks[] = {8, 16, 32};
static const int sg_splits[] = {1, 2, 4, PASS_SIMT_MAX_SPLITS};

/* The split-K schedules the kernel builds: one product at bound sizes (a batch too: grid z is
 * the batch, the cluster [1, S, 1] stays within one batch element's grid y), a cluster size the
 * target has, at least 4 k steps a rank. */
static bool split_builds(const pass_simt_shape *s, const pass_gpu *gpu, int64_t bk, int splits) {
    if (splits == 1) return true;
    if (splits != 2 && splits != 4 && splits != PASS_SIMT_MAX_SPLITS) return false;
    if (s->nmm != 1 || s->M <= 0 || s->N <= 0 || s->K <= 0 || s->batch <= 0) return false;
    if (!gpu || gpu->cluster_max < splits) return false;
    return cdiv(s->K, bk) >= 4 * (int64_t)splits;
}

bool pass_simt_split_ok(const pass_simt_shape *s, const pass_gpu *gpu, int64_t bm, int64_t bn,
                        int64_t bk, int splits) {
    (void)bm, (void)bn;
    return split_builds(s, gpu, bk, splits);
}

/* TX_SIMT_TILE=BMxBNxBKsS (a benchmark knob): the space is that one schedule where the kernel
 * builds it; 0 entries written otherwise. */
static unsigned simt_pinned(const pass_simt_shape *s, const pass_gpu *gpu, int64_t (*out)[4],
                            unsigned cap) {
    const char *pin = getenv("TX_SIMT_TILE");
    int bm = 0, bn = 0, bk = 0, sp = 1;
    if (!pin || cap == 0 || sscanf(pin, "%dx%dx%ds%d", &bm, &bn, &bk, &sp) < 3) return 0;
    if (s->w_rows) { /* the rows form's tiles only */
        if (!rows_builds(s, bm, bn, bk, sp)) return 0;
        out[0][0] = bm, out[0][1] = bn, out[0][2] = bk, out[0][3] = sp;
        return 1;
    }
    if (gemv_builds(s, gpu, bm, bn, bk, sp)) {
        out[0][0] = bm, out[0][1] = bn, out[0][2] = bk, out[0][3] = sp;
        return 1;
    }
    if (!tile_ok(bm, bn, bk, s->nmm) || !split_builds(s, gpu, bk, sp)) return 0;
    out[0][0] = bm, out[0][1] = bn, out[0][2] = bk, out[0][3] = sp;
    return 1;
}

int64_t pass_simt_part_bytes(int64_t bm, int64_t bn, int splits) {
    if (pass_simt_is_gemv_rows(bm, bn)) return 0; /* a warp butterfly, no partials */
    if (pass_simt_is_gemv(bm)) return PASS_SIMT_GEMV_WARPS * bm * bn * 4;
    return splits > 1 ? bm * bn * 4 : 0;
}

unsigned pass_simt_space(const pass_simt_shape *s, const pass_gpu *gpu, int64_t (*out)[4],
                         unsigned cap) {
    unsigned n = simt_pinned(s, gpu, out, cap);
    if (n) return n;
    if (s->w_rows) return rows_space(s, out, cap); /* tensor cores' products: the rows form only */
    for (size_t i = 0; i < sizeof sg_tiles / sizeof sg_tiles[0]; i++)
        for (size_t j = 0; j < sizeof sg_bks / sizeof sg_bks[0]; j++)
            for (size_t q = 0; q < sizeof sg_splits / sizeof sg_splits[0] && n < cap; q++) {
                int64_t bm = sg_tiles[i][0], bn = sg_tiles[i][1], bk = sg_bks[j];
                if (!tile_ok(bm, bn, bk, s->nmm) ||
                    !pass_simt_split_ok(s, gpu, bm, bn, bk, sg_splits[q]))
                    continue;
                out[n][0] = bm, out[n][1] = bn, out[n][2] = bk, out[n][3] = sg_splits[q];
                n++;
            }
    int64_t gbm = gemv_bm(s); /* [matmul.simt.gemv]: after the standard tiles (ties keep those) */
    for (size_t j = 0; j < 2 && gbm; j++)
        for (size_t q = 0; q < sizeof sg_splits / sizeof sg_splits[0] && n < cap; q++) {
            int64_t bk = j ? 8 : 16;
            if (!gemv_builds(s, gpu, gbm, PASS_SIMT_GEMV_BN, bk, sg_splits[q])) continue;
            out[n][0] = gbm, out[n][1] = PASS_SIMT_GEMV_BN, out[n][2] = bk,
            out[n][3] = sg_splits[q];
            n++;
        }
    return n;
}

int pass_simt_regs(int tm, int splits) { return tm == 8 ? (splits > 1 ? 168 : 128) : 64; }

/* Blocks of `threads` threads and `smem` shared bytes one SM holds (registers: pass_simt_regs),
 * 1 to 32. */
static int64_t sg_per_sm(const pass_gpu *gpu, const pass_simt_geom *g, int64_t smem, int splits) {
    int64_t regs = pass_simt_regs(g->tm, splits), per = 2048 / g->threads;
    if (gpu->regs_per_sm / (regs * g->threads) < per) per = gpu->regs_per_sm / (regs * g->threads);
    if (gpu->smem_per_sm / smem < per) per = gpu->smem_per_sm / smem;
    if (per > 32) per = 32;
    return per < 1 ? 1 : per;
}

/* Registers a thread of a GEMV tile holds (ptxas -v, sm_90a): bm x 4 accumulators, two steps'
 * bk x 4 w values (the one computed, the next one in flight), x values and addresses. */
static int64_t gemv_regs(int64_t bm, int64_t bk) {
    int64_t r = 32 + 4 * bm + 8 * bk + (bm > 8 ? 2 * bm : 0);
    return r > 255 ? 255 : r;
}

/* The GEMV tile's time (pass_simt_model's contract, o's bm .. splits set): blocks of 256 threads
 * per SM from registers and the partials' shared bytes; w's bytes at min(GV_HBM_EFF x HBM, the
 * resident blocks' step loads in flight / GV_LAT_US); the FMAs at the 4 x 4 rate, at least a
 * chunk's steps x GV_LAT_US; the combine; a launch. */
static double gemv_model(const pass_simt_shape *s, const pass_gpu *gpu, double hbm_bytes,
                         pass_simt_time *o) {
    int64_t threads = 32 * PASS_SIMT_GEMV_WARPS, part = pass_simt_part_bytes(o->bm, o->bn, 1);
    o->threads = (unsigned)threads;
    o->tiles = cdiv(s->N, o->bn) * s->batch;
    int64_t blocks = o->tiles * o->splits, per = 2048 / threads;
    int64_t rg = gpu->regs_per_sm / (gemv_regs(o->bm, o->bk) * threads);
    if (rg < per) per = rg;
    if (gpu->smem_per_sm / part < per) per = gpu->smem_per_sm / part;
    o->per_sm = per = per < 1 ? 1 : per;
    int64_t slots = (int64_t)gpu->sms * per;
    o->waves = (double)blocks / (double)slots;
    int64_t resident = blocks < slots ? cdiv(blocks, gpu->sms) : per;
    int64_t active = blocks < gpu->sms ? blocks : gpu->sms;
    double inflight = (double)active * (double)resident * (double)threads * (double)o->bk * 16.0;
    double rate = gpu->hbm_GBps * 1e3 * GV_HBM_EFF; /* bytes per us */
    if (inflight / GV_LAT_US < rate) rate = inflight / GV_LAT_US;
    o->gbps = rate / 1e3;
    o->mem_us = hbm_bytes > 0 ? hbm_bytes / rate : 0;
    int64_t chunks = (int64_t)PASS_SIMT_GEMV_WARPS * o->splits;
    int64_t nk = o->nk = cdiv(cdiv(s->K, o->bk), chunks);
    double sm_rate = gpu->peak_TFLOPs[IR_F32] * 1e6 / gpu->sms * SG_EFF4;
    double block_flops =
        2.0 * (double)s->M * (double)o->bn * (double)(nk * o->bk) * (double)PASS_SIMT_GEMV_WARPS;
    double block_us = block_flops * (double)resident / sm_rate, floor_us = (double)nk * GV_LAT_US;
    o->step_bound = floor_us > block_us;
    if (floor_us > block_us) block_us = floor_us;
    double rounds = blocks > slots ? (double)cdiv(blocks, slots) : 1.0;
    o->red_us = GV_SYNC_US;
    if (o->splits > 1) /* the chunks' partials over the cluster: each block reads its 1/S */
        o->red_us += SG_RED_US + (double)part * (double)resident / SG_SMEM_BPUS;
    o->comp_us = rounds * block_us;
    double t = o->comp_us > o->mem_us ? o->comp_us : o->mem_us;
    o->time_us = t + o->red_us + gpu->launch_us;
    return o->time_us;
}

/* Registers a thread of a [matmul.simt.gemv_rows] tile holds (first estimate): M x R
 * accumulators, two steps' R x U 16-byte loads (4 each: the one computed, the next in flight),
 * x's M pieces as loaded (4 each), addresses (ptxas -v, sm_90a: 100 at M = 1, R = 2, U = 4;
 * 132 at M = 5; 169 at M = 8, R = 4, U = 2; 158 at M = 16, R = 2, U = 4). */
static int64_t rows_regs(int64_t M, int64_t R, int64_t U) {
    int64_t r = 40 + M * R + 8 * R * U + 4 * M;
    return r > 255 ? 255 : r;
}

/* The [matmul.simt.gemv_rows] tile's time (pass_simt_model's contract, o's bm .. splits set):
 * blocks of 8 warps over bn rows of w, per SM from registers; w's bytes at min(GV_HBM_EFF x HBM,
 * the resident warps' R x U 16-byte loads in flight / GV_LAT_US) (o->gbps); the issue of the
 * busiest SM's steps (x's M x U loads and 8 M U conversions, w's R x U loads and 8 R U
 * conversions, 8 M R U FMAs, GVR_STEP_INSTR) at GVR_ISSUE_EFF of 4 warp instructions a cycle,
 * at least a warp's k steps x GV_LAT_US a round (o->step_bound); the butterfly and epilogue
 * (GV_SYNC_US); a launch. */
static double rows_model(const pass_simt_shape *s, const pass_gpu *gpu, double hbm_bytes,
                         pass_simt_time *o) {
    int64_t R = o->bn / PASS_SIMT_GEMV_WARPS, U = o->bk / 8, threads = 32 * PASS_SIMT_GEMV_WARPS;
    o->threads = (unsigned)threads;
    o->tiles = cdiv(s->N, o->bn);
    int64_t per = 2048 / threads, rg = gpu->regs_per_sm / (rows_regs(s->M, R, U) * threads);
    if (rg < per) per = rg;
    o->per_sm = per = per < 1 ? 1 : per;
    int64_t slots = (int64_t)gpu->sms * per, blocks = o->tiles;
    o->waves = (double)blocks / (double)slots;
    int64_t resident = blocks < slots ? cdiv(blocks, gpu->sms) : per;
    int64_t active = blocks < gpu->sms ? blocks : gpu->sms;
    double inflight =
        (double)active * (double)resident * (double)PASS_SIMT_GEMV_WARPS * (double)(R * U) * 512.0;
    double rate = gpu->hbm_GBps * 1e3 * GV_HBM_EFF; /* bytes per us */
    if (inflight / GV_LAT_US < rate) rate = inflight / GV_LAT_US;
    o->gbps = rate / 1e3;
    o->mem_us = hbm_bytes > 0 ? hbm_bytes / rate : 0;
    int64_t nk = o->nk = cdiv(s->K, 256 * U); /* a warp's k steps */
    double instr =
        (double)s->M * U * 9.0 + (double)R * U * 9.0 + 8.0 * s->M * R * U + GVR_STEP_INSTR;
    double warp_steps = (double)cdiv(blocks, gpu->sms) * PASS_SIMT_GEMV_WARPS * (double)nk;
    double clk = gpu->clock_GHz > 0 ? gpu->clock_GHz : 1.5;
    double issue_us = warp_steps * instr / (4.0 * clk * 1e3 * GVR_ISSUE_EFF);
    double rounds = blocks > slots ? (double)cdiv(blocks, slots) : 1.0;
    double floor_us = rounds * (double)nk * GV_LAT_US;
    o->step_bound = floor_us > issue_us;
    o->comp_us = floor_us > issue_us ? floor_us : issue_us;
    o->red_us = GV_SYNC_US;
    double t = o->comp_us > o->mem_us ? o->comp_us : o->mem_us;
    o->time_us = t + o->red_us + gpu->launch_us;
    return o->time_us;
}

double pass_simt_model(const pass_simt_shape *s, const pass_gpu *gpu, double hbm_bytes, int64_t bm,
                       int64_t bn, int64_t bk, int splits, pass_simt_time *o) {
    memset(o, 0, sizeof *o);
    o->bm = bm, o->bn = bn, o->bk = bk, o->splits = splits < 1 ? 1 : splits;
    o->small_k = s->small_k, o->K = s->K, o->M = s->M;
    if (pass_simt_is_gemv(bm)) {
        if (s->M <= 0 || s->N <= 0 || s->K <= 0 || s->batch <= 0 || !gpu || gpu->sms <= 0) return 0;
        if (pass_simt_is_gemv_rows(bm, bn)) return s->w_rows ? rows_model(s, gpu, hbm_bytes, o) : 0;
        return gemv_model(s, gpu, hbm_bytes, o);
    }
    pass_simt_geom g = pass_simt_geom_of(bm, bn, bk, s->nmm);
    o->threads = g.threads;
    if (s->M <= 0 || s->N <= 0 || s->K <= 0 || s->batch <= 0 || !gpu || gpu->sms <= 0) return 0;
    o->tiles = cdiv(s->M, bm) * cdiv(s->N, bn) * s->batch;
    int64_t part = pass_simt_part_bytes(bm, bn, o->splits), blocks = o->tiles * o->splits;
    int64_t per = sg_per_sm(gpu, &g, g.smem_bytes + part, o->splits);
    o->per_sm = per;
    int64_t slots = (int64_t)gpu->sms * per;
    o->waves = (double)blocks / (double)slots;
    int64_t resident = blocks < slots ? cdiv(blocks, gpu->sms) : per; /* blocks on one SM */
    if (resident < 1) resident = 1;
    double warps = (double)resident * g.threads / 32;
    double occ = warps >= 16 ? 1.0 : 0.5 + warps / 32; /* latency hiding under 16 warps */
    double eff = (g.tm == 8 && g.tn == 8 ? SG_EFF8 : SG_EFF4) * occ;
    double sm_rate = gpu->peak_TFLOPs[IR_F32] * 1e6 / gpu->sms * eff; /* flop per us */
    int64_t nk = o->nk = cdiv(cdiv(s->K, bk), o->splits); /* the longest rank's k steps */
    double block_flops = 2.0 * (double)bm * (double)bn * (double)(nk * bk) * (double)s->nmm;
    double block_us = block_flops * (double)resident / sm_rate; /* resident blocks share the SM */
    double floor_us = (double)nk * SG_STEP_US;
    o->step_bound = floor_us > block_us;
    if (floor_us > block_us) block_us = floor_us;
    /* split-K: the partial tile written, then read back over the cluster, two barriers */
    if (o->splits > 1) o->red_us = SG_RED_US + 2.0 * (double)part * (double)resident / SG_SMEM_BPUS;
    double rounds = blocks > slots ? (double)cdiv(blocks, slots) : 1.0;
    o->comp_us = rounds * (block_us + o->red_us);
    o->mem_us = hbm_bytes > 0 ? hbm_bytes / (gpu->hbm_GBps * 1e3) : 0;
    o->time_us = (o->comp_us > o->mem_us ? o->comp_us : o->mem_us) + gpu->launch_us;
    return o->time_us;
}

bool pass_simt_pick(const pass_simt_shape *s, const pass_gpu *gpu, double hbm_bytes,
                    pass_simt_time *best) {
    int64_t sp[64][4];
    unsigned n = pass_simt_space(s, gpu, sp, 64);
    bool any = false;
    for (unsigned i = 0; i < n; i++) {
        pass_simt_time t;
        double us =
            pass_simt_model(s, gpu, hbm_bytes, sp[i][0], sp[i][1], sp[i][2], (int)sp[i][3], &t);
        if (us <= 0) continue;
        if (!any || us < best->time_us * 0.98) *best = t, any = true; /* ties: the earlier one */
    }
    return any;
}
