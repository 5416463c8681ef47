/* test_fuse.c - the fusion planner: plans of hand-built graphs (softmax,
 * layernorm, rmsnorm, attention, matmul epilogues, siblings, views, column
 * reductions), plan invariants (topological region order, nothing over the
 * budget, fused traffic never above unfused, determinism), --explain, and
 * the public suite through the frontend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "passes/passes.h"

/* ---- helpers --------------------------------------------------------------- */

static ir_shape shp2(int64_t a, int64_t b) { return (ir_shape){.rank = 2, .dim = {a, b}}; }
static ir_shape shp1(int64_t a) { return (ir_shape){.rank = 1, .dim = {a}}; }

/* Plans g with the given settings; explain text (if wanted) goes to *ex. */
static void plan(ir_graph *g, bool no_fuse, int64_t budget, char **ex) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    size_t len = 0;
    FILE *e = ex ? open_memstream(ex, &len) : NULL;
    pass_ctx c = {.diag = &d,
                  .gpu = pass_gpu_find("h200"),
                  .sram_budget = budget,
                  .no_fuse = no_fuse,
                  .explain = e};
    pass_fuse(g, &c);
    if (e) fclose(e);
    assert_int_equal(d.errors, 0);
}

/* p evaluated with every unbound symbol set to 64. */
static double poly_at(const ir_graph *g, const ir_poly *p) {
    double v = 0;
    assert_false(p->overflow);
    for (int i = 0; i < p->nterms; i++) {
        double t = p->t[i].coef;
        for (int k = 0; k < p->t[i].nsym; k++) {
            int64_t sv = g->syms[p->t[i].sym[k]].value;
            t *= sv >= 0 ? (double)sv : 64.0;
        }
        v += t;
    }
    return v;
}

/* Sum of bytes read + written + spilled over all regions (unbound dims
 * evaluated at 64). */
static double traffic(const ir_graph *g) {
    pass_index u;
    assert_true(pass_index_build(g, &u));
    double t = 0;
    for (uint32_t r = 0; r < g->nregions; r++) {
        pass_cost pc;
        pass_region_cost_ix(g, &u, r, pass_gpu_find("h200"), &pc);
        t += poly_at(g, &pc.bytes_read) + poly_at(g, &pc.bytes_written) + poly_at(g, &pc.spilled);
    }
    pass_index_free(&u);
    return t;
}

/* Checks what every plan guarantees: compute nodes in regions, leaves and
 * the output in none, regions in topological order, no region over the
 * budget, a valid graph. */
static void check_invariants(const ir_graph *g, int64_t budget) {
    assert_true(ir_verify(g, stderr));
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST || n->op == IR_OP_OUTPUT) {
            assert_int_equal(n->region, IR_NONE);
            continue;
        }
        if (!pass_is_compute((ir_op)n->op)) continue;
        if (n->region == IR_NONE) ir_print(g, stderr);
        assert_int_not_equal(n->region, IR_NONE);
        for (unsigned k = 0; k < n->nin; k++) {
            ir_id src[16];
            unsigned ns = pass_view_sources(g, ir_in(g, n, k), src, 16);
            for (unsigned s = 0; s < ns; s++) {
                uint32_t pr = g->nodes[src[s]].region;
                if (pr != IR_NONE && pass_is_compute((ir_op)g->nodes[src[s]].op))
                    assert_true(pr <= n->region);
            }
        }
    }
    for (uint32_t r = 0; r < g->nregions; r++) {
        const ir_region *rg = &g->regions[r];
        assert_true(rg->sram_bytes <= budget);
        /* the kind contract of docs/fusion.md */
        unsigned nmm = 0, nred = 0, nel = 0;
        const ir_shape *dom = &g->nodes[rg->anchor].shape;
        if (rg->kind == IR_RK_REDUCTION) dom = &g->nodes[ir_in(g, &g->nodes[rg->anchor], 0)].shape;
        for (ir_id i = 0; i < g->n; i++) {
            const ir_node *n = &g->nodes[i];
            if (n->region != r || !pass_is_compute((ir_op)n->op)) continue;
            unsigned t = ir_op_traits((ir_op)n->op);
            nmm += (t & IR_T_MATMUL) != 0;
            nel += (t & (IR_T_ELEM | IR_T_GATHER)) != 0; /* a pick is pointwise work */
            if (t & IR_T_REDUCE) {
                nred++;
                if (rg->kind == IR_RK_REDUCTION) {
                    assert_true(ir_shape_eq(&g->nodes[ir_in(g, n, 0)].shape, dom));
                    assert_int_equal(n->a.red.axes, rg->red_axes);
                }
            }
        }
        switch ((ir_region_kind)rg->kind) {
            case IR_RK_POINTWISE: assert_true(nmm == 0 && nred == 0 && nel > 0); break;
            case IR_RK_REDUCTION: assert_true(nmm == 0 && nred > 0); break;
            case IR_RK_MATMUL: assert_true(nmm >= 1 && nred == 0); break;
            case IR_RK_ATTENTION: assert_true(nmm == 2 && nred == 2); break;
            default: assert_true(nmm + nred + nel == 0); break;
        }
    }
}

/* Plans g fused and unfused (on a clone) at `budget`; checks invariants of
 * both and that fused traffic is never above unfused. Returns the kernels. */
static uint32_t plan_and_check(ir_graph *g, int64_t budget) {
    ir_graph *u = ir_graph_clone(g);
    plan(u, true, budget, NULL);
    check_invariants(u, budget ? budget : 232448);
    plan(g, false, budget, NULL);
    check_invariants(g, budget ? budget : 232448);
    assert_true(traffic(g) <= traffic(u));
    uint32_t n = g->nregions;
    ir_graph_free(u);
    return n;
}

/* softmax written out as the prelude does: exp(x - max) / sum. */
static ir_id softmax_of(ir_graph *g, ir_id x, uint32_t axes) {
    ir_id m = ir_add_reduce(g, IR_OP_MAX, x, axes, true);
    ir_id e = ir_add_unary(g, IR_OP_EXP, ir_add_binary(g, IR_OP_SUB, x, m));
    ir_id s = ir_add_reduce(g, IR_OP_SUM, e, axes, true);
    return ir_add_binary(g, IR_OP_DIV, e, s);
}

static ir_graph *g_softmax(int64_t m, int64_t n, uint32_t axes) {
    ir_graph *g = ir_graph_new("softmax", NULL);
    ir_shape s = shp2(m, n);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id y = softmax_of(g, x, axes);
    ir_add_output(g, &y, 1);
    return g;
}

