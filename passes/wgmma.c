/* wgmma.c - the tile space of the sm_90a wgmma GEMM kernel (codegen/wgmma.c) and the model that
 * prices each tile (docs/cost-model.md "Matrix products"): the block tile, split-K ranks and ring
 * stages that are valid for a product's shape, and a time per candidate from the tensor-core and
 * shared-memory rates of one k step, the waves and the tail wave of the persistent grid, the
 * epilogue per tile, the split-K reduction and the HBM bytes at the rate the CTAs stream them.
 * The schedule matmul.wgmma (passes/schedule.c) offers this space; codegen builds the tile the
 * region's schedule names and asks pass_wg_pick when it has none. */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Shared-memory layout of codegen/wgmma.c: 1024 bytes of alignment slack, a full and an empty
 * mbarrier per stage (room for the most stages), 16 bytes of split-K barriers, the split-K
 * slots; then the stages. */
enum { WG_BK = 64, WG_SLACK = 1024, WG_SPLIT_BARS = 16 };
/* the largest known M whose space also holds 64-row tiles beside the 128-row ones */
enum { WG_NARROW_M = 512 };

/* Whether environment variable v is "0" (a benchmark knob). */
static bool getenv_is0(const char *v) {
    const char *e = getenv(v);
    return e && !strcmp(e, "0");
}

/* [matmul.wgmma.epi] the ring's stages for a tile whose st stages leave room for one TMA-store
 * entry per consumer: where every CTA runs one tile (plain, tiles <= SMs: no next tile for the
 * producer to load into while the consumers store, so the epilogue is exposed), a ring of 5 or
 * more stages gives its deepest up for a second entry (a unit's store then does not wait for the
 * previous unit's to be read out; H200: 1536^3 at 128x192 18.9 -> 17.3 us, 300 x 5000 x 3000
 * 39.4 -> 37.3); else st. From the geometry alone (16-bit slots: the f32 units of 32 columns
 * take the same bytes), since codegen/wgmma.c plans the tile before it knows the outputs; t
 * holds the tile's consumers, bn, tiles and splits. TX_WG_EPI_TRADE=0 keeps st (a benchmark
 * knob: the A/B of the rule). */
static int64_t wg_epi_trade(const pass_wg_shape *s, const pass_wg_tile *t, int64_t fixed,
                            int64_t st) {
    pass_wg_slots now, less;
    if (t->splits != 1 || t->tiles > s->sms || st < 5 || getenv_is0("TX_WG_EPI_TRADE")) return st;
    if (!pass_wg_slots_fit(fixed, t->stage_bytes, (int)st, t->consumers, t->bn, 2, 1, s->smem,
                           &now) ||
        now.stages < st || now.nbuf != 1)
        return st;
    if (pass_wg_slots_fit(fixed, t->stage_bytes, (int)st - 1, t->consumers, t->bn, 2, 1, s->smem,
                          &less) &&
        less.nbuf == 2 && less.stages == st - 1)
        return st - 1;
    return st;
}

bool pass_wg_tile_make(const pass_wg_shape *s, int bm, int bn, int splits, pass_wg_tile *t) {
    memset(t, 0, sizeof *t);
    if (s->nmm < 1 || s->nmm > 4 || s->N == 0) return false;
    int want_bm = s->M >= 0 && s->M <= 64 ? 64 : 128, mc = 1;
    /* bm 256: a 2-CTA cluster of 128-row tiles sharing B (each CTA multicasts half of it) */
    if (bm == 256 && want_bm == 128 && splits == 1 && (s->M < 0 || s->M > 128) &&
        (bn == 256 || bn == 128))
        bm = 128, mc = 2;
    /* 64-row tiles (one consumer, up to 128 columns) also for a known M up to WG_NARROW_M: M = 300
     * takes 5 of them (320 rows) instead of 3 of 128 (384 rows) and twice the tiles fill more SMs
     */
    bool narrow =
        bm == 64 && want_bm == 128 && s->M > 0 && s->M <= WG_NARROW_M && !s->a_merged && bn <= 128;
    if (bm != want_bm && !narrow) return false;
    /* the swapped kernel's transposed shape: columns (the product's rows) any multiple of 8 up to
     * 256, plain or split-K tiles only */
    if (s->swap && (mc != 1 || narrow || splits == 0 || s->batch || bn < 8 || bn > 256 || bn % 8))
        return false;
    /* a batched product: the plain persistent kernel over batch x tiles (the 128- or 64-row
     * tiles of its M, not the 192-column ones: not measured there) */
    if (s->batch && (splits != 1 || mc != 1 || narrow || bn == 192)) return false;
    if (!s->swap && bn != 256 && bn != 192 && bn != 128 && bn != 64 && !(bn == 32 && s->b_kmajor))
        return false;
    int maxcols = s->nouts > 1 ? (s->nmm == 1 ? 128 : 192) : 256;
    if (s->nmm * bn > maxcols) return false;
    t->bm = bm, t->bn = bn, t->consumers = bm / 64, t->mcast = mc, t->swap = s->swap;
    /* an unknown M or N counts as many tiles; a cluster's M tiles come in pairs */
    t->tiles = (s->M < 0 ? (int64_t)1 << 20 : cdiv(cdiv(s->M, bm), mc) * mc) *
               (s->N < 0 ? 1 << 10 : cdiv(s->N, bn)) *
               (s->batch < 0 ? 64
                : s->batch   ? s->batch
                             : 1);
    t->nk = s->K > 0 ? cdiv(s->K, WG_BK) : 0;
    t->ctas = t->tiles < s->sms ? t->tiles : s->sms;
    if (splits == 0) {
        /* stream-K: worth it where the tiles leave a poor last wave; each CTA keeps >= 4 k
         * steps, so a short product takes fewer CTAs than SMs */
        if (mc != 1 || s->M <= 0 || s->N <= 0 || s->K <= 0 || s->sms <= 0 || t->nk < 2 ||
            t->tiles % s->sms == 0 || t->tiles >= 4LL * s->sms)
            return false;
        int64_t units = t->tiles * t->nk, g = units / 4 < s->sms ? units / 4 : s->sms;
        /* TX_WG_SK_CTAS=G cuts the units over G CTAs instead (a benchmark knob: G = tiles x S
         * gives each tile S equal k ranges, the split-K cut) */
        const char *gk = getenv("TX_WG_SK_CTAS");
        int64_t gv = gk ? atoll(gk) : 0;
        if (gv >= 1 && gv <= s->sms && gv <= units / 2) g = gv;
        /* whole rounds of tiles, or fewer CTAs than the plain grid: the plain grid */
        if (g < 1 || t->tiles % g == 0 || g < (t->tiles < s->sms ? t->tiles : s->sms)) return false;
        t->ctas = g;
        t->ws_bytes = g * (int64_t)bm * s->nmm * bn * 4 + g * 4;
    } else if (splits != 1) {
        /* rank 0 adds the other ranks' slots into its accumulators: ptxas spills once the
         * accumulators a thread holds (nmm x bn / 2) times the ranks pass 128 (measured over
         * the space in tests/unit/test_wgmma.c) */
        bool ok = (splits == 2 || (splits == 4 && s->nmm == 1)) &&
                  s->nmm * bn / 2 * splits <= 128 && s->M > 0 && s->K > 0 &&
                  t->tiles * splits <= s->sms && t->nk >= 4LL * splits;
        if (!ok) return false;
    }
    if (splits > 1) t->ctas = t->tiles * splits;
    t->splits = splits;
    t->stage_bytes = (int64_t)(bm + (int64_t)s->nmm * bn) * WG_BK * 2;
    t->red_bytes = splits > 1 ? (int64_t)(splits - 1) * bm * s->nmm * bn * 4 : 0;
    int64_t fixed = WG_SLACK + 2 * 8 * PASS_WG_MAX_STAGES + WG_SPLIT_BARS + t->red_bytes;
    int64_t st = (s->smem - fixed) / t->stage_bytes;
    if (st > PASS_WG_MAX_STAGES) st = PASS_WG_MAX_STAGES;
    /* TX_WG_MAX_STAGES=N caps the ring (a benchmark knob: a shallower ring leaves room for the
     * epilogue's store slots) */
    const char *ms = getenv("TX_WG_MAX_STAGES");
    if (ms && atoi(ms) >= 2 && st > atoi(ms)) st = atoi(ms);
    if (st < 2) return false;
    st = wg_epi_trade(s, t, fixed, st);
    t->stages = (int)st;
    t->smem_bytes = fixed + t->stage_bytes * st;
    /* the TMA-store epilogue's slots, where the outputs allow it and they fit beside this ring
     * without costing it a stage (else the register stores; codegen/wgmma.c follows the same
     * rule, so the kernel's shared memory is this smem_bytes); the looped form's slot per
     * product where it keeps the ring as deep */
    pass_wg_slots a, l;
    if (s->epi_es > 0 && !s->swap &&
        pass_wg_slots_fit(fixed, t->stage_bytes, t->stages, t->consumers, bn, s->epi_es, 1, s->smem,
                          &a) &&
        a.stages >= t->stages) {
        if (s->epi_loop &&
            pass_wg_slots_fit(fixed, t->stage_bytes, t->stages, t->consumers, bn, s->epi_es, s->nmm,
                              s->smem, &l) &&
            l.stages >= a.stages)
            a = l;
        t->epi_nbuf = a.nbuf, t->epi_slots = a.slots, t->epi_bytes = a.bytes;
        t->smem_bytes += a.bytes;
    }
    return true;
}

