/* pointwise.c - the emitter of pointwise and copy regions (and of output
 * copy kernels): a grid-stride loop over the anchor's elements, w elements
 * per iteration with w-wide vector loads and stores where every stored
 * value has the anchor's shape, then a scalar tail. */
#include "codegen/cg_impl.h"

#include <stdlib.h>
#include <string.h>

#define CG_PW_THREADS 256
#define CG_PW_GROUPS  2 /* vector groups per thread in a full grid */

/* One value the loop stores: node, destination pointer and dtype. */
typedef struct cg_pw_item {
    ir_id node;
    LLVMValueRef dst;
    ir_dtype dt;
    bool full; /* shape == the iteration shape (else a broadcast-shaped output) */
} cg_pw_item;

/* Stores item it's value at iteration index idx (scalar path). A broadcast-
 * shaped output is stored only by the iterations whose broadcast dims are 0. */
static bool cg_pw_store_scalar(cg_ctx *cx, const cg_pw_item *it, cg_index *idx) {
    const ir_node *n = &cx->g->nodes[it->node];
    cg_index oi = cg_index_bcast(cx, idx, &n->shape);
    LLVMValueRef v = cg_emit_value(cx, it->node, &oi);
    if (!v) return false;
    if (it->full) {
        cg_store(cx, it->dst, it->dt, oi.lin, v);
        return true;
    }
    cg_index_dims(cx, idx);
    const ir_shape *s = idx->shape;
    unsigned off = s->rank - n->shape.rank;
    LLVMValueRef cond = LLVMConstInt(cx->i1, 1, 0);
    for (unsigned i = 0; i < s->rank; i++) {
        bool bc = i < off || (n->shape.dim[i - off] == 1 && s->dim[i] != 1);
        if (bc)
            cond = LLVMBuildAnd(
                cx->b, cond, LLVMBuildICmp(cx->b, LLVMIntEQ, idx->dim[i], cg_i64(cx, 0), ""), "");
    }
    LLVMBasicBlockRef join = cg_if_begin(cx, cond);
    cg_store(cx, it->dst, it->dt, oi.lin, v);
    cg_if_end(cx, join);
    return true;
}

/* The loop bounds of this program over n units: the GPU's grid-stride loop (start gid, step
 * stride); on the host, where every program is one thread of the host runner, a contiguous
 * range of ceil(n / programs) units (step 1), so threads never write the same cache lines or
 * fault the same pages (the grid-stride order interleaved 16 threads 16 bytes apart). */
static void cg_pw_range(cg_ctx *cx, LLVMValueRef n, LLVMValueRef gid, LLVMValueRef stride,
                        LLVMValueRef *start, LLVMValueRef *end, LLVMValueRef *step) {
    if (cx->gpu) {
        *start = gid, *end = n, *step = stride;
        return;
    }
    LLVMValueRef np = cg_program_count(cx, 0), one = cg_i64(cx, 1);
    LLVMValueRef chunk = LLVMBuildUDiv(
        cx->b, LLVMBuildSub(cx->b, LLVMBuildAdd(cx->b, n, np, ""), one, ""), np, "chunk");
    *start = LLVMBuildMul(cx->b, cg_program_id(cx, 0), chunk, "lo");
    LLVMValueRef hi = LLVMBuildAdd(cx->b, *start, chunk, "");
    *end = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, hi, n, ""), hi, n, "hi");
    *step = one;
}

/* A GPU grid-stride loop over [gid, n) by stride in 32-bit arithmetic (n a constant below 2^31,
 * gid and stride below 2^31: no i32 wraps, as n + stride < 2^32 and the compare is unsigned),
 * for a loop whose 64-bit induction, bound test and step cost two instructions each: opens it
 * like cg_loop_begin and returns the index widened to i64 (l->iv: the i32 phi). */
static LLVMValueRef cg_pw_loop32_begin(cg_ctx *cx, cg_loop *l, LLVMValueRef gid, int64_t n,
                                       LLVMValueRef stride, const char *name) {
    LLVMValueRef start = LLVMBuildTrunc(cx->b, gid, cx->i32, "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    l->head = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, name);
    l->body = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "body");
    l->exit = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "exit");
    l->step = LLVMBuildTrunc(cx->b, stride, cx->i32, "");
    LLVMBuildBr(cx->b, l->head);
    LLVMPositionBuilderAtEnd(cx->b, l->head);
    l->iv = LLVMBuildPhi(cx->b, cx->i32, "i32");
    LLVMAddIncoming(l->iv, &start, &pre, 1);
    LLVMValueRef lt = LLVMBuildICmp(cx->b, LLVMIntULT, l->iv,
                                    LLVMConstInt(cx->i32, (unsigned long long)n, 0), "");
    LLVMBuildCondBr(cx->b, lt, l->body, l->exit);
    LLVMPositionBuilderAtEnd(cx->b, l->body);
    return LLVMBuildZExt(cx->b, l->iv, cx->i64, "");
}

