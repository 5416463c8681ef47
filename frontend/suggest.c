/* suggest.c - "did you mean" for unknown names: the closest candidate by
 * edit distance, and the spellings users bring from PyTorch and NumPy. */
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
