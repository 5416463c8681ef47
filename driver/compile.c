/* compile.c - the compile pipeline (frontend, then the pass pipeline), the
 * one the CLI and the C API share. Contract in driver/driver.h. */
#include "driver/driver.h"

ir_graph *drv_compile(const char *file, const char *src, size_t len, const fe_options *fo,
                      pass_ctx *pc, ir_graph **raw, tx_diag *d) {
    ir_graph *g = fe_compile(file, src, len, fo, d);
    if (raw) *raw = NULL;
    if (!g) return NULL;
    if (raw && (*raw = ir_graph_clone(g)) == NULL) {
        tx_error(d, "out of memory");
        ir_graph_free(g);
        return NULL;
    }
    if (!pass_run_pipeline(g, pc)) {
        ir_graph_free(g);
        if (raw) {
            ir_graph_free(*raw);
            *raw = NULL;
        }
        return NULL;
    }
    return g;
}
