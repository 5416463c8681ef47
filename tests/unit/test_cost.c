/* test_cost.c - the cost model: the GPU table, ridge points and the
 * roofline flip, byte and FLOP counting against hand-computed values
 * (relu(x+y) 6N vs 10N, relu(exp(x)) 4N vs 8N in f16), symbolic formulas
 * and JSON nulls, tile-plan formulas, the tile scheduler simulation with
 * hand-checked hit counts, spilled bytes when the budget shrinks, and the instruction-issue term
 * of pointwise kernels (reads through views codegen vectorizes included). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

static void plan(ir_graph *g, bool no_fuse, int64_t budget, const char *gpu) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    pass_ctx c = {.diag = &d, .gpu = pass_gpu_find(gpu), .sram_budget = budget, .no_fuse = no_fuse};
    pass_fuse(g, &c);
    assert_int_equal(d.errors, 0);
}

/* Totals over regions: bytes read + written (+ spilled), flops. */
static void totals(const ir_graph *g, const char *gpu, double *bytes, double *spilled,
                   double *flops) {
    pass_index u;
    assert_true(pass_index_build(g, &u));
    *bytes = *spilled = *flops = 0;
    for (uint32_t r = 0; r < g->nregions; r++) {
        pass_cost pc;
        pass_region_cost_ix(g, &u, r, pass_gpu_find(gpu), &pc);
        assert_true(pc.concrete);
        *bytes += pc.br + pc.bw;
        *spilled += pc.sp;
        *flops += pc.f;
    }
    pass_index_free(&u);
}

/* relu(x + y) or relu(exp(x)) over N elements of dtype dt; N < 0: symbolic. */
static ir_graph *g_unary_chain(bool binary, ir_dtype dt, int64_t n) {
    ir_graph *g = ir_graph_new("chain", NULL);
    ir_shape s = {.rank = 1, .dim = {n >= 0 ? n : IR_DIM_SYM(ir_sym_get(g, "N"))}};
    ir_id x = ir_add_input(g, "x", dt, &s);
    ir_id t = binary ? ir_add_binary(g, IR_OP_ADD, x, ir_add_input(g, "y", dt, &s))
                     : ir_add_unary(g, IR_OP_EXP, x);
    ir_id z = ir_add_unary(g, IR_OP_RELU, t);
    ir_add_output(g, &z, 1);
    return g;
}

static ir_graph *g_matmul(int64_t n, ir_dtype dt) {
    ir_graph *g = ir_graph_new("mm", NULL);
    ir_shape s = {.rank = 2, .dim = {n, n}};
    ir_id a = ir_add_input(g, "a", dt, &s), b = ir_add_input(g, "b", dt, &s);
    ir_id c = ir_add_matmul(g, a, b);
    ir_add_output(g, &c, 1);
    return g;
}

static void test_gpu_table(void **st) {
    (void)st;
    const char *names[] = {"h100", "h200", "a100", "l4", "rtx4090"};
    for (size_t i = 0; i < 5; i++) {
        const pass_gpu *g = pass_gpu_find(names[i]);
        assert_non_null(g);
        assert_string_equal(g->name, names[i]);
        assert_true(g->sms > 0 && g->smem_per_block > 0 && g->smem_per_block <= g->smem_per_sm);
        assert_true(g->hbm_GBps > 0 && g->peak_TFLOPs[IR_BF16] > g->peak_TFLOPs[IR_F32]);
        assert_non_null(strstr(pass_gpu_names(), names[i]));
    }
    assert_null(pass_gpu_find("h300"));
    assert_null(pass_gpu_find(NULL));
    const pass_gpu *h200 = pass_gpu_find("h200");
    assert_int_equal(h200->sms, 132);
    assert_int_equal(h200->smem_per_block, 232448);
    assert_true(h200->hbm_GBps == 4800);
}

static void test_ridge(void **st) {
    (void)st;
    /* 989 TFLOP/s / 3350 GB/s = 295.2 FLOP/B; / 4800 GB/s = 206.0 */
    assert_true(fabs(pass_ridge(pass_gpu_find("h100"), IR_BF16) - 295.2239) < 1e-3);
    assert_true(fabs(pass_ridge(pass_gpu_find("h200"), IR_BF16) - 206.0417) < 1e-3);
    assert_true(fabs(pass_ridge(pass_gpu_find("h200"), IR_F32) - 67e12 / 4800e9) < 1e-9);
    /* at the ridge compute and memory time are equal */
    const pass_gpu *g = pass_gpu_find("h100");
    double r = pass_ridge(g, IR_BF16);
    assert_true(fabs(pass_roofline_us(g, IR_BF16, r * 1e9, 1e9) - 1e9 / 3350e9 * 1e6) < 1e-6);
}

