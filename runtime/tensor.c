/* tensor.c - host tensors: allocation, element access at every dtype (the
 * f16/bf16 conversions are ir/half.c), dtype conversion, random fill. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "runtime/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int64_t rt_numel(const rt_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        if (t->dim[i] < 0 || !ir_mul_ok(n, t->dim[i], &n)) return -1;
    return n;
}

bool rt_tensor_bytes(const rt_tensor *t, size_t *bytes) {
    int64_t n = rt_numel(t), b;
    if (n < 0 || n >= IR_MAX_ELEMS || t->dtype >= IR_NDTYPES) return false;
    if (!ir_mul_ok(n, ir_dtype_size(t->dtype), &b) || (uint64_t)b > (uint64_t)SIZE_MAX)
        return false;
    *bytes = (size_t)b;
    return true;
}

/* Zeroes bytes [lo, hi) of the buffer at arg. */
static void zero_part(void *arg, unsigned part, int64_t lo, int64_t hi) {
    (void)part;
    memset((char *)arg + lo, 0, (size_t)(hi - lo));
}

bool rt_tensor_alloc(rt_tensor *t) {
    size_t bytes;
    t->data = NULL;
    char why[8];
    if (!rt_tensor_bytes(t, &bytes) || !ir_host_mem_check((double)bytes, "", why, sizeof why))
        return false;
    if (bytes < RT_BIG_TENSOR) {
        t->data = calloc(bytes ? bytes : 1, 1);
        return t->data != NULL;
    }
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) return false;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without THP, 4 KiB pages */
#endif
    rt_par_for((int64_t)bytes, (int64_t)16 << 20, zero_part, p);
    t->data = p;
    return true;
}

void rt_tensor_free(rt_tensor *t) {
    if (!t) return;
    free(t->data);
    t->data = NULL;
}

/* ---- element access ------------------------------------------------------ */
int32_t rt_double_to_i32(double v) {
    if (isnan(v)) return 0;
    if (v >= 2147483647.0) return INT32_MAX;
    if (v <= -2147483648.0) return INT32_MIN;
    return (int32_t)v; /* truncation toward zero */
}

double rt_get(const rt_tensor *t, int64_t i) {
    switch (t->dtype) {
        case IR_F32: return ((const float *)t->data)[i];
        case IR_F16: return ir_f16_to_f64(((const uint16_t *)t->data)[i]);
        case IR_BF16: return ir_bf16_to_f64(((const uint16_t *)t->data)[i]);
        case IR_I32: return ((const int32_t *)t->data)[i];
        case IR_BOOL: return ((const uint8_t *)t->data)[i] != 0;
        default: return NAN;
    }
}

void rt_set(rt_tensor *t, int64_t i, double v) {
    switch (t->dtype) {
        case IR_F32: ((float *)t->data)[i] = (float)v; break; /* C conversion: nearest even */
        case IR_F16: ((uint16_t *)t->data)[i] = ir_f64_to_f16(v); break;
        case IR_BF16: ((uint16_t *)t->data)[i] = ir_f64_to_bf16(v); break;
        case IR_I32: ((int32_t *)t->data)[i] = rt_double_to_i32(v); break;
        case IR_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
        default: break;
    }
}

bool rt_tensor_cast(const rt_tensor *src, ir_dtype to, rt_tensor *dst) {
    rt_tensor r = *src;
    r.dtype = to;
    if (!rt_tensor_alloc(&r)) return false;
    int64_t n = rt_numel(src);
    if (src->dtype == to) {
        size_t bytes;
        rt_tensor_bytes(src, &bytes);
        if (bytes) memcpy(r.data, src->data, bytes);
    } else {
        for (int64_t i = 0; i < n; i++) rt_set(&r, i, rt_get(src, i));
    }
    *dst = r;
    return true;
}

/* The .npy descr a dtype is stored as (bf16 crosses the boundary as <f4). */
static const char *npy_descr(ir_dtype t) {
    switch (t) {
        case IR_F16: return "<f2";
        case IR_I32: return "<i4";
        case IR_BOOL: return "|b1";
        default: return "<f4";
    }
}

