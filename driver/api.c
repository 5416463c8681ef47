/* api.c - the public C API (include/tx.h) over the driver's compile and run
 * functions and the GPU runtime. Diagnostics that the stages print are
 * captured into the caller's error buffer. Contracts of the exported
 * functions are in include/tx.h. */
#include "tx.h"

#include "driver/driver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)TX_F32 == IR_F32 && (int)TX_F16 == IR_F16 && (int)TX_BF16 == IR_BF16 &&
                   (int)TX_I32 == IR_I32 && (int)TX_BOOL == IR_BOOL,
               "tx_dtype mirrors ir_dtype");
_Static_assert(TX_MAX_RANK == IR_MAX_RANK, "tx rank limit mirrors the IR's");

struct tx_program {
    ir_graph *raw; /* the frontend's graph: the reference interpreter runs it */
    ir_graph *g;   /* planned */
    cg_target target;
    cg_program *cp;      /* GPU code, made on first use */
    const pass_gpu *gpu; /* the cost model's hardware (tx_options.gpu) as the target uses it */
    pass_gpu narrowed;   /* its storage when the target narrows it (pass_target_gpu) */
    bool no_fuse;
    char *explain;   /* what the planner said (--explain), captured at compile */
    pass_tune *tune; /* the tuning cache the planner followed (NULL: none; TX_NO_TUNE_CACHE=1) */
    char *text[TX_TEXT_KINDS]; /* tx_program_text results, made on first use */
};

static void set_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes a formatted message into err (when err and cap allow). */
static void set_err(char *err, size_t cap, const char *fmt, ...) {
    va_list ap;
    if (!err || !cap) return;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* A diagnostics sink that collects messages in memory. */
typedef struct capture {
    char *buf;
    size_t len;
    FILE *f;
    tx_diag d;
} capture;

/* Opens a capture for diagnostics about `file` (src echoed in them). */
static bool capture_open(capture *cp, const char *file, const char *src, size_t len) {
    memset(cp, 0, sizeof *cp);
    cp->f = open_memstream(&cp->buf, &cp->len);
    if (!cp->f) return false;
    tx_diag_init(&cp->d, cp->f, file, src, len);
    return true;
}

/* Closes the capture, copying its text (without the final newline) to err. */
static void capture_close(capture *cp, char *err, size_t cap) {
    fclose(cp->f);
    if (cp->buf && cp->len) {
        while (cp->len && cp->buf[cp->len - 1] == '\n') cp->buf[--cp->len] = 0;
        set_err(err, cap, "%s", cp->buf);
    }
    free(cp->buf);
}

/* Parses "NAME=INT" (INT > 0) into def; false when malformed. */
static bool parse_define(const char *s, fe_define *def, char *name, size_t namecap) {
    const char *eq = s ? strchr(s, '=') : NULL;
    char *end;
    long long v;
    if (!eq || eq == s || (size_t)(eq - s) >= namecap) return false;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = 0;
    errno = 0;
    v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end || v <= 0) return false;
    def->name = name;
    def->value = v;
    return true;
}

/* Runs the frontend and the pipeline into p; false with diagnostics. */
static bool compile_into(tx_program *p, const char *file, const char *src, size_t len,
                         const tx_options *opt, tx_diag *d) {
    unsigned nd = opt ? opt->ndefines : 0;
    fe_define *defs = ir_xcalloc(nd + 1, sizeof *defs);
    char(*names)[64] = ir_xcalloc(nd + 1, sizeof *names);
    fe_options fo = {opt ? opt->entry : NULL, defs, nd};
    pass_ctx pc;
    bool ok = true;
    size_t elen = 0;
    FILE *ef = open_memstream(&p->explain, &elen);
    for (unsigned i = 0; ok && i < nd; i++)
        if (!parse_define(opt->defines[i], &defs[i], names[i], sizeof names[i])) {
            tx_error(d, "bad define '%s': expected NAME=INT with INT > 0",
                     opt->defines[i] ? opt->defines[i] : "(null)");
            ok = false;
        }
    memset(&pc, 0, sizeof pc);
    pc.diag = d;
    pc.target = drv_pass_target(p->target);
    pc.gpu = pass_target_gpu(pass_gpu_find(opt && opt->gpu ? opt->gpu : "h200"), pc.target,
                             &p->narrowed);
    pc.no_fuse = opt && opt->no_fuse;
    pc.explain = ef;
    const char *nt = getenv("TX_NO_TUNE_CACHE");
    if (!(nt && nt[0] && strcmp(nt, "0"))) p->tune = drv_tune_open(NULL, "tx", stderr);
    pc.tune = p->tune;
    p->gpu = pc.gpu;
    p->no_fuse = pc.no_fuse;
    if (!ef) {
        tx_error(d, "out of memory");
        ok = false;
    }
    if (ok && !pc.gpu) {
        tx_error(d, "unknown GPU '%s' (known: %s)", opt->gpu, pass_gpu_names());
        ok = false;
    }
    if (ok && (p->g = drv_compile(file, src, len, &fo, &pc, &p->raw, d)) == NULL) ok = false;
    if (ef) fclose(ef);
    free(defs);
    free(names);
    return ok;
}

