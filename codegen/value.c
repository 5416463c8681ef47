/* value.c - the shared part of every emitter: index arithmetic, loads and
 * stores at each dtype, f16/bf16 conversions, casts, elementwise ops, and
 * cg_emit_value, the scalar computation of a node at a logical index. */
#include "codegen/cg_impl.h"

#include <math.h>
#include <string.h>

/* ---- dims and indices ----------------------------------------------------- */

/* i64 value of one dim: a constant or the symbol's value. */
LLVMValueRef cg_dim(cg_ctx *cx, ir_dim d) {
    if (IR_DIM_IS_SYM(d)) return cx->symval[IR_DIM_SYMIDX(d)];
    return cg_i64(cx, d);
}

/* i64 element count of s. */
LLVMValueRef cg_numel(cg_ctx *cx, const ir_shape *s) {
    LLVMValueRef n = cg_i64(cx, 1);
    for (unsigned i = 0; i < s->rank; i++) n = LLVMBuildNUWMul(cx->b, n, cg_dim(cx, s->dim[i]), "");
    return n;
}

/* Index with only its linear offset known. */
cg_index cg_index_lin(const ir_shape *s, LLVMValueRef lin) {
    cg_index x;
    memset(&x, 0, sizeof x);
    x.shape = s;
    x.lin = lin;
    return x;
}

/* Index from components; lin = sum dims[i] * stride[i] (C order). */
cg_index cg_index_from_dims(cg_ctx *cx, const ir_shape *s, const LLVMValueRef *dims) {
    cg_index x = cg_index_lin(s, NULL);
    LLVMValueRef lin = cg_i64(cx, 0);
    for (unsigned i = 0; i < s->rank; i++) {
        x.dim[i] = dims[i];
        lin = LLVMBuildNUWAdd(cx->b, LLVMBuildNUWMul(cx->b, lin, cg_dim(cx, s->dim[i]), ""),
                              dims[i], "");
    }
    x.lin = lin;
    return x;
}

/* Fills idx->dim from idx->lin. Unit dims get 0 without arithmetic. */
void cg_index_dims(cg_ctx *cx, cg_index *idx) {
    const ir_shape *s = idx->shape;
    if (s->rank == 0 || idx->dim[0]) return;
    LLVMValueRef rest = idx->lin;
    for (int i = (int)s->rank - 1; i >= 0; i--) {
        ir_dim d = s->dim[i];
        if (d == 1) {
            idx->dim[i] = cg_i64(cx, 0);
        } else if (i == 0) {
            idx->dim[i] = rest;
        } else {
            LLVMValueRef dv = cg_dim(cx, d);
            idx->dim[i] = LLVMBuildURem(cx->b, rest, dv, "");
            rest = LLVMBuildUDiv(cx->b, rest, dv, "");
        }
    }
}

/* True when every dim of s is 1 (rank 0 included). */
static bool cg_shape_is_unit(const ir_shape *s) {
    for (unsigned i = 0; i < s->rank; i++)
        if (s->dim[i] != 1) return false;
    return true;
}

static void cg_vec_alias(cg_ctx *cx, LLVMValueRef lin, LLVMValueRef base, unsigned j,
                         const ir_shape *shape, bool bc);
static bool cg_vec_of(cg_ctx *cx, const cg_index *idx, unsigned *j, LLVMValueRef *start);

enum { CG_VIX_SLICE, CG_VIX_BCAST };

/* The lin in shape `to` of element start (a group's first element, of shape s) under index map
 * key of kind (CG_VIX_SLICE: slice node key's offset along its axis; CG_VIX_BCAST: NumPy
 * broadcasting of s onto to), computed once per map and start where the group loads go
 * (vecix). NULL when the table is full. */
static LLVMValueRef cg_vec_base(cg_ctx *cx, unsigned kind, const void *key, const ir_shape *s,
                                const ir_shape *to, LLVMValueRef start) {
    for (unsigned e = 0; e < cx->nvecix; e++)
        if (cx->vecix[e].kind == kind && cx->vecix[e].key == key && cx->vecix[e].start == start &&
            ir_shape_eq(cx->vecix[e].from, s))
            return cx->vecix[e].base;
    if (cx->nvecix >= CG_VEC_MAXLIN) return NULL;
    LLVMBuilderRef saved = cx->b;
    if (cx->vecb) cx->b = cx->vecb;
    cg_index gi = cg_index_lin(s, start);
    cg_index_dims(cx, &gi);
    LLVMValueRef d[IR_MAX_RANK];
    if (kind == CG_VIX_SLICE) {
        const ir_node *n = key;
        for (unsigned i = 0; i < s->rank; i++) d[i] = gi.dim[i];
        d[n->a.slice.axis] =
            LLVMBuildNUWAdd(cx->b, d[n->a.slice.axis], cg_i64(cx, n->a.slice.start), "");
    } else {
        unsigned off = s->rank - to->rank;
        for (unsigned i = 0; i < to->rank; i++)
            d[i] = to->dim[i] == 1 ? cg_i64(cx, 0) : gi.dim[i + off];
    }
    LLVMValueRef base = cg_index_from_dims(cx, to, d).lin;
    cx->b = saved;
    unsigned e = cx->nvecix++;
    cx->vecix[e].kind = kind, cx->vecix[e].key = key, cx->vecix[e].from = s;
    cx->vecix[e].start = start, cx->vecix[e].base = base;
    return base;
}

/* Vector path of a broadcast along outer dims only (pass_vec_bcast: PASS_VB_OUTER): the group
 * of lane j (from start) lies in one row and maps to consecutive elements of to from an aligned
 * base (cg_vec_base): registers an alias so cg_load_value loads the group with one vector. NULL
 * when the table of bases is full. */
static LLVMValueRef cg_vec_bcast_outer(cg_ctx *cx, cg_index *idx, const ir_shape *to, unsigned j,
                                       LLVMValueRef start) {
    const ir_shape *s = idx->shape;
    LLVMValueRef base = cg_vec_base(cx, CG_VIX_BCAST, to, s, to, start);
    if (!base) return NULL;
    LLVMValueRef lin =
        j % cx->vecw ? LLVMBuildNUWAdd(cx->b, base, cg_i64(cx, j % cx->vecw), "") : base;
    cg_vec_alias(cx, lin, base, j, to, false);
    return lin;
}

/* Vector path of a broadcast: when idx is element j of the current vector groups (cg_vec_of)
 * and pass_vec_bcast(idx's shape, to) holds: along outer dims only, cg_vec_bcast_outer; a
 * row-broadcast shape (PASS_VB_TRAILING), the element's offset in `to` is base + j % w, where
 * base (the group start modulo numel(to)) is aligned: registers an alias so cg_load_value loads
 * the group with one vector. NULL when not applicable. */
static LLVMValueRef cg_vec_bcast(cg_ctx *cx, cg_index *idx, const ir_shape *to) {
    unsigned j;
    LLVMValueRef start;
    if (!cg_vec_of(cx, idx, &j, &start)) return NULL;
    pass_vec_bcast_kind kind = pass_vec_bcast(idx->shape, to, cx->vecw);
    if (kind == PASS_VB_OUTER) return cg_vec_bcast_outer(cx, idx, to, j, start);
    if (kind != PASS_VB_TRAILING) return NULL;
    int64_t nt = ir_shape_numel(to);
    unsigned g0 = j - j % cx->vecw;
    LLVMValueRef base = NULL;
    for (unsigned a = 0; a < cx->nvecalias && !base; a++)
        if (cx->vecalias[a].j == g0 && cx->vecalias[a].bc &&
            LLVMGetOperand(cx->vecalias[a].base, 0) == start &&
            LLVMGetOperand(cx->vecalias[a].base, 1) == cg_i64(cx, nt))
            base = cx->vecalias[a].base;
    if (!base) {
        LLVMBuilderRef b = cx->vecb ? cx->vecb : cx->b;
        base = LLVMBuildURem(b, start, cg_i64(cx, nt), "vbase");
        if (!LLVMIsAInstruction(base)) return NULL; /* folded: no alias key */
    }
    LLVMValueRef lin =
        j % cx->vecw ? LLVMBuildNUWAdd(cx->b, base, cg_i64(cx, j % cx->vecw), "") : base;
    cg_vec_alias(cx, lin, base, j, to, true);
    return lin;
}

/* Records lin as lane j % vecw of the vector group j / vecw that starts at base, an element of
 * shape (bc: base is cg_vec_bcast's remainder instruction, its key); a full table records
 * nothing (scalar loads). */
