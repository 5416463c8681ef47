/* reduction.c - the emitter of reduction regions: an elementwise prologue,
 * one or more reductions over the same axes of the same shape (each may
 * use the previous ones' results), and an elementwise epilogue on the
 * broadcast-back rows or on the reduced values.
 *
 * Row mode (the innermost axis is reduced): one block per row, threads
 * stride over the row, warp shuffles then shared memory combine.
 * Column mode (the innermost axis is kept): one thread per kept element,
 * a serial loop over the reduced elements; neighbouring threads read
 * neighbouring addresses. When the row is short enough (a concrete length
 * of at most CG_RED_HOLD elements per thread) every pass is unrolled and
 * the row's values stay in registers between passes (one HBM read);
 * otherwise each pass is a loop that reads the row again. */
#define TX_CODEGEN_INTERNAL
#include "codegen/codegen.h"

#include <stdlib.h>
#include <string.h>

#define CG_RED_MAXRED 32
#define CG_RED_HOLD 16

typedef struct cg_red {
    unsigned region;
    const ir_shape *S;     /* shape the reductions read */
    uint32_t axes;         /* reduced axes of S */
    ir_shape kept;         /* S without the reduced axes (rows) */
    ir_shape red;          /* the reduced axes of S (one row) */
    ir_id reds[CG_RED_MAXRED];
    unsigned nred;
    bool rowmode;
    bool trailing, leading; /* reduced axes are the last / first ones */
    unsigned threads;
    unsigned hold;          /* > 0: unrolled passes, elements per thread */
    unsigned vec;           /* > 1: hold elements come in aligned groups of vec (vector loads) */
    LLVMValueRef nrows, rowlen;
} cg_red;

/* Collects the reductions of region r and checks they share shape and
 * axes; fills the layout facts. */
static bool cg_red_plan(cg_ctx *cx, unsigned r, cg_red *p) {
    const ir_graph *g = cx->g;
    memset(p, 0, sizeof *p);
    p->region = r;
    for (ir_id i = 0; i < g->n; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->region != r || !(ir_op_traits((ir_op)n->op) & IR_T_REDUCE)) continue;
        const ir_shape *in = &g->nodes[ir_in(g, n, 0)].shape;
        if (p->nred == 0) {
            p->S = in;
            p->axes = n->a.red.axes;
        } else if (!ir_shape_eq(in, p->S) || n->a.red.axes != p->axes || p->nred == CG_RED_MAXRED) {
            tx_error(cx->diag, "codegen: reduction region %u mixes reductions of different shapes or axes", r);
            return false;
        }
        p->reds[p->nred++] = i;
    }
    if (!p->nred) {
        tx_error(cx->diag, "codegen: reduction region %u holds no reduction", r);
        return false;
    }
    const ir_shape *S = p->S;
    unsigned nk = 0, nr = 0;
    for (unsigned a = 0; a < S->rank; a++) {
        if (p->axes & (1u << a))
            p->red.dim[nr++] = S->dim[a];
        else
            p->kept.dim[nk++] = S->dim[a];
    }
    p->kept.rank = (uint8_t)nk;
    p->red.rank = (uint8_t)nr;
    p->rowmode = S->rank == 0 || (p->axes & (1u << (S->rank - 1))) || nk == 0;
    p->trailing = true;
    for (unsigned a = 0; a + 1 < S->rank; a++)
        if ((p->axes & (1u << a)) && !(p->axes & (1u << (a + 1)))) p->trailing = false;
    p->leading = true;
    for (unsigned a = 1; a < S->rank; a++)
        if ((p->axes & (1u << a)) && !(p->axes & (1u << (a - 1)))) p->leading = false;
    int64_t len = ir_shape_numel(&p->red);
    if (!cx->gpu) {
        p->threads = 1;
    } else if (p->rowmode) {
        unsigned t = 32;
        while (t < 256 && len > 0 && (int64_t)t * 4 < len) t *= 2;
        p->threads = len < 0 ? 256 : t;
    } else {
        p->threads = 128;
    }
    int64_t per = p->rowmode ? (len + p->threads - 1) / p->threads : len;
    p->hold = (len > 0 && per <= CG_RED_HOLD && g->regions[r].strategy == IR_RED_ONCHIP) ? (unsigned)per : 0;
    p->vec = 1;
    if (p->hold && p->rowmode && p->trailing) {
        /* 16 bytes of the widest dtype of the row-shaped values the region
         * reads or writes; the row length must be a multiple of it. */
        int maxb = 1;
        for (ir_id i = 0; i < ir_output(g); i++) {
            const ir_node *n = &g->nodes[i];
            if (n->region != r) continue;
            for (unsigned j = 0; j <= n->nin; j++) { /* its HBM inputs, and itself when stored */
                ir_id v = j < n->nin ? ir_in(g, n, j) : i;
                const ir_node *vn = &g->nodes[v];
                bool hbm = cx->bufidx_kind[v] && (j == n->nin || vn->region != r);
                if (hbm && ir_shape_eq(&vn->shape, S) && ir_dtype_size((ir_dtype)vn->dtype) > maxb)
                    maxb = ir_dtype_size((ir_dtype)vn->dtype);
            }
        }
        unsigned v = 16u / (unsigned)maxb;
        if (v > 8) v = 8;
        while (v > 1 && (len % v || p->hold % v)) v /= 2;
        p->vec = v;
    }
    return true;
}

