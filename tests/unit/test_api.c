/* test_api.c - the public C API (include/tx.h) on the CPU: argument checks
 * with clear errors, compile errors, program introspection, runs on the
 * reference interpreter and the host JIT, the no-driver errors, and the GPU
 * plan built from codegen's manifest checked against the PTX it launches
 * (entry names and parameter counts). Nothing here needs a GPU. */
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

#include "tx.h"

#include "driver/driver.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static const char add_relu[] =
    "fn add_relu(x: f32[N], y: f32[N]) -> f32[N] {\n  return relu(x + y)\n}\n";
static const char rmsnorm_src[] =
    "fn f(x: bf16[M, N], r: bf16[M, N], w: bf16[N]) -> (bf16[M, N], bf16[M, N]) {\n"
    "  h = x + r\n  hf = f32(h)\n"
    "  y = bf16(hf * rsqrt(mean(hf * hf, axis=-1, keepdim=true) + 1e-6)) * w\n  return y, h\n}\n";

static tx_program *compile_n16(char *err, size_t cap) {
    const char *defs[] = {"N=16"};
    tx_options o = {0};
    o.defines = defs;
    o.ndefines = 1;
    return tx_compile("add_relu.tx", add_relu, strlen(add_relu), &o, err, cap);
}

static void test_compile_errors(void **st) {
    char err[1024] = "";
    tx_options o = {0};
    const char *bad_defs[][1] = {{"N"}, {"N=0"}, {"N=abc"}, {"=4"}};
    const char *bad = "fn f(x: f32[4]) -> f32[4] {\n  return x +\n}\n";
    (void)st;
    assert_null(tx_compile("a.tx", NULL, 0, NULL, err, sizeof err));
    assert_string_equal(err, "tx_compile: no source text (src is NULL)");
    assert_null(tx_compile("bad.tx", bad, strlen(bad), NULL, err, sizeof err));
    assert_non_null(strstr(err, "bad.tx:"));
    assert_non_null(strstr(err, "error:"));
    for (int i = 0; i < 4; i++) {
        o.defines = bad_defs[i];
        o.ndefines = 1;
        assert_null(tx_compile("a.tx", add_relu, strlen(add_relu), &o, err, sizeof err));
        assert_non_null(strstr(err, "bad define '"));
        assert_non_null(strstr(err, "expected NAME=INT with INT > 0"));
    }
    memset(&o, 0, sizeof o);
    o.target = "sm_12";
    assert_null(tx_compile("a.tx", add_relu, strlen(add_relu), &o, err, sizeof err));
    assert_true(strncmp(err, "unknown target 'sm_12' (known: ", 31) == 0);
    memset(&o, 0, sizeof o);
    o.gpu = "v100x";
    assert_null(tx_compile("a.tx", add_relu, strlen(add_relu), &o, err, sizeof err));
    assert_non_null(strstr(err, "unknown GPU 'v100x'"));
    assert_null(tx_compile_file(NULL, NULL, err, sizeof err));
    assert_string_equal(err, "tx_compile_file: no path (path is NULL)");
    assert_null(tx_compile_file("/nonexistent/x.tx", NULL, err, sizeof err));
    assert_string_equal(err,
                        "cannot read /nonexistent/x.tx: cannot open: No such file or directory");
    /* a NULL or empty error buffer is allowed */
    assert_null(tx_compile("a.tx", NULL, 0, NULL, NULL, 0));
}

static void test_introspection(void **st) {
    char err[512] = "";
    tx_program *p = compile_n16(err, sizeof err), *u;
    tx_tensor t;
    const char *name = NULL;
    (void)st;
    assert_non_null(p);
    assert_int_equal(tx_program_num_inputs(p), 2);
    assert_int_equal(tx_program_num_outputs(p), 1);
    assert_int_equal(tx_program_input(p, 1, &t, &name), TX_OK);
    assert_string_equal(name, "y");
    assert_int_equal(t.dtype, TX_F32);
    assert_int_equal(t.rank, 1);
    assert_int_equal(t.dim[0], 16);
    assert_int_equal(tx_program_output(p, 0, &t), TX_OK);
    assert_int_equal(t.dim[0], 16);
    assert_int_equal(tx_program_input(p, 2, &t, &name), TX_ERR);
    assert_int_equal(tx_program_output(p, 1, &t), TX_ERR);
    tx_program_free(p);
    u = tx_compile("a.tx", add_relu, strlen(add_relu), NULL, err, sizeof err);
    assert_non_null(u);
    assert_int_equal(tx_program_input(u, 0, &t, NULL), TX_OK);
    assert_int_equal(t.dim[0], -1); /* unbound */
    tx_program_free(u);
    assert_int_equal(tx_program_num_inputs(NULL), 0);
    assert_int_equal(tx_program_num_outputs(NULL), 0);
}

