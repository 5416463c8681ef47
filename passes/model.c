/* model.c - the schedule-aware time of a memory-bound region (docs/cost-model.md "Model"):
 * resident blocks per SM from threads and shared memory, the SMs the grid keeps busy, the bytes
 * each thread has in flight as codegen emits the schedule (vector width, held elements, unrolled
 * groups), Little's law against the GPU's loaded memory latency for the bandwidth those bytes
 * sustain, and the tail wave. Matrix products and attention keep the roofline. */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAX_THREADS_SM = 2048, MAX_BLOCKS_SM = 32, VEC_BYTES = 16 };

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Element count of shape s; -1 when a dim is symbolic. */
static int64_t numel(const ir_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i]) || !ir_mul_ok(n, s->dim[i], &n)) return -1;
    return n;
}

/* The region's HBM reads of n elements (the iteration space): their count and widest dtype. */
static void big_reads(const ir_graph *g, const pass_io *io, int64_t n, int *count, int *widest) {
    *count = 0, *widest = 1;
    for (uint32_t i = 0; i < io->nreads; i++) {
        const ir_node *v = &g->nodes[io->reads[i]];
        if (numel(&v->shape) != n) continue;
        (*count)++;
        if (ir_dtype_size((ir_dtype)v->dtype) > *widest)
            *widest = ir_dtype_size((ir_dtype)v->dtype);
    }
}

/* Pointwise: 256 threads, groups of 16 B / the widest dtype, a grid of at most 2^20 blocks of two
 * groups per thread (codegen/pointwise.c); every input of the anchor's size is one vector load. */
static bool model_pointwise(const ir_graph *g, const ir_region *rg, const pass_io *io,
                            pass_model *m) {
    int64_t n = numel(&g->nodes[rg->anchor].shape);
    if (n < 0) return false;
    int cnt, wide;
    big_reads(g, io, n, &cnt, &wide);
    int64_t w = VEC_BYTES / wide;
    m->schedule = "pointwise.vector";
    m->threads = 256;
    m->grid = cdiv(n, 256 * w * 2);
    if (m->grid > (1 << 20)) m->grid = 1 << 20;
    if (m->grid < 1) m->grid = 1;
    m->thread_bytes = (double)VEC_BYTES * (cnt > 0 ? cnt : 1);
    return true;
}

/* Reductions: the block and in-flight bytes of the rule the planner chose (passes/plan_tile.c). */
static bool model_reduction(const ir_graph *g, const ir_region *rg, const pass_io *io,
                            pass_model *m) {
    const ir_shape *dom = &g->nodes[ir_in(g, &g->nodes[rg->anchor], 0)].shape;
    int64_t len = rg->red_extent, total = numel(dom);
    if (len <= 0 || total < 0) return false;
    int64_t rows = total / len;
    int cnt = 0, elem = 1;
    for (uint32_t i = 0; i < io->nrowreads; i++) {
        cnt++;
        int es = ir_dtype_size((ir_dtype)g->nodes[io->rowreads[i]].dtype);
        if (es > elem) elem = es;
    }
    if (!cnt) cnt = 1, elem = 4;
    int velem = elem; /* the vector groups also cover row-shaped writes */
    for (uint32_t i = 0; i < io->nwrites; i++) {
        const ir_node *w = &g->nodes[io->writes[i]];
        if (numel(&w->shape) == total && ir_dtype_size((ir_dtype)w->dtype) > velem)
            velem = ir_dtype_size((ir_dtype)w->dtype);
    }
    bool column = dom->rank > 0 && !(rg->red_axes & (1u << (dom->rank - 1))) && rows > 1;
    if (column) {
        int64_t c = rg->tile[1] > 0 ? rg->tile[1] : 128, r = rg->tile[2] > 1 ? rg->tile[2] : 1;
        int64_t u = 1;
        if (r > 1)
            for (u = 8; u > 1 && (len % u || len / u < r); u /= 2) {}
        m->schedule = r > 1 ? "reduction.column_split" : "reduction.column";
        m->threads = (unsigned)(c * r);
        m->grid = cdiv(rows, c);
        m->thread_bytes = (double)u * elem * cnt;
        return true;
    }
    int64_t lanes = rg->tile[1] > 0 ? rg->tile[1] : 256, rpb = rg->rows > 1 ? rg->rows : 1;
    int64_t cl = rg->tile[2] > 1 ? rg->tile[2] : 1; /* blocks per row (a cluster) */
    int64_t v = pass_row_vec(len, velem), hold = pass_row_hold(len, v, lanes * cl);
    bool held =
        rg->strategy == IR_RED_ONCHIP && hold <= (lanes <= 32 ? PASS_ROW_HOLD_WARP : PASS_ROW_HOLD);
    m->schedule = pass_schedule_name(g, (uint32_t)(rg - g->regions), held);
    m->threads = rg->threads ? rg->threads : (unsigned)lanes;
    m->grid = cdiv(rows, rpb) * cl;
    if (held) /* held in registers: all loads issued at once */
        m->thread_bytes = (double)hold * elem * cnt;
    else if (rg->strategy == IR_RED_ONCHIP) /* staged in shared memory: scalar loads */
        m->thread_bytes = (double)elem * cnt;
    else /* streamed: groups of 16 B when the length allows */
        m->thread_bytes = (double)(len % (VEC_BYTES / elem) ? elem : VEC_BYTES) * cnt;
    if (m->grid > (1 << 20)) m->grid = 1 << 20;
    return true;
}

