/* bench.c - `txc bench`: the orchestration over the floors. Compiles the
 * plan for the inputs' sizes, picks and runs a reference (the interpreter
 * or the host JIT), verifies the GPU's outputs (fully, or sampled through
 * cg_host_sample when too large), re-plans unfused when asked, and times
 * through the runtime (rt_bench_time, rt_measure_copy/launch). The pure
 * parts and the printers are runtime/bench.c. Contracts in driver/driver.h. */
#include "driver/driver.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>

/* Monotonic wall clock in microseconds. */
static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Adds the seconds since *t0 (a now_us time) to *acc and moves *t0 to now. */
static void phase_add(double *acc, double *t0) {
    double t = now_us();
    *acc += (t - *t0) / 1e6;
    *t0 = t;
}

void drv_calib_apply(const rt_calib *cal, pass_gpu *gpu) {
    gpu->hbm_GBps = cal->copy_GBps;
    gpu->launch_us = cal->kernel_us > 0 ? cal->kernel_us : cal->launch_us;
    if (cal->mem_latency_us > 0) gpu->mem_latency_us = cal->mem_latency_us;
    if (cal->tc_TFLOPs > 0 && gpu->peak_TFLOPs[IR_BF16] > 0)
        gpu->tc_eff = cal->tc_TFLOPs / gpu->peak_TFLOPs[IR_BF16];
    pass_wg_calibrate(gpu, cal->tc_TFLOPs); /* the wgmma model's k-step rate from the same GEMM */
    if (cal->sfu_Gops > 0) gpu->sfu_Gops = cal->sfu_Gops;
}

/* ---- calibration micro-benchmarks ------------------------------------------------------------ */

/* Compiles src (sizes from defs) for target, runs it on random inputs and returns its single
 * kernel's median time alone in *us (L2 flushed). False with an error reported. */
static bool micro_time(rt_cuda *c, int target, const char *src, const fe_define *defs, unsigned nd,
                       double *us, tx_diag *d) {
    fe_options fo = {.defines = defs, .ndefines = nd};
    pass_ctx pc = {.diag = d, .gpu = pass_gpu_find("h200")};
    ir_graph *g = drv_compile("calibrate.tx", src, strlen(src), &fo, &pc, NULL, d);
    if (!g) return false;
    uint32_t np = 0;
    while (np < g->n && g->nodes[np].op == IR_OP_INPUT) np++;
    rt_tensor *in = ir_xcalloc(np + 1, sizeof *in);
    bool ok = true;
    for (uint32_t k = 0; ok && k < np; k++) {
        const ir_node *n = &g->nodes[k];
        in[k].dtype = (ir_dtype)n->dtype;
        in[k].rank = n->shape.rank;
        for (int a = 0; a < n->shape.rank; a++) {
            ir_dim dd = n->shape.dim[a];
            in[k].dim[a] = IR_DIM_IS_SYM(dd) ? g->syms[IR_DIM_SYMIDX(dd)].value : dd;
        }
        ok = rt_tensor_alloc(&in[k]);
        if (ok) rt_fill_random(&in[k], 1, k);
    }
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    rt_gpu_plan *p = ok ? drv_gpu_plan_build(g, target, in, syms, d) : NULL;
    rt_gpu_exec *x = p ? rt_gpu_exec_new(c, p, true) : NULL;
    rt_bench_result res;
    char err[256];
    memset(&res, 0, sizeof res);
    ok = x && rt_gpu_exec_upload(x, in, p->ninputs, err, sizeof err);
    if (ok) {
        rt_bench_result_init(&res, p, "calibrate");
        ok = rt_bench_time(c, x, p, 10, 0, &res) && res.nkernels > 0;
        *us = ok ? res.k[0].us : 0;
        rt_bench_result_free(&res);
    }
    if (!ok)
        tx_error(d, "calibration kernel failed: %s", x ? rt_gpu_exec_error(x) : rt_cuda_error(c));
    rt_gpu_exec_free(x);
    rt_gpu_plan_free(p);
    for (uint32_t k = 0; k < np; k++) rt_tensor_free(&in[k]);
    free(in);
    free(syms);
    ir_graph_free(g);
    return ok;
}

/* The cost model's constants from tx's own kernels (docs/cost-model.md "Constants"):
 * mem_latency_us: a streamed row sum over 8 rows of 2^21 f32, one 256-thread block per row far
 * from the HBM limit, moves 256 x 16 B per latency: latency = 4096 B x time / row bytes;
 * tc_TFLOPs: a bf16 4096^3 GEMM (wgmma on sm_90a); sfu_Gops: 16 nested tanh over 2^24 f32
 * (16 x 2^24 special-function ops over the kernel time). */
static bool calib_micro(rt_cuda *c, int target, rt_calib *cal, tx_diag *d) {
    static const char *rowsum = "fn f(x: f32[R, N]) -> f32[R] { return sum(x, axis=-1) }\n";
    static const char *gemm = "fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] { return a @ b }\n";
    static const char *chain =
        "fn f(x: f32[N]) -> f32[N] {\n  a = tanh(tanh(tanh(tanh(x))))\n  b = "
        "tanh(tanh(tanh(tanh(a))))\n"
        "  e = tanh(tanh(tanh(tanh(b))))\n  return tanh(tanh(tanh(tanh(e))))\n}\n";
    const fe_define rs[] = {{"R", 8}, {"N", 1 << 21}};
    const fe_define mm[] = {{"M", 4096}, {"K", 4096}, {"N", 4096}};
    const fe_define ch[] = {{"N", 1 << 24}};
    double t;
    if (!micro_time(c, target, rowsum, rs, 2, &t, d)) return false;
    cal->mem_latency_us = 4096.0 * t / ((double)(1 << 21) * 4.0);
    if (!micro_time(c, target, gemm, mm, 3, &t, d)) return false;
    cal->tc_TFLOPs = 2.0 * 4096.0 * 4096.0 * 4096.0 / (t * 1e6);
    if (!micro_time(c, target, chain, ch, 1, &t, d)) return false;
    cal->sfu_Gops = 16.0 * (double)(1 << 24) / (t * 1e3);
    return true;
}

