/* ir.h - the tx graph IR: an FX-like dataflow graph held in one arena.
 *
 * Invariants (checked by ir_verify):
 *  - nodes live in g->nodes and are named by their index (ir_id, 32 bits);
 *  - nodes are in topological order: every input id of node i is < i;
 *  - input (placeholder) nodes come first, in parameter order; exactly one
 *    OUTPUT node exists and it is the last node; its inputs are the returned
 *    values in return order;
 *  - every node carries its dtype and shape (concrete or symbolic dims);
 *  - each op is declared once in IR_OPS below; enums, names, arity and
 *    traits are generated from that table.
 * No global state: everything hangs off an ir_graph.
 */
#ifndef TX_IR_H
#define TX_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint32_t ir_id;
#define IR_NONE      UINT32_MAX
#define IR_MAX_RANK  8
#define IR_MAX_NEST  256         /* nesting depth limit of the language */
#define IR_MAX_ELEMS (1LL << 62) /* element count of a tensor must stay below */

/* ---- dtypes ------------------------------------------------------------ */
/* X(ENUM, name, bytes, is_float) */
#define IR_DTYPES(X)      \
    X(F32, "f32", 4, 1)   \
    X(F16, "f16", 2, 1)   \
    X(BF16, "bf16", 2, 1) \
    X(I32, "i32", 4, 0)   \
    X(BOOL, "bool", 1, 0)

typedef enum {
#define X(e, s, b, f) IR_##e,
    IR_DTYPES(X)
#undef X
        IR_NDTYPES
} ir_dtype;

const char *ir_dtype_name(ir_dtype t);
int ir_dtype_size(ir_dtype t);
bool ir_dtype_is_float(ir_dtype t);
/* Parses "f32" etc.; returns -1 when the name is not a dtype. */
int ir_dtype_parse(const char *s, size_t len);
/* Promotion of two strong dtypes (spec 1): same -> same; f16+bf16 -> f32;
 * any float with a wider float -> wider; float with int/bool -> the float;
 * i32 with bool -> i32. */
ir_dtype ir_dtype_promote(ir_dtype a, ir_dtype b);

/* ---- ops ----------------------------------------------------------------- */
/* Traits. */
enum {
    IR_T_LEAF = 1u << 0,   /* no inputs: input, const */
    IR_T_ELEM = 1u << 1,   /* elementwise: output[i] depends on inputs[i] (after broadcast) */
    IR_T_CMP = 1u << 2,    /* comparison: result dtype bool */
    IR_T_COMMUT = 1u << 3, /* commutative binary */
    IR_T_REDUCE = 1u << 4, /* reduction over attr.red.axes */
    IR_T_VIEW = 1u << 5,   /* pure data movement: index arithmetic only */
    IR_T_MATMUL = 1u << 6,
    IR_T_TRANSC = 1u << 7,  /* transcendental: costs more than one flop */
    IR_T_VARARG = 1u << 8,  /* arity given by nin (concat, output) */
    IR_T_CALL = 1u << 9,    /* a built-in of the language under the op's name, lowered by the
                               frontend's rule for its family (elementwise unary or binary, where,
                               reduction, matmul); views and casts have their own surface forms */
    IR_T_FLOAT = 1u << 10,  /* float-only: the frontend converts i32/bool operands to f32 */
    IR_T_BOOLOK = 1u << 11, /* keeps bool operands (else the frontend makes bool operands i32) */
    IR_T_GEN = 1u << 12,    /* leaf computed from the index where it is read (const, iota):
                               no buffer, no region, no HBM traffic */
    IR_T_GATHER = 1u << 13, /* reads its first input at an index computed from its second
                               (pick): computed per element like an elementwise node, but that
                               input does not broadcast to the result */
};

/* X(ENUM, name, arity, traits, flops_per_element, issue_per_element)
 * arity -1: variadic. flops: FLOPs charged per output element by the cost
 * model (reductions: per input element; matmul: computed separately).
 * issue: GPU instructions per element the model charges an op in a pointwise
 * kernel (passes/model.c; counted from tx's own PTX expansions in
 * codegen/math.c: exp 9, log 29, pow 104, ...; 0 for ops that are no
 * pointwise instruction: leaves, reductions, matmul, views, output).
 * Each row has, elsewhere, one rule per consumer, found by switches that name
 * every op (no default): its scalar meaning (ir_scalar_eval, ir/scalar.c) and
 * its kernel rule (codegen); the frontend's built-in list is this table's
 * IR_T_CALL rows. docs/adding-an-op.md walks through adding a row. */
