/* program.c - cg_program: targets, LLVM context/module/target machine,
 * HBM buffer assignment, kernel dispatch per region kind, optimisation,
 * PTX emission, the manifest and launch geometry. */
#include "codegen/cg_impl.h"
#include "passes/passes.h"
#include <llvm-c/Orc.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct cg_target_desc {
    const char *name, *cpu;
} cg_target_desc;

static const cg_target_desc cg_targets[CG_NTARGETS] = {
    {"sm_80", "sm_80"}, {"sm_86", "sm_86"},   {"sm_89", "sm_89"},
    {"sm_90", "sm_90"}, {"sm_90a", "sm_90a"}, {"host", NULL},
};

/* Returns the target named s, -1 when unknown. */
int cg_target_parse(const char *s) {
    for (int i = 0; s && i < CG_NTARGETS; i++)
        if (strcmp(s, cg_targets[i].name) == 0) return i;
    return -1;
}

/* Returns the canonical name of t ("?" when out of range). */
const char *cg_target_name(cg_target t) {
    return (unsigned)t < CG_NTARGETS ? cg_targets[t].name : "?";
}

/* Returns the accepted target names, comma separated. */
const char *cg_target_names(void) { return "sm_80, sm_86, sm_89, sm_90, sm_90a, host"; }

cg_target cg_program_target(const cg_program *p) { return p->target; }

/* ---- target machines ---------------------------------------------------- */

/* Creates the target machine for t (NVPTX with PTX ISA 8.0, or the host CPU), code generation
 * level Aggressive (TX_LLVM_CODEGEN_LEVEL=0..3 in the environment picks another for the GPU
 * targets: a measurement knob, docs/codegen.md "Compile time"); NULL with an error reported
 * when LLVM lacks the target. */
LLVMTargetMachineRef cg_tm_new(cg_target t, tx_diag *d) {
    char *triple, *cpu, *feat, *err = NULL;
    if (t == CG_HOST) {
        LLVMInitializeX86TargetInfo();
        LLVMInitializeX86Target();
        LLVMInitializeX86TargetMC();
        LLVMInitializeX86AsmPrinter();
        triple = LLVMGetDefaultTargetTriple();
        cpu = LLVMGetHostCPUName();
        feat = LLVMGetHostCPUFeatures();
    } else {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
        triple = LLVMCreateMessage("nvptx64-nvidia-cuda");
        cpu = LLVMCreateMessage(cg_targets[t].cpu);
        feat = LLVMCreateMessage("+ptx80");
    }
    LLVMCodeGenOptLevel level = LLVMCodeGenLevelAggressive;
    const char *lv = t == CG_HOST ? NULL : getenv("TX_LLVM_CODEGEN_LEVEL"); /* a measurement knob */
    if (lv && lv[0] >= '0' && lv[0] <= '3' && !lv[1]) level = (LLVMCodeGenOptLevel)(lv[0] - '0');
    LLVMTargetRef tgt;
    LLVMTargetMachineRef tm = NULL;
    if (LLVMGetTargetFromTriple(triple, &tgt, &err)) {
        tx_error(d, "codegen: no LLVM target for %s: %s", triple, err ? err : "?");
        LLVMDisposeMessage(err);
    } else {
        tm = LLVMCreateTargetMachine(tgt, triple, cpu, feat, level, LLVMRelocPIC,
                                     LLVMCodeModelDefault);
        if (!tm) tx_error(d, "codegen: cannot create a target machine for %s", triple);
    }
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(feat);
    return tm;
}

/* Disposes a target machine (NULL is fine). */
void cg_tm_free(LLVMTargetMachineRef tm) {
    if (tm) LLVMDisposeTargetMachine(tm);
}

/* ---- HBM homes ------------------------------------------------------------ */

static bool cg_is_view(const ir_node *n) { return (ir_op_traits((ir_op)n->op) & IR_T_VIEW) != 0; }

/* Calls fn(cx, src, arg) for every non-view value that node v reads through
 * view chains (v itself when it is not a view). Views are index arithmetic
 * in whichever region reads them (docs/fusion.md), so what a region needs
 * from HBM are these sources. */
static void cg_sources(cg_ctx *cx, ir_id v, void (*fn)(cg_ctx *, ir_id, void *), void *arg) {
    const ir_graph *g = cx->g;
    if (!cg_is_view(&g->nodes[v])) {
        fn(cx, v, arg);
        return;
    }
    /* Depth-first in operand order, each view entered once (views form a DAG: a chain of
     * concatenations of slices has exponentially many paths; the callbacks are idempotent). */
    if (++cx->vepoch == 0) {
        memset(cx->vstamp, 0, g->n * sizeof *cx->vstamp);
        cx->vepoch = 1;
    }
    uint32_t sp = 0;
    cx->vstamp[v] = cx->vepoch;
    cx->vstk[sp].x = v, cx->vstk[sp++].k = 0;
    while (sp) {
        cg_vframe *fr = &cx->vstk[sp - 1];
        const ir_node *n = &g->nodes[fr->x];
        if (fr->k == n->nin) {
            sp--;
            continue;
        }
        ir_id w = ir_in(g, n, fr->k++);
        if (!cg_is_view(&g->nodes[w]))
            fn(cx, w, arg);
        else if (cx->vstamp[w] != cx->vepoch) {
            cx->vstamp[w] = cx->vepoch;
            cx->vstk[sp].x = w, cx->vstk[sp++].k = 0;
        }
    }
}

/* True when node n is computed by its region: a non-view member, or a
 * view its region writes (a returned view, materialised by a copy region). */
static bool cg_is_member(const cg_ctx *cx, ir_id i) {
    const ir_node *n = &cx->g->nodes[i];
    if (n->op == IR_OP_INPUT || ir_is_gen(cx->g, i) || n->op == IR_OP_OUTPUT ||
        n->region >= cx->g->nregions)
        return false;
    return !cg_is_view(n) || cx->bufidx_kind[i] == CG_BUF_OUTPUT + 1;
}

unsigned cg_scratch_temp(cg_ctx *cx, ir_id owner, ir_dtype dtype, const ir_shape *shape) {
    if (cx->ntemps == cx->tcap) {
        cx->tcap = cx->tcap ? 2 * cx->tcap : 8;
        cx->temps = ir_xrealloc(cx->temps, cx->tcap * sizeof *cx->temps);
    }
    cx->temps[cx->ntemps] = (cg_temp){owner, dtype, *shape, false, false};
    return cx->ntemps++;
}

/* Source callback of the temp assignment: arg is the reading region. */
static void cg_temp_src(cg_ctx *cx, ir_id v, void *arg) {
    unsigned reader = *(const unsigned *)arg;
    const ir_node *p = &cx->g->nodes[v];
    if (p->op == IR_OP_INPUT || ir_is_gen(cx->g, v) || cx->bufidx_kind[v] || p->region == reader)
        return;
    if (cx->ntemps == cx->tcap) {
        cx->tcap = cx->tcap ? 2 * cx->tcap : 8;
        cx->temps = ir_xrealloc(cx->temps, cx->tcap * sizeof *cx->temps);
    }
    cx->temps[cx->ntemps] = (cg_temp){v, (ir_dtype)p->dtype, p->shape, false, false};
    cx->bufidx_kind[v] = CG_BUF_TEMP + 1;
    cx->bufidx[v] = cx->ntemps++;
}

/* True when returned view v is the planner's alias of a computed value (pass_view_alias, v in
 * that value's region): the value's home is v's output buffer and v has none. */
static bool cg_is_alias(const cg_ctx *cx, ir_id v) {
    const ir_graph *g = cx->g;
    ir_id u = pass_view_alias(g, v);
    return u != IR_NONE && g->nodes[v].region == g->nodes[u].region;
}

/* [attention.store_transposed] (pass_attn_ostore): each staged copy cp that its attention
 * kernel stores gets a temp laid out as cp, which is also the home of the product u it copies
 * (cx->ostore[u] = cp): the kernel stores u through the view's strides (cg_home_lin), cp's
 * readers load it densely. */
static void cg_assign_ostore(cg_ctx *cx) {
    const ir_graph *g = cx->g;
    cx->ostore = ir_xmalloc(g->n * sizeof *cx->ostore);
    for (ir_id i = 0; i < g->n; i++) cx->ostore[i] = IR_NONE;
    for (ir_id cp = 0; cp < g->n; cp++) {
        ir_id u = pass_attn_ostore(g, cp);
        if (u == IR_NONE || cx->bufidx_kind[cp] || cx->bufidx_kind[u]) continue;
        const ir_node *c = &g->nodes[cp];
        unsigned t = cg_scratch_temp(cx, cp, (ir_dtype)c->dtype, &c->shape);
        cx->bufidx_kind[cp] = cx->bufidx_kind[u] = CG_BUF_TEMP + 1;
        cx->bufidx[cp] = cx->bufidx[u] = t;
        cx->ostore[u] = cp;
    }
}

/* Assigns every value that crosses HBM its buffer: graph inputs, returned
 * values (first return slot), and values produced in one region and read in
 * another (temps). Fails on a non-leaf node without a region. */
static bool cg_assign_homes(cg_ctx *cx) {
    const ir_graph *g = cx->g;
    ir_id out = ir_output(g);
    cx->bufidx_kind = ir_xcalloc(g->n, sizeof *cx->bufidx_kind);
    cx->bufidx = ir_xcalloc(g->n, sizeof *cx->bufidx);
    cx->outslots = ir_xmalloc(g->n * sizeof *cx->outslots);
    for (ir_id i = 0; i < g->n; i++) cx->outslots[i] = UINT32_MAX;
    for (unsigned k = 0; k < g->nodes[out].nin; k++) {
        ir_id v = ir_in(g, &g->nodes[out], k);
        if (cx->outslots[v] == UINT32_MAX) cx->outslots[v] = k;
    }
    for (ir_id i = 0; i < out; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT) {
            cx->bufidx_kind[i] = CG_BUF_INPUT + 1;
            cx->bufidx[i] = n->a.param;
            continue;
        }
        if (ir_is_gen(g, i)) continue;
        if (n->region == IR_NONE || n->region >= g->nregions) {
            tx_error(cx->diag,
                     "codegen: node %%%u (%s) belongs to no fused region; run the planner first", i,
                     ir_op_name(n->op));
            return false;
        }
        if (cx->outslots[i] != UINT32_MAX && !cg_is_alias(cx, i)) {
            cx->bufidx_kind[i] = CG_BUF_OUTPUT + 1;
            cx->bufidx[i] = cx->outslots[i];
        }
    }
    for (unsigned k = 0; k < g->nodes[out].nin; k++) { /* returned reshapes: their value's home */
        ir_id v = ir_in(g, &g->nodes[out], k);
        if (cx->outslots[v] != k || !cg_is_alias(cx, v)) continue;
        ir_id u = pass_view_alias(g, v);
        cx->bufidx_kind[u] = CG_BUF_OUTPUT + 1;
        cx->bufidx[u] = k;
    }
    cg_assign_ostore(cx);
    for (ir_id i = 0; i < out; i++) { /* temps: read (through views) from another region */
        if (!cg_is_member(cx, i)) continue;
        const ir_node *n = &g->nodes[i];
        unsigned reader = n->region;
        for (unsigned j = 0; j < n->nin; j++) cg_sources(cx, ir_in(g, n, j), cg_temp_src, &reader);
    }
    return true;
}

/* ---- kernels -------------------------------------------------------------- */

