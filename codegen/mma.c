/* mma.c - the tensor-core and async-copy building blocks of the matrix-product and attention
 * emitters, on the one codegen context (cg_ctx): the m16n8k16 mma.sync and ldmatrix
 * instructions, cp.async groups, operand addressing and global-to-shared tile copies. Every
 * helper emits at cx->b and works for both targets unless its contract says GPU only; the
 * generic pieces (loops, ifs, barriers, shuffles, shared arrays, loads, conversions, exp) are
 * the cg_ctx helpers of target.c, value.c and math.c. */
#include "codegen/cg_impl.h"

#include <string.h>

/* True when v is the integer constant k. */
static bool is_const_int(LLVMValueRef v, int64_t k) {
    return v && LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == k;
}

void cg_mma_m16n8k16(cg_ctx *cx, ir_dtype dt, LLVMValueRef *a, LLVMValueRef *bb, LLVMValueRef *c,
                     LLVMValueRef *d) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef ot = dt == IR_BF16 ? cx->i32 : LLVMVectorType(LLVMHalfTypeInContext(cx->llctx), 2);
    LLVMValueRef args[10];
    for (int i = 0; i < 6; i++) {
        LLVMValueRef v = i < 4 ? a[i] : bb[i - 4];
        args[i] = dt == IR_BF16 ? v : LLVMBuildBitCast(b, v, ot, "");
    }
    for (int i = 0; i < 4; i++) args[6 + i] = c[i];
    const char *name = dt == IR_BF16 ? "llvm.nvvm.mma.m16n8k16.row.col.bf16"
                                     : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
    LLVMValueRef r = cg_call_intrinsic(cx, name, false, args, 10);
    for (unsigned i = 0; i < 4; i++) d[i] = LLVMBuildExtractValue(b, r, i, "");
}

/* acc + x*s, skipping a constant-zero stride and folding a unit one. */
static LLVMValueRef add_scaled(cg_ctx *cx, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef s) {
    if (is_const_int(s, 0)) return acc;
    LLVMValueRef t = is_const_int(s, 1) ? x : LLVMBuildMul(cx->b, x, s, "");
    return acc ? LLVMBuildAdd(cx->b, acc, t, "") : t;
}

LLVMValueRef cg_mm_offset(cg_ctx *cx, const cg_mm_opnd *o, unsigned nb, const LLVMValueRef *bidx,
                          LLVMValueRef r, LLVMValueRef c) {
    LLVMValueRef acc = NULL;
    for (unsigned i = 0; i < nb; i++) acc = add_scaled(cx, acc, bidx[i], o->sb[i]);
    acc = add_scaled(cx, acc, r, o->sr);
    acc = add_scaled(cx, acc, c, o->sc);
    return acc ? acc : cg_i64(cx, 0);
}

LLVMValueRef cg_mm_opnd_load(cg_ctx *cx, const cg_mm_opnd *o, unsigned nb, const LLVMValueRef *bidx,
                             LLVMValueRef r, LLVMValueRef c) {
    if (o->load) return o->load(o->user, cx, o, bidx, r, c);
    LLVMValueRef v = cg_load_f32(cx, o->ptr, o->ldt, cg_mm_offset(cx, o, nb, bidx, r, c));
    for (unsigned i = 0; i < o->ncast; i++) v = cg_round_f32(cx, v, o->casts[i]);
    return v;
}

void cg_mm_unflatten(cg_ctx *cx, LLVMValueRef flat, unsigned nb, const LLVMValueRef *bdim,
                     LLVMValueRef *bidx) {
    for (unsigned i = nb; i-- > 0;) {
        if (i == 0) {
            bidx[i] = flat;
            break;
        }
        bidx[i] = LLVMBuildURem(cx->b, flat, bdim[i], "");
        flat = LLVMBuildUDiv(cx->b, flat, bdim[i], "");
    }
}

LLVMValueRef cg_mm_batch_count(cg_ctx *cx, unsigned nb, const LLVMValueRef *bdim) {
    LLVMValueRef n = cg_i64(cx, 1);
    for (unsigned i = 0; i < nb; i++) n = LLVMBuildMul(cx->b, n, bdim[i], "");
    return n;
}

/* Loads operand element (gr, gc) of a tile as f32 (or raw 16-bit bits when
 * `raw`), zero outside [0, rlim) x [0, clim); indices are clamped so the
 * load itself is always in bounds. */
