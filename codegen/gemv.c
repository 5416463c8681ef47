/* gemv.c - the GEMV tiles of the SIMT schedule ([matmul.simt.gemv], passes/simt.c;
 * docs/codegen-matmul.md "GEMV tiles"): a product of at most 16 bound rows whose B (w[K, N]) has
 * its N axis contiguous streams w from HBM once, coalesced, with no shared-memory tiles.
 *
 * Block: PASS_SIMT_GEMV_WARPS warps over PASS_SIMT_GEMV_BN columns; lane l owns columns
 * n0 + 4 l .. n0 + 4 l + 3 (one 16-byte load of a row of w where the rows are 16-byte aligned,
 * else 4 coalesced scalar loads) and all M rows: M x 4 f32 accumulators. Warp w of cluster rank r
 * sums k chunk c = r x warps + w: the k steps [c nk / C, (c + 1) nk / C) of C = warps x splits
 * chunks (cg_sg_rank_steps), exact f32 FMAs in k order; the next step's bk rows of w are loaded
 * before a step's FMAs (gv_kloop). After the loop every warp writes its partial (M x bn f32) to
 * dynamic shared memory; after a barrier (a cluster barrier when the k chunks span a cluster of
 * splits blocks) each element's C partials are added in chunk order, 0 to C - 1 (distributed shared
 * memory across the cluster, rank r owning 1/splits of the elements), and the region's epilogue
 * runs on the sum. The host path sums the same chunks in the same order (host_block). */
#include "codegen/cg_impl.h"

#include <string.h>

typedef struct gv_kern {
    const cg_mm_desc *d;
    const LLVMValueRef *bidx;
    int64_t M, bm, bk;
    bool vec;            /* w rows read as 16-byte vectors */
    bool mask_k, mask_n; /* K not a multiple of bk; N not a multiple of bn */
    LLVMValueRef col;    /* i64: the lane's first column (clamped to 0 when past N) */
    LLVMValueRef in_n[4];
    LLVMValueRef acc[PASS_SIMT_GEMV_M][4];
} gv_kern;

static bool const_mult(LLVMValueRef v, int64_t q) {
    return v && LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) % q == 0;
}

/* True when B's rows load as aligned 16-byte vectors: a plain f32 buffer, N contiguous, N, the
 * row stride and every batch stride multiples of 4 elements (the buffer base is 16-byte
 * aligned; a lane's first column is a multiple of 4). */
static bool gv_vec_ok(const cg_mm_desc *d) {
    const cg_mm_opnd *o = &d->b[0];
    if (o->load || o->ldt != IR_F32 || !o->unit_c || !const_mult(o->sr, 4) || !const_mult(d->N, 4))
        return false;
    for (unsigned i = 0; i < d->nb; i++)
        if (!const_mult(o->sb[i], 4)) return false;
    return true;
}

/* Loads the lane's 4 values of row k of B (zero where k or a column is outside). */
static void gv_load_w(cg_ctx *cx, gv_kern *g, LLVMValueRef k, LLVMValueRef ink, LLVMValueRef *w) {
    LLVMBuilderRef b = cx->b;
    const cg_mm_opnd *o = &g->d->b[0];
    if (g->vec) {
        LLVMValueRef off = cg_mm_offset(cx, o, g->d->nb, g->bidx, k, g->col);
        LLVMTypeRef v4 = LLVMVectorType(cx->f32, 4);
        LLVMValueRef l = LLVMBuildLoad2(b, v4, LLVMBuildGEP2(b, cx->f32, o->ptr, &off, 1, ""), "");
        LLVMSetAlignment(l, 16);
        for (int j = 0; j < 4; j++) {
            w[j] = LLVMBuildExtractElement(b, l, cg_i32(cx, j), "");
            for (unsigned c = 0; c < o->ncast; c++) w[j] = cg_round_f32(cx, w[j], o->casts[c]);
        }
    } else {
        for (int j = 0; j < 4; j++) {
            LLVMValueRef c = LLVMBuildAdd(b, g->col, cg_i64(cx, j), "");
            if (g->mask_n) c = LLVMBuildSelect(b, g->in_n[j], c, cg_i64(cx, 0), "");
            w[j] = cg_mm_opnd_load(cx, o, g->d->nb, g->bidx, k, c);
        }
    }
    for (int j = 0; j < 4; j++) {
        LLVMValueRef in = g->vec || !g->mask_n ? NULL : g->in_n[j];
        if (ink) in = in ? LLVMBuildAnd(b, in, ink, "") : ink;
        if (in) w[j] = LLVMBuildSelect(b, in, w[j], cg_f32c(cx, 0), "");
    }
}

