/* test_gemv.c - the GEMV tiles of the SIMT schedule ([matmul.simt.gemv]; passes/simt.c,
 * codegen/gemv.c):
 * - the space: GEMV tiles at M = 1 .. 16 (bm the power of two at or above M, bn 128, k steps of
 *   8, or 16 at bm <= 4; splits within the cluster size, every chunk at least one k step), none
 *   at M = 17, for B K-contiguous, two products, f16/bf16 small-K products, a K under one step
 *   a warp, unbound sizes; without clusters unsplit only;
 * - the model: at 1 x 4096 x 4096 the GEMV tile is faster than every standard tile, its HBM rate
 *   at most 0.9 of the GPU's and reached with the loads in flight; the geometry and partial bytes;
 * - the rule: M = 1 and 16 (4096^2) take it; M = 17 and x @ w^T do not;
 * - codegen of forced tiles for sm_90a (clusters) and sm_80 (unsplit) at aligned and ragged sizes:
 *   template, block, grid, cluster, dynamic shared bytes, 16-byte global loads exactly where the
 *   rows are 16-byte aligned, ptxas clean and no spills (skipped with a message without ptxas). */
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
static const char *GV = "fn f(x: f32[M, K], w: f32[K, N], b: f32[N]) -> f32[M, N] {\n"
                        "  return tanh(x @ w + b)\n}\n";
static const char *NT = "fn f(a: f32[M, K], b: f32[N, K], c: f32[N]) -> f32[M, N] {\n"
                        "  return sigmoid(a @ transpose(b, 0, 1) + c)\n}\n";

/* The GEMV entries of s's space: their count; bm of each checked against M. */
static unsigned gemv_entries(const pass_simt_shape *s, const pass_gpu *gpu, int *max_split) {
    int64_t t[64][4];
    unsigned n = pass_simt_space(s, gpu, t, 64), k = 0;
    *max_split = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!pass_simt_is_gemv(t[i][0])) continue;
        k++;
        assert_true(t[i][0] >= s->M && t[i][0] < 2 * s->M);
        assert_int_equal(t[i][1], PASS_SIMT_GEMV_BN);
        assert_true(t[i][2] == 8 || (t[i][2] == 16 && t[i][0] <= 4));
        if (t[i][3] > *max_split) *max_split = (int)t[i][3];
    }
    return k;
}

static void test_space(void **state) {
    (void)state;
    const pass_gpu *gpu = pass_gpu_find("h200");
    int ms;
    for (int64_t M = 1; M <= 17; M++) {
        pass_simt_shape s = {.M = M, .N = 4096, .K = 4096, .batch = 1, .nmm = 1, .b_ncols = true};
        unsigned n = gemv_entries(&s, gpu, &ms);
        if (M <= PASS_SIMT_GEMV_M) {
            assert_int_equal(n, M <= 4 ? 8u : 4u); /* bk 16 and 8 at bm <= 4, x 4 splits */
            assert_int_equal(ms, PASS_SIMT_MAX_SPLITS);
        } else {
            assert_int_equal(n, 0);
        }
    }
    pass_simt_shape s = {.M = 1, .N = 4096, .K = 4096, .batch = 1, .nmm = 1, .b_ncols = false};
    assert_int_equal(gemv_entries(&s, gpu, &ms), 0); /* B K-contiguous */
    s.b_ncols = true, s.nmm = 2;
    assert_int_equal(gemv_entries(&s, gpu, &ms), 0); /* two products */
    s.nmm = 1, s.small_k = true;
    assert_int_equal(gemv_entries(&s, gpu, &ms), 0);
    s.small_k = false, s.K = 50; /* 7 steps of 8: under one a warp */
    assert_int_equal(gemv_entries(&s, gpu, &ms), 0);
    s.K = 64 * 8; /* 64 steps: 8 ranks of 8 warps, one step a chunk */
    gemv_entries(&s, gpu, &ms);
    assert_int_equal(ms, 8);
    s.K = 64 * 8 - 8; /* 63 steps: not 8 ranks */
    gemv_entries(&s, gpu, &ms);
    assert_int_equal(ms, 4);
    s.K = 4096, s.M = -1;
    assert_int_equal(gemv_entries(&s, gpu, &ms), 0); /* unbound M */
    s.M = 1;
    pass_gpu nocl = *gpu;
    nocl.cluster_max = 0;
    assert_true(gemv_entries(&s, &nocl, &ms) > 0);
    assert_int_equal(ms, 1);
    assert_true(gemv_entries(&s, NULL, &ms) > 0);
    assert_int_equal(ms, 1);
    /* geometry: 8 warps, bm x 4 a lane, the warps' partials in dynamic shared memory */
    pass_simt_geom g = pass_simt_geom_of(4, PASS_SIMT_GEMV_BN, 8, 1);
    assert_int_equal(g.threads, 32 * PASS_SIMT_GEMV_WARPS);
    assert_int_equal(g.tm, 4);
    assert_int_equal(g.tn, 4);
    assert_int_equal(pass_simt_part_bytes(4, PASS_SIMT_GEMV_BN, 1),
                     PASS_SIMT_GEMV_WARPS * 4 * PASS_SIMT_GEMV_BN * 4);
    assert_false(pass_simt_is_gemv(32));
    assert_false(pass_simt_is_gemv(0));
}

