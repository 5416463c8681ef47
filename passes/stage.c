/* stage.c - [matmul.stage_view]: a matrix product's operand read through a chain of reshapes and
 * permutes that no stride form describes (a reshape that splits or merges axes the chain has
 * reordered, e.g. ViT's patches reshape(permute(reshape(img, (B, 3, 14, 16, 14, 16)), (0, 2, 4,
 * 1, 3, 5)), (B, 196, 768))) is loaded by the matmul kernel one element at a time with the full
 * index arithmetic, once per tile of the other operand. The planner prices that in-place read
 * against a copy of the operand into a dense row-major matrix (one pass, a pointwise kernel that
 * also takes the pointwise producers of the operand) and, where the copy is cheaper, inserts it:
 * a cast to the operand's own dtype flagged IR_NF_STAGE, which the fusion planner keeps out of
 * the product's kernel (docs/fusion.md, docs/cost-model.md "Staged operands").
 * [matmul.stage_concat]: an operand that is a concat of views (im2col: the shifted windows of an
 * image side by side on the channel axis) is gathered by the same element-at-a-time loads and is
 * priced and staged the same way, except the V of an attention along its key axis
 * ([attention.kv_concat]: the attention kernel reads it in place, as its K). */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The mma.sync kernel's generic load of an operand read through a view without a stride form
 * (one element a thread with the view's index arithmetic, latency bound) sustains
 * PASS_ELEM_LOAD_EPC elements per SM per clock (passes/passes.h). */
#define STAGE_GENERIC_EPC PASS_ELEM_LOAD_EPC
/* Lanes of one warp request: 32 consecutive elements of the operand's last axis. */
enum { STAGE_LANES = 32, STAGE_SECTOR = 32, STAGE_TILE = 128 };

/* The chain of reshapes and permutes from v down to the first other value, into *src; the
 * number of views (0: v is not a view of that kind). */
static unsigned view_chain(const ir_graph *g, ir_id v, ir_id *src) {
    unsigned n = 0;
    while (n < 64 && (g->nodes[v].op == IR_OP_RESHAPE || g->nodes[v].op == IR_OP_PERMUTE)) {
        v = ir_in(g, &g->nodes[v], 0);
        n++;
    }
    *src = v;
    return n;
}

/* True when every dim of s is known and positive. */
static bool concrete(const ir_shape *s) {
    for (unsigned i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i]) || s->dim[i] <= 0) return false;
    return true;
}

/* Strides ns of reshape `to` of a value of shape `from` with strides os (elements): true when the
 * result is a strided view of the same elements (NumPy's rule: each run of input dims it merges
 * or splits is contiguous within itself); codegen's operand walk (codegen/matmul.c
 * reshape_strides) loads the operand generically exactly when this fails. */
static bool reshape_strides(const ir_shape *from, const int64_t *os, const ir_shape *to,
                            int64_t *ns) {
    if (from->rank == 0) return false;
    int vd = (int)to->rank - 1;
    int64_t base = os[from->rank - 1], tn = 1, vn = 1;
    for (int td = (int)from->rank - 1; td >= 0; td--) {
        tn *= from->dim[td];
        if (td > 0 && from->dim[td - 1] == 1) continue;
        if (td > 0 && os[td - 1] == tn * base) continue;
        while (vd >= 0 && (vn < tn || to->dim[vd] == 1)) {
            ns[vd] = vn * base;
            vn *= to->dim[vd];
            vd--;
        }
        if (vn != tn) return false;
        if (td > 0) base = os[td - 1], tn = 1, vn = 1;
    }
    return vd == -1;
}

/* Whether value v (a view chain over src, every shape concrete) has a stride form. */
static bool has_strides(const ir_graph *g, ir_id v, ir_id src) {
    ir_id chain[64];
    unsigned n = 0;
    for (ir_id x = v; x != src; x = ir_in(g, &g->nodes[x], 0)) chain[n++] = x;
    const ir_shape *s = &g->nodes[src].shape;
    int64_t st[IR_MAX_RANK], tmp[IR_MAX_RANK];
    int64_t acc = 1;
    for (int i = (int)s->rank - 1; i >= 0; i--) st[i] = acc, acc *= s->dim[i];
    for (unsigned i = n; i-- > 0;) {
        const ir_node *x = &g->nodes[chain[i]];
        const ir_shape *from = &g->nodes[ir_in(g, x, 0)].shape;
        if (x->op == IR_OP_PERMUTE) {
            for (unsigned d = 0; d < x->shape.rank; d++) tmp[d] = st[x->a.perm[d]];
        } else if (!reshape_strides(from, st, &x->shape, tmp)) {
            return false;
        }
        memcpy(st, tmp, sizeof tmp);
    }
    return true;
}

