/* test_lexer.c - the scanner: tokens, values, locations (tabs are one
 * column), newline handling inside brackets, lexical errors, and the byte
 * checks (NUL, UTF-8, empty file) that run before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/frontend.h"

#include "tests/unit/testkit.h"

/* Scans src; returns the count (or -1) and the tokens. */
static int lex(fe_arena *a, cap *c, const char *src, fe_token **t) {
    cap_open(c, "t.tx", src, strlen(src));
    return fe_lex_all(a, src, strlen(src), &c->d, t);
}

static void test_kinds_and_text(void **st) {
    (void)st;
    fe_arena a = {0};
    cap c;
    fe_token *t;
    int n = lex(&a, &c, "fn f(x: f32[N]) -> f32[] { return -x ** 2 <= y, a != b; }", &t);
    const char *want[] = {
        "'fn'", "name", "'('", "name", "':'",  "name",     "'['", "name", "']'",        "')'",
        "'->'", "name", "'['", "']'",  "'{'",  "'return'", "'-'", "name", "'**'",       "integer",
        "'<='", "name", "','", "name", "'!='", "name",     "';'", "'}'",  "end of file"};
    int nw = (int)(sizeof want / sizeof *want);
    assert_int_equal(n, nw);
    for (int i = 0; i < nw; i++) assert_string_equal(t[i].name, want[i]);
    assert_string_equal(t[1].text, "f");
    assert_string_equal(t[5].text, "f32");
    assert_string_equal(t[7].text, "N");
    assert_int_equal(t[n - 1].kind, 0);
    assert_string_equal(cap_text(&c), "");
    cap_close(&c);
    fe_arena_free(&a);
}

static void test_numbers(void **st) {
    (void)st;
    fe_arena a = {0};
    cap c;
    fe_token *t;
    int n = lex(&a, &c, "0 42 2.5 1e-6 .5 3. 7E+2 true false 9223372036854775807", &t);
    assert_int_equal(n, 11);
    assert_string_equal(t[0].name, "integer");
    assert_int_equal(t[0].ival, 0);
    assert_int_equal(t[1].ival, 42);
    assert_string_equal(t[2].name, "float");
    assert_true(t[2].fval == 2.5);
    assert_true(t[3].fval == 1e-6);
    assert_true(t[4].fval == 0.5);
    assert_true(t[5].fval == 3.0);
    assert_string_equal(t[6].name, "float");
    assert_true(t[6].fval == 700.0);
    assert_string_equal(t[7].name, "'true'");
    assert_int_equal(t[7].ival, 1);
    assert_string_equal(t[8].name, "'false'");
    assert_int_equal(t[8].ival, 0);
    assert_int_equal(t[9].ival, INT64_MAX);
    cap_close(&c);
    fe_arena_free(&a);
}

static void test_locations_tabs_comments(void **st) {
    (void)st;
    fe_arena a = {0};
    cap c;
    fe_token *t;
    /* a tab is one column; comments vanish; each newline outside brackets is a token */
    int n = lex(&a, &c, "\tx # comment (\n  y\t=\t1\n", &t);
    assert_int_equal(n, 7);
    assert_string_equal(t[0].text, "x");
    assert_int_equal(t[0].loc.line, 1);
    assert_int_equal(t[0].loc.col, 2);
    assert_string_equal(t[1].name, "newline");
    assert_string_equal(t[2].text, "y");
    assert_int_equal(t[2].loc.line, 2);
    assert_int_equal(t[2].loc.col, 3);
    assert_string_equal(t[3].name, "'='");
    assert_int_equal(t[3].loc.col, 5);
    assert_int_equal(t[4].loc.col, 7);
    assert_string_equal(t[5].name, "newline");
    cap_close(&c);
    fe_arena_free(&a);
}

static void test_newlines_in_brackets(void **st) {
    (void)st;
    fe_arena a = {0};
    cap c;
    fe_token *t;
    int n = lex(&a, &c, "f(a,\n  b)\nz[1,\n2]\n", &t);
    int nl = 0;
    for (int i = 0; i < n; i++) nl += !strcmp(t[i].name, "newline");
    assert_int_equal(nl, 2);            /* only the ones after ')' and ']' */
    assert_int_equal(t[4].loc.line, 2); /* b */
    cap_close(&c);
    fe_arena_free(&a);
}

