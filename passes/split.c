/* split.c - [reduction.split_axes]: a reduction over axes that are not one trailing run (the
 * innermost axis reduced together with outer axes it is not adjacent to: BatchNorm1d's (0, 2) of
 * [B, C, L]) reads each "row" as a strided gather, B runs of L contiguous elements, with a
 * division per element and no vector loads. It becomes two reductions of the same op: first
 * over the trailing run of reduced axes (contiguous rows: the row schedules, vector loads), then
 * over the remaining outer axes of that small result (a column reduction). sum, mean, max and min
 * of f32 compose this way exactly up to rounding (a mean of equal-sized means is the mean). */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest contiguous trailing run, in elements, worth a row of its own: one warp's row; the
 * intermediate is then at most 1/32 of the input (its write and re-read cost ~6% of the read). */
enum { SPLIT_MIN_RUN = 32 };

/* The trailing run of node n's reduced axes: the bitmask T of the maximal run of reduced axes
 * ending at the innermost axis (0 when the innermost axis is kept), *run its element count (-1
 * when a dim is symbolic). */
static uint32_t trailing_run(const ir_graph *g, const ir_node *n, int64_t *run) {
    const ir_shape *s = &g->nodes[ir_in(g, n, 0)].shape;
    uint32_t t = 0;
    *run = 1;
    for (int a = (int)s->rank - 1; a >= 0 && (n->a.red.axes & (1u << a)); a--) {
        t |= 1u << a;
        if (IR_DIM_IS_SYM(s->dim[a]) || *run < 0)
            *run = -1;
        else
            *run *= s->dim[a];
    }
    return t;
}

/* True when node i is a reduction [reduction.split_axes] rewrites: sum, mean, max or min of f32
 * whose reduced axes are the trailing run T (at least SPLIT_MIN_RUN concrete elements) and
 * at least one outer axis not adjacent to T. */
static bool splittable(const ir_graph *g, ir_id i, uint32_t *t, int64_t *run) {
    const ir_node *n = &g->nodes[i];
    if (n->op != IR_OP_SUM && n->op != IR_OP_MEAN && n->op != IR_OP_MAX && n->op != IR_OP_MIN)
        return false;
    if (n->dtype != IR_F32 || n->nin != 1) return false;
    *t = trailing_run(g, n, run);
    return *t && (n->a.red.axes & ~*t) && *run >= SPLIT_MIN_RUN;
}

/* Says the rewrite of node i (its trailing run of `run` elements) on c->explain. */
static void say_split(const ir_graph *g, const pass_ctx *c, ir_id i, int64_t run) {
    if (!c || !c->explain) return;
    const ir_node *n = &g->nodes[i];
    const ir_shape *s = &g->nodes[ir_in(g, n, 0)].shape;
    char b1[128], ax[64];
    int k = 0;
    for (int a = 0; a < s->rank && k < (int)sizeof ax - 8; a++)
        if (n->a.red.axes & (1u << a))
            k += snprintf(ax + k, sizeof ax - (size_t)k, "%s%d", k ? ", " : "", a);
    int64_t numel = ir_shape_numel(s), rows = numel > 0 && run > 0 ? numel / run : -1;
    fprintf(c->explain,
            "%u:%u: [reduction.split_axes] %s over axes (%s) of %s: each row is %lld strided runs "
            "of %lld contiguous elements; reduced first over the run (%lld contiguous rows), then "
            "over the outer axes of that result (%lld B, 1/%lld of the input)\n",
            n->line, n->col, ir_op_name((ir_op)n->op), ax, ir_shape_str(g, s, b1, sizeof b1),
            (long long)(rows > 0 && ir_shape_numel(&n->shape) > 0 ? rows / ir_shape_numel(&n->shape)
                                                                  : -1),
            (long long)run, (long long)rows, (long long)(rows > 0 ? rows * 4 : -1), (long long)run);
}

