/* runtime.h - host tensors, .npy files, the reference interpreter, and the
 * CUDA driver runtime. */
#ifndef TX_RUNTIME_H
#define TX_RUNTIME_H

#include "ir/ir.h"

/* A host tensor with a concrete shape, stored at its dtype: f32 as float,
 * f16 and bf16 as uint16_t bit patterns, i32 as int32_t, bool as uint8_t
 * (0/1). C order. */
typedef struct rt_tensor {
    ir_dtype dtype;
    uint8_t rank;
    int64_t dim[IR_MAX_RANK];
    void *data; /* owned; rt_tensor_free releases it */
} rt_tensor;

int64_t rt_numel(const rt_tensor *t);
/* Allocates data for dtype/rank/dim already set (zeroed); false on overflow
 * or when the bytes do not fit in host memory (ir_host_mem_check): callers
 * that can name what is being allocated check first, for the message.
 * Tensors of RT_BIG_TENSOR bytes or more are 2 MiB aligned, advised to use
 * huge pages, and zeroed on every core (rt_par_for), so that their pages
 * are in place before a single-threaded writer (a device download) runs. */
#define RT_BIG_TENSOR ((size_t)64 << 20)
bool rt_tensor_alloc(rt_tensor *t);
void rt_tensor_free(rt_tensor *t);
/* Element i as a double, and store of a double (rounding to nearest even
 * for f16/bf16; truncation toward zero for i32; != 0 for bool). */
double rt_get(const rt_tensor *t, int64_t i);
void rt_set(rt_tensor *t, int64_t i, double v);
/* (f16/bf16 conversions: ir_f16_to_f32 and friends in ir/ir.h.) */
/* i32 store rule: truncation toward zero, saturating to [INT32_MIN,
 * INT32_MAX]; NaN gives 0. */
int32_t rt_double_to_i32(double v);
/* Byte size of t's data; false when the element count is negative,
 * overflows or is not below IR_MAX_ELEMS. */
bool rt_tensor_bytes(const rt_tensor *t, size_t *bytes);
/* dst = a new copy of src converted to dtype `to` (same shape; values
 * stored by rt_set's rules, e.g. f32 -> bf16 rounds to nearest even; same
 * dtype: a bitwise copy). False when the allocation fails (dst untouched). */
bool rt_tensor_cast(const rt_tensor *src, ir_dtype to, rt_tensor *dst);

/* ---- files (runtime/file.c): every read and write of a named file ----------
 * Errors are one line "PATH: MSG" in err (cap bytes). */
struct stat;
/* Opens a regular file for reading without blocking (a FIFO, device or
 * directory is refused; O_NONBLOCK stays set, so a read that would block
 * fails). Returns the descriptor, or -1 with a message. */
int rt_file_open_read(const char *path, struct stat *st, char *err, size_t cap);
/* Reads exactly n bytes from fd (EINTR retried; EOF, EAGAIN or an error fail). */
bool rt_file_read_fd(int fd, const char *path, void *buf, size_t n, char *err, size_t cap);
/* The whole regular file at path, NUL-terminated (malloc'ed; *len without the
 * NUL); NULL with a message when it is not a regular file, would block, or
 * holds more than max bytes. */
char *rt_file_read_all(const char *path, size_t max, size_t *len, char *err, size_t cap);

/* A set of output files committed together or not at all. rt_outset_open
 * returns the stream to write PATH's contents to ("-": stdout): a missing or
 * regular file (a symbolic link: the file it names) is written to a temporary
 * beside it, an existing character device or FIFO is staged and streamed to at
 * commit; a directory or other special file is refused (NULL, message).
 * rt_outset_commit checks every stream (write errors, stdout included), then
 * renames the temporaries into place under a lock of their directories (two
 * processes writing the same set serialise) and puts replaced files back if a
 * rename fails; false with a message and nothing changed. rt_outset_free
 * removes whatever was not committed. The caller never closes the streams. */
typedef struct rt_outset rt_outset;
rt_outset *rt_outset_new(void);
FILE *rt_outset_open(rt_outset *s, const char *path, char *err, size_t cap);
bool rt_outset_commit(rt_outset *s, char *err, size_t cap);
void rt_outset_free(rt_outset *s);
/* True when an output to path is a stream (stdout, an existing character
 * device or FIFO), not a file: no companion file (a manifest) goes beside it. */
bool rt_out_is_stream(const char *path);

/* .npy files (spec section 3). rt_npy_read reads any supported file into
 * `t` (f32/f16/i32/bool as stored); errors are one clear line into `err`
 * (cap bytes) and return false. rt_npy_write writes atomically (temporary
 * file then rename); bf16 is written as <f4. */
bool rt_npy_read(const char *path, rt_tensor *t, char *err, size_t cap);
bool rt_npy_write(const char *path, const rt_tensor *t, char *err, size_t cap);
/* Writes n files all or nothing: every file goes to a temporary beside
 * its path first; only when all are written are they renamed into place
 * (a path that is a directory fails before any rename). On failure no
 * temporary remains and no path holds a file of this call (one already
 * renamed into place is removed again). Meant for the CLI's outK.npy set. */