bool pass_wg_slots_fit(int64_t fixed, int64_t stage_bytes, int stages, int consumers, int bn,
                       int es, int slots, int64_t smem, pass_wg_slots *o) {
    memset(o, 0, sizeof *o);
    if ((es != 2 && es != 4) || slots < 1 || stage_bytes <= 0) return false;
    o->slots = slots;
    o->cols = 128 / es < bn ? 128 / es : bn;
    o->slot_bytes = ((int64_t)64 * o->cols * es + 1023) / 1024 * 1024;
    for (int nb = 2; nb >= 1; nb--) {
        int64_t bytes = (int64_t)consumers * nb * slots * o->slot_bytes;
        int64_t room = smem - fixed - bytes;
        int64_t st = room < 0 ? 0 : room / stage_bytes;
        if (st > stages) st = stages;
        if (st > o->stages) o->nbuf = nb, o->bytes = bytes, o->stages = (int)st;
    }
    return o->stages >= 2;
}

bool pass_wg_epi_outs(const ir_graph *g, const ir_node *mm, const ir_id *outs, unsigned nouts,
                      unsigned nh, int *es, bool *loop, int *why, int *coal) {
    ir_dim N = mm->shape.dim[mm->shape.rank - 1]; /* the rows: the leading dims fold into M */
    *es = 0, *loop = false, *why = PASS_WG_EPI_REGS, *coal = 0;
    if (nouts < 1 || nouts > 8 || IR_DIM_IS_SYM(N) || N >= ((int64_t)1 << 31) ||
        pass_wg_rows(&mm->shape) >= ((int64_t)1 << 31))
        return false;
    /* the looped epilogue stages the products in their 16-bit dtype: an f32 product
     * ([matmul.exact_upcast]) is stored from the registers */
    bool calc = false, half = mm->dtype == IR_F16 || mm->dtype == IR_BF16;
    int w = 0, odd = 0;
    for (unsigned o = 0; o < nouts; o++) {
        const ir_node *n = &g->nodes[outs[o]];
        if (!ir_shape_eq(&n->shape, &mm->shape) ||
            (n->dtype != IR_F16 && n->dtype != IR_BF16 && n->dtype != IR_F32))
            return false;
        int e = (int)ir_dtype_size((ir_dtype)n->dtype);
        if ((N * e) % 16 != 0 && !odd) odd = e;
        if (e > w) w = e;
        calc = calc || n->op != IR_OP_MATMUL;
        half = half && e == 2;
    }
    /* rows TMA cannot store: copied out of the slots by the threads (TX_WG_EPI_COAL=0: the
     * register stores); else TMA, one map per output beside A's and the B's */
    *coal = odd;
    if (odd ? getenv_is0("TX_WG_EPI_COAL") : 1 + nh + nouts > 8) return false;
    *es = w;
    *why = !calc || nouts > nh ? PASS_WG_EPI_PLAIN : !half ? PASS_WG_EPI_F32 : PASS_WG_EPI_OK;
    *loop = *why == PASS_WG_EPI_OK;
    return true;
}

unsigned pass_wg_space(const pass_wg_shape *s, pass_wg_tile *out, unsigned cap) {
    static const int bns[] = {256, 192, 128, 64, 32}, sks[] = {1, 2, 4};
    unsigned n = 0;
    int bm = s->M >= 0 && s->M <= 64 ? 64 : 128;
    for (size_t i = 0; i < sizeof bns / sizeof bns[0]; i++)
        for (size_t j = 0; j < sizeof sks / sizeof sks[0] && n < cap; j++)
            if (pass_wg_tile_make(s, bm, bns[i], sks[j], &out[n])) n++;
    /* then the 64-row tiles of a short M (pass_wg_tile_make: M <= WG_NARROW_M, <= 128 columns:
     * one consumer at 192 or 256 columns measured 11-15% slower than 128-row tiles), plain only */
    for (size_t i = 0; i < sizeof bns / sizeof bns[0] && bm == 128 && n < cap; i++)
        if (pass_wg_tile_make(s, 64, bns[i], 1, &out[n])) n++;
    /* the 2-CTA multicast tiles last: a tie keeps the plain kernel (TX_WG_MCAST=0 leaves them
     * out, for benchmarks of the plain kernel on the same shapes) */
    const char *mc = getenv("TX_WG_MCAST");
    static const int mcbns[] = {256, 128}, skbns[] = {256, 128, 64};
    for (size_t i = 0; i < 2 && n < cap && !(mc && !strcmp(mc, "0")); i++)
        if (pass_wg_tile_make(s, 2 * bm, mcbns[i], 1, &out[n])) n++;
    /* stream-K tiles after them (TX_WG_STREAMK=0 leaves them out: benchmarks of the planner
     * without it on the same shapes) */
    const char *sk = getenv("TX_WG_STREAMK");
    for (size_t i = 0; i < 3 && n < cap && !(sk && !strcmp(sk, "0")); i++)
        if (pass_wg_tile_make(s, bm, skbns[i], 0, &out[n])) n++;
    /* TX_WG_TILE=BMxBN (BM 256: the multicast pair) keeps only that tile's plain form where the
     * shape has it, BMxBNkS its form of S split-K ranks (k0: stream-K); a benchmark knob: one
     * tile against another on the same shape */
    const char *pin = getenv("TX_WG_TILE");
    int pbm = 0, pbn = 0, psk = 1;
    if (pin && sscanf(pin, "%dx%dk%d", &pbm, &pbn, &psk) >= 2) {
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
            if (out[i].bm * out[i].mcast == pbm && out[i].bn == pbn && out[i].splits == psk)
                out[k++] = out[i];
        if (k) n = k;
    }
    return n;
}

