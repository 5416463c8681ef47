/* codegen.h - the codegen floor's interface: planned IR regions to LLVM IR through the LLVM C
 * API, NVPTX to PTX, the host target through ORC LLJIT. What the layers above call: targets,
 * cg_program (compile, emit PTX / LLVM IR), the launch manifest, host runs. Needs no LLVM
 * header. Codegen's own files share codegen/cg_impl.h. Design and manifest format:
 * docs/codegen.md.
 */
#ifndef TX_CODEGEN_H
#define TX_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

typedef enum { CG_SM80, CG_SM86, CG_SM89, CG_SM90, CG_SM90A, CG_HOST, CG_NTARGETS } cg_target;

/* "sm_80" ... "sm_90a", "host" -> target; -1 when unknown. */
int cg_target_parse(const char *s);
/* The name cg_target_parse accepts; "?" for an out-of-range value. */
const char *cg_target_name(cg_target t);
/* Comma-separated list of target names, for error messages. */
const char *cg_target_names(void);

/* One compiled program: LLVM context, module, target machine, the kernels
 * of every region of a planned graph, and the manifest. */
typedef struct cg_program cg_program;

/* Compiles a planned graph (after pass_run_pipeline: g->regions filled and
 * every non-leaf node assigned a region) for target t. The graph is only
 * read; the program keeps no pointer to it. Returns NULL with an error
 * reported to d on failure (unsupported region, LLVM failure). */
cg_program *cg_program_new(const ir_graph *g, cg_target t, tx_diag *d);
void cg_program_free(cg_program *p);

/* Writes the optimised LLVM IR module as text. False on a write error. */
bool cg_program_emit_llvm(cg_program *p, FILE *out);
/* Writes the PTX (GPU targets only; false with an error for host). */
bool cg_program_emit_ptx(cg_program *p, FILE *out);
/* NUL-terminated PTX text (owned by p, valid until cg_program_free) for
 * cuModuleLoadData; *len (may be NULL) gets its length without the NUL.
 * NULL for the host target or when the backend failed. */
const char *cg_program_ptx(cg_program *p, size_t *len);
cg_target cg_program_target(const cg_program *p);
/* Turns on LLVM's -time-passes for the whole process (tables printed at exit); call at most once
 * per process (txc does with TX_CODEGEN_TIME=passes). */
void cg_llvm_time_passes(void);

/* ---- manifest ------------------------------------------------------------
 * Every kernel takes, in order: one pointer per buffer (cg_kernel.bufs),
 * then one i64 per symbolic dim (cg_kernel.syms: symbol indices of the
 * graph, in increasing order). Buffers are 16-byte aligned, C-ordered,
 * stored at the value's dtype (f16/bf16 as 16-bit patterns, bool as bytes).
 * Kernels run in index order (regions in dependency order, then output
 * copies); each must finish before the next starts. */
typedef enum {
    CG_BUF_INPUT,  /* graph input `index` (parameter order) */
    CG_BUF_OUTPUT, /* graph output `index` (return order) */
    CG_BUF_TEMP,   /* intermediate `index` of cg_program_temp */
} cg_buf_kind;

typedef struct cg_buf {
    uint8_t kind;   /* cg_buf_kind */
    uint8_t write;  /* the kernel writes it (else only reads) */
    uint32_t index; /* see cg_buf_kind */
    ir_id value;    /* the IR value it holds (id in the compiled graph) */
} cg_buf;

/* An intermediate buffer the runtime allocates before running the kernels:
 * shape may hold symbolic dims (IR_DIM_IS_SYM), resolved with the bound syms.
 * Intermediates of one dtype and shape whose lifetimes (first to last kernel
 * using them) do not overlap share one buffer, so a long unfused chain needs
 * two; `value` is the first value it holds (each kernel's cg_buf.value says
 * which one that kernel reads or writes). */
