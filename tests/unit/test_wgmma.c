/* test_wgmma.c - the sm_90a matrix-product kernel (codegen/wgmma.c) without a GPU:
 *
 * - the layout arithmetic against an independent model written here: descriptor bit fields
 *   (PTX ISA "matrix descriptor"), the 128-byte swizzle as the byte-address xor
 *   ((addr >> 7) & 7) << 4, and, for both operand orders, that every element of a tile lands
 *   where TMA writes it (box order, swizzled rows) and where the wgmma canonical layout of the
 *   descriptor (leading/stride byte offsets, k-slice start steps) reads it;
 * - the plan from the shape (tile width filling the SMs, stages within shared memory);
 * - programs compiled for sm_90a: the manifest's tensor maps (buffer, extents, box), the
 *   kernel's parameters (128-byte grid constants), the runtime plan's tensor-map parameters at
 *   bound sizes and the argument checks of the tensor-map encoder; programs outside the
 *   kernel's scope (f32, batched, a symbolic inner extent) keep the mma.sync / SIMT kernels;
 * - the TMA-store epilogue's staging: for every thread, accumulator register and stmatrix /
 *   st.shared.v2 it issues, the element lands in the store unit where TMA's box layout (swizzled
 *   at the unit's row span) has it, against a model of the accumulator fragments, of stmatrix's
 *   thread-to-row-address rule and of the swizzle written here; the slots' shared-memory budget;
 *   the output tensor maps in the manifest and the runtime plan; the outputs it refuses;
 * - ptxas -arch=sm_90a -v on each kernel kind (wgmma with K- and MN-major operands, epilogues
 *   with bias + gelu, residual, two outputs and a cast): no spills, no wgmma serialisation
 *   warnings (C7510/C7508/C7515), 168 registers when the kernel moves registers with setmaxnreg
 *   (skipped with a message when ptxas is absent). */
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

/* The 128-byte swizzle of a byte address inside a 1024-byte-aligned region
 * (CUTLASS Swizzle<3,4,3>: bits 4-6 xor bits 7-9). */
static uint32_t model_swz(uint32_t a) { return a ^ (((a >> 7) & 7u) << 4); }

/* Where TMA puts tile element (mn, k) (mn < rows, k < bk), 16-bit elements:
 * K-contiguous tiles are boxes of {64 k, rows}: row mn, byte 2k (k < 64);
 * MN-contiguous tiles are rows/64 boxes of {64 mn, bk}: box mn/64, row k,
 * byte 2 (mn % 64); each box is rows of 128 bytes, swizzled. */
static uint32_t model_tma(bool kmajor, uint32_t rows, uint32_t bk, uint32_t mn, uint32_t k) {
    if (kmajor) return model_swz(mn * 128 + 2 * k);
    uint32_t box = mn / 64;
    return box * (64 * bk * 2) + model_swz(k * 128 + 2 * (mn % 64));
}

/* Where wgmma reads element (mn, k) of the canonical SW128 layouts of the
 * PTX ISA given the descriptor's start address, leading byte offset (LBO)
 * and stride byte offset (SBO), for the k-slice that starts at k0 (the
 * descriptor of slice k0/16 starts at start + step):
 *   K-major:  ((8, m), (64 k)) : ((128 B, SBO), (2 B))     LBO unused
 *   MN-major: ((64, m), (8, k)) : ((2 B, LBO), (128 B, SBO)) */
static uint32_t model_wgmma(bool kmajor, uint32_t start, uint32_t lbo, uint32_t sbo, uint32_t mn,
                            uint32_t kin) {
    if (kmajor) {
        uint32_t lin = start + (mn / 8) * sbo + (mn % 8) * 128 + 2 * kin;
        /* the start step within a 128-byte row leaves the row's swizzle phase to the address bits
         */
        return model_swz(lin);
    }
    uint32_t lin = start + (mn / 64) * lbo + (kin / 8) * sbo + (kin % 8) * 128 + 2 * (mn % 64);
    return model_swz(lin);
}

/* TMA's swizzle of byte `byte` (< span) of row `row` of a box whose rows are span bytes (64 or
 * 128), in a 1024-byte-aligned buffer: the 16-byte chunk index xor the row's phase, row % 8 for
 * 128-byte rows, (row / 2) % 4 for 64-byte rows (the pattern repeats every 1024 / 512 bytes). */
static uint32_t model_box_swz(uint32_t row, uint32_t byte, uint32_t span) {
    uint32_t phase = span == 128 ? row % 8 : (row / 2) % 4;
    return row * span + (((byte / 16) ^ phase) * 16) + byte % 16;
}

/* The wgmma m64nN accumulator fragment (PTX ISA "wgmma D matrix"): register i of thread t of a
 * warpgroup holds row 16 (t/32) + (t%32)/4 + 8 ((i/2)%2), column 8 (i/4) + 2 (t%4) + i%2. */
static void model_frag(unsigned t, unsigned i, uint32_t *row, uint32_t *col) {
    *row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
    *col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
}

/* Every element of a store unit (64 rows x cols columns of esize bytes) is written exactly once
 * where TMA reads it: 16-bit units by stmatrix.m8n8.x4 (x4 number q of a unit carries
 * accumulator registers 8q .. 8q + 7 as four packed pairs; register m of lane l holds elements
 * (l/4, 2 (l%4) + e) of matrix m, whose row r's address comes from lane 8m + r of the same
 * warp), 32-bit units by st.shared.v2 of register pairs. */
static void check_unit(unsigned cols, unsigned esize) {
    uint32_t span = cols * esize, bytes = 64 * span;
    unsigned char *seen = calloc(bytes, 1);
    assert_non_null(seen);
    for (unsigned t = 0; t < 128; t++)
        for (unsigned ii = 0; ii < cols / 2; ii++) {
            uint32_t row, col, off;
            model_frag(t, ii, &row, &col);
            if (esize == 2) {
                unsigned q = ii / 8, m = (ii % 8) / 2, e = ii % 2, l = t % 32;
                unsigned giver = 32 * (t / 32) + 8 * m + l / 4;
                off = cg_wg_stm_off(giver, q, span) + 2 * (2 * (l % 4) + e);
            } else {
                off = cg_wg_pair_off(t, ii - ii % 2, esize, span) + esize * (ii % 2);
            }
            uint32_t want = model_box_swz(row, col * esize, span);
            if (off != want)
                fail_msg("cols %u esize %u: thread %u register %u (row %u col %u) at %u, TMA %u",
                         cols, esize, t, ii, row, col, off, want);
            assert_true(off + esize <= bytes);
            for (unsigned b = 0; b < esize; b++) assert_int_equal(seen[off + b]++, 0);
        }
    for (uint32_t b = 0; b < bytes; b++) assert_int_equal(seen[b], 1);
    free(seen);
}

/* The looped epilogue's chunks: trip j of thread t reads and writes chunk 128 j + t, 16 bytes
 * that hold the TMA box's elements (row, col .. col + 7), every byte of the unit once. */
static void check_chunks(unsigned cols) {
    uint32_t span = 2 * cols, bytes = 64 * span;
    unsigned char *seen = calloc(bytes, 1);
    assert_non_null(seen);
    for (unsigned c = 0; c < 64 * cols / 8; c++) {
        uint32_t row, col, off;
        cg_wg_chunk(c, cols, &row, &col, &off);
        assert_true(row < 64 && col + 8 <= cols);
        for (unsigned e = 0; e < 8; e++) /* element e: bytes 2e, 2e + 1 of the chunk */
            assert_int_equal(off + 2 * e, model_box_swz(row, 2 * (col + e), span));
        for (unsigned b = 0; b < 16; b++) assert_int_equal(seen[off + b]++, 0);
    }
    for (uint32_t b = 0; b < bytes; b++) assert_int_equal(seen[b], 1);
    free(seen);
}

/* The staged coalesced stores' copy of a unit out of its slot (cg_wg_copy_elem): over the
 * warpgroup's 128 threads and cols / 2 trips each, every element of the 64 x cols unit is read
 * once, from where the writers put it (TMA's box layout, check_unit), and in each trip a warp's
 * 32 lanes read one row's 32 consecutive columns, lane l column c0 + l with c0 a multiple of 32
 * (one contiguous 32-element run of the output row in global memory). */
static void check_copy(unsigned cols, unsigned esize) {
    uint32_t span = cols * esize, bytes = 64 * span;
    unsigned char *seen = calloc(bytes, 1);
    assert_non_null(seen);
    for (unsigned j = 0; j < cols / 2; j++)
        for (unsigned w = 0; w < 4; w++) {
            uint32_t row0 = 0, col0 = 0;
            for (unsigned l = 0; l < 32; l++) {
                unsigned t = 32 * w + l;
                uint32_t row, col, off;
                cg_wg_copy_elem(t, j, cols, esize, &row, &col, &off);
                assert_true(row < 64 && col < cols);
                if (l == 0) row0 = row, col0 = col;
                assert_int_equal(row, row0);
                assert_int_equal(col, col0 + l);
                assert_int_equal(col0 % 32, 0);
                assert_int_equal(off, model_box_swz(row, col * esize, span));
                for (unsigned b = 0; b < esize; b++) assert_int_equal(seen[off + b]++, 0);
            }
        }
    for (uint32_t b = 0; b < bytes; b++) assert_int_equal(seen[b], 1);
    free(seen);
}

/* The copy's destinations over every tile, consumer, unit, thread and trip of a batched output
 * [nb, M, N] cut into bm x bn tiles of 64-row consumers and cols-column units (cg_wg_copy_dst):
 * every element of the output is stored exactly once, nothing outside M x N of its batch
 * element, each at its row-major index b M N + r N + c (a model of the dense output written
 * here from (b, r, c)). */
static void check_copy_dst(int64_t nb, int64_t M, int64_t N, unsigned bm, unsigned bn,
                           unsigned cols, unsigned esize) {
    int64_t total = nb * M * N;
    unsigned char *hit = calloc((size_t)total, 1);
    assert_non_null(hit);
    int64_t ntm = (M + bm - 1) / bm, ntn = (N + bn - 1) / bn;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t pm = 0; pm < ntm; pm++)
            for (int64_t pn = 0; pn < ntn; pn++)
                for (unsigned c = 0; c < bm / 64; c++)
                    for (unsigned u = 0; u < bn / cols; u++)
                        for (unsigned t = 0; t < 128; t++)
                            for (unsigned j = 0; j < cols / 2; j++) {
                                uint32_t row, col, off;
                                cg_wg_copy_elem(t, j, cols, esize, &row, &col, &off);
                                int64_t m0 = pm * bm + 64 * c, n0 = pn * bn + (int64_t)u * cols;
                                int64_t r = m0 + row, cc = n0 + col, lin = -1;
                                bool in = cg_wg_copy_dst(m0, n0, row, col, M, N, b * M, &lin);
                                assert_int_equal(in, r < M && cc < N);
                                if (!in) continue;
                                assert_int_equal(lin, (b * M + r) * N + cc);
                                assert_int_equal(hit[lin]++, 0);
                            }
    for (int64_t i = 0; i < total; i++) assert_int_equal(hit[i], 1);
    free(hit);
}

static void test_epi_coalesced(void **state) {
    (void)state;
    check_copy(64, 2); /* 16-bit outputs: 128-byte slot rows */
    check_copy(32, 2); /* bn 32, or beside an f32 output: 64-byte rows */
    check_copy(32, 4); /* f32 outputs */
    check_copy_dst(3, 130, 1021, 128, 256, 64, 2); /* prime_bmm_f16-like: ragged M and N */
    check_copy_dst(1, 77, 333, 64, 32, 32, 2);
    check_copy_dst(2, 200, 199, 128, 192, 32, 4);
    check_copy_dst(1, 256, 256, 128, 128, 64, 2); /* whole tiles */
}