static void cg_vec_alias(cg_ctx *cx, LLVMValueRef lin, LLVMValueRef base, unsigned j,
                         const ir_shape *shape, bool bc) {
    if (cx->nvecalias >= sizeof cx->vecalias / sizeof cx->vecalias[0]) return;
    unsigned a = cx->nvecalias++;
    cx->vecalias[a].lin = lin;
    cx->vecalias[a].base = base;
    cx->vecalias[a].j = j;
    cx->vecalias[a].shape = shape;
    cx->vecalias[a].bc = bc;
}

/* True when idx is a lane of the current vector groups: element j of veclin (idx of vecshape),
 * or a lane cg_vec_bcast or cg_vec_concat derived of idx's own shape; *start gets the group's
 * first element. */
static bool cg_vec_of(cg_ctx *cx, const cg_index *idx, unsigned *j, LLVMValueRef *start) {
    if (!cx->vecw || !idx->lin) return false;
    if (cx->vecshape && ir_shape_eq(idx->shape, cx->vecshape))
        for (unsigned k = 0; k < cx->vecn; k++)
            if (idx->lin == cx->veclin[k]) {
                *j = k;
                *start = cx->veclin[k - k % cx->vecw];
                return true;
            }
    for (unsigned a = 0; a < cx->nvecalias; a++)
        if (idx->lin == cx->vecalias[a].lin && ir_shape_eq(cx->vecalias[a].shape, idx->shape)) {
            *j = cx->vecalias[a].j;
            *start = cx->vecalias[a].base;
            return true;
        }
    return false;
}

/* Index into `to` seen by idx under NumPy broadcasting (stride 0 on
 * broadcast dims). */
cg_index cg_index_bcast(cg_ctx *cx, cg_index *idx, const ir_shape *to) {
    if (ir_shape_eq(idx->shape, to)) {
        cg_index x = *idx;
        x.shape = to;
        return x;
    }
    if (cg_shape_is_unit(to)) return cg_index_lin(to, cg_i64(cx, 0));
    LLVMValueRef vl = cg_vec_bcast(cx, idx, to);
    if (vl) return cg_index_lin(to, vl);
    cg_index_dims(cx, idx);
    LLVMValueRef d[IR_MAX_RANK];
    unsigned off = idx->shape->rank - to->rank;
    for (unsigned j = 0; j < to->rank; j++)
        d[j] = to->dim[j] == 1 ? cg_i64(cx, 0) : idx->dim[j + off];
    return cg_index_from_dims(cx, to, d);
}

/* ---- types, loads, stores --------------------------------------------------- */

/* Compute type of dtype t; see codegen.h. */
LLVMTypeRef cg_ctype(cg_ctx *cx, ir_dtype t) {
    switch (t) {
        case IR_I32: return cx->i32;
        case IR_BOOL: return cx->i1;
        default: return cx->f32;
    }
}

/* The in-memory element type of dtype t. */
LLVMTypeRef cg_stype(cg_ctx *cx, ir_dtype t) {
    switch (t) {
        case IR_F32: return cx->f32;
        case IR_F16:
        case IR_BF16: return cx->i16;
        case IR_I32: return cx->i32;
        default: return cx->i8;
    }
}

/* Integer constant of type t. */
static LLVMValueRef cg_ic(LLVMTypeRef t, uint64_t v) { return LLVMConstInt(t, v, 0); }

/* f16/bf16 bits -> f32 (exact). f16 uses cvt on the GPU and integer
 * arithmetic on the host; both are exact. */
LLVMValueRef cg_half_to_f32(cg_ctx *cx, LLVMValueRef h, ir_dtype t) {
    LLVMBuilderRef b = cx->b;
    if (t == IR_BF16) {
        LLVMValueRef w = LLVMBuildShl(b, LLVMBuildZExt(b, h, cx->i32, ""), cg_ic(cx->i32, 16), "");
        return LLVMBuildBitCast(b, w, cx->f32, "");
    }
    if (cx->gpu)
        return LLVMBuildFPExt(b, LLVMBuildBitCast(b, h, LLVMHalfTypeInContext(cx->llctx), ""),
                              cx->f32, "");
    /* Host: (h & 0x7fff) << 13 rebiased; denormals via a float subtraction. */
    LLVMValueRef w = LLVMBuildZExt(b, h, cx->i32, "");
    LLVMValueRef sign =
        LLVMBuildShl(b, LLVMBuildAnd(b, w, cg_ic(cx->i32, 0x8000), ""), cg_ic(cx->i32, 16), "");
    LLVMValueRef o =
        LLVMBuildShl(b, LLVMBuildAnd(b, w, cg_ic(cx->i32, 0x7fff), ""), cg_ic(cx->i32, 13), "");
    LLVMValueRef e = LLVMBuildAnd(b, o, cg_ic(cx->i32, 0x0f800000), "");
    o = LLVMBuildAdd(b, o, cg_ic(cx->i32, (127 - 15) << 23), "");
    LLVMValueRef inf = LLVMBuildICmp(b, LLVMIntEQ, e, cg_ic(cx->i32, 0x0f800000), "");
    LLVMValueRef den = LLVMBuildICmp(b, LLVMIntEQ, e, cg_ic(cx->i32, 0), "");
    LLVMValueRef oinf = LLVMBuildAdd(b, o, cg_ic(cx->i32, (128 - 16) << 23), "");
    LLVMValueRef oden = LLVMBuildAdd(b, o, cg_ic(cx->i32, 1 << 23), "");
    LLVMValueRef fden =
        LLVMBuildFSub(b, LLVMBuildBitCast(b, oden, cx->f32, ""), cg_f32c(cx, 6.103515625e-05), "");
    oden = LLVMBuildBitCast(b, fden, cx->i32, "");
    o = LLVMBuildSelect(b, inf, oinf, LLVMBuildSelect(b, den, oden, o, ""), "");
    return LLVMBuildBitCast(b, LLVMBuildOr(b, o, sign, ""), cx->f32, "");
}

/* f32 -> f16/bf16 bits, round to nearest even; NaN stays NaN. */
LLVMValueRef cg_f32_to_half(cg_ctx *cx, LLVMValueRef f, ir_dtype t) {
    LLVMBuilderRef b = cx->b;
    if (t == IR_BF16 &&
        cx->gpu) /* cvt.rn.bf16.f32 (sm_80+): the same rounding, NaN becomes 0x7fff */
        return LLVMBuildBitCast(b, LLVMBuildFPTrunc(b, f, LLVMBFloatTypeInContext(cx->llctx), ""),
                                cx->i16, "");
    LLVMValueRef u = LLVMBuildBitCast(b, f, cx->i32, "");
    if (t == IR_BF16) {
        LLVMValueRef lsb =
            LLVMBuildAnd(b, LLVMBuildLShr(b, u, cg_ic(cx->i32, 16), ""), cg_ic(cx->i32, 1), "");
        LLVMValueRef r = LLVMBuildAdd(b, u, LLVMBuildAdd(b, lsb, cg_ic(cx->i32, 0x7fff), ""), "");
        r = LLVMBuildLShr(b, r, cg_ic(cx->i32, 16), "");
        LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
        LLVMValueRef qn =
            LLVMBuildOr(b, LLVMBuildLShr(b, u, cg_ic(cx->i32, 16), ""), cg_ic(cx->i32, 0x0040), "");
        return LLVMBuildTrunc(b, LLVMBuildSelect(b, nan, qn, r, ""), cx->i16, "");
    }
    if (cx->gpu)
        return LLVMBuildBitCast(b, LLVMBuildFPTrunc(b, f, LLVMHalfTypeInContext(cx->llctx), ""),
                                cx->i16, "");
    LLVMValueRef sign = LLVMBuildAnd(b, u, cg_ic(cx->i32, 0x80000000u), "");
    LLVMValueRef a = LLVMBuildXor(b, u, sign, "");
    /* Overflow / inf / nan. */
    LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, a, cg_ic(cx->i32, (127 + 16) << 23), "");
    LLVMValueRef isnan = LLVMBuildICmp(b, LLVMIntUGT, a, cg_ic(cx->i32, 255u << 23), "");
    LLVMValueRef obig =
        LLVMBuildSelect(b, isnan, cg_ic(cx->i32, 0x7e00), cg_ic(cx->i32, 0x7c00), "");
    /* Subnormal results: let the FPU round via a magic addition. */
    LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, a, cg_ic(cx->i32, 113u << 23), "");
    uint32_t magic = ((127 - 15) + (23 - 10) + 1) << 23;
    LLVMValueRef fs = LLVMBuildFAdd(b, LLVMBuildBitCast(b, a, cx->f32, ""),
                                    LLVMBuildBitCast(b, cg_ic(cx->i32, magic), cx->f32, ""), "");
    LLVMValueRef osmall =
        LLVMBuildSub(b, LLVMBuildBitCast(b, fs, cx->i32, ""), cg_ic(cx->i32, magic), "");
    /* Normal results. */
    LLVMValueRef odd =
        LLVMBuildAnd(b, LLVMBuildLShr(b, a, cg_ic(cx->i32, 13), ""), cg_ic(cx->i32, 1), "");
    LLVMValueRef n =
        LLVMBuildAdd(b, a, cg_ic(cx->i32, (uint32_t)(0x100000000LL - (112LL << 23)) + 0xfff), "");
    n = LLVMBuildLShr(b, LLVMBuildAdd(b, n, odd, ""), cg_ic(cx->i32, 13), "");
    LLVMValueRef o = LLVMBuildSelect(b, big, obig, LLVMBuildSelect(b, small, osmall, n, ""), "");
    o = LLVMBuildOr(b, o, LLVMBuildLShr(b, sign, cg_ic(cx->i32, 16), ""), "");
    return LLVMBuildTrunc(b, o, cx->i16, "");
}

