/* skinny.c - the skinny GEMM of odd-pitch operands (schedule matmul.skinny, passes/skinny.c;
 * docs/codegen-matmul.md "Skinny products of odd pitch"): a product of at most 64 rows whose
 * operands are plain 2-D buffers of any row pitch (2-byte aligned rows: K or N odd) reads them
 * in place, so a decode step's weight streams from HBM once instead of being copied first to a
 * TMA-readable scratch ([matmul.wgmma.stage]).
 *
 * CTA (256 threads, 8 warps): an mp x bn output tile (mp = M rounded up to 16) over the k steps
 * [lo, hi) of its split-K rank. Operand tiles of 64 k land in a ring of shared-memory stages by
 * 16-byte cp.async: tile row r (a row of the base buffer) is copied as the aligned 16-byte chunks
 * covering its elements, so a row whose first element is not 16-byte aligned (any 2-byte
 * aligned pitch) lands (r x pitch) mod 8 elements into its shared row (tile origins are
 * multiples of 8 rows and columns); element (r, c) of a tile is at r x (cols + 8) + c +
 * (r pitch mod 8). Chunks past the rank's k range, M, N or the buffer copy their valid prefix,
 * the rest zero-filled (cp.async's src-size), so the main loop has no masks. Warp w owns columns
 * [w bn/8, (w+1) bn/8) of the tile, every row: m16n8k16 mma.sync fragments built from 16-bit
 * shared loads. After the loop every thread writes its accumulators to a partial tile in shared
 * memory (f32 [product][mp][bn], over the ring); the ranks of a cluster meet at a cluster
 * barrier and rank r sums slice r of the tile over every rank (distributed shared memory) and
 * runs the region's epilogue there (cg_mm_epi_store), one thread per element; a second cluster
 * barrier keeps every CTA's shared memory alive until all have read it. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <string.h>

typedef struct sk_opnd {
    LLVMValueRef ptr;               /* the base buffer (addrspace 1) */
    bool kmajor;                    /* K is the base's contiguous axis */
    int64_t d1;                     /* the base's inner extent (its row pitch in elements) */
    int64_t rows, cols, pitch, off; /* tile rows x cols at pitch cols + 8, byte offset in a stage */
} sk_opnd;

typedef struct sk_kern {
    pass_sk_tile t;
    ir_dtype dt;
    unsigned nmm;
    int64_t M, N, K;
    sk_opnd a, b[CG_MM_MAXH];
    LLVMValueRef smem;             /* dynamic shared memory (i8, addrspace 3) */
    LLVMValueRef tid, g, t4, wcol; /* i32: thread, lane / 4, lane % 4, the warp's first column */
    LLVMValueRef n0, khi;          /* i64: the tile's first column, the rank's k limit */
    LLVMValueRef acc[CG_MM_MAXH][4][4][4];
} sk_kern;

static LLVMValueRef i32c(cg_ctx *cx, int64_t v) { return cg_i32(cx, v); }

int cg_sk_chunk(int64_t d1, int64_t r0, int64_t c0, int64_t rlim, int64_t cend, int64_t pitch,
                int64_t r, int64_t j, int64_t *q, int64_t *dst) {
    int64_t gr = r0 + r, rs = gr * d1, el = rs + cend;
    *q = ((rs + c0) >> 3) + j;
    *dst = r * pitch * 2 + 16 * j;
    if (gr >= rlim) return 0;
    int64_t v = el - 8 * *q; /* valid elements from the chunk's first */
    return v <= 0 ? 0 : v >= 8 ? 16 : (int)(2 * v);
}

int64_t cg_sk_elem(int64_t d1, int64_t pitch, int64_t r, int64_t c) {
    return r * pitch + c + ((r * d1) & 7);
}

/* Issues the cp.async chunks of operand o's tile for k step start k0 (i64) and other-axis start
 * o0 (i64: 0 for A, n0 for B; its extent olim) into stage memory dst (i8, addrspace 3): chunk j
 * of tile row r as cg_sk_chunk computes it (16 bytes, or the valid prefix and zeros). */
