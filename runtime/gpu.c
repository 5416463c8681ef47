/* gpu.c - running a compiled program on the GPU: the runtime plan (buffers
 * and launches with concrete geometry; the driver builds it from codegen's
 * program, the loader from a manifest) and its execution (module, device
 * buffers, upload, poison, launches, download). Contracts of exported
 * functions are in runtime/runtime.h. */
#include "runtime/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- plans --------------------------------------------------------------- */

rt_gpu_plan *rt_gpu_plan_new(void) { return ir_xcalloc(1, sizeof(rt_gpu_plan)); }

void rt_gpu_plan_free(rt_gpu_plan *p) {
    if (!p) return;
    for (uint32_t k = 0; k < p->nkernels; k++) free(p->kernels[k].params);
    free(p->kernels);
    free(p->bufs);
    free(p->ptx);
    free(p);
}

uint32_t rt_gpu_plan_add_buf(rt_gpu_plan *p, const rt_buf_desc *b) {
    p->bufs = ir_xrealloc(p->bufs, (p->nbufs + 1) * sizeof *p->bufs);
    p->bufs[p->nbufs] = *b;
    if (b->role == RT_BUF_INPUT)
        p->ninputs++;
    else if (b->role == RT_BUF_OUTPUT)
        p->noutputs++;
    return p->nbufs++;
}

uint32_t rt_gpu_plan_add_kernel(rt_gpu_plan *p, const rt_kernel_desc *k) {
    rt_kernel_desc *d;
    p->kernels = ir_xrealloc(p->kernels, (p->nkernels + 1) * sizeof *p->kernels);
    d = &p->kernels[p->nkernels];
    *d = *k;
    d->params = ir_xcalloc(k->nparams ? k->nparams : 1, sizeof *d->params);
    if (k->nparams) memcpy(d->params, k->params, k->nparams * sizeof *d->params);
    return p->nkernels++;
}

int64_t rt_buf_bytes(const rt_buf_desc *b) {
    int64_t n = ir_dtype_size((ir_dtype)b->dtype);
    for (unsigned i = 0; i < b->rank; i++)
        if (b->dim[i] < 0 || !ir_mul_ok(n, b->dim[i], &n)) return -1;
    return n;
}

/* True when exactly one buffer of `role` has each index 0..n-1. */
static bool plan_roles_ok(const rt_gpu_plan *p, uint8_t role, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        unsigned seen = 0;
        for (uint32_t b = 0; b < p->nbufs; b++)
            seen += p->bufs[b].role == role && p->bufs[b].index == i;
        if (seen != 1) return false;
    }
    return true;
}

bool rt_gpu_plan_check(const rt_gpu_plan *p, char *err, size_t cap) {
    if (!p->ptx || !p->ptx[0]) {
        snprintf(err, cap, "GPU plan has no PTX");
        return false;
    }
    if (!plan_roles_ok(p, RT_BUF_INPUT, p->ninputs) ||
        !plan_roles_ok(p, RT_BUF_OUTPUT, p->noutputs)) {
        snprintf(err, cap, "GPU plan numbers its inputs or outputs inconsistently");
        return false;
    }
    for (uint32_t b = 0; b < p->nbufs; b++)
        if (p->bufs[b].rank > IR_MAX_RANK || p->bufs[b].dtype >= IR_NDTYPES ||
            rt_buf_bytes(&p->bufs[b]) < 0) {
            snprintf(err, cap, "GPU plan buffer %u (%s) has a bad dtype or shape", b,
                     p->bufs[b].name);
            return false;
        }
    for (uint32_t k = 0; k < p->nkernels; k++) {
        const rt_kernel_desc *kd = &p->kernels[k];
        for (uint32_t i = 0; i < kd->nparams; i++)
            if (kd->params[i].kind > RT_KP_TMAP ||
                ((kd->params[i].kind == RT_KP_BUF || kd->params[i].kind == RT_KP_TMAP) &&
                 kd->params[i].buf >= p->nbufs)) {
                snprintf(err, cap, "GPU plan kernel %s: parameter %u is invalid", kd->name, i);
                return false;
            }
        if (!kd->name[0] || !kd->block[0] || !kd->block[1] || !kd->block[2]) {
            snprintf(err, cap, "GPU plan kernel %u has no name or an empty block", k);
            return false;
        }
    }
    return true;
}