/* The k indices of step s (i64): k[u] = s bk + u, clamped to 0 past K where ink[u] is false
 * (ink[u] NULL when K is a multiple of bk). */
static void gv_kidx(cg_ctx *cx, const gv_kern *g, LLVMValueRef s, LLVMValueRef *k,
                    LLVMValueRef *ink) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef kb = LLVMBuildMul(b, s, cg_i64(cx, g->bk), "");
    for (int64_t u = 0; u < g->bk; u++) {
        k[u] = LLVMBuildAdd(b, kb, cg_i64(cx, u), "");
        ink[u] = NULL;
        if (g->mask_k) {
            ink[u] = LLVMBuildICmp(b, LLVMIntSLT, k[u], g->d->K, "");
            k[u] = LLVMBuildSelect(b, ink[u], k[u], cg_i64(cx, 0), "");
        }
    }
}

/* Loads step s's bk rows of w into the variables wv (what the FMAs of step s read). */
static void gv_fetch(cg_ctx *cx, gv_kern *g, LLVMValueRef s, LLVMValueRef (*wv)[4]) {
    LLVMValueRef k[32], ink[32], w[4];
    gv_kidx(cx, g, s, k, ink);
    for (int64_t u = 0; u < g->bk; u++) {
        gv_load_w(cx, g, k[u], ink[u], w);
        for (int j = 0; j < 4; j++) LLVMBuildStore(cx->b, w[j], wv[u][j]);
    }
}

/* Step s's FMAs from its rows of w (w[u][j]) and x's values, in k order. */
static void gv_fmas(cg_ctx *cx, gv_kern *g, LLVMValueRef s, LLVMValueRef (*w)[4]) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef k[32], ink[32];
    gv_kidx(cx, g, s, k, ink);
    for (int64_t u = 0; u < g->bk; u++)
        for (int64_t i = 0; i < g->M; i++) {
            LLVMValueRef x = cg_mm_opnd_load(cx, &g->d->a, g->d->nb, g->bidx, cg_i64(cx, i), k[u]);
            if (ink[u]) x = LLVMBuildSelect(b, ink[u], x, cg_f32c(cx, 0), "");
            for (int j = 0; j < 4; j++) {
                LLVMValueRef args[3] = {x, w[u][j], LLVMBuildLoad2(b, cx->f32, g->acc[i][j], "")};
                LLVMBuildStore(b, cg_call_intrinsic(cx, "llvm.fma", true, args, 3), g->acc[i][j]);
            }
        }
}

/* The chunk's steps [lo, hi), software-pipelined in registers: step s + 1's rows of w are
 * loaded before step s's FMAs, so a warp keeps a whole step's loads in flight while it computes
 * (the values cross the loop's back edge: the assembler cannot sink them to their use). lo is
 * below nk (every chunk starts inside K), so the first fetch is in bounds. */
static void gv_kloop(cg_ctx *cx, gv_kern *g, LLVMValueRef lo, LLVMValueRef hi) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef wv[32][4], cur[32][4];
    for (int64_t u = 0; u < g->bk; u++)
        for (int j = 0; j < 4; j++) wv[u][j] = cg_var(cx, cg_f32c(cx, 0));
    gv_fetch(cx, g, lo, wv);
    cg_loop kl;
    LLVMValueRef s = cg_loop_begin(cx, &kl, lo, hi, cg_i64(cx, 1), "gvk");
    for (int64_t u = 0; u < g->bk; u++)
        for (int j = 0; j < 4; j++) cur[u][j] = LLVMBuildLoad2(b, cx->f32, wv[u][j], "");
    LLVMValueRef nx = LLVMBuildAdd(b, s, cg_i64(cx, 1), "");
    LLVMBasicBlockRef c = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, nx, hi, ""));
    gv_fetch(cx, g, nx, wv);
    cg_if_end(cx, c);
    gv_fmas(cx, g, s, cur);
    cg_loop_end(cx, &kl);
}

