/* dce.c - dead-code elimination: keeps what the output needs, plus every
 * parameter (INPUT nodes keep their index even when unused). */
#include "passes/passes.h"

#include <stdlib.h>

/* Marks every node the output does not reach (and that is no INPUT) with
 * IR_NF_DEAD, then compacts. Keeps topological order and names. Returns
 * true when a node was removed. */
bool pass_dce(ir_graph *g, pass_ctx *c) {
    (void)c;
    if (g->n == 0) return false;
    bool *live = ir_xcalloc(g->n, sizeof *live);
    live[ir_output(g)] = true;
    for (uint32_t i = g->n; i-- > 0;) {
        ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_OUTPUT) live[i] = true;
        if (!live[i]) continue;
        for (unsigned k = 0; k < n->nin; k++) live[ir_in(g, n, k)] = true;
    }
    uint32_t dead = 0;
    for (uint32_t i = 0; i < g->n; i++)
        if (!live[i]) {
            g->nodes[i].flags |= IR_NF_DEAD;
            dead++;
        }
    free(live);
    return dead && ir_compact(g) > 0;
}
