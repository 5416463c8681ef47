/* test_pitch.c - GEMM operands whose row pitch TMA cannot read, and the target-aware planner:
 *
 * - pass_wg_pitch: the pitch the wgmma kernel reads a row at (the inner extent when it is a
 *   multiple of 16 bytes, else the next multiple of 128 bytes), for f16/bf16 and f32;
 * - the planner's facts of odd-pitch products ([matmul.wgmma.stage]): which operands are staged,
 *   the staging bytes (read and written) computed here from the shapes, the staging time in the
 *   model and its kernels; a staged product at an unbound size keeps mma.sync;
 * - codegen for sm_90a: one staging kernel per staged operand before the GEMM, its buffers (the
 *   operand read, a [rows, pitch] scratch written), the GEMM's tensor maps reading the scratch
 *   at its pitch with the operand's own extents (so TMA's bounds still zero-fill ragged tails),
 *   the runtime plan's tensor maps at bound sizes, and the encoder's pitch checks;
 * - the staging kernel's geometry against a model written here: the grid and every thread's words
 *   cover each word of each row exactly once;
 * - the target: pass_target_gpu narrows the hardware (no wgmma/FA3 below sm_90a, no clusters
 *   below sm_90); the planner picks matmul.wgmma and attention.fa3 for sm_90a and the mma.sync
 *   roofline for sm_80 and sm_90, through the same pass_ctx the driver fills. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testkit.h"

#include "codegen/cg_impl.h"
#include "driver/driver.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "tk_compile.h"

static const char *XW = "fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n  return x @ w\n}\n";
static const char *ATT =
    "fn f(q: bf16[B, H, S, D], k: bf16[B, H, S, D], v: bf16[B, H, S, D]) -> bf16[B, H, S, D] {\n"
    "  s = f32(q @ transpose(k, -1, -2)) * 0.08838834764831845\n"
    "  return bf16(softmax(s, axis=-1)) @ v\n}\n";

/* Frontend and planner for src with the defs bound, planned for target t (pc as the driver
 * fills it); NULL defs: none. */
static ir_graph *plan(const char *src, const fe_define *defs, unsigned nd, pass_target t) {
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    fe_options fo = {.defines = defs, .ndefines = nd};
    ir_graph *g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    pass_gpu buf;
    pass_ctx pc = {.diag = &d, .gpu = pass_target_gpu(pass_gpu_find("h200"), t, &buf), .target = t};
    assert_true(pass_run_pipeline(g, &pc));
    return g;
}

/* The first matmul region of g. */
static uint32_t mm_region(const ir_graph *g) {
    for (uint32_t r = 0; r < g->nregions; r++)
        if (g->regions[r].kind == IR_RK_MATMUL) return r;
    fail_msg("no matmul region");
    return 0;
}

static void test_pitch_rule(void **state) {
    (void)state;
    assert_int_equal(pass_wg_pitch(1024, 2), 1024);
    assert_int_equal(pass_wg_pitch(1000, 2), 1000); /* 2000 B: a multiple of 16, not of 128 */
    assert_int_equal(pass_wg_pitch(1500, 2), 1536);
    assert_int_equal(pass_wg_pitch(999, 2), 1024);
    assert_int_equal(pass_wg_pitch(1001, 2), 1024);
    assert_int_equal(pass_wg_pitch(4099, 2), 4160);
    assert_int_equal(pass_wg_pitch(3001, 2), 3008);
    assert_int_equal(pass_wg_pitch(1, 2), 64);
    assert_int_equal(pass_wg_pitch(999, 4), 1024); /* f32: 32 elements of 128 bytes */
    assert_int_equal(pass_wg_pitch(1000, 4), 1000);
    for (int64_t n = 1; n < 3000; n++) { /* the rule for every width, stated independently */
        int64_t p = pass_wg_pitch(n, 2);
        if (n % 8 == 0)
            assert_int_equal(p, n);
        else
            assert_true(p >= n && p % 64 == 0 && p - n < 64);
    }
}

