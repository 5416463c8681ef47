/* scalar.c - the scalar meaning of every elementwise op (contract in ir.h,
 * "scalar semantics"): the one definition constant folding and the reference
 * interpreter share. Every switch names every op, so a new IR_OPS row does
 * not build until it has a rule here (-Wswitch-enum). */
#include "ir/ir.h"

#include <math.h>

double ir_scalar_round(double v, ir_dtype t) {
    switch (t) {
        case IR_F32: return (double)(float)v;                /* C conversion: nearest even */
        case IR_F16: return ir_f16_to_f64(ir_f64_to_f16(v)); /* ir/half.c: the one conversion */
        case IR_BF16: return ir_bf16_to_f64(ir_f64_to_bf16(v));
        case IR_I32:
            if (isnan(v)) return 0;
            if (v >= 2147483647.0) return 2147483647.0;
            if (v <= -2147483648.0) return -2147483648.0;
            return trunc(v) + 0.0; /* an integer: -0 becomes +0 */
        case IR_BOOL: return v != 0;
        case IR_NDTYPES: break;
    }
    return v;
}

double ir_scalar_wrap_i32(double v) { return (double)(int32_t)(uint32_t)(uint64_t)(int64_t)v; }

/* i32 a ** b (a, b integers in i32 range): square and multiply, wrapping at
 * each step as NumPy's int32 power does; b < 0 per the contract in ir.h. */
static double ipow(double a, double b) {
    int32_t x = (int32_t)a, n = (int32_t)b;
    if (n < 0) return x == 1 ? 1 : x == -1 ? ((n & 1) ? -1 : 1) : 0;
    uint32_t r = 1, p = (uint32_t)x;
    for (uint32_t e = (uint32_t)n; e; e >>= 1) {
        if (e & 1) r *= p;
        p *= p;
    }
    return (double)(int32_t)r;
}

/* i32 division: truncation toward zero, x / 0 = 0, INT_MIN / -1 wraps. */
static double idiv(double a, double b) { return b == 0 ? 0.0 : ir_scalar_wrap_i32(trunc(a / b)); }

/* NumPy maximum/minimum: NaN in either operand gives NaN; ties give the first
 * operand (so maximum(+0, -0) is +0). */
static double max_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a >= b ? a : b; }
static double min_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a <= b ? a : b; }

static const double SQRT_2_OVER_PI = 0.7978845608028654;

/* Float rule of elementwise op on exact operand values; also the rule of the
 * float-only ops on integer operands. The gelus are written as
 * 0.5 x erfc(-x / sqrt 2) and x sigmoid(2u): equal to the textbook forms, but
 * without the cancellation of 1 + erf and 1 + tanh at negative x. */
static bool float_rule(ir_op op, const double *x, double *r) {
    double a = x[0], b = x[1];
    switch (op) {
        case IR_OP_NEG: *r = -a; return true;
        case IR_OP_ABS: *r = fabs(a); return true;
        case IR_OP_EXP: *r = exp(a); return true;
        case IR_OP_EXP2: *r = exp2(a); return true;
        case IR_OP_LOG: *r = log(a); return true;
        case IR_OP_LOG2: *r = log2(a); return true;
        case IR_OP_SQRT: *r = sqrt(a); return true;
        case IR_OP_RSQRT: *r = 1.0 / sqrt(a); return true;
        case IR_OP_RECIP: *r = 1.0 / a; return true;
        case IR_OP_SIN: *r = sin(a); return true;
        case IR_OP_COS: *r = cos(a); return true;
        case IR_OP_TANH: *r = tanh(a); return true;
        case IR_OP_SIGMOID: *r = 1.0 / (1.0 + exp(-a)); return true;
        case IR_OP_RELU: *r = a < 0 ? 0.0 : a; return true; /* NaN propagates */
        case IR_OP_GELU: *r = 0.5 * a * erfc(-a / sqrt(2.0)); return true;
        case IR_OP_GELU_TANH:
            *r = a / (1.0 + exp(-2.0 * SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)));
            return true;
        case IR_OP_SILU: *r = a * (1.0 / (1.0 + exp(-a))); return true;
        case IR_OP_ERF: *r = erf(a); return true;
        case IR_OP_FLOOR: *r = floor(a); return true;
        case IR_OP_CEIL: *r = ceil(a); return true;
        case IR_OP_CAST: *r = a; return true;
        case IR_OP_ADD: *r = a + b; return true;
        case IR_OP_SUB: *r = a - b; return true;
        case IR_OP_MUL: *r = a * b; return true;
        case IR_OP_DIV: *r = a / b; return true;
        case IR_OP_POW: *r = pow(a, b); return true; /* C99 Annex F: NumPy's special cases */
        case IR_OP_MAXIMUM: *r = max_nan(a, b); return true;
        case IR_OP_MINIMUM: *r = min_nan(a, b); return true;
        case IR_OP_LT: *r = a < b; return true;
        case IR_OP_LE: *r = a <= b; return true;
        case IR_OP_GT: *r = a > b; return true;
        case IR_OP_GE: *r = a >= b; return true;
        case IR_OP_EQ: *r = a == b; return true;
        case IR_OP_NE: *r = a != b; return true;
        case IR_OP_WHERE: *r = a != 0 ? b : x[2]; return true;
        case IR_OP_NOT: *r = a == 0; return true;
        case IR_OP_AND: *r = a != 0 && b != 0; return true;
        case IR_OP_OR: *r = a != 0 || b != 0; return true;
        case IR_OP_INPUT:
        case IR_OP_CONST:
        case IR_OP_IOTA:
        case IR_OP_SUM:
        case IR_OP_MEAN:
        case IR_OP_MAX:
        case IR_OP_MIN:
        case IR_OP_PICK:
        case IR_OP_MATMUL:
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT:
        case IR_OP_OUTPUT:
        case IR_NOPS: return false;
    }
    return false;
}

