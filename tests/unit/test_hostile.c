/* test_hostile.c - hostile input below the command line (docs/reliability.md):
 *  - replays every fuzz finding (tests/fuzz/regressions/TARGET/) and every
 *    seed (tests/fuzz/seeds/) through the fuzz targets' own checks
 *    (tests/fuzz/fuzz_one.h), so a crash found once stays fixed;
 *  - feeds the frontend generated hostile sources (deep nesting, NUL and
 *    invalid UTF-8 bytes, rank and element-count limits, huge literals and
 *    identifiers) and checks each is one well-formed error;
 *  - feeds the .npy reader truncated, lying and unsupported files and the
 *    writer unwritable paths;
 *  - checks the overflow-checked size arithmetic at its edges.
 * Runs with the source root as working directory (TX_ROOT overrides). */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <cmocka.h>

#define FUZZ_WITH_CODEGEN 1
#include "tests/fuzz/fuzz_one.h"
#include "driver/driver.h"
#include "tx_rt.h"

/* The source root: $TX_ROOT or the working directory. */
static const char *root(void) {
    const char *r = getenv("TX_ROOT");
    return r && *r ? r : ".";
}

/* Reads a whole file into a malloc'd buffer; NULL on failure. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, r;
    uint8_t *b = malloc(cap);
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0)
        if ((n += r) == cap) b = realloc(b, cap *= 2);
    fclose(f);
    *len = n;
    return b;
}

typedef const char *(*one_fn)(const uint8_t *data, size_t size, const char *scratch);

/* Runs every regular file of ROOT/`sub` through fn; prints each failure
 * (file and broken check) and counts it in *failures. Returns the number
 * of files run. */
static unsigned replay_dir(const char *sub, one_fn fn, const char *scratch, unsigned *failures) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", root(), sub);
    DIR *dp = opendir(dir);
    if (!dp) return 0; /* no findings yet */
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        size_t len = 0;
        uint8_t *data = slurp(path, &len);
        assert_non_null(data);
        const char *bad = fn(data, len, scratch);
        if (bad) print_error("%s: %s\n", path, bad), (*failures)++;
        free(data);
        n++;
    }
    closedir(dp);
    return n;
}

static const char *frontend_fn(const uint8_t *d, size_t n, const char *s) {
    (void)s;
    return fuzz_frontend_one(d, n);
}
static const char *compile_fn(const uint8_t *d, size_t n, const char *s) {
    (void)s;
    return fuzz_compile_one(d, n);
}
static const char *npy_fn(const uint8_t *d, size_t n, const char *s) {
    return fuzz_npy_one(d, n, s);
}

static void test_replay_frontend(void **state) {
    (void)state;
    unsigned bad = 0, n = replay_dir("tests/fuzz/regressions/frontend", frontend_fn, NULL, &bad);
    n += replay_dir("tests/fuzz/seeds/tx", frontend_fn, NULL, &bad);
    assert_true(n > 0);
    assert_int_equal(bad, 0);
}

static void test_replay_compile(void **state) {
    (void)state;
    unsigned bad = 0, n = replay_dir("tests/fuzz/regressions/compile", compile_fn, NULL, &bad);
    n += replay_dir("tests/fuzz/seeds/tx", compile_fn, NULL, &bad);
    assert_true(n > 0);
    assert_int_equal(bad, 0);
}

static void test_replay_npy(void **state) {
    (void)state;
    char scratch[] = "/tmp/test_hostile.XXXXXX";
    assert_non_null(mkdtemp(scratch));
    unsigned bad = 0, n = replay_dir("tests/fuzz/regressions/npy", npy_fn, scratch, &bad);
    n += replay_dir("tests/fuzz/seeds/npy", npy_fn, scratch, &bad);
    rmdir(scratch);
    assert_true(n > 0);
    assert_int_equal(bad, 0);
}

static const char *manifest_fn(const uint8_t *d, size_t n, const char *s) {
    (void)s;
    return fuzz_manifest_one(d, n);
}

static void test_replay_manifest(void **state) {
    (void)state;
    unsigned bad = 0, n = replay_dir("tests/fuzz/regressions/manifest", manifest_fn, NULL, &bad);
    n += replay_dir("tests/fuzz/seeds/manifest", manifest_fn, NULL, &bad);
    assert_true(n > 0);
    assert_int_equal(bad, 0);
}

/* libtx_rt's loader reads regular files only and never blocks: a FIFO, a directory and (as root)
 * /proc/kmsg, a regular file whose read blocks, are one-line errors. */