/* x @ w at M x N x K (bf16) planned for sm_90a: the graph, its index (*ix), the product's region
 * (*r) and its wgmma facts (*s) on the h200. */
static ir_graph *xw_facts(int64_t M, int64_t N, int64_t K, pass_index *ix, uint32_t *r,
                          pass_wg_shape *s) {
    fe_define defs[3] = {{"M", M}, {"N", N}, {"K", K}};
    ir_graph *g = plan(XW, defs, 3, (pass_target){90, true, false});
    assert_true(pass_index_build(g, ix));
    *r = mm_region(g);
    const pass_gpu *gpu = pass_gpu_find("h200");
    assert_true(pass_wg_facts(g, ix, *r, gpu, gpu->smem_per_block, s));
    return g;
}

/* The facts and the model of x @ w at M x N x K (bf16): staged A, B and the bytes. */
static void check_facts(int64_t M, int64_t N, int64_t K, bool sa, bool sb) {
    pass_index ix;
    uint32_t r;
    pass_wg_shape s;
    ir_graph *g = xw_facts(M, N, K, &ix, &r, &s);
    const pass_gpu *gpu = pass_gpu_find("h200");
    assert_int_equal(s.a_staged, sa);
    assert_int_equal(s.b_staged, sb);
    assert_int_equal(s.nstage, (int)sa + (int)sb);
    double want = 0;
    if (sa) want += (double)M * (double)(K + pass_wg_pitch(K, 2)) * 2;
    if (sb) want += (double)K * (double)(N + pass_wg_pitch(N, 2)) * 2;
    assert_true(s.stage_bytes == want);
    /* the region's schedule is the model's wgmma tile; the staging is in its time (at most
     * 64 rows with a staged operand: the skinny kernel reads it in place, test_skinny.c) */
    if (M <= 64 && s.nstage > 0) {
        assert_int_equal(g->regions[r].sched.id, PASS_SCH_MATMUL_SKINNY);
        pass_index_free(&ix);
        ir_graph_free(g);
        return;
    }
    assert_int_equal(g->regions[r].sched.id, PASS_SCH_MATMUL_WGMMA);
    pass_cost c;
    pass_region_cost_ix(g, &ix, r, gpu, &c);
    pass_model m;
    pass_model_region(g, &ix, r, gpu, &c, &m);
    assert_string_equal(m.schedule, "matmul.wgmma");
    assert_int_equal(m.kernels, 1 + s.nstage);
    if (s.nstage) {
        double st = want / (gpu->hbm_GBps * 0.50 * 1e3) + s.nstage * gpu->launch_us;
        assert_true(m.wgm.stage_us > st * 0.999 && m.wgm.stage_us < st * 1.001);
        assert_true(m.time_us >= m.wgm.stage_us + m.wgm.comp_us - 1e-9);
    } else {
        assert_true(m.wgm.stage_us == 0);
    }
    pass_index_free(&ix);
    ir_graph_free(g);
}

static void test_stage_facts(void **state) {
    (void)state;
    check_facts(2500, 1500, 2500, true, true); /* K and N rows: 5000 and 3000 bytes */
    check_facts(2048, 1500, 4096, false, true);
    check_facts(1000, 1024, 1001, true, false);
    check_facts(16, 999, 4096, false, true);
    check_facts(65, 999, 4096, false, true);
    check_facts(2000, 1000, 3000, false, false); /* 16-byte multiples: read in place */
}

/* [matmul.wgmma.stage] against mma.sync in place: a short-K odd-pitch product (4096 x 99 x 32:
 * 0.1 M scalar loads over 32 tiles, below the copy's launch and the wgmma kernel) keeps mma.sync
 * (no schedule, no staging kernel), a large one (ragged_gemm's 3001 x 1999 x 2005) is staged;
 * sync_loads counts each staged operand's elements once per tile of the other operand. */
