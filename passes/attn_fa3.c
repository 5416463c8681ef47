/* attn_fa3.c - whether an attention region runs on the sm_90a FlashAttention-3 style kernel
 * (codegen/attention.c, docs/codegen-attention.md): the one rule codegen emits by and the model
 * and --explain report. Each operand must be a view of a dense buffer that one TMA tensor map of
 * at most PASS_TMAP_MAXR dims reads (pass_attn_view_of). */
#include "passes/passes.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void say(char *why, size_t cap, const char *fmt, ...) {
    if (!why || !cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
}

/* Appends map dim j of role `role` (batch: operand axes b0.., nb of them) to v. */
static bool map_dim(pass_attn_view *v, unsigned *j, uint8_t role, unsigned b0, unsigned nb,
                    ir_dim e) {
    if (*j >= PASS_TMAP_MAXR) return false;
    v->role[*j] = role, v->b0[*j] = (uint8_t)b0, v->nb[*j] = (uint8_t)nb, v->dim[*j] = e;
    (*j)++;
    return true;
}

/* The one slice of a view (IR_NONE: none): the fine axes g[0..ng-1] (outer to inner) of its
 * axis, g[0] of full extent fx and view extent vx[g[0]]; the view starts `start` steps of fine
 * axis unit in. contig: the start is no whole step of g[0], so the group must stay consecutive
 * in memory for one base offset to address it. */
typedef struct view_slice {
    ir_id sl;
    uint8_t g[PASS_FINE_MAX], ng, unit;
    int64_t start;
    bool contig;
} view_slice;

/* Follows slice node id (input axis extent F, output extent len) in w: the sliced axis's fine
 * axes keep their view extents in vx and the outermost takes its full extent in w (a new fine
 * axis of view extent 1 when the output axis has extent 1), so the walk goes on through the
 * views above. False with why for a second slice, a symbolic sliced extent or rows that do not
 * hold whole groups of the inner fine axes. */
static bool slice_step(const ir_graph *g, ir_id id, pass_fine_walk *w, ir_dim *vx, view_slice *s,
                       char *why, size_t cap) {
    const ir_node *n = &g->nodes[id], *in = &g->nodes[ir_in(g, n, 0)];
    unsigned a = (unsigned)n->a.slice.axis;
    ir_dim F = in->shape.dim[a], len = n->shape.dim[a];
    if (len == F) return true; /* the whole axis */
    if (s->sl != IR_NONE)
        return say(why, cap, "slice %%%u is a second slice (a TMA map has one row pitch)", id),
               false;
    if (IR_DIM_IS_SYM(F) || IR_DIM_IS_SYM(len))
        return say(why, cap, "slice %%%u is of an axis of a symbolic extent", id), false;
    int64_t inner = 1;
    for (unsigned j = 1; j < w->cnt[a]; j++) inner *= vx[w->ax[a][j]];
    if (F % inner) {
        say(why, cap, "slice %%%u: rows of %lld do not hold whole groups of %lld", id, (long long)F,
            (long long)inner);
        return false;
    }
    if (w->cnt[a] == 0) { /* an extent-1 slice: a fine axis that the view reads at index 0 */
        if (w->nf >= PASS_FINE_MAX)
            return say(why, cap, "slice %%%u needs too many fine axes", id), false;
        vx[w->nf] = 1;
        w->ax[a][w->cnt[a]++] = (uint8_t)w->nf++;
    }
    s->sl = id, s->ng = w->cnt[a];
    memcpy(s->g, w->ax[a], s->ng);
    int64_t st = n->a.slice.start;
    s->contig = st % inner != 0;
    s->unit = s->contig ? s->g[s->ng - 1] : s->g[0];
    s->start = s->contig ? st : st / inner;
    w->fx[s->g[0]] = F / inner;
    return true;
}

/* The walk from operand opnd down to its buffer through in-region same-dtype casts, permutes,
 * reshapes and at most one slice of any axis (slice_step): w holds, per axis of the buffer, its
 * fine axes at their full extents, vx their extents in the view. *x the buffer. False with why
 * when a step cannot be followed. */
/* True when view node id is materialised: the anchor of a copy region (a returned view). Any other
 * view, whichever region it was placed in, is read through by index arithmetic (pass_region_io
 * writes computed nodes only), so the buffer behind it is its source's. */