bool rt_npy_write_all(const char *const *paths, const rt_tensor *ts, unsigned n, char *err,
                      size_t cap);
/* Parses an in-memory .npy image (same rules and messages as rt_npy_read;
 * `name` prefixes the messages). */
bool rt_npy_parse(const char *name, const unsigned char *buf, size_t len, rt_tensor *t, char *err,
                  size_t cap);

/* The host's data-parallel loop (runtime/par.c): fn(arg, part, lo, hi) runs
 * over contiguous ranges [lo, hi) covering [0, n), part 0..parts-1 in index
 * order, each range at least `grain` long (except when n is smaller), on up
 * to rt_par_threads() threads; returns the number of parts (0 when n <= 0)
 * after all have finished. A result that depends only on per-part results
 * merged in part order does not depend on the thread count. */
#define RT_PAR_MAX 64
typedef void (*rt_par_fn)(void *arg, unsigned part, int64_t lo, int64_t hi);
unsigned rt_par_for(int64_t n, int64_t grain, rt_par_fn fn, void *arg);
/* Threads of rt_par_for: TX_HOST_THREADS when set, else the online
 * processors; 1 to RT_PAR_MAX. */
unsigned rt_par_threads(void);

/* Fills t with deterministic pseudo-random values from `seed` and the
 * parameter index `param` (floats in [-1, 1), i32 in [-8, 8), bools 50/50). Element i depends on
 * (seed, param, i) alone, so the fill runs on every core (rt_par_for). */
void rt_fill_random(rt_tensor *t, uint64_t seed, uint32_t param);

/* Resolves the graph's symbolic dims from the input tensors' shapes:
 * syms[i] = value of symbol i (bound ones from the graph). Reports a clear
 * error (rank, shape or dtype mismatch naming the parameter) and returns
 * false. Then checks, with the symbols bound, every shape rule the frontend
 * checked only symbolically (slice bounds, reshape counts, broadcasting,
 * concatenation, matmul inner dims): compiled code relies on them. `inputs`
 * are in parameter order. */
bool rt_bind_shapes(const ir_graph *g, const rt_tensor *inputs, int64_t *syms, tx_diag *d);

/* The reference interpreter: runs every node of g on the CPU in double
 * precision, rounding each value to its dtype when stored (so f16/bf16
 * values are the rounded ones). `outputs` receives one tensor per returned
 * value (caller frees). False with an error reported on failure. */
bool rt_interp_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d);
/* The same at the precision of g's fusion plan (the spec lets f16/bf16 arithmetic be computed in
 * f32 and rounded once when stored): f16/bf16 values that a region keeps on chip are held in f32;
 * values written to HBM, graph outputs and explicit casts round as in rt_interp_run. g must be
 * planned (regions set); on an unplanned graph both agree. */
bool rt_interp_run_plan(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d);

/* ---- input files and devices ----------------------------------------------- */

/* Converts t in place to dtype `to` as an input file crosses the boundary:
 * same dtype: nothing; f32 -> bf16 rounds to nearest even (spec 3); any
 * other mismatch is an error ("file holds <f2 (f16), parameter is f32"). */
bool rt_tensor_convert(rt_tensor *t, ir_dtype to, char *err, size_t cap);

/* True when libcuda.so.1 loads and reports at least one device. */
bool rt_gpu_available(void);

/* ---- GPU runtime (runtime/cuda.c, runtime/bench.c) -----------------------
 * The CUDA driver is loaded with dlopen at run time; nothing CUDA is needed
 * to build. Every function that can fail returns false (or NULL) and leaves
 * one clear line (no "txc: error: " prefix, no newline) in the context's
 * error buffer, read with rt_cuda_error(). */
typedef struct rt_cuda rt_cuda;     /* driver library, device, context */
typedef struct rt_module rt_module; /* one loaded PTX module */
typedef uint64_t rt_devptr;         /* a device address (CUdeviceptr) */
typedef void *rt_func;              /* a kernel (CUfunction) */
typedef void *rt_event;             /* a timing event (CUevent) */

/* Facts about the device, read once by rt_cuda_new. */
typedef struct rt_cuda_info {
    char name[128];     /* "NVIDIA H200" */
    int cc;             /* compute capability, major*10+minor (90) */
    int driver_version; /* cuDriverGetVersion: 13000 for CUDA 13.0 */
    int sms;
    int max_threads;        /* per block */
    int64_t smem_per_block; /* default dynamic shared memory limit */
    int64_t smem_optin;     /* opt-in limit (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) */
    int64_t l2_bytes;
    int64_t total_mem; /* bytes; 0 when unknown */
} rt_cuda_info;

/* Opens libcuda.so.1 (or the library named by the environment variable
 * TX_CUDA_LIB, which the tests point at tests/fake_cuda), initialises the
 * driver and creates a context on device 0. NULL on failure with one line
 * in err: without a driver it is exactly
 * "no CUDA driver found (libcuda.so.1: <dlerror>); use --device=cpu". */