/* ---- the planner's predictions --------------------------------------------- */

/* A copy of g with every symbolic dim replaced by its bound value, so that
 * the cost model gives concrete numbers. NULL on allocation failure. */
static ir_graph *concrete_clone(const ir_graph *g, const int64_t *syms) {
    ir_graph *c = ir_graph_clone(g);
    for (uint32_t i = 0; c && i < c->n; i++) {
        ir_shape *sh = &c->nodes[i].shape;
        for (unsigned d = 0; d < sh->rank; d++)
            if (IR_DIM_IS_SYM(sh->dim[d]) && IR_DIM_SYMIDX(sh->dim[d]) < c->nsyms)
                sh->dim[d] = syms[IR_DIM_SYMIDX(sh->dim[d])];
    }
    for (uint32_t k = 0; c && k < c->nsyms; k++) c->syms[k].value = syms[k];
    return c;
}

/* Copies the cost model's predicted time of every region (roofline plus
 * launch overhead, passes/cost.c) into the plan's kernels of that region.
 * Returns the predicted total (-1 when some region has no figure). */
static double plan_predictions(const ir_graph *g, const pass_ctx *pc, const int64_t *syms,
                               rt_gpu_plan *p) {
    ir_graph *c = pc && pc->gpu ? concrete_clone(g, syms) : NULL;
    ir_uses u;
    double total = 0;
    bool all = c != NULL;
    if (!c || !ir_uses_build(c, &u)) {
        ir_graph_free(c);
        return -1;
    }
    for (uint32_t r = 0; r < c->nregions; r++) {
        pass_cost cost;
        pass_region_cost(c, &u, r, pc->gpu, &cost);
        all &= cost.concrete;
        total += cost.concrete ? cost.predicted_us : 0;
        for (uint32_t k = 0; cost.concrete && k < p->nkernels; k++)
            if (p->kernels[k].region == (int)r) p->kernels[k].predicted_us = cost.predicted_us;
    }
    ir_uses_free(&u);
    ir_graph_free(c);
    return all ? total : -1;
}

/* The FLOPs above which a kernel that is one host program (the host runs reductions as one) is
 * left out of the sampled check. */
#define SAMPLE_PROGRAMS  RT_SAMPLE_PROGRAMS
#define SAMPLE_MAX_FLOPS 4e10

/* Lazy downloads of the device's buffers for the sampled check: only those a sampled kernel reads
 * come back (an unfused plan's intermediates can be many gigabytes). */
typedef struct sample_fetch {
    rt_gpu_exec *x;
    const rt_gpu_plan *p;
    rt_tensor *all;
    bool failed;
} sample_fetch;

static void *sample_fetch_buf(void *arg, unsigned b) {
    sample_fetch *f = arg;
    const rt_buf_desc *bd = &f->p->bufs[b];
    rt_tensor *t = &f->all[b];
    char err[300];
    t->dtype = (ir_dtype)bd->dtype;
    t->rank = bd->rank;
    memcpy(t->dim, bd->dim, sizeof bd->dim);
    if (!ir_host_mem_check((double)rt_buf_bytes(bd), "the sampled check's copy of a buffer", err,
                           sizeof err)) {
        rt_cuda_set_error(rt_gpu_exec_cuda(f->x), err);
        f->failed = true;
        return NULL;
    }
    if (!rt_tensor_alloc(t) ||
        (rt_buf_bytes(bd) > 0 &&
         !rt_cuda_download(rt_gpu_exec_cuda(f->x), t->data, rt_gpu_exec_buf(f->x, b),
                           (size_t)rt_buf_bytes(bd), bd->name))) {
        rt_tensor_free(t);
        f->failed = true;
        return NULL;
    }
    return t->data;
}

/* The host's values at the elements of one output that the sampled check computed: the fused
 * plan's, kept to check the unfused plan's output at the same elements. */
typedef struct sample_ref {
    int64_t m;    /* elements */
    int64_t *idx; /* their flat indices, ascending */
    rt_tensor want;
} sample_ref;

static void sample_ref_free(sample_ref *r, uint32_t n) {
    for (uint32_t k = 0; r && k < n; k++) {
        free(r[k].idx);
        rt_tensor_free(&r[k].want);
    }
    free(r);
}

/* True when element i is the same in both sampled runs (the host wrote it). */
static bool sample_same(const void *s1, const void *s2, size_t es, int64_t i) {
    return es == 4 ? ((const uint32_t *)s1)[i] == ((const uint32_t *)s2)[i]
                   : memcmp((const char *)s1 + i * es, (const char *)s2 + i * es, es) == 0;
}

/* The elements of `dev` that both sampled runs wrote alike (s1 == s2): their indices and the
 * host's values into r, the device's into got (both of m elements, allocated here). False when
 * they do not fit in memory. */
static bool sample_gather(const rt_tensor *dev, const void *s1, const void *s2, rt_tensor *got,
                          sample_ref *r) {
    size_t es = (size_t)ir_dtype_size(dev->dtype);
    int64_t n = rt_numel(dev), m = 0;
    for (int64_t i = 0; i < n; i++) m += sample_same(s1, s2, es, i);
    *got = (rt_tensor){.dtype = dev->dtype, .rank = 1, .dim = {m}};
    r->want = *got;
    r->m = m;
    r->idx = malloc((size_t)(m ? m : 1) * sizeof *r->idx);
    if (!r->idx || !rt_tensor_alloc(got) || !rt_tensor_alloc(&r->want)) return false;
    for (int64_t i = 0, j = 0; i < n; i++) {
        if (!sample_same(s1, s2, es, i)) continue;
        memcpy((char *)got->data + j * es, (const char *)dev->data + i * es, es);
        memcpy((char *)r->want.data + j * es, (const char *)s1 + i * es, es);
        r->idx[j++] = i;
    }
    return true;
}