/* The combine and the epilogue: element e (i32, < M x bn) of the block's tile summed over the
 * C = warps x splits chunk partials in chunk order (partial c in warp c % warps's slot of
 * cluster rank c / warps), then the region's epilogue at (m0 + e / bn, n0 + e % bn). */
static bool gv_combine(cg_ctx *cx, gv_kern *g, LLVMValueRef part, int splits, LLVMValueRef e,
                       LLVMValueRef m0, LLVMValueRef n0) {
    LLVMBuilderRef b = cx->b;
    const int64_t BN = PASS_SIMT_GEMV_BN, W = PASS_SIMT_GEMV_WARPS;
    LLVMValueRef row = LLVMBuildAdd(
        b, m0, LLVMBuildZExt(b, LLVMBuildUDiv(b, e, cg_i32(cx, BN), ""), cx->i64, ""), "");
    LLVMValueRef col = LLVMBuildAdd(
        b, n0, LLVMBuildZExt(b, LLVMBuildURem(b, e, cg_i32(cx, BN), ""), cx->i64, ""), "");
    LLVMBasicBlockRef c1 = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, col, g->d->N, ""));
    LLVMValueRef v = NULL;
    for (int64_t c = 0; c < W * splits; c++) {
        LLVMValueRef ix = LLVMBuildAdd(b, e, cg_i32(cx, (c % W) * g->bm * BN), "");
        LLVMValueRef p = LLVMBuildGEP2(b, cx->f32, part, &ix, 1, "");
        LLVMValueRef pv = splits > 1 ? cg_cluster_load(cx, cx->f32, p, cg_i32(cx, c / W))
                                     : LLVMBuildLoad2(b, cx->f32, p, "");
        v = v ? LLVMBuildFAdd(b, v, pv, "") : pv;
    }
    bool ok = g->d->epi(g->d->user, cx, &v, g->bidx, row, col);
    cg_if_end(cx, c1);
    return ok;
}

/* Every warp's partial to its slot of `part`, the barrier, the combine of the block's share of
 * the tile's elements (all M x bn of them, or 1/splits of them per cluster rank), and a second
 * (cluster) barrier that keeps the partials alive until every thread (rank) has read them. */
static bool gv_finish(cg_ctx *cx, gv_kern *g, LLVMValueRef lane, LLVMValueRef warp,
                      LLVMValueRef rank, int splits, LLVMValueRef m0, LLVMValueRef n0) {
    LLVMBuilderRef b = cx->b;
    const int64_t BN = PASS_SIMT_GEMV_BN;
    LLVMValueRef part = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
    LLVMValueRef base = LLVMBuildAdd(b, LLVMBuildMul(b, warp, cg_i32(cx, g->bm * BN), ""),
                                     LLVMBuildMul(b, lane, cg_i32(cx, 4), ""), "");
    for (int64_t i = 0; i < g->M; i++)
        for (int j = 0; j < 4; j++) {
            LLVMValueRef ix = LLVMBuildAdd(b, base, cg_i32(cx, i * BN + j), "");
            LLVMValueRef p = LLVMBuildGEP2(b, cx->f32, part, &ix, 1, "");
            LLVMSetAlignment(LLVMBuildStore(b, LLVMBuildLoad2(b, cx->f32, g->acc[i][j], ""), p), 4);
        }
    if (splits > 1)
        cg_cluster_sync(cx);
    else
        cg_barrier(cx);
    int64_t per = g->M * BN / splits, threads = 32 * PASS_SIMT_GEMV_WARPS;
    LLVMValueRef tid = cg_thread_id(cx);
    cg_loop el;
    LLVMValueRef it = LLVMBuildTrunc(b,
                                     cg_loop_begin(cx, &el, cg_i64(cx, 0),
                                                   cg_i64(cx, (per + threads - 1) / threads),
                                                   cg_i64(cx, 1), "gvel"),
                                     cx->i32, "");
    LLVMValueRef x = LLVMBuildAdd(b, LLVMBuildMul(b, it, cg_i32(cx, threads), ""), tid, "");
    LLVMBasicBlockRef c1 = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, x, cg_i32(cx, per), ""));
    LLVMValueRef e = x;
    if (splits > 1) e = LLVMBuildAdd(b, LLVMBuildMul(b, rank, cg_i32(cx, per), ""), x, "");
    bool ok = gv_combine(cx, g, part, splits, e, m0, n0);
    cg_if_end(cx, c1);
    cg_loop_end(cx, &el);
    if (splits > 1) /* the partials stay alive (and unwritten: a next batch element) until all */
        cg_cluster_sync(cx); /* have read them */
    else
        cg_barrier(cx);
    return ok;
}