rt_cuda *rt_cuda_new(char *err, size_t cap);
/* The same with an explicit library name or path and device ordinal. */
rt_cuda *rt_cuda_new_lib(const char *lib, int device, char *err, size_t cap);
/* Like rt_cuda_new on device `device`, but retains the device's primary
 * context (the one the CUDA runtime, PyTorch and CuPy use) instead of
 * creating one, so that their memory and streams can be used; made current
 * on this thread. rt_cuda_free releases it. */
rt_cuda *rt_cuda_new_primary(int device, char *err, size_t cap);
/* Makes c's context current on the calling thread (a no-op when it is). */
bool rt_cuda_make_current(rt_cuda *c);
/* Sends later launches, event records and rt_cuda_sync to `stream` (a
 * CUstream of c's context; NULL: the legacy default stream). */
void rt_cuda_set_stream(rt_cuda *c, void *stream);
void rt_cuda_free(rt_cuda *c);
const rt_cuda_info *rt_cuda_get_info(const rt_cuda *c);
const char *rt_cuda_error(const rt_cuda *c); /* the last error line ("" if none) */

/* Sets c's error line (rt_cuda_error) to msg. */
void rt_cuda_set_error(rt_cuda *c, const char *msg);
/* Free and total device memory (cuMemGetInfo); false with the error in c. */
bool rt_cuda_mem_info(rt_cuda *c, size_t *free_b, size_t *total_b);
/* Device memory. `what` names the buffer in error messages ("output y").
 * Out-of-memory says how much was asked for and how much is free. */
bool rt_cuda_alloc(rt_cuda *c, size_t bytes, const char *what, rt_devptr *p);
void rt_cuda_release(rt_cuda *c, rt_devptr p); /* 0 is ignored */
bool rt_cuda_upload(rt_cuda *c, rt_devptr dst, const void *src, size_t bytes, const char *what);
bool rt_cuda_download(rt_cuda *c, void *dst, rt_devptr src, size_t bytes, const char *what);
bool rt_cuda_memset8(rt_cuda *c, rt_devptr dst, uint8_t byte, size_t bytes, const char *what);
bool rt_cuda_copy(rt_cuda *c, rt_devptr dst, rt_devptr src, size_t bytes, const char *what);
bool rt_cuda_sync(rt_cuda *c, const char *what);

/* Loads PTX text (NUL-terminated) through the driver JIT. Checks the
 * .version and .target lines against the driver and device first; a JIT
 * failure reports the JIT's error log. */
rt_module *rt_module_load(rt_cuda *c, const char *ptx);
void rt_module_free(rt_module *m);
/* The driver JIT's info log of the last load (may be empty). */
const char *rt_module_info_log(const rt_module *m);
bool rt_module_func(rt_module *m, const char *name, rt_func *f);
/* Allows kernel f `smem` bytes of dynamic shared memory: any nonzero amount
 * sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (once, before
 * launching: without it static + dynamic must fit 48 KiB, and a kernel may
 * also declare static shared memory); above the device's opt-in limit it
 * fails clearly. */
bool rt_cuda_func_smem(rt_cuda *c, rt_func f, const char *name, uint32_t smem);
/* Launches f on c's stream (rt_cuda_set_stream; `params` as cuLaunchKernel); smem above
 * 48 KiB needs rt_cuda_func_smem first. */
bool rt_cuda_launch(rt_cuda *c, rt_func f, const char *name, const uint32_t grid[3],
                    const uint32_t block[3], uint32_t smem, void **params);

/* A TMA tensor map of 2 to RT_TMAP_MAXR dims over a C-ordered buffer
 * (codegen's cg_tmap at bound sizes): extents dim[0] (inner, contiguous) x
 * dim[1] x ... x dim[rank - 1] elements of dtype, the stride of dim j the
 * product of dim[0..j) elements, box box[0] x ... x box[rank - 1], swizzle
 * bytes (128), zero fill out of bounds. rank 0 means 2 (dims and boxes
 * past the rank unused). */
#define RT_TMAP_MAXR 5
typedef struct rt_tmap_desc {
    uint8_t dtype; /* ir_dtype: F16, BF16 or F32 */
    uint16_t swizzle;
    int64_t dim[RT_TMAP_MAXR];
    uint32_t box[RT_TMAP_MAXR];
    uint8_t rank;   /* 2 to RT_TMAP_MAXR (0: 2) */
    int64_t pitch;  /* the stride in elements of dim pdim (>= the product of the extents below
                       it; a pitched staging copy, a slice of wider rows); 0: dense */
    uint8_t pdim;   /* the dim whose stride is pitch, 1 to rank - 1 (0: 1) */
    int64_t offset; /* elements from the buffer's address to the map's (16-byte aligned) */
} rt_tmap_desc;
/* Encodes a tensor map of t over device address `addr` into out[128]
 * (64-byte aligned) with cuTensorMapEncodeTiled. Checks the arguments the
 * driver requires first (16-byte aligned address and row pitch, extents in
 * [1, 2^32], box extents in [1, 256], the box's inner row within the
 * swizzle span); one line naming `what` on failure, also when the driver
 * lacks the entry point. */
bool rt_cuda_tmap_encode(rt_cuda *c, void *out, const rt_tmap_desc *t, rt_devptr addr,
                         const char *what);