int tx_api_version(void) { return TX_API_VERSION; }

tx_program *tx_compile(const char *file, const char *src, size_t len, const tx_options *opt,
                       char *err, size_t cap) {
    tx_program *p;
    capture cp;
    int t = cg_target_parse(opt && opt->target ? opt->target : "sm_90");
    if (!src) {
        set_err(err, cap, "tx_compile: no source text (src is NULL)");
        return NULL;
    }
    if (t < 0) {
        set_err(err, cap, "unknown target '%s' (known: %s)", opt->target, cg_target_names());
        return NULL;
    }
    if (!capture_open(&cp, file ? file : "<input>", src, len)) {
        set_err(err, cap, "out of memory");
        return NULL;
    }
    p = ir_xcalloc(1, sizeof *p);
    p->target = (cg_target)t;
    if (!compile_into(p, file ? file : "<input>", src, len, opt, &cp.d)) {
        capture_close(&cp, err, cap);
        tx_program_free(p);
        return NULL;
    }
    capture_close(&cp, err, cap);
    return p;
}

tx_program *tx_compile_file(const char *path, const tx_options *opt, char *err, size_t cap) {
    char *buf;
    size_t len = 0;
    char rerr[1024];
    tx_program *p;
    if (!path) {
        set_err(err, cap, "tx_compile_file: no path (path is NULL)");
        return NULL;
    }
    if (!(buf = rt_file_read_all(path, (size_t)64 << 20, &len, rerr, sizeof rerr))) {
        set_err(err, cap, "cannot read %s", rerr);
        return NULL;
    }
    p = tx_compile(path, buf, len, opt, err, cap);
    free(buf);
    return p;
}

void tx_program_free(tx_program *p) {
    if (!p) return;
    cg_program_free(p->cp);
    for (int k = 0; k < TX_TEXT_KINDS; k++) free(p->text[k]);
    free(p->explain);
    drv_tune_close(p->tune);
    ir_graph_free(p->g);
    ir_graph_free(p->raw);
    free(p);
}

/* Number of input nodes (they come first, in parameter order). */
static unsigned count_inputs(const ir_graph *g) {
    unsigned n = 0;
    while (n < g->n && g->nodes[n].op == IR_OP_INPUT) n++;
    return n;
}

unsigned tx_program_num_inputs(const tx_program *p) { return p ? count_inputs(p->raw) : 0; }
unsigned tx_program_num_outputs(const tx_program *p) {
    return p ? p->raw->nodes[ir_output(p->raw)].nin : 0;
}

/* The declared type of node id (symbolic dims as -1). */
static void node_type(const ir_graph *g, ir_id id, tx_tensor *t) {
    const ir_node *n = &g->nodes[id];
    memset(t, 0, sizeof *t);
    t->dtype = (tx_dtype)n->dtype;
    t->rank = n->shape.rank;
    for (unsigned d = 0; d < n->shape.rank; d++)
        t->dim[d] = IR_DIM_IS_SYM(n->shape.dim[d]) ? -1 : n->shape.dim[d];
}

