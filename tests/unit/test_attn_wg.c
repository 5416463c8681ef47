/* test_attn_wg.c - the sm_90a attention kernel (codegen/attention.c, FlashAttention-3 style)
 * without a GPU:
 *
 * - the fragment arithmetic against an independent model written here: the wgmma m64nN f32
 *   accumulator as the mma.m16n8 C fragment (c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row
 *   g+8) tiled over N/8 column blocks and four warps of 16 rows; the register A operand of
 *   m64nNk16 as the mma.m16n8k16 A fragment per warp (a0 (g, 2t), a1 (g+8, 2t), a2 (g, 2t+8),
 *   a3 (g+8, 2t+8), two 16-bit values each): P's register r of k slice kk must pack the scores
 *   at those positions, in order;
 * - the plan (head dims 64 and 128, stages within the shared memory, 1024-aligned boxes);
 * - programs compiled for sm_90a: the template name, three 3-D tensor maps (extents, boxes,
 *   outer dims, GQA's fewer K/V planes), the runtime plan's map extents at bound sizes, the
 *   persistent grid; what keeps the mma.sync kernel (decode rows, f32, head dim 96, a symbolic
 *   head dim, sm_90); TX_ATTN_NO_SKIP turning block sparsity off;
 * - the consumer's arithmetic per score in the PTX (paired 16-bit converts only, one ex2 and
 *   one FFMA per score with the scale folded in, the rescale behind a warp vote, the key-bound
 *   mask only in the masked copy);
 * - ptxas -arch=sm_90a -v of each kernel kind (plain, causal, GQA, ALiBi, soft cap, f16, head
 *   dim 64, ragged S): no spills, no wgmma serialisation warnings, 168 registers (setmaxnreg;
 *   skipped with a message when ptxas is absent). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testkit.h"

#include "codegen/cg_impl.h"
#include "driver/driver.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "tk_compile.h"

/* ---- the independent model ------------------------------------------------ */

/* mma.m16n8 C fragment: element q (0..3) of lane l at (row, col) of a 16 x 8 tile. */
static void model_c16x8(unsigned l, unsigned q, unsigned *row, unsigned *col) {
    *row = l / 4 + (q >= 2 ? 8 : 0);
    *col = 2 * (l % 4) + (q & 1);
}

/* mma.m16n8k16 A fragment: 16-bit element e (0..7: register e/2, half e%2) of lane l. */
static void model_a16x16(unsigned l, unsigned e, unsigned *row, unsigned *col) {
    unsigned r = e / 2;
    *row = l / 4 + ((r & 1) ? 8 : 0);
    *col = 2 * (l % 4) + ((r & 2) ? 8 : 0) + e % 2;
}

static void test_acc_layout(void **state) {
    (void)state;
    for (unsigned n = 8; n <= 256; n *= 2) {
        unsigned char *seen = calloc(64 * n, 1);
        for (unsigned t = 0; t < 128; t++)
            for (unsigned i = 0; i < n / 2; i++) {
                unsigned row, col, mr, mc;
                cg_attn_wg_acc_pos(t, i, &row, &col);
                /* register i: column block i / 4 of the warp's 16 x n, element i % 4 */
                model_c16x8(t % 32, i % 4, &mr, &mc);
                assert_int_equal(row, 16 * (t / 32) + mr);
                assert_int_equal(col, 8 * (i / 4) + mc);
                assert_true(row < 64 && col < n);
                seen[row * n + col]++;
            }
        for (unsigned e = 0; e < 64 * n; e++) assert_int_equal(seen[e], 1);
        free(seen);
    }
}

static void test_p_fragments(void **state) {
    (void)state;
    for (unsigned t = 0; t < 128; t++)
        for (unsigned kk = 0; kk < 16; kk++) /* up to 256 keys */
            for (unsigned e = 0; e < 8; e++) {
                unsigned lo, hi, row, col, mr, mc;
                cg_attn_wg_pfrag(kk, e / 2, &lo, &hi);
                cg_attn_wg_acc_pos(t, e % 2 ? hi : lo, &row, &col);
                model_a16x16(t % 32, e, &mr, &mc);
                assert_int_equal(row, 16 * (t / 32) + mr);
                assert_int_equal(col, 16 * kk + mc);
            }
}

static void test_plan(void **state) {
    (void)state;
    int64_t smem = 227 * 1024;
    cg_attn_wg_plan p;
    assert_true(cg_attn_wg_plan_for(128, 0, 0, smem, &p));
    assert_int_equal(p.bm, 128);
    assert_int_equal(p.bn, 128);
    assert_int_equal(p.stages, 3);
    assert_int_equal(p.qbufs, 1); /* a second Q tile does not fit beside 3 stages */
    assert_int_equal(p.q_bytes, 128 * 128 * 2);
    assert_int_equal(p.stage_bytes, 2 * 128 * 128 * 2);
    assert_true(p.smem_bytes <= smem);
    assert_int_equal(p.bar_bytes, 8 * (2 * CG_ATTN_WG_QBUFS + 4 * CG_ATTN_WG_MAX_STAGES));
    assert_int_equal(p.smem_bytes, 1024 + p.q_bytes + 3 * p.stage_bytes + p.bar_bytes);
    assert_true(cg_attn_wg_plan_for(64, 0, 0, smem, &p));
    assert_int_equal(p.stages, CG_ATTN_WG_MAX_STAGES);
    assert_int_equal(p.qbufs, 2);
    assert_int_equal(p.smem_bytes, 1024 + 2 * p.q_bytes + p.stages * p.stage_bytes + p.bar_bytes);
    assert_true(p.smem_bytes <= smem);
    /* every box (64 columns x rows, 128-byte rows) starts on a 1024-byte swizzle atom */
    assert_int_equal(p.q_bytes % 1024, 0);
    assert_int_equal(p.kv_bytes % 1024, 0);
    assert_int_equal((p.bm * 128) % 1024, 0);
    assert_int_equal((p.bn * 128) % 1024, 0);
    /* the wide key tile at d = 128: 2 stages, and a second Q tile beside them */
    assert_true(cg_attn_wg_plan_for(128, CG_ATTN_WG_WIDE_BN, 0, smem, &p));
    assert_int_equal(p.bn, CG_ATTN_WG_WIDE_BN);
    assert_int_equal(p.kv_bytes, (int64_t)CG_ATTN_WG_WIDE_BN * 128 * 2);
    assert_int_equal(p.stages, 2);
    assert_int_equal(p.qbufs, 2);
    assert_true(p.smem_bytes <= smem);
    assert_int_equal((p.bn * 128) % 1024, 0);
    assert_true(cg_attn_wg_plan_for(128, 176, 0, smem, &p)); /* FA3's: no room for a second Q */
    assert_int_equal(p.stages, 2);
    assert_int_equal(p.qbufs, 1);
    assert_int_equal(p.smem_bytes, 1024 + p.q_bytes + 2 * p.stage_bytes + p.bar_bytes);
    assert_true(p.smem_bytes <= smem);
    assert_false(cg_attn_wg_plan_for(128, 100, 0, smem, &p)); /* not a multiple of 16 */
    assert_false(cg_attn_wg_plan_for(128, 48, 0, smem, &p));
    assert_false(cg_attn_wg_plan_for(64, 272, 0, smem, &p));
    assert_false(cg_attn_wg_plan_for(128, 256, 0, smem, &p)); /* two stages do not fit */
    /* three consumer warpgroups (192 query rows) at d = 64 only */
    assert_true(cg_attn_wg_plan_for(64, 0, 3, smem, &p));
    assert_int_equal(p.nwg, 3);
    assert_int_equal(p.bm, 192);
    assert_int_equal(p.q_bytes, 192 * 64 * 2);
    assert_int_equal(p.q_bytes % 1024, 0);
    assert_int_equal(p.stages, CG_ATTN_WG_MAX_STAGES);
    assert_int_equal(p.qbufs, 2);
    assert_true(p.smem_bytes <= smem);
    assert_false(cg_attn_wg_plan_for(128, 0, 3, smem, &p));
    assert_false(cg_attn_wg_plan_for(64, 0, 4, smem, &p));
    assert_false(cg_attn_wg_plan_for(96, 0, 0, smem, &p));
    assert_false(cg_attn_wg_plan_for(320, 0, 0, smem, &p));
    assert_false(cg_attn_wg_plan_for(128, 0, 0, 100 * 1024, &p));
    /* head dims above 128: keys per step from the consumers' registers (O's d/2, S's bn/2 and
     * P's bn/4 within CG_ATTN_WG_TILE_REGS), two stages, the Q tile's d/64 boxes */
    static const struct { int d, bn, qbufs; } wide[] = {{192, 96, 1}, {256, 64, 1}};
    for (unsigned i = 0; i < 2; i++) {
        int d = wide[i].d;
        assert_int_equal(cg_attn_wg_wide_d_bn(d), wide[i].bn);
        assert_true(d / 2 + wide[i].bn / 2 + wide[i].bn / 4 <= CG_ATTN_WG_TILE_REGS);
        assert_true(d / 2 + (wide[i].bn + 16) * 3 / 4 > CG_ATTN_WG_TILE_REGS);
        assert_true(cg_attn_wg_plan_for(d, 0, 0, smem, &p));
        assert_int_equal(p.d, d);
        assert_int_equal(p.bm, 128);
        assert_int_equal(p.bn, wide[i].bn);
        assert_int_equal(p.stages, 2);
        assert_int_equal(p.qbufs, wide[i].qbufs);
        assert_int_equal(p.q_bytes, 128 * d * 2);
        assert_int_equal(p.kv_bytes, (int64_t)wide[i].bn * d * 2);
        assert_int_equal(p.smem_bytes, 1024 + p.q_bytes + 2 * p.stage_bytes + p.bar_bytes);
        assert_true(p.smem_bytes <= smem);
        assert_int_equal((p.bn * 128) % 1024, 0);
        assert_false(cg_attn_wg_plan_for(d, wide[i].bn + 16, 0, smem, &p)); /* registers */
        assert_false(cg_attn_wg_plan_for(d, 0, 3, smem, &p));
    }
    assert_true(cg_attn_wg_plan_for(192, 80, 0, smem, &p)); /* a masked F's: 16 keys fewer */
    assert_int_equal(p.qbufs, 2);
    assert_true(p.smem_bytes <= smem);
    assert_int_equal(cg_attn_wg_dpad(144), 192);
    assert_int_equal(cg_attn_wg_dpad(192), 192);
    assert_int_equal(cg_attn_wg_dpad(208), 256);
    assert_int_equal(cg_attn_wg_dpad(256), 256);
    assert_int_equal(cg_attn_wg_dpad(80), 128);
    assert_int_equal(cg_attn_wg_dpad(48), 64);
}

/* Occurrences of s in text. */
static unsigned count(const char *text, const char *s) {
    unsigned n = 0;
    for (const char *at = strstr(text, s); at; at = strstr(at + 1, s)) n++;
    return n;
}

/* ---- compiled programs --------------------------------------------------- */

static const char *SRC_PLAIN =
    "fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D], v: bf16[B, H, S, D]) -> bf16[B, H, S, D] {\n"
    "  s = f32(q @ transpose(k, -1, -2)) * 0.125\n"
    "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
static const char *SRC_F16 =
    "fn f(q: f16[B, H, S, D], k: f16[B, H, S, D], v: f16[B, H, S, D]) -> f16[B, H, S, D] {\n"
    "  s = f32(q @ transpose(k, -1, -2)) * 0.125\n"
    "  return f16(softmax(s, axis=-1)) @ v\n}\n";
static const char *SRC_CAUSAL =
    "fn f(q: bf16[B, H, S, 128], k: bf16[B, H, S, 128], v: bf16[B, H, S, 128]) -> bf16[B, H, S, "
    "128] {\n"
    "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
    "  keep = iota((S, S), axis=0) >= iota((S, S), axis=1)\n"
    "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
static const char *SRC_GQA =
    "fn f(q: bf16[B, 32, S, 128], k: bf16[B, 8, S, 128], v: bf16[B, 8, S, 128]) -> bf16[B, 32, S, "
    "128] {\n"
    "  qg = reshape(q, (B, 8, 4, S, 128))\n"
    "  kg = reshape(k, (B, 8, 1, S, 128))\n"
    "  vg = reshape(v, (B, 8, 1, S, 128))\n"
    "  s = f32(qg @ transpose(kg, -1, -2)) * 0.088\n"
    "  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)\n"
    "  return reshape(bf16(p) @ vg, (B, 32, S, 128))\n}\n";
/* a LLaMA block's causal attention over split heads of [S, 32 * 128] projections */
static const char *SRC_SPLIT =
    "fn sh(t) {\n  return permute(reshape(t, (S, 32, 128)), (1, 0, 2))\n}\n"
    "fn f(q: bf16[S, 4096], k: bf16[S, 4096], v: bf16[S, 4096]) -> bf16[32, S, 128] {\n"
    "  s = f32(sh(q) @ transpose(sh(k), -1, -2)) * 0.088\n"
    "  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)\n"
    "  return bf16(p) @ sh(v)\n}\n";
/* split heads with a batch (4-D maps {D, H, S, B}), causal, D 128 */
static const char *SRC_SPLIT4 =
    "fn sh(t) {\n  return permute(reshape(t, (B, S, 8, 128)), (0, 2, 1, 3))\n}\n"
    "fn f(q: bf16[B, S, 1024], k: bf16[B, S, 1024], v: bf16[B, S, 1024]) -> bf16[B, 8, S, 128] "
    "{\n"
    "  s = f32(sh(q) @ transpose(sh(k), -1, -2)) * 0.088\n"
    "  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)\n"
    "  return bf16(p) @ sh(v)\n}\n";
