/* bench.c - the runtime's half of `txc bench` (the driver's driver/bench.c
 * holds the orchestration): tolerances and comparison, timing a loaded plan
 * with CUDA events (median after warm-up, L2 flushed between runs), device
 * ceilings (copy bandwidth, launch overhead), the calibration file, and the
 * text and JSON reports. The pure parts (tolerances, comparison, median,
 * rates, reference choice, calibration file, printers) are tested on
 * the CPU by tests/unit/test_cuda.c, the rest on its fake driver. The
 * contracts of exported functions are in runtime/runtime.h. */
#include "runtime/runtime.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

/* ---- tolerances and comparison ------------------------------------------ */

rt_tol rt_tolerance(ir_dtype t) {
    switch (t) {
        /* scaled: 4 ulp of the output's largest magnitude, for f16/bf16 only */
        case IR_F32: return (rt_tol){1e-5, 1e-4, 0};
        case IR_F16: return (rt_tol){1e-3, 2e-3, 4.0 / 2048};   /* 2 ulp of f16 (2^-10 each) */
        case IR_BF16: return (rt_tol){1e-2, 1.6e-2, 4.0 / 256}; /* 2 ulp of bf16 (2^-7 each) */
        default: return (rt_tol){0, 0, 0};                      /* i32, bool: exact */
    }
}

rt_tol rt_tolerance_sum(ir_dtype t, int64_t terms) {
    rt_tol tol = rt_tolerance(t);
    if (t == IR_F32 && terms > 1) tol.scaled = 4.0 * sqrt((double)terms) * 0x1p-24;
    return tol;
}

/* True when got matches want within tol (NaN only matches NaN; infinities
 * only the same infinity). */
static bool close_enough(double got, double want, rt_tol tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= tol.atol + tol.rtol * fabs(want);
}

/* Element i of t as a double: f32, bf16 (its bits are the top half of an f32's) and i32 inline
 * (the verification loops are hot). */
