/* mem.c - how much host memory this process may still use, and the
 * one-line message of a size that does not fit (every floor checks large
 * buffers against it before allocating them). */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The number after `key` in /proc/meminfo, in bytes; -1 when absent. */
static double meminfo(const char *key) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double v = -1;
    size_t kl = strlen(key);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = strtod(line + kl + 1, NULL) * 1024.0; /* kB */
            break;
        }
    fclose(f);
    return v;
}

/* The first number in a one-line file; -1 when absent or "max". */
static double file_number(const char *path) {
    FILE *f = fopen(path, "r");
    char buf[64];
    double v = -1;
    if (!f) return -1;
    if (fgets(buf, sizeof buf, f) && buf[0] >= '0' && buf[0] <= '9') v = strtod(buf, NULL);
    fclose(f);
    return v;
}

/* Room left under this process's cgroup (v2, else v1) memory limit; -1 when none. */
static double cgroup_room(void) {
    double lim = file_number("/sys/fs/cgroup/memory.max"),
           cur = file_number("/sys/fs/cgroup/memory.current");
    if (lim < 0) {
        lim = file_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        cur = file_number("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    }
    if (lim < 0 || lim > 1e18 || cur < 0) return -1;
    return lim > cur ? lim - cur : 0;
}

double ir_host_mem_available(void) {
    double avail = meminfo("MemAvailable");
    if (avail < 0) avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double cg = cgroup_room();
    if (cg >= 0 && cg < avail) avail = cg;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        FILE *f = fopen("/proc/self/status", "r"); /* our address space so far */
        char line[256];
        double vm = 0;
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "VmSize:", 7)) vm = strtod(line + 7, NULL) * 1024.0;
        if (f) fclose(f);
        double room = (double)rl.rlim_cur > vm ? (double)rl.rlim_cur - vm : 0;
        if (room < avail) avail = room;
    }
    return avail > 0 ? avail : 0;
}

const char *ir_fmt_bytes(double b, char *buf, size_t cap) {
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    double v = b;
    while (v >= 1000 && u < 6) v /= 1000, u++;
    if (u == 0)
        snprintf(buf, cap, "%.0f B", b);
    else
        snprintf(buf, cap, "%.1f %s", v, unit[u]);
    return buf;
}

bool ir_host_mem_check(double need, const char *what, char *err, size_t cap) {
    if (need < IR_HOST_MEM_UNCHECKED) return true;
    double avail = ir_host_mem_available();
    if (need <= avail) return true;
    char n[64], a[64];
    snprintf(err, cap, "%s needs %.0f bytes (%s) of host memory; %.0f bytes (%s) are available",
             what, need, ir_fmt_bytes(need, n, sizeof n), avail, ir_fmt_bytes(avail, a, sizeof a));
    return false;
}