/* True when a GPU loop over n units (vector groups) by the grid's threads runs in 32 bits. */
static bool cg_pw_loop32(const cg_ctx *cx, LLVMValueRef n) {
    return cx->gpu && LLVMIsAConstantInt(n) && LLVMConstIntGetSExtValue(n) >= 0 &&
           LLVMConstIntGetSExtValue(n) < (1LL << 31);
}

/* The index of element lin of shape s in the row whose leading components row (NULL: none, lin
 * alone) gives, at innermost component col: no division recovers what the row loop knows. */
static cg_index cg_pw_index(const ir_shape *s, LLVMValueRef lin, const cg_index *row,
                            LLVMValueRef col) {
    cg_index idx = cg_index_lin(s, lin);
    if (!row) return idx;
    for (unsigned i = 0; i + 1 < s->rank; i++) idx.dim[i] = row->dim[i];
    idx.dim[s->rank - 1] = col;
    return idx;
}

/* Stores items at the w elements from anchor offset base (a multiple of w): every HBM value of
 * the anchor's shape read at them is one <w x T> load placed before the group's computation
 * (cg_vec_begin), each item one vector store. row / col as cg_pw_index (col: lane 0's).
 * Returns false with an error reported. */
static bool cg_pw_group(cg_ctx *cx, const ir_shape *s, const cg_pw_item *items, unsigned nitems,
                        unsigned w, LLVMValueRef base, const cg_index *row, LLVMValueRef col) {
    LLVMBasicBlockRef elem = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "elem");
    LLVMValueRef br = LLVMBuildBr(cx->b, elem);
    LLVMBuilderRef vb = LLVMCreateBuilderInContext(cx->llctx);
    LLVMPositionBuilderBefore(vb, br);
    LLVMPositionBuilderAtEnd(cx->b, elem);
    LLVMValueRef lins[CG_VEC_MAXLIN], cols[CG_VEC_MAXLIN];
    for (unsigned j = 0; j < w; j++) {
        lins[j] = j ? LLVMBuildNUWAdd(cx->b, base, cg_i64(cx, j), "") : base;
        cols[j] = row && j ? LLVMBuildNUWAdd(cx->b, col, cg_i64(cx, j), "") : col;
    }
    cg_vec_begin(cx, s, w, w, lins, vb);
    cx->nmemo = 0;
    bool ok = true;
    LLVMValueRef vals[16];
    for (unsigned t = 0; ok && t < nitems; t++) {
        for (unsigned j = 0; ok && j < w; j++) {
            cg_index idx = cg_pw_index(s, cx->veclin[j], row, cols[j]);
            vals[j] = cg_emit_value(cx, items[t].node, &idx);
            ok = vals[j] != NULL;
        }
        if (ok) cg_store_vec(cx, items[t].dst, items[t].dt, base, vals, w);
    }
    cg_vec_end(cx);
    LLVMDisposeBuilder(vb);
    return ok;
}

/* Emits the grid-stride loop over shape s storing items; w > 1 enables the
 * vector path (all items full). Returns false with an error reported. */
