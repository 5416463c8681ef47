/* test_simt.c - the SIMT f32 GEMM (matmul.simt; passes/simt.c, codegen/matmul.c):
 * - the planner's geometry of every tile of the space equals codegen's (threads, outputs per
 *   thread, shared memory);
 * - a thread's outputs (cg_sg_row / cg_sg_col) and a thread's tile loads (cg_sg_slot) cover the
 *   tile exactly once, against a model written here that marks every element;
 * - the rule: which products take it (f32, f16 x bf16; not bf16 x bf16), the tile chosen from
 *   the shape (big products 128 x 128; grids that would not fill the GPU smaller tiles; a small
 *   deep-K product short k steps' worth of tiles), unbound sizes 128x128x8, --explain's line;
 * - codegen of every tile of the space (forced into the plan, as txc tune does) for sm_90a and
 *   sm_80 at aligned and ragged sizes: the manifest's template and block, ptxas clean, and no
 *   spills for the single-product kernels at aligned sizes (skipped with a message without
 *   ptxas). */
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
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "tk_compile.h"

static const char *MM = "fn f(a: f32[M, K], b: f32[K, N]) -> f32[M, N] {\n  return a @ b\n}\n";
static const char *NT = "fn f(a: f32[M, K], b: f32[N, K], c: f32[N]) -> f32[M, N] {\n"
                        "  return sigmoid(a @ transpose(b, 0, 1) + c)\n}\n";
static const char *TN = "fn f(a: f32[K, M], b: f32[K, N]) -> f32[M, N] {\n"
                        "  return transpose(a, 0, 1) @ b\n}\n";
static const char *MX = "fn f(a: f16[M, K], b: bf16[K, N]) -> f16[M, N] {\n"
                        "  return f16(a @ b)\n}\n";
static const char *HB = "fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] {\n  return a @ b\n}\n";
static const char *H2 = "fn f(x: f32[M, K], w1: f32[K, N], w3: f32[K, N]) -> f32[M, N] {\n"
                        "  return silu(x @ w1) * (x @ w3)\n}\n";

static void test_geom(void **state) {
    (void)state;
    for (unsigned nmm = 1; nmm <= 2; nmm++) {
        pass_simt_shape s = {.M = 1000, .N = 1000, .K = 1000, .batch = 1, .nmm = nmm};
        int64_t t[64][4];
        unsigned n = pass_simt_space(&s, NULL, t, 64);
        assert_true(n >= (nmm == 1 ? 6u : 3u));
        for (unsigned i = 0; i < n; i++) {
            pass_simt_geom pg = pass_simt_geom_of(t[i][0], t[i][1], t[i][2], nmm);
            cg_sg_geom cg = cg_sg_geom_of(t[i][0], t[i][1], t[i][2], nmm);
            assert_int_equal(pg.tm, cg.tm);
            assert_int_equal(pg.tn, cg.tn);
            assert_int_equal(pg.threads, cg.threads);
            assert_int_equal(cg.tx * (unsigned)cg.tn, t[i][1]);
            assert_int_equal(cg.ty * (unsigned)cg.tm, t[i][0]);
            /* codegen's shared bytes: two buffers of A and of each product's B */
            assert_int_equal(pg.smem_bytes, 2 * cg.bk * (cg.pa + cg.pb * (int64_t)nmm) * 4);
            assert_true(cg.pa % 4 == 0 && cg.pb % 4 == 0); /* 128-bit fragment loads */
            if (nmm > 1) assert_true(cg.tm == 4 && cg.tn == 4);
        }
    }
}

/* Every output of the tile is owned by exactly one (thread, register), and a thread's groups of
 * 4 are consecutive (one 128-bit load each). */
