/* fuzz_one.h - the per-input checks shared by the libFuzzer targets
 * (tests/fuzz/fuzz_*.c) and the regression replay in
 * tests/unit/test_hostile.c, so a saved crash replays through exactly the
 * code that found it.
 *
 * Each fuzz_*_one function takes one input, runs it through a stage of the
 * compiler and checks the contracts that hold for every input:
 *  - no crash, leak or undefined behaviour (the sanitizers see to that);
 *  - a stage that fails has reported an error, and one that reports an
 *    error has failed (no silent failure, no error with a result);
 *  - the first diagnostic is "FILE:LINE:COL: error: MSG" with LINE inside
 *    the source, or "txc: error: MSG";
 *  - what a stage returns passes the IR verifier; emitted PTX names a
 *    .version and a .target;
 *  - the .npy reader agrees with itself in memory and on disk, and what it
 *    accepts survives a write and a read unchanged.
 * They return NULL when every check holds, else a static string naming the
 * broken one (the fuzzers abort on it; the unit test fails on it).
 *
 * Options of an input: comment lines at the top of a .tx input may carry
 * command-line options, as the suite programs do ("# bench: -D N=4096"):
 * -D NAME=INT (INT from 1 to 2^62-1, as txc accepts), --no-fuse,
 * --entry NAME, --target=T, --gpu=NAME, --sram-budget=BYTES. This keeps a
 * reproducer self-contained.
 *
 * Include after defining FUZZ_WITH_CODEGEN to 1 to get fuzz_compile_one
 * (needs codegen/codegen.h and LLVM); 0 leaves it out. */
#ifndef TX_FUZZ_ONE_H
#define TX_FUZZ_ONE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#ifndef FUZZ_WITH_CODEGEN
#define FUZZ_WITH_CODEGEN 1
#endif
#if FUZZ_WITH_CODEGEN
#include "codegen/codegen.h"
#endif

#define FUZZ_FILE     "fuzz.tx"
#define FUZZ_NPY      "fuzz.npy"
#define FUZZ_MAX_DEFS 8

/* Options read from an input's leading comment lines. */
typedef struct fuzz_opts {
    fe_define defs[FUZZ_MAX_DEFS];
    unsigned ndefs;
    char def_names[FUZZ_MAX_DEFS][32];
    char entry[64];  /* "" : the default entry */
    char target[16]; /* "" : sm_90 */
    char gpu[16];    /* "" : h200 */
    bool no_fuse;
    int64_t sram_budget; /* 0: the GPU's default */
} fuzz_opts;

/* Copies token [s, s+n) into dst (cap bytes); false when it does not fit
 * or holds a byte outside [A-Za-z0-9_]. */
static inline bool fuzz_word(char *dst, size_t cap, const char *s, size_t n) {
    if (n == 0 || n >= cap) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    memcpy(dst, s, n);
    dst[n] = 0;
    return true;
}

/* Parses a decimal in [1, 2^62-1] from [s, s+n); false otherwise. */
static inline bool fuzz_posint(const char *s, size_t n, int64_t *v) {
    int64_t x = 0;
    if (n == 0 || n > 19) return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        x = x * 10 + (s[i] - '0'); /* 19 digits cannot overflow int64 */
    }
    if (x < 1 || x >= IR_MAX_ELEMS) return false;
    *v = x;
    return true;
}

/* Applies one option token [t, t+n) (and `next`, the token after it, for
 * options taking a value); returns how many tokens it used (1 or 2). */