#define IR_OPS(X)                                                                         \
    X(INPUT, "input", 0, IR_T_LEAF, 0, 0)                                                 \
    X(CONST, "const", 0, IR_T_LEAF | IR_T_GEN, 0, 0)                                      \
    X(IOTA, "iota", 0, IR_T_LEAF | IR_T_GEN, 0, 1)                                        \
    X(NEG, "neg", 1, IR_T_ELEM | IR_T_CALL, 1, 1)                                         \
    X(ABS, "abs", 1, IR_T_ELEM | IR_T_CALL, 1, 1)                                         \
    X(EXP, "exp", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 9)              \
    X(EXP2, "exp2", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 15)           \
    X(LOG, "log", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 29)             \
    X(LOG2, "log2", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 29)           \
    X(SQRT, "sqrt", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 8)            \
    X(RSQRT, "rsqrt", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 18)         \
    X(RECIP, "recip", 1, IR_T_ELEM | IR_T_CALL | IR_T_FLOAT, 1, 10)                       \
    X(SIN, "sin", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 38)             \
    X(COS, "cos", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 39)             \
    X(TANH, "tanh", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 20)           \
    X(SIGMOID, "sigmoid", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 3, 24)     \
    X(RELU, "relu", 1, IR_T_ELEM | IR_T_CALL, 1, 2)                                       \
    X(GELU, "gelu", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 4, 28)           \
    X(GELU_TANH, "gelu_tanh", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 7, 29) \
    X(SILU, "silu", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 4, 25)           \
    X(ERF, "erf", 1, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL | IR_T_FLOAT, 1, 23)             \
    X(FLOOR, "floor", 1, IR_T_ELEM | IR_T_CALL | IR_T_FLOAT, 1, 1)                        \
    X(CEIL, "ceil", 1, IR_T_ELEM | IR_T_CALL | IR_T_FLOAT, 1, 1)                          \
    X(CAST, "cast", 1, IR_T_ELEM, 0, 1)                                                   \
    X(ADD, "add", 2, IR_T_ELEM | IR_T_COMMUT, 1, 1)                                       \
    X(SUB, "sub", 2, IR_T_ELEM, 1, 1)                                                     \
    X(MUL, "mul", 2, IR_T_ELEM | IR_T_COMMUT, 1, 1)                                       \
    X(DIV, "div", 2, IR_T_ELEM, 1, 10)                                                    \
    X(POW, "pow", 2, IR_T_ELEM | IR_T_TRANSC | IR_T_CALL, 1, 104)                         \
    X(MAXIMUM, "maximum", 2, IR_T_ELEM | IR_T_COMMUT | IR_T_CALL, 1, 1)                   \
    X(MINIMUM, "minimum", 2, IR_T_ELEM | IR_T_COMMUT | IR_T_CALL, 1, 1)                   \
    X(LT, "lt", 2, IR_T_ELEM | IR_T_CMP, 1, 2)                                            \
    X(LE, "le", 2, IR_T_ELEM | IR_T_CMP, 1, 2)                                            \
    X(GT, "gt", 2, IR_T_ELEM | IR_T_CMP, 1, 2)                                            \
    X(GE, "ge", 2, IR_T_ELEM | IR_T_CMP, 1, 2)                                            \
    X(EQ, "eq", 2, IR_T_ELEM | IR_T_CMP | IR_T_COMMUT, 1, 2)                              \
    X(NE, "ne", 2, IR_T_ELEM | IR_T_CMP | IR_T_COMMUT, 1, 2)                              \
    X(WHERE, "where", 3, IR_T_ELEM | IR_T_CALL, 1, 2)                                     \
    X(NOT, "not", 1, IR_T_ELEM | IR_T_BOOLOK, 1, 1)                                       \
    X(AND, "and", 2, IR_T_ELEM | IR_T_COMMUT | IR_T_BOOLOK, 1, 1)                         \
    X(OR, "or", 2, IR_T_ELEM | IR_T_COMMUT | IR_T_BOOLOK, 1, 1)                           \
    X(PICK, "pick", 2, IR_T_GATHER, 0, 6)                                                 \
    X(SUM, "sum", 1, IR_T_REDUCE | IR_T_CALL, 1, 0)                                       \
    X(MEAN, "mean", 1, IR_T_REDUCE | IR_T_CALL | IR_T_FLOAT, 1, 0)                        \
    X(MAX, "max", 1, IR_T_REDUCE | IR_T_CALL | IR_T_BOOLOK, 1, 0)                         \
    X(MIN, "min", 1, IR_T_REDUCE | IR_T_CALL | IR_T_BOOLOK, 1, 0)                         \
    X(MATMUL, "matmul", 2, IR_T_MATMUL | IR_T_CALL, 0, 0)                                 \
    X(PERMUTE, "permute", 1, IR_T_VIEW, 0, 0)                                             \
    X(RESHAPE, "reshape", 1, IR_T_VIEW, 0, 0)                                             \
    X(BROADCAST, "broadcast_to", 1, IR_T_VIEW, 0, 0)                                      \
    X(SLICE, "slice", 1, IR_T_VIEW, 0, 0)                                                 \
    X(CONCAT, "concat", -1, IR_T_VIEW | IR_T_VARARG, 0, 0)                                \
    X(OUTPUT, "output", -1, IR_T_VARARG, 0, 0)

