/* mma.c - building blocks for the matrix-product and attention kernels:
 * constants, loops, special registers, shared memory, barriers, warp
 * shuffles, 16-bit float conversions, operand addressing, global-to-shared
 * tile copies and the m16n8k16 tensor-core instruction (NVVM intrinsic).
 * Every helper emits at the builder of a cg_mm_ir and works for both
 * targets unless its contract says GPU only. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <string.h>

LLVMTypeRef cg_mm_i16(cg_mm_ir *e) { return LLVMInt16TypeInContext(e->c); }
LLVMTypeRef cg_mm_i32(cg_mm_ir *e) { return LLVMInt32TypeInContext(e->c); }
LLVMTypeRef cg_mm_i64(cg_mm_ir *e) { return LLVMInt64TypeInContext(e->c); }
LLVMTypeRef cg_mm_f32(cg_mm_ir *e) { return LLVMFloatTypeInContext(e->c); }
LLVMValueRef cg_mm_c32(cg_mm_ir *e, int64_t v) { return LLVMConstInt(cg_mm_i32(e), (unsigned long long)v, 1); }
LLVMValueRef cg_mm_c64(cg_mm_ir *e, int64_t v) { return LLVMConstInt(cg_mm_i64(e), (unsigned long long)v, 1); }
LLVMValueRef cg_mm_cf(cg_mm_ir *e, double v) { return LLVMConstReal(cg_mm_f32(e), v); }

/* True when v is the integer constant k. */
static bool is_const_int(LLVMValueRef v, int64_t k) {
    return v && LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == k;
}

LLVMValueRef cg_mm_call(cg_mm_ir *e, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt,
                        LLVMValueRef *args, unsigned n) {
    if (strncmp(name, "llvm.", 5) == 0 && LLVMLookupIntrinsicID(name, strlen(name)) == 0) return NULL;
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(e->m, name);
    if (!f) f = LLVMAddFunction(e->m, name, ft);
    return LLVMBuildCall2(e->b, ft, f, args, n, "");
}

LLVMValueRef cg_mm_sreg(cg_mm_ir *e, const char *reg) {
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", reg);
    return cg_mm_call(e, name, cg_mm_i32(e), NULL, NULL, 0);
}

void cg_mm_barrier(cg_mm_ir *e) {
    cg_mm_call(e, "llvm.nvvm.barrier0", LLVMVoidTypeInContext(e->c), NULL, NULL, 0);
}

LLVMValueRef cg_mm_smem(cg_mm_ir *e, int64_t bytes) {
    char name[64];
    snprintf(name, sizeof name, "tx_smem_%u", e->uniq++);
    LLVMTypeRef at = LLVMArrayType2(LLVMInt8TypeInContext(e->c), (uint64_t)bytes);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(e->m, at, name, 3);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMGetUndef(at));
    LLVMSetAlignment(g, 16);
    return g;
}

LLVMValueRef cg_mm_var(cg_mm_ir *e, LLVMValueRef init) {
    LLVMBuilderRef t = LLVMCreateBuilderInContext(e->c);
    LLVMValueRef first = LLVMGetFirstInstruction(e->entry);
    if (first) LLVMPositionBuilderBefore(t, first);
    else LLVMPositionBuilderAtEnd(t, e->entry);
    LLVMValueRef a = LLVMBuildAlloca(t, LLVMTypeOf(init), "acc");
    LLVMDisposeBuilder(t);
    LLVMBuildStore(e->b, init, a);
    return a;
}

/* ---- 16-bit floats ------------------------------------------------------ */

/* f16 bits (i16) -> f32, exact, with integer operations only. */
static LLVMValueRef f16_bits_to_f32_int(cg_mm_ir *e, LLVMValueRef h) {
    LLVMBuilderRef b = e->b;
    LLVMTypeRef i32 = cg_mm_i32(e);
    LLVMValueRef x = LLVMBuildZExt(b, h, i32, "");
    LLVMValueRef mag = LLVMBuildAnd(b, x, cg_mm_c32(e, 0x7fff), "");
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, x, cg_mm_c32(e, 0x8000), ""), cg_mm_c32(e, 16), "");
    LLVMValueRef sh = LLVMBuildShl(b, mag, cg_mm_c32(e, 13), "");
    /* finite: reinterpret and scale by 2^112 (handles subnormals exactly) */
    LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildBitCast(b, sh, cg_mm_f32(e), ""), cg_mm_cf(e, 0x1p112), "");
    LLVMValueRef fin = LLVMBuildBitCast(b, f, i32, "");
    LLVMValueRef nonfin = LLVMBuildOr(b, sh, cg_mm_c32(e, 0x7f800000), "");
    LLVMValueRef isnf = LLVMBuildICmp(b, LLVMIntUGE, mag, cg_mm_c32(e, 0x7c00), "");
    LLVMValueRef r = LLVMBuildOr(b, LLVMBuildSelect(b, isnf, nonfin, fin, ""), sign, "");
    return LLVMBuildBitCast(b, r, cg_mm_f32(e), "");
}