/* The same checks alone (pure): false with one line in err. */
bool rt_tmap_check(const rt_tmap_desc *t, rt_devptr addr, char *err, size_t cap);

bool rt_event_new(rt_cuda *c, rt_event *e);
void rt_event_free(rt_cuda *c, rt_event e);
bool rt_event_record(rt_cuda *c, rt_event e);
/* Waits for `stop` and gives the time from start to stop in microseconds. */
bool rt_event_elapsed_us(rt_cuda *c, rt_event start, rt_event stop, double *us);

/* PTX compatibility (pure; used by rt_module_load, tested on the CPU).
 * rt_ptx_isa parses ".version X.Y" into X*10+Y (-1 if absent);
 * rt_ptx_sm parses ".target sm_NN[a]" into NN (-1 if absent);
 * rt_ptx_isa_min_driver gives the oldest driver version (cuDriverGetVersion
 * form, 12000 = 12.0) that accepts an ISA version (-1 if unknown).
 * rt_ptx_check: true when the driver and device accept the PTX, else one
 * line in err naming both sides. */
int rt_ptx_isa(const char *ptx);
int rt_ptx_sm(const char *ptx);
int rt_ptx_isa_min_driver(int isa);
bool rt_ptx_check(const char *ptx, int driver_version, int cc, char *err, size_t cap);

/* ---- running a planned program on the GPU (runtime/gpu.c) ---------------
 * rt_gpu_plan is the runtime's view of a compiled program: the PTX, the
 * device buffers it needs and every kernel launch with concrete geometry.
 * The driver builds it from codegen's program (drv_gpu_plan_from_cg) once
 * the symbolic dims are bound. */
typedef enum { RT_BUF_INPUT, RT_BUF_OUTPUT, RT_BUF_TEMP } rt_buf_role;
typedef struct rt_buf_desc {
    uint8_t role;  /* rt_buf_role */
    uint8_t dtype; /* ir_dtype */
    uint8_t rank;
    uint8_t zero;   /* a temp cleared once when allocated and never poisoned (a kernel's
                       workspace that it leaves zero: the stream-K flags) */
    uint32_t index; /* parameter index, return index, or temp number */
    int64_t dim[IR_MAX_RANK];
    char name[64]; /* source name for messages */
} rt_buf_desc;

typedef enum { RT_KP_BUF, RT_KP_I64, RT_KP_I32, RT_KP_TMAP } rt_kparam_kind;
typedef struct rt_kparam {
    uint8_t kind;      /* rt_kparam_kind */
    uint32_t buf;      /* RT_KP_BUF, RT_KP_TMAP: index into plan->bufs */
    int64_t value;     /* RT_KP_I64/I32: the immediate */
    rt_tmap_desc tmap; /* RT_KP_TMAP: the map, passed by value (128 bytes) */
} rt_kparam;

typedef struct rt_kernel_desc {
    char name[64];     /* PTX entry name */
    rt_kparam *params; /* in the kernel's parameter order */
    uint32_t nparams;
    uint32_t grid[3], block[3];
    uint32_t smem; /* dynamic shared memory bytes */
    /* The planner's figures for this kernel (negative: unknown). */
    double bytes, flops, predicted_us;
    char kind[16]; /* region kind name ("pointwise"), for reports */
    int region;    /* region index of the graph; -1: an output copy */
} rt_kernel_desc;

typedef struct rt_gpu_plan {
    char *ptx; /* owned, NUL-terminated */
    rt_buf_desc *bufs;
    uint32_t nbufs;
    rt_kernel_desc *kernels;
    uint32_t nkernels;
    uint32_t ninputs, noutputs;
} rt_gpu_plan;

rt_gpu_plan *rt_gpu_plan_new(void);
void rt_gpu_plan_free(rt_gpu_plan *p);
/* Appends a buffer / a kernel (params copied); returns its index. */
uint32_t rt_gpu_plan_add_buf(rt_gpu_plan *p, const rt_buf_desc *b);
uint32_t rt_gpu_plan_add_kernel(rt_gpu_plan *p, const rt_kernel_desc *k);
/* Checks a plan's internal consistency (buffer indices in range, inputs and
 * outputs numbered 0..n-1 once each, non-zero geometry); one line in err. */
bool rt_gpu_plan_check(const rt_gpu_plan *p, char *err, size_t cap);
/* Device bytes a plan's buffers take (each rounded up to the allocation granularity: 512 B
 * below 1 MiB, else 2 MiB),
 * split by role into by_role[3] (input, output, temp; may be NULL). */
double rt_gpu_plan_bytes(const rt_gpu_plan *p, double *by_role);
/* True when the plan's buffers (with io false, its intermediates alone: the caller binds the
 * inputs and outputs) plus `extra` bytes fit in c's free device memory; else false with "the
 * plan needs X of GPU memory (inputs A, outputs B, intermediates C); Y free of Z on DEVICE" in
 * err. rt_gpu_exec_new checks it before allocating anything. */
bool rt_gpu_plan_fits(rt_cuda *c, const rt_gpu_plan *p, bool io, double extra, char *err,
                      size_t cap);
