/* cg_impl.h - what codegen's own files share (private to codegen/): the emission context
 * cg_ctx and the IR-building helpers every region emitter uses, for both targets.
 *
 * One emitter per region kind builds the kernel body once for both targets; a small per-target
 * "mechanics" layer (target.c) supplies program/thread ids, warp shuffles, shared memory and
 * barriers (on the host a block has exactly one thread and the kernel body runs in loops over
 * the program ids). Layers above codegen include codegen/codegen.h only. Design:
 * docs/codegen.md, docs/codegen-matmul.md.
 */
#ifndef TX_CG_IMPL_H
#define TX_CG_IMPL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/codegen.h"
#include "passes/passes.h"

/* A logical index into a shape: the linear offset (C order) and, computed
 * on demand, the per-dim components. `lin` is always set. */
typedef struct cg_index {
    const ir_shape *shape;
    LLVMValueRef lin;              /* i64 */
    LLVMValueRef dim[IR_MAX_RANK]; /* i64 each, NULL until cg_index_dims */
} cg_index;

typedef struct cg_memo_ent {
    ir_id node;
    LLVMValueRef key; /* the index's lin */
    LLVMValueRef val;
} cg_memo_ent;

#define CG_VEC_MAXLIN 32
#define CG_VCAT_MAX   PASS_VEC_CAT_MAX /* most inputs of a concat read by vector groups */

/* Programs of a host pointwise or reduction kernel (their loops stride over the grid, so any count
 * covers the work): enough for cg_host_run to spread them over the machine's cores. */
#define CG_HOST_PROGRAMS 256

/* Above this many transcendental operations in a program, its math helpers are called, not
 * inlined: inlined, each costs 25-60 instructions per use and LLVM's time grows with them
 * (13 nested helpers h(sin(x)) + h(cos(x)) inline to 16384 of them). */
#define CG_MATH_INLINE_MAX 512
/* The most work cg_program_new takes on (units: one per operation, CG_WORK_TRANSC per
 * transcendental): about 30 s of LLVM on one core; 50000 chained statements (100000 operations)
 * fit, 2^11 nested sin/cos helpers do not. */
/* Bounds of cg_emit_value over one program: values computed (a chain of concatenations re-reads
 * each input at clamped indices, doubling per level) and recursion depth (chains of views are not
 * bounded by the region's IR_REGION_MAX_OPS). Beyond them the compile fails with an error. */
#define CG_EMIT_MAX    1000000u
#define CG_EMIT_DEPTH  8192u
#define CG_WORK_TRANSC 32
#define CG_WORK_MAX    131072

typedef struct cg_vframe cg_vframe;

/* The modules kernels are emitted into (cg_ctx.mods). */
enum { CG_MOD_MAIN, CG_MOD_WGMMA, CG_MOD_WGTMA, CG_MOD_FA3, CG_NMODS };
/* The most external shared arrays a program declares (tx_mm_, tx_wg_, tx_red_dyn_smem). */
#define CG_MAX_EXTERNS 8

/* The emission context: one per program, reused by every kernel. */
/* Staged operands of one kernel: A and up to CG_MM_MAXH B operands. */
#define CG_STAGE_MAX 5

typedef struct cg_ctx {
    cg_target target;
    bool gpu;                 /* NVPTX mechanics (else host) */
    uint32_t *vstamp, vepoch; /* cg_sources: views entered in the current walk (per node) */
    struct cg_vframe {
        ir_id x;
        uint32_t k;
    } * vstk;        /* cg_sources: the walk's stack (g->n frames) */
    uint64_t nemit;  /* values cg_emit_value computed so far (bounded by CG_EMIT_MAX) */
    unsigned depth;  /* cg_emit_value's recursion depth (bounded by CG_EMIT_DEPTH) */
    bool math_calls; /* math helpers stay calls (noinline): the program has many
                        (CG_MATH_INLINE_MAX) */
    tx_diag *diag;
    const ir_graph *g;
    LLVMContextRef llctx;
    /* The module kernels are emitted into: mods[modi]. GPU: the wgmma GEMM kernels go to
     * mods[CG_MOD_WGTMA] when their epilogue is the looped TMA store, else to
     * mods[CG_MOD_WGMMA], and the sm_90a FA3 attention kernels to mods[CG_MOD_FA3] (each made on
     * first use), everything else to mods[CG_MOD_MAIN] (the program's), so each kind is optimised
     * by its own pipeline without a module clone (cg_optimize). Helpers are defined per module. */
    LLVMModuleRef mod;
    LLVMModuleRef mods[CG_NMODS];
    unsigned modi;
    /* The external shared arrays asked for so far (cg_extern_shared), in that order. */
    struct {
        char name[32];
        LLVMTypeRef elt;
        unsigned align;
    } externs[CG_MAX_EXTERNS];
    unsigned nexterns;
    LLVMBuilderRef b;
    LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, voidt;
    LLVMTypeRef ptr;  /* generic pointer (addrspace 0) */
    LLVMTypeRef gptr; /* buffer pointer: addrspace 1 on GPU, 0 on host */
    LLVMTypeRef sptr; /* shared memory pointer: addrspace 3 on GPU, 0 on host */
    /* Per kernel (set by cg_kernel_begin, cleared by cg_kernel_end). */
    LLVMValueRef fn;
    cg_kernel *k;         /* manifest entry being built */
    unsigned region;      /* region being emitted (IR_NONE: output copy) */
    LLVMValueRef *valptr; /* per node: HBM buffer pointer param, or NULL */
    LLVMValueRef *symval; /* per graph symbol: i64 value (param or constant) */
    LLVMValueRef pid[3];  /* host: program ids (params of the body) */
    LLVMValueRef npid[3]; /* host: program counts (params of the body) */
    /* Values that cg_emit_value returns for a node at any index (reduction
     * results of the current row, a matmul accumulator ...). */
    LLVMValueRef *subst; /* per node, NULL when none */
    /* Memo: node at index -> value, a stack (scope = depth). */
    cg_memo_ent *memo;
    unsigned nmemo, memocap;
    /* Vector-load cache of the pointwise and reduction emitters (value.c). */
    unsigned vecw;            /* elements per vector; 0: off */
    unsigned vecn;            /* entries of veclin: groups of vecw consecutive elements */
    const ir_shape *vecshape; /* shape whose values the vector loads cover */
    LLVMValueRef
        veclin[CG_VEC_MAXLIN]; /* lin of element j; group j / vecw starts at an aligned lin */
    LLVMBuilderRef vecb;       /* builder positioned where group loads go (NULL: at the use) */
    bool last_use; /* GPU: HBM loads and stores of 4, 8 or 16 bytes take the streaming cache
                      operator (ld/st.global.cs: evict first from L2), for the last pass over a
                      row whose earlier pass left it in the L2 (cg_load_vec, cg_store_vec) */
    LLVMValueRef *veccache; /* [node * CG_VEC_MAXLIN + group]: loaded <vecw x T> or NULL */
    LLVMValueRef *vecbase;  /* [node * CG_VEC_MAXLIN + group]: the lin veccache's entry was
                               loaded at (an entry serves only loads of that group start) */
    /* Lins of other shapes derived from veclin[j] (row-broadcast operands: a shape equal to
     * the trailing dims, cg_vec_bcast, bc; the inputs of a concat along an outer axis,
     * cg_vec_concat): lane j % vecw of the group at base, an element of `shape`. */
    struct {
        LLVMValueRef lin, base;
        unsigned j;
        const ir_shape *shape;
        bool bc;
    } vecalias[CG_VEC_MAXLIN * 8];
    unsigned nvecalias;
    /* Concats along an axis before the innermost one read at a vector group (cg_vec_concat):
     * each input's lin of the group's first element and whether the group lies in it. */
    struct {
        ir_id cat;
        unsigned g; /* the group: j / vecw */
        LLVMValueRef base[CG_VCAT_MAX], in[CG_VCAT_MAX];
    } veccat[CG_VEC_MAXLIN];
    unsigned nveccat;
    /* Index maps read at a vector group (cg_vec_base): the lin of the group's first element in
     * the shape read (a slice's input, cg_vec_slice; an outer broadcast's source, cg_vec_bcast),
     * keyed by the kind, the map (node or shape) and the group's start. */
    struct {
        unsigned kind;
        const void *key;
        const ir_shape *from; /* the shape start is an element of */
        LLVMValueRef start, base;
    } vecix[CG_VEC_MAXLIN];
    unsigned nvecix;
    /* Vector loads of a value whose cache slot (node, group) holds another start (a value read
     * at two starts in one group: rotate_half's q at its own and at its other half's lanes). */
    struct {
        ir_id id;
        LLVMValueRef start, vec;
    } vecx[CG_VEC_MAXLIN];
    unsigned nvecx;
    /* Helpers defined on demand (per program). */
    LLVMValueRef mathfn[CG_NMODS][IR_NOPS];
    unsigned nshared; /* per kernel: arrays made by cg_shared_bytes */
    /* GPU: every shared array made so far (cg_shared_array): its requested name, array type and
     * the last kernel (index) that took it; a later kernel asking for the same name and type gets
     * the same global (shared memory is per block: kernels may share a module-scope array), so
     * kernels that compute the same thing have the same LLVM body (cg_dedup_kernels). */
    struct cg_shared_ent {
        char *name;
        LLVMTypeRef type;
        LLVMValueRef gv;
        unsigned kernel;
    } * shared;
    unsigned nshared_ents, shared_cap;
    /* Manifest under construction. */
    cg_kernel *kernels;
    unsigned nkernels, kcap;
    cg_temp *temps;
    unsigned ntemps, tcap;
    int32_t *bufidx_kind;   /* per node: cg_buf_kind + 1 of its HBM home, 0 none */
    struct pass_index *pix; /* the planner's region index: each region's HBM reads and writes */
    uint32_t *bufidx;       /* per node: index within that kind */
    uint32_t *outslots;     /* per node: first output slot returning it, or UINT32_MAX */
    uint32_t *ostore;       /* per node: the [attention.store_transposed] copy whose buffer
                               (laid out as the copy) is its home (pass_attn_ostore), or IR_NONE */
    unsigned ntmap_params;  /* cg_kernel_begin: tensor-map parameters to append (GPU) */
    /* cg_kernel_begin: a scratch temp (cg_scratch_temp) to append to the region's buffers:
     * temp index + 1 (0: none), whether the kernel writes it; its parameter is xtemp_ptr. */
    unsigned xtemp;
    bool xtemp_write;
    LLVMValueRef xtemp_ptr;
    /* With a scratch temp, the region's buffers the kernel leaves out: a writer of the temp (the
     * partials) stores none of the region's values; a reader (the combine) reads none of the
     * values of shape xtemp_dom (the reduction's domain), so each kernel's manifest entry names
     * what it touches. */
    ir_shape xtemp_dom;
    /* cg_kernel_begin: staged operand copies ([matmul.wgmma.stage], codegen/stage.c) the region's
     * kernel reads, appended (read-only) after its buffers and the scratch temp: temp indices;
     * stage_buf[i] gets the position of stage_temp[i] among the kernel's buffers. */
    unsigned nstage;
    unsigned stage_temp[1 + CG_STAGE_MAX];
    unsigned stage_buf[1 + CG_STAGE_MAX];
    /* cg_kernel_begin: a workspace temp the region's kernel reads and writes (the stream-K
     * partials of codegen/wgmma.c), temp index + 1 (0: none), appended after the staged copies;
     * ws_ptr gets its parameter */
    unsigned wstemp;
    LLVMValueRef ws_ptr;
    bool xtemp_reads_all; /* the combine reads every value the region reads (attention's
                             [attention.split_kv]: its epilogue may read any of them) */
    bool xtemp_stores;    /* a writer of the scratch temp that also stores the region's values (its
                             last blocks combine the partials: [reduction.column_blocks]) */
} cg_ctx;

