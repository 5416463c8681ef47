/* test_leading.c - matrix products whose LHS has leading dims on the sm_90a wgmma kernel:
 *
 * - pass_wg_rows (the rows of a shape) and pass_wg_fold (when the leading dims of a product fold
 *   into the 2-D kernel's M: A's base of the product's rank with its leading dims, K-contiguous;
 *   B 2-D or with leading dims of 1) on graphs built by the frontend;
 * - the planner's facts: M is the product of the leading dims and the row extent (-1 when one is
 *   unbound), the region's schedule matmul.wgmma, and the forms that do not fold (batched B, a
 *   broadcast A, a transposed 3-D A: the batched kernel, tests/unit/test_bmm.c);
 * - the manifest: the A and output tensor maps are 2-D with the leading dims as "outer" rows, B's
 *   map its last two dims; the runtime plan resolves the rows (B x S) at bound sizes and the
 *   encoder's checks accept them;
 * - merged heads [B, S, H x D] of an attention output [B, H, S, D] as A: a 4-D map, its last
 *   dim the batch, when S is a multiple of 128 (a tile inside one batch element), else mma.sync;
 * - ptxas -arch=sm_90a of the kernels with the leading dims bound and unbound (the epilogue splits
 *   a row into the leading indices): no spills (skipped with a message without ptxas). */
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

static const char *SRC_RES =
    "fn f(x: bf16[B, S, K], w: bf16[K, N], r: bf16[B, S, N]) -> bf16[B, S, N] {\n"
    "  return x @ w + r\n}\n";
static const char *SRC_4D = "fn f(x: bf16[B, H, S, D], w: bf16[E, D], b: bf16[E]) -> bf16[B, H, "
                            "S, E] {\n  return gelu(x @ transpose(w, 0, 1) + b)\n}\n";
static const char *SRC_MERGED =
    "fn f(o: bf16[B, H, S, D], w: bf16[K, N], r: bf16[B, S, N]) -> bf16[B, S, N] {\n"
    "  return r + reshape(transpose(o, 1, 2), (B, S, -1)) @ w\n}\n";
static const char *SRC_SWIGLU =
    "fn f(x: bf16[B, S, D], wg: bf16[D, F], wu: bf16[D, F]) -> bf16[B, S, F] {\n"
    "  return silu(x @ wg) * (x @ wu)\n}\n";

/* The planner's facts of the first matmul region of the program src at defs; *sched its schedule
 * id. */
static bool facts_of(const char *src, const fe_define *defs, unsigned nd, pass_wg_shape *s,
                     uint8_t *sched) {
    ir_schedule sc;
    bool ok = tk_wg_facts(src, defs, nd, s, &sc);
    *sched = sc.id;
    return ok;
}

static void test_rows(void **state) {
    (void)state;
    ir_shape s3 = {.rank = 3, .dim = {4, 1000, 64}}, s1 = {.rank = 1, .dim = {7}};
    assert_int_equal(pass_wg_rows(&s3), 4000);
    assert_int_equal(pass_wg_rows(&s1), 1);
    ir_shape sy = {.rank = 3, .dim = {IR_DIM_SYM(0), 10, 64}};
    assert_int_equal(pass_wg_rows(&sy), -1);
    ir_shape big = {.rank = 3, .dim = {1 << 20, 1 << 12, 8}};
    assert_int_equal(pass_wg_rows(&big), (int64_t)1 << 31);
}

