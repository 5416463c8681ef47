/* passes.h - graph passes, the pipeline table, the fusion planner and its
 * cost model. Every pass has one signature and reports whether it changed
 * the graph; the verifier runs between passes when TX_VERIFY_PASSES is set. */
#ifndef TX_PASSES_H
#define TX_PASSES_H

#include "ir/ir.h"

/* Hardware description for the cost model and the SRAM budget. */
typedef struct pass_gpu {
    const char *name;       /* "h200" */
    int sms;                /* streaming multiprocessors */
    int64_t smem_per_block; /* max dynamic shared memory per block (bytes) */
    int64_t smem_per_sm;    /* shared memory per SM (bytes) */
    int regs_per_sm;        /* 32-bit registers per SM */
    int64_t l2_bytes;
    double hbm_GBps;       /* datasheet HBM bandwidth */
    double peak_TFLOPs[5]; /* per ir_dtype: dense matrix rate for f16/bf16, FMA rate for f32 */
    double launch_us;      /* launch overhead charged per kernel */
    double tc_eff; /* fraction of the f16/bf16 peak tx's tensor-core kernels reach (mma.sync) */
    double mem_latency_us; /* loaded DRAM latency for Little's law (passes/model.c); 0: roofline
                              only */
    int cluster_max;  /* most blocks of a portable thread-block cluster (8 on sm_90); 0: none */
    double clock_GHz; /* boost clock: 4 warp instructions (128 lanes) issue per SM per cycle, the
                         instruction-issue bound of pointwise kernels (passes/model.c); 0: none */
    double attn_eff;  /* fraction of the f16/bf16 peak the sm_90a attention kernel reaches (model
                         attention.fa3); 0: none (the roofline at tc_eff) */
    double sfu_Gops;  /* tanh element-ops per second tx's code issues (10^9/s, measured by txc
                         bench --calibrate); > 0: replaces the clock's issue rate (model.c) */
    double wg_eff;    /* the sm_90a wgmma kernel (codegen/wgmma.c): the share of the tensor-core
                         rate its k steps sustain where the wgmma issue, not shared memory, bounds
                         them (passes/wgmma.c); 0: no such kernel (matmul keeps the roofline) */
    double col_latency_us; /* column schedules (passes/model.c pass_model_column): the latency of
                              the bandwidth-delay product their counted loads (each thread's
                              unrolled groups) must fill; 0: the mem_latency_us form */
    int64_t col_sm_bytes;  /* column schedules: the most bytes of loads one SM keeps in flight */
} pass_gpu;

/* Looks a GPU up by name ("h100 h200 a100 l4 rtx4090"); NULL when unknown. */
const pass_gpu *pass_gpu_find(const char *name);
/* Comma-separated list of known names, for error messages. */
const char *pass_gpu_names(void);

/* The code-generation target as the planner sees it: which kernel families codegen builds
 * there. The planner prices only those (docs/fusion.md "Target"). */
typedef struct pass_target {
    int sm;    /* compute capability x 10 of the target (80, 86, 89, 90); 0: not known (the
                  kernels the GPU table has figures for) */
    bool arch; /* sm_90a: the architecture-specific wgmma + TMA kernels (GEMM, attention) */
    bool host; /* the CPU (host JIT); sm is 0 */
} pass_target;
/* The hardware hw as the kernels of target t use it: hw itself when t takes every kernel hw has
 * figures for; else *buf, a copy without what t lacks (below sm_90a: no wgmma GEMM (wg_eff 0),
 * no FlashAttention-3-style kernel (attn_eff 0); below sm_90 also no thread-block clusters
 * (cluster_max 0)). */
const pass_gpu *pass_target_gpu(const pass_gpu *hw, pass_target t, pass_gpu *buf);
/* "sm_90a", "sm_80", ... ("any" when t.sm is 0). */
const char *pass_target_name(pass_target t, char *buf, size_t cap);

typedef struct pass_ctx {
    tx_diag *diag;                /* errors (a pass that fails reports here) */
    FILE *dump;                   /* --dump-ir destination (stderr); NULL: no dumps */
    const char *dump_stage;       /* NULL, "all", or a pass name */
    FILE *explain;                /* --explain destination; NULL: quiet */
    const pass_gpu *gpu;          /* cost model hardware, as the target's kernels use it
                                     (pass_target_gpu of the GPU table's entry) */
    pass_target target;           /* the code-generation target gpu was narrowed to */
    int64_t sram_budget;          /* per-block on-chip budget in bytes (0: gpu->smem_per_block) */
    bool no_fuse;                 /* --no-fuse: one kernel per operation */
    const struct pass_tune *tune; /* tuning measurements the planner follows (NULL: none) */
    bool no_stats_recompute;      /* [reduction.stats_recompute] off (its own trial plans) */
} pass_ctx;

typedef bool (*pass_fn)(ir_graph *g, pass_ctx *c); /* returns: changed */

typedef struct pass_def {
    const char *name; /* the STAGE name of --dump-ir=STAGE */
    pass_fn run;
    const char *what; /* one line for --help and docs */
} pass_def;

/* The pipeline in order; terminated by a {NULL} entry. */
extern const pass_def pass_pipeline[];

/* Runs the whole pipeline (dumping and verifying as configured). Returns
 * false when a pass reported an error or the verifier failed. */
bool pass_run_pipeline(ir_graph *g, pass_ctx *c);
/* True when `name` is a stage of the pipeline (or "all", or "input"). */
bool pass_stage_known(const char *name);

/* The passes. */
bool pass_shapes(ir_graph *g, pass_ctx *c);   /* shape propagation and checking */
bool pass_fold(ir_graph *g, pass_ctx *c);     /* constant folding */
bool pass_simplify(ir_graph *g, pass_ctx *c); /* algebraic simplification */
/* [simplify.contract] (passes/contract.c, run by pass_simplify): sum(a * b, axis=k) of two
 * operands broadcast against each other (a pairwise product) as a' @ b' where N, M and K are
 * bound and large enough for a GEMM tile; says each rewrite on c->explain. True when one
 * happened. */
bool pass_contract(ir_graph *g, pass_ctx *c);
/* [matmul.exact_upcast] (passes/upcast.c, run by pass_simplify): every used f32 product
 * f32(a) @ f32(b) whose operands are, behind one-input views, f32 casts of one 16-bit dtype becomes
 * a @ b (those views rebuilt on the 16-bit values) with an f32 result: each product of two f16 or
 * two bf16 values is exact in f32, so the tensor cores compute it. TX_EXACT_UPCAST=0: off.
 * Says each rewrite on c->explain. True when the graph changed. */
bool pass_exact_upcast(ir_graph *g, pass_ctx *c);
/* Whether product i is the rule's: true with the operands' casts in *ca, *cb and the views above
 * them (outermost first) in va[0 .. *na), vb[0 .. *nb) (arrays of 8); when false, *ca / *cb name
 * the f32 cast of a 16-bit value found behind that operand, else IR_NONE. */
bool pass_exact_upcast_ok(const ir_graph *g, ir_id i, ir_id *ca, ir_id *cb, ir_id va[],
                          unsigned *na, ir_id vb[], unsigned *nb);
/* The dtype the tensor cores would read product mm's operands in: f16 / bf16 when both operands
 * have it and mm is of that dtype or f32 (the f32 product of [matmul.exact_upcast]); else mm's
 * own dtype (f32, i32: the CUDA cores; mixed operands: converted in the prologue). */
ir_dtype pass_mm_tc_dtype(const ir_graph *g, const ir_node *mm);
/* [simplify.pick_push] (passes/pickpush.c, run by pass_simplify): a one-hot pick of an
 * elementwise function of the row's statistics becomes that function at the index of picked
 * operands (0 outside the row); says each rewrite on c->explain. True when one happened. */
bool pass_pick_push(ir_graph *g, pass_ctx *c);
bool pass_cse(ir_graph *g, pass_ctx *c); /* common subexpression elimination */
bool pass_dce(ir_graph *g, pass_ctx *c); /* dead-code elimination */
/* [reduction.split_axes] (passes/split.c): reductions over a strided axis set split into the
 * trailing contiguous run, then the outer axes. */
bool pass_split(ir_graph *g, pass_ctx *c);
bool pass_fuse(ir_graph *g, pass_ctx *c); /* fusion planner: fills g->regions */
/* [reduction.column_stages] (passes/fuse.c): whether a column reduction over `axes` of dom (the
 * innermost axis kept) has concrete sizes, fewer kept elements than 128 x gpu's SMs (one thread
 * per column in blocks of 128: fewer blocks than SMs), more reduced elements than kept ones and
 * at least 2^20 in all: a later stage over the same columns (and the domain-shaped work leading
 * to one) is then kept apart from it, and a kernel of several such stages streams x again. */
bool pass_column_few(const ir_shape *dom, uint32_t axes, const pass_gpu *gpu);
/* [matmul.stage_view] (passes/stage.c, run by pass_fuse first): every matmul operand read
 * through reshapes and permutes without a stride form whose in-place read the model prices above
 * a copy becomes a copy (a cast to its own dtype flagged IR_NF_STAGE) that the product reads
 * dense; says each decision with its numbers on c->explain. True when one was inserted. */
bool pass_stage_views(ir_graph *g, pass_ctx *c);
/* [attention.materialize_qk] (passes/attn_qk.c, run by pass_fuse after pass_stage_views): a q
 * or k operand of softmax(F(q @ kT)) @ v that is a concat (partial rotary) becomes a copy (a cast
 * to its own dtype flagged IR_NF_STAGE) the attention reads by TMA, where the model prices the
 * sm_90a FA3 kernel plus the copy's bytes below the mma.sync kernel; says each decision on
 * c->explain. True when one was inserted. */
bool pass_attn_materialize_qk(ir_graph *g, pass_ctx *c);
/* [reduction.stats_recompute] (passes/stats.c, run by pass_fuse after pass_stage_views): a
 * reduction kernel's pointwise values of its whole domain, computed from its inputs and its
 * statistics and read only by one other kernel of the same domain, are copied (flagged
 * IR_NF_RECOMPUTE) into that kernel where recomputing them per element is priced below writing
 * and re-reading them and the planned graph is predicted faster: the reduction kernel then stores
 * only its statistics. Says each decision on c->explain. True when the graph changed. */
bool pass_stats_recompute(ir_graph *g, pass_ctx *c);
/* Puts the nodes a pass appended after the first n0 in topological order: node j >= n0 goes just
 * before original node before[j - n0] (those before one node in the order they were appended);
 * every input is renumbered (passes/simplify.c). */
void pass_place_appended(ir_graph *g, uint32_t n0, const ir_id *before);
/* The placements of the nodes a rewrite appends (pass_place_appended's before[]): before[j] is
 * the original node the j-th appended node goes before; n entries of cap. Zero-initialised empty.
 */
typedef struct pass_placed {
    ir_id *before;
    uint32_t n, cap;
} pass_placed;
/* Records that node id, the last one appended, goes before original node i, and gives it i's
 * source line and column; returns id. Every node appended after n0 is recorded once, in order. */
ir_id pass_placed_at(ir_graph *g, pass_placed *p, ir_id id, ir_id i);
/* pass_place_appended(g, n0, p->before), then frees p's array (p is left empty). */
void pass_placed_apply(ir_graph *g, uint32_t n0, pass_placed *p);

/* ---- reports (passes/report.c) -------------------------------------------
 * Each takes a planned graph (after pass_fuse), plans the same graph with
 * --no-fuse internally for the totals, and writes one form of the cost
 * report (spec section 4). False with an error reported on failure. */
