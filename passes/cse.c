/* cse.c - common subexpression elimination by hash-consing: two nodes with
 * the same op, dtype, shape, attributes and inputs compute the same value;
 * the later one is merged into the earlier one. Inputs of commutative binary
 * ops are compared as an unordered pair. INPUT and OUTPUT nodes are never
 * merged. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct cse_table {
    uint32_t *slot; /* node id + 1; 0: empty */
    uint32_t cap;   /* power of two, at least twice the node count */
} cse_table;

/* Input k of node `n` in canonical order: the two inputs of a commutative
 * binary op are taken smaller id first; other inputs keep their order. */
static ir_id canon_in(const ir_graph *g, const ir_node *n, unsigned k) {
    if ((ir_op_traits((ir_op)n->op) & IR_T_COMMUT) && n->nin == 2) {
        ir_id a = ir_in(g, n, 0), b = ir_in(g, n, 1);
        return (k == 0) == (a < b) ? a : b;
    }
    return ir_in(g, n, k);
}

/* Folds v into the running hash h. */
static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

/* Hashes the attribute bytes that matter for `n`'s op (see same_attrs). */
static uint64_t hash_attrs(const ir_node *n) {
    uint64_t h = 0, bits;
    unsigned t = ir_op_traits((ir_op)n->op);
    if (n->op == IR_OP_CONST) {
        memcpy(&bits, &n->a.cval, sizeof bits);
        h = mix(h, bits);
    } else if (t & IR_T_REDUCE) {
        h = mix(mix(h, n->a.red.axes), n->a.red.keepdim);
    } else if (n->op == IR_OP_PERMUTE) {
        for (int i = 0; i < n->shape.rank; i++) h = mix(h, n->a.perm[i]);
    } else if (n->op == IR_OP_SLICE) {
        h = mix(mix(mix(h, (uint64_t)n->a.slice.axis), (uint64_t)n->a.slice.start),
                (uint64_t)n->a.slice.stop);
    } else if (n->op == IR_OP_CONCAT || n->op == IR_OP_IOTA) {
        h = mix(h, (uint64_t)n->a.axis);
    } else if (n->op == IR_OP_PICK) {
        h = mix(mix(h, (uint64_t)n->a.pick.axis), (uint64_t)n->a.pick.len);
    }
    return h;
}

/* True when the op-specific attributes of a and b (same op) are equal.
 * Constants compare by bit pattern, so 0.0 and -0.0 stay apart. */
static bool same_attrs(const ir_node *a, const ir_node *b) {
    unsigned t = ir_op_traits((ir_op)a->op);
    if (a->op == IR_OP_CONST) return !memcmp(&a->a.cval, &b->a.cval, sizeof a->a.cval);
    if (t & IR_T_REDUCE)
        return a->a.red.axes == b->a.red.axes && a->a.red.keepdim == b->a.red.keepdim;
    if (a->op == IR_OP_PERMUTE) return !memcmp(a->a.perm, b->a.perm, a->shape.rank);
    if (a->op == IR_OP_SLICE)
        return a->a.slice.axis == b->a.slice.axis && a->a.slice.start == b->a.slice.start &&
               a->a.slice.stop == b->a.slice.stop;
    if (a->op == IR_OP_CONCAT || a->op == IR_OP_IOTA) return a->a.axis == b->a.axis;
    if (a->op == IR_OP_PICK)
        return a->a.pick.axis == b->a.pick.axis && a->a.pick.len == b->a.pick.len;
    return true;
}

/* Hash of everything that identifies node `id`'s value. */
static uint64_t hash_node(const ir_graph *g, ir_id id) {
    const ir_node *n = &g->nodes[id];
    uint64_t h = mix(mix(mix(0, n->op), n->dtype), n->nin);
    h = mix(h, n->shape.rank);
    for (int i = 0; i < n->shape.rank; i++) h = mix(h, (uint64_t)n->shape.dim[i]);
    for (unsigned k = 0; k < n->nin; k++) h = mix(h, canon_in(g, n, k));
    h = mix(h, hash_attrs(n));
    h ^= h >> 33; /* avalanche, so the table's low bits depend on every input bit */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* True when nodes a and b compute the same value by construction. */
static bool same_node(const ir_graph *g, ir_id a, ir_id b) {
    const ir_node *x = &g->nodes[a], *y = &g->nodes[b];
    if (x->op != y->op || x->dtype != y->dtype || x->nin != y->nin) return false;
    if (!ir_shape_eq(&x->shape, &y->shape) || !same_attrs(x, y)) return false;
    for (unsigned k = 0; k < x->nin; k++)
        if (canon_in(g, x, k) != canon_in(g, y, k)) return false;
    return true;
}

/* Looks node `id` up; inserts it when no equal node is present. Returns
 * the id of the equal earlier node, or `id` itself. */
static ir_id table_find_or_add(cse_table *t, const ir_graph *g, ir_id id) {
    uint32_t mask = t->cap - 1, s = (uint32_t)hash_node(g, id) & mask;
    for (;; s = (s + 1) & mask) {
        if (!t->slot[s]) {
            t->slot[s] = id + 1;
            return id;
        }
        if (same_node(g, t->slot[s] - 1, id)) return t->slot[s] - 1;
    }
}

/* Walks the graph once in order, rewriting each node's inputs to their
 * representatives before looking it up, so chains of duplicates collapse
 * in one pass. A merged node's name moves to its representative when that
 * one has none. Removes merged nodes (ir_compact). Returns true when a
 * node was merged. */
bool pass_cse(ir_graph *g, pass_ctx *c) {
    (void)c;
    cse_table t = {0};
    t.cap = 16;
    while (t.cap < 2 * (uint64_t)g->n) t.cap *= 2;
    t.slot = ir_xcalloc(t.cap, sizeof *t.slot);
    ir_id *rep = ir_xmalloc((size_t)g->n * sizeof *rep + 1);
    uint32_t merged = 0;
    for (ir_id i = 0; i < g->n; i++) {
        ir_node *n = &g->nodes[i];
        rep[i] = i;
        for (unsigned k = 0; k < n->nin; k++) ir_set_in(g, n, k, rep[ir_in(g, n, k)]);
        if (n->op == IR_OP_INPUT || n->op == IR_OP_OUTPUT) continue;
        ir_id e = table_find_or_add(&t, g, i);
        if (e == i) continue;
        rep[i] = e;
        if (!g->nodes[e].name && n->name) g->nodes[e].name = n->name;
        n->flags |= IR_NF_DEAD;
        merged++;
    }
    free(rep);
    free(t.slot);
    if (merged) ir_compact(g);
    return merged > 0;
}
