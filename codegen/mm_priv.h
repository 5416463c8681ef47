/* mm_priv.h - private declarations shared by codegen/mma.c, matmul.c and
 * attention.c (tensor-core building blocks, operand and tile descriptions,
 * the epilogue glue). Nothing else includes it; it can move verbatim into
 * the TX_CODEGEN_INTERNAL section of codegen/codegen.h (one header per
 * folder) once that file is settled. */
#ifndef TX_CG_MM_PRIV_H
#define TX_CG_MM_PRIV_H

#include <llvm-c/Core.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* The LLVM objects an emitter writes into: `fn` is the kernel being built,
 * the builder sits inside it; `gpu` selects NVPTX (address spaces, special
 * registers, tensor cores) over the host loop nest. `entry` is the
 * function's first block (allocas go there). */
typedef struct cg_mm_ir {
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMValueRef fn;
    LLVMBasicBlockRef entry;
    bool gpu;
    int64_t smem_max;  /* shared memory one block may use on the target (bytes) */
    unsigned uniq;     /* counter for unique global names */
} cg_mm_ir;

/* How one operand of a matrix product is read: the element (batch b, row r,
 * column c) of the 2-D view lives at ptr[sum b_i*sb[i] + r*sr + c*sc] with
 * stored dtype ldt; after loading it is converted to f32 and rounded through
 * casts[0..ncast) in order (the region's prologue). Strides are i64 values;
 * a broadcast batch dim has stride 0. `unit_c` / `unit_r` say at generation
 * time that sc / sr is the constant 1 (used to pick coalesced load orders). */
struct cg_mm_ir;
struct cg_mm_opnd;
/* Generic element load of an operand that is not a strided view of one
 * buffer: returns the f32 value of element (bidx, r, c) after the prologue. */
typedef LLVMValueRef (*cg_mm_load_fn)(void *user, struct cg_mm_ir *e, const struct cg_mm_opnd *o,
                                      const LLVMValueRef *bidx, LLVMValueRef r, LLVMValueRef c);
typedef struct cg_mm_opnd {
    cg_mm_load_fn load; /* non-NULL: use it instead of ptr/strides */
    void *user;
    ir_id node;         /* the operand value (for `load`) */
    unsigned nbatch;    /* batch dims of the product it feeds (for `load`) */
    LLVMValueRef ptr;
    ir_dtype ldt;
    uint8_t ncast;
    ir_dtype casts[4];
    LLVMValueRef sb[IR_MAX_RANK];
    LLVMValueRef sr, sc;
    bool unit_r, unit_c;
} cg_mm_opnd;

/* Epilogue callback: called with the builder positioned where the f32 values
 * acc[0..nmm) (one per product) of output element (bidx[0..nb), row, col)
 * are final and in bounds
 * (row < M, col < N already checked). It must compute the tail and store;
 * it may create blocks but must leave the builder in a block that falls
 * through (no terminator). Returns false on failure (reported by it). */
typedef bool (*cg_mm_epi_fn)(void *user, cg_mm_ir *e, const LLVMValueRef *acc,
                             const LLVMValueRef *bidx, LLVMValueRef row, LLVMValueRef col);

/* Batched matrix products out_i[b, m, n] = sum_k A[b, m, k] * B_i[b, k, n]
 * for i < nmm (several products sharing A: a horizontal region). */
#define CG_MM_MAXH 4
typedef struct cg_mm_desc {
    unsigned nb;                   /* batch dims of the output */
    LLVMValueRef bdim[IR_MAX_RANK]; /* their extents (i64) */
    LLVMValueRef M, N, K;          /* i64 */
    unsigned nmm;                  /* products (1..CG_MM_MAXH) */
    cg_mm_opnd a, b[CG_MM_MAXH];   /* a: rows m, cols k; b[i]: rows k, cols n */
    ir_dtype cdt;                  /* operand dtype after the prologue: F16/BF16 use tensor cores */
    int64_t bm, bn, bk;            /* requested tile (0: defaults) */
    int stages;                    /* requested shared-memory ring depth (0: as many as fit) */
    cg_mm_epi_fn epi;
    void *user;
} cg_mm_desc;

