/* schedule.c - the schedule space of each kernel kind (docs/cost-model.md "Schedule space"):
 * per schedule, the parameter sets it offers a region, the plan fields it fixes and the block the
 * cost model charges for it; the planner's rule choice among them; and the ranking of a region's
 * space by the model. One table row per PASS_SCHEDULES entry (passes/passes.h). */
#include "passes/passes.h"
#include "passes/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { VEC_BYTES = 16, WARP_ROW_MAX = 512 };
enum { COL_THREADS = 128, SPLIT_THREADS = 512, SPLIT_MIN_PER = 8 };
/* [reduction.column_blocks]: the block's line, and the combine's unrolled rounds at most */
enum { BLOCKS_LINE = 128, BLOCKS_MAX_ROUNDS = 2 };
/* Registers of a column thread besides its loaded elements and accumulators (addressing, loop
 * bounds, the combine's indices), as CLUSTER_REGS for held rows: layernorm_bwd's merged column
 * kernel (2 bf16 inputs x 32 elements + 2 x 8 accumulators + 24 = 104) gets 102 from ptxas. */
enum { COL_REGS = 24, PTXAS_UNROLL = 4 };
/* [reduction.column_split.waves]: registers per reduction of an online column thread (Welford's
 * count, mean and M2, the compensated sums) beyond col_regs */
enum { COL_ONLINE_REGS = 8 };
enum { PW_THREADS = 256, PW_GROUPS = 2, PW_ISSUE_GROUPS = 8 };
/* [pointwise.row]: a row's set-up instructions (its index, head and group bounds, three loop
 * entries), and the fraction of the flat loop's instructions per element it must reach */
enum { PW_ROW_SETUP = 24 };
#define PW_ROW_GAIN 0.9
enum { PW_GRID_MAX = 1 << 20, RED_GRID_MAX = 1 << 20 };

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* ---- names ----------------------------------------------------------------------------- */

static const struct {
    const char *name;
    ir_region_kind kind;
    const char *params;
} sch_names[PASS_SCH_COUNT] = {
#define X(e, s, k, p) {s, k, p},
    PASS_SCHEDULES(X)
#undef X
};

const char *pass_schedule_name(unsigned id) {
    return id < PASS_SCH_COUNT ? sch_names[id].name : "?";
}

int pass_schedule_find(const char *name) {
    for (unsigned i = 0; i < PASS_SCH_COUNT; i++)
        if (!strcmp(sch_names[i].name, name)) return (int)i;
    return -1;
}

ir_region_kind pass_schedule_kind(unsigned id) {
    return id < PASS_SCH_COUNT ? sch_names[id].kind : IR_RK_COPY;
}

/* Parameter i of a comma-separated list into buf; false past the last. */
static bool param_at(const char *list, unsigned i, char *buf, size_t cap) {
    const char *s = list;
    for (unsigned k = 0; k < i && s; k++) {
        s = strchr(s, ',');
        if (s) s++;
    }
    if (!s || !*s) return false;
    size_t n = strcspn(s, ",");
    if (n >= cap) n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return true;
}

bool pass_schedule_param(unsigned id, unsigned i, char *buf, size_t cap) {
    return id < PASS_SCH_COUNT && i < IR_SCHED_PARAMS &&
           param_at(sch_names[id].params, i, buf, cap);
}

unsigned pass_schedule_nparams(unsigned id) {
    char b[32];
    unsigned n = 0;
    while (id < PASS_SCH_COUNT && n < IR_SCHED_PARAMS &&
           param_at(sch_names[id].params, n, b, sizeof b))
        n++;
    return n;
}

void pass_schedule_str(const ir_schedule *s, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%s", pass_schedule_name(s->id));
    unsigned np = pass_schedule_nparams(s->id);
    for (unsigned i = 0; i < np && n < cap; i++) {
        char nm[32];
        param_at(sch_names[s->id].params, i, nm, sizeof nm);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%d", i ? ", " : "(", nm, (int)s->p[i]);
    }
    if (np && n < cap) snprintf(buf + n, cap - n, ")");
}

bool pass_schedule_eq(const ir_schedule *a, const ir_schedule *b) {
    if (a->id != b->id) return false;
    for (unsigned i = 0; i < IR_SCHED_PARAMS; i++)
        if (a->p[i] != b->p[i]) return false;
    return true;
}

/* ---- the rows ------------------------------------------------------------------------------ */

/* One schedule: the parameter sets it offers region f (valid ones only, at most cap), the plan
 * fields it fixes in rg, and the block the model charges (grid, threads, bytes a thread has in
 * flight). */
typedef struct sch_def {
    unsigned (*space)(const pass_sched_facts *f, ir_schedule *out, unsigned cap);
    void (*plan)(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s);
    bool (*model)(const pass_sched_facts *f, const ir_region *rg, pass_model *m);
} sch_def;

static unsigned put(ir_schedule *out, unsigned n, unsigned cap, unsigned id, int32_t a, int32_t b) {
    if (n >= cap) return n;
    memset(&out[n], 0, sizeof out[n]);
    out[n].id = (uint16_t)id;
    out[n].p[0] = a, out[n].p[1] = b;
    return n + 1;
}

static unsigned none_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    (void)f, (void)out, (void)cap;
    return 0;
}
static void none_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    (void)f;
    rg->sched = *s;
}
static bool none_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    (void)f, (void)rg, (void)m;
    return false;
}

/* pointwise.vector(threads, groups): a grid-stride loop of 16-byte groups (of the widest dtype),
 * `groups` per thread in a full grid of at most 2^20 blocks (codegen/pointwise.c). */
static unsigned pw_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    static const int32_t th[] = {128, 256, 512}, gr[] = {1, 2, 4, 8, 16};
    unsigned n = 0;
    if (!f->concrete) return 0;
    for (size_t i = 0; i < sizeof th / sizeof th[0]; i++)
        for (size_t j = 0; j < sizeof gr / sizeof gr[0]; j++)
            n = put(out, n, cap, PASS_SCH_POINTWISE_VECTOR, th[i], gr[j]);
    return n;
}
/* [pointwise.vector] groups per thread: PW_GROUPS, or PW_ISSUE_GROUPS when the loop is
 * instruction-issue bound (its instructions per element at the GPU's issue rate take at least
 * the time of its bytes per element, the big inputs and one output of the widest dtype, at the
 * HBM bandwidth) and the grid keeps 8 waves of 8 blocks per SM: a thread's setup (indices,
 * parameters, bounds) is paid once per 8 groups instead of 2 (H200, chain8 f32 2^28: 526.3 us at
 * 2 groups, 521.0 at 8, 527.7 at 16). */
static int32_t pw_groups(const pass_sched_facts *f) {
    const pass_gpu *gp = f->gpu;
    if (!gp || f->n <= 0 || f->instr <= 0 || gp->sms <= 0 || gp->clock_GHz <= 0 ||
        gp->hbm_GBps <= 0)
        return PW_GROUPS;
    double issue = f->instr / (gp->sms * 128.0 * gp->clock_GHz);
    double mem = (double)(f->nbig + 1) * f->elem / gp->hbm_GBps;
    int64_t w = VEC_BYTES / (f->elem > 0 ? f->elem : 1);
    int64_t grid = cdiv(f->n, (int64_t)PW_THREADS * w * PW_ISSUE_GROUPS);
    return issue >= mem && grid >= 64LL * gp->sms ? PW_ISSUE_GROUPS : PW_GROUPS;
}

static void pw_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    (void)f;
    rg->threads = (uint32_t)s->p[0];
    rg->tile[0] = 4 * (int64_t)s->p[0]; /* the simulation's tile: 4 elements per thread */
    rg->sched = *s;
}
static bool pw_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (f->n < 0) return false;
    int64_t w = VEC_BYTES / (f->elem > 0 ? f->elem : 1);
    m->threads = (unsigned)rg->sched.p[0];
    m->grid = cdiv(f->n, (int64_t)m->threads * w * rg->sched.p[1]);
    if (m->grid > PW_GRID_MAX) m->grid = PW_GRID_MAX;
    if (m->grid < 1) m->grid = 1;
    m->thread_bytes = (double)VEC_BYTES * (f->nbig > 0 ? f->nbig : 1);
    return true;
}

/* pointwise.row(threads, lanes): `lanes` threads per row of the anchor's innermost extent,
 * threads / lanes rows per block, the rows grid-stride (codegen/pointwise.c cg_pw_rows): a row's
 * components are split once, its constants loaded and computed once, its elements from the first
 * aligned one stored as vectors with a scalar head and tail. Offered for known sizes of rank 2 or
 * more with rows of at least one vector. */
static unsigned pwr_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    static const int32_t th[] = {128, 256, 512}, ln[] = {8, 16, 32};
    unsigned n = 0;
    int64_t w = VEC_BYTES / (f->velem > 0 ? f->velem : 1);
    if (!f->concrete || f->rows < 2 || f->rext < w) return 0;
    for (size_t i = 0; i < sizeof th / sizeof th[0]; i++)
        for (size_t j = 0; j < sizeof ln / sizeof ln[0]; j++)
            n = put(out, n, cap, PASS_SCH_POINTWISE_ROW, th[i], ln[j]);
    return n;
}
static void pwr_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    (void)f;
    rg->threads = (uint32_t)s->p[0];
    rg->tile[0] = 4 * (int64_t)s->p[0];
    rg->sched = *s;
}
static bool pwr_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (f->rows <= 0) return false;
    m->threads = (unsigned)rg->sched.p[0];
    m->grid = cdiv(f->rows, rg->sched.p[0] / rg->sched.p[1]);
    if (m->grid > PW_GRID_MAX) m->grid = PW_GRID_MAX;
    if (m->grid < 1) m->grid = 1;
    m->thread_bytes = (double)VEC_BYTES * (f->nbig > 0 ? f->nbig : 1);
    m->pw = f->pw;
    m->pw_rows = f->rows, m->pw_rext = f->rext;
    m->pw_lanes = (unsigned)rg->sched.p[1];
    return true;
}

/* Lane instruction slots per row of pointwise.row with `lanes` lanes a row, over the row's
 * elements: whole lane groups of the vector body (each element's operations and loads but the
 * row's constants and the offset split), one pass of the head and one of the tail where the
 * extent is not a multiple of the vector (each element alone: every vector access a scalar one),
 * and per lane the row's set-up (PW_ROW_SETUP, the row's components, its constants once in each
 * of the three loops). */
