/* wgmma.c - the Hopper (sm_90a) matrix-product kernel: wgmma.mma_async on
 * operands in 128-byte-swizzled shared memory, loaded by TMA
 * (cp.async.bulk.tensor) into a ring of mbarrier-guarded stages, with one
 * producer warpgroup (one thread issues the copies) and two consumer
 * warpgroups (64 rows of the block tile each), a persistent grid walking
 * the output tiles in groups of M tiles (L2 reuse of B), and the region's
 * epilogue computed on the accumulator registers.
 *
 * Everything of one pipeline lives in the kernel function (no calls):
 * ptxas serialises wgmma across calls (C7510). LLVM 19 has no intrinsics
 * for wgmma, TMA, try_wait.parity, expect_tx or fence.mbarrier_init, so
 * those are inline PTX; mbarrier init/arrive and setmaxnreg are
 * intrinsics. Layout facts and the design: docs/codegen-matmul.md. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout arithmetic (pure; unit-tested in tests/unit/test_wgmma.c) ---- */

uint64_t cg_wg_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    uint64_t d = (uint64_t)((saddr & 0x3FFFFu) >> 4);
    d |= (uint64_t)((lbo >> 4) & 0x3FFFu) << 16;
    d |= (uint64_t)((sbo >> 4) & 0x3FFFu) << 32;
    d |= (uint64_t)1 << 62; /* 128-byte swizzle */
    return d;
}

uint32_t cg_wg_swz128(uint32_t row, uint32_t byte) {
    return row * 128u + ((((byte >> 4) & 7u) ^ (row & 7u)) << 4) + (byte & 15u);
}

bool cg_wg_plan_for(int64_t M, int64_t N, int64_t K, bool a_kmajor, bool b_kmajor, unsigned nmm,
                    unsigned nouts, int64_t smem_max, unsigned nsm, const ir_schedule *want,
                    cg_wg_plan *p) {
    return cg_wg_plan_batch(M, N, K, 0, a_kmajor, b_kmajor, nmm, nouts, smem_max, nsm, want, p);
}

bool cg_wg_plan_batch(int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor, bool b_kmajor,
                      unsigned nmm, unsigned nouts, int64_t smem_max, unsigned nsm,
                      const ir_schedule *want, cg_wg_plan *p) {
    memset(p, 0, sizeof *p);
    if (nmm < 1 || nmm > CG_MM_MAXH) return false;
    /* the tile, split-K ranks and stages: the schedule's (passes/wgmma.c validates them against
     * the shape), else the model's fastest (pass_wg_pick; the sm_90a GPUs of the model's table
     * share their SMs and rates). The dynamic shared layout's size (stages, barriers, split-K
     * slots, alignment slack) is pass_wg_tile_make's: a change of the layout in wg_body is a
     * change there, so that the stages the planner names still fit */
    pass_wg_shape s = {.M = M,
                       .N = N,
                       .K = K,
                       .a_kmajor = a_kmajor,
                       .b_kmajor = b_kmajor,
                       .nmm = (int)nmm,
                       .nouts = nouts > 0 ? (int)nouts : 1,
                       .smem = smem_max,
                       .sms = (int)nsm,
                       .batch = batch};
    pass_wg_tile t;
    bool have = want && want->id == PASS_SCH_MATMUL_WGMMA &&
                pass_wg_tile_make(&s, want->p[0], want->p[1], want->p[2], &t) &&
                (want->p[3] <= 0 || want->p[3] == t.stages);
    /* [matmul.wgmma.swap]: the tile is of the transposed product (pass_wg_swap_shape) */
    bool swap = !have && want && want->id == PASS_SCH_MATMUL_WGMMA_SWAP && batch == 0 &&
                pass_wg_swap_make(&s, want->p[0], want->p[1], want->p[2], &t) &&
                (want->p[3] <= 0 || want->p[3] == t.stages);
    if (swap) {
        int64_t tm = M;
        M = N, N = tm;
        bool tk = a_kmajor;
        a_kmajor = b_kmajor, b_kmajor = tk;
        have = true;
    }
    if (!have) {
        const pass_gpu *gpu = pass_gpu_find("h200");
        if (!gpu || !pass_wg_pick(&s, gpu, -1, &t)) return false;
    }
    p->nmm = (int)nmm;
    p->consumers = t.consumers;
    p->bm = t.bm, p->bn = t.bn, p->bk = 64;
    p->threads = 128u * (1u + (unsigned)p->consumers);
    p->a_kmajor = a_kmajor, p->b_kmajor = b_kmajor;
    p->stage_bytes = t.stage_bytes;
    /* a K-contiguous A box covers only the rows that exist when M < bm is
     * known: the rows past M in shared memory stay stale, and the
     * accumulator rows they feed are never stored (rows are independent) */
    p->a_rows = p->bm;
    if (a_kmajor && M > 0 && M < p->bm) p->a_rows = (int)((M + 7) / 8 * 8);
    p->swap = swap;
    p->b_rows = p->bn;
    if (swap && b_kmajor && N > 0 && N < p->bn) p->b_rows = (int)((N + 7) / 8 * 8);
    p->tx_bytes = ((int64_t)p->a_rows + (int64_t)nmm * p->b_rows) * p->bk * 2;
    /* split-K over a cluster: `splits` CTAs share a tile, each takes a K range, the others send
     * their partial accumulators to rank 0's shared memory, which adds them and runs the
     * epilogue once */
    p->splits = t.splits > 0 ? t.splits : 1;
    if (t.splits == 0) {
        p->streamk = true;
        p->sk_ctas = (int)t.ctas;
        p->ws_floats = t.ws_bytes / 4;
    }
    p->mcast = t.mcast > 1 ? t.mcast : 1;
    p->red_bytes = t.red_bytes;
    p->stages = t.stages;
    p->smem_bytes = t.smem_bytes;
    /* M tiles a group of the tile order (in a multicast cluster, pairs of tiles): the tiles of a
     * wave (132) read G A panels and 132 / G B panels of every product, the fewest bytes near G =
     * sqrt(132 x B panel / A panel): 16 where the B columns of all products are at least twice
     * the tile's rows (128x256, SwiGLU's 2 x 128; mlp_block at M 8192 measured 951 -> 903 us and
     * 1839 -> 1821 us against 8), else 8. TX_WG_GROUP_M=G sets G (a benchmark knob) */
    const char *gm = getenv("TX_WG_GROUP_M");
    int g = gm ? atoi(gm) : 0;
    if (g < p->mcast || g > 64) g = p->nmm * p->bn >= 2 * p->bm ? 16 : 8;
    p->group_m = g / p->mcast;
    /* registers move from the producer to the consumers only when the
     * consumers need more than the 168 per thread 384 threads start with
     * (128 accumulators: 256 columns of all products); setmaxnreg redistributes the CTA's
     * launch allocation, so a kernel that starts with fewer must not ask */
    p->setmaxnreg = p->nmm * p->bn > 192 && p->consumers == 2;
    p->nsm = nsm;
    return true;
}

void cg_wg_opnd_box(bool kmajor, int64_t rows, int64_t bk, uint32_t box[2], int *nbox,
                    int64_t *box_bytes) {
    if (kmajor) { /* inner: 64 k (128 bytes), outer: the tile's rows */
        box[0] = 64, box[1] = (uint32_t)rows;
        *nbox = (int)(bk / 64);
    } else { /* inner: 64 rows of m or n (128 bytes), outer: bk k rows */
        box[0] = 64, box[1] = (uint32_t)bk;
        *nbox = (int)(rows / 64);
    }
    *box_bytes = (int64_t)box[0] * box[1] * 2;
}

int cg_wg_half_box(bool kmajor, int64_t bn, int64_t bk, int rank, int i, int64_t *dn, int64_t *dk,
                   int64_t *off) {
    int64_t half = bn / 2;
    if (kmajor) { /* rows [rank * half, + half) of 128 B, one box per 64 k */
        *dn = rank * half, *dk = 64 * i;
        *off = rank * half * 128 + (int64_t)i * bn * 128;
        return (int)(bk / 64);
    }
    /* boxes rank * half / 64 + i of the tile's bn / 64 (64 n x bk each) */
    int64_t j = rank * half / 64 + i;
    *dn = 64 * j, *dk = 0;
    *off = j * 64 * bk * 2;
    return (int)(half / 64);
}

void cg_wg_opnd_desc(bool kmajor, int64_t bk, uint32_t *lbo, uint32_t *sbo, uint32_t *kstep) {
    if (kmajor) { /* rows of 128 B, 8-row atoms 1024 B apart; 16 k = 32 bytes */
        *lbo = 16, *sbo = 1024, *kstep = 32;
    } else { /* 64-wide chunks of m/n are boxes of bk x 128 B; 8-k atoms 1024 B apart; 16 k = 2048 B
              */
        *lbo = (uint32_t)(bk * 128), *sbo = 1024, *kstep = 2048;
    }
}

bool cg_wg_merged_map(const int perm[3], int64_t d, int64_t rows, cg_wg_map3 *m) {
    memset(m, 0, sizeof *m);
    if (perm[2] != 2 || d <= 0 || d % 64 != 0 || rows < 1 || rows > 256) return false;
    if (perm[0] == perm[1] || perm[0] < 0 || perm[0] > 1 || perm[1] < 0 || perm[1] > 1)
        return false;
    /* map dim j is base axis 2 - j: view axis 0 (the rows) is base axis perm[0], view axis 1 (k /
     * D) is base axis perm[1], base axis 2 is k % D */
    m->role[0] = CG_WG_C_KIN, m->box[0] = 64;
    m->role[2 - perm[0]] = CG_WG_C_ROW, m->box[2 - perm[0]] = (uint32_t)rows;
    m->role[2 - perm[1]] = CG_WG_C_KOUT, m->box[2 - perm[1]] = 1;
    m->d = d;
    return true;
}

bool cg_wg_epi_plan(const cg_wg_plan *p, const unsigned *esize, unsigned nouts, unsigned slots,
                    int64_t smem_max, cg_wg_epi *e) {
    memset(e, 0, sizeof *e);
    unsigned w = 0;
    for (unsigned i = 0; i < nouts; i++) {
        if (esize[i] != 2 && esize[i] != 4) return false;
        if (esize[i] > w) w = esize[i];
    }
    /* the slot arithmetic is the planner's (pass_wg_slots_fit), so the shared memory the
     * planner counts for a tile is the kernel's */
    pass_wg_slots o;
    int64_t fixed = p->smem_bytes - p->stage_bytes * p->stages;
    if (!w || !pass_wg_slots_fit(fixed, p->stage_bytes, p->stages, p->consumers, p->bn, (int)w,
                                 (int)slots, smem_max, &o))
        return false;
    e->slots = o.slots, e->cols = o.cols, e->slot_bytes = o.slot_bytes;
    e->nbuf = o.nbuf, e->bytes = o.bytes, e->stages = o.stages;
    e->smem_bytes = fixed + e->bytes + p->stage_bytes * e->stages;
    return true;
}

uint32_t cg_wg_swz(uint32_t off, uint32_t span) {
    return off ^ ((off >> 3) & ((span / 16u - 1u) << 4));
}

uint32_t cg_wg_stm_off(unsigned t, unsigned q, uint32_t span) {
    unsigned lane = t % 32, mat = lane / 8;
    uint32_t row = 16u * (t / 32) + 8u * (mat % 2) + lane % 8;
    uint32_t col = 16u * q + 8u * (mat / 2);
    return cg_wg_swz(row * span + col * 2u, span);
}

void cg_wg_chunk(unsigned c, unsigned cols, uint32_t *row, uint32_t *col, uint32_t *off) {
    *row = c / (cols / 8);
    *col = 8u * (c % (cols / 8));
    *off = cg_wg_swz(*row * cols * 2u + *col * 2u, cols * 2u);
}

uint32_t cg_wg_pair_off(unsigned t, unsigned ii, unsigned esize, uint32_t span) {
    unsigned lane = t % 32;
    uint32_t row = 16u * (t / 32) + lane / 4 + 8u * ((ii / 2) % 2);
    uint32_t col = 8u * (ii / 4) + 2u * (lane % 4);
    return cg_wg_swz(row * span + col * esize, span);
}

void cg_wg_copy_elem(unsigned t, unsigned j, unsigned cols, unsigned esize, uint32_t *row,
                     uint32_t *col, uint32_t *off) {
    unsigned nseg = cols / 32, piece = 4 * j + t / 32;
    *row = piece / nseg;
    *col = 32 * (piece % nseg) + t % 32;
    *off = cg_wg_swz(*row * cols * esize + *col * esize, cols * esize);
}

bool cg_wg_copy_dst(int64_t m0, int64_t n0, uint32_t row, uint32_t col, int64_t M, int64_t N,
                    int64_t boff, int64_t *lin) {
    int64_t r = m0 + row, c = n0 + col;
    if (r >= M || c >= N) return false;
    *lin = (boff + r) * N + c;
    return true;
}

/* ---- operand eligibility (graph level, before the kernel exists) ---------- */

/* The A operand id of a product as merged heads (pass_wg_opnd_merged)
 * with its 3-D tensor map for tiles of `rows` rows in *m. */
static bool wg_opnd_merged(const ir_graph *g, unsigned region, ir_id id, ir_dtype dt, int64_t rows,
                           ir_id *base, int perm[3], cg_wg_map3 *m) {
    if (!pass_wg_opnd_merged(g, region, id, dt, base, perm)) return false;
    const ir_shape *s = &g->nodes[*base].shape;
    return cg_wg_merged_map(perm, s->dim[s->rank - 1], rows, m);
}

/* ---- inline PTX ------------------------------------------------------------ */

/* Emits inline PTX `text` with constraints `cons` over args (side effects:
 * never moved or removed); returns the call (of type ret, NULL: void). */
