/* txc.c - the command line (spec section 2): compile, run, bench, tune.
 * All state lives in one txc_opts and the objects it creates; main owns
 * them. Exit 0 on success, 1 on any user error (with a clear message). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/driver.h"

#define TXC_MAX_SOURCE (64u << 20) /* refuse sources above 64 MiB */
#define TXC_MAX_DEFS   64
#define TXC_MAX_INPUTS 256

typedef enum { CMD_COMPILE, CMD_RUN, CMD_BENCH, CMD_TUNE } txc_cmd;
typedef enum { EMIT_PTX, EMIT_LLVM, EMIT_IR, EMIT_REPORT, EMIT_JSON, EMIT_DOT, EMIT_SVG } txc_emit;
static const char *const emit_names[] = {"ptx", "llvm", "ir", "report", "json", "dot", "svg"};
static const char *const emit_ext[] = {".ptx",  ".ll",  ".ir", ".report.txt",
                                       ".json", ".dot", ".svg"};

typedef struct txc_input {
    const char *name, *path;
} txc_input;

typedef struct txc_opts {
    txc_cmd cmd;
    const char *file, *out, *entry, *dump_stage, *gpu, *device, *outdir, *target_name, *calib, *svg;
    const char *tune_cache; /* --tune-cache=PATH (NULL: the default) */
    bool no_tune_cache;
    txc_emit emit;
    int target;
    bool no_fuse, explain, json, compare_unfused, calibrate, have_seed, have_iters, have_emit;
    bool have_budget;
    uint64_t seed;
    long iters;
    double budget; /* --timing-budget=S: seconds of timing per plan (0: none) */
    int64_t sram_budget;
    fe_define defs[TXC_MAX_DEFS];
    unsigned ndefs;
    txc_input inputs[TXC_MAX_INPUTS];
    unsigned ninputs;
} txc_opts;

static void usage(FILE *f) {
    fputs(
        "usage: txc FILE.tx [options]            compile (default --emit=ptx)\n"
        "       txc run FILE.tx [options]        compile and run on inputs, write outputs\n"
        "       txc bench FILE.tx [options]      compile, run, verify against the reference, time\n"
        "       txc tune FILE.tx [options]       time candidate schedules on the GPU, keep the "
        "fastest\n"
        "options:\n"
        "  -o PATH                 output file ('-' for stdout; default FILE's base name + "
        "extension)\n"
        "  --emit=KIND             ptx | llvm | ir | report | json | dot | svg\n"
        "  --target=T              sm_80 | sm_86 | sm_89 | sm_90 | sm_90a | host (default sm_90;\n"
        "                          run/bench: the GPU's own, sm_90a on Hopper)\n"
        "  --gpu=NAME              cost-model hardware (default h200; see --gpu=help)\n"
        "  -D NAME=INT             bind a symbolic dim (repeatable)\n"
        "  --entry NAME            entry function (default: the last one in the file)\n"
        "  --dump-ir[=STAGE|all]   print the IR to stderr after one stage, or after every stage\n"
        "  --no-fuse               one kernel per operation (the unfused baseline)\n"
        "  --sram-budget=BYTES     per-block on-chip budget for the fusion planner\n"
        "  --explain               say why each producer/consumer pair was left unfused\n"
        "run/bench:\n"
        "  --device=cpu|gpu|ref    where to run (default gpu when a CUDA driver is found, else "
        "cpu)\n"
        "  --input NAME=FILE.npy   an input (repeatable)\n"
        "  --random-inputs=SEED    fill every input not given, deterministically\n"
        "  --output-dir DIR        run: write out0.npy, out1.npy, ... there\n"
        "  --iters N               bench: timed iterations (default 50)\n"
        "  --timing-budget=S       bench: at most about S seconds of timing per plan, cutting\n"
        "                          --iters (said in the report; default 1, 0: no limit)\n"
        "  --compare-unfused       bench: also time the --no-fuse plan\n"
        "  --calibrate             bench: measure bandwidth and launch overhead, save them\n"
        "  --calib=FILE            use (or, with --calibrate, write) this calibration file\n"
        "  --svg PATH              bench: draw the measured roofline and timeline beside the "
        "predicted ones\n"
        "  --json                  machine-readable output\n"
        "tuning (every command):\n"
        "  --tune-cache=PATH       the tuning cache (default $TX_CACHE_DIR/tune.json, "
        "TX_CACHE_DIR\n"
        "                          defaulting to ~/.cache/tx): tune writes it, compiles follow it\n"
        "  --no-tune-cache         compile from the cost model alone (ignore the cache)\n"
        "  --help, --version\n",
        f);
}

