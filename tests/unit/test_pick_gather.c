/* test_pick_gather.c - [reduction.pick_gather] (passes/pick.c, the IR op pick, codegen/value.c
 * cg_emit_pick, runtime/interp.c eval_pick): a one-hot sum along an axis other than the innermost
 * (an nn.Embedding lookup written as sum(where(ids == iota(V), table, 0), axis=...), T5's
 * relative-position bias, a column one-hot, a diagonal along a middle axis) becomes an
 * elementwise gather pick(A, idx) and no reduction remains; the gather fuses into its consumer's
 * kernel (T5: the bias is not stored, one kernel fewer). The forms whose meaning a gather would
 * change stay sums (a narrowing cast after the where, a one-hot product, a nonzero else, a mean,
 * a float compare, an index varying along the axis), and TX_RED_PICK=0 turns the rule off. The
 * host JIT agrees with the interpreter's unplanned program bit for bit (indices below 0 and at or
 * past the axis's length give 0, a -0 at the index gives +0, NaN and infinities at the index
 * propagate, those elsewhere do not); the planned program's interpreter (eval_pick) agrees as
 * well; the sm_90a PTX of T5 at its benchmark size assembles with ptxas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "testkit.h"

#include "driver/driver.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

/* Each program's first input is the table (A), its second the indices (i32). */
/* An embedding lookup [B, T] -> [B, T, D]: the hit [B, T, V, 1] broadcast over D, axis 2. */
static const char *EMB = "fn f(table: f32[V, D], ids: i32[B, T]) -> f32[B, T, D] {\n"
                         "  hit = reshape(ids, (B, T, 1, 1)) == iota((B, T, V, 1), axis=2)\n"
                         "  return sum(where(hit, table, 0.0), axis=2)\n}\n";
/* bf16 table, the hit reshaped from [T, V] to [T, V, 1], a widening cast, keepdim. */
static const char *EMB_BF16 = "fn f(table: bf16[V, D], ids: i32[T]) -> f32[T, 1, D] {\n"
                              "  hit = reshape(ids, (T, 1)) == iota((T, V), axis=1)\n"
                              "  e = where(reshape(hit, (T, V, 1)), table, 0.0)\n"
                              "  return sum(f32(e), axis=1, keepdim=true) * 2.0\n}\n";
/* A column one-hot: row ids[n] of column n. */
static const char *EMB_COL = "fn f(x: f32[V, D], ids: i32[D]) -> f32[D] {\n"
                             "  hit = iota((V, D), axis=0) == reshape(ids, (1, D))\n"
                             "  return sum(where(hit, x, 0.0), axis=0)\n}\n";
/* i32 table, the index first in the eq, the lookup added to a tensor of its shape. */
static const char *EMB_I32 = "fn f(table: i32[V, D], ids: i32[B], y: i32[B, D]) -> i32[B, D] {\n"
                             "  hit = reshape(arange(V), (V, 1)) == reshape(ids, (B, 1, 1))\n"
                             "  return sum(where(hit, table, 0), axis=1) + y\n}\n";
/* The diagonal along a middle axis: the index is an iota along another axis. */
static const char *DIAG =
    "fn f(x: f32[B, V, V], ids: i32[B]) -> f32[B, V] {\n"
    "  hit = iota((B, V, V), axis=1) == iota((B, V, V), axis=2)\n"
    "  return sum(where(hit, x, 0.0), axis=1) + f32(reshape(ids, (B, 1))) * 0.0\n}\n";
/* T5's relative-position bias (bench/heldout/t5_rel_bucket.tx with the buckets as an input). */
static const char *T5 =
    "fn f(table: f32[32, H], bucket: i32[Q, K], scores: f32[B, H, Q, K]) -> f32[B, H, Q, K] {\n"
    "  hit = reshape(bucket, (Q, K, 1)) == arange(32)\n"
    "  bias = permute(sum(where(reshape(hit, (Q, K, 32, 1)), table, 0.0), axis=2), (2, 0, 1))\n"
    "  return softmax(scores + bias, axis=-1)\n}\n";

/* Not gathers: the sum's meaning would change. */
static const char *NOT_NARROW = "fn f(x: f32[V, D], ids: i32[D]) -> bf16[D] {\n" /* -1e-30: -0 */
                                "  hit = iota((V, D), axis=0) == reshape(ids, (1, D))\n"
                                "  return sum(bf16(where(hit, x, 0.0)), axis=0)\n}\n";
static const char *NOT_MUL = "fn f(x: f32[V, D], ids: i32[D]) -> f32[D] {\n" /* 0 * inf = NaN */
                             "  hit = iota((V, D), axis=0) == reshape(ids, (1, D))\n"
                             "  return sum(f32(hit) * x, axis=0)\n}\n";