static LLVMValueRef wg_asm(cg_ctx *cx, LLVMTypeRef ret, const char *text, const char *cons,
                           LLVMValueRef *args, unsigned n) {
    LLVMTypeRef pt[300];
    for (unsigned i = 0; i < n; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret ? ret : cx->voidt, pt, n, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
                                      LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(cx->b, fty, a, args, n, "");
}

static LLVMValueRef c32(cg_ctx *cx, int64_t v) {
    return LLVMConstInt(cx->i32, (unsigned long long)v, 1);
}

/* Waits until the mbarrier at shared address bar (i32) completes the phase
 * of parity `par` (i32 0/1). */
static void wg_wait(cg_ctx *cx, LLVMValueRef bar, LLVMValueRef par) {
    LLVMValueRef a[2] = {bar, par};
    wg_asm(cx, NULL,
           "{\n.reg .pred p;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n@!p "
           "bra WAIT;\n}",
           "r,r,~{memory}", a, 2);
}

/* ---- the kernel ------------------------------------------------------------- */

/* What the kernel body needs: the plan, problem extents (i32), the shared
 * layout and the region's epilogue state. */
typedef struct wg_kern {
    cg_wg_plan p;
    ir_dtype dt;
    LLVMValueRef M, N, K;  /* i32 */
    LLVMValueRef M64, N64; /* i64 for the epilogue */
    LLVMValueRef tmap_a;   /* byval parameters (generic pointers) */
    bool a3;               /* A through a 3-D map (merged heads): a_map */
    cg_wg_map3 a_map;
    int64_t a_bs; /* merged heads with batch dims: the rows of one batch element (a multiple of
                     bm; the map is 4-D, its last dim the batch); 0 without */
    LLVMValueRef tmap_b[CG_MM_MAXH];      /* one per product */
    LLVMValueRef smem;                    /* i32 shared address of stage 0 (1024-aligned) */
    LLVMValueRef full, empty;             /* i32 shared address of the barrier arrays */
    LLVMValueRef ntm, ntn, ntiles, nk;    /* i32 */
    LLVMValueRef ntml;                    /* i32: M rows of the tile loop (ntm; pairs: mcast) */
    LLVMValueRef kb, ke;                  /* i32: this CTA's k steps [kb, ke) (its split) */
    LLVMValueRef rank;                    /* i32: rank in the split-K cluster (0 without) */
    LLVMValueRef red, red_full, red_free; /* i32 shared: split-K slots and barriers */
    cg_mm_epi_state *st;
    bool tma_st; /* the epilogue through store slots (cg_wg_epi): TMA stores, or with epi.coal
                    the warpgroup's coalesced copies */
    cg_wg_epi epi;
    LLVMValueRef tmap_o[8]; /* one map per stored output (tma_st, not coal), after the B maps */
    LLVMValueRef epi_smem;  /* i32 shared: the consumers' store slots (1024-aligned) */
    bool m_full, n_full;    /* M (N) a known multiple of bm (bn): no bounds test or clamp */
    /* stream-K (p.streamk): this CTA's units [ua, ub) of the tiles x nk k steps (i32), the
     * CTA and the grid (i32), the workspace (global pointer: slots, then flags) */
    LLVMValueRef ua, ub, units, cta, ncta, ws;
    unsigned nrow; /* dims of the product's rows: its rank - 1 (leading dims fold into M) */
    LLVMValueRef rdim[IR_MAX_RANK]; /* their extents (i64); row m splits over them */
    /* [matmul.wgmma.batch]: tiles walk batch x M tiles x N tiles; M (M64) is one batch
     * element's rows, rdim[0 .. nrow - 1) the batch dims; operand j (0: A, 1 + h: B of product
     * h) has batch dim i of the product when bit i of bmask[j] is set (else broadcast), and its
     * maps have a third dim, its own batch elements. pb (i32) and boff (i64: pb x M, the row of
     * the epilogue's index) are the current tile's, set by the tile loop */
    bool batched;
    LLVMValueRef nbat; /* i32: batch elements */
    uint32_t bmask[1 + CG_MM_MAXH];
    LLVMValueRef pb, boff;
} wg_kern;

/* Shared address (i32) of operand tile `which` (0: A, 1 + h: B of product
 * h) of stage s: a stage is the A tile, then the B tiles in product order. */
static LLVMValueRef wg_stage_addr(cg_ctx *cx, const wg_kern *k, LLVMValueRef s, int which) {
    LLVMValueRef off = LLVMBuildMul(cx->b, s, c32(cx, k->p.stage_bytes), "");
    if (which)
        off = LLVMBuildAdd(
            cx->b, off,
            c32(cx, (int64_t)k->p.bm * k->p.bk * 2 + (int64_t)(which - 1) * k->p.bn * k->p.bk * 2),
            "");
    return LLVMBuildAdd(cx->b, k->smem, off, "");
}

static LLVMValueRef wg_bar(cg_ctx *cx, LLVMValueRef base, LLVMValueRef s) {
    return LLVMBuildAdd(cx->b, base, LLVMBuildMul(cx->b, s, c32(cx, 8), ""), "");
}

/* Output tile t (i32) -> (pm, pn) in groups of group_m M tiles: CTAs
 * working at the same time share B columns and A rows in L2. In a
 * multicast cluster t counts tile pairs (ntml rows of them) and this CTA
 * takes row 2 pm + rank of the pair (pm = ntm when M has an odd count of
 * tiles: a phantom tile whose k steps run and whose epilogue does not). */
static void wg_tile_coords(cg_ctx *cx, const wg_kern *k, LLVMValueRef t, LLVMValueRef *pm,
                           LLVMValueRef *pn, LLVMValueRef *pb) {
    LLVMBuilderRef b = cx->b;
    *pb = c32(cx, 0);
    if (k->batched) { /* batch element t / (tiles of one), then the tile inside it */
        LLVMValueRef per = LLVMBuildMul(b, k->ntml, k->ntn, "");
        *pb = LLVMBuildUDiv(b, t, per, "pb");
        t = LLVMBuildURem(b, t, per, "");
    }
    LLVMValueRef width = LLVMBuildMul(b, k->ntn, c32(cx, k->p.group_m), "");
    LLVMValueRef grp = LLVMBuildUDiv(b, t, width, "");
    LLVMValueRef first = LLVMBuildMul(b, grp, c32(cx, k->p.group_m), "");
    LLVMValueRef left = LLVMBuildSub(b, k->ntml, first, "");
    LLVMValueRef gsz =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, c32(cx, k->p.group_m), ""), left,
                        c32(cx, k->p.group_m), "");
    LLVMValueRef r = LLVMBuildURem(b, t, width, "");
    *pm = LLVMBuildAdd(b, first, LLVMBuildURem(b, r, gsz, ""), "pm");
    *pn = LLVMBuildUDiv(b, r, gsz, "pn");
    if (k->p.mcast > 1)
        *pm = LLVMBuildAdd(b, LLVMBuildMul(b, *pm, c32(cx, k->p.mcast), ""), k->rank, "pmc");
}

/* The half of a B tile (columns n0.., k0..) that this CTA of a 2-CTA
 * multicast cluster loads (cg_wg_half_box) into the same shared address of
 * both CTAs (the tile at dst), completing bytes on each one's mbarrier at
 * bar's offset. */
static void wg_tma_half(cg_ctx *cx, const wg_kern *k, LLVMValueRef tmap, bool kmajor,
                        LLVMValueRef n0, LLVMValueRef k0, LLVMValueRef dst, LLVMValueRef bar) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef mask = LLVMConstInt(cx->i16, (1u << k->p.mcast) - 1, 0);
    int64_t dn0, dk0, off0, dn1, dk1, off1;
    int nbox = cg_wg_half_box(kmajor, k->p.bn, k->p.bk, 0, 0, &dn0, &dk0, &off0);
    for (int i = 0; i < nbox; i++) {
        /* linear in the rank: rank 0's box plus rank x (rank 1's - rank 0's) */
        cg_wg_half_box(kmajor, k->p.bn, k->p.bk, 0, i, &dn0, &dk0, &off0);
        cg_wg_half_box(kmajor, k->p.bn, k->p.bk, 1, i, &dn1, &dk1, &off1);
        LLVMValueRef dn = LLVMBuildAdd(b, LLVMBuildAdd(b, n0, c32(cx, dn0), ""),
                                       LLVMBuildMul(b, k->rank, c32(cx, dn1 - dn0), ""), "");
        LLVMValueRef dk = LLVMBuildAdd(b, LLVMBuildAdd(b, k0, c32(cx, dk0), ""),
                                       LLVMBuildMul(b, k->rank, c32(cx, dk1 - dk0), ""), "");
        LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildAdd(b, dst, c32(cx, off0), ""),
                                       LLVMBuildMul(b, k->rank, c32(cx, off1 - off0), ""), "");
        LLVMValueRef a[6] = {at, tmap, kmajor ? dk : dn, kmajor ? dn : dk, bar, mask};
        wg_asm(cx, NULL,
               "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes."
               "multicast::cluster [$0], [$1, {$2, $3}], [$4], $5;",
               "r,l,r,r,r,h,~{memory}", a, 6);
    }
}

/* Issues the TMA copies of one operand tile: rows [r0, r0+rows) of the
 * operand's M (or N) axis, k columns [k0, k0+bk), into shared address dst;
 * a tile of K-contiguous boxes narrower than its smem_rows rows of shared
 * memory (the A box of a short M) keeps the smem_rows layout. */
static void wg_tma_tile(cg_ctx *cx, const wg_kern *k, LLVMValueRef tmap, bool kmajor, int64_t rows,
                        int64_t smem_rows, LLVMValueRef r0, LLVMValueRef k0, LLVMValueRef bc,
                        LLVMValueRef dst, LLVMValueRef bar) {
    uint32_t box[2];
    int nbox;
    int64_t bb;
    cg_wg_opnd_box(kmajor, rows, k->p.bk, box, &nbox, &bb);
    if (kmajor) bb = (int64_t)box[0] * smem_rows * 2;
    for (int i = 0; i < nbox; i++) {
        LLVMValueRef c0, c1;
        if (kmajor)
            c0 = LLVMBuildAdd(cx->b, k0, c32(cx, 64 * i), ""), c1 = r0;
        else
            c0 = LLVMBuildAdd(cx->b, r0, c32(cx, 64 * i), ""), c1 = k0;
        LLVMValueRef a[6] = {LLVMBuildAdd(cx->b, dst, c32(cx, bb * i), ""), tmap, c0, c1, bar};
        if (bc) { /* a batched operand: the third coordinate is its batch element */
            a[4] = bc, a[5] = bar;
            wg_asm(cx, NULL,
                   "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::"
                   "bytes [$0], [$1, {$2, $3, $4}], [$5];",
                   "r,l,r,r,r,r,~{memory}", a, 6);
            continue;
        }
        wg_asm(cx, NULL,
               "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
               "[$0], [$1, {$2, "
               "$3}], [$4];",
               "r,l,r,r,r,~{memory}", a, 5);
    }
}

/* The A tile (rows [r0, r0 + bm), k [k0, k0 + bk)) through the 3-D map of
 * merged heads: one box {64 k, bm rows, 1} per 64 k, each inside one head
 * (D is a multiple of 64), coordinates by the map's roles. */
static void wg_tma_tile3(cg_ctx *cx, const wg_kern *k, LLVMValueRef r0, LLVMValueRef k0,
                         LLVMValueRef dst, LLVMValueRef bar) {
    const cg_wg_map3 *m = &k->a_map;
    int64_t bb = (int64_t)64 * k->p.bm * 2;
    for (int i = 0; i < k->p.bk / 64; i++) {
        LLVMValueRef kk = LLVMBuildAdd(cx->b, k0, c32(cx, 64 * i), "");
        LLVMValueRef a[7] = {LLVMBuildAdd(cx->b, dst, c32(cx, bb * i), ""), k->tmap_a};
        /* with batch dims: row r0 of the product is row r0 % a_bs of batch element r0 / a_bs
         * (a tile never straddles two) */
        LLVMValueRef row = k->a_bs ? LLVMBuildURem(cx->b, r0, c32(cx, k->a_bs), "") : r0;
        for (int j = 0; j < 3; j++)
            a[2 + j] = m->role[j] == CG_WG_C_ROW   ? row
                       : m->role[j] == CG_WG_C_KIN ? LLVMBuildURem(cx->b, kk, c32(cx, m->d), "")
                                                   : LLVMBuildUDiv(cx->b, kk, c32(cx, m->d), "");
        if (k->a_bs) {
            a[5] = LLVMBuildUDiv(cx->b, r0, c32(cx, k->a_bs), "");
            a[6] = bar;
            wg_asm(cx, NULL,
                   "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::"
                   "bytes [$0], [$1, {$2, $3, $4, $5}], [$6];",
                   "r,l,r,r,r,r,r,~{memory}", a, 7);
            continue;
        }
        a[5] = bar;
        wg_asm(cx, NULL,
               "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
               "[$0], [$1, {$2, $3, $4}], [$5];",
               "r,l,r,r,r,r,~{memory}", a, 6);
    }
}

/* An i32 / f32 variable in the function's entry block (mem2reg promotes it). */
static LLVMValueRef wg_var(cg_ctx *cx, LLVMTypeRef t, LLVMValueRef init) {
    LLVMBuilderRef tb = LLVMCreateBuilderInContext(cx->llctx);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(cx->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(tb, first);
    else
        LLVMPositionBuilderAtEnd(tb, entry);
    LLVMValueRef v = LLVMBuildAlloca(tb, t, "");
    LLVMDisposeBuilder(tb);
    LLVMBuildStore(cx->b, init, v);
    return v;
}

/* Stage index and phase parity of pipeline step `it` (i32). */
static void wg_stage_of(cg_ctx *cx, const wg_kern *k, LLVMValueRef it, LLVMValueRef *s,
                        LLVMValueRef *par) {
    LLVMValueRef S = c32(cx, k->p.stages);
    *s = LLVMBuildURem(cx->b, it, S, "s");
    *par = LLVMBuildAnd(cx->b, LLVMBuildUDiv(cx->b, it, S, ""), c32(cx, 1), "par");
}

/* for (t = cta; t < ntiles; t += ncta): the persistent tile loop (i64 iv);
 * stream-K: the tiles this CTA's units touch, ua / nk .. ceil(ub / nk). */
static LLVMValueRef wg_tile_loop(cg_ctx *cx, const wg_kern *k, cg_loop *l, LLVMValueRef cta,
                                 LLVMValueRef ncta) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef t;
    if (k->p.streamk) {
        LLVMValueRef t0 = LLVMBuildUDiv(b, k->ua, k->nk, "");
        LLVMValueRef t1 = LLVMBuildUDiv(
            b, LLVMBuildAdd(b, k->ub, LLVMBuildSub(b, k->nk, c32(cx, 1), ""), ""), k->nk, "");
        t = cg_loop_begin(cx, l, LLVMBuildZExt(b, t0, cx->i64, ""),
                          LLVMBuildZExt(b, t1, cx->i64, ""), cg_i64(cx, 1), "tile");
    } else {
        t = cg_loop_begin(cx, l, LLVMBuildZExt(b, cta, cx->i64, ""),
                          LLVMBuildZExt(b, k->ntiles, cx->i64, ""),
                          LLVMBuildZExt(b, ncta, cx->i64, ""), "tile");
    }
    return LLVMBuildTrunc(b, t, cx->i32, "");
}

/* The k steps [*kb, *ke) (i32) of tile t this CTA runs: its split's (k->kb, k->ke), or under
 * stream-K the part of t's units [t nk, (t + 1) nk) inside [ua, ub). */
static void wg_seg(cg_ctx *cx, const wg_kern *k, LLVMValueRef t, LLVMValueRef *kb,
                   LLVMValueRef *ke) {
    LLVMBuilderRef b = cx->b;
    if (!k->p.streamk) {
        *kb = k->kb, *ke = k->ke;
        return;
    }
    LLVMValueRef base = LLVMBuildMul(b, t, k->nk, "");
    LLVMValueRef lo = LLVMBuildSub(b, k->ua, base, ""), hi = LLVMBuildSub(b, k->ub, base, "");
    *kb =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, lo, c32(cx, 0), ""), lo, c32(cx, 0), "kb");
    *ke = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, hi, k->nk, ""), hi, k->nk, "ke");
}

/* The batch coordinate (i32) of operand j (0: A, 1 + h: B of product h) for batch element pb
 * (i32) of the product: pb's index over the product's batch dims (rdim[0 .. nrow - 1)),
 * flattened over the dims the operand has (bmask[j]; 0 on the others). pass_wg_batch_coord is
 * the same arithmetic on known sizes. */
static LLVMValueRef wg_batch_coord(cg_ctx *cx, const wg_kern *k, int j, LLVMValueRef pb) {
    LLVMBuilderRef b = cx->b;
    unsigned nb = k->nrow - 1;
    LLVMValueRef c = c32(cx, 0), stride = c32(cx, 1), rest = pb;
    for (unsigned i = nb; i-- > 0;) {
        if (!(k->bmask[j] >> i & 1u)) continue;
        LLVMValueRef e = LLVMBuildTrunc(b, k->rdim[i], cx->i32, "");
        /* the index of dim i: (pb / the extents below it) % e */
        LLVMValueRef below = c32(cx, 1);
        for (unsigned q = i + 1; q < nb; q++)
            below = LLVMBuildMul(b, below, LLVMBuildTrunc(b, k->rdim[q], cx->i32, ""), "");
        LLVMValueRef idx = LLVMBuildURem(b, LLVMBuildUDiv(b, rest, below, ""), e, "");
        c = LLVMBuildAdd(b, c, LLVMBuildMul(b, idx, stride, ""), "");
        stride = LLVMBuildMul(b, stride, e, "");
    }
    return c;
}

/* The producer: one thread walks the same tiles and k steps as the
 * consumers, waits for a free stage (empty barrier; the first pass over
 * the ring waits on the parity before the barrier's first phase, which
 * returns at once), arms its full barrier with the bytes of both tiles and
 * issues their copies. Out-of-bounds box elements arrive as zeros (and
 * count towards the bytes). */