typedef enum {
#define X(e, s, a, t, f, i) IR_OP_##e,
    IR_OPS(X)
#undef X
        IR_NOPS
} ir_op;

const char *ir_op_name(ir_op op);
int ir_op_arity(ir_op op);       /* -1: variadic */
unsigned ir_op_traits(ir_op op); /* IR_T_* bitmask */
int ir_op_flops(ir_op op);       /* cost-model FLOPs per element */
int ir_op_issue(ir_op op);       /* cost-model GPU instructions per element (pointwise) */
/* Parses an op name as printed; returns -1 when unknown. */
int ir_op_parse(const char *s, size_t len);

/* ---- scalar semantics (ir/scalar.c) ------------------------------------ */
/* The one definition of what every elementwise op computes on one element.
 * Constant folding (passes/fold.c) and the reference interpreter
 * (runtime/interp.c) both call these, so a folded constant is bit for bit
 * what the interpreter computes; the kernels (codegen) implement the same
 * rules, within the ulp limits of docs/codegen.md for float math.
 *
 * Values travel as doubles. An operand value "of dtype t" is one t holds
 * exactly (an f32/f16/bf16 value, an integer in i32 range, 0 or 1 for bool),
 * so every operand is exact in double. Precision: an op is evaluated in
 * double from its operands' exact values and the result is rounded ONCE to
 * the result dtype by ir_scalar_round (the store rule); f16/bf16 arithmetic
 * is therefore not rounded to f16 in between (spec 1: "may be computed in f32
 * and rounded once when stored").
 *
 * The compute dtype t (ir_elem_compute_dtype) selects the family of rules:
 *  - float t: real arithmetic in double; pow is C99/IEEE pow (NumPy's
 *    special cases: x**0 = 1 and 1**y = 1 even for NaN, (-0)**-1 = -inf,
 *    (-1)**inf = 1, (-inf)**0.5 = inf); maximum/minimum propagate NaN;
 *  - i32 t: two's-complement arithmetic modulo 2^32 (NumPy int32): + - * neg
 *    abs and ** wrap (INT_MIN stays INT_MIN under neg and abs); division
 *    truncates toward zero, x / 0 is 0 (NumPy's integer division by zero),
 *    INT_MIN / -1 wraps to INT_MIN; a ** b with b < 0 (NumPy refuses it) is
 *    the integer quotient 1 / a**|b|: 1 for a = 1, -1 or 1 by parity for
 *    a = -1, 0 otherwise (0 ** -n too, as 1 / 0 is 0); float-only ops are
 *    computed in double and stored by the cast rule;
 *  - bool t: the i32 rules on 0/1, stored as (result != 0);
 *  - comparisons give 0 or 1 (NaN compares unequal to everything); where
 *    selects; cast is the identity (the store rule converts).
 * ir_elem_compute_dtype (below, with the graph) gives a node's t. */

/* The value of elementwise op `op` at operand values x[0 .. arity) computed at
 * compute dtype t, before the store rounding (i32 results are already
 * wrapped). Returns false, leaving *r alone, for ops that are not elementwise
 * (leaves, reductions, matmul, views, output). */
bool ir_scalar_eval(ir_op op, ir_dtype t, const double *x, double *r);
/* The store rule: v rounded to dtype t. f32/f16/bf16: to nearest even,
 * overflow to a signed infinity, NaN stays NaN, exact for every double; i32:
 * truncation toward zero, saturating at the i32 range, NaN gives 0; bool:
 * v != 0 (NaN gives 1). */
double ir_scalar_round(double v, ir_dtype t);
/* Wraps an integer-valued v (|v| < 2^63) to i32 modulo 2^32. */
double ir_scalar_wrap_i32(double v);
/* Reductions (sum, mean, max, min), over a double accumulator: the identity
 * an accumulator starts from (sum/mean 0, max -inf, min +inf, so an empty
 * max/min gives its identity); one step acc OP v at dtype t (sums add in
 * double, unwrapped; max/min propagate NaN and keep the first on ties); the
 * value after `count` elements (mean divides, by the i32 division rule at
 * i32); and the value over `count` > 0 elements all equal to v (sum: v *
 * count, unrounded; mean: v; max/min: v; +0 for sums and means of -0s, as
 * the accumulation from +0 gives). Each returns false for ops that are not
 * reductions. The result is rounded by ir_scalar_round like any value. */
