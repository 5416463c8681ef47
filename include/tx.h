/* tx.h - the public C API of tx: compile a .tx program, run it on host
 * tensors (reference interpreter, host JIT or GPU), or load its kernels on
 * a GPU, bind device buffers, launch and time them.
 *
 * Link with the tx libraries (CMake target tx_driver, which brings the
 * floors below it). The CUDA driver is loaded at run time; nothing CUDA is needed
 * to build or to run on the CPU. Every call that can fail returns NULL or
 * TX_ERR and leaves a message: in the caller's err buffer for calls that
 * take one, else in tx_device_error(). Handles are not thread-safe; use
 * one per thread. Documented in docs/runtime.md. */
#ifndef TX_H
#define TX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TX_API_VERSION 1
#define TX_OK 0
#define TX_ERR (-1)
#define TX_MAX_RANK 8

/* Element types; host data is stored at the dtype: f32 as float, f16/bf16
 * as uint16_t bit patterns, i32 as int32_t, bool as uint8_t 0/1. */
typedef enum { TX_F32, TX_F16, TX_BF16, TX_I32, TX_BOOL } tx_dtype;

/* A host tensor (C order). For inputs the caller owns data; outputs from
 * tx_run are allocated by tx and released with tx_tensor_release. In a
 * program's declared types, a dim of -1 is a symbolic size left unbound. */
typedef struct tx_tensor {
    tx_dtype dtype;
    int rank;
    int64_t dim[TX_MAX_RANK];
    void *data;
} tx_tensor;

typedef struct tx_options {
    const char *entry;           /* entry function; NULL: the last in the file */
    const char *const *defines;  /* "NAME=INT" bindings of symbolic dims (like -D) */
    unsigned ndefines;
    const char *target;          /* "sm_80" ... "sm_90a" (default "sm_90") */
    const char *gpu;             /* cost-model hardware (default "h200") */
    int no_fuse;                 /* 1: one kernel per operation */
} tx_options;

typedef struct tx_program tx_program;
typedef struct tx_device tx_device;
typedef struct tx_loaded tx_loaded;

/* ---- compiling --------------------------------------------------------- */
/* Compiles source text (len bytes; `file` names it in messages) with opt
 * (NULL: defaults). NULL on error with the diagnostics in err. */
tx_program *tx_compile(const char *file, const char *src, size_t len, const tx_options *opt,
                       char *err, size_t cap);
tx_program *tx_compile_file(const char *path, const tx_options *opt, char *err, size_t cap);
void tx_program_free(tx_program *p);

unsigned tx_program_num_inputs(const tx_program *p);
unsigned tx_program_num_outputs(const tx_program *p);
/* Declared type of input i / output k (data NULL; dims -1 where unbound)
 * and its source name (may be ""). TX_ERR when out of range. */
int tx_program_input(const tx_program *p, unsigned i, tx_tensor *type, const char **name);
int tx_program_output(const tx_program *p, unsigned k, tx_tensor *type);
/* The program's PTX (owned by p); NULL with err set when it was compiled
 * for the host or code generation fails. */
const char *tx_program_ptx(tx_program *p, char *err, size_t cap);

/* ---- running on host tensors --------------------------------------------- */
typedef enum { TX_ON_REF, TX_ON_CPU, TX_ON_GPU } tx_where;
/* Runs p on host inputs (parameter order, nin of them) with the reference
 * interpreter, the host JIT or the GPU, and allocates outputs[0..nout)
 * (return order; nout must equal tx_program_num_outputs). Shapes bind the
 * unbound dims. TX_ERR with a message in err. */
int tx_run(tx_program *p, tx_where where, const tx_tensor *inputs, unsigned nin, tx_tensor *outputs,
           unsigned nout, char *err, size_t cap);
/* Frees data allocated by tx_run and clears t. */
void tx_tensor_release(tx_tensor *t);

/* ---- devices ----------------------------------------------------------- */
/* Opens GPU 0 through the CUDA driver. NULL with err set without a driver
 * or GPU ("no CUDA driver found (libcuda.so.1: ...); use --device=cpu"). */
tx_device *tx_device_open(char *err, size_t cap);
void tx_device_close(tx_device *d);
const char *tx_device_name(const tx_device *d);
/* The last error of d or of anything loaded on it. */
const char *tx_device_error(const tx_device *d);
/* Device memory; addresses are CUdeviceptr values. */
int tx_device_alloc(tx_device *d, size_t bytes, uint64_t *ptr);
void tx_device_free(tx_device *d, uint64_t ptr);
int tx_device_upload(tx_device *d, uint64_t dst, const void *src, size_t bytes);
int tx_device_download(tx_device *d, void *dst, uint64_t src, size_t bytes);
int tx_device_sync(tx_device *d);

/* ---- loading, binding, launching ---------------------------------------- */
/* Loads p's kernels on d for concrete input types (one per input; dims
 * must match the declared ones where bound; data ignored) and allocates the
 * intermediates. NULL with err set. */
tx_loaded *tx_load(tx_device *d, tx_program *p, const tx_tensor *input_types, unsigned nin, char *err,
                   size_t cap);
void tx_unload(tx_loaded *l);
/* Concrete type of output k at the loaded sizes (data NULL), and the bytes
 * a buffer for it needs. */
int tx_loaded_output(const tx_loaded *l, unsigned k, tx_tensor *type, size_t *bytes);
/* Binds input i / output k to device memory of at least its size. */
int tx_bind_input(tx_loaded *l, unsigned i, uint64_t ptr);
int tx_bind_output(tx_loaded *l, unsigned k, uint64_t ptr);
/* Launches every kernel in order (asynchronously; tx_device_sync waits).
 * TX_ERR when a buffer is unbound or the driver fails. */
int tx_launch(tx_loaded *l);
/* Runs tx_launch `iters` times after 3 warm-ups and gives the median time
 * per launch in microseconds (CUDA events; L2 not flushed). */
int tx_time(tx_loaded *l, int iters, double *median_us);
unsigned tx_loaded_num_kernels(const tx_loaded *l);

#ifdef __cplusplus
}
#endif
#endif