static const char *NOT_ELSE = "fn f(x: f32[V, D], ids: i32[D]) -> f32[D] {\n"
                              "  hit = iota((V, D), axis=0) == reshape(ids, (1, D))\n"
                              "  return sum(where(hit, x, 1.0), axis=0)\n}\n";
static const char *NOT_MEAN = "fn f(x: f32[V, D], ids: i32[D]) -> f32[D] {\n"
                              "  hit = iota((V, D), axis=0) == reshape(ids, (1, D))\n"
                              "  return mean(where(hit, x, 0.0), axis=0)\n}\n";
static const char *NOT_FLOAT = "fn f(x: f32[V, D], ids: f32[D]) -> f32[D] {\n" /* 2.5 */
                               "  hit = f32(iota((V, D), axis=0)) == reshape(ids, (1, D))\n"
                               "  return sum(where(hit, x, 0.0), axis=0)\n}\n";
static const char *NOT_ALONG = "fn f(x: f32[V, D], ids: i32[V]) -> f32[D] {\n" /* varies */
                               "  hit = iota((V, D), axis=0) == reshape(ids, (V, 1))\n"
                               "  return sum(where(hit, x, 0.0), axis=0)\n}\n";

/* True when dim `name` appears in the signature (first line) of src. */
static bool has_dim(const char *src, const char *name) {
    size_t n = strlen(name), sig = strcspn(src, "\n");
    for (const char *p = strstr(src, name); p && (size_t)(p - src) < sig; p = strstr(p + 1, name))
        if ((p[-1] == '[' || p[-1] == ' ') && (p[n] == ',' || p[n] == ']')) return true;
    return false;
}

/* Compiles src with the sizes (name, value) of its signature bound and plans it for the H200 at
 * sm_90a; *raw (may be NULL) gets the unplanned copy; explain (may be NULL) receives --explain. */
static ir_graph *plan(const char *src, const fe_define *defs, unsigned ndefs, ir_graph **raw,
                      FILE *explain) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    fe_define use[16];
    unsigned nuse = 0;
    for (unsigned i = 0; i < ndefs && nuse < 16; i++)
        if (has_dim(src, defs[i].name)) use[nuse++] = defs[i];
    fe_options fo = {.entry = NULL, .defines = use, .ndefines = nuse};
    ir_graph *g = fe_compile("test.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    if (raw) *raw = ir_graph_clone(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200"), .explain = explain};
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* Nodes of g with op `op`. */
static unsigned count_op(const ir_graph *g, ir_op op) {
    unsigned n = 0;
    for (ir_id i = 0; i < g->n; i++) n += g->nodes[i].op == op;
    return n;
}

/* The sizes of the value tests (small, odd) and of the planning tests. */
static const fe_define SMALL[] = {{"V", 7}, {"D", 5}, {"B", 3}, {"T", 11},
                                  {"H", 3}, {"Q", 9}, {"K", 13}};
static const fe_define BIG[] = {{"V", 32000}, {"D", 512}, {"B", 8},  {"T", 512},
                                {"H", 12},    {"Q", 512}, {"K", 512}};
enum { NSIZES = sizeof SMALL / sizeof SMALL[0] };

/* Every taking form has one pick node and no sum left, and --explain names the rule with the
 * element counts; the non-taking forms and TX_RED_PICK=0 keep their sum and plan no pick. */
