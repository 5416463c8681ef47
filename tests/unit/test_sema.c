/* test_sema.c - lowering to IR: node ops, dtypes, shapes, names and
 * locations; symbol binding (-D); weak literal typing and promotion;
 * inlining of helpers (several return values) and of the prelude's
 * composites; every error class (NULL plus the exact message), including
 * the golden files of tests/errors; the public benchmark programs; and
 * robustness against mutated input. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "frontend/frontend.h"

#include "tests/unit/testkit.h"

/* Compiles src with options; the graph must verify. Fails the test with
 * the diagnostics when compilation fails. */
static ir_graph *compile_opt(const char *src, const fe_options *o) {
    cap c;
    cap_open(&c, "t.tx", src, strlen(src));
    ir_graph *g = fe_compile("t.tx", src, strlen(src), o, &c.d);
    if (!g) fprintf(stderr, "%s", cap_text(&c));
    cap_close(&c);
    assert_non_null(g);
    assert_true(ir_verify(g, stderr));
    return g;
}
static ir_graph *compile(const char *src) { return compile_opt(src, NULL); }

/* Compiling src must fail with exactly `msg` as the first line. */
static void expect_error_opt(const char *src, const fe_options *o, const char *msg) {
    cap c;
    cap_open(&c, "t.tx", src, strlen(src));
    ir_graph *g = fe_compile("t.tx", src, strlen(src), o, &c.d);
    const char *out = cap_text(&c);
    size_t n = strcspn(out, "\n");
    if (g || strlen(msg) != n || strncmp(out, msg, n))
        fprintf(stderr, "src:\n%s\ngot:  %s\nwant: %s\n", src, out, msg);
    assert_null(g);
    assert_int_equal(n, strlen(msg));
    assert_true(!strncmp(out, msg, n));
    cap_close(&c);
}
static void expect_error(const char *src, const char *msg) { expect_error_opt(src, NULL, msg); }

/* The node computing output value k. */
static const ir_node *out_node(ir_graph *g, unsigned k) {
    const ir_node *o = &g->nodes[ir_output(g)];
    assert_true(k < o->nin);
    return &g->nodes[ir_in(g, o, k)];
}
static const ir_node *in_node(ir_graph *g, const ir_node *n, unsigned k) {
    return &g->nodes[ir_in(g, n, k)];
}

static const char *shape_s(ir_graph *g, const ir_node *n) {
    static char buf[256];
    return ir_shape_str(g, &n->shape, buf, sizeof buf);
}

/* Counts nodes of op `op`. */
static unsigned count_op(ir_graph *g, ir_op op) {
    unsigned c = 0;
    for (uint32_t i = 0; i < g->n; i++) c += g->nodes[i].op == op;
    return c;
}

static void test_add_relu_structure(void **st) {
    (void)st;
    ir_graph *g = compile(
        "fn add_relu(x: f32[N], y: f32[N]) -> f32[N] {\n  z = x + y\n  return relu(z)\n}\n");
    assert_string_equal(g->name, "add_relu");
    assert_int_equal(g->n, 5);
    assert_int_equal(g->nodes[0].op, IR_OP_INPUT);
    assert_string_equal(ir_str(g, g->nodes[0].name), "x");
    assert_string_equal(ir_str(g, g->nodes[1].name), "y");
    assert_int_equal(g->nodes[1].a.param, 1);
    assert_int_equal(g->nodes[2].op, IR_OP_ADD);
    assert_string_equal(ir_str(g, g->nodes[2].name), "z");
    assert_int_equal(g->nodes[2].line, 2);
    assert_int_equal(g->nodes[2].col, 9);
    assert_int_equal(g->nodes[3].op, IR_OP_RELU);
    assert_int_equal(g->nodes[3].line, 3);
    assert_int_equal(g->nodes[3].col, 10);
    assert_int_equal(g->nodes[4].op, IR_OP_OUTPUT);
    assert_int_equal(g->nsyms, 1);
    assert_string_equal(g->syms[0].name, "N");
    assert_int_equal(g->syms[0].value, -1);
    assert_int_equal(g->nodes[3].shape.rank, 1);
    assert_int_equal(g->nodes[3].shape.dim[0], IR_DIM_SYM(0));
    assert_int_equal(g->nodes[3].dtype, IR_F32);
    ir_graph_free(g);
    g = compile("fn f(x: f32[4]) -> f32[4] {\n  x = x * 2; x = exp(x)\n  return x\n}\n");
    assert_string_equal(ir_str(g, out_node(g, 0)->name), "x.2"); /* the input keeps "x" */
    assert_string_equal(ir_str(g, in_node(g, out_node(g, 0), 0)->name), "x.1");
    ir_graph_free(g);
}

static void test_defines_bind(void **st) {
    (void)st;
    const char *src = "fn f(x: bf16[M, N], w: bf16[N]) -> bf16[M, N] {\n  return x * w\n}\n";
    fe_define defs[] = {{"N", 64}};
    fe_options o = {.defines = defs, .ndefines = 1};
    ir_graph *g = compile_opt(src, &o);
    int n = ir_sym_find(g, "N"), m = ir_sym_find(g, "M");
    assert_true(n >= 0 && m >= 0);
    assert_int_equal(g->syms[n].value, 64);
    assert_int_equal(g->syms[m].value, -1);
    assert_string_equal(shape_s(g, out_node(g, 0)), "[M, 64]");
    assert_int_equal(g->nodes[1].shape.dim[0], 64);
    ir_graph_free(g);
    fe_define bad[] = {{"K", 8}};
    o.defines = bad;
    expect_error_opt(src, &o, "txc: error: -D K=8: no parameter of 'f' has a dim named 'K'");
    fe_define zero[] = {{"N", 0}};
    o.defines = zero;
    expect_error_opt(src, &o, "txc: error: -D N=0: the value must be a positive integer");
    fe_define clash[] = {{"N", 4}, {"N", 8}};
    o.defines = clash;
    o.ndefines = 2;
    expect_error_opt(src, &o, "txc: error: -D N=8: 'N' is already bound to 4");
}

