/* test_interp.c - the reference interpreter and shape binding: graphs built
 * with the ir_add_* builders, checked against hand-computed values for every
 * op (unary, binary, compare, where, cast and half rounding, reductions,
 * matmul, views) and the composites written out with the same ops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "runtime/runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define TX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TX_ASAN 1
#endif
#endif

/* ---- helpers ----------------------------------------------------------------- */
static ir_shape shp(int rank, ...) {
    ir_shape s = {.rank = (uint8_t)rank};
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) s.dim[i] = va_arg(ap, int64_t);
    va_end(ap);
    return s;
}
#define S0()        shp(0)
#define S1(a)       shp(1, (int64_t)(a))
#define S2(a, b)    shp(2, (int64_t)(a), (int64_t)(b))
#define S3(a, b, c) shp(3, (int64_t)(a), (int64_t)(b), (int64_t)(c))

/* A tensor of the given dtype and shape holding vals (stored by rt_set). */
static rt_tensor tens(ir_dtype dt, ir_shape s, const double *vals) {
    rt_tensor t = {.dtype = dt, .rank = s.rank};
    for (int i = 0; i < s.rank; i++) t.dim[i] = s.dim[i];
    assert_true(rt_tensor_alloc(&t));
    for (int64_t i = 0; i < rt_numel(&t); i++) rt_set(&t, i, vals ? vals[i] : 0);
    return t;
}

/* Runs g (after checking it verifies) and returns its outputs in outs;
 * fails the test when the run fails. */
static void run(ir_graph *g, const rt_tensor *in, rt_tensor *outs) {
    if (!ir_verify(g, stderr)) fail_msg("test graph does not verify");
    tx_diag d;
    tx_diag_init(&d, stderr, NULL, NULL, 0);
    assert_true(rt_interp_run(g, in, outs, &d));
}

/* Runs g expecting failure; returns the message (static buffer). */
static const char *run_fail(ir_graph *g, const rt_tensor *in, rt_tensor *outs) {
    static char msg[1024];
    memset(msg, 0, sizeof msg);
    FILE *f = fmemopen(msg, sizeof msg - 1, "w");
    tx_diag d;
    tx_diag_init(&d, f, NULL, NULL, 0);
    assert_false(rt_interp_run(g, in, outs, &d));
    fclose(f);
    return msg;
}

/* Checks shape, dtype and values: |got - want| <= tol * max(1, |want|);
 * NaN must meet NaN, infinities the same infinity. */
static void check(const rt_tensor *t, ir_dtype dt, ir_shape s, const double *want, double tol) {
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, s.rank);
    for (int i = 0; i < s.rank; i++) assert_int_equal(t->dim[i], s.dim[i]);
    for (int64_t i = 0; i < rt_numel(t); i++) {
        double g = rt_get(t, i), w = want[i];
        bool ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs(g - w) <= tol * fmax(1.0, fabs(w));
        if (!ok) fail_msg("element %lld: got %.17g, want %.17g", (long long)i, g, w);
    }
}

static void free_all(rt_tensor *t, int n) {
    for (int i = 0; i < n; i++) rt_tensor_free(&t[i]);
}

#define F32_TOL 1.2e-7 /* one f32 ulp, relative */

/* ---- elementwise ---------------------------------------------------------- */
static void test_unary(void **state) {
    (void)state;
    static const double xs[6] = {-2, -0.5, 0, 0.5, 1, 3};
    static const struct {
        ir_op op;
        double want[6];
    } cases[] = {
        {IR_OP_EXP,
         {0.1353352832366127, 0.60653065971263342, 1, 1.6487212707001282, 2.7182818284590451,
          20.085536923187668}},
        {IR_OP_EXP2, {0.25, 0.70710678118654757, 1, 1.4142135623730951, 2, 8}},
        {IR_OP_LOG, {NAN, NAN, -INFINITY, -0.69314718055994529, 0, 1.0986122886681098}},
        {IR_OP_LOG2, {NAN, NAN, -INFINITY, -1, 0, 1.5849625007211561}},
        {IR_OP_SQRT, {NAN, NAN, 0, 0.70710678118654757, 1, 1.7320508075688772}},
        {IR_OP_RSQRT, {NAN, NAN, INFINITY, 1.4142135623730949, 1, 0.57735026918962584}},
        {IR_OP_RECIP, {-0.5, -2, INFINITY, 2, 1, 0.33333333333333331}},
        {IR_OP_SIN,
         {-0.90929742682568171, -0.47942553860420301, 0, 0.47942553860420301, 0.8414709848078965,
          0.14112000805986721}},
        {IR_OP_COS,
         {-0.41614683654714241, 0.87758256189037276, 1, 0.87758256189037276, 0.54030230586813977,
          -0.98999249660044542}},
        {IR_OP_TANH,
         {-0.9640275800758169, -0.46211715726000974, 0, 0.46211715726000974, 0.76159415595576485,
          0.99505475368673046}},
        {IR_OP_SIGMOID,
         {0.11920292202211755, 0.37754066879814541, 0.5, 0.62245933120185459, 0.7310585786300049,
          0.95257412682243336}},
        {IR_OP_RELU, {0, 0, 0, 0.5, 1, 3}},
        {IR_OP_GELU,
         {-0.045500263896358417, -0.15426876936299344, 0, 0.34573123063700656, 0.84134474606854293,
          2.9959503059051098}},
        {IR_OP_GELU_TANH,
         {-0.045402305912224938, -0.15428599017485606, 0, 0.34571400982514394, 0.84119199060827676,
          2.9963626079182268}},
        {IR_OP_SILU,
         {-0.23840584404423509, -0.1887703343990727, 0, 0.3112296656009273, 0.7310585786300049,
          2.8577223804673002}},
        {IR_OP_ERF,
         {-0.99532226501895271, -0.52049987781304652, 0, 0.52049987781304652, 0.84270079294971489,
          0.99997790950300136}},
        {IR_OP_FLOOR, {-2, -1, 0, 0, 1, 3}},
        {IR_OP_CEIL, {-2, -0.0, 0, 1, 1, 3}},
        {IR_OP_NEG, {2, 0.5, -0.0, -0.5, -1, -3}},
        {IR_OP_ABS, {2, 0.5, 0, 0.5, 1, 3}},
        {IR_OP_NOT, {0, 0, 1, 0, 0, 0}}, /* on bool: x != 0 negated */
    };
    /* Every elementwise unary op of the table must be covered here. */
    int covered = 0;
    for (int op = 0; op < IR_NOPS; op++)
        if ((ir_op_traits((ir_op)op) & IR_T_ELEM) && ir_op_arity((ir_op)op) == 1 &&
            op != IR_OP_CAST)
            covered++;
    assert_int_equal(covered, (int)(sizeof cases / sizeof cases[0]));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ir_graph *g = ir_graph_new("u", NULL);
        ir_shape s = S1(6);
        /* Boolean ops take and give bool (the verifier's rule); the rest f32. */
        ir_dtype dt = cases[c].op == IR_OP_NOT ? IR_BOOL : IR_F32;
        ir_id x = ir_add_input(g, "x", dt, &s);
        ir_id y = ir_add_unary(g, cases[c].op, x);
        ir_add_output(g, &y, 1);
        rt_tensor in = tens(dt, s, xs), out;
        run(g, &in, &out);
        check(&out, dt, s, cases[c].want, F32_TOL);
        rt_tensor_free(&out);
        rt_tensor_free(&in);
        ir_graph_free(g);
    }
}