static inline int fuzz_opt_token(fuzz_opts *o, const char *t, size_t n, const char *next,
                                 size_t nn) {
    if (n == 2 && !memcmp(t, "-D", 2) && next) {
        const char *eq = memchr(next, '=', nn);
        if (!eq || o->ndefs == FUZZ_MAX_DEFS) return 2;
        int64_t v;
        char *name = o->def_names[o->ndefs];
        if (fuzz_word(name, sizeof o->def_names[0], next, (size_t)(eq - next)) &&
            fuzz_posint(eq + 1, nn - (size_t)(eq - next) - 1, &v)) {
            for (unsigned i = 0; i < o->ndefs; i++)
                if (!strcmp(o->defs[i].name, name))
                    return 2; /* txc refuses contradictions itself */
            o->defs[o->ndefs].name = name;
            o->defs[o->ndefs++].value = v;
        }
        return 2;
    }
    if (n == 9 && !memcmp(t, "--no-fuse", 9))
        o->no_fuse = true;
    else if (n == 7 && !memcmp(t, "--entry", 7) && next) {
        if (!fuzz_word(o->entry, sizeof o->entry, next, nn)) o->entry[0] = 0;
        return 2;
    } else if (n > 9 && !memcmp(t, "--target=", 9)) {
        if (!fuzz_word(o->target, sizeof o->target, t + 9, n - 9)) o->target[0] = 0;
    } else if (n > 6 && !memcmp(t, "--gpu=", 6)) {
        if (!fuzz_word(o->gpu, sizeof o->gpu, t + 6, n - 6)) o->gpu[0] = 0;
    } else if (n > 14 && !memcmp(t, "--sram-budget=", 14)) {
        int64_t v;
        if (fuzz_posint(t + 14, n - 14, &v) && v <= (int64_t)1 << 40) o->sram_budget = v;
    }
    return 1;
}

/* Reads options from the comment lines at the top of src (see above). */
static inline void fuzz_opts_parse(fuzz_opts *o, const char *src, size_t len) {
    memset(o, 0, sizeof *o);
    size_t i = 0;
    while (i < len && src[i] == '#') {
        size_t eol = i;
        while (eol < len && src[eol] != '\n') eol++;
        const char *tok[64];
        size_t tlen[64];
        unsigned nt = 0;
        for (size_t k = i + 1; k < eol && nt < 64;) {
            while (k < eol && (src[k] == ' ' || src[k] == '\t')) k++;
            size_t s = k;
            while (k < eol && src[k] != ' ' && src[k] != '\t') k++;
            if (k > s) tok[nt] = src + s, tlen[nt++] = k - s;
        }
        for (unsigned k = 0; k < nt;)
            k += (unsigned)fuzz_opt_token(o, tok[k], tlen[k], k + 1 < nt ? tok[k + 1] : NULL,
                                          k + 1 < nt ? tlen[k + 1] : 0);
        i = eol + 1;
    }
}

/* Checks the first diagnostic in `out` (olen bytes): "txc: error: MSG" or
 * "FILE:LINE:COL: error: MSG" with 1 <= LINE <= lines of src + 1 and
 * COL >= 1. Returns NULL when well-formed, else what is wrong. */
static inline const char *fuzz_check_diag(const char *out, size_t olen, const char *file,
                                          const char *src, size_t len) {
    if (olen == 0) return "an error was counted but nothing was printed";
    if (olen >= 12 && !memcmp(out, "txc: error: ", 12))
        return olen > 12 && out[12] != '\n' ? NULL : "empty message";
    size_t fl = strlen(file);
    if (olen <= fl || memcmp(out, file, fl) || out[fl] != ':')
        return "diagnostic starts with neither FILE: nor txc: error:";
    unsigned long line = 0, col = 0;
    size_t i = fl + 1;
    while (i < olen && out[i] >= '0' && out[i] <= '9' && line < 1000000000ul)
        line = line * 10 + (unsigned long)(out[i++] - '0');
    if (i >= olen || out[i++] != ':') return "diagnostic has no LINE:";
    while (i < olen && out[i] >= '0' && out[i] <= '9' && col < 1000000000ul)
        col = col * 10 + (unsigned long)(out[i++] - '0');
    if (olen - i < 10 || memcmp(out + i, ": error: ", 9)) return "diagnostic has no COL: error:";
    if (out[i + 9] == '\n') return "empty message";
    unsigned long lines = 1;
    for (size_t k = 0; k < len; k++) lines += src[k] == '\n';
    if (line < 1 || line > lines) return "diagnostic line outside the source";
    if (col < 1) return "diagnostic column 0";
    return NULL;
}

