/* stage.c - the staging kernels of [matmul.wgmma.stage] (docs/codegen-matmul.md "Operands whose
 * pitch TMA cannot read"): an operand whose row pitch is not a multiple of 16 bytes (2-D, or of
 * higher rank: its leading dims, batch elements included, are the copy's rows) is copied to a
 * scratch buffer whose rows are pitched at pass_wg_pitch (a multiple of 128 bytes) before the
 * wgmma kernel, whose tensor map then reads the copy with the operand's own extents (TMA's
 * bounds still zero-fill the ragged tails; the pad columns are never read, so never written). */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <string.h>

/* Bytes in flight per thread: ST_BYTES for word copies, ST_FUNNEL_BYTES for funnelled ones (the
 * H200 runs of bench/results/2026-12-01-h200-pitch: 8-byte word copies at 2 rows a thread beat 8;
 * funnelled copies gained from 4-16 rows); rows a thread are halved while the grid would have
 * fewer than ST_MIN_BLOCKS blocks (63 blocks of 16 funnelled rows copied [1000, 1001] in 9.2 us,
 * 250 blocks of 2-byte words in 5.5). */
enum {
    ST_THREADS = 256,
    ST_MAX_WORDS = 8,
    ST_MAX_ROWS = 16,
    ST_BYTES = 32,
    ST_FUNNEL_BYTES = 128,
    ST_MAX_VALS = 32,
    ST_MIN_BLOCKS = 2 * CG_WG_SMS
};

/* The widest word (8, 4 or 2 bytes) that divides a row of `row_bytes` bytes: source rows then
 * start at word boundaries, as do the copy's (their pitch is a multiple of 128 bytes). */
static unsigned st_word(int64_t row_bytes) {
    return row_bytes % 8 == 0 ? 8 : row_bytes % 4 == 0 ? 4 : row_bytes % 2 == 0 ? 2 : 1;
}

void cg_stage_geometry(int64_t rows, int64_t inner, int es, int64_t pitch, cg_stage_geom *sg) {
    memset(sg, 0, sizeof *sg);
    sg->es = es, sg->inner = inner;
    sg->word = st_word(inner * es);
    /* rows that are not whole 8-byte words: 8-byte words of the copy, each from the two aligned
     * source words it straddles (a funnel shift), when the source holds one whole word */
    sg->funnel = sg->word < 8 && 8 % es == 0 && rows > 0 && rows * inner * es >= 8;
    if (sg->funnel) sg->word = 8;
    sg->iw = (inner * es + sg->word - 1) / sg->word;
    sg->pw = pitch * es / sg->word;
    int64_t v = (sg->iw + ST_THREADS - 1) / ST_THREADS;
    sg->words = (unsigned)(v < 1 ? 1 : v > ST_MAX_WORDS ? ST_MAX_WORDS : v);
    /* rows per thread: ST_BYTES in flight per thread where the rows are short, in at most
     * ST_MAX_VALS loaded words (each takes a register however narrow: 3 blocks of 256 threads
     * per SM stay resident with 2-byte words; a funnel loads two words per word) */
    unsigned r = 1, per = sg->funnel ? 2 : 1;
    int64_t bytes = sg->funnel ? ST_FUNNEL_BYTES : ST_BYTES;
    while (r < ST_MAX_ROWS && (int64_t)r * sg->words * sg->word < bytes &&
           2 * r * sg->words * per <= ST_MAX_VALS)
        r *= 2;
    int64_t gx = (sg->iw + (int64_t)ST_THREADS * sg->words - 1) / ((int64_t)ST_THREADS * sg->words);
    while (r > 1 && rows > 0 && gx * ((rows + r - 1) / r) < ST_MIN_BLOCKS) r /= 2;
    sg->rows = r;
}

/* The body: block (x, y) copies words [x * T * V, (x + 1) * T * V) of rows y * R .. y * R + R - 1
 * (then y + gridDim.y ...), every load of a thread issued before its stores; loads clamp their
 * column into the row so that none is guarded, stores are guarded by column and row. */
/* The funnel's word w (i64) of the source: the aligned 8-byte word w where it is whole (w <
 * total), the partial last word `tail` at w == total, 0 beyond; never read out of bounds (the
 * index is clamped to the last whole word). */
static LLVMValueRef st_src_word(cg_ctx *cx, LLVMValueRef src, LLVMValueRef w, LLVMValueRef total,
                                LLVMValueRef tail) {
    LLVMBuilderRef b = cx->b;
    LLVMValueRef last = LLVMBuildSub(b, total, cg_i64(cx, 1), "");
    LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, w, total, "");
    LLVMValueRef at = LLVMBuildSelect(b, in, w, last, "");
    LLVMValueRef v =
        LLVMBuildLoad2(b, cx->i64, LLVMBuildInBoundsGEP2(b, cx->i64, src, &at, 1, ""), "sw");
    LLVMSetAlignment(v, 8);
    LLVMValueRef t =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, w, total, ""), tail, cg_i64(cx, 0), "");
    return LLVMBuildSelect(b, in, v, t, "");
}

