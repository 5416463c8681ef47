/* test_pass_fold.c - constant folding: scalar subtrees, casts rounded to
 * the target dtype (f16/bf16 round-to-nearest-even, overflow to inf),
 * integer semantics (wrapping; only exact division), views and reductions
 * of uniform values, and what must stay for the runtime. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "passes/passes.h"

typedef struct fixture {
    tx_diag diag;
    pass_ctx ctx;
} fixture;

static void fixture_init(fixture *f) {
    tx_diag_init(&f->diag, stderr, "test", NULL, 0);
    f->ctx = (pass_ctx){.diag = &f->diag};
}

/* Runs fold then checks the graph still verifies without errors. */
static bool run_fold(ir_graph *g, fixture *f) {
    bool changed = pass_fold(g, &f->ctx);
    assert_true(ir_verify(g, stderr));
    assert_int_equal(f->diag.errors, 0);
    return changed;
}

/* The node that output input k names. */
static const ir_node *out_in(ir_graph *g, unsigned k) {
    return &g->nodes[ir_in(g, &g->nodes[ir_output(g)], k)];
}

/* Folds cast(v, dt) of an f32 constant and returns the folded value;
 * fails the test when the cast did not fold into a constant. */
static double cast_value(double v, ir_dtype from, ir_dtype to) {
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id c = ir_add_const(g, v, from);
    ir_id k = ir_add_cast(g, c, to);
    ir_add_output(g, &k, 1);
    assert_true(run_fold(g, &f));
    const ir_node *n = out_in(g, 0);
    assert_int_equal(n->op, IR_OP_CONST);
    assert_int_equal(n->dtype, to);
    double r = n->a.cval;
    ir_graph_free(g);
    return r;
}

