/* bind.c - binds symbolic dims from the input tensors and checks every
 * input's dtype, rank and shape against its parameter type. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

/* Formats a parameter type like "f32[M, 4]" into buf. */
static const char *type_str(const ir_graph *g, const ir_node *n, char *buf, size_t cap) {
    char sb[256];
    snprintf(buf, cap, "%s%s", ir_dtype_name((ir_dtype)n->dtype), ir_shape_str(g, &n->shape, sb, sizeof sb));
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
                 tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), t->rank, n->shape.rank);
        return false;
    }
    for (int i = 0; i < t->rank; i++) {
        ir_dim want = n->shape.dim[i];
        long long got = (long long)t->dim[i];
        if (!IR_DIM_IS_SYM(want)) {
            if (got == want) continue;
            tx_error(c->d, "input '%s': shape %s does not match %s (dim %d is %lld, expected %lld)", name,
                     tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), i, got, (long long)want);
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
                tx_error(c->d, "input '%s': shape %s does not match %s (dim %d is %lld, but %s is bound to %lld)", name,
                         tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), i, got, sn,
                         (long long)c->syms[s]);
            } else {
                char ob[32];
                tx_error(c->d, "input '%s': shape %s does not match %s (%s is %lld from '%s' but %lld from '%s')", name,
                         tshape_str(t, sh, sizeof sh), type_str(g, n, ty, sizeof ty), sn, (long long)c->syms[s],
                         param_name(g, &g->nodes[c->from[s]], ob, sizeof ob), got, name);
            }
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
    return ok;
}
