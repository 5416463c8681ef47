/* interp.c - the reference interpreter: evaluates every IR op on the CPU in
 * double precision and stores each value at its dtype (docs/interpreter.md
 * gives each op's exact definition). Obviously correct before fast: one
 * generic strided iterator drives elementwise ops, reductions and views. */
#include "runtime/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- strided iteration ------------------------------------------------------ */
#define MAX_OPS 4
/* Walks a shape in C order keeping one linear offset per operand; operand k
 * advances by stride[k][d] along dim d (0 for broadcast dims). */
typedef struct iter {
    int rank, nops;
    int64_t shape[IR_MAX_RANK], idx[IR_MAX_RANK];
    int64_t stride[MAX_OPS][IR_MAX_RANK];
    int64_t off[MAX_OPS];
} iter;

/* Starts at index 0 of `shape` with all offsets and strides zero. */
static void iter_init(iter *it, int rank, const int64_t *shape, int nops) {
    memset(it, 0, sizeof *it);
    it->rank = rank;
    it->nops = nops;
    memcpy(it->shape, shape, (size_t)rank * sizeof *shape);
}

/* Advances to the next index in C order (wrapping to 0 after the last). */
static void iter_next(iter *it) {
    for (int d = it->rank - 1; d >= 0; d--) {
        it->idx[d]++;
        for (int k = 0; k < it->nops; k++) it->off[k] += it->stride[k][d];
        if (it->idx[d] < it->shape[d]) return;
        for (int k = 0; k < it->nops; k++) it->off[k] -= it->stride[k][d] * it->shape[d];
        it->idx[d] = 0;
    }
}

/* C-order strides (in elements) of a tensor. */
static void c_strides(const rt_tensor *t, int64_t *s) {
    int64_t acc = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        s[d] = acc;
        acc *= t->dim[d];
    }
}

/* Strides that read t broadcast to a shape of rank `rank` (t right-aligned;
 * dims of extent 1 and missing leading dims get stride 0). */
static void bcast_strides(const rt_tensor *t, int rank, int64_t *s) {
    int64_t cs[IR_MAX_RANK];
    c_strides(t, cs);
    for (int d = 0; d < rank; d++) {
        int td = d - (rank - t->rank);
        s[d] = (td < 0 || t->dim[td] == 1) ? 0 : cs[td];
    }
}

/* True when t broadcasts to the shape (rank, dim) under NumPy rules. */
static bool broadcasts_to(const rt_tensor *t, int rank, const int64_t *dim) {
    if (t->rank > rank) return false;
    for (int d = 0; d < t->rank; d++) {
        int64_t td = t->dim[d], od = dim[d + rank - t->rank];
        if (td != od && td != 1) return false;
    }
    return true;
}

/* Copies element i of src into element j of dst (same dtype: bitwise;
 * otherwise by value with dst's store rule). */
static void copy_elem(rt_tensor *dst, int64_t j, const rt_tensor *src, int64_t i) {
    if (dst->dtype == src->dtype) {
        size_t sz = (size_t)ir_dtype_size(src->dtype);
        memcpy((char *)dst->data + (size_t)j * sz, (const char *)src->data + (size_t)i * sz, sz);
    } else {
        rt_set(dst, j, rt_get(src, i));
    }
}

/* ---- scalar semantics ---------------------------------------------------- */
/* Every element is computed by the shared scalar rules (ir/scalar.c, the ones
 * constant folding calls) and stored by rt_set, whose rounding is
 * ir_scalar_round's (tests/unit/test_scalar.c checks the two agree);
 * reductions accumulate by ir_scalar_reduce_init/step/finish. */

/* ---- interpreter state --------------------------------------------------- */
typedef struct interp {
    const ir_graph *g;
    const rt_tensor *inputs;
    tx_diag *d;
    int64_t *syms;
    rt_tensor *vals; /* value of each node (data NULL: not computed or freed) */
    bool *borrowed;  /* vals[i].data belongs to the caller's inputs */
    bool *have;      /* vals[i] is computed and not yet freed */
    uint32_t *left;  /* remaining live users of each node */
    bool *live;      /* node contributes to the outputs */
    bool *wide;      /* plan precision: this f16/bf16 value stays on chip, held in f32 */
} interp;