static void test_stage_vs_sync(void **state) {
    (void)state;
    static const int64_t sz[2][3] = {{4096, 99, 32}, {3001, 1999, 2005}};
    for (unsigned i = 0; i < 2; i++) {
        pass_index ix;
        uint32_t r;
        pass_wg_shape s;
        ir_graph *g = xw_facts(sz[i][0], sz[i][1], sz[i][2], &ix, &r, &s);
        const pass_gpu *gpu = pass_gpu_find("h200");
        assert_true(s.nstage > 0 && s.sync_us > 0);
        double M = (double)sz[i][0], N = (double)sz[i][1], K = (double)sz[i][2];
        double tm = g->regions[r].tile[0], tn = g->regions[r].tile[1], want = 0;
        if (s.a_staged) want += M * K * ceil(N / tn);
        if (s.b_staged) want += K * N * ceil(M / tm);
        assert_true(s.sync_loads > want - 0.5 && s.sync_loads < want + 0.5);
        pass_wg_tile t;
        pass_wg_time w;
        assert_true(pass_wg_pick(&s, gpu, -1, &t));
        double us = pass_wg_model(&s, &t, gpu, -1, &w);
        bool staged = us < s.sync_us;
        assert_int_equal(staged, i == 1);
        assert_int_equal(g->regions[r].sched.id, staged ? PASS_SCH_MATMUL_WGMMA : PASS_SCH_NONE);
        tx_diag d;
        tx_diag_init(&d, stderr, "test", NULL, 0);
        cg_program *p = cg_program_new(g, CG_SM90A, &d);
        assert_non_null(p);
        unsigned nst = 0;
        for (unsigned k = 0; k < cg_program_nkernels(p); k++)
            nst += !strncmp(cg_program_kernel(p, k)->tmpl, "stage pitch", 11);
        assert_int_equal(nst, staged ? (unsigned)s.nstage : 0u);
        cg_program_free(p);
        pass_index_free(&ix);
        ir_graph_free(g);
    }
}

/* An odd pitch with an unbound M is not priced: the planner keeps mma.sync (no schedule) and so
 * does codegen. */
static void test_stage_symbolic(void **state) {
    (void)state;
    fe_define defs[2] = {{"N", 1500}, {"K", 4096}};
    ir_graph *g = plan(XW, defs, 2, (pass_target){90, true, false});
    uint32_t r = mm_region(g);
    assert_int_not_equal(g->regions[r].sched.id, PASS_SCH_MATMUL_WGMMA);
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    cg_program *p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    for (unsigned k = 0; k < cg_program_nkernels(p); k++)
        assert_null(strstr(cg_program_kernel(p, k)->tmpl, "wgmma"));
    cg_program_free(p);
    ir_graph_free(g);
}

/* The staging kernel's cover: blocks (x < grid x, y < grid y) of 256 threads; thread t of block
 * (x, y) copies word x * 256 * words + j * 256 + t (j < words) of rows y * rows + i + n * grid_y
 * * rows (i < rows, n >= 0) when inside the row and the operand: every word exactly once. */
static void check_cover(int64_t R, int64_t inner, int es) {
    int64_t pitch = pass_wg_pitch(inner, es);
    cg_stage_geom sg;
    cg_stage_geometry(R, inner, es, pitch, &sg);
    assert_true(sg.word == 8 || sg.word == 4 || sg.word == 2 || sg.word == 1);
    assert_int_equal(sg.funnel, (inner * es) % 8 != 0 && R * inner * es >= 8);
    if (!sg.funnel) assert_int_equal((inner * es) % sg.word, 0);
    assert_int_equal((pitch * es) % sg.word, 0);
    assert_int_equal(sg.iw, (inner * es + sg.word - 1) / sg.word);
    assert_int_equal(sg.pw * sg.word, pitch * es);
    int64_t gx = (sg.iw + 256 * sg.words - 1) / (256 * sg.words);
    int64_t gy = (R + sg.rows - 1) / sg.rows;
    if (gy > 65535) gy = 65535;
    unsigned char *seen = calloc((size_t)(R * sg.iw), 1);
    for (int64_t x = 0; x < gx; x++)
        for (int64_t y = 0; y < gy; y++)
            for (int64_t r0 = y * sg.rows; r0 < R; r0 += gy * sg.rows)
                for (int t = 0; t < 256; t++)
                    for (unsigned j = 0; j < sg.words; j++)
                        for (unsigned i = 0; i < sg.rows; i++) {
                            int64_t c = x * 256 * sg.words + (int64_t)j * 256 + t, r = r0 + i;
                            if (c < sg.iw && r < R) seen[r * sg.iw + c]++;
                        }
    for (int64_t e = 0; e < R * sg.iw; e++) assert_int_equal(seen[e], 1);
    free(seen);
}

