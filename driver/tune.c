/* tune.c - the tuning cache file and `txc tune` (docs/runtime.md "Tuning cache"). The cache
 * is one JSON object, {"tx_tune_cache": 1, "entries": [...]}, one entry per kernel key, GPU,
 * device and driver; it is read through runtime/file.c (regular files only, bounded) by a
 * small strict parser here and written atomically through an rt_outset. `txc tune` times the
 * model's best few schedules of every kernel on the GPU and keeps the fastest. Contracts in
 * driver/driver.h. */
#include "driver/driver.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { TUNE_MAX_BYTES = 16 << 20, TUNE_MAX_DEPTH = 16, TUNE_MAX_ENTRIES = 1 << 16 };

/* ---- a small JSON reader ------------------------------------------------------------------ */

typedef enum { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_kind;
typedef struct jv {
    jv_kind kind;
    double num;
    char *str;       /* JV_STR: the text (escapes resolved); JV_OBJ: unused */
    struct jv *kids; /* JV_ARR, JV_OBJ: elements (objects: values, keys in keys[]) */
    char **keys;
    unsigned n;
} jv;

typedef struct jparse {
    const char *s, *e;
    char err[160];
} jparse;

static void jv_free(jv *v) {
    for (unsigned i = 0; i < v->n; i++) {
        jv_free(&v->kids[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->kids);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

static bool jfail(jparse *p, const char *what) {
    if (!p->err[0]) snprintf(p->err, sizeof p->err, "%s", what);
    return false;
}

static void jws(jparse *p) {
    while (p->s < p->e && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

/* A JSON string (\uXXXX below 0x80 kept, others replaced by '?'). */
static bool jstr(jparse *p, char **out) {
    if (p->s >= p->e || *p->s != '"') return jfail(p, "expected a string");
    p->s++;
    size_t cap = 16, n = 0;
    char *b = ir_xmalloc(cap);
    while (p->s < p->e && *p->s != '"') {
        char ch = *p->s++;
        if ((unsigned char)ch < 0x20) {
            free(b);
            return jfail(p, "control character in a string");
        }
        if (ch == '\\') {
            if (p->s >= p->e) break;
            char esc = *p->s++;
            switch (esc) {
                case 'n': ch = '\n'; break;
                case 't': ch = '\t'; break;
                case 'r': ch = '\r'; break;
                case 'b': ch = '\b'; break;
                case 'f': ch = '\f'; break;
                case 'u': {
                    unsigned v = 0;
                    for (int i = 0; i < 4; i++, p->s++) {
                        char h = p->s < p->e ? *p->s : 0;
                        int d = h >= '0' && h <= '9'   ? h - '0'
                                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                       : -1;
                        if (d < 0) {
                            free(b);
                            return jfail(p, "bad \\u escape");
                        }
                        v = v * 16 + (unsigned)d;
                    }
                    ch = v && v < 0x80 ? (char)v : '?';
                    break;
                }
                case '"':
                case '\\':
                case '/': ch = esc; break;
                default: free(b); return jfail(p, "bad escape in a string");
            }
        }
        if (n + 2 > cap) b = ir_xrealloc(b, cap *= 2);
        b[n++] = ch;
    }
    if (p->s >= p->e) {
        free(b);
        return jfail(p, "unterminated string");
    }
    p->s++;
    b[n] = 0;
    *out = b;
    return true;
}

static bool jvalue(jparse *p, jv *v, int depth);

/* Elements of an array or members of an object, after the opening bracket. */
static bool jlist(jparse *p, jv *v, int depth, bool obj) {
    unsigned cap = 0;
    char close = obj ? '}' : ']';
    jws(p);
    if (p->s < p->e && *p->s == close) {
        p->s++;
        return true;
    }
    for (;;) {
        if (v->n == TUNE_MAX_ENTRIES) return jfail(p, "too many elements");
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            v->kids = ir_xrealloc(v->kids, cap * sizeof *v->kids);
            if (obj) v->keys = ir_xrealloc(v->keys, cap * sizeof *v->keys);
        }
        memset(&v->kids[v->n], 0, sizeof v->kids[v->n]);
        if (obj) {
            jws(p);
            v->keys[v->n] = NULL;
            if (!jstr(p, &v->keys[v->n])) return false;
            jws(p);
            if (p->s >= p->e || *p->s != ':') {
                v->n++;
                return jfail(p, "expected ':'");
            }
            p->s++;
        }
        bool ok = jvalue(p, &v->kids[v->n], depth + 1);
        v->n++;
        if (!ok) return false;
        jws(p);
        if (p->s < p->e && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->e && *p->s == close) {
            p->s++;
            return true;
        }
        return jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool jvalue(jparse *p, jv *v, int depth) {
    memset(v, 0, sizeof *v);
    if (depth > TUNE_MAX_DEPTH) return jfail(p, "nested too deeply");
    jws(p);
    if (p->s >= p->e) return jfail(p, "unexpected end of the file");
    char c = *p->s;
    if (c == '{' || c == '[') {
        p->s++;
        v->kind = c == '{' ? JV_OBJ : JV_ARR;
        return jlist(p, v, depth, c == '{');
    }
    if (c == '"') {
        v->kind = JV_STR;
        return jstr(p, &v->str);
    }
    static const struct {
        const char *w;
        jv_kind k;
        double n;
    } words[] = {{"null", JV_NULL, 0}, {"true", JV_BOOL, 1}, {"false", JV_BOOL, 0}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].w);
        if ((size_t)(p->e - p->s) >= n && !strncmp(p->s, words[i].w, n)) {
            p->s += n;
            v->kind = words[i].k, v->num = words[i].n;
            return true;
        }
    }
    char buf[64];
    size_t n = 0;
    while (p->s + n < p->e && n + 1 < sizeof buf && strchr("+-0123456789.eE", p->s[n])) n++;
    memcpy(buf, p->s, n);
    buf[n] = 0;
    char *end;
    v->num = strtod(buf, &end);
    if (n == 0 || *end || !isfinite(v->num)) return jfail(p, "expected a value");
    p->s += n;
    v->kind = JV_NUM;
    return true;
}

static const jv *jget(const jv *o, const char *key) {
    if (!o || o->kind != JV_OBJ) return NULL;
    for (unsigned i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key)) return &o->kids[i];
    return NULL;
}

/* ---- entries ---------------------------------------------------------------------------- */

/* A schedule from {"schedule": NAME, "params": [..]}; false with why. */
static bool read_sched(const jv *o, ir_schedule *s, char *why, size_t cap) {
    const jv *nm = jget(o, "schedule"), *pa = jget(o, "params");
    memset(s, 0, sizeof *s);
    if (!nm || nm->kind != JV_STR) return snprintf(why, cap, "an entry lacks \"schedule\""), false;
    int id = pass_schedule_find(nm->str);
    if (id < 0) return snprintf(why, cap, "unknown schedule \"%.60s\"", nm->str), false;
    s->id = (uint16_t)id;
    if (pa && pa->kind != JV_ARR) return snprintf(why, cap, "\"params\" is not a list"), false;
    for (unsigned i = 0; pa && i < pa->n; i++) {
        if (i >= IR_SCHED_PARAMS || pa->kids[i].kind != JV_NUM ||
            pa->kids[i].num != floor(pa->kids[i].num) || fabs(pa->kids[i].num) > 1e9)
            return snprintf(why, cap, "bad \"params\" of %.60s", nm->str), false;
        s->p[i] = (int32_t)pa->kids[i].num;
    }
    return true;
}

static void copy_str(char *dst, size_t cap, const jv *v) {
    snprintf(dst, cap, "%s", v && v->kind == JV_STR ? v->str : "");
}

static double num_or(const jv *v, double dflt) { return v && v->kind == JV_NUM ? v->num : dflt; }

/* One entry object into e; false with why. */
static bool read_entry(const jv *o, pass_tune_entry *e, char *why, size_t cap) {
    memset(e, 0, sizeof *e);
    if (o->kind != JV_OBJ) return snprintf(why, cap, "an entry is not an object"), false;
    const jv *k = jget(o, "key"), *g = jget(o, "gpu");
    if (!k || k->kind != JV_STR || strlen(k->str) != 16 || !g || g->kind != JV_STR)
        return snprintf(why, cap, "an entry lacks a 16-digit \"key\" or a \"gpu\""), false;
    copy_str(e->key, sizeof e->key, k);
    copy_str(e->gpu, sizeof e->gpu, g);
    copy_str(e->device, sizeof e->device, jget(o, "device"));
    e->driver = (int)num_or(jget(o, "driver"), 0);
    if (!read_sched(o, &e->best, why, cap)) return false;
    e->best.source = IR_SCHED_MEASURED;
    const jv *cs = jget(o, "candidates");
    for (unsigned i = 0; cs && cs->kind == JV_ARR && i < cs->n && e->ncand < 8; i++) {
        pass_tune_cand *c = &e->cand[e->ncand];
        if (!read_sched(&cs->kids[i], &c->s, why, cap)) return false;
        c->predicted_us = num_or(jget(&cs->kids[i], "predicted_us"), -1);
        c->measured_us = num_or(jget(&cs->kids[i], "measured_us"), -1);
        e->ncand++;
    }
    return true;
}

void drv_tune_put(pass_tune *t, const pass_tune_entry *e) {
    for (unsigned i = 0; i < t->n; i++)
        if (!strcmp(t->e[i].key, e->key) && !strcmp(t->e[i].gpu, e->gpu) &&
            !strcmp(t->e[i].device, e->device) && t->e[i].driver == e->driver) {
            t->e[i] = *e;
            return;
        }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->e = ir_xrealloc(t->e, t->cap * sizeof *t->e);
    }
    t->e[t->n++] = *e;
}

void drv_tune_free(pass_tune *t) {
    free(t->e);
    memset(t, 0, sizeof *t);
}

bool drv_tune_parse(const char *text, size_t len, pass_tune *t, char *err, size_t cap) {
    jparse p = {.s = text, .e = text + len};
    jv root;
    memset(t, 0, sizeof *t);
    bool ok = jvalue(&p, &root, 0);
    if (ok) {
        jws(&p);
        if (p.s != p.e) ok = jfail(&p, "text after the object");
    }
    const jv *ver = ok ? jget(&root, "tx_tune_cache") : NULL, *es = jget(&root, "entries");
    if (ok && (!ver || ver->kind != JV_NUM || ver->num != 1 || !es || es->kind != JV_ARR))
        ok = jfail(&p, "not a tx tuning cache (version 1 with \"entries\")");
    for (unsigned i = 0; ok && i < es->n; i++) {
        pass_tune_entry e;
        char why[160];
        if (!read_entry(&es->kids[i], &e, why, sizeof why)) {
            snprintf(p.err, sizeof p.err, "entry %u: %s", i, why);
            ok = false;
        } else {
            drv_tune_put(t, &e);
        }
    }
    if (!ok) {
        snprintf(err, cap, "%s", p.err);
        drv_tune_free(t);
    }
    jv_free(&root);
    return ok;
}

bool drv_tune_default_path(char *buf, size_t cap) {
    const char *dir = getenv("TX_CACHE_DIR"), *home = getenv("HOME");
    if (dir && dir[0])
        snprintf(buf, cap, "%s/tune.json", dir);
    else if (home && home[0])
        snprintf(buf, cap, "%s/.cache/tx/tune.json", home);
    else
        return false;
    return true;
}

bool drv_tune_load(const char *path, pass_tune *t, char *err, size_t cap) {
    struct stat st;
    memset(t, 0, sizeof *t);
    if (stat(path, &st) != 0 && errno == ENOENT) return true; /* no cache yet: empty */
    char rerr[1100], why[200];
    size_t n;
    char *buf = rt_file_read_all(path, TUNE_MAX_BYTES, &n, rerr, sizeof rerr);
    if (!buf) {
        snprintf(err, cap, "cannot read the tuning cache %s", rerr);
        return false;
    }
    bool ok = drv_tune_parse(buf, n, t, why, sizeof why);
    free(buf);
    if (!ok) snprintf(err, cap, "%s: not a valid tuning cache: %s", path, why);
    return ok;
}

static void put_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void put_sched(FILE *f, const ir_schedule *s) {
    fputs("\"schedule\": ", f);
    put_str(f, pass_schedule_name(s->id));
    fputs(", \"params\": [", f);
    unsigned np = pass_schedule_nparams(s->id);
    for (unsigned i = 0; i < np; i++) fprintf(f, "%s%d", i ? ", " : "", (int)s->p[i]);
    fputc(']', f);
}

static void put_time(FILE *f, const char *key, double us) {
    if (us >= 0)
        fprintf(f, ", \"%s\": %.3f", key, us);
    else
        fprintf(f, ", \"%s\": null", key);
}

/* Creates the directories above path (mkdir -p of its dirname). */
static void mkdir_parents(const char *path) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0777);
            *p = '/';
        }
}