/* Whether op keeps the relative error of its non-constant inputs (the coarsest of them) in its
 * result: products, quotients, the selections maximum/minimum/max/min, abs and neg. Sums do not
 * (cancellation). */
static bool prec_keeping(ir_op op) {
    return op == IR_OP_MUL || op == IR_OP_DIV || op == IR_OP_MAXIMUM || op == IR_OP_MINIMUM ||
           op == IR_OP_MAX || op == IR_OP_MIN || op == IR_OP_ABS || op == IR_OP_NEG;
}

/* The coarsest f16/bf16 rounding that node v's value carries: the dtype of an f16/bf16 value that
 * views and widening casts bring into v unchanged, or that error-keeping ops (prec_keeping) of
 * such values and constants combine; IR_F32 where any path reaches an exact f32 value (or the
 * walk passes `budget` nodes). */
static ir_dtype carried_prec(const ir_graph *g, const ir_node *v, unsigned *budget) {
    if (v->dtype == IR_F16 || v->dtype == IR_BF16) return (ir_dtype)v->dtype;
    if (*budget == 0 || v->dtype != IR_F32) return IR_F32;
    (*budget)--;
    bool view = (ir_op_traits((ir_op)v->op) & IR_T_VIEW) != 0;
    if ((view || v->op == IR_OP_CAST) && v->nin == 1)
        return carried_prec(g, &g->nodes[ir_in(g, v, 0)], budget);
    if (!prec_keeping((ir_op)v->op)) return IR_F32;
    ir_dtype prec = IR_F32;
    bool coarse = false;
    for (uint32_t i = 0; i < v->nin; i++) {
        const ir_node *src = &g->nodes[ir_in(g, v, i)];
        if (src->op == IR_OP_CONST) continue;
        ir_dtype p = carried_prec(g, src, budget);
        if (p == IR_F32) return IR_F32;
        if (!coarse || p == IR_BF16) prec = p; /* bf16's 8 bits are coarser than f16's 11 */
        coarse = true;
    }
    return coarse ? prec : IR_F32;
}

/* The dtype whose tolerance output k of g is verified at (rt_bench_check_output_at): its own, or
 * for an f32 output the f16/bf16 rounding its values carry (carried_prec: f32(a @ b) of an f16
 * product holds f16 values; n / max(abs(n)) of such values keeps their relative error). */
static ir_dtype out_prec(const ir_graph *g, uint32_t k, ir_dtype dt) {
    if (!g || g->n == 0 || dt != IR_F32) return dt;
    const ir_node *o = &g->nodes[g->n - 1];
    if (o->op != IR_OP_OUTPUT || k >= o->nin) return dt;
    unsigned budget = 256;
    return carried_prec(g, &g->nodes[ir_in(g, o, k)], &budget);
}

/* The terms an f32 sum or mean v adds (through reshapes): the elements of its input over its
 * axes, times the terms of that input when it is itself an f32 sum or mean (the split stage's
 * sum(sum(x, T), A) adds |T| x |A| terms of x); 0 when v is not one or an extent is symbolic. */
static int64_t red_terms(const ir_graph *g, const ir_node *v) {
    int64_t t = 1; /* at most the innermost input's elements: each reduction divides its count */
    for (bool first = true;; first = false) {
        while (v->op == IR_OP_RESHAPE && v->nin == 1) v = &g->nodes[ir_in(g, v, 0)];
        if ((v->op != IR_OP_SUM && v->op != IR_OP_MEAN) || v->dtype != IR_F32 || v->nin != 1)
            return first ? 0 : t;
        const ir_node *x = &g->nodes[ir_in(g, v, 0)];
        for (unsigned a = 0; a < x->shape.rank; a++) {
            if (!(v->a.red.axes & (1u << a))) continue;
            if (IR_DIM_IS_SYM(x->shape.dim[a])) return 0;
            t *= x->shape.dim[a];
        }
        v = x;
    }
}

/* drv_out_terms: red_terms of the output, else the matrix product region's K, at a bound K. */
int64_t drv_out_terms(const ir_graph *g, uint32_t k) {
    if (!g || g->n == 0) return 0;
    const ir_node *o = &g->nodes[g->n - 1];
    if (o->op != IR_OP_OUTPUT || k >= o->nin) return 0;
    const ir_node *v = &g->nodes[ir_in(g, o, k)];
    int64_t rt = red_terms(g, v);
    if (rt > 0) return rt;
    if (v->region == IR_NONE || v->region >= g->nregions) return 0;
    const ir_region *rg = &g->regions[v->region];
    if (rg->kind != IR_RK_MATMUL || rg->anchor >= g->n) return 0;
    const ir_node *mm = &g->nodes[rg->anchor];
    if (mm->op != IR_OP_MATMUL) return 0;
    const ir_node *a = &g->nodes[ir_in(g, mm, 0)];
    ir_dim kd = a->shape.rank ? a->shape.dim[a->shape.rank - 1] : 0;
    return IR_DIM_IS_SYM(kd) ? 0 : kd;
}

/* Compares the elements r->idx of output `dev` with r->want into oc (sampled = m). False with an
 * error reported (out of memory). */
static bool sample_compare(const rt_tensor *dev, const sample_ref *r, const rt_tensor *got,
                           ir_dtype prec, rt_out_check *oc, rt_bench_result *res, tx_diag *d) {
    char err[256];
    bool ok = rt_bench_check_output_at(got, &r->want, NULL, prec, oc, err, sizeof err);
    if (!ok) tx_error(d, "sampled check: %s", err);
    oc->sampled = r->m;
    oc->checked = ok;
    oc->dtype = dev->dtype;
    res->verified &= !ok || rt_bench_output_ok(oc);
    return ok;
}

