/* test_pass_simplify.c - algebraic simplification: the identities that must
 * fire, the ones that must not (f32->f16->f32, x*0 on floats), and that
 * every rewrite keeps dtype and shape (by cast or broadcast_to in place). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "passes/passes.h"

typedef struct fixture {
    tx_diag diag;
    pass_ctx ctx;
} fixture;

static void fixture_init(fixture *f) {
    tx_diag_init(&f->diag, stderr, "test", NULL, 0);
    f->ctx = (pass_ctx){.diag = &f->diag};
}

/* Runs simplify then dce (so the structure is easy to check), verifying
 * after each; returns simplify's answer. */
static bool run_simplify(ir_graph *g, fixture *f) {
    bool changed = pass_simplify(g, &f->ctx);
    assert_true(ir_verify(g, stderr));
    pass_dce(g, &f->ctx);
    assert_true(ir_verify(g, stderr));
    assert_int_equal(f->diag.errors, 0);
    return changed;
}

static const ir_node *out_in(ir_graph *g, unsigned k) {
    return &g->nodes[ir_in(g, &g->nodes[ir_output(g)], k)];
}
static ir_id out_id(ir_graph *g, unsigned k) { return ir_in(g, &g->nodes[ir_output(g)], k); }

static const ir_shape S23 = {.rank = 2, .dim = {2, 3}};

/* x+0, 0+x, x-0, x*1, 1*x, x/1, x**1 all become x itself. */
static void test_identities(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_F32, &S23);
    ir_id z = ir_add_const(g, 0.0, IR_F32), o = ir_add_const(g, 1.0, IR_F32);
    ir_id outs[7] = {
        ir_add_binary(g, IR_OP_ADD, x, z), ir_add_binary(g, IR_OP_ADD, z, x),
        ir_add_binary(g, IR_OP_SUB, x, z), ir_add_binary(g, IR_OP_MUL, x, o),
        ir_add_binary(g, IR_OP_MUL, o, x), ir_add_binary(g, IR_OP_DIV, x, o),
        ir_add_binary(g, IR_OP_POW, x, o),
    };
    ir_add_output(g, outs, 7);
    assert_true(run_simplify(g, &f));
    assert_int_equal(g->n, 2);
    for (unsigned k = 0; k < 7; k++) assert_int_equal(out_id(g, k), 0);
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* Rewrites that must not happen: x*0 and 0-x on floats, x+1, x-x. */
static void test_float_zero_kept(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_F32, &S23);
    ir_id z = ir_add_const(g, 0.0, IR_F32), o = ir_add_const(g, 1.0, IR_F32);
    ir_id outs[4] = {ir_add_binary(g, IR_OP_MUL, x, z), ir_add_binary(g, IR_OP_SUB, z, x),
                     ir_add_binary(g, IR_OP_ADD, x, o), ir_add_binary(g, IR_OP_SUB, x, x)};
    ir_add_output(g, outs, 4);
    uint32_t n = g->n;
    assert_false(run_simplify(g, &f));
    assert_int_equal(g->n, n);
    assert_int_equal(out_in(g, 0)->op, IR_OP_MUL);
    assert_int_equal(out_in(g, 3)->op, IR_OP_SUB);
    ir_graph_free(g);
}

/* i32 x*0 becomes broadcast_to(0) of x's shape. */
static void test_int_times_zero(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_I32, &S23);
    ir_id z = ir_add_const(g, 0.0, IR_I32);
    ir_id y = ir_add_binary(g, IR_OP_MUL, x, z);
    ir_add_output(g, &y, 1);
    assert_true(run_simplify(g, &f));
    const ir_node *n = out_in(g, 0);
    assert_int_equal(n->op, IR_OP_BROADCAST);
    assert_int_equal(n->dtype, IR_I32);
    assert_true(ir_shape_eq(&n->shape, &S23));
    assert_int_equal(g->nodes[ir_in(g, n, 0)].op, IR_OP_CONST);
    ir_graph_free(g);
}

/* A rewrite that would change the dtype becomes a cast; one that would
 * change the shape becomes a broadcast_to. */
static void test_keeps_dtype_and_shape(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_BF16, &S23);
    ir_shape s1 = {.rank = 1, .dim = {3}};
    ir_id v = ir_add_input(g, "v", IR_F32, &s1);
    ir_id zb = ir_add_broadcast(g, ir_add_const(g, 0.0, IR_F32), &S23);
    ir_id a = ir_add_binary(g, IR_OP_ADD, x, ir_add_const(g, 0.0, IR_F32)); /* f32[2,3] */
    ir_id b = ir_add_binary(g, IR_OP_ADD, v, zb);                           /* f32[2,3] */
    ir_id outs[2] = {a, b};
    ir_add_output(g, outs, 2);
    assert_true(run_simplify(g, &f));
    const ir_node *na = out_in(g, 0), *nb = out_in(g, 1);
    assert_int_equal(na->op, IR_OP_CAST);
    assert_int_equal(na->dtype, IR_F32);
    assert_int_equal(ir_in(g, na, 0), 0);
    assert_int_equal(nb->op, IR_OP_BROADCAST);
    assert_true(ir_shape_eq(&nb->shape, &S23));
    assert_int_equal(ir_in(g, nb, 0), 1);
    ir_graph_free(g);
}

