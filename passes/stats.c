/* stats.c - [reduction.stats_recompute]: a reduction kernel P that writes pointwise values of its
 * whole domain D (computed from its inputs and its own statistics: LoFTR's column softmax
 * exp(sim - cmax) / csum, and sim = f32(s) / t itself) which only one other kernel C of the same
 * domain reads (the row softmax of the same scores) moves D-sized values through HBM twice
 * (written, read back). Where recomputing them in C per element is cheaper, they are copied into
 * C (nodes flagged IR_NF_RECOMPUTE, which the planner never merges into a kernel of a value they
 * read): P then stores only its statistics (a few bytes per row) and C reads P's inputs and the
 * statistics (broadcast) instead; each such C gets its own copies, so no copy is read by two
 * kernels. The decision is priced twice by the planner's own model: per pair (P, C), the copies'
 * issued instructions per element of D (ir_op_issue, one conversion per 16-bit value loaded, as
 * [pointwise.recompute]) at the GPU's issue rate against the bytes saved at the HBM rate; then the
 * whole graph planned with the copies must be predicted faster than planned without them, and no
 * kernel of that plan may store a copy (both plans are trial plans of clones, this rule off). Runs
 * once per graph: a graph holding copies is left as it is. */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most nodes one candidate value's copy may hold, candidates priced per reduction kernel, and
 * reductions the filter compares. */
enum { SR_CONE_MAX = 64, SR_CAND_MAX = 16, SR_RED_MAX = 512 };

/* A trial plan: a planned clone of the graph, its use lists and the region each node is in. */
typedef struct sr_trial {
    ir_graph *g;
    pass_index ix;
    double us; /* predicted time of all its kernels (< 0: not concrete) */
} sr_trial;

/* The iteration space of region r of planned graph g: a reduction's input shape, else the
 * anchor's shape. */
static const ir_shape *sr_domain(const ir_graph *g, uint32_t r) {
    const ir_node *a = &g->nodes[g->regions[r].anchor];
    return g->regions[r].kind == IR_RK_REDUCTION ? &g->nodes[ir_in(g, a, 0)].shape : &a->shape;
}

/* Plans a clone of g with this rule, explain and dumps off into *t, its errors unsaid (the real
 * plan reports them); false when planning or indexing fails (nothing to free then). */
static bool sr_plan(const ir_graph *g, const pass_ctx *c, sr_trial *t) {
    t->g = ir_graph_clone(g);
    if (!t->g) return false;
    pass_ctx tc = *c;
    tx_diag quiet = c->diag ? *c->diag : (tx_diag){0};
    quiet.errors = quiet.max_errors = 1; /* the limit reached: nothing more is printed */
    tc.diag = &quiet, tc.no_stats_recompute = true, tc.explain = NULL, tc.dump = NULL;
    if (!pass_fuse(t->g, &tc) || quiet.errors != 1 || !pass_index_build(t->g, &t->ix)) {
        ir_graph_free(t->g);
        return false;
    }
    t->us = 0;
    for (uint32_t r = 0; r < t->g->nregions; r++) {
        pass_cost pc;
        pass_region_cost_ix(t->g, &t->ix, r, c->gpu, &pc);
        t->us = pc.concrete && t->us >= 0 ? t->us + pc.predicted_us : -1;
    }
    return true;
}

static void sr_free(sr_trial *t) {
    pass_index_free(&t->ix);
    ir_graph_free(t->g);
}

/* True when one shape is the input of two reductions over different axis sets (among the first
 * SR_RED_MAX reductions): where a reduction kernel's domain-sized values go to another kernel of
 * the same domain (a cheap filter before any trial plan). */
static bool sr_maybe(const ir_graph *g) {
    ir_id *red = ir_xmalloc(((size_t)g->n + 1) * sizeof *red);
    unsigned nr = 0;
    bool yes = false;
    for (ir_id i = 0; i < g->n; i++)
        if (ir_op_traits((ir_op)g->nodes[i].op) & IR_T_REDUCE) red[nr++] = i;
    for (unsigned a = 0; a < nr && a < SR_RED_MAX && !yes; a++) {
        const ir_node *n = &g->nodes[red[a]];
        const ir_shape *d = &g->nodes[ir_in(g, n, 0)].shape;
        for (unsigned b = a + 1; b < nr && b < SR_RED_MAX && !yes; b++) {
            const ir_node *m = &g->nodes[red[b]];
            yes = m->a.red.axes != n->a.red.axes && ir_shape_eq(&g->nodes[ir_in(g, m, 0)].shape, d);
        }
    }
    free(red);
    return yes;
}

