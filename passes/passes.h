/* passes.h - graph passes, the pipeline table, the fusion planner and its
 * cost model. Every pass has one signature and reports whether it changed
 * the graph; the verifier runs between passes when TX_VERIFY_PASSES is set. */
#ifndef TX_PASSES_H
#define TX_PASSES_H

#include "ir/ir.h"

/* Hardware description for the cost model and the SRAM budget. */
typedef struct pass_gpu {
    const char *name;          /* "h200" */
    int sms;                   /* streaming multiprocessors */
    int64_t smem_per_block;    /* max dynamic shared memory per block (bytes) */
    int64_t smem_per_sm;       /* shared memory per SM (bytes) */
    int regs_per_sm;           /* 32-bit registers per SM */
    int64_t l2_bytes;
    double hbm_GBps;           /* datasheet HBM bandwidth */
    double peak_TFLOPs[5];     /* per ir_dtype: dense matrix rate for f16/bf16, FMA rate for f32 */
    double launch_us;          /* launch overhead charged per kernel */
} pass_gpu;

/* Looks a GPU up by name ("h100 h200 a100 l4 rtx4090"); NULL when unknown. */
const pass_gpu *pass_gpu_find(const char *name);
/* Comma-separated list of known names, for error messages. */
const char *pass_gpu_names(void);

typedef struct pass_ctx {
    tx_diag *diag;           /* errors (a pass that fails reports here) */
    FILE *dump;              /* --dump-ir destination (stderr); NULL: no dumps */
    const char *dump_stage;  /* NULL, "all", or a pass name */
    FILE *explain;           /* --explain destination; NULL: quiet */
    const pass_gpu *gpu;     /* cost model hardware */
    int64_t sram_budget;     /* per-block on-chip budget in bytes (0: gpu->smem_per_block) */
    bool no_fuse;            /* --no-fuse: one kernel per operation */
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

#endif