/* A value's name for messages: its source name or "%ID". */
static const char *vname(const interp *ip, ir_id id, char *buf, size_t cap) {
    const ir_node *n = &ip->g->nodes[id];
    if (n->name) return ir_str(ip->g, n->name);
    snprintf(buf, cap, "%%%u", id);
    return buf;
}

/* Formats a concrete shape "[3, 4]" into buf. */
static const char *dims_str(int rank, const int64_t *dim, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)dim[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

/* Reports an inconsistency between the IR and the values it describes. */
static bool bad_node(interp *ip, ir_id id, const char *what) {
    char nb[32];
    tx_error(ip->d, "interpreter: value '%s' (%s, node %u): %s", vname(ip, id, nb, sizeof nb),
             ir_op_name((ir_op)ip->g->nodes[id].op), id, what);
    return false;
}

/* Sets t's rank and dims to node id's shape with symbols substituted. A
 * reshape may leave one symbol undetermined by the inputs: it is inferred
 * from the element count of its operand (then recorded in syms). */
static bool resolve_shape(interp *ip, ir_id id, rt_tensor *t) {
    const ir_node *n = &ip->g->nodes[id];
    int unknown = -1;
    if (n->shape.rank > IR_MAX_RANK) return bad_node(ip, id, "rank above the limit");
    t->rank = n->shape.rank;
    for (int i = 0; i < n->shape.rank; i++) {
        ir_dim dd = n->shape.dim[i];
        if (!IR_DIM_IS_SYM(dd)) {
            t->dim[i] = dd;
            continue;
        }
        uint32_t s = IR_DIM_SYMIDX(dd);
        if (s >= ip->g->nsyms) return bad_node(ip, id, "shape names an unknown symbol");
        t->dim[i] = ip->syms[s];
        if (t->dim[i] < 0) {
            if (unknown >= 0 || n->op != IR_OP_RESHAPE) {
                char msg[160];
                snprintf(msg, sizeof msg, "symbolic dim %s is not determined by the inputs",
                         ip->g->syms[s].name);
                return bad_node(ip, id, msg);
            }
            unknown = i;
        }
    }
    if (unknown < 0) return true;
    const rt_tensor *x = &ip->vals[ir_in(ip->g, n, 0)];
    int64_t rest = 1, total = rt_numel(x);
    for (int i = 0; i < t->rank; i++)
        if (i != unknown && !ir_mul_ok(rest, t->dim[i], &rest))
            return bad_node(ip, id, "shape overflows");
    if (rest == 0 || total % rest != 0)
        return bad_node(ip, id, "cannot infer a symbolic dim of the reshape");
    t->dim[unknown] = total / rest;
    ip->syms[IR_DIM_SYMIDX(n->shape.dim[unknown])] = total / rest;
    return true;
}

/* Allocates node id's value with dtype and the given shape (already in
 * *t); reports overflow or allocation failure. */
static bool alloc_value(interp *ip, ir_id id, rt_tensor *t) {
    t->dtype = ip->wide && ip->wide[id] ? IR_F32 : (ir_dtype)ip->g->nodes[id].dtype;
    size_t bytes;
    char sb[300];
    if (!rt_tensor_bytes(t, &bytes)) {
        char msg[400];
        snprintf(msg, sizeof msg, "shape %s has too many elements",
                 dims_str(t->rank, t->dim, sb, sizeof sb));
        return bad_node(ip, id, msg);
    }
    char what[400], msg[600];
    snprintf(what, sizeof what, "the reference interpreter's value of shape %s",
             dims_str(t->rank, t->dim, sb, sizeof sb));
    if (!ir_host_mem_check((double)bytes, what, msg, sizeof msg)) return bad_node(ip, id, msg);
    if (!rt_tensor_alloc(t)) {
        snprintf(msg, sizeof msg, "cannot allocate %zu bytes for shape %s", bytes,
                 dims_str(t->rank, t->dim, sb, sizeof sb));
        return bad_node(ip, id, msg);
    }
    return true;
}

/* Checks that `elems` doubles of scratch for node id fit in host memory. */
static bool scratch_ok(interp *ip, ir_id id, double elems) {
    char msg[300];
    if (ir_host_mem_check(elems * sizeof(double), "the reference interpreter's scratch", msg,
                          sizeof msg))
        return true;
    return bad_node(ip, id, msg);
}

/* Checks that a shape computed from the operands equals the IR's (resolved)
 * shape for the node. */
static bool check_shape(interp *ip, ir_id id, int rank, const int64_t *dim) {
    rt_tensor want = {0};
    if (!resolve_shape(ip, id, &want)) return false;
    bool same = want.rank == rank;
    for (int i = 0; same && i < rank; i++) same = want.dim[i] == dim[i];
    if (same) return true;
    char a[300], b[300], msg[700];
    snprintf(msg, sizeof msg, "operands give shape %s but the IR says %s",
             dims_str(rank, dim, a, sizeof a), dims_str(want.rank, want.dim, b, sizeof b));
    return bad_node(ip, id, msg);
}

/* ---- op families ------------------------------------------------------------ */
/* Elementwise unary/binary/compare/where/cast with NumPy broadcasting to the
 * node's shape; every element computed in double, stored at the dtype. */
static bool eval_elem(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    const rt_tensor *in[3];
    if (n->nin < 1 || n->nin > 3) return bad_node(ip, id, "wrong operand count");
    if (!resolve_shape(ip, id, out)) return false;
    iter it;
    iter_init(&it, out->rank, out->dim, n->nin);
    for (unsigned k = 0; k < n->nin; k++) {
        in[k] = &ip->vals[ir_in(ip->g, n, k)];
        if (!broadcasts_to(in[k], out->rank, out->dim))
            return bad_node(ip, id, "operand does not broadcast to the result shape");
        bcast_strides(in[k], out->rank, it.stride[k]);
    }
    if (!alloc_value(ip, id, out)) return false;
    ir_op op = (ir_op)n->op;
    ir_dtype ct = ir_elem_compute_dtype(ip->g, n);
    int64_t total = rt_numel(out);
    for (int64_t j = 0; j < total; j++, iter_next(&it)) {
        double x[3] = {0, 0, 0}, v = 0;
        for (unsigned k = 0; k < n->nin; k++) x[k] = rt_get(in[k], it.off[k]);
        if (!ir_scalar_eval(op, ct, x, &v)) return bad_node(ip, id, "not an elementwise op");
        rt_set(out, j, v);
    }
    return true;
}

/* pick(src, idx) {axis a, len} (ir_add_pick): element o of the result is src at o with axis a
 * set to i = idx[o] (+0 for floats) when 0 <= i < len, else 0; src and idx broadcast. */
static bool eval_pick(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    if (n->nin != 2) return bad_node(ip, id, "wrong operand count");
    if (!resolve_shape(ip, id, out)) return false;
    const rt_tensor *src = &ip->vals[ir_in(ip->g, n, 0)], *ix = &ip->vals[ir_in(ip->g, n, 1)];
    int a = n->a.pick.axis;
    ir_dim ld = n->a.pick.len;
    int64_t len = IR_DIM_IS_SYM(ld)
                      ? (IR_DIM_SYMIDX(ld) < ip->g->nsyms ? ip->syms[IR_DIM_SYMIDX(ld)] : -1)
                      : ld;
    if (a < 0 || a >= out->rank || out->dim[a] != 1 || len < 0)
        return bad_node(ip, id, "pick axis or length out of range");
    int64_t want[IR_MAX_RANK];
    memcpy(want, out->dim, (size_t)out->rank * sizeof *want);
    int sa = a - (out->rank - src->rank); /* src's axis under a, or < 0 */
    if (sa >= 0 && src->dim[sa] != 1) want[a] = len;
    if (!broadcasts_to(ix, out->rank, out->dim) || !broadcasts_to(src, out->rank, want))
        return bad_node(ip, id, "operand does not fit the result shape");
    iter it;
    iter_init(&it, out->rank, out->dim, 2);
    int64_t cs[IR_MAX_RANK], step = 0;
    c_strides(src, cs);
    bcast_strides(src, out->rank, it.stride[0]);
    if (sa >= 0 && src->dim[sa] != 1) step = cs[sa];
    it.stride[0][a] = 0;
    bcast_strides(ix, out->rank, it.stride[1]);
    if (!alloc_value(ip, id, out)) return false;
    for (int64_t j = 0, total = rt_numel(out); j < total; j++, iter_next(&it)) {
        double i = rt_get(ix, it.off[1]), v = 0;
        if (i >= 0 && i < (double)len)
            v = rt_get(src, it.off[0] + (int64_t)i * step) + 0.0; /* -0: +0 */
        rt_set(out, j, v);
    }
    return true;
}

/* sum/mean/max/min over the axes bitmask, accumulating in double; mean
 * divides by the reduced element count. */
static bool eval_reduce(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    const rt_tensor *x = &ip->vals[ir_in(ip->g, n, 0)];
    uint32_t axes = n->a.red.axes;
    if (x->rank < 32 && (axes >> x->rank) != 0)
        return bad_node(ip, id, "reduction axis out of range");
    int64_t odim[IR_MAX_RANK], xs[IR_MAX_RANK], os[IR_MAX_RANK], count = 1;
    int orank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (axes & (1u << d)) {
            count *= x->dim[d];
            if (n->a.red.keepdim) odim[orank++] = 1;
        } else {
            odim[orank++] = x->dim[d];
        }
    }
    if (!check_shape(ip, id, orank, odim) || !resolve_shape(ip, id, out) ||
        !alloc_value(ip, id, out))
        return false;
    /* Output strides seen from the input's dims: 0 on reduced axes. */
    c_strides(out, os);
    for (int d = 0, o = 0; d < x->rank; d++) {
        if (axes & (1u << d)) {
            xs[d] = 0;
            if (n->a.red.keepdim) o++;
        } else {
            xs[d] = os[o++];
        }
    }
    int64_t on = rt_numel(out), xn = rt_numel(x);
    ir_op op = (ir_op)n->op;
    /* max/min over an empty axis give their identities, -inf and +inf (as
     * NumPy's `initial=` would), so a softmax of empty rows is empty. */
    double init = 0;
    if (!ir_scalar_reduce_init(op, &init)) return bad_node(ip, id, "not a reduction op");
    if (!scratch_ok(ip, id, (double)on)) return false;
    double *acc = ir_xmalloc((size_t)(on ? on : 1) * sizeof *acc);
    for (int64_t i = 0; i < on; i++) acc[i] = init;
    iter it;
    iter_init(&it, x->rank, x->dim, 1);
    memcpy(it.stride[0], xs, sizeof xs);
    for (int64_t i = 0; i < xn; i++, iter_next(&it)) {
        double *a = &acc[it.off[0]];
        (void)ir_scalar_reduce_step(op, x->dtype, *a, rt_get(x, i), a);
    }
    for (int64_t i = 0; i < on; i++) {
        double v = acc[i];
        (void)ir_scalar_reduce_finish(op, out->dtype, acc[i], (double)count, &v);
        if (op == IR_OP_SUM && out->dtype == IR_I32 && fabs(v) < 9007199254740992.0)
            ((int32_t *)out->data)[i] =
                (int32_t)(uint32_t)(uint64_t)(int64_t)v; /* wraps like i32 adds */
        else
            rt_set(out, i, v);
    }
    free(acc);
    return true;
}

