/* half.c - the host side's one implementation of the f16 and bf16
 * conversions (exact, round to nearest even). Contracts in ir/ir.h. */
#include "ir/ir.h"

#include <math.h>
#include <string.h>

/* ---- exact half-precision conversions ------------------------------------ */
/* A binary floating-point format with `mbits` stored mantissa bits, minimum
 * normal exponent `emin` and maximum exponent `emax`. */
typedef struct fmt_desc {
    int mbits, emin, emax, ebias;
    double denorm_ulp; /* 2^(emin - mbits): the value of the lowest mantissa bit of a denormal */
} fmt_desc;
static const fmt_desc FMT_F16 = {10, -14, 15, 15, 0x1p-24};
static const fmt_desc FMT_BF16 = {7, -126, 127, 127, 0x1p-133};

/* Rounds finite or infinite |v| (v >= 0, not NaN) to the format, to nearest
 * with ties to even, and returns the bit pattern without sign. Values past
 * the largest finite number after rounding become infinity; denormals are
 * produced exactly. */
static uint16_t round_to_fmt(double v, const fmt_desc *f) {
    uint16_t inf = (uint16_t)(((1u << (15 - f->mbits)) - 1u) << f->mbits);
    if (isinf(v)) return inf;
    if (v == 0) return 0;
    int e;
    frexp(v, &e); /* v = m * 2^e, m in [0.5, 1): unbiased exponent e - 1 */
    e -= 1;
    if (e < f->emin) e = f->emin;
    double q = ldexp(1.0, e - f->mbits); /* spacing of representable values */
    double r = nearbyint(v / q) * q;     /* default mode: ties to even */
    double maxv = ldexp(2.0 - ldexp(1.0, -f->mbits), f->emax);
    if (r > maxv) return inf;
    if (r < ldexp(1.0, f->emin)) /* denormal (or zero): exact multiple of min spacing */
        return (uint16_t)(r / ldexp(1.0, f->emin - f->mbits));
    int re;
    double m = frexp(r, &re); /* r = m * 2^re */
    re -= 1;
    uint32_t frac = (uint32_t)(ldexp(m * 2.0 - 1.0, f->mbits));
    return (uint16_t)(((uint32_t)(re + f->ebias) << f->mbits) | frac);
}

/* Exact value of a bit pattern (sign included) in the format: normals are
 * assembled as double bits, denormals are an exact product by a power of 2
 * (the verification and reference loops call this per element). */
static double from_fmt(uint16_t h, const fmt_desc *f) {
    int ebits = 15 - f->mbits;
    uint32_t sign = h >> 15, ex = (h >> f->mbits) & ((1u << ebits) - 1u),
             fr = h & ((1u << f->mbits) - 1u);
    double v;
    if (ex == (1u << ebits) - 1u)
        v = fr ? NAN : INFINITY;
    else if (ex == 0)
        v = (double)fr * f->denorm_ulp;
    else {
        uint64_t bits =
            ((uint64_t)((int)ex - f->ebias + 1023) << 52) | ((uint64_t)fr << (52 - f->mbits));
        memcpy(&v, &bits, sizeof v);
    }
    return sign ? -v : v;
}

/* Converts a double to the format's bits: sign kept, NaN stays a quiet NaN.
 * Results that are normal in the format round on the double's bits (the
 * carry of a round-up moves into the exponent, up to infinity); results
 * below the smallest normal go through round_to_fmt. */
static uint16_t to_fmt(double v, const fmt_desc *f) {
    uint16_t sign = signbit(v) ? 0x8000u : 0;
    uint32_t inf = ((1u << (15 - f->mbits)) - 1u) << f->mbits;
    if (isnan(v)) return (uint16_t)(sign | inf | (1u << (f->mbits - 1)));
    uint64_t a;
    memcpy(&a, &v, sizeof a);
    a &= ~(1ull << 63);
    int e = (int)(a >> 52) - 1023; /* unbiased; infinity has 1024 */
    if (e < f->emin) return (uint16_t)(sign | round_to_fmt(fabs(v), f));
    if (e > f->emax) return (uint16_t)(sign | inf);
    int sh = 52 - f->mbits;
    uint64_t m = a & ((1ull << 52) - 1), rem = m & ((1ull << sh) - 1), half = 1ull << (sh - 1);
    uint64_t field = ((uint64_t)(e + f->ebias) << f->mbits) | (m >> sh);
    if (rem > half || (rem == half && (field & 1))) field++;
    return (uint16_t)(sign | (field >= inf ? inf : field));
}

float ir_f16_to_f32(uint16_t h) { return (float)from_fmt(h, &FMT_F16); }
uint16_t ir_f32_to_f16(float f) { return to_fmt(f, &FMT_F16); }
float ir_bf16_to_f32(uint16_t h) { return (float)from_fmt(h, &FMT_BF16); }
uint16_t ir_f32_to_bf16(float f) { return to_fmt(f, &FMT_BF16); }
uint16_t ir_f64_to_f16(double v) { return to_fmt(v, &FMT_F16); }
uint16_t ir_f64_to_bf16(double v) { return to_fmt(v, &FMT_BF16); }
double ir_f16_to_f64(uint16_t h) { return from_fmt(h, &FMT_F16); }
double ir_bf16_to_f64(uint16_t h) { return from_fmt(h, &FMT_BF16); }