/* Index of the buffer with role (rt_buf_role) and index (parameter, return or temp number);
 * UINT32_MAX when there is none. */
uint32_t rt_gpu_plan_find_buf(const rt_gpu_plan *p, uint8_t role, uint32_t index);
/* Bytes of buffer b (numel * dtype size; -1 on overflow). */
int64_t rt_buf_bytes(const rt_buf_desc *b);
/* Checks host inputs (parameter order) against the plan's input buffers:
 * count, dtype and shape, naming the parameter on mismatch. */
bool rt_gpu_check_inputs(const rt_gpu_plan *p, const rt_tensor *inputs, uint32_t n, char *err,
                         size_t cap);

/* A plan loaded on a device: module, functions and device buffers. The
 * intermediates are always allocated here; inputs and outputs too when
 * alloc_io is set, else they stay unbound (0) until rt_gpu_exec_bind. */
typedef struct rt_gpu_exec rt_gpu_exec;
rt_gpu_exec *rt_gpu_exec_new(rt_cuda *c, const rt_gpu_plan *p, bool alloc_io);
/* An execution of p whose input buffers are those of `from` (another plan of the same inputs:
 * count, dtypes and bytes must agree; from must outlive it and keeps owning them), with its own
 * outputs and intermediates, checked against the free device memory first. NULL with one line in
 * err. txc bench runs the fused and the unfused plan on one upload this way. */
rt_gpu_exec *rt_gpu_exec_new_sharing(rt_cuda *c, const rt_gpu_plan *p, const rt_gpu_exec *from,
                                     char *err, size_t cap);
void rt_gpu_exec_free(rt_gpu_exec *r);
rt_devptr rt_gpu_exec_buf(const rt_gpu_exec *r, uint32_t buf);
/* The context r runs on. */
rt_cuda *rt_gpu_exec_cuda(const rt_gpu_exec *r);
/* Points buffer `buf` at caller-owned device memory (released here first
 * if it was allocated here). False when buf is out of range. */
bool rt_gpu_exec_bind(rt_gpu_exec *r, uint32_t buf, rt_devptr p);
/* The last error of the execution (an unbound buffer, or the driver's). */
const char *rt_gpu_exec_error(const rt_gpu_exec *r);
/* Copies host inputs (parameter order) to the device after
 * rt_gpu_check_inputs; one line in err on failure. */
bool rt_gpu_exec_upload(rt_gpu_exec *r, const rt_tensor *inputs, uint32_t n, char *err, size_t cap);
/* Fills every output and intermediate with 0xFF bytes (NaN for floats, -1
 * for i32), so that an element a kernel fails to write is caught. */
bool rt_gpu_exec_poison(rt_gpu_exec *r);
bool rt_gpu_exec_launch(rt_gpu_exec *r, uint32_t kernel);
bool rt_gpu_exec_launch_all(rt_gpu_exec *r);
/* Waits for the kernels, then allocates and fills `outputs` (return
 * order; caller frees). */
bool rt_gpu_exec_download(rt_gpu_exec *r, rt_tensor *outputs, uint32_t n);
/* The same into tensors that may already hold an allocation of the output's dtype and shape
 * (kept and overwritten: no new pages to fault in); others (data NULL, or another shape) are
 * freed and allocated. On failure the tensors stay allocated or NULL (caller frees). */
bool rt_gpu_exec_download_to(rt_gpu_exec *r, rt_tensor *outputs, uint32_t n);
/* Downloads every buffer of the plan (inputs, outputs, intermediates) into bufs[0..nbufs) after the
 * kernels finish (caller frees each with rt_tensor_free). */
bool rt_gpu_exec_download_all(rt_gpu_exec *r, rt_tensor *bufs);
/* Loads p on c, uploads inputs, poisons, runs every kernel once and
 * downloads the outputs. False with an error reported. */
bool rt_gpu_exec_once(rt_cuda *c, const rt_gpu_plan *p, const rt_tensor *inputs, rt_tensor *outputs,
                      tx_diag *d);

/* ---- kernels compiled earlier (runtime/manifest.c) ------------------------
 * The manifest txc writes beside the PTX (FILE.ptx.json; format in
 * docs/codegen.md), read without the compiler: shapes hold sizes or
 * symbols (IR_DIM_SYM(i) names entry i of syms). */
typedef struct rt_mvalue {
    char name[64]; /* inputs and outputs: source name ("" when none) */
    ir_dtype dtype;
    ir_shape shape;
} rt_mvalue;

typedef struct rt_mbuf {
    uint8_t role; /* rt_buf_role */
    uint8_t write;
    uint32_t index; /* input, output or temp number */
} rt_mbuf;

typedef struct rt_mkernel {
    char name[64];
    int region;    /* -1: an output copy */
    rt_mbuf *bufs; /* one pointer parameter each, in order */
    uint32_t nbufs;
    uint32_t *syms; /* then one i64 parameter per symbol index */
    uint32_t nsyms;
    ir_shape work[3]; /* grid[d] = min(cap[d], ceil(numel(work[d]) / per[d])) */
    int64_t per[3], cap[3];
    uint32_t block[3], smem;
    ir_poly flops; /* the planner's FLOPs; overflow set when unknown (null or absent) */
} rt_mkernel;

