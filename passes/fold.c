/* fold.c - constant folding. A value is "uniform" when every element is
 * the same known scalar: a CONST, or a broadcast_to of a CONST. Folding
 * replaces, in place,
 *  - an elementwise op whose inputs are all uniform,
 *  - a view (permute, reshape, broadcast_to, slice, concat) of uniform values,
 *  - a sum/mean/max/min of a uniform value over a known, non-empty extent,
 * by a CONST (rank 0) or a broadcast_to of a CONST (rank > 0). Results are
 * computed in double from the inputs' values and rounded once to the result
 * dtype (f16/bf16: exact round-to-nearest-even, overflow to infinity), the
 * reference interpreter's rule. Where backends may differ (float to i32 of
 * NaN/inf/out of range, i32 overflow, i32 division that is not exact, i32
 * pow, transcendental ops on integers, arithmetic on bool) the node is left
 * for the runtime. */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds v to a binary float with `mant` stored mantissa bits, minimum
 * normal exponent `emin` and largest finite value `maxv`, to nearest even;
 * overflow gives a signed infinity. Exact for every double input. */
static double round_small(double v, int mant, int emin, double maxv) {
    if (isnan(v) || isinf(v) || v == 0) return v;
    int e;
    (void)frexp(v, &e);
    int be = e - 1 < emin ? emin : e - 1;
    int q = be - mant;
    double r = ldexp(nearbyint(ldexp(v, -q)), q);
    return fabs(r) > maxv ? copysign(INFINITY, v) : r;
}

/* Converts v to dtype `to` as a cast does. Returns false when the result
 * is not defined (NaN, infinity or out of range to i32). */
static bool convert(double v, ir_dtype to, double *out) {
    switch (to) {
    case IR_F32: *out = (double)(float)v; return true;
    case IR_F16: *out = round_small(v, 10, -14, 65504.0); return true;
    case IR_BF16: *out = round_small(v, 7, -126, ldexp(255.0, 120)); return true;
    case IR_I32:
        if (isnan(v)) return false;
        v = trunc(v);
        if (v < -2147483648.0 || v > 2147483647.0) return false;
        *out = v;
        return true;
    case IR_BOOL: *out = v != 0; return true;
    default: return false;
    }
}

/* True when the integer-valued v is an i32 value. */
static bool fits_i32(double v) { return v >= -2147483648.0 && v <= 2147483647.0; }

/* The interpreter's definitions of the GELU variants. */
static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* A float unary op on x; returns false for ops that are not float unary. */
static bool float_unary(ir_op op, double x, double *r) {
    switch (op) {
    case IR_OP_NEG: *r = -x; break;
    case IR_OP_ABS: *r = fabs(x); break;
    case IR_OP_EXP: *r = exp(x); break;
    case IR_OP_EXP2: *r = exp2(x); break;
    case IR_OP_LOG: *r = log(x); break;
    case IR_OP_LOG2: *r = log2(x); break;
    case IR_OP_SQRT: *r = sqrt(x); break;
    case IR_OP_RSQRT: *r = 1 / sqrt(x); break;
    case IR_OP_RECIP: *r = 1 / x; break;
    case IR_OP_SIN: *r = sin(x); break;
    case IR_OP_COS: *r = cos(x); break;
    case IR_OP_TANH: *r = tanh(x); break;
    case IR_OP_SIGMOID: *r = 1 / (1 + exp(-x)); break;
    case IR_OP_RELU: *r = x < 0 ? 0.0 : x; break;
    case IR_OP_GELU: *r = gelu(x); break;
    case IR_OP_GELU_TANH: *r = gelu_tanh(x); break;
    case IR_OP_SILU: *r = x * (1 / (1 + exp(-x))); break;
    case IR_OP_ERF: *r = erf(x); break;
    case IR_OP_FLOOR: *r = floor(x); break;
    case IR_OP_CEIL: *r = ceil(x); break;
    default: return false;
    }
    return true;
}