/* The funnel's partial last word: elements total * e .. n - 1 of the source (es bytes each,
 * little-endian in the word), 0 where there are none. */
static LLVMValueRef st_tail(cg_ctx *cx, const cg_stage_geom *sg, LLVMValueRef src, LLVMValueRef n,
                            LLVMValueRef total) {
    LLVMBuilderRef b = cx->b;
    unsigned e = 8 / sg->es;
    LLVMTypeRef et = LLVMIntTypeInContext(cx->llctx, (unsigned)sg->es * 8);
    LLVMValueRef first = LLVMBuildMul(b, total, cg_i64(cx, e), ""), t = cg_i64(cx, 0);
    LLVMValueRef lastel = LLVMBuildSub(b, n, cg_i64(cx, 1), "");
    for (unsigned k = 0; k + 1 < e; k++) {
        LLVMValueRef idx = LLVMBuildAdd(b, first, cg_i64(cx, k), "");
        LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSLT, idx, n, "");
        LLVMValueRef at = LLVMBuildSelect(b, ok, idx, lastel, "");
        LLVMValueRef v = LLVMBuildLoad2(b, et, LLVMBuildInBoundsGEP2(b, et, src, &at, 1, ""), "");
        LLVMSetAlignment(v, (unsigned)sg->es);
        v = LLVMBuildShl(b, LLVMBuildZExt(b, v, cx->i64, ""), cg_i64(cx, (int64_t)k * sg->es * 8),
                         "");
        t = LLVMBuildOr(b, t, LLVMBuildSelect(b, ok, v, cg_i64(cx, 0), ""), "tail");
    }
    return t;
}

static void st_body(cg_ctx *cx, const cg_stage_geom *sg, LLVMValueRef src, LLVMValueRef dst,
                    LLVMValueRef nrows) {
    LLVMBuilderRef b = cx->b;
    LLVMTypeRef wt = LLVMIntTypeInContext(cx->llctx, sg->word * 8);
    LLVMValueRef tid = LLVMBuildZExt(b, cg_thread_id(cx), cx->i64, "tid");
    LLVMValueRef c0 = LLVMBuildAdd(
        b, LLVMBuildMul(b, cg_program_id(cx, 0), cg_i64(cx, (int64_t)ST_THREADS * sg->words), ""),
        tid, "c0");
    LLVMValueRef iw = cg_i64(cx, sg->iw), last = cg_i64(cx, sg->iw - 1), pw = cg_i64(cx, sg->pw);
    LLVMValueRef n = NULL, total = NULL, tail = NULL, inner = cg_i64(cx, sg->inner);
    unsigned e = sg->es > 0 ? 8 / (unsigned)sg->es : 1;
    if (sg->funnel) { /* whole 8-byte words of the source, and its partial last one */
        n = LLVMBuildMul(b, nrows, inner, "n");
        total = LLVMBuildUDiv(b, n, cg_i64(cx, e), "total");
        tail = st_tail(cx, sg, src, n, total);
    }
    LLVMValueRef step = LLVMBuildMul(b, cg_program_count(cx, 1), cg_i64(cx, sg->rows), "rstep");
    cg_loop l;
    LLVMValueRef r0 =
        cg_loop_begin(cx, &l, LLVMBuildMul(b, cg_program_id(cx, 1), cg_i64(cx, sg->rows), ""),
                      nrows, step, "rows");
    LLVMValueRef val[ST_MAX_ROWS][ST_MAX_WORDS], col[ST_MAX_WORDS], row[ST_MAX_ROWS];
    for (unsigned j = 0; j < sg->words; j++) {
        col[j] = LLVMBuildAdd(b, c0, cg_i64(cx, (int64_t)j * ST_THREADS), "c");
        LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, col[j], iw, "");
        col[j] = LLVMBuildSelect(b, in, col[j], last, "");
    }
    for (unsigned i = 0; i < sg->rows; i++) {
        row[i] = LLVMBuildAdd(b, r0, cg_i64(cx, i), "r");
        LLVMValueRef in = LLVMBuildICmp(b, LLVMIntSLT, row[i], nrows, "");
        LLVMValueRef rc = LLVMBuildSelect(b, in, row[i], r0, "");
        LLVMValueRef base = LLVMBuildMul(b, rc, sg->funnel ? inner : iw, "");
        for (unsigned j = 0; j < sg->words; j++) {
            if (sg->funnel) { /* element e0 = r x inner + c x e starts the copy's word */
                LLVMValueRef e0 =
                    LLVMBuildAdd(b, base, LLVMBuildMul(b, col[j], cg_i64(cx, e), ""), "e0");
                LLVMValueRef q = LLVMBuildUDiv(b, e0, cg_i64(cx, e), "q");
                LLVMValueRef sh =
                    LLVMBuildMul(b, LLVMBuildSub(b, e0, LLVMBuildMul(b, q, cg_i64(cx, e), ""), ""),
                                 cg_i64(cx, sg->es * 8), "sh");
                LLVMValueRef args[3] = {
                    st_src_word(cx, src, LLVMBuildAdd(b, q, cg_i64(cx, 1), ""), total, tail),
                    st_src_word(cx, src, q, total, tail), sh};
                val[i][j] = cg_call_intrinsic(cx, "llvm.fshr", true, args, 3);
                continue;
            }
            LLVMValueRef at = LLVMBuildAdd(b, base, col[j], "");
            LLVMValueRef p = LLVMBuildInBoundsGEP2(b, wt, src, &at, 1, "");
            val[i][j] = LLVMBuildLoad2(b, wt, p, "w");
            LLVMSetAlignment(val[i][j], sg->word);
        }
    }
    for (unsigned j = 0; j < sg->words; j++) {
        LLVMValueRef cin = LLVMBuildICmp(
            b, LLVMIntSLT, LLVMBuildAdd(b, c0, cg_i64(cx, (int64_t)j * ST_THREADS), ""), iw, "");
        for (unsigned i = 0; i < sg->rows; i++) {
            LLVMValueRef in =
                LLVMBuildAnd(b, cin, LLVMBuildICmp(b, LLVMIntSLT, row[i], nrows, ""), "");
            LLVMBasicBlockRef join = cg_if_begin(cx, in);
            LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, row[i], pw, ""), col[j], "");
            LLVMValueRef st =
                LLVMBuildStore(b, val[i][j], LLVMBuildInBoundsGEP2(b, wt, dst, &at, 1, ""));
            LLVMSetAlignment(st, sg->word);
            cg_if_end(cx, join);
        }
    }
    cg_loop_end(cx, &l);
}

