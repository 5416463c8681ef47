/* suggest.c - "did you mean" for unknown names: the closest candidate by
 * edit distance, the spellings users bring from PyTorch and NumPy, and what
 * to write for the functions tx does not have. */
#include "frontend.h"

#include <ctype.h>
#include <string.h>

/* What a PyTorch/NumPy user writes, and the tx spelling. */
static const struct {
    const char *from, *to;
} fe_synonyms[] = {
    {"True", "true"},        {"False", "false"},
    {"keepdims", "keepdim"}, {"dim", "axis"},
    {"dims", "axis"},        {"axes", "axis"},
    {"mm", "matmul"},        {"bmm", "matmul"},
    {"float32", "f32"},      {"bfloat16", "bf16"},
    {"float16", "f16"},      {"half", "f16"},
    {"int32", "i32"},        {"masked_fill", "where"},
    {"amax", "max"},         {"amin", "min"},
    {"reciprocal", "recip"}, {"swapaxes", "transpose"},
    {"view", "reshape"},     {"expand", "broadcast_to"},
    {"cat", "concat"},       {"concatenate", "concat"},
    {"Inf", "inf"},          {"INF", "inf"},
    {"NaN", "nan"},          {"NAN", "nan"},
    {"infinity", "inf"},
};

/* PyTorch/NumPy functions and constants without a tx built-in, and the tx
 * expression that computes them (each complete after "write "). */
static const struct {
    const char *name, *instead;
} fe_insteads[] = {
    {"sign", "where(x > 0, 1.0, where(x < 0, -1.0, 0.0))"},
    {"sgn", "where(x > 0, 1.0, where(x < 0, -1.0, 0.0))"},
    {"isnan", "x != x (true exactly where x is NaN)"},
    {"isinf", "abs(x) == inf"},
    {"isfinite", "abs(x) < inf (false for NaN and infinities)"},
    {"nan_to_num", "where(x != x, 0.0, x) for NaN and where(x == inf, BIG, x) for infinities"},
    {"log10", "log(x) / log(10.0)"},
    {"log1p", "log(1.0 + x)"},
    {"expm1", "exp(x) - 1.0"},
    {"square", "x * x"},
    {"clamp", "minimum(maximum(x, lo), hi)"},
    {"clip", "minimum(maximum(x, lo), hi)"},
    {"softplus", "where(x > 20.0, x, log(1.0 + exp(x)))"},
    {"mish", "x * tanh(log(1.0 + exp(x)))"},
    {"elu", "where(x > 0.0, x, exp(x) - 1.0)"},
    {"selu", "1.0507 * where(x > 0.0, x, 1.6733 * (exp(x) - 1.0))"},
    {"leaky_relu", "where(x > 0.0, x, 0.01 * x)"},
    {"hardswish", "x * minimum(maximum(x + 3.0, 0.0), 6.0) / 6.0"},
    {"hardsigmoid", "minimum(maximum(x + 3.0, 0.0), 6.0) / 6.0"},
    {"swish", "silu(x)"},
    {"tan", "sin(x) / cos(x)"},
    {"var", "mean(d * d, axis=A) with d = x - mean(x, axis=A, keepdim=true)"},
    {"std", "sqrt(mean(d * d, axis=A)) with d = x - mean(x, axis=A, keepdim=true)"},
    {"var_mean", "mean(x, axis=A, keepdim=true), then mean(d * d, axis=A) of d = x - mean"},
    {"logsumexp",
     "log(sum(exp(x - m), axis=A)) + reshape(m, ...) with m = max(x, axis=A, keepdim=true)"},
    {"norm", "sqrt(sum(x * x, axis=A))"},
    {"normalize", "x * rsqrt(sum(x * x, axis=-1, keepdim=true))"},
    {"argmax",
     "a comparison: tx has no index-returning reductions (x == max(x, axis=A, keepdim=true) "
     "marks the maxima)"},
    {"argmin",
     "a comparison: tx has no index-returning reductions (x == min(x, axis=A, keepdim=true) "
     "marks the minima)"},
    {"topk", "a threshold: tx has no sorting (where(x >= t, x, -inf) for a threshold t)"},
    {"sort", "a threshold: tx has no sorting"},
    {"gather",
     "a one-hot compare: sum(where(iota(SHAPE, axis=A) == reshape(idx, ...), x, 0.0), axis=A)"},
    {"take_along_dim",
     "a one-hot compare: sum(where(iota(SHAPE, axis=A) == reshape(idx, ...), x, 0.0), axis=A)"},
    {"cumsum", "a matmul with a triangular mask: tx has no scans (x @ f32(iota((N, N), axis=0) <= "
               "iota((N, N), "
               "axis=1)))"},
    {"any", "max(i32(c), axis=A) > 0"},
    {"all", "min(i32(c), axis=A) > 0"},
    {"not", "~c (on bool tensors)"},
    {"logical_not", "~c (on bool tensors)"},
    {"logical_and", "a & b (on bool tensors)"},
    {"logical_or", "a | b (on bool tensors)"},
    {"einsum", "matmul, transpose and reshape: tx has no einsum"},
    {"dropout", "nothing at inference (tx has no random numbers; pass a mask as an input)"},
    {"pi", "3.141592653589793"},
    {"lerp", "a + w * (b - a)"},
    {"clamp_min", "maximum(x, lo)"},
    {"clamp_max", "minimum(x, hi)"},
    {"hardtanh", "minimum(maximum(x, -1.0), 1.0)"},
    {"relu6", "minimum(relu(x), 6.0)"},
    {"erfc", "1.0 - erf(x)"},
    {"stack", "concat((reshape(a, (..., 1)), reshape(b, (..., 1))), axis=-1): a 1 at the new axis"},
    {"unsqueeze", "reshape(x, (...)) with a 1 at the new axis"},
    {"squeeze", "reshape(x, (...)) without the size-1 axis"},
    {"flatten", "reshape(x, (..., -1))"},
    {"cosine_similarity", "sum(a * b, axis=-1) / maximum(sqrt(sum(a * a, axis=-1)) * "
                          "sqrt(sum(b * b, axis=-1)), 1e-8)"},
};

