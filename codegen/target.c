/* target.c - the per-target mechanics layer: program and thread ids, warp
 * shuffles, shared memory, barriers, block reductions, loops. On the host a
 * block has one thread: shuffles and barriers vanish, shared memory is a
 * private array, and program ids are parameters of the kernel body. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* i32, i64 and f32 constants. */
LLVMValueRef cg_i32(cg_ctx *cx, int64_t v) {
    return LLVMConstInt(cx->i32, (unsigned long long)v, 1);
}
LLVMValueRef cg_i64(cg_ctx *cx, int64_t v) {
    return LLVMConstInt(cx->i64, (unsigned long long)v, 1);
}
LLVMValueRef cg_f32c(cg_ctx *cx, double v) { return LLVMConstReal(cx->f32, v); }

/* Declares intrinsic `name` (overloaded on tys when n > 0); aborts the
 * compile with a clear message if LLVM does not know it, which must not
 * happen for the fixed set used here. */
LLVMValueRef cg_intrinsic(cg_ctx *cx, const char *name, LLVMTypeRef *tys, unsigned n,
                          LLVMTypeRef *fty) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        fprintf(stderr, "txc: internal error: LLVM has no intrinsic %s\n", name);
        abort();
    }
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(cx->mod, id, tys, n);
    if (fty) *fty = LLVMIntrinsicGetType(cx->llctx, id, tys, n);
    return f;
}

/* Calls intrinsic `name` overloaded on the type of args[0] (when ovl) with
 * args; returns the call. */
LLVMValueRef cg_call_intrinsic(cg_ctx *cx, const char *name, bool ovl, LLVMValueRef *args,
                               unsigned n) {
    LLVMTypeRef ty = n ? LLVMTypeOf(args[0]) : NULL, fty;
    LLVMValueRef f = cg_intrinsic(cx, name, ovl ? &ty : NULL, ovl ? 1 : 0, &fty);
    return LLVMBuildCall2(cx->b, fty, f, args, n, "");
}

/* Reads a PTX special register (i32). */
static LLVMValueRef cg_sreg(cg_ctx *cx, const char *name) {
    return cg_call_intrinsic(cx, name, false, NULL, 0);
}