bool cg_stage_emit(cg_ctx *cx, unsigned region, unsigned idx, ir_id base, int64_t pitch,
                   unsigned *temp) {
    const ir_graph *g = cx->g;
    const ir_node *n = &g->nodes[base];
    unsigned r = n->shape.rank;
    if (r < 2 || IR_DIM_IS_SYM(n->shape.dim[r - 1]) || !cx->bufidx_kind[base]) {
        tx_error(cx->diag,
                 "codegen: internal error: staged operand %%%u of k%u is not a buffer of rank "
                 ">= 2 with a known inner extent",
                 base, region);
        return false;
    }
    /* the rows: every index of the leading dims (a batched operand's batch elements are
     * consecutive blocks of them, so the copy keeps one batch stride of rows x pitch) */
    int64_t nrows = pass_wg_rows(&n->shape);
    int64_t inner = n->shape.dim[r - 1];
    ir_shape ts = {.rank = (uint8_t)r};
    memcpy(ts.dim, n->shape.dim, r * sizeof ts.dim[0]);
    ts.dim[r - 1] = pitch;
    int es = (int)ir_dtype_size((ir_dtype)n->dtype);
    *temp = cg_scratch_temp(cx, base, (ir_dtype)n->dtype, &ts);
    cx->temps[*temp].staged = true;
    cg_buf bufs[2] = {{(uint8_t)(cx->bufidx_kind[base] - 1), 0, cx->bufidx[base], base},
                      {CG_BUF_TEMP, 1, *temp, base}};
    char suffix[48];
    snprintf(suffix, sizeof suffix, "_k%u_stage%u", region, idx);
    if (!cg_kernel_begin_bufs(cx, region, suffix, bufs, 2)) return false;
    cg_stage_geom sg;
    cg_stage_geometry(nrows, inner, es, pitch, &sg);
    LLVMValueRef ld[IR_MAX_RANK];
    for (unsigned i = 0; i + 1 < r; i++) ld[i] = cg_dim(cx, n->shape.dim[i]);
    LLVMValueRef rows = cg_mm_batch_count(cx, r - 1, ld);
    st_body(cx, &sg, LLVMGetParam(cx->fn, 0), LLVMGetParam(cx->fn, 1), rows);
    ir_shape work[3] = {{.rank = 1, .dim = {sg.iw}}, {.rank = (uint8_t)(r - 1)}, {.rank = 0}};
    for (unsigned i = 0; i + 1 < r; i++) work[1].dim[i] = n->shape.dim[i];
    int64_t per[3] = {(int64_t)ST_THREADS * sg.words, sg.rows, 1}, cap[3] = {INT32_MAX, 65535, 1};
    unsigned block[3] = {ST_THREADS, 1, 1};
    snprintf(cx->k->tmpl, sizeof cx->k->tmpl, "stage pitch %lld w%u%s v%u r%u", (long long)pitch,
             sg.word, sg.funnel ? "f" : "", sg.words, sg.rows);
    cg_kernel_end(cx, work, per, cap, block, 0);
    return true;
}
