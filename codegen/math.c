/* math.c - f32 math functions as LLVM IR: portable versions (range
 * reduction and polynomials from llvm.fma, llvm.sqrt, llvm.rint, llvm.fabs and
 * llvm.copysign, which lower on both targets) for the host and the functions
 * the GPU has no faster path for, and GPU versions of exp, exp2, tanh,
 * sigmoid, silu and gelu_tanh on the special-function unit (g_*). log, log2
 * and erf are one formula for both, built for few GPU instructions (erf's
 * tail 2^q alone is ex2.approx on the GPU). All stay within a few ulp
 * (limits and measurements in docs/codegen.md; checked by bench/gpu_math.py
 * on the GPU, tests/unit/test_math_dense.c and tests/scripts/math_ulp.sh on
 * the host). Each is an internal function "tx.NAME" of the module, defined on
 * first use; O3 inlines them. */
#include "codegen/cg_impl.h"

#include <string.h>

/* Builder state saved while a math function body is built. */
typedef struct cg_save {
    LLVMBuilderRef b;
    LLVMValueRef fn;
} cg_save;

/* Shorthands: f32/i32 constants and single IR instructions at cx->b. */
static LLVMValueRef F(cg_ctx *cx, double v) { return cg_f32c(cx, v); }
static LLVMValueRef I(cg_ctx *cx, int64_t v) {
    return LLVMConstInt(cx->i32, (unsigned long long)v, 1);
}

static LLVMValueRef fmul(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFMul(cx->b, a, b, "");
}
static LLVMValueRef fadd(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFAdd(cx->b, a, b, "");
}
static LLVMValueRef fsub(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFSub(cx->b, a, b, "");
}
static LLVMValueRef fdiv(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFDiv(cx->b, a, b, "");
}
static LLVMValueRef sel(cg_ctx *cx, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(cx->b, c, a, b, "");
}
static LLVMValueRef fcmp(cg_ctx *cx, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFCmp(cx->b, p, a, b, "");
}
static LLVMValueRef ffma(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef v[3] = {a, b, c};
    return cg_call_intrinsic(cx, "llvm.fma", true, v, 3);
}
static LLVMValueRef fun1(cg_ctx *cx, const char *name, LLVMValueRef a) {
    return cg_call_intrinsic(cx, name, true, &a, 1);
}
static LLVMValueRef fcopysign(cg_ctx *cx, LLVMValueRef mag, LLVMValueRef sgn) {
    LLVMValueRef v[2] = {mag, sgn};
    return cg_call_intrinsic(cx, "llvm.copysign", true, v, 2);
}

/* mag with the sign of sgn, for a mag whose sign bit is clear: mag | (sgn & 0x80000000), two
 * integer operations (llvm.copysign lowers to an abs, a sign test and a select on NVPTX). A NaN
 * sgn or mag stays NaN. */
static LLVMValueRef fsignor(cg_ctx *cx, LLVMValueRef mag, LLVMValueRef sgn) {
    LLVMValueRef sb = LLVMBuildAnd(cx->b, LLVMBuildBitCast(cx->b, sgn, cx->i32, ""),
                                   LLVMConstInt(cx->i32, 0x80000000u, 0), "");
    return LLVMBuildBitCast(
        cx->b, LLVMBuildOr(cx->b, LLVMBuildBitCast(cx->b, mag, cx->i32, ""), sb, ""), cx->f32, "");
}