/* Storage value -> compute value. */
static LLVMValueRef cg_from_storage(cg_ctx *cx, LLVMValueRef v, ir_dtype t) {
    switch (t) {
        case IR_F16:
        case IR_BF16: return cg_half_to_f32(cx, v, t);
        case IR_BOOL: return LLVMBuildICmp(cx->b, LLVMIntNE, v, cg_ic(cx->i8, 0), "");
        default: return v;
    }
}

/* Compute value -> storage value. */
static LLVMValueRef cg_to_storage(cg_ctx *cx, LLVMValueRef v, ir_dtype t) {
    switch (t) {
        case IR_F16:
        case IR_BF16: return cg_f32_to_half(cx, v, t);
        case IR_BOOL: return LLVMBuildZExt(cx->b, v, cx->i8, "");
        default: return v;
    }
}

/* Scalar load/store of element lin at dtype t; see codegen.h. */
LLVMValueRef cg_load(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin) {
    LLVMTypeRef st = cg_stype(cx, t);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cx->b, st, base, &lin, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(cx->b, st, p, "");
    LLVMSetAlignment(v, (unsigned)ir_dtype_size(t));
    return cg_from_storage(cx, v, t);
}

void cg_store(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin, LLVMValueRef v) {
    LLVMTypeRef st = cg_stype(cx, t);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cx->b, st, base, &lin, 1, "");
    LLVMValueRef s = LLVMBuildStore(cx->b, cg_to_storage(cx, v, t), p);
    LLVMSetAlignment(s, (unsigned)ir_dtype_size(t));
}

/* Words (1, 2 or 4 of 32 bits) of a hinted access of `bytes` bytes; 0: not one (plain access). */
static unsigned cg_cs_words(const cg_ctx *cx, unsigned bytes) {
    return cx->gpu && cx->last_use && (bytes == 4 || bytes == 8 || bytes == 16) ? bytes / 4 : 0;
}

/* ld.global.cs of n 32-bit words at global pointer p with builder b, as <n x i32>. */
static LLVMValueRef cg_cs_load(cg_ctx *cx, LLVMBuilderRef b, LLVMValueRef p, unsigned n) {
    static const char *text[5] = {NULL, "ld.global.cs.b32 $0, [$1];",
                                  "ld.global.cs.v2.b32 {$0, $1}, [$2];", NULL,
                                  "ld.global.cs.v4.b32 {$0, $1, $2, $3}, [$4];"};
    static const char *cons[5] = {NULL, "=r,l", "=r,=r,l", NULL, "=r,=r,=r,=r,l"};
    LLVMTypeRef el[4] = {cx->i32, cx->i32, cx->i32, cx->i32};
    LLVMTypeRef rt = n == 1 ? cx->i32 : LLVMStructTypeInContext(cx->llctx, el, n, 0);
    LLVMTypeRef pt = LLVMTypeOf(p);
    LLVMTypeRef fty = LLVMFunctionType(rt, &pt, 1, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text[n], strlen(text[n]), (char *)cons[n],
                                      strlen(cons[n]), 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef r = LLVMBuildCall2(b, fty, a, &p, 1, "ldcs");
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(cx->i32, n));
    for (unsigned j = 0; j < n; j++)
        v = LLVMBuildInsertElement(b, v, n == 1 ? r : LLVMBuildExtractValue(b, r, j, ""),
                                   LLVMConstInt(cx->i32, j, 0), "");
    return v;
}

/* st.global.cs of the n 32-bit words of <n x i32> v at global pointer p. */
static void cg_cs_store(cg_ctx *cx, LLVMValueRef p, LLVMValueRef v, unsigned n) {
    static const char *text[5] = {NULL, "st.global.cs.b32 [$0], $1;",
                                  "st.global.cs.v2.b32 [$0], {$1, $2};", NULL,
                                  "st.global.cs.v4.b32 [$0], {$1, $2, $3, $4};"};
    static const char *cons[5] = {NULL, "l,r,~{memory}", "l,r,r,~{memory}", NULL,
                                  "l,r,r,r,r,~{memory}"};
    LLVMValueRef args[5] = {p};
    LLVMTypeRef pt[5] = {LLVMTypeOf(p)};
    for (unsigned j = 0; j < n; j++) {
        args[j + 1] = LLVMBuildExtractElement(cx->b, v, LLVMConstInt(cx->i32, j, 0), "");
        pt[j + 1] = cx->i32;
    }
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(cx->llctx), pt, n + 1, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text[n], strlen(text[n]), (char *)cons[n],
                                      strlen(cons[n]), 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMBuildCall2(cx->b, fty, a, args, n + 1, "");
}

/* Vector load of vecw elements of dtype t at element lin (aligned to the
 * vector size), returned as storage vector; streaming (cx->last_use) on the GPU. */
/* The alignment a vector access of `bytes` (a power of two) may claim: its own size up to 16,
 * the alignment every buffer has (docs/codegen.md "Buffers"; the host's 32-byte groups of 8
 * f32 start on 16-byte boundaries only, and an aligned AVX move faults on them). */
static unsigned cg_vec_align(unsigned bytes) { return bytes < 16 ? bytes : 16; }

LLVMValueRef cg_load_vec(cg_ctx *cx, LLVMBuilderRef b, LLVMValueRef base, ir_dtype t,
                         LLVMValueRef lin, unsigned w) {
    LLVMTypeRef st = cg_stype(cx, t), vt = LLVMVectorType(st, w);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(b, st, base, &lin, 1, "");
    unsigned n = cg_cs_words(cx, w * (unsigned)ir_dtype_size(t));
    if (n) return LLVMBuildBitCast(b, cg_cs_load(cx, b, p, n), vt, "vld");
    LLVMValueRef v = LLVMBuildLoad2(b, vt, p, "vld");
    LLVMSetAlignment(v, cg_vec_align(w * (unsigned)ir_dtype_size(t)));
    return v;
}

/* Stores w compute values vals[] as one vector at element lin. */
void cg_vec_begin(cg_ctx *cx, const ir_shape *s, unsigned w, unsigned n, const LLVMValueRef *lins,
                  LLVMBuilderRef vecb) {
    cx->vecw = w;
    cx->vecn = n;
    cx->nvecalias = 0;
    cx->vecshape = s;
    cx->vecb = vecb;
    for (unsigned j = 0; j < n; j++) cx->veclin[j] = lins[j];
    cx->nveccat = cx->nvecix = cx->nvecx = 0;
    memset(cx->veccache, 0, (size_t)cx->g->n * CG_VEC_MAXLIN * sizeof *cx->veccache);
    memset(cx->vecbase, 0, (size_t)cx->g->n * CG_VEC_MAXLIN * sizeof *cx->vecbase);
}

void cg_vec_end(cg_ctx *cx) {
    cx->vecw = cx->vecn = cx->nvecalias = 0;
    cx->vecshape = NULL;
    cx->vecb = NULL;
}

void cg_store_vec(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin, LLVMValueRef *vals,
                  unsigned w) {
    LLVMTypeRef st = cg_stype(cx, t), vt = LLVMVectorType(st, w);
    LLVMValueRef v = LLVMGetUndef(vt);
    for (unsigned j = 0; j < w; j++)
        v = LLVMBuildInsertElement(cx->b, v, cg_to_storage(cx, vals[j], t),
                                   LLVMConstInt(cx->i32, j, 0), "");
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cx->b, st, base, &lin, 1, "");
    unsigned n = cg_cs_words(cx, w * (unsigned)ir_dtype_size(t));
    if (n) {
        cg_cs_store(cx, p, LLVMBuildBitCast(cx->b, v, LLVMVectorType(cx->i32, n), ""), n);
        return;
    }
    LLVMValueRef s = LLVMBuildStore(cx->b, v, p);
    LLVMSetAlignment(s, cg_vec_align(w * (unsigned)ir_dtype_size(t)));
}

