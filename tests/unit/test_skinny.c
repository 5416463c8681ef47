/* test_skinny.c - the skinny GEMM of odd-pitch operands (matmul.skinny; passes/skinny.c,
 * codegen/skinny.c):
 *
 * - the planner: products of at most 64 rows whose wgmma form would stage an operand (K or N
 *   odd) take matmul.skinny when it is priced faster, with the model's parts and the staged
 *   wgmma form it replaces in the report; aligned products, 65 rows and unbound sizes do not;
 * - the tile space: bn 64 / 128, split-K ranks 1-8 with at least 2 k steps each and at most 2
 *   CTAs per SM, the accumulator bound, stages and shared memory from the tile's geometry;
 * - the copy of an operand tile: every 16-byte chunk cg_sk_chunk names, copied as the kernel
 *   does (the valid prefix, zero-filled), puts each element where cg_sk_elem reads it, zero
 *   outside the valid rows and columns, never reading past the buffer or writing past the tile
 *   (a model of the buffer and the shared tile written here), for odd and even pitches and
 *   ragged tiles;
 * - codegen for sm_90a: one kernel, no staging kernels, the template, the split-K cluster, the
 *   grid and the shared memory the planner computed; and ptxas -arch=sm_90a -v of the kernel
 *   for M = 1, 7, 16, 33, 64, odd K and N, both B orders, f16 and bf16, SwiGLU's two products
 *   and a bias + gelu epilogue: no spills, no warnings (skipped with a message without ptxas). */
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

static const char *XW = "fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n";
static const char *LR = "fn f(x: f16[M, K], w: f16[N, K], r: f16[M, N]) -> f16[M, N] {\n"
                        "  return x @ transpose(w, 0, 1) + r\n}\n";
static const char *SW = "fn f(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N]) -> bf16[M, N] {\n"
                        "  return silu(x @ w1) * (x @ w3)\n}\n";
static const char *AT = "fn f(xt: bf16[K, M], w: bf16[N, K]) -> bf16[M, N] {\n"
                        "  return transpose(xt, 0, 1) @ transpose(w, 0, 1)\n}\n";
static const char *GE = "fn f(x: bf16[M, K], w: bf16[N, K], b: bf16[N]) -> bf16[M, N] {\n"
                        "  return gelu_tanh(x @ transpose(w, 0, 1) + b)\n}\n";

/* The planner's schedule of src at M x N x K and, when skinny, the model's parts. */
static void check_rule(const char *src, int64_t M, int64_t N, int64_t K, bool skinny) {
    ir_graph *g = tk_plan_mnk(src, M, N, K, true);
    uint32_t r = tk_mm_region(g);
    const ir_region *rg = &g->regions[r];
    if (!skinny) {
        assert_int_not_equal(rg->sched.id, PASS_SCH_MATMUL_SKINNY);
        ir_graph_free(g);
        return;
    }
    assert_int_equal(rg->sched.id, PASS_SCH_MATMUL_SKINNY);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_cost c;
    pass_region_cost_ix(g, &ix, r, gpu, &c);
    pass_model m;
    pass_model_region(g, &ix, r, gpu, &c, &m);
    assert_string_equal(m.schedule, "matmul.skinny");
    assert_int_equal(m.kernels, 1);
    assert_int_equal(m.skt.bn, rg->sched.p[0]);
    assert_int_equal(m.skt.splits, rg->sched.p[1]);
    assert_true(m.skm.time_us >= m.skm.fill_us + m.skm.mem_us - 1e-9);
    assert_true(m.skm.time_us >= m.skm.fill_us + m.skm.comp_us - 1e-9);
    /* the staged wgmma form it replaces is slower by the same model */
    assert_true(m.wgs.nstage > 0);
    assert_true(m.wgt.bm > 0 && m.wgm.time_us > m.skm.time_us);
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    pass_model_text(&m, gpu, f);
    fclose(f);
    assert_non_null(strstr(txt, "[matmul.skinny] operands read in place"));
    assert_non_null(strstr(txt, "instead of matmul.wgmma"));
    free(txt);
    pass_index_free(&ix);
    ir_graph_free(g);
}

