/* cost.c - the cost model (docs/cost-model.md): HBM traffic of a region
 * (spec section 4), FLOPs, the roofline against the GPU table, and the
 * tile scheduler simulation of matrix products. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* Appends id to a growable set if absent. */
static void set_add(ir_id **v, uint32_t *n, ir_id id) {
    for (uint32_t i = 0; i < *n; i++)
        if ((*v)[i] == id) return;
    *v = ir_xrealloc(*v, ((size_t)*n + 1) * sizeof **v);
    (*v)[(*n)++] = id;
}

/* True when value m (a compute node of region r) is read outside r: by a
 * compute node of another region or by the output, through views. */
static bool used_outside(const ir_graph *g, const ir_uses *u, ir_id m, uint32_t r) {
    for (uint32_t k = u->start[m]; k < u->start[m + 1]; k++) {
        ir_id w = u->ids[k];
        const ir_node *wn = &g->nodes[w];
        if (wn->op == IR_OP_OUTPUT) return true;
        if (ir_op_traits((ir_op)wn->op) & IR_T_VIEW) {
            if (used_outside(g, u, w, r)) return true;
        } else if (wn->region != r) {
            return true;
        }
    }
    return false;
}

/* True when polynomials p and q are equal term by term (same order). */
static bool poly_eq(const ir_poly *p, const ir_poly *q) {
    if (p->overflow || q->overflow || p->nterms != q->nterms) return false;
    for (int i = 0; i < p->nterms; i++)
        if (p->t[i].coef != q->t[i].coef || p->t[i].nsym != q->t[i].nsym ||
            memcmp(p->t[i].sym, q->t[i].sym, p->t[i].nsym * sizeof p->t[i].sym[0]))
            return false;
    return true;
}

bool pass_index_build(const ir_graph *g, pass_index *ix) {
    memset(ix, 0, sizeof *ix);
    if (!ir_uses_build(g, &ix->u)) return false;
    ix->rstart = ir_xcalloc((size_t)g->nregions + 2, sizeof *ix->rstart);
    ix->rids = ir_xmalloc(((size_t)g->n + 1) * sizeof *ix->rids);
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].region < g->nregions) ix->rstart[g->nodes[i].region + 2]++;
    for (uint32_t r = 0; r < g->nregions; r++) ix->rstart[r + 2] += ix->rstart[r + 1];
    for (ir_id i = 0; i < g->n;
         i++) /* rstart[r + 1] is the fill cursor of r; ends as the start of r + 1 */
        if (g->nodes[i].region < g->nregions) ix->rids[ix->rstart[g->nodes[i].region + 1]++] = i;
    return true;
}

void pass_index_free(pass_index *ix) {
    ir_uses_free(&ix->u);
    free(ix->rstart);
    free(ix->rids);
    memset(ix, 0, sizeof *ix);
}

void pass_region_io(const ir_graph *g, const pass_index *ix, uint32_t r, pass_io *io) {
    const ir_uses *u = &ix->u;
    memset(io, 0, sizeof *io);
    const ir_region *rg = &g->regions[r];
    if (rg->kind == IR_RK_COPY) {
        ir_id src[PASS_SRC_CAP];
        unsigned ns = pass_view_sources(g, rg->anchor, src, PASS_SRC_CAP);
        for (unsigned s = 0; s < ns; s++)
            if (!ir_is_gen(g, src[s]) && src[s] != rg->anchor)
                set_add(&io->reads, &io->nreads, src[s]);
        set_add(&io->writes, &io->nwrites, rg->anchor);
        return;
    }
    ir_poly dn;
    ir_shape dom = {0};
    if (rg->kind == IR_RK_REDUCTION) {
        dom = g->nodes[ir_in(g, &g->nodes[rg->anchor], 0)].shape;
        pass_numel(g, &dom, 1, &dn);
    }
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        ir_id m = ix->rids[j];
        const ir_node *nd = &g->nodes[m];
        if (!pass_is_compute((ir_op)nd->op)) continue;
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id in = ir_in(g, nd, k), src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, in, src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) {
                const ir_node *sn = &g->nodes[src[s]];
                if (ir_is_gen(g, src[s]) || (sn->op != IR_OP_INPUT && sn->region == r)) continue;
                set_add(&io->reads, &io->nreads, src[s]);
                if (rg->kind != IR_RK_REDUCTION || !ir_shape_eq(&g->nodes[in].shape, &dom))
                    continue;
                ir_poly sp;
                pass_numel(g, &sn->shape, 1, &sp);
                if (poly_eq(&sp, &dn)) set_add(&io->rowreads, &io->nrowreads, src[s]);
            }
        }
        if (used_outside(g, u, m, r)) set_add(&io->writes, &io->nwrites, m);
    }
}

