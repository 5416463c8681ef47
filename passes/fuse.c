/* fuse.c - the fusion planner (docs/fusion.md).
 *
 * Groups compute nodes into regions (kernels): attention patterns first,
 * then vertical merges along producer-consumer edges to a fixed point, then
 * horizontal merges of siblings that read one tensor, then batching of
 * small independent pointwise work. Every merge goes through one decision
 * function (merge_check) whose rule, numbers and remedy are what --explain
 * prints. Regions are emitted in a topological order of the region graph;
 * views join the first region that reads them; returned views become COPY
 * regions; each region then gets its tile plan (plan_tile.c), never over
 * the SRAM budget. Deterministic: everything iterates in node order. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* The price of recomputing a smaller pointwise group per element of a larger domain
 * ([pointwise.recompute], recompute_price). */
typedef struct rprice {
    ir_id anchor;    /* the smaller group's anchor (IR_NONE: none absorbed by price) */
    ir_shape dom;    /* its domain */
    double instr;    /* its issued instructions per element */
    double extra_us; /* the instructions of the extra elements at the GPU's issue rate */
    double apart_us; /* as its own kernel: a launch plus its values written and read back */
    int64_t bytes;   /* those values' bytes */
} rprice;

/* [fusion.model_guard]: what the guard does with a node of a merged reduction kernel the model
 * priced slower than its parts. */
typedef enum guard_level {
    GUARD_FREE = 0,  /* nothing */
    GUARD_APART = 1, /* a reduction: never in one kernel with another GUARD_APART reduction */
    GUARD_ALONE = 2, /* merges nothing: one kernel of its own */
} guard_level;

/* Planner state of one group, valid at its union-find root. */
typedef struct grp {
    uint8_t kind;   /* ir_region_kind */
    uint8_t fusion; /* IR_FUSE_* */
    ir_shape
        dom; /* pointwise: output shape; reduction: reduced input shape; matmul/attention: output */
    uint32_t raxes; /* reduction axes of dom */
    ir_id anchor;
    bool vin;           /* some member reads a computed value through a view */
    ir_id mm1, scores;  /* attention: the first product and the softmax input (ir_region) */
    uint32_t nops;      /* compute members (bounded by IR_REGION_MAX_OPS) */
    uint32_t nred;      /* reduction members (bounded by IR_REGION_MAX_REDUCTIONS) */
    uint32_t nbuf;      /* at least the HBM buffers its kernel takes (see check_capacity) */
    ir_id pieces;       /* pointwise: a concat whose pieces joined its domain (IR_NONE: none) */
    rprice rc;          /* the last group absorbed by [pointwise.recompute]'s price */
    uint32_t nrc;       /* how many were */
    ir_id epin;         /* attention: the last input chain its epilogue took (epilogue_input) */
    uint32_t nepin;     /* how many it took (0: none; epin is then meaningless) */
    ir_id side;         /* reduction: the last pointwise sibling taken as side outputs */
    uint32_t nside;     /* how many were (0: none; side, side_* are then meaningless) */
    int64_t side_bytes; /* the bytes that sibling's kernel would have re-read (-1: symbolic) */
    double side_us;     /* its kernel's time those bytes and its launch cost apart */
    uint32_t napart;    /* [fusion.model_guard]: members marked GUARD_APART (reductions kept in
                           kernels apart from each other) */
    uint32_t nbatch;    /* reduction: independent reduction groups batched in ([reduction.batch]) */
    double batch_us;    /* the batch's HBM time at the datasheet rate (< one launch) */
} grp;

typedef struct cstk_frame cstk_frame;

typedef struct fz {
    ir_graph *g;
    pass_ctx *c;
    ir_uses u;
    uint32_t *uf;  /* union-find parent per node; IR_NONE for non-compute nodes */
    grp *gs;       /* per node, meaningful at roots */
    uint8_t *mark; /* scratch: per node */
    uint32_t *stack;
    uint32_t *rid; /* root -> region index */
    ir_id *cbuf;   /* consumers() results: g->n entries; callers never nest its use */
    uint32_t *vstamp, *cstamp,
        cepoch; /* consumers(): views entered, results taken, this call's stamp */
    struct cstk_frame {
        ir_id x;
        uint32_t k;
    } * cstk;       /* consumers(): the walk's stack (g->n + 1 frames) */
    uint32_t *nxt;  /* member lists: next member of the same group (IR_NONE ends), head = root */
    uint32_t *tail; /* per root: last member of its list */
    uint32_t *stack2, *stampf, *stampb, epoch; /* cycle search state (see search) */
    const uint8_t *frozen; /* [fusion.model_guard]: per node a guard_level (NULL: none) */
    bool has_rc;           /* some node is flagged IR_NF_RECOMPUTE (recompute_rule) */
} fz;

/* A decision: the rule that kept two groups apart, its numbers, the remedy. */
typedef struct why {
    const char *rule;
    char msg[512];
    char change[200];
} why;

bool pass_is_compute(ir_op op) {
    unsigned t = ir_op_traits(op);
    return !(t & (IR_T_LEAF | IR_T_VIEW)) && op != IR_OP_OUTPUT;
}

static bool is_view(const ir_graph *g, ir_id i) {
    return (ir_op_traits((ir_op)g->nodes[i].op) & IR_T_VIEW) != 0;
}

/* Collects the non-view sources of v into out (no duplicates); returns the new count. */
/* A set of node ids (open addressing, grows): the views a walk has entered. */
typedef struct idset {
    ir_id *slot; /* IR_NONE: empty */
    uint32_t cap, n;
} idset;

/* Adds id; false when it was already there. */
static bool idset_add(idset *s, ir_id id) {
    if (2 * (s->n + 1) > s->cap) {
        idset o = *s;
        s->cap = o.cap ? 2 * o.cap : 64;
        s->slot = ir_xmalloc(s->cap * sizeof *s->slot);
        memset(s->slot, 0xff, s->cap * sizeof *s->slot);
        s->n = 0;
        for (uint32_t i = 0; i < o.cap; i++)
            if (o.slot[i] != IR_NONE) idset_add(s, o.slot[i]);
        free(o.slot);
    }
    uint32_t h = (id * 2654435761u) & (s->cap - 1);
    while (s->slot[h] != IR_NONE) {
        if (s->slot[h] == id) return false;
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = id;
    s->n++;
    return true;
}

/* True when id is in s. */
static bool idset_has(const idset *s, ir_id id) {
    if (!s->cap) return false;
    for (uint32_t h = (id * 2654435761u) & (s->cap - 1); s->slot[h] != IR_NONE;
         h = (h + 1) & (s->cap - 1))
        if (s->slot[h] == id) return true;
    return false;
}

/* The walk of pass_view_sources: writes at most cap sources into out and returns how many
 * distinct sources there are in all. */
static unsigned view_sources(const ir_graph *g, ir_id v, ir_id *out, unsigned cap) {
    /* Depth-first in operand order, each view entered once (views form a DAG: a chain of
     * concatenations of slices has exponentially many paths), with an explicit stack. */
    unsigned n = 0;
    if (!is_view(g, v)) {
        if (cap) out[0] = v;
        return 1;
    }
    struct frame {
        ir_id x;
        uint32_t k;
    } *stk = NULL;
    uint32_t sp = 0, scap = 0;
    idset seen = {0}, srcs = {0};
    idset_add(&seen, v);
    stk = ir_xmalloc((scap = 16) * sizeof *stk);
    stk[sp].x = v, stk[sp++].k = 0;
    while (sp) {
        struct frame *fr = &stk[sp - 1];
        const ir_node *nd = &g->nodes[fr->x];
        if (fr->k == nd->nin) {
            sp--;
            continue;
        }
        ir_id w = ir_in(g, nd, fr->k++);
        if (is_view(g, w)) {
            if (!idset_add(&seen, w)) continue;
            if (sp == scap) stk = ir_xrealloc(stk, (scap *= 2) * sizeof *stk);
            stk[sp].x = w, stk[sp++].k = 0;
            continue;
        }
        if (!idset_add(&srcs, w)) continue; /* a source seen before */
        if (n < cap) out[n] = w;
        n++;
    }
    free(stk);
    free(seen.slot);
    free(srcs.slot);
    return n;
}

unsigned pass_view_sources(const ir_graph *g, ir_id v, ir_id *out, unsigned cap) {
    unsigned n = view_sources(g, v, out, cap);
    return n < cap ? n : cap;
}

unsigned pass_view_source_count(const ir_graph *g, ir_id v) { return view_sources(g, v, NULL, 0); }

const pass_gpu *pass_ctx_gpu(const pass_ctx *c) {
    return c && c->gpu ? c->gpu : pass_gpu_find("h200");
}

int64_t pass_sram_budget(const pass_ctx *c) {
    if (c && c->sram_budget > 0) return c->sram_budget;
    return pass_ctx_gpu(c)->smem_per_block;
}

void pass_numel(const ir_graph *g, const ir_shape *s, double coef, ir_poly *p) {
    ir_shape b = *s;
    for (int i = 0; i < b.rank; i++)
        if (IR_DIM_IS_SYM(b.dim[i]) && IR_DIM_SYMIDX(b.dim[i]) < g->nsyms &&
            g->syms[IR_DIM_SYMIDX(b.dim[i])].value >= 0)
            b.dim[i] = g->syms[IR_DIM_SYMIDX(b.dim[i])].value;
    ir_poly_numel(p, &b, coef);
}

/* ---- union-find ------------------------------------------------------ */

static uint32_t find(fz *f, uint32_t x) {
    while (f->uf[x] != x) {
        f->uf[x] = f->uf[f->uf[x]];
        x = f->uf[x];
    }
    return x;
}

/* Joins group b into group a; the root with the smaller id survives and
 * takes the merged state `st` (with both groups' napart). Returns the new root. */
static uint32_t join(fz *f, uint32_t a, uint32_t b, const grp *st) {
    uint32_t r = a < b ? a : b, o = a < b ? b : a, na = f->gs[a].napart + f->gs[b].napart;
    f->uf[o] = r;
    f->gs[r] = *st;
    f->gs[r].napart = na;
    f->nxt[f->tail[r]] = o;
    f->tail[r] = f->tail[o];
    return r;
}

/* Iterates the members m of the group with root r (list order, not id order). */
#define FOR_MEMBERS(f, r, m) for (uint32_t m = (r); m != IR_NONE; m = (f)->nxt[m])

static const char *nname(const ir_graph *g, ir_id i, char *buf, size_t cap) {
    if (g->nodes[i].name)
        snprintf(buf, cap, "%%%u %s", i, ir_str(g, g->nodes[i].name));
    else
        snprintf(buf, cap, "%%%u", i);
    return buf;
}

/* ---- shapes ------------------------------------------------------------ */

/* The reduced form of d over raxes: kept dims (keepdim: reduced dims become 1). */
static ir_shape reduced_shape(const ir_shape *d, uint32_t raxes, bool keepdim) {
    ir_shape s = {0};
    for (int i = 0; i < d->rank; i++) {
        if (raxes & (1u << i)) {
            if (keepdim) s.dim[s.rank++] = 1;
        } else {
            s.dim[s.rank++] = d->dim[i];
        }
    }
    return s;
}

/* True when shape e can be evaluated in a reduction region of domain d:
 * the full domain, or one value per row (keepdim or not). */
static bool fits_dom(const ir_shape *e, const ir_shape *d, uint32_t raxes) {
    if (ir_shape_eq(e, d)) return true;
    ir_shape k = reduced_shape(d, raxes, true), n = reduced_shape(d, raxes, false);
    return ir_shape_eq(e, &k) || ir_shape_eq(e, &n);
}

/* ---- group queries ------------------------------------------------------- */

/* True when compute node m is in group root r. */
static bool in_grp(fz *f, ir_id m, uint32_t r) { return f->uf[m] != IR_NONE && find(f, m) == r; }

/* Appends to out[n..cap) every compute node that reads v, directly or
 * through view chains, without duplicates; sets *to_output when the output
 * node reads it. Returns the new count. */
static unsigned consumers(fz *f, ir_id v, ir_id *out, unsigned n, unsigned cap, bool *to_output) {
    /* Depth-first through views in use order, each view entered once (views form a DAG: a chain of
     * concatenations of slices has exponentially many paths), with an explicit stack. */
    if (++f->cepoch == 0) { /* wrapped: forget every stamp */
        memset(f->vstamp, 0, f->g->n * sizeof *f->vstamp);
        memset(f->cstamp, 0, f->g->n * sizeof *f->cstamp);
        f->cepoch = 1;
    }
    uint32_t ep = f->cepoch, sp = 0;
    for (unsigned i = 0; i < n; i++) f->cstamp[out[i]] = ep;
    f->cstk[sp].x = v, f->cstk[sp++].k = f->u.start[v];
    while (sp) {
        cstk_frame *fr = &f->cstk[sp - 1];
        if (fr->k == f->u.start[fr->x + 1]) {
            sp--;
            continue;
        }
        ir_id w = f->u.ids[fr->k++];
        if (is_view(f->g, w)) {
            if (f->vstamp[w] == ep) continue;
            f->vstamp[w] = ep;
            f->cstk[sp].x = w, f->cstk[sp++].k = f->u.start[w];
        } else if (f->g->nodes[w].op == IR_OP_OUTPUT) {
            if (to_output) *to_output = true;
        } else if (n < cap && f->cstamp[w] != ep) {
            f->cstamp[w] = ep;
            out[n++] = w;
        }
    }
    return n;
}

/* True when every value of group x is read only inside {a, b} (never
 * returned): such a group may be recomputed per element of a wider domain. */
static bool internal_only(fz *f, uint32_t x, uint32_t a, uint32_t b) {
    FOR_MEMBERS(f, x, m) {
        bool out = false;
        unsigned nc = consumers(f, m, f->cbuf, 0, f->g->n, &out);
        if (out) return false;
        for (unsigned k = 0; k < nc; k++)
            if (!in_grp(f, f->cbuf[k], a) && !in_grp(f, f->cbuf[k], b)) return false;
    }
    return true;
}

enum { BATCH_MAX_ELEMS = 1 << 16 };

/* True when every value group r reads from outside itself is a generated
 * leaf (iota, const): its members are index arithmetic (masks such as
 * iota >= iota), as cheap to recompute per element as to load. */
static bool index_only(fz *f, uint32_t r) {
    FOR_MEMBERS(f, r, m) {
        const ir_node *nd = &f->g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(f->g, ir_in(f->g, nd, k), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++)
                if (!ir_is_gen(f->g, src[s]) && !in_grp(f, src[s], r)) return false;
        }
    }
    return true;
}

/* [pointwise.recompute] the price of recomputing pointwise group o (every value read only
 * inside the merge) per element of the larger concrete domain d: its issued instructions per
 * element (ir_op_issue of each member, one conversion per 16-bit value it loads from outside)
 * times the elements d has beyond o's, at the GPU's issue rate (pass_issue_rate), against what o
 * costs as a kernel of its own: a launch plus its values read by the merge written and read back
 * at the HBM rate. False (no price) when a domain is symbolic, d is not larger, or the GPU has no
 * issue rate. */
static bool recompute_price(fz *f, uint32_t o, const ir_shape *d, rprice *p) {
    const ir_graph *g = f->g;
    const pass_gpu *gpu = pass_ctx_gpu(f->c);
    int64_t no = ir_shape_numel(&f->gs[o].dom), nd = ir_shape_numel(d);
    double rate = pass_issue_rate(gpu);
    if (no < 0 || nd < 0 || nd <= no || rate <= 0 || gpu->hbm_GBps <= 0) return false;
    memset(p, 0, sizeof *p);
    p->anchor = f->gs[o].anchor, p->dom = f->gs[o].dom;
    ir_id seen[16];
    unsigned nseen = 0;
    FOR_MEMBERS(f, o, m) {
        const ir_node *nd_ = &g->nodes[m];
        p->instr += ir_op_issue((ir_op)nd_->op);
        for (unsigned k = 0; k < nd_->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, nd_, k), src, PASS_SRC_CAP);
            for (unsigned t = 0; t < ns; t++) {
                bool dup = in_grp(f, src[t], o) || ir_is_gen(g, src[t]);
                for (unsigned i = 0; i < nseen && !dup; i++) dup = seen[i] == src[t];
                if (dup) continue;
                if (nseen < 16) seen[nseen++] = src[t];
                p->instr += ir_dtype_size((ir_dtype)g->nodes[src[t]].dtype) == 2;
            }
        }
        bool out = false, read = false;
        unsigned nc = consumers(f, m, f->cbuf, 0, g->n, &out);
        for (unsigned k = 0; k < nc && !read; k++) read = !in_grp(f, f->cbuf[k], o);
        int64_t ne = ir_shape_numel(&nd_->shape);
        if (read && ne > 0) p->bytes += ne * ir_dtype_size((ir_dtype)nd_->dtype);
    }
    p->extra_us = p->instr * (double)(nd - no) / rate;
    p->apart_us = gpu->launch_us + 2.0 * (double)p->bytes / (gpu->hbm_GBps * 1e3);
    return true;
}

/* A pointwise group o of another domain joins a group of domain d: it is
 * recomputed per element of d (through broadcasting and view index maps),
 * so it must be used only inside the merge and never be written, and the
 * recomputation must be bounded: o is small (<= BATCH_MAX_ELEMS elements),
 * has as many elements as d (a permutation or reshape of it), is index
 * arithmetic only (index_only), or its recomputation is priced below a kernel
 * of its own ([pointwise.recompute], recompute_price; recorded in st when st is
 * given). */