/* A square bf16 matmul of size n has intensity 2n^3 / 6n^2 = n/3 FLOP/B:
 * memory-bound below the ridge, compute-bound above. The ridge of a tensor-core
 * region is at tc_eff (0.30) of the peak: 88.57 FLOP/B on the h100, 61.81 on
 * the h200, so the flip sits near n = 266 and 185. */
static void test_roofline_flip(void **st) {
    (void)st;
    struct {
        const char *gpu;
        int64_t below, above;
    } cases[] = {{"h100", 262, 268}, {"h200", 183, 188}};
    for (size_t i = 0; i < 2; i++) {
        for (int k = 0; k < 2; k++) {
            int64_t n = k ? cases[i].above : cases[i].below;
            ir_graph *g = g_matmul(n, IR_BF16);
            plan(g, false, 0, cases[i].gpu);
            pass_index u;
            assert_true(pass_index_build(g, &u));
            pass_cost pc;
            pass_region_cost_ix(g, &u, 0, pass_gpu_find(cases[i].gpu), &pc);
            assert_true(fabs(pc.intensity - n / 3.0) < 1e-9);
            assert_int_equal(pc.compute_bound, k == 1);
            assert_true(fabs(pc.f - 2.0 * n * n * n) < 0.5);
            assert_true(fabs(pc.br - 4.0 * n * n) < 0.5 && fabs(pc.bw - 2.0 * n * n) < 0.5);
            assert_true(pc.predicted_us > pc.roofline_us);
            assert_true(fabs(pc.peak_TFLOPs - 0.30 * 989.0) < 1e-9);
            pass_index_free(&u);
            ir_graph_free(g);
        }
    }
}

static void test_traffic_hand_computed(void **st) {
    (void)st;
    const double n = 1 << 20;
    double b, sp, f;
    ir_graph *g = g_unary_chain(true, IR_F16, 1 << 20);
    plan(g, false, 0, "h200");
    totals(g, "h200", &b, &sp, &f);
    assert_true(b == 6 * n && sp == 0 && f == 2 * n);
    plan(g, true, 0, "h200");
    totals(g, "h200", &b, &sp, &f);
    assert_true(b == 10 * n);
    ir_graph_free(g);
    g = g_unary_chain(false, IR_F16, 1 << 20);
    plan(g, false, 0, "h200");
    totals(g, "h200", &b, &sp, &f);
    assert_true(b == 4 * n);
    plan(g, true, 0, "h200");
    totals(g, "h200", &b, &sp, &f);
    assert_true(b == 8 * n);
    ir_graph_free(g);
}

