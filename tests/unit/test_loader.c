/* test_loader.c - kernels compiled earlier, loaded without the compiler
 * (runtime/manifest.c, include/tx_rt.h): the launch plan built from a
 * manifest equals the one the driver builds from codegen's program, for
 * every program of the public suite and the examples (unbound and at their
 * bench sizes); manifest and binding errors; and, on tests/fake_cuda, a
 * program compiled by the txc binary, loaded through tx_rt.h and launched,
 * with every launch's name, geometry and arguments checked in the fake
 * driver's launch log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tx_rt.h"

#include "driver/driver.h"

/* Reads a whole file (NUL-terminated); NULL when unreadable. */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

/* The "-D NAME=INT" bindings of a file's `bench:` comment line, into defs
 * (their names copied into names). */
static unsigned bench_defines(const char *src, fe_define *defs, char (*names)[32], unsigned max) {
    const char *line = strstr(src, "bench:"), *p;
    unsigned n = 0;
    if (!line) return 0;
    for (p = line; *p && *p != '\n' && n < max; p++)
        if (p[0] == '-' && p[1] == 'D' && p[2] == ' ') {
            const char *eq = strchr(p + 3, '=');
            snprintf(names[n], sizeof names[n], "%.*s", (int)(eq - p - 3), p + 3);
            defs[n].name = names[n];
            defs[n].value = strtoll(eq + 1, NULL, 10);
            n++;
        }
    return n;
}

/* Checks that two plans launch the same kernels on the same buffers. */
static void assert_same_plan(const rt_gpu_plan *a, const rt_gpu_plan *b, const char *what) {
    if (a->nbufs != b->nbufs || a->nkernels != b->nkernels || a->ninputs != b->ninputs ||
        a->noutputs != b->noutputs)
        fail_msg("%s: %u/%u buffers, %u/%u kernels", what, a->nbufs, b->nbufs, a->nkernels,
                 b->nkernels);
    assert_string_equal(a->ptx, b->ptx);
    for (uint32_t i = 0; i < a->nbufs; i++) {
        const rt_buf_desc *x = &a->bufs[i], *y = &b->bufs[i];
        if (x->role != y->role || x->index != y->index || x->dtype != y->dtype ||
            x->rank != y->rank || memcmp(x->dim, y->dim, sizeof x->dim[0] * x->rank))
            fail_msg("%s: buffer %u differs", what, i);
    }
    for (uint32_t k = 0; k < a->nkernels; k++) {
        const rt_kernel_desc *x = &a->kernels[k], *y = &b->kernels[k];
        if (strcmp(x->name, y->name) || x->nparams != y->nparams ||
            memcmp(x->grid, y->grid, sizeof x->grid) ||
            memcmp(x->block, y->block, sizeof x->block) || x->smem != y->smem ||
            x->bytes != y->bytes || x->region != y->region || x->flops != y->flops)
            fail_msg("%s: kernel %u (%s / %s) differs", what, k, x->name, y->name);
        for (uint32_t i = 0; i < x->nparams; i++)
            if (x->params[i].kind != y->params[i].kind || x->params[i].buf != y->params[i].buf ||
                x->params[i].value != y->params[i].value)
                fail_msg("%s: kernel %s parameter %u differs", what, x->name, i);
    }
}

/* Compiles path (with its bench sizes when `bound`) for sm_90, then checks
 * the manifest's plan against the driver's at sizes 40 + 8 * symbol index. */