int64_t pass_wg_sk_first(int64_t c, int64_t u, int64_t g) { return g > 0 ? c * u / g : 0; }

int64_t pass_wg_sk_owner(int64_t x, int64_t u, int64_t g) {
    return u > 0 ? ((x + 1) * g - 1) / u : 0;
}

/* ---- the model -------------------------------------------------------------------------------
 * Constants (docs/cost-model.md "Matrix products" says where each comes from; fitted to the
 * H200's bench/results/2026-12-01-h200-gemm2 tune runs, 45 tiles of 15 shapes):
 * WG_FLOP_CLK: dense bf16/f16 FLOPs per SM per clock of Hopper's tensor cores (4096: 989 TFLOP/s
 *   on 132 SMs at 1.83 GHz); the clock is derived from the GPU table's peak with it.
 * WG_SMEM_B_CLK, WG_SMEM_EFF: shared-memory bytes per SM per clock that wgmma reads its operands
 *   at (128), and the share of it the k steps sustain.
 * WG_L2_GBPS: the bytes per us that the TMA loads of all running CTAs together draw from L2 (the
 *   k step of the 128x64 and 128x128 tiles is bound by it: 24.6 KB a step in 0.28 us on each of
 *   132 SMs); an operand row whose pitch is not a multiple of 128 bytes costs twice its bytes
 *   (its 128-byte box rows straddle two lines: 2000 x 1000 x 3000 ran 1.6x the time of 2048 x
 *   1024 x 3072 on the same tiles).
 * WG_EPI_NS: ns per output element and stored value of one tile's epilogue (the accumulators
 *   stored by the consumers, not overlapped with the next tile's k steps).
 * WG_FILL_US: the kernel's prologue and first pipeline fill (barrier init, tensor-map fetch,
 *   the first TMA round trip); WG_CLUSTER_US more for a split-K cluster (barrier, teardown).
 * WG_RED_GBPS: bytes per us per SM of the split-K partial sums through distributed shared
 *   memory (each rank's slot written remotely and read by rank 0).
 * WG_CTA_GBPS, WG_HBM_EFF: HBM bytes per us one CTA streams through its TMA ring, and the share
 *   of the GPU's HBM bandwidth all of them reach (skinny products stream their weights at
 *   2.6-3.3 TB/s on the H200 from about 60 CTAs: 0.62 of 4800 GB/s; 7 x 11008 x 4096 on 43
 *   CTAs of 64x256 streamed 2.42 TB/s, 56 GB/s a CTA, bench/results/2026-12-02-h200-ragged). */
#define WG_FLOP_CLK   4096.0
#define WG_SMEM_B_CLK 128.0
#define WG_SMEM_EFF   0.90
#define WG_L2_GBPS    11800.0
#define WG_EPI_NS     0.25
#define WG_FILL_US    2.0
#define WG_CLUSTER_US 1.5
#define WG_RED_GBPS   60.0
#define WG_CTA_GBPS   55.0
/* WG_SK_GBPS, WG_SK_US: stream-K's partial tiles through L2 (bytes per us per SM: one CTA's
 * coalesced f32 stores and loads of its 256 consumer threads; an estimate), and a fixed cost per
 * kernel: the flag's round trip, the CTAs' second pipeline fill at a tile boundary and what else
 * the H200 showed (bench/gemm_split_check.sh, /work/notes/gpu/gemm: forced stream-K on 1536^3,
 * 1000^3, 700 x 3000 x 2000, 300 x 5000 x 3000 measured 1.4-6.4 us, median ~4 us, above the
 * model with 1.0 here). */
/* WG_STEP_US, WG_STEP_US_KB: the least time of one k step of a CTA, a fixed part plus a part per
 * KB its TMA loads bring (step_l2_bytes), however few CTAs share the L2: txc tune on the H200 of
 * M = 64, 128, 256 x 4096 x 4096 (bench/results/2026-12-03-h200-final9/tune.txt, 12 tiles of
 * 32-128 CTAs, less the fill, the epilogue and the 2.5 us the schedule adds per kernel) ran
 * 0.19-0.20 us a step with 16 KB, 0.22-0.26 with 24 KB, 0.32 with 32 KB: the line through them. It
 * binds on grids too small for the L2 term (short M); a full grid's L2 term and the big tiles'
 * tensor-core time are above it. */
#define WG_STEP_US    0.081
#define WG_STEP_US_KB 0.0073
#define WG_SK_GBPS    100.0
#define WG_SK_US      5.0
#define WG_SK_GAIN    0.92
#define WG_HBM_EFF    0.62
/* WG_STAGE_EFF: the share of the GPU's HBM bandwidth a staging kernel ([matmul.wgmma.stage],
 * codegen/stage.c) sustains: 2.0-2.5 TB/s with 8-byte words and 1.2-1.8 TB/s with 2-byte words
 * on the H200 (bench/results/2026-12-01-h200-pitch, the first staging kernel: 16-32 bytes in
 * flight per thread; 0.42-0.52 of 4800 GB/s). */
#define WG_STAGE_EFF 0.50
/* WG_EPI_COAL_NS: WG_EPI_NS's time for the staged coalesced stores of outputs whose rows are not a
 *   multiple of 16 bytes ([matmul.wgmma.epi]: the slots written as for TMA, then copied out by
 *   the warpgroup's threads): WG_EPI_NS for the staging plus 0.05 ns for the copy (per 32
 *   elements one shared load and one coalesced store of a warp and their address arithmetic,
 *   about 4 issue slots of an SM's 4 schedulers). An estimate to be measured
 *   (bench/coal_check.sh).
 * WG_EPI_SCATTER_NS: the register stores of such rows (no slots: they would cost the ring a
 *   stage, or TX_WG_EPI_COAL=0): every element its own 2- or 4-byte store, a warp's store
 *   touching 8 rows. Fitted to one H200 measurement (prime_bmm_f16, B 7, 509 x 257 x 1021:
 *   the 128x256 kernel 26.2 us, of which ~20 us the epilogue of one tile a CTA); the register
 *   stores of 16-byte rows keep WG_EPI_NS (not measured apart). */
#define WG_EPI_COAL_NS    0.30
#define WG_EPI_SCATTER_NS 0.60

/* Bytes one k step's TMA loads cost the L2: the A box rows (a_rows) and every B tile (half of it
 * in a multicast cluster: the other half comes from the peer CTA's load), twice for an operand
 * whose row pitch (inner extent x 2 bytes, known) is not a multiple of 128 bytes. */
