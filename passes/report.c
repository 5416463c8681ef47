/* report.c - the cost report in three forms (spec section 4): a readable
 * table with the tile scheduler simulation and a predicted timeline
 * (--emit=report), JSON (--emit=json) and Graphviz (--emit=dot). Every
 * form also plans the same graph with --no-fuse for the totals.
 * Deterministic: fixed formats, node order. */
#include "passes/passes.h"
#include "passes/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The kernels region k of g launches: 1, or the model's count where the region's plan launches
 * more (a row split's statistics kernel, split KV's combine, [matmul.wgmma.stage]'s operand
 * copies; pass_model.kernels, the count codegen emits). Their time stays in the region's. */
static uint32_t rep_launches(const ir_graph *g, const pass_index *ix, uint32_t k,
                             const pass_gpu *gpu, const pass_cost *pc) {
    pass_model md;
    pass_model_region(g, ix, k, gpu, pc, &md);
    return md.kernels > 1 ? md.kernels : 1;
}

/* Plans a clone of g with --no-fuse and keeps it with its costs and totals
 * (the unfused baseline of every report). The baseline is the --no-fuse plan (the one
 * `txc bench --compare-unfused` runs): the planner's staged operand copies (IR_NF_STAGE,
 * which --no-fuse does not make) are taken out of the clone first, and the copies
 * [reduction.stats_recompute] made (IR_NF_RECOMPUTE) merged back into their originals. */
static bool unfused_totals(const ir_graph *g, pass_ctx *c, pass_rep *r) {
    ir_graph *cl = ir_graph_clone(g);
    if (!cl) return false;
    bool staged = false;
    for (ir_id i = 0; i < cl->n; i++) {
        if (!(cl->nodes[i].flags & IR_NF_STAGE)) continue;
        ir_replace_uses(cl, i, ir_in(cl, &cl->nodes[i], 0));
        cl->nodes[i].flags |= IR_NF_DEAD;
        staged = true;
    }
    if (staged) (void)ir_compact(cl);
    bool copies = false; /* [reduction.stats_recompute]'s copies merge back into their originals */
    for (ir_id i = 0; i < cl->n; i++) {
        copies |= (cl->nodes[i].flags & IR_NF_RECOMPUTE) != 0;
        cl->nodes[i].flags &= (uint8_t)~IR_NF_RECOMPUTE;
    }
    if (copies) (void)pass_cse(cl, c);
    cl->nregions = 0;
    for (ir_id i = 0; i < cl->n; i++) cl->nodes[i].region = IR_NONE;
    pass_ctx c2 = *c;
    c2.no_fuse = true;
    c2.explain = NULL;
    c2.dump = NULL;
    pass_fuse(cl, &c2);
    if (!pass_index_build(cl, &r->un_ix)) {
        ir_graph_free(cl);
        return false;
    }
    r->un_g = cl;
    r->un_kernels = 0;
    r->un_cost = ir_xcalloc(cl->nregions ? cl->nregions : 1, sizeof *r->un_cost);
    ir_poly_const(&r->un_bytes, 0);
    r->un_concrete = true;
    r->un_us = 0;
    for (uint32_t k = 0; k < cl->nregions; k++) {
        pass_cost *pc = &r->un_cost[k];
        pass_region_cost_ix(cl, &r->un_ix, k, r->gpu, pc);
        r->un_kernels += rep_launches(cl, &r->un_ix, k, r->gpu, pc);
        ir_poly_add(&r->un_bytes, &pc->bytes_read);
        ir_poly_add(&r->un_bytes, &pc->bytes_written);
        ir_poly_add(&r->un_bytes, &pc->spilled);
        r->un_concrete &= pc->concrete;
        r->un_us += pc->predicted_us;
    }
    r->un_concrete &= ir_poly_is_const(&r->un_bytes, &r->un_b);
    return true;
}

void pass_rep_free(pass_rep *r) {
    free(r->cost);
    free(r->sched);
    free(r->cand);
    free(r->ncand);
    free(r->tuned);
    pass_index_free(&r->ix);
    if (r->un_g) {
        pass_index_free(&r->un_ix);
        ir_graph_free(r->un_g);
        free(r->un_cost);
        r->un_g = NULL;
    }
}