static void test_epi_staging(void **state) {
    (void)state;
    check_unit(64, 2); /* bf16/f16 outputs: 128-byte rows */
    check_unit(32, 2); /* bn 32, or beside an f32 output: 64-byte rows */
    check_unit(32, 4); /* f32 outputs: 128-byte rows */
    check_chunks(64);
    check_chunks(32);
    /* the general swizzle is the 128-byte one of the operand tiles at span 128 */
    for (uint32_t a = 0; a < 8192; a += 2) {
        assert_int_equal(cg_wg_swz(a, 128), model_swz(a));
        assert_int_equal(cg_wg_swz(a, 64), model_box_swz(a / 64, a % 64, 64));
    }
    /* the slots beside the ring: a plan as cg_wg_plan_for makes it (dynamic shared memory = fixed
     * part + stages x stage bytes) */
    int64_t lim = 227 * 1024, fixed = 1024 + 2 * 8 * CG_WG_MAX_STAGES + 16;
    cg_wg_plan p = {.bm = 128,
                    .bn = 256,
                    .bk = 64,
                    .consumers = 2,
                    .stages = 4,
                    .stage_bytes = (128 + 256) * 128};
    p.smem_bytes = fixed + 4 * p.stage_bytes;
    cg_wg_epi e;
    unsigned bf[3] = {2, 2, 2}, mixed[2] = {2, 4}, bad[1] = {8};
    assert_true(cg_wg_epi_plan(&p, bf, 1, 1, lim, &e));
    assert_int_equal(e.cols, 64);
    assert_int_equal(e.slot_bytes, 8192);
    assert_int_equal(e.nbuf, 2);
    assert_int_equal(e.stages, 4);
    assert_int_equal(e.bytes, 2 * 2 * 8192);
    assert_int_equal(e.smem_bytes, p.smem_bytes + e.bytes);
    assert_true(e.smem_bytes <= lim);
    assert_true(cg_wg_epi_plan(&p, mixed, 2, 1, lim, &e)); /* the f32 output sets 32 columns */
    assert_int_equal(e.cols, 32);
    assert_int_equal(e.slot_bytes, 8192);
    assert_false(cg_wg_epi_plan(&p, bad, 1, 1, lim, &e));
    /* Q/K/V: 128 x (3 x 64), 5 stages leave room for one slot per consumer, not two */
    p.bn = 64, p.stage_bytes = (128 + 3 * 64) * 128, p.stages = 5;
    p.smem_bytes = fixed + 5 * p.stage_bytes;
    assert_true(cg_wg_epi_plan(&p, bf, 3, 1, lim, &e));
    assert_int_equal(e.nbuf, 1);
    assert_int_equal(e.stages, 5);
    assert_true(e.smem_bytes <= lim);
    /* 128 x 128 with 7 stages: two slots cost a stage */
    p.bn = 128, p.stage_bytes = (128 + 128) * 128, p.stages = 7;
    p.smem_bytes = fixed + 7 * p.stage_bytes;
    assert_true(cg_wg_epi_plan(&p, bf, 1, 1, lim, &e));
    assert_int_equal(e.nbuf, 2);
    assert_int_equal(e.stages, 6);
    assert_true(e.smem_bytes <= lim);
    /* one consumer, 32 columns: 4 KiB slots */
    p.bm = 64, p.bn = 32, p.consumers = 1, p.stage_bytes = (64 + 32) * 128, p.stages = 16;
    p.smem_bytes = fixed + 16 * p.stage_bytes;
    assert_true(cg_wg_epi_plan(&p, bf, 1, 1, lim, &e));
    assert_int_equal(e.cols, 32);
    assert_int_equal(e.slot_bytes, 4096);
    assert_int_equal(e.bytes, 2 * 4096);
    assert_int_equal(e.stages, 16);
    /* the looped epilogue of a SwiGLU pair, 128 x (2 x 128), 4 stages: ring entries of two slots;
     * two entries would cost a stage, one does not */
    p.bm = 128, p.bn = 128, p.consumers = 2, p.stage_bytes = (128 + 2 * 128) * 128, p.stages = 4;
    p.smem_bytes = fixed + 4 * p.stage_bytes;
    assert_true(cg_wg_epi_plan(&p, bf, 1, 2, lim, &e));
    assert_int_equal(e.slots, 2);
    assert_int_equal(e.nbuf, 1);
    assert_int_equal(e.stages, 4);
    assert_int_equal(e.bytes, 2 * 1 * 2 * 8192);
    /* 128 x (2 x 64) with 7 stages: both choices cost a stage; one entry of two slots keeps 6,
     * two would keep 5 */
    p.bn = 64, p.stage_bytes = (128 + 2 * 64) * 128, p.stages = 7;
    p.smem_bytes = fixed + 7 * p.stage_bytes;
    assert_true(cg_wg_epi_plan(&p, bf, 1, 2, lim, &e));
    assert_int_equal(e.nbuf, 1);
    assert_int_equal(e.stages, 6);
    assert_true(e.smem_bytes <= lim);
    p.bm = 64, p.bn = 32, p.consumers = 1, p.stage_bytes = (64 + 32) * 128;
    /* too little memory for two stages and a slot */
    p.stages = 2, p.smem_bytes = fixed + 2 * p.stage_bytes;
    assert_false(cg_wg_epi_plan(&p, bf, 1, 1, p.smem_bytes + 1024, &e));
}

static void test_descriptor_bits(void **state) {
    (void)state;
    uint32_t addrs[] = {0, 1024, 16384, 0x3FC00, 0x12340};
    uint32_t offs[][2] = {{16, 1024}, {8192, 1024}, {32768, 2048}};
    for (unsigned i = 0; i < sizeof addrs / sizeof addrs[0]; i++)
        for (unsigned j = 0; j < 3; j++) {
            uint64_t d = cg_wg_desc(addrs[i], offs[j][0], offs[j][1]);
            assert_int_equal(d & 0x3FFF, (addrs[i] & 0x3FFFF) >> 4);
            assert_int_equal((d >> 16) & 0x3FFF, offs[j][0] >> 4);
            assert_int_equal((d >> 32) & 0x3FFF, offs[j][1] >> 4);
            assert_int_equal(d >> 62, 1); /* 128-byte swizzle */
            /* reserved bits 14-15, 30-31, 46-48 and the base offset 49-51 are zero */
            assert_int_equal(d & ((3ull << 14) | (3ull << 30) | (0x3Full << 46) | (0x3FFull << 52)),
                             0);
        }
}

static void test_swizzle(void **state) {
    (void)state;
    unsigned char seen[1024];
    memset(seen, 0, sizeof seen);
    for (uint32_t r = 0; r < 8; r++)
        for (uint32_t b = 0; b < 128; b++) {
            uint32_t a = cg_wg_swz128(r, b);
            assert_int_equal(a, model_swz(r * 128 + b));
            assert_true(a < 1024);
            assert_int_equal(seen[a], 0); /* a permutation of the atom */
            seen[a] = 1;
            assert_int_equal(a / 128, r); /* stays in its row */
        }
    assert_int_equal(cg_wg_swz128(9, 16), 9 * 128 + ((1 ^ 1) << 4)); /* rows repeat every 8 */
}

/* Every element of a tile: TMA's position == wgmma's position for each k slice. */
static void check_layout(bool kmajor, uint32_t rows, uint32_t bk) {
    uint32_t box[2], lbo, sbo, kstep;
    int nbox;
    int64_t bb;
    cg_wg_opnd_box(kmajor, rows, bk, box, &nbox, &bb);
    cg_wg_opnd_desc(kmajor, bk, &lbo, &sbo, &kstep);
    assert_int_equal(box[0] * 2, 128); /* one swizzle row per box row */
    assert_int_equal((int64_t)nbox * bb, (int64_t)rows * bk * 2);
    assert_true(box[0] <= 256 && box[1] <= 256);
    if (kmajor)
        assert_int_equal(box[1], rows);
    else
        assert_int_equal(box[1], bk);
    for (uint32_t mn = 0; mn < rows; mn++)
        for (uint32_t k = 0; k < bk; k++) {
            uint32_t slice = k / 16, kin = k % 16;
            uint32_t start = slice * kstep; /* the consumer's descriptor start for this slice */
            uint32_t want = model_tma(kmajor, rows, bk, mn, k);
            uint32_t got = model_wgmma(kmajor, start, lbo, sbo, mn, kin);
            if (got != want)
                fail_msg("kmajor %d rows %u: element (%u, %u) read at %u, written at %u", kmajor,
                         rows, mn, k, got, want);
        }
    /* the consumer's 64-row slice of a 128-row A tile starts 8 KiB in, either order */
    if (rows == 128) assert_int_equal(model_tma(kmajor, rows, bk, 64, 0), 64 * bk * 2);
}

static void test_layout_both_orders(void **state) {
    (void)state;
    check_layout(true, 128, 64);
    check_layout(true, 256, 64);
    check_layout(true, 64, 64);
    check_layout(true, 32, 64);
    check_layout(false, 128, 64);
    check_layout(false, 256, 64);
    check_layout(false, 64, 64);
}

/* The 3-D map of merged heads against the view's own index arithmetic: for a box issued at
 * (rows r0, k offset k0), box element e (e[j] < box[j], laid out with e[0] fastest) must be the
 * A element (r0 + r, k0 + kk) at the smem offset r * 64 + kk where the kernel's K-major descriptor
 * reads it, for every r < rows, kk < 64; A[m, k] = view[m, k / D, k % D], view =
 * permute(base, perm), and map dim j is base axis 2 - j. */
static void test_merged_map(void **state) {
    (void)state;
    static const int perms[2][3] = {{1, 0, 2}, {0, 1, 2}};
    static const int64_t ds[2] = {64, 128};
    for (int pi = 0; pi < 2; pi++)
        for (int di = 0; di < 2; di++) {
            const int *perm = perms[pi];
            int64_t D = ds[di], rows = 128;
            cg_wg_map3 m;
            assert_true(cg_wg_merged_map(perm, D, rows, &m));
            assert_int_equal(m.box[0] * m.box[1] * m.box[2], 64 * rows);
            for (int64_t r0 = 0; r0 < 256; r0 += 128)
                for (int64_t k0 = 0; k0 < 4 * D; k0 += 64) {
                    int64_t c[3];
                    for (int j = 0; j < 3; j++)
                        c[j] = m.role[j] == CG_WG_C_ROW   ? r0
                               : m.role[j] == CG_WG_C_KIN ? k0 % D
                                                          : k0 / D;
                    for (int64_t r = 0; r < rows; r += 7)
                        for (int64_t kk = 0; kk < 64; kk++) {
                            /* the A element's base index: idx[perm[0]] = m, idx[perm[1]] = k / D,
                             * idx[2] = k % D */
                            int64_t am = r0 + r, ak = k0 + kk, idx[3];
                            idx[perm[0]] = am, idx[perm[1]] = ak / D, idx[2] = ak % D;
                            /* the box element holding it */
                            int64_t e[3];
                            for (int j = 0; j < 3; j++) {
                                e[j] = idx[2 - j] - c[j];
                                assert_true(e[j] >= 0 && e[j] < (int64_t)m.box[j]);
                            }
                            int64_t off =
                                e[0] + (int64_t)m.box[0] * (e[1] + (int64_t)m.box[1] * e[2]);
                            assert_int_equal(off, r * 64 + kk);
                        }
                }
        }
    cg_wg_map3 m;
    int bad[3] = {0, 2, 1}; /* D not contiguous */
    assert_false(cg_wg_merged_map(bad, 128, 128, &m));
    int ok[3] = {1, 0, 2};
    assert_false(cg_wg_merged_map(ok, 96, 128, &m)); /* a 64-wide box would straddle heads */
    assert_false(cg_wg_merged_map(ok, 128, 512, &m));
}

/* The model's tile (no schedule) for nmm products M x N x K storing nouts values. */
static bool plan(int64_t M, int64_t N, int64_t K, bool ak, bool bk, unsigned nmm, unsigned nouts,
                 cg_wg_plan *p) {
    return cg_wg_plan_for(M, N, K, ak, bk, nmm, nouts, 227 * 1024, 132, NULL, p);
}

