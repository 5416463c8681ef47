/* test_cuda.c - the GPU runtime without a GPU: the driver loader's errors,
 * PTX compatibility checks, plan and input checks, the bench statistics,
 * tolerances and comparison, poison counting, the calibration file and the
 * report printers; then, on tests/fake_cuda (a libcuda stand-in on host
 * memory that runs no kernels), memory, modules, launches, events, the plan
 * executor and drv_bench end to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/driver.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }
static bool ends_with(const char *s, const char *p) {
    size_t n = strlen(s), k = strlen(p);
    return n >= k && strcmp(s + n - k, p) == 0;
}

/* ---- the loader ------------------------------------------------------------ */

static void test_missing_driver_message(void **st) {
    char err[512] = "";
    rt_cuda *c = rt_cuda_new_lib("libtx-no-such-driver.so.1", 0, err, sizeof err);
    (void)st;
    assert_null(c);
    assert_true(starts_with(err, "no CUDA driver found (libtx-no-such-driver.so.1: "));
    assert_true(ends_with(err, "); use --device=cpu"));
    assert_null(strchr(err, '\n'));
}

/* The real loader: on CI (no driver) the exact one-line message; on a GPU
 * machine it opens and reports a named device. */
static void test_default_loader(void **st) {
    char err[512] = "";
    rt_cuda *c = rt_cuda_new(err, sizeof err);
    (void)st;
    if (!c) {
        assert_true(ends_with(err, "; use --device=cpu"));
        assert_null(strchr(err, '\n'));
        if (access("/usr/lib/x86_64-linux-gnu/libcuda.so.1", F_OK) != 0 &&
            access("/usr/lib64/libcuda.so.1", F_OK) != 0)
            assert_true(starts_with(err, "no CUDA driver found (libcuda.so.1: "));
        return;
    }
    assert_true(rt_cuda_get_info(c)->name[0] != 0);
    assert_true(rt_cuda_get_info(c)->cc >= 50);
    rt_cuda_free(c);
}

static void test_not_a_driver(void **st) {
    char err[512] = "";
    (void)st;
    assert_null(rt_cuda_new_lib("libm.so.6", 0, err, sizeof err));
    assert_string_equal(
        err, "libm.so.6 is not a usable CUDA driver (symbol cuInit missing); use --device=cpu");
}

/* The toolkit's stub libcuda has every symbol but fails cuInit: the error
 * names the call and what was being done. Skipped where no stub exists. */
static void test_stub_driver(void **st) {
    const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    char err[512] = "";
    (void)st;
    if (access(stub, R_OK) != 0) skip();
    assert_null(rt_cuda_new_lib(stub, 0, err, sizeof err));
    assert_true(starts_with(
        err, "cuInit failed while initialising the CUDA driver: CUDA_ERROR_STUB_LIBRARY"));
    assert_true(ends_with(err, "; use --device=cpu"));
}

/* ---- PTX compatibility ------------------------------------------------- */

static const char ptx80[] = "//\n// Generated\n.version 8.0\n.target sm_90\n.address_size 64\n";

static void test_ptx_parse(void **st) {
    (void)st;
    assert_int_equal(rt_ptx_isa(ptx80), 80);
    assert_int_equal(rt_ptx_sm(ptx80), 90);
    assert_int_equal(rt_ptx_sm(".version 8.5\n  .target sm_90a\n"), 90);
    assert_int_equal(rt_ptx_isa(".version 8.5\n"), 85);
    assert_int_equal(rt_ptx_isa("// .version 8.0 in a comment\n"), -1);
    assert_int_equal(rt_ptx_isa(""), -1);
    assert_int_equal(rt_ptx_sm(".target compute_90\n"), -1);
    assert_int_equal(rt_ptx_isa_min_driver(80), 12000);
    assert_int_equal(rt_ptx_isa_min_driver(78), 11080);
    assert_int_equal(rt_ptx_isa_min_driver(90), 13000);
    assert_int_equal(rt_ptx_isa_min_driver(79), -1);
}

static void test_ptx_check(void **st) {
    char err[256] = "";
    (void)st;
    assert_true(rt_ptx_check(ptx80, 13000, 90, err, sizeof err));
    assert_true(rt_ptx_check(ptx80, 12000, 100, err, sizeof err));
    assert_false(rt_ptx_check(ptx80, 11080, 90, err, sizeof err));
    assert_string_equal(
        err,
        "the generated PTX uses ISA 8.0, which needs a CUDA 12.0 driver; this driver is CUDA 11.8");
    assert_false(rt_ptx_check(ptx80, 13000, 80, err, sizeof err));
    assert_string_equal(err,
                        "the PTX targets sm_90 but the GPU is sm_80; compile with --target=sm_80");
    assert_false(rt_ptx_check("garbage", 13000, 90, err, sizeof err));
    assert_string_equal(err, "the generated PTX has no valid .version/.target line");
}

/* ---- plans and inputs -------------------------------------------------- */

/* A plan z = f(x, y) with x, y, z f32[4, 3] and one kernel. */
static rt_gpu_plan *small_plan(void) {
    rt_gpu_plan *p = rt_gpu_plan_new();
    rt_buf_desc b = {0};
    rt_kparam kp[3] = {{.kind = RT_KP_BUF, .buf = 0},
                       {.kind = RT_KP_BUF, .buf = 1},
                       {.kind = RT_KP_BUF, .buf = 2}};
    rt_kernel_desc k = {0};
    p->ptx = strdup(ptx80);
    b.dtype = IR_F32;
    b.rank = 2;
    b.dim[0] = 4;
    b.dim[1] = 3;
    for (unsigned i = 0; i < 3; i++) {
        b.role = i < 2 ? RT_BUF_INPUT : RT_BUF_OUTPUT;
        b.index = i < 2 ? i : 0;
        snprintf(b.name, sizeof b.name, "%s", i == 0 ? "x" : i == 1 ? "y" : "z");
        assert_int_equal(rt_gpu_plan_add_buf(p, &b), i);
    }
    snprintf(k.name, sizeof k.name, "k0");
    k.params = kp;
    k.nparams = 3;
    k.grid[0] = k.grid[1] = k.grid[2] = 1;
    k.block[0] = 128;
    k.block[1] = k.block[2] = 1;
    rt_gpu_plan_add_kernel(p, &k);
    return p;
}