/* ---- execution ----------------------------------------------------------- */

struct rt_gpu_exec {
    rt_cuda *c;
    const rt_gpu_plan *p;
    rt_module *mod;
    rt_func *fn;    /* per kernel */
    rt_devptr *dev; /* per buffer; 0 while unbound */
    bool *owned;    /* per buffer: allocated here (released by _free) */
    void ***args;   /* per kernel: cuLaunchKernel parameter pointers */
    int64_t **vals; /* per kernel: storage the pointers point at */
    unsigned char *
        *tmaps;       /* per kernel: 128 bytes (64-byte aligned) per parameter, for tensor maps */
    char errbuf[256]; /* errors found here rather than by the driver */
};

void rt_gpu_exec_free(rt_gpu_exec *r) {
    if (!r) return;
    for (uint32_t b = 0; r->dev && b < r->p->nbufs; b++)
        if (r->owned[b]) rt_cuda_release(r->c, r->dev[b]);
    free(r->owned);
    for (uint32_t k = 0; r->args && k < r->p->nkernels; k++) {
        free(r->args[k]);
        free(r->vals[k]);
        free(r->tmaps[k]);
    }
    free(r->args);
    free(r->vals);
    free(r->tmaps);
    free(r->dev);
    free(r->fn);
    rt_module_free(r->mod);
    free(r);
}

/* Allocates the plan's intermediates, and its inputs and outputs too when
 * io is set; names the buffer on failure. */
static bool exec_alloc(rt_gpu_exec *r, bool io) {
    static const char *role[] = {"input", "output", "intermediate"};
    char what[128];
    for (uint32_t b = 0; b < r->p->nbufs; b++) {
        const rt_buf_desc *bd = &r->p->bufs[b];
        if (!io && bd->role != RT_BUF_TEMP) continue;
        r->owned[b] = true;
        snprintf(what, sizeof what, "%s %s", role[bd->role], bd->name[0] ? bd->name : "(unnamed)");
        /* round up to 16 bytes: kernels may use 128-bit accesses on the tail */
        if (!rt_cuda_alloc(r->c, (size_t)((rt_buf_bytes(bd) + 15) & ~(int64_t)15), what,
                           &r->dev[b]))
            return false;
        if (bd->zero && !rt_cuda_memset8(r->c, r->dev[b], 0, (size_t)rt_buf_bytes(bd), what))
            return false;
    }
    return true;
}

/* Encodes tensor-map parameter i of kernel k over its buffer's current
 * address (an unbound buffer leaves the map zero until rt_gpu_exec_bind);
 * false with the driver's or the check's line in the error buffer. */
static bool exec_tmap(rt_gpu_exec *r, uint32_t k, uint32_t i) {
    const rt_kernel_desc *kd = &r->p->kernels[k];
    const rt_kparam *kp = &kd->params[i];
    unsigned char *m = r->tmaps[k] + 128 * (size_t)i;
    memset(m, 0, 128);
    bool empty = false;
    for (unsigned j = 0; j < (kp->tmap.rank ? kp->tmap.rank : 2u) && j < RT_TMAP_MAXR; j++)
        empty |= kp->tmap.dim[j] < 1;
    if (!r->dev[kp->buf] || empty) return true; /* unbound, or empty (the kernel issues no copy) */
    char what[160];
    snprintf(what, sizeof what, "kernel %s: tensor map of %s", kd->name, r->p->bufs[kp->buf].name);
    if (rt_cuda_tmap_encode(r->c, m, &kp->tmap, r->dev[kp->buf], what)) return true;
    snprintf(r->errbuf, sizeof r->errbuf, "%s", rt_cuda_error(r->c));
    return false;
}

/* Builds kernel k's parameter array: buffer addresses, immediates and
 * tensor maps (encoded here). False when a map cannot be encoded. */