static bool cg_pw_loop(cg_ctx *cx, const ir_shape *s, const cg_pw_item *items, unsigned nitems,
                       unsigned w, unsigned threads) {
    LLVMValueRef total = cg_numel(cx, s);
    LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
    LLVMValueRef gid = LLVMBuildAdd(
        cx->b, LLVMBuildMul(cx->b, cg_program_id(cx, 0), cg_i64(cx, threads), ""), tid, "gid");
    LLVMValueRef stride =
        LLVMBuildMul(cx->b, cg_program_count(cx, 0), cg_i64(cx, threads), "stride");
    LLVMValueRef tail_start = cg_i64(cx, 0);
    if (w > 1) {
        LLVMValueRef ngroups = LLVMBuildUDiv(cx->b, total, cg_i64(cx, w), "ngroups");
        LLVMValueRef lo, hi, step, gi;
        cg_pw_range(cx, ngroups, gid, stride, &lo, &hi, &step);
        cg_loop l;
        bool narrow = cg_pw_loop32(cx, ngroups);
        if (narrow)
            gi = cg_pw_loop32_begin(cx, &l, gid, LLVMConstIntGetSExtValue(ngroups), stride, "vec");
        else
            gi = cg_loop_begin(cx, &l, lo, hi, step, "vec");
        LLVMValueRef base = LLVMBuildNUWMul(cx->b, gi, cg_i64(cx, w), "base");
        if (!cg_pw_group(cx, s, items, nitems, w, base, NULL, NULL)) return false;
        if (narrow) { /* cg_loop_end's latch in i32 */
            LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
            LLVMValueRef next = LLVMBuildNUWAdd(cx->b, l.iv, l.step, "i.next");
            LLVMAddIncoming(l.iv, &next, &latch, 1);
            LLVMBuildBr(cx->b, l.head);
            LLVMPositionBuilderAtEnd(cx->b, l.exit);
        } else {
            cg_loop_end(cx, &l);
        }
        tail_start = LLVMBuildNUWMul(cx->b, ngroups, cg_i64(cx, w), "tail");
    }
    cg_loop l;
    LLVMValueRef i;
    if (w > 1) { /* the tail: fewer than w elements */
        i = cg_loop_begin(cx, &l, LLVMBuildAdd(cx->b, tail_start, gid, ""), total, stride,
                          "scalar");
    } else {
        LLVMValueRef lo, hi, step;
        cg_pw_range(cx, total, gid, stride, &lo, &hi, &step);
        i = cg_loop_begin(cx, &l, lo, hi, step, "scalar");
    }
    cx->nmemo = 0;
    cg_index idx = cg_index_lin(s, i);
    for (unsigned t = 0; t < nitems; t++)
        if (!cg_pw_store_scalar(cx, &items[t], &idx)) return false;
    cg_loop_end(cx, &l);
    return true;
}

/* Stores items at the elements [lo, hi) of the row at anchor offset rbase whose leading
 * components row gives, lane `lane` of `lanes` taking every lanes-th one, each alone. */
static bool cg_pw_row_scalar(cg_ctx *cx, const ir_shape *s, const cg_pw_item *items,
                             unsigned nitems, const cg_index *row, LLVMValueRef rbase,
                             LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef lane, unsigned lanes,
                             const char *name) {
    cg_loop l;
    LLVMValueRef col =
        cg_loop_begin(cx, &l, LLVMBuildNUWAdd(cx->b, lo, lane, ""), hi, cg_i64(cx, lanes), name);
    cx->nmemo = 0;
    cg_index idx = cg_pw_index(s, LLVMBuildNUWAdd(cx->b, rbase, col, ""), row, col);
    for (unsigned t = 0; t < nitems; t++)
        if (!cg_pw_store_scalar(cx, &items[t], &idx)) return false;
    cg_loop_end(cx, &l);
    return true;
}

/* The loop of pointwise.row over shape s (rank >= 2) storing items: rows of the innermost extent
 * C, `lanes` consecutive threads a row and threads / lanes rows a block, grid-stride over the
 * rows (host: each program a contiguous range of rows, one lane). A row's leading components
 * are split from its number once; its elements are a scalar head up to the first offset that is
 * a multiple of w, the vector groups from there (w > 1: cg_pw_group, lanes striding), and a
 * scalar tail. What depends on the row alone is loop-invariant in its three inner loops. */