/* GQA over split heads, query heads (B, S, G, KVH, D) in memory: q's map 5-D, k's and v's 4-D */
static const char *SRC_SPLIT5 =
    "fn kv(t) {\n  return reshape(permute(reshape(t, (B, S, 4, 64)), (0, 2, 1, 3)), "
    "(B, 4, 1, S, 64))\n}\n"
    "fn f(q: bf16[B, S, 1024], k: bf16[B, S, 256], v: bf16[B, S, 256]) -> bf16[B, 4, 4, S, 64] "
    "{\n"
    "  qh = permute(reshape(q, (B, S, 4, 4, 64)), (0, 3, 2, 1, 4))\n"
    "  s = f32(qh @ transpose(kv(k), -1, -2)) * 0.125\n"
    "  return bf16(softmax(s, axis=-1)) @ kv(v)\n}\n";
/* split heads with a batch, causal, merged back to [B, S, H * D] by the kernel's store */
static const char *SRC_MERGED =
    "fn sh(t) {\n  return permute(reshape(t, (B, S, 8, 128)), (0, 2, 1, 3))\n}\n"
    "fn f(q: bf16[B, S, 1024], k: bf16[B, S, 1024], v: bf16[B, S, 1024]) -> bf16[B, S, 1024] {\n"
    "  s = f32(sh(q) @ transpose(sh(k), -1, -2)) * 0.088\n"
    "  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)\n"
    "  return reshape(permute(bf16(p) @ sh(v), (0, 2, 1, 3)), (B, S, 1024))\n}\n";
static const char *SRC_ALIBI =
    "fn f(q: bf16[H, S, 64], k: bf16[H, S, 64], v: bf16[H, S, 64], sl: f32[H]) -> bf16[H, S, 64] "
    "{\n"
    "  s = f32(q @ transpose(k, -1, -2)) * 0.125\n"
    "  i = iota((S, S), axis=0)\n"
    "  j = iota((S, S), axis=1)\n"
    "  b = reshape(sl, (H, 1, 1)) * f32(j - i)\n"
    "  return bf16(softmax(where(i >= j, s + b, -inf), axis=-1)) @ v\n}\n";
static const char *SRC_CAP =
    "fn f(q: bf16[S, 128], k: bf16[S, 128], v: bf16[S, 128]) -> bf16[S, 128] {\n"
    "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
    "  return bf16(softmax(50.0 * tanh(s / 50.0), axis=-1)) @ v\n}\n";

static void test_manifest(void **state) {
    (void)state;
    fe_define defs[2] = {{"D", 128}, {"H", 12}}; /* B and S stay symbolic */
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_PLAIN, CG_SM90A, defs, 2, &g);
    const cg_kernel *k = tk_region_kernel(p);
    /* no position-only mask: the wide key tile, two stages, two Q tiles */
    char want[64];
    snprintf(want, sizeof want, "fa3-wgmma-tma-ws 128x%d d128 s2 q2 pipe", CG_ATTN_WG_WIDE_BN);
    assert_non_null(strstr(k->tmpl, want));
    assert_int_equal(k->ntmaps, 3);
    assert_int_equal(k->block[0], 384);
    assert_int_equal(k->persist, CG_WG_SMS);
    for (unsigned i = 0; i < 3; i++) {
        const cg_tmap *tm = &k->tmaps[i];
        assert_int_equal(k->bufs[tm->buf].kind, CG_BUF_INPUT);
        assert_int_equal(k->bufs[tm->buf].index, i);
        assert_int_equal(tm->rank, 3);
        assert_int_equal(tm->dim[0], 128);
        assert_true(IR_DIM_IS_SYM(tm->dim[1]));
        assert_int_equal(tm->box[0], 64);
        assert_int_equal(tm->box[1], i == 0 ? 128 : CG_ATTN_WG_WIDE_BN);
        assert_int_equal(tm->box[2], 1);
        assert_int_equal(tm->outer.rank, 2);
        assert_int_equal(tm->outer.dim[1], 12);
        assert_int_equal(tm->swizzle, 128);
    }
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.3d"));
    snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.bf16.bf16",
             CG_ATTN_WG_WIDE_BN);
    assert_non_null(strstr(ptx, want)); /* S = Q K^T */
    assert_non_null(strstr(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16")); /* P V */
    /* the barriers: qfull and qempty per Q tile, kfull, vfull, kempty, vempty per stage */
    assert_int_equal(count(ptx, "mbarrier.init.shared"), 2 * 2 + 4 * 2);
    /* the consumers release per warp (lane 0), never one arrival per thread */
    assert_int_equal(count(ptx, "mbarrier.arrive.shared.b64"), 0);
    assert_true(count(ptx, "@p mbarrier.arrive.shared::cta.b64 _,") >= 5);
    assert_true(count(ptx, "setp.eq.u32 p, l, 0;") >= 5);
    assert_non_null(strstr(ptx, "setmaxnreg.inc.sync.aligned.u32 240"));
    assert_null(strstr(ptx, ".local"));
    /* the runtime plan at B = 3, S = 1000: maps {128, 1000, 36}; 8 x 36 tiles fill the SMs */
    int64_t syms[8];
    for (unsigned s = 0; s < g->nsyms; s++)
        syms[s] = g->syms[s].value >= 0               ? g->syms[s].value
                  : strcmp(g->syms[s].name, "B") == 0 ? 3
                                                      : 1000;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i];
    assert_non_null(kd);
    assert_int_equal(kd->nparams, k->nbufs + k->nsyms + 3);
    for (unsigned i = 0; i < 3; i++) {
        const rt_kparam *pm = &kd->params[k->nbufs + k->nsyms + i];
        assert_int_equal(pm->kind, RT_KP_TMAP);
        assert_int_equal(pm->tmap.rank, 3);
        assert_int_equal(pm->tmap.dim[0], 128);
        assert_int_equal(pm->tmap.dim[1], 1000);
        assert_int_equal(pm->tmap.dim[2], 36);
        assert_int_equal(pm->buf, rt_gpu_plan_find_buf(rp, RT_BUF_INPUT, i));
        char e2[200];
        assert_true(rt_tmap_check(&pm->tmap, 4096, e2, sizeof e2));
    }
    assert_int_equal(kd->grid[0], CG_WG_SMS);
    assert_int_equal(kd->grid[1], 1);
    assert_int_equal(kd->block[0], 384);
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

/* GQA: K and V maps have the 8 KV heads' planes, Q the 32 query heads'. */
static void test_gqa_maps(void **state) {
    (void)state;
    fe_define defs[2] = {{"B", 2}, {"S", 300}};
    cg_program *p = tk_compile_src(SRC_GQA, CG_SM90A, defs, 2, NULL);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "fa3"));
    assert_int_equal(k->ntmaps, 3);
    assert_int_equal(k->tmaps[0].outer.rank, 3); /* q's planes: B x 8 x 4 of the 32 heads */
    assert_int_equal(k->tmaps[0].outer.dim[1], 8);
    assert_int_equal(k->tmaps[0].outer.dim[2], 4);
    assert_int_equal(k->tmaps[1].outer.dim[1], 8);
    assert_int_equal(k->tmaps[2].outer.dim[1], 8);
    assert_int_equal(k->tmaps[1].dim[1], 300);
    cg_program_free(p);
}

/* ---- operand views (split heads, GQA, dense) against an independent model ---- */

/* The independent model: the HBM element (linear offset in the dense base) that element ix of
 * value id reads, by walking the view chain index by index (a permute moves indices, a reshape
 * goes through the linear offset, a cast keeps them) down to `base`. */
static int64_t model_offset(const ir_graph *g, ir_id id, ir_id base, const int64_t *ix0) {
    int64_t ix[IR_MAX_RANK], t[IR_MAX_RANK];
    memcpy(ix, ix0, sizeof ix);
    ir_id x = id;
    while (x != base) {
        const ir_node *n = &g->nodes[x];
        const ir_node *in = &g->nodes[ir_in(g, n, 0)];
        if (n->op == IR_OP_PERMUTE) {
            for (unsigned i = 0; i < n->shape.rank; i++) t[n->a.perm[i]] = ix[i];
            memcpy(ix, t, sizeof ix);
        } else if (n->op == IR_OP_RESHAPE) {
            int64_t lin = 0;
            for (unsigned i = 0; i < n->shape.rank; i++) lin = lin * n->shape.dim[i] + ix[i];
            for (unsigned i = in->shape.rank; i-- > 0;)
                ix[i] = lin % in->shape.dim[i], lin /= in->shape.dim[i];
        } else if (n->op == IR_OP_SLICE) {
            ix[n->a.slice.axis] += n->a.slice.start;
        } else {
            assert_int_equal(n->op, IR_OP_CAST);
        }
        x = ir_in(g, n, 0);
    }
    const ir_node *b = &g->nodes[base];
    int64_t lin = 0;
    for (unsigned i = 0; i < b->shape.rank; i++) lin = lin * b->shape.dim[i] + ix[i];
    return lin;
}

/* Checks view v of operand id (kT when trans) element by element: the map coordinates of
 * every element are inside the map's extents (3 to 5 dims; the last the product of outer) and,
 * dotted with the C-order strides of the map's extents, give the model's offset. */
static void check_view(const ir_graph *g, ir_id id, bool trans, const cg_attn_wg_view *v) {
    const ir_node *n = &g->nodes[id];
    unsigned r = n->shape.rank, nb = r - 2, R = v->rank;
    assert_true(R >= 3 && R <= CG_TMAP_MAXR);
    int64_t dim[CG_TMAP_MAXR], ext[IR_MAX_RANK];
    for (unsigned j = 0; j < R; j++) dim[j] = v->dim[j];
    if (v->outer.rank)
        for (unsigned i = 0; i < v->outer.rank; i++) dim[R - 1] *= v->outer.dim[i];
    for (unsigned i = 0; i < nb; i++) ext[i] = n->shape.dim[i];
    int64_t total = 1;
    for (unsigned i = 0; i < r; i++) total *= n->shape.dim[i];
    for (int64_t e = 0; e < total; e++) {
        int64_t ix[IR_MAX_RANK], rem = e;
        for (unsigned i = r; i-- > 0;) ix[i] = rem % n->shape.dim[i], rem /= n->shape.dim[i];
        int64_t row = trans ? ix[r - 1] : ix[r - 2], col = trans ? ix[r - 2] : ix[r - 1];
        int64_t c[CG_TMAP_MAXR];
        cg_attn_wg_view_coords(v, ext, ix, row, col, c);
        /* C-order strides of the extents, the dim pdim at the slice's full row (pitch) */
        int64_t off = v->offset, st = 1;
        for (unsigned j = 0; j < R; j++) {
            assert_true(c[j] >= 0 && c[j] < dim[j]);
            if (v->pitch > 0 && j == v->pdim && j > 0) st = v->pitch;
            off += st * c[j];
            st *= dim[j];
        }
        assert_int_equal(off, model_offset(g, id, v->base, ix));
    }
}

/* Split heads (a LLaMA block's q, k, v from [S, H * D]), the same with a batch dim of 1 and of
 * 2 (a 4-D map {D, H, S, B}), GQA's grouped heads, dense [B, H, S, D], GQA over split heads
 * with a batch (q's map {D, KVH x G, S, B}, k's and v's {D, KVH, S, B}), query heads grouped
 * (B, S, G, KVH, D) in memory (a 5-D map {D, KVH, G, S, B}): the maps address what the views
 * read, and the kernel takes them; a q whose map would need 6 dims is refused (the mma.sync
 * kernel runs it). */
