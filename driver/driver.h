/* driver.h - the driver floor: the one place that strings the floors below
 * together. It compiles (frontend, then the pass pipeline), runs a compiled
 * program on host tensors (reference interpreter, host JIT, GPU), turns
 * codegen's program into the runtime's launch plan, and runs `txc bench`.
 * It implements the public API (include/tx.h) and is what tools/ call.
 * Depends on every floor (ir, frontend, passes, codegen, runtime); nothing
 * below depends on it. Layout and dependency rule: docs/architecture.md. */
#ifndef TX_DRIVER_H
#define TX_DRIVER_H

#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

/* ---- compiling (driver/compile.c) ---------------------------------------- */
/* The compile pipeline, written once for the CLI and the C API: the frontend
 * (fe_compile with fo) turns `len` bytes of src (`file` names it in
 * messages) into a verified graph, then pc's pass pipeline plans it. *raw,
 * when asked for, receives a copy of the frontend's graph before any pass
 * (the reference interpreter runs that one, so a pass bug cannot hide behind
 * its own output). Returns the planned graph (caller frees), or NULL with
 * diagnostics in d (and *raw NULL). */
ir_graph *drv_compile(const char *file, const char *src, size_t len, const fe_options *fo,
                      pass_ctx *pc, ir_graph **raw, tx_diag *d);

/* ---- running on host tensors (driver/run.c, driver/gpu.c) ------------------ */
typedef enum { DRV_REF, DRV_CPU, DRV_GPU } drv_device;

/* Runs a compiled program on host inputs (parameter order) and fills
 * outputs (return order; caller frees each with rt_tensor_free): DRV_REF
 * interprets raw (the frontend's graph), DRV_CPU runs the planned graph g
 * through the host JIT, DRV_GPU compiles g for `target` (a GPU cg_target)
 * and runs it through the CUDA driver. False with an error reported. */
bool drv_run(const ir_graph *g, const ir_graph *raw, drv_device dev, int target,
             const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d);
/* The host JIT on host tensors: binds the sizes from the inputs
 * (rt_bind_shapes), allocates the outputs and runs cg_host_run. On failure
 * no output stays allocated. */
bool drv_host_run(const ir_graph *g, const rt_tensor *inputs, rt_tensor *outputs, tx_diag *d);
/* The GPU on host tensors: compiles g for target, loads, uploads, runs every
 * kernel once and downloads. Without a driver: "no CUDA driver found (...);
 * use --device=cpu". */
bool drv_gpu_run(const ir_graph *g, int target, const rt_tensor *inputs, rt_tensor *outputs,
                 tx_diag *d);
/* A GPU target argument of drv_run / drv_gpu_run / drv_bench_opts: the
 * device's own architecture (drv_target_for_cc of its compute capability). */
#define DRV_TARGET_DEVICE (-1)
/* The cg_target that runs best on a device of compute capability cc
 * (major*10+minor): 90 -> sm_90a (wgmma, TMA), 86 -> sm_86, 89 -> sm_89,
 * later architectures sm_90 (PTX the driver JITs forward; sm_90a code runs
 * only on sm_90), anything else sm_80 (refused at load when older). */
int drv_target_for_cc(int cc);
/* What the planner knows of cg_target t (pass_target): its compute capability and whether it is
 * sm_90a; the host target and DRV_TARGET_DEVICE (not resolved yet) give an unknown target. */
pass_target drv_pass_target(int t);

/* The runtime's launch plan of a compiled program at bound sizes syms
 * (g->nsyms entries): buffers are the inputs (parameter order), then the
 * outputs (return order), then codegen's intermediates; kernels in manifest
 * order with concrete geometry, their manifest bytes (each HBM tensor once)
 * and FLOPs (the planner's, carried by codegen's kernels). NULL with one
 * line in err. */
rt_gpu_plan *drv_gpu_plan_from_cg(const ir_graph *g, cg_program *cp, const int64_t *syms, char *err,
                                  size_t cap);
/* Binds the sizes from the inputs (into syms, g->nsyms entries), compiles
 * the planned graph g for a GPU target (a cg_target) and builds the plan.
 * NULL with an error reported. */
rt_gpu_plan *drv_gpu_plan_build(const ir_graph *g, int target, const rt_tensor *inputs,
                                int64_t *syms, tx_diag *d);

/* FLOPs of every region of the planned graph g at bound sizes syms (the
 * planner's pass_region_flops); -1 when a figure is unknown. */
double drv_graph_flops(const ir_graph *g, const int64_t *syms);

/* ---- memory before a run (driver/mem.c) ------------------------------------ */
/* What a run or bench of a graph will allocate, in bytes, at bound sizes: host memory for the
 * inputs not yet in memory, the outputs and, for bench, the reference and the copies its checks
 * keep; device memory for the inputs and outputs (its intermediates are checked when the plan is
 * built, rt_gpu_plan_fits). */
typedef struct drv_mem_opts {
    drv_device dev;
    bool bench, compare_unfused;
} drv_mem_opts;
typedef struct drv_mem_need {
    double inputs, outputs, reference, host, gpu;
} drv_mem_need;
/* Below this many bytes of inputs and outputs the GPU's free memory is not asked (it needs a
 * context); the allocation itself still reports a shortage. */
#define DRV_GPU_MEM_UNCHECKED (1024.0 * 1024 * 1024)
/* The estimate for g (the frontend's graph; syms bound, g->nsyms entries; have: inputs already
 * in memory, parameter order, data NULL for those not yet made; NULL: none). False when a size
 * is unbound or overflows. */
