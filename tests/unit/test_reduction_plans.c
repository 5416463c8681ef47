/* test_reduction_plans.c - the reduction emitter honours the planner's
 * strategies: with a small SRAM budget rows of a few thousand f32 are
 * planned `online` (softmax, log_softmax, logsumexp, layernorm, rmsnorm)
 * or `multipass` (chains without a streaming form); the host JIT must
 * agree with the reference interpreter (f32 1e-4 + 1e-4|ref|, f16 1e-2 +
 * 1e-2|ref|, NaN matches NaN, infinities exactly) on random rows and on
 * rows holding -inf, only -inf, NaN, +inf and huge values, for row lengths
 * that are not a multiple of the vector width and for a row length bound
 * only at run time. The HBM passes are counted in the sm_90 PTX (compiled
 * for an unbound row length, where each pass over the row is one load
 * site of the row input) and must equal the region's `passes`; the PTX
 * must assemble with ptxas when the CUDA toolkit is installed. Under the
 * default budget rows of 6000-20000 elements are planned onchip and staged
 * in shared memory (one HBM load site, shared memory within sram_bytes);
 * a row whose staged value would also be read at another index is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include <cmocka.h>

#include "testkit.h"

#include "driver/driver.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

#define BUDGET 8192 /* bytes: a row of 5000 f32 (20000 B) does not fit on chip */

static const char *SOFTMAX = "fn f(x: f32[M, N]) -> f32[M, N] { return softmax(x, axis=-1) }\n";
static const char *LOGSOFTMAX =
    "fn f(x: f32[M, N]) -> f32[M, N] { return log_softmax(x, axis=-1) }\n";
static const char *LOGSUMEXP = "fn f(x: f32[M, N]) -> f32[M, 1] {\n"
                               "  m = max(x, axis=-1, keepdim=true)\n"
                               "  return m + log(sum(exp(x - m), axis=-1, keepdim=true))\n}\n";
static const char *LAYERNORM =
    "fn f(x: f32[M, N], w: f32[N], b: f32[N]) -> f32[M, N] { return layernorm(x, w, b) }\n";
static const char *NORMALIZE =
    "fn f(x: f32[M, N]) -> f32[M, N] {\n" /* layernorm without w, b: x is the only row input */
    "  mu = mean(x, axis=-1, keepdim=true)\n"
    "  d = x - mu\n"
    "  return d * rsqrt(mean(d ** 2, axis=-1, keepdim=true) + 1e-5)\n}\n";
static const char *RMSNORM = "fn f(x: f32[M, N]) -> f32[M, N] { return x * rsqrt(mean(x * x, "
                             "axis=-1, keepdim=true) + 1e-6) }\n";
static const char *MULTI2 =
    "fn f(x: f32[M, N]) -> f32[M, N] {\n" /* sum(abs(d)) has no streaming form */
    "  d = x - max(x, axis=-1, keepdim=true)\n"
    "  return d / sum(abs(d), axis=-1, keepdim=true)\n}\n";
static const char *MULTI3 = "fn f(x: f32[M, N]) -> f32[M, N] {\n" /* three dependent stages */
                            "  d = x - mean(x, axis=-1, keepdim=true)\n"
                            "  e = d - mean(d, axis=-1, keepdim=true)\n"
                            "  return e / sum(e * e, axis=-1, keepdim=true)\n}\n";
static const char *STATS =
    "fn f(x: f32[M, N]) -> (f32[M], f32[M], f32[M, N]) {\n" /* two reductions of one level, a
                                                               prologue output */
    "  y = x * 2\n"
    "  return max(y, axis=-1), sum(x, axis=-1), y\n}\n";
static const char *GCLIP = "fn f(g: f32[M, N]) -> (f32[M, N], f32[]) {\n" /* a global norm */
                           "  nrm = sqrt(sum(g * g))\n"
                           "  return g * minimum(1.0 / (nrm + 1e-6), 1.0), nrm\n}\n";
static const char *MAXSCALE =
    "fn f(x: bf16[M, N]) -> (bf16[M, N], f32[M, 1]) {\n" /* one max, a bf16 epilogue */
    "  m = max(abs(f32(x)), axis=-1, keepdim=true)\n"
    "  return bf16(f32(x) / m), m\n}\n";
static const char *SOFTMAX_COLS = "fn f(x: f32[M, N]) -> f32[M, N] { return softmax(x, axis=0) }\n";
static const char *SOFTMAX_F16 = "fn f(x: f16[M, N]) -> f16[M, N] { return softmax(x, axis=-1) }\n";
static const char *LAYERNORM_BF16 =
    "fn f(x: bf16[M, N], w: bf16[N], b: bf16[N]) -> bf16[M, N] { return layernorm(x, w, b) }\n";
static const char *SUMSCALE =
    "fn f(x: f32[M, N]) -> f32[M, N] { return x / sum(x, axis=-1, keepdim=true) }\n";
static const char *RESNORM =
    "fn f(x: f32[M, N], r: f32[M, N], w: f32[N], b: f32[N]) -> (f32[M, N], f32[M, N]) {\n"
    "  h = x + r\n" /* staged: h (one word per element), returned from the first pass */
    "  return layernorm(h, w, b), h\n}\n";
static const char *SLICED =
    "fn f(x: f32[M, N]) -> f32[M, N] {\n" /* x also read at (row, 0): not staged */
    "  e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "  return e / sum(e, axis=-1, keepdim=true) + slice(x, axis=1, start=0, stop=1)\n}\n";
static const char *RMSNORM_BF16 =
    "fn f(x: bf16[M, N], w: bf16[N]) -> bf16[M, N] {\n"
    "  y = f32(x)\n"
    "  return bf16(y * rsqrt(mean(y * y, axis=-1, keepdim=true) + 1e-6)) * w\n}\n";

/* Compiles src with the given -D bindings and plans it against `budget`;
 * *raw (may be NULL) gets the unplanned copy. */
static ir_graph *plan_for(const char *src, const fe_define *defs, unsigned ndefs, int64_t budget,
                          ir_graph **raw, const char *gpu) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    fe_options fo = {.entry = NULL, .defines = defs, .ndefines = ndefs};
    ir_graph *g = fe_compile("test.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    if (raw) *raw = ir_graph_clone(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find(gpu), .sram_budget = budget};
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* plan_for the H200 (the default GPU of the cost model). */
static ir_graph *plan(const char *src, const fe_define *defs, unsigned ndefs, int64_t budget,
                      ir_graph **raw) {
    return plan_for(src, defs, ndefs, budget, raw, "h200");
}

/* The program of planned graph g (of source src) for target t; errors are reported on stderr
 * and fail the test. */
static cg_program *compile(const ir_graph *g, const char *src, cg_target t) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    cg_program *p = cg_program_new(g, t, &d);
    assert_non_null(p);
    return p;
}

/* The graph's single reduction region (fails the test when there is not exactly one). */
static const ir_region *the_reduction(const ir_graph *g) {
    const ir_region *r = NULL;
    for (unsigned i = 0; i < g->nregions; i++)
        if (g->regions[i].kind == IR_RK_REDUCTION) {
            assert_null(r);
            r = &g->regions[i];
        }
    assert_non_null(r);
    return r;
}

/* Input filler: writes element i of input `in` (row length n). */
typedef double (*fill_fn)(unsigned in, int64_t i, int64_t n);

/* Runs the planned graph g (raw: its unplanned copy) on the host JIT and in
 * the interpreter with M rows of length N (inputs random, or from `fill`
 * when given) and compares every output. */
