/* tune.c - what the planner needs of the tuning cache (docs/runtime.md "Tuning cache"): the
 * stable key of a planned region and the lookup of a measured schedule. Reading and writing the
 * cache file is the driver's (driver/tune.c). */
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

/* FNV-1a, 64 bits, over n bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
static uint64_t fnv_i64(uint64_t h, int64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    return fnv(h, b, 8);
}

/* A dim at its bound size: a symbol bound with -D hashes as its value, an unbound one as -1
 * minus its index (so two programs with the same unbound symbols still agree). */
static int64_t dim_at(const ir_graph *g, int64_t d) {
    if (!IR_DIM_IS_SYM(d)) return d;
    uint32_t s = IR_DIM_SYMIDX(d);
    return s < g->nsyms && g->syms[s].value >= 0 ? g->syms[s].value : -1 - (int64_t)s;
}

static uint64_t hash_type(const ir_graph *g, uint64_t h, const ir_node *n) {
    h = fnv_i64(h, n->dtype);
    h = fnv_i64(h, n->shape.rank);
    for (int i = 0; i < n->shape.rank; i++) h = fnv_i64(h, dim_at(g, n->shape.dim[i]));
    return h;
}

/* The attributes of node n that change what it computes, op by op. */
static uint64_t hash_attrs(uint64_t h, const ir_node *n) {
    ir_op op = (ir_op)n->op;
    if (op == IR_OP_CONST) {
        int64_t bits;
        memcpy(&bits, &n->a.cval, sizeof bits);
        return fnv_i64(h, bits);
    }
    if (ir_op_traits(op) & IR_T_REDUCE) return fnv_i64(fnv_i64(h, n->a.red.axes), n->a.red.keepdim);
    if (op == IR_OP_PERMUTE) return fnv(h, n->a.perm, sizeof n->a.perm);
    if (op == IR_OP_SLICE)
        return fnv_i64(fnv_i64(fnv_i64(h, n->a.slice.axis), n->a.slice.start), n->a.slice.stop);
    if (op == IR_OP_CONCAT || op == IR_OP_IOTA) return fnv_i64(h, n->a.axis);
    return h;
}

void pass_region_key(const ir_graph *g, const pass_index *ix, uint32_t r, char key[24]) {
    const ir_region *rg = &g->regions[r];
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv_i64(h, rg->kind);
    h = fnv_i64(h, rg->strategy);
    uint32_t b = ix->rstart[r], e = ix->rstart[r + 1];
    for (uint32_t j = b; j < e; j++) {
        const ir_node *n = &g->nodes[ix->rids[j]];
        h = fnv_i64(h, n->op);
        h = hash_type(g, h, n);
        h = hash_attrs(h, n);
        h = fnv_i64(h, ix->rids[j] == rg->anchor);
        for (unsigned k = 0; k < n->nin; k++) {
            ir_id in = ir_in(g, n, k);
            int64_t local = -1; /* position of an operand computed in the region */
            for (uint32_t q = b; q < j; q++)
                if (ix->rids[q] == in) local = q - b;
            h = fnv_i64(h, local);
            if (local < 0) { /* an external value: its op kind, dtype and shape */
                const ir_node *x = &g->nodes[in];
                h = fnv_i64(h, x->op == IR_OP_CONST ? 1 : 0);
                h = hash_type(g, h, x);
                if (x->op == IR_OP_CONST || ir_is_gen(g, in)) h = hash_attrs(h, x);
            }
        }
    }
    snprintf(key, 24, "%016llx", (unsigned long long)h);
}

const pass_tune_entry *pass_tune_find(const pass_tune *t, const char *key, const char *gpu_name,
                                      bool *stale) {
    if (stale) *stale = false;
    if (!t) return NULL;
    for (unsigned i = 0; i < t->n; i++) {
        const pass_tune_entry *e = &t->e[i];
        if (strcmp(e->key, key) || strcmp(e->gpu, gpu_name)) continue;
        if ((t->device && t->device[0] && strcmp(t->device, e->device)) ||
            (t->driver > 0 && e->driver > 0 && t->driver != e->driver)) {
            if (stale) *stale = true;
            continue;
        }
        return e;
    }
    return NULL;
}
