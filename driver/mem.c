/* mem.c - the memory a run or bench will need, checked before anything is
 * allocated (issue 15 row J). Contracts in driver/driver.h. */
#include "driver/driver.h"

#include <stdio.h>
#include <string.h>

/* Bytes of value id of g at bound sizes syms; -1 when a dim is unbound or overflows. */
static double value_bytes(const ir_graph *g, ir_id id, const int64_t *syms) {
    const ir_node *n = &g->nodes[id];
    int64_t dims[IR_MAX_RANK];
    double b = ir_dtype_size((ir_dtype)n->dtype);
    if (!cg_shape_resolve(&n->shape, syms, g->nsyms, dims)) return -1;
    for (unsigned d = 0; d < n->shape.rank; d++) b *= (double)dims[d];
    return b;
}

/* Element count of the graph's inputs and outputs (rt_bench_pick_reference's measure). */
static double io_elems(const ir_graph *g, const int64_t *syms) {
    const ir_node *on = &g->nodes[ir_output(g)];
    double e = 0;
    for (ir_id i = 0; i < g->n && g->nodes[i].op == IR_OP_INPUT; i++)
        e += value_bytes(g, i, syms) / ir_dtype_size((ir_dtype)g->nodes[i].dtype);
    for (unsigned k = 0; k < on->nin; k++) {
        ir_id v = ir_in(g, on, k);
        e += value_bytes(g, v, syms) / ir_dtype_size((ir_dtype)g->nodes[v].dtype);
    }
    return e;
}

bool drv_mem_estimate(const ir_graph *g, const int64_t *syms, const rt_tensor *have,
                      const drv_mem_opts *o, drv_mem_need *m) {
    const ir_node *on = &g->nodes[ir_output(g)];
    double out = 0;
    memset(m, 0, sizeof *m);
    for (ir_id i = 0; i < g->n && g->nodes[i].op == IR_OP_INPUT; i++) {
        double b = value_bytes(g, i, syms);
        if (b < 0) return false;
        m->gpu += b;
        if (!have || !have[g->nodes[i].a.param].data) m->inputs += b; /* not yet in memory */
    }
    for (unsigned k = 0; k < on->nin; k++) {
        double b = value_bytes(g, ir_in(g, on, k), syms);
        if (b < 0) return false;
        out += b;
    }
    m->outputs = out;
    m->gpu += o->dev == DRV_GPU ? out : 0;
    if (o->bench) {
        /* the reference bench will pick, and the copies its checks keep */
        const char *pick = rt_bench_pick_reference(io_elems(g, syms), drv_graph_flops(g, syms));
        if (o->dev != DRV_GPU)
            m->reference = pick && !strcmp(pick, "ref") ? 2 * out : 0;
        else if (!pick)
            m->reference =
                4 * out + m->gpu - out; /* two sampled copies, the gathered pair, inputs */
        else
            m->reference = !strcmp(pick, "ref") ? 2 * out : out;
        if (o->compare_unfused) m->reference += out; /* the unfused run's outputs */
    }
    m->host = m->inputs + m->outputs + m->reference;
    return true;
}

bool drv_check_memory(const ir_graph *g, const int64_t *syms, const rt_tensor *have,
                      const drv_mem_opts *o, rt_cuda *cuda, tx_diag *d) {
    drv_mem_need m;
    char what[400], err[600], a[64], b[64], c[64];
    if (!drv_mem_estimate(g, syms, have, o, &m)) return true; /* unbound: reported later */
    snprintf(what, sizeof what, "the %s (inputs %s, outputs %s%s%s)",
             o->bench ? "benchmark" : "run", ir_fmt_bytes(m.inputs, a, sizeof a),
             ir_fmt_bytes(m.outputs, b, sizeof b), m.reference > 0 ? ", reference and checks " : "",
             m.reference > 0 ? ir_fmt_bytes(m.reference, c, sizeof c) : "");
    if (!ir_host_mem_check(m.host, what, err, sizeof err)) {
        tx_error(d, "%s", err);
        return false;
    }
    if (o->dev != DRV_GPU || m.gpu < DRV_GPU_MEM_UNCHECKED) return true;
    rt_cuda *cu = cuda ? cuda : rt_cuda_new(err, sizeof err);
    size_t fr = 0, tot = 0;
    bool ok = true;
    if (!cu) { /* the run reports a missing driver itself */
        return true;
    }
    if (!rt_cuda_mem_info(cu, &fr, &tot)) {
        tx_error(d, "%s", rt_cuda_error(cu));
        ok = false;
    } else if (m.gpu > (double)fr) {
        tx_error(d,
                 "the %s needs %.0f bytes (%s) of GPU memory for its inputs and outputs; %zu "
                 "bytes (%s) are free of %s on %s",
                 o->bench ? "benchmark" : "run", m.gpu, ir_fmt_bytes(m.gpu, a, sizeof a), fr,
                 ir_fmt_bytes((double)fr, b, sizeof b), ir_fmt_bytes((double)tot, c, sizeof c),
                 rt_cuda_get_info(cu)->name);
        ok = false;
    }
    if (cu != cuda) rt_cuda_free(cu);
    return ok;
}