/* The launch shape an emitted GPU kernel expects. grid.z covers the flat
 * batch index (the kernel loops when the batch exceeds 65535). */
typedef struct cg_mm_launch {
    unsigned threads;        /* block.x */
    int64_t bm, bn, bk;      /* the tile actually used */
    int64_t smem_bytes;      /* shared memory of the kernel (static + dynamic) */
    int64_t dyn_smem;        /* of which dynamic (launch parameter) */
    bool tensor_cores;
    /* grid: x = ceil(N / bn), y = ceil(M / bm), z = min(batch, 65535) for
     * matmul; attention: x = ceil(Sq / bm), y = min(batch, 65535). */
} cg_mm_launch;

/* ---- mma.c: building blocks ---- */
LLVMTypeRef cg_mm_i16(cg_mm_ir *e);
LLVMTypeRef cg_mm_i32(cg_mm_ir *e);
LLVMTypeRef cg_mm_i64(cg_mm_ir *e);
LLVMTypeRef cg_mm_f32(cg_mm_ir *e);
LLVMValueRef cg_mm_c32(cg_mm_ir *e, int64_t v);
LLVMValueRef cg_mm_c64(cg_mm_ir *e, int64_t v);
LLVMValueRef cg_mm_cf(cg_mm_ir *e, double v);
/* Declares (once) and calls a function or intrinsic by name; intrinsics
 * named llvm.* must exist in LLVM (checked; false via NULL otherwise). */
LLVMValueRef cg_mm_call(cg_mm_ir *e, const char *name, LLVMTypeRef ret,
                        LLVMTypeRef *pt, LLVMValueRef *args, unsigned n);
/* GPU special registers as i32: "tid.x", "ctaid.y", "nctaid.z" ... */
LLVMValueRef cg_mm_sreg(cg_mm_ir *e, const char *reg);
void cg_mm_barrier(cg_mm_ir *e);
/* A static shared-memory array of `bytes` bytes (16-byte aligned); returns
 * its address in addrspace(3). */
LLVMValueRef cg_mm_smem(cg_mm_ir *e, int64_t bytes);
/* The kernel's dynamic shared memory (GPU): an external zero-length
 * addrspace(3) array, 16-byte aligned; its size is the launch's dynamic
 * shared-memory bytes (cg_mm_launch.dyn_smem). */
LLVMValueRef cg_mm_dyn_smem(cg_mm_ir *e);
/* An f32 variable in the entry block (promoted to a register by mem2reg). */
LLVMValueRef cg_mm_var(cg_mm_ir *e, LLVMValueRef init);
/* Loads element `idx` (i64) of a tensor with stored dtype dt and returns it
 * as f32 (i32 and bool converted exactly as numbers). */
LLVMValueRef cg_mm_load_f32(cg_mm_ir *e, LLVMValueRef ptr, ir_dtype dt, LLVMValueRef idx);
/* Rounds an f32 to dtype dt and back (f16/bf16: nearest even; i32: toward
 * zero; bool: != 0); f32 is returned unchanged. */
LLVMValueRef cg_mm_round(cg_mm_ir *e, LLVMValueRef x, ir_dtype dt);
/* f32 -> the 16-bit pattern of dt (F16 or BF16), nearest even. */
LLVMValueRef cg_mm_to_bits16(cg_mm_ir *e, LLVMValueRef x, ir_dtype dt);
/* exp(x) for f32: the host calls the C library; NVPTX uses an exact-to-a-
 * few-ulp expansion (ex2.approx on a split argument). */
LLVMValueRef cg_mm_exp(cg_mm_ir *e, LLVMValueRef x);
/* exp(x) for values that end in f16/bf16 precision (GPU: one ex2.approx.ftz
 * of x log2 e, relative error ~1e-6 for |x| < 30; exp(-inf) = 0). The host
 * uses cg_mm_exp. */
