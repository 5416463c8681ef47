/* test_pass_pipeline.c - the pass table and its driver: stage names, the
 * dumps after the requested stages (captured with open_memstream), the
 * bounded repetition of the cleanup group, stopping on errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

typedef struct fixture {
    char *dbuf, *ebuf;
    size_t dlen, elen;
    FILE *dump, *err;
    tx_diag diag;
    pass_ctx ctx;
} fixture;

/* Dumps and diagnostics go to memory; `stage` as --dump-ir=stage. */
static void fixture_init(fixture *f, const char *stage) {
    memset(f, 0, sizeof *f);
    f->dump = open_memstream(&f->dbuf, &f->dlen);
    f->err = open_memstream(&f->ebuf, &f->elen);
    assert_true(f->dump && f->err);
    tx_diag_init(&f->diag, f->err, "test", NULL, 0);
    f->ctx = (pass_ctx){
        .diag = &f->diag, .dump = f->dump, .dump_stage = stage, .gpu = pass_gpu_find("h200")};
}
static const char *dump_text(fixture *f) {
    fflush(f->dump);
    return f->dbuf ? f->dbuf : "";
}
static const char *err_text(fixture *f) {
    fflush(f->err);
    return f->ebuf ? f->ebuf : "";
}
static void fixture_done(fixture *f) {
    fclose(f->dump);
    fclose(f->err);
    free(f->dbuf);
    free(f->ebuf);
}

/* The "# after STAGE" headers of a dump, space-separated, into buf. */
static const char *headers(const char *dump, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = 0;
    for (const char *p = dump; (p = strstr(p, "# after ")); p++) {
        if (p != dump && p[-1] != '\n') continue;
        p += 8;
        size_t n = strcspn(p, "\n");
        k += (size_t)snprintf(buf + k, cap - k, "%s%.*s", k ? " " : "", (int)n, p);
        if (k >= cap) break;
    }
    return buf;
}

/* x: f32[4]; y = x + (2 + 3): fold changes round one, nothing changes in
 * round two. */
static ir_graph *graph_fold_once(void) {
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = {.rank = 1, .dim = {4}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id two = ir_add_const(g, 2, IR_F32);
    ir_id three = ir_add_const(g, 3, IR_F32);
    ir_id k = ir_add_binary(g, IR_OP_ADD, two, three);
    ir_id y = ir_add_binary(g, IR_OP_ADD, x, k);
    ir_add_output(g, &y, 1);
    return g;
}

static void test_stage_names(void **state) {
    (void)state;
    const char *known[] = {"all", "input", "shapes", "fold", "simplify",
                           "cse", "dce",   "split",  "fuse"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        assert_true(pass_stage_known(known[i]));
    assert_false(pass_stage_known("bogus"));
    assert_false(pass_stage_known(""));
    assert_false(pass_stage_known(NULL));
    const char *order[] = {"shapes", "fold", "simplify", "cse", "dce", "pick", "split", "fuse"};
    size_t n = 0;
    for (const pass_def *p = pass_pipeline; p->name; p++, n++) {
        assert_true(n < 8);
        assert_string_equal(p->name, order[n]);
        assert_non_null(p->run);
        assert_non_null(p->what);
    }
    assert_int_equal(n, 8);
}

/* --dump-ir=all: one dump per stage in order; the repeated round changed
 * nothing, so it dumps nothing. */
static void test_dump_all(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, "all");
    ir_graph *g = graph_fold_once();
    assert_true(pass_run_pipeline(g, &f.ctx));
    char hb[512];
    assert_string_equal(headers(dump_text(&f), hb, sizeof hb),
                        "input shapes fold simplify cse dce pick split fuse");
    assert_string_equal(err_text(&f), "");
    assert_true(ir_verify(g, stderr));
    ir_graph_free(g);
    fixture_done(&f);
}

/* --dump-ir=fold shows the graph right after folding; input shows the
 * graph before any pass. */
static void test_dump_one_stage(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, "fold");
    ir_graph *g = graph_fold_once();
    assert_true(pass_run_pipeline(g, &f.ctx));
    const char *d = dump_text(&f);
    assert_true(!strncmp(d, "# after fold\ngraph t {\n", 23));
    assert_non_null(strstr(d, "= const 5 : f32[]"));
    assert_non_null(strstr(d, "= const 2 : f32[]")); /* dce has not run yet */
    char hb[128];
    assert_string_equal(headers(d, hb, sizeof hb), "fold");
    ir_graph_free(g);
    fixture_done(&f);

    fixture_init(&f, "input");
    g = graph_fold_once();
    assert_true(pass_run_pipeline(g, &f.ctx));
    d = dump_text(&f);
    assert_string_equal(headers(d, hb, sizeof hb), "input");
    assert_non_null(strstr(d, "%3 = add %1, %2 : f32[]"));
    ir_graph_free(g);
    fixture_done(&f);
}

