/* matmul.c - the matrix-product region: out[b, m, n] = sum_k A[b, m, k] *
 * B[b, k, n] with a prologue (casts and views of the operands) and an
 * epilogue (the region's elementwise tail) applied to the f32 accumulator
 * in registers and stored once.
 *
 * GPU, f16/bf16 operands: BM x BN block tiles staged through shared
 * memory (a cp.async ring when the tiles allow it), fragments by ldmatrix,
 * warps of mma.sync m16n8k16 (f32 accumulation). GPU, other dtypes:
 * the SIMT f32 kernel of the plan's matmul.simt tile (8 x 8 or 4 x 4 outputs per
 * thread, double-buffered k-major shared tiles). Host: a
 * blocked loop nest (a row of BN accumulators per output row). All paths
 * mask ragged M, N, K; batch dims map to strides (0 when broadcast);
 * transposes are strides. Design notes: docs/codegen-matmul.md. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- operand resolution ------------------------------------------------ */

/* Generic operand load through cg_emit_value (prologues that are not a
 * strided view of one buffer). The operand index maps output batch dims to
 * the operand's own (stride 0 where it broadcasts). */
static LLVMValueRef opnd_load_generic(void *user, cg_ctx *cx, const cg_mm_opnd *o,
                                      const LLVMValueRef *bidx, LLVMValueRef r, LLVMValueRef c) {
    (void)user;
    const ir_node *n = &cx->g->nodes[o->node];
    unsigned ro = n->shape.rank, nbo = ro - 2;
    unsigned nb = o->nbatch;
    LLVMValueRef dims[IR_MAX_RANK];
    for (unsigned j = 0; j < nbo; j++) {
        unsigned i = nb - nbo + j;
        dims[j] = n->shape.dim[j] == 1 ? cg_i64(cx, 0) : bidx[i];
    }
    dims[ro - 2] = r;
    dims[ro - 1] = c;
    unsigned mark = cg_memo_mark(cx);
    cg_index idx = cg_index_from_dims(cx, &n->shape, dims);
    LLVMValueRef v = cg_emit_value(cx, o->node, &idx);
    cg_memo_reset(cx, mark);
    if (!v) return cg_f32c(cx, 0);
    if (n->dtype == IR_I32) return LLVMBuildSIToFP(cx->b, v, cx->f32, "");
    if (n->dtype == IR_BOOL) return LLVMBuildUIToFP(cx->b, v, cx->f32, "");
    return v;
}

/* C-order element strides of a shape (i64 values). */
static void c_strides(cg_ctx *cx, const ir_shape *s, LLVMValueRef *st) {
    LLVMValueRef acc = cg_i64(cx, 1);
    for (unsigned i = s->rank; i-- > 0;) {
        st[i] = acc;
        acc = LLVMBuildMul(cx->b, acc, cg_dim(cx, s->dim[i]), "");
    }
}

/* Compile-time value of an i64 dim value (a constant, or a bound symbol's constant); -1 when
 * it is only known at run time. */
static int64_t const_dim(cg_ctx *cx, ir_dim d) {
    LLVMValueRef v = cg_dim(cx, d);
    return LLVMIsAConstantInt(v) ? LLVMConstIntGetSExtValue(v) : -1;
}

/* Element strides of reshape `r` (its result's dims) from st, the strides of its input's dims:
 * true when the result is a strided view of the same elements, that is, each run of input dims
 * that the reshape merges or splits is contiguous within itself (the view rule of NumPy and
 * PyTorch). Needs compile-time dims, nonzero sizes and constant strides; false otherwise (the
 * operand then takes the generic load). */
static bool reshape_strides(cg_ctx *cx, const ir_shape *from, const LLVMValueRef *st,
                            const ir_shape *to, LLVMValueRef *out) {
    int64_t od[IR_MAX_RANK], os[IR_MAX_RANK], ns[IR_MAX_RANK];
    if (from->rank == 0) return false;
    for (unsigned i = 0; i < from->rank; i++) {
        od[i] = const_dim(cx, from->dim[i]);
        if (od[i] <= 0 || !LLVMIsAConstantInt(st[i])) return false;
        os[i] = LLVMConstIntGetSExtValue(st[i]);
    }
    for (unsigned j = 0; j < to->rank; j++)
        if (const_dim(cx, to->dim[j]) <= 0) return false;
    int vd = (int)to->rank - 1;
    int64_t base = os[from->rank - 1], tn = 1, vn = 1;
    for (int td = (int)from->rank - 1; td >= 0; td--) {
        tn *= od[td];
        if (td > 0 && od[td - 1] == 1) continue;         /* a unit dim joins the current run */
        if (td > 0 && os[td - 1] == tn * base) continue; /* contiguous with the run */
        while (vd >= 0 && (vn < tn || const_dim(cx, to->dim[vd]) == 1)) {
            ns[vd] = vn * base;
            vn *= const_dim(cx, to->dim[vd]);
            vd--;
        }
        if (vn != tn) return false;
        if (td > 0) base = os[td - 1], tn = 1, vn = 1;
    }
    if (vd != -1) return false;
    for (unsigned j = 0; j < to->rank; j++) out[j] = cg_i64(cx, ns[j]);
    return true;
}

/* True when node x is a step the operand walk of cg_mm_resolve_opnd looks through: an in-region
 * cast or permute, or a reshape (a view: index arithmetic in whichever region reads it). */
static bool opnd_step(cg_ctx *cx, unsigned region, ir_id x) {
    const ir_node *n = &cx->g->nodes[x];
    if (cg_is_hbm(cx, x)) return false;
    if (n->op == IR_OP_RESHAPE) return true;
    return n->region == region && (n->op == IR_OP_CAST || n->op == IR_OP_PERMUTE);
}

void cg_mm_resolve_opnd(cg_ctx *cx, unsigned region, ir_id id, unsigned nb, cg_mm_opnd *o) {
    const ir_graph *g = cx->g;
    memset(o, 0, sizeof *o);
    o->node = id;
    o->nbatch = nb;
    /* walk casts, permutes and reshapes down to an HBM value */
    ir_id chain[64];
    unsigned nchain = 0;
    ir_id x = id;
    while (nchain < 64 && opnd_step(cx, region, x)) {
        chain[nchain++] = x;
        x = ir_in(g, &g->nodes[x], 0);
    }
    const ir_node *base = &g->nodes[x];
    bool ok = cg_is_hbm(cx, x) && cg_buf_ptr(cx, x) && nchain <= 4 + 8;
    unsigned ncast = 0;
    for (unsigned i = 0; i < nchain; i++) ncast += g->nodes[chain[i]].op == IR_OP_CAST;
    LLVMValueRef st[IR_MAX_RANK], tmp[IR_MAX_RANK];
    if (ok && ncast <= 4) c_strides(cx, &base->shape, st);
    for (unsigned i = nchain; ok && ncast <= 4 && i-- > 0;) { /* from the base outwards */
        const ir_node *v = &g->nodes[chain[i]];
        const ir_shape *from = &g->nodes[ir_in(g, v, 0)].shape;
        if (v->op == IR_OP_CAST) {
            o->casts[o->ncast++] = (ir_dtype)v->dtype;
        } else if (v->op == IR_OP_PERMUTE) {
            for (unsigned d = 0; d < v->shape.rank; d++) tmp[d] = st[v->a.perm[d]];
            memcpy(st, tmp, sizeof tmp);
        } else {
            ok = reshape_strides(cx, from, st, &v->shape, tmp);
            memcpy(st, tmp, sizeof tmp);
        }
    }
    if (!ok || ncast > 4) {
        memset(o, 0, sizeof *o);
        o->node = id;
        o->nbatch = nb;
        o->load = opnd_load_generic;
        return;
    }
    o->ptr = cg_buf_ptr(cx, x);
    o->ldt = (ir_dtype)base->dtype;
    const ir_node *n = &g->nodes[id];
    unsigned ro = n->shape.rank, nbo = ro - 2;
    for (unsigned i = 0; i < nb; i++) {
        int j = (int)i - (int)(nb - nbo);
        o->sb[i] = (j < 0 || n->shape.dim[j] == 1) ? cg_i64(cx, 0) : st[j];
    }
    o->sr = st[ro - 2];
    o->sc = st[ro - 1];
    o->unit_r = LLVMIsAConstantInt(o->sr) && LLVMConstIntGetSExtValue(o->sr) == 1;
    o->unit_c = LLVMIsAConstantInt(o->sc) && LLVMConstIntGetSExtValue(o->sc) == 1;
}

/* ---- tile choice ---------------------------------------------------------- */

/* Shared memory per block by target: the opt-in limits of sm_80 (163 KiB),
 * sm_86/sm_89 (99 KiB) and sm_90 (227 KiB). */
int64_t cg_mm_smem_limit(int target) {
    switch (target) {
        case CG_SM80: return 163 * 1024;
        case CG_SM86:
        case CG_SM89: return 99 * 1024;
        case CG_SM90:
        case CG_SM90A: return 227 * 1024;
        default: return 0;
    }
}