static void check_program(const char *path, bool bound) {
    size_t len = 0, mlen = 0;
    char *src = slurp(path, &len), *man = NULL, err[512] = "", what[300];
    fe_define defs[8];
    char names[8][32];
    fe_options fo = {NULL, defs, 0};
    tx_diag d;
    pass_ctx pc;
    ir_graph *g;
    cg_program *cp;
    FILE *mf;
    snprintf(what, sizeof what, "%s%s", path, bound ? " (bench sizes)" : "");
    assert_non_null(src);
    if (bound) fo.ndefines = bench_defines(src, defs, names, 8);
    tx_diag_init(&d, stderr, path, src, len);
    memset(&pc, 0, sizeof pc);
    pc.diag = &d;
    pc.gpu = pass_gpu_find("h200");
    g = drv_compile(path, src, len, &fo, &pc, NULL, &d);
    assert_non_null(g);
    cp = cg_program_new(g, CG_SM90, &d);
    assert_non_null(cp);
    mf = open_memstream(&man, &mlen);
    assert_true(cg_manifest_write(cp, mf));
    fclose(mf);
    rt_manifest *m = rt_manifest_parse(man, mlen, err, sizeof err);
    if (!m) fail_msg("%s: %s", what, err);
    unsigned nin = 0;
    while (nin < g->n && g->nodes[nin].op == IR_OP_INPUT) nin++;
    int64_t *syms = calloc(g->nsyms + 1, sizeof *syms),
            *msyms = calloc(g->nsyms + 1, sizeof *msyms);
    for (uint32_t s = 0; s < g->nsyms; s++)
        syms[s] = g->syms[s].value >= 0 ? g->syms[s].value : 40 + 8 * (int64_t)s;
    rt_tensor *in = calloc(nin + 1, sizeof *in);
    for (unsigned i = 0; i < nin; i++) {
        const ir_node *n = &g->nodes[i];
        in[i].dtype = (ir_dtype)n->dtype;
        in[i].rank = n->shape.rank;
        for (unsigned k = 0; k < n->shape.rank; k++)
            in[i].dim[k] = IR_DIM_IS_SYM(n->shape.dim[k]) ? syms[IR_DIM_SYMIDX(n->shape.dim[k])]
                                                          : n->shape.dim[k];
    }
    if (!rt_manifest_bind(m, in, nin, msyms, err, sizeof err)) fail_msg("%s: %s", what, err);
    for (uint32_t s = 0; s < g->nsyms; s++)
        if (msyms[s] >= 0) assert_int_equal(msyms[s], syms[s]);
    rt_gpu_plan *want = drv_gpu_plan_from_cg(g, cp, syms, err, sizeof err);
    if (!want) fail_msg("%s: driver plan: %s", what, err);
    rt_gpu_plan *got = rt_manifest_plan(m, cg_program_ptx(cp, NULL), msyms, err, sizeof err);
    if (!got) fail_msg("%s: manifest plan: %s", what, err);
    assert_same_plan(want, got, what);
    rt_gpu_plan_free(want);
    rt_gpu_plan_free(got);
    rt_manifest_free(m);
    free(in), free(syms), free(msyms), free(man), free(src);
    cg_program_free(cp);
    ir_graph_free(g);
}

/* Every .tx in dir through check_program, unbound and bound; returns how many. */
static unsigned check_dir(const char *dir) {
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[1024];
    unsigned n = 0;
    if (!dp) return 0;
    while ((e = readdir(dp)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".tx")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        check_program(path, false);
        check_program(path, true);
        n++;
    }
    closedir(dp);
    return n;
}

/* A kernel of the sm_90a template (TMA tensor maps, persistent grid) is refused by the loader with
 * a clear message instead of being launched without its maps. */
static void test_manifest_refuses_tensor_maps(void **st) {
    (void)st;
    static const char src[] =
        "fn f(a: bf16[256, 256], b: bf16[256, 256]) -> bf16[256, 256] { return a @ b }\n";
    char *man = NULL, err[512];
    size_t mlen = 0;
    fe_options fo = {NULL, NULL, 0};
    tx_diag d;
    pass_ctx pc;
    tx_diag_init(&d, stderr, "mm.tx", src, sizeof src - 1);
    memset(&pc, 0, sizeof pc);
    pc.diag = &d;
    pc.gpu = pass_gpu_find("h200");
    ir_graph *g = drv_compile("mm.tx", src, sizeof src - 1, &fo, &pc, NULL, &d);
    assert_non_null(g);
    cg_program *cp = cg_program_new(g, CG_SM90A, &d);
    assert_non_null(cp);
    FILE *mf = open_memstream(&man, &mlen);
    assert_true(cg_manifest_write(cp, mf));
    fclose(mf);
    assert_non_null(strstr(man, "\"tensor_maps\""));
    assert_null(rt_manifest_parse(man, mlen, err, sizeof err));
    assert_non_null(strstr(err, "tensor maps"));
    free(man);
    cg_program_free(cp);
    ir_graph_free(g);
}