LLVMValueRef cg_mm_exp_fast(cg_mm_ir *e, LLVMValueRef x);
LLVMValueRef cg_mm_fmax(cg_mm_ir *e, LLVMValueRef a, LLVMValueRef b);
/* One mma.sync.aligned.m16n8k16.row.col f32 += dt x dt (dt F16 or BF16):
 * a[4], b[2] are i32 pairs of 16-bit values, c[4] f32; writes d[4]. */
bool cg_mm_mma16816(cg_mm_ir *e, ir_dtype dt, LLVMValueRef *a, LLVMValueRef *b,
                    LLVMValueRef *c, LLVMValueRef *d);
/* Butterfly shuffle of an f32 across the warp (all lanes active). */
LLVMValueRef cg_mm_shfl_xor(cg_mm_ir *e, LLVMValueRef v, int lanemask);
/* Operand offset: sum bidx[i]*sb[i] + r*sr + c*sc (i64). */
LLVMValueRef cg_mm_offset(cg_mm_ir *e, const cg_mm_opnd *o, unsigned nb,
                          const LLVMValueRef *bidx, LLVMValueRef r, LLVMValueRef c);
/* Loads operand element (r, c) as f32 after the prologue casts. */
LLVMValueRef cg_mm_opnd_load(cg_mm_ir *e, const cg_mm_opnd *o, unsigned nb,
                             const LLVMValueRef *bidx, LLVMValueRef r, LLVMValueRef c);
/* Splits a flat batch index (i64) into per-dim indices over bdim[0..nb). */
void cg_mm_unflatten(cg_mm_ir *e, LLVMValueRef flat, unsigned nb, const LLVMValueRef *bdim,
                     LLVMValueRef *bidx);
/* Product of bdim[0..nb) (1 when nb == 0). */
LLVMValueRef cg_mm_batch_count(cg_mm_ir *e, unsigned nb, const LLVMValueRef *bdim);

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
void cg_mm_tile_load(cg_mm_ir *e, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads);
/* cp.async form of cg_mm_tile_load (GPU): true when the tile qualifies
 * (raw 16-bit copy in aligned 16-byte vectors, contiguous in shared memory
 * too). cg_mm_tile_async issues the copies (zero-filled outside the
 * extents) without waiting; cg_mm_cp_commit closes a group and
 * cg_mm_cp_wait(n) waits until at most n groups are pending. */
bool cg_mm_tile_async_ok(cg_mm_ir *e, const cg_mm_tile *t);
void cg_mm_tile_async(cg_mm_ir *e, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads);
void cg_mm_cp_commit(cg_mm_ir *e);
void cg_mm_cp_wait(cg_mm_ir *e, int n);
/* Loads the i32 holding 16-bit elements smem[idx], smem[idx+1] (idx even,
 * i32 element index of 16-bit units). */
LLVMValueRef cg_mm_smem_pair(cg_mm_ir *e, LLVMValueRef smem, LLVMValueRef idx);
/* ldmatrix.sync.aligned.m8n8.x4[.trans].b16 (GPU): this lane supplies the
 * 16-bit element index `idx` (i32) of one 16-byte-aligned row in `smem`
 * (lanes 8i..8i+7 give the rows of matrix i); out[i] gets this lane's i32
 * of matrix i. False when the intrinsic is missing. */
bool cg_mm_ldsm_x4(cg_mm_ir *e, LLVMValueRef smem, LLVMValueRef idx, bool trans, LLVMValueRef *out);
/* Packs two f32 into an i32 of two 16-bit dt values (lo = first). */
LLVMValueRef cg_mm_pack2(cg_mm_ir *e, LLVMValueRef lo, LLVMValueRef hi, ir_dtype dt);
/* Structured loop helper: for (i = lo; i < hi; i += step) body; the
 * induction variable is returned by _begin and the loop closed by _end. */