/* The elementwise op a reduction combines with: IR_OP_ADD for sum and mean, IR_OP_MAXIMUM /
 * IR_OP_MINIMUM for max / min; IR_NOPS for an op that is not a reduction. */
ir_op ir_scalar_reduce_combiner(ir_op op);
bool ir_scalar_reduce_init(ir_op op, double *acc);
bool ir_scalar_reduce_step(ir_op op, ir_dtype t, double acc, double v, double *r);
bool ir_scalar_reduce_finish(ir_op op, ir_dtype t, double acc, double count, double *r);
bool ir_scalar_reduce_uniform(ir_op op, double v, double count, double *r);

/* ---- shapes -------------------------------------------------------------- */
/* A dim >= 0 is a concrete extent. A dim < 0 is the symbolic size with
 * symbol index IR_DIM_SYMIDX(d) in the graph's symbol table. */
typedef int64_t ir_dim;
#define IR_DIM_SYM(idx)  (-(int64_t)(idx)-1)
#define IR_DIM_IS_SYM(d) ((d) < 0)
#define IR_DIM_SYMIDX(d) ((uint32_t)(-(d)-1))

typedef struct ir_shape {
    uint8_t rank;
    ir_dim dim[IR_MAX_RANK];
} ir_shape;

bool ir_shape_eq(const ir_shape *a, const ir_shape *b);
bool ir_shape_is_concrete(const ir_shape *s);
/* Element count of a concrete shape; -1 when symbolic. */
int64_t ir_shape_numel(const ir_shape *s);

/* ---- symbols ------------------------------------------------------------- */
typedef struct ir_sym {
    char *name;
    int64_t value; /* bound value, or -1 while unbound (a runtime parameter) */
} ir_sym;

/* ---- nodes --------------------------------------------------------------- */
typedef struct ir_node {
    uint16_t op;        /* ir_op */
    uint8_t dtype;      /* ir_dtype of the result */
    uint8_t flags;      /* IR_NF_* */
    uint16_t nin;       /* number of inputs */
    uint32_t inoff;     /* inputs are g->args[inoff .. inoff+nin) */
    ir_shape shape;     /* result shape */
    uint32_t name;      /* offset of the value's source name in g->strs; 0: none */
    uint32_t line, col; /* source location of the expression (1-based; 0: none) */
    uint32_t region;    /* fused region index, IR_NONE before planning */
    union {
        double cval;    /* CONST: scalar value (shape is rank 0) */
        uint32_t param; /* INPUT: parameter index */
        struct {
            uint32_t axes;
            uint8_t keepdim;
        } red;                     /* reductions: bitmask of input axes */
        uint8_t perm[IR_MAX_RANK]; /* PERMUTE: out dim i = in dim perm[i] */
        struct {
            int32_t axis;
            int64_t start, stop;
        } slice;      /* SLICE: [start, stop), normalised */
        int32_t axis; /* CONCAT: axis (normalised, >= 0); IOTA: the axis whose index
                         each element holds */
        struct {
            int32_t axis; /* the result's axis the index selects along (its extent is 1) */
            ir_dim len;   /* the first input's extent there: indices outside [0, len) give 0 */
        } pick;           /* PICK (ir_pick_check) */
    } a;
} ir_node;

enum {
    IR_NF_DEAD = 1u << 0,  /* marked for removal by ir_compact */
    IR_NF_STAGE = 1u << 1, /* a cast to its own dtype that copies a matmul operand into a dense
                              matrix ([matmul.stage_view], passes/stage.c): its own kernel */
    /* a copy of a reduction kernel's pointwise value that its consumer kernel recomputes from
     * the statistics ([reduction.stats_recompute], passes/stats.c): never joins a kernel of a
     * value it reads */
    IR_NF_RECOMPUTE = 1u << 2,
};

/* ---- fused regions ------------------------------------------------------- */
/* A region is one planned kernel. Nodes name their region in node.region;
 * the planner (passes/fuse.c) fills the table, codegen reads it. */
#define IR_REGION_KINDS(X)    \
    X(POINTWISE, "pointwise") \
    X(REDUCTION, "reduction") \
    X(MATMUL, "matmul")       \
    X(ATTENTION, "attention") \
    X(COPY, "copy")

typedef enum {
#define X(e, s) IR_RK_##e,
    IR_REGION_KINDS(X)
#undef X
        IR_NRKINDS
} ir_region_kind;
const char *ir_region_kind_name(ir_region_kind k);