static bool absorbs_small(fz *f, uint32_t o, const ir_shape *d, uint32_t a, uint32_t b, grp *st) {
    if (f->gs[o].kind != IR_RK_POINTWISE || !internal_only(f, o, a, b)) return false;
    int64_t ne = ir_shape_numel(&f->gs[o].dom);
    if ((ne >= 0 && ne <= BATCH_MAX_ELEMS) || index_only(f, o)) return true;
    ir_poly p, q;
    char b1[256], b2[256];
    pass_numel(f->g, &f->gs[o].dom, 1, &p);
    pass_numel(f->g, d, 1, &q);
    if (!p.overflow && !q.overflow &&
        !strcmp(ir_poly_str(f->g, &p, b1, sizeof b1), ir_poly_str(f->g, &q, b2, sizeof b2)))
        return true;
    rprice rp;
    if (!recompute_price(f, o, d, &rp) || rp.extra_us >= rp.apart_us) return false;
    if (st) st->rc = rp, st->nrc++;
    return true;
}

/* True when shape e times coef has as many elements as shape d (symbolic dims compared as
 * polynomials). */
static bool numel_is(fz *f, const ir_shape *e, double coef, const ir_shape *d) {
    ir_poly p, q;
    char b1[256], b2[256];
    pass_numel(f->g, e, coef, &p);
    pass_numel(f->g, d, 1, &q);
    return !p.overflow && !q.overflow &&
           !strcmp(ir_poly_str(f->g, &p, b1, sizeof b1), ir_poly_str(f->g, &q, b2, sizeof b2));
}

/* PIECE_MAX bounds the inputs of a concat whose pieces join its domain: every element computes
 * every input (and selects one), so a wide concat of computed pieces multiplies their work. */
enum { PIECE_STEPS = 4096, PIECE_DEPTH = 32, PIECE_MAX = 4 };

/* The view chain below v as group o's values are read through it: -1 when some path reaches a
 * member of o not inside an input with o's domain's elements (a piece) of a concat of domain d
 * (its other inputs, e.g. partial rotary's pass-through dims, are views of other values), 1 when o
 * is reached only inside such concats (*cat: the innermost), 0 when o is not reached. *steps bounds
 * the walk (exhausted: -1). */
static int piece_path(fz *f, ir_id v, uint32_t o, const ir_shape *d, bool under, ir_id *cat,
                      int depth, unsigned *steps) {
    const ir_node *n = &f->g->nodes[v];
    if (!(*steps)-- || depth > PIECE_DEPTH) return -1;
    if (!is_view(f->g, v)) return in_grp(f, v, o) ? (under ? 1 : -1) : 0;
    bool cat_d = n->op == IR_OP_CONCAT && n->nin <= PIECE_MAX && numel_is(f, &n->shape, 1, d);
    int res = 0;
    for (unsigned k = 0; k < n->nin; k++) {
        ir_id in = ir_in(f->g, n, k); /* a piece: an input with o's domain's elements */
        bool piece = cat_d && numel_is(f, &f->gs[o].dom, 1, &f->g->nodes[in].shape);
        int r = piece_path(f, in, o, d, under || piece, cat, depth + 1, steps);
        if (r < 0) return -1;
        if (r > 0 && piece && !under) *cat = v;
        res |= r;
    }
    return res;
}

/* A pointwise group o of a smaller domain joins the group `other` of domain d as the pieces of a
 * concat (rotary's two halves, an interleaved pair's concat on a new axis): o is used only inside
 * the merge, `other` reads it only through inputs with as many elements as o's domain of concats
 * of domain d of at most PIECE_MAX inputs, so each element of d computes o's values once, at one
 * index, for the piece it selects. Returns the concat (IR_NONE: not so). */
static ir_id absorbs_pieces(fz *f, uint32_t o, uint32_t other, const ir_shape *d) {
    if (f->gs[o].kind != IR_RK_POINTWISE || !internal_only(f, o, o, other)) return IR_NONE;
    ir_id cat = IR_NONE;
    unsigned steps = PIECE_STEPS;
    bool reached = false;
    FOR_MEMBERS(f, other, m) {
        const ir_node *nd = &f->g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            int r = piece_path(f, ir_in(f->g, nd, k), o, d, false, &cat, 0, &steps);
            if (r < 0) return IR_NONE;
            reached |= r > 0;
        }
    }
    return reached ? cat : IR_NONE;
}

/* True when compute node m of the union {a, b} reads a matmul operand from
 * group `from`: some matmul of group `to` has an operand source in `from`. */
static bool feeds_matmul_operand(fz *f, uint32_t from, uint32_t to) {
    FOR_MEMBERS(f, to, m) {
        if (f->g->nodes[m].op != IR_OP_MATMUL) continue;
        const ir_node *nd = &f->g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(f->g, ir_in(f->g, nd, k), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++)
                if (in_grp(f, src[s], from)) return true;
        }
    }
    return false;
}

/* The single matmul of a matmul group (the lowest id), or IR_NONE. */
static ir_id first_matmul(fz *f, uint32_t r) {
    ir_id best = IR_NONE;
    FOR_MEMBERS(f, r, m)
    if (f->g->nodes[m].op == IR_OP_MATMUL && (best == IR_NONE || m < best)) best = m;
    return best;
}

/* Horizontal matmul compatibility: both read the same A operand (same
 * value), B operands of one shape and dtype, equal output shapes. */
static bool mm_siblings(fz *f, ir_id m1, ir_id m2) {
    const ir_graph *g = f->g;
    const ir_node *a = &g->nodes[m1], *b = &g->nodes[m2];
    const ir_node *b1 = &g->nodes[ir_in(g, a, 1)], *b2 = &g->nodes[ir_in(g, b, 1)];
    return ir_in(g, a, 0) == ir_in(g, b, 0) && ir_shape_eq(&b1->shape, &b2->shape) &&
           b1->dtype == b2->dtype && ir_shape_eq(&a->shape, &b->shape);
}

/* True when all matmuls of groups a and b are pairwise horizontal siblings. */
static bool mm_groups_siblings(fz *f, uint32_t a, uint32_t b) {
    ir_id ma = first_matmul(f, a);
    uint32_t roots[2] = {a, b};
    for (int r = 0; r < 2; r++) FOR_MEMBERS(f, roots[r], m)
    if (f->g->nodes[m].op == IR_OP_MATMUL && !mm_siblings(f, ma, m)) return false;
    return true;
}

/* One direction of the cycle search: forward from group `from` along
 * consumers looking for group `to`, or backward along producers. Seeds are
 * the members of `from`; an edge from a seed straight into `to` is the
 * merge itself, not a cycle; reaching `to` from a node outside both is.
 * Reaching one node of a group reaches the whole group: a kernel starts
 * only after all its inputs exist. */
typedef struct search {
    uint32_t from, to;
    bool fwd;
    uint32_t seed; /* next member of `from` to expand; IR_NONE when done */
    uint32_t *stack, sp;
    uint32_t *stamp; /* visited when stamp[node] == epoch */
    ir_id found;     /* the outside node that reached `to` */
} search;

/* Pushes every member of y's group not yet visited. */
static void search_push(fz *f, search *s, ir_id y) {
    for (uint32_t m = find(f, y); m != IR_NONE; m = f->nxt[m])
        if (s->stamp[m] != f->epoch) {
            s->stamp[m] = f->epoch;
            s->stack[s->sp++] = m;
        }
}

/* Producers of x (compute values read through views) into f->cbuf. */
static unsigned producers(fz *f, ir_id x) {
    const ir_node *nd = &f->g->nodes[x];
    unsigned n = 0;
    for (unsigned k = 0; k < nd->nin; k++) {
        ir_id src[PASS_SRC_CAP];
        unsigned ns = pass_view_sources(f->g, ir_in(f->g, nd, k), src, PASS_SRC_CAP);
        for (unsigned t = 0; t < ns; t++)
            if (f->uf[src[t]] != IR_NONE) f->cbuf[n++] = src[t];
    }
    return n;
}

/* Expands one node. Returns 1 when `to` was reached, -1 when the search
 * is exhausted (no path), 0 otherwise. */
static int search_step(fz *f, search *s) {
    ir_id x;
    bool seed = false;
    if (s->sp) {
        x = s->stack[--s->sp];
    } else if (s->seed != IR_NONE) {
        x = s->seed;
        s->seed = f->nxt[x];
        seed = true;
    } else {
        return -1;
    }
    unsigned n = s->fwd ? consumers(f, x, f->cbuf, 0, f->g->n, NULL) : producers(f, x);
    for (unsigned k = 0; k < n; k++) {
        ir_id y = f->cbuf[k];
        if (in_grp(f, y, s->from)) continue;
        if (in_grp(f, y, s->to)) {
            if (seed) continue;
            s->found = x;
            return 1;
        }
        if (s->stamp[y] != f->epoch) search_push(f, s, y);
    }
    return 0;
}

/* True when a path from group a to group b passes outside both. Runs the
 * forward search from a and the backward search from b in lockstep and
 * stops as soon as either finishes: cost twice the smaller search. */
static bool path_between(fz *f, uint32_t a, uint32_t b, ir_id *via) {
    f->epoch++;
    search fw = {.from = a,
                 .to = b,
                 .fwd = true,
                 .seed = a,
                 .stack = f->stack,
                 .stamp = f->stampf,
                 .found = IR_NONE};
    search bw = {.from = b,
                 .to = a,
                 .fwd = false,
                 .seed = b,
                 .stack = f->stack2,
                 .stamp = f->stampb,
                 .found = IR_NONE};
    for (;;) {
        int r = search_step(f, &fw);
        if (r) {
            if (r > 0) *via = fw.found;
            return r > 0;
        }
        r = search_step(f, &bw);
        if (r) {
            if (r > 0) *via = bw.found;
            return r > 0;
        }
    }
}

/* Cycle test at group level: true when merging groups a and b would make
 * the kernel graph cyclic (some path between them leaves both); *via gets
 * an outside node on such a path. a_feeds_b: b reads a value of a, so a
 * path b -> X -> a cannot exist (it would be a cycle already). */
static bool makes_cycle(fz *f, uint32_t a, uint32_t b, bool a_feeds_b, ir_id *via) {
    return path_between(f, a, b, via) || (!a_feeds_b && path_between(f, b, a, via));
}

static int cmp_id(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static ir_id ostore_source(const ir_graph *g, ir_id cp);

/* View contract for non-pointwise regions: a view inside the region may
 * read an HBM value, an in-region value that does not depend on a
 * reduction or matmul of the region, or broadcast/reshape a per-row value
 * back onto the domain, or be the view an [attention.store_transposed] copy
 * reads (the kernel stores through it). Returns the offending view or IR_NONE. */
static ir_id bad_view(fz *f, uint32_t a, uint32_t b, const grp *st) {
    ir_graph *g = f->g;
    if (st->kind == IR_RK_POINTWISE || !(f->gs[a].vin || f->gs[b].vin)) return IR_NONE;
    uint32_t n = 0, roots[2] = {a, b};
    for (int r = 0; r < 2; r++) FOR_MEMBERS(f, roots[r], m) {
            f->stack[n++] = m;
            f->mark[m] = 0; /* mark: depends on an in-region reduction/matmul */
        }
    qsort(f->stack, n, sizeof *f->stack, cmp_id);
    for (uint32_t i = 0; i < n; i++) {
        ir_id m = f->stack[i];
        ir_node *nd = &g->nodes[m];
        unsigned t = ir_op_traits((ir_op)nd->op);
        bool taint = (t & (IR_T_REDUCE | IR_T_MATMUL)) != 0;
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id in = ir_in(g, nd, k), src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, in, src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) {
                if (!(in_grp(f, src[s], a) || in_grp(f, src[s], b)) || !f->mark[src[s]]) continue;
                taint = true;
                if (!is_view(g, in)) continue;
                bool rowb =
                    (g->nodes[in].op == IR_OP_BROADCAST || g->nodes[in].op == IR_OP_RESHAPE) &&
                    st->kind == IR_RK_REDUCTION &&
                    fits_dom(&g->nodes[src[s]].shape, &st->dom, st->raxes) &&
                    !ir_shape_eq(&g->nodes[src[s]].shape, &st->dom) &&
                    fits_dom(&g->nodes[in].shape, &st->dom, st->raxes);
                if (!rowb && ostore_source(g, m) != src[s]) return in;
            }
        }
        f->mark[m] = taint;
    }
    return IR_NONE;
}

static void why_set(why *w, const char *rule) {
    w->rule = rule;
    w->msg[0] = w->change[0] = 0;
}

/* Fills *w with the no-fuse decision. */
static bool no_fuse_rule(why *w) {
    why_set(w, "no-fuse");
    snprintf(w->msg, sizeof w->msg, "--no-fuse plans one kernel per operation");
    snprintf(w->change, sizeof w->change, "drop --no-fuse");
    return false;
}

/* [fusion.model_guard]: true (and *w filled) when group a or b (roots) is a node the guard keeps
 * alone (GUARD_ALONE: a singleton), or both hold a reduction it keeps apart (GUARD_APART). */
static bool guard_rule(const fz *f, uint32_t a, uint32_t b, why *w) {
    if (!f->frozen) return false;
    bool alone = f->frozen[a] == GUARD_ALONE || f->frozen[b] == GUARD_ALONE;
    if (!alone && !(f->gs[a].napart && f->gs[b].napart)) return false;
    why_set(w, "fusion.model_guard");
    snprintf(w->msg, sizeof w->msg,
             alone ? "the model priced the merged kernel of this work slower than its parts: one "
                     "kernel per operation (the [fusion.model_guard] line)"
                   : "the model priced the merged kernel of these reductions slower than its "
                     "parts: each reduction in a kernel of its own with its pointwise work (the "
                     "[fusion.model_guard] line)");
    snprintf(w->change, sizeof w->change, "a schedule the model prices faster fused");
    return true;
}

/* [attention.q_prologue]: pointwise group o computes only the query operand of attention group
 * at (q of q @ kT, through views), nothing of o is returned or read elsewhere, and the attention
 * is a decode (1 to 16 query rows known at compile time: the key split loads its Q tile once per
 * block, so o's elementwise work, e.g. a scale (q * c) @ kT, is recomputed there for nothing
 * against the cache stream, and rounded to q's dtype as it is stored in the tile). */
static bool q_prologue_for(fz *f, uint32_t o, const grp *At) {
    const ir_graph *g = f->g;
    if (f->gs[o].kind != IR_RK_POINTWISE || At->mm1 >= g->n) return false;
    const ir_node *m1 = &g->nodes[At->mm1];
    ir_dim sq = m1->shape.dim[m1->shape.rank - 2];
    int64_t rows = IR_DIM_IS_SYM(sq) ? g->syms[IR_DIM_SYMIDX(sq)].value : sq;
    if (rows < 1 || rows > 16) return false;
    ir_id src[PASS_SRC_CAP];
    unsigned ns = pass_view_sources(g, ir_in(g, m1, 1), src, PASS_SRC_CAP);
    for (unsigned i = 0; i < ns; i++)
        if (in_grp(f, src[i], o)) return false; /* o feeds kT too */
    FOR_MEMBERS(f, o, m) {
        bool out = false;
        unsigned nc = consumers(f, m, f->cbuf, 0, g->n, &out);
        if (out) return false;
        for (unsigned k = 0; k < nc; k++)
            if (!in_grp(f, f->cbuf[k], o) && f->cbuf[k] != At->mm1) return false;
    }
    return true;
}

/* [attention.epilogue_input]: pointwise group o, of attention group At's output shape, computes
 * from inputs (and generated leaves) only, nothing of it is returned, and it is read only by At's
 * epilogue (members after the second product), so the epilogue computes it at each output index
 * from the inputs (gated attention's sigmoid(g) in o * sigmoid(g)) instead of loading its stored
 * values. */
static bool epilogue_input_for(fz *f, uint32_t o, uint32_t at) {
    const ir_graph *g = f->g;
    const grp *O = &f->gs[o], *At = &f->gs[at];
    if (O->kind != IR_RK_POINTWISE || !ir_shape_eq(&O->dom, &At->dom)) return false;
    FOR_MEMBERS(f, o, m) {
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            if (ns >= PASS_SRC_CAP) return false;
            for (unsigned t = 0; t < ns; t++)
                if (!in_grp(f, src[t], o) && g->nodes[src[t]].op != IR_OP_INPUT &&
                    !ir_is_gen(g, src[t]))
                    return false;
        }
        bool out = false;
        unsigned nc = consumers(f, m, f->cbuf, 0, g->n, &out);
        if (out) return false;
        for (unsigned k = 0; k < nc; k++) {
            ir_id c = f->cbuf[k];
            if (in_grp(f, c, o)) continue;
            if (!in_grp(f, c, at) || c <= At->anchor) return false;
        }
    }
    return true;
}

/* [reduction.stats_recompute] (passes/stats.c): true (and *w filled) when a node of group a or b
 * flagged IR_NF_RECOMPUTE reads (through views) a value of the other group that is not such a
 * copy: the copy is its consumer's per-element recomputation of a reduction kernel's values from
 * that kernel's statistics, so joining a kernel it reads from would store it there again. */
static bool recompute_rule(fz *f, uint32_t a, uint32_t b, why *w) {
    const ir_graph *g = f->g;
    if (!f->has_rc) return false;
    for (int side = 0; side < 2; side++) {
        uint32_t x = side ? b : a, y = side ? a : b;
        FOR_MEMBERS(f, x, m) {
            const ir_node *nd = &g->nodes[m];
            if (!(nd->flags & IR_NF_RECOMPUTE)) continue;
            for (unsigned k = 0; k < nd->nin; k++) {
                ir_id src[PASS_SRC_CAP];
                unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
                for (unsigned s = 0; s < ns; s++) {
                    if (!in_grp(f, src[s], y) || (g->nodes[src[s]].flags & IR_NF_RECOMPUTE))
                        continue;
                    char n1[96], n2[96];
                    why_set(w, "reduction.stats_recompute");
                    snprintf(w->msg, sizeof w->msg,
                             "%s is recomputed from %s by the kernel that reads it (the "
                             "[reduction.stats_recompute] line), not stored by the kernel of %s",
                             nname(g, m, n1, sizeof n1), nname(g, src[s], n2, sizeof n2), n2);
                    snprintf(w->change, sizeof w->change,
                             "read the value outside that kernel, or return it");
                    return true;
                }
            }
        }
    }
    return false;
}