/* The program (private to the codegen sources). */
/* A graph input (parameter order) or returned value (return order) as the
 * manifest lists it, so that a loader can bind sizes and allocate outputs. */
typedef struct cg_io {
    char *name; /* source name; "" when none */
    ir_dtype dtype;
    ir_shape shape;
} cg_io;

struct cg_program {
    cg_target target;
    LLVMTargetMachineRef tm;
    LLVMContextRef llctx;
    void *tsc;         /* host: LLVMOrcThreadSafeContextRef owning llctx */
    LLVMModuleRef mod; /* NULL once handed to the JIT */
    /* GPU: xmod[i] (i > CG_MOD_MAIN) holds the kernels emitted into the context's mods[i] until
     * cg_optimize links it into mod; xmod[CG_MOD_MAIN] is always NULL. */
    LLVMModuleRef xmod[CG_NMODS];
    char *ptx;
    size_t ptxlen;
    cg_kernel *kernels;
    unsigned nkernels;
    unsigned *same_as; /* GPU, per kernel: the earlier kernel whose body it has (its function was
                          dropped from mod and its PTX is a renamed copy), else UINT32_MAX */
    cg_temp *temps;
    unsigned ntemps;
    unsigned nsyms;
    char **symnames;
    ir_shape_rule *rules; /* ir_shape_rules of the graph: the manifest's "requires" */
    uint32_t nrules;
    cg_io *io; /* the graph's inputs, then its returned values */
    unsigned nin, nout;
};

/* Target machine for t (NVPTX +ptx80 for sm_*, the host CPU for CG_HOST);
 * NULL with an error reported. */
LLVMTargetMachineRef cg_tm_new(cg_target t, tx_diag *d);
void cg_tm_free(LLVMTargetMachineRef tm);

/* A temp buffer of dtype and shape that no graph value owns (a kernel's partial results read by
 * the next kernel of the same region, e.g. [reduction.column_blocks]); `owner` is the node the
 * manifest names as its value. Returns its temp index. */
unsigned cg_scratch_temp(cg_ctx *cx, ir_id owner, ir_dtype dtype, const ir_shape *shape);

/* ---- kernels and parameters ---- */
/* Starts a kernel for `region` (IR_NONE for an output copy kernel): decides
 * which HBM values it reads and writes (values used in the region but
 * produced outside it; values produced in it and needed outside), creates
 * the LLVM function with one pointer per buffer then the i64 symbols, and
 * positions the builder in its entry block. On the host the function also
 * takes six i64: the program ids x, y, z and the program counts x, y, z. Returns false with an
 * error reported. */
bool cg_kernel_begin(cg_ctx *cx, unsigned region, const char *suffix);
/* Finishes the kernel (ret void) and records the geometry: grid[d] =
 * min(cap[d], ceil(numel(work[d]) / per[d])), block, dynamic smem. */
void cg_kernel_end(cg_ctx *cx, const ir_shape work[3], const int64_t per[3], const int64_t cap[3],
                   const unsigned block[3], unsigned smem);
/* Starts a kernel that takes exactly the n buffers bufs (no region analysis; e.g. a staging
 * copy) and whose manifest entry names `region`; its name is the graph's name + suffix. Returns
 * false with an error reported. */
bool cg_kernel_begin_bufs(cg_ctx *cx, unsigned region, const char *suffix, const cg_buf *bufs,
                          unsigned n);
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
/* True when value o's home is the output buffer of a returned permuted view of it (the
 * planner's view.alias through permutes: o an attention region's output); st gets where o's
 * elements lie there (pass_view_strides_of). */
bool cg_home_strides(cg_ctx *cx, ir_id o, pass_view_strides *st);
/* The offset in o's home buffer of o's element idx (idx->shape is o's shape): idx->lin, or
 * through the strides of cg_home_strides. */
LLVMValueRef cg_home_lin(cg_ctx *cx, ir_id o, cg_index *idx);
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
LLVMValueRef cg_load_vec(cg_ctx *cx, LLVMBuilderRef b, LLVMValueRef base, ir_dtype t,
                         LLVMValueRef lin, unsigned w);