static void sk_issue(cg_ctx *cx, const sk_kern *k, const sk_opnd *o, LLVMValueRef dst,
                     LLVMValueRef k0, LLVMValueRef o0, int64_t olim) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef r0 = o->kmajor ? o0 : k0, c0 = o->kmajor ? k0 : o0;
    LLVMValueRef rlim = o->kmajor ? cg_i64(cx, olim) : k->khi;
    LLVMValueRef clim = o->kmajor ? k->khi : cg_i64(cx, olim);
    LLVMValueRef ce = LLVMBuildAdd(b, c0, cg_i64(cx, o->cols), "");
    ce = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, ce, clim, ""), ce, clim, "cend");
    int64_t cpr = o->cols / 8 + 1, total = o->rows * cpr;
    cg_loop l; /* a loop, not unrolled: the chunks' address arithmetic stays out of registers */
    LLVMValueRef it = LLVMBuildTrunc(
        b,
        cg_loop_begin(cx, &l, cg_i64(cx, 0), cg_i64(cx, (total + 255) / 256), cg_i64(cx, 1), "w"),
        cx->i32, "");
    LLVMValueRef idx = LLVMBuildAdd(b, k->tid, LLVMBuildMul(b, it, i32c(cx, 256), ""), "");
    LLVMBasicBlockRef cont = NULL;
    if (total % 256) cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, idx, i32c(cx, total), ""));
    LLVMValueRef r = LLVMBuildUDiv(b, idx, i32c(cx, cpr), "");
    LLVMValueRef j = LLVMBuildURem(b, idx, i32c(cx, cpr), "");
    LLVMValueRef gr = LLVMBuildAdd(b, r0, LLVMBuildZExt(b, r, cx->i64, ""), "");
    LLVMValueRef rs = LLVMBuildMul(b, gr, cg_i64(cx, o->d1), "");
    LLVMValueRef q =
        LLVMBuildAdd(b, LLVMBuildLShr(b, LLVMBuildAdd(b, rs, c0, ""), cg_i64(cx, 3), ""),
                     LLVMBuildZExt(b, j, cx->i64, ""), "q");
    /* valid elements from the chunk's first: (rs + cend) - 8 q, clamped to [0, 8] */
    LLVMValueRef v =
        LLVMBuildSub(b, LLVMBuildAdd(b, rs, ce, ""), LLVMBuildShl(b, q, cg_i64(cx, 3), ""), "");
    v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, cg_i64(cx, 0), ""), cg_i64(cx, 0), v,
                        "");
    v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, cg_i64(cx, 8), ""), cg_i64(cx, 8), v,
                        "");
    LLVMValueRef nb = LLVMBuildTrunc(b, LLVMBuildShl(b, v, cg_i64(cx, 1), ""), cx->i32, "");
    nb = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, gr, rlim, ""), nb, i32c(cx, 0), "nbytes");
    LLVMValueRef so = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntNE, nb, i32c(cx, 0), ""),
                                      LLVMBuildShl(b, q, cg_i64(cx, 4), ""), cg_i64(cx, 0), "");
    LLVMValueRef dof = LLVMBuildAdd(b, LLVMBuildMul(b, r, i32c(cx, o->pitch * 2), ""),
                                    LLVMBuildShl(b, j, i32c(cx, 4), ""), "");
    LLVMValueRef args[3] = {LLVMBuildGEP2(b, cx->i8, dst, &dof, 1, ""),
                            LLVMBuildGEP2(b, cx->i8, o->ptr, &so, 1, ""), nb};
    cg_call_intrinsic(cx, "llvm.nvvm.cp.async.cg.shared.global.16.s", false, args, 3);
    if (cont) cg_if_end(cx, cont);
    cg_loop_end(cx, &l);
}

/* Issues every operand tile of k step `step` (i32, absolute) into stage s (i32). */
static void sk_issue_step(cg_ctx *cx, const sk_kern *k, LLVMValueRef step, LLVMValueRef s) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef k0 = LLVMBuildMul(b, LLVMBuildZExt(b, step, cx->i64, ""), cg_i64(cx, 64), "k0");
    LLVMValueRef off = LLVMBuildMul(b, s, i32c(cx, k->t.stage_bytes), "");
    LLVMValueRef st = LLVMBuildGEP2(b, cx->i8, k->smem, &off, 1, "");
    LLVMValueRef ao = i32c(cx, k->a.off);
    sk_issue(cx, k, &k->a, LLVMBuildGEP2(b, cx->i8, st, &ao, 1, ""), k0, cg_i64(cx, 0), k->M);
    for (unsigned h = 0; h < k->nmm; h++) {
        LLVMValueRef bo = i32c(cx, k->b[h].off);
        sk_issue(cx, k, &k->b[h], LLVMBuildGEP2(b, cx->i8, st, &bo, 1, ""), k0, k->n0, k->N);
    }
}

