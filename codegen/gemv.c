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