static double step_l2_bytes(const pass_wg_shape *s, const pass_wg_tile *t) {
    int64_t arows = s->a_kmajor && s->M > 0 && s->M < t->bm ? (s->M + 7) / 8 * 8 : t->bm;
    int64_t ia = s->a_kmajor ? s->K : s->M, ib = s->b_kmajor ? s->K : s->N;
    if (s->a_staged) ia = pass_wg_pitch(ia, 2); /* a staged copy's pitch is 128-byte aligned */
    if (s->b_staged) ib = pass_wg_pitch(ib, 2);
    double fa = ia > 0 && (ia * 2) % 128 ? 2.0 : 1.0, fb = ib > 0 && (ib * 2) % 128 ? 2.0 : 1.0;
    return ((double)arows * fa + (double)s->nmm * t->bn * fb / t->mcast) * WG_BK * 2;
}

double pass_wg_model(const pass_wg_shape *s, const pass_wg_tile *t, const pass_gpu *gpu,
                     double hbm_bytes, pass_wg_time *o) {
    memset(o, 0, sizeof *o);
    pass_wg_shape sw;
    if (t->swap && !s->swap) { /* [matmul.wgmma.swap]: the tile is of the transposed shape */
        pass_wg_swap_shape(s, &sw);
        s = &sw;
    }
    double eff = gpu->wg_eff > 0 ? gpu->wg_eff : 1.0;
    double peak = gpu->peak_TFLOPs[IR_BF16] > 0 ? gpu->peak_TFLOPs[IR_BF16] : 989.0;
    int sms = gpu->sms > 0 ? gpu->sms : s->sms;
    double clk_per_us = peak * 1e6 / (sms * WG_FLOP_CLK); /* the tensor cores' clock, in MHz */
    double mma = (double)t->bm * s->nmm * t->bn * WG_BK * 2 / WG_FLOP_CLK / eff;
    /* shared memory a k step moves: each consumer's wgmma reads of its 64 A rows and the B tiles,
     * and the TMA writes of the CTA's A rows and B tiles (a multicast peer's half lands here
     * too), 128 bytes a row */
    double smem = ((double)t->consumers * (64.0 + (double)s->nmm * t->bn) +
                   ((double)t->bm + (double)s->nmm * t->bn)) *
                  128.0 / (WG_SMEM_B_CLK * WG_SMEM_EFF);
    double core_us = (mma > smem ? mma : smem) / clk_per_us, l2 = step_l2_bytes(s, t);
    double floor_us = WG_STEP_US + WG_STEP_US_KB * l2 / 1024.0;
    if (core_us < floor_us) core_us = floor_us;
    double epi_ns = !s->epi_coal ? WG_EPI_NS : t->epi_nbuf > 0 ? WG_EPI_COAL_NS : WG_EPI_SCATTER_NS;
    o->epi_us = (double)t->bm * t->bn * (s->nouts > 0 ? s->nouts : 1) * epi_ns * 1e-3;
    if (t->splits > 1) o->red_us = (double)t->red_bytes * 2 / (WG_RED_GBPS * 1e3) + WG_CLUSTER_US;
    o->fill_us = WG_FILL_US + (t->mcast > 1 ? WG_CLUSTER_US : 0);
    if (t->splits == 0) {
        /* stream-K: every CTA runs its share of the k steps at the full grid's L2 rate, then
         * the epilogues of the tiles it finishes; the partial tile it leaves for another CTA
         * and the partials it adds for its last tile cross L2 */
        int64_t g = t->ctas > 0 ? t->ctas : 1, units = t->tiles * t->nk;
        int64_t upc = cdiv(units, g), nread = cdiv(t->nk, upc);
        double slot = (double)t->bm * s->nmm * t->bn * 4;
        double l2g = (double)g * l2 / (WG_L2_GBPS * 1e3);
        o->step_us = core_us > l2g ? core_us : l2g;
        o->waves = (double)t->tiles / sms;
        o->rounds = cdiv(t->tiles, g);
        o->red_us = slot * (double)(1 + nread) / (WG_SK_GBPS * 1e3) + WG_SK_US;
        o->comp_us =
            o->fill_us + (double)upc * o->step_us + (double)o->rounds * o->epi_us + o->red_us;
    } else {
        int64_t ctas = t->tiles * t->splits;
        int64_t grid = ctas < sms ? ctas : sms;
        o->waves = (double)ctas / sms;
        o->rounds = cdiv(ctas, grid);
        int64_t ksteps = s->K > 0 ? cdiv(t->nk, t->splits) : 64;
        /* full rounds with every CTA drawing on L2, then the tail round with the rest */
        int64_t full = ctas / grid, rest = ctas % grid;
        double l2_full = (double)grid * l2 / (WG_L2_GBPS * 1e3);
        double l2_rest = (double)rest * l2 / (WG_L2_GBPS * 1e3);
        o->step_us = core_us > l2_full ? core_us : l2_full;
        double step_rest = core_us > l2_rest ? core_us : l2_rest;
        o->comp_us = o->fill_us + (double)full * (ksteps * o->step_us + o->epi_us + o->red_us) +
                     (rest ? ksteps * step_rest + o->epi_us + o->red_us : 0);
    }
    int64_t grid = t->splits == 0 ? t->ctas : t->tiles * t->splits;
    if (grid > sms) grid = sms;
    if (grid < 1) grid = 1;
    if (hbm_bytes < 0) {
        double m = s->M > 0 ? (double)s->M : 4096, k = s->K > 0 ? (double)s->K : 4096;
        double n = s->N > 0 ? (double)s->N : 4096;
        hbm_bytes = 2.0 * (m * k + s->nmm * k * n + s->nouts * m * n) *
                    (s->batch > 0 ? (double)s->batch : 1.0);
    }
    if (t->splits == 0 && gpu->l2_bytes > 0 && s->M > 0 && s->N > 0 && s->K > 0) {
        /* stream-K: CTAs that share an A or B panel run it at different k offsets, so where the
         * operands exceed half the L2 the panels no longer meet there: each tile reads its own
         * (measured on the H200: 777 x 4096 x 11008 2.0x, 4096^3 1.3x the plain kernel) */
        double a = 2.0 * s->M * s->K, bb = 2.0 * s->nmm * s->K * s->N;
        if (a + bb > 0.5 * (double)gpu->l2_bytes)
            hbm_bytes += a * (double)(cdiv(s->N, t->bn) - 1) + bb * (double)(cdiv(s->M, t->bm) - 1);
    }
    double bw = (double)grid * WG_CTA_GBPS * 1e3; /* bytes per us */
    if (gpu->hbm_GBps > 0 && bw > gpu->hbm_GBps * WG_HBM_EFF * 1e3)
        bw = gpu->hbm_GBps * WG_HBM_EFF * 1e3;
    o->mem_us = hbm_bytes / bw + o->fill_us + o->red_us;
    if (s->nstage > 0) {
        double hbm = gpu->hbm_GBps > 0 ? gpu->hbm_GBps : 3350.0;
        o->stage_us = s->stage_bytes / (hbm * WG_STAGE_EFF * 1e3) + s->nstage * gpu->launch_us;
    }
    o->time_us = (o->comp_us > o->mem_us ? o->comp_us : o->mem_us) + o->stage_us;
    return o->time_us;
}