enum { /* fusion kinds used by a region (bitmask) */
       IR_FUSE_VERTICAL = 1u << 0,
       IR_FUSE_HORIZONTAL = 1u << 1,
       IR_FUSE_EPILOGUE = 1u << 2,
       IR_FUSE_ATTENTION = 1u << 3,
};

/* How a reduction region keeps its reduced extent. */
typedef enum {
    IR_RED_ONCHIP = 0, /* whole reduced row in registers/shared memory, one HBM read */
    IR_RED_ONLINE,     /* streamed in chunks with running statistics (online softmax) */
    IR_RED_MULTIPASS,  /* several passes over HBM; counted as spilled bytes */
    IR_RED_KSPLIT,     /* attention with at most 16 query rows (decode): online, each key tile
                          split over the block's warps, their partials combined at the end */
} ir_red_strategy;

/* Names as printed: "vertical" ... for IR_FUSE_* bits, "onchip" ... for
 * strategies. ir_print_fusions writes the names of a fusion bitmask
 * separated by ", ", each between `quote` characters (0: none). */
const char *ir_red_strategy_name(unsigned s);
void ir_print_fusions(FILE *out, unsigned mask, char quote);

/* Capacity of one region (kernel), planned by the fusion pass and relied on
 * by codegen: operations (bounds a kernel's code and codegen's recursion
 * over its values) and reductions (codegen tracks a value's reductions in a
 * 32-bit mask). */
enum { IR_REGION_MAX_OPS = 1024, IR_REGION_MAX_REDUCTIONS = 32 };

/* The schedule a region's kernel follows: a row of the planner's schedule table
 * (passes/schedule.c, PASS_SCHEDULES in passes/passes.h) and its parameters, chosen once by the
 * planner (from the cost model, or from a tuning measurement) and read by codegen, the reports
 * and the runtime's manifest. id 0: the kind has no schedule space (the roofline). */
enum { IR_SCHED_PARAMS = 4 };
typedef enum { IR_SCHED_MODEL = 0, IR_SCHED_MEASURED = 1 } ir_sched_source;
typedef struct ir_schedule {
    uint16_t id;    /* the table row (pass_schedule_id) */
    uint8_t source; /* ir_sched_source: why this one */
    uint8_t pad;
    int32_t p[IR_SCHED_PARAMS]; /* parameters, named by the table row; unused ones 0 */
} ir_schedule;

typedef struct ir_region {
    uint8_t kind;     /* ir_region_kind */
    uint8_t fusion;   /* IR_FUSE_* bitmask */
    uint8_t strategy; /* ir_red_strategy for reductions/attention */
    uint8_t pad;
    uint32_t anchor;       /* the node that gives the region its iteration space
                              (the widest elementwise output, the reduction, the matmul) */
    uint32_t threads;      /* threads per block the plan assumes */
    int64_t tile[3];       /* tile extents: matmul (BM, BN, BK); reduction (row chunk, -, -);
                              pointwise (elements per block, -, -); attention (BQ, BKV, head dim);
                              copy (32, 32, -) for a tiled transpose, else (elements per
                              block, -, -) */
    int64_t sram_bytes;    /* on-chip bytes per block from the tile plan */
    int64_t spilled_bytes; /* extra HBM bytes the plan moves because it did not fit
                              (-1: depends on unbound dims; the report prints the formula) */
    /* Plan details (added for the planner; docs/fusion.md "Region fields"): */
    uint32_t red_axes; /* reduction: bitmask of reduced axes of the domain (the anchor's input) */
    uint32_t picks;    /* reduction [reduction.pick]: bit k set when the region's k-th reduction (in
                          id order) is a one-hot sum that reads the single element at its index
                          once per row instead of one term per element (passes/pick.c) */
    uint8_t passes;    /* HBM passes over the region's row inputs (1: single pass) */
    uint8_t stages; /* reduction: dependent reduction stages; matmul/attention: smem ring depth */
    uint16_t nout;  /* values the region writes to HBM */
    int64_t red_extent; /* reduction: elements per reduced row; attention: key length;
                           -1: symbolic; 0: other kinds */
    int64_t rows;       /* reduction: rows per block; attention: query rows per block;
                           matmul: products sharing the A operand (1, or more when horizontal) */
    /* Attention pattern (the planner's match, read by codegen and reports;
       IR_NONE for other kinds): softmax(scores) @ v with scores = F(mm1),
       F any elementwise graph of mm1 and of values broadcast over it. */
    uint32_t mm1;    /* the first product, q @ kT */
    uint32_t scores; /* the softmax input F(mm1) (== mm1 when F is empty); same shape as mm1 */
    uint32_t splits; /* reduction, column mode: chunks of the reduced axis, each reduced by its
                        own blocks into partials that a second kernel combines
                        ([reduction.column_blocks]); attention (strategy ksplit): chunks of
                        the keys, each block's partial max, sum and O combined by a second
                        kernel ([attention.split_kv]); 0 or 1: every block holds whole columns
                        (all the keys) */
    /* attention [attention.split_kv] with a size bound only at run time: the key split's blocks
       resident at once on the planner's GPU; the kernel uses min(splits, split_slots / its
       blocks, key tiles / 4) chunks, at least 1 (0: every size known, `splits` chunks) */
    uint32_t split_slots;
    /* attention (strategy ksplit) [attention.ks_tma]: the key split's K and V tiles arrive by TMA
       tensor maps into an mbarrier ring (the planner's pick on sm_90a), else by cp.async */
    uint8_t ks_tma;
    ir_schedule sched; /* the kernel's schedule (see ir_schedule) */
} ir_region;