/* layernorm over the last axis in f32 of a bf16 input, as the prelude. */
static ir_graph *g_layernorm(int64_t m, int64_t n) {
    ir_graph *g = ir_graph_new("ln", NULL);
    ir_shape s = shp2(m, n), sw = shp1(n);
    ir_id x = ir_add_input(g, "x", IR_BF16, &s), w = ir_add_input(g, "w", IR_BF16, &sw);
    ir_id b = ir_add_input(g, "b", IR_BF16, &sw);
    ir_id xf = ir_add_cast(g, x, IR_F32);
    ir_id mu = ir_add_reduce(g, IR_OP_MEAN, xf, 2, true);
    ir_id d = ir_add_binary(g, IR_OP_SUB, xf, mu);
    ir_id var = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, d, d), 2, true);
    ir_id r = ir_add_unary(g, IR_OP_RSQRT,
                           ir_add_binary(g, IR_OP_ADD, var, ir_add_const(g, 1e-5, IR_F32)));
    ir_id y = ir_add_binary(g, IR_OP_ADD,
                            ir_add_binary(g, IR_OP_MUL, ir_add_binary(g, IR_OP_MUL, d, r), w), b);
    y = ir_add_cast(g, y, IR_BF16);
    ir_add_output(g, &y, 1);
    return g;
}

/* h = x + r; y = bf16(rmsnorm(f32(h))) * w; returns (y, h). */
static ir_graph *g_add_rmsnorm(int64_t m, int64_t n) {
    ir_graph *g = ir_graph_new("add_rmsnorm", NULL);
    ir_shape s = shp2(m, n), sw = shp1(n);
    ir_id x = ir_add_input(g, "x", IR_BF16, &s), r = ir_add_input(g, "r", IR_BF16, &s);
    ir_id w = ir_add_input(g, "w", IR_BF16, &sw);
    ir_id h = ir_add_binary(g, IR_OP_ADD, x, r);
    ir_id hf = ir_add_cast(g, h, IR_F32);
    ir_id ms = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, hf, hf), 2, true);
    ir_id rs = ir_add_unary(g, IR_OP_RSQRT,
                            ir_add_binary(g, IR_OP_ADD, ms, ir_add_const(g, 1e-6, IR_F32)));
    ir_id y = ir_add_binary(g, IR_OP_MUL,
                            ir_add_cast(g, ir_add_binary(g, IR_OP_MUL, hf, rs), IR_BF16), w);
    ir_id outs[2] = {y, h};
    ir_add_output(g, outs, 2);
    return g;
}

/* attention over [B*H, S, D] (rank 3) in bf16; `leak` also returns the scores. */
static ir_graph *g_attention(int64_t bh, int64_t s, int64_t d, bool leak) {
    ir_graph *g = ir_graph_new("attention", NULL);
    ir_shape sh = {.rank = 3, .dim = {bh, s, d}};
    ir_id q = ir_add_input(g, "q", IR_BF16, &sh), k = ir_add_input(g, "k", IR_BF16, &sh);
    ir_id v = ir_add_input(g, "v", IR_BF16, &sh);
    uint8_t perm[3] = {0, 2, 1};
    ir_id kt = ir_add_permute(g, k, perm);
    ir_id sc = ir_add_cast(g, ir_add_matmul(g, q, kt), IR_F32);
    sc = ir_add_binary(g, IR_OP_MUL, sc, ir_add_const(g, 0.125, IR_F32));
    ir_id p = ir_add_cast(g, softmax_of(g, sc, 4), IR_BF16);
    ir_id o = ir_add_matmul(g, p, v);
    ir_id outs[2] = {o, sc};
    ir_add_output(g, outs, leak ? 2 : 1);
    return g;
}

/* gelu_tanh(a @ b + c) with optional f32->bf16 operand casts. */
static ir_graph *g_mm_bias_gelu(int64_t m, int64_t n, int64_t k, bool cast_a) {
    ir_graph *g = ir_graph_new("mm", NULL);
    ir_shape sa = shp2(m, k), sb = shp2(k, n), sc = shp1(n);
    ir_id a = ir_add_input(g, "a", cast_a ? IR_F32 : IR_BF16, &sa);
    ir_id b = ir_add_input(g, "b", IR_BF16, &sb), c = ir_add_input(g, "c", IR_BF16, &sc);
    if (cast_a) a = ir_add_cast(g, a, IR_BF16);
    ir_id y =
        ir_add_unary(g, IR_OP_GELU_TANH, ir_add_binary(g, IR_OP_ADD, ir_add_matmul(g, a, b), c));
    ir_add_output(g, &y, 1);
    return g;
}

static ir_graph *g_mlp(int64_t m, int64_t d, int64_t f) {
    ir_graph *g = ir_graph_new("mlp", NULL);
    ir_shape sx = shp2(m, d), s1 = shp2(d, f), s2 = shp2(f, d);
    ir_id x = ir_add_input(g, "x", IR_BF16, &sx), w1 = ir_add_input(g, "w1", IR_BF16, &s1);
    ir_id w3 = ir_add_input(g, "w3", IR_BF16, &s1), w2 = ir_add_input(g, "w2", IR_BF16, &s2);
    ir_id h = ir_add_binary(g, IR_OP_MUL, ir_add_unary(g, IR_OP_SILU, ir_add_matmul(g, x, w1)),
                            ir_add_matmul(g, x, w3));
    ir_id y = ir_add_matmul(g, h, w2);
    ir_add_output(g, &y, 1);
    return g;
}

static uint32_t count_kind(const ir_graph *g, ir_region_kind k) {
    uint32_t n = 0;
    for (uint32_t r = 0; r < g->nregions; r++) n += g->regions[r].kind == k;
    return n;
}

/* ---- tests ------------------------------------------------------------------- */

static void test_elementwise_chain(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("chain", NULL);
    ir_shape s = shp1(4096);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id t = ir_add_unary(
        g, IR_OP_TANH,
        ir_add_binary(g, IR_OP_ADD, ir_add_binary(g, IR_OP_MUL, x, ir_add_const(g, 1.5, IR_F32)),
                      ir_add_const(g, 0.5, IR_F32)));
    ir_id y = ir_add_binary(g, IR_OP_MUL, ir_add_unary(g, IR_OP_SIGMOID, t),
                            ir_add_unary(g, IR_OP_EXP, ir_add_unary(g, IR_OP_NEG, x)));
    ir_add_output(g, &y, 1);
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_int_equal(g->regions[0].kind, IR_RK_POINTWISE);
    assert_true(g->regions[0].fusion & IR_FUSE_VERTICAL);
    assert_int_equal(g->regions[0].nout, 1);
    ir_graph_free(g);
}

