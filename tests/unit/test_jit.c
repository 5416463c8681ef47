/* test_jit.c - cg_host_run (codegen for the host, ORC JIT) against the
 * reference interpreter rt_interp_run on the same random inputs, for fused
 * and unfused plans. Tolerances per output dtype: f32 |a-b| <= 1e-4 +
 * 1e-4|b|; f16 1e-2 + 1e-2|b|; bf16 3e-2 + 3e-2|b|; i32 and bool exact.
 * NaN must match NaN. */
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

/* Compiles src with the given -D bindings; *raw gets the unplanned copy.
 * Returns the planned graph (fused unless no_fuse). */
static ir_graph *compile(const char *src, const fe_define *defs, unsigned ndefs, bool no_fuse,
                         ir_graph **raw) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    fe_options fo = {.entry = NULL, .defines = defs, .ndefines = ndefs};
    ir_graph *g = fe_compile("test.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    *raw = ir_graph_clone(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200"), .no_fuse = no_fuse};
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* Runs src on random inputs whose symbolic dims take `symvals` (by symbol
 * name, "N=37,M=5"), on the host JIT (fused and unfused) and in the
 * interpreter; every output must agree. */
static void check(const char *src, const char *symvals, const fe_define *defs, unsigned ndefs,
                  uint64_t seed) {
    for (int nf = 0; nf < 2; nf++) {
        ir_graph *raw;
        ir_graph *g = compile(src, defs, ndefs, nf == 1, &raw);
        unsigned nin = 0;
        while (nin < raw->n && raw->nodes[nin].op == IR_OP_INPUT) nin++;
        rt_tensor *in = calloc(nin + 1, sizeof *in);
        for (unsigned i = 0; i < nin; i++) {
            const ir_node *n = &raw->nodes[i];
            in[i].dtype = (ir_dtype)n->dtype;
            in[i].rank = n->shape.rank;
            for (unsigned k = 0; k < n->shape.rank; k++) {
                ir_dim dv = n->shape.dim[k];
                if (IR_DIM_IS_SYM(dv)) {
                    const char *name = raw->syms[IR_DIM_SYMIDX(dv)].name;
                    const char *p = symvals ? strstr(symvals, name) : NULL;
                    while (p && (p[strlen(name)] != '=' || (p != symvals && p[-1] != ',')))
                        p = strstr(p + 1, name);
                    assert_non_null(p);
                    dv = atoll(p + strlen(name) + 1);
                }
                in[i].dim[k] = dv;
            }
            assert_true(rt_tensor_alloc(&in[i]));
            rt_fill_random(&in[i], seed, i);
        }
        unsigned nout = raw->nodes[ir_output(raw)].nin;
        rt_tensor *a = calloc(nout + 1, sizeof *a), *b = calloc(nout + 1, sizeof *b);
        tx_diag d;
        tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
        assert_true(drv_host_run(g, in, a, &d));
        assert_true(rt_interp_run(raw, in, b, &d));
        for (unsigned k = 0; k < nout; k++) {
            assert_int_equal(a[k].dtype, b[k].dtype);
            assert_int_equal(a[k].rank, b[k].rank);
            int64_t n = rt_numel(&b[k]);
            assert_int_equal(rt_numel(&a[k]), n);
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < n; i++)
                if (!tk_close_enough(b[k].dtype, rt_get(&a[k], i), rt_get(&b[k], i))) {
                    if (first < 0) first = i;
                    bad++;
                }
            if (bad) {
                fprintf(stderr,
                        "%s\noutput %u (%s): %lld of %lld elements differ; first at %lld: jit %.9g "
                        "ref %.9g%s\n",
                        src, k, ir_dtype_name(b[k].dtype), (long long)bad, (long long)n,
                        (long long)first, rt_get(&a[k], first), rt_get(&b[k], first),
                        nf ? " (--no-fuse)" : "");
            }
            assert_int_equal(bad, 0);
            rt_tensor_free(&a[k]);
            rt_tensor_free(&b[k]);
        }
        for (unsigned i = 0; i < nin; i++) rt_tensor_free(&in[i]);
        free(in);
        free(a);
        free(b);
        ir_graph_free(g);
        ir_graph_free(raw);
    }
}

static void test_pointwise_chain(void **s) {
    (void)s;
    check("fn f(x: f32[N], y: f32[N]) -> f32[N] {\n"
          "  return relu(x * y + exp(x) - tanh(y)) / (1 + sigmoid(x)) + abs(neg(y)) ** 2\n}\n",
          "N=1037", NULL, 0, 1);
    check(
        "fn f(x: f32[N]) -> f32[N] {\n"
        "  return exp2(x) + log(abs(x) + 0.5) + log2(abs(x) + 2) + sqrt(abs(x)) + rsqrt(abs(x) + 1)"
        " + recip(x + 3) + sin(x * 7) + cos(x * 5) + gelu(x * 3) + gelu_tanh(x * 3) + silu(x * 4)"
        " + erf(x * 2) + floor(x * 4) + ceil(x * 4) + pow(abs(x) + 0.1, x * 2) + maximum(x, 0.2) + "
        "minimum(x, -0.2)\n}\n",
        "N=3001", NULL, 0, 2);
}