/* Reports a command-line error and returns 1 (the exit status). */
static int cli_error(const char *fmt, const char *arg) {
    fputs("txc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

/* Parses a decimal integer in [lo, hi]; false on anything else. */
static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* Option value: "--opt=V" or "--opt V". Returns NULL when absent. */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n)) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

static bool is_opt(const char *a, const char *name) {
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

static int parse_define(txc_opts *o, const char *s) {
    const char *eq = strchr(s, '=');
    if (!eq || eq == s) return cli_error("-D expects NAME=INT, got '%s'", s);
    if (o->ndefs == TXC_MAX_DEFS) return cli_error("too many -D options (limit 64) at '%s'", s);
    int64_t v;
    if (!parse_i64(eq + 1, 1, IR_MAX_ELEMS - 1, &v))
        return cli_error("-D %s: the value must be an integer from 1 to 2^62-1", s);
    char *name = ir_xstrdup(s);
    name[eq - s] = 0;
    for (unsigned i = 0; i < o->ndefs; i++)
        if (!strcmp(o->defs[i].name, name) && o->defs[i].value != v) {
            free(name);
            return cli_error("-D %s contradicts an earlier -D for the same name", s);
        }
    o->defs[o->ndefs].name = name;
    o->defs[o->ndefs++].value = v;
    return 0;
}

/* `--gpu=help`: the cost model's hardware table. */
static void print_gpus(FILE *f) {
    char names[256];
    snprintf(names, sizeof names, "%s", pass_gpu_names());
    fprintf(f, "%-8s %5s %9s %13s %10s %12s\n", "gpu", "SMs", "HBM GB/s", "f32 TFLOP/s", "L2 MiB",
            "smem/block");
    for (char *save = NULL, *n = strtok_r(names, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
        const pass_gpu *g = pass_gpu_find(n);
        if (g)
            fprintf(f, "%-8s %5d %9.0f %13.1f %10.1f %12lld\n", g->name, g->sms, g->hbm_GBps,
                    g->peak_TFLOPs[IR_F32], (double)g->l2_bytes / (1 << 20),
                    (long long)g->smem_per_block);
    }
}

/* Refuses options that the subcommand would ignore; -1 to continue, else 1. */
static int check_args(const txc_opts *o) {
    static const char *const cmd_names[] = {"compile", "run", "bench", "tune"};
    const char *cmd = cmd_names[o->cmd];
    if (o->cmd == CMD_COMPILE) {
        const char *run_only = o->ninputs           ? "--input"
                               : o->device          ? "--device"
                               : o->have_seed       ? "--random-inputs"
                               : o->outdir          ? "--output-dir"
                               : o->have_iters      ? "--iters"
                               : o->have_budget     ? "--timing-budget"
                               : o->compare_unfused ? "--compare-unfused"
                               : o->calibrate       ? "--calibrate"
                               : o->json            ? "--json"
                               : o->svg             ? "--svg"
                                                    : NULL;
        if (run_only)
            return cli_error("%s is an option of `txc run` / `txc bench` (see --help)", run_only);
        return -1;
    }
    if (o->have_emit) return cli_error("--emit is an option of compiling, not of `txc %s`", cmd);
    if (o->cmd == CMD_TUNE) {
        const char *no = o->no_tune_cache     ? "--no-tune-cache"
                         : o->out             ? "-o"
                         : o->outdir          ? "--output-dir"
                         : o->compare_unfused ? "--compare-unfused"
                         : o->calibrate       ? "--calibrate"
                         : o->svg             ? "--svg"
                         : o->json            ? "--json"
                         : o->have_budget     ? "--timing-budget"
                                              : NULL;
        if (no)
            return cli_error("%s is not an option of `txc tune` (it writes the tuning cache, "
                             "--tune-cache=PATH names it)",
                             no);
        if (o->device && strcmp(o->device, "gpu"))
            return cli_error("txc tune times kernels on the GPU; --device=%s is not possible",
                             o->device);
        return -1;
    }
    if (o->cmd == CMD_RUN) {
        const char *bench_only = o->have_iters        ? "--iters"
                                 : o->have_budget     ? "--timing-budget"
                                 : o->compare_unfused ? "--compare-unfused"
                                 : o->calibrate       ? "--calibrate"
                                 : o->svg             ? "--svg"
                                                      : NULL;
        if (bench_only) return cli_error("%s is an option of `txc bench`", bench_only);
        if (o->out && o->outdir)
            return cli_error(
                "%s", "txc run: give -o FILE.npy (one output) or --output-dir DIR, not both");
        return -1;
    }
    if (o->out)
        return cli_error(
            "%s",
            "txc bench prints its report on stdout; -o is not used (redirect, or use --json)");
    if (o->outdir)
        return cli_error("%s",
                         "txc bench writes no outputs; --output-dir is an option of `txc run`");
    if (o->device && strcmp(o->device, "gpu")) {
        if (o->calibrate)
            return cli_error("--calibrate measures the GPU; it needs --device=gpu, not --device=%s",
                             o->device);
        if (o->compare_unfused)
            return cli_error("--compare-unfused times the GPU's unfused plan; it needs "
                             "--device=gpu, not --device=%s",
                             o->device);
        if (o->have_budget)
            return cli_error("--timing-budget limits the GPU's timing; the CPU runs --iters "
                             "calls, so it needs --device=gpu, not --device=%s",
                             o->device);
    }
    return -1;
}

/* Parses argv into o; returns -1 to continue, or an exit status. */
static int parse_args(int argc, char **argv, txc_opts *o) {
    int i = 1;
    o->target = CG_SM90;
    o->gpu = "h200";
    o->iters = 50;
    o->budget = RT_BENCH_BUDGET_S;
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    if (!strcmp(argv[1], "run"))
        o->cmd = CMD_RUN, i = 2;
    else if (!strcmp(argv[1], "bench"))
        o->cmd = CMD_BENCH, i = 2;
    else if (!strcmp(argv[1], "tune"))
        o->cmd = CMD_TUNE, i = 2;
    bool end_of_options = false;
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        if (end_of_options || !strcmp(a, "-") || a[0] != '-') { /* a file (after `--`, any name) */
            if (o->file) return cli_error("more than one input file ('%s')", a);
            o->file = a;
        } else if (!strcmp(a, "--")) {
            end_of_options = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("txc %s (LLVM 19)\n", TX_VERSION);
            return 0;
        } else if (!strcmp(a, "-o")) {
            if (++i >= argc) return cli_error("%s needs a path", a);
            o->out = argv[i];
        } else if (!strncmp(a, "-D", 2)) {
            const char *d = a[2] ? a + 2 : (++i < argc ? argv[i] : NULL);
            if (!d) return cli_error("%s needs NAME=INT", "-D");
            int rc = parse_define(o, d);
            if (rc) return rc;
        } else if (is_opt(a, "--emit")) {
            if (!(v = opt_value(argc, argv, &i, "--emit"))) return cli_error("%s needs a value", a);
            unsigned k;
            for (k = 0; k < 7 && strcmp(v, emit_names[k]); k++) {}
            if (k == 7)
                return cli_error("unknown --emit kind '%s' (ptx, llvm, ir, report, json, dot, svg)",
                                 v);
            o->emit = (txc_emit)k;
            o->have_emit = true;
        } else if (is_opt(a, "--target")) {
            if (!(v = opt_value(argc, argv, &i, "--target")))
                return cli_error("%s needs a value", a);
            if ((o->target = cg_target_parse(v)) < 0)
                return cli_error("unknown target '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a, host)",
                                 v);
            o->target_name = v;
        } else if (is_opt(a, "--gpu")) {
            if (!(v = opt_value(argc, argv, &i, "--gpu"))) return cli_error("%s needs a value", a);
            if (!strcmp(v, "help")) {
                print_gpus(stdout);
                return 0;
            }
            o->gpu = v;
        } else if (is_opt(a, "--entry")) {
            if (!(v = opt_value(argc, argv, &i, "--entry"))) return cli_error("%s needs a name", a);
            o->entry = v;
        } else if (!strcmp(a, "--dump-ir")) {
            o->dump_stage = "all";
        } else if (!strncmp(a, "--dump-ir=", 10)) {
            o->dump_stage = a + 10;
            if (!pass_stage_known(o->dump_stage))
                return cli_error("unknown --dump-ir stage '%s'", o->dump_stage);
        } else if (!strcmp(a, "--no-fuse")) {
            o->no_fuse = true;
        } else if (!strcmp(a, "--explain")) {
            o->explain = true;
        } else if (is_opt(a, "--sram-budget")) {
            if (!(v = opt_value(argc, argv, &i, "--sram-budget")) ||
                !parse_i64(v, 1, (int64_t)1 << 40, &o->sram_budget))
                return cli_error("--sram-budget needs a positive number of bytes, got '%s'",
                                 v ? v : "");
        } else if (is_opt(a, "--device")) {
            if (!(v = opt_value(argc, argv, &i, "--device")))
                return cli_error("%s needs a value", a);
            if (strcmp(v, "cpu") && strcmp(v, "gpu") && strcmp(v, "ref"))
                return cli_error("unknown device '%s' (cpu, gpu, ref)", v);
            o->device = v;
        } else if (is_opt(a, "--input")) {
            if (!(v = opt_value(argc, argv, &i, "--input")))
                return cli_error("%s needs NAME=FILE.npy", a);
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1])
                return cli_error("--input expects NAME=FILE.npy, got '%s'", v);
            if (o->ninputs == TXC_MAX_INPUTS)
                return cli_error("too many --input options at '%s'", v);
            char *name = ir_xstrdup(v);
            name[eq - v] = 0;
            for (unsigned k = 0; k < o->ninputs; k++)
                if (!strcmp(o->inputs[k].name, name)) {
                    free(name);
                    return cli_error("--input %s: a second --input for the same parameter", v);
                }
            o->inputs[o->ninputs].name = name;
            o->inputs[o->ninputs++].path = eq + 1;
        } else if (is_opt(a, "--random-inputs")) {
            int64_t s;
            if (!(v = opt_value(argc, argv, &i, "--random-inputs")) ||
                !parse_i64(v, 0, INT64_MAX, &s))
                return cli_error("--random-inputs needs a non-negative integer seed, got '%s'",
                                 v ? v : "");
            o->seed = (uint64_t)s;
            o->have_seed = true;
        } else if (is_opt(a, "--output-dir")) {
            if (!(v = opt_value(argc, argv, &i, "--output-dir")))
                return cli_error("%s needs a directory", a);
            o->outdir = v;
        } else if (is_opt(a, "--iters")) {
            int64_t n;
            if (!(v = opt_value(argc, argv, &i, "--iters")) || !parse_i64(v, 1, 1000000, &n))
                return cli_error("--iters needs an integer from 1 to 1000000, got '%s'",
                                 v ? v : "");
            o->iters = (long)n;
            o->have_iters = true;
        } else if (is_opt(a, "--timing-budget")) {
            char *end = NULL;
            double b = (v = opt_value(argc, argv, &i, "--timing-budget")) ? strtod(v, &end) : -1;
            if (!v || end == v || *end || !(b >= 0 && b <= 86400))
                return cli_error("--timing-budget needs seconds from 0 to 86400, got '%s'",
                                 v ? v : "");
            o->budget = b;
            o->have_budget = true;
        } else if (is_opt(a, "--svg")) {
            if (!(v = opt_value(argc, argv, &i, "--svg"))) return cli_error("%s needs a file", a);
            o->svg = v;
        } else if (is_opt(a, "--calib")) {
            if (!(v = opt_value(argc, argv, &i, "--calib"))) return cli_error("%s needs a file", a);
            o->calib = v;
        } else if (is_opt(a, "--tune-cache")) {
            if (!(v = opt_value(argc, argv, &i, "--tune-cache")) || !v[0])
                return cli_error("%s needs a file", "--tune-cache");
            o->tune_cache = v;
        } else if (!strcmp(a, "--no-tune-cache")) {
            o->no_tune_cache = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--compare-unfused")) {
            o->compare_unfused = true;
        } else if (!strcmp(a, "--calibrate")) {
            o->calibrate = true;
        } else {
            return cli_error("unknown option '%s' (see --help)", a);
        }
    }
    if (!o->file) return cli_error("%s", "no input file (see --help)");
    if (o->tune_cache && o->no_tune_cache)
        return cli_error("%s", "--tune-cache and --no-tune-cache contradict each other");
    return check_args(o);
}