static void wg_producer(cg_ctx *cx, wg_kern *k, LLVMValueRef cta, LLVMValueRef ncta) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef itv = wg_var(cx, cx->i32, c32(cx, 0));
    cg_loop tl, kl;
    LLVMValueRef t = wg_tile_loop(cx, k, &tl, cta, ncta), pm, pn, pbat;
    wg_tile_coords(cx, k, t, &pm, &pn, &pbat);
    LLVMValueRef m0 = LLVMBuildMul(b, pm, c32(cx, k->p.bm), ""),
                 n0 = LLVMBuildMul(b, pn, c32(cx, k->p.bn), "");
    if (k->p.mcast > 1) /* a phantom tile loads rows that exist (its results are dropped) */
        m0 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, pm, k->ntm, ""), m0, c32(cx, 0), "");
    LLVMValueRef kb, ke, bca = NULL, bcb[CG_MM_MAXH] = {NULL};
    if (k->batched) { /* each operand's batch element of this tile (0 where it broadcasts) */
        bca = wg_batch_coord(cx, k, 0, pbat);
        for (int h = 0; h < k->p.nmm; h++) bcb[h] = wg_batch_coord(cx, k, 1 + h, pbat);
    }
    wg_seg(cx, k, t, &kb, &ke);
    LLVMValueRef kt = cg_loop_begin(cx, &kl, LLVMBuildZExt(b, kb, cx->i64, ""),
                                    LLVMBuildZExt(b, ke, cx->i64, ""), cg_i64(cx, 1), "pk");
    LLVMValueRef k0 = LLVMBuildMul(b, LLVMBuildTrunc(b, kt, cx->i32, ""), c32(cx, k->p.bk), "");
    LLVMValueRef it = LLVMBuildLoad2(b, cx->i32, itv, ""), s, par;
    wg_stage_of(cx, k, it, &s, &par);
    wg_wait(cx, wg_bar(cx, k->empty, s), LLVMBuildXor(b, par, c32(cx, 1), ""));
    LLVMValueRef fb = wg_bar(cx, k->full, s);
    LLVMValueRef ea[2] = {fb, c32(cx, k->p.tx_bytes)};
    wg_asm(cx, NULL, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}", ea,
           2);
    if (k->a3)
        wg_tma_tile3(cx, k, m0, k0, wg_stage_addr(cx, k, s, 0), fb);
    else
        wg_tma_tile(cx, k, k->tmap_a, k->p.a_kmajor, k->p.a_rows, k->p.bm, m0, k0, bca,
                    wg_stage_addr(cx, k, s, 0), fb);
    for (int h = 0; h < k->p.nmm; h++)
        if (k->p.mcast > 1)
            wg_tma_half(cx, k, k->tmap_b[h], k->p.b_kmajor, n0, k0, wg_stage_addr(cx, k, s, 1 + h),
                        fb);
        else
            wg_tma_tile(cx, k, k->tmap_b[h], k->p.b_kmajor, k->p.b_rows, k->p.bn, n0, k0, bcb[h],
                        wg_stage_addr(cx, k, s, 1 + h), fb);
    LLVMBuildStore(b, LLVMBuildAdd(b, it, c32(cx, 1), ""), itv);
    cg_loop_end(cx, &kl);
    cg_loop_end(cx, &tl);
}

/* Builds the "{$0, ..., $n-1}" operand list of n accumulators into buf. */
static void wg_reglist(char *buf, size_t cap, unsigned first, unsigned n) {
    size_t o = (size_t)snprintf(buf, cap, "{");
    for (unsigned i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s$%u", i ? ", " : "", first + i);
    if (o < cap) snprintf(buf + o, cap - o, "}");
}

/* Constraints "=f" x n, then `mid`, then n tied inputs "0".."n-1". */
static void wg_tied(char *buf, size_t cap, unsigned n, const char *mid) {
    size_t o = 0;
    for (unsigned i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s=f", i ? "," : "");
    if (mid[0] && o < cap) o += (size_t)snprintf(buf + o, cap - o, ",%s", mid);
    for (unsigned i = 0; i < n && o < cap; i++) o += (size_t)snprintf(buf + o, cap - o, ",%u", i);
    if (o < cap) snprintf(buf + o, cap - o, ",~{memory}");
}

/* acc[0..n) <- asm(acc) through a struct return. */
static void wg_acc_asm(cg_ctx *cx, LLVMValueRef *acc, unsigned n, const char *text,
                       const char *cons, LLVMValueRef *pre, unsigned npre) {
    LLVMTypeRef ft[128];
    LLVMValueRef args[192];
    for (unsigned i = 0; i < n; i++) ft[i] = cx->f32;
    for (unsigned i = 0; i < npre; i++) args[i] = pre[i];
    for (unsigned i = 0; i < n; i++) args[npre + i] = acc[i];
    LLVMTypeRef st = LLVMStructTypeInContext(cx->llctx, ft, n, 0);
    LLVMValueRef r = wg_asm(cx, st, text, cons, args, npre + n);
    for (unsigned i = 0; i < n; i++) acc[i] = LLVMBuildExtractValue(cx->b, r, i, "");
}

/* The wgmma descriptor (i64) of the tile at shared address sa (i32) with
 * the given leading and stride byte offsets. */
static LLVMValueRef wg_desc_at(cg_ctx *cx, LLVMValueRef sa, uint32_t lbo, uint32_t sbo) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef lo = LLVMBuildLShr(b, LLVMBuildAnd(b, sa, c32(cx, 0x3FFFF), ""), c32(cx, 4), "");
    return LLVMBuildAdd(b, LLVMConstInt(cx->i64, cg_wg_desc(0, lbo, sbo), 0),
                        LLVMBuildZExt(b, lo, cx->i64, ""), "");
}

/* The f32 pair (lo, hi) rounded to the 16-bit dtype dt (f16 or bf16, round to nearest even) and
 * packed as i32, lo in the low half: one cvt.rn.{bf16,f16}x2.f32, the instruction NVPTX makes of
 * two fptrunc into a vector, emitted as such so that LLVM sees 2 instructions per pair, not 5. */
static LLVMValueRef wg_cvt2(cg_ctx *cx, LLVMValueRef lo, LLVMValueRef hi, ir_dtype dt) {
    LLVMValueRef ab[2] = {hi, lo}; /* cvt.rn.{bf16,f16}x2.f32 d, a, b: a in the upper half */
    LLVMValueRef v = cg_call_intrinsic(
        cx, dt == IR_BF16 ? "llvm.nvvm.ff2bf16x2.rn" : "llvm.nvvm.ff2f16x2.rn", false, ab, 2);
    return LLVMBuildBitCast(cx->b, v, cx->i32, "");
}

/* One consumer warpgroup's epilogue of output element (row, col) (i64),
 * in bounds: the accumulator, rounded to the product's dtype, substitutes
 * the product and every region output is computed and stored, or, when
 * vals is not NULL, put in vals[i] for output i as its storage bits (i16
 * for f16/bf16, f32). rounded: acc[] hold the products' values already. */
static bool wg_epi_elem(cg_ctx *cx, wg_kern *k, const LLVMValueRef *acc, LLVMValueRef row,
                        LLVMValueRef col, LLVMValueRef *vals, bool rounded) {
    cg_mm_epi_state *st = k->st;
    const ir_node *mm = &cx->g->nodes[st->mm[0]];
    LLVMValueRef dims[IR_MAX_RANK];
    if (k->batched) row = LLVMBuildAdd(cx->b, row, k->boff, ""); /* the batch element's rows */
    cg_mm_unflatten(cx, row, k->nrow, k->rdim, dims);
    dims[k->nrow] = col;
    unsigned mark = cg_memo_mark(cx);
    cg_index idx = cg_index_from_dims(cx, &mm->shape, dims);
    for (unsigned h = 0; h < st->nmm; h++)
        cx->subst[st->mm[h]] =
            rounded ? acc[h]
                    : cg_convert(cx, acc[h], IR_F32, (ir_dtype)cx->g->nodes[st->mm[h]].dtype);
    bool ok = true;
    for (unsigned i = 0; i < st->nouts && ok; i++) {
        ir_id o = st->outs[i];
        LLVMValueRef ov = cg_emit_value(cx, o, &idx);
        ir_dtype odt = (ir_dtype)cx->g->nodes[o].dtype;
        if (!ov)
            ok = false;
        else if (vals)
            vals[i] = odt == IR_F32 ? ov : cg_f32_to_half(cx, ov, odt);
        else
            cg_store(cx, cg_buf_ptr(cx, o), odt, idx.lin, ov);
    }
    for (unsigned h = 0; h < st->nmm; h++) cx->subst[st->mm[h]] = NULL;
    cg_memo_reset(cx, mark);
    return ok;
}

/* Waits (acquire at cluster scope: data other CTAs wrote before their
 * release arrive) for the phase of parity par of the mbarrier at bar. */
static void wg_wait_cluster(cg_ctx *cx, LLVMValueRef bar, LLVMValueRef par) {
    LLVMValueRef a[2] = {bar, par};
    wg_asm(cx, NULL,
           "{\n.reg .pred p;\nWAITC:\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, "
           "[$0], $1;\n@!p bra WAITC;\n}",
           "r,r,~{memory}", a, 2);
}

/* The shared::cluster address (i32) of shared address a (i32) in the CTA
 * of cluster rank r (i32). */
static LLVMValueRef wg_mapa(cg_ctx *cx, LLVMValueRef a, LLVMValueRef r) {
    LLVMValueRef v[2] = {a, r};
    return wg_asm(cx, cx->i32, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", v, 2);
}

/* Arrives (release at cluster scope) on the mbarrier at shared::cluster
 * address rb. */
static void wg_arrive_remote(cg_ctx *cx, LLVMValueRef rb) {
    wg_asm(cx, NULL, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0];", "r,~{memory}",
           &rb, 1);
}

/* Split-K reduction of one tile (tile counter in *tilev, i32): a rank > 0
 * waits until rank 0 has read its slot for the previous tile (red_free),
 * stores its ntot partial accumulators into its slot in rank 0's shared
 * memory (element (c * ntot + i) * 128 + thread of slot rank - 1) and
 * arrives on rank 0's red_full; rank 0 waits for all of them, adds the
 * slots to acc and arrives on every other rank's red_free. Returns the
 * open if-block of rank 0 (the epilogue goes inside; the caller closes
 * it). */
static LLVMBasicBlockRef wg_split_reduce(cg_ctx *cx, wg_kern *k, LLVMValueRef *acc, unsigned ntot,
                                         LLVMValueRef wgc, LLVMValueRef wtid, LLVMValueRef tilev) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef jt = LLVMBuildLoad2(b, cx->i32, tilev, "");
    LLVMValueRef par = LLVMBuildAnd(b, jt, c32(cx, 1), "");
    int64_t slot = (int64_t)k->p.bm * k->p.bn * k->p.nmm * 4;
    LLVMValueRef mine = LLVMBuildMul(
        b, LLVMBuildAdd(b, LLVMBuildMul(b, wgc, c32(cx, (int64_t)ntot * 128), ""), wtid, ""),
        c32(cx, 4), "");
    LLVMValueRef lead = LLVMBuildICmp(b, LLVMIntEQ, k->rank, c32(cx, 0), "");
    LLVMBasicBlockRef o = cg_if_begin(cx, LLVMBuildNot(b, lead, ""));
    wg_wait_cluster(cx, k->red_free, LLVMBuildXor(b, par, c32(cx, 1), ""));
    LLVMValueRef la = LLVMBuildAdd(
        b, LLVMBuildAdd(b, k->red, mine, ""),
        LLVMBuildMul(b, LLVMBuildSub(b, k->rank, c32(cx, 1), ""), c32(cx, slot), ""), "");
    LLVMValueRef ra = wg_mapa(cx, la, c32(cx, 0));
    for (unsigned i = 0; i < ntot; i++) {
        LLVMValueRef v[2] = {LLVMBuildAdd(b, ra, c32(cx, (int64_t)i * 512), ""), acc[i]};
        wg_asm(cx, NULL, "st.shared::cluster.f32 [$0], $1;", "r,f,~{memory}", v, 2);
    }
    wg_arrive_remote(cx, wg_mapa(cx, k->red_full, c32(cx, 0)));
    cg_if_end(cx, o);
    LLVMBasicBlockRef l = cg_if_begin(cx, lead);
    wg_wait_cluster(cx, k->red_full, par);
    for (int r = 1; r < k->p.splits; r++) {
        LLVMValueRef base = LLVMBuildAdd(b, LLVMBuildAdd(b, k->red, mine, ""),
                                         c32(cx, (int64_t)(r - 1) * slot), "");
        for (unsigned i = 0; i < ntot; i++) {
            LLVMValueRef p = LLVMBuildIntToPtr(
                b, LLVMBuildAdd(b, base, c32(cx, (int64_t)i * 512), ""), cx->sptr, "");
            LLVMValueRef v = LLVMBuildLoad2(b, cx->f32, p, "");
            LLVMSetVolatile(v, 1);
            acc[i] = LLVMBuildFAdd(b, acc[i], v, "");
        }
    }
    for (int r = 1; r < k->p.splits; r++)
        wg_arrive_remote(cx, wg_mapa(cx, k->red_free, c32(cx, r)));
    return l;
}

/* bar.sync 3, n: the named barrier of all n consumer threads (stream-K). */
static void wg_cons_sync(cg_ctx *cx, const wg_kern *k) {
    char t[32];
    snprintf(t, sizeof t, "bar.sync 3, %d;", 128 * k->p.consumers);
    wg_asm(cx, NULL, t, "~{memory}", NULL, 0);
}

/* The address of word w (i32) of the stream-K workspace, plus `off` words (a constant, so
 * that a thread's words share one base register). */
static LLVMValueRef wg_ws_word(cg_ctx *cx, const wg_kern *k, LLVMValueRef w, int64_t off) {
    LLVMValueRef i = LLVMBuildZExt(cx->b, w, cx->i64, "");
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cx->b, cx->f32, k->ws, &i, 1, "");
    if (!off) return p;
    LLVMValueRef o = cg_i64(cx, off);
    return LLVMBuildInBoundsGEP2(cx->b, cx->f32, p, &o, 1, "");
}

/* Stream-K's meeting of tile t's partial sums, after this CTA's k steps [kb, ke) of it
 * (consumer thread `me` = 128 wgc + wtid of n = 128 x consumers): a CTA that did not start the
 * tile (kb > 0: the first tile of its range) stores its accumulators into its workspace slot
 * (word cta x slot + i x n + me for register i: each store instruction of the CTA's threads
 * covers n consecutive words), all consumers meet at the named barrier, and thread 0 releases
 * the CTA's flag (fence.acq_rel.gpu, then a relaxed store of 1). The CTA that started the tile
 * (kb == 0) and did not finish it (ke < nk) adds the slots of the CTAs after it that hold the
 * rest, in order (deterministic), up to the owner of the tile's last unit
 * (pass_wg_sk_owner): per slot thread 0 acquires its flag (spins until 1), barrier, every thread
 * adds its words, barrier, thread 0 clears the flag for the next launch. Returns the open
 * if-block (kb == 0) of the CTA that stores the tile (the epilogue goes inside; the caller
 * closes it). Those CTAs never wait on each other in a cycle: a slot is written at the start of
 * its CTA's range, before that CTA waits on anything, and every CTA of the grid is resident
 * (at most one per SM). */
