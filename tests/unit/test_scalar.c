/* test_scalar.c - one meaning per op. Driven by the op table, so a new row is
 * covered without editing this file:
 *  - constant folding (passes/fold.c) and the reference interpreter
 *    (runtime/interp.c) agree bit for bit on every elementwise op at the edge
 *    values of issue 10, at every dtype (unary ops; binary and where ops over
 *    pairs of them, with the IEEE edges of pow; reductions of uniform values);
 *  - every op has its rules: a scalar rule exactly for the elementwise rows,
 *    a kernel rule on the host and the GPU target for every elementwise row
 *    at f32 and i32, and a frontend built-in for every IR_T_CALL row;
 *  - codegen refuses, with a reported internal error, an op that has no
 *    kernel rule (the elementwise dispatch and the math functions asked for
 *    ops they have no rule for). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "codegen/cg_impl.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

/* The values issue 10 names, then the edges of the binary ops. */
static const double VALS[] = {-12,  -10, -0.0, 0, 1e-30, 1e-45,    0.5,       88.7, -88,
                              3e38, 1,   -1,   2, -3,    INFINITY, -INFINITY, NAN};
#define NVALS       (sizeof VALS / sizeof *VALS)
#define NUNARY_VALS 10 /* unary ops: the values of issue 10 (and the rest too, below) */

static const ir_dtype DTYPES[] = {IR_F32, IR_F16, IR_BF16, IR_I32, IR_BOOL};
#define NDT (sizeof DTYPES / sizeof *DTYPES)

/* Operand dtype k of a test node of op at dtype dt: where's condition is bool. */
static ir_dtype operand_dt(ir_op op, unsigned k, ir_dtype dt) {
    return op == IR_OP_WHERE && k == 0 ? IR_BOOL : dt;
}

/* Node `op` over operands xs (cast: to `to`). */
static ir_id add_op(ir_graph *g, ir_op op, const ir_id *xs, ir_dtype to) {
    switch (ir_op_arity(op)) {
        case 1: return op == IR_OP_CAST ? ir_add_cast(g, xs[0], to) : ir_add_unary(g, op, xs[0]);
        case 2: return ir_add_binary(g, op, xs[0], xs[1]);
        default: return ir_add_where(g, xs[0], xs[1], xs[2]);
    }
}

/* The stored bits of v at dtype dt (rt_set: the interpreter's store). */
static uint32_t bits_of(double v, ir_dtype dt) {
    uint32_t word = 0;
    rt_tensor t = {.dtype = dt, .rank = 0, .data = &word};
    rt_set(&t, 0, v);
    return word;
}

/* Folds op over constants v[] (already of their dtypes) and returns the
 * folded value; fails when the node did not fold into a constant. */
static double fold_value(ir_op op, ir_dtype dt, ir_dtype to, const double *v) {
    tx_diag d;
    tx_diag_init(&d, stderr, "fold", NULL, 0);
    pass_ctx pc = {.diag = &d};
    ir_graph *g = ir_graph_new("f", NULL);
    ir_id xs[3];
    for (int k = 0; k < ir_op_arity(op); k++)
        xs[k] = ir_add_const(g, v[k], operand_dt(op, (unsigned)k, dt));
    ir_id n = add_op(g, op, xs, to);
    ir_add_output(g, &n, 1);
    (void)pass_fold(g, &pc);
    const ir_node *o = &g->nodes[ir_in(g, &g->nodes[ir_output(g)], 0)];
    if (o->op != IR_OP_CONST) fail_msg("%s at %s did not fold", ir_op_name(op), ir_dtype_name(dt));
    double r = o->a.cval;
    ir_graph_free(g);
    return r;
}

/* Runs op over scalar inputs v[] in the reference interpreter; returns the
 * output's stored bits and sets *dt_out to its dtype. */