void cg_store_vec(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin, LLVMValueRef *vals,
                  unsigned w);
/* Turns the vector-load cache on for the n elements at lins[0..n) (groups of w consecutive
 * elements of values of shape s, each group starting at an aligned lin; loads go to vecb, or to
 * the use when NULL), with nothing cached yet; cg_vec_end turns it off. */
void cg_vec_begin(cg_ctx *cx, const ir_shape *s, unsigned w, unsigned n, const LLVMValueRef *lins,
                  LLVMBuilderRef vecb);
void cg_vec_end(cg_ctx *cx);
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
/* Unary/binary elementwise op on compute values of dtype t (result dtype rt),
 * by ir/scalar.c's rules; NULL (internal error reported) for an op that has
 * no elementwise kernel rule. */
LLVMValueRef cg_emit_op(cg_ctx *cx, ir_op op, ir_dtype t, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef c, ir_dtype rt);

/* Loads element lin of a buffer of dtype t as f32 (i32 and bool converted exactly as numbers). */
LLVMValueRef cg_load_f32(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin);
/* Rounds an f32 to dtype t and back, staying f32 (f16/bf16: nearest even; i32: toward zero;
 * bool: != 0); f32 is returned unchanged. */
LLVMValueRef cg_round_f32(cg_ctx *cx, LLVMValueRef x, ir_dtype t);

/* ---- math (codegen/math.c): f32 in, f32 out, same code on both targets ---- */
/* Calls the module's implementation of op (EXP EXP2 LOG LOG2 TANH ERF SIN COS
 * SIGMOID GELU GELU_TANH SILU RSQRT SQRT; POW takes two arguments); NULL
 * (internal error reported) for an op that has no math function. */
LLVMValueRef cg_math(cg_ctx *cx, ir_op op, LLVMValueRef x, LLVMValueRef y);
/* e^x for values that end in f16/bf16 precision: on the GPU one ex2.approx.ftz of x log2 e
 * (relative error ~1e-6 for |x| < 30, results below 2^-126 flush to 0, exp(-inf) = 0); on the
 * host cg_math's exp. */
LLVMValueRef cg_exp_fast(cg_ctx *cx, LLVMValueRef x);

/* ---- mechanics (codegen/target.c) ---- */
/* Program (block) id and count along d (i64); on the host the ids are the
 * body's parameters and counts come from the grid. */
LLVMValueRef cg_program_id(cg_ctx *cx, int d);
LLVMValueRef cg_program_count(cg_ctx *cx, int d);
/* Thread id within the block along x (i32; 0 on the host) and block size. */
LLVMValueRef cg_thread_id(cg_ctx *cx);
unsigned cg_warp_size(const cg_ctx *cx); /* 32 on GPU, 1 on the host */
void cg_barrier(cg_ctx *cx);             /* bar.sync 0; nothing on the host */
/* Thread-block clusters (sm_90 and later, GPU only; inline PTX, LLVM 19 has no cluster launch
 * directive): cg_cluster_sync is barrier.cluster.arrive (release) + wait (acquire) by every
 * thread of every block of the cluster; cg_cluster_load reads the f32/i32 word at the shared
 * address `sptr` (addrspace 3) of cluster block `rank` (i32) through distributed shared memory
 * (mapa + ld.shared::cluster). */
void cg_cluster_sync(cg_ctx *cx);
/* The two halves of cg_cluster_sync, for work between them: every thread arrives (release) once,
 * then waits (acquire) once before it arrives again. */
void cg_cluster_arrive(cg_ctx *cx);
void cg_cluster_wait(cg_ctx *cx);
LLVMValueRef cg_cluster_load(cg_ctx *cx, LLVMTypeRef t, LLVMValueRef sptr, LLVMValueRef rank);
/* Butterfly shuffle of an f32/i32 value across the warp (xor lane mask). */
LLVMValueRef cg_shfl_xor(cg_ctx *cx, LLVMValueRef v, unsigned mask);
/* A static shared-memory array of n elements of type t (addrspace 3 on
 * GPU; a private alloca on the host). Returns the pointer. On the GPU a kernel gets the module
 * array an earlier kernel made with the same name and type (never one it holds already). */
LLVMValueRef cg_shared_array(cg_ctx *cx, LLVMTypeRef t, unsigned n, const char *name);
/* cg_shared_array of `bytes` bytes named tx_smem_N (N counts the kernel's such arrays). */
LLVMValueRef cg_shared_bytes(cg_ctx *cx, int64_t bytes);
/* The kernel's dynamic shared memory (GPU): the external zero-length addrspace(3) array `name`
 * of elt, 16-byte aligned, declared once per module; its size is the launch's dynamic
 * shared-memory bytes (cg_kernel.smem_bytes). */
LLVMValueRef cg_dyn_shared(cg_ctx *cx, const char *name, LLVMTypeRef elt);
/* The external addrspace(3) array `name` of elt aligned to `align` bytes in the emission module.
 * On first use it is declared in every module of cx (and cg_use_module declares it in a module
 * made later), in the order of first use, so the linked module declares the program's dynamic
 * shared arrays in that order (NVPTX prints them in module order; the linker puts the source
 * module's declarations last, in its order). */
LLVMValueRef cg_extern_shared(cg_ctx *cx, const char *name, LLVMTypeRef elt, unsigned align);
/* Declares in m every external shared array of cx, in the order of first use. */
void cg_declare_externs(const cg_ctx *cx, LLVMModuleRef m);
/* A variable holding init: an alloca in the kernel's entry block (promoted to a register by
 * mem2reg), initialised at the builder. */
LLVMValueRef cg_var(cg_ctx *cx, LLVMValueRef init);
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
LLVMValueRef cg_intrinsic(cg_ctx *cx, const char *name, LLVMTypeRef *tys, unsigned n,
                          LLVMTypeRef *fty);
/* Calls intrinsic `name` (overloaded on args[0]'s type when ovl). */
LLVMValueRef cg_call_intrinsic(cg_ctx *cx, const char *name, bool ovl, LLVMValueRef *args,
                               unsigned n);
LLVMValueRef cg_i32(cg_ctx *cx, int64_t v);
LLVMValueRef cg_i64(cg_ctx *cx, int64_t v);
LLVMValueRef cg_f32c(cg_ctx *cx, double v);

/* ---- per-kind region emitters: each emits one or more kernels with
 * cg_kernel_begin/cg_kernel_end. False with an error reported. ----
 * An emitter stores every node of its region for which cg_is_region_output
 * holds, computing epilogue nodes with cg_emit_value after setting
 * cx->subst[anchor] to its accumulator (and clearing it afterwards). */
bool cg_emit_pointwise(cg_ctx *cx, unsigned region); /* pointwise, copy */
bool cg_emit_reduction(cg_ctx *cx, unsigned region);
/* Host target: emits `<kernel>_host(ptr bufs, ptr syms, i64 gx, gy, gz)`
 * for every kernel, looping over the program ids (codegen/host.c). */
void cg_host_wrappers(cg_ctx *cx);
/* Body of an output copy kernel: dst[i] = value v at i for every element
 * (v is an input, a constant, or a value with another home). */
bool cg_emit_copy_body(cg_ctx *cx, ir_id v, LLVMValueRef dst);
bool cg_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region); /* codegen/matmul.c */

/* ---- staging copies of operands TMA cannot read (codegen/stage.c) ---- */
/* How a staging kernel copies a [rows, inner] operand of es-byte elements to rows pitched at
 * `pitch` elements: words of `word` bytes of the copy, iw of them per row (covering it) and pw
 * per copied row; each of the 256 threads of a block copies `words` words (256 apart) of each of
 * `rows` rows. Source rows of whole 8-byte words, or of 4- or 2-byte ones where the operand
 * (rows unknown: -1) holds less than one 8-byte word, are copied word for word (the widest word
 * dividing a row); other rows are `funnel`ed: copy word c of row r is the 8 bytes from element
 * e0 = r x inner + c x 8 / es, the two aligned source words q = e0 / (8 / es) and q + 1 shifted
 * right by (e0 mod (8 / es)) x es bytes (the partial last word of the source assembled from its
 * elements, nothing past it read). */