static LLVMBasicBlockRef wg_sk_fixup(cg_ctx *cx, wg_kern *k, LLVMValueRef *acc, unsigned ntot,
                                     LLVMValueRef wgc, LLVMValueRef wtid, LLVMValueRef t,
                                     LLVMValueRef kb, LLVMValueRef ke) {
    LLVMBuilderRef b = cx->b;
    int64_t n = 128 * k->p.consumers, slot = (int64_t)ntot * n;
    LLVMValueRef me = LLVMBuildAdd(b, LLVMBuildMul(b, wgc, c32(cx, 128), ""), wtid, "me");
    LLVMValueRef zero = LLVMBuildICmp(b, LLVMIntEQ, me, c32(cx, 0), "");
    LLVMValueRef flags = c32(cx, (int64_t)k->p.sk_ctas * slot);
    /* a CTA that did not start the tile: its partial sums into its slot, then its flag */
    LLVMBasicBlockRef o = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntUGT, kb, c32(cx, 0), ""));
    LLVMValueRef mine = LLVMBuildAdd(b, LLVMBuildMul(b, k->cta, c32(cx, slot), ""), me, "");
    for (unsigned i = 0; i < ntot; i++)
        LLVMBuildStore(b, acc[i], wg_ws_word(cx, k, mine, (int64_t)i * n));
    wg_cons_sync(cx, k);
    LLVMBasicBlockRef z = cg_if_begin(cx, zero);
    LLVMValueRef fa =
        LLVMBuildPtrToInt(b, wg_ws_word(cx, k, LLVMBuildAdd(b, flags, k->cta, ""), 0), cx->i64, "");
    wg_asm(cx, NULL, "fence.acq_rel.gpu;\nst.relaxed.gpu.global.u32 [$0], 1;", "l,~{memory}", &fa,
           1);
    cg_if_end(cx, z);
    cg_if_end(cx, o);
    /* the CTA that started the tile adds the others' slots when it did not finish it */
    LLVMBasicBlockRef lead = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, kb, c32(cx, 0), ""));
    LLVMValueRef vars[128];
    for (unsigned i = 0; i < ntot; i++) vars[i] = wg_var(cx, cx->f32, acc[i]);
    LLVMBasicBlockRef part = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, ke, k->nk, ""));
    /* the owner of unit (t + 1) nk - 1: ((t + 1) nk g - 1) / units, in i64 */
    LLVMValueRef end =
        LLVMBuildMul(b, LLVMBuildZExt(b, LLVMBuildAdd(b, t, c32(cx, 1), ""), cx->i64, ""),
                     LLVMBuildZExt(b, k->nk, cx->i64, ""), "");
    LLVMValueRef last = LLVMBuildUDiv(
        b,
        LLVMBuildSub(b, LLVMBuildMul(b, end, LLVMBuildZExt(b, k->ncta, cx->i64, ""), ""),
                     cg_i64(cx, 1), ""),
        LLVMBuildZExt(b, k->units, cx->i64, ""), "");
    cg_loop cl;
    LLVMValueRef c = cg_loop_begin(
        cx, &cl, LLVMBuildAdd(b, LLVMBuildZExt(b, k->cta, cx->i64, ""), cg_i64(cx, 1), ""),
        LLVMBuildAdd(b, last, cg_i64(cx, 1), ""), cg_i64(cx, 1), "skc");
    LLVMValueRef c32v = LLVMBuildTrunc(b, c, cx->i32, "");
    LLVMValueRef fc =
        LLVMBuildPtrToInt(b, wg_ws_word(cx, k, LLVMBuildAdd(b, flags, c32v, ""), 0), cx->i64, "");
    z = cg_if_begin(cx, zero);
    wg_asm(cx, NULL,
           "{\n.reg .pred p;\n.reg .b32 v;\nSKWAIT:\nld.acquire.gpu.global.u32 v, [$0];\n"
           "setp.eq.u32 p, v, 0;\n@p bra SKWAIT;\n}",
           "l,~{memory}", &fc, 1);
    cg_if_end(cx, z);
    wg_cons_sync(cx, k);
    LLVMValueRef theirs = LLVMBuildAdd(b, LLVMBuildMul(b, c32v, c32(cx, slot), ""), me, "");
    for (unsigned i = 0; i < ntot; i++) {
        LLVMValueRef v = LLVMBuildLoad2(b, cx->f32, wg_ws_word(cx, k, theirs, (int64_t)i * n), "");
        LLVMSetVolatile(v, 1);
        LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, cx->f32, vars[i], ""), v, ""),
                       vars[i]);
    }
    wg_cons_sync(cx, k);
    z = cg_if_begin(cx, zero);
    wg_asm(cx, NULL, "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{memory}", &fc, 1);
    cg_if_end(cx, z);
    cg_loop_end(cx, &cl);
    cg_if_end(cx, part);
    for (unsigned i = 0; i < ntot; i++) acc[i] = LLVMBuildLoad2(b, cx->f32, vars[i], "");
    return lead;
}

/* Row and column (i64) of accumulator register 0 of this thread in
 * consumer wgc's rows of tile (pm, pn): row 16 (t/32) + (t%32)/4, column
 * 2 (t%4) (register i adds 8 ((i/2)%2) rows and 8 (i/4) + i%2 columns). */
static void wg_frag_origin(cg_ctx *cx, const wg_kern *k, LLVMValueRef pm, LLVMValueRef pn,
                           LLVMValueRef wgc, LLVMValueRef wtid, LLVMValueRef *r0,
                           LLVMValueRef *q0) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef warp = LLVMBuildUDiv(b, wtid, c32(cx, 32), ""),
                 lane = LLVMBuildURem(b, wtid, c32(cx, 32), "");
    LLVMValueRef r = LLVMBuildAdd(b,
                                  LLVMBuildAdd(b, LLVMBuildMul(b, pm, c32(cx, k->p.bm), ""),
                                               LLVMBuildMul(b, wgc, c32(cx, 64), ""), ""),
                                  LLVMBuildAdd(b, LLVMBuildMul(b, warp, c32(cx, 16), ""),
                                               LLVMBuildUDiv(b, lane, c32(cx, 4), ""), ""),
                                  "");
    LLVMValueRef q =
        LLVMBuildAdd(b, LLVMBuildMul(b, pn, c32(cx, k->p.bn), ""),
                     LLVMBuildMul(b, LLVMBuildURem(b, lane, c32(cx, 4), ""), c32(cx, 2), ""), "");
    *r0 = LLVMBuildZExt(b, r, cx->i64, "");
    *q0 = LLVMBuildZExt(b, q, cx->i64, "");
}

/* The epilogue stored from the registers: every element in bounds (no
 * test along a dim that is a known multiple of the tile) computed and
 * stored by its own thread (outputs that are not dense 16-byte-pitched
 * f16/bf16/f32 matrices, or too many maps). */
static bool wg_epi_direct(cg_ctx *cx, wg_kern *k, const LLVMValueRef *acc, LLVMValueRef pm,
                          LLVMValueRef pn, LLVMValueRef wgc, LLVMValueRef wtid) {
    LLVMBuilderRef b = cx->b;
    unsigned nacc = (unsigned)k->p.bn / 2, nh = (unsigned)k->p.nmm;
    LLVMValueRef r0, q0;
    wg_frag_origin(cx, k, pm, pn, wgc, wtid, &r0, &q0);
    bool ok = true;
    for (unsigned i = 0; i < nacc && ok; i++) {
        LLVMValueRef row = LLVMBuildAdd(b, r0, cg_i64(cx, 8 * ((i / 2) % 2)), "");
        LLVMValueRef col = LLVMBuildAdd(b, q0, cg_i64(cx, 8 * (i / 4) + i % 2), "");
        LLVMValueRef in = LLVMConstInt(LLVMInt1TypeInContext(cx->llctx), 1, 0);
        if (!k->m_full) in = LLVMBuildICmp(b, LLVMIntSLT, row, k->M64, "");
        if (!k->n_full) in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSLT, col, k->N64, ""), "");
        LLVMBasicBlockRef e = k->m_full && k->n_full ? NULL : cg_if_begin(cx, in);
        LLVMValueRef ai[CG_MM_MAXH];
        for (unsigned h = 0; h < nh; h++) ai[h] = acc[h * nacc + i];
        /* [matmul.wgmma.swap]: the accumulators are C^T, element (row, col) is out[col][row] */
        ok = k->p.swap ? wg_epi_elem(cx, k, ai, col, row, NULL, false)
                       : wg_epi_elem(cx, k, ai, row, col, NULL, false);
        if (e) cg_if_end(cx, e);
    }
    return ok;
}

/* min(v, lim - 1) (i64, v >= 0). */
static LLVMValueRef wg_clamp(cg_ctx *cx, LLVMValueRef v, LLVMValueRef lim) {
    LLVMValueRef l1 = LLVMBuildSub(cx->b, lim, cg_i64(cx, 1), "");
    return LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, v, lim, ""), v, l1, "");
}

/* bar.sync id, 128: the named barrier of one consumer warpgroup. */
static void wg_wg_sync(cg_ctx *cx, LLVMValueRef id) {
    wg_asm(cx, NULL, "bar.sync $0, 128;", "r,~{memory}", &id, 1);
}

/* Row part of a unit offset: row * span with the swizzle's xor term of
 * that row, i32 (cg_wg_swz: the term depends only on the row, since the
 * column bytes are below span). */
static void wg_unit_row(cg_ctx *cx, LLVMValueRef row, uint32_t span, LLVMValueRef *base,
                        LLVMValueRef *xr) {
    LLVMBuilderRef b = cx->b;
    *base = LLVMBuildMul(b, row, c32(cx, span), "");
    *xr = LLVMBuildAnd(b, LLVMBuildLShr(b, *base, c32(cx, 3), ""),
                       c32(cx, (int64_t)(span / 16 - 1) << 4), "");
}

/* The staged coalesced stores of one unit of output o (k->epi.coal), after the warpgroup's
 * barrier that follows the slot's writes: thread wtid copies its cols / 2 elements
 * (cg_wg_copy_elem) from the slot at shared address `slot` (i32) to the output at rows m0 ..
 * (i32: the warpgroup's first row in its batch element) and columns c0 .. (i32: the unit's
 * first column) (cg_wg_copy_dst: bounds-checked against M and N unless a known multiple of the
 * tile), 8 trips a loop iteration: 8 shared loads, then 8 stores of the element's bits. */
static void wg_epi_copyout(cg_ctx *cx, const wg_kern *k, unsigned o, LLVMValueRef slot,
                           LLVMValueRef m0, LLVMValueRef c0, LLVMValueRef wtid) {
    LLVMBuilderRef b = cx->b;
    ir_id out = k->st->outs[o];
    ir_dtype odt = (ir_dtype)cx->g->nodes[out].dtype;
    unsigned es = (unsigned)ir_dtype_size(odt), G = (unsigned)k->epi.cols, nseg = G / 32;
    uint32_t span = G * es;
    LLVMTypeRef et = cg_stype(cx, odt);
    LLVMValueRef base = cg_buf_ptr(cx, out);
    LLVMValueRef warp = LLVMBuildUDiv(b, wtid, c32(cx, 32), ""),
                 lane = LLVMBuildURem(b, wtid, c32(cx, 32), "");
    cg_loop l;
    LLVMValueRef it = LLVMBuildTrunc(
        b, cg_loop_begin(cx, &l, cg_i64(cx, 0), cg_i64(cx, G / 16), cg_i64(cx, 1), "co"), cx->i32,
        "");
    LLVMValueRef v[8], lin[8], in[8];
    for (unsigned jj = 0; jj < 8; jj++) {
        LLVMValueRef j = LLVMBuildAdd(b, LLVMBuildMul(b, it, c32(cx, 8), ""), c32(cx, jj), "");
        LLVMValueRef piece = LLVMBuildAdd(b, LLVMBuildMul(b, j, c32(cx, 4), ""), warp, "");
        LLVMValueRef row = LLVMBuildUDiv(b, piece, c32(cx, nseg), "");
        LLVMValueRef col = LLVMBuildAdd(
            b, LLVMBuildMul(b, LLVMBuildURem(b, piece, c32(cx, nseg), ""), c32(cx, 32), ""), lane,
            "");
        LLVMValueRef rb, xr;
        wg_unit_row(cx, row, span, &rb, &xr);
        LLVMValueRef off =
            LLVMBuildAdd(b, rb, LLVMBuildXor(b, LLVMBuildMul(b, col, c32(cx, es), ""), xr, ""), "");
        LLVMValueRef ld = LLVMBuildLoad2(
            b, et, LLVMBuildIntToPtr(b, LLVMBuildAdd(b, slot, off, ""), cx->sptr, ""), "");
        LLVMSetAlignment(ld, es);
        v[jj] = ld;
        LLVMValueRef gr = LLVMBuildAdd(b, m0, row, ""), gc = LLVMBuildAdd(b, c0, col, "");
        in[jj] = LLVMConstInt(cx->i1, 1, 0);
        if (!k->m_full) in[jj] = LLVMBuildICmp(b, LLVMIntSLT, gr, k->M, "");
        if (!k->n_full)
            in[jj] = LLVMBuildAnd(b, in[jj], LLVMBuildICmp(b, LLVMIntSLT, gc, k->N, ""), "");
        LLVMValueRef r64 = LLVMBuildZExt(b, gr, cx->i64, "");
        if (k->batched) r64 = LLVMBuildAdd(b, r64, k->boff, "");
        lin[jj] = LLVMBuildAdd(b, LLVMBuildMul(b, r64, k->N64, ""),
                               LLVMBuildZExt(b, gc, cx->i64, ""), "");
    }
    for (unsigned jj = 0; jj < 8; jj++) {
        LLVMBasicBlockRef e = k->m_full && k->n_full ? NULL : cg_if_begin(cx, in[jj]);
        LLVMValueRef s =
            LLVMBuildStore(b, v[jj], LLVMBuildInBoundsGEP2(b, et, base, &lin[jj], 1, ""));
        LLVMSetAlignment(s, es);
        if (e) cg_if_end(cx, e);
    }
    cg_loop_end(cx, &l);
}

/* The TMA-store epilogue (cg_wg_epi): per column unit of the tile, every
 * output's values of this thread's elements are computed (indices clamped
 * into the matrix where M or N is ragged, so the epilogue's loads stay in
 * bounds; the store clips those elements), then per output: wait for a
 * free slot (thread 0: wait_group.read nbuf - 1; the warpgroup's named
 * barrier), write the unit (stmatrix.x4 of packed pairs, or st.shared.v2.f32),
 * fence.proxy.async, barrier, and thread 0 issues the bulk tensor store of
 * box {cols, 64} at (n0 + unit column, m0) and commits it. *ucv counts the
 * units issued (the slot ring's position). */
