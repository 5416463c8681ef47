/* skinny.c - the tile space and model of the skinny GEMM (codegen/skinny.c, schedule
 * matmul.skinny): products of at most 64 rows whose wgmma form would first copy an operand of odd
 * row pitch to scratch ([matmul.wgmma.stage]) read every operand in place instead, so the weight
 * streams from HBM once. The model prices the bytes at the rate the CTAs' cp.async rings sustain,
 * the mma.sync issue of the busiest CTA, the epilogue and the cluster's prologue; the planner's
 * rule compares it with the staged wgmma form (passes/schedule.c). */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Layout constants of codegen/skinny.c: 64-deep k steps, 256 threads, rows padded by 8
 * elements; SK_RING_BYTES: the bytes a CTA's ring aims to keep in flight (stages = that over a
 * stage, 2..8); SK_MAX_PER_SM: CTAs an SM holds (ptxas: 126-237 registers a thread).
 * Model constants (docs/cost-model.md "Matrix products"):
 * SK_LAT_US: a cp.async round trip under load (a ring's bytes per this is one CTA's rate): 3.0,
 *   from the H200's streaming rows (bench/results/2026-12-02-h200-skinny/run2: 16 x 11001 x 4096
 *   at 1.8 TB/s on 172 CTAs of 4 stages, 16 x 999 x 4096 in 11.6 us); the rest first estimates;
 * SK_HBM_EFF: the share of HBM bandwidth all CTAs reach (as WG_HBM_EFF); SK_FILL_US: prologue
 * and first fill; SK_CLUSTER_US: a cluster's barriers and the distributed-shared-memory sum;
 * SK_EPI_NS: ns per output element and stored value (one thread per element, coalesced);
 * SK_CLK_MHZ: the SM clock the issue count runs at. */
enum { SK_BK = 64, SK_THREADS = 256, SK_PAD = 8, SK_RING_BYTES = 49152, SK_MAX_PER_SM = 2 };
#define SK_LAT_US     3.0
#define SK_HBM_EFF    0.62
#define SK_FILL_US    2.0
#define SK_CLUSTER_US 1.5
#define SK_EPI_NS     0.25
#define SK_CLK_MHZ    1755.0

void pass_sk_opnd_tile(bool kmajor, int64_t other, int64_t *rows, int64_t *cols) {
    *rows = kmajor ? other : SK_BK;
    *cols = kmajor ? SK_BK : other;
}

bool pass_sk_ok(const pass_wg_shape *s) {
    return s->M >= 1 && s->M <= 64 && s->N > 0 && s->K > 0 && s->nmm >= 1 && s->nmm <= 4 &&
           !s->a_merged && s->nstage > 0;
}

static int64_t opnd_bytes(bool kmajor, int64_t other) {
    int64_t r, c;
    pass_sk_opnd_tile(kmajor, other, &r, &c);
    return r * (c + SK_PAD) * 2;
}

bool pass_sk_tile_make(const pass_wg_shape *s, int bn, int splits, pass_sk_tile *t) {
    memset(t, 0, sizeof *t);
    if (!pass_sk_ok(s) || (bn != 64 && bn != 128)) return false;
    if (splits != 1 && splits != 2 && splits != 4 && splits != 8) return false;
    if (bn > 64 && bn / 2 >= s->N) return false; /* a narrower tile covers N as well */
    /* a warp's columns are bn / 8 (bn / 64 n8 fragments per 16-row block): at most 64
     * accumulators a thread across the products */
    t->mp = (int)((s->M + 15) / 16 * 16);
    if ((int64_t)(t->mp / 16) * (bn / 64) * s->nmm * 4 > 64) return false;
    t->bn = bn, t->splits = splits;
    t->tiles = cdiv(s->N, bn);
    t->nk = cdiv(s->K, SK_BK);
    t->kpr = cdiv(t->nk, splits);
    if (splits > 1 && (t->nk / splits < 2 || t->tiles * splits > (int64_t)SK_MAX_PER_SM * s->sms))
        return false;
    t->a_bytes = opnd_bytes(s->a_kmajor, t->mp);
    t->b_bytes = opnd_bytes(s->b_kmajor, bn);
    t->stage_bytes = t->a_bytes + s->nmm * t->b_bytes;
    int64_t st = SK_RING_BYTES / t->stage_bytes;
    if (st > 8) st = 8;
    if (st > t->kpr) st = t->kpr;
    if (st < 2) st = 2;
    t->stages = (int)st;
    int64_t ring = t->stage_bytes * st, part = (int64_t)s->nmm * t->mp * bn * 4;
    t->smem_bytes = ring > part ? ring : part;
    return t->smem_bytes <= s->smem;
}

