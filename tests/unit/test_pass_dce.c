/* test_pass_dce.c - dead-code elimination: removes what the output does not
 * reach, keeps every parameter with its index, keeps order and names. */
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

static ir_shape shp(int rank, int64_t d0, int64_t d1) {
    ir_shape s = {.rank = (uint8_t)rank};
    s.dim[0] = d0;
    s.dim[1] = d1;
    return s;
}

/* Dead nodes (a chain of two) go; the output's inputs are renumbered. */
static void test_removes_dead_chain(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp(1, 4, 0);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id d1 = ir_add_unary(g, IR_OP_EXP, x);
    (void)ir_add_unary(g, IR_OP_LOG, d1);
    ir_id live = ir_add_unary(g, IR_OP_NEG, x);
    g->nodes[live].name = ir_intern(g, "y");
    ir_add_output(g, &live, 1);
    assert_true(pass_dce(g, &f.ctx));
    assert_int_equal(g->n, 3);
    assert_int_equal(g->nodes[1].op, IR_OP_NEG);
    assert_string_equal(ir_str(g, g->nodes[1].name), "y");
    assert_int_equal(ir_in(g, &g->nodes[1], 0), 0);
    assert_int_equal(ir_in(g, &g->nodes[2], 0), 1);
    assert_true(ir_verify(g, stderr));
    assert_false(pass_dce(g, &f.ctx));
    assert_int_equal(f.diag.errors, 0);
    ir_graph_free(g);
}

/* Unused parameters stay, with their parameter indices. */
static void test_keeps_parameters(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp(2, 2, 3);
    ir_id a = ir_add_input(g, "a", IR_F32, &s);
    ir_id b = ir_add_input(g, "b", IR_F16, &s);
    ir_id c = ir_add_input(g, "c", IR_F32, &s);
    (void)b;
    ir_id k = ir_add_const(g, 2.0, IR_F32);
    (void)k;
    ir_id y = ir_add_binary(g, IR_OP_ADD, a, c);
    ir_add_output(g, &y, 1);
    assert_true(pass_dce(g, &f.ctx));
    assert_int_equal(g->n, 5);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(g->nodes[i].op, IR_OP_INPUT);
        assert_int_equal(g->nodes[i].a.param, i);
    }
    assert_int_equal(g->nodes[1].dtype, IR_F16);
    assert_int_equal(g->nodes[3].op, IR_OP_ADD);
    assert_int_equal(ir_in(g, &g->nodes[3], 0), 0);
    assert_int_equal(ir_in(g, &g->nodes[3], 1), 2);
    assert_true(ir_verify(g, stderr));
    ir_graph_free(g);
}

/* A value used only by dead nodes is dead too; a value the output uses
 * twice stays once. */
static void test_transitive_and_shared(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = shp(1, 8, 0);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id e = ir_add_unary(g, IR_OP_EXP, x);     /* live */
    ir_id t = ir_add_unary(g, IR_OP_TANH, x);    /* dead: only feeds dead */
    ir_id m = ir_add_binary(g, IR_OP_MUL, t, e); /* dead */
    (void)m;
    ir_id outs[2] = {e, e};
    ir_add_output(g, outs, 2);
    assert_true(pass_dce(g, &f.ctx));
    assert_int_equal(g->n, 3);
    assert_int_equal(g->nodes[1].op, IR_OP_EXP);
    assert_int_equal(ir_in(g, &g->nodes[2], 0), 1);
    assert_int_equal(ir_in(g, &g->nodes[2], 1), 1);
    assert_true(ir_verify(g, stderr));
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_removes_dead_chain),
        cmocka_unit_test(test_keeps_parameters),
        cmocka_unit_test(test_transitive_and_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