static inline double elem(const rt_tensor *t, int64_t i) {
    if (t->dtype == IR_F32) return ((const float *)t->data)[i];
    if (t->dtype == IR_BF16) {
        uint32_t u = (uint32_t)((const uint16_t *)t->data)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    if (t->dtype == IR_I32) return ((const int32_t *)t->data)[i];
    return rt_get(t, i);
}

/* One comparison over parts: pass 1 finds each part's largest finite |ref|,
 * pass 2 compares with the scaled tolerance of the whole tensor's. */
typedef struct cmp_job {
    const rt_tensor *got, *ref;
    rt_tol tol, wide;
    double absmax[RT_PAR_MAX];
    rt_cmp part[RT_PAR_MAX];
} cmp_job;

static void cmp_absmax(void *arg, unsigned part, int64_t lo, int64_t hi) {
    cmp_job *j = arg;
    double m = 0;
    for (int64_t i = lo; i < hi; i++) {
        double w = fabs(elem(j->ref, i));
        if (isfinite(w) && w > m) m = w;
    }
    j->absmax[part] = m;
}

/* Pass 2 (with tol.scaled == 0, the only pass: the widened tolerance is the plain one, and the
 * largest |ref| is taken here too). The relative error is divided out only when it can be a new
 * maximum. */
static void cmp_part(void *arg, unsigned part, int64_t lo, int64_t hi) {
    cmp_job *j = arg;
    rt_cmp c = {.first_bad = -1};
    bool one_pass = j->tol.scaled == 0;
    double absmax = 0;
    for (int64_t i = lo; i < hi; i++) {
        double g = elem(j->got, i), w = elem(j->ref, i);
        if (isfinite(g) && isfinite(w)) {
            double a = fabs(g - w), aw = fabs(w);
            if (aw > absmax) absmax = aw;
            c.max_abs = a > c.max_abs ? a : c.max_abs;
            if (a > c.max_rel * aw) {
                double r = w != 0 ? a / aw : INFINITY;
                c.max_rel = r > c.max_rel ? r : c.max_rel;
            }
        } else if (one_pass && isfinite(w) && fabs(w) > absmax) {
            absmax = fabs(w);
        }
        if (!one_pass && !close_enough(g, w, j->wide)) c.bad_scaled++;
        if (!close_enough(g, w, j->tol) && c.bad++ == 0) {
            c.first_bad = i;
            c.got = g;
            c.want = w;
        }
    }
    if (one_pass) c.bad_scaled = c.bad;
    j->absmax[part] = absmax;
    j->part[part] = c;
}

bool rt_compare(const rt_tensor *got, const rt_tensor *ref, rt_tol tol, rt_cmp *cmp, char *err,
                size_t cap) {
    int64_t n;
    memset(cmp, 0, sizeof *cmp);
    cmp->first_bad = -1;
    cmp->bad = -1;
    if (!got || !ref || got->dtype != ref->dtype || got->rank != ref->rank) {
        snprintf(err, cap, "output has %s rank %u, the reference %s rank %u",
                 got ? ir_dtype_name(got->dtype) : "?", got ? got->rank : 0,
                 ref ? ir_dtype_name(ref->dtype) : "?", ref ? ref->rank : 0);
        return false;
    }
    for (unsigned d = 0; d < got->rank; d++)
        if (got->dim[d] != ref->dim[d]) {
            snprintf(err, cap, "output dim %u is %lld, the reference's is %lld", d,
                     (long long)got->dim[d], (long long)ref->dim[d]);
            return false;
        }
    n = rt_numel(got);
    cmp->bad = 0;
    cmp_job *j = ir_xcalloc(1, sizeof *j);
    j->got = got;
    j->ref = ref;
    j->tol = tol;
    unsigned parts = 0;
    if (tol.scaled != 0) { /* the widened tolerance needs the largest |ref| first */
        parts = rt_par_for(n, 1 << 20, cmp_absmax, j);
        for (unsigned p = 0; p < parts; p++)
            if (j->absmax[p] > cmp->ref_absmax) cmp->ref_absmax = j->absmax[p];
    }
    j->wide = (rt_tol){tol.atol + tol.scaled * cmp->ref_absmax, tol.rtol, 0};
    parts = rt_par_for(n, 1 << 20, cmp_part, j);
    for (unsigned p = 0; tol.scaled == 0 && p < parts; p++)
        if (j->absmax[p] > cmp->ref_absmax) cmp->ref_absmax = j->absmax[p];
    for (unsigned p = 0; p < parts; p++) { /* in index order: the first bad is the first part's */
        const rt_cmp *c = &j->part[p];
        cmp->max_abs = c->max_abs > cmp->max_abs ? c->max_abs : cmp->max_abs;
        cmp->max_rel = c->max_rel > cmp->max_rel ? c->max_rel : cmp->max_rel;
        cmp->bad_scaled += c->bad_scaled;
        if (c->bad && cmp->bad == 0) {
            cmp->first_bad = c->first_bad;
            cmp->got = c->got;
            cmp->want = c->want;
        }
        cmp->bad += c->bad;
    }
    free(j);
    cmp->n = n;
    return true;
}

/* True when element i of t still holds the 0xFF poison pattern. */
static bool is_poison(const rt_tensor *t, int64_t i) {
    int s = ir_dtype_size(t->dtype);
    const unsigned char *p = (const unsigned char *)t->data + i * s;
    for (int k = 0; k < s; k++)
        if (p[k] != 0xFF) return false;
    return true;
}

/* Poisoned elements of one part. */
typedef struct poison_job {
    const rt_tensor *t;
    int64_t count[RT_PAR_MAX];
} poison_job;

static void poison_part(void *arg, unsigned part, int64_t lo, int64_t hi) {
    poison_job *j = arg;
    int64_t c = 0;
    if (j->t->dtype == IR_F32) {
        const uint32_t *u = j->t->data;
        for (int64_t i = lo; i < hi; i++) c += u[i] == 0xFFFFFFFFu;
    } else {
        for (int64_t i = lo; i < hi; i++) c += is_poison(j->t, i);
    }
    j->count[part] = c;
}

int64_t rt_count_poison(const rt_tensor *t) {
    int64_t c = 0;
    if (t->dtype == IR_I32) /* -1 is a legitimate i32 value */
        return 0;
    poison_job *j = ir_xcalloc(1, sizeof *j);
    j->t = t;
    unsigned parts = rt_par_for(rt_numel(t), 1 << 20, poison_part, j);
    for (unsigned p = 0; p < parts; p++) c += j->count[p];
    free(j);
    return c;
}

/* ---- statistics ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rt_median(double *v, size_t n) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double rt_gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0; }
double rt_tflops(double flops, double us) { return us > 0 ? flops / (us * 1e6) : 0; }

const char *rt_bench_pick_reference(double elems, double flops) {
    if (elems <= (double)(1 << 23) && flops <= 2e8) return "ref";
    if (flops <= 4e10) return "cpu";
    return NULL;
}

/* ---- calibration file ---------------------------------------------------- */

void rt_gpu_slug(const char *device, char *buf, size_t cap) {
    static const char *skip[] = {"nvidia", "geforce", "tesla", "quadro"};
    size_t n = 0;
    const char *s = device;
    buf[0] = 0;
    while (*s && n + 1 < cap) {
        const char *e;
        bool digit = false, skipped = false;
        while (*s == ' ') s++;
        e = s;
        while (*e && *e != ' ') e++;
        for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
            if ((size_t)(e - s) == strlen(skip[k]) && strncasecmp(s, skip[k], (size_t)(e - s)) == 0)
                skipped = true;
        for (const char *q = s; !skipped && q < e && isalnum((unsigned char)*q) && n + 1 < cap;
             q++) {
            buf[n++] = (char)tolower((unsigned char)*q);
            digit |= isdigit((unsigned char)*q) != 0;
        }
        buf[n] = 0;
        if (digit) break;
        s = e;
    }
    if (!buf[0]) snprintf(buf, cap, "gpu");
}

bool rt_calib_default_path(const char *device, char *buf, size_t cap) {
    char slug[64];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    rt_gpu_slug(device, slug, sizeof slug);
    if (xdg && xdg[0])
        snprintf(buf, cap, "%s/tx/calib-%s.json", xdg, slug);
    else if (home && home[0])
        snprintf(buf, cap, "%s/.cache/tx/calib-%s.json", home, slug);
    else
        return false;
    return true;
}

/* Creates the directories above `path` (like mkdir -p of its dirname). */
static void mkdir_parents(const char *path) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0777);
            *p = '/';
        }
}