bool pass_wg_pick(const pass_wg_shape *s, const pass_gpu *gpu, double hbm_bytes, pass_wg_tile *t) {
    pass_wg_tile sp[PASS_WG_SPACE];
    unsigned n = pass_wg_space(s, sp, PASS_WG_SPACE);
    if (!n) return false;
    /* stream-K only where the model has it WG_SK_GAIN faster than every other tile: its
     * partial tiles and waits are priced roughly (estimates, not fitted); TX_WG_STREAMK=1 takes
     * the model's fastest stream-K tile where the shape has one (a benchmark knob) */
    const char *ev = getenv("TX_WG_STREAMK");
    bool force = ev && !strcmp(ev, "1"), any = false;
    for (unsigned i = 0; i < n && force; i++) any = any || sp[i].splits == 0;
    unsigned best = 0;
    double bt = 0;
    bool have = false;
    for (unsigned i = 0; i < n; i++) {
        if (force && any && sp[i].splits != 0) continue;
        pass_wg_time tm;
        double v = pass_wg_model(s, &sp[i], gpu, hbm_bytes, &tm);
        if (sp[i].splits == 0 && !force) v /= WG_SK_GAIN;
        if (!have || v < bt - 1e-9) best = i, bt = v, have = true;
    }
    *t = sp[best];
    return true;
}

/* ---- [matmul.wgmma.swap] ----------------------------------------------------------------------
 */

bool pass_wg_swap_ok(const pass_wg_shape *s) {
    const char *e = getenv("TX_WG_SWAP");
    if (!e || (strcmp(e, "1") && strcmp(e, "2")))
        return false; /* off by default until measured on the GPU */
    return !s->swap && s->nmm == 1 && s->batch == 0 && !s->a_merged && s->a_kmajor && s->M > 0 &&
           s->M <= PASS_WG_SWAP_M && s->N > 0 && s->K > 0;
}

void pass_wg_swap_shape(const pass_wg_shape *s, pass_wg_shape *o) {
    *o = *s;
    o->M = s->N, o->N = s->M;
    o->a_kmajor = s->b_kmajor, o->b_kmajor = s->a_kmajor;
    o->a_staged = s->b_staged, o->b_staged = s->a_staged;
    o->epi_es = 0, o->epi_loop = false, o->epi_coal = 0; /* the register stores */
    o->swap = true;
}

bool pass_wg_swap_make(const pass_wg_shape *s, int bn, int bm, int splits, pass_wg_tile *t) {
    memset(t, 0, sizeof *t);
    if (!pass_wg_swap_ok(s)) return false;
    pass_wg_shape sw;
    pass_wg_swap_shape(s, &sw);
    return pass_wg_tile_make(&sw, bn, bm, splits, t);
}

unsigned pass_wg_swap_space(const pass_wg_shape *s, pass_wg_tile *out, unsigned cap) {
    static const int sks[] = {1, 2, 4};
    unsigned n = 0;
    if (!pass_wg_swap_ok(s)) return 0;
    int bn = s->N <= 64 ? 64 : 128; /* the tile along N: wgmma's M (pass_wg_tile_make) */
    int64_t q0 = cdiv(s->M, 256);
    /* TX_WG_SWAP_BM=B keeps only the tiles of B rows (a benchmark knob: one cut against another) */
    const char *pin = getenv("TX_WG_SWAP_BM");
    int64_t pb = pin ? atoll(pin) : 0;
    for (int64_t q = q0; q < q0 + 4; q++) {
        int64_t bm = (cdiv(s->M, q) + 7) / 8 * 8;
        if (q > q0 && bm == (cdiv(s->M, q - 1) + 7) / 8 * 8) continue;
        if (pb > 0 && bm != pb) continue;
        for (size_t j = 0; j < sizeof sks / sizeof sks[0] && n < cap; j++)
            if (pass_wg_swap_make(s, bn, (int)bm, sks[j], &out[n])) n++;
    }
    return n;
}

bool pass_wg_swap_pick(const pass_wg_shape *s, const pass_gpu *gpu, double hbm_bytes,
                       pass_wg_tile *t) {
    pass_wg_tile sp[PASS_WG_SPACE];
    unsigned n = pass_wg_swap_space(s, sp, PASS_WG_SPACE), best = 0;
    double bt = 0;
    for (unsigned i = 0; i < n; i++) {
        pass_wg_time tm;
        double v = pass_wg_model(s, &sp[i], gpu, hbm_bytes, &tm);
        if (i == 0 || v < bt - 1e-9) best = i, bt = v;
    }
    if (n) *t = sp[best];
    return n > 0;
}

/* ---- the graph's view of the kernel's conditions ----------------------------------------------
 */

/* Whether reshape node n (of input shape in) only inserts or drops unit dims among the leading
 * dims: the last two dims are the input's and the leading dims other than 1 are the input's, in
 * order (the same bytes; a batch index over n's leading dims is one over the input's). */
static bool wg_unit_reshape(const ir_shape *in, const ir_shape *n) {
    if (in->rank < 2 || n->rank < 2 || in->dim[in->rank - 1] != n->dim[n->rank - 1] ||
        in->dim[in->rank - 2] != n->dim[n->rank - 2])
        return false;
    unsigned i = 0, j = 0, li = in->rank - 2u, lj = n->rank - 2u;
    for (;;) {
        while (i < li && in->dim[i] == 1) i++;
        while (j < lj && n->dim[j] == 1) j++;
        if (i == li || j == lj) return i == li && j == lj;
        if (in->dim[i++] != n->dim[j++]) return false;
    }
}

/* Whether node x is a reshape, in `region`, of a plain dense buffer y of dtype dt written
 * outside the region (an input, or a non-view value of another region): the reshape then reads
 * y's bytes in y's order as a buffer of its own shape (pass_wg_opnd_buf gives y, at the reshape's
 * row pitch). */
static bool wg_reshape_of_buf(const ir_graph *g, uint32_t region, ir_id x, ir_dtype dt) {
    const ir_node *n = &g->nodes[x];
    if (n->op != IR_OP_RESHAPE || n->region != region || n->shape.rank < 2) return false;
    const ir_node *y = &g->nodes[ir_in(g, n, 0)];
    return y->dtype == dt && y->op != IR_OP_CONST && y->op != IR_OP_OUTPUT &&
           !(ir_op_traits((ir_op)y->op) & IR_T_VIEW) &&
           (y->op == IR_OP_INPUT || (y->region != region && y->region != IR_NONE));
}