bool pass_report_text(const ir_graph *g, pass_ctx *c, FILE *out); /* --emit=report */
bool pass_report_json(const ir_graph *g, pass_ctx *c, FILE *out); /* --emit=json */
bool pass_report_dot(const ir_graph *g, pass_ctx *c, FILE *out);  /* --emit=dot */
/* Measured kernel times for the picture (txc bench --svg): us[k] for region
 * k of the fused plan, un_us[k] of the unfused plan (NULL: not measured;
 * 0: that kernel was not timed), and a line saying where. */
typedef struct pass_measured {
    const double *us;
    uint32_t n;
    const double *un_us;
    uint32_t un_n;
    const char *label;
} pass_measured;
/* --emit=svg (passes/svg.c): the roofline of both plans and the predicted
 * timelines, with the measured ones beside them when m is not NULL. */
bool pass_report_svg(const ir_graph *g, pass_ctx *c, const pass_measured *m, FILE *out);

/* ---- planner, tile plans and cost model (fuse.c, plan_tile.c, cost.c) ----
 * Shared by the planner and the reports; docs/fusion.md and
 * docs/cost-model.md give the rules and formulas. */

/* The GPU the context names, or the default (h200) when c->gpu is NULL. */
const pass_gpu *pass_ctx_gpu(const pass_ctx *c);
/* The per-block on-chip budget in bytes: c->sram_budget when > 0, else the
 * GPU's shared memory per block. */
int64_t pass_sram_budget(const pass_ctx *c);

/* p = coef * numel(s), with symbols bound in g replaced by their values. */
void pass_numel(const ir_graph *g, const ir_shape *s, double coef, ir_poly *p);
/* True when node op is a compute op (elementwise, reduction or matmul):
 * the ops that belong to a region of their own kind. */
bool pass_is_compute(ir_op op);
/* The non-view values a (possibly view) value v reads: v itself when v is
 * not a view, else the sources of its view chain (concat: several), in
 * operand order, without duplicates. Returns the count (at most cap). */
unsigned pass_view_sources(const ir_graph *g, ir_id v, ir_id *out, unsigned cap);
/* How many sources pass_view_sources would find with room for all of them. */
unsigned pass_view_source_count(const ir_graph *g, ir_id v);
/* Room for a view's sources. A kernel takes at most 544 buffer pointers (4352 bytes of
 * parameters), so a view of more sources cannot be one kernel anyway; pass_fuse refuses a
 * concatenation of more than PASS_SRC_CAP sources (one located error) instead of truncating. */
enum { PASS_SRC_CAP = 1024 };
/* The value whose buffer a returned view v is (the planner's rule view.alias: no copy kernel):
 * v a chain of reshapes of a non-view value u that a region computes (not an input, constant or
 * generated value; a dense value's reshape has its bytes), u not returned itself and no other
 * returned value such a view of u; or v a chain of permutes and reshapes of the output u of an
 * attention region (which stores through the view: pass_view_strides_of succeeds), where u and
 * every node of the chain have one user, the next (v: the output). IR_NONE otherwise (a copy
 * region materialises v). */
ir_id pass_view_alias(const ir_graph *g, ir_id v);
/* [attention.store_transposed]: the product u (an attention region's output, its anchor) whose
 * [matmul.stage_view] copy cp (a cast to its own dtype flagged IR_NF_STAGE of a chain of
 * reshapes and permutes over u, e.g. reshape(transpose(o, 1, 2), (B, S, H x D))) the planner put
 * into u's region: that kernel stores u's element i at cp's offset of i (the chain's strides,
 * pass_view_strides_of; u's last axis contiguous), u and cp share one buffer laid out as cp, and
 * cp's readers take it as a dense value. u and every view of the chain have one user. IR_NONE
 * when cp is no such copy. */
ir_id pass_attn_ostore(const ir_graph *g, ir_id cp);
/* Where the elements of u lie in the dense buffer of v, a chain of permutes and reshapes over u:
 * the element at index i of u is at sum_a i[a] * stride(a), stride(a) the product of the extents
 * f[a][0 .. n[a]) (none: 1; an extent-1 axis has none and reads 0). inner: u's last axis has
 * stride 1. False when a reshape of the chain splits an axis of u or merges symbolic extents
 * (the strides are then not a product of extents). */
typedef struct pass_view_strides {
    uint8_t n[IR_MAX_RANK];
    ir_dim f[IR_MAX_RANK][2 * IR_MAX_RANK];
    bool inner;
    bool permuted; /* the chain holds a permute (a reshape-only chain keeps u's bytes) */
} pass_view_strides;
bool pass_view_strides_of(const ir_graph *g, ir_id u, ir_id v, pass_view_strides *s);

/* A walk over a chain of reshapes and permutes: per axis of the value at the current level, its
 * list of "fine" axes (the start value's axes of extent > 1, extents fx[], nf of them), major
 * first. pass_fine_start seeds it from shape sh (fine[i]: axis i's fine axis, -1 for extent 1);
 * pass_fine_regroup regroups the fine axes, in order, into the axes of shape sh: an axis takes one
 * fine axis of its extent or known fine extents whose product it is; false (w unchanged) when that
 * would split a fine axis or multiply symbolic extents. Used by pass_view_strides_of and by
 * codegen's tensor-map walk of attention operands. */
enum { PASS_FINE_MAX = 2 * IR_MAX_RANK };
typedef struct pass_fine_walk {
    ir_dim fx[PASS_FINE_MAX];
    unsigned nf, rank;
    uint8_t cnt[IR_MAX_RANK], ax[IR_MAX_RANK][PASS_FINE_MAX];
} pass_fine_walk;
void pass_fine_start(pass_fine_walk *w, int fine[IR_MAX_RANK], const ir_shape *sh);
bool pass_fine_regroup(pass_fine_walk *w, const ir_shape *sh);

/* How the sm_90a attention kernel (codegen/attention.c) reads operand q, k or v through a TMA
 * map: the operand, seen as [batch..., rows, D] (K untransposed: [batch..., keys, D]), is a
 * permutation of the axes of a dense HBM buffer `base` after reshapes that split or merge its
 * axes (split heads `permute(reshape(t, (S, H, D)), (1, 0, 2))` and, with a batch,
 * `permute(reshape(t, (B, S, H, D)), (0, 2, 1, 3))`, GQA's `reshape(k, (B, 8, 1, S, D))`, plain
 * [B, H, S, D]) and at most one slice of the buffer's last axis (nanoGPT's `qkv.split`: columns
 * [offset, offset + width) of rows of `pitch` elements). The map is C-ordered over the buffer (or
 * its slice), `rank` dims (3 to PASS_TMAP_MAXR) inner first: dim[0] = D (contiguous, coordinate:
 * the column), then, in memory order, the rows (role PASS_AV_ROW, coordinate: the row) and groups
 * of operand batch axes b0..b0+nb-1 that are adjacent in memory and in the operand (role
 * PASS_AV_BATCH, coordinate: their linear index); an operand batch axis of extent 1 (broadcast)
 * reads index 0 and has no map dim. The last dim, dim[rank - 1], is the product of `outer` when
 * outer.rank > 0 (batch extents that may be symbolic); map dims of extent 1 with no axes fill
 * rank 3. With a slice (pitch > 0) the map starts `offset` elements into the buffer and the
 * stride of map dim pdim is pitch elements (the dims below it lie inside one row; pdim 0: no
 * dim above the row), the strides above it products of the extents. */
enum { PASS_TMAP_MAXR = 5 }; /* cuTensorMapEncodeTiled's most dims */
enum { PASS_AV_D, PASS_AV_ROW, PASS_AV_BATCH };
typedef struct pass_attn_view {
    ir_id base;
    uint8_t rank; /* map dims: 3 to PASS_TMAP_MAXR */
    uint8_t role[PASS_TMAP_MAXR];
    uint8_t b0[PASS_TMAP_MAXR], nb[PASS_TMAP_MAXR]; /* PASS_AV_BATCH: operand axes b0 .. b0+nb-1 */
    ir_dim dim[PASS_TMAP_MAXR];
    ir_shape outer;
    ir_shape opnd;  /* the operand's batch extents (rank: its batch dims) */
    int64_t offset; /* elements from the buffer's start to the map's (a slice's first column) */
    int64_t pitch;  /* a slice's full row in elements (the stride of dim pdim); 0: no slice */
    uint8_t pdim;
} pass_attn_view;
/* The view of operand `opnd` of attention region `region` (K: trans, the operand is kT): false,
 * with one line in why, unless the buffer behind it is a dense non-view value of dtype dt outside
 * the region, D = d is its contiguous axis, a slice (if any) starts and pitches on 16 bytes and
 * the map needs at most PASS_TMAP_MAXR dims. */
bool pass_attn_view_of(const ir_graph *g, unsigned region, ir_id opnd, ir_dtype dt, int64_t d,
                       bool trans, pass_attn_view *v, char *why, size_t cap);
/* [attention.fa3]: whether attention region `region` runs on the sm_90a FlashAttention-3 style
 * kernel where the target has one: more than 64 query rows (or a symbolic count), q, kT, v and p
 * one 16-bit dtype, D = Dv known, a multiple of 16 up to 256, each operand a TMA view
 * (pass_attn_view_of; vw[] get them, vw may be NULL). False with the first reason in why. The one
 * rule: codegen emits by it, the model and --explain report it. */
bool pass_attention_fa3(const ir_graph *g, uint32_t region, pass_attn_view vw[3], char *why,
                        size_t cap);

/* [attention.ks_tma]: whether the key split's K and V tiles of attention.ksplit region `region`
 * can stream by TMA tensor maps into an mbarrier ring (sm_90a): D = Dv known, 64 or 128 (whole
 * 128-byte swizzled boxes of 64 columns), K and V TMA views (pass_attn_view_of; vw[] get them,
 * vw may be NULL). False with the first reason in why. Whether the kernel takes it is the model's
 * (pass_attention_ks_tma_pick). */
bool pass_attention_ks_tma(const ir_graph *g, uint32_t region, pass_attn_view vw[2], char *why,
                           size_t cap);
/* The planner's pick of [attention.ks_tma] for an eligible region (sm_90a): TX_ATTN_KS_TMA=1 / 0
 * in the compiling process's environment forces it on / off (benchmarks). */
bool pass_attention_ks_tma_pick(const ir_graph *g, uint32_t region, char *why, size_t cap);

/* [attention.lse]: whether node id is the row logsumexp of the softmax over `scores`,
 * `log(l) + m` (either order) with m = max(scores, last axis, keepdim) and
 * l = sum(exp(scores - m), last axis, keepdim), an f32 row value (what FlashAttention's forward
 * returns beside O); *lg gets the log node. The attention kernels that write it (sm_90a FA3, host)
 * store c m' + ln(l) from their final softmax state, whatever running max they kept. */
bool pass_attention_lse_node(const ir_graph *g, ir_id scores, ir_id id, ir_id *lg);
/* The region's logsumexp output (pass_attention_lse_node), or IR_NONE. */
ir_id pass_attention_lse(const ir_graph *g, uint32_t region);
/* The shape and dtype part of [attention.fa3] for the products mm1 = q @ kT and mm2 = p @ v
 * (no views: what the planner can check before the region exists); false with why. */
bool pass_attention_fa3_shape(const ir_graph *g, ir_id mm1, ir_id mm2, char *why, size_t cap);

/* Per-graph index for the region queries below: the use lists and, per
 * region, its nodes (compute nodes and the views placed in it) in id
 * order: region r holds rids[rstart[r] .. rstart[r + 1]). Build it after
 * planning; rebuild after the regions change. */