static bool cg_pw_rows(cg_ctx *cx, const ir_shape *s, const cg_pw_item *items, unsigned nitems,
                       unsigned w, unsigned threads, unsigned lanes) {
    ir_shape lead = *s;
    lead.rank--;
    LLVMValueRef c = cg_dim(cx, s->dim[s->rank - 1]), nrows = cg_numel(cx, &lead);
    LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
    LLVMValueRef lane = LLVMBuildURem(cx->b, tid, cg_i64(cx, lanes), "lane");
    LLVMValueRef rpb = cg_i64(cx, threads / lanes);
    LLVMValueRef gid = LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, cg_program_id(cx, 0), rpb, ""),
                                    LLVMBuildUDiv(cx->b, tid, cg_i64(cx, lanes), ""), "row0");
    LLVMValueRef stride = LLVMBuildMul(cx->b, cg_program_count(cx, 0), rpb, "rstride");
    LLVMValueRef lo, hi, step;
    cg_pw_range(cx, nrows, gid, stride, &lo, &hi, &step);
    cg_loop rl;
    LLVMValueRef r = cg_loop_begin(cx, &rl, lo, hi, step, "row");
    LLVMValueRef rbase = LLVMBuildNUWMul(cx->b, r, c, "rbase");
    cg_index row = cg_index_lin(&lead, r);
    cg_index_dims(cx, &row);
    LLVMValueRef zero = cg_i64(cx, 0), head = zero;
    if (w > 1) { /* elements before the first offset that is a multiple of w, at most C */
        head = LLVMBuildAnd(cx->b, LLVMBuildNeg(cx->b, rbase, ""), cg_i64(cx, w - 1), "");
        head =
            LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, head, c, ""), head, c, "head");
    }
    if (!cg_pw_row_scalar(cx, s, items, nitems, &row, rbase, zero, head, lane, lanes, "rhead"))
        return false;
    LLVMValueRef tail = head;
    if (w > 1) {
        LLVMValueRef ng =
            LLVMBuildUDiv(cx->b, LLVMBuildNUWSub(cx->b, c, head, ""), cg_i64(cx, w), "rgroups");
        cg_loop gl;
        LLVMValueRef gi = cg_loop_begin(cx, &gl, lane, ng, cg_i64(cx, lanes), "rvec");
        LLVMValueRef col =
            LLVMBuildNUWAdd(cx->b, head, LLVMBuildNUWMul(cx->b, gi, cg_i64(cx, w), ""), "col");
        LLVMValueRef base = LLVMBuildNUWAdd(cx->b, rbase, col, "base");
        if (!cg_pw_group(cx, s, items, nitems, w, base, &row, col)) return false;
        cg_loop_end(cx, &gl);
        tail = LLVMBuildNUWAdd(cx->b, head, LLVMBuildNUWMul(cx->b, ng, cg_i64(cx, w), ""), "rtail");
    }
    if (!cg_pw_row_scalar(cx, s, items, nitems, &row, rbase, tail, c, lane, lanes, "rtail"))
        return false;
    cg_loop_end(cx, &rl);
    return true;
}

/* Vector width for a loop whose items are all full: 16 bytes of the widest
 * stored or loaded dtype, at most 8 elements. 1 when some item is not full. */
static unsigned cg_pw_width(cg_ctx *cx, const cg_pw_item *items, unsigned n) {
    int maxb = 1;
    for (unsigned t = 0; t < n; t++) {
        if (!items[t].full) return 1;
        if (ir_dtype_size(items[t].dt) > maxb) maxb = ir_dtype_size(items[t].dt);
    }
    for (unsigned b = 0; cx->k && b < cx->k->nbufs; b++) {
        int sz = ir_dtype_size((ir_dtype)cx->g->nodes[cx->k->bufs[b].value].dtype);
        if (sz > maxb) maxb = sz;
    }
    unsigned w = 16u / (unsigned)maxb;
    return w > 8 ? 8 : w;
}

/* Finishes a loop kernel over shape s with the pointwise geometry. */
static void cg_pw_end(cg_ctx *cx, const ir_shape *s, unsigned w, unsigned threads,
                      unsigned groups) {
    ir_shape work[3] = {*s, {0}, {0}};
    int64_t per[3] = {(int64_t)threads * w * groups, 1, 1};
    int64_t cap[3] = {cx->gpu ? (1 << 20) : CG_HOST_PROGRAMS, 1, 1};
    unsigned block[3] = {threads, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, 0);
}

/* pointwise.row's kernel for region `region` (schedule threads, lanes on the GPU; one lane of
 * one thread a program on the host) over shape s storing items; its geometry: blocks of
 * threads / lanes rows. Refuses a shape of rank below 2 or parameters it cannot emit. */