static uint32_t interp_bits(ir_op op, ir_dtype dt, ir_dtype to, const double *v, ir_dtype *dt_out) {
    ir_graph *g = ir_graph_new("i", NULL);
    ir_shape s = {0};
    ir_id xs[3];
    rt_tensor in[3];
    uint32_t words[3] = {0, 0, 0};
    static const char *names[3] = {"a", "b", "c"};
    for (int k = 0; k < ir_op_arity(op); k++) {
        ir_dtype kd = operand_dt(op, (unsigned)k, dt);
        xs[k] = ir_add_input(g, names[k], kd, &s);
        in[k] = (rt_tensor){.dtype = kd, .rank = 0, .data = &words[k]};
        rt_set(&in[k], 0, v[k]);
    }
    ir_id n = add_op(g, op, xs, to);
    ir_add_output(g, &n, 1);
    assert_true(ir_verify(g, stderr));
    tx_diag d;
    tx_diag_init(&d, stderr, "interp", NULL, 0);
    rt_tensor out;
    assert_true(rt_interp_run(g, in, &out, &d));
    uint32_t word = 0;
    memcpy(&word, out.data, (size_t)ir_dtype_size(out.dtype));
    *dt_out = out.dtype;
    rt_tensor_free(&out);
    ir_graph_free(g);
    return word;
}

/* True when a node of op over operands of dtype dt is a valid graph (an op
 * may be undefined at some dtypes: the verifier says which). */
static bool valid_at(ir_op op, ir_dtype dt, ir_dtype to) {
    ir_graph *g = ir_graph_new("v", NULL);
    ir_shape s = {0};
    ir_id xs[3];
    static const char *names[3] = {"a", "b", "c"};
    for (int k = 0; k < ir_op_arity(op); k++)
        xs[k] = ir_add_input(g, names[k], operand_dt(op, (unsigned)k, dt), &s);
    ir_id n = add_op(g, op, xs, to);
    ir_add_output(g, &n, 1);
    bool ok = ir_verify(g, NULL);
    ir_graph_free(g);
    return ok;
}

/* Folding and the interpreter agree on op at operands v[] (rounded to their
 * dtypes first, as inputs are); returns false (nothing checked) where the
 * op is not defined at dt. */
static bool agree(ir_op op, ir_dtype dt, ir_dtype to, const double *raw) {
    if (!valid_at(op, dt, to)) return false;
    double v[3];
    for (int k = 0; k < ir_op_arity(op); k++)
        v[k] = ir_scalar_round(raw[k], operand_dt(op, (unsigned)k, dt));
    ir_dtype odt;
    uint32_t want = interp_bits(op, dt, to, v, &odt);
    uint32_t got = bits_of(fold_value(op, dt, to, v), odt);
    if (got != want)
        fail_msg("%s at %s (%g, %g, %g): folded bits 0x%x, interpreter 0x%x", ir_op_name(op),
                 ir_dtype_name(dt), v[0], ir_op_arity(op) > 1 ? v[1] : 0.0,
                 ir_op_arity(op) > 2 ? v[2] : 0.0, got, want);
    return true;
}

/* (a) Every unary elementwise op (every cast target for cast) at every value
 * and dtype. */
static void test_fold_matches_interp_unary(void **state) {
    (void)state;
    unsigned checked = 0;
    for (int op = 0; op < IR_NOPS; op++) {
        if (!(ir_op_traits((ir_op)op) & IR_T_ELEM) || ir_op_arity((ir_op)op) != 1) continue;
        for (unsigned t = 0; t < NDT; t++)
            for (unsigned to = 0; to < (op == IR_OP_CAST ? NDT : 1); to++)
                for (unsigned i = 0; i < NVALS; i++)
                    checked += agree((ir_op)op, DTYPES[t], DTYPES[to], &VALS[i]);
    }
    assert_true(checked >
                20 * NUNARY_VALS * NDT); /* at least the 20 unary ops of today at every dtype */
}

/* (a) Every binary and three-operand elementwise op over all pairs of values
 * (where: condition from the first value), at every dtype. */
static void test_fold_matches_interp_binary(void **state) {
    (void)state;
    unsigned checked = 0;
    for (int op = 0; op < IR_NOPS; op++) {
        int ar = ir_op_arity((ir_op)op);
        if (!(ir_op_traits((ir_op)op) & IR_T_ELEM) || ar < 2) continue;
        for (unsigned t = 0; t < NDT; t++)
            for (unsigned i = 0; i < NVALS; i++)
                for (unsigned j = 0; j < NVALS; j++) {
                    double v[3] = {VALS[i], VALS[j], VALS[(i + j) % NVALS]};
                    checked += agree((ir_op)op, DTYPES[t], IR_F32, v);
                }
    }
    assert_true(checked >= 14 * NDT * NVALS * NVALS); /* the 14 binary and where ops of today */
}