static void test_views(void **state) {
    (void)state;
    static const char *split =
        "fn split_heads(t) {\n  return permute(reshape(t, (S, 4, 64)), (1, 0, 2))\n}\n"
        "fn f(q: bf16[S, 256], k: bf16[S, 256], v: bf16[S, 256]) -> bf16[4, S, 64] {\n"
        "  s = f32(split_heads(q) @ transpose(split_heads(k), -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ split_heads(v)\n}\n";
    static const char *split1 =
        "fn f(q: bf16[1, S, 256], k: bf16[1, S, 256], v: bf16[S, 4, 64]) -> bf16[1, 4, S, 64] {\n"
        "  qh = permute(reshape(q, (1, S, 4, 64)), (0, 2, 1, 3))\n"
        "  kh = permute(reshape(k, (1, S, 4, 64)), (0, 2, 3, 1))\n"
        "  s = f32(qh @ kh) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ permute(reshape(v, (1, S, 4, 64)), (0, 2, 1, "
        "3))\n}\n";
    static const char *split2 =
        "fn f(q: bf16[2, S, 256], k: bf16[2, S, 256], v: bf16[2, S, 256]) -> bf16[2, 4, S, 64] {\n"
        "  qh = permute(reshape(q, (2, S, 4, 64)), (0, 2, 1, 3))\n"
        "  kh = permute(reshape(k, (2, S, 4, 64)), (0, 2, 1, 3))\n"
        "  vh = permute(reshape(v, (2, S, 4, 64)), (0, 2, 1, 3))\n"
        "  s = f32(qh @ transpose(kh, -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ vh\n}\n";
    static const char *gqa_split =
        "fn kv(t) {\n  return reshape(permute(reshape(t, (B, S, 2, 64)), (0, 2, 1, 3)), "
        "(B, 2, 1, S, 64))\n}\n"
        "fn f(q: bf16[B, S, 384], k: bf16[B, S, 128], v: bf16[B, S, 128]) -> bf16[B, 2, 3, S, 64] "
        "{\n"
        "  qh = permute(reshape(q, (B, S, 2, 3, 64)), (0, 2, 3, 1, 4))\n"
        "  s = f32(qh @ transpose(kv(k), -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ kv(v)\n}\n";
    static const char *five =
        "fn kv(t) {\n  return reshape(permute(reshape(t, (B, S, 2, 64)), (0, 2, 1, 3)), "
        "(B, 2, 1, S, 64))\n}\n"
        "fn f(q: bf16[B, S, 384], k: bf16[B, S, 128], v: bf16[B, S, 128]) -> bf16[B, 2, 3, S, 64] "
        "{\n"
        "  qh = permute(reshape(q, (B, S, 3, 2, 64)), (0, 3, 2, 1, 4))\n"
        "  s = f32(qh @ transpose(kv(k), -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ kv(v)\n}\n";
    static const char *six =
        "fn f(q: bf16[2, S, 2, 2, 2, 64], k: bf16[2, 2, 2, 2, S, 64], v: bf16[2, 2, 2, 2, S, 64]) "
        "-> bf16[2, 2, 2, 2, S, 64] {\n"
        "  s = f32(permute(q, (3, 2, 0, 4, 1, 5)) @ transpose(k, -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    static const char *qkv =
        "fn heads(t) {\n  return permute(reshape(t, (B, S, 4, 64)), (0, 2, 1, 3))\n}\n"
        "fn f(x: bf16[B, S, 768]) -> bf16[B, 4, S, 64] {\n"
        "  q = heads(slice(x, axis=2, start=0, stop=256))\n"
        "  k = heads(slice(x, axis=2, start=256, stop=512))\n"
        "  v = heads(slice(x, axis=2, start=512, stop=768))\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    /* q's columns start 4 elements (8 bytes) in: TMA needs 16-byte aligned starts */
    static const char *qkv_odd =
        "fn f(x: bf16[S, 200], k: bf16[S, 64], v: bf16[S, 64]) -> bf16[S, 64] {\n"
        "  s = f32(slice(x, axis=1, start=4, stop=68) @ transpose(k, -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    /* timm's Attention: the fused qkv split into (3, H, D) and permuted (2, 0, 3, 1, 4), then
     * sliced on axis 0: columns 256 o.. of rows of 768 like `qkv` */
    static const char *timm = "fn f(x: bf16[B, S, 768]) -> bf16[B, 4, S, 64] {\n"
                              "  t = permute(reshape(x, (B, S, 3, 4, 64)), (2, 0, 3, 1, 4))\n"
                              "  q = reshape(slice(t, axis=0, start=0, stop=1), (B, 4, S, 64))\n"
                              "  k = reshape(slice(t, axis=0, start=1, stop=2), (B, 4, S, 64))\n"
                              "  v = reshape(slice(t, axis=0, start=2, stop=3), (B, 4, S, 64))\n"
                              "  s = f32(q @ transpose(k, -1, -2)) * 0.125\n"
                              "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    /* unbind(2) of (B, S, 3, H, D) without the permute, as slices of axis 2 */
    static const char *unbind =
        "fn h(t, i) {\n  return permute(reshape(slice(reshape(t, (B, S, 3, 4, 64)), axis=2, "
        "start=i, stop=i + 1), (B, S, 4, 64)), (0, 2, 1, 3))\n}\n"
        "fn f(x: bf16[B, S, 768]) -> bf16[B, 4, S, 64] {\n"
        "  s = f32(h(x, 0) @ transpose(h(x, 1), -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ h(x, 2)\n}\n";
    /* HF's qkv.view(B, S, H, 3 * D) split on its last axis: rows of 192 per head */
    static const char *hfview =
        "fn h(t, i) {\n  return permute(slice(reshape(t, (B, S, 4, 192)), axis=3, start=64 * i, "
        "stop=64 * i + 64), (0, 2, 1, 3))\n}\n"
        "fn f(x: bf16[B, S, 768]) -> bf16[B, 4, S, 64] {\n"
        "  s = f32(h(x, 0) @ transpose(h(x, 1), -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ h(x, 2)\n}\n";
    /* GQA's packed qkv (B, S, KVH, G + 2, D): q the first G of each group (a 5-D map), k and v
     * one each (the sliced axis of extent 1 has no map dim) */
    static const char *gqa_qkv =
        "fn h(t, a, e) {\n  return permute(slice(reshape(t, (B, S, 2, 5, 64)), axis=3, start=a, "
        "stop=e), (0, 2, 3, 1, 4))\n}\n"
        "fn f(x: bf16[B, S, 640]) -> bf16[B, 2, 3, S, 64] {\n"
        "  s = f32(h(x, 0, 3) @ transpose(h(x, 3, 4), -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ h(x, 4, 5)\n}\n";
    /* rows 8.. of a longer buffer (the outermost axis: an offset, no pitch) */
    static const char *rows =
        "fn f(x: bf16[80, 64], k: bf16[S, 64], v: bf16[S, 64]) -> bf16[72, 64] {\n"
        "  s = f32(slice(x, axis=0, start=8, stop=80) @ transpose(k, -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    /* columns and then rows of q sliced: two pitches, refused */
    static const char *two =
        "fn f(x: bf16[80, 128], k: bf16[S, 64], v: bf16[S, 64]) -> bf16[72, 64] {\n"
        "  q = slice(slice(x, axis=1, start=0, stop=64), axis=0, start=8, stop=80)\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.125\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    fe_define defs[4] = {{"S", 72}, {"B", 2}, {"H", 3}, {"D", 64}};
    const char *srcs[] = {split, split1,  SRC_GQA, SRC_PLAIN, split2, gqa_split, five, six,
                          qkv,   qkv_odd, timm,    unbind,    hfview, gqa_qkv,   rows, two};
    unsigned ndefs[] = {1, 1, 2, 4, 1, 2, 2, 1, 2, 1, 2, 2, 2, 2, 1, 1};
    /* per case and operand: the map's rank */
    unsigned ranks[][3] = {{3, 3, 3}, {3, 3, 3}, {3, 3, 3}, {3, 3, 3}, {4, 4, 4}, {4, 4, 4},
                           {5, 4, 4}, {0, 3, 3}, {4, 4, 4}, {0, 3, 3}, {4, 4, 4}, {4, 4, 4},
                           {4, 4, 4}, {5, 4, 4}, {3, 3, 3}, {0, 3, 3}};
    /* per sliced case (10 ..) and operand: the independent offset, pitch and pitch dim */
    static const int64_t sliced[][3][3] = {
        {{0, 768, 2}, {256, 768, 2}, {512, 768, 2}}, {{0, 768, 2}, {256, 768, 2}, {512, 768, 2}},
        {{0, 192, 1}, {64, 192, 1}, {128, 192, 1}},  {{0, 320, 2}, {192, 320, 1}, {256, 320, 1}},
        {{512, 0, 0}, {0, 0, 0}, {0, 0, 0}},         {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
    for (unsigned c = 0; c < sizeof srcs / sizeof srcs[0]; c++) {
        ir_graph *g;
        cg_program *p = tk_compile_src(srcs[c], CG_SM90A, defs, ndefs[c], &g);
        const ir_region *rg = NULL;
        for (uint32_t r = 0; r < g->nregions; r++)
            if (g->regions[r].kind == IR_RK_ATTENTION) rg = &g->regions[r];
        assert_non_null(rg);
        const ir_node *m1 = &g->nodes[rg->mm1], *m2 = &g->nodes[rg->anchor];
        ir_id ops[3] = {ir_in(g, m1, 0), ir_in(g, m1, 1), ir_in(g, m2, 1)};
        unsigned region = (unsigned)(rg - g->regions);
        const cg_kernel *k = tk_region_kernel(p);
        bool ok = true;
        for (int o = 0; o < 3; o++) {
            cg_attn_wg_view v;
            bool got =
                cg_attn_wg_view_of(g, region, ops[o], IR_BF16, c == 2 ? 128 : 64, o == 1, &v);
            ok &= got;
            assert_int_equal(got, ranks[c][o] != 0);
            if (!got) continue;
            assert_int_equal(v.rank, ranks[c][o]);
            check_view(g, ops[o], o == 1, &v);
            if (k->ntmaps) { /* the kernel's map is the view's */
                assert_int_equal(k->tmaps[o].rank, v.rank);
                for (unsigned j = 0; j < v.rank; j++)
                    assert_int_equal(k->tmaps[o].box[j], v.role[j] == CG_AWG_D     ? 64
                                                         : v.role[j] == CG_AWG_ROW ? 128
                                                                                   : 1);
            }
            if (c == 0) { /* split heads: {D, H, S}, the heads in the middle */
                assert_int_equal(v.dim[0], 64);
                assert_int_equal(v.dim[1], 4);
                assert_int_equal(v.dim[2], 72);
                assert_int_equal(v.role[1], CG_AWG_BATCH);
                assert_int_equal(v.role[2], CG_AWG_ROW);
            }
            if (c == 4 || (c == 5 && o == 0)) { /* {D, H, S, B}: B the outer planes */
                assert_int_equal(v.dim[1], c == 4 ? 4 : 6);
                assert_int_equal(v.role[1], CG_AWG_BATCH);
                assert_int_equal(v.role[2], CG_AWG_ROW);
                assert_int_equal(v.role[3], CG_AWG_BATCH);
                assert_int_equal(v.outer.rank, 1);
                assert_int_equal(v.outer.dim[0], 2);
            }
            if (c == 8) { /* {D, H, S, B} over columns 256 o.. of rows of 768: S strides 768 */
                assert_int_equal(v.offset, 256 * o);
                assert_int_equal(v.pitch, 768);
                assert_int_equal(v.pdim, 2);
                assert_int_equal(k->tmaps[o].pitch, 768);
                assert_int_equal(k->tmaps[o].pdim, 2);
                assert_int_equal(k->tmaps[o].offset, 256 * o);
            }
            if (c >= 10) { /* the view's slice against the numbers above, the kernel's map */
                assert_int_equal(v.offset, sliced[c - 10][o][0]);
                assert_int_equal(v.pitch, sliced[c - 10][o][1]);
                assert_int_equal(v.pdim, sliced[c - 10][o][2]);
            }
            if (c >= 10 && k->ntmaps) {
                assert_int_equal(k->tmaps[o].offset, v.offset);
                assert_int_equal(k->tmaps[o].pitch, v.pitch);
                assert_int_equal(k->tmaps[o].pdim, v.pdim);
            }
            if (c == 6 && o == 0) { /* {D, KVH, G, S, B} */
                assert_int_equal(v.dim[1], 2);
                assert_int_equal(v.dim[2], 3);
                assert_int_equal(v.role[3], CG_AWG_ROW);
            }
        }
        assert_int_equal(k->ntmaps, ok ? 3 : 0);
        if (ok) assert_non_null(strstr(k->tmpl, "fa3-wgmma-tma-ws"));
        /* the rule codegen took is the one the model and --explain report, with its reason */
        char why[256];
        assert_int_equal(pass_attention_fa3(g, region, NULL, why, sizeof why), ok);
        if (c == 9) assert_non_null(strstr(why, "16-byte aligned"));
        if (c == 7) assert_non_null(strstr(why, "more than 5 dims"));
        if (c == 15) assert_non_null(strstr(why, "second slice"));
        cg_program_free(p);
        ir_graph_free(g);
    }
}

/* Split heads with a symbolic batch: 4-D maps {D, H, S, B} in the manifest (B the outer planes),
 * the 4-D copies in the PTX, the runtime plan's extents at B = 3, S = 1000. */
static void test_views_4d_plan(void **state) {
    (void)state;
    static const char *src =
        "fn heads(t) {\n  return permute(reshape(t, (B, S, 16, 64)), (0, 2, 1, 3))\n}\n"
        "fn f(q: bf16[B, S, 1024], k: bf16[B, S, 1024], v: bf16[B, S, 1024]) -> "
        "bf16[B, 16, S, 64] {\n"
        "  s = f32(heads(q) @ transpose(heads(k), -1, -2)) * 0.125\n"
        "  p = softmax(where(iota((S, S), axis=0) >= iota((S, S), axis=1), s, -inf), axis=-1)\n"
        "  return bf16(p) @ heads(v)\n}\n";
    ir_graph *g;
    cg_program *p = tk_compile_src(src, CG_SM90A, NULL, 0, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "fa3-wgmma-tma-ws 128x128 d64"));
    assert_int_equal(k->ntmaps, 3);
    for (unsigned i = 0; i < 3; i++) {
        const cg_tmap *tm = &k->tmaps[i];
        assert_int_equal(tm->rank, 4);
        assert_int_equal(tm->dim[0], 64);
        assert_int_equal(tm->dim[1], 16);
        assert_true(IR_DIM_IS_SYM(tm->dim[2]));
        assert_int_equal(tm->outer.rank, 1);
        assert_true(IR_DIM_IS_SYM(tm->outer.dim[0]));
    }
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.4d"));
    assert_null(strstr(ptx, "cp.async.bulk.tensor.3d"));
    int64_t syms[8];
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = strcmp(g->syms[s].name, "B") == 0 ? 3 : 1000;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0 && rp->kernels[i].nparams > k->nbufs + k->nsyms)
            kd = &rp->kernels[i];
    assert_non_null(kd);
    for (unsigned i = 0; i < 3; i++) {
        const rt_kparam *pm = &kd->params[k->nbufs + k->nsyms + i];
        assert_int_equal(pm->kind, RT_KP_TMAP);
        assert_int_equal(pm->tmap.rank, 4);
        int64_t want[4] = {64, 16, 1000, 3};
        uint32_t box[4] = {64, 1, 128, 1};
        for (unsigned j = 0; j < 4; j++) {
            assert_int_equal(pm->tmap.dim[j], want[j]);
            assert_int_equal(pm->tmap.box[j], box[j]);
        }
        char e2[200];
        assert_true(rt_tmap_check(&pm->tmap, 4096, e2, sizeof e2));
    }
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

/* The model of a returned view's layout: the offset in the dense buffer of v (a chain of
 * permutes and reshapes over u) of u's element ix, walking the chain up index by index. */
static int64_t model_up(const ir_graph *g, ir_id u, ir_id v, const int64_t *ix0) {
    ir_id chain[16];
    unsigned nc = 0;
    for (ir_id x = v; x != u; x = ir_in(g, &g->nodes[x], 0)) chain[nc++] = x;
    int64_t ix[IR_MAX_RANK], t[IR_MAX_RANK];
    memcpy(ix, ix0, sizeof ix);
    const ir_shape *sh = &g->nodes[u].shape;
    while (nc-- > 0) {
        const ir_node *n = &g->nodes[chain[nc]];
        if (n->op == IR_OP_PERMUTE) {
            for (unsigned i = 0; i < n->shape.rank; i++) t[i] = ix[n->a.perm[i]];
            memcpy(ix, t, sizeof ix);
        } else {
            assert_int_equal(n->op, IR_OP_RESHAPE);
            int64_t lin = 0;
            for (unsigned i = 0; i < sh->rank; i++) lin = lin * sh->dim[i] + ix[i];
            for (unsigned i = n->shape.rank; i-- > 0;)
                ix[i] = lin % n->shape.dim[i], lin /= n->shape.dim[i];
        }
        sh = &n->shape;
    }
    int64_t lin = 0;
    for (unsigned i = 0; i < sh->rank; i++) lin = lin * sh->dim[i] + ix[i];
    return lin;
}

/* The merge back to [B, S, H * D] of split heads (and of GQA's grouped heads): the planner's
 * view.alias through permutes (one kernel: the FA3 kernel stores through the view), the strides
 * of pass_view_strides_of against the index-by-index model; a returned permute of a value
 * something else also reads keeps its copy kernel. */
static void test_out_view(void **state) {
    (void)state;
    static const char *mha =
        "fn heads(t) {\n  return permute(reshape(t, (B, S, 4, 64)), (0, 2, 1, 3))\n}\n"
        "fn f(q: bf16[B, S, 256], k: bf16[B, S, 256], v: bf16[B, S, 256]) -> bf16[B, S, 256] {\n"
        "  o = bf16(softmax(f32(heads(q) @ transpose(heads(k), -1, -2)) * 0.125, axis=-1)) @ "
        "heads(v)\n"
        "  return reshape(permute(o, (0, 2, 1, 3)), (B, S, 256))\n}\n";
    static const char *gqa =
        "fn kv(t) {\n  return reshape(permute(reshape(t, (B, S, 2, 64)), (0, 2, 1, 3)), "
        "(B, 2, 1, S, 64))\n}\n"
        "fn f(q: bf16[B, S, 384], k: bf16[B, S, 128], v: bf16[B, S, 128]) -> bf16[B, S, 384] {\n"
        "  qh = permute(reshape(q, (B, S, 2, 3, 64)), (0, 2, 3, 1, 4))\n"
        "  o = bf16(softmax(f32(qh @ transpose(kv(k), -1, -2)) * 0.125, axis=-1)) @ kv(v)\n"
        "  return reshape(permute(o, (0, 3, 1, 2, 4)), (B, S, 384))\n}\n";
    static const char *twice =
        "fn heads(t) {\n  return permute(reshape(t, (B, S, 4, 64)), (0, 2, 1, 3))\n}\n"
        "fn f(q: bf16[B, S, 256], k: bf16[B, S, 256], v: bf16[B, S, 256]) -> (bf16[B, S, 4, 64], "
        "bf16[B, 4, S, 64]) {\n"
        "  o = bf16(softmax(f32(heads(q) @ transpose(heads(k), -1, -2)) * 0.125, axis=-1)) @ "
        "heads(v)\n"
        "  return permute(o, (0, 2, 1, 3)), o + o\n}\n";
    fe_define defs[2] = {{"B", 2}, {"S", 72}};
    const char *srcs[] = {mha, gqa, twice};
    for (unsigned c = 0; c < 3; c++) {
        ir_graph *g;
        cg_program *p = tk_compile_src(srcs[c], CG_SM90A, defs, 2, &g);
        const ir_node *out = &g->nodes[ir_output(g)];
        ir_id v = ir_in(g, out, 0), u = pass_view_alias(g, v);
        if (c == 2) {
            assert_int_equal(u, IR_NONE);
            assert_true(cg_program_nkernels(p) > 1);
            cg_program_free(p);
            ir_graph_free(g);
            continue;
        }
        assert_int_not_equal(u, IR_NONE);
        assert_int_equal(cg_program_nkernels(p), 1);
        assert_non_null(strstr(cg_program_kernel(p, 0)->tmpl, "fa3-wgmma-tma-ws"));
        pass_view_strides st;
        assert_true(pass_view_strides_of(g, u, v, &st));
        assert_true(st.permuted && st.inner);
        const ir_shape *us = &g->nodes[u].shape;
        int64_t total = 1;
        for (unsigned i = 0; i < us->rank; i++) total *= us->dim[i];
        for (int64_t e = 0; e < total; e++) {
            int64_t ix[IR_MAX_RANK], rem = e, off = 0;
            for (unsigned i = us->rank; i-- > 0;) ix[i] = rem % us->dim[i], rem /= us->dim[i];
            for (unsigned a = 0; a < us->rank; a++) {
                int64_t stride = 1;
                for (unsigned j = 0; j < st.n[a]; j++) stride *= st.f[a][j];
                off += (us->dim[a] == 1 ? 0 : ix[a]) * stride;
            }
            assert_int_equal(off, model_up(g, u, v, ix));
        }
        cg_program_free(p);
        ir_graph_free(g);
    }
}

static void ptxas_check(const char *src, const fe_define *defs, unsigned nd, int max_spill);

/* The wgmma instructions of a PTX text: m64n128k16 ones into *nqk when pad is 64 (the scores),
 * m64n<pad>k16 ones into *npv (with pad 128: every wgmma). */
static void count_wgmma(const char *ptx, int pad, unsigned *nqk, unsigned *npv) {
    char pv[32], line[256];
    snprintf(pv, sizeof pv, "m64n%dk16", pad);
    *nqk = *npv = 0;
    for (const char *at = ptx; (at = strstr(at, "wgmma.mma_async")); at++) {
        const char *eol = strchr(at, '\n');
        size_t n = eol ? (size_t)(eol - at) : strlen(at);
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, at, n);
        line[n] = 0;
        if (strstr(line, pv))
            (*npv)++;
        else if (strstr(line, "m64n128k16"))
            (*nqk)++;
    }
}