static bool view_copied(const ir_graph *g, ir_id id) {
    uint32_t r = g->nodes[id].region;
    return r < g->nregions && g->regions[r].kind == IR_RK_COPY && g->regions[r].anchor == id;
}

static bool view_walk(const ir_graph *g, unsigned region, ir_id opnd, ir_dtype dt,
                      pass_fine_walk *w, ir_dim *vx, ir_id *x, view_slice *s, char *why,
                      size_t cap) {
    *x = opnd, s->sl = IR_NONE;
    for (unsigned guard = 0; guard < 32; guard++) {
        const ir_node *n = &g->nodes[*x];
        if (n->op == IR_OP_INPUT || n->nin < 1) return true;
        const ir_node *in = &g->nodes[ir_in(g, n, 0)];
        if (n->op == IR_OP_CAST && n->region == region && n->dtype == dt) {
        } else if (n->op == IR_OP_PERMUTE && (n->region == region || !view_copied(g, *x))) {
            pass_fine_walk o = *w;
            for (unsigned i = 0; i < n->shape.rank; i++) {
                unsigned a = n->a.perm[i];
                o.cnt[a] = w->cnt[i];
                memcpy(o.ax[a], w->ax[i], w->cnt[i]);
            }
            *w = o;
        } else if (n->op == IR_OP_RESHAPE) {
            if (!pass_fine_regroup(w, &in->shape)) {
                say(why, cap, "reshape %%%u splits an axis the view needs whole", *x);
                return false;
            }
        } else if (n->op == IR_OP_SLICE) {
            if (!slice_step(g, *x, w, vx, s, why, cap)) return false;
        } else {
            return true;
        }
        *x = ir_in(g, n, 0);
    }
    return true;
}

/* The base offset and pitch of slice s over the buffer's fine axes mem[0..nm-1] (minor first,
 * full extents fx): v->offset the start's elements, v->pitch the stride of the fine axis above
 * the slice's group (0: none above), *pm that axis's position in mem (nm: none). False with why
 * when a stride is symbolic, the group that a ragged start needs consecutive is not, or the
 * offset or pitch is no multiple of 16 bytes. */
static bool slice_place(const view_slice *s, const int *mem, int nm, const ir_dim *fx, ir_dtype dt,
                        pass_attn_view *v, int *pm, char *why, size_t cap) {
    int at[PASS_FINE_MAX];         /* each fine axis's position in mem */
    int64_t st[PASS_FINE_MAX + 1]; /* st[m]: the elements below position m (-1: symbolic) */
    st[0] = 1;
    for (int m = 0; m < nm; m++) {
        at[mem[m]] = m;
        st[m + 1] = st[m] < 0 || IR_DIM_IS_SYM(fx[mem[m]]) ? -1 : st[m] * fx[mem[m]];
    }
    int top = at[s->g[0]];
    for (unsigned i = 0; s->contig && i < s->ng; i++)
        if (at[s->g[i]] != top - (int)i)
            return say(why, cap, "slice %%%u starts inside a group that is apart in memory", s->sl),
                   false;
    *pm = top + 1;
    int64_t below = st[at[s->unit]], pitch = *pm < nm ? st[top + 1] : 0;
    if (below < 0 || pitch < 0)
        return say(why, cap, "slice %%%u lies above symbolic extents of its buffer", s->sl), false;
    int64_t es = ir_dtype_size(dt);
    v->offset = s->start * below, v->pitch = pitch;
    if ((v->offset * es) % 16 || (pitch * es) % 16) {
        say(why, cap,
            "slice %%%u starts at element %lld of rows of %lld: TMA needs 16-byte aligned "
            "starts and pitches",
            s->sl, (long long)v->offset, (long long)pitch);
        return false;
    }
    return true;
}