static void run_compare(const ir_graph *g, const ir_graph *raw, const char *src, int64_t M,
                        int64_t N, fill_fn fill, uint64_t seed) {
    unsigned nin = 0;
    while (nin < raw->n && raw->nodes[nin].op == IR_OP_INPUT) nin++;
    rt_tensor *in = calloc(nin + 1, sizeof *in);
    for (unsigned i = 0; i < nin; i++) {
        const ir_node *n = &raw->nodes[i];
        in[i].dtype = (ir_dtype)n->dtype;
        in[i].rank = n->shape.rank;
        in[i].dim[0] = n->shape.rank == 2 ? M : N;
        if (n->shape.rank == 2) in[i].dim[1] = N;
        assert_true(rt_tensor_alloc(&in[i]));
        rt_fill_random(&in[i], seed, i);
        if (fill)
            for (int64_t e = 0; e < rt_numel(&in[i]); e++) rt_set(&in[i], e, fill(i, e, N));
    }
    unsigned nout = raw->nodes[ir_output(raw)].nin;
    rt_tensor *a = calloc(nout + 1, sizeof *a), *b = calloc(nout + 1, sizeof *b);
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    assert_true(drv_host_run(g, in, a, &d));
    assert_true(rt_interp_run(raw, in, b, &d));
    for (unsigned k = 0; k < nout; k++) {
        int64_t n = rt_numel(&b[k]), bad = 0, first = -1;
        assert_int_equal(rt_numel(&a[k]), n);
        for (int64_t i = 0; i < n; i++)
            if (!tk_close_enough(b[k].dtype, rt_get(&a[k], i), rt_get(&b[k], i))) {
                if (first < 0) first = i;
                bad++;
            }
        if (bad)
            fprintf(
                stderr,
                "%soutput %u, %lld x %lld: %lld of %lld differ; first at %lld: jit %.9g ref %.9g\n",
                src, k, (long long)M, (long long)N, (long long)bad, (long long)n, (long long)first,
                rt_get(&a[k], first), rt_get(&b[k], first));
        assert_int_equal(bad, 0);
        rt_tensor_free(&a[k]);
        rt_tensor_free(&b[k]);
    }
    for (unsigned i = 0; i < nin; i++) rt_tensor_free(&in[i]);
    free(in);
    free(a);
    free(b);
}

/* Plans src with M and N bound, checks the strategy and passes of its
 * reduction region, and compares the host JIT with the interpreter. */
static void check_plan(const char *src, int64_t M, int64_t N, int strategy, int passes,
                       fill_fn fill, uint64_t seed) {
    fe_define defs[2] = {{"M", M}, {"N", N}};
    ir_graph *raw;
    ir_graph *g = plan(src, defs, 2, BUDGET, &raw);
    const ir_region *r = the_reduction(g);
    if (r->strategy != strategy || r->passes != passes)
        fprintf(stderr, "%splanned strategy %d passes %d, expected %d, %d\n", src, r->strategy,
                r->passes, strategy, passes);
    assert_int_equal(r->strategy, strategy);
    assert_int_equal(r->passes, passes);
    run_compare(g, raw, src, M, N, fill, seed);
    ir_graph_free(g);
    ir_graph_free(raw);
}

static void test_online_plans(void **s) {
    (void)s;
    check_plan(SOFTMAX, 3, 5000, IR_RED_ONLINE, 2, NULL, 1);
    check_plan(SOFTMAX, 3, 4999, IR_RED_ONLINE, 2, NULL, 2);
    check_plan(LOGSOFTMAX, 3, 5001, IR_RED_ONLINE, 2, NULL, 3);
    check_plan(LOGSUMEXP, 3, 5000, IR_RED_ONLINE, 1, NULL,
               4); /* per-row result only: no epilogue pass */
    check_plan(LAYERNORM, 3, 5000, IR_RED_ONLINE, 2, NULL, 5);
    check_plan(NORMALIZE, 3, 4997, IR_RED_ONLINE, 2, NULL, 6);
    check_plan(RMSNORM, 3, 5000, IR_RED_ONLINE, 2, NULL, 7);
    check_plan(SOFTMAX_F16, 3, 5000, IR_RED_ONLINE, 2, NULL, 8);
    check_plan(LAYERNORM_BF16, 2, 6000, IR_RED_ONLINE, 2, NULL, 9);
    check_plan(SOFTMAX_COLS, 5000, 3, IR_RED_ONLINE, 2, NULL, 15); /* column mode: rows strided */
    /* Streaming loops take vector groups when the row length allows (svec in reduction.c): 4 f32
     * at N=5000 above, 2 at N=5002, 8 bf16 at N=6000; a row-shaped output stored by the first
     * pass (RESNORM's h) goes out as vector stores. */
    check_plan(SOFTMAX, 3, 5002, IR_RED_ONLINE, 2, NULL, 16);
    check_plan(RESNORM, 3, 5000, IR_RED_ONLINE, 2, NULL, 17);
    check_plan(RESNORM, 3, 4998, IR_RED_ONLINE, 2, NULL, 18);
    check_plan(RMSNORM_BF16, 2, 6000, IR_RED_ONLINE, 2, NULL, 19);
}

static void test_multipass_plans(void **s) {
    (void)s;
    check_plan(MULTI2, 3, 5000, IR_RED_MULTIPASS, 3, NULL, 10);
    check_plan(MULTI3, 3, 4999, IR_RED_MULTIPASS, 4, NULL, 11);
}

/* A layernorm whose rows sit away from zero (mean ~30, spread ~0.7): the
 * one-pass variance must not cancel (sum x^2 - n mean^2 in f32 would be off
 * by ~0.2%, 10x the tolerance). Larger offsets would test the f32 row sum
 * of the mean (the reference accumulates in double), not the variance. */
static double far_rows(unsigned in, int64_t i, int64_t n) {
    if (in != 0) return 1.0 + 0.001 * (double)(i % 7);
    return 30.0 + sin((double)i * 0.37) + (double)(i / n);
}

/* Rows whose first element is an outlier (1e4 among values of size 1). */
static double outlier_rows(unsigned in, int64_t i, int64_t n) {
    if (in != 0) return 1.0;
    return i % n == 0 ? 1e4 : sin((double)i * 0.91);
}

static void test_variance_far_from_zero(void **s) {
    (void)s;
    check_plan(LAYERNORM, 3, 2500, IR_RED_ONLINE, 2, far_rows, 12);
    check_plan(NORMALIZE, 3, 2500, IR_RED_ONLINE, 2, far_rows, 13);
    check_plan(LAYERNORM, 3, 2500, IR_RED_ONLINE, 2, outlier_rows, 14);
}

/* Rows of special values (row index = i / n): 0: random with -inf every 7th
 * element; 1: only -inf; 2: a NaN in the middle; 3: huge values (+-3e38,
 * 1e30); 4: a +inf; 5: -inf first then finite values; 6: random. */
static double special_rows(unsigned in, int64_t i, int64_t n) {
    (void)in;
    int64_t row = i / n, e = i % n;
    double v = sin((double)i * 1.7) * 10.0;
    switch (row) {
        case 0: return e % 7 == 3 ? -INFINITY : v;
        case 1: return -INFINITY;
        case 2: return e == n / 2 ? NAN : v;
        case 3: return e % 5 == 0 ? 3e38 : e % 5 == 1 ? -3e38 : e % 5 == 2 ? 1e30 : v;
        case 4: return e == n - 2 ? INFINITY : v;
        case 5: return e < n / 3 ? -INFINITY : v;
        default: return v;
    }
}

static void test_special_values(void **s) {
    (void)s;
    const char *progs[] = {SOFTMAX, LOGSOFTMAX, LOGSUMEXP};
    int passes[] = {2, 2, 1};
    for (unsigned p = 0; p < 3; p++) {
        check_plan(progs[p], 7, 3001, IR_RED_ONLINE, passes[p], special_rows, 20 + p);
        check_plan(progs[p], 7, 3, IR_RED_ONCHIP, 1, special_rows,
                   30 + p); /* short rows: held on chip */
    }
}

/* One compiled graph (row length unbound: `reduction.symbolic`, online)
 * run at several lengths, including 1 and lengths that are not a multiple
 * of any vector width. */
