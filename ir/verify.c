/* verify.c - checks the IR invariants listed in ir.h. Runs between passes
 * in builds with TX_VERIFY_PASSES. */
#include "ir/ir.h"

#include <string.h>

#define FAIL(...)                                 \
    do {                                          \
        if (err) {                                \
            fprintf(err, "ir verify: %%%u: ", i); \
            fprintf(err, __VA_ARGS__);            \
            fputc('\n', err);                     \
        }                                         \
        ok = false;                               \
    } while (0)

static bool dims_ok(const ir_graph *g, const ir_shape *s) {
    if (s->rank > IR_MAX_RANK) return false;
    for (int k = 0; k < s->rank; k++)
        if (IR_DIM_IS_SYM(s->dim[k]) && IR_DIM_SYMIDX(s->dim[k]) >= g->nsyms) return false;
    return true;
}

bool ir_verify(const ir_graph *g, FILE *err) {
    bool ok = true, seen_op = false;
    uint32_t i = 0, noutput = 0, nparam = 0;
    if (g->n == 0 || g->nodes[g->n - 1].op != IR_OP_OUTPUT) {
        if (err) fprintf(err, "ir verify: the last node is not an output\n");
        return false;
    }
    for (i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op >= IR_NOPS) {
            FAIL("bad op %u", n->op);
            continue;
        }
        if (n->dtype >= IR_NDTYPES) FAIL("bad dtype %u", n->dtype);
        int ar = ir_op_arity((ir_op)n->op);
        if (ar >= 0 && n->nin != ar)
            FAIL("%s takes %d inputs, has %u", ir_op_name((ir_op)n->op), ar, n->nin);
        if (n->op == IR_OP_CONCAT && n->nin < 1) FAIL("concat of nothing");
        if ((uint64_t)n->inoff + n->nin > g->nargs)
            FAIL("inputs out of the pool");
        else
            for (unsigned k = 0; k < n->nin; k++)
                if (ir_in(g, n, k) >= i)
                    FAIL("input %u (%%%u) breaks topological order", k, ir_in(g, n, k));
        if (!dims_ok(g, &n->shape)) FAIL("bad shape");
        if (n->op == IR_OP_INPUT) {
            if (seen_op) FAIL("input after an operation");
            if (n->a.param != nparam) FAIL("parameter index %u, expected %u", n->a.param, nparam);
            nparam++;
        } else {
            seen_op = true;
        }
        if (n->op == IR_OP_OUTPUT) noutput++;
        if (n->region != IR_NONE && n->region >= g->nregions)
            FAIL("region k%u out of range", n->region);
        if (ok && (ir_op_traits((ir_op)n->op) & IR_T_ELEM) && n->nin) {
            /* elementwise: result shape is the broadcast of the inputs */
            ir_shape s = g->nodes[ir_in(g, n, 0)].shape;
            for (unsigned k = 1; k < n->nin; k++)
                if (!ir_shape_broadcast(&s, &g->nodes[ir_in(g, n, k)].shape, &s))
                    FAIL("inputs do not broadcast");
            if (ok && !ir_shape_eq(&s, &n->shape)) FAIL("shape is not the broadcast of the inputs");
            if ((ir_op_traits((ir_op)n->op) & IR_T_CMP) && n->dtype != IR_BOOL)
                FAIL("comparison not bool");
            if (n->op == IR_OP_WHERE && g->nodes[ir_in(g, n, 0)].dtype != IR_BOOL)
                FAIL("where condition not bool");
            if ((n->op == IR_OP_NOT || n->op == IR_OP_AND || n->op == IR_OP_OR) &&
                n->dtype != IR_BOOL)
                FAIL("boolean op not bool");
            if (n->op == IR_OP_NOT || n->op == IR_OP_AND || n->op == IR_OP_OR)
                for (unsigned k = 0; k < n->nin; k++)
                    if (g->nodes[ir_in(g, n, k)].dtype != IR_BOOL)
                        FAIL("boolean op on a non-bool operand");
        }
        if (ok && n->op == IR_OP_MATMUL) {
            ir_shape s;
            if (!ir_shape_matmul(&g->nodes[ir_in(g, n, 0)].shape, &g->nodes[ir_in(g, n, 1)].shape,
                                 &s) ||
                !ir_shape_eq(&s, &n->shape))
                FAIL("matmul shape");
        }
        if (ok && n->op == IR_OP_PICK) {
            const char *bad = ir_pick_check(g, n);
            if (bad) FAIL("%s", bad);
        }
        if (ok && (ir_op_traits((ir_op)n->op) & IR_T_REDUCE)) {
            const ir_shape *in = &g->nodes[ir_in(g, n, 0)].shape;
            if (n->a.red.axes >> in->rank) FAIL("reduction axis beyond rank");
        }
    }
    i = g->n - 1;
    if (noutput != 1) FAIL("%u output nodes", noutput);
    return ok;
}