/* Writes a JSON string (escaping quotes, backslashes and control bytes). */
static void json_put_str(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(out, "\\u%04x", *s);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

bool rt_calib_save(const char *path, const rt_calib *cal, char *err, size_t cap) {
    mkdir_parents(path);
    rt_outset *set = rt_outset_new();
    FILE *f = rt_outset_open(set, path, err, cap);
    bool ok = f != NULL;
    if (ok) {
        fprintf(f, "{\"gpu\": ");
        json_put_str(f, cal->gpu);
        fprintf(f, ", \"slug\": ");
        json_put_str(f, cal->slug);
        fprintf(
            f,
            ", \"cc\": %d, \"sms\": %d, \"l2_bytes\": %lld, \"copy_GBps\": %.1f, "
            "\"launch_us\": %.3f, "
            "\"driver\": %d, \"mem_latency_us\": %.4f, \"tc_TFLOPs\": %.1f, \"sfu_Gops\": %.1f, "
            "\"kernel_us\": %.3f}\n",
            cal->cc, cal->sms, (long long)cal->l2_bytes, cal->copy_GBps, cal->launch_us,
            cal->driver, cal->mem_latency_us, cal->tc_TFLOPs, cal->sfu_Gops, cal->kernel_us);
        ok = rt_outset_commit(set, err, cap);
    }
    rt_outset_free(set);
    return ok;
}

/* Finds "key": in [s, e) outside strings; returns the text after the colon. */
static const char *json_key(const char *s, const char *e, const char *key) {
    size_t k = strlen(key);
    bool in_str = false;
    for (const char *p = s; p < e; p++) {
        if (*p == '\\' && in_str) {
            p++;
            continue;
        }
        if (*p != '"') continue;
        if (!in_str && (size_t)(e - p) > k + 1 && strncmp(p + 1, key, k) == 0 && p[k + 1] == '"') {
            const char *q = p + k + 2;
            while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
            if (q < e && *q == ':') {
                q++;
                while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
                return q;
            }
        }
        in_str = !in_str;
    }
    return NULL;
}

/* Reads the number of "key" in [s, e); false when absent, null or not a number. */
static bool json_num(const char *s, const char *e, const char *key, double *v) {
    const char *p = json_key(s, e, key);
    char *end;
    if (!p) return false;
    *v = strtod(p, &end);
    return end != p && end <= e;
}

/* Reads the string of "key" in [s, e) into buf (no escapes kept). */
static bool json_str(const char *s, const char *e, const char *key, char *buf, size_t cap) {
    const char *p = json_key(s, e, key);
    size_t n = 0;
    if (!p || *p != '"') return false;
    for (p++; p < e && *p != '"' && n + 1 < cap; p++)
        buf[n++] = *p == '\\' && p + 1 < e ? *++p : *p;
    buf[n] = 0;
    return true;
}

bool rt_calib_parse(const char *text, rt_calib *cal, char *err, size_t cap) {
    const char *e = text + strlen(text);
    double v;
    memset(cal, 0, sizeof *cal);
    if (!json_num(text, e, "copy_GBps", &cal->copy_GBps) ||
        !json_num(text, e, "launch_us", &cal->launch_us) || !(cal->copy_GBps > 0) ||
        !(cal->launch_us >= 0)) {
        snprintf(err, cap, "calibration file lacks positive \"copy_GBps\" and \"launch_us\"");
        return false;
    }
    json_str(text, e, "gpu", cal->gpu, sizeof cal->gpu);
    json_str(text, e, "slug", cal->slug, sizeof cal->slug);
    if (json_num(text, e, "cc", &v)) cal->cc = (int)v;
    if (json_num(text, e, "sms", &v)) cal->sms = (int)v;
    if (json_num(text, e, "l2_bytes", &v)) cal->l2_bytes = (int64_t)v;
    if (json_num(text, e, "driver", &v)) cal->driver = (int)v;
    if (json_num(text, e, "mem_latency_us", &v) && v > 0 && v < 1e3) cal->mem_latency_us = v;
    if (json_num(text, e, "tc_TFLOPs", &v) && v > 0 && v < 1e5) cal->tc_TFLOPs = v;
    if (json_num(text, e, "sfu_Gops", &v) && v > 0 && v < 1e7) cal->sfu_Gops = v;
    if (json_num(text, e, "kernel_us", &v) && v > 0 && v < 1e3) cal->kernel_us = v;
    return true;
}

bool rt_calib_load(const char *path, rt_calib *cal, char *err, size_t cap) {
    char why[256], rerr[1100];
    size_t n;
    char *buf = rt_file_read_all(path, 65536, &n, rerr,
                                 sizeof rerr); /* a regular file only: a FIFO would block */
    if (!buf) {
        snprintf(err, cap, "cannot read calibration file %s", rerr);
        return false;
    }
    bool ok = rt_calib_parse(buf, cal, why, sizeof why);
    free(buf);
    if (!ok) {
        snprintf(err, cap, "%s: %s", path, why);
        return false;
    }
    return true;
}

/* ---- device ceilings ------------------------------------------------------ */

static const char empty_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n\n"
                                ".visible .entry tx_empty()\n{\n\tret;\n}\n";

/* A pair of timing events on one context. */
typedef struct timer {
    rt_cuda *c;
    rt_event e0, e1;
} timer;

/* Creates both events of t on c; false with the driver error. */
static bool timer_new(rt_cuda *c, timer *t) {
    t->c = c;
    t->e0 = t->e1 = NULL;
    return rt_event_new(c, &t->e0) && rt_event_new(c, &t->e1);
}

/* Destroys t's events (NULL ones are skipped). */
static void timer_free(timer *t) {
    rt_event_free(t->c, t->e0);
    rt_event_free(t->c, t->e1);
}

/* Device-to-device copy bandwidth (bytes read + written per second) over
 * up to 1 GiB, the median of 10 copies. */
bool rt_measure_copy(rt_cuda *c, double *GBps) {
    const rt_cuda_info *in = rt_cuda_get_info(c);
    size_t bytes = (size_t)1 << 30;
    rt_devptr a = 0, b = 0;
    double t[10], us;
    timer tm = {0};
    bool ok;
    while (in->total_mem > 0 && (int64_t)bytes * 4 > in->total_mem) bytes /= 2;
    ok = rt_cuda_alloc(c, bytes, "the copy-bandwidth source", &a) &&
         rt_cuda_alloc(c, bytes, "the copy-bandwidth destination", &b) && timer_new(c, &tm);
    for (int i = -2; ok && i < 10; i++) {
        ok = rt_event_record(c, tm.e0) && rt_cuda_copy(c, b, a, bytes, "the bandwidth test") &&
             rt_event_record(c, tm.e1) && rt_event_elapsed_us(c, tm.e0, tm.e1, &us);
        if (ok && i >= 0) t[i] = us;
    }
    if (ok) *GBps = rt_gbps(2.0 * (double)bytes, rt_median(t, 10));
    if (tm.c) timer_free(&tm);
    rt_cuda_release(c, a);
    rt_cuda_release(c, b);
    return ok;
}

/* Launch overhead: time per launch of an empty kernel launched 200 times
 * back to back, the median of 5 batches. */
bool rt_measure_launch(rt_cuda *c, double *us_per) {
    static const uint32_t one[3] = {1, 1, 1};
    rt_module *m = rt_module_load(c, empty_ptx);
    rt_func f;
    double t[5], us;
    timer tm = {0};
    bool ok = m && rt_module_func(m, "tx_empty", &f) && timer_new(c, &tm);
    for (int i = -1; ok && i < 5; i++) {
        ok = rt_event_record(c, tm.e0);
        for (int k = 0; ok && k < 200; k++)
            ok = rt_cuda_launch(c, f, "tx_empty", one, one, 0, NULL);
        ok = ok && rt_event_record(c, tm.e1) && rt_event_elapsed_us(c, tm.e0, tm.e1, &us);
        if (ok && i >= 0) t[i] = us / 200.0;
    }
    if (ok) *us_per = rt_median(t, 5);
    if (tm.c) timer_free(&tm);
    rt_module_free(m);
    return ok;
}

bool rt_measure_kernel(rt_cuda *c, double *us) {
    static const uint32_t one[3] = {1, 1, 1};
    enum { BUSY = 64 << 20, RUNS = 9 };
    rt_module *m = rt_module_load(c, empty_ptx);
    rt_func f;
    rt_devptr busy = 0;
    double t[RUNS];
    timer tm = {0};
    bool ok = m && rt_module_func(m, "tx_empty", &f) && timer_new(c, &tm) &&
              rt_cuda_alloc(c, BUSY, "the launch probe's buffer", &busy);
    for (int i = -2; ok && i < RUNS; i++) {
        ok = rt_cuda_memset8(c, busy, (uint8_t)i, BUSY, "the launch probe's buffer") &&
             rt_event_record(c, tm.e0) && rt_cuda_launch(c, f, "tx_empty", one, one, 0, NULL) &&
             rt_event_record(c, tm.e1) && rt_event_elapsed_us(c, tm.e0, tm.e1, &t[i < 0 ? 0 : i]);
    }
    if (ok) *us = rt_median(t, RUNS);
    if (busy) rt_cuda_release(c, busy);
    if (tm.c) timer_free(&tm);
    rt_module_free(m);
    return ok;
}

/* ---- timing a plan -------------------------------------------------------- */

/* Working state of one timed plan. */
typedef struct bench_run {
    rt_cuda *c;
    rt_gpu_exec *x;
    const rt_gpu_plan *p;
    rt_devptr flush; /* >= 2x L2, written between runs; 0: no flushing */
    size_t flush_bytes;
    int iters, warmup;
} bench_run;

/* Evicts the L2 cache by writing the flush buffer (outside the timing). */
static bool flush_l2(bench_run *b, int i) {
    return !b->flush ||
           rt_cuda_memset8(b->c, b->flush, (uint8_t)i, b->flush_bytes, "the L2 flush buffer");
}

/* Median time of kernel k alone, each run after an L2 flush. */
static bool time_kernel(bench_run *b, timer *tm, uint32_t k, double *med) {
    double *t = ir_xcalloc((size_t)b->iters, sizeof *t), us;
    bool ok = true;
    for (int i = -b->warmup; ok && i < b->iters; i++) {
        ok = flush_l2(b, i) && rt_event_record(b->c, tm->e0) && rt_gpu_exec_launch(b->x, k) &&
             rt_event_record(b->c, tm->e1) && rt_event_elapsed_us(b->c, tm->e0, tm->e1, &us);
        if (ok && i >= 0) t[i] = us;
    }
    if (ok) *med = rt_median(t, (size_t)b->iters);
    free(t);
    return ok;
}

/* Median time of the whole graph and the median start/end offset of each
 * kernel within it (an event after every launch). */
static bool time_graph(bench_run *b, rt_bench_result *res) {
    uint32_t nk = b->p->nkernels;
    rt_event *ev = ir_xcalloc(nk + 1, sizeof *ev);
    double *t = ir_xcalloc((size_t)b->iters * (nk + 1), sizeof *t), us;
    bool ok = true;
    for (uint32_t k = 0; ok && k <= nk; k++) ok = rt_event_new(b->c, &ev[k]);
    for (int i = -b->warmup; ok && i < b->iters; i++) {
        ok = flush_l2(b, i) && rt_event_record(b->c, ev[0]);
        for (uint32_t k = 0; ok && k < nk; k++)
            ok = rt_gpu_exec_launch(b->x, k) && rt_event_record(b->c, ev[k + 1]);
        for (uint32_t k = 1; ok && k <= nk; k++) {
            ok = rt_event_elapsed_us(b->c, ev[0], ev[k], &us);
            if (ok && i >= 0) t[(size_t)k * b->iters + i] = us;
        }
    }
    for (uint32_t k = 1; ok && k <= nk; k++) {
        double m = rt_median(&t[(size_t)k * b->iters], (size_t)b->iters);
        res->k[k - 1].end_us = m;
        res->k[k - 1].start_us = k > 1 ? res->k[k - 2].end_us : 0;
    }
    if (ok) res->graph_us = nk ? res->k[nk - 1].end_us : 0;
    for (uint32_t k = 0; k <= nk; k++) rt_event_free(b->c, ev[k]);
    free(ev);
    free(t);
    return ok;
}

/* Fills res's per-kernel rows from the plan (names and planner figures). */
void rt_bench_result_init(rt_bench_result *res, const rt_gpu_plan *p, const char *label) {
    memset(res, 0, sizeof *res);
    snprintf(res->label, sizeof res->label, "%s", label);
    res->nkernels = p->nkernels;
    res->k = ir_xcalloc(p->nkernels + 1, sizeof *res->k);
    res->predicted_us = -1;
    for (uint32_t k = 0; k < p->nkernels; k++) {
        rt_kernel_time *kt = &res->k[k];
        snprintf(kt->name, sizeof kt->name, "%s", p->kernels[k].name);
        snprintf(kt->kind, sizeof kt->kind, "%s", p->kernels[k].kind);
        kt->region = p->kernels[k].region;
        kt->bytes = p->kernels[k].bytes;
        kt->flops = p->kernels[k].flops;
        kt->predicted_us = p->kernels[k].predicted_us;
        res->bytes += kt->bytes;
        res->flops += kt->flops;
    }
}

/* Wall time in us of one flushed run of the whole graph (a warm-up), for the timing budget. */
static bool probe_graph(bench_run *b, timer *tm, double *us) {
    bool ok = flush_l2(b, 0) && rt_event_record(b->c, tm->e0);
    for (uint32_t k = 0; ok && k < b->p->nkernels; k++) ok = rt_gpu_exec_launch(b->x, k);
    return ok && rt_event_record(b->c, tm->e1) && rt_event_elapsed_us(b->c, tm->e0, tm->e1, us);
}

int rt_bench_budget_iters(int iters, double budget_s, double graph_us, uint32_t nkernels) {
    /* each timed run costs the kernels alone plus the graph, about twice the graph, and one L2
     * flush (about 30 us on an H200) per kernel plus one */
    double per = 2.0 * graph_us + 30.0 * (nkernels + 1), n;
    if (budget_s <= 0 || per <= 0) return iters;
    n = floor(budget_s * 1e6 / per) - 3; /* less the warm-ups */
    if (n >= iters) return iters;
    return n < RT_BENCH_MIN_ITERS ? (iters < RT_BENCH_MIN_ITERS ? iters : RT_BENCH_MIN_ITERS)
                                  : (int)n;
}

bool rt_bench_time(rt_cuda *c, rt_gpu_exec *x, const rt_gpu_plan *p, int iters, double budget_s,
                   rt_bench_result *res) {
    bench_run b = {c, x, p, 0, 0, iters > 0 ? iters : 20, 3};
    timer tm = {0};
    double g_us = 0;
    bool ok;
    b.flush_bytes =
        (size_t)(rt_cuda_get_info(c)->l2_bytes > 0 ? 2 * rt_cuda_get_info(c)->l2_bytes : 0);
    if (b.flush_bytes && b.flush_bytes < ((size_t)64 << 20)) b.flush_bytes = (size_t)64 << 20;
    ok = !b.flush_bytes || rt_cuda_alloc(c, b.flush_bytes, "the L2 flush buffer", &b.flush);
    res->l2_flushed = b.flush != 0;
    res->iters_asked = b.iters;
    res->budget_s = budget_s;
    ok = ok && timer_new(c, &tm);
    if (ok && budget_s > 0 && (ok = probe_graph(&b, &tm, &g_us)))
        b.iters = rt_bench_budget_iters(b.iters, budget_s, g_us, p->nkernels);
    res->iters = b.iters;
    for (uint32_t k = 0; ok && k < p->nkernels; k++) ok = time_kernel(&b, &tm, k, &res->k[k].us);
    ok = ok && time_graph(&b, res);
    if (tm.c) timer_free(&tm);
    rt_cuda_release(c, b.flush);
    return ok;
}

void rt_bench_result_free(rt_bench_result *res) {
    free(res->k);
    free(res->out);
    res->k = NULL;
    res->out = NULL;
}

bool rt_bench_check_output(const rt_tensor *got, const rt_tensor *ref, const rt_tensor *pref,
                           rt_out_check *oc, char *err, size_t cap) {
    return rt_bench_check_output_at(got, ref, pref, (ir_dtype)got->dtype, oc, err, cap);
}

bool rt_bench_check_output_at(const rt_tensor *got, const rt_tensor *ref, const rt_tensor *pref,
                              ir_dtype prec, rt_out_check *oc, char *err, size_t cap) {
    return rt_bench_check_output_sum(got, ref, pref, prec, 0, oc, err, cap);
}

bool rt_bench_check_output_sum(const rt_tensor *got, const rt_tensor *ref, const rt_tensor *pref,
                               ir_dtype prec, int64_t terms, rt_out_check *oc, char *err,
                               size_t cap) {
    oc->prec = prec;
    oc->terms = terms;
    rt_tol tol = rt_tolerance_sum(prec, terms);
    rt_cmp pc;
    oc->how = RT_VERIFY_STRICT;
    if (!rt_compare(got, ref, tol, &oc->cmp, err, cap)) return false;
    if (oc->cmp.bad == 0) return true;
    oc->strict = oc->cmp;
    if (pref) {
        if (!rt_compare(got, pref, tol, &pc, err, cap)) return false;
        if (pc.bad < oc->cmp.bad || (pc.bad_scaled == 0 && oc->cmp.bad_scaled > 0))
            oc->cmp = pc, oc->how = RT_VERIFY_PLAN;
    }
    if (oc->cmp.bad && oc->cmp.bad_scaled == 0) oc->how = RT_VERIFY_SCALED;
    return true;
}

bool rt_bench_output_ok(const rt_out_check *oc) {
    return oc->cmp.bad == 0 || (oc->how == RT_VERIFY_SCALED && oc->cmp.bad_scaled == 0);
}
/* ---- reports -------------------------------------------------------------- */

/* Sum of the measured times of the kernels of region r. */
static double region_us(const rt_bench_result *res, int r) {
    double s = 0;
    for (uint32_t k = 0; k < res->nkernels; k++)
        if (res->k[k].region == r) s += res->k[k].us;
    return s;
}

/* True when kernel k is the first of its region (predictions print there). */
static bool region_first(const rt_bench_result *res, uint32_t k) {
    for (uint32_t j = 0; j < k; j++)
        if (res->k[j].region == res->k[k].region) return false;
    return true;
}

double rt_pred_error_pct(double measured_us, double predicted_us) {
    return predicted_us > 0 && measured_us > 0 ? 100.0 * (predicted_us - measured_us) / measured_us
                                               : 0;
}

void rt_bench_print_timeline(FILE *out, const rt_bench_result *res) {
    enum { COLS = 40 };
    double total = res->graph_us > 0 ? res->graph_us : 1, prev = 0;
    fprintf(out,
            "\ntimeline (measured; median of %d whole-graph runs; a kernel's slot runs from the "
            "previous "
            "kernel's end to its own, gap_us is the part beyond its time alone):\n",
            res->iters);
    fprintf(out, "  %-6s %-10s %12s %12s %12s %10s  %s\n", "kernel", "kind", "start_us", "end_us",
            "dur_us", "gap_us", "bar");
    for (uint32_t k = 0; k < res->nkernels; k++) {
        const rt_kernel_time *kt = &res->k[k];
        double st = kt->end_us - kt->us > prev ? kt->end_us - kt->us : prev;
        int c0 = (int)floor(st / total * COLS), c1 = (int)ceil(kt->end_us / total * COLS);
        char bar[COLS + 1];
        if (c1 <= c0) c1 = c0 + 1;
        if (c1 > COLS) c1 = COLS;
        for (int i = 0; i < COLS; i++) bar[i] = i < c0 ? ' ' : i < c1 ? '#' : ' ';
        bar[COLS] = 0;
        fprintf(out, "  %-6s %-10s %12.3f %12.3f %12.3f %10.3f  |%s|\n", kt->name, kt->kind, st,
                kt->end_us, kt->end_us - st, st - prev, bar);
        prev = kt->end_us;
    }
}

/* Prints the verification lines of one result. */
void rt_bench_print_verify(FILE *out, const rt_bench_result *res) {
    for (uint32_t k = 0; k < res->nout; k++) {
        const rt_out_check *oc = &res->out[k];
        rt_tol t = oc->checked ? rt_tolerance_sum(oc->prec, oc->terms) : rt_tolerance(oc->dtype);
        fprintf(out, "  out%u %-4s ", k, ir_dtype_name(oc->dtype));
        if (oc->poisoned)
            fprintf(out, "FAIL: %lld elements never written\n", (long long)oc->poisoned);
        else if (!oc->checked && res->sample_note[0])
            fprintf(out, "written (not compared: no reference at this size; sampled check: %s)\n",
                    res->sample_note);
        else if (!oc->checked)
            fprintf(out, "written (not compared: no reference at this size, nothing sampled)\n");
        else if (!rt_bench_output_ok(oc))
            fprintf(
                out,
                "FAIL: %lld of %lld elements out of tolerance (atol %g rtol %g); first at %lld: "
                "got %.9g want %.9g\n",
                (long long)oc->cmp.bad, (long long)oc->cmp.n, t.atol, t.rtol,
                (long long)oc->cmp.first_bad, oc->cmp.got, oc->cmp.want);
        else
            fprintf(out,
                    "ok   %lld elements, max abs err %.3g, max rel err %.3g (atol %g rtol %g)\n",
                    (long long)oc->cmp.n, oc->cmp.max_abs, oc->cmp.max_rel, t.atol, t.rtol);
        if (oc->checked && oc->sampled)
            fprintf(out,
                    "       sampled: %lld elements re-computed by the host JIT (%d programs of "
                    "each kernel, "
                    "on the GPU's own inputs)\n",
                    (long long)oc->sampled, RT_SAMPLE_PROGRAMS);
        if (oc->checked && oc->how == RT_VERIFY_PLAN)
            fprintf(out, "       against the plan-precision reference (f16/bf16 values kept on "
                         "chip stay f32, as the "
                         "spec allows)\n");
        if (oc->checked && oc->how == RT_VERIFY_SCALED)
            fprintf(out,
                    "       within the scaled tolerance only: %lld elements exceed atol + rtol "
                    "|want| but not "
                    "that plus %g x the largest |want| (%.4g), as rounding differences %s\n",
                    (long long)oc->cmp.bad, t.scaled, oc->cmp.ref_absmax,
                    oc->terms > 1 && oc->prec == IR_F32
                        ? "of a correct f32 summation order do (4 ulp x sqrt of the terms)"
                        : "after chained f16/bf16 products do");
        if (oc->checked && oc->how != RT_VERIFY_STRICT)
            fprintf(out,
                    "       (the per-op-rounding reference: %lld elements out of tolerance, max "
                    "abs err %.3g)\n",
                    (long long)oc->strict.bad, oc->strict.max_abs);
    }
}

/* Outputs that were compared (fully or on a sample) with a reference. */
static uint32_t compared_outputs(const rt_bench_result *res) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < res->nout; k++) n += res->out[k].checked;
    return n;
}