/* Head dims that are multiples of 16 below 128 run on the 64- or 128-wide kernel: the maps'
 * dim 0 is D (TMA zero-fills the box's columns past it), S = Q Kᵀ takes D / 16 k steps, the
 * template names both; ptxas clean. */
static void test_padded_d(void **state) {
    (void)state;
    static const struct {
        int d, pad;
    } cases[] = {{16, 64}, {48, 64}, {80, 128}, {96, 128}, {112, 128}};
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fe_define defs[1] = {{"D", cases[c].d}};
        cg_program *p = tk_compile_src(SRC_PLAIN, CG_SM90A, defs, 1, NULL);
        const cg_kernel *k = tk_region_kernel(p);
        char want[64];
        snprintf(want, sizeof want, " d%dp%d s", cases[c].d, cases[c].pad);
        assert_non_null(strstr(k->tmpl, "fa3-wgmma-tma-ws 128x"));
        assert_non_null(strstr(k->tmpl, want));
        assert_int_equal(k->ntmaps, 3);
        for (unsigned i = 0; i < 3; i++) {
            assert_int_equal(k->tmaps[i].dim[0], cases[c].d);
            assert_int_equal(k->tmaps[i].box[0], 64);
        }
        /* per key tile: D/16 wgmma for S (n128), one per 16 keys for O (n = the padded width):
         * with a 64-wide kernel the two kinds differ, with a 128-wide one the total is below
         * the unpadded kernel's */
        unsigned nqk, npv, full = 0, tot = 0;
        count_wgmma(cg_program_ptx(p, NULL), cases[c].pad, &nqk, &npv);
        if (cases[c].pad == 64) {
            assert_true(nqk > 0 && npv > 0 && nqk % (unsigned)(cases[c].d / 16) == 0);
            assert_int_equal(nqk / (unsigned)(cases[c].d / 16), npv / 8);
        } else {
            fe_define d128[1] = {{"D", 128}};
            cg_program *p1 = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
            count_wgmma(cg_program_ptx(p1, NULL), 128, &full, &tot);
            unsigned all = 0;
            for (const char *at = cg_program_ptx(p, NULL); (at = strstr(at, "wgmma.mma_async"));
                 at++)
                all++;
            unsigned all128 = 0;
            for (const char *at = cg_program_ptx(p1, NULL); (at = strstr(at, "wgmma.mma_async"));
                 at++)
                all128++;
            assert_true(all < all128); /* fewer S steps: D/16 instead of 8 */
            cg_program_free(p1);
        }
        cg_program_free(p);
    }
    /* the scale written as a division by sqrt(D) is peeled like a product: no division per
     * score (the division form stays in F for the other kernels) */
    static const char *divsrc =
        "fn f(q: bf16[B, H, S, 96], k: bf16[B, H, S, 96], v: bf16[B, H, S, 96]) -> "
        "bf16[B, H, S, 96] {\n"
        "  return bf16(softmax(f32(q @ transpose(k, -1, -2)) / 9.797958971132712, axis=-1)) @ v\n"
        "}\n";
    cg_program *pd = tk_compile_src(divsrc, CG_SM90A, NULL, 0, NULL);
    assert_non_null(strstr(tk_region_kernel(pd)->tmpl, "d96p128"));
    assert_null(strstr(cg_program_ptx(pd, NULL), "div.rn.f32"));
    cg_program_free(pd);
    fe_define d80[1] = {{"D", 80}}, d48[1] = {{"D", 48}};
    ptxas_check(SRC_PLAIN, d80, 1, 0);
    ptxas_check(SRC_PLAIN, d48, 1, 0);
}

/* Head dims above 128 on the FA3 kernel: 192 and 256 natively (96 and 64 keys per step), 160
 * and 240 padded to them (maps' dim 0 is D), a masked F at 192 with 80 keys; per key tile D/16
 * wgmma for S (n = the keys) and one per 16 keys for O (n = the kernel's head dim); ptxas clean
 * but for masked kernels' consumers (causal, S symbolic: D192 4 bytes, D256 84 bytes). */
static void test_wide_d(void **state) {
    (void)state;
    static const struct {
        int d, pad, bn;
        const char *tmpl;
    } cases[] = {{192, 192, 96, "128x96 d192 s2 "},
                 {256, 256, 64, "128x64 d256 s2 "},
                 {160, 192, 96, "128x96 d160p192 s2 "},
                 {240, 256, 64, "128x64 d240p256 s2 "}};
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fe_define defs[1] = {{"D", cases[c].d}};
        cg_program *p = tk_compile_src(SRC_PLAIN, CG_SM90A, defs, 1, NULL);
        const cg_kernel *k = tk_region_kernel(p);
        assert_non_null(strstr(k->tmpl, "fa3-wgmma-tma-ws "));
        if (!strstr(k->tmpl, cases[c].tmpl))
            fail_msg("template %s, want %s", k->tmpl, cases[c].tmpl);
        assert_int_equal(k->ntmaps, 3);
        for (unsigned i = 0; i < 3; i++) {
            assert_int_equal(k->tmaps[i].dim[0], cases[c].d);
            assert_int_equal(k->tmaps[i].box[0], 64);
            assert_int_equal(k->tmaps[i].box[1], i == 0 ? 128 : (uint32_t)cases[c].bn);
        }
        char qk[32], pv[32];
        snprintf(qk, sizeof qk, "m64n%dk16", cases[c].bn);
        snprintf(pv, sizeof pv, "m64n%dk16", cases[c].pad);
        const char *ptx = cg_program_ptx(p, NULL);
        unsigned nqk = count(ptx, qk), npv = count(ptx, pv);
        assert_true(nqk > 0 && npv > 0);
        assert_int_equal(nqk % (unsigned)(cases[c].d / 16), 0);
        assert_int_equal(npv % (unsigned)(cases[c].bn / 16), 0);
        assert_int_equal(nqk / (unsigned)(cases[c].d / 16), npv / (unsigned)(cases[c].bn / 16));
        cg_program_free(p);
        ptxas_check(SRC_PLAIN, defs, 1, 0);
    }
    static const char *causal = "fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D], v: bf16[B, H, S, "
                                "D]) -> bf16[B, H, S, D] {\n"
                                "  s = f32(q @ transpose(k, -1, -2)) * 0.0625\n"
                                "  keep = iota((S, S), axis=0) >= iota((S, S), axis=1)\n"
                                "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
    fe_define d192[1] = {{"D", 192}}, d256[1] = {{"D", 256}};
    cg_program *p = tk_compile_src(causal, CG_SM90A, d192, 1, NULL);
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, "128x80 d192 s2 q2 "));
    cg_program_free(p);
    ptxas_check(causal, d192, 1, 8);
    ptxas_check(causal, d256, 1, 96);
}

/* The D128 measurement knobs: TX_ATTN_ONES=1 adds one m64n8k16 wgmma (L += P 1) per 16 keys of
 * O += P V and drops the row-sum tree (246 add.rn.f32 -> 2 at D128 when written); TX_ATTN_POLY=8
 * moves every 8th exponent off ex2.approx; TX_ATTN_FA3=0 leaves the mma.sync kernel; ptxas clean.
 */