/* Reads a whole tensor into a new array of doubles. */
static double *to_double(const rt_tensor *t) {
    int64_t n = rt_numel(t);
    double *p = ir_xmalloc((size_t)(n ? n : 1) * sizeof *p);
    for (int64_t i = 0; i < n; i++) p[i] = rt_get(t, i);
    return p;
}

/* Multiplies one [M, K] x [K, N] pair (row-major doubles) into out at
 * element offset o, accumulating every dot product in double. */
static void matmul_block(const double *a, const double *b, int64_t M, int64_t K, int64_t N,
                         rt_tensor *out, int64_t o, double *row) {
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) row[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            double av = a[i * K + k];
            const double *br = b + k * N;
            for (int64_t j = 0; j < N; j++) row[j] += av * br[j];
        }
        for (int64_t j = 0; j < N; j++) rt_set(out, o + i * N + j, row[j]);
    }
}

/* a @ b over the last two dims; leading dims broadcast (NumPy matmul for
 * rank >= 2 operands). */
static bool eval_matmul(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    const rt_tensor *a = &ip->vals[ir_in(ip->g, n, 0)], *b = &ip->vals[ir_in(ip->g, n, 1)];
    if (a->rank < 2 || b->rank < 2 || a->dim[a->rank - 1] != b->dim[b->rank - 2])
        return bad_node(ip, id, "operand shapes do not fit a matrix product");
    rt_tensor la = *a, lb = *b;
    la.rank -= 2;
    lb.rank -= 2;
    int lr = la.rank > lb.rank ? la.rank : lb.rank;
    int64_t dim[IR_MAX_RANK];
    for (int d = 0; d < lr; d++) {
        int da = d - (lr - la.rank), db = d - (lr - lb.rank);
        int64_t ea = da >= 0 ? la.dim[da] : 1, eb = db >= 0 ? lb.dim[db] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return bad_node(ip, id, "leading dims do not broadcast");
        dim[d] = ea == 1 ? eb : ea;
    }
    int64_t M = a->dim[a->rank - 2], K = a->dim[a->rank - 1], N = b->dim[b->rank - 1];
    dim[lr] = M;
    dim[lr + 1] = N;
    if (!check_shape(ip, id, lr + 2, dim) || !resolve_shape(ip, id, out) ||
        !alloc_value(ip, id, out))
        return false;
    if (!scratch_ok(ip, id, (double)rt_numel(a) + (double)rt_numel(b) + (double)N)) return false;
    double *ad = to_double(a), *bd = to_double(b),
           *row = ir_xmalloc((size_t)(N ? N : 1) * sizeof *row);
    iter it;
    iter_init(&it, lr, dim, 2);
    bcast_strides(&la, lr, it.stride[0]);
    bcast_strides(&lb, lr, it.stride[1]);
    int64_t batches = 1;
    for (int d = 0; d < lr; d++) batches *= dim[d];
    for (int64_t bi = 0; bi < batches; bi++, iter_next(&it))
        matmul_block(ad + it.off[0] * M * K, bd + it.off[1] * K * N, M, K, N, out, bi * M * N, row);
    free(ad);
    free(bd);
    free(row);
    return true;
}