typedef struct cg_stage_geom {
    unsigned word, words, rows;
    int64_t iw, pw;
    bool funnel;
    int es;
    int64_t inner;
} cg_stage_geom;
void cg_stage_geometry(int64_t rows, int64_t inner, int es, int64_t pitch, cg_stage_geom *sg);
/* Emits kernel GRAPH_k<region>_stage<idx> copying 2-D HBM value base to a new scratch temp of
 * [rows, pitch] (its index in *temp), launched before the region's kernel. False with an error
 * reported. */
bool cg_stage_emit(cg_ctx *cx, unsigned region, unsigned idx, ir_id base, int64_t pitch,
                   unsigned *temp);
bool cg_emit_attention(cg_ctx *cx, const ir_graph *g, unsigned region); /* codegen/attention.c */

/* ---- matrix products and attention (codegen/matmul.c, mma.c, attention.c) ----
 * Operand and tile descriptions, tensor-core building blocks and the epilogue glue shared by
 * the matrix-product and attention emitters; all emit through the one cg_ctx. */
/* How one operand of a matrix product is read: the element (batch b, row r,
 * column c) of the 2-D view lives at ptr[sum b_i*sb[i] + r*sr + c*sc] with
 * stored dtype ldt; after loading it is converted to f32 and rounded through
 * casts[0..ncast) in order (the region's prologue). Strides are i64 values;
 * a broadcast batch dim has stride 0. `unit_c` / `unit_r` say at generation
 * time that sc / sr is the constant 1 (used to pick coalesced load orders). */
struct cg_mm_opnd;
/* Generic element load of an operand that is not a strided view of one
 * buffer: returns the f32 value of element (bidx, r, c) after the prologue. */
typedef LLVMValueRef (*cg_mm_load_fn)(void *user, cg_ctx *cx, const struct cg_mm_opnd *o,
                                      const LLVMValueRef *bidx, LLVMValueRef r, LLVMValueRef c);
typedef struct cg_mm_opnd {
    cg_mm_load_fn load; /* non-NULL: use it instead of ptr/strides */
    void *user;
    ir_id node;      /* the operand value (for `load`) */
    unsigned nbatch; /* batch dims of the product it feeds (for `load`) */
    LLVMValueRef ptr;
    ir_dtype ldt;
    uint8_t ncast;
    ir_dtype casts[4];
    LLVMValueRef sb[IR_MAX_RANK];
    LLVMValueRef sr, sc;
    bool unit_r, unit_c;
} cg_mm_opnd;

/* The epilogue interface (every matrix-product emitter: matmul.c, attention.c, and a new
 * tensor-core emitter the same way). An emitter holds the f32 accumulators in registers and, for
 * each output element (bidx[0..nb), row, col) it owns, calls the description's `epi` with the
 * builder positioned where acc[0..nmm) (one per product of the region) are final; the caller
 * has already masked the element to row < M, col < N (the callback must not be reached for
 * elements outside). The callback computes the region's elementwise tail and stores it; it may
 * create blocks but leaves the builder in a block that falls through (no terminator). Returns
 * false on failure (reported by it). cg_mm_epi_store is the callback every region uses. */
typedef bool (*cg_mm_epi_fn)(void *user, cg_ctx *cx, const LLVMValueRef *acc,
                             const LLVMValueRef *bidx, LLVMValueRef row, LLVMValueRef col);

/* Batched matrix products out_i[b, m, n] = sum_k A[b, m, k] * B_i[b, k, n]
 * for i < nmm (several products sharing A: a horizontal region). */
#define CG_MM_MAXH 4
_Static_assert(CG_STAGE_MAX == 1 + CG_MM_MAXH, "a staged A and every B");
typedef struct cg_mm_desc {
    unsigned nb;                    /* batch dims of the output */
    LLVMValueRef bdim[IR_MAX_RANK]; /* their extents (i64) */
    LLVMValueRef M, N, K;           /* i64 */
    unsigned nmm;                   /* products (1..CG_MM_MAXH) */
    cg_mm_opnd a, b[CG_MM_MAXH];    /* a: rows m, cols k; b[i]: rows k, cols n */
    ir_dtype cdt;       /* operand dtype after the prologue: F16/BF16 use tensor cores */
    int64_t bm, bn, bk; /* requested tile (0: defaults) */
    int stages;         /* requested shared-memory ring depth (0: as many as fit) */
    int64_t simt_bm, simt_bn, simt_bk; /* the SIMT kernel's tile (matmul.simt; 0: 128x128x8) */
    /* its split-K ranks (matmul.simt's splits, 1: none): on the GPU a cluster of that many
     * blocks per output tile; on the host the same k ranges summed in rank order, so both
     * compute the same f32 sums */
    int simt_splits;
    /* k chunks per block of a GEMV tile ([matmul.simt.gemv]: its warps; 1 otherwise): the host
     * sums simt_splits x simt_kwarps chunks in chunk order, as the GPU combines them */
    int simt_kwarps;
    cg_mm_epi_fn epi;
    void *user;
} cg_mm_desc;

/* The launch shape an emitted GPU kernel expects. grid.z covers the flat
 * batch index (the kernel loops when the batch exceeds 65535). */
typedef struct cg_mm_launch {
    unsigned threads;   /* block.x */
    int64_t bm, bn, bk; /* the tile actually used */
    int64_t smem_bytes; /* shared memory of the kernel (static + dynamic) */
    int64_t dyn_smem;   /* of which dynamic (launch parameter) */
    int splits;         /* SIMT split-K ranks of the GPU kernel: grid y = N tiles x splits */
    bool tensor_cores;
    /* grid: x = ceil(N / bn), y = ceil(M / bm), z = min(batch, 65535) for
     * matmul; attention: x = ceil(Sq / bm), y = min(batch, 65535). */
} cg_mm_launch;

/* The SIMT f32 kernel's geometry for a bm x bn block tile of nmm products (the planner's
 * matmul.simt schedule; bm, bn in {32, 64, 128}): tm x tn outputs per thread (8 x 8 for one
 * product on sides of 64 or more, else 4), tx x ty threads, bk-deep k steps (8, 16, 32), two shared
 * buffers of A [k][pa] (k-major) and B [k][pb] floats. Thread (x, y) owns rows cg_sg_row(y, i),
 * i < tm, and columns cg_sg_col(x, j), j < tn, of the tile: groups of 4 consecutive rows
 * (columns) bm x 4 / tm (bn x 4 / tn) apart, so each fragment is one 128-bit shared load. */
typedef struct cg_sg_geom {
    int64_t bm, bn, bk;
    int tm, tn;
    unsigned tx, ty, threads;
    int64_t pa, pb;     /* shared row pitches (floats): bm + 4, bn + 4 */
    int64_t smem_bytes; /* both buffers of A and one B (a product more: + 2 bk pb 4) */
} cg_sg_geom;
cg_sg_geom cg_sg_geom_of(int64_t bm, int64_t bn, int64_t bk, unsigned nmm);
int64_t cg_sg_row(const cg_sg_geom *g, unsigned ty, int i);
int64_t cg_sg_col(const cg_sg_geom *g, unsigned tx, int j);
/* Where slot s of a thread's tile loads lies from the thread's first element (tid % fast along
 * the fast axis, tid / fast along the slow one) when `threads` threads copy a tile whose fast
 * axis has `fast` elements (threads % fast == 0 or fast % threads == 0): *df along the fast
 * axis, *ds lines further. */
void cg_sg_slot(int64_t fast, unsigned threads, int s, int64_t *df, int64_t *ds);
/* The k steps of split-K rank `rank` (i32; ignored when splits is 1) of nk (i64) steps:
 * [rank nk / splits, (rank + 1) nk / splits) as its first step *lo and count *steps (i64). */
