/* tk_compile.h - compile a .tx source to a cg_program in a unit test (include after cmocka.h,
 * frontend/frontend.h, passes/passes.h and codegen/codegen.h; not a test itself). */
#ifndef TX_TK_COMPILE_H
#define TX_TK_COMPILE_H

/* Frontend, the pass pipeline for the h200 model and codegen for target t over src, with the
 * nd -D bindings defs; every step must succeed. *gout gets the planned graph (the caller frees
 * it), or it is freed when gout is NULL. */
static inline cg_program *tk_compile_src(const char *src, cg_target t, const fe_define *defs,
                                         unsigned nd, ir_graph **gout) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_options fo = {.defines = defs, .ndefines = nd};
    ir_graph *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
    assert_true(pass_run_pipeline(g, &pc));
    cg_program *p = cg_program_new(g, t, &d);
    assert_non_null(p);
    if (gout)
        *gout = g;
    else
        ir_graph_free(g);
    return p;
}

/* The first kernel of p that computes a region (not a helper kernel); fails the test if none. */
static inline const cg_kernel *tk_region_kernel(const cg_program *p) {
    for (unsigned k = 0; k < cg_program_nkernels(p); k++)
        if (cg_program_kernel(p, k)->region >= 0) return cg_program_kernel(p, k);
    fail_msg("no region kernel");
    abort(); /* fail_msg does not return */
}

/* The pass pipeline for sm_90a on the h200 model over src with M, N, K bound by -D (unbound
 * when bound is false); every step must succeed. The caller frees the graph. */
static inline ir_graph *tk_plan_mnk(const char *src, int64_t M, int64_t N, int64_t K, bool bound) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_define defs[3] = {{"M", M}, {"N", N}, {"K", K}};
    fe_options fo = {.defines = defs, .ndefines = bound ? 3 : 0};
    ir_graph *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    pass_gpu buf;
    pass_target t = {90, true, false};
    pass_ctx pc = {.diag = &d, .gpu = pass_target_gpu(pass_gpu_find("h200"), t, &buf), .target = t};
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* The first matmul region of g; fails the test if none. */
static inline uint32_t tk_mm_region(const ir_graph *g) {
    for (uint32_t r = 0; r < g->nregions; r++)
        if (g->regions[r].kind == IR_RK_MATMUL) return r;
    fail_msg("no matmul region");
    abort(); /* fail_msg does not return */
}

/* The planner's facts of the first matmul region of src at defs on the h200 model: pass_wg_facts'
 * result, *s filled, *sched the region's schedule. */
static inline bool tk_wg_facts(const char *src, const fe_define *defs, unsigned nd,
                               pass_wg_shape *s, ir_schedule *sched) {
    ir_graph *g;
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, nd, &g);
    cg_program_free(p);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    const pass_gpu *gpu = pass_gpu_find("h200");
    uint32_t r = tk_mm_region(g);
    bool ok = pass_wg_facts(g, &ix, r, gpu, gpu->smem_per_block, s);
    *sched = g->regions[r].sched;
    pass_index_free(&ix);
    ir_graph_free(g);
    return ok;
}

#endif