static bool cg_pw_emit_rows(cg_ctx *cx, unsigned region, const ir_shape *s, const cg_pw_item *items,
                            unsigned n) {
    const ir_schedule *sc = &cx->g->regions[region].sched;
    unsigned threads = cx->gpu ? (unsigned)sc->p[0] : 1, lanes = cx->gpu ? (unsigned)sc->p[1] : 1;
    if (s->rank < 2 || threads < 32 * cx->gpu || threads > 1024 || (cx->gpu && threads % 32) ||
        lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) || threads % lanes) {
        tx_error(cx->diag,
                 "codegen: region %u: pointwise.row of %d threads x %d lanes over rank %u", region,
                 (int)sc->p[0], (int)sc->p[1], (unsigned)s->rank);
        return false;
    }
    unsigned w = cg_pw_width(cx, items, n);
    if (!cg_pw_rows(cx, s, items, n, w, threads, lanes)) return false;
    ir_shape work[3] = {*s, {0}, {0}};
    work[0].rank--;
    int64_t per[3] = {(int64_t)(threads / lanes), 1, 1};
    int64_t cap[3] = {cx->gpu ? (1 << 20) : CG_HOST_PROGRAMS, 1, 1};
    unsigned block[3] = {threads, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, 0);
    return true;
}

/* Pointwise/copy region: iterates over the anchor's shape, stores every
 * region output. */
bool cg_emit_pointwise(cg_ctx *cx, unsigned region) {
    const ir_graph *g = cx->g;
    const ir_region *rg = &g->regions[region];
    if (!cg_kernel_begin(cx, region, NULL)) return false;
    if (rg->anchor >= g->n) {
        tx_error(cx->diag, "codegen: region %u has no anchor node", region);
        return false;
    }
    const ir_shape *s = &g->nodes[rg->anchor].shape;
    unsigned n = 0;
    cg_pw_item *items = ir_xcalloc(g->n, sizeof *items);
    bool ok = true;
    for (ir_id i = 0; ok && i < g->n; i++) {
        if (!cg_is_region_output(cx, i)) continue;
        const ir_node *o = &g->nodes[i];
        ir_shape bs;
        bool full = ir_shape_eq(&o->shape, s);
        if (!full && !(ir_shape_broadcast(&o->shape, s, &bs) && ir_shape_eq(&bs, s))) {
            char b1[96], b2[96];
            tx_error(cx->diag,
                     "codegen: region %u stores %%%u of shape %s, which does not broadcast to its "
                     "iteration shape %s",
                     region, i, ir_shape_str(g, &o->shape, b1, sizeof b1),
                     ir_shape_str(g, s, b2, sizeof b2));
            ok = false;
            break;
        }
        items[n++] = (cg_pw_item){i, cg_buf_ptr(cx, i), (ir_dtype)o->dtype, full};
    }
    if (ok && n == 0) { /* nothing to store (a returned constant: the output copy fills it) */
        free(items);
        LLVMDeleteFunction(cx->fn);
        cx->fn = NULL;
        cx->k = NULL;
        cg_kernel_drop(cx);
        return true;
    }
    if (ok && rg->sched.id == PASS_SCH_POINTWISE_ROW) { /* the planner's row schedule */
        ok = cg_pw_emit_rows(cx, region, s, items, n);
        free(items);
        return ok;
    }
    unsigned threads = cx->gpu ? CG_PW_THREADS : 1, groups = CG_PW_GROUPS;
    if (cx->gpu && rg->sched.id == PASS_SCH_POINTWISE_VECTOR) { /* the planner's schedule */
        threads = (unsigned)rg->sched.p[0];
        groups = (unsigned)rg->sched.p[1];
        if (threads < 32 || threads > 1024 || threads % 32 || groups < 1 || groups > 64) {
            tx_error(cx->diag, "codegen: region %u: pointwise schedule of %u threads x %u groups",
                     region, threads, groups);
            free(items);
            return false;
        }
    }
    unsigned w = ok ? cg_pw_width(cx, items, n) : 1;
    if (ok) ok = cg_pw_loop(cx, s, items, n, w, threads);
    free(items);
    if (!ok) return false;
    cg_pw_end(cx, s, w, threads, groups);
    return true;
}

/* Output copy kernel body; see codegen.h. */
bool cg_emit_copy_body(cg_ctx *cx, ir_id v, LLVMValueRef dst) {
    const ir_node *n = &cx->g->nodes[v];
    cg_pw_item it = {v, dst, (ir_dtype)n->dtype, true};
    unsigned threads = cx->gpu ? CG_PW_THREADS : 1;
    unsigned w = cg_pw_width(cx, &it, 1);
    if (!cg_pw_loop(cx, &n->shape, &it, 1, w, threads)) return false;
    cg_pw_end(cx, &n->shape, w, threads, CG_PW_GROUPS);
    return true;
}