/* Horner evaluation of c[0] + c[1] x + ... + c[n-1] x^(n-1) with fma. */
static LLVMValueRef poly(cg_ctx *cx, LLVMValueRef x, const double *c, int n) {
    LLVMValueRef p = F(cx, c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = ffma(cx, p, x, F(cx, c[i]));
    return p;
}

/* 2^n for an i32 n in [-126, 127] as a float (bit construction). */
static LLVMValueRef pow2i(cg_ctx *cx, LLVMValueRef n) {
    LLVMValueRef e = LLVMBuildShl(cx->b, LLVMBuildAdd(cx->b, n, I(cx, 127), ""), I(cx, 23), "");
    return LLVMBuildBitCast(cx->b, e, cx->f32, "");
}

/* p * 2^n for an i32 n in [-252, 254], in two exact steps. */
static LLVMValueRef ldexpf_(cg_ctx *cx, LLVMValueRef p, LLVMValueRef n) {
    LLVMValueRef n1 = LLVMBuildAShr(cx->b, n, I(cx, 1), "");
    LLVMValueRef n2 = LLVMBuildSub(cx->b, n, n1, "");
    return fmul(cx, fmul(cx, p, pow2i(cx, n1)), pow2i(cx, n2));
}

/* x clamped to [lo, hi]; NaN passes through (callers patch it). */
static LLVMValueRef fclamp(cg_ctx *cx, LLVMValueRef x, double lo, double hi) {
    x = sel(cx, fcmp(cx, LLVMRealOGT, x, F(cx, hi)), F(cx, hi), x);
    return sel(cx, fcmp(cx, LLVMRealOLT, x, F(cx, lo)), F(cx, lo), x);
}

/* i1: x is NaN. */
static LLVMValueRef isnanf_(cg_ctx *cx, LLVMValueRef x) { return fcmp(cx, LLVMRealUNO, x, x); }

/* f32 -> i32 for values known to be small integers. */
static LLVMValueRef f2i(cg_ctx *cx, LLVMValueRef x) {
    return LLVMBuildFPToSI(cx->b, x, cx->i32, "");
}

/* e^r - 1 for |r| <= ln2/2 (Taylor to r^9; truncation < 1e-11). */
static LLVMValueRef expm1_small(cg_ctx *cx, LLVMValueRef r) {
    static const double c[] = {1.0 / 2,   1.0 / 6,    1.0 / 24,    1.0 / 120,
                               1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880};
    LLVMValueRef p = poly(cx, r, c, 8);
    return ffma(cx, fmul(cx, r, r), p, r);
}

static const double LN2_HI = 0.693145751953125; /* 16 trailing zero bits */
static const double LN2_LO = 1.42860682030941723212e-6;
static const double LOG2E = 1.4426950408889634;

/* e^x: n = rint(x / ln2), r = x - n ln2 (Cody-Waite), e^r by expm1 + 1. */
static LLVMValueRef m_exp(cg_ctx *cx, LLVMValueRef x) {
    LLVMValueRef xc = fclamp(cx, x, -104.0, 89.0);
    LLVMValueRef nf = fun1(cx, "llvm.rint", fmul(cx, xc, F(cx, LOG2E)));
    LLVMValueRef r = ffma(cx, LLVMBuildFNeg(cx->b, nf, ""), F(cx, LN2_HI), xc);
    r = ffma(cx, LLVMBuildFNeg(cx->b, nf, ""), F(cx, LN2_LO), r);
    LLVMValueRef p = fadd(cx, expm1_small(cx, r), F(cx, 1.0));
    LLVMValueRef res = ldexpf_(cx, p, f2i(cx, nf));
    return sel(cx, isnanf_(cx, x), x, res);
}

/* 2^x: n = rint(x), 2^(x-n) = e^((x-n) ln2). */
static LLVMValueRef m_exp2(cg_ctx *cx, LLVMValueRef x) {
    LLVMValueRef xc = fclamp(cx, x, -152.0, 130.0);
    LLVMValueRef nf = fun1(cx, "llvm.rint", xc);
    LLVMValueRef f = fsub(cx, xc, nf);
    LLVMValueRef r = fmul(cx, f, F(cx, 0.69314718055994531));
    LLVMValueRef p = fadd(cx, expm1_small(cx, r), F(cx, 1.0));
    LLVMValueRef res = ldexpf_(cx, p, f2i(cx, nf));
    return sel(cx, isnanf_(cx, x), x, res);
}

/* log decomposition, one definition for the host and the GPU: x = 2^e m with m in [2/3, 4/3)
 * (k = (bits(x) - bits(2/3)) & 0xff800000 is e in the exponent field, m's bits are bits(x) - k;
 * subnormal x scaled by 2^23 first, the 23 taken off its bits' exponent field), f = m - 1 exact
 * (Sterbenz), log1p(f) = f + f^2 Q(f) with Q an 8-term fit of (log1p(f) - f) / f^2 on [-1/3, 1/3]
 * minimax in the relative error of log1p (0.44 ulp; Lawson's iteratively reweighted least squares
 * on 6000 Chebyshev nodes in double, coefficients rounded to f32: tools/math_fit.py). Returns
 * log1p(f) and sets *kf to e * 2^23 as an f32 (exact: e has at most 8 bits). Valid for positive
 * finite x; special inputs are patched by the callers. No division: 21 PTX instructions, 3 of them
 * register moves. */
static LLVMValueRef log_core(cg_ctx *cx, LLVMValueRef x, LLVMValueRef *kf) {
    LLVMBuilderRef b = cx->b;
    static const double q[] = {-0.49999937415122986, 0.33333197236061096, -0.2500782012939453,
                               0.20011168718338013,  -0.1641596108675003, 0.13995806872844696,
                               -0.1538853943347931,  0.14026357233524323};
    /* u: x's bits, or for a subnormal x those of x 2^23 with 23 taken off the exponent field
     * (below zero: k below is a floor, so it still splits u into 2^(e - 23) and m) */
    LLVMValueRef tiny = fcmp(cx, LLVMRealOLT, x, F(cx, 1.1754943508222875e-38));
    LLVMValueRef us = LLVMBuildSub(
        b, LLVMBuildBitCast(b, fmul(cx, x, F(cx, 8388608.0)), cx->i32, ""), I(cx, 23 << 23), "");
    LLVMValueRef u = sel(cx, tiny, us, LLVMBuildBitCast(b, x, cx->i32, ""));
    LLVMValueRef k = LLVMBuildAnd(b, LLVMBuildSub(b, u, I(cx, 0x3f2aaaab), ""),
                                  LLVMConstInt(cx->i32, 0xff800000u, 0), "");
    LLVMValueRef m = LLVMBuildBitCast(b, LLVMBuildSub(b, u, k, ""), cx->f32, "");
    *kf = LLVMBuildSIToFP(b, k, cx->f32, "");
    LLVMValueRef f = fsub(cx, m, F(cx, 1.0));
    return ffma(cx, fmul(cx, f, f), poly(cx, f, q, 8), f);
}

/* Special values of log/log2: NaN for x < 0 or NaN, -inf at 0, +inf at inf. */
static LLVMValueRef log_special(cg_ctx *cx, LLVMValueRef x, LLVMValueRef r) {
    r = sel(cx, fcmp(cx, LLVMRealOEQ, x, F(cx, __builtin_inf())), x, r);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, x, F(cx, 0.0)), F(cx, -__builtin_inf()), r);
    return sel(cx, fcmp(cx, LLVMRealULT, x, F(cx, 0.0)), F(cx, __builtin_nan("")), r);
}