/* A float binary op; maximum/minimum propagate NaN (as torch.maximum) and
 * return the first operand on ties (so max(+0, -0) is +0). */
static bool float_binary(ir_op op, double a, double b, double *r) {
    switch (op) {
    case IR_OP_ADD: *r = a + b; break;
    case IR_OP_SUB: *r = a - b; break;
    case IR_OP_MUL: *r = a * b; break;
    case IR_OP_DIV: *r = a / b; break;
    case IR_OP_POW: *r = pow(a, b); break;
    case IR_OP_MAXIMUM: *r = isnan(a) || isnan(b) ? NAN : a >= b ? a : b; break;
    case IR_OP_MINIMUM: *r = isnan(a) || isnan(b) ? NAN : a <= b ? a : b; break;
    default: return false;
    }
    return true;
}

/* An i32 op on integer values; false when the exact result is not an i32
 * (overflow is left to the runtime: backends differ) or when division is
 * not exact. Products of two i32 values are exact in double. */
static bool int_op(ir_op op, double a, double b, double *r) {
    switch (op) {
    case IR_OP_NEG: *r = -a; break;
    case IR_OP_ABS: *r = fabs(a); break;
    case IR_OP_RELU: *r = a < 0 ? 0 : a; break;
    case IR_OP_FLOOR:
    case IR_OP_CEIL: *r = a; break;
    case IR_OP_ADD: *r = a + b; break;
    case IR_OP_SUB: *r = a - b; break;
    case IR_OP_MUL: *r = a * b; break;
    case IR_OP_MAXIMUM: *r = a >= b ? a : b; break;
    case IR_OP_MINIMUM: *r = a <= b ? a : b; break;
    case IR_OP_DIV:
        if (b == 0 || fmod(a, b) != 0) return false;
        *r = a / b;
        break;
    default: return false;
    }
    return fits_i32(*r);
}

/* A comparison of a and b (NaN compares unequal to everything). */
static double compare(ir_op op, double a, double b) {
    switch (op) {
    case IR_OP_LT: return a < b;
    case IR_OP_LE: return a <= b;
    case IR_OP_GT: return a > b;
    case IR_OP_GE: return a >= b;
    case IR_OP_EQ: return a == b;
    default: return a != b;
    }
}

/* Value of elementwise node `n` whose inputs have the uniform values x[]
 * (each in its own dtype): computed in double from those values and
 * rounded once to the result dtype, as the reference interpreter does.
 * Returns false when the value is not one tx defines at compile time. */
static bool eval_elem(const ir_node *n, const double *x, double *r) {
    ir_op op = (ir_op)n->op;
    ir_dtype dt = (ir_dtype)n->dtype;
    double v = 0;
    if (op == IR_OP_CAST) return convert(x[0], dt, r);
    if (op == IR_OP_WHERE) return convert(x[0] != 0 ? x[1] : x[2], dt, r);
    if (ir_op_traits(op) & IR_T_CMP) {
        *r = compare(op, x[0], x[1]);
        return true;
    }
    if (dt == IR_I32) return int_op(op, x[0], n->nin > 1 ? x[1] : 0, r);
    if (!ir_dtype_is_float(dt)) return false;
    if (!(n->nin == 1 ? float_unary(op, x[0], &v) : float_binary(op, x[0], x[1], &v))) return false;
    return convert(v, dt, r);
}

/* Value of reduction `n` of a uniform input with value v: max/min/mean
 * give v over any non-empty extent, sum gives v times the (concrete) count. */