static void test_softmax_onchip_and_budget(void **st) {
    (void)st;
    ir_graph *g = g_softmax(64, 4096, 2);
    assert_int_equal(plan_and_check(g, 0), 1);
    ir_region *r = &g->regions[0];
    assert_int_equal(r->kind, IR_RK_REDUCTION);
    assert_int_equal(r->strategy, IR_RED_ONCHIP);
    assert_int_equal(r->stages, 2);
    assert_int_equal(r->red_extent, 4096);
    /* one f32 row held + 8 warps x 4 B scratch per reduction (2) */
    assert_int_equal(r->sram_bytes, 4096 * 4 + 2 * 32);
    assert_int_equal(r->spilled_bytes, 0);
    double fused = traffic(g);
    assert_true(fused == 2.0 * 64 * 4096 * 4);
    /* below the row's need: online, one re-read of x counted as spilled */
    plan(g, false, 16384, NULL);
    check_invariants(g, 16384);
    assert_int_equal(g->nregions, 1);
    assert_int_equal(g->regions[0].strategy, IR_RED_ONLINE);
    assert_int_equal(g->regions[0].passes, 2);
    assert_int_equal(g->regions[0].spilled_bytes, 64 * 4096 * 4);
    assert_true(traffic(g) == fused + 64.0 * 4096 * 4);
    /* a tiny budget still plans (one warp per row, no shared memory) */
    plan(g, false, 16, NULL);
    check_invariants(g, 16);
    assert_int_equal(g->regions[0].sram_bytes, 0);
    ir_graph_free(g);
}

static void test_softmax_explain_budget(void **st) {
    (void)st;
    /* 150000 f32: longer than a cluster of 8 x 512 threads holds at 16 each (cluster_rows) */
    ir_graph *g = g_softmax(4096, 150000, 2);
    char *ex = NULL;
    plan(g, false, 0, &ex);
    assert_non_null(strstr(ex, "[reduction.budget]"));
    assert_non_null(strstr(ex, "600064 B on chip"));
    assert_non_null(strstr(ex, "> budget 232448 B"));
    assert_non_null(strstr(ex, "fits with --sram-budget >= 600064"));
    free(ex);
    plan(g, false, 600064, &ex);
    assert_int_equal(g->regions[0].strategy, IR_RED_ONCHIP);
    assert_null(strstr(ex, "reduction.budget"));
    free(ex);
    ir_graph_free(g);
}

static void test_column_and_middle_reductions(void **st) {
    (void)st;
    ir_graph *g = g_softmax(512, 64, 1); /* softmax over axis 0: a column reduction */
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_int_equal(g->regions[0].red_axes, 1u);
    assert_int_equal(g->regions[0].red_extent, 512);
    ir_graph_free(g);
    g = ir_graph_new("mid", NULL);
    ir_shape s = {.rank = 3, .dim = {8, 128, 32}};
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id y =
        ir_add_binary(g, IR_OP_SUB, x, ir_add_reduce(g, IR_OP_MEAN, x, 2, true)); /* middle axis */
    ir_add_output(g, &y, 1);
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_int_equal(g->regions[0].kind, IR_RK_REDUCTION);
    ir_graph_free(g);
}

static void test_layernorm_rmsnorm(void **st) {
    (void)st;
    ir_graph *g = g_layernorm(256, 4096);
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_int_equal(g->regions[0].strategy, IR_RED_ONCHIP);
    ir_graph_free(g);
    g = g_add_rmsnorm(256, 4096);
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_int_equal(g->regions[0].nout, 2); /* y and h */
    /* bytes: read x, r (bf16) and w; write y and h */
    double e = 256.0 * 4096;
    assert_true(traffic(g) == 2 * e * 2 + 4096 * 2 + 2 * e * 2);
    ir_graph_free(g);
}

static void test_attention(void **st) {
    (void)st;
    ir_graph *g = g_attention(8, 1024, 128, false);
    assert_int_equal(plan_and_check(g, 0), 1);
    ir_region *r = &g->regions[0];
    assert_int_equal(r->kind, IR_RK_ATTENTION);
    assert_int_equal(r->strategy, IR_RED_ONLINE);
    assert_int_equal(r->sram_bytes, pass_attention_sram(128, 64, 128, 128, 2, 2));
    /* traffic: q, k, v in, o out; never the S x S scores */
    assert_true(traffic(g) == 4.0 * 8 * 1024 * 128 * 2);
    /* the transposed k is a view inside the region, not a copy */
    assert_int_equal(count_kind(g, IR_RK_COPY), 0);
    /* a budget below the smallest plan splits the pattern */
    char *ex = NULL;
    plan(g, false, 4096, &ex);
    check_invariants(g, 4096);
    assert_int_equal(count_kind(g, IR_RK_ATTENTION), 0);
    assert_non_null(strstr(ex, "[attention.budget]"));
    free(ex);
    ir_graph_free(g);
    /* scores also returned: they must reach HBM */
    g = g_attention(8, 256, 64, true);
    ex = NULL;
    plan(g, false, 0, &ex);
    check_invariants(g, 232448);
    assert_int_equal(count_kind(g, IR_RK_ATTENTION), 0);
    assert_non_null(strstr(ex, "[attention.escape]"));
    free(ex);
    ir_graph_free(g);
}

/* [attention.epilogue_input]: o * sigmoid(g), g an input of the output's shape: the attention
 * kernel's epilogue computes sigmoid(g) (one kernel reading q, k, v and g); when sigmoid(g) is
 * also returned it stays a kernel of its own. */
static void test_attention_epilogue_input(void **st) {
    (void)st;
    for (int ret = 0; ret < 2; ret++) {
        ir_graph *g = ir_graph_new("gated", NULL);
        ir_shape sh = {.rank = 3, .dim = {8, 1024, 64}};
        ir_id q = ir_add_input(g, "q", IR_BF16, &sh), k = ir_add_input(g, "k", IR_BF16, &sh);
        ir_id v = ir_add_input(g, "v", IR_BF16, &sh), gt = ir_add_input(g, "g", IR_BF16, &sh);
        uint8_t perm[3] = {0, 2, 1};
        ir_id sc = ir_add_cast(g, ir_add_matmul(g, q, ir_add_permute(g, k, perm)), IR_F32);
        sc = ir_add_binary(g, IR_OP_MUL, sc, ir_add_const(g, 0.125, IR_F32));
        ir_id o = ir_add_matmul(g, ir_add_cast(g, softmax_of(g, sc, 4), IR_BF16), v);
        ir_id sg = ir_add_unary(g, IR_OP_SIGMOID, gt);
        ir_id outs[2] = {ir_add_binary(g, IR_OP_MUL, o, sg), sg};
        ir_add_output(g, outs, ret ? 2 : 1);
        ir_graph *h = ir_graph_clone(g);
        assert_int_equal(plan_and_check(g, 0), ret ? 2 : 1);
        assert_int_equal(count_kind(g, IR_RK_ATTENTION), 1);
        if (!ret) assert_true(traffic(g) == 5.0 * 8 * 1024 * 64 * 2);
        char *ex = NULL;
        plan(h, false, 0, &ex);
        assert_true((strstr(ex, "[attention.epilogue_input]") != NULL) == !ret);
        free(ex);
        ir_graph_free(h);
        ir_graph_free(g);
    }
}

