/* contract.c - [simplify.contract]: a sum over one axis of a product of two broadcast operands,
 * sum(a * b, axis=k), where a spans one output axis that b is broadcast along (N) and b one that
 * a is broadcast along (M), both span the summed axis (K) and the rest are batch axes that both
 * span, is the matrix product a' @ b' over [batch..., N, K] x [batch..., K, M] (the pairwise
 * form users write for cosine similarity, cdist or attention scores with broadcasting:
 * `sum(x[:, None, :] * y[None, :, :], axis=-1)`). The reduction computes every output by reading
 * K elements of each operand through its broadcast; the GEMM tile reuses every loaded operand
 * across its rows and columns. Both sum K products of the same operand values in f32 (the GEMM
 * with fused multiply-adds, the reduction with the product rounded to the dtype first), so the
 * rewrite moves each output by the rounding of its products only.
 *
 * Taken only where the GEMM form pays: N, M and K bound and at least CONTRACT_MIN each (below,
 * one GEMM tile is mostly idle and the reduction's operand reads come from L1), a and b of one
 * float dtype, the product read only by the sum. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* The smallest N, M and K the rewrite takes: one 16 x 16 x 16 step of a tensor-core or SIMT tile
 * (below that the row reduction's per-output loop is shorter than a tile's k loop). */
enum { CONTRACT_MIN = 16 };

/* What each axis of the product is to the contraction. */
enum { AX_UNIT, AX_BATCH, AX_N, AX_M, AX_K };

/* A matched contraction: the product's inputs, their shapes padded to the product's rank with
 * leading 1s, and each axis's role. */
typedef struct contract {
    ir_id a, b, mul;
    int rank, k, n, m;
    ir_shape as, bs;
    uint8_t role[IR_MAX_RANK];
} contract;

/* s padded to rank r with leading unit dims. */
static ir_shape pad_rank(const ir_shape *s, int r) {
    ir_shape o = {.rank = (uint8_t)r};
    int off = r - s->rank;
    for (int i = 0; i < r; i++) o.dim[i] = i < off ? 1 : s->dim[i - off];
    return o;
}

/* Whether dim d is bound and at least CONTRACT_MIN. */
static bool big(ir_dim d) { return !IR_DIM_IS_SYM(d) && d >= CONTRACT_MIN; }

/* Matches node i as sum(a * b, axis=k) of the header's form into *c, with a the operand whose
 * own axis (N) comes first in the product's axis order (the product commutes). */
static bool contract_match(const ir_graph *g, const ir_uses *u, ir_id i, contract *c) {
    const ir_node *s = &g->nodes[i];
    if (s->op != IR_OP_SUM || s->nin != 1 || __builtin_popcount(s->a.red.axes) != 1) return false;
    ir_id mid = ir_in(g, s, 0);
    const ir_node *m = &g->nodes[mid];
    if (m->op != IR_OP_MUL || ir_nuses(u, mid) != 1 || !ir_dtype_is_float((ir_dtype)m->dtype))
        return false;
    c->mul = mid, c->a = ir_in(g, m, 0), c->b = ir_in(g, m, 1), c->rank = m->shape.rank;
    const ir_node *a = &g->nodes[c->a], *b = &g->nodes[c->b];
    if (a->dtype != m->dtype || b->dtype != m->dtype || s->dtype != m->dtype || c->rank < 2)
        return false;
    c->as = pad_rank(&a->shape, c->rank), c->bs = pad_rank(&b->shape, c->rank);
    c->k = __builtin_ctz(s->a.red.axes), c->n = c->m = -1;
    for (int x = 0; x < c->rank; x++) {
        ir_dim d = m->shape.dim[x], da = c->as.dim[x], db = c->bs.dim[x];
        if (d == 1)
            c->role[x] = AX_UNIT;
        else if (x == c->k)
            c->role[x] = da == d && db == d ? AX_K : AX_UNIT;
        else if (da == d && db == d)
            c->role[x] = AX_BATCH;
        else if (da == d && db == 1 && c->n < 0)
            c->role[x] = AX_N, c->n = x;
        else if (db == d && da == 1 && c->m < 0)
            c->role[x] = AX_M, c->m = x;
        else
            return false;
    }
    if (c->role[c->k] != AX_K || c->n < 0 || c->m < 0 || !big(m->shape.dim[c->n]) ||
        !big(m->shape.dim[c->m]) || !big(m->shape.dim[c->k]))
        return false;
    if (c->m < c->n) { /* b first: b' @ a' yields the axes in the product's order (no permute) */
        ir_id t = c->a;
        ir_shape ts = c->as;
        int tn = c->n;
        c->a = c->b, c->b = t, c->as = c->bs, c->bs = ts, c->n = c->m, c->m = tn;
        c->role[c->n] = AX_N, c->role[c->m] = AX_M;
    }
    return true;
}