/* The copy (cone) of candidate v of reduction region p, domain d: v and the elementwise members
 * of p of shape d it reads directly, transitively, ascending ids into cone; 0 when some member
 * reads a domain-shaped value of p through a view, reads a non-elementwise value of p of d's
 * size, or the cone exceeds SR_CONE_MAX. Other values of p it reads (smaller: the statistics)
 * and values from outside p stay shared with the original. */
static unsigned sr_cone(const ir_graph *g, ir_id v, uint32_t p, const ir_shape *d, ir_id *cone) {
    unsigned n = 0;
    int64_t nd = ir_shape_numel(d);
    cone[n++] = v;
    for (unsigned k = 0; k < n; k++) {
        const ir_node *x = &g->nodes[cone[k]];
        for (unsigned a = 0; a < x->nin; a++) {
            ir_id i = ir_in(g, x, a);
            const ir_node *in = &g->nodes[i];
            if (ir_op_traits((ir_op)in->op) & IR_T_VIEW) {
                ir_id src[PASS_SRC_CAP];
                unsigned ns = pass_view_sources(g, i, src, PASS_SRC_CAP);
                for (unsigned s = 0; s < ns; s++)
                    if (g->nodes[src[s]].region == p &&
                        ir_shape_numel(&g->nodes[src[s]].shape) >= nd)
                        return 0;
                continue;
            }
            if (in->region != p) continue;
            bool dom = ir_shape_eq(&in->shape, d);
            if (!dom && ir_shape_numel(&in->shape) < nd) continue; /* a statistic */
            if (!dom || !(ir_op_traits((ir_op)in->op) & IR_T_ELEM)) return 0;
            bool seen = false;
            for (unsigned j = 0; j < n && !seen; j++) seen = cone[j] == i;
            if (seen) continue;
            if (n == SR_CONE_MAX) return 0;
            cone[n++] = i;
        }
    }
    for (unsigned a = 1; a < n; a++)
        for (unsigned b = a; b > 0 && cone[b - 1] > cone[b]; b--) {
            ir_id s = cone[b];
            cone[b] = cone[b - 1], cone[b - 1] = s;
        }
    return n;
}

/* The kernel that reads value v of reduction region p (domain d, concrete) outside p, when v is
 * a candidate: elementwise, of shape d, computed in p, not returned, read outside p only directly
 * (no view) and only by one region of domain d (pointwise or reduction), with a copy sr_cone
 * accepts. IR_NONE otherwise. */
static uint32_t sr_consumer(const sr_trial *t, ir_id v, uint32_t p, const ir_shape *d) {
    const ir_graph *g = t->g;
    const ir_node *n = &g->nodes[v];
    if (n->region != p || !(ir_op_traits((ir_op)n->op) & IR_T_ELEM) || ir_is_gen(g, v) ||
        !ir_shape_eq(&n->shape, d) || ir_shape_numel(d) <= 0)
        return IR_NONE;
    uint32_t cr = IR_NONE;
    for (uint32_t k = t->ix.u.start[v]; k < t->ix.u.start[v + 1]; k++) {
        const ir_node *y = &g->nodes[t->ix.u.ids[k]];
        if (y->op == IR_OP_OUTPUT || (ir_op_traits((ir_op)y->op) & IR_T_VIEW)) return IR_NONE;
        if (y->region == p) continue;
        if (cr != IR_NONE && y->region != cr) return IR_NONE;
        cr = y->region;
    }
    if (cr >= g->nregions) return IR_NONE;
    uint8_t k = g->regions[cr].kind;
    ir_id cone[SR_CONE_MAX];
    if ((k != IR_RK_REDUCTION && k != IR_RK_POINTWISE) || !ir_shape_eq(sr_domain(g, cr), d) ||
        !sr_cone(g, v, p, d, cone))
        return IR_NONE;
    return cr;
}

/* The price of one pair (reduction region p, consumer region cr) over its candidates. */
typedef struct sr_price {
    unsigned nops;   /* operations copied */
    double instr;    /* their issued instructions per element of the domain */
    double issue_us; /* those over the domain at the GPU's issue rate */
    double saved_us; /* the HBM time saved: candidates written and read back, less new reads */
    int64_t cand_b;  /* the candidates' bytes */
    int64_t new_b;   /* bytes the copies read (and statistics p now writes) that were not */
    char names[192]; /* the candidates, "%6 sim, %11" */
    char reads[192]; /* what the copies read instead */
} sr_price;

