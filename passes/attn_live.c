/* attn_live.c - [attention.block_sparse]'s price: the share of the score tiles an attention
 * kernel visits. codegen/attention.c (attn_key_range) visits, for each block of query rows, the
 * key tiles from the first to the last one with a score that is not -inf, deciding at run time
 * from an interval evaluation of the score function F over the tile (iv_eval). This file runs the
 * same interval rules at compile time over every (query tile, key tile) pair with the values the
 * planner knows: iota positions, scalar constants, and every batch index at once. A value known
 * only at run time (a length per sequence, a mask input) is unknown here, so a mask built from
 * it is priced dense although the kernel may skip more; a mask of positions and constants
 * (causal, sliding window, prefix) is priced as the kernel runs it. */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An interval over a tile, as codegen's attn_iv: bounds of an int (lo, hi), of a float, or for a
 * bool whether it may be false (lo != 0) and may be true (hi != 0); top: nothing known. */
typedef struct al_iv {
    bool top;
    uint8_t kind; /* 0 int, 1 float, 2 bool */
    double lo, hi;
} al_iv;

/* The walk's state: the graph, the product, the scores' rank and batch extents, the tile. */
typedef struct al_ctx {
    const ir_graph *g;
    ir_id mm1;
    unsigned R;            /* rank of the scores: batch axes, rows, keys */
    const ir_shape *ss;    /* the scores' shape */
    double r0, r1, c0, c1; /* the tile: rows [r0, r1], keys [c0, c1] (inclusive) */
    unsigned walk;         /* node visits left (the budget codegen's walk has too) */
} al_ctx;

enum { AL_WALK_MAX = 4096, AL_DEPTH_MAX = 64, AL_PAIRS_MAX = 1 << 16 };

static al_iv al_top(void) { return (al_iv){.top = true}; }
static al_iv al_int(double lo, double hi) { return (al_iv){false, 0, lo, hi}; }
static al_iv al_bool(bool may_false, bool may_true) {
    return (al_iv){false, 2, may_false ? 1 : 0, may_true ? 1 : 0};
}

/* An iota's bounds over the tile: its axis maps, trailing-aligned, to the rows, the keys or a
 * batch axis (every index of a batch axis at once). */
static al_iv al_iota(const al_ctx *x, const ir_node *n) {
    unsigned r = n->shape.rank, ax = (unsigned)n->a.axis;
    if (r > x->R) return al_top();
    if (n->shape.dim[ax] == 1) return al_int(0, 0);
    unsigned sa = ax + x->R - r;
    if (sa == x->R - 2) return al_int(x->r0, x->r1);
    if (sa == x->R - 1) return al_int(x->c0, x->c1);
    ir_dim e = x->ss->dim[sa];
    return IR_DIM_IS_SYM(e) || e < 1 ? al_top() : al_int(0, (double)(e - 1));
}

/* Whether an int comparison may be true (*t) and may be false (*f) (codegen's iv_cmp). */
static void al_cmp(ir_op op, const al_iv *a, const al_iv *b, bool *t, bool *f) {
    switch (op) {
        case IR_OP_LT: *t = a->lo < b->hi, *f = a->hi >= b->lo; break;
        case IR_OP_LE: *t = a->lo <= b->hi, *f = a->hi > b->lo; break;
        case IR_OP_GT: *t = a->hi > b->lo, *f = a->lo <= b->hi; break;
        case IR_OP_GE: *t = a->hi >= b->lo, *f = a->lo < b->hi; break;
        default: { /* EQ, NE */
            bool meet = a->lo <= b->hi && b->lo <= a->hi;
            bool one = a->lo == a->hi && b->lo == b->hi && a->lo == b->lo;
            *t = op == IR_OP_EQ ? meet : !one;
            *f = op == IR_OP_EQ ? !one : meet;
        }
    }
}