/* Tile element (r, c) (i32) of operand o in stage memory st: its 16 bits (at cg_sk_elem). */
static LLVMValueRef sk_elem(cg_ctx *cx, const sk_opnd *o, LLVMValueRef st, LLVMValueRef r,
                            LLVMValueRef c) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef idx = LLVMBuildAdd(b, LLVMBuildMul(b, r, i32c(cx, o->pitch), ""), c, "");
    if (o->d1 & 7) /* the row's first element sits (r d1) mod 8 elements into its chunk */
        idx = LLVMBuildAdd(
            b, idx, LLVMBuildAnd(b, LLVMBuildMul(b, r, i32c(cx, o->d1 & 7), ""), i32c(cx, 7), ""),
            "");
    LLVMValueRef base = LLVMBuildGEP2(b, cx->i8, st, (LLVMValueRef[]){i32c(cx, o->off)}, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(b, cx->i16, LLVMBuildGEP2(b, cx->i16, base, &idx, 1, ""), "");
    LLVMSetAlignment(v, 2);
    return v;
}

/* The i32 of two 16-bit elements, lo first. */
static LLVMValueRef sk_pack(cg_ctx *cx, LLVMValueRef lo, LLVMValueRef hi) {
    LLVMBuilderRef b = cx->b;
    return LLVMBuildOr(b, LLVMBuildZExt(b, lo, cx->i32, ""),
                       LLVMBuildShl(b, LLVMBuildZExt(b, hi, cx->i32, ""), i32c(cx, 16), ""), "");
}

/* A pair of operand elements along k: (m or n = x, k = kk and kk + 1) of operand o, a == true
 * for A (rows m) else B (rows n of the product's columns). */
static LLVMValueRef sk_pair(cg_ctx *cx, const sk_opnd *o, LLVMValueRef st, LLVMValueRef x,
                            LLVMValueRef kk) {
    LLVMValueRef k1 = LLVMBuildAdd(cx->b, kk, i32c(cx, 1), "");
    if (o->kmajor) return sk_pack(cx, sk_elem(cx, o, st, x, kk), sk_elem(cx, o, st, x, k1));
    return sk_pack(cx, sk_elem(cx, o, st, kk, x), sk_elem(cx, o, st, k1, x));
}

/* The 64 k of stage memory st into the accumulators. */
static void sk_compute(cg_ctx *cx, sk_kern *k, LLVMValueRef st) {
    LLVMBuilderRef b = cx->b;
    int mt = k->t.mp / 16, nt = k->t.bn / 64;
    LLVMValueRef t2 = LLVMBuildShl(b, k->t4, i32c(cx, 1), "");
    for (int kk = 0; kk < 64; kk += 16) {
        LLVMValueRef ka = LLVMBuildAdd(b, t2, i32c(cx, kk), ""),
                     kb = LLVMBuildAdd(b, ka, i32c(cx, 8), "");
        LLVMValueRef af[4][4];
        for (int i = 0; i < mt; i++) {
            LLVMValueRef m0 = LLVMBuildAdd(b, k->g, i32c(cx, 16 * i), "");
            LLVMValueRef m8 = LLVMBuildAdd(b, m0, i32c(cx, 8), "");
            af[i][0] = sk_pair(cx, &k->a, st, m0, ka);
            af[i][1] = sk_pair(cx, &k->a, st, m8, ka);
            af[i][2] = sk_pair(cx, &k->a, st, m0, kb);
            af[i][3] = sk_pair(cx, &k->a, st, m8, kb);
        }
        for (unsigned h = 0; h < k->nmm; h++)
            for (int j = 0; j < nt; j++) {
                LLVMValueRef n =
                    LLVMBuildAdd(b, LLVMBuildAdd(b, k->wcol, i32c(cx, 8 * j), ""), k->g, "");
                LLVMValueRef bf[2] = {sk_pair(cx, &k->b[h], st, n, ka),
                                      sk_pair(cx, &k->b[h], st, n, kb)};
                for (int i = 0; i < mt; i++) {
                    LLVMValueRef c[4], d[4];
                    for (int q = 0; q < 4; q++)
                        c[q] = LLVMBuildLoad2(b, cx->f32, k->acc[h][i][j][q], "");
                    cg_mma_m16n8k16(cx, k->dt, af[i], bf, c, d);
                    for (int q = 0; q < 4; q++) LLVMBuildStore(b, d[q], k->acc[h][i][j][q]);
                }
            }
    }
}