static void test_tx_rt_paths(void **state) {
    (void)state;
    char dir[] = "/tmp/test_hostile_rt.XXXXXX", fifo[64], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/k.ptx", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_null(tx_kernels_load(fifo, err, sizeof err));
    assert_true(err[0] && !strchr(err, '\n'));
    assert_null(tx_kernels_load(dir, err, sizeof err));
    unlink(fifo);
    rmdir(dir);
    if (access("/proc/kmsg", R_OK) == 0) {
        assert_null(tx_kernels_load("/proc/kmsg", err, sizeof err));
        assert_non_null(strstr(err, "kmsg"));
    }
}

/* ---- frontend: generated hostile sources ------------------------------------ */
/* Compiles src; expects failure with one well-formed diagnostic (under
 * 64 KiB) whose text contains `want` (NULL: any). Prints what is wrong and
 * returns 1 when not, else 0 (so callers free before failing). */
static unsigned expect_fe_error(const char *what, const char *src, size_t len, const char *want) {
    fuzz_sink s;
    fuzz_sink_open(&s);
    tx_diag d;
    tx_diag_init(&d, s.f, FUZZ_FILE, src, len);
    fe_options fo = {0};
    ir_graph *g = fe_compile(FUZZ_FILE, src, len, &fo, &d);
    fflush(s.f);
    const char *bad = g               ? "accepted"
                      : d.errors == 0 ? "failed silently"
                                      : fuzz_check_diag(s.buf, s.len, FUZZ_FILE, src, len);
    if (!bad && want && !strstr(s.buf, want)) bad = "the message does not say what is wrong";
    if (!bad && s.len > 65536) bad = "the diagnostic is over 64 KiB long";
    if (bad)
        print_error("%s: %s; diagnostic (%zu bytes): %.300s\n", what, bad, s.len,
                    s.buf ? s.buf : "");
    ir_graph_free(g);
    fuzz_sink_close(&s);
    return bad != NULL;
}

/* Compiles src; expects success. Returns 1 (after printing why) when not. */
static unsigned expect_fe_ok(const char *what, const char *src) {
    fuzz_sink s;
    fuzz_sink_open(&s);
    tx_diag d;
    tx_diag_init(&d, s.f, FUZZ_FILE, src, strlen(src));
    fe_options fo = {0};
    ir_graph *g = fe_compile(FUZZ_FILE, src, strlen(src), &fo, &d);
    fflush(s.f);
    if (!g) print_error("%s: rejected: %.300s\n", what, s.buf ? s.buf : "");
    ir_graph_free(g);
    fuzz_sink_close(&s);
    return g == NULL;
}

/* "fn f(x: f32[N]) -> f32[N] {\n  return " + pre*n + mid + post*n + "\n}\n" */
static char *nested(const char *pre, unsigned n, const char *mid, const char *post, size_t *len) {
    const char *head = "fn f(x: f32[N]) -> f32[N] {\n  return ", *tail = "\n}\n";
    size_t cap = strlen(head) + n * (strlen(pre) + strlen(post)) + strlen(mid) + strlen(tail) + 1;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "%s", head);
    for (unsigned i = 0; i < n; i++) p += sprintf(p, "%s", pre);
    p += sprintf(p, "%s", mid);
    for (unsigned i = 0; i < n; i++) p += sprintf(p, "%s", post);
    p += sprintf(p, "%s", tail);
    *len = (size_t)(p - s);
    return s;
}

static void test_fe_nesting(void **state) {
    (void)state;
    unsigned bad = 0;
    size_t len;
    char *s = nested("(", 10000, "x", ")", &len);
    bad += expect_fe_error("10000 parentheses", s, len, "nest");
    free(s);
    s = nested("exp(", 10000, "x", ")", &len);
    bad += expect_fe_error("10000 nested calls", s, len, "nest");
    free(s);
    s = nested("(", 100000, "x", "", &len);
    bad += expect_fe_error("100000 unclosed parentheses", s, len, NULL);
    free(s);
    s = nested("(", 100, "x", ")", &len);
    bad += expect_fe_ok("100 parentheses", s);
    free(s);
    assert_int_equal(bad, 0);
}