static double pwr_instr(const pass_sched_facts *f, int64_t lanes) {
    const pass_pw_issue *p = &f->pw;
    int64_t w = VEC_BYTES / (f->velem > 0 ? f->velem : 1), c = f->rext;
    if (c <= 0 || lanes <= 0) return f->instr;
    double body = p->flat - p->div - p->rowconst;
    double scal = body + p->nvec * (2.0 - 2.0 / (double)w);
    double setup = PW_ROW_SETUP + p->div + 3 * p->rowconst;
    double slots = (double)(cdiv(c / w, lanes) * lanes * w) * body +
                   (c % w ? 2.0 * (double)lanes * scal : 0) + (double)lanes * setup;
    return slots / (double)c;
}

double pass_schedule_instr(const pass_sched_facts *f, const ir_schedule *s) {
    if (s->id == PASS_SCH_POINTWISE_ROW && f->kind == IR_RK_POINTWISE) return pwr_instr(f, s->p[1]);
    return f->instr;
}

/* [pointwise.row] the rule's lanes a row: the fewest of 8, 16, 32 that cover the row's vector
 * groups. Taken when the flat loop is instruction-issue bound (its instructions per element at
 * the GPU's issue rate take at least the time of its bytes per element, the big inputs and a
 * stored element of the widest dtype, at the HBM bandwidth), the row loop's instructions per
 * element (pwr_instr) are at most PW_ROW_GAIN of the flat loop's and the rows keep half the
 * GPU's threads busy (rows x lanes >= SMs x 1024). The A/B knob TX_PW_ROW: 0 never, 1 wherever
 * the space offers it. */
static bool pwr_rule(const pass_sched_facts *f, ir_schedule *s) {
    const char *k = getenv("TX_PW_ROW");
    bool force = k && !strcmp(k, "1");
    ir_schedule r = {.id = PASS_SCH_POINTWISE_ROW, .p = {PW_THREADS, 32}};
    int64_t w = VEC_BYTES / (f->velem > 0 ? f->velem : 1), g = f->rext > 0 ? f->rext / w : 0;
    if ((k && !strcmp(k, "0")) || !f->gpu || !pass_schedule_valid(f, &r)) return false;
    r.p[1] = g <= 8 ? 8 : g <= 16 ? 16 : 32;
    const pass_gpu *gp = f->gpu;
    double issue = f->instr / (gp->sms * 128.0 * gp->clock_GHz);
    double mem = ((double)f->nbig * f->elem + f->velem) / gp->hbm_GBps;
    if (!force && (issue < mem || (double)f->rows * r.p[1] < (double)gp->sms * 1024 ||
                   pwr_instr(f, r.p[1]) > PW_ROW_GAIN * f->instr))
        return false;
    r.source = s->source;
    *s = r;
    return true;
}

/* ---- row mode: one row over `lanes` threads, `rows` rows per block ----------------------- */

enum { SUBWARP_BLOCK = 256, WARP_ROWS = 8, ROW_THREADS = 256 };

/* The row's vector width, groups and whether it is held in registers when it fits (every
 * onchip row: codegen loads a thread's elements at once). */
typedef struct rowgeo {
    int64_t len, v, groups;
    bool onchip, many;
} rowgeo;

static rowgeo row_geo(const pass_sched_facts *f) {
    rowgeo r;
    r.len = f->rext;
    r.v = pass_row_vec(r.len, f->velem > 0 ? f->velem : f->elem);
    r.groups = r.len > 0 ? cdiv(r.len, r.v) : 0;
    r.onchip = f->strategy == IR_RED_ONCHIP && r.len > 0;
    r.many = f->rows > 1;
    return r;
}

static bool row_kind(const pass_sched_facts *f) { return f->kind == IR_RK_REDUCTION && !f->column; }

/* True when the row is streamed: nothing read after a reduction, or planned online/multipass. */
static bool row_streamed(const pass_sched_facts *f) {
    return f->strategy != IR_RED_ONCHIP || f->held == 0;
}

/* Share of the L2 that the rows resident at once may fill between a row's first read and its
 * re-read (the rest: the written outputs, other traffic). */
#define L2_FIT 0.75

/* Bytes a row moves through the L2 between its first read and its re-read: the row inputs read
 * and the domain-shaped values written (write-allocated in the L2). */
static double l2_row_bytes(const pass_sched_facts *f) {
    return (double)f->rext * ((double)f->elem * f->nbig + f->wbytes);
}

/* [reduction.cluster_l2] for facts f: a streamed row that a later pass re-reads (passes > 1),
 * more rows than 2 per SM, on a GPU with clusters and a known L2, when the rows resident at once
 * in 256-thread blocks (SMs x 8) would overflow L2_FIT of the L2 (l2_row_bytes each) before their
 * re-read: the fewest blocks per row C (a power of two, at most cluster_max) whose resident rows
 * (SMs x 8 / C) fit, so that the re-read comes from the L2; when none fits, cluster_max if its
 * resident rows' inputs alone fit (measured on the H200: softmax f32 [4096, 65536] 796 -> 725 us,
 * [3000, 50000] 411 us against 431 us of three HBM passes); when none does with 256 threads,
 * the same with blocks of 512 threads (half the resident rows; H200, softmax f32 [4096, 65536]:
 * 708 us at 512 x 4 against 692 at 256 x 8, 1024 threads 1194-1879 us); 0 when the rows fit
 * already or nothing applies. *threads: the block. */
static int64_t l2_cluster(const pass_sched_facts *f, int64_t *threads) {
    if (!row_streamed(f) || f->passes < 2 || !f->gpu || f->gpu->l2_bytes <= 0 ||
        f->gpu->cluster_max < 2 || f->rext < 4 * PASS_ROW_THREADS_MAX || f->rows <= 0 ||
        f->rows <= 2LL * f->gpu->sms)
        return 0;
    double rowb = l2_row_bytes(f), fit = L2_FIT * (double)f->gpu->l2_bytes;
    double reads = (double)f->rext * f->elem * f->nbig;
    if ((double)f->gpu->sms * (2048 / ROW_THREADS) * rowb <= fit) return 0;
    for (int64_t t = ROW_THREADS; t <= 2 * ROW_THREADS; t *= 2) {
        double resident = (double)f->gpu->sms * (double)(2048 / t);
        *threads = t;
        for (int64_t c = 2; c <= f->gpu->cluster_max; c *= 2)
            if (resident / (double)c * rowb <= fit) return c;
        if (resident / f->gpu->cluster_max * reads <= fit) return f->gpu->cluster_max;
    }
    return 0;
}

/* [reduction.row_split]: blocks of SPLIT_ROW_THREADS, SPLIT_ROW_WAVES waves of them at their
 * occupancy, at least SPLIT_ROW_MIN elements a thread, at most SPLIT_ROW_MAX chunks (grid y). */
enum { SPLIT_ROW_THREADS = 256, SPLIT_ROW_WAVES = 2, SPLIT_ROW_MIN = 16, SPLIT_ROW_MAX = 65535 };

/* True when facts f allow [reduction.row_split]: a concrete streamed row (nothing held) of one
 * stage whose outputs are of the reduced shape or side outputs of the domain's shape that depend
 * on no reduction (each block stores those of the elements it streams: no epilogue pass), at
 * least 4 x PASS_ROW_THREADS_MAX elements long, on at most 2 rows per SM (the rows alone do not
 * fill the GPU), with a block scratch, no cluster of the strategy's, on a known GPU. */
static bool rsplit_ok(const pass_sched_facts *f) {
    return row_kind(f) && f->concrete && f->stages == 1 && !f->dom_epi && row_streamed(f) &&
           f->scratch > 0 && f->cluster_blocks <= 1 && f->rext >= 4 * PASS_ROW_THREADS_MAX &&
           f->rows > 0 && f->gpu && f->gpu->sms > 0 && f->rows <= 2LL * f->gpu->sms;
}

/* Chunks per row of a split row (f: a concrete row on a known GPU) with blocks of `threads`
 * over `waves` waves of the SMs (2048 / threads blocks each): ceil(waves x SMs x blocks per SM /
 * rows), at most one chunk per SPLIT_ROW_MIN elements a thread and SPLIT_ROW_MAX; 0 when fewer
 * than 2. */
static int64_t split_chunks(const pass_sched_facts *f, int64_t threads, int64_t waves) {
    int64_t want = cdiv(waves * f->gpu->sms * (2048 / threads), f->rows);
    int64_t most = f->rext / (threads * SPLIT_ROW_MIN);
    if (want > most) want = most;
    if (want > SPLIT_ROW_MAX) want = SPLIT_ROW_MAX;
    return want >= 2 ? want : 0;
}

/* [reduction.row_split] chunks per row for facts f (split_chunks); 0 when the rule does not
 * apply (rsplit_ok). */
static int64_t rsplit_chunks(const pass_sched_facts *f, int64_t threads, int64_t waves) {
    if (!rsplit_ok(f) || threads <= 0) return 0;
    return split_chunks(f, threads, waves);
}

/* [reduction.row_split2]: blocks of SPLIT_ROW_THREADS over SPLIT2_WAVES waves (H200, a global
 * sum of 16777219 f32: 1 wave of 256-thread blocks 28.3 us, 2 waves 29.5), so that each block of
 * the normalisation kernel combines few partials. */
enum { SPLIT2_WAVES = 1 };

/* True when facts f allow [reduction.row_split2]: a concrete row planned online (streamed, its
 * epilogue re-reading the row) of two stages whose second-stage reductions are exp sums of a
 * first-stage max (softmax, log_softmax, logsumexp: online_exp; no Welford variance), or of one
 * stage whose domain-shaped outputs read its statistics (sum, mean, max, min of any pointwise
 * function: a global norm and the clipped gradient), at least 4 x PASS_ROW_THREADS_MAX elements
 * long, with a block scratch, no cluster of the strategy's, on a known GPU, on rows so few that the
 * unsplit schedules' blocks per row (a cluster of up to cluster_max, [reduction.cluster_stream];
 * row_few's 1024 threads) fill at most half a wave of 256-thread blocks: 2 x rows x
 * max(cluster_max, 8) <= SMs x 8 (H200: 66 rows; softmax f32 [128, 150001] stays
 * cluster_stream, measured). */
static bool rsplit2_ok(const pass_sched_facts *f) {
    return row_kind(f) && f->concrete &&
           ((f->stages == 2 && f->online_exp) || (f->stages == 1 && f->dom_writes)) &&
           f->strategy == IR_RED_ONLINE && f->scratch > 0 && f->cluster_blocks <= 1 &&
           f->rext >= 4 * PASS_ROW_THREADS_MAX && f->rows > 0 && f->gpu && f->gpu->sms > 0 &&
           2 * f->rows * (f->gpu->cluster_max > 8 ? f->gpu->cluster_max : 8) <=
               f->gpu->sms * (2048 / SPLIT_ROW_THREADS);
}

/* [reduction.row_split2] chunks per row (split_chunks); 0 when the rule does not apply. */
static int64_t rsplit2_chunks(const pass_sched_facts *f, int64_t threads, int64_t waves) {
    if (!rsplit2_ok(f) || threads <= 0) return 0;
    return split_chunks(f, threads, waves);
}