typedef struct cg_temp {
    ir_id value;
    ir_dtype dtype;
    ir_shape shape;
    bool staged; /* a staged operand copy ([matmul.wgmma.stage], device only): numbered after
                    every other temp, so a host program's buffers are a device plan's first ones */
    bool zeroed; /* a workspace whose bytes must be zero before its kernel's first launch and
                    that the kernel leaves zero (the stream-K flags, staged too: device
                    only; the split rows' tickets and partials, host too):
                    the runtime clears it once when it allocates it and never poisons it;
                    manifest "zero": true */
} cg_temp;

/* A TMA tensor map a kernel takes by value (a 128-byte grid-constant
 * parameter after its symbols, in order): the runtime encodes it with
 * cuTensorMapEncodeTiled once the buffer's address is known, for buffer
 * bufs[buf] seen as a `rank`-D (2 to CG_TMAP_MAXR) C-ordered array of dtype
 * elements with extents dim[0] (inner, contiguous) x dim[1] x ... x
 * dim[rank - 1]: the stride of dim j is the product of dim[0..j) elements;
 * box box[0] x ... x box[rank - 1], `swizzle`-byte swizzle, zero fill out
 * of bounds. A map of rank >= 3 with outer.rank > 0 has the product of
 * outer's dims (which may be symbolic: the planes of a buffer's leading
 * dims, e.g. batch x heads) as its last dim, dim[rank - 1]. */
#define CG_TMAP_MAXR 5 /* cuTensorMapEncodeTiled's most dims */
typedef struct cg_tmap {
    uint32_t buf;
    uint8_t dtype;            /* ir_dtype */
    uint8_t rank;             /* 2 to CG_TMAP_MAXR */
    uint16_t swizzle;         /* bytes: 128 */
    ir_dim dim[CG_TMAP_MAXR]; /* may be symbolic */
    uint32_t box[CG_TMAP_MAXR];
    ir_shape outer; /* when outer.rank > 0, dim[rank - 1] = the product of its dims (rank 2: the
                       rows of a product whose leading dims fold into M) */
    int64_t pitch;  /* the stride in elements of dim pdim when the buffer's rows are pitched (a
                       staged copy, [matmul.wgmma.stage]; a slice of wider rows, attention's
                       qkv.split); 0: dense */
    uint8_t pdim;   /* the dim whose stride is pitch (0: dim 1) */
    int64_t offset; /* elements from the buffer's start to the map's first element */
} cg_tmap;

typedef struct cg_kernel {
    char *name; /* entry symbol: GRAPH_k<region>[suffix], GRAPH_out<slot> for copies */
    int region; /* region index of the graph; -1: an output copy kernel */
    unsigned nbufs;
    cg_buf *bufs;
    unsigned nsyms;
    uint32_t *syms; /* symbol indices, each an i64 parameter after the buffers */
    /* Launch geometry: grid[d] = min(cap[d], ceil(numel(work[d]) / per[d]))
     * (at least 1); block and dynamic shared memory are fixed. */
    ir_shape work[3];
    int64_t per[3], cap[3];
    unsigned block[3];
    unsigned smem_bytes;
    /* Persistent kernels: when nonzero and grid x*y*z exceeds it, the grid
     * is (persist, 1, 1), or (persist / cluster, cluster, 1) for a clustered
     * kernel; the kernel walks its work itself. */
    unsigned persist;
    /* Thread-block clusters: when > 1, the kernel's blocks form clusters of (1, cluster, 1) (its
     * grid y is `cluster`; the PTX declares .reqnctapercluster; the manifest says "cluster"). */
    unsigned cluster;
    unsigned ntmaps;
    cg_tmap *tmaps; /* parameters after the symbols */
    char tmpl[64];  /* template and parameters ("" for the generic emitters) */
    /* The planner's FLOPs of its region (pass_region_flops; 0 for an output
     * copy), symbolic; the manifest carries it for the runtime. */
    ir_poly flops;
} cg_kernel;