void cg_sg_rank_steps(cg_ctx *cx, LLVMValueRef nk, LLVMValueRef rank, int splits, LLVMValueRef *lo,
                      LLVMValueRef *steps);
/* The GEMV tile's block body ([matmul.simt.gemv], codegen/gemv.c; l->bm, bk, splits set): the
 * block at columns n0 of batch element bidx, cluster rank `rank` (i32, NULL when l->splits is 1);
 * sets l's shared bytes. False when the shape is not one it builds or the epilogue fails. */
bool cg_gv_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                 LLVMValueRef n0, LLVMValueRef rank, cg_mm_launch *l);
/* The [matmul.simt.gemv_rows] block body (codegen/gemv.c; l->bm, bn, bk set, B = w^T): the
 * block's bn rows of w at n0 of batch element bidx; no shared memory. False when the tile is not
 * one it builds or the epilogue fails. */
bool cg_gvr_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                  LLVMValueRef n0, cg_mm_launch *l);
/* The host's copy of the rows form: the outputs [m0, m0 + BM) x [n0, n0 + BN) of batch element
 * bidx, each summed as the GPU kernel's lanes and butterfly sum it (same f32 values). */
bool cg_gvr_host(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                 LLVMValueRef n0, int64_t BM, int64_t BN);

/* ---- mma.c: building blocks ---- */
/* One mma.sync.aligned.m16n8k16.row.col f32 += dt x dt (GPU; dt F16 or BF16): a[4], b[2] are
 * i32 pairs of 16-bit values, c[4] f32; writes d[4] (may alias c). */
void cg_mma_m16n8k16(cg_ctx *cx, ir_dtype dt, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c,
                     LLVMValueRef *d);
/* ldmatrix.sync.aligned.m8n8.x4[.trans].b16 (GPU): this lane supplies the 16-bit element index
 * `idx` (i32) of one 16-byte-aligned row in `smem` (lanes 8i..8i+7 give the rows of matrix i);
 * out[i] gets this lane's i32 of matrix i. */
void cg_ldmatrix_x4(cg_ctx *cx, LLVMValueRef smem, LLVMValueRef idx, bool trans, LLVMValueRef *out);
/* cp.async groups (GPU): cg_cp_async_commit closes the group of copies issued since the last
 * one; cg_cp_async_wait(n) waits until at most n groups are pending. */
void cg_cp_async_commit(cg_ctx *cx);
void cg_cp_async_wait(cg_ctx *cx, int n);
/* Operand offset: sum bidx[i]*sb[i] + r*sr + c*sc (i64). */
LLVMValueRef cg_mm_offset(cg_ctx *cx, const cg_mm_opnd *o, unsigned nb, const LLVMValueRef *bidx,
                          LLVMValueRef r, LLVMValueRef c);
/* Loads operand element (r, c) as f32 after the prologue casts. */
LLVMValueRef cg_mm_opnd_load(cg_ctx *cx, const cg_mm_opnd *o, unsigned nb, const LLVMValueRef *bidx,
                             LLVMValueRef r, LLVMValueRef c);
/* Splits a flat batch index (i64) into per-dim indices over bdim[0..nb). */
void cg_mm_unflatten(cg_ctx *cx, LLVMValueRef flat, unsigned nb, const LLVMValueRef *bdim,
                     LLVMValueRef *bidx);
/* Product of bdim[0..nb) (1 when nb == 0). */
LLVMValueRef cg_mm_batch_count(cg_ctx *cx, unsigned nb, const LLVMValueRef *bdim);

/* Cooperative copy of a tile of an operand from global to shared memory.
 * Tile element (r, c) for r < rows, c < cols (compile-time extents) comes
 * from operand element (r0 + r, c0 + c), zero when r0+r >= rlim or
 * c0+c >= clim, and is written at smem[r*ps_r + c*ps_c] (element units)
 * as 16-bit bits of `sdt` (F16/BF16) or as f32 (sdt F32). The `nthreads`
 * threads of the block split the elements; thread `tid` (i32). Walks the
 * contiguous global direction fastest when known (coalescing). */
typedef struct cg_mm_tile {
    const cg_mm_opnd *o;
    unsigned nb;
    const LLVMValueRef *bidx;
    LLVMValueRef r0, c0, rlim, clim; /* i64 */
    int64_t rows, cols, ps_r, ps_c;
    ir_dtype sdt;
    LLVMValueRef smem;
} cg_mm_tile;
void cg_mm_tile_load(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads);
/* cp.async form of cg_mm_tile_load (GPU): true when the tile qualifies
 * (raw 16-bit copy in aligned 16-byte vectors, contiguous in shared memory
 * too). cg_mm_tile_async issues the copies (zero-filled outside the
 * extents) without waiting (grouped by cg_cp_async_commit). */
bool cg_mm_tile_async_ok(cg_ctx *cx, const cg_mm_tile *t);
void cg_mm_tile_async(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads);
/* Packs two f32 into an i32 of two 16-bit dt values (lo = first). */
LLVMValueRef cg_mm_pack2(cg_ctx *cx, LLVMValueRef lo, LLVMValueRef hi, ir_dtype dt);

/* ---- matmul.c / attention.c: kernel bodies over a description ---- */
/* Describes operand `id` (shape [..., R, C]) of a product with nb output
 * batch dims: a strided view of one HBM buffer through in-region casts and
 * permutes when possible, else a generic load through cg_emit_value. */
void cg_mm_resolve_opnd(cg_ctx *cx, unsigned region, ir_id id, unsigned nb, cg_mm_opnd *o);
/* The epilogue state of a region: the product node whose value the
 * accumulator gives, and the region outputs stored per element (each of the
 * product's shape). */
typedef struct cg_mm_epi_state {
    unsigned nmm;
    ir_id mm[CG_MM_MAXH];
    ir_id outs[64];
    unsigned nouts;
    ir_id own[2]; /* region outputs the kernel stores itself (attention's logsumexp) */
    unsigned nown;
} cg_mm_epi_state;
/* Fills st->outs with the region's stored values but st->own[]; false (reported) when one
 * is not an elementwise epilogue of the products st->mm with their shape. */
bool cg_mm_collect_outs(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st);
/* A cg_mm_epi_fn (user: cg_mm_epi_state): substitutes each accumulator,
 * rounded to its product's dtype, for st->mm[i] and stores every output. */
bool cg_mm_epi_store(void *user, cg_ctx *cx, const LLVMValueRef *acc, const LLVMValueRef *bidx,
                     LLVMValueRef row, LLVMValueRef col);
/* Shared memory one block may use on a cg_target (0 for the host). */
int64_t cg_mm_smem_limit(int target);
/* Emits the whole product of d into cx->fn at the builder for the program
 * ids pid[0..3) (i64; x: M tiles, y: N tiles, z: flat batch) stepping the
 * batch by zstep (NULL: one batch element per program); fills the launch
 * shape l and leaves the builder in an open block. False with a message in
 * err on failure. */
bool cg_mm_emit_body(cg_ctx *cx, const cg_mm_desc *d, cg_mm_launch *l, const LLVMValueRef *pid,
                     LLVMValueRef zstep, char *err, size_t cap);

/* Attention out[b, i, :] = softmax_j(chain(q[b,i,:].k[b,:,j])) @ v[b, j, :]
 * with an online softmax (chain: attention.c's score steps); p rounded to
 * pdt before the second product. Q is
 * an operand with rows i, cols d; K with rows d, cols j (the transposed
 * view); V with rows j, cols dv. The epilogue receives (bidx, i, dv). */