/* The unfused plan's sampled check on the fused plan's: its outputs at the elements the host
 * computed for the fused plan (the same program on the same inputs), no re-run and no download
 * of intermediates. False with an error reported. */
static bool sample_reuse(const ir_graph *g, const rt_tensor *outs, uint32_t nout,
                         const sample_ref *r, rt_bench_result *res, tx_diag *d) {
    bool ok = true;
    for (uint32_t k = 0; ok && k < nout; k++) {
        size_t es = (size_t)ir_dtype_size(outs[k].dtype);
        if (!r[k].m || r[k].want.dtype != outs[k].dtype) continue;
        rt_tensor got = {.dtype = outs[k].dtype, .rank = 1, .dim = {r[k].m}};
        ok = rt_tensor_alloc(&got);
        if (!ok) tx_error(d, "sampled check: out of memory for output %u", k);
        for (int64_t j = 0; ok && j < r[k].m; j++)
            memcpy((char *)got.data + j * es, (const char *)outs[k].data + r[k].idx[j] * es, es);
        ok = ok && sample_compare(&outs[k], &r[k], &got, out_prec(g, k, outs[k].dtype),
                                  &res->out[k], res, d);
        rt_tensor_free(&got);
    }
    return ok;
}

/* The sampled check of outputs too large for a full reference (see rt_out_check.sampled):
 * cg_host_sample re-runs SAMPLE_PROGRAMS programs of each kernel that writes an output on the host
 * from the device's own buffers (the host's inputs, which were uploaded, the downloaded outputs,
 * and intermediates downloaded as needed), twice with different poison bytes (written
 * elements are those both runs agree on), and the written output elements are compared with the
 * device's outputs `outs`; with keep (p->noutputs entries, zeroed), the host's values stay there
 * for sample_reuse. */
static bool bench_sample(rt_gpu_exec *x, const rt_gpu_plan *p, const ir_graph *g,
                         const int64_t *syms, const rt_tensor *inputs, const rt_tensor *outs,
                         sample_ref *keep, rt_bench_result *res, tx_diag *d) {
    uint32_t nb = p->nbufs;
    rt_tensor *all = ir_xcalloc(nb + 1, sizeof *all);
    void **bp = ir_xcalloc(nb + 1, sizeof *bp), **s1 = ir_xcalloc(nb + 1, sizeof *s1),
         **s2 = ir_xcalloc(nb + 1, sizeof *s2);
    int64_t *bytes = ir_xcalloc(nb + 1, sizeof *bytes);
    double *kf = ir_xcalloc(p->nkernels + 1, sizeof *kf);
    sample_fetch sf = {x, p, all, false};
    bool ok = rt_cuda_sync(rt_gpu_exec_cuda(x), "the kernels to finish");
    if (!ok) tx_error(d, "%s", rt_gpu_exec_error(x));
    for (uint32_t b = 0; ok && b < nb; b++) bytes[b] = rt_buf_bytes(&p->bufs[b]);
    for (uint32_t k = 0; ok && k < p->noutputs; k++) {
        uint32_t b = rt_gpu_plan_find_buf(p, RT_BUF_OUTPUT, k);
        if (b != UINT32_MAX) bp[b] = outs[k].data; /* already downloaded */
    }
    for (uint32_t k = 0; ok && k < p->ninputs; k++) { /* the bytes uploaded: no download */
        uint32_t b = rt_gpu_plan_find_buf(p, RT_BUF_INPUT, k);
        if (b != UINT32_MAX) bp[b] = inputs[k].data;
    }
    for (uint32_t k = 0; k < p->nkernels; k++) kf[k] = p->kernels[k].flops;
    /* The host side can fail for reasons of its own (a plan whose buffers the host program does not
     * match): then the outputs stay "not compared" and the message goes into the result, not into
     * the run's errors. */
    bool sampled = false;
    if (ok) {
        char *msg = NULL;
        size_t len = 0;
        FILE *mf = open_memstream(&msg, &len);
        tx_diag hd;
        tx_diag_init(&hd, mf ? mf : stderr, "sampled check", NULL, 0);
        sampled = cg_host_sample(g, syms, bp, sample_fetch_buf, &sf, bytes, nb, SAMPLE_PROGRAMS, kf,
                                 SAMPLE_MAX_FLOPS, 0xFF, s1, s2, &hd);
        if (mf) fclose(mf);
        if (sf.failed) {
            tx_error(d, "%s", rt_gpu_exec_error(x));
            ok = false;
        } else if (!sampled && msg && *msg)
            snprintf(res->sample_note, sizeof res->sample_note, "%.*s", (int)strcspn(msg, "\n"),
                     msg);
        else if (!sampled)
            snprintf(res->sample_note, sizeof res->sample_note, "the host re-run failed");
        free(msg);
    }
    for (uint32_t k = 0; ok && sampled && k < p->noutputs; k++) {
        uint32_t b = rt_gpu_plan_find_buf(p, RT_BUF_OUTPUT, k);
        if (b == UINT32_MAX || !s1[b] || !s2[b]) continue;
        rt_tensor got;
        sample_ref r = {0};
        ok = sample_gather(&outs[k], s1[b], s2[b], &got, &r);
        if (!ok) tx_error(d, "sampled check: out of memory for output %u", k);
        if (ok && r.m)
            ok = sample_compare(&outs[k], &r, &got, out_prec(g, k, outs[k].dtype), &res->out[k],
                                res, d);
        rt_tensor_free(&got);
        if (ok && keep) {
            keep[k] = r;
        } else {
            free(r.idx);
            rt_tensor_free(&r.want);
        }
    }
    for (uint32_t b = 0; b < nb; b++) {
        rt_tensor_free(&all[b]);
        free(s1[b]);
        free(s2[b]);
    }
    free(all), free(bp), free(s1), free(s2), free(bytes), free(kf);
    return ok;
}

