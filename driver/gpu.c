/* gpu.c - from codegen's program to the runtime's launch plan (buffers,
 * kernels with concrete geometry at bound sizes, their bytes and FLOPs),
 * and `txc run --device=gpu`. Contracts in driver/driver.h. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

/* ---- from codegen's manifest ------------------------------------------- */

/* Fills a buffer description for value `id` of g with shape resolved by syms. */
static bool cg_buf_from_value(const ir_graph *g, ir_id id, const int64_t *syms, rt_buf_desc *b,
                              char *err, size_t cap) {
    const ir_node *n = &g->nodes[id];
    b->dtype = n->dtype;
    b->rank = n->shape.rank;
    if (!cg_shape_resolve(&n->shape, syms, g->nsyms, b->dim)) {
        snprintf(err, cap, "cannot size the buffer of %s: a dim is unbound or overflows",
                 n->name ? ir_str(g, n->name) : "a value");
        return false;
    }
    snprintf(b->name, sizeof b->name, "%s", n->name ? ir_str(g, n->name) : "");
    return true;
}

/* Adds the graph's inputs, outputs and the program's temps to the plan, in
 * that order: input i is buffer i, output k is buffer ninputs + k. */
static bool plan_bufs_from_cg(rt_gpu_plan *p, const ir_graph *g, const cg_program *cp,
                              const int64_t *syms, char *err, size_t cap) {
    const ir_node *out = &g->nodes[ir_output(g)];
    rt_buf_desc b;
    for (uint32_t i = 0; i < g->n && g->nodes[i].op == IR_OP_INPUT; i++) {
        memset(&b, 0, sizeof b);
        b.role = RT_BUF_INPUT;
        b.index = g->nodes[i].a.param;
        if (!cg_buf_from_value(g, i, syms, &b, err, cap)) return false;
        rt_gpu_plan_add_buf(p, &b);
    }
    for (uint32_t k = 0; k < out->nin; k++) {
        memset(&b, 0, sizeof b);
        b.role = RT_BUF_OUTPUT;
        b.index = k;
        if (!cg_buf_from_value(g, ir_in(g, out, k), syms, &b, err, cap)) return false;
        if (!b.name[0]) snprintf(b.name, sizeof b.name, "out%u", k);
        rt_gpu_plan_add_buf(p, &b);
    }
    for (unsigned t = 0; t < cg_program_ntemps(cp); t++) {
        const cg_temp *ct = cg_program_temp(cp, t);
        memset(&b, 0, sizeof b);
        b.role = RT_BUF_TEMP;
        b.index = t;
        b.dtype = ct->dtype;
        b.rank = ct->shape.rank;
        b.zero = ct->zeroed;
        snprintf(b.name, sizeof b.name, "temp%u", t);
        if (!cg_shape_resolve(&ct->shape, syms, g->nsyms, b.dim)) {
            snprintf(err, cap, "cannot size intermediate %u: a dim is unbound or overflows", t);
            return false;
        }
        rt_gpu_plan_add_buf(p, &b);
    }
    return true;
}

/* Index of the plan buffer a manifest buffer names (see plan_bufs_from_cg). */
static uint32_t plan_buf_index(const rt_gpu_plan *p, const cg_buf *cb) {
    uint8_t role = cb->kind == CG_BUF_INPUT    ? RT_BUF_INPUT
                   : cb->kind == CG_BUF_OUTPUT ? RT_BUF_OUTPUT
                                               : RT_BUF_TEMP;
    for (uint32_t b = 0; b < p->nbufs; b++)
        if (p->bufs[b].role == role && p->bufs[b].index == cb->index) return b;
    return UINT32_MAX;
}

double drv_graph_flops(const ir_graph *g, const int64_t *syms) {
    pass_index ix;
    double total = 0, f;
    if (!pass_index_build(g, &ix)) return -1;
    for (uint32_t r = 0; r < g->nregions; r++) {
        ir_poly p;
        pass_region_flops(g, &ix, r, &p);
        if (!ir_poly_eval(&p, syms, g->nsyms, &f)) {
            total = -1;
            break;
        }
        total += f;
    }
    pass_index_free(&ix);
    return total;
}