/* Reads a whole source file (a regular file of at most 64 MiB, read
 * without blocking); NULL with a one-line error on failure. */
static char *read_source(const char *path, size_t *len) {
    char err[1024];
    char *buf = rt_file_read_all(path, TXC_MAX_SOURCE, len, err, sizeof err);
    if (!buf) fprintf(stderr, "txc: error: %s\n", err);
    return buf;
}

/* Default output path: FILE's base name with `ext` (in the current directory, as cc does). */
static char *default_out(const char *file, const char *ext) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strlen(base);
    if (n > 3 && !strcmp(base + n - 3, ".tx")) n -= 3;
    char *p = ir_xmalloc(n + strlen(ext) + 1);
    memcpy(p, base, n);
    strcpy(p + n, ext);
    return p;
}

/* Opens an output of the run's set; false with a one-line error. */
static bool out_open(rt_outset *set, const char *path, FILE **f) {
    char err[1024];
    if ((*f = rt_outset_open(set, path, err, sizeof err))) return true;
    fprintf(stderr, "txc: error: %s\n", err);
    return false;
}

/* Commits the run's outputs when ok; false with a one-line error. */
static bool out_commit(rt_outset *set, bool ok) {
    char err[1024];
    if (ok && !rt_outset_commit(set, err, sizeof err)) {
        fprintf(stderr, "txc: error: %s\n", err);
        ok = false;
    }
    rt_outset_free(set);
    return ok;
}