/* A memory stream for diagnostics: text lands in *buf (caller frees). */
typedef struct fuzz_sink {
    FILE *f;
    char *buf;
    size_t len;
} fuzz_sink;

static inline void fuzz_sink_open(fuzz_sink *s) {
    s->buf = NULL;
    s->len = 0;
    s->f = open_memstream(&s->buf, &s->len);
    if (!s->f) abort(); /* out of memory in the harness itself */
}

static inline void fuzz_sink_close(fuzz_sink *s) {
    fclose(s->f);
    free(s->buf);
}

/* Compiles an input through the frontend into *out (NULL on a reported
 * error), checking the frontend's contracts. Diagnostics go to `diag`. */
static inline const char *fuzz_frontend_stage(const char *src, size_t len, const fuzz_opts *o,
                                              tx_diag *d, ir_graph **out) {
    fe_options fo = {
        .entry = o->entry[0] ? o->entry : NULL, .defines = o->defs, .ndefines = o->ndefs};
    ir_graph *g = fe_compile(FUZZ_FILE, src, len, &fo, d);
    *out = g;
    if (!g && d->errors == 0) return "fe_compile failed without reporting an error";
    if (g && d->errors) return "fe_compile reported an error but returned a graph";
    if (g && !ir_verify(g, NULL)) return "fe_compile returned a graph the verifier rejects";
    return NULL;
}

/* Target 1: the frontend alone. */
static inline const char *fuzz_frontend_one(const uint8_t *data, size_t size) {
    const char *src = (const char *)data;
    fuzz_opts o;
    fuzz_opts_parse(&o, src, size);
    fuzz_sink s;
    fuzz_sink_open(&s);
    tx_diag d;
    tx_diag_init(&d, s.f, FUZZ_FILE, src, size);
    ir_graph *g;
    const char *bad = fuzz_frontend_stage(src, size, &o, &d, &g);
    if (!bad && g) {
        FILE *null = fopen("/dev/null", "w");
        if (null) ir_print(g, null), fclose(null);
    }
    fflush(s.f);
    if (!bad && !g) bad = fuzz_check_diag(s.buf, s.len, FUZZ_FILE, src, size);
    ir_graph_free(g);
    fuzz_sink_close(&s);
    return bad;
}

#if FUZZ_WITH_CODEGEN
/* True when text (len bytes) contains the NUL-free string `w`. */
static inline bool fuzz_contains(const char *text, size_t len, const char *w) {
    size_t n = strlen(w);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(text + i, w, n)) return true;
    return false;
}

/* Emits the planned graph g through codegen for target t, checking that a
 * failure is reported and that PTX looks like PTX. */
static inline const char *fuzz_codegen_stage(ir_graph *g, int t, tx_diag *d) {
    cg_program *p = cg_program_new(g, (cg_target)t, d);
    if (!p) return d->errors ? NULL : "cg_program_new failed without reporting an error";
    const char *bad = NULL;
    fuzz_sink out;
    fuzz_sink_open(&out);
    if (!cg_program_emit_llvm(p, out.f))
        bad = d->errors ? NULL : "cg_program_emit_llvm failed silently";
    if (!bad && t != CG_HOST) {
        fflush(out.f);
        size_t before = out.len;
        if (!cg_program_emit_ptx(p, out.f))
            bad = d->errors ? NULL : "cg_program_emit_ptx failed silently";
        else if (fflush(out.f), !fuzz_contains(out.buf + before, out.len - before, ".version") ||
                                    !fuzz_contains(out.buf + before, out.len - before, ".target"))
            bad = "emitted PTX has no .version or .target line";
        if (!bad && !d->errors && !cg_manifest_write(p, out.f)) bad = "cg_manifest_write failed";
    }
    fuzz_sink_close(&out);
    cg_program_free(p);
    return bad;
}

/* Target 2: frontend, the pass pipeline, the reports, and codegen to LLVM
 * IR and (for GPU targets) PTX. */