typedef struct cg_attn_desc {
    unsigned nb;
    LLVMValueRef bdim[IR_MAX_RANK];
    LLVMValueRef Sq, Sk, D, Dv; /* i64 */
    int64_t dmax, dvmax;        /* compile-time upper bounds of D, Dv (0: unknown) */
    cg_mm_opnd q, k, v;
    ir_dtype sdt; /* dtype the scores are rounded to before scaling (F32: none) */
    ir_dtype pdt; /* dtype of p before the second product (F16/BF16/F32) */
    ir_dtype cdt; /* operand dtype for tensor cores (F16/BF16) or F32 */
    cg_mm_epi_fn epi;
    void *user;
} cg_attn_desc;

/* ---- attention.c: the sm_90a attention kernel (wgmma + TMA, warp-specialised, persistent) ---- */
#define CG_ATTN_WG_MAX_STAGES     4
#define CG_ATTN_WG_PRODUCER_REGS  24  /* setmaxnreg of the producer warpgroup */
#define CG_ATTN_WG_CONSUMER_REGS  240 /* and of two consumers (128*24 + 256*240 <= 64K) */
#define CG_ATTN_WG_CONSUMER3_REGS 160 /* and of three (128*24 + 384*160 <= 64K) */
#define CG_ATTN_WG_QBUFS          2   /* Q tiles in shared memory at most */
#define CG_ATTN_WG_WIDE_BN        160 /* keys per step where no mask makes diagonal tiles */
#define CG_ATTN_WG_TILE_REGS      176 /* O + S + P registers a consumer thread may hold (d > 128) */
/* Tile and ring of the sm_90a attention kernel: bm = 64 nwg query rows (nwg consumer
 * warpgroups of 64 rows, 2 or 3),
 * bn keys per step, head dim d (= the value head dim); shared memory from its base (1024-aligned):
 * qbufs Q tiles (q_bytes each: d/64 boxes of 64 columns x bm rows; work tile n uses buffer
 * n % qbufs), `stages` stages of a K then a V tile (kv_bytes each: d/64 boxes of 64 columns x bn
 * rows), then the barriers qfull[CG_ATTN_WG_QBUFS], qempty[CG_ATTN_WG_QBUFS], kfull[], vfull[],
 * kempty[], vempty[] (CG_ATTN_WG_MAX_STAGES each; bar_bytes); smem_bytes adds 1024 of alignment
 * slack. */
typedef struct cg_attn_wg_plan {
    int d, bm, bn, stages, qbufs, nwg;
    int64_t q_bytes, kv_bytes, stage_bytes, bar_bytes, smem_bytes;
} cg_attn_wg_plan;
/* Plans the kernel for head dim d in smem_max bytes: false unless d is 64, 128, 192 or 256 and two
 * stages fit, bn (keys per step; 0: 128 for d <= 128, else cg_attn_wg_wide_d_bn(d)) is a multiple
 * of 16 in [64, 256] (for d > 128 also within the consumers' registers: O's d/2, S's bn/2 and P's
 * bn/4 per thread at most CG_ATTN_WG_TILE_REGS) and nwg (consumer warpgroups; 0: 2) is 2 or 3 (3
 * only at d = 64); as many stages as fit, at most CG_ATTN_WG_MAX_STAGES; then a second Q buffer if
 * it fits beside them. */
bool cg_attn_wg_plan_for(int64_t d, int bn, int nwg, int64_t smem_max, cg_attn_wg_plan *p);
/* Keys per step for a head dim d > 128: the largest multiple of 16 (at most 128) whose S and P
 * fit beside O's d/2 registers in CG_ATTN_WG_TILE_REGS (d 192: 96, d 256: 64). */
int cg_attn_wg_wide_d_bn(int64_t d);
/* The kernel's head dim for a head dim d that is a multiple of 16 up to 256: 64, 128, 192 or 256
 * (d rounded up to a multiple of 64; the columns past d are zero-filled by TMA and not stored). */
int64_t cg_attn_wg_dpad(int64_t d);
/* [attention.ks_tma]: the 16-bit index of column col (a multiple of 8) of row r in a key split
 * tile of bn rows as TMA stores it: d/64 boxes of bn rows x 128 bytes, one after the other, with
 * the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r mod 8) of the row). */
int64_t cg_attn_ks_swz(int64_t bn, int64_t r, int64_t col);
/* How the sm_90a attention kernel reads operand q, k or v through a TMA map: the planner's
 * pass_attn_view (passes/passes.h, the rule [attention.fa3] in passes/attn_fa3.c). */
enum { CG_AWG_D = PASS_AV_D, CG_AWG_ROW = PASS_AV_ROW, CG_AWG_BATCH = PASS_AV_BATCH };
typedef pass_attn_view cg_attn_wg_view;
_Static_assert(CG_TMAP_MAXR == PASS_TMAP_MAXR, "one tensor-map rank bound");
/* pass_attn_view_of without the reason (tests). */
bool cg_attn_wg_view_of(const ir_graph *g, unsigned region, ir_id opnd, ir_dtype dt, int64_t d,
                        bool trans, cg_attn_wg_view *v);
/* The map coordinates coords[0 .. v->rank) of operand element (bidx[], row, col): ext[] and
 * bidx[] are the operand's batch extents (v->opnd at bound sizes) and indices (an extent-1 axis
 * reads 0). */
void cg_attn_wg_view_coords(const cg_attn_wg_view *v, const int64_t *ext, const int64_t *bidx,
                            int64_t row, int64_t col, int64_t coords[CG_TMAP_MAXR]);
/* The persistent kernel's work order (the default; TX_ATTN_ZIGZAG=0 for the plain one): the
 * loop's tile t (CTA c takes c, c + ncta, ...; ntiles in all) is work position
 * cg_attn_wg_pair_pos(t): in each block of 2 x ncta positions CTA c takes 2c and 2c + 1 (a short
 * last block: as many CTAs as it can feed take two, the rest one). Position pos is query tile *qt
 * of batch element *bz (cg_attn_wg_tile_order): a batch element's positions consecutive (its K and
 * V shared in L2 by the CTAs around), its query tiles nq - 1, 0, nq - 2, 1, ... with zig (a
 * CTA's pair costs about nq + 1 causal key tiles whatever the pair: balanced), nq - 1, ..., 0
 * without. Bijections. */
int64_t cg_attn_wg_pair_pos(int64_t t, int64_t ncta, int64_t ntiles);
void cg_attn_wg_tile_order(int64_t pos, int64_t nq, bool zig, int64_t *bz, int64_t *qt);
/* Accumulator register i of thread t (0..127) of a warpgroup's m64nN wgmma fragment holds
 * (row, col) of the 64 x N tile. */
void cg_attn_wg_acc_pos(unsigned t, unsigned i, unsigned *row, unsigned *col);
/* The 16-bit register A operand of one m64nNk16 wgmma taken from an m64nK accumulator (P from
 * the scores): register r (0..3) of k slice kk packs accumulators lo (low half) and hi. */
void cg_attn_wg_pfrag(unsigned kk, unsigned r, unsigned *lo, unsigned *hi);

/* ---- wgmma.c: the sm_90a matrix-product kernel (TMA + wgmma, warp-specialised, persistent) ----
 */