/* Records that the node appended next is placed before node i (pass_place_appended). */
static void place_before(ir_id **before, uint32_t *nb, uint32_t *cap, ir_id i) {
    if (*nb + 1 > *cap) *before = ir_xrealloc(*before, (*cap = *cap * 2 + 8) * sizeof **before);
    (*before)[(*nb)++] = i;
}

/* Most elementwise nodes a split reduction's prologue copies (split_prologue). */
enum { SPLIT_MAX_PRO = 16, SPLIT_MAX_IN = 4 };

/* Whether node v is a prologue node of a reduction over shape s: elementwise (at most
 * SPLIT_MAX_IN inputs), computed, of shape s. */
static bool pro_node(const ir_graph *g, ir_id v, const ir_shape *s) {
    const ir_node *n = &g->nodes[v];
    return (ir_op_traits((ir_op)n->op) & IR_T_ELEM) && n->nin && n->nin <= SPLIT_MAX_IN &&
           !ir_is_gen(g, v) && ir_shape_eq(&n->shape, s);
}

/* The prologue of reduction i (input x of shape s): the elementwise nodes of shape s it reaches
 * backwards from x through such nodes, ascending (topological) into pro; returns their count, 0
 * when there are more than SPLIT_MAX_PRO, or when they read more than one value of s's element
 * count from outside (recomputing them then reads more than storing them once). */
static unsigned prologue_of(const ir_graph *g, ir_id x, const ir_shape *s, ir_id *pro) {
    if (!pro_node(g, x, s)) return 0;
    unsigned np = 0, nbig = 0;
    ir_id big = IR_NONE;
    pro[np++] = x;
    for (unsigned k = 0; k < np; k++) {
        const ir_node *n = &g->nodes[pro[k]];
        for (unsigned a = 0; a < n->nin; a++) {
            ir_id v = ir_in(g, n, a);
            bool seen = false;
            for (unsigned j = 0; j < np; j++) seen |= pro[j] == v;
            if (seen) continue;
            if (pro_node(g, v, s)) {
                if (np == SPLIT_MAX_PRO) return 0;
                pro[np++] = v;
            } else if (!ir_is_gen(g, v) &&
                       ir_shape_numel(&g->nodes[v].shape) == ir_shape_numel(s) && v != big) {
                big = v;
                if (++nbig > 1) return 0;
            }
        }
    }
    for (unsigned a = 1; a < np; a++) /* ascending ids: inputs before users */
        for (unsigned b = a; b > 0 && pro[b - 1] > pro[b]; b--) {
            ir_id t = pro[b];
            pro[b] = pro[b - 1], pro[b - 1] = t;
        }
    return np;
}

/* Whether a node of pro[0..np) has a user other than pro's nodes and reduction i. */
static bool used_outside(const ir_uses *u, const ir_id *pro, unsigned np, ir_id i) {
    for (unsigned k = 0; k < np; k++)
        for (uint32_t j = u->start[pro[k]]; j < u->start[pro[k] + 1]; j++) {
            ir_id w = u->ids[j];
            bool in = w == i;
            for (unsigned m = 0; m < np; m++) in |= pro[m] == w;
            if (!in) return true;
        }
    return false;
}

/* [reduction.split_prologue] The value the inner reduction of split reduction i reads: x itself,
 * or, when x's prologue (prologue_of) is also used outside it (BatchNorm's d = x - mu, reduced
 * as d * d and normalised as d * rsqrt(var)), a private copy of it appended to g (ids recorded
 * in before[] as placed before i): the inner row reduction and the later consumer then both
 * recompute it from the one input they read instead of the reduction's kernel storing it for
 * the consumer's (an extra write of the whole domain). */