static bool pow2_in(int64_t v, int64_t lo, int64_t hi) {
    return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

/* Picks the tensor-core tile: the plan's (BM, BN, BK) when it is a power of
 * two in [32,256] x [32,256] x [16,64] whose A tile and nmm B tiles fit the
 * target's shared memory once, else 128 x 128 x 32 (one product) or
 * 128 x 64 x 32 (several). Warps tile the block with warp tiles of at most
 * 64 x 32 (32 x 32 with several products) and at most 8 warps. */
static void mma_tile(const cg_ctx *cx, const cg_mm_desc *d, int64_t *bm, int64_t *bn, int64_t *bk,
                     int *wm, int *wn) {
    bool h = d->nmm > 1;
    *bm = 128, *bn = h ? 64 : 128, *bk = 32;
    int64_t bsz =
        d->bk * (d->bn + 8) > d->bn * (d->bk + 8) ? d->bk * (d->bn + 8) : d->bn * (d->bk + 8);
    if (pow2_in(d->bm, 32, 256) && pow2_in(d->bn, 32, 256) && pow2_in(d->bk, 16, 64) &&
        (d->bm * (d->bk + 8) + bsz * (int64_t)d->nmm) * 2 <= cg_mm_smem_limit(cx->target))
        *bm = d->bm, *bn = d->bn, *bk = d->bk;
    int64_t wr = h ? 32 : 64;
    *wm = (int)(*bm / wr > 0 ? *bm / wr : 1);
    *wn = (int)(*bn / 32 > 0 ? *bn / 32 : 1);
    while (*wm * *wn > 8) {
        if (*wn >= *wm)
            *wn /= 2;
        else
            *wm /= 2;
    }
}

/* ---- GPU: shared batch loop ------------------------------------------------ */

/* True when extent n (i64) is a compile-time multiple of the tile side t:
 * every block's tile then lies inside it (the grid is ceil(n / t) blocks). */
static bool tile_divides(LLVMValueRef n, int64_t t) {
    return LLVMIsAConstantInt(n) && t > 0 && LLVMConstIntGetSExtValue(n) % t == 0;
}

/* Calls the epilogue for output element (row, col) of a bm x bn block tile
 * when it is inside the M x N bounds; without a test where the bounds are
 * multiples of the tile. */
static bool epi_masked(cg_ctx *cx, const cg_mm_desc *d, int64_t bm, int64_t bn,
                       const LLVMValueRef *acc, const LLVMValueRef *bidx, LLVMValueRef row,
                       LLVMValueRef col) {
    LLVMBuilderRef b = cx->b;
    bool rin = tile_divides(d->M, bm), cin = tile_divides(d->N, bn);
    if (rin && cin) return d->epi(d->user, cx, acc, bidx, row, col);
    LLVMValueRef in = rin   ? LLVMBuildICmp(b, LLVMIntSLT, col, d->N, "")
                      : cin ? LLVMBuildICmp(b, LLVMIntSLT, row, d->M, "")
                            : LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, row, d->M, ""),
                                           LLVMBuildICmp(b, LLVMIntSLT, col, d->N, ""), "");
    LLVMBasicBlockRef cont = cg_if_begin(cx, in);
    bool ok = d->epi(d->user, cx, acc, bidx, row, col);
    cg_if_end(cx, cont);
    return ok;
}

/* A warp's view of the tensor-core block: its place, the ldmatrix lane
 * roles and its accumulators. */
typedef struct mm_warp {
    int MT, NT;
    int64_t BK, PA, PB;
    bool bkn; /* B stored [k][n] (else [n][k]) */
    LLVMValueRef wrow, wcol, l15, l7, hi8, b3;
    LLVMValueRef acc[CG_MM_MAXH][8][8][4];
} mm_warp;

/* One BK slice of tiles in shared memory (sa, sb[product]): fragments by
 * ldmatrix, MT x NT mma per product and 16-wide k step into the
 * accumulators; A fragments are shared by the products. */
static bool mma_compute(cg_ctx *cx, const cg_mm_desc *d, mm_warp *w, LLVMValueRef sa,
                        const LLVMValueRef *sb) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef f = cx->f32;
    for (int64_t kk = 0; kk < w->BK; kk += 16) {
        LLVMValueRef af[8][4], bf[8][2];
        for (int i = 0; i < w->MT; i++) {
            LLVMValueRef r =
                LLVMBuildAdd(b, LLVMBuildAdd(b, w->wrow, cg_i32(cx, i * 16), ""), w->l15, "");
            LLVMValueRef c = LLVMBuildAdd(b, w->hi8, cg_i32(cx, kk), "");
            LLVMValueRef idx = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, w->PA), ""), c, "");
            cg_ldmatrix_x4(cx, sa, idx, false, af[i]);
        }
        for (unsigned m = 0; m < d->nmm; m++) {
            for (int j = 0; j + 1 < w->NT; j += 2) {
                LLVMValueRef idx, out[4];
                if (w->bkn) { /* rows k = kk + (l & 15), columns n = wcol + 8j + 8 (l >> 4) */
                    LLVMValueRef r = LLVMBuildAdd(b, w->l15, cg_i32(cx, kk), "");
                    LLVMValueRef c = LLVMBuildAdd(
                        b, LLVMBuildAdd(b, w->wcol, cg_i32(cx, j * 8), ""), w->hi8, "");
                    idx = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, w->PB), ""), c, "");
                } else { /* rows n = wcol + 8j + 8 (l >> 4) + (l & 7), columns k = kk + 8 bit3 */
                    LLVMValueRef r =
                        LLVMBuildAdd(b, LLVMBuildAdd(b, w->wcol, cg_i32(cx, j * 8), ""),
                                     LLVMBuildAdd(b, w->hi8, w->l7, ""), "");
                    LLVMValueRef c = LLVMBuildAdd(b, w->b3, cg_i32(cx, kk), "");
                    idx = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, w->PB), ""), c, "");
                }
                cg_ldmatrix_x4(cx, sb[m], idx, w->bkn, out);
                bf[j][0] = out[0], bf[j][1] = out[1], bf[j + 1][0] = out[2], bf[j + 1][1] = out[3];
            }
            for (int i = 0; i < w->MT; i++)
                for (int j = 0; j < w->NT; j++) {
                    LLVMValueRef c[4], dd[4];
                    for (int q = 0; q < 4; q++) c[q] = LLVMBuildLoad2(b, f, w->acc[m][i][j][q], "");
                    cg_mma_m16n8k16(cx, d->cdt, af[i], bf[j], c, dd);
                    for (int q = 0; q < 4; q++) LLVMBuildStore(b, dd[q], w->acc[m][i][j][q]);
                }
        }
    }
    return true;
}

/* Address of stage s (i32 or i64 value) of a multi-stage buffer. */
static LLVMValueRef stage_ptr(cg_ctx *cx, LLVMValueRef base, LLVMValueRef s, int64_t bytes) {
    LLVMValueRef off =
        LLVMBuildMul(cx->b, s, LLVMConstInt(LLVMTypeOf(s), (unsigned long long)bytes, 0), "");
    return LLVMBuildGEP2(cx->b, cx->i8, base, &off, 1, "");
}

/* The K loop with cp.async: `stages` shared buffers, tile kt + stages - 1
 * in flight while tile kt is multiplied; one barrier per step. */
static bool mma_kloop_async(cg_ctx *cx, const cg_mm_desc *d, mm_warp *w, cg_mm_tile *ta,
                            cg_mm_tile *tb, LLVMValueRef sa, const LLVMValueRef *sb, int64_t abytes,
                            int64_t bbytes, int stages, LLVMValueRef tid, unsigned threads) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef BKc = cg_i64(cx, w->BK);
    LLVMValueRef nk = LLVMBuildUDiv(b, LLVMBuildAdd(b, d->K, cg_i64(cx, w->BK - 1), ""), BKc, "nk");
    for (int s = 0; s + 1 < stages; s++) {
        LLVMBasicBlockRef cont =
            cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, cg_i64(cx, s), nk, ""));
        ta->c0 = cg_i64(cx, s * w->BK);
        ta->smem = stage_ptr(cx, sa, cg_i64(cx, s), abytes);
        cg_mm_tile_async(cx, ta, tid, threads);
        for (unsigned m = 0; m < d->nmm; m++) {
            tb[m].r0 = ta->c0;
            tb[m].smem = stage_ptr(cx, sb[m], cg_i64(cx, s), bbytes);
            cg_mm_tile_async(cx, &tb[m], tid, threads);
        }
        cg_if_end(cx, cont);
        cg_cp_async_commit(cx);
    }
    cg_loop kl;
    LLVMValueRef kt = cg_loop_begin(cx, &kl, cg_i64(cx, 0), nk, cg_i64(cx, 1), "kt");
    cg_cp_async_wait(cx, stages - 2);
    cg_barrier(cx);
    LLVMValueRef nt = LLVMBuildAdd(b, kt, cg_i64(cx, stages - 1), "");
    LLVMBasicBlockRef cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, nt, nk, ""));
    LLVMValueRef ns = LLVMBuildURem(b, nt, cg_i64(cx, stages), "");
    ta->c0 = LLVMBuildMul(b, nt, BKc, "");
    ta->smem = stage_ptr(cx, sa, ns, abytes);
    cg_mm_tile_async(cx, ta, tid, threads);
    for (unsigned m = 0; m < d->nmm; m++) {
        tb[m].r0 = ta->c0;
        tb[m].smem = stage_ptr(cx, sb[m], ns, bbytes);
        cg_mm_tile_async(cx, &tb[m], tid, threads);
    }
    cg_if_end(cx, cont);
    cg_cp_async_commit(cx);
    LLVMValueRef cs = LLVMBuildURem(b, kt, cg_i64(cx, stages), "");
    LLVMValueRef sbs[CG_MM_MAXH];
    for (unsigned m = 0; m < d->nmm; m++) sbs[m] = stage_ptr(cx, sb[m], cs, bbytes);
    bool ok = mma_compute(cx, d, w, stage_ptr(cx, sa, cs, abytes), sbs);
    cg_loop_end(cx, &kl);
    cg_cp_async_wait(cx, 0);
    cg_barrier(cx);
    return ok;
}