/* The row-mode rule (docs/cost-model.md "Schedules"), first that applies:
 * no block scratch in the budget: [reduction.row] of one warp;
 * [reduction.subwarp_rows] an onchip row of at most 16 vector groups over more than one row:
 *   lanes = the groups rounded up to a power of two (< 32), 256 / lanes rows per block;
 * [reduction.warp_rows] an onchip row of at most PASS_ROW_HOLD_WARP elements per lane of one
 *   warp (or a streamed row of at most WARP_ROW_MAX), more than one row: 8 rows per block;
 * [reduction.row] / [reduction.row_wide] an onchip row that threads hold at PASS_ROW_HOLD
 *   each: the fewest groups per thread that 256 threads allow, the threads rounded up to a warp
 *   (row_wide beyond 256, up to PASS_ROW_THREADS_MAX);
 * [reduction.row_split] a streamed row of one stage with outputs of the reduced shape (and side
 *   outputs of the domain's shape that read no reduction), at most 2 rows per SM: each row in
 *   rsplit_chunks chunks of one 256-thread block (2 waves of the SMs), each block storing the side
 *   outputs of its chunk, every block's partials combined by the row's last block to finish (an
 *   atomic ticket);
 * [reduction.row_split2] two stages planned online as a running max and rescaled exp sum
 *   (softmax, log_softmax, logsumexp), or one stage whose domain-shaped outputs read its
 *   statistics (a global norm and the clipped gradient), 2 rows x max(cluster_max, 8) <= SMs x 8:
 *   each row in rsplit2_chunks chunks of one 256-thread block (1 wave); a statistics kernel stores
 *   every chunk's partials, a second kernel of the same grid combines a row's partials in every
 *   block and writes its chunk; [reduction.cluster_stream] a streamed row (no held values, or
 * planned online/multipass) of at least 4096 elements when the rows fill at most 2 blocks per SM,
 * on a GPU with clusters: the row split over C = min(cluster_max, floor(8 SMs / rows)) blocks of
 * 256 threads (a cluster: the grid fills one wave, no tail wave of a few long blocks), each
 * streaming its slice, the partial statistics meeting through distributed shared memory;
 * [reduction.row_few] the same rows without clusters: 1024 threads per row; [reduction.cluster_l2]
 * a streamed row re-read by a later pass, many rows: cluster_stream with the blocks per row of
 * l2_cluster, so that the resident rows fit in the L2 (one HBM read); [reduction.row] otherwise:
 * the smallest power of two in [32, 256] with at least 4 elements each (256 when the length is
 * symbolic). */
static void row_rule(const pass_sched_facts *f, ir_schedule *s) {
    rowgeo g = row_geo(f);
    s->id = PASS_SCH_REDUCTION_ROW;
    if (f->scratch == 0) {
        s->p[0] = 32;
        return;
    }
    if (g.onchip && g.many && g.groups <= 16) {
        int64_t l = 1;
        while (l < g.groups) l *= 2;
        if (l < 32) {
            s->id = PASS_SCH_REDUCTION_SUBWARP_ROWS, s->p[0] = (int32_t)l;
            return;
        }
    }
    if (g.many && g.len > 0 &&
        (g.onchip ? pass_row_hold(g.len, g.v, 32) <= PASS_ROW_HOLD_WARP : g.len <= WARP_ROW_MAX)) {
        s->id = PASS_SCH_REDUCTION_WARP_ROWS, s->p[0] = WARP_ROWS;
        return;
    }
    if (f->cluster_blocks > 1) { /* [reduction.cluster_rows]: the strategy's cluster */
        s->id = PASS_SCH_REDUCTION_CLUSTER_ROWS;
        s->p[0] = (int32_t)f->cluster_threads, s->p[1] = (int32_t)f->cluster_blocks;
        return;
    }
    if (g.onchip) {
        int64_t gpt = cdiv(g.groups, ROW_THREADS);
        if (gpt * g.v > PASS_ROW_HOLD) gpt = PASS_ROW_HOLD / g.v;
        int64_t t = cdiv(cdiv(g.groups, gpt), 32) * 32;
        if (t <= PASS_ROW_THREADS_MAX && pass_row_hold(g.len, g.v, t) <= PASS_ROW_HOLD) {
            s->id = t > ROW_THREADS ? PASS_SCH_REDUCTION_ROW_WIDE : PASS_SCH_REDUCTION_ROW;
            s->p[0] = (int32_t)t;
            return;
        }
    }
    int64_t t = 32;
    while (t < ROW_THREADS && g.len > 0 && t * 4 < g.len) t *= 2;
    int64_t sp = rsplit_chunks(f, SPLIT_ROW_THREADS, SPLIT_ROW_WAVES);
    if (sp >= 2) { /* [reduction.row_split] */
        s->id = PASS_SCH_REDUCTION_ROW_SPLIT;
        s->p[0] = SPLIT_ROW_THREADS, s->p[1] = (int32_t)sp;
        return;
    }
    sp = rsplit2_chunks(f, SPLIT_ROW_THREADS, SPLIT2_WAVES);
    if (sp >= 2) { /* [reduction.row_split2] */
        s->id = PASS_SCH_REDUCTION_ROW_SPLIT2;
        s->p[0] = SPLIT_ROW_THREADS, s->p[1] = (int32_t)sp;
        return;
    }
    if (row_streamed(f) && g.len >= 4 * PASS_ROW_THREADS_MAX && f->rows > 0 && f->gpu &&
        f->gpu->sms > 0 && f->rows <= 2LL * f->gpu->sms) {
        int64_t c = 8LL * f->gpu->sms / f->rows; /* one wave of 8 blocks per SM */
        if (c > f->gpu->cluster_max) c = f->gpu->cluster_max;
        if (c >= 2) { /* [reduction.cluster_stream] */
            s->id = PASS_SCH_REDUCTION_CLUSTER_STREAM;
            s->p[0] = ROW_THREADS, s->p[1] = (int32_t)c;
            return;
        }
        s->id = PASS_SCH_REDUCTION_ROW_FEW,
        s->p[0] = PASS_ROW_THREADS_MAX; /* [reduction.row_few] */
        return;
    }
    int64_t t2 = ROW_THREADS, c2 = l2_cluster(f, &t2);
    if (c2 >= 2) { /* [reduction.cluster_l2] */
        s->id = PASS_SCH_REDUCTION_CLUSTER_STREAM;
        s->p[0] = (int32_t)t2, s->p[1] = (int32_t)c2;
        return;
    }
    s->p[0] = (int32_t)(g.len > 0 ? t : ROW_THREADS);
}

/* reduction.row_few(threads): a streamed row (nothing held: no value read after a reduction, or
 * planned online/multipass) of at least 4096 elements over 512 or 1024 threads. */
static unsigned few_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    if (!row_kind(f) || !f->concrete || !row_streamed(f) || f->rext < 4 * PASS_ROW_THREADS_MAX ||
        f->scratch == 0 || f->cluster_blocks > 1)
        return 0;
    for (int32_t t = 512; t <= PASS_ROW_THREADS_MAX; t *= 2)
        n = put(out, n, cap, PASS_SCH_REDUCTION_ROW_FEW, t, 0);
    return n;
}

/* Clusters of `blocks` blocks of `threads` threads holding a row of facts f in registers (hold
 * elements a thread, prefetching the next row's as many) that the GPU runs at once: blocks per
 * SM by threads and by the registers (2 x hold per row input plus CLUSTER_REGS of addressing and
 * statistics, rounded up to 8) over the cluster. */
#define CLUSTER_REGS 24
static int64_t cluster_resident(const pass_sched_facts *f, int64_t threads, int64_t blocks) {
    int64_t v = pass_row_vec(f->rext, f->velem > 0 ? f->velem : f->elem);
    int64_t hold = pass_row_hold(f->rext, v, threads * blocks);
    int64_t regs = (2 * hold * f->nbig + CLUSTER_REGS + 7) / 8 * 8;
    int64_t bps = 2048 / threads, byregs = 65536 / (threads * regs);
    if (byregs < bps) bps = byregs;
    return f->gpu && f->gpu->sms > 0 ? f->gpu->sms * bps / blocks : 0;
}

/* Adds reduction.cluster_rows(threads, blocks, grid) to out unless it is there. */
static unsigned put_cluster(ir_schedule *out, unsigned n, unsigned cap, int32_t t, int32_t c,
                            int32_t grid) {
    for (unsigned i = 0; i < n; i++)
        if (out[i].p[0] == t && out[i].p[1] == c && out[i].p[2] == grid) return n;
    unsigned m = put(out, n, cap, PASS_SCH_REDUCTION_CLUSTER_ROWS, t, c);
    if (m > n) out[n].p[2] = grid;
    return m;
}

/* reduction.cluster_rows(threads, blocks, grid): a row held in registers across a thread-block
 * cluster of `blocks` blocks (sm_90), partials through distributed shared memory: the
 * strategy's own cluster (its shared memory is planned for it), or the cluster that could hold
 * an online row instead (one HBM read). grid 0: a cluster per row; grid G > 0 (more rows than
 * G): G persistent clusters, each looping over the rows G apart and loading the next row while
 * it finishes this one; G from the clusters resident at once (cluster_resident) and fewer
 * (3/4, 7/8 and one less of them: a GPC whose SMs the cluster does not divide leaves some idle),
 * at the cluster's threads and twice them (half the elements a thread). */
static unsigned cluster_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    if (!row_kind(f) || !f->concrete) return 0;
    int64_t t, c;
    if (f->cluster_blocks >= 2)
        t = f->cluster_threads, c = f->cluster_blocks;
    else if (f->hold_blocks >= 2) /* an online row the cluster could hold instead */
        t = f->hold_threads, c = f->hold_blocks;
    else
        return 0;
    unsigned n = put_cluster(out, 0, cap, (int32_t)t, (int32_t)c, 0);
    for (int64_t tt = t; tt <= PASS_ROW_THREADS_MAX; tt *= 2) {
        int64_t g = cluster_resident(f, tt, c);
        int64_t gs[4] = {g, g - 1, g * 7 / 8, g * 3 / 4};
        for (unsigned i = 0; i < 4; i++)
            if (gs[i] >= 1 && f->rows > gs[i])
                n = put_cluster(out, n, cap, (int32_t)tt, (int32_t)c, (int32_t)gs[i]);
    }
    return n;
}
static void cluster_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->threads = (uint32_t)s->p[0];
    rg->tile[1] = s->p[0], rg->tile[2] = s->p[1];
    rg->rows = 1;
    rg->sram_bytes = f->sram_base;
    if (s->id == PASS_SCH_REDUCTION_CLUSTER_ROWS && f->cluster_blocks < 2 && f->hold_blocks >= 2) {
        /* the streamed row held on chip across the cluster after all: one HBM read */
        rg->strategy = IR_RED_ONCHIP;
        rg->passes = 1;
        rg->spilled_bytes = 0;
        rg->tile[0] = f->rext;
        rg->sram_bytes = f->hold_sram;
    }
    rg->sched = *s;
}

