/* test_red_pick.c - [reduction.pick] (passes/pick.c, codegen/reduction.c cg_red_pick): a one-hot
 * sum along a row, sum(where(iota == idx, A, 0), axis=-1) with idx constant along the row, is
 * planned as a pick (ir_region.picks, --explain) and read at the index once per row; the forms
 * whose meaning a pick would change (a one-hot product, a where summed with other terms, a mean, a
 * float compare, a nonzero else, an index varying along the row, a column sum) are not. The host
 * JIT agrees with the interpreter bit for bit on the pick (labels below 0 and at or past the row's
 * length give 0, a -0 at the index gives +0, NaN and infinities at the index propagate, those
 * elsewhere do not) under every plan the rule meets (rows held in registers, staged, streamed
 * online and multipass, a split row, a reduction that reads the pick), and within the f32
 * tolerance on the cross-entropy programs. The model's instructions per element drop, and the
 * sm_90a streaming loop of a cross-entropy loses the per-element compare, select and
 * compensated add (its PTX assembles with ptxas). */
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

/* The pick alone (the sum returned per row), in the forms the rule takes. */
static const char *PICK = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n"
                          "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                          "  return sum(where(hit, x, 0.0), axis=-1)\n}\n";
static const char *PICK_REV = "fn f(x: f32[M, N], y: i32[M]) -> f32[M, 1] {\n" /* idx == iota */
                              "  hit = reshape(y, (M, 1)) == iota((M, N), axis=1)\n"
                              "  return sum(where(hit, x * 2.0, -0.0), axis=-1, keepdim=true)\n}\n";
static const char *PICK_I32 = "fn f(x: i32[M, N], y: i32[M]) -> i32[M] {\n"
                              "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                              "  return sum(where(hit, x, 0), axis=-1)\n}\n";
static const char *PICK_DIAG = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n" /* idx: the row */
                               "  hit = iota((M, N), axis=0) == iota((M, N), axis=1)\n"
                               "  return sum(where(hit, x, 0.0), axis=-1) + f32(y) * 0.0\n}\n";
/* A pick of a value that depends on the row's reductions (log_softmax: level 3), with the
 * log-probabilities stored (an epilogue: held, staged or streamed by the row length). */
static const char *PICK_LSM = "fn f(x: f32[M, N], y: i32[M]) -> (f32[M, N], f32[M]) {\n"
                              "  lp = log_softmax(x, axis=-1)\n"
                              "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                              "  return lp, -sum(where(hit, lp, 0.0), axis=-1)\n}\n";
/* A reduction that reads the pick (level 2 after a level-1 pick). */
static const char *PICK_DEP = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n"
                              "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                              "  p = sum(where(hit, x, 0.0), axis=-1, keepdim=true)\n"
                              "  return sum(exp(x - p) * 0.001, axis=-1)\n}\n";
/* The held-out cross-entropy with z-loss (bf16 logits). */
static const char *CE_ZLOSS = "fn f(logits: bf16[M, N], labels: i32[M]) -> (f32[], f32[M]) {\n"
                              "  x = f32(logits)\n"
                              "  m = max(x, axis=-1, keepdim=true)\n"
                              "  lse = log(sum(exp(x - m), axis=-1, keepdim=true)) + m\n"
                              "  hit = iota((M, N), axis=1) == reshape(labels, (M, 1))\n"
                              "  picked = sum(where(hit, x, 0.0), axis=-1, keepdim=true)\n"
                              "  loss = mean(lse - picked) + 1e-4 * mean(lse * lse)\n"
                              "  return loss, reshape(lse, (M,))\n}\n";

/* Not picks: a form whose meaning a pick would change, or that is not one element. */
static const char *NOT_MUL = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n" /* 0 * inf = NaN */
                             "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                             "  return sum(f32(hit) * x, axis=-1)\n}\n";
static const char *NOT_TERMS = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n"
                               "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                               "  return sum(where(hit, x, 0.0) + 0.1 * x, axis=-1)\n}\n";
static const char *NOT_MEAN = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n"
                              "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                              "  return mean(where(hit, x, 0.0), axis=-1)\n}\n";
static const char *NOT_FLOAT = "fn f(x: f32[M, N], y: f32[M]) -> f32[M] {\n" /* y may be 2.5 */
                               "  hit = f32(iota((M, N), axis=1)) == reshape(y, (M, 1))\n"
                               "  return sum(where(hit, x, 0.0), axis=-1)\n}\n";
static const char *NOT_ELSE = "fn f(x: f32[M, N], y: i32[M]) -> f32[M] {\n"
                              "  hit = iota((M, N), axis=1) == reshape(y, (M, 1))\n"
                              "  return sum(where(hit, x, 1.0), axis=-1)\n}\n";