static void test_rule(void **state) {
    (void)state;
    check_rule(XW, 16, 999, 4096, true); /* B rows of 1998 bytes */
    check_rule(XW, 1, 999, 4096, true);
    check_rule(XW, 33, 3001, 2048, true);
    check_rule(LR, 16, 4096, 1001, true); /* A and B rows of 2002 bytes */
    check_rule(LR, 7, 1000, 999, true);
    check_rule(LR, 64, 4096, 1001, true);
    check_rule(SW, 16, 2753, 4096, true);
    check_rule(GE, 64, 1001, 1001, true);
    check_rule(XW, 16, 4096, 4096, false); /* aligned: the wgmma kernel reads it in place */
    check_rule(XW, 65, 999, 4096, false);  /* more than 64 rows: staged wgmma */
    check_rule(XW, 300, 999, 1001, false);
}

/* An unbound M: neither staged nor skinny (mma.sync), in the planner and in codegen. */
static void test_symbolic(void **state) {
    (void)state;
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_define defs[2] = {{"N", 999}, {"K", 4096}};
    fe_options fo = {.defines = defs, .ndefines = 2};
    ir_graph *g = fe_compile("t.tx", XW, strlen(XW), &fo, &d);
    assert_non_null(g);
    pass_gpu buf;
    pass_target t = {90, true, false};
    pass_ctx pc = {.diag = &d, .gpu = pass_target_gpu(pass_gpu_find("h200"), t, &buf), .target = t};
    assert_true(pass_run_pipeline(g, &pc));
    assert_int_not_equal(g->regions[tk_mm_region(g)].sched.id, PASS_SCH_MATMUL_SKINNY);
    cg_program *p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    for (unsigned k = 0; k < cg_program_nkernels(p); k++)
        assert_null(strstr(cg_program_kernel(p, k)->tmpl, "skinny"));
    cg_program_free(p);
    ir_graph_free(g);
}

static void test_space(void **state) {
    (void)state;
    pass_wg_shape s = {.M = 16,
                       .N = 999,
                       .K = 4096,
                       .a_kmajor = true,
                       .b_kmajor = false,
                       .nmm = 1,
                       .nouts = 1,
                       .smem = 227 * 1024,
                       .sms = 132,
                       .nstage = 1};
    pass_sk_tile t;
    assert_true(pass_sk_tile_make(&s, 64, 8, &t));
    assert_int_equal(t.mp, 16);
    assert_int_equal(t.tiles, 16);
    assert_int_equal(t.nk, 64);
    assert_int_equal(t.kpr, 8);
    /* A [16][64 + 8], B [64][64 + 8] (N-contiguous) */
    assert_int_equal(t.a_bytes, 16 * 72 * 2);
    assert_int_equal(t.b_bytes, 64 * 72 * 2);
    assert_int_equal(t.stage_bytes, t.a_bytes + t.b_bytes);
    assert_true(t.stages >= 2 && t.stages <= 8 && t.stages <= t.kpr);
    int64_t part = (int64_t)t.mp * t.bn * 4, ring = t.stage_bytes * t.stages;
    assert_int_equal(t.smem_bytes, ring > part ? ring : part);
    assert_false(pass_sk_tile_make(&s, 256, 1, &t)); /* bn 64 or 128 */
    assert_false(pass_sk_tile_make(&s, 64, 3, &t));
    assert_true(pass_sk_tile_make(&s, 128, 8, &t)); /* 8 tiles x 8 ranks */
    s.N = 4096;
    assert_false(pass_sk_tile_make(&s, 64, 8, &t)); /* 64 tiles x 8 ranks > 2 x 132 SMs */
    assert_true(pass_sk_tile_make(&s, 64, 4, &t));
    s.K = 200; /* 4 k steps: at most 2 ranks */
    assert_true(pass_sk_tile_make(&s, 64, 2, &t));
    s.N = 999;
    assert_false(pass_sk_tile_make(&s, 64, 4, &t));
    s.K = 4096, s.M = 64, s.nmm = 2; /* 4 x 2 x 2 x 4 = 64 accumulators: the most */
    assert_true(pass_sk_tile_make(&s, 128, 1, &t));
    s.nmm = 3;
    assert_false(pass_sk_tile_make(&s, 128, 1, &t));
    s.M = 65, s.nmm = 1;
    assert_false(pass_sk_tile_make(&s, 64, 1, &t));
    s.M = 16, s.nstage = 0; /* nothing staged: the wgmma kernel's */
    assert_false(pass_sk_tile_make(&s, 64, 1, &t));
    s.nstage = 1, s.a_merged = true;
    assert_false(pass_sk_tile_make(&s, 64, 1, &t));
    s.a_merged = false;
    pass_sk_tile sp[12];
    unsigned n = pass_sk_space(&s, sp, 12);
    assert_true(n > 0);
    for (unsigned i = 0; i < n; i++) {
        assert_true(sp[i].bn == 64 || sp[i].bn == 128);
        assert_true(sp[i].tiles * sp[i].splits <= 2 * 132 || sp[i].splits == 1);
        assert_true(sp[i].nk / sp[i].splits >= 2);
    }
}

