/* codegen.h - planned IR regions to LLVM IR through the LLVM C API; NVPTX
 * to PTX; the host target through ORC LLJIT.
 *
 * One emitter per region kind builds the kernel body once for both targets;
 * a small per-target "mechanics" layer supplies program/thread ids, warp
 * shuffles, shared memory and barriers (on the host a block has exactly one
 * thread and the kernel body runs in loops over the program ids).
 * Design and manifest format: docs/codegen.md.
 */
#ifndef TX_CODEGEN_H
#define TX_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"
#include "runtime/runtime.h"

/* ==== exported API ======================================================= */

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
 * shape may hold symbolic dims (IR_DIM_IS_SYM), resolved with the bound syms. */
typedef struct cg_temp {
    ir_id value;
    ir_dtype dtype;
    ir_shape shape;
} cg_temp;

typedef struct cg_kernel {
    char *name;          /* entry symbol: GRAPH_k<region>[suffix], GRAPH_out<slot> for copies */
    int region;          /* region index of the graph; -1: an output copy kernel */
    unsigned nbufs;
    cg_buf *bufs;
    unsigned nsyms;
    uint32_t *syms;      /* symbol indices, each an i64 parameter after the buffers */
    /* Launch geometry: grid[d] = min(cap[d], ceil(numel(work[d]) / per[d]))
     * (at least 1); block and dynamic shared memory are fixed. */
    ir_shape work[3];
    int64_t per[3], cap[3];
    unsigned block[3];
    unsigned smem_bytes;
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
bool cg_kernel_geometry(const cg_program *p, unsigned k, const int64_t *syms,
                        unsigned grid[3], unsigned block[3], unsigned *smem_bytes);
/* Resolves a (possibly symbolic) shape with bound syms; false on overflow
 * or an unbound symbol. */
bool cg_shape_resolve(const ir_shape *s, const int64_t *syms, unsigned nsyms, int64_t *dims);

/* The manifest as JSON (format in docs/codegen.md). False on a write error. */
bool cg_manifest_write(const cg_program *p, FILE *out);

/* Host execution: compiles g for CG_HOST, JITs it, binds the symbolic dims
 * from the inputs (rt_bind_shapes), allocates intermediates and outputs,
 * runs every kernel in order. `outputs` gets one tensor per returned value
 * (caller frees with rt_tensor_free). False with an error reported. */
bool cg_host_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d);

/* ==== internal interface (codegen sources only) ==========================
 * Used by the per-kind region emitters (the codegen sources), including codegen/matmul.c and
 * codegen/attention.c. Everything below needs the LLVM C headers. */
#ifdef TX_CODEGEN_INTERNAL
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

/* A logical index into a shape: the linear offset (C order) and, computed
 * on demand, the per-dim components. `lin` is always set. */
typedef struct cg_index {
    const ir_shape *shape;
    LLVMValueRef lin;               /* i64 */
    LLVMValueRef dim[IR_MAX_RANK];  /* i64 each, NULL until cg_index_dims */
} cg_index;

typedef struct cg_memo_ent {
    ir_id node;
    LLVMValueRef key;   /* the index's lin */
    LLVMValueRef val;
} cg_memo_ent;

#define CG_VEC_MAXLIN 16