static void check_cover(int64_t bm, int64_t bn, int64_t bk) {
    cg_sg_geom g = cg_sg_geom_of(bm, bn, bk, 1);
    int *seen = calloc((size_t)(bm * bn), sizeof *seen);
    for (unsigned ty = 0; ty < g.ty; ty++)
        for (unsigned tx = 0; tx < g.tx; tx++)
            for (int i = 0; i < g.tm; i++)
                for (int j = 0; j < g.tn; j++) {
                    int64_t r = cg_sg_row(&g, ty, i), c = cg_sg_col(&g, tx, j);
                    assert_true(r >= 0 && r < bm && c >= 0 && c < bn);
                    if (i % 4) assert_int_equal(r, cg_sg_row(&g, ty, i - 1) + 1);
                    if (j % 4) assert_int_equal(c, cg_sg_col(&g, tx, j - 1) + 1);
                    seen[r * bn + c]++;
                }
    for (int64_t e = 0; e < bm * bn; e++)
        if (seen[e] != 1)
            fail_msg("%lldx%lld: output %lld owned %d times", (long long)bm, (long long)bn,
                     (long long)e, seen[e]);
    /* the loads of both operands, for either fast axis */
    for (int op = 0; op < 2; op++)
        for (int fastmn = 0; fastmn < 2; fastmn++) {
            int64_t ext = op ? bn : bm, fast = fastmn ? ext : bk, slow = fastmn ? bk : ext;
            int nslot = (int)(ext * bk / g.threads);
            int *hit = calloc((size_t)(ext * bk), sizeof *hit);
            for (unsigned t = 0; t < g.threads; t++)
                for (int s = 0; s < nslot; s++) {
                    int64_t df, ds;
                    cg_sg_slot(fast, g.threads, s, &df, &ds);
                    int64_t f = t % fast + df, w = t / fast + ds;
                    assert_true(f < fast && w < slow);
                    /* the model: element t + s x threads in fast-major order */
                    int64_t e = t + (int64_t)s * g.threads;
                    assert_int_equal(f, e % fast);
                    assert_int_equal(w, e / fast);
                    hit[w * fast + f]++;
                }
            for (int64_t e = 0; e < ext * bk; e++) assert_int_equal(hit[e], 1);
            free(hit);
        }
    free(seen);
}

static void test_cover(void **state) {
    (void)state;
    pass_simt_shape s = {.M = 1000, .N = 1000, .K = 1000, .batch = 1, .nmm = 1};
    int64_t t[64][4];
    unsigned n = pass_simt_space(&s, NULL, t, 64);
    for (unsigned i = 0; i < n; i++) check_cover(t[i][0], t[i][1], t[i][2]);
}

/* The planner's schedule of src: matmul.simt (or not), the tile in the space. */
static void rule_of(const char *src, int64_t M, int64_t N, int64_t K, bool bound, int32_t *tile) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, bound);
    const ir_region *rg = &g->regions[tk_mm_region(g)];
    tile[0] = rg->sched.id == PASS_SCH_MATMUL_SIMT ? rg->sched.p[0] : 0;
    tile[1] = rg->sched.p[1], tile[2] = rg->sched.p[2], tile[3] = rg->sched.p[3];
    ir_graph_free(g);
}

static void test_rule(void **state) {
    (void)state;
    int32_t t[4];
    rule_of(MM, 4096, 4096, 4096, true, t);
    assert_int_equal(t[0], 128);
    assert_int_equal(t[1], 128);
    assert_int_equal(t[3], 1); /* 1024 tiles fill the GPU: no split-K */
    rule_of(MM, 2048, 2048, 2048, true, t);
    assert_int_equal(t[0] * t[1], 128 * 128); /* 256 tiles: two waves of 128 x 128 at 1 per SM */
    rule_of(MX, 2048, 2048, 2048, true, t);   /* f16 x bf16: promoted to f32 */
    assert_int_equal(t[0], 128);
    rule_of(HB, 2048, 2048, 2048, true, t); /* tensor cores */
    assert_int_equal(t[0], 0);
    rule_of(MM, 64, 64, 256, true, t); /* latency-bound: more than one block, short k steps */
    assert_true(t[0] <= 32 && t[1] <= 32);
    rule_of(MM, 256, 512, 1024, true, t);             /* 8 tiles of 128 x 128 would idle most SMs */
    assert_true(t[0] * t[1] <= 64 * 64 || t[3] >= 4); /* smaller tiles or split-K */
    rule_of(MM, 64, 64, 64, false, t);                /* unbound: the default */
    assert_int_equal(t[0], 128);
    assert_int_equal(t[1], 128);
    assert_int_equal(t[2], 8);
    rule_of(H2, 512, 512, 512, true, t); /* horizontal: 4 x 4 outputs per thread */
    assert_true(t[0] > 0);
    /* the model: more tiles than SMs at 128 x 128 cost less per flop than 32 x 32 */
    pass_simt_shape s = {.M = 4096, .N = 4096, .K = 4096, .batch = 1, .nmm = 1};
    pass_simt_time a, b;
    const pass_gpu *gpu = pass_gpu_find("h200");
    assert_true(pass_simt_model(&s, gpu, 0, 128, 128, 8, 1, &a) <
                pass_simt_model(&s, gpu, 0, 32, 32, 32, 1, &b));
    assert_int_equal(a.tiles, 32 * 32);
    assert_false(a.step_bound);
    s = (pass_simt_shape){.M = 64, .N = 64, .K = 256, .batch = 1, .nmm = 1};
    pass_simt_model(&s, gpu, 0, 64, 64, 8, 1, &a);
    assert_true(a.step_bound);
    assert_int_equal(a.tiles, 1);
}