/* f32 -> f16 bits (i16), nearest even, integer/float operations only. */
static LLVMValueRef f32_to_f16_bits_int(cg_mm_ir *e, LLVMValueRef f) {
    LLVMBuilderRef b = e->b;
    LLVMTypeRef i32 = cg_mm_i32(e);
    LLVMValueRef u = LLVMBuildBitCast(b, f, i32, "");
    LLVMValueRef sign = LLVMBuildAnd(b, u, cg_mm_c32(e, (int64_t)0x80000000u), "");
    LLVMValueRef x = LLVMBuildXor(b, u, sign, "");
    /* overflow / inf / nan */
    LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, x, cg_mm_c32(e, (127 + 16) << 23), "");
    LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, x, cg_mm_c32(e, 255 << 23), "");
    LLVMValueRef obig = LLVMBuildSelect(b, nan, cg_mm_c32(e, 0x7e00), cg_mm_c32(e, 0x7c00), "");
    /* subnormal results: let the FPU round by adding a magic number */
    int64_t magic = (int64_t)((127 - 15) + (23 - 10) + 1) << 23;
    LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, x, cg_mm_c32(e, 113 << 23), "");
    LLVMValueRef fs = LLVMBuildFAdd(b, LLVMBuildBitCast(b, x, cg_mm_f32(e), ""),
                                    LLVMBuildBitCast(b, cg_mm_c32(e, magic), cg_mm_f32(e), ""), "");
    LLVMValueRef osmall = LLVMBuildSub(b, LLVMBuildBitCast(b, fs, i32, ""), cg_mm_c32(e, magic), "");
    /* normal results: rebias and round to nearest even */
    LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, x, cg_mm_c32(e, 13), ""), cg_mm_c32(e, 1), "");
    LLVMValueRef xn = LLVMBuildAdd(b, x, cg_mm_c32(e, (int64_t)((15 - 127) * (1 << 23)) + 0xfff), "");
    xn = LLVMBuildAdd(b, xn, odd, "");
    LLVMValueRef onorm = LLVMBuildLShr(b, xn, cg_mm_c32(e, 13), "");
    LLVMValueRef o = LLVMBuildSelect(b, small, osmall, onorm, "");
    o = LLVMBuildSelect(b, big, obig, o, "");
    o = LLVMBuildOr(b, o, LLVMBuildLShr(b, sign, cg_mm_c32(e, 16), ""), "");
    return LLVMBuildTrunc(b, o, cg_mm_i16(e), "");
}

/* f32 -> bf16 bits (i16), nearest even; NaN stays a quiet NaN. */
static LLVMValueRef f32_to_bf16_bits(cg_mm_ir *e, LLVMValueRef f) {
    LLVMBuilderRef b = e->b;
    if (e->gpu) {
        LLVMValueRef h = LLVMBuildFPTrunc(b, f, LLVMBFloatTypeInContext(e->c), "");
        return LLVMBuildBitCast(b, h, cg_mm_i16(e), "");
    }
    LLVMTypeRef i32 = cg_mm_i32(e);
    LLVMValueRef u = LLVMBuildBitCast(b, f, i32, "");
    LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, u, cg_mm_c32(e, 16), ""), cg_mm_c32(e, 1), "");
    LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildAdd(b, u, cg_mm_c32(e, 0x7fff), ""), lsb, "");
    r = LLVMBuildLShr(b, r, cg_mm_c32(e, 16), "");
    LLVMValueRef isnan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
    LLVMValueRef qn = LLVMBuildOr(b, LLVMBuildLShr(b, u, cg_mm_c32(e, 16), ""), cg_mm_c32(e, 0x40), "");
    r = LLVMBuildSelect(b, isnan, qn, r, "");
    return LLVMBuildTrunc(b, r, cg_mm_i16(e), "");
}

LLVMValueRef cg_mm_to_bits16(cg_mm_ir *e, LLVMValueRef x, ir_dtype dt) {
    if (dt == IR_BF16) return f32_to_bf16_bits(e, x);
    if (e->gpu) {
        LLVMValueRef h = LLVMBuildFPTrunc(e->b, x, LLVMHalfTypeInContext(e->c), "");
        return LLVMBuildBitCast(e->b, h, cg_mm_i16(e), "");
    }
    return f32_to_f16_bits_int(e, x);
}