/* NaN propagates through relu, maximum, minimum and comparisons are false. */
static void test_nan_rules(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("n", NULL);
    ir_shape s = S1(3);
    ir_id a = ir_add_input(g, "a", IR_F32, &s), b = ir_add_input(g, "b", IR_F32, &s);
    ir_id o[6] = {ir_add_unary(g, IR_OP_RELU, a),        ir_add_binary(g, IR_OP_MAXIMUM, a, b),
                  ir_add_binary(g, IR_OP_MINIMUM, b, a), ir_add_binary(g, IR_OP_EQ, a, a),
                  ir_add_binary(g, IR_OP_NE, a, a),      ir_add_binary(g, IR_OP_LT, a, b)};
    ir_add_output(g, o, 6);
    double av[3] = {NAN, -1, 2}, bv[3] = {5, NAN, 1};
    rt_tensor in[2] = {tens(IR_F32, s, av), tens(IR_F32, s, bv)}, out[6];
    run(g, in, out);
    check(&out[0], IR_F32, s, (double[]){NAN, 0, 2}, 0);
    check(&out[1], IR_F32, s, (double[]){NAN, NAN, 2}, 0);
    check(&out[2], IR_F32, s, (double[]){NAN, NAN, 1}, 0);
    check(&out[3], IR_BOOL, s, (double[]){0, 1, 1}, 0);
    check(&out[4], IR_BOOL, s, (double[]){1, 0, 0}, 0);
    check(&out[5], IR_BOOL, s, (double[]){0, 0, 0}, 0);
    free_all(out, 6);
    free_all(in, 2);
    ir_graph_free(g);
}