/* Decomposes linear v over the dims of s into comps (C order). */
static void cg_delin(cg_ctx *cx, LLVMValueRef v, const ir_shape *s, LLVMValueRef *comps) {
    for (int i = (int)s->rank - 1; i >= 0; i--) {
        if (i == 0) {
            comps[i] = v;
        } else {
            LLVMValueRef d = cg_dim(cx, s->dim[i]);
            comps[i] = LLVMBuildURem(cx->b, v, d, "");
            v = LLVMBuildUDiv(cx->b, v, d, "");
        }
    }
}

/* Linear offset into S of element e of row `row`. */
static LLVMValueRef cg_red_lin(cg_ctx *cx, const cg_red *p, LLVMValueRef row, LLVMValueRef e) {
    if (p->trailing) return LLVMBuildNUWAdd(cx->b, LLVMBuildNUWMul(cx->b, row, p->rowlen, ""), e, "");
    if (p->leading) return LLVMBuildNUWAdd(cx->b, LLVMBuildNUWMul(cx->b, e, p->nrows, ""), row, "");
    LLVMValueRef kc[IR_MAX_RANK], rc[IR_MAX_RANK], d[IR_MAX_RANK];
    cg_delin(cx, row, &p->kept, kc);
    cg_delin(cx, e, &p->red, rc);
    unsigned nk = 0, nr = 0;
    for (unsigned a = 0; a < p->S->rank; a++) d[a] = (p->axes & (1u << a)) ? rc[nr++] : kc[nk++];
    return cg_index_from_dims(cx, p->S, d).lin;
}

/* The compute dtype of a reduction's accumulator: f32 for floats, i32. */
static ir_dtype cg_acc_dtype(const ir_node *n) { return ir_dtype_is_float((ir_dtype)n->dtype) ? IR_F32 : IR_I32; }

/* Row-element iteration state for one row: either hold (unrolled) lins or
 * a loop. */
typedef struct cg_rowit {
    LLVMValueRef row;
    LLVMValueRef e0, estep;         /* first element of this thread, stride */
    LLVMValueRef lin[CG_RED_HOLD];  /* hold mode: element lins (clamped) */
    LLVMValueRef valid[CG_RED_HOLD];
} cg_rowit;