typedef struct cg_mm_loop {
    LLVMBasicBlockRef head, body, latch, exit;
    LLVMValueRef iv, step;
} cg_mm_loop;
LLVMValueRef cg_mm_loop_begin(cg_mm_ir *e, cg_mm_loop *l, LLVMValueRef lo, LLVMValueRef hi,
                              LLVMValueRef step, const char *name);
void cg_mm_loop_end(cg_mm_ir *e, cg_mm_loop *l);
/* if (cond) { ...: returns the continuation block; the builder is put in the
 * then-block. cg_mm_if_end branches to the continuation and moves there. */
LLVMBasicBlockRef cg_mm_if_begin(cg_mm_ir *e, LLVMValueRef cond, const char *name);
void cg_mm_if_end(cg_mm_ir *e, LLVMBasicBlockRef cont);

/* ---- matmul.c / attention.c: kernel bodies over a description ---- */
struct cg_ctx;
/* Describes operand `id` (shape [..., R, C]) of a product with nb output
 * batch dims: a strided view of one HBM buffer through in-region casts and
 * permutes when possible, else a generic load through cg_emit_value. */
void cg_mm_resolve_opnd(struct cg_ctx *cx, cg_mm_ir *e, unsigned region, ir_id id, unsigned nb,
                        cg_mm_opnd *o);
/* The epilogue state of a region: the product node whose value the
 * accumulator gives, and the region outputs stored per element (each of the
 * product's shape). */
typedef struct cg_mm_epi_state {
    struct cg_ctx *cx;
    unsigned nmm;
    ir_id mm[CG_MM_MAXH];
    ir_id outs[64];
    unsigned nouts;
} cg_mm_epi_state;
/* Fills st->outs with the region's stored values; false (reported) when one
 * is not an elementwise epilogue of the products st->mm with their shape. */
bool cg_mm_collect_outs(struct cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st);
/* A cg_mm_epi_fn (user: cg_mm_epi_state): substitutes each accumulator,
 * rounded to its product's dtype, for st->mm[i] and stores every output. */
bool cg_mm_epi_store(void *user, cg_mm_ir *e, const LLVMValueRef *acc, const LLVMValueRef *bidx,
                     LLVMValueRef row, LLVMValueRef col);
/* Shared memory one block may use on a cg_target (0 for the host). */
int64_t cg_mm_smem_limit(int target);
/* Emits the whole product of d into e->fn at the builder for the program
 * ids pid[0..3) (i64; x: M tiles, y: N tiles, z: flat batch) stepping the
 * batch by zstep (NULL: one batch element per program); fills the launch
 * shape l and leaves the builder in an open block. False with a message in
 * err on failure. */
bool cg_mm_emit_body(cg_mm_ir *e, const cg_mm_desc *d, cg_mm_launch *l, const LLVMValueRef *pid,
                          LLVMValueRef zstep, char *err, size_t cap);

/* Attention out[b, i, :] = softmax_j(chain(q[b,i,:].k[b,:,j])) @ v[b, j, :]
 * with an online softmax (chain: attention.c's score steps); p rounded to
 * pdt before the second product. Q is
 * an operand with rows i, cols d; K with rows d, cols j (the transposed
 * view); V with rows j, cols dv. The epilogue receives (bidx, i, dv). */
typedef struct cg_attn_desc {
    unsigned nb;
    LLVMValueRef bdim[IR_MAX_RANK];
    LLVMValueRef Sq, Sk, D, Dv;   /* i64 */
    int64_t dmax, dvmax;          /* compile-time upper bounds of D, Dv (0: unknown) */
    cg_mm_opnd q, k, v;
    ir_dtype sdt;                 /* dtype the scores are rounded to before scaling (F32: none) */
    ir_dtype pdt;                 /* dtype of p before the second product (F16/BF16/F32) */
    ir_dtype cdt;                 /* operand dtype for tensor cores (F16/BF16) or F32 */
    cg_mm_epi_fn epi;
    void *user;
} cg_attn_desc;

#endif