/* True when node id has an HBM home and is not computed by the current region. */
bool cg_is_hbm(const cg_ctx *cx, ir_id id) {
    const ir_node *n = &cx->g->nodes[id];
    if (ir_is_gen(cx->g, id) || cg_is_view(n)) return false;
    if (n->op == IR_OP_INPUT) return true;
    if (cx->region == IR_NONE) return cx->bufidx_kind[id] != 0;
    return n->region != cx->region && cx->bufidx_kind[id] != 0;
}

/* True when node id is produced by the current region and has an HBM home. */
bool cg_is_region_output(const cg_ctx *cx, ir_id id) {
    const ir_node *n = &cx->g->nodes[id];
    return cx->region != IR_NONE && n->region == cx->region && cg_is_member(cx, id) &&
           cx->bufidx_kind[id] != 0;
}

/* Adds buffer (value v, write flag) to the kernel once. */
static void cg_kernel_addbuf(cg_ctx *cx, ir_id v, bool write) {
    cg_kernel *k = cx->k;
    for (unsigned i = 0; i < k->nbufs; i++)
        if (k->bufs[i].value == v) return;
    k->bufs = ir_xrealloc(k->bufs, (k->nbufs + 1) * sizeof *k->bufs);
    k->bufs[k->nbufs++] = (cg_buf){(uint8_t)(cx->bufidx_kind[v] - 1), write, cx->bufidx[v], v};
}

/* Source callback of an output copy's buffers: adds HBM sources as reads. */
static void cg_collect_src(cg_ctx *cx, ir_id v, void *arg) {
    (void)arg;
    if (cg_is_hbm(cx, v)) cg_kernel_addbuf(cx, v, false);
}

/* Collects the buffers of the current region from the planner's region
 * facts (pass_region_io: the HBM values it reads, then those it writes, in
 * id order), keeping those with an HBM home here. */
static bool cg_kernel_collect(cg_ctx *cx) {
    pass_io io;
    if (!cx->pix) {
        tx_error(cx->diag, "codegen: out of memory indexing the regions");
        return false;
    }
    pass_region_io(cx->g, cx->pix, cx->region, &io);
    bool comb = cx->xtemp && !cx->xtemp_write,
         part = cx->xtemp && cx->xtemp_write && !cx->xtemp_stores;
    for (uint32_t i = 0; i < io.nreads; i++)
        if (cg_is_hbm(cx, io.reads[i]) &&
            !(comb && !cx->xtemp_reads_all &&
              ir_shape_eq(&cx->g->nodes[io.reads[i]].shape, &cx->xtemp_dom)))
            cg_kernel_addbuf(cx, io.reads[i], false);
    for (uint32_t i = 0; i < io.nwrites && !part; i++)
        if (cg_is_region_output(cx, io.writes[i])) cg_kernel_addbuf(cx, io.writes[i], true);
    pass_io_free(&io);
    return true;
}

/* Makes parameters first..first+n-1 of the kernel 128-byte tensor maps
 * passed by value and used in place: byval [128 x i8], align 64, and a
 * grid_constant annotation (1-based parameter numbers). */
static void cg_tmap_params(cg_ctx *cx, unsigned first, unsigned n) {
    LLVMTypeRef tmt = LLVMArrayType2(cx->i8, 128);
    unsigned kid_byval = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned kid_align = LLVMGetEnumAttributeKindForName("align", 5);
    LLVMMetadataRef idx[8];
    for (unsigned i = 0; i < n && i < 8; i++) {
        LLVMAddAttributeAtIndex(cx->fn, first + i + 1,
                                LLVMCreateTypeAttribute(cx->llctx, kid_byval, tmt));
        LLVMAddAttributeAtIndex(cx->fn, first + i + 1,
                                LLVMCreateEnumAttribute(cx->llctx, kid_align, 64));
        idx[i] = LLVMValueAsMetadata(LLVMConstInt(cx->i32, first + i + 1, 0));
    }
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(cx->fn),
                             LLVMMDStringInContext2(cx->llctx, "grid_constant", 13),
                             LLVMMDNodeInContext2(cx->llctx, idx, n < 8 ? n : 8)};
    LLVMAddNamedMetadataOperand(
        cx->mod, "nvvm.annotations",
        LLVMMetadataAsValue(cx->llctx, LLVMMDNodeInContext2(cx->llctx, md, 3)));
}

/* Starts a kernel; see codegen.h. For an output copy kernel (region IR_NONE)
 * the caller has put the buffers in cx->k already. */
/* A GPU kernel's parameters (8 bytes per buffer and unbound symbol, 128 per tensor map) must fit
 * the 4352 bytes of PTX parameter space (ISA 8.0); false with a reported error otherwise, so no PTX
 * that ptxas rejects is written. */
static bool cg_kernel_params_fit(cg_ctx *cx, const cg_kernel *k) {
    enum { CG_PARAM_SPACE = 4352 };
    unsigned nsyms = 0;
    for (uint32_t s = 0; s < cx->g->nsyms; s++) nsyms += cx->g->syms[s].value < 0;
    uint64_t bytes = 8ull * (k->nbufs + nsyms) + 128ull * cx->ntmap_params;
    if (bytes <= CG_PARAM_SPACE) return true;
    tx_error(
        cx->diag,
        "kernel %s would take %llu bytes of parameters (%u buffers, %u size symbols), over the "
        "GPU's %u: split the program or pass fewer separate tensors (e.g. concatenate them)",
        k->name, (unsigned long long)bytes, k->nbufs, nsyms, (unsigned)CG_PARAM_SPACE);
    return false;
}