/* Program id along d as i64. */
LLVMValueRef cg_program_id(cg_ctx *cx, int d) {
    static const char *const n[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x",
                                     "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                     "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    if (!cx->gpu) return cx->pid[d];
    return LLVMBuildZExt(cx->b, cg_sreg(cx, n[d]), cx->i64, "pid");
}

/* Number of programs along d as i64. */
LLVMValueRef cg_program_count(cg_ctx *cx, int d) {
    static const char *const n[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x",
                                     "llvm.nvvm.read.ptx.sreg.nctaid.y",
                                     "llvm.nvvm.read.ptx.sreg.nctaid.z"};
    if (!cx->gpu) return cx->npid[d];
    return LLVMBuildZExt(cx->b, cg_sreg(cx, n[d]), cx->i64, "npid");
}

/* Thread id along x (i32); 0 on the host. */
LLVMValueRef cg_thread_id(cg_ctx *cx) {
    if (!cx->gpu) return LLVMConstInt(cx->i32, 0, 0);
    return cg_sreg(cx, "llvm.nvvm.read.ptx.sreg.tid.x");
}

/* Lanes that take part in a shuffle: 32 on the GPU, 1 on the host. */
unsigned cg_warp_size(const cg_ctx *cx) { return cx->gpu ? 32 : 1; }

/* Block-wide barrier (GPU only). */
void cg_barrier(cg_ctx *cx) {
    if (cx->gpu) cg_call_intrinsic(cx, "llvm.nvvm.barrier0", false, NULL, 0);
}

/* Inline PTX `text` with constraints `cons` (side effects: never moved or removed). */
static LLVMValueRef cg_asm(cg_ctx *cx, LLVMTypeRef ret, const char *text, const char *cons,
                           LLVMValueRef *args, unsigned n) {
    LLVMTypeRef pt[4];
    for (unsigned i = 0; i < n && i < 4; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret ? ret : LLVMVoidTypeInContext(cx->llctx), pt, n, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons),
                                      1, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(cx->b, fty, a, args, n, "");
}

/* Cluster barrier; see cg_impl.h. */
void cg_cluster_sync(cg_ctx *cx) {
    if (cx->gpu)
        cg_asm(cx, NULL, "barrier.cluster.arrive;\n\tbarrier.cluster.wait;", "~{memory}", NULL, 0);
}

void cg_cluster_arrive(cg_ctx *cx) {
    if (cx->gpu) cg_asm(cx, NULL, "barrier.cluster.arrive;", "~{memory}", NULL, 0);
}

void cg_cluster_wait(cg_ctx *cx) {
    if (cx->gpu) cg_asm(cx, NULL, "barrier.cluster.wait;", "~{memory}", NULL, 0);
}

/* Distributed shared-memory load; see cg_impl.h. */
LLVMValueRef cg_cluster_load(cg_ctx *cx, LLVMTypeRef t, LLVMValueRef sptr, LLVMValueRef rank) {
    if (!cx->gpu) return LLVMBuildLoad2(cx->b, t, sptr, "");
    LLVMValueRef a[2] = {
        LLVMBuildTrunc(cx->b, LLVMBuildPtrToInt(cx->b, sptr, cx->i64, ""), cx->i32, "saddr"), rank};
    bool f = t == cx->f32;
    return cg_asm(cx, t,
                  f ? "{\n\t.reg .b32 ra;\n\tmapa.shared::cluster.u32 ra, $1, $2;\n\t"
                      "ld.shared::cluster.f32 $0, [ra];\n\t}"
                    : "{\n\t.reg .b32 ra;\n\tmapa.shared::cluster.u32 ra, $1, $2;\n\t"
                      "ld.shared::cluster.u32 $0, [ra];\n\t}",
                  f ? "=f,r,r,~{memory}" : "=r,r,r,~{memory}", a, 2);
}

/* Butterfly shuffle of an f32 or i32 value (GPU); identity on the host. */
LLVMValueRef cg_shfl_xor(cg_ctx *cx, LLVMValueRef v, unsigned mask) {
    if (!cx->gpu) return v;
    bool f = LLVMTypeOf(v) == cx->f32;
    LLVMValueRef a[4] = {LLVMConstInt(cx->i32, 0xffffffffu, 0), v, LLVMConstInt(cx->i32, mask, 0),
                         LLVMConstInt(cx->i32, 0x1f, 0)};
    return cg_call_intrinsic(
        cx, f ? "llvm.nvvm.shfl.sync.bfly.f32" : "llvm.nvvm.shfl.sync.bfly.i32", false, a, 4);
}

/* A shared array of n elements of t; see codegen.h. */
LLVMValueRef cg_shared_array(cg_ctx *cx, LLVMTypeRef t, unsigned n, const char *name) {
    LLVMTypeRef at = LLVMArrayType2(t, n);
    if (!cx->gpu) {
        LLVMBasicBlockRef cur = LLVMGetInsertBlock(cx->b);
        LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(cx->fn);
        LLVMValueRef first = LLVMGetFirstInstruction(entry);
        if (first)
            LLVMPositionBuilderBefore(cx->b, first);
        else
            LLVMPositionBuilderAtEnd(cx->b, entry);
        LLVMValueRef a = LLVMBuildAlloca(cx->b, at, name);
        LLVMSetAlignment(a, 16);
        LLVMPositionBuilderAtEnd(cx->b, cur);
        return a;
    }
    for (unsigned i = 0; i < cx->nshared_ents; i++) { /* one an earlier kernel made */
        struct cg_shared_ent *e = &cx->shared[i];
        if (e->type != at || e->kernel == cx->nkernels || strcmp(e->name, name) != 0 ||
            LLVMGetGlobalParent(e->gv) != cx->mod)
            continue;
        e->kernel = cx->nkernels;
        return e->gv;
    }
    LLVMValueRef gv = LLVMAddGlobalInAddressSpace(cx->mod, at, name, 3);
    LLVMSetLinkage(gv, LLVMInternalLinkage);
    LLVMSetInitializer(gv, LLVMGetUndef(at));
    LLVMSetAlignment(gv, 16);
    if (cx->nshared_ents == cx->shared_cap) {
        cx->shared_cap = cx->shared_cap ? 2 * cx->shared_cap : 8;
        cx->shared = ir_xrealloc(cx->shared, cx->shared_cap * sizeof *cx->shared);
    }
    cx->shared[cx->nshared_ents++] = (struct cg_shared_ent){ir_xstrdup(name), at, gv, cx->nkernels};
    return gv;
}

/* tx_smem_N of `bytes` bytes; see cg_impl.h. */
LLVMValueRef cg_shared_bytes(cg_ctx *cx, int64_t bytes) {
    char name[32];
    snprintf(name, sizeof name, "tx_smem_%u", cx->nshared++);
    return cg_shared_array(cx, cx->i8, (unsigned)bytes, name);
}

/* The external shared array `name` of m (declared on first use). */
static LLVMValueRef cg_extern_shared_in(LLVMModuleRef m, const char *name, LLVMTypeRef elt,
                                        unsigned align) {
    LLVMValueRef gv = LLVMGetNamedGlobal(m, name);
    if (gv) return gv;
    gv = LLVMAddGlobalInAddressSpace(m, LLVMArrayType2(elt, 0), name, 3);
    LLVMSetLinkage(gv, LLVMExternalLinkage);
    LLVMSetAlignment(gv, align);
    return gv;
}

/* The external shared array `name`; see cg_impl.h. */
LLVMValueRef cg_extern_shared(cg_ctx *cx, const char *name, LLVMTypeRef elt, unsigned align) {
    unsigned i = 0;
    while (i < cx->nexterns && strcmp(cx->externs[i].name, name) != 0) i++;
    if (i == cx->nexterns && i < CG_MAX_EXTERNS) {
        snprintf(cx->externs[i].name, sizeof cx->externs[i].name, "%s", name);
        cx->externs[i].elt = elt, cx->externs[i].align = align;
        cx->nexterns++;
        for (unsigned m = 0; m < CG_NMODS; m++)
            if (cx->mods[m]) cg_extern_shared_in(cx->mods[m], name, elt, align);
    }
    return cg_extern_shared_in(cx->mod, name, elt, align);
}

/* Declares in m the external shared arrays of cx, in the order they were first asked for. */
void cg_declare_externs(const cg_ctx *cx, LLVMModuleRef m) {
    for (unsigned i = 0; i < cx->nexterns; i++)
        cg_extern_shared_in(m, cx->externs[i].name, cx->externs[i].elt, cx->externs[i].align);
}

/* The module's dynamic shared memory `name`; see cg_impl.h. */
LLVMValueRef cg_dyn_shared(cg_ctx *cx, const char *name, LLVMTypeRef elt) {
    return cg_extern_shared(cx, name, elt, 16);
}

/* Entry-block variable; see cg_impl.h. */
LLVMValueRef cg_var(cg_ctx *cx, LLVMValueRef init) {
    LLVMBuilderRef t = LLVMCreateBuilderInContext(cx->llctx);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(cx->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(t, first);
    else
        LLVMPositionBuilderAtEnd(t, entry);
    LLVMValueRef a = LLVMBuildAlloca(t, LLVMTypeOf(init), "acc");
    LLVMDisposeBuilder(t);
    LLVMBuildStore(cx->b, init, a);
    return a;
}

/* Reports a reduction rule asked of an op that is not a reduction. */
static LLVMValueRef cg_not_reduction(cg_ctx *cx, ir_op op) {
    tx_error(cx->diag, "codegen: internal error: no reduction kernel rule for op '%s'",
             ir_op_name(op));
    return NULL;
}

/* Identity of reduction op for compute type t: ir_scalar_reduce_init's value (the one folding and
 * the interpreter use), the ends of the i32 range for integer max and min; NULL (reported) for an
 * op that is not a reduction. */
LLVMValueRef cg_reduce_identity(cg_ctx *cx, ir_op op, LLVMTypeRef t) {
    double id;
    if (!ir_scalar_reduce_init(op, &id)) return cg_not_reduction(cx, op);
    if (t == cx->f32 || t == cx->f64) return LLVMConstReal(t, id);
    long long i = id < 0 ? INT32_MIN : id > 0 ? INT32_MAX : 0;
    return LLVMConstInt(t, (unsigned long long)i, 1);
}

/* a (op) b by the op's combining rule (ir_scalar_reduce_combiner: add for SUM/MEAN, maximum for
 * MAX, minimum for MIN); NaN propagates through max/min; NULL (reported) for an op that is not a
 * reduction. */
LLVMValueRef cg_reduce_combine(cg_ctx *cx, ir_op op, LLVMValueRef a, LLVMValueRef b) {
    if (LLVMTypeOf(a) == cx->f64 && LLVMTypeOf(b) == cx->f32)
        b = LLVMBuildFPExt(cx->b, b, cx->f64, "");
    bool f = LLVMTypeOf(a) == cx->f32 || LLVMTypeOf(a) == cx->f64;
    LLVMValueRef ab[2] = {a, b};
    ir_op c = ir_scalar_reduce_combiner(op);
    if (c == IR_OP_ADD) return f ? LLVMBuildFAdd(cx->b, a, b, "") : LLVMBuildAdd(cx->b, a, b, "");
    if (c == IR_OP_MAXIMUM)
        return f ? cg_call_intrinsic(cx, "llvm.maximum", true, ab, 2)
                 : LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGT, a, b, ""), a, b, "");
    if (c == IR_OP_MINIMUM)
        return f ? cg_call_intrinsic(cx, "llvm.minimum", true, ab, 2)
                 : LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, a, b, ""), a, b, "");
    return cg_not_reduction(cx, op);
}