static void test_matmul_epilogue_prologue(void **st) {
    (void)st;
    ir_graph *g = g_mm_bias_gelu(512, 256, 128, true);
    assert_int_equal(plan_and_check(g, 0), 1);
    ir_region *r = &g->regions[0];
    assert_int_equal(r->kind, IR_RK_MATMUL);
    assert_true(r->fusion & IR_FUSE_EPILOGUE);
    /* reads a (f32, cast in the prologue), b, c; writes y */
    assert_true(traffic(g) == 512.0 * 128 * 4 + 128.0 * 256 * 2 + 256 * 2 + 512.0 * 256 * 2);
    assert_int_equal(r->sram_bytes, pass_matmul_sram(128, 128, 64, 1, 2, 3));
    ir_graph_free(g);
}

/* h = x + a @ w (bf16), then an rmsnorm of h feeding another product:
 * f32(h) and its square go to the norm's kernel, which reads h (stored
 * anyway for the residual) instead of two f32 copies written by the
 * epilogue; returning f32(h) keeps it in the epilogue. */
static ir_graph *g_mm_norm(bool ret_wide) {
    ir_graph *g = ir_graph_new("mmnorm", NULL);
    ir_shape sx = shp2(256, 512), sw = shp2(512, 512);
    ir_id x = ir_add_input(g, "x", IR_BF16, &sx), a = ir_add_input(g, "a", IR_BF16, &sx);
    ir_id w = ir_add_input(g, "w", IR_BF16, &sw), w2 = ir_add_input(g, "w2", IR_BF16, &sw);
    ir_id h = ir_add_binary(g, IR_OP_ADD, x, ir_add_matmul(g, a, w));
    ir_id hf = ir_add_cast(g, h, IR_F32);
    ir_id ms = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, hf, hf), 2, true);
    ir_id r = ir_add_unary(g, IR_OP_RSQRT,
                           ir_add_binary(g, IR_OP_ADD, ms, ir_add_const(g, 1e-6, IR_F32)));
    ir_id m = ir_add_cast(g, ir_add_binary(g, IR_OP_MUL, hf, r), IR_BF16);
    ir_id outs[2] = {ir_add_binary(g, IR_OP_ADD, h, ir_add_matmul(g, m, w2)), hf};
    ir_add_output(g, outs, ret_wide ? 2 : 1);
    return g;
}

static void test_matmul_epilogue_recompute(void **st) {
    (void)st;
    ir_graph *g = g_mm_norm(false);
    assert_int_equal(plan_and_check(g, 0), 3);
    ir_region *r = &g->regions[0];
    assert_int_equal(r->kind, IR_RK_MATMUL);
    assert_int_equal(r->nout, 1); /* h only */
    /* reads x, a, w; writes h; the norm reads h; the last product reads m, w2, h */
    double e = 3 * 256.0 * 512 * 2 + 512.0 * 512 * 2 + 2 * 256.0 * 512 * 2 + 256.0 * 512 * 2 +
               512.0 * 512 * 2 + 2 * 256.0 * 512 * 2;
    assert_true(traffic(g) == e);
    ir_graph_free(g);
    g = g_mm_norm(true);
    plan_and_check(g, 0);
    assert_int_equal(g->regions[0].kind, IR_RK_MATMUL);
    assert_int_equal(g->regions[0].nout, 2); /* h and the returned f32(h) */
    ir_graph_free(g);
}

/* softmax(f32(q @ k^T) * 0.125) returned as bf16 probabilities as well as used by p @ v
 * (output_attentions=True): the scaled f32 scores stay out of the first product's epilogue, which
 * stores the bf16 product; the softmax's kernel recomputes the scores from it (the returned
 * probabilities come after the reduction, so they are that kernel's store). */
static void test_matmul_epilogue_recompute_probs(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("probs", NULL);
    ir_shape sq = shp2(256, 64), sk = shp2(64, 256);
    ir_id q = ir_add_input(g, "q", IR_BF16, &sq), k = ir_add_input(g, "k", IR_BF16, &sk);
    ir_id v = ir_add_input(g, "v", IR_BF16, &sq);
    ir_id mm = ir_add_matmul(g, q, k);
    ir_id sf =
        ir_add_binary(g, IR_OP_MUL, ir_add_cast(g, mm, IR_F32), ir_add_const(g, 0.125, IR_F32));
    ir_id mx = ir_add_reduce(g, IR_OP_MAX, sf, 2, true);
    ir_id e = ir_add_unary(g, IR_OP_EXP, ir_add_binary(g, IR_OP_SUB, sf, mx));
    ir_id p = ir_add_cast(
        g, ir_add_binary(g, IR_OP_DIV, e, ir_add_reduce(g, IR_OP_SUM, e, 2, true)), IR_BF16);
    ir_id outs[2] = {ir_add_matmul(g, p, v), p};
    ir_add_output(g, outs, 2);
    plan_and_check(g, 0);
    assert_int_equal(g->regions[g->nodes[mm].region].kind, IR_RK_MATMUL);
    assert_int_not_equal(g->nodes[sf].region, g->nodes[mm].region);
    ir_graph_free(g);
}

static void test_mlp_horizontal(void **st) {
    (void)st;
    ir_graph *g = g_mlp(256, 512, 1024);
    assert_int_equal(plan_and_check(g, 0), 2);
    assert_int_equal(g->regions[0].kind, IR_RK_MATMUL);
    assert_true(g->regions[0].fusion & IR_FUSE_HORIZONTAL);
    assert_int_equal(g->regions[0].rows, 2); /* two products share x */
    char *ex = NULL;
    plan(g, false, 0, &ex);
    assert_non_null(strstr(ex, "[matmul.chain]"));
    free(ex);
    ir_graph_free(g);
}