/* log(x) = e ln2 + log1p(f) as kf (ln2_hi 2^-23) + (kf (ln2_lo 2^-23) + log1p(f)) in two fmas
 * (ln2_hi = ln2 rounded to f32: the product is exact inside the fma). */
static LLVMValueRef m_log(cg_ctx *cx, LLVMValueRef x) {
    LLVMValueRef kf, l1p = log_core(cx, x, &kf);
    LLVMValueRef r = ffma(cx, kf, F(cx, 8.262958317573066e-08),
                          ffma(cx, kf, F(cx, -2.2705247546743555e-16), l1p));
    return log_special(cx, x, r);
}

/* log2(x) = e + log1p(f) log2(e): exact at powers of two. */
static LLVMValueRef m_log2(cg_ctx *cx, LLVMValueRef x) {
    LLVMValueRef kf, l1p = log_core(cx, x, &kf);
    LLVMValueRef r = ffma(cx, l1p, F(cx, LOG2E), fmul(cx, kf, F(cx, 1.0 / 8388608.0)));
    return log_special(cx, x, r);
}

/* tanh(x) = sign(x) * em / (em + 2), em = e^(2|x|) - 1 computed as
 * 2^n (expm1(r) + 1) - 1 = 2^n expm1(r) + (2^n - 1) without cancellation. */
static LLVMValueRef m_tanh(cg_ctx *cx, LLVMValueRef x) {
    LLVMValueRef ax = fun1(cx, "llvm.fabs", x);
    LLVMValueRef u = fmul(cx, fclamp(cx, ax, 0.0, 10.0), F(cx, 2.0));
    LLVMValueRef nf = fun1(cx, "llvm.rint", fmul(cx, u, F(cx, LOG2E)));
    LLVMValueRef r = ffma(cx, LLVMBuildFNeg(cx->b, nf, ""), F(cx, LN2_HI), u);
    r = ffma(cx, LLVMBuildFNeg(cx->b, nf, ""), F(cx, LN2_LO), r);
    LLVMValueRef p2 = pow2i(cx, f2i(cx, nf));
    LLVMValueRef em = ffma(cx, p2, expm1_small(cx, r), fsub(cx, p2, F(cx, 1.0)));
    LLVMValueRef t = fdiv(cx, em, fadd(cx, em, F(cx, 2.0)));
    t = sel(cx, fcmp(cx, LLVMRealOGT, ax, F(cx, 9.1)), F(cx, 1.0), t);
    t = fcopysign(cx, t, x);
    return sel(cx, isnanf_(cx, x), x, t);
}

/* 2^q for q in [-27, -2] (erf's tail): ex2.approx.ftz on the GPU (relative error about 2^-22;
 * no flush: 2^q is normal), the portable exp2 on the host. */
static LLVMValueRef exp2_mid(cg_ctx *cx, LLVMValueRef q) {
    if (cx->gpu) return cg_call_intrinsic(cx, "llvm.nvvm.ex2.approx.ftz.f", false, &q, 1);
    return cg_math(cx, IR_OP_EXP2, q, NULL);
}

/* erf, one formula for the host and the GPU: |x| (1 + P(x^2)) for |x| < 0.9, P a 6-term fit of
 * erf(x)/x - 1 minimax in the relative error (0.20 ulp); 1 - 2^Q(min(|x|, 4)) above, Q a
 * 7-term fit of log2(erfc(x)) on [0.9, 4] minimax in the absolute error of erf, that is with
 * weight erfc(x) (0.03 ulp); 2^Q(4) = 2^-25.9 rounds 1 - 2^Q to 1, so |x| >= 4 needs no
 * branch of its own. Fits: Lawson's iteratively reweighted least squares on 4000 Chebyshev
 * nodes in double, coefficients rounded to f32 (tools/math_fit.py); its f32 emulation with fma
 * and an exact 2^q gives 1.29 ulp (the host JIT, on the portable exp2: 1.37,
 * tests/unit/test_math_dense.c); on the GPU the SFU's 2^-22 relative error adds at most erfc(0.9)
 * 2^-22 = 0.8 ulp. Both branches are straight-line; a NaN fails the comparison and takes the
 * polynomial, which carries it; the sign by bits. 23 PTX instructions on the GPU, 3 of them
 * register moves. */
