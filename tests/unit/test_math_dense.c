/* test_math_dense.c - the generated f32 erf, log and log2 (codegen/math.c: one formula for the
 * host and the GPU, the GPU replacing only the portable 2^q of erf's tail by ex2.approx) run on
 * the host JIT over every f32 of the ranges where their approximations live, and over strided
 * bit patterns of the rest, against double-precision libm: the largest error in f32 ulps stays
 * under each bound, and the special inputs (zeros, infinities, NaN, negatives, subnormals)
 * give exactly NumPy's results. The bounds are tighter than the contract's 4 ulp (log, log2)
 * and 6 ulp (erf) so that a worse fit fails here before it reaches the GPU, where the SFU's
 * error comes on top (docs/codegen.md "Math functions"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "driver/driver.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

enum { CHUNK = 1 << 22 };

/* The f32 whose bits are u. */
static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* op applied to x[0..n) by the host JIT (one fused kernel), written to r. */
static void run_op(ir_op op, const float *x, float *r, int64_t n) {
    ir_graph *g = ir_graph_new("dense", NULL);
    ir_shape s = {1, {n}};
    ir_id o = ir_add_unary(g, op, ir_add_input(g, "x", IR_F32, &s));
    ir_add_output(g, &o, 1);
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
    assert_true(pass_run_pipeline(g, &pc));
    rt_tensor in = {IR_F32, 1, {n}, NULL}, out;
    assert_true(rt_tensor_alloc(&in));
    memcpy(in.data, x, (size_t)n * sizeof(float));
    assert_true(drv_host_run(g, &in, &out, &d));
    memcpy(r, out.data, (size_t)n * sizeof(float));
    rt_tensor_free(&out);
    rt_tensor_free(&in);
    ir_graph_free(g);
}

/* Distance in ulps of the f32 r from the exact e (ulp of e's binade, FLT_MIN's below it). */
static double ulps(float r, double e) {
    double ae = fabs(e);
    int ex;
    frexp(ae < 1.1754943508222875e-38 ? 1.1754943508222875e-38 : ae, &ex);
    return fabs((double)r - e) / ldexp(1.0, ex - 24);
}

/* Largest error so far and where. */
typedef struct worst {
    double ulp;
    float x;
} worst;

/* Runs op on the f32s with bits lo, lo + stride, ... < hi (chunked) and folds the ulp errors
 * against ref into *w. */
static void sweep_bits(ir_op op, double (*ref)(double), uint32_t lo, uint32_t hi, uint32_t stride,
                       worst *w) {
    float *x = malloc(CHUNK * sizeof(float)), *r = malloc(CHUNK * sizeof(float));
    assert_non_null(x);
    assert_non_null(r);
    uint64_t u = lo;
    while (u < hi) {
        int64_t n = 0;
        for (; n < CHUNK && u < hi; n++, u += stride) x[n] = from_bits((uint32_t)u);
        run_op(op, x, r, n);
        for (int64_t i = 0; i < n; i++) {
            double e = ulps(r[i], ref((double)x[i]));
            if (!(e <= w->ulp)) { /* a NaN result counts as the worst */
                w->ulp = isnan(e) ? INFINITY : e;
                w->x = x[i];
            }
        }
    }
    free(x);
    free(r);
}