bool pass_rep_build(const ir_graph *g, pass_ctx *c, pass_rep *r) {
    memset(r, 0, sizeof *r);
    r->g = g;
    r->gpu = pass_ctx_gpu(c);
    r->budget = pass_sram_budget(c);
    if (!pass_index_build(g, &r->ix)) {
        tx_error(c->diag, "internal error: cannot build the use lists for the cost report");
        return false;
    }
    r->cost = ir_xcalloc(g->nregions ? g->nregions : 1, sizeof *r->cost);
    r->sched = ir_xcalloc(g->nregions ? g->nregions : 1, sizeof *r->sched);
    r->cand = ir_xcalloc((size_t)(g->nregions ? g->nregions : 1) * PASS_REP_CANDS, sizeof *r->cand);
    r->ncand = ir_xcalloc(g->nregions ? g->nregions : 1, sizeof *r->ncand);
    r->tuned = ir_xcalloc(g->nregions ? g->nregions : 1, sizeof *r->tuned);
    ir_poly_const(&r->flops, 0);
    ir_poly_const(&r->bytes, 0);
    r->concrete = true;
    for (uint32_t k = 0; k < g->nregions; k++) {
        pass_cost *pc = &r->cost[k];
        pass_region_cost_ix(g, &r->ix, k, r->gpu, pc);
        r->kernels += rep_launches(g, &r->ix, k, r->gpu, pc);
        pass_sched_region(g, &r->ix, k, r->gpu, &r->sched[k]);
        pass_candidate *cd = &r->cand[k * PASS_REP_CANDS];
        r->ncand[k] =
            pass_schedule_candidates(g, &r->ix, k, r->gpu, r->budget, cd, PASS_REP_MODEL_CANDS);
        if (g->regions[k].sched.source == IR_SCHED_MEASURED && c->tune) {
            char key[24];
            bool stale;
            pass_region_key(g, &r->ix, k, key);
            r->tuned[k] = pass_tune_find(c->tune, key, r->gpu->name, &stale);
        }
        for (unsigned i = 0; r->tuned[k] && i < r->tuned[k]->ncand; i++) {
            const pass_tune_cand *tc = &r->tuned[k]->cand[i];
            bool have = false;
            for (unsigned j = 0; j < r->ncand[k]; j++) have |= pass_schedule_eq(&cd[j].s, &tc->s);
            if (!have && r->ncand[k] < PASS_REP_CANDS)
                cd[r->ncand[k]++] = (pass_candidate){tc->s, tc->predicted_us};
        }
        ir_poly_add(&r->flops, &pc->flops);
        ir_poly_add(&r->bytes, &pc->bytes_read);
        ir_poly_add(&r->bytes, &pc->bytes_written);
        ir_poly_add(&r->bytes, &pc->spilled);
        r->concrete &= pc->concrete;
        r->us += pc->predicted_us;
    }
    r->concrete &= ir_poly_is_const(&r->flops, &r->f) && ir_poly_is_const(&r->bytes, &r->b);
    if (!unfused_totals(g, c, r)) {
        tx_error(c->diag, "internal error: cannot plan the unfused baseline for the cost report");
        pass_rep_free(r);
        return false;
    }
    return true;
}

double pass_rep_measured(const pass_rep *r, uint32_t k, const ir_schedule *s) {
    const pass_tune_entry *e = r->tuned[k];
    for (unsigned i = 0; e && i < e->ncand; i++)
        if (pass_schedule_eq(&e->cand[i].s, s)) return e->cand[i].measured_us;
    return -1;
}

/* The text report's schedule line of region k: the schedule, why, the runners-up. */
static void text_schedule(const pass_rep *r, uint32_t k, FILE *out) {
    const ir_region *rg = &r->g->regions[k];
    char b[160];
    if (rg->sched.id == PASS_SCH_NONE) return;
    pass_schedule_str(&rg->sched, b, sizeof b);
    double mine = pass_rep_measured(r, k, &rg->sched);
    char why[256] = "";
    if (!r->tuned[k]) { /* a rule that does not follow the model's ranking says why */
        pass_sched_facts f;
        pass_schedule_facts(r->g, &r->ix, k, r->gpu, r->budget, &f);
        pass_schedule_rule_why(&f, &rg->sched, why, sizeof why);
    }
    if (why[0])
        fprintf(out, "  schedule: %s from the rule (%s)", b, why);
    else
        fprintf(out, "  schedule: %s from the %s", b, r->tuned[k] ? "measurement" : "model");
    if (mine >= 0) fprintf(out, " (measured %.3f us)", mine);
    unsigned shown = 0;
    for (unsigned i = 0; i < r->ncand[k]; i++) {
        const pass_candidate *c = &r->cand[k * PASS_REP_CANDS + i];
        if (pass_schedule_eq(&c->s, &rg->sched)) continue;
        pass_schedule_str(&c->s, b, sizeof b);
        fprintf(out, "%s%s %.3f us", shown++ ? ", " : "; runners-up (predicted): ", b,
                c->predicted_us);
        double m = pass_rep_measured(r, k, &c->s);
        if (m >= 0) fprintf(out, " (measured %.3f us)", m);
    }
    fputc('\n', out);
}