/* A new execution of p with the inputs uploaded; NULL with an error reported. */
static rt_gpu_exec *plan_exec(rt_cuda *c, const rt_gpu_plan *p, const rt_tensor *inputs,
                              tx_diag *d) {
    char err[512];
    rt_gpu_exec *x = rt_gpu_exec_new(c, p, true);
    if (!x) {
        tx_error(d, "%s", rt_cuda_error(c));
        return NULL;
    }
    if (!rt_gpu_exec_upload(x, inputs, p->ninputs, err, sizeof err)) {
        tx_error(d, "%s", err);
        rt_gpu_exec_free(x);
        return NULL;
    }
    return x;
}

/* Runs the plan loaded in x (inputs on the device) once for verification against `ref` (may be
 * NULL: then the poison check and the sampled check, on the elements of `reuse` when it holds
 * any, else a host re-run that leaves its values in `keep` when given), then times it. The outputs
 * come back into `outs` (p->noutputs tensors, kept allocated between plans: the caller frees). */
static bool bench_plan(rt_cuda *c, rt_gpu_exec *x, const rt_gpu_plan *p, const ir_graph *g,
                       const int64_t *syms, const rt_tensor *inputs, const rt_tensor *ref,
                       const rt_tensor *pref, const drv_bench_opts *o, rt_tensor *outs,
                       sample_ref *keep, const sample_ref *reuse, rt_bench_report *rep,
                       rt_bench_result *res, tx_diag *d) {
    char err[512];
    double t0 = now_us(), gpu_s = 0;
    bool ok = false;
    if (!rt_gpu_exec_poison(x) || !rt_gpu_exec_launch_all(x) ||
        !rt_gpu_exec_download_to(x, outs, p->noutputs))
        goto cuda_fail;
    phase_add(&gpu_s, &t0);
    res->nout = p->noutputs;
    res->out = ir_xcalloc(p->noutputs + 1, sizeof *res->out);
    res->verified = true;
    for (uint32_t k = 0; k < p->noutputs; k++) {
        rt_out_check *oc = &res->out[k];
        oc->dtype = outs[k].dtype;
        oc->poisoned = rt_count_poison(&outs[k]);
        if (ref && !rt_bench_check_output_sum(&outs[k], &ref[k], pref ? &pref[k] : NULL,
                                              out_prec(g, k, outs[k].dtype), drv_out_terms(g, k),
                                              oc, err, sizeof err)) {
            tx_error(d, "output %u: %s", k, err);
            goto done;
        }
        oc->checked = ref != NULL;
        res->verified &= oc->poisoned == 0 && (!ref || rt_bench_output_ok(oc));
    }
    bool reused = false;
    for (uint32_t k = 0; !ref && reuse && k < p->noutputs; k++) reused |= reuse[k].m > 0;
    if (reused && !sample_reuse(g, outs, p->noutputs, reuse, res, d)) goto done;
    if (!ref && !reused && g && !bench_sample(x, p, g, syms, inputs, outs, keep, res, d)) goto done;
    phase_add(&rep->phase_s[RT_PH_VERIFY], &t0);
    ok = rt_bench_time(c, x, p, (int)o->iters, o->budget_s, res);
    phase_add(&rep->phase_s[RT_PH_TIMING], &t0);
    if (!ok) goto cuda_fail;
    goto done;
cuda_fail:
    tx_error(d, "%s", rt_gpu_exec_error(x));
done:
    phase_add(&gpu_s, &t0);
    rep->phase_s[RT_PH_GPU] += gpu_s;
    return ok;
}

/* ---- txc bench ------------------------------------------------------------ */

/* Total elements of the graph's inputs and outputs at bound sizes. */
static double plan_elems(const rt_gpu_plan *p) {
    double e = 0;
    for (uint32_t b = 0; b < p->nbufs; b++)
        if (p->bufs[b].role != RT_BUF_TEMP)
            e += (double)rt_buf_bytes(&p->bufs[b]) / ir_dtype_size((ir_dtype)p->bufs[b].dtype);
    return e;
}

/* Computes the reference outputs with the chosen reference; NULL ref (and
 * true) when the program is too large for either. */
static bool bench_reference(const ir_graph *g, const ir_graph *raw, const rt_gpu_plan *p,
                            const rt_tensor *inputs, rt_tensor **ref, const char **name,
                            tx_diag *d) {
    double flops = 0;
    const char *pick;
    for (uint32_t k = 0; k < p->nkernels; k++)
        flops += p->kernels[k].flops > 0 ? p->kernels[k].flops : 0;
    pick = rt_bench_pick_reference(plan_elems(p), flops);
    *ref = NULL;
    *name =
        "none (too large for a CPU reference; only checked that every output element was written)";
    if (!pick) return true;
    *ref = ir_xcalloc(p->noutputs + 1, sizeof **ref);
    if (strcmp(pick, "ref") == 0 ? rt_interp_run(raw, inputs, *ref, d)
                                 : drv_host_run(g, inputs, *ref, d)) {
        *name = strcmp(pick, "ref") == 0 ? "ref (double-precision interpreter)" : "cpu (host JIT)";
        return true;
    }
    free(*ref);
    *ref = NULL;
    return false;
}

/* Frees n tensors and the array holding them (NULL: nothing). */
static void free_outputs(rt_tensor *t, uint32_t n) {
    for (uint32_t k = 0; t && k < n; k++) rt_tensor_free(&t[k]);
    free(t);
}

/* Plans raw again with --no-fuse (quietly) into a new graph; NULL with an
 * error reported. */
static ir_graph *plan_unfused(const ir_graph *raw, pass_ctx *pc) {
    pass_ctx u = *pc;
    ir_graph *g = ir_graph_clone(raw);
    if (!g) {
        tx_error(pc->diag, "out of memory cloning the graph");
        return NULL;
    }
    u.no_fuse = true;
    u.dump = NULL;
    u.explain = NULL;
    if (!pass_run_pipeline(g, &u)) {
        ir_graph_free(g);
        return NULL;
    }
    return g;
}

