/* host.c - the host target: per-kernel wrappers that loop over the program
 * ids, the ORC LLJIT session, and cg_host_run. */
#include "codegen/cg_impl.h"

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

/* Signature of a host wrapper: buffers, all graph symbols, grid, and the
 * range [lo, hi) of linear program ids (x fastest) to run. */
typedef void (*cg_host_fn)(void **bufs, const int64_t *syms, int64_t gx, int64_t gy, int64_t gz,
                           int64_t lo, int64_t hi);

/* Emits `<kernel>_host(ptr bufs, ptr syms, i64 gx, i64 gy, i64 gz, i64 lo, i64 hi)`:
 * for each linear program id in [lo, hi), calls the kernel body with
 * x = id % gx, y = id / gx % gy, z = id / (gx gy). */
static void cg_host_wrapper(cg_ctx *cx, const cg_kernel *k) {
    LLVMValueRef body = LLVMGetNamedFunction(cx->mod, k->name);
    LLVMTypeRef bty = LLVMGlobalGetValueType(body);
    LLVMTypeRef pt[7] = {cx->ptr, cx->ptr, cx->i64, cx->i64, cx->i64, cx->i64, cx->i64};
    char name[200];
    snprintf(name, sizeof name, "%s_host", k->name);
    cx->fn = LLVMAddFunction(cx->mod, name, LLVMFunctionType(cx->voidt, pt, 7, 0));
    LLVMPositionBuilderAtEnd(cx->b, LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "entry"));
    unsigned np = k->nbufs + k->nsyms + 6;
    LLVMValueRef *args = ir_xmalloc(np * sizeof *args);
    for (unsigned i = 0; i < k->nbufs; i++) {
        LLVMValueRef ix = cg_i64(cx, i);
        args[i] = LLVMBuildLoad2(
            cx->b, cx->ptr, LLVMBuildGEP2(cx->b, cx->ptr, LLVMGetParam(cx->fn, 0), &ix, 1, ""), "");
    }
    for (unsigned i = 0; i < k->nsyms; i++) {
        LLVMValueRef ix = cg_i64(cx, k->syms[i]);
        args[k->nbufs + i] = LLVMBuildLoad2(
            cx->b, cx->i64, LLVMBuildGEP2(cx->b, cx->i64, LLVMGetParam(cx->fn, 1), &ix, 1, ""), "");
    }
    unsigned o = k->nbufs + k->nsyms;
    for (int d = 0; d < 3; d++) args[o + 3 + d] = LLVMGetParam(cx->fn, 2 + d);
    LLVMValueRef gx = LLVMGetParam(cx->fn, 2), gy = LLVMGetParam(cx->fn, 3);
    cg_loop l;
    LLVMValueRef id = cg_loop_begin(cx, &l, LLVMGetParam(cx->fn, 5), LLVMGetParam(cx->fn, 6),
                                    cg_i64(cx, 1), "pid");
    LLVMValueRef xy = LLVMBuildUDiv(cx->b, id, gx, "");
    args[o + 0] = LLVMBuildURem(cx->b, id, gx, "x");
    args[o + 1] = LLVMBuildURem(cx->b, xy, gy, "y");
    args[o + 2] = LLVMBuildUDiv(cx->b, xy, gy, "z");
    LLVMBuildCall2(cx->b, bty, body, args, np, "");
    cg_loop_end(cx, &l);
    LLVMBuildRetVoid(cx->b);
    free(args);
    cx->fn = NULL;
}

/* Emits the wrappers of every kernel (host target). */
void cg_host_wrappers(cg_ctx *cx) {
    for (unsigned k = 0; k < cx->nkernels; k++) cg_host_wrapper(cx, &cx->kernels[k]);
}

/* Reports an LLVM error (consuming it); returns false. */
static bool cg_llvm_err(tx_diag *d, const char *what, LLVMErrorRef e) {
    char *m = LLVMGetErrorMessage(e);
    tx_error(d, "codegen: %s: %s", what, m);
    LLVMDisposeErrorMessage(m);
    return false;
}

/* A JIT session holding one program's module. */
typedef struct cg_jit {
    LLVMOrcLLJITRef jit;
} cg_jit;

/* Creates the LLJIT for the host, with the process's symbols visible (libm
 * fallbacks), and moves p's module into it. */
