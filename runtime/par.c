/* par.c - the host's data-parallel loop for work over large tensors
 * (random inputs, verification): contiguous ranges over C11 threads. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <threads.h>
#include <unistd.h>

unsigned rt_par_threads(void) {
    const char *e = getenv("TX_HOST_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > RT_PAR_MAX ? RT_PAR_MAX : (unsigned)n;
}

/* One thread's range. */
typedef struct par_job {
    rt_par_fn fn;
    void *arg;
    unsigned part;
    int64_t lo, hi;
} par_job;

static int par_main(void *a) {
    par_job *j = a;
    j->fn(j->arg, j->part, j->lo, j->hi);
    return 0;
}

unsigned rt_par_for(int64_t n, int64_t grain, rt_par_fn fn, void *arg) {
    unsigned t = rt_par_threads();
    if (grain < 1) grain = 1;
    if (n <= 0) return 0;
    if ((n + grain - 1) / grain < (int64_t)t) t = (unsigned)((n + grain - 1) / grain);
    par_job jobs[RT_PAR_MAX];
    thrd_t th[RT_PAR_MAX];
    bool started[RT_PAR_MAX] = {false};
    for (unsigned i = 0; i < t; i++) {
        jobs[i] = (par_job){fn, arg, i, n * (int64_t)i / t, n * (int64_t)(i + 1) / t};
        if (i > 0) started[i] = thrd_create(&th[i], par_main, &jobs[i]) == thrd_success;
    }
    par_main(&jobs[0]);
    for (unsigned i = 1; i < t; i++) {
        if (started[i])
            thrd_join(th[i], NULL);
        else
            par_main(&jobs[i]); /* a thread that cannot start runs its range here */
    }
    return t;
}