/* How many nodes (the output node included) read x. */
static unsigned nusers(const ir_graph *g, ir_id x) {
    unsigned c = 0;
    for (ir_id i = 0; i < g->n; i++)
        for (unsigned k = 0; k < g->nodes[i].nin; k++) c += ir_in(g, &g->nodes[i], k) == x;
    return c;
}

static ir_id rp_root(const ir_graph *g, ir_id v);

/* The product u whose staged copy cp is ([attention.store_transposed], graph facts only): cp a
 * cast to its own dtype flagged IR_NF_STAGE ([matmul.stage_view]) of a chain of reshapes and
 * permutes (at least one permute) over u, a product that is not returned, u and every node of
 * the chain read once (by the next), the chain's strides over u a product of extents with u's
 * last axis contiguous (pass_view_strides_of): a kernel that computes u can store its element i
 * at cp's offset of i. IR_NONE otherwise. */
static ir_id ostore_source(const ir_graph *g, ir_id cp) {
    const ir_node *c = &g->nodes[cp];
    if (c->op != IR_OP_CAST || !(c->flags & IR_NF_STAGE) || c->nin != 1) return IR_NONE;
    ir_id v = ir_in(g, c, 0), u = rp_root(g, v);
    if (v == u || g->nodes[u].op != IR_OP_MATMUL || g->nodes[u].dtype != c->dtype) return IR_NONE;
    for (ir_id x = v;; x = ir_in(g, &g->nodes[x], 0)) {
        if (nusers(g, x) != 1) return IR_NONE;
        if (x == u) break;
    }
    pass_view_strides st;
    if (!pass_view_strides_of(g, u, v, &st) || !st.permuted || !st.inner) return IR_NONE;
    return u;
}

ir_id pass_attn_ostore(const ir_graph *g, ir_id cp) {
    if (cp >= g->n) return IR_NONE;
    ir_id u = ostore_source(g, cp);
    if (u == IR_NONE) return IR_NONE;
    uint32_t r = g->nodes[u].region;
    if (r >= g->nregions || g->regions[r].kind != IR_RK_ATTENTION || g->regions[r].anchor != u ||
        g->nodes[cp].region != r)
        return IR_NONE;
    return u;
}

/* [attention.store_transposed]: group b is one staged copy of the output of attention group a
 * (ostore_source), which the attention kernel then stores itself. TX_ATTN_OSTORE=0 turns the
 * rule off (benchmarks of the copy it saves). */
static bool ostore_for(fz *f, uint32_t a, uint32_t b) {
    const grp *A = &f->gs[a];
    const char *ev = getenv("TX_ATTN_OSTORE");
    if ((ev && !strcmp(ev, "0")) || A->kind != IR_RK_ATTENTION ||
        f->gs[b].kind != IR_RK_POINTWISE || f->nxt[b] != IR_NONE)
        return false;
    ir_id u = ostore_source(f->g, b);
    return u != IR_NONE && u == A->anchor && in_grp(f, u, a);
}

/* Attention with anything: only a pointwise epilogue of its output shape (which may compute
 * inputs' pointwise chains, epilogue_input_for), or the decode query's pointwise prologue
 * (q_prologue_for). */
static bool check_attention(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    const grp *A = &f->gs[a], *B = &f->gs[b];
    char d1[128];
    if (A->kind == IR_RK_ATTENTION && B->kind == IR_RK_POINTWISE && ir_shape_eq(&A->dom, &B->dom)) {
        st->fusion |= IR_FUSE_EPILOGUE;
        return true;
    }
    if (ostore_for(f, a, b)) {
        st->fusion |= IR_FUSE_EPILOGUE;
        return true;
    }
    if (B->kind == IR_RK_ATTENTION && epilogue_input_for(f, a, b)) {
        *st = *B;
        st->fusion |= IR_FUSE_EPILOGUE;
        st->epin = A->anchor, st->nepin++;
        return true;
    }
    if (B->kind == IR_RK_ATTENTION && q_prologue_for(f, a, B)) {
        *st = *B; /* the attention's state, its prologue's members joined */
        st->fusion |= A->fusion | IR_FUSE_VERTICAL;
        st->vin = A->vin || B->vin;
        return true;
    }
    bool att_a = A->kind == IR_RK_ATTENTION;
    why_set(w, "attention.closed");
    snprintf(w->msg, sizeof w->msg,
             "an attention kernel takes only a pointwise epilogue of its output shape %s",
             ir_shape_str(f->g, &(att_a ? A : B)->dom, d1, sizeof d1));
    snprintf(w->change, sizeof w->change, "nothing: the other side is a %s kernel",
             ir_region_kind_name((ir_region_kind)(att_a ? B : A)->kind));
    return false;
}

/* Two matmul groups: horizontal siblings only (same A operand), never a
 * product feeding another product's operand. */
static bool check_mm_mm(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    char n1[96];
    if (feeds_matmul_operand(f, a, b) || feeds_matmul_operand(f, b, a)) {
        why_set(w, "matmul.chain");
        snprintf(w->msg, sizeof w->msg,
                 "a value computed after the product %s is an operand of another product; one "
                 "kernel runs one K loop",
                 nname(f->g, f->gs[a].anchor, n1, sizeof n1));
        snprintf(w->change, sizeof w->change,
                 "nothing (only matmul -> softmax -> matmul fuses, as attention)");
        return false;
    }
    if (!mm_groups_siblings(f, a, b)) {
        why_set(w, "matmul.operands");
        snprintf(w->msg, sizeof w->msg,
                 "the products do not share their A operand with equal B and output shapes");
        snprintf(w->change, sizeof w->change, "read the same A value with B operands of one shape");
        return false;
    }
    st->fusion |= IR_FUSE_HORIZONTAL | IR_FUSE_EPILOGUE;
    return true;
}

/* True when group ot is a prologue of matmul group mm: casts only, every
 * value used only inside the two. */
static bool casts_only_for(fz *f, uint32_t ot, uint32_t mm) {
    FOR_MEMBERS(f, ot, m) {
        if (f->g->nodes[m].op != IR_OP_CAST) return false;
        bool out = false;
        unsigned nc = consumers(f, m, f->cbuf, 0, f->g->n, &out);
        if (out) return false;
        for (unsigned k = 0; k < nc; k++)
            if (!in_grp(f, f->cbuf[k], ot) && !in_grp(f, f->cbuf[k], mm)) return false;
    }
    return true;
}

/* True when node w of epilogue_for_reduction's walk reads (through views) a reduction or a value
 * the walk marked 2 (itself after one): w is computed by or after the reduction's kernel, never
 * by the epilogue, so returning it stores nothing the epilogue would. An input not visited yet
 * counts as before (the conservative side: the epilogue keeps it). */
static bool after_reduction(fz *f, ir_id w) {
    const ir_node *nd = &f->g->nodes[w];
    for (unsigned k = 0; k < nd->nin; k++) {
        ir_id src[PASS_SRC_CAP];
        unsigned ns = pass_view_sources(f->g, ir_in(f->g, nd, k), src, PASS_SRC_CAP);
        for (unsigned s = 0; s < ns; s++)
            if (f->mark[src[s]] == 2 || (ir_op_traits((ir_op)f->g->nodes[src[s]].op) & IR_T_REDUCE))
                return true;
    }
    return false;
}

/* True when pointwise group o, about to join matmul group mm's epilogue,
 * would make that kernel store a value only a reduction's kernel needs:
 * o is not returned, its values reach (along pointwise consumers only) a
 * reduction over o's own domain, which can recompute them per element from
 * what o reads of mm, and storing them costs more than that read: some
 * member is wider than an mm value it reads, or that mm value is stored
 * anyway (returned or read outside mm and o). Fills *red with the reduction
 * and *wide with the widening member (or IR_NONE). A value of the cone
 * that is returned and computed before any reduction keeps today's plan
 * (false); one after a reduction (softmax probabilities returned as well,
 * after_reduction) is the reduction kernel's store, not the epilogue's. Bounded: every node is
 * visited once (f->stack as the worklist, f->mark as the visited set);
 * runs only for an epilogue merge that widens or duplicates a store. */
static bool epilogue_for_reduction(fz *f, uint32_t o, uint32_t mm, ir_id *red, ir_id *wide) {
    ir_graph *g = f->g;
    const grp *O = &f->gs[o];
    if (O->kind != IR_RK_POINTWISE) return false;
    *red = IR_NONE, *wide = IR_NONE;
    bool stored = false;
    FOR_MEMBERS(f, o, m) {
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) {
                if (!in_grp(f, src[s], mm)) continue;
                if (ir_dtype_size((ir_dtype)nd->dtype) >
                    ir_dtype_size((ir_dtype)g->nodes[src[s]].dtype))
                    *wide = m;
                bool out = false;
                unsigned nc = consumers(f, src[s], f->cbuf, 0, g->n, &out);
                stored |= out;
                for (unsigned c = 0; c < nc; c++)
                    stored |= !in_grp(f, f->cbuf[c], mm) && !in_grp(f, f->cbuf[c], o);
            }
        }
    }
    if (*wide == IR_NONE && !stored) return false;
    uint32_t n = 0;
    bool out = false;
    memset(f->mark, 0, g->n);
    FOR_MEMBERS(f, o, m) f->stack[n++] = m, f->mark[m] = 1;
    for (uint32_t h = 0; h < n && !out; h++) {
        bool ret = false;
        unsigned nc = consumers(f, f->stack[h], f->cbuf, 0, g->n, &ret);
        out = ret && f->mark[f->stack[h]] == 1;
        for (unsigned c = 0; c < nc; c++) {
            ir_id w = f->cbuf[c];
            if (f->mark[w]) continue;
            unsigned t = ir_op_traits((ir_op)g->nodes[w].op);
            if (t & IR_T_REDUCE) {
                if (*red == IR_NONE &&
                    ir_shape_eq(&g->nodes[ir_in(g, &g->nodes[w], 0)].shape, &O->dom))
                    *red = w;
            } else if (!(t & IR_T_MATMUL)) {
                f->mark[w] = after_reduction(f, w) ? 2 : 1, f->stack[n++] = w;
            }
        }
    }
    return !out && *red != IR_NONE;
}

/* Whether a member of group gi is read by a matrix product (through views):
 * a reduction between two products is the softmax of an attention. */
static bool grp_feeds_matmul(fz *f, uint32_t gi) {
    FOR_MEMBERS(f, gi, m) {
        bool out = false;
        unsigned nc = consumers(f, m, f->cbuf, 0, f->g->n, &out);
        for (unsigned c = 0; c < nc; c++)
            if (ir_op_traits((ir_op)f->g->nodes[f->cbuf[c]].op) & IR_T_MATMUL) return true;
    }
    return false;
}

/* Whether a member of group gi reads a matrix product (through views). */
static bool reduction_after_matmul(fz *f, uint32_t gi) {
    FOR_MEMBERS(f, gi, m) {
        const ir_node *nd = &f->g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(f->g, ir_in(f->g, nd, k), src, PASS_SRC_CAP);
            for (unsigned i = 0; i < ns; i++)
                if (ir_op_traits((ir_op)f->g->nodes[src[i]].op) & IR_T_MATMUL) return true;
        }
    }
    return false;
}

/* A matmul group with a pointwise or reduction group: operand casts fold
 * into the prologue, elementwise work of the product's shape into the
 * epilogue, reductions never. */
static bool check_mm_other(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    ir_graph *g = f->g;
    uint32_t mm = f->gs[a].kind == IR_RK_MATMUL ? a : b, ot = mm == a ? b : a;
    const grp *M = &f->gs[mm], *O = &f->gs[ot];
    char d1[128], d2[128], n1[96];
    *st = *M;
    if (!M->nrc) st->rc = O->rc;
    st->nrc = M->nrc + O->nrc;
    st->fusion |= O->fusion;
    st->vin = M->vin || O->vin;
    if (O->kind == IR_RK_REDUCTION) {
        why_set(w, mm == a ? "matmul.epilogue_reduction" : "matmul.reduction_operand");
        snprintf(w->msg, sizeof w->msg,
                 "%s reduces over %s; a matmul kernel fuses elementwise work only",
                 nname(g, O->anchor, n1, sizeof n1), ir_shape_str(g, &O->dom, d1, sizeof d1));
        bool att = mm == a ? grp_feeds_matmul(f, ot) : reduction_after_matmul(f, ot);
        snprintf(w->change, sizeof w->change, "%s",
                 att       ? "nothing (matmul -> softmax -> matmul fuses as attention)"
                 : mm == a ? "nothing: a reduction of a product runs in its own kernel (only "
                             "softmax(F(q @ k^T)) @ v fuses, as attention)"
                           : "nothing: an operand computed by a reduction is written to HBM "
                             "before the product (only softmax(F(q @ k^T)) @ v fuses)");
        return false;
    }
    if (feeds_matmul_operand(f, ot, mm)) {
        FOR_MEMBERS(f, ot, s) {
            if (!(g->nodes[s].flags & IR_NF_STAGE)) continue;
            why_set(w, "matmul.stage_view");
            snprintf(w->msg, sizeof w->msg,
                     "%s copies an operand of %s that no stride form describes (a view chain "
                     "or a concat of views) into a dense matrix (priced above)",
                     nname(g, s, n1, sizeof n1), nname(g, M->anchor, d1, sizeof d1));
            snprintf(w->change, sizeof w->change, "nothing: the product reads the copy");
            return false;
        }
        if (!casts_only_for(f, ot, mm)) {
            why_set(w, "matmul.prologue");
            snprintf(w->msg, sizeof w->msg,
                     "operand work of %s is not only casts used by this product; only pointwise "
                     "casts fold into "
                     "operand loads",
                     nname(g, M->anchor, n1, sizeof n1));
            snprintf(w->change, sizeof w->change,
                     "compute the operand as a plain cast used only by the product");
            return false;
        }
        st->fusion |= IR_FUSE_VERTICAL;
        return true;
    }
    ir_id red, wide;
    if (mm == a && epilogue_for_reduction(f, ot, mm, &red, &wide)) {
        char n2[96];
        why_set(w, "matmul.epilogue_recompute");
        if (wide != IR_NONE)
            snprintf(w->msg, sizeof w->msg,
                     "%s widens the product's values to %s for the reduction %s, whose kernel "
                     "recomputes it from the product; the epilogue would store %d-byte elements",
                     nname(g, wide, n1, sizeof n1), ir_dtype_name((ir_dtype)g->nodes[wide].dtype),
                     nname(g, red, n2, sizeof n2), ir_dtype_size((ir_dtype)g->nodes[wide].dtype));
        else
            snprintf(w->msg, sizeof w->msg,
                     "%s is needed only by the reduction %s, whose kernel recomputes it from the "
                     "product, which is stored anyway",
                     nname(g, O->anchor, n1, sizeof n1), nname(g, red, n2, sizeof n2));
        snprintf(w->change, sizeof w->change, "return the value, or read it outside a reduction");
        return false;
    }
    if (!ir_shape_eq(&O->dom, &M->dom) && !absorbs_small(f, ot, &M->dom, a, b, st)) {
        why_set(w, "matmul.epilogue_shape");
        snprintf(w->msg, sizeof w->msg, "the epilogue iterates %s but the product is %s",
                 ir_shape_str(g, &O->dom, d1, sizeof d1), ir_shape_str(g, &M->dom, d2, sizeof d2));
        snprintf(w->change, sizeof w->change, "an elementwise tail with the product's shape fuses");
        return false;
    }
    st->fusion |= IR_FUSE_EPILOGUE;
    return true;
}

/* Two pointwise groups: one iteration space, or the smaller side is
 * recomputed per element (absorbs_small). */
static bool check_pw_pw(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    const grp *A = &f->gs[a], *B = &f->gs[b];
    char d1[128], d2[128], n1[96], n2[96];
    st->fusion |= IR_FUSE_VERTICAL;
    if (ir_shape_eq(&A->dom, &B->dom) || absorbs_small(f, b, &A->dom, a, b, st)) return true;
    if (absorbs_small(f, a, &B->dom, a, b, st)) {
        st->dom = B->dom;
        st->anchor = B->anchor;
        return true;
    }
    ir_id cat = absorbs_pieces(f, a, b, &B->dom);
    if (cat != IR_NONE) {
        st->dom = B->dom;
        st->anchor = B->anchor;
        st->pieces = cat;
        return true;
    }
    why_set(w, "pointwise.domain");
    int n =
        snprintf(w->msg, sizeof w->msg,
                 "%s iterates %s but %s iterates %s; a pointwise kernel has one iteration "
                 "space, and the other side is "
                 "also used elsewhere (or too large to recompute per element)",
                 nname(f->g, A->anchor, n1, sizeof n1), ir_shape_str(f->g, &A->dom, d1, sizeof d1),
                 nname(f->g, B->anchor, n2, sizeof n2), ir_shape_str(f->g, &B->dom, d2, sizeof d2));
    uint32_t sm = ir_shape_numel(&A->dom) < ir_shape_numel(&B->dom) ? a : b;
    rprice rp;
    if (n > 0 && (size_t)n < sizeof w->msg && internal_only(f, sm, a, b) &&
        recompute_price(f, sm, sm == a ? &B->dom : &A->dom, &rp))
        snprintf(w->msg + n, sizeof w->msg - (size_t)n,
                 "; [pointwise.recompute] per element of the larger domain %.1f instructions "
                 "-> %.3f us of issue against %.3f us apart (a launch and %lld B written and "
                 "read)",
                 rp.instr, rp.extra_us, rp.apart_us, (long long)rp.bytes);
    snprintf(
        w->change, sizeof w->change,
        "use the smaller value only in this elementwise chain (it is then recomputed per element)");
    return false;
}

