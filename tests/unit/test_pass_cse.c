/* test_pass_cse.c - common subexpression elimination: identical nodes
 * merge into the earlier one, commutative inputs are unordered, INPUT nodes
 * never merge, attributes and constants' bits keep nodes apart, names move
 * to the kept node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "passes/passes.h"

typedef struct fixture {
    tx_diag diag;
    pass_ctx ctx;
} fixture;

static void fixture_init(fixture *f) {
    tx_diag_init(&f->diag, stderr, "test", NULL, 0);
    f->ctx = (pass_ctx){.diag = &f->diag};
}

static ir_shape shp2(int64_t d0, int64_t d1) { return (ir_shape){.rank = 2, .dim = {d0, d1}}; }

/* Runs cse and checks the graph still verifies; returns cse's answer. */
static bool run_cse(ir_graph *g, fixture *f) {
    bool changed = pass_cse(g, &f->ctx);
    assert_true(ir_verify(g, stderr));
    assert_int_equal(f->diag.errors, 0);
    return changed;
}

/* add(x, y) and add(y, x) merge; sub(x, y) and sub(y, x) do not. */
static void test_commutative(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp2(2, 3);
    ir_id x = ir_add_input(g, "x", IR_F32, &s), y = ir_add_input(g, "y", IR_F32, &s);
    ir_id a1 = ir_add_binary(g, IR_OP_ADD, x, y);
    ir_id a2 = ir_add_binary(g, IR_OP_ADD, y, x);
    ir_id s1 = ir_add_binary(g, IR_OP_SUB, x, y);
    ir_id s2 = ir_add_binary(g, IR_OP_SUB, y, x);
    ir_id outs[4] = {a1, a2, s1, s2};
    ir_add_output(g, outs, 4);
    assert_true(run_cse(g, &f));
    assert_int_equal(g->n, 6); /* x y add sub sub output */
    ir_node *o = &g->nodes[5];
    assert_int_equal(ir_in(g, o, 0), 2);
    assert_int_equal(ir_in(g, o, 1), 2);
    assert_int_equal(ir_in(g, o, 2), 3);
    assert_int_equal(ir_in(g, o, 3), 4);
    assert_int_equal(g->nodes[3].op, IR_OP_SUB);
    assert_int_equal(ir_in(g, &g->nodes[4], 0), 1); /* sub(y, x) kept as is */
    assert_false(run_cse(g, &f));
    ir_graph_free(g);
}

/* Two parameters of the same type stay apart; their users too. */
static void test_inputs_never_merge(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp2(4, 4);
    ir_id x = ir_add_input(g, "x", IR_F32, &s), y = ir_add_input(g, "y", IR_F32, &s);
    ir_id ex = ir_add_unary(g, IR_OP_EXP, x), ey = ir_add_unary(g, IR_OP_EXP, y);
    ir_id outs[2] = {ex, ey};
    ir_add_output(g, outs, 2);
    assert_false(run_cse(g, &f));
    assert_int_equal(g->n, 5);
    ir_graph_free(g);
}

/* Duplicated chains collapse in one run; the kept node takes the name of
 * a merged named node. */
static void test_chain_and_names(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp2(2, 2);
    ir_id x = ir_add_input(g, "x", IR_BF16, &s);
    ir_id c1 = ir_add_const(g, 0.5, IR_BF16);
    ir_id m1 = ir_add_binary(g, IR_OP_MUL, x, c1);
    ir_id e1 = ir_add_unary(g, IR_OP_EXP, m1);
    ir_id c2 = ir_add_const(g, 0.5, IR_BF16);
    ir_id m2 = ir_add_binary(g, IR_OP_MUL, c2, x);
    ir_id e2 = ir_add_unary(g, IR_OP_EXP, m2);
    g->nodes[e2].name = ir_intern(g, "h");
    ir_id r = ir_add_binary(g, IR_OP_ADD, e1, e2);
    ir_add_output(g, &r, 1);
    assert_true(run_cse(g, &f));
    /* x, const, mul, exp, add, output */
    assert_int_equal(g->n, 6);
    assert_int_equal(g->nodes[1].op, IR_OP_CONST);
    assert_int_equal(g->nodes[2].op, IR_OP_MUL);
    assert_int_equal(g->nodes[3].op, IR_OP_EXP);
    assert_string_equal(ir_str(g, g->nodes[3].name), "h");
    assert_int_equal(ir_in(g, &g->nodes[4], 0), 3);
    assert_int_equal(ir_in(g, &g->nodes[4], 1), 3);
    ir_graph_free(g);
}

/* Differences in constant bits (0.0 vs -0.0), dtype, reduction axes and
 * permutation keep nodes apart. */
static void test_distinct_stay(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp2(3, 5);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id z1 = ir_add_const(g, 0.0, IR_F32);
    ir_id z2 = ir_add_const(g, -0.0, IR_F32);
    ir_id z3 = ir_add_const(g, 0.0, IR_F16);
    ir_id r0 = ir_add_reduce(g, IR_OP_SUM, x, 1u, false);
    ir_id r1 = ir_add_reduce(g, IR_OP_SUM, x, 2u, false);
    ir_id r2 = ir_add_reduce(g, IR_OP_SUM, x, 2u, true);
    uint8_t p[2] = {1, 0};
    ir_id t1 = ir_add_permute(g, x, p);
    ir_id t2 = ir_add_permute(g, x, p); /* duplicate: merges */
    ir_id outs[8] = {z1, z2, z3, r0, r1, r2, t1, t2};
    ir_add_output(g, outs, 8);
    assert_true(run_cse(g, &f));
    assert_int_equal(g->n, 9);
    ir_node *o = &g->nodes[8];
    assert_int_equal(ir_in(g, o, 6), ir_in(g, o, 7));
    for (unsigned k = 0; k < 6; k++) assert_int_equal(ir_in(g, o, k), k + 1);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commutative),
        cmocka_unit_test(test_inputs_never_merge),
        cmocka_unit_test(test_chain_and_names),
        cmocka_unit_test(test_distinct_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
