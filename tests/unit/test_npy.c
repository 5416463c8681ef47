/* test_npy.c - host tensors, exact f16/bf16 conversions, deterministic
 * random fill, and the .npy reader/writer (round trips, every malformed
 * file case, atomic writes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"

/* ---- helpers ----------------------------------------------------------------- */
/* A fresh temporary directory (caller removes it with rm_dir). */
static char *tmp_dir(void) {
    char *t = strdup("/tmp/tx_test_npy_XXXXXX");
    assert_non_null(mkdtemp(t));
    return t;
}

/* Removes the plain files in dir, then dir. */
static void rm_dir(char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                if (remove(p) != 0) rmdir(p);
            }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* Number of entries (besides . and ..) in dir. */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* A header + data image: "\x93NUMPY", version, padded header text, data. */
static size_t make_npy(unsigned char *buf, int major, const char *hdr, const void *data,
                       size_t ndata) {
    size_t pre = major == 1 ? 10 : 12, hl = strlen(hdr);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) buf[8 + i] = (unsigned char)(hl >> (8 * i));
    memcpy(buf + pre, hdr, hl);
    if (ndata) memcpy(buf + pre + hl, data, ndata);
    return pre + hl + ndata;
}

/* Parses an image expecting failure with `want` in the one-line message. */
static void expect_bad(const unsigned char *buf, size_t len, const char *want) {
    rt_tensor t = {0};
    char err[256] = "";
    bool ok = rt_npy_parse("bad.npy", buf, len, &t, err, sizeof err);
    if (ok) rt_tensor_free(&t);
    if (ok || !strstr(err, want))
        fail_msg("expected failure with '%s', got ok=%d err='%s'", want, ok, err);
    assert_null(strchr(err, '\n'));
    assert_memory_equal(err, "bad.npy: ", 9);
}