/* Copies the rows x cols tile at (r0, c0) of base[d0][d1] (its elements distinct) as the kernel
 * does and checks every element where cg_sk_elem reads it. */
static void check_copy(int64_t d0, int64_t d1, int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                       int64_t rlim, int64_t clim) {
    int64_t n = d0 * d1, pitch = cols + 8;
    uint16_t *base = malloc((size_t)(n + 1) * 2), *sh = malloc((size_t)(rows * pitch) * 2);
    for (int64_t e = 0; e < n; e++) base[e] = (uint16_t)(1 + e % 65000);
    base[n] = 0xBEEF; /* past the buffer: must never be copied */
    for (int64_t i = 0; i < rows * pitch; i++) sh[i] = 0xDEAD;
    int64_t cend = c0 + cols < clim ? c0 + cols : clim;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols / 8 + 1; j++) {
            int64_t q, dst;
            int nb = cg_sk_chunk(d1, r0, c0, rlim, cend, pitch, r, j, &q, &dst);
            assert_true(nb >= 0 && nb <= 16 && nb % 2 == 0);
            assert_true(dst % 16 == 0 && dst + 16 <= rows * pitch * 2);
            if (nb) assert_true(q >= 0 && 8 * q + nb / 2 <= n); /* inside the buffer */
            uint16_t *d = &sh[dst / 2];
            for (int e = 0; e < 8; e++) d[e] = 2 * e < nb ? base[8 * q + e] : 0;
        }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t i = cg_sk_elem(d1, pitch, r, c);
            assert_true(i >= 0 && i < rows * pitch);
            bool in = r0 + r < rlim && c0 + c < cend;
            uint16_t want = in ? base[(r0 + r) * d1 + c0 + c] : 0;
            if (sh[i] != want)
                fail_msg("d1 %lld tile (%lld, %lld) element (%lld, %lld): %u, want %u",
                         (long long)d1, (long long)r0, (long long)c0, (long long)r, (long long)c,
                         sh[i], want);
        }
    free(base);
    free(sh);
}

static void test_copy(void **state) {
    (void)state;
    /* K-contiguous operands: rows of the other axis, 64 k; odd and even pitches, ragged ends */
    check_copy(16, 1001, 0, 0, 16, 64, 16, 1001);
    check_copy(7, 1001, 0, 960, 16, 64, 7, 1001);    /* 41 k left, rows past M */
    check_copy(100, 999, 64, 192, 64, 64, 100, 256); /* a rank's k limit inside the tile */
    check_copy(128, 1000, 64, 960, 64, 64, 128, 1000);
    check_copy(33, 4099, 0, 4096, 48, 64, 33, 4099);
    /* M/N-contiguous operands: 64 k rows, the other axis' columns */
    check_copy(4096, 999, 128, 960, 64, 64, 4096, 999);
    check_copy(1001, 3001, 960, 2944, 64, 128, 1001, 3001); /* k and n both ragged */
    check_copy(200, 777, 64, 0, 64, 128, 130, 777);
    check_copy(64, 17, 0, 0, 64, 16, 64, 17); /* M-contiguous A of 17 rows: 16-column tile */
    check_copy(64, 7, 0, 0, 64, 16, 50, 7);
}