/* The funnel's arithmetic (cg_stage_geom) on bytes: a [R, inner] source of es-byte elements
 * (distinct values) copied word by word to rows pitched at pass_wg_pitch reproduces every row;
 * every source word read is whole and inside the source. */
static void check_funnel(int64_t R, int64_t inner, int es) {
    int64_t pitch = pass_wg_pitch(inner, es), n = R * inner, e = 8 / es;
    cg_stage_geom sg;
    cg_stage_geometry(R, inner, es, pitch, &sg);
    assert_true(sg.funnel && sg.word == 8);
    size_t nb = (size_t)(n * es);
    unsigned char *src = malloc(nb), *dst = calloc((size_t)(R * pitch * es), 1);
    for (size_t i = 0; i < nb; i++) src[i] = (unsigned char)(i * 7 + i / 251);
    int64_t total = n / e; /* whole source words */
    uint64_t tail = 0;
    for (int64_t k = 0; k + 1 < e; k++)
        if (total * e + k < n)
            for (int b = 0; b < es; b++)
                tail |= (uint64_t)src[(total * e + k) * es + b] << (8 * (k * es + b));
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < sg.iw; c++) {
            int64_t e0 = r * inner + c * e, q = e0 / e, sh = (e0 % e) * es * 8;
            uint64_t w[2];
            for (int h = 0; h < 2; h++) {
                int64_t x = q + h;
                if (x < total) {
                    assert_true((x + 1) * 8 <= (int64_t)nb);
                    memcpy(&w[h], src + x * 8, 8);
                } else {
                    w[h] = x == total ? tail : 0;
                }
            }
            uint64_t v = sh ? (w[0] >> sh) | (w[1] << (64 - sh)) : w[0]; /* fshr(w1, w0, sh) */
            memcpy(dst + (r * sg.pw + c) * 8, &v, 8);
        }
    for (int64_t r = 0; r < R; r++)
        assert_memory_equal(dst + r * pitch * es, src + r * inner * es, (size_t)(inner * es));
    free(src);
    free(dst);
}

static void test_stage_cover(void **state) {
    (void)state;
    check_cover(300, 1001, 2); /* 2-byte words, several rows per thread */
    check_cover(77, 1500, 2);  /* 8-byte words */
    check_cover(5, 3001, 2);   /* several blocks along the row */
    check_cover(9, 999, 4);    /* f32 rows */
    check_cover(3, 4099, 2);
    check_cover(70000, 3, 2); /* more row groups than grid y: the row loop */
    check_cover(1, 3, 2);     /* one 6-byte row: word copies, no funnel */
    check_funnel(300, 1001, 2);
    check_funnel(7, 999, 2); /* 7 x 999 elements: a partial last source word */
    check_funnel(5, 3001, 2);
    check_funnel(3, 4099, 2);
    check_funnel(9, 1500 + 2, 2); /* 4-byte multiple rows */
    check_funnel(4, 999, 4);      /* f32 */
    check_funnel(1, 5, 2);
}