/* M = B x S (bound), -1 unbound; N, K the last dims; the region scheduled matmul.wgmma */
static void test_facts(void **state) {
    (void)state;
    pass_wg_shape s;
    uint8_t id;
    fe_define d[4] = {{"B", 3}, {"S", 100}, {"K", 256}, {"N", 512}};
    assert_true(facts_of(SRC_RES, d, 4, &s, &id));
    assert_int_equal(s.M, 300);
    assert_int_equal(s.N, 512);
    assert_int_equal(s.K, 256);
    assert_true(s.a_kmajor);
    assert_false(s.b_kmajor);
    assert_int_equal(id, PASS_SCH_MATMUL_WGMMA);
    assert_true(facts_of(SRC_RES, d + 2, 2, &s, &id)); /* B, S unbound */
    assert_int_equal(s.M, -1);
    fe_define d4[5] = {{"B", 2}, {"H", 3}, {"S", 50}, {"D", 64}, {"E", 128}};
    assert_true(facts_of(SRC_4D, d4, 5, &s, &id));
    assert_int_equal(s.M, 300);
    assert_true(s.b_kmajor); /* transpose(w): B's contiguous axis is K */
    fe_define ds[5] = {{"B", 2}, {"S", 1000}, {"D", 1024}, {"F", 2816}};
    assert_true(facts_of(SRC_SWIGLU, ds, 4, &s, &id));
    assert_int_equal(s.nmm, 2);
    assert_int_equal(s.M, 2000);
    /* outside the fold, batched instead ([matmul.wgmma.batch], tests/unit/test_bmm.c): batched
     * B, an A broadcast over B's batch, a transposed 3-D A */
    static const char *no[] = {
        "fn f(a: bf16[B, M, K], b: bf16[B, K, N]) -> bf16[B, M, N] { return a @ b }\n",
        "fn f(a: bf16[1, M, K], b: bf16[B, K, N]) -> bf16[B, M, N] { return a @ b }\n",
        "fn f(a: bf16[B, K, M], b: bf16[K, N]) -> bf16[B, M, N] {\n"
        "  return transpose(a, 1, 2) @ b\n}\n",
    };
    fe_define dn[4] = {{"B", 2}, {"M", 128}, {"K", 64}, {"N", 128}};
    for (unsigned i = 0; i < 3; i++) {
        assert_true(facts_of(no[i], dn, 4, &s, &id));
        assert_int_equal(s.batch, 2);
        assert_int_equal(s.M, 128);
        assert_int_equal(id, PASS_SCH_MATMUL_WGMMA);
        cg_program *p = tk_compile_src(no[i], CG_SM90A, dn, 4, NULL);
        assert_non_null(strstr(tk_region_kernel(p)->tmpl, " bat"));
        cg_program_free(p);
    }
}

/* The A and output maps: rows = the leading dims ("outer"), resolved by the runtime plan */
static void test_tmaps(void **state) {
    (void)state;
    fe_define d[2] = {{"K", 256}, {"N", 512}}; /* B, S unbound */
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_RES, CG_SM90A, d, 2, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma-tma-ws"));
    assert_non_null(strstr(k->tmpl, " ts"));
    assert_int_equal(k->ntmaps, 3);
    const cg_tmap *ta = &k->tmaps[0], *tb = &k->tmaps[1], *to = &k->tmaps[2];
    assert_int_equal(ta->rank, 2);
    assert_int_equal(ta->dim[0], 256);
    assert_int_equal(ta->outer.rank, 2);
    assert_true(IR_DIM_IS_SYM(ta->outer.dim[0]) && IR_DIM_IS_SYM(ta->outer.dim[1]));
    assert_int_equal(tb->outer.rank, 0);
    assert_int_equal(tb->dim[0], 512);
    assert_int_equal(tb->dim[1], 256);
    assert_int_equal(to->rank, 2);
    assert_int_equal(to->dim[0], 512);
    assert_int_equal(to->outer.rank, 2);
    assert_int_equal(k->bufs[to->buf].kind, CG_BUF_OUTPUT);
    int64_t syms[8];
    int bi = ir_sym_find(g, "B"), si = ir_sym_find(g, "S");
    assert_true(bi >= 0 && si >= 0);
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    syms[bi] = 3, syms[si] = 100;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i];
    assert_non_null(kd);
    const rt_kparam *pa = &kd->params[k->nbufs + k->nsyms], *pb = pa + 1, *po = pa + 2;
    assert_int_equal(pa->kind, RT_KP_TMAP);
    assert_int_equal(pa->tmap.dim[0], 256);
    assert_int_equal(pa->tmap.dim[1], 300);
    assert_int_equal(pb->tmap.dim[0], 512);
    assert_int_equal(pb->tmap.dim[1], 256);
    assert_int_equal(po->tmap.dim[0], 512);
    assert_int_equal(po->tmap.dim[1], 300);
    char e[200];
    assert_true(rt_tmap_check(&pa->tmap, 4096, e, sizeof e));
    assert_true(rt_tmap_check(&po->tmap, 4096, e, sizeof e));
    /* 300 rows: the grid covers ceil(300 / 128) M tiles (pairs of them in a cluster) */
    uint64_t grid = (uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2];
    if (k->cluster > 1)
        assert_int_equal(grid, 2 * 2 * ((512 + k->per[2] - 1) / k->per[2]));
    else
        assert_int_equal(grid, 3 * ((512 + k->per[1] - 1) / k->per[1]));
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