/* out[j] = x[base + sum idx*strides] over out's shape in C order. */
static void gather(rt_tensor *out, const rt_tensor *x, int64_t base, const int64_t *strides) {
    iter it;
    iter_init(&it, out->rank, out->dim, 1);
    memcpy(it.stride[0], strides, (size_t)out->rank * sizeof *strides);
    it.off[0] = base;
    int64_t total = rt_numel(out);
    for (int64_t j = 0; j < total; j++, iter_next(&it)) copy_elem(out, j, x, it.off[0]);
}

/* permute, reshape, broadcast_to and slice: index arithmetic only. */
static bool eval_view(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    const rt_tensor *x = &ip->vals[ir_in(ip->g, n, 0)];
    int64_t cs[IR_MAX_RANK], st[IR_MAX_RANK], dim[IR_MAX_RANK], base = 0;
    c_strides(x, cs);
    switch ((ir_op)n->op) {
        case IR_OP_PERMUTE: {
            unsigned seen = 0;
            for (int i = 0; i < x->rank; i++) {
                unsigned p = n->a.perm[i];
                if (p >= x->rank || (seen & (1u << p)))
                    return bad_node(ip, id, "invalid permutation");
                seen |= 1u << p;
                dim[i] = x->dim[p];
                st[i] = cs[p];
            }
            if (!check_shape(ip, id, x->rank, dim)) return false;
            break;
        }
        case IR_OP_RESHAPE:
            if (!resolve_shape(ip, id, out)) return false;
            if (rt_numel(out) != rt_numel(x))
                return bad_node(ip, id, "reshape changes the element count");
            c_strides(out, st);
            break;
        case IR_OP_BROADCAST:
            if (!resolve_shape(ip, id, out)) return false;
            if (!broadcasts_to(x, out->rank, out->dim))
                return bad_node(ip, id, "operand does not broadcast to the target shape");
            bcast_strides(x, out->rank, st);
            break;
        case IR_OP_SLICE: {
            int ax = n->a.slice.axis;
            int64_t s0 = n->a.slice.start, s1 = n->a.slice.stop;
            if (ax < 0 || ax >= x->rank || s0 < 0 || s1 < s0 || s1 > x->dim[ax])
                return bad_node(ip, id, "slice out of range");
            memcpy(dim, x->dim, sizeof dim);
            dim[ax] = s1 - s0;
            memcpy(st, cs, sizeof st);
            base = s0 * cs[ax];
            if (!check_shape(ip, id, x->rank, dim)) return false;
            break;
        }
        default: return bad_node(ip, id, "not a view op");
    }
    if (!resolve_shape(ip, id, out) || !alloc_value(ip, id, out)) return false;
    gather(out, x, base, st);
    return true;
}