static void test_plan_check(void **st) {
    char err[256] = "";
    rt_gpu_plan *p = small_plan();
    (void)st;
    assert_int_equal(p->ninputs, 2);
    assert_int_equal(p->noutputs, 1);
    assert_int_equal(rt_buf_bytes(&p->bufs[0]), 48);
    assert_true(rt_gpu_plan_check(p, err, sizeof err));
    p->kernels[0].params[1].buf = 7;
    assert_false(rt_gpu_plan_check(p, err, sizeof err));
    assert_string_equal(err, "GPU plan kernel k0: parameter 1 is invalid");
    p->kernels[0].params[1].buf = 1;
    p->bufs[1].index = 0; /* two inputs numbered 0 */
    assert_false(rt_gpu_plan_check(p, err, sizeof err));
    assert_string_equal(err, "GPU plan numbers its inputs or outputs inconsistently");
    p->bufs[1].index = 1;
    p->kernels[0].block[0] = 0;
    assert_false(rt_gpu_plan_check(p, err, sizeof err));
    p->kernels[0].block[0] = 128;
    free(p->ptx);
    p->ptx = NULL;
    assert_false(rt_gpu_plan_check(p, err, sizeof err));
    assert_string_equal(err, "GPU plan has no PTX");
    rt_gpu_plan_free(p);
}

static void test_input_checks(void **st) {
    char err[256] = "";
    rt_gpu_plan *p = small_plan();
    rt_tensor in[2];
    (void)st;
    memset(in, 0, sizeof in);
    for (int i = 0; i < 2; i++) {
        in[i].dtype = IR_F32;
        in[i].rank = 2;
        in[i].dim[0] = 4;
        in[i].dim[1] = 3;
    }
    assert_true(rt_gpu_check_inputs(p, in, 2, err, sizeof err));
    assert_false(rt_gpu_check_inputs(p, in, 1, err, sizeof err));
    assert_string_equal(err, "the program takes 2 inputs, 1 were given");
    in[1].dtype = IR_F16;
    assert_false(rt_gpu_check_inputs(p, in, 2, err, sizeof err));
    assert_string_equal(err, "input 1 (y): expected f32[4, 3], got f16[4, 3]");
    in[1].dtype = IR_F32;
    in[0].dim[1] = 5;
    assert_false(rt_gpu_check_inputs(p, in, 2, err, sizeof err));
    assert_string_equal(err, "input 0 (x): expected f32[4, 3], got f32[4, 5]");
    in[0].dim[1] = 3;
    in[0].rank = 1;
    assert_false(rt_gpu_check_inputs(p, in, 2, err, sizeof err));
    assert_string_equal(err, "input 0 (x): expected f32[4, 3], got f32[4]");
    rt_gpu_plan_free(p);
}

/* ---- statistics -------------------------------------------------------- */

static void test_median_and_rates(void **st) {
    double a[] = {5, 1, 4, 2, 3}, b[] = {10, 2, 8, 4}, c[] = {7};
    (void)st;
    assert_true(rt_median(a, 5) == 3);
    assert_true(rt_median(b, 4) == 6);
    assert_true(rt_median(c, 1) == 7);
    assert_true(rt_median(c, 0) == 0);
    assert_true(fabs(rt_gbps(3e9, 1000) - 3000) < 1e-9); /* 3 GB in 1 ms */
    assert_true(rt_gbps(1e9, 0) == 0);
    assert_true(fabs(rt_tflops(2e12, 1000) - 2000) < 1e-9); /* 2 TFLOP in 1 ms */
    assert_true(fabs(rt_pred_error_pct(100, 110) - 10) < 1e-9);
    assert_true(fabs(rt_pred_error_pct(200, 150) + 25) < 1e-9);
    assert_true(rt_pred_error_pct(100, -1) == 0);
}

/* The timing budget: a 32 ms graph of 10 kernels at 1 s gets 12 runs (2 x 32 ms + 11 flushes per
 * run, less 3 warm-ups); a 2.5 ms one keeps its 50; never below RT_BENCH_MIN_ITERS unless fewer
 * were asked; no budget, no cut. */
static void test_timing_budget(void **st) {
    (void)st;
    assert_int_equal(rt_bench_budget_iters(50, 1.0, 32000, 10), 12);
    assert_int_equal(rt_bench_budget_iters(50, 1.0, 2500, 1), 50);
    assert_int_equal(rt_bench_budget_iters(50, 1.0, 1e6, 3), RT_BENCH_MIN_ITERS);
    assert_int_equal(rt_bench_budget_iters(5, 1.0, 1e6, 3), 5);
    assert_int_equal(rt_bench_budget_iters(50, 0, 1e6, 3), 50);
    assert_int_equal(rt_bench_budget_iters(50, 10.0, 32000, 10), 50);
}

static void test_pick_reference(void **st) {
    (void)st;
    assert_string_equal(rt_bench_pick_reference(1 << 20, 1e6), "ref");
    assert_string_equal(rt_bench_pick_reference(3.0 * (1 << 28), 3.0 * (1 << 28)), "cpu");
    assert_string_equal(rt_bench_pick_reference(1 << 20, 1e9), "cpu");
    assert_null(rt_bench_pick_reference(3.0 * 8192 * 8192, 2.0 * 8192.0 * 8192 * 8192));
}

/* ---- tolerances and comparison ------------------------------------------ */

static rt_tensor vec(ir_dtype t, int64_t n) {
    rt_tensor x;
    memset(&x, 0, sizeof x);
    x.dtype = t;
    x.rank = 1;
    x.dim[0] = n;
    assert_true(rt_tensor_alloc(&x));
    return x;
}

static void test_tolerances(void **st) {
    (void)st;
    assert_true(rt_tolerance(IR_F32).rtol == 1e-4 && rt_tolerance(IR_F32).atol == 1e-5);
    assert_true(rt_tolerance(IR_BF16).rtol > rt_tolerance(IR_F16).rtol);
    assert_true(rt_tolerance(IR_I32).rtol == 0 && rt_tolerance(IR_BOOL).atol == 0);
}