/* Codegen for sm_90a: staging kernels, their scratch and the GEMM's tensor maps. */
static void test_stage_codegen(void **state) {
    (void)state;
    fe_define defs[3] = {{"M", 300}, {"N", 999}, {"K", 1001}};
    ir_graph *g;
    cg_program *p = tk_compile_src(XW, CG_SM90A, defs, 3, &g);
    assert_int_equal(cg_program_nkernels(p), 3);
    const cg_kernel *s0 = cg_program_kernel(p, 0), *s1 = cg_program_kernel(p, 1);
    const cg_kernel *mk = cg_program_kernel(p, 2);
    assert_non_null(strstr(s0->name, "_stage0"));
    assert_non_null(strstr(s1->name, "_stage1"));
    assert_non_null(strstr(mk->tmpl, "wgmma-tma-ws"));
    assert_int_equal(s0->region, mk->region);
    assert_int_equal(s1->region, mk->region);
    /* each staging kernel reads its operand (input 0: x, 1: w) and writes a [rows, pitch] temp */
    const int64_t rows[2] = {300, 1001}, pitch[2] = {1024, 1024};
    const cg_kernel *st[2] = {s0, s1};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(st[i]->nbufs, 2);
        assert_int_equal(st[i]->bufs[0].kind, CG_BUF_INPUT);
        assert_int_equal(st[i]->bufs[0].index, (unsigned)i);
        assert_false(st[i]->bufs[0].write);
        assert_int_equal(st[i]->bufs[1].kind, CG_BUF_TEMP);
        assert_true(st[i]->bufs[1].write);
        const cg_temp *t = cg_program_temp(p, st[i]->bufs[1].index);
        assert_int_equal(t->shape.rank, 2);
        assert_int_equal(t->shape.dim[0], rows[i]);
        assert_int_equal(t->shape.dim[1], pitch[i]);
        assert_int_equal(t->dtype, IR_BF16);
        assert_int_equal(st[i]->block[0], 256);
        /* the GEMM's map i reads that temp at its pitch with the operand's own extents */
        const cg_tmap *tm = &mk->tmaps[i];
        assert_true(tm->buf < mk->nbufs);
        assert_int_equal(mk->bufs[tm->buf].kind, CG_BUF_TEMP);
        assert_int_equal(mk->bufs[tm->buf].index, st[i]->bufs[1].index);
        assert_false(mk->bufs[tm->buf].write);
        assert_int_equal(tm->pitch, pitch[i]);
        assert_int_equal(tm->dim[0], i == 0 ? 1001 : 999);
        assert_int_equal(tm->dim[1], rows[i]);
    }
    assert_int_not_equal(s0->bufs[1].index, s1->bufs[1].index);
    /* the runtime plan: the maps carry the pitch and name the temps' plan buffers */
    int64_t syms[4] = {0};
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    assert_int_equal(rp->nkernels, 3);
    const rt_kernel_desc *kd = &rp->kernels[2];
    int found = 0;
    for (uint32_t i = 0; i < kd->nparams; i++) {
        const rt_kparam *kp = &kd->params[i];
        if (kp->kind != RT_KP_TMAP || kp->tmap.pitch == 0) continue;
        found++;
        assert_int_equal(kp->tmap.pitch, 1024);
        assert_int_equal(rp->bufs[kp->buf].role, RT_BUF_TEMP);
        assert_int_equal(rp->bufs[kp->buf].dim[1], 1024);
        assert_true(rt_tmap_check(&kp->tmap, 0x10000, err, sizeof err));
    }
    assert_int_equal(found, 2);
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

/* A product whose A and B are one staged buffer (x @ x^T) stages it once. */
static void test_stage_shared(void **state) {
    (void)state;
    const char *src = "fn f(x: bf16[M, K]) -> bf16[M, M] {\n  return x @ transpose(x, 0, 1)\n}\n";
    fe_define defs[2] = {{"M", 512}, {"K", 1001}};
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, 2, NULL);
    assert_int_equal(cg_program_nkernels(p), 2);
    const cg_kernel *mk = cg_program_kernel(p, 1);
    assert_non_null(strstr(mk->tmpl, "wgmma"));
    assert_int_equal(mk->tmaps[0].buf, mk->tmaps[1].buf);
    assert_int_equal(mk->tmaps[0].pitch, 1024);
    cg_program_free(p);
}