static bool cg_jit_new(cg_jit *j, cg_program *p, tx_diag *d) {
    LLVMOrcJITTargetMachineBuilderRef jtmb;
    LLVMErrorRef e = LLVMOrcJITTargetMachineBuilderDetectHost(&jtmb);
    if (e) return cg_llvm_err(d, "cannot detect the host for the JIT", e);
    LLVMOrcLLJITBuilderRef bld = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(bld, jtmb);
    e = LLVMOrcCreateLLJIT(&j->jit, bld);
    if (e) return cg_llvm_err(d, "cannot create the JIT", e);
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
    if (e) return cg_llvm_err(d, "cannot expose process symbols to the JIT", e);
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(j->jit), gen);
    LLVMOrcThreadSafeModuleRef tsm =
        LLVMOrcCreateNewThreadSafeModule(p->mod, (LLVMOrcThreadSafeContextRef)p->tsc);
    p->mod = NULL;
    e = LLVMOrcLLJITAddLLVMIRModule(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        return cg_llvm_err(d, "cannot add the module to the JIT", e);
    }
    return true;
}

/* Disposes the JIT (and the module it owns). */
static void cg_jit_free(cg_jit *j) {
    if (j->jit) LLVMConsumeError(LLVMOrcDisposeLLJIT(j->jit));
    j->jit = NULL;
}

/* Looks up the wrapper of kernel k. */
static cg_host_fn cg_jit_lookup(cg_jit *j, const cg_kernel *k, tx_diag *d) {
    char name[200];
    snprintf(name, sizeof name, "%s_host", k->name);
    LLVMOrcExecutorAddress a = 0;
    LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &a, name);
    if (e) {
        cg_llvm_err(d, "JIT lookup failed", e);
        return NULL;
    }
    return (cg_host_fn)(uintptr_t)a;
}

/* Allocates a 64-byte aligned zeroed block of n bytes (at least 64). */
static void *cg_aligned(size_t n) {
    size_t sz = (n + 63) / 64 * 64;
    void *m = aligned_alloc(64, sz ? sz : 64);
    if (!m) {
        fprintf(stderr, "txc: out of memory\n");
        exit(1);
    }
    memset(m, 0, sz ? sz : 64);
    return m;
}

/* Byte size of dtype t over shape s with bound syms; false on overflow. */
static bool cg_bytes(const ir_shape *s, ir_dtype t, const int64_t *syms, unsigned nsyms,
                     int64_t *dims, size_t *bytes) {
    if (!cg_shape_resolve(s, syms, nsyms, dims)) return false;
    int64_t n = ir_dtype_size(t);
    for (unsigned i = 0; i < s->rank; i++)
        if (!ir_mul_ok(n, dims[i], &n)) return false;
    *bytes = (size_t)n;
    return true;
}

/* Parameters of g (1 + the largest input index). */
static unsigned cg_graph_ninputs(const ir_graph *g) {
    unsigned nin = 0;
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_INPUT && g->nodes[i].a.param + 1 > nin)
            nin = g->nodes[i].a.param + 1;
    return nin;
}

/* Run state: buffers by kind. */
typedef struct cg_run {
    void **in, **out, **tmp;
    void **own; /* aligned copies of misaligned inputs and the temps */
    unsigned nown;
} cg_run;

/* Aligned views of the inputs (copies of misaligned ones), the caller's outputs (each 16-byte
 * aligned, else an error) and freshly allocated temps, all sized at the bound syms. */