/* Cast chains: same dtype removed; bf16->f32->bf16 removed; f32->f16->f32
 * kept; bf16->f32->f16 becomes one cast. */
static void test_cast_chains(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id xb = ir_add_input(g, "xb", IR_BF16, &S23);
    ir_id xf = ir_add_input(g, "xf", IR_F32, &S23);
    ir_id outs[4] = {
        ir_add_cast(g, ir_add_cast(g, xb, IR_F32), IR_BF16),
        ir_add_cast(g, ir_add_cast(g, xf, IR_F16), IR_F32),
        ir_add_cast(g, ir_add_cast(g, xb, IR_F32), IR_F16),
        ir_add_cast(g, xf, IR_F32),
    };
    ir_add_output(g, outs, 4);
    assert_true(run_simplify(g, &f));
    assert_int_equal(out_id(g, 0), 0);
    const ir_node *k = out_in(g, 1);
    assert_int_equal(k->op, IR_OP_CAST);
    assert_int_equal(k->dtype, IR_F32);
    assert_int_equal(g->nodes[ir_in(g, k, 0)].op, IR_OP_CAST);
    assert_int_equal(g->nodes[ir_in(g, k, 0)].dtype, IR_F16);
    k = out_in(g, 2);
    assert_int_equal(k->op, IR_OP_CAST);
    assert_int_equal(k->dtype, IR_F16);
    assert_int_equal(ir_in(g, k, 0), 0);
    assert_int_equal(out_id(g, 3), 1);
    assert_int_equal(g->n, 6); /* xb xf cast(f16) cast(f32) cast(f16) output */
    ir_graph_free(g);
}

/* neg(neg x) -> x; x**2 -> x*x; x**0.5 stays (sqrt differs from pow at -0
 * and -inf, where pow gives +0 and +inf as NumPy does). */
static void test_neg_and_pow(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_F16, &S23);
    ir_id outs[3] = {
        ir_add_unary(g, IR_OP_NEG, ir_add_unary(g, IR_OP_NEG, x)),
        ir_add_binary(g, IR_OP_POW, x, ir_add_const(g, 2.0, IR_F16)),
        ir_add_binary(g, IR_OP_POW, x, ir_add_const(g, 0.5, IR_F16)),
    };
    ir_add_output(g, outs, 3);
    assert_true(run_simplify(g, &f));
    assert_int_equal(out_id(g, 0), 0);
    const ir_node *m = out_in(g, 1), *q = out_in(g, 2);
    assert_int_equal(m->op, IR_OP_MUL);
    assert_int_equal(ir_in(g, m, 0), 0);
    assert_int_equal(ir_in(g, m, 1), 0);
    assert_int_equal(q->op, IR_OP_POW);
    assert_int_equal(ir_in(g, q, 0), 0);
    ir_graph_free(g);
}

/* Views: permute of permute composes (identity disappears), reshape and
 * broadcast_to to the same shape vanish, reshape chains collapse. */