/* Appends "%N name" of node i to buf (", " between). */
static void sr_name(const ir_graph *g, ir_id i, char *buf, size_t cap) {
    size_t n = strlen(buf);
    if (n + 32 >= cap) return;
    const char *nm = g->nodes[i].name ? ir_str(g, g->nodes[i].name) : "";
    snprintf(buf + n, cap - n, "%s%%%u%s%s", n ? ", " : "", i, *nm ? " " : "", nm);
}

/* Prices copying cand[0..nc) (candidates of p read by cr) into cr, marking the copied nodes 1
 * in need[]; rd: scratch of g->n bytes, zero on entry and on return. */
static void sr_price_pair(const sr_trial *t, const pass_gpu *gpu, uint32_t p, uint32_t cr,
                          const ir_id *cand, unsigned nc, uint8_t *need, uint8_t *rd,
                          sr_price *pr) {
    const ir_graph *g = t->g;
    const ir_shape *d = sr_domain(g, p);
    memset(pr, 0, sizeof *pr);
    for (uint32_t j = t->ix.rstart[cr]; j < t->ix.rstart[cr + 1]; j++) { /* what cr reads now */
        const ir_node *m = &g->nodes[t->ix.rids[j]];
        if (m->region != cr) continue;
        for (unsigned a = 0; a < m->nin; a++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, m, a), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) rd[src[s]] = 1;
        }
    }
    for (unsigned k = 0; k < nc; k++) {
        ir_id cone[SR_CONE_MAX];
        unsigned n = sr_cone(g, cand[k], p, d, cone);
        for (unsigned j = 0; j < n; j++) need[cone[j]] = 1;
        pr->cand_b += ir_shape_numel(d) * ir_dtype_size((ir_dtype)g->nodes[cand[k]].dtype);
        sr_name(g, cand[k], pr->names, sizeof pr->names);
    }
    for (ir_id x = 0; x < g->n; x++) {
        if (need[x] != 1) continue;
        need[x] = 2; /* counted */
        pr->nops++;
        pr->instr += ir_op_issue((ir_op)g->nodes[x].op);
        const ir_node *m = &g->nodes[x];
        for (unsigned a = 0; a < m->nin; a++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, m, a), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) {
                ir_id v = src[s];
                const ir_node *sn = &g->nodes[v];
                if (need[v] || ir_is_gen(g, v) || rd[v] == 2) continue;
                pr->instr += ir_dtype_size((ir_dtype)sn->dtype) == 2;
                int64_t b = ir_shape_numel(&sn->shape) * ir_dtype_size((ir_dtype)sn->dtype);
                bool stored = sn->region != p; /* a statistic p did not write before */
                for (uint32_t u = t->ix.u.start[v]; u < t->ix.u.start[v + 1] && !stored; u++)
                    stored = g->nodes[t->ix.u.ids[u]].region != p;
                pr->new_b += (rd[v] ? 0 : b) + (stored ? 0 : b);
                if (!rd[v]) sr_name(g, v, pr->reads, sizeof pr->reads);
                rd[v] = 2;
            }
        }
    }
    for (ir_id x = 0; x < g->n; x++) rd[x] = 0, need[x] = need[x] ? 1 : 0;
    double rate = pass_issue_rate(gpu);
    pr->issue_us = rate > 0 ? pr->instr * (double)ir_shape_numel(d) / rate : 1e30;
    pr->saved_us = (2.0 * (double)pr->cand_b - (double)pr->new_b) / (gpu->hbm_GBps * 1e3);
}

/* Chooses, in trial plan t, the values to recompute: cons[v] = the consumer region of each
 * accepted candidate v (cons[] all IR_NONE on entry). Says each priced pair on c->explain.
 * Returns how many candidates were accepted. */