/* Adds the rule's choice for f to out when it has id and is not there yet. */
static unsigned put_rule(const pass_sched_facts *f, unsigned id, ir_schedule *out, unsigned n,
                         unsigned cap) {
    ir_schedule r;
    memset(&r, 0, sizeof r);
    row_rule(f, &r);
    if (r.id != id) return n;
    for (unsigned i = 0; i < n; i++)
        if (pass_schedule_eq(&out[i], &r)) return n;
    return put(out, n, cap, id, r.p[0], r.p[1]);
}

/* reduction.cluster_stream(threads, blocks): a streamed row split over a thread-block cluster of
 * `blocks` blocks (sm_90), each streaming its slice: the rule's cluster, and where the rule
 * streams a cluster, 256, 512 or 1024 threads x 2 ... cluster_max blocks (fewer resident blocks
 * per SM hold fewer rows between a row's first read and its re-read). */
static unsigned stream_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    if (!row_kind(f) || !f->concrete || f->scratch == 0) return 0;
    unsigned n = put_rule(f, PASS_SCH_REDUCTION_CLUSTER_STREAM, out, 0, cap);
    if (!n || !f->gpu) return n;
    for (int32_t t = ROW_THREADS; t <= PASS_ROW_THREADS_MAX; t *= 2)
        for (int32_t c = 2; c <= f->gpu->cluster_max; c *= 2) {
            bool dup = false;
            for (unsigned i = 0; i < n; i++) dup |= out[i].p[0] == t && out[i].p[1] == c;
            if (!dup) n = put(out, n, cap, PASS_SCH_REDUCTION_CLUSTER_STREAM, t, c);
        }
    return n;
}

/* reduction.row(threads): one block of `threads` lanes per row (threads <= 256, a multiple of
 * 32; more than one warp needs the block scratch). */
static unsigned row_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    if (!row_kind(f) || !f->concrete || f->cluster_blocks > 1) return 0;
    for (int32_t t = 32; t <= ROW_THREADS; t *= 2)
        if (t == 32 || f->scratch > 0) n = put(out, n, cap, PASS_SCH_REDUCTION_ROW, t, 0);
    return put_rule(f, PASS_SCH_REDUCTION_ROW, out, n, cap);
}
static void row_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->threads = (uint32_t)s->p[0];
    rg->tile[1] = s->p[0], rg->tile[2] = 0;
    rg->rows = 1;
    rg->sram_bytes = f->sram_base;
    rg->sched = *s;
}

/* reduction.row_wide(threads): an onchip row held in registers (PASS_ROW_HOLD elements per
 * thread at most) over 288 ... PASS_ROW_THREADS_MAX threads. */
static unsigned wide_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    rowgeo g = row_geo(f);
    if (!row_kind(f) || !f->concrete || !g.onchip || f->scratch == 0 || f->cluster_blocks > 1)
        return 0;
    for (int32_t t = 512; t <= PASS_ROW_THREADS_MAX; t *= 2)
        if (pass_row_hold(g.len, g.v, t) <= PASS_ROW_HOLD)
            n = put(out, n, cap, PASS_SCH_REDUCTION_ROW_WIDE, t, 0);
    return put_rule(f, PASS_SCH_REDUCTION_ROW_WIDE, out, n, cap);
}

/* reduction.warp_rows(rows): one warp per row, `rows` rows per block: an onchip row of at most
 * PASS_ROW_HOLD_WARP elements per lane, or a streamed one of at most WARP_ROW_MAX. */
static unsigned warp_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    rowgeo g = row_geo(f);
    if (!row_kind(f) || !f->concrete || !g.many || f->scratch == 0 ||
        !(g.onchip ? pass_row_hold(g.len, g.v, 32) <= PASS_ROW_HOLD_WARP : g.len <= WARP_ROW_MAX))
        return 0;
    for (int32_t r = 2; r <= PASS_ROW_THREADS_MAX / 32; r *= 2)
        n = put(out, n, cap, PASS_SCH_REDUCTION_WARP_ROWS, r, 0);
    return n;
}
static void warp_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->rows = s->p[0];
    rg->threads = (uint32_t)(32 * s->p[0]);
    rg->tile[1] = 32, rg->tile[2] = 0;
    rg->sram_bytes = f->sram_base;
    rg->sched = *s;
}

/* reduction.subwarp_rows(lanes): an onchip row of at most 16 vector groups, one group per lane,
 * `lanes` (a power of two below 32) per row, 256 / lanes rows per 256-thread block. */
static unsigned subwarp_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    rowgeo g = row_geo(f);
    if (!row_kind(f) || !f->concrete || !g.onchip || !g.many || g.groups > 16 || f->scratch == 0)
        return 0;
    for (int32_t l = 1; l < 32; l *= 2)
        if (l >= g.groups) n = put(out, n, cap, PASS_SCH_REDUCTION_SUBWARP_ROWS, l, 0);
    return n;
}
static void subwarp_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->threads = SUBWARP_BLOCK;
    rg->tile[1] = s->p[0], rg->tile[2] = 0;
    rg->rows = SUBWARP_BLOCK / s->p[0];
    rg->sram_bytes = f->sram_base;
    rg->sched = *s;
}

/* The model of every row-mode schedule, from the plan fields it fixed: lanes per row, rows per
 * block, what a thread holds in registers (all its loads at once), else one element (staged) or
 * 16 B (streamed) in flight. */
static bool rows_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    int64_t len = f->rext;
    if (len <= 0 || f->rows < 0) return false;
    int64_t lanes = rg->tile[1] > 0 ? rg->tile[1] : 256, rpb = rg->rows > 1 ? rg->rows : 1;
    int64_t cl = rg->tile[2] > 1 ? rg->tile[2] : 1; /* blocks per row (a cluster) */
    int64_t v = f->strided ? 1 : pass_row_vec(len, f->velem > 0 ? f->velem : f->elem);
    int64_t hold = pass_row_hold(len, v, lanes * cl);
    bool held = (f->strategy == IR_RED_ONCHIP || rg->strategy == IR_RED_ONCHIP) &&
                hold <= (lanes <= 32 ? PASS_ROW_HOLD_WARP : PASS_ROW_HOLD);
    m->threads = rg->threads ? rg->threads : (unsigned)lanes;
    m->grid = cdiv(f->rows, rpb) * cl;
    if (rg->sched.id == PASS_SCH_REDUCTION_CLUSTER_ROWS && held && cl > 1) {
        /* the rows a cluster runs in sequence: rows over the clusters at once (the persistent
         * grid, or what the GPU holds of a cluster per row); a row's barriers: one exchange per
         * reduction and, with a cluster per row, the closing one */
        int64_t g = rg->sched.p[2] > 0 && rg->sched.p[2] < f->rows ? rg->sched.p[2] : f->rows;
        int64_t at = cluster_resident(f, lanes, cl);
        if (rg->sched.p[2] > 0 && rg->sched.p[2] < f->rows) m->grid = g * cl;
        if (at > 0 && at < g) g = at;
        m->xrows = cdiv(f->rows, g > 0 ? g : 1);
        m->xsyncs = (unsigned)f->nred + (rg->sched.p[2] > 0 ? 0 : 1);
        m->xpersist = rg->sched.p[2] > 0;
    }
    if (held) /* held in registers: all loads issued at once */
        m->thread_bytes = (double)hold * f->elem * f->nbig;
    else if (f->strategy == IR_RED_ONCHIP && rg->sram_bytes / 4 >= len) /* staged: scalar */
        m->thread_bytes = (double)f->elem * f->nbig;
    else /* streamed: groups of 16 B (a length the vector does not divide: from each row's first
          * aligned element, codegen's peel, one row per block), else (and strided rows) one
          * element */
        m->thread_bytes = (double)(!f->strided && (len % (VEC_BYTES / f->elem) == 0 ||
                                                   (len >= 2 * (VEC_BYTES / f->elem) && rpb <= 1))
                                       ? VEC_BYTES
                                       : f->elem) *
                          f->nbig;
    /* An online stream of scalar loads (a running statistic per element, its rescale behind a
     * branch) is not pipelined across iterations: one load in flight at the DRAM's latency. */
    m->unpipelined = !held && f->strategy == IR_RED_ONLINE && m->thread_bytes < VEC_BYTES * f->nbig;
    /* ... and it sustains about the bytes per second of a 32-bit stream whatever the dtype (H200:
     * softmax bf16 [1000, 30011] 1.95 TB/s, f32 [128, 150001] 2.17 TB/s): a 16-bit element
     * counts 4 bytes in flight. */
    if (m->unpipelined && f->elem < 4) m->thread_bytes = 4.0 * f->nbig;
    if (m->grid > RED_GRID_MAX) m->grid = RED_GRID_MAX;
    return true;
}

/* The split schedules `id` of `threads` = 256, 512, 1024 over 1 .. max_waves waves (doubling):
 * chunks(f, threads, waves) chunks per row, candidates of fewer than 2 chunks or repeated
 * (threads, chunks) left out. */
static unsigned chunk_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap, unsigned id,
                            int64_t max_waves,
                            int64_t (*chunks)(const pass_sched_facts *, int64_t, int64_t)) {
    unsigned n = 0;
    for (int32_t t = SPLIT_ROW_THREADS; t <= PASS_ROW_THREADS_MAX; t *= 2)
        for (int64_t w = 1; w <= max_waves; w *= 2) {
            int64_t c = chunks(f, t, w);
            bool dup = c < 2;
            for (unsigned i = 0; i < n && !dup; i++) dup = out[i].p[0] == t && out[i].p[1] == c;
            if (!dup) n = put(out, n, cap, id, t, (int32_t)c);
        }
    return n;
}

/* reduction.row_split(threads, splits): each row in `splits` chunks, one block of `threads` each
 * (codegen/reduction.c cg_red_split_row); 256, 512 or 1024 threads over 1, 2 or 4 waves. */
static unsigned rsplit_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    return chunk_space(f, out, cap, PASS_SCH_REDUCTION_ROW_SPLIT, 4, rsplit_chunks);
}
static void rsplit_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    row_plan(rg, f, s);
    rg->splits = (uint32_t)s->p[1];
}
/* The streamed row's block (rows_model), rows x splits blocks, and the last block's combine. */
static bool rsplit_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (!rows_model(f, rg, m)) return false;
    m->grid = f->rows * rg->sched.p[1];
    if (m->grid > RED_GRID_MAX) m->grid = RED_GRID_MAX;
    m->ticket = true;
    return true;
}