/* 16-bit pattern of dt (F16/BF16) -> f32, exact. */
static LLVMValueRef bits16_to_f32(cg_mm_ir *e, LLVMValueRef h, ir_dtype dt) {
    LLVMBuilderRef b = e->b;
    if (dt == IR_BF16) {
        LLVMValueRef x = LLVMBuildShl(b, LLVMBuildZExt(b, h, cg_mm_i32(e), ""), cg_mm_c32(e, 16), "");
        return LLVMBuildBitCast(b, x, cg_mm_f32(e), "");
    }
    if (e->gpu) return LLVMBuildFPExt(b, LLVMBuildBitCast(b, h, LLVMHalfTypeInContext(e->c), ""), cg_mm_f32(e), "");
    return f16_bits_to_f32_int(e, h);
}

LLVMValueRef cg_mm_round(cg_mm_ir *e, LLVMValueRef x, ir_dtype dt) {
    LLVMBuilderRef b = e->b;
    switch (dt) {
    case IR_F16:
    case IR_BF16: return bits16_to_f32(e, cg_mm_to_bits16(e, x, dt), dt);
    case IR_I32: {
        LLVMTypeRef f = cg_mm_f32(e);
        return cg_mm_call(e, "llvm.trunc.f32", f, &f, &x, 1);
    }
    case IR_BOOL: {
        LLVMValueRef nz = LLVMBuildFCmp(b, LLVMRealUNE, x, cg_mm_cf(e, 0), "");
        return LLVMBuildUIToFP(b, nz, cg_mm_f32(e), "");
    }
    default: return x;
    }
}

LLVMValueRef cg_mm_load_f32(cg_mm_ir *e, LLVMValueRef ptr, ir_dtype dt, LLVMValueRef idx) {
    LLVMBuilderRef b = e->b;
    LLVMTypeRef et;
    switch (dt) {
    case IR_F32: et = cg_mm_f32(e); break;
    case IR_F16:
    case IR_BF16: et = cg_mm_i16(e); break;
    case IR_I32: et = cg_mm_i32(e); break;
    default: et = LLVMInt8TypeInContext(e->c); break;
    }
    LLVMValueRef p = LLVMBuildGEP2(b, et, ptr, &idx, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(b, et, p, "");
    LLVMSetAlignment(v, (unsigned)ir_dtype_size(dt));
    switch (dt) {
    case IR_F32: return v;
    case IR_F16:
    case IR_BF16: return bits16_to_f32(e, v, dt);
    case IR_I32: return LLVMBuildSIToFP(b, v, cg_mm_f32(e), "");
    default: {
        LLVMValueRef nz = LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(et, 0, 0), "");
        return LLVMBuildUIToFP(b, nz, cg_mm_f32(e), "");
    }
    }
}

LLVMValueRef cg_mm_exp(cg_mm_ir *e, LLVMValueRef x) {
    LLVMBuilderRef b = e->b;
    LLVMTypeRef f = cg_mm_f32(e);
    if (!e->gpu) return cg_mm_call(e, "llvm.exp.f32", f, &f, &x, 1);
    /* exp(x) = 2^n * 2^(r*log2 e), n = rint(x*log2 e), r = x - n*ln2 (two-part ln2) */
    LLVMValueRef xc = cg_mm_fmax(e, x, cg_mm_cf(e, -87.0));
    LLVMValueRef t = LLVMBuildFMul(b, xc, cg_mm_cf(e, 1.4426950408889634), "");
    LLVMValueRef n = cg_mm_call(e, "llvm.rint.f32", f, &f, &t, 1);
    LLVMTypeRef f3[3] = {f, f, f};
    LLVMValueRef a1[3] = {n, cg_mm_cf(e, -0.693145751953125), xc};
    LLVMValueRef r = cg_mm_call(e, "llvm.fma.f32", f, f3, a1, 3);
    LLVMValueRef a2[3] = {n, cg_mm_cf(e, -1.428606765330187e-06), r};
    r = cg_mm_call(e, "llvm.fma.f32", f, f3, a2, 3);
    LLVMValueRef rl = LLVMBuildFMul(b, r, cg_mm_cf(e, 1.4426950408889634), "");
    LLVMValueRef p = cg_mm_call(e, "llvm.nvvm.ex2.approx.f", f, &f, &rl, 1);
    /* 2^n as two exact powers (n in [-126, 128]) */
    LLVMValueRef ni = LLVMBuildFPToSI(b, n, cg_mm_i32(e), "");
    LLVMValueRef h = LLVMBuildAShr(b, ni, cg_mm_c32(e, 1), "");
    LLVMValueRef l = LLVMBuildSub(b, ni, h, "");
    LLVMValueRef ph = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, h, cg_mm_c32(e, 127), ""), cg_mm_c32(e, 23), ""), f, "");
    LLVMValueRef pl = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, l, cg_mm_c32(e, 127), ""), cg_mm_c32(e, 23), ""), f, "");
    LLVMValueRef res = LLVMBuildFMul(b, LLVMBuildFMul(b, p, ph, ""), pl, "");
    LLVMValueRef under = LLVMBuildFCmp(b, LLVMRealOLT, x, cg_mm_cf(e, -87.0), "");
    res = LLVMBuildSelect(b, under, cg_mm_cf(e, 0.0), res, "");
    LLVMValueRef over = LLVMBuildFCmp(b, LLVMRealOGT, x, cg_mm_cf(e, 88.72283935546875), "");
    res = LLVMBuildSelect(b, over, LLVMConstReal(f, __builtin_inf()), res, "");
    LLVMValueRef isnan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
    return LLVMBuildSelect(b, isnan, x, res, "");
}

