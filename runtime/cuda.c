/* cuda.c - the CUDA driver API, loaded with dlopen at run time.
 *
 * No CUDA header or library is needed to build: the few types, enum values
 * and function signatures used are declared here (values from cuda.h of
 * CUDA 13, stable since CUDA 4). Versioned symbols (_v2) are preferred, as
 * cuda.h maps the plain names to them. Every failing driver call leaves one
 * line "cuXxx failed while DOING: CUDA_ERROR_NAME (driver text)" in the
 * context's error buffer. Contracts of exported functions are in
 * runtime/runtime.h. */
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUevent;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};
enum { /* CUdevice_attribute */
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
       CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
       CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

#define RT_JIT_LOG 16384 /* bytes of each JIT log kept */

/* The driver entry points: X(field, symbol, fallback symbol, signature). */
#define RT_CU_FUNCS(X)                                                                             \
    X(Init, "cuInit", "", (unsigned))                                                              \
    X(DriverGetVersion, "cuDriverGetVersion", "", (int *))                                         \
    X(DeviceGet, "cuDeviceGet", "", (CUdevice *, int))                                             \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", "", (int *, int, CUdevice))                      \
    X(DeviceGetName, "cuDeviceGetName", "", (char *, int, CUdevice))                               \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem", (size_t *, CUdevice))             \
    X(CtxCreate, "cuCtxCreate_v2", "cuCtxCreate", (CUcontext *, unsigned, CUdevice))               \
    X(CtxDestroy, "cuCtxDestroy_v2", "cuCtxDestroy", (CUcontext))                                  \
    X(CtxSynchronize, "cuCtxSynchronize", "", (void))                                              \
    X(CtxSetCurrent, "cuCtxSetCurrent", "", (CUcontext))                                           \
    X(CtxGetCurrent, "cuCtxGetCurrent", "", (CUcontext *))                                         \
    X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", "", (CUcontext *, CUdevice))                   \
    X(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", (CUdevice))  \
    X(ModuleLoadDataEx, "cuModuleLoadDataEx", "",                                                  \
      (CUmodule *, const void *, unsigned, int *, void **))                                        \
    X(ModuleUnload, "cuModuleUnload", "", (CUmodule))                                              \
    X(ModuleGetFunction, "cuModuleGetFunction", "", (CUfunction *, CUmodule, const char *))        \
    X(MemAlloc, "cuMemAlloc_v2", "cuMemAlloc", (CUdeviceptr *, size_t))                            \
    X(MemFree, "cuMemFree_v2", "cuMemFree", (CUdeviceptr))                                         \
    X(MemGetInfo, "cuMemGetInfo_v2", "cuMemGetInfo", (size_t *, size_t *))                         \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", "cuMemcpyHtoD", (CUdeviceptr, const void *, size_t))          \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", "cuMemcpyDtoH", (void *, CUdeviceptr, size_t))                \
    X(MemcpyDtoD, "cuMemcpyDtoD_v2", "cuMemcpyDtoD", (CUdeviceptr, CUdeviceptr, size_t))           \
    X(MemsetD8, "cuMemsetD8_v2", "cuMemsetD8", (CUdeviceptr, unsigned char, size_t))               \
    X(LaunchKernel, "cuLaunchKernel", "",                                                          \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
       void **, void **))                                                                          \
    X(FuncSetAttribute, "cuFuncSetAttribute", "", (CUfunction, int, int))                          \
    X(EventCreate, "cuEventCreate", "", (CUevent *, unsigned))                                     \
    X(EventRecord, "cuEventRecord", "", (CUevent, CUstream))                                       \
    X(EventSynchronize, "cuEventSynchronize", "", (CUevent))                                       \
    X(EventElapsedTime, "cuEventElapsedTime", "", (float *, CUevent, CUevent))                     \
    X(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy", (CUevent))                              \
    X(StreamSynchronize, "cuStreamSynchronize", "", (CUstream))                                    \
    X(GetErrorName, "cuGetErrorName", "", (CUresult, const char **))                               \
    X(GetErrorString, "cuGetErrorString", "", (CUresult, const char **))

/* cuTensorMapEncodeTiled (CUDA 12+): resolved on its own, as older
 * drivers lack it and only Hopper kernels need it. */
typedef CUresult (*cu_tmap_encode_fn)(void *, int, unsigned, void *, const unsigned long long *,
                                      const unsigned long long *, const unsigned *,
                                      const unsigned *, int, int, int, int);

struct rt_cuda {
    void *lib;
    cu_tmap_encode_fn TensorMapEncodeTiled;
    CUdevice dev;
    CUcontext ctx;
    bool primary;    /* ctx is the device's primary context (retained, not created) */
    CUstream stream; /* where launches and events go (NULL: the legacy default stream) */
    rt_cuda_info info;
    char err[4096];
#define X(f, s, s2, args) CUresult(*f) args;
    RT_CU_FUNCS(X)
#undef X
};

struct rt_module {
    rt_cuda *c;
    CUmodule mod;
    char info_log[RT_JIT_LOG];
};

/* Names of common driver errors, for drivers (or the toolkit's stub
 * library) whose cuGetErrorName fails. */
static const char *cu_known_name(CUresult r) {
    static const struct {
        int code;
        const char *name;
    } t[] = {
        {1, "CUDA_ERROR_INVALID_VALUE"},
        {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {3, "CUDA_ERROR_NOT_INITIALIZED"},
        {34, "CUDA_ERROR_STUB_LIBRARY"},
        {100, "CUDA_ERROR_NO_DEVICE"},
        {101, "CUDA_ERROR_INVALID_DEVICE"},
        {200, "CUDA_ERROR_INVALID_IMAGE"},
        {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
        {218, "CUDA_ERROR_INVALID_PTX"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
        {400, "CUDA_ERROR_INVALID_HANDLE"},
        {500, "CUDA_ERROR_NOT_FOUND"},
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
        {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
        {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
        {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
        {719, "CUDA_ERROR_LAUNCH_FAILED"},
        {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
        {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
        {999, "CUDA_ERROR_UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].code == r) return t[i].name;
    return NULL;
}

/* Formats a driver failure of `call` while `doing` into c->err; returns false. */
static bool cu_fail(rt_cuda *c, CUresult r, const char *call, const char *doing) {
    const char *name = NULL, *text = NULL;
    if (!c->GetErrorName || c->GetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = cu_known_name(r);
    if (!c->GetErrorString || c->GetErrorString(r, &text) != CUDA_SUCCESS || !text) text = NULL;
    if (name)
        snprintf(c->err, sizeof c->err, "%s failed while %s: %s%s%s%s", call, doing, name,
                 text ? " (" : "", text ? text : "", text ? ")" : "");
    else
        snprintf(c->err, sizeof c->err, "%s failed while %s: CUresult %d", call, doing, r);
    return false;
}

/* Appends text to c->err, truncating at its capacity. */
static void err_append(rt_cuda *c, const char *text) {
    size_t n = strlen(c->err), k = strlen(text);
    if (n + 1 >= sizeof c->err) return;
    if (k > sizeof c->err - n - 1) k = sizeof c->err - n - 1;
    memcpy(c->err + n, text, k);
    c->err[n + k] = 0;
}

/* Checks a driver result: true on success, else formats the error. */
static bool cu_ok(rt_cuda *c, CUresult r, const char *call, const char *doing) {
    return r == CUDA_SUCCESS ? true : cu_fail(c, r, call, doing);
}

/* Resolves every entry point of RT_CU_FUNCS; false with the missing name. */
static bool cu_resolve(rt_cuda *c, const char *lib, char *err, size_t cap) {
    void *p;
#define X(f, s, s2, t)                                                                             \
    p = dlsym(c->lib, s);                                                                          \
    if (!p && s2[0]) p = dlsym(c->lib, s2);                                                        \
    if (!p) {                                                                                      \
        snprintf(err, cap, "%s is not a usable CUDA driver (symbol %s missing); use --device=cpu", \
                 lib, s);                                                                          \
        return false;                                                                              \
    }                                                                                              \
    memcpy(&c->f, &p, sizeof p);
    RT_CU_FUNCS(X)
#undef X
    p = dlsym(c->lib, "cuTensorMapEncodeTiled");
    memcpy(&c->TensorMapEncodeTiled, &p, sizeof p);
    return true;
}

/* Reads one integer device attribute; 0 when the driver refuses. */
static int cu_attr(rt_cuda *c, int attr) {
    int v = 0;
    if (c->DeviceGetAttribute(&v, attr, c->dev) != CUDA_SUCCESS) return 0;
    return v;
}

/* Fills c->info from the device. */
static void cu_read_info(rt_cuda *c) {
    rt_cuda_info *in = &c->info;
    size_t total = 0;
    if (c->DeviceGetName(in->name, (int)sizeof in->name - 1, c->dev) != CUDA_SUCCESS)
        snprintf(in->name, sizeof in->name, "CUDA device %d", (int)c->dev);
    in->cc = cu_attr(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
             cu_attr(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    in->sms = cu_attr(c, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    in->max_threads = cu_attr(c, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    in->smem_per_block = cu_attr(c, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    in->smem_optin = cu_attr(c, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (in->smem_optin < in->smem_per_block) in->smem_optin = in->smem_per_block;
    in->l2_bytes = cu_attr(c, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    if (c->DeviceTotalMem(&total, c->dev) == CUDA_SUCCESS) in->total_mem = (int64_t)total;
}

/* Makes c's context (own or retained primary) current on this thread. */
static bool cu_open_ctx(rt_cuda *c, bool primary) {
    c->primary = primary;
    if (!primary)
        return cu_ok(c, c->CtxCreate(&c->ctx, 0, c->dev), "cuCtxCreate",
                     "creating a context on the GPU");
    if (!cu_ok(c, c->PrimaryCtxRetain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain",
               "retaining the GPU's primary context"))
        return false;
    return cu_ok(c, c->CtxSetCurrent(c->ctx), "cuCtxSetCurrent",
                 "making the primary context current");
}

/* Initialises the driver, picks the device and creates or retains the
 * context; on failure copies the driver's message into err. */
static bool cu_start(rt_cuda *c, int device, bool primary, char *err, size_t cap) {
    int n = 0;
    bool ok =
        cu_ok(c, c->Init(0), "cuInit", "initialising the CUDA driver") &&
        cu_ok(c, c->DriverGetVersion(&n), "cuDriverGetVersion", "asking the driver version") &&
        cu_ok(c, c->DeviceGet(&c->dev, device), "cuDeviceGet", "opening the GPU") &&
        cu_open_ctx(c, primary);
    if (!ok) {
        snprintf(err, cap, "%s; use --device=cpu", c->err);
        return false;
    }
    c->info.driver_version = n;
    cu_read_info(c);
    return true;
}

/* rt_cuda_new_lib with the choice of context. */
static rt_cuda *cuda_open(const char *lib, int device, bool primary, char *err, size_t cap) {
    rt_cuda *c = ir_xcalloc(1, sizeof *c);
    c->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        const char *why = dlerror();
        snprintf(err, cap, "no CUDA driver found (%s: %s); use --device=cpu", lib,
                 why ? why : "cannot be loaded");
        free(c);
        return NULL;
    }
    if (!cu_resolve(c, lib, err, cap) || !cu_start(c, device, primary, err, cap)) {
        rt_cuda_free(c);
        return NULL;
    }
    return c;
}

rt_cuda *rt_cuda_new_lib(const char *lib, int device, char *err, size_t cap) {
    return cuda_open(lib, device, false, err, cap);
}

/* The driver library: $TX_CUDA_LIB, else libcuda.so.1. */
static const char *cuda_lib_name(void) {
    const char *lib = getenv("TX_CUDA_LIB");
    return lib && lib[0] ? lib : "libcuda.so.1";
}

rt_cuda *rt_cuda_new(char *err, size_t cap) {
    return cuda_open(cuda_lib_name(), 0, false, err, cap);
}

rt_cuda *rt_cuda_new_primary(int device, char *err, size_t cap) {
    return cuda_open(cuda_lib_name(), device, true, err, cap);
}

bool rt_cuda_make_current(rt_cuda *c) {
    CUcontext cur = NULL;
    if (c->CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c->ctx) return true;
    return cu_ok(c, c->CtxSetCurrent(c->ctx), "cuCtxSetCurrent",
                 "making tx's context current on this thread");
}

void rt_cuda_set_stream(rt_cuda *c, void *stream) { c->stream = (CUstream)stream; }

void rt_cuda_free(rt_cuda *c) {
    if (!c) return;
    if (c->ctx && c->primary && c->PrimaryCtxRelease)
        c->PrimaryCtxRelease(c->dev);
    else if (c->ctx && c->CtxDestroy)
        c->CtxDestroy(c->ctx);
    if (c->lib) dlclose(c->lib);
    free(c);
}

const rt_cuda_info *rt_cuda_get_info(const rt_cuda *c) { return &c->info; }
const char *rt_cuda_error(const rt_cuda *c) { return c->err; }

/* Formats a byte count as "1.50 GiB" / "12.0 MiB" / "512 B". */
static const char *fmt_bytes(double b, char *buf, size_t cap) {
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, cap, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, cap, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, cap, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, cap, "%.0f B", b);
    return buf;
}

bool rt_cuda_alloc(rt_cuda *c, size_t bytes, const char *what, rt_devptr *p) {
    CUdeviceptr d = 0;
    char doing[256], want[32], fr[32], tot[32];
    size_t free_b = 0, total_b = 0;
    CUresult r = c->MemAlloc(&d, bytes ? bytes : 1);
    *p = 0;
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        c->MemGetInfo(&free_b, &total_b);
        snprintf(c->err, sizeof c->err,
                 "out of GPU memory allocating %s for %s (%s free of %s on %s)",
                 fmt_bytes((double)bytes, want, sizeof want), what,
                 fmt_bytes((double)free_b, fr, sizeof fr),
                 fmt_bytes((double)total_b, tot, sizeof tot), c->info.name);
        return false;
    }
    snprintf(doing, sizeof doing, "allocating %s for %s",
             fmt_bytes((double)bytes, want, sizeof want), what);
    if (!cu_ok(c, r, "cuMemAlloc", doing)) return false;
    *p = d;
    return true;
}

void rt_cuda_set_error(rt_cuda *c, const char *msg) { snprintf(c->err, sizeof c->err, "%s", msg); }

bool rt_cuda_mem_info(rt_cuda *c, size_t *free_b, size_t *total_b) {
    *free_b = *total_b = 0;
    return cu_ok(c, c->MemGetInfo(free_b, total_b), "cuMemGetInfo", "reading the free memory");
}

void rt_cuda_release(rt_cuda *c, rt_devptr p) {
    if (p) c->MemFree((CUdeviceptr)p);
}

/* Formats "VERB what" into buf; returns buf. */
static const char *doing_str(char *buf, size_t cap, const char *verb, const char *what) {
    snprintf(buf, cap, "%s %s", verb, what);
    return buf;
}

bool rt_cuda_upload(rt_cuda *c, rt_devptr dst, const void *src, size_t bytes, const char *what) {
    char d[256];
    return bytes == 0 || cu_ok(c, c->MemcpyHtoD((CUdeviceptr)dst, src, bytes), "cuMemcpyHtoD",
                               doing_str(d, sizeof d, "copying to the GPU:", what));
}

bool rt_cuda_download(rt_cuda *c, void *dst, rt_devptr src, size_t bytes, const char *what) {
    char d[256];
    return bytes == 0 || cu_ok(c, c->MemcpyDtoH(dst, (CUdeviceptr)src, bytes), "cuMemcpyDtoH",
                               doing_str(d, sizeof d, "copying from the GPU:", what));
}

bool rt_cuda_memset8(rt_cuda *c, rt_devptr dst, uint8_t byte, size_t bytes, const char *what) {
    char d[256];
    return bytes == 0 || cu_ok(c, c->MemsetD8((CUdeviceptr)dst, byte, bytes), "cuMemsetD8",
                               doing_str(d, sizeof d, "filling", what));
}

bool rt_cuda_copy(rt_cuda *c, rt_devptr dst, rt_devptr src, size_t bytes, const char *what) {
    char d[256];
    return bytes == 0 || cu_ok(c, c->MemcpyDtoD((CUdeviceptr)dst, (CUdeviceptr)src, bytes),
                               "cuMemcpyDtoD", doing_str(d, sizeof d, "copying on the GPU:", what));
}

bool rt_cuda_sync(rt_cuda *c, const char *what) {
    char d[256];
    if (c->stream)
        return cu_ok(c, c->StreamSynchronize(c->stream), "cuStreamSynchronize",
                     doing_str(d, sizeof d, "waiting for", what));
    return cu_ok(c, c->CtxSynchronize(), "cuCtxSynchronize",
                 doing_str(d, sizeof d, "waiting for", what));
}

/* ---- PTX compatibility ------------------------------------------------- */

/* Finds the directive `key` at the start of a line; returns what follows
 * it (after blanks), or NULL. */
static const char *ptx_directive(const char *ptx, const char *key) {
    size_t k = strlen(key);
    for (const char *s = ptx; s && *s;) {
        while (*s == ' ' || *s == '\t') s++;
        if (strncmp(s, key, k) == 0 && (s[k] == ' ' || s[k] == '\t')) {
            s += k;
            while (*s == ' ' || *s == '\t') s++;
            return s;
        }
        s = strchr(s, '\n');
        if (s) s++;
    }
    return NULL;
}

int rt_ptx_isa(const char *ptx) {
    int major = 0, minor = 0;
    const char *s = ptx_directive(ptx, ".version");
    if (!s || sscanf(s, "%d.%d", &major, &minor) != 2 || major < 1 || minor < 0 || minor > 9)
        return -1;
    return major * 10 + minor;
}

int rt_ptx_sm(const char *ptx) {
    int sm = 0;
    const char *s = ptx_directive(ptx, ".target");
    if (!s || sscanf(s, "sm_%d", &sm) != 1 || sm <= 0) return -1;
    return sm;
}

int rt_ptx_isa_min_driver(int isa) {
    /* PTX ISA release -> the CUDA release that introduced it. */
    static const int table[][2] = {
        {60, 9000},  {61, 9010},  {62, 9020},  {63, 10000}, {64, 10010}, {65, 10020}, {70, 11000},
        {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040}, {75, 11050}, {76, 11060}, {77, 11070},
        {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020}, {83, 12030}, {84, 12040}, {85, 12050},
        {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i][0] == isa) return table[i][1];
    return -1;
}

bool rt_ptx_check(const char *ptx, int driver_version, int cc, char *err, size_t cap) {
    int isa = rt_ptx_isa(ptx), sm = rt_ptx_sm(ptx), need = rt_ptx_isa_min_driver(isa);
    if (isa < 0 || sm < 0) {
        snprintf(err, cap, "the generated PTX has no valid .version/.target line");
        return false;
    }
    if (need < 0 || driver_version < need) {
        snprintf(
            err, cap,
            "the generated PTX uses ISA %d.%d, which needs a CUDA %d.%d driver; this driver is "
            "CUDA %d.%d",
            isa / 10, isa % 10, need < 0 ? 99 : need / 1000, need < 0 ? 0 : need % 1000 / 10,
            driver_version / 1000, driver_version % 1000 / 10);
        return false;
    }
    if (cc > 0 && sm > cc) {
        snprintf(err, cap,
                 "the PTX targets sm_%d but the GPU is sm_%d; compile with --target=sm_%d", sm, cc,
                 cc);
        return false;
    }
    return true;
}

/* ---- modules and launches ---------------------------------------------- */

rt_module *rt_module_load(rt_cuda *c, const char *ptx) {
    char elog[RT_JIT_LOG];
    rt_module *m;
    int opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *vals[4];
    CUresult r;
    if (!rt_ptx_check(ptx, c->info.driver_version, c->info.cc, c->err, sizeof c->err)) return NULL;
    m = ir_xcalloc(1, sizeof *m);
    m->c = c;
    elog[0] = 0;
    vals[0] = elog;
    vals[1] = (void *)(uintptr_t)sizeof elog;
    vals[2] = m->info_log;
    vals[3] = (void *)(uintptr_t)sizeof m->info_log;
    r = c->ModuleLoadDataEx(&m->mod, ptx, 4, opts, vals);
    if (r != CUDA_SUCCESS) {
        cu_fail(c, r, "cuModuleLoadDataEx", "loading the PTX");
        if (elog[0]) {
            for (char *s = elog; *s; s++)
                if (*s == '\n' && s[1]) *s = ' ';
            elog[strcspn(elog, "\n")] = 0;
            err_append(c, "; JIT log: ");
            err_append(c, elog);
        }
        free(m);
        return NULL;
    }
    return m;
}

void rt_module_free(rt_module *m) {
    if (!m) return;
    if (m->mod) m->c->ModuleUnload(m->mod);
    free(m);
}

const char *rt_module_info_log(const rt_module *m) { return m->info_log; }

bool rt_module_func(rt_module *m, const char *name, rt_func *f) {
    char d[256];
    CUfunction fn = NULL;
    snprintf(d, sizeof d, "looking up kernel %s in the PTX", name);
    if (!cu_ok(m->c, m->c->ModuleGetFunction(&fn, m->mod, name), "cuModuleGetFunction", d))
        return false;
    *f = fn;
    return true;
}

bool rt_cuda_func_smem(rt_cuda *c, rt_func f, const char *name, uint32_t smem) {
    char d[256];
    if ((int64_t)smem > c->info.smem_optin && c->info.smem_optin > 0) {
        snprintf(c->err, sizeof c->err,
                 "kernel %s needs %u bytes of shared memory; %s allows at most %lld per block",
                 name, smem, c->info.name, (long long)c->info.smem_optin);
        return false;
    }
    /* set whenever there is dynamic shared memory: the default allows 48 KiB minus the
     * kernel's static shared memory, which the manifest's smem does not count */
    if (smem == 0) return true;
    snprintf(d, sizeof d, "allowing kernel %s %u bytes of dynamic shared memory", name, smem);
    return cu_ok(c,
                 c->FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                 "cuFuncSetAttribute", d);
}

bool rt_cuda_launch(rt_cuda *c, rt_func f, const char *name, const uint32_t grid[3],
                    const uint32_t block[3], uint32_t smem, void **params) {
    char d[256];
    snprintf(d, sizeof d, "launching kernel %s (grid %u,%u,%u block %u,%u,%u smem %u)", name,
             grid[0], grid[1], grid[2], block[0], block[1], block[2], smem);
    return cu_ok(c,
                 c->LaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem,
                                 c->stream, params, NULL),
                 "cuLaunchKernel", d);
}

bool rt_event_new(rt_cuda *c, rt_event *e) {
    CUevent ev = NULL;
    if (!cu_ok(c, c->EventCreate(&ev, 0), "cuEventCreate", "creating a timing event")) return false;
    *e = ev;
    return true;
}

void rt_event_free(rt_cuda *c, rt_event e) {
    if (e) c->EventDestroy(e);
}

bool rt_event_record(rt_cuda *c, rt_event e) {
    return cu_ok(c, c->EventRecord(e, c->stream), "cuEventRecord", "recording a timing event");
}

bool rt_event_elapsed_us(rt_cuda *c, rt_event start, rt_event stop, double *us) {
    float ms = 0;
    if (!cu_ok(c, c->EventSynchronize(stop), "cuEventSynchronize", "waiting for the GPU") ||
        !cu_ok(c, c->EventElapsedTime(&ms, start, stop), "cuEventElapsedTime", "reading a timer"))
        return false;
    *us = (double)ms * 1000.0;
    return true;
}

/* Size in bytes of a tensor-map element dtype (0: unsupported). */
static unsigned tmap_esize(uint8_t dt) {
    return dt == IR_F16 || dt == IR_BF16 ? 2 : dt == IR_F32 ? 4 : 0;
}

/* The byte stride of dim i (1 .. rank - 1) of t: the product of the extents below it, or below
 * pdim's pitch, times the element size. */
static int64_t tmap_stride(const rt_tmap_desc *t, unsigned i) {
    unsigned pd = t->pdim ? t->pdim : 1;
    int64_t s = (int64_t)tmap_esize(t->dtype);
    for (unsigned j = 0; j < i; j++) {
        if (j + 1 == pd && t->pitch > 0)
            s = (int64_t)tmap_esize(t->dtype) * t->pitch;
        else
            s *= t->dim[j];
    }
    return s;
}

bool rt_tmap_check(const rt_tmap_desc *t, rt_devptr addr, char *err, size_t cap) {
    unsigned es = tmap_esize(t->dtype);
    if (!es) {
        snprintf(err, cap, "tensor map of dtype %s: only f16, bf16 and f32",
                 ir_dtype_name((ir_dtype)t->dtype));
        return false;
    }
    if (addr % 16) {
        snprintf(err, cap, "tensor map address 0x%llx is not 16-byte aligned",
                 (unsigned long long)addr);
        return false;
    }
    int rank = t->rank ? t->rank : 2;
    if (rank < 2 || rank > RT_TMAP_MAXR) {
        snprintf(err, cap, "tensor map of rank %d: only 2 to %d", rank, RT_TMAP_MAXR);
        return false;
    }
    for (int i = 0; i < rank; i++) {
        if (t->dim[i] < 1 || t->dim[i] > ((int64_t)1 << 32)) {
            snprintf(err, cap, "tensor map extent %lld out of [1, 2^32]", (long long)t->dim[i]);
            return false;
        }
        if (t->box[i] < 1 || t->box[i] > 256) {
            snprintf(err, cap, "tensor map box extent %u out of [1, 256]", t->box[i]);
            return false;
        }
    }
    int pd = t->pdim ? t->pdim : 1;
    int64_t below = 1; /* the elements of the dims below pdim */
    for (int i = 0; i < pd && i < rank; i++) below *= t->dim[i];
    if (pd >= rank || (t->pitch > 0 && t->pitch < below)) {
        snprintf(err, cap, "tensor map row pitch %lld elements is below the row's %lld",
                 (long long)t->pitch, (long long)below);
        return false;
    }
    if (t->offset < 0 || ((uint64_t)t->offset * es) % 16) {
        snprintf(err, cap, "tensor map offset of %lld elements is not 16-byte aligned",
                 (long long)t->offset);
        return false;
    }
    for (int i = 1; i < rank; i++) {
        int64_t stride = tmap_stride(t, (unsigned)i);
        if (stride >= ((int64_t)1 << 40)) {
            snprintf(err, cap, "tensor map stride of %lld bytes is not below 2^40",
                     (long long)stride);
            return false;
        }
        if (i == pd && stride % 16) {
            snprintf(err, cap, "tensor map row pitch %lld bytes is not a multiple of 16",
                     (long long)stride);
            return false;
        }
    }
    if (t->swizzle != 0 && t->swizzle != 32 && t->swizzle != 64 && t->swizzle != 128) {
        snprintf(err, cap, "tensor map swizzle %u is not 0, 32, 64 or 128 bytes", t->swizzle);
        return false;
    }
    if (t->swizzle && t->box[0] * es > t->swizzle) {
        snprintf(err, cap, "tensor map box row of %u bytes exceeds the %u-byte swizzle",
                 t->box[0] * es, t->swizzle);
        return false;
    }
    return true;
}

bool rt_cuda_tmap_encode(rt_cuda *c, void *out, const rt_tmap_desc *t, rt_devptr addr,
                         const char *what) {
    char e[200];
    if (!rt_tmap_check(t, addr, e, sizeof e)) {
        snprintf(c->err, sizeof c->err, "%s: %s", what, e);
        return false;
    }
    if (!c->TensorMapEncodeTiled) {
        snprintf(c->err, sizeof c->err,
                 "%s: the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or newer needed)",
                 what);
        return false;
    }
    /* CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9; swizzle enum 0..3;
     * interleave none 0, L2 promotion 256 B 3, out-of-bounds fill zeros 0 */
    int dt = t->dtype == IR_F16 ? 6 : t->dtype == IR_BF16 ? 9 : 7;
    int swz = t->swizzle == 128 ? 3 : t->swizzle == 64 ? 2 : t->swizzle == 32 ? 1 : 0;
    unsigned rank = t->rank ? t->rank : 2;
    unsigned long long dims[RT_TMAP_MAXR], strides[RT_TMAP_MAXR - 1];
    unsigned box[RT_TMAP_MAXR], estr[RT_TMAP_MAXR];
    for (unsigned i = 0; i < rank; i++) {
        dims[i] = (unsigned long long)t->dim[i], box[i] = t->box[i], estr[i] = 1;
        if (i + 1 < rank) strides[i] = (unsigned long long)tmap_stride(t, i + 1);
    }
    addr += (rt_devptr)t->offset * tmap_esize(t->dtype);
    memset(out, 0, 128);
    return cu_ok(c,
                 c->TensorMapEncodeTiled(out, dt, rank, (void *)(uintptr_t)addr, dims, strides, box,
                                         estr, 0, swz, 3, 0),
                 "cuTensorMapEncodeTiled", what);
}