static void test_compare_f32(void **st) {
    rt_tensor a = vec(IR_F32, 6), b = vec(IR_F32, 6);
    rt_cmp c;
    char err[128];
    (void)st;
    for (int i = 0; i < 6; i++) {
        rt_set(&a, i, i * 0.5 - 1);
        rt_set(&b, i, i * 0.5 - 1);
    }
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 0);
    assert_int_equal(c.n, 6);
    assert_int_equal(c.first_bad, -1);
    rt_set(&a, 3, rt_get(&b, 3) * (1 + 5e-5)); /* within rtol 1e-4 */
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 0);
    assert_true(c.max_rel > 4e-5 && c.max_rel < 6e-5);
    rt_set(&a, 4, 1.01);
    rt_set(&a, 5, NAN);
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 2);
    assert_int_equal(c.first_bad, 4);
    assert_true(c.got == (double)1.01f && c.want == 1.0);
    rt_set(&a, 4, 1.0);
    rt_set(&b, 5, NAN); /* NaN matches NaN */
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 0);
    rt_set(&a, 5, INFINITY);
    rt_set(&b, 5, INFINITY);
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 0);
    rt_set(&b, 5, -INFINITY);
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad, 1);
    rt_tensor_free(&a);
    rt_tensor_free(&b);
}

static void test_compare_low_precision_and_ints(void **st) {
    rt_tensor a = vec(IR_BF16, 2), b = vec(IR_BF16, 2), i = vec(IR_I32, 2), j = vec(IR_I32, 2);
    rt_cmp c;
    char err[128];
    (void)st;
    rt_set(&a, 0, 1.0);
    rt_set(&b, 0, 1.0078125); /* one bf16 ulp above 1 */
    rt_set(&a, 1, 100.0);
    rt_set(&b, 1, 101.0); /* one ulp at 100 */
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_BF16), &c, err, sizeof err));
    assert_int_equal(c.bad, 0);
    rt_set(&b, 1, 104.0); /* 4 ulp */
    assert_true(rt_compare(&a, &b, rt_tolerance(IR_BF16), &c, err, sizeof err));
    assert_int_equal(c.bad, 1);
    rt_set(&i, 0, 7);
    rt_set(&j, 0, 7);
    rt_set(&i, 1, -3);
    rt_set(&j, 1, -2);
    assert_true(rt_compare(&i, &j, rt_tolerance(IR_I32), &c, err, sizeof err));
    assert_int_equal(c.bad, 1);
    assert_int_equal(c.first_bad, 1);
    rt_tensor_free(&a);
    rt_tensor_free(&b);
    rt_tensor_free(&i);
    rt_tensor_free(&j);
}