LLVMValueRef cg_mm_exp_fast(cg_mm_ir *e, LLVMValueRef x) {
    if (!e->gpu) return cg_mm_exp(e, x);
    LLVMTypeRef f = cg_mm_f32(e);
    LLVMValueRef t = LLVMBuildFMul(e->b, x, cg_mm_cf(e, 1.4426950408889634), "");
    return cg_mm_call(e, "llvm.nvvm.ex2.approx.ftz.f", f, &f, &t, 1);
}

LLVMValueRef cg_mm_fmax(cg_mm_ir *e, LLVMValueRef a, LLVMValueRef b2) {
    LLVMTypeRef f = cg_mm_f32(e);
    LLVMTypeRef pt[2] = {f, f};
    LLVMValueRef args[2] = {a, b2};
    return cg_mm_call(e, "llvm.maxnum.f32", f, pt, args, 2);
}

bool cg_mm_mma16816(cg_mm_ir *e, ir_dtype dt, LLVMValueRef *a, LLVMValueRef *bb, LLVMValueRef *c,
                    LLVMValueRef *d) {
    LLVMBuilderRef b = e->b;
    LLVMTypeRef f = cg_mm_f32(e);
    LLVMTypeRef ot = dt == IR_BF16 ? cg_mm_i32(e) : LLVMVectorType(LLVMHalfTypeInContext(e->c), 2);
    LLVMTypeRef pt[10];
    LLVMValueRef args[10];
    for (int i = 0; i < 6; i++) {
        pt[i] = ot;
        LLVMValueRef v = i < 4 ? a[i] : bb[i - 4];
        args[i] = dt == IR_BF16 ? v : LLVMBuildBitCast(b, v, ot, "");
    }
    for (int i = 0; i < 4; i++) pt[6 + i] = f, args[6 + i] = c[i];
    LLVMTypeRef rt = LLVMStructTypeInContext(e->c, (LLVMTypeRef[]){f, f, f, f}, 4, 0);
    const char *name = dt == IR_BF16 ? "llvm.nvvm.mma.m16n8k16.row.col.bf16"
                                     : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
    LLVMValueRef r = cg_mm_call(e, name, rt, pt, args, 10);
    if (!r) return false;
    for (unsigned i = 0; i < 4; i++) d[i] = LLVMBuildExtractValue(b, r, i, "");
    return true;
}

LLVMValueRef cg_mm_shfl_xor(cg_mm_ir *e, LLVMValueRef v, int lanemask) {
    LLVMTypeRef i32 = cg_mm_i32(e);
    LLVMTypeRef pt[4] = {i32, cg_mm_f32(e), i32, i32};
    LLVMValueRef args[4] = {cg_mm_c32(e, -1), v, cg_mm_c32(e, lanemask), cg_mm_c32(e, 0x1f)};
    return cg_mm_call(e, "llvm.nvvm.shfl.sync.bfly.f32", cg_mm_f32(e), pt, args, 4);
}

/* acc + x*s, skipping a constant-zero stride and folding a unit one. */
static LLVMValueRef add_scaled(cg_mm_ir *e, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef s) {
    if (is_const_int(s, 0)) return acc;
    LLVMValueRef t = is_const_int(s, 1) ? x : LLVMBuildMul(e->b, x, s, "");
    return acc ? LLVMBuildAdd(e->b, acc, t, "") : t;
}

LLVMValueRef cg_mm_offset(cg_mm_ir *e, const cg_mm_opnd *o, unsigned nb, const LLVMValueRef *bidx,
                          LLVMValueRef r, LLVMValueRef c) {
    LLVMValueRef acc = NULL;
    for (unsigned i = 0; i < nb; i++) acc = add_scaled(e, acc, bidx[i], o->sb[i]);
    acc = add_scaled(e, acc, r, o->sr);
    acc = add_scaled(e, acc, c, o->sc);
    return acc ? acc : cg_mm_c64(e, 0);
}

