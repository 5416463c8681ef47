/* rules.c - the shape rules that the frontend could only check symbolically,
 * as polynomials in the symbols (ir_shape_rules), for whoever binds the sizes
 * without the graph (libtx_rt's manifest). Contracts in ir/ir.h. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

/* p = the dim dd (a symbol or a constant). */
static void dim_poly(ir_poly *p, ir_dim dd) {
    ir_shape s = {.rank = 1, .dim = {dd}};
    ir_poly_numel(p, &s, 1);
}

static bool has_sym(const ir_shape *s) {
    for (int i = 0; i < s->rank; i++)
        if (IR_DIM_IS_SYM(s->dim[i])) return true;
    return false;
}

/* Appends rule (node, rel, a, b) to *v (grown as needed). */
static void push(ir_shape_rule **v, uint32_t *n, uint32_t *cap, ir_id node, ir_rule_rel rel,
                 const ir_poly *a, const ir_poly *b) {
    if (a->overflow || b->overflow) return; /* not representable: left to the kernels' sizes */
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        *v = ir_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = (ir_shape_rule){node, (uint8_t)rel, *a, *b};
}

/* The rules of node id (operands x = its first) into v. */
static void node_rules(const ir_graph *g, ir_id id, ir_shape_rule **v, uint32_t *n, uint32_t *cap) {
    const ir_node *nd = &g->nodes[id];
    const ir_node *x = &g->nodes[ir_in(g, nd, 0)];
    ir_poly a, b;
    if (nd->op == IR_OP_SLICE) {
        int ax = nd->a.slice.axis;
        if (ax < 0 || ax >= x->shape.rank || !IR_DIM_IS_SYM(x->shape.dim[ax])) return;
        dim_poly(&a, x->shape.dim[ax]);
        ir_poly_const(&b, (double)(nd->a.slice.stop > nd->a.slice.start ? nd->a.slice.stop
                                                                        : nd->a.slice.start));
        push(v, n, cap, id, IR_RULE_GE, &a, &b);
    } else if (nd->op == IR_OP_RESHAPE) {
        ir_poly_numel(&a, &x->shape, 1);
        ir_poly_numel(&b, &nd->shape, 1);
        push(v, n, cap, id, IR_RULE_EQ, &a, &b);
    } else if (nd->op == IR_OP_MATMUL && nd->nin == 2) {
        const ir_node *y = &g->nodes[ir_in(g, nd, 1)];
        if (!x->shape.rank || y->shape.rank < 2) return;
        dim_poly(&a, x->shape.dim[x->shape.rank - 1]);
        dim_poly(&b, y->shape.dim[y->shape.rank - 2]);
        push(v, n, cap, id, IR_RULE_EQ, &a, &b);
    } else if ((ir_op_traits((ir_op)nd->op) & IR_T_ELEM) || nd->op == IR_OP_BROADCAST ||
               nd->op == IR_OP_PICK) {
        for (unsigned k = 0; k < nd->nin; k++) { /* NumPy broadcasting, aligned at the last dim */
            const ir_shape *in = &g->nodes[ir_in(g, nd, k)].shape;
            for (int i = 1; i <= in->rank && i <= nd->shape.rank; i++) {
                ir_dim da = in->dim[in->rank - i], db = nd->shape.dim[nd->shape.rank - i];
                if (nd->op == IR_OP_PICK && k == 0 && nd->shape.rank - i == nd->a.pick.axis)
                    db = nd->a.pick.len; /* the source's extent along the picked axis */
                if (da == db || (!IR_DIM_IS_SYM(da) && !IR_DIM_IS_SYM(db))) continue;
                dim_poly(&a, da);
                dim_poly(&b, db);
                push(v, n, cap, id, IR_RULE_EQ_OR_ONE, &a, &b);
            }
        }
    } else if (nd->op == IR_OP_CONCAT) {
        int ax = nd->a.axis;
        if (ax < 0 || ax >= nd->shape.rank) return;
        ir_poly_const(&a, 0);
        for (unsigned k = 0; k < nd->nin; k++) {
            const ir_shape *in = &g->nodes[ir_in(g, nd, k)].shape;
            if (in->rank != nd->shape.rank) return;
            dim_poly(&b, in->dim[ax]);
            ir_poly_add(&a, &b);
            for (int i = 0; i < in->rank; i++) {
                if (i == ax || in->dim[i] == nd->shape.dim[i]) continue;
                ir_poly c, e;
                dim_poly(&c, in->dim[i]);
                dim_poly(&e, nd->shape.dim[i]);
                push(v, n, cap, id, IR_RULE_EQ, &c, &e);
            }
        }
        dim_poly(&b, nd->shape.dim[ax]);
        push(v, n, cap, id, IR_RULE_EQ, &a, &b);
    }
}

ir_shape_rule *ir_shape_rules(const ir_graph *g, uint32_t *nrules) {
    uint8_t *live = ir_xcalloc(g->n + 1, 1);
    ir_shape_rule *v = NULL;
    uint32_t n = 0, cap = 0;
    if (g->n) live[ir_output(g)] = 1;
    for (ir_id id = g->n; id-- > 0;)
        if (live[id])
            for (unsigned k = 0; k < g->nodes[id].nin; k++) live[ir_in(g, &g->nodes[id], k)] = 1;
    for (ir_id id = 0; id < g->n; id++) {
        const ir_node *nd = &g->nodes[id];
        bool sym = has_sym(&nd->shape);
        for (unsigned k = 0; !sym && k < nd->nin; k++)
            sym = has_sym(&g->nodes[ir_in(g, nd, k)].shape);
        if (live[id] && sym && nd->nin && nd->op != IR_OP_OUTPUT) node_rules(g, id, &v, &n, &cap);
    }
    free(live);
    *nrules = n;
    return v;
}

bool ir_shape_rule_holds(const ir_shape_rule *r, const int64_t *syms, unsigned nsyms, double *a,
                         double *b) {
    if (!ir_poly_eval(&r->a, syms, nsyms, a) || !ir_poly_eval(&r->b, syms, nsyms, b))
        return true; /* a symbol is unbound: nothing to check yet */
    switch ((ir_rule_rel)r->rel) {
        case IR_RULE_GE: return *a >= *b;
        case IR_RULE_EQ: return *a == *b;
        case IR_RULE_EQ_OR_ONE: return *a == 1 || *a == *b;
    }
    return false;
}

const char *ir_rule_rel_name(ir_rule_rel r) {
    switch (r) {
        case IR_RULE_GE: return "ge";
        case IR_RULE_EQ: return "eq";
        case IR_RULE_EQ_OR_ONE: return "eq_or_one";
    }
    return "?";
}
