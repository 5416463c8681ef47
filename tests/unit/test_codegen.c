/* test_codegen.c - codegen for every target: kernels present in the PTX,
 * no unresolved intrinsics, vector loads for a pointwise f32 kernel,
 * manifest and launch geometry, and the accuracy of the math functions
 * (host JIT) against double-precision libm over sweeps, in ulps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "driver/driver.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

/* Plans g with the pipeline (fused). */
static void plan(ir_graph *g, bool no_fuse) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200"), .no_fuse = no_fuse};
    assert_true(pass_run_pipeline(g, &pc));
}

/* relu(x + y) * b over x, y: f32[M, N], b: f32[N] built with ir_add_*. */
static ir_graph *build_pointwise(void) {
    ir_graph *g = ir_graph_new("pw", NULL);
    ir_shape s = {2, {IR_DIM_SYM(ir_sym_get(g, "M")), IR_DIM_SYM(ir_sym_get(g, "N"))}};
    ir_shape sb = {1, {s.dim[1]}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id y = ir_add_input(g, "y", IR_F32, &s);
    ir_id b = ir_add_input(g, "b", IR_F32, &sb);
    ir_id r = ir_add_unary(g, IR_OP_RELU, ir_add_binary(g, IR_OP_ADD, x, y));
    ir_id o = ir_add_binary(g, IR_OP_MUL, r, b);
    ir_add_output(g, &o, 1);
    return g;
}

/* Row softmax over bf16[M, N] built with ir_add_*. */
static ir_graph *build_softmax(void) {
    ir_graph *g = ir_graph_new("sm", NULL);
    ir_shape s = {2, {IR_DIM_SYM(ir_sym_get(g, "M")), IR_DIM_SYM(ir_sym_get(g, "N"))}};
    ir_id x = ir_add_cast(g, ir_add_input(g, "x", IR_BF16, &s), IR_F32);
    ir_id m = ir_add_reduce(g, IR_OP_MAX, x, 2u, true);
    ir_id e = ir_add_unary(g, IR_OP_EXP, ir_add_binary(g, IR_OP_SUB, x, m));
    ir_id z = ir_add_reduce(g, IR_OP_SUM, e, 2u, true);
    ir_id o = ir_add_cast(g, ir_add_binary(g, IR_OP_DIV, e, z), IR_BF16);
    ir_add_output(g, &o, 1);
    return g;
}

/* Compiles g for target t and checks the PTX: an .entry per kernel and no
 * .extern .func; returns the program (caller frees). */
static cg_program *compile_check(const ir_graph *g, cg_target t) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    cg_program *p = cg_program_new(g, t, &d);
    assert_non_null(p);
    assert_true(cg_program_nkernels(p) >= 1);
    if (t == CG_HOST) {
        assert_null(cg_program_ptx(p, NULL));
        return p;
    }
    size_t len = 0;
    const char *ptx = cg_program_ptx(p, &len);
    assert_non_null(ptx);
    assert_int_equal(strlen(ptx), len);
    assert_null(strstr(ptx, ".extern .func"));
    assert_non_null(strstr(ptx, ".version 8.0"));
    char want[64];
    snprintf(want, sizeof want, ".target %s", cg_target_name(t));
    assert_non_null(strstr(ptx, want));
    for (unsigned k = 0; k < cg_program_nkernels(p); k++) {
        char e[256];
        snprintf(e, sizeof e, ".entry %s(", cg_program_kernel(p, k)->name);
        assert_non_null(strstr(ptx, e));
    }
    return p;
}

static void test_targets(void **s) {
    (void)s;
    assert_int_equal(cg_target_parse("sm_90a"), CG_SM90A);
    assert_int_equal(cg_target_parse("host"), CG_HOST);
    assert_int_equal(cg_target_parse("sm_70"), -1);
    assert_string_equal(cg_target_name(CG_SM86), "sm_86");
    ir_graph *gs[2] = {build_pointwise(), build_softmax()};
    for (int i = 0; i < 2; i++) {
        plan(gs[i], false);
        for (int t = 0; t < CG_NTARGETS; t++) cg_program_free(compile_check(gs[i], (cg_target)t));
        ir_graph_free(gs[i]);
    }
}