int tx_program_input(const tx_program *p, unsigned i, tx_tensor *type, const char **name) {
    if (!p || !type || i >= count_inputs(p->raw)) return TX_ERR;
    node_type(p->raw, i, type);
    if (name) *name = ir_str(p->raw, p->raw->nodes[i].name);
    return TX_OK;
}

int tx_program_output(const tx_program *p, unsigned k, tx_tensor *type) {
    const ir_node *out;
    if (!p || !type) return TX_ERR;
    out = &p->raw->nodes[ir_output(p->raw)];
    if (k >= out->nin) return TX_ERR;
    node_type(p->raw, ir_in(p->raw, out, k), type);
    return TX_OK;
}

/* Makes p->cp for p's GPU target; false with err set. */
static bool ensure_gpu_code(tx_program *p, char *err, size_t cap) {
    capture cp;
    if (p->cp) return true;
    if (p->target == CG_HOST) {
        set_err(err, cap, "the program was compiled for the host target; it has no GPU code");
        return false;
    }
    if (!capture_open(&cp, p->raw->file, NULL, 0)) {
        set_err(err, cap, "out of memory");
        return false;
    }
    p->cp = cg_program_new(p->g, p->target, &cp.d);
    capture_close(&cp, err, cap);
    return p->cp != NULL;
}

const char *tx_program_ptx(tx_program *p, char *err, size_t cap) {
    if (!p) {
        set_err(err, cap, "tx_program_ptx: no program (p is NULL)");
        return NULL;
    }
    return ensure_gpu_code(p, err, cap) ? cg_program_ptx(p->cp, NULL) : NULL;
}

/* Writes text form `kind` of p to f; false with diagnostics in d. */
static bool write_text(tx_program *p, tx_text_kind kind, FILE *f, tx_diag *d) {
    pass_ctx pc;
    memset(&pc, 0, sizeof pc);
    pc.diag = d;
    pc.gpu = p->gpu;
    pc.target = drv_pass_target(p->target);
    pc.tune = p->tune;
    pc.no_fuse = p->no_fuse;
    switch (kind) {
        case TX_TEXT_IR: ir_print(p->g, f); return true;
        case TX_TEXT_REPORT: return pass_report_text(p->g, &pc, f);
        case TX_TEXT_JSON: return pass_report_json(p->g, &pc, f);
        case TX_TEXT_DOT: return pass_report_dot(p->g, &pc, f);
        case TX_TEXT_SVG: return pass_report_svg(p->g, &pc, NULL, f);
        case TX_TEXT_EXPLAIN: fputs(p->explain ? p->explain : "", f); return true;
        case TX_TEXT_KINDS: break;
    }
    return false;
}

const char *tx_program_text(tx_program *p, tx_text_kind kind, char *err, size_t cap) {
    capture cp;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    bool ok;
    if (!p || (unsigned)kind >= TX_TEXT_KINDS) {
        set_err(err, cap, "tx_program_text: %s", !p ? "no program (p is NULL)" : "unknown kind");
        return NULL;
    }
    if (p->text[kind]) return p->text[kind];
    if (!capture_open(&cp, p->raw->file, NULL, 0) || !(f = open_memstream(&buf, &len))) {
        set_err(err, cap, "out of memory");
        return NULL;
    }
    ok = write_text(p, kind, f, &cp.d);
    ok = fclose(f) == 0 && ok;
    capture_close(&cp, err, cap);
    if (!ok) {
        free(buf);
        return NULL;
    }
    p->text[kind] = buf;
    return buf;
}

/* Checks host tensors against the program's parameter count and fills
 * rt_tensor views of them (data borrowed); false with err set. */