/* Structural facts every plan keeps: the shared layout fits, the ring is as deep as fits (or one
 * stage less where every CTA runs one tile: the stage trade of [matmul.wgmma.epi]), the
 * accumulator columns stay within the epilogue's register bounds, split-K CTAs fit the SMs. */
static void plan_sane(const cg_wg_plan *p, int64_t M, int64_t N, unsigned nouts) {
    int64_t lim = 227 * 1024;
    assert_int_equal(p->bk, 64);
    assert_int_equal(p->bm, 64 * p->consumers);
    assert_int_equal(p->threads, 128u * (1u + (unsigned)p->consumers));
    assert_int_equal(p->stage_bytes, (int64_t)(p->bm + p->nmm * p->bn) * 64 * 2);
    assert_int_equal(p->stage_bytes % 1024, 0);
    assert_true(p->stages >= 2 && p->stages <= CG_WG_MAX_STAGES);
    assert_true(p->smem_bytes <= lim);
    int64_t tiles = (M + p->bm - 1) / p->bm * ((N + p->bn - 1) / p->bn);
    bool traded = M > 0 && tiles <= 132 && p->splits == 1 && !p->streamk && p->stages >= 4 &&
                  p->smem_bytes + 2 * p->stage_bytes > lim;
    assert_true(p->smem_bytes + p->stage_bytes > lim || p->stages == CG_WG_MAX_STAGES || traded);
    assert_true(p->nmm * p->bn <= (nouts > 1 ? (p->nmm == 1 ? 128 : 192) : 256));
    assert_int_equal(p->red_bytes, (int64_t)(p->splits - 1) * p->bm * p->nmm * p->bn * 4);
    if (M > 0 && p->splits > 1) assert_true(tiles * p->splits <= 132);
    assert_int_equal(p->setmaxnreg, p->nmm * p->bn > 192 && p->consumers == 2);
}

static void test_plan(void **state) {
    (void)state;
    cg_wg_plan p;
    /* a large square product: the widest tile, registers moved to the consumers */
    assert_true(plan(8192, 8192, 8192, true, false, 1, 1, &p));
    plan_sane(&p, 8192, 8192, 1);
    assert_int_equal(p.bm, 128);
    assert_int_equal(p.bn, 256);
    assert_int_equal(p.splits, 1);
    assert_true(p.setmaxnreg);
    /* 2000 x 1000 (K 3000): the old rule's 128x64 tiles (256 tiles, 1.94 waves of tiles at half
     * the intensity of 128x256) are not the model's choice */
    assert_true(plan(2000, 1000, 3000, true, false, 1, 1, &p));
    plan_sane(&p, 2000, 1000, 1);
    assert_true(p.bn >= 128);
    /* a 16-row product: one consumer, the A box moves the 16 rows that exist, and enough CTAs
     * (split-K or narrow tiles) with a deep ring stream B */
    for (int kb = 0; kb < 2; kb++) {
        assert_true(plan(16, 4096, 4096, true, kb, 1, 1, &p));
        plan_sane(&p, 16, 4096, 1);
        assert_int_equal(p.bm, 64);
        assert_int_equal(p.consumers, 1);
        assert_int_equal(p.a_rows, 16);
        assert_int_equal(p.tx_bytes, (16 + p.bn) * 64 * 2);
        assert_true((4096 / p.bn) * p.splits >= 32);
        assert_true(p.stages >= 4);
    }
    /* 16 x 1024 of an N-contiguous B, 16 x 256 of a K-contiguous one: too few tiles to stream B
     * whatever the width: split-K */
    assert_true(plan(16, 1024, 4096, true, false, 1, 1, &p));
    plan_sane(&p, 16, 1024, 1);
    assert_true(p.splits > 1);
    assert_true(plan(16, 256, 16384, true, true, 1, 1, &p));
    plan_sane(&p, 16, 256, 1);
    assert_true(p.splits > 1);
    assert_true(plan(1, 4096, 4096, true, true, 1, 1, &p));
    assert_int_equal(p.a_rows, 8);
    assert_true(plan(200, 4096, 4096, true, true, 1, 1, &p));
    assert_int_equal(p.a_rows, p.bm); /* M >= bm: whole boxes */
    assert_int_equal(p.tx_bytes, p.stage_bytes);
    /* M = 65: 16 column tiles fill 16 of 132 SMs, so the model takes two 64-row tiles of one
     * consumer (32 CTAs, a k step bound by shared memory either way) or one 128-row tile;
     * unknown M counts as large (two consumers, no split) */
    assert_true(plan(65, 4096, 4096, true, true, 1, 1, &p));
    plan_sane(&p, 65, 4096, 1);
    assert_true(p.bm == 64 || p.bm == 128);
    assert_true(plan(-1, 512, 512, true, true, 1, 1, &p));
    assert_int_equal(p.bm, 128);
    assert_int_equal(p.splits, 1);
    assert_true(plan(16, 1024, -1, true, true, 1, 1, &p));
    assert_int_equal(p.splits, 1);
    /* ... nor below 4 k steps a rank */
    assert_true(plan(16, 1024, 256, true, true, 1, 1, &p));
    assert_int_equal(p.splits, 1);
    /* two stored outputs: at most 128 columns (registers) */
    assert_true(plan(8192, 8192, 8192, true, false, 1, 2, &p));
    plan_sane(&p, 8192, 8192, 2);
    /* horizontal: two products sharing A (SwiGLU), one stored value; several products split in
     * at most 2 */
    assert_true(plan(8192, 11008, 4096, true, false, 2, 1, &p));
    plan_sane(&p, 8192, 11008, 1);
    assert_int_equal(p.nmm, 2);
    assert_true(plan(16, 1024, 4096, true, true, 2, 1, &p));
    plan_sane(&p, 16, 1024, 1);
    assert_true(p.splits <= 2);
    /* three products stored (Q, K, V): 3 x 64 columns, 96 accumulators fit the 168 registers */
    assert_true(plan(2048, 4096, 4096, true, false, 3, 3, &p));
    plan_sane(&p, 2048, 4096, 3);
    assert_int_equal(p.bn, 64);
    assert_false(p.setmaxnreg);
    /* four stored products of an N-contiguous B would need 4 x 64 > 192 columns */
    assert_false(plan(2048, 4096, 4096, true, false, 4, 4, &p));
    assert_false(plan(2048, 4096, 4096, true, false, 0, 1, &p));
    /* too little shared memory for two stages */
    assert_false(cg_wg_plan_for(8192, 8192, 8192, true, true, 1, 1, 32 * 1024, 132, NULL, &p));
    /* a schedule's tile is built as named; one outside the space falls back to the model */
    ir_schedule want = {.id = PASS_SCH_MATMUL_WGMMA, .p = {128, 64, 1, 0}};
    assert_true(cg_wg_plan_for(2048, 2048, 512, true, true, 1, 1, 227 * 1024, 132, &want, &p));
    assert_int_equal(p.bn, 64);
    assert_int_equal(p.splits, 1);
    want = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {128, 128, 2, 0}};
    assert_true(cg_wg_plan_for(512, 2048, 4096, true, false, 1, 1, 227 * 1024, 132, &want, &p));
    assert_int_equal(p.bn, 128);
    assert_int_equal(p.splits, 2);
    plan_sane(&p, 512, 2048, 1);
    want =
        (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {128, 32, 1, 0}}; /* 32: K-major B only */
    cg_wg_plan q;
    assert_true(cg_wg_plan_for(2048, 2048, 512, true, false, 1, 1, 227 * 1024, 132, &want, &p));
    assert_true(plan(2048, 2048, 512, true, false, 1, 1, &q));
    assert_int_equal(p.bn, q.bn);
    assert_int_not_equal(p.bn, 32);
}

/* ---- compiled programs --------------------------------------------------- */

static const char *SRC_GELU = "fn f(a: bf16[M, K], b: bf16[K, N], c: bf16[N]) -> bf16[M, N] {\n"
                              "  return gelu_tanh(a @ b + c)\n}\n";
static const char *SRC_LIN = "fn f(x: f16[M, K], w: f16[N, K], r: f16[M, N]) -> f16[M, N] {\n"
                             "  return x @ transpose(w, 0, 1) + r\n}\n";
static const char *SRC_TWO = "fn f(a: bf16[K, M], b: bf16[K, N]) -> (bf16[M, N], f32[M, N]) {\n"
                             "  y = transpose(a, 0, 1) @ b\n  return y, f32(silu(y))\n}\n";

static const char *SRC_SWIGLU =
    "fn f(x: bf16[M, K], w1: bf16[K, N], w3: bf16[K, N]) -> bf16[M, N] {\n"
    "  return silu(x @ w1) * (x @ w3)\n}\n";
static const char *SRC_QKV =
    "fn f(x: f16[M, K], wq: f16[N, K], wk: f16[N, K], wv: f16[N, K]) -> (f16[M, N], f16[M, N], "
    "f16[M, N]) {\n  return x @ transpose(wq, 0, 1), x @ transpose(wk, 0, 1), x @ transpose(wv, 0, "
    "1)\n}\n";

/* A horizontal region (products sharing A) is one wgmma kernel: the A map, then one B map per
 * product over that product's own buffer, in product order. */
/* The tile space of one shape against arithmetic written here: which block tiles exist (128
 * rows, 64 rows for M <= 64 and beside them up to M = 512 at <= 128 columns, 192 columns never in a
 * multicast pair), the tile count of each (M tiles of a pair rounded up to pairs), consumers, the
 * stage's bytes and that the ring and its slots fit the shared memory. */
static void space_model(int64_t M, int64_t N, int64_t K, int nmm, bool bk) {
    pass_wg_shape s = {.M = M,
                       .N = N,
                       .K = K,
                       .a_kmajor = true,
                       .b_kmajor = bk,
                       .nmm = nmm,
                       .nouts = 1,
                       .smem = 232448,
                       .sms = 132};
    pass_wg_tile t[PASS_WG_SPACE];
    unsigned n = pass_wg_space(&s, t, PASS_WG_SPACE);
    assert_true(n >= 1 && n <= PASS_WG_SPACE);
    bool has192 = false, has64 = false, has128 = false;
    for (unsigned i = 0; i < n; i++) {
        int64_t rows = (int64_t)t[i].bm * t[i].mcast;
        assert_true(t[i].bm == 64 || t[i].bm == 128);
        assert_int_equal(t[i].consumers, t[i].bm / 64);
        if (t[i].bm == 64) assert_true(M > 0 && (M <= 64 || (M <= 512 && t[i].bn <= 128)));
        if (t[i].bm == 128) assert_true(M < 0 || M > 64);
        assert_true(t[i].bn == 256 || t[i].bn == 192 || t[i].bn == 128 || t[i].bn == 64 ||
                    (t[i].bn == 32 && bk));
        assert_true(nmm * t[i].bn <= 256);
        if (t[i].bn == 192) assert_int_equal(t[i].mcast, 1);
        if (t[i].mcast > 1) assert_true(t[i].splits == 1 && t[i].bm == 128);
        if (M > 0 && N > 0) {
            int64_t mt = (M + t[i].bm - 1) / t[i].bm;
            mt = (mt + t[i].mcast - 1) / t[i].mcast * t[i].mcast;
            assert_int_equal(t[i].tiles, mt * ((N + t[i].bn - 1) / t[i].bn));
        }
        assert_int_equal(t[i].stage_bytes, (t[i].bm + nmm * t[i].bn) * 64 * 2);
        assert_true(t[i].stages >= 2 && t[i].stages <= PASS_WG_MAX_STAGES);
        assert_true(t[i].smem_bytes <= s.smem);
        assert_true(t[i].smem_bytes >= t[i].stages * t[i].stage_bytes);
        has192 = has192 || (t[i].bn == 192 && t[i].bm == 128 && t[i].splits == 1);
        has64 = has64 || (t[i].bm == 64 && rows == 64);
        has128 = has128 || t[i].bm == 128;
        (void)rows;
    }
    assert_int_equal(has192, (M < 0 || M > 64) && nmm == 1);
    assert_int_equal(has64, M > 0 && M <= 512);
    assert_int_equal(has128, M < 0 || M > 64);
}