typedef struct rt_manifest {
    char target[16];
    char (*syms)[64];
    uint32_t nsyms;
    rt_mvalue *in, *out, *temps;
    uint32_t nin, nout, ntemps;
    rt_mkernel *kernels;
    uint32_t nkernels;
    ir_shape_rule *rules; /* "requires": checked by rt_manifest_bind */
    uint32_t nrules;
} rt_manifest;

/* Parses manifest text (len bytes; at most 64 MiB). NULL with one line in
 * err ("bad manifest: ...") on malformed JSON or a manifest that breaks
 * its format (unknown symbol, buffer out of range, bad geometry). */
rt_manifest *rt_manifest_parse(const char *text, size_t len, char *err, size_t cap);
void rt_manifest_free(rt_manifest *m);
/* Binds syms (m->nsyms entries; -1 where no input fixes a symbol) from the
 * input types (parameter order; only dtype, rank and dims are read): count,
 * dtypes, ranks and fixed dims must match, a symbol must get one size, and
 * every shape rule of "requires" (ir_shape_rules) must hold at the sizes.
 * False with one line in err naming the input. */
bool rt_manifest_bind(const rt_manifest *m, const rt_tensor *inputs, uint32_t n, int64_t *syms,
                      char *err, size_t cap);
/* Resolves a manifest shape at syms; false when a symbol is unbound. */
bool rt_manifest_resolve(const rt_manifest *m, const ir_shape *s, const int64_t *syms,
                         int64_t *dims);
/* The launch plan at bound syms: buffers inputs, outputs, temps (as the
 * driver orders them), kernels in manifest order with concrete geometry
 * and their buffers' bytes and FLOPs (-1 when the manifest has none). ptx
 * is copied. NULL with one line in err. */
rt_gpu_plan *rt_manifest_plan(const rt_manifest *m, const char *ptx, const int64_t *syms, char *err,
                              size_t cap);

/* The public API's loaded kernels (include/tx_rt.h, runtime/tx_rt.c) over a
 * plan: takes ownership of plan, loads it on d with inputs and outputs left
 * for the caller to bind. NULL with err set (plan freed). */
struct tx_device;
struct tx_loaded;
struct tx_loaded *rt_loaded_new(struct tx_device *d, rt_gpu_plan *plan, char *err, size_t cap);

/* ---- verification and statistics (runtime/bench.c; pure) ---------------- */
/* Tolerance per dtype: an element passes when |got - ref| <= atol + rtol*|ref|;
 * NaN only matches NaN, an infinity only the same infinity; i32 and bool
 * must be equal. */
/* |got - want| <= atol + rtol |want| element by element; `scaled` widens atol by that many
 * times the reference's largest finite magnitude for the scaled verdict (rt_cmp.bad_scaled). */
typedef struct rt_tol {
    double atol, rtol, scaled;
} rt_tol;
rt_tol rt_tolerance(ir_dtype t);
/* rt_tolerance for an output whose elements are f32 sums of `terms` products each (a matrix
 * product's K; 0 or 1: not a sum): f32 then gets a scaled verdict too, 4 sqrt(terms) f32 ulps
 * (2^-24 each) of the output's largest |want|, the rounding a correct f32 summation order
 * accumulates (near-zero outputs of a K = 3000 product miss atol 1e-5 by up to 3x). Other dtypes:
 * rt_tolerance. */
rt_tol rt_tolerance_sum(ir_dtype t, int64_t terms);

typedef struct rt_cmp {
    int64_t n, bad;          /* elements compared, elements out of tolerance */
    int64_t first_bad;       /* index of the first bad element, -1 when none */
    double got, want;        /* values at first_bad */
    double max_abs, max_rel; /* over the finite elements */
    double ref_absmax;       /* largest finite |want| */
    int64_t bad_scaled;      /* elements out of the tolerance widened by tol.scaled * ref_absmax */
} rt_cmp;
/* Compares got against ref element by element. False (with cmp->bad = -1
 * and a line in err) when dtypes or shapes differ; otherwise true, with the
 * verdict in cmp->bad == 0. */
bool rt_compare(const rt_tensor *got, const rt_tensor *ref, rt_tol tol, rt_cmp *cmp, char *err,
                size_t cap);

/* Median of n values (n > 0); sorts v in place. */
double rt_median(double *v, size_t n);
/* GB/s for bytes moved in us microseconds (0 when us <= 0). */
double rt_gbps(double bytes, double us);
/* TFLOP/s for flops in us microseconds (0 when us <= 0). */
double rt_tflops(double flops, double us);
/* Chooses the reference for verifying a program whose inputs and outputs
 * hold `elems` elements in total and which does `flops` FLOPs: "ref" (the
 * double-precision interpreter) when small enough to run in about a
 * second, else "cpu" (the host JIT). */
const char *rt_bench_pick_reference(double elems, double flops);

/* Elements of t still holding the 0xFF poison of rt_gpu_exec_poison (never
 * written by a kernel); 0 for i32, where -1 is a value. */