bool drv_tune_save(const char *path, const pass_tune *t, char *err, size_t cap) {
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* follows a symbolic link */
        snprintf(err, cap, "%s: the tuning cache must be a regular file (this is a %s)", path,
                 S_ISDIR(st.st_mode)    ? "directory"
                 : S_ISFIFO(st.st_mode) ? "FIFO"
                                        : "special file");
        return false;
    }
    mkdir_parents(path);
    rt_outset *set = rt_outset_new();
    FILE *f = rt_outset_open(set, path, err, cap);
    bool ok = f != NULL;
    if (ok) {
        fputs("{\"tx_tune_cache\": 1, \"entries\": [", f);
        for (unsigned i = 0; i < t->n; i++) {
            const pass_tune_entry *e = &t->e[i];
            fputs(i ? ",\n  {\"key\": " : "\n  {\"key\": ", f);
            put_str(f, e->key);
            fputs(", \"gpu\": ", f);
            put_str(f, e->gpu);
            fputs(", \"device\": ", f);
            put_str(f, e->device);
            fprintf(f, ", \"driver\": %d, ", e->driver);
            put_sched(f, &e->best);
            fputs(",\n   \"candidates\": [", f);
            for (unsigned k = 0; k < e->ncand; k++) {
                fputs(k ? ", {" : "{", f);
                put_sched(f, &e->cand[k].s);
                put_time(f, "predicted_us", e->cand[k].predicted_us);
                put_time(f, "measured_us", e->cand[k].measured_us);
                fputc('}', f);
            }
            fputs("]}", f);
        }
        fputs("\n]}\n", f);
        ok = rt_outset_commit(set, err, cap);
    }
    rt_outset_free(set);
    return ok;
}