/* Kept elements below which a column reduction (the innermost axis kept) is split from a later
 * stage over the same columns (and from the domain-shaped work leading to one): one thread per
 * kept element in blocks of COLUMN_FEW_BLOCK gives fewer blocks than the GPU has SMs, and a
 * kernel of several stages must keep every column of a block whole, so it cannot split the
 * reduced axis across blocks. */
enum { COLUMN_FEW_BLOCK = 128, COLUMN_FEW_MIN = 1 << 20 };

bool pass_column_few(const ir_shape *d, uint32_t axes, const pass_gpu *gpu) {
    if (d->rank < 2 || (axes & (1u << (d->rank - 1)))) return false;
    int64_t kept = 1, red = 1;
    for (unsigned i = 0; i < d->rank; i++) {
        if (IR_DIM_IS_SYM(d->dim[i])) return false;
        if (axes & (1u << i))
            red *= d->dim[i];
        else
            kept *= d->dim[i];
    }
    return gpu && gpu->sms > 0 && kept < (int64_t)COLUMN_FEW_BLOCK * gpu->sms && red > kept &&
           kept * red >= COLUMN_FEW_MIN;
}

/* True when reduction group R reduces columns that pass_column_few calls few (below, the
 * kernels' launches would cost more than the serial columns) ([reduction.column_stages]). */
static bool column_few(const fz *f, const grp *R) {
    return pass_column_few(&R->dom, R->raxes, pass_ctx_gpu(f->c));
}

/* True when a reduction over R's domain and axes outside R reads, through any chain of nodes,
 * a member of R: the work after R holds a second stage of the same columns. */
static bool later_stage(fz *f, uint32_t r) {
    const ir_graph *g = f->g;
    const grp *R = &f->gs[r];
    uint8_t *seen = ir_xcalloc(g->n, 1);
    ir_id *st = ir_xmalloc((size_t)g->n * sizeof *st);
    unsigned n = 0;
    bool found = false;
    FOR_MEMBERS(f, r, m) st[n++] = m, seen[m] = 1;
    while (n && !found) {
        ir_id x = st[--n];
        for (uint32_t u = f->u.start[x]; u < f->u.start[x + 1] && !found; u++) {
            ir_id y = f->u.ids[u];
            if (seen[y]) continue;
            seen[y] = 1;
            const ir_node *nd = &g->nodes[y];
            if ((ir_op_traits((ir_op)nd->op) & IR_T_REDUCE) && !in_grp(f, y, r) &&
                nd->a.red.axes == R->raxes &&
                ir_shape_eq(&g->nodes[ir_in(g, nd, 0)].shape, &R->dom))
                found = true;
            st[n++] = y;
        }
    }
    free(seen);
    free(st);
    return found;
}

/* A reduction group with a pointwise or reduction group: the same rows
 * (domain and axes), per-row values, or small recomputed work. */
static bool check_reduction(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    uint32_t r = f->gs[a].kind == IR_RK_REDUCTION ? a : b, o = r == a ? b : a;
    const grp *R = &f->gs[r], *O = &f->gs[o];
    char d1[128], d2[128], n1[96], n2[96];
    if (r == a && column_few(f, R) &&
        (O->kind == IR_RK_REDUCTION || (ir_shape_eq(&O->dom, &R->dom) && later_stage(f, r)))) {
        why_set(w, "reduction.column_stages");
        snprintf(w->msg, sizeof w->msg,
                 "%s reduces the columns of %s, too few to fill the GPU with whole columns, and "
                 "%s works on that domain after it: apart, the column reduction splits its "
                 "reduced axis across blocks",
                 nname(f->g, R->anchor, n2, sizeof n2), ir_shape_str(f->g, &R->dom, d2, sizeof d2),
                 nname(f->g, O->anchor, n1, sizeof n1));
        snprintf(w->change, sizeof w->change,
                 "nothing: the reduced values go through memory (a few bytes a column)");
        return false;
    }
    *st = *R;
    if (!R->nrc) st->rc = O->rc;
    st->nrc = R->nrc + O->nrc;
    st->fusion |= O->fusion | IR_FUSE_VERTICAL;
    st->vin = R->vin || O->vin;
    bool ok = O->kind == IR_RK_REDUCTION
                  ? ir_shape_eq(&O->dom, &R->dom) && O->raxes == R->raxes
                  : fits_dom(&O->dom, &R->dom, R->raxes) || absorbs_small(f, o, &R->dom, a, b, st);
    if (ok) return true;
    why_set(w, "reduction.domain");
    snprintf(w->msg, sizeof w->msg, "%s works on %s, not on the rows of %s reduced by %s",
             nname(f->g, O->anchor, n1, sizeof n1), ir_shape_str(f->g, &O->dom, d1, sizeof d1),
             ir_shape_str(f->g, &R->dom, d2, sizeof d2), nname(f->g, R->anchor, n2, sizeof n2));
    snprintf(w->change, sizeof w->change,
             "nothing: a reduction kernel covers one domain and one axis set");
    return false;
}

/* The checks every merge ends with: the view contract and acyclicity.
 * a_feeds_b: b reads a value of a. */
static bool check_structure(fz *f, uint32_t a, uint32_t b, const grp *st, bool a_feeds_b, why *w) {
    char n1[96];
    ir_id v = bad_view(f, a, b, st);
    if (v != IR_NONE) {
        why_set(w, "view.after_reduction");
        snprintf(w->msg, sizeof w->msg,
                 "view %s rearranges a value computed from the %s inside the kernel",
                 nname(f->g, v, n1, sizeof n1),
                 st->kind == IR_RK_REDUCTION ? "reduction" : "product");
        snprintf(w->change, sizeof w->change,
                 "nothing: the value is written and the view reads it by index arithmetic");
        return false;
    }
    ir_id via;
    if (makes_cycle(f, a, b, a_feeds_b, &via)) {
        why_set(w, "cycle");
        snprintf(w->msg, sizeof w->msg,
                 "one kernel would both feed and wait for %s of another kernel",
                 nname(f->g, via, n1, sizeof n1));
        snprintf(w->change, sizeof w->change, "nothing: kernels must form an acyclic launch order");
        return false;
    }
    return true;
}

/* The HBM buffers the kernel of the merged group a + b takes: every input or value computed
 * outside it that a member reads (through views), and every member some node outside reads
 * (or a view of it, or the output). Walks the members of both groups once. */
static uint32_t group_buffers(fz *f, uint32_t a, uint32_t b) {
    const ir_graph *g = f->g;
    idset bufs = {0};
    uint32_t roots[2] = {a, b};
    ir_id src[PASS_SRC_CAP];
    for (int r = 0; r < 2; r++) FOR_MEMBERS(f, roots[r], m) {
            const ir_node *nd = &g->nodes[m];
            for (unsigned k = 0; k < nd->nin; k++) {
                unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
                for (unsigned t = 0; t < ns; t++) {
                    ir_id s = src[t];
                    bool hbm =
                        g->nodes[s].op == IR_OP_INPUT || (pass_is_compute((ir_op)g->nodes[s].op) &&
                                                          !in_grp(f, s, a) && !in_grp(f, s, b));
                    if (hbm) idset_add(&bufs, s);
                }
            }
            for (uint32_t u = f->u.start[m]; u < f->u.start[m + 1]; u++) {
                ir_id user = f->u.ids[u];
                if (!in_grp(f, user, a) && !in_grp(f, user, b)) {
                    idset_add(&bufs, m);
                    break;
                }
            }
        }
    free(bufs.slot);
    return bufs.n;
}

/* Buffers one GPU kernel can take: PTX gives a kernel's parameters 4352 bytes, 8 per buffer
 * and per unbound size symbol, and up to three 128-byte tensor maps (sm_90a matrix kernels). */
static uint32_t max_kernel_buffers(const ir_graph *g) {
    uint32_t nsyms = 0;
    for (uint32_t s = 0; s < g->nsyms; s++) nsyms += g->syms[s].value < 0;
    int64_t room = (4352 - 3 * 128) / 8 - (int64_t)nsyms;
    return room > 1 ? (uint32_t)room : 1;
}

/* Capacity of one kernel: at most IR_REGION_MAX_OPS operations (the code
 * of a kernel, and codegen's recursion over its values, stay bounded),
 * IR_REGION_MAX_REDUCTIONS reductions (codegen tracks each value's
 * reductions in a 32-bit mask) and the buffers whose pointers fit the
 * GPU's parameter space (max_kernel_buffers). The buffer count is kept as
 * an upper bound (the sum of both groups') and counted exactly
 * (group_buffers) only when that bound is over the limit. Sets st's counts
 * to the merged ones. */
static bool check_capacity(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    const grp *A = &f->gs[a], *B = &f->gs[b];
    st->nops = A->nops + B->nops;
    st->nred = A->nred + B->nred;
    st->nbuf = A->nbuf + B->nbuf;
    uint32_t maxb = max_kernel_buffers(f->g);
    if (st->nops <= IR_REGION_MAX_OPS && st->nred <= IR_REGION_MAX_REDUCTIONS && st->nbuf > maxb)
        st->nbuf = group_buffers(f, a, b);
    if (st->nbuf > maxb) {
        why_set(w, "region.params");
        snprintf(w->msg, sizeof w->msg,
                 "one kernel would take %u buffers > the %u whose pointers fit the GPU's 4352 "
                 "bytes of kernel parameters",
                 st->nbuf, maxb);
        snprintf(w->change, sizeof w->change, "nothing: the values at the cut go through memory");
        return false;
    }
    if (st->nops > IR_REGION_MAX_OPS) {
        why_set(w, "region.size");
        snprintf(w->msg, sizeof w->msg, "one kernel would hold %u operations > the limit of %u",
                 st->nops, (unsigned)IR_REGION_MAX_OPS);
        snprintf(w->change, sizeof w->change, "nothing: the values at the cut go through memory");
        return false;
    }
    if (st->nred > IR_REGION_MAX_REDUCTIONS) {
        why_set(w, "region.reductions");
        snprintf(w->msg, sizeof w->msg, "one kernel would hold %u reductions > the limit of %u",
                 st->nred, (unsigned)IR_REGION_MAX_REDUCTIONS);
        snprintf(w->change, sizeof w->change, "nothing: the values at the cut go through memory");
        return false;
    }
    return true;
}

/* The decision for merging producer group a with consumer group b (b reads
 * a value of a, directly or through views). On success fills *st with the
 * merged state and returns true; else fills *w with the rule. */
static bool merge_check(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    const grp *A = &f->gs[a], *B = &f->gs[b];
    if (f->c->no_fuse) return no_fuse_rule(w);
    if (guard_rule(f, a, b, w) || recompute_rule(f, a, b, w)) return false;
    *st = *A;
    if (st->pieces == IR_NONE) st->pieces = B->pieces;
    if (!A->nrc) st->rc = B->rc;
    st->nrc = A->nrc + B->nrc;
    st->fusion |= B->fusion;
    st->vin = A->vin || B->vin;
    int ka = A->kind, kb = B->kind;
    bool ok;
    if (ka == IR_RK_ATTENTION || kb == IR_RK_ATTENTION)
        ok = check_attention(f, a, b, st, w);
    else if (ka == IR_RK_MATMUL && kb == IR_RK_MATMUL)
        ok = check_mm_mm(f, a, b, st, w);
    else if (ka == IR_RK_MATMUL || kb == IR_RK_MATMUL)
        ok = check_mm_other(f, a, b, st, w);
    else if (ka == IR_RK_POINTWISE && kb == IR_RK_POINTWISE)
        ok = check_pw_pw(f, a, b, st, w);
    else
        ok = check_reduction(f, a, b, st, w);
    return ok && check_capacity(f, a, b, st, w) && check_structure(f, a, b, st, true, w);
}

/* ---- attention --------------------------------------------------------- */

/* Steps back over broadcast_to/reshape views; appends them to chain. */
static ir_id strip_bview(const ir_graph *g, ir_id x, ir_id *chain, unsigned *n) {
    while ((g->nodes[x].op == IR_OP_BROADCAST || g->nodes[x].op == IR_OP_RESHAPE) && *n < 32) {
        chain[(*n)++] = x;
        x = ir_in(g, &g->nodes[x], 0);
    }
    return x;
}

/* True when reduction node r of op `op` reduces the last axis of x. */
static bool last_axis_red(const ir_graph *g, ir_id r, ir_op op, ir_id x) {
    const ir_node *nd = &g->nodes[r];
    return nd->op == op && ir_in(g, nd, 0) == x &&
           nd->a.red.axes == (1u << (g->nodes[x].shape.rank - 1));
}

/* Steps back over casts; appends them to chain. */
static ir_id strip_casts(const ir_graph *g, ir_id x, ir_id *chain, unsigned *n) {
    while (g->nodes[x].op == IR_OP_CAST && *n < 16) {
        chain[(*n)++] = x;
        x = ir_in(g, &g->nodes[x], 0);
    }
    return x;
}

/* Recognises m2 = cast*(p) @ v with p = e / sum(e) (or e * recip(sum(e))),
 * e = exp(x - max(x)), both reductions over the last axis (keepdim results
 * read through views). Appends those nodes to set and returns x, the
 * softmax input; IR_NONE when m2 does not end a softmax. */
static ir_id match_softmax(const ir_graph *g, ir_id m2, ir_id *set, unsigned *n) {
    if (g->nodes[m2].op != IR_OP_MATMUL) return IR_NONE;
    set[(*n)++] = m2;
    ir_id p = strip_casts(g, ir_in(g, &g->nodes[m2], 0), set, n);
    const ir_node *pd = &g->nodes[p];
    if (pd->op != IR_OP_DIV && pd->op != IR_OP_MUL) return IR_NONE;
    set[(*n)++] = p;
    ir_id e = ir_in(g, pd, 0), s = strip_bview(g, ir_in(g, pd, 1), set, n);
    if (pd->op == IR_OP_MUL) {
        if (g->nodes[s].op != IR_OP_RECIP) return IR_NONE;
        set[(*n)++] = s;
        s = strip_bview(g, ir_in(g, &g->nodes[s], 0), set, n);
    }
    if (g->nodes[e].op != IR_OP_EXP || !last_axis_red(g, s, IR_OP_SUM, e)) return IR_NONE;
    set[(*n)++] = s;
    set[(*n)++] = e;
    ir_id sub = ir_in(g, &g->nodes[e], 0);
    if (g->nodes[sub].op != IR_OP_SUB) return IR_NONE;
    set[(*n)++] = sub;
    ir_id x = ir_in(g, &g->nodes[sub], 0), mx = strip_bview(g, ir_in(g, &g->nodes[sub], 1), set, n);
    if (!last_axis_red(g, mx, IR_OP_MAX, x)) return IR_NONE;
    set[(*n)++] = mx;
    return x;
}

static bool elem_or_view(const ir_graph *g, ir_id i) {
    return (ir_op_traits((ir_op)g->nodes[i].op) & (IR_T_ELEM | IR_T_VIEW)) != 0;
}

/* The product the scores x are computed from: the one matmul of x's shape
 * reached from x backwards through elementwise nodes and views (x itself
 * when it is a matmul). IR_NONE when there is none or more than one. */
static ir_id scores_product(fz *f, ir_id x) {
    const ir_graph *g = f->g;
    ir_id found = IR_NONE;
    unsigned sp = 0;
    memset(f->mark, 0, g->n);
    f->stack[sp++] = x;
    f->mark[x] = 1;
    while (sp) {
        ir_id y = f->stack[--sp];
        if (g->nodes[y].op == IR_OP_MATMUL) {
            if (!ir_shape_eq(&g->nodes[y].shape, &g->nodes[x].shape)) continue;
            if (found != IR_NONE && found != y) return IR_NONE;
            found = y;
            continue;
        }
        if (!elem_or_view(g, y)) continue;
        for (unsigned k = 0; k < g->nodes[y].nin; k++) {
            ir_id z = ir_in(g, &g->nodes[y], k);
            if (!f->mark[z]) f->mark[z] = 1, f->stack[sp++] = z;
        }
    }
    return found;
}

/* Collects F, the score graph between mm1 and the softmax input x, into
 * set: the nodes that depend on mm1 (elementwise or views, by
 * construction) and the elementwise work and views that only they use
 * (biases, masks built from iota/arange and inputs: recomputed per score).
 * Values F reads that are neither stay outside (loaded from HBM). *bad gets
 * a node that depends on mm1 but breaks the pattern (a shape other than
 * the scores'), or IR_NONE. Returns the new count. */
static unsigned collect_scores(fz *f, ir_id mm1, ir_id x, ir_id *set, unsigned n, unsigned cap,
                               ir_id *bad) {
    const ir_graph *g = f->g;
    uint8_t *mk =
        f->mark; /* bit 0: in the backward cone of x, bit 1: depends on mm1, bit 2: in set */
    memset(mk, 0, g->n);
    *bad = IR_NONE;
    for (unsigned i = 0; i < n; i++) mk[set[i]] |= 4;
    mk[mm1] |= 2;
    for (ir_id i = mm1 + 1; i <= x; i++) {
        if (!elem_or_view(g, i)) continue;
        for (unsigned k = 0; k < g->nodes[i].nin; k++)
            if (mk[ir_in(g, &g->nodes[i], k)] & 2) mk[i] |= 2;
    }
    mk[x] |= 1;
    for (ir_id i = x + 1; i-- > 0;) {
        if (!(mk[i] & 1) || i == mm1 || ir_is_gen(g, i) || g->nodes[i].op == IR_OP_INPUT) continue;
        bool take = (mk[i] & 2) != 0;
        if (take && !ir_shape_eq(&g->nodes[i].shape, &g->nodes[x].shape) && !is_view(g, i) &&
            *bad == IR_NONE)
            *bad = i;
        if (!take && elem_or_view(g, i)) { /* used only inside the pattern? */
            take = true;
            for (uint32_t k = f->u.start[i]; k < f->u.start[i + 1] && take; k++)
                take = (mk[f->u.ids[k]] & 4) != 0;
        }
        if (!take || n >= cap) continue;
        set[n++] = i;
        mk[i] |= 4;
        for (unsigned k = 0; k < g->nodes[i].nin; k++) mk[ir_in(g, &g->nodes[i], k)] |= 1;
    }
    return n;
}