/* ---- conversions -------------------------------------------------------- */

/* Rounds an f32 compute value to f16/bf16 precision (for casts). */
static LLVMValueRef cg_round_half(cg_ctx *cx, LLVMValueRef v, ir_dtype t) {
    return cg_half_to_f32(cx, cg_f32_to_half(cx, v, t), t);
}

/* Cast of a compute value (spec: truncation toward zero, != 0 for bool). */
LLVMValueRef cg_convert(cg_ctx *cx, LLVMValueRef v, ir_dtype from, ir_dtype to) {
    LLVMBuilderRef b = cx->b;
    bool ff = ir_dtype_is_float(from), tf = ir_dtype_is_float(to);
    if (from == to) return v;
    if (ff && tf) return to == IR_F32 ? v : cg_round_half(cx, v, to);
    if (to == IR_BOOL) {
        if (ff) return LLVMBuildFCmp(b, LLVMRealUNE, v, cg_f32c(cx, 0.0), "");
        return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
    }
    if (tf) {
        LLVMValueRef f = from == IR_BOOL ? LLVMBuildUIToFP(b, v, cx->f32, "")
                                         : LLVMBuildSIToFP(b, v, cx->f32, "");
        return to == IR_F32 ? f : cg_round_half(cx, f, to);
    }
    if (ff) { /* float -> i32: truncation toward zero, saturating, NaN -> 0 */
        LLVMTypeRef tys[2] = {cx->i32, cx->f32}, fty;
        LLVMValueRef fn = cg_intrinsic(cx, "llvm.fptosi.sat", tys, 2, &fty);
        return LLVMBuildCall2(b, fty, fn, &v, 1, "");
    }
    return LLVMBuildZExt(b, v, cx->i32, ""); /* bool -> i32 */
}

/* Element lin of dtype t as f32; see cg_impl.h. */
LLVMValueRef cg_load_f32(cg_ctx *cx, LLVMValueRef base, ir_dtype t, LLVMValueRef lin) {
    return cg_convert(cx, cg_load(cx, base, t, lin), t, IR_F32);
}

/* x rounded to t and back to f32; see cg_impl.h. */
LLVMValueRef cg_round_f32(cg_ctx *cx, LLVMValueRef x, ir_dtype t) {
    switch (t) {
        case IR_F16:
        case IR_BF16: return cg_round_half(cx, x, t);
        case IR_I32: return cg_call_intrinsic(cx, "llvm.trunc", true, &x, 1);
        case IR_BOOL: {
            LLVMValueRef nz = LLVMBuildFCmp(cx->b, LLVMRealUNE, x, cg_f32c(cx, 0.0), "");
            return LLVMBuildUIToFP(cx->b, nz, cx->f32, "");
        }
        case IR_F32:
        case IR_NDTYPES: return x;
    }
    return x;
}

/* ---- elementwise ops ----------------------------------------------------- */

/* Calls a one-argument overloaded intrinsic. */
static LLVMValueRef cg_intr1(cg_ctx *cx, const char *name, LLVMValueRef a) {
    return cg_call_intrinsic(cx, name, true, &a, 1);
}

/* Calls a two-argument overloaded intrinsic. */
static LLVMValueRef cg_intr2(cg_ctx *cx, const char *name, LLVMValueRef a, LLVMValueRef c) {
    LLVMValueRef v[2] = {a, c};
    return cg_call_intrinsic(cx, name, true, v, 2);
}

/* The elementwise dispatch names every op: -Wswitch-enum makes a missing
 * case a build error. */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch-enum"

/* Reports that the elementwise dispatch has no kernel rule for op at dtype t
 * (an internal error: the caller gets NULL and stops). */
static LLVMValueRef cg_no_rule(cg_ctx *cx, ir_op op, ir_dtype t) {
    tx_error(cx->diag, "codegen: internal error: no %s kernel rule for op '%s' at %s",
             cx->gpu ? "GPU" : "host", ir_op_name(op), ir_dtype_name(t));
    return NULL;
}

/* Float op on f32 compute values: simple ops inline, the math functions
 * through cg_math. Names every op; NULL (reported) for ops with no
 * elementwise rule. */
static LLVMValueRef cg_float_op(cg_ctx *cx, ir_op op, LLVMValueRef a, LLVMValueRef c) {
    LLVMBuilderRef b = cx->b;
    switch (op) {
        case IR_OP_NEG: return LLVMBuildFNeg(b, a, "");
        case IR_OP_ABS: return cg_intr1(cx, "llvm.fabs", a);
        case IR_OP_RECIP: return LLVMBuildFDiv(b, cg_f32c(cx, 1.0), a, "");
        case IR_OP_RELU:
            return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, a, cg_f32c(cx, 0.0), ""),
                                   cg_f32c(cx, 0.0), a, "");
        case IR_OP_FLOOR: return cg_intr1(cx, "llvm.floor", a);
        case IR_OP_CEIL: return cg_intr1(cx, "llvm.ceil", a);
        case IR_OP_ADD: return LLVMBuildFAdd(b, a, c, "");
        case IR_OP_SUB: return LLVMBuildFSub(b, a, c, "");
        case IR_OP_MUL: return LLVMBuildFMul(b, a, c, "");
        case IR_OP_DIV: return LLVMBuildFDiv(b, a, c, "");
        case IR_OP_MAXIMUM: return cg_intr2(cx, "llvm.maximum", a, c);
        case IR_OP_MINIMUM: return cg_intr2(cx, "llvm.minimum", a, c);
        case IR_OP_LT: return LLVMBuildFCmp(b, LLVMRealOLT, a, c, "");
        case IR_OP_LE: return LLVMBuildFCmp(b, LLVMRealOLE, a, c, "");
        case IR_OP_GT: return LLVMBuildFCmp(b, LLVMRealOGT, a, c, "");
        case IR_OP_GE: return LLVMBuildFCmp(b, LLVMRealOGE, a, c, "");
        case IR_OP_EQ: return LLVMBuildFCmp(b, LLVMRealOEQ, a, c, "");
        case IR_OP_NE: return LLVMBuildFCmp(b, LLVMRealUNE, a, c, "");
        case IR_OP_EXP:
        case IR_OP_EXP2:
        case IR_OP_LOG:
        case IR_OP_LOG2:
        case IR_OP_SQRT:
        case IR_OP_RSQRT:
        case IR_OP_SIN:
        case IR_OP_COS:
        case IR_OP_TANH:
        case IR_OP_SIGMOID:
        case IR_OP_GELU:
        case IR_OP_GELU_TANH:
        case IR_OP_SILU:
        case IR_OP_ERF:
        case IR_OP_POW: return cg_math(cx, op, a, c);
        case IR_OP_NOT: /* bool operands only (cg_int_op) */
        case IR_OP_AND:
        case IR_OP_OR:
        case IR_OP_CAST:  /* cg_convert */
        case IR_OP_WHERE: /* cg_emit_op */
        case IR_OP_INPUT:
        case IR_OP_CONST:
        case IR_OP_IOTA: /* cg_iota */
        case IR_OP_PICK: /* cg_emit_pick */
        case IR_OP_SUM:
        case IR_OP_MEAN:
        case IR_OP_MAX:
        case IR_OP_MIN:
        case IR_OP_MATMUL:
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT:
        case IR_OP_OUTPUT:
        case IR_NOPS: break;
    }
    return cg_no_rule(cx, op, IR_F32);
}

/* i32 a / b by ir/scalar.c's rule: truncation toward zero, x / 0 = 0,
 * INT_MIN / -1 wraps to INT_MIN (the divisor is replaced by 1 where sdiv
 * would trap or overflow). */
static LLVMValueRef cg_idiv(cg_ctx *cx, LLVMValueRef a, LLVMValueRef c) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef z = LLVMConstInt(cx->i32, 0, 0), one = LLVMConstInt(cx->i32, 1, 0);
    LLVMValueRef c0 = LLVMBuildICmp(b, LLVMIntEQ, c, z, "");
    LLVMValueRef ov =
        LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, a, LLVMConstInt(cx->i32, 0x80000000u, 0), ""),
                     LLVMBuildICmp(b, LLVMIntEQ, c, LLVMConstAllOnes(cx->i32), ""), "");
    LLVMValueRef q =
        LLVMBuildSDiv(b, a, LLVMBuildSelect(b, LLVMBuildOr(b, c0, ov, ""), one, c, ""), "");
    return LLVMBuildSelect(b, c0, z, q, "");
}

/* i32 a ** c by ir/scalar.c's rule: square and multiply over the 31
 * exponent bits, wrapping (straight-line selects, no loop); c < 0 gives 1
 * for a = 1, +-1 by parity for a = -1, else 0. */
