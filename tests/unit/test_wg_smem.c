/* test_wg_smem.c - the wgmma kernel's shared memory as the planner counts it (passes/wgmma.c
 * pass_wg_tile_make, with the TMA-store epilogue's slots) against the kernel codegen/wgmma.c
 * builds, and the epilogue forms the planner names ([matmul.wgmma.epi]):
 *
 * - for programs with one or several products, 16-bit and f32 outputs, bias / activation /
 *   residual epilogues and plain products, at skinny to large shapes, and for every tile of the
 *   matmul.wgmma space of two of them forced through the region's schedule: the planner's
 *   smem_bytes (ring, barriers, split-K slots, store slots) is the manifest's dynamic shared
 *   memory, the layout's sum is computed here from the tile, and the template's `tsN` / `tsNl`
 *   says what the planner's epi_nbuf and epi_slots say (no `ts` when the planner gave none);
 * - ptxas -arch=sm_90a -v reports no static shared memory for them, so the manifest's dynamic
 *   bytes are all the kernel takes (skipped with a message without ptxas);
 * - an f32 output keeps the per-register TMA-store epilogue: the planner refuses the looped form
 *   (epi_why PASS_WG_EPI_F32, named in --explain's [matmul.wgmma.epi] line), the template has
 *   `ts2`, not `ts2l`. */
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

static const char *LR = "fn f(x: bf16[M, K], w: bf16[N, K], r: bf16[M, N]) -> bf16[M, N] {\n"
                        "  return x @ transpose(w, 0, 1) + r\n}\n";
static const char *GF = "fn f(x: bf16[M, K], w: bf16[N, K], b: bf16[N]) -> f32[M, N] {\n"
                        "  return f32(gelu_tanh(x @ transpose(w, 0, 1) + b))\n}\n";
static const char *XW = "fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n";
static const char *SW = "fn f(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N]) -> bf16[M, N] {\n"
                        "  return silu(x @ w1) * (x @ w3)\n}\n";
static const char *TWO = "fn f(x: f16[M, K], w: f16[K, N]) -> (f16[M, N], f32[M, N]) {\n"
                         "  y = x @ w\n  return y, f32(y) * 2.0\n}\n";

static uint32_t mm_region(const ir_graph *g) {
    for (uint32_t r = 0; r < g->nregions; r++)
        if (g->regions[r].kind == IR_RK_MATMUL) return r;
    fail_msg("no matmul region");
    abort();
}

/* ptxas -v of the module: no "bytes smem" other than 0 (the kernel's shared memory is dynamic). */
static void check_static_smem(const char *ptx, size_t len) {
    char log[] = "/tmp/tx_test_smem_XXXXXX", line[512];
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    int rc = tk_ptxas(ptx, len, "sm_90a", log);
    if (rc == -1) {
        print_message("skip: ptxas not found at " TK_PTXAS "\n");
        unlink(log);
        return;
    }
    assert_int_equal(rc, 0);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        const char *s = strstr(line, " bytes smem");
        if (!s) continue;
        const char *p = s;
        while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
        if (atoi(p) != 0) fail_msg("static shared memory: %s", line);
    }
    fclose(f);
    unlink(log);
}

/* Compiles src at M x N x K (with schedule `want` when given) and checks the planner's tile
 * against the kernel; returns the tile's epi_nbuf. */
static int check_one(const char *src, int64_t M, int64_t N, int64_t K, const ir_schedule *want,
                     bool ptxas) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_define defs[3] = {{"M", M}, {"N", N}, {"K", K}};
    fe_options fo = {.defines = defs, .ndefines = 3};
    ir_graph *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
    assert_true(pass_run_pipeline(g, &pc));
    uint32_t r = mm_region(g);
    if (want) g->regions[r].sched = *want;
    const ir_schedule *sc = &g->regions[r].sched;
    assert_int_equal(sc->id, PASS_SCH_MATMUL_WGMMA);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_wg_shape s;
    assert_true(pass_wg_facts(g, &ix, r, gpu, gpu->smem_per_block, &s));
    pass_wg_tile t;
    assert_true(pass_wg_tile_make(&s, sc->p[0], sc->p[1], sc->p[2], &t));
    /* the layout's sum: alignment slack, two barriers per possible stage, split-K barriers and
     * slots, the ring, the store slots */
    int64_t sum = 1024 + 2 * 8 * PASS_WG_MAX_STAGES + 16 + t.red_bytes +
                  (int64_t)t.stages * t.stage_bytes + t.epi_bytes;
    assert_int_equal(t.smem_bytes, sum);
    assert_true(t.smem_bytes <= gpu->smem_per_block);
    cg_program *p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    const cg_kernel *k = tk_region_kernel(p);
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        if (strstr(cg_program_kernel(p, i)->tmpl, "wgmma")) k = cg_program_kernel(p, i);
    assert_non_null(strstr(k->tmpl, "wgmma-tma-ws"));
    if ((int64_t)k->smem_bytes != t.smem_bytes)
        fail_msg("%s at %lldx%lldx%lld: kernel %u B of shared memory, planner %lld B", k->tmpl,
                 (long long)M, (long long)N, (long long)K, k->smem_bytes, (long long)t.smem_bytes);
    char ts[16] = "";
    const char *form = s.epi_coal ? " cs" : " ts"; /* the staged coalesced stores, or TMA's */
    if (t.epi_nbuf > 0)
        snprintf(ts, sizeof ts, "%s%d%s", form, t.epi_nbuf,
                 s.epi_loop && t.epi_slots == s.nmm ? "l" : "");
    const char *at = strstr(k->tmpl, form);
    if (strstr(k->tmpl, s.epi_coal ? " ts" : " cs"))
        fail_msg("%s: the planner's outputs say%s", k->tmpl, form);
    if (t.epi_nbuf == 0) {
        if (at) fail_msg("%s: the planner counted no store slots", k->tmpl);
    } else {
        size_t n = strlen(ts);
        if (!at || strncmp(at, ts, n) != 0 || (at[n] != 0 && at[n] != ' '))
            fail_msg("%s: the planner's slots say%s", k->tmpl, ts);
    }
    if (ptxas) {
        size_t len;
        const char *ptx = cg_program_ptx(p, &len);
        check_static_smem(ptx, len);
    }
    cg_program_free(p);
    pass_index_free(&ix);
    ir_graph_free(g);
    return t.epi_nbuf;
}