bool cg_kernel_begin(cg_ctx *cx, unsigned region, const char *suffix) {
    const ir_graph *g = cx->g;
    if (cx->nkernels == cx->kcap) {
        cx->kcap = cx->kcap ? 2 * cx->kcap : 8;
        cx->kernels = ir_xrealloc(cx->kernels, cx->kcap * sizeof *cx->kernels);
    }
    cg_kernel *k = &cx->kernels[cx->nkernels];
    if (region != IR_NONE) memset(k, 0, sizeof *k);
    cx->k = k;
    cx->region = region;
    cx->nshared = 0;
    char name[160];
    if (region != IR_NONE)
        snprintf(name, sizeof name, "%s_k%u%s", g->name ? g->name : "tx", region,
                 suffix ? suffix : "");
    else
        snprintf(name, sizeof name, "%s%s", g->name ? g->name : "tx", suffix ? suffix : "_copy");
    for (char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            *c = '_';
    k->name = ir_xstrdup(name);
    k->region = region == IR_NONE ? -1 : (int)region;
    if (region != IR_NONE && !cg_kernel_collect(cx)) return false;
    unsigned xbuf = UINT32_MAX; /* the scratch temp's position among the buffers */
    if (region != IR_NONE && cx->xtemp) {
        k->bufs = ir_xrealloc(k->bufs, (k->nbufs + 1) * sizeof *k->bufs);
        xbuf = k->nbufs;
        k->bufs[k->nbufs++] =
            (cg_buf){CG_BUF_TEMP, cx->xtemp_write, cx->xtemp - 1, cx->temps[cx->xtemp - 1].value};
    }
    for (unsigned i = 0; region != IR_NONE && i < cx->nstage; i++) {
        k->bufs = ir_xrealloc(k->bufs, (k->nbufs + 1) * sizeof *k->bufs);
        cx->stage_buf[i] = k->nbufs;
        k->bufs[k->nbufs++] =
            (cg_buf){CG_BUF_TEMP, 0, cx->stage_temp[i], cx->temps[cx->stage_temp[i]].value};
    }
    unsigned wbuf = UINT32_MAX; /* the workspace temp's position */
    if (region != IR_NONE && cx->wstemp) {
        k->bufs = ir_xrealloc(k->bufs, (k->nbufs + 1) * sizeof *k->bufs);
        wbuf = k->nbufs;
        k->bufs[k->nbufs++] =
            (cg_buf){CG_BUF_TEMP, 1, cx->wstemp - 1, cx->temps[cx->wstemp - 1].value};
    }
    if (cx->gpu && !cg_kernel_params_fit(cx, k)) {
        free(k->name), free(k->bufs);
        k->name = NULL, k->bufs = NULL, k->nbufs = 0;
        return false;
    }
    ir_poly_const(&k->flops, 0);
    if (region != IR_NONE) pass_region_flops(g, cx->pix, region, &k->flops);
    k->syms = ir_xmalloc((g->nsyms + 1) * sizeof *k->syms);
    for (uint32_t s = 0; s < g->nsyms; s++)
        if (g->syms[s].value < 0) k->syms[k->nsyms++] = s;
    cx->nkernels++;

    unsigned ntm = cx->gpu ? cx->ntmap_params : 0;
    unsigned np = k->nbufs + k->nsyms + (cx->gpu ? 0 : 6) + ntm;
    LLVMTypeRef *pt = ir_xmalloc((np + 1) * sizeof *pt);
    for (unsigned i = 0; i < k->nbufs; i++) pt[i] = cx->gptr;
    for (unsigned i = k->nbufs; i < np - ntm; i++) pt[i] = cx->i64;
    for (unsigned i = np - ntm; i < np; i++) pt[i] = cx->ptr;
    LLVMTypeRef fty = LLVMFunctionType(cx->voidt, pt, np, 0);
    free(pt);
    cx->fn = LLVMAddFunction(cx->mod, k->name, fty);
    if (cx->gpu) {
        LLVMSetFunctionCallConv(cx->fn, 71);
    } else {
        LLVMSetLinkage(cx->fn, LLVMInternalLinkage);
    }
    unsigned kid_noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    unsigned kid_ro = LLVMGetEnumAttributeKindForName("readonly", 8);
    unsigned kid_align = LLVMGetEnumAttributeKindForName("align", 5);
    unsigned kid_nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(cx->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(cx->llctx, kid_nounwind, 0));
    for (unsigned i = 0; i < k->nbufs; i++) {
        LLVMValueRef prm = LLVMGetParam(cx->fn, i);
        const ir_node *vn = &g->nodes[k->bufs[i].value];
        LLVMSetValueName2(prm, ir_str(g, vn->name), strlen(ir_str(g, vn->name)));
        LLVMAddAttributeAtIndex(cx->fn, i + 1, LLVMCreateEnumAttribute(cx->llctx, kid_noalias, 0));
        LLVMAddAttributeAtIndex(cx->fn, i + 1, LLVMCreateEnumAttribute(cx->llctx, kid_align, 16));
        if (!k->bufs[i].write)
            LLVMAddAttributeAtIndex(cx->fn, i + 1, LLVMCreateEnumAttribute(cx->llctx, kid_ro, 0));
    }
    if (ntm) cg_tmap_params(cx, np - ntm, ntm);
    memset(cx->valptr, 0, g->n * sizeof *cx->valptr);
    /* stage copies and the workspace last */
    unsigned nown = region != IR_NONE ? k->nbufs - cx->nstage - (wbuf != UINT32_MAX) : k->nbufs;
    for (unsigned i = 0; i < nown; i++)
        if (i != xbuf) cx->valptr[k->bufs[i].value] = LLVMGetParam(cx->fn, i);
    for (ir_id u = 0; region != IR_NONE && u < g->n; u++) /* a product stored into its copy */
        if (cx->ostore[u] != IR_NONE && g->nodes[u].region == region)
            cx->valptr[u] = cx->valptr[cx->ostore[u]];
    cx->xtemp_ptr = xbuf != UINT32_MAX ? LLVMGetParam(cx->fn, xbuf) : NULL;
    cx->ws_ptr = wbuf != UINT32_MAX ? LLVMGetParam(cx->fn, wbuf) : NULL;
    for (uint32_t s = 0; s < g->nsyms; s++) cx->symval[s] = cg_i64(cx, g->syms[s].value);
    for (unsigned i = 0; i < k->nsyms; i++) {
        LLVMValueRef prm = LLVMGetParam(cx->fn, k->nbufs + i);
        const char *sn = g->syms[k->syms[i]].name;
        LLVMSetValueName2(prm, sn, strlen(sn));
        cx->symval[k->syms[i]] = prm;
    }
    for (int d = 0; d < 3; d++) {
        cx->pid[d] = cx->gpu ? NULL : LLVMGetParam(cx->fn, k->nbufs + k->nsyms + d);
        cx->npid[d] = cx->gpu ? NULL : LLVMGetParam(cx->fn, k->nbufs + k->nsyms + 3 + d);
    }
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(cx->llctx, cx->fn, "entry");
    LLVMPositionBuilderAtEnd(cx->b, entry);
    memset(cx->subst, 0, g->n * sizeof *cx->subst);
    cx->nmemo = 0;
    return true;
}

bool cg_kernel_begin_bufs(cg_ctx *cx, unsigned region, const char *suffix, const cg_buf *bufs,
                          unsigned n) {
    if (cx->nkernels == cx->kcap) {
        cx->kcap = cx->kcap ? 2 * cx->kcap : 8;
        cx->kernels = ir_xrealloc(cx->kernels, cx->kcap * sizeof *cx->kernels);
    }
    cg_kernel *k = &cx->kernels[cx->nkernels];
    memset(k, 0, sizeof *k);
    cx->k = k;
    cx->region = IR_NONE;
    k->bufs = ir_xmalloc((n + 1) * sizeof *k->bufs);
    memcpy(k->bufs, bufs, n * sizeof *bufs);
    k->nbufs = n;
    if (!cg_kernel_begin(cx, IR_NONE, suffix)) return false;
    k->region = (int)region;
    return true;
}

/* Forgets the last kernel entry (its function was deleted by the caller). */
void cg_kernel_drop(cg_ctx *cx) {
    cg_kernel *k = &cx->kernels[--cx->nkernels];
    free(k->name);
    free(k->bufs);
    free(k->syms);
    free(k->tmaps);
    memset(k, 0, sizeof *k);
}

/* Adds the nvvm.annotations entries of a GPU kernel (kernel, maxntidx). */
static void cg_annotate(cg_ctx *cx, unsigned threads) {
    LLVMMetadataRef md[3];
    md[0] = LLVMValueAsMetadata(cx->fn);
    md[1] = LLVMMDStringInContext2(cx->llctx, "kernel", 6);
    md[2] = LLVMValueAsMetadata(LLVMConstInt(cx->i32, 1, 0));
    LLVMAddNamedMetadataOperand(
        cx->mod, "nvvm.annotations",
        LLVMMetadataAsValue(cx->llctx, LLVMMDNodeInContext2(cx->llctx, md, 3)));
    md[1] = LLVMMDStringInContext2(cx->llctx, "maxntidx", 8);
    md[2] = LLVMValueAsMetadata(LLVMConstInt(cx->i32, threads, 0));
    LLVMAddNamedMetadataOperand(
        cx->mod, "nvvm.annotations",
        LLVMMetadataAsValue(cx->llctx, LLVMMDNodeInContext2(cx->llctx, md, 3)));
}

/* Finishes the current kernel; see codegen.h. */
void cg_kernel_end(cg_ctx *cx, const ir_shape work[3], const int64_t per[3], const int64_t cap[3],
                   const unsigned block[3], unsigned smem) {
    LLVMBuildRetVoid(cx->b);
    cg_kernel *k = cx->k;
    for (int d = 0; d < 3; d++) {
        k->work[d] = work[d];
        k->per[d] = per[d] > 0 ? per[d] : 1;
        k->cap[d] = cap[d] > 0 ? cap[d] : (d == 0 ? INT32_MAX : 65535);
        k->block[d] = block[d] ? block[d] : 1;
    }
    k->smem_bytes = smem;
    if (cx->gpu) cg_annotate(cx, k->block[0] * k->block[1] * k->block[2]);
    cx->k = NULL;
    cx->fn = NULL;
}

/* Buffer parameter of an HBM value in the current kernel (NULL: none). */
LLVMValueRef cg_buf_ptr(cg_ctx *cx, ir_id id) { return cx->valptr[id]; }

bool cg_home_strides(cg_ctx *cx, ir_id o, pass_view_strides *st) {
    const ir_graph *g = cx->g;
    if (cx->ostore && cx->ostore[o] != IR_NONE)
        return pass_view_strides_of(g, o, ir_in(g, &g->nodes[cx->ostore[o]], 0), st) &&
               st->permuted;
    const ir_node *out = &g->nodes[ir_output(g)];
    for (unsigned k = 0; k < out->nin; k++) {
        ir_id v = ir_in(g, out, k);
        if (v == o || pass_view_alias(g, v) != o || g->nodes[v].region != g->nodes[o].region)
            continue;
        return pass_view_strides_of(g, o, v, st) && st->permuted;
    }
    return false;
}

LLVMValueRef cg_home_lin(cg_ctx *cx, ir_id o, cg_index *idx) {
    pass_view_strides st;
    if (!cg_home_strides(cx, o, &st)) return idx->lin;
    cg_index_dims(cx, idx);
    LLVMValueRef lin = cg_i64(cx, 0);
    for (unsigned a = 0; a < idx->shape->rank; a++) {
        if (idx->shape->dim[a] == 1) continue;
        LLVMValueRef t = idx->dim[a];
        for (unsigned j = 0; j < st.n[a]; j++)
            t = LLVMBuildNUWMul(cx->b, t, cg_dim(cx, st.f[a][j]), "");
        lin = LLVMBuildNUWAdd(cx->b, lin, t, "");
    }
    return lin;
}

/* ---- output copies -------------------------------------------------------- */

/* Emits a copy kernel for return slot `slot` whose value has no home of its
 * own there (an input, a constant, or a value returned twice). */
static bool cg_emit_output_copy(cg_ctx *cx, unsigned slot) {
    const ir_graph *g = cx->g;
    ir_id v = ir_in(g, &g->nodes[ir_output(g)], slot);
    if (cx->nkernels == cx->kcap) {
        cx->kcap = cx->kcap ? 2 * cx->kcap : 8;
        cx->kernels = ir_xrealloc(cx->kernels, cx->kcap * sizeof *cx->kernels);
    }
    cg_kernel *k = &cx->kernels[cx->nkernels];
    memset(k, 0, sizeof *k);
    cx->k = k;
    cx->region = IR_NONE;
    cg_sources(cx, v, cg_collect_src, NULL); /* v itself, or a view's sources */
    k->bufs = ir_xrealloc(k->bufs, (k->nbufs + 1) * sizeof *k->bufs);
    k->bufs[k->nbufs++] = (cg_buf){CG_BUF_OUTPUT, 1, slot, v};
    unsigned nb = k->nbufs;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "_out%u", slot);
    if (!cg_kernel_begin(cx, IR_NONE, suffix)) return false;
    LLVMValueRef dst = LLVMGetParam(cx->fn, nb - 1);
    cx->valptr[v] = NULL; /* the destination is not a source */
    for (unsigned i = 0; i + 1 < nb; i++) cx->valptr[k->bufs[i].value] = LLVMGetParam(cx->fn, i);
    return cg_emit_copy_body(cx, v, dst);
}

/* ---- program -------------------------------------------------------------- */

typedef struct cg_dep_arg {
    bool *dep;
    unsigned nr, reader;
} cg_dep_arg;

/* Source callback of the launch order: the reader depends on the source's region. */
static void cg_dep_src(cg_ctx *cx, ir_id v, void *arg) {
    cg_dep_arg *a = arg;
    const ir_node *p = &cx->g->nodes[v];
    if (p->region < a->nr && p->region != a->reader)
        a->dep[(size_t)a->reader * a->nr + p->region] = true;
}

/* Launch order of the regions: a region runs after every region whose
 * values it reads (Kahn's algorithm, ties by region index). Fills order[]
 * and returns false with an error on a cycle. */
static bool cg_region_order(cg_ctx *cx, unsigned *order) {
    const ir_graph *g = cx->g;
    unsigned nr = g->nregions;
    bool *dep = ir_xcalloc((size_t)nr * nr + 1, sizeof *dep); /* dep[b*nr+a]: b reads a */
    cg_dep_arg da = {dep, nr, 0};
    for (ir_id i = 0; i < ir_output(g); i++) {
        const ir_node *n = &g->nodes[i];
        if (!cg_is_member(cx, i)) continue;
        da.reader = n->region;
        for (unsigned j = 0; j < n->nin; j++) cg_sources(cx, ir_in(g, n, j), cg_dep_src, &da);
    }
    bool *done = ir_xcalloc(nr + 1, sizeof *done);
    unsigned k = 0;
    while (k < nr) {
        unsigned pick = nr;
        for (unsigned r = 0; r < nr && pick == nr; r++) {
            if (done[r]) continue;
            bool ready = true;
            for (unsigned a = 0; a < nr && ready; a++)
                if (dep[(size_t)r * nr + a] && !done[a]) ready = false;
            if (ready) pick = r;
        }
        if (pick == nr) break;
        done[pick] = true;
        order[k++] = pick;
    }
    free(dep);
    free(done);
    if (k < nr) tx_error(cx->diag, "codegen: the fused regions depend on each other in a cycle");
    return k == nr;
}

/* Emits every region's kernels in launch order, then the output copies. */
static bool cg_emit_all(cg_ctx *cx) {
    const ir_graph *g = cx->g;
    unsigned *order = ir_xcalloc(g->nregions + 1, sizeof *order);
    bool ok = cg_region_order(cx, order);
    for (unsigned i = 0; ok && i < g->nregions; i++) {
        unsigned r = order[i];
        switch ((ir_region_kind)g->regions[r].kind) {
            case IR_RK_POINTWISE:
            case IR_RK_COPY: ok = cg_emit_pointwise(cx, r); break;
            case IR_RK_REDUCTION: ok = cg_emit_reduction(cx, r); break;
            case IR_RK_MATMUL: ok = cg_emit_matmul(cx, g, r); break;
            case IR_RK_ATTENTION:
                ok = cg_emit_attention(cx, g, r);
                cg_use_module(cx, CG_MOD_MAIN); /* the FA3 kernel's is mods[CG_MOD_FA3] */
                break;
            default:
                tx_error(cx->diag, "codegen: region %u has an unknown kind %u", r,
                         g->regions[r].kind);
                ok = false;
        }
    }
    free(order);
    if (!ok) return false;
    const ir_node *out = &g->nodes[ir_output(g)];
    for (unsigned s = 0; s < out->nin; s++) {
        ir_id v = ir_in(g, out, s);
        if (cx->outslots[v] == s && cx->bufidx_kind[v] == CG_BUF_OUTPUT + 1) continue;
        if (cx->outslots[v] == s && cg_is_alias(cx, v)) continue;
        if (!cg_emit_output_copy(cx, s)) return false;
    }
    if (!cx->gpu) cg_host_wrappers(cx);
    return true;
}