static bool input_views(const tx_program *p, const tx_tensor *in, unsigned nin, bool need_data,
                        rt_tensor *v, char *err, size_t cap) {
    unsigned want = count_inputs(p->raw);
    if (nin != want || (nin && !in)) {
        set_err(err, cap, "the program takes %u inputs, %u were given", want, in ? nin : 0);
        return false;
    }
    for (unsigned i = 0; i < nin; i++) {
        if ((unsigned)in[i].dtype > TX_BOOL || in[i].rank < 0 || in[i].rank > TX_MAX_RANK) {
            set_err(err, cap, "input %u (%s): bad dtype or rank", i,
                    ir_str(p->raw, p->raw->nodes[i].name));
            return false;
        }
        if (need_data && !in[i].data) {
            set_err(err, cap, "input %u (%s) has no data", i,
                    ir_str(p->raw, p->raw->nodes[i].name));
            return false;
        }
        memset(&v[i], 0, sizeof v[i]);
        v[i].dtype = (ir_dtype)in[i].dtype;
        v[i].rank = (uint8_t)in[i].rank;
        memcpy(v[i].dim, in[i].dim, sizeof v[i].dim);
        v[i].data = in[i].data;
    }
    return true;
}

int tx_run(tx_program *p, tx_where where, const tx_tensor *inputs, unsigned nin, tx_tensor *outputs,
           unsigned nout, char *err, size_t cap) {
    rt_tensor *in, *out;
    capture cp;
    bool ok;
    if (!p || !outputs) {
        set_err(err, cap, "tx_run: %s is NULL", !p ? "the program" : "outputs");
        return TX_ERR;
    }
    if (nout != tx_program_num_outputs(p)) {
        set_err(err, cap, "the program returns %u values, room for %u was given",
                tx_program_num_outputs(p), nout);
        return TX_ERR;
    }
    if (where != TX_ON_REF && where != TX_ON_CPU && where != TX_ON_GPU) {
        set_err(err, cap, "tx_run: unknown place %d", (int)where);
        return TX_ERR;
    }
    in = ir_xcalloc(nin + 1, sizeof *in);
    out = ir_xcalloc(nout + 1, sizeof *out);
    ok = input_views(p, inputs, nin, true, in, err, cap);
    if (ok && !capture_open(&cp, p->raw->file, NULL, 0)) {
        set_err(err, cap, "out of memory");
        ok = false;
    } else if (ok) {
        drv_device dev = where == TX_ON_REF ? DRV_REF : where == TX_ON_CPU ? DRV_CPU : DRV_GPU;
        ok = drv_run(p->g, p->raw, dev, p->target == CG_HOST ? CG_SM90 : p->target, in, out, &cp.d);
        capture_close(&cp, err, cap);
    }
    for (unsigned k = 0; k < nout; k++) {
        memset(&outputs[k], 0, sizeof outputs[k]);
        if (!ok) {
            rt_tensor_free(&out[k]);
            continue;
        }
        outputs[k].dtype = (tx_dtype)out[k].dtype;
        outputs[k].rank = out[k].rank;
        memcpy(outputs[k].dim, out[k].dim, sizeof outputs[k].dim);
        outputs[k].data = out[k].data;
    }
    free(in);
    free(out);
    return ok ? TX_OK : TX_ERR;
}

void tx_tensor_release(tx_tensor *t) {
    if (!t) return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

/* ---- loading a compiled program on a device (the rest of the device API is runtime/tx_rt.c) */

tx_loaded *tx_load(tx_device *d, tx_program *p, const tx_tensor *input_types, unsigned nin,
                   char *err, size_t cap) {
    rt_tensor *in;
    int64_t *syms;
    capture cp;
    tx_loaded *l = NULL;
    rt_gpu_plan *plan = NULL;
    if (!d || !p) {
        set_err(err, cap, "tx_load: %s is NULL", !d ? "the device" : "the program");
        return NULL;
    }
    if (!ensure_gpu_code(p, err, cap)) return NULL;
    in = ir_xcalloc(nin + 1, sizeof *in);
    syms = ir_xcalloc(p->g->nsyms + 1, sizeof *syms);
    if (input_views(p, input_types, nin, false, in, err, cap)) {
        if (!capture_open(&cp, p->raw->file, NULL, 0)) {
            set_err(err, cap, "out of memory");
        } else {
            bool bound = rt_bind_shapes(p->g, in, syms, &cp.d);
            capture_close(&cp, err, cap);
            if (bound) plan = drv_gpu_plan_from_cg(p->g, p->cp, syms, err, cap);
        }
    }
    if (plan) l = rt_loaded_new(d, plan, err, cap);
    free(in);
    free(syms);
    return l;
}