/* Recognises softmax(F(q @ kT)) @ v ending at m2 (docs/fusion.md): fills
 * the pattern's nodes into set (mm1 last) and returns their count; 0 when
 * m2 does not end a softmax over the scores of one product. *mm1 and *x
 * get the product and the softmax input; *bad a node of F that breaks it;
 * *nsoft the count of softmax nodes (F follows them in set). */
static unsigned match_attention(fz *f, ir_id m2, ir_id *set, unsigned cap, ir_id *mm1, ir_id *x,
                                ir_id *bad, unsigned *nsoft) {
    unsigned n = 0;
    *bad = IR_NONE;
    *x = match_softmax(f->g, m2, set, &n);
    if (*x == IR_NONE) return 0;
    *mm1 = scores_product(f, *x);
    if (*mm1 == IR_NONE || *mm1 == m2) return 0;
    *nsoft = n;
    n = collect_scores(f, *mm1, *x, set, n, cap - 1, bad);
    set[n++] = *mm1;
    return n;
}

/* Writes the --explain line of an attention pattern left unfused: which
 * node broke it, why, and the score traffic the split plan then costs. */
static void explain_split(fz *f, ir_id mm1, ir_id m2, ir_id x, const char *rule,
                          const char *why_s) {
    if (!f->c->explain) return;
    char n1[96], n2[96], sb[128];
    ir_poly p;
    pass_numel(f->g, &f->g->nodes[x].shape, ir_dtype_size((ir_dtype)f->g->nodes[x].dtype), &p);
    fprintf(f->c->explain,
            "attention %s .. %s: not fused [%s]: %s; the unfused plan writes and reads back the "
            "scores (%s B per "
            "pass over HBM)\n",
            nname(f->g, mm1, n1, sizeof n1), nname(f->g, m2, n2, sizeof n2), rule, why_s,
            ir_poly_str(f->g, &p, sb, sizeof sb));
}

/* [attention.lse]: the row logsumexp log(l) + m of the softmax over x whose max and sum are in
 * set[0 .. n) (pass_attention_lse_node), when every use of that sum and max outside the set is
 * it (the log only by it) and the target's attention kernel writes it: the host kernel, or on
 * sm_90a the FA3 kernel (its shape rule; the mma.sync and key-split kernels refuse such a
 * region). IR_NONE otherwise. */
static ir_id attn_lse_of(fz *f, ir_id x, const ir_id *set, unsigned n) {
    const ir_graph *g = f->g;
    pass_target t = f->c->target;
    if (!(t.arch || t.host) ||
        (t.arch && !pass_attention_fa3_shape(g, set[n - 1], set[0], NULL, 0)))
        return IR_NONE;
    ir_id lse = IR_NONE, lg = IR_NONE;
    for (unsigned i = 0; i < n && lse == IR_NONE; i++) {
        if (g->nodes[set[i]].op != IR_OP_SUM) continue;
        for (uint32_t k = f->u.start[set[i]]; k < f->u.start[set[i] + 1]; k++) {
            ir_id w = f->u.ids[k];
            for (uint32_t j = f->u.start[w]; g->nodes[w].op == IR_OP_LOG && j < f->u.start[w + 1];
                 j++)
                if (pass_attention_lse_node(g, x, f->u.ids[j], &lg) && lg == w) lse = f->u.ids[j];
        }
    }
    if (lse == IR_NONE) return IR_NONE;
    const ir_node *a = &g->nodes[lse];
    for (unsigned s = 0; s < 2; s++) { /* the sum's and the max's outside uses: the log, lse */
        ir_id r = s ? (ir_in(g, a, 0) == lg ? ir_in(g, a, 1) : ir_in(g, a, 0))
                    : ir_in(g, &g->nodes[lg], 0);
        for (uint32_t k = f->u.start[r]; k < f->u.start[r + 1]; k++) {
            ir_id w = f->u.ids[k];
            bool in = w == lg || w == lse;
            for (unsigned i = 0; i < n && !in; i++) in = set[i] == w;
            if (!in) return IR_NONE;
        }
    }
    for (uint32_t k = f->u.start[lg]; k < f->u.start[lg + 1]; k++)
        if (f->u.ids[k] != lse) return IR_NONE;
    return lse;
}

/* Tries to plan the attention pattern ending at m2 as one group. Returns
 * true when formed; otherwise explains why (when the shape matched). */
static bool try_attention(fz *f, ir_id m2) {
    ir_graph *g = f->g;
    enum { CAP = 512 };
    ir_id set[CAP], m1, x, bad;
    unsigned nsoft = 0;
    unsigned n = match_attention(f, m2, set, CAP - 2, &m1, &x, &bad, &nsoft);
    if (!n) return false;
    char n1[96], n2[96], n3[96], msg[400];
    if (bad != IR_NONE) {
        snprintf(
            msg, sizeof msg,
            "%s (%s) between the product and the softmax does not have the scores' shape; would "
            "change: keep every step of the scores elementwise on their shape",
            nname(g, bad, n1, sizeof n1), ir_op_name((ir_op)g->nodes[bad].op));
        explain_split(f, m1, m2, x, "attention.scores", msg);
        return false;
    }
    ir_id lse = n + 2 <= CAP ? attn_lse_of(f, x, set, n) : IR_NONE, lg = IR_NONE;
    if (lse != IR_NONE) { /* [attention.lse]: log(l) + m joins, before mm1 (last in set) */
        pass_attention_lse_node(g, x, lse, &lg);
        set[n + 1] = set[n - 1];
        set[n - 1] = lg, set[n] = lse;
        n += 2;
    }
    memset(f->mark, 0, g->n);
    for (unsigned i = 0; i < n; i++) f->mark[set[i]] = 1;
    for (unsigned i = 0; i < n; i++) {
        if (set[i] == m2 || set[i] == lse) continue;
        for (uint32_t k = f->u.start[set[i]]; k < f->u.start[set[i] + 1]; k++) {
            ir_id w = f->u.ids[k];
            if (f->mark[w]) continue;
            snprintf(msg, sizeof msg,
                     "%s is also used by %s (%s), so the scores must reach HBM; would change: use "
                     "the scores only inside the softmax",
                     nname(g, set[i], n1, sizeof n1), nname(g, w, n2, sizeof n2),
                     ir_op_name((ir_op)g->nodes[w].op));
            explain_split(f, m1, m2, x, "attention.escape", msg);
            return false;
        }
    }
    const ir_node *q = &g->nodes[ir_in(g, &g->nodes[m1], 0)],
                  *v = &g->nodes[ir_in(g, &g->nodes[m2], 1)];
    int64_t d = q->shape.dim[q->shape.rank - 1], dv = v->shape.dim[v->shape.rank - 1];
    int e = ir_dtype_size((ir_dtype)q->dtype);
    if (ir_dtype_size((ir_dtype)v->dtype) > e) e = ir_dtype_size((ir_dtype)v->dtype);
    int64_t bq, bkv;
    int st;
    int64_t budget = pass_sram_budget(f->c);
    if (IR_DIM_IS_SYM(d) || IR_DIM_IS_SYM(dv) ||
        !pass_attention_fit(d, dv, e, budget, &bq, &bkv, &st)) {
        if (f->c->explain) {
            if (IR_DIM_IS_SYM(d) || IR_DIM_IS_SYM(dv))
                fprintf(f->c->explain,
                        "attention %s .. %s: split [attention.symbolic_head]: the head dim is "
                        "unbound, the tile plan "
                        "cannot be sized; would change: bind it with -D\n",
                        nname(g, m1, n1, sizeof n1), nname(g, m2, n2, sizeof n2));
            else
                fprintf(f->c->explain,
                        "attention %s .. %s: split [attention.budget]: the smallest tile plan "
                        "(16x16, head dims %lld/%lld) "
                        "needs %lld B on chip > budget %lld B; fits with --sram-budget >= %lld\n",
                        nname(g, m1, n1, sizeof n1), nname(g, m2, n2, sizeof n2), (long long)d,
                        (long long)dv, (long long)pass_attention_sram(16, 16, d, dv, e, 1),
                        (long long)budget, (long long)pass_attention_sram(16, 16, d, dv, e, 1));
        }
        return false;
    }
    for (unsigned i = 0; i < n; i++) /* pattern nodes must still be ungrouped */
        if (!is_view(g, set[i]) && find(f, set[i]) != set[i]) return false;
    grp ag = {.kind = IR_RK_ATTENTION,
              .fusion = IR_FUSE_ATTENTION,
              .dom = g->nodes[m2].shape,
              .anchor = m2,
              .mm1 = m1,
              .scores = x,
              .pieces = IR_NONE};
    uint32_t r = find(f, m2);
    for (unsigned i = 0; i < n; i++)
        if (!is_view(g, set[i]) && find(f, set[i]) != r) r = join(f, r, find(f, set[i]), &ag);
    ag.nops = ag.nred = 0;
    FOR_MEMBERS(f, r, m) {
        ag.nops++;
        ag.nred += (ir_op_traits((ir_op)g->nodes[m].op) & IR_T_REDUCE) != 0;
        ag.nbuf += g->nodes[m].nin + 1;
    }
    f->gs[r] = ag;
    unsigned steps = 0;
    for (unsigned i = nsoft; i + 1 < n; i++)
        steps += !is_view(g, set[i]) && set[i] != lse && set[i] != lg;
    if (f->c->explain)
        fprintf(
            f->c->explain,
            "attention %s .. %s: fused [attention]: softmax(F(scores)) @ v, F of %u elementwise "
            "step%s computed per score in one online-softmax kernel\n",
            nname(g, m1, n1, sizeof n1), nname(g, m2, n2, sizeof n2), steps, steps == 1 ? "" : "s");
    if (f->c->explain && lse != IR_NONE)
        fprintf(f->c->explain,
                "attention %s .. %s: [attention.lse] %s = log(sum) + max, the row logsumexp, is "
                "the kernel's second output (from its final softmax state)\n",
                nname(g, m1, n1, sizeof n1), nname(g, m2, n2, sizeof n2),
                nname(g, lse, n3, sizeof n3));
    return true;
}

/* ---- grouping ------------------------------------------------------------ */

/* Initial singleton groups: every compute node its own group. */
static void init_groups(fz *f) {
    ir_graph *g = f->g;
    for (ir_id i = 0; i < g->n; i++) {
        ir_node *nd = &g->nodes[i];
        f->uf[i] = IR_NONE;
        f->nxt[i] = IR_NONE;
        f->tail[i] = i;
        if (!pass_is_compute((ir_op)nd->op)) continue;
        f->uf[i] = i;
        grp *s = &f->gs[i];
        memset(s, 0, sizeof *s);
        s->anchor = i;
        s->pieces = IR_NONE;
        s->nops = 1;
        s->napart = f->frozen && f->frozen[i] == GUARD_APART;
        s->nbuf = nd->nin + 1;
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id in = ir_in(g, nd, k);
            if (!is_view(g, in)) continue;
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, in, src, PASS_SRC_CAP);
            for (unsigned t = 0; t < ns; t++) s->vin |= pass_is_compute((ir_op)g->nodes[src[t]].op);
        }
        s->dom = nd->shape;
        unsigned t = ir_op_traits((ir_op)nd->op);
        if (t & IR_T_REDUCE) {
            s->kind = IR_RK_REDUCTION;
            s->nred = 1;
            s->dom = g->nodes[ir_in(g, nd, 0)].shape;
            s->raxes = nd->a.red.axes;
        } else if (t & IR_T_MATMUL) {
            s->kind = IR_RK_MATMUL;
        } else {
            s->kind = IR_RK_POINTWISE;
        }
    }
}

/* One sweep of vertical merges over every producer-consumer edge in node
 * order. Returns true when something merged. */
static bool vertical_sweep(fz *f) {
    ir_graph *g = f->g;
    bool any = false;
    for (ir_id n = 0; n < g->n; n++) {
        if (f->uf[n] == IR_NONE) continue;
        const ir_node *nd = &g->nodes[n];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) {
                if (f->uf[src[s]] == IR_NONE) continue;
                uint32_t a = find(f, src[s]), b = find(f, n);
                if (a == b) continue;
                grp st;
                why w;
                if (merge_check(f, a, b, &st, &w)) {
                    join(f, a, b, &st);
                    any = true;
                }
            }
        }
    }
    return any;
}

/* Groups reading HBM value s (s outside them), in root order; returns count. */
static unsigned readers(fz *f, ir_id s, uint32_t *out, unsigned cap) {
    unsigned nc = consumers(f, s, f->cbuf, 0, f->g->n, NULL), n = 0;
    for (unsigned k = 0; k < nc; k++) {
        uint32_t r = find(f, f->cbuf[k]);
        if (f->uf[s] != IR_NONE && find(f, s) == r) continue;
        bool dup = false;
        for (unsigned i = 0; i < n; i++) dup |= out[i] == r;
        if (!dup && n < cap) out[n++] = r;
    }
    for (unsigned i = 1; i < n; i++) /* insertion sort: deterministic order */
        for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
            uint32_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* True when a member of group b reads (through views) a member of group a. */
static bool group_reads(fz *f, uint32_t b, uint32_t a) {
    const ir_graph *g = f->g;
    ir_id src[PASS_SRC_CAP];
    FOR_MEMBERS(f, b, m) {
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned t = 0; t < ns; t++)
                if (in_grp(f, src[t], a)) return true;
        }
    }
    return false;
}

/* Bytes of the HBM values group o reads (through views) that group r reads too; -1 when one
 * of them has a symbolic size. */
static int64_t shared_read_bytes(fz *f, uint32_t o, uint32_t r) {
    const ir_graph *g = f->g;
    idset mine = {0};
    ir_id src[PASS_SRC_CAP];
    FOR_MEMBERS(f, o, m) {
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned t = 0; t < ns; t++)
                if (!in_grp(f, src[t], o) && !ir_is_gen(g, src[t])) idset_add(&mine, src[t]);
        }
    }
    int64_t bytes = 0;
    idset both = {0};
    FOR_MEMBERS(f, r, m) {
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned t = 0; t < ns; t++) {
                if (!idset_has(&mine, src[t]) || !idset_add(&both, src[t])) continue;
                int64_t ne = ir_shape_numel(&g->nodes[src[t]].shape);
                bytes = ne < 0 || bytes < 0
                            ? -1
                            : bytes + ne * ir_dtype_size((ir_dtype)g->nodes[src[t]].dtype);
            }
        }
    }
    free(mine.slot);
    free(both.slot);
    return bytes;
}

/* [reduction.side_outputs]: a pointwise sibling o of reduction group r (both read one tensor,
 * neither reads the other) joins r's kernel when it iterates r's domain and r's rows (concrete)
 * are at least as many as the GPU has SMs, so the reduction kernel's blocks stream the sibling's
 * values at the rate its own kernel would; its values are stored in the reduction kernel's first
 * pass over the row (they depend on no reduction). The price: apart, o's kernel re-reads the
 * shared values and pays a launch (side_us); together, nothing is added, so the merge is taken
 * when the shared bytes are known. Fills *st (the reduction's state) or *w. */
static bool side_outputs_check(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    uint32_t r = f->gs[a].kind == IR_RK_REDUCTION ? a : b, o = r == a ? b : a;
    const grp *R = &f->gs[r], *O = &f->gs[o];
    const pass_gpu *gpu = pass_ctx_gpu(f->c);
    char d1[128], d2[128], n1[96], n2[96];
    int64_t ne = ir_shape_numel(&R->dom), len = 1;
    for (unsigned i = 0; i < R->dom.rank; i++)
        if (R->raxes & (1u << i)) len = IR_DIM_IS_SYM(R->dom.dim[i]) ? -1 : len * R->dom.dim[i];
    int64_t rows = ne < 0 || len <= 0 ? -1 : ne / len;
    why_set(w, "reduction.side_outputs");
    snprintf(w->change, sizeof w->change,
             "nothing: the sibling's values are written by a pointwise kernel of their own");
    if (!ir_shape_eq(&O->dom, &R->dom)) {
        snprintf(w->msg, sizeof w->msg,
                 "the pointwise kernel of %s iterates %s, not the domain %s of the reduction %s",
                 nname(f->g, O->anchor, n1, sizeof n1), ir_shape_str(f->g, &O->dom, d1, sizeof d1),
                 ir_shape_str(f->g, &R->dom, d2, sizeof d2), nname(f->g, R->anchor, n2, sizeof n2));
        return false;
    }
    if (!gpu || gpu->sms <= 0 || gpu->hbm_GBps <= 0 || rows < gpu->sms ||
        (R->raxes & (1u << (R->dom.rank - 1))) == 0) {
        snprintf(w->msg, sizeof w->msg,
                 "the reduction %s has %lld rows%s, fewer than the %d SMs (or unknown, or not "
                 "rows of the innermost axis): its kernel would carry the pointwise values of %s "
                 "on too few blocks",
                 nname(f->g, R->anchor, n2, sizeof n2), (long long)rows,
                 (R->raxes & (1u << (R->dom.rank - 1))) ? "" : " (columns)", gpu ? gpu->sms : 0,
                 nname(f->g, O->anchor, n1, sizeof n1));
        if (rows < 0) snprintf(w->change, sizeof w->change, "bind the sizes with -D");
        return false;
    }
    int64_t bytes = shared_read_bytes(f, o, r);
    if (bytes <= 0) {
        snprintf(w->msg, sizeof w->msg, "%s and %s share no value of known size",
                 nname(f->g, O->anchor, n1, sizeof n1), nname(f->g, R->anchor, n2, sizeof n2));
        return false;
    }
    *st = *R;
    if (!R->nrc) st->rc = O->rc;
    st->nrc = R->nrc + O->nrc;
    st->fusion |= O->fusion | IR_FUSE_HORIZONTAL;
    st->vin = R->vin || O->vin;
    if (!check_capacity(f, a, b, st, w)) return false;
    st->side = O->anchor;
    st->nside = R->nside + 1;
    st->side_bytes = bytes;
    st->side_us = gpu->launch_us + (double)bytes / (gpu->hbm_GBps * 1e3);
    return true;
}