unsigned pass_sk_space(const pass_wg_shape *s, pass_sk_tile *out, unsigned cap) {
    static const int bns[] = {128, 64}, sks[] = {1, 2, 4, 8};
    unsigned n = 0;
    /* TX_SKINNY=0 leaves the kernel out (benchmarks of the staged wgmma form on the same shapes) */
    const char *e = getenv("TX_SKINNY");
    if (e && !strcmp(e, "0")) return 0;
    for (size_t i = 0; i < sizeof bns / sizeof bns[0]; i++)
        for (size_t j = 0; j < sizeof sks / sizeof sks[0] && n < cap; j++)
            if (pass_sk_tile_make(s, bns[i], sks[j], &out[n])) n++;
    return n;
}

double pass_sk_model(const pass_wg_shape *s, const pass_sk_tile *t, const pass_gpu *gpu,
                     double hbm_bytes, pass_sk_time *o) {
    memset(o, 0, sizeof *o);
    int sms = gpu->sms > 0 ? gpu->sms : s->sms;
    int64_t lim = gpu->smem_per_block > 0 ? gpu->smem_per_block : s->smem;
    o->ctas = t->tiles * t->splits;
    o->per_sm = lim / (t->smem_bytes + 1024);
    if (o->per_sm > SK_MAX_PER_SM) o->per_sm = SK_MAX_PER_SM;
    if (o->per_sm < 1) o->per_sm = 1;
    int64_t slots = (int64_t)sms * o->per_sm, active = o->ctas < slots ? o->ctas : slots;
    int64_t waves = cdiv(o->ctas, slots);
    o->cta_GBps = (double)t->stage_bytes * (t->stages - 1) / SK_LAT_US * 1e-3; /* one computed */
    double bw = (double)active * o->cta_GBps * 1e3;                            /* bytes per us */
    double hbm = gpu->hbm_GBps > 0 ? gpu->hbm_GBps : 3350.0;
    if (bw > hbm * SK_HBM_EFF * 1e3) bw = hbm * SK_HBM_EFF * 1e3;
    if (hbm_bytes < 0)
        hbm_bytes = 2.0 * ((double)s->M * s->K + (double)s->nmm * s->K * s->N +
                           (double)s->nouts * s->M * s->N);
    o->mem_us = hbm_bytes / bw;
    /* per 16-deep k slice a warp loads its A fragments (8 loads + 4 packs per 16 rows), its B
     * fragments (4 + 2 per n8 tile and product) and issues the mma; 8 warps on 4 schedulers */
    double mt = t->mp / 16, nt = t->bn / 64.0 * s->nmm;
    double instr = 12.0 * mt + 6.0 * nt + mt * nt + 8.0;
    double per_cta = (double)t->kpr * (SK_BK / 16) * instr * (SK_THREADS / 32) / 4.0;
    int64_t share = cdiv(active, sms); /* CTAs sharing an SM's schedulers */
    o->comp_us = (double)waves * per_cta * (double)share / SK_CLK_MHZ;
    o->epi_us = (double)waves * t->mp * t->bn * (s->nouts > 0 ? s->nouts : 1) * SK_EPI_NS * 1e-3 /
                t->splits;
    o->fill_us = SK_FILL_US + (t->splits > 1 ? SK_CLUSTER_US : 0);
    o->time_us = o->fill_us + (o->mem_us > o->comp_us ? o->mem_us : o->comp_us) + o->epi_us;
    return o->time_us;
}

bool pass_sk_pick(const pass_wg_shape *s, const pass_gpu *gpu, double hbm_bytes, pass_sk_tile *t) {
    pass_sk_tile sp[12];
    unsigned n = pass_sk_space(s, sp, 12);
    if (!n) return false;
    unsigned best = 0;
    double bt = 0;
    for (unsigned i = 0; i < n; i++) {
        pass_sk_time tm;
        double v = pass_sk_model(s, &sp[i], gpu, hbm_bytes, &tm);
        if (i == 0 || v < bt - 1e-9) best = i, bt = v;
    }
    *t = sp[best];
    return true;
}