LLVMValueRef cg_mm_opnd_load(cg_mm_ir *e, const cg_mm_opnd *o, unsigned nb, const LLVMValueRef *bidx,
                             LLVMValueRef r, LLVMValueRef c) {
    if (o->load) return o->load(o->user, e, o, bidx, r, c);
    LLVMValueRef v = cg_mm_load_f32(e, o->ptr, o->ldt, cg_mm_offset(e, o, nb, bidx, r, c));
    for (unsigned i = 0; i < o->ncast; i++) v = cg_mm_round(e, v, o->casts[i]);
    return v;
}

void cg_mm_unflatten(cg_mm_ir *e, LLVMValueRef flat, unsigned nb, const LLVMValueRef *bdim,
                     LLVMValueRef *bidx) {
    for (unsigned i = nb; i-- > 0;) {
        if (i == 0) {
            bidx[i] = flat;
            break;
        }
        bidx[i] = LLVMBuildURem(e->b, flat, bdim[i], "");
        flat = LLVMBuildUDiv(e->b, flat, bdim[i], "");
    }
}

LLVMValueRef cg_mm_batch_count(cg_mm_ir *e, unsigned nb, const LLVMValueRef *bdim) {
    LLVMValueRef n = cg_mm_c64(e, 1);
    for (unsigned i = 0; i < nb; i++) n = LLVMBuildMul(e->b, n, bdim[i], "");
    return n;
}

/* Loads operand element (gr, gc) of a tile as f32 (or raw 16-bit bits when
 * `raw`), zero outside [0, rlim) x [0, clim); indices are clamped so the
 * load itself is always in bounds. */
static LLVMValueRef tile_elem(cg_mm_ir *e, const cg_mm_tile *t, LLVMValueRef gr, LLVMValueRef gc, bool raw) {
    LLVMBuilderRef b = e->b;
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, gr, t->rlim, ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, gc, t->clim, ""), "");
    LLVMValueRef z = cg_mm_c64(e, 0);
    LLVMValueRef cr = LLVMBuildSelect(b, in, gr, z, ""), cc = LLVMBuildSelect(b, in, gc, z, "");
    if (raw) {
        LLVMValueRef off = cg_mm_offset(e, t->o, t->nb, t->bidx, cr, cc);
        LLVMValueRef p = LLVMBuildGEP2(b, cg_mm_i16(e), t->o->ptr, &off, 1, "");
        LLVMValueRef v = LLVMBuildLoad2(b, cg_mm_i16(e), p, "");
        LLVMSetAlignment(v, 2);
        return LLVMBuildSelect(b, in, v, LLVMConstInt(cg_mm_i16(e), 0, 0), "");
    }
    LLVMValueRef v = cg_mm_opnd_load(e, t->o, t->nb, t->bidx, cr, cc);
    return LLVMBuildSelect(b, in, v, cg_mm_cf(e, 0), "");
}

/* True when v is a constant multiple of 8 (0 included). */
static bool const_mult8(LLVMValueRef v) {
    return v && LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) % 8 == 0;
}

/* True when a tile can be copied in 16-byte vectors: raw 16-bit copy,
 * unit stride along the walked (fast) direction with a constant extent that
 * is a multiple of 8 (vectors are wholly in or out), every other stride a
 * constant multiple of 8 (16-byte aligned vectors: buffers are 16-byte
 * aligned), and a tile extent along it that is a multiple of 8. */
static bool tile_vec_ok(const cg_mm_tile *t, bool rfast, bool raw) {
    const cg_mm_opnd *o = t->o;
    if (!raw || (rfast ? !o->unit_r : !o->unit_c)) return false;
    if (!const_mult8(rfast ? t->rlim : t->clim) || (rfast ? t->rows : t->cols) % 8 != 0) return false;
    if (!const_mult8(rfast ? o->sc : o->sr)) return false;
    for (unsigned i = 0; i < t->nb; i++)
        if (!const_mult8(o->sb[i])) return false;
    return true;
}

/* Element coordinates of the 8-wide vector `idx` of tile t (fast axis
 * rows when rfast): its row r and column c within the tile, whether it lies
 * inside the operand (`in`), and its element offset in the operand (clamped
 * to element 0 when outside, so the access stays in bounds). */