/* Tensor-core block body for one batch element bidx: K loop over shared
 * tiles (cp.async multi-stage when the tiles allow it), mma per warp,
 * epilogue from the fragments. */
static bool mma_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                      LLVMValueRef n0, cg_mm_launch *l, int wm, int wn) {
    LLVMBuilderRef b = cx->b;
    int64_t BM = l->bm, BN = l->bn, BK = l->bk;
    mm_warp w;
    w.BK = BK;
    w.PA = BK + 8;
    w.MT = (int)(BM / wm / 16), w.NT = (int)(BN / wn / 8);
    /* B in shared memory: [k][n] (pitch BN+8, fragments by ldmatrix.trans)
     * when n is contiguous in HBM, else [n][k] (pitch BK+8, ldmatrix) */
    w.bkn = true;
    for (unsigned m = 0; m < d->nmm; m++) w.bkn = w.bkn && d->b[m].unit_c && !d->b[m].load;
    w.PB = w.bkn ? BN + 8 : BK + 8;
    int64_t abytes = BM * w.PA * 2, bbytes = (w.bkn ? BK : BN) * w.PB * 2;
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMValueRef warp = LLVMBuildUDiv(b, tid, cg_i32(cx, 32), "");
    LLVMValueRef lane = LLVMBuildURem(b, tid, cg_i32(cx, 32), "");
    LLVMValueRef gq = LLVMBuildLShr(b, lane, cg_i32(cx, 2), "");
    LLVMValueRef t4 = LLVMBuildAnd(b, lane, cg_i32(cx, 3), "");
    w.wrow = LLVMBuildMul(b, LLVMBuildUDiv(b, warp, cg_i32(cx, wn), ""), cg_i32(cx, BM / wm), "");
    w.wcol = LLVMBuildMul(b, LLVMBuildURem(b, warp, cg_i32(cx, wn), ""), cg_i32(cx, BN / wn), "");
    w.l15 = LLVMBuildAnd(b, lane, cg_i32(cx, 15), "");
    w.l7 = LLVMBuildAnd(b, lane, cg_i32(cx, 7), "");
    w.hi8 = LLVMBuildMul(b, LLVMBuildLShr(b, lane, cg_i32(cx, 4), ""), cg_i32(cx, 8), "");
    w.b3 = LLVMBuildMul(
        b, LLVMBuildAnd(b, LLVMBuildLShr(b, lane, cg_i32(cx, 3), ""), cg_i32(cx, 1), ""),
        cg_i32(cx, 8), "");
    for (unsigned m = 0; m < d->nmm; m++)
        for (int i = 0; i < w.MT; i++)
            for (int j = 0; j < w.NT; j++)
                for (int q = 0; q < 4; q++) w.acc[m][i][j][q] = cg_var(cx, cg_f32c(cx, 0));
    cg_mm_tile ta = {&d->a, d->nb, bidx, m0, NULL, d->M, d->K, BM, BK, w.PA, 1, d->cdt, NULL};
    cg_mm_tile tb[CG_MM_MAXH];
    bool async_ok = cg_mm_tile_async_ok(cx, &ta);
    for (unsigned m = 0; m < d->nmm; m++) {
        tb[m] = (cg_mm_tile){
            &d->b[m],         d->nb,  bidx, NULL, n0, d->K, d->N, BK, BN, w.bkn ? w.PB : 1,
            w.bkn ? 1 : w.PB, d->cdt, NULL};
        async_ok = async_ok && cg_mm_tile_async_ok(cx, &tb[m]);
    }
    int64_t allb = bbytes * (int64_t)d->nmm;
    /* stages: the plan's ring depth, else 4; fewer when they do not fit */
    int stages = d->stages >= 2 ? d->stages : 4;
    while (stages > 1 && (abytes + allb) * stages > cg_mm_smem_limit(cx->target)) stages--;
    bool ok;
    LLVMValueRef sb[CG_MM_MAXH];
    if (stages >= 2 && async_ok) {
        LLVMValueRef sa = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
        for (unsigned m = 0; m < d->nmm; m++) {
            LLVMValueRef off = cg_i64(cx, abytes * stages + (int64_t)m * bbytes * stages);
            sb[m] = LLVMBuildGEP2(b, cx->i8, sa, &off, 1, "");
        }
        l->smem_bytes = l->dyn_smem = (abytes + allb) * stages;
        ok = mma_kloop_async(cx, d, &w, &ta, tb, sa, sb, abytes, bbytes, stages, tid, l->threads);
    } else { /* one buffer set, in dynamic shared memory */
        LLVMValueRef sa = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
        for (unsigned m = 0; m < d->nmm; m++) {
            LLVMValueRef off = cg_i64(cx, abytes + (int64_t)m * bbytes);
            sb[m] = LLVMBuildGEP2(b, cx->i8, sa, &off, 1, "");
        }
        l->smem_bytes = l->dyn_smem = abytes + allb;
        cg_loop kl;
        LLVMValueRef k0 = cg_loop_begin(cx, &kl, cg_i64(cx, 0), d->K, cg_i64(cx, BK), "k");
        ta.c0 = k0;
        ta.smem = sa;
        cg_mm_tile_load(cx, &ta, tid, l->threads);
        for (unsigned m = 0; m < d->nmm; m++) {
            tb[m].r0 = k0;
            tb[m].smem = sb[m];
            cg_mm_tile_load(cx, &tb[m], tid, l->threads);
        }
        cg_barrier(cx);
        ok = mma_compute(cx, d, &w, sa, sb);
        cg_barrier(cx);
        cg_loop_end(cx, &kl);
    }
    if (!ok) return false;
    /* epilogue: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) */
    LLVMTypeRef f = cx->f32;
    LLVMValueRef gq64 = LLVMBuildZExt(b, gq, cx->i64, "");
    LLVMValueRef t2 = LLVMBuildZExt(b, LLVMBuildMul(b, t4, cg_i32(cx, 2), ""), cx->i64, "");
    LLVMValueRef rb =
        LLVMBuildAdd(b, m0, LLVMBuildAdd(b, LLVMBuildZExt(b, w.wrow, cx->i64, ""), gq64, ""), "");
    LLVMValueRef cb =
        LLVMBuildAdd(b, n0, LLVMBuildAdd(b, LLVMBuildZExt(b, w.wcol, cx->i64, ""), t2, ""), "");
    for (int i = 0; i < w.MT; i++)
        for (int j = 0; j < w.NT; j++)
            for (int q = 0; q < 4; q++) {
                LLVMValueRef row = LLVMBuildAdd(b, rb, cg_i64(cx, i * 16 + (q >> 1) * 8), "");
                LLVMValueRef col = LLVMBuildAdd(b, cb, cg_i64(cx, j * 8 + (q & 1)), "");
                LLVMValueRef v[CG_MM_MAXH];
                for (unsigned m = 0; m < d->nmm; m++)
                    v[m] = LLVMBuildLoad2(b, f, w.acc[m][i][j][q], "");
                if (!epi_masked(cx, d, BM, BN, v, bidx, row, col)) return false;
            }
    return true;
}

/* ---- GPU: the SIMT f32 kernel ([matmul.simt]) ------------------------------------------------ */

#define SG_MAXSLOT 16

/* One operand's share of a block's BK-deep tile in the SIMT kernel: slot s of a thread is tile
 * element (mn0 + dmn[s], k0 + dk[s]) (A: row m, column k; B: row k, column n), stored in shared
 * memory at sidx0 + dsh[s] (k x pitch + mn). The per-slot parts are compile-time constants, so
 * the slots' addresses are one register plus immediates; the m/n masks are loop-invariant. */
typedef struct sg_opnd {
    const cg_mm_opnd *o;
    bool is_b;
    int nslot;
    bool mask_mn, mask_k; /* tests needed: an extent that is not a compile-time tile multiple */
    LLVMValueRef mn0, k0, sidx0; /* i64, i64, i32 */
    int64_t dmn[SG_MAXSLOT], dk[SG_MAXSLOT], dsh[SG_MAXSLOT];
    LLVMValueRef in_mn[SG_MAXSLOT], mn[SG_MAXSLOT]; /* global m/n (clamped when masked) */
} sg_opnd;