static bool cg_run_setup(const ir_graph *g, const cg_program *p, void *const *inputs,
                         void *const *outputs, const int64_t *syms, cg_run *r, tx_diag *d) {
    const ir_node *on = &g->nodes[ir_output(g)];
    unsigned nin = cg_graph_ninputs(g);
    r->in = ir_xcalloc(nin + 1, sizeof *r->in);
    r->out = ir_xcalloc(on->nin + 1, sizeof *r->out);
    r->tmp = ir_xcalloc(p->ntemps + 1, sizeof *r->tmp);
    r->own = ir_xcalloc(nin + p->ntemps + 1, sizeof *r->own);
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *v = &g->nodes[i];
        if (v->op != IR_OP_INPUT) continue;
        unsigned ix = v->a.param;
        int64_t dims[IR_MAX_RANK];
        size_t n;
        r->in[ix] = inputs[ix];
        if ((uintptr_t)inputs[ix] % 16 == 0) continue;
        if (!cg_bytes(&v->shape, (ir_dtype)v->dtype, syms, g->nsyms, dims, &n)) {
            tx_error(d, "input %u is too large", ix);
            return false;
        }
        r->in[ix] = r->own[r->nown++] = cg_aligned(n);
        memcpy(r->in[ix], inputs[ix], n);
    }
    for (unsigned k = 0; k < on->nin; k++) {
        if ((uintptr_t)outputs[k] % 16) {
            tx_error(d, "codegen: output buffer %u is not 16-byte aligned", k);
            return false;
        }
        r->out[k] = outputs[k];
    }
    size_t *tbytes = ir_xcalloc(p->ntemps + 1, sizeof *tbytes);
    double total = 0;
    char err[300];
    for (unsigned i = 0; i < p->ntemps; i++) {
        int64_t dims[IR_MAX_RANK];
        if (!cg_bytes(&p->temps[i].shape, p->temps[i].dtype, syms, g->nsyms, dims, &tbytes[i])) {
            tx_error(d, "intermediate %u is too large", i);
            free(tbytes);
            return false;
        }
        total += (double)tbytes[i];
    }
    bool ok = ir_host_mem_check(total, "the host JIT (its intermediates)", err, sizeof err);
    if (!ok) tx_error(d, "%s", err);
    for (unsigned i = 0; ok && i < p->ntemps; i++)
        r->tmp[i] = r->own[r->nown++] = cg_aligned(tbytes[i]);
    free(tbytes);
    return ok;
}

/* Releases the run state's own allocations (not the outputs). */
static void cg_run_free(cg_run *r) {
    for (unsigned i = 0; i < r->nown; i++) free(r->own[i]);
    free(r->own);
    free(r->in);
    free(r->out);
    free(r->tmp);
}

/* One thread's share of a kernel's programs. */
typedef struct cg_par {
    cg_host_fn fn;
    void **bufs;
    const int64_t *syms;
    int64_t grid[3], lo, hi;
} cg_par;

static int cg_par_main(void *arg) {
    cg_par *p = arg;
    p->fn(p->bufs, p->syms, p->grid[0], p->grid[1], p->grid[2], p->lo, p->hi);
    return 0;
}

/* Threads for host kernels: TX_HOST_THREADS when set (1 = run on the caller's thread), else the
 * online processors; at most 64. Host kernels keep their state (shared arrays, scratch) in
 * allocas, so programs can run concurrently; a module that holds a writable global (none does
 * today) runs on one thread. */