static void test_broadcast(void **s) {
    (void)s;
    check("fn f(x: f32[M, N], b: f32[N], c: f32[M, 1], s: f32[]) -> f32[M, N] { return x * b + c - "
          "s }\n",
          "M=7,N=131", NULL, 0, 3);
    /* Row-broadcast operands loaded as vectors (N a multiple of the width). */
    check("fn f(x: f32[M, N], b: f32[N], c: bf16[1, N]) -> f32[M, N] { return x * b + f32(c) }\n",
          "M=5,N=64", NULL, 0, 36);
    check("fn f(x: bf16[M, N], b: bf16[N]) -> bf16[M, N] { return gelu_tanh(x + b) }\n", "M=3,N=48",
          NULL, 0, 37);
    check("fn f(x: f32[A, 1, C], y: f32[B, 1]) -> f32[A, B, C] { return x + y }\n", "A=3,B=5,C=9",
          NULL, 0, 4);
}

static void test_views(void **s) {
    (void)s;
    check("fn f(x: f32[A, B], y: f32[B, A]) -> f32[B, A] { return transpose(x, 0, 1) * 2 + y }\n",
          "A=13,B=29", NULL, 0, 5);
    check("fn f(x: f32[A, B, C]) -> f32[C, A, B] { return permute(x, (2, 0, 1)) + 1 }\n",
          "A=3,B=5,C=7", NULL, 0, 6);
    check("fn f(x: f32[6, 10]) -> f32[4, 15] { return reshape(x, (4, 15)) * 3 }\n", NULL, NULL, 0,
          7);
    check("fn f(x: f32[9, 10], y: f32[9, 3]) -> f32[9, 7] { return slice(x, axis=1, start=2, "
          "stop=9) - 1 }\n",
          NULL, NULL, 0, 8);
    check(
        "fn f(x: f32[5, 3], y: f32[5, 4]) -> f32[5, 7] { return concat((x, y * 2), axis=1) + 1 }\n",
        NULL, NULL, 0, 9);
    check("fn f(x: f32[N]) -> f32[4, N] { return broadcast_to(x, (4, N)) * 2 }\n", "N=33", NULL, 0,
          10);
    /* A returned view also read by other regions; a view of a computed
     * value read by two regions (index math in each, docs/fusion.md). */
    check("fn f(x: f32[A, B]) -> (f32[B, A], f32[B, A], f32[B]) {\n"
          "  t = transpose(x, 0, 1)\n  return t, exp(t), sum(t, axis=1)\n}\n",
          "A=9,B=14", NULL, 0, 33);
    check("fn f(x: f32[A, B]) -> (f32[B, A], f32[B], f32[B, A]) {\n  y = exp(x)\n  t = "
          "transpose(y, 0, 1)\n"
          "  return t * 2, max(t, axis=1), t\n}\n",
          "A=5,B=6", NULL, 0, 34);
    check("fn f(x: f32[A, B], s: f32[]) -> (f32[A, B], f32[A, B], f32[A, B], f32[B, A]) {\n"
          "  b = broadcast_to(s, (A, B))\n  t = transpose(x, 0, 1)\n  return relu(b) + x, b, b, "
          "t\n}\n",
          "A=3,B=17", NULL, 0, 35);
}

static void test_multi_output(void **s) {
    (void)s;
    check("fn adam(p: f32[N], g: f32[N], m: f32[N], v: f32[N], lr: f32[], b1: f32[], b2: f32[]) -> "
          "(f32[N], f32[N], f32[N]) {\n"
          "  m2 = b1 * m + (1 - b1) * g\n  v2 = b2 * v + (1 - b2) * g * g\n"
          "  return p - lr * m2 / (sqrt(abs(v2)) + 1e-8), m2, v2\n}\n",
          "N=1001", NULL, 0, 11);
    /* An input returned directly, a value returned twice. */
    check("fn f(x: f32[N], y: f32[N]) -> (f32[N], f32[N], f32[N]) { z = x + y\n return z, x, z }\n",
          "N=19", NULL, 0, 12);
}