unsigned cg_program_nkernels(const cg_program *p);
const cg_kernel *cg_program_kernel(const cg_program *p, unsigned k);
unsigned cg_program_ntemps(const cg_program *p);
const cg_temp *cg_program_temp(const cg_program *p, unsigned i);
/* Number of graph symbols (the length of the syms arrays below). */
unsigned cg_program_nsyms_total(const cg_program *p);

/* Launch geometry of kernel k for the symbol values syms[0..nsyms_total)
 * (every symbol the kernel uses bound to a value >= 0). False when k is out
 * of range or a size overflows. A kernel whose work is empty gets grid 0
 * (the caller skips the launch). */
bool cg_kernel_geometry(const cg_program *p, unsigned k, const int64_t *syms, unsigned grid[3],
                        unsigned block[3], unsigned *smem_bytes);
/* Resolves a (possibly symbolic) shape with bound syms; false on overflow
 * or an unbound symbol. */
bool cg_shape_resolve(const ir_shape *s, const int64_t *syms, unsigned nsyms, int64_t *dims);

/* The manifest as JSON (format in docs/codegen.md). False on a write error. */
bool cg_manifest_write(const cg_program *p, FILE *out);

/* Host execution: compiles the planned graph g for CG_HOST, JITs it and runs every kernel in
 * order at the bound sizes syms (g->nsyms entries, every symbol bound, e.g. from the input
 * shapes). inputs[i] holds parameter i's data (any alignment: misaligned ones are copied);
 * outputs[k] is caller-owned room for returned value k, 16-byte aligned and sized from g's
 * output shape at syms. Intermediates are allocated here (zeroed). TX_HOST_RUNS=N runs the
 * program N times (at most 8) on the same intermediates, the outputs filled with 0xFF bytes
 * before each run after the first: a workspace its kernels must leave zero is checked that way.
 * False with an error reported. */
bool cg_host_run(const ir_graph *g, const int64_t *syms, void *const *inputs, void *const *outputs,
                 tx_diag *d);

/* Sampled host re-run of a program another device ran (txc bench's check of outputs too large for
 * a full reference). bufs[0..nbufs) are that run's buffers in the manifest's order (inputs, then
 * outputs, then codegen's intermediates; the order of drv_gpu_plan_from_cg), bytes[] their sizes,
 * syms the bound sizes; a NULL entry is asked of fetch(fetch_arg, b) the first time a sampled
 * kernel reads it (fetch NULL or returning NULL: an error) and stored back into bufs. Compiles g
 * for the host and, for every kernel that writes a returned value, runs up to `per_kernel` of its
 * programs (spread over its host grid; all of them when the grid is smaller) reading the kernel's
 * inputs from bufs, so each such kernel is checked on the device's own inputs. Kernels whose host
 * grid is a single program and whose FLOPs (kflops[k], the plan's figure; NULL: unknown) exceed
 * `max_flops` are skipped, and so are kernels reading an intermediate that a later kernel
 * overwrites (intermediates share buffers: the device's final contents are not what the kernel
 * read). What the kernels write goes to fresh 16-byte aligned copies filled with `poison` bytes:
 * sampled[b] (NULL for buffers nothing wrote; caller frees). With sampled2 (may be NULL), every
 * sampled program also runs into a second set of copies filled with poison ^ 0xFF: the elements
 * both agree on are those the host wrote (one compile for both). The device's plan may hold more
 * intermediates after the host program's (staged operand copies, cg_temp.staged); the host's are
 * its first ones. False with an error reported (including a plan whose buffers do not match
 * g's). */
typedef void *(*cg_fetch_fn)(void *arg, unsigned buf);
bool cg_host_sample(const ir_graph *g, const int64_t *syms, void **bufs, cg_fetch_fn fetch,
                    void *fetch_arg, const int64_t *bytes, unsigned nbufs, unsigned per_kernel,
                    const double *kflops, double max_flops, unsigned char poison, void **sampled,
                    void **sampled2, tx_diag *d);

#endif
