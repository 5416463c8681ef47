/* test_parser.c - the grammar: functions, parameters and types, statements,
 * operator precedence and associativity (checked through the S-expression
 * printer), tuples and keyword arguments, syntax errors and nesting limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/frontend.h"

#include "tests/unit/testkit.h"

/* Parses src; on success returns the program (arena a). */
static bool parse(fe_arena *a, cap *c, const char *src, fe_program *p) {
    memset(p, 0, sizeof *p);
    cap_open(c, "t.tx", src, strlen(src));
    return fe_parse(a, src, strlen(src), false, p, &c->d);
}

/* The S-expression of the expression `e` as the single return value of a function. */
static char *sexpr(const char *expr) {
    char src[4096];
    snprintf(src, sizeof src, "fn f(a, b, c, x, y) {\n  return %s\n}\n", expr);
    fe_arena a = {0};
    cap c;
    fe_program p;
    bool ok = parse(&a, &c, src, &p);
    if (!ok) fprintf(stderr, "%s", cap_text(&c));
    assert_true(ok);
    cap_close(&c);
    assert_int_equal(p.nfuncs, 1);
    assert_int_equal(p.funcs[0]->nbody, 1);
    assert_int_equal(p.funcs[0]->body[0]->kind, FE_S_RETURN);
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    fe_expr_print(p.funcs[0]->body[0]->vals[0], f);
    fclose(f);
    fe_arena_free(&a);
    return buf;
}

static void expect_sexpr(const char *expr, const char *want) {
    char *got = sexpr(expr);
    if (strcmp(got, want)) fprintf(stderr, "%s -> %s (want %s)\n", expr, got, want);
    assert_string_equal(got, want);
    free(got);
}

static void test_precedence(void **st) {
    (void)st;
    expect_sexpr("a + b * c", "(+ a (* b c))");
    expect_sexpr("a - b - c", "(- (- a b) c)");
    expect_sexpr("a / b * c", "(* (/ a b) c)");
    expect_sexpr("a @ b * c", "(* (@ a b) c)");
    expect_sexpr("a + b @ c", "(+ a (@ b c))");
    expect_sexpr("-x ** 2", "(neg (** x 2))");
    expect_sexpr("-a * b", "(* (neg a) b)");
    expect_sexpr("a ** b ** c", "(** a (** b c))");
    expect_sexpr("2 ** -1", "(** 2 (neg 1))");
    expect_sexpr("a < b + c", "(< a (+ b c))");
    expect_sexpr("a + b == c * x", "(== (+ a b) (* c x))");
    expect_sexpr("(a + b) * c", "(* (+ a b) c)");
    expect_sexpr("- - a", "(neg (neg a))");
    expect_sexpr("exp(a) ** 2", "(** (call exp a) 2)");
}

static void test_atoms_calls_tuples(void **st) {
    (void)st;
    expect_sexpr("1.5e-3 * true", "(* 0.0015 true)");
    expect_sexpr("sum(x, axis=(0, 1), keepdim=false)",
                 "(call sum x axis=(tuple 0 1) keepdim=false)");
    expect_sexpr("reshape(x, (-1,))", "(call reshape x (tuple (neg 1)))");
    expect_sexpr("reshape(x, (B, 32, 16))", "(call reshape x (tuple B 32 16))");
    expect_sexpr("concat((a, b, c,), axis=0)", "(call concat (tuple a b c) axis=0)");
    expect_sexpr("reshape(x, ())", "(call reshape x (tuple))");
    expect_sexpr("f()", "(call f)");
    expect_sexpr("where(a > 0,\n  a,\n  b,\n)", "(call where (> a 0) a b)");
}