/* Compiles the source into a planned graph (drv_compile); `*raw` (optional)
 * receives the frontend's graph, which the reference interpreter runs. */
static ir_graph *compile_graph(const txc_opts *o, const char *src, size_t len, tx_diag *d,
                               pass_ctx *pc, ir_graph **raw) {
    fe_options fo = {.entry = o->entry, .defines = o->defs, .ndefines = o->ndefs};
    return drv_compile(o->file, src, len, &fo, pc, raw, d);
}

/* `txc FILE.tx`: writes the requested form of the compiled graph; a PTX
 * file and its manifest (PATH.json) are committed together or not at all. */
/* --explain with code: each kernel built on a template (the sm_90a wgmma + TMA one) says which,
 * with its launch shape and exact dynamic shared memory (what the launch allocates; ptxas
 * reports no static shared memory for these kernels). */
static void explain_kernels(const cg_program *prog, FILE *out) {
    for (unsigned i = 0; i < cg_program_nkernels(prog); i++) {
        const cg_kernel *k = cg_program_kernel(prog, i);
        if (!k->tmpl[0] || k->region < 0) continue;
        fprintf(out, "k%d: template %s: %u threads, %u B dynamic shared memory", k->region, k->tmpl,
                k->block[0], k->smem_bytes);
        if (k->persist) fprintf(out, ", persistent over at most %u CTAs", k->persist);
        if (k->cluster > 1) fprintf(out, ", clusters of %u CTAs (split-K)", k->cluster);
        if (k->ntmaps) fprintf(out, ", %u TMA tensor maps", k->ntmaps);
        fputc('\n', out);
    }
}