/* Adds kernel k of cp to the plan with its geometry at the bound sizes. */
static bool plan_kernel_from_cg(rt_gpu_plan *p, const ir_graph *g, const cg_program *cp, unsigned k,
                                const int64_t *syms, char *err, size_t cap) {
    const cg_kernel *ck = cg_program_kernel(cp, k);
    rt_kernel_desc kd;
    unsigned grid[3], block[3], smem = 0;
    memset(&kd, 0, sizeof kd);
    snprintf(kd.name, sizeof kd.name, "%s", ck->name);
    if (!cg_kernel_geometry(cp, k, syms, grid, block, &smem)) {
        snprintf(err, cap, "kernel %s: launch geometry overflows at these sizes", ck->name);
        return false;
    }
    kd.nparams = ck->nbufs + ck->nsyms + ck->ntmaps;
    kd.params = ir_xcalloc(kd.nparams ? kd.nparams : 1, sizeof *kd.params);
    kd.bytes = 0;
    for (unsigned i = 0; i < ck->nbufs; i++) {
        kd.params[i].kind = RT_KP_BUF;
        kd.params[i].buf = plan_buf_index(p, &ck->bufs[i]);
        if (kd.params[i].buf == UINT32_MAX) {
            snprintf(err, cap, "kernel %s: manifest names a buffer the program lacks", ck->name);
            free(kd.params);
            return false;
        }
        kd.bytes += (double)rt_buf_bytes(&p->bufs[kd.params[i].buf]);
    }
    for (unsigned i = 0; i < ck->nsyms; i++) {
        kd.params[ck->nbufs + i].kind = RT_KP_I64;
        kd.params[ck->nbufs + i].value = syms[ck->syms[i]];
    }
    for (unsigned i = 0; i < ck->ntmaps; i++) {
        const cg_tmap *tm = &ck->tmaps[i];
        rt_kparam *kp = &kd.params[ck->nbufs + ck->nsyms + i];
        unsigned rank = tm->rank >= 3 && tm->rank <= CG_TMAP_MAXR ? tm->rank : 2;
        bool outer = tm->outer.rank > 0; /* the last dim: the planes of outer */
        ir_shape ds = {.rank = (uint8_t)(outer ? rank - 1 : rank)};
        for (unsigned j = 0; j < ds.rank; j++) ds.dim[j] = tm->dim[j];
        kp->kind = RT_KP_TMAP;
        kp->buf = tm->buf < ck->nbufs ? kd.params[tm->buf].buf : UINT32_MAX;
        kp->tmap = (rt_tmap_desc){.dtype = tm->dtype,
                                  .swizzle = tm->swizzle,
                                  .rank = (uint8_t)rank,
                                  .pitch = tm->pitch,
                                  .pdim = tm->pdim,
                                  .offset = tm->offset};
        for (unsigned j = 0; j < rank; j++) kp->tmap.box[j] = tm->box[j], kp->tmap.dim[j] = 1;
        bool okd = cg_shape_resolve(&ds, syms, g->nsyms, kp->tmap.dim);
        if (okd && outer) {
            int64_t od[IR_MAX_RANK];
            okd = cg_shape_resolve(&tm->outer, syms, g->nsyms, od);
            for (unsigned j = 0; okd && j < tm->outer.rank; j++) kp->tmap.dim[rank - 1] *= od[j];
        }
        if (kp->buf == UINT32_MAX || !okd) {
            snprintf(err, cap, "kernel %s: tensor map %u names no buffer or an unbound size",
                     ck->name, i);
            free(kd.params);
            return false;
        }
    }
    memcpy(kd.grid, grid, sizeof kd.grid);
    memcpy(kd.block, block, sizeof kd.block);
    kd.smem = smem;
    kd.region = ck->region;
    if (!ir_poly_eval(&ck->flops, syms, g->nsyms, &kd.flops)) kd.flops = -1;
    kd.predicted_us = -1;
    snprintf(kd.kind, sizeof kd.kind, "%s",
             ck->region >= 0 && (uint32_t)ck->region < g->nregions
                 ? ir_region_kind_name((ir_region_kind)g->regions[ck->region].kind)
                 : "copy");
    rt_gpu_plan_add_kernel(p, &kd);
    free(kd.params);
    return true;
}