static ir_id split_prologue(ir_graph *g, const pass_ctx *c, const ir_uses *u, ir_id i, ir_id x,
                            ir_id **before, uint32_t *nb, uint32_t *cap) {
    ir_id pro[SPLIT_MAX_PRO], map[SPLIT_MAX_PRO];
    ir_shape s = g->nodes[x].shape;
    unsigned np = prologue_of(g, x, &s, pro);
    if (!np || !used_outside(u, pro, np, i)) return x;
    for (unsigned k = 0; k < np; k++) {
        ir_node n = g->nodes[pro[k]];
        ir_id ins[SPLIT_MAX_IN];
        for (unsigned a = 0; a < n.nin; a++) {
            ir_id v = ir_in(g, &n, a);
            ins[a] = v;
            for (unsigned m = 0; m < k; m++)
                if (pro[m] == v) ins[a] = map[m];
        }
        map[k] = ir_add(g, (ir_op)n.op, (ir_dtype)n.dtype, &n.shape, ins, n.nin);
        ir_node *d = &g->nodes[map[k]];
        d->a = n.a, d->line = n.line, d->col = n.col;
        place_before(before, nb, cap, i);
    }
    if (c && c->explain)
        fprintf(c->explain,
                "%u:%u: [reduction.split_prologue] the %u elementwise node%s before the split "
                "reduction are also read by another kernel: its row reduction recomputes them "
                "from the input rather than storing them for that kernel\n",
                g->nodes[i].line, g->nodes[i].col, np, np == 1 ? "" : "s");
    return map[np - 1];
}

/* The value behind a chain of reshapes and broadcasts starting at x. */
static ir_id skip_views(const ir_graph *g, ir_id x) {
    while ((g->nodes[x].op == IR_OP_RESHAPE || g->nodes[x].op == IR_OP_BROADCAST) &&
           g->nodes[x].nin == 1)
        x = ir_in(g, &g->nodes[x], 0);
    return x;
}

/* The pilot of a split variance over the axes A of x, appended to g: per output (each kept
 * index), x's first element over A (index 0 on every axis of A) when finite, else 0 (an output
 * holding inf or NaN there then gets what unshifted statistics give), reshaped to `to` (x's
 * kept shape with 1s, in the layout the statistics read it) when that differs. */
static ir_id split_pilot(ir_graph *g, ir_id x, uint32_t axes, const ir_shape *to) {
    ir_id p = x;
    for (int a = 0; a < g->nodes[x].shape.rank; a++)
        if (axes & (1u << a)) p = ir_add_slice(g, p, a, 0, 1);
    ir_id ok = ir_add_binary(g, IR_OP_LT, ir_add_unary(g, IR_OP_ABS, p),
                             ir_add_const(g, INFINITY, IR_F32));
    p = ir_add_where(g, ok, p, ir_add_const(g, 0.0, IR_F32));
    return ir_shape_eq(&g->nodes[p].shape, to) ? p : ir_add_reshape(g, p, to);
}

/* The split statistics of xs (f32) about the pilot p (xs's shape with 1 on the axes in | out),
 * appended to g: d = xs - p; the chunk statistics m = mean(d, in), q = mean((d - m)^2, in) and a
 * copy of p per chunk, max(broadcast(p), in), are one two-stage reduction over `in` (one read of
 * xs; the combine then reads partials, not xs); md = mean(m, out), the mean *mu = md +
 * max(p copies, out), and the variance returned, mean(q + (m - md)^2, out): Chan's combine of
 * equal-count chunks (exact). Every partial is a statistic of values the size of the spread of xs
 * about p, not of its mean (x - p is exact where x and p are within a factor 2), and the mean is
 * rounded once at its own magnitude. *nmu: g->n after the nodes of *mu. */
static ir_id split_stats(ir_graph *g, ir_id xs, ir_id p, uint32_t in, uint32_t out, ir_id *mu,
                         uint32_t *nmu) {
    ir_id d = ir_add_binary(g, IR_OP_SUB, xs, p);
    ir_id m = ir_add_reduce(g, IR_OP_MEAN, d, in, true);
    ir_id e = ir_add_binary(g, IR_OP_SUB, d, m);
    ir_id q = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, e, e), in, true);
    ir_shape sx = g->nodes[xs].shape;
    ir_id pk = ir_add_reduce(g, IR_OP_MAX, ir_add_broadcast(g, p, &sx), in, true);
    ir_id md = ir_add_reduce(g, IR_OP_MEAN, m, out, true);
    *mu = ir_add_binary(g, IR_OP_ADD, md, ir_add_reduce(g, IR_OP_MAX, pk, out, true));
    *nmu = g->n;
    ir_id dm = ir_add_binary(g, IR_OP_SUB, m, md);
    ir_id t = ir_add_binary(g, IR_OP_ADD, q, ir_add_binary(g, IR_OP_MUL, dm, dm));
    return ir_add_reduce(g, IR_OP_MEAN, t, out, true);
}

