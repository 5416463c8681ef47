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
 *   rows are 16-byte aligned, ptxas clean and no spills (skipped with a message without ptxas);
 * - [matmul.simt.gemv_rows] (16-bit x @ w^T, w [N, K]): the facts (M <= 16, K a multiple of 8,
 *   one product, operands read in place), the space (R x U limits, TX_SIMT_GEMV=0 empties it),
 *   the model (the in-flight rate), the rule (taken at M = 1 .. 16 exactly where the model has
 *   it faster than the tensor-core form; the held-out decode shape at M = 1, 5, 8; never at
 *   M = 17), forced kernels (template, no shared memory, 16-byte loads of w and x where aligned,
 *   scalar ones at K = 1001, the butterfly, ptxas without spills). */
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

/* The program of g for target tg (asserted to compile) and, in *k, the kernel of its product's
 * region (asserted present). */
static cg_program *mm_program(ir_graph *g, cg_target tg, const cg_kernel **k) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    cg_program *p = cg_program_new(g, tg, &d);
    assert_non_null(p);
    *k = NULL;
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        if (cg_program_kernel(p, i)->region == (int)tk_mm_region(g)) *k = cg_program_kernel(p, i);
    assert_non_null(*k);
    return p;
}

/* Codegen of src at M x N x K with the schedule forced to the GEMV tile (bm, bk, sk) for tg. */
static void forced(const char *src, int64_t M, int64_t N, int64_t K, int32_t bm, int32_t bk,
                   int32_t sk, cg_target tg, const char *arch) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    ir_region *rg = &g->regions[tk_mm_region(g)];
    assert_int_equal(rg->sched.id, PASS_SCH_MATMUL_SIMT);
    rg->sched.p[0] = bm, rg->sched.p[1] = PASS_SIMT_GEMV_BN, rg->sched.p[2] = bk;
    rg->sched.p[3] = sk;
    const cg_kernel *k;
    cg_program *p = mm_program(g, tg, &k);
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

static const char *LR = "fn f(x: f16[M, K], w: f16[N, K], b: f16[N], r: f16[M, N]) -> f16[M, N] {\n"
                        "  return r + (x @ transpose(w, 0, 1) + b)\n}\n";
static const char *LB = "fn f(x: bf16[M, K], w: bf16[N, K], r: bf16[M, N]) -> bf16[M, N] {\n"
                        "  return x @ transpose(w, 0, 1) + r\n}\n";

/* The region's schedule facts of src at M x N x K (sm_90a, h200). */
static void facts_of(const char *src, int64_t M, int64_t N, int64_t K, pass_sched_facts *f,
                     ir_schedule *sched) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    uint32_t r = tk_mm_region(g);
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_schedule_facts(g, &ix, r, gpu, gpu->smem_per_block, f);
    f->gpu = gpu;
    *sched = g->regions[r].sched;
    pass_index_free(&ix);
    ir_graph_free(g);
}

static void test_rows_space(void **state) {
    (void)state;
    pass_sched_facts f;
    ir_schedule sc;
    for (int64_t M = 1; M <= 17; M++) {
        facts_of(LR, M, 4096, 11008, &f, &sc);
        assert_int_equal(f.sgs.w_rows, M <= PASS_SIMT_GEMV_M);
        if (M > PASS_SIMT_GEMV_M) continue;
        int64_t t[64][4];
        unsigned n = pass_simt_space(&f.sgs, f.gpu, t, 64);
        assert_true(n >= 3);
        for (unsigned i = 0; i < n; i++) {
            int64_t R = t[i][1] / PASS_SIMT_GEMV_WARPS, U = t[i][2] / 8;
            assert_true(pass_simt_is_gemv_rows(t[i][0], t[i][1]));
            assert_true(t[i][0] >= M && t[i][0] < 2 * M);
            assert_true(M * R <= PASS_SIMT_ROWS_ACC && R * U <= PASS_SIMT_ROWS_LOADS);
            assert_int_equal(t[i][3], 1);
            assert_int_equal(pass_simt_part_bytes(t[i][0], t[i][1], 1), 0);
        }
    }
    facts_of(LR, 5, 4096, 1001, &f, &sc); /* K odd: rows not 16-byte aligned */
    assert_false(f.sgs.w_rows);
    facts_of(LR, 5, 4096, 1004, &f, &sc); /* K a multiple of 4, not 8 */
    assert_false(f.sgs.w_rows);
    facts_of(MM, 5, 4096, 4096, &f, &sc); /* f32: the N-contiguous GEMV tiles' */
    assert_false(f.sgs.w_rows);
    facts_of(LB, 5, 4096, 4096, &f, &sc);
    assert_true(f.sgs.w_rows);
    setenv("TX_SIMT_GEMV", "0", 1);
    int64_t t[64][4];
    assert_int_equal(pass_simt_space(&f.sgs, f.gpu, t, 64), 0);
    unsetenv("TX_SIMT_GEMV");
    assert_true(pass_simt_space(&f.sgs, f.gpu, t, 64) > 0);
}

