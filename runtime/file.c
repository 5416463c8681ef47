/* file.c - the one way tx reads and writes files (every output and input path
 * of the CLI, the C API, .npy files and the calibration file goes through it).
 *
 * Reading: only regular files, opened without blocking (a FIFO neither blocks
 * the open nor is read) and read with O_NONBLOCK kept, so a regular-looking
 * file whose read would block (/proc/kmsg) fails at once; at most `max` bytes.
 *
 * Writing: an rt_outset collects a run's outputs and commits them together.
 * A path that does not exist or is a regular file is written to a temporary
 * beside it and renamed into place at commit; a symbolic link is followed (the
 * file it names is replaced, the link stays); an existing character device or
 * FIFO is streamed to (the bytes are staged in an unnamed temporary file and
 * copied at commit, so nothing reaches it unless every output was produced);
 * anything else (a directory, a socket, a block device) is refused before any
 * byte is written. "-" is standard output, flushed and checked at commit.
 * The renames of one commit happen under an exclusive flock(2) of each target
 * directory, so two processes committing sets to the same paths serialise:
 * the files of one set are never left beside files of the other. A rename that
 * fails puts back the files already replaced (from hard-link backups). */
#define _DEFAULT_SOURCE /* realpath, flock */
#include "runtime/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* "PATH: MSG" into err; returns false. */
static bool ferr(char *err, size_t cap, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool ferr(char *err, size_t cap, const char *path, const char *fmt, ...) {
    if (!err || !cap) return false;
    int n = snprintf(err, cap, "%s: ", path);
    if (n < 0 || (size_t)n >= cap) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- reading ------------------------------------------------------------- */

int rt_file_open_read(const char *path, struct stat *st, char *err, size_t cap) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return ferr(err, cap, path, "cannot open: %s", strerror(errno)), -1;
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return ferr(err, cap, path, "cannot stat: %s", strerror(e)), -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return ferr(err, cap, path,
                    S_ISDIR(st->st_mode) ? "a directory, not a regular file"
                                         : "not a regular file"),
               -1;
    }
    return fd;
}

bool rt_file_read_fd(int fd, const char *path, void *buf, size_t n, char *err, size_t cap) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got > (1u << 30) ? (1u << 30) : n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return ferr(err, cap, path, "reading would block (not the contents of a regular file)");
        if (r < 0) return ferr(err, cap, path, "read error: %s", strerror(errno));
        if (r == 0) return ferr(err, cap, path, "truncated (the file ended early)");
        got += (size_t)r;
    }
    return true;
}

char *rt_file_read_all(const char *path, size_t max, size_t *len, char *err, size_t cap) {
    struct stat st;
    int fd = rt_file_open_read(path, &st, err, cap);
    if (fd < 0) return NULL;
    size_t n = 0, bufcap = 4096;
    char *buf = malloc(bufcap + 1);
    bool ok = buf != NULL;
    if (!ok) ferr(err, cap, path, "out of memory");
    while (ok) {
        if (n == bufcap) {
            size_t nc = bufcap > max ? max + 1 : bufcap * 2;
            char *nb = nc > bufcap ? realloc(buf, nc + 1) : NULL;
            if (!nb) {
                ok = ferr(err, cap, path, "out of memory");
                break;
            }
            buf = nb, bufcap = nc;
        }
        ssize_t r = read(fd, buf + n, bufcap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            ok = ferr(err, cap, path, "reading would block (not the contents of a regular file)");
        else if (r < 0)
            ok = ferr(err, cap, path, "read error: %s", strerror(errno));
        if (r <= 0) break;
        n += (size_t)r;
        if (n > max) ok = ferr(err, cap, path, "larger than %zu bytes", max);
    }
    close(fd);
    if (!ok) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* ---- writing ------------------------------------------------------------- */

typedef enum { OUT_STDOUT, OUT_RENAME, OUT_STREAM } out_kind;

typedef struct rt_outfile {
    out_kind kind;
    char *path;   /* as given (for messages) */
    char *target; /* OUT_RENAME: the path renamed over (symbolic links resolved) */
    char *tmp;    /* OUT_RENAME: the temporary beside target */
    char *backup; /* during commit: hard link to the replaced file, or NULL */
    bool replaced;
    int fd;  /* OUT_STREAM: the device or FIFO */
    FILE *f; /* what the caller writes to */
} rt_outfile;

struct rt_outset {
    rt_outfile *v;
    unsigned n, capn;
    bool committed;
};

bool rt_out_is_stream(const char *path) {
    struct stat st;
    return !strcmp(path, "-") ||
           (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)));
}

rt_outset *rt_outset_new(void) { return ir_xcalloc(1, sizeof(rt_outset)); }