static void test_binary_compare(void **state) {
    (void)state;
    static const double av[6] = {1, -2, 3.5, 0, -0.5, 4}, bv[6] = {2, 3, -1.5, 0, 0.25, 0.5};
    static const struct {
        ir_op op;
        double want[6];
    } cases[] = {
        {IR_OP_ADD, {3, 1, 2, 0, -0.25, 4.5}},
        {IR_OP_SUB, {-1, -5, 5, 0, -0.75, 3.5}},
        {IR_OP_MUL, {2, -6, -5.25, 0, -0.125, 2}},
        {IR_OP_DIV, {0.5, -2.0 / 3.0, -7.0 / 3.0, NAN, -2, 8}},
        {IR_OP_POW, {1, -8, 0.15272071068499614 /* 3.5^-1.5 */, 1, NAN, 2}},
        {IR_OP_MAXIMUM, {2, 3, 3.5, 0, 0.25, 4}},
        {IR_OP_MINIMUM, {1, -2, -1.5, 0, -0.5, 0.5}},
        {IR_OP_LT, {1, 1, 0, 0, 1, 0}},
        {IR_OP_LE, {1, 1, 0, 1, 1, 0}},
        {IR_OP_GT, {0, 0, 1, 0, 0, 1}},
        {IR_OP_GE, {0, 0, 1, 1, 0, 1}},
        {IR_OP_EQ, {0, 0, 0, 1, 0, 0}},
        {IR_OP_NE, {1, 1, 1, 0, 1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ir_graph *g = ir_graph_new("b", NULL);
        ir_shape s = S2(2, 3);
        ir_id a = ir_add_input(g, "a", IR_F32, &s), b = ir_add_input(g, "b", IR_F32, &s);
        ir_id y = ir_add_binary(g, cases[c].op, a, b);
        ir_add_output(g, &y, 1);
        rt_tensor in[2] = {tens(IR_F32, s, av), tens(IR_F32, s, bv)}, out;
        run(g, in, &out);
        bool cmp = ir_op_traits(cases[c].op) & IR_T_CMP;
        check(&out, cmp ? IR_BOOL : IR_F32, s, cases[c].want, F32_TOL);
        rt_tensor_free(&out);
        free_all(in, 2);
        ir_graph_free(g);
    }
    /* Division by zero of floats: +-inf. */
    ir_graph *g = ir_graph_new("d", NULL);
    ir_shape s = S1(2);
    ir_id a = ir_add_input(g, "a", IR_F32, &s), z = ir_add_const(g, 0, IR_F32);
    ir_id y = ir_add_binary(g, IR_OP_DIV, a, z);
    ir_add_output(g, &y, 1);
    rt_tensor in = tens(IR_F32, s, (double[]){1, -3}), out;
    run(g, &in, &out);
    check(&out, IR_F32, s, (double[]){INFINITY, -INFINITY}, 0);
    rt_tensor_free(&out);
    rt_tensor_free(&in);
    ir_graph_free(g);
}

/* NumPy broadcasting: [2, 1] * [3] -> [2, 3]; [2, 3] + scalar const;
 * [3] - [2, 3]. */
static void test_broadcast_elem(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("bc", NULL);
    ir_shape s21 = S2(2, 1), s3 = S1(3), s23 = S2(2, 3);
    ir_id a = ir_add_input(g, "a", IR_F32, &s21), b = ir_add_input(g, "b", IR_F32, &s3);
    ir_id m = ir_add_binary(g, IR_OP_MUL, a, b);
    ir_id c = ir_add_binary(g, IR_OP_ADD, m, ir_add_const(g, 0.5, IR_F32));
    ir_id d = ir_add_binary(g, IR_OP_SUB, b, c);
    ir_id o[3] = {m, c, d};
    ir_add_output(g, o, 3);
    rt_tensor in[2] = {tens(IR_F32, s21, (double[]){2, -1}),
                       tens(IR_F32, s3, (double[]){1, 10, 100})},
              out[3];
    run(g, in, out);
    check(&out[0], IR_F32, s23, (double[]){2, 20, 200, -1, -10, -100}, 0);
    check(&out[1], IR_F32, s23, (double[]){2.5, 20.5, 200.5, -0.5, -9.5, -99.5}, 0);
    check(&out[2], IR_F32, s23, (double[]){-1.5, -10.5, -100.5, 1.5, 19.5, 199.5}, 0);
    free_all(out, 3);
    free_all(in, 2);
    ir_graph_free(g);
}

static void test_where(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("w", NULL);
    ir_shape s21 = S2(2, 1), s3 = S1(3), s23 = S2(2, 3);
    ir_id c = ir_add_input(g, "c", IR_BOOL, &s21), a = ir_add_input(g, "a", IR_F32, &s3);
    ir_id y = ir_add_where(g, c, a, ir_add_const(g, -7, IR_F32));
    /* A data-dependent mask: where(a > 1.5, a, 0). */
    ir_id m = ir_add_binary(g, IR_OP_GT, a, ir_add_const(g, 1.5, IR_F32));
    ir_id z = ir_add_where(g, m, a, ir_add_const(g, 0, IR_F32));
    ir_id o[2] = {y, z};
    ir_add_output(g, o, 2);
    rt_tensor in[2] = {tens(IR_BOOL, s21, (double[]){1, 0}), tens(IR_F32, s3, (double[]){1, 2, 3})},
              out[2];
    run(g, in, out);
    check(&out[0], IR_F32, s23, (double[]){1, 2, 3, -7, -7, -7}, 0);
    check(&out[1], IR_F32, s3, (double[]){0, 2, 3}, 0);
    free_all(out, 2);
    free_all(in, 2);
    ir_graph_free(g);
}

/* Casts between every pair of interesting dtypes, with f16/bf16 rounding. */
static void test_cast(void **state) {
    (void)state;
    static const double xv[8] = {1 + 0x1p-11, 1 + 0x3p-11, 70000, 1e-8, 2.7, -2.7, 3e9, NAN};
    ir_graph *g = ir_graph_new("c", NULL);
    ir_shape s = S1(8);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id o[5] = {ir_add_cast(g, x, IR_F16), ir_add_cast(g, x, IR_BF16), ir_add_cast(g, x, IR_I32),
                  ir_add_cast(g, x, IR_BOOL), 0};
    o[4] = ir_add_cast(g, o[3], IR_F32); /* bool -> f32: 0/1 */
    ir_add_output(g, o, 5);
    rt_tensor in = tens(IR_F32, s, xv), out[5];
    run(g, &in, out);
    check(&out[0], IR_F16, s,
          (double[]){1, 1 + 0x1p-9, INFINITY, 0, 2.69921875, -2.69921875, INFINITY, NAN}, 0);
    /* bf16: 1+2^-11 -> 1; 70000 -> 70144 (8-bit significand); 2.7 -> 2.703125. */
    check(&out[1], IR_BF16, s,
          (double[]){1, 1, 70144, 1.0011717677116394e-08, 2.703125, -2.703125, 3003121664.0, NAN},
          0);
    check(&out[2], IR_I32, s, (double[]){1, 1, 70000, 0, 2, -2, 2147483647, 0}, 0);
    check(&out[3], IR_BOOL, s, (double[]){1, 1, 1, 1, 1, 1, 1, 1}, 0);
    check(&out[4], IR_F32, s, (double[]){1, 1, 1, 1, 1, 1, 1, 1}, 0);
    free_all(out, 5);
    rt_tensor_free(&in);
    ir_graph_free(g);
    /* i32 -> f16 (ties to even at 2049/2051), i32 -> bool, bool -> i32. */
    g = ir_graph_new("c2", NULL);
    ir_shape s4 = S1(4);
    x = ir_add_input(g, "x", IR_I32, &s4);
    ir_id h = ir_add_cast(g, x, IR_F16), b = ir_add_cast(g, x, IR_BOOL),
          bi = ir_add_cast(g, b, IR_I32);
    ir_id o2[3] = {h, b, bi};
    ir_add_output(g, o2, 3);
    rt_tensor in2 = tens(IR_I32, s4, (double[]){2049, 2051, 0, -3}), out2[3];
    run(g, &in2, out2);
    check(&out2[0], IR_F16, s4, (double[]){2048, 2052, 0, -3}, 0);
    check(&out2[1], IR_BOOL, s4, (double[]){1, 1, 0, 1}, 0);
    check(&out2[2], IR_I32, s4, (double[]){1, 1, 0, 1}, 0);
    free_all(out2, 3);
    rt_tensor_free(&in2);
    ir_graph_free(g);
}

/* Each f16/bf16 node rounds its own result once: 1 + 2^-11 is a tie and
 * stays 1, then 1.0009765625 + 2^-11 ties up to 1.001953125. */
static void test_half_arith(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("h", NULL);
    ir_shape s = S1(2);
    ir_id a = ir_add_input(g, "a", IR_F16, &s), b = ir_add_input(g, "b", IR_F16, &s);
    ir_id p = ir_add_input(g, "p", IR_BF16, &s);
    ir_id y = ir_add_binary(g, IR_OP_ADD, a, b);
    ir_id q = ir_add_binary(g, IR_OP_MUL, p, p); /* bf16 * bf16 -> bf16 */
    ir_id r = ir_add_binary(g, IR_OP_ADD, a, p); /* f16 + bf16 -> f32 */
    ir_id k = ir_add_const(g, 0.1, IR_F16);      /* constants round to their dtype */
    ir_id o[4] = {y, q, r, k};
    ir_add_output(g, o, 4);
    rt_tensor in[3] = {tens(IR_F16, s, (double[]){1, 1 + 0x1p-10}),
                       tens(IR_F16, s, (double[]){0x1p-11, 0x1p-11}),
                       tens(IR_BF16, s, (double[]){1 + 0x1p-7, 3})};
    rt_tensor out[4];
    run(g, in, out);
    check(&out[3], IR_F16, S0(), (double[]){0.0999755859375}, 0); /* 1638 * 2^-14 */
    rt_tensor_free(&out[3]);
    check(&out[0], IR_F16, s, (double[]){1, 1 + 0x1p-9}, 0);
    /* (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 -> 1 + 2^-6 in bf16. */
    check(&out[1], IR_BF16, s, (double[]){1 + 0x1p-6, 9}, 0);
    check(&out[2], IR_F32, s, (double[]){2 + 0x1p-7, 4 + 0x1p-10}, 0);
    free_all(out, 3);
    free_all(in, 3);
    ir_graph_free(g);
}

/* i32 arithmetic: wrap-around of + * neg abs, division toward zero, x / 0 = 0. */
static void test_int_edges(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("i", NULL);
    ir_shape s = S1(5);
    ir_id a = ir_add_input(g, "a", IR_I32, &s), b = ir_add_input(g, "b", IR_I32, &s);
    ir_id o[6] = {ir_add_binary(g, IR_OP_DIV, a, b),
                  ir_add_binary(g, IR_OP_ADD, a, b),
                  ir_add_binary(g, IR_OP_MUL, a, b),
                  ir_add_unary(g, IR_OP_NEG, a),
                  ir_add_unary(g, IR_OP_ABS, a),
                  ir_add_binary(g, IR_OP_POW, b, ir_add_const(g, 2, IR_I32))};
    ir_add_output(g, o, 6);
    rt_tensor in[2] = {tens(IR_I32, s, (double[]){7, -7, 7, -2147483648.0, 2147483647}),
                       tens(IR_I32, s, (double[]){2, 2, 0, -1, 1})};
    rt_tensor out[6];
    run(g, in, out);
    /* i32 division: truncation, x / 0 = 0, INT_MIN / -1 wraps (NumPy int32) */
    check(&out[0], IR_I32, s, (double[]){3, -3, 0, -2147483648.0, 2147483647}, 0);
    check(&out[1], IR_I32, s, (double[]){9, -5, 7, 2147483647, -2147483648.0}, 0);
    check(&out[2], IR_I32, s, (double[]){14, -14, 0, -2147483648.0, 2147483647}, 0);
    check(&out[3], IR_I32, s, (double[]){-7, 7, -7, -2147483648.0, -2147483647}, 0);
    check(&out[4], IR_I32, s, (double[]){7, 7, 7, -2147483648.0, 2147483647}, 0);
    check(&out[5], IR_I32, s, (double[]){4, 4, 0, 1, 1}, 0);
    free_all(out, 6);
    free_all(in, 2);
    ir_graph_free(g);
}

/* ---- reductions ---------------------------------------------------------- */
static void test_reduce_2d(void **state) {
    (void)state;
    static const double xv[6] = {1, 5, -2, 4, 0, 3}; /* [[1, 5, -2], [4, 0, 3]] */
    static const struct {
        ir_op op;
        uint32_t axes;
        bool keep;
        int rank;
        int64_t d0, d1;
        double want[3];
    } cases[] = {
        {IR_OP_SUM, 1, false, 1, 3, 0, {5, 5, 1}},
        {IR_OP_SUM, 2, false, 1, 2, 0, {4, 7}},
        {IR_OP_SUM, 3, false, 0, 0, 0, {11}},
        {IR_OP_SUM, 1, true, 2, 1, 3, {5, 5, 1}},
        {IR_OP_SUM, 2, true, 2, 2, 1, {4, 7}},
        {IR_OP_SUM, 3, true, 2, 1, 1, {11}},
        {IR_OP_MEAN, 1, false, 1, 3, 0, {2.5, 2.5, 0.5}},
        {IR_OP_MEAN, 2, true, 2, 2, 1, {4.0 / 3, 7.0 / 3}},
        {IR_OP_MEAN, 3, false, 0, 0, 0, {11.0 / 6}},
        {IR_OP_MAX, 1, false, 1, 3, 0, {4, 5, 3}},
        {IR_OP_MAX, 2, true, 2, 2, 1, {5, 4}},
        {IR_OP_MAX, 3, false, 0, 0, 0, {5}},
        {IR_OP_MIN, 1, true, 2, 1, 3, {1, 0, -2}},
        {IR_OP_MIN, 2, false, 1, 2, 0, {-2, 0}},
        {IR_OP_MIN, 3, true, 2, 1, 1, {-2}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ir_graph *g = ir_graph_new("r", NULL);
        ir_shape s = S2(2, 3);
        ir_id x = ir_add_input(g, "x", IR_F32, &s);
        ir_id y = ir_add_reduce(g, cases[c].op, x, cases[c].axes, cases[c].keep);
        ir_add_output(g, &y, 1);
        rt_tensor in = tens(IR_F32, s, xv), out;
        run(g, &in, &out);
        ir_shape os = shp(cases[c].rank, cases[c].d0, cases[c].d1);
        check(&out, IR_F32, os, cases[c].want, F32_TOL);
        rt_tensor_free(&out);
        rt_tensor_free(&in);
        ir_graph_free(g);
    }
}

/* A [2, 3, 4] tensor with x[i,j,k] = 12i + 4j + k: sums over {0, 2},
 * {1}, {0, 1, 2} against closed forms; max keepdim over {1, 2}. */
static void test_reduce_3d(void **state) {
    (void)state;
    double xv[24];
    for (int i = 0; i < 24; i++) xv[i] = i;
    ir_graph *g = ir_graph_new("r3", NULL);
    ir_shape s = S3(2, 3, 4);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id o[4] = {ir_add_reduce(g, IR_OP_SUM, x, 5, false), ir_add_reduce(g, IR_OP_SUM, x, 2, true),
                  ir_add_reduce(g, IR_OP_MEAN, x, 7, false),
                  ir_add_reduce(g, IR_OP_MAX, x, 6, true)};
    ir_add_output(g, o, 4);
    rt_tensor in = tens(IR_F32, s, xv), out[4];
    run(g, &in, out);
    /* sum over i, k of 12i + 4j + k = 2*(4*4j + 6) + 4*12 = 32j + 60. */
    check(&out[0], IR_F32, S1(3), (double[]){60, 92, 124}, 0);
    /* sum over j of 12i + 4j + k = 36i + 12 + 3k. */
    check(&out[1], IR_F32, S3(2, 1, 4), (double[]){12, 15, 18, 21, 48, 51, 54, 57}, 0);
    check(&out[2], IR_F32, S0(), (double[]){11.5}, 0);
    check(&out[3], IR_F32, S3(2, 1, 1), (double[]){11, 23}, 0);
    free_all(out, 4);
    rt_tensor_free(&in);
    ir_graph_free(g);
}

/* f16 reductions accumulate wider than f16: 4096 ones sum to 4096 (an f16
 * accumulator would stop at 2048); max/min propagate NaN; i32 mean
 * truncates; empty sums are 0, empty means NaN, empty max is an error. */
static void test_reduce_special(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("rs", NULL);
    ir_shape s = S1(4096);
    ir_id x = ir_add_input(g, "x", IR_F16, &s);
    ir_id y = ir_add_reduce(g, IR_OP_SUM, x, 1, false);
    ir_add_output(g, &y, 1);
    double *ones = malloc(4096 * sizeof *ones);
    for (int i = 0; i < 4096; i++) ones[i] = 1;
    rt_tensor in = tens(IR_F16, s, ones), out;
    free(ones);
    run(g, &in, &out);
    check(&out, IR_F16, S0(), (double[]){4096}, 0);
    rt_tensor_free(&out);
    rt_tensor_free(&in);
    ir_graph_free(g);

    g = ir_graph_new("rn", NULL);
    ir_shape s23 = S2(2, 3);
    x = ir_add_input(g, "x", IR_F32, &s23);
    ir_id iv = ir_add_input(g, "i", IR_I32, &s23);
    ir_id o[4] = {
        ir_add_reduce(g, IR_OP_MAX, x, 2, false), ir_add_reduce(g, IR_OP_MIN, x, 2, false),
        ir_add_reduce(g, IR_OP_MEAN, iv, 2, false), ir_add_reduce(g, IR_OP_SUM, iv, 1, false)};
    ir_add_output(g, o, 4);
    rt_tensor in2[2] = {tens(IR_F32, s23, (double[]){1, NAN, 3, -1, -2, -3}),
                        tens(IR_I32, s23, (double[]){1, 2, 2, -1, -2, -2})};
    rt_tensor out2[4];
    run(g, in2, out2);
    check(&out2[0], IR_F32, S1(2), (double[]){NAN, -1}, 0);
    check(&out2[1], IR_F32, S1(2), (double[]){NAN, -3}, 0);
    check(&out2[2], IR_I32, S1(2), (double[]){1, -1}, 0); /* 5/3 and -5/3 truncated */
    check(&out2[3], IR_I32, S1(3), (double[]){0, 0, 0}, 0);
    free_all(out2, 4);
    free_all(in2, 2);
    ir_graph_free(g);

    /* Empty reduced axis through a symbolic dim bound to 0. */
    g = ir_graph_new("re", NULL);
    ir_shape sn = {.rank = 2, .dim = {2, IR_DIM_SYM(ir_sym_get(g, "N"))}};
    x = ir_add_input(g, "x", IR_F32, &sn);
    ir_id o3[2] = {ir_add_reduce(g, IR_OP_SUM, x, 2, false),
                   ir_add_reduce(g, IR_OP_MEAN, x, 2, false)};
    ir_add_output(g, o3, 2);
    rt_tensor e = tens(IR_F32, S2(2, 0), NULL), out3[2];
    run(g, &e, out3);
    check(&out3[0], IR_F32, S1(2), (double[]){0, 0}, 0);
    check(&out3[1], IR_F32, S1(2), (double[]){NAN, NAN}, 0);
    free_all(out3, 2);
    ir_graph_free(g);
    g = ir_graph_new("rm", NULL);
    sn.dim[1] = IR_DIM_SYM(ir_sym_get(g, "N"));
    x = ir_add_input(g, "x", IR_F32, &sn);
    y = ir_add_reduce(g, IR_OP_MAX, x, 2, false);
    ir_add_output(g, &y, 1);
    run(g, &e, &out); /* max over an empty axis is its identity, -inf */
    check(&out, IR_F32, S1(2), (double[]){-INFINITY, -INFINITY}, 0);
    rt_tensor_free(&out);
    rt_tensor_free(&e);
    ir_graph_free(g);
}

/* ---- matmul ------------------------------------------------------------------- */
static void test_matmul(void **state) {
    (void)state;
    /* [2, 2, 3] @ [3, 2] (b broadcast over the batch). */
    ir_graph *g = ir_graph_new("mm", NULL);
    ir_shape sa = S3(2, 2, 3), sb = S2(3, 2);
    ir_id a = ir_add_input(g, "a", IR_F32, &sa), b = ir_add_input(g, "b", IR_F32, &sb);
    ir_id y = ir_add_matmul(g, a, b);
    ir_add_output(g, &y, 1);
    rt_tensor in[2] = {tens(IR_F32, sa, (double[]){1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 2, 2}),
                       tens(IR_F32, sb, (double[]){1, 0, 0, 1, 1, 1})};
    rt_tensor out;
    run(g, in, &out);
    /* [[1,2,3],[4,5,6]] @ [[1,0],[0,1],[1,1]] = [[4,5],[10,11]];
     * [[-1,0,1],[2,2,2]] @ ... = [[0,1],[4,4]]. */
    check(&out, IR_F32, S3(2, 2, 2), (double[]){4, 5, 10, 11, 0, 1, 4, 4}, 0);
    rt_tensor_free(&out);
    free_all(in, 2);
    ir_graph_free(g);

    /* [1, 2, 2] @ [3, 2, 2] -> [3, 2, 2] (a broadcast), and [2, 1, 2, 2] @
     * [3, 2, 1] -> [2, 3, 2, 1] (both broadcast). */
    g = ir_graph_new("mm2", NULL);
    ir_shape s122 = S3(1, 2, 2), s322 = S3(3, 2, 2),
             s4 = shp(4, (int64_t)2, (int64_t)1, (int64_t)2, (int64_t)2), s321 = S3(3, 2, 1);
    a = ir_add_input(g, "a", IR_F32, &s122);
    b = ir_add_input(g, "b", IR_F32, &s322);
    ir_id c = ir_add_input(g, "c", IR_F32, &s4), d = ir_add_input(g, "d", IR_F32, &s321);
    ir_id o[2] = {ir_add_matmul(g, a, b), ir_add_matmul(g, c, d)};
    ir_add_output(g, o, 2);
    rt_tensor in2[4] = {tens(IR_F32, s122, (double[]){1, 2, 3, 4}),
                        tens(IR_F32, s322, (double[]){1, 0, 0, 1, 0, 1, 1, 0, 2, 0, 0, 2}),
                        tens(IR_F32, s4, (double[]){1, 0, 0, 1, 0, 1, 1, 0}),
                        tens(IR_F32, s321, (double[]){1, 2, 3, 4, 5, 6})};
    rt_tensor out2[2];
    run(g, in2, out2);
    check(&out2[0], IR_F32, s322, (double[]){1, 2, 3, 4, 2, 1, 4, 3, 2, 4, 6, 8}, 0);
    check(&out2[1], IR_F32, shp(4, (int64_t)2, (int64_t)3, (int64_t)2, (int64_t)1),
          (double[]){1, 2, 3, 4, 5, 6, 2, 1, 4, 3, 6, 5}, 0);
    free_all(out2, 2);
    free_all(in2, 4);
    ir_graph_free(g);

    /* bf16 inputs: products accumulate in double and round once. */
    g = ir_graph_new("mm3", NULL);
    ir_shape s13 = S2(1, 3), s31 = S2(3, 1);
    a = ir_add_input(g, "a", IR_BF16, &s13);
    b = ir_add_input(g, "b", IR_BF16, &s31);
    y = ir_add_matmul(g, a, b);
    ir_add_output(g, &y, 1);
    rt_tensor in3[2] = {tens(IR_BF16, s13, (double[]){256, 1, 1}),
                        tens(IR_BF16, s31, (double[]){1, 1, 1})};
    run(g, in3, &out);
    /* 256 + 1 + 1 = 258 is exact in bf16 (256+1 alone would tie to 256). */
    check(&out, IR_BF16, S2(1, 1), (double[]){258}, 0);
    rt_tensor_free(&out);
    free_all(in3, 2);
    ir_graph_free(g);
}

/* ---- views -------------------------------------------------------------------- */
static void test_views(void **state) {
    (void)state;
    double xv[24];
    for (int i = 0; i < 24; i++) xv[i] = i; /* x[i,j,k] = 12i + 4j + k */
    ir_graph *g = ir_graph_new("v", NULL);
    ir_shape s = S3(2, 3, 4), s64 = S2(6, 4), s1 = S1(3), s213 = S3(2, 1, 3);
    ir_id x = ir_add_input(g, "x", IR_F32, &s), v = ir_add_input(g, "v", IR_F32, &s1);
    uint8_t perm[3] = {2, 0, 1};
    ir_id p = ir_add_permute(g, x, perm);     /* [4, 2, 3]: p[k,i,j] = x[i,j,k] */
    ir_id r = ir_add_reshape(g, x, &s64);     /* same order */
    ir_id sl = ir_add_slice(g, x, 2, 1, 3);   /* [2, 3, 2] */
    ir_id bc = ir_add_broadcast(g, v, &s213); /* [2, 1, 3] */
    ir_id o[4] = {p, r, sl, bc};
    ir_add_output(g, o, 4);
    rt_tensor in[2] = {tens(IR_F32, s, xv), tens(IR_F32, s1, (double[]){7, 8, 9})}, out[4];
    run(g, in, out);
    double pw[24], sw[12];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) pw[k * 6 + i * 3 + j] = 12 * i + 4 * j + k;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) sw[i * 6 + j * 2 + k] = 12 * i + 4 * j + k + 1;
    check(&out[0], IR_F32, S3(4, 2, 3), pw, 0);
    check(&out[1], IR_F32, s64, xv, 0);
    check(&out[2], IR_F32, S3(2, 3, 2), sw, 0);
    check(&out[3], IR_F32, s213, (double[]){7, 8, 9, 7, 8, 9}, 0);
    free_all(out, 4);
    free_all(in, 2);
    ir_graph_free(g);
}

static void test_concat(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("cat", NULL);
    ir_shape s22 = S2(2, 2), s12 = S2(1, 2), s21 = S2(2, 1);
    ir_id a = ir_add_input(g, "a", IR_F32, &s22), b = ir_add_input(g, "b", IR_F32, &s12);
    ir_id c = ir_add_input(g, "c", IR_F16, &s21);
    ir_id ab[2] = {a, b}, ac[3] = {c, a, c};
    ir_id o[2] = {ir_add_concat(g, ab, 2, 0), ir_add_concat(g, ac, 3, 1)};
    ir_add_output(g, o, 2);
    rt_tensor in[3] = {tens(IR_F32, s22, (double[]){1, 2, 3, 4}),
                       tens(IR_F32, s12, (double[]){5, 6}), tens(IR_F16, s21, (double[]){-1, -2})};
    rt_tensor out[2];
    run(g, in, out);
    check(&out[0], IR_F32, S2(3, 2), (double[]){1, 2, 3, 4, 5, 6}, 0);
    check(&out[1], IR_F32, S2(2, 4), (double[]){-1, 1, 2, -1, -2, 3, 4, -2}, 0);
    free_all(out, 2);
    free_all(in, 3);
    ir_graph_free(g);
}

/* ---- composites written out with the built-in ops ------------------------- */
static void test_composites(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("comp", NULL);
    ir_shape s3 = S2(1, 3), s4 = S2(1, 4), w4 = S1(4);
    ir_id x = ir_add_input(g, "x", IR_F32, &s3);
    ir_id z = ir_add_input(g, "z", IR_F32, &s4), w = ir_add_input(g, "w", IR_F32, &w4),
          b = ir_add_input(g, "b", IR_F32, &w4);
    /* softmax / log_softmax over the last axis. */
    ir_id m = ir_add_reduce(g, IR_OP_MAX, x, 2, true);
    ir_id sh = ir_add_binary(g, IR_OP_SUB, x, m);
    ir_id e = ir_add_unary(g, IR_OP_EXP, sh);
    ir_id s = ir_add_reduce(g, IR_OP_SUM, e, 2, true);
    ir_id sm = ir_add_binary(g, IR_OP_DIV, e, s);
    ir_id lsm = ir_add_binary(g, IR_OP_SUB, sh, ir_add_unary(g, IR_OP_LOG, s));
    /* layernorm(z, w, b, eps=1e-5). */
    ir_id mu = ir_add_reduce(g, IR_OP_MEAN, z, 2, true);
    ir_id dz = ir_add_binary(g, IR_OP_SUB, z, mu);
    ir_id var = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, dz, dz), 2, true);
    ir_id rs = ir_add_unary(g, IR_OP_RSQRT,
                            ir_add_binary(g, IR_OP_ADD, var, ir_add_const(g, 1e-5, IR_F32)));
    ir_id ln = ir_add_binary(
        g, IR_OP_ADD, ir_add_binary(g, IR_OP_MUL, ir_add_binary(g, IR_OP_MUL, dz, rs), w), b);
    /* rmsnorm(z, w, eps=1e-6). */
    ir_id ms = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, z, z), 2, true);
    ir_id rr = ir_add_unary(g, IR_OP_RSQRT,
                            ir_add_binary(g, IR_OP_ADD, ms, ir_add_const(g, 1e-6, IR_F32)));
    ir_id rms = ir_add_binary(g, IR_OP_MUL, ir_add_binary(g, IR_OP_MUL, z, rr), w);
    ir_id o[4] = {sm, lsm, ln, rms};
    ir_add_output(g, o, 4);
    rt_tensor in[4] = {
        tens(IR_F32, s3, (double[]){1, 2, 3}), tens(IR_F32, s4, (double[]){1, 2, 3, 4}),
        tens(IR_F32, w4, (double[]){1, 1, 2, 2}), tens(IR_F32, w4, (double[]){0, 0, 0, 1})};
    rt_tensor out[4];
    run(g, in, out);
    check(&out[0], IR_F32, s3,
          (double[]){0.090030573170380462, 0.24472847105479764, 0.66524095577482178}, 2e-7);
    check(&out[1], IR_F32, s3,
          (double[]){-2.4076059644443806, -1.4076059644443804, -0.40760596444438041}, 2e-7);
    check(&out[2], IR_F32, s4,
          (double[]){-1.3416354199689269, -0.447211806656309, 0.89442361331261799,
                     3.6832708399378538},
          3e-7);
    check(&out[3], IR_F32, s4,
          (double[]){0.36514834732688839, 0.73029669465377678, 2.1908900839613303,
                     2.9211867786151071},
          3e-7);
    free_all(out, 4);
    free_all(in, 4);
    ir_graph_free(g);
}