bool pass_wg_opnd(const ir_graph *g, uint32_t region, ir_id id, ir_dtype dt, bool k_last,
                  ir_id *base, bool *kmajor) {
    int perm[2] = {0, 1}; /* operand matrix axis i reads base matrix axis perm[i] */
    ir_id x = id;
    for (unsigned guard = 0; guard < 16; guard++) {
        const ir_node *n = &g->nodes[x];
        if (n->region != region || n->op == IR_OP_INPUT || n->op == IR_OP_SLICE) break;
        unsigned r = n->shape.rank;
        bool lead = r >= 2; /* a permute of the last two axes alone */
        for (unsigned i = 0; n->op == IR_OP_PERMUTE && lead && i + 2 < r; i++)
            lead = n->a.perm[i] == (int)i;
        if ((n->op == IR_OP_CAST && n->dtype == dt) ||
            (n->op == IR_OP_RESHAPE &&
             wg_unit_reshape(&g->nodes[ir_in(g, n, 0)].shape, &n->shape))) {
            x = ir_in(g, n, 0);
        } else if (wg_reshape_of_buf(g, region, x, dt)) {
            break; /* the reshape is the base: its buffer is its input's */
        } else if (n->op == IR_OP_PERMUTE && lead) {
            int p0 = n->a.perm[r - 2] - (int)(r - 2), p1 = n->a.perm[r - 1] - (int)(r - 2);
            int np[2] = {perm[p0], perm[p1]};
            perm[0] = np[0], perm[1] = np[1];
            x = ir_in(g, n, 0);
        } else {
            return false;
        }
    }
    const ir_node *b = &g->nodes[x];
    int64_t pitch, off;
    ir_id src = pass_wg_opnd_buf(g, x, &pitch, &off);
    if (src != x && b->op == IR_OP_RESHAPE) { /* a reshape of a buffer: rows at TMA's pitch */
        if ((pitch * (int64_t)ir_dtype_size(dt)) % 16 != 0) return false;
    } else if (src != x) { /* a column slice of a 2-D buffer, read in place at its pitch */
        const ir_node *sn = &g->nodes[src];
        int64_t es = (int64_t)ir_dtype_size(dt);
        if (sn->op == IR_OP_CONST || sn->op == IR_OP_OUTPUT || sn->dtype != dt ||
            (sn->region == region && sn->op != IR_OP_INPUT) ||
            (ir_op_traits((ir_op)sn->op) & IR_T_VIEW) || sn->shape.rank != 2 || pitch <= 0 ||
            pitch >= ((int64_t)1 << 31) || (pitch * es) % 16 != 0 || (off * es) % 16 != 0)
            return false;
    } else if (b->op == IR_OP_CONST || b->op == IR_OP_OUTPUT ||
               (b->region == region && b->op != IR_OP_INPUT)) {
        return false;
    }
    unsigned r = b->shape.rank;
    if (((ir_op_traits((ir_op)b->op) & IR_T_VIEW) && src == x) || b->dtype != dt || r < 2)
        return false;
    ir_dim inner = b->shape.dim[r - 1];
    if (IR_DIM_IS_SYM(inner) || inner <= 0 || inner >= ((int64_t)1 << 31)) return false;
    int64_t rows = pass_wg_rows(&b->shape);
    if (rows >= ((int64_t)1 << 31)) return false;
    /* the operand's contiguous axis is the one reading base axis 1 */
    *kmajor = (perm[1] == 1) == k_last;
    *base = x;
    return true;
}

ir_id pass_wg_opnd_buf(const ir_graph *g, ir_id base, int64_t *pitch, int64_t *off) {
    const ir_node *b = &g->nodes[base];
    *pitch = 0, *off = 0;
    if (b->op == IR_OP_RESHAPE && b->shape.rank >= 2) { /* a base reshape (pass_wg_opnd) */
        ir_dim inner = b->shape.dim[b->shape.rank - 1];
        const ir_node *y = &g->nodes[ir_in(g, b, 0)];
        if (IR_DIM_IS_SYM(inner) || inner <= 0 || (ir_op_traits((ir_op)y->op) & IR_T_VIEW))
            return base;
        *pitch = inner;
        return ir_in(g, b, 0);
    }
    if (b->op != IR_OP_SLICE || b->shape.rank != 2 || b->a.slice.axis != 1) return base;
    ir_id src = ir_in(g, b, 0);
    ir_dim inner = g->nodes[src].shape.dim[g->nodes[src].shape.rank - 1];
    if (g->nodes[src].shape.rank != 2 || IR_DIM_IS_SYM(inner)) return base;
    *pitch = inner, *off = b->a.slice.start;
    return src;
}

int64_t pass_wg_rows(const ir_shape *s) {
    int64_t rows = 1;
    for (unsigned i = 0; i + 1 < s->rank; i++) {
        if (IR_DIM_IS_SYM(s->dim[i])) return -1;
        rows *= s->dim[i];
        if (rows >= ((int64_t)1 << 31)) return (int64_t)1 << 31;
    }
    return rows;
}

/* A B base of rank 2 or whose leading dims are 1: one matrix for every batch element. */
static bool wg_bcast_b(const ir_graph *g, ir_id bbase) {
    const ir_shape *bs = &g->nodes[bbase].shape;
    for (unsigned i = 0; i + 2 < bs->rank; i++)
        if (bs->dim[i] != 1) return false;
    return bs->rank >= 2;
}

bool pass_wg_fold(const ir_graph *g, const ir_node *mm, ir_id abase, bool ak, ir_id bbase) {
    unsigned r = mm->shape.rank;
    if (abase == IR_NONE) return wg_bcast_b(g, bbase);
    const ir_shape *as = &g->nodes[abase].shape, *bs = &g->nodes[bbase].shape;
    if (r == 2) return as->rank == 2 && bs->rank == 2;
    if (r < 2 || as->rank != r || !ak) return false;
    for (unsigned i = 0; i + 2 < r; i++)
        if (as->dim[i] != mm->shape.dim[i]) return false;
    return wg_bcast_b(g, bbase);
}

int64_t pass_wg_nbatch(const ir_shape *s) {
    int64_t n = 1;
    for (unsigned i = 0; i + 2 < s->rank; i++) {
        if (IR_DIM_IS_SYM(s->dim[i])) return -1;
        n *= s->dim[i];
        if (n >= ((int64_t)1 << 31)) return (int64_t)1 << 31;
    }
    return n;
}

/* Operand base x of product mm in batched form: rank 2 .. mm's, its leading dims right-aligned
 * with mm's, each mm's or 1. */
static bool wg_batch_opnd(const ir_graph *g, const ir_node *mm, ir_id x) {
    const ir_shape *bs = &g->nodes[x].shape;
    unsigned r = mm->shape.rank;
    if (bs->rank < 2 || bs->rank > r) return false;
    for (unsigned i = 0; i + 2 < bs->rank; i++) {
        ir_dim d = bs->dim[i], e = mm->shape.dim[i + (r - bs->rank)];
        if (d != 1 && d != e) return false;
    }
    return true;
}

bool pass_wg_batch(const ir_graph *g, const ir_node *mm, ir_id abase, ir_id bbase) {
    if (mm->shape.rank < 3 || abase == IR_NONE || bbase == IR_NONE) return false;
    if (!wg_batch_opnd(g, mm, abase) || !wg_batch_opnd(g, mm, bbase)) return false;
    int64_t nb = pass_wg_nbatch(&mm->shape);
    if (nb >= ((int64_t)1 << 31)) return false;
    /* rows of one batch element, and the whole output's, within TMA's int32 coordinates */
    ir_dim m = mm->shape.dim[mm->shape.rank - 2];
    return IR_DIM_IS_SYM(m) || (m > 0 && m < ((int64_t)1 << 31));
}

bool pass_wg_batch_fill_ok(int64_t M, int64_t N, int64_t K) {
    const char *ev = getenv("TX_WG_BATCH"); /* "1": the rule off (benchmarks of its crossover) */
    if (M <= 0 || N <= 0 || K <= 0 || (ev && !strcmp(ev, "1"))) return true; /* unbound: large */
    double fill = (double)(M < 64 ? M : 64) * (double)(N < 64 ? N : 64) * (double)(K < 64 ? K : 64);
    return fill >= PASS_WG_BATCH_FILL * 64.0 * 64.0 * 64.0;
}