static int cmd_compile(const txc_opts *o, ir_graph *g, pass_ctx *pc, tx_diag *d) {
    char *path = o->out ? ir_xstrdup(o->out) : default_out(o->file, emit_ext[o->emit]);
    rt_outset *set = rt_outset_new();
    FILE *f = NULL, *mf = NULL;
    bool ok = out_open(set, path, &f);
    cg_program *prog = NULL;
    if (ok) {
        switch (o->emit) {
            case EMIT_IR: ir_print(g, f); break;
            case EMIT_REPORT: ok = pass_report_text(g, pc, f); break;
            case EMIT_JSON: ok = pass_report_json(g, pc, f); break;
            case EMIT_DOT: ok = pass_report_dot(g, pc, f); break;
            case EMIT_SVG: ok = pass_report_svg(g, pc, NULL, f); break;
            case EMIT_LLVM:
            case EMIT_PTX:
                if (o->emit == EMIT_PTX && o->target == CG_HOST) {
                    tx_error(d, "--emit=ptx needs a GPU target, not host (use --emit=llvm)");
                    ok = false;
                    break;
                }
                prog = cg_program_new(g, (cg_target)o->target, d);
                if (!prog)
                    ok = false;
                else if (o->emit == EMIT_LLVM)
                    ok = cg_program_emit_llvm(prog, f);
                else
                    ok = cg_program_emit_ptx(prog, f);
                if (ok && pc->explain) explain_kernels(prog, pc->explain);
                break;
        }
    }
    if (ok && prog && o->emit == EMIT_PTX &&
        !rt_out_is_stream(path)) { /* no manifest beside a device */
        char *mpath = ir_xmalloc(strlen(path) + 6);
        sprintf(mpath, "%s.json", path);
        ok = out_open(set, mpath, &mf) && cg_manifest_write(prog, mf);
        free(mpath);
    }
    ok = out_commit(set, ok);
    cg_program_free(prog);
    free(path);
    return ok ? 0 : 1;
}

/* Finds the --input given for parameter `name`; NULL when none. */
static const txc_input *find_input(const txc_opts *o, const char *name) {
    for (unsigned i = 0; i < o->ninputs; i++)
        if (!strcmp(o->inputs[i].name, name)) return &o->inputs[i];
    return NULL;
}

/* Loads the --input files and fills the rest randomly; inputs[] is in
 * parameter order. Shapes of random inputs take their symbolic dims from -D
 * bindings or from the loaded files. Before any random input is allocated,
 * the whole run's memory (mo) is checked (drv_check_memory). False with a
 * message on error. */
