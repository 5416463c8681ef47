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
} pass_gpu;

/* Looks a GPU up by name ("h100 h200 a100 l4 rtx4090"); NULL when unknown. */
const pass_gpu *pass_gpu_find(const char *name);
/* Comma-separated list of known names, for error messages. */
const char *pass_gpu_names(void);

typedef struct pass_ctx {
    tx_diag *diag;          /* errors (a pass that fails reports here) */
    FILE *dump;             /* --dump-ir destination (stderr); NULL: no dumps */
    const char *dump_stage; /* NULL, "all", or a pass name */
    FILE *explain;          /* --explain destination; NULL: quiet */
    const pass_gpu *gpu;    /* cost model hardware */
    int64_t sram_budget;    /* per-block on-chip budget in bytes (0: gpu->smem_per_block) */
    bool no_fuse;           /* --no-fuse: one kernel per operation */
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
bool pass_cse(ir_graph *g, pass_ctx *c);      /* common subexpression elimination */
bool pass_dce(ir_graph *g, pass_ctx *c);      /* dead-code elimination */
bool pass_fuse(ir_graph *g, pass_ctx *c);     /* fusion planner: fills g->regions */

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
enum { PASS_SRC_CAP = 256 }; /* source buffers of this size never truncate in practice */

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

/* Plans region r's tiles against `budget` for `gpu` (the schedule rules
 * that fill it read its SMs and shared memory per SM): fills threads, tile, sram_bytes,
 * spilled_bytes, strategy, passes, stages, rows, red_extent, red_axes, nout.
 * Guarantees sram_bytes <= budget. When the preferred plan did not fit,
 * writes one explanation (rule, numbers, what would change) into why;
 * else why is "". */
void pass_plan_region(ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget,
                      const pass_gpu *gpu, char *why, size_t cap);
/* Row-mode reduction schedules (docs/cost-model.md "Schedules"; the rules live in
 * passes/plan_tile.c, codegen/reduction.c follows the region's fields): `threads` per block,
 * `tile[1]` threads (lanes) per row, `rows` rows per block (threads / tile[1]). A thread of a
 * held row takes pass_row_hold elements in aligned groups of v (the row's vector width): group i
 * of lane t is elements [(i lanes + t) v, + v). The most elements a thread holds in registers:
 * PASS_ROW_HOLD, PASS_ROW_HOLD_WARP for rows of one warp or less. */
enum { PASS_ROW_HOLD = 16, PASS_ROW_HOLD_WARP = 32, PASS_ROW_THREADS_MAX = 1024 };
/* Elements per thread of a row of len elements in groups of v over `lanes` threads:
 * ceil(ceil(len / v) / lanes) x v. */
int64_t pass_row_hold(int64_t len, int64_t v, int64_t lanes);
/* The elements one vector access of a row covers: 16 B of the widest row dtype `elem` (at most
 * 8), halved until it divides len (1 for symbolic lengths). */
int64_t pass_row_vec(int64_t len, int elem);
/* The name of region r's schedule rule (reduction.row, row_wide, row_few, warp_rows,
 * subwarp_rows, cluster_rows, column, column_split, column_blocks; pointwise.vector; the region
 * kind otherwise), from its planned fields; `held`: its row is held in registers (pass_row_hold).
 */
const char *pass_schedule_name(const ir_graph *g, uint32_t r, bool held);
/* Attention tile plan: the on-chip bytes of query tile bq, key/value tile
 * bkv, head dims d (q/k) and dv (v), element size e and ring depth st:
 * bq*d*e + st*bkv*(d+dv)*e + bq*bkv*4. */
int64_t pass_attention_sram(int64_t bq, int64_t bkv, int64_t d, int64_t dv, int e, int st);
/* Matmul tile plan: (bm*bk + nb*bk*bn) * e * st. */
int64_t pass_matmul_sram(int64_t bm, int64_t bn, int64_t bk, int64_t nb, int e, int st);
/* The smallest attention plan that fits: fills bq, bkv, st; false when even
 * the smallest does not fit. */
bool pass_attention_fit(int64_t d, int64_t dv, int e, int64_t budget, int64_t *bq, int64_t *bkv,
                        int *st);

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

/* The schedule model of one planned region (passes/model.c, docs/cost-model.md "Model"):
 * for pointwise and reduction regions, the block the schedule launches, its residency, the
 * bytes in flight per SM and the DRAM bandwidth they sustain by Little's law; others (and
 * unknown sizes) keep the roofline (schedule "roofline"). */
typedef struct pass_model {
    const char *schedule; /* the rule's name: pointwise.vector, reduction.row, reduction.warp_rows,
                             reduction.column, reduction.column_split, reduction.column_blocks,
                             attention.fa3,
                             roofline */
    bool concrete;
    int64_t grid;        /* blocks launched */
    unsigned threads;    /* per block */
    int64_t per_sm;      /* blocks resident per SM (threads, shared memory, 32 at most) */
    double active_sms;   /* SMs the grid keeps busy */
    double occupancy;    /* resident threads per busy SM / 2048 */
    double thread_bytes; /* bytes one thread has in flight */
    double inflight;     /* bytes in flight per busy SM */
    double waves;        /* grid / (SMs x per_sm) */
    double bw_GBps;      /* DRAM bandwidth the schedule sustains (<= hbm_GBps) */
    unsigned kernels;    /* kernels the schedule launches (2: column blocks) */
    double extra_us;     /* the kernels after the first: launch and latency */
    double instr;        /* pointwise: issued instructions per element (0: none) */
    double issue_us;     /* elements x instr over the GPU's issue rate */
    double mem_us, comp_us, time_us; /* time = max(memory, compute, issue) + extra_us; the first
                                        kernel's launch not included */
} pass_model;
void pass_model_region(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                       const pass_cost *c, pass_model *m);
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