/* The manifest carries the shape rules the kernels trust ("requires"), so libtx_rt refuses sizes
 * that the frontend could check only symbolically (issue 15 row A's sibling on the loader's path:
 * a slice past N read past its buffer on the device); the same sizes are refused by
 * rt_bind_shapes on the txc path. Each program: a good N and a bad one. (The frontend checks the
 * other rules statically today: inner dims, broadcasting, concatenation and reshape counts of
 * symbolic dims are refused at compile time, so slices are what reaches the manifest.) */
static void check_requires(const char *src, int64_t good_n, int64_t bad_n, const char *want) {
    char *man = NULL, err[512];
    size_t mlen = 0;
    fe_options fo = {NULL, NULL, 0};
    tx_diag d;
    pass_ctx pc;
    tx_diag_init(&d, stderr, "r.tx", src, strlen(src));
    memset(&pc, 0, sizeof pc);
    pc.diag = &d;
    pc.gpu = pass_gpu_find("h200");
    ir_graph *g = drv_compile("r.tx", src, strlen(src), &fo, &pc, NULL, &d);
    assert_non_null(g);
    cg_program *cp = cg_program_new(g, CG_SM90, &d);
    assert_non_null(cp);
    FILE *mf = open_memstream(&man, &mlen);
    assert_true(cg_manifest_write(cp, mf));
    fclose(mf);
    rt_manifest *m = rt_manifest_parse(man, mlen, err, sizeof err);
    if (!m) fail_msg("%s", err);
    assert_true(m->nrules > 0);
    int64_t syms[4];
    rt_tensor in[2];
    for (int pass = 0; pass < 2; pass++) {
        int64_t n = pass ? bad_n : good_n;
        for (uint32_t i = 0; i < m->nin; i++) {
            in[i] = (rt_tensor){.dtype = m->in[i].dtype, .rank = m->in[i].shape.rank};
            for (unsigned k = 0; k < m->in[i].shape.rank; k++)
                in[i].dim[k] = IR_DIM_IS_SYM(m->in[i].shape.dim[k]) ? n : m->in[i].shape.dim[k];
        }
        bool ok = rt_manifest_bind(m, in, m->nin, syms, err, sizeof err);
        if (pass == 0 && !ok) fail_msg("%s at N = %lld: %s", src, (long long)n, err);
        if (pass == 1 && ok) fail_msg("%s at N = %lld: bound", src, (long long)n);
        if (pass == 1 && !strstr(err, want))
            fail_msg("%s: got \"%s\", want \"%s\"", src, err, want);
        int64_t isyms[4];
        bool rok = rt_bind_shapes(g, in, isyms, &d);
        assert_true(rok == (pass == 0));
    }
    rt_manifest_free(m);
    free(man);
    cg_program_free(cp);
    ir_graph_free(g);
}

static void test_manifest_requires(void **st) {
    (void)st;
    check_requires("fn f(x: f32[N, 8]) -> f32[1000, 8] {\n"
                   "  return slice(x, axis=0, start=0, stop=1000)\n}\n",
                   1000, 3, "needs 3 >= 1000");
    check_requires("fn f(x: f32[8, N]) -> f32[8, 5] {\n"
                   "  return exp(slice(x, axis=1, start=2, stop=7))\n}\n",
                   7, 6, "needs 6 >= 7");
}

static void test_manifest_plan_matches_driver(void **st) {
    (void)st;
    assert_true(check_dir("examples") >= 3);
    if (check_dir("../shared/bench/suite") == 0)
        fprintf(stderr, "note: ../shared/bench/suite not found; checked the examples only\n");
}