static LLVMValueRef tile_elem(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef gr, LLVMValueRef gc,
                              bool raw) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, gr, t->rlim, ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, gc, t->clim, ""), "");
    LLVMValueRef z = cg_i64(cx, 0);
    LLVMValueRef cr = LLVMBuildSelect(b, in, gr, z, ""), cc = LLVMBuildSelect(b, in, gc, z, "");
    if (raw) {
        LLVMValueRef off = cg_mm_offset(cx, t->o, t->nb, t->bidx, cr, cc);
        LLVMValueRef p = LLVMBuildGEP2(b, cx->i16, t->o->ptr, &off, 1, "");
        LLVMValueRef v = LLVMBuildLoad2(b, cx->i16, p, "");
        LLVMSetAlignment(v, 2);
        return LLVMBuildSelect(b, in, v, LLVMConstInt(cx->i16, 0, 0), "");
    }
    LLVMValueRef v = cg_mm_opnd_load(cx, t->o, t->nb, t->bidx, cr, cc);
    return LLVMBuildSelect(b, in, v, cg_f32c(cx, 0), "");
}

/* True when v is a constant multiple of 8 (0 included). */
static bool const_mult8(LLVMValueRef v) {
    return v && LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) % 8 == 0;
}

/* True when v is provably a multiple of 8: a constant one, or a product with such a factor, a
 * shift left by 3 or more, a sum or difference of such values (a symbolic stride of a dense
 * buffer whose inner extents hold a factor of 8, e.g. L x 128). depth bounds the walk. */
static bool mult8(LLVMValueRef v, unsigned depth) {
    if (!v || depth > 8) return false;
    if (LLVMIsAConstantInt(v)) return const_mult8(v);
    if (!LLVMIsAInstruction(v)) return false;
    switch (LLVMGetInstructionOpcode(v)) {
        case LLVMMul:
            return mult8(LLVMGetOperand(v, 0), depth + 1) || mult8(LLVMGetOperand(v, 1), depth + 1);
        case LLVMShl: {
            LLVMValueRef k = LLVMGetOperand(v, 1);
            return (LLVMIsAConstantInt(k) && LLVMConstIntGetZExtValue(k) >= 3) ||
                   mult8(LLVMGetOperand(v, 0), depth + 1);
        }
        case LLVMAdd:
        case LLVMSub:
            return mult8(LLVMGetOperand(v, 0), depth + 1) && mult8(LLVMGetOperand(v, 1), depth + 1);
        default: return false;
    }
}

/* True when a tile can be copied in 16-byte vectors: raw 16-bit copy,
 * unit stride along the walked (fast) direction with a constant extent that
 * is a multiple of 8 (vectors are wholly in or out), every other stride a
 * provable multiple of 8 (mult8; 16-byte aligned vectors: buffers are
 * 16-byte aligned), and a tile extent along it that is a multiple of 8. */
static bool tile_vec_ok(const cg_mm_tile *t, bool rfast, bool raw) {
    const cg_mm_opnd *o = t->o;
    if (!raw || (rfast ? !o->unit_r : !o->unit_c)) return false;
    if (!const_mult8(rfast ? t->rlim : t->clim) || (rfast ? t->rows : t->cols) % 8 != 0)
        return false;
    if (!mult8(rfast ? o->sc : o->sr, 0)) return false;
    for (unsigned i = 0; i < t->nb; i++)
        if (!mult8(o->sb[i], 0)) return false;
    return true;
}

/* Element coordinates of the 8-wide vector `idx` of tile t (fast axis
 * rows when rfast): its row r and column c within the tile, whether it lies
 * inside the operand (`in`), and its element offset in the operand (clamped
 * to element 0 when outside, so the access stays in bounds). */
static void tile_vec_at(cg_ctx *cx, const cg_mm_tile *t, bool rfast, LLVMValueRef idx, int64_t fv,
                        LLVMValueRef *r, LLVMValueRef *c, LLVMValueRef *in, LLVMValueRef *off) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef fi = LLVMBuildMul(b, LLVMBuildURem(b, idx, cg_i32(cx, fv), ""), cg_i32(cx, 8), "");
    LLVMValueRef si = LLVMBuildUDiv(b, idx, cg_i32(cx, fv), "");
    *r = rfast ? fi : si;
    *c = rfast ? si : fi;
    LLVMValueRef gr = LLVMBuildAdd(b, t->r0, LLVMBuildZExt(b, *r, cx->i64, ""), "");
    LLVMValueRef gc = LLVMBuildAdd(b, t->c0, LLVMBuildZExt(b, *c, cx->i64, ""), "");
    *in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, gr, t->rlim, ""),
                       LLVMBuildICmp(b, LLVMIntSLT, gc, t->clim, ""), "");
    LLVMValueRef z = cg_i64(cx, 0);
    *off = cg_mm_offset(cx, t->o, t->nb, t->bidx, LLVMBuildSelect(b, *in, gr, z, ""),
                        LLVMBuildSelect(b, *in, gc, z, ""));
}