/* The emission context: one per program, reused by every kernel. */
typedef struct cg_ctx {
    cg_target target;
    bool gpu;                 /* NVPTX mechanics (else host) */
    tx_diag *diag;
    const ir_graph *g;
    LLVMContextRef llctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, voidt;
    LLVMTypeRef ptr;          /* generic pointer (addrspace 0) */
    LLVMTypeRef gptr;         /* buffer pointer: addrspace 1 on GPU, 0 on host */
    LLVMTypeRef sptr;         /* shared memory pointer: addrspace 3 on GPU, 0 on host */
    /* Per kernel (set by cg_kernel_begin, cleared by cg_kernel_end). */
    LLVMValueRef fn;
    cg_kernel *k;             /* manifest entry being built */
    unsigned region;          /* region being emitted (IR_NONE: output copy) */
    LLVMValueRef *valptr;     /* per node: HBM buffer pointer param, or NULL */
    LLVMValueRef *symval;     /* per graph symbol: i64 value (param or constant) */
    LLVMValueRef pid[3];      /* host: program ids (params of the body) */
    LLVMValueRef npid[3];     /* host: program counts (params of the body) */
    /* Values that cg_emit_value returns for a node at any index (reduction
     * results of the current row, a matmul accumulator ...). */
    LLVMValueRef *subst;      /* per node, NULL when none */
    /* Memo: node at index -> value, a stack (scope = depth). */
    cg_memo_ent *memo;
    unsigned nmemo, memocap;
    /* Vector-load cache of the pointwise and reduction emitters (value.c). */
    unsigned vecw;            /* elements per vector; 0: off */
    unsigned vecn;            /* entries of veclin: groups of vecw consecutive elements */
    const ir_shape *vecshape; /* shape whose values the vector loads cover */
    LLVMValueRef veclin[CG_VEC_MAXLIN]; /* lin of element j; group j / vecw starts at an aligned lin */
    LLVMBuilderRef vecb;      /* builder positioned where group loads go (NULL: at the use) */
    LLVMValueRef *veccache;   /* [node * CG_VEC_MAXLIN + group]: loaded <vecw x T> or NULL */
    /* Lins of row-broadcast operands (a shape equal to vecshape's trailing
     * dims) derived from veclin[j]: lane j % vecw of the group at base. */
    struct { LLVMValueRef lin, base; unsigned j; } vecalias[CG_VEC_MAXLIN * 4];
    unsigned nvecalias;
    /* Helpers defined on demand (per program). */
    LLVMValueRef mathfn[IR_NOPS];
    /* Manifest under construction. */
    cg_kernel *kernels;
    unsigned nkernels, kcap;
    cg_temp *temps;
    unsigned ntemps, tcap;
    int32_t *bufidx_kind;     /* per node: cg_buf_kind + 1 of its HBM home, 0 none */
    uint32_t *bufidx;         /* per node: index within that kind */
    uint32_t *outslots;       /* per node: first output slot returning it, or UINT32_MAX */
} cg_ctx;

/* The program (private to the codegen sources). */
struct cg_program {
    cg_target target;
    LLVMTargetMachineRef tm;
    LLVMContextRef llctx;
    void *tsc;                /* host: LLVMOrcThreadSafeContextRef owning llctx */
    LLVMModuleRef mod;        /* NULL once handed to the JIT */
    char *ptx;
    size_t ptxlen;
    cg_kernel *kernels;
    unsigned nkernels;
    cg_temp *temps;
    unsigned ntemps;
    unsigned nsyms;
    char **symnames;
};

/* Target machine for t (NVPTX +ptx80 for sm_*, the host CPU for CG_HOST);
 * NULL with an error reported. */
LLVMTargetMachineRef cg_tm_new(cg_target t, tx_diag *d);
void cg_tm_free(LLVMTargetMachineRef tm);

/* ---- kernels and parameters ---- */
/* Starts a kernel for `region` (IR_NONE for an output copy kernel): decides
 * which HBM values it reads and writes (values used in the region but
 * produced outside it; values produced in it and needed outside), creates
 * the LLVM function with one pointer per buffer then the i64 symbols, and
 * positions the builder in its entry block. On the host the function also
 * takes six i64: the program ids x, y, z and the program counts x, y, z. Returns false with an error reported. */
bool cg_kernel_begin(cg_ctx *cx, unsigned region, const char *suffix);
/* Finishes the kernel (ret void) and records the geometry: grid[d] =
 * min(cap[d], ceil(numel(work[d]) / per[d])), block, dynamic smem. */
void cg_kernel_end(cg_ctx *cx, const ir_shape work[3], const int64_t per[3],
                   const int64_t cap[3], const unsigned block[3], unsigned smem);
/* Abandons the kernel just begun (after LLVMDeleteFunction of cx->fn):
 * removes its manifest entry. For regions with nothing to store. */
void cg_kernel_drop(cg_ctx *cx);
/* True when node id's value lives in HBM for the current kernel (it has a
 * buffer parameter); such values are loaded, not recomputed. */
bool cg_is_hbm(const cg_ctx *cx, ir_id id);
/* True when node id must be stored by the current kernel (produced in the
 * region and read elsewhere or returned). */