static void test_fe_bytes(void **state) {
    (void)state;
    unsigned bad = 0;
#define BYTES(what, lit) \
    { what, lit, sizeof(lit) - 1 }
    static const struct {
        const char *what, *src;
        size_t len;
    } cases[] = {
        BYTES("empty file", ""),
        BYTES("NUL in code", "fn f(x: f32[N]) -> f32[N] {\n  return x\0 + x\n}\n"),
        BYTES("NUL in a comment", "# \0\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n"),
        BYTES("byte 0xff", "fn f(x: f32[N]) -> f32[N] {\n  return x\xff\n}\n"),
        BYTES("overlong '/'", "# \xc0\xaf\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n"),
        BYTES("UTF-16 surrogate", "# \xed\xa0\x80\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n"),
        BYTES("above U+10FFFF", "# \xf4\x90\x80\x80\nfn f(x: f32[N]) -> f32[N] {\n  return x\n}\n"),
        BYTES("truncated sequence at the end",
              "fn f(x: f32[N]) -> f32[N] {\n  return x\n}\n\xe2\x82"),
        BYTES("lone continuation byte", "fn f(x: f32[N]) -> f32[N] {\n  return x\x80\n}\n"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bad += expect_fe_error(cases[i].what, cases[i].src, cases[i].len, NULL);
#undef BYTES
    bad +=
        expect_fe_ok("valid UTF-8 in a comment", "# h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80\nfn "
                                                 "f(x: f32[N]) -> f32[N] {\n  return x\n}\n");
    assert_int_equal(bad, 0);
}

static void test_fe_limits(void **state) {
    (void)state;
    unsigned bad = 0;
    static const char *const cases[][2] = {
        {"rank 9", "fn f(x: f32[1, 1, 1, 1, 1, 1, 1, 1, 1]) -> f32[1] {\n  return sum(x)\n}\n"},
        {"reshape to rank 9",
         "fn f(x: f32[1]) -> f32[1] {\n  return reshape(x, (1, 1, 1, 1, 1, 1, 1, 1, 1))\n}\n"},
        {"2^62 elements",
         "fn f(x: f32[4611686018427387904]) -> f32[4611686018427387904] {\n  return x\n}\n"},
        {"2^63 elements as a product", "fn f(x: f32[2147483648, 2147483648, 2]) -> f32[2147483648, "
                                       "2147483648, 2] {\n  return x\n}\n"},
        {"2^64 elements by broadcasting", "fn f(x: f32[4294967296, 1], y: f32[1, 4294967296]) -> "
                                          "f32[4294967296, 4294967296] {\n  return x + y\n}\n"},
        {"2^64 elements by matmul", "fn f(x: f32[4294967296, 1], y: f32[1, 4294967296]) -> "
                                    "f32[4294967296, 4294967296] {\n  return x @ y\n}\n"},
        {"dim literal above int64",
         "fn f(x: f32[99999999999999999999]) -> f32[99999999999999999999] {\n  return x\n}\n"},
        {"dim 0", "fn f(x: f32[0]) -> f32[0] {\n  return x\n}\n"},
        {"int literal above int64",
         "fn f(x: f32[N]) -> f32[N] {\n  return x * 99999999999999999999999\n}\n"},
        {"float literal 1e999", "fn f(x: f32[N]) -> f32[N] {\n  return x * 1e999\n}\n"},
        {"axis 2^32", "fn f(x: f32[N]) -> f32[] {\n  return sum(x, axis=4294967296)\n}\n"},
        {"slice stop above int64", "fn f(x: f32[N]) -> f32[N] {\n  return slice(x, axis=0, "
                                   "start=0, stop=99999999999999999999)\n}\n"},
        {"recursion", "fn a(x) { return b(x) }\nfn b(x) { return a(x) }\nfn f(x: f32[2]) -> f32[2] "
                      "{\n  return a(x)\n}\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bad += expect_fe_error(cases[i][0], cases[i][1], strlen(cases[i][1]), NULL);
    assert_int_equal(bad, 0);
}

static void test_fe_huge_tokens(void **state) {
    (void)state;
    unsigned bad = 0;
    size_t n = 1u << 20, len;
    char *id = malloc(n + 1);
    memset(id, 'a', n);
    id[n] = 0;
    char *s = nested("", 0, id, "", &len);
    bad += expect_fe_error("1 MiB unknown identifier", s, len, NULL);
    free(s);
    memset(id, '7', n);
    s = nested("x * ", 1, id, "", &len);
    bad += expect_fe_error("1 MiB integer literal", s, len, NULL);
    free(s);
    free(id);
    assert_int_equal(bad, 0);
}

/* -D bindings that contradict the program are errors, not crashes. */
static void test_fe_defines(void **state) {
    (void)state;
    unsigned nbad = 0;
    static const struct {
        const char *what, *src;
        int64_t v;
    } cases[] = {
        {"-D against a concrete dim", "fn f(x: f32[N], y: f32[4]) -> f32[4] {\n  return x + y\n}\n",
         5},
        {"-D against a reshape", "fn f(x: f32[N]) -> f32[2, 3] {\n  return reshape(x, (2, 3))\n}\n",
         7},
        {"-D overflowing a product", "fn f(x: f32[N, N, N]) -> f32[N, N, N] {\n  return x\n}\n",
         4194304},
        {"-D against a declared return", "fn f(x: f32[N]) -> f32[5] {\n  return x\n}\n", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fuzz_sink s;
        fuzz_sink_open(&s);
        tx_diag d;
        tx_diag_init(&d, s.f, FUZZ_FILE, cases[i].src, strlen(cases[i].src));
        fe_define def = {"N", cases[i].v};
        fe_options fo = {.defines = &def, .ndefines = 1};
        ir_graph *g = fe_compile(FUZZ_FILE, cases[i].src, strlen(cases[i].src), &fo, &d);
        fflush(s.f);
        const char *bad = g               ? "accepted"
                          : d.errors == 0 ? "failed silently"
                                          : fuzz_check_diag(s.buf, s.len, FUZZ_FILE, cases[i].src,
                                                            strlen(cases[i].src));
        if (bad)
            print_error("%s: %s; diagnostic: %.300s\n", cases[i].what, bad, s.buf ? s.buf : ""),
                nbad++;
        ir_graph_free(g);
        fuzz_sink_close(&s);
    }
    assert_int_equal(nbad, 0);
}

/* ---- .npy ----------------------------------------------------------------------- */
/* A v1.0 .npy image: preamble, header dict `dict` padded to 64 bytes, then
 * `nbytes` zero bytes. Returns the length written into buf (cap >= 512 + nbytes). */
static size_t npy_image(unsigned char *buf, const char *dict, size_t nbytes) {
    size_t dl = strlen(dict), hl = dl + 1;
    while ((10 + hl) % 64) hl++;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hl & 255);
    buf[9] = (unsigned char)(hl >> 8);
    memcpy(buf + 10, dict, dl);
    memset(buf + 10 + dl, ' ', hl - dl - 1);
    buf[10 + hl - 1] = '\n';
    memset(buf + 10 + hl, 0, nbytes);
    return 10 + hl + nbytes;
}

/* Expects rt_npy_parse to refuse buf with one "fuzz.npy: MSG" line;
 * returns 1 (after printing why) when it does not. */
static unsigned expect_npy_error(const char *what, const unsigned char *buf, size_t len) {
    rt_tensor t;
    memset(&t, 0, sizeof t);
    char err[512] = "";
    if (rt_npy_parse(FUZZ_NPY, buf, len, &t, err, sizeof err)) {
        rt_tensor_free(&t);
        print_error("%s: accepted\n", what);
        return 1;
    }
    const char *bad = fuzz_check_npy_err(err, FUZZ_NPY);
    if (bad) print_error("%s: %s: '%s'\n", what, bad, err);
    return bad != NULL;
}

static void test_npy_hostile(void **state) {
    (void)state;
    unsigned bad = 0;
    static unsigned char buf[4096];
    static const struct {
        const char *what, *dict;
        size_t nbytes;
    } lies[] = {
        {"shape larger than the data",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }", 16},
        {"shape smaller than the data", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
         16},
        {"element count overflows",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", 0},
        {"2^62 elements",
         "{'descr': '|b1', 'fortran_order': False, 'shape': (4611686018427387904,), }", 0},
        {"dim above int64",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 0},
        {"negative dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0},
        {"rank 9",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", 4},
        {"f64", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16},
        {"big endian", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8},
        {"Fortran order", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16},
        {"missing key", "{'descr': '<f4', 'shape': (2,), }", 8},
        {"key twice", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
         8},
        {"unknown key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }", 8},
        {"unterminated dict", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", 8},
        {"shape (2) is not a tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8},
        {"unterminated string", "{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", 8},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++)
        bad += expect_npy_error(lies[i].what, buf, npy_image(buf, lies[i].dict, lies[i].nbytes));
    size_t good = npy_image(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
    for (size_t cut = 0; cut < good; cut++) bad += expect_npy_error("truncated file", buf, cut);
    unsigned char img[16];
    memcpy(img, buf, 16);
    img[6] = 9;
    bad += expect_npy_error("format version 9", img, 16);
    img[6] = 1, img[8] = 0xff, img[9] = 0xff;
    bad += expect_npy_error("header length past the end", img, 16);
    img[0] = 'X';
    bad += expect_npy_error("bad magic", img, 16);
    rt_tensor t;
    memset(&t, 0, sizeof t);
    char err[512];
    assert_true(rt_npy_parse(FUZZ_NPY, buf, good, &t, err, sizeof err)); /* the control */
    rt_tensor_free(&t);
    assert_int_equal(bad, 0);
}

static void test_npy_paths(void **state) {
    (void)state;
    char dir[] = "/tmp/test_hostile.XXXXXX", p[256], err[512];
    assert_non_null(mkdtemp(dir));
    rt_tensor t;
    memset(&t, 0, sizeof t);
    assert_false(rt_npy_read(dir, &t, err, sizeof err)); /* a directory */
    snprintf(p, sizeof p, "%s/missing.npy", dir);
    assert_false(rt_npy_read(p, &t, err, sizeof err));
    assert_non_null(strstr(err, "missing.npy"));
    /* Unwritable: under a regular file, in a missing directory, onto a directory. */
    t.dtype = IR_F32, t.rank = 1, t.dim[0] = 3;
    assert_true(rt_tensor_alloc(&t));
    snprintf(p, sizeof p, "%s/file", dir);
    assert_true(fuzz_write_file(p, (const uint8_t *)"x", 1));
    snprintf(p, sizeof p, "%s/file/out.npy", dir);
    assert_false(rt_npy_write(p, &t, err, sizeof err));
    snprintf(p, sizeof p, "%s/nodir/out.npy", dir);
    assert_false(rt_npy_write(p, &t, err, sizeof err));
    snprintf(p, sizeof p, "%s/sub", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_false(rt_npy_write(p, &t, err, sizeof err));
    rmdir(p);
    snprintf(p, sizeof p, "%s/file", dir);
    unlink(p);
    bool empty = fuzz_dir_empty(dir);
    rt_tensor_free(&t);
    if (!empty) fail_msg("rt_npy_write left a temporary file in %s", dir);
    rmdir(dir);
}

/* ---- output sets and bounded reads (runtime/file.c) ----------------------------------- */
/* Whole contents of a small file as a string (static buffer; "" when unreadable). */
static const char *contents(const char *path) {
    static char buf[256];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static void test_outset(void **state) {
    (void)state;
    char dir[] = "/tmp/test_hostile.XXXXXX", a[256], b[256], sub[256], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    assert_true(fuzz_write_file(a, (const uint8_t *)"old a", 5));
    /* Committed together: both appear. */
    rt_outset *s = rt_outset_new();
    FILE *fa = rt_outset_open(s, a, err, sizeof err), *fb = rt_outset_open(s, b, err, sizeof err);
    assert_non_null(fa);
    assert_non_null(fb);
    fputs("new a", fa), fputs("new b", fb);
    assert_string_equal(contents(a), "old a"); /* nothing in place before the commit */
    assert_true(rt_outset_commit(s, err, sizeof err));
    rt_outset_free(s);
    assert_string_equal(contents(a), "new a");
    assert_string_equal(contents(b), "new b");
    /* Not committed: nothing changes, no temporary stays. */
    s = rt_outset_new();
    fa = rt_outset_open(s, a, err, sizeof err);
    fputs("lost", fa);
    rt_outset_free(s);
    assert_string_equal(contents(a), "new a");
    /* A directory among the outputs is refused before anything is written; a
     * path named twice is refused too. */
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    s = rt_outset_new();
    assert_non_null(rt_outset_open(s, a, err, sizeof err));
    assert_null(rt_outset_open(s, sub, err, sizeof err));
    assert_null(rt_outset_open(s, a, err, sizeof err));
    assert_non_null(strstr(err, "twice"));
    rt_outset_free(s);
    assert_string_equal(contents(a), "new a");
    /* A character device is streamed to and stays a device. */
    s = rt_outset_new();
    FILE *fn = rt_outset_open(s, "/dev/null", err, sizeof err);
    assert_non_null(fn);
    fputs("discarded", fn);
    assert_true(rt_outset_commit(s, err, sizeof err));
    rt_outset_free(s);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* A full device fails at commit, before the regular file beside it is replaced. */
    if (access("/dev/full", W_OK) == 0) {
        s = rt_outset_new();
        fa = rt_outset_open(s, a, err, sizeof err);
        FILE *ff = rt_outset_open(s, "/dev/full", err, sizeof err);
        assert_non_null(fa);
        assert_non_null(ff);
        fputs("never", fa), fputs("lost bytes", ff);
        assert_false(rt_outset_commit(s, err, sizeof err));
        assert_non_null(strstr(err, "/dev/full"));
        rt_outset_free(s);
        assert_string_equal(contents(a), "new a");
    }
    /* Bounded reads: at the bound, above it, a directory, a device. */
    size_t len;
    char *t = rt_file_read_all(a, 5, &len, err, sizeof err);
    assert_non_null(t);
    assert_int_equal(len, 5);
    free(t);
    assert_null(rt_file_read_all(a, 4, &len, err, sizeof err));
    assert_non_null(strstr(err, "larger than 4 bytes"));
    assert_null(rt_file_read_all(sub, 100, &len, err, sizeof err));
    assert_null(rt_file_read_all("/dev/zero", 100, &len, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
    rmdir(sub);
    unlink(a), unlink(b);
    bool empty = fuzz_dir_empty(dir);
    if (!empty) fail_msg("an output set left a temporary file in %s", dir);
    rmdir(dir);
}

/* ---- bench's verdict: "verified" only when outputs were compared -------------------- */
static void test_bench_verdict(void **state) {
    (void)state;
    rt_out_check oc[2];
    memset(oc, 0, sizeof oc);
    oc[0].dtype = oc[1].dtype = IR_F32;
    rt_bench_result r;
    rt_bench_report rep;
    memset(&r, 0, sizeof r);
    memset(&rep, 0, sizeof rep);
    snprintf(r.label, sizeof r.label, "fused");
    snprintf(rep.reference, sizeof rep.reference, "none (too large for the reference interpreter)");
    r.nout = 2, r.out = oc, r.verified = true, r.iters = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rt_bench_print_text(f, &rep, &r); /* nothing compared */
    oc[0].checked = true;
    rt_bench_print_text(f, &rep, &r); /* one of two */
    oc[1].checked = true;
    rt_bench_print_text(f, &rep, &r); /* both */
    rt_bench_print_json(f, &rep, &r, NULL);
    fclose(f);
    char *a = strstr(buf, "fused: NOT VERIFIED (no output was compared)");
    char *b = a ? strstr(a, "fused: verified in part") : NULL;
    char *c = b ? strstr(b, "fused: verified, reference") : NULL;
    bool json = strstr(buf, "\"verified\": true, \"compared_outputs\": 2, \"outputs\": 2") != NULL;
    free(buf);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_true(json);
}

/* ---- size arithmetic ---------------------------------------------------------------- */
static void test_size_arithmetic(void **state) {
    (void)state;
    int64_t r;
    assert_false(ir_mul_ok(INT64_MAX, 2, &r));
    assert_false(ir_mul_ok(INT64_MIN, -1, &r));
    assert_false(ir_mul_ok((int64_t)1 << 32, (int64_t)1 << 31, &r));
    assert_true(ir_mul_ok((int64_t)1 << 31, (int64_t)1 << 31, &r) && r == (int64_t)1 << 62);
    assert_false(ir_add_ok(INT64_MAX, 1, &r));
    assert_false(ir_add_ok(INT64_MIN, -1, &r));
    ir_shape s = {.rank = 3, .dim = {(int64_t)1 << 32, (int64_t)1 << 32, 2}};
    assert_true(ir_shape_numel(&s) < 0);
    rt_tensor t;
    memset(&t, 0, sizeof t);
    size_t bytes;
    t.dtype = IR_F32, t.rank = 2, t.dim[0] = (int64_t)1 << 31, t.dim[1] = (int64_t)1 << 31;
    assert_false(rt_tensor_bytes(&t, &bytes)); /* 2^62 elements: not below the limit */
    assert_false(rt_tensor_alloc(&t));
    assert_null(t.data);
    t.dim[0] = (int64_t)1 << 40, t.dim[1] = (int64_t)1 << 40;
    assert_false(rt_tensor_bytes(&t, &bytes));
    t.rank = 1, t.dim[0] = -5;
    assert_false(rt_tensor_bytes(&t, &bytes));
    t.dim[0] = 0;
    assert_true(rt_tensor_bytes(&t, &bytes) && bytes == 0);
}

/* ---- issue 15 J M P S F: memory, buffer sharing, parallel host work, parameter space ----- */

/* Plans src (-D N=n when n > 0) fused or not; the graph (caller frees). */
static ir_graph *plan_src(const char *src, int64_t n, bool no_fuse) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", src, strlen(src));
    fe_define def = {.name = "N", .value = n};
    fe_options fo = {.entry = NULL, .defines = &def, .ndefines = n > 0};
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200"), .no_fuse = no_fuse};
    ir_graph *g = fe_compile("test.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* J, P: sizes are checked against host memory before anything is allocated; a petabyte is
 * refused with the bytes (not handed to malloc, which under ASan is a sanitizer report). */
static void test_memory_checks(void **state) {
    (void)state;
    char err[300];
    assert_true(ir_host_mem_available() > 0);
    assert_true(ir_host_mem_check(1000, "a small buffer", err, sizeof err));
    assert_false(ir_host_mem_check(1e18, "a huge buffer", err, sizeof err));
    assert_non_null(strstr(err, "a huge buffer needs 1000000000000000000 bytes (1.0 EB) of host"));
    assert_non_null(strstr(err, "bytes"));
    assert_non_null(strstr(err, "are available"));
    rt_tensor t = {.dtype = IR_F32, .rank = 2, .dim = {1 << 20, 1 << 28}}; /* 2^50 bytes */
    assert_false(rt_tensor_alloc(&t));
    assert_null(t.data);
    /* the whole run's estimate: inputs, outputs and bench's reference copies */
    ir_graph *g = plan_src("fn f(x: f32[N], y: f32[N]) -> f32[N] {\n  return x + y\n}\n", 0, false);
    int64_t syms[4] = {60000000000LL};
    drv_mem_opts mo = {.dev = DRV_CPU, .bench = false};
    drv_mem_need m;
    assert_true(drv_mem_estimate(g, syms, NULL, &mo, &m));
    assert_true(m.inputs == 480e9 && m.outputs == 240e9 && m.reference == 0 && m.host == 720e9);
    mo.bench = true;
    mo.dev = DRV_GPU;
    assert_true(drv_mem_estimate(g, syms, NULL, &mo, &m));
    assert_true(m.reference >= m.outputs && m.gpu == 720e9);
    tx_diag d;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tx_diag_init(&d, f, "test.tx", NULL, 0);
    mo.dev = DRV_CPU;
    assert_false(drv_check_memory(g, syms, NULL, &mo, NULL, &d));
    fclose(f);
    assert_non_null(strstr(buf, "of host memory"));
    free(buf);
    ir_graph_free(g);
}

/* M: intermediates of one shape whose lifetimes do not overlap share a buffer: an unfused chain
 * of 60 ops needs two (one per op before); a value read again later keeps its own. */
static void test_temp_sharing(void **state) {
    (void)state;
    char src[4096] = "fn f(x: f32[N]) -> f32[N] {\n  y = exp(x)\n  z = y\n";
    for (int k = 0; k < 60; k++) strcat(src, "  z = z * 1.5 - 0.25\n");
    strcat(src, "  return z + y\n}\n");
    ir_graph *g = plan_src(src, 1000, true);
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", NULL, 0);
    cg_program *p = cg_program_new(g, CG_HOST, &d);
    assert_non_null(p);
    assert_true(cg_program_ntemps(p) <= 3); /* y (live to the end) and two for the chain */
    for (unsigned k = 0; k < cg_program_nkernels(p); k++) { /* never two of one kernel's */
        const cg_kernel *kr = cg_program_kernel(p, k);
        for (unsigned a = 0; a < kr->nbufs; a++)
            for (unsigned b = a + 1; b < kr->nbufs; b++)
                assert_false(kr->bufs[a].kind == CG_BUF_TEMP && kr->bufs[b].kind == CG_BUF_TEMP &&
                             kr->bufs[a].index == kr->bufs[b].index);
    }
    cg_program_free(p);
    /* and the shared plan computes what the reference does */
    rt_tensor in = {.dtype = IR_F32, .rank = 1, .dim = {1000}}, out = {0}, ref = {0};
    assert_true(rt_tensor_alloc(&in));
    rt_fill_random(&in, 5, 0);
    assert_true(drv_host_run(g, &in, &out, &d));
    ir_graph *raw = plan_src(src, 1000, false);
    assert_true(rt_interp_run(raw, &in, &ref, &d));
    rt_cmp c;
    char err[200];
    assert_true(rt_compare(&out, &ref, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 0);
    rt_tensor_free(&in), rt_tensor_free(&out), rt_tensor_free(&ref);
    ir_graph_free(raw);
    ir_graph_free(g);
}

/* S: random inputs, comparison and the poison count run on every core and give the same results
 * as on one (the first bad element is the first in index order). */
static void test_parallel_host_work(void **state) {
    (void)state;
    enum { N = (1 << 22) + 77 };
    rt_tensor a = {.dtype = IR_F32, .rank = 1, .dim = {N}}, b = a,
              h = {.dtype = IR_F16, .rank = 1, .dim = {5000}}, h2 = h;
    assert_true(rt_tensor_alloc(&a) && rt_tensor_alloc(&b) && rt_tensor_alloc(&h) &&
                rt_tensor_alloc(&h2));
    setenv("TX_HOST_THREADS", "1", 1);
    rt_fill_random(&a, 9, 3);
    rt_fill_random(&h, 9, 3);
    setenv("TX_HOST_THREADS", "7", 1);
    rt_fill_random(&b, 9, 3);
    rt_fill_random(&h2, 9, 3);
    assert_memory_equal(a.data, b.data, (size_t)N * 4);
    assert_memory_equal(h.data, h2.data, 5000 * 2);
    for (int64_t i = 0; i < N; i++) { /* the grid of [-1, 1) in steps of 2^-23 */
        float v = ((float *)a.data)[i];
        assert_true(v >= -1.0f && v < 1.0f && v * 8388608.0f == (float)(int64_t)(v * 8388608.0f));
    }
    ((float *)b.data)[N - 5] += 1.0f, ((float *)b.data)[123457] = NAN;
    ((uint32_t *)b.data)[N - 1] = 0xFFFFFFFFu;
    rt_cmp c1, c7;
    char err[200];
    assert_true(rt_compare(&b, &a, rt_tolerance(IR_F32), &c7, err, sizeof err));
    assert_int_equal(rt_count_poison(&b), 1);
    setenv("TX_HOST_THREADS", "1", 1);
    assert_true(rt_compare(&b, &a, rt_tolerance(IR_F32), &c1, err, sizeof err));
    assert_int_equal(rt_count_poison(&b), 1);
    unsetenv("TX_HOST_THREADS");
    assert_int_equal(c1.bad, 3);
    assert_int_equal(c1.first_bad, 123457);
    assert_true(c1.bad == c7.bad && c1.first_bad == c7.first_bad && c1.max_abs == c7.max_abs &&
                c1.ref_absmax == c7.ref_absmax && c1.bad_scaled == c7.bad_scaled);
    rt_tensor_free(&a), rt_tensor_free(&b), rt_tensor_free(&h), rt_tensor_free(&h2);
}

/* F: the planner splits a region whose kernel would take more parameters than PTX's 4352 bytes
 * (rule region.params), so every kernel's buffers fit and the GPU target compiles it. */
static void test_param_space_split(void **state) {
    (void)state;
    size_t cap = 64 * 1024, n = 0;
    char *src = malloc(cap);
    n += (size_t)snprintf(src + n, cap - n, "fn f(");
    for (int k = 0; k < 545; k++)
        n += (size_t)snprintf(src + n, cap - n, "%sx%d: f32[N]", k ? ", " : "", k);
    n += (size_t)snprintf(src + n, cap - n, ") -> f32[N] {\n  s = x0\n");
    for (int k = 1; k < 545; k++) n += (size_t)snprintf(src + n, cap - n, "  s = s + x%d\n", k);
    snprintf(src + n, cap - n, "  return s\n}\n");
    ir_graph *g = plan_src(src, 0, false);
    assert_true(g->nregions >= 2);
    tx_diag d;
    tx_diag_init(&d, stderr, "test.tx", NULL, 0);
    cg_program *p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    for (unsigned k = 0; k < cg_program_nkernels(p); k++)
        assert_true(8 * (cg_program_kernel(p, k)->nbufs + 1) <= 4352);
    cg_program_free(p);
    ir_graph_free(g);
    free(src);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_frontend),   cmocka_unit_test(test_replay_compile),
        cmocka_unit_test(test_replay_npy),        cmocka_unit_test(test_replay_manifest),
        cmocka_unit_test(test_tx_rt_paths),       cmocka_unit_test(test_fe_nesting),
        cmocka_unit_test(test_fe_bytes),          cmocka_unit_test(test_fe_limits),
        cmocka_unit_test(test_fe_huge_tokens),    cmocka_unit_test(test_fe_defines),
        cmocka_unit_test(test_npy_hostile),       cmocka_unit_test(test_npy_paths),
        cmocka_unit_test(test_size_arithmetic),   cmocka_unit_test(test_outset),
        cmocka_unit_test(test_bench_verdict),     cmocka_unit_test(test_memory_checks),
        cmocka_unit_test(test_temp_sharing),      cmocka_unit_test(test_parallel_host_work),
        cmocka_unit_test(test_param_space_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