static LLVMValueRef cg_ipow(cg_ctx *cx, LLVMValueRef a, LLVMValueRef c) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef z = LLVMConstInt(cx->i32, 0, 0), one = LLVMConstInt(cx->i32, 1, 0);
    LLVMValueRef r = one, p = a;
    for (unsigned i = 0; i < 31; i++) {
        LLVMValueRef bit = LLVMBuildAnd(b, c, LLVMConstInt(cx->i32, 1u << i, 0), "");
        LLVMValueRef set = LLVMBuildICmp(b, LLVMIntNE, bit, z, "");
        r = LLVMBuildSelect(b, set, LLVMBuildMul(b, r, p, ""), r, "");
        if (i < 30) p = LLVMBuildMul(b, p, p, "");
    }
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, c, one, ""), z, "");
    LLVMValueRef m1 = LLVMBuildSelect(b, odd, LLVMConstAllOnes(cx->i32), one, "");
    LLVMValueRef neg = LLVMBuildSelect(
        b, LLVMBuildICmp(b, LLVMIntEQ, a, one, ""), one,
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, a, LLVMConstAllOnes(cx->i32), ""), m1, z,
                        ""),
        "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, c, z, ""), neg, r, "");
}

/* Integer (i32, or i1 for bool) op by ir/scalar.c's integer rules (bool as
 * 0/1, the result != 0); float-only ops are computed in f32 and converted
 * back. Names every op; NULL (reported) for ops with no elementwise rule. */
static LLVMValueRef cg_int_op(cg_ctx *cx, ir_op op, LLVMValueRef a, LLVMValueRef c, bool isbool) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef z = LLVMConstInt(t, 0, 0);
    ir_dtype dt = isbool ? IR_BOOL : IR_I32;
    switch (op) {
        case IR_OP_NEG: return isbool ? a : LLVMBuildNeg(b, a, "");
        case IR_OP_ABS:
            return isbool ? a
                          : LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a, z, ""),
                                            LLVMBuildNeg(b, a, ""), a, "");
        case IR_OP_RELU:
            return isbool ? a
                          : LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a, z, ""), z, a, "");
        case IR_OP_FLOOR:
        case IR_OP_CEIL: return a;
        case IR_OP_ADD: return isbool ? LLVMBuildOr(b, a, c, "") : LLVMBuildAdd(b, a, c, "");
        case IR_OP_SUB: return isbool ? LLVMBuildXor(b, a, c, "") : LLVMBuildSub(b, a, c, "");
        case IR_OP_MUL: return isbool ? LLVMBuildAnd(b, a, c, "") : LLVMBuildMul(b, a, c, "");
        case IR_OP_AND: return LLVMBuildAnd(b, a, c, "");
        case IR_OP_OR: return LLVMBuildOr(b, a, c, "");
        case IR_OP_NOT: return LLVMBuildXor(b, a, LLVMConstInt(t, 1, 0), "");
        case IR_OP_MAXIMUM:
            return LLVMBuildSelect(b, LLVMBuildICmp(b, isbool ? LLVMIntUGT : LLVMIntSGT, a, c, ""),
                                   a, c, "");
        case IR_OP_MINIMUM:
            return LLVMBuildSelect(b, LLVMBuildICmp(b, isbool ? LLVMIntULT : LLVMIntSLT, a, c, ""),
                                   a, c, "");
        case IR_OP_LT: return LLVMBuildICmp(b, isbool ? LLVMIntULT : LLVMIntSLT, a, c, "");
        case IR_OP_LE: return LLVMBuildICmp(b, isbool ? LLVMIntULE : LLVMIntSLE, a, c, "");
        case IR_OP_GT: return LLVMBuildICmp(b, isbool ? LLVMIntUGT : LLVMIntSGT, a, c, "");
        case IR_OP_GE: return LLVMBuildICmp(b, isbool ? LLVMIntUGE : LLVMIntSGE, a, c, "");
        case IR_OP_EQ: return LLVMBuildICmp(b, LLVMIntEQ, a, c, "");
        case IR_OP_NE: return LLVMBuildICmp(b, LLVMIntNE, a, c, "");
        case IR_OP_DIV:
        case IR_OP_POW: {
            LLVMValueRef x = isbool ? LLVMBuildZExt(b, a, cx->i32, "") : a;
            LLVMValueRef y = isbool ? LLVMBuildZExt(b, c, cx->i32, "") : c;
            LLVMValueRef r = op == IR_OP_DIV ? cg_idiv(cx, x, y) : cg_ipow(cx, x, y);
            return isbool ? LLVMBuildICmp(b, LLVMIntNE, r, LLVMConstInt(cx->i32, 0, 0), "") : r;
        }
        case IR_OP_EXP:
        case IR_OP_EXP2:
        case IR_OP_LOG:
        case IR_OP_LOG2:
        case IR_OP_SQRT:
        case IR_OP_RSQRT:
        case IR_OP_RECIP:
        case IR_OP_SIN:
        case IR_OP_COS:
        case IR_OP_TANH:
        case IR_OP_SIGMOID:
        case IR_OP_GELU:
        case IR_OP_GELU_TANH:
        case IR_OP_SILU:
        case IR_OP_ERF: { /* float-only ops on integers: computed in f32 */
            LLVMValueRef r = cg_float_op(cx, op, cg_convert(cx, a, dt, IR_F32), NULL);
            return r ? cg_convert(cx, r, IR_F32, dt) : NULL;
        }
        case IR_OP_CAST:  /* cg_convert */
        case IR_OP_WHERE: /* cg_emit_op */
        case IR_OP_INPUT:
        case IR_OP_CONST:
        case IR_OP_IOTA: /* cg_iota */
        case IR_OP_PICK: /* cg_emit_pick */
        case IR_OP_SUM:
        case IR_OP_MEAN:
        case IR_OP_MAX:
        case IR_OP_MIN:
        case IR_OP_MATMUL:
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT:
        case IR_OP_OUTPUT:
        case IR_NOPS: break;
    }
    return cg_no_rule(cx, op, dt);
}
#pragma GCC diagnostic pop

/* Elementwise op; a, b, c are compute values already converted to dtype t
 * (the op's operand dtype). */
LLVMValueRef cg_emit_op(cg_ctx *cx, ir_op op, ir_dtype t, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef c, ir_dtype rt) {
    (void)rt;
    if (op == IR_OP_WHERE) return LLVMBuildSelect(cx->b, a, b, c, "");
    if (ir_dtype_is_float(t)) return cg_float_op(cx, op, a, b);
    return cg_int_op(cx, op, a, b, t == IR_BOOL);
}

/* ---- memo ------------------------------------------------------------------- */

unsigned cg_memo_mark(const cg_ctx *cx) { return cx->nmemo; }
void cg_memo_reset(cg_ctx *cx, unsigned mark) {
    if (mark < cx->nmemo) cx->nmemo = mark;
}

/* The memoised value of node at index key, or NULL (innermost first). */
static LLVMValueRef cg_memo_get(cg_ctx *cx, ir_id node, LLVMValueRef key) {
    for (unsigned i = cx->nmemo; i-- > 0;)
        if (cx->memo[i].node == node && cx->memo[i].key == key) return cx->memo[i].val;
    return NULL;
}

/* Records node at index key = val in the current memo scope. */
static void cg_memo_put(cg_ctx *cx, ir_id node, LLVMValueRef key, LLVMValueRef val) {
    if (cx->nmemo == cx->memocap) {
        cx->memocap = cx->memocap ? 2 * cx->memocap : 64;
        cx->memo = ir_xrealloc(cx->memo, cx->memocap * sizeof *cx->memo);
    }
    cx->memo[cx->nmemo++] = (cg_memo_ent){node, key, val};
}

/* ---- cg_emit_value ------------------------------------------------------------ */

/* Compute-type immediate of a constant node. */
static LLVMValueRef cg_const(cg_ctx *cx, const ir_node *n) {
    double v = n->a.cval;
    switch ((ir_dtype)n->dtype) {
        case IR_I32:
            return LLVMConstInt(cx->i32, (unsigned long long)(int64_t)(int32_t)(int64_t)v, 1);
        case IR_BOOL: return LLVMConstInt(cx->i1, v != 0, 0);
        case IR_F16: return cg_f32c(cx, ir_f16_to_f32(ir_f32_to_f16((float)v)));
        case IR_BF16: return cg_f32c(cx, ir_bf16_to_f32(ir_f32_to_bf16((float)v)));
        default: return cg_f32c(cx, (float)v);
    }
}

/* An iota's value at idx: the index along its axis, as i32. */
static LLVMValueRef cg_iota(cg_ctx *cx, const ir_node *n, cg_index *idx) {
    cg_index_dims(cx, idx);
    return LLVMBuildTrunc(cx->b, idx->dim[n->a.axis], cx->i32, "iota");
}