static LLVMValueRef m_erf(cg_ctx *cx, LLVMValueRef x) {
    static const double ps[] = {0.12837915122509003,  -0.3761252462863922,
                                0.11282140761613846,  -0.026778914034366608,
                                0.005011968780308962, -0.0006090385722927749};
    static const double qs[] = {-0.0002560725260991603, -1.6269986629486084, -0.9190829396247864,
                                -0.1500941663980484,    0.03213903680443764, -0.004408308304846287,
                                0.00028447291697375476};
    LLVMValueRef ax = fun1(cx, "llvm.fabs", x);
    LLVMValueRef small = ffma(cx, ax, poly(cx, fmul(cx, ax, ax), ps, 6), ax);
    LLVMValueRef mv[2] = {ax, F(cx, 4.0)};
    LLVMValueRef am = cg_call_intrinsic(cx, "llvm.minnum", true, mv, 2);
    LLVMValueRef big = fsub(cx, F(cx, 1.0), exp2_mid(cx, poly(cx, am, qs, 7)));
    LLVMValueRef r = sel(cx, fcmp(cx, LLVMRealOGE, ax, F(cx, 0.9)), big, small);
    return fsignor(cx, r, x);
}

/* sin/cos: k = rint(x 2/pi) and r = x - k pi/2 in double (two-part pi/2,
 * exact products for |k| < 2^20), then the quadrant's polynomial in f32. */
static LLVMValueRef m_sincos(cg_ctx *cx, LLVMValueRef x, bool is_cos) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef xd = LLVMBuildFPExt(b, x, cx->f64, "");
    LLVMValueRef kd = fun1(cx, "llvm.rint",
                           LLVMBuildFMul(b, xd, LLVMConstReal(cx->f64, 0.63661977236758134), ""));
    LLVMValueRef rd = LLVMBuildFSub(
        b, xd, LLVMBuildFMul(b, kd, LLVMConstReal(cx->f64, 1.57079632673412561417), ""), "");
    rd = LLVMBuildFSub(
        b, rd, LLVMBuildFMul(b, kd, LLVMConstReal(cx->f64, 6.07710050650619224932e-11), ""), "");
    LLVMValueRef r = LLVMBuildFPTrunc(b, rd, cx->f32, "");
    LLVMTypeRef tys[2] = {cx->i64, cx->f64}, fty;
    LLVMValueRef fn = cg_intrinsic(cx, "llvm.fptosi.sat", tys, 2, &fty);
    LLVMValueRef k = LLVMBuildCall2(b, fty, fn, &kd, 1, "");
    LLVMValueRef q =
        LLVMBuildTrunc(b, LLVMBuildAnd(b, k, LLVMConstInt(cx->i64, 3, 0), ""), cx->i32, "");
    if (is_cos) q = LLVMBuildAnd(b, LLVMBuildAdd(b, q, I(cx, 1), ""), I(cx, 3), "");
    static const double sc[] = {-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880};
    static const double cc[] = {1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800};
    LLVMValueRef z = fmul(cx, r, r);
    LLVMValueRef s = ffma(cx, fmul(cx, r, z), poly(cx, z, sc, 4), r);
    LLVMValueRef c =
        ffma(cx, fmul(cx, z, z), poly(cx, z, cc, 4), ffma(cx, F(cx, -0.5), z, F(cx, 1.0)));
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, I(cx, 1), ""), I(cx, 0), "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, I(cx, 2), ""), I(cx, 0), "");
    LLVMValueRef v = sel(cx, odd, c, s);
    v = sel(cx, neg, LLVMBuildFNeg(b, v, ""), v);
    LLVMValueRef bad = fcmp(cx, LLVMRealUNO, fsub(cx, x, x), F(cx, 0.0)); /* inf or nan */
    return sel(cx, bad, F(cx, __builtin_nan("")), v);
}

/* i1: the sign bit of x is set (true for -0, -inf and negative NaNs). */
static LLVMValueRef signbitf_(cg_ctx *cx, LLVMValueRef x) {
    return LLVMBuildICmp(cx->b, LLVMIntSLT, LLVMBuildBitCast(cx->b, x, cx->i32, ""), I(cx, 0), "");
}

/* pow(a, b) = 2^(b log2|a|) with b log2|a| formed in double from log2's
 * exponent and f32 mantissa log, so large |b log2 a| loses no accuracy; the
 * special cases of C99 Annex F, which NumPy follows (ir/scalar.c's rule):
 * |a| = 0 or inf and b = +-inf by the sign of b and whether |a| < 1; the sign
 * of a negative a (-0 and -inf included) kept for an odd integer b; NaN for a
 * finite a < 0 and a non-integer b; NaN operands give NaN, except that
 * a ** 0 = 1 and 1 ** b = 1 always; (-1) ** +-inf = 1. Exact paths for
 * b == 1 and b == 2. */
