/* test_matmul.c - the matrix-product and attention kernels (codegen/matmul.c,
 * codegen/attention.c, codegen/mma.c).
 *
 * Graphs are built by hand with one planned region each (no frontend or
 * planner involved), run through the host JIT (cg_host_run) and compared
 * with the reference interpreter (rt_interp_run). Tolerances per output
 * dtype: f32 |d| <= 1e-4 + 1e-4|ref| (summation order only); f16
 * 4e-3 + 4e-3|ref| and bf16 2e-2 + 2e-2|ref| (the kernel accumulates in f32
 * and rounds once where the reference rounds a double, so one or two ulps
 * of the output dtype may differ, more after a transcendental epilogue).
 * The PTX of representative regions must assemble with ptxas for sm_80,
 * sm_86, sm_89, sm_90 and sm_90a (skipped with a message when ptxas is
 * absent), contain no `.extern .func`, and use mma.sync for f16/bf16. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testkit.h"

#include "driver/driver.h"
#include "codegen/codegen.h"
#include "ir/ir.h"
#include "runtime/runtime.h"

/* ---- graph building ------------------------------------------------------ */

static ir_shape shp(int rank, ...) {
    ir_shape s = {.rank = (uint8_t)rank};
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) s.dim[i] = va_arg(ap, int64_t);
    va_end(ap);
    return s;
}
#define S2(a, b)       shp(2, (int64_t)(a), (int64_t)(b))
#define S3(a, b, c)    shp(3, (int64_t)(a), (int64_t)(b), (int64_t)(c))
#define S4(a, b, c, d) shp(4, (int64_t)(a), (int64_t)(b), (int64_t)(c), (int64_t)(d))

/* Puts every computing node of g into one region of `kind` anchored at
 * `anchor` with tile (bm, bn, bk). */
static void one_region(ir_graph *g, ir_region_kind kind, ir_id anchor, int64_t bm, int64_t bn,
                       int64_t bk) {
    g->regions = calloc(1, sizeof *g->regions);
    g->nregions = g->regcap = 1;
    ir_region *r = &g->regions[0];
    r->kind = (uint8_t)kind;
    r->fusion = kind == IR_RK_ATTENTION ? IR_FUSE_ATTENTION : IR_FUSE_EPILOGUE;
    r->strategy = kind == IR_RK_ATTENTION ? IR_RED_ONLINE : IR_RED_ONCHIP;
    r->anchor = anchor;
    r->threads = 256;
    r->tile[0] = bm, r->tile[1] = bn, r->tile[2] = bk;
    for (ir_id i = 0; i < g->n; i++) {
        ir_op op = (ir_op)g->nodes[i].op;
        g->nodes[i].region =
            (op == IR_OP_INPUT || op == IR_OP_CONST || op == IR_OP_OUTPUT) ? IR_NONE : 0;
    }
}

/* transpose of the last two dims */
static ir_id tr(ir_graph *g, ir_id x) {
    uint8_t perm[IR_MAX_RANK];
    unsigned r = g->nodes[x].shape.rank;
    for (unsigned i = 0; i < r; i++) perm[i] = (uint8_t)i;
    perm[r - 2] = (uint8_t)(r - 1);
    perm[r - 1] = (uint8_t)(r - 2);
    return ir_add_permute(g, x, perm);
}

/* ---- running and comparing ------------------------------------------------ */

static double tol_abs(ir_dtype t) { return t == IR_F32 ? 1e-4 : t == IR_F16 ? 4e-3 : 2e-2; }

/* Allocates g's inputs into in[param] (static shapes) with deterministic random values from
 * seed; returns how many there are. */
static unsigned fill_inputs(const ir_graph *g, rt_tensor *in, uint64_t seed) {
    unsigned nin = 0;
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        rt_tensor *t = &in[n->a.param];
        t->dtype = (ir_dtype)n->dtype;
        t->rank = n->shape.rank;
        for (unsigned k = 0; k < n->shape.rank; k++) t->dim[k] = n->shape.dim[k];
        assert_true(rt_tensor_alloc(t));
        rt_fill_random(t, seed, n->a.param);
        nin++;
    }
    return nin;
}

/* Runs g on random inputs through the host JIT and the interpreter and
 * compares every output; fails the test with the first mismatch. */