/* The <vecw x T> vector of HBM value id at element start (aligned), for vector group j / vecw:
 * loaded once per group and start (veccache, then vecx for a second start of the same group),
 * where the group loads go. NULL when both tables are taken (the caller loads the element
 * alone). */
static LLVMValueRef cg_vec_group(cg_ctx *cx, ir_id id, LLVMValueRef buf, LLVMValueRef start,
                                 unsigned j) {
    ir_dtype t = (ir_dtype)cx->g->nodes[id].dtype;
    LLVMBuilderRef b = cx->vecb ? cx->vecb : cx->b;
    size_t s = (size_t)id * CG_VEC_MAXLIN + j / cx->vecw;
    if (!cx->veccache[s]) {
        cx->veccache[s] = cg_load_vec(cx, b, buf, t, start, cx->vecw);
        cx->vecbase[s] = start;
    }
    if (!cx->vecbase[s] || cx->vecbase[s] == start) return cx->veccache[s];
    for (unsigned e = 0; e < cx->nvecx; e++)
        if (cx->vecx[e].id == id && cx->vecx[e].start == start) return cx->vecx[e].vec;
    if (cx->nvecx >= CG_VEC_MAXLIN) return NULL;
    unsigned e = cx->nvecx++;
    cx->vecx[e].id = id, cx->vecx[e].start = start;
    cx->vecx[e].vec = cg_load_vec(cx, b, buf, t, start, cx->vecw);
    return cx->vecx[e].vec;
}

/* Lane j % vecw of HBM value id's vector group j / vecw that starts at element start (aligned),
 * as a compute value: one vector load per group (veccache), NULL when that group's entry was
 * loaded at another start (the caller loads the element alone). */
static LLVMValueRef cg_vec_lane(cg_ctx *cx, ir_id id, LLVMValueRef buf, LLVMValueRef start,
                                unsigned j) {
    ir_dtype t = (ir_dtype)cx->g->nodes[id].dtype;
    LLVMValueRef vec = cg_vec_group(cx, id, buf, start, j);
    if (!vec) return NULL;
    unsigned l = j % cx->vecw;
    if (t == IR_BF16 && cx->vecw % 2 == 0) { /* a bf16 is the top half of an f32: one operation */
        LLVMValueRef words =
            LLVMBuildBitCast(cx->b, vec, LLVMVectorType(cx->i32, cx->vecw / 2), "");
        LLVMValueRef wd =
            LLVMBuildExtractElement(cx->b, words, LLVMConstInt(cx->i32, l / 2, 0), "");
        wd = l % 2 ? LLVMBuildAnd(cx->b, wd, cg_ic(cx->i32, 0xffff0000u), "")
                   : LLVMBuildShl(cx->b, wd, cg_ic(cx->i32, 16), "");
        return LLVMBuildBitCast(cx->b, wd, cx->f32, "");
    }
    LLVMValueRef e = LLVMBuildExtractElement(cx->b, vec, LLVMConstInt(cx->i32, l, 0), "");
    return cg_from_storage(cx, e, t);
}

/* Loads an HBM value at idx, through the pointwise vector cache when idx is
 * element j of the current vector group (or a lane cg_vec_bcast / cg_vec_concat derived). */
static LLVMValueRef cg_load_value(cg_ctx *cx, ir_id id, cg_index *idx) {
    const ir_node *n = &cx->g->nodes[id];
    LLVMValueRef base = cx->valptr[id];
    if (!base) {
        tx_error(cx->diag, "codegen: internal error: value %%%u has no buffer in kernel %s", id,
                 cx->k ? cx->k->name : "?");
        return NULL;
    }
    for (unsigned a = 0; cx->vecw && a < cx->nvecalias; a++) {
        const ir_shape *as = cx->vecalias[a].shape;
        if (idx->lin != cx->vecalias[a].lin ||
            !(ir_shape_eq(as, &n->shape) ||
              (ir_shape_numel(as) > 0 && ir_shape_numel(as) == ir_shape_numel(&n->shape))))
            continue;
        LLVMValueRef e = cg_vec_lane(cx, id, base, cx->vecalias[a].base, cx->vecalias[a].j);
        if (e) return e;
    }
    if (cx->vecw && cx->vecshape && ir_shape_eq(&n->shape, cx->vecshape)) {
        for (unsigned j = 0; j < cx->vecn; j++) {
            if (idx->lin != cx->veclin[j]) continue;
            LLVMValueRef e = cg_vec_lane(cx, id, base, cx->veclin[j - j % cx->vecw], j);
            if (e) return e;
        }
    }
    return cg_load(cx, base, (ir_dtype)n->dtype, idx->lin);
}

/* The first non-view value under v (v itself when it is not a view; the
 * first input of a concat). */
static ir_id cg_view_source(const ir_graph *g, ir_id v) {
    while (ir_op_traits((ir_op)g->nodes[v].op) & IR_T_VIEW) v = ir_in(g, &g->nodes[v], 0);
    return v;
}

/* Value of input k of node n at the index idx of n (broadcast applied),
 * converted to dtype t. */
static LLVMValueRef cg_operand(cg_ctx *cx, const ir_node *n, unsigned k, cg_index *idx,
                               ir_dtype t) {
    ir_id in = ir_in(cx->g, n, k);
    const ir_node *p = &cx->g->nodes[in];
    cg_index ci = cg_index_bcast(cx, idx, &p->shape);
    LLVMValueRef v = cg_emit_value(cx, in, &ci);
    if (!v) return NULL;
    return cg_convert(cx, v, (ir_dtype)p->dtype, t);
}

/* Whether f32 value v is a compile-time constant c whose reciprocal and c itself are normal
 * floats (so x * (1 / c) neither overflows nor loses x / c to a subnormal reciprocal); *rc gets
 * 1 / c rounded to f32. */
static bool const_rcp(LLVMValueRef v, double *rc) {
    if (!v || !LLVMIsAConstantFP(v)) return false;
    LLVMBool lossy = 0;
    double c = LLVMConstRealGetDouble(v, &lossy);
    float r = (float)(1.0 / c);
    if (!(fabs(c) >= 0x1p-126 && fabs(c) <= 0x1p126)) return false;
    *rc = (double)r;
    return true;
}

/* x / d from y = 1 / d rounded to f32: q = x * y (within an ulp of x / d), the residual
 * x - d * q (exact through an FMA), then q + residual * y, the correctly rounded quotient
 * (Markstein's theorem; so a division feeding floor, a cast to i32 or a compare agrees with
 * PyTorch's IEEE division). Where that correction is NaN (x or d infinite, d zero, q overflowed)
 * the quotient is q itself, which is then already the IEEE result. */
static LLVMValueRef cg_div_by_rcp(cg_ctx *cx, LLVMValueRef x, LLVMValueRef d, LLVMValueRef y) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef q = LLVMBuildFMul(b, x, y, "");
    LLVMValueRef ra[3] = {LLVMBuildFNeg(b, d, ""), q, x};
    LLVMValueRef res = cg_call_intrinsic(cx, "llvm.fma", true, ra, 3);
    LLVMValueRef qa[3] = {res, y, q};
    LLVMValueRef q1 = cg_call_intrinsic(cx, "llvm.fma", true, qa, 3);
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealORD, q1, q1, ""), q1, q, "");
}

/* Whether c is a power of two (its reciprocal exact, so x * (1 / c) is x / c exactly unless
 * the quotient is subnormal). */
static bool pow2(double c) {
    int e;
    return fabs(frexp(c, &e)) == 0.5;
}

/* Whether cx emits an attention kernel (its score graph). */
static bool in_attention(const cg_ctx *cx) {
    return cx->region != IR_NONE && cx->g->regions[cx->region].kind == IR_RK_ATTENTION;
}