/* The main loop over the rank's k steps [lo, lo + steps) (i32): the ring of t.stages. */
static void sk_kloop(cg_ctx *cx, sk_kern *k, LLVMValueRef lo, LLVMValueRef steps) {
    LLVMBuilderRef b = cx->b;
    int ns = k->t.stages;
    for (int s = 0; s + 1 < ns; s++) {
        LLVMBasicBlockRef c = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, i32c(cx, s), steps, ""));
        sk_issue_step(cx, k, LLVMBuildAdd(b, lo, i32c(cx, s), ""), i32c(cx, s));
        cg_if_end(cx, c);
        cg_cp_async_commit(cx);
    }
    cg_loop l;
    LLVMValueRef kt =
        LLVMBuildTrunc(b,
                       cg_loop_begin(cx, &l, cg_i64(cx, 0), LLVMBuildZExt(b, steps, cx->i64, ""),
                                     cg_i64(cx, 1), "kt"),
                       cx->i32, "");
    cg_cp_async_wait(cx, ns - 2);
    cg_barrier(cx);
    LLVMValueRef nx = LLVMBuildAdd(b, kt, i32c(cx, ns - 1), "");
    LLVMBasicBlockRef c = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, nx, steps, ""));
    sk_issue_step(cx, k, LLVMBuildAdd(b, lo, nx, ""), LLVMBuildURem(b, nx, i32c(cx, ns), ""));
    cg_if_end(cx, c);
    cg_cp_async_commit(cx);
    LLVMValueRef off =
        LLVMBuildMul(b, LLVMBuildURem(b, kt, i32c(cx, ns), ""), i32c(cx, k->t.stage_bytes), "");
    sk_compute(cx, k, LLVMBuildGEP2(b, cx->i8, k->smem, &off, 1, ""));
    cg_loop_end(cx, &l);
    cg_cp_async_wait(cx, 0);
    cg_barrier(cx);
}

/* Shared address (f32, addrspace 3) of element e (i32) of product h's partial tile. */
static LLVMValueRef sk_part(cg_ctx *cx, const sk_kern *k, unsigned h, LLVMValueRef e) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef i = LLVMBuildAdd(b, e, i32c(cx, (int64_t)h * k->t.mp * k->t.bn), "");
    return LLVMBuildGEP2(b, cx->f32, k->smem, &i, 1, "");
}

/* The partial tiles, the cluster's sum and the epilogue of this rank's slice. */
static bool sk_finish(cg_ctx *cx, sk_kern *k, LLVMValueRef rank, cg_mm_epi_state *st) {
    LLVMBuilderRef b = cx->b;
    int mt = k->t.mp / 16, nt = k->t.bn / 64, S = k->t.splits;
    LLVMValueRef t2 = LLVMBuildShl(b, k->t4, i32c(cx, 1), "");
    for (unsigned h = 0; h < k->nmm; h++)
        for (int i = 0; i < mt; i++)
            for (int j = 0; j < nt; j++)
                for (int q = 0; q < 4; q++) { /* c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, ...) */
                    LLVMValueRef row = LLVMBuildAdd(b, k->g, i32c(cx, 16 * i + 8 * (q >> 1)), "");
                    LLVMValueRef col = LLVMBuildAdd(b, LLVMBuildAdd(b, k->wcol, t2, ""),
                                                    i32c(cx, 8 * j + (q & 1)), "");
                    LLVMValueRef e =
                        LLVMBuildAdd(b, LLVMBuildMul(b, row, i32c(cx, k->t.bn), ""), col, "");
                    LLVMBuildStore(b, LLVMBuildLoad2(b, cx->f32, k->acc[h][i][j][q], ""),
                                   sk_part(cx, k, h, e));
                }
    if (S > 1)
        cg_cluster_sync(cx);
    else
        cg_barrier(cx);
    int64_t per = (int64_t)k->t.mp * k->t.bn / S;
    cg_loop l;
    LLVMValueRef it = LLVMBuildTrunc(
        b, cg_loop_begin(cx, &l, cg_i64(cx, 0), cg_i64(cx, (per + 255) / 256), cg_i64(cx, 1), "ep"),
        cx->i32, "");
    LLVMValueRef el = LLVMBuildAdd(b, LLVMBuildMul(b, it, i32c(cx, 256), ""), k->tid, "");
    LLVMBasicBlockRef c1 = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, el, i32c(cx, per), ""));
    LLVMValueRef e = LLVMBuildAdd(b, LLVMBuildMul(b, rank, i32c(cx, per), ""), el, "");
    LLVMValueRef row = LLVMBuildZExt(b, LLVMBuildUDiv(b, e, i32c(cx, k->t.bn), ""), cx->i64, "");
    LLVMValueRef col = LLVMBuildAdd(
        b, k->n0, LLVMBuildZExt(b, LLVMBuildURem(b, e, i32c(cx, k->t.bn), ""), cx->i64, ""), "");
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, row, cg_i64(cx, k->M), ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, col, cg_i64(cx, k->N), ""), "");
    LLVMBasicBlockRef c2 = cg_if_begin(cx, in);
    LLVMValueRef acc[CG_MM_MAXH];
    for (unsigned h = 0; h < k->nmm; h++) {
        LLVMValueRef p = sk_part(cx, k, h, e);
        acc[h] = S > 1 ? cg_cluster_load(cx, cx->f32, p, i32c(cx, 0))
                       : LLVMBuildLoad2(b, cx->f32, p, "");
        for (int q = 1; q < S; q++)
            acc[h] = LLVMBuildFAdd(b, acc[h], cg_cluster_load(cx, cx->f32, p, i32c(cx, q)), "");
    }
    bool ok = cg_mm_epi_store(st, cx, acc, NULL, row, col);
    cg_if_end(cx, c2);
    cg_if_end(cx, c1);
    cg_loop_end(cx, &l);
    if (S > 1) cg_cluster_sync(cx);
    return ok;
}