void pass_io_free(pass_io *io) {
    free(io->reads);
    free(io->writes);
    free(io->rowreads);
    memset(io, 0, sizeof *io);
}

double pass_ridge(const pass_gpu *gpu, ir_dtype dt) {
    return gpu->peak_TFLOPs[dt] * 1e12 / (gpu->hbm_GBps * 1e9);
}

double pass_roofline_us(const pass_gpu *gpu, ir_dtype dt, double flops, double bytes) {
    double tc = flops / (gpu->peak_TFLOPs[dt] * 1e12), tm = bytes / (gpu->hbm_GBps * 1e9);
    return (tc > tm ? tc : tm) * 1e6;
}

/* Sum of numel*dtype-size over a set of values. */
static void bytes_of(const ir_graph *g, const ir_id *v, uint32_t n, ir_poly *p) {
    ir_poly_const(p, 0);
    for (uint32_t i = 0; i < n; i++) {
        ir_poly q;
        pass_numel(g, &g->nodes[v[i]].shape, ir_dtype_size((ir_dtype)g->nodes[v[i]].dtype), &q);
        ir_poly_add(p, &q);
    }
}

/* FLOPs of compute node m (IR_OPS table; matmul: 2*M*N*K per batch). */
static void node_flops(const ir_graph *g, ir_id m, ir_poly *p) {
    const ir_node *nd = &g->nodes[m];
    unsigned t = ir_op_traits((ir_op)nd->op);
    if (t & IR_T_MATMUL) {
        const ir_node *a = &g->nodes[ir_in(g, nd, 0)];
        ir_shape s = nd->shape;
        if (s.rank < IR_MAX_RANK) s.dim[s.rank++] = a->shape.dim[a->shape.rank - 1];
        pass_numel(g, &s, 2, p);
    } else if (t & IR_T_REDUCE) {
        pass_numel(g, &g->nodes[ir_in(g, nd, 0)].shape, ir_op_flops((ir_op)nd->op), p);
    } else {
        pass_numel(g, &nd->shape, ir_op_flops((ir_op)nd->op), p);
    }
}

/* The compute dtype of region r: the matmul operand dtype for products and
 * attention (tensor cores) when q, k, v and p are one 16-bit dtype, else f32 (CUDA cores; spec:
 * f16/bf16 math in f32). */
static ir_dtype region_dtype(const ir_graph *g, const ir_region *rg) {
    if (rg->kind == IR_RK_ATTENTION && rg->anchor < g->n &&
        pass_attention_simt(g, g->nodes[rg->anchor].region))
        return IR_F32; /* [attention.simt]: the CUDA cores */
    if (rg->kind == IR_RK_MATMUL || rg->kind == IR_RK_ATTENTION)
        return (ir_dtype)g->nodes[ir_in(g, &g->nodes[rg->anchor], 0)].dtype;
    return IR_F32;
}

void pass_region_flops(const ir_graph *g, const pass_index *ix, uint32_t r, ir_poly *flops) {
    ir_poly_const(flops, 0);
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++)
        if (pass_is_compute((ir_op)g->nodes[ix->rids[j]].op)) {
            ir_poly q;
            node_flops(g, ix->rids[j], &q);
            ir_poly_add(flops, &q);
        }
}