/* concat along the node's axis; operands may differ in dtype (promoted). */
static bool eval_concat(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    const rt_tensor *x0 = &ip->vals[ir_in(ip->g, n, 0)];
    int ax = n->a.axis;
    if (n->nin == 0 || ax < 0 || ax >= x0->rank) return bad_node(ip, id, "invalid concat axis");
    int64_t dim[IR_MAX_RANK];
    memcpy(dim, x0->dim, sizeof dim);
    dim[ax] = 0;
    for (unsigned k = 0; k < n->nin; k++) {
        const rt_tensor *x = &ip->vals[ir_in(ip->g, n, k)];
        if (x->rank != x0->rank) return bad_node(ip, id, "operands differ in rank");
        for (int d = 0; d < x->rank; d++)
            if (d != ax && x->dim[d] != x0->dim[d])
                return bad_node(ip, id, "operands differ off the concat axis");
        dim[ax] += x->dim[ax];
    }
    if (!check_shape(ip, id, x0->rank, dim) || !resolve_shape(ip, id, out) ||
        !alloc_value(ip, id, out))
        return false;
    int64_t os[IR_MAX_RANK], at = 0;
    c_strides(out, os);
    for (unsigned k = 0; k < n->nin; k++) {
        const rt_tensor *x = &ip->vals[ir_in(ip->g, n, k)];
        iter it;
        iter_init(&it, x->rank, x->dim, 1);
        memcpy(it.stride[0], os, sizeof os);
        it.off[0] = at * os[ax];
        int64_t xn = rt_numel(x);
        for (int64_t i = 0; i < xn; i++, iter_next(&it)) copy_elem(out, it.off[0], x, i);
        at += x->dim[ax];
    }
    return true;
}