/* Sibling decision: groups a and b both read one tensor and neither reads
 * the other. Same contract as merge_check. */
static bool sibling_check(fz *f, uint32_t a, uint32_t b, grp *st, why *w) {
    ir_graph *g = f->g;
    const grp *A = &f->gs[a], *B = &f->gs[b];
    char d1[128], d2[128];
    if (f->c->no_fuse) return no_fuse_rule(w);
    if (guard_rule(f, a, b, w) || recompute_rule(f, a, b, w)) return false;
    *st = *A;
    if (!A->nrc) st->rc = B->rc;
    st->nrc = A->nrc + B->nrc;
    st->fusion |= B->fusion | IR_FUSE_HORIZONTAL;
    st->vin = A->vin || B->vin;
    if (!check_capacity(f, a, b, st, w)) return false;
    bool ok;
    if ((A->kind == IR_RK_REDUCTION && B->kind == IR_RK_POINTWISE) ||
        (A->kind == IR_RK_POINTWISE && B->kind == IR_RK_REDUCTION))
        return side_outputs_check(f, a, b, st, w) && check_structure(f, a, b, st, false, w);
    if (A->kind != B->kind) {
        why_set(w, "sibling.kind");
        snprintf(w->msg, sizeof w->msg, "a %s kernel and a %s kernel",
                 ir_region_kind_name((ir_region_kind)A->kind),
                 ir_region_kind_name((ir_region_kind)B->kind));
        snprintf(w->change, sizeof w->change,
                 "nothing: siblings merge only within one kernel kind");
        return false;
    }
    if (A->kind == IR_RK_MATMUL)
        ok = mm_groups_siblings(f, a, b);
    else if (A->kind == IR_RK_ATTENTION)
        ok = false;
    else
        ok = ir_shape_eq(&A->dom, &B->dom) && A->raxes == B->raxes;
    if (ok && A->kind == IR_RK_REDUCTION && column_few(f, A) &&
        (group_reads(f, b, a) || group_reads(f, a, b))) {
        why_set(w, "reduction.column_stages");
        snprintf(w->msg, sizeof w->msg,
                 "column reductions of %s, too few columns to fill the GPU whole, one reading the "
                 "other's result: apart, each splits its reduced axis across blocks",
                 ir_shape_str(g, &A->dom, d1, sizeof d1));
        snprintf(w->change, sizeof w->change,
                 "nothing: the reduced values go through memory (a few bytes a column)");
        return false;
    }
    if (!ok) {
        why_set(w, "sibling.domain");
        snprintf(w->msg, sizeof w->msg, "iteration spaces differ: %s vs %s%s",
                 ir_shape_str(g, &A->dom, d1, sizeof d1), ir_shape_str(g, &B->dom, d2, sizeof d2),
                 A->kind == IR_RK_MATMUL ? " (or the products' operands differ)"
                 : A->raxes != B->raxes  ? " (different reduced axes)"
                                         : "");
        snprintf(w->change, sizeof w->change, "nothing: a kernel has one iteration space");
        return false;
    }
    ir_id via;
    if (makes_cycle(f, a, b, false, &via)) {
        why_set(w, "cycle");
        snprintf(w->msg, sizeof w->msg, "one depends on the other through %%%u", via);
        snprintf(w->change, sizeof w->change, "nothing: kernels must form an acyclic launch order");
        return false;
    }
    return true;
}

/* Horizontal merges: for every tensor, the groups that read it merge
 * pairwise when sibling_check allows. Returns true when something merged. */
static bool horizontal_sweep(fz *f) {
    bool any = false;
    for (ir_id s = 0; s < f->g->n; s++) {
        if (is_view(f->g, s) || ir_is_gen(f->g, s) || f->g->nodes[s].op == IR_OP_OUTPUT) continue;
        uint32_t rs[64];
        unsigned n = readers(f, s, rs, 64);
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = i + 1; j < n; j++) {
                uint32_t a = find(f, rs[i]), b = find(f, rs[j]);
                grp st;
                why w;
                if (a != b && sibling_check(f, a, b, &st, &w)) {
                    join(f, a, b, &st);
                    any = true;
                }
            }
    }
    return any;
}

enum { BATCH_TRIES = 64 };

/* Batches small independent pointwise groups of one concrete domain
 * (numel <= BATCH_MAX_ELEMS) into one launch, trying at most BATCH_TRIES
 * later groups of that domain per group. */
static void batch_small(fz *f) {
    ir_graph *g = f->g;
    for (ir_id a = 0; a < g->n; a++) {
        if (f->uf[a] != a || f->gs[a].kind != IR_RK_POINTWISE) continue;
        int64_t ne = ir_shape_numel(&f->gs[a].dom);
        if (ne < 0 || ne > BATCH_MAX_ELEMS) continue;
        unsigned tries = 0; /* bounded: at most BATCH_TRIES candidates per group */
        for (ir_id b = a + 1; b < g->n && tries < BATCH_TRIES; b++) {
            if (f->uf[b] != b || f->gs[b].kind != IR_RK_POINTWISE ||
                !ir_shape_eq(&f->gs[a].dom, &f->gs[b].dom))
                continue;
            tries++;
            grp st;
            why w;
            if (sibling_check(f, a, b, &st, &w)) join(f, a, b, &st);
        }
    }
}

/* Bytes of the HBM values group o reads (through views) from outside itself; -1 when one has a
 * symbolic size. */
static int64_t group_read_bytes(fz *f, uint32_t o) {
    const ir_graph *g = f->g;
    idset seen = {0};
    ir_id src[PASS_SRC_CAP];
    int64_t bytes = 0;
    FOR_MEMBERS(f, o, m) {
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned t = 0; t < ns; t++) {
                if (in_grp(f, src[t], o) || ir_is_gen(g, src[t]) || !idset_add(&seen, src[t]))
                    continue;
                int64_t ne = ir_shape_numel(&g->nodes[src[t]].shape);
                bytes = ne < 0 || bytes < 0
                            ? -1
                            : bytes + ne * ir_dtype_size((ir_dtype)g->nodes[src[t]].dtype);
            }
        }
    }
    free(seen.slot);
    return bytes;
}

/* [reduction.batch]: independent reduction groups of one concrete domain and reduced axes (the
 * norms of two inputs of one shape) merge into one launch when what they read, together, streams
 * at the datasheet HBM rate in less time than one launch costs: apart, each such kernel is
 * launch- and latency-bound. At most BATCH_TRIES later groups of that domain per group;
 * sibling_check decides the rest (capacity, cycles, column stages). */
static void batch_reductions(fz *f) {
    ir_graph *g = f->g;
    const pass_gpu *gpu = pass_ctx_gpu(f->c);
    if (!gpu || gpu->hbm_GBps <= 0) return;
    for (ir_id a = 0; a < g->n; a++) {
        if (f->uf[a] != a || f->gs[a].kind != IR_RK_REDUCTION || ir_shape_numel(&f->gs[a].dom) < 0)
            continue;
        unsigned tries = 0; /* bounded: at most BATCH_TRIES candidates per group */
        for (ir_id b = a + 1; b < g->n && tries < BATCH_TRIES; b++) {
            if (f->uf[b] != b || f->gs[b].kind != IR_RK_REDUCTION ||
                f->gs[b].raxes != f->gs[a].raxes || !ir_shape_eq(&f->gs[a].dom, &f->gs[b].dom))
                continue;
            tries++;
            int64_t ba = group_read_bytes(f, a), bb = group_read_bytes(f, b);
            double us = (double)(ba + bb) / (gpu->hbm_GBps * 1e3);
            grp st;
            why w;
            if (ba < 0 || bb < 0 || us >= gpu->launch_us || !sibling_check(f, a, b, &st, &w))
                continue;
            st.nbatch = f->gs[a].nbatch + f->gs[b].nbatch + 1;
            st.batch_us = us;
            join(f, a, b, &st);
        }
    }
}

/* ---- regions ------------------------------------------------------------- */

static uint32_t add_region(ir_graph *g, int k, ir_id anchor) {
    if (g->nregions == g->regcap) {
        g->regcap = g->regcap ? 2 * g->regcap : 16;
        g->regions = ir_xrealloc(g->regions, g->regcap * sizeof *g->regions);
    }
    ir_region *r = &g->regions[g->nregions];
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)k;
    r->anchor = anchor;
    r->threads = 256;
    r->mm1 = r->scores = IR_NONE;
    return g->nregions++;
}

/* Binary min-heap of ids (capacity: the caller's buffer of g->n + 1). */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t v) {
    uint32_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n) {
    uint32_t top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
    return top;
}

/* Emits the groups as regions in a topological order of the group graph
 * (ties: the group whose first node comes first). Sets node.region. */
static void emit_regions(fz *f) {
    ir_graph *g = f->g;
    uint32_t *indeg = ir_xcalloc(g->n, sizeof *indeg);
    for (ir_id m = 0; m < g->n; m++) { /* count group edges (with multiplicity) */
        if (f->uf[m] == IR_NONE) continue;
        const ir_node *nd = &g->nodes[m];
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++)
                if (f->uf[src[s]] != IR_NONE && find(f, src[s]) != find(f, m)) indeg[find(f, m)]++;
        }
    }
    for (ir_id i = 0; i < g->n; i++) f->rid[i] = IR_NONE;
    uint32_t *heap = f->stack,
             nh = 0; /* ready roots, a min-heap: the group whose first member comes first */
    for (ir_id m = 0; m < g->n; m++)
        if (f->uf[m] == m && indeg[m] == 0) heap_push(heap, &nh, m);
    while (nh) {
        uint32_t pick = heap_pop(heap, &nh);
        const grp *s = &f->gs[pick];
        uint32_t ri = add_region(g, s->kind, s->anchor);
        g->regions[ri].fusion = s->fusion;
        if (s->kind == IR_RK_ATTENTION)
            g->regions[ri].mm1 = s->mm1, g->regions[ri].scores = s->scores;
        g->regions[ri].red_axes = s->raxes;
        f->rid[pick] = ri;
        FOR_MEMBERS(f, pick, m) {
            g->nodes[m].region = ri;
            unsigned nc = consumers(f, m, f->cbuf, 0, f->g->n, NULL);
            for (unsigned k = 0; k < nc; k++) {
                uint32_t cg = find(f, f->cbuf[k]);
                if (cg == pick) continue;
                const ir_node *cd = &g->nodes[f->cbuf[k]]; /* one edge per operand read of m */
                for (unsigned j = 0; j < cd->nin; j++) {
                    ir_id src[PASS_SRC_CAP];
                    unsigned ns = pass_view_sources(g, ir_in(g, cd, j), src, PASS_SRC_CAP);
                    for (unsigned t = 0; t < ns; t++)
                        if (src[t] == m && --indeg[cg] == 0) heap_push(heap, &nh, cg);
                }
            }
        }
    }
    free(indeg);
}

/* The non-view value under a chain of reshapes from v (v itself when it is none). */
static ir_id reshape_root(const ir_graph *g, ir_id v) {
    while (g->nodes[v].op == IR_OP_RESHAPE) v = ir_in(g, &g->nodes[v], 0);
    return v;
}

/* The value under a chain of reshapes and permutes from v (v itself when it is none). */
static ir_id rp_root(const ir_graph *g, ir_id v) {
    while (g->nodes[v].op == IR_OP_RESHAPE || g->nodes[v].op == IR_OP_PERMUTE)
        v = ir_in(g, &g->nodes[v], 0);
    return v;
}

void pass_fine_start(pass_fine_walk *w, int fine[IR_MAX_RANK], const ir_shape *sh) {
    memset(w, 0, sizeof *w);
    w->rank = sh->rank;
    for (unsigned i = 0; i < sh->rank; i++) {
        fine[i] = -1;
        if (sh->dim[i] == 1) continue;
        fine[i] = (int)w->nf, w->fx[w->nf] = sh->dim[i];
        w->ax[i][w->cnt[i]++] = (uint8_t)w->nf++;
    }
}

bool pass_fine_regroup(pass_fine_walk *w, const ir_shape *sh) {
    uint8_t seq[PASS_FINE_MAX];
    unsigned ns = 0, at = 0;
    for (unsigned i = 0; i < w->rank; i++)
        for (unsigned j = 0; j < w->cnt[i] && ns < PASS_FINE_MAX; j++) seq[ns++] = w->ax[i][j];
    pass_fine_walk o = *w;
    o.rank = sh->rank;
    for (unsigned i = 0; i < sh->rank; i++) {
        ir_dim e = sh->dim[i];
        o.cnt[i] = 0;
        if (e == 1) continue;
        if (at < ns && w->fx[seq[at]] == e) {
            o.ax[i][o.cnt[i]++] = seq[at++];
            continue;
        }
        if (IR_DIM_IS_SYM(e)) return false;
        int64_t prod = 1;
        while (prod < e && at < ns && !IR_DIM_IS_SYM(w->fx[seq[at]])) {
            prod *= w->fx[seq[at]];
            o.ax[i][o.cnt[i]++] = seq[at++];
        }
        if (prod != e) return false;
    }
    if (at != ns) return false;
    *w = o;
    return true;
}

bool pass_view_strides_of(const ir_graph *g, ir_id u, ir_id v, pass_view_strides *s) {
    memset(s, 0, sizeof *s);
    ir_id chain[64];
    unsigned nc = 0;
    for (ir_id x = v; x != u; x = ir_in(g, &g->nodes[x], 0)) {
        const ir_node *n = &g->nodes[x];
        if ((n->op != IR_OP_RESHAPE && n->op != IR_OP_PERMUTE) || nc == 64) return false;
        chain[nc++] = x;
    }
    const ir_node *un = &g->nodes[u];
    pass_fine_walk w;
    int fine[IR_MAX_RANK];
    pass_fine_start(&w, fine, &un->shape);
    while (nc-- > 0) { /* from u up to v */
        const ir_node *n = &g->nodes[chain[nc]];
        if (n->op == IR_OP_PERMUTE) {
            pass_fine_walk o = w;
            for (unsigned i = 0; i < n->shape.rank; i++) {
                unsigned a = n->a.perm[i];
                o.cnt[i] = w.cnt[a];
                memcpy(o.ax[i], w.ax[a], w.cnt[a]);
            }
            w = o;
            s->permuted = true;
        } else if (!pass_fine_regroup(&w, &n->shape)) {
            return false;
        }
    }
    /* memory order at v: its axes in order, each list major first; strides from the minor end */
    int order[IR_MAX_RANK], no = 0;
    for (unsigned i = 0; i < w.rank; i++)
        for (unsigned j = 0; j < w.cnt[i]; j++) order[no++] = w.ax[i][j];
    if ((unsigned)no != w.nf) return false;
    for (unsigned a = 0; a < un->shape.rank; a++) {
        if (fine[a] < 0) continue;
        int at = 0;
        while (order[at] != fine[a]) at++;
        for (int m = at + 1; m < no; m++) s->f[a][s->n[a]++] = w.fx[order[m]];
    }
    unsigned last = un->shape.rank - 1;
    s->inner = un->shape.rank > 0 && (fine[last] < 0 || s->n[last] == 0);
    return true;
}

ir_id pass_view_alias(const ir_graph *g, ir_id v) {
    if (g->nodes[v].op != IR_OP_RESHAPE && g->nodes[v].op != IR_OP_PERMUTE) return IR_NONE;
    ir_id u = rp_root(g, v);
    const ir_node *un = &g->nodes[u];
    if (is_view(g, u) || ir_is_gen(g, u) || un->op == IR_OP_INPUT || un->op == IR_OP_CONST ||
        un->op == IR_OP_OUTPUT || un->region == IR_NONE)
        return IR_NONE;
    const ir_node *out = &g->nodes[ir_output(g)];
    if (reshape_root(g, v) != u) { /* permutes: the attention kernel stores through the view */
        pass_view_strides st;
        if (un->region >= g->nregions || g->regions[un->region].kind != IR_RK_ATTENTION ||
            !pass_view_strides_of(g, u, v, &st))
            return IR_NONE;
        for (ir_id x = v; x != u; x = ir_in(g, &g->nodes[x], 0))
            if (nusers(g, ir_in(g, &g->nodes[x], 0)) != 1) return IR_NONE;
        unsigned nret = 0;
        for (unsigned k = 0; k < out->nin; k++) nret += ir_in(g, out, k) == v;
        if (nusers(g, v) != 1 || nret != 1) return IR_NONE;
        return u;
    }
    for (unsigned k = 0; k < out->nin; k++) {
        ir_id w = ir_in(g, out, k);
        if (w == u || (w != v && reshape_root(g, w) == u)) return IR_NONE;
    }
    return u;
}

/* Returned views and generated leaves (constants, iotas) become COPY regions (appended last:
 * nothing reads a copy), except a returned reshape of a computed value (pass_view_alias: it
 * joins the value's region, which stores into the output buffer); other views join the first
 * region that reads them. */