static void test_errors(void **st) {
    (void)st;
    struct {
        const char *src, *msg;
    } cases[] = {
        {"x = 99999999999999999999",
         "t.tx:1:5: error: integer literal 99999999999999999999 is out of range\n"},
        {"y = 1e999", "t.tx:1:5: error: float literal 1e999 is out of range\n"},
        {"a $ b", "t.tx:1:3: error: unexpected character '$'\n"},
        {"a\x01", "t.tx:1:2: error: unexpected character '\\x01'\n"},
        {"a = \xc3\xa9", "t.tx:1:5: error: unexpected non-ASCII character (only comments may hold "
                         "non-ASCII text)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fe_arena a = {0};
        cap c;
        fe_token *t;
        assert_int_equal(lex(&a, &c, cases[i].src, &t), -1);
        const char *out = cap_text(&c);
        assert_true(!strncmp(out, cases[i].msg, strlen(cases[i].msg)));
        cap_close(&c);
        fe_arena_free(&a);
    }
}

/* Builds "(((...x...)))" with `depth` brackets. */
static char *nested(int depth) {
    char *s = malloc((size_t)depth * 2 + 2);
    memset(s, '(', (size_t)depth);
    s[depth] = 'x';
    memset(s + depth + 1, ')', (size_t)depth);
    s[2 * depth + 1] = 0;
    return s;
}

/* A huge literal is named by its first 40 characters only. */
static void test_long_literal_message(void **st) {
    (void)st;
    size_t n = 100000;
    char *src = malloc(n + 8);
    memcpy(src, "x = ", 4);
    memset(src + 4, '9', n);
    src[n + 4] = 0;
    fe_arena a = {0};
    cap c;
    fe_token *t;
    assert_int_equal(lex(&a, &c, src, &t), -1);
    const char *out = cap_text(&c);
    assert_true(!strncmp(
        out,
        "t.tx:1:5: error: integer literal 9999999999999999999999999999999999999999... is out of "
        "range\n",
        87));
    assert_true(strlen(out) < 1000);
    cap_close(&c);
    fe_arena_free(&a);
    free(src);
}

static void test_bracket_depth(void **st) {
    (void)st;
    fe_arena a = {0};
    cap c;
    fe_token *t;
    char *ok = nested(256), *bad = nested(257);
    assert_int_equal(lex(&a, &c, ok, &t), 2 * 256 + 2);
    cap_close(&c);
    assert_int_equal(lex(&a, &c, bad, &t), -1);
    assert_true(
        !strncmp(cap_text(&c), "t.tx:1:257: error: nesting depth exceeds the limit of 256\n", 58));
    cap_close(&c);
    free(ok);
    free(bad);
    fe_arena_free(&a);
}

static void check_bytes(const char *src, size_t len, const char *msg) {
    cap c;
    cap_open(&c, "t.tx", src, len);
    bool ok = fe_check_bytes(src, len, &c.d);
    if (!msg) {
        assert_true(ok);
        assert_string_equal(cap_text(&c), "");
    } else {
        assert_false(ok);
        assert_true(!strncmp(cap_text(&c), msg, strlen(msg)));
    }
    cap_close(&c);
}

static void test_byte_checks(void **st) {
    (void)st;
    check_bytes("", 0, "t.tx:1:1: error: empty file (no functions)\n");
    check_bytes("ab\ncd\0e", 7, "t.tx:2:3: error: binary file: NUL byte in the source\n");
    check_bytes("# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n", 17, NULL);
    check_bytes("x\xff", 2, "t.tx:1:2: error: invalid UTF-8 (byte 0xff)\n");
    check_bytes("\xc0\x80", 2, "t.tx:1:1: error: invalid UTF-8 (byte 0xc0)\n");     /* overlong */
    check_bytes("\xed\xa0\x80", 3, "t.tx:1:1: error: invalid UTF-8 (byte 0xed)\n"); /* surrogate */
    check_bytes("\xf4\x90\x80\x80", 4,
                "t.tx:1:1: error: invalid UTF-8 (byte 0xf4)\n");                   /* > U+10FFFF */
    check_bytes("ok \xe2\x82", 5, "t.tx:1:4: error: invalid UTF-8 (byte 0xe2)\n"); /* truncated */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_and_text),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_locations_tabs_comments),
        cmocka_unit_test(test_newlines_in_brackets),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bracket_depth),
        cmocka_unit_test(test_byte_checks),
        cmocka_unit_test(test_long_literal_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