/* Creates the emission context's LLVM objects for p. */
static void cg_ctx_init(cg_ctx *cx, cg_program *p, const ir_graph *g, tx_diag *d) {
    memset(cx, 0, sizeof *cx);
    cx->vstamp = ir_xcalloc((size_t)g->n + 1, sizeof *cx->vstamp);
    cx->vstk = ir_xmalloc(((size_t)g->n + 1) * sizeof *cx->vstk);
    cx->target = p->target;
    cx->gpu = p->target != CG_HOST;
    cx->diag = d;
    cx->g = g;
    cx->llctx = p->llctx;
    cx->mod = cx->mods[CG_MOD_MAIN] = p->mod;
    cx->b = LLVMCreateBuilderInContext(cx->llctx);
    cx->i1 = LLVMInt1TypeInContext(cx->llctx);
    cx->i8 = LLVMInt8TypeInContext(cx->llctx);
    cx->i16 = LLVMInt16TypeInContext(cx->llctx);
    cx->i32 = LLVMInt32TypeInContext(cx->llctx);
    cx->i64 = LLVMInt64TypeInContext(cx->llctx);
    cx->f32 = LLVMFloatTypeInContext(cx->llctx);
    cx->f64 = LLVMDoubleTypeInContext(cx->llctx);
    cx->ptr = LLVMPointerTypeInContext(cx->llctx, 0);
    cx->gptr = LLVMPointerTypeInContext(cx->llctx, cx->gpu ? 1 : 0);
    cx->sptr = LLVMPointerTypeInContext(cx->llctx, cx->gpu ? 3 : 0);
    cx->voidt = LLVMVoidTypeInContext(cx->llctx);
    cx->valptr = ir_xcalloc(g->n, sizeof *cx->valptr);
    cx->symval = ir_xcalloc(g->nsyms + 1, sizeof *cx->symval);
    cx->subst = ir_xcalloc(g->n, sizeof *cx->subst);
    cx->veccache = ir_xcalloc((size_t)g->n * CG_VEC_MAXLIN, sizeof *cx->veccache);
    cx->vecbase = ir_xcalloc((size_t)g->n * CG_VEC_MAXLIN, sizeof *cx->vecbase);
    cx->region = IR_NONE;
    cx->pix = ir_xcalloc(1, sizeof *cx->pix);
    if (!pass_index_build(g, cx->pix)) {
        free(cx->pix);
        cx->pix = NULL;
    }
}

/* Makes mods[i] the emission module; see cg_impl.h. */
void cg_use_module(cg_ctx *cx, unsigned i) {
    if (!cx->mods[i]) {
        LLVMModuleRef m0 = cx->mods[CG_MOD_MAIN];
        size_t len;
        const char *id = LLVMGetModuleIdentifier(m0, &len);
        cx->mods[i] = LLVMModuleCreateWithNameInContext(id, cx->llctx);
        LLVMSetTarget(cx->mods[i], LLVMGetTarget(m0));
        LLVMSetDataLayout(cx->mods[i], LLVMGetDataLayoutStr(m0));
        cg_declare_externs(cx, cx->mods[i]);
    }
    cx->modi = i;
    cx->mod = cx->mods[i];
}

/* Releases the context's scratch (the manifest moves into the program). */
static void cg_ctx_fini(cg_ctx *cx) {
    if (cx->b) LLVMDisposeBuilder(cx->b);
    free(cx->vstamp);
    free(cx->vstk);
    free(cx->valptr);
    free(cx->symval);
    free(cx->subst);
    free(cx->veccache);
    free(cx->vecbase);
    free(cx->memo);
    for (unsigned i = 0; i < cx->nshared_ents; i++) free(cx->shared[i].name);
    free(cx->shared);
    free(cx->bufidx_kind);
    free(cx->bufidx);
    free(cx->outslots);
    free(cx->ostore);
    if (cx->pix) pass_index_free(cx->pix);
    free(cx->pix);
}

/* ---- the optimisation pipeline ------------------------------------------------ */

static double cg_cpu_s(void);

/* simplifycfg as LLVM 19's O3 runs it at each place (SC_E before the inliner, SC_F in the function
 * simplification, SC_H at its end, SC_L in the late pipeline, SC_Z last). */
#define SC_(x)  "simplifycfg<bonus-inst-threshold=1;" x ";speculate-blocks;simplify-cond-branch;"
#define SC_NOSW "no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;"
#define SC_E                                                                             \
    SC_("no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-lookup;keep-loops;" \
        "no-hoist-common-insts;no-sink-common-insts")                                    \
    "no-speculate-unpredictables>"
#define SC_F \
    SC_(SC_NOSW "no-hoist-common-insts;no-sink-common-insts") "no-speculate-unpredictables>"
#define SC_H SC_(SC_NOSW "hoist-common-insts;sink-common-insts") "no-speculate-unpredictables>"
#define SC_L                                                                       \
    SC_("forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;" \
        "hoist-common-insts;sink-common-insts")                                    \
    "no-speculate-unpredictables>"
#define SC_Z SC_(SC_NOSW "no-hoist-common-insts;no-sink-common-insts") "speculate-unpredictables>"
#define IC   "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>"

/* The GPU targets' pipeline: LLVM 19's default<O3> for NVPTX (as `opt -print-pipeline-passes`
 * spells it) with its function simplification passes run once over every function rather than
 * inside the call-graph walk (tx's kernels call only always-inline helpers), and less the passes
 * that change no kernel tx emits: called-value-propagation (tx emits no indirect call) and
 * ipsccp's function specialisation (tx's helpers are inlined), dse, jump-threading,
 * constraint-elimination, mldst-motion,
 * memcpyopt, loop-vectorize, loop-load-elim, aggressive-instcombine, float2int, tailcallelim,
 * those for languages tx is not (coroutines, OpenMP, profiles, annotations, lookup tables), the
 * last instcombine of the simplification and the two of the late pipeline before the unroller.
 * Checked with tools/kernel-stats.sh over the suite, the examples and bench/suite-extra at
 * sm_90a and sm_80 (registers, spills, SASS instructions and loop lengths after ptxas):
 * identical. The passes kept matter: without ipsccp, either early-cse, the instcombines kept,
 * correlated-propagation, reassociate, the loop passes, gvn or the unroller some tensor-core
 * kernel changes (more SASS instructions or registers; without the instcombine after the loop
 * rotation the mma.sync attention kernels' key loop grows by 1-5 instructions), div-rem-pairs
 * shortens the generic attention kernel (docs/codegen.md, "Compile time"). nvvm-intr-range is
 * not run: cg_sreg_ranges gives the same ranges before the pipeline without NVPTX's annotation
 * cache (see there). */
#define CG_GPU_PASSES_(slp)                                                                        \
    "forceattrs,function(nvvm-reflect),inferattrs,"                                                \
    "function<eager-inv>(lower-expect," SC_E ",sroa<modify-cfg>,early-cse<>),"                     \
    "ipsccp<no-func-spec>,globalopt,"                                                              \
    "function<eager-inv>(mem2reg," IC "," SC_F "),"                                                \
    "always-inline,"                                                                               \
    "function(sroa<modify-cfg>,early-cse<memssa>,"                                                 \
    "speculative-execution<only-if-divergent-target>,correlated-propagation," SC_F "," IC "," SC_F \
    ",reassociate,"                                                                                \
    "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"                      \
    "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,"                   \
    "simple-loop-unswitch<nontrivial;trivial>)," SC_F "," IC ","                                   \
    "loop(loop-idiom,indvars,simple-loop-unswitch<nontrivial;trivial>,loop-deletion,"              \
    "loop-unroll-full),sroa<modify-cfg>,vector-combine,gvn<>,sccp,bdce," IC ","                    \
    "correlated-propagation,adce,loop-mssa(licm<allowspeculation>)," SC_H "),"                     \
    "globaldce,"                                                                                   \
    "function<eager-inv>(lower-constant-intrinsics,"                                               \
    "loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),"                      \
    "inject-tli-mappings,infer-alignment," SC_L "," slp "vector-combine,"                          \
    "loop-unroll<O3>,sroa<preserve-cfg>,infer-alignment," IC ","                                   \
    "loop-mssa(licm<allowspeculation>),alignment-from-assumptions,instsimplify,div-rem-"           \
    "pairs," SC_Z "),globaldce"
#define CG_GPU_PASSES CG_GPU_PASSES_("slp-vectorizer,")
static const char cg_gpu_passes[] = CG_GPU_PASSES;

/* The pipeline of the sm_90a FA3 attention kernels: cg_gpu_passes less the SLP vectorizer, which
 * changes none of them (their PTX is byte-identical without it over the suite, the examples,
 * bench/suite-extra, tests/ptx and the held-out programs at their GPU and CPU-check sizes) and
 * took a fifth of their optimisation time (docs/codegen.md, "Compile time"). */
static const char cg_fa3_passes[] = CG_GPU_PASSES_("");
#define CG_WGMMA_PASSES_(slp)                                        \
    "function<eager-inv>(" SC_E ","                                  \
    "sroa<modify-cfg>,"                                              \
    "early-cse<>),"                                                  \
    "ipsccp<no-func-spec>,"                                          \
    "function<eager-inv>(" IC "),"                                   \
    "always-inline,"                                                 \
    "function(early-cse<memssa>,"                                    \
    "correlated-propagation,"                                        \
    "" IC ","                                                        \
    "reassociate,"                                                   \
    "loop-mssa(loop-rotate<header-duplication;no-prepare-for-lto>)," \
    "" SC_F "," IC ","                                               \
    "loop(indvars),"                                                 \
    "gvn<>,"                                                         \
    "correlated-propagation,"                                        \
    "loop-mssa(licm<allowspeculation>)),"                            \
    "function<eager-inv>(loop(loop-deletion),"                       \
    "" SC_L "," slp "infer-alignment," IC ","                        \
    "loop-mssa(licm<allowspeculation>),"                             \
    "div-rem-pairs,"                                                 \
    "" SC_Z ")"

/* The pipeline of the wgmma GEMM kernels (template wgmma-tma-ws): cg_gpu_passes less the passes
 * that change none of them, found by removing each pass in turn, cumulatively, and keeping it
 * removed when ptxas's registers, spills and SASS of every such kernel of the suite, examples and
 * ragged shapes stayed the same (docs/codegen.md, "Compile time"). */
static const char cg_wgmma_passes[] = CG_WGMMA_PASSES_("slp-vectorizer,");

/* The pipeline of the wgmma GEMM kernels whose epilogue stores through shared memory and TMA
 * from the looped epilogue (cg_wg_epi.loop): cg_wgmma_passes less the SLP vectorizer, which
 * changes none of them (their PTX is byte-identical without it, the same programs as
 * cg_fa3_passes); the other wgmma kernels keep it (without it the per-register staged epilogue's
 * PTX changes, and the guarded register stores of mlp_block at M 2000 D 1000 F 3000 take 8 more
 * SASS instructions). */
static const char cg_wgtma_passes[] = CG_WGMMA_PASSES_("");

/* The pipeline of each kernel kind, indexed by the module its kernels are emitted into (CG_MOD_*,
 * cg_use_module): every kernel of a kind is optimised by its kind's pipeline (cg_optimize). */
static const char *const cg_pipe_text[CG_NMODS] = {cg_gpu_passes, cg_wgmma_passes, cg_wgtma_passes,
                                                   cg_fa3_passes};
static const char *const cg_pipe_name[CG_NMODS] = {"full", "wgmma", "wgmma-tma-store", "fa3"};

/* The LLVM function of kernel k (in p->mod or one of p->xmod); NULL when it has none (dropped as a
 * repeat, or a kernel without code). */