/* The contiguous run, in elements, at the end of v's index space: the longest trailing block of
 * v's C order that is consecutive in src (walked element by element over the first 4096 of the
 * last axis: index arithmetic of the chain, as the interpreter does it). */
static int64_t inner_run(const ir_graph *g, ir_id v, ir_id src) {
    const ir_shape *vs = &g->nodes[v].shape;
    int64_t last = vs->dim[vs->rank - 1], n = last < 4096 ? last : 4096, run = 1, prev = -1;
    for (int64_t e = 0; e < n; e++) {
        int64_t idx[IR_MAX_RANK] = {0}, lin = e; /* element e of v's first row */
        ir_id x = v;
        idx[vs->rank - 1] = e;
        while (x != src) {
            const ir_node *nd = &g->nodes[x];
            const ir_shape *is = &g->nodes[ir_in(g, nd, 0)].shape;
            int64_t in[IR_MAX_RANK] = {0};
            if (nd->op == IR_OP_PERMUTE) {
                for (unsigned d = 0; d < nd->shape.rank; d++) in[nd->a.perm[d]] = idx[d];
            } else {
                lin = 0;
                for (unsigned d = 0; d < nd->shape.rank; d++) lin = lin * nd->shape.dim[d] + idx[d];
                for (int d = (int)is->rank - 1; d >= 0; d--)
                    in[d] = lin % is->dim[d], lin /= is->dim[d];
            }
            memcpy(idx, in, sizeof in);
            x = ir_in(g, nd, 0);
        }
        lin = 0;
        for (unsigned d = 0; d < g->nodes[src].shape.rank; d++)
            lin = lin * g->nodes[src].shape.dim[d] + idx[d];
        if (e > 0 && lin != prev + 1) return run;
        if (e > 0) run++;
        prev = lin;
    }
    return run;
}

/* The in-place and staged prices of operand k (0: A, 1: B) of product m, which reads value v
 * (numel elements of es bytes, a view chain over src without stride form): *inplace the generic
 * loads (each element loaded once per tile of the other operand, at STAGE_GENERIC_EPC, or the
 * sectors they move at HBM bandwidth if more), *staged the copy's bytes (read and written) at HBM
 * bandwidth plus a launch. Writes the numbers to why. */
static void stage_price(const ir_graph *g, const pass_gpu *gpu, ir_id m, unsigned k, ir_id v,
                        int64_t run, double *inplace, double *staged, char *why, size_t cap) {
    const ir_node *mm = &g->nodes[m];
    const ir_shape *ms = &mm->shape;
    double numel = 1, rows = 1;
    for (unsigned i = 0; i < g->nodes[v].shape.rank; i++) numel *= (double)g->nodes[v].shape.dim[i];
    for (unsigned i = 0; i + 1 < ms->rank; i++) rows *= (double)ms->dim[i];
    double other = k == 0 ? (double)ms->dim[ms->rank - 1] : rows;
    double passes = ceil(other / STAGE_TILE), loaded = numel * passes;
    int es = (int)ir_dtype_size((ir_dtype)g->nodes[v].dtype);
    int64_t rb = run * es; /* a request: 32 lanes over runs of rb bytes */
    double per_req = ceil((double)STAGE_LANES / (double)(run < STAGE_LANES ? run : STAGE_LANES)) *
                     ceil((double)(run < STAGE_LANES ? rb : STAGE_LANES * es) / STAGE_SECTOR);
    double clk = gpu->clock_GHz > 0 ? gpu->clock_GHz : 1.5;
    double t_el = loaded / (STAGE_GENERIC_EPC * gpu->sms * clk * 1e3);
    double t_sec = loaded / STAGE_LANES * per_req * STAGE_SECTOR / (gpu->hbm_GBps * 1e3);
    *inplace = t_el > t_sec ? t_el : t_sec;
    *staged = 2.0 * numel * es / (gpu->hbm_GBps * 1e3) + gpu->launch_us;
    snprintf(why, cap,
             "in place %.0f tile passes x %.2f M elements = %.1f M loads with the index "
             "arithmetic (innermost run %lld elements: %.0f sectors per 32-lane request) -> "
             "%.1f us; staged: a copy of %.2f MB -> %.1f us",
             passes, numel / 1e6, loaded / 1e6, (long long)run, per_req, *inplace, numel * es / 1e6,
             *staged);
}