bool pass_attn_view_of(const ir_graph *g, unsigned region, ir_id opnd, ir_dtype dt, int64_t d,
                       bool trans, pass_attn_view *v, char *why, size_t cap) {
    memset(v, 0, sizeof *v);
    const ir_node *on = &g->nodes[opnd];
    unsigned r = on->shape.rank;
    if (r < 2) return say(why, cap, "%%%u has rank %u", opnd, r), false;
    pass_fine_walk w;
    int fine[IR_MAX_RANK]; /* the fine axis of each operand axis (-1: extent 1) */
    pass_fine_start(&w, fine, &on->shape);
    ir_dim vx[PASS_FINE_MAX]; /* the fine axes' extents in the view (w.fx: in the buffer) */
    memcpy(vx, w.fx, sizeof vx);
    ir_id x;
    view_slice s;
    if (!view_walk(g, region, opnd, dt, &w, vx, &x, &s, why, cap)) return false;
    const ir_node *b = &g->nodes[x];
    if (b->op == IR_OP_CONST || b->op == IR_OP_OUTPUT ||
        (b->region == region && b->op != IR_OP_INPUT) || (ir_op_traits((ir_op)b->op) & IR_T_VIEW) ||
        b->dtype != dt || b->shape.rank < 2) {
        say(why, cap, "%%%u (%s) behind %%%u is no dense %s buffer outside the kernel", x,
            ir_op_name((ir_op)b->op), opnd, ir_dtype_name(dt));
        return false;
    }
    for (unsigned i = 0; i < b->shape.rank; i++)
        if (!IR_DIM_IS_SYM(b->shape.dim[i]) && b->shape.dim[i] >= ((int64_t)1 << 31))
            return say(why, cap, "%%%u has an extent of 2^31 or more", x), false;
    /* memory order of the fine axes, minor first */
    int mem[PASS_FINE_MAX], nm = 0;
    for (unsigned i = b->shape.rank; i-- > 0;)
        for (unsigned j = w.cnt[i]; j-- > 0;) mem[nm++] = w.ax[i][j];
    if ((unsigned)nm != w.nf)
        return say(why, cap, "%%%u's axes do not map on its buffer", opnd), false;
    int pm = -1; /* with a slice: the position in mem of the first fine axis above its group */
    if (s.sl != IR_NONE && !slice_place(&s, mem, nm, w.fx, dt, v, &pm, why, cap)) return false;
    int dax = fine[trans ? r - 2 : r - 1], rax = fine[trans ? r - 1 : r - 2];
    if (dax < 0 || nm < 1 || mem[0] != dax || vx[dax] != d) {
        say(why, cap, "the head dim of %%%u is not the contiguous axis of its buffer", opnd);
        return false;
    }
    v->base = x;
    v->opnd.rank = (uint8_t)(r - 2);
    for (unsigned i = 0; i + 2 < r; i++) v->opnd.dim[i] = on->shape.dim[i];
    unsigned j = 0;
    map_dim(v, &j, PASS_AV_D, 0, 0, (ir_dim)d);
    if (rax < 0) map_dim(v, &j, PASS_AV_ROW, 0, 0, 1); /* one row: a map dim of extent 1 */
    bool deep = false;
    for (int m = 1; m < nm; m++) {
        if (m == pm) v->pdim = (uint8_t)j; /* the slice's full pitch */
        if (s.sl != IR_NONE && mem[m] == s.g[0] && vx[mem[m]] == 1) continue; /* index 0 */
        if (mem[m] == rax) {
            deep |= !map_dim(v, &j, PASS_AV_ROW, 0, 0, vx[rax]);
            continue;
        }
        int bax = -1;
        for (unsigned i = 0; i + 2 < r; i++)
            if (fine[i] == mem[m]) bax = (int)i;
        if (bax < 0) return say(why, cap, "%%%u's axes do not map on its buffer", opnd), false;
        /* the operand's batch axes just above it join when they are next in memory too
         * (extent-1 axes join freely: they read index 0), not across the sliced axis's edge */
        unsigned b0 = (unsigned)bax, nb = 1, nreal = 1;
        while (b0 > 0) {
            if (fine[b0 - 1] < 0) {
                b0--, nb++;
            } else if (m + 1 < nm && mem[m + 1] == fine[b0 - 1] && m + 1 != pm) {
                b0--, nb++, nreal++, m++;
            } else {
                break;
            }
        }
        ir_dim e = 1;
        bool known = true;
        for (unsigned i = b0; i < b0 + nb; i++) {
            ir_dim ei = on->shape.dim[i];
            if (ei == 1) continue;
            if (nreal == 1)
                e = ei;
            else if (IR_DIM_IS_SYM(ei))
                known = false;
            else
                e *= ei;
        }
        if (!map_dim(v, &j, PASS_AV_BATCH, b0, nb, known ? e : 1)) {
            deep = true;
            break;
        }
        if (m + 1 == nm && j >= 3) { /* the outermost and last map dim: the planes of `outer` */
            v->outer.rank = (uint8_t)nb;
            for (unsigned i = 0; i < nb; i++) v->outer.dim[i] = on->shape.dim[b0 + i];
            v->dim[j - 1] = 1;
        } else if (!known) {
            say(why, cap, "%%%u merges symbolic batch dims inside its buffer", opnd);
            return false;
        }
    }
    if (deep) {
        say(why, cap, "%%%u needs a tensor map of more than %d dims", opnd, PASS_TMAP_MAXR);
        return false;
    }
    while (j < 3) map_dim(v, &j, PASS_AV_BATCH, 0, 0, 1);
    v->rank = (uint8_t)j;
    return true;
}

