/* run.c - running a compiled program on host tensors: the reference
 * interpreter, the host JIT (codegen's buffers over the runtime's tensors)
 * or the GPU. Contracts in driver/driver.h. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

/* Allocates outputs[0..nout) at the shapes of g's returned values at bound
 * sizes syms and points bufs[k] at their data; false with an error (every
 * output freed again) when one is too large. */
static bool host_outputs(const ir_graph *g, const int64_t *syms, rt_tensor *outputs, void **bufs,
                         tx_diag *d) {
    const ir_node *on = &g->nodes[ir_output(g)];
    for (unsigned k = 0; k < on->nin; k++) {
        const ir_node *v = &g->nodes[ir_in(g, on, k)];
        rt_tensor *t = &outputs[k];
        size_t bytes = 0;
        char what[64], err[300];
        t->dtype = (ir_dtype)v->dtype;
        t->rank = v->shape.rank;
        snprintf(what, sizeof what, "output %u", k);
        bool sized =
            cg_shape_resolve(&v->shape, syms, g->nsyms, t->dim) && rt_tensor_bytes(t, &bytes);
        if (sized && !ir_host_mem_check((double)bytes, what, err, sizeof err)) {
            tx_error(d, "%s", err);
            for (unsigned j = 0; j <= k; j++) rt_tensor_free(&outputs[j]);
            return false;
        }
        if (!sized || !rt_tensor_alloc(t)) {
            tx_error(d, "output %u is too large", k);
            for (unsigned j = 0; j <= k; j++) rt_tensor_free(&outputs[j]);
            return false;
        }
        bufs[k] = t->data;
    }
    return true;
}

bool drv_host_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d) {
    unsigned nin = 0, nout = g->nodes[ir_output(g)].nin;
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    void **in, **out = ir_xcalloc(nout + 1, sizeof *out);
    bool ok;
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    while (nin < g->n && g->nodes[nin].op == IR_OP_INPUT) nin++;
    in = ir_xcalloc(nin + 1, sizeof *in);
    for (unsigned i = 0; i < nin; i++) in[i] = inputs[i].data;
    memset(outputs, 0, nout * sizeof *outputs);
    ok = rt_bind_shapes(g, inputs, syms, d) && host_outputs(g, syms, outputs, out, d);
    if (ok && !cg_host_run(g, syms, in, out, d)) {
        for (unsigned k = 0; k < nout; k++) rt_tensor_free(&outputs[k]);
        ok = false;
    }
    free(in);
    free(out);
    free(syms);
    return ok;
}

bool drv_run(const ir_graph *g, const ir_graph *raw, drv_device dev, int target,
             const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d) {
    switch (dev) {
        case DRV_REF: return rt_interp_run(raw, inputs, outputs, d);
        case DRV_CPU: return drv_host_run(g, inputs, outputs, d);
        case DRV_GPU: return drv_gpu_run(g, target, inputs, outputs, d);
    }
    tx_error(d, "unknown device %d", (int)dev);
    return false;
}