void cg_sg_slot(int64_t fast, unsigned threads, int s, int64_t *df, int64_t *ds) {
    if (threads % fast == 0) { /* every slot a new line: the fast coordinate is the thread's */
        *df = 0, *ds = (int64_t)s * (threads / fast);
    } else { /* fast % threads == 0: fast / threads slots along one line, then the next line */
        int64_t per = fast / threads;
        *df = (s % per) * (int64_t)threads, *ds = s / per;
    }
}

/* Places slot s of every thread at element tid + s x threads of the ext x BK tile, the operand's
 * contiguous global direction fastest (m or n where it has unit stride, else k), so a warp's
 * loads are coalesced (cg_sg_slot: the slot's offsets from the thread's first element). */
static void sg_opnd_init(cg_ctx *cx, const cg_mm_desc *d, sg_opnd *p, const cg_mm_opnd *o,
                         bool is_b, LLVMValueRef t0, int64_t ext, int64_t BK, int64_t pitch,
                         LLVMValueRef tid, unsigned threads) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef lim = is_b ? d->N : d->M;
    p->o = o;
    p->is_b = is_b;
    p->nslot = (int)(ext * BK / threads);
    p->mask_mn = !tile_divides(lim, ext);
    p->mask_k = !tile_divides(d->K, BK);
    bool mn_fast = !o->load && (is_b ? o->unit_c : (o->unit_r && !o->unit_c));
    int64_t fast = mn_fast ? ext : BK;
    LLVMValueRef q = LLVMBuildUDiv(b, tid, cg_i32(cx, fast), "");
    LLVMValueRef r = LLVMBuildURem(b, tid, cg_i32(cx, fast), "");
    LLVMValueRef mn = mn_fast ? r : q, k = mn_fast ? q : r;
    p->sidx0 = LLVMBuildNUWAdd(b, LLVMBuildNUWMul(b, k, cg_i32(cx, pitch), ""), mn, "");
    p->k0 = LLVMBuildZExt(b, k, cx->i64, "");
    p->mn0 = LLVMBuildNUWAdd(b, t0, LLVMBuildZExt(b, mn, cx->i64, ""), "");
    for (int s = 0; s < p->nslot; s++) {
        int64_t df, ds;
        cg_sg_slot(fast, threads, s, &df, &ds);
        p->dmn[s] = mn_fast ? df : ds, p->dk[s] = mn_fast ? ds : df;
        p->dsh[s] = p->dk[s] * pitch + p->dmn[s];
        LLVMValueRef g = LLVMBuildNUWAdd(b, p->mn0, cg_i64(cx, p->dmn[s]), "");
        p->in_mn[s] = p->mask_mn ? LLVMBuildICmp(b, LLVMIntSLT, g, lim, "") : NULL;
        p->mn[s] = p->mask_mn ? LLVMBuildSelect(b, p->in_mn[s], g, cg_i64(cx, 0), "") : g;
    }
}

/* Loads the operand's slots of the tile at k offset kb (i64) as f32 (after the prologue casts),
 * zero outside M/N and K (the indices clamped, so every load is in bounds). */
static void sg_opnd_load(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx,
                         const sg_opnd *p, LLVMValueRef kb, LLVMValueRef *v) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef kt = LLVMBuildNUWAdd(b, kb, p->k0, "");
    for (int s = 0; s < p->nslot; s++) {
        LLVMValueRef k = LLVMBuildNUWAdd(b, kt, cg_i64(cx, p->dk[s]), "");
        LLVMValueRef in = p->in_mn[s];
        if (p->mask_k) {
            LLVMValueRef ink = LLVMBuildICmp(b, LLVMIntSLT, k, d->K, "");
            k = LLVMBuildSelect(b, ink, k, cg_i64(cx, 0), "");
            in = in ? LLVMBuildAnd(b, in, ink, "") : ink;
        }
        v[s] = p->is_b ? cg_mm_opnd_load(cx, p->o, d->nb, bidx, k, p->mn[s])
                       : cg_mm_opnd_load(cx, p->o, d->nb, bidx, p->mn[s], k);
        if (in) v[s] = LLVMBuildSelect(b, in, v[s], cg_f32c(cx, 0), "");
    }
}

/* Stores the slots' values into the tile buffer `buf` (f32 shared pointer). */
static void sg_opnd_store(cg_ctx *cx, const sg_opnd *p, LLVMValueRef buf, const LLVMValueRef *v) {
    LLVMValueRef base = LLVMBuildGEP2(cx->b, cx->f32, buf, (LLVMValueRef[]){p->sidx0}, 1, "");
    for (int s = 0; s < p->nslot; s++) {
        LLVMValueRef ix = cg_i32(cx, p->dsh[s]);
        LLVMValueRef ptr = LLVMBuildInBoundsGEP2(cx->b, cx->f32, base, &ix, 1, "");
        LLVMSetAlignment(LLVMBuildStore(cx->b, v[s], ptr), 4);
    }
}

/* <4 x f32> load of buf[idx] (16-byte aligned). */
static void sg_ld4(cg_ctx *cx, LLVMValueRef buf, LLVMValueRef idx, LLVMValueRef *out) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef v4 = LLVMVectorType(cx->f32, 4);
    LLVMValueRef l = LLVMBuildLoad2(b, v4, LLVMBuildGEP2(b, cx->f32, buf, &idx, 1, ""), "");
    LLVMSetAlignment(l, 16);
    for (int i = 0; i < 4; i++) out[i] = LLVMBuildExtractElement(b, l, cg_i32(cx, i), "");
}

cg_sg_geom cg_sg_geom_of(int64_t bm, int64_t bn, int64_t bk, unsigned nmm) {
    cg_sg_geom g;
    pass_simt_geom pg = pass_simt_geom_of(bm, bn, bk, nmm); /* the planner's outputs a thread */
    g.bm = bm, g.bn = bn, g.bk = bk;
    g.tm = pg.tm, g.tn = pg.tn;
    g.tx = (unsigned)(bn / g.tn), g.ty = (unsigned)(bm / g.tm);
    g.threads = g.tx * g.ty;
    g.pa = bm + 4, g.pb = bn + 4;
    g.smem_bytes = 2 * g.bk * (g.pa + g.pb) * 4;
    return g;
}

int64_t cg_sg_row(const cg_sg_geom *g, unsigned ty, int i) {
    int64_t grp = g->bm * 4 / g->tm; /* rows between a thread's groups of 4 */
    return (int64_t)(i / 4) * grp + (int64_t)ty * 4 + i % 4;
}

int64_t cg_sg_col(const cg_sg_geom *g, unsigned tx, int j) {
    int64_t grp = g->bn * 4 / g->tn;
    return (int64_t)(j / 4) * grp + (int64_t)tx * 4 + j % 4;
}

/* Asks ptxas for the blocks per SM the planner's model assumes (nvvm minctasm): registers
 * capped at pass_simt_regs a thread (at most 8 blocks). */
static void sg_min_blocks(cg_ctx *cx, const cg_sg_geom *g, int splits) {
    int64_t regs = pass_simt_regs(g->tm, splits), n = 65536 / (regs * (int64_t)g->threads);
    if (n > 8) n = 8;
    if (n < 1 || !cx->gpu) return;
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(cx->fn),
                             LLVMMDStringInContext2(cx->llctx, "minctasm", 8),
                             LLVMValueAsMetadata(LLVMConstInt(cx->i32, (unsigned)n, 0))};
    LLVMAddNamedMetadataOperand(
        cx->mod, "nvvm.annotations",
        LLVMMetadataAsValue(cx->llctx, LLVMMDNodeInContext2(cx->llctx, md, 3)));
}

void cg_sg_rank_steps(cg_ctx *cx, LLVMValueRef nk, LLVMValueRef rank, int splits, LLVMValueRef *lo,
                      LLVMValueRef *steps) {
    LLVMBuilderRef b = cx->b;
    if (splits <= 1) {
        *lo = cg_i64(cx, 0), *steps = nk;
        return;
    }
    LLVMValueRef r = LLVMBuildZExt(b, rank, cx->i64, ""), S = cg_i64(cx, splits);
    *lo = LLVMBuildUDiv(b, LLVMBuildMul(b, r, nk, ""), S, "klo_step");
    LLVMValueRef hi =
        LLVMBuildUDiv(b, LLVMBuildMul(b, LLVMBuildAdd(b, r, cg_i64(cx, 1), ""), nk, ""), S, "");
    *steps = LLVMBuildSub(b, hi, *lo, "ksteps");
}

/* Split-K's end of a SIMT block (l->splits ranks, one cluster per output tile): every thread
 * writes its tm x tn accumulators to the block's partial tile (bm x bn f32, dynamic shared
 * memory); after a cluster barrier rank r owns elements [r bm bn / S, (r + 1) bm bn / S) of the
 * tile, adds the S ranks' partials in rank order through distributed shared memory (exact f32
 * adds, the same order in every run) and runs the epilogue on them; a second cluster barrier
 * keeps every block's partial tile alive until all have read it. */