/* Accumulates reduction k over the row and sets its substitution. */
static bool cg_red_pass(cg_ctx *cx, cg_red *p, cg_rowit *it, unsigned k, LLVMValueRef scratch) {
    const ir_graph *g = cx->g;
    ir_id rid = p->reds[k];
    const ir_node *rn = &g->nodes[rid];
    ir_id in = ir_in(g, rn, 0);
    ir_dtype idt = (ir_dtype)g->nodes[in].dtype, adt = cg_acc_dtype(rn);
    ir_op op = (ir_op)rn->op;
    LLVMTypeRef at = cg_ctype(cx, adt);
    LLVMValueRef acc = cg_reduce_identity(cx, op, at);
    if (p->hold) {
        for (unsigned i = 0; i < p->hold; i++) {
            cg_index idx = cg_index_lin(p->S, it->lin[i]);
            LLVMValueRef v = cg_emit_value(cx, in, &idx);
            if (!v) return false;
            v = cg_convert(cx, v, idt, adt);
            LLVMValueRef c = cg_reduce_combine(cx, op, acc, v);
            acc = it->valid[i] ? LLVMBuildSelect(cx->b, it->valid[i], c, acc, "") : c;
        }
    } else {
        LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
        cg_loop l;
        LLVMValueRef e = cg_loop_begin(cx, &l, it->e0, p->rowlen, it->estep, "red");
        LLVMValueRef phi = LLVMBuildPhi(cx->b, at, "acc");
        /* The phi sits in the body; move it to the loop head. */
        LLVMInstructionRemoveFromParent(phi);
        LLVMPositionBuilderBefore(cx->b, LLVMGetFirstInstruction(l.head));
        LLVMInsertIntoBuilder(cx->b, phi);
        LLVMPositionBuilderAtEnd(cx->b, l.body);
        LLVMAddIncoming(phi, &acc, &pre, 1);
        unsigned mark = cg_memo_mark(cx);
        cg_index idx = cg_index_lin(p->S, cg_red_lin(cx, p, it->row, e));
        LLVMValueRef v = cg_emit_value(cx, in, &idx);
        if (!v) return false;
        LLVMValueRef c = cg_reduce_combine(cx, op, phi, cg_convert(cx, v, idt, adt));
        cg_memo_reset(cx, mark);
        LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
        LLVMAddIncoming(phi, &c, &latch, 1);
        cg_loop_end(cx, &l);
        acc = phi;
    }
    if (p->rowmode) acc = cg_block_reduce(cx, op, acc, p->threads, scratch);
    if (op == IR_OP_MEAN) {
        if (adt == IR_F32)
            acc = LLVMBuildFDiv(cx->b, acc, LLVMBuildSIToFP(cx->b, p->rowlen, cx->f32, ""), "mean");
        else
            acc = LLVMBuildSDiv(cx->b, acc, LLVMBuildTrunc(cx->b, p->rowlen, cx->i32, ""), "mean");
    }
    cx->subst[rid] = cg_convert(cx, acc, adt, (ir_dtype)rn->dtype);
    return true;
}

/* How output o is stored: 1 = per row element (shape S), 2 = once per row
 * (the reduced shape, keepdim or not), 0 = unsupported. */
static int cg_red_out_kind(const cg_red *p, const ir_shape *o) {
    if (ir_shape_eq(o, p->S)) return 1;
    if (ir_shape_eq(o, &p->kept)) return 2;
    ir_shape kd = *p->S;
    for (unsigned a = 0; a < kd.rank; a++)
        if (p->axes & (1u << a)) kd.dim[a] = 1;
    if (ir_shape_eq(o, &kd)) return 2;
    int64_t n1 = ir_shape_numel(o), n2 = ir_shape_numel(&p->kept);
    if (n1 >= 0 && n1 == n2 && n1 == 1) return 2;
    return 0;
}