static void test_tile_space(void **state) {
    (void)state;
    static const int64_t Ms[] = {1, 16, 64, 65, 100, 200, 300, 512, 513, 1000, 3000, -1};
    static const int64_t Ns[] = {100, 1000, 5000};
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++)
            for (int nmm = 1; nmm <= 2; nmm++) {
                space_model(Ms[i], Ns[j], 3000, nmm, false);
                space_model(Ms[i], Ns[j], 1024, nmm, true);
            }
    /* 300 x 5000: 3 x 27 = 81 tiles of 128x192 fill more SMs than 60 of 128x256 */
    pass_wg_shape s = {.M = 300,
                       .N = 5000,
                       .K = 3000,
                       .a_kmajor = true,
                       .nmm = 1,
                       .nouts = 1,
                       .smem = 232448,
                       .sms = 132};
    pass_wg_tile t;
    assert_true(pass_wg_tile_make(&s, 128, 192, 1, &t));
    assert_int_equal(t.tiles, 81);
    assert_int_equal(t.ctas, 81);
    assert_true(pass_wg_tile_make(&s, 64, 128, 1, &t));
    assert_int_equal(t.tiles, 5 * 40);
    assert_false(pass_wg_tile_make(&s, 64, 192, 1, &t));  /* one consumer: up to 128 columns */
    assert_false(pass_wg_tile_make(&s, 256, 192, 1, &t)); /* no 192-column multicast pair */
    s.a_merged = true;                                    /* a merged-heads A keeps 128-row boxes */
    assert_false(pass_wg_tile_make(&s, 64, 256, 1, &t));
    s.a_merged = false, s.M = 513;
    assert_false(pass_wg_tile_make(&s, 64, 256, 1, &t));
    /* TX_WG_TILE pins one tile where the shape has it, else leaves the space whole */
    pass_wg_tile sp[PASS_WG_SPACE];
    s.M = 300;
    unsigned all = pass_wg_space(&s, sp, PASS_WG_SPACE);
    setenv("TX_WG_TILE", "64x128", 1);
    unsigned n = pass_wg_space(&s, sp, PASS_WG_SPACE);
    assert_int_equal(n, 1);
    assert_true(sp[0].bm == 64 && sp[0].bn == 128 && sp[0].splits == 1);
    setenv("TX_WG_TILE", "48x48", 1);
    assert_int_equal(pass_wg_space(&s, sp, PASS_WG_SPACE), all);
    /* the stage trade: 81 tiles of 128x192 on 81 CTAs, one tile each: 4 stages and two store
     * entries per consumer instead of 5 and one; not where CTAs run several tiles, nor with
     * TX_WG_EPI_TRADE=0 */
    s.epi_es = 2;
    assert_true(pass_wg_tile_make(&s, 128, 192, 1, &t));
    assert_int_equal(t.stages, 4);
    assert_int_equal(t.epi_nbuf, 2);
    setenv("TX_WG_EPI_TRADE", "0", 1);
    assert_true(pass_wg_tile_make(&s, 128, 192, 1, &t));
    assert_int_equal(t.stages, 5);
    assert_int_equal(t.epi_nbuf, 1);
    unsetenv("TX_WG_EPI_TRADE");
    s.M = 3000; /* 24 x 27 tiles */
    assert_true(pass_wg_tile_make(&s, 128, 192, 1, &t));
    assert_int_equal(t.stages, 5);
    assert_int_equal(t.epi_nbuf, 1);
    s.M = 300;
    assert_true(pass_wg_tile_make(&s, 128, 128, 1, &t)); /* 7 stages leave no room for an entry */
    assert_int_equal(t.stages, 7);
    assert_int_equal(t.epi_nbuf, 0);
    s.epi_es = 0;
    setenv("TX_WG_TILE", "128x256k0", 1); /* the stream-K form of a tile */
    n = pass_wg_space(&s, sp, PASS_WG_SPACE);
    assert_int_equal(n, 1);
    assert_true(sp[0].bm == 128 && sp[0].bn == 256 && sp[0].splits == 0);
    unsetenv("TX_WG_TILE");
}

static void test_horizontal_tmaps(void **state) {
    (void)state;
    fe_define defs[3] = {{"M", 1000}, {"K", 520}, {"N", 1000}};
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_SWIGLU, CG_SM90A, defs, 3, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma"));
    assert_non_null(strstr(k->tmpl, " h2"));
    /* A, w1, w3, then the output when the store slots fit beside the scheduled ring */
    assert_int_equal(k->ntmaps, 3 + (strstr(k->tmpl, " ts") != NULL));
    assert_int_equal(k->bufs[k->tmaps[0].buf].index, 0);
    /* the B maps: w1 and w3, one each (in the region's product order) */
    assert_int_equal(k->bufs[k->tmaps[1].buf].index + k->bufs[k->tmaps[2].buf].index, 3);
    assert_int_not_equal(k->tmaps[1].buf, k->tmaps[2].buf);
    for (unsigned i = 1; i < 3; i++) {
        assert_int_equal(k->tmaps[i].dim[0], 1000);
        assert_int_equal(k->tmaps[i].dim[1], 520);
        assert_int_equal(k->tmaps[i].box[0], 64);
        assert_int_equal(k->tmaps[i].box[1], 64);
    }
    /* two accumulator sets: bn columns each; 2 x (bk / 16) wgmma per k step */
    const char *ptx = cg_program_ptx(p, NULL);
    unsigned n = 0;
    for (const char *q = ptx; (q = strstr(q, "wgmma.mma_async")) != NULL; q++) n++;
    assert_int_equal(n, 2 * 64 / 16);
    cg_program_free(p);
    ir_graph_free(g);
    fe_define d3[3] = {{"M", 300}, {"K", 256}, {"N", 4096}};
    p = tk_compile_src(SRC_QKV, CG_SM90A, d3, 3, NULL);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, " h3"));
    /* A, three weights, then three outputs when the slots fit */
    assert_int_equal(k->ntmaps, 4 + 3 * (strstr(k->tmpl, " ts") != NULL));
    unsigned seen = 0;
    for (unsigned i = 1; i < 4; i++) {
        seen |= 1u << k->bufs[k->tmaps[i].buf].index;
        assert_int_equal(k->tmaps[i].dim[0], 256); /* K-contiguous weights [N, K] */
        assert_int_equal(k->tmaps[i].box[0], 64);
    }
    assert_int_equal(seen, 0xE); /* wq, wk, wv */
    cg_program_free(p);
}

static const char *SRC_MERGED =
    "fn f(a: bf16[8, S, 128], w: bf16[1024, N], x: bf16[S, N]) -> bf16[S, N] {\n"
    "  return x + reshape(permute(a, (1, 0, 2)), (S, 1024)) @ w\n}\n";

/* merged heads as A: a 3-D map over a[H, S, D] (extents inner first, box {64, bm, 1}); the
 * runtime plan binds S and passes the rank */
static void test_merged_tmap(void **state) {
    (void)state;
    fe_define defs[1] = {{"N", 1024}}; /* S stays symbolic */
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_MERGED, CG_SM90A, defs, 1, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, " a3d"));
    const cg_tmap *ta = &k->tmaps[0];
    assert_int_equal(ta->rank, 3);
    assert_int_equal(ta->dim[0], 128);
    assert_true(IR_DIM_IS_SYM(ta->dim[1]));
    assert_int_equal(ta->dim[2], 8);
    assert_int_equal(ta->box[0], 64);
    assert_int_equal(ta->box[1], 128);
    assert_int_equal(ta->box[2], 1);
    assert_int_equal(k->tmaps[1].rank, 2);
    assert_non_null(strstr(cg_program_ptx(p, NULL), "cp.async.bulk.tensor.3d"));
    int64_t syms[8];
    for (unsigned s = 0; s < g->nsyms; s++)
        syms[s] = g->syms[s].value >= 0 ? g->syms[s].value : 300;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i];
    assert_non_null(kd);
    const rt_kparam *pa = &kd->params[k->nbufs + k->nsyms];
    assert_int_equal(pa->kind, RT_KP_TMAP);
    assert_int_equal(pa->tmap.rank, 3);
    assert_int_equal(pa->tmap.dim[0], 128);
    assert_int_equal(pa->tmap.dim[1], 300);
    assert_int_equal(pa->tmap.dim[2], 8);
    char e2[200];
    assert_true(rt_tmap_check(&pa->tmap, 0x1000, e2, sizeof e2));
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

static const char *SRC_XW = "fn f(x: bf16[M, K], w: bf16[K, N]) -> bf16[M, N] {\n"
                            "  return x @ w\n}\n";

/* Split-K: a cluster of `splits` CTAs per tile declared in the PTX at the entry (a plain launch
 * forms it), the grid (M tiles, splits, N tiles) with clusters (1, splits, 1), the epilogue
 * once (rank 0) after the reduction through distributed shared memory */
static void test_split_k(void **state) {
    (void)state;
    fe_define defs[3] = {{"M", 16}, {"K", 4096}, {"N", 4096}};
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_XW, CG_SM90A, defs, 3, &g);
    /* the checks below take the 64x64 tile in 2 ranks */
    cg_program_free(p);
    g->regions[0].sched = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {64, 64, 2, 0}};
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "64x64x64 s13 KN sk2"));
    int sk = 2;
    assert_int_equal(k->cluster, (unsigned)sk);
    assert_int_equal(k->persist, 0); /* an exact grid: never folded into (persist, 1, 1) */
    const char *ptx = cg_program_ptx(p, NULL);
    char want[128];
    snprintf(want, sizeof want, ".entry %s(", k->name);
    const char *e = strstr(ptx, want);
    assert_non_null(e);
    snprintf(want, sizeof want, ".reqnctapercluster 1, %d, 1", sk);
    const char *c = strstr(e, want);
    assert_non_null(c);
    assert_true(c < strstr(e, "{")); /* among the entry's directives, before its body */
    assert_non_null(strstr(ptx, "mapa.shared::cluster.u32"));
    assert_non_null(strstr(ptx, "st.shared::cluster.f32"));
    assert_non_null(strstr(ptx, "mbarrier.arrive.release.cluster.shared::cluster.b64"));
    /* the cluster barrier after set-up and the one before exit */
    const char *w1 = strstr(ptx, "barrier.cluster.wait");
    assert_non_null(w1);
    assert_non_null(strstr(w1 + 1, "barrier.cluster.wait"));
    /* one epilogue: the output is stored under rank 0 only (one store site per register) */
    unsigned grid[3], block[3], smem;
    int64_t syms[8] = {0};
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    unsigned ki = 0;
    while (cg_program_kernel(p, ki) != k) ki++;
    assert_true(cg_kernel_geometry(p, ki, syms, grid, block, &smem));
    assert_int_equal(grid[0], 1);
    assert_int_equal(grid[1], 2);
    assert_int_equal(grid[2], 64);
    cg_program_free(p);
    ir_graph_free(g);
}

static void ptxas_prog(cg_program *p, bool want_wgmma);

/* Stream-K's cut of u = tiles x nk units over g CTAs, walked as the kernel walks it (wg_tile_loop,
 * wg_seg, wg_sk_fixup), against brute force: every unit is run by exactly one CTA; a CTA leaves
 * a partial (a segment that does not start its tile) at most once, in its first tile; each tile
 * has exactly one segment from k step 0, and when that segment stops short the CTAs the kernel
 * reads (cta + 1 .. pass_wg_sk_owner of the tile's last unit) are exactly those holding the rest,
 * in order, their segments continuing each other up to nk. */