static bool wg_epi_staged(cg_ctx *cx, wg_kern *k, const LLVMValueRef *acc, LLVMValueRef pm,
                          LLVMValueRef pn, LLVMValueRef wgc, LLVMValueRef wtid, LLVMValueRef ucv) {
    LLVMBuilderRef b = cx->b;
    const cg_mm_epi_state *st = k->st;
    unsigned nacc = (unsigned)k->p.bn / 2, nh = (unsigned)k->p.nmm, G = (unsigned)k->epi.cols,
             per = G / 2, nb = (unsigned)k->epi.nbuf, no = st->nouts;
    LLVMValueRef r0, q0;
    wg_frag_origin(cx, k, pm, pn, wgc, wtid, &r0, &q0);
    LLVMValueRef rows[2];
    for (int h = 0; h < 2; h++) {
        rows[h] = LLVMBuildAdd(b, r0, cg_i64(cx, 8 * h), "");
        if (!k->m_full) rows[h] = wg_clamp(cx, rows[h], k->M64);
    }
    LLVMValueRef warp = LLVMBuildUDiv(b, wtid, c32(cx, 32), ""),
                 lane = LLVMBuildURem(b, wtid, c32(cx, 32), "");
    LLVMValueRef mat = LLVMBuildUDiv(b, lane, c32(cx, 8), "");
    /* stmatrix row of this thread, and the accumulator rows of its pairs (unit-relative) */
    LLVMValueRef srow = LLVMBuildAdd(
        b,
        LLVMBuildAdd(b, LLVMBuildMul(b, warp, c32(cx, 16), ""),
                     LLVMBuildMul(b, LLVMBuildURem(b, mat, c32(cx, 2), ""), c32(cx, 8), ""), ""),
        LLVMBuildURem(b, lane, c32(cx, 8), ""), "");
    LLVMValueRef scol = LLVMBuildMul(b, LLVMBuildUDiv(b, mat, c32(cx, 2), ""), c32(cx, 16), "");
    LLVMValueRef frow = LLVMBuildAdd(b, LLVMBuildMul(b, warp, c32(cx, 16), ""),
                                     LLVMBuildUDiv(b, lane, c32(cx, 4), ""), "");
    LLVMValueRef fcol = LLVMBuildMul(b, LLVMBuildURem(b, lane, c32(cx, 4), ""), c32(cx, 8), "");
    LLVMValueRef issuer = LLVMBuildICmp(b, LLVMIntEQ, wtid, c32(cx, 0), "");
    LLVMValueRef bar_id = LLVMBuildAdd(b, wgc, c32(cx, 1), "");
    LLVMValueRef slots =
        LLVMBuildAdd(b, k->epi_smem, LLVMBuildMul(b, wgc, c32(cx, nb * k->epi.slot_bytes), ""), "");
    LLVMValueRef m0 = LLVMBuildAdd(b, LLVMBuildMul(b, pm, c32(cx, k->p.bm), ""),
                                   LLVMBuildMul(b, wgc, c32(cx, 64), ""), "");
    LLVMValueRef n0 = LLVMBuildMul(b, pn, c32(cx, k->p.bn), "");
    char wait[64];
    snprintf(wait, sizeof wait, "cp.async.bulk.wait_group.read %u;", nb - 1);
    LLVMTypeRef v2i16 = LLVMVectorType(cx->i16, 2), v2f = LLVMVectorType(cx->f32, 2);
    bool ok = true;
    for (unsigned u = 0; u < (unsigned)k->p.bn / G && ok; u++) {
        LLVMValueRef vals[8][64];
        for (unsigned ii = 0; ii < per && ok; ii++) {
            unsigned i = u * per + ii;
            LLVMValueRef col = LLVMBuildAdd(b, q0, cg_i64(cx, 8 * (i / 4) + i % 2), "");
            if (!k->n_full) col = wg_clamp(cx, col, k->N64);
            LLVMValueRef ai[CG_MM_MAXH], v[8];
            for (unsigned h = 0; h < nh; h++) ai[h] = acc[h * nacc + i];
            ok = wg_epi_elem(cx, k, ai, rows[(i / 2) % 2], col, v, false);
            for (unsigned o = 0; o < no && ok; o++) vals[o][ii] = v[o];
        }
        for (unsigned o = 0; o < no && ok; o++) {
            ir_dtype odt = (ir_dtype)cx->g->nodes[st->outs[o]].dtype;
            unsigned es = (unsigned)ir_dtype_size(odt);
            uint32_t span = G * es;
            LLVMValueRef uc = LLVMBuildLoad2(b, cx->i32, ucv, "");
            LLVMValueRef slot = slots;
            if (nb > 1)
                slot = LLVMBuildAdd(b, slots,
                                    LLVMBuildMul(b, LLVMBuildURem(b, uc, c32(cx, nb), ""),
                                                 c32(cx, k->epi.slot_bytes), ""),
                                    "slot");
            LLVMBasicBlockRef w;
            if (!k->epi.coal) { /* the TMA store of N units ago has read the slot */
                w = cg_if_begin(cx, issuer);
                wg_asm(cx, NULL, wait, "~{memory}", NULL, 0);
                cg_if_end(cx, w);
            }
            wg_wg_sync(cx, bar_id); /* coal: the copy of N units ago has read it */
            if (es == 2) {
                LLVMValueRef base, xr;
                wg_unit_row(cx, srow, span, &base, &xr);
                for (unsigned q = 0; q < G / 16; q++) {
                    LLVMValueRef a[5];
                    LLVMValueRef cb = LLVMBuildAdd(b, scol, c32(cx, 32 * q), "");
                    a[0] = LLVMBuildAdd(b, slot,
                                        LLVMBuildAdd(b, base, LLVMBuildXor(b, cb, xr, ""), ""), "");
                    for (unsigned r = 0; r < 4; r++) {
                        LLVMValueRef pv = LLVMGetUndef(v2i16);
                        pv = LLVMBuildInsertElement(b, pv, vals[o][8 * q + 2 * r], c32(cx, 0), "");
                        pv = LLVMBuildInsertElement(b, pv, vals[o][8 * q + 2 * r + 1], c32(cx, 1),
                                                    "");
                        a[1 + r] = LLVMBuildBitCast(b, pv, cx->i32, "");
                    }
                    wg_asm(cx, NULL,
                           "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
                           "r,r,r,r,r,~{memory}", a, 5);
                }
            } else {
                for (unsigned h = 0; h < 2; h++) {
                    LLVMValueRef base, xr;
                    wg_unit_row(cx, LLVMBuildAdd(b, frow, c32(cx, 8 * h), ""), span, &base, &xr);
                    for (unsigned ii = 2 * h; ii < per; ii += 4) {
                        LLVMValueRef cb = LLVMBuildAdd(b, fcol, c32(cx, 32 * (ii / 4)), "");
                        LLVMValueRef ad = LLVMBuildAdd(
                            b, slot, LLVMBuildAdd(b, base, LLVMBuildXor(b, cb, xr, ""), ""), "");
                        LLVMValueRef pv = LLVMGetUndef(v2f);
                        pv = LLVMBuildInsertElement(b, pv, vals[o][ii], c32(cx, 0), "");
                        pv = LLVMBuildInsertElement(b, pv, vals[o][ii + 1], c32(cx, 1), "");
                        LLVMValueRef s =
                            LLVMBuildStore(b, pv, LLVMBuildIntToPtr(b, ad, cx->sptr, ""));
                        LLVMSetAlignment(s, 8);
                    }
                }
            }
            if (k->epi.coal) {
                wg_wg_sync(cx, bar_id);
                wg_epi_copyout(cx, k, o, slot, m0, LLVMBuildAdd(b, n0, c32(cx, (int64_t)u * G), ""),
                               wtid);
                LLVMBuildStore(b, LLVMBuildAdd(b, uc, c32(cx, 1), ""), ucv);
                continue;
            }
            wg_asm(cx, NULL, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
            wg_wg_sync(cx, bar_id);
            w = cg_if_begin(cx, issuer);
            LLVMValueRef a[5] = {k->tmap_o[o], LLVMBuildAdd(b, n0, c32(cx, (int64_t)u * G), ""), m0,
                                 slot};
            if (k->batched) {
                a[3] = k->pb, a[4] = slot;
                wg_asm(cx, NULL,
                       "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], "
                       "[$4];\ncp.async.bulk.commit_group;",
                       "l,r,r,r,r,~{memory}", a, 5);
            } else {
                wg_asm(cx, NULL,
                       "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], "
                       "[$3];\ncp.async.bulk.commit_group;",
                       "l,r,r,r,~{memory}", a, 4);
            }
            cg_if_end(cx, w);
            LLVMBuildStore(b, LLVMBuildAdd(b, uc, c32(cx, 1), ""), ucv);
        }
    }
    return ok;
}

/* The accumulators of units u0 .. u1 - 1 of the looped epilogue, rounded to their product's
 * dtype two at a time (wg_cvt2): pk[(h * nacc + i) / 2] holds product h's accumulators i, i + 1
 * (nacc = bn / 2 per product, per = cols / 2 per unit). */
static void wg_epi_pack(cg_ctx *cx, const wg_kern *k, const LLVMValueRef *acc, unsigned u0,
                        unsigned u1, LLVMValueRef *pk) {
    unsigned nacc = (unsigned)k->p.bn / 2, per = (unsigned)k->epi.cols / 2;
    for (unsigned h = 0; h < (unsigned)k->p.nmm; h++) {
        ir_dtype pdt = (ir_dtype)cx->g->nodes[k->st->mm[h]].dtype;
        for (unsigned i = h * nacc + u0 * per; i < h * nacc + u1 * per; i += 2)
            pk[i / 2] = wg_cvt2(cx, acc[i], acc[i + 1], pdt);
    }
}

/* Unit uu's share of the looped epilogue's staging: every product's accumulators of the unit,
 * rounded and paired (pk, wg_epi_pack), written by stmatrix.x4 into the product's slot of ring
 * entry set (sbase / sxr: this thread's stmatrix row offset and swizzle term, scol its column). */
static void wg_epi_stage(cg_ctx *cx, const wg_kern *k, const LLVMValueRef *pk, unsigned uu,
                         LLVMValueRef set, LLVMValueRef sbase, LLVMValueRef sxr,
                         LLVMValueRef scol) {
    LLVMBuilderRef b = cx->b;
    unsigned nacc = (unsigned)k->p.bn / 2, nh = (unsigned)k->p.nmm, G = (unsigned)k->epi.cols,
             per = G / 2;
    int64_t slot_b = k->epi.slot_bytes;
    for (unsigned h = 0; h < nh; h++) {
        LLVMValueRef slot = LLVMBuildAdd(b, set, c32(cx, (int64_t)h * slot_b), "");
        for (unsigned q = 0; q < G / 16; q++) {
            LLVMValueRef a[5];
            LLVMValueRef cb = LLVMBuildAdd(b, scol, c32(cx, 32 * q), "");
            a[0] =
                LLVMBuildAdd(b, slot, LLVMBuildAdd(b, sbase, LLVMBuildXor(b, cb, sxr, ""), ""), "");
            for (unsigned r = 0; r < 4; r++)
                a[1 + r] = pk[(h * nacc + uu * per + 8 * q + 2 * r) / 2];
            wg_asm(cx, NULL, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
                   "r,r,r,r,r,~{memory}", a, 5);
        }
    }
}

/* The looped epilogue (cg_wg_epi_plan): per unit, wait for a free ring
 * entry, stage every product's rounded accumulators by stmatrix into its
 * slot, barrier; then one loop over the unit's 16-byte chunks (chunk c =
 * trip x 128 + thread: row c / (cols / 8), columns 8 (c % (cols / 8)) ..
 * + 7) reads the chunk of every product, computes the outputs of its 8
 * elements (indices clamped into the matrix where M or N is ragged) and
 * writes output o's chunk over slot o; fence.proxy.async, barrier, and
 * thread 0 issues one bulk tensor store per output, all in one group. */
static bool wg_epi_looped(cg_ctx *cx, wg_kern *k, const LLVMValueRef *acc, LLVMValueRef pm,
                          LLVMValueRef pn, LLVMValueRef wgc, LLVMValueRef wtid, LLVMValueRef ucv) {
    LLVMBuilderRef b = cx->b;
    const cg_mm_epi_state *st = k->st;
    unsigned nh = (unsigned)k->p.nmm, G = (unsigned)k->epi.cols, nb = (unsigned)k->epi.nbuf,
             no = st->nouts, cpr = G / 8;
    uint32_t span = G * 2;
    int64_t slot_b = k->epi.slot_bytes, set_b = slot_b * k->epi.slots;
    LLVMValueRef warp = LLVMBuildUDiv(b, wtid, c32(cx, 32), ""),
                 lane = LLVMBuildURem(b, wtid, c32(cx, 32), "");
    LLVMValueRef mat = LLVMBuildUDiv(b, lane, c32(cx, 8), "");
    LLVMValueRef srow = LLVMBuildAdd(
        b,
        LLVMBuildAdd(b, LLVMBuildMul(b, warp, c32(cx, 16), ""),
                     LLVMBuildMul(b, LLVMBuildURem(b, mat, c32(cx, 2), ""), c32(cx, 8), ""), ""),
        LLVMBuildURem(b, lane, c32(cx, 8), ""), "");
    LLVMValueRef scol = LLVMBuildMul(b, LLVMBuildUDiv(b, mat, c32(cx, 2), ""), c32(cx, 16), "");
    LLVMValueRef sbase, sxr;
    wg_unit_row(cx, srow, span, &sbase, &sxr);
    LLVMValueRef issuer = LLVMBuildICmp(b, LLVMIntEQ, wtid, c32(cx, 0), "");
    LLVMValueRef bar_id = LLVMBuildAdd(b, wgc, c32(cx, 1), "");
    LLVMValueRef sets =
        LLVMBuildAdd(b, k->epi_smem, LLVMBuildMul(b, wgc, c32(cx, nb * set_b), ""), "");
    LLVMValueRef m0 = LLVMBuildAdd(b, LLVMBuildMul(b, pm, c32(cx, k->p.bm), ""),
                                   LLVMBuildMul(b, wgc, c32(cx, 64), ""), "");
    LLVMValueRef n0 = LLVMBuildMul(b, pn, c32(cx, k->p.bn), "");
    char wait[64];
    snprintf(wait, sizeof wait, "cp.async.bulk.wait_group.read %u;", nb - 1);
    LLVMTypeRef v8i16 = LLVMVectorType(cx->i16, 8), v4i32 = LLVMVectorType(cx->i32, 4);
    bool ok = true;
    /* the units in a runtime loop (one copy of the chunk loop), or unrolled (one copy per unit)
     * where the unit is alone or TX_WG_EPI_UNROLL=1 asks for it (a measurement knob: the A/B of
     * the compile-time change in bench/ctime_gpu.sh) */
    unsigned nu = (unsigned)k->p.bn / G;
    const char *ue = getenv("TX_WG_EPI_UNROLL");
    bool rolled = nu > 1 && !(ue && ue[0] == '1');
    /* rolled: every unit's pairs rounded before the unit loop (the switch cases hold only the
     * stmatrix; where LLVM hoisted the scalar converts before) */
    LLVMValueRef pk[CG_MM_MAXH * 64];
    if (rolled) wg_epi_pack(cx, k, acc, 0, nu, pk);
    cg_loop ul;
    LLVMValueRef uloop =
        rolled ? LLVMBuildTrunc(
                     b, cg_loop_begin(cx, &ul, cg_i64(cx, 0), cg_i64(cx, nu), cg_i64(cx, 1), "eu"),
                     cx->i32, "")
               : NULL;
    for (unsigned rep = 0; rep < (rolled ? 1 : nu) && ok; rep++) {
        LLVMValueRef u = rolled ? uloop : c32(cx, rep);
        LLVMValueRef uc = LLVMBuildLoad2(b, cx->i32, ucv, "");
        LLVMValueRef set = sets; /* this unit's ring entry */
        if (nb > 1)
            set = LLVMBuildAdd(
                b, sets, LLVMBuildMul(b, LLVMBuildURem(b, uc, c32(cx, nb), ""), c32(cx, set_b), ""),
                "set");
        LLVMBasicBlockRef w;
        if (!k->epi.coal) { /* the TMA stores of N units ago have read the entry */
            w = cg_if_begin(cx, issuer);
            wg_asm(cx, NULL, wait, "~{memory}", NULL, 0);
            cg_if_end(cx, w);
        }
        wg_wg_sync(cx, bar_id); /* coal: the copies of N units ago have read it */
        /* the staging of unit u's accumulators: registers cannot be indexed, so in the loop one
         * copy per unit, chosen by a switch (the last unit the default) */
        if (rolled) {
            LLVMBasicBlockRef staged = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "staged");
            LLVMBasicBlockRef last = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "stage");
            LLVMValueRef sw = LLVMBuildSwitch(b, u, last, nu - 1);
            LLVMPositionBuilderAtEnd(b, last);
            for (unsigned uu = nu; uu-- > 0;) {
                if (uu + 1 < nu) {
                    LLVMBasicBlockRef bb =
                        LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "stage");
                    LLVMAddCase(sw, c32(cx, uu), bb);
                    LLVMPositionBuilderAtEnd(b, bb);
                }
                wg_epi_stage(cx, k, pk, uu, set, sbase, sxr, scol);
                LLVMBuildBr(b, staged);
            }
            LLVMPositionBuilderAtEnd(b, staged);
        } else {
            wg_epi_pack(cx, k, acc, rep, rep + 1, pk);
            wg_epi_stage(cx, k, pk, rep, set, sbase, sxr, scol);
        }
        wg_wg_sync(cx, bar_id);
        LLVMValueRef ucol = LLVMBuildMul(b, u, c32(cx, G), ""); /* the unit's first column */
        cg_loop l;
        LLVMValueRef it =
            cg_loop_begin(cx, &l, cg_i64(cx, 0), cg_i64(cx, 64 * cpr / 128), cg_i64(cx, 1), "ep");
        LLVMValueRef c = LLVMBuildAdd(
            b, LLVMBuildMul(b, LLVMBuildTrunc(b, it, cx->i32, ""), c32(cx, 128), ""), wtid, "");
        LLVMValueRef r = LLVMBuildUDiv(b, c, c32(cx, cpr), "");
        LLVMValueRef cc = LLVMBuildURem(b, c, c32(cx, cpr), "");
        LLVMValueRef base, xr;
        wg_unit_row(cx, r, span, &base, &xr);
        LLVMValueRef off = LLVMBuildAdd(
            b, base, LLVMBuildXor(b, LLVMBuildMul(b, cc, c32(cx, 16), ""), xr, ""), "");
        LLVMValueRef pv[CG_MM_MAXH][8];
        for (unsigned h = 0; h < nh; h++) {
            ir_dtype pdt = (ir_dtype)cx->g->nodes[st->mm[h]].dtype;
            LLVMValueRef ad =
                LLVMBuildAdd(b, LLVMBuildAdd(b, set, c32(cx, (int64_t)h * slot_b), ""), off, "");
            LLVMValueRef ld = LLVMBuildLoad2(b, v4i32, LLVMBuildIntToPtr(b, ad, cx->sptr, ""), "");
            LLVMSetAlignment(ld, 16);
            LLVMValueRef hv = LLVMBuildBitCast(b, ld, v8i16, "");
            for (unsigned e = 0; e < 8; e++)
                pv[h][e] = cg_half_to_f32(cx, LLVMBuildExtractElement(b, hv, c32(cx, e), ""), pdt);
        }
        LLVMValueRef row = LLVMBuildZExt(b, LLVMBuildAdd(b, m0, r, ""), cx->i64, "");
        if (!k->m_full) row = wg_clamp(cx, row, k->M64);
        LLVMValueRef col0 = LLVMBuildZExt(
            b,
            LLVMBuildAdd(b, LLVMBuildAdd(b, n0, ucol, ""), LLVMBuildMul(b, cc, c32(cx, 8), ""), ""),
            cx->i64, "");
        LLVMValueRef ov[8][8];
        for (unsigned e = 0; e < 8 && ok; e++) {
            LLVMValueRef col = LLVMBuildAdd(b, col0, cg_i64(cx, e), "");
            if (!k->n_full) col = wg_clamp(cx, col, k->N64);
            LLVMValueRef ai[CG_MM_MAXH], v[8];
            for (unsigned h = 0; h < nh; h++) ai[h] = pv[h][e];
            ok = wg_epi_elem(cx, k, ai, row, col, v, true);
            for (unsigned o = 0; o < no && ok; o++) ov[o][e] = v[o];
        }
        /* packed with shifts and stored by asm: a vector built of the 8 results is a seed of
         * the SLP vectorizer, which then spends most of the optimisation time on the epilogue */
        for (unsigned o = 0; o < no && ok; o++) {
            LLVMValueRef a[5];
            a[0] = LLVMBuildAdd(b, LLVMBuildAdd(b, set, c32(cx, (int64_t)o * slot_b), ""), off, "");
            for (unsigned j = 0; j < 4; j++)
                a[1 + j] =
                    LLVMBuildOr(b, LLVMBuildZExt(b, ov[o][2 * j], cx->i32, ""),
                                LLVMBuildShl(b, LLVMBuildZExt(b, ov[o][2 * j + 1], cx->i32, ""),
                                             c32(cx, 16), ""),
                                "");
            wg_asm(cx, NULL, "st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}", a,
                   5);
        }
        cg_loop_end(cx, &l);
        if (k->epi.coal) { /* every output's unit copied out by the warpgroup */
            wg_wg_sync(cx, bar_id);
            for (unsigned o = 0; o < no; o++)
                wg_epi_copyout(cx, k, o, LLVMBuildAdd(b, set, c32(cx, (int64_t)o * slot_b), ""), m0,
                               LLVMBuildAdd(b, n0, ucol, ""), wtid);
            LLVMBuildStore(b, LLVMBuildAdd(b, uc, c32(cx, 1), ""), ucv);
            continue;
        }
        wg_asm(cx, NULL, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
        wg_wg_sync(cx, bar_id);
        w = cg_if_begin(cx, issuer);
        for (unsigned o = 0; o < no; o++) {
            LLVMValueRef a[5] = {k->tmap_o[o], LLVMBuildAdd(b, n0, ucol, ""), m0,
                                 LLVMBuildAdd(b, set, c32(cx, (int64_t)o * slot_b), "")};
            if (k->batched) {
                a[4] = a[3], a[3] = k->pb;
                wg_asm(cx, NULL,
                       "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], "
                       "[$4];",
                       "l,r,r,r,r,~{memory}", a, 5);
            } else {
                wg_asm(cx, NULL,
                       "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], "
                       "[$3];",
                       "l,r,r,r,~{memory}", a, 4);
            }
        }
        wg_asm(cx, NULL, "cp.async.bulk.commit_group;", "~{memory}", NULL, 0);
        cg_if_end(cx, w);
        LLVMBuildStore(b, LLVMBuildAdd(b, uc, c32(cx, 1), ""), ucv);
    }
    if (rolled) cg_loop_end(cx, &ul);
    return ok;
}

