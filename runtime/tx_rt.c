/* tx_rt.c - the public runtime API (include/tx_rt.h): devices and their
 * memory, kernels compiled earlier (PTX + manifest) loaded at concrete
 * sizes, binding, launching and timing. No compiler, no LLVM: this file and
 * the rest of runtime/ and ir/ make the tx_rt library. tx.h's tx_load
 * (driver/api.c) hands its plans to rt_loaded_new, so both paths share the
 * launch half. */
#include "tx_rt.h"

#include "runtime/runtime.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

_Static_assert((int)TX_F32 == IR_F32 && (int)TX_F16 == IR_F16 && (int)TX_BF16 == IR_BF16 &&
                   (int)TX_I32 == IR_I32 && (int)TX_BOOL == IR_BOOL,
               "tx_dtype mirrors ir_dtype");
_Static_assert(TX_MAX_RANK == IR_MAX_RANK, "tx rank limit mirrors the IR's");

struct tx_device {
    rt_cuda *c;
    char err[4096];
};

struct tx_loaded {
    tx_device *d;
    rt_gpu_plan *plan;
    rt_gpu_exec *x;
};

struct tx_kernels {
    char *ptx;
    rt_manifest *m;
};

/* Writes a message into err when err and cap allow. */
static void set_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...) {
    va_list ap;
    if (!err || !cap) return;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* ---- devices ----------------------------------------------------------- */

tx_device *tx_device_open(char *err, size_t cap) {
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

tx_device *tx_device_open_primary(int ordinal, char *err, size_t cap) {
    char why[512];
    rt_cuda *c = rt_cuda_new_primary(ordinal, why, sizeof why);
    tx_device *d;
    if (!c) {
        set_err(err, cap, "%s", why);
        return NULL;
    }
    d = ir_xcalloc(1, sizeof *d);
    d->c = c;
    return d;
}

void tx_device_close(tx_device *d) {
    if (!d) return;
    rt_cuda_free(d->c);
    free(d);
}

const char *tx_device_name(const tx_device *d) { return d ? rt_cuda_get_info(d->c)->name : ""; }
const char *tx_device_error(const tx_device *d) { return d ? d->err : "no device (NULL)"; }

/* Records the driver's last error on d; returns TX_ERR. */
static int dev_fail(tx_device *d, const char *msg) {
    snprintf(d->err, sizeof d->err, "%s", msg ? msg : rt_cuda_error(d->c));
    return TX_ERR;
}

int tx_device_alloc(tx_device *d, size_t bytes, uint64_t *ptr) {
    if (!d || !ptr) return TX_ERR;
    return rt_cuda_alloc(d->c, bytes, "a tx_device_alloc buffer", ptr) ? TX_OK : dev_fail(d, NULL);
}

void tx_device_free(tx_device *d, uint64_t ptr) {
    if (d) rt_cuda_release(d->c, ptr);
}

int tx_device_upload(tx_device *d, uint64_t dst, const void *src, size_t bytes) {
    if (!d) return TX_ERR;
    if (!src || !dst) return dev_fail(d, "tx_device_upload: NULL source or destination");
    return rt_cuda_upload(d->c, dst, src, bytes, "tx_device_upload") ? TX_OK : dev_fail(d, NULL);
}

int tx_device_download(tx_device *d, void *dst, uint64_t src, size_t bytes) {
    if (!d) return TX_ERR;
    if (!src || !dst) return dev_fail(d, "tx_device_download: NULL source or destination");
    return rt_cuda_download(d->c, dst, src, bytes, "tx_device_download") ? TX_OK
                                                                         : dev_fail(d, NULL);
}

int tx_device_sync(tx_device *d) {
    if (!d) return TX_ERR;
    return rt_cuda_sync(d->c, "the launched kernels") ? TX_OK : dev_fail(d, NULL);
}

/* ---- loaded kernels -------------------------------------------------------- */

tx_loaded *rt_loaded_new(tx_device *d, rt_gpu_plan *plan, char *err, size_t cap) {
    /* A primary context (tx_device_open_primary) must be current on this thread. */
    if (!rt_cuda_make_current(d->c)) {
        set_err(err, cap, "%s", rt_cuda_error(d->c));
        rt_gpu_plan_free(plan);
        return NULL;
    }
    tx_loaded *l = ir_xcalloc(1, sizeof *l);
    l->d = d;
    l->plan = plan;
    l->x = rt_gpu_exec_new(d->c, plan, false);
    if (!l->x) {
        snprintf(err, cap, "%s", rt_cuda_error(d->c));
        tx_unload(l);
        return NULL;
    }
    return l;
}

void tx_unload(tx_loaded *l) {
    if (!l) return;
    rt_gpu_exec_free(l->x);
    rt_gpu_plan_free(l->plan);
    free(l);
}

/* Plan buffer index of (role, index), or UINT32_MAX. */
static uint32_t loaded_buf(const tx_loaded *l, uint8_t role, unsigned index) {
    return rt_gpu_plan_find_buf(l->plan, role, index);
}

int tx_loaded_output(const tx_loaded *l, unsigned k, tx_tensor *type, size_t *bytes) {
    uint32_t b;
    const rt_buf_desc *bd;
    if (!l || !type || (b = loaded_buf(l, RT_BUF_OUTPUT, k)) == UINT32_MAX) return TX_ERR;
    bd = &l->plan->bufs[b];
    memset(type, 0, sizeof *type);
    type->dtype = (tx_dtype)bd->dtype;
    type->rank = bd->rank;
    memcpy(type->dim, bd->dim, sizeof type->dim);
    if (bytes) *bytes = (size_t)rt_buf_bytes(bd);
    return TX_OK;
}

/* Binds (role, index) of l to ptr; TX_ERR with the device error set. */
static int loaded_bind(tx_loaded *l, uint8_t role, unsigned index, uint64_t ptr) {
    uint32_t b;
    if (!l) return TX_ERR;
    b = loaded_buf(l, role, index);
    if (b == UINT32_MAX) {
        snprintf(l->d->err, sizeof l->d->err, "the program has no %s %u",
                 role == RT_BUF_INPUT ? "input" : "output", index);
        return TX_ERR;
    }
    if (!ptr) {
        snprintf(l->d->err, sizeof l->d->err, "binding %s %u to a NULL device address",
                 role == RT_BUF_INPUT ? "input" : "output", index);
        return TX_ERR;
    }
    if (!rt_gpu_exec_bind(l->x, b, ptr)) return dev_fail(l->d, rt_gpu_exec_error(l->x));
    return TX_OK;
}

int tx_bind_input(tx_loaded *l, unsigned i, uint64_t ptr) {
    return loaded_bind(l, RT_BUF_INPUT, i, ptr);
}
int tx_bind_output(tx_loaded *l, unsigned k, uint64_t ptr) {
    return loaded_bind(l, RT_BUF_OUTPUT, k, ptr);
}
unsigned tx_loaded_num_kernels(const tx_loaded *l) { return l ? l->plan->nkernels : 0; }

int tx_launch(tx_loaded *l) {
    if (!l) return TX_ERR;
    return rt_gpu_exec_launch_all(l->x) ? TX_OK : dev_fail(l->d, rt_gpu_exec_error(l->x));
}

int tx_launch_on(tx_loaded *l, uint64_t stream) {
    bool ok;
    if (!l) return TX_ERR;
    if (!rt_cuda_make_current(l->d->c)) return dev_fail(l->d, NULL);
    rt_cuda_set_stream(l->d->c, (void *)(uintptr_t)stream);
    ok = rt_gpu_exec_launch_all(l->x);
    rt_cuda_set_stream(l->d->c, NULL);
    return ok ? TX_OK : dev_fail(l->d, rt_gpu_exec_error(l->x));
}

int tx_time(tx_loaded *l, int iters, double *median_us) {
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
        if (ok && i >= 0) t[i] = us;
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

/* ---- kernels compiled earlier ---------------------------------------------- */

/* Reads a whole regular file of at most 256 MiB (NUL-terminated) without blocking (a FIFO, a
 * device or a file whose read would block, such as /proc/kmsg, is refused: rt_file_read_all);
 * NULL with err set. */
static char *read_file(const char *path, size_t *len, char *err, size_t cap) {
    char why[512];
    char *buf = rt_file_read_all(path, (size_t)256 << 20, len, why, sizeof why);
    if (!buf) set_err(err, cap, "cannot read %s", why);
    return buf;
}

tx_kernels *tx_kernels_new(const char *ptx, const char *manifest, size_t manifest_len, char *err,
                           size_t cap) {
    char why[512] = "";
    rt_manifest *m;
    tx_kernels *k;
    if (!ptx || !manifest) {
        set_err(err, cap, "tx_kernels_new: no %s (NULL)", !ptx ? "PTX" : "manifest");
        return NULL;
    }
    if (!(m = rt_manifest_parse(manifest, manifest_len, why, sizeof why))) {
        set_err(err, cap, "%s", why);
        return NULL;
    }
    k = ir_xcalloc(1, sizeof *k);
    k->ptx = ir_xstrdup(ptx);
    k->m = m;
    return k;
}

tx_kernels *tx_kernels_load(const char *ptx_path, char *err, size_t cap) {
    size_t plen = 0, mlen = 0;
    char *ptx, *man = NULL, *mpath, why[600];
    tx_kernels *k = NULL;
    if (!ptx_path) {
        set_err(err, cap, "tx_kernels_load: no path (NULL)");
        return NULL;
    }
    mpath = ir_xmalloc(strlen(ptx_path) + 6);
    sprintf(mpath, "%s.json", ptx_path);
    ptx = read_file(ptx_path, &plen, err, cap);
    if (ptx && (man = read_file(mpath, &mlen, err, cap)) != NULL) {
        if (strlen(ptx) != plen)
            set_err(err, cap, "'%s' is not PTX text (it holds a NUL byte)", ptx_path);
        else if (!(k = tx_kernels_new(ptx, man, mlen, why, sizeof why)))
            set_err(err, cap, "%s: %s", mpath, why);
    }
    free(ptx);
    free(man);
    free(mpath);
    return k;
}

void tx_kernels_free(tx_kernels *k) {
    if (!k) return;
    rt_manifest_free(k->m);
    free(k->ptx);
    free(k);
}

const char *tx_kernels_target(const tx_kernels *k) { return k ? k->m->target : ""; }
unsigned tx_kernels_num_inputs(const tx_kernels *k) { return k ? k->m->nin : 0; }
unsigned tx_kernels_num_outputs(const tx_kernels *k) { return k ? k->m->nout : 0; }
unsigned tx_kernels_num_kernels(const tx_kernels *k) { return k ? k->m->nkernels : 0; }

/* The declared type of a manifest value (symbolic dims as -1). */
static void mvalue_type(const rt_mvalue *v, tx_tensor *t) {
    memset(t, 0, sizeof *t);
    t->dtype = (tx_dtype)v->dtype;
    t->rank = v->shape.rank;
    for (unsigned d = 0; d < v->shape.rank; d++)
        t->dim[d] = IR_DIM_IS_SYM(v->shape.dim[d]) ? -1 : v->shape.dim[d];
}

int tx_kernels_input(const tx_kernels *k, unsigned i, tx_tensor *type, const char **name) {
    if (!k || !type || i >= k->m->nin) return TX_ERR;
    mvalue_type(&k->m->in[i], type);
    if (name) *name = k->m->in[i].name;
    return TX_OK;
}

int tx_kernels_output(const tx_kernels *k, unsigned o, tx_tensor *type, const char **name) {
    if (!k || !type || o >= k->m->nout) return TX_ERR;
    mvalue_type(&k->m->out[o], type);
    if (name) *name = k->m->out[o].name;
    return TX_OK;
}

const char *tx_kernels_input_symbol(const tx_kernels *k, unsigned i, unsigned d) {
    ir_dim v;
    if (!k || i >= k->m->nin || d >= k->m->in[i].shape.rank) return NULL;
    v = k->m->in[i].shape.dim[d];
    return IR_DIM_IS_SYM(v) ? k->m->syms[IR_DIM_SYMIDX(v)] : NULL;
}

tx_loaded *tx_load_kernels(tx_device *d, const tx_kernels *k, const tx_tensor *input_types,
                           unsigned nin, char *err, size_t cap) {
    rt_tensor *in;
    int64_t *syms;
    rt_gpu_plan *plan = NULL;
    char why[512] = "";
    bool ok = true;
    if (!d || !k) {
        set_err(err, cap, "tx_load_kernels: %s is NULL", !d ? "the device" : "the kernels");
        return NULL;
    }
    if (nin && !input_types) {
        set_err(err, cap, "tx_load_kernels: no input types (NULL)");
        return NULL;
    }
    in = ir_xcalloc(nin + 1, sizeof *in);
    syms = ir_xcalloc(k->m->nsyms + 1, sizeof *syms);
    for (unsigned i = 0; ok && i < nin; i++) {
        if ((unsigned)input_types[i].dtype > TX_BOOL || input_types[i].rank < 0 ||
            input_types[i].rank > TX_MAX_RANK) {
            snprintf(why, sizeof why, "input %u: bad dtype or rank", i);
            ok = false;
            break;
        }
        in[i].dtype = (ir_dtype)input_types[i].dtype;
        in[i].rank = (uint8_t)input_types[i].rank;
        memcpy(in[i].dim, input_types[i].dim, sizeof in[i].dim);
    }
    ok = ok && rt_manifest_bind(k->m, in, nin, syms, why, sizeof why) &&
         (plan = rt_manifest_plan(k->m, k->ptx, syms, why, sizeof why)) != NULL;
    free(in);
    free(syms);
    if (!ok) {
        set_err(err, cap, "%s", why);
        return NULL;
    }
    return rt_loaded_new(d, plan, err, cap);
}