/* Integer rule (i32 operands, or bool operands as 0/1): the ops whose
 * integer meaning differs from the real one; the rest fall to float_rule
 * (exact on integers: comparisons, maximum/minimum, relu, floor, ceil, where,
 * cast; the float-only ops, stored later by the cast rule). */
static bool int_rule(ir_op op, const double *x, double *r) {
    double a = x[0], b = x[1];
    switch (op) {
        case IR_OP_NEG: *r = ir_scalar_wrap_i32(-a); return true;
        case IR_OP_ABS: *r = ir_scalar_wrap_i32(fabs(a)); return true;
        case IR_OP_ADD: *r = ir_scalar_wrap_i32(a + b); return true;
        case IR_OP_SUB: *r = ir_scalar_wrap_i32(a - b); return true;
        case IR_OP_MUL:
            *r = (double)(int32_t)((uint32_t)(int64_t)a * (uint32_t)(int64_t)b);
            return true;
        case IR_OP_DIV: *r = idiv(a, b); return true;
        case IR_OP_POW: *r = ipow(a, b); return true;
        case IR_OP_EXP:
        case IR_OP_EXP2:
        case IR_OP_LOG:
        case IR_OP_LOG2:
        case IR_OP_SQRT:
        case IR_OP_RSQRT:
        case IR_OP_RECIP:
        case IR_OP_SIN:
        case IR_OP_COS:
        case IR_OP_TANH:
        case IR_OP_SIGMOID:
        case IR_OP_RELU:
        case IR_OP_GELU:
        case IR_OP_GELU_TANH:
        case IR_OP_SILU:
        case IR_OP_ERF:
        case IR_OP_FLOOR:
        case IR_OP_CEIL:
        case IR_OP_CAST:
        case IR_OP_MAXIMUM:
        case IR_OP_MINIMUM:
        case IR_OP_LT:
        case IR_OP_LE:
        case IR_OP_GT:
        case IR_OP_GE:
        case IR_OP_EQ:
        case IR_OP_NE:
        case IR_OP_WHERE:
        case IR_OP_NOT:
        case IR_OP_AND:
        case IR_OP_OR:
        case IR_OP_INPUT:
        case IR_OP_CONST:
        case IR_OP_IOTA:
        case IR_OP_SUM:
        case IR_OP_MEAN:
        case IR_OP_MAX:
        case IR_OP_MIN:
        case IR_OP_PICK:
        case IR_OP_MATMUL:
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT:
        case IR_OP_OUTPUT:
        case IR_NOPS: return float_rule(op, x, r);
    }
    return false;
}

bool ir_scalar_eval(ir_op op, ir_dtype t, const double *x, double *r) {
    double in[3] = {x[0], 0, 0};
    int ar = op < IR_NOPS ? ir_op_arity(op) : 0;
    for (int k = 1; k < ar && k < 3; k++) in[k] = x[k];
    if (ir_dtype_is_float(t)) return float_rule(op, in, r);
    return int_rule(op, in, r);
}