/* True when a and b are the same f32 (NaN equals NaN; the sign of zero counts). */
static bool same(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* op on each of x[0..n) gives exactly want[i]. */
static void check_exact(ir_op op, const float *x, const float *want, int n) {
    float r[64];
    assert_true(n <= 64);
    run_op(op, x, r, n);
    for (int i = 0; i < n; i++) {
        if (!same(r[i], want[i]))
            fail_msg("%s(%g) = %g, want %g", ir_op_name(op), (double)x[i], (double)r[i],
                     (double)want[i]);
    }
}

static void report(const char *what, const worst *w, double bound) {
    printf("  %-32s max %.3f ulp at %.9g (bound %.2f)\n", what, w->ulp, (double)w->x, bound);
    assert_true(w->ulp <= bound);
}

/* erf: every f32 of [0.25, 4.25] (both branches, the switch at 0.9 and the clamp at 4),
 * every 97th below 0.25 down to the subnormals, every 13th of [4.25, 16]; odd symmetry
 * bit-exact; the special values. */
static void test_erf(void **s) {
    (void)s;
    worst w = {0, 0};
    sweep_bits(IR_OP_ERF, erf, 0x3e800000u, 0x40880001u, 1, &w);
    report("erf [0.25, 4.25] every f32", &w, 1.6);
    worst t = {0, 0};
    sweep_bits(IR_OP_ERF, erf, 1u, 0x3e800000u, 97, &t);
    sweep_bits(IR_OP_ERF, erf, 0x40880000u, 0x41800000u, 13, &t);
    report("erf (0, 0.25), [4.25, 16] strided", &t, 1.6);
    worst n = {0, 0};
    sweep_bits(IR_OP_ERF, erf, 0xbe800000u, 0xc0880001u, 7, &n);
    report("erf [-4.25, -0.25] every 7th", &n, 1.6);
    float x[] = {0.0f,    -0.0f,  INFINITY, -INFINITY, NAN,    1e-45f,
                 -1e-45f, 1e-40f, 4.0f,     30.0f,     -30.0f, 3.4e38f};
    float want[] = {0.0f,
                    -0.0f,
                    1.0f,
                    -1.0f,
                    NAN,
                    (float)erf(1e-45),
                    (float)erf(-1e-45),
                    (float)erf((double)1e-40f),
                    1.0f,
                    1.0f,
                    -1.0f,
                    1.0f};
    check_exact(IR_OP_ERF, x, want, (int)(sizeof x / sizeof x[0]));
}

/* log and log2: every f32 of [0.5, 2) (the reduction's whole mantissa range, both sides of its
 * switch at 4/3 and of 1), every 509th positive f32 from the smallest subnormal to FLT_MAX;
 * the special values; log2 exact at every power of two. */
static void test_log(void **s) {
    (void)s;
    worst a = {0, 0}, b = {0, 0}, c = {0, 0}, d = {0, 0};
    sweep_bits(IR_OP_LOG, log, 0x3f000000u, 0x40000000u, 1, &a);
    report("log [0.5, 2) every f32", &a, 1.5);
    sweep_bits(IR_OP_LOG, log, 1u, 0x7f800000u, 509, &b);
    report("log (0, FLT_MAX] every 509th", &b, 1.5);
    sweep_bits(IR_OP_LOG2, log2, 0x3f000000u, 0x40000000u, 1, &c);
    report("log2 [0.5, 2) every f32", &c, 2.5);
    sweep_bits(IR_OP_LOG2, log2, 1u, 0x7f800000u, 509, &d);
    report("log2 (0, FLT_MAX] every 509th", &d, 2.5);
    float x[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -1e-40f, 1.0f, 1e-45f, 3.4e38f};
    float lw[] = {-INFINITY,
                  -INFINITY,
                  INFINITY,
                  NAN,
                  NAN,
                  NAN,
                  NAN,
                  0.0f,
                  (float)log(1e-45),
                  (float)log((double)3.4e38f)};
    check_exact(IR_OP_LOG, x, lw, 8);
    float l2[] = {-INFINITY, -INFINITY, INFINITY, NAN,     NAN,
                  NAN,       NAN,       0.0f,     -149.0f, (float)log2((double)3.4e38f)};
    check_exact(IR_OP_LOG2, x, l2, 9);
    float p[64], pw[64];
    for (int i = 0; i < 64; i++) {
        int k = -149 + (int)((276.0 / 63.0) * i + 0.5); /* -149 .. 127 */
        p[i] = ldexpf(1.0f, k);
        pw[i] = (float)k;
    }
    check_exact(IR_OP_LOG2, p, pw, 64);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_erf),
        cmocka_unit_test(test_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