/* Turns node i into a reshape of y (its shape, name and users kept). */
static void become_reshape(ir_graph *g, ir_id i, ir_id y) {
    ir_node *n = &g->nodes[i];
    n->op = IR_OP_RESHAPE;
    memset(&n->a, 0, sizeof n->a);
    ir_set_in(g, n, 0, y);
}

/* The mean mu of the variance v = mean((x - mu)^2, A, keepdim=true) with mu = mean(x, A,
 * keepdim=true) of the same x (through views; the square as d * d or pow(d, 2)), mu already
 * split over the trailing run t of A (mu reduces inner[mu] = mean(x, t) over A \ t), and that x
 * in *x; IR_NONE when v is not one. */
static ir_id var_mean(const ir_graph *g, ir_id v, uint32_t t, const ir_id *inner, ir_id *x) {
    const ir_node *n = &g->nodes[v];
    if (n->op != IR_OP_MEAN || !n->a.red.keepdim) return IR_NONE;
    const ir_node *p = &g->nodes[ir_in(g, n, 0)];
    if (p->nin != 2) return IR_NONE;
    ir_id d = ir_in(g, p, 0), e = ir_in(g, p, 1);
    bool sq = p->op == IR_OP_MUL   ? d == e
              : p->op == IR_OP_POW ? g->nodes[e].op == IR_OP_CONST && g->nodes[e].a.cval == 2.0
                                   : false;
    const ir_node *dn = &g->nodes[d];
    if (!sq || dn->op != IR_OP_SUB || !ir_shape_eq(&dn->shape, &p->shape)) return IR_NONE;
    ir_id mu = skip_views(g, ir_in(g, dn, 1));
    const ir_node *mn = &g->nodes[mu];
    *x = ir_in(g, dn, 0);
    if (mn->op != IR_OP_MEAN || !mn->a.red.keepdim || inner[mu] == IR_NONE ||
        (mn->a.red.axes | t) != n->a.red.axes || ir_in(g, &g->nodes[inner[mu]], 0) != *x ||
        !ir_shape_eq(&g->nodes[*x].shape, &p->shape))
        return IR_NONE;
    return mu;
}

/* [reduction.split_var] Variance v = mean((x - mu)^2, A) whose mean mu was split into m =
 * mean(x, T) and mean(m, A \ T) (inner[mu] = m): both become split_stats of x about the pilot of
 * each output (split_pilot over A), in = T, out = A \ T: the law of total variance over the
 * equal-sized runs, each run's statistics one two-stage row reduction (one read of x), about the
 * pilot (no cancellation of large means); mu and v become reshapes of the combined mean and
 * variance (m is left unused). Nodes for mu go before mu, the rest before v. Returns false
 * (nothing changed) when v is not such a variance. */
static bool split_var(ir_graph *g, const pass_ctx *c, ir_id v, uint32_t t, const ir_id *inner,
                      ir_id **before, uint32_t *nb, uint32_t *cap) {
    ir_id x, mu = var_mean(g, v, t, inner, &x);
    if (mu == IR_NONE) return false;
    uint32_t n0 = g->n, nmu, axes = g->nodes[v].a.red.axes;
    ir_shape ps = g->nodes[v].shape;
    ir_id mus, var = split_stats(g, x, split_pilot(g, x, axes, &ps), t, axes & ~t, &mus, &nmu);
    for (uint32_t j = n0; j < g->n; j++) {
        g->nodes[j].line = g->nodes[v].line, g->nodes[j].col = g->nodes[v].col;
        place_before(before, nb, cap, j < nmu ? mu : v);
    }
    become_reshape(g, mu, mus);
    become_reshape(g, v, var);
    if (c && c->explain)
        fprintf(c->explain,
                "%u:%u: [reduction.split_var] the variance of the split mean %%%u: each run's "
                "mean and mean of squared deviations about the output's first element, computed "
                "in one read of the rows, then combined with the runs' spread (m - mu)^2 and the "
                "shift added back to the mean\n",
                g->nodes[v].line, g->nodes[v].col, mu);
    return true;
}