typedef struct pass_index {
    ir_uses u;
    uint32_t *rstart, *rids;
} pass_index;
bool pass_index_build(const ir_graph *g, pass_index *ix);
void pass_index_free(pass_index *ix);

/* The HBM traffic of one region (spec section 4): the distinct tensors it
 * reads (inputs and values of other regions, through views; constants are
 * immediates) and writes (values used outside the region or returned). */
typedef struct pass_io {
    ir_id *reads, *writes;
    uint32_t nreads, nwrites;
    ir_id *rowreads; /* reduction: reads that cover the whole domain (re-read by extra passes) */
    uint32_t nrowreads;
} pass_io;
void pass_region_io(const ir_graph *g, const pass_index *ix, uint32_t r, pass_io *io);
/* The FLOPs of region r (the IR_OPS table's per-element figure over each
 * compute node's elements, per input element for reductions, 2*M*N*K per
 * matrix product; views and leaves 0): the one definition that the cost
 * model, the reports, codegen's manifest and (through it) the runtime use. */
void pass_region_flops(const ir_graph *g, const pass_index *ix, uint32_t r, ir_poly *flops);
void pass_io_free(pass_io *io);

/* A one-hot sum (passes/pick.c): reduction `red`, sum over one axis `axis` of its input shape S
 * of cast*(where(hit, A, 0)) with hit = eq(iota(e), idx) (either way round, i32 operands, the iota
 * possibly behind reshapes that only insert or remove unit axes) of shape
 * Se broadcast to S, either directly or through reshapes that only insert or remove unit axes, e
 * the axis of Se under `axis`, idx constant along e: at most one term is not the constant zero, so
 * the sum is +0 + its input at element idx along `axis` when 0 <= idx < S[axis], else 0.
 * [reduction.pick] reads it once per row inside a reduction kernel (the innermost axis, hit of
 * shape S); [reduction.pick_gather] rewrites the others into a gather (pass_pick_gather). */
typedef struct pass_pick {
    ir_id red;      /* the sum */
    ir_id idx;      /* the index: evaluate it at the row's element 0 (its value along the row) */
    unsigned axis;  /* the reduced axis of S */
    ir_id where;    /* where(hit, A, 0) behind the sum's casts */
    ir_id eq;       /* the eq */
    unsigned eaxis; /* the axis of the eq's shape Se under `axis` */
} pass_pick;
/* True when reduction id is a one-hot sum over any one axis (the form above); fills *o. */
bool pass_onehot_sum(const ir_graph *g, ir_id id, pass_pick *o);
/* [reduction.pick_gather] (after dce, before split): each one-hot sum that [reduction.pick] does
 * not take, when its casts keep the sign of a zero (no narrowing float cast, no bool), becomes
 * pick(A, idx) {axis, len} (ir_add_pick) of shape S with extent 1 at the axis, under the same
 * casts, reshaped to the sum's shape: an elementwise gather, no reduction. Says each rewrite on
 * c->explain. Off with TX_RED_PICK=0. True when the graph changed. */
bool pass_pick_gather(ir_graph *g, pass_ctx *c);
/* [reduction.pick]: pass_onehot_sum over the innermost axis with hit of shape S (no views). */
bool pass_red_pick(const ir_graph *g, ir_id id, pass_pick *o);
/* The picks of reduction region r (the planner's ir_region.picks): bit k for its k-th reduction
 * in id order when pass_red_pick holds; 0 for other kinds or with TX_RED_PICK=0. */
uint32_t pass_red_picks(const ir_graph *g, const pass_index *ix, uint32_t r);
/* --explain: one line per pick of reduction region r, the rule with its instructions per element
 * with and without it (the model's, at the planner's facts against budget on gpu). */
void pass_red_pick_explain(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                           int64_t budget, FILE *out);
/* The k-th reduction of region r in id order, or IR_NONE. */
ir_id pass_red_pick_node(const ir_graph *g, const pass_index *ix, uint32_t r, unsigned k);
/* Whether the one-hot pick rules ([reduction.pick], [reduction.pick_gather], [simplify.pick_push])
 * are on: true unless the environment sets TX_RED_PICK=0. */
bool pass_red_pick_on(void);
/* The first node of the chain x, input 0 of x, ... that is not a cast (x itself when no cast). */
ir_id pass_behind_casts(const ir_graph *g, ir_id x);

/* Plans region r's tiles against `budget` for `gpu` (the schedule rules
 * that fill it read its SMs and shared memory per SM): fills threads, tile, sram_bytes,
 * spilled_bytes, strategy, passes, stages, rows, red_extent, red_axes, nout.
 * Guarantees sram_bytes <= budget. When the preferred plan did not fit,
 * writes one explanation (rule, numbers, what would change) into why;
 * else why is "". */
void pass_plan_region(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                      const pass_gpu *gpu, char *why, size_t cap);
/* Row-mode reduction schedules (docs/cost-model.md "Schedules"; the rules and each schedule's
 * plan live in passes/schedule.c, codegen/reduction.c follows the region's fields): `threads` per
 * block, `tile[1]` threads (lanes) per row, `rows` rows per block (threads / tile[1]). A thread of
 * a held row takes pass_row_hold elements in aligned groups of v (the row's vector width): group i
 * of lane t is elements [(i lanes + t) v, + v). The most elements a thread holds in registers:
 * PASS_ROW_HOLD, PASS_ROW_HOLD_WARP for rows of one warp or less. */
enum { PASS_ROW_HOLD = 16, PASS_ROW_HOLD_WARP = 32, PASS_ROW_THREADS_MAX = 1024 };
/* Elements per thread of a row of len elements in groups of v over `lanes` threads:
 * ceil(ceil(len / v) / lanes) x v. */
int64_t pass_row_hold(int64_t len, int64_t v, int64_t lanes);
/* The elements one vector access of a row covers: 16 B of the widest row dtype `elem` (at most
 * 8), halved until it divides len (1 for symbolic lengths). */
int64_t pass_row_vec(int64_t len, int elem);
/* Attention tile plan: the on-chip bytes of query tile bq, key/value tile
 * bkv, head dims d (q/k) and dv (v), element size e and ring depth st:
 * bq*d*e + st*bkv*(d+dv)*e + bq*bkv*4. */
int64_t pass_attention_sram(int64_t bq, int64_t bkv, int64_t d, int64_t dv, int e, int st);
/* Matmul tile plan: (bm*bk + nb*bk*bn) * e * st. */
int64_t pass_matmul_sram(int64_t bm, int64_t bn, int64_t bk, int64_t nb, int e, int st);
/* The smallest attention plan that fits: fills bq, bkv, st; false when even
 * the smallest does not fit. */
/* The planner's rule attention.ksplit: attention region r with at most 16 query rows known at
 * compile time (decode), q, k, v and p one 16-bit dtype and head dims <= 128 runs the mma.sync
 * kernel's key split (16-row tiles, each key tile split over 4 warps; codegen/attention.c): the
 * 64-row tiles would do 64 / rows times the useful tensor-core work of a memory-bound stream
 * (the model, pass_model_plan, predicts both). */
bool pass_attention_ksplit(const ir_graph *g, uint32_t r);
/* [attention.gqa_pack] for an attention.ksplit region rg (strategy ksplit): the query heads G one
 * key-split block packs (0: none) when K and V are broadcast over the output's last batch axis
 * (grouped-query attention: size 1 or absent there) of G > 1 query heads and G x T <= 16 (T the
 * query rows, both known at compile time); *t gets T. The block's 16 rows are then the group's G x
 * T query rows and each K/V tile is loaded once per group. TX_ATTN_GQA_PACK=0 in the compiling
 * process's environment turns it off (benchmarks). */
int pass_attention_gqa_pack(const ir_graph *g, const ir_region *rg, int64_t *t);
/* [attention.block_sparse]'s price (passes/attn_live.c): of the tiles of bm query rows x bn keys of
 * an attention region's scores, the share the kernel visits: per block of query rows, the key
 * tiles from the first to the last that may hold a score other than -inf, by codegen's interval
 * rules over the values known at compile time (iota positions, scalar constants; a run-time value
 * such as a length per sequence counts as unknown: its tiles as visited). */
typedef struct pass_attn_live {
    int64_t bm, bn;  /* the tile */
    int64_t tiles;   /* query tiles x key tiles */
    int64_t visited; /* of them visited (frac x tiles, rounded) */
    double frac;     /* visited / tiles (1: every tile) */
    bool sampled;    /* more than 65536 pairs: an even sample of the query tiles was evaluated */
} pass_attn_live;
/* Fills *o for region rg; false (o: zeros, frac 0) when the scores' rows or keys are not known or
 * F has no mask (no where, no input read other than through the product: a plain scale). */
bool pass_attention_live(const ir_graph *g, const ir_region *rg, int64_t bm, int64_t bn,
                         pass_attn_live *o);
/* The interval rule of a positive scale in a score function F (shared by attn_live.c and codegen's
 * iv_eval, so that price and kernel skip the same tiles, and by FA3's scale peel): node id is an
 * f32 x * c, c * x or x / c with c a rank-0 constant, finite and > 0. Returns the operand index of
 * x and sets *m to the multiplier (c, or 1 / c); -1 otherwise. -inf stays -inf, so where(keep, s,
 * -inf) / c is -inf wherever the where is. */
int pass_attn_pos_scale(const ir_graph *g, ir_id id, double *m);
/* [attention.split_kv] with sizes bound at run time: the fewest key-split blocks the known sizes
 * allow (the product of the output's batch dims known at compile time, symbols counted as 1,
 * over a packed GQA group), from which the planner's chunks fill the region's split_slots. */
int64_t pass_attention_split_base(const ir_graph *g, const ir_region *rg);
/* The planner's rule attention.split_kv (split-KV across blocks, flash-decoding) for an
 * attention.ksplit region: the keys cut into `splits` chunks of `chunk` keys (a multiple of the
 * 64-key tile), one block per (batch element, chunk) writing its partial max, sum and unnormalised
 * O (f32) to a scratch buffer of scratch_bytes, then a combine kernel. Its price (passes/model.c):
 * the blocks resident at once (per_sm from the block's shared memory) each stream one 64-key tile
 * of K and V per measured tile time, a demand that meets the HBM rate softly (hbm (1 - e^(-demand
 * / hbm))), a short last wave costs its whole wave, plus for splits > 1 the combine kernel's
 * launch, its dependent DRAM round trips and the scratch written and read once. */
typedef struct pass_attn_split {
    int splits;
    int64_t chunk;         /* keys per chunk */
    int64_t blocks;        /* batch elements x splits */
    int64_t per_sm;        /* blocks resident per SM */
    double bw_GBps;        /* DRAM bandwidth the resident blocks sustain */
    double mem_us;         /* the partials kernel: bytes over bw */
    int64_t scratch_bytes; /* splits x batch x rows x (Dv + 2) x 4 (0 when splits = 1) */
    double comb_us;        /* the combine kernel (0 when splits = 1) */
    double time_us;        /* mem_us + comb_us */
} pass_attn_split;
/* The price of `splits` chunks for nb batch elements of `rows` query rows, sk keys, head dims d
 * and dv, operands of e bytes, `bytes` of HBM traffic of the region. */
void pass_attention_split_price(const pass_gpu *gpu, int64_t nb, int64_t rows, int64_t sk,
                                int64_t d, int64_t dv, int e, double bytes, int splits,
                                pass_attn_split *o);
/* attention.split_kv's choice: the fastest split by that price (1 .. min(64, key tiles / 4)), the
 * smallest within 1% of it; o filled for it. 1 when a size is unknown. */
int pass_attention_split_pick(const pass_gpu *gpu, int64_t nb, int64_t rows, int64_t sk, int64_t d,
                              int64_t dv, int e, double bytes, pass_attn_split *o);
