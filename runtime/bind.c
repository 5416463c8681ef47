/* bind.c - binds symbolic dims from the input tensors and checks every
 * input's dtype, rank and shape against its parameter type. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

/* Formats a parameter type like "f32[M, 4]" into buf. */
static const char *type_str(const ir_graph *g, const ir_node *n, char *buf, size_t cap) {
    char sb[256];
    snprintf(buf, cap, "%s%s", ir_dtype_name((ir_dtype)n->dtype),
             ir_shape_str(g, &n->shape, sb, sizeof sb));
    return buf;
}

/* Formats a tensor's concrete shape like "[3, 5]" into buf. */
static const char *tshape_str(const rt_tensor *t, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)t->dim[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

/* The parameter's source name, or "#K" when it has none (buf holds it). */
static const char *param_name(const ir_graph *g, const ir_node *n, char *buf, size_t cap) {
    if (n->name) return ir_str(g, n->name);
    snprintf(buf, cap, "#%u", n->a.param);
    return buf;
}

/* Binding context: the symbol values found so far and which parameter
 * (node id) fixed each one (IR_NONE: the graph binds it, or nobody yet). */
typedef struct bind_ctx {
    const ir_graph *g;
    int64_t *syms;
    ir_id *from;
    tx_diag *d;
} bind_ctx;

/* Checks one input tensor against parameter node `id`, binding its
 * symbolic dims; reports the first mismatch and returns false. */
static bool bind_one(bind_ctx *c, ir_id id, const rt_tensor *t) {
    const ir_graph *g = c->g;
    const ir_node *n = &g->nodes[id];
    char nb[32], ty[300], sh[300];
    const char *name = param_name(g, n, nb, sizeof nb);
    if (t->dtype != n->dtype && !(n->dtype == IR_BF16 && t->dtype == IR_F32)) {
        tx_error(c->d, "input '%s': dtype %s does not match %s", name, ir_dtype_name(t->dtype),
                 type_str(g, n, ty, sizeof ty));
        return false;
    }
    if (t->rank != n->shape.rank) {
        tx_error(c->d, "input '%s': shape %s does not match %s (rank %d, expected %d)", name,
                 tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), t->rank,
                 n->shape.rank);
        return false;
    }
    /* sizes from a caller of the C API are not checked elsewhere: a negative dim or an element
     * count past the IR's limit would size buffers wrongly */
    for (int i = 0; i < t->rank; i++)
        if (t->dim[i] < 0) {
            tx_error(c->d, "input '%s': dim %d is %lld (negative)", name, i, (long long)t->dim[i]);
            return false;
        }
    int64_t numel = rt_numel(t);
    if (numel < 0 || numel >= IR_MAX_ELEMS) {
        tx_error(c->d, "input '%s': shape %s has 2^62 elements or more", name,
                 tshape_str(t, sh, sizeof sh));
        return false;
    }
    for (int i = 0; i < t->rank; i++) {
        ir_dim want = n->shape.dim[i];
        long long got = (long long)t->dim[i];
        if (!IR_DIM_IS_SYM(want)) {
            if (got == want) continue;
            tx_error(c->d, "input '%s': shape %s does not match %s (dim %d is %lld, expected %lld)",
                     name, tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), i, got,
                     (long long)want);
            return false;
        }
        uint32_t s = IR_DIM_SYMIDX(want);
        if (s >= g->nsyms) {
            tx_error(c->d, "input '%s': dim %d names an unknown symbol", name, i);
            return false;
        }
        const char *sn = g->syms[s].name;
        if (c->syms[s] < 0) {
            c->syms[s] = got;
            c->from[s] = id;
        } else if (c->syms[s] != got) {
            if (c->from[s] == IR_NONE) {
                tx_error(c->d,
                         "input '%s': shape %s does not match %s (dim %d is %lld, but %s is bound "
                         "to %lld)",
                         name, tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), i, got,
                         sn, (long long)c->syms[s]);
            } else {
                char ob[32];
                tx_error(c->d,
                         "input '%s': shape %s does not match %s (%s is %lld from '%s' but %lld "
                         "from '%s')",
                         name, tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), sn,
                         (long long)c->syms[s], param_name(g, &g->nodes[c->from[s]], ob, sizeof ob),
                         got, name);
            }
            return false;
        }
    }
    return true;
}