static void test_functions(void **st) {
    (void)st;
    const char *src = "# helper\n"
                      "fn two(x) { return x, x * 2 }\n"
                      "\n"
                      "fn main(x: f32[B, 16], s: f32[], m: bool[N]) -> (f32[B, 16], f32[B, 16]) {\n"
                      "  a, b = two(x); c = a + s\n"
                      "\n"
                      "  return c, b  # done\n"
                      "}\n"
                      "fn last(y: i32[4]) -> i32[4]\n{\n  return y\n}";
    fe_arena a = {0};
    cap c;
    fe_program p;
    assert_true(parse(&a, &c, src, &p));
    assert_int_equal(p.nfuncs, 3);
    const fe_func *two = p.funcs[0], *m = p.funcs[1];
    assert_string_equal(two->name, "two");
    assert_int_equal(two->nparams, 1);
    assert_null(two->params[0].type);
    assert_int_equal(two->nrets, 0);
    assert_int_equal(two->body[0]->nvals, 2);
    assert_false(two->prelude);
    assert_string_equal(m->name, "main");
    assert_int_equal(m->loc.line, 4);
    assert_int_equal(m->loc.col, 4);
    assert_int_equal(m->nparams, 3);
    const fe_type *t0 = m->params[0].type;
    assert_int_equal(t0->dtype, IR_F32);
    assert_int_equal(t0->rank, 2);
    assert_string_equal(t0->dims[0].name, "B");
    assert_null(t0->dims[1].name);
    assert_int_equal(t0->dims[1].value, 16);
    assert_int_equal(m->params[1].type->rank, 0);
    assert_int_equal(m->params[2].type->dtype, IR_BOOL);
    assert_int_equal(m->nrets, 2);
    assert_true(m->ret_tuple);
    assert_int_equal(m->nbody, 3);
    assert_int_equal(m->body[0]->kind, FE_S_ASSIGN);
    assert_int_equal(m->body[0]->nnames, 2);
    assert_string_equal(m->body[0]->names[0], "a");
    assert_string_equal(m->body[0]->names[1], "b");
    assert_int_equal(m->body[0]->name_locs[1].col, 6);
    assert_string_equal(m->body[1]->names[0], "c");
    assert_int_equal(m->body[2]->kind, FE_S_RETURN);
    assert_int_equal(m->body[2]->nvals, 2);
    assert_int_equal(p.funcs[2]->nrets, 1);
    assert_false(p.funcs[2]->ret_tuple);
    cap_close(&c);
    fe_arena_free(&a);
}

/* A return type may start on a new line: newlines and comments between `)` and `->` and
 * between `->` and the type (a single type or a tuple). */
static void test_return_type_lines(void **st) {
    (void)st;
    const char *src =
        "fn a(x: f32[N])\n  -> f32[N] {\n  return x\n}\n"
        "fn b(x: f32[N],\n     y: i32[N])  # two outputs\n"
        "  # on lines of their own\n  ->\n  (f32[N],\n   i32[N])\n{\n  return x, y\n}\n"
        "fn c(x: bf16[N]) ->\n\n  bf16[N]\n{\n  return x\n}\n";
    fe_arena a = {0};
    cap c;
    fe_program p;
    bool ok = parse(&a, &c, src, &p);
    if (!ok) fprintf(stderr, "%s", cap_text(&c));
    assert_true(ok);
    assert_int_equal(p.nfuncs, 3);
    assert_int_equal(p.funcs[0]->nrets, 1);
    assert_false(p.funcs[0]->ret_tuple);
    assert_int_equal(p.funcs[0]->rets[0]->dtype, IR_F32);
    assert_int_equal(p.funcs[1]->nrets, 2);
    assert_true(p.funcs[1]->ret_tuple);
    assert_int_equal(p.funcs[1]->rets[1]->dtype, IR_I32);
    assert_int_equal(p.funcs[1]->body[0]->loc.line, 12);
    assert_int_equal(p.funcs[2]->nrets, 1);
    assert_int_equal(p.funcs[2]->rets[0]->dtype, IR_BF16);
    cap_close(&c);
    fe_arena_free(&a);
}

static void test_prelude_defaults(void **st) {
    (void)st;
    fe_arena a = {0};
    fe_program p = {0};
    cap c;
    cap_open(&c, "t.tx", fe_prelude_src, fe_prelude_len);
    assert_true(fe_parse(&a, fe_prelude_src, fe_prelude_len, true, &p, &c.d));
    const char *names[] = {"softmax", "log_softmax", "layernorm", "rmsnorm"};
    assert_int_equal(p.nfuncs, 4);
    for (int i = 0; i < 4; i++) {
        assert_string_equal(p.funcs[i]->name, names[i]);
        assert_true(p.funcs[i]->prelude);
        assert_non_null(p.funcs[i]->params[p.funcs[i]->nparams - 1].dflt);
    }
    cap_close(&c);
    fe_arena_free(&a);
}