static void check_host(ir_graph *g, const char *what) {
    assert_true(ir_verify(g, stderr));
    tx_diag d;
    tx_diag_init(&d, stderr, what, NULL, 0);
    rt_tensor in[8], ref[4], out[4];
    unsigned nin = 0;
    memset(in, 0, sizeof in);
    memset(ref, 0, sizeof ref);
    memset(out, 0, sizeof out);
    nin = fill_inputs(g, in, 1234);
    unsigned nout = g->nodes[ir_output(g)].nin;
    assert_true(rt_interp_run(g, in, ref, &d));
    bool ran = drv_host_run(g, in, out, &d);
    if (!ran) fprintf(stderr, "%s: cg_host_run failed\n", what);
    assert_true(ran);
    for (unsigned o = 0; o < nout; o++) {
        assert_int_equal(out[o].dtype, ref[o].dtype);
        assert_int_equal(out[o].rank, ref[o].rank);
        int64_t n = rt_numel(&ref[o]);
        assert_int_equal(rt_numel(&out[o]), n);
        double at = tol_abs(ref[o].dtype), rtol = at;
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < n; i++) {
            double a = rt_get(&out[o], i), b = rt_get(&ref[o], i);
            if (!(fabs(a - b) <= at + rtol * fabs(b))) {
                if (first < 0) first = i;
                bad++;
            }
        }
        if (bad)
            fprintf(stderr,
                    "%s: output %u: %lld of %lld elements differ; first at %lld: got %g, want %g\n",
                    what, o, (long long)bad, (long long)n, (long long)first, rt_get(&out[o], first),
                    rt_get(&ref[o], first));
        assert_int_equal(bad, 0);
    }
    for (unsigned i = 0; i < nin; i++) rt_tensor_free(&in[i]);
    for (unsigned o = 0; o < nout; o++) rt_tensor_free(&ref[o]), rt_tensor_free(&out[o]);
}

/* Compiles g for every GPU target and assembles the PTX with ptxas. */
static void check_ptx(ir_graph *g, const char *what, bool want_mma) {
    if (access(TK_PTXAS, X_OK) != 0) {
        printf("%s: skipping the ptxas check: %s not found\n", what, TK_PTXAS);
        return;
    }
    static const cg_target ts[] = {CG_SM80, CG_SM86, CG_SM89, CG_SM90, CG_SM90A};
    for (unsigned i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        tx_diag d;
        tx_diag_init(&d, stderr, what, NULL, 0);
        cg_program *p = cg_program_new(g, ts[i], &d);
        assert_non_null(p);
        size_t len = 0;
        const char *ptx = cg_program_ptx(p, &len);
        assert_non_null(ptx);
        assert_null(strstr(ptx, ".extern .func"));
        /* sm_90a: the wgmma template where the region qualifies (test_wgmma), else mma.sync */
        if (want_mma)
            assert_true(strstr(ptx, "mma.sync.aligned.m16n8k16") != NULL ||
                        (ts[i] == CG_SM90A && strstr(ptx, "wgmma.mma_async") != NULL));
        int rc = tk_ptxas(ptx, len, cg_target_name(ts[i]), NULL);
        if (rc != 0) fprintf(stderr, "%s: ptxas failed for %s\n", what, cg_target_name(ts[i]));
        assert_int_equal(rc, 0);
        cg_program_free(p);
    }
}

/* ---- matrix products -------------------------------------------------------- */

/* a[.., M, K] @ b[.., K, N] of one dtype, optionally with b given as
 * [.., N, K] and transposed in the region; result returned as is. */
static ir_graph *mm_plain(ir_dtype dt, ir_shape sa, ir_shape sb, bool bt) {
    ir_graph *g = ir_graph_new("mm", NULL);
    ir_id a = ir_add_input(g, "a", dt, &sa);
    ir_id b = ir_add_input(g, "b", dt, &sb);
    if (bt) b = tr(g, b);
    ir_id m = ir_add_matmul(g, a, b);
    ir_add_output(g, &m, 1);
    one_region(g, IR_RK_MATMUL, m, 128, 128, 32);
    return g;
}