static void test_reductions(void **s) {
    (void)s;
    check("fn f(x: f32[A, B, C]) -> (f32[A, B, 1], f32[B, C], f32[A, 1, C], f32[B]) {\n"
          "  return sum(x, axis=-1, keepdim=true), max(x, axis=0), mean(x, axis=1, keepdim=true), "
          "min(x, axis=(0, 2))\n}\n",
          "A=3,B=37,C=129", NULL, 0, 13);
    check("fn f(x: f32[M, N]) -> f32[] { return sum(x) }\n", "M=17,N=300", NULL, 0, 14);
    check("fn f(x: f32[M, N]) -> f32[M, N] { return x - mean(x, axis=0, keepdim=true) }\n",
          "M=45,N=7", NULL, 0, 15);
}

static void test_norms(void **s) {
    (void)s;
    check("fn f(x: f32[M, N]) -> f32[M, N] { return softmax(x, axis=-1) }\n", "M=9,N=1000", NULL, 0,
          16);
    check("fn f(x: bf16[M, N]) -> bf16[M, N] { return bf16(softmax(f32(x), axis=-1)) }\n",
          "M=5,N=129", NULL, 0, 17);
    check("fn f(x: f16[M, N], w: f16[N], b: f16[N]) -> f16[M, N] { return layernorm(x, w, b, "
          "eps=1e-5) }\n",
          "M=6,N=77", NULL, 0, 18);
    check("fn f(x: bf16[M, D], r: bf16[M, D], w: bf16[D]) -> (bf16[M, D], bf16[M, D]) {\n"
          "  h = x + r\n  return h, rmsnorm(h, w, eps=1e-6)\n}\n",
          "M=11,D=65", NULL, 0, 19);
    check("fn f(x: f32[M, N]) -> f32[M, N] { return log_softmax(x, axis=0) }\n", "M=33,N=10", NULL,
          0, 20);
}

/* Bound rows short enough to be held in registers (unrolled passes). */
static void test_bound_rows(void **s) {
    (void)s;
    fe_define defs[2] = {{"M", 13}, {"N", 12}};
    check("fn f(x: f32[M, N]) -> f32[M, N] { return softmax(x, axis=-1) }\n", NULL, defs, 2, 21);
    check("fn f(x: f32[M, N], w: f32[N], b: f32[N]) -> f32[M, N] { return layernorm(x, w, b) }\n",
          NULL, defs, 2, 22);
    check("fn f(x: f32[M, N]) -> f32[N] { return sum(x * x, axis=0) }\n", NULL, defs, 2, 23);
    fe_define d16[2] = {{"M", 7}, {"N", 16}}, d10[2] = {{"M", 5}, {"N", 10}};
    check("fn f(x: bf16[M, N]) -> bf16[M, N] { return bf16(softmax(f32(x), axis=-1)) }\n", NULL,
          d16, 2, 31);
    check("fn f(x: f16[M, N], r: f16[M, N], w: f16[N]) -> (f16[M, N], f16[M, N]) {\n"
          "  h = x + r\n  return h, rmsnorm(h, w)\n}\n",
          NULL, d10, 2, 32);
}

/* One graph, several run-time sizes of its symbolic dim. */
static void test_symbolic_sizes(void **s) {
    (void)s;
    const char *src = "fn f(x: f32[N, K], y: f32[K]) -> (f32[N, K], f32[N]) { z = exp(x) * y\n "
                      "return z, sum(z, axis=1) }\n";
    check(src, "N=1,K=1", NULL, 0, 24);
    check(src, "N=7,K=3", NULL, 0, 25);
    check(src, "N=100,K=257", NULL, 0, 26);
}

static void test_ints_bools(void **s) {
    (void)s;
    check("fn f(a: i32[N], b: i32[N], x: f32[N]) -> (i32[N], bool[N], f32[N], i32[N]) {\n"
          "  c = a * b + a - maximum(a, b)\n  m = (x > 0.25)\n"
          "  return c, m, where(m, x, f32(a)), i32(x * 10)\n}\n",
          "N=101", NULL, 0, 27);
    check("fn f(a: i32[M, N]) -> (i32[M], i32[N]) { return sum(a, axis=1), max(a, axis=0) }\n",
          "M=9,N=300", NULL, 0, 28);
}

static void test_half_pointwise(void **s) {
    (void)s;
    check("fn f(x: f16[N], y: f16[N]) -> f16[N] { return x * y + gelu(x) }\n", "N=1003", NULL, 0,
          29);
    check("fn f(x: bf16[N], y: f32[N]) -> (bf16[N], f32[N]) { return x + bf16(y), f32(x) * y }\n",
          "N=517", NULL, 0, 30);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pointwise_chain), cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_views),           cmocka_unit_test(test_multi_output),
        cmocka_unit_test(test_reductions),      cmocka_unit_test(test_norms),
        cmocka_unit_test(test_bound_rows),      cmocka_unit_test(test_symbolic_sizes),
        cmocka_unit_test(test_ints_bools),      cmocka_unit_test(test_half_pointwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