static void tile_vec_at(cg_mm_ir *e, const cg_mm_tile *t, bool rfast, LLVMValueRef idx, int64_t fv, LLVMValueRef *r,
                        LLVMValueRef *c, LLVMValueRef *in, LLVMValueRef *off) {
    LLVMBuilderRef b = e->b;
    LLVMValueRef fi = LLVMBuildMul(b, LLVMBuildURem(b, idx, cg_mm_c32(e, fv), ""), cg_mm_c32(e, 8), "");
    LLVMValueRef si = LLVMBuildUDiv(b, idx, cg_mm_c32(e, fv), "");
    *r = rfast ? fi : si;
    *c = rfast ? si : fi;
    LLVMValueRef gr = LLVMBuildAdd(b, t->r0, LLVMBuildZExt(b, *r, cg_mm_i64(e), ""), "");
    LLVMValueRef gc = LLVMBuildAdd(b, t->c0, LLVMBuildZExt(b, *c, cg_mm_i64(e), ""), "");
    *in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, gr, t->rlim, ""), LLVMBuildICmp(b, LLVMIntSLT, gc, t->clim, ""), "");
    LLVMValueRef z = cg_mm_c64(e, 0);
    *off = cg_mm_offset(e, t->o, t->nb, t->bidx, LLVMBuildSelect(b, *in, gr, z, ""), LLVMBuildSelect(b, *in, gc, z, ""));
}

/* The vector form of cg_mm_tile_load (see tile_vec_ok): one <8 x i16> load
 * per thread and step, stored as one 16-byte vector when the shared layout
 * is contiguous along the same direction, else as 8 scalars. */
static void tile_load_vec(cg_mm_ir *e, const cg_mm_tile *t, bool rfast, LLVMValueRef tid, unsigned nthreads) {
    LLVMBuilderRef b = e->b;
    LLVMTypeRef i16 = cg_mm_i16(e), v8 = LLVMVectorType(i16, 8);
    int64_t fast = rfast ? t->rows : t->cols, nvec = t->rows * t->cols / 8, fv = fast / 8;
    int64_t ps_fast = rfast ? t->ps_r : t->ps_c, ps_slow = rfast ? t->ps_c : t->ps_r;
    bool vstore = ps_fast == 1 && (ps_slow * 2) % 16 == 0;
    for (int64_t i = 0; i * nthreads < nvec; i++) {
        LLVMValueRef idx = LLVMBuildAdd(b, tid, cg_mm_c32(e, i * nthreads), "");
        LLVMBasicBlockRef cont = NULL;
        if ((i + 1) * nthreads > nvec) cont = cg_mm_if_begin(e, LLVMBuildICmp(b, LLVMIntSLT, idx, cg_mm_c32(e, nvec), ""), "tv");
        LLVMValueRef r, c, in, off;
        tile_vec_at(e, t, rfast, idx, fv, &r, &c, &in, &off);
        LLVMValueRef v = LLVMBuildLoad2(b, v8, LLVMBuildGEP2(b, i16, t->o->ptr, &off, 1, ""), "");
        LLVMSetAlignment(v, 16);
        v = LLVMBuildSelect(b, in, v, LLVMConstNull(v8), "");
        LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_mm_c32(e, t->ps_r), ""),
                                       LLVMBuildMul(b, c, cg_mm_c32(e, t->ps_c), ""), "");
        if (vstore) {
            LLVMValueRef s = LLVMBuildStore(b, v, LLVMBuildGEP2(b, i16, t->smem, &so, 1, ""));
            LLVMSetAlignment(s, 16);
        } else {
            for (int k = 0; k < 8; k++) {
                LLVMValueRef sk = LLVMBuildAdd(b, so, cg_mm_c32(e, k * ps_fast), "");
                LLVMValueRef s = LLVMBuildStore(b, LLVMBuildExtractElement(b, v, cg_mm_c32(e, k), ""),
                                                LLVMBuildGEP2(b, i16, t->smem, &sk, 1, ""));
                LLVMSetAlignment(s, 2);
            }
        }
        if (cont) cg_mm_if_end(e, cont);
    }
}