static void test_symbolic_rows(void **s) {
    (void)s;
    const char *progs[] = {SOFTMAX, LAYERNORM};
    for (unsigned p = 0; p < 2; p++) {
        fe_define defs[1] = {{"M", 7}};
        ir_graph *raw;
        ir_graph *g = plan(progs[p], defs, 1, 0, &raw);
        const ir_region *r = the_reduction(g);
        assert_int_equal(r->strategy, IR_RED_ONLINE);
        assert_int_equal(r->passes, 2);
        int64_t lens[] = {1, 7, 33, 4999};
        for (unsigned i = 0; i < 4; i++) run_compare(g, raw, progs[p], 7, lens[i], NULL, 40 + i);
        for (unsigned i = 0; i < 2; i++)
            run_compare(g, raw, progs[p], 7, 3001, special_rows, 50 + i);
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

/* Two independent reductions of one level and a returned prologue value:
 * one pass (the prologue output is stored during it). */
static void test_one_level_one_pass(void **s) {
    (void)s;
    check_plan(STATS, 3, 5000, IR_RED_ONCHIP, 1, NULL, 60);
}

/* Load sites of global memory in PTX text. */
static int count_global_loads(const char *ptx) {
    int n = 0;
    for (const char *p = ptx; (p = strstr(p, "ld.global")) != NULL; p++) n++;
    return n;
}

/* sm_90 PTX of src with only M bound: the region's passes equal the load
 * sites of x (`extra`: other load sites: row-broadcast operands, the
 * exact variance pass taken only for rows whose f32 statistics overflow); assembles with ptxas when
 * installed. */
static void check_ptx(const char *src, int passes, int extra, bool *assembled) {
    fe_define defs[1] = {{"M", 3}};
    ir_graph *g = plan(src, defs, 1, BUDGET, NULL);
    assert_int_equal(the_reduction(g)->passes, passes);
    cg_program *p = compile(g, src, CG_SM90);
    size_t len = 0;
    const char *ptx = cg_program_ptx(p, &len);
    assert_non_null(ptx);
    int loads = count_global_loads(ptx);
    if (loads != passes + extra)
        fprintf(stderr, "%s%d global load sites, expected %d + %d\n", src, loads, passes, extra);
    assert_int_equal(loads, passes + extra);
    int rc = tk_ptxas(ptx, len, "sm_90", NULL);
    if (rc >= 0) {
        assert_int_equal(rc, 0);
        *assembled = true;
    }
    cg_program_free(p);
    ir_graph_free(g);
}

static void test_ptx_passes(void **s) {
    (void)s;
    bool assembled = false;
    check_ptx(SOFTMAX, 2, 0, &assembled);
    check_ptx(LOGSOFTMAX, 2, 0, &assembled);
    check_ptx(LOGSUMEXP, 1, 0, &assembled);
    check_ptx(NORMALIZE, 2, 1,
              &assembled); /* + the exact variance pass, taken only for rows that overflow f32 */
    check_ptx(LAYERNORM, 2, 3, &assembled); /* the same + w, b */
    check_ptx(RMSNORM, 2, 0, &assembled);
    check_ptx(MULTI2, 3, 0, &assembled);
    check_ptx(MULTI3, 4, 0, &assembled);
    check_ptx(SOFTMAX_F16, 2, 0, &assembled);
    if (!assembled)
        printf("test_ptx_passes: /usr/local/cuda/bin/ptxas not found; PTX not assembled\n");
}

/* Rows planned onchip under the default budget of a GPU without clusters (the A100: on the H200
 * such rows are cluster rows) but too long for the
 * register hold (more than 16 elements per thread of 1024) are staged in shared
 * memory: the sm_90 PTX reads each row input from HBM at one load site
 * (`extra`: row-broadcast operands such as w, b; row inputs beyond the
 * first, e.g. a residual), declares the dynamic shared array, records
 * its bytes in the manifest, and static (ptxas -v) plus dynamic shared
 * memory stays within the plan's sram_bytes; the host JIT (the same pass
 * structure over a private array) agrees with the interpreter. */
static void check_staged(const char *src, int64_t M, int64_t N, int extra, fill_fn fill,
                         uint64_t seed, bool *assembled) {
    fe_define defs[2] = {{"M", M}, {"N", N}};
    ir_graph *raw;
    ir_graph *g = plan_for(src, defs, 2, 0, &raw, "a100");
    const ir_region *r = the_reduction(g);
    assert_int_equal(r->strategy, IR_RED_ONCHIP);
    assert_int_equal(r->passes, 1);
    assert_int_equal(r->red_extent, N);
    run_compare(g, raw, src, M, N, fill, seed);
    cg_program *p = compile(g, src, CG_SM90);
    size_t len = 0;
    const char *ptx = cg_program_ptx(p, &len);
    assert_non_null(ptx);
    int loads = count_global_loads(ptx);
    if (loads != 1 + extra)
        fprintf(stderr, "%s(N=%lld) %d global load sites, expected 1 + %d\n", src, (long long)N,
                loads, extra);
    assert_int_equal(loads, 1 + extra);
    assert_non_null(strstr(ptx, ".extern .shared .align 16 .b8 tx_red_dyn_smem[]"));
    const cg_kernel *k = NULL;
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        if (cg_program_kernel(p, i)->region >= 0 &&
            g->regions[cg_program_kernel(p, i)->region].kind == IR_RK_REDUCTION)
            k = cg_program_kernel(p, i);
    assert_non_null(k);
    assert_true(k->smem_bytes >= 4 * (unsigned)N); /* at least one staged word per element */
    assert_true((int64_t)k->smem_bytes <= r->sram_bytes);
    char log[] = "/tmp/tx_redstage_log_XXXXXX";
    int lfd = mkstemp(log);
    assert_true(lfd >= 0);
    close(lfd);
    int rc = tk_ptxas(ptx, len, "sm_90", log);
    if (rc < 0) {
        remove(log);
    } else {
        FILE *lf = fopen(log, "r");
        assert_non_null(lf);
        char line[512];
        long stat = 0;
        while (fgets(line, sizeof line, lf)) {
            char *q = strstr(line, " bytes smem");
            if (!q) continue;
            while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
            stat += strtol(q, NULL, 10);
        }
        fclose(lf);
        remove(log);
        assert_int_equal(rc, 0);
        if (stat + (int64_t)k->smem_bytes > r->sram_bytes)
            fprintf(stderr, "%sstatic %ld + dynamic %u bytes of shared memory > plan %lld\n", src,
                    stat, k->smem_bytes, (long long)r->sram_bytes);
        assert_true(stat + (int64_t)k->smem_bytes <= r->sram_bytes);
        *assembled = true;
    }
    cg_program_free(p);
    ir_graph_free(g);
    ir_graph_free(raw);
}

static void test_staged_rows(void **s) {
    (void)s;
    bool assembled = false;
    check_staged(SOFTMAX, 3, 20000, 0, NULL, 70, &assembled);
    check_staged(SOFTMAX, 3, 16411, 0, NULL, 71, &assembled); /* odd length */
    check_staged(LOGSOFTMAX, 2, 16577, 0, NULL, 72, &assembled);
    check_staged(LAYERNORM, 3, 16391, 2, NULL, 73, &assembled); /* + w, b in the epilogue */
    check_staged(LAYERNORM, 3, 4100 * 4, 2, far_rows, 74, &assembled);
    check_staged(NORMALIZE, 2, 20000, 0, NULL, 75, &assembled);
    check_staged(RMSNORM, 3, 16385, 0, NULL, 76, &assembled);
    check_staged(SUMSCALE, 3, 17001, 0, NULL, 77, &assembled);
    check_staged(MULTI2, 2, 19999, 0, NULL, 78, &assembled); /* 2 levels, no streaming form */
    check_staged(MULTI3, 2, 16407, 0, NULL, 79, &assembled); /* 3 levels */
    /* (A residual norm holds x and r: past the register hold it leaves 1 block per SM: online.) */
    check_staged(SOFTMAX_F16, 3, 16393, 0, NULL, 81, &assembled);
    check_staged(LAYERNORM_BF16, 2, 20000, 2, NULL, 82, &assembled);
    check_staged(RMSNORM_BF16, 3, 16400, 1, NULL, 83, &assembled);
    check_staged(SOFTMAX, 7, 16411, 0, special_rows, 84, &assembled);
    check_staged(LOGSOFTMAX, 7, 16411, 0, special_rows, 85, &assembled);
    if (!assembled)
        printf("test_staged_rows: /usr/local/cuda/bin/ptxas not found; PTX not assembled\n");
}

/* An onchip row whose frontier value is also read at another index (a
 * slice of x in the epilogue) is not staged (a substitution is the value at
 * the pass's element only): streamed on the GPU (no dynamic shared array,
 * more load sites), and correct on the host, whose one thread would
 * otherwise stage any row longer than 16 elements. */
static void test_staging_refused(void **s) {
    (void)s;
    fe_define defs[2] = {{"M", 3}, {"N", 6001}};
    ir_graph *raw;
    ir_graph *g = plan(SLICED, defs, 2, 0, &raw);
    assert_int_equal(the_reduction(g)->strategy, IR_RED_ONCHIP);
    run_compare(g, raw, SLICED, 3, 6001, NULL, 90);
    cg_program *p = compile(g, SLICED, CG_SM90);
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(ptx);
    assert_null(strstr(ptx, "tx_red_dyn_smem"));
    assert_true(count_global_loads(ptx) > 1);
    cg_program_free(p);
    ir_graph_free(g);
    ir_graph_free(raw);
}

/* ---- schedules chosen from the shape (docs/cost-model.md "Schedules") ---- */

static const char *COLSUM = "fn f(x: f32[M, N]) -> f32[N] { return sum(x, axis=0) }\n";
static const char *COLMAX =
    "fn f(x: f32[M, N]) -> f32[1, N] { return max(x, axis=0, keepdim=true) }\n";
static const char *COLMEAN_BF16 = "fn f(x: bf16[M, N]) -> bf16[N] { return mean(x, axis=0) }\n";
static const char *COLCENTER =
    "fn f(x: f32[M, N]) -> (f32[M, N], f32[M, N]) {\n" /* a prologue and an epilogue output */
    "  h = x * 2\n  return h, h - mean(h, axis=0, keepdim=true)\n}\n";
static const char *ROWMAX = "fn f(x: f32[M, N]) -> f32[M] { return max(x, axis=-1) }\n";

/* The planned column block (tile[1] = C, tile[2] = R), threads, rows, chunks of the reduced
 * axis (splits: [reduction.column_blocks], 0 otherwise) and kept elements per thread (the
 * schedule's vec) of src at M x N. */
static void check_split(const char *src, int64_t M, int64_t N, int64_t c, int64_t rs,
                        unsigned threads, int64_t rows, unsigned splits, int vec) {
    fe_define defs[2] = {{"M", M}, {"N", N}};
    ir_graph *g = plan(src, defs, 2, 0, NULL);
    const ir_region *r = the_reduction(g);
    int v = r->sched.id == PASS_SCH_REDUCTION_COLUMN_BLOCKS  ? r->sched.p[3]
            : r->sched.id == PASS_SCH_REDUCTION_COLUMN_SPLIT ? r->sched.p[2]
                                                             : 1;
    if (r->tile[1] != c || r->tile[2] != rs || r->threads != threads || r->rows != rows ||
        r->splits != splits || v != vec)
        fprintf(stderr,
                "%s%lld x %lld: block %lld x %lld, %u threads, rows %lld, splits %u, vec %d; "
                "expected %lld x %lld, %u, %lld, %u, %d\n",
                src, (long long)M, (long long)N, (long long)r->tile[1], (long long)r->tile[2],
                r->threads, (long long)r->rows, r->splits, v, (long long)c, (long long)rs, threads,
                (long long)rows, splits, vec);
    assert_int_equal(r->tile[1], c);
    assert_int_equal(r->tile[2], rs);
    assert_int_equal(r->threads, threads);
    assert_int_equal(r->rows, rows);
    assert_int_equal(r->splits, splits);
    assert_int_equal(v, vec);
    if (rs > 1 && !(r->red_axes & 2u)) /* a column split (2-D: axis 1 kept) */
        assert_int_equal(r->sram_bytes, 4 * c * rs * (vec > 1 ? vec + 1 : 1));
    ir_graph_free(g);
}
static void check_block(const char *src, int64_t M, int64_t N, int64_t c, int64_t rs,
                        unsigned threads, int64_t rows, int vec) {
    check_split(src, M, N, c, rs, threads, rows, 0, vec);
}

/* Column split: vec = 16 bytes of kept elements per thread when the innermost extent fills a
 * warp of such vectors (512 B) and vec divides it, else 1; C shrinks until the grid of C x vec
 * tiles has 2 blocks per SM (not below one 32-byte sector for scalar columns, one 128-byte line
 * per slice for vectors), R = 512 / C until the slices get fewer than 8 elements (vectors need
 * R >= vec, else one column per thread); one thread per column otherwise. When even the
 * narrowest C leaves fewer than 2 x 132 blocks, column blocks: C = a warp of vectors (32) or one
 * 128-byte line of scalars, R = 512 / C, the reduced axis in ceil(2 x 132 / tiles) chunks (at
 * most 16 R, at most len / (16 R)). */
static void test_column_blocks(void **s) {
    (void)s;
    check_split(COLSUM, 65536, 1024, 32, 16, 512, 1, 33, 4); /* 8 tiles of 32 x 4 -> x 33 */
    check_block(COLSUM, 4096, 65536, 32, 16, 512, 1, 4);     /* plenty of columns: 512 tiles */
    check_split(COLMEAN_BF16, 32768, 4096, 32, 16, 512, 1, 16, 8); /* bf16: 8 per thread; 2 per
                                                                      SM at 64 registers: 16 x 16 */
    check_split(COLSUM, 1048576, 16, 4, 128, 512, 1, 264, 4); /* rows of 16: 4 x v4, 264 chunks */
    check_split(COLMAX, 513, 37, 32, 16, 512, 1, 2, 1);       /* two chunks of 16 x 16 groups */
    check_block(COLMAX, 511, 37, 8, 32, 256, 1, 1);           /* one chunk: the column split */
    check_block(COLCENTER, 65536, 1000, 8, 64, 512, 1, 1);    /* writes the domain: one kernel */
    check_block(COLSUM, 40, 65536, 32, 4, 128, 1, 4);         /* 40 rows: 4 slices of 10 */
    check_block(COLSUM, 20, 65536, 128, 2, 256, 1, 1); /* 20 rows: 2 slices, fewer than vec */
    check_block(COLSUM, 12, 65536, 128, 1, 128, 1, 1); /* 12 rows: no split (slices under 8) */
    { /* two stages over 1024 columns: [reduction.column_stages] keeps them apart (the max,
       * the sum of exponentials, the normalised columns), each splitting its reduced axis */
        fe_define defs[2] = {{"M", 65536}, {"N", 1024}};
        ir_graph *g = plan(SOFTMAX_COLS, defs, 2, 0, NULL);
        unsigned nred = 0;
        for (unsigned i = 0; i < g->nregions; i++) nred += g->regions[i].kind == IR_RK_REDUCTION;
        assert_int_equal(nred, 2);
        ir_graph_free(g);
    }
}

static const char *SOFTMAX_BF16 =
    "fn f(x: bf16[M, N]) -> bf16[M, N] { return softmax(x, axis=-1) }\n";
static const char *LOGSOFTMAX_BF16 =
    "fn f(x: bf16[M, N]) -> bf16[M, N] { return log_softmax(x, axis=-1) }\n";
static const char *ROWSUM = "fn f(x: f32[M, N]) -> f32[M] { return sum(x, axis=-1) }\n";
static const char *LSE = "fn f(x: f32[M, N]) -> f32[M, 1] {\n  m = max(x, axis=-1, keepdim=true)\n"
                         "  return log(sum(exp(x - m), axis=-1, keepdim=true)) + m\n}\n";

/* Row blocks (tile[1] = lanes per row, threads, rows per block) by rule, at each boundary. */
static void test_row_blocks(void **s) {
    (void)s;
    check_block(ROWMAX, 1048576, 64, 16, 0, 256, 16, 1);      /* subwarp: 16 lanes x v4 */
    check_block(ROWMAX, 1000, 65, 32, 0, 256, 8, 1);          /* 65 scalars: warp rows */
    check_block(ROWMAX, 1000, 7, 8, 0, 256, 32, 1);           /* 7 scalars: 8 lanes */
    check_block(ROWMAX, 1000, 1, 1, 0, 256, 256, 1);          /* a row per thread */
    check_block(ROWMAX, 1000, 1024, 32, 0, 256, 8, 1);        /* 32 per lane: the warp hold */
    check_block(ROWMAX, 1000, 1025, 224, 0, 224, 1, 1);       /* odd: 5 per thread of 205 -> row */
    check_block(SOFTMAX_BF16, 32768, 1000, 32, 0, 256, 8, 1); /* 4 groups of 8 per lane */
    check_block(SOFTMAX, 100, 4096, 256, 0, 256, 1, 1);       /* 16 per thread of 256 */
    check_block(SOFTMAX, 100, 4097, 288, 0, 288, 1, 1); /* odd: 16 per thread of 257 -> row_wide */
    check_block(LAYERNORM_BF16, 8192, 5120, 320, 0, 320, 1, 1); /* row_wide: 2 groups of 8 */
    check_block(RMSNORM, 2048, 12288, 768, 0, 768, 1, 1);       /* row_wide: 4 groups of 4 */
    check_block(LSE, 16384, 8192, 512, 0, 512, 1, 1);
    check_block(SOFTMAX, 100, 16384, 1024, 0, 1024, 1, 1); /* the widest held row */
    check_block(SOFTMAX, 100, 16385, 352, 3, 352, 1, 1);   /* cluster of 3 */
    check_block(SOFTMAX, 64, 65536, 512, 8, 512, 1, 1);    /* cluster of 8 */
    check_block(SOFTMAX, 4096, 65536, 256, 8, 256, 1, 1); /* many rows: streamed, L2 cluster of 8 */
    check_block(LOGSOFTMAX_BF16, 200, 32000, 512, 4, 512, 1, 1);  /* cluster of 4 x v8 */
    check_block(LOGSOFTMAX_BF16, 8192, 32000, 256, 4, 256, 1, 1); /* read + written: 4 */
    check_block(SOFTMAX, 100, 65537, 256, 8, 256, 1, 1);     /* online, few rows: cluster_stream */
    check_block(SOFTMAX, 4096, 65537, 256, 8, 256, 1, 1);    /* online, many rows: L2 cluster */
    check_block(SOFTMAX, 4096, 300000, 256, 0, 256, 1, 1);   /* 132 rows of 1.2 MB overflow it */
    check_split(ROWSUM, 128, 262144, 256, 0, 256, 1, 17, 1); /* few long rows: row_split */
    check_split(ROWSUM, 256, 262144, 256, 0, 256, 1, 9, 1);  /* ceil(2 x 8 x 132 / 256) */
    check_split(ROWSUM, 264, 262144, 256, 0, 256, 1, 8, 1);  /* 2 rows per SM: still split */
    check_block(ROWSUM, 265, 262144, 256, 0, 256, 1, 1);     /* more: a block per row */
    check_block(ROWSUM, 512, 262144, 256, 0, 256, 1, 1);     /* streamed, 4 per SM */
}

static const char *GSUM = "fn f(x: f32[M, N]) -> f32[] { return sum(x) }\n";
static const char *GMAX = "fn f(x: f32[M, N]) -> f32[] { return max(x) }\n";
static const char *GMEAN_BF16 = "fn f(x: bf16[M, N]) -> bf16[] { return mean(x) }\n";
static const char *LOSSES = /* several scalar outputs of one region */
    "fn f(p: f32[M, N], t: f32[M, N]) -> (f32[], f32[], f32[]) {\n  d = p - t\n  a = abs(d)\n"
    "  return mean(d * d), mean(where(a < 1.0, 0.5 * d * d, a - 0.5)), mean(a)\n}\n";
static const char *ROWMINMAX =
    "fn f(x: f32[M, N]) -> (f32[M], f32[M]) { return min(x, axis=-1), max(x, axis=-1) }\n";

/* Values in (-2, -1]: a max of them is negative. */
static double fill_negative(unsigned in, int64_t i, int64_t n) {
    (void)in, (void)n;
    return -1.0 - (double)((i * 7919) % 1000) / 1000.0;
}

/* The region's schedule is reduction.row_split with `splits` chunks (0: not split). */
static void check_rsplit(const ir_graph *g, unsigned splits) {
    const ir_region *r = the_reduction(g);
    if ((r->sched.id == PASS_SCH_REDUCTION_ROW_SPLIT ? r->splits : 0) != splits)
        fprintf(stderr, "schedule %s, splits %u; expected %u\n", pass_schedule_name(r->sched.id),
                r->splits, splits);
    assert_int_equal(r->sched.id == PASS_SCH_REDUCTION_ROW_SPLIT ? r->splits : 0, splits);
}

/* [reduction.row_split] from the shape: few rows (at most 2 per SM) of one stage with outputs of
 * the reduced shape, ceil(2 waves x 8 blocks x 132 SMs / rows) chunks, at most one per 256 x 16
 * elements; not where the rows fill the GPU, nor for two stages (softmax), nor a short row. Then
 * the host JIT (its programs concurrent: the ticket decides which block combines; a block that
 * combined before the others stored their partials would read zeros) against the interpreter at
 * ragged sizes: one row of a prime length, 3 rows, a global sum / max / mean, several scalar
 * outputs, negative values for the max (a missing partial reads 0). */
static void test_row_split(void **s) {
    (void)s;
    static const struct {
        const char **src;
        int64_t m, n;
        unsigned splits;
    } cases[] = {
        {&ROWSUM, 1, 100003, 24},    /* 100003 / 4096 */
        {&ROWSUM, 3, 65537, 16},     /* 65537 / 4096 */
        {&ROWMINMAX, 7, 300007, 73}, /* 300007 / 4096 */
        {&GSUM, 8191, 1000, 1999},   /* the whole tensor: 8191000 / 4096 */
        {&GMAX, 33, 50001, 402},     /* 1650033 / 4096 */
        {&GMEAN_BF16, 129, 4097, 129}, {&LOSSES, 1000, 1003, 244},
        {&GSUM, 7, 2999, 5},      /* 20993 elements (not held): 5 chunks */
        {&ROWSUM, 1, 8191, 0},    /* under 2 chunks: one block (held) */
        {&ROWSUM, 265, 65536, 0}, /* more than 2 rows per SM */
        {&SOFTMAX, 1, 100003, 0}, /* two stages and a row-shaped output */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *src = *cases[i].src;
        fe_define defs[2] = {{"M", cases[i].m}, {"N", cases[i].n}};
        ir_graph *raw, *g = plan(src, defs, 2, 0, &raw);
        check_rsplit(g, cases[i].splits);
        run_compare(g, raw, src, cases[i].m, cases[i].n, NULL, 70 + i);
        if (*cases[i].src == GMAX) /* every value negative: a partial read as 0 would win */
            run_compare(g, raw, src, cases[i].m, cases[i].n, fill_negative, 90 + i);
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

/* The region's schedule is reduction.row_split2 with `splits` chunks (0: not). */
static void check_rsplit2(const ir_graph *g, unsigned splits) {
    const ir_region *r = the_reduction(g);
    unsigned got = r->sched.id == PASS_SCH_REDUCTION_ROW_SPLIT2 ? r->splits : 0;
    if (got != splits)
        fprintf(stderr, "schedule %s, splits %u; expected row_split2 with %u\n",
                pass_schedule_name(r->sched.id), r->splits, splits);
    assert_int_equal(got, splits);
}

/* [reduction.row_split2] from the shape: two stages streamed as a running max and exp sum
 * (softmax, log_softmax, logsumexp, bf16 too), or one stage whose domain-shaped outputs read its
 * statistic (a global norm and the clipped gradient, RMSNorm, x / sum, x / max|x| in bf16), on rows
 * so few that a cluster of 8 blocks per row fills at most half a wave (2 x rows x 8 <= 132 x 8),
 * ceil(1 wave x 8 x 132 / rows) chunks, at most one per 256 x 16 elements; not for 67 rows
 * (cluster_stream), a variance (Welford), or a short row. Then the host JIT against the interpreter
 * at ragged sizes (the statistics kernel's chunk partials, every block's combine, chunk 0's
 * leftovers of a peeled row). */
static void test_row_split2(void **s) {
    (void)s;
    static const struct {
        const char **src;
        int64_t m, n;
        unsigned splits;
    } cases[] = {
        {&SOFTMAX, 1, 100003, 24},
        {&SOFTMAX, 3, 65537, 16},
        {&LOGSOFTMAX, 3, 65537, 16},
        {&SOFTMAX_BF16, 2, 70001, 17},
        {&LSE, 2, 1000003, 244},
        {&LOGSOFTMAX_BF16, 1, 300007, 73},
        {&SOFTMAX, 66, 65537, 16}, /* 2 x 66 x 8 = 1056 <= 132 x 8 */
        {&SOFTMAX, 67, 65537, 0},  /* a cluster per row fills over half the wave */
        {&NORMALIZE, 2, 65537, 0}, /* Welford's variance */
        {&SOFTMAX, 1, 4095, 0},    /* short: one block */
        /* one stage whose domain-shaped outputs read the statistic */
        {&GCLIP, 1, 100003, 24},
        {&GCLIP, 2, 500003, 244},
        {&RMSNORM, 2, 100003, 24},
        {&SUMSCALE, 3, 65537, 16},
        {&MAXSCALE, 5, 300007, 73},
        {&RMSNORM, 67, 65537, 0},
        {&GCLIP, 1, 4095, 0}, /* short: one block */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *src = *cases[i].src;
        fe_define defs[2] = {{"M", cases[i].m}, {"N", cases[i].n}};
        ir_graph *raw, *g = plan(src, defs, 2, 0, &raw);
        check_rsplit2(g, cases[i].splits);
        if (cases[i].splits) run_compare(g, raw, src, cases[i].m, cases[i].n, NULL, 120 + i);
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

/* [fusion.model_guard]: three dependent stages of one row of 2^20 f32 (multipass, no split
 * schedule) merge into a cluster_stream kernel the model prices at 81 us against 39 us for its 7
 * operations unfused, so the planner keeps its reductions apart, each with its pointwise work (4
 * kernels, 32.1 us; one of them, rejected again, one kernel per operation) and --explain says why
 * with the numbers; the same program at 65537 elements (8.2 us fused, 32.6 unfused) stays one
 * kernel. The split plan runs on the host JIT against the interpreter. */
static void test_fusion_guard(void **s) {
    (void)s;
    static const struct {
        int64_t n;
        unsigned regions;
    } cases[] = {{1048576, 4}, {65537, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_define defs[2] = {{"M", 1}, {"N", cases[i].n}};
        char *txt = NULL;
        size_t len = 0;
        FILE *ex = open_memstream(&txt, &len);
        tx_diag d;
        tx_diag_init(&d, stderr, "test.tx", MULTI3, strlen(MULTI3));
        fe_options fo = {.entry = NULL, .defines = defs, .ndefines = 2};
        ir_graph *g = fe_compile("test.tx", MULTI3, strlen(MULTI3), &fo, &d);
        assert_non_null(g);
        ir_graph *raw = ir_graph_clone(g);
        pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200"), .explain = ex};
        assert_true(pass_run_pipeline(g, &pc));
        fclose(ex);
        assert_int_equal(g->nregions, cases[i].regions);
        const char *line = strstr(txt, "[fusion.model_guard] the merged reduction kernel of 7");
        if (cases[i].regions > 1) {
            assert_non_null(line);
            assert_non_null(strstr(line, "its parts unfused"));
            assert_non_null(strstr(line, "its reductions apart, each with its pointwise work"));
            assert_non_null(strstr(txt, "its reductions apart: 4 kernels, predicted"));
            run_compare(g, raw, MULTI3, 1, cases[i].n, NULL, 140 + i);
        } else {
            assert_null(strstr(txt, "[fusion.model_guard]"));
        }
        free(txt);
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

/* [reduction.occupancy] by the model: the entropy of a log_softmax (three stages, no online form)
 * of bf16 rows of 30000 held on chip in f32 (120 KB: one block per SM) is streamed in 3 passes
 * where the model prices that faster (265 rows: 45.7 us held against 13.6 streamed); rows of
 * 20000 (80 KB, 2 blocks per SM) stay held. The streamed plan runs on the host JIT against the
 * interpreter. */
static void test_occupancy_stream(void **s) {
    (void)s;
    static const char *ENTROPY = "fn f(x: bf16[M, N]) -> f32[M] {\n"
                                 "  lp = log_softmax(f32(x), axis=-1)\n"
                                 "  return -sum(exp(lp) * lp, axis=-1)\n}\n";
    static const struct {
        int64_t m, n;
        int strategy;
    } cases[] = {{265, 30000, IR_RED_MULTIPASS}, {300, 20000, IR_RED_ONCHIP}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_define defs[2] = {{"M", cases[i].m}, {"N", cases[i].n}};
        ir_graph *raw, *g = plan(ENTROPY, defs, 2, 0, &raw);
        const ir_region *r = the_reduction(g);
        assert_int_equal(r->strategy, cases[i].strategy);
        if (cases[i].strategy == IR_RED_MULTIPASS) {
            assert_int_equal(r->passes, 3);
            run_compare(g, raw, ENTROPY, cases[i].m, cases[i].n, NULL, 150 + i);
        }
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

/* What the PTX of one split schedule must show, compiled for sm_90 and sm_80: the region's
 * schedule, the kernel count, no cluster, for a ticket schedule the ticket's fence and atomic, the
 * volatile loads of the partials and a zeroed workspace in the manifest; ptxas assembles it (and,
 * with no_spill, without spill stores); `kernel` checks each kernel's geometry against the case's
 * sizes {M, N} and the planned region. */
typedef struct sched_ptx_expect {
    int sched;
    unsigned nkernels;
    bool ticket, no_spill;
    void (*kernel)(const cg_program *p, unsigned k, const int64_t mn[2], const char *src,
                   const ir_region *r);
} sched_ptx_expect;

/* The manifest of `p` marks a workspace to zero before the launch. */
static void check_zeroed_workspace(const cg_program *p) {
    char *mbuf = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&mbuf, &mlen);
    assert_non_null(mf);
    assert_true(cg_manifest_write(p, mf));
    fclose(mf);
    assert_non_null(strstr(mbuf, "\"zero\": true"));
    free(mbuf);
}

/* ptxas (when installed) assembles `ptx` for `arch`; with no_spill, without spill stores. */
static void check_assembles(const char *ptx, size_t len, const char *arch, bool no_spill,
                            const char *src) {
    tk_ptxas_stats st;
    int rc = tk_ptxas_stats_of(ptx, len, arch, &st);
    if (rc < 0) return;
    assert_int_equal(rc, 0);
    if (no_spill && st.spill > 0) fprintf(stderr, "%s: %d bytes of spill stores\n", src, st.spill);
    if (no_spill) assert_true(st.spill <= 0);
}

/* Plans each of the n programs srcs[i] at sizes mn[i] and checks its PTX against `e`. */
static void check_sched_ptx(const char *const *srcs, const int64_t (*mn)[2], size_t n,
                            const sched_ptx_expect *e) {
    for (size_t i = 0; i < n; i++) {
        fe_define defs[2] = {{"M", mn[i][0]}, {"N", mn[i][1]}};
        ir_graph *g = plan(srcs[i], defs, 2, 0, NULL);
        const ir_region *r = the_reduction(g);
        assert_int_equal(r->sched.id, e->sched);
        for (int t = 0; t < 2; t++) {
            cg_program *p = compile(g, srcs[i], t ? CG_SM80 : CG_SM90);
            size_t len = 0;
            const char *ptx = cg_program_ptx(p, &len);
            assert_non_null(ptx);
            assert_null(strstr(ptx, ".reqnctapercluster"));
            assert_int_equal(cg_program_nkernels(p), e->nkernels);
            if (e->ticket) {
                assert_non_null(strstr(ptx, "fence.acq_rel.gpu"));
                assert_non_null(strstr(ptx, "atom.relaxed.gpu.global.add.u32"));
                assert_non_null(strstr(ptx, "ld.volatile.global"));
                check_zeroed_workspace(p);
            }
            for (unsigned k = 0; k < e->nkernels; k++) e->kernel(p, k, mn[i], srcs[i], r);
            check_assembles(ptx, len, t ? "sm_80" : "sm_90", e->no_spill, srcs[i]);
            cg_program_free(p);
        }
        ir_graph_free(g);
    }
}

/* Kernel k of a row_split2 plan: grid rows x splits, 256 threads. */
static void row_split2_kernel(const cg_program *p, unsigned k, const int64_t mn[2], const char *src,
                              const ir_region *r) {
    (void)src;
    unsigned grid[3], block[3], smem;
    assert_true(cg_kernel_geometry(p, k, mn, grid, block, &smem));
    assert_int_equal(grid[0], mn[0]);
    assert_int_equal(grid[1], r->splits);
    assert_int_equal(block[0], 256);
}

/* PTX of [reduction.row_split2] (sm_90 and sm_80): two kernels, each of grid rows x splits and
 * 256 threads, no cluster; ptxas accepts both. */
static void test_row_split2_ptx(void **s) {
    (void)s;
    const char *srcs[] = {SOFTMAX, LOGSOFTMAX_BF16, LSE, GCLIP, MAXSCALE};
    const int64_t mn[][2] = {{4, 1048576}, {3, 65537}, {1, 16777219}, {1, 67108879}, {3, 1000003}};
    const sched_ptx_expect e = {PASS_SCH_REDUCTION_ROW_SPLIT2, 2, false, false, row_split2_kernel};
    check_sched_ptx(srcs, mn, sizeof srcs / sizeof srcs[0], &e);
}

/* The kernel of a row_split plan: grid rows (1 for a global reduction) x splits, 256 threads. */
static void row_split_kernel(const cg_program *p, unsigned k, const int64_t mn[2], const char *src,
                             const ir_region *r) {
    unsigned grid[3], block[3], smem;
    assert_true(cg_kernel_geometry(p, k, mn, grid, block, &smem));
    assert_int_equal(grid[0], src == ROWSUM ? mn[0] : 1);
    assert_int_equal(grid[1], r->splits);
    assert_int_equal(block[0], 256);
}

/* PTX of [reduction.row_split] (sm_90 and sm_80: no cluster): one kernel, grid rows x splits,
 * the ticket's fence and atomic, the volatile loads of the partials, and a zeroed workspace;
 * ptxas accepts it. */
static void test_row_split_ptx(void **s) {
    (void)s;
    const char *srcs[] = {ROWSUM, GSUM, LOSSES, GMEAN_BF16};
    const int64_t mn[][2] = {{3, 65537}, {8191, 1000}, {1000, 1003}, {129, 4097}};
    const sched_ptx_expect e = {PASS_SCH_REDUCTION_ROW_SPLIT, 1, true, false, row_split_kernel};
    check_sched_ptx(srcs, mn, sizeof srcs / sizeof srcs[0], &e);
}

/* Host JIT against the interpreter for the column schedules at ragged sizes (lengths not a
 * multiple of the unrolled group, one row, one column, a prologue and an epilogue output). */
static void test_column_ragged(void **s) {
    (void)s;
    const char *srcs[] = {COLSUM, COLMAX, COLMEAN_BF16, COLCENTER};
    const int64_t mn[][2] = {{1, 1},     {1, 7},     {7, 1}, {33, 5},  {1001, 3},
                             {4999, 17}, {64, 1000}, {8, 8}, {24, 130}};
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
        for (size_t j = 0; j < sizeof mn / sizeof mn[0]; j++) {
            fe_define defs[2] = {{"M", mn[j][0]}, {"N", mn[j][1]}};
            ir_graph *raw, *g = plan(srcs[i], defs, 2, 0, &raw);
            run_compare(g, raw, srcs[i], mn[j][0], mn[j][1], NULL, 11 + j);
            ir_graph_free(g);
            ir_graph_free(raw);
        }
}

static const char *COLSTATS = /* four reductions of one region, an epilogue on the mean */
    "fn f(x: f32[M, N]) -> (f32[N], f32[N], f32[N], f32[N]) {\n"
    "  return sum(x, axis=0), max(x, axis=0), mean(x * 2, axis=0) + 1, min(x, axis=0)\n}\n";
static const char *COLMIN_I32 =
    "fn f(x: i32[M, N]) -> (i32[N], i32[N]) { return sum(x, axis=0), min(x, axis=0) }\n";
static const char *COLMEAN = "fn f(x: f32[M, N]) -> f32[N] { return mean(x, axis=0) }\n";
static const char *MIDMAX = "fn f(x: f32[16, M, N]) -> f32[16, N] { return max(x, axis=1) }\n";

/* [reduction.column_blocks] is one kernel: each column tile's last block combines the partials.
 * The host JIT (its programs concurrent, the same tickets) against the interpreter at ragged
 * sizes (rows not a multiple of the slices or of the chunks, columns not a multiple of the
 * vector width, one chunk shorter), every value negative for the max (a partial read before it
 * is stored, or a missing one, would win), and run twice on the same workspace (TX_HOST_RUNS=2:
 * the outputs poisoned before the second run, whose tickets start from the first run's reset;
 * without the reset no block of the second run combines); a row_split case checks the same of
 * its tickets. */
static void test_column_blocks_fused(void **s) {
    (void)s;
    static const struct {
        const char **src;
        int64_t m, n;
    } cases[] = {
        {&COLMAX, 513, 37},      /* 2 chunks, scalar columns: 2 tiles of 32, the last ragged */
        {&COLSTATS, 100003, 16}, /* rows of 16: 4 x vec 4, 48 chunks */
        {&COLSTATS, 600, 2103},  /* 2103 columns: vec 1 */
        {&COLSTATS, 600, 8416},  /* vec 4, 66 tiles */
        {&COLMEAN_BF16, 4096, 1000}, {&COLMIN_I32, 5000, 3}, /* 3 columns of 8 x 64 slices */
        {&COLMEAN, 20011, 45},                               /* a prime length */
        {&ROWSUM, 3, 65537},                                 /* row_split's tickets */
    };
    for (int runs = 1; runs <= 2; runs++) {
        setenv("TX_HOST_RUNS", runs == 2 ? "2" : "1", 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const char *src = *cases[i].src;
            fe_define defs[2] = {{"M", cases[i].m}, {"N", cases[i].n}};
            ir_graph *raw, *g = plan(src, defs, 2, 0, &raw);
            const ir_region *r = the_reduction(g);
            assert_int_equal(r->sched.id, src == ROWSUM ? PASS_SCH_REDUCTION_ROW_SPLIT
                                                        : PASS_SCH_REDUCTION_COLUMN_BLOCKS);
            assert_true(r->splits >= 2);
            run_compare(g, raw, src, cases[i].m, cases[i].n, NULL, 130 + i);
            if (src == COLMAX || src == COLSTATS)
                run_compare(g, raw, src, cases[i].m, cases[i].n, fill_negative, 150 + i);
            ir_graph_free(g);
            ir_graph_free(raw);
        }
    }
    unsetenv("TX_HOST_RUNS");
}

/* The kernel of a column_blocks plan: grid column tiles (of threads x vector width; MIDMAX keeps
 * 16 x N columns) x splits, the region's threads. */
static void column_blocks_kernel(const cg_program *p, unsigned k, const int64_t mn[2],
                                 const char *src, const ir_region *r) {
    unsigned grid[3], block[3], smem;
    assert_true(cg_kernel_geometry(p, k, mn, grid, block, &smem));
    int64_t kept = src == MIDMAX ? 16 * mn[1] : mn[1];
    int64_t v = r->sched.p[3] > 1 ? r->sched.p[3] : 1, tc = r->sched.p[0] * v;
    assert_int_equal(grid[0], (kept + tc - 1) / tc);
    assert_int_equal(grid[1], r->splits);
    assert_int_equal(block[0], r->threads);
}

/* PTX of [reduction.column_blocks] (sm_90 and sm_80): one kernel of grid tiles x splits, the
 * ticket's fence and atomic, the volatile loads of the partials, a zeroed workspace of one
 * ticket a tile in the manifest; ptxas assembles it without spills (colmean [1048576, 16],
 * midmax [16, 8191, 129] and a ragged vector case). */
static void test_column_blocks_ptx(void **s) {
    (void)s;
    const char *srcs[] = {COLMEAN, MIDMAX, COLSUM, COLMEAN_BF16};
    const int64_t mn[][2] = {{1048576, 16}, {8191, 129}, {100003, 16}, {4099, 1000}};
    const sched_ptx_expect e = {PASS_SCH_REDUCTION_COLUMN_BLOCKS, 1, true, true,
                                column_blocks_kernel};
    check_sched_ptx(srcs, mn, sizeof srcs / sizeof srcs[0], &e);
}

/* Without clusters (the A100) few long streamed rows get 1024 threads: reduction.row_few. */
static void test_row_few(void **s) {
    (void)s;
    fe_define defs[2] = {{"M", 100}, {"N", 65537}};
    ir_graph *g = plan_for(SOFTMAX, defs, 2, 0, NULL, "a100");
    assert_int_equal(the_reduction(g)->threads, 1024);
    assert_int_equal(the_reduction(g)->tile[2], 0);
    ir_graph_free(g);
}

/* Host JIT against the interpreter for the row schedules' shapes at ragged widths: 1, 31, 33, 1000,
 * 4097 and both sides of every boundary (16 vector groups: subwarp; 32 per lane: warp rows; 16
 * per thread of 256: row; of 1024: row_wide; beyond: staged). The host ignores GPU blocks (one
 * thread per program) but runs the same planned strategy. */
static void test_row_ragged(void **s) {
    (void)s;
    const char *srcs[] = {SOFTMAX, SOFTMAX_BF16, LAYERNORM_BF16, RMSNORM, ROWMAX, LSE, RESNORM};
    const int64_t ns[] = {1,    7,    31,   33,   63,   64,    65,    100,   1000,  1023,
                          1024, 1025, 4096, 4097, 5120, 12288, 16384, 16385, 20001, 65536};
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            int64_t m = ns[j] > 16384 ? 1 : ns[j] > 4096 ? 2 : 5;
            fe_define defs[2] = {{"M", m}, {"N", ns[j]}};
            ir_graph *raw, *g = plan(srcs[i], defs, 2, 0, &raw);
            run_compare(g, raw, srcs[i], m, ns[j], NULL, 31 + j);
            ir_graph_free(g);
            ir_graph_free(raw);
        }
}

/* Every row schedule's sm_90 PTX assembles with ptxas (when it exists) without register spills;
 * held rows of a width that is a multiple of the vector load 16-byte groups (v4.f32 / v4.b32 for
 * bf16 x 8), and rows of one warp or less need no barrier. */
static void test_row_schedule_ptx(void **s) {
    (void)s;
    static const struct {
        const char **src;
        int64_t m, n;
        const char *load; /* a load the PTX must hold, or NULL */
        bool barrier;
    } cases[] = {
        {&ROWMAX, 1048576, 64, "ld.global.nc.v4.f32", false},       /* subwarp */
        {&SOFTMAX, 262144, 64, "ld.global.nc.v4.f32", false},       /* subwarp */
        {&ROWMAX, 1000, 7, NULL, false},                            /* 8 lanes, scalars */
        {&SOFTMAX_BF16, 32768, 1000, "ld.global.nc.v4.u32", false}, /* warp rows, 32 per lane */
        {&LAYERNORM_BF16, 8192, 5120, "ld.global.nc.v4.u32", true}, /* row_wide 320 */
        {&RMSNORM, 2048, 12288, "ld.global.nc.v4.f32", true},       /* row_wide 768 */
        {&LSE, 16384, 8192, "ld.global.nc.v4.f32", true},           /* row_wide 512 */
        {&SOFTMAX, 100, 4097, NULL, true},                          /* odd: 288 threads */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *src = *cases[i].src;
        fe_define defs[2] = {{"M", cases[i].m}, {"N", cases[i].n}};
        ir_graph *g = plan(src, defs, 2, 0, NULL);
        cg_program *p = compile(g, src, CG_SM90);
        size_t len = 0;
        const char *ptx = cg_program_ptx(p, &len);
        assert_non_null(ptx);
        if (cases[i].load && !strstr(ptx, cases[i].load))
            fprintf(stderr, "%s%lld x %lld: no %s\n", src, (long long)cases[i].m,
                    (long long)cases[i].n, cases[i].load);
        assert_true(!cases[i].load || strstr(ptx, cases[i].load));
        assert_int_equal(strstr(ptx, "bar.sync") != NULL, cases[i].barrier);
        check_assembles(ptx, len, "sm_90", true, src);
        cg_program_free(p);
        ir_graph_free(g);
    }
}

/* Cluster rows in the sm_90 PTX: the cluster shape right after .maxntid, cluster barriers,
 * DSMEM reads of the partials, the kernel's cluster; ptxas assembles it. For sm_80 the same plan
 * is emitted without a cluster (the row streamed per block); it assembles too. */
static void test_cluster_ptx(void **s) {
    (void)s;
    static const struct {
        const char **src;
        int64_t m, n, c;
    } cases[] = {{&SOFTMAX, 64, 65536, 8},         {&LOGSOFTMAX_BF16, 200, 32000, 4},
                 {&SOFTMAX, 7, 20001, 3},          {&LAYERNORM_BF16, 5, 40000, 5},
                 {&SOFTMAX, 128, 150001, 8},       /* cluster_stream: online slices */
                 {&LAYERNORM_BF16, 64, 150000, 8}, /* cluster_stream: Welford slices */
                 {&SOFTMAX, 4096, 65536, 8}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *src = *cases[i].src;
        fe_define defs[2] = {{"M", cases[i].m}, {"N", cases[i].n}};
        ir_graph *g = plan(src, defs, 2, 0, NULL);
        assert_int_equal(the_reduction(g)->tile[2], cases[i].c);
        for (int t = 0; t < 2; t++) {
            cg_program *p = compile(g, src, t ? CG_SM80 : CG_SM90);
            size_t len = 0;
            const char *ptx = cg_program_ptx(p, &len);
            assert_non_null(ptx);
            char dir[64];
            snprintf(dir, sizeof dir, "\n.reqnctapercluster 1, %lld, 1\n", (long long)cases[i].c);
            const char *mx = strstr(ptx, "\n.maxntid");
            assert_int_equal(strstr(ptx, dir) != NULL, t == 0);
            if (t == 0) assert_true(mx && strstr(ptx, dir) == strchr(mx + 1, '\n'));
            assert_int_equal(strstr(ptx, "barrier.cluster.arrive") != NULL, t == 0);
            assert_int_equal(strstr(ptx, "ld.shared::cluster") != NULL, t == 0);
            assert_int_equal(cg_program_kernel(p, 0)->cluster, t == 0 ? cases[i].c : 0);
            int64_t syms[2] = {cases[i].m, cases[i].n};
            unsigned grid[3], block[3], smem;
            assert_true(cg_kernel_geometry(p, 0, syms, grid, block, &smem));
            assert_int_equal(grid[1], t == 0 ? cases[i].c : 1);
            int rc = tk_ptxas(ptx, len, t ? "sm_80" : "sm_90", NULL);
            if (rc >= 0) assert_int_equal(rc, 0);
            cg_program_free(p);
        }
        ir_graph_free(g);
    }
}

/* The sm_90 PTX of the split column sum and of the warp-row max: the first combines slices in
 * shared memory behind barriers, the second needs neither; both assemble (when ptxas exists). */
static void test_schedule_ptx(void **s) {
    (void)s;
    const char *srcs[] = {COLSUM, ROWMAX, COLCENTER};
    const int64_t mn[][2] = {{65536, 1024}, {1048576, 64}, {65536, 1000}};
    for (int i = 0; i < 3; i++) {
        fe_define defs[2] = {{"M", mn[i][0]}, {"N", mn[i][1]}};
        ir_graph *g = plan(srcs[i], defs, 2, 0, NULL);
        cg_program *p = compile(g, srcs[i], CG_SM90);
        size_t len = 0;
        const char *ptx = cg_program_ptx(p, &len);
        assert_non_null(ptx);
        assert_int_equal(strstr(ptx, "bar.sync") != NULL, i != 1);
        assert_int_equal(strstr(ptx, "shfl.sync") != NULL, i == 1);
        int rc = tk_ptxas(ptx, len, "sm_90", NULL);
        if (rc >= 0) assert_int_equal(rc, 0);
        cg_program_free(p);
        ir_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_online_plans),
        cmocka_unit_test(test_multipass_plans),
        cmocka_unit_test(test_variance_far_from_zero),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_symbolic_rows),
        cmocka_unit_test(test_one_level_one_pass),
        cmocka_unit_test(test_ptx_passes),
        cmocka_unit_test(test_staged_rows),
        cmocka_unit_test(test_staging_refused),
        cmocka_unit_test(test_column_blocks),
        cmocka_unit_test(test_row_blocks),
        cmocka_unit_test(test_row_few),
        cmocka_unit_test(test_row_ragged),
        cmocka_unit_test(test_row_schedule_ptx),
        cmocka_unit_test(test_cluster_ptx),
        cmocka_unit_test(test_column_ragged),
        cmocka_unit_test(test_row_split),
        cmocka_unit_test(test_row_split_ptx),
        cmocka_unit_test(test_column_blocks_fused),
        cmocka_unit_test(test_column_blocks_ptx),
        cmocka_unit_test(test_row_split2),
        cmocka_unit_test(test_row_split2_ptx),
        cmocka_unit_test(test_fusion_guard),
        cmocka_unit_test(test_occupancy_stream),
        cmocka_unit_test(test_schedule_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