static bool sg_split_finish(cg_ctx *cx, const cg_mm_desc *d, const cg_sg_geom *g,
                            const LLVMValueRef *bidx, LLVMValueRef m0, LLVMValueRef n0,
                            LLVMValueRef rank, LLVMValueRef tx64, LLVMValueRef ty64,
                            LLVMValueRef (*acc)[8], cg_mm_launch *l) {
    LLVMBuilderRef b = cx->b;
    int S = l->splits;
    LLVMValueRef part = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
    l->dyn_smem = pass_simt_part_bytes(g->bm, g->bn, S);
    l->smem_bytes += l->dyn_smem;
    LLVMValueRef r0 = LLVMBuildMul(b, ty64, cg_i64(cx, 4), ""),
                 c0 = LLVMBuildMul(b, tx64, cg_i64(cx, 4), "");
    for (int i = 0; i < g->tm; i++)
        for (int j = 0; j < g->tn; j++) {
            LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, cg_sg_row(g, 0, i)), "");
            LLVMValueRef col = LLVMBuildAdd(b, c0, cg_i64(cx, cg_sg_col(g, 0, j)), "");
            LLVMValueRef e = LLVMBuildTrunc(
                b, LLVMBuildAdd(b, LLVMBuildMul(b, row, cg_i64(cx, g->bn), ""), col, ""), cx->i32,
                "");
            LLVMValueRef p = LLVMBuildGEP2(b, cx->f32, part, &e, 1, "");
            LLVMSetAlignment(LLVMBuildStore(b, LLVMBuildLoad2(b, cx->f32, acc[i][j], ""), p), 4);
        }
    cg_cluster_sync(cx);
    int64_t per = g->bm * g->bn / S;
    LLVMValueRef tid = cg_thread_id(cx);
    cg_loop el_loop;
    LLVMValueRef it = LLVMBuildTrunc(b,
                                     cg_loop_begin(cx, &el_loop, cg_i64(cx, 0),
                                                   cg_i64(cx, (per + g->threads - 1) / g->threads),
                                                   cg_i64(cx, 1), "red"),
                                     cx->i32, "");
    LLVMValueRef el = LLVMBuildAdd(b, LLVMBuildMul(b, it, cg_i32(cx, g->threads), ""), tid, "");
    LLVMBasicBlockRef c1 = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, el, cg_i32(cx, per), ""));
    LLVMValueRef e = LLVMBuildAdd(b, LLVMBuildMul(b, rank, cg_i32(cx, per), ""), el, "");
    LLVMValueRef row = LLVMBuildAdd(
        b, m0, LLVMBuildZExt(b, LLVMBuildUDiv(b, e, cg_i32(cx, g->bn), ""), cx->i64, ""), "");
    LLVMValueRef col = LLVMBuildAdd(
        b, n0, LLVMBuildZExt(b, LLVMBuildURem(b, e, cg_i32(cx, g->bn), ""), cx->i64, ""), "");
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, row, d->M, ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, col, d->N, ""), "");
    LLVMBasicBlockRef c2 = cg_if_begin(cx, in);
    LLVMValueRef p = LLVMBuildGEP2(b, cx->f32, part, &e, 1, "");
    LLVMValueRef v = cg_cluster_load(cx, cx->f32, p, cg_i32(cx, 0));
    for (int q = 1; q < S; q++)
        v = LLVMBuildFAdd(b, v, cg_cluster_load(cx, cx->f32, p, cg_i32(cx, q)), "");
    bool ok = d->epi(d->user, cx, &v, bidx, row, col);
    cg_if_end(cx, c2);
    cg_if_end(cx, c1);
    cg_loop_end(cx, &el_loop);
    cg_cluster_sync(cx);
    return ok;
}

/* SIMT f32 block body (cg_sg_geom_of(bm, bn)): thread (tx, ty) owns the tm x tn outputs at rows
 * cg_sg_row(ty, i) and columns cg_sg_col(tx, j) in registers. Per BK-deep k step the tiles
 * (A stored k-major, [k][m], B [k][n], rows padded by 4 floats) sit in one of two shared buffers:
 * the next step's elements are loaded into registers before this step's FMAs (their latency
 * hidden behind them) and stored into the other buffer after, one barrier per step. Fragments
 * are 128-bit shared loads of 4 consecutive rows / columns. */
static bool sgemm_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                        LLVMValueRef n0, LLVMValueRef rank, cg_mm_launch *l) {
    LLVMBuilderRef b = cx->b;
    cg_sg_geom g = cg_sg_geom_of(l->bm, l->bn, l->bk, d->nmm);
    const int64_t BK = g.bk;
    LLVMTypeRef f = cx->f32;
    int64_t abuf = BK * g.pa, bbuf = BK * g.pb; /* floats per buffer */
    LLVMValueRef sa = cg_shared_bytes(cx, 2 * abuf * 4), sb[CG_MM_MAXH];
    for (unsigned m = 0; m < d->nmm; m++) sb[m] = cg_shared_bytes(cx, 2 * bbuf * 4);
    l->smem_bytes = 2 * BK * (g.pa + g.pb * (int64_t)d->nmm) * 4;
    sg_min_blocks(cx, &g, l->splits);
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMValueRef tx = LLVMBuildURem(b, tid, cg_i32(cx, g.tx), "");
    LLVMValueRef ty = LLVMBuildUDiv(b, tid, cg_i32(cx, g.tx), "");
    sg_opnd pa, pb[CG_MM_MAXH];
    sg_opnd_init(cx, d, &pa, &d->a, false, m0, g.bm, BK, g.pa, tid, g.threads);
    for (unsigned m = 0; m < d->nmm; m++)
        sg_opnd_init(cx, d, &pb[m], &d->b[m], true, n0, g.bn, BK, g.pb, tid, g.threads);
    LLVMValueRef acc[CG_MM_MAXH][8][8];
    for (unsigned m = 0; m < d->nmm; m++)
        for (int i = 0; i < g.tm; i++)
            for (int j = 0; j < g.tn; j++) acc[m][i][j] = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef nk =
        LLVMBuildUDiv(b, LLVMBuildAdd(b, d->K, cg_i64(cx, BK - 1), ""), cg_i64(cx, BK), "nk");
    LLVMValueRef lo, steps;
    cg_sg_rank_steps(cx, nk, rank, l->splits, &lo, &steps);
    LLVMValueRef va[SG_MAXSLOT], vb[CG_MM_MAXH][SG_MAXSLOT];
    LLVMValueRef klo = LLVMBuildMul(b, lo, cg_i64(cx, BK), "klo");
    sg_opnd_load(cx, d, bidx, &pa, klo, va);
    for (unsigned m = 0; m < d->nmm; m++) sg_opnd_load(cx, d, bidx, &pb[m], klo, vb[m]);
    sg_opnd_store(cx, &pa, sa, va);
    for (unsigned m = 0; m < d->nmm; m++) sg_opnd_store(cx, &pb[m], sb[m], vb[m]);
    cg_barrier(cx);
    LLVMValueRef a_row = LLVMBuildMul(b, ty, cg_i32(cx, 4), ""); /* first row of the groups */
    LLVMValueRef b_col = LLVMBuildMul(b, tx, cg_i32(cx, 4), "");
    cg_loop kl;
    LLVMValueRef kt = cg_loop_begin(cx, &kl, cg_i64(cx, 0), steps, cg_i64(cx, 1), "kt");
    LLVMValueRef cur = LLVMBuildTrunc(b, LLVMBuildAnd(b, kt, cg_i64(cx, 1), ""), cx->i32, "");
    LLVMValueRef nxt = LLVMBuildXor(b, cur, cg_i32(cx, 1), "");
    /* the next step's elements; the last step reloads its own tile (stored into the other
     * buffer, never read), so no load reaches past the rank's k range or K */
    LLVMValueRef kt1 = LLVMBuildAdd(b, kt, cg_i64(cx, 1), "");
    kt1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, kt1, steps, ""), kt1, kt, "");
    LLVMValueRef k1 = LLVMBuildMul(b, LLVMBuildAdd(b, lo, kt1, ""), cg_i64(cx, BK), "");
    sg_opnd_load(cx, d, bidx, &pa, k1, va);
    for (unsigned m = 0; m < d->nmm; m++) sg_opnd_load(cx, d, bidx, &pb[m], k1, vb[m]);
    LLVMValueRef ca = LLVMBuildMul(b, cur, cg_i32(cx, abuf), "");
    LLVMValueRef cb = LLVMBuildMul(b, cur, cg_i32(cx, bbuf), "");
    for (int64_t kk = 0; kk < BK; kk++) {
        LLVMValueRef av[8], bv[8];
        for (int q = 0; q < g.tm / 4; q++) {
            LLVMValueRef ia = LLVMBuildAdd(
                b, ca, LLVMBuildAdd(b, a_row, cg_i32(cx, kk * g.pa + q * (g.bm * 4 / g.tm)), ""),
                "");
            sg_ld4(cx, sa, ia, av + 4 * q);
        }
        for (unsigned m = 0; m < d->nmm; m++) {
            for (int q = 0; q < g.tn / 4; q++) {
                LLVMValueRef ib = LLVMBuildAdd(
                    b, cb,
                    LLVMBuildAdd(b, b_col, cg_i32(cx, kk * g.pb + q * (g.bn * 4 / g.tn)), ""), "");
                sg_ld4(cx, sb[m], ib, bv + 4 * q);
            }
            for (int i = 0; i < g.tm; i++)
                for (int j = 0; j < g.tn; j++) {
                    LLVMValueRef args[3] = {av[i], bv[j], LLVMBuildLoad2(b, f, acc[m][i][j], "")};
                    LLVMBuildStore(b, cg_call_intrinsic(cx, "llvm.fmuladd", true, args, 3),
                                   acc[m][i][j]);
                }
        }
    }
    LLVMValueRef na = LLVMBuildMul(b, nxt, cg_i32(cx, abuf), "");
    LLVMValueRef nbo = LLVMBuildMul(b, nxt, cg_i32(cx, bbuf), "");
    sg_opnd_store(cx, &pa, LLVMBuildGEP2(b, f, sa, &na, 1, ""), va);
    for (unsigned m = 0; m < d->nmm; m++)
        sg_opnd_store(cx, &pb[m], LLVMBuildGEP2(b, f, sb[m], &nbo, 1, ""), vb[m]);
    cg_barrier(cx);
    cg_loop_end(cx, &kl);
    LLVMValueRef tx64 = LLVMBuildZExt(b, tx, cx->i64, ""), ty64 = LLVMBuildZExt(b, ty, cx->i64, "");
    if (l->splits > 1) return sg_split_finish(cx, d, &g, bidx, m0, n0, rank, tx64, ty64, acc[0], l);
    LLVMValueRef r0 = LLVMBuildAdd(b, m0, LLVMBuildMul(b, ty64, cg_i64(cx, 4), ""), "");
    LLVMValueRef c0 = LLVMBuildAdd(b, n0, LLVMBuildMul(b, tx64, cg_i64(cx, 4), ""), "");
    for (int i = 0; i < g.tm; i++)
        for (int j = 0; j < g.tn; j++) {
            LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, cg_sg_row(&g, 0, i)), "");
            LLVMValueRef col = LLVMBuildAdd(b, c0, cg_i64(cx, cg_sg_col(&g, 0, j)), "");
            LLVMValueRef v[CG_MM_MAXH];
            for (unsigned m = 0; m < d->nmm; m++) v[m] = LLVMBuildLoad2(b, f, acc[m][i][j], "");
            if (!epi_masked(cx, d, g.bm, g.bn, v, bidx, row, col)) return false;
        }
    return true;
}