static void test_d128_knobs(void **state) {
    (void)state;
    fe_define d128[1] = {{"D", 128}};
    cg_program *p0 = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
    const char *ptx0 = cg_program_ptx(p0, NULL);
    unsigned add0 = count(ptx0, "add.rn.f32"), ex0 = count(ptx0, "ex2.approx");
    setenv("TX_ATTN_ONES", "1", 1);
    cg_program *p1 = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
    const char *ptx1 = cg_program_ptx(p1, NULL);
    assert_non_null(strstr(tk_region_kernel(p1)->tmpl, " ones"));
    assert_int_equal(count(ptx1, "m64n8k16"), count(ptx1, "m64n128k16"));
    assert_true(count(ptx1, "add.rn.f32") + 100 < add0);
    ptxas_check(SRC_PLAIN, d128, 1, 0);
    unsetenv("TX_ATTN_ONES");
    setenv("TX_ATTN_POLY", "8", 1);
    cg_program *p2 = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
    assert_non_null(strstr(tk_region_kernel(p2)->tmpl, " poly8"));
    assert_true(count(cg_program_ptx(p2, NULL), "ex2.approx") < ex0);
    ptxas_check(SRC_PLAIN, d128, 1, 0);
    unsetenv("TX_ATTN_POLY");
    setenv("TX_ATTN_FA3", "0", 1);
    cg_program *p3 = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
    assert_int_equal(tk_region_kernel(p3)->ntmaps, 0);
    assert_null(strstr(cg_program_ptx(p3, NULL), "wgmma"));
    unsetenv("TX_ATTN_FA3");
    cg_program_free(p0), cg_program_free(p1), cg_program_free(p2), cg_program_free(p3);
}

static void test_tmap3_check(void **state) {
    (void)state;
    char e[200];
    rt_tmap_desc t = {IR_BF16, 128, {128, 4096, 128}, {64, 128, 1}, 3, 0, 0, 0};
    assert_true(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.dim[2] = 0;
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    assert_non_null(strstr(e, "extent"));
    t.dim[2] = 1, t.box[2] = 0;
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.box[2] = 1, t.rank = 4; /* a 4-D map checks dim[3] and box[3] */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.dim[3] = 2, t.box[3] = 1;
    assert_true(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.rank = 5, t.dim[4] = 3, t.box[4] = 1;
    assert_true(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.rank = 6;
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    assert_non_null(strstr(e, "rank"));
    t.rank = 5, t.dim[3] = (int64_t)1 << 25; /* the stride of dim 4: 2^49 bytes */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    assert_non_null(strstr(e, "2^40"));
    t.rank = 2, t.dim[2] = 0, t.box[2] = 0; /* a 2-D map ignores the dims past its rank */
    assert_true(rt_tmap_check(&t, 0x1000, e, sizeof e));
}

/* What keeps the mma.sync kernel on sm_90a, and sm_90 always. */
static void test_fallbacks(void **state) {
    (void)state;
    static const char *f32src =
        "fn f(q: f32[S, 64], k: f32[S, 64], v: f32[S, 64]) -> f32[S, 64] {\n"
        "  return softmax(q @ transpose(k, -1, -2), axis=-1) @ v\n}\n";
    fe_define d72[1] = {{"D", 72}}, d320[1] = {{"D", 320}},
              dec[3] = {{"D", 128}, {"S", 1}, {"H", 2}};
    struct {
        const char *src;
        const fe_define *defs;
        unsigned nd;
        int target;
    } cases[] = {
        {SRC_PLAIN, d72, 1, CG_SM90A},  /* head dim 72: not a multiple of 16 */
        {SRC_PLAIN, d320, 1, CG_SM90A}, /* head dim 320: above 256 */
        {SRC_PLAIN, NULL, 0, CG_SM90A}, /* symbolic head dim */
        {SRC_PLAIN, dec, 3, CG_SM90A},  /* one query row (decode) */
        {f32src, NULL, 0, CG_SM90A},    /* f32 */
        {SRC_CAUSAL, NULL, 0, CG_SM90}, /* sm_90 */
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cg_program *p = tk_compile_src(cases[i].src, (cg_target)cases[i].target, cases[i].defs,
                                       cases[i].nd, NULL);
        const cg_kernel *k = tk_region_kernel(p);
        assert_int_equal(k->ntmaps, 0);
        assert_null(strstr(cg_program_ptx(p, NULL), "wgmma"));
        cg_program_free(p);
    }
}

/* Decode: the planner's attention.ksplit for 1-16 known query rows (16-bit, head dims <= 128):
 * the region's strategy, the key-split kernel on sm_90 and sm_90a (its template), its PTX through
 * ptxas; 17 rows, a symbolic count, f32 keep the 64-row tiles; TX_ATTN_KSPLIT=0 turns it off. */
static void test_decode_ksplit(void **state) {
    (void)state;
    static const char *dec =
        "fn f(q: bf16[B, H, T, 128], k: bf16[B, H, L, 128], v: bf16[B, H, L, 128], len: i32[B]) "
        "-> bf16[B, H, T, 128] {\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1))\n"
        "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
    static const char *f32dec =
        "fn f(q: f32[H, T, 64], k: f32[H, L, 64], v: f32[H, L, 64]) -> f32[H, T, 64] {\n"
        "  return softmax(q @ transpose(k, -1, -2), axis=-1) @ v\n}\n";
    struct {
        const char *src;
        int64_t t; /* 0: symbolic */
        bool ks;
    } cases[] = {
        {dec, 1, true}, {dec, 16, true}, {dec, 17, false}, {dec, 0, false}, {f32dec, 1, false}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 0; t < 2; t++) {
            fe_define defs[1] = {{"T", cases[i].t}};
            ir_graph *g;
            cg_program *p =
                tk_compile_src(cases[i].src, t ? CG_SM90A : CG_SM90, defs, cases[i].t ? 1 : 0, &g);
            const ir_region *rg = &g->regions[tk_region_kernel(p)->region];
            assert_int_equal(rg->kind, IR_RK_ATTENTION);
            assert_int_equal(rg->strategy == IR_RED_KSPLIT, cases[i].ks);
            const cg_kernel *k = tk_region_kernel(p);
            assert_int_equal(strstr(k->tmpl, "mma-attn-ksplit 16x64") != NULL, cases[i].ks);
            if (cases[i].ks) {
                assert_int_equal(k->block[0], 128);
                size_t len;
                const char *ptx = cg_program_ptx(p, &len);
                int rc = tk_ptxas(ptx, len, t ? "sm_90a" : "sm_90", NULL);
                assert_true(rc == 0 || rc == -1); /* -1: no ptxas here */
            }
            cg_program_free(p);
            ir_graph_free(g);
        }
    setenv("TX_ATTN_KSPLIT", "0", 1);
    fe_define one[1] = {{"T", 1}};
    cg_program *p = tk_compile_src(dec, CG_SM90A, one, 1, NULL);
    unsetenv("TX_ATTN_KSPLIT");
    assert_null(strstr(tk_region_kernel(p)->tmpl, "ksplit"));
    cg_program_free(p);
}

/* Grouped-query decode ([attention.gqa_pack]): K and V broadcast over the group axis of 4 query
 * heads; T = 1, 3, 4 pack the group's 4 x T rows into one key-split block (template "gqa4", the
 * batch work with the group axis at 1, ptxas clean), T = 5 (20 rows) and TX_ATTN_GQA_PACK=0 keep
 * one head per block (the group axis in the work). */
static void test_decode_gqa_pack(void **state) {
    (void)state;
    static const char *src =
        "fn f(q: bf16[B, 32, T, 128], k: bf16[B, 8, L, 128], v: bf16[B, 8, L, 128], len: i32[B]) "
        "-> bf16[B, 32, T, 128] {\n"
        "  qg = reshape(q, (B, 8, 4, T, 128))\n"
        "  kg = reshape(k, (B, 8, 1, L, 128))\n"
        "  vg = reshape(v, (B, 8, 1, L, 128))\n"
        "  s = f32(qg @ transpose(kg, -1, -2)) * 0.088\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1, 1))\n"
        "  return reshape(bf16(softmax(where(keep, s, -inf), axis=-1)) @ vg, (B, 32, T, 128))\n}\n";
    struct {
        int64_t t;
        bool off, pack;
    } cases[] = {
        {1, false, true}, {3, false, true}, {4, false, true}, {5, false, false}, {1, true, false}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].off) setenv("TX_ATTN_GQA_PACK", "0", 1);
        fe_define defs[3] = {{"B", 2}, {"T", cases[i].t}, {"L", 4096}};
        ir_graph *g;
        cg_program *p = tk_compile_src(src, CG_SM90A, defs, 3, &g);
        const cg_kernel *k = tk_region_kernel(p);
        int64_t gt;
        assert_int_equal(pass_attention_gqa_pack(g, &g->regions[k->region], &gt),
                         cases[i].pack ? 4 : 0);
        unsetenv("TX_ATTN_GQA_PACK");
        assert_non_null(strstr(k->tmpl, "mma-attn-ksplit 16x64"));
        assert_int_equal(strstr(k->tmpl, " gqa4") != NULL, cases[i].pack);
        assert_int_equal(k->work[1].rank, 3);
        assert_int_equal(k->work[1].dim[2], cases[i].pack ? 1 : 4);
        size_t len;
        const char *ptx = cg_program_ptx(p, &len);
        int rc = tk_ptxas(ptx, len, "sm_90a", NULL);
        assert_true(rc == 0 || rc == -1); /* -1: no ptxas here */
        cg_program_free(p);
        ir_graph_free(g);
    }
}

/* Split-KV across blocks ([attention.split_kv]): the planner splits the keys where the batch
 * leaves SMs idle (B1 H32 L32768: a partials kernel of grid z = chunks writing a scratch temp of
 * [chunks x heads x rows, Dv + 2] f32, then a combine kernel reading it and writing the output;
 * ptxas clean on sm_90a and sm_80), not where it fills them (B8 H32) or the keys are few (L 300);
 * TX_ATTN_SPLITS=1 keeps one kernel; the host gets the same two kernels. */
static void test_decode_split(void **state) {
    (void)state;
    static const char *dec =
        "fn f(q: bf16[B, H, T, 128], k: bf16[B, H, L, 128], v: bf16[B, H, L, 128], len: i32[B]) "
        "-> bf16[B, H, T, 128] {\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1))\n"
        "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
    struct {
        int64_t b, l, t;
        bool split;
        int target;
    } cases[] = {{1, 32768, 1, true, CG_SM90A},
                 {1, 8192, 4, true, CG_SM80},
                 {1, 32768, 1, true, CG_HOST},
                 {8, 32768, 1, false, CG_SM90A},
                 {1, 300, 1, false, CG_SM90A}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_define defs[4] = {{"B", cases[i].b}, {"H", 32}, {"T", cases[i].t}, {"L", cases[i].l}};
        ir_graph *g;
        cg_program *p = tk_compile_src(dec, (cg_target)cases[i].target, defs, 4, &g);
        const cg_kernel *k = tk_region_kernel(p);
        const ir_region *rg = &g->regions[k->region];
        assert_int_equal(rg->splits > 1, cases[i].split);
        unsigned nk = 0;
        for (unsigned j = 0; j < cg_program_nkernels(p); j++)
            nk += cg_program_kernel(p, j)->region >= 0;
        assert_int_equal(nk, cases[i].split ? 2 : 1);
        if (cases[i].split) {
            const cg_kernel *c = cg_program_kernel(p, 1);
            char want[48];
            assert_non_null(strstr(k->name, "_part"));
            assert_non_null(strstr(c->name, "_comb"));
            snprintf(want, sizeof want, "split-kv %u", rg->splits);
            assert_non_null(strstr(k->tmpl, want));
            snprintf(want, sizeof want, "attn-split-kv-combine %u", rg->splits);
            assert_string_equal(c->tmpl, want);
            assert_int_equal(k->work[2].rank, 1);
            assert_int_equal(k->work[2].dim[0], rg->splits);
            /* the partials kernel writes only the scratch; the combine reads it, writes the output
             */
            bool tw = false, tr = false, ow = false;
            for (unsigned j = 0; j < k->nbufs; j++) {
                if (k->bufs[j].write) assert_int_equal(k->bufs[j].kind, CG_BUF_TEMP);
                tw |= k->bufs[j].kind == CG_BUF_TEMP && k->bufs[j].write;
            }
            for (unsigned j = 0; j < c->nbufs; j++) {
                tr |= c->bufs[j].kind == CG_BUF_TEMP && !c->bufs[j].write;
                ow |= c->bufs[j].kind == CG_BUF_OUTPUT && c->bufs[j].write;
            }
            assert_true(tw && tr && ow);
            const cg_temp *tp = cg_program_temp(p, cg_program_ntemps(p) - 1);
            assert_int_equal(tp->dtype, IR_F32);
            assert_int_equal(tp->shape.dim[0], (int64_t)rg->splits * cases[i].b * 32 * cases[i].t);
            assert_int_equal(tp->shape.dim[1], 130);
            if (cases[i].target != CG_HOST) {
                size_t len;
                const char *ptx = cg_program_ptx(p, &len);
                int rc = tk_ptxas(ptx, len, cases[i].target == CG_SM80 ? "sm_80" : "sm_90a", NULL);
                assert_true(rc == 0 || rc == -1); /* -1: no ptxas here */
            }
        }
        cg_program_free(p);
        ir_graph_free(g);
    }
    setenv("TX_ATTN_SPLITS", "1", 1);
    fe_define one[4] = {{"B", 1}, {"H", 32}, {"T", 1}, {"L", 32768}};
    cg_program *p = tk_compile_src(dec, CG_SM90A, one, 4, NULL);
    unsetenv("TX_ATTN_SPLITS");
    assert_null(strstr(tk_region_kernel(p)->tmpl, "split-kv"));
    cg_program_free(p);
}

/* The key split's copies, cp.async (ks_tile_async): a cache of whole key tiles (also a symbolic
 * length: its strides are provable multiples of 8) takes the plain 16-byte copy with the L2
 * prefetch (no src-size operand: every vector is inside), a cache whose last tile crosses its
 * end also the zero-filling form for that tile. Registers within 255, no spills;
 * TX_ATTN_KS_BLOCKS=3 with two stages: 3 blocks' shared memory, registers for 3 an SM; 128-key
 * tiles (TX_ATTN_KS_BN=128) likewise. */
static void test_decode_copy(void **state) {
    (void)state;
    static const char *dec =
        "fn f(q: bf16[B, H, T, 128], k: bf16[B, H, L, 128], v: bf16[B, H, L, 128], len: i32[B]) "
        "-> bf16[B, H, T, 128] {\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1))\n"
        "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
    struct {
        int64_t l; /* 0: symbolic */
        bool ragged;
        const char *blocks;
    } cases[] = {{32768, false, NULL}, {32773, true, NULL}, {0, true, NULL}, {32768, false, "3"}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_define defs[4] = {{"T", 1}, {"B", 8}, {"H", 32}, {"L", cases[i].l}};
        if (cases[i].blocks)
            setenv("TX_ATTN_KS_BLOCKS", cases[i].blocks, 1), setenv("TX_ATTN_KS_STAGES", "2", 1);
        cg_program *p = tk_compile_src(dec, CG_SM90A, defs, cases[i].l ? 4 : 3, NULL);
        unsetenv("TX_ATTN_KS_BLOCKS");
        unsetenv("TX_ATTN_KS_STAGES");
        const cg_kernel *k = tk_region_kernel(p);
        assert_non_null(strstr(k->tmpl, cases[i].blocks ? " s2 l2p128 b3" : " s3 l2p128"));
        size_t len;
        const char *ptx = cg_program_ptx(p, &len);
        /* a K and a V tile of 64 x 128: 16 + 16 vectors a thread, whole */
        assert_true(count(ptx, "cp.async.cg.shared.global.L2::128B") >= 32);
        const char *w = strstr(ptx, "cp.async.cg.shared.global.L2::128B");
        assert_non_null(w);
        bool whole = false, zfill = false;
        for (; w; w = strstr(w + 1, "cp.async.cg.shared.global.L2::128B")) {
            const char *e = strchr(w, ';');
            unsigned commas = 0;
            for (const char *c = w; c < e; c++) commas += *c == ',';
            whole |= commas == 2, zfill |= commas == 3;
        }
        assert_true(whole);
        assert_int_equal(zfill, cases[i].ragged);
        if (cases[i].blocks) {
            assert_non_null(strstr(ptx, ".minnctapersm 3"));
            assert_true(3 * (k->smem_bytes + 4352 + 1024) <= 233472);
        }
        tk_ptxas_stats st;
        if (tk_ptxas_stats_of(ptx, len, "sm_90a", &st) == 0) {
            assert_true(st.regs > 0 && st.regs <= (cases[i].blocks ? 168 : 255));
            assert_true(st.spill <= 0);
        }
        cg_program_free(p);
    }
    /* 128-key tiles (TX_ATTN_KS_BN=128): each warp 32 keys, twice the vectors a thread */
    setenv("TX_ATTN_KS_BN", "128", 1);
    fe_define defs[4] = {{"T", 1}, {"B", 8}, {"H", 32}, {"L", 32773}};
    cg_program *p = tk_compile_src(dec, CG_SM90A, defs, 4, NULL);
    unsetenv("TX_ATTN_KS_BN");
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, "mma-attn-ksplit 16x128 w4 s3 l2p128"));
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    assert_true(count(ptx, "cp.async.cg.shared.global.L2::128B") >= 64);
    tk_ptxas_stats st;
    if (tk_ptxas_stats_of(ptx, len, "sm_90a", &st) == 0) {
        assert_true(st.regs > 0 && st.regs <= 255);
        assert_true(st.spill <= 0);
    }
    cg_program_free(p);
}