static void test_rows_model(void **state) {
    (void)state;
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_simt_shape s = {.M = 5, .N = 4096, .K = 11008, .batch = 1, .nmm = 1, .w_rows = true};
    double bytes = 2.0 * (4096.0 * 11008 + 5 * 11008 + 2 * 5 * 4096 + 4096);
    pass_simt_time a, b;
    assert_true(pass_simt_model(&s, gpu, bytes, 8, 8, 8, 1, &a) > 0);
    assert_true(pass_simt_model(&s, gpu, bytes, 8, 16, 32, 1, &b) > 0);
    assert_true(a.gbps < b.gbps); /* 1 load in flight a thread against 8 */
    assert_true(b.gbps <= 0.9 * gpu->hbm_GBps + 1e-6);
    assert_true(b.mem_us >= bytes / (gpu->hbm_GBps * 1e3));
    assert_int_equal(b.tiles, 4096 / 16);
    assert_int_equal(b.nk, (11008 + 1023) / 1024);
    assert_int_equal(b.threads, 256);
    assert_true(b.time_us > b.mem_us && b.time_us > b.comp_us);
    s.M = 16; /* more rows of x: more FMAs and conversions a byte of w */
    pass_simt_time c;
    pass_simt_model(&s, gpu, bytes, 16, 16, 32, 1, &c);
    assert_true(c.comp_us > b.comp_us);
    s.w_rows = false; /* a rows tile is priced only for a rows shape */
    assert_true(pass_simt_model(&s, gpu, bytes, 16, 16, 32, 1, &c) == 0);
}

/* True when src's region at M x N x K takes [matmul.simt.gemv_rows]; asserts that it does
 * exactly where the model prices it below the tensor-core form the rule weighs (the plain or
 * the swapped wgmma kernel, without its launch). */
static bool rows_chosen(const char *src, int64_t M, int64_t N, int64_t K) {
    pass_sched_facts f;
    ir_schedule sc;
    facts_of(src, M, N, K, &f, &sc);
    bool got = sc.id == PASS_SCH_MATMUL_SIMT && pass_simt_is_gemv_rows(sc.p[0], sc.p[1]);
    if (!f.sgs.w_rows) return got;
    pass_simt_time gt;
    pass_wg_tile wt, st;
    pass_wg_time wm, sm;
    if (!pass_simt_pick(&f.sgs, f.gpu, f.wg_bytes, &gt)) return got; /* TX_SIMT_GEMV=0 */
    assert_true(pass_wg_pick(&f.wgs, f.gpu, f.wg_bytes, &wt));
    double wg = pass_wg_model(&f.wgs, &wt, f.gpu, f.wg_bytes, &wm);
    if (pass_wg_swap_pick(&f.wgs, f.gpu, f.wg_bytes, &st) &&
        pass_wg_model(&f.wgs, &st, f.gpu, f.wg_bytes, &sm) < wg)
        wg = sm.time_us;
    const char *on = getenv("TX_SIMT_GEMV_ROWS");
    bool want = on && !strcmp(on, "1") && gt.time_us - f.gpu->launch_us < wg;
    if (got != want)
        fail_msg("M=%lld N=%lld K=%lld: rows %s, model %.3f us against %.3f", (long long)M,
                 (long long)N, (long long)K, got ? "chosen" : "not chosen",
                 gt.time_us - f.gpu->launch_us, wg);
    if (got) assert_int_equal(sc.p[0], gt.bm), assert_int_equal(sc.p[1], gt.bn);
    return got;
}