rt_gpu_plan *drv_gpu_plan_from_cg(const ir_graph *g, cg_program *cp, const int64_t *syms, char *err,
                                  size_t cap) {
    rt_gpu_plan *p = rt_gpu_plan_new();
    const char *ptx = cg_program_ptx(cp, NULL);
    if (!ptx) {
        snprintf(err, cap, "the program has no PTX (compiled for the host target?)");
        rt_gpu_plan_free(p);
        return NULL;
    }
    p->ptx = ir_xstrdup(ptx);
    if (!plan_bufs_from_cg(p, g, cp, syms, err, cap)) {
        rt_gpu_plan_free(p);
        return NULL;
    }
    for (unsigned k = 0; k < cg_program_nkernels(cp); k++)
        if (!plan_kernel_from_cg(p, g, cp, k, syms, err, cap)) {
            rt_gpu_plan_free(p);
            return NULL;
        }
    if (!rt_gpu_plan_check(p, err, cap)) {
        rt_gpu_plan_free(p);
        return NULL;
    }
    return p;
}

/* Compiles g for target and returns the plan for the inputs' sizes; syms
 * receives the symbol values (g->nsyms entries). NULL with an error reported. */
rt_gpu_plan *drv_gpu_plan_build(const ir_graph *g, int target, const rt_tensor *inputs,
                                int64_t *syms, tx_diag *d) {
    char err[512];
    rt_gpu_plan *p;
    cg_program *cp;
    if (target == CG_HOST || target < 0 || target >= CG_NTARGETS) {
        tx_error(d, "running on the GPU needs an sm_* target, not %s",
                 cg_target_name((cg_target)target));
        return NULL;
    }
    if (!rt_bind_shapes(g, inputs, syms, d)) return NULL;
    cp = cg_program_new(g, (cg_target)target, d);
    if (!cp) return NULL;
    p = drv_gpu_plan_from_cg(g, cp, syms, err, sizeof err);
    cg_program_free(cp);
    if (!p) tx_error(d, "%s", err);
    return p;
}

pass_target drv_pass_target(int t) {
    switch (t) {
        case CG_SM80: return (pass_target){80, false, false};
        case CG_SM86: return (pass_target){86, false, false};
        case CG_SM89: return (pass_target){89, false, false};
        case CG_SM90: return (pass_target){90, false, false};
        case CG_SM90A: return (pass_target){90, true, false};
        case CG_HOST: return (pass_target){0, false, true};
        default: return (pass_target){0, false, false};
    }
}

int drv_target_for_cc(int cc) {
    switch (cc) {
        case 90: return CG_SM90A;
        case 86: return CG_SM86;
        case 89: return CG_SM89;
        default: return cc > 90 ? CG_SM90 : CG_SM80;
    }
}

bool drv_gpu_run(const ir_graph *g, int target, const rt_tensor *inputs, rt_tensor *outputs,
                 tx_diag *d) {
    char err[512];
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    rt_cuda *c = rt_cuda_new(err, sizeof err);
    rt_gpu_plan *p = NULL;
    bool ok = false;
    if (c && target == DRV_TARGET_DEVICE) target = drv_target_for_cc(rt_cuda_get_info(c)->cc);
    if (!c)
        tx_error(d, "%s", err);
    else if ((p = drv_gpu_plan_build(g, target, inputs, syms, d)) != NULL)
        ok = rt_gpu_exec_once(c, p, inputs, outputs, d);
    rt_gpu_plan_free(p);
    rt_cuda_free(c);
    free(syms);
    return ok;
}