static bool load_inputs(const txc_opts *o, const ir_graph *g, rt_tensor *inputs, uint32_t nparams,
                        const drv_mem_opts *mo, rt_cuda *cuda, tx_diag *d) {
    int64_t *syms = ir_xcalloc(g->nsyms + 1, sizeof *syms);
    char err[512];
    bool ok = true;
    for (unsigned i = 0; i < o->ninputs && ok; i++) {
        bool found = false;
        for (uint32_t p = 0; p < nparams; p++)
            if (!strcmp(ir_str(g, g->nodes[p].name), o->inputs[i].name)) found = true;
        if (!found)
            tx_error(d, "--input %s: the entry has no parameter named '%s'", o->inputs[i].name,
                     o->inputs[i].name),
                ok = false;
    }
    for (uint32_t s = 0; s < g->nsyms; s++) syms[s] = g->syms[s].value;
    for (uint32_t p = 0; p < nparams && ok; p++) { /* files first: they bind dims */
        const ir_node *n = &g->nodes[p];
        const txc_input *in = find_input(o, ir_str(g, n->name));
        if (!in) continue;
        if (!rt_npy_read(in->path, &inputs[p], err, sizeof err)) {
            tx_error(d, "--input %s: %s", in->name, err);
            ok = false;
            break;
        }
        if (!rt_tensor_convert(&inputs[p], (ir_dtype)n->dtype, err, sizeof err)) {
            tx_error(d, "input '%s' (%s): %s", in->name, in->path, err);
            ok = false;
            break;
        }
        for (int k = 0; k < n->shape.rank && k < inputs[p].rank; k++)
            if (IR_DIM_IS_SYM(n->shape.dim[k]) && syms[IR_DIM_SYMIDX(n->shape.dim[k])] < 0)
                syms[IR_DIM_SYMIDX(n->shape.dim[k])] = inputs[p].dim[k];
    }
    for (uint32_t p = 0; p < nparams && ok; p++) {
        const ir_node *n = &g->nodes[p];
        if (inputs[p].data) continue;
        const char *name = ir_str(g, n->name);
        if (!o->have_seed) {
            tx_error(d, "input '%s' not given (use --input %s=FILE.npy or --random-inputs=SEED)",
                     name, name);
            ok = false;
            break;
        }
        inputs[p].dtype = (ir_dtype)n->dtype;
        inputs[p].rank = n->shape.rank;
        for (int k = 0; k < n->shape.rank && ok; k++) {
            ir_dim dd = n->shape.dim[k];
            int64_t v = IR_DIM_IS_SYM(dd) ? syms[IR_DIM_SYMIDX(dd)] : dd;
            if (v < 0) {
                tx_error(d,
                         "dim %s of input '%s' is unbound: bind it with -D %s=INT or give --input "
                         "%s=FILE.npy",
                         g->syms[IR_DIM_SYMIDX(dd)].name, name, g->syms[IR_DIM_SYMIDX(dd)].name,
                         name);
                ok = false;
            }
            inputs[p].dim[k] = v;
        }
    }
    ok = ok && drv_check_memory(g, syms, inputs, mo, cuda, d);
    for (uint32_t p = 0; p < nparams && ok; p++) {
        if (inputs[p].data) continue;
        if (!rt_tensor_alloc(&inputs[p])) {
            tx_error(d, "input '%s' is too large to allocate", ir_str(g, g->nodes[p].name));
            ok = false;
        } else {
            rt_fill_random(&inputs[p], o->seed, p);
        }
    }
    free(syms);
    return ok;
}

/* Prints the run's summary (the first values of each output), as text or --json. */
static void print_summary(const txc_opts *o, rt_tensor *outs, unsigned nout) {
    if (o->json) printf("{\"outputs\": [");
    for (unsigned k = 0; k < nout; k++) {
        int64_t n = rt_numel(&outs[k]);
        if (o->json)
            printf("%s{\"name\": \"out%u\", \"dtype\": \"%s\", \"shape\": [", k ? ", " : "", k,
                   ir_dtype_name(outs[k].dtype));
        else
            printf("out%u: %s[", k, ir_dtype_name(outs[k].dtype));
        for (int i = 0; i < outs[k].rank; i++)
            printf(i ? ", %lld" : "%lld", (long long)outs[k].dim[i]);
        printf(o->json ? "], \"numel\": %lld, \"first\": [" : "] =", (long long)n);
        for (int64_t i = 0; i < n && i < 8; i++) {
            double v = rt_get(&outs[k], i);
            if (o->json && !isfinite(v))
                printf(i ? ", null" : "null"); /* JSON has no NaN or inf */
            else if (o->json)
                printf(i ? ", %.9g" : "%.9g", v);
            else
                printf(" %.6g", v);
        }
        if (o->json)
            printf("]}");
        else
            puts(n > 8 ? " ..." : "");
    }
    if (o->json) puts("]}");
}

/* Writes the outputs: -o FILE.npy (a program returning one value), DIR/outK.npy
 * with --output-dir, else prints a short summary. All files or none. */