pass_tune *drv_tune_open(const char *path, const char *who, FILE *warn) {
    char def[1024], err[1400];
    if (!path) {
        if (!drv_tune_default_path(def, sizeof def)) return NULL;
        path = def;
    }
    pass_tune *t = ir_xcalloc(1, sizeof *t);
    if (!drv_tune_load(path, t, err, sizeof err)) {
        if (warn) fprintf(warn, "%s: warning: %s (ignored; txc tune rewrites it)\n", who, err);
        free(t);
        return NULL;
    }
    if (t->n == 0) {
        free(t);
        return NULL;
    }
    return t;
}

void drv_tune_close(pass_tune *t) {
    if (!t) return;
    drv_tune_free(t);
    free(t);
}

/* ---- txc tune ------------------------------------------------------------------------------ */

enum { TUNE_MAX_CANDS = 8 };

/* What tuning learns of one region. */
typedef struct tune_region {
    bool tuned;
    char key[24];
    pass_tune_cand cand[TUNE_MAX_CANDS]; /* cand[0]: the model's choice (the planned one) */
    unsigned ncand;
} tune_region;

/* Runs graph g (planned for the GPU) once for its outputs and times its kernels: us[r] per
 * region r (kernels of a region summed), outputs into outs (caller frees). False with an error
 * reported. */