static void test_model(void **state) {
    (void)state;
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_simt_shape s = {.M = 1, .N = 4096, .K = 4096, .batch = 1, .nmm = 1, .b_ncols = true};
    double bytes = 4096.0 * 4096 * 4 + 4096 * 4 * 3;
    int64_t t[64][4];
    unsigned n = pass_simt_space(&s, gpu, t, 64);
    double best_std = 0, best_gv = 0;
    for (unsigned i = 0; i < n; i++) {
        pass_simt_time o;
        double us = pass_simt_model(&s, gpu, bytes, t[i][0], t[i][1], t[i][2], (int)t[i][3], &o);
        assert_true(us > 0);
        double *b = pass_simt_is_gemv(t[i][0]) ? &best_gv : &best_std;
        if (*b == 0 || us < *b) *b = us;
        if (pass_simt_is_gemv(t[i][0])) {
            assert_true(o.gbps > 0 && o.gbps <= 0.9 * gpu->hbm_GBps + 1e-6);
            assert_true(o.mem_us >= bytes / (gpu->hbm_GBps * 1e3));
            assert_int_equal(o.tiles, 4096 / PASS_SIMT_GEMV_BN);
            assert_int_equal(o.threads, 256);
            assert_true(o.red_us > 0);
        }
    }
    assert_true(best_gv > 0 && best_gv < best_std);
    /* one block a column tile (unsplit) has too few loads in flight to reach the HBM rate */
    pass_simt_time a, b;
    pass_simt_model(&s, gpu, bytes, 1, PASS_SIMT_GEMV_BN, 8, 1, &a);
    pass_simt_model(&s, gpu, bytes, 1, PASS_SIMT_GEMV_BN, 8, 8, &b);
    assert_true(a.gbps < b.gbps);
    assert_true(a.nk == 8 * b.nk); /* k steps a chunk: 512 / 8 warps, 512 / 64 chunks */
}

/* The planner's schedule of src (p[0..3]; p[0] 0 when not matmul.simt). */
static void rule_of(const char *src, int64_t M, int64_t N, int64_t K, int32_t *p) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    const ir_region *rg = &g->regions[tk_mm_region(g)];
    p[0] = rg->sched.id == PASS_SCH_MATMUL_SIMT ? rg->sched.p[0] : 0;
    p[1] = rg->sched.p[1], p[2] = rg->sched.p[2], p[3] = rg->sched.p[3];
    ir_graph_free(g);
}

static void test_rule(void **state) {
    (void)state;
    int32_t p[4];
    rule_of(GV, 1, 4096, 4096, p);
    assert_int_equal(p[0], 1);
    assert_int_equal(p[1], PASS_SIMT_GEMV_BN);
    rule_of(MM, 16, 4096, 4096, p);
    assert_int_equal(p[0], 16);
    rule_of(MM, 17, 4096, 4096, p);
    assert_true(p[0] >= 32);
    rule_of(NT, 1, 4096, 4096, p); /* x @ w^T: w K-contiguous */
    assert_true(p[0] >= 32);
}

/* Occurrences of pat in s. */
static int count_of(const char *s, const char *pat) {
    int n = 0;
    for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat)) n++;
    return n;
}