/* The concrete value of dim dd with the bound syms (-1 when unbound). */
static int64_t dim_value(const ir_graph *g, ir_dim dd, const int64_t *syms) {
    if (!IR_DIM_IS_SYM(dd)) return dd;
    uint32_t s = IR_DIM_SYMIDX(dd);
    return s < g->nsyms ? syms[s] : -1;
}

/* Element count of shape s with the bound syms; -1 when unbound or it overflows. */
static int64_t shape_numel(const ir_graph *g, const ir_shape *s, const int64_t *syms) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        int64_t v = dim_value(g, s->dim[i], syms);
        if (v < 0 || !ir_mul_ok(n, v, &n)) return -1;
    }
    return n;
}

/* Checks, with the symbols bound, the shape rules that the frontend could
 * only check symbolically: a slice's bounds against its input's dim, a
 * reshape's element count, broadcasting and concatenation extents, a
 * matrix product's inner dim. The compiled code trusts them (an
 * out-of-range slice would read past its buffer); false with the node named. */
static bool check_live_shapes(const ir_graph *g, const int64_t *syms, const uint8_t *live,
                              tx_diag *d);

static bool has_sym(const ir_shape *s) {
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i])) return true;
    return false;
}

/* True when node n or one of its operands has a symbolic dim: concrete shapes were checked by
 * the frontend (bad IR is the interpreter's and the verifier's to report). */
static bool involves_sym(const ir_graph *g, const ir_node *n) {
    if (has_sym(&n->shape)) return true;
    for (unsigned k = 0; k < n->nin; k++)
        if (has_sym(&g->nodes[ir_in(g, n, k)].shape)) return true;
    return false;
}

/* Only values the outputs depend on are checked (dead code may be invalid at these sizes, as the
 * interpreter allows). */
static bool check_bound_shapes(const ir_graph *g, const int64_t *syms, tx_diag *d) {
    uint8_t *live = ir_xcalloc(g->n + 1, 1);
    if (g->n) live[ir_output(g)] = 1;
    for (ir_id id = g->n; id-- > 0;)
        if (live[id])
            for (unsigned k = 0; k < g->nodes[id].nin; k++) live[ir_in(g, &g->nodes[id], k)] = 1;
    bool ok = check_live_shapes(g, syms, live, d);
    free(live);
    return ok;
}