static void test_entry_selection(void **st) {
    (void)st;
    const char *src =
        "fn a(x: f32[4]) -> f32[4] {\n  return x\n}\nfn b(x: f32[2]) -> f32[2] {\n  return -x\n}\n";
    ir_graph *g = compile(src);
    assert_string_equal(g->name, "b");
    ir_graph_free(g);
    fe_options o = {.entry = "a"};
    g = compile_opt(src, &o);
    assert_string_equal(g->name, "a");
    assert_int_equal(g->n, 2); /* input, output: x returned as is */
    ir_graph_free(g);
    o.entry = "softmax";
    expect_error_opt(src, &o, "txc: error: no function named 'softmax' (--entry)");
}

static void test_weak_literals(void **st) {
    (void)st;
    ir_graph *g = compile(
        "fn f(x: bf16[N], b1: f32[], i: i32[N], m: bool[N]) -> (bf16[N], f32[], f32[N], i32[N], "
        "f32[], i32[], bool[N], f32[N]) {\n"
        "  return x * 0.5, 1 - b1, i * 0.5, m + 1, 2.5, 7, x > 0, i / 2\n}\n");
    const ir_node *a = out_node(g, 0);
    assert_int_equal(a->op, IR_OP_MUL);
    assert_int_equal(a->dtype, IR_BF16);
    assert_int_equal(in_node(g, a, 1)->op, IR_OP_CONST);
    assert_int_equal(in_node(g, a, 1)->dtype, IR_BF16);
    assert_true(in_node(g, a, 1)->a.cval == 0.5);
    const ir_node *b = out_node(g, 1);
    assert_int_equal(b->op, IR_OP_SUB);
    assert_int_equal(b->dtype, IR_F32);
    assert_int_equal(b->shape.rank, 0);
    const ir_node *c = out_node(g, 2); /* i32 * float literal: f32 (NumPy) */
    assert_int_equal(c->dtype, IR_F32);
    assert_int_equal(in_node(g, c, 0)->op, IR_OP_CAST);
    const ir_node *d = out_node(g, 3); /* bool arithmetic: i32 */
    assert_int_equal(d->op, IR_OP_ADD);
    assert_int_equal(d->dtype, IR_I32);
    assert_int_equal(in_node(g, d, 0)->op, IR_OP_CAST);
    assert_int_equal(in_node(g, d, 1)->dtype, IR_I32);
    const ir_node *e = out_node(g, 4);
    assert_int_equal(e->op, IR_OP_CONST);
    assert_int_equal(e->dtype, IR_F32);
    assert_int_equal(out_node(g, 5)->dtype, IR_I32);
    assert_int_equal(out_node(g, 6)->op, IR_OP_GT);
    assert_int_equal(out_node(g, 6)->dtype, IR_BOOL);
    assert_int_equal(in_node(g, out_node(g, 6), 1)->dtype, IR_BF16);
    const ir_node *h = out_node(g, 7); /* integer true division: f32 */
    assert_int_equal(h->op, IR_OP_DIV);
    assert_int_equal(h->dtype, IR_F32);
    ir_graph_free(g);
}

static void test_promotion_and_folding(void **st) {
    (void)st;
    ir_graph *g = compile("fn f(a: f16[4], b: bf16[4], x: f32[4]) -> (f32[4], f32[4], f32[4]) {\n"
                          "  return a + b, x * (2 * 3 - 1) / 4, -x ** 2\n}\n");
    assert_int_equal(out_node(g, 0)->dtype, IR_F32);
    const ir_node *d = out_node(g, 1);
    assert_int_equal(d->op, IR_OP_DIV);
    assert_true(in_node(g, in_node(g, d, 0), 1)->a.cval == 5.0); /* folded 2*3-1 */
    const ir_node *n = out_node(g, 2);
    assert_int_equal(n->op, IR_OP_NEG);
    assert_int_equal(in_node(g, n, 0)->op, IR_OP_POW);
    ir_graph_free(g);
}

static void test_helpers_inlined(void **st) {
    (void)st;
    const char *src = "fn main(x: f32[N]) -> (f32[N], f32[N]) {\n"
                      "  a, b = two(x)\n"
                      "  a = a + b\n"
                      "  a = a * 2\n"
                      "  return a, twice(b)\n"
                      "}\n"
                      "fn two(v) {\n  h = v + 1\n  return h, exp(v)\n}\n"
                      "fn twice(v) {\n  h = v * 2\n  return h\n}\n";
    fe_options o = {.entry = "main"};
    ir_graph *g = compile_opt(src, &o);
    assert_int_equal(count_op(g, IR_OP_OUTPUT), 1);
    assert_int_equal(count_op(g, IR_OP_EXP), 1);
    /* names: h (the helper's; unpacking into a keeps it), b, then a, a.1 (rebound), h.1 (twice's h)
     */
    const char *want[] = {"h", "b", "a", "a.1", "h.1"};
    unsigned k = 0;
    for (uint32_t i = 0; i < g->n; i++)
        if (g->nodes[i].name && g->nodes[i].op != IR_OP_INPUT) {
            assert_true(k < 5);
            assert_string_equal(ir_str(g, g->nodes[i].name), want[k]);
            k++;
        }
    assert_int_equal(k, 5);
    assert_int_equal(out_node(g, 1)->line, 12); /* twice's body: its own location */
    ir_graph_free(g);
    /* helpers may return tuples and literals; unpacking a tuple works too */
    g = compile("fn g(x) {\n  return x * 2, (0, -1), 3\n}\n"
                "fn f(x: f32[2, 3]) -> (f32[], f32[]) {\n  a, ax, k = g(x)\n  p, q = (a, k)\n"
                "  return sum(p, axis=ax), mean(p) * q\n}\n");
    assert_int_equal(out_node(g, 0)->a.red.axes, 3u);
    assert_int_equal(out_node(g, 1)->op, IR_OP_MUL);
    assert_int_equal(in_node(g, out_node(g, 1), 1)->dtype, IR_F32); /* the weak 3 took f32 */
    ir_graph_free(g);
}