static void run_plain(ir_dtype dt, ir_shape sa, ir_shape sb, bool bt, const char *what) {
    ir_graph *g = mm_plain(dt, sa, sb, bt);
    check_host(g, what);
    ir_graph_free(g);
}

static void test_mm_f32_odd(void **st) {
    (void)st;
    run_plain(IR_F32, S2(33, 17), S2(17, 65), false, "f32 33x65x17");
    run_plain(IR_F32, S2(1, 1), S2(1, 1), false, "f32 1x1x1");
}

static void test_mm_f16_bf16_odd(void **st) {
    (void)st;
    run_plain(IR_F16, S2(33, 17), S2(17, 65), false, "f16 33x65x17");
    run_plain(IR_BF16, S2(33, 17), S2(17, 65), false, "bf16 33x65x17");
    run_plain(IR_BF16, S2(130, 40), S2(40, 129), false, "bf16 130x129x40");
}

static void test_mm_transposed(void **st) {
    (void)st;
    run_plain(IR_BF16, S2(33, 17), S2(65, 17), true, "bf16 a @ transpose(b)");
    run_plain(IR_F32, S3(2, 9, 31), S3(2, 7, 31), true, "f32 batched a @ transpose(b)");
}

static void test_mm_batch_broadcast(void **st) {
    (void)st;
    run_plain(IR_F32, S4(2, 3, 5, 7), S2(7, 6), false, "f32 [2,3,5,7] @ [7,6]");
    run_plain(IR_BF16, S3(1, 19, 24), S3(4, 24, 11), false, "bf16 [1,19,24] @ [4,24,11]");
    run_plain(IR_F16, S4(2, 1, 9, 16), S4(1, 3, 16, 8), false, "f16 [2,1,9,16] @ [1,3,16,8]");
}

/* gelu_tanh(a @ b + c), bf16, like the benchmark. */
static void test_mm_bias_gelu(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("mm_bias_gelu", NULL);
    ir_shape sa = S2(33, 17), sb = S2(17, 65), sc = {.rank = 1, .dim = {65}};
    ir_id a = ir_add_input(g, "a", IR_BF16, &sa);
    ir_id b = ir_add_input(g, "b", IR_BF16, &sb);
    ir_id c = ir_add_input(g, "c", IR_BF16, &sc);
    ir_id m = ir_add_matmul(g, a, b);
    ir_id y = ir_add_unary(g, IR_OP_GELU_TANH, ir_add_binary(g, IR_OP_ADD, m, c));
    ir_add_output(g, &y, 1);
    one_region(g, IR_RK_MATMUL, m, 64, 64, 32);
    check_host(g, "bf16 gelu_tanh(a @ b + c)");
    check_ptx(g, "bf16 gelu_tanh(a @ b + c)", true);
    ir_graph_free(g);
}

/* f32(x) @ w * 0.5 + r (residual), prologue cast of a bf16 operand to f32,
 * returning the product too (two stores), and a bf16 cast of the sum. */
static void test_mm_residual_cast(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("mm_res", NULL);
    ir_shape sx = S3(3, 21, 18), sw = S2(18, 35), sr = S3(3, 21, 35);
    ir_id x = ir_add_input(g, "x", IR_BF16, &sx);
    ir_id w = ir_add_input(g, "w", IR_F32, &sw);
    ir_id r = ir_add_input(g, "r", IR_F32, &sr);
    ir_id m = ir_add_matmul(g, ir_add_cast(g, x, IR_F32), w);
    ir_id h = ir_add_binary(g, IR_OP_ADD,
                            ir_add_binary(g, IR_OP_MUL, m, ir_add_const(g, 0.5, IR_F32)), r);
    ir_id outs[2] = {ir_add_cast(g, h, IR_BF16), m};
    ir_add_output(g, outs, 2);
    one_region(g, IR_RK_MATMUL, m, 64, 64, 16);
    check_host(g, "bf16(f32(x) @ w * 0.5 + r), x @ w");
    check_ptx(g, "f32 residual", false);
    ir_graph_free(g);
}

/* A bf16 product whose operand is computed in the prologue (x * 2 cast to
 * bf16: the generic operand path), f16 transposed variant for PTX. */