static void test_planner_is_kernel(void **state) {
    (void)state;
    int with = 0, without = 0;
    const struct {
        const char *src;
        int64_t M, N, K;
    } rows[] = {
        {LR, 1000, 4096, 1024},
        {LR, 8192, 4096, 4096},
        {LR, 777, 4096, 11008},
        {GF, 1000, 4096, 1024},
        {GF, 300, 264, 136},
        {XW, 2000, 1000, 3000},
        {XW, 4096, 4096, 4096},
        {XW, 16, 1024, 4096},
        {SW, 2048, 5632, 2048},
        {SW, 1000, 2816, 1024},
        {TWO, 1024, 1024, 512},
        {LR, 64, 4096, 4096},
        /* rows that are not 16-byte multiples: the staged coalesced stores' slots, or none */
        {LR, 256, 1001, 256},
        {GF, 3001, 1999, 2005},
        {SW, 2000, 3001, 1024},
        {XW, 1000, 1001, 512},
        {TWO, 3000, 2001, 1024},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int nb = check_one(rows[i].src, rows[i].M, rows[i].N, rows[i].K, NULL, i < 4 || i == 12);
        if (nb)
            with++;
        else
            without++;
    }
    assert_true(with > 0 && without > 0); /* both forms were checked */
}

/* Every tile of the space of three shapes, forced (the third's rows of 2001 x 2 bytes: the
 * staged coalesced stores where the slots fit). */
static void test_space_forced(void **state) {
    (void)state;
    const char *srcs[3] = {LR, GF, LR};
    int64_t ns[3] = {2048, 2048, 2001};
    for (int j = 0; j < 3; j++) {
        tx_diag d;
        tx_diag_init(&d, stderr, "test", NULL, 0);
        fe_define defs[3] = {{"M", 1000}, {"N", ns[j]}, {"K", 1536}};
        fe_options fo = {.defines = defs, .ndefines = 3};
        ir_graph *g = fe_compile("t.tx", srcs[j], strlen(srcs[j]), &fo, &d);
        assert_non_null(g);
        pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
        assert_true(pass_run_pipeline(g, &pc));
        pass_index ix;
        assert_true(pass_index_build(g, &ix));
        const pass_gpu *gpu = pass_gpu_find("h200");
        pass_wg_shape s;
        assert_true(pass_wg_facts(g, &ix, mm_region(g), gpu, gpu->smem_per_block, &s));
        pass_wg_tile sp[PASS_WG_SPACE];
        unsigned n = pass_wg_space(&s, sp, PASS_WG_SPACE);
        assert_true(n > 3);
        pass_index_free(&ix);
        ir_graph_free(g);
        for (unsigned i = 0; i < n; i++) {
            ir_schedule w = {.id = PASS_SCH_MATMUL_WGMMA,
                             .p = {sp[i].bm * sp[i].mcast, sp[i].bn, sp[i].splits, sp[i].stages}};
            check_one(srcs[j], 1000, ns[j], 1536, &w, false);
        }
    }
}

