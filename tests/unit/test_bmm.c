/* test_bmm.c - true batched products on the sm_90a wgmma kernel ([matmul.wgmma.batch]):
 *
 * - pass_wg_batch_coord (the batch coordinate of an operand whose leading dims broadcast) against
 *   a model written here: NumPy's broadcasting as element strides (0 on a dim of extent 1 or a
 *   dim the operand lacks), every flat batch element of several product / operand shapes;
 * - the planner's facts: batch elements, M of one element, the region's schedule matmul.wgmma and
 *   its space without split-K, stream-K or multicast tiles; the fill rule and odd pitches keep
 *   mma.sync and --explain's text names [matmul.wgmma.batch];
 * - [matmul.wgmma.stage] of batched operands: odd pitches staged whole ([B x rows, pitch]) where
 *   the model prices staging + wgmma below the mma.sync kernel's scalar loads, kept on mma.sync
 *   where not; the staging kernels and the rank-3 maps at the copies' pitch (runtime plan);
 * - the manifest and the runtime plan: every map rank 3 ({cols, rows of ONE batch element, the
 *   buffer's own batch elements}, box {.., .., 1}: TMA's bounds clip a tile's rows at its batch
 *   element, no read into the next one), the resolved extents and the encoder's checks, the grid
 *   over batch x M tiles x N tiles;
 * - x[:, None] @ w (a reshape inserting A's unit batch dim): batched wgmma, A's map over the
 *   input's own batch elements;
 * - ptxas -arch=sm_90a of batched kernels (plain, broadcast heads, x[:, None] @ w, q @ k^T,
 *   the looped epilogue with a bias, an M-contiguous A with a residual, an f32 output, an
 *   odd-pitch output, unbound batch dims): no spills (skipped with a message without ptxas). */
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

#include "codegen/cg_impl.h"
#include "driver/driver.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "tk_compile.h"

static const char *SRC_PLAIN =
    "fn f(a: bf16[B, M, K], b: bf16[B, K, N]) -> bf16[B, M, N] { return a @ b }\n";
static const char *SRC_HEADS = "fn f(a: bf16[B, 1, M, K], b: bf16[1, H, K, N]) -> bf16[B, H, M, N] "
                               "{\n  return a @ b\n}\n";
/* x[:, None] @ w: A's unit batch dim comes from a reshape of a [B, M, K] input (the operand's
 * leading dims [B, 1] against the product's [B, H]; its base's are [B]) */
static const char *SRC_UNSQ =
    "fn f(x: bf16[B, M, K], w: bf16[H, K, N], c: bf16[H, 1, N]) -> bf16[B, H, M, N] {\n"
    "  return reshape(x, (B, 1, M, K)) @ w + c\n}\n";
static const char *SRC_QK = "fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D]) -> bf16[B, H, S, S] {\n"
                            "  return (q @ transpose(k, 2, 3)) * 0.125\n}\n";
static const char *SRC_GELU =
    "fn f(a: bf16[B, M, K], b: bf16[B, K, N], c: bf16[N]) -> bf16[B, M, N] "
    "{\n  return gelu_tanh(a @ b + c)\n}\n";
static const char *SRC_AT =
    "fn f(a: bf16[B, K, M], b: bf16[B, K, N], r: bf16[B, M, N]) -> bf16[B, M, N] {\n"
    "  return transpose(a, 1, 2) @ b + r\n}\n";
static const char *SRC_F32 =
    "fn f(a: f16[M, K], b: f16[B, K, N]) -> f32[B, M, N] { return f32(a @ b) }\n";

/* The model: operand element offset of batch element b as NumPy broadcasting computes it, the
 * operand's batch strides (row-major over its own leading dims) zeroed where it broadcasts. */
static int64_t model_coord(const int64_t *mm, unsigned mr, const int64_t *op, unsigned orank,
                           int64_t b) {
    unsigned nb = mr - 2, on = orank - 2;
    int64_t idx[IR_MAX_RANK] = {0}, ostr[IR_MAX_RANK] = {0}, s = 1;
    for (unsigned i = nb; i-- > 0;) idx[i] = b % mm[i], b /= mm[i];
    for (unsigned j = on; j-- > 0;) ostr[j] = op[j] == 1 ? 0 : s, s *= op[j];
    int64_t c = 0;
    for (unsigned j = 0; j < on; j++) c += idx[j + nb - on] * ostr[j];
    return c;
}