/* Codegen of src at M x N x K with the schedule forced to the GEMV tile (bm, bk, sk) for tg. */
static void forced(const char *src, int64_t M, int64_t N, int64_t K, int32_t bm, int32_t bk,
                   int32_t sk, cg_target tg, const char *arch) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    ir_region *rg = &g->regions[tk_mm_region(g)];
    assert_int_equal(rg->sched.id, PASS_SCH_MATMUL_SIMT);
    rg->sched.p[0] = bm, rg->sched.p[1] = PASS_SIMT_GEMV_BN, rg->sched.p[2] = bk;
    rg->sched.p[3] = sk;
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    cg_program *p = cg_program_new(g, tg, &d);
    assert_non_null(p);
    const cg_kernel *k = NULL;
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        if (cg_program_kernel(p, i)->region == (int)tk_mm_region(g)) k = cg_program_kernel(p, i);
    assert_non_null(k);
    char want[64];
    snprintf(want, sizeof want, "simt gemv %dx%dx%d w%d", bm, PASS_SIMT_GEMV_BN, bk,
             PASS_SIMT_GEMV_WARPS);
    if (strncmp(k->tmpl, want, strlen(want)) != 0) fail_msg("template %s, want %s", k->tmpl, want);
    assert_int_equal(k->block[0], 32 * PASS_SIMT_GEMV_WARPS);
    bool split = sk > 1 && tg >= CG_SM90;
    assert_int_equal(k->cluster, split ? (unsigned)sk : 0u);
    int64_t ntn = (N + PASS_SIMT_GEMV_BN - 1) / PASS_SIMT_GEMV_BN;
    if (split) {
        assert_int_equal(k->work[1].dim[0], ntn * sk);
        assert_int_equal(k->per[1], 1);
    } else {
        assert_int_equal(k->per[1], PASS_SIMT_GEMV_BN);
    }
    assert_int_equal(k->smem_bytes, pass_simt_part_bytes(bm, PASS_SIMT_GEMV_BN, sk));
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    /* a step's rows of w: bk 16-byte loads where N is a multiple of 4, else 4 bk scalar loads
     * (x's loads may be either) */
    int v4 = count_of(ptx, "ld.global.nc.v4.f32") + count_of(ptx, "ld.global.v4.f32");
    int sc = count_of(ptx, "ld.global.nc.f32") + count_of(ptx, "ld.global.f32");
    if (N % 4 == 0)
        assert_true(v4 >= bk);
    else
        assert_true(sc >= 4 * bk);
    assert_non_null(strstr(ptx, "fma.rn.f32"));
    if (split) assert_non_null(strstr(ptx, "ld.shared::cluster"));
    tk_ptxas_stats ps;
    int rc = tk_ptxas_stats_of(ptx, len, arch, &ps);
    if (rc != -1) {
        if (rc != 0) fail_msg("ptxas -arch=%s failed on %s", arch, want);
        if (ps.spill > 0)
            fail_msg("%s %s M=%lld N=%lld K=%lld spills %d bytes (%d registers)", want, arch,
                     (long long)M, (long long)N, (long long)K, ps.spill, ps.regs);
    }
    cg_program_free(p);
    ir_graph_free(g);
}

static void test_kernels(void **state) {
    (void)state;
    if (access(TK_PTXAS, X_OK) != 0) print_message("skip: ptxas not found at " TK_PTXAS "\n");
    forced(GV, 1, 4096, 4096, 1, 16, 4, CG_SM90A, "sm_90a");
    forced(GV, 1, 4096, 4096, 1, 8, 8, CG_SM90A, "sm_90a");
    forced(GV, 1, 4099, 1001, 1, 8, 2, CG_SM90A, "sm_90a"); /* N, K ragged: scalar loads */
    forced(MM, 3, 256, 77, 4, 16, 1, CG_SM90A, "sm_90a");
    forced(MM, 7, 1000, 517, 8, 8, 4, CG_SM90A, "sm_90a");
    forced(MM, 16, 4096, 4096, 16, 8, 8, CG_SM90A, "sm_90a");
    forced(MM, 13, 333, 2000, 16, 8, 2, CG_SM90A, "sm_90a");
    forced(MM, 2, 512, 512, 2, 8, 4, CG_SM80, "sm_80"); /* no clusters: unsplit */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