static void test_typed_helper(void **st) {
    (void)st;
    ir_graph *g = compile("fn g(a: f32[K, 4], b: f32[K, 4]) -> f32[K, 4] {\n  return a - b\n}\n"
                          "fn f(x: f32[N, 4]) -> f32[N, 4] {\n  return g(x, x)\n}\n");
    assert_int_equal(out_node(g, 0)->op, IR_OP_SUB);
    ir_graph_free(g);
    expect_error("fn g(a: f32[K, 4], b: f32[K, 4]) {\n  return a - b\n}\n"
                 "fn f(x: f32[N, 4], y: f32[M, 4]) -> f32[N, 4] {\n  return g(x, y)\n}\n",
                 "t.tx:5:15: error: argument 'b' of 'g' is f32[M, 4], declared f32[K, 4]");
}

static void test_softmax_expands(void **st) {
    (void)st;
    ir_graph *g =
        compile("fn f(x: f32[M, N]) -> f32[M, N] {\n  y = softmax(x, axis=0)\n  return y\n}\n");
    ir_op want[] = {IR_OP_INPUT, IR_OP_MAX, IR_OP_SUB,   IR_OP_EXP,
                    IR_OP_SUM,   IR_OP_DIV, IR_OP_OUTPUT};
    assert_int_equal(g->n, 7);
    for (int i = 0; i < 7; i++) assert_int_equal(g->nodes[i].op, want[i]);
    assert_int_equal(g->nodes[1].a.red.axes, 1u);
    assert_true(g->nodes[1].a.red.keepdim);
    assert_string_equal(shape_s(g, &g->nodes[1]), "[1, N]");
    assert_string_equal(ir_str(g, g->nodes[5].name), "y");
    for (int i = 1; i < 6; i++) assert_int_equal(g->nodes[i].line, 2); /* the call site */
    for (int i = 1; i < 6; i++) assert_int_equal(g->nodes[i].col, 7);
    ir_graph_free(g);
    g = compile("fn f(x: f16[M, N]) -> f16[M, N] {\n  return log_softmax(x)\n}\n");
    assert_int_equal(count_op(g, IR_OP_LOG), 1);
    assert_int_equal(out_node(g, 0)->dtype, IR_F16);
    assert_int_equal(out_node(g, 0)->op, IR_OP_SUB);
    ir_graph_free(g);
}

static void test_norms_compute_in_f32(void **st) {
    (void)st;
    ir_graph *g =
        compile("fn f(x: bf16[M, D], w: bf16[D], b: bf16[D]) -> (bf16[M, D], bf16[M, D]) {\n"
                "  return layernorm(x, w, b, eps=1e-3), rmsnorm(x, w)\n}\n");
    const ir_node *ln = out_node(g, 0), *rn = out_node(g, 1);
    assert_int_equal(ln->op, IR_OP_CAST);
    assert_int_equal(ln->dtype, IR_BF16);
    assert_int_equal(in_node(g, ln, 0)->dtype, IR_F32);
    assert_int_equal(rn->op, IR_OP_CAST);
    assert_int_equal(count_op(g, IR_OP_MEAN), 3);
    bool eps3 = false, eps6 = false;
    for (uint32_t i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_CONST) {
            eps3 |= g->nodes[i].a.cval == 1e-3 && g->nodes[i].dtype == IR_F32;
            eps6 |= g->nodes[i].a.cval == 1e-6;
        }
    assert_true(eps3 && eps6);
    ir_graph_free(g);
    g = compile(
        "fn f(x: f32[M, D], w: f32[D]) -> f32[M, D] {\n  return rmsnorm(x, w, eps=1e-5)\n}\n");
    assert_int_equal(count_op(g, IR_OP_CAST), 0); /* f32 input: no casts */
    ir_graph_free(g);
}

static void test_reductions(void **st) {
    (void)st;
    ir_graph *g = compile(
        "fn f(x: f32[A, B, C], i: i32[A], m: bool[A]) -> (f32[B], f32[A, 1, 1], f32[], f32[], "
        "i32[]) {\n"
        "  return sum(x, axis=(0, -1)), max(x, axis=(1, 2), keepdim=true), mean(x), mean(i), "
        "sum(m)\n}\n");
    assert_int_equal(out_node(g, 0)->a.red.axes, 5u);
    assert_false(out_node(g, 0)->a.red.keepdim);
    assert_int_equal(out_node(g, 1)->a.red.axes, 6u);
    assert_int_equal(out_node(g, 2)->a.red.axes, 7u);
    assert_int_equal(out_node(g, 3)->op, IR_OP_MEAN);
    assert_int_equal(in_node(g, out_node(g, 3), 0)->op, IR_OP_CAST);
    assert_int_equal(out_node(g, 4)->dtype, IR_I32);
    ir_graph_free(g);
    g = compile("fn f(x: bf16[M, N]) -> bf16[M] {\n  return sum(x, axis=1)\n}\n");
    assert_int_equal(out_node(g, 0)->dtype, IR_BF16); /* accumulation in f32 is the backend's */
    ir_graph_free(g);
}