void cg_mm_tile_load(cg_mm_ir *e, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads) {
    LLVMBuilderRef b = e->b;
    if (e->gpu) {
        bool rf = t->o->unit_r && !t->o->unit_c;
        bool rw = !t->o->load && t->sdt != IR_F32 && t->o->ldt == t->sdt && t->o->ncast == 0;
        if (tile_vec_ok(t, rf, rw)) {
            tile_load_vec(e, t, rf, tid, nthreads);
            return;
        }
    }
    int64_t total = t->rows * t->cols;
    bool rfast = t->o->unit_r && !t->o->unit_c; /* walk rows fastest when they are contiguous */
    bool raw = !t->o->load && t->sdt != IR_F32 && t->o->ldt == t->sdt && t->o->ncast == 0;
    LLVMTypeRef st = t->sdt == IR_F32 ? cg_mm_f32(e) : cg_mm_i16(e);
    for (int64_t i = 0; i * nthreads < total; i++) {
        LLVMValueRef idx = LLVMBuildAdd(b, tid, cg_mm_c32(e, i * nthreads), "");
        LLVMBasicBlockRef cont = NULL;
        if ((i + 1) * nthreads > total) cont = cg_mm_if_begin(e, LLVMBuildICmp(b, LLVMIntSLT, idx, cg_mm_c32(e, total), ""), "tl");
        int64_t fast = rfast ? t->rows : t->cols;
        LLVMValueRef q = LLVMBuildUDiv(b, idx, cg_mm_c32(e, fast), "");
        LLVMValueRef m = LLVMBuildURem(b, idx, cg_mm_c32(e, fast), "");
        LLVMValueRef r = rfast ? m : q, c = rfast ? q : m;
        LLVMValueRef r64 = LLVMBuildZExt(b, r, cg_mm_i64(e), ""), c64 = LLVMBuildZExt(b, c, cg_mm_i64(e), "");
        LLVMValueRef v = tile_elem(e, t, LLVMBuildAdd(b, t->r0, r64, ""), LLVMBuildAdd(b, t->c0, c64, ""), raw);
        if (!raw && t->sdt != IR_F32) v = cg_mm_to_bits16(e, v, t->sdt);
        LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_mm_c32(e, t->ps_r), ""),
                                       LLVMBuildMul(b, c, cg_mm_c32(e, t->ps_c), ""), "");
        LLVMValueRef p = LLVMBuildGEP2(b, st, t->smem, &so, 1, "");
        LLVMValueRef s = LLVMBuildStore(b, v, p);
        LLVMSetAlignment(s, t->sdt == IR_F32 ? 4 : 2);
        if (cont) cg_mm_if_end(e, cont);
    }
}

LLVMValueRef cg_mm_smem_pair(cg_mm_ir *e, LLVMValueRef smem, LLVMValueRef idx) {
    LLVMValueRef p = LLVMBuildGEP2(e->b, cg_mm_i16(e), smem, &idx, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(e->b, cg_mm_i32(e), p, "");
    LLVMSetAlignment(v, 4);
    return v;
}

LLVMValueRef cg_mm_pack2(cg_mm_ir *e, LLVMValueRef lo, LLVMValueRef hi, ir_dtype dt) {
    LLVMBuilderRef b = e->b;
    LLVMValueRef l = LLVMBuildZExt(b, cg_mm_to_bits16(e, lo, dt), cg_mm_i32(e), "");
    LLVMValueRef h = LLVMBuildZExt(b, cg_mm_to_bits16(e, hi, dt), cg_mm_i32(e), "");
    return LLVMBuildOr(b, l, LLVMBuildShl(b, h, cg_mm_c32(e, 16), ""), "");
}

LLVMValueRef cg_mm_loop_begin(cg_mm_ir *e, cg_mm_loop *l, LLVMValueRef lo, LLVMValueRef hi,
                              LLVMValueRef step, const char *name) {
    LLVMBuilderRef b = e->b;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    l->head = LLVMAppendBasicBlockInContext(e->c, e->fn, name);
    l->body = LLVMAppendBasicBlockInContext(e->c, e->fn, name);
    l->exit = LLVMAppendBasicBlockInContext(e->c, e->fn, name);
    l->step = step;
    LLVMBuildBr(b, l->head);
    LLVMPositionBuilderAtEnd(b, l->head);
    l->iv = LLVMBuildPhi(b, LLVMTypeOf(lo), name);
    LLVMAddIncoming(l->iv, &lo, &pre, 1);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, l->iv, hi, ""), l->body, l->exit);
    LLVMPositionBuilderAtEnd(b, l->body);
    return l->iv;
}

void cg_mm_loop_end(cg_mm_ir *e, cg_mm_loop *l) {
    LLVMBuilderRef b = e->b;
    LLVMValueRef next = LLVMBuildAdd(b, l->iv, l->step, "");
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, l->head);
    LLVMAddIncoming(l->iv, &next, &cur, 1);
    LLVMPositionBuilderAtEnd(b, l->exit);
}

LLVMBasicBlockRef cg_mm_if_begin(cg_mm_ir *e, LLVMValueRef cond, const char *name) {
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(e->c, e->fn, name);
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(e->c, e->fn, name);
    LLVMBuildCondBr(e->b, cond, then, cont);
    LLVMPositionBuilderAtEnd(e->b, then);
    return cont;
}

void cg_mm_if_end(cg_mm_ir *e, LLVMBasicBlockRef cont) {
    LLVMBuildBr(e->b, cont);
    LLVMPositionBuilderAtEnd(e->b, cont);
}