/* Elementwise node at idx. */
static LLVMValueRef cg_emit_elem(cg_ctx *cx, const ir_node *n, cg_index *idx) {
    ir_op op = (ir_op)n->op;
    ir_dtype rt = (ir_dtype)n->dtype, t = rt;
    const ir_graph *g = cx->g;
    if (op == IR_OP_CAST) {
        ir_id in = ir_in(g, n, 0);
        cg_index ci = cg_index_bcast(cx, idx, &g->nodes[in].shape);
        LLVMValueRef v = cg_emit_value(cx, in, &ci);
        return v ? cg_convert(cx, v, (ir_dtype)g->nodes[in].dtype, rt) : NULL;
    }
    if (op == IR_OP_WHERE) {
        LLVMValueRef c = cg_operand(cx, n, 0, idx, IR_BOOL);
        LLVMValueRef a = c ? cg_operand(cx, n, 1, idx, rt) : NULL;
        LLVMValueRef b = a ? cg_operand(cx, n, 2, idx, rt) : NULL;
        return b ? cg_emit_op(cx, op, rt, c, a, b, rt) : NULL;
    }
    t = ir_elem_compute_dtype(g, n);
    LLVMValueRef a = cg_operand(cx, n, 0, idx, t);
    LLVMValueRef b = (a && n->nin > 1) ? cg_operand(cx, n, 1, idx, t) : NULL;
    if (!a || (n->nin > 1 && !b)) return NULL;
    LLVMValueRef r;
    double rc_c;
    ir_id dv = n->nin > 1 ? cg_view_source(g, ir_in(g, n, 1)) : IR_NONE;
    if (op == IR_OP_DIV && ir_dtype_is_float(t) && dv != IR_NONE && cx->subst[dv] &&
        b == cx->subst[dv]) {
        /* Division by a row scalar (a reduction result, e.g. softmax's sum):
         * one reciprocal per row, then a corrected product per element. */
        LLVMValueRef rc = cg_memo_get(cx, g->n + dv, b);
        if (!rc) {
            rc = LLVMBuildFDiv(cx->b, cg_f32c(cx, 1.0), b, "rcp");
            cg_memo_put(cx, g->n + dv, b, rc);
        }
        r = cg_div_by_rcp(cx, a, b, rc);
    } else if (op == IR_OP_DIV && ir_dtype_is_float(t) && const_rcp(b, &rc_c)) {
        /* Division by a constant (a soft cap's s / c, amax / 127): the reciprocal rounded once
         * at compile time, the product corrected to the IEEE quotient unless c is a power of
         * two (then the product is exact) or the value is an attention score (a soft cap's
         * s / c feeds only tanh and exp: the bare product, <= 1.5 ulp, per score); f16 / bf16
         * values are computed in f32 too, so a 16-bit quotient is the f32 one rounded once more */
        r = pow2(rc_c) || in_attention(cx) ? LLVMBuildFMul(cx->b, a, cg_f32c(cx, rc_c), "")
                                           : cg_div_by_rcp(cx, a, b, cg_f32c(cx, rc_c));
    } else {
        r = cg_emit_op(cx, op, t, a, b, NULL, rt);
    }
    if (!r) return NULL;
    if (!(ir_op_traits(op) & IR_T_CMP) && t != rt) r = cg_convert(cx, r, t, rt);
    return r;
}

/* The group entry of concat n (CG_VCAT_MAX inputs at most) for the vector group g starting at
 * element start of n: each input's lin of that element (its position along the axis clamped to
 * the input's extent, as the scalar path reads) and whether the element lies in it, computed
 * once per group where the group loads go. Returns the entry, -1 when the table is full. */
static int cg_vec_concat_group(cg_ctx *cx, const ir_node *n, unsigned g, LLVMValueRef start) {
    const ir_graph *g_ = cx->g;
    ir_id id = (ir_id)(n - g_->nodes);
    for (unsigned e = 0; e < cx->nveccat; e++)
        if (cx->veccat[e].cat == id && cx->veccat[e].g == g) return (int)e;
    if (cx->nveccat >= CG_VEC_MAXLIN) return -1;
    unsigned e = cx->nveccat++, ax = (unsigned)n->a.axis;
    cx->veccat[e].cat = id, cx->veccat[e].g = g;
    LLVMBuilderRef saved = cx->b;
    if (cx->vecb) cx->b = cx->vecb;
    cg_index gi = cg_index_lin(&n->shape, start);
    cg_index_dims(cx, &gi);
    LLVMValueRef pos = gi.dim[ax], off = cg_i64(cx, 0), rel = pos, d[IR_MAX_RANK];
    for (unsigned k = 1; k < n->nin; k++) {
        off =
            LLVMBuildAdd(cx->b, off, cg_dim(cx, g_->nodes[ir_in(g_, n, k - 1)].shape.dim[ax]), "");
        LLVMValueRef r = LLVMBuildSub(cx->b, pos, off, "");
        rel = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGE, r, cg_i64(cx, 0), ""), r, rel,
                              "");
    }
    off = cg_i64(cx, 0);
    unsigned span = ax + 1 == n->shape.rank ? cx->vecw : 1; /* the group's extent along ax */
    for (unsigned k = 0; k < n->nin; k++) {
        const ir_shape *ks = &g_->nodes[ir_in(g_, n, k)].shape;
        LLVMValueRef len = cg_dim(cx, ks->dim[ax]),
                     hi = LLVMBuildSub(cx->b, len, cg_i64(cx, span), "");
        for (unsigned i = 0; i < n->shape.rank; i++) d[i] = gi.dim[i];
        d[ax] = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGT, rel, hi, ""), hi, rel, "");
        cx->veccat[e].base[k] = cg_index_from_dims(cx, ks, d).lin;
        cx->veccat[e].in[k] =
            LLVMBuildICmp(cx->b, LLVMIntSGE, LLVMBuildSub(cx->b, pos, off, ""), cg_i64(cx, 0), "");
        off = LLVMBuildAdd(cx->b, off, len, "");
    }
    cx->b = saved;
    return (int)e;
}

/* Vector path of concat n at idx: when idx is a lane of the current vector groups (cg_vec_of)
 * and pass_vec_concat holds, every element of the lane's group lies in one input at consecutive
 * positions from an aligned start;
 * each input is read at its lane (recorded with cg_vec_alias: one vector load per group and
 * input) and the one the group lies in selected. NULL when not applicable (the scalar path
 * reads the element), or on an error (*failed set). */
static LLVMValueRef cg_vec_concat(cg_ctx *cx, const ir_node *n, cg_index *idx, bool *failed) {
    const ir_graph *g = cx->g;
    unsigned j;
    LLVMValueRef start;
    if (!pass_vec_concat(g, n, cx->vecw) || !cg_vec_of(cx, idx, &j, &start)) return NULL;
    int e = cg_vec_concat_group(cx, n, j / cx->vecw, start);
    if (e < 0) return NULL;
    LLVMValueRef res = NULL;
    unsigned lane = j % cx->vecw;
    for (unsigned k = 0; k < n->nin; k++) {
        ir_id ik = ir_in(g, n, k);
        LLVMValueRef base = cx->veccat[e].base[k];
        LLVMValueRef lin = lane ? LLVMBuildNUWAdd(cx->b, base, cg_i64(cx, lane), "") : base;
        cg_vec_alias(cx, lin, base, j, &g->nodes[ik].shape, false);
        cg_index kk = cg_index_lin(&g->nodes[ik].shape, lin);
        LLVMValueRef v = cg_emit_value(cx, ik, &kk);
        if (!v) {
            *failed = true;
            return NULL;
        }
        v = cg_convert(cx, v, (ir_dtype)g->nodes[ik].dtype, (ir_dtype)n->dtype);
        res = res ? LLVMBuildSelect(cx->b, cx->veccat[e].in[k], v, res, "") : v;
    }
    return res;
}

/* Vector path of slice n at idx: when idx is a lane of the current vector groups (cg_vec_of)
 * and pass_vec_slice holds, the lane's group maps to consecutive elements of the input from an
 * aligned start:
 * the input is read at base + lane (recorded with cg_vec_alias: one vector load per group),
 * base the input's lin of the group's first element (cg_vec_base). NULL when not applicable
 * (the scalar path indexes the element). */
static LLVMValueRef cg_vec_slice(cg_ctx *cx, const ir_node *n, cg_index *idx) {
    const ir_graph *g = cx->g;
    const ir_shape *is = &g->nodes[ir_in(g, n, 0)].shape;
    unsigned j;
    LLVMValueRef start;
    if (!pass_vec_slice(g, n, cx->vecw) || !cg_vec_of(cx, idx, &j, &start)) return NULL;
    LLVMValueRef base = cg_vec_base(cx, CG_VIX_SLICE, n, &n->shape, is, start);
    if (!base) return NULL;
    unsigned lane = j % cx->vecw;
    LLVMValueRef lin = lane ? LLVMBuildNUWAdd(cx->b, base, cg_i64(cx, lane), "") : base;
    cg_vec_alias(cx, lin, base, j, is, false);
    return lin;
}