static ir_shape shp(unsigned r, const int64_t *d) {
    ir_shape s = {.rank = (uint8_t)r};
    for (unsigned i = 0; i < r; i++) s.dim[i] = d[i];
    return s;
}

static void test_coord(void **state) {
    (void)state;
    static const int64_t mm5[5] = {2, 3, 4, 7, 9};
    static const int64_t ops[][5] = {
        {2, 3, 4, 7, 9}, {2, 1, 4, 7, 9}, {1, 3, 1, 7, 9}, {1, 1, 1, 7, 9}, {3, 4, 7, 9},
        {1, 4, 7, 9},    {4, 7, 9},       {7, 9},          {2, 3, 1, 7, 9},
    };
    static const unsigned orank[] = {5, 5, 5, 5, 4, 4, 3, 2, 5};
    ir_shape m = shp(5, mm5);
    for (unsigned o = 0; o < sizeof orank / sizeof orank[0]; o++) {
        ir_shape os = shp(orank[o], ops[o]);
        int64_t nob = pass_wg_nbatch(&os);
        for (int64_t b = 0; b < 24; b++) {
            int64_t c = pass_wg_batch_coord(&m, &os, b);
            assert_int_equal(c, model_coord(mm5, 5, ops[o], orank[o], b));
            assert_true(c >= 0 && c < nob); /* inside the operand's own batch elements */
        }
    }
    /* an operand with every batch dim of the product: the identity */
    ir_shape full = shp(5, ops[0]);
    for (int64_t b = 0; b < 24; b++) assert_int_equal(pass_wg_batch_coord(&m, &full, b), b);
    /* the heads form: [B, 1, M, K] and [1, H, K, N] against [B, H, M, N] */
    static const int64_t m4[4] = {8, 16, 256, 256}, a4[4] = {8, 1, 256, 128},
                         b4[4] = {1, 16, 128, 256};
    ir_shape mh = shp(4, m4), sa = shp(4, a4), sb = shp(4, b4);
    for (int64_t b = 0; b < 128; b++) {
        assert_int_equal(pass_wg_batch_coord(&mh, &sa, b), b / 16);
        assert_int_equal(pass_wg_batch_coord(&mh, &sb, b), b % 16);
    }
    int64_t sym[3] = {IR_DIM_SYM(0), 64, 64};
    ir_shape ss = shp(3, sym);
    assert_int_equal(pass_wg_nbatch(&ss), -1);
}