static unsigned sr_choose(const sr_trial *t, const pass_ctx *c, uint32_t *cons) {
    const ir_graph *g = t->g;
    uint8_t *rd = ir_xcalloc(g->n, 1), *mine = ir_xcalloc(g->n, 1);
    unsigned taken = 0;
    for (uint32_t p = 0; p < g->nregions; p++) {
        if (g->regions[p].kind != IR_RK_REDUCTION) continue;
        const ir_shape *d = sr_domain(g, p);
        ir_id cv[SR_CAND_MAX];
        uint32_t cc[SR_CAND_MAX];
        unsigned nc = 0;
        for (uint32_t j = t->ix.rstart[p]; j < t->ix.rstart[p + 1] && nc < SR_CAND_MAX; j++) {
            ir_id v = t->ix.rids[j];
            uint32_t cr = sr_consumer(t, v, p, d);
            if (cr != IR_NONE) cv[nc] = v, cc[nc++] = cr;
        }
        for (unsigned k = 0; k < nc; k++) {
            if (cc[k] == IR_NONE) continue;
            uint32_t cr = cc[k];
            ir_id set[SR_CAND_MAX];
            unsigned ns = 0;
            for (unsigned j = k; j < nc; j++)
                if (cc[j] == cr) set[ns++] = cv[j], cc[j] = IR_NONE;
            sr_price pr;
            sr_price_pair(t, c->gpu, p, cr, set, ns, mine, rd, &pr);
            bool ok = pr.issue_us < pr.saved_us;
            char n1[64], n2[64], ds[128];
            snprintf(n1, sizeof n1, "%%%u", g->regions[p].anchor);
            snprintf(n2, sizeof n2, "%%%u", g->regions[cr].anchor);
            if (c->explain)
                fprintf(c->explain,
                        "[reduction.stats_recompute] the reduction kernel of %s over %s writes %s "
                        "(%.1f MB) read only by the %s kernel of %s: recomputing %u operation%s "
                        "there (reading %s) costs %.1f instructions per element, "
                        "%.3f us of issue, against %.3f us of HBM traffic saved (written and read "
                        "back, less %.1f MB read instead): %s\n",
                        n1, ir_shape_str(g, d, ds, sizeof ds), pr.names, pr.cand_b / 1e6,
                        ir_region_kind_name((ir_region_kind)g->regions[cr].kind), n2, pr.nops,
                        pr.nops == 1 ? "" : "s", pr.reads[0] ? pr.reads : "nothing new", pr.instr,
                        pr.issue_us, pr.saved_us, pr.new_b / 1e6,
                        ok ? "recomputed there, the reduction kernel stores its statistics instead"
                           : "stored");
            memset(mine, 0, g->n);
            for (unsigned j = 0; ok && j < ns; j++) cons[set[j]] = cr, taken++;
        }
    }
    free(rd);
    free(mine);
    return taken;
}

/* Copies into g (unplanned, node ids those of trial plan t, its first n0 nodes the originals)
 * the cones (sr_cone) of the candidates consumer region cr reads (cons[v] == cr), once each,
 * flagged IR_NF_RECOMPUTE, each copy reading the copies of its copied inputs, and makes cr's
 * reads of those candidates read the copies. Marks the copied originals in need[]; map: scratch
 * of n0 ids. */
static void sr_copy_for(ir_graph *g, const sr_trial *t, const uint32_t *cons, uint32_t cr,
                        uint32_t n0, uint8_t *need, ir_id *map) {
    uint8_t *mine = ir_xcalloc(n0, 1);
    for (ir_id v = 0; v < n0; v++) {
        if (cons[v] != cr) continue;
        uint32_t p = t->g->nodes[v].region;
        ir_id cone[SR_CONE_MAX];
        unsigned n = sr_cone(t->g, v, p, sr_domain(t->g, p), cone);
        for (unsigned j = 0; j < n; j++) mine[cone[j]] = 1;
    }
    for (ir_id x = 0; x < n0; x++) { /* ascending: a copy's copied inputs are copied first */
        map[x] = IR_NONE;
        if (!mine[x] || g->nodes[x].nin > 8) continue; /* elementwise: at most 3 inputs */
        ir_node o = g->nodes[x];
        ir_id ins[8];
        for (unsigned a = 0; a < o.nin; a++) {
            ir_id i = ir_in(g, &o, a);
            ins[a] = i < x && map[i] != IR_NONE ? map[i] : i;
        }
        map[x] = ir_add(g, (ir_op)o.op, (ir_dtype)o.dtype, &o.shape, ins, o.nin);
        ir_node *cp = &g->nodes[map[x]];
        cp->a = o.a, cp->line = o.line, cp->col = o.col, cp->name = o.name;
        cp->flags |= IR_NF_RECOMPUTE;
        need[x] = 1;
    }
    for (ir_id y = 0; y < n0; y++) { /* cr reads its copies */
        if (t->g->nodes[y].region != cr) continue;
        ir_node *n = &g->nodes[y];
        for (unsigned a = 0; a < n->nin; a++) {
            ir_id v = ir_in(g, n, a);
            if (v < n0 && cons[v] == cr && map[v] != IR_NONE) ir_set_in(g, n, a, map[v]);
        }
    }
    free(mine);
}

/* Rewrites g (unplanned, node ids those of trial plan t) for the choice cons[] (sr_choose): each
 * consumer region gets its own copies of the nodes its candidates need (sr_copy_for), so no copy
 * is read by two kernels; originals left without users are removed. The copies are placed before
 * their first reader (topological). */