/* View node at idx: index arithmetic into its input. */
static LLVMValueRef cg_emit_view(cg_ctx *cx, const ir_node *n, cg_index *idx) {
    const ir_graph *g = cx->g;
    ir_id in = ir_in(g, n, 0);
    const ir_shape *is = &g->nodes[in].shape;
    cg_index ci;
    LLVMValueRef d[IR_MAX_RANK];
    switch ((ir_op)n->op) {
        case IR_OP_RESHAPE: ci = cg_index_lin(is, idx->lin); break;
        case IR_OP_BROADCAST: ci = cg_index_bcast(cx, idx, is); break;
        case IR_OP_PERMUTE:
            cg_index_dims(cx, idx);
            for (unsigned i = 0; i < n->shape.rank; i++) d[n->a.perm[i]] = idx->dim[i];
            ci = cg_index_from_dims(cx, is, d);
            break;
        case IR_OP_SLICE: {
            LLVMValueRef vl = cg_vec_slice(cx, n, idx);
            if (vl) {
                ci = cg_index_lin(is, vl);
                break;
            }
            cg_index_dims(cx, idx);
            for (unsigned i = 0; i < n->shape.rank; i++) d[i] = idx->dim[i];
            d[n->a.slice.axis] =
                LLVMBuildNUWAdd(cx->b, d[n->a.slice.axis], cg_i64(cx, n->a.slice.start), "");
            ci = cg_index_from_dims(cx, is, d);
            break;
        }
        case IR_OP_CONCAT: {
            bool failed = false;
            LLVMValueRef vv = cg_vec_concat(cx, n, idx, &failed);
            if (vv || failed) return vv;
            /* Every input is read and the right one selected (straight-line code keeps memoised
             * values dominating). Each is read at the selected input's relative position, clamped
             * to its own extent: inputs of one extent read the same index, so the optimiser merges
             * what they compute alike (rotary's angles, the loads of one pair). */
            cg_index_dims(cx, idx);
            unsigned ax = (unsigned)n->a.axis;
            LLVMValueRef pos = idx->dim[ax], off = cg_i64(cx, 0), rel = pos, res = NULL;
            for (unsigned k = 1; k < n->nin; k++) {
                off = LLVMBuildAdd(cx->b, off,
                                   cg_dim(cx, g->nodes[ir_in(g, n, k - 1)].shape.dim[ax]), "");
                LLVMValueRef r = LLVMBuildSub(cx->b, pos, off, "");
                rel = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGE, r, cg_i64(cx, 0), ""),
                                      r, rel, "");
            }
            off = cg_i64(cx, 0);
            for (unsigned k = 0; k < n->nin; k++) {
                ir_id ik = ir_in(g, n, k);
                const ir_shape *ks = &g->nodes[ik].shape;
                LLVMValueRef len = cg_dim(cx, ks->dim[ax]);
                for (unsigned i = 0; i < n->shape.rank; i++) d[i] = idx->dim[i];
                LLVMValueRef hi = LLVMBuildSub(cx->b, len, cg_i64(cx, 1), "");
                d[ax] = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGT, rel, hi, ""), hi,
                                        rel, "");
                cg_index kk = cg_index_from_dims(cx, ks, d);
                LLVMValueRef v = cg_emit_value(cx, ik, &kk);
                if (!v) return NULL;
                v = cg_convert(cx, v, (ir_dtype)g->nodes[ik].dtype, (ir_dtype)n->dtype);
                LLVMValueRef inside = LLVMBuildICmp(
                    cx->b, LLVMIntSGE, LLVMBuildSub(cx->b, pos, off, ""), cg_i64(cx, 0), "");
                res = res ? LLVMBuildSelect(cx->b, inside, v, res, "") : v;
                off = LLVMBuildAdd(cx->b, off, len, "");
            }
            return res;
        }
        default:
            tx_error(cx->diag, "codegen: internal error: %s is not a view",
                     ir_op_name((ir_op)n->op));
            return NULL;
    }
    LLVMValueRef v = cg_emit_value(cx, in, &ci);
    return v ? cg_convert(cx, v, (ir_dtype)g->nodes[in].dtype, (ir_dtype)n->dtype) : NULL;
}

static LLVMValueRef cg_emit_value_node(cg_ctx *cx, ir_id id, const ir_node *n, cg_index *idx);

/* Pick node n at idx (ir_add_pick's contract): the index i (input 1 at idx); behind a branch
 * taken when 0 <= i < len (the source's loads only in range), the source at idx with n's axis set
 * to i, plus +0 for floats; 0 otherwise. What the branch computes is memoised only inside it. */
static LLVMValueRef cg_emit_pick(cg_ctx *cx, const ir_node *n, cg_index *idx) {
    const ir_graph *g = cx->g;
    ir_id src = ir_in(g, n, 0);
    ir_dtype t = (ir_dtype)n->dtype;
    LLVMValueRef iv = cg_operand(cx, n, 1, idx, IR_I32);
    if (!iv) return NULL;
    LLVMValueRef e = LLVMBuildSExt(cx->b, iv, cx->i64, "pick.e");
    cg_index_dims(cx, idx);
    LLVMValueRef var = cg_var(cx, LLVMConstNull(cg_ctype(cx, t)));
    LLVMBasicBlockRef join =
        cg_if_begin(cx, LLVMBuildICmp(cx->b, LLVMIntULT, e, cg_dim(cx, n->a.pick.len), "pick.in"));
    unsigned mark = cg_memo_mark(cx);
    unsigned a = (unsigned)n->a.pick.axis;
    ir_shape s = n->shape; /* the result's shape with the source's extent at the axis */
    s.dim[a] = n->a.pick.len;
    LLVMValueRef d[IR_MAX_RANK];
    for (unsigned k = 0; k < n->shape.rank; k++) d[k] = idx->dim[k];
    d[a] = e;
    cg_index at = cg_index_from_dims(cx, &s, d);
    cg_index si = cg_index_bcast(cx, &at, &g->nodes[src].shape);
    LLVMValueRef v = cg_emit_value(cx, src, &si);
    if (!v) return NULL;
    if (ir_dtype_is_float(t)) v = LLVMBuildFAdd(cx->b, v, cg_f32c(cx, 0.0), "pick.z");
    LLVMBuildStore(cx->b, v, var);
    cg_memo_reset(cx, mark);
    cg_if_end(cx, join);
    return LLVMBuildLoad2(cx->b, cg_ctype(cx, t), var, "pick");
}

/* The value of node id at idx; see codegen.h. */
LLVMValueRef cg_emit_value(cg_ctx *cx, ir_id id, cg_index *idx) {
    const ir_graph *g = cx->g;
    const ir_node *n = &g->nodes[id];
    if (cx->subst[id]) return cx->subst[id];
    if (n->op == IR_OP_CONST) return cg_const(cx, n);
    if (n->op == IR_OP_IOTA) return cg_iota(cx, n, idx);
    LLVMValueRef v = cg_memo_get(cx, id, idx->lin);
    if (v) return v;
    if (cx->nemit == UINT64_MAX) return NULL; /* already refused */
    if (++cx->nemit > CG_EMIT_MAX || cx->depth >= CG_EMIT_DEPTH) {
        tx_error(cx->diag,
                 "the program is too large to compile: kernel %s %s (nested views and "
                 "concatenations re-read their inputs)",
                 cx->k ? cx->k->name : "?",
                 cx->depth >= CG_EMIT_DEPTH ? "nests values deeper than 8192"
                                            : "computes more than 1000000 values");
        cx->nemit = UINT64_MAX;
        return NULL;
    }
    cx->depth++;
    v = cg_emit_value_node(cx, id, n, idx);
    cx->depth--;
    return v;
}

/* cg_emit_value's body for a node that is neither substituted, constant nor memoised. */
static LLVMValueRef cg_emit_value_node(cg_ctx *cx, ir_id id, const ir_node *n, cg_index *idx) {
    const ir_graph *g = cx->g;
    LLVMValueRef v = NULL;
    unsigned tr = ir_op_traits((ir_op)n->op);
    if (cg_is_hbm(cx, id)) {
        v = cg_load_value(cx, id, idx);
    } else if (tr & IR_T_VIEW) {
        v = cg_emit_view(cx, n, idx); /* index arithmetic in any region */
    } else if (cx->region != IR_NONE && n->region != cx->region) {
        tx_error(
            cx->diag,
            "codegen: internal error: value %%%u of region %u read in region %u without a buffer",
            id, n->region, cx->region);
        return NULL;
    } else if (tr & IR_T_ELEM) {
        v = cg_emit_elem(cx, n, idx);
    } else if (n->op == IR_OP_PICK) {
        v = cg_emit_pick(cx, n, idx);
    } else if (tr & IR_T_VIEW) {
        v = cg_emit_view(cx, n, idx);
    } else {
        tx_error(cx->diag, "codegen: %s node %%%u cannot be computed inside a %s region",
                 ir_op_name((ir_op)n->op), id,
                 cx->region == IR_NONE
                     ? "copy"
                     : ir_region_kind_name((ir_region_kind)g->regions[cx->region].kind));
        return NULL;
    }
    if (v) cg_memo_put(cx, id, idx->lin, v);
    return v;
}