static inline const char *fuzz_compile_one(const uint8_t *data, size_t size) {
    const char *src = (const char *)data;
    fuzz_opts o;
    fuzz_opts_parse(&o, src, size);
    int target = o.target[0] ? cg_target_parse(o.target) : CG_SM90;
    if (target < 0) target = CG_SM90;
    const pass_gpu *gpu = pass_gpu_find(o.gpu[0] ? o.gpu : "h200");
    if (!gpu) gpu = pass_gpu_find("h200");
    fuzz_sink s;
    fuzz_sink_open(&s);
    tx_diag d;
    tx_diag_init(&d, s.f, FUZZ_FILE, src, size);
    ir_graph *g;
    const char *bad = fuzz_frontend_stage(src, size, &o, &d, &g);
    if (!bad && g) {
        pass_ctx pc = {.diag = &d, .gpu = gpu, .sram_budget = o.sram_budget, .no_fuse = o.no_fuse};
        bool ok = pass_run_pipeline(g, &pc);
        if (ok != (d.errors == 0))
            bad = ok ? "pass_run_pipeline reported an error but succeeded"
                     : "pass_run_pipeline failed without reporting an error";
        else if (ok && !ir_verify(g, NULL))
            bad = "the planned graph fails the verifier";
        if (!bad && ok) {
            FILE *null = fopen("/dev/null", "w");
            if (null) {
                ir_print(g, null);
                if (!pass_report_text(g, &pc, null) && !d.errors)
                    bad = "pass_report_text failed silently";
                if (!bad && !pass_report_json(g, &pc, null) && !d.errors)
                    bad = "pass_report_json failed silently";
                if (!bad && !pass_report_dot(g, &pc, null) && !d.errors)
                    bad = "pass_report_dot failed silently";
                fclose(null);
            }
        }
        if (!bad && ok && !d.errors) bad = fuzz_codegen_stage(g, target, &d);
    }
    fflush(s.f);
    if (!bad && d.errors) bad = fuzz_check_diag(s.buf, s.len, FUZZ_FILE, src, size);
    ir_graph_free(g);
    fuzz_sink_close(&s);
    return bad;
}
#endif

/* Same dtype, shape and bytes. */
static inline bool fuzz_tensor_same(const rt_tensor *a, const rt_tensor *b) {
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dim[i] != b->dim[i]) return false;
    size_t n;
    if (!rt_tensor_bytes(a, &n)) return false;
    return n == 0 || !memcmp(a->data, b->data, n);
}

/* Checks a reader error line: "NAME: MSG", one line, no newline. */
static inline const char *fuzz_check_npy_err(const char *err, const char *name) {
    size_t n = strlen(name);
    if (strncmp(err, name, n) || strncmp(err + n, ": ", 2) || !err[n + 2])
        return "npy error is not 'NAME: MSG'";
    if (strchr(err, '\n')) return "npy error spans several lines";
    return NULL;
}

/* Writes len bytes to path; false on failure. */
static inline bool fuzz_write_file(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = (len == 0 || fwrite(data, 1, len, f) == len);
    return (fclose(f) == 0) && ok;
}

/* True when directory `dir` holds no entries (or cannot be read). */
static inline bool fuzz_dir_empty(const char *dir) {
    DIR *dp = opendir(dir);
    if (!dp) return true;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = false;
    closedir(dp);
    return empty;
}

/* Target 3: the .npy reader. `dir` is a private scratch directory for the
 * on-disk checks (NULL: in-memory parse only). */