static void sr_rewrite(ir_graph *g, const sr_trial *t, const uint32_t *cons) {
    uint32_t n0 = g->n;
    ir_id *map = ir_xmalloc((size_t)n0 * sizeof *map);
    uint8_t *need = ir_xcalloc(n0, 1), *done = ir_xcalloc(t->g->nregions + 1, 1);
    for (ir_id v = 0; v < n0; v++) {
        uint32_t cr = cons[v];
        if (cr >= t->g->nregions || done[cr]) continue;
        done[cr] = 1;
        sr_copy_for(g, t, cons, cr, n0, need, map);
    }
    ir_id *before = ir_xmalloc(((size_t)g->n - n0 + 1) * sizeof *before);
    ir_uses u;
    bool uses = ir_uses_build(g, &u);
    for (ir_id x = g->n; x-- > n0;) { /* each copy before its first reader among the originals */
        ir_id first = n0 - 1;         /* the output node */
        for (uint32_t k = uses ? u.start[x] : 0; uses && k < u.start[x + 1]; k++) {
            ir_id y = u.ids[k]; /* a copy reading x was appended after it: placed already */
            ir_id at = y >= n0 ? before[y - n0] : y;
            if (at < first) first = at;
        }
        before[x - n0] = first;
    }
    uint32_t dead = 0;
    for (ir_id x = n0; uses && x-- > 0;) { /* originals no longer read */
        if (!need[x]) continue;
        bool used = false;
        for (uint32_t k = u.start[x]; k < u.start[x + 1] && !used; k++)
            used = !(g->nodes[u.ids[k]].flags & IR_NF_DEAD);
        if (!used) g->nodes[x].flags |= IR_NF_DEAD, dead++;
    }
    if (uses) ir_uses_free(&u);
    pass_place_appended(g, n0, before);
    if (dead) (void)ir_compact(g);
    free(map);
    free(before);
    free(need);
    free(done);
}

/* True when every node flagged IR_NF_RECOMPUTE in planned trial t is read only inside its own
 * region (never returned): no kernel stores a copy. */
static bool sr_copies_internal(const sr_trial *t) {
    const ir_graph *g = t->g;
    for (ir_id x = 0; x < g->n; x++) {
        if (!(g->nodes[x].flags & IR_NF_RECOMPUTE)) continue;
        for (uint32_t k = t->ix.u.start[x]; k < t->ix.u.start[x + 1]; k++) {
            const ir_node *y = &g->nodes[t->ix.u.ids[k]];
            if (y->op == IR_OP_OUTPUT) return false;
            if ((ir_op_traits((ir_op)y->op) & IR_T_VIEW) || y->region != g->nodes[x].region)
                return false; /* a view may be read by another kernel */
        }
    }
    return true;
}

bool pass_stats_recompute(ir_graph *g, pass_ctx *c) {
    if (c->no_fuse || c->no_stats_recompute || !c->gpu || c->gpu->hbm_GBps <= 0 || !sr_maybe(g))
        return false;
    for (ir_id x = 0; x < g->n; x++) /* once per graph: a planned graph keeps its copies */
        if (g->nodes[x].flags & IR_NF_RECOMPUTE) return false;
    sr_trial t0, t1;
    if (!sr_plan(g, c, &t0)) return false;
    bool changed = false;
    uint32_t *cons = ir_xmalloc(((size_t)g->n + 1) * sizeof *cons);
    for (ir_id x = 0; x < g->n; x++) cons[x] = IR_NONE;
    if (t0.g->n == g->n && t0.us >= 0 && sr_choose(&t0, c, cons)) {
        ir_graph *h = ir_graph_clone(g);
        if (h) {
            sr_rewrite(h, &t0, cons);
            if (sr_plan(h, c, &t1)) {
                bool internal = sr_copies_internal(&t1);
                changed = internal && t1.us >= 0 && t1.us < t0.us;
                if (c->explain)
                    fprintf(c->explain,
                            "[reduction.stats_recompute] planned with the copies: %u kernels, "
                            "predicted %.3f us, against %u kernels, %.3f us without%s: %s\n",
                            t1.g->nregions, t1.us, t0.g->nregions, t0.us,
                            internal ? "" : " (a kernel would store a copy)",
                            changed ? "copies kept" : "copies dropped");
                sr_free(&t1);
            }
            ir_graph_free(h);
        }
        if (changed) sr_rewrite(g, &t0, cons);
    }
    free(cons);
    sr_free(&t0);
    return changed;
}