/* Makes the input value for parameter node id: the caller's tensor as is,
 * or converted (an f32 tensor for a bf16 parameter, rounded to nearest even). */
static bool eval_input(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    const rt_tensor *t = &ip->inputs[n->a.param];
    if (t->dtype == n->dtype) {
        *out = *t;
        ip->borrowed[id] = true;
        return true;
    }
    if (!rt_tensor_cast(t, (ir_dtype)n->dtype, out))
        return bad_node(ip, id, "out of memory converting the input");
    return true;
}

/* iota: every element holds its index along the node's axis. */
static bool eval_iota(interp *ip, ir_id id, rt_tensor *out) {
    const ir_node *n = &ip->g->nodes[id];
    if (!resolve_shape(ip, id, out) || !alloc_value(ip, id, out)) return false;
    int ax = n->a.axis;
    if (ax < 0 || ax >= out->rank) return bad_node(ip, id, "iota axis out of range");
    int64_t inner = 1;
    for (int d = ax + 1; d < out->rank; d++) inner *= out->dim[d];
    for (int64_t i = 0, cn = rt_numel(out); i < cn; i++)
        rt_set(out, i, (double)((i / inner) % out->dim[ax]));
    return true;
}

/* Computes node id into ip->vals[id]. */
static bool eval_node(interp *ip, ir_id id) {
    const ir_node *n = &ip->g->nodes[id];
    rt_tensor *out = &ip->vals[id];
    for (unsigned k = 0; k < n->nin; k++) {
        ir_id in = ir_in(ip->g, n, k);
        if (in >= id || !ip->have[in])
            return bad_node(ip, id, "operand not available (graph not in topological order)");
    }
    if (ir_op_arity((ir_op)n->op) >= 0 && n->nin != ir_op_arity((ir_op)n->op))
        return bad_node(ip, id, "wrong operand count");
    unsigned tr = ir_op_traits((ir_op)n->op);
    if (n->op == IR_OP_INPUT) return eval_input(ip, id, out);
    if (n->op ==
        IR_OP_CONST) { /* the scalar, filled over the node's shape (rank 0 from the builder) */
        if (!resolve_shape(ip, id, out) || !alloc_value(ip, id, out)) return false;
        for (int64_t i = 0, cn = rt_numel(out); i < cn; i++) rt_set(out, i, n->a.cval);
        return true;
    }
    if (n->op == IR_OP_IOTA) return eval_iota(ip, id, out);
    if (n->op == IR_OP_MATMUL) return eval_matmul(ip, id, out);
    if (n->op == IR_OP_CONCAT) return eval_concat(ip, id, out);
    if (n->op == IR_OP_PICK) return eval_pick(ip, id, out);
    /* the families: every elementwise op by its scalar rule (ir_scalar_eval) */
    if (tr & IR_T_ELEM) return eval_elem(ip, id, out);
    if (tr & IR_T_REDUCE) return eval_reduce(ip, id, out);
    if (tr & IR_T_VIEW) return eval_view(ip, id, out);
    return bad_node(ip, id, "op not supported by the interpreter");
}