static void test_siblings(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("sib", NULL);
    ir_shape s = shp2(64, 256);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id outs[4] = {ir_add_unary(g, IR_OP_EXP, x), ir_add_unary(g, IR_OP_SIN, x),
                     ir_add_reduce(g, IR_OP_SUM, x, 2, false),
                     ir_add_reduce(g, IR_OP_MAX, x, 2, false)};
    ir_add_output(g, outs, 4);
    assert_int_equal(plan_and_check(g, 0), 2);
    for (uint32_t r = 0; r < 2; r++) assert_true(g->regions[r].fusion & IR_FUSE_HORIZONTAL);
    assert_int_equal(g->regions[0].nout, 2);
    assert_int_equal(g->regions[1].nout, 2);
    char *ex = NULL;
    plan(g, false, 0, &ex);
    assert_non_null(strstr(ex, "kept apart [reduction.side_outputs]: the reduction"));
    assert_non_null(strstr(ex, "has 64 rows, fewer than the 132 SMs"));
    free(ex);
    ir_graph_free(g);
}

/* [reduction.side_outputs]: with at least as many rows as SMs the pointwise siblings of the row
 * reductions are stored by the reduction kernel (one kernel, four outputs, x read once); a
 * pointwise sibling of another domain stays apart under the rule's name. */
static void test_side_outputs(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("side", NULL);
    ir_shape s = shp2(1024, 256);
    ir_id x = ir_add_input(g, "x", IR_F32, &s);
    ir_id outs[4] = {ir_add_unary(g, IR_OP_EXP, x), ir_add_unary(g, IR_OP_SIN, x),
                     ir_add_reduce(g, IR_OP_SUM, x, 2, false),
                     ir_add_reduce(g, IR_OP_MAX, x, 2, false)};
    ir_add_output(g, outs, 4);
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_int_equal(g->regions[0].kind, IR_RK_REDUCTION);
    assert_int_equal(g->regions[0].nout, 4);
    char *ex = NULL;
    plan(g, false, 0, &ex);
    assert_non_null(strstr(ex, "k0: [reduction.side_outputs]"));
    assert_non_null(strstr(ex, "1048576 B not re-read"));
    free(ex);
    ir_graph_free(g);
    g = ir_graph_new("side_other", NULL);
    ir_id y = ir_add_input(g, "x", IR_F32, &s);
    const uint8_t perm[2] = {1, 0};
    ir_id outs2[2] = {ir_add_reduce(g, IR_OP_SUM, y, 2, false),
                      ir_add_unary(g, IR_OP_EXP, ir_add_permute(g, y, perm))};
    ir_add_output(g, outs2, 2);
    assert_int_equal(plan_and_check(g, 0), 2);
    plan(g, false, 0, &ex);
    assert_non_null(strstr(ex, "kept apart [reduction.side_outputs]: the pointwise kernel of"));
    free(ex);
    ir_graph_free(g);
}

static void test_small_batch(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("batch", NULL);
    ir_shape s = shp1(1000);
    ir_id a = ir_add_input(g, "a", IR_F32, &s), b = ir_add_input(g, "b", IR_F32, &s);
    ir_id outs[2] = {ir_add_unary(g, IR_OP_EXP, a), ir_add_unary(g, IR_OP_LOG, b)};
    ir_add_output(g, outs, 2);
    assert_int_equal(plan_and_check(g, 0), 1);
    assert_true(g->regions[0].fusion & IR_FUSE_HORIZONTAL);
    ir_graph_free(g);
}

/* [reduction.stats_recompute]: LoFTR's dual softmax softmax(sim, 1) * softmax(sim, 2) of sim =
 * f32(s) / 25.6: the column kernel stores only its max and sum ([4, 1, 1024] each) and the row
 * kernel recomputes sim and the column softmax from s and them, so the traffic is s read twice,
 * the statistics written and read, the output written. With sim and the column softmax returned
 * as well, nothing is recomputed: the column kernel stores both (and --explain has no such line).
 */
static void test_stats_recompute(void **st) {
    (void)st;
    for (int ret = 0; ret < 2; ret++) {
        ir_graph *g = ir_graph_new("dual", NULL);
        ir_shape s3 = {3, {4, 1024, 1024}};
        ir_id s = ir_add_input(g, "s", IR_BF16, &s3);
        ir_id sim =
            ir_add_binary(g, IR_OP_DIV, ir_add_cast(g, s, IR_F32), ir_add_const(g, 25.6, IR_F32));
        ir_id c = softmax_of(g, sim, 1u << 1);
        ir_id outs[3] = {ir_add_binary(g, IR_OP_MUL, c, softmax_of(g, sim, 1u << 2)), c, sim};
        ir_add_output(g, outs, ret ? 3 : 1);
        ir_graph *h = ir_graph_clone(g);
        assert_int_equal(plan_and_check(g, 0), 2);
        double n = 4.0 * 1024 * 1024, stats = 2 * 4.0 * 1024 * 4;
        uint32_t col = IR_NONE;
        for (uint32_t r = 0; r < g->nregions; r++)
            if (g->regions[r].red_axes == 1u << 1) col = r;
        assert_int_not_equal(col, IR_NONE);
        if (!ret) {
            assert_int_equal(g->regions[col].nout, 2); /* the max and the sum */
            assert_true(traffic(g) == 2 * n * 2 + 2 * stats + n * 4);
        } else {
            assert_true(traffic(g) > 2 * n * 2 + 2 * stats + n * 4 * 3);
        }
        char *ex = NULL;
        plan(h, false, 0, &ex);
        if (!ret) {
            assert_non_null(strstr(ex, "[reduction.stats_recompute] the reduction kernel of"));
            assert_non_null(strstr(ex, "recomputed there"));
            assert_non_null(strstr(ex, "copies kept"));
        } else {
            assert_null(strstr(ex, "[reduction.stats_recompute]"));
        }
        free(ex);
        ir_graph_free(h);
        ir_graph_free(g);
    }
}

/* [reduction.stats_recompute] with two consumers: layernorm backward from saved mu and rstd, where
 * the row kernel's g = f32(dy) is read by the column sum db and is also inside the copy of
 * g * xhat the column sum dw reads. Each column kernel gets its own copies (a copy shared by both
 * would be read by two kernels), so no kernel stores an f32 [M, D] value: the traffic is dy and x
 * read by the row kernel and again by the column sums (merged, as siblings reading dy), dx
 * written, and a few bytes per row and per column; every copy is read only inside its kernel. */