/* reduction.row_split2(threads, splits): each row in `splits` chunks of one block of `threads`,
 * two kernels (codegen/reduction.c cg_red_stats_row, cg_red_norm_row); 256, 512 or 1024 threads
 * over 1 or 2 waves. */
static unsigned rsplit2_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    return chunk_space(f, out, cap, PASS_SCH_REDUCTION_ROW_SPLIT2, 2, rsplit2_chunks);
}
/* The streamed row's block (rows_model) over rows x splits blocks for the row's passes (the
 * statistics pass, the normalisation pass), and a second kernel: its launch and the partials'
 * combine (kernels = 2). */
static bool rsplit2_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (!rows_model(f, rg, m)) return false;
    m->grid = f->rows * rg->sched.p[1];
    if (m->grid > RED_GRID_MAX) m->grid = RED_GRID_MAX;
    m->kernels = 2;
    return true;
}

/* Registers a column thread takes (the model's residency): its loaded elements (u unrolled
 * groups of v kept elements per row input), its v accumulators per reduction and COL_REGS,
 * rounded up to ptxas's allocation unit of 8. */
static int col_regs(const pass_sched_facts *f, int64_t u, int64_t v) {
    int64_t r = u * v * (f->nbig > 0 ? f->nbig : 1) + v * (f->nred > 0 ? f->nred : 1) + COL_REGS;
    r = (r + 7) / 8 * 8;
    return r > 255 ? 255 : (int)r;
}

/* True when the column model (pass_model_column: a nonzero m->regs) prices the region's column
 * schedules: one stage, no value of the domain's shape written (the column sums it was fitted
 * to); other columns (softmax over a column, a variance that stores the normalised values) keep
 * the streamed-row latency of the general model. */
static bool col_priced(const pass_sched_facts *f) { return f->stages == 1 && !f->dom_writes; }

/* True for the columns whose residency the wave rule and the general model count registers of
 * (split_regs): several stages (an online variance's chunk statistics), no value of the domain's
 * shape written. A middle-axis softmax (which stores its normalised values) is not counted: its
 * 40 registers (ptxas, [64, 1024, 768]) are fewer than split_regs' estimate. */
static bool waves_priced(const pass_sched_facts *f) { return f->stages > 1 && !f->dom_writes; }

/* The groups of a column thread's loads in flight: codegen's u unrolled groups, or where the
 * reduced length left fewer than PTXAS_UNROLL (a prime length: one), the PTXAS_UNROLL that
 * ptxas unrolls such a short loop body by (its loads hoisted ahead of the adds), within the
 * 32-byte group of the widest row input. */
static int64_t col_fly_groups(const pass_sched_facts *f, int64_t u, int64_t v) {
    int64_t top = 32 / f->elem > 16 ? 16 : 32 / f->elem;
    if (top > 32 / v) top = 32 / v;
    return u >= PTXAS_UNROLL || top <= u ? u : (top < PTXAS_UNROLL ? top : PTXAS_UNROLL);
}

/* reduction.column(cols): one thread per kept element along the contiguous axis, a serial loop
 * over the reduced axis. */
static unsigned col_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    if (f->kind != IR_RK_REDUCTION || !f->column || !f->concrete) return 0;
    for (int32_t c = 32; c <= 256; c *= 2) n = put(out, n, cap, PASS_SCH_REDUCTION_COLUMN, c, 0);
    return n;
}
static void col_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->tile[1] = s->p[0], rg->tile[2] = 1;
    rg->threads = (uint32_t)s->p[0];
    rg->splits = 0;
    rg->rows = f->rpb;
    rg->sram_bytes = f->sram_base;
    rg->sched = *s;
}
static bool col_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (f->rows <= 1 && f->rows >= 0) return false;
    m->threads = (unsigned)rg->sched.p[0];
    m->grid = cdiv(f->rows, rg->sched.p[0]);
    /* codegen's unrolled groups along the reduced axis: 32 bytes of the widest row input (at
     * most 16 elements), halved until they divide the length; a held column (onchip, at most
     * PASS_ROW_HOLD elements) loads all of it at once */
    int64_t v = 32 / f->elem > 16 ? 16 : 32 / f->elem;
    while (v > 1 && f->rext % v) v /= 2;
    bool held = f->strategy == IR_RED_ONCHIP && f->rext <= PASS_ROW_HOLD;
    if (held) v = f->rext;
    if (v < 1) v = 1;
    m->thread_bytes = (double)(held ? v : col_fly_groups(f, v, 1)) * f->elem * f->nbig;
    m->regs = col_priced(f) ? col_regs(f, v, 1) : 0;
    return true;
}

/* Kept elements per thread of a column split (`vec`): 16 bytes of the widest row input, halved
 * until it divides the innermost (contiguous) kept extent, when that extent fills a warp of such
 * vectors (512 bytes), or is narrower than one 128-byte line (a row of the reduced axis is then
 * whole sectors read by kin / vec threads: rows of 16 f32 in 4 vectors instead of 16 scalars),
 * and the region writes nothing of its domain's shape; else 1 (one column per thread). The
 * thread's columns are consecutive in memory: one vector load per reduced element. */
static int64_t col_vec(const pass_sched_facts *f) {
    int64_t b = f->kin * f->elem;
    if (f->dom_writes || f->kin <= 0 || f->stages != 1 || (b < 32 * VEC_BYTES && b >= 128))
        return 1;
    int64_t v = VEC_BYTES / f->elem;
    while (v > 1 && f->kin % v) v /= 2;
    return v;
}

/* The narrowest column block (threads along the kept axis) for vec v: one 32-byte sector of the
 * widest row input and at least 8 threads for scalar columns; one 128-byte line per slice for
 * vectors, or the power of two of threads that the innermost kept extent gives (a narrow row:
 * col_vec). */
static int64_t col_min(const pass_sched_facts *f, int64_t v) {
    if (v <= 1) return 32 / f->elem < 8 ? 8 : 32 / f->elem;
    int64_t c = 128 / (v * f->elem);
    if (f->kin > 0 && f->kin * f->elem < 128) {
        int64_t k = 1;
        while (2 * k * v <= f->kin) k *= 2;
        if (k < c) c = k;
        return c;
    }
    return c < 2 ? 2 : c;
}

/* Shared words per thread of a column split with vec v: its partial, or its v partials and one
 * word of the two-level combine (codegen/reduction.c cg_red_colv_row). */
static int64_t col_words(int64_t v) { return v > 1 ? v + 1 : 1; }
static int split_regs(const pass_sched_facts *f, int64_t r, int64_t v);

/* The unrolled groups of a column slice (codegen/reduction.c): 32 bytes of the widest row input
 * (at most 16 elements, and at most CG_VEC_MAXLIN = 32 loaded elements with the thread's v
 * columns), halved until it divides the reduced length and every one of the r slices gets a
 * group; 1 for r = 1. */
static int64_t split_unroll(const pass_sched_facts *f, int64_t r, int64_t v) {
    int64_t u = 1, top = 32 / f->elem > 16 ? 16 : 32 / f->elem;
    if (top > 32 / v) top = 32 / v;
    if (r > 1)
        for (u = top; u > 1 && (f->rext % u || f->rext / u < r); u /= 2) {}
    return u;
}

/* The stages a column split takes: one, or several of a streamed column (not held on chip:
 * codegen holds only unsplit columns in registers): each slice runs the levels' loops (or the
 * online pass of softmax's max and sum, Welford's variance) over its part of the reduced axis,
 * every level's partials meet in shared memory, then each slice stores its part of the
 * domain-shaped outputs ([reduction.column_split] of a middle-axis softmax). */
static bool split_stages_ok(const pass_sched_facts *f) {
    return f->stages == 1 || (f->stages > 1 && f->strategy != IR_RED_ONCHIP);
}

/* reduction.column_split(cols, slices, vec): cols threads along the kept axis, each with vec
 * consecutive kept elements, x slices of the reduced axis; each slice strides in unrolled groups
 * of 8 (4, 2); the partials meet in shared memory (4 C R col_words(vec) B). One stage, concrete
 * sizes, cols a power of two not below col_min, at least SPLIT_MIN_PER elements per slice, at most
 * SPLIT_THREADS threads; vec 1 or col_vec, and at least vec slices. */
static unsigned split_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    if (f->kind != IR_RK_REDUCTION || !f->column || !f->concrete || !split_stages_ok(f)) return 0;
    int64_t vs[2] = {1, col_vec(f)};
    for (unsigned i = 0; i < (vs[1] > 1 ? 2u : 1u); i++)
        for (int32_t c = COL_THREADS; c >= col_min(f, vs[i]); c /= 2)
            for (int32_t r = 2; c * r <= SPLIT_THREADS; r *= 2)
                if (f->rext >= (int64_t)SPLIT_MIN_PER * r && r >= vs[i] &&
                    4LL * c * r * col_words(vs[i]) <= f->budget && n < cap) {
                    n = put(out, n, cap, PASS_SCH_REDUCTION_COLUMN_SPLIT, c, r);
                    out[n - 1].p[2] = (int32_t)vs[i];
                }
    return n;
}
static void split_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->tile[1] = s->p[0], rg->tile[2] = s->p[1];
    rg->threads = (uint32_t)(s->p[0] * s->p[1]);
    rg->splits = 0;
    rg->rows = f->rpb;
    int64_t v = s->id == PASS_SCH_REDUCTION_COLUMN_BLOCKS ? s->p[3] : s->p[2];
    int64_t words = 4LL * s->p[0] * s->p[1] * col_words(v);
    rg->sram_bytes = f->sram_base > words ? f->sram_base : words;
    rg->sched = *s;
}
static bool split_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (f->rows <= 1 && f->rows >= 0) return false;
    int64_t c = rg->sched.p[0], r = rg->sched.p[1];
    int64_t v = rg->sched.id == PASS_SCH_REDUCTION_COLUMN_BLOCKS ? rg->sched.p[3] : rg->sched.p[2];
    if (v < 1) v = 1;
    m->threads = (unsigned)(c * r);
    m->grid = cdiv(f->rows, c * v);
    m->thread_bytes = (double)col_fly_groups(f, split_unroll(f, r, v), v) * v * f->elem * f->nbig;
    m->regs = col_priced(f) ? col_regs(f, split_unroll(f, r, v), v) : 0;
    m->res_regs = waves_priced(f) ? split_regs(f, r, v) : 0;
    return true;
}

