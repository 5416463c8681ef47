/* api_demo.c - the public C API (include/tx.h) end to end: compile a
 * program, run it on the CPU (host JIT) and check it against the reference
 * interpreter, then, when a GPU is present, load its kernels, bind device
 * buffers, launch, time and check the GPU's result too.
 * Build: cmake --build build --target tx_api_demo; run: build/runtime/tx_api_demo */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"

static const char src[] = "fn scaled_gelu(x: f32[N], y: f32[N]) -> f32[N] {\n"
                          "  return gelu_tanh(x * 0.5 + y)\n"
                          "}\n";

/* Largest |a[i] - b[i]| over n floats; infinity when either holds a NaN. */
static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (isnan(e)) return INFINITY;
        m = e > m ? e : m;
    }
    return m;
}

/* The GPU part: explicit device buffers, bind, launch, time, copy back. */
static int run_on_gpu(tx_program *p, const tx_tensor *in, const float *want, size_t n) {
    char err[1024];
    tx_device *d = tx_device_open(err, sizeof err);
    tx_loaded *l;
    uint64_t bx = 0, by = 0, bz = 0;
    size_t bytes = n * sizeof(float);
    float *got = malloc(bytes);
    double us = 0;
    int rc = 1;
    if (!d) {
        printf("no GPU: %s\n", err);
        free(got);
        return 0;
    }
    l = tx_load(d, p, in, 2, err, sizeof err);
    if (!l)
        fprintf(stderr, "api_demo: %s\n", err);
    else if (tx_device_alloc(d, bytes, &bx) || tx_device_alloc(d, bytes, &by) ||
             tx_device_alloc(d, bytes, &bz) || tx_device_upload(d, bx, in[0].data, bytes) ||
             tx_device_upload(d, by, in[1].data, bytes) || tx_bind_input(l, 0, bx) ||
             tx_bind_input(l, 1, by) || tx_bind_output(l, 0, bz) || tx_launch(l) ||
             tx_device_sync(d) || tx_device_download(d, got, bz, bytes) || tx_time(l, 20, &us))
        fprintf(stderr, "api_demo: %s\n", tx_device_error(d));
    else {
        double diff = max_diff(got, want, n);
        printf("%s: %u kernel(s), %.1f us per launch, max |gpu - cpu| = %.3g\n", tx_device_name(d),
               tx_loaded_num_kernels(l), us, diff);
        rc = diff < 1e-4 ? 0 : 1;
    }
    tx_device_free(d, bx);
    tx_device_free(d, by);
    tx_device_free(d, bz);
    tx_unload(l);
    tx_device_close(d);
    free(got);
    return rc;
}

int main(void) {
    enum { N = 100003 };
    const char *defs[] = {"N=100003"};
    tx_options opt = {0};
    char err[1024];
    tx_program *p;
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    tx_tensor in[2] = {{TX_F32, 1, {N}, x}, {TX_F32, 1, {N}, y}}, cpu[1] = {{0}}, ref[1] = {{0}};
    int rc = 1;
    for (int i = 0; i < N; i++) {
        x[i] = (float)((i % 1000) - 500) / 100.0f;
        y[i] = (float)(i % 7) / 7.0f;
    }
    opt.defines = defs;
    opt.ndefines = 1;
    p = tx_compile("scaled_gelu.tx", src, strlen(src), &opt, err, sizeof err);
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (tx_run(p, TX_ON_CPU, in, 2, cpu, 1, err, sizeof err) ||
        tx_run(p, TX_ON_REF, in, 2, ref, 1, err, sizeof err)) {
        fprintf(stderr, "api_demo: %s\n", err);
    } else {
        double diff = max_diff(cpu[0].data, ref[0].data, N);
        printf("cpu: %d elements, max |cpu - reference| = %.3g\n", N, diff);
        rc = diff < 1e-4 ? run_on_gpu(p, in, cpu[0].data, N) : 1;
    }
    tx_tensor_release(&cpu[0]);
    tx_tensor_release(&ref[0]);
    tx_program_free(p);
    free(x);
    free(y);
    return rc;
}