/* A scalar subtree folds to one constant in one run, keeping the name. */
static void test_scalar_subtree(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = {.rank = 1, .dim = {4}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id a = ir_add_const(g, 2.0, IR_F32), b = ir_add_const(g, 3.0, IR_F32);
    ir_id sum = ir_add_binary(g, IR_OP_ADD, a, b);
    ir_id sq = ir_add_unary(g, IR_OP_SQRT, sum);
    g->nodes[sq].name = ir_intern(g, "k");
    ir_id y = ir_add_binary(g, IR_OP_MUL, x, sq);
    ir_add_output(g, &y, 1);
    assert_true(run_fold(g, &f));
    assert_int_equal(g->n, 7); /* fold rewrites in place; dce removes */
    assert_int_equal(g->nodes[sum].op, IR_OP_CONST);
    assert_true(g->nodes[sum].a.cval == 5.0);
    assert_int_equal(g->nodes[sq].op, IR_OP_CONST);
    assert_true(g->nodes[sq].a.cval == (double)sqrtf(5.0f));
    assert_string_equal(ir_str(g, g->nodes[sq].name), "k");
    assert_int_equal(g->nodes[y].op, IR_OP_MUL); /* depends on x */
    assert_false(run_fold(g, &f));
    ir_graph_free(g);
}

/* Casts round to nearest even in the target format. */
static void test_cast_rounding(void **state) {
    (void)state;
    assert_true(cast_value(0.1, IR_F32, IR_F16) == 0.0999755859375);
    assert_true(cast_value(0.1, IR_F32, IR_BF16) == 0.10009765625);
    assert_true(cast_value(0.1, IR_F16, IR_F32) == 0.0999755859375); /* f16 constant's own value */
    assert_true(cast_value(65504.0, IR_F32, IR_F16) == 65504.0);
    assert_true(cast_value(65519.0, IR_F32, IR_F16) == 65504.0);
    assert_true(isinf(cast_value(65520.0, IR_F32, IR_F16)));
    assert_true(cast_value(ldexp(1, -25), IR_F32, IR_F16) == 0.0);           /* tie to even: 0 */
    assert_true(cast_value(ldexp(3, -26), IR_F32, IR_F16) == ldexp(1, -24)); /* above the tie */
    assert_true(cast_value(1.0 + ldexp(1, -8), IR_F32, IR_BF16) == 1.0);     /* tie to even */
    assert_true(cast_value(1.0 + ldexp(3, -8), IR_F32, IR_BF16) == 1.0 + ldexp(1, -6)); /* tie up */
    assert_true(isinf(cast_value(3.4e38, IR_F32, IR_BF16)));
    assert_true(cast_value(-2.7, IR_F32, IR_I32) == -2.0);
    assert_true(cast_value(2.7, IR_F32, IR_I32) == 2.0);
    assert_true(cast_value(0.25, IR_F32, IR_BOOL) == 1.0);
    assert_true(cast_value(16777217.0, IR_I32, IR_F32) == 16777216.0);
}

/* Casts to i32 of NaN and out-of-range values fold by the store rule of
 * ir_scalar_round (NaN gives 0, saturation), the one the interpreter and the
 * kernels (fptosi.sat) follow. */
static void test_edge_casts_fold(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id a = ir_add_cast(g, ir_add_const(g, NAN, IR_F32), IR_I32);
    ir_id b = ir_add_cast(g, ir_add_const(g, 3e9, IR_F32), IR_I32);
    ir_id outs[2] = {a, b};
    ir_add_output(g, outs, 2);
    assert_true(run_fold(g, &f));
    assert_true(out_in(g, 0)->op == IR_OP_CONST && out_in(g, 0)->a.cval == 0.0);
    assert_true(out_in(g, 1)->op == IR_OP_CONST && out_in(g, 1)->a.cval == 2147483647.0);
    ir_graph_free(g);
}

/* i32 folds by the one i32 rule (ir/scalar.c): + - * wrap modulo 2^32,
 * division truncates toward zero. */
static void test_int_semantics(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id big = ir_add_const(g, 2147483647.0, IR_I32), one = ir_add_const(g, 1.0, IR_I32);
    ir_id seven = ir_add_const(g, 7.0, IR_I32), two = ir_add_const(g, 2.0, IR_I32);
    ir_id m7 = ir_add_const(g, -7.0, IR_I32);
    ir_id outs[9] = {
        ir_add_binary(g, IR_OP_ADD, big, one),
        ir_add_binary(g, IR_OP_MUL, big, two),
        ir_add_binary(g, IR_OP_DIV, ir_add_binary(g, IR_OP_MUL, seven, two), seven),
        ir_add_binary(g, IR_OP_DIV, m7, two),
        ir_add_binary(g, IR_OP_LT, m7, two),
        ir_add_binary(g, IR_OP_SUB, m7, big),
        ir_add_binary(g, IR_OP_SUB, m7, seven),
        ir_add_binary(g, IR_OP_POW, seven, ir_add_const(g, 12.0, IR_I32)),
        ir_add_binary(g, IR_OP_DIV, seven, ir_add_const(g, 0.0, IR_I32)),
    };
    ir_add_output(g, outs, 9);
    assert_true(run_fold(g, &f));
    static const double want[9] = {-2147483648.0, -2.0,  2.0,         -3.0, 1.0,
                                   2147483642.0,  -14.0, 956385313.0, 0.0};
    for (int k = 0; k < 9; k++) {
        assert_int_equal(out_in(g, (unsigned)k)->op, IR_OP_CONST);
        if (out_in(g, (unsigned)k)->a.cval != want[k])
            fail_msg("output %d: %.17g, want %.17g", k, out_in(g, (unsigned)k)->a.cval, want[k]);
    }
    assert_int_equal(out_in(g, 4)->dtype, IR_BOOL);
    ir_graph_free(g);
}

/* f16 arithmetic rounds once to f16; mixed f16+bf16 computes in f32. */
static void test_half_arithmetic(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id a = ir_add_const(g, 1.0, IR_F16), b = ir_add_const(g, ldexp(1, -11), IR_F16);
    ir_id c = ir_add_const(g, ldexp(1, -11), IR_BF16);
    ir_id outs[2] = {ir_add_binary(g, IR_OP_ADD, a, b), ir_add_binary(g, IR_OP_ADD, a, c)};
    ir_add_output(g, outs, 2);
    assert_true(run_fold(g, &f));
    assert_true(out_in(g, 0)->dtype == IR_F16 && out_in(g, 0)->a.cval == 1.0); /* tie to even */
    assert_true(out_in(g, 1)->dtype == IR_F32 && out_in(g, 1)->a.cval == 1.0 + ldexp(1, -11));
    ir_graph_free(g);
}

/* Elementwise ops on a broadcast constant become a broadcast of a new
 * constant, inserted after the parameters; reductions of uniform values
 * fold over concrete extents. */
static void test_uniform_values(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = {.rank = 2, .dim = {3, 4}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id two = ir_add_const(g, 2.0, IR_F32);
    ir_id b = ir_add_broadcast(g, two, &s);
    ir_id e = ir_add_binary(g, IR_OP_MUL, b, ir_add_const(g, 5.0, IR_F32)); /* [3,4] of 10 */
    ir_id sum = ir_add_reduce(g, IR_OP_SUM, b, 3u, false);                  /* 24 */
    ir_id mx = ir_add_reduce(g, IR_OP_MAX, e, 1u, false);                   /* [4] of 10 */
    ir_id y = ir_add_binary(g, IR_OP_ADD, x, e);
    ir_id outs[4] = {y, sum, mx, x};
    ir_add_output(g, outs, 4);
    assert_true(run_fold(g, &f));
    assert_int_equal(g->nodes[1].op, IR_OP_CONST); /* the inserted 10 */
    assert_true(g->nodes[1].a.cval == 10.0);
    const ir_node *ye = &g->nodes[ir_in(g, out_in(g, 0), 1)];
    assert_int_equal(ye->op, IR_OP_BROADCAST);
    assert_int_equal(ir_in(g, ye, 0), 1);
    assert_true(out_in(g, 1)->op == IR_OP_CONST && out_in(g, 1)->a.cval == 24.0);
    const ir_node *m = out_in(g, 2);
    assert_int_equal(m->op, IR_OP_BROADCAST);
    assert_int_equal(m->shape.rank, 1);
    assert_int_equal(ir_in(g, m, 0), 1); /* reuses the existing 10 */
    assert_int_equal(out_in(g, 3)->op, IR_OP_INPUT);
    assert_false(run_fold(g, &f));
    ir_graph_free(g);
}

/* A sum over a symbolic extent stays; max over it folds. */
static void test_symbolic_extent(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    uint32_t m = ir_sym_get(g, "M");
    ir_shape s = {.rank = 1, .dim = {IR_DIM_SYM(m)}};
    ir_id b = ir_add_broadcast(g, ir_add_const(g, 1.5, IR_F32), &s);
    ir_id outs[2] = {ir_add_reduce(g, IR_OP_SUM, b, 1u, false),
                     ir_add_reduce(g, IR_OP_MAX, b, 1u, false)};
    ir_add_output(g, outs, 2);
    assert_true(run_fold(g, &f));
    assert_int_equal(out_in(g, 0)->op, IR_OP_SUM);
    assert_true(out_in(g, 1)->op == IR_OP_CONST && out_in(g, 1)->a.cval == 1.5);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_subtree),  cmocka_unit_test(test_cast_rounding),
        cmocka_unit_test(test_edge_casts_fold), cmocka_unit_test(test_int_semantics),
        cmocka_unit_test(test_half_arithmetic), cmocka_unit_test(test_uniform_values),
        cmocka_unit_test(test_symbolic_extent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