static void test_vector_loads(void **s) {
    (void)s;
    ir_graph *g = build_pointwise();
    plan(g, false);
    cg_program *p = compile_check(g, CG_SM90);
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "ld.global.nc.v4.f32"));
    assert_non_null(strstr(ptx, "st.global.v4.f32"));
    cg_program_free(p);
    ir_graph_free(g);
}

static void test_manifest(void **s) {
    (void)s;
    ir_graph *g = build_softmax();
    plan(g, true); /* unfused: several kernels and temps */
    cg_program *p = compile_check(g, CG_SM80);
    assert_true(cg_program_nkernels(p) >= 3);
    assert_true(cg_program_ntemps(p) >= 1);
    const cg_kernel *k0 = cg_program_kernel(p, 0);
    assert_int_equal(k0->nsyms, 2);
    assert_int_equal(k0->bufs[0].kind, CG_BUF_INPUT);
    const cg_kernel *kl = cg_program_kernel(p, cg_program_nkernels(p) - 1);
    assert_int_equal(kl->bufs[kl->nbufs - 1].kind, CG_BUF_OUTPUT);
    int64_t syms[2] = {1000, 4096};
    unsigned grid[3], block[3], smem;
    for (unsigned k = 0; k < cg_program_nkernels(p); k++) {
        assert_true(cg_kernel_geometry(p, k, syms, grid, block, &smem));
        assert_true(grid[0] >= 1 && block[0] >= 32 && block[0] <= 1024);
    }
    assert_false(cg_kernel_geometry(p, 999, syms, grid, block, &smem));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(cg_manifest_write(p, f));
    fclose(f);
    assert_non_null(strstr(buf, "\"kernels\": ["));
    assert_non_null(strstr(buf, "\"symbols\": [\"M\", \"N\"]"));
    assert_non_null(strstr(buf, "\"kind\": \"temp\""));
    free(buf);
    cg_program_free(p);
    ir_graph_free(g);
}

/* ---- math accuracy -------------------------------------------------------- */

/* Distance in ulps of the f32 result r from the exact value e. */
static double ulps(float r, double e) {
    if (isnan(e)) return isnan(r) ? 0 : 1e9;
    if (isinf((float)e)) e = (float)e; /* overflows f32: must give inf */
    if (isinf(e)) return (isinf(r) && (r > 0) == (e > 0)) ? 0 : 1e9;
    double ae = fabs(e);
    int ex;
    frexp(ae < 1.1754943508222875e-38 ? 1.1754943508222875e-38 : ae, &ex);
    double ulp = ldexp(1.0, ex - 24);
    return fabs((double)r - e) / ulp;
}

typedef struct mcase {
    ir_op op;
    double lo, hi; /* sweep; log-spaced when lo > 0 and hi / lo > 1e3 */
    double bound;  /* max ulps allowed */
    double (*ref)(double, double);
} mcase;