/* The host's copy of a SIMT split-K schedule: k chunks (ranks x a GEMV tile's warps), k step,
 * k steps (i64). */
typedef struct host_split {
    int splits;
    int64_t bk;
    LLVMValueRef nk;
} host_split;

/* Host body for one program: rows [m0, m0+BM) x columns [n0, n0+BN) of
 * batch element bidx; a row of accumulators updated with A[i,k] * B[k, :]
 * (contiguous, vectorisable), then the epilogue per element. Under a SIMT split-K schedule each
 * rank's k range (sg_rank_steps) is summed afresh and the ranks' sums added in rank order, the
 * GPU kernel's arithmetic. */
static bool host_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                       LLVMValueRef n0, int64_t BM, int64_t BN) {
    LLVMBuilderRef b = cx->b;
    /* the SIMT schedule's split-K ranks (one product): the GPU kernel's k ranges and order */
    host_split hs, *sp = NULL;
    int chunks = d->simt_splits * (d->simt_kwarps > 1 ? d->simt_kwarps : 1);
    if (chunks > 1 && d->nmm == 1 && d->simt_bk > 0) {
        hs.splits = chunks, hs.bk = d->simt_bk, sp = &hs;
        hs.nk = LLVMBuildUDiv(b, LLVMBuildAdd(b, d->K, cg_i64(cx, hs.bk - 1), ""),
                              cg_i64(cx, hs.bk), "nk");
    }
    LLVMTypeRef f = cx->f32;
    LLVMTypeRef at = LLVMArrayType2(f, (uint64_t)(BN * (int64_t)d->nmm));
    LLVMBuilderRef t = LLVMCreateBuilderInContext(cx->llctx);
    LLVMValueRef first = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(cx->fn));
    if (first)
        LLVMPositionBuilderBefore(t, first);
    else
        LLVMPositionBuilderAtEnd(t, LLVMGetEntryBasicBlock(cx->fn));
    LLVMValueRef accp = LLVMBuildAlloca(t, at, "accrow"), totp = NULL;
    LLVMSetAlignment(accp, 64);
    if (sp) {
        totp = LLVMBuildAlloca(t, at, "totrow");
        LLVMSetAlignment(totp, 64);
    }
    LLVMDisposeBuilder(t);
    LLVMValueRef mend = LLVMBuildAdd(b, m0, cg_i64(cx, BM), "");
    mend = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, mend, d->M, ""), mend, d->M, "");
    LLVMValueRef nend = LLVMBuildAdd(b, n0, cg_i64(cx, BN), "");
    nend = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, nend, d->N, ""), nend, d->N, "");
    LLVMValueRef nn = LLVMBuildSub(b, nend, n0, "");
    cg_loop il, jl, kl, rl;
    LLVMValueRef i = cg_loop_begin(cx, &il, m0, mend, cg_i64(cx, 1), "i");
    LLVMValueRef j, klo = cg_i64(cx, 0), khi = d->K, rank = NULL;
    if (!sp) {
        j = cg_loop_begin(cx, &jl, cg_i64(cx, 0), nn, cg_i64(cx, 1), "j0");
        for (unsigned m = 0; m < d->nmm; m++) {
            LLVMValueRef jm = LLVMBuildAdd(b, j, cg_i64(cx, (int64_t)m * BN), "");
            LLVMBuildStore(b, cg_f32c(cx, 0), LLVMBuildGEP2(b, f, accp, &jm, 1, ""));
        }
        cg_loop_end(cx, &jl);
    }
    if (sp) { /* the split-K ranks of the SIMT schedule, each a fresh sum, added in rank order */
        LLVMValueRef r =
            cg_loop_begin(cx, &rl, cg_i64(cx, 0), cg_i64(cx, sp->splits), cg_i64(cx, 1), "rank");
        LLVMValueRef lo, steps, rk = LLVMBuildTrunc(b, r, cx->i32, "");
        cg_sg_rank_steps(cx, sp->nk, rk, sp->splits, &lo, &steps);
        LLVMValueRef BKc = cg_i64(cx, sp->bk);
        klo = LLVMBuildMul(b, lo, BKc, "");
        khi = LLVMBuildMul(b, LLVMBuildAdd(b, lo, steps, ""), BKc, "");
        khi = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, khi, d->K, ""), khi, d->K, "");
        j = cg_loop_begin(cx, &jl, cg_i64(cx, 0), nn, cg_i64(cx, 1), "jz");
        LLVMBuildStore(b, cg_f32c(cx, 0), LLVMBuildGEP2(b, f, accp, &j, 1, ""));
        cg_loop_end(cx, &jl);
        rank = r;
    }
    LLVMValueRef k = cg_loop_begin(cx, &kl, klo, khi, cg_i64(cx, 1), "k");
    LLVMValueRef a = cg_mm_opnd_load(cx, &d->a, d->nb, bidx, i, k);
    j = cg_loop_begin(cx, &jl, cg_i64(cx, 0), nn, cg_i64(cx, 1), "j");
    for (unsigned m = 0; m < d->nmm; m++) {
        LLVMValueRef bv = cg_mm_opnd_load(cx, &d->b[m], d->nb, bidx, k, LLVMBuildAdd(b, n0, j, ""));
        LLVMValueRef jm = LLVMBuildAdd(b, j, cg_i64(cx, (int64_t)m * BN), "");
        LLVMValueRef p = LLVMBuildGEP2(b, f, accp, &jm, 1, "");
        LLVMValueRef args[3] = {a, bv, LLVMBuildLoad2(b, f, p, "")};
        LLVMBuildStore(b, cg_call_intrinsic(cx, "llvm.fmuladd", true, args, 3), p);
    }
    cg_loop_end(cx, &jl);
    cg_loop_end(cx, &kl);
    LLVMValueRef sum = accp;
    if (sp) { /* tot = rank 0's sum, then tot + rank r's */
        j = cg_loop_begin(cx, &jl, cg_i64(cx, 0), nn, cg_i64(cx, 1), "jt");
        LLVMValueRef pa = LLVMBuildGEP2(b, f, accp, &j, 1, ""),
                     pt = LLVMBuildGEP2(b, f, totp, &j, 1, "");
        LLVMValueRef va = LLVMBuildLoad2(b, f, pa, "");
        LLVMValueRef vt = LLVMBuildFAdd(b, LLVMBuildLoad2(b, f, pt, ""), va, "");
        LLVMValueRef r0 = LLVMBuildICmp(b, LLVMIntEQ, rank, cg_i64(cx, 0), "");
        LLVMBuildStore(b, LLVMBuildSelect(b, r0, va, vt, ""), pt);
        cg_loop_end(cx, &jl);
        cg_loop_end(cx, &rl);
        sum = totp;
    }
    j = cg_loop_begin(cx, &jl, cg_i64(cx, 0), nn, cg_i64(cx, 1), "je");
    LLVMValueRef v[CG_MM_MAXH];
    for (unsigned m = 0; m < d->nmm; m++) {
        LLVMValueRef jm = LLVMBuildAdd(b, j, cg_i64(cx, (int64_t)m * BN), "");
        v[m] = LLVMBuildLoad2(b, f, LLVMBuildGEP2(b, f, sum, &jm, 1, ""), "");
    }
    if (!d->epi(d->user, cx, v, bidx, i, LLVMBuildAdd(b, n0, j, ""))) return false;
    cg_loop_end(cx, &jl);
    cg_loop_end(cx, &il);
    return true;
}

