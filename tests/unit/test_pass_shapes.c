/* test_pass_shapes.c - shape propagation: a consistent graph passes
 * unchanged, bound symbols become concrete dims, and every kind of
 * inconsistency is reported as one internal error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

typedef struct fixture {
    char *buf;
    size_t len;
    FILE *err;
    tx_diag diag;
    pass_ctx ctx;
} fixture;

/* Diagnostics go to a memory buffer the test reads with fixture_text. */
static void fixture_init(fixture *f) {
    f->buf = NULL;
    f->err = open_memstream(&f->buf, &f->len);
    assert_non_null(f->err);
    tx_diag_init(&f->diag, f->err, "test", NULL, 0);
    f->ctx = (pass_ctx){.diag = &f->diag};
}
static const char *fixture_text(fixture *f) {
    fflush(f->err);
    return f->buf ? f->buf : "";
}
static void fixture_done(fixture *f) {
    fclose(f->err);
    free(f->buf);
}

/* A consistent graph with every kind of op family: no change, no error. */
static void test_consistent_graph(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    uint32_t m = ir_sym_get(g, "M");
    ir_shape sa = {.rank = 2, .dim = {IR_DIM_SYM(m), 8}}, sw = {.rank = 2, .dim = {8, 4}};
    ir_id a = ir_add_input(g, "a", IR_BF16, &sa);
    ir_id w = ir_add_input(g, "w", IR_BF16, &sw);
    ir_id mm = ir_add_matmul(g, a, w);
    ir_id f32 = ir_add_cast(g, mm, IR_F32);
    ir_id r = ir_add_reduce(g, IR_OP_MAX, f32, 2u, true);
    ir_id d = ir_add_binary(g, IR_OP_SUB, f32, r);
    uint8_t p[2] = {1, 0};
    ir_id t = ir_add_permute(g, d, p);
    ir_id sl = ir_add_slice(g, t, 0, 1, 3);
    ir_id xs[2] = {sl, sl};
    ir_id cc = ir_add_concat(g, xs, 2, 0);
    ir_id lt = ir_add_binary(g, IR_OP_LT, cc, ir_add_const(g, 0.0, IR_F32));
    ir_id wh = ir_add_where(g, lt, cc, ir_add_const(g, 1.0, IR_F32));
    ir_add_output(g, &wh, 1);
    assert_false(pass_shapes(g, &f.ctx));
    assert_int_equal(f.diag.errors, 0);
    assert_int_equal(g->nodes[cc].shape.dim[0], 4);
    ir_graph_free(g);
    fixture_done(&f);
}

/* Bound symbols become concrete on inputs and on everything after. */
static void test_binds_symbols(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    uint32_t m = ir_sym_get(g, "M"), n = ir_sym_get(g, "N");
    g->syms[m].value = 16;
    ir_shape s = {.rank = 2, .dim = {IR_DIM_SYM(m), IR_DIM_SYM(n)}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id e = ir_add_unary(g, IR_OP_EXP, x);
    ir_id r = ir_add_reduce(g, IR_OP_SUM, e, 2u, false);
    ir_add_output(g, &r, 1);
    assert_true(pass_shapes(g, &f.ctx));
    assert_int_equal(f.diag.errors, 0);
    for (ir_id i = 0; i < 2; i++) {
        assert_int_equal(g->nodes[i].shape.dim[0], 16);
        assert_int_equal(g->nodes[i].shape.dim[1], IR_DIM_SYM(n));
    }
    assert_int_equal(g->nodes[r].shape.dim[0], 16);
    assert_true(ir_verify(g, stderr));
    assert_false(pass_shapes(g, &f.ctx));
    ir_graph_free(g);
    fixture_done(&f);
}

/* Builds x: f32[4, 6], lets `corrupt` append inconsistent nodes, runs
 * shapes and checks that exactly one internal error containing `needle`
 * was reported. */
typedef void (*corruptor)(ir_graph *g, ir_id x);

static void expect_error(corruptor corrupt, const char *needle) {
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = {.rank = 2, .dim = {4, 6}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    corrupt(g, x);
    ir_id last = g->n - 1;
    ir_add_output(g, &last, 1);
    (void)pass_shapes(g, &f.ctx);
    assert_int_equal(f.diag.errors, 1);
    const char *t = fixture_text(&f);
    assert_non_null(strstr(t, "txc: error: internal error: shapes: "));
    assert_non_null(strstr(t, needle));
    ir_graph_free(g);
    fixture_done(&f);
}

static void wrong_shape(ir_graph *g, ir_id x) {
    g->nodes[ir_add_unary(g, IR_OP_EXP, x)].shape.dim[1] = 7;
}
static void wrong_dtype(ir_graph *g, ir_id x) {
    g->nodes[ir_add_binary(g, IR_OP_ADD, x, ir_add_const(g, 1, IR_F32))].dtype = IR_F16;
}
static void bad_reshape(ir_graph *g, ir_id x) {
    ir_shape s = {.rank = 1, .dim = {25}};
    ir_add_reshape(g, x, &s);
}
static void bad_permute(ir_graph *g, ir_id x) {
    uint8_t p[2] = {1, 1};
    ir_add_permute(g, x, p);
}
static void bad_slice(ir_graph *g, ir_id x) { ir_add_slice(g, x, 1, 2, 9); }
static void bad_broadcast(ir_graph *g, ir_id x) {
    ir_shape s = {.rank = 2, .dim = {4, 5}};
    ir_add_broadcast(g, x, &s);
}
static void bad_where(ir_graph *g, ir_id x) { ir_add_where(g, x, x, x); }

static void test_reports_mismatches(void **state) {
    (void)state;
    expect_error(wrong_shape, "%1 = exp : f32[4, 7] (from its inputs: f32[4, 6]): shape differs");
    expect_error(wrong_dtype, "dtype differs");
    expect_error(bad_reshape, "reshape changes the element count");
    expect_error(bad_permute, "not a permutation");
    expect_error(bad_slice, "slice bounds out of range");
    expect_error(bad_broadcast, "does not broadcast to the target shape");
    expect_error(bad_where, "where condition is not bool");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_consistent_graph),
        cmocka_unit_test(test_binds_symbols),
        cmocka_unit_test(test_reports_mismatches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