static bool exec_args(rt_gpu_exec *r, uint32_t k) {
    const rt_kernel_desc *kd = &r->p->kernels[k];
    uint32_t n = kd->nparams ? kd->nparams : 1;
    r->args[k] = ir_xcalloc(n, sizeof(void *));
    r->vals[k] = ir_xcalloc(n, sizeof(int64_t));
    bool ok = true;
    for (uint32_t i = 0; i < kd->nparams; i++) {
        const rt_kparam *kp = &kd->params[i];
        if (kp->kind == RT_KP_TMAP) {
            if (!r->tmaps[k]) {
                r->tmaps[k] = aligned_alloc(64, 128 * (size_t)n);
                if (!r->tmaps[k]) {
                    fprintf(stderr, "txc: error: out of memory\n");
                    abort();
                }
            }
            ok = ok && exec_tmap(r, k, i);
            r->args[k][i] = r->tmaps[k] + 128 * (size_t)i;
            continue;
        }
        if (kp->kind == RT_KP_BUF) {
            uint64_t a = r->dev[kp->buf];
            memcpy(&r->vals[k][i], &a, sizeof a);
        } else if (kp->kind == RT_KP_I32) {
            int32_t v = (int32_t)kp->value;
            memcpy(&r->vals[k][i], &v, sizeof v);
        } else {
            r->vals[k][i] = kp->value;
        }
        r->args[k][i] = &r->vals[k][i];
    }
    return ok;
}

rt_gpu_exec *rt_gpu_exec_new(rt_cuda *c, const rt_gpu_plan *p, bool alloc_io) {
    rt_gpu_exec *r = ir_xcalloc(1, sizeof *r);
    r->c = c;
    r->p = p;
    r->fn = ir_xcalloc(p->nkernels + 1, sizeof *r->fn);
    r->dev = ir_xcalloc(p->nbufs + 1, sizeof *r->dev);
    r->owned = ir_xcalloc(p->nbufs + 1, sizeof *r->owned);
    r->args = ir_xcalloc(p->nkernels + 1, sizeof *r->args);
    r->vals = ir_xcalloc(p->nkernels + 1, sizeof *r->vals);
    r->tmaps = ir_xcalloc(p->nkernels + 1, sizeof *r->tmaps);
    char err[512];
    if (!rt_gpu_plan_fits(c, p, alloc_io, 0, err, sizeof err)) {
        rt_cuda_set_error(c, err);
        rt_gpu_exec_free(r);
        return NULL;
    }
    r->mod = rt_module_load(c, p->ptx);
    if (!r->mod) {
        rt_gpu_exec_free(r);
        return NULL;
    }
    for (uint32_t k = 0; k < p->nkernels; k++)
        if (!rt_module_func(r->mod, p->kernels[k].name, &r->fn[k]) ||
            !rt_cuda_func_smem(c, r->fn[k], p->kernels[k].name, p->kernels[k].smem)) {
            rt_gpu_exec_free(r);
            return NULL;
        }
    if (!exec_alloc(r, alloc_io)) {
        rt_gpu_exec_free(r);
        return NULL;
    }
    for (uint32_t k = 0; k < p->nkernels; k++)
        if (!exec_args(r, k)) { /* the line is in rt_cuda_error(c) */
            rt_gpu_exec_free(r);
            return NULL;
        }
    return r;
}