/* The split-K ranks the GPU's SIMT kernel takes for d: the schedule's, where the target has
 * clusters (sm_90, sm_90a), the region has one product and N is a compile-time constant (grid y
 * is N tiles x splits); else 1. */
static int sg_gpu_splits(cg_ctx *cx, const cg_mm_desc *d) {
    if (d->simt_splits <= 1 || d->nmm != 1 || (cx->target != CG_SM90 && cx->target != CG_SM90A))
        return 1;
    if (!LLVMIsAConstantInt(d->N) || d->simt_bn <= 0) return 1;
    int64_t ntn = (LLVMConstIntGetSExtValue(d->N) + d->simt_bn - 1) / d->simt_bn;
    return ntn * d->simt_splits <= 65535 ? d->simt_splits : 1;
}

bool cg_mm_emit_body(cg_ctx *cx, const cg_mm_desc *d, cg_mm_launch *l, const LLVMValueRef *pid,
                     LLVMValueRef zstep, char *err, size_t cap) {
    int wm = 1, wn = 1;
    bool tc = cx->gpu && (d->cdt == IR_F16 || d->cdt == IR_BF16);
    bool rows = !tc && pass_simt_is_gemv_rows(d->simt_bm, d->simt_bn);
    if (!cx->gpu) {
        l->bm = 16, l->bn = 256, l->bk = 0, l->threads = 1;
    } else if (tc) {
        mma_tile(cx, d, &l->bm, &l->bn, &l->bk, &wm, &wn);
        l->threads = (unsigned)(32 * wm * wn);
    } else if (rows) { /* [matmul.simt.gemv_rows]: codegen/gemv.c */
        l->bm = d->simt_bm, l->bn = d->simt_bn, l->bk = d->simt_bk;
        l->threads = 32 * PASS_SIMT_GEMV_WARPS;
    } else if (pass_simt_is_gemv(d->simt_bm)) { /* [matmul.simt.gemv]: codegen/gemv.c */
        l->bm = d->simt_bm, l->bn = PASS_SIMT_GEMV_BN, l->bk = d->simt_bk > 0 ? d->simt_bk : 8;
        l->threads = 32 * PASS_SIMT_GEMV_WARPS;
        l->splits = sg_gpu_splits(cx, d);
    } else { /* SIMT: the plan's matmul.simt tile (cg_mm_desc.simt_bm/bn), else 128 x 128 */
        int64_t bm = d->simt_bm > 0 ? d->simt_bm : 128, bn = d->simt_bn > 0 ? d->simt_bn : 128;
        cg_sg_geom g = cg_sg_geom_of(bm, bn, d->simt_bk > 0 ? d->simt_bk : 8, d->nmm);
        l->bm = g.bm, l->bn = g.bn, l->bk = g.bk, l->threads = g.threads;
        l->splits = sg_gpu_splits(cx, d);
    }
    if (l->splits < 1) l->splits = 1;
    l->tensor_cores = tc;
    LLVMBuilderRef b = cx->b;
    LLVMValueRef m0 = LLVMBuildMul(b, pid[0], cg_i64(cx, l->bm), "m0");
    LLVMValueRef ny = pid[1], rank = NULL; /* split-K: y = N tile x splits + rank */
    if (l->splits > 1) {
        rank = LLVMBuildTrunc(b, LLVMBuildURem(b, ny, cg_i64(cx, l->splits), ""), cx->i32, "rank");
        ny = LLVMBuildUDiv(b, ny, cg_i64(cx, l->splits), "");
    }
    LLVMValueRef n0 = LLVMBuildMul(b, ny, cg_i64(cx, l->bn), "n0");
    LLVMValueRef nbatch = cg_mm_batch_count(cx, d->nb, d->bdim);
    cg_loop bl;
    LLVMValueRef bz = cg_loop_begin(cx, &bl, pid[2], nbatch, zstep ? zstep : nbatch, "bz");
    LLVMValueRef bidx[IR_MAX_RANK];
    cg_mm_unflatten(cx, bz, d->nb, d->bdim, bidx);
    bool ok = !cx->gpu && rows                ? cg_gvr_host(cx, d, bidx, m0, n0, l->bm, l->bn)
              : !cx->gpu                      ? host_block(cx, d, bidx, m0, n0, l->bm, l->bn)
              : tc                            ? mma_block(cx, d, bidx, m0, n0, l, wm, wn)
              : rows                          ? cg_gvr_block(cx, d, bidx, m0, n0, l)
              : pass_simt_is_gemv(d->simt_bm) ? cg_gv_block(cx, d, bidx, m0, n0, rank, l)
                                              : sgemm_block(cx, d, bidx, m0, n0, rank, l);
    cg_loop_end(cx, &bl);
    if (!ok) snprintf(err, cap, "matmul: the epilogue failed");
    return ok;
}

/* ---- region glue ------------------------------------------------------------ */

/* Epilogue callback: the accumulator (rounded to the matmul's dtype)
 * substitutes the matmul node; every region output is computed at the same
 * index and stored. */
bool cg_mm_epi_store(void *user, cg_ctx *cx, const LLVMValueRef *acc, const LLVMValueRef *bidx,
                     LLVMValueRef row, LLVMValueRef col) {
    cg_mm_epi_state *st = user;
    const ir_node *mm0 = &cx->g->nodes[st->mm[0]];
    unsigned nb = mm0->shape.rank - 2;
    LLVMValueRef dims[IR_MAX_RANK];
    for (unsigned i = 0; i < nb; i++) dims[i] = bidx[i];
    dims[nb] = row;
    dims[nb + 1] = col;
    unsigned mark = cg_memo_mark(cx);
    cg_index idx = cg_index_from_dims(cx, &mm0->shape, dims);
    for (unsigned m = 0; m < st->nmm; m++) {
        const ir_node *mm = &cx->g->nodes[st->mm[m]];
        LLVMValueRef v;
        if (mm->dtype == IR_I32)
            v = LLVMBuildFPToSI(cx->b, acc[m], cx->i32, "");
        else if (mm->dtype == IR_BOOL)
            v = LLVMBuildFCmp(cx->b, LLVMRealUNE, acc[m], cg_f32c(cx, 0), "");
        else
            v = cg_round_f32(cx, acc[m], (ir_dtype)mm->dtype);
        cx->subst[st->mm[m]] = v;
    }
    bool ok = true;
    for (unsigned i = 0; i < st->nouts && ok; i++) {
        ir_id o = st->outs[i];
        LLVMValueRef ov = cg_emit_value(cx, o, &idx);
        if (!ov)
            ok = false;
        else
            cg_store(cx, cg_buf_ptr(cx, o), (ir_dtype)cx->g->nodes[o].dtype,
                     cg_home_lin(cx, o, &idx), ov);
    }
    for (unsigned m = 0; m < st->nmm; m++) cx->subst[st->mm[m]] = NULL;
    cg_memo_reset(cx, mark);
    return ok;
}

/* Finds the region's products into st->mm (the anchor first when it is
 * one). Several products must share their A operand, B shape and dtype and
 * output shape (a horizontal region). False (reported) otherwise. */
