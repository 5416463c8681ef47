/* manifest.c - kernels compiled earlier, without the compiler: the JSON
 * manifest txc writes beside the PTX (FILE.ptx.json, docs/codegen.md) parsed
 * into an rt_manifest, sizes bound from the input shapes, and the launch
 * plan (buffers, geometry, parameters) built at those sizes. A small JSON
 * reader of its own (objects, arrays, strings, integers, numbers, true,
 * false, null; depth and size limited) keeps the runtime free of the
 * codegen floor. Contracts in runtime/runtime.h. */
#include "runtime/runtime.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small JSON reader -------------------------------------------------- */

enum { J_NULL, J_BOOL, J_INT, J_NUM, J_STR, J_ARR, J_OBJ };
#define J_MAX_DEPTH 32
#define J_MAX_TEXT  ((size_t)64 << 20)

/* One value. Arrays and objects chain their members through `next` from
 * `first`; an object member carries its key. */
typedef struct jnode {
    uint8_t type;
    bool b;
    int64_t i;
    double num;
    char *str, *key; /* decoded, NUL-terminated; owned by the document */
    int first, next, count;
} jnode;

typedef struct jdoc {
    const char *s, *e;
    jnode *n;
    int len, cap;
    char *err;
    size_t errcap;
} jdoc;

static bool jfail(jdoc *d, const char *what) {
    if (!d->err[0]) snprintf(d->err, d->errcap, "bad manifest: %s", what);
    return false;
}