static bool time_graph(rt_cuda *c, const ir_graph *g, int target, const rt_tensor *inputs,
                       long iters, double *us, rt_tensor *outs, tx_diag *d) {
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    rt_gpu_plan *p = drv_gpu_plan_build(g, target, inputs, syms, d);
    rt_gpu_exec *x = p ? rt_gpu_exec_new(c, p, true) : NULL;
    char err[512];
    bool ok = false;
    rt_bench_result res;
    memset(&res, 0, sizeof res);
    if (p && !x) tx_error(d, "%s", rt_cuda_error(c));
    if (x && !rt_gpu_exec_upload(x, inputs, p->ninputs, err, sizeof err)) {
        tx_error(d, "%s", err);
    } else if (x) {
        rt_bench_result_init(&res, p, "tune");
        if (!rt_gpu_exec_poison(x) || !rt_gpu_exec_launch_all(x) ||
            !rt_gpu_exec_download(x, outs, p->noutputs) ||
            !rt_bench_time(c, x, p, (int)iters, 0, &res)) {
            tx_error(d, "%s", rt_gpu_exec_error(x));
        } else {
            for (uint32_t k = 0; k < res.nkernels; k++)
                if (res.k[k].region >= 0 && (uint32_t)res.k[k].region < g->nregions)
                    us[res.k[k].region] += res.k[k].us;
            ok = true;
        }
        rt_bench_result_free(&res);
    }
    rt_gpu_exec_free(x);
    rt_gpu_plan_free(p);
    free(syms);
    return ok;
}