/* Built-ins PyTorch code calls with another argument layout, and what to
 * write: `more` is set for too many positional arguments. */
static const struct {
    const char *name;
    bool more;
    const char *instead;
} fe_arity_insteads[] = {
    {"max", true,
     "max reduces one tensor (axis by keyword: axis=...); the elementwise "
     "maximum of two tensors is maximum(a, b)"},
    {"min", true,
     "min reduces one tensor (axis by keyword: axis=...); the elementwise "
     "minimum of two tensors is minimum(a, b)"},
    {"permute", true, "write the axes as one tuple: permute(x, (0, 2, 1))"},
    {"reshape", true, "write the shape as one tuple: reshape(x, (B, -1))"},
    {"broadcast_to", true, "write the shape as one tuple: broadcast_to(x, (B, N))"},
    {"transpose", false, "name the two axes to swap: transpose(x, -1, -2)"},
};

/* Contract in frontend.h. */
const char *fe_arity_hint(const char *name, bool more) {
    for (size_t i = 0; i < sizeof fe_arity_insteads / sizeof *fe_arity_insteads; i++)
        if (fe_arity_insteads[i].more == more && !strcmp(fe_arity_insteads[i].name, name))
            return fe_arity_insteads[i].instead;
    return NULL;
}

/* Dtype names from PyTorch and NumPy, and what the tx type is. */
static const struct {
    const char *from, *hint;
} fe_dtype_insteads[] = {
    {"float32", "write f32"},
    {"float", "write f32"},
    {"float16", "write f16"},
    {"half", "write f16"},
    {"bfloat16", "write bf16"},
    {"int32", "write i32"},
    {"int", "write i32"},
    {"int64", "tx has no 64-bit types: i32 for indices and labels"},
    {"long", "tx has no 64-bit types: i32 for indices and labels"},
    {"i64", "tx has no 64-bit types: i32 for indices and labels"},
    {"float64", "tx has no 64-bit types: f32"},
    {"double", "tx has no 64-bit types: f32"},
    {"f64", "tx has no 64-bit types: f32"},
    {"uint8", "tx has no 8-bit types: i32 (or bool for a mask)"},
    {"int8", "tx has no 8-bit types: i32 (or bool for a mask)"},
};

/* Contract in frontend.h. */
const char *fe_dtype_hint(const char *name) {
    for (size_t i = 0; i < sizeof fe_dtype_insteads / sizeof *fe_dtype_insteads; i++)
        if (!strcmp(fe_dtype_insteads[i].from, name)) return fe_dtype_insteads[i].hint;
    return NULL;
}

/* Contract in frontend.h. */
const char *fe_instead(const char *name) {
    for (size_t i = 0; i < sizeof fe_insteads / sizeof *fe_insteads; i++)
        if (!strcmp(fe_insteads[i].name, name)) return fe_insteads[i].instead;
    return NULL;
}

/* Edit distance (insert, delete, substitute, swap of neighbours) of a and
 * b, or `cap` + 1 when larger than cap; names longer than 63 bytes never
 * match. */
static unsigned edit_distance(const char *a, const char *b, unsigned cap) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return cap + 1;
    unsigned d[64][64];
    for (size_t i = 0; i <= n; i++) d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned c = d[i - 1][j - 1] +
                         (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[n][m] > cap ? cap + 1 : d[n][m];
}

/* Contract in frontend.h. */
const char *fe_suggest(const char *name, const char *const *cands, unsigned n) {
    for (size_t i = 0; i < sizeof fe_synonyms / sizeof *fe_synonyms; i++) {
        if (strcmp(fe_synonyms[i].from, name)) continue;
        for (unsigned k = 0; k < n; k++)
            if (cands[k] && !strcmp(cands[k], fe_synonyms[i].to)) return cands[k];
    }
    size_t len = strlen(name);
    unsigned cap = len <= 3 ? 1 : len <= 6 ? 2 : 3, best = cap + 1;
    const char *pick = NULL;
    for (unsigned k = 0; k < n; k++) {
        if (!cands[k] || !strcmp(cands[k], name) || cands[k][0] == '_') continue;
        unsigned dist = edit_distance(name, cands[k], cap);
        if (dist < best && dist < strlen(cands[k])) {
            best = dist;
            pick = cands[k];
        }
    }
    return pick;
}