/* [matmul.simt.splitk]: split-K where the output tiles would not fill the GPU and K is long
 * (the ranks from the model, within the cluster size), never for a grid that fills it, a short
 * K, two products or a target without clusters; the model prices the split faster there. */
static void test_splitk_rule(void **state) {
    (void)state;
    int32_t t[4];
    rule_of(MM, 512, 512, 8192, true, t); /* 16 tiles of 128 x 128, 1024 k steps */
    assert_true(t[0] > 0);
    assert_true(t[3] == 2 || t[3] == 4 || t[3] == 8);
    rule_of(MM, 300, 200, 5000, true, t); /* ragged, K >> M, N */
    assert_true(t[0] > 0 && t[3] > 1);
    rule_of(MM, 2048, 2048, 2048, true, t);
    assert_int_equal(t[3], 1);
    rule_of(MM, 512, 512, 64, true, t); /* short K */
    assert_int_equal(t[3], 1);
    rule_of(H2, 128, 128, 8192, true, t); /* two products: no split */
    assert_true(t[0] > 0);
    assert_int_equal(t[3], 1);
    rule_of(MM, 512, 512, 8192, false, t); /* unbound */
    assert_int_equal(t[3], 1);
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_simt_shape s = {.M = 512, .N = 512, .K = 8192, .batch = 1, .nmm = 1};
    pass_simt_time a, b;
    assert_true(pass_simt_model(&s, gpu, 0, 128, 128, 8, 8, &b) <
                pass_simt_model(&s, gpu, 0, 128, 128, 8, 1, &a));
    assert_int_equal(b.tiles, 16);
    assert_int_equal(b.nk, 128);
    assert_true(b.red_us > 0 && a.red_us == 0);
    assert_false(pass_simt_split_ok(&s, gpu, 128, 128, 8, 16)); /* beyond a portable cluster */
    pass_gpu nocl = *gpu;
    nocl.cluster_max = 0; /* sm_80: no clusters */
    assert_false(pass_simt_split_ok(&s, &nocl, 128, 128, 8, 2));
    assert_true(pass_simt_split_ok(&s, gpu, 128, 128, 8, 2));
    s.K = 64;
    assert_false(pass_simt_split_ok(&s, gpu, 128, 128, 8, 4)); /* 8 steps: 2 a rank */
}

/* Codegen of src at M x N x K with the region's schedule forced to (bm, bn, bk) for target t:
 * the template, the block, ptxas; returns the bytes spilled (-1: no ptxas). */
static int forced_sk(const char *src, int64_t M, int64_t N, int64_t K, int32_t bm, int32_t bn,
                     int32_t bk, int32_t sk, cg_target tg, const char *arch) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    ir_region *rg = &g->regions[tk_mm_region(g)];
    assert_int_equal(rg->sched.id, PASS_SCH_MATMUL_SIMT);
    rg->sched.p[0] = bm, rg->sched.p[1] = bn, rg->sched.p[2] = bk, rg->sched.p[3] = sk;
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    cg_program *p = cg_program_new(g, tg, &d);
    assert_non_null(p);
    const cg_kernel *k = NULL;
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        if (cg_program_kernel(p, i)->region == (int)tk_mm_region(g)) k = cg_program_kernel(p, i);
    assert_non_null(k);
    cg_sg_geom sg = cg_sg_geom_of(bm, bn, bk, 1);
    char want[64];
    snprintf(want, sizeof want, "simt %dx%dx%d t%dx%d", bm, bn, bk, sg.tm, sg.tn);
    if (strncmp(k->tmpl, want, strlen(want)) != 0) fail_msg("template %s, want %s", k->tmpl, want);
    assert_int_equal(k->block[0], sg.threads);
    char skw[16];
    snprintf(skw, sizeof skw, " sk%d", sk);
    bool split = sk > 1 && tg >= CG_SM90; /* clusters: sm_90 and sm_90a */
    assert_int_equal(strstr(k->tmpl, skw) != NULL, split);
    assert_int_equal(k->cluster, split ? (unsigned)sk : 0u);
    if (split) { /* grid y: N tiles x ranks; the partial tile in dynamic shared memory */
        assert_int_equal(k->work[1].dim[0], ((N + bn - 1) / bn) * sk);
        assert_int_equal(k->per[1], 1);
        assert_true(k->smem_bytes >= pass_simt_part_bytes(bm, bn, sk));
    }
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    assert_non_null(strstr(ptx, "ld.shared.v4.f32"));
    assert_non_null(strstr(ptx, "fma.rn.f32"));
    tk_ptxas_stats ps;
    int rc = tk_ptxas_stats_of(ptx, len, arch, &ps);
    int spill = -1;
    if (rc != -1) {
        if (rc != 0) fail_msg("ptxas -arch=%s failed on %s", arch, want);
        spill = ps.spill < 0 ? 0 : ps.spill;
        if (spill > 0 || ps.warning[0])
            print_message("note: %s %s M=%lld N=%lld K=%lld: %d registers, %d bytes spilled %s\n",
                          want, arch, (long long)M, (long long)N, (long long)K, ps.regs, spill,
                          ps.warning);
    }
    cg_program_free(p);
    ir_graph_free(g);
    return spill;
}