static void test_gather_plans(void **s) {
    (void)s;
    static const struct {
        const char **src;
        unsigned picks;
    } cases[] = {{&EMB, 1},      {&EMB_BF16, 1},   {&EMB_COL, 1},  {&EMB_I32, 1},
                 {&DIAG, 1},     {&NOT_NARROW, 0}, {&NOT_MUL, 0},  {&NOT_ELSE, 0},
                 {&NOT_MEAN, 0}, {&NOT_FLOAT, 0},  {&NOT_ALONG, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int off = 0; off < 2; off++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *ex = open_memstream(&buf, &len);
            if (off) setenv("TX_RED_PICK", "0", 1);
            ir_graph *g = plan(*cases[i].src, BIG, NSIZES, NULL, ex);
            unsetenv("TX_RED_PICK");
            fclose(ex);
            unsigned want = off ? 0 : cases[i].picks;
            if (count_op(g, IR_OP_PICK) != want)
                fprintf(stderr, "%s(TX_RED_PICK=%d): %u picks, expected %u\n", *cases[i].src, !off,
                        count_op(g, IR_OP_PICK), want);
            assert_int_equal(count_op(g, IR_OP_PICK), want);
            assert_int_equal(count_op(g, IR_OP_SUM) + count_op(g, IR_OP_MEAN), want ? 0 : 1);
            assert_int_equal(strstr(buf, "[reduction.pick_gather]") != NULL, want > 0);
            free(buf);
            ir_graph_free(g);
        }
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *ex = open_memstream(&buf, &len);
    ir_graph *g = plan(EMB, BIG, NSIZES, NULL, ex);
    fclose(ex);
    if (!strstr(buf, "of [8, 512, 32000, 512] is one-hot") ||
        !strstr(buf, "each of its 2097152 elements") || !strstr(buf, "where the sum read 32000"))
        fprintf(stderr, "explain:\n%s", buf);
    assert_non_null(strstr(buf, "of [8, 512, 32000, 512] is one-hot"));
    assert_non_null(strstr(buf, "each of its 2097152 elements"));
    assert_non_null(strstr(buf, "where the sum read 32000"));
    free(buf);
    ir_graph_free(g);
}

/* T5's bias at its benchmark size: with the rule the gather joins the softmax's kernel (one
 * kernel, which writes only the probabilities: the bias is never stored), without it the one-hot
 * sum is a kernel of its own that stores the bias for the softmax. */
static void test_gather_fuses(void **s) {
    (void)s;
    for (int off = 0; off < 2; off++) {
        if (off) setenv("TX_RED_PICK", "0", 1);
        ir_graph *g = plan(T5, BIG, NSIZES, NULL, NULL);
        unsetenv("TX_RED_PICK");
        unsigned writes = 0;
        for (unsigned r = 0; r < g->nregions; r++) writes += g->regions[r].nout;
        fprintf(stderr, "t5 bias (TX_RED_PICK=%d): %u kernels writing %u values\n", !off,
                g->nregions, writes);
        assert_int_equal(g->nregions, off ? 2 : 1);
        assert_int_equal(writes, off ? 2 : 1);
        ir_graph_free(g);
    }
}

/* Special values of the table (row v of A, D values a row): NaN in row 3, +inf in row 5, -inf in
 * row 2 at column 0, -0 in row 1; indices cycle through in-range values and -1, -100, V, V + 7. */
static double special(int64_t v, int64_t d, double x) {
    switch (v) {
        case 1: return -0.0;
        case 2: return d == 0 ? -INFINITY : x;
        case 3: return NAN;
        case 5: return INFINITY;
        default: return x;
    }
}
static int64_t index_of(int64_t i, int64_t V) {
    switch (i % 7) {
        case 0: return -1;
        case 1: return -100;
        case 2: return V;
        case 3: return V + 7;
        default: return (i * 31) % V;
    }
}

/* Runs planned g (raw: unplanned) on the host JIT, the interpreter of raw and the interpreter of
 * g (eval_pick) with random inputs, the table's rows (its second innermost axis) given special
 * values when `special_rows`, the indices from index_of; the outputs agree bit for bit (NaN with
 * NaN, the sign of zero) when `exact`, else the JIT within tk_close_enough (the interpreters
 * still bit for bit). */
static void run_gather(const ir_graph *g, const ir_graph *raw, const char *src, int64_t V,
                       bool special_rows, bool exact, uint64_t seed) {
    unsigned nin = 0;
    while (nin < raw->n && raw->nodes[nin].op == IR_OP_INPUT) nin++;
    rt_tensor in[3];
    memset(in, 0, sizeof in);
    for (unsigned i = 0; i < nin; i++) {
        const ir_node *n = &raw->nodes[i];
        in[i].dtype = (ir_dtype)n->dtype;
        in[i].rank = n->shape.rank;
        for (unsigned a = 0; a < n->shape.rank; a++) in[i].dim[a] = n->shape.dim[a];
        assert_true(rt_tensor_alloc(&in[i]));
        rt_fill_random(&in[i], seed, i);
    }
    for (int64_t i = 0; in[1].dtype == IR_I32 && i < rt_numel(&in[1]); i++)
        rt_set(&in[1], i, (double)index_of(i, V));
    if (special_rows && ir_dtype_is_float(in[0].dtype)) {
        int64_t cols = in[0].dim[in[0].rank - 1], rows = in[0].dim[in[0].rank - 2];
        for (int64_t i = 0; i < rt_numel(&in[0]); i++)
            rt_set(&in[0], i, special((i / cols) % rows, i % cols, rt_get(&in[0], i)));
    }
    unsigned nout = raw->nodes[ir_output(raw)].nin;
    rt_tensor a[2], b[2], c[2];
    memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(c, 0, sizeof c);
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    assert_true(drv_host_run(g, in, a, &d));
    assert_true(rt_interp_run(raw, in, b, &d));
    assert_true(rt_interp_run(g, in, c, &d));
    for (unsigned k = 0; k < nout; k++) {
        int64_t n = rt_numel(&b[k]), bad = 0, first = -1;
        assert_int_equal(rt_numel(&a[k]), n);
        assert_int_equal(rt_numel(&c[k]), n);
        for (int64_t i = 0; i < n; i++) {
            double x = rt_get(&a[k], i), y = rt_get(&b[k], i), z = rt_get(&c[k], i);
            bool same = isnan(y) ? isnan(z) : z == y && signbit(z) == signbit(y);
            bool ok = same && (exact ? (isnan(y) ? isnan(x) : x == y && signbit(x) == signbit(y))
                                     : tk_close_enough(b[k].dtype, x, y));
            if (!ok && first < 0) first = i;
            bad += !ok;
        }
        if (bad)
            fprintf(stderr,
                    "%soutput %u: %lld of %lld differ; first at %lld: jit %.9g ref %.9g "
                    "planned ref %.9g\n",
                    src, k, (long long)bad, (long long)n, (long long)first, rt_get(&a[k], first),
                    rt_get(&b[k], first), rt_get(&c[k], first));
        assert_int_equal(bad, 0);
        rt_tensor_free(&a[k]), rt_tensor_free(&b[k]), rt_tensor_free(&c[k]);
    }
    for (unsigned i = 0; i < nin; i++) rt_tensor_free(&in[i]);
}

/* Host JIT and both interpreters on every taking form (and the refused narrowing cast, whose -0
 * the sum keeps +0) at small odd sizes and at a size of several blocks, with and without
 * special values. */
static void test_gather_values(void **s) {
    (void)s;
    const char **progs[] = {&EMB, &EMB_BF16, &EMB_COL, &EMB_I32, &DIAG, &T5, &NOT_NARROW};
    const fe_define MID[] = {{"V", 33}, {"D", 130}, {"B", 5},  {"T", 67},
                             {"H", 4},  {"Q", 17},  {"K", 300}};
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        for (int size = 0; size < 2; size++) {
            const fe_define *defs = size ? MID : SMALL;
            ir_graph *raw, *g = plan(*progs[i], defs, NSIZES, &raw, NULL);
            int64_t V = *progs[i] == T5 ? 32 : defs[0].value;
            bool exact = *progs[i] != T5; /* the softmax: exp within the JIT's tolerance */
            run_gather(g, raw, *progs[i], V, true, exact, 80 + i);
            run_gather(g, raw, *progs[i], V, false, exact, 90 + i);
            ir_graph_free(g);
            ir_graph_free(raw);
        }
    }
}