/* A staged intermediate (the 999-wide product read as the next product's A): the device
 * program's temps are the host program's, then the staged copies (the sampled check's order). */
static void test_stage_temps_order(void **state) {
    (void)state;
    const char *src = "fn f(x: bf16[M, K], w: bf16[K, N], v: bf16[N, P]) -> bf16[M, P] {\n"
                      "  h = x @ w\n  return relu(h) @ v\n}\n";
    fe_define defs[4] = {{"M", 256}, {"K", 1001}, {"N", 999}, {"P", 128}};
    ir_graph *g;
    cg_program *dp = tk_compile_src(src, CG_SM90A, defs, 4, &g);
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    cg_program *hp = cg_program_new(g, CG_HOST, &d);
    assert_non_null(hp);
    unsigned nh = cg_program_ntemps(hp), nd = cg_program_ntemps(dp), nst = 0;
    assert_true(nh >= 1 && nd > nh);
    for (unsigned t = 0; t < nd; t++) {
        const cg_temp *a = cg_program_temp(dp, t);
        if (t < nh) {
            const cg_temp *b = cg_program_temp(hp, t);
            assert_false(a->staged);
            assert_int_equal(a->dtype, b->dtype);
            assert_true(ir_shape_eq(&a->shape, &b->shape));
        } else {
            assert_true(a->staged);
            nst++;
        }
    }
    /* x [256, 1001] -> [256, 1024] (k0) and relu(h) [256, 999] -> [256, 1024] (k1) share one
     * buffer (alike, live in different regions); w [1001, 999] -> [1001, 1024] */
    assert_int_equal(nst, 2);
    cg_program_free(hp);
    cg_program_free(dp);
    ir_graph_free(g);
}