bool cg_gv_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                 LLVMValueRef n0, LLVMValueRef rank, cg_mm_launch *l) {
    LLVMBuilderRef b = cx->b;
    gv_kern g;
    memset(&g, 0, sizeof g);
    g.d = d, g.bidx = bidx, g.bm = l->bm, g.bk = l->bk;
    g.M = LLVMIsAConstantInt(d->M) ? LLVMConstIntGetSExtValue(d->M) : 0;
    if (g.M < 1 || g.M > g.bm || g.bk < 1 || g.bk > 32 || d->nmm != 1) return false;
    g.vec = gv_vec_ok(d);
    g.mask_k = !const_mult(d->K, g.bk);
    g.mask_n = !const_mult(d->N, PASS_SIMT_GEMV_BN);
    int splits = l->splits, W = PASS_SIMT_GEMV_WARPS;
    l->dyn_smem = pass_simt_part_bytes(g.bm, PASS_SIMT_GEMV_BN, splits);
    l->smem_bytes = l->dyn_smem;
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMValueRef lane = LLVMBuildURem(b, tid, cg_i32(cx, 32), "lane");
    LLVMValueRef warp = LLVMBuildUDiv(b, tid, cg_i32(cx, 32), "warp");
    LLVMValueRef col = LLVMBuildAdd(
        b, n0, LLVMBuildZExt(b, LLVMBuildMul(b, lane, cg_i32(cx, 4), ""), cx->i64, ""), "");
    for (int j = 0; j < 4; j++)
        g.in_n[j] = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildAdd(b, col, cg_i64(cx, j), ""), d->N, "");
    /* a vector lane is wholly in or out (N and its first column multiples of 4) */
    g.col = g.vec && g.mask_n ? LLVMBuildSelect(b, g.in_n[0], col, cg_i64(cx, 0), "") : col;
    for (int64_t i = 0; i < g.M; i++)
        for (int j = 0; j < 4; j++) g.acc[i][j] = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef chunk = warp;
    if (splits > 1) chunk = LLVMBuildAdd(b, LLVMBuildMul(b, rank, cg_i32(cx, W), ""), warp, "");
    LLVMValueRef nk =
        LLVMBuildUDiv(b, LLVMBuildAdd(b, d->K, cg_i64(cx, g.bk - 1), ""), cg_i64(cx, g.bk), "nk");
    LLVMValueRef lo, steps;
    cg_sg_rank_steps(cx, nk, chunk, W * splits, &lo, &steps);
    gv_kloop(cx, &g, lo, LLVMBuildAdd(b, lo, steps, ""));
    return gv_finish(cx, &g, lane, warp, rank, splits, m0, n0);
}

/* ---- [matmul.simt.gemv_rows]: B = w^T, w [N, K] K-contiguous ------------------------------- */

/* The rows form's kernel (docs/codegen-matmul.md "GEMV tiles"): warp w of the block owns rows
 * n0 + w R .. n0 + w R + R - 1 of w (R = bn / 8, clamped to row 0 past N); lane l reads the
 * 8-element pieces c = l, l + 32, ... of K (a step: U pieces a row, 256 U elements a warp) of
 * each of its rows of w and of every row of x, as one 16-byte load where the operand is a plain
 * 16-bit buffer whose K stride is 1 and other strides multiples of 8 (else 8 scalar loads), and
 * sums acc[i][r] += x[i][k] w[r][k] in k order with exact f32 FMAs; pieces past K add zero.
 * A warp butterfly (xor 16, 8, 4, 2, 1) leaves every lane the same sums (cg_gvr_host adds the
 * lanes' partials in that tree's order), lane p runs the epilogue of pair p = i R + r. */
typedef struct gvr_kern {
    const cg_mm_desc *d;
    const LLVMValueRef *bidx;
    int64_t M, R, U;
    bool wvec, xvec;            /* w's / x's pieces as 16-byte loads */
    LLVMTypeRef raw;            /* a fetched piece of w: <8 x i16> (wvec) or <8 x float> */
    LLVMValueRef lane, nrow[4]; /* i32 lane; i64 rows of w (clamped) */
    LLVMValueRef acc[PASS_SIMT_GEMV_M][4];
} gvr_kern;