static void jskip(jdoc *d, const char **p) {
    while (*p < d->e && (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')) (*p)++;
}

static int jnew(jdoc *d, uint8_t type) {
    if (d->len == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 64;
        d->n = ir_xrealloc(d->n, (size_t)d->cap * sizeof *d->n);
    }
    memset(&d->n[d->len], 0, sizeof *d->n);
    d->n[d->len].type = type;
    d->n[d->len].first = d->n[d->len].next = -1;
    return d->len++;
}

/* Decodes the string at *p (after its opening quote) into a new buffer;
 * \uXXXX escapes above 0x7F become '?' (the manifest's names are ASCII). */
static char *jstring(jdoc *d, const char **p) {
    size_t cap = 16, n = 0;
    char *out = ir_xmalloc(cap);
    while (*p < d->e && **p != '"') {
        char c = **p;
        if ((unsigned char)c < 0x20) {
            free(out);
            jfail(d, "a control character in a string");
            return NULL;
        }
        if (c == '\\') {
            if (++*p >= d->e) break;
            switch (**p) {
                case '"':
                case '\\':
                case '/': c = **p; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'n': c = '\n'; break;
                case 'r': c = '\r'; break;
                case 't': c = '\t'; break;
                case 'u': {
                    unsigned v = 0;
                    for (int k = 0; k < 4; k++) {
                        char h = ++*p < d->e ? **p : 0;
                        int x = h >= '0' && h <= '9'   ? h - '0'
                                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                       : -1;
                        if (x < 0) {
                            free(out);
                            jfail(d, "a bad \\u escape");
                            return NULL;
                        }
                        v = v * 16 + (unsigned)x;
                    }
                    c = v && v < 0x80 ? (char)v : '?';
                    break;
                }
                default:
                    free(out);
                    jfail(d, "a bad escape");
                    return NULL;
            }
        }
        if (n + 2 > cap) out = ir_xrealloc(out, cap *= 2);
        out[n++] = c;
        (*p)++;
    }
    if (*p >= d->e) {
        free(out);
        jfail(d, "an unterminated string");
        return NULL;
    }
    (*p)++;
    out[n] = 0;
    return out;
}

static int jvalue(jdoc *d, const char **p, int depth);

/* Parses the members of an array or object (after its opening bracket). */
static bool jmembers(jdoc *d, const char **p, int node, bool obj, int depth) {
    char close = obj ? '}' : ']';
    int last = -1;
    jskip(d, p);
    if (*p < d->e && **p == close) {
        (*p)++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        int v;
        jskip(d, p);
        if (obj) {
            if (*p >= d->e || **p != '"') return jfail(d, "an object key expected");
            (*p)++;
            if (!(key = jstring(d, p))) return false;
            jskip(d, p);
            if (*p >= d->e || **p != ':') {
                free(key);
                return jfail(d, "':' expected");
            }
            (*p)++;
        }
        v = jvalue(d, p, depth + 1);
        if (v < 0) {
            free(key);
            return false;
        }
        d->n[v].key = key;
        if (last < 0)
            d->n[node].first = v;
        else
            d->n[last].next = v;
        last = v;
        d->n[node].count++;
        jskip(d, p);
        if (*p < d->e && **p == ',') {
            (*p)++;
            continue;
        }
        if (*p < d->e && **p == close) {
            (*p)++;
            return true;
        }
        return jfail(d, obj ? "',' or '}' expected" : "',' or ']' expected");
    }
}

/* Parses one value at *p; its node index, or -1 with d->err set. */
static int jvalue(jdoc *d, const char **p, int depth) {
    int node;
    jskip(d, p);
    if (depth > J_MAX_DEPTH) return jfail(d, "nesting too deep"), -1;
    if (*p >= d->e) return jfail(d, "a value expected"), -1;
    if (**p == '{' || **p == '[') {
        bool obj = **p == '{';
        (*p)++;
        node = jnew(d, obj ? J_OBJ : J_ARR);
        return jmembers(d, p, node, obj, depth) ? node : -1;
    }
    if (**p == '"') {
        char *s;
        (*p)++;
        if (!(s = jstring(d, p))) return -1;
        node = jnew(d, J_STR);
        d->n[node].str = s;
        return node;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int w = 0; w < 3; w++) {
        size_t n = strlen(words[w]);
        if ((size_t)(d->e - *p) >= n && !strncmp(*p, words[w], n)) {
            *p += n;
            node = jnew(d, w < 2 ? J_BOOL : J_NULL);
            d->n[node].b = w == 0;
            return node;
        }
    }
    char buf[64];
    size_t n = 0;
    while (*p + n < d->e && n < sizeof buf - 1 && strchr("+-0123456789.eE", (*p)[n])) n++;
    if (!n || n == sizeof buf - 1) return jfail(d, "a value expected"), -1;
    memcpy(buf, *p, n);
    buf[n] = 0;
    *p += n;
    char *end;
    errno = 0;
    long long iv = strtoll(buf, &end, 10);
    if (!*end && !errno) {
        node = jnew(d, J_INT);
        d->n[node].i = iv;
        d->n[node].num = (double)iv;
        return node;
    }
    errno = 0;
    double dv = strtod(buf, &end);
    if (*end || errno) return jfail(d, "a bad number"), -1;
    node = jnew(d, J_NUM);
    d->n[node].num = dv;
    return node;
}

static void jdoc_free(jdoc *d) {
    for (int i = 0; i < d->len; i++) {
        free(d->n[i].str);
        free(d->n[i].key);
    }
    free(d->n);
}

/* Member `key` of object node o; -1 when o is not an object or lacks it. */
static int jget(const jdoc *d, int o, const char *key) {
    if (o < 0 || d->n[o].type != J_OBJ) return -1;
    for (int c = d->n[o].first; c >= 0; c = d->n[c].next)
        if (!strcmp(d->n[c].key, key)) return c;
    return -1;
}

/* ---- from JSON to an rt_manifest ------------------------------------------ */

/* Reading context: the document and the error buffer. */
typedef struct mread {
    jdoc *d;
    rt_manifest *m;
    char *err;
    size_t cap;
} mread;

static bool mfail(mread *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool mfail(mread *r, const char *fmt, ...) {
    va_list ap;
    int n = snprintf(r->err, r->cap, "bad manifest: ");
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->cap) vsnprintf(r->err + n, r->cap - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* Integer member `key` of o in [lo, hi]. */
static bool mint(mread *r, int o, const char *key, int64_t lo, int64_t hi, int64_t *v,
                 const char *where) {
    int c = jget(r->d, o, key);
    if (c < 0 || r->d->n[c].type != J_INT || r->d->n[c].i < lo || r->d->n[c].i > hi)
        return mfail(r, "%s: \"%s\" must be an integer from %lld to %lld", where, key,
                     (long long)lo, (long long)hi);
    *v = r->d->n[c].i;
    return true;
}

/* String member `key` of o copied into buf (cap bytes; longer is an error). */
static bool mstr(mread *r, int o, const char *key, char *buf, size_t cap, const char *where) {
    int c = jget(r->d, o, key);
    if (c < 0 || r->d->n[c].type != J_STR)
        return mfail(r, "%s: \"%s\" must be a string", where, key);
    if (strlen(r->d->n[c].str) >= cap)
        return mfail(r, "%s: \"%s\" is longer than %zu bytes", where, key, cap - 1);
    memcpy(buf, r->d->n[c].str, strlen(r->d->n[c].str) + 1);
    return true;
}

/* Array member `key` of o; its node, or -1 with an error. */
static int marr(mread *r, int o, const char *key, const char *where) {
    int c = jget(r->d, o, key);
    if (c < 0 || r->d->n[c].type != J_ARR)
        return mfail(r, "%s: \"%s\" must be an array", where, key), -1;
    return c;
}

/* Index of symbol `name` in the manifest's symbol list; -1 when absent. */
static int msym(const rt_manifest *m, const char *name) {
    for (uint32_t s = 0; s < m->nsyms; s++)
        if (!strcmp(m->syms[s], name)) return (int)s;
    return -1;
}

/* A shape: an array of non-negative integers and symbol names. */
static bool mshape(mread *r, int a, ir_shape *s, const char *where) {
    memset(s, 0, sizeof *s);
    if (a < 0 || r->d->n[a].type != J_ARR || r->d->n[a].count > IR_MAX_RANK)
        return mfail(r, "%s: a shape must be an array of at most %d dims", where, IR_MAX_RANK);
    for (int c = r->d->n[a].first; c >= 0; c = r->d->n[c].next) {
        const jnode *j = &r->d->n[c];
        int sym;
        if (j->type == J_INT && j->i >= 0 && j->i < IR_MAX_ELEMS)
            s->dim[s->rank++] = j->i;
        else if (j->type == J_STR && (sym = msym(r->m, j->str)) >= 0)
            s->dim[s->rank++] = IR_DIM_SYM(sym);
        else
            return mfail(r, "%s: a dim must be a size or one of the manifest's symbols", where);
    }
    return true;
}

/* One entry of "inputs", "outputs" or "temps"; `index` must equal i. */
static bool mvalue(mread *r, int o, uint32_t i, rt_mvalue *v, bool named, const char *where) {
    int64_t ix = -1;
    char dt[16];
    int t;
    if (!mint(r, o, "index", 0, UINT32_MAX, &ix, where)) return false;
    if (ix != i) return mfail(r, "%s: entries must be listed by index (%u expected)", where, i);
    if (named && !mstr(r, o, "name", v->name, sizeof v->name, where)) return false;
    if (!mstr(r, o, "dtype", dt, sizeof dt, where)) return false;
    if ((t = ir_dtype_parse(dt, strlen(dt))) < 0)
        return mfail(r, "%s: unknown dtype '%s'", where, dt);
    v->dtype = (ir_dtype)t;
    return mshape(r, jget(r->d, o, "shape"), &v->shape, where);
}

/* The array `key` of the top object as n values. */
static bool mvalues(mread *r, int top, const char *key, rt_mvalue **out, uint32_t *n, bool named) {
    int a = marr(r, top, key, "top level");
    uint32_t i = 0;
    char where[64];
    if (a < 0) return false;
    *n = (uint32_t)r->d->n[a].count;
    *out = ir_xcalloc(*n + 1, sizeof **out);
    for (int c = r->d->n[a].first; c >= 0; c = r->d->n[c].next, i++) {
        snprintf(where, sizeof where, "%s[%u]", key, i);
        if (!mvalue(r, c, i, &(*out)[i], named, where)) return false;
    }
    return true;
}

/* The "buffers" of a kernel. */
static bool mbufs(mread *r, int ko, rt_mkernel *k, const char *where) {
    static const char *const kinds[] = {"input", "output", "temp"};
    int a = marr(r, ko, "buffers", where);
    uint32_t i = 0;
    if (a < 0) return false;
    k->nbufs = (uint32_t)r->d->n[a].count;
    k->bufs = ir_xcalloc(k->nbufs + 1, sizeof *k->bufs);
    for (int c = r->d->n[a].first; c >= 0; c = r->d->n[c].next, i++) {
        char kind[16];
        int64_t ix;
        int w = jget(r->d, c, "write");
        uint32_t lim;
        if (!mstr(r, c, "kind", kind, sizeof kind, where) ||
            !mint(r, c, "index", 0, UINT32_MAX, &ix, where))
            return false;
        for (k->bufs[i].role = 0; k->bufs[i].role < 3 && strcmp(kind, kinds[k->bufs[i].role]);
             k->bufs[i].role++) {}
        if (k->bufs[i].role == 3) return mfail(r, "%s: unknown buffer kind '%s'", where, kind);
        lim = k->bufs[i].role == RT_BUF_INPUT    ? r->m->nin
              : k->bufs[i].role == RT_BUF_OUTPUT ? r->m->nout
                                                 : r->m->ntemps;
        if (ix >= lim) return mfail(r, "%s: %s %lld does not exist", where, kind, (long long)ix);
        k->bufs[i].index = (uint32_t)ix;
        k->bufs[i].write = w >= 0 && r->d->n[w].type == J_BOOL && r->d->n[w].b;
    }
    return true;
}

/* The "flops" of a kernel: terms [coef, "SYM", ...]; null or absent: unknown. */
/* The polynomial at JSON node a ([[coef, "SYM", ...], ...], or null: unknown) named key. */
static bool mpoly(mread *r, int a, ir_poly *p, const char *key, const char *where) {
    memset(p, 0, sizeof *p);
    if (a < 0 || r->d->n[a].type == J_NULL) {
        p->overflow = true;
        return true;
    }
    if (r->d->n[a].type != J_ARR || r->d->n[a].count > IR_POLY_TERMS)
        return mfail(r, "%s: \"%s\" must be null or at most %d terms", where, key, IR_POLY_TERMS);
    for (int c = r->d->n[a].first; c >= 0; c = r->d->n[c].next) {
        ir_poly_term *t = &p->t[p->nterms++];
        int e = r->d->n[c].type == J_ARR ? r->d->n[c].first : -1;
        if (e < 0 || (r->d->n[e].type != J_INT && r->d->n[e].type != J_NUM) ||
            r->d->n[c].count > IR_POLY_SYMS + 1)
            return mfail(r, "%s: a \"%s\" term must be [coef, \"SYM\", ...]", where, key);
        t->coef = r->d->n[e].num;
        for (e = r->d->n[e].next; e >= 0; e = r->d->n[e].next) {
            int s = r->d->n[e].type == J_STR ? msym(r->m, r->d->n[e].str) : -1;
            if (s < 0) return mfail(r, "%s: \"%s\" must name symbols of the manifest", where, key);
            t->sym[t->nsym++] = (uint32_t)s;
        }
    }
    return true;
}

static bool mflops(mread *r, int ko, ir_poly *p, const char *where) {
    return mpoly(r, jget(r->d, ko, "flops"), p, "flops", where);
}

/* The optional top-level "requires": the shape rules checked at binding (ir_shape_rules). */
static bool mrequires(mread *r, int top) {
    rt_manifest *m = r->m;
    int a = jget(r->d, top, "requires");
    uint32_t i = 0;
    if (a < 0) return true; /* written before the rules were: nothing to check */
    if (r->d->n[a].type != J_ARR || r->d->n[a].count > (1 << 20))
        return mfail(r, "\"requires\" must be an array of at most 2^20 rules");
    m->rules = ir_xcalloc((size_t)r->d->n[a].count + 1, sizeof *m->rules);
    for (int c = r->d->n[a].first; c >= 0; c = r->d->n[c].next, i++) {
        ir_shape_rule *q = &m->rules[i];
        char rel[16], where[48];
        int64_t node = 0;
        snprintf(where, sizeof where, "rule %u", i);
        if (r->d->n[c].type != J_OBJ) return mfail(r, "%s must be an object", where);
        if (!mint(r, c, "node", 0, UINT32_MAX - 1, &node, where) ||
            !mstr(r, c, "rel", rel, sizeof rel, where))
            return false;
        q->node = (ir_id)node;
        if (!strcmp(rel, "ge"))
            q->rel = IR_RULE_GE;
        else if (!strcmp(rel, "eq"))
            q->rel = IR_RULE_EQ;
        else if (!strcmp(rel, "eq_or_one"))
            q->rel = IR_RULE_EQ_OR_ONE;
        else
            return mfail(r, "%s: \"rel\" must be \"ge\", \"eq\" or \"eq_or_one\"", where);
        if (!mpoly(r, jget(r->d, c, "a"), &q->a, "a", where) ||
            !mpoly(r, jget(r->d, c, "b"), &q->b, "b", where))
            return false;
        m->nrules = i + 1;
    }
    return true;
}

/* One kernel: name, region, buffers, symbols, grid, block, smem_bytes, flops. */
static bool mkernel(mread *r, int ko, rt_mkernel *k, uint32_t i) {
    char where[96];
    int64_t v;
    int a, c, d = 0;
    snprintf(where, sizeof where, "kernels[%u]", i);
    if (!mstr(r, ko, "name", k->name, sizeof k->name, where) ||
        !mint(r, ko, "region", -1, INT32_MAX, &v, where))
        return false;
    k->region = (int)v;
    if (!mbufs(r, ko, k, where) || (a = marr(r, ko, "symbols", where)) < 0) return false;
    k->syms = ir_xcalloc((size_t)r->d->n[a].count + 1, sizeof *k->syms);
    for (c = r->d->n[a].first; c >= 0; c = r->d->n[c].next) {
        int s = r->d->n[c].type == J_STR ? msym(r->m, r->d->n[c].str) : -1;
        if (s < 0) return mfail(r, "%s: \"symbols\" must name symbols of the manifest", where);
        k->syms[k->nsyms++] = (uint32_t)s;
    }
    if ((a = marr(r, ko, "grid", where)) < 0 || r->d->n[a].count != 3)
        return mfail(r, "%s: \"grid\" must hold 3 entries", where);
    for (c = r->d->n[a].first; c >= 0; c = r->d->n[c].next, d++)
        if (!mshape(r, jget(r->d, c, "work"), &k->work[d], where) ||
            !mint(r, c, "per", 1, INT64_MAX, &k->per[d], where) ||
            !mint(r, c, "cap", 1, UINT32_MAX, &k->cap[d], where))
            return false;
    if ((a = marr(r, ko, "block", where)) < 0 || r->d->n[a].count != 3)
        return mfail(r, "%s: \"block\" must hold 3 entries", where);
    d = 0;
    for (c = r->d->n[a].first; c >= 0; c = r->d->n[c].next, d++) {
        if (r->d->n[c].type != J_INT || r->d->n[c].i < 1 || r->d->n[c].i > 1024)
            return mfail(r, "%s: a block size must be an integer from 1 to 1024", where);
        k->block[d] = (uint32_t)r->d->n[c].i;
    }
    if (!mint(r, ko, "smem_bytes", 0, UINT32_MAX, &v, where)) return false;
    k->smem = (uint32_t)v;
    /* The sm_90a template's TMA tensor maps and persistent grids are not described to this loader
     * yet: refuse such a kernel rather than launch it with missing parameters. */
    if (jget(r->d, ko, "tensor_maps") >= 0 || jget(r->d, ko, "persistent") >= 0)
        return mfail(
            r,
            "%s (%s) uses TMA tensor maps or a persistent grid (the sm_90a template), which "
            "tx_rt cannot load yet; compile with --target=sm_90 for it",
            where, k->name);
    return mflops(r, ko, &k->flops, where);
}

/* The top object: target, symbols, inputs, outputs, temps, kernels. */
static bool mtop(mread *r, int top) {
    rt_manifest *m = r->m;
    int a, c;
    uint32_t i = 0;
    if (top < 0 || r->d->n[top].type != J_OBJ) return mfail(r, "the top level must be an object");
    if (!mstr(r, top, "target", m->target, sizeof m->target, "top level") ||
        (a = marr(r, top, "symbols", "top level")) < 0)
        return false;
    m->syms = ir_xcalloc((size_t)r->d->n[a].count + 1, sizeof *m->syms);
    for (c = r->d->n[a].first; c >= 0; c = r->d->n[c].next) {
        const jnode *j = &r->d->n[c];
        if (j->type != J_STR || strlen(j->str) >= sizeof m->syms[0] || msym(m, j->str) >= 0)
            return mfail(r, "\"symbols\" must be distinct names");
        memcpy(m->syms[m->nsyms++], j->str, strlen(j->str) + 1);
    }
    if (jget(r->d, top, "inputs") < 0 || jget(r->d, top, "outputs") < 0)
        return mfail(r, "no \"inputs\" or \"outputs\" (written by txc since the loader library; "
                        "compile again)");
    if (!mvalues(r, top, "inputs", &m->in, &m->nin, true) ||
        !mvalues(r, top, "outputs", &m->out, &m->nout, true) ||
        !mvalues(r, top, "temps", &m->temps, &m->ntemps, false) ||
        (a = marr(r, top, "kernels", "top level")) < 0)
        return false;
    m->kernels = ir_xcalloc((size_t)r->d->n[a].count + 1, sizeof *m->kernels);
    for (c = r->d->n[a].first; c >= 0; c = r->d->n[c].next, i++) {
        m->nkernels = i + 1;
        if (!mkernel(r, c, &m->kernels[i], i)) return false;
    }
    return mrequires(r, top);
}

rt_manifest *rt_manifest_parse(const char *text, size_t len, char *err, size_t cap) {
    jdoc d = {text, text, NULL, 0, 0, err, cap};
    const char *p = text;
    rt_manifest *m = ir_xcalloc(1, sizeof *m);
    mread r = {&d, m, err, cap};
    int top;
    err[0] = 0;
    if (!text || len > J_MAX_TEXT) {
        snprintf(err, cap, "bad manifest: %s", text ? "larger than 64 MiB" : "no text");
        rt_manifest_free(m);
        return NULL;
    }
    d.e = text + len;
    top = jvalue(&d, &p, 0);
    jskip(&d, &p);
    if (top >= 0 && p != d.e) jfail(&d, "text after the top-level value");
    if (top < 0 || err[0] || !mtop(&r, top)) {
        jdoc_free(&d);
        rt_manifest_free(m);
        return NULL;
    }
    jdoc_free(&d);
    return m;
}

void rt_manifest_free(rt_manifest *m) {
    if (!m) return;
    for (uint32_t k = 0; k < m->nkernels; k++) {
        free(m->kernels[k].bufs);
        free(m->kernels[k].syms);
    }
    free(m->kernels);
    free(m->rules);
    free(m->syms);
    free(m->in);
    free(m->out);
    free(m->temps);
    free(m);
}

/* ---- binding and planning ------------------------------------------------- */

bool rt_manifest_resolve(const rt_manifest *m, const ir_shape *s, const int64_t *syms,
                         int64_t *dims) {
    for (unsigned i = 0; i < s->rank; i++) {
        ir_dim d = s->dim[i];
        dims[i] =
            IR_DIM_IS_SYM(d) ? (IR_DIM_SYMIDX(d) < m->nsyms ? syms[IR_DIM_SYMIDX(d)] : -1) : d;
        if (dims[i] < 0) return false;
    }
    return true;
}

/* Writes a manifest shape like "[M, 4]" into buf. */
static const char *mshape_str(const rt_manifest *m, const ir_shape *s, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (unsigned i = 0; i < s->rank && n < cap; i++) {
        ir_dim d = s->dim[i];
        if (IR_DIM_IS_SYM(d))
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "",
                                  m->syms[IR_DIM_SYMIDX(d)]);
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)d);
    }
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

bool rt_manifest_bind(const rt_manifest *m, const rt_tensor *inputs, uint32_t n, int64_t *syms,
                      char *err, size_t cap) {
    char sb[256];
    for (uint32_t s = 0; s < m->nsyms; s++) syms[s] = -1;
    if (n != m->nin) {
        snprintf(err, cap, "the kernels take %u inputs, %u were given", m->nin, n);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const rt_mvalue *v = &m->in[i];
        const char *name = v->name[0] ? v->name : "(unnamed)";
        if (inputs[i].dtype != v->dtype || inputs[i].rank != v->shape.rank) {
            snprintf(err, cap, "input %u (%s): expected %s%s, got %s of rank %u", i, name,
                     ir_dtype_name(v->dtype), mshape_str(m, &v->shape, sb, sizeof sb),
                     ir_dtype_name(inputs[i].dtype), inputs[i].rank);
            return false;
        }
        for (unsigned d = 0; d < v->shape.rank; d++) {
            ir_dim want = v->shape.dim[d];
            int64_t got = inputs[i].dim[d],
                    *bound = IR_DIM_IS_SYM(want) ? &syms[IR_DIM_SYMIDX(want)] : NULL;
            if (got < 0 || (bound && *bound >= 0 && *bound != got) || (!bound && want != got)) {
                snprintf(err, cap, "input %u (%s): dim %u is %lld, expected %s%s", i, name, d,
                         (long long)got, bound ? "the same size as before for " : "",
                         bound ? m->syms[IR_DIM_SYMIDX(want)]
                               : mshape_str(m, &v->shape, sb, sizeof sb));
                return false;
            }
            if (bound) *bound = got;
        }
    }
    for (uint32_t i = 0; i < m->nrules; i++) { /* what the kernels trust of the sizes */
        const ir_shape_rule *q = &m->rules[i];
        static const char *const rel[] = {">=", "==", "== 1 or =="};
        double a = 0, b = 0;
        if (ir_shape_rule_holds(q, syms, m->nsyms, &a, &b)) continue;
        snprintf(err, cap,
                 "with these inputs, value %u of the program has no valid shape: it needs %.0f "
                 "%s %.0f (a slice within its input, matching element counts, inner dims or "
                 "broadcast extents)",
                 q->node, a, rel[q->rel], b);
        return false;
    }
    return true;
}

/* Grid of kernel k at syms (see the manifest's geometry rule); false on overflow or an unbound
 * symbol. */
static bool mgrid(const rt_manifest *m, const rt_mkernel *k, const int64_t *syms,
                  uint32_t grid[3]) {
    for (int d = 0; d < 3; d++) {
        int64_t dims[IR_MAX_RANK], n = 1, b;
        if (!rt_manifest_resolve(m, &k->work[d], syms, dims)) return false;
        for (unsigned i = 0; i < k->work[d].rank; i++)
            if (!ir_mul_ok(n, dims[i], &n)) return false;
        b = n / k->per[d] + (n % k->per[d] != 0);
        grid[d] = (uint32_t)(b > k->cap[d] ? k->cap[d] : b);
    }
    return true;
}

/* Adds the manifest's inputs, outputs and temps to p as buffers, in that order. */
static bool mplan_bufs(const rt_manifest *m, rt_gpu_plan *p, const int64_t *syms, char *err,
                       size_t cap) {
    for (uint32_t i = 0; i < m->nin + m->nout + m->ntemps; i++) {
        uint8_t role = i < m->nin             ? RT_BUF_INPUT
                       : i < m->nin + m->nout ? RT_BUF_OUTPUT
                                              : RT_BUF_TEMP;
        uint32_t ix = role == RT_BUF_INPUT    ? i
                      : role == RT_BUF_OUTPUT ? i - m->nin
                                              : i - m->nin - m->nout;
        const rt_mvalue *v = role == RT_BUF_INPUT    ? &m->in[ix]
                             : role == RT_BUF_OUTPUT ? &m->out[ix]
                                                     : &m->temps[ix];
        rt_buf_desc b;
        memset(&b, 0, sizeof b);
        b.role = role;
        b.index = ix;
        b.dtype = v->dtype;
        b.rank = v->shape.rank;
        if (!rt_manifest_resolve(m, &v->shape, syms, b.dim)) {
            snprintf(err, cap, "cannot size %s %u: a dim is unbound",
                     role == RT_BUF_TEMP    ? "intermediate"
                     : role == RT_BUF_INPUT ? "input"
                                            : "output",
                     ix);
            return false;
        }
        if (role == RT_BUF_TEMP || !v->name[0])
            snprintf(b.name, sizeof b.name, role == RT_BUF_TEMP ? "temp%u" : "out%u", ix);
        else
            snprintf(b.name, sizeof b.name, "%s", v->name);
        rt_gpu_plan_add_buf(p, &b);
    }
    return true;
}

/* Adds kernel k with its parameters and geometry at syms. */
static bool mplan_kernel(const rt_manifest *m, rt_gpu_plan *p, const rt_mkernel *k,
                         const int64_t *syms, char *err, size_t cap) {
    rt_kernel_desc kd;
    memset(&kd, 0, sizeof kd);
    snprintf(kd.name, sizeof kd.name, "%s", k->name);
    if (!mgrid(m, k, syms, kd.grid)) {
        snprintf(err, cap, "kernel %s: launch geometry overflows or a size is unbound", k->name);
        return false;
    }
    memcpy(kd.block, k->block, sizeof kd.block);
    kd.smem = k->smem;
    kd.nparams = k->nbufs + k->nsyms;
    kd.params = ir_xcalloc(kd.nparams + 1, sizeof *kd.params);
    for (uint32_t i = 0; i < k->nbufs; i++) {
        kd.params[i].kind = RT_KP_BUF;
        kd.params[i].buf = rt_gpu_plan_find_buf(p, k->bufs[i].role, k->bufs[i].index);
        kd.bytes += (double)rt_buf_bytes(&p->bufs[kd.params[i].buf]);
    }
    for (uint32_t i = 0; i < k->nsyms; i++) {
        kd.params[k->nbufs + i].kind = RT_KP_I64;
        kd.params[k->nbufs + i].value = syms[k->syms[i]];
    }
    kd.region = k->region;
    if (!ir_poly_eval(&k->flops, syms, m->nsyms, &kd.flops)) kd.flops = -1;
    kd.predicted_us = -1;
    snprintf(kd.kind, sizeof kd.kind, "%s", k->region >= 0 ? "region" : "copy");
    rt_gpu_plan_add_kernel(p, &kd);
    free(kd.params);
    return true;
}

rt_gpu_plan *rt_manifest_plan(const rt_manifest *m, const char *ptx, const int64_t *syms, char *err,
                              size_t cap) {
    rt_gpu_plan *p = rt_gpu_plan_new();
    bool ok = ptx != NULL;
    if (!ok)
        snprintf(err, cap, "no PTX given");
    else
        p->ptx = ir_xstrdup(ptx);
    ok = ok && mplan_bufs(m, p, syms, err, cap);
    for (uint32_t k = 0; ok && k < m->nkernels; k++)
        ok = mplan_kernel(m, p, &m->kernels[k], syms, err, cap);
    ok = ok && rt_gpu_plan_check(p, err, cap);
    if (!ok) {
        rt_gpu_plan_free(p);
        return NULL;
    }
    return p;
}