static void test_tmap_pitch_check(void **state) {
    (void)state;
    char e[200];
    rt_tmap_desc t = {IR_BF16, 128, {999, 300}, {64, 128}, 2, 1024, 0, 0};
    assert_true(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.pitch = 0; /* 1998-byte rows */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    assert_non_null(strstr(e, "pitch"));
    t.pitch = 900; /* below the row */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.pitch = 1001; /* not 16-byte */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    /* a slice of wider rows (attention's qkv.split): columns 768.. of rows of 2304, the map
     * {D 64, H 12, S, B} with the pitch the stride of dim 2 */
    rt_tmap_desc t4 = {IR_BF16, 128, {64, 12, 1024, 8}, {64, 1, 128, 1}, 4, 2304, 2, 768};
    assert_true(rt_tmap_check(&t4, 0x1000, e, sizeof e));
    t4.pitch = 700; /* below the 768 elements of dims 0 and 1 */
    assert_false(rt_tmap_check(&t4, 0x1000, e, sizeof e));
    assert_non_null(strstr(e, "pitch"));
    t4.pitch = 2304, t4.offset = 765; /* not 16-byte aligned */
    assert_false(rt_tmap_check(&t4, 0x1000, e, sizeof e));
    assert_non_null(strstr(e, "offset"));
    t4.offset = 768, t4.pdim = 4; /* no dim above the last */
    assert_false(rt_tmap_check(&t4, 0x1000, e, sizeof e));
}

static void test_target_gpu(void **state) {
    (void)state;
    const pass_gpu *h = pass_gpu_find("h200");
    pass_gpu buf;
    assert_ptr_equal(pass_target_gpu(h, (pass_target){90, true, false}, &buf), h);
    assert_ptr_equal(pass_target_gpu(h, (pass_target){0, false, false}, &buf), h);
    const pass_gpu *s90 = pass_target_gpu(h, (pass_target){90, false, false}, &buf);
    assert_ptr_equal(s90, &buf);
    assert_true(s90->wg_eff == 0 && s90->attn_eff == 0);
    assert_int_equal(s90->cluster_max, h->cluster_max);
    assert_true(s90->hbm_GBps == h->hbm_GBps && s90->tc_eff == h->tc_eff);
    const pass_gpu *s80 = pass_target_gpu(h, (pass_target){80, false, false}, &buf);
    assert_true(s80->wg_eff == 0 && s80->attn_eff == 0 && s80->cluster_max == 0);
    const pass_gpu *a = pass_gpu_find("a100"); /* nothing to narrow: the entry itself */
    assert_ptr_equal(pass_target_gpu(a, (pass_target){80, false, false}, &buf), a);
    assert_null(pass_target_gpu(NULL, (pass_target){80, false, false}, &buf));
    char tn[16];
    assert_string_equal(pass_target_name((pass_target){90, true, false}, tn, sizeof tn), "sm_90a");
    assert_string_equal(pass_target_name((pass_target){86, false, false}, tn, sizeof tn), "sm_86");
    assert_string_equal(pass_target_name((pass_target){0, false, false}, tn, sizeof tn), "any");
    /* the driver's view of codegen's targets */
    assert_true(drv_pass_target(CG_SM90A).sm == 90 && drv_pass_target(CG_SM90A).arch);
    assert_true(drv_pass_target(CG_SM90).sm == 90 && !drv_pass_target(CG_SM90).arch);
    assert_true(drv_pass_target(CG_SM80).sm == 80 && !drv_pass_target(CG_SM80).arch);
    assert_int_equal(drv_pass_target(CG_HOST).sm, 0);
    assert_int_equal(drv_pass_target(DRV_TARGET_DEVICE).sm, 0);
}

/* The model's schedule name of the first region of kind `kind` in g planned for t. */
static const char *model_of(const ir_graph *g, ir_region_kind kind, pass_target t) {
    pass_gpu buf;
    const pass_gpu *gpu = pass_target_gpu(pass_gpu_find("h200"), t, &buf);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    const char *name = NULL;
    for (uint32_t r = 0; r < g->nregions && !name; r++) {
        if (g->regions[r].kind != kind) continue;
        pass_cost c;
        pass_region_cost_ix(g, &ix, r, gpu, &c);
        pass_model m;
        pass_model_region(g, &ix, r, gpu, &c, &m);
        name = m.schedule;
    }
    pass_index_free(&ix);
    assert_non_null(name);
    return name;
}

static void test_target_plan(void **state) {
    (void)state;
    const pass_target tg[3] = {{90, true, false}, {90, false, false}, {80, false, false}};
    fe_define mm[3] = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
    fe_define at[4] = {{"B", 4}, {"H", 32}, {"S", 4096}, {"D", 128}};
    for (int i = 0; i < 3; i++) {
        ir_graph *g = plan(XW, mm, 3, tg[i]);
        uint32_t r = mm_region(g);
        bool wg = tg[i].arch;
        assert_int_equal(g->regions[r].sched.id == PASS_SCH_MATMUL_WGMMA, wg);
        assert_string_equal(model_of(g, IR_RK_MATMUL, tg[i]), wg ? "matmul.wgmma" : "roofline");
        ir_graph_free(g);
        g = plan(ATT, at, 4, tg[i]);
        assert_string_equal(model_of(g, IR_RK_ATTENTION, tg[i]), wg ? "attention.fa3" : "roofline");
        ir_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pitch_rule),        cmocka_unit_test(test_stage_facts),
        cmocka_unit_test(test_stage_symbolic),    cmocka_unit_test(test_stage_vs_sync),
        cmocka_unit_test(test_stage_cover),       cmocka_unit_test(test_stage_codegen),
        cmocka_unit_test(test_stage_shared),      cmocka_unit_test(test_tmap_pitch_check),
        cmocka_unit_test(test_target_gpu),        cmocka_unit_test(test_target_plan),
        cmocka_unit_test(test_stage_temps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