static void test_stats_recompute_two_consumers(void **st) {
    (void)st;
    const int64_t m = 8192, d = 1024;
    ir_graph *g = ir_graph_new("lnbwd", NULL);
    ir_shape s = shp2(m, d), sr = shp2(m, 1), sw = shp1(d);
    ir_id dy = ir_add_input(g, "dy", IR_BF16, &s), x = ir_add_input(g, "x", IR_BF16, &s);
    ir_id mu = ir_add_input(g, "mu", IR_F32, &sr), rs = ir_add_input(g, "rstd", IR_F32, &sr);
    ir_id w = ir_add_input(g, "w", IR_BF16, &sw);
    ir_id gf = ir_add_cast(g, dy, IR_F32);
    ir_id xh =
        ir_add_binary(g, IR_OP_MUL, ir_add_binary(g, IR_OP_SUB, ir_add_cast(g, x, IR_F32), mu), rs);
    ir_id wdy = ir_add_binary(g, IR_OP_MUL, gf, ir_add_cast(g, w, IR_F32));
    ir_id c1 = ir_add_reduce(g, IR_OP_MEAN, wdy, 2, true);
    ir_id c2 = ir_add_reduce(g, IR_OP_MEAN, ir_add_binary(g, IR_OP_MUL, wdy, xh), 2, true);
    ir_id t = ir_add_binary(g, IR_OP_SUB, ir_add_binary(g, IR_OP_SUB, wdy, c1),
                            ir_add_binary(g, IR_OP_MUL, xh, c2));
    ir_id dx = ir_add_binary(g, IR_OP_MUL, rs, t);
    ir_id dw = ir_add_reduce(g, IR_OP_SUM, ir_add_binary(g, IR_OP_MUL, gf, xh), 1, false);
    ir_id db = ir_add_reduce(g, IR_OP_SUM, gf, 1, false);
    ir_id outs[3] = {ir_add_cast(g, dx, IR_BF16), ir_add_cast(g, dw, IR_BF16),
                     ir_add_cast(g, db, IR_BF16)};
    ir_add_output(g, outs, 3);
    ir_graph *h = ir_graph_clone(g);
    assert_int_equal(plan_and_check(g, 0), 2);
    double n = (double)m * d, small = 4.0 * m * 4 + 2.0 * d * 2 + 2.0 * d * 2 + 64.0 * d * 4;
    assert_true(traffic(g) <= 2 * (2 * n * 2) + n * 2 + small);
    ir_uses u;
    assert_true(ir_uses_build(g, &u));
    unsigned copies = 0;
    for (ir_id i = 0; i < g->n; i++) {
        if (!(g->nodes[i].flags & IR_NF_RECOMPUTE)) continue;
        copies++;
        for (uint32_t k = u.start[i]; k < u.start[i + 1]; k++)
            assert_int_equal(g->nodes[u.ids[k]].region, g->nodes[i].region);
    }
    ir_uses_free(&u);
    assert_true(copies >= 6); /* g for db; g, f32(x), x - mu, xhat, g * xhat for dw */
    char *ex = NULL;
    plan(h, false, 0, &ex);
    assert_non_null(strstr(ex, "copies kept"));
    assert_null(strstr(ex, "a kernel would store a copy"));
    free(ex);
    ir_graph_free(h);
    ir_graph_free(g);
}

/* [pointwise.recompute]: a pointwise group of a smaller domain (more than the batch limit, used
 * only by the larger kernel) joins it when recomputing it per element is priced below a kernel of
 * its own: a bf16 cast (2 instructions per element) joins, exp then log (51) over 128 times the
 * elements stays apart, and --explain prints the price both ways. */
static void test_pointwise_recompute(void **st) {
    (void)st;
    for (int heavy = 0; heavy < 2; heavy++) {
        ir_graph *g = ir_graph_new("recompute", NULL);
        ir_shape s = shp2(256, 1024), s3 = {3, {256, 1024, heavy ? 128 : 8}},
                 s1 = {3, {256, 1024, 1}};
        ir_id x = ir_add_input(g, "x", heavy ? IR_F32 : IR_BF16, &s);
        ir_id y = ir_add_input(g, "y", IR_F32, &s3);
        ir_id c = heavy ? ir_add_unary(g, IR_OP_LOG, ir_add_unary(g, IR_OP_EXP, x))
                        : ir_add_cast(g, x, IR_F32);
        ir_id o = ir_add_binary(g, IR_OP_MUL, y, ir_add_reshape(g, c, &s1));
        ir_add_output(g, &o, 1);
        ir_graph *h = ir_graph_clone(g);
        assert_int_equal(plan_and_check(g, 0), heavy ? 2 : 1);
        char *ex = NULL;
        plan(h, false, 0, &ex);
        if (heavy) {
            assert_non_null(strstr(ex, "[pointwise.domain]"));
            assert_non_null(strstr(ex, "[pointwise.recompute] per element of the larger domain"));
        } else {
            assert_non_null(strstr(ex, "[pointwise.recompute]"));
            assert_non_null(strstr(ex, "is recomputed per element of [256, 1024, 8]"));
            assert_null(strstr(ex, "[pointwise.domain]"));
        }
        free(ex);
        ir_graph_free(h);
        ir_graph_free(g);
    }
}

static void test_views(void **st) {
    (void)st;
    ir_graph *g = ir_graph_new("views", NULL);
    ir_shape s = shp2(64, 32);
    ir_id x = ir_add_input(g, "x", IR_F32, &s), y = ir_add_input(g, "y", IR_F32, &s);
    uint8_t perm[2] = {1, 0};
    ir_id t = ir_add_permute(g, ir_add_binary(g, IR_OP_ADD, x, y), perm);
    ir_id z = ir_add_unary(g, IR_OP_RELU, t);
    ir_id tx = ir_add_permute(g, x, perm);
    ir_id outs[2] = {z, tx};
    ir_add_output(g, outs, 2);
    plan_and_check(g, 0);
    /* the transpose of x + y is index arithmetic inside one pointwise kernel */
    assert_int_equal(g->nodes[t].region, g->nodes[z].region);
    assert_int_equal(g->regions[g->nodes[z].region].kind, IR_RK_POINTWISE);
    /* a returned view is materialised by a copy, planned last */
    assert_int_equal(count_kind(g, IR_RK_COPY), 1);
    assert_int_equal(g->regions[g->nregions - 1].kind, IR_RK_COPY);
    assert_int_equal(g->regions[g->nregions - 1].anchor, tx);
    assert_int_equal(g->regions[g->nregions - 1].sram_bytes, 32 * 33 * 4);
    assert_int_equal(g->nregions, 2);
    ir_graph_free(g);
}

/* view.alias: a returned reshape of a computed value joins its region (no copy kernel) and
 * --explain says so; a returned reshape of an input, of a value also returned itself, and a
 * returned permute keep their copy kernels. */