static void test_shape_ops(void **st) {
    (void)st;
    ir_graph *g = compile(
        "fn f(x: f32[B, 32, 16], a: f32[2, 3], b: f32[2, 5], v: f32[3]) -> (f32[B, 512], f32[B, "
        "16, 32], "
        "f32[16, B, 32], f32[2, 8], f32[2, 2], f32[4, 3], f32[B, 2, 16], f32[B, 32, 16]) {\n"
        "  r = reshape(x, (B, -1)); t = transpose(x, -1, -2); p = permute(x, (2, 0, 1))\n"
        "  c = concat((a, b), axis=-1); s = slice(b, axis=1, start=-2); bc = broadcast_to(v, (4, "
        "3))\n"
        "  return r, t, p, c, s, bc, slice(x, axis=1, start=3, stop=5), reshape(reshape(x, (B, "
        "-1)), (-1, 32, "
        "16))\n}\n");
    assert_string_equal(shape_s(g, out_node(g, 0)), "[B, 512]");
    const ir_node *t = out_node(g, 1);
    assert_int_equal(t->op, IR_OP_PERMUTE);
    assert_int_equal(t->a.perm[0], 0);
    assert_int_equal(t->a.perm[1], 2);
    assert_int_equal(t->a.perm[2], 1);
    assert_int_equal(out_node(g, 2)->a.perm[0], 2);
    const ir_node *c = out_node(g, 3);
    assert_int_equal(c->op, IR_OP_CONCAT);
    assert_int_equal(c->a.axis, 1);
    assert_int_equal(c->shape.dim[1], 8);
    const ir_node *s = out_node(g, 4);
    assert_int_equal(s->a.slice.start, 3);
    assert_int_equal(s->a.slice.stop, 5);
    assert_int_equal(out_node(g, 5)->op, IR_OP_BROADCAST);
    assert_int_equal(out_node(g, 6)->a.slice.start, 3);
    assert_string_equal(shape_s(g, out_node(g, 7)), "[B, 32, 16]");
    ir_graph_free(g);
}

static void test_matmul_where(void **st) {
    (void)st;
    ir_graph *g =
        compile("fn ones() {\n  return broadcast_to(1.0, (1, 4))\n}\n"
                "fn f(a: bf16[H, M, K], b: bf16[K, N], c: bool[M, 1], i: i32[K, N]) -> "
                "(bf16[H, M, N], f32[H, M, N], f32[M, 4]) {\n"
                "  p = a @ b\n  return p, matmul(f32(a), i), where(c, 1.0, 0.0) * ones()\n}\n");
    const ir_node *p = out_node(g, 0);
    assert_int_equal(p->op, IR_OP_MATMUL);
    assert_string_equal(shape_s(g, p), "[H, M, N]");
    const ir_node *q = out_node(g, 1);
    assert_int_equal(q->dtype, IR_F32);
    assert_int_equal(in_node(g, q, 1)->op, IR_OP_CAST); /* i32 operand cast to f32 */
    const ir_node *w = in_node(g, out_node(g, 2), 0);
    assert_int_equal(w->op, IR_OP_WHERE);
    assert_int_equal(w->dtype, IR_F32);
    assert_string_equal(shape_s(g, w), "[M, 1]");
    ir_graph_free(g);
}

/* Every builder runs at every position relative to the node array's growth
 * (the array moves when it grows; under ASan a stale pointer would show). */
static void test_builders_across_growth(void **st) {
    (void)st;
    for (int pad = 0; pad < 70; pad++) {
        char src[8192];
        size_t k = (size_t)snprintf(
            src, sizeof src,
            "fn f(x: f32[2, 3], y: f32[3, 2]) -> (f32[3, 2], f32[2]) {\n  a = x\n");
        for (int i = 0; i < pad; i++)
            k += (size_t)snprintf(src + k, sizeof src - k, "  a = a + 1\n");
        snprintf(
            src + k, sizeof src - k,
            "  t = transpose(a, 0, 1); p = permute(a, (1, 0)); r = reshape(a, (3, 2)); m = a @ y\n"
            "  s = sum(m, axis=1); c = concat((t, p), axis=0); sl = slice(c, axis=0, start=1, "
            "stop=4)\n"
            "  b = broadcast_to(s, (3, 2)); w = where(a > 0, a, -a)\n"
            "  return t + p + r + sl - b + transpose(w, 0, 1), s + exp(s)\n}\n");
        ir_graph *g = compile(src);
        const ir_node *o = out_node(g, 0);
        assert_string_equal(shape_s(g, o), "[3, 2]");
        for (uint32_t i = 0; i < g->n; i++)
            if (g->nodes[i].op == IR_OP_PERMUTE) {
                assert_int_equal(g->nodes[i].a.perm[0], 1);
                assert_int_equal(g->nodes[i].a.perm[1], 0);
            }
        ir_graph_free(g);
    }
}