/* A kernel that reads one tensor twice counts it once. */
static void test_read_once(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("sq", NULL);
    ir_shape s = {.rank = 1, .dim = {1000}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id y = ir_add_binary(g, IR_OP_MUL, x, x);
    ir_add_output(g, &y, 1);
    plan(g, false, 0, "h200");
    double b, sp, f;
    totals(g, "h200", &b, &sp, &f);
    assert_true(b == 8000);
    ir_graph_free(g);
}

static void test_symbolic_formulas(void **st) {
    (void)st;
    ir_graph *g = g_unary_chain(true, IR_F16, -1);
    plan(g, false, 0, "h200");
    pass_index u;
    assert_true(pass_index_build(g, &u));
    pass_cost pc;
    pass_region_cost_ix(g, &u, 0, pass_gpu_find("h200"), &pc);
    assert_false(pc.concrete);
    char buf[128];
    assert_string_equal(ir_poly_str(g, &pc.bytes_read, buf, sizeof buf), "4*N");
    assert_string_equal(ir_poly_str(g, &pc.bytes_written, buf, sizeof buf), "2*N");
    pass_index_free(&u);
    tx_diag d;
    tx_diag_init(&d, stderr, "t", NULL, 0);
    pass_ctx c = {.diag = &d, .gpu = pass_gpu_find("h200")};
    char *txt = NULL, *js = NULL;
    size_t lt = 0, lj = 0;
    FILE *f = open_memstream(&txt, &lt);
    assert_true(pass_report_text(g, &c, f));
    fclose(f);
    f = open_memstream(&js, &lj);
    assert_true(pass_report_json(g, &c, f));
    fclose(f);
    assert_non_null(strstr(txt, "bytes read 4*N  written 2*N"));
    assert_non_null(strstr(txt, "bytes 6*N (unfused 10*N)"));
    assert_non_null(strstr(js, "\"bytes_read\": null"));
    assert_non_null(strstr(js, "\"unfused_bytes\": null"));
    assert_non_null(strstr(js, "\"predicted_us\": null"));
    free(txt);
    free(js);
    ir_graph_free(g);
}

static void test_json_fields(void **st) {
    (void)st;
    ir_graph *g = g_unary_chain(true, IR_F16, 1 << 20);
    plan(g, false, 0, "h200");
    tx_diag d;
    tx_diag_init(&d, stderr, "t", NULL, 0);
    pass_ctx c = {.diag = &d, .gpu = pass_gpu_find("h200")};
    char *js = NULL;
    size_t lj = 0;
    FILE *f = open_memstream(&js, &lj);
    assert_true(pass_report_json(g, &c, f));
    fclose(f);
    const char *fields[] = {"\"gpu\"",
                            "\"name\": \"h200\"",
                            "\"hbm_GBps\": 4800",
                            "\"peak_TFLOPs\"",
                            "\"f32\": 67",
                            "\"bf16\": 989",
                            "\"sram_bytes\": 232448",
                            "\"kernels\"",
                            "\"kind\": \"pointwise\"",
                            "\"fusion\": [\"vertical\"]",
                            "\"ops\": [\"%2\", \"%3\"]",
                            "\"flops\": 2097152",
                            "\"bytes_read\": 4194304",
                            "\"bytes_written\": 2097152",
                            "\"intensity\"",
                            "\"bound\": \"memory\"",
                            "\"predicted_us\"",
                            "\"spilled_bytes\": 0",
                            "\"totals\"",
                            "\"unfused_kernels\": 2",
                            "\"bytes\": 6291456",
                            "\"unfused_bytes\": 10485760",
                            "\"unfused_predicted_us\""};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!strstr(js, fields[i])) fprintf(stderr, "missing %s in\n%s", fields[i], js);
        assert_non_null(strstr(js, fields[i]));
    }
    free(js);
    ir_graph_free(g);
}

static void test_tile_formulas(void **st) {
    (void)st;
    assert_int_equal(pass_matmul_sram(128, 128, 64, 1, 2, 3), (128 * 64 + 64 * 128) * 2 * 3);
    assert_int_equal(pass_matmul_sram(128, 128, 64, 2, 2, 3), (128 * 64 + 2 * 64 * 128) * 2 * 3);
    assert_int_equal(pass_attention_sram(128, 64, 128, 128, 2, 2),
                     128 * 128 * 2 + 2 * 64 * 256 * 2 + 128 * 64 * 4);
    int64_t bq, bkv;
    int st2;
    assert_true(pass_attention_fit(128, 128, 2, 232448, &bq, &bkv, &st2));
    assert_true(bq == 128 && bkv == 64 && st2 == 2);
    assert_true(pass_attention_fit(128, 128, 2, 40000, &bq, &bkv, &st2));
    assert_true(pass_attention_sram(bq, bkv, 128, 128, 2, st2) <= 40000);
    assert_false(pass_attention_fit(128, 128, 2, 1000, &bq, &bkv, &st2));
    /* the planned matmul shrinks its tiles on a small GPU budget */
    ir_graph *g = g_matmul(1024, IR_F32);
    plan(g, false, 0, "l4");
    assert_true(g->regions[0].sram_bytes <= 101376);
    assert_int_equal(g->regions[0].sram_bytes,
                     pass_matmul_sram(g->regions[0].tile[0], g->regions[0].tile[1],
                                      g->regions[0].tile[2], 1, 4, g->regions[0].stages));
    ir_graph_free(g);
}