static void check_sk(int64_t tiles, int64_t nk, int64_t g) {
    int64_t u = tiles * nk;
    int *who = calloc((size_t)u, sizeof *who), *heads = calloc((size_t)tiles, sizeof *heads);
    assert_true(who && heads);
    for (int64_t c = 0; c < g; c++) {
        int64_t ua = pass_wg_sk_first(c, u, g), ub = pass_wg_sk_first(c + 1, u, g), partials = 0;
        assert_true(ua < ub); /* every CTA has work */
        for (int64_t t = ua / nk; t < (ub + nk - 1) / nk; t++) {
            int64_t kb = ua - t * nk > 0 ? ua - t * nk : 0,
                    ke = ub - t * nk < nk ? ub - t * nk : nk;
            assert_true(kb < ke);
            for (int64_t x = t * nk + kb; x < t * nk + ke; x++) who[x]++;
            if (kb > 0) {
                partials++;
                assert_int_equal(t, ua / nk); /* its first tile */
                continue;
            }
            heads[t]++;
            int64_t at = ke, last = pass_wg_sk_owner((t + 1) * nk - 1, u, g);
            for (int64_t d = c + 1; ke < nk && d <= last; d++) { /* the slots it adds */
                int64_t da = pass_wg_sk_first(d, u, g), db = pass_wg_sk_first(d + 1, u, g);
                assert_int_equal(da, t * nk + at);
                at = db - t * nk < nk ? db - t * nk : nk;
            }
            assert_int_equal(at, nk);
        }
        assert_true(partials <= 1);
    }
    for (int64_t x = 0; x < u; x++) {
        assert_int_equal(who[x], 1);
        int64_t o = 0; /* brute-force owner */
        while (pass_wg_sk_first(o + 1, u, g) <= x) o++;
        assert_int_equal(pass_wg_sk_owner(x, u, g), o);
    }
    for (int64_t t = 0; t < tiles; t++) assert_int_equal(heads[t], 1);
    free(who), free(heads);
}

/* Stream-K ([matmul.wgmma.streamk], schedule splits 0): the arithmetic (check_sk); the tile's
 * validity from the shape (known sizes, a tail wave, >= 4 k steps per CTA); the kernel: its
 * template, an exact grid of the planned CTAs, the zeroed workspace temp (slots, then flags)
 * among its buffers and in the manifest, the release/acquire of the flags in the PTX, ptxas
 * without spills. */
static void test_stream_k(void **state) {
    (void)state;
    check_sk(72, 24, 132);  /* 1536^3 at 128x256: tiles fewer than CTAs */
    check_sk(60, 47, 132);  /* 300 x 5000 x 3000: a tile over three CTAs */
    check_sk(192, 79, 132); /* more tiles than CTAs */
    check_sk(5, 3, 3);
    check_sk(7, 2, 3);
    check_sk(1, 9, 2);
    pass_wg_shape s = {.M = 1536,
                       .N = 1536,
                       .K = 1536,
                       .a_kmajor = true,
                       .nmm = 1,
                       .nouts = 1,
                       .smem = 232448,
                       .sms = 132};
    pass_wg_tile t;
    assert_true(pass_wg_tile_make(&s, 128, 256, 0, &t));
    assert_int_equal(t.splits, 0);
    assert_int_equal(t.ctas, 132);
    assert_int_equal(t.ws_bytes, 132LL * 128 * 256 * 4 + 132 * 4);
    assert_int_equal(t.red_bytes, 0);
    assert_false(pass_wg_tile_make(&s, 256, 256, 0, &t)); /* not with multicast */
    pass_wg_shape w = s;
    w.M = -1; /* an unbound M: no workspace size */
    assert_false(pass_wg_tile_make(&w, 128, 256, 0, &t));
    w = s, w.M = 128 * 132, w.N = 128, w.K = 4096; /* whole waves of tiles: nothing to balance */
    assert_false(pass_wg_tile_make(&w, 128, 128, 0, &t));
    w = s, w.M = 384, w.N = 128, w.K = 512; /* 3 tiles x 8 k steps: 6 CTAs of 4 units */
    assert_true(pass_wg_tile_make(&w, 128, 128, 0, &t));
    assert_int_equal(t.ctas, 6);
    w.K = 128; /* 3 tiles x 2 k steps: fewer than 4 steps for as many CTAs as tiles */
    assert_false(pass_wg_tile_make(&w, 128, 128, 0, &t));

    fe_define defs[3] = {{"M", 1536}, {"N", 1536}, {"K", 1536}};
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_XW, CG_SM90A, defs, 3, &g);
    cg_program_free(p);
    g->regions[0].sched = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {128, 128, 0, 0}};
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "128x128x64 s7 KN streamk132"));
    assert_int_equal(k->persist, 0);
    unsigned grid[3], block[3], smem, ki = 0;
    int64_t syms[8] = {0};
    for (unsigned i = 0; i < g->nsyms; i++) syms[i] = g->syms[i].value;
    while (cg_program_kernel(p, ki) != k) ki++;
    assert_true(cg_kernel_geometry(p, ki, syms, grid, block, &smem));
    assert_int_equal(grid[0], 132);
    assert_int_equal(grid[1], 1);
    assert_int_equal(grid[2], 1);
    bool ws = false;
    for (unsigned b = 0; b < k->nbufs; b++) {
        if (k->bufs[b].kind != CG_BUF_TEMP) continue;
        const cg_temp *ct = cg_program_temp(p, k->bufs[b].index);
        if (!ct->zeroed) continue;
        ws = true;
        assert_true(k->bufs[b].write && ct->staged && ct->dtype == IR_F32);
        assert_int_equal(ct->shape.rank, 1);
        assert_int_equal(ct->shape.dim[0], 132LL * 128 * 128 + 132);
    }
    assert_true(ws);
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "fence.acq_rel.gpu;"));
    assert_non_null(strstr(ptx, "st.relaxed.gpu.global.u32"));
    assert_non_null(strstr(ptx, "ld.acquire.gpu.global.u32"));
    assert_non_null(strstr(ptx, "bar.sync 3, 256;"));
    char *man = NULL;
    size_t ml = 0;
    FILE *mf = open_memstream(&man, &ml);
    assert_non_null(mf);
    assert_true(cg_manifest_write(p, mf));
    fclose(mf);
    assert_non_null(strstr(man, "\"zero\": true"));
    free(man);
    ptxas_prog(p, true);
    /* 128 accumulators a thread (setmaxnreg) with the TMA-store epilogue, and twin products */
    g->regions[0].sched = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {128, 256, 0, 0}};
    p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, "128x256x64 s4 KN streamk132 ts2"));
    ptxas_prog(p, true);
    ir_graph_free(g);
    fe_define sw[3] = {{"M", 1000}, {"N", 2816}, {"K", 1024}};
    p = tk_compile_src(SRC_SWIGLU, CG_SM90A, sw, 3, &g);
    cg_program_free(p);
    g->regions[0].sched = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {128, 64, 0, 0}};
    p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, "h2 streamk"));
    ptxas_prog(p, true);
    ir_graph_free(g);
}

/* Multicast halves of a B tile: the boxes both ranks of a 2-CTA cluster issue cover every element
 * of the tile once, each where the plain tile's TMA layout (model_tma) and so wgmma's descriptor
 * have it; K-contiguous boxes are {64 k, bn / 2} rows of 128 B, N-contiguous ones {64 n, bk}. */
static void check_half(bool kmajor, uint32_t bn, uint32_t bk) {
    unsigned char *seen = calloc((size_t)bn * bk, 1);
    assert_non_null(seen);
    for (int rank = 0; rank < 2; rank++) {
        int64_t dn, dk, off;
        int nbox = cg_wg_half_box(kmajor, bn, bk, rank, 0, &dn, &dk, &off);
        assert_int_equal(nbox, kmajor ? (int)(bk / 64) : (int)(bn / 128));
        for (int i = 0; i < nbox; i++) {
            cg_wg_half_box(kmajor, bn, bk, rank, i, &dn, &dk, &off);
            assert_int_equal(off % 1024, 0);      /* each box starts on a swizzle atom */
            uint32_t rows = kmajor ? bn / 2 : bk; /* box rows of 128 bytes */
            for (uint32_t r = 0; r < rows; r++)
                for (uint32_t e = 0; e < 64; e++) {
                    uint32_t n = (uint32_t)dn + (kmajor ? r : e),
                             k = (uint32_t)dk + (kmajor ? e : r);
                    assert_true(n < bn && k < bk);
                    uint32_t at = model_swz((uint32_t)off + r * 128 + 2 * e);
                    if (at != model_tma(kmajor, bn, bk, n, k))
                        fail_msg("kmajor %d bn %u rank %d box %d: (%u, %u) at %u, tile has %u",
                                 kmajor, bn, rank, i, n, k, at, model_tma(kmajor, bn, bk, n, k));
                    assert_int_equal(seen[n * bk + k], 0);
                    seen[n * bk + k] = 1;
                }
        }
    }
    for (uint32_t i = 0; i < bn * bk; i++) assert_int_equal(seen[i], 1);
    free(seen);
}

/* The 2-CTA multicast kernel (schedule bm = 256): valid only for one split, bn 256 / 128 and M
 * above 128; the manifest's template and cluster, the halved K-contiguous B box, the multicast
 * copies, the remote releases and the cluster barriers in the PTX; the grid (M tile pairs, 2, N
 * tiles), folded into (66, 2, 1) when the pairs exceed the persistent clusters. */
static void test_multicast(void **state) {
    (void)state;
    check_half(true, 256, 64);
    check_half(true, 128, 64);
    check_half(false, 256, 64);
    check_half(false, 128, 64);
    pass_wg_shape sh = {.M = 3000,
                        .N = 4096,
                        .K = 11008,
                        .a_kmajor = true,
                        .b_kmajor = true,
                        .nmm = 1,
                        .nouts = 1,
                        .smem = 232448,
                        .sms = 132};
    pass_wg_tile t;
    assert_true(pass_wg_tile_make(&sh, 256, 256, 1, &t));
    assert_int_equal(t.bm, 128);
    assert_int_equal(t.mcast, 2);
    assert_int_equal(t.tiles, 24 * 16); /* 24 M tiles (12 pairs) x 16 */
    assert_false(pass_wg_tile_make(&sh, 256, 64, 1, &t));
    assert_false(pass_wg_tile_make(&sh, 256, 256, 2, &t));
    sh.M = 300; /* 3 M tiles: 2 pairs, the last one's second tile a phantom */
    assert_true(pass_wg_tile_make(&sh, 256, 128, 1, &t));
    assert_int_equal(t.tiles, 4 * 32);
    sh.M = 128;
    assert_false(pass_wg_tile_make(&sh, 256, 256, 1, &t));
    sh.M = 48;
    assert_false(pass_wg_tile_make(&sh, 256, 256, 1, &t));

    fe_define defs[3] = {{"M", 3000}, {"K", 11008}, {"N", 4096}};
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_LIN, CG_SM90A, defs, 3, &g);
    cg_program_free(p);
    g->regions[0].sched = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {256, 256, 1, 0}};
    tx_diag d;
    tx_diag_init(&d, stderr, "test", NULL, 0);
    p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "128x256x64 s4 KK mc2"));
    assert_int_equal(k->cluster, 2);
    assert_int_equal(k->persist, CG_WG_SMS);
    assert_int_equal(k->tmaps[0].box[1], 128); /* A: 128 rows */
    assert_int_equal(k->tmaps[1].box[0], 64);
    assert_int_equal(k->tmaps[1].box[1], 128); /* B: half of 256 rows */
    const char *ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, ".reqnctapercluster 1, 2, 1"));
    assert_non_null(strstr(ptx, "bytes.multicast::cluster"));
    assert_non_null(strstr(ptx, "mbarrier.arrive.shared::cluster.b64"));
    const char *w1 = strstr(ptx, "barrier.cluster.wait");
    assert_non_null(w1);
    assert_non_null(strstr(w1 + 1, "barrier.cluster.wait"));
    unsigned grid[3], block[3], smem;
    int64_t syms[8] = {0};
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    unsigned ki = 0;
    while (cg_program_kernel(p, ki) != k) ki++;
    assert_true(cg_kernel_geometry(p, ki, syms, grid, block, &smem));
    assert_int_equal(grid[0], CG_WG_SMS / 2);
    assert_int_equal(grid[1], 2);
    assert_int_equal(grid[2], 1);
    ptxas_prog(p, true);
    /* fewer pairs than clusters: (pairs of M tiles, 2, N tiles) */
    ir_graph_free(g);
    fe_define small[3] = {{"M", 300}, {"K", 1024}, {"N", 1024}};
    p = tk_compile_src(SRC_LIN, CG_SM90A, small, 3, &g);
    cg_program_free(p);
    g->regions[0].sched = (ir_schedule){.id = PASS_SCH_MATMUL_WGMMA, .p = {256, 128, 1, 0}};
    p = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(p);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "128x128x64"));
    assert_non_null(strstr(k->tmpl, " mc2"));
    for (unsigned s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    ki = 0;
    while (cg_program_kernel(p, ki) != k) ki++;
    assert_true(cg_kernel_geometry(p, ki, syms, grid, block, &smem));
    assert_int_equal(grid[0], 2);
    assert_int_equal(grid[1], 2);
    assert_int_equal(grid[2], 8);
    ptxas_prog(p, true);
    ir_graph_free(g);
}