/* A manifest whose one kernel takes buffers and N, for the error cases. */
static const char good[] =
    "{\"target\": \"sm_90\", \"symbols\": [\"N\"],\n"
    " \"inputs\": [{\"index\": 0, \"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\", 4]}],\n"
    " \"outputs\": [{\"index\": 0, \"name\": \"\", \"dtype\": \"bf16\", \"shape\": [\"N\"]}],\n"
    " \"temps\": [{\"index\": 0, \"value\": 3, \"dtype\": \"f32\", \"shape\": [\"N\", 1]}],\n"
    " \"kernels\": [{\"name\": \"f_k0\", \"region\": 0, \"buffers\": [{\"kind\": \"input\", "
    "\"index\": 0, "
    "\"value\": 0, \"write\": false}, {\"kind\": \"temp\", \"index\": 0, \"value\": 3, \"write\": "
    "true}, "
    "{\"kind\": \"output\", \"index\": 0, \"value\": 5, \"write\": true}], \"symbols\": [\"N\"],\n"
    "   \"grid\": [{\"work\": [\"N\", 4], \"per\": 256, \"cap\": 1024}, {\"work\": [], \"per\": 1, "
    "\"cap\": 1}, "
    "{\"work\": [], \"per\": 1, \"cap\": 1}], \"block\": [256, 1, 1], \"smem_bytes\": 16,\n"
    "   \"flops\": [[3, \"N\"], [2]]}]}";