/* [matmul.wgmma.epi]: an f32 output is not looped (the planner's rule), named in --explain. */
static void test_f32_not_looped(void **state) {
    (void)state;
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_define defs[3] = {{"M", 1000}, {"N", 4096}, {"K", 1024}};
    fe_options fo = {.defines = defs, .ndefines = 3};
    ir_graph *g = fe_compile("t.tx", GF, strlen(GF), &fo, &d);
    assert_non_null(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
    assert_true(pass_run_pipeline(g, &pc));
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    uint32_t r = mm_region(g);
    const pass_gpu *gpu = pass_gpu_find("h200");
    pass_wg_shape s;
    assert_true(pass_wg_facts(g, &ix, r, gpu, gpu->smem_per_block, &s));
    assert_int_equal(s.epi_es, 4);
    assert_false(s.epi_loop);
    assert_int_equal(s.epi_why, PASS_WG_EPI_F32);
    pass_cost c;
    pass_region_cost_ix(g, &ix, r, gpu, &c);
    pass_model m;
    pass_model_region(g, &ix, r, gpu, &c, &m);
    assert_string_equal(m.schedule, "matmul.wgmma");
    assert_true(m.wgt.epi_nbuf > 0);
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    pass_model_text(&m, gpu, f);
    fclose(f);
    assert_non_null(strstr(txt, "[matmul.wgmma.epi] per-register TMA-store epilogue"));
    assert_non_null(strstr(txt, "not looped: an f32 output"));
    free(txt);
    pass_index_free(&ix);
    ir_graph_free(g);
    /* the 16-bit form of the same epilogue is looped */
    static const char *GB = "fn f(x: bf16[M, K], w: bf16[N, K], b: bf16[N]) -> bf16[M, N] {\n"
                            "  return gelu_tanh(x @ transpose(w, 0, 1) + b)\n}\n";
    cg_program *p = tk_compile_src(GB, CG_SM90A, defs, 3, NULL);
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, " ts2l"));
    cg_program_free(p);
    p = tk_compile_src(GF, CG_SM90A, defs, 3, NULL);
    const char *tm = tk_region_kernel(p)->tmpl;
    assert_non_null(strstr(tm, " ts2"));
    assert_null(strstr(tm, " ts2l"));
    cg_program_free(p);
}

/* The planner's model text and epilogue price of plan g's matmul region (freed): *epi_us, the
 * model's epilogue per tile, *ns the same per output element of the tile; the text is the
 * caller's to free. */
static char *model_of(ir_graph *g, pass_wg_shape *s, double *ns) {
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    uint32_t r = mm_region(g);
    const pass_gpu *gpu = pass_gpu_find("h200");
    assert_true(pass_wg_facts(g, &ix, r, gpu, gpu->smem_per_block, s));
    pass_cost c;
    pass_region_cost_ix(g, &ix, r, gpu, &c);
    pass_model m;
    pass_model_region(g, &ix, r, gpu, &c, &m);
    assert_string_equal(m.schedule, "matmul.wgmma");
    *ns = m.wgm.epi_us * 1e3 / ((double)m.wgt.bm * m.wgt.bn * s->nouts);
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    pass_model_text(&m, gpu, f);
    fclose(f);
    pass_index_free(&ix);
    ir_graph_free(g);
    return txt;
}

/* [matmul.wgmma.epi] rows that are not 16-byte multiples (held-out prime_bmm_f16's f16 [7, 509,
 * 1021]): the planner's fact (epi_coal: 2-byte elements), the slots, the model's price of the
 * staged coalesced stores (0.30 ns an element) and its text; TX_WG_EPI_COAL=0: no slots, the
 * register stores priced at 0.60 ns an element; 16-byte rows (N = 1024) keep TMA's fact and
 * price. */
static void test_coal_plan(void **state) {
    (void)state;
    static const char *BMM = "fn f(a: f16[B, M, K], b: f16[B, K, N]) -> f16[B, M, N] {\n"
                             "  return a @ b\n}\n";
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    for (int v = 0; v < 3; v++) {
        fe_define defs[4] = {{"B", 7}, {"M", 509}, {"K", 257}, {"N", v == 2 ? 1024 : 1021}};
        fe_options fo = {.defines = defs, .ndefines = 4};
        if (v == 1) setenv("TX_WG_EPI_COAL", "0", 1);
        ir_graph *g = fe_compile("t.tx", BMM, strlen(BMM), &fo, &d);
        assert_non_null(g);
        pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
        assert_true(pass_run_pipeline(g, &pc));
        pass_wg_shape s;
        double ns;
        char *txt = model_of(g, &s, &ns);
        unsetenv("TX_WG_EPI_COAL");
        const char *coal = "[matmul.wgmma.epi] staged coalesced stores (rows of 1021 x 2 bytes "
                           "are not 16-byte multiples";
        if (v == 0) {
            assert_int_equal(s.epi_coal, 2);
            assert_int_equal(s.epi_es, 2);
            assert_non_null(strstr(txt, coal));
            assert_non_null(strstr(txt, "per-register (cs2)"));
            assert_true(ns > 0.2999 && ns < 0.3001);
        } else if (v == 1) {
            assert_int_equal(s.epi_coal, 2);
            assert_int_equal(s.epi_es, 0);
            assert_null(strstr(txt, "staged coalesced"));
            assert_non_null(strstr(txt, "[matmul.wgmma.epi] register stores"));
            assert_true(ns > 0.5999 && ns < 0.6001);
        } else {
            assert_int_equal(s.epi_coal, 0);
            assert_int_equal(s.epi_es, 2);
            assert_null(strstr(txt, "staged coalesced"));
            assert_non_null(strstr(txt, "per-register TMA-store epilogue (ts"));
            assert_true(ns > 0.2499 && ns < 0.2501);
        }
        free(txt);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planner_is_kernel),
        cmocka_unit_test(test_space_forced),
        cmocka_unit_test(test_f32_not_looped),
        cmocka_unit_test(test_coal_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