/* "%id name" -> the report's op name: the value's name, or %id. */
static const char *op_label(const ir_graph *g, ir_id i, char *buf, size_t cap) {
    if (g->nodes[i].name)
        snprintf(buf, cap, "%s", ir_str(g, g->nodes[i].name));
    else
        snprintf(buf, cap, "%%%u", i);
    return buf;
}

/* A polynomial as text: the number when concrete, else the formula. */
static const char *poly_text(const ir_graph *g, const ir_poly *p, char *buf, size_t cap) {
    double v;
    if (ir_poly_is_const(p, &v))
        snprintf(buf, cap, "%.0f", v);
    else
        ir_poly_str(g, p, buf, cap);
    return buf;
}

/* ---- text ------------------------------------------------------------------ */

static void text_region(const pass_rep *r, uint32_t k, FILE *out) {
    const ir_graph *g = r->g;
    const ir_region *rg = &g->regions[k];
    const pass_cost *pc = &r->cost[k];
    char b1[256], b2[256], b3[256], b4[256];
    fprintf(out, "kernel k%u: %s [", k, ir_region_kind_name((ir_region_kind)rg->kind));
    ir_print_fusions(out, rg->fusion, 0);
    fputc(']', out);
    if (rg->kind == IR_RK_REDUCTION || rg->kind == IR_RK_ATTENTION)
        fprintf(out, " strategy=%s passes=%u", ir_red_strategy_name(rg->strategy), rg->passes);
    fputc('\n', out);
    fputs("  ops:", out);
    unsigned nops = 0;
    for (uint32_t j = r->ix.rstart[k]; j < r->ix.rstart[k + 1]; j++)
        if (pass_is_compute((ir_op)g->nodes[r->ix.rids[j]].op) || rg->kind == IR_RK_COPY) {
            ir_id i = r->ix.rids[j];
            fprintf(out, nops ? ", %s" : " %s", op_label(g, i, b1, sizeof b1));
            nops++;
        }
    if (!nops && rg->kind == IR_RK_COPY)
        fprintf(out, " %s", op_label(g, rg->anchor, b1, sizeof b1));
    fputc('\n', out);
    fprintf(out, "  flops %s  bytes read %s  written %s  spilled %s\n",
            poly_text(g, &pc->flops, b1, sizeof b1), poly_text(g, &pc->bytes_read, b2, sizeof b2),
            poly_text(g, &pc->bytes_written, b3, sizeof b3),
            poly_text(g, &pc->spilled, b4, sizeof b4));
    char dts[64];
    if (pc->peak_TFLOPs < r->gpu->peak_TFLOPs[pc->dtype])
        snprintf(dts, sizeof dts, "%s at %.1f TFLOP/s, %.0f%% of peak", ir_dtype_name(pc->dtype),
                 pc->peak_TFLOPs, 100.0 * pc->peak_TFLOPs / r->gpu->peak_TFLOPs[pc->dtype]);
    else
        snprintf(dts, sizeof dts, "%s", ir_dtype_name(pc->dtype));
    if (pc->concrete) {
        fprintf(out,
                "  intensity %.3f FLOP/B  ridge %.3f FLOP/B (%s)  %s-bound\n  time %.3f us "
                "roofline, %.3f us model "
                "+ %.3f us launch = %.3f us\n",
                pc->intensity, pc->ridge, dts, pc->compute_bound ? "compute" : "memory",
                pc->roofline_us, pc->model_us, r->gpu->launch_us, pc->predicted_us);
        pass_model md;
        pass_model_region(g, &r->ix, k, r->gpu, pc, &md);
        pass_model_text(&md, r->gpu, out);
        text_schedule(r, k, out);
    } else
        fprintf(out,
                "  intensity (flops)/(bytes) symbolic  ridge %.3f FLOP/B (%s)  bound and time: "
                "bind the dims with -D\n",
                pc->ridge, dts);
    fprintf(out, "  on-chip %lld B of %lld B  tile (%lld, %lld, %lld)  threads %u",
            (long long)rg->sram_bytes, (long long)r->budget, (long long)rg->tile[0],
            (long long)rg->tile[1], (long long)rg->tile[2], rg->threads);
    if (rg->kind == IR_RK_REDUCTION || rg->kind == IR_RK_ATTENTION) {
        if (rg->red_extent >= 0)
            fprintf(out, "  rows/block %lld  row %lld", (long long)rg->rows,
                    (long long)rg->red_extent);
        else
            fprintf(out, "  rows/block %lld  row symbolic", (long long)rg->rows);
    }
    if (rg->kind == IR_RK_MATMUL)
        fprintf(out, "  stages %u  products %lld", rg->stages, (long long)rg->rows);
    fputc('\n', out);
    if (rg->kind == IR_RK_COPY)
        fprintf(out,
                "  note: %s is returned, so it is materialised; views read inside kernels stay "
                "index arithmetic\n",
                op_label(g, rg->anchor, b1, sizeof b1));
    const pass_sched *s = &r->sched[k];
    if (s->concrete)
        fprintf(out,
                "  simulation: grid %lld programs, %lld resident per wave, %lld tile loads per "
                "program, "
                "%lld hits, %lld misses\n",
                (long long)s->grid, (long long)s->wave, (long long)s->tiles_per_program,
                (long long)s->hits, (long long)s->misses);
    else
        fputs("  simulation: not simulated (symbolic or too large a grid)\n", out);
}