/* Operand o of base buffer `base` (pass_wg_opnd), the other axis `other` rows/cols of a tile. */
static void sk_opnd_init(cg_ctx *cx, sk_opnd *o, ir_id base, bool kmajor, int64_t other,
                         int64_t off) {
    int64_t pitch, first; /* a column slice: its buffer, from its first column, at its pitch */
    ir_id buf = pass_wg_opnd_buf(cx->g, base, &pitch, &first);
    LLVMValueRef p = cg_buf_ptr(cx, buf);
    LLVMTypeRef gp = LLVMPointerTypeInContext(cx->llctx, 1);
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != 1)
        p = LLVMBuildAddrSpaceCast(cx->b, p, gp, "");
    if (buf != base) {
        LLVMValueRef at = cg_i64(cx, first * (int64_t)ir_dtype_size(cx->g->nodes[buf].dtype));
        p = LLVMBuildGEP2(cx->b, cx->i8, p, &at, 1, "");
    }
    o->ptr = p;
    o->kmajor = kmajor;
    o->d1 = buf != base ? pitch : cx->g->nodes[base].shape.dim[1];
    pass_sk_opnd_tile(kmajor, other, &o->rows, &o->cols);
    o->pitch = o->cols + 8;
    o->off = off;
}

int cg_sk_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st) {
    const ir_schedule *sc = &g->regions[region].sched;
    if (!cx->gpu || (cx->target != CG_SM90A && cx->target != CG_SM90) ||
        sc->id != PASS_SCH_MATMUL_SKINNY || st->nmm < 1 || st->nmm > CG_MM_MAXH)
        return -1;
    const ir_node *mm = &g->nodes[st->mm[0]];
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    if (mm->shape.rank != 2 || (dt != IR_BF16 && dt != IR_F16)) return -1;
    ir_id ia = ir_in(g, mm, 0), ba, bb[CG_MM_MAXH];
    bool ak, bk = false;
    if (!pass_wg_opnd(g, region, ia, dt, true, &ba, &ak)) return -1;
    for (unsigned h = 0; h < st->nmm; h++) {
        const ir_node *mh = &g->nodes[st->mm[h]];
        bool bkh;
        if (mh->dtype != mm->dtype || pass_mm_tc_dtype(g, mh) != dt ||
            !ir_shape_eq(&mh->shape, &mm->shape) || ir_in(g, mh, 0) != ia ||
            !pass_wg_opnd(g, region, ir_in(g, mh, 1), dt, false, &bb[h], &bkh) ||
            (h > 0 && bkh != bk))
            return -1;
        bk = bkh;
    }
    ir_dim Md = mm->shape.dim[0], Nd = mm->shape.dim[1], Kd = g->nodes[ia].shape.dim[1];
    if (IR_DIM_IS_SYM(Md) || IR_DIM_IS_SYM(Nd) || IR_DIM_IS_SYM(Kd)) return -1;
    sk_kern k;
    memset(&k, 0, sizeof k);
    /* the schedule's tile, checked again against the shape (the stages are the planner's) */
    pass_wg_shape s = {.M = Md,
                       .N = Nd,
                       .K = Kd,
                       .a_kmajor = ak,
                       .b_kmajor = bk,
                       .nmm = (int)st->nmm,
                       .nouts = 1,
                       .smem = cg_mm_smem_limit(cx->target),
                       .sms = CG_WG_SMS};
    int es = (int)ir_dtype_size(dt);
    for (unsigned i = 0; i <= st->nmm; i++) { /* the operands the wgmma form would stage */
        int64_t inner = g->nodes[i == 0 ? ba : bb[i - 1]].shape.dim[1];
        s.nstage += pass_wg_pitch(inner, es) != inner;
    }
    if (!pass_sk_tile_make(&s, sc->p[0], sc->p[1], &k.t)) return -1;
    k.dt = dt, k.nmm = st->nmm, k.M = Md, k.N = Nd, k.K = Kd;
    if (!cg_kernel_begin(cx, region, NULL)) return 0;
    if (!cg_mm_collect_outs(cx, g, region, st)) return 0;
    LLVMBuilderRef b = cx->b;
    sk_opnd_init(cx, &k.a, ba, ak, k.t.mp, 0);
    for (unsigned h = 0; h < k.nmm; h++)
        sk_opnd_init(cx, &k.b[h], bb[h], bk, k.t.bn, k.t.a_bytes + (int64_t)h * k.t.b_bytes);
    k.smem = cg_dyn_shared(cx, "tx_mm_dyn_smem", cx->i8);
    k.tid = cg_thread_id(cx);
    LLVMValueRef lane = LLVMBuildAnd(b, k.tid, i32c(cx, 31), "");
    k.g = LLVMBuildLShr(b, lane, i32c(cx, 2), "g");
    k.t4 = LLVMBuildAnd(b, lane, i32c(cx, 3), "t4");
    k.wcol = LLVMBuildMul(b, LLVMBuildLShr(b, k.tid, i32c(cx, 5), ""), i32c(cx, k.t.bn / 8), "");
    LLVMValueRef rank = LLVMBuildTrunc(b, cg_program_id(cx, 1), cx->i32, "rank");
    k.n0 = LLVMBuildMul(b, cg_program_id(cx, 2), cg_i64(cx, k.t.bn), "n0");
    /* rank r takes k steps [r nk / S, (r + 1) nk / S) */
    int S = k.t.splits;
    LLVMValueRef lo =
        LLVMBuildUDiv(b, LLVMBuildMul(b, rank, i32c(cx, k.t.nk), ""), i32c(cx, S), "");
    LLVMValueRef hi = LLVMBuildUDiv(
        b, LLVMBuildMul(b, LLVMBuildAdd(b, rank, i32c(cx, 1), ""), i32c(cx, k.t.nk), ""),
        i32c(cx, S), "");
    LLVMValueRef kh = LLVMBuildMul(b, LLVMBuildZExt(b, hi, cx->i64, ""), cg_i64(cx, 64), "");
    k.khi = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, kh, cg_i64(cx, k.K), ""), kh,
                            cg_i64(cx, k.K), "khi");
    for (unsigned h = 0; h < k.nmm; h++)
        for (int i = 0; i < k.t.mp / 16; i++)
            for (int j = 0; j < k.t.bn / 64; j++)
                for (int q = 0; q < 4; q++) k.acc[h][i][j][q] = cg_var(cx, cg_f32c(cx, 0));
    sk_kloop(cx, &k, lo, LLVMBuildSub(b, hi, lo, "steps"));
    if (!sk_finish(cx, &k, rank, st)) return 0;
    cg_kernel *kr = cx->k;
    ir_shape work[3] = {
        {.rank = 1, .dim = {Md}}, {.rank = 1, .dim = {S}}, {.rank = 1, .dim = {Nd}}};
    int64_t per[3] = {k.t.mp, 1, k.t.bn};
    int64_t cap[3] = {1, S, 65535};
    if (S > 1) kr->cluster = (unsigned)S;
    kr->persist = 0;
    snprintf(kr->tmpl, sizeof kr->tmpl, "mma-skinny %dx%dx64 s%d sk%d %s%s%s", k.t.mp, k.t.bn,
             k.t.stages, S, ak ? "K" : "M", bk ? "K" : "N", k.nmm > 1 ? " h" : "");
    if (k.nmm > 1)
        snprintf(kr->tmpl + strlen(kr->tmpl), sizeof kr->tmpl - strlen(kr->tmpl), "%u", k.nmm);
    unsigned block[3] = {256, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, (unsigned)k.t.smem_bytes);
    return 1;
}