/* The headline word: "verified" only when every output was compared and matched. */
const char *rt_bench_verdict(const rt_bench_result *res) {
    uint32_t c = compared_outputs(res);
    if (!res->verified) return "VERIFICATION FAILED";
    if (c == res->nout) return "verified";
    return c == 0 ? "NOT VERIFIED (no output was compared)"
                  : "verified in part (some outputs were not compared)";
}

void rt_bench_print_text(FILE *out, const rt_bench_report *rep, const rt_bench_result *res) {
    fprintf(out, "%s: %s, reference %s\n", res->label, rt_bench_verdict(res), rep->reference);
    rt_bench_print_verify(out, res);
    fprintf(out, "kernels (median of %d runs after 3 warm-up%s", res->iters,
            res->l2_flushed ? ", L2 flushed before each" : "");
    if (res->iters_asked > res->iters)
        fprintf(out, "; %d of the %d asked, to keep within the timing budget of %.3g s per plan",
                res->iters, res->iters_asked, res->budget_s);
    fputs("):\n", out);
    fprintf(out, "  %-24s %-10s %10s %9s %6s %8s %10s %8s\n", "kernel", "kind", "us", "GB/s",
            "%copy", "TFLOP/s", "pred us", "pred err");
    for (uint32_t k = 0; k < res->nkernels; k++) {
        const rt_kernel_time *kt = &res->k[k];
        double gb = rt_gbps(kt->bytes, kt->us);
        fprintf(out, "  %-24s %-10s %10.2f %9.1f %5.1f%% ", kt->name, kt->kind, kt->us, gb,
                rep->copy_GBps > 0 ? 100.0 * gb / rep->copy_GBps : 0);
        if (kt->flops > 0)
            fprintf(out, "%8.2f ", rt_tflops(kt->flops, kt->us));
        else
            fprintf(out, "%8s ", "-");
        if (kt->predicted_us > 0 && region_first(res, k))
            fprintf(out, "%10.2f %+7.1f%%\n", kt->predicted_us,
                    rt_pred_error_pct(region_us(res, kt->region), kt->predicted_us));
        else
            fprintf(out, "%10s %8s\n", "-", "-");
    }
    fprintf(out, "  %-24s %-10s %10.2f %9.1f %5.1f%% ", "graph", "", res->graph_us,
            rt_gbps(res->bytes, res->graph_us),
            rep->copy_GBps > 0 ? 100.0 * rt_gbps(res->bytes, res->graph_us) / rep->copy_GBps : 0);
    if (res->flops > 0)
        fprintf(out, "%8.2f ", rt_tflops(res->flops, res->graph_us));
    else
        fprintf(out, "%8s ", "-");
    if (res->predicted_us > 0)
        fprintf(out, "%10.2f %+7.1f%%\n", res->predicted_us,
                rt_pred_error_pct(res->graph_us, res->predicted_us));
    else
        fprintf(out, "%10s %8s\n", "-", "-");
    rt_bench_print_timeline(out, res);
}