bool cg_mm_ldsm_x4(cg_mm_ir *e, LLVMValueRef smem, LLVMValueRef idx, bool trans, LLVMValueRef *out) {
    const char *name = trans ? "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"
                             : "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) return false;
    LLVMTypeRef pt = LLVMTypeOf(smem);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->m, id, &pt, 1);
    LLVMTypeRef ft = LLVMIntrinsicGetType(e->c, id, &pt, 1);
    LLVMValueRef p = LLVMBuildGEP2(e->b, cg_mm_i16(e), smem, &idx, 1, "");
    LLVMValueRef r = LLVMBuildCall2(e->b, ft, fn, &p, 1, "");
    for (unsigned i = 0; i < 4; i++) out[i] = LLVMBuildExtractValue(e->b, r, i, "");
    return true;
}

bool cg_mm_tile_async_ok(cg_mm_ir *e, const cg_mm_tile *t) {
    if (!e->gpu) return false;
    bool rf = t->o->unit_r && !t->o->unit_c;
    bool raw = !t->o->load && t->sdt != IR_F32 && t->o->ldt == t->sdt && t->o->ncast == 0;
    int64_t ps_fast = rf ? t->ps_r : t->ps_c, ps_slow = rf ? t->ps_c : t->ps_r;
    return tile_vec_ok(t, rf, raw) && ps_fast == 1 && (ps_slow * 2) % 16 == 0;
}

void cg_mm_tile_async(cg_mm_ir *e, const cg_mm_tile *t, LLVMValueRef tid, unsigned nthreads) {
    LLVMBuilderRef b = e->b;
    bool rfast = t->o->unit_r && !t->o->unit_c;
    LLVMTypeRef i16 = cg_mm_i16(e), i32 = cg_mm_i32(e);
    LLVMTypeRef gp = LLVMPointerTypeInContext(e->c, 1), sp = LLVMPointerTypeInContext(e->c, 3);
    int64_t fast = rfast ? t->rows : t->cols, nvec = t->rows * t->cols / 8, fv = fast / 8;
    LLVMValueRef base = t->o->ptr;
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(base)) != 1) base = LLVMBuildAddrSpaceCast(b, base, gp, "");
    for (int64_t i = 0; i * nthreads < nvec; i++) {
        LLVMValueRef idx = LLVMBuildAdd(b, tid, cg_mm_c32(e, i * nthreads), "");
        LLVMBasicBlockRef cont = NULL;
        if ((i + 1) * nthreads > nvec) cont = cg_mm_if_begin(e, LLVMBuildICmp(b, LLVMIntSLT, idx, cg_mm_c32(e, nvec), ""), "ta");
        LLVMValueRef r, c, in, off;
        tile_vec_at(e, t, rfast, idx, fv, &r, &c, &in, &off);
        LLVMValueRef so = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_mm_c32(e, t->ps_r), ""),
                                       LLVMBuildMul(b, c, cg_mm_c32(e, t->ps_c), ""), "");
        LLVMTypeRef pt[3] = {sp, gp, i32};
        LLVMValueRef args[3] = {LLVMBuildGEP2(b, i16, t->smem, &so, 1, ""), LLVMBuildGEP2(b, i16, base, &off, 1, ""),
                                LLVMBuildSelect(b, in, cg_mm_c32(e, 16), cg_mm_c32(e, 0), "")};
        cg_mm_call(e, "llvm.nvvm.cp.async.cg.shared.global.16.s", LLVMVoidTypeInContext(e->c), pt, args, 3);
        if (cont) cg_mm_if_end(e, cont);
    }
}

void cg_mm_cp_commit(cg_mm_ir *e) {
    cg_mm_call(e, "llvm.nvvm.cp.async.commit.group", LLVMVoidTypeInContext(e->c), NULL, NULL, 0);
}

void cg_mm_cp_wait(cg_mm_ir *e, int n) {
    LLVMTypeRef i32 = cg_mm_i32(e);
    LLVMValueRef a = cg_mm_c32(e, n);
    cg_mm_call(e, "llvm.nvvm.cp.async.wait.group", LLVMVoidTypeInContext(e->c), &i32, &a, 1);
}

LLVMValueRef cg_mm_dyn_smem(cg_mm_ir *e) {
    LLVMValueRef g = LLVMGetNamedGlobal(e->m, "tx_mm_dyn_smem");
    if (g) return g;
    LLVMTypeRef at = LLVMArrayType2(LLVMInt8TypeInContext(e->c), 0);
    g = LLVMAddGlobalInAddressSpace(e->m, at, "tx_mm_dyn_smem", 3);
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetAlignment(g, 16);
    return g;
}
