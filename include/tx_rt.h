/* tx_rt.h - the tx runtime's public C API: run kernels compiled earlier by
 * `txc FILE.tx` (FILE.ptx and its launch manifest FILE.ptx.json) with no
 * compiler, no LLVM and no frontend, the way the CUDA driver API runs what
 * NVRTC compiled. Open a device, load the kernels at concrete input shapes
 * (symbolic dims bind from them; launch geometry follows), bind device
 * buffers, launch and time.
 *
 * Link with the tx_rt library (CMake target tx_rt, libtx_rt.so: the runtime
 * and the IR's tables only). The CUDA driver (libcuda.so.1, or the library
 * TX_CUDA_LIB names) is opened at run time. Every call that can fail returns
 * NULL or TX_ERR and leaves a message: in the caller's err buffer for calls
 * that take one, else in tx_device_error(). Handles are not thread-safe;
 * use one per thread. tx.h (the compiler) includes this header and shares
 * its types. Documented in docs/runtime.md; example: examples/load_demo.c. */
#ifndef TX_RT_H
#define TX_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TX_OK       0
#define TX_ERR      (-1)
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

typedef struct tx_device tx_device;
typedef struct tx_loaded tx_loaded;
/* Kernels compiled earlier: PTX text and its parsed manifest, not yet on a device. */
typedef struct tx_kernels tx_kernels;

/* ---- devices ----------------------------------------------------------- */
/* Opens GPU 0 through the CUDA driver. NULL with err set without a driver
 * or GPU ("no CUDA driver found (libcuda.so.1: ...); use --device=cpu"). */
tx_device *tx_device_open(char *err, size_t cap);
/* Opens GPU `ordinal` sharing its primary context, the one the CUDA
 * runtime (PyTorch, CuPy) uses, so their device memory can be bound and
 * their streams launched on. The context is made current on the calling
 * thread and again by tx_load / tx_launch_on on theirs. */
tx_device *tx_device_open_primary(int ordinal, char *err, size_t cap);
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

/* ---- kernels compiled earlier -------------------------------------------- */
/* Reads PTX_PATH (the .ptx txc wrote) and PTX_PATH.json (its manifest).
 * NULL with err set (unreadable file, malformed or incompatible manifest). */
tx_kernels *tx_kernels_load(const char *ptx_path, char *err, size_t cap);
/* The same from memory: NUL-terminated PTX and manifest_len bytes of manifest. */
tx_kernels *tx_kernels_new(const char *ptx, const char *manifest, size_t manifest_len, char *err,
                           size_t cap);
void tx_kernels_free(tx_kernels *k);
/* The manifest's target ("sm_90"), input/output/kernel counts, and the
 * declared type of input i / output o (data NULL; -1 for a symbolic dim)
 * with its source name (may be ""). TX_ERR when out of range. */
const char *tx_kernels_target(const tx_kernels *k);
unsigned tx_kernels_num_inputs(const tx_kernels *k);
unsigned tx_kernels_num_outputs(const tx_kernels *k);
unsigned tx_kernels_num_kernels(const tx_kernels *k);
int tx_kernels_input(const tx_kernels *k, unsigned i, tx_tensor *type, const char **name);
int tx_kernels_output(const tx_kernels *k, unsigned o, tx_tensor *type, const char **name);
/* The symbol (as the source names it, "N") of dim d of input i; NULL when
 * that dim is a fixed size or out of range. */
const char *tx_kernels_input_symbol(const tx_kernels *k, unsigned i, unsigned d);
/* Loads the kernels on d for concrete input types (one per input, in
 * parameter order; data ignored): binds the symbolic dims from their shapes,
 * evaluates every launch's geometry and allocates the intermediates. NULL
 * with err set (wrong count, dtype, rank or size, naming the input). */
tx_loaded *tx_load_kernels(tx_device *d, const tx_kernels *k, const tx_tensor *input_types,
                           unsigned nin, char *err, size_t cap);

/* ---- binding, launching (kernels from tx_load_kernels or tx.h's tx_load) - */
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
/* tx_launch on `stream` (a CUstream of the device's context, e.g. PyTorch's
 * torch.cuda.current_stream().cuda_stream; 0: the legacy default stream).
 * Intermediates belong to l: launches of one tx_loaded on two streams at
 * once race on them. */
int tx_launch_on(tx_loaded *l, uint64_t stream);
/* Runs tx_launch `iters` times after 3 warm-ups and gives the median time
 * per launch in microseconds (CUDA events; L2 not flushed). */
int tx_time(tx_loaded *l, int iters, double *median_us);
unsigned tx_loaded_num_kernels(const tx_loaded *l);

#ifdef __cplusplus
}
#endif
#endif