static LLVMValueRef m_pow(cg_ctx *cx, LLVMValueRef a, LLVMValueRef bb) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef aa = fun1(cx, "llvm.fabs", a);
    LLVMValueRef kf, l1p = log_core(cx, aa, &kf);
    LLVMValueRef ld = LLVMBuildFAdd(
        b,
        LLVMBuildFMul(b, LLVMBuildFPExt(b, kf, cx->f64, ""),
                      LLVMConstReal(cx->f64, 1.0 / 8388608.0), ""),
        LLVMBuildFMul(b, LLVMBuildFPExt(b, l1p, cx->f64, ""), LLVMConstReal(cx->f64, LOG2E), ""),
        "");
    LLVMValueRef yd = LLVMBuildFMul(b, LLVMBuildFPExt(b, bb, cx->f64, ""), ld, "");
    LLVMValueRef hi = LLVMConstReal(cx->f64, 130.0), lo = LLVMConstReal(cx->f64, -152.0);
    yd = sel(cx, LLVMBuildFCmp(b, LLVMRealOGT, yd, hi, ""), hi, yd);
    yd = sel(cx, LLVMBuildFCmp(b, LLVMRealOLT, yd, lo, ""), lo, yd);
    LLVMValueRef nd = fun1(cx, "llvm.rint", yd);
    LLVMValueRef f = LLVMBuildFPTrunc(b, LLVMBuildFSub(b, yd, nd, ""), cx->f32, "");
    LLVMValueRef p = fadd(cx, expm1_small(cx, fmul(cx, f, F(cx, 0.69314718055994531))), F(cx, 1.0));
    LLVMValueRef r = ldexpf_(cx, p, LLVMBuildFPToSI(b, nd, cx->i32, ""));
    /* |a| ** b where the logarithm cannot say it: |a| = 0, |a| = inf, b = +-inf, |a| = 1 */
    LLVMValueRef bneg = fcmp(cx, LLVMRealOLT, bb, F(cx, 0.0));
    LLVMValueRef inf = F(cx, __builtin_inf()), zero = F(cx, 0.0), one = F(cx, 1.0);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, aa, zero), sel(cx, bneg, inf, zero), r);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, aa, inf), sel(cx, bneg, zero, inf), r);
    LLVMValueRef small = fcmp(cx, LLVMRealOLT, aa, one);
    LLVMValueRef binf = fcmp(cx, LLVMRealOEQ, fun1(cx, "llvm.fabs", bb), inf);
    r = sel(cx, binf, sel(cx, LLVMBuildXor(b, small, bneg, ""), zero, inf), r);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, aa, one), one, r);
    r = sel(cx, LLVMBuildOr(b, isnanf_(cx, a), isnanf_(cx, bb), ""), F(cx, __builtin_nan("")), r);
    /* the sign: a's for an odd integer b; NaN for a finite a < 0 and a non-integer b */
    LLVMValueRef bint = fcmp(cx, LLVMRealOEQ, fun1(cx, "llvm.floor", bb), bb); /* true for +-inf */
    LLVMValueRef half = fmul(cx, bb, F(cx, 0.5));
    LLVMValueRef bodd =
        LLVMBuildAnd(b, bint, fcmp(cx, LLVMRealONE, fun1(cx, "llvm.floor", half), half), "");
    r = sel(cx, LLVMBuildAnd(b, signbitf_(cx, a), bodd, ""), LLVMBuildFNeg(b, r, ""), r);
    LLVMValueRef afin_neg =
        LLVMBuildAnd(b, fcmp(cx, LLVMRealOLT, a, zero), fcmp(cx, LLVMRealONE, aa, inf), "");
    r = sel(cx, LLVMBuildAnd(b, afin_neg, LLVMBuildNot(b, bint, ""), ""), F(cx, __builtin_nan("")),
            r);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, bb, F(cx, 2.0)), fmul(cx, a, a), r);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, bb, one), a, r);
    r = sel(cx, fcmp(cx, LLVMRealOEQ, a, one), one, r);
    return sel(cx, fcmp(cx, LLVMRealOEQ, bb, zero), one, r);
}

/* ---- GPU versions on the special-function unit ---------------------------
 * The portable versions above cost 25-60 instructions each, which made the
 * transcendental-heavy memory-bound kernels instruction-bound on the H200
 * (bench/results/2026-11-30-h200). These build on ex2.approx.ftz (relative
 * error about 2^-22 on the reduced argument) and rcp.approx.ftz refined by
 * one Newton step, with the same range reduction as above, so f32 results
 * stay within a few ulp (measured on the GPU by bench/gpu_math.py; figures in
 * docs/codegen.md). Results below FLT_MIN (2^-126) flush to zero. */

static LLVMValueRef nv1(cg_ctx *cx, const char *name, LLVMValueRef a) {
    return cg_call_intrinsic(cx, name, false, &a, 1);
}

/* 1/d for finite d with |d| in [2^-126, 2^126]: rcp.approx plus one Newton step (<= 1 ulp). */
static LLVMValueRef g_rcp(cg_ctx *cx, LLVMValueRef d) {
    LLVMValueRef r = nv1(cx, "llvm.nvvm.rcp.approx.ftz.f", d);
    LLVMValueRef e = ffma(cx, LLVMBuildFNeg(cx->b, d, ""), r, F(cx, 1.0));
    return ffma(cx, r, e, r);
}

/* 2^(nf + f) from t = nf + 1.5*2^23 (nf an integer in the low mantissa bits of t) and p = 2^f in
 * [2^-0.5, 2^0.5]: p's exponent field plus nf; valid while the result is a normal number (callers
 * select the overflow and underflow cases). */