static void test_manifest_tmaps(void **state) {
    (void)state;
    fe_define defs[2] = {{"K", 4096}, {"N", 1000}}; /* M stays symbolic */
    ir_graph *g;
    cg_program *p = tk_compile_src(SRC_GELU, CG_SM90A, defs, 2, &g);
    const cg_kernel *k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma"));
    assert_non_null(strstr(k->tmpl, " ts"));
    assert_int_equal(k->ntmaps, 3);
    assert_int_equal(k->block[0], 384);
    assert_int_equal(k->persist, CG_WG_SMS);
    /* A: a[M, K] K-contiguous: extents {K, M}, box {64, 128}; B: b[K, N] N-contiguous: {N, K}, box
     * {64, 64} */
    const cg_tmap *ta = &k->tmaps[0], *tb = &k->tmaps[1];
    assert_int_equal(g->nodes[k->bufs[ta->buf].value].op, IR_OP_INPUT);
    assert_int_equal(k->bufs[ta->buf].index, 0);
    assert_int_equal(k->bufs[tb->buf].index, 1);
    assert_int_equal(ta->dim[0], 4096);
    assert_true(IR_DIM_IS_SYM(ta->dim[1]));
    assert_int_equal(ta->box[0], 64);
    assert_int_equal(ta->box[1], 128);
    assert_int_equal(tb->dim[0], 1000);
    assert_int_equal(tb->dim[1], 4096);
    assert_int_equal(tb->box[0], 64);
    assert_int_equal(tb->box[1], 64);
    assert_int_equal(ta->swizzle, 128);
    assert_int_equal(ta->dtype, IR_BF16);
    /* the output: the map over output 0 [M, N], box {64, 64} (one warpgroup's unit), 128-byte
     * swizzle */
    const cg_tmap *to = &k->tmaps[2];
    assert_int_equal(k->bufs[to->buf].kind, CG_BUF_OUTPUT);
    assert_int_equal(k->bufs[to->buf].index, 0);
    assert_int_equal(to->dim[0], 1000);
    assert_true(IR_DIM_IS_SYM(to->dim[1]));
    assert_int_equal(to->box[0], 64);
    assert_int_equal(to->box[1], 64);
    assert_int_equal(to->swizzle, 128);
    /* PTX: grid-constant 128-byte parameters, used in place (no local copy) */
    const char *ptx = cg_program_ptx(p, NULL);
    for (unsigned i = 0; i < 3; i++) {
        char want[96];
        snprintf(want, sizeof want, ".param .align 64 .b8 %s_param_%u[128]", k->name,
                 k->nbufs + k->nsyms + i);
        assert_non_null(strstr(ptx, want));
    }
    assert_non_null(strstr(ptx, "cvta.param"));
    assert_null(strstr(ptx, ".local"));
    assert_non_null(strstr(ptx, "wgmma.mma_async.sync.aligned.m64n"));
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.2d"));
    /* the runtime plan at M = 300: tensor-map parameters after buffers and symbols, extents bound
     */
    int64_t syms[8];
    for (unsigned s = 0; s < g->nsyms; s++)
        syms[s] = g->syms[s].value >= 0 ? g->syms[s].value : 300;
    char err[256];
    rt_gpu_plan *rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    const rt_kernel_desc *kd = NULL;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) kd = &rp->kernels[i];
    assert_non_null(kd);
    assert_int_equal(kd->nparams, k->nbufs + k->nsyms + 3);
    const rt_kparam *pa = &kd->params[k->nbufs + k->nsyms], *pb = pa + 1, *po = pa + 2;
    assert_int_equal(po->kind, RT_KP_TMAP);
    assert_int_equal(po->tmap.dim[0], 1000);
    assert_int_equal(po->tmap.dim[1], 300);
    assert_int_equal(po->buf, rt_gpu_plan_find_buf(rp, RT_BUF_OUTPUT, 0));
    char e3[200];
    assert_true(rt_tmap_check(&po->tmap, 4096, e3, sizeof e3));
    assert_int_equal(pa->kind, RT_KP_TMAP);
    assert_int_equal(pb->kind, RT_KP_TMAP);
    assert_int_equal(pa->tmap.dim[0], 4096);
    assert_int_equal(pa->tmap.dim[1], 300);
    assert_int_equal(pa->buf, rt_gpu_plan_find_buf(rp, RT_BUF_INPUT, 0));
    assert_int_equal(pb->buf, rt_gpu_plan_find_buf(rp, RT_BUF_INPUT, 1));
    /* fewer tiles than SMs: the grid is the tiles, ceil(300 / 128) x ceil(1000 / bn); a
     * multicast cluster's M tiles come in pairs: 2 x ceil(300 / 256) x ceil(1000 / bn) */
    if (k->cluster > 1)
        assert_int_equal((uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2],
                         2 * 2 * ((1000 + k->per[2] - 1) / k->per[2]));
    else
        assert_int_equal((uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2],
                         3 * ((1000 + k->per[1] - 1) / k->per[1]));
    char e2[200];
    assert_true(rt_tmap_check(&pa->tmap, 4096, e2, sizeof e2));
    rt_gpu_plan_free(rp);
    /* at a large M the grid is the persistent CTA count (in clusters of (1, 2, 1) for the
     * multicast kernel) */
    for (unsigned s = 0; s < g->nsyms; s++)
        syms[s] = g->syms[s].value >= 0 ? g->syms[s].value : 100000;
    rp = drv_gpu_plan_from_cg(g, p, syms, err, sizeof err);
    assert_non_null(rp);
    unsigned cl = k->cluster > 1 ? k->cluster : 1;
    for (unsigned i = 0; i < rp->nkernels; i++)
        if (rp->kernels[i].region >= 0) {
            assert_int_equal(rp->kernels[i].grid[0], CG_WG_SMS / cl);
            assert_int_equal(rp->kernels[i].grid[1], cl);
        }
    rt_gpu_plan_free(rp);
    cg_program_free(p);
    ir_graph_free(g);
}

/* Ordered 64-bit integer comparisons (setp.{lt,le,gt,ge}.{s64,u64}) in ptx. */
static unsigned count_cmp64(const char *ptx) {
    unsigned n = 0;
    for (const char *q = ptx; (q = strstr(q, "setp.")) != NULL; q++)
        if ((!strncmp(q + 5, "lt.", 3) || !strncmp(q + 5, "le.", 3) || !strncmp(q + 5, "gt.", 3) ||
             !strncmp(q + 5, "ge.", 3)) &&
            (!strncmp(q + 8, "s64", 3) || !strncmp(q + 8, "u64", 3)))
            n++;
    return n;
}

/* Occurrences of s in ptx. */
static unsigned count_str(const char *ptx, const char *s) {
    unsigned n = 0;
    for (const char *q = ptx; (q = strstr(q, s)) != NULL; q += strlen(s)) n++;
    return n;
}

/* The f16/bf16 (dt: "f16" or "bf16") staging of the TMA-store epilogue rounds its f32 values two
 * at a time: each of the four registers of a stmatrix.x4 is one cvt.rn.DTx2.f32 (wg_cvt2), not two
 * scalar converts and a pack (which NVPTX emits for the staging when LLVM sees the scalar
 * converts). */
static void assert_paired_staging(const char *ptx, const char *dt) {
    char x2[32];
    snprintf(x2, sizeof x2, "cvt.rn.%sx2.f32", dt);
    unsigned nst = count_str(ptx, "stmatrix.sync.aligned.m8n8.x4");
    assert_true(nst > 0);
    assert_true(count_str(ptx, x2) >= 4 * nst);
}

/* The stored outputs decide the epilogue: dense f16/bf16/f32 [M, N] outputs with 16-byte rows
 * go through shared memory and TMA (one map each, after the B maps; no per-element guard or
 * global store in the PTX); a pitch that is not a multiple of 16 bytes or a bool output keeps
 * the stores from the registers. */
static void test_epi_outputs(void **state) {
    (void)state;
    fe_define rag[3] = {{"M", 1000}, {"N", 1000}, {"K", 1000}};
    cg_program *p = tk_compile_src(SRC_TWO, CG_SM90A, rag, 3, NULL);
    const cg_kernel *k = tk_region_kernel(p);
    const char *ptx = cg_program_ptx(p, NULL);
    /* where the planner's ring leaves no room for the slots: the registers' stores */
    if (!strstr(k->tmpl, " ts")) {
        assert_int_equal(k->ntmaps, 2);
        assert_null(strstr(ptx, "stmatrix"));
        assert_non_null(strstr(ptx, "st.global"));
        cg_program_free(p);
        goto odd;
    }
    assert_int_equal(k->ntmaps, 4);
    /* y bf16 and f32(silu(y)): 32-column units, 64- and 128-byte rows */
    assert_int_equal(k->tmaps[2].dtype, IR_BF16);
    assert_int_equal(k->tmaps[2].box[0], 32);
    assert_int_equal(k->tmaps[2].swizzle, 64);
    assert_int_equal(k->tmaps[3].dtype, IR_F32);
    assert_int_equal(k->tmaps[3].box[0], 32);
    assert_int_equal(k->tmaps[3].swizzle, 128);
    assert_int_equal(k->bufs[k->tmaps[2].buf].index + k->bufs[k->tmaps[3].buf].index, 1);
    assert_non_null(strstr(ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16"));
    assert_non_null(strstr(ptx, "st.shared.v2.f32"));
    assert_non_null(strstr(ptx, "fence.proxy.async.shared::cta"));
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
    assert_non_null(strstr(ptx, "cp.async.bulk.wait_group.read"));
    assert_null(strstr(ptx, "st.global"));            /* no store from the registers */
    assert_null(strstr(strstr(k->tmpl, " ts"), "l")); /* an f32 output: not looped */
    cg_program_free(p);
odd:
    /* bias + gelu: the looped epilogue (one slot, in place), 16-byte shared loads and stores */
    fe_define big[3] = {{"M", 4000}, {"N", 11000}, {"K", 4096}};
    p = tk_compile_src(SRC_GELU, CG_SM90A, big, 3, NULL);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, " ts"));
    assert_non_null(strstr(strstr(k->tmpl, " ts"), "l"));
    ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "ld.shared.v4"));
    assert_non_null(strstr(ptx, "st.shared.v4.b32"));
    assert_null(strstr(ptx, "st.global"));
    assert_paired_staging(ptx, "bf16");
    cg_program_free(p);
    /* Q/K/V stores the products themselves: nothing to compute, the register path */
    fe_define qkv[3] = {{"M", 2048}, {"N", 4096}, {"K", 4096}};
    p = tk_compile_src(SRC_QKV, CG_SM90A, qkv, 3, NULL);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, " ts"));
    assert_null(strstr(strstr(k->tmpl, " ts"), "l"));
    cg_program_free(p);
    /* x @ w^T + r with N = 1001: 2002-byte rows TMA cannot store: the staged coalesced stores
     * (slots, no output maps, the threads' global stores); TX_WG_EPI_COAL=0 the registers' */
    fe_define odd[3] = {{"M", 256}, {"N", 1001}, {"K", 256}};
    p = tk_compile_src(SRC_LIN, CG_SM90A, odd, 3, NULL);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma"));
    assert_null(strstr(k->tmpl, " ts"));
    assert_non_null(strstr(k->tmpl, " cs"));
    assert_int_equal(k->ntmaps, 2);
    ptx = cg_program_ptx(p, NULL);
    assert_non_null(strstr(ptx, "stmatrix"));
    assert_non_null(strstr(ptx, "st.global.u16"));
    assert_null(strstr(ptx, "cp.async.bulk.tensor.2d.global.shared"));
    assert_null(strstr(ptx, "cp.async.bulk.wait_group"));
    cg_program_free(p);
    setenv("TX_WG_EPI_COAL", "0", 1);
    p = tk_compile_src(SRC_LIN, CG_SM90A, odd, 3, NULL);
    unsetenv("TX_WG_EPI_COAL");
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma"));
    assert_null(strstr(k->tmpl, " ts"));
    assert_null(strstr(k->tmpl, " cs"));
    assert_int_equal(k->ntmaps, 2);
    assert_null(strstr(cg_program_ptx(p, NULL), "stmatrix"));
    assert_non_null(strstr(cg_program_ptx(p, NULL), "st.global"));
    cg_program_free(p);
    static const char *sb = "fn f(a: bf16[M, K], b: bf16[K, N]) -> bool[M, N] {\n"
                            "  return (a @ b) > 0\n}\n";
    p = tk_compile_src(sb, CG_SM90A, rag, 3, NULL);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma"));
    assert_null(strstr(k->tmpl, " ts"));
    assert_int_equal(k->ntmaps, 2);
    unsigned ragged = count_cmp64(cg_program_ptx(p, NULL));
    cg_program_free(p);
    /* M and N multiples of the tile: no bounds test per element in the stores from the registers
     * either (64-bit compares: the bounds tests; the loops keep a few) */
    fe_define full[3] = {{"M", 2048}, {"N", 2048}, {"K", 256}};
    p = tk_compile_src(sb, CG_SM90A, full, 3, NULL);
    k = tk_region_kernel(p);
    assert_non_null(strstr(k->tmpl, "wgmma"));
    unsigned whole = count_cmp64(cg_program_ptx(p, NULL));
    assert_true(ragged >= 12);
    assert_true(whole * 4 < ragged);
    cg_program_free(p);
}