/* where(c, a, b) over the tile, one side possibly unknown (the scores): codegen's rule. */
static al_iv al_where(const al_iv x[3]) {
    bool cf = x[0].lo != 0, ct = x[0].hi != 0;
    if (x[1].top || x[2].top) {
        if (x[1].top == x[2].top) return al_top();
        const al_iv *kn = x[1].top ? &x[2] : &x[1];
        if (kn->kind != 1) return al_top();
        bool unk = x[1].top ? ct : cf; /* c may pick the unknown side */
        return unk ? (al_iv){false, 1, -INFINITY, INFINITY} : *kn;
    }
    if (x[1].kind != x[2].kind) return al_top();
    if (!ct) return x[2];
    if (!cf) return x[1];
    if (x[1].kind == 2) return al_bool(x[1].lo != 0 || x[2].lo != 0, x[1].hi != 0 || x[2].hi != 0);
    return (al_iv){false, x[1].kind, fmin(x[1].lo, x[2].lo), fmax(x[1].hi, x[2].hi)};
}

/* See passes.h. */
int pass_attn_pos_scale(const ir_graph *g, ir_id id, double *m) {
    const ir_node *n = &g->nodes[id];
    if ((n->op != IR_OP_MUL && n->op != IR_OP_DIV) || n->nin != 2 || n->dtype != IR_F32) return -1;
    for (unsigned k = 0; k < 2; k++) {
        double c;
        if (n->op == IR_OP_DIV && k == 0) continue; /* the divisor only */
        const ir_node *kn = &g->nodes[ir_in(g, n, k)];
        if (kn->op != IR_OP_CONST || kn->shape.rank != 0) continue;
        c = kn->a.cval;
        if (!isfinite(c) || !(c > 0)) continue;
        *m = n->op == IR_OP_DIV ? 1.0 / c : c;
        return 1 - (int)k;
    }
    return -1;
}

/* The interval of node id over the tile (codegen/attention.c iv_eval's rules at compile time). */
static al_iv al_eval(al_ctx *x, ir_id id, unsigned depth) {
    const ir_graph *g = x->g;
    const ir_node *n = &g->nodes[id];
    if (depth > AL_DEPTH_MAX || id == x->mm1 || x->walk == 0) return al_top();
    x->walk--;
    ir_op op = (ir_op)n->op;
    if (op == IR_OP_IOTA) return al_iota(x, n);
    if (op == IR_OP_CONST) {
        if (n->shape.rank != 0) return al_top();
        double v = n->a.cval;
        if (n->dtype == IR_BOOL) return al_bool(v == 0, v != 0);
        return (al_iv){false, n->dtype == IR_I32 ? 0 : 1, v, v};
    }
    if (op == IR_OP_BROADCAST) return al_eval(x, ir_in(g, n, 0), depth + 1);
    if (!(ir_op_traits(op) & IR_T_ELEM) || n->nin > 3) return al_top();
    al_iv a[3];
    bool logic = op == IR_OP_AND || op == IR_OP_OR;
    for (unsigned k = 0; k < n->nin; k++) {
        a[k] = al_eval(x, ir_in(g, n, k), depth + 1);
        if (a[k].top && logic) a[k] = al_bool(true, true); /* a mask input: either */
        if (a[k].top && !(op == IR_OP_WHERE && k > 0)) return al_top();
    }
    switch (op) {
        case IR_OP_WHERE: return a[0].kind == 2 ? al_where(a) : al_top();
        case IR_OP_AND: return al_bool(a[0].lo != 0 || a[1].lo != 0, a[0].hi != 0 && a[1].hi != 0);
        case IR_OP_OR: return al_bool(a[0].lo != 0 && a[1].lo != 0, a[0].hi != 0 || a[1].hi != 0);
        case IR_OP_NOT: return al_bool(a[0].hi != 0, a[0].lo != 0);
        case IR_OP_CAST:
            if (!ir_dtype_is_float((ir_dtype)n->dtype) || a[0].kind == 2) return al_top();
            return (al_iv){false, 1, a[0].lo, a[0].hi};
        default: break;
    }
    double sm;
    int si = pass_attn_pos_scale(g, id, &sm);
    if (si >= 0 && a[si].kind == 1) return (al_iv){false, 1, a[si].lo * sm, a[si].hi * sm};
    if (ir_op_traits(op) & IR_T_CMP) {
        if (a[0].kind != 0 || a[1].kind != 0) return al_top();
        bool t, f;
        al_cmp(op, &a[0], &a[1], &t, &f);
        return al_bool(f, t);
    }
    if (n->nin == 2 && a[0].kind == 0 && a[1].kind == 0 && n->dtype == IR_I32) {
        if (op == IR_OP_ADD) return al_int(a[0].lo + a[1].lo, a[0].hi + a[1].hi);
        if (op == IR_OP_SUB) return al_int(a[0].lo - a[1].hi, a[0].hi - a[1].lo);
    }
    return al_top();
}