static void test_unused_and_casts(void **st) {
    (void)st;
    ir_graph *g = compile("fn f(x: f32[N], y: f32[N]) -> bf16[N] {\n"
                          "  dead = exp(y)\n  z = f32(x)\n  return bf16(z) + 0\n}\n");
    assert_int_equal(count_op(g, IR_OP_EXP), 0);   /* unused values are dropped */
    assert_int_equal(count_op(g, IR_OP_INPUT), 2); /* inputs stay */
    assert_int_equal(count_op(g, IR_OP_CAST), 1);  /* f32(x) of f32 is x */
    assert_int_equal(out_node(g, 0)->dtype, IR_BF16);
    ir_graph_free(g);
    g = compile("fn f(x: i32[4]) -> (i32[4], f16[]) {\n  return x * i32(-2.7), f16(true)\n}\n");
    assert_true(in_node(g, out_node(g, 0), 1)->a.cval == -2.0);
    assert_int_equal(in_node(g, out_node(g, 0), 1)->dtype, IR_I32);
    assert_true(out_node(g, 1)->a.cval == 1.0);
    ir_graph_free(g);
    expect_error("fn f(x: i32[4]) -> i32[4] {\n  return x * i32(3e9)\n}\n",
                 "t.tx:2:18: error: float literal 3e+09 does not fit in i32");
}

