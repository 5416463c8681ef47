/* test_split.c - the split stage (passes/split.c) and the plans it leads to on the H200:
 * BatchNorm1d statistics over (0, 2) of [32, 512, 1000] become one row kernel of both
 * statistics over the contiguous runs (two stages, axis 2 only, 16384 rows), one column kernel
 * combining them over axis 0, one pointwise kernel ([reduction.split_axes], [reduction.split_var]);
 * BatchNorm's column statistics of [32768, 512] become a two-stage column kernel over
 * [128, 256, 512] (axis 1: 65536 columns, a grid of at least 2 x 132 blocks), a combine and a
 * pointwise kernel ([reduction.split_column_var]); a sum over (0, 2) becomes a row then a column
 * reduction; nothing splits below the thresholds (a run of 31, a prime column length, more kept
 * columns than reduced ones or than fill the GPU whole), for bf16, or with a symbolic run; the
 * rewritten graph verifies. Both variances' statistics are of x minus a per-output pilot that the
 * chunk kernel also passes to the combine (a max over the chunk of it), so the combine reads no
 * tensor of x's size; bench verifies a split sum for all the terms it adds (drv_out_terms). The
 * numbers of the split plans against the reference: tests/scripts/split_axes.sh; their f32 accuracy
 * at a large mean: tests/scripts/split_stats.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

#include "driver/driver.h"
#include "frontend/frontend.h"
#include "passes/passes.h"

static const char *SEQBN = "fn f(x: f32[B, C, L]) -> (f32[B, C, L], f32[1, C, 1]) {\n"
                           "  mu = mean(x, axis=(0, 2), keepdim=true)\n"
                           "  d = x - mu\n"
                           "  var = mean(d * d, axis=(0, 2), keepdim=true)\n"
                           "  return d * rsqrt(var + 1e-5), var\n}\n";
static const char *COLVAR = "fn f(x: f32[N, C]) -> (f32[1, C], f32[N, C]) {\n"
                            "  mu = mean(x, axis=0, keepdim=true)\n"
                            "  d = x - mu\n"
                            "  var = mean(d * d, axis=0, keepdim=true)\n"
                            "  return var, d * rsqrt(var + 1e-5)\n}\n";
static const char *VAR02 =
    "fn f(x: f32[B, C, T, F]) -> (f32[B, C, T, F], f32[1, C, 1, F], f32[1, C, 1, F]) {\n"
    "  mu = mean(x, axis=(0, 2), keepdim=true)\n"
    "  d = x - mu\n"
    "  var = mean(d * d, axis=(0, 2), keepdim=true)\n"
    "  return d * rsqrt(var + 1e-5), mu, var\n}\n";
static const char *VAR12 = "fn f(x: f32[B, T, H, C]) -> (f32[B, T, H, C], f32[B, 1, 1, C]) {\n"
                           "  mu = mean(x, axis=(1, 2), keepdim=true)\n"
                           "  var = mean((x - mu) ** 2, axis=(1, 2), keepdim=true)\n"
                           "  return (x - mu) * rsqrt(var + 1e-5), var\n}\n";
static const char *SUM02 = "fn f(x: f32[B, C, L]) -> f32[C] { return sum(x, axis=(0, 2)) }\n";
static const char *SUM02_BF16 =
    "fn f(x: bf16[B, C, L]) -> bf16[C] { return sum(x, axis=(0, 2)) }\n";

/* Compiles src with the nd dims of defs and plans it for the H200. */
static ir_graph *plan_defs(const char *src, const fe_define *defs, unsigned nd) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    fe_options fo = {.entry = NULL, .defines = defs, .ndefines = nd};
    ir_graph *g = fe_compile("test.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
    assert_true(pass_run_pipeline(g, &pc));
    assert_true(ir_verify(g, stderr));
    return g;
}

/* Compiles src with dims "B=..,C=.." (NULL entries end) and plans it for the H200. */
static ir_graph *plan3(const char *src, const char *n1, int64_t v1, const char *n2, int64_t v2,
                       const char *n3, int64_t v3) {
    fe_define defs[3] = {{n1, v1}, {n2, v2}, {n3, v3}};
    return plan_defs(src, defs, n3 ? 3 : n2 ? 2 : 1);
}

