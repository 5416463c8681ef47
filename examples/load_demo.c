/* load_demo.c - runs kernels compiled earlier, through the tx runtime alone
 * (include/tx_rt.h, library tx_rt: no compiler, no LLVM):
 *
 *   txc examples/softmax.tx -o softmax.ptx      # writes softmax.ptx + softmax.ptx.json
 *   load_demo softmax.ptx N=1000 M=64           # on a machine with a GPU (and the driver)
 *
 * Each NAME=INT gives the size of a symbolic dim; the inputs are filled with
 * a fixed pattern, every kernel is launched once, the first values of each
 * output are printed, then the whole program is timed. Exit 1 with one line
 * on any error (no GPU, a bad manifest, a missing size). */
#include "tx_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Size of symbol `name` from the NAME=INT arguments; -1 when not given. */
static int64_t arg_size(int argc, char **argv, const char *name) {
    size_t n = strlen(name);
    for (int a = 2; a < argc; a++)
        if (!strncmp(argv[a], name, n) && argv[a][n] == '=')
            return strtoll(argv[a] + n + 1, NULL, 10);
    return -1;
}

static size_t elem_size(tx_dtype t) {
    return t == TX_F32 || t == TX_I32 ? 4 : t == TX_BOOL ? 1 : 2;
}

static size_t numel(const tx_tensor *t) {
    size_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= (size_t)t->dim[d];
    return n;
}

/* Element i of host data as a double (f16/bf16 widened bit-exactly enough for printing). */
static double get(const tx_tensor *t, const void *data, size_t i) {
    uint16_t h;
    uint32_t u;
    float f;
    switch (t->dtype) {
        case TX_F32: return ((const float *)data)[i];
        case TX_I32: return ((const int32_t *)data)[i];
        case TX_BOOL: return ((const uint8_t *)data)[i];
        case TX_BF16:
            u = (uint32_t)((const uint16_t *)data)[i] << 16;
            memcpy(&f, &u, 4);
            return f;
        case TX_F16: {
            h = ((const uint16_t *)data)[i];
            int e = (h >> 10) & 31, m = h & 1023;
            double v = e == 0    ? m / 16777216.0
                       : e == 31 ? (m ? 0.0 / 0.0 : 1.0 / 0.0)
                                 : (1 + m / 1024.0) * (double)(1u << e) / 32768.0;
            return h & 0x8000 ? -v : v;
        }
    }
    return 0;
}

/* Fills input data with a fixed pattern in [-1, 1) (0/1 for bool). */
static void fill(const tx_tensor *t, void *data) {
    for (size_t i = 0; i < numel(t); i++) {
        float v = (float)((int)(i * 37 % 200) - 100) / 100.0f;
        uint32_t u;
        memcpy(&u, &v, 4);
        switch (t->dtype) {
            case TX_F32: ((float *)data)[i] = v; break;
            case TX_I32: ((int32_t *)data)[i] = (int32_t)(i % 17) - 8; break;
            case TX_BOOL: ((uint8_t *)data)[i] = (uint8_t)(i & 1); break;
            case TX_BF16: ((uint16_t *)data)[i] = (uint16_t)(u >> 16); break;
            case TX_F16:
                ((uint16_t *)data)[i] = (uint16_t)((v < 0 ? 0x8000 : 0) | (uint16_t)(15 << 10));
                break; /* +-1 */
        }
    }
}

int main(int argc, char **argv) {
    char err[1024] = "";
    tx_kernels *k;
    tx_device *d;
    tx_loaded *l;
    unsigned nin, nout;
    int rc = 1;
    if (argc < 2) {
        fprintf(stderr, "usage: load_demo FILE.ptx [NAME=INT ...]   (FILE.ptx.json beside it)\n");
        return 1;
    }
    if (!(k = tx_kernels_load(argv[1], err, sizeof err))) {
        fprintf(stderr, "load_demo: error: %s\n", err);
        return 1;
    }
    nin = tx_kernels_num_inputs(k);
    nout = tx_kernels_num_outputs(k);
    tx_tensor *types = calloc(nin + 1, sizeof *types);
    uint64_t *bufs = calloc(nin + nout + 1, sizeof *bufs);
    for (unsigned i = 0; i < nin; i++) {
        tx_kernels_input(k, i, &types[i], NULL);
        for (int dd = 0; dd < types[i].rank; dd++)
            if (types[i].dim[dd] < 0) {
                const char *sym = tx_kernels_input_symbol(k, i, (unsigned)dd);
                if ((types[i].dim[dd] = arg_size(argc, argv, sym)) <= 0) {
                    fprintf(stderr, "load_demo: error: give the size of %s as %s=INT\n", sym, sym);
                    goto out_kernels;
                }
            }
    }
    printf("%s: %u kernels for %s, %u inputs, %u outputs\n", argv[1], tx_kernels_num_kernels(k),
           tx_kernels_target(k), nin, nout);
    if (!(d = tx_device_open(err, sizeof err))) {
        fprintf(stderr, "load_demo: error: %s\n", err);
        goto out_kernels;
    }
    if (!(l = tx_load_kernels(d, k, types, nin, err, sizeof err))) {
        fprintf(stderr, "load_demo: error: %s\n", err);
        goto out_device;
    }
    for (unsigned i = 0; i < nin; i++) {
        size_t bytes = numel(&types[i]) * elem_size(types[i].dtype);
        void *host = malloc(bytes ? bytes : 1);
        fill(&types[i], host);
        if (tx_device_alloc(d, bytes ? bytes : 1, &bufs[i]) ||
            tx_device_upload(d, bufs[i], host, bytes) || tx_bind_input(l, i, bufs[i])) {
            free(host);
            goto fail;
        }
        free(host);
    }
    for (unsigned o = 0; o < nout; o++) {
        tx_tensor t;
        size_t bytes = 0;
        if (tx_loaded_output(l, o, &t, &bytes) ||
            tx_device_alloc(d, bytes ? bytes : 1, &bufs[nin + o]) ||
            tx_bind_output(l, o, bufs[nin + o]))
            goto fail;
    }
    if (tx_launch(l) || tx_device_sync(d)) goto fail;
    for (unsigned o = 0; o < nout; o++) {
        tx_tensor t;
        size_t bytes = 0;
        tx_loaded_output(l, o, &t, &bytes);
        void *host = malloc(bytes ? bytes : 1);
        if (tx_device_download(d, host, bufs[nin + o], bytes)) {
            free(host);
            goto fail;
        }
        printf("out%u [", o);
        for (int dd = 0; dd < t.rank; dd++) printf(dd ? ", %lld" : "%lld", (long long)t.dim[dd]);
        printf("] =");
        for (size_t i = 0; i < numel(&t) && i < 8; i++) printf(" %.6g", get(&t, host, i));
        puts(numel(&t) > 8 ? " ..." : "");
        free(host);
    }
    double us = 0;
    if (tx_time(l, 20, &us)) goto fail;
    printf("median time per run of all kernels: %.2f us\n", us);
    rc = 0;
    goto out_loaded;
fail:
    fprintf(stderr, "load_demo: error: %s\n", tx_device_error(d));
out_loaded:
    for (unsigned b = 0; b < nin + nout; b++) tx_device_free(d, bufs[b]);
    tx_unload(l);
out_device:
    tx_device_close(d);
out_kernels:
    free(types);
    free(bufs);
    tx_kernels_free(k);
    return rc;
}