/* The operand of product m to stage, in place of input k: a view chain (>= 1 reshape or permute)
 * of a value that is not a view, every shape concrete, without a stride form. */
static bool stage_candidate(const ir_graph *g, ir_id m, unsigned k, ir_id *src) {
    const ir_node *mm = &g->nodes[m];
    ir_id v = ir_in(g, mm, k);
    if (!view_chain(g, v, src) || !concrete(&mm->shape)) return false;
    for (ir_id x = v;; x = ir_in(g, &g->nodes[x], 0)) {
        if (!concrete(&g->nodes[x].shape) || g->nodes[x].shape.rank < 1) return false;
        if (x == *src) break;
    }
    const ir_node *s = &g->nodes[*src];
    if ((ir_op_traits((ir_op)s->op) & IR_T_VIEW) || s->op == IR_OP_CONST || ir_is_gen(g, *src))
        return false;
    return !has_strides(g, v, *src);
}

/* The view chain (slices, reshapes, permutes) from x down to the first other value, into *src;
 * *plain false when it holds a reshape or permute (runs of the source's rows may break). False
 * when a shape on the way is not concrete or the source is not a stored value (an input, a
 * product's or a reduction's result: elementwise work is left to the fusion planner, which may
 * take it into an attention or a product's prologue). */
static bool piece_chain(const ir_graph *g, ir_id x, ir_id *src, bool *plain) {
    *plain = true;
    for (unsigned n = 0; n < 64; n++, x = ir_in(g, &g->nodes[x], 0)) {
        const ir_node *nd = &g->nodes[x];
        if (!concrete(&nd->shape) || nd->shape.rank < 1) return false;
        if (nd->op == IR_OP_RESHAPE || nd->op == IR_OP_PERMUTE) *plain = false;
        if (nd->op == IR_OP_SLICE || nd->op == IR_OP_RESHAPE || nd->op == IR_OP_PERMUTE) continue;
        *src = x;
        unsigned t = ir_op_traits((ir_op)nd->op);
        return nd->op == IR_OP_INPUT || (t & (IR_T_MATMUL | IR_T_REDUCE));
    }
    return false;
}

/* The operand of product m in place of input k when it is a concat (im2col: shifted windows of
 * one image side by side), every shape concrete, each piece a chain of views over a value that
 * is not a view: true with *run, the contiguous run a request of its last axis reads (the
 * narrowest piece's last extent when the concat is along the last axis; 1 when a piece
 * reshapes or permutes). */
static bool concat_candidate(const ir_graph *g, ir_id m, unsigned k, int64_t *run) {
    const ir_node *mm = &g->nodes[m], *v = &g->nodes[ir_in(g, mm, k)];
    if (v->op != IR_OP_CONCAT || !concrete(&mm->shape) || !concrete(&v->shape) || v->nin < 2)
        return false;
    unsigned last = v->shape.rank - 1;
    *run = v->shape.dim[last];
    for (unsigned i = 0; i < v->nin; i++) {
        ir_id p = ir_in(g, v, i), src;
        bool plain;
        if (!piece_chain(g, p, &src, &plain)) return false;
        int64_t e = g->nodes[p].shape.dim[last];
        if (!plain)
            *run = 1;
        else if ((unsigned)v->a.axis == last && e < *run)
            *run = e;
    }
    if (*run > 4096) *run = 4096;
    return true;
}

/* Whether the target's wgmma kernel reads operand k of product m in place through a tensor map
 * of the view (merged heads, pass_wg_opnd_merged, asked before planning). */
static bool tma_reads(const ir_graph *g, const pass_ctx *c, ir_id m, unsigned k) {
    const ir_node *mm = &g->nodes[m];
    ir_id base;
    int perm[3];
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    if (c->gpu->wg_eff <= 0 || k != 0 || /* the target's GPU has the wgmma kernel */
        (dt != IR_BF16 && dt != IR_F16))
        return false;
    return pass_wg_opnd_merged(g, IR_NONE, ir_in(g, mm, 0), dt, &base, perm);
}