static void test_view_alias(void **st) {
    (void)st;
    ir_shape s3 = {.rank = 3, .dim = {8, 4, 16}}, s2 = shp2(32, 16);
    for (int c = 0; c < 4; c++) {
        ir_graph *g = ir_graph_new("alias", NULL);
        ir_id x = ir_add_input(g, "x", IR_F32, &s3), y = ir_add_input(g, "y", IR_F32, &s3);
        ir_id a = ir_add_binary(g, IR_OP_ADD, x, y);
        uint8_t perm[3] = {1, 0, 2};
        ir_id v = c == 1   ? ir_add_reshape(g, x, &s2)
                  : c == 3 ? ir_add_permute(g, a, perm)
                           : ir_add_reshape(g, a, &s2);
        ir_id outs[2] = {v, a};
        ir_add_output(g, outs, c == 2 ? 2 : 1);
        char *ex = NULL;
        plan(g, false, 0, &ex);
        check_invariants(g, 232448);
        bool alias = c == 0;
        assert_int_equal(pass_view_alias(g, v), alias ? a : IR_NONE);
        assert_int_equal(count_kind(g, IR_RK_COPY), alias ? 0 : 1);
        assert_int_equal(strstr(ex, "[view.alias]") != NULL, alias);
        if (alias) assert_int_equal(g->nodes[v].region, g->nodes[a].region);
        free(ex);
        ir_graph_free(g);
    }
}

static void test_no_fuse_is_one_per_op(void **st) {
    (void)st;
    ir_graph *g = g_layernorm(16, 64);
    plan(g, true, 0, NULL);
    uint32_t ops = 0;
    for (ir_id i = 0; i < g->n; i++) ops += pass_is_compute((ir_op)g->nodes[i].op);
    assert_int_equal(g->nregions, ops);
    char *ex = NULL;
    plan(g, true, 0, &ex);
    assert_non_null(strstr(ex, "[no-fuse]"));
    free(ex);
    ir_graph_free(g);
}

/* The same graph planned twice prints the same IR and report, byte for byte. */
static void test_deterministic(void **st) {
    (void)st;
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    for (int k = 0; k < 2; k++) {
        ir_graph *g = g_mlp(128, 256, 512);
        plan(g, false, 0, NULL);
        tx_diag d;
        tx_diag_init(&d, stderr, "t", NULL, 0);
        pass_ctx c = {.diag = &d, .gpu = pass_gpu_find("h200")};
        FILE *f = open_memstream(k ? &b : &a, k ? &lb : &la);
        ir_print(g, f);
        assert_true(pass_report_text(g, &c, f));
        assert_true(pass_report_json(g, &c, f));
        assert_true(pass_report_dot(g, &c, f));
        fclose(f);
        ir_graph_free(g);
    }
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
}

/* Budgets from generous to tiny: every plan stays within its budget. */
static void test_budget_sweep(void **st) {
    (void)st;
    int64_t budgets[] = {232448, 100000, 40000, 9000, 2000, 100, 1};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        ir_graph *gs[] = {g_softmax(32, 8192, 2), g_layernorm(32, 4096),
                          g_attention(2, 256, 128, false), g_mm_bias_gelu(256, 256, 256, false),
                          g_mlp(128, 256, 512)};
        for (size_t j = 0; j < sizeof gs / sizeof gs[0]; j++) {
            plan_and_check(gs[j], budgets[i]);
            ir_graph_free(gs[j]);
        }
    }
}

/* ---- random graphs ------------------------------------------------------------ */

/* A deterministic generator (LCG), so failures reproduce. */
static uint32_t lcg(uint64_t *st) {
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*st >> 33);
}

/* Picks a random earlier value of shape s (or NONE). */
static ir_id pick(const ir_graph *g, const ir_shape *s, uint64_t *st) {
    ir_id c[512];
    unsigned n = 0;
    for (ir_id i = 0; i < g->n && n < 512; i++)
        if (g->nodes[i].op != IR_OP_OUTPUT && ir_shape_eq(&g->nodes[i].shape, s)) c[n++] = i;
    return n ? c[lcg(st) % n] : IR_NONE;
}

/* A random graph over square [64, 64] tensors (so transposes and products
 * keep the shape), row/column statistics and [64] weights. */
static ir_graph *g_random(uint64_t seed, unsigned nops) {
    uint64_t st = seed;
    ir_graph *g = ir_graph_new("rnd", NULL);
    ir_shape sq = shp2(64, 64), row = shp2(64, 1), col = shp2(1, 64), w = shp1(64);
    ir_add_input(g, "x", IR_F32, &sq);
    ir_add_input(g, "y", IR_F32, &sq);
    ir_add_input(g, "w", IR_F32, &w);
    for (unsigned i = 0; i < nops; i++) {
        ir_id a = pick(g, &sq, &st), b = pick(g, &sq, &st);
        switch (lcg(&st) % 10) {
            case 0: ir_add_unary(g, IR_OP_EXP, a); break;
            case 1: ir_add_binary(g, IR_OP_ADD, a, b); break;
            case 2: ir_add_binary(g, IR_OP_MUL, a, pick(g, &w, &st)); break;
            case 3:
                ir_add_reduce(g, lcg(&st) % 2 ? IR_OP_SUM : IR_OP_MAX, a, lcg(&st) % 2 ? 2 : 1,
                              true);
                break;
            case 4: {
                ir_id r = pick(g, &row, &st);
                if (r == IR_NONE) r = pick(g, &col, &st);
                ir_add_binary(g, IR_OP_SUB, a, r == IR_NONE ? b : r);
                break;
            }
            case 5: ir_add_matmul(g, a, b); break;
            case 6: {
                uint8_t perm[2] = {1, 0};
                ir_add_unary(g, IR_OP_RELU, ir_add_permute(g, a, perm));
                break;
            }
            case 7:
                ir_add_unary(g, IR_OP_TANH, ir_add_cast(g, ir_add_cast(g, a, IR_BF16), IR_F32));
                break;
            case 8: ir_add_binary(g, IR_OP_DIV, a, ir_add_const(g, 3.0, IR_F32)); break;
            default: {
                uint8_t perm[2] = {1, 0};
                ir_add_binary(g, IR_OP_MAXIMUM, ir_add_permute(g, a, perm), b);
                break;
            }
        }
    }
    ir_id outs[3] = {g->n - 1, pick(g, &sq, &st), pick(g, &row, &st)};
    unsigned no = outs[2] == IR_NONE ? 2 : 3;
    ir_add_output(g, outs, no);
    return g;
}