bool pass_attention_fit(int64_t d, int64_t dv, int e, int64_t budget, int64_t *bq, int64_t *bkv,
                        int *st);

/* [attention.simt]: attention region r runs on the CUDA cores (codegen/attention.c's SIMT body)
 * on the GPU: q, k, v and p are not one 16-bit dtype (f32 products keep exact f32, no tf32). */
bool pass_attention_simt(const ir_graph *g, uint32_t r);
/* The SIMT attention block (PASS_ATTN_SG_THREADS threads, 16 x 16: tx = tid % 16 the key / value
 * column lane, ty = tid / 16 the row lane): thread (tx, ty) owns query rows ty tm + i (i < tm) and
 * keys tx + 16 j (j < tn) of a bm x bn score tile (bm = 16 tm, bn = 16 tn), and value columns
 * 16 vw g + vw tx + e (g < nc / vw, e < vw) of O. Shared memory (floats, 16-byte aligned parts):
 * Q [bm][pq] at qoff, K [bn][pq] at koff (pq >= D rounded to 4, pq / 4 odd: a quarter-warp's
 * 128-bit loads of 8 consecutive keys hit distinct banks), V [bn][dvp] at voff (dvp: Dv rounded to
 * 16), P [bm][pp] at poff (tm pp = 16 mod 32: a warp's two rows of P stores on distinct banks). */
enum { PASS_ATTN_SG_THREADS = 256, PASS_ATTN_SG_MAXD = 256, PASS_ATTN_SG_MAXC = 16 };
typedef struct pass_attn_sg {
    int tm, tn, nc, vw;
    int64_t bm, bn, dp, dvp, pq, pp;
    int64_t qoff, koff, voff, poff, bytes;
} pass_attn_sg;
/* The tile [attention.simt] picks from the shape (sq, sk: query and key rows, <= 0 unknown; d,
 * dv: head dims): bm = 16, 32 or 64 rows (the fewest 16-row lanes covering sq, 64 when unknown or
 * larger), bn = 16, 32 or 64 keys (64 for head dims <= 64, else 32: the shared memory of two
 * blocks per SM; fewer for sk <= 32; above head dim 128 a thread's O columns tm nc take 64
 * registers, one block an SM; TX_ATTN_SG_WIDE=0: at most 32 rows there). False when a head dim is
 * unknown or above
 * PASS_ATTN_SG_MAXD (the warp-per-row body runs). */
bool pass_attention_simt_tile(int64_t sq, int64_t sk, int64_t d, int64_t dv, int64_t *bm,
                              int64_t *bn);
/* Whether head dims d, dv take [attention.simt]'s wide blocks (above 128: 64 O registers a
 * thread, one block an SM, priced at their own measured issue share). */
bool pass_attention_simt_wide(int64_t d, int64_t dv);
/* The block's geometry for tile bm x bn (as pass_attention_simt_tile gives) and head dims d, dv;
 * false for a tile it does not build (nc above PASS_ATTN_SG_MAXC or tm nc above 64 O registers). */
bool pass_attention_simt_geom(int64_t bm, int64_t bn, int64_t d, int64_t dv, pass_attn_sg *s);

/* Roofline: FLOP/B where compute time equals memory time for dtype dt. */
double pass_ridge(const pass_gpu *gpu, ir_dtype dt);
/* Roofline time in microseconds (launch overhead not included). */
double pass_roofline_us(const pass_gpu *gpu, ir_dtype dt, double flops, double bytes);

/* The cost of one planned region. Polynomials are exact; the doubles are
 * valid only when `concrete`. */
typedef struct pass_cost {
    ir_poly flops, bytes_read, bytes_written, spilled;
    bool concrete;
    double f, br, bw, sp; /* concrete values of the four polynomials */
    double intensity;     /* f / (br + bw + sp) */
    double ridge;         /* FLOP/B of the region's compute dtype */
    bool compute_bound;   /* intensity >= ridge */
    double roofline_us,
        predicted_us;   /* predicted = the schedule model's time (pass_model) + launch */
    double model_us;    /* the schedule model's time (launch not included) */
    double peak_TFLOPs; /* the compute ceiling used: the dtype's peak, times tc_eff for matmul and
                           attention regions of f16/bf16 */
    ir_dtype dtype;     /* compute dtype: matmul operand dtype, else f32 */
} pass_cost;
void pass_region_cost_ix(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                         pass_cost *out);
/* The same from the use lists alone (scans the graph for r's nodes: O(n)
 * per call; prefer pass_region_cost_ix over many regions). */
void pass_region_cost(const ir_graph *g, const ir_uses *u, uint32_t r, const pass_gpu *gpu,
                      pass_cost *out);

/* ---- schedules (passes/schedule.c; docs/cost-model.md "Schedule space") ---------------
 * The schedule space of each kernel kind, one row per schedule: X(ID, "name", region kind,
 * "parameter names, comma-separated"). A region's chosen schedule is its ir_schedule (id = the
 * row's PASS_SCH_ID). Adding a schedule is one row here, its entry in schedule.c's table (the
 * candidates it offers for a region, the plan fields it fixes, what the model charges; a row
 * without one fails test_schedule) and its emitter in codegen (which reads the id and the
 * parameters, never re-derives them). */
#define PASS_SCHEDULES(X)                                                                       \
    X(NONE, "roofline", IR_RK_COPY, "")                                                         \
    X(POINTWISE_VECTOR, "pointwise.vector", IR_RK_POINTWISE, "threads,groups")                  \
    X(POINTWISE_ROW, "pointwise.row", IR_RK_POINTWISE, "threads,lanes")                         \
    X(REDUCTION_ROW, "reduction.row", IR_RK_REDUCTION, "threads")                               \
    X(REDUCTION_ROW_WIDE, "reduction.row_wide", IR_RK_REDUCTION, "threads")                     \
    X(REDUCTION_ROW_FEW, "reduction.row_few", IR_RK_REDUCTION, "threads")                       \
    X(REDUCTION_CLUSTER_ROWS, "reduction.cluster_rows", IR_RK_REDUCTION, "threads,blocks,grid") \
    X(REDUCTION_CLUSTER_STREAM, "reduction.cluster_stream", IR_RK_REDUCTION, "threads,blocks")  \
    X(REDUCTION_WARP_ROWS, "reduction.warp_rows", IR_RK_REDUCTION, "rows")                      \
    X(REDUCTION_SUBWARP_ROWS, "reduction.subwarp_rows", IR_RK_REDUCTION, "lanes")               \
    X(REDUCTION_COLUMN, "reduction.column", IR_RK_REDUCTION, "cols")                            \
    X(REDUCTION_COLUMN_SPLIT, "reduction.column_split", IR_RK_REDUCTION, "cols,slices,vec")     \
    X(REDUCTION_COLUMN_BLOCKS, "reduction.column_blocks", IR_RK_REDUCTION,                      \
      "cols,slices,splits,vec")                                                                 \
    X(REDUCTION_ROW_SPLIT, "reduction.row_split", IR_RK_REDUCTION, "threads,splits")            \
    X(REDUCTION_ROW_SPLIT2, "reduction.row_split2", IR_RK_REDUCTION, "threads,splits")          \
    X(MATMUL_WGMMA, "matmul.wgmma", IR_RK_MATMUL, "bm,bn,splits,stages")                        \
    X(MATMUL_SKINNY, "matmul.skinny", IR_RK_MATMUL, "bn,splits")                                \
    X(MATMUL_SIMT, "matmul.simt", IR_RK_MATMUL, "bm,bn,bk,splits")                              \
    X(MATMUL_WGMMA_SWAP, "matmul.wgmma_swap", IR_RK_MATMUL, "bn,bm,splits,stages")

typedef enum {
#define X(e, s, k, p) PASS_SCH_##e,
    PASS_SCHEDULES(X)
#undef X
        PASS_SCH_COUNT
} pass_schedule_id;

/* The row's name ("reduction.row"); "?" for an id out of range. */
const char *pass_schedule_name(unsigned id);
/* The id of a schedule name; -1 when unknown. */
int pass_schedule_find(const char *name);
/* The region kind a schedule belongs to. */
ir_region_kind pass_schedule_kind(unsigned id);
/* Parameter i's name of schedule id ("threads") into buf; false past the last. */
bool pass_schedule_param(unsigned id, unsigned i, char *buf, size_t cap);
unsigned pass_schedule_nparams(unsigned id);
/* "reduction.row(threads=256)" (no parentheses without parameters). */
void pass_schedule_str(const ir_schedule *s, char *buf, size_t cap);
/* True when a and b name the same schedule with the same parameters. */
bool pass_schedule_eq(const ir_schedule *a, const ir_schedule *b);

/* The instruction counts of a pointwise region's loop per element of its anchor
 * (pass_model_pw_issue). */
typedef struct pass_pw_issue {
    double flat;     /* pointwise.vector: its operations, loads, stores and addressing */
    double rowconst; /* of which constant along the anchor's innermost dim: the operations and
                        loads of values whose innermost extent is 1 (pointwise.row: once a row) */
    double div;      /* of which the split of each element's offset into its components (the
                        flat loop's, where a load needs them: a broadcast or view read), or, where
                        only vector views need them, of each group's first element over w */
    int nvec;        /* values loaded or stored as one vector per group */
    bool comps;      /* some load needs the element's components */
    bool gcomps;     /* some vector view (passes/vecview.c) needs its group's first element's */
} pass_pw_issue;

/* ---- vector groups through views (passes/vecview.c; codegen/value.c; docs/codegen.md) ---------
 * A pointwise kernel evaluates its anchor in vector groups of w elements (w consecutive elements
 * of a row from a w-aligned start, w dividing the row). A node read at a lane of such a group,
 * through one of the views below, is read at a lane of a group of w consecutive elements of the
 * view's input from a w-aligned start: codegen loads that group with one vector load, and the
 * model (pass_model_pw_issue) prices it so. Shape facts only (codegen's tables of groups may
 * still run out, then it loads elements alone). */
enum { PASS_VEC_CAT_MAX = 8 }; /* most inputs of a concat read by vector groups */
/* Slice n keeps a group whole: w divides its innermost (known) extent and, sliced along the
 * innermost axis, its input's innermost extent and its start. */
bool pass_vec_slice(const ir_graph *g, const ir_node *n, unsigned w);
/* Concat n keeps a group whole: at most PASS_VEC_CAT_MAX inputs, w divides its innermost (known)
 * extent and, joined along the innermost axis, every input's extent along it. */
bool pass_vec_concat(const ir_graph *g, const ir_node *n, unsigned w);
typedef enum pass_vec_bcast_kind {
    PASS_VB_NONE,     /* no vector group: each element indexed alone */
    PASS_VB_TRAILING, /* `to` is s's trailing dims (after its leading 1s), numel(to) a known
                         multiple of w: the group at the start modulo numel(to) */
    PASS_VB_OUTER,    /* broadcast along outer dims only: s's innermost (known) extent, a
                         multiple of w, kept by `to` */
} pass_vec_bcast_kind;
/* How an operand of shape `to`, NumPy-broadcast to shape s (its rank at most s's), keeps a group
 * of s whole. */
pass_vec_bcast_kind pass_vec_bcast(const ir_shape *s, const ir_shape *to, unsigned w);

/* What the schedule rules read of one planned region (pass_schedule_facts). */
/* ---- the sm_90a wgmma GEMM's tile space and model (passes/wgmma.c; docs/cost-model.md
 * "Matrix products") ---------------------------------------------------------------------------
 * What the tile choice of a wgmma kernel depends on: the product's extents (M, K < 0: unknown),
 * the operand orders, the products sharing A (a horizontal region), the values the epilogue
 * stores, the per-block shared memory and the SMs (the persistent grid). */