rt_gpu_exec *rt_gpu_exec_new_sharing(rt_cuda *c, const rt_gpu_plan *p, const rt_gpu_exec *from,
                                     char *err, size_t cap) {
    double role[3], need = 0;
    size_t fr = 0, tot = 0;
    if (p->ninputs != from->p->ninputs) {
        snprintf(err, cap, "the plans take %u and %u inputs", p->ninputs, from->p->ninputs);
        return NULL;
    }
    for (uint32_t i = 0; i < p->ninputs; i++) {
        uint32_t a = rt_gpu_plan_find_buf(p, RT_BUF_INPUT, i),
                 b = rt_gpu_plan_find_buf(from->p, RT_BUF_INPUT, i);
        if (a == UINT32_MAX || b == UINT32_MAX || !from->dev[b] ||
            rt_buf_bytes(&p->bufs[a]) != rt_buf_bytes(&from->p->bufs[b]) ||
            p->bufs[a].dtype != from->p->bufs[b].dtype) {
            snprintf(err, cap, "input %u differs between the plans", i);
            return NULL;
        }
    }
    rt_gpu_plan_bytes(p, role);
    need = role[RT_BUF_OUTPUT] + role[RT_BUF_TEMP];
    if (!rt_cuda_mem_info(c, &fr, &tot)) {
        snprintf(err, cap, "%s", rt_cuda_error(c));
        return NULL;
    }
    if (need > (double)fr) {
        snprintf(err, cap, "its outputs and intermediates need %.0f bytes; %zu are free", need, fr);
        return NULL;
    }
    rt_gpu_exec *r = rt_gpu_exec_new(c, p, false);
    if (!r) {
        snprintf(err, cap, "%s", rt_cuda_error(c));
        return NULL;
    }
    for (uint32_t b = 0; b < p->nbufs; b++) {
        const rt_buf_desc *bd = &p->bufs[b];
        rt_devptr d = 0;
        bool ok;
        if (bd->role == RT_BUF_INPUT) {
            ok = rt_gpu_exec_bind(
                r, b, from->dev[rt_gpu_plan_find_buf(from->p, RT_BUF_INPUT, bd->index)]);
        } else if (bd->role == RT_BUF_OUTPUT) {
            char what[128];
            snprintf(what, sizeof what, "output %s", bd->name[0] ? bd->name : "(unnamed)");
            ok = rt_cuda_alloc(c, (size_t)((rt_buf_bytes(bd) + 15) & ~(int64_t)15), what, &d) &&
                 rt_gpu_exec_bind(r, b, d);
            if (ok) r->owned[b] = true; /* released by rt_gpu_exec_free */
        } else {
            continue;
        }
        if (!ok) {
            snprintf(err, cap, "%s", rt_gpu_exec_error(r));
            if (d && !r->owned[b]) rt_cuda_release(c, d);
            rt_gpu_exec_free(r);
            return NULL;
        }
    }
    return r;
}

rt_cuda *rt_gpu_exec_cuda(const rt_gpu_exec *r) { return r->c; }

double rt_gpu_plan_bytes(const rt_gpu_plan *p, double *by_role) {
    double total = 0;
    if (by_role) by_role[0] = by_role[1] = by_role[2] = 0;
    for (uint32_t b = 0; b < p->nbufs; b++) {
        double x = (double)rt_buf_bytes(&p->bufs[b]),
               gran = x < 1024.0 * 1024 ? 512 : 2.0 * 1024 * 1024;
        x = ceil(x / gran) * gran;
        total += x;
        if (by_role && p->bufs[b].role < 3) by_role[p->bufs[b].role] += x;
    }
    return total;
}

bool rt_gpu_plan_fits(rt_cuda *c, const rt_gpu_plan *p, bool io, double extra, char *err,
                      size_t cap) {
    double role[3], need = rt_gpu_plan_bytes(p, role) + extra;
    if (!io) need -= role[RT_BUF_INPUT] + role[RT_BUF_OUTPUT];
    size_t fr, tot;
    char a[64], b[64], d[64], e[64], f[64], t[64];
    if (!rt_cuda_mem_info(c, &fr, &tot)) {
        snprintf(err, cap, "%s", rt_cuda_error(c));
        return false;
    }
    if (need <= (double)fr) return true;
    snprintf(err, cap,
             "the plan needs %.0f bytes (%s) of GPU memory (inputs %s, outputs %s, intermediates "
             "%s); %zu bytes (%s) are free of %s on %s",
             need, ir_fmt_bytes(need, a, sizeof a), ir_fmt_bytes(role[RT_BUF_INPUT], b, sizeof b),
             ir_fmt_bytes(role[RT_BUF_OUTPUT], d, sizeof d),
             ir_fmt_bytes(role[RT_BUF_TEMP] + extra, e, sizeof e), fr,
             ir_fmt_bytes((double)fr, f, sizeof f), ir_fmt_bytes((double)tot, t, sizeof t),
             rt_cuda_get_info(c)->name);
    return false;
}

rt_devptr rt_gpu_exec_buf(const rt_gpu_exec *r, uint32_t buf) {
    return buf < r->p->nbufs ? r->dev[buf] : 0;
}

bool rt_gpu_exec_bind(rt_gpu_exec *r, uint32_t buf, rt_devptr p) {
    if (buf >= r->p->nbufs) return false;
    if (r->owned[buf]) rt_cuda_release(r->c, r->dev[buf]);
    r->owned[buf] = false;
    r->dev[buf] = p;
    for (uint32_t k = 0; k < r->p->nkernels; k++)
        for (uint32_t i = 0; i < r->p->kernels[k].nparams; i++)
            if (r->p->kernels[k].params[i].buf == buf) {
                if (r->p->kernels[k].params[i].kind == RT_KP_BUF)
                    memcpy(&r->vals[k][i], &p, sizeof p);
                else if (r->p->kernels[k].params[i].kind == RT_KP_TMAP && !exec_tmap(r, k, i))
                    return false;
            }
    return true;
}

