/* report.h - private to passes/: the facts every form of the cost report
 * prints (report.c: text, JSON, DOT; svg.c: the pictures), computed once
 * from the planner's regions and the cost model. */
#ifndef TX_PASSES_REPORT_H
#define TX_PASSES_REPORT_H

#include "passes/passes.h"

enum { PASS_REP_MODEL_CANDS = 4, PASS_REP_CANDS = PASS_REP_MODEL_CANDS + 8 };
/* the reports list the model's best PASS_REP_MODEL_CANDS schedules and every one measured */

typedef struct pass_rep {
    const ir_graph *g;
    pass_index ix;
    const pass_gpu *gpu;
    int64_t budget;
    pass_cost *cost;      /* per region of g */
    pass_sched *sched;    /* per region of g */
    pass_candidate *cand; /* per region of g (PASS_REP_CANDS each): the model's best schedules,
                             then those the tuning measurement timed that they do not include */
    unsigned *ncand;
    const pass_tune_entry **tuned; /* per region: the measurement its schedule follows, or NULL */
    ir_poly flops, bytes;          /* totals of the plan; bytes = read + written + spilled */
    bool concrete;
    double f, b, us;
    uint32_t kernels, un_kernels; /* kernels launched (pass_model.kernels of each region) */
    ir_poly un_bytes;
    bool un_concrete;
    double un_b, un_us;
    ir_graph *un_g; /* the --no-fuse plan of the same graph */
    pass_index un_ix;
    pass_cost *un_cost; /* per region of un_g */
} pass_rep;

/* Computes the report facts of the planned graph g (and of its --no-fuse
 * plan); false with an error reported in c->diag. pass_rep_free releases. */
bool pass_rep_build(const ir_graph *g, pass_ctx *c, pass_rep *r);
void pass_rep_free(pass_rep *r);
/* The tuning measurement of candidate s of region k, -1 when none. */
double pass_rep_measured(const pass_rep *r, uint32_t k, const ir_schedule *s);

/* The per-schedule part of the model (passes/schedule.c's table): the schedule's name, grid,
 * threads and bytes in flight per thread into m; false when it has none at these sizes. */
bool pass_schedule_model_block(const pass_sched_facts *f, const ir_region *rg, pass_model *m);

#endif