static unsigned cg_host_threads(LLVMModuleRef m) {
    for (LLVMValueRef gv = LLVMGetFirstGlobal(m); gv; gv = LLVMGetNextGlobal(gv))
        if (!LLVMIsGlobalConstant(gv)) return 1;
    const char *e = getenv("TX_HOST_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* Runs programs [0, total) of one kernel, split into contiguous ranges over up to nthreads
 * threads, and returns when all are done. Programs are independent (as on the GPU), so the
 * results do not depend on the split; a thread that cannot start runs its range here. */
static void cg_run_programs(cg_host_fn fn, void **bufs, const int64_t *syms, const unsigned grid[3],
                            unsigned nthreads) {
    int64_t total = (int64_t)grid[0] * grid[1] * grid[2];
    unsigned t = total < nthreads ? (unsigned)total : nthreads;
    cg_par ps[64];
    thrd_t th[64];
    bool started[64] = {false};
    for (unsigned i = 0; i < t; i++) {
        ps[i] = (cg_par){
            fn, bufs, syms, {grid[0], grid[1], grid[2]}, total * i / t, total * (i + 1) / t};
        if (i > 0) started[i] = thrd_create(&th[i], cg_par_main, &ps[i]) == thrd_success;
    }
    if (t > 0) cg_par_main(&ps[0]);
    for (unsigned i = 1; i < t; i++) {
        if (started[i])
            thrd_join(th[i], NULL);
        else
            cg_par_main(&ps[i]);
    }
}

/* Runs every kernel of p in order. */
static bool cg_run_kernels(cg_program *p, cg_jit *j, const int64_t *syms, cg_run *r,
                           unsigned nthreads, tx_diag *d) {
    for (unsigned k = 0; k < p->nkernels; k++) {
        const cg_kernel *kr = &p->kernels[k];
        unsigned grid[3], block[3], smem;
        if (!cg_kernel_geometry(p, k, syms, grid, block, &smem)) {
            tx_error(d, "codegen: cannot compute the launch geometry of %s", kr->name);
            return false;
        }
        if (!grid[0] || !grid[1] || !grid[2]) continue;
        cg_host_fn fn = cg_jit_lookup(j, kr, d);
        if (!fn) return false;
        void **bufs = ir_xcalloc(kr->nbufs + 1, sizeof *bufs);
        for (unsigned b = 0; b < kr->nbufs; b++) {
            const cg_buf *cb = &kr->bufs[b];
            bufs[b] = cb->kind == CG_BUF_INPUT    ? r->in[cb->index]
                      : cb->kind == CG_BUF_OUTPUT ? r->out[cb->index]
                                                  : r->tmp[cb->index];
        }
        cg_run_programs(fn, bufs, syms, grid, nthreads);
        free(bufs);
    }
    return true;
}

/* Runs of the program cg_host_run makes: TX_HOST_RUNS (1 to 8) when set, else 1. Later runs
 * reuse the first's intermediates (a workspace left as the kernels left it, as the GPU's
 * repeated launches of txc bench), each after the outputs are filled with 0xFF bytes (NaN, -1),
 * so a kernel that stores nothing on a repeated run is seen. */
static unsigned cg_host_runs(void) {
    const char *e = getenv("TX_HOST_RUNS");
    long n = e && *e ? strtol(e, NULL, 10) : 1;
    return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

/* Fills every output of g at the bound syms with 0xFF bytes. */
static void cg_poison_outputs(const ir_graph *g, const int64_t *syms, cg_run *r) {
    const ir_node *on = &g->nodes[ir_output(g)];
    for (unsigned k = 0; k < on->nin; k++) {
        const ir_node *v = &g->nodes[ir_in(g, on, k)];
        int64_t dims[IR_MAX_RANK];
        size_t n;
        if (cg_bytes(&v->shape, (ir_dtype)v->dtype, syms, g->nsyms, dims, &n))
            memset(r->out[k], 0xFF, n);
    }
}

/* Host execution; see codegen.h. */
bool cg_host_run(const ir_graph *g, const int64_t *syms, void *const *inputs, void *const *outputs,
                 tx_diag *d) {
    cg_program *p = cg_program_new(g, CG_HOST, d);
    if (!p) return false;
    cg_jit j = {0};
    cg_run r;
    memset(&r, 0, sizeof r);
    unsigned nthreads = cg_host_threads(p->mod); /* before the JIT takes the module */
    bool ok = cg_jit_new(&j, p, d) && cg_run_setup(g, p, inputs, outputs, syms, &r, d) &&
              cg_run_kernels(p, &j, syms, &r, nthreads, d);
    for (unsigned i = 1, n = cg_host_runs(); ok && i < n; i++) {
        cg_poison_outputs(g, syms, &r);
        ok = cg_run_kernels(p, &j, syms, &r, nthreads, d);
    }
    cg_run_free(&r);
    cg_jit_free(&j);
    cg_program_free(p);
    return ok;
}

/* The index of a kernel buffer in cg_host_sample's order: inputs, outputs, temps. */
static unsigned cg_plan_index(const cg_buf *b, unsigned nin, unsigned nout) {
    return b->kind == CG_BUF_INPUT    ? b->index
           : b->kind == CG_BUF_OUTPUT ? nin + b->index
                                      : nin + nout + b->index;
}

/* Program i of n spread over a grid of `total` programs: the start of its
 * stride, moved by a fixed hash inside it. */
static int64_t cg_sample_id(unsigned i, unsigned n, int64_t total) {
    int64_t stride = total / n, id = (int64_t)i * stride;
    if (stride > 1) id += (int64_t)((i * 2654435761u) % (uint64_t)stride);
    return id < total ? id : total - 1;
}

/* Sampled host re-run; see codegen.h. */
/* True when kernel k of p is worth sampling: it writes a returned value and every intermediate it
 * reads still holds, at the end of the run, what it read (no later kernel writes that buffer). */
static bool cg_sample_kernel(const cg_program *p, unsigned k) {
    const cg_kernel *kr = &p->kernels[k];
    bool writes_out = false;
    for (unsigned b = 0; b < kr->nbufs; b++) {
        const cg_buf *cb = &kr->bufs[b];
        writes_out |= cb->write && cb->kind == CG_BUF_OUTPUT;
        if (cb->write || cb->kind != CG_BUF_TEMP) continue;
        for (unsigned l = k + 1; l < p->nkernels; l++)
            for (unsigned c = 0; c < p->kernels[l].nbufs; c++) {
                const cg_buf *lb = &p->kernels[l].bufs[c];
                if (lb->write && lb->kind == CG_BUF_TEMP && lb->index == cb->index) return false;
            }
    }
    return writes_out;
}

bool cg_host_sample(const ir_graph *g, const int64_t *syms, void **bufs, cg_fetch_fn fetch,
                    void *fetch_arg, const int64_t *bytes, unsigned nbufs, unsigned per_kernel,
                    const double *kflops, double max_flops, unsigned char poison, void **sampled,
                    void **sampled2, tx_diag *d) {
    unsigned nin = cg_graph_ninputs(g), nout = g->nodes[ir_output(g)].nin;
    memset(sampled, 0, nbufs * sizeof *sampled);
    if (sampled2) memset(sampled2, 0, nbufs * sizeof *sampled2);
    cg_program *p = cg_program_new(g, CG_HOST, d);
    if (!p) return false;
    cg_jit j = {0};
    /* a device plan may hold staged operand copies after the buffers both have (cg_temp) */
    bool ok = nin + nout + p->ntemps <= nbufs;
    if (!ok)
        tx_error(d, "sampled check: the host program has %u buffers, the device's plan %u",
                 nin + nout + p->ntemps, nbufs);
    ok = ok && cg_jit_new(&j, p, d);
    for (unsigned k = 0; ok && k < p->nkernels; k++) {
        const cg_kernel *kr = &p->kernels[k];
        unsigned grid[3], block[3], smem;
        if (!cg_kernel_geometry(p, k, syms, grid, block, &smem)) {
            tx_error(d, "codegen: cannot compute the launch geometry of %s", kr->name);
            ok = false;
            break;
        }
        int64_t total = (int64_t)grid[0] * grid[1] * grid[2];
        if (!total || (total == 1 && kflops && kflops[k] > max_flops) || !cg_sample_kernel(p, k))
            continue;
        cg_host_fn fn = cg_jit_lookup(&j, kr, d);
        if (!fn) {
            ok = false;
            break;
        }
        void **kb = ir_xcalloc(kr->nbufs + 1, sizeof *kb),
             **kb2 = ir_xcalloc(kr->nbufs + 1, sizeof *kb2);
        for (unsigned b = 0; b < kr->nbufs; b++) {
            unsigned ix = cg_plan_index(&kr->bufs[b], nin, nout);
            if (ix >= nbufs) {
                tx_error(d, "sampled check: kernel %s names buffer %u of %u", kr->name, ix, nbufs);
                ok = false;
                break;
            }
            if (!kr->bufs[b].write && !bufs[ix] && fetch) bufs[ix] = fetch(fetch_arg, ix);
            if (!kr->bufs[b].write && (!bufs[ix] || (uintptr_t)bufs[ix] % 16)) {
                tx_error(d, "sampled check: buffer %u of kernel %s is %s", ix, kr->name,
                         bufs[ix] ? "not 16-byte aligned" : "not available");
                ok = false;
                break;
            }
            if (kr->bufs[b].write && !sampled[ix]) {
                sampled[ix] = cg_aligned((size_t)bytes[ix]);
                memset(sampled[ix], poison, (size_t)bytes[ix]);
            }
            if (sampled2 && kr->bufs[b].write && !sampled2[ix]) {
                sampled2[ix] = cg_aligned((size_t)bytes[ix]);
                memset(sampled2[ix], poison ^ 0xFF, (size_t)bytes[ix]);
            }
            kb[b] = kr->bufs[b].write ? sampled[ix] : bufs[ix];
            kb2[b] = kr->bufs[b].write && sampled2 ? sampled2[ix] : bufs[ix];
        }
        unsigned n = total < per_kernel ? (unsigned)total : per_kernel;
        for (unsigned i = 0; ok && i < n; i++) {
            int64_t id = n == total ? (int64_t)i : cg_sample_id(i, n, total);
            fn(kb, syms, grid[0], grid[1], grid[2], id, id + 1);
            if (sampled2) fn(kb2, syms, grid[0], grid[1], grid[2], id, id + 1);
        }
        free(kb);
        free(kb2);
    }
    if (!ok)
        for (unsigned b = 0; b < nbufs; b++) {
            free(sampled[b]), sampled[b] = NULL;
            if (sampled2) free(sampled2[b]), sampled2[b] = NULL;
        }
    cg_jit_free(&j);
    cg_program_free(p);
    return ok;
}