typedef struct pass_wg_shape {
    int64_t M, N, K;
    bool a_kmajor, b_kmajor; /* operand tiles K-contiguous (else M/N-contiguous) */
    int nmm, nouts;          /* products sharing A (1..4), stored values (>= 1) */
    int64_t smem;            /* dynamic shared memory a block may take */
    int sms;                 /* persistent CTAs */
    /* [matmul.wgmma.stage]: operands whose row pitch is not a multiple of 16 bytes are copied
     * first to a scratch buffer at pass_wg_pitch (a staging kernel each): a_staged, b_staged
     * (every B alike), the staging kernels and the HBM bytes they read and write */
    bool a_staged, b_staged;
    int nstage;
    double stage_bytes;
    /* the alternative the rule weighs staging against (known sizes, nstage > 0): the mma.sync
     * kernel reading the staged operands in place, one scalar load an element of their tiles
     * (sync_loads of them) then its products at tc_eff: sync_us (wg_sync_price) */
    double sync_loads, sync_us;
    bool a_merged; /* A is merged heads (a 3-D map), not a plain 2-D buffer */
    /* [matmul.wgmma.batch]: a batched product (pass_wg_batch): the batch elements (the product
     * of the output's leading dims; -1 unbound), M the rows of one of them; 0: not batched */
    int64_t batch;
    /* why pass_wg_facts refused a batched product (M, N, K then one batch element's): 1 the
     * fill rule (pass_wg_batch_fill_ok), 2 a row pitch TMA cannot read at an unbound size
     * (staging is priced at known sizes only); it keeps mma.sync. 0: not refused for being
     * batched */
    int batch_why;
    /* the epilogue's stores (pass_wg_epi_outs): epi_es, the widest output element (2 or 4
     * bytes) when every output may go through shared memory slots (0: the register stores);
     * epi_loop, the looped form applies; epi_why, why not (a pass_wg_epi_why); epi_coal, the
     * element size of the first output whose rows are not a multiple of 16 bytes when the slots
     * are copied out by the warpgroup's threads instead of TMA (the staged coalesced stores of
     * [matmul.wgmma.epi]; with epi_es 0, the register stores of such rows; 0: every row a
     * multiple of 16 bytes, or not a dense output) */
    int epi_es;
    bool epi_loop;
    int epi_why;
    int epi_coal;
    /* [matmul.wgmma.swap]: the transposed view C^T = B^T A^T of a product (pass_wg_swap_shape:
     * M and N, the operand orders and pitches exchanged), whose tiles take any multiple of 8 up
     * to 256 columns (the product's rows) */
    bool swap;
} pass_wg_shape;
/* One candidate: block tile bm x bn (x 64 k) of one CTA, split-K ranks, ring stages, and what
 * follows. mcast 2: a 2-CTA cluster of two vertically adjacent bm x bn tiles sharing the B tile,
 * each CTA loading half of it by TMA multicast into both (the schedule names it bm = 2 x 128). */
typedef struct pass_wg_tile {
    int bm, bn, splits, stages, consumers, mcast;
    int64_t stage_bytes, red_bytes, smem_bytes; /* one stage, split-K slots, the whole */
    int64_t tiles, nk;                          /* output tiles, 64-deep k steps */
    /* splits 0: stream-K ([matmul.wgmma.streamk]): the tiles x nk k steps cut evenly over `ctas`
     * persistent CTAs; a tile's k steps split over several CTAs meet in an f32 workspace in HBM
     * (ws_bytes: one partial tile per CTA, then a flag per CTA), added by the CTA that owns the
     * tile's first k step (pass_wg_sk_range) before the epilogue */
    int64_t ctas, ws_bytes;
    /* the TMA-store epilogue's slots (pass_wg_slots_fit; in smem_bytes): ring entries per
     * consumer (0: the register stores), slots per entry (the products when looped), bytes */
    int epi_nbuf, epi_slots;
    int64_t epi_bytes;
    /* [matmul.wgmma.swap]: the tile of the swapped kernel: bm runs along the product's N (the B
     * operand is wgmma's A), bn along its M (A is wgmma's B); every field is of the transposed
     * shape (pass_wg_swap_shape) */
    bool swap;
} pass_wg_tile;
/* Why an epilogue keeps a simpler form: none, register stores (an output that is not a dense
 * [M, N] f16/bf16/f32 matrix with rows of a multiple of 16 bytes, more than 8 tensor maps),
 * not looped because an output is f32 ([matmul.wgmma.epi]: the looped epilogue writes 16-bit
 * outputs in place over 16-bit slots), not looped because nothing is computed or an output per
 * product is exceeded, the slots do not fit beside the ring. */
enum pass_wg_epi_why {
    PASS_WG_EPI_OK,
    PASS_WG_EPI_REGS,
    PASS_WG_EPI_F32,
    PASS_WG_EPI_PLAIN,
    PASS_WG_EPI_ROOM
};
/* The epilogue's output conditions (planner and codegen/wgmma.c): outs[0..nouts) of product mm
 * (nh products): true when every output may be stored through shared memory slots (*es: the
 * widest element): every output a dense [.., M, N] f16/bf16/f32 value of mm's shape at a known
 * N. Through TMA (*coal 0) when every row is a multiple of 16 bytes and the tensor maps (A, the
 * B's, one per output) are at most 8; else by the staged coalesced stores (*coal: the element
 * size of the first output whose rows are not a multiple of 16 bytes; at most 8 outputs, no
 * maps), unless TX_WG_EPI_COAL=0 (a benchmark knob: such outputs keep the register stores;
 * *coal is set all the same, the model prices those stores by it).
 * *loop when the looped form applies (something computed, every output 16-bit, at most one
 * output per product); *why names the first condition that failed. */
bool pass_wg_epi_outs(const ir_graph *g, const ir_node *mm, const ir_id *outs, unsigned nouts,
                      unsigned nh, int *es, bool *loop, int *why, int *coal);
/* The store slots of the TMA-store epilogue beside a ring of `stages` stages of stage_bytes
 * (fixed: the rest of the layout) within smem: cols = min(bn, 128 / es) columns a unit,
 * slot_bytes = 64 x cols x es rounded up to 1024, `slots` per ring entry, two entries per
 * consumer or one, whichever leaves the deeper ring (at most `stages`; two on a tie): fills *o;
 * false when fewer than two stages would remain. */
typedef struct pass_wg_slots {
    int cols, nbuf, slots, stages;
    int64_t slot_bytes, bytes;
} pass_wg_slots;
bool pass_wg_slots_fit(int64_t fixed, int64_t stage_bytes, int stages, int consumers, int bn,
                       int es, int slots, int64_t smem, pass_wg_slots *o);
enum { PASS_WG_MAX_STAGES = 16, PASS_WG_MAX_SPLITS = 4, PASS_WG_SPACE = 28 };
/* Fills t for tile bm x bn with `splits` split-K ranks when valid for s: bm = 64 with one
 * consumer exactly when M <= 64 is known (else 128, or 256: two 128-row CTAs of a cluster
 * sharing B by multicast, for one split, M unknown or above 128, bn 256 or 128); bn 256, 128, 64
 * (32 too for a K-contiguous B), all products' columns within 256 (one stored value; 192 for
 * several, 128 for one product with several); splits 1, 2 or 4 (2 for several products) when M and
 * K are known, tiles x splits
 * <= SMs, >= 4 k steps per rank and nmm x bn / 2 accumulators a thread times splits <= 128 (rank
 * 0's sum spills beyond); splits 0: stream-K (M, N, K known, bm 64 or 128, the tiles not a
 * whole number of waves and below 4 of them, >= 4 k steps per CTA on min(SMs, units / 4) CTAs);
 * stages: as many as fit (at most 16, at least 2). */
bool pass_wg_tile_make(const pass_wg_shape *s, int bm, int bn, int splits, pass_wg_tile *t);
/* Stream-K arithmetic (codegen/wgmma.c emits the same): of u units (tiles x nk k steps) over g
 * CTAs, CTA c takes units [c u / g, (c + 1) u / g) (pass_wg_sk_first(c) .. first(c + 1)); unit
 * x belongs to CTA pass_wg_sk_owner = ((x + 1) g - 1) / u. */
int64_t pass_wg_sk_first(int64_t c, int64_t u, int64_t g);
int64_t pass_wg_sk_owner(int64_t x, int64_t u, int64_t g);
/* Every valid tile of s (bn descending, then splits ascending); the count (at most cap). */
unsigned pass_wg_space(const pass_wg_shape *s, pass_wg_tile *out, unsigned cap);
/* The model's time of tile t (launch not included) and its parts. */
typedef struct pass_wg_time {
    double step_us;  /* one 64-deep k step of a CTA (all products) */
    double epi_us;   /* one tile's epilogue */
    double red_us;   /* split-K: the ranks' partial sums into rank 0, per tile; stream-K: the
                        partial tile written and the partials the first CTA of a tile adds */
    double fill_us;  /* the pipeline's first fill and the kernel's prologue */
    double waves;    /* (tiles x splits) / SMs */
    int64_t rounds;  /* tiles the busiest CTA runs: ceil(tiles x splits / CTAs) */
    double comp_us;  /* fill + rounds x (k steps per rank x step + epilogue + reduction) */
    double mem_us;   /* the region's HBM bytes at the bandwidth its CTAs sustain */
    double stage_us; /* the staging kernels (s->nstage): their bytes at the copy rate, launches */
    double time_us;  /* max(comp, mem) + stage */
} pass_wg_time;
double pass_wg_model(const pass_wg_shape *s, const pass_wg_tile *t, const pass_gpu *gpu,
                     double hbm_bytes, pass_wg_time *out);
/* The model's fastest tile of s on gpu (ties: the earlier in pass_wg_space's order); false
 * when none is valid. hbm_bytes < 0: the operands and one bf16 output. */
bool pass_wg_pick(const pass_wg_shape *s, const pass_gpu *gpu, double hbm_bytes, pass_wg_tile *t);
/* [matmul.wgmma.swap] the swapped-operand kernel of a short M: C^T = B^T A^T, the weight tile
 * wgmma's A operand (bm = 128 of the product's N), the tile of A's rows its B operand (bn = any
 * multiple of 8 up to 256 of M, so M = 300 computes 3 x 104 = 312 rows instead of 384), the
 * accumulators transposed in the epilogue (register stores). pass_wg_swap_ok: the shape may take
 * it (one plain 2-D product, M known and at most PASS_WG_SWAP_M, N, K known, A K-contiguous; not
 * batched, not merged heads; TX_WG_SWAP=0 never, 1 always where valid: benchmark knobs).
 * pass_wg_swap_shape: the transposed shape the tiles and the model see. pass_wg_swap_make: the
 * tile of bn output columns (wgmma's M: 128) by bm output rows (wgmma's N) with `splits` split-K
 * ranks; t's fields are the transposed shape's (t->bm = bn, t->bn = bm). pass_wg_swap_space: bm
 * = M cut into 1 .. 4 more pieces than ceil(M / 256), rounded up to 8, at 1, 2, 4 splits.
 * pass_wg_swap_pick: the model's fastest of them (pass_wg_model prices a swap tile on the
 * transposed shape). */
#define PASS_WG_SWAP_M 512
bool pass_wg_swap_ok(const pass_wg_shape *s);
void pass_wg_swap_shape(const pass_wg_shape *s, pass_wg_shape *o);
bool pass_wg_swap_make(const pass_wg_shape *s, int bn, int bm, int splits, pass_wg_tile *t);
unsigned pass_wg_swap_space(const pass_wg_shape *s, pass_wg_tile *out, unsigned cap);
bool pass_wg_swap_pick(const pass_wg_shape *s, const pass_gpu *gpu, double hbm_bytes,
                       pass_wg_tile *t);