static void test_facts(void **state) {
    (void)state;
    pass_wg_shape s;
    ir_schedule sc;
    fe_define d[4] = {{"B", 16}, {"M", 1024}, {"K", 1024}, {"N", 1024}};
    assert_true(tk_wg_facts(SRC_PLAIN, d, 4, &s, &sc));
    assert_int_equal(s.batch, 16);
    assert_int_equal(s.M, 1024);
    assert_int_equal(s.N, 1024);
    assert_int_equal(s.K, 1024);
    assert_int_equal(sc.id, PASS_SCH_MATMUL_WGMMA);
    /* the space: the plain persistent kernel only, tiles over batch x M x N */
    pass_wg_tile sp[PASS_WG_SPACE];
    unsigned n = pass_wg_space(&s, sp, PASS_WG_SPACE);
    assert_true(n > 0);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(sp[i].splits, 1);
        assert_int_equal(sp[i].mcast, 1);
        assert_int_equal(sp[i].tiles, 16 * ((1024 + sp[i].bm - 1) / sp[i].bm) *
                                          ((1024 + sp[i].bn - 1) / sp[i].bn));
    }
    fe_define dh[5] = {{"B", 8}, {"H", 16}, {"M", 256}, {"K", 128}, {"N", 256}};
    assert_true(tk_wg_facts(SRC_HEADS, dh, 5, &s, &sc));
    assert_int_equal(s.batch, 128);
    assert_int_equal(s.M, 256);
    assert_false(s.b_kmajor);
    fe_define du5[5] = {{"B", 8}, {"M", 1024}, {"K", 512}, {"H", 8}, {"N", 64}};
    assert_true(tk_wg_facts(SRC_UNSQ, du5, 5, &s, &sc));
    assert_int_equal(s.batch, 64);
    assert_int_equal(s.M, 1024);
    assert_int_equal(sc.id, PASS_SCH_MATMUL_WGMMA);
    fe_define dq[4] = {{"B", 2}, {"H", 3}, {"S", 100}, {"D", 64}};
    assert_true(tk_wg_facts(SRC_QK, dq, 4, &s, &sc));
    assert_true(s.b_kmajor); /* k^T: B's contiguous axis is K */
    fe_define da[4] = {{"B", 2}, {"M", 200}, {"K", 72}, {"N", 96}};
    assert_true(tk_wg_facts(SRC_AT, da, 4, &s, &sc));
    assert_false(s.a_kmajor);
    /* the fill rule: 7 x 16 x 16 per element keeps mma.sync */
    fe_define dt[4] = {{"B", 64}, {"M", 7}, {"K", 16}, {"N", 16}};
    assert_false(tk_wg_facts(SRC_PLAIN, dt, 4, &s, &sc));
    assert_int_equal(s.batch_why, 1);
    assert_int_not_equal(sc.id, PASS_SCH_MATMUL_WGMMA);
    assert_true(pass_wg_batch_fill_ok(32, 32, 32));
    assert_false(pass_wg_batch_fill_ok(7, 16, 16));
    assert_true(pass_wg_batch_fill_ok(-1, 16, 16));
    /* an odd pitch (200-byte B rows) of a short-K product: staging is priced, and the mma.sync
     * kernel reading B in place (4 x 32 x 100 scalar loads per M tile, over 32+ tiles) is the
     * faster */
    fe_define dp[4] = {{"B", 4}, {"M", 1024}, {"K", 32}, {"N", 100}};
    assert_true(tk_wg_facts(SRC_PLAIN, dp, 4, &s, &sc));
    assert_int_equal(s.batch_why, 0);
    assert_int_equal(s.nstage, 1);
    assert_true(s.b_staged && !s.a_staged);
    assert_true(s.sync_loads > 0);
    assert_int_equal(sc.id, PASS_SCH_NONE);
    fe_define du[3] = {{"M", 1024}, {"K", 32}, {"N", 100}}; /* B unbound: not priced */
    assert_false(tk_wg_facts(SRC_PLAIN, du, 3, &s, &sc));
    assert_int_equal(s.batch_why, 2);
    for (unsigned i = 0; i < 2; i++) {
        cg_program *p = tk_compile_src(SRC_PLAIN, CG_SM90A, i ? dp : dt, 4, NULL);
        assert_int_equal(tk_region_kernel(p)->tmpl[0], 0);
        assert_null(strstr(cg_program_ptx(p, NULL), "wgmma"));
        cg_program_free(p);
    }
}

/* The heads form at ragged sizes: 3-D maps of one batch element's rows, resolved by the runtime
 * plan, the grid over batch x M tiles x N tiles. */