/* Hand-checked: a 2x2 grid, 2 k-steps, one A and one B tile per step.
 * Wave 4: A tiles (i, k) distinct 2 per step -> 4 misses, B likewise -> 4;
 * 16 requests -> 8 hits. Wave 2: waves {0,1}, {2,3}: A 1+1 per step -> 4,
 * B 2+2 per step -> 8: 12 misses, 4 hits. Wave 1: every request misses. */
static void test_scheduler(void **st) {
    (void)st;
    pass_sched s;
    pass_sched_matmul(2, 2, 1, 2, 1, 4, &s);
    assert_true(s.concrete);
    assert_int_equal(s.grid, 4);
    assert_int_equal(s.tiles_per_program, 4);
    assert_int_equal(s.misses, 8);
    assert_int_equal(s.hits, 8);
    pass_sched_matmul(2, 2, 1, 2, 1, 2, &s);
    assert_int_equal(s.misses, 12);
    assert_int_equal(s.hits, 4);
    pass_sched_matmul(2, 2, 1, 2, 1, 1, &s);
    assert_int_equal(s.misses, 16);
    assert_int_equal(s.hits, 0);
    /* two batch entries in one wave share nothing across batches */
    pass_sched_matmul(1, 2, 2, 3, 1, 4, &s);
    assert_int_equal(s.misses, (2 + 4) * 3);
    assert_int_equal(s.hits, 4 * 6 - 18);
    /* deterministic: the same call gives the same counts */
    pass_sched t;
    pass_sched_matmul(7, 5, 3, 4, 1, 9, &s);
    pass_sched_matmul(7, 5, 3, 4, 1, 9, &t);
    assert_memory_equal(&s, &t, sizeof s);
    assert_int_equal(s.hits + s.misses, s.grid * s.tiles_per_program);
    /* The largest grid simulated (2^26 programs: 1 x 2^25 tiles x 2 batches), counted per run of
     * programs rather than per program (a fuzz input with N = 4111111111 took 13 s here before):
     * waves of 2^20 stay inside one batch, so each touches 1 A row and 2^20 B columns. */
    pass_sched_matmul(1, 1LL << 25, 2, 1, 1, 1LL << 20, &s);
    assert_true(s.concrete);
    assert_int_equal(s.grid, 1LL << 26);
    assert_int_equal(s.misses, 64 + (1LL << 26));
    assert_int_equal(s.hits, (1LL << 26) - 64);
    pass_sched_matmul(1, (1LL << 25) + 1, 2, 1, 1, 1LL << 20, &s); /* beyond 2^26: not simulated */
    assert_false(s.concrete);
}