static void place_views(fz *f) {
    ir_graph *g = f->g;
    const ir_node *out = &g->nodes[ir_output(g)];
    for (unsigned k = 0; k < out->nin; k++) {
        ir_id v = ir_in(g, out, k);
        if (!(is_view(g, v) || ir_is_gen(g, v)) || (is_view(g, v) && g->nodes[v].region != IR_NONE))
            continue;
        ir_id u = pass_view_alias(g, v);
        if (u != IR_NONE) {
            g->nodes[v].region = g->nodes[u].region;
            continue;
        }
        bool dup = false;
        for (uint32_t r = 0; r < g->nregions; r++)
            dup |= g->regions[r].kind == IR_RK_COPY && g->regions[r].anchor == v;
        if (dup) continue;
        uint32_t ri = add_region(g, IR_RK_COPY, v);
        if (is_view(g, v)) g->nodes[v].region = ri;
    }
    for (ir_id i = g->n; i-- > 0;) {
        if (!is_view(g, i) || g->nodes[i].region != IR_NONE) continue;
        uint32_t best = IR_NONE;
        for (uint32_t k = f->u.start[i]; k < f->u.start[i + 1]; k++) {
            uint32_t r = g->nodes[f->u.ids[k]].region;
            if (r != IR_NONE && (best == IR_NONE || r < best)) best = r;
        }
        g->nodes[i].region = best;
    }
}

/* ---- tile plans and schedules -------------------------------------------- */

/* Plans region r's tiles, following the tuning cache's measured schedule for it when there is
 * one for this GPU (c->tune); --explain says when an entry was stale or did not apply. */
static void plan_tuned(pass_ctx *c, ir_graph *g, const pass_index *ix, uint32_t r, int64_t budget) {
    char why_buf[768];
    const pass_gpu *gpu = pass_ctx_gpu(c);
    pass_plan_region(g, ix, r, budget, gpu, why_buf, sizeof why_buf);
    if (c->tune && g->regions[r].sched.id != PASS_SCH_NONE) {
        char key[24];
        bool stale = false;
        pass_region_key(g, ix, r, key);
        const pass_tune_entry *e = pass_tune_find(c->tune, key, gpu->name, &stale);
        if (e) {
            ir_schedule want = e->best;
            want.source = IR_SCHED_MEASURED;
            pass_plan_region_with(g, ix, r, budget, gpu, &want, why_buf, sizeof why_buf);
        } else if (stale && c->explain) {
            fprintf(c->explain,
                    "k%u: [schedule.stale] the tuning cache's entry %s was measured on another "
                    "device or driver: ignored (run txc tune again)\n",
                    r, key);
        }
    }
    if (c->explain && why_buf[0]) fprintf(c->explain, "k%u: %s\n", r, why_buf);
    if (c->explain) pass_red_pick_explain(g, ix, r, gpu, budget, c->explain);
}

/* The kernel attention region r runs where FA3 does not (plan_tile.c's choice). */
static const char *attn_kernel_name(const ir_graph *g, uint32_t r) {
    const ir_region *rg = &g->regions[r];
    if (rg->strategy == IR_RED_KSPLIT) return "mma-attn-ksplit (decode)";
    if (!pass_attention_simt(g, r)) return "mma.sync online-softmax";
    if (rg->threads == PASS_ATTN_SG_THREADS)
        return "[attention.simt] CUDA-core (exact f32) online-softmax";
    return "CUDA-core warp-per-row (exact f32) online-softmax";
}

/* The --explain line of attention region r's kernel on a target with the sm_90a kernel: the
 * rule [attention.fa3] (pass_attention_fa3, the one codegen emits by), with how TMA reads each
 * operand, or the reason it fails and the kernel that runs instead. */
static void explain_fa3(pass_ctx *c, const ir_graph *g, uint32_t r) {
    if (pass_ctx_gpu(c)->attn_eff <= 0 || !c->target.arch) return;
    pass_attn_view vw[3];
    char reason[256] = "";
    if (!pass_attention_fa3(g, r, vw, reason, sizeof reason)) {
        fprintf(c->explain, "k%u: [attention.fa3] not taken: %s; the %s kernel runs\n", r, reason,
                attn_kernel_name(g, r));
        return;
    }
    fprintf(c->explain, "k%u: [attention.fa3] the sm_90a kernel fa3-wgmma-tma-ws runs: TMA maps",
            r);
    static const char *const nm[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        fprintf(c->explain, "%s %s of %u dims over %%%u", i ? "," : "", nm[i], vw[i].rank,
                vw[i].base);
        if (vw[i].pitch > 0)
            fprintf(c->explain, " (columns from %lld of rows of %lld)", (long long)vw[i].offset,
                    (long long)vw[i].pitch);
        else if (vw[i].offset > 0)
            fprintf(c->explain, " (from element %lld)", (long long)vw[i].offset);
    }
    fputc('\n', c->explain);
}

/* The --explain lines of key-split attention region r (strategy ksplit): [attention.q_prologue]
 * when the query operand is computed in the kernel (its in-region producer), [attention.ks_tma]
 * on a target with the sm_90a kernels: the region's pick, or why K and V keep cp.async. */
static void explain_ks(pass_ctx *c, const ir_graph *g, uint32_t r) {
    const ir_region *rg = &g->regions[r];
    if (rg->strategy != IR_RED_KSPLIT || rg->mm1 >= g->n) return;
    ir_id q = ir_in(g, &g->nodes[rg->mm1], 0);
    while (g->nodes[q].region == r && (ir_op_traits((ir_op)g->nodes[q].op) & IR_T_VIEW))
        q = ir_in(g, &g->nodes[q], 0);
    if (g->nodes[q].region == r)
        fprintf(c->explain,
                "k%u: [attention.q_prologue] the query %%%u (%s) is computed as the key split "
                "loads its Q tile (no kernel of its own)\n",
                r, q, ir_op_name((ir_op)g->nodes[q].op));
    if (pass_ctx_gpu(c)->attn_eff <= 0 || !c->target.arch) return;
    pass_attn_view vw[2];
    char reason[256];
    if (rg->ks_tma && pass_attention_ks_tma(g, r, vw, reason, sizeof reason))
        fprintf(c->explain,
                "k%u: [attention.ks_tma] K and V by TMA (maps of %u and %u dims over %%%u, %%%u; "
                "64 x 64 boxes, 128-byte swizzle) into an mbarrier ring\n",
                r, vw[0].rank, vw[1].rank, vw[0].base, vw[1].base);
    else if (pass_attention_ks_tma_pick(g, r, reason, sizeof reason) || !reason[0])
        fprintf(c->explain, "k%u: [attention.ks_tma] not taken; K and V by cp.async\n", r);
    else
        fprintf(c->explain, "k%u: [attention.ks_tma] not taken: %s; K and V by cp.async\n", r,
                reason);
}

/* The --explain line of region r's schedule: which, why (model or measurement), its time and
 * the runners-up (predicted, and measured when the cache has them). */
static void explain_schedule(pass_ctx *c, const ir_graph *g, const pass_index *ix, uint32_t r,
                             int64_t budget, const pass_cost *pc) {
    const ir_region *rg = &g->regions[r];
    char b[160];
    if (rg->sched.id == PASS_SCH_NONE) { /* matmul, attention, copies: no space yet */
        pass_model m;
        pass_model_region(g, ix, r, pass_ctx_gpu(c), pc, &m);
        fprintf(c->explain, "k%u: [%s] chosen by the model (no tuning measurement)", r, m.schedule);
        if (pc->concrete) fprintf(c->explain, ", predicted %.3f us", pc->predicted_us);
        fputc('\n', c->explain);
        if (rg->kind == IR_RK_ATTENTION) explain_fa3(c, g, r), explain_ks(c, g, r);
        return;
    }
    pass_schedule_str(&rg->sched, b, sizeof b);
    const char *par = strchr(b, '(');
    const pass_tune_entry *e = NULL;
    if (rg->sched.source == IR_SCHED_MEASURED && c->tune) {
        char key[24];
        bool stale;
        pass_region_key(g, ix, r, key);
        e = pass_tune_find(c->tune, key, pass_ctx_gpu(c)->name, &stale);
    }
    pass_candidate cand[4];
    unsigned n = pass_schedule_candidates(g, ix, r, pass_ctx_gpu(c), budget, cand, 4);
    char rwhy[256] = "";
    if (!e && rg->sched.source != IR_SCHED_MEASURED) {
        pass_sched_facts sf;
        pass_schedule_facts(g, ix, r, pass_ctx_gpu(c), budget, &sf);
        pass_schedule_rule_why(&sf, &rg->sched, rwhy, sizeof rwhy);
    }
    bool faster = false; /* a runner-up the model predicts faster than the rule's choice */
    for (unsigned i = 0; i < n && pc->concrete; i++)
        faster |= !pass_schedule_eq(&cand[i].s, &rg->sched) &&
                  cand[i].predicted_us < pc->predicted_us - 1e-9;
    if (rwhy[0])
        fprintf(c->explain, "k%u: [%s] %s%schosen by the rule (no tuning measurement): %s%s", r,
                pass_schedule_name(rg->sched.id), par ? par : "", par ? " " : "", rwhy,
                faster ? "; the rule does not follow the model's ranking, which predicts a "
                         "runner-up faster: the model prices the column split's blocks faster "
                         "than they run (docs/cost-model.md \"Schedules\")"
                       : "");
    else
        fprintf(c->explain, "k%u: [%s] %s%schosen by %s", r, pass_schedule_name(rg->sched.id),
                par ? par : "", par ? " " : "",
                e ? "measurement (txc tune)" : "the model (no tuning measurement)");
    if (pc->concrete) fprintf(c->explain, ", predicted %.3f us", pc->predicted_us);
    for (unsigned i = 0; e && i < e->ncand; i++)
        if (pass_schedule_eq(&e->cand[i].s, &rg->sched) && e->cand[i].measured_us >= 0)
            fprintf(c->explain, ", measured %.3f us", e->cand[i].measured_us);
    unsigned shown = 0;
    for (unsigned i = 0; i < n; i++) {
        if (pass_schedule_eq(&cand[i].s, &rg->sched)) continue;
        pass_schedule_str(&cand[i].s, b, sizeof b);
        fprintf(c->explain, "%s%s %.3f us", shown++ ? ", " : "; runners-up: ", b,
                cand[i].predicted_us);
        for (unsigned j = 0; e && j < e->ncand; j++)
            if (pass_schedule_eq(&e->cand[j].s, &cand[i].s) && e->cand[j].measured_us >= 0)
                fprintf(c->explain, " (measured %.3f us)", e->cand[j].measured_us);
    }
    for (unsigned j = 0; e && j < e->ncand; j++) { /* measured ones beyond the model's best */
        bool listed = pass_schedule_eq(&e->cand[j].s, &rg->sched);
        for (unsigned i = 0; i < n; i++) listed |= pass_schedule_eq(&e->cand[j].s, &cand[i].s);
        if (listed) continue;
        pass_schedule_str(&e->cand[j].s, b, sizeof b);
        fprintf(c->explain, "%s%s %.3f us", shown++ ? ", " : "; runners-up: ", b,
                e->cand[j].predicted_us);
        if (e->cand[j].measured_us >= 0)
            fprintf(c->explain, " (measured %.3f us)", e->cand[j].measured_us);
    }
    fputc('\n', c->explain);
}

/* ---- explain ----------------------------------------------------------- */

static void explain_line(fz *f, const char *what, why *w) {
    fprintf(f->c->explain, "%s: kept apart [%s]: %s; would change: %s\n", what, w->rule, w->msg,
            w->change);
}

/* One line per kernel that took smaller pointwise work by [pointwise.recompute]'s price: the last
 * such group, its instructions, the issue time of its recomputation and its cost apart. */
static void explain_recompute(fz *f) {
    ir_graph *g = f->g;
    for (ir_id r = 0; r < g->n; r++) {
        const grp *G = &f->gs[r];
        if (f->uf[r] != r || !G->nrc) continue;
        char n1[96], d1[128], d2[128];
        fprintf(f->c->explain,
                "k%u: [pointwise.recompute] %s %s (%.1f instructions per element) is recomputed "
                "per element of %s: %.3f us of issue against %.3f us as its own kernel (a launch "
                "and %lld B written and read)%s\n",
                f->rid[r], nname(g, G->rc.anchor, n1, sizeof n1),
                ir_shape_str(g, &G->rc.dom, d1, sizeof d1), G->rc.instr,
                ir_shape_str(g, &G->dom, d2, sizeof d2), G->rc.extra_us, G->rc.apart_us,
                (long long)G->rc.bytes, G->nrc > 1 ? " (the last of several)" : "");
    }
}

/* One line per reduction kernel that took pointwise siblings as side outputs
 * ([reduction.side_outputs]): the last one, the bytes and the time its own kernel would cost. */
static void explain_side(fz *f) {
    ir_graph *g = f->g;
    for (ir_id r = 0; r < g->n; r++) {
        const grp *G = &f->gs[r];
        if (f->uf[r] != r || G->kind != IR_RK_REDUCTION || !G->nside) continue;
        char n1[96], n2[96];
        fprintf(f->c->explain,
                "k%u: [reduction.side_outputs] the pointwise values of %s are stored by the "
                "reduction kernel of %s as it reads the rows: %lld B not re-read and a launch, "
                "%.3f us saved%s\n",
                f->rid[r], nname(g, G->side, n1, sizeof n1), nname(g, G->anchor, n2, sizeof n2),
                (long long)G->side_bytes, G->side_us, G->nside > 1 ? " (the last of several)" : "");
    }
}

/* One line per reduction kernel that batched independent reductions ([reduction.batch]). */
static void explain_batch(fz *f) {
    ir_graph *g = f->g;
    for (ir_id r = 0; r < g->n; r++) {
        const grp *G = &f->gs[r];
        if (f->uf[r] != r || G->kind != IR_RK_REDUCTION || !G->nbatch) continue;
        char n1[96], d1[128];
        fprintf(f->c->explain,
                "k%u: [reduction.batch] %u independent reductions of %s (the first %s) in one "
                "launch: their reads take %.3f us at the HBM rate, less than a launch (%.3f us)\n",
                f->rid[r], G->nbatch + 1, ir_shape_str(g, &G->dom, d1, sizeof d1),
                nname(g, G->anchor, n1, sizeof n1), G->batch_us, pass_ctx_gpu(f->c)->launch_us);
    }
}

/* One line per attention kernel whose epilogue computes inputs' pointwise chains
 * ([attention.epilogue_input]): the last chain and the bytes it would have written and re-read. */
static void explain_epilogue_inputs(fz *f) {
    ir_graph *g = f->g;
    for (ir_id r = 0; r < g->n; r++) {
        const grp *G = &f->gs[r];
        if (f->uf[r] != r || G->kind != IR_RK_ATTENTION || !G->nepin) continue;
        char n1[96], d1[128];
        const ir_node *e = &g->nodes[G->epin];
        int64_t ne = ir_shape_numel(&e->shape);
        fprintf(f->c->explain,
                "k%u: [attention.epilogue_input] the epilogue computes %s (%s %s of inputs) at "
                "each output index: no kernel of its own, %lld B less written and read%s\n",
                f->rid[r], nname(g, G->epin, n1, sizeof n1), ir_op_name((ir_op)e->op),
                ir_shape_str(g, &e->shape, d1, sizeof d1),
                (long long)(ne > 0 ? 2 * ne * ir_dtype_size((ir_dtype)e->dtype) : -1),
                G->nepin > 1 ? " (the last of several)" : "");
    }
}

/* One line per kernel whose domain took a concat's pieces (pointwise.concat): the concat, its
 * pieces and the HBM bytes the pieces would have cost as separate kernels (written once, read
 * once). */
static void explain_pieces(fz *f) {
    ir_graph *g = f->g;
    for (ir_id r = 0; r < g->n; r++) {
        if (f->uf[r] != r || f->gs[r].kind != IR_RK_POINTWISE || f->gs[r].pieces == IR_NONE)
            continue;
        const ir_node *c = &g->nodes[f->gs[r].pieces];
        char n1[96], d1[128], d2[128], b1[256];
        ir_poly p;
        pass_numel(g, &c->shape, 2.0 * ir_dtype_size((ir_dtype)c->dtype), &p);
        fprintf(f->c->explain,
                "k%u: [pointwise.concat] the %u pieces of concat %s %s (each %s) are computed "
                "in this kernel at the index each element selects, never written: %s B of HBM "
                "traffic saved\n",
                f->rid[r], c->nin, nname(g, f->gs[r].pieces, n1, sizeof n1),
                ir_shape_str(g, &c->shape, d1, sizeof d1),
                ir_shape_str(g, &g->nodes[ir_in(g, c, 0)].shape, d2, sizeof d2),
                p.overflow ? "?" : ir_poly_str(g, &p, b1, sizeof b1));
    }
}

/* Writes one line per producer-consumer pair left in different kernels and
 * per sibling pair (groups reading one tensor) not merged. */
/* --explain: each [attention.store_transposed] copy (pass_attn_ostore) with the bytes saved. */
static void explain_ostore(fz *f) {
    const ir_graph *g = f->g;
    char n1[96], n2[96], d1[128];
    for (ir_id cp = 0; cp < g->n; cp++) {
        ir_id u = pass_attn_ostore(g, cp);
        if (u == IR_NONE) continue;
        double mb = (double)ir_shape_numel(&g->nodes[cp].shape) *
                    (double)ir_dtype_size((ir_dtype)g->nodes[cp].dtype) / 1e6;
        fprintf(f->c->explain,
                "k%u: [attention.store_transposed] the staged copy %s of %s (%s) is stored by the "
                "attention kernel k%u through the view's strides: no copy kernel, %.2f MB not "
                "read and written again; its reader takes it as a dense operand\n",
                g->nodes[u].region, nname(g, cp, n1, sizeof n1), nname(g, u, n2, sizeof n2),
                ir_shape_str(g, &g->nodes[cp].shape, d1, sizeof d1), g->nodes[u].region, mb);
    }
}