static int forced(const char *src, int64_t M, int64_t N, int64_t K, int32_t bm, int32_t bn,
                  int32_t bk, cg_target tg, const char *arch) {
    return forced_sk(src, M, N, K, bm, bn, bk, 1, tg, arch);
}

static void test_kernels(void **state) {
    (void)state;
    if (access(TK_PTXAS, X_OK) != 0) print_message("skip: ptxas not found at " TK_PTXAS "\n");
    pass_simt_shape s = {.M = 1000, .N = 1000, .K = 1000, .batch = 1, .nmm = 1};
    int64_t t[64][4];
    unsigned n = pass_simt_space(&s, NULL, t, 64);
    for (unsigned i = 0; i < n; i++) {
        int32_t bm = (int32_t)t[i][0], bn = (int32_t)t[i][1], bk = (int32_t)t[i][2];
        int sp = forced(MM, 512, 512, 512, bm, bn, bk, CG_SM90A, "sm_90a");
        if (sp > 0) fail_msg("simt %dx%dx%d at 512^3 spills %d bytes", bm, bn, bk, sp);
        forced(NT, 257, 130, 77, bm, bn, bk, CG_SM90A, "sm_90a"); /* masks, B k-contiguous */
        forced(TN, 100, 300, 33, bm, bn, bk, CG_SM80, "sm_80");   /* A m-contiguous */
    }
    forced(MX, 300, 200, 130, 128, 128, 8, CG_SM80, "sm_80");
    forced(MX, 2048, 2048, 2048, 128, 128, 8, CG_SM90A, "sm_90a");
}

/* Split-K kernels ([matmul.simt.splitk]) of every rank count at aligned and ragged sizes, both
 * B orders, an epilogue: the cluster, the grid, ptxas clean without spills at aligned sizes; on
 * sm_80 the same schedule builds the unsplit kernel. */
static void test_splitk_kernels(void **state) {
    (void)state;
    static const int32_t tiles[][3] = {{128, 128, 8}, {64, 64, 16}, {32, 32, 32}};
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++)
        for (int32_t sk = 2; sk <= PASS_SIMT_MAX_SPLITS; sk *= 2) {
            const int32_t *t = tiles[i];
            int sp = forced_sk(MM, 512, 512, 8192, t[0], t[1], t[2], sk, CG_SM90A, "sm_90a");
            if (sp > 0) fail_msg("simt %dx%dx%d sk%d spills %d bytes", t[0], t[1], t[2], sk, sp);
            forced_sk(NT, 257, 130, 3001, t[0], t[1], t[2], sk, CG_SM90A, "sm_90a");
        }
    forced_sk(TN, 100, 300, 2000, 64, 64, 16, 4, CG_SM80, "sm_80");
}

static void test_explain(void **state) {
    (void)state;
    ir_graph *g = tk_plan_mnk(MM, 64, 64, 256, true);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    uint32_t r = tk_mm_region(g);
    pass_cost c;
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_region_cost_ix(g, &ix, r, gpu, &c);
    pass_model m;
    pass_model_region(g, &ix, r, gpu, &c, &m);
    assert_string_equal(m.schedule, "matmul.simt");
    assert_true(m.time_us > 0 && m.sgt.tiles >= 4);
    pass_index_free(&ix);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geom),           cmocka_unit_test(test_cover),
        cmocka_unit_test(test_rule),           cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_explain),        cmocka_unit_test(test_splitk_rule),
        cmocka_unit_test(test_splitk_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