/* True when operand o of d reads 8 consecutive k as one aligned 16-byte load: a plain f16/bf16
 * buffer, K stride 1 (kdim: 0 for A's columns, 1 for B's rows), the other strides and K
 * multiples of 8 elements (the buffer base is 16-byte aligned). */
static bool gvr_vec_ok(const cg_mm_desc *d, const cg_mm_opnd *o, bool b_side) {
    if (o->load || (o->ldt != IR_F16 && o->ldt != IR_BF16) || !const_mult(d->K, 8)) return false;
    if (b_side ? !o->unit_r || !const_mult(o->sc, 8) : !o->unit_c || !const_mult(o->sr, 8))
        return false;
    for (unsigned i = 0; i < d->nb; i++)
        if (!const_mult(o->sb[i], 8)) return false;
    return true;
}

/* The 8 f32 values of a piece: a 16-byte <8 x i16> widened (the operand's casts applied), or
 * the scalar path's <8 x float> as it is. */
static LLVMValueRef gvr_widen(cg_ctx *cx, const cg_mm_opnd *o, LLVMValueRef v, bool vec) {
    if (!vec) return v;
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef ht =
        o->ldt == IR_BF16 ? LLVMBFloatTypeInContext(cx->llctx) : LLVMHalfTypeInContext(cx->llctx);
    LLVMValueRef h = LLVMBuildBitCast(b, v, LLVMVectorType(ht, 8), "");
    LLVMValueRef f = LLVMBuildFPExt(b, h, LLVMVectorType(cx->f32, 8), "");
    if (!o->ncast) return f;
    for (int j = 0; j < 8; j++) {
        LLVMValueRef e = LLVMBuildExtractElement(b, f, cg_i32(cx, j), "");
        for (unsigned c = 0; c < o->ncast; c++) e = cg_round_f32(cx, e, o->casts[c]);
        f = LLVMBuildInsertElement(b, f, e, cg_i32(cx, j), "");
    }
    return f;
}

/* Operand element block (row r, k .. k + 7) of A (b_side false: A[r, k]) or B (B[k, r]): the
 * raw 16-byte vector where vec (k in bounds: the caller clamps), else <8 x float> of scalar
 * loads, zero past K. */
static LLVMValueRef gvr_piece(cg_ctx *cx, const gvr_kern *g, const cg_mm_opnd *o, bool b_side,
                              bool vec, LLVMValueRef r, LLVMValueRef k) {
    LLVMBuilderRef b = cx->b;
    if (vec) {
        LLVMValueRef off = b_side ? cg_mm_offset(cx, o, g->d->nb, g->bidx, k, r)
                                  : cg_mm_offset(cx, o, g->d->nb, g->bidx, r, k);
        LLVMTypeRef v8 = LLVMVectorType(cx->i16, 8);
        LLVMValueRef l = LLVMBuildLoad2(b, v8, LLVMBuildGEP2(b, cx->i16, o->ptr, &off, 1, ""), "");
        LLVMSetAlignment(l, 16);
        return l;
    }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(cx->f32, 8));
    for (int j = 0; j < 8; j++) {
        LLVMValueRef kj = LLVMBuildAdd(b, k, cg_i64(cx, j), "");
        LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, kj, g->d->K, "");
        LLVMValueRef kc = LLVMBuildSelect(b, in, kj, cg_i64(cx, 0), "");
        LLVMValueRef e = b_side ? cg_mm_opnd_load(cx, o, g->d->nb, g->bidx, kc, r)
                                : cg_mm_opnd_load(cx, o, g->d->nb, g->bidx, r, kc);
        e = LLVMBuildSelect(b, in, e, cg_f32c(cx, 0), "");
        v = LLVMBuildInsertElement(b, v, e, cg_i32(cx, j), "");
    }
    return v;
}

/* The lane's first k of piece u of step s (i64) and whether it starts inside K. */
static LLVMValueRef gvr_k(cg_ctx *cx, const gvr_kern *g, LLVMValueRef s, int64_t u,
                          LLVMValueRef *in) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef c =
        LLVMBuildAdd(b, LLVMBuildMul(b, s, cg_i64(cx, 32 * g->U), ""), cg_i64(cx, 32 * u), "");
    c = LLVMBuildAdd(b, c, LLVMBuildZExt(b, g->lane, cx->i64, ""), "");
    LLVMValueRef k = LLVMBuildMul(b, c, cg_i64(cx, 8), "");
    *in = LLVMBuildICmp(b, LLVMIntSLT, k, g->d->K, "");
    return k;
}