/* Drops one use of node id's value, freeing it after its last live use. */
static void release(interp *ip, ir_id id) {
    if (ip->left[id] > 0 && --ip->left[id] == 0) {
        if (!ip->borrowed[id]) rt_tensor_free(&ip->vals[id]);
        ip->vals[id].data = NULL;
        ip->have[id] = false;
    }
}

/* Marks the nodes the output depends on (users from ir_uses_build, walked
 * backwards) and counts each node's live users, repeats included. */
static void liveness(interp *ip) {
    const ir_graph *g = ip->g;
    ir_uses u;
    ir_uses_build(g, &u);
    ip->live[g->n - 1] = true;
    for (ir_id i = g->n - 1; i-- > 0;)
        for (uint32_t k = u.start[i]; k < u.start[i + 1]; k++)
            if (ip->live[u.ids[k]]) {
                ip->live[i] = true;
                ip->left[i]++;
            }
    ir_uses_free(&u);
}

/* Copies the returned values into outputs (owned by the caller), each in its node's dtype: plan
 * precision rounds here the returned values it held in f32. */
static bool collect_outputs(interp *ip, rt_tensor *outputs) {
    const ir_graph *g = ip->g;
    const ir_node *o = &g->nodes[g->n - 1];
    for (unsigned k = 0; k < o->nin; k++) {
        ir_id v = ir_in(g, o, k);
        if (!rt_tensor_cast(&ip->vals[v], (ir_dtype)g->nodes[v].dtype, &outputs[k])) {
            for (unsigned j = 0; j < k; j++) rt_tensor_free(&outputs[j]);
            return bad_node(ip, v, "out of memory copying an output");
        }
    }
    return true;
}