/* The directory part of p ("." when none), malloc'ed. */
static char *dir_of(const char *p) {
    const char *s = strrchr(p, '/');
    if (!s) return ir_xstrdup(".");
    if (s == p) return ir_xstrdup("/");
    char *d = ir_xmalloc((size_t)(s - p) + 1);
    memcpy(d, p, (size_t)(s - p));
    d[s - p] = 0;
    return d;
}

/* Opens an existing device or FIFO for streaming without blocking (a FIFO
 * with no reader is an error, not a hang). -1 with a message. */
static int open_stream(const char *path, char *err, size_t cap) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENXIO)
        return ferr(err, cap, path, "cannot write: a FIFO with no reader"), -1;
    if (fd < 0) return ferr(err, cap, path, "cannot write: %s", strerror(errno)), -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
        int e = errno;
        close(fd);
        return ferr(err, cap, path, "cannot write: %s", strerror(e)), -1;
    }
    return fd;
}

/* Classifies path and prepares o (everything but o->f's stream for RENAME). */
static bool prepare(rt_outfile *o, const char *path, char *err, size_t cap) {
    struct stat st;
    o->fd = -1;
    o->path = ir_xstrdup(path);
    if (!strcmp(path, "-")) {
        o->kind = OUT_STDOUT;
        o->f = stdout;
        return true;
    }
    if (!*path) return ferr(err, cap, "''", "cannot write: empty path");
    bool exists = stat(path, &st) == 0; /* follows links */
    if (!exists && errno != ENOENT)
        return ferr(err, cap, path, "cannot write: %s", strerror(errno));
    if (exists && S_ISDIR(st.st_mode))
        return ferr(err, cap, path, "cannot write: %s", strerror(EISDIR));
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        if ((o->fd = open_stream(path, err, cap)) < 0) return false;
        o->kind = OUT_STREAM;
        if (!(o->f = tmpfile()))
            return ferr(err, cap, path, "cannot stage the output: %s", strerror(errno));
        return true;
    }
    if (exists && !S_ISREG(st.st_mode))
        return ferr(err, cap, path, "cannot write: not a regular file, character device or FIFO");
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char *real = exists ? realpath(path, NULL) : NULL;
        if (!real) return ferr(err, cap, path, "cannot write: a symbolic link to a missing file");
        o->target = ir_xstrdup(real);
        free(real);
    } else {
        o->target = ir_xstrdup(path);
    }
    o->kind = OUT_RENAME;
    o->tmp = ir_xmalloc(strlen(o->target) + 16);
    sprintf(o->tmp, "%s.tmp.XXXXXX", o->target);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp), o->tmp = NULL;
        return ferr(err, cap, path, "cannot write: %s", strerror(e));
    }
    (void)fchmod(fd, exists ? (st.st_mode & 07777) : 0644);
    if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        return ferr(err, cap, path, "cannot write: %s", strerror(e));
    }
    return true;
}

/* Releases o, removing its temporary (if any). */
static void drop(rt_outfile *o) {
    if (o->f && o->kind != OUT_STDOUT) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    if (o->backup) unlink(o->backup);
    if (o->fd >= 0) close(o->fd);
    free(o->path), free(o->target), free(o->tmp), free(o->backup);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}

FILE *rt_outset_open(rt_outset *s, const char *path, char *err, size_t cap) {
    if (s->n == s->capn)
        s->v = ir_xrealloc(s->v, (s->capn = s->capn ? 2 * s->capn : 4) * sizeof *s->v);
    rt_outfile *o = &s->v[s->n];
    memset(o, 0, sizeof *o);
    if (!prepare(o, path, err, cap)) {
        drop(o);
        return NULL;
    }
    for (unsigned k = 0; k < s->n;
         k++) /* one path twice in one set: the second would win silently */
        if ((o->target && s->v[k].target && !strcmp(o->target, s->v[k].target)) ||
            (o->kind == OUT_STDOUT && s->v[k].kind == OUT_STDOUT)) {
            ferr(err, cap, path, "cannot write: named twice among this run's outputs");
            drop(o);
            return NULL;
        }
    s->n++;
    return o->f;
}

/* Copies the staged bytes of a stream output to its device. */
static bool copy_stream(rt_outfile *o, char *err, size_t cap) {
    char buf[65536];
    if (fflush(o->f) != 0 || fseek(o->f, 0, SEEK_SET) != 0)
        return ferr(err, cap, o->path, "cannot write: %s", strerror(errno));
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, o->f)) > 0)
        for (size_t off = 0; off < r;) {
            ssize_t w = write(o->fd, buf + off, r - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0)
                return ferr(err, cap, o->path, "cannot write: %s",
                            w < 0 ? strerror(errno) : "short write");
            off += (size_t)w;
        }
    if (ferror(o->f)) return ferr(err, cap, o->path, "cannot write: staging read error");
    return true;
}