#define CG_WG_MAX_STAGES    PASS_WG_MAX_STAGES
#define CG_WG_MAX_SPLITS    PASS_WG_MAX_SPLITS /* split-K: CTAs of one cluster sharing a tile */
#define CG_WG_SMS           132                /* persistent CTAs: the SMs of an H100/H200 SXM */
#define CG_WG_PRODUCER_REGS 40                 /* setmaxnreg of the producer warpgroup */
#define CG_WG_CONSUMER_REGS 232 /* and of the consumer warpgroups (128*40 + 256*232 <= 64K) */
/* Tile, ring and grid of one wgmma kernel, chosen from the shape. */
typedef struct cg_wg_plan {
    int bm, bn, bk;   /* block tile: bm = 64 * consumers, bk = 64 (one 128-byte swizzle row) */
    int nmm;          /* products sharing the A tile (a horizontal region), each bm x bn */
    int consumers;    /* consumer warpgroups */
    int stages;       /* ring depth */
    unsigned threads; /* 128 * (1 + consumers) */
    bool a_kmajor, b_kmajor; /* operand tiles K-contiguous (else M/N-contiguous) */
    int64_t stage_bytes;     /* A and B tiles of one stage (the shared layout) */
    int a_rows;              /* rows of the A box (K-contiguous A): bm, or M rounded up to 8
                                when M < bm is known (no zero-filled rows to move) */
    int64_t tx_bytes;        /* bytes TMA writes per stage (the full barrier's expect_tx) */
    int splits;              /* split-K: CTAs (one cluster) per output tile, 1, 2 or 4 */
    int mcast;               /* 2: clusters of 2 CTAs with vertically adjacent tiles, each
                                loading half of the shared B tile into both by TMA multicast */
    int64_t red_bytes;       /* rank 0's slots for the other ranks' partial accumulators */
    int64_t smem_bytes;      /* dynamic shared memory: stages, barriers, 1024 B alignment slack */
    int group_m;             /* M tiles per group of the tile order */
    bool streamk;            /* stream-K ([matmul.wgmma.streamk], the schedule's splits 0):
                                sk_ctas CTAs share tiles x nk k steps evenly (pass_wg_sk_first);
                                partial tiles meet in an f32 workspace in HBM: sk_ctas slots of
                                bm x nmm x bn floats, then sk_ctas u32 flags (zero between
                                launches: the CTA that adds a partial clears its flag) */
    int sk_ctas;
    int64_t ws_floats; /* the workspace's 4-byte words */
    unsigned nsm;      /* persistent CTAs */
    bool setmaxnreg;   /* producer 40 / consumers 232 registers (the kernel then starts at 168) */
    /* [matmul.wgmma.swap]: the swapped kernel C^T = B^T A^T: every field above is of the
     * transposed product (bm along the product's N, bn along its M, a_kmajor B's order, b_kmajor
     * A's); b_rows: rows of the B box (the product's A): bn, or M rounded up to 8 when M < bn */
    bool swap;
    int b_rows;
} cg_wg_plan;
/* Plans a wgmma kernel for nmm products M x N x K sharing A (M, N, K < 0:
 * unknown) with an epilogue storing nouts values, in smem_max bytes of
 * shared memory on nsm SMs: the tile, split-K ranks and stages of the
 * region's schedule `want` (matmul.wgmma: bm, bn, splits, stages) when it is
 * valid for the shape (pass_wg_tile_make), else the cost model's fastest
 * tile (pass_wg_pick, passes/wgmma.c). False when no tile is valid (two
 * stages do not fit, no bn keeps the columns in bounds). */
bool cg_wg_plan_for(int64_t M, int64_t N, int64_t K, bool a_kmajor, bool b_kmajor, unsigned nmm,
                    unsigned nouts, int64_t smem_max, unsigned nsm, const ir_schedule *want,
                    cg_wg_plan *p);
/* cg_wg_plan_for of a batched product ([matmul.wgmma.batch]): `batch` batch elements of M x N x
 * K each (-1: unknown; 0: not batched, cg_wg_plan_for), tiles over batch x M x N, no split-K,
 * stream-K or multicast cluster. */
bool cg_wg_plan_batch(int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor, bool b_kmajor,
                      unsigned nmm, unsigned nouts, int64_t smem_max, unsigned nsm,
                      const ir_schedule *want, cg_wg_plan *p);
/* The wgmma shared-memory matrix descriptor of a 128-byte-swizzled tile
 * at shared address saddr: start >> 4 in bits 0-13, leading byte offset
 * >> 4 in 16-29, stride byte offset >> 4 in 32-45, mode 1 (128 B) in 62-63. */
uint64_t cg_wg_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo);
/* Byte offset of byte `byte` (< 128) of row `row` in a 1024-byte-aligned
 * tile of 128-byte rows with the 128-byte swizzle (16-byte chunk index
 * xor row % 8): what TMA writes and wgmma reads. */
uint32_t cg_wg_swz128(uint32_t row, uint32_t byte);
/* TMA boxes of one operand tile of `rows` rows (of M or N) by bk k:
 * K-contiguous: box {64 k, rows}, bk/64 of them; else box {64, bk}, rows/64
 * of them, each box_bytes bytes, placed one after the other. */
void cg_wg_opnd_box(bool kmajor, int64_t rows, int64_t bk, uint32_t box[2], int *nbox,
                    int64_t *box_bytes);
/* Box i of the half of a B tile (bn rows of n by bk k, bn / 2 a multiple
 * of 64) that cluster rank `rank` (0, 1) of a 2-CTA multicast cluster loads
 * into both CTAs: its coordinates from the tile's origin (*dn along n, *dk
 * along k) and its byte offset in the tile (*off, where the plain tile's
 * layout has those elements); box {64 k, bn / 2} (K-contiguous, bk / 64 of
 * them) or {64 n, bk} (bn / 128 of them). Returns the boxes per half. */
int cg_wg_half_box(bool kmajor, int64_t bn, int64_t bk, int rank, int i, int64_t *dn, int64_t *dk,
                   int64_t *off);
/* Descriptor offsets of such a tile: leading and stride byte offsets and
 * the start-address step of one 16-deep k slice. */
void cg_wg_opnd_desc(bool kmajor, int64_t bk, uint32_t *lbo, uint32_t *sbo, uint32_t *kstep);
/* A K-contiguous A operand that is a merge of two axes of a permuted 3-D
 * buffer (the merged heads reshape(permute(o, (1, 0, 2)), (S, H*D)) of an
 * attention output o[H, S, D]): A[m, k] = view[m, k / D, k % D] with
 * view = permute(base, perm) (view axis i = base axis perm[i]). TMA reads
 * it through a 3-D map over the base buffer: map dim j is base axis 2 - j,
 * so dim 0 is D (contiguous); role[j] says what coordinate dim j takes for
 * a box at rows r0, k offset k0: CG_WG_C_ROW r0, CG_WG_C_KIN k0 % D,
 * CG_WG_C_KOUT k0 / D; box[j] is rows, 64 or 1 accordingly. */
enum { CG_WG_C_ROW, CG_WG_C_KIN, CG_WG_C_KOUT };
typedef struct cg_wg_map3 {
    int role[3];
    uint32_t box[3];
    int64_t d; /* D: the merged inner extent */
} cg_wg_map3;
/* Fills m for perm (a permutation of 0..2), D = the base's extent of axis
 * perm[2] and `rows` (the tile's M rows): false unless perm[2] == 2 (D
 * contiguous) and D is a positive multiple of 64 (a 64-wide k box then
 * never straddles two heads). */
bool cg_wg_merged_map(const int perm[3], int64_t d, int64_t rows, cg_wg_map3 *m);
/* The TMA-store epilogue: each consumer warpgroup writes its computed
 * outputs into shared memory (stmatrix for 16-bit outputs, st.shared.v2
 * for f32), fence.proxy.async, then one thread stores them with
 * cp.async.bulk.tensor (shared -> global), whose tensor map clips the
 * ragged edges. A store unit is 64 rows (one warpgroup) x `cols` columns of
 * one output: the box {cols, 64} of that output's map, rows of cols x esize
 * bytes (the `span`, 64 or 128) swizzled at that span (cg_wg_swz); each
 * consumer owns `nbuf` slots used round-robin (a slot is rewritten only
 * after cp.async.bulk.wait_group.read says the store of nbuf units ago has
 * read it), so the stores drain under the next units and the next tile's
 * main loop. The slots follow the operand ring in shared memory. */