static void expect_error(const char *src, const char *msg) {
    fe_arena a = {0};
    cap c;
    fe_program p;
    assert_false(parse(&a, &c, src, &p));
    const char *out = cap_text(&c);
    if (strncmp(out, msg, strlen(msg))) fprintf(stderr, "got: %s\nwant: %s\n", out, msg);
    assert_true(!strncmp(out, msg, strlen(msg)));
    cap_close(&c);
    fe_arena_free(&a);
}

static void test_syntax_errors(void **st) {
    (void)st;
    expect_error("fn f(x) {\n  y = x +* 2\n  return y\n}\n", "t.tx:2:10: error: unexpected '*'\n");
    expect_error("fn f(x) {\n  return exp(x\n}\n", "t.tx:3:1: error: expected ')', found '}'\n");
    expect_error("fn f(a, b, c) {\n  return a < b < c\n}\n",
                 "t.tx:2:16: error: comparisons cannot be chained; use parentheses\n");
    expect_error("fn f(x) {\n  return sum(x, axis=1, x)\n}\n",
                 "t.tx:2:25: error: positional argument after keyword argument\n");
    expect_error("fn f(x: f64[N]) {\n  return x\n}\n",
                 "t.tx:1:9: error: unknown dtype 'f64' (expected f32, f16, bf16, i32 or bool): tx "
                 "has no 64-bit types: f32\n");
    expect_error("fn f(x) {\n  return\n}\n", "t.tx:2:9: error: unexpected newline\n");
    expect_error("fn f(x) -> f32[N]\n  return x\n}\n",
                 "t.tx:2:3: error: expected newline or '{', found 'return'\n");
    expect_error("fn f(x)\n  f32[N] {\n  return x\n}\n",
                 "t.tx:2:3: error: expected '->', newline or '{', found 'f32'\n");
    expect_error("fn f(x) ->\n  {\n  return x\n}\n",
                 "t.tx:2:3: error: expected newline, name or '(', found '{'\n");
    expect_error("x = 1\n", "t.tx:1:1: error: expected end of file, 'fn' or newline, found 'x'\n");
    expect_error("fn f(x) {\n  f(x)\n}\n", "t.tx:2:4: error: expected ',' or '=', found '('\n");
}

/* Returns "fn f(x) {\n  return OPS x\n}" with `n` copies of `op`. */
static char *repeat_src(const char *op, int n, const char *tail) {
    size_t k = strlen(op);
    char *s = malloc(64 + (size_t)n * k + strlen(tail) * (size_t)n);
    size_t w = (size_t)sprintf(s, "fn f(x) {\n  return ");
    for (int i = 0; i < n; i++) w += (size_t)sprintf(s + w, "%s", op);
    w += (size_t)sprintf(s + w, "x");
    for (int i = 0; i < n; i++) w += (size_t)sprintf(s + w, "%s", tail);
    sprintf(s + w, "\n}\n");
    return s;
}

static void test_nesting(void **st) {
    (void)st;
    fe_arena a = {0};
    cap c;
    fe_program p;
    char *s = repeat_src("(", 256, ")");
    assert_true(parse(&a, &c, s, &p));
    cap_close(&c);
    free(s);
    s = repeat_src("-", 256, "");
    assert_true(parse(&a, &c, s, &p));
    assert_int_equal(p.funcs[0]->body[0]->vals[0]->depth, 256);
    cap_close(&c);
    free(s);
    s = repeat_src("(", 257, ")");
    expect_error(s, "t.tx:2:266: error: nesting depth exceeds the limit of 256\n");
    free(s);
    s = repeat_src("-", 257, "");
    expect_error(s, "t.tx:2:10: error: nesting depth exceeds the limit of 256\n");
    free(s);
    s = repeat_src("x ** ", 300, "");
    expect_error(s, "t.tx:2:");
    free(s);
    s = repeat_src("-", 100000, ""); /* the parser stack overflows first: still an error */
    expect_error(s, "t.tx:2:");
    assert_non_null(s);
    free(s);
    s = repeat_src("f(", 300, ")");
    expect_error(s, "t.tx:2:");
    free(s);
    /* a long flat chain is nesting too: each operator is one level */
    s = repeat_src("x + ", 400, "");
    expect_error(s, "t.tx:2:");
    free(s);
    fe_arena_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),       cmocka_unit_test(test_atoms_calls_tuples),
        cmocka_unit_test(test_functions),        cmocka_unit_test(test_return_type_lines),
        cmocka_unit_test(test_prelude_defaults), cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