bool drv_tune_outputs_agree(const ir_graph *g, const rt_tensor *got, const rt_tensor *ref,
                            uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        rt_cmp cmp;
        char err[200];
        int64_t terms = got[k].dtype == IR_F32 ? drv_out_terms(g, k) : 0;
        rt_tol tol = terms > 1 ? rt_tolerance_sum(IR_F32, terms) : rt_tolerance(got[k].dtype);
        tol.scaled = terms > 1 ? 2 * tol.scaled : 0; /* two orders, each that close to the sum */
        if (!rt_compare(&got[k], &ref[k], tol, &cmp, err, sizeof err) || cmp.bad_scaled != 0)
            return false; /* bad_scaled: the elementwise verdict's count when scaled is 0 */
    }
    return true;
}

/* The candidates of every region: the planned schedule first, then the model's best others. */
static unsigned gather(const ir_graph *g, const pass_index *ix, const pass_gpu *gpu, int64_t budget,
                       unsigned want, tune_region *tr) {
    unsigned rounds = 0;
    for (uint32_t r = 0; r < g->nregions; r++) {
        const ir_region *rg = &g->regions[r];
        pass_candidate c[PASS_MAX_CANDIDATES];
        unsigned n = pass_schedule_candidates(g, ix, r, gpu, budget, c, PASS_MAX_CANDIDATES);
        if (rg->sched.id == PASS_SCH_NONE || n < 2) continue;
        tr[r].tuned = true;
        pass_region_key(g, ix, r, tr[r].key);
        tr[r].cand[0].s = rg->sched;
        tr[r].cand[0].s.source = IR_SCHED_MODEL;
        tr[r].cand[0].predicted_us = -1;
        tr[r].ncand = 1;
        for (unsigned i = 0; i < n; i++) {
            if (pass_schedule_eq(&c[i].s, &rg->sched)) {
                tr[r].cand[0].predicted_us = c[i].predicted_us;
                continue;
            }
            if (tr[r].ncand < want && tr[r].ncand < TUNE_MAX_CANDS)
                tr[r].cand[tr[r].ncand++] = (pass_tune_cand){c[i].s, c[i].predicted_us, -1};
        }
        for (unsigned i = 0; i < tr[r].ncand; i++) tr[r].cand[i].measured_us = -1;
        if (tr[r].ncand > rounds) rounds = tr[r].ncand;
    }
    return rounds;
}