/* Codegen of src at M x N x K for sm_90a: one skinny kernel as the schedule names it; ptxas
 * clean. */
static void check_kernel(const char *src, int64_t M, int64_t N, int64_t K, const char *orders) {
    fe_define defs[3] = {{"M", M}, {"N", N}, {"K", K}};
    ir_graph *g;
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, 3, &g);
    const ir_region *rg = &g->regions[tk_mm_region(g)];
    assert_int_equal(rg->sched.id, PASS_SCH_MATMUL_SKINNY);
    assert_int_equal(cg_program_nkernels(p), 1); /* nothing staged */
    const cg_kernel *k = cg_program_kernel(p, 0);
    pass_wg_shape s;
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    const pass_gpu *gpu = pass_gpu_find("h200");
    assert_true(pass_wg_facts(g, &ix, tk_mm_region(g), gpu, gpu->smem_per_block, &s));
    pass_sk_tile t;
    assert_true(pass_sk_tile_make(&s, rg->sched.p[0], rg->sched.p[1], &t));
    char want[96];
    snprintf(want, sizeof want, "mma-skinny %dx%dx64 s%d sk%d %s", t.mp, t.bn, t.stages, t.splits,
             orders);
    if (strncmp(k->tmpl, want, strlen(want)) != 0) fail_msg("template %s, want %s", k->tmpl, want);
    assert_int_equal(k->block[0], 256);
    assert_int_equal(k->smem_bytes, t.smem_bytes);
    assert_int_equal(k->cluster, t.splits > 1 ? (unsigned)t.splits : 0u);
    assert_int_equal(k->ntmaps, 0);
    size_t len;
    const char *ptx = cg_program_ptx((cg_program *)p, &len);
    assert_non_null(strstr(ptx, "cp.async.cg.shared.global"));
    assert_non_null(strstr(ptx, "mma.sync.aligned.m16n8k16"));
    if (t.splits > 1) assert_non_null(strstr(ptx, "ld.shared::cluster.f32"));
    tk_ptxas_stats ps;
    int rc = tk_ptxas_stats_of(ptx, len, "sm_90a", &ps);
    if (rc == -1) {
        print_message("skip: ptxas not found at " TK_PTXAS "\n");
    } else {
        assert_int_equal(rc, 0);
        if (ps.spill > 0 || ps.warning[0])
            fail_msg("%s M=%lld N=%lld K=%lld: %d bytes spilled, %s", k->tmpl, (long long)M,
                     (long long)N, (long long)K, ps.spill, ps.warning);
    }
    pass_index_free(&ix);
    cg_program_free(p);
    ir_graph_free(g);
}

static void test_kernels(void **state) {
    (void)state;
    check_kernel(XW, 16, 999, 4096, "KN");
    check_kernel(XW, 1, 999, 4096, "KN");
    check_kernel(XW, 7, 3001, 1001, "KN");
    check_kernel(XW, 33, 3001, 2048, "KN");
    check_kernel(LR, 16, 4096, 1001, "KK");
    check_kernel(LR, 64, 333, 2049, "KK");
    check_kernel(SW, 16, 2753, 4096, "KN h2");
    check_kernel(SW, 64, 1001, 1001, "KN h2");
    check_kernel(GE, 33, 1001, 515, "KK");
    check_kernel(AT, 17, 1000, 1001, "MK"); /* an M-contiguous A of 34-byte rows */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule), cmocka_unit_test(test_symbolic), cmocka_unit_test(test_space),
        cmocka_unit_test(test_copy), cmocka_unit_test(test_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