/* (a) Every reduction row: folding a reduction of a uniform value (a
 * broadcast constant over 5 elements) gives the interpreter's bits for the
 * same values, at every value and dtype. */
static void test_fold_matches_interp_reduce(void **state) {
    (void)state;
    unsigned checked = 0;
    ir_shape s5 = {.rank = 1, .dim = {5}};
    for (int op = 0; op < IR_NOPS; op++) {
        if (!(ir_op_traits((ir_op)op) & IR_T_REDUCE)) continue;
        for (unsigned t = 0; t < NDT; t++) {
            if (DTYPES[t] == IR_BOOL)
                continue; /* the frontend makes bool sums i32; fold leaves bool */
            for (unsigned i = 0; i < NVALS; i++) {
                double v = ir_scalar_round(VALS[i], DTYPES[t]);
                tx_diag d;
                tx_diag_init(&d, stderr, "fold", NULL, 0);
                pass_ctx pc = {.diag = &d};
                ir_graph *g = ir_graph_new("f", NULL);
                ir_id b = ir_add_broadcast(g, ir_add_const(g, v, DTYPES[t]), &s5);
                ir_id r = ir_add_reduce(g, (ir_op)op, b, 1, false);
                ir_add_output(g, &r, 1);
                (void)pass_fold(g, &pc);
                const ir_node *o = &g->nodes[ir_in(g, &g->nodes[ir_output(g)], 0)];
                if (o->op != IR_OP_CONST)
                    fail_msg("%s at %s did not fold", ir_op_name((ir_op)op),
                             ir_dtype_name(DTYPES[t]));
                ir_dtype odt = (ir_dtype)o->dtype;
                uint32_t got = bits_of(o->a.cval, odt);
                ir_graph_free(g);
                g = ir_graph_new("i", NULL);
                ir_id x = ir_add_input(g, "x", DTYPES[t], &s5);
                r = ir_add_reduce(g, (ir_op)op, x, 1, false);
                ir_add_output(g, &r, 1);
                rt_tensor in = {.dtype = DTYPES[t], .rank = 1, .dim = {5}}, out;
                assert_true(rt_tensor_alloc(&in));
                for (int k = 0; k < 5; k++) rt_set(&in, k, v);
                assert_true(rt_interp_run(g, &in, &out, &d));
                uint32_t want = 0;
                memcpy(&want, out.data, (size_t)ir_dtype_size(out.dtype));
                if (got != want)
                    fail_msg("%s at %s of 5 x %g: folded bits 0x%x, interpreter 0x%x",
                             ir_op_name((ir_op)op), ir_dtype_name(DTYPES[t]), v, got, want);
                rt_tensor_free(&in);
                rt_tensor_free(&out);
                ir_graph_free(g);
                checked++;
            }
        }
    }
    assert_true(checked >= 4 * 4 * NVALS);
}