void pass_region_cost_ix(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                         pass_cost *out) {
    const ir_region *rg = &g->regions[r];
    memset(out, 0, sizeof *out);
    pass_region_flops(g, ix, r, &out->flops);
    pass_io io;
    pass_region_io(g, ix, r, &io);
    bytes_of(g, io.reads, io.nreads, &out->bytes_read);
    bytes_of(g, io.writes, io.nwrites, &out->bytes_written);
    bytes_of(g, io.rowreads, io.nrowreads, &out->spilled);
    ir_poly_scale(&out->spilled, rg->passes > 1 ? rg->passes - 1 : 0);
    if (rg->passes <= 1) ir_poly_const(&out->spilled, 0);
    pass_io_free(&io);
    out->dtype = region_dtype(g, rg);
    bool tc = (rg->kind == IR_RK_MATMUL || rg->kind == IR_RK_ATTENTION) &&
              (out->dtype == IR_F16 || out->dtype == IR_BF16) && gpu->tc_eff > 0;
    out->peak_TFLOPs = gpu->peak_TFLOPs[out->dtype] * (tc ? gpu->tc_eff : 1.0);
    out->ridge = out->peak_TFLOPs * 1e12 / (gpu->hbm_GBps * 1e9);
    out->concrete = ir_poly_is_const(&out->flops, &out->f) &&
                    ir_poly_is_const(&out->bytes_read, &out->br) &&
                    ir_poly_is_const(&out->bytes_written, &out->bw) &&
                    ir_poly_is_const(&out->spilled, &out->sp);
    if (!out->concrete) return;
    double bytes = out->br + out->bw + out->sp;
    out->intensity = bytes > 0 ? out->f / bytes : 0;
    out->compute_bound = bytes > 0 ? out->intensity >= out->ridge : out->f > 0;
    double tcomp = out->f / (out->peak_TFLOPs * 1e12), tmem = bytes / (gpu->hbm_GBps * 1e9);
    out->roofline_us = (tcomp > tmem ? tcomp : tmem) * 1e6;
    pass_model md;
    pass_model_region(g, ix, r, gpu, out, &md);
    out->model_us = md.time_us;
    out->predicted_us = md.time_us + gpu->launch_us;
}

void pass_region_cost(const ir_graph *g, const ir_uses *u, uint32_t r, const pass_gpu *gpu,
                      pass_cost *out) {
    pass_index ix = {.u = *u}; /* borrows the use lists; indexes region r only: rstart[r] = 0 */
    ix.rstart = ir_xcalloc((size_t)r + 2, sizeof *ix.rstart);
    ix.rids = ir_xmalloc(((size_t)g->n + 1) * sizeof *ix.rids);
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].region == r) ix.rids[ix.rstart[r + 1]++] = i;
    pass_region_cost_ix(g, &ix, r, gpu, out);
    free(ix.rstart);
    free(ix.rids);
}

/* ---- tile scheduler simulation ------------------------------------------ */

/* Programs (b, i, j) in row-major order, `wave` at a time. Counts, per
 * k-step, distinct A tiles (b, i) and B tiles (b, j) per wave (misses) and
 * requests. Returns false when the grid is too large to walk. */
static bool sched_walk(int64_t gm, int64_t gn, int64_t batch, int64_t wave, int64_t *miss_a,
                       int64_t *miss_b) {
    int64_t grid, per_batch = gm * gn;
    if (!ir_mul_ok(gm, gn, &grid) || !ir_mul_ok(grid, batch, &grid) || grid > (1LL << 26))
        return false;
    *miss_a = *miss_b = 0;
    for (int64_t p0 = 0; p0 < grid; p0 += wave) {
        int64_t p1 = p0 + wave < grid ? p0 + wave : grid;
        *miss_a += (p1 - 1) / gn - p0 / gn + 1; /* distinct (b, i) rows touched */
        /* distinct (b, j) columns: a run of L consecutive programs of one batch covers min(L, gn)
         */
        for (int64_t q = p0; q < p1;) {
            int64_t end = (q / per_batch + 1) * per_batch;
            int64_t len = (end < p1 ? end : p1) - q;
            *miss_b += len < gn ? len : gn;
            q += len;
        }
    }
    return true;
}

void pass_sched_matmul(int64_t gm, int64_t gn, int64_t batch, int64_t ksteps, int64_t nb,
                       int64_t wave, pass_sched *s) {
    memset(s, 0, sizeof *s);
    int64_t ma, mb;
    if (gm <= 0 || gn <= 0 || batch <= 0 || ksteps <= 0 || nb < 0 || wave <= 0 ||
        !sched_walk(gm, gn, batch, wave, &ma, &mb))
        return;
    int64_t grid = gm * gn * batch, tpp, mab, miss, req; /* grid <= 2^26: checked by sched_walk */
    if (!ir_mul_ok(1 + nb, ksteps, &tpp) || !ir_mul_ok(nb, mb, &mab) || !ir_add_ok(ma, mab, &mab) ||
        !ir_mul_ok(mab, ksteps, &miss) || !ir_mul_ok(grid, tpp, &req))
        return; /* counts beyond int64: not simulated */
    s->concrete = true;
    s->grid = grid;
    s->wave = wave;
    s->tiles_per_program = tpp;
    s->misses = miss;
    s->hits = req - miss;
}