/* Measures the device ceilings into rep and writes the calibration file
 * when asked. */
static bool bench_ceilings(rt_cuda *c, const drv_bench_opts *o, rt_bench_report *rep, FILE *out,
                           tx_diag *d) {
    const rt_cuda_info *in = rt_cuda_get_info(c);
    char path[1024], err[1200];
    rt_calib cal;
    if (!rt_measure_copy(c, &rep->copy_GBps) || !rt_measure_launch(c, &rep->launch_us)) {
        tx_error(d, "%s", rt_cuda_error(c));
        return false;
    }
    if (!o->calibrate) return true;
    memset(&cal, 0, sizeof cal);
    snprintf(cal.gpu, sizeof cal.gpu, "%s", in->name);
    rt_gpu_slug(in->name, cal.slug, sizeof cal.slug);
    cal.cc = in->cc;
    cal.sms = in->sms;
    cal.l2_bytes = in->l2_bytes;
    cal.copy_GBps = rep->copy_GBps;
    cal.launch_us = rep->launch_us;
    cal.driver = in->driver_version;
    if (!rt_measure_kernel(c, &cal.kernel_us)) {
        tx_error(d, "%s", rt_cuda_error(c));
        return false;
    }
    if (!calib_micro(c, o->target, &cal, d)) return false;
    if (o->calib_path)
        snprintf(path, sizeof path, "%s", o->calib_path);
    else if (!rt_calib_default_path(in->name, path, sizeof path)) {
        tx_error(d, "no place for the calibration file: set HOME or pass --calib=FILE");
        return false;
    }
    if (!rt_calib_save(path, &cal, err, sizeof err)) {
        tx_error(d, "%s", err);
        return false;
    }
    if (!o->json)
        fprintf(out,
                "calibration written to %s (copy %.0f GB/s, launch %.2f us, one kernel %.2f us, "
                "streamed-row latency %.3f us, bf16 GEMM %.0f TFLOP/s, special functions %.0f "
                "G/s)\n",
                path, cal.copy_GBps, cal.launch_us, cal.kernel_us, cal.mem_latency_us,
                cal.tc_TFLOPs, cal.sfu_Gops);
    return true;
}

/* Compiles the planned graph g for the inputs' sizes and prepares res
 * (kernel rows, the planner's predictions). NULL with an error reported. */
static rt_gpu_plan *bench_prepare(const ir_graph *g, pass_ctx *pc, const rt_tensor *inputs,
                                  const drv_bench_opts *o, rt_bench_result *res, const char *label,
                                  int64_t **symsp, tx_diag *d) {
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    rt_gpu_plan *p = drv_gpu_plan_build(g, o->target, inputs, syms, d);
    double total = p ? plan_predictions(g, pc, syms, p) : -1;
    *symsp = syms;
    if (!p) return NULL;
    rt_bench_result_init(res, p, label);
    res->predicted_us = total;
    return p;
}

/* Verifies and times the fused graph g and, when asked, its --no-fuse
 * plan, against one reference computed once. */
static bool bench_both(rt_cuda *c, const ir_graph *g, const ir_graph *raw, pass_ctx *pc,
                       const rt_tensor *inputs, const drv_bench_opts *o, rt_bench_report *rep,
                       rt_bench_result *fused, rt_bench_result *unfused, tx_diag *d) {
    int64_t *syms = NULL, *usyms = NULL;
    double t0 = now_us();
    rt_gpu_plan *p = bench_prepare(g, pc, inputs, o, fused, "fused", &syms, d), *pu = NULL;
    rt_tensor *ref = NULL;
    ir_graph *ug = NULL;
    const char *refname;
    uint32_t nout = p ? p->noutputs : 0;
    rt_tensor *pref = NULL;
    phase_add(&rep->phase_s[RT_PH_COMPILE], &t0);
    bool ok = p && bench_reference(g, raw, p, inputs, &ref, &refname, d);
    if (ok && ref && refname[0] == 'r') { /* the interpreter: also at the plan's precision */
        pref = ir_xcalloc(nout + 1, sizeof *pref);
        ok = rt_interp_run_plan(g, inputs, pref, d);
    }
    phase_add(&rep->phase_s[RT_PH_REFERENCE], &t0);
    rt_tensor *outs = ir_xcalloc(nout + 1, sizeof *outs);  /* the plans' outputs, reused */
    sample_ref *sref = ir_xcalloc(nout + 1, sizeof *sref); /* the fused plan's sampled values */
    rt_gpu_exec *xf = NULL, *xu = NULL;
    if (ok) {
        snprintf(rep->reference, sizeof rep->reference, "%s", refname);
        ok = (xf = plan_exec(c, p, inputs, d)) != NULL;
        phase_add(&rep->phase_s[RT_PH_GPU], &t0);
        ok = ok &&
             bench_plan(c, xf, p, g, syms, inputs, ref, pref, o, outs, sref, NULL, rep, fused, d);
    }
    t0 = now_us();
    if (ok && !ref && !fused->sample_note[0])
        snprintf(rep->reference, sizeof rep->reference,
                 "sampled: the host JIT re-ran %d programs of each kernel on the GPU's own inputs",
                 SAMPLE_PROGRAMS);
    else if (ok && !ref)
        snprintf(rep->reference, sizeof rep->reference,
                 "none (too large for a CPU reference; the sampled check "
                 "could not run, see the outputs)");
    if (ok && o->compare_unfused) {
        char err[512];
        ok = (ug = plan_unfused(raw, pc)) != NULL &&
             (pu = bench_prepare(ug, pc, inputs, o, unfused, "unfused", &usyms, d)) != NULL;
        phase_add(&rep->phase_s[RT_PH_COMPILE], &t0);
        /* on the fused plan's inputs; when both plans do not fit at once, on a second upload */
        if (ok && !(xu = rt_gpu_exec_new_sharing(c, pu, xf, err, sizeof err))) {
            rt_gpu_exec_free(xf);
            xf = NULL;
            ok = (xu = plan_exec(c, pu, inputs, d)) != NULL;
        }
        phase_add(&rep->phase_s[RT_PH_GPU], &t0);
        ok = ok && bench_plan(c, xu, pu, ug, usyms, inputs, ref, NULL, o, outs, NULL, sref, rep,
                              unfused, d);
        bool reused = false;
        for (uint32_t k = 0; !ref && k < nout; k++) reused |= sref[k].m > 0;
        if (ok && reused)
            snprintf(rep->reference, sizeof rep->reference,
                     "sampled: the host JIT re-ran %d programs of each kernel of the fused plan on "
                     "the GPU's own inputs; the unfused plan's outputs are compared at the same "
                     "elements",
                     SAMPLE_PROGRAMS);
    }
    rt_gpu_exec_free(xu);
    rt_gpu_exec_free(xf);
    free_outputs(outs, nout);
    sample_ref_free(sref, nout);
    free(syms);
    free(usyms);
    free_outputs(ref, nout);
    free_outputs(pref, nout);
    rt_gpu_plan_free(p);
    rt_gpu_plan_free(pu);
    ir_graph_free(ug);
    return ok;
}