/* ---- graph --------------------------------------------------------------- */
typedef struct ir_graph {
    char *name; /* entry function name */
    char *file; /* source file name, for locations; may be NULL */
    ir_node *nodes;
    uint32_t n, cap;
    uint32_t *args; /* input-id pool; see ir_node.inoff */
    uint32_t nargs, argcap;
    ir_sym *syms;
    uint32_t nsyms, symcap;
    char *strs; /* string pool: NUL-terminated names; offset 0 is "" */
    uint32_t nstrs, strcap;
    ir_region *regions;
    uint32_t nregions, regcap;
} ir_graph;

ir_graph *ir_graph_new(const char *name, const char *file);
void ir_graph_free(ir_graph *g);
/* Deep copy (regions included). Returns NULL on allocation failure. */
ir_graph *ir_graph_clone(const ir_graph *g);

/* True for nodes computed from the index wherever they are read (IR_T_GEN). */
static inline bool ir_is_gen(const ir_graph *g, ir_id id) {
    return (ir_op_traits((ir_op)g->nodes[id].op) & IR_T_GEN) != 0;
}
static inline ir_node *ir_node_at(ir_graph *g, ir_id id) { return &g->nodes[id]; }
static inline ir_id ir_in(const ir_graph *g, const ir_node *n, unsigned i) {
    return g->args[n->inoff + i];
}
static inline void ir_set_in(ir_graph *g, ir_node *n, unsigned i, ir_id v) {
    g->args[n->inoff + i] = v;
}
static inline const char *ir_str(const ir_graph *g, uint32_t off) { return g->strs + off; }
static inline ir_id ir_output(const ir_graph *g) { return g->n - 1; }

/* Interns a string in the pool; returns its offset. */
uint32_t ir_intern(ir_graph *g, const char *s);
/* Adds a symbol (or finds it by name); returns its index. */
uint32_t ir_sym_get(ir_graph *g, const char *name);
int ir_sym_find(const ir_graph *g, const char *name); /* -1 if absent */

/* Appends a node with the given inputs; attributes are zeroed, region is
 * IR_NONE, and the caller fills dtype/shape/attributes. Topological order is
 * the caller's duty (inputs must already exist). Returns the new id. */
ir_id ir_add(ir_graph *g, ir_op op, ir_dtype dt, const ir_shape *shape, const ir_id *ins,
             unsigned nin);
/* Convenience constructors that infer dtype and shape; they assume valid
 * inputs (the frontend checks and reports errors before calling them). */
ir_id ir_add_input(ir_graph *g, const char *name, ir_dtype dt, const ir_shape *shape);
ir_id ir_add_const(ir_graph *g, double v, ir_dtype dt);
/* An i32 leaf of `shape` whose every element is its own index along `axis`
 * (arange, iota): computed from the index wherever it is read, no buffer. */
ir_id ir_add_iota(ir_graph *g, const ir_shape *shape, int axis);
ir_id ir_add_unary(ir_graph *g, ir_op op, ir_id x); /* result dtype: x's (bool for none) */
ir_id ir_add_cast(ir_graph *g, ir_id x, ir_dtype to);
ir_id ir_add_binary(ir_graph *g, ir_op op, ir_id a, ir_id b); /* broadcast shapes; CMP -> bool */
ir_id ir_add_where(ir_graph *g, ir_id c, ir_id a, ir_id b);
ir_id ir_add_reduce(ir_graph *g, ir_op op, ir_id x, uint32_t axes, bool keepdim);
ir_id ir_add_matmul(ir_graph *g, ir_id a, ir_id b);
ir_id ir_add_permute(ir_graph *g, ir_id x, const uint8_t *perm);
ir_id ir_add_reshape(ir_graph *g, ir_id x, const ir_shape *to);
ir_id ir_add_broadcast(ir_graph *g, ir_id x, const ir_shape *to);
ir_id ir_add_slice(ir_graph *g, ir_id x, int axis, int64_t start, int64_t stop);
ir_id ir_add_concat(ir_graph *g, const ir_id *xs, unsigned n, int axis);
ir_id ir_add_output(ir_graph *g, const ir_id *xs, unsigned n);
/* pick(src, idx) {axis, len} of result shape `out` (extent 1 at axis): element o is
 * src[o with axis = i] where i = idx[o] (src and idx broadcast to out by NumPy's rules, aligned at
 * the last axis; src's extent at axis is len, or 1), when 0 <= i < len, else 0; a float result
 * adds +0 (a -0 at the index gives +0). The result has src's dtype; idx is i32. A one-hot sum
 * sum(where(iota == i, src, 0)) along axis is this gather (passes/pick.c). */