/* Attention on the sm_90a kernel (codegen/attention.c; docs/codegen-attention.md) when its
 * operands qualify as far as the graph tells (q 16-bit with a known head dim of 64 or 128, more
 * than 64 query rows): persistent CTAs of 384 threads over tiles of 128 query rows, the tensor
 * cores at gpu->attn_eff of the peak (measured). The planner's FLOPs count every score, so a
 * kernel that skips dead tiles (causal) runs faster than this predicts. */
static bool model_attention(const ir_graph *g, const ir_region *rg, const pass_gpu *gpu,
                            const pass_cost *c, pass_model *m) {
    if (gpu->attn_eff <= 0 || rg->mm1 >= g->n || rg->anchor >= g->n) return false;
    const ir_node *q = &g->nodes[ir_in(g, &g->nodes[rg->mm1], 0)];
    const ir_shape *o = &g->nodes[rg->anchor].shape;
    if ((q->dtype != IR_F16 && q->dtype != IR_BF16) || q->shape.rank < 2 || o->rank < 2)
        return false;
    ir_dim d = q->shape.dim[q->shape.rank - 1], sq = o->dim[o->rank - 2];
    if (IR_DIM_IS_SYM(d) || (d != 64 && d != 128) || IR_DIM_IS_SYM(sq) || sq <= 64) return false;
    int64_t rows = numel(o) / o->dim[o->rank - 1];
    if (rows < 0) return false;
    int64_t tiles = rows / sq * cdiv(sq, 128);
    m->schedule = "attention.fa3";
    m->threads = 384;
    m->grid = tiles < gpu->sms ? tiles : gpu->sms;
    m->per_sm = 1;
    m->active_sms = (double)m->grid;
    m->waves = (double)tiles / (double)gpu->sms;
    m->comp_us = c->f / (gpu->peak_TFLOPs[q->dtype] * gpu->attn_eff * 1e6);
    m->time_us = m->mem_us > m->comp_us ? m->mem_us : m->comp_us;
    return true;
}

void pass_model_region(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                       const pass_cost *c, pass_model *m) {
    const ir_region *rg = &g->regions[r];
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
    if (gpu->mem_latency_us <= 0 || (rg->kind != IR_RK_POINTWISE && rg->kind != IR_RK_REDUCTION))
        return;
    pass_io io;
    pass_region_io(g, ix, r, &io);
    bool ok = rg->kind == IR_RK_POINTWISE ? model_pointwise(g, rg, &io, m)
                                          : model_reduction(g, rg, &io, m);
    pass_io_free(&io);
    if (!ok || m->threads == 0 || m->grid <= 0) {
        m->schedule = "roofline";
        return;
    }
    int64_t per = MAX_THREADS_SM / m->threads;
    if (per > MAX_BLOCKS_SM) per = MAX_BLOCKS_SM;
    if (rg->sram_bytes > 0 && gpu->smem_per_sm / rg->sram_bytes < per)
        per = gpu->smem_per_sm / rg->sram_bytes;
    if (per < 1) per = 1;
    m->per_sm = per;
    int64_t busy = m->grid < gpu->sms ? m->grid : gpu->sms, conc = cdiv(m->grid, gpu->sms);
    if (conc > per) conc = per;
    m->active_sms = (double)busy;
    m->occupancy = (double)(conc * m->threads) / MAX_THREADS_SM;
    m->inflight = (double)conc * m->threads * m->thread_bytes;
    double sustain =
        m->active_sms * m->inflight / (gpu->mem_latency_us * 1e3); /* GB/s by Little's law */
    m->bw_GBps = sustain < gpu->hbm_GBps ? sustain : gpu->hbm_GBps;
    m->waves = (double)m->grid / ((double)gpu->sms * per);
    double tail = m->waves > 1 && sustain < gpu->hbm_GBps ? ceil(m->waves) / m->waves : 1.0;
    m->mem_us = bytes / (m->bw_GBps * 1e3) * tail;
    m->time_us = m->mem_us > m->comp_us ? m->mem_us : m->comp_us;
}

void pass_model_text(const pass_model *m, const pass_gpu *gpu, FILE *out) {
    if (m->concrete && !strcmp(m->schedule, "attention.fa3")) {
        fprintf(out,
                "  model: attention.fa3: %lld persistent CTAs x %u threads (sm_90a wgmma + TMA), "
                "%.2f waves of 128-row tiles, tensor cores at %.0f%% of peak (measured): compute "
                "%.3f us, HBM %.3f us\n",
                (long long)m->grid, m->threads, m->waves, 100.0 * gpu->attn_eff, m->comp_us,
                m->mem_us);
        return;
    }
    if (!m->concrete || !m->threads) {
        fprintf(out, "  model: %s (max of compute and HBM time)\n", m->schedule);
        return;
    }
    fprintf(out,
            "  model: %s: %lld blocks x %u threads (up to %lld per SM), %.0f SMs busy at %.0f%% "
            "occupancy, "
            "%.0f B in flight per SM (%.0f per thread) / %.3f us latency -> %.0f GB/s of %.0f, "
            "%.2f waves\n",
            m->schedule, (long long)m->grid, m->threads, (long long)m->per_sm, m->active_sms,
            100.0 * m->occupancy, m->inflight, m->thread_bytes, gpu->mem_latency_us, m->bw_GBps,
            gpu->hbm_GBps, m->waves);
}