static void test_errors(void **st) {
    (void)st;
    const char *H =
        "fn f(x: f32[M, N], v: f32[N], i: i32[N], m: bool[M, N]) -> f32[M, N] {\n  return ";
    struct {
        const char *body, *msg;
    } cases[] = {
        {"x + foo", "t.tx:2:14: error: unknown name 'foo'"},
        {"softmax(x, -1)", "t.tx:2:10: error: 'softmax' takes 1 positional argument, got 2; pass "
                           "axis by keyword (axis=...)"},
        {"layernorm(x, v)", "t.tx:2:10: error: 'layernorm' takes 3 positional arguments, got 2"},
        {"rmsnorm(x, w=v, epsilon=1)",
         "t.tx:2:26: error: 'rmsnorm' has no keyword argument 'epsilon'"},
        {"rmsnorm(x, v, x=x)", "t.tx:2:24: error: 'rmsnorm' got several values for 'x'"},
        {"exp(x, x)", "t.tx:2:10: error: 'exp' takes 1 positional argument, got 2"},
        {"where(m, x)", "t.tx:2:10: error: 'where' takes 3 positional arguments, got 2"},
        {"where(x, x, v)", "t.tx:2:16: error: where condition must be bool, got f32"},
        {"where(1, x, v)", "t.tx:2:16: error: where condition must be bool, got i32"},
        {"x + reshape(v, (1, N, 1))",
         "t.tx:2:12: error: cannot broadcast f32[M, N] with f32[1, N, 1]"},
        {"x @ v", "t.tx:2:14: error: matmul needs operands of rank >= 2, got f32[N]"},
        {"x @ x", "t.tx:2:12: error: matmul inner dims differ: f32[M, N] @ f32[M, N]"},
        {"sum(x, axis=2)", "t.tx:2:22: error: axis 2 out of range for rank 2"},
        {"sum(x, axis=(0, -2))", "t.tx:2:26: error: duplicate axis -2"},
        {"sum(x, axis=1.5)", "t.tx:2:22: error: axis must be an integer literal"},
        {"transpose(x, 0, 2)", "t.tx:2:26: error: axis 2 out of range for rank 2"},
        {"permute(x, (0, 0))", "t.tx:2:25: error: duplicate axis 0"},
        {"reshape(x, (-1, -1))", "t.tx:2:26: error: only one dim can be -1"},
        {"reshape(x, (M, 0))", "t.tx:2:25: error: dims must be positive or -1, got 0"},
        {"reshape(v, (N, 2))",
         "t.tx:2:21: error: cannot reshape f32[N] to f32[N, 2]: element counts differ"},
        {"reshape(x, (M, 3, -1))", "t.tx:2:21: error: cannot reshape f32[M, N]: its element count "
                                   "is not a multiple of the other dims"},
        {"broadcast_to(v, (3, 4))", "t.tx:2:10: error: cannot broadcast f32[N] to [3, 4]"},
        {"slice(x, axis=1, start=-1)",
         "t.tx:2:10: error: slice of symbolic dim 'N' needs non-negative start and stop"},
        {"concat((x, v))",
         "t.tx:2:21: error: concat: f32[N] does not match f32[M, N] outside axis 0"},
        {"concat((x, x), axis=0)",
         "t.tx:2:18: error: concat along symbolic dim 'M' is not supported"},
        {"x * N", "t.tx:2:14: error: 'N' is a symbolic dim, not a value; a dim name stands alone "
                  "as an entry of "
                  "a shape tuple (for a product such as B * S write -1: it is inferred)"},
        {"x * (1, 2)", "t.tx:2:14: error: expected a tensor, got a tuple"},
        {"x * exp", "t.tx:2:14: error: 'exp' is a function; call it as exp(...)"},
        {"bool(x)",
         "t.tx:2:10: error: 'bool' is a dtype, not a function (compare instead: x != 0)"},
        {"_as_dtype(x, v)", "t.tx:2:10: error: unknown function '_as_dtype'"},
        {"i + 2147483648", "t.tx:2:14: error: integer literal 2147483648 does not fit in i32"},
        {"x * 1e39", "t.tx:2:14: error: literal 1e+39 is out of range for f32"},
        {"x * (9223372036854775807 + 1)",
         "t.tx:2:35: error: integer overflow in constant expression"},
        {"x * 2 ** 64", "t.tx:2:16: error: integer overflow in constant expression"},
        {"x * (1.0 / 0)", "t.tx:2:19: error: division by zero in constant expression"},
        {"f16(x) * 70000", "t.tx:2:19: error: literal 70000 is out of range for f16"},
        {"sum(m, keepdim=1)", "t.tx:2:25: error: keepdim must be true or false"},
        {"x @ m", "t.tx:2:12: error: matmul inner dims differ: f32[M, N] @ bool[M, N]"},
        {"i32(x) > 0.5 * x + i",
         "t.tx:2:17: error: return value 0 is bool[M, N], declared f32[M, N]"},
        {"x, x", "t.tx:2:3: error: 'f' returns 2 values, declared 1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char src[1024];
        snprintf(src, sizeof src, "%s%s\n}\n", H, cases[k].body);
        expect_error(src, cases[k].msg);
    }
}

static void test_program_errors(void **st) {
    (void)st;
    expect_error(
        "fn f(x) {\n  return g(x)\n}\nfn g(x) {\n  return h(x)\n}\nfn h(x) {\n  return f(x)\n}\n"
        "fn main(x: f32[4]) -> f32[4] {\n  return f(x)\n}\n",
        "t.tx:2:10: error: recursion: 'f' calls itself through 'g' -> 'h'");
    expect_error("fn unused(x) {\n  return unused(x) + 1\n}\nfn main(x: f32[4]) -> f32[4] {\n  "
                 "return x\n}\n",
                 "t.tx:2:10: error: recursion: 'unused' calls itself");
    expect_error("fn softmax(x) {\n  return x\n}\n",
                 "t.tx:1:4: error: 'softmax' is a built-in function and cannot name a function");
    expect_error("fn i32(x) {\n  return x\n}\n",
                 "t.tx:1:4: error: 'i32' is a dtype and cannot name a function");
    expect_error("fn f(x: f32[4], relu: f32[4]) -> f32[4] {\n  return x\n}\n",
                 "t.tx:1:17: error: 'relu' is a built-in function and cannot name a parameter");
    expect_error("fn f(x: f32[4], y, x) -> f32[4] {\n  return x\n}\n",
                 "t.tx:1:20: error: duplicate parameter 'x'");
    expect_error("fn f(x: f32[4]) -> f32[4] {\n  y = x\n}\n",
                 "t.tx:1:4: error: missing return in function 'f'");
    expect_error("fn f(x: f32[4]) -> f32[4] {\n}\n",
                 "t.tx:1:4: error: missing return in function 'f'");
    expect_error("fn f(x: f32[4], y) -> f32[4] {\n  return x\n}\n",
                 "t.tx:1:17: error: parameter 'y' of entry function 'f' needs a type");
    expect_error("fn f(x: f32[4]) -> bf16[4] {\n  return x\n}\n",
                 "t.tx:2:10: error: return value 0 is f32[4], declared bf16[4]");
    expect_error("fn f(x: f32[M]) -> f32[N] {\n  return x\n}\n",
                 "t.tx:1:24: error: unknown dim 'N': no parameter of 'f' has it");
    expect_error("fn f(x: f32[1, 1, 1, 1, 1, 1, 1, 1, 1]) -> f32[] {\n  return sum(x)\n}\n",
                 "t.tx:1:9: error: rank 9 exceeds the limit of 8");
    expect_error(
        "fn f(x: f32[4]) -> f32[4] {\n  return reshape(x, (1, 1, 1, 1, 1, 1, 1, 1, 4))\n}\n",
        "t.tx:2:21: error: rank 9 exceeds the limit of 8");
    expect_error(
        "fn f(x: f32[2147483648, 2147483648]) -> f32[] {\n  return sum(x)\n}\n",
        "t.tx:1:9: error: f32[2147483648, 2147483648] has too many elements (the limit is 2^62)");
    expect_error(
        "fn f(a: f32[3037000500, 1], b: f32[1, 3037000500]) -> f32[] {\n  return sum(a @ b)\n}\n",
        "t.tx:2:16: error: f32[3037000500, 3037000500] has too many elements (the limit is 2^62)");
    expect_error(
        "fn two(x) {\n  return x, x\n}\nfn f(x: f32[4]) -> f32[4] {\n  y = two(x)\n  return y\n}\n",
        "t.tx:5:7: error: 'two' returns 2 values; unpack them with 'a, b = two(...)'");
    expect_error("fn f(x: f32[4]) -> f32[4] {\n  a, b = x\n  return a\n}\n",
                 "t.tx:2:10: error: cannot unpack one value into 2 names");
    expect_error("fn f(x: f32[4]) -> f32[4] {\n  sum = x\n  return sum\n}\n",
                 "t.tx:2:3: error: cannot assign to 'sum': it names a built-in function");
    expect_error("fn g(x, k=1) {\n  return x\n}\nfn f(x: f32[4]) -> f32[4] {\n  return g(x)\n}\n",
                 "t.tx:1:9: error: parameter 'k' cannot have a default value");
    expect_error(
        "fn g(x, y) {\n  return x\n}\nfn f(x: f32[4]) -> f32[4] {\n  return g(x, z=x)\n}\n",
        "t.tx:5:15: error: 'g' has no keyword argument 'z'");
    expect_error("fn g(x, y) {\n  return x\n}\nfn f(x: f32[4]) -> f32[4] {\n  return g(y=x)\n}\n",
                 "t.tx:5:10: error: 'g' missing argument 'x'");
    expect_error(
        "fn f(x: f32[4]) -> f32[4] {\n  return x\n}\nfn f(x: f32[4]) -> f32[4] {\n  return x\n}\n",
        "t.tx:4:4: error: redefinition of function 'f'");
    expect_error("fn f(x: f32[0]) -> f32[4] {\n  return x\n}\n",
                 "t.tx:1:13: error: dims must be positive, got 0");
    expect_error("", "t.tx:1:1: error: empty file (no functions)");
    expect_error("\n# only a comment\n", "t.tx:1:1: error: empty file (no functions)");
}

/* Compiling src must fail with a message containing `want`. */
static void expect_error_containing(const char *src, const char *want) {
    cap c;
    cap_open(&c, "t.tx", src, strlen(src));
    ir_graph *g = fe_compile("t.tx", src, strlen(src), NULL, &c.d);
    if (g || !strstr(cap_text(&c), want))
        fprintf(stderr, "got: %.300s\nwant: %s\n", cap_text(&c), want);
    assert_null(g);
    assert_non_null(strstr(cap_text(&c), want));
    assert_int_equal(c.d.errors, 1);
    cap_close(&c);
}

/* Inlining limits: call chains deeper than 256, nesting summed through
 * helpers, and exponential expansion all end in an error, quickly. */
static void test_inline_limits(void **st) {
    (void)st;
    size_t room = 1 << 20, k = 0;
    char *src = malloc(room);
    k += (size_t)snprintf(src + k, room - k, "fn h0(x) {\n  return x + 1\n}\n");
    for (int i = 1; i <= 300; i++)
        k += (size_t)snprintf(src + k, room - k, "fn h%d(x) {\n  return h%d(x)\n}\n", i, i - 1);
    snprintf(src + k, room - k, "fn main(x: f32[4]) -> f32[4] {\n  return h300(x)\n}\n");
    expect_error_containing(src, "error: helper calls nested deeper than 256");
    /* 250 levels of nesting in each of 10 helpers */
    k = (size_t)snprintf(src, room, "fn g(x) {\n  return x\n}\nfn h0(x) {\n  return x\n}\n");
    for (int i = 1; i <= 10; i++) {
        k += (size_t)snprintf(src + k, room - k, "fn h%d(x) {\n  return ", i);
        for (int j = 0; j < 250; j++) k += (size_t)snprintf(src + k, room - k, "g(");
        k += (size_t)snprintf(src + k, room - k, "h%d(x)", i - 1);
        for (int j = 0; j < 250; j++) k += (size_t)snprintf(src + k, room - k, ")");
        k += (size_t)snprintf(src + k, room - k, "\n}\n");
    }
    snprintf(src + k, room - k, "fn main(x: f32[4]) -> f32[4] {\n  return h10(x)\n}\n");
    expect_error_containing(src, "error: nesting depth through helper calls exceeds 2048");
    /* each helper calls the previous twice: 2^30 operations if unchecked */
    k = (size_t)snprintf(src, room, "fn h0(x) {\n  y = x + 1\n  return y\n}\n");
    for (int i = 1; i <= 30; i++)
        k += (size_t)snprintf(src + k, room - k, "fn h%d(x) {\n  a = h%d(x)\n  return h%d(a)\n}\n",
                              i, i - 1, i - 1);
    snprintf(src + k, room - k, "fn main(x: f32[4]) -> f32[4] {\n  return h30(x)\n}\n");
    expect_error_containing(src,
                            "error: program too large: more than 262144 operations after inlining");
    free(src);
}

/* fe_compile must reject len bytes with NULs, bad UTF-8, and cope with a
 * source that is not NUL-terminated. */
static void test_bytes(void **st) {
    (void)st;
    cap c;
    const char bin[] = "fn f(x: f32[4]) -> f32[4] {\n  return x\0\n}\n";
    cap_open(&c, "b.tx", bin, sizeof bin - 1);
    assert_null(fe_compile("b.tx", bin, sizeof bin - 1, NULL, &c.d));
    assert_true(
        !strncmp(cap_text(&c), "b.tx:2:11: error: binary file: NUL byte in the source\n", 54));
    cap_close(&c);
    const char src[] = "fn f(x: f32[4]) -> f32[4] {\n  return x\n}\nGARBAGE";
    size_t len = sizeof src - 1 - 7; /* not NUL-terminated at len */
    cap_open(&c, "c.tx", src, len);
    ir_graph *g = fe_compile("c.tx", src, len, NULL, &c.d);
    assert_non_null(g);
    ir_graph_free(g);
    cap_close(&c);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

/* Every tests/errors/NAME.tx without NAME.args: fe_compile fails and
 * writes exactly NAME.expected (the same check errors.sh makes through txc). */
static void test_golden_errors(void **st) {
    (void)st;
    DIR *dir = opendir("tests/errors");
    if (!dir) skip();
    struct dirent *de;
    unsigned n = 0;
    while ((de = readdir(dir))) {
        size_t k = strlen(de->d_name);
        if (k < 4 || strcmp(de->d_name + k - 3, ".tx")) continue;
        char path[600], base[300];
        snprintf(base, sizeof base, "%.*s", (int)(k - 3), de->d_name);
        struct stat sb;
        snprintf(path, sizeof path, "tests/errors/%s.args", base);
        if (!stat(path, &sb)) continue;
        size_t len = 0, elen = 0;
        snprintf(path, sizeof path, "tests/errors/%s", de->d_name);
        char *src = read_file(path, &len);
        snprintf(path, sizeof path, "tests/errors/%s.expected", base);
        char *want = read_file(path, &elen);
        assert_non_null(src);
        assert_non_null(want);
        cap c;
        cap_open(&c, de->d_name, src, len);
        ir_graph *g = fe_compile(de->d_name, src, len, NULL, &c.d);
        const char *got = cap_text(&c);
        if (g || strcmp(got, want))
            fprintf(stderr, "%s: got\n%s\nwant\n%s\n", de->d_name, got, want);
        assert_null(g);
        assert_string_equal(got, want);
        cap_close(&c);
        free(src);
        free(want);
        n++;
    }
    closedir(dir);
    assert_true(n >= 50);
}

/* Compiles one benchmark program without and with its "bench: -D ..." bindings. */
static void compile_bench(const char *path) {
    size_t len = 0;
    char *src = read_file(path, &len);
    assert_non_null(src);
    cap c;
    cap_open(&c, path, src, len);
    ir_graph *g = fe_compile(path, src, len, NULL, &c.d);
    if (!g) fprintf(stderr, "%s", cap_text(&c));
    assert_non_null(g);
    assert_true(ir_verify(g, stderr));
    ir_graph_free(g);
    fe_define defs[8];
    char names[8][32];
    unsigned nd = 0;
    for (const char *p = strstr(src, "-D "); p && nd < 8; p = strstr(p + 3, "-D ")) {
        long long v;
        if (sscanf(p + 3, "%31[A-Za-z_]=%lld", names[nd], &v) == 2) {
            defs[nd].name = names[nd];
            defs[nd++].value = v;
        }
    }
    assert_true(nd > 0);
    fe_options o = {.defines = defs, .ndefines = nd};
    g = fe_compile(path, src, len, &o, &c.d);
    if (!g) fprintf(stderr, "%s", cap_text(&c));
    assert_non_null(g);
    assert_true(ir_verify(g, stderr));
    for (uint32_t i = 0; i < g->n; i++) assert_true(ir_shape_is_concrete(&g->nodes[i].shape));
    for (uint32_t i = 0; i < g->nsyms; i++) assert_true(g->syms[i].value > 0);
    ir_graph_free(g);
    cap_close(&c);
    free(src);
}

static void test_bench_suite(void **st) {
    (void)st;
    const char *dirs[] = {"../shared/bench/suite", "/work/shared/bench/suite"};
    DIR *dir = NULL;
    const char *base = NULL;
    for (int i = 0; i < 2 && !dir; i++) dir = opendir(base = dirs[i]);
    if (!dir) skip();
    struct dirent *de;
    unsigned n = 0;
    while ((de = readdir(dir))) {
        size_t k = strlen(de->d_name);
        if (k < 4 || strcmp(de->d_name + k - 3, ".tx")) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", base, de->d_name);
        compile_bench(path);
        n++;
    }
    closedir(dir);
    assert_true(n > 0);
}

/* Mutated programs (bytes replaced, inserted, cut) never crash: each
 * either compiles to a verified graph or reports exactly one error. */
static void test_mutations(void **st) {
    (void)st;
    const char *seed =
        "fn g(a, b) {\n  return a * sigmoid(b), a\n}\n"
        "fn f(x: bf16[M, N], w: bf16[N], k: f32[N, 4]) -> (bf16[M, N], f32[M, 4]) {\n"
        "  h, u = g(x + w, x)\n  y = rmsnorm(h, w, eps=1e-6); z = softmax(f32(u), axis=-1) @ k\n"
        "  return bf16(where(h > 0, h, -h ** 2)), reshape(sum(z, axis=(0,), keepdim=true), (1, 4)) "
        "+ z\n}\n";
    const char alphabet[] = "()[]{},:;=+-*/@<>!#.\n\t 0123456789aexyzfn_\x80\xc3";
    size_t n = strlen(seed);
    char *buf = malloc(2 * n + 8);
    uint64_t r = 0x9E3779B97F4A7C15ull;
    unsigned compiled = 0;
    for (int it = 0; it < 1500; it++) {
        memcpy(buf, seed, n);
        size_t len = n;
        int edits = 1 + it % 3;
        for (int e = 0; e < edits; e++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            size_t pos = (size_t)(r >> 33) % len;
            char ch = alphabet[(r >> 20) % (sizeof alphabet - 1)];
            switch ((r >> 10) % 3) {
                case 0: buf[pos] = ch; break;
                case 1:
                    memmove(buf + pos + 1, buf + pos, len - pos);
                    buf[pos] = ch;
                    len++;
                    break;
                default: len = pos + 1; break;
            }
        }
        cap c;
        cap_open(&c, "m.tx", buf, len);
        ir_graph *g = fe_compile("m.tx", buf, len, NULL, &c.d);
        if (g) {
            assert_true(ir_verify(g, stderr));
            assert_int_equal(c.d.errors, 0);
            compiled++;
            ir_graph_free(g);
        } else {
            assert_int_equal(c.d.errors, 1);
            assert_non_null(strstr(cap_text(&c), "error: "));
        }
        cap_close(&c);
    }
    free(buf);
    assert_true(compiled > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_relu_structure),
        cmocka_unit_test(test_defines_bind),
        cmocka_unit_test(test_entry_selection),
        cmocka_unit_test(test_weak_literals),
        cmocka_unit_test(test_promotion_and_folding),
        cmocka_unit_test(test_helpers_inlined),
        cmocka_unit_test(test_typed_helper),
        cmocka_unit_test(test_softmax_expands),
        cmocka_unit_test(test_norms_compute_in_f32),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_shape_ops),
        cmocka_unit_test(test_matmul_where),
        cmocka_unit_test(test_unused_and_casts),
        cmocka_unit_test(test_builders_across_growth),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_program_errors),
        cmocka_unit_test(test_inline_limits),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_golden_errors),
        cmocka_unit_test(test_bench_suite),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