/* The sm_90a PTX of T5's bias and softmax and of the embedding lookup at their benchmark sizes
 * assembles with ptxas. */
static void test_gather_ptx(void **s) {
    (void)s;
    const char *progs[] = {T5, EMB};
    for (size_t i = 0; i < 2; i++) {
        ir_graph *g = plan(progs[i], BIG, NSIZES, NULL, NULL);
        tx_diag d;
        tx_diag_init(&d, stderr, "test.tx", progs[i], strlen(progs[i]));
        cg_program *p = cg_program_new(g, CG_SM90A, &d);
        assert_non_null(p);
        size_t n = 0;
        const char *ptx = cg_program_ptx(p, &n);
        assert_non_null(ptx);
        int rc = tk_ptxas(ptx, n, "sm_90a", NULL);
        if (rc == -1) printf("test_gather_ptx: ptxas not found; PTX not assembled\n");
        assert_true(rc <= 0);
        cg_program_free(p);
        ir_graph_free(g);
    }
}

/* ir_verify holds a pick to ir_add_pick's contract: a well-formed one verifies; an axis that is
 * not a unit axis of the result, a source that does not fit at len, an index that is not i32 or
 * varies along the axis, and a dtype other than the source's are each reported. */
static void test_pick_verify(void **s) {
    (void)s;
    for (int bad = 0; bad < 6; bad++) {
        ir_graph *g = ir_graph_new("f", NULL);
        ir_shape ts = {.rank = 2, .dim = {7, 5}}, is = {.rank = 3, .dim = {3, 1, 1}};
        ir_shape os = {.rank = 3, .dim = {3, 1, 5}};
        if (bad == 4) is.dim[1] = 7; /* the index varies along the axis */
        ir_id t = ir_add_input(g, "t", IR_F32, &ts);
        ir_id i = ir_add_input(g, "i", bad == 3 ? IR_F32 : IR_I32, &is);
        ir_id p = ir_add_pick(g, t, i, &os, bad == 1 ? 2 : 1, bad == 2 ? 6 : 7);
        if (bad == 5) g->nodes[p].dtype = IR_I32;
        ir_add_output(g, &p, 1);
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        bool ok = ir_verify(g, m);
        fclose(m);
        if (ok != (bad == 0)) fprintf(stderr, "case %d: verify %d: %s\n", bad, ok, buf);
        assert_int_equal(ok, bad == 0);
        if (bad) assert_non_null(strstr(buf, "pick"));
        free(buf);
        ir_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_plans),  cmocka_unit_test(test_gather_fuses),
        cmocka_unit_test(test_gather_values), cmocka_unit_test(test_gather_ptx),
        cmocka_unit_test(test_pick_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