static void explain_pairs(fz *f) {
    ir_graph *g = f->g;
    char n1[96], n2[96], what[320];
    for (ir_id n = 0; n < g->n; n++) {
        if (f->uf[n] == IR_NONE) continue;
        const ir_node *nd = &g->nodes[n];
        ir_id seen[32];
        unsigned nseen = 0;
        for (unsigned k = 0; k < nd->nin; k++) {
            ir_id src[PASS_SRC_CAP];
            unsigned ns = pass_view_sources(g, ir_in(g, nd, k), src, PASS_SRC_CAP);
            for (unsigned s = 0; s < ns; s++) {
                ir_id p = src[s];
                bool dup = false;
                for (unsigned i = 0; i < nseen; i++) dup |= seen[i] == p;
                if (dup || f->uf[p] == IR_NONE || find(f, p) == find(f, n)) continue;
                if (nseen < 32) seen[nseen++] = p;
                grp st;
                why w;
                snprintf(what, sizeof what, "k%u -> k%u: %s (%s) -> %s (%s)", f->rid[find(f, p)],
                         f->rid[find(f, n)], nname(g, p, n1, sizeof n1),
                         ir_op_name((ir_op)g->nodes[p].op), nname(g, n, n2, sizeof n2),
                         ir_op_name((ir_op)nd->op));
                if (merge_check(f, find(f, p), find(f, n), &st, &w)) {
                    why_set(&w, "order");
                    snprintf(w.msg, sizeof w.msg,
                             "the merge became legal only after the plan was fixed");
                    snprintf(w.change, sizeof w.change, "nothing");
                }
                explain_line(f, what, &w);
            }
        }
    }
    for (uint32_t r = 0; r < g->nregions; r++) {
        if (g->regions[r].kind != IR_RK_COPY || !is_view(g, g->regions[r].anchor)) continue;
        ir_id src[PASS_SRC_CAP], v = g->regions[r].anchor;
        unsigned ns = pass_view_sources(g, v, src, PASS_SRC_CAP);
        for (unsigned t = 0; t < ns; t++) {
            if (f->uf[src[t]] == IR_NONE) continue;
            why w;
            why_set(&w, "view.returned");
            snprintf(w.msg, sizeof w.msg,
                     "the returned view %s must be materialised, so a copy kernel reads %s",
                     nname(g, v, n1, sizeof n1), nname(g, src[t], n2, sizeof n2));
            snprintf(w.change, sizeof w.change,
                     "return the value itself, or use the view only inside kernels");
            snprintf(what, sizeof what, "k%u -> k%u: %s (%s) -> %s (%s)", f->rid[find(f, src[t])],
                     r, n2, ir_op_name((ir_op)g->nodes[src[t]].op), n1,
                     ir_op_name((ir_op)g->nodes[v].op));
            explain_line(f, what, &w);
        }
    }
    const ir_node *out = &g->nodes[ir_output(g)];
    for (unsigned k = 0; k < out->nin; k++) {
        ir_id v = ir_in(g, out, k), u = pass_view_alias(g, v);
        if (u == IR_NONE || g->nodes[v].region != g->nodes[u].region) continue;
        fprintf(f->c->explain,
                "k%u: [view.alias] the returned %s is %s of %s: k%u stores "
                "%s into the output buffer%s, no copy kernel\n",
                g->nodes[u].region, nname(g, v, n1, sizeof n1),
                reshape_root(g, v) == u ? "a reshape" : "a permuted view",
                nname(g, u, n2, sizeof n2), g->nodes[u].region, n2,
                reshape_root(g, v) == u ? " (the same bytes)" : " through the view's strides");
    }
    for (ir_id s = 0; s < g->n; s++) {
        if (is_view(g, s) || ir_is_gen(g, s) || g->nodes[s].op == IR_OP_OUTPUT) continue;
        uint32_t rs[64];
        unsigned n = readers(f, s, rs, 64);
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = i + 1; j < n; j++) {
                grp st;
                why w;
                if (sibling_check(f, rs[i], rs[j], &st, &w)) continue;
                snprintf(what, sizeof what, "siblings k%u, k%u (both read %s)", f->rid[rs[i]],
                         f->rid[rs[j]], nname(g, s, n1, sizeof n1));
                explain_line(f, what, &w);
            }
    }
}

/* ---- the pass -------------------------------------------------------------- */

/* Fusion steps 1-6 on f's graph (groups, regions in order, views placed), f's frozen nodes
 * one kernel each. */
static void fuse_group(fz *f) {
    ir_graph *g = f->g;
    g->nregions = 0;
    for (ir_id i = 0; i < g->n; i++) g->nodes[i].region = IR_NONE;
    init_groups(f);
    if (!f->c->no_fuse) {
        for (ir_id i = 0; i < g->n; i++)
            if (g->nodes[i].op == IR_OP_MATMUL && f->uf[i] == i &&
                !(f->frozen && f->frozen[i] == GUARD_ALONE))
                try_attention(f, i);
        for (int round = 0; round < 64; round++) {
            bool any = false;
            while (vertical_sweep(f)) any = true;
            if (horizontal_sweep(f)) any = true;
            if (!any) break;
        }
        batch_small(f);
        batch_reductions(f);
    }
    emit_regions(f);
    place_views(f);
}

/* [fusion.model_guard] rounds (plan, check, re-plan with the rejected kernels split: their
 * reductions apart, then what is still rejected one kernel per operation), the --explain text of
 * its decisions and the kernels whose reductions it kept apart (records, at most GUARD_RECS). */
enum { GUARD_ROUNDS = 3, GUARD_MSG = 4096, GUARD_RECS = 32 };

/* A merged reduction kernel whose reductions the guard kept apart: its anchor, its time and its
 * parts' (unfused). Its members are the nodes whose grec is the record's index + 1. */
typedef struct guard_rec {
    ir_id anchor;
    double merged_us, parts_us;
} guard_rec;

/* The guard's state across the rounds of one pass_fuse. */
typedef struct guard_st {
    uint8_t *frozen; /* per node, a guard_level */
    uint8_t *grec;   /* per node, 1 + the index of its guard_rec (0: none) */
    guard_rec rec[GUARD_RECS];
    unsigned nrec;
    char *msg; /* GUARD_MSG bytes of --explain lines */
} guard_st;

/* The compute members of region r (ix); *nred: the reductions among them. */
static unsigned guard_ops(const ir_graph *g, const pass_index *ix, uint32_t r, unsigned *nred) {
    unsigned n = 0, k = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        const ir_node *nd = &g->nodes[ix->rids[j]];
        if (nd->region != r || !pass_is_compute((ir_op)nd->op)) continue;
        n++;
        k += (ir_op_traits((ir_op)nd->op) & IR_T_REDUCE) != 0;
    }
    if (nred) *nred = k;
    return n;
}

/* True when region r (planned, ix) is a merged kernel the guard checks: a reduction region of at
 * least two compute members whose on-chip bytes fit one SM's shared memory (a plan beyond it is
 * the one a --sram-budget raised past the SM asked for, kept as given). */
static bool guard_candidate(const ir_graph *g, const pass_index *ix, uint32_t r,
                            const pass_gpu *gpu) {
    return g->regions[r].kind == IR_RK_REDUCTION && guard_ops(g, ix, r, NULL) >= 2 &&
           g->regions[r].sram_bytes <= gpu->smem_per_sm;
}

/* The model's time of the parts of region r of g: the kernels that u (g planned with --no-fuse,
 * the same node ids) runs its compute members in, launches included; < 0 when one is not
 * concrete. seen: u->nregions scratch bytes, zero on entry and on return. */
static double guard_parts(const ir_graph *g, const pass_index *ix, uint32_t r, const ir_graph *u,
                          const pass_index *uix, const pass_gpu *gpu, uint8_t *seen) {
    double t = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        ir_id m = ix->rids[j];
        uint32_t ur = u->nodes[m].region;
        if (g->nodes[m].region != r || !pass_is_compute((ir_op)g->nodes[m].op) ||
            ur >= u->nregions || seen[ur])
            continue;
        seen[ur] = 1;
        pass_cost pc;
        pass_region_cost_ix(u, uix, ur, gpu, &pc);
        t = pc.concrete && t >= 0 ? t + pc.predicted_us : -1;
    }
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++)
        if (u->nodes[ix->rids[j]].region < u->nregions) seen[u->nodes[ix->rids[j]].region] = 0;
    return t;
}

/* Marks the members of rejected region r (ix) in gs: its reductions GUARD_APART (a record kept)
 * when it holds two or more, none of them already apart and a record is free; else every member
 * GUARD_ALONE. Returns the level taken. */
static guard_level guard_mark(const ir_graph *g, const pass_index *ix, uint32_t r, guard_st *gs,
                              double merged_us, double parts_us) {
    unsigned nred = 0, again = 0;
    guard_ops(g, ix, r, &nred);
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++)
        again += g->nodes[ix->rids[j]].region == r && gs->frozen[ix->rids[j]] != GUARD_FREE;
    guard_level lv = nred >= 2 && !again && gs->nrec < GUARD_RECS ? GUARD_APART : GUARD_ALONE;
    if (lv == GUARD_APART)
        gs->rec[gs->nrec++] = (guard_rec){g->regions[r].anchor, merged_us, parts_us};
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        ir_id m = ix->rids[j];
        const ir_node *nd = &g->nodes[m];
        if (nd->region != r || !pass_is_compute((ir_op)nd->op)) continue;
        if (lv == GUARD_ALONE) {
            gs->frozen[m] = GUARD_ALONE;
            continue;
        }
        gs->grec[m] = (uint8_t)gs->nrec;
        if (ir_op_traits((ir_op)nd->op) & IR_T_REDUCE) gs->frozen[m] = GUARD_APART;
    }
    return lv;
}

/* [fusion.model_guard]: the planner never keeps a merged reduction kernel that the model prices
 * slower than its parts. For every candidate region of f's planned graph (ix), its predicted time
 * (schedule model + launch) against the sum of its members' kernels planned unfused (a clone
 * fused with --no-fuse); a slower one is marked (guard_mark: its reductions apart, each keeping
 * its pointwise work, or, for a kernel of one reduction or one already split so, every member
 * alone) for fusion to run again, and a line appended to gs->msg. Returns the regions
 * rejected. */
static unsigned fusion_guard(fz *f, const pass_index *ix, guard_st *gs) {
    ir_graph *g = f->g;
    const pass_gpu *gpu = pass_ctx_gpu(f->c);
    uint32_t r, bad = 0;
    if (!gpu) return 0;
    for (r = 0; r < g->nregions && !guard_candidate(g, ix, r, gpu); r++) {}
    if (r == g->nregions) return 0;
    ir_graph *u = ir_graph_clone(g);
    pass_ctx uc = *f->c;
    uc.no_fuse = true, uc.explain = NULL, uc.dump = NULL;
    pass_index uix;
    if (!pass_fuse(u, &uc) || !pass_index_build(u, &uix)) {
        ir_graph_free(u);
        return 0;
    }
    uint8_t *seen = ir_xcalloc(u->nregions + 1, 1);
    for (r = 0; r < g->nregions; r++) {
        if (!guard_candidate(g, ix, r, gpu)) continue;
        pass_cost pc;
        pass_region_cost_ix(g, ix, r, gpu, &pc);
        double parts = guard_parts(g, ix, r, u, &uix, gpu, seen);
        if (!pc.concrete || parts < 0 || pc.predicted_us <= parts) continue;
        char sc[96], an[96];
        unsigned nops = guard_ops(g, ix, r, NULL);
        pass_schedule_str(&g->regions[r].sched, sc, sizeof sc);
        guard_level lv = guard_mark(g, ix, r, gs, pc.predicted_us, parts);
        size_t n = strlen(gs->msg);
        snprintf(gs->msg + n, GUARD_MSG - n,
                 "[fusion.model_guard] the merged reduction kernel of %u operations from %s "
                 "(%s) is predicted %.3f us, its parts unfused %.3f us: %s\n",
                 nops, nname(g, g->regions[r].anchor, an, sizeof an), sc, pc.predicted_us, parts,
                 lv == GUARD_APART ? "its reductions apart, each with its pointwise work"
                                   : "one kernel per operation");
        bad++;
    }
    free(seen);
    pass_index_free(&uix);
    ir_graph_free(u);
    return bad;
}

/* --explain: for each kernel whose reductions the guard kept apart (gs), the kernels of the final
 * plan (ix) that run its members and their predicted time against the merged kernel's and its
 * parts' unfused. */
static void guard_explain(const ir_graph *g, const pass_index *ix, const guard_st *gs,
                          const pass_gpu *gpu, FILE *out) {
    uint8_t *seen = ir_xcalloc(g->nregions + 1, 1);
    for (unsigned k = 0; gpu && k < gs->nrec; k++) {
        unsigned nk = 0;
        double t = 0;
        memset(seen, 0, g->nregions + 1);
        for (ir_id m = 0; m < g->n; m++) {
            uint32_t r = g->nodes[m].region;
            if (gs->grec[m] != k + 1 || r >= g->nregions || seen[r]) continue;
            seen[r] = 1, nk++;
            pass_cost pc;
            pass_region_cost_ix(g, ix, r, gpu, &pc);
            t += pc.predicted_us;
        }
        char an[96];
        fprintf(out,
                "[fusion.model_guard] the work of the kernel from %s, its reductions apart: %u "
                "kernels, predicted %.3f us (merged %.3f us, one kernel per operation %.3f us)\n",
                nname(g, gs->rec[k].anchor, an, sizeof an), nk, t, gs->rec[k].merged_us,
                gs->rec[k].parts_us);
    }
    free(seen);
}

bool pass_fuse(ir_graph *g, pass_ctx *c) {
    if (!c->no_fuse)
        (void)pass_stage_views(g, c), (void)pass_attn_materialize_qk(g, c),
            (void)pass_stats_recompute(g, c);
    fz f = {.g = g, .c = c};
    for (ir_id id = 0; id < g->n; id++) f.has_rc |= (g->nodes[id].flags & IR_NF_RECOMPUTE) != 0;
    /* Every pass after this one keeps a view's sources in PASS_SRC_CAP entries. */
    for (ir_id id = 0; id < g->n; id++) {
        unsigned ns = g->nodes[id].op == IR_OP_CONCAT ? pass_view_source_count(g, id) : 0;
        if (ns <= PASS_SRC_CAP) continue;
        tx_error_at(c->diag, g->nodes[id].line, g->nodes[id].col,
                    "this concatenation reads %u separate tensors, more than the %u one value "
                    "may be made of (and than one kernel's parameters can address); concatenate "
                    "in steps",
                    ns, (unsigned)PASS_SRC_CAP);
        return false;
    }
    if (!ir_uses_build(g, &f.u)) {
        tx_error(c->diag, "internal error: cannot build the use lists for fusion");
        return false;
    }
    f.uf = ir_xmalloc((size_t)g->n * sizeof *f.uf);
    f.gs = ir_xcalloc(g->n, sizeof *f.gs);
    f.mark = ir_xcalloc(g->n ? g->n : 1, 1);
    f.stack = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.stack);
    f.rid = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.rid);
    f.cbuf = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.cbuf);
    f.vstamp = ir_xcalloc((size_t)g->n + 1, sizeof *f.vstamp);
    f.cstamp = ir_xcalloc((size_t)g->n + 1, sizeof *f.cstamp);
    f.cstk = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.cstk);
    f.nxt = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.nxt);
    f.tail = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.tail);
    f.stack2 = ir_xmalloc(((size_t)g->n + 1) * sizeof *f.stack2);
    f.stampf = ir_xcalloc((size_t)g->n + 1, sizeof *f.stampf);
    f.stampb = ir_xcalloc((size_t)g->n + 1, sizeof *f.stampb);
    int64_t budget = pass_sram_budget(c);
    pass_index ix;
    guard_st gs = {0};
    bool indexed = false;
    for (int round = 0; round < GUARD_ROUNDS; round++) {
        fuse_group(&f);
        if (!(indexed = pass_index_build(g, &ix))) break;
        FILE *ex = c->explain;
        c->explain = NULL; /* the final round's plan explains itself */
        for (uint32_t r = 0; r < g->nregions; r++) plan_tuned(c, g, &ix, r, budget);
        c->explain = ex;
        if (c->no_fuse || round + 1 == GUARD_ROUNDS) break;
        if (!gs.frozen) {
            gs.frozen = ir_xcalloc(g->n ? g->n : 1, 1);
            gs.grec = ir_xcalloc(g->n ? g->n : 1, 1);
            gs.msg = ir_xcalloc(GUARD_MSG, 1);
        }
        if (!fusion_guard(&f, &ix, &gs)) break;
        f.frozen = gs.frozen;
        pass_index_free(&ix);
        indexed = false;
    }
    if (c->explain) {
        explain_pairs(&f);
        explain_ostore(&f);
        explain_pieces(&f);
        explain_recompute(&f);
        explain_epilogue_inputs(&f);
        explain_side(&f);
        explain_batch(&f);
        if (gs.msg) fputs(gs.msg, c->explain);
    }
    if (!indexed) {
        tx_error(c->diag, "internal error: cannot index the regions for tile planning");
    } else {
        for (uint32_t r = 0; c->explain && r < g->nregions; r++) plan_tuned(c, g, &ix, r, budget);
        if (c->explain) guard_explain(g, &ix, &gs, pass_ctx_gpu(c), c->explain);
        for (uint32_t r = 0; c->explain && r < g->nregions;
             r++) { /* the schedule each kernel runs, and why */
            pass_cost pc;
            pass_model md;
            pass_region_cost_ix(g, &ix, r, pass_ctx_gpu(c), &pc);
            pass_model_region(g, &ix, r, pass_ctx_gpu(c), &pc, &md);
            explain_schedule(c, g, &ix, r, budget, &pc);
            if (md.concrete && md.threads) pass_model_text(&md, pass_ctx_gpu(c), c->explain);
        }
        pass_index_free(&ix);
    }
    ir_uses_free(&f.u);
    free(f.uf);
    free(f.gs);
    free(f.mark);
    free(f.stack);
    free(f.rid);
    free(f.cbuf);
    free(f.vstamp), free(f.cstamp), free(f.cstk);
    free(f.nxt);
    free(f.tail);
    free(f.stack2);
    free(f.stampf);
    free(f.stampb);
    free(gs.frozen);
    free(gs.grec);
    free(gs.msg);
    return g->nregions > 0;
}