/* The vector form of cg_mm_tile_load (see tile_vec_ok): one <8 x i16> load
 * per thread and step, stored as one 16-byte vector when the shared layout
 * is contiguous along the same direction, else as 8 scalars. */
static void tile_load_vec(cg_ctx *cx, const cg_mm_tile *t, bool rfast, LLVMValueRef tid,
                          unsigned nthreads) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef i16 = cx->i16, v8 = LLVMVectorType(i16, 8);
    int64_t fast = rfast ? t->rows : t->cols, nvec = t->rows * t->cols / 8, fv = fast / 8;
    int64_t ps_fast = rfast ? t->ps_r : t->ps_c, ps_slow = rfast ? t->ps_c : t->ps_r;
    bool vstore = ps_fast == 1 && (ps_slow * 2) % 16 == 0;
    for (int64_t i = 0; i * nthreads < nvec; i++) {
        LLVMValueRef idx = LLVMBuildAdd(b, tid, cg_i32(cx, i * nthreads), "");
        LLVMBasicBlockRef cont = NULL;
        if ((i + 1) * nthreads > nvec)
            cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, idx, cg_i32(cx, nvec), ""));
        LLVMValueRef r, c, in, off;
        tile_vec_at(cx, t, rfast, idx, fv, &r, &c, &in, &off);
        LLVMValueRef v = LLVMBuildLoad2(b, v8, LLVMBuildGEP2(b, i16, t->o->ptr, &off, 1, ""), "");
        LLVMSetAlignment(v, 16);
        v = LLVMBuildSelect(b, in, v, LLVMConstNull(v8), "");
        LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, t->ps_r), ""),
                                       LLVMBuildMul(b, c, cg_i32(cx, t->ps_c), ""), "");
        if (vstore) {
            LLVMValueRef s = LLVMBuildStore(b, v, LLVMBuildGEP2(b, i16, t->smem, &so, 1, ""));
            LLVMSetAlignment(s, 16);
        } else {
            for (int k = 0; k < 8; k++) {
                LLVMValueRef sk = LLVMBuildAdd(b, so, cg_i32(cx, k * ps_fast), "");
                LLVMValueRef s = LLVMBuildStore(b, LLVMBuildExtractElement(b, v, cg_i32(cx, k), ""),
                                                LLVMBuildGEP2(b, i16, t->smem, &sk, 1, ""));
                LLVMSetAlignment(s, 2);
            }
        }
        if (cont) cg_if_end(cx, cont);
    }
}

void cg_mm_tile_load(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads) {
    LLVMBuilderRef b = cx->b;
    if (cx->gpu) {
        bool rf = t->o->unit_r && !t->o->unit_c;
        bool rw = !t->o->load && t->sdt != IR_F32 && t->o->ldt == t->sdt && t->o->ncast == 0;
        if (tile_vec_ok(t, rf, rw)) {
            tile_load_vec(cx, t, rf, tid, nthreads);
            return;
        }
    }
    int64_t total = t->rows * t->cols;
    bool rfast = t->o->unit_r && !t->o->unit_c; /* walk rows fastest when they are contiguous */
    bool raw = !t->o->load && t->sdt != IR_F32 && t->o->ldt == t->sdt && t->o->ncast == 0;
    LLVMTypeRef st = t->sdt == IR_F32 ? cx->f32 : cx->i16;
    for (int64_t i = 0; i * nthreads < total; i++) {
        LLVMValueRef idx = LLVMBuildAdd(b, tid, cg_i32(cx, i * nthreads), "");
        LLVMBasicBlockRef cont = NULL;
        if ((i + 1) * nthreads > total)
            cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, idx, cg_i32(cx, total), ""));
        int64_t fast = rfast ? t->rows : t->cols;
        LLVMValueRef q = LLVMBuildUDiv(b, idx, cg_i32(cx, fast), "");
        LLVMValueRef m = LLVMBuildURem(b, idx, cg_i32(cx, fast), "");
        LLVMValueRef r = rfast ? m : q, c = rfast ? q : m;
        LLVMValueRef r64 = LLVMBuildZExt(b, r, cx->i64, ""), c64 = LLVMBuildZExt(b, c, cx->i64, "");
        LLVMValueRef v =
            tile_elem(cx, t, LLVMBuildAdd(b, t->r0, r64, ""), LLVMBuildAdd(b, t->c0, c64, ""), raw);
        if (!raw && t->sdt != IR_F32) v = cg_f32_to_half(cx, v, t->sdt);
        LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, t->ps_r), ""),
                                       LLVMBuildMul(b, c, cg_i32(cx, t->ps_c), ""), "");
        LLVMValueRef p = LLVMBuildGEP2(b, st, t->smem, &so, 1, "");
        LLVMValueRef s = LLVMBuildStore(b, v, p);
        LLVMSetAlignment(s, t->sdt == IR_F32 ? 4 : 2);
        if (cont) cg_if_end(cx, cont);
    }
}