typedef struct cg_wg_epi {
    int cols;           /* columns of a unit: min(bn, 128 / the widest output element) */
    int nbuf;           /* ring entries per consumer: 2, or 1 when 2 would cost a stage */
    int slots;          /* slots per ring entry: 1, or the products (the looped epilogue) */
    bool loop;          /* the looped epilogue (below) */
    bool coal;          /* the staged coalesced stores: the threads copy each unit out of its
                           slot (cg_wg_copy_elem, cg_wg_copy_dst) instead of a TMA store */
    int64_t slot_bytes; /* 64 x cols x the widest element, rounded up to 1024 */
    int64_t bytes;      /* consumers x nbuf x slots x slot_bytes */
    int stages;         /* the plan's ring depth with the slots (<= the plan's) */
    int64_t smem_bytes; /* the plan's dynamic shared memory with the slots */
} cg_wg_epi;
/* Fills e for plan p and nouts outputs of element sizes esize[] (2 or 4
 * bytes), ring entries of `slots` slots, within smem_max bytes: two ring
 * entries per consumer or one, whichever leaves the deeper operand ring (at
 * most the plan's stages; two on a tie). False when an element size is not 2 or 4 or
 * fewer than two stages would remain.
 * The looped epilogue (slots = the products, outputs all 16-bit and at most
 * one per product): per unit the warpgroup stages each product's rounded
 * accumulators (stmatrix) in its slot, then runs one loop over the unit's
 * 16-byte chunks (8 columns of a row per thread and trip) that reads the
 * products, computes the outputs and writes output o in place over slot o,
 * so the epilogue's code is emitted once per unit for 8 elements, not once
 * per accumulator register. */
bool cg_wg_epi_plan(const cg_wg_plan *p, const unsigned *esize, unsigned nouts, unsigned slots,
                    int64_t smem_max, cg_wg_epi *e);
/* Byte offset off of a 1024-aligned buffer of span-byte rows (span 32, 64
 * or 128) under TMA's span-byte swizzle: bits 4.. (the 16-byte chunk in its
 * span) xor bits 7.. (offset / 128): CUTLASS's Swizzle<log2(span/16), 4, 3>. */
uint32_t cg_wg_swz(uint32_t off, uint32_t span);
/* Byte offset in a store unit (rows of span bytes, swizzled) of the row
 * address thread t (0..127) of a consumer warpgroup gives to the q-th
 * stmatrix.m8n8.x4.b16 of the unit (16-bit columns 16q .. 16q + 15): matrix
 * t%32 / 8 is rows 8 (matrix % 2) .. + 7, columns 8 (matrix / 2) .. + 7 of
 * the warp's 16 rows (16 (t/32) ..), row t % 8 of it. */
uint32_t cg_wg_stm_off(unsigned t, unsigned q, uint32_t span);
/* Byte offset in a store unit of the element pair (register ii, ii + 1; ii
 * even, registers counted from the unit's first column) thread t holds, for
 * elements of esize bytes: row 16 (t/32) + (t%32)/4 + 8 ((ii/2)%2), column
 * 8 (ii/4) + 2 (t%4). */
uint32_t cg_wg_pair_off(unsigned t, unsigned ii, unsigned esize, uint32_t span);
/* Chunk c of the looped epilogue in a unit of `cols` 16-bit columns: row c /
 * (cols / 8), columns 8 (c % (cols / 8)) .. + 7, its 16 bytes at *off of the
 * unit (rows of 2 cols bytes, swizzled). */
void cg_wg_chunk(unsigned c, unsigned cols, uint32_t *row, uint32_t *col, uint32_t *off);
/* The staged coalesced stores' copy of a unit (64 rows x cols columns, cols 32 or 64, of esize
 * bytes, rows of cols x esize bytes swizzled as TMA's box) out of its slot: trip j (0 ..
 * cols / 2 - 1) of thread t (0 .. 127) of the warpgroup copies piece i = 4 j + t / 32 of the
 * unit's 64 x cols / 32 row pieces of 32 columns, row i / (cols / 32), column 32 (i % (cols /
 * 32)) + t % 32 (a warp: 32 consecutive columns of one row), from byte *off of the slot. */
void cg_wg_copy_elem(unsigned t, unsigned j, unsigned cols, unsigned esize, uint32_t *row,
                     uint32_t *col, uint32_t *off);
/* Where element (row, col) of a unit whose first element is (m0, n0) of one batch element of an
 * output [.., M, N] goes: false when outside M x N (a ragged tile: not stored), else *lin is its
 * linear index, (boff + m0 + row) x N + n0 + col (boff: the batch element's first row, 0 when
 * not batched). */
bool cg_wg_copy_dst(int64_t m0, int64_t n0, uint32_t row, uint32_t col, int64_t M, int64_t N,
                    int64_t boff, int64_t *lin);
/* Emits matmul region `region` (products and outputs in st) as a wgmma
 * kernel when the target is sm_90a and the region qualifies (one 2-D
 * f16/bf16 product whose operands are plain 2-D buffers, possibly
 * transposed, with 16-byte row pitches): 1 emitted, 0 failed (reported),
 * -1 not applicable (nothing emitted; use the mma.sync kernel). */
int cg_wg_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st);
/* Makes mods[i] (created on first use, with the main module's target and data layout) the module
 * that emission writes into. */
void cg_use_module(cg_ctx *cx, unsigned i);
/* codegen/skinny.c: the region's product on the skinny kernel of odd-pitch operands when its
 * schedule is matmul.skinny and the target has clusters (sm_90, sm_90a); -1 when not (nothing
 * emitted), 0 on error (reported), 1 when emitted. */
int cg_sk_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st);
/* The skinny kernel's tile copy and element addressing, as it emits them (the unit test checks
 * them against a model of the copy): chunk j of tile row r of an operand tile whose origin (r0,
 * c0) (both multiples of 8) lies in a base buffer of inner extent d1, valid rows below rlim and
 * columns below cend (absolute), copied to shared rows of `pitch` 16-bit elements (a multiple of
 * 8): *q gets the 16-byte source chunk of the base (the row's first element sits (r d1) mod 8
 * elements into its first chunk), *dst the byte offset in the tile; returns the bytes copied
 * (16, the valid prefix, or 0), the rest of the 16 zero-filled. cg_sk_elem: the 16-bit index in
 * the tile of its element (r, c). */
int cg_sk_chunk(int64_t d1, int64_t r0, int64_t c0, int64_t rlim, int64_t cend, int64_t pitch,
                int64_t r, int64_t j, int64_t *q, int64_t *dst);
int64_t cg_sk_elem(int64_t d1, int64_t pitch, int64_t r, int64_t c);
/* Building blocks of the sm_90a kernels (wgmma.c), shared with the attention kernel:
 * cg_wg_asm emits inline PTX `text` with constraints `cons` over args (never moved or removed;
 * ret NULL: void); cg_wg_wait spins on mbarrier.try_wait.parity of the shared barrier bar (i32)
 * for parity par (i32 0/1); cg_wg_acc_asm replaces the n f32 acc[] by the outputs of asm text
 * whose constraints are cons (pre[0..npre) are its first inputs, the acc tied after them);
 * cg_wg_reglist writes "{$first, ..., $first+n-1}"; cg_wg_tied the constraints "=f" x n, mid,
 * then n tied inputs and a memory clobber; cg_wg_var an entry-block variable of type t set to
 * init at the builder; cg_wg_dyn_smem the kernel's dynamic shared memory as an i32 shared
 * address rounded up to 1024 bytes. */
LLVMValueRef cg_wg_asm(cg_ctx *cx, LLVMTypeRef ret, const char *text, const char *cons,
                       LLVMValueRef *args, unsigned n);
void cg_wg_wait(cg_ctx *cx, LLVMValueRef bar, LLVMValueRef par);
void cg_wg_acc_asm(cg_ctx *cx, LLVMValueRef *acc, unsigned n, const char *text, const char *cons,
                   LLVMValueRef *pre, unsigned npre);
void cg_wg_reglist(char *buf, size_t cap, unsigned first, unsigned n);
void cg_wg_tied(char *buf, size_t cap, unsigned n, const char *mid);
LLVMValueRef cg_wg_var(cg_ctx *cx, LLVMTypeRef t, LLVMValueRef init);
LLVMValueRef cg_wg_dyn_smem(cg_ctx *cx);

#endif