/* Stores the region's outputs for one row. */
static bool cg_red_store(cg_ctx *cx, cg_red *p, cg_rowit *it) {
    const ir_graph *g = cx->g;
    for (ir_id o = 0; o < g->n; o++) {
        if (!cg_is_region_output(cx, o)) continue;
        const ir_node *on = &g->nodes[o];
        int kind = cg_red_out_kind(p, &on->shape);
        LLVMValueRef dst = cg_buf_ptr(cx, o);
        if (kind == 0) {
            char b1[96], b2[96];
            tx_error(cx->diag, "codegen: reduction region %u stores %%%u of shape %s, neither its row shape %s "
                     "nor the reduced shape", p->region, o, ir_shape_str(g, &on->shape, b1, sizeof b1),
                     ir_shape_str(g, p->S, b2, sizeof b2));
            return false;
        }
        if (kind == 2) {
            cg_index idx = cg_index_lin(&on->shape, it->row);
            LLVMValueRef v = cg_emit_value(cx, o, &idx);
            if (!v) return false;
            LLVMValueRef first = LLVMBuildICmp(cx->b, LLVMIntEQ, cg_thread_id(cx), LLVMConstInt(cx->i32, 0, 0), "");
            LLVMBasicBlockRef join = cg_if_begin(cx, p->rowmode ? first : LLVMConstInt(cx->i1, 1, 0));
            cg_store(cx, dst, (ir_dtype)on->dtype, it->row, v);
            cg_if_end(cx, join);
            continue;
        }
        if (p->hold && p->vec > 1) {
            for (unsigned i = 0; i < p->hold; i += p->vec) {
                LLVMValueRef vals[8];
                for (unsigned j = 0; j < p->vec; j++) {
                    cg_index idx = cg_index_lin(p->S, it->lin[i + j]);
                    if (!(vals[j] = cg_emit_value(cx, o, &idx))) return false;
                }
                LLVMBasicBlockRef join = it->valid[i] ? cg_if_begin(cx, it->valid[i]) : NULL;
                cg_store_vec(cx, dst, (ir_dtype)on->dtype, it->lin[i], vals, p->vec);
                if (join) cg_if_end(cx, join);
            }
            continue;
        }
        if (p->hold) {
            for (unsigned i = 0; i < p->hold; i++) {
                cg_index idx = cg_index_lin(p->S, it->lin[i]);
                LLVMValueRef v = cg_emit_value(cx, o, &idx);
                if (!v) return false;
                if (!it->valid[i]) {
                    cg_store(cx, dst, (ir_dtype)on->dtype, it->lin[i], v);
                    continue;
                }
                LLVMBasicBlockRef join = cg_if_begin(cx, it->valid[i]);
                cg_store(cx, dst, (ir_dtype)on->dtype, it->lin[i], v);
                cg_if_end(cx, join);
            }
            continue;
        }
        cg_loop l;
        LLVMValueRef e = cg_loop_begin(cx, &l, it->e0, p->rowlen, it->estep, "st");
        unsigned mark = cg_memo_mark(cx);
        LLVMValueRef lin = cg_red_lin(cx, p, it->row, e);
        cg_index idx = cg_index_lin(p->S, lin);
        LLVMValueRef v = cg_emit_value(cx, o, &idx);
        if (!v) return false;
        cg_store(cx, dst, (ir_dtype)on->dtype, lin, v);
        cg_memo_reset(cx, mark);
        cg_loop_end(cx, &l);
    }
    return true;
}

/* Emits the body for one row: element lins (hold mode), every reduction
 * pass, then the stores. */
