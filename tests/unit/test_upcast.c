/* test_upcast.c - [matmul.exact_upcast] (passes/upcast.c): f32(a) @ f32(b) of one 16-bit dtype
 * becomes a @ b with 16-bit operands and an f32 product, planned on the tensor cores (wgmma, FA3);
 * not when an operand is f32, the casts are of f16 and bf16 mixed, or of i32; TX_EXACT_UPCAST=0
 * keeps the f32 product on the CUDA cores. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/frontend.h"
#include "passes/passes.h"

/* The pass pipeline for sm_90a on the h200 model over src with the nd bindings defs; every step
 * must succeed. The caller frees the graph. */
static ir_graph *plan(const char *src, const fe_define *defs, unsigned nd) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_options fo = {.defines = defs, .ndefines = nd};
    ir_graph *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    pass_gpu buf;
    pass_target t = {90, true, false};
    pass_ctx pc = {.diag = &d, .gpu = pass_target_gpu(pass_gpu_find("h200"), t, &buf), .target = t};
    assert_true(pass_run_pipeline(g, &pc));
    assert_int_equal(d.errors, 0);
    return g;
}

/* The k-th matmul node of g (in order); fails the test if there are fewer. */
static const ir_node *nth_matmul(const ir_graph *g, unsigned k) {
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_MATMUL && k-- == 0) return &g->nodes[i];
    fail_msg("no matmul %u", k);
    abort(); /* fail_msg does not return */
}

static ir_dtype in_dtype(const ir_graph *g, const ir_node *n, unsigned k) {
    return (ir_dtype)g->nodes[ir_in(g, n, k)].dtype;
}

/* Whether g holds a cast to dt. */
static bool has_cast_to(const ir_graph *g, ir_dtype dt) {
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_CAST && g->nodes[i].dtype == dt) return true;
    return false;
}

static const char *const GEMM_BF16 = "fn f(x: bf16[M, K], w: bf16[K, N]) -> f32[M, N] {\n"
                                     "  return f32(x) @ f32(w)\n}\n";
static const fe_define MNK[3] = {{"M", 512}, {"N", 512}, {"K", 512}};

/* bf16 both sides: a bf16 x bf16 product of dtype f32 on the wgmma kernel; no bf16 rounding. */
static void test_bf16_gemm_taken(void **state) {
    (void)state;
    ir_graph *g = plan(GEMM_BF16, MNK, 3);
    const ir_node *mm = nth_matmul(g, 0);
    assert_int_equal(mm->dtype, IR_F32);
    assert_int_equal(in_dtype(g, mm, 0), IR_BF16);
    assert_int_equal(in_dtype(g, mm, 1), IR_BF16);
    assert_int_equal(pass_mm_tc_dtype(g, mm), IR_BF16);
    assert_false(has_cast_to(g, IR_BF16));
    assert_int_equal(g->regions[mm->region].sched.id, PASS_SCH_MATMUL_WGMMA);
    ir_graph_free(g);
}

/* f16 both sides, the weight transposed behind its cast: the view is rebuilt on the f16 input. */
static void test_f16_transposed_taken(void **state) {
    (void)state;
    const char *src = "fn f(x: f16[M, K], w: f16[N, K]) -> f32[M, N] {\n"
                      "  return f32(x) @ transpose(f32(w), 0, 1)\n}\n";
    ir_graph *g = plan(src, MNK, 3);
    const ir_node *mm = nth_matmul(g, 0);
    assert_int_equal(mm->dtype, IR_F32);
    assert_int_equal(in_dtype(g, mm, 0), IR_F16);
    assert_int_equal(in_dtype(g, mm, 1), IR_F16);
    assert_int_equal(g->nodes[ir_in(g, mm, 1)].op, IR_OP_PERMUTE);
    assert_int_equal(g->regions[mm->region].sched.id, PASS_SCH_MATMUL_WGMMA);
    ir_graph_free(g);
}

/* Phi-2's scores on q and k upcast to f32 (bf16 and f16): f32 scores of 16-bit q and k^T, and
 * the attention region runs on FA3. */