/* Appends, before node at, the view of operand x (padded shape xs) as [batch..., first, second]:
 * its batch axes and first and second in their order (a reshape that drops the others, all of
 * extent 1 in xs), then a permute; each appended node placed before node at (p). */
static ir_id operand_view(ir_graph *g, ir_id x, const ir_shape *xs, const contract *c, int first,
                          int second, pass_placed *p, ir_id at) {
    ir_shape dense = {0};
    int pos[IR_MAX_RANK], np = 0;
    for (int i = 0; i < c->rank; i++)
        if (c->role[i] == AX_BATCH || i == first || i == second)
            pos[i] = np, dense.dim[np++] = xs->dim[i];
        else
            pos[i] = -1;
    dense.rank = (uint8_t)np;
    ir_id v = x;
    if (!ir_shape_eq(&dense, &g->nodes[x].shape))
        v = pass_placed_at(g, p, ir_add_reshape(g, x, &dense), at);
    uint8_t perm[IR_MAX_RANK];
    int q = 0;
    for (int i = 0; i < c->rank; i++)
        if (c->role[i] == AX_BATCH) perm[q++] = (uint8_t)pos[i];
    perm[q++] = (uint8_t)pos[first], perm[q++] = (uint8_t)pos[second];
    bool ident = true;
    for (int i = 0; i < q; i++) ident &= perm[i] == i;
    return ident ? v : pass_placed_at(g, p, ir_add_permute(g, v, perm), at);
}

/* Appends the GEMM form of matched sum i before it: a' @ b', permuted to the product's axis
 * order and reshaped to the sum's shape, each node placed before i (pl). Returns the last node. */
static ir_id contract_form(ir_graph *g, const contract *c, ir_id i, pass_placed *pl) {
    ir_id av = operand_view(g, c->a, &c->as, c, c->n, c->k, pl, i);
    ir_id bv = operand_view(g, c->b, &c->bs, c, c->k, c->m, pl, i);
    ir_id p = pass_placed_at(g, pl, ir_add_matmul(g, av, bv), i); /* [batch..., N, M] */
    int where[IR_MAX_RANK], nb_ = 0, q = 0; /* each product axis's position in p */
    for (int x = 0; x < c->rank; x++)
        if (c->role[x] == AX_BATCH) where[x] = nb_++;
    where[c->n] = nb_, where[c->m] = nb_ + 1;
    uint8_t perm[IR_MAX_RANK];
    for (int x = 0; x < c->rank; x++)
        if (c->role[x] == AX_BATCH || c->role[x] == AX_N || c->role[x] == AX_M)
            perm[q++] = (uint8_t)where[x];
    bool ident = true;
    for (int x = 0; x < q; x++) ident &= perm[x] == x;
    if (!ident) p = pass_placed_at(g, pl, ir_add_permute(g, p, perm), i);
    ir_shape is = g->nodes[i].shape; /* a copy: appending nodes moves g->nodes */
    if (!ir_shape_eq(&g->nodes[p].shape, &is))
        p = pass_placed_at(g, pl, ir_add_reshape(g, p, &is), i);
    return p;
}

/* Says the rewrite of sum i on c->explain. */
static void explain_contract(const ir_graph *g, pass_ctx *c, const contract *m, ir_id i) {
    if (!c || !c->explain) return;
    char sa[128], sb[128];
    ir_shape_str(g, &g->nodes[m->a].shape, sa, sizeof sa);
    ir_shape_str(g, &g->nodes[m->b].shape, sb, sizeof sb);
    const ir_shape *ps = &g->nodes[m->mul].shape;
    fprintf(c->explain,
            "simplify: [simplify.contract] %%%u = sum(%%%u %s * %%%u %s, axis=%d): N = %lld, "
            "M = %lld, K = %lld >= %d: the product over [..., N, K] x [..., K, M] (a GEMM tile "
            "reuses each loaded operand across its rows and columns; the row reduction reads K "
            "elements of both operands per output)\n",
            i, m->a, sa, m->b, sb, m->k, (long long)ps->dim[m->n], (long long)ps->dim[m->m],
            (long long)ps->dim[m->k], CONTRACT_MIN);
}

/* See passes.h. */
bool pass_contract(ir_graph *g, pass_ctx *c) {
    ir_uses u;
    if (!ir_uses_build(g, &u)) return false;
    uint32_t n0 = g->n;
    pass_placed pl = {0};
    bool changed = false;
    for (ir_id i = 0; i < n0; i++) {
        contract m;
        if (!ir_nuses(&u, i) || !contract_match(g, &u, i, &m)) continue;
        ir_id q = contract_form(g, &m, i, &pl);
        g->nodes[q].name = g->nodes[i].name, g->nodes[i].name = 0;
        ir_replace_uses(g, i, q);
        explain_contract(g, c, &m, i);
        changed = true;
    }
    ir_uses_free(&u);
    pass_placed_apply(g, n0, &pl);
    return changed;
}