/* ---- f16 / bf16 ------------------------------------------------------------ */
static void test_f16_known(void **state) {
    (void)state;
    assert_int_equal(ir_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(ir_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(ir_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(ir_f32_to_f16(65519.0f), 0x7bff); /* below the midpoint 65520 */
    assert_int_equal(ir_f32_to_f16(65520.0f), 0x7c00); /* midpoint, ties to even: inf */
    assert_int_equal(ir_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(ir_f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(ir_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(ir_f32_to_f16(0x1p-24f), 0x0001);   /* smallest denormal */
    assert_int_equal(ir_f32_to_f16(0x1p-25f), 0x0000);   /* tie to even: 0 */
    assert_int_equal(ir_f32_to_f16(0x1.8p-25f), 0x0001); /* above the tie */
    assert_int_equal(ir_f32_to_f16(0x3p-24f), 0x0003);
    assert_int_equal(ir_f32_to_f16(0x1p-14f), 0x0400); /* smallest normal */
    assert_int_equal(ir_f32_to_f16(0x1.ffcp-15f),
                     0x0400); /* largest denormal + half ulp rounds up to it */
    assert_int_equal(ir_f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* tie -> even mantissa 0 */
    assert_int_equal(ir_f32_to_f16(1.0f + 0x3p-11f), 0x3c02); /* tie -> even mantissa 2 */
    assert_int_equal(ir_f32_to_f16(1.0f + 0x1p-11f + 0x1p-23f), 0x3c01); /* just above tie */
    uint16_t n = ir_f32_to_f16(NAN);
    assert_true((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0);
    assert_true(isnan(ir_f16_to_f32(0x7e00)));
    assert_true(ir_f16_to_f32(0x0001) == 0x1p-24f);
    assert_true(ir_f16_to_f32(0x7bff) == 65504.0f);
    assert_true(ir_f16_to_f32(0x3555) == 0x1.554p-2f);
    /* From double: one rounding, not two (via f32 would round twice). */
    double v = 1.0 + 0x1p-11 + 0x1p-40; /* f32 would drop 2^-40 and tie to 1.0 */
    assert_int_equal(ir_f64_to_f16(v), 0x3c01);
}

static void test_bf16_known(void **state) {
    (void)state;
    assert_int_equal(ir_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(ir_f32_to_bf16(-1.5f), 0xbfc0);
    assert_int_equal(ir_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);   /* tie -> even */
    assert_int_equal(ir_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);   /* tie -> even */
    assert_int_equal(ir_f32_to_bf16(1.0f + 0x1.2p-8f), 0x3f81); /* above tie */
    assert_int_equal(ir_f32_to_bf16(FLT_MAX), 0x7f80);          /* rounds past the max: inf */
    assert_int_equal(ir_f32_to_bf16(0x1.fep127f), 0x7f7f);      /* bf16 max itself */
    assert_int_equal(ir_f32_to_bf16(0x1p-133f), 0x0001);        /* smallest bf16 denormal */
    assert_int_equal(ir_f32_to_bf16(0x1p-134f), 0x0000);        /* tie to even: 0 */
    assert_int_equal(ir_f32_to_bf16(-0x1p-149f), 0x8000);       /* f32 denormal underflows to -0 */
    uint16_t n = ir_f32_to_bf16(-NAN);
    assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0 && (n & 0x8000));
    assert_true(ir_bf16_to_f32(0x4049) == 3.140625f);
    assert_true(isinf(ir_bf16_to_f32(0xff80)) && ir_bf16_to_f32(0xff80) < 0);
}

/* Every finite bit pattern: decode/encode is the identity, and the exact
 * midpoint to the next pattern rounds to the even one while values just
 * either side of it round to the nearer one. */
static void exhaustive(float (*dec)(uint16_t), uint16_t (*enc64)(double), uint16_t inf) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t b = (uint16_t)h;
        if ((b & 0x7fff) > inf) continue; /* NaN */
        double x = dec(b);
        if (enc64(x) != b)
            fail_msg("pattern %04x decodes to %g, re-encodes to %04x", b, x, enc64(x));
        if ((b & 0x7fff) >= inf || (b & 0x8000)) continue;
        /* Next representable value (past the largest finite: one more ulp). */
        double y = (b + 1u) == inf ? 2 * x - dec((uint16_t)(b - 1u)) : dec((uint16_t)(b + 1u));
        double mid = (x + y) / 2;
        uint16_t want = (b & 1) ? (uint16_t)(b + 1u) : b;
        if (enc64(mid) != want)
            fail_msg("midpoint after %04x rounds to %04x, want %04x", b, enc64(mid), want);
        if (enc64(nextafter(mid, 0)) != b) fail_msg("below midpoint after %04x", b);
        if (enc64(nextafter(mid, INFINITY)) != (uint16_t)(b + 1u))
            fail_msg("above midpoint after %04x", b);
    }
}

/* The decoder against the textbook formula (-1)^s 2^(e-bias) (1 + f/2^m), 2^(1-bias-m) f for
 * denormals, on every pattern. */
static void decode_formula(double (*dec)(uint16_t), int mbits, int ebias) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        int emax = (1 << (15 - mbits)) - 1;
        int ex = (int)((h >> mbits) & (uint32_t)emax), fr = (int)(h & ((1u << mbits) - 1u));
        double want = ex == emax ? (fr ? NAN : INFINITY)
                      : ex == 0  ? ldexp(fr, 1 - ebias - mbits)
                                 : ldexp(1.0 + ldexp(fr, -mbits), ex - ebias);
        if (h & 0x8000) want = -want;
        double got = dec((uint16_t)h);
        if (isnan(want) ? !isnan(got) : (got != want || signbit(got) != signbit(want)))
            fail_msg("pattern %04x decodes to %a, want %a", h, got, want);
    }
}

static void test_half_exhaustive(void **state) {
    (void)state;
    decode_formula(ir_f16_to_f64, 10, 15);
    decode_formula(ir_bf16_to_f64, 7, 127);
    exhaustive(ir_f16_to_f32, ir_f64_to_f16, 0x7c00);
    exhaustive(ir_bf16_to_f32, ir_f64_to_bf16, 0x7f80);
    /* The f32 entry points agree with the double ones on f32 inputs. */
    for (uint32_t i = 0; i < 200000; i++) {
        uint32_t bits = i * 21473u + 0x3000000u * (i & 3);
        float f;
        memcpy(&f, &bits, 4);
        if (isnan(f)) continue;
        assert_int_equal(ir_f32_to_f16(f), ir_f64_to_f16(f));
        assert_int_equal(ir_f32_to_bf16(f), ir_f64_to_bf16(f));
    }
}

static void test_get_set_rules(void **state) {
    (void)state;
    rt_tensor t = {.dtype = IR_I32, .rank = 1, .dim = {6}};
    assert_true(rt_tensor_alloc(&t));
    rt_set(&t, 0, 2.9);
    rt_set(&t, 1, -2.9);
    rt_set(&t, 2, 3e10);
    rt_set(&t, 3, -3e10);
    rt_set(&t, 4, NAN);
    rt_set(&t, 5, -INFINITY);
    assert_true(rt_get(&t, 0) == 2 && rt_get(&t, 1) == -2);
    assert_true(rt_get(&t, 2) == 2147483647.0 && rt_get(&t, 3) == -2147483648.0);
    assert_true(rt_get(&t, 4) == 0 && rt_get(&t, 5) == -2147483648.0);
    rt_tensor_free(&t);
    rt_tensor b = {.dtype = IR_BOOL, .rank = 1, .dim = {3}};
    assert_true(rt_tensor_alloc(&b));
    rt_set(&b, 0, 0.0);
    rt_set(&b, 1, -0.5);
    rt_set(&b, 2, NAN);
    assert_true(rt_get(&b, 0) == 0 && rt_get(&b, 1) == 1 && rt_get(&b, 2) == 1);
    rt_tensor_free(&b);
    rt_tensor h = {.dtype = IR_BF16, .rank = 0};
    assert_true(rt_tensor_alloc(&h));
    rt_set(&h, 0, 1.0 + 0x1p-8 + 0x1p-30); /* above the tie: rounds up */
    assert_true(rt_get(&h, 0) == 1.0 + 0x1p-7);
    rt_tensor_free(&h);
    rt_tensor big = {.dtype = IR_F32, .rank = 3, .dim = {1LL << 30, 1LL << 30, 1LL << 30}};
    assert_false(rt_tensor_alloc(&big));
    assert_int_equal(rt_numel(&big), -1);
}

static void test_convert(void **state) {
    (void)state;
    rt_tensor t = {.dtype = IR_F32, .rank = 1, .dim = {3}};
    assert_true(rt_tensor_alloc(&t));
    float v[3] = {1.0f + 0x1p-8f, 1.0f + 0x1.2p-8f, -3.0f};
    memcpy(t.data, v, sizeof v);
    char err[128];
    assert_true(rt_tensor_convert(&t, IR_F32, err, sizeof err));
    assert_int_equal(t.dtype, IR_F32);
    assert_true(rt_tensor_convert(&t, IR_BF16, err, sizeof err));
    assert_int_equal(t.dtype, IR_BF16);
    const uint16_t *h = t.data;
    assert_int_equal(h[0], 0x3f80);
    assert_int_equal(h[1], 0x3f81);
    assert_int_equal(h[2], 0xc040);
    rt_tensor_free(&t);
    rt_tensor f = {.dtype = IR_F16, .rank = 1, .dim = {2}};
    assert_true(rt_tensor_alloc(&f));
    assert_false(rt_tensor_convert(&f, IR_F32, err, sizeof err));
    assert_string_equal(err, "file holds <f2 (f16), parameter is f32");
    assert_int_equal(f.dtype, IR_F16);
    rt_tensor_free(&f);
    rt_tensor i = {.dtype = IR_I32, .rank = 0};
    assert_true(rt_tensor_alloc(&i));
    assert_false(rt_tensor_convert(&i, IR_BOOL, err, sizeof err));
    assert_string_equal(err, "file holds <i4 (i32), parameter is bool");
    rt_tensor_free(&i);
}

/* ---- random fill ---------------------------------------------------------- */
/* The documented generator, written out independently. */
static uint64_t ref_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void test_random(void **state) {
    (void)state;
    rt_tensor a = {.dtype = IR_F32, .rank = 2, .dim = {50, 40}}, b = a, c = a;
    assert_true(rt_tensor_alloc(&a) && rt_tensor_alloc(&b) && rt_tensor_alloc(&c));
    rt_fill_random(&a, 7, 2);
    rt_fill_random(&b, 7, 2);
    rt_fill_random(&c, 7, 3);
    assert_memory_equal(a.data, b.data, 2000 * 4);
    assert_memory_not_equal(a.data, c.data, 2000 * 4);
    uint64_t st = ref_mix(7) ^ ref_mix(0x9E3779B97F4A7C15ull * 3);
    double lo = 1, hi = -1;
    for (int i = 0; i < 2000; i++) {
        st += 0x9E3779B97F4A7C15ull;
        double want = (double)(ref_mix(st) >> 40) / 8388608.0 - 1.0;
        assert_true(rt_get(&a, i) == want);
        lo = fmin(lo, want);
        hi = fmax(hi, want);
    }
    assert_true(lo >= -1 && lo < -0.99 && hi < 1 && hi > 0.99);
    rt_tensor_free(&a);
    rt_tensor_free(&b);
    rt_tensor_free(&c);
    ir_dtype dts[4] = {IR_F16, IR_BF16, IR_I32, IR_BOOL};
    for (int k = 0; k < 4; k++) {
        rt_tensor t = {.dtype = dts[k], .rank = 1, .dim = {4096}};
        assert_true(rt_tensor_alloc(&t));
        rt_fill_random(&t, 123, 0);
        int counts[17] = {0};
        uint64_t hs = ref_mix(123) ^ ref_mix(0x9E3779B97F4A7C15ull);
        int p = dts[k] == IR_F16 ? 11 : 8;
        for (int i = 0; i < 4096; i++) {
            double v = rt_get(&t, i);
            hs += 0x9E3779B97F4A7C15ull;
            if (dts[k] == IR_F16 || dts[k] == IR_BF16) /* the grid k / 2^(p-1) - 1, exact */
                assert_true(v == ldexp((double)(ref_mix(hs) >> (64 - p)), 1 - p) - 1.0);
            if (dts[k] == IR_I32) {
                assert_true(v >= -8 && v < 8 && v == floor(v));
                counts[(int)v + 8]++;
            } else if (dts[k] == IR_BOOL) {
                counts[(int)v]++;
            } else {
                assert_true(v >= -1 && v < 1);
                counts[(int)floor((v + 1) * 8)]++;
            }
        }
        int buckets = dts[k] == IR_I32 ? 16 : dts[k] == IR_BOOL ? 2 : 16;
        for (int j = 0; j < buckets; j++) assert_true(counts[j] > 4096 / buckets / 2);
        rt_tensor_free(&t);
    }
}

/* ---- round trips ------------------------------------------------------------ */
/* Writes t, checks the file's layout (v1, 64-byte aligned header, newline),
 * reads it back and compares (bf16 comes back as exact f32). */
static void roundtrip(const char *dir, const rt_tensor *t) {
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/t.npy", dir);
    assert_true(rt_npy_write(path, t, err, sizeof err));
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char pre[10];
    assert_int_equal(fread(pre, 1, 10, f), 10);
    fclose(f);
    assert_memory_equal(pre, "\x93NUMPY\x01\x00", 8);
    size_t hl = pre[8] | (size_t)pre[9] << 8;
    assert_int_equal((10 + hl) % 64, 0);
    rt_tensor r = {0};
    if (!rt_npy_read(path, &r, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(r.dtype, t->dtype == IR_BF16 ? IR_F32 : t->dtype);
    assert_int_equal(r.rank, t->rank);
    for (int i = 0; i < t->rank; i++) assert_int_equal(r.dim[i], t->dim[i]);
    int64_t n = rt_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double a = rt_get(t, i), b = rt_get(&r, i);
        assert_true(a == b || (isnan(a) && isnan(b)));
    }
    rt_tensor_free(&r);
    assert_int_equal(count_entries(dir), 1); /* no temporary left behind */
}

static void test_roundtrip_all(void **state) {
    (void)state;
    char *dir = tmp_dir();
    ir_dtype dts[5] = {IR_F32, IR_F16, IR_BF16, IR_I32, IR_BOOL};
    for (int k = 0; k < 5; k++)
        for (int rank = 0; rank <= IR_MAX_RANK; rank++) {
            rt_tensor t = {.dtype = dts[k], .rank = (uint8_t)rank};
            for (int i = 0; i < rank; i++) t.dim[i] = 1 + (i * 3 + rank) % 3;
            assert_true(rt_tensor_alloc(&t));
            rt_fill_random(&t, 5, (uint32_t)rank);
            if (dts[k] != IR_I32 && dts[k] != IR_BOOL && rt_numel(&t) > 2) {
                rt_set(&t, 0, -INFINITY);
                rt_set(&t, 1, NAN);
            }
            roundtrip(dir, &t);
            rt_tensor_free(&t);
        }
    /* An empty tensor. */
    rt_tensor e = {.dtype = IR_F32, .rank = 2, .dim = {0, 5}};
    assert_true(rt_tensor_alloc(&e));
    roundtrip(dir, &e);
    rt_tensor_free(&e);
    /* The exact header text for a scalar and a 1-d array. */
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/t.npy", dir);
    rt_tensor s = {.dtype = IR_I32, .rank = 1, .dim = {3}};
    assert_true(rt_tensor_alloc(&s));
    assert_true(rt_npy_write(path, &s, err, sizeof err));
    char buf[160] = {0};
    FILE *f = fopen(path, "rb");
    assert_int_equal(fread(buf, 1, 128, f), 128);
    fclose(f);
    assert_memory_equal(buf + 10, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 57);
    assert_int_equal(buf[127], '\n');
    rt_tensor_free(&s);
    rt_tensor z = {.dtype = IR_BF16, .rank = 0};
    assert_true(rt_tensor_alloc(&z));
    assert_true(rt_npy_write(path, &z, err, sizeof err));
    f = fopen(path, "rb");
    assert_int_equal(fread(buf, 1, 128, f), 128); /* 10 + 55 > 64: padded to 128 */
    fclose(f);
    assert_memory_equal(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 55);
    assert_int_equal(buf[127], '\n');
    rt_tensor_free(&z);
    rm_dir(dir);
}

/* Version 2.0 and 3.0 headers (4-byte length), double quotes, no trailing
 * comma, odd spacing: all accepted. */
static void test_read_versions(void **state) {
    (void)state;
    unsigned char buf[512];
    float d[6] = {1, 2, 3, 4, 5, 6};
    const char *hdrs[3] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f4\"}   \n",
        "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) }\n"};
    for (int major = 1; major <= 3; major++)
        for (int h = 0; h < 3; h++) {
            size_t n = make_npy(buf, major, hdrs[h], d, sizeof d);
            rt_tensor t = {0};
            char err[256];
            if (!rt_npy_parse("v.npy", buf, n, &t, err, sizeof err))
                fail_msg("v%d hdr %d: %s", major, h, err);
            assert_int_equal(t.rank, 2);
            assert_int_equal(t.dim[0], 2);
            assert_int_equal(t.dim[1], 3);
            assert_true(rt_get(&t, 5) == 6.0);
            rt_tensor_free(&t);
        }
    /* Bool bytes other than 0/1 read as true. */
    unsigned char bb[3] = {0, 1, 7};
    size_t n =
        make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n", bb, 3);
    rt_tensor t = {0};
    char err[256];
    assert_true(rt_npy_parse("b.npy", buf, n, &t, err, sizeof err));
    assert_int_equal(((uint8_t *)t.data)[2], 1);
    rt_tensor_free(&t);
}

static void test_malformed(void **state) {
    (void)state;
    unsigned char buf[1024] = {0};
    float d[12] = {0};
    size_t n;
    expect_bad(buf, 0, "not a .npy file");
    expect_bad((const unsigned char *)"PK\x03\x04 zip file here", 20, "not a .npy file");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", d, 12);
    expect_bad(buf, 8, "truncated .npy file");
    expect_bad(buf, 30, "truncated header");
    buf[6] = 4;
    expect_bad(buf, n, "unsupported .npy format version 4.0");
    buf[6] = 1;
    buf[7] = 1;
    expect_bad(buf, n, "unsupported .npy format version 1.1");
    /* Header text problems. */
    struct {
        const char *hdr;
        const char *want;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }  ",
         "does not end with a newline"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }\n", "Fortran-order"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n",
         "unsupported dtype '<f8' (supported: <f4 <f2 <i4 |b1)"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }\n", "unsupported dtype '>f4'"},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }\n", "unsupported dtype '<i8'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }\n",
         "expected a quoted string"},
        {"{'descr': '<f4', 'fortran_order': False, }\n", "missing key 'shape'"},
        {"{'fortran_order': False, 'shape': (3,), }\n", "missing key 'descr'"},
        {"{'descr': '<f4', 'shape': (3,), }\n", "missing key 'fortran_order'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n",
         "given twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}\n",
         "unknown key 'extra'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,3), }\n",
         "rank above 8"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n",
         "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }\n",
         "dimension too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }\n", "expected a dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3), }\n", "is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [3], }\n", "expected a shape tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x\n",
         "expected the end of the header"},
        {"{'descr': '<f4', 'fortran_order': False 'shape': (3,), }\n", "expected ',' or '}'"},
        {"{'descr': '<f4\n", "expected a plain quoted string"},
        {"hello world\n", "expected '{'"},
        {"\xff\xfe\x01garbage\n", "expected '{', found '???garbage?'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        n = make_npy(buf, 1, cases[i].hdr, d, 12);
        expect_bad(buf, n, cases[i].want);
    }
    /* Lying headers: the shape needs more data than the file holds, or less. */
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", d, 12);
    expect_bad(buf, n, "truncated data: shape (4,) of <f4 needs 16 bytes, the file has 12");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", d, 12);
    expect_bad(buf, n, "the file has 12 bytes of data but shape (2,) of <f4 needs 8");
    n = make_npy(
        buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }\n", d, 12);
    expect_bad(buf, n, "truncated data");
}

/* Every prefix and every single-byte corruption of a valid file either
 * parses or fails with one message line; nothing crashes. */
static void test_mutations(void **state) {
    (void)state;
    unsigned char good[256], buf[256];
    float d[6] = {1, 2, 3, 4, 5, 6};
    size_t n = make_npy(
        good, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n", d, sizeof d);
    for (size_t len = 0; len < n; len++) {
        rt_tensor t = {0};
        char err[256] = "";
        assert_false(rt_npy_parse("m.npy", good, len, &t, err, sizeof err));
        assert_true(err[0] != 0 && !strchr(err, '\n'));
    }
    const unsigned char vals[6] = {0, '(', ')', ',', '9', 0xff};
    for (size_t pos = 0; pos < n; pos++)
        for (int v = 0; v < 6; v++) {
            memcpy(buf, good, n);
            buf[pos] = vals[v];
            rt_tensor t = {0};
            char err[256] = "";
            if (rt_npy_parse("m.npy", buf, n, &t, err, sizeof err))
                rt_tensor_free(&t);
            else
                assert_true(err[0] != 0 && !strchr(err, '\n'));
        }
}

/* Reading from disk: missing file, a directory, a truncated file. */
static void test_read_files(void **state) {
    (void)state;
    char *dir = tmp_dir(), path[512], err[256];
    rt_tensor t = {0};
    snprintf(path, sizeof path, "%s/missing.npy", dir);
    assert_false(rt_npy_read(path, &t, err, sizeof err));
    assert_non_null(strstr(err, "cannot open: No such file or directory"));
    assert_false(rt_npy_read(dir, &t, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
    unsigned char buf[256];
    float d[3] = {1, 2, 3};
    size_t n = make_npy(buf, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", d,
                        sizeof d);
    snprintf(path, sizeof path, "%s/t.npy", dir);
    FILE *f = fopen(path, "wb");
    assert_int_equal(fwrite(buf, 1, n - 1, f), n - 1);
    fclose(f);
    assert_false(rt_npy_read(path, &t, err, sizeof err));
    assert_non_null(
        strstr(err, "truncated data: shape (3,) of <f4 needs 12 bytes, the file has 11"));
    f = fopen(path, "wb");
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    assert_true(rt_npy_read(path, &t, err, sizeof err));
    assert_true(rt_get(&t, 2) == 3.0f);
    rt_tensor_free(&t);
    /* A FIFO is refused at once (opening it must not wait for a writer). */
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo.npy", dir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_false(rt_npy_read(fifo, &t, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
    remove(fifo);
    f = fopen(path, "wb"); /* empty file */
    fclose(f);
    assert_false(rt_npy_read(path, &t, err, sizeof err));
    assert_non_null(strstr(err, "not a .npy file"));
    rm_dir(dir);
}

/* Atomic writes: a failed write leaves no file, the old file survives. */
static void test_atomic_write(void **state) {
    (void)state;
    char *dir = tmp_dir(), path[512], err[256];
    rt_tensor t = {.dtype = IR_F32, .rank = 1, .dim = {4}};
    assert_true(rt_tensor_alloc(&t));
    /* Into a directory that does not exist. */
    snprintf(path, sizeof path, "%s/nodir/out.npy", dir);
    assert_false(rt_npy_write(path, &t, err, sizeof err));
    assert_non_null(strstr(err, "cannot write: No such file or directory"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(count_entries(dir), 0);
    /* Over an existing directory: the rename fails and the temporary goes. */
    snprintf(path, sizeof path, "%s/sub", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_false(rt_npy_write(path, &t, err, sizeof err));
    assert_non_null(strstr(err, "cannot write"));
    assert_int_equal(count_entries(dir), 1);
    rmdir(path);
    /* An unwritable directory (root may write anyway: then only check that
     * the write is complete). */
    snprintf(path, sizeof path, "%s/ro", dir);
    assert_int_equal(mkdir(path, 0555), 0);
    snprintf(path, sizeof path, "%s/ro/out.npy", dir);
    bool ok = rt_npy_write(path, &t, err, sizeof err);
    char ro[512];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    if (geteuid() != 0) {
        assert_false(ok);
        assert_non_null(strstr(err, "cannot write: Permission denied"));
        assert_int_equal(count_entries(ro), 0);
    } else {
        assert_true(ok);
        remove(path);
    }
    rmdir(ro);
    /* Replacing an existing file. */
    snprintf(path, sizeof path, "%s/x.npy", dir);
    rt_set(&t, 0, 1.0);
    assert_true(rt_npy_write(path, &t, err, sizeof err));
    rt_set(&t, 0, 2.0);
    assert_true(rt_npy_write(path, &t, err, sizeof err));
    rt_tensor r = {0};
    assert_true(rt_npy_read(path, &r, err, sizeof err));
    assert_true(rt_get(&r, 0) == 2.0);
    rt_tensor_free(&r);
    assert_int_equal(count_entries(dir), 1);
    rt_tensor_free(&t);
    rm_dir(dir);
}

/* Several outputs all or nothing: when the second path is a directory,
 * the first file is not left behind either; on success all are there. */
static void test_write_all(void **state) {
    (void)state;
    char *dir = tmp_dir(), p0[512], p1[512], p2[512], err[256];
    rt_tensor ts[3] = {{.dtype = IR_F32, .rank = 1, .dim = {4}},
                       {.dtype = IR_BF16, .rank = 0},
                       {.dtype = IR_BOOL, .rank = 2, .dim = {2, 2}}};
    for (int k = 0; k < 3; k++) assert_true(rt_tensor_alloc(&ts[k]));
    snprintf(p0, sizeof p0, "%s/out0.npy", dir);
    snprintf(p1, sizeof p1, "%s/out1.npy", dir);
    snprintf(p2, sizeof p2, "%s/out2.npy", dir);
    const char *paths[3] = {p0, p1, p2};
    assert_int_equal(mkdir(p1, 0755), 0);
    assert_false(rt_npy_write_all(paths, ts, 3, err, sizeof err));
    assert_non_null(strstr(err, "out1.npy: cannot write: Is a directory"));
    assert_int_equal(count_entries(dir), 1); /* only the directory */
    rmdir(p1);
    snprintf(p1, sizeof p1, "%s/nodir/out1.npy", dir);
    assert_false(rt_npy_write_all(paths, ts, 3, err, sizeof err));
    assert_non_null(strstr(err, "cannot write: No such file or directory"));
    assert_int_equal(count_entries(dir), 0);
    snprintf(p1, sizeof p1, "%s/out1.npy", dir);
    rt_set(&ts[1], 0, 0.5);
    assert_true(rt_npy_write_all(paths, ts, 3, err, sizeof err));
    assert_int_equal(count_entries(dir), 3);
    rt_tensor r = {0};
    assert_true(rt_npy_read(p1, &r, err, sizeof err));
    assert_int_equal(r.dtype, IR_F32);
    assert_true(rt_get(&r, 0) == 0.5);
    rt_tensor_free(&r);
    for (int k = 0; k < 3; k++) rt_tensor_free(&ts[k]);
    rm_dir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_known),       cmocka_unit_test(test_bf16_known),
        cmocka_unit_test(test_half_exhaustive), cmocka_unit_test(test_get_set_rules),
        cmocka_unit_test(test_convert),         cmocka_unit_test(test_random),
        cmocka_unit_test(test_roundtrip_all),   cmocka_unit_test(test_read_versions),
        cmocka_unit_test(test_malformed),       cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_read_files),      cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_write_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