static void test_rows_rule(void **state) {
    (void)state;
    assert_false(rows_chosen(LR, 5, 4096, 11008)); /* off by default (TX_SIMT_GEMV_ROWS) */
    assert_false(rows_chosen(LR, 1, 4096, 11008));
    setenv("TX_SIMT_GEMV_ROWS", "1", 1);
    for (int64_t M = 1; M <= 16; M++) {
        rows_chosen(LR, M, 4096, 11008);
        rows_chosen(LB, M, 11008, 4096);
        rows_chosen(LB, M, 4096, 4096);
    }
    assert_true(rows_chosen(LR, 1, 4096, 11008)); /* the held-out decode_linear_res shapes */
    assert_true(rows_chosen(LR, 5, 4096, 11008));
    assert_true(rows_chosen(LR, 8, 4096, 11008));
    assert_true(rows_chosen(LB, 4, 11008, 4096));
    assert_false(rows_chosen(LR, 17, 4096, 11008));
    assert_false(rows_chosen(LR, 5, 4096, 1001)); /* odd pitch: not the rows form */
    setenv("TX_SIMT_GEMV", "0", 1);
    assert_false(rows_chosen(LR, 5, 4096, 11008));
    unsetenv("TX_SIMT_GEMV");
    unsetenv("TX_SIMT_GEMV_ROWS");
}

/* Codegen of src at M x N x K forced to the rows tile bm x bn x bk (sm_90a). */
static void forced_rows(const char *src, int64_t M, int64_t N, int64_t K, int32_t bm, int32_t bn,
                        int32_t bk) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    ir_region *rg = &g->regions[tk_mm_region(g)];
    memset(&rg->sched, 0, sizeof rg->sched);
    rg->sched.id = PASS_SCH_MATMUL_SIMT;
    rg->sched.p[0] = bm, rg->sched.p[1] = bn, rg->sched.p[2] = bk, rg->sched.p[3] = 1;
    const cg_kernel *k;
    cg_program *p = mm_program(g, CG_SM90A, &k);
    char want[64];
    snprintf(want, sizeof want, "simt gemv-rows %dx%dx%d w%d", bm, bn, bk, PASS_SIMT_GEMV_WARPS);
    if (strcmp(k->tmpl, want) != 0) fail_msg("template %s, want %s", k->tmpl, want);
    assert_int_equal(k->block[0], 32 * PASS_SIMT_GEMV_WARPS);
    assert_int_equal(k->per[1], bn);
    assert_int_equal(k->cluster, 0u);
    assert_int_equal(k->smem_bytes, 0);
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    int v4 = count_of(ptx, "ld.global.nc.v4.u32") + count_of(ptx, "ld.global.v4.u32");
    int R = bn / PASS_SIMT_GEMV_WARPS, U = bk / 8;
    if (K % 8 == 0)
        assert_true(v4 >= R * U + (int)M); /* a step's pieces of w, a piece of every row of x */
    else
        assert_int_equal(v4, 0);
    assert_non_null(strstr(ptx, "fma.rn.f32"));
    assert_non_null(strstr(ptx, "shfl.sync.bfly"));
    tk_ptxas_stats ps;
    int rc = tk_ptxas_stats_of(ptx, len, "sm_90a", &ps);
    if (rc != -1) {
        if (rc != 0) fail_msg("ptxas -arch=sm_90a failed on %s", want);
        if (ps.spill > 0)
            fail_msg("%s M=%lld N=%lld K=%lld spills %d bytes (%d registers)", want, (long long)M,
                     (long long)N, (long long)K, ps.spill, ps.regs);
    }
    cg_program_free(p);
    ir_graph_free(g);
}

static void test_rows_kernels(void **state) {
    (void)state;
    forced_rows(LR, 5, 4096, 11008, 8, 16, 32);
    forced_rows(LR, 1, 4096, 11008, 1, 32, 16);
    forced_rows(LB, 16, 4096, 4096, 16, 16, 32);
    forced_rows(LB, 3, 1001, 1000, 4, 32, 8); /* N odd, K not a multiple of a step */
    forced_rows(LR, 8, 4096, 4096, 8, 32, 16);
    forced_rows(LR, 5, 333, 1001, 8, 8, 8); /* K odd: scalar loads */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space),      cmocka_unit_test(test_model),
        cmocka_unit_test(test_rule),       cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_rows_space), cmocka_unit_test(test_rows_model),
        cmocka_unit_test(test_rows_rule),  cmocka_unit_test(test_rows_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