static void test_random_graphs(void **st) {
    (void)st;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        int64_t budgets[] = {0, 20000, 300};
        for (size_t k = 0; k < 3; k++) {
            ir_graph *g = g_random(seed, 6 + (unsigned)(seed % 40));
            if (!ir_verify(g, stderr)) {
                fprintf(stderr, "seed %llu budget %lld\n", (unsigned long long)seed,
                        (long long)budgets[k]);
                ir_print(g, stderr);
            }
            assert_true(ir_verify(g, stderr));
            plan_and_check(g, budgets[k]);
            char *a = NULL, *b = NULL;
            size_t la = 0, lb = 0;
            tx_diag d;
            tx_diag_init(&d, stderr, "t", NULL, 0);
            pass_ctx c = {.diag = &d, .gpu = pass_gpu_find("h100"), .sram_budget = budgets[k]};
            FILE *f = open_memstream(&a, &la);
            ir_print(g, f);
            assert_true(pass_report_text(g, &c, f) && pass_report_json(g, &c, f) &&
                        pass_report_dot(g, &c, f));
            fclose(f);
            plan(g, false, budgets[k], NULL);
            f = open_memstream(&b, &lb);
            ir_print(g, f);
            assert_true(pass_report_text(g, &c, f) && pass_report_json(g, &c, f) &&
                        pass_report_dot(g, &c, f));
            fclose(f);
            assert_int_equal(la, lb);
            assert_memory_equal(a, b, la);
            free(a);
            free(b);
            ir_graph_free(g);
        }
    }
}

/* ---- the public suite through the frontend ------------------------------- */

/* Parses "bench: -D N=1 -D M=2" from the source comment into defs. */
static unsigned bench_defines(const char *src, fe_define *defs, char names[][16], unsigned cap) {
    const char *p = strstr(src, "bench:");
    unsigned n = 0;
    while (p && (p = strstr(p, "-D ")) && n < cap) {
        p += 3;
        unsigned k = 0;
        while (*p && *p != '=' && k < 15) names[n][k++] = *p++;
        names[n][k] = 0;
        if (*p != '=') break;
        defs[n].name = names[n];
        defs[n].value = strtoll(p + 1, NULL, 10);
        n++;
    }
    return n;
}

static void test_public_suite(void **st) {
    (void)st;
    const char *root = getenv("TX_ROOT");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../shared/bench/suite", root ? root : ".");
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(stderr, "test_public_suite: %s not found; skipped\n", dir);
        skip();
    }
    static const struct {
        const char *file;
        uint32_t max;
    } want[] = {
        {"chain8.tx", 1},       {"bias_gelu.tx", 1},        {"swiglu.tx", 1},
        {"softmax.tx", 1},      {"layernorm.tx", 1},        {"add_rmsnorm.tx", 1},
        {"softmax_wide.tx", 1}, {"matmul_bias_gelu.tx", 1}, {"attention.tx", 1},
        {"mlp_block.tx", 2},    {"add_relu.tx", 1},         {"adam.tx", 1},
    };
    unsigned seen = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, want[i].file);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        static char src[1 << 16];
        size_t n = fread(src, 1, sizeof src - 1, f);
        fclose(f);
        src[n] = 0;
        fe_define defs[8];
        char names[8][16];
        fe_options o = {.defines = defs, .ndefines = bench_defines(src, defs, names, 8)};
        tx_diag d;
        tx_diag_init(&d, stderr, path, src, n);
        ir_graph *g = fe_compile(path, src, n, &o, &d);
        assert_non_null(g);
        pass_ctx c = {.diag = &d, .gpu = pass_gpu_find("h200")};
        assert_true(pass_run_pipeline(g, &c));
        uint32_t k = plan_and_check(g, 0);
        if (k > want[i].max)
            fprintf(stderr, "%s: %u kernels, want <= %u\n", want[i].file, k, want[i].max);
        assert_true(k <= want[i].max);
        ir_graph_free(g);
        seen++;
    }
    closedir(dp);
    assert_true(seen > 0);
}

/* Every example and oracle program (dims left symbolic, evaluated at 64):
 * plans satisfy the invariants and fused traffic is never above unfused. */
static void test_other_programs(void **st) {
    (void)st;
    const char *root = getenv("TX_ROOT");
    const char *dirs[] = {"examples", "tests/oracle"};
    unsigned seen = 0;
    for (size_t d = 0; d < 2; d++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", root ? root : ".", dirs[d]);
        DIR *dp = opendir(dir);
        if (!dp) continue;
        char names[64][256];
        unsigned n = 0;
        for (struct dirent *e; (e = readdir(dp)) && n < 64;) {
            size_t l = strlen(e->d_name);
            if (l > 3 && l < 200 && !strcmp(e->d_name + l - 3, ".tx"))
                snprintf(names[n++], 256, "%s", e->d_name);
        }
        closedir(dp);
        for (unsigned i = 0; i < n; i++) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            FILE *f = fopen(path, "rb");
            if (!f) continue;
            static char src[1 << 16];
            size_t len = fread(src, 1, sizeof src - 1, f);
            fclose(f);
            src[len] = 0;
            tx_diag dg;
            tx_diag_init(&dg, stderr, path, src, len);
            fe_options o = {0};
            ir_graph *g = fe_compile(path, src, len, &o, &dg);
            if (!g) continue; /* a program that needs an --entry or -D is not ours to judge */
            pass_ctx c = {.diag = &dg, .gpu = pass_gpu_find("h200")};
            assert_true(pass_run_pipeline(g, &c));
            plan_and_check(g, 0);
            plan_and_check(g, 30000);
            ir_graph_free(g);
            seen++;
        }
    }
    if (!seen) {
        fprintf(stderr, "test_other_programs: no programs found under %s; skipped\n",
                root ? root : ".");
        skip();
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_chain),
        cmocka_unit_test(test_softmax_onchip_and_budget),
        cmocka_unit_test(test_softmax_explain_budget),
        cmocka_unit_test(test_column_and_middle_reductions),
        cmocka_unit_test(test_layernorm_rmsnorm),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_attention_epilogue_input),
        cmocka_unit_test(test_matmul_epilogue_prologue),
        cmocka_unit_test(test_matmul_epilogue_recompute),
        cmocka_unit_test(test_matmul_epilogue_recompute_probs),
        cmocka_unit_test(test_mlp_horizontal),
        cmocka_unit_test(test_siblings),
        cmocka_unit_test(test_side_outputs),
        cmocka_unit_test(test_small_batch),
        cmocka_unit_test(test_pointwise_recompute),
        cmocka_unit_test(test_stats_recompute),
        cmocka_unit_test(test_stats_recompute_two_consumers),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_view_alias),
        cmocka_unit_test(test_no_fuse_is_one_per_op),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_budget_sweep),
        cmocka_unit_test(test_random_graphs),
        cmocka_unit_test(test_public_suite),
        cmocka_unit_test(test_other_programs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