/* Loads step s's R x U pieces of w into wv (the loads only: their use is the next step's). */
static void gvr_fetch(cg_ctx *cx, gvr_kern *g, LLVMValueRef s, LLVMValueRef (*wv)[4]) {
    for (int64_t u = 0; u < g->U; u++) {
        LLVMValueRef in, k = gvr_k(cx, g, s, u, &in);
        if (g->wvec) k = LLVMBuildSelect(cx->b, in, k, cg_i64(cx, 0), "");
        for (int64_t r = 0; r < g->R; r++)
            LLVMBuildStore(cx->b, gvr_piece(cx, g, &g->d->b[0], true, g->wvec, g->nrow[r], k),
                           wv[u][r]);
    }
}

/* Step s's FMAs: for each piece u, each row i of x (loaded here, through L1), each row r of w
 * (cur), the 8 k in order; pieces past K contribute zero products. */
static void gvr_fmas(cg_ctx *cx, gvr_kern *g, LLVMValueRef s, LLVMValueRef (*cur)[4]) {
    LLVMBuilderRef b = cx->b;
    const cg_mm_desc *d = g->d;
    LLVMValueRef zero = LLVMConstNull(LLVMVectorType(cx->f32, 8));
    for (int64_t u = 0; u < g->U; u++) {
        LLVMValueRef in, k = gvr_k(cx, g, s, u, &in), w[4];
        LLVMValueRef kc = g->xvec ? LLVMBuildSelect(b, in, k, cg_i64(cx, 0), "") : k;
        for (int64_t r = 0; r < g->R; r++) {
            w[r] = gvr_widen(cx, &d->b[0], cur[u][r], g->wvec);
            if (g->wvec) w[r] = LLVMBuildSelect(b, in, w[r], zero, "");
        }
        for (int64_t i = 0; i < g->M; i++) {
            LLVMValueRef xv = gvr_piece(cx, g, &d->a, false, g->xvec, cg_i64(cx, i), kc);
            xv = gvr_widen(cx, &d->a, xv, g->xvec);
            if (g->xvec) xv = LLVMBuildSelect(b, in, xv, zero, "");
            for (int64_t r = 0; r < g->R; r++)
                for (int j = 0; j < 8; j++) {
                    LLVMValueRef args[3] = {LLVMBuildExtractElement(b, xv, cg_i32(cx, j), ""),
                                            LLVMBuildExtractElement(b, w[r], cg_i32(cx, j), ""),
                                            LLVMBuildLoad2(b, cx->f32, g->acc[i][r], "")};
                    LLVMBuildStore(b, cg_call_intrinsic(cx, "llvm.fma", true, args, 3),
                                   g->acc[i][r]);
                }
        }
    }
}

/* The k loop over the warp's nk steps, software-pipelined in registers as gv_kloop where w's
 * pieces are 16-byte loads: step s + 1's pieces of w are loaded before step s's FMAs (the
 * scalar path loads step s's own: its values are converted as they are loaded). */
static void gvr_kloop(cg_ctx *cx, gvr_kern *g, LLVMValueRef nk) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef wv[4][4], cur[4][4];
    for (int64_t u = 0; u < g->U; u++)
        for (int64_t r = 0; r < g->R; r++) wv[u][r] = cg_var(cx, LLVMConstNull(g->raw));
    if (g->wvec) gvr_fetch(cx, g, cg_i64(cx, 0), wv);
    cg_loop kl;
    LLVMValueRef s = cg_loop_begin(cx, &kl, cg_i64(cx, 0), nk, cg_i64(cx, 1), "gvrk");
    if (!g->wvec) gvr_fetch(cx, g, s, wv);
    for (int64_t u = 0; u < g->U; u++)
        for (int64_t r = 0; r < g->R; r++) cur[u][r] = LLVMBuildLoad2(b, g->raw, wv[u][r], "");
    if (g->wvec) {
        LLVMValueRef nx = LLVMBuildAdd(b, s, cg_i64(cx, 1), "");
        LLVMBasicBlockRef c = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, nx, nk, ""));
        gvr_fetch(cx, g, nx, wv);
        cg_if_end(cx, c);
    }
    gvr_fmas(cx, g, s, cur);
    cg_loop_end(cx, &kl);
}