static void test_views(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s = {.rank = 3, .dim = {2, 3, 4}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    uint8_t p1[3] = {1, 2, 0}, p2[3] = {2, 0, 1}, p3[3] = {0, 2, 1};
    ir_id id = ir_add_permute(g, ir_add_permute(g, x, p1), p2);
    ir_id pp = ir_add_permute(g, ir_add_permute(g, x, p1), p3); /* x dims (1, 0, 2) */
    ir_shape r1 = {.rank = 2, .dim = {6, 4}}, r2 = {.rank = 1, .dim = {24}};
    ir_id rr = ir_add_reshape(g, ir_add_reshape(g, x, &r1), &r2);
    ir_id same = ir_add_reshape(g, x, &s);
    ir_id bsame = ir_add_broadcast(g, x, &s);
    ir_id outs[5] = {id, pp, rr, same, bsame};
    ir_add_output(g, outs, 5);
    assert_true(run_simplify(g, &f));
    assert_int_equal(out_id(g, 0), 0);
    const ir_node *p = out_in(g, 1);
    assert_int_equal(p->op, IR_OP_PERMUTE);
    assert_int_equal(ir_in(g, p, 0), 0);
    assert_int_equal(p->a.perm[0], 1);
    assert_int_equal(p->a.perm[1], 0);
    assert_int_equal(p->a.perm[2], 2);
    assert_int_equal(p->shape.dim[0], 3);
    const ir_node *r = out_in(g, 2);
    assert_int_equal(r->op, IR_OP_RESHAPE);
    assert_int_equal(ir_in(g, r, 0), 0);
    assert_int_equal(out_id(g, 3), 0);
    assert_int_equal(out_id(g, 4), 0);
    assert_int_equal(g->n, 4); /* x permute reshape output */
    ir_graph_free(g);
}

/* [simplify.permute_reshape]: a permute that moves only unit axes ([B, H, 1, D] -> [B, 1, H, D],
 * B symbolic) becomes a reshape of its input, and a reshape after it collapses onto the input;
 * a permute that swaps two non-unit axes, or a symbolic axis with a non-unit one, stays. */
static void test_permute_reshape(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_dim b = IR_DIM_SYM(ir_sym_get(g, "B"));
    ir_shape s = {.rank = 4, .dim = {b, 32, 1, 128}}, t = {.rank = 4, .dim = {b, 32, 7, 128}};
    ir_id x = ir_add_input(g, "x", IR_BF16, &s), y = ir_add_input(g, "y", IR_BF16, &t);
    uint8_t p12[4] = {0, 2, 1, 3}, p01[4] = {1, 0, 2, 3};
    ir_id unit = ir_add_permute(g, x, p12);
    ir_shape flat = {.rank = 3, .dim = {b, 1, 4096}};
    ir_id merged = ir_add_reshape(g, ir_add_permute(g, x, p12), &flat);
    ir_id swap = ir_add_permute(g, y, p12);  /* 32 and 7 swap: a transpose */
    ir_id symsw = ir_add_permute(g, x, p01); /* B and 32 swap */
    ir_id outs[4] = {unit, merged, swap, symsw};
    ir_add_output(g, outs, 4);
    assert_true(run_simplify(g, &f));
    const ir_node *u = out_in(g, 0), *m = out_in(g, 1), *w = out_in(g, 2), *v = out_in(g, 3);
    assert_int_equal(u->op, IR_OP_RESHAPE);
    assert_int_equal(ir_in(g, u, 0), 0);
    assert_int_equal(u->shape.dim[1], 1);
    assert_int_equal(u->shape.dim[2], 32);
    assert_int_equal(m->op, IR_OP_RESHAPE);
    assert_int_equal(ir_in(g, m, 0), 0);
    assert_int_equal(m->shape.dim[2], 4096);
    assert_int_equal(w->op, IR_OP_PERMUTE);
    assert_int_equal(v->op, IR_OP_PERMUTE);
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* A broadcast rank-0 value feeding an elementwise op is used directly when
 * the op's shape stays; where it would shrink the shape it stays. */
static void test_scalar_broadcast(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_shape s1 = {.rank = 1, .dim = {3}};
    ir_id x = ir_add_input(g, "x", IR_F32, &S23);
    ir_id v = ir_add_input(g, "v", IR_F32, &s1);
    ir_id c = ir_add_input(g, "c", IR_F32, &(ir_shape){0});
    ir_id b = ir_add_broadcast(g, c, &S23);
    ir_id keep = ir_add_binary(g, IR_OP_MUL, b, v); /* [2,3] only through b */
    ir_id drop = ir_add_binary(g, IR_OP_MUL, x, b);
    ir_id outs[2] = {keep, drop};
    ir_add_output(g, outs, 2);
    assert_true(run_simplify(g, &f));
    const ir_node *k = out_in(g, 0), *d = out_in(g, 1);
    assert_int_equal(g->nodes[ir_in(g, k, 0)].op, IR_OP_BROADCAST);
    assert_int_equal(ir_in(g, d, 0), 0);
    assert_int_equal(ir_in(g, d, 1), 2);
    assert_true(ir_shape_eq(&d->shape, &S23));
    ir_graph_free(g);
}

/* The name of a replaced node moves to the unnamed value that replaces
 * it; a second run over the result (dead nodes still there) changes
 * nothing. */
static void test_name_moves(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_F32, &S23);
    ir_id e = ir_add_unary(g, IR_OP_EXP, x);
    ir_id h = ir_add_binary(g, IR_OP_MUL, e, ir_add_const(g, 1.0, IR_F32));
    g->nodes[h].name = ir_intern(g, "h");
    ir_add_output(g, &h, 1);
    assert_true(pass_simplify(g, &f.ctx));
    assert_int_equal(out_id(g, 0), e);
    assert_string_equal(ir_str(g, g->nodes[e].name), "h");
    assert_int_equal(g->nodes[h].name, 0);
    assert_false(pass_simplify(g, &f.ctx));
    assert_true(ir_verify(g, stderr));
    ir_graph_free(g);
}

/* A chain of identities collapses in one run: ((x + 0) * 1 - 0) / 1 -> x,
 * and a user after the chain reads x. */
static void test_chain(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_id x = ir_add_input(g, "x", IR_F32, &S23);
    ir_id z = ir_add_const(g, 0.0, IR_F32), o = ir_add_const(g, 1.0, IR_F32);
    ir_id v = ir_add_binary(g, IR_OP_ADD, x, z);
    v = ir_add_binary(g, IR_OP_MUL, v, o);
    v = ir_add_binary(g, IR_OP_SUB, v, z);
    v = ir_add_binary(g, IR_OP_DIV, v, o);
    ir_id e = ir_add_unary(g, IR_OP_EXP, v);
    ir_add_output(g, &e, 1);
    assert_true(run_simplify(g, &f));
    assert_int_equal(g->n, 3); /* x exp output */
    assert_int_equal(g->nodes[1].op, IR_OP_EXP);
    assert_int_equal(ir_in(g, &g->nodes[1], 0), 0);
    ir_graph_free(g);
}

/* simplify.reshape_operand: mul(reshape(exp(x), (6, 4)), w[6, 1]) of x [2, 3, 4] becomes
 * reshape(mul(exp(x), reshape(w, (2, 3, 1)))), topologically ordered; an operand that covers a
 * group of regrouped dims partly (w[8] against [3, 8] of [4, 6]) is left alone. */
static void test_reshape_operand(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    const ir_shape s234 = {3, {2, 3, 4}}, s64 = {2, {6, 4}}, s61 = {2, {6, 1}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s234), w = ir_add_input(g, "w", IR_F32, &s61);
    ir_id r = ir_add_reshape(g, ir_add_unary(g, IR_OP_EXP, x), &s64);
    ir_id m = ir_add_binary(g, IR_OP_MUL, r, w);
    ir_add_output(g, &m, 1);
    assert_true(run_simplify(g, &f));
    const ir_node *o = out_in(g, 0);
    assert_int_equal(o->op, IR_OP_RESHAPE);
    assert_true(ir_shape_eq(&o->shape, &s64));
    const ir_node *mm = &g->nodes[ir_in(g, o, 0)];
    assert_int_equal(mm->op, IR_OP_MUL);
    assert_true(ir_shape_eq(&mm->shape, &s234));
    assert_int_equal(g->nodes[ir_in(g, mm, 0)].op, IR_OP_EXP);
    const ir_node *wr = &g->nodes[ir_in(g, mm, 1)];
    const ir_shape s231 = {3, {2, 3, 1}};
    assert_int_equal(wr->op, IR_OP_RESHAPE);
    assert_true(ir_shape_eq(&wr->shape, &s231));
    assert_int_equal(ir_in(g, wr, 0), w);
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);

    g = ir_graph_new("t", NULL);
    const ir_shape s46 = {2, {4, 6}}, s38 = {2, {3, 8}}, s8 = {1, {8}};
    x = ir_add_input(g, "x", IR_F32, &s46), w = ir_add_input(g, "w", IR_F32, &s8);
    r = ir_add_reshape(g, ir_add_unary(g, IR_OP_EXP, x), &s38);
    m = ir_add_binary(g, IR_OP_MUL, r, w);
    ir_add_output(g, &m, 1);
    assert_false(run_simplify(g, &f));
    assert_int_equal(out_in(g, 0)->op, IR_OP_MUL);
    ir_graph_free(g);
}