int64_t pass_wg_batch_coord(const ir_shape *mm, const ir_shape *op, int64_t b) {
    unsigned nb = mm->rank - 2, on = op->rank >= 2 ? op->rank - 2u : 0u;
    int64_t c = 0, stride = 1;
    for (unsigned i = nb; i-- > 0;) {
        int64_t e = mm->dim[i], idx = b % e;
        b /= e;
        if (i + on < nb) continue; /* a dim the operand lacks: broadcast */
        int64_t od = op->dim[i + on - nb];
        if (od != 1) c += idx * stride;
        stride *= od;
    }
    return c;
}

bool pass_wg_opnd_merged(const ir_graph *g, uint32_t region, ir_id id, ir_dtype dt, ir_id *base,
                         int perm[3]) {
    ir_id x = id;
    for (unsigned guard = 0; guard < 8; guard++) {
        const ir_node *n = &g->nodes[x];
        if (n->region != region || n->op != IR_OP_CAST || n->dtype != dt) break;
        x = ir_in(g, n, 0);
    }
    const ir_node *r = &g->nodes[x];
    unsigned rr = r->shape.rank, nb = rr - 2; /* leading (batch) dims kept by the reshape */
    if (r->op != IR_OP_RESHAPE || rr < 2) return false;
    ir_id y = ir_in(g, r, 0);
    const ir_node *v = &g->nodes[y];
    if (v->shape.rank != rr + 1 || IR_DIM_IS_SYM(v->shape.dim[nb + 1]) ||
        IR_DIM_IS_SYM(v->shape.dim[nb + 2]) || v->shape.dim[nb] != r->shape.dim[nb] ||
        IR_DIM_IS_SYM(r->shape.dim[nb + 1]) ||
        r->shape.dim[nb + 1] != v->shape.dim[nb + 1] * v->shape.dim[nb + 2])
        return false;
    for (unsigned i = 0; i < nb; i++)
        if (v->shape.dim[i] != r->shape.dim[i]) return false;
    perm[0] = 0, perm[1] = 1, perm[2] = 2;
    if (v->op == IR_OP_PERMUTE && (v->region == region || region == IR_NONE)) {
        for (unsigned i = 0; i < nb; i++)
            if (v->a.perm[i] != (int)i) return false;
        for (int i = 0; i < 3; i++) perm[i] = v->a.perm[nb + i] - (int)nb;
        y = ir_in(g, v, 0);
    }
    const ir_node *b = &g->nodes[y];
    if (b->op == IR_OP_CONST || b->op == IR_OP_OUTPUT ||
        (b->region == region && b->op != IR_OP_INPUT && region != IR_NONE) ||
        (ir_op_traits((ir_op)b->op) & IR_T_VIEW) || b->dtype != dt || b->shape.rank != rr + 1)
        return false;
    for (unsigned i = 0; i < rr + 1; i++)
        if (!IR_DIM_IS_SYM(b->shape.dim[i]) && b->shape.dim[i] >= ((int64_t)1 << 31)) return false;
    if (perm[2] != 2 || perm[0] == perm[1] || perm[0] < 0 || perm[0] > 1 || perm[1] < 0 ||
        perm[1] > 1)
        return false;
    ir_dim d = b->shape.dim[nb + 2];
    if (IR_DIM_IS_SYM(d) || d % 64 != 0 || d <= 0) return false;
    /* with batch dims, a tile of 128 rows must stay inside one batch element: the product's row
     * extent a known multiple of 128 */
    ir_dim rows = r->shape.dim[nb];
    if (nb > 0 && (IR_DIM_IS_SYM(rows) || rows % 128 != 0)) return false;
    *base = y;
    return true;
}

int64_t pass_wg_pitch(int64_t inner, int es) {
    if (es <= 0 || (inner * es) % 16 == 0) return inner;
    int64_t per = 128 / es; /* elements of 128 bytes */
    return (inner + per - 1) / per * per;
}

/* Adds the staging of operand base (a buffer of rank >= 2, dtype size es: its rows are every
 * index of its leading dims, batch elements included, copied as one [rows, pitch] matrix) to s
 * when its row pitch is not TMA's: true when it is staged. */
static bool wg_stage(const ir_graph *g, ir_id base, int es, pass_wg_shape *s) {
    const ir_node *b = &g->nodes[base];
    int64_t inner = b->shape.dim[b->shape.rank - 1], rows = pass_wg_rows(&b->shape), sp, so;
    int64_t pitch = pass_wg_pitch(inner, es);
    if (pitch == inner || pass_wg_opnd_buf(g, base, &sp, &so) != base) return false;
    s->nstage++;
    s->stage_bytes += rows < 0 ? 0 : (double)rows * (double)(inner + pitch) * es;
    return true;
}

/* [matmul.wgmma.stage]'s alternative: the mma.sync kernel of region rg reading s's staged
 * operands in place. Their rows are not 16-byte aligned, so neither cp.async nor vector loads
 * apply: every element of such an operand's tiles is one scalar load (codegen/mma.c
 * cg_mm_tile_load), issued once per tile of the other operand (the region's mma.sync tile,
 * 128 where unplanned), at PASS_ELEM_LOAD_EPC per SM per clock on the SMs its tiles occupy
 * (at most one SM per tile), then the products at the tensor-core roofline (tc_eff);
 * single-buffered, so the two add. Fills s->sync_loads and s->sync_us (known sizes). */
static void wg_sync_price(const ir_region *rg, const pass_gpu *gpu, pass_wg_shape *s) {
    double b = s->batch > 0 ? (double)s->batch : 1.0, M = (double)s->M, N = (double)s->N;
    double K = (double)s->K, tm = rg->tile[0] > 0 ? rg->tile[0] : 128;
    double tn = rg->tile[1] > 0 ? rg->tile[1] : 128;
    s->sync_loads = 0;
    if (s->a_staged) s->sync_loads += b * M * K * ceil(N / tn) * s->nmm;
    if (s->b_staged) s->sync_loads += b * K * N * ceil(M / tm) * s->nmm;
    double clk = gpu->clock_GHz > 0 ? gpu->clock_GHz : 1.5, sms = gpu->sms > 0 ? gpu->sms : 132;
    double tiles = b * ceil(M / tm) * ceil(N / tn);
    if (tiles < sms) sms = tiles;
    double peak = gpu->peak_TFLOPs[IR_BF16] * (gpu->tc_eff > 0 ? gpu->tc_eff : 1.0);
    double flops = 2.0 * b * M * N * K * s->nmm;
    s->sync_us = s->sync_loads / (PASS_ELEM_LOAD_EPC * sms * clk * 1e3) +
                 (peak > 0 ? flops / (peak * 1e6) : 0);
}

/* A dim's value; -1 when symbolic (as codegen/wgmma.c reads it: bound sizes are substituted
 * into the shapes before planning). */
static int64_t dim_val(const ir_graph *g, ir_dim d) {
    (void)g;
    return IR_DIM_IS_SYM(d) ? -1 : d;
}