static LLVMValueRef cg_kernel_fn(const cg_program *p, unsigned k) {
    LLVMValueRef f = LLVMGetNamedFunction(p->mod, p->kernels[k].name);
    for (unsigned i = 1; !f && i < CG_NMODS; i++)
        if (p->xmod[i]) f = LLVMGetNamedFunction(p->xmod[i], p->kernels[k].name);
    return f;
}

/* A measurement knob: TX_LLVM_PASSES in the compiling process's environment replaces every GPU
 * pipeline by its text (LLVM's pass-pipeline syntax, e.g. `default<O3>`), for benchmarks that time
 * the kernels of another pipeline (bench/ctime_gpu.sh) and for studies of which passes matter
 * (docs/codegen.md). NULL when unset. */
static const char *cg_env_pipeline(void) {
    const char *e = getenv("TX_LLVM_PASSES");
    return e && e[0] ? e : NULL;
}

/* Links every p->xmod[i] into p->mod, in module order (each is consumed either way). */
static bool cg_link_kinds(cg_program *p, tx_diag *d) {
    bool ok = true;
    for (unsigned i = 1; i < CG_NMODS; i++) {
        LLVMModuleRef w = p->xmod[i];
        p->xmod[i] = NULL;
        if (w && !ok) LLVMDisposeModule(w);
        if (!w || !ok || !LLVMLinkModules2(p->mod, w)) continue; /* the link consumes w */
        tx_error(d, "codegen: internal error: the %s kernels' module does not link",
                 cg_pipe_name[i]);
        ok = false;
    }
    return ok;
}

/* Runs pipeline text on m with p's target machine (NVPTX's own passes included). */
static bool cg_run_pipeline(cg_program *p, LLVMModuleRef m, const char *text, tx_diag *d) {
    LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(m, text, p->tm, o);
    LLVMDisposePassBuilderOptions(o);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        tx_error(d, "codegen: optimisation failed: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return false;
    }
    return true;
}

/* The number of kernels of p whose function is in m. */
static unsigned cg_module_kernels(const cg_program *p, LLVMModuleRef m) {
    unsigned n = 0;
    for (unsigned k = 0; m && k < p->nkernels; k++)
        n += LLVMGetNamedFunction(m, p->kernels[k].name) != NULL;
    return n;
}

/* Verifies m (NULL: nothing to do); false with the verifier's message reported. */
static bool cg_verify(LLVMModuleRef m, tx_diag *d) {
    char *msg = NULL;
    if (m && LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        tx_error(d, "codegen: internal error: invalid LLVM module: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);
    return true;
}

/* ---- launch bounds as value ranges --------------------------------------------- */

/* A PTX special register with a bounded value: per-block reads (tid, ntid) are bounded by the
 * function's threads per block, at most cap; the others lie in the fixed [lo, hi) (the bounds
 * LLVM 19's nvvm-intr-range gives). */
typedef enum { CG_SR_FIXED, CG_SR_TID, CG_SR_NTID } cg_sreg_kind;
typedef struct {
    const char *name; /* the intrinsic */
    cg_sreg_kind kind;
    uint64_t lo, hi; /* CG_SR_FIXED: the range; else hi is the cap */
} cg_sreg_range;

/* maxntidx of f in m's nvvm.annotations (read from the module itself); UINT32_MAX when none. */
static uint64_t cg_fn_maxntid(LLVMModuleRef m, LLVMValueRef f) {
    unsigned n = LLVMGetNamedMetadataNumOperands(m, "nvvm.annotations");
    uint64_t v = UINT32_MAX;
    if (n == 0) return v;
    LLVMValueRef *md = ir_xmalloc(n * sizeof *md);
    LLVMGetNamedMetadataOperands(m, "nvvm.annotations", md);
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef ops[8];
        unsigned k = LLVMGetMDNodeNumOperands(md[i]);
        if (k < 3 || k > 8) continue;
        LLVMGetMDNodeOperands(md[i], ops);
        for (unsigned j = 1; ops[0] == f && j + 1 < k; j += 2) {
            unsigned len = 0;
            const char *key = ops[j] ? LLVMGetMDString(ops[j], &len) : NULL;
            if (key && len == 8 && !memcmp(key, "maxntidx", 8) && LLVMIsAConstantInt(ops[j + 1]))
                v = LLVMConstIntGetZExtValue(ops[j + 1]);
        }
    }
    free(md);
    return v;
}

/* Adds the return range [lo, hi) to call c (an i32 special register read). */
static void cg_add_range(LLVMContextRef ctx, LLVMValueRef c, uint64_t lo, uint64_t hi) {
    unsigned kind = LLVMGetEnumAttributeKindForName("range", 5);
    LLVMAttributeRef a = LLVMCreateConstantRangeAttribute(ctx, kind, 32, &lo, &hi);
    LLVMAddCallSiteAttribute(c, LLVMAttributeReturnIndex, a);
}

/* The range [lo, hi) of a read of special register `callee` (len bytes) in a function of at
 * most ntid threads per block; false when callee is no special register with a known range. */
static bool cg_sreg_bounds(const char *callee, size_t len, uint64_t ntid, uint64_t *lo,
                           uint64_t *hi) {
    static const cg_sreg_range t[] = {
        {"llvm.nvvm.read.ptx.sreg.tid.x", CG_SR_TID, 0, 1024},
        {"llvm.nvvm.read.ptx.sreg.tid.y", CG_SR_TID, 0, 1024},
        {"llvm.nvvm.read.ptx.sreg.tid.z", CG_SR_TID, 0, 64},
        {"llvm.nvvm.read.ptx.sreg.ntid.x", CG_SR_NTID, 0, 1024},
        {"llvm.nvvm.read.ptx.sreg.ntid.y", CG_SR_NTID, 0, 1024},
        {"llvm.nvvm.read.ptx.sreg.ntid.z", CG_SR_NTID, 0, 64},
        {"llvm.nvvm.read.ptx.sreg.ctaid.x", CG_SR_FIXED, 0, 0x7fffffff},
        {"llvm.nvvm.read.ptx.sreg.ctaid.y", CG_SR_FIXED, 0, 0xffff},
        {"llvm.nvvm.read.ptx.sreg.ctaid.z", CG_SR_FIXED, 0, 0xffff},
        {"llvm.nvvm.read.ptx.sreg.nctaid.x", CG_SR_FIXED, 1, 0x80000000},
        {"llvm.nvvm.read.ptx.sreg.nctaid.y", CG_SR_FIXED, 1, 0x10000},
        {"llvm.nvvm.read.ptx.sreg.nctaid.z", CG_SR_FIXED, 1, 0x10000},
        {"llvm.nvvm.read.ptx.sreg.warpsize", CG_SR_FIXED, 32, 33},
        {"llvm.nvvm.read.ptx.sreg.laneid", CG_SR_FIXED, 0, 32},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strlen(t[i].name) != len || memcmp(t[i].name, callee, len)) continue;
        uint64_t b = t[i].hi < ntid ? t[i].hi : ntid;
        *lo = t[i].kind == CG_SR_NTID ? 1 : t[i].lo;
        *hi = t[i].kind == CG_SR_FIXED ? t[i].hi : t[i].kind == CG_SR_TID ? b : b + 1;
        return true;
    }
    return false;
}

/* Gives every special register read in m's functions its value range from the function's own
 * launch bound (maxntidx in m's nvvm.annotations; the hardware bounds where it has none), as
 * LLVM 19's nvvm-intr-range pass would. The optimisation pipelines do not run that pass: it
 * reads the annotations through NVPTX's process-wide cache keyed by the Module and Function
 * addresses, which only the NVPTX AsmPrinter clears, so a module optimised but never printed
 * (the wgmma module, consumed by the link) leaves entries that a later compile's module and
 * function allocated at the same addresses would read as theirs (another kernel's maxntidx:
 * the ranges, and so the code, of the later kernel depended on the heap). Reads that already
 * carry a range keep it. */
static void cg_sreg_ranges(LLVMModuleRef m) {
    if (!m) return;
    LLVMContextRef ctx = LLVMGetModuleContext(m);
    unsigned kind = LLVMGetEnumAttributeKindForName("range", 5);
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        if (!LLVMGetFirstBasicBlock(f)) continue;
        uint64_t ntid = cg_fn_maxntid(m, f);
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
                LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
                if (!callee || !LLVMIsAFunction(callee)) continue;
                size_t len;
                const char *nm = LLVMGetValueName2(callee, &len);
                uint64_t lo, hi;
                if (!cg_sreg_bounds(nm, len, ntid, &lo, &hi) ||
                    LLVMGetCallSiteEnumAttribute(i, LLVMAttributeReturnIndex, kind))
                    continue;
                cg_add_range(ctx, i, lo, hi);
            }
    }
}

/* Verifies and optimises the program's modules, then leaves every kernel in p->mod: the host by
 * default<O3> (its kernels want the loop vectorizer); the GPU targets each kernel by its kind's
 * pipeline: the wgmma GEMM kernels and the FA3 attention kernels were emitted into modules of
 * their own (p->xmod, see cg_use_module), each optimised by its kind's pipeline (cg_pipe_text)
 * and then linked into p->mod, whose kernels cg_gpu_passes optimises (a module without kernels
 * is skipped). The function passes see each kernel alone either way, so a kernel's code is what
 * its pipeline makes of it whatever it is compiled with. TX_LLVM_PASSES (cg_env_pipeline) runs
 * its text once over the linked module. With TX_CODEGEN_TIME, each kind's CPU time goes to
 * stderr. */
static bool cg_optimize(cg_program *p, tx_diag *d, bool timed) {
    LLVMModuleRef part[CG_NMODS];
    memcpy(part, p->xmod, sizeof part);
    part[CG_MOD_MAIN] = p->mod;
    for (unsigned q = 0; q < CG_NMODS; q++) {
        if (!cg_verify(part[q], d)) return false;
        if (p->target != CG_HOST) cg_sreg_ranges(part[q]);
    }
    const char *env = p->target == CG_HOST ? "default<O3>" : cg_env_pipeline();
    if (env) return cg_link_kinds(p, d) && cg_run_pipeline(p, p->mod, env, d);
    bool ok = true;
    for (unsigned q = 0; q < CG_NMODS && ok; q++) {
        unsigned n = cg_module_kernels(p, part[q]);
        if (!n) continue;
        double t0 = timed ? cg_cpu_s() : 0;
        ok = cg_run_pipeline(p, part[q], cg_pipe_text[q], d);
        if (timed)
            fprintf(stderr, "txc: codegen time (CPU ms): optimise %s pipeline, %u kernels: %.1f\n",
                    cg_pipe_name[q], n, 1e3 * (cg_cpu_s() - t0));
    }
    return cg_link_kinds(p, d) && ok;
}

/* Declares the cluster shape of every clustered kernel in p->ptx: `.reqnctapercluster 1, C, 1`
 * after the kernel's .maxntid line (LLVM 19 ignores the cluster_dim annotations). False when a
 * kernel's entry or .maxntid line is missing. */
static bool cg_ptx_clusters(cg_program *p) {
    for (unsigned k = 0; k < p->nkernels; k++) {
        const cg_kernel *kr = &p->kernels[k];
        if (kr->cluster <= 1) continue;
        char key[300], dir[64];
        snprintf(key, sizeof key, ".entry %s(", kr->name);
        snprintf(dir, sizeof dir, ".reqnctapercluster 1, %u, 1\n", kr->cluster);
        char *e = strstr(p->ptx, key), *m = e ? strstr(e, "\n.maxntid") : NULL;
        char *eol = m ? strchr(m + 1, '\n') : NULL;
        if (!eol) return false;
        size_t at = (size_t)(eol + 1 - p->ptx), dl = strlen(dir);
        char *np = ir_xmalloc(p->ptxlen + dl + 1);
        memcpy(np, p->ptx, at);
        memcpy(np + at, dir, dl);
        memcpy(np + at + dl, p->ptx + at, p->ptxlen - at + 1);
        free(p->ptx);
        p->ptx = np;
        p->ptxlen += dl;
    }
    return true;
}