/* Takes an exclusive lock on every distinct directory holding a renamed
 * output, in a fixed order (device, inode) so two sets cannot deadlock.
 * fds[] gets the open directories (-1 where none). */
static void lock_dirs(rt_outset *s, int *fds) {
    struct {
        dev_t dev;
        ino_t ino;
        int fd;
    } *d = ir_xcalloc(s->n + 1, sizeof *d);
    unsigned nd = 0;
    for (unsigned k = 0; k < s->n; k++) {
        fds[k] = -1;
        if (s->v[k].kind != OUT_RENAME) continue;
        char *dir = dir_of(s->v[k].target);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        free(dir);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            if (fd >= 0) close(fd);
            continue;
        }
        bool seen = false;
        for (unsigned j = 0; j < nd; j++) seen |= d[j].dev == st.st_dev && d[j].ino == st.st_ino;
        if (seen) {
            close(fd);
            continue;
        }
        d[nd].dev = st.st_dev, d[nd].ino = st.st_ino, d[nd++].fd = fd;
    }
    for (unsigned i = 1; i < nd; i++) /* insertion sort by (dev, ino) */
        for (unsigned j = i; j > 0 && (d[j - 1].dev > d[j].dev ||
                                       (d[j - 1].dev == d[j].dev && d[j - 1].ino > d[j].ino));
             j--) {
            __typeof__(*d) t = d[j];
            d[j] = d[j - 1], d[j - 1] = t;
        }
    for (unsigned j = 0; j < nd; j++) {
        while (flock(d[j].fd, LOCK_EX) != 0 && errno == EINTR) {}
        fds[j] = d[j].fd;
    }
    free(d);
}

/* Puts back what the renames of s[0..upto) replaced. */
static void roll_back(rt_outset *s, unsigned upto) {
    for (unsigned k = 0; k < upto; k++) {
        rt_outfile *o = &s->v[k];
        if (o->kind != OUT_RENAME || !o->replaced) continue;
        if (o->backup && rename(o->backup, o->target) == 0) {
            free(o->backup), o->backup = NULL;
        } else if (!o->backup) {
            unlink(o->target);
        }
    }
}

bool rt_outset_commit(rt_outset *s, char *err, size_t cap) {
    bool ok = true;
    for (unsigned k = 0; k < s->n && ok;
         k++) { /* finish every stream first: nothing is in place yet */
        rt_outfile *o = &s->v[k];
        if (o->kind == OUT_RENAME) {
            int e = 0;
            if (fflush(o->f) != 0 || ferror(o->f)) e = errno ? errno : EIO;
            if (fclose(o->f) != 0 && !e) e = errno;
            o->f = NULL;
            if (e) ok = ferr(err, cap, o->path, "cannot write: %s", strerror(e));
        }
    }
    for (unsigned k = 0; k < s->n && ok; k++) { /* the only steps that cannot be undone */
        rt_outfile *o = &s->v[k];
        if (o->kind == OUT_STDOUT && (fflush(stdout) != 0 || ferror(stdout)))
            ok = ferr(err, cap, "standard output", "cannot write: %s",
                      strerror(errno ? errno : EIO));
        if (o->kind == OUT_STREAM) ok = copy_stream(o, err, cap);
    }
    if (!ok) return false;
    int *locks = ir_xcalloc(s->n + 1, sizeof *locks);
    lock_dirs(s, locks);
    unsigned k;
    for (k = 0; k < s->n && ok; k++) {
        rt_outfile *o = &s->v[k];
        if (o->kind != OUT_RENAME) continue;
        struct stat st;
        if (lstat(o->target, &st) == 0 &&
            S_ISREG(st.st_mode)) { /* keep the old file until all are in */
            o->backup = ir_xmalloc(strlen(o->target) + 16);
            sprintf(o->backup, "%s.tmp.XXXXXX", o->target);
            int fd = mkstemp(o->backup);
            if (fd >= 0) close(fd), unlink(o->backup);
            if (fd < 0 || link(o->target, o->backup) != 0) free(o->backup), o->backup = NULL;
        }
        if (rename(o->tmp, o->target) != 0) {
            ok = ferr(err, cap, o->path, "cannot write: %s", strerror(errno));
            break;
        }
        free(o->tmp), o->tmp = NULL;
        o->replaced = true;
    }
    if (!ok) roll_back(s, k);
    for (unsigned j = 0; j < s->n; j++)
        if (locks[j] >= 0) close(locks[j]); /* closing releases the lock */
    free(locks);
    s->committed = ok;
    return ok;
}

void rt_outset_free(rt_outset *s) {
    if (!s) return;
    for (unsigned k = 0; k < s->n; k++) drop(&s->v[k]); /* uncommitted: temporaries removed */
    free(s->v);
    free(s);
}