/* var_mean_02_4d's statistics over (0, 2) of [B, C, T, F] planned at those sizes. */
static ir_graph *plan_var02(int64_t b, int64_t c, int64_t t, int64_t f) {
    fe_define defs[4] = {{"B", b}, {"C", c}, {"T", t}, {"F", f}};
    return plan_defs(VAR02, defs, 4);
}

/* Regions of kind k in g. */
static unsigned nkind(const ir_graph *g, ir_region_kind k) {
    unsigned n = 0;
    for (unsigned i = 0; i < g->nregions; i++) n += g->regions[i].kind == k;
    return n;
}

/* The domain (anchor input shape) of region r. */
static const ir_shape *dom(const ir_graph *g, unsigned r) {
    return &g->nodes[ir_in(g, &g->nodes[g->regions[r].anchor], 0)].shape;
}

/* Whether region r holds a max reduction (the chunk kernel's copy of the column pilot). */
static bool has_pilot_max(const ir_graph *g, unsigned r) {
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].region == r && g->nodes[i].op == IR_OP_MAX) return true;
    return false;
}

/* The element count of the largest tensor region r reads from HBM (pass_region_io). */
static int64_t max_read(const ir_graph *g, unsigned r) {
    pass_index ix;
    pass_io io;
    assert_true(pass_index_build(g, &ix));
    pass_region_io(g, &ix, r, &io);
    int64_t m = 0;
    for (uint32_t j = 0; j < io.nreads; j++) {
        int64_t n = ir_shape_numel(&g->nodes[io.reads[j]].shape);
        m = n > m ? n : m;
    }
    pass_io_free(&io);
    pass_index_free(&ix);
    return m;
}

static void test_seq_batchnorm(void **s) {
    (void)s;
    ir_graph *g = plan3(SEQBN, "B", 32, "C", 512, "L", 1000);
    assert_int_equal(g->nregions, 3);
    assert_int_equal(nkind(g, IR_RK_REDUCTION), 2);
    const ir_region *r0 = &g->regions[0], *r1 = &g->regions[1];
    assert_int_equal(r0->kind, IR_RK_REDUCTION);
    assert_int_equal(r0->red_axes, 1u << 2); /* the contiguous run only */
    assert_int_equal(r0->stages, 2);         /* the run's mean and its squared deviations */
    assert_int_equal(r0->red_extent, 1000);
    assert_int_equal(dom(g, 0)->dim[1], 512);
    assert_int_equal(r1->kind, IR_RK_REDUCTION);
    assert_int_equal(r1->red_axes, 1u << 0); /* the combine over the batch */
    assert_int_equal(dom(g, 1)->dim[2], 1);
    assert_int_equal(g->regions[2].kind, IR_RK_POINTWISE);
    assert_true(has_pilot_max(g, 0));
    assert_int_equal(max_read(g, 1), 32 * 512); /* the combine reads the runs' partials only */
    ir_graph_free(g);
    /* a run of 31: the strided row stays (one kernel) */
    g = plan3(SEQBN, "B", 32, "C", 512, "L", 31);
    assert_int_equal(g->nregions, 1);
    assert_int_equal(g->regions[0].red_axes, 5u);
    ir_graph_free(g);
}

static void test_sum_outer(void **s) {
    (void)s;
    ir_graph *g = plan3(SUM02, "B", 32, "C", 512, "L", 1024);
    assert_int_equal(nkind(g, IR_RK_REDUCTION), 2);
    assert_int_equal(g->regions[0].red_axes, 1u << 2);
    assert_int_equal(g->regions[0].red_extent, 1024);
    assert_int_equal(g->regions[1].red_axes, 1u << 0);
    assert_int_equal(drv_out_terms(g, 0), 32 * 1024); /* both stages' additions */
    ir_graph_free(g);
    g = plan3(SUM02_BF16, "B", 32, "C", 512, "L", 1024); /* bf16 partials would round */
    assert_int_equal(nkind(g, IR_RK_REDUCTION), 1);
    assert_int_equal(g->regions[0].red_axes, 5u);
    ir_graph_free(g);
    g = plan3(SUM02, "B", 32, "C", 512, NULL, 0); /* L unbound: the run's length unknown */
    assert_int_equal(nkind(g, IR_RK_REDUCTION), 1);
    ir_graph_free(g);
}