/* Frees a stage after its wgmma have completed, when pred (i1): every
 * consumer thread arrives on the CTA's empty barrier bar; in a multicast
 * cluster lanes 0 and 1 of each warp arrive on bar of cluster rank 0 and 1
 * (both CTAs' consumers must be done before either producer refills it).
 * The remote arrive keeps mbarrier's default CTA-scope release (as
 * CUTLASS's cluster barrier does): the reads it orders are wgmma's,
 * complete at wait_group, and a cluster-scope release would fence every
 * warp at every k step. */
static void wg_release(cg_ctx *cx, const wg_kern *k, LLVMValueRef bar, LLVMValueRef pred,
                       LLVMValueRef wtid) {
    LLVMBuilderRef b = cx->b;
    if (k->p.mcast <= 1) {
        LLVMValueRef pa[2] = {bar, LLVMBuildZExt(b, pred, cx->i32, "")};
        wg_asm(cx, NULL,
               "{\n.reg .pred q;\nsetp.ne.b32 q, $1, 0;\n@q mbarrier.arrive.shared::cta.b64 _, "
               "[$0];\n}",
               "r,r,~{memory}", pa, 2);
        return;
    }
    LLVMValueRef lane = LLVMBuildURem(b, wtid, c32(cx, 32), "");
    LLVMValueRef to = LLVMBuildAnd(b, lane, c32(cx, 1), "");
    pred = LLVMBuildAnd(b, pred, LLVMBuildICmp(b, LLVMIntULT, lane, c32(cx, k->p.mcast), ""), "");
    LLVMValueRef pa[2] = {wg_mapa(cx, bar, to), LLVMBuildZExt(b, pred, cx->i32, "")};
    wg_asm(cx, NULL,
           "{\n.reg .pred q;\nsetp.ne.b32 q, $1, 0;\n@q mbarrier.arrive.shared::cluster.b64 _, "
           "[$0];\n}",
           "r,r,~{memory}", pa, 2);
}

/* A consumer warpgroup (rows 64c .. 64c+63 of each block tile): per k step
 * waits for the stage's full barrier, issues bk/16 wgmma (m64 x bn x 16)
 * into the accumulators, commits, waits for the previous step's group and
 * frees that step's stage; after the last step waits for all and runs the
 * epilogue from the accumulator fragments (thread t of the warpgroup holds
 * rows 16 (t/32) + (t%32)/4 + 8 ((i/2)%2) and columns 8 (i/4) + 2 (t%4) +
 * i%2 of register i). */
static bool wg_consumer(cg_ctx *cx, wg_kern *k, LLVMValueRef cta, LLVMValueRef ncta,
                        LLVMValueRef wgc, LLVMValueRef wtid) {
    LLVMBuilderRef b = cx->b;
    /* nacc accumulators per product, product h's at [h * nacc, (h + 1) * nacc) */
    unsigned nacc = (unsigned)k->p.bn / 2, nh = (unsigned)k->p.nmm, ntot = nacc * nh;
    LLVMValueRef itv = wg_var(cx, cx->i32, c32(cx, 0));
    LLVMValueRef tilev = wg_var(cx, cx->i32, c32(cx, 0)); /* tiles done (split-K phases) */
    LLVMValueRef ucv = wg_var(cx, cx->i32, c32(cx, 0));   /* store units issued (tma_st) */
    uint32_t albo, asbo, akst, blbo, bsbo, bkst;
    cg_wg_opnd_desc(k->p.a_kmajor, k->p.bk, &albo, &asbo, &akst);
    cg_wg_opnd_desc(k->p.b_kmajor, k->p.bk, &blbo, &bsbo, &bkst);
    /* A rows of this warpgroup: 64 rows of 128 B (k-major) or the c-th box (m-major); both 8 KiB
     * per 64 rows */
    LLVMValueRef aoff = LLVMBuildMul(b, wgc, c32(cx, 64 * k->p.bk * 2), "");
    /* one k step is one asm statement (fence, the bk/16 wgmma of every product, commit, wait for
     * the previous step's group): the accumulators pass through LLVM once per step, not once per
     * instruction. Inputs after the ntot accumulators: descriptors (A, B) per product and k
     * slice, then the scale-d flag (1) */
    unsigned nkk = (unsigned)(k->p.bk / 16), ndesc = 2 * nh * nkk;
    char text[16384], cons[2048], tied[2048], regs[1024], mid[256];
    const char *ty = k->dt == IR_BF16 ? "bf16" : "f16";
    size_t o = (size_t)snprintf(
        text, sizeof text, "wgmma.fence.sync.aligned;\n{\n.reg .pred p;\nsetp.ne.b32 p, $%u, 0;\n",
        ntot + ndesc);
    for (unsigned h = 0; h < nh; h++)
        for (unsigned kk = 0; kk < nkk; kk++) {
            unsigned d = ntot + 2 * (h * nkk + kk);
            wg_reglist(regs, sizeof regs, h * nacc, nacc);
            o += (size_t)snprintf(text + o, sizeof text - o,
                                  "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s %s, $%u, $%u, "
                                  "p, 1, 1, %d, %d;\n",
                                  k->p.bn, ty, ty, regs, d, d + 1, k->p.a_kmajor ? 0 : 1,
                                  k->p.b_kmajor ? 0 : 1);
        }
    snprintf(text + o, sizeof text - o,
             "}\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 1;");
    size_t mo = 0;
    for (unsigned i = 0; i < ndesc; i++) mo += (size_t)snprintf(mid + mo, sizeof mid - mo, "l,");
    snprintf(mid + mo, sizeof mid - mo, "r");
    wg_tied(cons, sizeof cons, ntot, mid);
    wg_tied(tied, sizeof tied, ntot, "");

    cg_loop tl, kl;
    LLVMValueRef t = wg_tile_loop(cx, k, &tl, cta, ncta), pm, pn, pbat;
    wg_tile_coords(cx, k, t, &pm, &pn, &pbat);
    k->pb = pbat;
    k->boff = LLVMBuildMul(b, LLVMBuildZExt(b, pbat, cx->i64, ""), k->M64, "boff");
    /* the accumulators are phis of the k loop (zero on entry), not memory: 128 of them would
     * otherwise be 5 x 128 loads and stores for LLVM to promote */
    LLVMValueRef acc[128], accp[128], kb, ke;
    wg_seg(cx, k, t, &kb, &ke);
    LLVMBasicBlockRef kpre = LLVMGetInsertBlock(b);
    LLVMValueRef kt = cg_loop_begin(cx, &kl, LLVMBuildZExt(b, kb, cx->i64, ""),
                                    LLVMBuildZExt(b, ke, cx->i64, ""), cg_i64(cx, 1), "ck");
    {
        LLVMBuilderRef pb = LLVMCreateBuilderInContext(cx->llctx);
        LLVMPositionBuilderBefore(pb, LLVMGetFirstInstruction(kl.head));
        LLVMValueRef zero = cg_f32c(cx, 0);
        for (unsigned i = 0; i < ntot; i++) {
            accp[i] = LLVMBuildPhi(pb, cx->f32, "acc");
            LLVMAddIncoming(accp[i], &zero, &kpre, 1);
        }
        LLVMDisposeBuilder(pb);
    }
    LLVMValueRef it = LLVMBuildLoad2(b, cx->i32, itv, ""), s, par;
    wg_stage_of(cx, k, it, &s, &par);
    wg_wait(cx, wg_bar(cx, k->full, s), par);
    for (unsigned i = 0; i < ntot; i++) acc[i] = accp[i];
    LLVMValueRef sa = LLVMBuildAdd(b, wg_stage_addr(cx, k, s, 0), aoff, "");
    LLVMValueRef da = wg_desc_at(cx, sa, albo, asbo);
    LLVMValueRef pre[2 * CG_MM_MAXH * 4 + 1];
    for (unsigned h = 0; h < nh; h++) {
        LLVMValueRef db = wg_desc_at(cx, wg_stage_addr(cx, k, s, 1 + (int)h), blbo, bsbo);
        for (unsigned kk = 0; kk < nkk; kk++) {
            pre[2 * (h * nkk + kk)] =
                LLVMBuildAdd(b, da, cg_i64(cx, (int64_t)(kk * akst) >> 4), "");
            pre[2 * (h * nkk + kk) + 1] =
                LLVMBuildAdd(b, db, cg_i64(cx, (int64_t)(kk * bkst) >> 4), "");
        }
    }
    pre[ndesc] = c32(cx, 1);
    wg_acc_asm(cx, acc, ntot, text, cons, pre, ndesc + 1);
    /* the previous step's group is complete: free its stage (a predicated arrive, not a branch:
     * a branch here makes LLVM peel the first step, a second copy of the main loop) */
    LLVMValueRef ps, ppar;
    wg_stage_of(cx, k, LLVMBuildSub(b, it, c32(cx, 1), ""), &ps, &ppar);
    wg_release(cx, k, wg_bar(cx, k->empty, ps),
               LLVMBuildICmp(b, LLVMIntSGT, kt, LLVMBuildZExt(b, kb, cx->i64, ""), ""), wtid);
    LLVMBasicBlockRef j;
    LLVMValueRef eb;
    LLVMBuildStore(b, LLVMBuildAdd(b, it, c32(cx, 1), ""), itv);
    LLVMBasicBlockRef klatch = LLVMGetInsertBlock(b);
    for (unsigned i = 0; i < ntot; i++) LLVMAddIncoming(accp[i], &acc[i], &klatch, 1);
    cg_loop_end(cx, &kl);
    for (unsigned i = 0; i < ntot; i++) acc[i] = accp[i];
    wg_acc_asm(cx, acc, ntot, "wgmma.wait_group.sync.aligned 0;", tied, NULL, 0);
    /* free the last step's stage */
    j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntSGT, ke, kb, ""));
    wg_stage_of(cx, k, LLVMBuildSub(b, LLVMBuildLoad2(b, cx->i32, itv, ""), c32(cx, 1), ""), &ps,
                &ppar);
    if (k->p.mcast > 1) {
        wg_release(cx, k, wg_bar(cx, k->empty, ps), LLVMConstInt(cx->i1, 1, 0), wtid);
    } else {
        eb = LLVMBuildIntToPtr(b, wg_bar(cx, k->empty, ps), cx->sptr, "");
        cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.arrive.shared", false, &eb, 1);
    }
    cg_if_end(cx, j);
    LLVMBasicBlockRef lead = NULL;
    if (k->p.splits > 1) lead = wg_split_reduce(cx, k, acc, ntot, wgc, wtid, tilev);
    if (k->p.streamk) lead = wg_sk_fixup(cx, k, acc, ntot, wgc, wtid, t, kb, ke);
    LLVMBasicBlockRef real = NULL; /* a multicast cluster's phantom tile stores nothing */
    if (k->p.mcast > 1) real = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntULT, pm, k->ntm, ""));
    bool ok = k->epi.loop ? wg_epi_looped(cx, k, acc, pm, pn, wgc, wtid, ucv)
              : k->tma_st ? wg_epi_staged(cx, k, acc, pm, pn, wgc, wtid, ucv)
                          : wg_epi_direct(cx, k, acc, pm, pn, wgc, wtid);
    if (real) cg_if_end(cx, real);
    if (lead) cg_if_end(cx, lead);
    if (k->p.splits > 1) {
        LLVMValueRef jt = LLVMBuildLoad2(b, cx->i32, tilev, "");
        LLVMBuildStore(b, LLVMBuildAdd(b, jt, c32(cx, 1), ""), tilev);
    }
    cg_loop_end(cx, &tl);
    if (k->p.splits > 1) { /* the other ranks stay until rank 0 has read their last tile */
        LLVMValueRef jt = LLVMBuildLoad2(b, cx->i32, tilev, "");
        LLVMBasicBlockRef w =
            cg_if_begin(cx, LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, k->rank, c32(cx, 0), ""),
                                         LLVMBuildICmp(b, LLVMIntUGT, jt, c32(cx, 0), ""), ""));
        wg_wait_cluster(cx, k->red_free,
                        LLVMBuildAnd(b, LLVMBuildSub(b, jt, c32(cx, 1), ""), c32(cx, 1), ""));
        cg_if_end(cx, w);
    }
    if (k->tma_st && !k->epi.coal) { /* the last TMA stores have completed before the end */
        LLVMBasicBlockRef w = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, wtid, c32(cx, 0), ""));
        wg_asm(cx, NULL, "cp.async.bulk.wait_group 0;", "~{memory}", NULL, 0);
        cg_if_end(cx, w);
    }
    return ok;
}