/* One row per region of a plan: the roofline table, headed by the `launched` kernels of the
 * plan. `ops` lists the values a kernel computes (first ones, then a count). */
static void text_roofline(const ir_graph *g, const pass_index *ix, const pass_cost *cost,
                          uint32_t launched, const char *title, FILE *out) {
    fprintf(out, "\nroofline, %s plan (%u kernels):\n", title, launched);
    fprintf(out, "  %-6s %-10s %14s %14s %10s %-8s %12s  %s\n", "kernel", "kind", "flops", "bytes",
            "FLOP/B", "bound", "pred_us", "ops");
    for (uint32_t k = 0; k < g->nregions; k++) {
        const pass_cost *pc = &cost[k];
        char nm[16], ops[96], b1[256];
        size_t n = 0;
        unsigned cnt = 0;
        ops[0] = 0;
        for (uint32_t j = ix->rstart[k]; j < ix->rstart[k + 1]; j++) {
            ir_id i = ix->rids[j];
            if (!pass_is_compute((ir_op)g->nodes[i].op) && g->regions[k].kind != IR_RK_COPY)
                continue;
            if (cnt++ < 4 && n < sizeof ops)
                n += (size_t)snprintf(ops + n, sizeof ops - n, "%s%s", cnt > 1 ? ", " : "",
                                      op_label(g, i, b1, sizeof b1));
        }
        if (cnt > 4 && n < sizeof ops) snprintf(ops + n, sizeof ops - n, ", ... (%u ops)", cnt);
        snprintf(nm, sizeof nm, "k%u", k);
        double f = 0, b = 0, br = 0, bw = 0, sp = 0;
        bool conc = pc->concrete && ir_poly_is_const(&pc->flops, &f) &&
                    ir_poly_is_const(&pc->bytes_read, &br) &&
                    ir_poly_is_const(&pc->bytes_written, &bw) &&
                    ir_poly_is_const(&pc->spilled, &sp);
        b = br + bw + sp;
        if (conc)
            fprintf(out, "  %-6s %-10s %14.0f %14.0f %10.3f %-8s %12.3f  %s\n", nm,
                    ir_region_kind_name((ir_region_kind)g->regions[k].kind), f, b, pc->intensity,
                    pc->compute_bound ? "compute" : "memory", pc->predicted_us, ops);
        else
            fprintf(out, "  %-6s %-10s %14s %14s %10s %-8s %12s  %s\n", nm,
                    ir_region_kind_name((ir_region_kind)g->regions[k].kind), "symbolic", "symbolic",
                    "-", "-", "-", ops);
    }
}

/* The predicted timeline: kernels back to back, each after its launch gap, each as long as the
 * schedule model predicts (the totals' predicted time is where the last one ends). */