ir_id ir_add_pick(ir_graph *g, ir_id src, ir_id idx, const ir_shape *out, int axis, ir_dim len);
/* NULL when pick node n agrees with its inputs (ir_add_pick's contract), else what is wrong. */
const char *ir_pick_check(const ir_graph *g, const ir_node *n);

/* Compute dtype of elementwise node n: the dtype its operands are brought to
 * before the op (comparisons: the promoted operand dtype; a unary op with a
 * bool result: its operand's; otherwise the result dtype). */
ir_dtype ir_elem_compute_dtype(const ir_graph *g, const ir_node *n);
/* Broadcast two shapes (NumPy rules; a symbolic dim matches itself or 1).
 * Returns false when incompatible. */
bool ir_shape_broadcast(const ir_shape *a, const ir_shape *b, ir_shape *out);
/* Result shape of a matmul; false when the shapes do not fit. */
bool ir_shape_matmul(const ir_shape *a, const ir_shape *b, ir_shape *out);

/* ---- uses ---------------------------------------------------------------- */
/* Users of every node in CSR form: users of node i are
 * u->ids[u->start[i] .. u->start[i+1]); a node using a value twice appears twice. */
typedef struct ir_uses {
    uint32_t *start; /* n + 1 entries */
    uint32_t *ids;
} ir_uses;
bool ir_uses_build(const ir_graph *g, ir_uses *u);
void ir_uses_free(ir_uses *u);
static inline uint32_t ir_nuses(const ir_uses *u, ir_id i) { return u->start[i + 1] - u->start[i]; }

/* Replaces every use of `from` by `to` (to < from keeps topological order
 * when `to` already precedes all users). */
void ir_replace_uses(ir_graph *g, ir_id from, ir_id to);
/* Removes nodes flagged IR_NF_DEAD and renumbers the rest, keeping order.
 * Returns the number removed. Region indices are kept. */
uint32_t ir_compact(ir_graph *g);

/* ---- text form, verifier ----------------------------------------------- */
/* Prints the canonical text form (docs/ir.md). */
void ir_print(const ir_graph *g, FILE *out);
/* Formats a shape like "[M, 4096]" into buf; returns buf. */
char *ir_shape_str(const ir_graph *g, const ir_shape *s, char *buf, size_t cap);
/* Checks every invariant; on failure writes one line per problem to err
 * (may be NULL) and returns false. */
bool ir_verify(const ir_graph *g, FILE *err);

/* ---- symbolic polynomials (cost formulas with unbound dims) ------------- */
/* A sum of terms coef * prod(sym_i ^ pow_i); used for byte and FLOP counts
 * when dims are unbound. At most IR_POLY_TERMS terms. */
#define IR_POLY_TERMS 16
#define IR_POLY_SYMS  6
typedef struct ir_poly_term {
    double coef;
    uint8_t nsym;
    uint32_t sym[IR_POLY_SYMS]; /* sorted symbol indices, repeated for powers */
} ir_poly_term;
typedef struct ir_poly {
    uint8_t nterms;
    bool overflow; /* too many terms to represent: treat as unknown */
    ir_poly_term t[IR_POLY_TERMS];
} ir_poly;
void ir_poly_const(ir_poly *p, double c);
/* p = coef * numel(shape) (symbolic dims become factors). */
void ir_poly_numel(ir_poly *p, const ir_shape *s, double coef);
void ir_poly_add(ir_poly *p, const ir_poly *q);
void ir_poly_scale(ir_poly *p, double c);
bool ir_poly_is_const(const ir_poly *p, double *value);
/* The value of p at symbol values syms[0..nsyms) (every symbol it names
 * bound to a value >= 0); false on overflow or an unbound symbol. */