/* Runs add_relu on `where` and checks every element. */
static void run_add_relu(tx_where where) {
    char err[512] = "";
    tx_program *p = compile_n16(err, sizeof err);
    float x[16], y[16];
    tx_tensor in[2] = {{TX_F32, 1, {16}, x}, {TX_F32, 1, {16}, y}}, out[1];
    for (int i = 0; i < 16; i++) {
        x[i] = (float)i - 8.5f;
        y[i] = 0.25f * (float)i;
    }
    assert_non_null(p);
    assert_int_equal(tx_run(p, where, in, 2, out, 1, err, sizeof err), TX_OK);
    assert_int_equal(out[0].dtype, TX_F32);
    assert_int_equal(out[0].rank, 1);
    assert_int_equal(out[0].dim[0], 16);
    for (int i = 0; i < 16; i++) {
        float want = x[i] + y[i] > 0 ? x[i] + y[i] : 0;
        assert_true(((float *)out[0].data)[i] == want);
    }
    tx_tensor_release(&out[0]);
    assert_null(out[0].data);
    tx_program_free(p);
}

static void test_run_ref(void **st) {
    (void)st;
    run_add_relu(TX_ON_REF);
}
static void test_run_cpu(void **st) {
    (void)st;
    run_add_relu(TX_ON_CPU);
}