static void text_timeline(const pass_rep *r, FILE *out) {
    const ir_graph *g = r->g;
    enum { COLS = 40 };
    fprintf(out,
            "\ntimeline (predicted; each kernel starts %.3f us of launch overhead after the "
            "previous one ends):\n",
            r->gpu->launch_us);
    if (!r->concrete) {
        fputs("  not available: sizes are symbolic (bind them with -D)\n", out);
        return;
    }
    double total = r->us > 0 ? r->us : 1, t = 0;
    fprintf(out, "  %-6s %-10s %12s %12s %12s %10s  %s\n", "kernel", "kind", "start_us", "end_us",
            "dur_us", "gap_us", "bar");
    for (uint32_t k = 0; k < g->nregions; k++) {
        const pass_cost *pc = &r->cost[k];
        double gap = r->gpu->launch_us, st = t + gap, en = st + pc->model_us;
        char bar[COLS + 1];
        int c0 = (int)floor(st / total * COLS), c1 = (int)ceil(en / total * COLS);
        if (c1 <= c0) c1 = c0 + 1;
        if (c1 > COLS) c1 = COLS;
        for (int i = 0; i < COLS; i++) bar[i] = i < c0 ? ' ' : i < c1 ? '#' : ' ';
        bar[COLS] = 0;
        char nm[16];
        snprintf(nm, sizeof nm, "k%u", k);
        fprintf(out, "  %-6s %-10s %12.3f %12.3f %12.3f %10.3f  |%s|\n", nm,
                ir_region_kind_name((ir_region_kind)g->regions[k].kind), st, en, pc->model_us, gap,
                bar);
        t = en;
    }
}