static void test_maps(void **state) {
    (void)state;
    fe_define d[5] = {{"M", 130}, {"K", 72}, {"N", 40}, {"B", 2}, {"H", 3}};
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_HEADS, CG_SM90A, d, 5, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma-tma-ws"));
    assert_non_null(strstr(k->tmpl, " bat"));
    /* 80-byte output rows: the TMA store where its slots fit beside the ring (else registers) */
    unsigned nm = strstr(k->tmpl, " ts") ? 3 : 2;
    assert_int_equal(k->ntmaps, nm);
    const cg_tmap *ta = &k->tmaps[0], *tb = &k->tmaps[1], *to = &k->tmaps[nm - 1];
    for (unsigned i = 0; i < nm; i++) {
        assert_int_equal(k->tmaps[i].rank, 3);
        assert_int_equal(k->tmaps[i].box[2], 1);
        assert_int_equal(k->tmaps[i].outer.rank, 2);
    }
    assert_int_equal(ta->dim[0], 72); /* {K, M}: M of one batch element, not B x M */
    assert_int_equal(ta->dim[1], 130);
    assert_int_equal(ta->outer.dim[1], 1);
    assert_int_equal(tb->dim[0], 40);
    assert_int_equal(tb->dim[1], 72);
    assert_int_equal(tb->outer.dim[0], 1);
    if (nm == 3) {
        assert_int_equal(to->dim[0], 40);
        assert_int_equal(to->dim[1], 130);
        assert_int_equal(k->bufs[to->buf].kind, CG_BUF_OUTPUT);
        assert_non_null(strstr(cg_program_ptx(p, NULL), "cp.async.bulk.tensor.3d.global"));
    }
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.3d.shared::cluster.global"));
    int64_t syms[8];
    int bi = ir_sym_find(g, "B"), hi = ir_sym_find(g, "H");
    assert_true(bi >= 0 && hi >= 0);
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    syms[bi] = 2, syms[hi] = 3;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i];
    assert_non_null(kd);
    const rt_kparam *pa = &kd->params[k->nbufs + k->nsyms];
    static const int64_t want[3][3] = {{72, 130, 2}, {40, 72, 3}, {40, 130, 6}};
    for (unsigned i = 0; i < nm; i++) {
        const rt_kparam *q = pa + i;
        assert_int_equal(q->kind, RT_KP_TMAP);
        assert_int_equal(q->tmap.rank, 3);
        for (unsigned j = 0; j < 3; j++) assert_int_equal(q->tmap.dim[j], want[i][j]);
        char e[200];
        assert_true(rt_tmap_check(&q->tmap, 4096, e, sizeof e));
    }
    /* 6 batch elements x ceil(130 / bm) x ceil(40 / bn) tiles: a CTA each (below 132) */
    int64_t bm = 128, bn = 0;
    unsigned bmv, bnv, st;
    assert_int_equal(sscanf(k->tmpl, "wgmma-tma-ws %ux%ux64 s%u", &bmv, &bnv, &st), 3);
    bm = bmv, bn = bnv;
    uint64_t grid = (uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2];
    assert_int_equal(grid, 6 * ((130 + bm - 1) / bm) * ((40 + bn - 1) / bn));
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
    /* x[:, None] @ w at ragged sizes: A's map reads the [B, M, K] input, its batch elements B */
    fe_define du[5] = {{"B", 3}, {"M", 130}, {"K", 72}, {"H", 5}, {"N", 40}};
    p = tk_compile_src(SRC_UNSQ, CG_SM90A, du, 5, &g);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, " bat"));
    assert_int_equal(k->tmaps[0].rank, 3);
    assert_int_equal(k->tmaps[0].dim[0], 72);
    assert_int_equal(k->tmaps[0].dim[1], 130);
    assert_int_equal(k->tmaps[0].outer.rank, 1);
    assert_int_equal(k->tmaps[0].outer.dim[0], 3);
    assert_int_equal(k->tmaps[1].outer.rank, 1);
    assert_int_equal(k->tmaps[1].outer.dim[0], 5);
    cg_program_free(p);
    ir_graph_free(g);
}

/* The region's wgmma kernel (after any staging kernels of the same region). */
static const cg_kernel *gemm_kernel(const cg_program *p) {
    for (unsigned k = 0; k < cg_program_nkernels(p); k++)
        if (!strncmp(cg_program_kernel(p, k)->tmpl, "wgmma", 5)) return cg_program_kernel(p, k);
    fail_msg("no wgmma kernel");
    return NULL;
}

static const char *SRC_PRIME =
    "fn f(a: f16[B, M, K], b: f16[B, K, N]) -> f16[B, M, N] { return a @ b }\n";

/* [matmul.wgmma.stage] of a batched product (held-out prime_bmm_f16's sizes, every row pitch
 * odd): both operands staged whole ([B x rows, pitch] copies), the price against the mma.sync
 * kernel's scalar loads, the schedule, the staging kernels, and the GEMM's rank-3 maps reading
 * the copies at their pitch with one batch element's rows (resolved by the runtime plan). */