/* [attention.split_kv] with sizes bound at run time (only T known at compile time, or T and H):
 * the planner records the resident slots (split_slots) and the chunks that fill them for the
 * fewest blocks the known sizes allow (at most 16), the partials kernel names them `split-kv N
 * rt`, the scratch is [N, B, H, T, Dv + 2] over the output's symbolic dims, the combine's grid
 * covers the batch dims; with every size known nothing of this (split_slots 0). */
static void test_decode_split_rt(void **state) {
    (void)state;
    static const char *dec =
        "fn f(q: bf16[B, H, T, 128], k: bf16[B, H, L, 128], v: bf16[B, H, L, 128], len: i32[B]) "
        "-> bf16[B, H, T, 128] {\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1))\n"
        "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
    struct {
        unsigned ndefs;
        int target;
        unsigned splits; /* expected chunks */
    } cases[] = {{1, CG_SM90A, 16}, {2, CG_SM90A, 8}, {1, CG_HOST, 16}, {2, CG_SM80, 8}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_define defs[2] = {{"T", 2}, {"H", 32}};
        ir_graph *g;
        cg_program *p = tk_compile_src(dec, (cg_target)cases[i].target, defs, cases[i].ndefs, &g);
        const cg_kernel *k = tk_region_kernel(p);
        const ir_region *rg = &g->regions[k->region];
        assert_int_equal(rg->splits, cases[i].splits);
        assert_true(rg->split_slots >= 132 * 2 && rg->split_slots % 132 == 0);
        char want[48];
        snprintf(want, sizeof want, "split-kv %u rt", rg->splits);
        if (cases[i].target != CG_HOST) assert_non_null(strstr(k->tmpl, want));
        const cg_temp *tp = cg_program_temp(p, cg_program_ntemps(p) - 1);
        assert_int_equal(tp->shape.rank, 5);
        assert_int_equal(tp->shape.dim[0], (int64_t)rg->splits);
        assert_true(IR_DIM_IS_SYM(tp->shape.dim[1]));
        assert_int_equal(tp->shape.dim[3], 2);
        assert_int_equal(tp->shape.dim[4], 130);
        assert_int_equal(IR_DIM_IS_SYM(tp->shape.dim[2]), cases[i].ndefs == 1);
        const cg_kernel *c = cg_program_kernel(p, 1);
        assert_non_null(strstr(c->name, "_comb"));
        assert_int_equal(c->work[1].rank, 2);
        if (cases[i].target != CG_HOST) {
            size_t len;
            const char *ptx = cg_program_ptx(p, &len);
            int rc = tk_ptxas(ptx, len, cases[i].target == CG_SM80 ? "sm_80" : "sm_90a", NULL);
            assert_true(rc == 0 || rc == -1); /* -1: no ptxas here */
        }
        cg_program_free(p);
        ir_graph_free(g);
    }
    fe_define all[4] = {{"T", 2}, {"H", 32}, {"B", 1}, {"L", 32768}};
    ir_graph *g;
    cg_program *p = tk_compile_src(dec, CG_SM90A, all, 4, &g);
    const ir_region *rg = &g->regions[tk_region_kernel(p)->region];
    assert_true(rg->splits > 1);
    assert_int_equal(rg->split_slots, 0);
    assert_null(strstr(tk_region_kernel(p)->tmpl, " rt"));
    cg_program_free(p);
    ir_graph_free(g);
}

/* Per-CTA causal work (query tile qt costs qt + 1 key tiles) of the persistent loop's static
 * assignment (CTA c takes c, c + ncta, ...) in the plain or the paired order: max over mean.
 * Checks on the way that every (batch, query tile) comes exactly once. */
static double order_balance(int64_t nq, int64_t nb, int64_t ncta, bool zig) {
    int64_t n = nq * nb, *w = calloc((size_t)ncta, sizeof *w);
    unsigned char *seen = calloc((size_t)n, 1);
    assert_non_null(w);
    assert_non_null(seen);
    int64_t tot = 0;
    for (int64_t t = 0; t < n; t++) {
        int64_t p = zig ? cg_attn_wg_pair_pos(t, ncta, n) : t, bz, qt;
        assert_true(p >= 0 && p < n);
        cg_attn_wg_tile_order(p, nq, zig, &bz, &qt);
        assert_true(bz >= 0 && bz < nb && qt >= 0 && qt < nq);
        assert_int_equal(seen[bz * nq + qt]++, 0);
        w[t % ncta] += qt + 1, tot += qt + 1;
    }
    int64_t mx = 0;
    for (int64_t c = 0; c < ncta; c++) mx = w[c] > mx ? w[c] : mx;
    free(w);
    free(seen);
    return (double)mx * (double)ncta / (double)tot;
}

/* The tile orders are bijections at ragged counts; over 132 CTAs the busiest CTA's causal work
 * over the mean: a LLaMA block (16 query tiles x 32 heads) 1.21 plain, 1.03 paired; B4 H32 S4096
 * (32 x 128) 1.125 and 1.03; B1 H8 (32 x 8) 1.875 and 1.03. */
static void test_tile_order(void **state) {
    (void)state;
    int64_t cfg[][3] = {{32, 128, 132}, {9, 40, 132}, {1, 7, 132},   {33, 5, 16},
                        {8, 96, 132},   {3, 50, 132}, {16, 32, 132}, {7, 1, 132}};
    for (unsigned i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        double plain = order_balance(cfg[i][0], cfg[i][1], cfg[i][2], false);
        double zig = order_balance(cfg[i][0], cfg[i][1], cfg[i][2], true);
        assert_true(zig <= plain + 1e-9);
    }
    int64_t big[][2] = {{16, 32}, {32, 128}, {32, 8}};
    double plain[] = {1.21, 1.12, 1.87};
    for (unsigned i = 0; i < 3; i++) {
        assert_true(order_balance(big[i][0], big[i][1], 132, false) > plain[i]);
        assert_true(order_balance(big[i][0], big[i][1], 132, true) < 1.035);
    }
}

/* The measurement knobs (docs/codegen-attention.md): TX_ATTN_NO_SKIP=1 visits every key tile,
 * TX_ATTN_PIPELINE=0 and TX_ATTN_PINGPONG=0 change the key loop; the template says so. */
static void test_no_skip(void **state) {
    (void)state;
    cg_program *p = tk_compile_src(SRC_CAUSAL, CG_SM90A, NULL, 0, NULL);
    assert_null(strstr(tk_region_kernel(p)->tmpl, "noskip"));
    size_t n1;
    cg_program_ptx(p, &n1);
    cg_program_free(p);
    setenv("TX_ATTN_NO_SKIP", "1", 1);
    p = tk_compile_src(SRC_CAUSAL, CG_SM90A, NULL, 0, NULL);
    unsetenv("TX_ATTN_NO_SKIP");
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, "noskip"));
    size_t n2;
    cg_program_ptx(p, &n2);
    assert_true(n2 < n1); /* no tile-range evaluation */
    cg_program_free(p);
    /* the default: the pipelined loop (two wgmma groups in flight, wait_group 1) with ping-pong
     * (the consumers take turns through named barriers 1 and 2); TX_ATTN_PINGPONG=0: no turns;
     * TX_ATTN_PIPELINE=0: the plain loop */
    p = tk_compile_src(SRC_CAUSAL, CG_SM90A, NULL, 0, NULL);
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, " pipe pingpong"));
    assert_non_null(strstr(cg_program_ptx(p, NULL), "wgmma.wait_group.sync.aligned 1;"));
    assert_non_null(strstr(cg_program_ptx(p, NULL), "bar.arrive"));
    cg_program_free(p);
    setenv("TX_ATTN_PINGPONG", "0", 1);
    p = tk_compile_src(SRC_CAUSAL, CG_SM90A, NULL, 0, NULL);
    unsetenv("TX_ATTN_PINGPONG");
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, " pipe"));
    assert_null(strstr(tk_region_kernel(p)->tmpl, "pingpong"));
    assert_non_null(strstr(cg_program_ptx(p, NULL), "wgmma.wait_group.sync.aligned 1;"));
    assert_null(strstr(cg_program_ptx(p, NULL), "bar.arrive"));
    cg_program_free(p);
    setenv("TX_ATTN_PIPELINE", "0", 1);
    p = tk_compile_src(SRC_CAUSAL, CG_SM90A, NULL, 0, NULL);
    unsetenv("TX_ATTN_PIPELINE");
    assert_null(strstr(tk_region_kernel(p)->tmpl, "pipe"));
    assert_null(strstr(cg_program_ptx(p, NULL), "wgmma.wait_group.sync.aligned 1;"));
    assert_null(strstr(cg_program_ptx(p, NULL), "bar.arrive"));
    cg_program_free(p);
}

/* The attention region of src planned for sm_90a on the h200 model with S bound to sq (B 2, H 4);
 * the caller frees *g. */
static const ir_region *live_plan(const char *src, int64_t sq, ir_graph **g) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_define defs[3] = {{"S", sq}, {"B", 2}, {"H", 4}};
    fe_options fo = {.defines = defs, .ndefines = 3};
    *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(*g);
    pass_gpu buf;
    pass_target t = {90, true, false};
    pass_ctx pc = {.diag = &d, .gpu = pass_target_gpu(pass_gpu_find("h200"), t, &buf), .target = t};
    assert_true(pass_run_pipeline(*g, &pc));
    for (uint32_t r = 0; r < (*g)->nregions; r++)
        if ((*g)->regions[r].kind == IR_RK_ATTENTION) return &(*g)->regions[r];
    fail_msg("no attention region");
    abort();
}