static void attention_taken(const char *dt) {
    char src[512];
    snprintf(src, sizeof src,
             "fn f(q: %s[B, H, S, 80], k: %s[B, H, S, 80], v: %s[B, H, S, 80]) -> %s[B, H, S, 80] "
             "{\n  s = (f32(q) @ transpose(f32(k), 2, 3)) / 8.94427190999916\n"
             "  c = iota((S, S), axis=0) >= iota((S, S), axis=1)\n"
             "  return %s(softmax(where(c, s, -inf), axis=-1)) @ v\n}\n",
             dt, dt, dt, dt, dt);
    const fe_define defs[3] = {{"B", 2}, {"H", 4}, {"S", 1024}};
    ir_graph *g = plan(src, defs, 3);
    const ir_node *m1 = nth_matmul(g, 0);
    ir_dtype want = strcmp(dt, "bf16") ? IR_F16 : IR_BF16;
    assert_int_equal(m1->dtype, IR_F32);
    assert_int_equal(in_dtype(g, m1, 0), want);
    assert_int_equal(in_dtype(g, m1, 1), want);
    assert_int_equal(g->regions[m1->region].kind, IR_RK_ATTENTION);
    char why[256];
    assert_true(pass_attention_fa3(g, m1->region, NULL, why, sizeof why));
    assert_false(pass_attention_simt(g, m1->region));
    ir_graph_free(g);
}

static void test_attention_bf16_taken(void **state) {
    (void)state;
    attention_taken("bf16");
}

static void test_attention_f16_taken(void **state) {
    (void)state;
    attention_taken("f16");
}

/* One operand f32, casts of f16 and bf16 mixed, casts of i32: the f32 product of f32 operands
 * stays (exact f32 on the CUDA cores). */
static void test_not_taken(void **state) {
    (void)state;
    const char *src =
        "fn f(x: bf16[M, K], w: f32[K, N], h: f16[K, N], i: i32[M, K], j: i32[K, N]) -> "
        "(f32[M, N], f32[M, N], f32[M, N]) {\n"
        "  return f32(x) @ w, f32(x) @ f32(h), f32(i) @ f32(j)\n}\n";
    ir_graph *g = plan(src, MNK, 3);
    for (unsigned k = 0; k < 3; k++) {
        const ir_node *mm = nth_matmul(g, k);
        assert_int_equal(mm->dtype, IR_F32);
        assert_int_equal(in_dtype(g, mm, 0), IR_F32);
        assert_int_equal(in_dtype(g, mm, 1), IR_F32);
        assert_int_equal(pass_mm_tc_dtype(g, mm), IR_F32);
        assert_int_equal(g->regions[mm->region].sched.id, PASS_SCH_MATMUL_SIMT);
    }
    ir_graph_free(g);
}

/* TX_EXACT_UPCAST=0: the rule is off and the product stays on f32 operands. */
static void test_knob_off(void **state) {
    (void)state;
    setenv("TX_EXACT_UPCAST", "0", 1);
    ir_graph *g = plan(GEMM_BF16, MNK, 3);
    unsetenv("TX_EXACT_UPCAST");
    const ir_node *mm = nth_matmul(g, 0);
    assert_int_equal(in_dtype(g, mm, 0), IR_F32);
    assert_int_equal(g->regions[mm->region].sched.id, PASS_SCH_MATMUL_SIMT);
    ir_graph_free(g);
}

/* pass_mm_tc_dtype: a 16-bit product of its own dtype's operands, an f32 product of one 16-bit
 * dtype, and mixed operands. */
static void test_tc_dtype(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("t", "t.tx");
    ir_shape s = {.rank = 2, .dim = {4, 4}};
    ir_id a = ir_add_input(g, "a", IR_BF16, &s), b = ir_add_input(g, "b", IR_BF16, &s);
    ir_id c = ir_add_input(g, "c", IR_F16, &s);
    ir_id ins[2] = {a, b}, mix[2] = {a, c};
    ir_id m16 = ir_add_matmul(g, a, b);
    ir_id m32 = ir_add(g, IR_OP_MATMUL, IR_F32, &s, ins, 2);
    ir_id mx = ir_add(g, IR_OP_MATMUL, IR_F32, &s, mix, 2);
    assert_int_equal(pass_mm_tc_dtype(g, &g->nodes[m16]), IR_BF16);
    assert_int_equal(pass_mm_tc_dtype(g, &g->nodes[m32]), IR_BF16);
    assert_int_equal(pass_mm_tc_dtype(g, &g->nodes[mx]), IR_F32);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_gemm_taken),
        cmocka_unit_test(test_f16_transposed_taken),
        cmocka_unit_test(test_attention_bf16_taken),
        cmocka_unit_test(test_attention_f16_taken),
        cmocka_unit_test(test_not_taken),
        cmocka_unit_test(test_knob_off),
        cmocka_unit_test(test_tc_dtype),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