/* Whether product m is the p @ v of an attention: its A operand is computed from another
 * product through elementwise ops, views and at least one reduction (the softmax), the
 * pattern the fusion planner fuses into one attention kernel. */
static bool attn_pv(const ir_graph *g, ir_id m) {
    const unsigned mask = IR_T_ELEM | IR_T_VIEW | IR_T_REDUCE;
    uint8_t *seen = ir_xcalloc(g->n, 1); /* bit 1: reached, bit 2: reached past a reduction */
    ir_id *st = ir_xmalloc(2 * (size_t)g->n * sizeof *st);
    uint8_t *sb = ir_xmalloc(2 * (size_t)g->n);
    unsigned sp = 0;
    bool found = false;
    st[sp] = ir_in(g, &g->nodes[m], 0), sb[sp++] = 1;
    while (sp && !found) {
        ir_id y = st[--sp];
        uint8_t bits = sb[sp];
        const ir_node *n = &g->nodes[y];
        unsigned t = ir_op_traits((ir_op)n->op);
        if (n->op == IR_OP_MATMUL) {
            found = (bits & 2) != 0;
            continue;
        }
        if (!(t & mask)) continue;
        if (t & IR_T_REDUCE) bits |= 2;
        for (unsigned k = 0; k < n->nin; k++) {
            ir_id z = ir_in(g, n, k);
            if ((seen[z] | bits) == seen[z]) continue;
            seen[z] |= bits;
            st[sp] = z, sb[sp++] = bits;
        }
    }
    free(seen);
    free(st);
    free(sb);
    return found;
}

/* [attention.kv_concat]: operand k of product m is the V of an attention (attn_pv) and a concat
 * along its key axis (a KV cache and the new rows): the attention kernel reads it in place, each
 * key from its piece, as it reads a K concat; no staging copy. */
static bool attn_kv_concat(const ir_graph *g, ir_id m, unsigned k) {
    const ir_node *v = &g->nodes[ir_in(g, &g->nodes[m], k)];
    return k == 1 && v->op == IR_OP_CONCAT && v->shape.rank >= 2 &&
           (unsigned)v->a.axis == v->shape.rank - 2u && attn_pv(g, m);
}

bool pass_stage_views(ir_graph *g, pass_ctx *c) {
    if (!c->gpu || c->gpu->hbm_GBps <= 0 || c->gpu->sms <= 0) return false;
    uint32_t n0 = g->n, nb = 0, cap = 0;
    ir_id *before = NULL;
    for (ir_id m = 0; m < n0; m++) {
        if (g->nodes[m].op != IR_OP_MATMUL) continue;
        for (unsigned k = 0; k < 2; k++) {
            ir_id src, v = ir_in(g, &g->nodes[m], k);
            int64_t run;
            const char *rule;
            if (stage_candidate(g, m, k, &src) && !tma_reads(g, c, m, k)) {
                run = inner_run(g, v, src);
                rule = "[matmul.stage_view] read through views without a stride form";
            } else if (attn_kv_concat(g, m, k)) {
                if (c->explain)
                    fprintf(c->explain,
                            "%%%u (B of the product %%%u): [attention.kv_concat] a concat of key "
                            "ranges as an attention's V: read in place by the attention kernel, "
                            "each key from its piece (as its K), not staged\n",
                            v, m);
                continue;
            } else if (concat_candidate(g, m, k, &run)) {
                rule = "[matmul.stage_concat] a concat of views, gathered by the product's loads";
            } else {
                continue;
            }
            double inplace, staged;
            char why[512];
            stage_price(g, c->gpu, m, k, v, run, &inplace, &staged, why, sizeof why);
            bool stage = staged < inplace;
            if (c->explain)
                fprintf(c->explain, "%%%u (%s of the product %%%u): %s: %s: %s\n", v, k ? "B" : "A",
                        m, rule, why, stage ? "staged" : "read in place");
            if (!stage) continue;
            if (nb + 1 > cap) before = ir_xrealloc(before, (cap = cap * 2 + 8) * sizeof *before);
            ir_id cp = ir_add_cast(g, v, (ir_dtype)g->nodes[v].dtype);
            g->nodes[cp].flags |= IR_NF_STAGE;
            g->nodes[cp].line = g->nodes[v].line, g->nodes[cp].col = g->nodes[v].col;
            ir_set_in(g, &g->nodes[m], k, cp);
            before[nb++] = m;
        }
    }
    pass_place_appended(g, n0, before);
    free(before);
    return nb > 0;
}