/* Runs the host JIT on the inputs, verifies its outputs against the
 * reference interpreter when the program is small enough, and fills res
 * with the median wall time per call (which includes JIT compilation). */
static bool bench_cpu_run(const ir_graph *g, const ir_graph *raw, const rt_tensor *inputs,
                          int iters, rt_bench_report *rep, rt_bench_result *res, tx_diag *d) {
    uint32_t nin = 0, nout = g->nodes[ir_output(g)].nin;
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    rt_tensor *outs = ir_xcalloc(nout + 1, sizeof *outs), *ref = NULL;
    double elems = 0, *t = ir_xcalloc((size_t)iters, sizeof *t);
    char err[256];
    const char *pick;
    bool ok = rt_bind_shapes(g, inputs, syms, d);
    while (nin < g->n && g->nodes[nin].op == IR_OP_INPUT) elems += (double)rt_numel(&inputs[nin++]);
    for (int i = 0; ok && i < iters; i++) {
        double t0 = now_us();
        for (uint32_t k = 0; i && k < nout; k++) rt_tensor_free(&outs[k]);
        ok = drv_host_run(g, inputs, outs, d);
        t[i] = now_us() - t0;
    }
    for (uint32_t k = 0; ok && k < nout; k++) elems += (double)rt_numel(&outs[k]);
    pick = ok ? rt_bench_pick_reference(elems, drv_graph_flops(g, syms)) : NULL;
    snprintf(rep->reference, sizeof rep->reference, "%s",
             pick && !strcmp(pick, "ref") ? "ref (double-precision interpreter)"
                                          : "none (too large for the reference interpreter)");
    rt_tensor *pref = NULL;
    if (ok && pick && !strcmp(pick, "ref")) {
        ref = ir_xcalloc(nout + 1, sizeof *ref);
        pref = ir_xcalloc(nout + 1, sizeof *pref);
        ok = rt_interp_run(raw, inputs, ref, d) && rt_interp_run_plan(g, inputs, pref, d);
    }
    res->nout = nout;
    res->out = ir_xcalloc(nout + 1, sizeof *res->out);
    res->verified = ok;
    for (uint32_t k = 0; ok && k < nout; k++) {
        rt_out_check *oc = &res->out[k];
        oc->dtype = outs[k].dtype;
        oc->checked = ref != NULL;
        if (ref &&
            !rt_bench_check_output_sum(&outs[k], &ref[k], &pref[k], out_prec(g, k, outs[k].dtype),
                                       drv_out_terms(g, k), oc, err, sizeof err)) {
            tx_error(d, "output %u: %s", k, err);
            ok = false;
        }
        res->verified &= !ref || rt_bench_output_ok(oc);
    }
    res->graph_us = ok ? rt_median(t, (size_t)iters) : 0;
    res->iters = iters;
    free_outputs(outs, nout);
    free_outputs(ref, ref ? nout : 0);
    free_outputs(pref, pref ? nout : 0);
    free(syms);
    free(t);
    return ok;
}

/* `txc bench --device=cpu`: the host JIT verified against the reference
 * interpreter and timed by wall clock (no per-kernel figures). */
static bool bench_cpu(const ir_graph *g, const ir_graph *raw, const rt_tensor *inputs,
                      const drv_bench_opts *o, FILE *out, tx_diag *d) {
    rt_bench_report rep;
    rt_bench_result res;
    int iters = o->iters > 0 && (o->iters_given || o->iters < 5) ? (int)o->iters : 5;
    bool ok;
    memset(&rep, 0, sizeof rep);
    memset(&res, 0, sizeof res);
    snprintf(rep.program, sizeof rep.program, "%s", g->name ? g->name : "");
    snprintf(rep.device, sizeof rep.device, "cpu (host JIT)");
    snprintf(res.label, sizeof res.label, "fused");
    res.predicted_us = -1;
    ok = bench_cpu_run(g, raw, inputs, iters, &rep, &res, d);
    if (ok && o->json) {
        rt_bench_print_json(out, &rep, &res, NULL);
    } else if (ok) {
        fprintf(out, "%s on the CPU (host JIT): %s, reference %s\n", rep.program,
                rt_bench_verdict(&res), rep.reference);
        rt_bench_print_verify(out, &res);
        fprintf(out, "wall time per call, JIT compilation included: %.1f us (median of %d%s)\n",
                res.graph_us, iters, o->iters_given ? "" : "; --iters N for more");
    }
    if (ok && !res.verified) {
        tx_error(d, "verification failed: the host JIT's results differ from the reference");
        ok = false;
    }
    rt_bench_result_free(&res);
    return ok;
}