static inline const char *fuzz_npy_one(const uint8_t *data, size_t size, const char *dir) {
    rt_tensor t, u;
    memset(&t, 0, sizeof t);
    memset(&u, 0, sizeof u);
    char err[512] = "", err2[512] = "";
    bool ok = rt_npy_parse(FUZZ_NPY, data, size, &t, err, sizeof err);
    const char *bad = NULL;
    if (!ok)
        bad = fuzz_check_npy_err(err, FUZZ_NPY);
    else {
        size_t bytes;
        if (t.rank > IR_MAX_RANK || t.dtype >= IR_NDTYPES)
            bad = "parsed tensor has a bad rank or dtype";
        else if (!rt_tensor_bytes(&t, &bytes))
            bad = "parsed tensor's size overflows";
        else if (bytes > size)
            bad = "parsed tensor is larger than its file";
        else if (bytes && !t.data)
            bad = "parsed tensor has no data";
        for (int i = 0; !bad && i < t.rank; i++)
            if (t.dim[i] < 0) bad = "parsed tensor has a negative dim";
    }
    if (!bad && dir) {
        char in[4096], out[4096];
        bool fits = snprintf(in, sizeof in, "%s/in.npy", dir) < (int)sizeof in &&
                    snprintf(out, sizeof out, "%s/out.npy", dir) < (int)sizeof out;
        if (!fits || !fuzz_write_file(in, data, size))
            bad = NULL; /* no scratch space: skip the disk checks */
        else {
            bool ok2 = rt_npy_read(in, &u, err2, sizeof err2);
            if (ok2 != ok)
                bad = ok ? "rt_npy_read rejects what rt_npy_parse accepts"
                         : "rt_npy_read accepts what rt_npy_parse rejects";
            else if (!ok)
                bad = fuzz_check_npy_err(err2, in);
            else if (!fuzz_tensor_same(&t, &u))
                bad = "rt_npy_read and rt_npy_parse disagree";
            rt_tensor_free(&u);
            memset(&u, 0, sizeof u);
            if (!bad && ok) {
                if (!rt_npy_write(out, &t, err2, sizeof err2))
                    bad = "rt_npy_write fails on a tensor the reader accepted";
                else if (!rt_npy_read(out, &u, err2, sizeof err2))
                    bad = "the reader rejects what the writer wrote";
                else if (!fuzz_tensor_same(&t, &u))
                    bad = "write then read changes the tensor";
                rt_tensor_free(&u);
            }
            unlink(in);
            unlink(out);
            if (!bad && !fuzz_dir_empty(dir))
                bad = "a temporary file was left behind in the output directory";
        }
    }
    if (ok) rt_tensor_free(&t);
    return bad;
}

/* A one-line message: non-empty, no newline. */
static inline bool fuzz_one_line(const char *err) { return err[0] && !strchr(err, '\n'); }

/* The manifest reader of libtx_rt (rt_manifest_parse, what tx_kernels_load reads beside a .ptx)
 * on any bytes, then, for what it accepts, the launch plan at three bindings of its symbols
 * (1, 7 and 2^31 + 1: geometry must not overflow silently): each step either succeeds or fails
 * with one line. */
static inline const char *fuzz_manifest_one(const uint8_t *data, size_t size) {
    char err[1024] = "";
    rt_manifest *m = rt_manifest_parse((const char *)data, size, err, sizeof err);
    if (!m) return fuzz_one_line(err) ? NULL : "rt_manifest_parse fails without a one-line message";
    const char *bad = NULL;
    static const int64_t vals[3] = {1, 7, ((int64_t)1 << 31) + 1};
    int64_t *syms = calloc(m->nsyms + 1, sizeof *syms);
    for (int v = 0; v < 3 && !bad; v++) {
        for (uint32_t s = 0; s < m->nsyms; s++) syms[s] = vals[v];
        err[0] = 0;
        rt_gpu_plan *p =
            rt_manifest_plan(m, ".version 8.0\n.target sm_90\n", syms, err, sizeof err);
        if (!p && !fuzz_one_line(err)) bad = "rt_manifest_plan fails without a one-line message";
        if (p) {
            char e2[512];
            if (!rt_gpu_plan_check(p, e2, sizeof e2))
                bad = "rt_manifest_plan returns a plan that breaks rt_gpu_plan_check";
            rt_gpu_plan_free(p);
        }
    }
    free(syms);
    rt_manifest_free(m);
    return bad;
}

#endif