/* Parses text with `from` replaced by `to` and expects an error containing `want`. */
static void expect_bad(const char *from, const char *to, const char *want) {
    char text[4096], err[512] = "";
    const char *at = strstr(good, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    assert_null(rt_manifest_parse(text, strlen(text), err, sizeof err));
    if (!strstr(err, want)) fail_msg("'%s' -> '%s': got \"%s\", want \"%s\"", from, to, err, want);
}

static void test_manifest_parse_and_errors(void **st) {
    char err[512] = "";
    int64_t syms[1];
    rt_tensor x = {IR_F32, 2, {1000, 4}, NULL};
    (void)st;
    rt_manifest *m = rt_manifest_parse(good, strlen(good), err, sizeof err);
    if (!m) fail_msg("%s", err);
    assert_int_equal(m->nin, 1);
    assert_int_equal(m->nkernels, 1);
    assert_true(rt_manifest_bind(m, &x, 1, syms, err, sizeof err));
    assert_int_equal(syms[0], 1000);
    rt_gpu_plan *p = rt_manifest_plan(m, ".version 8.0\n", syms, err, sizeof err);
    assert_non_null(p);
    assert_int_equal(p->nbufs, 3);
    assert_int_equal(p->kernels[0].grid[0], 16); /* ceil(4000 / 256) */
    assert_int_equal(p->kernels[0].nparams, 4);
    assert_int_equal(p->kernels[0].params[3].value, 1000);
    assert_int_equal(p->kernels[0].params[1].buf, 2); /* inputs, outputs, then temps */
    assert_string_equal(p->bufs[1].name, "out0");
    assert_int_equal(p->kernels[0].smem, 16);
    assert_true(p->kernels[0].flops == 3002.0); /* 3 N + 2 at N = 1000 */
    rt_gpu_plan_free(p);
    x.dim[1] = 5;
    assert_false(rt_manifest_bind(m, &x, 1, syms, err, sizeof err));
    assert_string_equal(err, "input 0 (x): dim 1 is 5, expected [N, 4]");
    x.dtype = IR_BF16;
    assert_false(rt_manifest_bind(m, &x, 1, syms, err, sizeof err));
    assert_string_equal(err, "input 0 (x): expected f32[N, 4], got bf16 of rank 2");
    assert_false(rt_manifest_bind(m, &x, 0, syms, err, sizeof err));
    assert_string_equal(err, "the kernels take 1 inputs, 0 were given");
    rt_manifest_free(m);
    expect_bad("\"N\", 4]", "\"M\", 4]",
               "inputs[0]: a dim must be a size or one of the manifest's symbols");
    expect_bad("\"kind\": \"temp\", \"index\": 0", "\"kind\": \"temp\", \"index\": 1",
               "temp 1 does not exist");
    expect_bad("\"kind\": \"temp\"", "\"kind\": \"scratch\"", "unknown buffer kind 'scratch'");
    expect_bad("\"per\": 256", "\"per\": 0", "\"per\" must be an integer from 1");
    expect_bad("\"dtype\": \"bf16\"", "\"dtype\": \"f64\"", "unknown dtype 'f64'");
    expect_bad("[256, 1, 1]", "[256, 1]", "\"block\" must hold 3 entries");
    expect_bad("\"symbols\": [\"N\"],\n \"inputs\"", "\"symbols\": [\"N\"], \"ins\"",
               "no \"inputs\" or \"outputs\" (written by txc since the loader library");
    expect_bad("}]}", "}]} x", "text after the top-level value");
    expect_bad("[[3, \"N\"]", "[[3, \"K\"]", "\"flops\" must name symbols of the manifest");
    expect_bad("[[3, \"N\"]", "[[\"N\"]", "a \"flops\" term must be [coef, \"SYM\", ...]");
    expect_bad("\"f_k0\"", "\"f_k0", "',' or '}' expected");
    /* every prefix of a good manifest fails cleanly, none crashes */
    for (size_t n = 0; n < strlen(good); n++) {
        rt_manifest *t = rt_manifest_parse(good, n, err, sizeof err);
        assert_null(t);
        assert_true(strncmp(err, "bad manifest: ", 14) == 0);
    }
    char deep[200];
    memset(deep, '[', sizeof deep);
    assert_null(rt_manifest_parse(deep, sizeof deep, err, sizeof err));
    assert_non_null(strstr(err, "nesting too deep"));
}

/* A program with a reduction and symbolic dims, compiled by the txc binary. */
static const char rms[] = "fn rms(x: f32[M, N], w: f32[N]) -> f32[M, N] {\n"
                          "  return x * rsqrt(mean(x * x, axis=-1, keepdim=true) + 1e-6) * w\n}\n";

static void test_txc_output_on_fake_driver(void **st) {
    const char *txc = getenv("TXC"), *lib = getenv("TX_FAKE_CUDA");
    char dir[] = "/tmp/tx_loader_XXXXXX", cmd[2048], path[1100], ptx[1100], logp[1100],
         err[512] = "";
    (void)st;
    if (!txc || !lib || !*lib) skip(); /* CTest sets both */
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rms.tx", dir);
    snprintf(ptx, sizeof ptx, "%s/rms.ptx", dir);
    snprintf(logp, sizeof logp, "%s/launches.txt", dir);
    FILE *f = fopen(path, "w");
    fputs(rms, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' '%s' -o '%s'", txc, path, ptx);
    assert_int_equal(system(cmd), 0);
    tx_kernels *k = tx_kernels_load(ptx, err, sizeof err);
    if (!k) fail_msg("%s", err);
    assert_int_equal(tx_kernels_num_inputs(k), 2);
    assert_int_equal(tx_kernels_num_outputs(k), 1);
    assert_string_equal(tx_kernels_target(k), "sm_90");
    tx_tensor t;
    const char *name;
    assert_int_equal(tx_kernels_input(k, 0, &t, &name), TX_OK);
    assert_string_equal(name, "x");
    assert_int_equal(t.dim[0], -1);
    assert_string_equal(tx_kernels_input_symbol(k, 0, 1), "N");
    assert_null(tx_kernels_input_symbol(k, 0, 2));
    assert_int_equal(tx_kernels_input(k, 2, &t, &name), TX_ERR);

    setenv("TX_CUDA_LIB", lib, 1);
    setenv("FAKE_CUDA_LAUNCH_LOG", logp, 1);
    tx_device *d = tx_device_open(err, sizeof err);
    assert_non_null(d);
    tx_tensor types[2] = {{TX_F32, 2, {96, 200}, NULL}, {TX_F32, 1, {199}, NULL}};
    assert_null(tx_load_kernels(d, k, types, 2, err, sizeof err));
    assert_string_equal(err, "input 1 (w): dim 0 is 199, expected the same size as before for N");
    types[1].dim[0] = 200;
    tx_loaded *l = tx_load_kernels(d, k, types, 2, err, sizeof err);
    if (!l) fail_msg("%s", err);
    uint64_t bx, bw, by;
    size_t bytes;
    assert_int_equal(tx_loaded_output(l, 0, &t, &bytes), TX_OK);
    assert_int_equal(bytes, 96 * 200 * 4);
    assert_int_equal(tx_device_alloc(d, 96 * 200 * 4, &bx), TX_OK);
    assert_int_equal(tx_device_alloc(d, 200 * 4, &bw), TX_OK);
    assert_int_equal(tx_device_alloc(d, bytes, &by), TX_OK);
    assert_int_equal(tx_launch(l), TX_ERR); /* unbound */
    assert_int_equal(tx_bind_input(l, 0, bx), TX_OK);
    assert_int_equal(tx_bind_input(l, 1, bw), TX_OK);
    assert_int_equal(tx_bind_output(l, 0, by), TX_OK);
    unlink(logp);
    assert_int_equal(tx_launch(l), TX_OK);
    assert_int_equal(tx_device_sync(d), TX_OK);

    /* the log against the manifest's plan: each kernel once, in order, with its geometry, the
     * bound buffers, an intermediate for each temp and the sizes M = 96, N = 200 */
    size_t len = 0;
    char mpath[1200];
    snprintf(mpath, sizeof mpath, "%s.json", ptx);
    char *mtext = slurp(mpath, &len), *log = NULL, *line;
    rt_manifest *m = rt_manifest_parse(mtext, len, err, sizeof err);
    assert_non_null(m);
    int64_t syms[2];
    rt_tensor in[2] = {{IR_F32, 2, {96, 200}, NULL}, {IR_F32, 1, {200}, NULL}};
    assert_true(rt_manifest_bind(m, in, 2, syms, err, sizeof err));
    rt_gpu_plan *plan = rt_manifest_plan(m, ".version 8.0\n", syms, err, sizeof err);
    assert_non_null(plan);
    uint64_t addr[3] = {bx, bw, by}; /* plan buffers 0, 1 (inputs) and 2 (the output) */
    log = slurp(logp, &len);
    assert_non_null(log);
    line = log;
    for (uint32_t kk = 0; kk < plan->nkernels; kk++) {
        const rt_kernel_desc *kd = &plan->kernels[kk];
        char kname[128];
        unsigned g[3], b[3], smem;
        int used;
        assert_non_null(line);
        assert_int_equal(sscanf(line, "%127s %u %u %u %u %u %u %u%n", kname, &g[0], &g[1], &g[2],
                                &b[0], &b[1], &b[2], &smem, &used),
                         8);
        assert_string_equal(kname, kd->name);
        assert_memory_equal(g, kd->grid, sizeof g);
        assert_memory_equal(b, kd->block, sizeof b);
        assert_int_equal(smem, kd->smem);
        char *p = line + used;
        for (uint32_t i = 0; i < kd->nparams; i++) {
            long long v;
            int n;
            assert_int_equal(sscanf(p, "%lld%n", &v, &n), 1);
            p += n;
            if (kd->params[i].kind != RT_KP_BUF)
                assert_int_equal(v, kd->params[i].value);
            else if (kd->params[i].buf < 3)
                assert_int_equal((uint64_t)v, addr[kd->params[i].buf]);
            else
                assert_true(v != 0 && (uint64_t)v != bx && (uint64_t)v != bw && (uint64_t)v != by);
        }
        assert_true(*p == '\n');
        line = p + 1;
    }
    assert_true(plan->nkernels >= 1 && *line == 0); /* nothing else launched */
    assert_int_equal(plan->nkernels, tx_kernels_num_kernels(k));
    rt_gpu_plan_free(plan);
    rt_manifest_free(m);
    free(mtext);
    free(log);
    tx_unload(l);
    tx_device_free(d, bx);
    tx_device_free(d, bw);
    tx_device_free(d, by);
    tx_device_close(d);
    tx_kernels_free(k);
    unsetenv("FAKE_CUDA_LAUNCH_LOG");
    unsetenv("TX_CUDA_LIB");
    unlink(logp);
    unlink(ptx);
    snprintf(cmd, sizeof cmd, "%s.json", ptx);
    unlink(cmd);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_plan_matches_driver),
        cmocka_unit_test(test_manifest_refuses_tensor_maps),
        cmocka_unit_test(test_manifest_parse_and_errors),
        cmocka_unit_test(test_manifest_requires),
        cmocka_unit_test(test_txc_output_on_fake_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