bool pass_report_text(const ir_graph *g, pass_ctx *c, FILE *out) {
    pass_rep r;
    if (!pass_rep_build(g, c, &r)) return false;
    const pass_gpu *gp = r.gpu;
    char tn[16];
    fprintf(out,
            "cost report: %s on %s for %s (HBM %.0f GB/s; peak %.1f TFLOP/s f32, %.1f f16/bf16, "
            "tensor-core kernels "
            "at %.0f%% of it; SRAM budget %lld B per block; launch %.3f us)\n",
            g->name, gp->name, pass_target_name(c->target, tn, sizeof tn), gp->hbm_GBps,
            gp->peak_TFLOPs[IR_F32], gp->peak_TFLOPs[IR_BF16], 100.0 * gp->tc_eff,
            (long long)r.budget, gp->launch_us);
    bool tc = false; /* a matrix product or attention: the target's kernels differ */
    for (uint32_t k = 0; k < g->nregions; k++)
        tc = tc || g->regions[k].kind == IR_RK_MATMUL || g->regions[k].kind == IR_RK_ATTENTION;
    if (tc && c->target.sm > 0 && !c->target.arch && pass_gpu_find(gp->name) &&
        pass_gpu_find(gp->name)->wg_eff > 0)
        fprintf(out,
                "target %s: no wgmma/TMA kernels (sm_90a only): matrix products and attention "
                "priced on mma.sync\n",
                tn);
    fputc('\n', out);
    for (uint32_t k = 0; k < g->nregions; k++) {
        text_region(&r, k, out);
        fputc('\n', out);
    }
    char b1[256], b2[256], b3[256];
    fprintf(out, "totals: %u kernels (unfused %u), flops %s, bytes %s (unfused %s)", r.kernels,
            r.un_kernels, poly_text(g, &r.flops, b1, sizeof b1),
            poly_text(g, &r.bytes, b2, sizeof b2), poly_text(g, &r.un_bytes, b3, sizeof b3));
    if (r.concrete && r.un_concrete)
        fprintf(out, ", predicted %.3f us (unfused %.3f us)\n", r.us, r.un_us);
    else
        fputs(", predicted time needs bound dims\n", out);
    text_roofline(g, &r.ix, r.cost, r.kernels, "fused", out);
    text_roofline(r.un_g, &r.un_ix, r.un_cost, r.un_kernels, "unfused (--no-fuse)", out);
    text_timeline(&r, out);
    pass_rep_free(&r);
    return !ferror(out);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_str(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* A number: integral values without a fraction, others with 6 decimals. */
static void json_num(FILE *out, double v) {
    if (v == floor(v) && fabs(v) < 1e15)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.6f", v);
}

static void json_poly(FILE *out, const ir_poly *p) {
    double v;
    if (ir_poly_is_const(p, &v))
        json_num(out, v);
    else
        fputs("null", out);
}

/* {"name": ..., "parameters": {...}} of schedule sc, then `, ` when more follows. */
static void json_sched_head(FILE *out, const ir_schedule *sc) {
    fprintf(out, "{\"name\": \"%s\", \"parameters\": {", pass_schedule_name(sc->id));
    char nm[32];
    for (unsigned i = 0; pass_schedule_param(sc->id, i, nm, sizeof nm); i++)
        fprintf(out, "%s\"%s\": %d", i ? ", " : "", nm, (int)sc->p[i]);
    fputs("}", out);
}

static void json_time(FILE *out, double us) {
    if (us >= 0)
        json_num(out, us);
    else
        fputs("null", out);
}

/* The kernel's "schedule" object: name, parameters, its tuning-cache key, source (model or
 * measurement), its predicted and measured times and the runners-up with theirs; null without a
 * schedule. */
static void json_schedule(const pass_rep *r, uint32_t k, FILE *out) {
    const ir_region *rg = &r->g->regions[k];
    fputs("      \"schedule\": ", out);
    if (rg->sched.id == PASS_SCH_NONE) {
        fputs("null,\n", out);
        return;
    }
    json_sched_head(out, &rg->sched);
    char key[24];
    pass_region_key(r->g, &r->ix, k, key); /* the kernel's tuning-cache key */
    fprintf(out, ", \"key\": \"%s\", \"source\": \"%s\", \"predicted_us\": ", key,
            r->tuned[k] ? "measurement" : "model");
    double pred = -1;
    for (unsigned i = 0; i < r->ncand[k]; i++)
        if (pass_schedule_eq(&r->cand[k * PASS_REP_CANDS + i].s, &rg->sched))
            pred = r->cand[k * PASS_REP_CANDS + i].predicted_us;
    if (pred < 0 && r->cost[k].concrete) pred = r->cost[k].predicted_us;
    json_time(out, pred);
    fputs(", \"measured_us\": ", out);
    json_time(out, pass_rep_measured(r, k, &rg->sched));
    fputs(", \"runners_up\": [", out);
    unsigned shown = 0;
    for (unsigned i = 0; i < r->ncand[k]; i++) {
        const pass_candidate *c = &r->cand[k * PASS_REP_CANDS + i];
        if (pass_schedule_eq(&c->s, &rg->sched)) continue;
        fputs(shown++ ? ", " : "", out);
        json_sched_head(out, &c->s);
        fputs(", \"predicted_us\": ", out);
        json_time(out, c->predicted_us);
        fputs(", \"measured_us\": ", out);
        json_time(out, pass_rep_measured(r, k, &c->s));
        fputs("}", out);
    }
    fputs("]},\n", out);
}

static void json_region(const pass_rep *r, uint32_t k, FILE *out) {
    const ir_graph *g = r->g;
    const ir_region *rg = &g->regions[k];
    const pass_cost *pc = &r->cost[k];
    char b1[256];
    fprintf(out, "    { \"name\": \"k%u\", \"kind\": \"%s\", \"fusion\": [", k,
            ir_region_kind_name((ir_region_kind)rg->kind));
    ir_print_fusions(out, rg->fusion, '"');
    fputs("], \"ops\": [", out);
    int first = 1;
    for (uint32_t j = r->ix.rstart[k]; j < r->ix.rstart[k + 1]; j++)
        if (pass_is_compute((ir_op)g->nodes[r->ix.rids[j]].op) || rg->kind == IR_RK_COPY) {
            ir_id i = r->ix.rids[j];
            if (!first) fputs(", ", out);
            json_str(out, op_label(g, i, b1, sizeof b1));
            first = 0;
        }
    if (first && rg->kind == IR_RK_COPY) json_str(out, op_label(g, rg->anchor, b1, sizeof b1));
    fputs("],\n      \"flops\": ", out);
    json_poly(out, &pc->flops);
    fputs(", \"bytes_read\": ", out);
    json_poly(out, &pc->bytes_read);
    fputs(", \"bytes_written\": ", out);
    json_poly(out, &pc->bytes_written);
    fputs(", \"intensity\": ", out);
    if (pc->concrete)
        json_num(out, pc->intensity);
    else
        fputs("null", out);
    fputs(", \"ridge\": ", out);
    json_num(out, pc->ridge);
    fputs(", \"compute_TFLOPs\": ", out);
    json_num(out, pc->peak_TFLOPs);
    fprintf(out, ", \"bound\": %s",
            !pc->concrete       ? "null"
            : pc->compute_bound ? "\"compute\""
                                : "\"memory\"");
    fputs(", \"predicted_us\": ", out);
    if (pc->concrete)
        json_num(out, pc->predicted_us);
    else
        fputs("null", out);
    fprintf(out, ",\n      \"sram_bytes\": %lld, \"spilled_bytes\": ", (long long)rg->sram_bytes);
    json_poly(out, &pc->spilled);
    fprintf(out, ", \"strategy\": %s",
            rg->kind == IR_RK_REDUCTION || rg->kind == IR_RK_ATTENTION ? "\"" : "null");
    if (rg->kind == IR_RK_REDUCTION || rg->kind == IR_RK_ATTENTION)
        fprintf(out, "%s\"", ir_red_strategy_name(rg->strategy));
    fprintf(out, ", \"passes\": %u, \"threads\": %u, \"tile\": [%lld, %lld, %lld],\n", rg->passes,
            rg->threads, (long long)rg->tile[0], (long long)rg->tile[1], (long long)rg->tile[2]);
    pass_model md;
    pass_model_region(g, &r->ix, k, r->gpu, pc, &md);
    fprintf(out, "      \"model\": {\"schedule\": \"%s\", \"why\": \"%s\"", md.schedule,
            r->tuned[k] ? "measurement" : "model");
    if (md.concrete && md.threads) {
        fprintf(out, ", \"grid\": %lld, \"threads\": %u, \"blocks_per_sm\": %lld, \"occupancy\": ",
                (long long)md.grid, md.threads, (long long)md.per_sm);
        json_num(out, md.occupancy);
        fputs(", \"inflight_bytes_per_sm\": ", out);
        json_num(out, md.inflight);
        fputs(", \"waves\": ", out);
        json_num(out, md.waves);
        fputs(", \"bandwidth_GBps\": ", out);
        json_num(out, md.bw_GBps);
        if (md.instr > 0) {
            fputs(", \"instructions_per_element\": ", out);
            json_num(out, md.instr);
            fputs(", \"issue_us\": ", out);
            json_num(out, md.issue_us);
        }
        if (md.ticket) {
            fprintf(out,
                    ", \"combine\": \"last_block\", \"splits\": %u, \"extra_us\": ", rg->splits);
            json_num(out, md.extra_us);
        }
        if (md.kernels > 1) {
            fprintf(out, ", \"kernels\": %u, \"splits\": %u, \"extra_us\": ", md.kernels,
                    rg->splits);
            json_num(out, md.extra_us);
        }
    }
    fputs(", \"time_us\": ", out);
    if (md.concrete)
        json_num(out, md.time_us);
    else
        fputs("null", out);
    fputs("},\n", out);
    json_schedule(r, k, out);
    const pass_sched *s = &r->sched[k];
    if (s->concrete)
        fprintf(out,
                "      \"simulation\": {\"grid\": %lld, \"wave\": %lld, \"tiles_per_program\": "
                "%lld, \"hits\": %lld, \"misses\": %lld} }",
                (long long)s->grid, (long long)s->wave, (long long)s->tiles_per_program,
                (long long)s->hits, (long long)s->misses);
    else
        fputs("      \"simulation\": null }", out);
}

bool pass_report_json(const ir_graph *g, pass_ctx *c, FILE *out) {
    pass_rep r;
    if (!pass_rep_build(g, c, &r)) return false;
    const pass_gpu *gp = r.gpu;
    char tn[16];
    fputs("{ \"gpu\": {\"name\": ", out);
    json_str(out, gp->name);
    fputs(", \"target\": ", out);
    json_str(out, pass_target_name(c->target, tn, sizeof tn));
    fputs(", \"hbm_GBps\": ", out);
    json_num(out, gp->hbm_GBps);
    fputs(", \"peak_TFLOPs\": {\"f32\": ", out);
    json_num(out, gp->peak_TFLOPs[IR_F32]);
    fputs(", \"f16\": ", out);
    json_num(out, gp->peak_TFLOPs[IR_F16]);
    fputs(", \"bf16\": ", out);
    json_num(out, gp->peak_TFLOPs[IR_BF16]);
    fprintf(out, "}, \"sram_bytes\": %lld, \"sms\": %d, \"launch_us\": ", (long long)r.budget,
            gp->sms);
    json_num(out, gp->launch_us);
    fputs(", \"tensor_core_efficiency\": ", out);
    json_num(out, gp->tc_eff);
    fputs("},\n  \"kernels\": [\n", out);
    for (uint32_t k = 0; k < g->nregions; k++) {
        json_region(&r, k, out);
        fputs(k + 1 < g->nregions ? ",\n" : "\n", out);
    }
    fprintf(out, "  ],\n  \"totals\": { \"kernels\": %u, \"unfused_kernels\": %u, \"bytes\": ",
            r.kernels, r.un_kernels);
    json_poly(out, &r.bytes);
    fputs(", \"unfused_bytes\": ", out);
    json_poly(out, &r.un_bytes);
    fputs(", \"flops\": ", out);
    json_poly(out, &r.flops);
    fputs(", \"predicted_us\": ", out);
    if (r.concrete)
        json_num(out, r.us);
    else
        fputs("null", out);
    fputs(", \"unfused_predicted_us\": ", out);
    if (r.un_concrete)
        json_num(out, r.un_us);
    else
        fputs("null", out);
    fputs(" } }\n", out);
    pass_rep_free(&r);
    return !ferror(out);
}

/* ---- DOT --------------------------------------------------------------------- */

static void dot_node(const ir_graph *g, ir_id i, FILE *out, const char *indent) {
    char b1[96], sb[160];
    const ir_node *nd = &g->nodes[i];
    const char *shape = nd->op == IR_OP_INPUT || nd->op == IR_OP_OUTPUT ? "ellipse"
                        : (ir_op_traits((ir_op)nd->op) & IR_T_VIEW)     ? "note"
                                                                        : "box";
    fprintf(out, "%sn%u [shape=%s, label=\"%%%u %s", indent, i, shape, i,
            nd->op == IR_OP_OUTPUT ? "output" : ir_op_name((ir_op)nd->op));
    if (nd->name) fprintf(out, "\\n%s", op_label(g, i, b1, sizeof b1));
    if (nd->op != IR_OP_OUTPUT)
        fprintf(out, "\\n%s%s", ir_dtype_name((ir_dtype)nd->dtype),
                ir_shape_str(g, &nd->shape, sb, sizeof sb));
    fputs("\"];\n", out);
}

/* Bytes of value v in HBM (a view: its sources). */
static void value_bytes(const ir_graph *g, ir_id v, ir_poly *p) {
    ir_id src[PASS_SRC_CAP];
    unsigned ns = pass_view_sources(g, v, src, PASS_SRC_CAP);
    ir_poly_const(p, 0);
    for (unsigned s = 0; s < ns; s++) {
        ir_poly q;
        pass_numel(g, &g->nodes[src[s]].shape, ir_dtype_size((ir_dtype)g->nodes[src[s]].dtype), &q);
        ir_poly_add(p, &q);
    }
}

bool pass_report_dot(const ir_graph *g, pass_ctx *c, FILE *out) {
    pass_rep r;
    if (!pass_rep_build(g, c, &r)) return false;
    char b1[256], b2[256];
    fprintf(out, "digraph \"%s\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n",
            g->name);
    for (uint32_t k = 0; k < g->nregions; k++) {
        const ir_region *rg = &g->regions[k];
        const pass_cost *pc = &r.cost[k];
        fprintf(out,
                "  subgraph cluster_k%u {\n    label=\"k%u %s\\nbytes %s + %s, sram %lld B\";\n", k,
                k, ir_region_kind_name((ir_region_kind)rg->kind),
                poly_text(g, &pc->bytes_read, b1, sizeof b1),
                poly_text(g, &pc->bytes_written, b2, sizeof b2), (long long)rg->sram_bytes);
        for (uint32_t j = r.ix.rstart[k]; j < r.ix.rstart[k + 1]; j++)
            dot_node(g, r.ix.rids[j], out, "    ");
        fputs("  }\n", out);
    }
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].region == IR_NONE && !ir_is_gen(g, i)) dot_node(g, i, out, "  ");
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *nd = &g->nodes[i];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id p = ir_in(g, nd, k);
            const ir_node *pn = &g->nodes[p];
            if (ir_is_gen(g, p)) continue;
            bool onchip = pn->region != IR_NONE && pn->region == nd->region;
            if (onchip) {
                fprintf(out, "  n%u -> n%u [label=\"on-chip\", style=dashed];\n", p, i);
            } else {
                ir_poly q;
                value_bytes(g, p, &q);
                fprintf(out, "  n%u -> n%u [label=\"%s B\"];\n", p, i,
                        poly_text(g, &q, b1, sizeof b1));
            }
        }
    }
    fputs("}\n", out);
    pass_rep_free(&r);
    return !ferror(out);
}