/* [attention.block_sparse]'s price (passes/attn_live.c) against tile counts worked out by hand
 * with codegen's interval rules, over 128 x 128 tiles of S = 1000 (8 x 8 tiles, the last ragged)
 * and S = 1024:
 * - causal: query tile q visits key tiles 0 .. q: 1 + 2 + ... + 8 = 36 of 64;
 * - a window d = i - j in [0, 256): d over tile (q, k) lies in [128 (q - k) - 127, 128 (q - k) +
 *   127], may be >= 0 for k <= q and may be < 256 for k >= q - 2 (the interval loses that d is
 *   one value): 1 + 2 + 3 x 6 = 21 of 64;
 * - a mask from lengths (a run-time input) and a bool mask input: every tile (priced dense);
 * - a plain scale (no mask): no price (false).
 * The FA3 model's compute time scales by the share: causal against the same scores unmasked. */
static void test_live_tiles(void **state) {
    (void)state;
    const char *head =
        "fn f(q: bf16[B, H, S, 64], k: bf16[B, H, S, 64], v: bf16[B, H, S, 64]%s) -> "
        "bf16[B, H, S, 64] {\n  s = f32(q @ transpose(k, -1, -2)) * 0.125\n  d = iota((S, S), "
        "axis=0) - iota((S, S), axis=1)\n  return bf16(softmax(%s, axis=-1)) @ v\n}\n";
    const struct {
        const char *args, *scores;
        int64_t sq, visited;
        bool priced;
    } cs[] = {
        {"", "where(d >= 0, s, -inf)", 1000, 36, true},
        {"", "where(d >= 0, s, -inf)", 1024, 36, true},
        {"", "where(d >= 0 & d < 256, s, -inf)", 1024, 21, true},
        {", n: i32[B]", "where(iota((B, 1, 1, S), axis=3) < reshape(n, (B, 1, 1, 1)), s, -inf)",
         1000, 64, true},
        {", m: bool[B, 1, S, S]", "where(m, s, -inf)", 1000, 64, true},
        /* a positive scale after the mask keeps -inf (pass_attn_pos_scale); a negative one, a
         * tensor divisor or a finite fill value (finfo.min) does not skip */
        {"", "where(d >= 0, s, -inf) / 16.0", 1000, 36, true},
        {"", "0.5 * where(d >= 0, s, -inf) * 2.0", 1024, 36, true},
        {"", "where(d >= 0, s, -inf) / -16.0", 1000, 64, true},
        {"", "where(d >= 0, s, -3.4028234663852886e38) / 16.0", 1000, 64, true},
        {"", "s", 1000, 0, false},
    };
    char src[1024];
    for (unsigned c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        snprintf(src, sizeof src, head, cs[c].args, cs[c].scores);
        ir_graph *g;
        const ir_region *rg = live_plan(src, cs[c].sq, &g);
        pass_attn_live l;
        bool got = pass_attention_live(g, rg, 128, 128, &l);
        assert_int_equal(got, cs[c].priced);
        if (got) {
            assert_int_equal(l.tiles, 64);
            assert_int_equal(l.visited, cs[c].visited);
            assert_false(l.sampled);
        }
        ir_graph_free(g);
    }
    /* the model at S = 4096 (compute-bound): causal over unmasked = 528 / 1024 tiles, within the
     * score function's own FLOPs (both count every score) */
    double us[2];
    for (int c = 0; c < 2; c++) {
        snprintf(src, sizeof src, head, "", c ? "s" : "where(d >= 0, s, -inf)");
        ir_graph *g;
        const ir_region *rg = live_plan(src, 4096, &g);
        pass_gpu buf;
        const pass_gpu *gpu =
            pass_target_gpu(pass_gpu_find("h200"), (pass_target){90, true, false}, &buf);
        pass_index ix;
        assert_true(pass_index_build(g, &ix));
        pass_cost pc;
        pass_region_cost_ix(g, &ix, (uint32_t)(rg - g->regions), gpu, &pc);
        pass_model m;
        pass_model_region(g, &ix, (uint32_t)(rg - g->regions), gpu, &pc, &m);
        assert_string_equal(m.schedule, "attention.fa3");
        assert_true(m.comp_us > m.mem_us);
        us[c] = m.comp_us;
        pass_index_free(&ix);
        ir_graph_free(g);
    }
    assert_true(fabs(us[0] / us[1] - 528.0 / 1024.0) < 0.01);
}

/* The consumer's arithmetic per score (docs/codegen-attention.md): in the plain D128 kernel
 * (TX_ATTN_PIPELINE=0: NS = bn / 2 scores and 64 outputs per thread, the scale 0.125) every
 * 16-bit convert is paired: NS / 2 to round the products, NS / 2 to pack P, 32 to store O; one
 * ex2 per score plus one per row for alpha; the scale and log2(e) in one FFMA per score (0.125
 * log2(e) = 0x3E38AA3B its multiplier), never a multiply by the scale; the O rescale behind a
 * warp vote. The default pipelined loop has the same softmax twice (the first tile and the
 * steady state), three times when S is not a multiple of the key tile (the steady state's clean
 * tiles, then the partial last one masked: a second rescale vote). f16 pairs the same way; so
 * do the wide key tile and the 128-key one. */
static void test_score_arith(void **state) {
    (void)state;
    fe_define d128[2] = {{"D", 128}, {"S", 4096}};
    for (int c = 0; c < 8; c++) {
        bool half = c & 1, plain = c & 2, narrow = c & 4;
        if (plain) setenv("TX_ATTN_PIPELINE", "0", 1);
        if (narrow) setenv("TX_ATTN_BN", "128", 1);
        cg_program *p = tk_compile_src(half ? SRC_F16 : SRC_PLAIN, CG_SM90A, d128, 2, NULL);
        unsetenv("TX_ATTN_PIPELINE");
        unsetenv("TX_ATTN_BN");
        int bm = 0, bn = 0;
        assert_int_equal(sscanf(tk_region_kernel(p)->tmpl, "fa3-wgmma-tma-ws %dx%d", &bm, &bn), 2);
        assert_int_equal(bn, narrow ? 128 : CG_ATTN_WG_WIDE_BN);
        unsigned ns = (unsigned)bn / 2;
        bool split = !plain && 4096 % bn != 0;  /* the masked last tile beside the loop */
        unsigned n = plain ? 1 : split ? 3 : 2; /* copies of the softmax */
        const char *ptx = cg_program_ptx(p, NULL);
        const char *pair = half ? "cvt.rn.f16x2.f32" : "cvt.rn.bf16x2.f32";
        const char *one = half ? "cvt.rn.f16.f32" : "cvt.rn.bf16.f32";
        /* (the masked copy of a known S folds the scores of keys past S away: exp(-inf)) */
        unsigned lo = split ? n - 1 : n;
        assert_in_range(count(ptx, pair), ns * lo + 32, ns * n + 32);
        assert_int_equal(count(ptx, one), 0);
        assert_in_range(count(ptx, "ex2.approx"), (ns + 2) * lo, (ns + 2) * n);
        assert_in_range(count(ptx, "fma.rn.f32"), ns * lo, ns * n);
        assert_int_equal(count(ptx, "fma.rn.f32"), count(ptx, "0f3E38AA3B,"));
        assert_int_equal(count(ptx, "0f3E000000"), 0);
        assert_int_equal(count(ptx, "vote.sync.any"), split ? 2 : 1);
        /* the 16-bit row max in every copy that knows its tile is clean (the steady loop) */
        assert_true(count(ptx, half ? "max.f16x2" : "max.bf16x2") >= ns / 2 - 2);
        cg_program_free(p);
    }
    /* a symbolic S: the key-bound mask (one select of -inf per score) only in the copy for
     * the tiles that need it, the unmasked copy beside it; one exponent per score still */
    setenv("TX_ATTN_PIPELINE", "0", 1);
    cg_program *p = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
    unsetenv("TX_ATTN_PIPELINE");
    const char *ptx = cg_program_ptx(p, NULL);
    unsigned ns = CG_ATTN_WG_WIDE_BN / 2;
    assert_int_equal(count(ptx, "ex2.approx"), ns + 2);
    assert_int_equal(count(ptx, "fma.rn.f32"), ns);
    assert_true(count(ptx, "0fFF800000,") >= ns);
    cg_program_free(p);
    /* pipelined with a symbolic S: the first tile (both copies), the clean loop, the masked last
     * tile: three softmaxes, each with all its scores */
    p = tk_compile_src(SRC_PLAIN, CG_SM90A, d128, 1, NULL);
    ptx = cg_program_ptx(p, NULL);
    assert_int_equal(count(ptx, "ex2.approx"), 3 * (ns + 2));
    assert_int_equal(count(ptx, "fma.rn.f32"), 3 * ns);
    assert_int_equal(count(ptx, "vote.sync.any"), 2);
    cg_program_free(p);
    /* TX_ATTN_SPEC=1 (d = 64, S = 1024): the steady loop's exponents against the running max,
     * one vote for a grown row, the fallback's fresh unpack of the pairs; the same count of
     * FFMA per score in each copy */
    fe_define d64k[2] = {{"D", 64}, {"S", 1024}};
    setenv("TX_ATTN_SPEC", "1", 1);
    p = tk_compile_src(SRC_PLAIN, CG_SM90A, d64k, 2, NULL);
    unsetenv("TX_ATTN_SPEC");
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, " spec"));
    ptx = cg_program_ptx(p, NULL);
    assert_int_equal(count(ptx, "vote.sync.any"), 2);   /* the rescale's and the speculation's */
    assert_int_equal(count(ptx, "fma.rn.f32"), 3 * 64); /* first tile, speculated, fallback */
    cg_program_free(p);
}

/* ptxas -v of one program: assembles, no wgmma serialisation warnings, 65536 / threads registers
 * rounded down to 8 (168 with two consumer warpgroups, 128 with three: the kernel moves
 * registers with setmaxnreg), at most max_spill bytes of spill stores: 0 unless the
 * producer evaluates a mask's key range (its one thread runs at 24 registers; raising only the
 * producer's setmaxnreg removes those spills, see test_producer_spills). */
static void ptxas_check(const char *src, const fe_define *defs, unsigned nd, int max_spill) {
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, nd, NULL);
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    assert_non_null(strstr(ptx, "wgmma.mma_async"));
    tk_ptxas_stats st;
    int rc = tk_ptxas_stats_of(ptx, len, "sm_90a", &st);
    int regs = (int)(65536 / tk_region_kernel(p)->block[0]) / 8 * 8;
    cg_program_free(p);
    if (rc == -1) skip();
    assert_int_equal(rc, 0);
    const char *bn = getenv("TX_ATTN_BN");
    if (st.warning[0]) fail_msg("ptxas: %s (%.60s, TX_ATTN_BN %s)", st.warning, src, bn ? bn : "-");
    if (st.spill > max_spill)
        fail_msg("ptxas: %d bytes of spill stores (%.60s, TX_ATTN_BN %s)", st.spill, src,
                 bn ? bn : "-");
    assert_int_equal(st.regs, regs);
}

/* The spills ptxas_check allows for masked kernels are the producer's: the same PTX with only
 * the producer's setmaxnreg raised to 32 has none. */
static void test_producer_spills(void **state) {
    (void)state;
    cg_program *p = tk_compile_src(SRC_CAUSAL, CG_SM90A, NULL, 0, NULL);
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    const char *dec = "setmaxnreg.dec.sync.aligned.u32 24;";
    const char *at = strstr(ptx, dec);
    assert_non_null(at);
    char *mod = malloc(len + 1);
    memcpy(mod, ptx, len + 1);
    memcpy(mod + (at - ptx), "setmaxnreg.dec.sync.aligned.u32 32;", strlen(dec));
    tk_ptxas_stats st;
    int rc = tk_ptxas_stats_of(mod, len, "sm_90a", &st);
    free(mod);
    cg_program_free(p);
    if (rc == -1) skip();
    assert_int_equal(rc, 0);
    assert_int_equal(st.spill, 0); /* reported (a stack frame line) and zero */
}

/* F = c x + (1 - keep) finfo(f32).min (HF's additive padding mask): |F| up to FLT_MAX, so
 * FFMA(F, log2 e, -m log2 e) would overflow for a wholly padded row (every F -3.4e38: bias
 * +inf, 0 / 0); the kernel exponentiates (F - m) log2 e ("ex2diff") exactly where |F| log2 e
 * can pass FLT_MAX (-2.5e38: yes; -1.7e38 or -1e30: no, the FFMA form stays, as for a plain
 * scale). ptxas clean. */
static void test_huge_additive(void **state) {
    (void)state;
    static const char *fmt =
        "fn f(q: bf16[B, H, S, 64], k: bf16[B, H, S, 64], v: bf16[B, H, S, 64], len: i32[B]) -> "
        "bf16[B, H, S, 64] {\n"
        "  keep = f32(iota((B, 1, 1, S), axis=3) < reshape(len, (B, 1, 1, 1)))\n"
        "  s = f32(q @ transpose(k, -1, -2)) / 8.0 + (1.0 - keep) * %s\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    static const struct {
        const char *mask;
        bool diff;
    } cases[] = {
        {"-3.4028234663852886e38", true}, {"-1e30", false}, {"-1.7e38", false}, {"-2.5e38", true}};
    char src[1024];
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(src, sizeof src, fmt, cases[c].mask);
        cg_program *p = tk_compile_src(src, CG_SM90A, NULL, 0, NULL);
        const char *t = tk_region_kernel(p)->tmpl;
        assert_non_null(strstr(t, "fa3-wgmma-tma-ws "));
        if ((strstr(t, " ex2diff") != NULL) != cases[c].diff)
            fail_msg("mask %s: template %s", cases[c].mask, t);
        cg_program_free(p);
    }
    cg_program *pp = tk_compile_src(SRC_PLAIN, CG_SM90A, NULL, 0, NULL);
    assert_null(strstr(tk_region_kernel(pp)->tmpl, "ex2diff"));
    cg_program_free(pp);
    snprintf(src, sizeof src, fmt, cases[0].mask);
    ptxas_check(src, NULL, 0, 0);
}

