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
    ir_graph *raw;   /* the frontend's graph: the reference interpreter runs it */
    ir_graph *g;     /* planned */
    cg_target target;
    cg_program *cp;  /* GPU code, made on first use */
};

struct tx_device {
    rt_cuda *c;
    char err[4096];
};

struct tx_loaded {
    tx_device *d;
    rt_gpu_plan *plan;
    rt_gpu_exec *x;
};

static void set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes a formatted message into err (when err and cap allow). */
static void set_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    if (!err || !cap)
        return;
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
static bool capture_open(capture *cp, const char *file, const char *src, size_t len)
{
    memset(cp, 0, sizeof *cp);
    cp->f = open_memstream(&cp->buf, &cp->len);
    if (!cp->f)
        return false;
    tx_diag_init(&cp->d, cp->f, file, src, len);
    return true;
}

/* Closes the capture, copying its text (without the final newline) to err. */
static void capture_close(capture *cp, char *err, size_t cap)
{
    fclose(cp->f);
    if (cp->buf && cp->len) {
        while (cp->len && cp->buf[cp->len - 1] == '\n')
            cp->buf[--cp->len] = 0;
        set_err(err, cap, "%s", cp->buf);
    }
    free(cp->buf);
}

/* Parses "NAME=INT" (INT > 0) into def; false when malformed. */
static bool parse_define(const char *s, fe_define *def, char *name, size_t namecap)
{
    const char *eq = s ? strchr(s, '=') : NULL;
    char *end;
    long long v;
    if (!eq || eq == s || (size_t)(eq - s) >= namecap)
        return false;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = 0;
    errno = 0;
    v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end || v <= 0)
        return false;
    def->name = name;
    def->value = v;
    return true;
}

/* Runs the frontend and the pipeline into p; false with diagnostics. */
static bool compile_into(tx_program *p, const char *file, const char *src, size_t len, const tx_options *opt,
                         tx_diag *d)
{
    unsigned nd = opt ? opt->ndefines : 0;
    fe_define *defs = ir_xcalloc(nd + 1, sizeof *defs);
    char (*names)[64] = ir_xcalloc(nd + 1, sizeof *names);
    fe_options fo = {opt ? opt->entry : NULL, defs, nd};
    pass_ctx pc;
    bool ok = true;
    for (unsigned i = 0; ok && i < nd; i++)
        if (!parse_define(opt->defines[i], &defs[i], names[i], sizeof names[i])) {
            tx_error(d, "bad define '%s': expected NAME=INT with INT > 0", opt->defines[i] ? opt->defines[i] : "(null)");
            ok = false;
        }
    memset(&pc, 0, sizeof pc);
    pc.diag = d;
    pc.gpu = pass_gpu_find(opt && opt->gpu ? opt->gpu : "h200");
    pc.no_fuse = opt && opt->no_fuse;
    if (ok && !pc.gpu) {
        tx_error(d, "unknown GPU '%s' (known: %s)", opt->gpu, pass_gpu_names());
        ok = false;
    }
    if (ok && (p->g = drv_compile(file, src, len, &fo, &pc, &p->raw, d)) == NULL)
        ok = false;
    free(defs);
    free(names);
    return ok;
}

