/* runtime.h - host tensors, .npy files, the reference interpreter, and the
 * CUDA driver runtime. */
#ifndef TX_RUNTIME_H
#define TX_RUNTIME_H

#include "ir/ir.h"

/* A host tensor with a concrete shape, stored at its dtype: f32 as float,
 * f16 and bf16 as uint16_t bit patterns, i32 as int32_t, bool as uint8_t
 * (0/1). C order. */
typedef struct rt_tensor {
    ir_dtype dtype;
    uint8_t rank;
    int64_t dim[IR_MAX_RANK];
    void *data; /* owned; rt_tensor_free releases it */
} rt_tensor;

int64_t rt_numel(const rt_tensor *t);
/* Allocates data for dtype/rank/dim already set; false on overflow. */
bool rt_tensor_alloc(rt_tensor *t);
void rt_tensor_free(rt_tensor *t);
/* Element i as a double, and store of a double (rounding to nearest even
 * for f16/bf16; truncation toward zero for i32; != 0 for bool). */
double rt_get(const rt_tensor *t, int64_t i);
void rt_set(rt_tensor *t, int64_t i, double v);
float rt_f16_to_f32(uint16_t h);
uint16_t rt_f32_to_f16(float f);
float rt_bf16_to_f32(uint16_t h);
uint16_t rt_f32_to_bf16(float f);

/* .npy files (spec section 3). rt_npy_read reads any supported file into
 * `t` (f32/f16/i32/bool as stored); errors are one clear line into `err`
 * (cap bytes) and return false. rt_npy_write writes atomically (temporary
 * file then rename); bf16 is written as <f4. */
bool rt_npy_read(const char *path, rt_tensor *t, char *err, size_t cap);
bool rt_npy_write(const char *path, const rt_tensor *t, char *err, size_t cap);

/* Fills t with deterministic pseudo-random values from `seed` and the
 * parameter index `param` (floats in [-1, 1), i32 in [-8, 8), bools 50/50). */
void rt_fill_random(rt_tensor *t, uint64_t seed, uint32_t param);

/* Resolves the graph's symbolic dims from the input tensors' shapes:
 * syms[i] = value of symbol i (bound ones from the graph). Reports a clear
 * error (rank, shape or dtype mismatch naming the parameter) and returns
 * false. `inputs` are in parameter order. */
bool rt_bind_shapes(const ir_graph *g, const rt_tensor *inputs, int64_t *syms, tx_diag *d);

/* The reference interpreter: runs every node of g on the CPU in double
 * precision, rounding each value to its dtype when stored (so f16/bf16
 * values are the rounded ones). `outputs` receives one tensor per returned
 * value (caller frees). False with an error reported on failure. */
bool rt_interp_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d);

#endif