/* [reduction.column_blocks] for facts f (docs/cost-model.md "Schedules"): a one-stage column
 * reduction that writes no value of its domain's shape, whose kept elements are too few for the
 * column split to give every SM 2 blocks: blocks of C threads along the kept axis
 * with vec = col_vec kept elements each (C = one warp's 512 bytes of vectors, or for scalar
 * columns one 128-byte line of the widest row input; at most 128, narrowed to the kept count, not
 * below col_min) by R = 512 / C slices, and the reduced axis cut into `splits` chunks, one grid
 * row each: as many as one wave of resident blocks holds (pass_model_resident: threads, shared
 * memory and the col_regs estimate, e.g. 2 blocks per SM at 64 registers) over the tiles, rounded
 * down so that no block waits for a second wave; each chunk leaves every slice at least 2 groups
 * of SPLIT_MIN_PER elements, and the combine (each tile's last block) at most BLOCKS_MAX_ROUNDS
 * unrolled groups of 8 partials per slice. False when it does not apply (fewer than 2 chunks). */
static bool blocks_rule(const pass_sched_facts *f, ir_schedule *s) {
    int sms = f->gpu ? f->gpu->sms : 0;
    if (f->kind != IR_RK_REDUCTION || !f->column || f->stages != 1 || f->rext <= 0 ||
        f->rows <= 0 || sms <= 0 || f->dom_writes)
        return false;
    int64_t v = col_vec(f), cmin = col_min(f, v), c = COL_THREADS;
    while (c > cmin && cdiv(f->rows, c * v) < 2LL * sms) c /= 2;
    if (cdiv(f->rows, c * v) >= 2LL * sms) return false;
    c = v > 1 ? 32 : BLOCKS_LINE / f->elem; /* a warp's 512 bytes, or one 128-byte line */
    if (c > COL_THREADS) c = COL_THREADS;
    while (c > cmin && (c / 2) * v >= f->rows) c /= 2;
    int64_t rs = SPLIT_THREADS / c, tiles = cdiv(f->rows, c * v);
    int64_t words = 4 * c * rs * col_words(v);
    int64_t sram = f->sram_base > words ? f->sram_base : words;
    int64_t per = pass_model_resident(f->gpu, (unsigned)(c * rs), sram,
                                      col_regs(f, split_unroll(f, rs, v), v));
    int64_t p = per * sms / tiles;
    if (p > rs * 8 * BLOCKS_MAX_ROUNDS) p = rs * 8 * BLOCKS_MAX_ROUNDS;
    if (p > f->rext / (rs * 2 * SPLIT_MIN_PER)) p = f->rext / (rs * 2 * SPLIT_MIN_PER);
    if (p < 2 || rs < v || words > f->budget) return false;
    memset(s, 0, sizeof *s);
    s->id = PASS_SCH_REDUCTION_COLUMN_BLOCKS;
    s->p[0] = (int32_t)c, s->p[1] = (int32_t)rs, s->p[2] = (int32_t)p, s->p[3] = (int32_t)v;
    return true;
}

static void split_base(const pass_sched_facts *f, int64_t *v, int64_t *c, int64_t *rs);
static bool waves_rule(const pass_sched_facts *f, int64_t v, int64_t *c, int64_t *rs);
static int64_t split_rounds(const pass_sched_facts *f, int64_t c, int64_t r, int64_t v,
                            int64_t *waves);

/* [reduction.column_split.waves]'s reason for column split s into buf, with the base tile's and
 * the chosen tile's blocks, waves and rounds; false (buf empty) when s is not the rule's
 * narrowed tile. */
static bool waves_why(const pass_sched_facts *f, const ir_schedule *s, char *buf, size_t cap) {
    if (!f->gpu || f->gpu->sms <= 0 || f->rows <= 0 || f->rext <= 0 || !cap) return false;
    int64_t v, c, rs, c0, r0, w0, w;
    split_base(f, &v, &c, &rs);
    c0 = c, r0 = rs;
    if (rs < 2 || !waves_rule(f, v, &c, &rs) || s->p[0] != c || s->p[1] != rs || s->p[2] != v)
        return false;
    int64_t n0 = split_rounds(f, c0, r0, v, &w0), n = split_rounds(f, c, rs, v, &w);
    snprintf(buf, cap,
             "[reduction.column_split.waves] cols=%lld, slices=%lld: %lld blocks at %d registers "
             "(estimated) -> %lld waves x %lld groups a slice = %lld serial rounds; cols=%lld, "
             "slices=%lld: %lld blocks, %lld waves x %lld = %lld",
             (long long)c0, (long long)r0, (long long)cdiv(f->rows, c0 * v), split_regs(f, r0, v),
             (long long)w0, (long long)(n0 / w0), (long long)n0, (long long)c, (long long)rs,
             (long long)cdiv(f->rows, c * v), (long long)w, (long long)(n / w), (long long)n);
    return true;
}

bool pass_schedule_rule_why(const pass_sched_facts *f, const ir_schedule *s, char *buf,
                            size_t cap) {
    if (cap) buf[0] = 0;
    int sms = f->gpu ? f->gpu->sms : 0;
    if (s->id == PASS_SCH_REDUCTION_COLUMN_SPLIT) return waves_why(f, s, buf, cap);
    if (s->id != PASS_SCH_REDUCTION_COLUMN_BLOCKS || sms <= 0 || f->rows <= 0 || !cap) return false;
    int64_t v = col_vec(f), cmin = col_min(f, v), c = COL_THREADS; /* as blocks_rule */
    while (c > cmin && cdiv(f->rows, c * v) < 2LL * sms) c /= 2;
    snprintf(buf, cap,
             "the column split's narrowest tile (%lld x vec %lld of %lld kept elements) gives %lld "
             "block%s, fewer than 2 x %d SMs",
             (long long)c, (long long)v, (long long)f->rows, (long long)cdiv(f->rows, c * v),
             cdiv(f->rows, c * v) == 1 ? "" : "s", sms);
    return true;
}

/* reduction.column_blocks(cols, slices, splits, vec): the rule's block only (blocks_rule); its
 * last blocks' combine unrolling is sized for that split count. */
static unsigned blocks_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    ir_schedule s;
    if (!f->concrete || cap == 0 || !blocks_rule(f, &s)) return 0;
    out[0] = s;
    return 1;
}
static void blocks_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    split_plan(rg, f, s);
    rg->splits = (uint32_t)s->p[2];
}
/* The column split's block over tiles x splits blocks, and each tile's last block combining the
 * tile's partials (codegen/reduction.c cg_red_col_last): f32 words of its reductions x splits x
 * cols x vec kept elements. */
static bool blocks_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    if (!split_model(f, rg, m)) return false;
    int64_t v = rg->sched.p[3] > 1 ? rg->sched.p[3] : 1;
    m->grid *= rg->sched.p[2];
    m->ticket = true;
    m->comb_bytes = 4.0 * (f->nred > 0 ? f->nred : 1) * rg->sched.p[2] * rg->sched.p[0] * v;
    return true;
}

/* matmul.wgmma(bm, bn, splits, stages): the sm_90a wgmma kernel's block tile bm x bn (x 64 k),
 * split-K ranks of a cluster and ring stages (as many as fit): pass_wg_space's tiles of the
 * region's shape (passes/wgmma.c); codegen/wgmma.c builds the named tile. */
static unsigned wg_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    pass_wg_tile t[PASS_WG_SPACE];
    if (f->kind != IR_RK_MATMUL || !f->wg || !f->concrete) return 0;
    unsigned n = pass_wg_space(&f->wgs, t, PASS_WG_SPACE), k = 0;
    for (unsigned i = 0; i < n && k < cap; i++) {
        k = put(out, k, cap, PASS_SCH_MATMUL_WGMMA, t[i].bm * t[i].mcast, t[i].bn);
        out[k - 1].p[2] = t[i].splits, out[k - 1].p[3] = t[i].stages;
    }
    return k;
}
static void wg_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    (void)f;
    rg->sched = *s; /* the mma.sync tile (rg->tile, for other targets) stays the planner's */
}
static bool wg_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    const ir_schedule *s = &rg->sched;
    if (!f->wg || !f->gpu || !pass_wg_tile_make(&f->wgs, s->p[0], s->p[1], s->p[2], &m->wgt))
        return false;
    pass_wg_model(&f->wgs, &m->wgt, f->gpu, f->wg_bytes, &m->wgm);
    int64_t ctas = m->wgt.splits == 0 ? m->wgt.ctas : m->wgt.tiles * m->wgt.splits;
    m->threads = 128u * (1u + (unsigned)m->wgt.consumers);
    m->grid = ctas < f->gpu->sms ? ctas : f->gpu->sms;
    m->per_sm = 1;
    m->active_sms = (double)m->grid;
    m->occupancy = (double)m->threads / 2048;
    m->waves = m->wgm.waves;
    m->comp_us = m->wgm.comp_us;
    m->mem_us = m->wgm.mem_us;
    m->time_us = m->wgm.time_us;
    m->kernels = 1 + (unsigned)f->wgs.nstage;
    m->wgs = f->wgs;
    return true;
}

/* matmul.wgmma_swap(bn, bm, splits, stages): the swapped-operand wgmma kernel of a short M
 * ([matmul.wgmma.swap]: bn output columns along wgmma's M, bm output rows along its N):
 * pass_wg_swap_space's tiles; codegen/wgmma.c builds the named tile. */
static unsigned sw_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    pass_wg_tile t[PASS_WG_SPACE];
    if (f->kind != IR_RK_MATMUL || !f->wg || !f->concrete) return 0;
    unsigned n = pass_wg_swap_space(&f->wgs, t, PASS_WG_SPACE), k = 0;
    for (unsigned i = 0; i < n && k < cap; i++) {
        k = put(out, k, cap, PASS_SCH_MATMUL_WGMMA_SWAP, t[i].bm, t[i].bn);
        out[k - 1].p[2] = t[i].splits, out[k - 1].p[3] = t[i].stages;
    }
    return k;
}
static bool sw_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    const ir_schedule *s = &rg->sched;
    if (!f->wg || !f->gpu || !pass_wg_swap_make(&f->wgs, s->p[0], s->p[1], s->p[2], &m->wgt))
        return false;
    pass_wg_model(&f->wgs, &m->wgt, f->gpu, f->wg_bytes, &m->wgm);
    m->threads = 128u * (1u + (unsigned)m->wgt.consumers);
    int64_t ctas = m->wgt.tiles * m->wgt.splits;
    m->grid = ctas < f->gpu->sms ? ctas : f->gpu->sms;
    m->per_sm = 1;
    m->active_sms = (double)m->grid;
    m->occupancy = (double)m->threads / 2048;
    m->waves = m->wgm.waves;
    m->comp_us = m->wgm.comp_us;
    m->mem_us = m->wgm.mem_us;
    m->time_us = m->wgm.time_us;
    m->kernels = 1 + (unsigned)f->wgs.nstage;
    m->wgs = f->wgs;
    /* what it is chosen against: the plain kernel's fastest tile */
    if (pass_wg_pick(&f->wgs, f->gpu, f->wg_bytes, &m->swt))
        pass_wg_model(&f->wgs, &m->swt, f->gpu, f->wg_bytes, &m->swm);
    return true;
}