/* pow at the IEEE edges NumPy follows (C99 Annex F), in the shared rule. */
static void test_pow_edges(void **state) {
    (void)state;
    static const struct {
        double a, b, want;
    } cases[] = {
        {-0.0, -1, -INFINITY},
        {0.0, -1, INFINITY},
        {-0.0, -2, INFINITY},
        {-0.0, 3, -0.0},
        {-0.0, 0.5, 0.0},
        {-1, INFINITY, 1},
        {-1, -INFINITY, 1},
        {-INFINITY, 0.5, INFINITY},
        {-INFINITY, 3, -INFINITY},
        {-INFINITY, -3, -0.0},
        {-INFINITY, -2, 0.0},
        {NAN, 0, 1},
        {1, NAN, 1},
        {-2, 0.5, NAN},
        {0.5, INFINITY, 0},
        {2, -INFINITY, 0},
        {0.5, -INFINITY, INFINITY},
        {-8, 1.0 / 3, NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double x[2] = {cases[i].a, cases[i].b}, r = 0;
        assert_true(ir_scalar_eval(IR_OP_POW, IR_F32, x, &r));
        bool ok = isnan(cases[i].want) ? isnan(r)
                                       : r == cases[i].want && signbit(r) == signbit(cases[i].want);
        if (!ok) fail_msg("pow(%g, %g) = %g, want %g", cases[i].a, cases[i].b, r, cases[i].want);
    }
}

/* i32: + - * ** wrap, division truncates with x / 0 = 0, negative powers. */
static void test_int_rules(void **state) {
    (void)state;
    static const struct {
        ir_op op;
        double a, b, want;
    } cases[] = {
        {IR_OP_ADD, 2147483647, 1, -2147483648.0},
        {IR_OP_MUL, 65536, 65536, 0},
        {IR_OP_MUL, 2147483647, 2147483647, 1},
        {IR_OP_MUL, -2147483648.0, 3, -2147483648.0},
        {IR_OP_MUL, 1000000007, 998244353, -602224121},
        {IR_OP_POW, 3, 40, 689956897},
        {IR_OP_POW, -3, 41, -2069870691},
        {IR_OP_POW, 46341, 2, -2147479015},
        {IR_OP_POW, 0, 0, 1},
        {IR_OP_POW, 2, -1, 0},
        {IR_OP_POW, -1, -3, -1},
        {IR_OP_POW, 1, -7, 1},
        {IR_OP_POW, 0, -1, 0},
        {IR_OP_DIV, 7, 0, 0},
        {IR_OP_DIV, -7, 2, -3},
        {IR_OP_DIV, -2147483648.0, -1, -2147483648.0},
        {IR_OP_SUB, -2147483648.0, 1, 2147483647},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double x[2] = {cases[i].a, cases[i].b}, r = 0;
        assert_true(ir_scalar_eval(cases[i].op, IR_I32, x, &r));
        if (r != cases[i].want)
            fail_msg("%s(%g, %g) = %.17g, want %.17g", ir_op_name(cases[i].op), cases[i].a,
                     cases[i].b, r, cases[i].want);
    }
    double m[1] = {-2147483648.0}, r = 0;
    assert_true(ir_scalar_eval(IR_OP_NEG, IR_I32, m, &r) && r == -2147483648.0);
    assert_true(ir_scalar_eval(IR_OP_ABS, IR_I32, m, &r) && r == -2147483648.0);
}

/* (b) A scalar rule exists exactly for the elementwise rows, a reduction
 * rule exactly for the reduction rows. */
static void test_every_op_has_scalar_rule(void **state) {
    (void)state;
    for (int op = 0; op < IR_NOPS; op++) {
        bool red = (ir_op_traits((ir_op)op) & IR_T_REDUCE) != 0;
        double acc = 0, rr = 0;
        if (ir_scalar_reduce_init((ir_op)op, &acc) != red ||
            ir_scalar_reduce_uniform((ir_op)op, 1, 2, &rr) != red ||
            ir_scalar_reduce_step((ir_op)op, IR_F32, 0, 1, &rr) != red ||
            ir_scalar_reduce_finish((ir_op)op, IR_F32, 1, 2, &rr) != red)
            fail_msg("op %s: reduction rule %s", ir_op_name((ir_op)op),
                     red ? "missing" : "for a non-reduction op");
        bool elem = (ir_op_traits((ir_op)op) & IR_T_ELEM) != 0;
        for (unsigned t = 0; t < NDT; t++) {
            double x[3] = {0.5, 2, 1}, r = -12345;
            bool has = ir_scalar_eval((ir_op)op, DTYPES[t], x, &r);
            if (has != elem)
                fail_msg("op %s at %s: scalar rule %s", ir_op_name((ir_op)op),
                         ir_dtype_name(DTYPES[t]), has ? "for a non-elementwise op" : "missing");
        }
    }
}

/* Plans and compiles one elementwise node of op at dtype dt for target t;
 * fails on any reported error. */
static void compiles(ir_op op, ir_dtype dt, ir_dtype to, cg_target t) {
    char msg[1024] = {0};
    FILE *f = fmemopen(msg, sizeof msg - 1, "w");
    tx_diag d;
    tx_diag_init(&d, f, "cg", NULL, 0);
    ir_graph *g = ir_graph_new("k", NULL);
    ir_shape s = {.rank = 1, .dim = {64}};
    ir_id xs[3];
    static const char *names[3] = {"a", "b", "c"};
    for (int k = 0; k < ir_op_arity(op); k++)
        xs[k] = ir_add_input(g, names[k], operand_dt(op, (unsigned)k, dt), &s);
    ir_id n = add_op(g, op, xs, to);
    ir_add_output(g, &n, 1);
    pass_ctx pc = {.diag = &d, .gpu = pass_gpu_find("h200")};
    bool ok = pass_run_pipeline(g, &pc);
    cg_program *p = ok ? cg_program_new(g, t, &d) : NULL;
    fclose(f);
    if (!p || d.errors)
        fail_msg("%s at %s for %s: %s", ir_op_name(op), ir_dtype_name(dt), cg_target_name(t), msg);
    cg_program_free(p);
    ir_graph_free(g);
}

/* (b) Every elementwise row has a kernel rule on the host and the GPU, at
 * f32, i32 and bool where the verifier accepts the op (every cast target for cast). */
static void test_every_op_has_kernel_rule(void **state) {
    (void)state;
    static const cg_target targets[] = {CG_HOST, CG_SM90};
    static const ir_dtype dts[] = {IR_F32, IR_I32, IR_BOOL};
    for (int op = 0; op < IR_NOPS; op++) {
        if (!(ir_op_traits((ir_op)op) & IR_T_ELEM)) continue;
        for (unsigned t = 0; t < 2; t++)
            for (unsigned k = 0; k < 3; k++)
                for (unsigned to = 0; to < (op == IR_OP_CAST ? NDT : 1); to++) {
                    ir_dtype td = op == IR_OP_CAST ? DTYPES[to] : dts[k];
                    if (valid_at((ir_op)op, dts[k], td))
                        compiles((ir_op)op, dts[k], td, targets[t]);
                }
    }
}

/* (b) Every IR_T_CALL row is a built-in of the language under its name,
 * lowered to a node of that op; no other row is. */
static void test_builtins_follow_the_table(void **state) {
    (void)state;
    for (int op = 0; op < IR_NOPS; op++) {
        unsigned tr = ir_op_traits((ir_op)op);
        const char *name = ir_op_name((ir_op)op);
        char src[256];
        if (tr & IR_T_MATMUL)
            snprintf(src, sizeof src, "fn f(x: f32[4, 4]) { return %s(x, x) }", name);
        else if (ir_op_arity((ir_op)op) == 3)
            snprintf(src, sizeof src, "fn f(x: f32[4]) { return %s(x > 0, x, x) }", name);
        else if (ir_op_arity((ir_op)op) == 2)
            snprintf(src, sizeof src, "fn f(x: f32[4]) { return %s(x, x) }", name);
        else
            snprintf(src, sizeof src, "fn f(x: f32[4]) { return %s(x) }", name);
        char msg[1024] = {0};
        FILE *f = fmemopen(msg, sizeof msg - 1, "w");
        tx_diag d;
        tx_diag_init(&d, f, "t.tx", src, strlen(src));
        fe_options fo = {0};
        ir_graph *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
        fclose(f);
        if (!(tr & IR_T_CALL)) {
            /* not a built-in by this name, or one with its own surface form (views) */
            if (g) {
                bool has = false;
                for (ir_id i = 0; i < g->n; i++) has |= g->nodes[i].op == op && !(tr & IR_T_VIEW);
                if (has) fail_msg("'%s' is callable but not IR_T_CALL", name);
                ir_graph_free(g);
            }
            continue;
        }
        if (!g) fail_msg("built-in '%s' (IR_T_CALL) refused: %s", name, msg);
        bool found = false;
        for (ir_id i = 0; i < g->n; i++) found |= g->nodes[i].op == op;
        if (!found) fail_msg("built-in '%s' did not produce a %s node", name, name);
        ir_graph_free(g);
    }
}

/* A bare emission context for the host target: module, builder in a
 * function's entry block, types; diagnostics to `d`. */
typedef struct bare_cg {
    cg_ctx cx;
    LLVMContextRef llctx;
    LLVMModuleRef mod;
} bare_cg;

static void bare_init(bare_cg *bc, tx_diag *d, bool gpu) {
    memset(bc, 0, sizeof *bc);
    cg_ctx *cx = &bc->cx;
    bc->llctx = LLVMContextCreate();
    bc->mod = LLVMModuleCreateWithNameInContext("t", bc->llctx);
    cx->gpu = gpu;
    cx->target = gpu ? CG_SM90 : CG_HOST;
    cx->diag = d;
    cx->llctx = bc->llctx;
    cx->mod = bc->mod;
    cx->i1 = LLVMInt1TypeInContext(cx->llctx);
    cx->i8 = LLVMInt8TypeInContext(cx->llctx);
    cx->i16 = LLVMInt16TypeInContext(cx->llctx);
    cx->i32 = LLVMInt32TypeInContext(cx->llctx);
    cx->i64 = LLVMInt64TypeInContext(cx->llctx);
    cx->f32 = LLVMFloatTypeInContext(cx->llctx);
    cx->f64 = LLVMDoubleTypeInContext(cx->llctx);
    cx->voidt = LLVMVoidTypeInContext(cx->llctx);
    LLVMTypeRef params[2] = {cx->f32, cx->i32};
    cx->fn = LLVMAddFunction(cx->mod, "t", LLVMFunctionType(cx->voidt, params, 2, 0));
    cx->b = LLVMCreateBuilderInContext(cx->llctx);
    LLVMPositionBuilderAtEnd(cx->b, LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "entry"));
}