/* The dynamic shared memory of the kernel: an external addrspace(3)
 * array; returns the i32 shared address rounded up to 1024 bytes (the
 * 128-byte swizzle atom of TMA and wgmma). */
static LLVMValueRef wg_dyn_smem(cg_ctx *cx) {
    LLVMValueRef gv = cg_extern_shared(cx, "tx_wg_dyn_smem", cx->i8, 1024);
    LLVMValueRef a = LLVMBuildPtrToInt(cx->b, gv, cx->i32, "");
    return LLVMBuildAnd(cx->b, LLVMBuildAdd(cx->b, a, c32(cx, 1023), ""), c32(cx, ~(int64_t)1023),
                        "smem");
}

/* The whole kernel body: barrier set-up by thread 0, then the producer
 * warpgroup (registers given to the consumers with setmaxnreg when the
 * plan says so) and the consumers. */
static bool wg_body(cg_ctx *cx, wg_kern *k) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef tid = cg_thread_id(cx);
    k->smem = wg_dyn_smem(cx);
    k->epi_smem = LLVMBuildAdd(b, k->smem, c32(cx, k->p.stage_bytes * k->p.stages), "epi");
    k->full = LLVMBuildAdd(b, k->epi_smem, c32(cx, k->tma_st ? k->epi.bytes : 0), "full");
    k->empty = LLVMBuildAdd(b, k->full, c32(cx, 8 * CG_WG_MAX_STAGES), "empty");
    k->red_full = LLVMBuildAdd(b, k->empty, c32(cx, 8 * CG_WG_MAX_STAGES), "red_full");
    k->red_free = LLVMBuildAdd(b, k->red_full, c32(cx, 8), "red_free");
    k->red = LLVMBuildAdd(b, k->red_free, c32(cx, 8), "red");
    LLVMBasicBlockRef j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, tid, c32(cx, 0), ""));
    for (int s = 0; s < k->p.stages; s++) {
        LLVMValueRef a[2] = {LLVMBuildIntToPtr(b, wg_bar(cx, k->full, c32(cx, s)), cx->sptr, ""),
                             c32(cx, 1)};
        cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.init.shared", false, a, 2);
        a[0] = LLVMBuildIntToPtr(b, wg_bar(cx, k->empty, c32(cx, s)), cx->sptr, "");
        /* every consumer thread; in a multicast cluster one lane per warp of each CTA */
        a[1] = c32(cx, k->p.mcast > 1 ? 4 * k->p.consumers * k->p.mcast : 128 * k->p.consumers);
        cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.init.shared", false, a, 2);
    }
    if (k->p.splits > 1) { /* rank 0 hears from the consumers of every other rank, they from
                              rank 0's consumers */
        LLVMValueRef a[2] = {LLVMBuildIntToPtr(b, k->red_full, cx->sptr, ""),
                             c32(cx, 128 * k->p.consumers * (k->p.splits - 1))};
        cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.init.shared", false, a, 2);
        a[0] = LLVMBuildIntToPtr(b, k->red_free, cx->sptr, "");
        a[1] = c32(cx, 128 * k->p.consumers);
        cg_call_intrinsic(cx, "llvm.nvvm.mbarrier.init.shared", false, a, 2);
    }
    wg_asm(cx, NULL, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
    cg_if_end(cx, j);
    LLVMValueRef nx = cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.nctaid.x", false, NULL, 0);
    LLVMValueRef ny = cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.nctaid.y", false, NULL, 0);
    LLVMValueRef cta = LLVMBuildAdd(
        b, cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.ctaid.x", false, NULL, 0),
        LLVMBuildMul(b, cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.ctaid.y", false, NULL, 0),
                     nx, ""),
        "cta");
    LLVMValueRef ncta = LLVMBuildMul(b, nx, ny, "ncta");
    k->kb = c32(cx, 0), k->ke = k->nk, k->rank = c32(cx, 0);
    k->cta = cta, k->ncta = ncta;
    if (k->p.streamk) { /* this CTA's units [c units / g, (c + 1) units / g) (pass_wg_sk_first) */
        k->units = LLVMBuildMul(b, k->ntiles, k->nk, "units");
        LLVMValueRef u64 = LLVMBuildZExt(b, k->units, cx->i64, ""),
                     g64 = LLVMBuildZExt(b, ncta, cx->i64, ""),
                     c64 = LLVMBuildZExt(b, cta, cx->i64, "");
        k->ua = LLVMBuildTrunc(b, LLVMBuildUDiv(b, LLVMBuildMul(b, c64, u64, ""), g64, ""), cx->i32,
                               "ua");
        k->ub = LLVMBuildTrunc(
            b,
            LLVMBuildUDiv(b, LLVMBuildMul(b, LLVMBuildAdd(b, c64, cg_i64(cx, 1), ""), u64, ""), g64,
                          ""),
            cx->i32, "ub");
    }
    if (k->p.splits > 1 || k->p.mcast > 1) {
        /* grid (M tiles, splits, N tiles), clusters of (1, splits, 1): rank = %cluster_ctarank
         * (= ctaid.y, the rank mapa names), the
         * cluster x + nx * z walks the tiles, the rank its k range; every barrier of the cluster
         * is initialised before any CTA touches another's */
        wg_asm(cx, NULL,
               "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;",
               "~{memory}", NULL, 0);
        LLVMValueRef nz = cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.nctaid.z", false, NULL, 0);
        LLVMValueRef cz = cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.ctaid.z", false, NULL, 0);
        LLVMValueRef S = c32(cx, k->p.splits);
        k->rank = wg_asm(cx, cx->i32, "mov.u32 $0, %cluster_ctarank;", "=r", NULL, 0);
        cta = LLVMBuildAdd(b,
                           cg_call_intrinsic(cx, "llvm.nvvm.read.ptx.sreg.ctaid.x", false, NULL, 0),
                           LLVMBuildMul(b, cz, nx, ""), "cluster");
        ncta = LLVMBuildMul(b, nx, nz, "nclusters");
        if (k->p.splits > 1) {
            k->kb = LLVMBuildUDiv(b, LLVMBuildMul(b, k->rank, k->nk, ""), S, "kb");
            k->ke = LLVMBuildUDiv(
                b, LLVMBuildMul(b, LLVMBuildAdd(b, k->rank, c32(cx, 1), ""), k->nk, ""), S, "ke");
        }
    } else {
        cg_barrier(cx);
    }
    LLVMValueRef wg = LLVMBuildUDiv(b, tid, c32(cx, 128), "wg");
    LLVMValueRef wtid = LLVMBuildURem(b, tid, c32(cx, 128), "wtid");
    LLVMBasicBlockRef prod = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "producer");
    LLVMBasicBlockRef cons = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "consumer");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "done");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, wg, c32(cx, 0), ""), prod, cons);
    LLVMPositionBuilderAtEnd(b, prod);
    LLVMValueRef nr = c32(cx, CG_WG_PRODUCER_REGS);
    if (k->p.setmaxnreg)
        cg_call_intrinsic(cx, "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32", false, &nr, 1);
    j = cg_if_begin(cx, LLVMBuildICmp(b, LLVMIntEQ, wtid, c32(cx, 0), ""));
    wg_producer(cx, k, cta, ncta);
    cg_if_end(cx, j);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, cons);
    nr = c32(cx, CG_WG_CONSUMER_REGS);
    if (k->p.setmaxnreg)
        cg_call_intrinsic(cx, "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32", false, &nr, 1);
    bool ok = wg_consumer(cx, k, cta, ncta, LLVMBuildSub(b, wg, c32(cx, 1), ""), wtid);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
    /* split-K: no CTA of the cluster exits while another may still touch its shared memory (the
     * protocol's barriers already order this; the cluster barrier makes it explicit, as
     * compute-sanitizer's racecheck requires of distributed shared memory) */
    if (k->p.splits > 1 || k->p.mcast > 1)
        wg_asm(cx, NULL, "barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;",
               "~{memory}", NULL, 0);
    return ok;
}

/* Whether the epilogue of a product mm stores its nouts outputs outs[]
 * through shared memory and TMA (fills e): every output a dense [M, N]
 * f16/bf16/f32 matrix (what cg_store writes at the product's index) whose
 * rows are a known multiple of 16 bytes, extents within TMA's int32
 * coordinates, and all tensor maps within the kernel's 8 grid-constant
 * parameters; and the slots fit (cg_wg_epi_plan). */
static bool wg_epi_tma_ok(const ir_graph *g, const ir_node *mm, const ir_id *outs, unsigned nouts,
                          unsigned nh, const cg_wg_plan *p, cg_wg_epi *e) {
    int w, why, coal;
    bool loop;
    if (!pass_wg_epi_outs(g, mm, outs, nouts, nh, &w, &loop, &why, &coal)) return false;
    unsigned es[8];
    for (unsigned o = 0; o < nouts; o++)
        es[o] = (unsigned)ir_dtype_size((ir_dtype)g->nodes[outs[o]].dtype);
    /* the slots must fit beside the ring the schedule asked for (its stages are the planner's
     * and the cost model's; pass_wg_tile_make counts the same slots); otherwise the registers'
     * stores */
    int64_t lim = cg_mm_smem_limit(CG_SM90A);
    if (!cg_wg_epi_plan(p, es, nouts, 1, lim, e) || e->stages < p->stages) return false;
    /* the looped epilogue when it computes something (an output that is not a product), every
     * output is 16-bit ([matmul.wgmma.epi]: an f32 output keeps the per-register staging), one
     * slot per product holds them and it keeps the ring as deep */
    cg_wg_epi l;
    if (loop && cg_wg_epi_plan(p, es, nouts, nh, lim, &l) && l.stages >= e->stages) {
        *e = l;
        e->loop = true;
    }
    e->coal = coal > 0; /* rows TMA cannot store: the threads copy the slots out */
    return true;
}

/* ---- region entry ------------------------------------------------------------ */