bool drv_mem_estimate(const ir_graph *g, const int64_t *syms, const rt_tensor *have,
                      const drv_mem_opts *o, drv_mem_need *m);
/* Checks the estimate against ir_host_mem_available() and, for DRV_GPU, the device's free memory
 * (cuMemGetInfo on cuda, or on a context opened for the question when cuda is NULL); false with
 * one line naming the bytes needed and available. */
bool drv_check_memory(const ir_graph *g, const int64_t *syms, const rt_tensor *have,
                      const drv_mem_opts *o, rt_cuda *cuda, tx_diag *d);

/* ---- txc bench (driver/bench.c) ------------------------------------------ */
typedef struct drv_bench_opts {
    long iters;       /* timed iterations (median reported) */
    double budget_s;  /* seconds of timing per plan (rt_bench_time cuts iters to it); 0: none */
    bool iters_given; /* the user chose iters (the CPU otherwise runs at most 5: each call re-JITs)
                       */
    bool json;        /* machine-readable output */
    bool compare_unfused;   /* also plan, run and time the --no-fuse graph */
    bool calibrate;         /* measure bandwidth and launch overhead, save them */
    const char *calib_path; /* calibration file (NULL: the default place) */
    const char *device;     /* "gpu" (bench on "cpu"/"ref" is a clear error or a CPU timing) */
    int target;             /* cg_target for the GPU, or DRV_TARGET_DEVICE */
    const char *svg_path;   /* --svg: the picture with the measured kernels (NULL: none) */
    double inputs_s;        /* seconds the caller spent making the inputs (for the report) */
    rt_cuda *cuda;          /* a context to run on (borrowed; NULL: bench opens its own) */
} drv_bench_opts;
/* `txc bench`: g is the planned graph, raw the frontend's graph (for the
 * reference and for re-planning unfused with pc), inputs in parameter order.
 * Verifies every output against the reference, times kernels and the graph,
 * prints the table (or JSON) to out. */
bool drv_bench(const ir_graph *g, const ir_graph *raw, pass_ctx *pc, const rt_tensor *inputs,
               const drv_bench_opts *o, FILE *out, tx_diag *d);
/* The f32 additions behind output k of planned graph g that bench verifies it for
 * (rt_tolerance_sum): the terms of an f32 sum or mean (through reshapes; a split sum(sum(x, T), A)
 * adds |T| x |A|), else the K of the matrix product whose region computes it; 0: none known. */
int64_t drv_out_terms(const ir_graph *g, uint32_t k);
/* ---- the tuning cache and txc tune (driver/tune.c; docs/runtime.md "Tuning cache") ------ */
/* $TX_CACHE_DIR/tune.json, TX_CACHE_DIR defaulting to ~/.cache/tx; false when neither
 * TX_CACHE_DIR nor HOME is set. */
bool drv_tune_default_path(char *buf, size_t cap);
/* Parses a cache's text into t (caller drv_tune_free's); false with one line in err (t empty). */
bool drv_tune_parse(const char *text, size_t len, pass_tune *t, char *err, size_t cap);
/* Loads the cache at path into t: empty when no file is there; false with one line in err when
 * one is there but is not a readable regular file or not a valid cache. */
bool drv_tune_load(const char *path, pass_tune *t, char *err, size_t cap);
/* Writes t to path atomically (a temporary renamed into place, runtime/file.c; a symbolic
 * link is followed); a directory, FIFO or device there is refused. False with one line. */
bool drv_tune_save(const char *path, const pass_tune *t, char *err, size_t cap);
/* Adds e, replacing the entry of the same key, GPU, device and driver. */
void drv_tune_put(pass_tune *t, const pass_tune_entry *e);
void drv_tune_free(pass_tune *t);
/* The cache a compile follows (path NULL: the default): NULL when there is none, it is empty,
 * or it cannot be read (then one "WHO: warning: ..." line on warn, when not NULL). Close with
 * drv_tune_close. */
pass_tune *drv_tune_open(const char *path, const char *who, FILE *warn);
void drv_tune_close(pass_tune *t);

typedef struct drv_tune_opts {
    const char *cache_path; /* --tune-cache (NULL: the default) */
    int target;             /* cg_target, or DRV_TARGET_DEVICE */
    long iters;             /* timed iterations per candidate (<= 0: 20) */
    unsigned candidates;    /* schedules timed per kernel, the model's choice included (0: 4) */
} drv_tune_opts;
/* `txc tune`: times the planned schedule and the model's next best of every kernel of g with a
 * schedule space (pass_schedule_candidates) on the GPU, in rounds (round i runs every kernel's
 * i-th candidate, outputs checked against round 0's), keeps the fastest of each in the cache
 * and prints what it measured. Without a usable GPU: false with one line. */
bool drv_tune(const ir_graph *g, const ir_graph *raw, pass_ctx *pc, const rt_tensor *inputs,
              const drv_tune_opts *o, FILE *out, tx_diag *d);
/* True when a tuning candidate's outputs got agree with the model's plan's ref (n outputs of
 * planned graph g): each within its dtype's tolerance, or, for an f32 sum of T terms
 * (drv_out_terms), within twice the scaled bound of rt_tolerance_sum (4 sqrt(T) f32 ulps of the
 * largest |ref| each): both are sums of the same terms in other orders, each that close to the
 * exact sum. False when shapes or dtypes differ. */
bool drv_tune_outputs_agree(const ir_graph *g, const rt_tensor *got, const rt_tensor *ref,
                            uint32_t n);

/* Sets the cost model's hbm_GBps and launch_us from a calibration. */
void drv_calib_apply(const rt_calib *cal, pass_gpu *gpu);

#endif