/* [reduction.split_column_var] thresholds: a column variance over the axes A (the innermost
 * kept) with fewer than COLVAR_KEPT_MAX kept elements reads the run of adjacent axes of A ending
 * at its innermost one (N elements) as S chunks of at least COLVAR_RUN_MIN elements (S a power of
 * two dividing N; 1 when A has axes before the run, whose indices then tell the chunks apart), S
 * the smallest giving 2 x SMs blocks of COLVAR_BLOCK_COLS columns, else the largest. */
enum { COLVAR_KEPT_MAX = 4096, COLVAR_RUN_MIN = 32, COLVAR_BLOCK_COLS = 128, COLVAR_SMS = 132 };

/* The chunks S >= s0 of the reduced run (n elements; k = the elements of x over n, the columns
 * of one chunk per index of the other reduced axes) for split_column_var; 0: none. */
static int64_t colvar_chunks(const pass_ctx *c, int64_t n, int64_t k, int64_t s0) {
    int64_t want = 2LL * (c && c->gpu ? c->gpu->sms : COLVAR_SMS) * COLVAR_BLOCK_COLS, best = 0;
    for (int64_t s = s0; n % s == 0 && n / s >= COLVAR_RUN_MIN; s *= 2) {
        best = s;
        if (s * k >= want) break;
    }
    return best;
}

/* The mean mu of a column variance v = mean((x - mu)^2, A) with mu = mean(x, A) of the same x,
 * both keepdim, A a non-empty set of axes without the innermost one, concrete shapes of rank <
 * IR_MAX_RANK, f32, fewer than COLVAR_KEPT_MAX kept elements or columns the planner keeps
 * apart from a later stage over them (pass_column_few on c's GPU: the mean's kernel and the
 * variance's each read x, the variance's twice when it also normalises); *a the innermost axis
 * of A; IR_NONE when v is not one. */
static ir_id colvar_mean(const ir_graph *g, const pass_ctx *c, ir_id v, int *a) {
    const ir_node *n = &g->nodes[v];
    if (n->op != IR_OP_MEAN || !n->a.red.keepdim || n->dtype != IR_F32) return IR_NONE;
    const ir_node *p = &g->nodes[ir_in(g, n, 0)];
    const ir_shape *s = &p->shape;
    uint32_t ax = n->a.red.axes;
    if (!ax || s->rank >= IR_MAX_RANK || (ax >> (s->rank - 1)) || p->nin != 2) return IR_NONE;
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i])) return IR_NONE;
    if (ir_shape_numel(&n->shape) >= COLVAR_KEPT_MAX && !pass_column_few(s, ax, pass_ctx_gpu(c)))
        return IR_NONE;
    *a = s->rank - 1;
    while (!(ax & (1u << *a))) (*a)--;
    ir_id d = ir_in(g, p, 0), e = ir_in(g, p, 1);
    bool sq = p->op == IR_OP_MUL   ? d == e
              : p->op == IR_OP_POW ? g->nodes[e].op == IR_OP_CONST && g->nodes[e].a.cval == 2.0
                                   : false;
    const ir_node *dn = &g->nodes[d];
    if (!sq || dn->op != IR_OP_SUB || !ir_shape_eq(&dn->shape, s)) return IR_NONE;
    ir_id mu = skip_views(g, ir_in(g, dn, 1)), x = ir_in(g, dn, 0);
    const ir_node *mn = &g->nodes[mu];
    if (mn->op != IR_OP_MEAN || !mn->a.red.keepdim || mn->a.red.axes != ax ||
        ir_in(g, mn, 0) != x || !ir_shape_eq(&g->nodes[x].shape, s))
        return IR_NONE;
    return mu;
}