/* Buffer index of the role/index pair, or UINT32_MAX. */
uint32_t rt_gpu_plan_find_buf(const rt_gpu_plan *p, uint8_t role, uint32_t index) {
    for (uint32_t b = 0; b < p->nbufs; b++)
        if (p->bufs[b].role == role && p->bufs[b].index == index) return b;
    return UINT32_MAX;
}

/* Formats a tensor type like "bf16[4, 8]" into buf. */
static const char *type_str(char *buf, size_t cap, ir_dtype t, unsigned rank, const int64_t *dim) {
    size_t n = (size_t)snprintf(buf, cap, "%s[", ir_dtype_name(t));
    for (unsigned i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)dim[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

bool rt_gpu_check_inputs(const rt_gpu_plan *p, const rt_tensor *inputs, uint32_t n, char *err,
                         size_t cap) {
    char want[160], got[160];
    if (n != p->ninputs) {
        snprintf(err, cap, "the program takes %u inputs, %u were given", p->ninputs, n);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const rt_buf_desc *bd = &p->bufs[rt_gpu_plan_find_buf(p, RT_BUF_INPUT, i)];
        bool same = inputs[i].dtype == bd->dtype && inputs[i].rank == bd->rank;
        for (unsigned d = 0; same && d < bd->rank; d++) same = inputs[i].dim[d] == bd->dim[d];
        if (!same) {
            snprintf(err, cap, "input %u (%s): expected %s, got %s", i, bd->name,
                     type_str(want, sizeof want, (ir_dtype)bd->dtype, bd->rank, bd->dim),
                     type_str(got, sizeof got, inputs[i].dtype, inputs[i].rank, inputs[i].dim));
            return false;
        }
    }
    return true;
}

bool rt_gpu_exec_upload(rt_gpu_exec *r, const rt_tensor *inputs, uint32_t n, char *err,
                        size_t cap) {
    char what[128];
    if (!rt_gpu_check_inputs(r->p, inputs, n, err, cap)) return false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = rt_gpu_plan_find_buf(r->p, RT_BUF_INPUT, i);
        snprintf(what, sizeof what, "input %s", r->p->bufs[b].name);
        if (!rt_cuda_upload(r->c, r->dev[b], inputs[i].data, (size_t)rt_buf_bytes(&r->p->bufs[b]),
                            what)) {
            snprintf(err, cap, "%s", rt_cuda_error(r->c));
            return false;
        }
    }
    return true;
}

bool rt_gpu_exec_poison(rt_gpu_exec *r) {
    for (uint32_t b = 0; b < r->p->nbufs; b++)
        if (r->p->bufs[b].role != RT_BUF_INPUT && !r->p->bufs[b].zero &&
            !rt_cuda_memset8(r->c, r->dev[b], 0xFF, (size_t)rt_buf_bytes(&r->p->bufs[b]),
                             r->p->bufs[b].name))
            return false;
    return true;
}

bool rt_gpu_exec_launch(rt_gpu_exec *r, uint32_t k) {
    const rt_kernel_desc *kd = &r->p->kernels[k];
    if (!kd->grid[0] || !kd->grid[1] || !kd->grid[2]) return true; /* empty work */
    for (uint32_t i = 0; i < kd->nparams; i++)
        if (kd->params[i].kind == RT_KP_BUF && !r->dev[kd->params[i].buf]) {
            snprintf(r->errbuf, sizeof r->errbuf,
                     "kernel %s: buffer %s is not bound to device memory", kd->name,
                     r->p->bufs[kd->params[i].buf].name);
            return false;
        }
    return rt_cuda_launch(r->c, r->fn[k], kd->name, kd->grid, kd->block, kd->smem, r->args[k]);
}

const char *rt_gpu_exec_error(const rt_gpu_exec *r) {
    return r->errbuf[0] ? r->errbuf : rt_cuda_error(r->c);
}

bool rt_gpu_exec_launch_all(rt_gpu_exec *r) {
    for (uint32_t k = 0; k < r->p->nkernels; k++)
        if (!rt_gpu_exec_launch(r, k)) return false;
    return true;
}

/* True when t is allocated with buffer bd's dtype and shape. */
static bool same_tensor(const rt_tensor *t, const rt_buf_desc *bd) {
    if (!t->data || t->dtype != bd->dtype || t->rank != bd->rank) return false;
    for (unsigned d = 0; d < bd->rank; d++)
        if (t->dim[d] != bd->dim[d]) return false;
    return true;
}

bool rt_gpu_exec_download_to(rt_gpu_exec *r, rt_tensor *outputs, uint32_t n) {
    char what[128];
    if (!rt_cuda_sync(r->c, "the kernels to finish")) return false;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t b = rt_gpu_plan_find_buf(r->p, RT_BUF_OUTPUT, k);
        const rt_buf_desc *bd;
        if (b == UINT32_MAX) return false;
        bd = &r->p->bufs[b];
        snprintf(what, sizeof what, "output %s", bd->name);
        if (!same_tensor(&outputs[k], bd)) {
            rt_tensor_free(&outputs[k]);
            outputs[k].dtype = (ir_dtype)bd->dtype;
            outputs[k].rank = bd->rank;
            memcpy(outputs[k].dim, bd->dim, sizeof bd->dim);
            if (!ir_host_mem_check((double)rt_buf_bytes(bd), what, r->errbuf, sizeof r->errbuf))
                return false;
            if (!rt_tensor_alloc(&outputs[k])) return false;
        }
        if (!rt_cuda_download(r->c, outputs[k].data, r->dev[b], (size_t)rt_buf_bytes(bd), what))
            return false;
    }
    return true;
}