/* The butterfly of every accumulator, then lane p < M x R runs the epilogue of (m0 + p / R,
 * row p % R of the warp) where that row is inside N. */
static bool gvr_finish(cg_ctx *cx, gvr_kern *g, LLVMValueRef m0, LLVMValueRef wrow0) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef sum[PASS_SIMT_GEMV_M][4];
    for (int64_t i = 0; i < g->M; i++)
        for (int64_t r = 0; r < g->R; r++) {
            LLVMValueRef v = LLVMBuildLoad2(b, cx->f32, g->acc[i][r], "");
            for (unsigned h = 16; h >= 1; h /= 2)
                v = LLVMBuildFAdd(b, v, cg_shfl_xor(cx, v, h), "");
            sum[i][r] = v;
        }
    int64_t pairs = g->M * g->R; /* <= PASS_SIMT_ROWS_ACC = 32 lanes */
    LLVMValueRef p = g->lane, v = sum[0][0];
    for (int64_t q = 1; q < pairs; q++)
        v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, p, cg_i32(cx, q), ""),
                            sum[q / g->R][q % g->R], v, "");
    LLVMValueRef row = LLVMBuildAdd(
        b, m0, LLVMBuildZExt(b, LLVMBuildUDiv(b, p, cg_i32(cx, g->R), ""), cx->i64, ""), "");
    LLVMValueRef col = LLVMBuildAdd(
        b, wrow0, LLVMBuildZExt(b, LLVMBuildURem(b, p, cg_i32(cx, g->R), ""), cx->i64, ""), "");
    LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntULT, p, cg_i32(cx, pairs), ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, col, g->d->N, ""), "");
    LLVMBasicBlockRef c = cg_if_begin(cx, ok);
    bool r = g->d->epi(g->d->user, cx, &v, g->bidx, row, col);
    cg_if_end(cx, c);
    return r;
}

bool cg_gvr_block(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                  LLVMValueRef n0, cg_mm_launch *l) {
    LLVMBuilderRef b = cx->b;
    gvr_kern g;
    memset(&g, 0, sizeof g);
    g.d = d, g.bidx = bidx;
    g.M = LLVMIsAConstantInt(d->M) ? LLVMConstIntGetSExtValue(d->M) : 0;
    g.R = l->bn / PASS_SIMT_GEMV_WARPS, g.U = l->bk / 8;
    if (g.M < 1 || g.M > l->bm || d->nmm != 1 || g.R < 1 || g.R > 4 || g.U < 1 || g.U > 4 ||
        g.M * g.R > PASS_SIMT_ROWS_ACC || g.R * PASS_SIMT_GEMV_WARPS != l->bn || 8 * g.U != l->bk)
        return false;
    g.wvec = gvr_vec_ok(d, &d->b[0], true);
    g.xvec = gvr_vec_ok(d, &d->a, false);
    g.raw = LLVMVectorType(g.wvec ? cx->i16 : cx->f32, 8);
    l->dyn_smem = 0, l->smem_bytes = 0;
    LLVMValueRef tid = cg_thread_id(cx);
    g.lane = LLVMBuildURem(b, tid, cg_i32(cx, 32), "lane");
    LLVMValueRef warp = LLVMBuildUDiv(b, tid, cg_i32(cx, 32), "warp");
    LLVMValueRef wrow0 = LLVMBuildAdd(
        b, n0, LLVMBuildZExt(b, LLVMBuildMul(b, warp, cg_i32(cx, g.R), ""), cx->i64, ""), "");
    for (int64_t r = 0; r < g.R; r++) {
        LLVMValueRef n = LLVMBuildAdd(b, wrow0, cg_i64(cx, r), "");
        g.nrow[r] =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, n, d->N, ""), n, cg_i64(cx, 0), "");
    }
    for (int64_t i = 0; i < g.M; i++)
        for (int64_t r = 0; r < g.R; r++) g.acc[i][r] = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef nk = LLVMBuildUDiv(b, LLVMBuildAdd(b, d->K, cg_i64(cx, 256 * g.U - 1), ""),
                                    cg_i64(cx, 256 * g.U), "nk");
    gvr_kloop(cx, &g, nk);
    return gvr_finish(cx, &g, m0, wrow0);
}