/* ---- binding, errors, memory, speed ----------------------------------------- */
static ir_graph *sym_graph(void) {
    ir_graph *g = ir_graph_new("sym", NULL);
    ir_shape s = {.rank = 2, .dim = {IR_DIM_SYM(ir_sym_get(g, "M")), 4}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s), y = ir_add_input(g, "y", IR_F32, &s);
    ir_id z = ir_add_binary(g, IR_OP_ADD, x, y);
    ir_add_output(g, &z, 1);
    return g;
}

static void expect_bind_error(ir_graph *g, rt_tensor *in, const char *want) {
    rt_tensor out = {0};
    const char *msg = run_fail(g, in, &out);
    if (strcmp(msg, want) != 0) fail_msg("got  '%s'\nwant '%s'", msg, want);
    char buf[1024] = "";
    int64_t syms[4];
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    tx_diag d;
    tx_diag_init(&d, f, NULL, NULL, 0);
    assert_false(rt_bind_shapes(g, in, syms, &d));
    fclose(f);
    assert_string_equal(buf, want);
}

static void test_bind(void **state) {
    (void)state;
    ir_graph *g = sym_graph();
    rt_tensor in[2] = {tens(IR_F32, S2(3, 4), (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                       tens(IR_F32, S2(3, 4), NULL)};
    int64_t syms[1];
    tx_diag d;
    tx_diag_init(&d, stderr, NULL, NULL, 0);
    assert_true(rt_bind_shapes(g, in, syms, &d));
    assert_int_equal(syms[0], 3);
    rt_tensor out;
    run(g, in, &out);
    assert_int_equal(out.dim[0], 3);
    assert_true(rt_get(&out, 11) == 11);
    rt_tensor_free(&out);
    free_all(in, 2);

    rt_tensor bad[2] = {tens(IR_F32, S2(3, 5), NULL), tens(IR_F32, S2(3, 4), NULL)};
    expect_bind_error(
        g, bad,
        "txc: error: input 'x': shape [3, 5] does not match f32[M, 4] (dim 1 is 5, expected 4)\n");
    free_all(bad, 2);
    rt_tensor conf[2] = {tens(IR_F32, S2(3, 4), NULL), tens(IR_F32, S2(4, 4), NULL)};
    expect_bind_error(g, conf,
                      "txc: error: input 'y': shape [4, 4] does not match f32[M, 4] (M is 3 from "
                      "'x' but 4 from 'y')\n");
    free_all(conf, 2);
    rt_tensor rk[2] = {tens(IR_F32, S1(4), NULL), tens(IR_F32, S2(3, 4), NULL)};
    expect_bind_error(
        g, rk, "txc: error: input 'x': shape [4] does not match f32[M, 4] (rank 1, expected 2)\n");
    free_all(rk, 2);
    rt_tensor dt[2] = {tens(IR_F32, S2(3, 4), NULL), tens(IR_I32, S2(3, 4), NULL)};
    expect_bind_error(g, dt, "txc: error: input 'y': dtype i32 does not match f32[M, 4]\n");
    free_all(dt, 2);
    /* Sizes a C API caller can pass: a negative dim, an element count past 2^62. */
    rt_tensor neg[2] = {{.dtype = IR_F32, .rank = 2, .dim = {-3, 4}},
                        {.dtype = IR_F32, .rank = 2, .dim = {-3, 4}}};
    expect_bind_error(g, neg, "txc: error: input 'x': dim 0 is -3 (negative)\n");
    rt_tensor huge[2] = {{.dtype = IR_F32, .rank = 2, .dim = {(int64_t)1 << 61, 4}},
                         {.dtype = IR_F32, .rank = 2, .dim = {(int64_t)1 << 61, 4}}};
    expect_bind_error(g, huge,
                      "txc: error: input 'x': shape [2305843009213693952, 4] has 2^62 elements or "
                      "more\n");
    /* A symbol bound in the graph (-D M=2). */
    g->syms[0].value = 2;
    rt_tensor bd[2] = {tens(IR_F32, S2(3, 4), NULL), tens(IR_F32, S2(3, 4), NULL)};
    expect_bind_error(g, bd,
                      "txc: error: input 'x': shape [3, 4] does not match f32[M, 4] (dim 0 is 3, "
                      "but M is bound to 2)\n");
    free_all(bd, 2);
    ir_graph_free(g);
}

/* A bf16 parameter accepts an f32 tensor, rounded to nearest even on the
 * way in; returning an input or one value twice gives independent copies. */
static void test_bf16_input_and_copies(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("bf", NULL);
    ir_shape s = S1(3);
    ir_id x = ir_add_input(g, "x", IR_BF16, &s);
    ir_id o[2] = {x, x};
    ir_add_output(g, o, 2);
    rt_tensor in = tens(IR_F32, s, (double[]){1 + 0x1p-8, 1 + 0x3p-8, 3.14159}), out[2];
    run(g, &in, out);
    check(&out[0], IR_BF16, s, (double[]){1, 1 + 0x1p-6, 3.140625}, 0);
    assert_ptr_not_equal(out[0].data, out[1].data);
    assert_ptr_not_equal(out[0].data, in.data);
    check(&out[1], IR_BF16, s, (double[]){1, 1 + 0x1p-6, 3.140625}, 0);
    free_all(out, 2);
    rt_tensor_free(&in);
    ir_graph_free(g);
}

/* A reshape to a symbol no input determines infers it from the count. */
static void test_reshape_infer(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("ri", NULL);
    ir_shape s = {.rank = 2, .dim = {IR_DIM_SYM(ir_sym_get(g, "M")), 4}};
    ir_shape t = {.rank = 2, .dim = {IR_DIM_SYM(ir_sym_get(g, "K")), 2}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id r = ir_add_reshape(g, x, &t);
    ir_id y = ir_add_binary(g, IR_OP_MUL, r, ir_add_const(g, 2, IR_F32));
    ir_add_output(g, &y, 1);
    rt_tensor in = tens(IR_F32, S2(3, 4), (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), out;
    run(g, &in, &out);
    check(&out, IR_F32, S2(6, 2), (double[]){0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}, 0);
    rt_tensor_free(&out);
    rt_tensor_free(&in);
    ir_graph_free(g);
}

/* IR inconsistencies are reported, not crashed on: a node whose recorded
 * shape disagrees with its operands, a slice out of range. */
static void test_bad_ir(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("bad", NULL);
    ir_shape s = S1(4), wrong = S1(5);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id y = ir_add_unary(g, IR_OP_EXP, x);
    g->nodes[y].shape = wrong;
    ir_add_output(g, &y, 1);
    rt_tensor in = tens(IR_F32, s, NULL), out;
    const char *msg = run_fail(g, &in, &out);
    assert_non_null(strstr(msg, "does not broadcast"));
    ir_graph_free(g);
    g = ir_graph_new("bad2", NULL);
    x = ir_add_input(g, "x", IR_F32, &s);
    y = ir_add_slice(g, x, 0, 2, 9);
    ir_add_output(g, &y, 1);
    msg = run_fail(g, &in, &out);
    assert_non_null(strstr(msg, "slice out of range"));
    ir_graph_free(g);
    g = ir_graph_new("bad3", NULL);
    x = ir_add_input(g, "x", IR_F32, &s);
    y = ir_add_reduce(g, IR_OP_SUM, x, 1, false);
    g->nodes[y].shape = s; /* should be rank 0 */
    ir_add_output(g, &y, 1);
    msg = run_fail(g, &in, &out);
    assert_non_null(strstr(msg, "operands give shape [] but the IR says [4]"));
    ir_graph_free(g);
    /* Overflowing intermediate: broadcast to a shape with 2^80 elements. */
    g = ir_graph_new("bad4", NULL);
    x = ir_add_input(g, "x", IR_F32, &s);
    ir_shape huge = S3(1LL << 40, 1LL << 40, 4);
    y = ir_add_broadcast(g, x, &huge);
    ir_add_output(g, &y, 1);
    msg = run_fail(g, &in, &out);
    assert_non_null(strstr(msg, "too many elements"));
    ir_graph_free(g);
    rt_tensor_free(&in);
}

/* Only values the outputs depend on are evaluated: a dead node that would
 * fail (a slice out of range) does not stop the run; an unused parameter
 * is fine. */
static void test_dead_code(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("dead", NULL);
    ir_shape s = S1(4);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_add_input(g, "unused", IR_I32, &s);
    ir_add_slice(g, x, 0, 2, 9);
    ir_id y = ir_add_unary(g, IR_OP_NEG, x);
    ir_add_output(g, &y, 1);
    rt_tensor in[2] = {tens(IR_F32, s, (double[]){1, 2, 3, 4}), tens(IR_I32, s, NULL)}, out;
    tx_diag d;
    tx_diag_init(&d, stderr, NULL, NULL, 0);
    assert_true(rt_interp_run(g, in, &out, &d));
    check(&out, IR_F32, s, (double[]){-1, -2, -3, -4}, 0);
    rt_tensor_free(&out);
    free_all(in, 2);
    ir_graph_free(g);
}

/* A long chain over 1M elements: values right, dead values freed on the way
 * (a 24-op chain of 4 MiB values), and not absurdly slow. */
static void test_big_chain(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("big", NULL);
    ir_shape s = S1(1 << 20);
    ir_id x = ir_add_input(g, "x", IR_F32, &s), v = x;
    for (int i = 0; i < 12; i++) {
        v = ir_add_binary(g, IR_OP_MUL, v, ir_add_const(g, 0.5, IR_F32));
        v = ir_add_binary(g, IR_OP_ADD, v, x);
    }
    ir_add_output(g, &v, 1);
    rt_tensor in = tens(IR_F32, s, NULL), out;
    for (int64_t i = 0; i < (1 << 20); i++) rt_set(&in, i, (double)(i % 7));
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    clock_t t0 = clock();
    run(g, &in, &out);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    getrusage(RUSAGE_SELF, &r1);
#ifndef TX_ASAN
    /* Freed as it goes: 24 values of 4 MiB would be 96 MiB if kept; the
     * peak grows by a few live values only (ru_maxrss is in KiB). */
    assert_true(r1.ru_maxrss - r0.ru_maxrss < 48 * 1024);
#endif
    /* v_{n+1} = v_n / 2 + x from v_0 = x: v_12 = x * (2 - 2^-12), rounded
     * to f32 at each step (error well below 1e-6). */
    for (int64_t i = 0; i < (1 << 20); i += 99991) {
        double want = (double)(i % 7) * (2 - 0x1p-12);
        assert_true(fabs(rt_get(&out, i) - want) <= 1e-6 * fmax(1, want));
    }
    assert_true(secs < 20.0); /* about 24M element-ops; generous for sanitizer builds */
    rt_tensor_free(&out);
    rt_tensor_free(&in);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_nan_rules),
        cmocka_unit_test(test_binary_compare),
        cmocka_unit_test(test_broadcast_elem),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_half_arith),
        cmocka_unit_test(test_int_edges),
        cmocka_unit_test(test_reduce_2d),
        cmocka_unit_test(test_reduce_3d),
        cmocka_unit_test(test_reduce_special),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_composites),
        cmocka_unit_test(test_bind),
        cmocka_unit_test(test_bf16_input_and_copies),
        cmocka_unit_test(test_reshape_infer),
        cmocka_unit_test(test_bad_ir),
        cmocka_unit_test(test_dead_code),
        cmocka_unit_test(test_big_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