/* Merged heads with a batch: a 4-D map {D, S, H, B} (B the "outer" planes), box {64, 128, 1,
 * 1}, when S is a multiple of 128; else mma.sync */
static void test_merged_batch(void **state) {
    (void)state;
    fe_define d[6] = {{"B", 3}, {"H", 4}, {"S", 256}, {"D", 64}, {"K", 256}, {"N", 512}};
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_MERGED, CG_SM90A, d, 6, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, " a3d"));
    const cg_tmap *ta = &k->tmaps[0];
    assert_int_equal(ta->rank, 4);
    assert_int_equal(ta->dim[0], 64);
    assert_int_equal(ta->dim[1], 256);
    assert_int_equal(ta->dim[2], 4);
    assert_int_equal(ta->box[0], 64);
    assert_int_equal(ta->box[1], 128);
    assert_int_equal(ta->box[2], 1);
    assert_int_equal(ta->box[3], 1);
    assert_int_equal(ta->outer.rank, 1);
    assert_int_equal(ta->outer.dim[0], 3);
    assert_non_null(strstr(cg_program_ptx(p, NULL), "cp.async.bulk.tensor.4d"));
    int64_t syms[8];
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i];
    assert_non_null(kd);
    const rt_kparam *pa = &kd->params[k->nbufs + k->nsyms];
    assert_int_equal(pa->tmap.rank, 4);
    assert_int_equal(pa->tmap.dim[3], 3);
    char e[200];
    assert_true(rt_tmap_check(&pa->tmap, 4096, e, sizeof e));
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
    d[2].value = 200; /* a 128-row tile would straddle two batch elements */
    p = tk_compile_src(SRC_MERGED, CG_SM90A, d, 6, NULL);
    assert_int_equal(tk_region_kernel(p)->tmpl[0], 0);
    cg_program_free(p);
}

static void ptxas_of(const char *src, const fe_define *defs, unsigned nd) {
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, nd, NULL);
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    assert_non_null(strstr(ptx, "wgmma.mma_async"));
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
    fe_define d[4] = {{"B", 4}, {"S", 1000}, {"K", 1024}, {"N", 4096}};
    ptxas_of(SRC_RES, d, 4);
    ptxas_of(SRC_RES, d + 2, 2);
    fe_define d4[5] = {{"B", 2}, {"H", 12}, {"S", 77}, {"D", 64}, {"E", 256}};
    ptxas_of(SRC_4D, d4, 5);
    ptxas_of(SRC_4D, d4 + 3, 2);
    fe_define ds[4] = {{"B", 2}, {"S", 2048}, {"D", 2048}, {"F", 5632}};
    ptxas_of(SRC_SWIGLU, ds, 4);
    fe_define dm[6] = {{"B", 2}, {"H", 16}, {"S", 2048}, {"D", 128}, {"K", 2048}, {"N", 2048}};
    ptxas_of(SRC_MERGED, dm, 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),  cmocka_unit_test(test_facts),
        cmocka_unit_test(test_tmaps), cmocka_unit_test(test_merged_batch),
        cmocka_unit_test(test_ptxas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