/* Calibration: sets gpu->wg_eff so that the model's time of a bf16 4096^3 product on its own
 * tile is the measured rate `tflops` (txc bench --calibrate's GEMM); unchanged when the
 * measurement is outside what the model can express (or gpu has no wgmma kernel). */
void pass_wg_calibrate(pass_gpu *gpu, double tflops);
/* The operand conditions of the sm_90a wgmma kernel, shared by the planner (pass_wg_facts) and
 * codegen/wgmma.c. pass_wg_opnd follows operand id of region `region` through in-region
 * same-dtype casts, permutes of the last two axes and reshapes that only insert or drop unit
 * leading dims (x[:, None]) to the HBM value it reads: *base gets it,
 * *kmajor whether K is its contiguous axis (k_last: K is the operand's last axis, true for A,
 * false for B). False unless that value is a plain buffer of rank >= 2 and dtype dt whose inner
 * extent is known (and positive), it and its rows (pass_wg_rows) below 2^31 (pass_wg_fold says
 * whether leading dims fold into M), or a column slice of one (pass_wg_opnd_buf), read in place
 * by a tensor map at the buffer's pitch, or an in-region reshape of such a buffer written outside
 * the region (the same bytes as a buffer of the reshape's shape; its rows 16-byte multiples). TMA
 * reads rows whose pitch is a multiple of 16 bytes: an operand whose inner extent is not
 * (pass_wg_pitch differs from it) is read from a staged copy. */
bool pass_wg_opnd(const ir_graph *g, uint32_t region, ir_id id, ir_dtype dt, bool k_last,
                  ir_id *base, bool *kmajor);
/* The buffer an operand base of pass_wg_opnd reads: base itself, or, for a base that is a slice
 * of the last axis of a 2-D value of known inner extent (a column slice, which pass_wg_opnd takes
 * when that value is a plain buffer and the slice's start and the rows are at multiples of 16
 * bytes), that value, with *pitch its row stride and *off the slice's start in elements (both 0
 * for base itself); for a base that is a reshape of a plain buffer, that buffer, *pitch the
 * reshape's inner extent and *off 0. */
ir_id pass_wg_opnd_buf(const ir_graph *g, ir_id base, int64_t *pitch, int64_t *off);
/* The rows of a shape whose last axis is the columns: the product of every other dim (1 for
 * rank 1); -1 when one is symbolic, 2^31 when the product reaches it. */
int64_t pass_wg_rows(const ir_shape *s);
/* Whether the leading dims of product mm (A's base abase, K-contiguous when ak, and one B's base
 * bbase, both from pass_wg_opnd) fold into the wgmma kernel's M: rank 2 with 2-D bases, or A's
 * base of mm's rank whose leading dims are mm's and K-contiguous (rows m of batch b are row
 * b x M + m of one matrix: M = pass_wg_rows of mm) with a B base of rank 2 or whose leading dims
 * are all 1 (one matrix broadcast over the batch). The output's leading dims fold alike. abase
 * IR_NONE: A is merged heads (pass_wg_opnd_merged checked it), only B is checked. */
bool pass_wg_fold(const ir_graph *g, const ir_node *mm, ir_id abase, bool ak, ir_id bbase);
/* [matmul.wgmma.batch] A batched product mm (rank >= 3; its leading dims do not fold into M):
 * its operands abase and bbase as it reads them (mm's inputs; their bases from pass_wg_opnd
 * hold the same leading dims but for unit ones) each of rank 2 .. mm's rank, their leading
 * dims right-aligned with mm's, each mm's or 1 (broadcast), mm's rows below 2^31. The kernel
 * walks batch x tiles; every map has a third dim, the operand's own batch elements, and a tile
 * of batch element b reads the operand at pass_wg_batch_coord (0 on broadcast dims), so TMA's
 * bounds clip ragged M, N, K per batch element (no tile reads into the next one). */
bool pass_wg_batch(const ir_graph *g, const ir_node *mm, ir_id abase, ir_id bbase);
/* The batch elements of a product's shape: the product of every dim but the last two (1 for
 * rank 2); -1 when one is symbolic, 2^31 when the product reaches it. */
int64_t pass_wg_nbatch(const ir_shape *s);
/* The batch coordinate of operand shape op (rank 2 .. mm's, leading dims right-aligned with
 * mm's, each mm's or 1) for flat batch element b of product shape mm (known dims): b's index
 * over mm's leading dims, 0 where op has 1 or lacks the dim, flattened over op's own leading
 * dims (row-major). The kernel computes the same (codegen/wgmma.c wg_batch_coord). */
int64_t pass_wg_batch_coord(const ir_shape *mm, const ir_shape *op, int64_t b);
/* [matmul.wgmma.batch]: the per-batch product M x N x K fills at least PASS_WG_BATCH_FILL of
 * the smallest wgmma tile (64 x 64 x 64: min(M, 64) x min(N, 64) x min(K, 64)); below, the
 * batched product keeps mma.sync (its 16 x 8 x 16 fragments waste less on tiny products). True
 * when a size is unbound, or when TX_WG_BATCH=1 (a benchmark knob; TX_WG_BATCH=0 keeps every
 * batched product on mma.sync). An estimate, not fitted to a measurement. */
#define PASS_WG_BATCH_FILL 0.125
/* Elements per SM per clock that a latency-bound one-element-a-thread operand load sustains in
 * the mma.sync kernel (a view without a stride form, [matmul.stage_view]; rows not 16-byte
 * aligned, [matmul.wgmma.stage]'s alternative). Fitted to vit_patch_embed on the H200 (604 us
 * for 57.8 M loaded elements less the product's 52 us, bench/heldout/FINDINGS.md item 2); it
 * gives prime_bmm_f16 (B 7, 509 x 257 x 1021, 14.7 M scalar loads) 147 us, measured 113. */
#define PASS_ELEM_LOAD_EPC 0.40
bool pass_wg_batch_fill_ok(int64_t M, int64_t N, int64_t K);
/* A as merged heads: same-dtype casts, then a reshape [lead..., d0, d1, d2] -> [lead..., d0,
 * d1 * d2] of an in-region permute of the last three axes keeping the last (or of the base
 * itself) of an HBM buffer of dtype dt whose contiguous extent is a known multiple of 64; with
 * leading (batch) dims, the rows d0 a known multiple of 128 (no 128-row tile straddles two batch
 * elements); fills *base and perm (view axis nb + i reads base axis nb + perm[i], nb = the
 * leading dims). region IR_NONE: asked before planning, without the region conditions. */
bool pass_wg_opnd_merged(const ir_graph *g, uint32_t region, ir_id id, ir_dtype dt, ir_id *base,
                         int perm[3]);
/* The row pitch (elements) the wgmma kernel's tensor map reads a 2-D operand of inner extent
 * `inner` (> 0) and element size `es` at: inner itself when inner x es is a multiple of 16
 * bytes, else inner rounded up to a multiple of 128 bytes (the pitch of the staged copy that
 * [matmul.wgmma.stage] writes; 128 bytes: whole L2 lines per 128-byte box row). */
int64_t pass_wg_pitch(int64_t inner, int es);
/* The shape of matmul region r of the planned graph g as the wgmma kernel would see it (the
 * graph's view of codegen/wgmma.c's conditions: f16/bf16 products sharing A, operands plain HBM
 * buffers through casts and transposes with a known inner extent, 2-D or with leading dims that
 * fold into M (pass_wg_fold: M is then their product), or merged heads as A); false when it does
 * not qualify or gpu has no such kernel (wg_eff 0). */
/* [matmul.wgmma] not taken: for matmul region r on a gpu with the wgmma kernel (wg_eff > 0)
 * whose facts pass_wg_facts refused, appends to why the condition that failed (the first
 * operand pass_wg_opnd refuses, or the dtype, or the products' shapes); false (why unchanged)
 * for other regions or gpus. */
bool pass_wg_why_not(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                     char *why, size_t cap);
bool pass_wg_facts(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                   int64_t budget, pass_wg_shape *s);

/* ---- the skinny GEMM of odd-pitch operands (passes/skinny.c; codegen/skinny.c) ----------------
 * [matmul.skinny]: a product of at most 64 rows (M known) whose wgmma form would stage an operand
 * (a row pitch that is not a multiple of 16 bytes, [matmul.wgmma.stage]) reads every operand in
 * place instead: 256 threads per CTA, an M x bn output tile (M rounded up to 16: `mp`) of
 * mma.sync m16n8k16 fragments built from shared memory, operand tiles of 64 k copied by 16-byte
 * cp.async at any 2-byte row alignment (a row lands as far into its shared row as its first
 * element sits in its 16-byte chunk), a ring of `stages`, and split-K over a cluster of
 * `splits` CTAs (1, 2, 4, 8) whose partial tiles meet in distributed shared memory, each rank
 * running the epilogue of 1/splits of the tile. */
typedef struct pass_sk_tile {
    int bn, splits, stages, mp;
    int64_t a_bytes, b_bytes;        /* one stage's A tile and one B tile ([rows][cols + 8]) */
    int64_t stage_bytes, smem_bytes; /* A + every B; the ring or the partial tiles, the larger */
    int64_t tiles, nk, kpr;          /* N tiles, 64-deep k steps, k steps per rank (at most) */
} pass_sk_tile;
/* Rows x columns (16-bit elements, before the 8-element pad) of one operand tile in shared
 * memory: K-contiguous operands [other][64], else [64][other]. */
void pass_sk_opnd_tile(bool kmajor, int64_t other, int64_t *rows, int64_t *cols);
/* True when s (pass_wg_facts) may take the skinny kernel: known M in [1, 64], N and K, plain 2-D
 * operands, at least one of them staged by the wgmma form. */
bool pass_sk_ok(const pass_wg_shape *s);
/* Fills t for bn (64 or 128; 128 only where N > 64) and splits (1, 2, 4, 8; at least 2 k
 * steps per rank, the ranks' CTAs at most 2 per SM once they are more than one); false when not. */
bool pass_sk_tile_make(const pass_wg_shape *s, int bn, int splits, pass_sk_tile *t);
/* Every valid tile of s (bn descending, then splits ascending); the count (at most cap). */
unsigned pass_sk_space(const pass_wg_shape *s, pass_sk_tile *out, unsigned cap);
typedef struct pass_sk_time {
    int64_t ctas, per_sm;   /* tiles x splits; CTAs resident per SM (shared memory, threads) */
    double cta_GBps;        /* bytes per us one CTA's ring streams */
    double mem_us, comp_us; /* the HBM bytes at the rate the CTAs reach; the busiest CTA's mma */
    double epi_us, fill_us; /* the epilogue of a rank's share of a tile; prologue + cluster */
    double time_us;         /* fill + max(mem, comp) + epilogue */
} pass_sk_time;
double pass_sk_model(const pass_wg_shape *s, const pass_sk_tile *t, const pass_gpu *gpu,
                     double hbm_bytes, pass_sk_time *o);
/* The model's fastest skinny tile of s; false when none. */
bool pass_sk_pick(const pass_wg_shape *s, const pass_gpu *gpu, double hbm_bytes, pass_sk_tile *t);