/* One output's host sum: lane l's partial over the pieces l, l + 32, ... (k in order, exact f32
 * FMAs), then the butterfly's tree over the 32 partials (p[l] += p[l + h], h = 16 .. 1). */
static LLVMValueRef gvr_host_sum(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx,
                                 LLVMValueRef i, LLVMValueRef n, LLVMValueRef part) {
    LLVMBuilderRef b = cx->b;
    cg_loop ll, cl, jl;
    LLVMValueRef lane = cg_loop_begin(cx, &ll, cg_i64(cx, 0), cg_i64(cx, 32), cg_i64(cx, 1), "hl");
    LLVMValueRef acc = cg_var(cx, cg_f32c(cx, 0));
    LLVMValueRef np = LLVMBuildUDiv(b, LLVMBuildAdd(b, d->K, cg_i64(cx, 7), ""), cg_i64(cx, 8), "");
    LLVMValueRef c = cg_loop_begin(cx, &cl, lane, np, cg_i64(cx, 32), "hc");
    LLVMValueRef k0 = LLVMBuildMul(b, c, cg_i64(cx, 8), "");
    LLVMValueRef kend = LLVMBuildAdd(b, k0, cg_i64(cx, 8), "");
    kend = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, kend, d->K, ""), kend, d->K, "");
    LLVMValueRef k = cg_loop_begin(cx, &jl, k0, kend, cg_i64(cx, 1), "hk");
    LLVMValueRef args[3] = {cg_mm_opnd_load(cx, &d->a, d->nb, bidx, i, k),
                            cg_mm_opnd_load(cx, &d->b[0], d->nb, bidx, k, n),
                            LLVMBuildLoad2(b, cx->f32, acc, "")};
    LLVMBuildStore(b, cg_call_intrinsic(cx, "llvm.fma", true, args, 3), acc);
    cg_loop_end(cx, &jl);
    cg_loop_end(cx, &cl);
    LLVMBuildStore(b, LLVMBuildLoad2(b, cx->f32, acc, ""),
                   LLVMBuildGEP2(b, cx->f32, part, &lane, 1, ""));
    cg_loop_end(cx, &ll);
    for (int64_t h = 16; h >= 1; h /= 2)
        for (int64_t q = 0; q < h; q++) {
            LLVMValueRef iq = cg_i64(cx, q), ih = cg_i64(cx, q + h);
            LLVMValueRef pq = LLVMBuildGEP2(b, cx->f32, part, &iq, 1, "");
            LLVMValueRef ph = LLVMBuildGEP2(b, cx->f32, part, &ih, 1, "");
            LLVMBuildStore(b,
                           LLVMBuildFAdd(b, LLVMBuildLoad2(b, cx->f32, pq, ""),
                                         LLVMBuildLoad2(b, cx->f32, ph, ""), ""),
                           pq);
        }
    LLVMValueRef i0 = cg_i64(cx, 0);
    return LLVMBuildLoad2(b, cx->f32, LLVMBuildGEP2(b, cx->f32, part, &i0, 1, ""), "");
}

bool cg_gvr_host(cg_ctx *cx, const cg_mm_desc *d, const LLVMValueRef *bidx, LLVMValueRef m0,
                 LLVMValueRef n0, int64_t BM, int64_t BN) {
    LLVMBuilderRef b = cx->b;
    if (d->nmm != 1) return false;
    LLVMValueRef part = cg_var(cx, LLVMConstNull(LLVMArrayType2(cx->f32, 32)));
    LLVMValueRef mend = LLVMBuildAdd(b, m0, cg_i64(cx, BM), "");
    mend = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, mend, d->M, ""), mend, d->M, "");
    LLVMValueRef nend = LLVMBuildAdd(b, n0, cg_i64(cx, BN), "");
    nend = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, nend, d->N, ""), nend, d->N, "");
    cg_loop il, nl;
    LLVMValueRef i = cg_loop_begin(cx, &il, m0, mend, cg_i64(cx, 1), "hi");
    LLVMValueRef n = cg_loop_begin(cx, &nl, n0, nend, cg_i64(cx, 1), "hn");
    LLVMValueRef v = gvr_host_sum(cx, d, bidx, i, n, part);
    bool ok = d->epi(d->user, cx, &v, bidx, i, n);
    cg_loop_end(cx, &nl);
    cg_loop_end(cx, &il);
    return ok;
}