/* The axes of A (bitmask, rank r) as "0, 2" into buf (cap bytes). */
static void axes_str(uint32_t axes, int r, char *buf, size_t cap) {
    int k = 0;
    buf[0] = 0;
    for (int i = 0; i < r && k < (int)cap - 8; i++)
        if (axes & (1u << i)) k += snprintf(buf + k, cap - (size_t)k, "%s%d", k ? ", " : "", i);
}

/* Says split_column_var's rewrite of v (the variance of x over `axes`, the run of axes `run`, n
 * elements, read as S chunks, k elements of x over the run) on c->explain. */
static void say_column_var(const ir_graph *g, const pass_ctx *c, ir_id v, ir_id x, uint32_t axes,
                           uint32_t run, int64_t n, int64_t S, int64_t k) {
    if (!c || !c->explain) return;
    char ax[64], rn[64];
    axes_str(axes, g->nodes[x].shape.rank, ax, sizeof ax);
    axes_str(run, g->nodes[x].shape.rank, rn, sizeof rn);
    fprintf(c->explain,
            "%u:%u: [reduction.split_column_var] mean and variance over axes (%s) of %%%u (%lld "
            "kept): each column shifted by its first element and axes (%s) (%lld long) read as "
            "%lld chunk%s of %lld (%lld columns of one read for both statistics, 2 x %lld SMs x "
            "%d wanted), the chunks' means and variances then combined (mean of the variances + "
            "variance of the means; the shift added back to the mean)\n",
            g->nodes[v].line, g->nodes[v].col, ax, x, (long long)ir_shape_numel(&g->nodes[v].shape),
            rn, (long long)n, (long long)S, S == 1 ? "" : "s", (long long)(n / S),
            (long long)(S * k), (long long)(c && c->gpu ? c->gpu->sms : COLVAR_SMS),
            (int)COLVAR_BLOCK_COLS);
}

/* True unless TX_SPLIT_COLVAR is set to 0 (an A/B knob: [reduction.split_column_var] off). */
static bool colvar_on(void) {
    const char *e = getenv("TX_SPLIT_COLVAR");
    return !e || strcmp(e, "0") != 0;
}

/* x's shape xs with the axes a0..a merged into (S, n / S) (S = 1: one axis of n) into *sp. */
static void colvar_shape(const ir_shape *xs, int a0, int a, int64_t n, int64_t S, ir_shape *sp) {
    int j = 0;
    for (int i = 0; i < xs->rank; i++) {
        if (i < a0 || i > a)
            sp->dim[j++] = xs->dim[i];
        else if (i == a0 && S > 1)
            sp->dim[j++] = S, sp->dim[j++] = n / S;
        else if (i == a0)
            sp->dim[j++] = n;
    }
    sp->rank = (uint8_t)j;
}

/* [reduction.split_column_var] A column variance v = mean((x - mu)^2, A), mu = mean(x, A), of
 * few kept elements (colvar_mean): the column kernels would run few blocks, each streaming a
 * column of all of A (and the variance's kernel stores the normalised values too: no
 * column_blocks). The run a0..a of adjacent axes of A ending at its innermost axis a (contiguous:
 * one axis of n elements) is read as (S, n / S) (S = 1: one axis; only when A has axes before the
 * run) in xs = reshape(x); mu and v become reshapes of the split_stats of xs about the column's
 * pilot (split_pilot over A), in = the n / S part (a chunk: one two-stage column reduction of
 * S x numel / n columns, Welford, one read of x), out = A's axes before the run and the S chunks
 * (the combine of the partials). Nodes for mu go before mu, the rest before v. Returns false
 * (nothing changed) when v is not such a variance or the rule is off (colvar_on). */
