/* fake_cuda.c - a stand-in for libcuda.so.1 used by tests/unit/test_cuda.c
 * (built as libtx_fake_cuda.so by runtime/CMakeLists.txt; selected with
 * TX_CUDA_LIB). It implements the driver calls the runtime uses on host
 * memory, so that everything but kernel execution runs on a machine
 * without a GPU: device memory is malloc'ed (a device address is the host
 * address), copies and memsets are real, PTX "loading" records the .entry
 * names and parameter counts, launches check their arguments against them
 * and do nothing (so outputs keep the runtime's poison), events read the
 * wall clock. Failure injection: FAKE_CUDA_MEM_BYTES limits one
 * allocation (default 1 GiB) and FAKE_CUDA_TOTAL_MEM is the memory size
 * reported (default 8 GiB); a PTX containing "FAKE_JIT_ERROR" fails to
 * load with a JIT log; FAKE_CUDA_LAUNCH_LOG=PATH appends one line per
 * launch to PATH ("NAME gx gy gz bx by bz smem p0 p1 ...", each parameter
 * read as 8 bytes and printed in decimal). cuTensorMapEncodeTiled checks its
 * arguments as the driver documents them and writes "FAKETMAP", the address,
 * rank, extents, strides and box into the map; a launch checks that every
 * 128-byte parameter points at such a map (or an all-zero one: a map of an
 * empty tensor), 64-byte aligned. The device: "Fake GPU", sm_90, 132 SMs, 48 KiB of
 * shared memory per block by default, 227 KiB opt-in, 4 MiB L2. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
    OK = 0,
    E_INVALID_VALUE = 1,
    E_OUT_OF_MEMORY = 2,
    E_INVALID_PTX = 218,
    E_NOT_FOUND = 500,
    E_INVALID_HANDLE = 400,
};

typedef struct fake_func {
    char name[128];
    unsigned nparams;
    uint64_t tmap_params; /* bit i: parameter i is a 128-byte by-value tensor map */
    int max_smem;         /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1 until set */
    int static_smem;      /* bytes of the entry's `.shared ... NAME[BYTES]` declarations */
} fake_func;

typedef struct fake_module {
    fake_func *f;
    unsigned n;
} fake_module;

typedef struct fake_event {
    double t_us;
    int recorded;
} fake_event;

static size_t mem_limit(void) {
    const char *s = getenv("FAKE_CUDA_MEM_BYTES");
    return s ? (size_t)strtoull(s, NULL, 10) : (size_t)1 << 30;
}

static size_t mem_total(void) {
    const char *s = getenv("FAKE_CUDA_TOTAL_MEM");
    return s ? (size_t)strtoull(s, NULL, 10) : (size_t)8 << 30;
}

CUresult cuInit(unsigned flags) { return flags ? E_INVALID_VALUE : OK; }
CUresult cuDriverGetVersion(int *v) {
    *v = 13000;
    return OK;
}
CUresult cuDeviceGet(int *d, int ordinal) {
    *d = ordinal;
    return ordinal == 0 ? OK : 101;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    switch (attr) {
        case 1: *v = 1024; break;             /* max threads per block */
        case 8: *v = 48 * 1024; break;        /* shared memory per block */
        case 16: *v = 132; break;             /* SMs */
        case 38: *v = 4 * 1024 * 1024; break; /* L2 */
        case 75: *v = 9; break;
        case 76: *v = 0; break;
        case 97: *v = 232448; break; /* opt-in shared memory */
        default: *v = 0;
    }
    return dev == 0 ? OK : 101;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
    snprintf(name, (size_t)len, "Fake GPU");
    return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int dev) {
    *b = mem_total();
    return OK;
}
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev) {
    *ctx = malloc(1);
    return OK;
}
CUresult cuCtxDestroy_v2(void *ctx) {
    free(ctx);
    return OK;
}
CUresult cuCtxSynchronize(void) { return OK; }
static char fake_primary;
static void *fake_current;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    *ctx = &fake_primary;
    return dev == 0 ? OK : 101;
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 0 ? OK : 101; }
CUresult cuCtxSetCurrent(void *ctx) {
    fake_current = ctx;
    return OK;
}
CUresult cuCtxGetCurrent(void **ctx) {
    *ctx = fake_current;
    return OK;
}
CUresult cuStreamSynchronize(void *s) { return OK; }