ir_dtype ir_elem_compute_dtype(const ir_graph *g, const ir_node *n) {
    ir_op op = (ir_op)n->op;
    ir_dtype rt = (ir_dtype)n->dtype;
    if (op == IR_OP_CAST || op == IR_OP_WHERE) return rt;
    if (n->nin == 2) {
        if (!(ir_op_traits(op) & IR_T_CMP)) return rt;
        return ir_dtype_promote((ir_dtype)g->nodes[ir_in(g, n, 0)].dtype,
                                (ir_dtype)g->nodes[ir_in(g, n, 1)].dtype);
    }
    if (n->nin == 1 && rt == IR_BOOL) return (ir_dtype)g->nodes[ir_in(g, n, 0)].dtype;
    return rt;
}

/* ---- reductions ---------------------------------------------------------- */
/* The combining rule of a reduction op: sum and mean add, max and min keep
 * the larger / smaller with NaN propagating; IR_NOPS for other ops. Names
 * every op. */
ir_op ir_scalar_reduce_combiner(ir_op op) {
    switch (op) {
        case IR_OP_SUM:
        case IR_OP_MEAN: return IR_OP_ADD;
        case IR_OP_MAX: return IR_OP_MAXIMUM;
        case IR_OP_MIN: return IR_OP_MINIMUM;
        case IR_OP_INPUT:
        case IR_OP_CONST:
        case IR_OP_NEG:
        case IR_OP_ABS:
        case IR_OP_EXP:
        case IR_OP_EXP2:
        case IR_OP_LOG:
        case IR_OP_LOG2:
        case IR_OP_SQRT:
        case IR_OP_RSQRT:
        case IR_OP_RECIP:
        case IR_OP_SIN:
        case IR_OP_COS:
        case IR_OP_TANH:
        case IR_OP_SIGMOID:
        case IR_OP_RELU:
        case IR_OP_GELU:
        case IR_OP_GELU_TANH:
        case IR_OP_SILU:
        case IR_OP_ERF:
        case IR_OP_FLOOR:
        case IR_OP_CEIL:
        case IR_OP_CAST:
        case IR_OP_ADD:
        case IR_OP_SUB:
        case IR_OP_MUL:
        case IR_OP_DIV:
        case IR_OP_POW:
        case IR_OP_MAXIMUM:
        case IR_OP_MINIMUM:
        case IR_OP_LT:
        case IR_OP_LE:
        case IR_OP_GT:
        case IR_OP_GE:
        case IR_OP_EQ:
        case IR_OP_NE:
        case IR_OP_WHERE:
        case IR_OP_NOT:
        case IR_OP_AND:
        case IR_OP_OR:
        case IR_OP_IOTA:
        case IR_OP_PICK:
        case IR_OP_MATMUL:
        case IR_OP_PERMUTE:
        case IR_OP_RESHAPE:
        case IR_OP_BROADCAST:
        case IR_OP_SLICE:
        case IR_OP_CONCAT:
        case IR_OP_OUTPUT:
        case IR_NOPS: return IR_NOPS;
    }
    return IR_NOPS;
}

bool ir_scalar_reduce_init(ir_op op, double *acc) {
    ir_op c = ir_scalar_reduce_combiner(op);
    if (c == IR_NOPS) return false;
    *acc = c == IR_OP_MAXIMUM ? -INFINITY : c == IR_OP_MINIMUM ? INFINITY : 0.0;
    return true;
}

bool ir_scalar_reduce_step(ir_op op, ir_dtype t, double acc, double v, double *r) {
    ir_op c = ir_scalar_reduce_combiner(op);
    double x[2] = {acc, v};
    /* the accumulator is exact (double), so sums are not wrapped here: the i32 store wraps them */
    return c != IR_NOPS &&
           ir_scalar_eval(c, ir_dtype_is_float(t) || c == IR_OP_ADD ? IR_F32 : t, x, r);
}

bool ir_scalar_reduce_finish(ir_op op, ir_dtype t, double acc, double count, double *r) {
    if (ir_scalar_reduce_combiner(op) == IR_NOPS) return false;
    double q[2] = {acc, count};
    if (op == IR_OP_MEAN) return ir_scalar_eval(IR_OP_DIV, t, q, r);
    *r = acc;
    return true;
}

bool ir_scalar_reduce_uniform(ir_op op, double v, double count, double *r) {
    ir_op c = ir_scalar_reduce_combiner(op);
    if (c == IR_NOPS || count <= 0) return false;
    /* the accumulator starts at +0, so a sum or mean of -0s is +0 (v + 0.0) */
    *r = op == IR_OP_SUM ? v * count + 0.0 : op == IR_OP_MEAN ? v + 0.0 : v;
    return true;
}