static bool cg_red_row(cg_ctx *cx, cg_red *p, LLVMValueRef row, LLVMValueRef scratch) {
    cg_rowit it;
    memset(&it, 0, sizeof it);
    it.row = row;
    if (p->rowmode) {
        it.e0 = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
        it.estep = cg_i64(cx, p->threads);
    } else {
        it.e0 = cg_i64(cx, 0);
        it.estep = cg_i64(cx, 1);
    }
    if (p->hold && p->vec > 1) {
        /* Group i of the thread: elements [(i T + tid) vec, + vec). */
        unsigned V = p->vec;
        int64_t len = ir_shape_numel(&p->red);
        LLVMValueRef lastg = cg_i64(cx, len - V);
        for (unsigned i = 0; i < p->hold / V; i++) {
            LLVMValueRef g0 = LLVMBuildMul(cx->b, LLVMBuildAdd(cx->b, it.e0, cg_i64(cx, (int64_t)i * p->threads), ""),
                                           cg_i64(cx, V), "");
            bool always = (int64_t)(i + 1) * p->threads * V <= len;
            LLVMValueRef valid = always ? NULL : LLVMBuildICmp(cx->b, LLVMIntSLT, g0, p->rowlen, "");
            if (valid) g0 = LLVMBuildSelect(cx->b, valid, g0, lastg, "");
            for (unsigned j = 0; j < V; j++) {
                LLVMValueRef e = j ? LLVMBuildAdd(cx->b, g0, cg_i64(cx, j), "") : g0;
                it.lin[i * V + j] = cg_red_lin(cx, p, row, e);
                it.valid[i * V + j] = valid;
            }
        }
        cx->vecw = V;
        cx->vecn = p->hold;
        cx->nvecalias = 0;
        cx->vecshape = p->S;
        cx->vecb = NULL;
        for (unsigned j = 0; j < p->hold; j++) cx->veclin[j] = it.lin[j];
        memset(cx->veccache, 0, (size_t)cx->g->n * CG_VEC_MAXLIN * sizeof *cx->veccache);
    } else if (p->hold) {
        LLVMValueRef last = LLVMBuildSub(cx->b, p->rowlen, cg_i64(cx, 1), "");
        int64_t len = ir_shape_numel(&p->red);
        for (unsigned i = 0; i < p->hold; i++) {
            LLVMValueRef e = LLVMBuildAdd(cx->b, it.e0, cg_i64(cx, (int64_t)i * (p->rowmode ? p->threads : 1)), "");
            bool always = !p->rowmode || (int64_t)(i + 1) * p->threads <= len;
            it.valid[i] = always ? NULL : LLVMBuildICmp(cx->b, LLVMIntSLT, e, p->rowlen, "");
            if (it.valid[i]) e = LLVMBuildSelect(cx->b, it.valid[i], e, last, "");
            it.lin[i] = cg_red_lin(cx, p, row, e);
        }
    }
    bool ok = true;
    for (unsigned k = 0; k < p->nred && ok; k++) ok = cg_red_pass(cx, p, &it, k, scratch);
    if (ok) ok = cg_red_store(cx, p, &it);
    cx->vecw = cx->vecn = cx->nvecalias = 0;
    cx->vecshape = NULL;
    return ok;
}

/* Reduction region; see the file comment. */
bool cg_emit_reduction(cg_ctx *cx, unsigned region) {
    cg_red p;
    if (!cg_red_plan(cx, region, &p)) return false;
    if (!cg_kernel_begin(cx, region, NULL)) return false;
    p.nrows = cg_numel(cx, &p.kept);
    p.rowlen = cg_numel(cx, &p.red);
    /* 32 words of shared scratch serve f32 and i32 block reductions alike. */
    LLVMValueRef scratch = NULL;
    if (cx->gpu && p.rowmode && p.threads > 32) scratch = cg_shared_array(cx, cx->f32, 32, "red.scratch");
    LLVMValueRef start, step;
    if (p.rowmode) {
        start = cg_program_id(cx, 0);
        step = cg_program_count(cx, 0);
    } else {
        LLVMValueRef tid = LLVMBuildZExt(cx->b, cg_thread_id(cx), cx->i64, "");
        start = LLVMBuildAdd(cx->b, LLVMBuildMul(cx->b, cg_program_id(cx, 0), cg_i64(cx, p.threads), ""), tid, "");
        step = LLVMBuildMul(cx->b, cg_program_count(cx, 0), cg_i64(cx, p.threads), "");
    }
    cg_loop l;
    LLVMValueRef row = cg_loop_begin(cx, &l, start, p.nrows, step, "row");
    cx->nmemo = 0;
    if (!cg_red_row(cx, &p, row, scratch)) return false;
    for (unsigned k = 0; k < p.nred; k++) cx->subst[p.reds[k]] = NULL;
    cx->nmemo = 0;
    cg_loop_end(cx, &l);
    ir_shape work[3] = {p.kept, {0}, {0}};
    int64_t per[3] = {p.rowmode ? 1 : p.threads, 1, 1};
    int64_t cap[3] = {cx->gpu ? (1 << 20) : 1, 1, 1};
    unsigned block[3] = {p.threads, 1, 1};
    cg_kernel_end(cx, work, per, cap, block, 0);
    return true;
}