static const char *NOT_ALONG = "fn f(x: f32[M, N], y: i32[N]) -> f32[M] {\n" /* y varies */
                               "  hit = iota((M, N), axis=1) == reshape(y, (1, N))\n"
                               "  return sum(where(hit, x, 0.0), axis=-1)\n}\n";
static const char *NOT_COLUMN = "fn f(x: f32[M, N], y: i32[N]) -> f32[N] {\n"
                                "  hit = iota((M, N), axis=0) == reshape(y, (1, N))\n"
                                "  return sum(where(hit, x, 0.0), axis=0)\n}\n";

/* Compiles src with M, N bound and plans it for the H200 at sm_90a (budget 0: the GPU's);
 * *raw gets the unplanned copy; explain (may be NULL) receives --explain. */
static ir_graph *plan_ex(const char *src, int64_t M, int64_t N, ir_graph **raw, FILE *explain) {
    fe_define defs[2] = {{"M", M}, {"N", N}};
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    fe_options fo = {.entry = NULL, .defines = defs, .ndefines = 2};
    ir_graph *g = fe_compile("test.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    if (raw) *raw = ir_graph_clone(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200"), .explain = explain};
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* The picks of every reduction region of g, as the number of bits set. */
static unsigned count_picks(const ir_graph *g) {
    unsigned n = 0;
    for (unsigned r = 0; r < g->nregions; r++)
        if (g->regions[r].kind == IR_RK_REDUCTION)
            for (uint32_t m = g->regions[r].picks; m; m &= m - 1) n++;
    return n;
}

/* The first reduction region of g that holds picks (fails the test when none does). */
static unsigned pick_region(const ir_graph *g) {
    for (unsigned r = 0; r < g->nregions; r++)
        if (g->regions[r].kind == IR_RK_REDUCTION && g->regions[r].picks) return r;
    fail_msg("no reduction region with a pick");
    return 0;
}

/* Planned (and explained) picks: each taking program has its picks and names the rule with the
 * model's instructions per element before and after; the model of the cross-entropy kernel
 * drops by the compare, the select and the compensated add (at least 6 instructions per
 * element); TX_RED_PICK=0 and every non-taking form plan no pick. */