static LLVMValueRef g_scale(cg_ctx *cx, LLVMValueRef p, LLVMValueRef t) {
    LLVMValueRef n = LLVMBuildShl(cx->b, LLVMBuildBitCast(cx->b, t, cx->i32, ""), I(cx, 23), "");
    return LLVMBuildBitCast(
        cx->b, LLVMBuildAdd(cx->b, LLVMBuildBitCast(cx->b, p, cx->i32, ""), n, ""), cx->f32, "");
}

static const double MAGIC_RINT =
    12582912.0; /* 1.5 * 2^23: x + MAGIC rounds x to an integer (|x| < 2^22) */

/* e^x for x <= 0, not NaN (sigmoid's e^-|z|): n = rint(x log2 e) by the magic addition, r = x
 * log2 e - n with log2 e in two parts (Cody-Waite), 2^r on the SFU with |r| <= 1/2, 2^n added to
 * the exponent bits; 0 below ln(FLT_MIN), where that addition would leave the normal range. 1.93
 * ulp on the H200, against 2.48 for g_exp, whose SFU argument is the whole exponent: sigmoid's
 * e r for z < 0 adds r's error and a rounding, and only this exponential keeps it within 4 ulp
 * (bench/results/2026-12-01-h200-cols: 4.33 with g_exp). */
static LLVMValueRef g_exp_neg(cg_ctx *cx, LLVMValueRef x) {
    /* log2 e in two parts, the first of 12 bits, so x * L2E_HI - n loses nothing before its one
     * rounding */
    static const double L2E_HI = 1.44287109375, L2E_LO = -0.000176052861036613;
    LLVMValueRef t = ffma(cx, x, F(cx, LOG2E), F(cx, MAGIC_RINT));
    LLVMValueRef nf = fsub(cx, t, F(cx, MAGIC_RINT));
    LLVMValueRef r = ffma(cx, x, F(cx, L2E_HI), LLVMBuildFNeg(cx->b, nf, ""));
    r = ffma(cx, x, F(cx, L2E_LO), r);
    LLVMValueRef res = g_scale(cx, nv1(cx, "llvm.nvvm.ex2.approx.ftz.f", r), t);
    return sel(cx, fcmp(cx, LLVMRealOLT, x, F(cx, -87.33654022216796875)), F(cx, 0.0), res);
}

/* NaN-propagating min/max (min.NaN / max.NaN on sm_80+: one instruction each). */
static LLVMValueRef fminimum(cg_ctx *cx, LLVMValueRef a, double b) {
    LLVMValueRef v[2] = {a, F(cx, b)};
    return cg_call_intrinsic(cx, "llvm.minimum", true, v, 2);
}
static LLVMValueRef fmaximum(cg_ctx *cx, LLVMValueRef a, double b) {
    LLVMValueRef v[2] = {a, F(cx, b)};
    return cg_call_intrinsic(cx, "llvm.maximum", true, v, 2);
}

/* e^x for any x in eight operations, none a select: x' = max(x, -104) (NaN kept), hi = x' L with
 * L = log2 e rounded to f32, h = min(hi, 128 - 2^-17); lo = x' L - h (one fma: the product is
 * exact, the difference small) + x' (log2 e - L); e^x = 2^h (1 + lo ln 2) = fma(p, lo ln 2, p)
 * with p = 2^h on the SFU (ex2.approx.ftz: the SFU takes the whole argument, its integer part
 * exactly). |lo| <= 2^-17 + 2e-6 in range, so the dropped (lo ln 2)^2 / 2 is 2^-36. Edges by
 * construction: h < 128 keeps p finite, so a result just below FLT_MAX is not an inf from
 * rounding hi up to 128, and a true overflow (lo large) rounds the fma to inf; +inf gives lo =
 * +inf, hence inf; x' >= -104 keeps lo finite, so -inf gives p = 0 (flushed below 2^-126, as the
 * contract allows for results under FLT_MIN) times a finite factor; NaN propagates through both
 * clamps. */
static LLVMValueRef g_exp(cg_ctx *cx, LLVMValueRef x) {
    static const double L2E_F = 1.44269502162933349609375; /* log2 e rounded to f32 */
    static const double L2E_R = 1.9259629911783426e-08;    /* log2 e - L2E_F */
    LLVMValueRef xc = fmaximum(cx, x, -104.0);
    LLVMValueRef hc = fminimum(cx, fmul(cx, xc, F(cx, L2E_F)), 127.9999923706054688);
    LLVMValueRef lo = ffma(cx, xc, F(cx, L2E_F), LLVMBuildFNeg(cx->b, hc, ""));
    lo = ffma(cx, xc, F(cx, L2E_R), lo);
    LLVMValueRef p = nv1(cx, "llvm.nvvm.ex2.approx.ftz.f", hc);
    return ffma(cx, p, fmul(cx, lo, F(cx, 0.69314718055994531)), p);
}