bool cg_is_region_output(const cg_ctx *cx, ir_id id);
/* The buffer pointer parameter of an HBM value (NULL when it has none). */
LLVMValueRef cg_buf_ptr(cg_ctx *cx, ir_id id);
/* i64 value of dim d of shape s (a constant or a symbol parameter). */
LLVMValueRef cg_dim(cg_ctx *cx, ir_dim d);
/* i64 element count of shape s. */
LLVMValueRef cg_numel(cg_ctx *cx, const ir_shape *s);

/* ---- index math ---- */
cg_index cg_index_lin(const ir_shape *s, LLVMValueRef lin);
/* Index from components (lin computed). */
cg_index cg_index_from_dims(cg_ctx *cx, const ir_shape *s, const LLVMValueRef *dims);
/* Fills idx->dim from idx->lin (div/mod by the dims). */
void cg_index_dims(cg_ctx *cx, cg_index *idx);
/* Index into `to` (a shape that broadcasts to idx->shape, NumPy rules)
 * reading the element that idx sees: stride 0 on broadcast dims. */
cg_index cg_index_bcast(cg_ctx *cx, cg_index *idx, const ir_shape *to);

/* ---- values ---- */
/* The compute type of a dtype: f32 for floats, i32, i1 for bool. */
LLVMTypeRef cg_ctype(cg_ctx *cx, ir_dtype t);
/* The in-memory element type of t (f32, i16 for f16/bf16, i32, i8). */
LLVMTypeRef cg_stype(cg_ctx *cx, ir_dtype t);
/* w-wide vector load (storage type, aligned to w elements) with builder b,
 * and the matching store of w compute values. */
LLVMValueRef cg_load_vec(cg_ctx *cx, LLVMBuilderRef b, LLVMValueRef base, ir_dtype t, LLVMValueRef lin,
                         unsigned w);
void cg_store_vec(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin, LLVMValueRef *vals, unsigned w);
/* Loads element lin of a buffer of dtype t, converted to the compute type. */
LLVMValueRef cg_load(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin);
/* Stores compute-type value v at element lin (f16/bf16 round to nearest even). */
void cg_store(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin, LLVMValueRef v);
/* f16/bf16 bit patterns (i16) <-> f32, round to nearest even. */
LLVMValueRef cg_half_to_f32(cg_ctx *cx, LLVMValueRef h, ir_dtype t);
LLVMValueRef cg_f32_to_half(cg_ctx *cx, LLVMValueRef f, ir_dtype t);
/* Converts a compute value from dtype `from` to dtype `to` (cast rules). */
LLVMValueRef cg_convert(cg_ctx *cx, LLVMValueRef v, ir_dtype from, ir_dtype to);
/* The scalar value of `node` at logical index idx (idx->shape == node's
 * shape): loads HBM values, folds constants to immediates, substitutes
 * cx->subst entries, turns views into index math and broadcasts into
 * stride-0 indexing, and recomputes in-region elementwise producers.
 * Returns NULL (error reported) for nodes it cannot compute (a reduction or
 * matmul without a substitution). */
LLVMValueRef cg_emit_value(cg_ctx *cx, ir_id node, cg_index *idx);
/* Memo scopes: values memoised after cg_memo_mark are forgotten by
 * cg_memo_reset(mark) (use around control flow that does not dominate). */
unsigned cg_memo_mark(const cg_ctx *cx);
void cg_memo_reset(cg_ctx *cx, unsigned mark);
/* Unary/binary elementwise op on compute values of dtype t (result dtype rt). */
LLVMValueRef cg_emit_op(cg_ctx *cx, ir_op op, ir_dtype t, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef c, ir_dtype rt);

/* ---- math (codegen/math.c): f32 in, f32 out, same code on both targets ---- */
/* Calls the module's implementation of op (EXP EXP2 LOG LOG2 TANH ERF SIN COS
 * SIGMOID GELU GELU_TANH SILU RSQRT SQRT; POW takes two arguments). */
LLVMValueRef cg_math(cg_ctx *cx, ir_op op, LLVMValueRef x, LLVMValueRef y);

/* ---- mechanics (codegen/target.c) ---- */
/* Program (block) id and count along d (i64); on the host the ids are the
 * body's parameters and counts come from the grid. */