/* Shrinking the budget below a softmax row's need moves bytes back to HBM. */
static void test_spill_on_small_budget(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("softmax", NULL);
    ir_shape s = {.rank = 2, .dim = {128, 8192}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id m = ir_add_reduce(g, IR_OP_MAX, x, 2, true);
    ir_id e = ir_add_unary(g, IR_OP_EXP, ir_add_binary(g, IR_OP_SUB, x, m));
    ir_id y = ir_add_binary(g, IR_OP_DIV, e, ir_add_reduce(g, IR_OP_SUM, e, 2, true));
    ir_add_output(g, &y, 1);
    double b0, sp0, f0, b1, sp1, f1;
    plan(g, false, 0, "h200");
    totals(g, "h200", &b0, &sp0, &f0);
    assert_true(sp0 == 0);
    int64_t need = g->regions[0].sram_bytes;
    assert_int_equal(need, 8192 * 4 + 64);
    plan(g, false, need - 1, "h200");
    totals(g, "h200", &b1, &sp1, &f1);
    assert_true(b1 == b0 && f1 == f0);
    assert_true(sp1 == 128.0 * 8192 * 4);
    assert_true(g->regions[0].sram_bytes <= need - 1);
    ir_graph_free(g);
}

/* The instruction-issue term of pointwise kernels (docs/cost-model.md "Instruction issue"):
 * relu(exp(x)) in f32 issues exp 9 + relu 2 + (4 + 2 x 2 buffers) / 4 = 13 instructions per
 * element, under the memory time at 2^26 elements; a chain of 16 tanh issues 322 and is
 * issue-bound: 2^26 x 322 / (132 x 128 x 1.98e3) us. */
static void test_issue_term(void **st) {
    (void)st;
    const pass_gpu *h = pass_gpu_find("h200");
    int64_t n = 1 << 26;
    for (int k = 0; k < 2; k++) {
        ir_graph *g;
        if (k == 0) {
            g = g_unary_chain(false, IR_F32, n);
        } else {
            g = ir_graph_new("tanh16", NULL);
            ir_shape s = {.rank = 1, .dim = {n}};
            ir_id x = ir_add_input(g, "x", IR_F32, &s);
            for (int i = 0; i < 16; i++) x = ir_add_unary(g, IR_OP_TANH, x);
            ir_add_output(g, &x, 1);
        }
        plan(g, false, 0, "h200");
        assert_int_equal(g->nregions, 1);
        pass_index u;
        assert_true(pass_index_build(g, &u));
        pass_cost pc;
        pass_region_cost_ix(g, &u, 0, h, &pc);
        pass_model m;
        pass_model_region(g, &u, 0, h, &pc, &m);
        double want = k == 0 ? 13.0 : 16 * 20.0 + 2.0;
        double issue = (double)n * want / (132 * 128.0 * 1.98e3);
        assert_true(fabs(m.instr - want) < 1e-9);
        assert_true(fabs(m.issue_us - issue) < 1e-6);
        if (k == 0) assert_true(m.time_us > m.issue_us); /* memory-bound */
        if (k == 1) assert_true(fabs(m.time_us - issue) < 1e-6);
        pass_index_free(&u);
        ir_graph_free(g);
    }
}

/* Rotary's half rotation of q bf16 [2, 16, 4, d] by cos and sin bf16 [16, 4, d / 2]:
 * bf16(concat((x1 * c - x2 * s, x2 * c + x1 * s), axis=-1)), x1 and x2 the f32 halves of q. */
static ir_graph *g_rotary(int64_t d) {
    ir_graph *g = ir_graph_new("rotary", NULL);
    ir_shape qs = {.rank = 4, .dim = {2, 16, 4, d}}, cs = {.rank = 3, .dim = {16, 4, d / 2}};
    ir_id q = ir_add_input(g, "q", IR_BF16, &qs);
    ir_id c = ir_add_cast(g, ir_add_input(g, "c", IR_BF16, &cs), IR_F32);
    ir_id s = ir_add_cast(g, ir_add_input(g, "s", IR_BF16, &cs), IR_F32);
    ir_id x1 = ir_add_cast(g, ir_add_slice(g, q, 3, 0, d / 2), IR_F32);
    ir_id x2 = ir_add_cast(g, ir_add_slice(g, q, 3, d / 2, d), IR_F32);
    ir_id h[2] = {ir_add_binary(g, IR_OP_SUB, ir_add_binary(g, IR_OP_MUL, x1, c),
                                ir_add_binary(g, IR_OP_MUL, x2, s)),
                  ir_add_binary(g, IR_OP_ADD, ir_add_binary(g, IR_OP_MUL, x2, c),
                                ir_add_binary(g, IR_OP_MUL, x1, s))};
    ir_id y = ir_add_cast(g, ir_add_concat(g, h, 2, 3), IR_BF16);
    ir_add_output(g, &y, 1);
    return g;
}

/* The pointwise count of reads through views codegen vectorizes (passes/vecview.c; docs/cost-
 * model.md "Instruction issue"): at d = 64 (groups of 8 bf16) the concat along the innermost axis
 * and both halves of q keep every group whole and cos and sin are row-broadcast: q is two vector
 * loads (a start each), c and s one each, 1 + 2/8 per element each like the store; the casts,
 * products and sums 11; the group's addressing 4/8; the split of each group's first element over
 * [2, 16, 4, 64] once a group, 6/8: 18.5 per element (30.75 when the views were scalar reads).
 * At d = 60 the halves of 30 are no whole groups: scalar reads of 2 + 1 (the bf16 conversion)
 * per element and the per-element split of [2, 16, 4, 60] (2 + 2 + 4): 32.75. */
static void test_vec_views(void **st) {
    (void)st;
    const pass_gpu *h = pass_gpu_find("h200");
    for (int k = 0; k < 2; k++) {
        ir_graph *g = g_rotary(k == 0 ? 64 : 60);
        plan(g, false, 0, "h200");
        assert_int_equal(g->nregions, 1);
        pass_index u;
        assert_true(pass_index_build(g, &u));
        pass_pw_issue o;
        pass_model_pw_issue(g, &u, 0, 2, &o);
        if (k == 0) {
            assert_int_equal(o.nvec, 5);
            assert_false(o.comps);
            assert_true(o.gcomps);
            assert_true(fabs(o.div - 0.75) < 1e-9);
            assert_true(fabs(o.flat - 18.5) < 1e-9);
        } else {
            assert_int_equal(o.nvec, 1);
            assert_true(o.comps);
            assert_true(fabs(o.div - 8.0) < 1e-9);
            assert_true(fabs(o.flat - 32.75) < 1e-9);
        }
        pass_cost pc;
        pass_region_cost_ix(g, &u, 0, h, &pc);
        pass_model m;
        pass_model_region(g, &u, 0, h, &pc, &m);
        assert_true(fabs(m.instr - o.flat) < 1e-9);
        pass_index_free(&u);
        ir_graph_free(g);
    }
}

/* The view facts codegen's vector paths and the model share (passes/vecview.c), groups of 8. */
static void test_vec_view_facts(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("views", NULL);
    ir_shape xs = {.rank = 2, .dim = {6, 64}}, ys = {.rank = 2, .dim = {6, 12}};
    ir_id x = ir_add_input(g, "x", IR_BF16, &xs), y = ir_add_input(g, "y", IR_BF16, &ys);
    const ir_node *n = &g->nodes[ir_add_slice(g, x, 1, 8, 24)];
    assert_true(pass_vec_slice(g, n, 8));
    assert_false(pass_vec_slice(g, n, 0));
    assert_false(pass_vec_slice(g, &g->nodes[ir_add_slice(g, x, 1, 4, 20)], 8)); /* start 4 */
    assert_false(pass_vec_slice(g, &g->nodes[ir_add_slice(g, x, 1, 0, 12)], 8)); /* 12 wide */
    assert_true(pass_vec_slice(g, &g->nodes[ir_add_slice(g, x, 0, 1, 4)], 8));   /* outer axis */
    assert_false(pass_vec_slice(g, &g->nodes[ir_add_slice(g, y, 0, 1, 4)], 8));  /* rows of 12 */
    ir_id xx[2] = {x, x}, xy[2] = {x, y};
    assert_true(pass_vec_concat(g, &g->nodes[ir_add_concat(g, xx, 2, 1)], 8));
    assert_false(pass_vec_concat(g, &g->nodes[ir_add_concat(g, xy, 2, 1)], 8)); /* 64 + 12 */
    assert_true(pass_vec_concat(g, &g->nodes[ir_add_concat(g, xx, 2, 0)], 8));
    ir_shape s = {.rank = 3, .dim = {4, 6, 64}}, t = {.rank = 1, .dim = {64}};
    ir_shape o = {.rank = 3, .dim = {4, 1, 64}}, r = {.rank = 3, .dim = {4, 6, 1}};
    ir_shape l = {.rank = 2, .dim = {1, 12}}, sl = {.rank = 2, .dim = {5, 12}};
    assert_int_equal(pass_vec_bcast(&s, &t, 8), PASS_VB_TRAILING);
    assert_int_equal(pass_vec_bcast(&s, &xs, 8), PASS_VB_TRAILING);
    assert_int_equal(pass_vec_bcast(&s, &o, 8), PASS_VB_OUTER);
    assert_int_equal(pass_vec_bcast(&s, &r, 8), PASS_VB_NONE);  /* along the innermost axis */
    assert_int_equal(pass_vec_bcast(&sl, &l, 8), PASS_VB_NONE); /* 12 elements */
    assert_int_equal(pass_vec_bcast(&sl, &l, 4), PASS_VB_TRAILING);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_table),      cmocka_unit_test(test_ridge),
        cmocka_unit_test(test_roofline_flip),  cmocka_unit_test(test_traffic_hand_computed),
        cmocka_unit_test(test_read_once),      cmocka_unit_test(test_symbolic_formulas),
        cmocka_unit_test(test_json_fields),    cmocka_unit_test(test_tile_formulas),
        cmocka_unit_test(test_scheduler),      cmocka_unit_test(test_spill_on_small_budget),
        cmocka_unit_test(test_issue_term),     cmocka_unit_test(test_vec_views),
        cmocka_unit_test(test_vec_view_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