static bool find_matmuls(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st) {
    ir_id a = g->regions[region].anchor;
    st->nmm = 0;
    if (a < g->n && g->nodes[a].op == IR_OP_MATMUL) st->mm[st->nmm++] = a;
    for (ir_id i = 0; i < g->n; i++) {
        if (g->nodes[i].region != region || g->nodes[i].op != IR_OP_MATMUL || i == a) continue;
        if (st->nmm == CG_MM_MAXH) {
            tx_error(cx->diag, "codegen: matmul region k%u has more than %d products", region,
                     CG_MM_MAXH);
            return false;
        }
        st->mm[st->nmm++] = i;
    }
    if (st->nmm == 0 || g->nodes[st->mm[0]].shape.rank < 2) {
        tx_error(cx->diag, "codegen: matmul region k%u has no matrix product of rank >= 2", region);
        return false;
    }
    const ir_node *m0 = &g->nodes[st->mm[0]];
    for (unsigned m = 1; m < st->nmm; m++) {
        const ir_node *mm = &g->nodes[st->mm[m]];
        const ir_node *b0 = &g->nodes[ir_in(g, m0, 1)], *bm = &g->nodes[ir_in(g, mm, 1)];
        if (ir_in(g, mm, 0) != ir_in(g, m0, 0) || !ir_shape_eq(&mm->shape, &m0->shape) ||
            mm->dtype != m0->dtype || !ir_shape_eq(&bm->shape, &b0->shape) ||
            bm->dtype != b0->dtype) {
            tx_error(
                cx->diag,
                "codegen: the products %%%u and %%%u of matmul region k%u do not share their first "
                "operand, shapes and dtypes",
                st->mm[0], st->mm[m], region);
            return false;
        }
    }
    return true;
}

/* Collects the stores of the epilogue; false (reported) when a region
 * output is not one of the products or an in-region value computed from
 * them (one forward pass: ids are in topological order), of their shape. */
bool cg_mm_collect_outs(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st) {
    const ir_node *mm = &g->nodes[st->mm[0]];
    bool *dep = ir_xcalloc(g->n, sizeof *dep);
    for (unsigned m = 0; m < st->nmm; m++) dep[st->mm[m]] = true;
    bool ok = true;
    for (ir_id i = 0; i < g->n && ok; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->region != region) continue;
        for (unsigned k = 0; k < n->nin && !dep[i]; k++) dep[i] = dep[ir_in(g, n, k)];
        if (!cg_is_region_output(cx, i) || pass_attn_ostore(g, i) != IR_NONE)
            continue; /* [attention.store_transposed]: its product's stores write it */
        bool own = false;
        for (unsigned j = 0; j < st->nown; j++) own |= st->own[j] == i;
        if (own) continue;
        if (!dep[i] || !ir_shape_eq(&n->shape, &mm->shape) || st->nouts == 64) {
            tx_error(cx->diag,
                     "codegen: %s region k%u stores a value (%%%u) that is not an "
                     "elementwise epilogue of the product's shape",
                     ir_region_kind_name((ir_region_kind)g->regions[region].kind), region, i);
            ok = false;
        } else {
            st->outs[st->nouts++] = i;
        }
    }
    free(dep);
    return ok;
}

/* Fills the description of the products from the graph. */
static void mm_desc_fill(cg_ctx *cx, const ir_graph *g, unsigned region, const cg_mm_epi_state *st,
                         cg_mm_desc *d) {
    const ir_node *mm = &g->nodes[st->mm[0]];
    const ir_region *rg = &g->regions[region];
    memset(d, 0, sizeof *d);
    d->nb = mm->shape.rank - 2;
    for (unsigned i = 0; i < d->nb; i++) d->bdim[i] = cg_dim(cx, mm->shape.dim[i]);
    d->M = cg_dim(cx, mm->shape.dim[d->nb]);
    d->N = cg_dim(cx, mm->shape.dim[d->nb + 1]);
    ir_id ia = ir_in(g, mm, 0), ib = ir_in(g, mm, 1);
    const ir_node *an = &g->nodes[ia];
    d->K = cg_dim(cx, an->shape.dim[an->shape.rank - 1]);
    cg_mm_resolve_opnd(cx, region, ia, d->nb, &d->a);
    d->nmm = st->nmm;
    for (unsigned m = 0; m < st->nmm; m++)
        cg_mm_resolve_opnd(cx, region, ir_in(g, &g->nodes[st->mm[m]], 1), d->nb, &d->b[m]);
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    bool half = dt == IR_F16 || dt == IR_BF16, simt = rg->sched.id == PASS_SCH_MATMUL_SIMT;
    /* f32 FMAs on the SIMT schedule (a small-K f16/bf16 product too), else tensor cores on the
     * 16-bit operands (the product's own dtype or f32: the accumulator is rounded to it) */
    d->cdt = half && !simt && an->dtype == dt && g->nodes[ib].dtype == dt ? dt : IR_F32;
    d->bm = rg->tile[0], d->bn = rg->tile[1], d->bk = rg->tile[2];
    d->stages = rg->stages;
    d->simt_splits = 1;
    if (rg->sched.id == PASS_SCH_MATMUL_SIMT) {
        d->simt_bm = rg->sched.p[0], d->simt_bn = rg->sched.p[1], d->simt_bk = rg->sched.p[2];
        if (rg->sched.p[3] > 1 && rg->sched.p[3] <= PASS_SIMT_MAX_SPLITS)
            d->simt_splits = rg->sched.p[3];
        d->simt_kwarps =
            pass_simt_is_gemv(d->simt_bm) && !pass_simt_is_gemv_rows(d->simt_bm, d->simt_bn)
                ? PASS_SIMT_GEMV_WARPS
                : 1;
    }
}

bool cg_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region) {
    cg_mm_epi_state st = {.nmm = 0};
    if (!find_matmuls(cx, g, region, &st)) return false;
    if (g->regions[region].sched.id != PASS_SCH_MATMUL_SIMT) { /* the SIMT kernel's is below */
        int sk = cg_sk_emit_matmul(cx, g, region, &st);
        if (sk >= 0) return sk == 1;
        int wg = cg_wg_emit_matmul(cx, g, region, &st);
        cg_use_module(cx, CG_MOD_MAIN);
        if (wg >= 0) return wg == 1;
    }
    ir_id mmid = st.mm[0];
    if (!cg_kernel_begin(cx, region, NULL)) return false;
    if (!cg_mm_collect_outs(cx, g, region, &st)) return false;
    cg_mm_desc d;
    mm_desc_fill(cx, g, region, &st, &d);
    d.epi = cg_mm_epi_store;
    d.user = &st;
    cg_mm_launch l;
    memset(&l, 0, sizeof l);
    char err[256];
    LLVMValueRef pid[3] = {cg_program_id(cx, 0), cg_program_id(cx, 1), cg_program_id(cx, 2)};
    LLVMValueRef zstep = cg_program_count(cx, 2);
    if (!cg_mm_emit_body(cx, &d, &l, pid, zstep, err, sizeof err)) {
        tx_error(cx->diag, "codegen: %s", err);
        return false;
    }
    const ir_node *mm = &g->nodes[mmid];
    unsigned nb = mm->shape.rank - 2;
    ir_shape work[3] = {{.rank = 1, .dim = {mm->shape.dim[nb]}},
                        {.rank = 1, .dim = {mm->shape.dim[nb + 1]}},
                        {.rank = (uint8_t)nb}};
    for (unsigned i = 0; i < nb; i++) work[2].dim[i] = mm->shape.dim[i];
    int64_t per[3] = {l.bm, l.bn, 1};
    int64_t cap[3] = {INT32_MAX, cx->gpu ? 65535 : INT32_MAX, cx->gpu ? 65535 : INT32_MAX};
    unsigned block[3] = {l.threads, 1, 1};
    if (cx->gpu && !l.tensor_cores && pass_simt_is_gemv_rows(l.bm, l.bn)) {
        snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "simt gemv-rows %lldx%lldx%lld w%d",
                 (long long)l.bm, (long long)l.bn, (long long)l.bk, PASS_SIMT_GEMV_WARPS);
    } else if (cx->gpu && !l.tensor_cores && pass_simt_is_gemv(l.bm)) {
        snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "simt gemv %lldx%lldx%lld w%d", (long long)l.bm,
                 (long long)l.bn, (long long)l.bk, PASS_SIMT_GEMV_WARPS);
    } else if (cx->gpu && !l.tensor_cores) { /* the SIMT kernel: tile, outputs a thread, products */
        cg_sg_geom sg = cg_sg_geom_of(l.bm, l.bn, l.bk, d.nmm);
        snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "simt %lldx%lldx%lld t%dx%d%s", (long long)l.bm,
                 (long long)l.bn, (long long)l.bk, sg.tm, sg.tn, d.nmm > 1 ? " h" : "");
        if (d.nmm > 1)
            snprintf(cx->k->tmpl + strlen(cx->k->tmpl), sizeof cx->k->tmpl - strlen(cx->k->tmpl),
                     "%u", d.nmm);
    }
    if (cx->gpu && !l.tensor_cores && l.splits > 1) { /* grid y: N tiles x ranks, a cluster each */
        int64_t ntn = (LLVMConstIntGetSExtValue(d.N) + l.bn - 1) / l.bn;
        work[1] = (ir_shape){.rank = 1, .dim = {ntn * l.splits}};
        per[1] = 1;
        cx->k->cluster = (unsigned)l.splits;
        snprintf(cx->k->tmpl + strlen(cx->k->tmpl), sizeof cx->k->tmpl - strlen(cx->k->tmpl),
                 " sk%d", l.splits);
    }
    cg_kernel_end(cx, work, per, cap, block, (unsigned)l.dyn_smem);
    return true;
}