/* matmul.skinny(bn, splits): the skinny kernel of odd-pitch operands (passes/skinny.c), offered
 * where the wgmma form of a product of at most 64 rows would stage an operand; codegen/skinny.c
 * builds the named tile. */
static unsigned sk_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    pass_sk_tile t[12];
    if (f->kind != IR_RK_MATMUL || !f->wg || !f->concrete) return 0;
    unsigned n = pass_sk_space(&f->wgs, t, 12), k = 0;
    for (unsigned i = 0; i < n && k < cap; i++)
        k = put(out, k, cap, PASS_SCH_MATMUL_SKINNY, t[i].bn, t[i].splits);
    return k;
}
static bool sk_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    const ir_schedule *s = &rg->sched;
    if (!f->wg || !f->gpu || !pass_sk_tile_make(&f->wgs, s->p[0], s->p[1], &m->skt)) return false;
    pass_sk_model(&f->wgs, &m->skt, f->gpu, f->wg_bytes, &m->skm);
    m->threads = 256;
    m->grid = m->skm.ctas;
    m->per_sm = m->skm.per_sm;
    m->active_sms = (double)(m->grid < f->gpu->sms ? m->grid : f->gpu->sms);
    m->occupancy = (double)m->threads * (double)m->per_sm / 2048;
    m->waves = (double)m->grid / ((double)f->gpu->sms * (double)m->per_sm);
    m->comp_us = m->skm.comp_us;
    m->mem_us = m->skm.mem_us;
    m->time_us = m->skm.time_us;
    m->kernels = 1;
    m->wgs = f->wgs;
    /* the staged wgmma form it replaces (the report prints both) */
    if (pass_wg_pick(&f->wgs, f->gpu, f->wg_bytes, &m->wgt))
        pass_wg_model(&f->wgs, &m->wgt, f->gpu, f->wg_bytes, &m->wgm);
    return true;
}

/* matmul.simt(bm, bn, bk, splits): the SIMT f32 kernel's block tile, k step and split-K ranks
 * (passes/simt.c), for products that do not run on tensor cores; codegen/matmul.c builds it. */
static unsigned sg_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    int64_t t[64][4];
    if (f->kind != IR_RK_MATMUL || (!f->simt && !f->sgs.w_rows)) return 0;
    unsigned n = pass_simt_space(&f->sgs, f->gpu, t, 64), k = 0;
    for (unsigned i = 0; i < n && k < cap; i++) {
        k = put(out, k, cap, PASS_SCH_MATMUL_SIMT, t[i][0], t[i][1]);
        out[k - 1].p[2] = (int32_t)t[i][2], out[k - 1].p[3] = (int32_t)t[i][3];
    }
    return k;
}
/* The schedule, and for split-K the shared memory of the stage buffers and the partial tile (a
 * GEMV tile: its warps' partials). */
static void sg_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    rg->sched = *s;
    if (s->p[3] <= 1 && !pass_simt_is_gemv(s->p[0])) return;
    int64_t need = pass_simt_geom_of(s->p[0], s->p[1], s->p[2], f->sgs.nmm).smem_bytes +
                   pass_simt_part_bytes(s->p[0], s->p[1], s->p[3]);
    if (rg->sram_bytes < need) rg->sram_bytes = need;
}
static bool sg_model(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    const ir_schedule *s = &rg->sched;
    if ((!f->simt && !f->sgs.w_rows) || !f->gpu || !f->concrete) return false;
    if (pass_simt_model(&f->sgs, f->gpu, f->wg_bytes, s->p[0], s->p[1], s->p[2],
                        s->p[3] > 1 ? s->p[3] : 1, &m->sgt) <= 0)
        return false;
    m->threads = m->sgt.threads;
    m->grid = m->sgt.tiles * m->sgt.splits;
    m->per_sm = m->sgt.per_sm;
    m->active_sms = (double)(m->grid < f->gpu->sms ? m->grid : f->gpu->sms);
    m->occupancy = (double)m->threads * (double)m->per_sm / 2048;
    m->waves = m->sgt.waves;
    m->comp_us = m->sgt.comp_us;
    m->mem_us = m->sgt.mem_us;
    m->time_us = m->sgt.time_us;
    m->kernels = 1;
    /* [matmul.simt.gemv_rows]: the wgmma form it is chosen against (the report prints both);
     * its time without the launch, as the wgmma schedules' (candidates add one) */
    if (f->sgs.w_rows) m->time_us -= f->gpu->launch_us;
    if (f->sgs.w_rows && f->wg && pass_wg_pick(&f->wgs, f->gpu, f->wg_bytes, &m->wgt))
        pass_wg_model(&f->wgs, &m->wgt, f->gpu, f->wg_bytes, &m->wgm);
    return true;
}

static const sch_def sch_defs[] = {
    [PASS_SCH_NONE] = {none_space, none_plan, none_model},
    [PASS_SCH_POINTWISE_VECTOR] = {pw_space, pw_plan, pw_model},
    [PASS_SCH_POINTWISE_ROW] = {pwr_space, pwr_plan, pwr_model},
    [PASS_SCH_REDUCTION_ROW] = {row_space, row_plan, rows_model},
    [PASS_SCH_REDUCTION_ROW_WIDE] = {wide_space, row_plan, rows_model},
    [PASS_SCH_REDUCTION_ROW_FEW] = {few_space, row_plan, rows_model},
    [PASS_SCH_REDUCTION_CLUSTER_ROWS] = {cluster_space, cluster_plan, rows_model},
    [PASS_SCH_REDUCTION_CLUSTER_STREAM] = {stream_space, cluster_plan, rows_model},
    [PASS_SCH_REDUCTION_WARP_ROWS] = {warp_space, warp_plan, rows_model},
    [PASS_SCH_REDUCTION_SUBWARP_ROWS] = {subwarp_space, subwarp_plan, rows_model},
    [PASS_SCH_REDUCTION_COLUMN] = {col_space, col_plan, col_model},
    [PASS_SCH_REDUCTION_COLUMN_SPLIT] = {split_space, split_plan, split_model},
    [PASS_SCH_REDUCTION_COLUMN_BLOCKS] = {blocks_space, blocks_plan, blocks_model},
    [PASS_SCH_REDUCTION_ROW_SPLIT] = {rsplit_space, rsplit_plan, rsplit_model},
    [PASS_SCH_REDUCTION_ROW_SPLIT2] = {rsplit2_space, rsplit_plan, rsplit2_model},
    [PASS_SCH_MATMUL_WGMMA] = {wg_space, wg_plan, wg_model},
    [PASS_SCH_MATMUL_SKINNY] = {sk_space, wg_plan, sk_model},
    [PASS_SCH_MATMUL_SIMT] = {sg_space, sg_plan, sg_model},
    [PASS_SCH_MATMUL_WGMMA_SWAP] = {sw_space, wg_plan, sw_model},
};
_Static_assert(sizeof sch_defs / sizeof sch_defs[0] == PASS_SCH_COUNT,
               "every PASS_SCHEDULES row has an entry in sch_defs");

/* ---- the rule, the space, the plan ----------------------------------------------------------- */

/* Registers a column split's thread (r slices, vec v) takes for the wave rule's residency:
 * col_regs, and for a column of several stages (online: Welford's variance, the shifted
 * compensated mean) COL_ONLINE_REGS more per reduction (var_mean f32 [32, 8, 1000, 80] over axes
 * (0, 2): 56 estimated, 60 by ptxas). */
static int split_regs(const pass_sched_facts *f, int64_t r, int64_t v) {
    int regs = col_regs(f, split_unroll(f, r, v), v);
    if (f->stages > 1) regs += COL_ONLINE_REGS * (f->nred > 0 ? f->nred : 1);
    return regs > 255 ? 255 : regs;
}

/* The serial rounds of column split (c, r, v) on a busy SM: its waves (the tiles of c x v kept
 * elements over the resident blocks of all SMs, rounded up) times one slice's unrolled groups
 * (the reduced length's groups of split_unroll over r slices, rounded up); *waves the waves. */
static int64_t split_rounds(const pass_sched_facts *f, int64_t c, int64_t r, int64_t v,
                            int64_t *waves) {
    int64_t words = 4 * c * r * col_words(v), u = split_unroll(f, r, v);
    int64_t sram = f->sram_base > words ? f->sram_base : words;
    int64_t per = pass_model_resident(f->gpu, (unsigned)(c * r), sram, split_regs(f, r, v));
    *waves = cdiv(cdiv(f->rows, c * v), per * f->gpu->sms);
    return *waves * cdiv(cdiv(f->rext, u), r);
}

/* The column split's slices for c columns: SPLIT_THREADS / c, halved until every slice has
 * SPLIT_MIN_PER elements. */
static int64_t split_slices(const pass_sched_facts *f, int64_t c) {
    int64_t rs = SPLIT_THREADS / c;
    while (rs > 1 && f->rext < SPLIT_MIN_PER * rs) rs /= 2;
    return rs;
}

/* [reduction.column_split.waves] for a scalar column split that the column model does not price
 * (waves_priced: an online variance's chunk statistics, whose registers limit the resident
 * blocks): of C = *c,
 * *c / 2, ... (not below col_min, slices split_slices, shared words within the budget), the C
 * with the fewest serial rounds on a busy SM (split_rounds: a thread's loop is latency bound, so
 * a block takes as long in a partial last wave as in a full one); ties keep the wider C.
 * var_mean over axes (0, 2) of f32 [32, 8, 1000, 80]: C 128 gives 320 blocks at 2 per SM (2
 * waves x 32 groups), C 32 gives 1280 (5 waves x 8). True when it narrowed *c. */
static bool waves_rule(const pass_sched_facts *f, int64_t v, int64_t *c, int64_t *rs) {
    if (v != 1 || !waves_priced(f) || !f->gpu || f->gpu->sms <= 0) return false;
    int64_t w, best = split_rounds(f, *c, *rs, v, &w), c0 = *c;
    for (int64_t k = *c / 2; k >= col_min(f, v); k /= 2) {
        int64_t r = split_slices(f, k);
        if (r < 2 || 4 * k * r * col_words(v) > f->budget) break;
        int64_t n = split_rounds(f, k, r, v, &w);
        if (n < best) best = n, *c = k, *rs = r;
    }
    return *c != c0;
}

/* The column split's base tile (before the wave rule): vec = col_vec, C the largest of 128, 64,
 * ... (not below col_min) whose tiles of C x vec kept elements still give 2 blocks per SM,
 * split_slices R; vec 1 when R leaves fewer than vec slices. */