/* [simplify.iota_extreme]: max/min of an iota over its own axis is a constant of the extent;
 * a reduction over another axis only is left alone. */
static void test_iota_extreme(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    const ir_shape s57 = {2, {5, 7}}, s5 = {1, {5}};
    ir_id io = ir_add_iota(g, &s57, 1);
    ir_id outs[3] = {ir_add_reduce(g, IR_OP_MAX, io, 2u, false),
                     ir_add_reduce(g, IR_OP_MIN, io, 3u, false),
                     ir_add_reduce(g, IR_OP_MAX, io, 1u, false)};
    ir_add_output(g, outs, 3);
    assert_true(run_simplify(g, &f));
    const ir_node *o0 = out_in(g, 0), *o1 = out_in(g, 1), *o2 = out_in(g, 2);
    assert_int_equal(o0->op, IR_OP_BROADCAST);
    assert_true(ir_shape_eq(&o0->shape, &s5));
    const ir_node *c0 = &g->nodes[ir_in(g, o0, 0)];
    assert_int_equal(c0->op, IR_OP_CONST);
    assert_int_equal(c0->dtype, IR_I32);
    assert_true(c0->a.cval == 6.0);
    assert_int_equal(o1->op, IR_OP_CONST);
    assert_true(o1->a.cval == 0.0);
    assert_int_equal(o2->op, IR_OP_MAX); /* over axis 0: the values still vary along axis 1 */
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* [simplify.slice_of_product] with a row-broadcast bias: slice(x @ w + b) becomes
 * x @ slice(w) + slice(b); a bias of the product's full shape is left alone. K = 16 keeps the
 * sliced products ([simplify.small_k] unrolls K <= 8). */
static void test_slice_of_biased_product(void **state) {
    (void)state;
    for (int full = 0; full < 2; full++) {
        fixture f;
        fixture_init(&f);
        ir_graph *g = ir_graph_new("t", NULL);
        const ir_shape sx = {2, {4, 16}}, sw = {2, {16, 16}}, sb = {1, {16}}, sbf = {2, {4, 16}};
        ir_id x = ir_add_input(g, "x", IR_F16, &sx), w = ir_add_input(g, "w", IR_F16, &sw);
        ir_id b = ir_add_input(g, "b", IR_F16, full ? &sbf : &sb);
        ir_id p = ir_add_binary(g, IR_OP_ADD, ir_add_matmul(g, x, w), b);
        ir_id outs[2] = {ir_add_slice(g, p, 1, 0, 8), ir_add_slice(g, p, 1, 8, 16)};
        ir_add_output(g, outs, 2);
        assert_true(run_simplify(g, &f) == !full);
        for (unsigned k = 0; k < 2; k++) {
            const ir_node *o = out_in(g, k);
            if (full) {
                assert_int_equal(o->op, IR_OP_SLICE);
                continue;
            }
            const ir_shape s48 = {2, {4, 8}};
            assert_int_equal(o->op, IR_OP_ADD);
            assert_int_equal(o->dtype, IR_F16);
            assert_true(ir_shape_eq(&o->shape, &s48));
            const ir_node *m = &g->nodes[ir_in(g, o, 0)], *bs = &g->nodes[ir_in(g, o, 1)];
            assert_int_equal(m->op, IR_OP_MATMUL);
            assert_int_equal(ir_in(g, m, 0), x);
            const ir_node *ws = &g->nodes[ir_in(g, m, 1)];
            assert_int_equal(ws->op, IR_OP_SLICE);
            assert_int_equal(ws->a.slice.start, 8 * k);
            assert_int_equal(bs->op, IR_OP_SLICE);
            assert_int_equal(ir_in(g, bs, 0), b);
            assert_int_equal(bs->a.slice.start, 8 * k);
            assert_int_equal(bs->a.slice.stop, 8 * k + 8);
        }
        ir_graph_free(g);
    }
}

/* The node a chain of casts ends at (n itself when it is no cast). */
static const ir_node *uncast(const ir_graph *g, const ir_node *n) {
    while (n->op == IR_OP_CAST) n = &g->nodes[ir_in(g, n, 0)];
    return n;
}

/* [simplify.small_k]: bf16 [2, 1, 5, 3] @ [4, 3, 6] (batch dims broadcast) becomes one cast to
 * bf16 of ((p0 + p1) + p2), p_k = f32(a[..., k:k+1]) * b[..., k:k+1, :] (f32) of the product's
 * shape [2, 4, 5, 6]; the products at K = 9, at an unbound K and of i32 stay. */
static void test_small_k(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    const ir_shape sa = {4, {2, 1, 5, 3}}, sb = {3, {4, 3, 6}}, s9 = {2, {5, 9}}, s96 = {2, {9, 6}};
    const ir_shape sk = {2, {5, IR_DIM_SYM(ir_sym_get(g, "K"))}};
    const ir_shape sk6 = {2, {IR_DIM_SYM(ir_sym_get(g, "K")), 6}}, si = {2, {5, 3}},
                   si6 = {2, {3, 6}};
    ir_id a = ir_add_input(g, "a", IR_BF16, &sa), b = ir_add_input(g, "b", IR_BF16, &sb);
    ir_id a9 = ir_add_input(g, "a9", IR_F32, &s9), b9 = ir_add_input(g, "b9", IR_F32, &s96);
    ir_id ak = ir_add_input(g, "ak", IR_F32, &sk), bk = ir_add_input(g, "bk", IR_F32, &sk6);
    ir_id ai = ir_add_input(g, "ai", IR_I32, &si), bi = ir_add_input(g, "bi", IR_I32, &si6);
    ir_id outs[4] = {ir_add_matmul(g, a, b), ir_add_matmul(g, a9, b9), ir_add_matmul(g, ak, bk),
                     ir_add_matmul(g, ai, bi)};
    ir_add_output(g, outs, 4);
    assert_true(run_simplify(g, &f));
    const ir_shape so = {4, {2, 4, 5, 6}};
    const ir_node *o = out_in(g, 0);
    assert_int_equal(o->op, IR_OP_CAST);
    assert_int_equal(o->dtype, IR_BF16);
    assert_true(ir_shape_eq(&o->shape, &so));
    const ir_node *acc = &g->nodes[ir_in(g, o, 0)];
    for (int k = 2; k >= 0; k--) {
        const ir_node *t = acc;
        if (k > 0) {
            assert_int_equal(acc->op, IR_OP_ADD);
            t = &g->nodes[ir_in(g, acc, 1)];
            acc = &g->nodes[ir_in(g, acc, 0)];
        }
        assert_int_equal(t->op, IR_OP_MUL);
        assert_int_equal(t->dtype, IR_F32);
        assert_true(ir_shape_eq(&t->shape, &so));
        for (unsigned s = 0; s < 2; s++) { /* f32(a's slice) * b's slice (promoted) */
            const ir_node *c = &g->nodes[ir_in(g, t, s)];
            assert_int_equal(c->op, s ? IR_OP_SLICE : IR_OP_CAST);
            assert_int_equal(c->dtype, s ? IR_BF16 : IR_F32);
            const ir_node *sl = s ? c : &g->nodes[ir_in(g, c, 0)];
            assert_int_equal(sl->op, IR_OP_SLICE);
            assert_int_equal(ir_in(g, sl, 0), s ? b : a);
            assert_int_equal(sl->a.slice.axis, s ? 1 : 3);
            assert_int_equal(sl->a.slice.start, k);
            assert_int_equal(sl->a.slice.stop, k + 1);
        }
    }
    for (unsigned k = 1; k < 4; k++) assert_int_equal(out_in(g, k)->op, IR_OP_MATMUL);
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* [simplify.matvec]: h bf16 [3, 7, 64] @ w bf16 [64, 1] becomes cast(sum(f32(h) *
 * reshape(w, [1, 64]), axis=-1, keepdim), bf16) of shape [3, 7, 1], as does an unbound K;
 * a small K takes [simplify.small_k] first, N = 2 stays a product. */
static void test_matvec(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_dim kd = IR_DIM_SYM(ir_sym_get(g, "K"));
    const ir_shape sh = {3, {3, 7, 64}}, sw = {2, {64, 1}}, sw2 = {2, {64, 2}};
    const ir_shape sk = {2, {7, kd}}, sk1 = {2, {kd, 1}}, s3 = {2, {7, 3}}, s31 = {2, {3, 1}};
    ir_id h = ir_add_input(g, "h", IR_BF16, &sh), w = ir_add_input(g, "w", IR_BF16, &sw);
    ir_id w2 = ir_add_input(g, "w2", IR_BF16, &sw2), ak = ir_add_input(g, "ak", IR_F32, &sk);
    ir_id bk = ir_add_input(g, "bk", IR_F32, &sk1), a3 = ir_add_input(g, "a3", IR_F32, &s3);
    ir_id b3 = ir_add_input(g, "b3", IR_F32, &s31);
    ir_id outs[4] = {ir_add_matmul(g, h, w), ir_add_matmul(g, ak, bk), ir_add_matmul(g, h, w2),
                     ir_add_matmul(g, a3, b3)};
    ir_add_output(g, outs, 4);
    assert_true(run_simplify(g, &f));
    const ir_shape so = {3, {3, 7, 1}}, srow = {2, {1, 64}};
    const ir_node *o = out_in(g, 0);
    assert_int_equal(o->op, IR_OP_CAST);
    assert_int_equal(o->dtype, IR_BF16);
    assert_true(ir_shape_eq(&o->shape, &so));
    const ir_node *r = &g->nodes[ir_in(g, o, 0)];
    assert_int_equal(r->op, IR_OP_SUM);
    assert_int_equal(r->a.red.axes, 1u << 2);
    assert_true(r->a.red.keepdim);
    const ir_node *t = &g->nodes[ir_in(g, r, 0)];
    assert_int_equal(t->op, IR_OP_MUL);
    assert_int_equal(t->dtype, IR_F32);
    assert_int_equal(uncast(g, &g->nodes[ir_in(g, t, 0)]) - g->nodes, h);
    const ir_node *wr = &g->nodes[ir_in(g, t, 1)];
    assert_int_equal(wr->op, IR_OP_RESHAPE);
    assert_true(ir_shape_eq(&wr->shape, &srow));
    assert_int_equal(ir_in(g, wr, 0), w);
    const ir_node *o1 = out_in(g, 1);
    assert_int_equal(o1->op, IR_OP_SUM); /* f32: no cast */
    assert_int_equal(o1->dtype, IR_F32);
    assert_int_equal(out_in(g, 2)->op, IR_OP_MATMUL);
    assert_int_equal(out_in(g, 3)->op, IR_OP_ADD); /* K = 3: the unrolled sum */
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* Follows reshapes and permutes down to the first other node. */
static ir_id unview(const ir_graph *g, ir_id v) {
    while (g->nodes[v].op == IR_OP_RESHAPE || g->nodes[v].op == IR_OP_PERMUTE)
        v = ir_in(g, &g->nodes[v], 0);
    return v;
}

/* [simplify.contract]: sum(x[:, None, :] * y[None, :, :], -1) at N 40, M 37, K 33 becomes
 * x @ permute(y) with no permute after it; the b-only axis first (y[:, None] * x[None]) swaps the
 * operands; K = 8, a product that is also returned and an unbound N keep the reduction. */
static void test_contract(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    ir_dim nd = IR_DIM_SYM(ir_sym_get(g, "N"));
    const ir_shape sx = {2, {40, 33}}, sy = {2, {37, 33}}, s8 = {2, {40, 8}}, sy8 = {2, {37, 8}};
    const ir_shape sxn = {3, {40, 1, 33}}, syn = {3, {1, 37, 33}}, sys = {3, {37, 1, 33}};
    const ir_shape sxs = {3, {1, 40, 33}}, sx8 = {3, {40, 1, 8}}, sy8n = {3, {1, 37, 8}};
    const ir_shape su = {2, {nd, 33}}, sun = {3, {nd, 1, 33}};
    ir_id x = ir_add_input(g, "x", IR_F32, &sx), y = ir_add_input(g, "y", IR_F32, &sy);
    ir_id x8 = ir_add_input(g, "x8", IR_F32, &s8), y8 = ir_add_input(g, "y8", IR_F32, &sy8);
    ir_id xu = ir_add_input(g, "xu", IR_F32, &su);
    ir_id xr = ir_add_reshape(g, x, &sxn), yr = ir_add_reshape(g, y, &syn);
    ir_id p0 = ir_add_binary(g, IR_OP_MUL, xr, yr);
    ir_id p1 = ir_add_binary(g, IR_OP_MUL, ir_add_reshape(g, x, &sxs), ir_add_reshape(g, y, &sys));
    ir_id p2 =
        ir_add_binary(g, IR_OP_MUL, ir_add_reshape(g, x8, &sx8), ir_add_reshape(g, y8, &sy8n));
    ir_id p3 = ir_add_binary(g, IR_OP_MUL, xr, yr);
    ir_id p4 = ir_add_binary(g, IR_OP_MUL, ir_add_reshape(g, xu, &sun), yr);
    ir_id outs[6] = {ir_add_reduce(g, IR_OP_SUM, p0, 1u << 2, false),
                     ir_add_reduce(g, IR_OP_SUM, p1, 1u << 2, false),
                     ir_add_reduce(g, IR_OP_SUM, p2, 1u << 2, false),
                     ir_add_reduce(g, IR_OP_SUM, p3, 1u << 2, false),
                     p3,
                     ir_add_reduce(g, IR_OP_SUM, p4, 1u << 2, false)};
    ir_add_output(g, outs, 6);
    assert_true(run_simplify(g, &f));
    const ir_node *m0 = out_in(g, 0), *m1 = out_in(g, 1);
    assert_int_equal(m0->op, IR_OP_MATMUL);
    assert_int_equal(ir_in(g, m0, 0), x);
    const ir_node *b0 = &g->nodes[ir_in(g, m0, 1)];
    assert_int_equal(b0->op, IR_OP_PERMUTE);
    assert_int_equal(unview(g, ir_in(g, m0, 1)), y);
    assert_int_equal(m1->op, IR_OP_MATMUL); /* [37, 40]: y @ x^T */
    assert_int_equal(unview(g, ir_in(g, m1, 0)), y);
    assert_int_equal(unview(g, ir_in(g, m1, 1)), x);
    const ir_shape s1 = {2, {37, 40}};
    assert_true(ir_shape_eq(&m1->shape, &s1));
    assert_int_equal(out_in(g, 2)->op, IR_OP_SUM); /* K = 8 */
    assert_int_equal(out_in(g, 3)->op, IR_OP_SUM); /* the product is returned too */
    assert_int_equal(out_in(g, 5)->op, IR_OP_SUM); /* N unbound */
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* [simplify.cast_before_reshape]: bf16(reshape(x * 2)) becomes reshape(bf16(x * 2)) (the cast in
 * the product's shape); a cast of a reshaped input stays as it is. */
static void test_cast_before_reshape(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    const ir_shape s3 = {3, {4, 2, 8}}, s2 = {2, {4, 16}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s3);
    ir_id m = ir_add_binary(g, IR_OP_MUL, x, ir_add_const(g, 2.0, IR_F32));
    ir_id outs[2] = {ir_add_cast(g, ir_add_reshape(g, m, &s2), IR_BF16),
                     ir_add_cast(g, ir_add_reshape(g, x, &s2), IR_BF16)};
    ir_add_output(g, outs, 2);
    assert_true(run_simplify(g, &f));
    const ir_node *r = out_in(g, 0);
    assert_int_equal(r->op, IR_OP_RESHAPE);
    assert_int_equal(r->dtype, IR_BF16);
    assert_true(ir_shape_eq(&r->shape, &s2));
    const ir_node *c = &g->nodes[ir_in(g, r, 0)];
    assert_int_equal(c->op, IR_OP_CAST);
    assert_true(ir_shape_eq(&c->shape, &s3));
    assert_int_equal(g->nodes[ir_in(g, c, 0)].op, IR_OP_MUL);
    assert_int_equal(out_in(g, 1)->op, IR_OP_CAST);
    assert_false(run_simplify(g, &f));
    ir_graph_free(g);
}

/* softmax(q @ kT) @ v at head dim 7 and value dim 1 keeps both products (the fuser's attention
 * pattern), while relu(x @ w1) @ w2 (no reduction between) still unrolls its K = 3 product. */
static void test_degenerate_attention_kept(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f);
    ir_graph *g = ir_graph_new("t", NULL);
    const ir_shape sq = {2, {16, 7}}, sk = {2, {7, 16}}, sv = {2, {16, 1}};
    const ir_shape sx = {2, {16, 3}}, s1 = {2, {3, 32}}, s2 = {2, {32, 4}};
    ir_id q = ir_add_input(g, "q", IR_F32, &sq), kt = ir_add_input(g, "kt", IR_F32, &sk);
    ir_id v = ir_add_input(g, "v", IR_F32, &sv), x = ir_add_input(g, "x", IR_F32, &sx);
    ir_id w1 = ir_add_input(g, "w1", IR_F32, &s1), w2 = ir_add_input(g, "w2", IR_F32, &s2);
    ir_id s = ir_add_matmul(g, q, kt);
    ir_id e = ir_add_unary(
        g, IR_OP_EXP, ir_add_binary(g, IR_OP_SUB, s, ir_add_reduce(g, IR_OP_MAX, s, 2u, true)));
    ir_id p = ir_add_binary(g, IR_OP_DIV, e, ir_add_reduce(g, IR_OP_SUM, e, 2u, true));
    ir_id outs[2] = {ir_add_matmul(g, p, v),
                     ir_add_matmul(g, ir_add_unary(g, IR_OP_RELU, ir_add_matmul(g, x, w1)), w2)};
    ir_add_output(g, outs, 2);
    assert_true(run_simplify(g, &f));
    const ir_node *o = out_in(g, 0), *o2 = out_in(g, 1);
    assert_int_equal(o->op, IR_OP_MATMUL);
    const ir_node *pn = &g->nodes[ir_in(g, o, 0)], *en = &g->nodes[ir_in(g, pn, 0)];
    const ir_node *sub = &g->nodes[ir_in(g, en, 0)];
    assert_int_equal(g->nodes[ir_in(g, sub, 0)].op, IR_OP_MATMUL);
    assert_int_equal(o2->op, IR_OP_MATMUL);
    const ir_node *rl = &g->nodes[ir_in(g, o2, 0)];
    assert_int_equal(rl->op, IR_OP_RELU);
    assert_int_equal(g->nodes[ir_in(g, rl, 0)].op, IR_OP_ADD);
    ir_graph_free(g);
}

/* pass_placed_at and pass_placed_apply: each appended node lands just before the node it was
 * recorded for (those of one node in the order appended), takes that node's source location, and
 * the inputs follow; the record is left empty. */
static void test_placed(void **state) {
    (void)state;
    ir_graph *g = ir_graph_new("placed", NULL);
    ir_id x = ir_add_input(g, "x", IR_F32, &S23);
    ir_id a = ir_add_unary(g, IR_OP_EXP, x);
    ir_id b = ir_add_unary(g, IR_OP_NEG, a);
    g->nodes[a].line = 5, g->nodes[b].line = 6, g->nodes[b].col = 3;
    ir_add_output(g, &b, 1);
    uint32_t n0 = g->n;
    pass_placed p = {0};
    ir_id t1 = pass_placed_at(g, &p, ir_add_unary(g, IR_OP_ABS, x), b);
    ir_id t2 = pass_placed_at(g, &p, ir_add_unary(g, IR_OP_RELU, t1), b);
    assert_int_equal(pass_placed_at(g, &p, ir_add_unary(g, IR_OP_TANH, x), a), t2 + 1);
    assert_int_equal(p.n, 3);
    ir_set_in(g, &g->nodes[b], 0, t2);
    pass_placed_apply(g, n0, &p);
    assert_null(p.before);
    assert_int_equal(p.n, 0);
    assert_true(ir_verify(g, stderr));
    const int ops[] = {IR_OP_INPUT, IR_OP_TANH, IR_OP_EXP,   IR_OP_ABS,
                       IR_OP_RELU,  IR_OP_NEG,  IR_OP_OUTPUT};
    const uint32_t lines[] = {0, 5, 5, 6, 6, 6, 0};
    assert_int_equal(g->n, 7);
    for (ir_id i = 0; i < g->n; i++) {
        assert_int_equal(g->nodes[i].op, ops[i]);
        if (i != 0 && i != 6) assert_int_equal(g->nodes[i].line, lines[i]);
    }
    assert_int_equal(g->nodes[3].col, 3);
    assert_int_equal(ir_in(g, &g->nodes[4], 0), 3);
    assert_int_equal(ir_in(g, &g->nodes[5], 0), 4);
    ir_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identities),
        cmocka_unit_test(test_float_zero_kept),
        cmocka_unit_test(test_int_times_zero),
        cmocka_unit_test(test_keeps_dtype_and_shape),
        cmocka_unit_test(test_cast_chains),
        cmocka_unit_test(test_neg_and_pow),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_permute_reshape),
        cmocka_unit_test(test_scalar_broadcast),
        cmocka_unit_test(test_name_moves),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_reshape_operand),
        cmocka_unit_test(test_iota_extreme),
        cmocka_unit_test(test_slice_of_biased_product),
        cmocka_unit_test(test_small_k),
        cmocka_unit_test(test_matvec),
        cmocka_unit_test(test_degenerate_attention_kept),
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_cast_before_reshape),
        cmocka_unit_test(test_placed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