LLVMValueRef cg_mm_pack2(cg_ctx *cx, LLVMValueRef lo, LLVMValueRef hi, ir_dtype dt) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef l = LLVMBuildZExt(b, cg_f32_to_half(cx, lo, dt), cx->i32, "");
    LLVMValueRef h = LLVMBuildZExt(b, cg_f32_to_half(cx, hi, dt), cx->i32, "");
    return LLVMBuildOr(b, l, LLVMBuildShl(b, h, cg_i32(cx, 16), ""), "");
}

void cg_ldmatrix_x4(cg_ctx *cx, LLVMValueRef smem, LLVMValueRef idx, bool trans,
                    LLVMValueRef *out) {
    const char *name = trans ? "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"
                             : "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16";
    LLVMValueRef p = LLVMBuildGEP2(cx->b, cx->i16, smem, &idx, 1, "");
    LLVMValueRef r = cg_call_intrinsic(cx, name, true, &p, 1);
    for (unsigned i = 0; i < 4; i++) out[i] = LLVMBuildExtractValue(cx->b, r, i, "");
}

bool cg_mm_tile_async_ok(cg_ctx *cx, const cg_mm_tile *t) {
    if (!cx->gpu) return false;
    bool rf = t->o->unit_r && !t->o->unit_c;
    bool raw = !t->o->load && t->sdt != IR_F32 && t->o->ldt == t->sdt && t->o->ncast == 0;
    int64_t ps_fast = rf ? t->ps_r : t->ps_c, ps_slow = rf ? t->ps_c : t->ps_r;
    return tile_vec_ok(t, rf, raw) && ps_fast == 1 && (ps_slow * 2) % 16 == 0;
}

void cg_mm_tile_async(cg_ctx *cx, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads) {
    LLVMBuilderRef b = cx->b;
    bool rfast = t->o->unit_r && !t->o->unit_c;
    LLVMTypeRef i16 = cx->i16;
    LLVMTypeRef gp = LLVMPointerTypeInContext(cx->llctx, 1);
    int64_t fast = rfast ? t->rows : t->cols, nvec = t->rows * t->cols / 8, fv = fast / 8;
    LLVMValueRef base = t->o->ptr;
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(base)) != 1)
        base = LLVMBuildAddrSpaceCast(b, base, gp, "");
    for (int64_t i = 0; i * nthreads < nvec; i++) {
        LLVMValueRef idx = LLVMBuildAdd(b, tid, cg_i32(cx, i * nthreads), "");
        LLVMBasicBlockRef cont = NULL;
        if ((i + 1) * nthreads > nvec)
            cont = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSLT, idx, cg_i32(cx, nvec), ""));
        LLVMValueRef r, c, in, off;
        tile_vec_at(cx, t, rfast, idx, fv, &r, &c, &in, &off);
        LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(cx, t->ps_r), ""),
                                       LLVMBuildMul(b, c, cg_i32(cx, t->ps_c), ""), "");
        LLVMValueRef args[3] = {LLVMBuildGEP2(b, i16, t->smem, &so, 1, ""),
                                LLVMBuildGEP2(b, i16, base, &off, 1, ""),
                                LLVMBuildSelect(b, in, cg_i32(cx, 16), cg_i32(cx, 0), "")};
        cg_call_intrinsic(cx, "llvm.nvvm.cp.async.cg.shared.global.16.s", false, args, 3);
        if (cont) cg_if_end(cx, cont);
    }
}

void cg_cp_async_commit(cg_ctx *cx) {
    cg_call_intrinsic(cx, "llvm.nvvm.cp.async.commit.group", false, NULL, 0);
}

void cg_cp_async_wait(cg_ctx *cx, int n) {
    LLVMValueRef a = cg_i32(cx, n);
    cg_call_intrinsic(cx, "llvm.nvvm.cp.async.wait.group", false, &a, 1);
}
