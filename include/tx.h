/* tx.h - the public C API of tx: compile a .tx program, run it on host
 * tensors (reference interpreter, host JIT or GPU), or load its kernels on
 * a GPU (then bind device buffers, launch and time them with tx_rt.h).
 *
 * Link with the tx libraries (CMake target tx_driver, which brings the
 * floors below it, LLVM included). A program that only runs kernels
 * compiled earlier needs tx_rt.h and the tx_rt library alone. The CUDA driver is loaded at run
 * time; nothing CUDA is needed to build or to run on the CPU. Every call that can fail returns NULL
 * or TX_ERR and leaves a message: in the caller's err buffer for calls that take one, else in
 * tx_device_error(). Handles are not thread-safe; use one per thread. Documented in
 * docs/runtime.md. */
#ifndef TX_H
#define TX_H

#include <stddef.h>
#include <stdint.h>

#include "tx_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TX_API_VERSION 2
typedef struct tx_options {
    const char *entry;          /* entry function; NULL: the last in the file */
    const char *const *defines; /* "NAME=INT" bindings of symbolic dims (like -D) */
    unsigned ndefines;
    const char *target; /* "sm_80" ... "sm_90a" (default "sm_90") */
    const char *gpu;    /* cost-model hardware (default "h200") */
    int no_fuse;        /* 1: one kernel per operation */
} tx_options;

/* TX_API_VERSION of the library (libtx.so) actually loaded. */
int tx_api_version(void);

typedef struct tx_program tx_program;

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

/* Text forms of a compiled program, as txc writes them: --emit=ir, report,
 * json, dot, svg, and the --explain text the planner printed. */
typedef enum {
    TX_TEXT_IR,
    TX_TEXT_REPORT,
    TX_TEXT_JSON,
    TX_TEXT_DOT,
    TX_TEXT_SVG,
    TX_TEXT_EXPLAIN,
    TX_TEXT_KINDS
} tx_text_kind;
/* Text form `kind` of p (NUL-terminated, owned by p, made once). NULL with
 * err set on failure (e.g. a report of a program too large to plan). */
const char *tx_program_text(tx_program *p, tx_text_kind kind, char *err, size_t cap);

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

/* ---- loading on a device (the device, binding, launching: tx_rt.h) ---------- */
/* Loads p's kernels on d for concrete input types (one per input; dims
 * must match the declared ones where bound; data ignored) and allocates the
 * intermediates. NULL with err set. Bind, launch, time and unload the result
 * with the tx_rt.h calls. */
tx_loaded *tx_load(tx_device *d, tx_program *p, const tx_tensor *input_types, unsigned nin,
                   char *err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