int64_t rt_count_poison(const rt_tensor *t);

/* ---- calibration (runtime/bench.c) ---------------------------------------
 * `txc bench --calibrate` measures the device copy bandwidth and the launch
 * overhead and saves them as one JSON object, by default in
 * $XDG_CACHE_HOME/tx/calib-<slug>.json (else ~/.cache/tx/...), where slug
 * names the GPU like --gpu does ("NVIDIA H200" -> "h200"). The CLI may load
 * it and apply it to the cost model's pass_gpu before planning
 * (drv_calib_apply). */
typedef struct rt_calib {
    char gpu[128]; /* device name as the driver reports it */
    char slug[64]; /* "h200" */
    int cc, sms, driver;
    int64_t l2_bytes;
    double copy_GBps; /* bytes read + written per second by cuMemcpyDtoD */
    double launch_us; /* per launch, empty kernels launched back to back */
    /* One empty kernel queued behind a 64 MiB memset, between two events: what txc bench's
     * timing (an L2 flush, then the kernels between events) charges a kernel beyond its work;
     * the cost model's per-kernel launch term when measured (0: not measured). */
    double kernel_us;
    /* The cost model's other constants, from tx's own kernels (driver/bench.c; 0: not measured):
     * Little's law latency of a streamed row, the bf16 GEMM rate, the special-function rate. */
    double mem_latency_us, tc_TFLOPs, sfu_Gops;
} rt_calib;
/* "NVIDIA H200" -> "h200", "NVIDIA GeForce RTX 4090" -> "rtx4090",
 * "NVIDIA A100-SXM4-80GB" -> "a100"; "gpu" when nothing is left. */
void rt_gpu_slug(const char *device, char *buf, size_t cap);
/* The default calibration path for a device name (or a --gpu name); false
 * when neither XDG_CACHE_HOME nor HOME is set. */
bool rt_calib_default_path(const char *device, char *buf, size_t cap);
bool rt_calib_save(const char *path, const rt_calib *cal, char *err, size_t cap); /* atomic */
bool rt_calib_load(const char *path, rt_calib *cal, char *err, size_t cap);
bool rt_calib_parse(const char *text, rt_calib *cal, char *err, size_t cap);

/* ---- bench results and reports (runtime/bench.c) ------------------------ */
typedef struct rt_kernel_time {
    char name[64], kind[16];
    int region;
    double us;               /* median alone, L2 flushed */
    double start_us, end_us; /* median offsets within a whole-graph run */
    double bytes, flops;     /* manifest bytes (each HBM tensor once), FLOPs */
    double predicted_us;     /* the planner's time of its region; -1 unknown */
} rt_kernel_time;

/* Programs of each kernel the sampled check (rt_out_check.sampled) re-runs on the host. */
#define RT_SAMPLE_PROGRAMS 8

enum { RT_VERIFY_STRICT, RT_VERIFY_PLAN, RT_VERIFY_SCALED };
typedef struct rt_out_check {
    ir_dtype dtype;
    ir_dtype prec; /* the dtype whose tolerance it was checked at (rt_bench_check_output_at) */
    int64_t terms; /* the f32 sums' terms it was checked for (rt_tolerance_sum); 0: none */
    bool checked;  /* compared against a reference */
    rt_cmp cmp;
    int64_t poisoned; /* elements never written */
    /* How the output passed: RT_VERIFY_STRICT against the per-op-rounding reference (or the
     * host JIT); RT_VERIFY_PLAN against the plan-precision one (rt_interp_run_plan; cmp is
     * against it, strict against the former); RT_VERIFY_SCALED within the scaled tolerance of
     * the closest reference (f16/bf16 after chained products, see docs/runtime.md). */
    int how;
    rt_cmp strict;
    /* > 0: no full reference at this size; this many elements were re-computed by the host JIT
     * (cg_host_sample) and cmp is over them alone. */
    int64_t sampled;
} rt_out_check;

/* Checks one output against the per-op-rounding reference `ref` and, when it misses, against the
 * plan-precision reference `pref` (may be NULL) and the scaled tolerance; fills oc->cmp, oc->how
 * and oc->strict. False (with a line in err) only when dtypes or shapes differ. */
bool rt_bench_check_output(const rt_tensor *got, const rt_tensor *ref, const rt_tensor *pref,
                           rt_out_check *oc, char *err, size_t cap);
/* rt_bench_check_output at the tolerance of dtype `prec` (oc->prec): the precision the output's
 * values carry, narrower than its own dtype when they were rounded to f16/bf16 before a widening
 * cast (f32(a @ b) of f16 operands: one f32 summation order against another flips the f16
 * rounding of some elements, by one f16 ulp). */
bool rt_bench_check_output_at(const rt_tensor *got, const rt_tensor *ref, const rt_tensor *pref,
                              ir_dtype prec, rt_out_check *oc, char *err, size_t cap);
/* rt_bench_check_output_at with rt_tolerance_sum(prec, terms) (oc->terms): the output's elements
 * are sums of `terms` products. */