bool pass_attention_fa3_shape(const ir_graph *g, ir_id mm1, ir_id mm2, char *why, size_t cap) {
    if (why && cap) why[0] = 0;
    if (mm1 >= g->n || mm2 >= g->n) return say(why, cap, "not an attention region"), false;
    const ir_node *m1 = &g->nodes[mm1], *m2 = &g->nodes[mm2];
    if (m1->op != IR_OP_MATMUL || m2->op != IR_OP_MATMUL || m2->shape.rank < 2)
        return say(why, cap, "not an attention region"), false;
    ir_id q = ir_in(g, m1, 0), kt = ir_in(g, m1, 1), p = ir_in(g, m2, 0), v = ir_in(g, m2, 1);
    const ir_node *qn = &g->nodes[q];
    /* a few known query rows (decode) stream K and V: the mma.sync kernel's smaller row tiles
     * waste less of the tensor cores than 128-row tiles */
    ir_dim sq = m2->shape.dim[m2->shape.rank - 2];
    int64_t sqv = IR_DIM_IS_SYM(sq) ? g->syms[IR_DIM_SYMIDX(sq)].value : sq;
    if (sqv > 0 && sqv <= 64)
        return say(why, cap, "%lld query rows (decode): the 128-row tiles would idle",
                   (long long)sqv),
               false;
    ir_dtype dt = (ir_dtype)qn->dtype;
    if ((dt != IR_BF16 && dt != IR_F16) || g->nodes[kt].dtype != dt || g->nodes[v].dtype != dt ||
        g->nodes[p].dtype != dt) {
        say(why, cap, "q, kT, v and p are not one 16-bit dtype");
        return false;
    }
    ir_dim D = qn->shape.dim[qn->shape.rank - 1], Dv = m2->shape.dim[m2->shape.rank - 1];
    if (IR_DIM_IS_SYM(D) || D != Dv || D % 16 != 0 || D > 256) {
        say(why, cap, "head dims %s: FA3 takes D = Dv known, a multiple of 16 up to 256",
            IR_DIM_IS_SYM(D) ? "symbolic"
            : D != Dv        ? "differ"
                             : "out of range");
        return false;
    }
    return true;
}

bool pass_attention_fa3(const ir_graph *g, uint32_t region, pass_attn_view vw[3], char *why,
                        size_t cap) {
    const ir_region *rg = &g->regions[region];
    pass_attn_view tmp[3];
    if (!vw) vw = tmp;
    if (rg->kind != IR_RK_ATTENTION) return say(why, cap, "not an attention region"), false;
    if (!pass_attention_fa3_shape(g, rg->mm1, rg->anchor, why, cap)) return false;
    const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
    const ir_node *qn = &g->nodes[ir_in(g, m1, 0)];
    ir_dtype dt = (ir_dtype)qn->dtype;
    ir_dim D = qn->shape.dim[qn->shape.rank - 1];
    static const char *const nm[3] = {"q", "k", "v"};
    const ir_id op[3] = {ir_in(g, m1, 0), ir_in(g, m1, 1), ir_in(g, m2, 1)};
    for (int i = 0; i < 3; i++) {
        char w[200];
        if (!pass_attn_view_of(g, region, op[i], dt, D, i == 1, &vw[i], w, sizeof w)) {
            say(why, cap, "%s is no TMA view: %s", nm[i], w);
            return false;
        }
    }
    return true;
}