/* 2^x: n = rint(x), 2^(x - n) on the SFU (x - n is exact), 2^n added to the exponent. */
static LLVMValueRef g_exp2(cg_ctx *cx, LLVMValueRef x) {
    LLVMValueRef t = fadd(cx, x, F(cx, MAGIC_RINT));
    LLVMValueRef f = fsub(cx, x, fsub(cx, t, F(cx, MAGIC_RINT)));
    LLVMValueRef res = g_scale(cx, nv1(cx, "llvm.nvvm.ex2.approx.ftz.f", f), t);
    res = sel(cx, fcmp(cx, LLVMRealOGE, x, F(cx, 128.0)), F(cx, __builtin_inf()), res);
    res = sel(cx, fcmp(cx, LLVMRealOLT, x, F(cx, -126.0)), F(cx, 0.0), res);
    return sel(cx, isnanf_(cx, x), x, res);
}

/* tanh: x + x^3 P(x^2) for |x| < 0.6 (a 5-term relative-minimax fit, 0.76 ulp in f32);
 * 1 - 2 / (e^(2|x|) + 1) above (|x| capped at 10, where tanh is 1 in f32). NaN fails the
 * ordered comparison and takes the polynomial, which carries it. */
static LLVMValueRef g_tanh(cg_ctx *cx, LLVMValueRef x) {
    static const double c[] = {-0.33333298563957214, 0.13331924378871918, -0.053783830255270004,
                               0.020795971155166626, -0.005895156413316727};
    LLVMValueRef ax = fun1(cx, "llvm.fabs", x);
    LLVMValueRef z = fmul(cx, x, x);
    LLVMValueRef small = ffma(cx, poly(cx, z, c, 5), fmul(cx, z, x), x);
    /* e^(2|x|) straight on the SFU: tanh = 1 - 2 / (e + 1) damps e's relative error (the
     * rounding of y = 2|x| log2 e included) by 2e / (e + 1)^2, below 0.36 for |x| >= 0.6 and
     * vanishing where y is large; e = inf (|x| > 44) gives r = 0 and tanh = 1 */
    LLVMValueRef y = fmul(cx, ax, F(cx, 2.0 * LOG2E));
    LLVMValueRef e = nv1(cx, "llvm.nvvm.ex2.approx.ftz.f", y);
    /* rcp.approx alone (1 ulp): tanh = 1 - 2 r moves by 2 r / (1 - 2 r) <= 0.86 of r's relative
     * error for |x| >= 0.6, so a Newton step would buy under one ulp; big >= 0 (e >= 1) */
    LLVMValueRef r = nv1(cx, "llvm.nvvm.rcp.approx.ftz.f", fadd(cx, e, F(cx, 1.0)));
    LLVMValueRef big = ffma(cx, F(cx, -2.0), r, F(cx, 1.0));
    return sel(cx, fcmp(cx, LLVMRealOGE, ax, F(cx, 0.6)), fsignor(cx, big, x), small);
}

/* GPU body for op where the special-function unit gives a faster one of the same accuracy, else
 * NULL (the portable cg_math_body, which names every op, is used). */
static LLVMValueRef cg_math_body_gpu(cg_ctx *cx, ir_op op, LLVMValueRef x) {
    if (op == IR_OP_EXP) return g_exp(cx, x);
    if (op == IR_OP_EXP2) return g_exp2(cx, x);
    if (op == IR_OP_TANH) return g_tanh(cx, x);
    return NULL;
}

/* sigmoid(z) = 1 / (1 + e^-|z|) for z >= 0, e^-|z| times that below: the exponential never
 * overflows and nothing cancels, so silu and gelu_tanh built on it keep a few ulp of relative
 * accuracy for large negative arguments too. The reciprocal is rcp.approx + Newton on the GPU. */
static LLVMValueRef m_sigmoid(cg_ctx *cx, LLVMValueRef z) {
    LLVMValueRef nz = LLVMBuildFNeg(cx->b, fun1(cx, "llvm.fabs", z), "");
    LLVMValueRef e = cx->gpu ? g_exp_neg(cx, nz) : cg_math(cx, IR_OP_EXP, nz, NULL);
    LLVMValueRef d = fadd(cx, F(cx, 1.0), e);
    LLVMValueRef r = cx->gpu ? g_rcp(cx, d) : fdiv(cx, F(cx, 1.0), d);
    LLVMValueRef v = sel(cx, fcmp(cx, LLVMRealOGE, z, F(cx, 0.0)), r, fmul(cx, e, r));
    /* a NaN z's bits would wrap g_exp_neg's exponent addition to a number: selected here */
    return cx->gpu ? sel(cx, isnanf_(cx, z), z, v) : v;
}

/* Body of the math function for op with arguments x (and y for POW); names
 * every op; NULL for ops that are not math functions (cg_math reports it). */