bool rt_gpu_exec_download(rt_gpu_exec *r, rt_tensor *outputs, uint32_t n) {
    memset(outputs, 0, n * sizeof *outputs);
    if (rt_gpu_exec_download_to(r, outputs, n)) return true;
    for (uint32_t k = 0; k < n; k++) rt_tensor_free(&outputs[k]);
    return false;
}

bool rt_gpu_exec_download_all(rt_gpu_exec *r, rt_tensor *bufs) {
    memset(bufs, 0, r->p->nbufs * sizeof *bufs);
    if (!rt_cuda_sync(r->c, "the kernels to finish")) return false;
    for (uint32_t b = 0; b < r->p->nbufs; b++) {
        const rt_buf_desc *bd = &r->p->bufs[b];
        bufs[b].dtype = (ir_dtype)bd->dtype;
        bufs[b].rank = bd->rank;
        memcpy(bufs[b].dim, bd->dim, sizeof bd->dim);
        if (!rt_tensor_alloc(&bufs[b]) ||
            (rt_buf_bytes(bd) > 0 && !rt_cuda_download(r->c, bufs[b].data, r->dev[b],
                                                       (size_t)rt_buf_bytes(bd), bd->name))) {
            for (uint32_t j = 0; j <= b; j++) rt_tensor_free(&bufs[j]);
            return false;
        }
    }
    return true;
}

/* ---- entry points ------------------------------------------------------- */

bool rt_gpu_available(void) {
    char err[256];
    rt_cuda *c = rt_cuda_new(err, sizeof err);
    rt_cuda_free(c);
    return c != NULL;
}

/* Loads p on c, uploads inputs, poisons outputs, runs every kernel once and
 * downloads the outputs. False with an error reported. */
bool rt_gpu_exec_once(rt_cuda *c, const rt_gpu_plan *p, const rt_tensor *inputs, rt_tensor *outputs,
                      tx_diag *d) {
    char err[512];
    rt_gpu_exec *r = rt_gpu_exec_new(c, p, true);
    bool ok;
    if (!r) {
        tx_error(d, "%s", rt_cuda_error(c));
        return false;
    }
    if (!rt_gpu_exec_upload(r, inputs, p->ninputs, err, sizeof err)) {
        tx_error(d, "%s", err);
        rt_gpu_exec_free(r);
        return false;
    }
    ok = rt_gpu_exec_poison(r) && rt_gpu_exec_launch_all(r) &&
         rt_gpu_exec_download(r, outputs, p->noutputs);
    if (!ok) tx_error(d, "%s", rt_gpu_exec_error(r));
    rt_gpu_exec_free(r);
    return ok;
}