static double r_exp(double x, double y) {
    (void)y;
    return exp(x);
}
static double r_exp2(double x, double y) {
    (void)y;
    return exp2(x);
}
static double r_log(double x, double y) {
    (void)y;
    return log(x);
}
static double r_log2(double x, double y) {
    (void)y;
    return log2(x);
}
static double r_tanh(double x, double y) {
    (void)y;
    return tanh(x);
}
static double r_erf(double x, double y) {
    (void)y;
    return erf(x);
}
static double r_sin(double x, double y) {
    (void)y;
    return sin(x);
}
static double r_cos(double x, double y) {
    (void)y;
    return cos(x);
}
static double r_sqrt(double x, double y) {
    (void)y;
    return sqrt(x);
}
static double r_rsqrt(double x, double y) {
    (void)y;
    return 1 / sqrt(x);
}
static double r_sigmoid(double x, double y) {
    (void)y;
    return 1 / (1 + exp(-x));
}
static double r_silu(double x, double y) {
    (void)y;
    return x / (1 + exp(-x));
}
static double r_gelu(double x, double y) {
    (void)y;
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}
static double r_gelu_tanh(double x, double y) {
    (void)y;
    return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
static double r_pow(double x, double y) { return pow(x, y); }

/* Runs op over n points of [lo, hi] on the host JIT; returns the max ulp error. */
static double sweep(const mcase *c, int n, double *worst_x) {
    ir_graph *g = ir_graph_new("m", NULL);
    ir_shape s = {1, {n}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s), o;
    if (c->op == IR_OP_POW) {
        ir_id y = ir_add_input(g, "y", IR_F32, &s);
        o = ir_add_binary(g, IR_OP_POW, x, y);
    } else {
        o = ir_add_unary(g, c->op, x);
    }
    ir_add_output(g, &o, 1);
    plan(g, false);
    rt_tensor in[2] = {{IR_F32, 1, {n}, NULL}, {IR_F32, 1, {n}, NULL}};
    assert_true(rt_tensor_alloc(&in[0]) && rt_tensor_alloc(&in[1]));
    float *xv = in[0].data, *yv = in[1].data;
    bool logs = c->lo > 0 && c->hi / c->lo > 1e3;
    for (int i = 0; i < n; i++) {
        double t = (double)i / (n - 1);
        xv[i] = (float)(logs ? c->lo * pow(c->hi / c->lo, t) : c->lo + (c->hi - c->lo) * t);
        yv[i] = (float)(-4.0 + 8.0 * fmod(i * 0.618033988749, 1.0)); /* pow exponents */
    }
    rt_tensor out;
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    assert_true(drv_host_run(g, in, &out, &d));
    double worst = 0;
    const float *r = out.data;
    for (int i = 0; i < n; i++) {
        double e = c->ref(xv[i], yv[i]);
        double u = ulps(r[i], e);
        if (c->op == IR_OP_GELU || c->op == IR_OP_GELU_TANH || c->op == IR_OP_SILU) {
            /* x * f(x) with f near 0 or 1: measured relative to ulp(|x|) */
            double ux = ulps(r[i], e) * 0 +
                        fabs((double)r[i] - e) / ldexp(1.0, ilogb(fmax(fabs(xv[i]), 1e-30)) - 23);
            u = fmin(u, ux);
        }
        if (u > worst) {
            worst = u;
            *worst_x = xv[i];
        }
    }
    rt_tensor_free(&out);
    rt_tensor_free(&in[0]);
    rt_tensor_free(&in[1]);
    ir_graph_free(g);
    return worst;
}

static void test_math_accuracy(void **s) {
    (void)s;
    static const mcase cases[] = {
        {IR_OP_EXP, -87.0, 88.5, 2, r_exp},
        {IR_OP_EXP, -1.0, 1.0, 2, r_exp},
        {IR_OP_EXP2, -125.0, 127.5, 2, r_exp2},
        {IR_OP_LOG, 1e-37, 1e37, 2, r_log},
        {IR_OP_LOG, 0.5, 2.0, 2, r_log},
        {IR_OP_LOG2, 1e-37, 1e37, 2, r_log2},
        {IR_OP_LOG2, 0.5, 2.0, 3, r_log2},
        {IR_OP_TANH, -10.0, 10.0, 3, r_tanh},
        {IR_OP_TANH, -0.01, 0.01, 3, r_tanh},
        {IR_OP_ERF, -5.0, 5.0, 3, r_erf},
        {IR_OP_ERF, -0.01, 0.01, 1.5, r_erf},
        {IR_OP_SIN, -100.0, 100.0, 2, r_sin},
        {IR_OP_COS, -100.0, 100.0, 2, r_cos},
        {IR_OP_SIN, -1e5, 1e5, 2, r_sin},
        {IR_OP_SQRT, 1e-30, 1e30, 0.501, r_sqrt},
        {IR_OP_RSQRT, 1e-30, 1e30, 2, r_rsqrt},
        {IR_OP_SIGMOID, -80.0, 30.0, 4, r_sigmoid},
        {IR_OP_SILU, -30.0, 30.0, 4, r_silu},
        {IR_OP_GELU, -8.0, 8.0, 4, r_gelu},
        {IR_OP_GELU_TANH, -8.0, 8.0, 4, r_gelu_tanh},
        {IR_OP_POW, 0.01, 10.0, 3, r_pow},
        {IR_OP_POW, 1e-30, 1e30, 3, r_pow},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double wx = 0, u = sweep(&cases[i], 20001, &wx);
        printf("  %-10s [%g, %g]: max %.2f ulp (at %.9g; bound %.1f)\n", ir_op_name(cases[i].op),
               cases[i].lo, cases[i].hi, u, wx, cases[i].bound);
        if (u > cases[i].bound) ok = false;
    }
    assert_true(ok);
}

/* ---- issue counts ---------------------------------------------------------- */

/* PTX instruction lines of the first backward branch's loop in ptx (from its label to the
 * branch), or -1 when there is none. */
static int loop_instrs(const char *ptx) {
    const char *l = ptx;
    while ((l = strstr(l, "\n$L__BB")) != NULL) {
        l++;
        const char *colon = strchr(l, ':'), *nl = strchr(l, '\n');
        if (!colon || !nl || colon > nl) continue;
        char lab[64];
        int ln = (int)(colon - l);
        if (ln >= (int)sizeof lab - 2) continue;
        snprintf(lab, sizeof lab, "%.*s;", ln, l);
        const char *br = strstr(nl, lab);
        if (!br) continue;
        int n = 0;
        for (const char *q = nl + 1; q && q < br; q = strchr(q, '\n'), q = q ? q + 1 : q)
            if (q[0] == '\t' && q[1] != '\0' && (q[1] == '@' || (q[1] >= 'a' && q[1] <= 'z'))) n++;
        return n;
    }
    return -1;
}

/* Loop instructions of the sm_90 kernel y = op(x) (x + x for IR_OP_ADD) over f32[2^20]. */
static int one_op_loop(ir_op op) {
    ir_graph *g = ir_graph_new("iss", NULL);
    ir_shape s = {1, {1 << 20}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id o = op == IR_OP_ADD ? ir_add_binary(g, IR_OP_ADD, x, x) : ir_add_unary(g, op, x);
    ir_add_output(g, &o, 1);
    plan(g, false);
    cg_program *p = compile_check(g, CG_SM90);
    int n = loop_instrs(cg_program_ptx(p, NULL));
    cg_program_free(p);
    ir_graph_free(g);
    return n;
}

/* The op table's issue column is the PTX codegen emits per element for each math function
 * expanded in PTX (the vector loop handles 4 elements; the loop's own instructions are those of
 * x + x less its 4 additions), so the model's instruction-issue bound follows codegen. */
static void test_math_issue(void **s) {
    (void)s;
    static const ir_op ops[] = {IR_OP_EXP,  IR_OP_EXP2, IR_OP_LOG,  IR_OP_LOG2,
                                IR_OP_SIN,  IR_OP_COS,  IR_OP_TANH, IR_OP_SIGMOID,
                                IR_OP_SILU, IR_OP_ERF,  IR_OP_GELU, IR_OP_GELU_TANH};
    int base = one_op_loop(IR_OP_ADD) - 4;
    assert_true(base > 0);
    bool ok = true;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        int n = one_op_loop(ops[i]) - base;
        printf("  %-10s %d PTX instructions per 4 elements, table %d per element\n",
               ir_op_name(ops[i]), n, ir_op_issue(ops[i]));
        if (n != 4 * ir_op_issue(ops[i])) ok = false;
    }
    assert_true(ok);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets),    cmocka_unit_test(test_vector_loads),
        cmocka_unit_test(test_manifest),   cmocka_unit_test(test_math_accuracy),
        cmocka_unit_test(test_math_issue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