int cg_wg_emit_matmul(cg_ctx *cx, const ir_graph *g, unsigned region, cg_mm_epi_state *st) {
    if (cx->target != CG_SM90A || st->nmm < 1 || st->nmm > CG_MM_MAXH) return -1;
    const ir_node *mm = &g->nodes[st->mm[0]];
    ir_dtype dt = pass_mm_tc_dtype(g, mm);
    unsigned rank = mm->shape.rank;
    if (rank < 2 || (dt != IR_BF16 && dt != IR_F16)) return -1;
    unsigned nh = st->nmm;
    ir_id ia = ir_in(g, mm, 0), ba, bb[CG_MM_MAXH];
    bool ak, bk = false, a3 = false;
    int aperm[3];
    cg_wg_map3 amap;
    if (!pass_wg_opnd(g, region, ia, dt, true, &ba, &ak)) {
        if (!wg_opnd_merged(g, region, ia, dt, 64, &ba, aperm, &amap)) return -1;
        a3 = true, ak = true;
    }
    /* a horizontal region: every product reads the same A value and a B
     * operand of one shape and order (the planner's rule; checked again) */
    bool batched = false;
    for (unsigned h = 0; h < nh; h++) {
        const ir_node *mh = &g->nodes[st->mm[h]];
        bool bkh;
        if (mh->dtype != mm->dtype || pass_mm_tc_dtype(g, mh) != dt ||
            !ir_shape_eq(&mh->shape, &mm->shape) || ir_in(g, mh, 0) != ia ||
            !pass_wg_opnd(g, region, ir_in(g, mh, 1), dt, false, &bb[h], &bkh) ||
            (h > 0 && bkh != bk))
            return -1;
        /* the leading dims fold into M, or [matmul.wgmma.batch] (the planner's rule) */
        bool fold = pass_wg_fold(g, mh, a3 ? IR_NONE : ba, ak, bb[h]);
        if (!fold && (a3 || (h > 0 && !batched) || !pass_wg_batch(g, mh, ia, ir_in(g, mh, 1))))
            return -1;
        if (fold && batched) return -1;
        batched = !fold;
        bk = bkh;
    }
    /* K: A's last dim (a batched A may have fewer dims than the product) */
    ir_dim Nd = mm->shape.dim[rank - 1], Kd = g->nodes[ia].shape.dim[g->nodes[ia].shape.rank - 1];
    if (batched) {
        const char *ev = getenv("TX_WG_BATCH");
        ir_dim md = mm->shape.dim[rank - 2];
        if ((ev && !strcmp(ev, "0")) ||
            !pass_wg_batch_fill_ok(IR_DIM_IS_SYM(md) ? -1 : md, IR_DIM_IS_SYM(Nd) ? -1 : Nd,
                                   IR_DIM_IS_SYM(Kd) ? -1 : Kd))
            return -1;
    }
    /* the product's rows: its leading dims fold into M (pass_wg_fold), mrows their dims */
    int64_t Mv = pass_wg_rows(&mm->shape);
    if (batched) Mv = IR_DIM_IS_SYM(mm->shape.dim[rank - 2]) ? -1 : mm->shape.dim[rank - 2];
    ir_shape mrows = {.rank = (uint8_t)(rank - 1)};
    for (unsigned i = 0; i + 1 < rank; i++) mrows.dim[i] = mm->shape.dim[i];
    wg_kern k;
    memset(&k, 0, sizeof k);
    unsigned nouts = 0, saved = cx->region;
    ir_id outs[8];
    cx->region = region; /* what cg_kernel_begin will set: the outputs it will store */
    for (ir_id i = 0; i < g->n; i++)
        if (cg_is_region_output(cx, i)) {
            if (nouts < 8) outs[nouts] = i;
            nouts++;
        }
    cx->region = saved;
    if (!cg_wg_plan_batch(Mv, IR_DIM_IS_SYM(Nd) ? -1 : Nd, IR_DIM_IS_SYM(Kd) ? -1 : Kd,
                          batched ? pass_wg_nbatch(&mm->shape) : 0, ak, bk, nh, nouts,
                          cg_mm_smem_limit(cx->target), CG_WG_SMS, &g->regions[region].sched, &k.p))
        return -1;
    if (batched && (k.p.splits > 1 || k.p.mcast > 1 || k.p.streamk)) return -1;
    /* [matmul.wgmma.swap]: one plain 2-D product of a K-contiguous A (pass_wg_swap_ok) */
    if (k.p.swap && (nh != 1 || batched || a3 || !ak || k.p.mcast > 1 || k.p.streamk)) return -1;
    k.batched = batched;
    k.dt = dt;
    k.st = st;
    k.a3 = a3;
    k.a_bs = a3 && rank > 2 ? mm->shape.dim[rank - 2] : 0; /* pass_wg_opnd_merged: % 128 == 0 */
    if (k.a_bs && (k.p.bm != 128 || k.a_bs % 128 != 0)) return -1;
    /* the kernel's M and N: the product's, or under swap its N and M */
    int64_t Nv = IR_DIM_IS_SYM(Nd) ? -1 : Nd, kMv = k.p.swap ? Nv : Mv, kNv = k.p.swap ? Mv : Nv;
    k.m_full = kMv > 0 && kMv % k.p.bm == 0;
    k.n_full = kNv >= 0 && kNv % k.p.bn == 0;
    k.tma_st = !k.p.swap && wg_epi_tma_ok(g, mm, outs, nouts, nh, &k.p, &k.epi);
    if (k.tma_st) k.p.stages = k.epi.stages, k.p.smem_bytes = k.epi.smem_bytes;
    if (a3 && !cg_wg_merged_map(aperm, amap.d, k.p.a_rows, &k.a_map)) return -1;
    /* [matmul.wgmma.stage]: operands whose rows TMA cannot read are copied first (the planner
     * priced it: only under its matmul.wgmma schedule) */
    ir_id sbase[1 + CG_MM_MAXH] = {a3 ? IR_NONE : ba};
    for (unsigned h = 0; h < nh; h++) sbase[1 + h] = bb[h];
    int64_t spitch[1 + CG_MM_MAXH];
    unsigned nst = 0;
    for (unsigned i = 0; i < 1 + nh; i++) {
        spitch[i] = 0;
        int64_t vp, vo; /* a column slice is read in place (pass_wg_opnd checked its pitch) */
        if (sbase[i] == IR_NONE || pass_wg_opnd_buf(g, sbase[i], &vp, &vo) != sbase[i]) continue;
        const ir_shape *ss = &g->nodes[sbase[i]].shape;
        int64_t inner = ss->dim[ss->rank - 1];
        int64_t pt = pass_wg_pitch(inner, (int)ir_dtype_size(dt));
        if (pt != inner) spitch[i] = pt, nst++;
    }
    unsigned sid = g->regions[region].sched.id;
    if (nst && sid != PASS_SCH_MATMUL_WGMMA && sid != PASS_SCH_MATMUL_WGMMA_SWAP) return -1;
    unsigned sidx[1 + CG_MM_MAXH]; /* operand -> its entry of cx->stage_temp */
    cx->nstage = 0;
    for (unsigned i = 0; i < 1 + nh; i++) {
        sidx[i] = UINT32_MAX;
        if (!spitch[i]) continue;
        for (unsigned j = 0; j < i; j++)
            if (spitch[j] && sbase[j] == sbase[i]) sidx[i] = sidx[j];
        if (sidx[i] != UINT32_MAX) continue;
        unsigned t;
        if (!cg_stage_emit(cx, region, cx->nstage, sbase[i], spitch[i], &t)) {
            cx->nstage = 0;
            return 0;
        }
        sidx[i] = cx->nstage;
        cx->stage_temp[cx->nstage++] = t;
    }
    /* the kernel takes the tensor maps (A, then each B, then each stored output when the
     * epilogue stores through shared memory) after its buffers and symbols */
    bool omaps = k.tma_st && !k.epi.coal; /* one map per output stored by TMA */
    unsigned nmaps = 1 + nh + (omaps ? nouts : 0);
    cx->ntmap_params = nmaps;
    if (k.p.streamk) { /* the workspace: the partial tiles, then the flags (zero between launches)
                        */
        ir_shape ws = {.rank = 1, .dim = {k.p.ws_floats}};
        unsigned wt = cg_scratch_temp(cx, st->mm[0], IR_F32, &ws);
        cx->temps[wt].staged = true, cx->temps[wt].zeroed = true;
        cx->wstemp = wt + 1;
    }
    /* the looped TMA-store epilogue's kernels have a pipeline of their own; the caller returns
     * to CG_MOD_MAIN */
    cg_use_module(cx, k.tma_st && k.epi.loop ? CG_MOD_WGTMA : CG_MOD_WGMMA);
    bool began = cg_kernel_begin(cx, region, NULL);
    cx->ntmap_params = 0;
    cx->wstemp = 0;
    k.ws = cx->ws_ptr;
    unsigned sbuf[CG_STAGE_MAX];
    memcpy(sbuf, cx->stage_buf, sizeof sbuf);
    cx->nstage = 0;
    if (!began) return 0;
    if (!cg_mm_collect_outs(cx, g, region, st)) return 0;
    if (k.tma_st && (st->nouts != nouts || memcmp(st->outs, outs, nouts * sizeof *outs))) {
        tx_error(cx->diag, "codegen: internal error: matmul region k%u: outputs changed", region);
        return 0;
    }
    cg_kernel *kr = cx->k;
    ir_id bases[1 + CG_MM_MAXH + 8] = {ba};
    bool kmaj[1 + CG_MM_MAXH] = {ak};
    int64_t rows[1 + CG_MM_MAXH] = {k.p.a_rows};
    /* a multicast CTA loads half of each K-contiguous B tile: boxes of bn / 2 rows */
    for (unsigned h = 0; h < nh; h++)
        bases[1 + h] = bb[h], kmaj[1 + h] = bk, rows[1 + h] = bk ? k.p.bn / k.p.mcast : k.p.bn;
    for (unsigned o = 0; omaps && o < nouts; o++) bases[1 + nh + o] = outs[o];
    if (k.p.swap) { /* the kernel's A map is the product's B (its tile bm rows of N), its B map
                       the product's A (b_rows rows of M) */
        bases[0] = bb[0], bases[1] = ba;
        kmaj[0] = bk, kmaj[1] = ak;
        rows[0] = k.p.a_rows, rows[1] = k.p.b_rows;
        unsigned ts = sidx[0];
        sidx[0] = sidx[1], sidx[1] = ts;
        int64_t tp = spitch[0];
        spitch[0] = spitch[1], spitch[1] = tp;
    }
    kr->ntmaps = nmaps;
    kr->tmaps = ir_xcalloc(nmaps, sizeof *kr->tmaps);
    for (unsigned i = 0; i < nmaps; i++) {
        cg_tmap *tm = &kr->tmaps[i];
        tm->buf = UINT32_MAX;
        ir_id vb = i <= nh ? pass_wg_opnd_buf(g, bases[i], &tm->pitch, &tm->offset) : bases[i];
        for (unsigned j = 0; j < kr->nbufs - (k.p.streamk ? 1u : 0u); j++)
            if (kr->bufs[j].value == vb) tm->buf = j;
        if (tm->buf == UINT32_MAX) {
            tx_error(
                cx->diag,
                "codegen: internal error: matmul region k%u reads operand %%%u without a buffer",
                region, bases[i]);
            return 0;
        }
        if (i <= nh && sidx[i] != UINT32_MAX) { /* the staged copy, rows at its pitch */
            tm->buf = sbuf[sidx[i]];
            tm->pitch = spitch[i];
        }
        const ir_node *bn = &g->nodes[bases[i]];
        tm->dtype = (uint8_t)bn->dtype;
        tm->swizzle = 128;
        if (i == 0 && a3) { /* the base [lead..., b0, b1, b2] inner first, then the batch */
            unsigned nb = bn->shape.rank - 3;
            tm->rank = nb ? 4 : 3;
            for (int j = 0; j < 3; j++)
                tm->dim[j] = bn->shape.dim[nb + 2 - j], tm->box[j] = k.a_map.box[j];
            if (nb) {
                tm->box[3] = 1;
                tm->outer.rank = (uint8_t)nb;
                for (unsigned j = 0; j < nb; j++) tm->outer.dim[j] = bn->shape.dim[j];
            }
            continue;
        }
        /* [rows, cols] of a 2-D buffer; a buffer of higher rank (A or an output of a product
         * whose leading dims fold into M) has rows the product of its leading dims ("outer");
         * a B buffer whose leading dims are 1 is its last two. Batched: {cols, rows, batch
         * elements of this buffer} ("outer" its leading dims; 1 for a 2-D operand) */
        unsigned br = bn->shape.rank;
        tm->rank = 2;
        tm->dim[0] = bn->shape.dim[br - 1];
        tm->dim[1] = bn->shape.dim[br - 2];
        if (batched) {
            tm->rank = 3;
            tm->dim[2] = 1, tm->box[2] = 1;
            tm->outer.rank = (uint8_t)(br - 2);
            for (unsigned j = 0; j + 2 < br; j++) tm->outer.dim[j] = bn->shape.dim[j];
        } else if (br > 2 && (i == 0 || i > nh)) {
            tm->outer.rank = (uint8_t)(br - 1);
            for (unsigned j = 0; j + 1 < br; j++) tm->outer.dim[j] = bn->shape.dim[j];
        }
        if (i > nh) { /* a stored output [M, N]: box {cols, 64}, swizzled at its row bytes */
            tm->box[0] = (uint32_t)k.epi.cols, tm->box[1] = 64;
            tm->swizzle = (uint16_t)(k.epi.cols * (int)ir_dtype_size((ir_dtype)bn->dtype));
            continue;
        }
        int nbox;
        int64_t bb2;
        cg_wg_opnd_box(kmaj[i], rows[i], k.p.bk, tm->box, &nbox, &bb2);
    }
    unsigned np = kr->nbufs + kr->nsyms;
    k.tmap_a = LLVMGetParam(cx->fn, np);
    for (unsigned h = 0; h < nh; h++) k.tmap_b[h] = LLVMGetParam(cx->fn, np + 1 + h);
    for (unsigned o = 0; omaps && o < nouts; o++)
        k.tmap_o[o] = LLVMGetParam(cx->fn, np + 1 + nh + o);
    k.nrow = rank - 1;
    for (unsigned i = 0; i < k.nrow; i++) k.rdim[i] = cg_dim(cx, mrows.dim[i]);
    k.M64 = cg_mm_batch_count(cx, k.nrow, k.rdim), k.N64 = cg_dim(cx, Nd);
    if (batched) { /* one batch element's rows; the batch dims below them */
        k.M64 = k.rdim[k.nrow - 1];
        k.nbat = LLVMBuildTrunc(cx->b, cg_mm_batch_count(cx, k.nrow - 1, k.rdim), cx->i32, "nbat");
        unsigned nb = rank - 2;
        for (unsigned j = 0; j < 1 + nh; j++) {
            /* the operand as the product reads it: its leading dims are its base's but for
             * unit dims a reshape inserted or dropped (pass_wg_opnd) */
            const ir_shape *os = &g->nodes[j ? ir_in(g, &g->nodes[st->mm[j - 1]], 1) : ia].shape;
            unsigned on = os->rank - 2u;
            k.bmask[j] = 0;
            for (unsigned i = nb - on; i < nb; i++)
                if (os->dim[i - (nb - on)] != 1) k.bmask[j] |= 1u << i;
        }
    }
    if (k.p.swap) { /* the kernel's extents: the product's N rows of C^T by M columns */
        LLVMValueRef t64 = k.M64;
        k.M64 = k.N64, k.N64 = t64;
    }
    k.M = LLVMBuildTrunc(cx->b, k.M64, cx->i32, "M");
    k.N = LLVMBuildTrunc(cx->b, k.N64, cx->i32, "N");
    k.K = LLVMBuildTrunc(cx->b, cg_dim(cx, Kd), cx->i32, "K");
    LLVMBuilderRef b = cx->b;
    k.ntm = LLVMBuildUDiv(b, LLVMBuildAdd(b, k.M, c32(cx, k.p.bm - 1), ""), c32(cx, k.p.bm), "ntm");
    k.ntn = LLVMBuildUDiv(b, LLVMBuildAdd(b, k.N, c32(cx, k.p.bn - 1), ""), c32(cx, k.p.bn), "ntn");
    k.nk = LLVMBuildUDiv(b, LLVMBuildAdd(b, k.K, c32(cx, k.p.bk - 1), ""), c32(cx, k.p.bk), "nk");
    k.ntml = k.p.mcast > 1 ? LLVMBuildUDiv(b, LLVMBuildAdd(b, k.ntm, c32(cx, k.p.mcast - 1), ""),
                                           c32(cx, k.p.mcast), "ntp")
                           : k.ntm;
    k.ntiles = LLVMBuildMul(b, k.ntml, k.ntn, "ntiles");
    if (batched) k.ntiles = LLVMBuildMul(b, k.ntiles, k.nbat, "ntiles");
    if (!wg_body(cx, &k)) return 0;
    /* the grid over the kernel's M and N tiles (under swap the product's N, then its rows) */
    ir_shape nrows = {.rank = 1, .dim = {Nd}}, wm = k.p.swap ? nrows : mrows,
             wn = k.p.swap ? mrows : nrows;
    ir_shape work[3] = {wm, wn, {.rank = 0}};
    int64_t per[3] = {k.p.bm, k.p.bn, 1};
    if (batched && Mv > 0) { /* batch x M tiles (a ragged M rounds up in every batch element) */
        work[0].dim[rank - 2] = (Mv + k.p.bm - 1) / k.p.bm;
        per[0] = 1;
    }
    int64_t cap[3] = {INT32_MAX, 65535, 1};
    if (k.p.splits > 1) { /* grid (M tiles, splits, N tiles): clusters of (1, splits, 1) */
        work[0] = wm;
        work[1] = (ir_shape){.rank = 1, .dim = {k.p.splits}};
        work[2] = wn;
        per[0] = k.p.bm, per[1] = 1, per[2] = k.p.bn;
        cap[0] = 65535, cap[1] = k.p.splits, cap[2] = 65535;
        kr->cluster = (unsigned)k.p.splits;
    } else if (k.p.mcast > 1) { /* grid (M tile pairs, 2, N tiles), clusters of (1, 2, 1) */
        work[1] = (ir_shape){.rank = 1, .dim = {k.p.mcast}};
        work[2] = (ir_shape){.rank = 1, .dim = {Nd}};
        per[0] = (int64_t)k.p.bm * k.p.mcast, per[1] = 1, per[2] = k.p.bn;
        cap[0] = 65535, cap[1] = k.p.mcast, cap[2] = 65535;
        kr->cluster = (unsigned)k.p.mcast;
    }
    if (k.p.streamk) { /* stream-K: exactly sk_ctas CTAs (the workspace has a slot each) */
        work[0] = (ir_shape){.rank = 1, .dim = {k.p.sk_ctas}};
        work[1] = (ir_shape){.rank = 0};
        per[0] = 1, per[1] = 1;
    }
    unsigned block[3] = {k.p.threads, 1, 1};
    /* split-K and stream-K grids are exact (tiles x splits <= the SMs; the stream-K CTAs):
     * never folded into (persist, 1, 1) */
    kr->persist = k.p.splits > 1 || k.p.streamk ? 0 : k.p.nsm;
    char hs[48] = "";
    if (nh > 1) snprintf(hs, sizeof hs, " h%u", nh);
    if (k.p.splits > 1) snprintf(hs + strlen(hs), sizeof hs - strlen(hs), " sk%d", k.p.splits);
    if (k.p.mcast > 1) snprintf(hs + strlen(hs), sizeof hs - strlen(hs), " mc%d", k.p.mcast);
    if (k.p.streamk) snprintf(hs + strlen(hs), sizeof hs - strlen(hs), " streamk%d", k.p.sk_ctas);
    if (k.tma_st)
        snprintf(hs + strlen(hs), sizeof hs - strlen(hs), " %s%d%s", k.epi.coal ? "cs" : "ts",
                 k.epi.nbuf, k.epi.loop ? "l" : "");
    if (k.p.swap) snprintf(hs + strlen(hs), sizeof hs - strlen(hs), " swap");
    snprintf(kr->tmpl, sizeof kr->tmpl, "wgmma-tma-ws %dx%dx%d s%d %s%s%s%s", k.p.bm, k.p.bn,
             k.p.bk, k.p.stages, ak ? "K" : "M", bk ? "K" : "N", hs,
             a3        ? " a3d"
             : batched ? " bat"
                       : "");
    cg_kernel_end(cx, work, per, cap, block, (unsigned)k.p.smem_bytes);
    return 1;
}

/* ---- building blocks shared with the sm_90a attention kernel (attention.c) ---- */

LLVMValueRef cg_wg_asm(cg_ctx *cx, LLVMTypeRef ret, const char *text, const char *cons,
                       LLVMValueRef *args, unsigned n) {
    return wg_asm(cx, ret, text, cons, args, n);
}

void cg_wg_wait(cg_ctx *cx, LLVMValueRef bar, LLVMValueRef par) { wg_wait(cx, bar, par); }

void cg_wg_acc_asm(cg_ctx *cx, LLVMValueRef *acc, unsigned n, const char *text, const char *cons,
                   LLVMValueRef *pre, unsigned npre) {
    wg_acc_asm(cx, acc, n, text, cons, pre, npre);
}

void cg_wg_reglist(char *buf, size_t cap, unsigned first, unsigned n) {
    wg_reglist(buf, cap, first, n);
}

void cg_wg_tied(char *buf, size_t cap, unsigned n, const char *mid) { wg_tied(buf, cap, n, mid); }

LLVMValueRef cg_wg_var(cg_ctx *cx, LLVMTypeRef t, LLVMValueRef init) { return wg_var(cx, t, init); }

LLVMValueRef cg_wg_dyn_smem(cg_ctx *cx) { return wg_dyn_smem(cx); }