tx_program *tx_compile(const char *file, const char *src, size_t len, const tx_options *opt, char *err, size_t cap)
{
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

tx_program *tx_compile_file(const char *path, const tx_options *opt, char *err, size_t cap)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0, got;
    char chunk[65536];
    tx_program *p;
    if (!path) {
        set_err(err, cap, "tx_compile_file: no path (path is NULL)");
        return NULL;
    }
    if (!(f = fopen(path, "rb"))) {
        set_err(err, cap, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf = ir_xrealloc(buf, len + got + 1);
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    if (!buf)
        buf = ir_xcalloc(1, 1);
    buf[len] = 0;
    p = tx_compile(path, buf, len, opt, err, cap);
    free(buf);
    return p;
}

void tx_program_free(tx_program *p)
{
    if (!p)
        return;
    cg_program_free(p->cp);
    ir_graph_free(p->g);
    ir_graph_free(p->raw);
    free(p);
}

/* Number of input nodes (they come first, in parameter order). */
static unsigned count_inputs(const ir_graph *g)
{
    unsigned n = 0;
    while (n < g->n && g->nodes[n].op == IR_OP_INPUT)
        n++;
    return n;
}

unsigned tx_program_num_inputs(const tx_program *p) { return p ? count_inputs(p->raw) : 0; }
unsigned tx_program_num_outputs(const tx_program *p) { return p ? p->raw->nodes[ir_output(p->raw)].nin : 0; }

/* The declared type of node id (symbolic dims as -1). */
static void node_type(const ir_graph *g, ir_id id, tx_tensor *t)
{
    const ir_node *n = &g->nodes[id];
    memset(t, 0, sizeof *t);
    t->dtype = (tx_dtype)n->dtype;
    t->rank = n->shape.rank;
    for (unsigned d = 0; d < n->shape.rank; d++)
        t->dim[d] = IR_DIM_IS_SYM(n->shape.dim[d]) ? -1 : n->shape.dim[d];
}

int tx_program_input(const tx_program *p, unsigned i, tx_tensor *type, const char **name)
{
    if (!p || !type || i >= count_inputs(p->raw))
        return TX_ERR;
    node_type(p->raw, i, type);
    if (name)
        *name = ir_str(p->raw, p->raw->nodes[i].name);
    return TX_OK;
}

int tx_program_output(const tx_program *p, unsigned k, tx_tensor *type)
{
    const ir_node *out;
    if (!p || !type)
        return TX_ERR;
    out = &p->raw->nodes[ir_output(p->raw)];
    if (k >= out->nin)
        return TX_ERR;
    node_type(p->raw, ir_in(p->raw, out, k), type);
    return TX_OK;
}

/* Makes p->cp for p's GPU target; false with err set. */
static bool ensure_gpu_code(tx_program *p, char *err, size_t cap)
{
    capture cp;
    if (p->cp)
        return true;
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

const char *tx_program_ptx(tx_program *p, char *err, size_t cap)
{
    if (!p) {
        set_err(err, cap, "tx_program_ptx: no program (p is NULL)");
        return NULL;
    }
    return ensure_gpu_code(p, err, cap) ? cg_program_ptx(p->cp, NULL) : NULL;
}

/* Checks host tensors against the program's parameter count and fills
 * rt_tensor views of them (data borrowed); false with err set. */
static bool input_views(const tx_program *p, const tx_tensor *in, unsigned nin, bool need_data, rt_tensor *v,
                        char *err, size_t cap)
{
    unsigned want = count_inputs(p->raw);
    if (nin != want || (nin && !in)) {
        set_err(err, cap, "the program takes %u inputs, %u were given", want, in ? nin : 0);
        return false;
    }
    for (unsigned i = 0; i < nin; i++) {
        if ((unsigned)in[i].dtype > TX_BOOL || in[i].rank < 0 || in[i].rank > TX_MAX_RANK) {
            set_err(err, cap, "input %u (%s): bad dtype or rank", i, ir_str(p->raw, p->raw->nodes[i].name));
            return false;
        }
        if (need_data && !in[i].data) {
            set_err(err, cap, "input %u (%s) has no data", i, ir_str(p->raw, p->raw->nodes[i].name));
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
           unsigned nout, char *err, size_t cap)
{
    rt_tensor *in, *out;
    capture cp;
    bool ok;
    if (!p || !outputs) {
        set_err(err, cap, "tx_run: %s is NULL", !p ? "the program" : "outputs");
        return TX_ERR;
    }
    if (nout != tx_program_num_outputs(p)) {
        set_err(err, cap, "the program returns %u values, room for %u was given", tx_program_num_outputs(p), nout);
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

void tx_tensor_release(tx_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

/* ---- devices ----------------------------------------------------------- */

tx_device *tx_device_open(char *err, size_t cap)
{
    char why[512];
    rt_cuda *c = rt_cuda_new(why, sizeof why);
    tx_device *d;
    if (!c) {
        set_err(err, cap, "%s", why);
        return NULL;
    }
    d = ir_xcalloc(1, sizeof *d);
    d->c = c;
    return d;
}

void tx_device_close(tx_device *d)
{
    if (!d)
        return;
    rt_cuda_free(d->c);
    free(d);
}

const char *tx_device_name(const tx_device *d) { return d ? rt_cuda_get_info(d->c)->name : ""; }
const char *tx_device_error(const tx_device *d) { return d ? d->err : "no device (NULL)"; }

/* Records the driver's last error on d; returns TX_ERR. */
static int dev_fail(tx_device *d, const char *msg)
{
    snprintf(d->err, sizeof d->err, "%s", msg ? msg : rt_cuda_error(d->c));
    return TX_ERR;
}

int tx_device_alloc(tx_device *d, size_t bytes, uint64_t *ptr)
{
    if (!d || !ptr)
        return TX_ERR;
    return rt_cuda_alloc(d->c, bytes, "a tx_device_alloc buffer", ptr) ? TX_OK : dev_fail(d, NULL);
}

void tx_device_free(tx_device *d, uint64_t ptr)
{
    if (d)
        rt_cuda_release(d->c, ptr);
}

int tx_device_upload(tx_device *d, uint64_t dst, const void *src, size_t bytes)
{
    if (!d)
        return TX_ERR;
    if (!src || !dst)
        return dev_fail(d, "tx_device_upload: NULL source or destination");
    return rt_cuda_upload(d->c, dst, src, bytes, "tx_device_upload") ? TX_OK : dev_fail(d, NULL);
}

int tx_device_download(tx_device *d, void *dst, uint64_t src, size_t bytes)
{
    if (!d)
        return TX_ERR;
    if (!src || !dst)
        return dev_fail(d, "tx_device_download: NULL source or destination");
    return rt_cuda_download(d->c, dst, src, bytes, "tx_device_download") ? TX_OK : dev_fail(d, NULL);
}

int tx_device_sync(tx_device *d)
{
    if (!d)
        return TX_ERR;
    return rt_cuda_sync(d->c, "the launched kernels") ? TX_OK : dev_fail(d, NULL);
}

/* ---- loading and launching -------------------------------------------- */

tx_loaded *tx_load(tx_device *d, tx_program *p, const tx_tensor *input_types, unsigned nin, char *err, size_t cap)
{
    rt_tensor *in;
    int64_t *syms;
    capture cp;
    tx_loaded *l = NULL;
    rt_gpu_plan *plan = NULL;
    if (!d || !p) {
        set_err(err, cap, "tx_load: %s is NULL", !d ? "the device" : "the program");
        return NULL;
    }
    if (!ensure_gpu_code(p, err, cap))
        return NULL;
    in = ir_xcalloc(nin + 1, sizeof *in);
    syms = ir_xcalloc(p->g->nsyms + 1, sizeof *syms);
    if (input_views(p, input_types, nin, false, in, err, cap)) {
        if (!capture_open(&cp, p->raw->file, NULL, 0)) {
            set_err(err, cap, "out of memory");
        } else {
            bool bound = rt_bind_shapes(p->g, in, syms, &cp.d);
            capture_close(&cp, err, cap);
            if (bound)
                plan = drv_gpu_plan_from_cg(p->g, p->cp, syms, err, cap);
        }
    }
    if (plan) {
        l = ir_xcalloc(1, sizeof *l);
        l->d = d;
        l->plan = plan;
        l->x = rt_gpu_exec_new(d->c, plan, false);
        if (!l->x) {
            set_err(err, cap, "%s", rt_cuda_error(d->c));
            tx_unload(l);
            l = NULL;
        }
    }
    free(in);
    free(syms);
    return l;
}

void tx_unload(tx_loaded *l)
{
    if (!l)
        return;
    rt_gpu_exec_free(l->x);
    rt_gpu_plan_free(l->plan);
    free(l);
}

/* Plan buffer index of (role, index), or UINT32_MAX. */
static uint32_t loaded_buf(const tx_loaded *l, uint8_t role, unsigned index)
{
    for (uint32_t b = 0; b < l->plan->nbufs; b++)
        if (l->plan->bufs[b].role == role && l->plan->bufs[b].index == index)
            return b;
    return UINT32_MAX;
}

int tx_loaded_output(const tx_loaded *l, unsigned k, tx_tensor *type, size_t *bytes)
{
    uint32_t b;
    const rt_buf_desc *bd;
    if (!l || !type || (b = loaded_buf(l, RT_BUF_OUTPUT, k)) == UINT32_MAX)
        return TX_ERR;
    bd = &l->plan->bufs[b];
    memset(type, 0, sizeof *type);
    type->dtype = (tx_dtype)bd->dtype;
    type->rank = bd->rank;
    memcpy(type->dim, bd->dim, sizeof type->dim);
    if (bytes)
        *bytes = (size_t)rt_buf_bytes(bd);
    return TX_OK;
}

/* Binds (role, index) of l to ptr; TX_ERR with the device error set. */
static int loaded_bind(tx_loaded *l, uint8_t role, unsigned index, uint64_t ptr)
{
    uint32_t b;
    if (!l)
        return TX_ERR;
    b = loaded_buf(l, role, index);
    if (b == UINT32_MAX) {
        snprintf(l->d->err, sizeof l->d->err, "the program has no %s %u", role == RT_BUF_INPUT ? "input" : "output",
                 index);
        return TX_ERR;
    }
    if (!ptr) {
        snprintf(l->d->err, sizeof l->d->err, "binding %s %u to a NULL device address",
                 role == RT_BUF_INPUT ? "input" : "output", index);
        return TX_ERR;
    }
    rt_gpu_exec_bind(l->x, b, ptr);
    return TX_OK;
}

int tx_bind_input(tx_loaded *l, unsigned i, uint64_t ptr) { return loaded_bind(l, RT_BUF_INPUT, i, ptr); }
int tx_bind_output(tx_loaded *l, unsigned k, uint64_t ptr) { return loaded_bind(l, RT_BUF_OUTPUT, k, ptr); }
unsigned tx_loaded_num_kernels(const tx_loaded *l) { return l ? l->plan->nkernels : 0; }

int tx_launch(tx_loaded *l)
{
    if (!l)
        return TX_ERR;
    return rt_gpu_exec_launch_all(l->x) ? TX_OK : dev_fail(l->d, rt_gpu_exec_error(l->x));
}

int tx_time(tx_loaded *l, int iters, double *median_us)
{
    rt_event e0 = NULL, e1 = NULL;
    rt_cuda *c;
    double *t, us = 0;
    bool ok;
    if (!l || !median_us || iters <= 0) {
        if (l)
            snprintf(l->d->err, sizeof l->d->err, "tx_time: needs iters > 0 and a result pointer");
        return TX_ERR;
    }
    c = l->d->c;
    t = ir_xcalloc((size_t)iters, sizeof *t);
    ok = rt_event_new(c, &e0) && rt_event_new(c, &e1);
    for (int i = -3; ok && i < iters; i++) {
        ok = rt_event_record(c, e0) && rt_gpu_exec_launch_all(l->x) && rt_event_record(c, e1) &&
             rt_event_elapsed_us(c, e0, e1, &us);
        if (ok && i >= 0)
            t[i] = us;
    }
    if (ok)
        *median_us = rt_median(t, (size_t)iters);
    else
        dev_fail(l->d, rt_gpu_exec_error(l->x));
    rt_event_free(c, e0);
    rt_event_free(c, e1);
    free(t);
    return ok ? TX_OK : TX_ERR;
}