LLVMValueRef cg_program_id(cg_ctx *cx, int d);
LLVMValueRef cg_program_count(cg_ctx *cx, int d);
/* Thread id within the block along x (i32; 0 on the host) and block size. */
LLVMValueRef cg_thread_id(cg_ctx *cx);
unsigned cg_warp_size(const cg_ctx *cx); /* 32 on GPU, 1 on the host */
void cg_barrier(cg_ctx *cx);              /* bar.sync 0; nothing on the host */
/* Butterfly shuffle of an f32/i32 value across the warp (xor lane mask). */
LLVMValueRef cg_shfl_xor(cg_ctx *cx, LLVMValueRef v, unsigned mask);
/* A static shared-memory array of n elements of type t (addrspace 3 on
 * GPU; a private alloca on the host). Returns the pointer. */
LLVMValueRef cg_shared_array(cg_ctx *cx, LLVMTypeRef t, unsigned n, const char *name);
/* Block-wide reduction of v (op SUM, MAX or MIN, f32 or i32) across the
 * block's `threads` threads; every thread receives the result. Uses `scratch`
 * (from cg_shared_array, >= 32 elements of v's type). */
LLVMValueRef cg_block_reduce(cg_ctx *cx, ir_op op, LLVMValueRef v, unsigned threads,
                             LLVMValueRef scratch);
/* Combine and identity of a reduction op on compute values. */
LLVMValueRef cg_reduce_combine(cg_ctx *cx, ir_op op, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_reduce_identity(cg_ctx *cx, ir_op op, LLVMTypeRef t);

/* ---- control flow helpers ---- */
/* for (i = start; i < end; i += step) body: creates the loop, positions
 * the builder in the body and returns the i64 induction value; close it with
 * cg_loop_end. */
typedef struct cg_loop {
    LLVMBasicBlockRef head, body, exit;
    LLVMValueRef iv, step;
} cg_loop;
LLVMValueRef cg_loop_begin(cg_ctx *cx, cg_loop *l, LLVMValueRef start, LLVMValueRef end,
                           LLVMValueRef step, const char *name);
void cg_loop_end(cg_ctx *cx, cg_loop *l);
/* if (cond) {: positions the builder in the then-block; returns the join
 * block that cg_if_end closes. */
LLVMBasicBlockRef cg_if_begin(cg_ctx *cx, LLVMValueRef cond);
void cg_if_end(cg_ctx *cx, LLVMBasicBlockRef join);
/* Intrinsic declaration by name (overloaded on tys); *fty gets its type. */
LLVMValueRef cg_intrinsic(cg_ctx *cx, const char *name, LLVMTypeRef *tys, unsigned n, LLVMTypeRef *fty);
/* Calls intrinsic `name` (overloaded on args[0]'s type when ovl). */
LLVMValueRef cg_call_intrinsic(cg_ctx *cx, const char *name, bool ovl, LLVMValueRef *args, unsigned n);
LLVMValueRef cg_i64(cg_ctx *cx, int64_t v);
LLVMValueRef cg_f32c(cg_ctx *cx, double v);

/* ---- per-kind region emitters: each emits one or more kernels with
 * cg_kernel_begin/cg_kernel_end. False with an error reported. ----
 * An emitter stores every node of its region for which cg_is_region_output
 * holds, computing epilogue nodes with cg_emit_value after setting
 * cx->subst[anchor] to its accumulator (and clearing it afterwards). */
bool cg_emit_pointwise(cg_ctx *cx, unsigned region);  /* pointwise, copy */
bool cg_emit_reduction(cg_ctx *cx, unsigned region);
/* Host target: emits `<kernel>_host(ptr bufs, ptr syms, i64 gx, gy, gz)`
 * for every kernel, looping over the program ids (codegen/host.c). */
void cg_host_wrappers(cg_ctx *cx);
/* Body of an output copy kernel: dst[i] = value v at i for every element
 * (v is an input, a constant, or a value with another home). */
bool cg_emit_copy_body(cg_ctx *cx, ir_id v, LLVMValueRef dst);
bool cg_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region);    /* codegen/matmul.c */
bool cg_emit_attention(cg_ctx *cx, const ir_graph *g, unsigned region); /* codegen/attention.c */

#endif /* TX_CODEGEN_INTERNAL */

#endif