/* The optimised LLVM IR of p as text (the caller frees it). */
static char *llvm_text(cg_program *p) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_true(cg_program_emit_llvm(p, f));
    fclose(f);
    return buf;
}

/* A program's PTX does not depend on what the process compiled before: the ragged bool GEMM (a
 * 384-thread wgmma kernel) compiled after each compile of a 256-thread wgmma kernel is the same
 * every time, and its thread index is bounded by its own 384 threads. (LLVM 19's nvvm-intr-range
 * read the bound through NVPTX's annotation cache, keyed by the addresses of modules and
 * functions, and the wgmma module's entries outlived it: a later kernel at the same addresses
 * was optimised for 256 threads in about one compile of four.) */
static void test_repeatable(void **state) {
    (void)state;
    static const char *sb = "fn f(a: bf16[M, K], b: bf16[K, N]) -> bool[M, N] {\n"
                            "  return (a @ b) > 0\n}\n";
    static const char *sa = "fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] {\n"
                            "  return a @ b\n}\n";
    fe_define rag[3] = {{"M", 1000}, {"N", 1000}, {"K", 1000}};
    fe_define thin[3] = {{"M", 64}, {"N", 4096}, {"K", 4096}};
    cg_program *p = tk_compile_src(sb, CG_SM90A, rag, 3, NULL);
    assert_non_null(strstr(tk_region_kernel(p)->tmpl, "wgmma"));
    assert_int_equal(tk_region_kernel(p)->block[0], 384);
    char *first = ir_xstrdup(cg_program_ptx(p, NULL));
    char *ir = llvm_text(p);
    assert_non_null(strstr(ir, "call range(i32 0, 384) i32 @llvm.nvvm.read.ptx.sreg.tid.x()"));
    free(ir);
    cg_program_free(p);
    for (int i = 0; i < 24; i++) {
        p = tk_compile_src(sa, CG_SM90A, thin, 3, NULL);
        assert_non_null(strstr(tk_region_kernel(p)->tmpl, "wgmma"));
        assert_int_equal(tk_region_kernel(p)->block[0], 256);
        cg_program_free(p);
        p = tk_compile_src(sb, CG_SM90A, rag, 3, NULL);
        if (strcmp(cg_program_ptx(p, NULL), first) != 0)
            fail_msg("compile %d of the ragged bool GEMM: PTX differs from the first", i + 2);
        cg_program_free(p);
    }
    free(first);
}

static void test_tmap_check(void **state) {
    (void)state;
    char e[200];
    rt_tmap_desc t = {IR_BF16, 128, {4096, 300}, {64, 128}, 2, 0, 0, 0};
    assert_true(rt_tmap_check(&t, 0x1000, e, sizeof e));
    assert_false(rt_tmap_check(&t, 0x1008, e, sizeof e)); /* address not 16-byte aligned */
    assert_non_null(strstr(e, "aligned"));
    t.dim[0] = 4100; /* pitch 8200 B */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.dim[0] = 4096, t.box[1] = 512;
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.box[1] = 128, t.box[0] = 128; /* 256-byte box rows in a 128-byte swizzle */
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.box[0] = 64, t.dim[1] = 0;
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    t.dim[1] = 1, t.dtype = IR_I32;
    assert_false(rt_tmap_check(&t, 0x1000, e, sizeof e));
    /* rank 3: the third extent and box are checked too; rank 4 is refused */
    rt_tmap_desc t3 = {IR_BF16, 128, {128, 300, 32}, {64, 128, 1}, 3, 0, 0, 0};
    assert_true(rt_tmap_check(&t3, 0x1000, e, sizeof e));
    t3.dim[2] = 0;
    assert_false(rt_tmap_check(&t3, 0x1000, e, sizeof e));
    t3.dim[2] = 32, t3.box[2] = 300;
    assert_false(rt_tmap_check(&t3, 0x1000, e, sizeof e));
    t3.box[2] = 1, t3.rank = 4;
    assert_false(rt_tmap_check(&t3, 0x1000, e, sizeof e));
}

/* Programs the wgmma kernel does not take keep the other kernels. */
static void test_fallbacks(void **state) {
    (void)state;
    static const char *srcs[] = {
        "fn f(a: f32[M, K], b: f32[K, N]) -> f32[M, N] { return a @ b }\n",             /* f32 */
        "fn f(a: bf16[B, M, K], b: bf16[B, K, N]) -> bf16[B, M, N] { return a @ b }\n", /* batched
                                                                                         */
        "fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] { return a @ b }\n", /* K, N symbolic */
        "fn f(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] { return a @ b }\n", /* N = 1001: pitch */
    };
    fe_define d3[2] = {{"K", 64}, {"N", 1001}};
    for (unsigned i = 0; i < 4; i++) {
        cg_program *p = tk_compile_src(srcs[i], CG_SM90A, i == 3 ? d3 : NULL, i == 3 ? 2 : 0, NULL);
        const cg_kernel *k = tk_region_kernel(p);
        assert_int_equal(k->ntmaps, 0);
        if (i == 0) /* f32: the SIMT kernel names its tile */
            assert_int_equal(strncmp(k->tmpl, "simt ", 5), 0);
        else
            assert_int_equal(k->tmpl[0], 0);
        assert_null(strstr(cg_program_ptx(p, NULL), "wgmma"));
        cg_program_free(p);
    }
    /* sm_90 (no "a") never uses wgmma */
    fe_define d[3] = {{"M", 512}, {"K", 512}, {"N", 512}};
    cg_program *p = tk_compile_src(SRC_GELU, CG_SM90, d, 3, NULL);
    assert_null(strstr(cg_program_ptx(p, NULL), "wgmma"));
    cg_program_free(p);
}

/* ptxas -v of one program: assembles, no spills, no wgmma serialisation
 * warnings, 168 registers when setmaxnreg is used. */
static void ptxas_prog(cg_program *p, bool want_wgmma);
static void ptxas_check(const char *src, const fe_define *defs, unsigned nd, bool want_wgmma) {
    ptxas_prog(tk_compile_src(src, CG_SM90A, defs, nd, NULL), want_wgmma);
}

/* ptxas -v of program p (freed): as ptxas_check. */
static void ptxas_prog(cg_program *p, bool want_wgmma) {
    size_t len;
    const char *ptx = cg_program_ptx(p, &len);
    assert_true((strstr(ptx, "wgmma.mma_async") != NULL) == want_wgmma);
    bool maxnreg = strstr(ptx, "setmaxnreg") != NULL;
    tk_ptxas_stats st;
    int rc = tk_ptxas_stats_of(ptx, len, "sm_90a", &st);
    char tmpl[sizeof tk_region_kernel(p)->tmpl];
    snprintf(tmpl, sizeof tmpl, "%s", tk_region_kernel(p)->tmpl);
    cg_program_free(p);
    if (rc == -1) skip();
    assert_int_equal(rc, 0);
    if (st.warning[0]) fail_msg("ptxas: %s", st.warning);
    if (st.spill > 0) fail_msg("ptxas: %d bytes of spill stores (%s)", st.spill, tmpl);
    assert_true(st.regs > 0);
    if (maxnreg) assert_int_equal(st.regs, 168);
}

static void test_ptxas(void **state) {
    (void)state;
    fe_define big[3] = {{"M", 8192}, {"N", 8192}, {"K", 8192}};
    fe_define m16[3] = {{"M", 16}, {"N", 4096}, {"K", 4096}};
    fe_define rag[3] = {{"M", 1000}, {"N", 1000}, {"K", 1000}};
    ptxas_check(SRC_GELU, big, 3, true);
    ptxas_check(SRC_GELU, rag, 3, true);
    ptxas_check(SRC_LIN, m16, 3, true);
    ptxas_check(SRC_GELU, m16, 3, true);
    ptxas_check(SRC_LIN, big, 3, true);
    ptxas_check(SRC_TWO, rag, 3, true);
    ptxas_check(SRC_TWO, big, 3, true);
    fe_define llw[3] = {{"M", 2048}, {"N", 11008}, {"K", 4096}};
    ptxas_check(SRC_SWIGLU, llw, 3, true);
    ptxas_check(SRC_SWIGLU, rag, 3, true);
    ptxas_check(SRC_SWIGLU, m16, 3, true);
    fe_define qkv[3] = {{"M", 2048}, {"N", 4096}, {"K", 4096}};
    ptxas_check(SRC_QKV, qkv, 3, true);
    ptxas_check(SRC_QKV, rag, 3, true);
    fe_define sk2[3] = {{"M", 16}, {"N", 4096}, {"K", 4096}};
    ptxas_check(SRC_XW, sk2, 3, true);
    fe_define sk4[3] = {{"M", 16}, {"N", 1000}, {"K", 4104}};
    ptxas_check(SRC_LIN, sk4, 3, true);
    ptxas_check(SRC_SWIGLU, sk4, 3, true);
    fe_define mh[2] = {{"S", 2048}, {"N", 4096}};
    ptxas_check(SRC_MERGED, mh, 2, true);
    fe_define mhr[2] = {{"S", 300}, {"N", 264}};
    ptxas_check(SRC_MERGED, mhr, 2, true);
}

/* The wgmma kernel of p (after any staging kernels). */
static const cg_kernel *wg_kernel(const cg_program *p) {
    for (unsigned i = 0; i < cg_program_nkernels(p); i++)
        if (strstr(cg_program_kernel(p, i)->tmpl, "wgmma-tma-ws")) return cg_program_kernel(p, i);
    fail_msg("no wgmma kernel");
    abort();
}

/* src at defs takes the staged coalesced stores (template ` cs`, looped or not as `loop` says,
 * no output tensor maps: only A's and the B's), within the kernel's shared memory, and ptxas
 * assembles every kernel of it without spills or warnings. */