/* Writes a number, or null when negative (unknown) or not finite. */
static void json_put_num(FILE *out, double v) {
    if (v < 0 || !isfinite(v))
        fputs("null", out);
    else
        fprintf(out, "%.6g", v);
}

/* Writes one plan's result object (see docs/runtime.md for the fields). */
static void json_result(FILE *out, const rt_bench_report *rep, const rt_bench_result *res) {
    fprintf(out, "{\"verified\": %s, \"compared_outputs\": %u, \"outputs\": %u, \"graph_us\": ",
            res->verified && compared_outputs(res) == res->nout ? "true" : "false",
            compared_outputs(res), res->nout);
    json_put_num(out, res->graph_us);
    fprintf(out, ", \"predicted_us\": ");
    json_put_num(out, res->predicted_us);
    fprintf(
        out,
        ", \"bytes\": %.0f, \"flops\": %.0f, \"GBps\": %.1f, \"pct_copy\": %.1f, \"iters\": %d, "
        "\"iters_asked\": %d, \"timing_budget_s\": %.3g, \"l2_flushed\": %s,\n   \"outputs\": [",
        res->bytes, res->flops, rt_gbps(res->bytes, res->graph_us),
        rep->copy_GBps > 0 ? 100.0 * rt_gbps(res->bytes, res->graph_us) / rep->copy_GBps : 0,
        res->iters, res->iters_asked > 0 ? res->iters_asked : res->iters, res->budget_s,
        res->l2_flushed ? "true" : "false");
    for (uint32_t k = 0; k < res->nout; k++) {
        const rt_out_check *oc = &res->out[k];
        fprintf(out,
                "%s{\"dtype\": \"%s\", \"compared\": %s, \"bad\": %lld, \"unwritten\": %lld, "
                "\"max_abs\": ",
                k ? ", " : "", ir_dtype_name(oc->dtype), oc->checked ? "true" : "false",
                (long long)oc->cmp.bad, (long long)oc->poisoned);
        json_put_num(out, oc->cmp.max_abs); /* inf when a zero reference got a non-zero value */
        fputs(", \"max_rel\": ", out);
        json_put_num(out, oc->cmp.max_rel);
        static const char *const how[] = {"strict", "plan", "scaled"};
        fprintf(out, ", \"sampled\": %lld, \"verified_by\": \"%s\", \"strict_bad\": %lld",
                (long long)oc->sampled, how[oc->how],
                (long long)(oc->how == RT_VERIFY_STRICT ? oc->cmp.bad : oc->strict.bad));
        fputc('}', out);
    }
    fputs("],\n   \"sample_note\": ", out);
    if (res->sample_note[0])
        json_put_str(out, res->sample_note);
    else
        fputs("null", out);
    fprintf(out, ",\n   \"kernels\": [");
    for (uint32_t k = 0; k < res->nkernels; k++) {
        const rt_kernel_time *kt = &res->k[k];
        fprintf(out, "%s\n    {\"name\": ", k ? "," : "");
        json_put_str(out, kt->name);
        fprintf(out,
                ", \"kind\": \"%s\", \"region\": %d, \"us\": %.3f, \"start_us\": %.3f, \"end_us\": "
                "%.3f, "
                "\"bytes\": %.0f, \"flops\": %.0f, \"GBps\": %.1f, \"TFLOPs\": %.3f, "
                "\"predicted_us\": ",
                kt->kind, kt->region, kt->us, kt->start_us, kt->end_us, kt->bytes, kt->flops,
                rt_gbps(kt->bytes, kt->us), rt_tflops(kt->flops, kt->us));
        json_put_num(out, kt->predicted_us);
        fputc('}', out);
    }
    fprintf(out, "]}");
}