/* ---- the SIMT f32 product kernel (passes/simt.c; codegen/matmul.c) ---- */
typedef struct pass_simt_shape {
    int64_t M, N, K, batch; /* -1: unbound */
    unsigned nmm;           /* products of the region (a horizontal region shares A) */
    bool small_k;           /* f16/bf16 operands of the product's dtype: [matmul.simt.small_k] */
    bool b_ncols;           /* B is a plain buffer whose N axis is contiguous (w[K, N] as stored) */
    bool w_rows; /* [matmul.simt.gemv_rows]: f16/bf16 operands, A and B = w^T K-contiguous with
                    16-byte aligned rows (w [N, K] as nn.Linear stores it), K a multiple of 8 */
} pass_simt_shape;
/* [matmul.simt.gemv]: a product of at most PASS_SIMT_GEMV_M bound rows (one product, B
 * N-contiguous) may take the GEMV tiles of the SIMT schedule, bm = the power of two at or above
 * M (1, 2, 4, 8, 16; standard tiles have bm >= 32): blocks of PASS_SIMT_GEMV_WARPS warps over
 * PASS_SIMT_GEMV_BN columns (4 a lane, one 16-byte load of a row of w where aligned), each warp
 * over its own k chunk (chunk = cluster rank x warps + warp of warps x splits equal ranges of
 * bk-deep steps), every thread M x 4 accumulators; the chunks' partials are added in chunk
 * order (exact f32 adds, the host sums the same chunks in the same order) before the epilogue. */
#define PASS_SIMT_GEMV_M     16
#define PASS_SIMT_GEMV_BN    128
#define PASS_SIMT_GEMV_WARPS 8
/* True when bm names a GEMV tile of matmul.simt (bm <= PASS_SIMT_GEMV_M). */
bool pass_simt_is_gemv(int64_t bm);
/* [matmul.simt.gemv_rows]: the GEMV tile of a 16-bit product whose B is w^T, w [N, K]
 * K-contiguous (pass_simt_shape.w_rows): matmul.simt(bm, bn, bk, 1) with bm the power of two at
 * or above M, bn = PASS_SIMT_GEMV_WARPS x R rows of w a block (each warp R rows: 1, 2, 4), bk =
 * 8 x U the elements of w a lane loads a row a k step (U 16-byte loads: 1, 2, 4; a warp's step
 * covers 256 U of K); lane l reads the 8-element pieces l, l + 32, ... of each of its warp's rows
 * (and of x's rows), M x R f32 accumulators in k order, the next step's R x U loads issued
 * before a step's FMAs, a warp butterfly at the end; no shared memory. At most
 * PASS_SIMT_ROWS_ACC accumulators (M x R) and PASS_SIMT_ROWS_LOADS loads in flight (R x U). */
#define PASS_SIMT_ROWS_ACC   32
#define PASS_SIMT_ROWS_LOADS 8
/* True when (bm, bn) names a [matmul.simt.gemv_rows] tile (a GEMV bm, bn below
 * PASS_SIMT_GEMV_BN). */
bool pass_simt_is_gemv_rows(int64_t bm, int64_t bn);
/* Fills s for [matmul.simt.gemv_rows] from the wgmma facts w of region r of g (a rank-2 f16/bf16
 * product of at most PASS_SIMT_GEMV_M bound rows, one product, both operands K-contiguous and
 * read in place, K a multiple of 8); false (s zeroed) otherwise. */
bool pass_simt_rows_facts(const ir_graph *g, uint32_t r, const pass_wg_shape *w,
                          pass_simt_shape *s);
/* [matmul.simt.small_k]: a product of f16/bf16 operands whose K is bound and at most this (less
 * than one 16-deep tensor-core instruction) runs on the SIMT kernel, not on tensor cores: there
 * it would be one 64-deep wgmma k step at most a quarter full, on staged copies of operands whose
 * 2K-byte rows TMA cannot read, for a product bound by storing its output (2 K FLOPs an
 * output). */
#define PASS_SIMT_SMALL_K 15
/* True when region r is a matrix product the SIMT kernel computes on the GPU (its operands are
 * not both the product's f16/bf16 dtype, or they are and K is small); fills s. */
bool pass_simt_facts(const ir_graph *g, const pass_index *ix, uint32_t r, pass_simt_shape *s);
/* The kernel's geometry of a bm x bn x bk tile (codegen's cg_sg_geom_of builds on it). */
typedef struct pass_simt_geom {
    int tm, tn;         /* outputs per thread along m and n */
    unsigned threads;   /* (bm / tm) x (bn / tn) */
    int64_t smem_bytes; /* two buffers of A [bk][bm + 4] and each B [bk][bn + 4] floats */
} pass_simt_geom;
pass_simt_geom pass_simt_geom_of(int64_t bm, int64_t bn, int64_t bk, unsigned nmm);
/* Split-K ranks of the SIMT kernel ([matmul.simt.splitk]): 1 (none), 2, 4 or 8 blocks of one
 * cluster share an output tile, rank r over k steps [r nk / S, (r + 1) nk / S); their partial
 * tiles meet in shared memory and are added in rank order (exact f32 adds, deterministic). */
#define PASS_SIMT_MAX_SPLITS 8
/* True when `splits` ranks are valid for s at a bm x bn x bk tile on gpu: 1 always; more only
 * for one product at bound sizes, within the GPU's cluster size, with at least 4 k steps a
 * rank. */
bool pass_simt_split_ok(const pass_simt_shape *s, const pass_gpu *gpu, int64_t bm, int64_t bn,
                        int64_t bk, int splits);
/* The registers a thread of the SIMT kernel holds (the cap codegen asks ptxas for): 128 at
 * tm = 8 outputs a side, 168 with split-K's reduction beside them (one block of 256 threads an
 * SM), 64 at tm = 4. */
int pass_simt_regs(int tm, int splits);
/* The shared bytes of a split-K rank's partial tile (bm x bn f32; 0 when splits is 1); of a
 * GEMV tile's warps' partials (PASS_SIMT_GEMV_WARPS x bm x bn f32, any splits). */
int64_t pass_simt_part_bytes(int64_t bm, int64_t bn, int splits);
/* The candidates the kernel builds for s (bm, bn, bk, splits), at most cap; the count. With gpu
 * NULL, splits 1 only. */
unsigned pass_simt_space(const pass_simt_shape *s, const pass_gpu *gpu, int64_t (*out)[4],
                         unsigned cap);
/* The model's time of one candidate: blocks per SM, waves, the FMA rate at that occupancy and a
 * floor of a k step each; split-K's partial tiles through shared memory and a cluster barrier;
 * the HBM bytes' time; a launch. 0 when a size is unbound. */
typedef struct pass_simt_time {
    int64_t bm, bn, bk, tiles, per_sm; /* tiles: output tiles (blocks = tiles x splits) */
    int64_t nk, K;                     /* k steps of the longest rank; the shape's K */
    int splits;
    bool small_k; /* the shape's [matmul.simt.small_k] */
    unsigned threads;
    double waves, comp_us, red_us, mem_us, time_us;
    bool step_bound; /* the k steps' latency floor, not the FMA rate, bounds a block */
    int64_t M;       /* the shape's rows ([matmul.simt.gemv]) */
    double gbps;     /* GEMV tiles: the HBM rate the blocks' loads in flight reach */
} pass_simt_time;
double pass_simt_model(const pass_simt_shape *s, const pass_gpu *gpu, double hbm_bytes, int64_t bm,
                       int64_t bn, int64_t bk, int splits, pass_simt_time *o);
/* The model's fastest tile of s; false when none (unbound sizes, no GPU). */
bool pass_simt_pick(const pass_simt_shape *s, const pass_gpu *gpu, double hbm_bytes,
                    pass_simt_time *best);

typedef struct pass_sched_facts {
    uint8_t kind;       /* ir_region_kind */
    uint8_t strategy;   /* the region's ir_red_strategy (reductions) */
    bool concrete;      /* every size the schedules depend on is bound */
    bool column;        /* reduction with the innermost axis kept (column / middle axes) */
    bool strided;       /* row reduction whose reduced axes are not one trailing run (codegen
                           gathers each row element by element: scalar loads) */
    int64_t n;          /* elements of the iteration space (pointwise anchor, reduction domain) */
    int64_t rows, rext; /* reduction: kept rows, elements per reduced row (-1: symbolic) */
    int64_t kin;        /* column reduction: extent of the innermost (kept, contiguous) axis */
    int stages, nred;   /* reduction: dependent stages, reductions */
    int passes;         /* reduction: HBM passes over the row inputs of the strategy's plan */
    int held;           /* reduction: row inputs held on chip (onchip with an epilogue) */
    int elem;           /* widest stored dtype of the row inputs / big pointwise reads (bytes) */
    int velem;          /* reduction: widest dtype of the row-shaped values read or written (the
                           vector groups of row mode) */
    int nbig;           /* row inputs (reduction) / reads of the iteration size (pointwise) */
    bool dom_writes;    /* reduction: the region writes a value of the domain's shape */
    bool dom_epi;       /* reduction: ... and one of them depends on a reduction (an epilogue;
                           without one, every such value is a side output stored as it is read) */
    bool online_exp;    /* reduction: two stages, each second-stage reduction an exp sum of a first
                           stage max (softmax, logsumexp; a running max and rescaled sum) */
    int wbytes;         /* reduction: bytes written per domain element (domain-shaped values) */
    double instr;       /* pointwise: issued instructions per element (pass_model_instr; 0: none) */
    pass_pw_issue pw;   /* pointwise: the parts of instr (pass_model_pw_issue), for pointwise.row;
                           rows and rext are then the anchor's rows and innermost extent, velem
                           the widest dtype of every value it reads or writes (codegen's vector) */
    int64_t scratch;    /* reduction: block scratch bytes (0: one warp per row) */
    int64_t row_bytes;  /* reduction: on-chip bytes of one held row (0 unless held on chip) */
    int64_t rpb;        /* reduction: held rows per block of the strategy's plan */
    int64_t sram_base;  /* reduction: the strategy's on-chip bytes before the schedule's own */
    int64_t cluster_blocks, cluster_threads; /* reduction: the strategy holds the row across a
                                                cluster of this many blocks (0: not) */
    int64_t hold_blocks, hold_threads;       /* reduction planned online/multipass: the cluster that
                                                would hold its row in registers (schedule
                                                reduction.cluster_rows, one HBM read; 0: none) */
    int64_t hold_sram;                       /* its on-chip bytes */
    int64_t budget;                          /* per-block on-chip budget */
    const pass_gpu *gpu;
    bool wg;           /* matmul: the region qualifies for the sm_90a wgmma kernel, shape wgs */
    pass_wg_shape wgs; /* (pass_wg_facts: the graph's view of codegen/wgmma.c's conditions) */
    double wg_bytes;   /* matmul: the region's HBM bytes (operands, epilogue inputs, outputs) */
    bool simt;         /* matmul: the SIMT f32 kernel computes it on the GPU, shape sgs */
    pass_simt_shape sgs;
} pass_sched_facts;
/* The facts of region r (planned: its strategy is read) against budget on gpu. */
void pass_schedule_facts(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                         int64_t budget, pass_sched_facts *f);
/* The schedule the planner's rules choose for a region with facts f (docs/cost-model.md
 * "Schedules": the rule names). */
void pass_schedule_rule(const pass_sched_facts *f, ir_schedule *s);
/* Why the rule took schedule s for facts f without weighing the model's ranking of the space,
 * with its numbers, into buf (cap bytes): true for [reduction.column_blocks] (the column split's
 * narrowest tile leaves too few blocks); false, buf empty, for the rules that follow the model. */
bool pass_schedule_rule_why(const pass_sched_facts *f, const ir_schedule *s, char *buf, size_t cap);
/* Instructions per element the model charges a region with facts f under schedule s: f->instr,
 * but for pointwise.row (once a row what is constant along it, no offset split, the head and
 * tail of each row, whole lane groups; docs/cost-model.md "Instruction issue (pointwise)"). */