/* No dump stream or no stage: nothing is written. */
static void test_no_dump(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, NULL);
    ir_graph *g = graph_fold_once();
    assert_true(pass_run_pipeline(g, &f.ctx));
    assert_string_equal(dump_text(&f), "");
    ir_graph_free(g);
    f.ctx.dump = NULL;
    f.ctx.dump_stage = "all";
    g = graph_fold_once();
    assert_true(pass_run_pipeline(g, &f.ctx));
    ir_graph_free(g);
    fixture_done(&f);
}

/* sum(x * 0) on i32: simplify turns x*0 into broadcast_to(0) in round one,
 * fold folds the sum in round two (cse then merges the two zeros); only
 * the stages that changed something are dumped again. */
static void test_fixed_point(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, "all");
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = {.rank = 2, .dim = {2, 3}};
    ir_id x = ir_add_input(g, "x", IR_I32, &s);
    ir_id m = ir_add_binary(g, IR_OP_MUL, x, ir_add_const(g, 0, IR_I32));
    ir_id r = ir_add_reduce(g, IR_OP_SUM, m, 3u, false);
    ir_add_output(g, &r, 1);
    assert_true(pass_run_pipeline(g, &f.ctx));
    char hb[512];
    assert_string_equal(headers(dump_text(&f), hb, sizeof hb),
                        "input shapes fold simplify cse dce fold cse dce pick split fuse");
    assert_int_equal(g->n, 3); /* x, const 0, output */
    assert_int_equal(g->nodes[1].op, IR_OP_CONST);
    assert_true(g->nodes[1].a.cval == 0.0);
    assert_int_equal(ir_in(g, &g->nodes[2], 0), 1);
    ir_graph_free(g);
    fixture_done(&f);
}

/* A pass that reports an error stops the pipeline: nothing after it runs. */
static void test_stops_on_error(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, "all");
    ir_graph *g = graph_fold_once();
    g->nodes[4].dtype = IR_F16; /* the add claims f16 */
    assert_false(pass_run_pipeline(g, &f.ctx));
    char hb[128];
    assert_string_equal(headers(dump_text(&f), hb, sizeof hb), "input");
    assert_non_null(strstr(err_text(&f), "internal error: shapes: %4 = add"));
    ir_graph_free(g);
    fixture_done(&f);
}

#ifdef TX_VERIFY_PASSES
/* An invalid graph is caught by the verifier, naming the stage. */
static void test_verifier_names_stage(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, NULL);
    ir_graph *g = graph_fold_once();
    ir_set_in(g, &g->nodes[3], 1, 4); /* forward reference */
    assert_false(pass_run_pipeline(g, &f.ctx));
    assert_non_null(strstr(err_text(&f),
                           "txc: error: internal error: the IR is invalid after pass 'input': "
                           "ir verify: %3: input 1 (%4) breaks topological order\n"));
    ir_graph_free(g);
    fixture_done(&f);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage_names),          cmocka_unit_test(test_dump_all),
        cmocka_unit_test(test_dump_one_stage),       cmocka_unit_test(test_no_dump),
        cmocka_unit_test(test_fixed_point),          cmocka_unit_test(test_stops_on_error),
#ifdef TX_VERIFY_PASSES
        cmocka_unit_test(test_verifier_names_stage),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