static void test_mm_prologue_generic(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("mm_pro", NULL);
    ir_shape sx = S2(20, 48), sw = S2(40, 48);
    ir_id x = ir_add_input(g, "x", IR_F32, &sx);
    ir_id w = ir_add_input(g, "w", IR_BF16, &sw);
    ir_id xa =
        ir_add_cast(g, ir_add_binary(g, IR_OP_MUL, x, ir_add_const(g, 2.0, IR_F32)), IR_BF16);
    ir_id m = ir_add_matmul(g, xa, tr(g, w));
    ir_add_output(g, &m, 1);
    one_region(g, IR_RK_MATMUL, m, 128, 128, 32);
    check_host(g, "bf16(x * 2) @ transpose(w)");
    check_ptx(g, "bf16 prologue", true);
    ir_graph_free(g);
    g = mm_plain(IR_F16, S3(2, 33, 40), S3(2, 24, 40), true);
    check_ptx(g, "f16 batched transposed", true);
    ir_graph_free(g);
}

/* silu(x @ w1) * (x @ w3): two products sharing A in one region (horizontal). */
static ir_graph *swiglu_graph(ir_dtype dt, int64_t M, int64_t D, int64_t F) {
    ir_graph *g = ir_graph_new("swiglu", NULL);
    ir_shape sx = S2(M, D), sw = S2(D, F);
    ir_id x = ir_add_input(g, "x", dt, &sx);
    ir_id w1 = ir_add_input(g, "w1", dt, &sw);
    ir_id w3 = ir_add_input(g, "w3", dt, &sw);
    ir_id m1 = ir_add_matmul(g, x, w1);
    ir_id m3 = ir_add_matmul(g, x, w3);
    ir_id y = ir_add_binary(g, IR_OP_MUL, ir_add_unary(g, IR_OP_SILU, m1), m3);
    ir_add_output(g, &y, 1);
    one_region(g, IR_RK_MATMUL, m3, 64, 64, 32);
    g->regions[0].fusion |= IR_FUSE_HORIZONTAL;
    return g;
}

static void test_mm_horizontal(void **st) {
    (void)st;
    ir_graph *g = swiglu_graph(IR_BF16, 33, 24, 40);
    check_host(g, "bf16 silu(x @ w1) * (x @ w3)");
    check_ptx(g, "bf16 silu(x @ w1) * (x @ w3)", true);
    ir_graph_free(g);
    g = swiglu_graph(IR_F32, 17, 9, 70);
    check_host(g, "f32 silu(x @ w1) * (x @ w3)");
    ir_graph_free(g);
}

/* ---- attention ------------------------------------------------------------------ */

/* softmax(f32(q @ transpose(k)) * scale) cast to pdt, @ v; dtype dt. With
 * `recip`, the softmax divides as e * recip(sum(e)) through broadcast_to
 * nodes (forms docs/fusion.md allows). */
static ir_graph *attn_graph2(ir_dtype dt, int64_t B, int64_t S, int64_t D, bool recip) {
    ir_graph *g = ir_graph_new("attention", NULL);
    ir_shape s = S4(B, 2, S, D);
    ir_id q = ir_add_input(g, "q", dt, &s);
    ir_id k = ir_add_input(g, "k", dt, &s);
    ir_id v = ir_add_input(g, "v", dt, &s);
    ir_id qk = ir_add_matmul(g, q, tr(g, k));
    ir_id sc = ir_add_binary(g, IR_OP_MUL, dt == IR_F32 ? qk : ir_add_cast(g, qk, IR_F32),
                             ir_add_const(g, 1.0 / (double)D, IR_F32));
    ir_id mx = ir_add_reduce(g, IR_OP_MAX, sc, 1u << 3, true);
    ir_id ex = ir_add_unary(g, IR_OP_EXP, ir_add_binary(g, IR_OP_SUB, sc, mx));
    ir_id sm = ir_add_reduce(g, IR_OP_SUM, ex, 1u << 3, true);
    ir_id p;
    if (recip) {
        ir_shape full = g->nodes[ex].shape;
        p = ir_add_binary(g, IR_OP_MUL,
                          ir_add_broadcast(g, ir_add_unary(g, IR_OP_RECIP, sm), &full), ex);
    } else {
        p = ir_add_binary(g, IR_OP_DIV, ex, sm);
    }
    if (dt != IR_F32) p = ir_add_cast(g, p, dt);
    ir_id o = ir_add_matmul(g, p, v);
    ir_add_output(g, &o, 1);
    one_region(g, IR_RK_ATTENTION, o, 64, 64, 0);
    g->regions[0].mm1 = qk;
    g->regions[0].scores = sc;
    return g;
}