/* Runs the live nodes in order; values are freed after their last use. */
static bool run_nodes(interp *ip, rt_tensor *outputs) {
    const ir_graph *g = ip->g;
    for (ir_id i = 0; i + 1 < g->n; i++) {
        if (!ip->live[i]) continue;
        if (!eval_node(ip, i)) return false;
        ip->have[i] = true;
        const ir_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->nin; k++) release(ip, ir_in(g, n, k));
    }
    const ir_node *o = &g->nodes[g->n - 1];
    for (unsigned k = 0; k < o->nin; k++)
        if (ir_in(g, o, k) >= g->n - 1 || !ip->have[ir_in(g, o, k)])
            return bad_node(ip, g->n - 1, "returned value not available");
    return collect_outputs(ip, outputs);
}

/* Plan precision (rt_interp_run_plan): marks the f16/bf16 elementwise values that g's fusion plan
 * keeps on chip for their region's consumers (no other region reads them from HBM). A returned
 * value is among them: its kernel rounds it when it stores it, but its consumers in the same
 * kernel use the f32 value (exp(x) returned as an f16 inf, times 0.0625 in the same kernel, is
 * finite); collect_outputs rounds it. Explicit casts round wherever they are, and so do matrix
 * products and reductions: the generated code converts their f32 accumulators to the node's dtype
 * before an epilogue or a later pass uses them. */
static bool *wide_values(const ir_graph *g) {
    bool *stored = ir_xcalloc(g->n, sizeof(bool)), *wide = ir_xcalloc(g->n, sizeof(bool));
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->nin; k++) {
            ir_id a = ir_in(g, n, k);
            if (n->op != IR_OP_OUTPUT && (n->region == IR_NONE || n->region != g->nodes[a].region))
                stored[a] = true;
        }
    }
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        ir_dtype t = (ir_dtype)n->dtype;
        wide[i] = !stored[i] && n->region != IR_NONE && (t == IR_F16 || t == IR_BF16) &&
                  (ir_op_traits((ir_op)n->op) & IR_T_ELEM) && n->op != IR_OP_CAST;
    }
    free(stored);
    return wide;
}

static bool interp_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, bool plan,
                       tx_diag *d) {
    if (g->n == 0 || g->nodes[g->n - 1].op != IR_OP_OUTPUT) {
        tx_error(d, "interpreter: the graph has no output node");
        return false;
    }
    for (unsigned k = 0; k < g->nodes[g->n - 1].nin; k++) memset(&outputs[k], 0, sizeof outputs[k]);
    interp ip = {g,
                 inputs,
                 d,
                 ir_xcalloc(g->nsyms + 1, sizeof(int64_t)),
                 ir_xcalloc(g->n, sizeof(rt_tensor)),
                 ir_xcalloc(g->n, sizeof(bool)),
                 ir_xcalloc(g->n, sizeof(bool)),
                 ir_xcalloc(g->n, sizeof(uint32_t)),
                 ir_xcalloc(g->n, sizeof(bool)),
                 plan ? wide_values(g) : NULL};
    bool ok = rt_bind_shapes(g, inputs, ip.syms, d);
    if (ok) {
        liveness(&ip);
        ok = run_nodes(&ip, outputs);
    }
    for (ir_id i = 0; i < g->n; i++)
        if (!ip.borrowed[i]) rt_tensor_free(&ip.vals[i]);
    free(ip.syms);
    free(ip.vals);
    free(ip.borrowed);
    free(ip.have);
    free(ip.left);
    free(ip.live);
    free(ip.wide);
    return ok;
}

bool rt_interp_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d) {
    return interp_run(g, inputs, outputs, false, d);
}

bool rt_interp_run_plan(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs,
                        tx_diag *d) {
    return interp_run(g, inputs, outputs, true, d);
}
