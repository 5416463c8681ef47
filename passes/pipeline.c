/* pipeline.c - the pass table and its driver: runs the passes in order,
 * repeats the cleanup group (fold, simplify, cse, dce) to a bounded fixed
 * point, dumps the IR after the requested stages and, in builds with
 * TX_VERIFY_PASSES, verifies the graph after every pass. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

const pass_def pass_pipeline[] = {
    {"shapes", pass_shapes, "shape and dtype propagation and checking"},
    {"fold", pass_fold, "constant folding of scalar constants and uniform values"},
    {"simplify", pass_simplify, "algebraic identities, cast chains, view chains"},
    {"cse", pass_cse, "common subexpression elimination (hash-consing)"},
    {"dce", pass_dce, "dead-code elimination (parameters are kept)"},
    {"pick", pass_pick_gather, "one-hot sums along a middle axis become gathers"},
    {"split", pass_split, "reductions over strided axes: the contiguous run, then the rest"},
    {"fuse", pass_fuse, "fusion planner: fills the region table"},
    {NULL, NULL, NULL},
};

/* The cleanup group [PIPE_LOOP_FIRST, PIPE_LOOP_LAST] of pass_pipeline is
 * repeated while it changes the graph, at most PIPE_MAX_ROUNDS times. */
enum { PIPE_LOOP_FIRST = 1, PIPE_LOOP_LAST = 4, PIPE_MAX_ROUNDS = 4 };

/* True when `name` is a stage of the pipeline, "all" or "input". */
bool pass_stage_known(const char *name) {
    if (!name) return false;
    if (!strcmp(name, "all") || !strcmp(name, "input")) return true;
    for (const pass_def *p = pass_pipeline; p->name; p++)
        if (!strcmp(p->name, name)) return true;
    return false;
}

/* Writes "# after STAGE" and the IR to c->dump when the dump settings ask
 * for `stage`; does nothing without a dump destination. */
static void dump_after(const ir_graph *g, const pass_ctx *c, const char *stage) {
    if (!c->dump || !c->dump_stage) return;
    if (strcmp(c->dump_stage, "all") && strcmp(c->dump_stage, stage)) return;
    fprintf(c->dump, "# after %s\n", stage);
    ir_print(g, c->dump);
    fflush(c->dump);
}

/* Checks the IR invariants after pass `name` (only with TX_VERIFY_PASSES);
 * on failure reports one internal error naming the pass and the first
 * problem the verifier found, and returns false. */
static bool verify_after(const ir_graph *g, pass_ctx *c, const char *name) {
#ifdef TX_VERIFY_PASSES
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    bool ok = ir_verify(g, m);
    if (m) fclose(m);
    if (!ok) {
        const char *msg = buf && len ? buf : "invalid graph";
        int n = (int)strcspn(msg, "\n");
        tx_error(c->diag, "internal error: the IR is invalid after pass '%s': %.*s", name, n, msg);
    }
    free(buf);
    return ok;
#else
    (void)g, (void)c, (void)name;
    return true;
#endif
}

/* Runs one pass, then verifies and dumps (a repeated run, `again`, is
 * dumped only when it changed the graph). Sets *changed to the pass's
 * answer. Returns false when the pass reported an error or the graph no
 * longer verifies. */
static bool run_one(ir_graph *g, pass_ctx *c, const pass_def *p, bool again, bool *changed) {
    unsigned before = c->diag->errors;
    *changed = p->run(g, c);
    if (c->diag->errors != before) return false;
    if (!verify_after(g, c, p->name)) return false;
    if (!again || *changed) dump_after(g, c, p->name);
    return true;
}

/* Dumps "input", verifies the input graph, runs shapes, the cleanup group
 * to a bounded fixed point, then the rest of the table. Returns false at
 * the first pass that reported an error or left an invalid graph. */
bool pass_run_pipeline(ir_graph *g, pass_ctx *c) {
    dump_after(g, c, "input");
    if (!verify_after(g, c, "input")) return false;
    bool changed = false;
    for (int i = 0; i < PIPE_LOOP_FIRST; i++)
        if (!run_one(g, c, &pass_pipeline[i], false, &changed)) return false;
    for (int round = 0; round < PIPE_MAX_ROUNDS; round++) {
        bool any = false;
        for (int i = PIPE_LOOP_FIRST; i <= PIPE_LOOP_LAST; i++) {
            if (!run_one(g, c, &pass_pipeline[i], round > 0, &changed)) return false;
            any |= changed;
        }
        if (!any) break;
    }
    for (int i = PIPE_LOOP_LAST + 1; pass_pipeline[i].name; i++)
        if (!run_one(g, c, &pass_pipeline[i], false, &changed)) return false;
    return true;
}