static void test_stage(void **state) {
    (void)state;
    fe_define d[4] = {{"B", 7}, {"M", 509}, {"K", 257}, {"N", 1021}};
    pass_wg_shape s;
    ir_schedule sc;
    assert_true(tk_wg_facts(SRC_PRIME, d, 4, &s, &sc));
    assert_int_equal(s.batch, 7);
    assert_true(s.a_staged && s.b_staged);
    assert_int_equal(s.nstage, 2);
    double want = 7.0 * 509 * (257 + 320) * 2 + 7.0 * 257 * (1021 + 1024) * 2;
    assert_true(s.stage_bytes > want - 0.5 && s.stage_bytes < want + 0.5);
    /* A once per N tile, B once per M tile of the mma.sync plan (tiles of at most 128) */
    assert_true(s.sync_loads >= 7.0 * 509 * 257 * 8 + 7.0 * 257 * 1021 * 4);
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_wg_tile t;
    pass_wg_time tm;
    assert_true(pass_wg_pick(&s, gpu, -1, &t));
    double us = pass_wg_model(&s, &t, gpu, -1, &tm);
    assert_true(tm.stage_us > 0 && us < s.sync_us);
    assert_int_equal(sc.id, PASS_SCH_MATMUL_WGMMA);
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_PRIME, CG_SM90A, d, 4, &g);
    const cg_kernel *k = gemm_kernel(p);
    assert_non_null(strstr(k->tmpl, " bat"));
    unsigned nst = 0;
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        nst += !strncmp(cg_program_kernel(p, i)->tmpl, "stage pitch ", 12);
    assert_int_equal(nst, 2);
    assert_int_equal(k->ntmaps, 2);
    static const int64_t dims[2][3] = {{257, 509, 7}, {1021, 257, 7}}, pitch[2] = {320, 1024};
    for (unsigned i = 0; i < 2; i++) {
        assert_int_equal(k->tmaps[i].rank, 3);
        assert_int_equal(k->tmaps[i].pitch, pitch[i]);
        assert_int_equal(k->tmaps[i].dim[0], dims[i][0]);
        assert_int_equal(k->tmaps[i].dim[1], dims[i][1]);
        assert_int_equal(k->bufs[k->tmaps[i].buf].kind, CG_BUF_TEMP);
    }
    int64_t syms[8];
    for (unsigned i = 0; i < g->nsyms; i++) syms[i] = g->syms[i].value;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i]; /* the GEMM: after its stages */
    assert_non_null(kd);
    for (unsigned i = 0; i < 2; i++) {
        const rt_kparam *q = &kd->params[k->nbufs + k->nsyms + i];
        assert_int_equal(q->kind, RT_KP_TMAP);
        for (unsigned j = 0; j < 3; j++) assert_int_equal(q->tmap.dim[j], dims[i][j]);
        assert_int_equal(q->tmap.pitch, pitch[i]);
        char e[200];
        assert_true(rt_tmap_check(&q->tmap, 4096, e, sizeof e));
    }
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

static void ptxas_of(const char *src, const fe_define *defs, unsigned nd) {
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, nd, NULL);
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    if (!strstr(ptx, "wgmma.mma_async")) fail_msg("no wgmma: %s", src);
    assert_non_null(strstr(gemm_kernel(p)->tmpl, " bat"));
    tk_ptxas_stats st;
    int rc = tk_ptxas_stats_of(ptx, len, "sm_90a", &st);
    cg_program_free(p);
    if (rc == -1) {
        print_message("ptxas not found: not assembled\n");
        skip();
    }
    assert_int_equal(rc, 0);
    if (st.warning[0]) fail_msg("ptxas: %s", st.warning);
    assert_int_equal(st.spill, 0);
}

static void test_ptxas(void **state) {
    (void)state;
    fe_define d[4] = {{"B", 16}, {"M", 1024}, {"K", 1024}, {"N", 1024}};
    ptxas_of(SRC_PLAIN, d, 4);
    fe_define dr[4] = {{"B", 3}, {"M", 77}, {"K", 200}, {"N", 136}};
    ptxas_of(SRC_PLAIN, dr, 4);
    ptxas_of(SRC_PLAIN, dr + 1, 3); /* B unbound */
    fe_define dh[5] = {{"B", 8}, {"H", 16}, {"M", 256}, {"K", 128}, {"N", 256}};
    ptxas_of(SRC_HEADS, dh, 5);
    fe_define du[5] = {{"B", 3}, {"M", 130}, {"K", 72}, {"H", 5}, {"N", 40}};
    ptxas_of(SRC_UNSQ, du, 5);
    fe_define dq[4] = {{"B", 2}, {"H", 3}, {"S", 100}, {"D", 64}}; /* 200-byte rows: registers */
    ptxas_of(SRC_QK, dq, 4);
    fe_define dg[4] = {{"B", 8}, {"M", 512}, {"K", 1024}, {"N", 2048}};
    ptxas_of(SRC_GELU, dg, 4);
    fe_define da[4] = {{"B", 2}, {"M", 200}, {"K", 72}, {"N", 96}};
    ptxas_of(SRC_AT, da, 4);
    fe_define df[4] = {{"B", 5}, {"M", 33}, {"K", 64}, {"N", 48}};
    ptxas_of(SRC_F32, df, 4);
    fe_define dp[4] = {{"B", 7}, {"M", 509}, {"K", 257}, {"N", 1021}}; /* both staged */
    ptxas_of(SRC_PRIME, dp, 4);
    fe_define ds[4] = {{"B", 6}, {"M", 600}, {"K", 1001}, {"N", 512}}; /* a 2-D A staged */
    ptxas_of(SRC_F32, ds, 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coord), cmocka_unit_test(test_facts), cmocka_unit_test(test_maps),
        cmocka_unit_test(test_stage), cmocka_unit_test(test_ptxas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