/* True when F (from node id down to the product mm1) holds a where or reads an input other than
 * through the product: a mask or a bias that may make scores -inf. */
static bool al_masked(const ir_graph *g, ir_id mm1, ir_id id, uint8_t *seen, unsigned *budget) {
    if (id == mm1 || seen[id] || *budget == 0) return false;
    seen[id] = 1, --*budget;
    const ir_node *n = &g->nodes[id];
    if (n->op == IR_OP_WHERE || n->op == IR_OP_INPUT) return true;
    for (unsigned k = 0; k < n->nin; k++)
        if (al_masked(g, mm1, ir_in(g, n, k), seen, budget)) return true;
    return false;
}

/* True when the tile of x may hold a score that is not -inf (an unknown value: it may). */
static bool al_live(al_ctx *x, ir_id scores) {
    x->walk = AL_WALK_MAX;
    al_iv s = al_eval(x, scores, 0);
    return s.top || s.kind != 1 || s.hi != -INFINITY;
}

/* See passes.h. */
bool pass_attention_live(const ir_graph *g, const ir_region *rg, int64_t bm, int64_t bn,
                         pass_attn_live *o) {
    memset(o, 0, sizeof *o);
    if (rg->mm1 >= g->n || rg->scores >= g->n || bm < 1 || bn < 1) return false;
    const ir_shape *ss = &g->nodes[rg->scores].shape;
    if (ss->rank < 2) return false;
    ir_dim sq = ss->dim[ss->rank - 2], sk = ss->dim[ss->rank - 1];
    if (IR_DIM_IS_SYM(sq) || IR_DIM_IS_SYM(sk) || sq < 1 || sk < 1) return false;
    int64_t nq = (sq + bm - 1) / bm, nk = (sk + bn - 1) / bn;
    if (rg->scores == rg->mm1) return false; /* no score function: no mask */
    uint8_t *mark = ir_xcalloc(g->n, 1);
    unsigned budget = AL_WALK_MAX;
    bool masked = al_masked(g, rg->mm1, rg->scores, mark, &budget);
    free(mark);
    if (!masked) return false;
    o->bm = bm, o->bn = bn, o->tiles = nq * nk, o->visited = o->tiles, o->frac = 1;
    al_ctx x = {.g = g, .mm1 = rg->mm1, .R = ss->rank, .ss = ss};
    /* every query tile when the pairs are few, else an even sample of them */
    int64_t step = nq * nk > AL_PAIRS_MAX ? (nq * nk + AL_PAIRS_MAX - 1) / AL_PAIRS_MAX : 1;
    int64_t seen = 0, vis = 0;
    for (int64_t qi = 0; qi < nq; qi += step) {
        x.r0 = (double)(qi * bm), x.r1 = (double)((qi + 1) * bm < sq ? (qi + 1) * bm : sq) - 1;
        int64_t first = -1, last = -1;
        for (int64_t kj = 0; kj < nk; kj++) {
            x.c0 = (double)(kj * bn), x.c1 = (double)((kj + 1) * bn < sk ? (kj + 1) * bn : sk) - 1;
            if (al_live(&x, rg->scores)) {
                if (first < 0) first = kj;
                last = kj;
            }
        }
        seen += nk, vis += first < 0 ? 0 : last - first + 1;
    }
    o->frac = seen > 0 ? (double)vis / (double)seen : 1;
    o->visited = (int64_t)llround(o->frac * (double)o->tiles);
    o->sampled = step > 1;
    return true;
}