static bool split_column_var(ir_graph *g, const pass_ctx *c, ir_id v, ir_id **before, uint32_t *nb,
                             uint32_t *cap) {
    int a, a0;
    ir_id mu = colvar_on() ? colvar_mean(g, c, v, &a) : IR_NONE;
    if (mu == IR_NONE) return false;
    ir_id x = ir_in(g, &g->nodes[mu], 0);
    ir_shape xs = g->nodes[x].shape, sp, sp1;
    uint32_t axes = g->nodes[v].a.red.axes;
    int64_t n = 1;
    for (a0 = a; a0 >= 0 && (axes & (1u << a0)); a0--) n *= xs.dim[a0];
    a0++;
    uint32_t before_run = axes & ((1u << a0) - 1);
    int64_t k = ir_shape_numel(&xs) / n, S = colvar_chunks(c, n, k, before_run ? 1 : 2);
    if (S < 1) return false;
    colvar_shape(&xs, a0, a, n, S, &sp);
    uint32_t in = S > 1 ? 1u << (a0 + 1) : 1u << a0, out = before_run | (S > 1 ? 1u << a0 : 0);
    sp1 = sp;
    for (int i = 0; i < sp1.rank; i++)
        if ((in | out) & (1u << i)) sp1.dim[i] = 1;
    uint32_t n0 = g->n, nmu;
    ir_id xsr = ir_shape_eq(&sp, &xs) ? x : ir_add_reshape(g, x, &sp), mus;
    ir_id var = split_stats(g, xsr, split_pilot(g, x, axes, &sp1), in, out, &mus, &nmu);
    for (uint32_t j = n0; j < g->n; j++) {
        g->nodes[j].line = g->nodes[v].line, g->nodes[j].col = g->nodes[v].col;
        place_before(before, nb, cap, j < nmu ? mu : v);
    }
    become_reshape(g, mu, mus);
    become_reshape(g, v, var);
    say_column_var(g, c, v, x, axes, axes & ~before_run, n, S, k);
    return true;
}

/* [reduction.split_axes] on every splittable reduction i of g: a new reduction over its trailing
 * run T (same op, same keepdim; of a private prologue, split_prologue) is placed before i, and i
 * reduces that result over its other axes (their positions do not move: T is trailing); i keeps
 * its id, name, shape and users. Nodes left unused are removed (pass_dce). Returns true when a
 * reduction was split. */
bool pass_split(ir_graph *g, pass_ctx *c) {
    uint32_t n0 = g->n, nb = 0, cap = 0;
    ir_id *before = NULL, *inner = ir_xmalloc((size_t)n0 * sizeof *inner);
    ir_uses u;
    if (!ir_uses_build(g, &u)) {
        free(inner);
        return false;
    }
    bool any = false;
    for (ir_id i = 0; i < n0; i++) {
        uint32_t t;
        int64_t run;
        inner[i] = IR_NONE;
        if (split_column_var(g, c, i, &before, &nb, &cap)) {
            any = true;
            continue;
        }
        if (!splittable(g, i, &t, &run)) continue;
        say_split(g, c, i, run);
        any = true;
        if (split_var(g, c, i, t, inner, &before, &nb, &cap)) continue;
        ir_op op = (ir_op)g->nodes[i].op;
        bool keep = g->nodes[i].a.red.keepdim != 0;
        ir_id x = split_prologue(g, c, &u, i, ir_in(g, &g->nodes[i], 0), &before, &nb, &cap);
        ir_id in = ir_add_reduce(g, op, x, t, keep); /* may move the node array */
        ir_node *n = &g->nodes[i];
        g->nodes[in].line = n->line, g->nodes[in].col = n->col;
        ir_set_in(g, n, 0, in);
        n->a.red.axes &= ~t;
        place_before(&before, &nb, &cap, i);
        inner[i] = in;
    }
    ir_uses_free(&u);
    pass_place_appended(g, n0, before);
    free(before);
    free(inner);
    if (any) pass_dce(g, c);
    return any;
}