/* A copy of g with region r planned for candidate `round` of tr[r] (those without one keep
 * theirs). NULL with an error reported. */
static ir_graph *round_graph(const ir_graph *g, const tune_region *tr, unsigned round,
                             const pass_gpu *gpu, int64_t budget, tx_diag *d) {
    ir_graph *c = ir_graph_clone(g);
    pass_index ix;
    if (!c || !pass_index_build(c, &ix)) {
        tx_error(d, "out of memory planning a tuning round");
        ir_graph_free(c);
        return NULL;
    }
    for (uint32_t r = 0; r < c->nregions; r++) {
        if (!tr[r].tuned || round >= tr[r].ncand) continue;
        char why[768];
        if (!pass_plan_region_with(c, &ix, r, budget, gpu, &tr[r].cand[round].s, why, sizeof why))
            tx_error(d, "internal error: tuning candidate of k%u refused: %s", r, why);
    }
    pass_index_free(&ix);
    return c;
}

/* Prints one kernel's result: every candidate with its predicted and measured time. */
static void print_region(FILE *out, uint32_t r, const tune_region *tr, unsigned best) {
    char b[128];
    fprintf(out, "k%u (key %s):\n", r, tr->key);
    for (unsigned i = 0; i < tr->ncand; i++) {
        pass_schedule_str(&tr->cand[i].s, b, sizeof b);
        fprintf(out, "  %s %-44s predicted %10.3f us  measured ", i == best ? "*" : " ", b,
                tr->cand[i].predicted_us);
        if (tr->cand[i].measured_us >= 0)
            fprintf(out, "%10.3f us", tr->cand[i].measured_us);
        else
            fputs("    failed", out);
        fputs(i == 0 ? "  (the model's choice)\n" : "\n", out);
    }
    const pass_tune_cand *m = &tr->cand[0], *w = &tr->cand[best];
    if (best == 0)
        fprintf(out, "  kept the model's choice (%.3f us)\n", m->measured_us);
    else if (m->measured_us > 0 && w->measured_us > 0)
        fprintf(out, "  kept the fastest: %.3f us against the model's choice %.3f us (%.2fx)\n",
                w->measured_us, m->measured_us, m->measured_us / w->measured_us);
}