static void split_base(const pass_sched_facts *f, int64_t *v, int64_t *c, int64_t *rs) {
    int sms = f->gpu->sms;
    *v = col_vec(f);
    for (;;) { /* vectors need at least vec slices (the two-level combine); else one column */
        int64_t cmin = col_min(f, *v);
        *c = COL_THREADS;
        while (*c > cmin && cdiv(f->rows, *c * *v) < 2LL * sms) *c /= 2;
        *rs = split_slices(f, *c);
        if (*rs >= *v || *v == 1) break;
        *v = 1;
    }
}

/* [reduction.column_blocks] when blocks_rule applies; else [reduction.column_split] with
 * split_base's tile, narrowed by waves_rule; else [reduction.column] with C = 128. The model
 * ranks the space (pass_schedule_candidates) for `txc tune` and --explain's runners-up. */
static void column_rule(const pass_sched_facts *f, ir_schedule *s) {
    s->id = PASS_SCH_REDUCTION_COLUMN, s->p[0] = COL_THREADS;
    int sms = f->gpu ? f->gpu->sms : 0;
    if (!split_stages_ok(f) || f->rext <= 0 || f->rows <= 0 || sms <= 0) return;
    if (blocks_rule(f, s)) return;
    int64_t v, c, rs;
    split_base(f, &v, &c, &rs);
    if (rs < 2 || 4 * c * rs * col_words(v) > f->budget) return;
    waves_rule(f, v, &c, &rs);
    s->id = PASS_SCH_REDUCTION_COLUMN_SPLIT, s->p[0] = (int32_t)c, s->p[1] = (int32_t)rs;
    s->p[2] = (int32_t)v;
}

/* True when a benchmark knob pins the wgmma kernel's form (TX_WG_TILE, TX_WG_STREAMK=1; the
 * rule's caller handles TX_WG_SWAP=2): [matmul.wgmma.stage] then stages without weighing the
 * mma.sync kernel, so that the pinned kernel is the one built. */
static bool wg_pinned(void) {
    const char *t = getenv("TX_WG_TILE"), *k = getenv("TX_WG_STREAMK");
    return (t && t[0]) || (k && !strcmp(k, "1"));
}

/* [matmul.simt.gemv_rows]: the model's fastest rows-form GEMV tile of a 16-bit product of at
 * most 16 rows replaces s (the tensor-core choice, cur_us without its launch) when
 * TX_SIMT_GEMV_ROWS=1 and it is predicted faster, or when TX_SIMT_TILE pins one (a benchmark
 * knob: the space is that tile). Off by default: on the H200 the rows kernel measured 1.0x the
 * wgmma kernel at M = 1 and 0.55-0.9x at M = 4-8 (docs/codegen-matmul.md), which the model does
 * not yet see. */
static void rows_rule(const pass_sched_facts *f, ir_schedule *s, double cur_us) {
    pass_simt_time t;
    if (!f->sgs.w_rows || !pass_simt_pick(&f->sgs, f->gpu, f->wg_bytes, &t)) return;
    const char *pin = getenv("TX_SIMT_TILE"), *on = getenv("TX_SIMT_GEMV_ROWS");
    bool pinned = pin && pin[0];
    if (!pinned && !(on && !strcmp(on, "1"))) return;
    if (!pinned && t.time_us - f->gpu->launch_us >= cur_us) return;
    memset(s, 0, sizeof *s);
    s->source = IR_SCHED_MODEL;
    s->id = PASS_SCH_MATMUL_SIMT;
    s->p[0] = (int32_t)t.bm, s->p[1] = (int32_t)t.bn, s->p[2] = (int32_t)t.bk, s->p[3] = t.splits;
}

void pass_schedule_rule(const pass_sched_facts *f, ir_schedule *s) {
    memset(s, 0, sizeof *s);
    s->source = IR_SCHED_MODEL;
    if (f->kind == IR_RK_POINTWISE) {
        s->id = PASS_SCH_POINTWISE_VECTOR, s->p[0] = PW_THREADS, s->p[1] = pw_groups(f);
        pwr_rule(f, s);
    } else if (f->kind == IR_RK_REDUCTION && f->column) {
        column_rule(f, s);
    } else if (f->kind == IR_RK_REDUCTION) {
        row_rule(f, s);
    } else if (f->kind == IR_RK_MATMUL && f->wg && f->concrete) {
        pass_wg_tile t; /* [matmul.wgmma]: the model's fastest tile of the shape */
        if (!pass_wg_pick(&f->wgs, f->gpu, f->wg_bytes, &t)) return;
        s->id = PASS_SCH_MATMUL_WGMMA;
        s->p[0] = t.bm * t.mcast, s->p[1] = t.bn, s->p[2] = t.splits, s->p[3] = t.stages;
        /* [matmul.skinny]: where the wgmma form stages an operand of at most 64 rows, the skinny
         * kernel that reads it in place when the model prices it faster (staging included) */
        pass_sk_tile k;
        pass_wg_time wt, swt;
        pass_sk_time kt;
        pass_wg_tile sw; /* [matmul.wgmma.swap]: the swapped kernel where the model has it faster */
        const char *fe = getenv("TX_WG_SWAP"); /* 2: the swapped kernel wherever it is valid */
        bool force = fe && !strcmp(fe, "2");
        if (pass_wg_swap_pick(&f->wgs, f->gpu, f->wg_bytes, &sw) &&
            (pass_wg_model(&f->wgs, &sw, f->gpu, f->wg_bytes, &swt) <
                 pass_wg_model(&f->wgs, &t, f->gpu, f->wg_bytes, &wt) ||
             force)) {
            s->id = PASS_SCH_MATMUL_WGMMA_SWAP;
            s->p[0] = sw.bm, s->p[1] = sw.bn, s->p[2] = sw.splits, s->p[3] = sw.stages;
            t = sw;
        }
        double cur = pass_wg_model(&f->wgs, &t, f->gpu, f->wg_bytes, &wt);
        if (pass_sk_pick(&f->wgs, f->gpu, f->wg_bytes, &k) &&
            pass_sk_model(&f->wgs, &k, f->gpu, f->wg_bytes, &kt) < cur) {
            memset(s->p, 0, sizeof s->p);
            s->id = PASS_SCH_MATMUL_SKINNY, s->p[0] = k.bn, s->p[1] = k.splits;
            cur = kt.time_us;
        } else if (f->wgs.nstage > 0 && !force && !wg_pinned() &&
                   pass_wg_model(&f->wgs, &t, f->gpu, f->wg_bytes, &wt) >= f->wgs.sync_us) {
            /* [matmul.wgmma.stage]: staging plus the wgmma kernel no faster than the mma.sync
             * kernel reading the operands in place: no schedule, the mma.sync kernel */
            memset(s, 0, sizeof *s);
            s->source = IR_SCHED_MODEL;
            cur = f->wgs.sync_us;
        }
        if (!force && !wg_pinned()) rows_rule(f, s, cur);
    } else if (f->kind == IR_RK_MATMUL && f->simt) {
        /* [matmul.simt]: the model's fastest SIMT tile and split-K ranks of the shape
         * ([matmul.simt.splitk] when more than 1); 128x128x8 unsplit at unbound sizes */
        pass_simt_time t;
        s->id = PASS_SCH_MATMUL_SIMT, s->p[0] = 128, s->p[1] = 128, s->p[2] = 8, s->p[3] = 1;
        if (f->concrete && pass_simt_pick(&f->sgs, f->gpu, f->wg_bytes, &t))
            s->p[0] = (int32_t)t.bm, s->p[1] = (int32_t)t.bn, s->p[2] = (int32_t)t.bk,
            s->p[3] = t.splits;
    }
}

unsigned pass_schedule_space(const pass_sched_facts *f, ir_schedule *out, unsigned cap) {
    unsigned n = 0;
    for (unsigned id = 1; id < PASS_SCH_COUNT && n < cap; id++)
        if (sch_names[id].kind == (ir_region_kind)f->kind)
            n += sch_defs[id].space(f, out + n, cap - n);
    return n;
}

bool pass_schedule_valid(const pass_sched_facts *f, const ir_schedule *s) {
    ir_schedule sp[PASS_MAX_CANDIDATES];
    unsigned n = pass_schedule_space(f, sp, PASS_MAX_CANDIDATES);
    for (unsigned i = 0; i < n; i++)
        if (pass_schedule_eq(&sp[i], s)) return true;
    return false;
}

void pass_schedule_plan(ir_region *rg, const pass_sched_facts *f, const ir_schedule *s) {
    unsigned id = s->id < PASS_SCH_COUNT ? s->id : PASS_SCH_NONE;
    sch_defs[id].plan(rg, f, s);
}

bool pass_schedule_model_block(const pass_sched_facts *f, const ir_region *rg, pass_model *m) {
    unsigned id = rg->sched.id < PASS_SCH_COUNT ? rg->sched.id : PASS_SCH_NONE;
    m->schedule = sch_names[id].name;
    return sch_defs[id].model(f, rg, m);
}

static int cand_cmp(const void *a, const void *b) {
    const pass_candidate *x = a, *y = b;
    if (x->predicted_us < y->predicted_us) return -1;
    if (x->predicted_us > y->predicted_us) return 1;
    return 0;
}

unsigned pass_schedule_candidates(const ir_graph *g, const pass_index *ix, uint32_t r,
                                  const pass_gpu *gpu, int64_t budget, pass_candidate *out,
                                  unsigned cap) {
    pass_sched_facts f;
    pass_schedule_facts(g, ix, r, gpu, budget, &f);
    ir_schedule sp[PASS_MAX_CANDIDATES];
    unsigned n = pass_schedule_space(&f, sp, PASS_MAX_CANDIDATES);
    if (!n) return 0;
    pass_cost c;
    pass_region_cost_ix(g, ix, r, gpu, &c);
    if (!c.concrete) return 0;
    pass_candidate all[PASS_MAX_CANDIDATES];
    for (unsigned i = 0; i < n; i++) {
        ir_region tmp = g->regions[r];
        pass_schedule_plan(&tmp, &f, &sp[i]);
        pass_model m;
        pass_model_plan(g, &tmp, &f, gpu, &c, &m);
        all[i].s = sp[i];
        all[i].predicted_us = m.time_us + gpu->launch_us;
    }
    /* stable by construction: equal times keep table order (insertion sort) */
    for (unsigned i = 1; i < n; i++) {
        pass_candidate t = all[i];
        unsigned j = i;
        while (j > 0 && cand_cmp(&all[j - 1], &t) > 0) all[j] = all[j - 1], j--;
        all[j] = t;
    }
    if (n > cap) n = cap;
    memcpy(out, all, n * sizeof *out);
    return n;
}