/* ---- identical kernels, compiled once ---------------------------------------- */

/* Whether f and g carry the same nvvm.annotations entries (kernel, maxntidx, grid_constant ...),
 * in the same order, but for the function they name. */
static bool cg_same_annotations(LLVMModuleRef m, LLVMValueRef f, LLVMValueRef g) {
    unsigned n = LLVMGetNamedMetadataNumOperands(m, "nvvm.annotations");
    if (n == 0) return true;
    LLVMValueRef *md = ir_xmalloc(n * sizeof *md);
    LLVMGetNamedMetadataOperands(m, "nvvm.annotations", md);
    LLVMValueRef *ef = ir_xmalloc(n * sizeof *ef), *eg = ir_xmalloc(n * sizeof *eg);
    unsigned nf = 0, ng = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned k = LLVMGetMDNodeNumOperands(md[i]);
        if (k == 0) continue;
        LLVMValueRef ops[8];
        if (k > 8) continue; /* no entry tx writes has more */
        LLVMGetMDNodeOperands(md[i], ops);
        if (ops[0] == f) ef[nf++] = md[i];
        if (ops[0] == g) eg[ng++] = md[i];
    }
    bool same = nf == ng;
    for (unsigned i = 0; same && i < nf; i++) {
        unsigned k = LLVMGetMDNodeNumOperands(ef[i]);
        LLVMValueRef a[8], b[8];
        if (LLVMGetMDNodeNumOperands(eg[i]) != k) {
            same = false;
            break;
        }
        LLVMGetMDNodeOperands(ef[i], a);
        LLVMGetMDNodeOperands(eg[i], b);
        for (unsigned j = 1; same && j < k; j++) same = a[j] == b[j];
    }
    free(md), free(ef), free(eg);
    return same;
}

/* The text of f as LLVM prints it, with f and its parameters unnamed for the print (their names
 * are restored), so two kernels that compute the same thing print the same. Free with
 * LLVMDisposeMessage. */
static char *cg_body_text(LLVMValueRef f) {
    unsigned np = LLVMCountParams(f);
    size_t len;
    const char *nm = LLVMGetValueName2(f, &len);
    char *fname = ir_xstrdup(nm);
    char **pn = ir_xcalloc(np + 1, sizeof *pn);
    for (unsigned i = 0; i < np; i++) {
        LLVMValueRef a = LLVMGetParam(f, i);
        pn[i] = ir_xstrdup(LLVMGetValueName2(a, &len));
        LLVMSetValueName2(a, "", 0);
    }
    LLVMSetValueName2(f, "tx.cmp", 6);
    char *t = LLVMPrintValueToString(f);
    LLVMSetValueName2(f, fname, strlen(fname));
    for (unsigned i = 0; i < np; i++) {
        LLVMSetValueName2(LLVMGetParam(f, i), pn[i], strlen(pn[i]));
        free(pn[i]);
    }
    free(pn);
    free(fname);
    return t;
}

/* The number of instructions and blocks of f (the cheap test before cg_body_text). */
static uint64_t cg_body_size(LLVMValueRef f) {
    uint64_t n = 0, nb = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b), nb++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
    return n << 20 | nb;
}

/* GPU: finds the kernels whose LLVM function is the same as an earlier kernel's (same type,
 * body and annotations: e.g. two RMSNorms of the same width over different tensors) and drops
 * their functions from the module, so the optimiser and the backend see each distinct kernel
 * once; cg_ptx_copies gives each dropped kernel a renamed copy of the PTX of the one it repeats.
 * The manifest keeps every kernel (its own name, buffers, launch geometry). Fills p->same_as. */
static void cg_dedup_kernels(cg_program *p) {
    unsigned n = p->nkernels;
    p->same_as = ir_xmalloc((n + 1) * sizeof *p->same_as);
    LLVMValueRef *fn = ir_xcalloc(n + 1, sizeof *fn);
    uint64_t *size = ir_xcalloc(n + 1, sizeof *size);
    char **text = ir_xcalloc(n + 1, sizeof *text);
    for (unsigned k = 0; k < n; k++) {
        p->same_as[k] = UINT32_MAX;
        fn[k] = cg_kernel_fn(p, k);
        if (fn[k]) size[k] = cg_body_size(fn[k]);
    }
    for (unsigned k = 1; k < n; k++) {
        if (!fn[k] || p->kernels[k].cluster > 1) continue;
        for (unsigned j = 0; j < k && p->same_as[k] == UINT32_MAX; j++) {
            if (!fn[j] || p->same_as[j] != UINT32_MAX || size[j] != size[k] ||
                LLVMGetGlobalParent(fn[j]) != LLVMGetGlobalParent(fn[k]) ||
                LLVMGlobalGetValueType(fn[j]) != LLVMGlobalGetValueType(fn[k]) ||
                p->kernels[j].cluster != p->kernels[k].cluster ||
                !cg_same_annotations(LLVMGetGlobalParent(fn[k]), fn[j], fn[k]))
                continue;
            if (!text[j]) text[j] = cg_body_text(fn[j]);
            if (!text[k]) text[k] = cg_body_text(fn[k]);
            if (strcmp(text[j], text[k]) == 0) p->same_as[k] = j;
        }
    }
    for (unsigned k = 0; k < n; k++) {
        if (text[k]) LLVMDisposeMessage(text[k]);
        if (p->same_as[k] != UINT32_MAX) LLVMDeleteFunction(fn[k]);
    }
    free(fn), free(size), free(text);
}

/* The PTX text of kernel `name` in ptx: from its `.visible .entry NAME(` to the closing brace of
 * its body (the last line `}` before the next function's `// .globl` comment or the end).
 * *len gets its length; NULL when the kernel is missing. */
static const char *cg_ptx_entry(const char *ptx, const char *name, size_t *len) {
    char key[300];
    snprintf(key, sizeof key, ".visible .entry %s(", name);
    const char *s = strstr(ptx, key);
    if (!s) return NULL;
    const char *e = strstr(s, "\t// .globl\t");
    if (!e) e = s + strlen(s);
    while (e > s && !(e[-1] == '\n' && e[0] == '}')) e--;
    if (e == s) return NULL;
    *len = (size_t)(e + 1 - s);
    return s;
}

/* Appends to p->ptx, for each kernel with p->same_as set, the PTX of the kernel it repeats with
 * the entry's name (and so its parameters' names, NAME_param_i) renamed. False when an entry is
 * missing. */
static bool cg_ptx_copies(cg_program *p) {
    for (unsigned k = 0; p->same_as && k < p->nkernels; k++) {
        if (p->same_as[k] == UINT32_MAX) continue;
        const char *from = p->kernels[p->same_as[k]].name, *to = p->kernels[k].name;
        size_t len, fl = strlen(from), tl = strlen(to);
        const char *s = cg_ptx_entry(p->ptx, from, &len);
        if (!s) return false;
        size_t cap = p->ptxlen + 2 + len + (len / fl + 1) * (tl + 1) + 2, o = p->ptxlen;
        char *np = ir_xmalloc(cap);
        memcpy(np, p->ptx, p->ptxlen);
        size_t off = (size_t)(s - p->ptx);
        np[o++] = '\n';
        for (size_t i = 0; i < len;) {
            const char *c = p->ptx + off + i;
            if (i + fl <= len && memcmp(c, from, fl) == 0 &&
                (c[fl] == '(' || strncmp(c + fl, "_param_", 7) == 0)) {
                memcpy(np + o, to, tl);
                o += tl;
                i += fl;
            } else {
                np[o++] = *c;
                i++;
            }
        }
        np[o++] = '\n';
        np[o] = 0;
        free(p->ptx);
        p->ptx = np;
        p->ptxlen = o;
    }
    return true;
}

/* Emits PTX into p->ptx (GPU targets). */
static bool cg_emit_ptx_buf(cg_program *p, tx_diag *d) {
    char *err = NULL;
    LLVMMemoryBufferRef mb = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(p->tm, p->mod, LLVMAssemblyFile, &err, &mb)) {
        tx_error(d, "codegen: NVPTX backend failed: %s", err ? err : "?");
        LLVMDisposeMessage(err);
        return false;
    }
    size_t n = LLVMGetBufferSize(mb);
    p->ptx = ir_xmalloc(n + 1);
    memcpy(p->ptx, LLVMGetBufferStart(mb), n);
    p->ptx[n] = 0;
    p->ptxlen = strlen(p->ptx);
    LLVMDisposeMemoryBuffer(mb);
    if (strstr(p->ptx, ".extern .func")) {
        tx_error(
            d, "codegen: internal error: the PTX calls an undefined function (unknown intrinsic)");
        return false;
    }
    if (!cg_ptx_copies(p)) {
        tx_error(d, "codegen: internal error: a repeated kernel's entry is missing from the PTX");
        return false;
    }
    if (!cg_ptx_clusters(p)) {
        tx_error(d, "codegen: internal error: a clustered kernel's entry is missing from the PTX");
        return false;
    }
    return true;
}

/* Records g's inputs (parameter order) and returned values (return order) for the manifest. */
static void cg_record_io(cg_program *p, const ir_graph *g) {
    const ir_node *on = &g->nodes[ir_output(g)];
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_INPUT && g->nodes[i].a.param + 1 > p->nin)
            p->nin = g->nodes[i].a.param + 1;
    p->nout = on->nin;
    p->io = ir_xcalloc(p->nin + p->nout + 1, sizeof *p->io);
    for (ir_id i = 0; i < g->n; i++)
        if (g->nodes[i].op == IR_OP_INPUT) {
            const ir_node *n = &g->nodes[i];
            cg_io *io = &p->io[n->a.param];
            free(io->name);
            *io = (cg_io){ir_xstrdup(n->name ? ir_str(g, n->name) : ""), (ir_dtype)n->dtype,
                          n->shape};
        }
    for (unsigned k = 0; k < on->nin; k++) {
        const ir_node *n = &g->nodes[ir_in(g, on, k)];
        p->io[p->nin + k] =
            (cg_io){ir_xstrdup(n->name ? ir_str(g, n->name) : ""), (ir_dtype)n->dtype, n->shape};
    }
    for (unsigned i = 0; i < p->nin + p->nout; i++)
        if (!p->io[i].name) p->io[i].name = ir_xstrdup("");
}

/* True when temps a and b have the same dtype and the same (symbolic) shape, so one buffer
 * sized for either holds the other at every binding of the sizes. */
static bool cg_temp_alike(const cg_temp *a, const cg_temp *b) {
    if (a->dtype != b->dtype || a->shape.rank != b->shape.rank || a->staged != b->staged ||
        a->zeroed != b->zeroed)
        return false;
    for (unsigned d = 0; d < a->shape.rank; d++)
        if (a->shape.dim[d] != b->shape.dim[d]) return false;
    return true;
}

/* Buffer assignment with liveness: an intermediate is live from the first region (in launch
 * order) whose kernels use it to the last; intermediates alike (cg_temp_alike) whose live
 * ranges do not overlap share one buffer, first fit in order of their first use. Counted in
 * regions, not kernels, so every target (whose regions may take different numbers of kernels)
 * shares alike and the host program's buffers match a device plan's (the sampled check).
 * Renumbers p->temps (one per buffer, holding its first value) and the temp indices of every
 * kernel's buffers. A kernel never sees two of its buffers share (both are live at its region).
 * Staged operand copies (device only) come after every other temp and share only among
 * themselves, so the others are numbered alike on every target. */