bool pass_wg_facts(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                   int64_t budget, pass_wg_shape *s) {
    memset(s, 0, sizeof *s);
    const ir_region *rg = &g->regions[r];
    if (rg->kind != IR_RK_MATMUL || !gpu || gpu->wg_eff <= 0 || rg->anchor >= g->n) return false;
    const ir_node *mm = &g->nodes[rg->anchor];
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    unsigned rank = mm->shape.rank;
    if (mm->op != IR_OP_MATMUL || rank < 2 || (dt != IR_BF16 && dt != IR_F16)) return false;
    ir_id ia = ir_in(g, mm, 0);
    bool ak = true, bk = false, merged = false;
    ir_id abase, base;
    int perm[3], es = (int)ir_dtype_size(dt);
    if (!pass_wg_opnd(g, r, ia, dt, true, &abase, &ak)) {
        if (!pass_wg_opnd_merged(g, r, ia, dt, &abase, perm)) return false;
        ak = true, merged = true;
        s->a_merged = true;
    } else {
        s->a_staged = wg_stage(g, abase, es, s);
    }
    int nmm = 0;
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        const ir_node *mh = &g->nodes[ix->rids[j]];
        if (mh->op != IR_OP_MATMUL) continue;
        bool bkh;
        if (mh->dtype != mm->dtype || pass_mm_tc_dtype(g, mh) != dt ||
            !ir_shape_eq(&mh->shape, &mm->shape) || ir_in(g, mh, 0) != ia ||
            !pass_wg_opnd(g, r, ir_in(g, mh, 1), dt, false, &base, &bkh) || (nmm > 0 && bkh != bk))
            return false;
        /* leading dims of A fold into M (B broadcast over them); else a batched product
         * ([matmul.wgmma.batch]: a batch coordinate in every map); an operand of either kind
         * is staged whole, its leading dims folded into the copy's rows */
        if (!pass_wg_fold(g, mh, merged ? IR_NONE : abase, ak, base)) {
            if (merged || (nmm > 0 && !s->batch) || !pass_wg_batch(g, mh, ia, ir_in(g, mh, 1)) ||
                getenv_is0("TX_WG_BATCH"))
                return false;
            s->batch = pass_wg_nbatch(&mh->shape);
        } else if (s->batch) {
            return false;
        }
        bk = bkh;
        bool st = wg_stage(g, base, es, s);
        s->b_staged = st || s->b_staged;
        nmm++;
    }
    if (nmm < 1 || nmm > 4) return false;
    pass_io io;
    pass_region_io(g, ix, r, &io);
    s->nouts = io.nwrites > 0 ? (int)io.nwrites : 1;
    pass_wg_epi_outs(g, mm, io.writes, io.nwrites, (unsigned)nmm, &s->epi_es, &s->epi_loop,
                     &s->epi_why, &s->epi_coal);
    pass_io_free(&io);
    s->M = s->batch ? dim_val(g, mm->shape.dim[rank - 2]) : pass_wg_rows(&mm->shape);
    s->N = dim_val(g, mm->shape.dim[rank - 1]);
    s->K = dim_val(g, g->nodes[ia].shape.dim[g->nodes[ia].shape.rank - 1]); /* A may be 2-D */
    if (s->M >= ((int64_t)1 << 31)) return false;
    if (s->N == 0) return false;
    /* [matmul.wgmma.batch]: a batched product whose per-batch product fills too little of the
     * smallest wgmma tile keeps mma.sync */
    if (s->batch && !pass_wg_batch_fill_ok(s->M, s->N, s->K)) {
        s->batch_why = 1; /* the caller's --explain names the rule */
        return false;
    }
    /* staging is the planner's choice, priced at known sizes (every staged row counted): codegen
     * stages only where the region's schedule is matmul.wgmma */
    if (s->nstage > 0 &&
        (s->M <= 0 || s->N <= 0 || s->K <= 0 || s->batch < 0 || s->stage_bytes <= 0)) {
        if (s->batch) s->batch_why = 2;
        return false;
    }
    s->a_kmajor = ak, s->b_kmajor = bk, s->nmm = nmm;
    if (s->nstage > 0) wg_sync_price(rg, gpu, s);
    s->a_kmajor = ak, s->b_kmajor = bk, s->nmm = nmm;
    s->smem = budget < gpu->smem_per_block ? budget : gpu->smem_per_block;
    s->sms = gpu->sms;
    return true;
}

/* The first operand of matmul region r's products that pass_wg_opnd refuses, the view node
 * that stops it written into `what`; false when every operand is readable. */
static bool wg_opnd_refused(const ir_graph *g, const pass_index *ix, uint32_t r, ir_dtype dt,
                            char *what, size_t cap) {
    for (uint32_t j = ix->rstart[r]; j < ix->rstart[r + 1]; j++) {
        const ir_node *mh = &g->nodes[ix->rids[j]];
        if (mh->op != IR_OP_MATMUL) continue;
        for (unsigned k = 0; k < 2; k++) {
            ir_id base, x = ir_in(g, mh, k);
            bool km;
            if (pass_wg_opnd(g, r, x, dt, k == 0, &base, &km)) continue;
            snprintf(what, cap, "%s %%%u (%s) of the product %%%u is no buffer a tensor map reads",
                     k ? "B" : "A", x, ir_op_name((ir_op)g->nodes[x].op), ix->rids[j]);
            return true;
        }
    }
    return false;
}

bool pass_wg_why_not(const ir_graph *g, const pass_index *ix, uint32_t r, const pass_gpu *gpu,
                     char *why, size_t cap) {
    const ir_region *rg = &g->regions[r];
    if (rg->kind != IR_RK_MATMUL || !gpu || gpu->wg_eff <= 0 || rg->anchor >= g->n) return false;
    const ir_node *mm = &g->nodes[rg->anchor];
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    char what[200];
    if (mm->op != IR_OP_MATMUL || mm->shape.rank < 2 || (dt != IR_BF16 && dt != IR_F16))
        snprintf(what, sizeof what, "the product %%%u is not a 16-bit tensor-core product",
                 rg->anchor);
    else if (!wg_opnd_refused(g, ix, r, dt, what, sizeof what))
        snprintf(
            what, sizeof what,
            "the products' operands, shapes or batch dims are not one wgmma kernel's (at "
            "most 4 products of one A and equal shapes; leading dims folded into M or batched)");
    size_t n = strlen(why);
    snprintf(why + n, cap - n, "%s[matmul.wgmma] not taken: %s; the mma.sync kernel runs",
             n ? "; " : "", what);
    return true;
}

void pass_wg_calibrate(pass_gpu *gpu, double tflops) {
    if (gpu->wg_eff <= 0 || tflops <= 0) return;
    pass_wg_shape s = {.M = 4096,
                       .N = 4096,
                       .K = 4096,
                       .a_kmajor = true,
                       .nmm = 1,
                       .nouts = 1,
                       .smem = gpu->smem_per_block,
                       .sms = gpu->sms};
    pass_wg_tile t;
    if (!pass_wg_pick(&s, gpu, -1, &t)) return;
    pass_wg_time m;
    pass_wg_model(&s, &t, gpu, -1, &m);
    double us = 2.0 * 4096.0 * 4096.0 * 4096.0 / (tflops * 1e6);
    double step = ((us - m.fill_us) / (double)m.rounds - m.epi_us - m.red_us) / (double)t.nk;
    double clk_per_us = gpu->peak_TFLOPs[IR_BF16] * 1e6 / (gpu->sms * WG_FLOP_CLK);
    double mma = (double)t.bm * t.bn * WG_BK * 2 / WG_FLOP_CLK;
    double eff = mma / (step * clk_per_us);
    if (step > 0 && eff > 0.2 && eff <= 1.0) gpu->wg_eff = eff;
}