static void test_ptxas(void **state) {
    (void)state;
    fe_define d128[1] = {{"D", 128}}, d64[3] = {{"D", 64}, {"S", 1000}, {"B", 2}};
    ptxas_check(SRC_PLAIN, d128, 1, 0);
    ptxas_check(SRC_PLAIN, d64, 3, 0);
    ptxas_check(SRC_F16, d128, 1, 0);
    ptxas_check(SRC_CAP, NULL, 0, 0);
    ptxas_check(SRC_CAUSAL, NULL, 0, 64);
    ptxas_check(SRC_GQA, NULL, 0, 64);
    ptxas_check(SRC_ALIBI, NULL, 0, 64);
    ptxas_check(SRC_SPLIT, NULL, 0, 64);
    ptxas_check(SRC_SPLIT4, NULL, 0, 64);
    ptxas_check(SRC_SPLIT5, NULL, 0, 0);
    ptxas_check(SRC_MERGED, NULL, 0, 64);
    setenv("TX_ATTN_BN", "128", 1); /* the 128-key tile where the wide one is the default */
    ptxas_check(SRC_PLAIN, d128, 1, 0);
    ptxas_check(SRC_F16, d128, 1, 0);
    setenv("TX_ATTN_BN", "160", 1); /* and the wide one at d = 64 */
    ptxas_check(SRC_PLAIN, d64, 3, 0);
    unsetenv("TX_ATTN_BN");
    /* three consumer warpgroups at d = 64 (160 registers; spills where S is ragged: a knob) */
    setenv("TX_ATTN_WG3", "1", 1);
    fe_define d64k[2] = {{"D", 64}, {"S", 1024}};
    ptxas_check(SRC_PLAIN, d64k, 2, 0);
    unsetenv("TX_ATTN_WG3");
    setenv("TX_ATTN_SPEC", "1", 1); /* the speculative exponents at d = 64: no spills */
    ptxas_check(SRC_PLAIN, d64k, 2, 0);
    ptxas_check(SRC_PLAIN, d64, 3, 0);
    unsetenv("TX_ATTN_SPEC");
    setenv("TX_ATTN_PINGPONG", "0", 1); /* the knobs' loops */
    ptxas_check(SRC_PLAIN, d128, 1, 0);
    ptxas_check(SRC_CAUSAL, NULL, 0, 64);
    unsetenv("TX_ATTN_PINGPONG");
    setenv("TX_ATTN_PIPELINE", "0", 1);
    ptxas_check(SRC_PLAIN, d128, 1, 0);
    ptxas_check(SRC_PLAIN, d64, 3, 0);
    ptxas_check(SRC_CAUSAL, NULL, 0, 64);
    ptxas_check(SRC_GQA, NULL, 0, 64);
    unsetenv("TX_ATTN_PIPELINE");
}

/* ---- [attention.ks_tma]: the key split's TMA ring ------------------------------ */

/* The independent model of a TMA box with the 128-byte swizzle: the box's rows of 128 bytes are
 * written in order, then within each 1024-byte block the byte address bits 4-6 (the 16-byte
 * chunk) are xored with bits 7-9 (the row mod 8); boxes of 64 columns follow one another. The
 * 16-bit index of element (r, col) of a tile of bn rows. */
static int64_t model_swz(int64_t bn, int64_t r, int64_t col) {
    int64_t box = col / 64, byte = r * 128 + (col % 64) * 2;
    int64_t sw = byte ^ (((byte >> 7) & 7) << 4);
    return (box * bn * 128 + sw) / 2;
}

/* The bank group (16-byte chunk mod 8) of an ldmatrix row address (a 16-bit index). */
static int bank_group(int64_t idx) { return (int)((idx * 2 / 16) % 8); }

static void test_ks_swizzle(void **state) {
    (void)state;
    for (int64_t bn = 64; bn <= 128; bn += 64)
        for (int64_t r = 0; r < bn; r++)
            for (int64_t col = 0; col < 128; col += 8) {
                assert_int_equal(cg_attn_ks_swz(bn, r, col), model_swz(bn, r, col));
                for (int64_t e = 1; e < 8; e++) /* a chunk's elements stay together */
                    assert_int_equal(model_swz(bn, r, col + e), model_swz(bn, r, col) + e);
            }
    /* each 8x8 matrix of the kernel's ldmatrix.x4 (8 lanes, one row address each) reads 8
     * different bank groups: K (rows koff + 8n + 8 (l >> 4) + (l & 7), columns 16kk +
     * 8 ((l >> 3) & 1)) and V (rows koff + 16kk + (l & 15), columns 8t + 8 (l >> 4)) */
    for (int koff = 0; koff < 64; koff += 16)
        for (int kk = 0; kk < 8; kk++)
            for (int m = 0; m < 4; m++) {
                unsigned seen_k = 0, seen_v = 0;
                for (int l = 8 * m; l < 8 * m + 8; l++) {
                    int64_t rk = koff + 8 * (kk % 2) + 8 * (l >> 4) + (l & 7);
                    int64_t ck = 16 * kk + 8 * ((l >> 3) & 1);
                    seen_k |= 1u << bank_group(cg_attn_ks_swz(64, rk, ck));
                    int64_t rv = (koff + 16 * kk + (l & 15)) % 64, cv = 8 * (2 * kk) + 8 * (l >> 4);
                    seen_v |= 1u << bank_group(cg_attn_ks_swz(64, rv, cv));
                }
                assert_int_equal(seen_k, 0xff);
                assert_int_equal(seen_v, 0xff);
            }
}

/* Decode programs for sm_90a with TX_ATTN_KS_TMA=1: the key split's template names the TMA
 * ring, the kernel takes the K and V maps (3-D: D, the cache, the heads; boxes of 64 columns x
 * 64 keys; GQA: the 8 K/V heads), ptxas takes it; not on sm_80, not at head dim 96, and not
 * with TX_ATTN_KS_TMA=0. */
static void test_ks_tma(void **state) {
    (void)state;
    static const char *dec =
        "fn f(q: bf16[B, H, T, D], k: bf16[B, H, L, D], v: bf16[B, H, L, D], len: i32[B]) "
        "-> bf16[B, H, T, D] {\n"
        "  s = f32(q @ transpose(k, -1, -2)) * 0.088\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1))\n"
        "  return bf16(softmax(where(keep, s, -inf), axis=-1)) @ v\n}\n";
    struct {
        const char *knob;
        int target;
        int64_t b, l, d;
        bool tma;
    } cases[] = {{"1", CG_SM90A, 8, 32768, 128, true}, {"1", CG_SM90A, 1, 32773, 128, true},
                 {"1", CG_SM90A, 3, 1000, 64, true},   {"1", CG_SM80, 8, 32768, 128, false},
                 {"1", CG_SM90A, 2, 1000, 96, false},  {"0", CG_SM90A, 8, 32768, 128, false}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("TX_ATTN_KS_TMA", cases[i].knob, 1);
        fe_define defs[5] = {
            {"B", cases[i].b}, {"H", 4}, {"T", 1}, {"L", cases[i].l}, {"D", cases[i].d}};
        ir_graph *g;
        cg_program *p = tk_compile_src(dec, (cg_target)cases[i].target, defs, 5, &g);
        const cg_kernel *k = tk_region_kernel(p);
        if (cases[i].target == CG_SM90A) /* (the planner here knows no target: h200's model) */
            assert_int_equal(g->regions[k->region].ks_tma, cases[i].tma);
        assert_int_equal(strstr(k->tmpl, " tma") != NULL, cases[i].tma);
        assert_int_equal(k->ntmaps, cases[i].tma ? 2 : 0);
        for (unsigned m = 0; m < k->ntmaps; m++) {
            const cg_tmap *tm = &k->tmaps[m];
            assert_int_equal(tm->rank, 3);
            assert_int_equal(tm->swizzle, 128);
            assert_int_equal(tm->dim[0], cases[i].d);
            assert_int_equal(tm->dim[1], cases[i].l);
            assert_int_equal(tm->box[0], 64);
            assert_int_equal(tm->box[1], 64);
            assert_int_equal(tm->box[2], 1);
            assert_int_equal(k->bufs[tm->buf].kind, CG_BUF_INPUT);
        }
        if (cases[i].tma) {
            size_t len;
            const char *ptx = cg_program_ptx(p, &len);
            assert_non_null(strstr(ptx, "cp.async.bulk.tensor.3d"));
            int rc = tk_ptxas(ptx, len, "sm_90a", NULL);
            assert_true(rc == 0 || rc == -1); /* -1: no ptxas here */
        }
        cg_program_free(p);
        ir_graph_free(g);
    }
    /* GQA (K and V broadcast over the group of 4 query heads): maps over the 8 K/V heads */
    static const char *gqa =
        "fn f(q: bf16[B, 32, T, 128], k: bf16[B, 8, L, 128], v: bf16[B, 8, L, 128], len: i32[B]) "
        "-> bf16[B, 32, T, 128] {\n"
        "  qg = reshape(q, (B, 8, 4, T, 128))\n"
        "  kg = reshape(k, (B, 8, 1, L, 128))\n"
        "  vg = reshape(v, (B, 8, 1, L, 128))\n"
        "  s = f32(qg @ transpose(kg, -1, -2)) * 0.08838834764831845\n"
        "  keep = arange(L) < reshape(len, (B, 1, 1, 1, 1))\n"
        "  return reshape(bf16(softmax(where(keep, s, -inf), axis=-1)) @ vg, (B, 32, T, 128))\n}\n";
    fe_define gd[3] = {{"B", 2}, {"T", 1}, {"L", 20000}};
    ir_graph *g;
    setenv("TX_ATTN_KS_TMA", "1", 1);
    cg_program *p = tk_compile_src(gqa, CG_SM90A, gd, 3, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "gqa4"));
    assert_non_null(strstr(k->tmpl, " tma"));
    assert_int_equal(k->ntmaps, 2);
    for (unsigned m = 0; m < 2; m++) {
        int64_t planes = k->tmaps[m].dim[2];
        for (unsigned j = 0; j < k->tmaps[m].outer.rank; j++) planes *= k->tmaps[m].outer.dim[j];
        assert_int_equal(planes, 2 * 8);
    }
    unsetenv("TX_ATTN_KS_TMA");
    cg_program_free(p);
    ir_graph_free(g);
}

/* [attention.q_prologue]: the scale written on the query of a decode, (q * c) @ kT, is computed
 * in the key split's kernel (one region kernel, the mul in the attention region; ptxas takes it);
 * with 64 query rows (not a decode) it keeps its own kernel. */
static void test_q_prologue(void **state) {
    (void)state;
    static const char *src =
        "fn f(q: bf16[B, H, T, 128], k: bf16[B, H, L, 128], v: bf16[B, H, L, 128]) "
        "-> bf16[B, H, T, 128] {\n"
        "  s = f32((q * 0.088) @ transpose(k, -1, -2))\n"
        "  return bf16(softmax(s, axis=-1)) @ v\n}\n";
    static const int64_t rows[2] = {1, 64};
    for (unsigned i = 0; i < 2; i++) {
        fe_define defs[4] = {{"B", 8}, {"H", 32}, {"T", rows[i]}, {"L", 4096}};
        ir_graph *g;
        cg_program *p = tk_compile_src(src, CG_SM90A, defs, 4, &g);
        unsigned nk = 0;
        for (unsigned j = 0; j < cg_program_nkernels(p); j++)
            nk += cg_program_kernel(p, j)->region >= 0;
        assert_int_equal(nk, rows[i] == 1 ? 1 : 2);
        const cg_kernel *k = tk_region_kernel(p);
        if (rows[i] == 1) {
            const ir_region *rg = &g->regions[k->region];
            assert_int_equal(rg->kind, IR_RK_ATTENTION);
            ir_id q = ir_in(g, &g->nodes[rg->mm1], 0);
            assert_int_equal(g->nodes[q].op, IR_OP_MUL);
            assert_int_equal(g->nodes[q].region, (uint32_t)k->region);
            size_t len;
            const char *ptx = cg_program_ptx(p, &len);
            int rc = tk_ptxas(ptx, len, "sm_90a", NULL);
            assert_true(rc == 0 || rc == -1); /* -1: no ptxas here */
        }
        cg_program_free(p);
        ir_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acc_layout),      cmocka_unit_test(test_ks_swizzle),
        cmocka_unit_test(test_ks_tma),          cmocka_unit_test(test_q_prologue),
        cmocka_unit_test(test_p_fragments),     cmocka_unit_test(test_plan),
        cmocka_unit_test(test_manifest),        cmocka_unit_test(test_gqa_maps),
        cmocka_unit_test(test_views),           cmocka_unit_test(test_views_4d_plan),
        cmocka_unit_test(test_out_view),        cmocka_unit_test(test_tmap3_check),
        cmocka_unit_test(test_fallbacks),       cmocka_unit_test(test_decode_ksplit),
        cmocka_unit_test(test_decode_split),    cmocka_unit_test(test_decode_copy),
        cmocka_unit_test(test_decode_split_rt), cmocka_unit_test(test_decode_gqa_pack),
        cmocka_unit_test(test_padded_d),        cmocka_unit_test(test_wide_d),
        cmocka_unit_test(test_d128_knobs),      cmocka_unit_test(test_tile_order),
        cmocka_unit_test(test_no_skip),         cmocka_unit_test(test_producer_spills),
        cmocka_unit_test(test_score_arith),     cmocka_unit_test(test_ptxas),
        cmocka_unit_test(test_live_tiles),      cmocka_unit_test(test_huge_additive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