static bool eval_reduce(const ir_graph *g, const ir_node *n, double v, double *r) {
    const ir_shape *s = &g->nodes[ir_in(g, n, 0)].shape;
    int64_t count = 1;
    bool known = true;
    for (int i = 0; i < s->rank; i++) {
        if (!(n->a.red.axes & (1u << i))) continue;
        if (IR_DIM_IS_SYM(s->dim[i])) known = false; /* symbolic dims are positive */
        else if (!ir_mul_ok(count, s->dim[i], &count)) return false;
    }
    if (count == 0 || n->dtype == IR_BOOL) return false;
    if (n->op != IR_OP_SUM) {
        *r = v;
        return true;
    }
    if (!known) return false;
    if (n->dtype == IR_I32) {
        *r = v * (double)count;
        return count < (1LL << 31) && fits_i32(*r); /* then the product is exact */
    }
    return convert(v * (double)count, (ir_dtype)n->dtype, r);
}

/* Pass state. Nodes [0, n0) are the graph as it came; constants the pass
 * creates are appended after them and moved behind the parameters at the
 * end (finish), so ids stay stable during the walk. */
typedef struct fold_st {
    ir_graph *g;
    uint32_t n0;
    bool *known;    /* known[i]: every element of node i is val[i] */
    double *val;    /* in node i's dtype */
    ir_id *root;    /* a CONST before i holding exactly val[i] in i's dtype, or IR_NONE */
    uint32_t *slot; /* constants by (dtype, value bits): id + 1; 0 empty */
    uint32_t cap;   /* power of two, more than twice the most constants */
} fold_st;

/* Hash slot where constant (dt, v) is or would go. */
static uint32_t ctab_slot(const fold_st *f, ir_dtype dt, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t h = (bits ^ (bits >> 29) ^ ((uint64_t)dt << 7)) * 0x9e3779b97f4a7c15ull;
    uint32_t s = (uint32_t)(h >> 32) & (f->cap - 1);
    for (;; s = (s + 1) & (f->cap - 1)) {
        if (!f->slot[s]) return s;
        const ir_node *n = &f->g->nodes[f->slot[s] - 1];
        if (n->dtype == dt && !memcmp(&n->a.cval, &v, sizeof v)) return s;
    }
}

/* Records CONST node `id` unless an equal constant is recorded. */
static void ctab_put(fold_st *f, ir_id id) {
    const ir_node *n = &f->g->nodes[id];
    uint32_t s = ctab_slot(f, (ir_dtype)n->dtype, n->a.cval);
    if (!f->slot[s]) f->slot[s] = id + 1;
}

/* Computes known/val/root of node i from its inputs' (already computed)
 * entries. Returns true when node i is fully known but not yet in folded
 * form (a CONST, or a broadcast_to of a CONST). */
static bool eval_node(fold_st *f, ir_id i) {
    const ir_graph *g = f->g;
    const ir_node *n = &g->nodes[i];
    unsigned t = ir_op_traits((ir_op)n->op);
    double x[3] = {0, 0, 0}, *r = &f->val[i];
    f->known[i] = false;
    f->root[i] = IR_NONE;
    if (n->op == IR_OP_CONST) {
        f->root[i] = i;
        f->known[i] = convert(n->a.cval, (ir_dtype)n->dtype, r);
        return false; /* already folded */
    }
    if (n->op == IR_OP_INPUT || n->op == IR_OP_OUTPUT || n->op == IR_OP_MATMUL) return false;
    if (n->nin > 3 && !(t & IR_T_VIEW)) return false;
    ir_id in0 = ir_in(g, n, 0);
    for (unsigned k = 0; k < n->nin; k++) {
        ir_id v = ir_in(g, n, k);
        if (!f->known[v]) return false;
        if (k < 3) x[k] = f->val[v];
        if (k && (t & IR_T_VIEW) &&
            (memcmp(&f->val[v], &f->val[in0], sizeof x[0]) || g->nodes[v].dtype != n->dtype))
            return false;
    }
    if (t & IR_T_ELEM) return (f->known[i] = eval_elem(n, x, r));
    if (t & IR_T_REDUCE) return (f->known[i] = eval_reduce(g, n, x[0], r));
    if (g->nodes[in0].dtype != n->dtype) return false; /* views keep the dtype */
    f->known[i] = true;
    *r = x[0];
    f->root[i] = f->root[in0];
    return !(n->op == IR_OP_BROADCAST && g->nodes[in0].op == IR_OP_CONST);
}