static void test_column_var(void **s) {
    (void)s;
    ir_graph *g = plan3(COLVAR, "N", 32768, "C", 512, NULL, 0);
    assert_int_equal(g->nregions, 3);
    const ir_region *r0 = &g->regions[0];
    const ir_shape *d0 = dom(g, 0);
    assert_int_equal(r0->kind, IR_RK_REDUCTION);
    assert_int_equal(d0->rank, 3);
    assert_int_equal(d0->dim[0], 128); /* the smallest power of two giving 2 x 132 x 128 columns */
    assert_int_equal(d0->dim[1], 256);
    assert_int_equal(r0->red_axes, 1u << 1);
    assert_int_equal(r0->stages, 2);
    assert_int_equal(r0->splits, 0);
    assert_int_equal(g->regions[1].red_axes, 1u << 0);
    assert_int_equal(dom(g, 1)->dim[0], 128);
    assert_int_equal(g->regions[2].kind, IR_RK_POINTWISE);
    assert_true(has_pilot_max(g, 0));
    assert_int_equal(max_read(g, 1), 128 * 512); /* the combine reads the chunks' partials only */
    assert_int_equal(drv_out_terms(g, 0), 128);  /* the combine: a mean of the chunks' terms */
    ir_graph_free(g);
    g = plan3(COLVAR, "N", 300, "C", 7, NULL, 0); /* 4 chunks of 75 (8 would not divide) */
    assert_int_equal(dom(g, 0)->dim[0], 4);
    assert_int_equal(dom(g, 0)->dim[1], 75);
    ir_graph_free(g);
    g = plan3(COLVAR, "N", 331, "C", 7, NULL, 0); /* prime: no chunks */
    assert_int_equal(dom(g, 0)->rank, 2);
    ir_graph_free(g);
    /* 4096 columns, fewer than 128 x 132 and shorter than they are many: [reduction.column_stages]
     * would keep the mean apart and the variance would read x twice more: 16 chunks of 2048 */
    g = plan3(COLVAR, "N", 32768, "C", 4096, NULL, 0);
    assert_int_equal(dom(g, 0)->rank, 3);
    assert_int_equal(dom(g, 0)->dim[0], 16);
    ir_graph_free(g);
    g = plan3(COLVAR, "N", 4096, "C", 16384, NULL, 0); /* more kept than reduced: one kernel */
    assert_int_equal(dom(g, 0)->rank, 2);
    assert_int_equal(g->nregions, 1);
    ir_graph_free(g);
    g = plan3(COLVAR, "N", 1024, "C", 20000, NULL, 0); /* 20000 columns fill the GPU whole */
    assert_int_equal(dom(g, 0)->rank, 2);
    ir_graph_free(g);
}

/* [reduction.split_column_var] over several axes, the innermost kept: var_mean over (0, 2) of
 * [32, 8, 1000, 80] (640 kept) was a column_blocks mean and a column_split variance with the
 * normalised batch (80 blocks, x read twice in it); now one two-stage chunk kernel over
 * [32, 8, 2, 500, 80] (axis 3: 40960 columns), a combine over (0, 2) of its partials and a
 * pointwise kernel. T odd: the batch index tells the chunks apart (axis 2 whole); T under 32:
 * nothing. Over (1, 2) of [4, 1024, 8, 64] the adjacent axes are one run of 8192 in chunks. */