static void test_run_argument_errors(void **st) {
    char err[512] = "";
    tx_program *p = compile_n16(err, sizeof err);
    float x[16] = {0}, y[16] = {0};
    int32_t yi[16] = {0};
    tx_tensor in[2] = {{TX_F32, 1, {16}, x}, {TX_F32, 1, {16}, y}}, out[2];
    (void)st;
    assert_int_equal(tx_run(NULL, TX_ON_REF, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "tx_run: the program is NULL");
    assert_int_equal(tx_run(p, TX_ON_REF, in, 2, NULL, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "tx_run: outputs is NULL");
    assert_int_equal(tx_run(p, TX_ON_REF, in, 1, out, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "the program takes 2 inputs, 1 were given");
    assert_int_equal(tx_run(p, TX_ON_REF, NULL, 2, out, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "the program takes 2 inputs, 0 were given");
    assert_int_equal(tx_run(p, TX_ON_REF, in, 2, out, 2, err, sizeof err), TX_ERR);
    assert_string_equal(err, "the program returns 1 values, room for 2 was given");
    assert_int_equal(tx_run(p, (tx_where)7, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "tx_run: unknown place 7");
    in[0].data = NULL;
    assert_int_equal(tx_run(p, TX_ON_CPU, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "input 0 (x) has no data");
    in[0].data = x;
    in[1].rank = 9;
    assert_int_equal(tx_run(p, TX_ON_CPU, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_string_equal(err, "input 1 (y): bad dtype or rank");
    /* a mismatched dtype or shape is reported by the shape binder */
    in[1].rank = 1;
    in[1].dtype = TX_I32;
    in[1].data = yi;
    err[0] = 0;
    assert_int_equal(tx_run(p, TX_ON_REF, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_true(err[0] != 0);
    in[1].dtype = TX_F32;
    in[1].data = y;
    in[1].dim[0] = 15;
    err[0] = 0;
    assert_int_equal(tx_run(p, TX_ON_CPU, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_true(err[0] != 0);
    assert_null(out[0].data);
    tx_program_free(p);
}

/* Without a driver (CI), the GPU paths fail with the loader's one line. */
static void test_no_driver(void **st) {
    char err[512] = "";
    tx_device *d = tx_device_open(err, sizeof err);
    tx_program *p;
    float x[16] = {0};
    tx_tensor in[2] = {{TX_F32, 1, {16}, x}, {TX_F32, 1, {16}, x}}, out[1];
    (void)st;
    if (d) { /* a GPU machine: the device works and has a name */
        assert_true(tx_device_name(d)[0] != 0);
        tx_device_close(d);
        skip();
    }
    assert_non_null(strstr(err, "; use --device=cpu"));
    p = compile_n16(err, sizeof err);
    assert_int_equal(tx_run(p, TX_ON_GPU, in, 2, out, 1, err, sizeof err), TX_ERR);
    assert_non_null(strstr(err, "; use --device=cpu"));
    assert_null(tx_load(NULL, p, in, 2, err, sizeof err));
    assert_string_equal(err, "tx_load: the device is NULL");
    tx_program_free(p);
}

static void test_null_handles(void **st) {
    double us;
    tx_tensor t;
    (void)st;
    tx_program_free(NULL);
    tx_device_close(NULL);
    tx_unload(NULL);
    tx_tensor_release(NULL);
    assert_int_equal(tx_launch(NULL), TX_ERR);
    assert_int_equal(tx_time(NULL, 10, &us), TX_ERR);
    assert_int_equal(tx_bind_input(NULL, 0, 1), TX_ERR);
    assert_int_equal(tx_bind_output(NULL, 0, 1), TX_ERR);
    assert_int_equal(tx_loaded_output(NULL, 0, &t, NULL), TX_ERR);
    assert_int_equal(tx_loaded_num_kernels(NULL), 0);
    assert_int_equal(tx_device_alloc(NULL, 16, NULL), TX_ERR);
    assert_int_equal(tx_device_sync(NULL), TX_ERR);
    assert_string_equal(tx_device_error(NULL), "no device (NULL)");
    assert_string_equal(tx_device_name(NULL), "");
}

static void test_ptx(void **st) {
    char err[512] = "", perr[256];
    tx_program *p = compile_n16(err, sizeof err), *h;
    tx_options o = {0};
    const char *ptx;
    (void)st;
    assert_null(tx_program_ptx(NULL, err, sizeof err));
    ptx = tx_program_ptx(p, err, sizeof err);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".entry"));
    /* the driver check the runtime applies before loading */
    assert_true(rt_ptx_check(ptx, 12000, 90, perr, sizeof perr));
    tx_program_free(p);
    o.target = "host";
    h = tx_compile("a.tx", add_relu, strlen(add_relu), &o, err, sizeof err);
    assert_non_null(h);
    assert_null(tx_program_ptx(h, err, sizeof err));
    assert_string_equal(err, "the program was compiled for the host target; it has no GPU code");
    tx_program_free(h);
}

/* Number of ".param" declarations of entry `name` in the PTX; -1 if absent. */
static int ptx_entry_params(const char *ptx, const char *name) {
    char key[128];
    const char *s, *e;
    int n = 0;
    snprintf(key, sizeof key, ".entry %s(", name);
    s = strstr(ptx, key);
    if (!s) return -1;
    e = strchr(s, ')');
    for (const char *q = s; q && q < e; q = strstr(q + 1, ".param")) n += q != s;
    return n;
}

/* Compiles src (planned, -D from defs) and builds the GPU plan for inputs
 * of the given dims; checks every kernel against the PTX. */
static void check_plan(const char *src, const fe_define *defs, unsigned nd, unsigned nparams,
                       unsigned nout) {
    tx_diag d;
    fe_options fo = {NULL, defs, nd};
    ir_graph *g;
    pass_ctx pc;
    rt_tensor *in = calloc(nparams, sizeof *in);
    int64_t syms[16] = {0};
    rt_gpu_plan *p;
    tx_diag_init(&d, stderr, "t.tx", src, strlen(src));
    g = fe_compile("t.tx", src, strlen(src), &fo, &d);
    assert_non_null(g);
    memset(&pc, 0, sizeof pc);
    pc.diag = &d;
    pc.gpu = pass_gpu_find("h200");
    assert_true(pass_run_pipeline(g, &pc));
    for (unsigned i = 0; i < nparams; i++) {
        in[i].dtype = (ir_dtype)g->nodes[i].dtype;
        in[i].rank = g->nodes[i].shape.rank;
        memcpy(in[i].dim, g->nodes[i].shape.dim, sizeof in[i].dim);
    }
    p = drv_gpu_plan_build(g, CG_SM90, in, syms, &d);
    assert_non_null(p);
    assert_int_equal(p->ninputs, nparams);
    assert_int_equal(p->noutputs, nout);
    assert_true(p->nkernels >= 1);
    for (uint32_t k = 0; k < p->nkernels; k++) {
        const rt_kernel_desc *kd = &p->kernels[k];
        assert_int_equal(ptx_entry_params(p->ptx, kd->name), (int)kd->nparams);
        assert_true(kd->block[0] >= 1 && kd->grid[0] >= 1);
        assert_true(kd->bytes > 0);
    }
    assert_int_equal(rt_ptx_isa(p->ptx), 80);
    rt_gpu_plan_free(p);
    ir_graph_free(g);
    free(in);
}

static void test_plan_matches_ptx(void **st) {
    fe_define n[] = {{"N", 1000}}, mn[] = {{"M", 5}, {"N", 96}};
    (void)st;
    check_plan(add_relu, n, 1, 2, 1);
    check_plan(rmsnorm_src, mn, 2, 3, 2);
}

/* The device half of the API on tests/fake_cuda (a libcuda stand-in that
 * runs no kernels): load, output types, binding rules, launch and time. */
static void test_fake_device_api(void **st) {
    const char *lib = getenv("TX_FAKE_CUDA");
    char err[512] = "";
    tx_program *p;
    tx_device *d;
    tx_loaded *l;
    tx_tensor types[2] = {{TX_F32, 1, {16}, NULL}, {TX_F32, 1, {16}, NULL}}, t, out[1];
    float x[16] = {0};
    tx_tensor in[2] = {{TX_F32, 1, {16}, x}, {TX_F32, 1, {16}, x}};
    uint64_t bx = 0, bz = 0;
    size_t bytes = 0;
    double us = -1;
    (void)st;
    if (!lib || !*lib) skip(); /* TX_FAKE_CUDA (set by CTest) names the built stand-in */
    if (access(lib, R_OK) != 0) fail_msg("TX_FAKE_CUDA=%s cannot be read", lib);
    setenv("TX_CUDA_LIB", lib, 1);
    p = compile_n16(err, sizeof err);
    d = tx_device_open(err, sizeof err);
    assert_non_null(d);
    assert_string_equal(tx_device_name(d), "Fake GPU");
    types[1].dim[0] = 17;
    assert_null(tx_load(d, p, types, 2, err, sizeof err));
    assert_true(err[0] != 0);
    types[1].dim[0] = 16;
    assert_null(tx_load(d, p, types, 1, err, sizeof err));
    assert_string_equal(err, "the program takes 2 inputs, 1 were given");
    l = tx_load(d, p, types, 2, err, sizeof err);
    assert_non_null(l);
    assert_true(tx_loaded_num_kernels(l) >= 1);
    assert_int_equal(tx_loaded_output(l, 0, &t, &bytes), TX_OK);
    assert_int_equal(t.dtype, TX_F32);
    assert_int_equal(t.dim[0], 16);
    assert_int_equal(bytes, 64);
    assert_int_equal(tx_loaded_output(l, 1, &t, &bytes), TX_ERR);
    assert_int_equal(tx_launch(l), TX_ERR);
    assert_non_null(strstr(tx_device_error(d), "is not bound to device memory"));
    assert_int_equal(tx_device_alloc(d, 64, &bx), TX_OK);
    assert_int_equal(tx_device_alloc(d, 64, &bz), TX_OK);
    assert_int_equal(tx_device_upload(d, bx, x, sizeof x), TX_OK);
    assert_int_equal(tx_bind_input(l, 2, bx), TX_ERR);
    assert_string_equal(tx_device_error(d), "the program has no input 2");
    assert_int_equal(tx_bind_output(l, 0, 0), TX_ERR);
    assert_string_equal(tx_device_error(d), "binding output 0 to a NULL device address");
    assert_int_equal(tx_bind_input(l, 0, bx), TX_OK);
    assert_int_equal(tx_bind_input(l, 1, bx), TX_OK);
    assert_int_equal(tx_bind_output(l, 0, bz), TX_OK);
    assert_int_equal(tx_launch(l), TX_OK);
    assert_int_equal(tx_device_sync(d), TX_OK);
    assert_int_equal(tx_time(l, 5, &us), TX_OK);
    assert_true(us >= 0);
    assert_int_equal(tx_time(l, 0, &us), TX_ERR);
    assert_int_equal(tx_device_download(d, x, bz, sizeof x), TX_OK);
    tx_unload(l);
    tx_device_free(d, bx);
    tx_device_free(d, bz);
    tx_device_close(d);
    /* tx_run on the "GPU": the fake runs no kernel, so the output is the poison (NaN) */
    assert_int_equal(tx_run(p, TX_ON_GPU, in, 2, out, 1, err, sizeof err), TX_OK);
    assert_true(isnan(((float *)out[0].data)[0]));
    tx_tensor_release(&out[0]);
    unsetenv("TX_CUDA_LIB");
    tx_program_free(p);
}

/* The primary-context device and launches on a stream (what the Python
 * package uses for PyTorch and CuPy tensors), on tests/fake_cuda. */
static void test_fake_primary_stream(void **st) {
    const char *lib = getenv("TX_FAKE_CUDA");
    char err[512] = "";
    tx_program *p;
    tx_device *d;
    tx_loaded *l;
    tx_tensor types[2] = {{TX_F32, 1, {16}, NULL}, {TX_F32, 1, {16}, NULL}};
    uint64_t bx = 0, bz = 0;
    (void)st;
    if (!lib || !*lib) skip();
    setenv("TX_CUDA_LIB", lib, 1);
    p = compile_n16(err, sizeof err);
    assert_null(tx_device_open_primary(3, err, sizeof err));
    assert_non_null(strstr(err, "cuDeviceGet"));
    d = tx_device_open_primary(0, err, sizeof err);
    assert_non_null(d);
    l = tx_load(d, p, types, 2, err, sizeof err);
    assert_non_null(l);
    assert_int_equal(tx_device_alloc(d, 64, &bx), TX_OK);
    assert_int_equal(tx_device_alloc(d, 64, &bz), TX_OK);
    assert_int_equal(tx_launch_on(l, 0x1234), TX_ERR); /* unbound buffers */
    assert_int_equal(tx_bind_input(l, 0, bx), TX_OK);
    assert_int_equal(tx_bind_input(l, 1, bx), TX_OK);
    assert_int_equal(tx_bind_output(l, 0, bz), TX_OK);
    assert_int_equal(tx_launch_on(l, 0x1234), TX_OK);
    assert_int_equal(tx_launch_on(l, 0), TX_OK);
    tx_unload(l);
    tx_device_free(d, bx);
    tx_device_free(d, bz);
    tx_device_close(d);
    unsetenv("TX_CUDA_LIB");
    tx_program_free(p);
}

/* The text forms: what txc --emit=... and --explain write. */
static void test_program_text(void **st) {
    char err[512] = "";
    tx_program *p = compile_n16(err, sizeof err);
    const char *ir, *json, *svg;
    (void)st;
    ir = tx_program_text(p, TX_TEXT_IR, err, sizeof err);
    assert_non_null(ir);
    assert_non_null(strstr(ir, "region k0"));
    assert_ptr_equal(ir, tx_program_text(p, TX_TEXT_IR, err, sizeof err)); /* made once */
    json = tx_program_text(p, TX_TEXT_JSON, err, sizeof err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"totals\""));
    svg = tx_program_text(p, TX_TEXT_SVG, err, sizeof err);
    assert_non_null(svg);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    assert_non_null(tx_program_text(p, TX_TEXT_REPORT, err, sizeof err));
    assert_non_null(tx_program_text(p, TX_TEXT_DOT, err, sizeof err));
    assert_non_null(tx_program_text(p, TX_TEXT_EXPLAIN, err, sizeof err));
    assert_null(tx_program_text(p, TX_TEXT_KINDS, err, sizeof err));
    assert_null(tx_program_text(NULL, TX_TEXT_IR, err, sizeof err));
    assert_int_equal(tx_api_version(), TX_API_VERSION);
    tx_program_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_introspection),
        cmocka_unit_test(test_run_ref),
        cmocka_unit_test(test_run_cpu),
        cmocka_unit_test(test_run_argument_errors),
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_ptx),
        cmocka_unit_test(test_plan_matches_ptx),
        cmocka_unit_test(test_fake_device_api),
        cmocka_unit_test(test_fake_primary_stream),
        cmocka_unit_test(test_program_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