const char *rt_phase_name(rt_phase p) {
    static const char *const names[RT_NPHASES] = {"inputs",       "compile", "reference",
                                                  "verification", "gpu",     "timing"};
    return (unsigned)p < RT_NPHASES ? names[p] : "?";
}

void rt_bench_print_phases(FILE *out, const rt_bench_report *rep) {
    fprintf(out, "bench wall time: %.1f s (", rep->total_s);
    for (int p = 0; p < RT_NPHASES; p++)
        fprintf(out, "%s%s %.1f s", p ? ", " : "", rt_phase_name((rt_phase)p), rep->phase_s[p]);
    fputs(")\n", out);
}

void rt_bench_print_json(FILE *out, const rt_bench_report *rep, const rt_bench_result *fused,
                         const rt_bench_result *unfused) {
    fprintf(out, "{\"program\": ");
    json_put_str(out, rep->program);
    fprintf(out, ", \"device\": ");
    json_put_str(out, rep->device);
    fprintf(out,
            ", \"cc\": %d, \"reference\": \"%s\", \"copy_GBps\": %.1f, \"launch_us\": %.3f,\n "
            "\"fused\": ",
            rep->cc, rep->reference, rep->copy_GBps, rep->launch_us);
    json_result(out, rep, fused);
    if (unfused) {
        fprintf(out, ",\n \"unfused\": ");
        json_result(out, rep, unfused);
        fprintf(out, ",\n \"speedup\": %.3f",
                fused->graph_us > 0 ? unfused->graph_us / fused->graph_us : 0);
    }
    fprintf(out, ",\n \"wall_s\": {\"total\": %.3f", rep->total_s);
    for (int p = 0; p < RT_NPHASES; p++)
        fprintf(out, ", \"%s\": %.3f", rt_phase_name((rt_phase)p), rep->phase_s[p]);
    fprintf(out, "}}\n");
}