static void test_compare_mismatch(void **st) {
    rt_tensor a = vec(IR_F32, 3), b = vec(IR_F32, 4), h = vec(IR_F16, 3);
    rt_cmp c;
    char err[128];
    (void)st;
    assert_false(rt_compare(&a, &b, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_string_equal(err, "output dim 0 is 3, the reference's is 4");
    assert_int_equal(c.bad, -1);
    assert_false(rt_compare(&a, &h, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_string_equal(err, "output has f32 rank 1, the reference f16 rank 1");
    rt_tensor_free(&a);
    rt_tensor_free(&b);
    rt_tensor_free(&h);
}

/* The scaled verdict: rounding-sized errors on small outputs pass once the tolerance is widened
 * by 4 ulp of the largest |want|; an error of that output's own size does not. */
static void test_compare_scaled(void **st) {
    rt_tensor got = vec(IR_BF16, 3), ref = vec(IR_BF16, 3), f = vec(IR_F32, 2), fr = vec(IR_F32, 2);
    rt_cmp c;
    char err[128];
    (void)st;
    rt_set(&ref, 0, 1000), rt_set(&ref, 1, 0.5), rt_set(&ref, 2, -2);
    rt_set(&got, 0, 1000), rt_set(&got, 1, 0.875), rt_set(&got, 2, -2);
    assert_true(rt_compare(&got, &ref, rt_tolerance(IR_BF16), &c, err, sizeof err));
    assert_int_equal(c.bad, 1);
    assert_int_equal(c.bad_scaled, 0);
    assert_true(c.ref_absmax == 1000);
    rt_set(&got, 2, 40); /* 42 off: beyond 0.01 + 0.0156 * 1000 */
    assert_true(rt_compare(&got, &ref, rt_tolerance(IR_BF16), &c, err, sizeof err));
    assert_int_equal(c.bad, 2);
    assert_int_equal(c.bad_scaled, 1);
    rt_set(&fr, 0, 1000), rt_set(&fr, 1, 0.5); /* f32 has no scaled widening */
    rt_set(&f, 0, 1000), rt_set(&f, 1, 0.501);
    assert_true(rt_compare(&f, &fr, rt_tolerance(IR_F32), &c, err, sizeof err));
    assert_int_equal(c.bad_scaled, 1);
    rt_tensor_free(&got);
    rt_tensor_free(&ref);
    rt_tensor_free(&f);
    rt_tensor_free(&fr);
}

/* An f32 sum of 32768 zero-mean terms of size ~1 (multi_axis_reduce's): a near-zero sum 2.6e-5
 * off, a rounding difference of another addition order, passes the scaled verdict (4 ulp x
 * sqrt(32768) of the largest |sum|, 300); an error of a tenth of one term does not, nor does the
 * 2.6e-5 without the terms. */
static void test_compare_sum_terms(void **st) {
    rt_tensor got = vec(IR_F32, 3), ref = vec(IR_F32, 3);
    rt_cmp c;
    char err[128];
    (void)st;
    rt_set(&ref, 0, 300), rt_set(&ref, 1, 0.137), rt_set(&ref, 2, -150);
    rt_set(&got, 0, 300), rt_set(&got, 1, 0.137 + 2.6e-5), rt_set(&got, 2, -150);
    assert_true(rt_compare(&got, &ref, rt_tolerance_sum(IR_F32, 32768), &c, err, sizeof err));
    assert_int_equal(c.bad, 1);
    assert_int_equal(c.bad_scaled, 0);
    assert_true(rt_compare(&got, &ref, rt_tolerance_sum(IR_F32, 1), &c, err, sizeof err));
    assert_int_equal(c.bad_scaled, 1);
    rt_set(&got, 1, 0.137 + 0.1);
    assert_true(rt_compare(&got, &ref, rt_tolerance_sum(IR_F32, 32768), &c, err, sizeof err));
    assert_int_equal(c.bad_scaled, 1);
    rt_tensor_free(&got);
    rt_tensor_free(&ref);
}

/* The three verdicts of rt_bench_check_output: strict, plan precision, scaled; and a failure. */
static void test_check_output_verdicts(void **st) {
    rt_tensor got = vec(IR_BF16, 3), ref = vec(IR_BF16, 3), pref = vec(IR_BF16, 3);
    rt_out_check oc;
    char err[128];
    (void)st;
    for (int i = 0; i < 3; i++)
        rt_set(&got, i, 100.0 * i + 1), rt_set(&ref, i, 100.0 * i + 1),
            rt_set(&pref, i, 100.0 * i + 1);
    memset(&oc, 0, sizeof oc);
    assert_true(rt_bench_check_output(&got, &ref, &pref, &oc, err, sizeof err));
    assert_int_equal(oc.how, RT_VERIFY_STRICT);
    assert_true(rt_bench_output_ok(&oc));
    rt_set(&ref, 0, 1.5); /* only the per-op reference differs: plan precision */
    memset(&oc, 0, sizeof oc);
    assert_true(rt_bench_check_output(&got, &ref, &pref, &oc, err, sizeof err));
    assert_int_equal(oc.how, RT_VERIFY_PLAN);
    assert_int_equal(oc.strict.bad, 1);
    assert_true(rt_bench_output_ok(&oc));
    rt_set(&pref, 0, 1.5); /* both differ by 0.5 near zero, within 4 ulp of max |want| = 201 */
    memset(&oc, 0, sizeof oc);
    assert_true(rt_bench_check_output(&got, &ref, &pref, &oc, err, sizeof err));
    assert_int_equal(oc.how, RT_VERIFY_SCALED);
    assert_true(rt_bench_output_ok(&oc));
    rt_set(&got, 0, 9); /* 7.5 off: beyond 0.01 + 0.0156 * 201 */
    memset(&oc, 0, sizeof oc);
    assert_true(rt_bench_check_output(&got, &ref, &pref, &oc, err, sizeof err));
    assert_false(rt_bench_output_ok(&oc));
    memset(&oc, 0, sizeof oc); /* no plan reference: the scaled verdict still applies to ref */
    rt_set(&got, 0, 1.75);
    assert_true(rt_bench_check_output(&got, &ref, NULL, &oc, err, sizeof err));
    assert_int_equal(oc.how, RT_VERIFY_SCALED);
    rt_tensor_free(&got);
    rt_tensor_free(&ref);
    rt_tensor_free(&pref);
}

static void test_poison(void **st) {
    rt_tensor f = vec(IR_F32, 4), h = vec(IR_BF16, 3), i = vec(IR_I32, 2), b = vec(IR_BOOL, 5);
    (void)st;
    memset(f.data, 0xFF, 16);
    rt_set(&f, 2, 1.5);
    assert_int_equal(rt_count_poison(&f), 3);
    memset(h.data, 0, 6);
    assert_int_equal(rt_count_poison(&h), 0);
    memset(h.data, 0xFF, 2);
    assert_int_equal(rt_count_poison(&h), 1);
    memset(i.data, 0xFF, 8);
    assert_int_equal(rt_count_poison(&i), 0); /* -1 is a valid i32 */
    memset(b.data, 0xFF, 5);
    ((uint8_t *)b.data)[0] = 1;
    assert_int_equal(rt_count_poison(&b), 4);
    rt_tensor_free(&f);
    rt_tensor_free(&h);
    rt_tensor_free(&i);
    rt_tensor_free(&b);
}

/* ---- calibration ----------------------------------------------------------- */

static void test_slug(void **st) {
    char s[64];
    (void)st;
    rt_gpu_slug("NVIDIA H200", s, sizeof s);
    assert_string_equal(s, "h200");
    rt_gpu_slug("NVIDIA H100 80GB HBM3", s, sizeof s);
    assert_string_equal(s, "h100");
    rt_gpu_slug("NVIDIA GeForce RTX 4090", s, sizeof s);
    assert_string_equal(s, "rtx4090");
    rt_gpu_slug("NVIDIA A100-SXM4-80GB", s, sizeof s);
    assert_string_equal(s, "a100");
    rt_gpu_slug("NVIDIA L4", s, sizeof s);
    assert_string_equal(s, "l4");
    rt_gpu_slug("h200", s, sizeof s);
    assert_string_equal(s, "h200");
    rt_gpu_slug("", s, sizeof s);
    assert_string_equal(s, "gpu");
}

static void test_calib_roundtrip(void **st) {
    char dir[] = "/tmp/tx-calib-XXXXXX", path[256], err[512], def[512];
    rt_calib a, b;
    pass_gpu g;
    FILE *f;
    (void)st;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sub/calib.json", dir);
    memset(&a, 0, sizeof a);
    snprintf(a.gpu, sizeof a.gpu, "NVIDIA \"H200\"");
    snprintf(a.slug, sizeof a.slug, "h200");
    a.cc = 90;
    a.sms = 132;
    a.l2_bytes = 52428800;
    a.copy_GBps = 4273.3;
    a.launch_us = 2.125;
    a.driver = 13000;
    assert_true(rt_calib_save(path, &a, err, sizeof err));
    assert_true(rt_calib_load(path, &b, err, sizeof err));
    assert_string_equal(b.gpu, a.gpu);
    assert_string_equal(b.slug, "h200");
    assert_int_equal(b.cc, 90);
    assert_int_equal(b.sms, 132);
    assert_int_equal(b.l2_bytes, 52428800);
    assert_int_equal(b.driver, 13000);
    assert_true(fabs(b.copy_GBps - 4273.3) < 1e-9 && fabs(b.launch_us - 2.125) < 1e-9);
    memset(&g, 0, sizeof g);
    drv_calib_apply(&b, &g);
    assert_true(g.hbm_GBps == b.copy_GBps && g.launch_us == b.launch_us);
    f = fopen(path, "w");
    fputs("{\"gpu\": \"x\", \"launch_us\": 2}", f);
    fclose(f);
    assert_false(rt_calib_load(path, &b, err, sizeof err));
    assert_true(strstr(err, "lacks positive \"copy_GBps\" and \"launch_us\"") != NULL);
    remove(path);
    assert_false(rt_calib_load(path, &b, err, sizeof err));
    assert_true(starts_with(err, "cannot read calibration file "));
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    assert_true(rt_calib_default_path("NVIDIA H200", def, sizeof def));
    assert_string_equal(def, "/tmp/xdg/tx/calib-h200.json");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    assert_true(rt_calib_default_path("h100", def, sizeof def));
    assert_string_equal(def, "/home/u/.cache/tx/calib-h100.json");
}

/* ---- printers ------------------------------------------------------------ */

/* A two-kernel result: k0 0..30 us, k1 30..40 us. */
static void fake_result(rt_bench_result *r, rt_bench_report *rep) {
    memset(r, 0, sizeof *r);
    memset(rep, 0, sizeof *rep);
    snprintf(rep->program, sizeof rep->program, "demo");
    snprintf(rep->device, sizeof rep->device, "Fake GPU");
    snprintf(rep->reference, sizeof rep->reference, "ref");
    rep->copy_GBps = 1000;
    snprintf(r->label, sizeof r->label, "fused");
    r->nkernels = 2;
    r->k = calloc(2, sizeof *r->k);
    snprintf(r->k[0].name, sizeof r->k[0].name, "k0_pointwise");
    snprintf(r->k[1].name, sizeof r->k[1].name, "k1_reduction");
    r->k[0].us = 30;
    r->k[0].end_us = 30;
    r->k[0].bytes = 15e6; /* 500 GB/s: 50% of copy */
    r->k[0].predicted_us = 33;
    r->k[1].region = 1;
    r->k[1].start_us = 30;
    r->k[1].end_us = 40;
    r->k[1].us = 10;
    r->k[1].flops = 1e9;
    r->k[1].predicted_us = -1;
    r->graph_us = 40;
    r->predicted_us = -1;
    r->bytes = 15e6;
    r->flops = 1e9;
    r->iters = 20;
    r->verified = true;
}

static char *print_to_string(void (*fn)(FILE *, const rt_bench_report *, const rt_bench_result *),
                             const rt_bench_report *rep, const rt_bench_result *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, rep, r);
    fclose(f);
    return buf;
}

static void test_text_report(void **st) {
    rt_bench_result r;
    rt_bench_report rep;
    char *s;
    (void)st;
    fake_result(&r, &rep);
    s = print_to_string(rt_bench_print_text, &rep, &r);
    assert_non_null(strstr(s, "fused: verified, reference ref"));
    assert_non_null(strstr(s, "k0_pointwise"));
    assert_non_null(strstr(s, "500.0  50.0%"));   /* GB/s and % of copy */
    assert_non_null(strstr(s, "33.00   +10.0%")); /* predicted, error */
    assert_non_null(strstr(s, "100.00"));         /* k1: 1 GFLOP in 10 us */
    /* timeline in the planner's form: k0 fills 3/4 of 40 columns, k1 the rest */
    assert_non_null(
        strstr(s, "  kernel kind           start_us       end_us       dur_us     gap_us  bar\n"));
    assert_non_null(strstr(s, "       0.000       30.000       30.000      0.000  "
                              "|##############################          |"));
    assert_non_null(strstr(s, "      30.000       40.000       10.000      0.000  |                "
                              "              ##########|"));
    free(s);
    rt_bench_result_free(&r);
}

static void test_json_report(void **st) {
    rt_bench_result r, u;
    rt_bench_report rep;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)st;
    fake_result(&r, &rep);
    fake_result(&u, &rep);
    u.graph_us = 100;
    snprintf(u.label, sizeof u.label, "unfused");
    /* a zero reference that got a non-zero value: relative error inf, which
     * JSON cannot spell (the layernorm row lost on the H200 run) */
    r.nout = 1;
    r.out = calloc(1, sizeof *r.out);
    assert_non_null(r.out);
    r.out[0].dtype = IR_BF16;
    r.out[0].checked = true;
    r.out[0].cmp.max_abs = 0.25;
    r.out[0].cmp.max_rel = INFINITY;
    snprintf(r.sample_note, sizeof r.sample_note,
             "the host program has 5 buffers, the device's plan \"6\"");
    f = open_memstream(&buf, &len);
    rt_bench_print_json(f, &rep, &r, &u);
    fclose(f);
    assert_non_null(strstr(buf, "\"program\": \"demo\""));
    assert_non_null(strstr(buf, "\"speedup\": 2.500"));
    assert_non_null(strstr(buf, "\"graph_us\": 40,"));
    assert_non_null(strstr(buf, "\"predicted_us\": null"));
    assert_non_null(strstr(buf, "\"name\": \"k1_reduction\""));
    assert_non_null(strstr(
        buf, "\"sample_note\": \"the host program has 5 buffers, the device's plan \\\"6\\\"\""));
    assert_non_null(strstr(buf, "\"sample_note\": null")); /* the unfused result has none */
    assert_null(strstr(buf, "inf"));
    assert_null(strstr(buf, "nan"));
    assert_non_null(strstr(
        buf, "\"max_abs\": 0.25, \"max_rel\": null, \"sampled\": 0, \"verified_by\": \"strict\""));
    free(buf);
    rt_bench_result_free(&r);
    rt_bench_result_free(&u);
}

/* ---- the runtime on the fake driver (tests/fake_cuda) ---------------------
 * Everything but kernel execution: memory, modules, launches' checks,
 * events, the plan executor and the whole of `txc bench`. */

/* Path of libtx_fake_cuda.so from TX_FAKE_CUDA (CTest sets it to the built
 * library); false (the test skips) when the variable is unset; a path that
 * cannot be read fails the test rather than skipping it. */
static bool fake_path(char *buf, size_t cap) {
    const char *lib = getenv("TX_FAKE_CUDA");
    if (!lib || !*lib) return false;
    snprintf(buf, cap, "%s", lib);
    if (access(buf, R_OK) != 0) fail_msg("TX_FAKE_CUDA=%s cannot be read", buf);
    return true;
}

static rt_cuda *fake_open(void) {
    char path[1024], err[512];
    rt_cuda *c;
    if (!fake_path(path, sizeof path)) skip();
    setenv("FAKE_CUDA_TOTAL_MEM", "67108864", 1); /* 64 MiB: small bandwidth tests */
    c = rt_cuda_new_lib(path, 0, err, sizeof err);
    if (!c) fail_msg("fake driver: %s", err);
    return c;
}

static const char ptx_k0[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".visible .entry k0(\n\t.param .u64 a,\n\t.param .u64 b,\n\t.param .u64 c\n)\n{\n\tret;\n}\n";

/* 11264 bytes of static shared memory, as the mma.sync attention kernel declares */
static const char ptx_k1[] = ".version 8.0\n.target sm_90\n.address_size 64\n\n"
                             ".extern .shared .align 16 .b8 tx_mm_dyn_smem[];\n"
                             ".visible .entry k1(\n\t.param .u64 a\n)\n{\n\t.shared .align 16 .b8 "
                             "tx_smem_0[11264];\n\tret;\n}\n";

/* Static plus dynamic shared memory above 48 KiB launches once rt_cuda_func_smem allowed
 * the dynamic part, though that part alone is below 48 KiB. */
static void test_fake_static_smem(void **st) {
    rt_cuda *c = fake_open();
    rt_module *m = rt_module_load(c, ptx_k1);
    rt_func f;
    uint32_t one[3] = {1, 1, 1};
    uint64_t v = 1;
    void *args[1] = {&v};
    (void)st;
    assert_non_null(m);
    assert_true(rt_module_func(m, "k1", &f));
    assert_true(rt_cuda_launch(c, f, "k1", one, one, 32768, args));  /* 44 KiB in all */
    assert_false(rt_cuda_launch(c, f, "k1", one, one, 45056, args)); /* 55 KiB: not yet */
    assert_true(rt_cuda_func_smem(c, f, "k1", 45056));
    assert_true(rt_cuda_launch(c, f, "k1", one, one, 45056, args));
    rt_module_free(m);
    rt_cuda_free(c);
}

static void test_fake_device(void **st) {
    rt_cuda *c = fake_open();
    const rt_cuda_info *in = rt_cuda_get_info(c);
    (void)st;
    assert_string_equal(in->name, "Fake GPU");
    assert_int_equal(in->cc, 90);
    assert_int_equal(in->sms, 132);
    assert_int_equal(in->driver_version, 13000);
    assert_int_equal(in->smem_per_block, 48 * 1024);
    assert_int_equal(in->smem_optin, 232448);
    assert_int_equal(in->l2_bytes, 4 << 20);
    assert_int_equal(in->total_mem, 64 << 20);
    assert_string_equal(rt_cuda_error(c), "");
    rt_cuda_free(c);
}

static void test_fake_memory(void **st) {
    rt_cuda *c = fake_open();
    rt_devptr a, b;
    float x[5] = {1, 2, 3, 4, 5}, y[5];
    (void)st;
    assert_true(rt_cuda_alloc(c, sizeof x, "input x", &a));
    assert_true(rt_cuda_alloc(c, sizeof x, "output y", &b));
    assert_true(rt_cuda_upload(c, a, x, sizeof x, "input x"));
    assert_true(rt_cuda_copy(c, b, a, sizeof x, "x to y"));
    assert_true(rt_cuda_memset8(c, b, 0, 4, "y"));
    assert_true(rt_cuda_download(c, y, b, sizeof y, "output y"));
    assert_true(y[0] == 0 && y[1] == 2 && y[4] == 5);
    assert_true(rt_cuda_sync(c, "nothing"));
    rt_cuda_release(c, a);
    rt_cuda_release(c, b);
    setenv("FAKE_CUDA_MEM_BYTES", "1048576", 1);
    assert_false(rt_cuda_alloc(c, 2 << 20, "input x", &a));
    assert_int_equal(a, 0);
    assert_string_equal(
        rt_cuda_error(c),
        "out of GPU memory allocating 2.0 MiB for input x (1.0 MiB free of 64.0 MiB "
        "on Fake GPU)");
    unsetenv("FAKE_CUDA_MEM_BYTES");
    assert_false(rt_cuda_upload(c, 0, x, sizeof x, "input x"));
    assert_string_equal(rt_cuda_error(c), "cuMemcpyHtoD failed while copying to the GPU: input x: "
                                          "CUDA_ERROR_INVALID_VALUE (invalid argument)");
    rt_cuda_free(c);
}

static void test_fake_modules_and_launches(void **st) {
    rt_cuda *c = fake_open();
    rt_module *m = rt_module_load(c, ptx_k0);
    rt_func f;
    uint32_t one[3] = {1, 1, 1}, big[3] = {2048, 1, 1};
    uint64_t v = 1;
    void *args[3] = {&v, &v, &v};
    char jit[512];
    (void)st;
    assert_non_null(m);
    assert_false(rt_module_func(m, "nope", &f));
    assert_string_equal(rt_cuda_error(c),
                        "cuModuleGetFunction failed while looking up kernel nope in the PTX: "
                        "CUDA_ERROR_NOT_FOUND (named symbol not found)");
    assert_true(rt_module_func(m, "k0", &f));
    assert_true(rt_cuda_launch(c, f, "k0", one, one, 0, args));
    assert_false(rt_cuda_launch(c, f, "k0", one, one, 100000, args)); /* not allowed yet */
    assert_true(rt_cuda_func_smem(c, f, "k0", 100000));               /* opts in above 48 KiB */
    assert_true(rt_cuda_launch(c, f, "k0", one, one, 100000, args));
    assert_false(rt_cuda_func_smem(c, f, "k0", 300000));
    assert_string_equal(rt_cuda_error(c),
                        "kernel k0 needs 300000 bytes of shared memory; Fake GPU allows at most "
                        "232448 per block");
    assert_false(rt_cuda_launch(c, f, "k0", one, big, 0, args));
    assert_string_equal(
        rt_cuda_error(c),
        "cuLaunchKernel failed while launching kernel k0 (grid 1,1,1 block 2048,1,1 "
        "smem 0): CUDA_ERROR_INVALID_VALUE (invalid argument)");
    rt_module_free(m);
    snprintf(jit, sizeof jit, "%s// FAKE_JIT_ERROR\n", ptx_k0);
    assert_null(rt_module_load(c, jit));
    assert_string_equal(
        rt_cuda_error(c),
        "cuModuleLoadDataEx failed while loading the PTX: CUDA_ERROR_INVALID_PTX (a PTX "
        "JIT compilation failed); JIT log: ptxas application ptx input, line 7; error "
        "  : Unknown symbol 'bad' ptxas fatal   : Ptx assembly aborted due to errors");
    assert_null(rt_module_load(c, ".version 9.9\n.target sm_90\n"));
    assert_non_null(strstr(rt_cuda_error(c), "uses ISA 9.9"));
    rt_cuda_free(c);
}

static void test_fake_events(void **st) {
    rt_cuda *c = fake_open();
    rt_event a, b;
    double us = -1;
    (void)st;
    assert_true(rt_event_new(c, &a) && rt_event_new(c, &b));
    assert_true(rt_event_record(c, a) && rt_event_record(c, b));
    assert_true(rt_event_elapsed_us(c, a, b, &us));
    assert_true(us >= 0 && us < 1e6);
    rt_event_free(c, a);
    rt_event_free(c, b);
    rt_cuda_free(c);
}

/* The executor on the fake: kernels do not run, so the output keeps the
 * poison; unbound buffers are refused before the launch. */
static void test_fake_exec(void **st) {
    rt_cuda *c = fake_open();
    rt_gpu_plan *p = small_plan();
    rt_gpu_exec *x;
    rt_tensor in[2], out[1];
    char err[256];
    rt_devptr mine;
    (void)st;
    free(p->ptx);
    p->ptx = strdup(ptx_k0);
    for (int i = 0; i < 2; i++) {
        in[i] = vec(IR_F32, 12);
        in[i].rank = 2;
        in[i].dim[0] = 4;
        in[i].dim[1] = 3;
        for (int k = 0; k < 12; k++) rt_set(&in[i], k, k);
    }
    x = rt_gpu_exec_new(c, p, true);
    assert_non_null(x);
    assert_true(rt_gpu_exec_upload(x, in, 2, err, sizeof err));
    assert_false(rt_gpu_exec_upload(x, in, 1, err, sizeof err));
    assert_true(rt_gpu_exec_poison(x));
    assert_true(rt_gpu_exec_launch_all(x));
    assert_true(rt_gpu_exec_download(x, out, 1));
    assert_int_equal(out[0].rank, 2);
    assert_int_equal(rt_count_poison(&out[0]), 12);
    /* a second execution on the first one's inputs, downloading into the same host tensor */
    void *kept = out[0].data;
    rt_gpu_exec *y = rt_gpu_exec_new_sharing(c, p, x, err, sizeof err);
    assert_non_null(y);
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t b = rt_gpu_plan_find_buf(p, RT_BUF_INPUT, k);
        assert_int_equal(rt_gpu_exec_buf(y, b), rt_gpu_exec_buf(x, b));
    }
    uint32_t ob = rt_gpu_plan_find_buf(p, RT_BUF_OUTPUT, 0);
    assert_true(rt_gpu_exec_buf(y, ob) != 0 && rt_gpu_exec_buf(y, ob) != rt_gpu_exec_buf(x, ob));
    memset(out[0].data, 0, 48);
    assert_true(rt_gpu_exec_poison(y) && rt_gpu_exec_launch_all(y));
    assert_true(rt_gpu_exec_download_to(y, out, 1));
    assert_ptr_equal(out[0].data, kept);
    assert_int_equal(rt_count_poison(&out[0]), 12);
    rt_gpu_exec_free(y); /* the inputs stay x's */
    assert_true(rt_gpu_exec_upload(x, in, 2, err, sizeof err));
    rt_gpu_plan *q = small_plan(); /* other input shapes: refused */
    q->bufs[0].dim[0] = 5;
    assert_null(rt_gpu_exec_new_sharing(c, q, x, err, sizeof err));
    assert_non_null(strstr(err, "input 0 differs"));
    rt_gpu_plan_free(q);
    rt_tensor_free(&out[0]);
    rt_gpu_exec_free(x);
    x = rt_gpu_exec_new(c, p, false);
    assert_non_null(x);
    assert_false(rt_gpu_exec_launch(x, 0));
    assert_string_equal(rt_gpu_exec_error(x), "kernel k0: buffer x is not bound to device memory");
    assert_true(rt_cuda_alloc(c, 48, "mine", &mine));
    for (uint32_t b = 0; b < 3; b++) assert_true(rt_gpu_exec_bind(x, b, mine));
    assert_false(rt_gpu_exec_bind(x, 3, mine));
    assert_int_equal(rt_gpu_exec_buf(x, 2), mine);
    assert_true(rt_gpu_exec_launch(x, 0));
    rt_gpu_exec_free(x);
    rt_cuda_release(c, mine);
    rt_tensor_free(&in[0]);
    rt_tensor_free(&in[1]);
    rt_gpu_plan_free(p);
    rt_cuda_free(c);
}

/* `txc bench` end to end on the fake driver: the planned add_relu is
 * compiled to PTX, loaded, run, verified (and found unwritten, since the
 * fake runs no kernel), timed and reported; --calibrate writes its file. */
static void test_fake_bench(void **st) {
    static const char src[] =
        "fn add_relu(x: f32[N], y: f32[N]) -> f32[N] {\n  return relu(x + y)\n}\n";
    char path[1024], dir[] = "/tmp/tx-bench-XXXXXX", calib[256], err[256];
    fe_define n = {"N", 1000};
    fe_options fo = {NULL, &n, 1};
    char *obuf = NULL, *dbuf = NULL;
    size_t olen = 0, dlen = 0;
    FILE *out, *dout;
    tx_diag d;
    ir_graph *raw, *g;
    pass_ctx pc;
    rt_tensor in[2];
    drv_bench_opts o;
    rt_calib cal;
    (void)st;
    if (!fake_path(path, sizeof path)) skip();
    setenv("TX_CUDA_LIB", path, 1);
    setenv("FAKE_CUDA_TOTAL_MEM", "67108864", 1);
    dout = open_memstream(&dbuf, &dlen);
    tx_diag_init(&d, dout, "t.tx", src, strlen(src));
    raw = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(raw);
    g = ir_graph_clone(raw);
    memset(&pc, 0, sizeof pc);
    pc.diag = &d;
    pc.gpu = pass_gpu_find("h200");
    assert_true(pass_run_pipeline(g, &pc));
    for (int i = 0; i < 2; i++) {
        in[i] = vec(IR_F32, 1000);
        rt_fill_random(&in[i], 1, (uint32_t)i);
    }
    assert_non_null(mkdtemp(dir));
    snprintf(calib, sizeof calib, "%s/calib.json", dir);
    memset(&o, 0, sizeof o);
    o.iters = 3;
    o.json = true;
    o.compare_unfused = true;
    o.calibrate = true;
    o.calib_path = calib;
    o.device = "gpu";
    o.target = 3; /* CG_SM90 */
    out = open_memstream(&obuf, &olen);
    assert_false(drv_bench(g, raw, &pc, in, &o, out, &d));
    fclose(out);
    fflush(dout);
    assert_non_null(strstr(obuf, "\"device\": \"Fake GPU\""));
    assert_non_null(strstr(obuf, "\"reference\": \"ref (double-precision interpreter)\""));
    assert_non_null(strstr(obuf, "\"unwritten\": 1000"));
    assert_non_null(strstr(obuf, "\"verified\": false"));
    assert_non_null(strstr(obuf, "\"unfused\": {"));
    assert_non_null(strstr(obuf, "\"iters\": 3, \"iters_asked\": 3, \"timing_budget_s\": 0"));
    assert_non_null(strstr(obuf, "\"speedup\": "));
    assert_non_null(strstr(dbuf, "txc: error: verification failed"));
    assert_true(rt_calib_load(calib, &cal, err, sizeof err));
    assert_string_equal(cal.slug, "fakegpu");
    assert_true(cal.copy_GBps > 0);
    remove(calib);
    rmdir(dir);
    /* text form: the kernel table and the measured timeline */
    free(obuf);
    obuf = NULL;
    out = open_memstream(&obuf, &olen);
    o.json = false;
    o.calibrate = false;
    o.compare_unfused = false;
    o.iters = 50;
    o.budget_s = 1e-6; /* cut to the minimum, and said */
    assert_false(drv_bench(g, raw, &pc, in, &o, out, &d));
    fclose(out);
    assert_non_null(strstr(obuf, "median of 10 runs"));
    assert_non_null(strstr(obuf, "10 of the 50 asked, to keep within the timing budget"));
    assert_non_null(strstr(obuf, "add_relu on Fake GPU (sm_90)"));
    assert_non_null(strstr(obuf, "FAIL: 1000 elements never written"));
    assert_non_null(strstr(obuf, "timeline (measured;"));
    free(obuf);
    unsetenv("TX_CUDA_LIB");
    fclose(dout);
    free(dbuf);
    rt_tensor_free(&in[0]);
    rt_tensor_free(&in[1]);
    ir_graph_free(g);
    ir_graph_free(raw);
}

/* The sampled check on the fake driver: a GEMM past the CPU reference's limits (2 x 2800^3 FLOPs)
 * is checked by re-running programs on the host; the fake runs no kernel, so the compared
 * elements are found wrong, and the unfused plan is compared at the fused plan's elements (its
 * own re-run and downloads are not needed). */
static void test_fake_bench_sampled(void **st) {
    static const char src[] = "fn mm(a: bf16[M, K], b: bf16[K, N]) -> bf16[M, N] {\n"
                              "  return a @ b\n}\n";
    char path[1024];
    fe_define n[3] = {{"M", 2800}, {"K", 2800}, {"N", 2800}};
    fe_options fo = {NULL, n, 3};
    char *obuf = NULL, *dbuf = NULL;
    size_t olen = 0, dlen = 0;
    tx_diag d;
    pass_ctx pc;
    rt_tensor in[2];
    drv_bench_opts o;
    (void)st;
    if (!fake_path(path, sizeof path)) skip();
    setenv("TX_CUDA_LIB", path, 1);
    setenv("FAKE_CUDA_TOTAL_MEM", "1073741824", 1);
    FILE *dout = open_memstream(&dbuf, &dlen);
    tx_diag_init(&d, dout, "t.tx", src, strlen(src));
    ir_graph *raw = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(raw);
    ir_graph *g = ir_graph_clone(raw);
    memset(&pc, 0, sizeof pc);
    pc.diag = &d;
    pc.gpu = pass_gpu_find("h200");
    assert_true(pass_run_pipeline(g, &pc));
    for (int i = 0; i < 2; i++) {
        in[i] = (rt_tensor){.dtype = IR_BF16, .rank = 2, .dim = {2800, 2800}};
        assert_true(rt_tensor_alloc(&in[i]));
        rt_fill_random(&in[i], 1, (uint32_t)i);
    }
    memset(&o, 0, sizeof o);
    o.iters = 2;
    o.json = true;
    o.compare_unfused = true;
    o.device = "gpu";
    o.target = 3; /* CG_SM90 */
    FILE *out = open_memstream(&obuf, &olen);
    assert_false(drv_bench(g, raw, &pc, in, &o, out, &d));
    fclose(out);
    fflush(dout);
    assert_non_null(strstr(obuf, "the unfused plan's outputs are compared at the same elements"));
    const char *f = strstr(obuf, "\"fused\": "), *u = strstr(obuf, "\"unfused\": ");
    assert_non_null(f);
    assert_non_null(u);
    const char *fs = strstr(f, "\"sampled\": "), *us = strstr(u, "\"sampled\": ");
    assert_non_null(fs);
    assert_non_null(us);
    long nf = strtol(fs + 11, NULL, 10), nu = strtol(us + 11, NULL, 10);
    assert_true(nf > 0 && nf == nu);
    assert_non_null(strstr(dbuf, "txc: error: verification failed"));
    free(obuf);
    fclose(dout);
    free(dbuf);
    unsetenv("TX_CUDA_LIB");
    rt_tensor_free(&in[0]);
    rt_tensor_free(&in[1]);
    ir_graph_free(g);
    ir_graph_free(raw);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_driver_message),
        cmocka_unit_test(test_default_loader),
        cmocka_unit_test(test_not_a_driver),
        cmocka_unit_test(test_stub_driver),
        cmocka_unit_test(test_ptx_parse),
        cmocka_unit_test(test_ptx_check),
        cmocka_unit_test(test_plan_check),
        cmocka_unit_test(test_input_checks),
        cmocka_unit_test(test_median_and_rates),
        cmocka_unit_test(test_pick_reference),
        cmocka_unit_test(test_timing_budget),
        cmocka_unit_test(test_fake_bench_sampled),
        cmocka_unit_test(test_tolerances),
        cmocka_unit_test(test_compare_f32),
        cmocka_unit_test(test_compare_low_precision_and_ints),
        cmocka_unit_test(test_compare_mismatch),
        cmocka_unit_test(test_compare_scaled),
        cmocka_unit_test(test_compare_sum_terms),
        cmocka_unit_test(test_check_output_verdicts),
        cmocka_unit_test(test_poison),
        cmocka_unit_test(test_slug),
        cmocka_unit_test(test_calib_roundtrip),
        cmocka_unit_test(test_text_report),
        cmocka_unit_test(test_json_report),
        cmocka_unit_test(test_fake_device),
        cmocka_unit_test(test_fake_static_smem),
        cmocka_unit_test(test_fake_memory),
        cmocka_unit_test(test_fake_modules_and_launches),
        cmocka_unit_test(test_fake_events),
        cmocka_unit_test(test_fake_exec),
        cmocka_unit_test(test_fake_bench),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