bool ir_poly_eval(const ir_poly *p, const int64_t *syms, unsigned nsyms, double *value);
/* Prints like "4*M*N + 2*N" using the graph's symbol names. */
char *ir_poly_str(const ir_graph *g, const ir_poly *p, char *buf, size_t cap);

/* ---- shape rules checked at run time (ir/rules.c) ----------------------- */
/* A rule on the symbols that the frontend could check only symbolically and the compiled code
 * trusts (an out-of-range slice would read past its buffer): a >= b (a slice's stop within its
 * input's dim), a == b (reshape element counts, matrix inner dims, concatenation extents),
 * a == 1 or a == b (a broadcast operand's dim). Evaluated in double (exact below 2^53). */
typedef enum { IR_RULE_GE, IR_RULE_EQ, IR_RULE_EQ_OR_ONE } ir_rule_rel;
typedef struct ir_shape_rule {
    ir_id node;  /* the value whose shape needs it */
    uint8_t rel; /* ir_rule_rel */
    ir_poly a, b;
} ir_shape_rule;
/* The rules of g's live values (those the outputs depend on) that involve a symbolic dim, in node
 * order, into a new array (caller frees; NULL when none) of *n entries. A rule whose sides do not
 * fit an ir_poly is left out. */
ir_shape_rule *ir_shape_rules(const ir_graph *g, uint32_t *n);
/* True when r holds at syms (or names a symbol syms leaves unbound, < 0); *a and *b get the two
 * sides' values when both are bound. */
bool ir_shape_rule_holds(const ir_shape_rule *r, const int64_t *syms, unsigned nsyms, double *a,
                         double *b);
/* "ge", "eq", "eq_or_one" (the manifest's spelling). */
const char *ir_rule_rel_name(ir_rule_rel r);

/* ---- diagnostics --------------------------------------------------------- */
/* Source diagnostics: "FILE:LINE:COL: error: MSG", the line, a caret.
 * Other errors: "txc: error: MSG". Owned by the caller (no globals). */
typedef struct tx_diag {
    FILE *out;        /* where messages go (stderr) */
    const char *file; /* file name as given by the user */
    const char *src;  /* source text, for echoing the line; may be NULL */
    size_t srclen;
    unsigned errors;
    unsigned max_errors; /* stop reporting after this many (0: 1) */
} tx_diag;
void tx_diag_init(tx_diag *d, FILE *out, const char *file, const char *src, size_t srclen);
void tx_error_at(tx_diag *d, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tx_error(tx_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Overflow-checked arithmetic for sizes: false on overflow. */
bool ir_mul_ok(int64_t a, int64_t b, int64_t *r);
bool ir_add_ok(int64_t a, int64_t b, int64_t *r);

/* f16/bf16 bit patterns (binary16 and bfloat16) and wider floats, exact:
 * widening is exact; narrowing rounds once to nearest even, overflows to
 * +-inf, produces denormals exactly, keeps the sign and turns NaN into a
 * quiet NaN. The one host-side implementation (the runtime's tensors,
 * constant emission in codegen). */
float ir_f16_to_f32(uint16_t h);
uint16_t ir_f32_to_f16(float f);
float ir_bf16_to_f32(uint16_t h);
uint16_t ir_f32_to_bf16(float f);
uint16_t ir_f64_to_f16(double v);
uint16_t ir_f64_to_bf16(double v);
double ir_f16_to_f64(uint16_t h);
double ir_bf16_to_f64(uint16_t h);

/* Allocation that aborts with a message on out-of-memory (the only
 * acceptable response in a compiler of this size). */
void *ir_xmalloc(size_t n);
void *ir_xcalloc(size_t n, size_t m);
void *ir_xrealloc(void *p, size_t n);
char *ir_xstrdup(const char *s);

/* Host memory (ir/mem.c). ir_host_mem_available: the bytes this process may
 * still allocate without swapping or being killed: MemAvailable, lowered to
 * the room under its cgroup's memory limit and its RLIMIT_AS. Every buffer
 * whose size comes from the program (tensors, intermediates, reference
 * copies) is checked against it before it is allocated, so a size that does
 * not fit is one line naming the bytes, never a long stall, an OOM kill or a
 * sanitizer's allocation report. ir_host_mem_check: true when `need` bytes
 * fit (sizes below IR_HOST_MEM_UNCHECKED always do); else false with
 * "WHAT needs N bytes (X GB) of host memory; M bytes (Y GB) are available" in
 * err. ir_fmt_bytes: "12.0 GB" (decimal units) into buf, returned. */
#define IR_HOST_MEM_UNCHECKED (64.0 * 1024 * 1024)
double ir_host_mem_available(void);
bool ir_host_mem_check(double need, const char *what, char *err, size_t cap);
const char *ir_fmt_bytes(double b, char *buf, size_t cap);

#endif