static void bare_fini(bare_cg *bc) {
    LLVMDisposeBuilder(bc->cx.b);
    LLVMDisposeModule(bc->mod);
    LLVMContextDispose(bc->llctx);
}

/* (c) Asked for an op it has no rule for, codegen reports an internal error
 * and returns no value (never undef): the elementwise dispatch for ops that
 * are not elementwise, at f32 and i32 on both targets, and the math
 * functions for ops that are not math functions. */
static void test_missing_kernel_rule_is_refused(void **state) {
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        for (int op = 0; op < IR_NOPS; op++) {
            if (ir_op_traits((ir_op)op) & IR_T_ELEM) continue;
            for (int k = 0; k < 2; k++) {
                char msg[512] = {0};
                FILE *f = fmemopen(msg, sizeof msg - 1, "w");
                tx_diag d;
                tx_diag_init(&d, f, NULL, NULL, 0);
                bare_cg bc;
                bare_init(&bc, &d, gpu);
                LLVMValueRef a = LLVMGetParam(bc.cx.fn, (unsigned)k);
                LLVMValueRef r = cg_emit_op(&bc.cx, (ir_op)op, k ? IR_I32 : IR_F32, a, a, NULL,
                                            k ? IR_I32 : IR_F32);
                fclose(f);
                assert_null(r);
                assert_int_equal(d.errors, 1);
                if (!strstr(msg, "internal error") || !strstr(msg, ir_op_name((ir_op)op)))
                    fail_msg("no clear error for %s: '%s'", ir_op_name((ir_op)op), msg);
                bare_fini(&bc);
            }
        }
        char msg[512] = {0};
        FILE *f = fmemopen(msg, sizeof msg - 1, "w");
        tx_diag d;
        tx_diag_init(&d, f, NULL, NULL, 0);
        bare_cg bc;
        bare_init(&bc, &d, gpu);
        LLVMValueRef a = LLVMGetParam(bc.cx.fn, 0);
        assert_null(cg_math(&bc.cx, IR_OP_ADD, a, a));
        assert_null(LLVMGetNamedFunction(bc.mod, "tx.add")); /* no half-built function left */
        fclose(f);
        assert_int_equal(d.errors, 1);
        assert_non_null(strstr(msg, "internal error: no"));
        bare_fini(&bc);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_matches_interp_unary),
        cmocka_unit_test(test_fold_matches_interp_binary),
        cmocka_unit_test(test_fold_matches_interp_reduce),
        cmocka_unit_test(test_pow_edges),
        cmocka_unit_test(test_int_rules),
        cmocka_unit_test(test_every_op_has_scalar_rule),
        cmocka_unit_test(test_every_op_has_kernel_rule),
        cmocka_unit_test(test_builtins_follow_the_table),
        cmocka_unit_test(test_missing_kernel_rule_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