static ir_graph *attn_graph(ir_dtype dt, int64_t B, int64_t S, int64_t D) {
    return attn_graph2(dt, B, S, D, false);
}

/* cg_host_sample (txc bench's check of outputs too large for a full reference): on the buffers of a
 * full host run, re-running a few programs writes elements equal to the full run's, bit for bit,
 * and only those (the two poison bytes agree nowhere else); with a grid of more programs than
 * sampled, fewer elements than the whole output. */
static void check_sample(ir_graph *g, unsigned per_kernel, bool want_partial, const char *what) {
    tx_diag d;
    tx_diag_init(&d, stderr, what, NULL, 0);
    rt_tensor t[8];
    void *bufs[8], *s1[8], *s2[8];
    int64_t bytes[8], syms[1] = {0};
    unsigned nin = 0;
    memset(t, 0, sizeof t);
    nin = fill_inputs(g, t, 99);
    assert_int_equal(g->nodes[ir_output(g)].nin, 1);
    assert_true(drv_host_run(g, t, &t[nin], &d));
    for (unsigned b = 0; b <= nin; b++) {
        size_t sz;
        assert_true(rt_tensor_bytes(&t[b], &sz));
        bufs[b] = t[b].data;
        bytes[b] = (int64_t)sz;
    }
    void *t1[8], *t2[8]; /* one call with both poisons = two calls with one each */
    assert_true(cg_host_sample(g, syms, bufs, NULL, NULL, bytes, nin + 1, per_kernel, NULL, 0, 0xFF,
                               s1, s2, &d));
    assert_true(cg_host_sample(g, syms, bufs, NULL, NULL, bytes, nin + 1, per_kernel, NULL, 0, 0xFF,
                               t1, NULL, &d));
    assert_true(cg_host_sample(g, syms, bufs, NULL, NULL, bytes, nin + 1, per_kernel, NULL, 0, 0x00,
                               t2, NULL, &d));
    for (unsigned b = 0; b <= nin; b++) {
        size_t sz = (size_t)bytes[b];
        assert_true((s1[b] == NULL) == (t1[b] == NULL) && (s2[b] == NULL) == (t2[b] == NULL));
        if (s1[b]) assert_memory_equal(s1[b], t1[b], sz);
        if (s2[b]) assert_memory_equal(s2[b], t2[b], sz);
        free(t1[b]), free(t2[b]);
    }
    for (unsigned b = 0; b < nin; b++) assert_null(s1[b]); /* inputs are only read */
    assert_non_null(s1[nin]);
    size_t es = (size_t)ir_dtype_size(t[nin].dtype);
    int64_t n = rt_numel(&t[nin]), m = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *a = (char *)s1[nin] + i * es, *c = (char *)s2[nin] + i * es;
        if (memcmp(a, c, es)) continue;
        m++;
        assert_memory_equal(a, (char *)t[nin].data + i * es, es);
    }
    if (want_partial ? !(m > 0 && m < n) : m != n)
        fprintf(stderr, "%s: %lld of %lld elements sampled\n", what, (long long)m, (long long)n);
    assert_true(want_partial ? m > 0 && m < n : m == n);
    for (unsigned b = 0; b <= nin; b++) free(s1[b]), free(s2[b]), rt_tensor_free(&t[b]);
}

static void test_host_sample(void **st) {
    (void)st;
    ir_graph *g = mm_plain(IR_BF16, S2(300, 40), S2(40, 260), false);
    check_sample(g, 3, true, "bf16 300x260x40, 3 programs");
    check_sample(g, 100000, false, "bf16 300x260x40, every program");
    ir_graph_free(g);
    g = swiglu_graph(IR_BF16, 200, 24, 136);
    check_sample(g, 2, true, "bf16 silu(x @ w1) * (x @ w3), 2 programs");
    ir_graph_free(g);
    g = attn_graph(IR_BF16, 2, 130, 64);
    check_sample(g, 2, true, "bf16 attention S=130 D=64, 2 programs");
    ir_graph_free(g);
}