static void cg_share_temps(cg_program *p) {
    unsigned n = p->ntemps, nslots = 0, npos = 0;
    if (n < 2) return;
    unsigned *pos = ir_xmalloc((p->nkernels + 1) * sizeof *pos); /* kernel -> region position */
    for (unsigned k = 0; k < p->nkernels; k++) {
        const cg_kernel *kr = &p->kernels[k];
        bool same = k > 0 && kr->region >= 0 && kr->region == p->kernels[k - 1].region;
        pos[k] = same ? pos[k - 1] : npos++;
    }
    unsigned *first = ir_xmalloc(n * sizeof *first), *last = ir_xcalloc(n, sizeof *last);
    unsigned *slot = ir_xmalloc(n * sizeof *slot), *slot_end = ir_xcalloc(n, sizeof *slot_end);
    unsigned *order = ir_xmalloc(n * sizeof *order);
    cg_temp *st = ir_xcalloc(n, sizeof *st);
    for (unsigned t = 0; t < n; t++) first[t] = UINT32_MAX, order[t] = t;
    for (unsigned k = 0; k < p->nkernels; k++)
        for (unsigned b = 0; b < p->kernels[k].nbufs; b++) {
            const cg_buf *cb = &p->kernels[k].bufs[b];
            if (cb->kind != CG_BUF_TEMP || cb->index >= n) continue;
            if (first[cb->index] == UINT32_MAX) first[cb->index] = pos[k];
            last[cb->index] = pos[k];
        }
    for (unsigned i = 1; i < n; i++) /* insertion sort by (staged, first use) (stable) */
        for (unsigned j = i; j > 0 && (p->temps[order[j - 1]].staged != p->temps[order[j]].staged
                                           ? p->temps[order[j - 1]].staged
                                           : first[order[j - 1]] > first[order[j]]);
             j--) {
            unsigned x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    for (unsigned i = 0; i < n; i++) {
        unsigned t = order[i], s = nslots;
        for (unsigned c = 0; first[t] != UINT32_MAX && c < nslots && s == nslots; c++)
            if (slot_end[c] < first[t] && cg_temp_alike(&st[c], &p->temps[t])) s = c;
        if (s == nslots) st[nslots++] = p->temps[t];
        slot[t] = s;
        slot_end[s] = first[t] == UINT32_MAX ? UINT32_MAX : last[t];
    }
    for (unsigned k = 0; k < p->nkernels; k++)
        for (unsigned b = 0; b < p->kernels[k].nbufs; b++) {
            cg_buf *cb = &p->kernels[k].bufs[b];
            if (cb->kind == CG_BUF_TEMP && cb->index < n) cb->index = slot[cb->index];
        }
    free(p->temps);
    p->temps = st;
    p->ntemps = nslots;
    free(first), free(last), free(slot), free(slot_end), free(order), free(pos);
}

/* CPU seconds of this process so far (the phase timers of TX_CODEGEN_TIME). */
static double cg_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A measurement knob: with TX_CODEGEN_TIME set in the environment, cg_program_new prints the CPU
 * time of each phase (IR emission, optimisation with the verifier, NVPTX) and the module's
 * instruction counts to stderr (docs/codegen.md, "Compile time"). */
static bool cg_time_on(void) {
    const char *e = getenv("TX_CODEGEN_TIME");
    return e && e[0] && strcmp(e, "0") != 0;
}

/* A measurement knob: TX_LLVM_OPTIONS (space-separated LLVM command-line options, e.g.
 * `-disable-lsr`) in the environment is handed to LLVM before a GPU compile, for A/B runs of the
 * backend's options (bench/ctime_gpu.sh). LLVM's options are process-wide: they stay set for
 * later compiles of the process (LLVM 19 accepts an option given again). */
static void cg_llvm_env_options(void) {
    const char *e = getenv("TX_LLVM_OPTIONS");
    if (!e || !e[0]) return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", e);
    const char *argv[32] = {"txc"};
    int argc = 1;
    for (char *tok = strtok(buf, " "); tok && argc < 32; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    LLVMParseCommandLineOptions(argc, argv, NULL);
}

/* The LLVM options every GPU compile runs with (handed over before each one; LLVM's options are
 * process-wide, so a host compile later in the same process sees them too, which changes no
 * host code's meaning). -cgpp-huge-func=0: CodeGenPrepare treats every function as "huge",
 * i.e. after its first sweep it revisits only the blocks its own rewrites created or changed,
 * instead of restarting from the function's first block after each rewrite that touches the
 * dominator tree. Every restart re-parsed the constraint string of each inline asm statement
 * (2214 parses of the LLaMA block's 208 statements, 5.6% of its compile); the PTX of every
 * kernel of the suite, the examples, bench/suite-extra, tests/ptx and the held-out programs is
 * byte-identical with it (docs/codegen.md, "Compile time"). */
static void cg_llvm_gpu_options(void) {
    const char *argv[] = {"txc", "-cgpp-huge-func=0"};
    LLVMParseCommandLineOptions(2, argv, NULL);
}

/* Turns on LLVM's -time-passes for the process (its per-pass tables are printed at exit); LLVM
 * accepts an option once per process, so only a program's main calls this, once. */
void cg_llvm_time_passes(void) {
    const char *argv[] = {"txc", "-time-passes"};
    LLVMParseCommandLineOptions(2, argv, NULL);
}

/* LLVM instructions in the functions of m with a body (the TX_CODEGEN_TIME report); 0 for
 * NULL. */
static unsigned cg_module_insts(LLVMModuleRef m) {
    unsigned n = 0;
    for (LLVMValueRef f = m ? LLVMGetFirstFunction(m) : NULL; f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
            for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
    return n;
}

/* Compiles g for t; see codegen.h. */
/* The work of compiling g: one unit per compute operation, CG_WORK_TRANSC per transcendental
 * (its expansion); the count of transcendentals goes to *ntransc. */
static int64_t cg_work(const ir_graph *g, unsigned *ntransc) {
    int64_t w = 0;
    *ntransc = 0;
    for (ir_id i = 0; i < g->n; i++) {
        unsigned tr = ir_op_traits((ir_op)g->nodes[i].op);
        if (tr & (IR_T_LEAF | IR_T_VIEW)) continue;
        *ntransc += (tr & IR_T_TRANSC) != 0;
        w += (tr & IR_T_TRANSC) ? CG_WORK_TRANSC : 1;
    }
    return w;
}

cg_program *cg_program_new(const ir_graph *g, cg_target t, tx_diag *d) {
    if ((unsigned)t >= CG_NTARGETS) {
        tx_error(d, "codegen: unknown target %d", (int)t);
        return NULL;
    }
    unsigned ntransc;
    int64_t work = cg_work(g, &ntransc);
    if (work > CG_WORK_MAX) { /* refused at once rather than minutes and gigabytes in LLVM */
        tx_error(d,
                 "the program is too large to compile: %lld units of work after inlining every "
                 "helper call "
                 "(%u transcendental operations at %d units each), limit %d; each call of a helper "
                 "inlines a "
                 "fresh copy, so helpers that call a helper twice grow exponentially",
                 (long long)work, ntransc, CG_WORK_TRANSC, CG_WORK_MAX);
        return NULL;
    }
    cg_program *p = ir_xcalloc(1, sizeof *p);
    p->target = t;
    p->nsyms = g->nsyms;
    p->symnames = ir_xcalloc(g->nsyms + 1, sizeof *p->symnames);
    for (unsigned s = 0; s < g->nsyms; s++) p->symnames[s] = ir_xstrdup(g->syms[s].name);
    p->rules = ir_shape_rules(g, &p->nrules); /* the manifest's "requires" */
    cg_record_io(p, g);
    p->tm = cg_tm_new(t, d);
    if (!p->tm) {
        cg_program_free(p);
        return NULL;
    }
    if (t == CG_HOST) {
        p->tsc = LLVMOrcCreateNewThreadSafeContext();
        p->llctx = LLVMOrcThreadSafeContextGetContext((LLVMOrcThreadSafeContextRef)p->tsc);
    } else {
        p->llctx = LLVMContextCreate();
        /* Value and block names never reach the PTX (NVPTX numbers registers and labels); not
         * creating them saves LLVM's symbol-table work on every instruction of every pass. */
        LLVMContextSetDiscardValueNames(p->llctx, 1);
    }
    p->mod = LLVMModuleCreateWithNameInContext(g->name ? g->name : "tx", p->llctx);
    char *triple = LLVMGetTargetMachineTriple(p->tm);
    LLVMSetTarget(p->mod, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(p->tm);
    LLVMSetModuleDataLayout(p->mod, td);
    LLVMDisposeTargetData(td);

    bool tl = cg_time_on();
    if (t != CG_HOST) {
        cg_llvm_gpu_options();
        cg_llvm_env_options();
    }
    double t0 = tl ? cg_cpu_s() : 0, t1 = 0, t2 = 0, t3 = 0;
    unsigned n_emit = 0;
    cg_ctx cx;
    cg_ctx_init(&cx, p, g, d);
    cx.math_calls = ntransc > CG_MATH_INLINE_MAX;
    bool ok = cg_assign_homes(&cx) && cg_emit_all(&cx);
    p->kernels = cx.kernels;
    p->nkernels = cx.nkernels;
    for (unsigned i = 1; i < CG_NMODS; i++) p->xmod[i] = cx.mods[i];
    p->temps = cx.temps;
    p->ntemps = cx.ntemps;
    cg_ctx_fini(&cx);
    if (ok) cg_share_temps(p);
    if (ok && t != CG_HOST) cg_dedup_kernels(p);
    if (tl) t1 = cg_cpu_s(), n_emit = cg_module_insts(p->mod);
    for (unsigned i = 1; tl && i < CG_NMODS; i++) n_emit += cg_module_insts(p->xmod[i]);
    if (ok) ok = cg_optimize(p, d, tl);
    unsigned n_opt = tl && ok ? cg_module_insts(p->mod) : 0;
    if (tl) t2 = cg_cpu_s();
    if (ok && t != CG_HOST) ok = cg_emit_ptx_buf(p, d);
    if (tl) {
        t3 = cg_cpu_s();
        fprintf(stderr,
                "txc: codegen time (CPU ms): emit %.1f (%u kernels, %u instructions), "
                "optimise %.1f (%u instructions after), backend %.1f (%zu bytes of PTX)\n",
                1e3 * (t1 - t0), p->nkernels, n_emit, 1e3 * (t2 - t1), n_opt, 1e3 * (t3 - t2),
                p->ptxlen);
    }
    if (!ok) {
        cg_program_free(p);
        return NULL;
    }
    return p;
}

/* Releases everything p owns (safe on partially built programs). */
void cg_program_free(cg_program *p) {
    if (!p) return;
    for (unsigned k = 0; k < p->nkernels; k++) {
        free(p->kernels[k].name);
        free(p->kernels[k].bufs);
        free(p->kernels[k].syms);
        free(p->kernels[k].tmaps);
    }
    free(p->kernels);
    free(p->same_as);
    free(p->temps);
    for (unsigned s = 0; p->symnames && s < p->nsyms; s++) free(p->symnames[s]);
    free(p->symnames);
    free(p->rules);
    for (unsigned i = 0; p->io && i < p->nin + p->nout; i++) free(p->io[i].name);
    free(p->io);
    free(p->ptx);
    if (p->mod) LLVMDisposeModule(p->mod);
    for (unsigned i = 1; i < CG_NMODS; i++)
        if (p->xmod[i]) LLVMDisposeModule(p->xmod[i]);
    if (p->tsc)
        LLVMOrcDisposeThreadSafeContext((LLVMOrcThreadSafeContextRef)p->tsc);
    else if (p->llctx)
        LLVMContextDispose(p->llctx);
    cg_tm_free(p->tm);
    free(p);
}

/* Writes the module as LLVM IR text. */
bool cg_program_emit_llvm(cg_program *p, FILE *out) {
    if (!p->mod) return false;
    char *s = LLVMPrintModuleToString(p->mod);
    bool ok = fputs(s, out) >= 0;
    LLVMDisposeMessage(s);
    return ok;
}

/* Writes the PTX text; false for the host target or on a write error. */
bool cg_program_emit_ptx(cg_program *p, FILE *out) {
    if (!p->ptx) return false;
    return fwrite(p->ptx, 1, p->ptxlen, out) == p->ptxlen;
}

/* The PTX (NUL-terminated) and its length; NULL for the host target. */
const char *cg_program_ptx(cg_program *p, size_t *len) {
    if (len) *len = p->ptx ? p->ptxlen : 0;
    return p->ptx;
}

/* ---- manifest ------------------------------------------------------------- */

/* Manifest accessors; see codegen.h. */
unsigned cg_program_nkernels(const cg_program *p) { return p->nkernels; }
const cg_kernel *cg_program_kernel(const cg_program *p, unsigned k) {
    return k < p->nkernels ? &p->kernels[k] : NULL;
}
unsigned cg_program_ntemps(const cg_program *p) { return p->ntemps; }
const cg_temp *cg_program_temp(const cg_program *p, unsigned i) {
    return i < p->ntemps ? &p->temps[i] : NULL;
}
unsigned cg_program_nsyms_total(const cg_program *p) { return p->nsyms; }

/* Resolves shape s with symbol values; false on overflow or an unbound symbol. */
bool cg_shape_resolve(const ir_shape *s, const int64_t *syms, unsigned nsyms, int64_t *dims) {
    for (unsigned i = 0; i < s->rank; i++) {
        ir_dim d = s->dim[i];
        if (IR_DIM_IS_SYM(d)) {
            uint32_t si = IR_DIM_SYMIDX(d);
            if (si >= nsyms || !syms || syms[si] < 0) return false;
            d = syms[si];
        }
        dims[i] = d;
    }
    return true;
}

/* Launch geometry of kernel k; see codegen.h. */
bool cg_kernel_geometry(const cg_program *p, unsigned k, const int64_t *syms, unsigned grid[3],
                        unsigned block[3], unsigned *smem_bytes) {
    if (k >= p->nkernels) return false;
    const cg_kernel *kr = &p->kernels[k];
    for (int d = 0; d < 3; d++) {
        int64_t dims[IR_MAX_RANK], n = 1;
        if (!cg_shape_resolve(&kr->work[d], syms, p->nsyms, dims)) return false;
        for (unsigned i = 0; i < kr->work[d].rank; i++)
            if (!ir_mul_ok(n, dims[i], &n)) return false;
        int64_t b = n / kr->per[d] + (n % kr->per[d] != 0);
        if (b > kr->cap[d]) b = kr->cap[d];
        grid[d] = (unsigned)b;
        block[d] = kr->block[d];
    }
    /* a persistent grid of clusters (1, C, 1) keeps grid y = C */
    unsigned cl = kr->cluster > 1 ? kr->cluster : 1;
    if (kr->persist && (uint64_t)grid[0] * grid[1] * grid[2] > kr->persist && grid[0] && grid[1] &&
        grid[2])
        grid[0] = kr->persist / cl, grid[1] = cl, grid[2] = 1;
    if (smem_bytes) *smem_bytes = kr->smem_bytes;
    return true;
}

/* Writes a shape as a JSON array: numbers, or symbol names as strings. */
static void cg_json_shape(const cg_program *p, const ir_shape *s, const char *const *symnames,
                          FILE *out) {
    fputc('[', out);
    for (unsigned i = 0; i < s->rank; i++) {
        if (i) fputs(", ", out);
        if (IR_DIM_IS_SYM(s->dim[i]) && IR_DIM_SYMIDX(s->dim[i]) < p->nsyms)
            fprintf(out, "\"%s\"", symnames[IR_DIM_SYMIDX(s->dim[i])]);
        else
            fprintf(out, "%lld", (long long)s->dim[i]);
    }
    fputc(']', out);
}

/* Writes s as a JSON string (quotes, backslashes and control bytes escaped). */
static void cg_json_str(const char *s, FILE *out) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* Writes a polynomial as a JSON array of terms, each [coef, "SYM", ...]
 * (the product of the coefficient and the symbols); null when it overflowed. */
static void cg_json_poly(const ir_poly *p, const char *const *symnames, FILE *out) {
    if (p->overflow) {
        fputs("null", out);
        return;
    }
    fputc('[', out);
    for (int i = 0; i < p->nterms; i++) {
        fprintf(out, "%s[%.17g", i ? ", " : "", p->t[i].coef);
        for (int k = 0; k < p->t[i].nsym; k++) fprintf(out, ", \"%s\"", symnames[p->t[i].sym[k]]);
        fputc(']', out);
    }
    fputc(']', out);
}

/* Writes the manifest as JSON; see docs/codegen.md. */
bool cg_manifest_write(const cg_program *p, FILE *out) {
    static const char *const kinds[] = {"input", "output", "temp"};
    const char *const *sn = (const char *const *)p->symnames;
    fprintf(out, "{\n  \"target\": \"%s\",\n  \"symbols\": [", cg_target_name(p->target));
    for (unsigned s = 0; s < p->nsyms; s++) fprintf(out, "%s\"%s\"", s ? ", " : "", sn[s]);
    for (unsigned i = 0; i < p->nin + p->nout; i++) {
        const cg_io *io = &p->io[i];
        if (i == 0 || i == p->nin)
            fprintf(out, "],\n  \"%s\": [", i < p->nin ? "inputs" : "outputs");
        fprintf(out, "%s\n    {\"index\": %u, \"name\": ", i != 0 && i != p->nin ? "," : "",
                i < p->nin ? i : i - p->nin);
        cg_json_str(io->name, out);
        fprintf(out, ", \"dtype\": \"%s\", \"shape\": ", ir_dtype_name(io->dtype));
        cg_json_shape(p, &io->shape, sn, out);
        fputc('}', out);
    }
    if (p->nin == 0) fputs("],\n  \"inputs\": [", out);
    if (p->nout == 0) fputs("],\n  \"outputs\": [", out);
    fputs("],\n  \"temps\": [", out);
    for (unsigned i = 0; i < p->ntemps; i++) {
        fprintf(out, "%s\n    {\"index\": %u, \"value\": %u, \"dtype\": \"%s\", \"shape\": ",
                i ? "," : "", i, p->temps[i].value, ir_dtype_name(p->temps[i].dtype));
        cg_json_shape(p, &p->temps[i].shape, sn, out);
        if (p->temps[i].zeroed) fputs(", \"zero\": true", out);
        fputc('}', out);
    }
    fputs("],\n  \"kernels\": [", out);
    for (unsigned k = 0; k < p->nkernels; k++) {
        const cg_kernel *kr = &p->kernels[k];
        fprintf(out, "%s\n    {\"name\": \"%s\", \"region\": %d, \"buffers\": [", k ? "," : "",
                kr->name, kr->region);
        for (unsigned i = 0; i < kr->nbufs; i++)
            fprintf(out, "%s{\"kind\": \"%s\", \"index\": %u, \"value\": %u, \"write\": %s}",
                    i ? ", " : "", kinds[kr->bufs[i].kind], kr->bufs[i].index, kr->bufs[i].value,
                    kr->bufs[i].write ? "true" : "false");
        fputs("],\n     \"symbols\": [", out);
        for (unsigned i = 0; i < kr->nsyms; i++)
            fprintf(out, "%s\"%s\"", i ? ", " : "", sn[kr->syms[i]]);
        fputs("],\n     \"grid\": [", out);
        for (int d = 0; d < 3; d++) {
            fprintf(out, "%s{\"work\": ", d ? ", " : "");
            cg_json_shape(p, &kr->work[d], sn, out);
            fprintf(out, ", \"per\": %lld, \"cap\": %lld}", (long long)kr->per[d],
                    (long long)kr->cap[d]);
        }
        fprintf(out, "],\n     \"block\": [%u, %u, %u], \"smem_bytes\": %u,\n     \"flops\": ",
                kr->block[0], kr->block[1], kr->block[2], kr->smem_bytes);
        cg_json_poly(&kr->flops, sn, out);
        if (kr->tmpl[0]) fprintf(out, ", \"template\": \"%s\"", kr->tmpl);
        if (kr->persist) fprintf(out, ", \"persistent\": %u", kr->persist);
        if (kr->cluster > 1) fprintf(out, ", \"cluster\": [1, %u, 1]", kr->cluster);
        if (kr->ntmaps) {
            fputs(",\n     \"tensor_maps\": [", out);
            for (unsigned i = 0; i < kr->ntmaps; i++) {
                const cg_tmap *tm = &kr->tmaps[i];
                fprintf(out, "%s{\"param\": %u, \"buffer\": %u, \"dtype\": \"%s\", \"dims\": ",
                        i ? ", " : "", kr->nbufs + kr->nsyms + i, tm->buf,
                        ir_dtype_name((ir_dtype)tm->dtype));
                unsigned rank = tm->rank >= 3 && tm->rank <= CG_TMAP_MAXR ? tm->rank : 2;
                bool outer = tm->outer.rank > 0; /* the last dim: "outer" */
                ir_shape ds = {.rank = (uint8_t)(outer ? rank - 1 : rank)};
                for (unsigned j = 0; j < ds.rank; j++) ds.dim[j] = tm->dim[j];
                cg_json_shape(p, &ds, sn, out);
                fprintf(out, ", \"box\": [%u", tm->box[0]);
                for (unsigned j = 1; j < rank; j++) fprintf(out, ", %u", tm->box[j]);
                fprintf(out, "], \"swizzle\": %u", tm->swizzle);
                if (tm->pitch) fprintf(out, ", \"pitch\": %lld", (long long)tm->pitch);
                if (tm->offset) fprintf(out, ", \"offset\": %lld", (long long)tm->offset);
                if (outer) {
                    fputs(", \"outer\": ", out);
                    cg_json_shape(p, &tm->outer, sn, out);
                }
                fputc('}', out);
            }
            fputc(']', out);
        }
        fputc('}', out);
    }
    /* the shape rules libtx_rt checks when it binds the sizes (the kernels trust them) */
    fputs("\n  ],\n  \"requires\": [", out);
    for (uint32_t i = 0; i < p->nrules; i++) {
        const ir_shape_rule *r = &p->rules[i];
        fprintf(out, "%s\n    {\"node\": %u, \"rel\": \"%s\", \"a\": ", i ? "," : "", r->node,
                ir_rule_rel_name((ir_rule_rel)r->rel));
        cg_json_poly(&r->a, sn, out);
        fputs(", \"b\": ", out);
        cg_json_poly(&r->b, sn, out);
        fputc('}', out);
    }
    fputs("]\n}\n", out);
    return !ferror(out);
}