/* Block-wide reduction; see codegen.h. Every thread gets the result; the
 * scratch array may be reused after the call (a trailing barrier). */
LLVMValueRef cg_block_reduce(cg_ctx *cx, ir_op op, LLVMValueRef v, unsigned threads,
                             LLVMValueRef scratch) {
    if (!cx->gpu || threads <= 1) return v;
    unsigned w = threads < 32 ? threads : 32;
    for (unsigned m = w / 2; m >= 1; m /= 2)
        v = cg_reduce_combine(cx, op, v, cg_shfl_xor(cx, v, m));
    if (threads <= 32) return v;
    unsigned nw = threads / 32;
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMValueRef tid = cg_thread_id(cx);
    LLVMValueRef lane = LLVMBuildAnd(cx->b, tid, LLVMConstInt(cx->i32, 31, 0), "lane");
    LLVMValueRef warp = LLVMBuildLShr(cx->b, tid, LLVMConstInt(cx->i32, 5, 0), "warp");
    LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "red.w");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "red.c");
    LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, lane, LLVMConstInt(cx->i32, 0, 0), ""),
                    wr, cont);
    LLVMPositionBuilderAtEnd(cx->b, wr);
    LLVMTypeRef at = LLVMArrayType2(t, 32);
    LLVMValueRef idx[2] = {LLVMConstInt(cx->i32, 0, 0), warp};
    LLVMBuildStore(cx->b, v, LLVMBuildInBoundsGEP2(cx->b, at, scratch, idx, 2, ""));
    LLVMBuildBr(cx->b, cont);
    LLVMPositionBuilderAtEnd(cx->b, cont);
    cg_barrier(cx);
    LLVMValueRef r = NULL;
    for (unsigned i = 0; i < nw; i++) {
        LLVMValueRef ii[2] = {LLVMConstInt(cx->i32, 0, 0), LLVMConstInt(cx->i32, i, 0)};
        LLVMValueRef x =
            LLVMBuildLoad2(cx->b, t, LLVMBuildInBoundsGEP2(cx->b, at, scratch, ii, 2, ""), "");
        r = r ? cg_reduce_combine(cx, op, r, x) : x;
    }
    cg_barrier(cx);
    return r;
}