/* Operands behind reshapes: split heads (x[S, H*D] -> [S, H, D] -> [H, S, D], a strided view
 * the tile loads read directly) and merged heads of a permuted value (not a strided view: the
 * generic load), both against the interpreter; the bf16 forms assemble with tensor cores. */
static ir_graph *mm_reshape(ir_dtype dt, bool merge) {
    ir_graph *g = ir_graph_new("mmr", NULL);
    static const uint8_t swap01[3] = {1, 0, 2};
    ir_shape sx = merge ? S3(4, 40, 16) : S2(40, 64), sw = merge ? S2(64, 24) : S3(4, 16, 24);
    ir_id x = ir_add_input(g, "x", dt, &sx);
    ir_id w = ir_add_input(g, "w", dt, &sw);
    ir_shape split = S3(40, 4, 16), merged = S2(40, 64);
    ir_id a = merge ? ir_add_reshape(g, ir_add_permute(g, x, swap01), &merged)
                    : ir_add_permute(g, ir_add_reshape(g, x, &split), swap01);
    ir_id m = ir_add_matmul(g, a, w);
    ir_add_output(g, &m, 1);
    one_region(g, IR_RK_MATMUL, m, 64, 64, 32);
    return g;
}

static void test_mm_reshape_views(void **st) {
    (void)st;
    for (int merge = 0; merge < 2; merge++) {
        ir_graph *g = mm_reshape(IR_F32, merge);
        check_host(g, merge ? "f32 matmul, merged heads" : "f32 matmul, split heads");
        ir_graph_free(g);
        g = mm_reshape(IR_BF16, merge);
        check_host(g, merge ? "bf16 matmul, merged heads" : "bf16 matmul, split heads");
        check_ptx(g, merge ? "bf16 matmul, merged heads" : "bf16 matmul, split heads", true);
        ir_graph_free(g);
    }
}

static void test_attention_host(void **st) {
    (void)st;
    static const int64_t ss[] = {1, 17, 64, 130};
    static const int64_t ds[] = {16, 64};
    char what[96];
    for (unsigned i = 0; i < 4; i++)
        for (unsigned j = 0; j < 2; j++) {
            ir_graph *g = attn_graph(IR_BF16, 1, ss[i], ds[j]);
            snprintf(what, sizeof what, "bf16 attention S=%lld D=%lld", (long long)ss[i],
                     (long long)ds[j]);
            check_host(g, what);
            ir_graph_free(g);
        }
    ir_graph *g = attn_graph(IR_F32, 2, 17, 16);
    check_host(g, "f32 attention S=17 D=16");
    ir_graph_free(g);
    g = attn_graph2(IR_BF16, 1, 33, 16, true);
    check_host(g, "bf16 attention, e * recip(sum) through broadcast_to");
    check_ptx(g, "bf16 attention recip", true);
    ir_graph_free(g);
}

static void test_attention_ptx(void **st) {
    (void)st;
    ir_graph *g = attn_graph(IR_BF16, 1, 130, 64);
    check_ptx(g, "bf16 attention D=64", true);
    ir_graph_free(g);
    g = attn_graph(IR_BF16, 2, 1, 128); /* one query row: the key-split (decode) mode */
    setenv("TX_ATTN_KSPLIT", "1", 1);
    check_ptx(g, "bf16 attention S=1 D=128", true);
    unsetenv("TX_ATTN_KSPLIT");
    ir_graph_free(g);
    g = attn_graph(IR_F32, 1, 17, 16);
    check_ptx(g, "f32 attention D=16", false);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mm_f32_odd),          cmocka_unit_test(test_mm_f16_bf16_odd),
        cmocka_unit_test(test_mm_transposed),       cmocka_unit_test(test_mm_batch_broadcast),
        cmocka_unit_test(test_mm_bias_gelu),        cmocka_unit_test(test_mm_residual_cast),
        cmocka_unit_test(test_mm_prologue_generic), cmocka_unit_test(test_mm_horizontal),
        cmocka_unit_test(test_mm_reshape_views),    cmocka_unit_test(test_host_sample),
        cmocka_unit_test(test_attention_host),      cmocka_unit_test(test_attention_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