bool rt_bench_check_output_sum(const rt_tensor *got, const rt_tensor *ref, const rt_tensor *pref,
                               ir_dtype prec, int64_t terms, rt_out_check *oc, char *err,
                               size_t cap);
/* True when the output passed (oc->how says by which verdict). */
bool rt_bench_output_ok(const rt_out_check *oc);

typedef struct rt_bench_result {
    char label[16]; /* "fused", "unfused" */
    uint32_t nkernels, nout;
    rt_kernel_time *k;
    rt_out_check *out;
    bool verified, l2_flushed;
    int iters, iters_asked; /* timed runs, and those asked (more when the budget cut them) */
    double budget_s;        /* the timing budget rt_bench_time kept to (0: none) */
    double graph_us, predicted_us, bytes, flops;
    char sample_note[200]; /* why the sampled check (rt_out_check.sampled) could not run, or "" */
} rt_bench_result;
void rt_bench_result_free(rt_bench_result *res);
/* Fills res's per-kernel rows from the plan (names, kinds, the planner's bytes, FLOPs and
 * predicted times) and their totals; res->predicted_us starts at -1. */
void rt_bench_result_init(rt_bench_result *res, const rt_gpu_plan *p, const char *label);
/* Times the plan loaded in x on c: every kernel alone, then the whole graph with an event after
 * each launch, `iters` timed runs (<= 0: 20; fewer under budget_s, see below) after 3 warm-ups,
 * the L2 flushed before each
 * (a buffer of twice its size, at least 64 MiB, written outside the timing). Fills res's
 * us/start_us/end_us, graph_us, iters and l2_flushed. False on a driver error (the message in
 * rt_gpu_exec_error(x)). */
bool rt_bench_time(rt_cuda *c, rt_gpu_exec *x, const rt_gpu_plan *p, int iters, double budget_s,
                   rt_bench_result *res);
/* The timing budget (budget_s > 0; 0: none): with one flushed graph run first (a warm-up) taking
 * graph_us, the timed runs are cut from `iters` so that the kernels alone and the graph together
 * take about budget_s, but never below RT_BENCH_MIN_ITERS (nor above iters). rt_bench_time
 * records both counts and the reports say when runs were cut. */
#define RT_BENCH_MIN_ITERS 10
#define RT_BENCH_BUDGET_S  1.0 /* txc bench's default (--timing-budget=S) */
int rt_bench_budget_iters(int iters, double budget_s, double graph_us, uint32_t nkernels);
/* Device ceilings: the device-to-device copy bandwidth (bytes read + written per second, the
 * median of 10 copies of up to 1 GiB) and the launch overhead (per launch of an empty kernel
 * launched 200 times back to back, the median of 5 batches). False with the driver's error. */
bool rt_measure_copy(rt_cuda *c, double *GBps);
bool rt_measure_launch(rt_cuda *c, double *us_per);
/* Median time of one empty kernel enqueued behind a 64 MiB memset, between two events (see
 * rt_calib.kernel_us). */
bool rt_measure_kernel(rt_cuda *c, double *us);

/* Where the wall time of one `txc bench` went, in seconds (the report's last line). */
typedef enum {
    RT_PH_INPUTS,    /* making or reading the inputs (the CLI's, before bench) */
    RT_PH_COMPILE,   /* planning and compiling the fused (and unfused) program */
    RT_PH_REFERENCE, /* the CPU reference (interpreter or host JIT) */
    RT_PH_VERIFY,    /* comparing outputs; the sampled check's host re-runs */
    RT_PH_GPU,       /* context, ceilings, module loads, uploads, runs, downloads */
    RT_PH_TIMING,    /* the timed runs (rt_bench_time, within --timing-budget) */
    RT_NPHASES
} rt_phase;
typedef struct rt_bench_report {
    char program[64], device[128], reference[256];
    int cc;
    double copy_GBps, launch_us; /* measured in the same run */
    double phase_s[RT_NPHASES];  /* 0: not measured */
    double total_s;              /* the whole command from the start of bench, inputs included */
} rt_bench_report;
/* The phase's name in reports ("inputs", "compile", ...). */
const char *rt_phase_name(rt_phase p);
/* One line "bench wall time: T s (inputs A s, compile B s, ...)". */
void rt_bench_print_phases(FILE *out, const rt_bench_report *rep);

/* (predicted - measured) / measured in percent; 0 when either is unknown. */
double rt_pred_error_pct(double measured_us, double predicted_us);
/* The headline word of a result: "verified" only when every output was compared (fully or on
 * a sample) and matched; "NOT VERIFIED (no output was compared)", "verified in part (...)",
 * "VERIFICATION FAILED" otherwise. */
const char *rt_bench_verdict(const rt_bench_result *res);
void rt_bench_print_text(FILE *out, const rt_bench_report *rep, const rt_bench_result *res);
void rt_bench_print_timeline(FILE *out, const rt_bench_result *res);
/* The per-output verification lines of a result (verdict, errors, poisoned elements). */
void rt_bench_print_verify(FILE *out, const rt_bench_result *res);
void rt_bench_print_json(FILE *out, const rt_bench_report *rep, const rt_bench_result *fused,
                         const rt_bench_result *unfused);

#endif