/* The reduction of x over its last axis (keepdim: shape [..., 1]) by op, at r. */
static bool row_red(const ir_graph *g, ir_id r, ir_op op, ir_id x) {
    const ir_node *n = &g->nodes[r];
    return n->op == op && n->nin == 1 && ir_in(g, n, 0) == x && n->a.red.keepdim &&
           n->a.red.axes == (1u << (g->nodes[x].shape.rank - 1));
}

bool pass_attention_lse_node(const ir_graph *g, ir_id scores, ir_id id, ir_id *lg) {
    const ir_node *a = &g->nodes[id];
    if (a->op != IR_OP_ADD || a->nin != 2 || a->dtype != IR_F32) return false;
    for (unsigned k = 0; k < 2; k++) {
        ir_id L = ir_in(g, a, k), M = ir_in(g, a, 1 - k);
        const ir_node *ln = &g->nodes[L];
        if (ln->op != IR_OP_LOG || !row_red(g, M, IR_OP_MAX, scores)) continue;
        ir_id l = ir_in(g, ln, 0);
        const ir_node *sn = &g->nodes[l];
        if (sn->op != IR_OP_SUM || sn->nin != 1) continue;
        ir_id e = ir_in(g, sn, 0);
        if (!row_red(g, l, IR_OP_SUM, e) || g->nodes[e].op != IR_OP_EXP) continue;
        const ir_node *sub = &g->nodes[ir_in(g, &g->nodes[e], 0)];
        if (sub->op != IR_OP_SUB || ir_in(g, sub, 0) != scores || ir_in(g, sub, 1) != M) continue;
        if (!ir_shape_eq(&a->shape, &sn->shape) || !ir_shape_eq(&a->shape, &g->nodes[M].shape))
            continue;
        if (lg) *lg = L;
        return true;
    }
    return false;
}

ir_id pass_attention_lse(const ir_graph *g, uint32_t region) {
    const ir_region *rg = &g->regions[region];
    if (rg->kind != IR_RK_ATTENTION || rg->scores >= g->n) return IR_NONE;
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].region == region && pass_attention_lse_node(g, rg->scores, i, NULL))
            return i;
    return IR_NONE;
}

bool pass_attention_ks_tma(const ir_graph *g, uint32_t region, pass_attn_view vw[2], char *why,
                           size_t cap) {
    const ir_region *rg = &g->regions[region];
    pass_attn_view tmp[2];
    if (!vw) vw = tmp;
    if (rg->kind != IR_RK_ATTENTION || rg->strategy != IR_RED_KSPLIT || rg->mm1 >= g->n ||
        rg->anchor >= g->n)
        return say(why, cap, "not an attention.ksplit region"), false;
    const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
    const ir_node *qn = &g->nodes[ir_in(g, m1, 0)];
    ir_dtype dt = (ir_dtype)qn->dtype;
    ir_dim D = qn->shape.dim[qn->shape.rank - 1], Dv = m2->shape.dim[m2->shape.rank - 1];
    if (IR_DIM_IS_SYM(D) || D != Dv || D % 64 != 0 || D > 128)
        return say(why, cap, "head dims: TMA tiles take D = Dv known, 64 or 128"), false;
    static const char *const nm[2] = {"k", "v"};
    const ir_id op[2] = {ir_in(g, m1, 1), ir_in(g, m2, 1)};
    for (int i = 0; i < 2; i++) {
        char w[200];
        if (!pass_attn_view_of(g, region, op[i], dt, D, i == 0, &vw[i], w, sizeof w)) {
            say(why, cap, "%s is no TMA view: %s", nm[i], w);
            return false;
        }
    }
    return true;
}

bool pass_attention_ks_tma_pick(const ir_graph *g, uint32_t region, char *why, size_t cap) {
    const char *v = getenv("TX_ATTN_KS_TMA");
    if (v && !strcmp(v, "0")) return say(why, cap, "off (TX_ATTN_KS_TMA=0)"), false;
    if (!pass_attention_ks_tma(g, region, NULL, why, cap)) return false;
    if (v && !strcmp(v, "1")) return true;
    return say(why, cap, "TX_ATTN_KS_TMA=1 not set"), false;
}