static bool write_outputs(const txc_opts *o, rt_tensor *outs, unsigned nout, tx_diag *d) {
    char err[1024];
    if (!o->outdir && !o->out) {
        print_summary(o, outs, nout);
        return true;
    }
    if (o->out && nout != 1) {
        tx_error(d, "-o names one file but the program returns %u values; use --output-dir DIR",
                 nout);
        return false;
    }
    struct stat st;
    if (o->outdir && stat(o->outdir, &st) != 0 && mkdir(o->outdir, 0755) != 0) {
        tx_error(d, "cannot create output directory '%s': %s", o->outdir, strerror(errno));
        return false;
    }
    char **paths = ir_xcalloc(nout + 1, sizeof *paths);
    for (unsigned k = 0; k < nout; k++) {
        if (o->out) {
            paths[k] = ir_xstrdup(o->out);
            continue;
        }
        paths[k] = ir_xmalloc(strlen(o->outdir) + 32);
        sprintf(paths[k], "%s/out%u.npy", o->outdir, k);
    }
    bool ok = rt_npy_write_all((const char *const *)paths, outs, nout, err, sizeof err);
    if (!ok) tx_error(d, "%s", err);
    for (unsigned k = 0; k < nout; k++) free(paths[k]);
    free(paths);
    return ok;
}

/* The default device: the GPU when a CUDA driver loads, else the CPU. */
static const char *default_device(void) { return rt_gpu_available() ? "gpu" : "cpu"; }

/* The GPU target of run/bench: --target when given (host means the
 * default sm_90), else the device's own architecture. */
static int run_target(const txc_opts *o) {
    if (!o->target_name) return DRV_TARGET_DEVICE;
    return o->target == CG_HOST ? CG_SM90 : o->target;
}

/* The target the planner prices kernels for: the compile target; for run, bench and tune on the
 * GPU the one they compile for (run_target), the device's own when a driver answers (else
 * DRV_TARGET_DEVICE: not known). */
static int plan_target(const txc_opts *o) {
    if (o->cmd == CMD_COMPILE) return o->target;
    const char *dev = o->device ? o->device : default_device();
    if (o->cmd != CMD_TUNE && strcmp(dev, "gpu")) return o->target_name ? o->target : CG_SM90;
    int t = run_target(o);
    if (t != DRV_TARGET_DEVICE) return t;
    char err[256];
    rt_cuda *cu = rt_cuda_new(err, sizeof err);
    if (cu) t = drv_target_for_cc(rt_cuda_get_info(cu)->cc);
    rt_cuda_free(cu);
    return t;
}