bool drv_tune(const ir_graph *g, const ir_graph *raw, pass_ctx *pc, const rt_tensor *inputs,
              const drv_tune_opts *o, FILE *out, tx_diag *d) {
    (void)raw;
    char err[1400], path[1024];
    if (o->cache_path)
        snprintf(path, sizeof path, "%s", o->cache_path);
    else if (!drv_tune_default_path(path, sizeof path)) {
        tx_error(d, "no place for the tuning cache: set TX_CACHE_DIR or HOME, or pass "
                    "--tune-cache=PATH");
        return false;
    }
    pass_tune cache;
    if (!drv_tune_load(path, &cache, err, sizeof err)) {
        fprintf(stderr, "txc: warning: %s (rewritten)\n", err);
        memset(&cache, 0, sizeof cache);
    }
    rt_cuda *c = rt_cuda_new(err, sizeof err);
    if (!c) {
        tx_error(d, "txc tune times kernels on a GPU and none is usable here: %s", err);
        drv_tune_free(&cache);
        return false;
    }
    const rt_cuda_info *info = rt_cuda_get_info(c);
    int target = o->target == DRV_TARGET_DEVICE ? drv_target_for_cc(info->cc) : o->target;
    const pass_gpu *gpu = pass_ctx_gpu(pc);
    int64_t budget = pass_sram_budget(pc);
    tune_region *tr = ir_xcalloc(g->nregions + 1, sizeof *tr);
    pass_index ix;
    bool ok = pass_index_build(g, &ix);
    unsigned rounds = ok ? gather(g, &ix, gpu, budget, o->candidates ? o->candidates : 4, tr) : 0;
    if (ok) pass_index_free(&ix);
    uint32_t nout = g->nodes[ir_output(g)].nin;
    rt_tensor *ref = ir_xcalloc(nout + 1, sizeof *ref);
    double *us = ir_xcalloc(g->nregions + 1, sizeof *us);
    long iters = o->iters > 0 ? o->iters : 20;
    char slug[64];
    rt_gpu_slug(info->name, slug, sizeof slug);
    if (pass_gpu_find(slug) && strcmp(slug, gpu->name))
        fprintf(out, "note: tuning on a %s for the cost model of --gpu=%s (pass --gpu=%s)\n",
                info->name, gpu->name, slug);
    if (ok && rounds == 0)
        fprintf(out,
                "%s: no kernel with a schedule space at bound sizes (bind sizes with -D); "
                "nothing to tune\n",
                g->name ? g->name : "program");
    for (unsigned round = 0; ok && round < rounds; round++) {
        tx_diag rd; /* a candidate's failure is reported, not the run's */
        tx_diag_init(&rd, stderr, NULL, NULL, 0);
        tx_diag *dd = round ? &rd : d;
        ir_graph *rg = round ? round_graph(g, tr, round, gpu, budget, dd) : NULL;
        rt_tensor *got = round ? ir_xcalloc(nout + 1, sizeof *got) : ref;
        memset(us, 0, (g->nregions + 1) * sizeof *us);
        bool ran =
            (round == 0 || rg) && time_graph(c, rg ? rg : g, target, inputs, iters, us, got, dd);
        bool agree = ran && (round == 0 || drv_tune_outputs_agree(g, got, ref, nout));
        if (round == 0 && !ran) ok = false; /* the planned program itself does not run */
        if (ran && !agree)
            fprintf(out,
                    "note: round %u's outputs differ from the model's plan; its schedules "
                    "are not kept\n",
                    round);
        for (uint32_t r = 0; agree && r < g->nregions; r++)
            if (tr[r].tuned && round < tr[r].ncand) tr[r].cand[round].measured_us = us[r];
        if (round) {
            for (uint32_t k = 0; k < nout; k++) rt_tensor_free(&got[k]);
            free(got);
        }
        ir_graph_free(rg);
        if (round && !ran) /* a candidate that does not compile or run: reported, skipped */
            fprintf(out, "note: round %u failed (see above); its schedules are not kept\n", round);
    }
    unsigned kept = 0;
    for (uint32_t r = 0; ok && r < g->nregions; r++) {
        if (!tr[r].tuned) continue;
        unsigned best = 0;
        for (unsigned i = 1; i < tr[r].ncand; i++)
            if (tr[r].cand[i].measured_us > 0 &&
                (tr[r].cand[best].measured_us <= 0 ||
                 tr[r].cand[i].measured_us < tr[r].cand[best].measured_us))
                best = i;
        print_region(out, r, &tr[r], best);
        if (tr[r].cand[best].measured_us < 0) continue;
        pass_tune_entry e;
        memset(&e, 0, sizeof e);
        snprintf(e.key, sizeof e.key, "%s", tr[r].key);
        snprintf(e.gpu, sizeof e.gpu, "%s", gpu->name);
        snprintf(e.device, sizeof e.device, "%s", info->name);
        e.driver = info->driver_version;
        e.best = tr[r].cand[best].s;
        e.ncand = tr[r].ncand;
        memcpy(e.cand, tr[r].cand, tr[r].ncand * sizeof *e.cand);
        drv_tune_put(&cache, &e);
        kept++;
    }
    if (ok && kept) {
        ok = drv_tune_save(path, &cache, err, sizeof err);
        if (!ok)
            tx_error(d, "%s", err);
        else
            fprintf(out, "tuned %u kernel%s on %s (driver %d): %s\n", kept, kept == 1 ? "" : "s",
                    info->name, info->driver_version, path);
    }
    for (uint32_t k = 0; k < nout; k++) rt_tensor_free(&ref[k]);
    free(ref);
    free(us);
    free(tr);
    drv_tune_free(&cache);
    rt_cuda_free(c);
    return ok;
}