/* Counted loop; see codegen.h. */
LLVMValueRef cg_loop_begin(cg_ctx *cx, cg_loop *l, LLVMValueRef start, LLVMValueRef end,
                           LLVMValueRef step, const char *name) {
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cx->b);
    l->head = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, name);
    l->body = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "body");
    l->exit = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "exit");
    l->step = step;
    LLVMBuildBr(cx->b, l->head);
    LLVMPositionBuilderAtEnd(cx->b, l->head);
    l->iv = LLVMBuildPhi(cx->b, cx->i64, "i");
    LLVMAddIncoming(l->iv, &start, &pre, 1);
    LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, l->iv, end, ""), l->body, l->exit);
    LLVMPositionBuilderAtEnd(cx->b, l->body);
    return l->iv;
}

/* Closes a loop from cg_loop_begin: increments, branches back, and leaves
 * the builder in the exit block. */
void cg_loop_end(cg_ctx *cx, cg_loop *l) {
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cx->b);
    LLVMValueRef next = LLVMBuildAdd(cx->b, l->iv, l->step, "i.next");
    LLVMAddIncoming(l->iv, &next, &latch, 1);
    LLVMBuildBr(cx->b, l->head);
    LLVMPositionBuilderAtEnd(cx->b, l->exit);
}

/* if (cond) { ... }: positions the builder in the then-block and returns the
 * join block, to be closed with cg_if_end. */
LLVMBasicBlockRef cg_if_begin(cg_ctx *cx, LLVMValueRef cond) {
    LLVMBasicBlockRef th = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "then");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "join");
    LLVMBuildCondBr(cx->b, cond, th, join);
    LLVMPositionBuilderAtEnd(cx->b, th);
    return join;
}

/* Closes an if from cg_if_begin; the builder continues in the join block. */
void cg_if_end(cg_ctx *cx, LLVMBasicBlockRef join) {
    LLVMBuildBr(cx->b, join);
    LLVMPositionBuilderAtEnd(cx->b, join);
}