double pass_schedule_instr(const pass_sched_facts *f, const ir_schedule *s);
/* Every schedule of f's kind valid for the region, in table then parameter order; at most cap
 * written, the count returned (0: the kind has no space or the sizes are unbound). */
unsigned pass_schedule_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap);
/* True when s is in the region's space (pass_schedule_space). */
bool pass_schedule_valid(const pass_sched_facts *f, const ir_schedule *s);
/* Writes the plan fields schedule s fixes (threads, rows, tile[1..2], sram_bytes, splits) and s
 * itself into rg. s must be valid for f. */
void pass_schedule_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s);

/* Plans region r like pass_plan_region, but runs schedule `want` when it is valid for the
 * region (then true); else the rule's choice (false, with why naming the refusal). */
bool pass_plan_region_with(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                           const pass_gpu *gpu, const ir_schedule *want, char *why, size_t cap);

/* A schedule with the model's time for it (launch included). */
typedef struct pass_candidate {
    ir_schedule s;
    double predicted_us;
} pass_candidate;
enum { PASS_MAX_CANDIDATES = 64 };
/* The schedule space of region r of the planned graph g ranked by the model, fastest first
 * (ties in table order); at most cap written, the count returned. 0 for kinds without a space
 * and unbound sizes. */
unsigned pass_schedule_candidates(const ir_graph *g, const pass_index *ix, uint32_t r,
                                  const pass_gpu *gpu, int64_t budget, pass_candidate *out,
                                  unsigned cap);

/* ---- the tuning cache as the planner sees it (the driver reads and writes the file) --------
 * One measured choice per kernel: the region's key (pass_region_key), the GPU it was measured
 * on, the schedule that won and what every candidate measured. */
typedef struct pass_tune_cand {
    ir_schedule s;
    double predicted_us, measured_us; /* measured < 0: not measured (failed or skipped) */
} pass_tune_cand;
typedef struct pass_tune_entry {
    char key[24];    /* pass_region_key */
    char gpu[32];    /* --gpu name of the cost model ("h200") */
    char device[96]; /* the device's name as its driver reports it */
    int driver;      /* CUDA driver version */
    ir_schedule best;
    pass_tune_cand cand[8];
    unsigned ncand;
} pass_tune_entry;
typedef struct pass_tune {
    pass_tune_entry *e;
    unsigned n, cap;
    const char *device; /* the device compiles run on (NULL: unknown, entries of any device) */
    int driver;         /* its driver version (0: unknown) */
} pass_tune;
/* The entry for key on GPU gpu_name, or NULL. Entries measured on another device or driver than
 * t->device / t->driver (when known) are stale and not returned (*stale set when one was). */
const pass_tune_entry *pass_tune_find(const pass_tune *t, const char *key, const char *gpu_name,
                                      bool *stale);
/* A stable key of region r at its bound sizes: FNV-1a over its nodes' ops, dtypes, shapes,
 * attributes and wiring (external values by dtype and shape), its kind and strategy; 16 hex
 * digits. Names, node ids and other regions do not enter it. */
void pass_region_key(const ir_graph *g, const pass_index *ix, uint32_t r, char key[24]);

/* The schedule model of one planned region (passes/model.c, docs/cost-model.md "Model"):
 * for pointwise and reduction regions, the block the schedule launches, its residency, the
 * bytes in flight per SM and the DRAM bandwidth they sustain by Little's law; others (and
 * unknown sizes) keep the roofline (schedule "roofline"). */
typedef struct pass_model {
    const char *schedule; /* the rule's name: pointwise.vector, reduction.row, reduction.warp_rows,
                             reduction.column, reduction.column_split, reduction.column_blocks,
                             attention.fa3, attention.ksplit, roofline */
    bool concrete;
    int64_t grid;              /* blocks launched */
    unsigned threads;          /* per block */
    int regs;                  /* column schedules: estimated registers per thread (schedule.c
                                  col_regs; 0: registers not counted) */
    int res_regs;              /* a column split the column model does not price: registers
                                  per thread for the general model's residency (schedule.c
                                  split_regs; 0: not counted) */
    int64_t per_sm;            /* blocks resident per SM (threads, shared memory, 32 at most) */
    double active_sms;         /* SMs the grid keeps busy */
    double occupancy;          /* resident threads per busy SM / 2048 */
    double thread_bytes;       /* bytes one thread has in flight */
    double inflight;           /* bytes in flight per busy SM */
    double waves;              /* grid / (SMs x per_sm) */
    double bw_GBps;            /* DRAM bandwidth the schedule sustains (<= hbm_GBps) */
    unsigned kernels;          /* kernels the schedule launches (2: row_split2) */
    double extra_us;           /* the kernels after the first: launch and latency; the combine
                                  of a split row's or column tile's last block (ticket) */
    bool ticket;               /* reduction.row_split: the last block of a row combines the partials
                                  (COMBINE_ROUNDS dependent DRAM round trips after the stream);
                                  reduction.column_blocks: each column tile's last block (one
                                  round trip, the ticket, then comb_bytes) */
    double comb_bytes;         /* reduction.column_blocks: the bytes of partials one tile's last
                                  block reads (at a busy SM's share of the HBM bandwidth) */
    bool unpipelined;          /* its loop keeps one scalar load in flight per thread at the DRAM's
                                  loaded latency (passes/model.c DRAM_LATENCY_US), not the effective
                                  latency of a pipelined stream (mem_latency_us) */
    double instr;              /* pointwise: issued instructions per element (0: none) */
    double issue_us;           /* elements x instr over the GPU's issue rate */
    pass_pw_issue pw;          /* pointwise.row: the flat loop's counts it is weighed against */
    int64_t pw_rows, pw_rext;  /* pointwise.row: rows, elements a row */
    unsigned pw_lanes;         /* pointwise.row: lanes a row */
    double sg_qk, sg_pv, sg_f; /* attention.simt: lane instructions per score of S, PV and F */
    double sg_eff;             /* attention.simt: the share of the issue rate it sustains */
    int sg_regs;               /* attention.simt: registers a thread (the model's residency) */
    double floor_us; /* fill and drain: FILL_ROUNDS DRAM round trips + a busy SM's share of the
                        bytes at its share of the HBM bandwidth (passes/model.c) */
    int64_t xrows;   /* cluster rows: the rows one cluster runs one after the other (0: none) */
    unsigned xsyncs; /* cluster rows: cluster barriers a row (its exchanges, a closing one) */
    bool xpersist;   /* cluster rows: persistent clusters (the next row loads meanwhile) */
    double sync_us;  /* cluster rows: xrows x xsyncs x CLUSTER_SYNC_US (passes/model.c), the
                        chain of barrier waits no other work of the cluster overlaps */
    double mem_us, comp_us, time_us; /* time = max(memory, compute, issue, floor) + extra_us; the
                                        first kernel's launch not included */
    double alt_us;                   /* attention.ksplit: the runner-up's time (the 64-row tiles) */
    pass_attn_live live;             /* attention.fa3 / simt: the score tiles visited (priced) */
    pass_attn_split split;           /* attention.ksplit: the split-KV plan and its price */
    double split1_us;                /* attention.ksplit with splits > 1: the same unsplit */
    pass_wg_tile wgt;                /* matmul.wgmma: the tile and the parts of its time */
    pass_wg_time wgm;
    pass_wg_shape wgs; /* matmul.wgmma: the shape it was priced for (staging) */
    pass_sk_tile skt;  /* matmul.skinny: the tile and the parts of its time */
    pass_sk_time skm;
    pass_simt_time sgt; /* matmul.simt: the tile and the parts of its time */
    pass_wg_tile swt;   /* matmul.wgmma_swap: the plain kernel's fastest tile, and its time */
    pass_wg_time swm;
} pass_model;
void pass_model_region(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                       const pass_cost *c, pass_model *m);
/* Blocks of `threads` threads, `sram` shared bytes and `regs` registers a thread (0: not counted)
 * one SM of gpu holds at once: at least 1, at most 32. */
int64_t pass_model_resident(const pass_gpu *gpu, unsigned threads, int64_t sram, int regs);
/* The memory time of a column schedule's block m (grid, threads, regs, thread_bytes, ticket and
 * comb_bytes set by its model block) moving `bytes` with `sram` shared bytes a block
 * (docs/cost-model.md "Column schedules"): resident blocks by threads, shared memory and
 * registers; each wave of resident blocks (the last one partial) at the bandwidth its bytes in
 * flight sustain (at most col_sm_bytes an SM) against the bandwidth-delay product of
 * col_latency_us; plus a column tile's combine. Fills per_sm, active_sms, occupancy, inflight,
 * waves, bw_GBps, mem_us, extra_us; returns mem_us + extra_us (0 when gpu has no col_latency_us).
 */
double pass_model_column(const pass_gpu *gpu, double bytes, int64_t sram, pass_model *m);
/* The same for region r planned as rg (a copy with another schedule) with facts f. */
void pass_model_plan(const ir_graph *g, const ir_region *rg, const pass_sched_facts *f,
                     const pass_gpu *gpu, const pass_cost *c, pass_model *m);
/* The instruction counts of pointwise region r's loop per element of its anchor, vectors of
 * 16 / elem elements (docs/cost-model.md "Instruction issue (pointwise)"); zeros for other
 * kinds. */
void pass_model_pw_issue(const ir_graph *g, const pass_index *ix, uint32_t r, int elem,
                         pass_pw_issue *o);
/* Instructions per element codegen issues for region r (pointwise: pass_pw_issue.flat, vectors
 * of 16 / elem elements; reductions: their domain's loop; docs/cost-model.md "Instruction
 * issue"); 0 for other kinds. */
double pass_model_instr(const ir_graph *g, const pass_index *ix, uint32_t r, int elem);
/* pass_model_instr of a reduction region with `picks` (ir_region.picks' form) in place of its
 * planned ones: what [reduction.pick] saves per element (--explain). */
double pass_model_instr_picks(const ir_graph *g, const pass_index *ix, uint32_t r, int elem,
                              uint32_t picks);
/* Lane instructions per us the GPU issues: the calibrated special-function rate when txc bench
 * --calibrate measured one, else SMs x 128 lanes x the boost clock; 0: not modelled. */
double pass_issue_rate(const pass_gpu *gpu);
/* One line "  model: RULE: numbers" for the text report and --explain. */
void pass_model_text(const pass_model *m, const pass_gpu *gpu, FILE *out);

/* Tile scheduler simulation (deterministic). Programs run in launch order
 * (row-major over the grid), `wave` at a time; a tile request is a hit
 * when a program of the same wave already loaded that tile (it is on
 * chip), else a miss (an HBM load). */
typedef struct pass_sched {
    bool concrete;
    int64_t grid;              /* programs */
    int64_t wave;              /* programs resident at once */
    int64_t tiles_per_program; /* tile loads one program issues */
    int64_t hits, misses;
} pass_sched;
/* Matmul grid gm x gn (x batch), ksteps k-tiles, nb B operands sharing
 * the A operand (horizontal; 1 normally, 0: A tiles only); A tiles are
 * shared by a grid row, B tiles by a grid column (within one batch entry).
 * Grids over 2^26 programs are not walked (concrete stays false). */
void pass_sched_matmul(int64_t gm, int64_t gn, int64_t batch, int64_t ksteps, int64_t nb,
                       int64_t wave, pass_sched *s);
/* The simulation of region r as planned (kind-specific; docs/cost-model.md). */
void pass_sched_region(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                       pass_sched *s);

#endif