static void test_column_var_axes(void **s) {
    (void)s;
    setenv("TX_SPLIT_COLVAR", "0", 1); /* the A/B knob: the column kernels of x */
    ir_graph *g = plan_var02(32, 8, 1000, 80);
    unsetenv("TX_SPLIT_COLVAR");
    assert_int_equal(g->nregions, 2);
    assert_int_equal(dom(g, 1)->rank, 4);
    ir_graph_free(g);
    g = plan_var02(32, 8, 1000, 80);
    assert_int_equal(g->nregions, 3);
    const ir_shape *d0 = dom(g, 0);
    assert_int_equal(g->regions[0].kind, IR_RK_REDUCTION);
    assert_int_equal(d0->rank, 5);
    assert_int_equal(d0->dim[2], 2); /* 2 x 20480 columns >= 2 x 132 x 128 */
    assert_int_equal(d0->dim[3], 500);
    assert_int_equal(g->regions[0].red_axes, 1u << 3);
    assert_int_equal(g->regions[0].stages, 2);
    assert_true(has_pilot_max(g, 0));
    assert_int_equal(g->regions[1].red_axes, (1u << 0) | (1u << 2));
    assert_int_equal(max_read(g, 1), 32 * 8 * 2 * 80); /* the partials only */
    assert_int_equal(g->regions[2].kind, IR_RK_POINTWISE);
    assert_int_equal(max_read(g, 2), 32 * 8 * 1000 * 80);
    ir_graph_free(g);
    g = plan_var02(32, 8, 1001, 80);
    assert_int_equal(g->nregions, 3);
    assert_int_equal(dom(g, 0)->rank, 4);
    assert_int_equal(g->regions[0].red_axes, 1u << 2);
    assert_int_equal(g->regions[1].red_axes, 1u << 0);
    ir_graph_free(g);
    g = plan_var02(32, 8, 31, 80); /* chunks under 32: the column kernels of x over (0, 2) */
    assert_int_equal(dom(g, 0)->rank, 4);
    assert_int_equal(g->regions[0].red_axes, (1u << 0) | (1u << 2));
    ir_graph_free(g);
    fe_define defs[4] = {{"B", 4}, {"T", 1024}, {"H", 8}, {"C", 64}};
    g = plan_defs(VAR12, defs, 4);
    assert_int_equal(g->nregions, 3);
    assert_int_equal(dom(g, 0)->rank, 4); /* [4, 256, 32, 64]: (1, 2) read as 256 chunks of 32 */
    assert_int_equal(dom(g, 0)->dim[1], 256);
    assert_int_equal(dom(g, 0)->dim[2], 32);
    assert_int_equal(g->regions[0].red_axes, 1u << 2);
    assert_int_equal(g->regions[1].red_axes, 1u << 1);
    ir_graph_free(g);
}

/* [reduction.column_split.waves]: the chunk kernel of var_mean over (0, 2) of [32, 8, 1000, 80]
 * (an online column: 60 registers, 2 blocks of 512 threads per SM) was column_split(128, 4): 320
 * blocks, a second wave of 56; now (32, 16): 1280 blocks, 5 waves of 8 groups a slice instead of
 * 2 of 32. Counter-shapes keep the base tile: the combine (640 columns, already the narrowest
 * tile) and a one-stage column mean of the same [32, 8, 2, 500, 80] (the column model's). */
static void test_column_var_waves(void **s) {
    (void)s;
    ir_graph *g = plan_var02(32, 8, 1000, 80);
    const ir_schedule *k0 = &g->regions[0].sched, *k1 = &g->regions[1].sched;
    assert_int_equal(k0->id, PASS_SCH_REDUCTION_COLUMN_SPLIT);
    assert_int_equal(k0->p[0], 32);
    assert_int_equal(k0->p[1], 16);
    assert_int_equal(k0->p[2], 1);
    assert_int_equal(k1->id, PASS_SCH_REDUCTION_COLUMN_SPLIT);
    assert_int_equal(k1->p[0], 8);
    assert_int_equal(k1->p[1], 8);
    ir_graph_free(g);
    static const char *MEAN3 = "fn f(x: f32[B, C, S, T, F]) -> f32[B, C, S, 1, F] { return mean(x, "
                               "axis=3, keepdim=true) }\n";
    fe_define defs[5] = {{"B", 32}, {"C", 8}, {"S", 2}, {"T", 500}, {"F", 80}};
    g = plan_defs(MEAN3, defs, 5);
    assert_int_equal(g->regions[0].sched.id, PASS_SCH_REDUCTION_COLUMN_SPLIT);
    assert_int_equal(g->regions[0].sched.p[0], 128);
    assert_int_equal(g->regions[0].sched.p[1], 4);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_batchnorm),    cmocka_unit_test(test_sum_outer),
        cmocka_unit_test(test_column_var),       cmocka_unit_test(test_column_var_axes),
        cmocka_unit_test(test_column_var_waves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
