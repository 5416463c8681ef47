/* gpu.c - the hardware table of the cost model (docs/cost-model.md says
 * where every figure comes from). Constant data only. */
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

/* peak_TFLOPs is indexed by ir_dtype: f32, f16, bf16, i32, bool.
 * f16/bf16: dense tensor-core rate with f32 accumulation (no sparsity);
 * f32: the CUDA-core FMA rate; i32 and bool are charged at the f32 rate. */
/* tc_eff: the share of that f16/bf16 peak tx's mma.sync kernels reach, measured on the H200
 * (bench/results/2026-11-30-h200-c: 302 TFLOP/s for the 8192^3 GEMM with its epilogue, 311 for the
 * MLP, 233 for attention; 0.30 of 989). The H100 has the same chip; for the others 0.30 is an
 * assumption, not a measurement. */
/* mem_latency_us: the loaded DRAM latency of Little's law in passes/model.c, measured on the H200
 * by bench/latency.sh (tx's own streaming loop, one block per SM); the H100 is assumed equal. The
 * others have no measurement: 0 keeps their predictions on the roofline. */
/* attn_eff: the share of the f16/bf16 peak the sm_90a attention kernel (codegen/attention.c,
 * FlashAttention-3 style) reaches, measured on the H200 (bench/results/2026-12-01-h200-fa3: 430
 * TFLOP/s at B4 H32 S4096 D128 with the default key loop; 0.43 of 989); the H100 is assumed equal;
 * the others have no such kernel (0). */
/* sfu_Gops: no table value; txc bench --calibrate measures it (0: the clock_GHz issue rate). */
#define LAT_H 0.123
/* clock_GHz: the datasheet boost clock (H100/H200 SXM 1.98, A100 1.41, L4 2.04, RTX 4090 2.52).
 * With 4 schedulers per SM issuing one warp instruction each per cycle, SMs x 128 x clock lane
 * instructions per ns bound a pointwise kernel's time (passes/model.c). */
#define ATTN_H 0.43
/* wg_eff: the share of the tensor-core rate the sm_90a wgmma kernel's k steps sustain where wgmma
 * issue bounds them (the 128x256 tile): fitted to the H200's 4096^3 bf16 GEMM (0.566 us a k step,
 * bench/results/2026-12-01-h200-gemm2; docs/cost-model.md "Matrix products"); the H100 is
 * assumed equal; the others have no wgmma (0). */
#define WG_H 0.98
/* col_latency_us, col_sm_bytes: the column schedules' bandwidth-delay latency and the bytes of
 * loads one SM keeps in flight, fitted to issue 12's `txc tune` rows on the H200 (colsum bf16
 * [16384, 4096], [65536, 1024], [8192, 2048], [30000, 3000]: 16 column_split and column_blocks
 * timings, two constants; docs/cost-model.md "Column schedules"): the column split of 32 slices
 * (32 KB in flight an SM) and the column blocks (64 KB) reach the same bandwidth per SM. The H100
 * is assumed equal; the others have none (0: mem_latency_us). */
#define COL_H    1.0
#define COL_SM_H 49152
static const pass_gpu gpu_table[] = {
    {"h100",
     132,
     232448,
     233472,
     65536,
     50LL << 20,
     3350.0,
     {67.0, 989.0, 989.0, 67.0, 67.0},
     2.5,
     0.30,
     LAT_H,
     8,
     1.98,
     ATTN_H,
     0.0,
     WG_H,
     COL_H,
     COL_SM_H},
    {"h200",
     132,
     232448,
     233472,
     65536,
     50LL << 20,
     4800.0,
     {67.0, 989.0, 989.0, 67.0, 67.0},
     2.5,
     0.30,
     LAT_H,
     8,
     1.98,
     ATTN_H,
     0.0,
     WG_H,
     COL_H,
     COL_SM_H},
    {"a100",
     108,
     166912,
     167936,
     65536,
     40LL << 20,
     2039.0,
     {19.5, 312.0, 312.0, 19.5, 19.5},
     3.0,
     0.30,
     0.0,
     0,
     1.41,
     0.0,
     0.0,
     0.0,
     0.0,
     0},
    {"l4",
     58,
     101376,
     102400,
     65536,
     48LL << 20,
     300.0,
     {30.3, 121.0, 121.0, 30.3, 30.3},
     3.0,
     0.30,
     0.0,
     0,
     2.04,
     0.0,
     0.0,
     0.0,
     0.0,
     0},
    {"rtx4090",
     128,
     101376,
     102400,
     65536,
     72LL << 20,
     1008.0,
     {82.6, 165.2, 165.2, 82.6, 82.6},
     3.0,
     0.30,
     0.0,
     0,
     2.52,
     0.0,
     0.0,
     0.0,
     0.0,
     0},
};

/* Returns the table entry named `name` (exact, lower case); NULL when unknown. */
const pass_gpu *pass_gpu_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++)
        if (!strcmp(gpu_table[i].name, name)) return &gpu_table[i];
    return NULL;
}

/* Returns the known names, comma separated, in table order. */
const char *pass_gpu_names(void) { return "h100, h200, a100, l4, rtx4090"; }

const pass_gpu *pass_target_gpu(const pass_gpu *hw, pass_target t, pass_gpu *buf) {
    if (!hw || t.sm <= 0) return hw;
    bool wg = t.sm >= 90 && t.arch, cl = t.sm >= 90;
    if ((wg || (hw->wg_eff <= 0 && hw->attn_eff <= 0)) && (cl || hw->cluster_max <= 0)) return hw;
    *buf = *hw;
    if (!wg) buf->wg_eff = 0, buf->attn_eff = 0;
    if (!cl) buf->cluster_max = 0;
    return buf;
}

const char *pass_target_name(pass_target t, char *buf, size_t cap) {
    if (t.sm <= 0)
        snprintf(buf, cap, "any");
    else
        snprintf(buf, cap, "sm_%d%s", t.sm, t.arch ? "a" : "");
    return buf;
}