/* `txc run` and `txc bench`. */
static int cmd_run(const txc_opts *o, ir_graph *g, ir_graph *raw, pass_ctx *pc, tx_diag *d) {
    uint32_t nparams = 0;
    while (nparams < raw->n && raw->nodes[nparams].op == IR_OP_INPUT) nparams++;
    const ir_node *outn = &raw->nodes[ir_output(raw)];
    unsigned nout = outn->nin;
    rt_tensor *inputs = ir_xcalloc(nparams + 1, sizeof *inputs);
    rt_tensor *outs = ir_xcalloc(nout + 1, sizeof *outs);
    const char *dev = o->device ? o->device : default_device();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    drv_mem_opts mo = {.dev = o->cmd == CMD_TUNE    ? DRV_GPU
                              : !strcmp(dev, "ref") ? DRV_REF
                              : !strcmp(dev, "cpu") ? DRV_CPU
                                                    : DRV_GPU,
                       .bench = o->cmd == CMD_BENCH,
                       .compare_unfused = o->compare_unfused};
    /* bench on the GPU opens its context once: for the memory check and the run */
    char cerr[512];
    rt_cuda *cuda =
        o->cmd == CMD_BENCH && mo.dev == DRV_GPU ? rt_cuda_new(cerr, sizeof cerr) : NULL;
    bool ok = load_inputs(o, raw, inputs, nparams, &mo, cuda, d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (ok && o->cmd == CMD_TUNE) {
        drv_tune_opts to = {.cache_path = o->tune_cache,
                            .target = run_target(o),
                            .iters = o->have_iters ? o->iters : 0};
        ok = drv_tune(g, raw, pc, inputs, &to, stdout, d);
    } else if (ok && o->cmd == CMD_BENCH) {
        drv_bench_opts bo = {.iters = o->iters,
                             .budget_s = o->budget,
                             .iters_given = o->have_iters,
                             .json = o->json,
                             .compare_unfused = o->compare_unfused,
                             .calibrate = o->calibrate,
                             .calib_path = o->calib,
                             .device = dev,
                             .svg_path = o->svg,
                             .target = run_target(o),
                             .inputs_s = (double)(t1.tv_sec - t0.tv_sec) +
                                         (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                             .cuda = cuda};
        ok = drv_bench(g, raw, pc, inputs, &bo, stdout, d);
    } else if (ok) {
        drv_device where = !strcmp(dev, "ref") ? DRV_REF : !strcmp(dev, "cpu") ? DRV_CPU : DRV_GPU;
        ok = drv_run(g, raw, where, run_target(o), inputs, outs, d);
        if (ok) ok = write_outputs(o, outs, nout, d);
    }
    for (uint32_t p = 0; p < nparams; p++) rt_tensor_free(&inputs[p]);
    for (unsigned k = 0; k < nout; k++) rt_tensor_free(&outs[k]);
    rt_cuda_free(cuda);
    free(inputs);
    free(outs);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    txc_opts o;
    memset(&o, 0, sizeof o);
    const char *ct = getenv("TX_CODEGEN_TIME"); /* docs/codegen.md, "Compile time" */
    if (ct && strcmp(ct, "passes") == 0) cg_llvm_time_passes();
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) goto done;
    rc = 1;
    const pass_gpu *gpu = pass_gpu_find(o.gpu);
    if (!gpu) {
        fprintf(stderr, "txc: error: unknown --gpu '%s' (known: %s)\n", o.gpu, pass_gpu_names());
        goto done;
    }
    pass_gpu calibrated;
    if (o.calib && !o.calibrate) { /* --calib=FILE: predictions use measured figures */
        rt_calib cal;
        char err[512];
        if (!rt_calib_load(o.calib, &cal, err, sizeof err)) {
            fprintf(stderr, "txc: error: --calib %s: %s\n", o.calib, err);
            goto done;
        }
        calibrated = *gpu;
        drv_calib_apply(&cal, &calibrated);
        gpu = &calibrated;
    }
    size_t len = 0;
    char *src = read_source(o.file, &len);
    if (!src) goto done;
    tx_diag d;
    tx_diag_init(&d, stderr, o.file, src, len);
    bool out_is_stdout = o.out && !strcmp(o.out, "-");
    pass_target pt = drv_pass_target(plan_target(&o));
    pass_gpu narrowed;
    pass_ctx pc = {.diag = &d,
                   .dump = o.dump_stage ? stderr : NULL,
                   .dump_stage = o.dump_stage,
                   .explain = o.explain ? (out_is_stdout ? stderr : stdout) : NULL,
                   .gpu = pass_target_gpu(gpu, pt, &narrowed),
                   .target = pt,
                   .sram_budget = o.sram_budget,
                   .no_fuse = o.no_fuse};
    if (o.cmd == CMD_TUNE && !o.have_seed) { /* timing needs values, not particular ones */
        o.have_seed = true;
        o.seed = 0;
    }
    pass_tune *tune = NULL;
    if (o.cmd != CMD_TUNE && !o.no_tune_cache) /* tune starts from the model's own choice */
        pc.tune = tune = drv_tune_open(o.tune_cache, "txc", stderr);
    char devname[128];
    if (tune && (o.cmd == CMD_RUN || o.cmd == CMD_BENCH) &&
        (!o.device || !strcmp(o.device, "gpu"))) {
        char cerr[256]; /* running on a GPU: entries measured on another device or driver are stale
                         */
        rt_cuda *cu = rt_cuda_new(cerr, sizeof cerr);
        if (cu) {
            snprintf(devname, sizeof devname, "%s", rt_cuda_get_info(cu)->name);
            tune->device = devname;
            tune->driver = rt_cuda_get_info(cu)->driver_version;
            rt_cuda_free(cu);
        }
    }
    ir_graph *raw = NULL;
    ir_graph *g = compile_graph(&o, src, len, &d, &pc, o.cmd == CMD_COMPILE ? NULL : &raw);
    if (g) rc = o.cmd == CMD_COMPILE ? cmd_compile(&o, g, &pc, &d) : cmd_run(&o, g, raw, &pc, &d);
    ir_graph_free(g);
    ir_graph_free(raw);
    drv_tune_close(tune);
    free(src);
done:
    if ((fflush(stdout) != 0 || ferror(stdout)) &&
        rc == 0) { /* lost output is an error (e.g. stdout on a full disk) */
        fprintf(stderr, "txc: error: cannot write to standard output: %s\n",
                strerror(errno ? errno : EIO));
        rc = 1;
    }
    for (unsigned i = 0; i < o.ndefs; i++) free((char *)o.defs[i].name);
    for (unsigned i = 0; i < o.ninputs; i++) free((char *)o.inputs[i].name);
    return rc;
}