static void coal_check(const char *src, const fe_define *defs, unsigned nd, unsigned nmaps,
                       bool loop) {
    cg_program *p = tk_compile_src(src, CG_SM90A, defs, nd, NULL);
    const cg_kernel *k = wg_kernel(p);
    const char *cs = strstr(k->tmpl, " cs");
    if (!cs) fail_msg("%s: not the staged coalesced stores", k->tmpl);
    assert_true((cs[4] == 'l') == loop);
    assert_null(strstr(k->tmpl, " ts"));
    assert_int_equal(k->ntmaps, nmaps);
    assert_true(k->smem_bytes <= 227 * 1024);
    const char *ptx = cg_program_ptx(p, NULL);
    assert_null(strstr(ptx, "global.shared::cta.bulk_group"));
    ptxas_prog(p, true);
}

static void test_ptxas_coal(void **state) {
    (void)state;
    /* held-out prime_bmm_f16: [7, 509, 257] @ [7, 257, 1021] f16, a plain batched product */
    static const char *bmm = "fn f(a: f16[B, M, K], b: f16[B, K, N]) -> f16[B, M, N] {\n"
                             "  return a @ b\n}\n";
    fe_define pb[4] = {{"B", 7}, {"M", 509}, {"K", 257}, {"N", 1021}};
    coal_check(bmm, pb, 4, 2, false);
    /* held-out ragged_gemm: relu(x @ w + b) at 3001 x 2005 x 1999, the looped form */
    static const char *rg = "fn f(x: bf16[M, K], w: bf16[K, N], b: bf16[N]) -> bf16[M, N] {\n"
                            "  return relu(x @ w + b)\n}\n";
    fe_define rd[3] = {{"M", 3001}, {"K", 2005}, {"N", 1999}};
    coal_check(rg, rd, 3, 2, true);
    /* a 2-D f32 output of odd N with a bias and an activation: f32 slots, not looped */
    static const char *gf = "fn f(x: bf16[M, K], w: bf16[K, N], b: bf16[N]) -> f32[M, N] {\n"
                            "  return f32(gelu_tanh(x @ w + b))\n}\n";
    coal_check(gf, rd, 3, 2, false);
    /* x @ w^T + r at N = 1001 (64x32 tiles, 64-byte slot rows); SwiGLU's two products (a slot
     * each), plain and in 2-CTA multicast pairs (an odd count of M tiles: a phantom tile) */
    fe_define lo[3] = {{"M", 256}, {"N", 1001}, {"K", 256}};
    coal_check(SRC_LIN, lo, 3, 2, true);
    fe_define sw[3] = {{"M", 2000}, {"N", 3001}, {"K", 1024}};
    coal_check(SRC_SWIGLU, sw, 3, 3, true);
    fe_define sm[3] = {{"M", 777}, {"N", 3001}, {"K", 1000}};
    coal_check(SRC_SWIGLU, sm, 3, 3, true);
}

/* Every tile of the matmul.wgmma space of a program at one shape (passes/wgmma.c), forced
 * through the region's schedule: codegen builds the named tile (the manifest's template) and
 * ptxas assembles it without spills or serialisation warnings. */
static void space_check(const char *src, const fe_define *defs, unsigned nd) {
    ir_graph *g;
    cg_program *p0 = tk_compile_src(src, CG_SM90A, defs, nd, &g);
    cg_program_free(p0);
    pass_index ix;
    assert_true(pass_index_build(g, &ix));
    const pass_gpu *gpu = pass_gpu_find("h200");
    uint32_t r = 0;
    while (r < g->nregions && g->regions[r].kind != IR_RK_MATMUL) r++;
    assert_true(r < g->nregions);
    assert_int_equal(g->regions[r].sched.id, PASS_SCH_MATMUL_WGMMA);
    pass_sched_facts f;
    pass_schedule_facts(g, &ix, r, gpu, gpu->smem_per_block, &f);
    ir_schedule sp[PASS_MAX_CANDIDATES];
    unsigned n = pass_schedule_space(&f, sp, PASS_MAX_CANDIDATES);
    assert_true(n >= 1);
    assert_true(pass_schedule_valid(&f, &g->regions[r].sched));
    for (unsigned i = 0; i < n; i++) {
        if (sp[i].id != PASS_SCH_MATMUL_WGMMA) continue; /* [matmul.simt.gemv_rows]: test_gemv */
        g->regions[r].sched = sp[i];
        tx_diag d;
        tx_diag_init(&d, stderr, "test", NULL, 0);
        cg_program *p = cg_program_new(g, CG_SM90A, &d);
        assert_non_null(p);
        const cg_kernel *k = tk_region_kernel(p);
        char want[64];
        bool mc = sp[i].p[0] == 256; /* two 128-row CTAs sharing B */
        snprintf(want, sizeof want, "wgmma-tma-ws %dx%dx64 s%d ", mc ? 128 : sp[i].p[0], sp[i].p[1],
                 sp[i].p[3]);
        if (strncmp(k->tmpl, want, strlen(want)))
            fail_msg("template %s, schedule asked for %s", k->tmpl, want);
        assert_true((strstr(k->tmpl, " mc2") != NULL) == mc);
        assert_int_equal(k->cluster, mc ? 2u : sp[i].p[2] > 1 ? (unsigned)sp[i].p[2] : 0u);
        char sk[8];
        snprintf(sk, sizeof sk, " sk%d", sp[i].p[2]);
        assert_true((strstr(k->tmpl, sk) != NULL) == (sp[i].p[2] > 1));
        ptxas_prog(p, true);
    }
    pass_index_free(&ix);
    ir_graph_free(g);
}

static void test_ptxas_space(void **state) {
    (void)state;
    fe_define mid[3] = {{"M", 2000}, {"N", 1000}, {"K", 3000}};
    space_check(SRC_XW, mid, 3);
    fe_define m16[3] = {{"M", 16}, {"N", 4096}, {"K", 4096}};
    space_check(SRC_XW, m16, 3);
    space_check(SRC_LIN, m16, 3);
    fe_define m48[3] = {{"M", 48}, {"N", 1024}, {"K", 4096}};
    space_check(SRC_SWIGLU, m48, 3);
    fe_define m200[3] = {{"M", 200}, {"N", 1024}, {"K", 4096}};
    space_check(SRC_SWIGLU, m200, 3);
    space_check(SRC_QKV, m200, 3);
    space_check(SRC_TWO, m200, 3);
    fe_define m300[3] = {{"M", 300}, {"N", 5000}, {"K", 3000}};
    space_check(SRC_GELU, m300, 3);
}

/* [matmul.wgmma.swap]: the swapped kernel's plan (the transposed product: bm along N, bn along
 * M, the operand orders exchanged, the B box of a short M), the K-major layout of the x tile at
 * row counts that are multiples of 8 but not of 64, and the epilogue's transposition: over every
 * tile, consumer, thread and register of the kernel's C^T = W^T X^T (wgmma's D fragment, the
 * kernel's rows the product's columns), out[col][row] receives each element of x @ w exactly
 * once, the right one (integer operands, exact). */
static void test_swap(void **state) {
    (void)state;
    static const uint32_t rows[] = {8, 16, 24, 40, 104, 152, 200, 256};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) check_layout(true, rows[i], 64);
    cg_wg_plan p;
    ir_schedule want = {.id = PASS_SCH_MATMUL_WGMMA_SWAP, .p = {128, 104, 1, 0}};
    unsetenv("TX_WG_SWAP"); /* off by default: the plain kernel's plan */
    assert_true(cg_wg_plan_for(300, 5000, 3000, true, false, 1, 1, 227 * 1024, 132, &want, &p));
    assert_false(p.swap);
    setenv("TX_WG_SWAP", "1", 1);
    assert_true(cg_wg_plan_for(300, 5000, 3000, true, false, 1, 1, 227 * 1024, 132, &want, &p));
    assert_true(p.swap);
    assert_int_equal(p.bm, 128);
    assert_int_equal(p.bn, 104);
    assert_int_equal(p.consumers, 2);
    assert_false(p.a_kmajor); /* the kernel's A is w[K, N]: N-contiguous */
    assert_true(p.b_kmajor);  /* its B is x[M, K] */
    assert_int_equal(p.b_rows, 104);
    assert_int_equal(p.tx_bytes, (128 + 104) * 64 * 2);
    assert_int_equal(p.stage_bytes, (128 + 104) * 64 * 2);
    /* a 16-row product on a 24-row tile: the B box moves the 16 rows that exist */
    want.p[1] = 24;
    assert_true(cg_wg_plan_for(16, 4096, 4096, true, true, 1, 1, 227 * 1024, 132, &want, &p));
    assert_true(p.swap && p.a_kmajor && p.b_kmajor);
    assert_int_equal(p.b_rows, 16);
    assert_int_equal(p.tx_bytes, (128 + 16) * 64 * 2);
    /* not a multiple of 8, a horizontal region, an M-contiguous A: no swapped tile */
    want.p[1] = 100;
    assert_true(cg_wg_plan_for(300, 5000, 3000, true, false, 1, 1, 227 * 1024, 132, &want, &p));
    assert_false(p.swap);
    want.p[1] = 104;
    assert_true(cg_wg_plan_for(300, 5000, 3000, true, false, 2, 1, 227 * 1024, 132, &want, &p));
    assert_false(p.swap);
    assert_true(cg_wg_plan_for(300, 5000, 3000, false, false, 1, 1, 227 * 1024, 132, &want, &p));
    assert_false(p.swap);
    unsetenv("TX_WG_SWAP");
    /* the epilogue's transposition at a ragged M and N */
    enum { M = 300, N = 200, K = 5, BM = 104 };
    static int x[M][K], w[K][N], seen[M][N], out[M][N];
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) x[m][k] = (m * 7 + k * 3) % 11 - 5;
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) w[k][n] = (n * 5 + k) % 13 - 6;
    memset(seen, 0, sizeof seen);
    for (int tn = 0; tn < (N + 127) / 128; tn++)       /* the kernel's M tiles: the product's N */
        for (int tm = 0; tm < (M + BM - 1) / BM; tm++) /* its N tiles: the product's rows */
            for (unsigned c = 0; c < 2; c++)
                for (unsigned t = 0; t < 128; t++)
                    for (unsigned i = 0; i < BM / 2; i++) {
                        uint32_t fr, fc;
                        model_frag(t, i, &fr, &fc);
                        int r = tn * 128 + (int)(64 * c + fr), q = tm * BM + (int)fc;
                        if (r >= N || q >= M) continue; /* the kernel's bounds test */
                        int d = 0;                      /* D[r][q] = sum_k W^T[r][k] X^T[k][q] */
                        for (int k = 0; k < K; k++) d += w[k][r] * x[q][k];
                        out[q][r] = d;
                        seen[q][r]++; /* wg_epi_elem(col, row): out[q][r] */
                    }
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++)
            if (seen[m][n] != 1) fail_msg("out[%d][%d] stored %d times", m, n, seen[m][n]);
    for (int m = 0; m < M; m++) /* against the product's own definition */
        for (int n = 0; n < N; n++) {
            int v = 0;
            for (int k = 0; k < K; k++) v += x[m][k] * w[k][n];
            if (out[m][n] != v) fail_msg("out[%d][%d] = %d, want %d", m, n, out[m][n], v);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptor_bits),
        cmocka_unit_test(test_swizzle),
        cmocka_unit_test(test_layout_both_orders),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_tile_space),
        cmocka_unit_test(test_epi_staging),
        cmocka_unit_test(test_epi_coalesced),
        cmocka_unit_test(test_epi_outputs),
        cmocka_unit_test(test_repeatable),
        cmocka_unit_test(test_manifest_tmaps),
        cmocka_unit_test(test_horizontal_tmaps),
        cmocka_unit_test(test_merged_map),
        cmocka_unit_test(test_merged_tmap),
        cmocka_unit_test(test_split_k),
        cmocka_unit_test(test_stream_k),
        cmocka_unit_test(test_multicast),
        cmocka_unit_test(test_tmap_check),
        cmocka_unit_test(test_fallbacks),
        cmocka_unit_test(test_ptxas),
        cmocka_unit_test(test_ptxas_space),
        cmocka_unit_test(test_ptxas_coal),
        cmocka_unit_test(test_swap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