/* Rewrites node i (known) into a CONST, or into a broadcast_to of a CONST
 * that precedes it: its root, an equal constant already in the graph, or a
 * new one appended for finish() to move. Keeps name, location, dtype and
 * shape. */
static void materialise(fold_st *f, ir_id i) {
    ir_graph *g = f->g;
    ir_dtype dt = (ir_dtype)g->nodes[i].dtype;
    double v = f->val[i];
    if (g->nodes[i].shape.rank == 0) {
        ir_node *n = &g->nodes[i];
        n->op = IR_OP_CONST;
        n->nin = 0;
        memset(&n->a, 0, sizeof n->a);
        n->a.cval = v;
        f->root[i] = i;
        ctab_put(f, i);
        return;
    }
    ir_id c = f->root[i];
    if (c == IR_NONE) {
        uint32_t s = ctab_slot(f, dt, v);
        c = f->slot[s] ? f->slot[s] - 1 : ir_add_const(g, v, dt);
        f->slot[s] = c + 1;
    }
    ir_node *n = &g->nodes[i]; /* after ir_add_const, which may move the array */
    n->op = IR_OP_BROADCAST;
    n->nin = 1;
    ir_set_in(g, n, 0, c);
    memset(&n->a, 0, sizeof n->a);
    f->root[i] = c;
}

/* Moves the constants appended during the walk (ids >= n0) to just after
 * the parameters, renumbering every input; restores topological order. */
static void finish(fold_st *f) {
    ir_graph *g = f->g;
    uint32_t n0 = f->n0, k = g->n - n0, pos = 0;
    if (!k) return;
    while (pos < n0 && g->nodes[pos].op == IR_OP_INPUT) pos++;
    for (ir_id i = 0; i < g->n; i++) {
        ir_node *n = &g->nodes[i];
        for (unsigned a = 0; a < n->nin; a++) {
            ir_id v = ir_in(g, n, a);
            ir_set_in(g, n, a, v < pos ? v : v < n0 ? v + k : pos + (v - n0));
        }
    }
    ir_node *tmp = ir_xmalloc((size_t)k * sizeof *tmp);
    memcpy(tmp, &g->nodes[n0], (size_t)k * sizeof *tmp);
    memmove(&g->nodes[pos + k], &g->nodes[pos], (size_t)(n0 - pos) * sizeof *tmp);
    memcpy(&g->nodes[pos], tmp, (size_t)k * sizeof *tmp);
    free(tmp);
}

/* One forward walk, linear in the graph size: every node whose value is
 * fully known becomes a CONST or a broadcast_to of a CONST. Inputs are
 * evaluated before their users, so whole constant subtrees fold in one
 * walk. Unused constants are left for dce. Returns true when a node was
 * rewritten. */
bool pass_fold(ir_graph *g, pass_ctx *c) {
    (void)c;
    fold_st f = {.g = g, .n0 = g->n, .cap = 16};
    while (f.cap <= 4 * (uint64_t)g->n) f.cap *= 2;
    f.known = ir_xcalloc(g->n + 1, sizeof *f.known);
    f.val = ir_xcalloc(g->n + 1, sizeof *f.val);
    f.root = ir_xcalloc(g->n + 1, sizeof *f.root);
    f.slot = ir_xcalloc(f.cap, sizeof *f.slot);
    bool changed = false;
    for (ir_id i = 0; i < f.n0; i++) {
        if (eval_node(&f, i)) {
            materialise(&f, i);
            changed = true;
        } else if (g->nodes[i].op == IR_OP_CONST) {
            ctab_put(&f, i);
        }
    }
    finish(&f);
    free(f.known);
    free(f.val);
    free(f.root);
    free(f.slot);
    return changed;
}