static LLVMValueRef cg_math_body(cg_ctx *cx, ir_op op, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef g = cx->gpu ? cg_math_body_gpu(cx, op, x) : NULL;
    if (g) return g;
    switch (op) {
        case IR_OP_EXP: return m_exp(cx, x);
        case IR_OP_EXP2: return m_exp2(cx, x);
        case IR_OP_LOG: return m_log(cx, x);
        case IR_OP_LOG2: return m_log2(cx, x);
        case IR_OP_TANH: return m_tanh(cx, x);
        case IR_OP_ERF: return m_erf(cx, x);
        case IR_OP_SIN: return m_sincos(cx, x, false);
        case IR_OP_COS: return m_sincos(cx, x, true);
        case IR_OP_SQRT: return fun1(cx, "llvm.sqrt", x);
        case IR_OP_RSQRT: return fdiv(cx, F(cx, 1.0), fun1(cx, "llvm.sqrt", x));
        case IR_OP_SIGMOID: return m_sigmoid(cx, x);
        case IR_OP_SILU: return fmul(cx, x, m_sigmoid(cx, x));
        case IR_OP_GELU: {
            LLVMValueRef e = cg_math(cx, IR_OP_ERF, fmul(cx, x, F(cx, 0.70710678118654752)), NULL);
            return fmul(cx, fmul(cx, F(cx, 0.5), x), fadd(cx, F(cx, 1.0), e));
        }
        case IR_OP_GELU_TANH: {
            /* 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): no
             * cancellation for negative x, where 1 + tanh(u) would lose all its digits */
            LLVMValueRef z = fmul(cx, x, x);
            LLVMValueRef u2 = fmul(cx, fmul(cx, x, F(cx, 2.0 * 0.79788456080286536)),
                                   ffma(cx, F(cx, 0.044715), z, F(cx, 1.0)));
            return fmul(cx, x, m_sigmoid(cx, u2));
        }
        case IR_OP_POW: return m_pow(cx, x, y);
        case IR_OP_NEG:
        case IR_OP_ABS:
        case IR_OP_RECIP:
        case IR_OP_RELU:
        case IR_OP_FLOOR:
        case IR_OP_CEIL:
        case IR_OP_CAST:
        case IR_OP_ADD:
        case IR_OP_SUB:
        case IR_OP_MUL:
        case IR_OP_DIV:
        case IR_OP_MAXIMUM:
        case IR_OP_MINIMUM:
        case IR_OP_LT:
        case IR_OP_LE:
        case IR_OP_GT:
        case IR_OP_GE:
        case IR_OP_EQ:
        case IR_OP_NE:
        case IR_OP_WHERE:
        case IR_OP_NOT:
        case IR_OP_AND:
        case IR_OP_OR:
        case IR_OP_INPUT:
        case IR_OP_CONST:
        case IR_OP_IOTA:
        case IR_OP_SUM:
        case IR_OP_MEAN:
        case IR_OP_MAX:
        case IR_OP_MIN:
        case IR_OP_PICK:
        case IR_OP_MATMUL:
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT:
        case IR_OP_OUTPUT:
        case IR_NOPS: return NULL;
    }
    return NULL;
}

/* e^x at f16/bf16 accuracy; see cg_impl.h. */
LLVMValueRef cg_exp_fast(cg_ctx *cx, LLVMValueRef x) {
    if (!cx->gpu) return cg_math(cx, IR_OP_EXP, x, NULL);
    return nv1(cx, "llvm.nvvm.ex2.approx.ftz.f", fmul(cx, x, F(cx, LOG2E)));
}

/* Calls tx.<op> (defining it on first use); see cg_impl.h. */
LLVMValueRef cg_math(cg_ctx *cx, ir_op op, LLVMValueRef x, LLVMValueRef y) {
    unsigned nargs = op == IR_OP_POW ? 2 : 1;
    LLVMTypeRef at[2] = {cx->f32, cx->f32};
    LLVMTypeRef fty = LLVMFunctionType(cx->f32, at, nargs, 0);
    if (!cx->mathfn[cx->modi][op]) {
        char name[64];
        snprintf(name, sizeof name, "tx.%s", ir_op_name(op));
        LLVMValueRef fn = LLVMAddFunction(cx->mod, name, fty);
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        unsigned k = cx->math_calls ? LLVMGetEnumAttributeKindForName("noinline", 8)
                                    : LLVMGetEnumAttributeKindForName("alwaysinline", 12);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(cx->llctx, k, 0));
        cx->mathfn[cx->modi][op] = fn;
        cg_save sv = {cx->b, cx->fn};
        cx->b = LLVMCreateBuilderInContext(cx->llctx);
        cx->fn = fn;
        LLVMPositionBuilderAtEnd(cx->b, LLVMAppendBasicBlockInContext(cx->llctx, fn, "entry"));
        LLVMValueRef r =
            cg_math_body(cx, op, LLVMGetParam(fn, 0), nargs > 1 ? LLVMGetParam(fn, 1) : NULL);
        if (r) LLVMBuildRet(cx->b, r);
        LLVMDisposeBuilder(cx->b);
        cx->b = sv.b;
        cx->fn = sv.fn;
        if (!r) {
            LLVMDeleteFunction(fn);
            cx->mathfn[cx->modi][op] = NULL;
            tx_error(cx->diag, "codegen: internal error: no %s math function for op '%s'",
                     cx->gpu ? "GPU" : "host", ir_op_name(op));
            return NULL;
        }
    }
    LLVMValueRef args[2] = {x, y};
    return LLVMBuildCall2(cx->b, fty, cx->mathfn[cx->modi][op], args, nargs, "");
}