/* Records every ".entry NAME(" of the PTX with its number of .param lines. */
CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
    const char *ptx = image, *s = ptx;
    fake_module *m;
    if (strstr(ptx, "FAKE_JIT_ERROR")) {
        for (unsigned i = 0; i < n; i++)
            if (opts[i] == 5) /* CU_JIT_ERROR_LOG_BUFFER */
                snprintf(vals[i], 256,
                         "ptxas application ptx input, line 7; error   : Unknown symbol 'bad'\n"
                         "ptxas fatal   : Ptx assembly aborted due to errors\n");
        return E_INVALID_PTX;
    }
    m = calloc(1, sizeof *m);
    while ((s = strstr(s, ".entry ")) != NULL) {
        const char *e = strchr(s, '('), *close = e ? strchr(e, ')') : NULL;
        fake_func *f;
        s += 7;
        if (!e || !close) break;
        m->f = realloc(m->f, (m->n + 1) * sizeof *m->f);
        f = &m->f[m->n++];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%.*s", (int)(e - s), s);
        f->max_smem = -1;
        const char *end = strstr(close, ".entry "); /* the body runs to the next entry */
        for (const char *q = strstr(close, ".shared ."); q && (!end || q < end);
             q = strstr(q + 1, ".shared .")) {
            const char *eol = strchr(q, '\n'), *br = strchr(q, '[');
            if (br && (!eol || br < eol) && strncmp(q - 8, ".extern ", 8) != 0)
                f->static_smem += atoi(br + 1);
        }
        for (const char *q = strstr(e, ".param"); q && q < close; q = strstr(q + 1, ".param")) {
            const char *eol = strchr(q, '\n');
            const char *b128 = strstr(q, "[128]");
            if (b128 && (!eol || b128 < eol) && f->nparams < 64)
                f->tmap_params |= (uint64_t)1 << f->nparams;
            f->nparams++;
        }
    }
    *mod = m;
    return OK;
}

CUresult cuModuleUnload(void *mod) {
    fake_module *m = mod;
    free(m->f);
    free(m);
    return OK;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
    fake_module *m = mod;
    for (unsigned i = 0; i < m->n; i++)
        if (strcmp(m->f[i].name, name) == 0) {
            *fn = &m->f[i];
            return OK;
        }
    return E_NOT_FOUND;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    void *m = bytes <= mem_limit() ? malloc(bytes) : NULL;
    if (!m) return E_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
    free((void *)(uintptr_t)p);
    return OK;
}
CUresult cuMemGetInfo_v2(size_t *fr, size_t *total) {
    *fr = mem_limit();
    *total = mem_total();
    return OK;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
    if (!d || !s) return E_INVALID_VALUE;
    memcpy((void *)(uintptr_t)d, s, n);
    return OK;
}

CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
    if (!d || !s) return E_INVALID_VALUE;
    memcpy(d, (const void *)(uintptr_t)s, n);
    return OK;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
    if (!d || !s) return E_INVALID_VALUE;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return OK;
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
    if (!d) return E_INVALID_VALUE;
    memset((void *)(uintptr_t)d, v, n);
    return OK;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
    fake_func *f = fn;
    if (attr != 8 || value < 0 || value + f->static_smem > 232448) return E_INVALID_VALUE;
    f->max_smem = value;
    return OK;
}

/* Checks the launch like the driver would; runs nothing. */
/* What cuTensorMapEncodeTiled writes into the 128 bytes (a test reads it back). */
typedef struct fake_tmap {
    char magic[8]; /* "FAKETMAP" */
    uint64_t addr;
    uint32_t dtype, rank, swizzle, pad;
    uint64_t dim[2], stride;
    uint32_t box[2];
} fake_tmap;

CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr,
                                const unsigned long long *dims, const unsigned long long *strides,
                                const unsigned *box, const unsigned *estr, int interleave,
                                int swizzle, int l2, int oob) {
    static const unsigned esize[13] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    fake_tmap t;
    if (!map || ((uintptr_t)map & 63) || dtype < 0 || dtype > 12 || rank < 1 || rank > 5 ||
        ((uintptr_t)addr & 15) || swizzle < 0 || swizzle > 3 || interleave != 0 || l2 < 0 ||
        l2 > 3 || oob < 0 || oob > 1)
        return E_INVALID_VALUE;
    for (unsigned i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > (1ull << 32) || box[i] < 1 || box[i] > 256 || estr[i] < 1 ||
            estr[i] > 8)
            return E_INVALID_VALUE;
        if (i + 1 < rank && (strides[i] % 16 || strides[i] >= (1ull << 40))) return E_INVALID_VALUE;
    }
    if (swizzle && box[0] * esize[dtype] > (16u << swizzle)) return E_INVALID_VALUE;
    memset(&t, 0, sizeof t);
    memcpy(t.magic, "FAKETMAP", 8);
    t.addr = (uint64_t)(uintptr_t)addr;
    t.dtype = (uint32_t)dtype, t.rank = rank, t.swizzle = (uint32_t)swizzle;
    t.dim[0] = dims[0], t.dim[1] = rank > 1 ? dims[1] : 1, t.stride = rank > 1 ? strides[0] : 0;
    t.box[0] = box[0], t.box[1] = rank > 1 ? box[1] : 1;
    memset(map, 0, 128);
    memcpy(map, &t, sizeof t);
    return OK;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
    fake_func *f = fn;
    /* like the driver: without the attribute, static + dynamic <= 48 KiB */
    int limit = !f ? 0 : f->max_smem >= 0 ? f->max_smem : 48 * 1024 - f->static_smem;
    if (!f || !gx || !gy || !gz || !bx || !by || !bz || (unsigned long)bx * by * bz > 1024 ||
        (int)smem > limit)
        return E_INVALID_VALUE;
    if (f->nparams && !params) return E_INVALID_VALUE;
    for (unsigned i = 0; i < f->nparams && i < 64; i++)
        if ((f->tmap_params >> i & 1) && params[i] &&
            (((uintptr_t)params[i] & 63) || (memcmp(params[i], "FAKETMAP", 8) != 0 &&
                                             memcmp(params[i], "\0\0\0\0\0\0\0\0", 8) != 0)))
            return E_INVALID_VALUE;
    for (unsigned i = 0; i < f->nparams; i++)
        if (!params[i]) return E_INVALID_VALUE;
    const char *log = getenv("FAKE_CUDA_LAUNCH_LOG");
    FILE *lf = log && *log ? fopen(log, "a") : NULL;
    if (lf) {
        fprintf(lf, "%s %u %u %u %u %u %u %u", f->name, gx, gy, gz, bx, by, bz, smem);
        for (unsigned i = 0; i < f->nparams; i++) {
            long long v;
            memcpy(&v, params[i], sizeof v);
            fprintf(lf, " %lld", v);
        }
        fputc('\n', lf);
        fclose(lf);
    }
    return OK;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

CUresult cuEventCreate(void **e, unsigned flags) {
    *e = calloc(1, sizeof(fake_event));
    return OK;
}
CUresult cuEventDestroy_v2(void *e) {
    free(e);
    return OK;
}
CUresult cuEventSynchronize(void *e) { return e ? OK : E_INVALID_HANDLE; }

CUresult cuEventRecord(void *e, void *stream) {
    fake_event *ev = e;
    ev->t_us = now_us();
    ev->recorded = 1;
    return OK;
}

CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
    fake_event *x = a, *y = b;
    if (!x->recorded || !y->recorded) return E_INVALID_HANDLE;
    *ms = (float)((y->t_us - x->t_us) / 1000.0);
    return OK;
}

CUresult cuGetErrorName(CUresult r, const char **s) {
    switch (r) {
        case E_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
        case E_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return OK;
        case E_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
        case E_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
        default: return E_INVALID_VALUE;
    }
}

CUresult cuGetErrorString(CUresult r, const char **s) {
    switch (r) {
        case E_INVALID_VALUE: *s = "invalid argument"; return OK;
        case E_OUT_OF_MEMORY: *s = "out of memory"; return OK;
        case E_INVALID_PTX: *s = "a PTX JIT compilation failed"; return OK;
        case E_NOT_FOUND: *s = "named symbol not found"; return OK;
        default: return E_INVALID_VALUE;
    }
}