static bool check_live_shapes(const ir_graph *g, const int64_t *syms, const uint8_t *live,
                              tx_diag *d) {
    for (ir_id id = 0; id < g->n; id++) {
        const ir_node *n = &g->nodes[id];
        if (!live[id] || n->nin == 0 || n->op == IR_OP_OUTPUT || !involves_sym(g, n)) continue;
        const ir_node *x = &g->nodes[ir_in(g, n, 0)];
        const char *why = NULL;
        char msg[200];
        if (n->op == IR_OP_SLICE) {
            int ax = n->a.slice.axis;
            int64_t len = ax >= 0 && ax < x->shape.rank ? dim_value(g, x->shape.dim[ax], syms) : -1;
            if (len >= 0 && (n->a.slice.stop > len || n->a.slice.start > len)) {
                snprintf(
                    msg, sizeof msg,
                    "slice [%lld, %lld) of axis %d is out of range: that dim of the input is %lld",
                    (long long)n->a.slice.start, (long long)n->a.slice.stop, ax, (long long)len);
                why = msg;
            }
        } else if (n->op == IR_OP_RESHAPE) {
            int64_t a = shape_numel(g, &x->shape, syms), b = shape_numel(g, &n->shape, syms);
            if (a >= 0 && b >= 0 && a != b) {
                snprintf(msg, sizeof msg, "reshape of %lld elements into %lld", (long long)a,
                         (long long)b);
                why = msg;
            }
        } else if (n->op == IR_OP_MATMUL && n->nin == 2) {
            const ir_node *y = &g->nodes[ir_in(g, n, 1)];
            int64_t k1 = x->shape.rank ? dim_value(g, x->shape.dim[x->shape.rank - 1], syms) : -1;
            int64_t k2 =
                y->shape.rank >= 2 ? dim_value(g, y->shape.dim[y->shape.rank - 2], syms) : -1;
            if (k1 >= 0 && k2 >= 0 && k1 != k2) {
                snprintf(msg, sizeof msg, "matrix product of inner dims %lld and %lld",
                         (long long)k1, (long long)k2);
                why = msg;
            }
        } else if ((ir_op_traits((ir_op)n->op) & IR_T_ELEM) || n->op == IR_OP_BROADCAST ||
                   n->op == IR_OP_PICK) {
            for (unsigned k = 0; k < n->nin && !why;
                 k++) { /* NumPy broadcasting, aligned at the last dim */
                const ir_shape *in = &g->nodes[ir_in(g, n, k)].shape;
                for (int i = 1; i <= in->rank && i <= n->shape.rank && !why; i++) {
                    bool along = n->op == IR_OP_PICK && k == 0 &&
                                 n->shape.rank - i == n->a.pick.axis; /* the source's len */
                    int64_t a = dim_value(g, in->dim[in->rank - i], syms),
                            b = dim_value(
                                g, along ? n->a.pick.len : n->shape.dim[n->shape.rank - i], syms);
                    if (a >= 0 && b >= 0 && a != b && a != 1) {
                        snprintf(
                            msg, sizeof msg,
                            "operand %u has %lld where the result has %lld (dim %d from the end)",
                            k, (long long)a, (long long)b, i);
                        why = msg;
                    }
                }
            }
        } else if (n->op == IR_OP_CONCAT) {
            int ax = n->a.axis;
            int64_t sum = 0, want = ax >= 0 && ax < n->shape.rank
                                        ? dim_value(g, n->shape.dim[ax], syms)
                                        : -1;
            for (unsigned k = 0; k < n->nin && sum >= 0; k++) {
                const ir_shape *in = &g->nodes[ir_in(g, n, k)].shape;
                int64_t v = ax >= 0 && ax < in->rank ? dim_value(g, in->dim[ax], syms) : -1;
                for (int i = 0; i < in->rank && i < n->shape.rank; i++) {
                    int64_t a = dim_value(g, in->dim[i], syms),
                            b = dim_value(g, n->shape.dim[i], syms);
                    if (i != ax && a >= 0 && b >= 0 && a != b) sum = -2;
                }
                sum = v < 0 || sum < 0 ? (sum < 0 ? sum : -1) : sum + v;
            }
            if (sum == -2 || (sum >= 0 && want >= 0 && sum != want))
                why = "operands do not fit the concatenation";
        }
        if (why) {
            char nb[64];
            if (n->name)
                snprintf(nb, sizeof nb, "'%.40s' ", ir_str(g, n->name));
            else
                nb[0] = 0;
            tx_error(d, "with these inputs, value %s(%s, node %u) has no valid shape: %s", nb,
                     ir_op_name((ir_op)n->op), id, why);
            return false;
        }
    }
    return true;
}

bool rt_bind_shapes(const ir_graph *g, const rt_tensor *inputs, int64_t *syms, tx_diag *d) {
    bind_ctx c = {g, syms, ir_xcalloc(g->nsyms + 1, sizeof(ir_id)), d};
    for (uint32_t s = 0; s < g->nsyms; s++) {
        syms[s] = g->syms[s].value >= 0 ? g->syms[s].value : -1;
        c.from[s] = IR_NONE;
    }
    bool ok = true;
    for (ir_id i = 0; i < g->n && ok; i++)
        if (g->nodes[i].op == IR_OP_INPUT) ok = bind_one(&c, i, &inputs[g->nodes[i].a.param]);
    free(c.from);
    return ok && check_bound_shapes(g, syms, d);
}