static void test_pick_plans(void **s) {
    (void)s;
    static const struct {
        const char **src;
        unsigned picks;
    } cases[] = {{&PICK, 1},      {&PICK_REV, 1}, {&PICK_I32, 1},  {&PICK_DIAG, 1}, {&PICK_LSM, 1},
                 {&PICK_DEP, 1},  {&CE_ZLOSS, 1}, {&NOT_MUL, 0},   {&NOT_TERMS, 0}, {&NOT_MEAN, 0},
                 {&NOT_FLOAT, 0}, {&NOT_ELSE, 0}, {&NOT_ALONG, 0}, {&NOT_COLUMN, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *ex = open_memstream(&buf, &len);
        ir_graph *g = plan_ex(*cases[i].src, 64, 5000, NULL, ex);
        fclose(ex);
        if (count_picks(g) != cases[i].picks)
            fprintf(stderr, "%s: %u picks, expected %u\n", *cases[i].src, count_picks(g),
                    cases[i].picks);
        assert_int_equal(count_picks(g), cases[i].picks);
        assert_int_equal(strstr(buf, "[reduction.pick]") != NULL, cases[i].picks > 0);
        free(buf);
        ir_graph_free(g);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *ex = open_memstream(&buf, &len);
    ir_graph *g = plan_ex(CE_ZLOSS, 4093, 128256, NULL, ex);
    fclose(ex);
    unsigned r = pick_region(g);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    double with = pass_model_instr(g, &ix, r, 2), without = pass_model_instr_picks(g, &ix, r, 2, 0);
    assert_true(without - with >= 6.0);
    char want[64];
    snprintf(want, sizeof want, "issue %.1f -> %.1f instructions per element", without, with);
    if (!strstr(buf, want)) fprintf(stderr, "explain:\n%swithout %s\n", buf, want);
    assert_non_null(strstr(buf, want));
    pass_index_free(&ix);
    ir_graph_free(g);
    free(buf);
    setenv("TX_RED_PICK", "0", 1);
    g = plan_ex(CE_ZLOSS, 4093, 128256, NULL, NULL);
    unsetenv("TX_RED_PICK");
    assert_int_equal(count_picks(g), 0);
    ir_graph_free(g);
}

/* Input values of the value tests: row x (of length n) holds special values at fixed places
 * (rows r: r % 8 == 1 -inf at 0, 2 +inf at 1, 3 NaN at 2, 4 -0 at the label, 5 NaN at the label,
 * 6 +inf at the label, 7 -inf at the label); labels cycle through in-range values and -1, -100,
 * n, n + 7, 0 and n - 1. */
static int64_t label_of(int64_t row, int64_t n) {
    switch (row % 9) {
        case 0: return -1;
        case 1: return -100;
        case 2: return n;
        case 3: return n + 7;
        case 4: return 0;
        case 5: return n - 1;
        default: return (row * 7919) % n;
    }
}
static double special_at(int64_t row, int64_t e, int64_t n, double v) {
    int64_t lab = label_of(row, n);
    switch (row % 8) {
        case 1: return e == 0 ? -INFINITY : v;
        case 2: return e == 1 % n ? INFINITY : v;
        case 3: return e == 2 % n ? NAN : v;
        case 4: return e == lab ? -0.0 : v;
        case 5: return e == lab ? NAN : v;
        case 6: return e == lab ? INFINITY : v;
        case 7: return e == lab ? -INFINITY : v;
        default: return v;
    }
}

/* Runs planned g (raw: unplanned) on the host JIT and in the interpreter with M rows of N
 * (x random with the special values of special_at when `special`, labels from label_of); every
 * output agrees: bit for bit (NaN with NaN, the sign of zero) when `exact`, else within the
 * tolerance of tk_close_enough. */
static void run_pick(const ir_graph *g, const ir_graph *raw, const char *src, int64_t M, int64_t N,
                     bool special, bool exact, uint64_t seed) {
    rt_tensor in[2];
    memset(in, 0, sizeof in);
    for (unsigned i = 0; i < 2; i++) {
        const ir_node *n = &raw->nodes[i];
        in[i].dtype = (ir_dtype)n->dtype;
        in[i].rank = n->shape.rank;
        for (unsigned a = 0; a < n->shape.rank; a++) in[i].dim[a] = n->shape.dim[a];
        assert_true(rt_tensor_alloc(&in[i]));
        rt_fill_random(&in[i], seed, i);
    }
    if (in[1].rank == 1 && in[1].dim[0] == M && in[1].dtype == IR_I32)
        for (int64_t r = 0; r < M; r++) rt_set(&in[1], r, (double)label_of(r, N));
    if (special && in[0].dtype != IR_I32)
        for (int64_t r = 0; r < M; r++)
            for (int64_t e = 0; e < N; e++)
                rt_set(&in[0], r * N + e, special_at(r, e, N, rt_get(&in[0], r * N + e)));
    unsigned nout = raw->nodes[ir_output(raw)].nin;
    rt_tensor a[4], b[4];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    assert_true(drv_host_run(g, in, a, &d));
    assert_true(rt_interp_run(raw, in, b, &d));
    for (unsigned k = 0; k < nout; k++) {
        int64_t n = rt_numel(&b[k]), bad = 0, first = -1;
        assert_int_equal(rt_numel(&a[k]), n);
        for (int64_t i = 0; i < n; i++) {
            double x = rt_get(&a[k], i), y = rt_get(&b[k], i);
            bool ok = exact ? (isnan(x) ? isnan(y) : x == y && signbit(x) == signbit(y))
                            : tk_close_enough(b[k].dtype, x, y);
            if (!ok && first < 0) first = i;
            bad += !ok;
        }
        if (bad)
            fprintf(stderr,
                    "%soutput %u, %lld x %lld: %lld of %lld differ; first at %lld: jit %.9g "
                    "ref %.9g\n",
                    src, k, (long long)M, (long long)N, (long long)bad, (long long)n,
                    (long long)first, rt_get(&a[k], first), rt_get(&b[k], first));
        assert_int_equal(bad, 0);
        rt_tensor_free(&a[k]);
        rt_tensor_free(&b[k]);
    }
    for (unsigned i = 0; i < 2; i++) rt_tensor_free(&in[i]);
}

/* The schedule and strategy of g's pick region, for the plan each size is meant to meet. */
static void expect_plan(const ir_graph *g, int sched, int strategy) {
    const ir_region *rg = &g->regions[pick_region(g)];
    if ((sched >= 0 && rg->sched.id != sched) || (strategy >= 0 && rg->strategy != strategy))
        fprintf(stderr, "planned %s strategy %s; expected %s %s\n",
                pass_schedule_name(rg->sched.id), ir_red_strategy_name(rg->strategy),
                sched >= 0 ? pass_schedule_name(sched) : "any",
                strategy >= 0 ? ir_red_strategy_name(strategy) : "any");
    if (sched >= 0) assert_int_equal(rg->sched.id, sched);
    if (strategy >= 0) assert_int_equal(rg->strategy, strategy);
}

/* Host JIT against the interpreter under every plan the rule meets, with labels out of range
 * and special values at and away from the index. */
static void test_pick_values(void **s) {
    (void)s;
    static const struct {
        const char **src;
        int64_t m, n;
        int sched, strategy;
        bool exact;
    } cases[] = {
        {&PICK, 37, 17, -1, IR_RED_ONCHIP, true},                   /* held in registers */
        {&PICK, 19, 50257, PASS_SCH_REDUCTION_ROW_SPLIT, -1, true}, /* split rows */
        {&PICK, 2, 1 << 20, PASS_SCH_REDUCTION_ROW_SPLIT, -1, true},
        {&PICK_REV, 23, 4099, -1, -1, true},
        {&PICK_I32, 29, 1001, -1, -1, true},
        {&PICK_DIAG, 41, 41, -1, -1, true},
        {&PICK_LSM, 37, 13, -1, IR_RED_ONCHIP, false},     /* held */
        {&PICK_LSM, 9, 20000, -1, IR_RED_ONCHIP, false},   /* staged in shared memory */
        {&PICK_LSM, 24, 200003, -1, IR_RED_ONLINE, false}, /* [simplify.pick_push]: one pass */
        {&PICK_DEP, 11, 3001, -1, -1, false},
        {&CE_ZLOSS, 45, 128256, PASS_SCH_REDUCTION_ROW_SPLIT2, IR_RED_ONLINE, false},
        {&CE_ZLOSS, 300, 20011, PASS_SCH_REDUCTION_ROW, -1, false}, /* one online stream a row */
        {&CE_ZLOSS, 3, 33, -1, -1, false},
        {&NOT_MUL, 19, 1001, -1, -1, true}, /* a NaN row where inf is off the index */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ir_graph *raw, *g = plan_ex(*cases[i].src, cases[i].m, cases[i].n, &raw, NULL);
        if (*cases[i].src != NOT_MUL) expect_plan(g, cases[i].sched, cases[i].strategy);
        run_pick(g, raw, *cases[i].src, cases[i].m, cases[i].n, true, cases[i].exact, 40 + i);
        run_pick(g, raw, *cases[i].src, cases[i].m, cases[i].n, false, cases[i].exact, 60 + i);
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

/* Lines of the PTX function `name` (from its .entry to the closing brace); 0 when absent. */
static unsigned entry_lines(const char *ptx, const char *name) {
    char key[128];
    snprintf(key, sizeof key, ".entry %s(", name);
    const char *p = strstr(ptx, key);
    if (!p) return 0;
    const char *end = strstr(p, "\n}");
    unsigned n = 0;
    for (; p < end; p++) n += *p == '\n';
    return n;
}

/* Occurrences of `what` in the PTX function `name`. */
static unsigned entry_count(const char *ptx, const char *name, const char *what) {
    char key[128];
    snprintf(key, sizeof key, ".entry %s(", name);
    const char *p = strstr(ptx, key);
    if (!p) return 0;
    const char *end = strstr(p, "\n}");
    unsigned n = 0;
    for (const char *q = strstr(p, what); q && q < end; q = strstr(q + 1, what)) n++;
    return n;
}

/* The sm_90a PTX of the cross-entropy at N = 4093, V = 128256 (reduction.row, online): its
 * reduction kernel has no per-element label compare (setp.eq.s32: 8 a group of 8 bf16 without
 * the rule, none in the loop with it) and 40 or more lines fewer; it assembles with ptxas. */
static void test_pick_ptx(void **s) {
    (void)s;
    size_t n[2] = {0, 0};
    unsigned lines[2], eqs[2];
    for (int off = 0; off < 2; off++) {
        if (off) setenv("TX_RED_PICK", "0", 1);
        ir_graph *g = plan_ex(CE_ZLOSS, 4093, 128256, NULL, NULL);
        if (off) unsetenv("TX_RED_PICK");
        assert_int_equal(count_picks(g), off ? 0 : 1);
        tx_diag d;
        tx_diag_init(&d, stderr, "test.tx", CE_ZLOSS, strlen(CE_ZLOSS));
        cg_program *p = cg_program_new(g, CG_SM90A, &d);
        assert_non_null(p);
        const char *ptx = cg_program_ptx(p, &n[off]);
        assert_non_null(ptx);
        lines[off] = entry_lines(ptx, "f_k0");
        eqs[off] = entry_count(ptx, "f_k0", "setp.eq.s32");
        assert_true(lines[off] > 0);
        int rc = tk_ptxas(ptx, n[off], "sm_90a", NULL);
        if (rc == -1) printf("test_pick_ptx: ptxas not found; PTX not assembled\n");
        assert_true(rc <= 0);
        cg_program_free(p);
        ir_graph_free(g);
    }
    fprintf(stderr,
            "cross-entropy k0: %u PTX lines (%u setp.eq.s32) with the pick, %u (%u) without\n",
            lines[0], eqs[0], lines[1], eqs[1]);
    assert_true(eqs[1] >= 8);
    assert_true(eqs[0] + 8 <= eqs[1]);
    assert_true(lines[0] + 40 <= lines[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_plans),
        cmocka_unit_test(test_pick_values),
        cmocka_unit_test(test_pick_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