bool rt_tensor_convert(rt_tensor *t, ir_dtype to, char *err, size_t cap) {
    if (t->dtype == to) return true;
    if (!(t->dtype == IR_F32 && to == IR_BF16)) {
        if (err && cap)
            snprintf(err, cap, "file holds %s (%s), parameter is %s", npy_descr(t->dtype),
                     ir_dtype_name(t->dtype), ir_dtype_name(to));
        return false;
    }
    rt_tensor r;
    if (!rt_tensor_cast(t, to, &r)) {
        if (err && cap) snprintf(err, cap, "out of memory converting to %s", ir_dtype_name(to));
        return false;
    }
    rt_tensor_free(t);
    *t = r;
    return true;
}

/* ---- deterministic random fill ------------------------------------------- */
/* SplitMix64 output function (Steele, Lea, Flood 2014). */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Initial state of parameter `param`'s stream: independent streams per
 * parameter, fully determined by (seed, param). */
static uint64_t random_state(uint64_t seed, uint32_t param) {
    return mix64(seed) ^ mix64(0x9E3779B97F4A7C15ull * ((uint64_t)param + 1));
}

/* Next 64 random bits of a SplitMix64 stream. */
static uint64_t random_next(uint64_t *state) {
    *state += 0x9E3779B97F4A7C15ull;
    return mix64(*state);
}

/* Precision in bits of the random grid for a float dtype: every value
 * k / 2^(p-1) - 1 with k < 2^p is exact in the dtype, so the stored values
 * lie in [-1, 1) without rounding. */
static int random_bits(ir_dtype t) { return t == IR_F16 ? 11 : t == IR_BF16 ? 8 : 24; }

/* One part of a fill: element i takes the stream's (i+1)-th output. f16 and bf16 take their
 * grid value's bits from `half` (2^p entries: the grid is exact in the dtype, so the table holds
 * what rt_set would store). */
typedef struct fill_job {
    rt_tensor *t;
    uint64_t st;
    int p;
    const uint16_t *half;
} fill_job;

static void fill_part(void *arg, unsigned part, int64_t lo, int64_t hi) {
    fill_job *j = arg;
    uint64_t st = j->st + 0x9E3779B97F4A7C15ull * (uint64_t)lo;
    (void)part;
    if (j->t->dtype == IR_F32) { /* exact: k / 2^23 - 1 with k < 2^24 */
        float *f = j->t->data;
        for (int64_t i = lo; i < hi; i++)
            f[i] = (float)(int32_t)(random_next(&st) >> 40) * 0x1p-23f - 1.0f;
        return;
    }
    if (j->half) {
        uint16_t *h = j->t->data;
        for (int64_t i = lo; i < hi; i++) h[i] = j->half[random_next(&st) >> (64 - j->p)];
        return;
    }
    for (int64_t i = lo; i < hi; i++) {
        uint64_t r = random_next(&st);
        double v;
        if (j->t->dtype == IR_I32)
            v = (double)(int64_t)(r >> 60) - 8.0;
        else if (j->t->dtype == IR_BOOL)
            v = (double)(r >> 63);
        else
            v = ldexp((double)(r >> (64 - j->p)), 1 - j->p) - 1.0;
        rt_set(j->t, i, v);
    }
}

void rt_fill_random(rt_tensor *t, uint64_t seed, uint32_t param) {
    uint16_t half[1 << 11];
    fill_job j = {t, random_state(seed, param), random_bits(t->dtype), NULL};
    if (t->dtype == IR_F16 || t->dtype == IR_BF16) {
        rt_tensor one = {.dtype = t->dtype, .rank = 1, .dim = {1}, .data = &half[0]};
        for (int k = 0; k < 1 << j.p; k++) {
            one.data = &half[k];
            rt_set(&one, 0, ldexp((double)k, 1 - j.p) - 1.0);
        }
        j.half = half;
    }
    rt_par_for(rt_numel(t), 1 << 20, fill_part, &j);
}