/* Measured time per region (kernels of one region summed; output copies,
 * region -1, left out) into a new array of nregions. */
static double *region_times(const rt_bench_result *res, uint32_t nregions) {
    double *us = ir_xcalloc(nregions + 1, sizeof *us);
    for (uint32_t k = 0; k < res->nkernels; k++)
        if (res->k[k].region >= 0 && (uint32_t)res->k[k].region < nregions)
            us[res->k[k].region] += res->k[k].us;
    return us;
}

/* --svg: the report picture with the measured kernel times beside the
 * predictions (unfused ones when they were timed and plan alike). */
static bool bench_svg(const ir_graph *g, pass_ctx *pc, const drv_bench_opts *o,
                      const rt_bench_report *rep, const rt_bench_result *fused,
                      const rt_bench_result *unfused, tx_diag *d) {
    char label[200], err[1200];
    pass_measured m;
    /* written like every output (runtime/file.c): whole or not at all, a device or FIFO streamed
     * to, never replaced */
    rt_outset *set = rt_outset_new();
    FILE *f = rt_outset_open(set, o->svg_path, err, sizeof err);
    bool ok;
    if (!f) {
        tx_error(d, "--svg: %s", err);
        rt_outset_free(set);
        return false;
    }
    snprintf(label, sizeof label, "measured on %s (median of %d, L2 flushed)", rep->device,
             fused->iters);
    memset(&m, 0, sizeof m);
    m.n = g->nregions;
    m.us = region_times(fused, g->nregions);
    m.label = label;
    if (o->compare_unfused && unfused->nkernels) {
        uint32_t nr = 0;
        for (uint32_t k = 0; k < unfused->nkernels; k++)
            if (unfused->k[k].region >= 0 && (uint32_t)unfused->k[k].region + 1 > nr)
                nr = (uint32_t)unfused->k[k].region + 1;
        m.un_n = nr;
        m.un_us = region_times(unfused, nr);
    }
    ok = pass_report_svg(g, pc, &m, f);
    if (!ok) snprintf(err, sizeof err, "cannot draw the picture");
    ok = ok && rt_outset_commit(set, err, sizeof err);
    rt_outset_free(set);
    free((double *)m.us);
    free((double *)m.un_us);
    if (!ok) tx_error(d, "--svg %s: %s", o->svg_path, err);
    return ok;
}

bool drv_bench(const ir_graph *g, const ir_graph *raw, pass_ctx *pc, const rt_tensor *inputs,
               const drv_bench_opts *opt, FILE *out, tx_diag *d) {
    drv_bench_opts oo = *opt;
    const drv_bench_opts *o = &oo;
    char err[512];
    rt_bench_report rep;
    rt_bench_result fused, unfused;
    rt_cuda *c;
    bool ok;
    double t0 = now_us(), t_start = t0;
    if (o->device && strcmp(o->device, "cpu") == 0 && o->svg_path) {
        tx_error(
            d,
            "txc bench --svg draws GPU kernel times; use --device=gpu (or txc FILE.tx --emit=svg)");
        return false;
    }
    if (o->device && strcmp(o->device, "cpu") == 0) return bench_cpu(g, raw, inputs, o, out, d);
    if (o->device && strcmp(o->device, "gpu") != 0) {
        tx_error(d,
                 "txc bench --device=%s: the reference is what bench verifies against; use "
                 "--device=gpu or "
                 "--device=cpu",
                 o->device);
        return false;
    }
    if (!(c = o->cuda ? o->cuda : rt_cuda_new(err, sizeof err))) {
        tx_error(d, "%s", err);
        return false;
    }
    if (oo.target == DRV_TARGET_DEVICE) oo.target = drv_target_for_cc(rt_cuda_get_info(c)->cc);
    memset(&rep, 0, sizeof rep);
    memset(&fused, 0, sizeof fused);
    memset(&unfused, 0, sizeof unfused);
    snprintf(rep.program, sizeof rep.program, "%s", g->name ? g->name : "");
    snprintf(rep.device, sizeof rep.device, "%s", rt_cuda_get_info(c)->name);
    rep.cc = rt_cuda_get_info(c)->cc;
    ok = bench_ceilings(c, o, &rep, out, d);
    phase_add(&rep.phase_s[RT_PH_GPU], &t0);
    ok = ok && bench_both(c, g, raw, pc, inputs, o, &rep, &fused, &unfused, d);
    rep.phase_s[RT_PH_INPUTS] = o->inputs_s;
    rep.total_s = o->inputs_s + (now_us() - t_start) / 1e6;
    if (ok && o->json) {
        rt_bench_print_json(out, &rep, &fused, o->compare_unfused ? &unfused : NULL);
    } else if (ok) {
        fprintf(out, "%s on %s (sm_%d): copy %.0f GB/s, launch %.2f us (measured)\n", rep.program,
                rep.device, rep.cc, rep.copy_GBps, rep.launch_us);
        rt_bench_print_text(out, &rep, &fused);
        if (o->compare_unfused) {
            rt_bench_print_text(out, &rep, &unfused);
            fprintf(out, "speed-up of fusion: %.2fx (%u kernels -> %u)\n",
                    fused.graph_us > 0 ? unfused.graph_us / fused.graph_us : 0, unfused.nkernels,
                    fused.nkernels);
        }
    }
    if (ok && !o->json) rt_bench_print_phases(out, &rep);
    if (ok && o->svg_path) ok = bench_svg(g, pc, o, &rep, &fused, &unfused, d);
    if (ok && (!fused.verified || (o->compare_unfused && !unfused.verified))) {
        tx_error(d, "verification failed: the GPU results differ from the reference");
        ok = false;
    }
    rt_bench_result_free(&fused);
    rt_bench_result_free(&unfused);
    if (c != o->cuda) rt_cuda_free(c);
    return ok;
}
