/* npy.c - NumPy .npy files (spec section 3): a strict, defensive reader and
 * an atomic writer. Supported: format versions 1.0, 2.0 and 3.0, C order,
 * dtypes <f4 <f2 <i4 |b1; every other file is one clear error line. */
#include "runtime/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the .npy code assumes a little-endian host");

/* What a header says. */
typedef struct npy_info {
    ir_dtype dtype;
    uint8_t rank;
    int64_t dim[IR_MAX_RANK];
    size_t data_off; /* offset of the first data byte in the file */
} npy_info;

/* Header parser state: text [p, end), messages prefixed with `name`. */
typedef struct npy_parser {
    const char *p, *end;
    const char *name;
    char *err;
    size_t cap;
} npy_parser;

/* Formats "NAME: MSG" into err (cap bytes, may be 0); returns false. */
static bool fail(const char *name, char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail(const char *name, char *err, size_t cap, const char *fmt, ...) {
    if (!err || !cap) return false;
    int n = snprintf(err, cap, "%s: ", name);
    if (n < 0 || (size_t)n >= cap) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* Copies at most 24 bytes of s (len bytes) into buf for quoting in a
 * message, replacing non-printable bytes by '?'. Returns buf. */
static const char *printable(const char *s, size_t len, char *buf) {
    size_t n = len < 24 ? len : 24;
    for (size_t i = 0; i < n; i++) buf[i] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    if (len > n)
        memcpy(buf + n, "...", 4);
    else
        buf[n] = '\0';
    return buf;
}

static const struct {
    const char *descr;
    ir_dtype dtype;
} npy_dtypes[] = {
    {"<f4", IR_F32},
    {"<f2", IR_F16},
    {"<i4", IR_I32},
    {"|b1", IR_BOOL},
};

/* The descr string stored for dtype t (bf16 is stored as <f4). */
static const char *descr_of(ir_dtype t) {
    for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; i++)
        if (npy_dtypes[i].dtype == t) return npy_dtypes[i].descr;
    return "<f4";
}

/* ---- header dictionary ----------------------------------------------------- */
/* Skips blanks (spaces, tabs, newlines) in the header text. */
static void skip_ws(npy_parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* Consumes character c (after blanks); false (no message) when absent. */
static bool accept(npy_parser *ps, char c) {
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

/* Reports what was found where `what` was expected. */
static bool expected(npy_parser *ps, const char *what) {
    char buf[32];
    if (ps->p >= ps->end)
        return fail(ps->name, ps->err, ps->cap, "malformed header: expected %s, found the end",
                    what);
    return fail(ps->name, ps->err, ps->cap, "malformed header: expected %s, found '%s'", what,
                printable(ps->p, (size_t)(ps->end - ps->p), buf));
}

/* Parses a quoted string (no escapes) into [*s, *s + *len). */
static bool parse_string(npy_parser *ps, const char **s, size_t *len) {
    skip_ws(ps);
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
        return expected(ps, "a quoted string");
    char q = *ps->p++;
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p != q) {
        if (*ps->p == '\\' || *ps->p == '\n') return expected(ps, "a plain quoted string");
        ps->p++;
    }
    if (ps->p >= ps->end) return expected(ps, "a closing quote");
    *s = start;
    *len = (size_t)(ps->p - start);
    ps->p++;
    return true;
}

/* Parses a non-negative decimal integer below IR_MAX_ELEMS. */
static bool parse_dim(npy_parser *ps, int64_t *v) {
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return expected(ps, "a dimension (non-negative integer)");
    int64_t x = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        if (!ir_mul_ok(x, 10, &x) || !ir_add_ok(x, *ps->p - '0', &x) || x >= IR_MAX_ELEMS)
            return fail(ps->name, ps->err, ps->cap, "dimension too large in header shape");
        ps->p++;
    }
    *v = x;
    return true;
}

/* Parses a shape tuple: "()", "(3,)", "(3, 4)", "(3, 4,)". */
static bool parse_shape(npy_parser *ps, npy_info *info) {
    if (!accept(ps, '(')) return expected(ps, "a shape tuple '('");
    info->rank = 0;
    if (accept(ps, ')')) return true;
    for (;;) {
        int64_t d = 0;
        if (!parse_dim(ps, &d)) return false;
        if (info->rank == IR_MAX_RANK)
            return fail(ps->name, ps->err, ps->cap, "rank above %d is not supported", IR_MAX_RANK);
        info->dim[info->rank++] = d;
        bool comma = accept(ps, ',');
        if (accept(ps, ')')) {
            if (info->rank == 1 && !comma)
                return fail(ps->name, ps->err, ps->cap,
                            "malformed header: shape '(N)' is not a tuple");
            return true;
        }
        if (!comma) return expected(ps, "',' or ')' in the shape");
    }
}

/* Parses one key's value into info; `seen` tracks keys already given. */
static bool parse_entry(npy_parser *ps, npy_info *info, unsigned *seen) {
    const char *k;
    size_t klen;
    char buf[32];
    if (!parse_string(ps, &k, &klen)) return false;
    if (!accept(ps, ':')) return expected(ps, "':'");
    unsigned bit = 0;
    if (klen == 5 && !memcmp(k, "descr", 5)) {
        const char *s;
        size_t len;
        if (!parse_string(ps, &s, &len)) return false;
        bool ok = false;
        for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0] && !ok; i++)
            if (len == 3 && !memcmp(s, npy_dtypes[i].descr, 3)) {
                info->dtype = npy_dtypes[i].dtype;
                ok = true;
            }
        if (!ok)
            return fail(ps->name, ps->err, ps->cap,
                        "unsupported dtype '%s' (supported: <f4 <f2 <i4 |b1)",
                        printable(s, len, buf));
        bit = 1;
    } else if (klen == 13 && !memcmp(k, "fortran_order", 13)) {
        skip_ws(ps);
        if ((size_t)(ps->end - ps->p) >= 5 && !memcmp(ps->p, "False", 5)) {
            ps->p += 5;
        } else if ((size_t)(ps->end - ps->p) >= 4 && !memcmp(ps->p, "True", 4)) {
            return fail(ps->name, ps->err, ps->cap,
                        "Fortran-order arrays are not supported (save it in C order)");
        } else {
            return expected(ps, "True or False for fortran_order");
        }
        bit = 2;
    } else if (klen == 5 && !memcmp(k, "shape", 5)) {
        if (!parse_shape(ps, info)) return false;
        bit = 4;
    } else {
        return fail(ps->name, ps->err, ps->cap, "malformed header: unknown key '%s'",
                    printable(k, klen, buf));
    }
    if (*seen & bit)
        return fail(ps->name, ps->err, ps->cap, "malformed header: key '%s' given twice",
                    printable(k, klen, buf));
    *seen |= bit;
    return true;
}

/* Parses the header dictionary text (hlen bytes, ending in '\n'). */
static bool parse_dict(const char *name, const char *text, size_t hlen, npy_info *info, char *err,
                       size_t cap) {
    npy_parser ps = {text, text + hlen, name, err, cap};
    if (hlen == 0 || text[hlen - 1] != '\n')
        return fail(name, err, cap, "malformed header: it does not end with a newline");
    if (!accept(&ps, '{')) return expected(&ps, "'{'");
    unsigned seen = 0;
    while (!accept(&ps, '}')) {
        if (!parse_entry(&ps, info, &seen)) return false;
        if (!accept(&ps, ',')) {
            if (accept(&ps, '}')) break;
            return expected(&ps, "',' or '}'");
        }
    }
    skip_ws(&ps);
    if (ps.p != ps.end) return expected(&ps, "the end of the header");
    if (seen != 7)
        return fail(name, err, cap, "malformed header: missing key '%s'",
                    !(seen & 1)   ? "descr"
                    : !(seen & 2) ? "fortran_order"
                                  : "shape");
    return true;
}

/* ---- preamble and data checks -------------------------------------------- */
/* Parses the magic, version and header length from the first `avail` bytes
 * (at least min(total, 12)) of a file of `total` bytes. */
static bool parse_preamble(const char *name, const unsigned char *b, size_t avail, size_t total,
                           size_t *hoff, size_t *hlen, char *err, size_t cap) {
    if (total < 6 || memcmp(b, "\x93NUMPY", 6) != 0)
        return fail(name, err, cap, "not a .npy file (missing the \\x93NUMPY magic)");
    if (total < 10)
        return fail(name, err, cap, "truncated .npy file (%zu bytes, no header length)", total);
    if (b[6] == 1 && b[7] == 0) {
        *hoff = 10;
        *hlen = (size_t)b[8] | (size_t)b[9] << 8;
    } else if ((b[6] == 2 || b[6] == 3) && b[7] == 0) {
        if (total < 12 || avail < 12)
            return fail(name, err, cap, "truncated .npy file (%zu bytes, no header length)", total);
        *hoff = 12;
        *hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    } else {
        return fail(name, err, cap,
                    "unsupported .npy format version %u.%u (supported: 1.0, 2.0, 3.0)", b[6], b[7]);
    }
    if (*hlen > total - *hoff)
        return fail(name, err, cap,
                    "truncated header (it says %zu bytes, the file has %zu after the preamble)",
                    *hlen, total - *hoff);
    return true;
}

/* Formats a shape like "(3, 4)" into buf (cap >= 200). */
static const char *shape_text(const npy_info *info, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < info->rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)info->dim[i]);
    if (n < cap) snprintf(buf + n, cap - n, info->rank == 1 ? ",)" : ")");
    return buf;
}

/* Checks that the data after the header is exactly what the shape needs;
 * sets *bytes to that size. */
static bool check_data(const char *name, const npy_info *info, size_t total, size_t *bytes,
                       char *err, size_t cap) {
    rt_tensor t = {.dtype = info->dtype, .rank = info->rank};
    memcpy(t.dim, info->dim, sizeof t.dim);
    char sb[256];
    if (!rt_tensor_bytes(&t, bytes))
        return fail(name, err, cap, "shape %s is too large (element count overflows)",
                    shape_text(info, sb, sizeof sb));
    size_t have = total - info->data_off;
    if (have < *bytes)
        return fail(name, err, cap,
                    "truncated data: shape %s of %s needs %zu bytes, the file has %zu",
                    shape_text(info, sb, sizeof sb), descr_of(info->dtype), *bytes, have);
    if (have > *bytes)
        return fail(name, err, cap,
                    "the file has %zu bytes of data but shape %s of %s needs %zu (header and data "
                    "disagree)",
                    have, shape_text(info, sb, sizeof sb), descr_of(info->dtype), *bytes);
    return true;
}

/* Makes t an allocated tensor of info's dtype and shape. */
static bool make_tensor(const char *name, const npy_info *info, rt_tensor *t, char *err,
                        size_t cap) {
    memset(t, 0, sizeof *t);
    t->dtype = info->dtype;
    t->rank = info->rank;
    memcpy(t->dim, info->dim, sizeof t->dim);
    size_t bytes;
    char why[256];
    if (rt_tensor_bytes(t, &bytes) &&
        !ir_host_mem_check((double)bytes, "the array data", why, sizeof why))
        return fail(name, err, cap, why);
    if (!rt_tensor_alloc(t)) return fail(name, err, cap, "out of memory for the array data");
    return true;
}

/* Bool bytes other than 0 and 1 are normalised to 1. */
static void normalise_bool(rt_tensor *t, size_t bytes) {
    if (t->dtype != IR_BOOL) return;
    uint8_t *d = t->data;
    for (size_t i = 0; i < bytes; i++) d[i] = d[i] != 0;
}

bool rt_npy_parse(const char *name, const unsigned char *buf, size_t len, rt_tensor *t, char *err,
                  size_t cap) {
    size_t hoff = 0, hlen = 0, bytes;
    npy_info info = {0};
    if (!parse_preamble(name, buf, len, len, &hoff, &hlen, err, cap)) return false;
    if (!parse_dict(name, (const char *)buf + hoff, hlen, &info, err, cap)) return false;
    info.data_off = hoff + hlen;
    if (!check_data(name, &info, len, &bytes, err, cap)) return false;
    if (!make_tensor(name, &info, t, err, cap)) return false;
    if (bytes) memcpy(t->data, buf + info.data_off, bytes);
    normalise_bool(t, bytes);
    return true;
}

/* Reads exactly n bytes at the current position; false on short read. */
static bool read_exact(FILE *f, void *p, size_t n) { return n == 0 || fread(p, 1, n, f) == n; }

/* Reads header and data from an open regular file of `total` bytes. */
static bool read_open(const char *path, FILE *f, size_t total, rt_tensor *t, char *err,
                      size_t cap) {
    unsigned char pre[12] = {0};
    size_t avail = total < 12 ? total : 12, hoff = 0, hlen = 0, bytes;
    if (!read_exact(f, pre, avail)) return fail(path, err, cap, "read error: %s", strerror(errno));
    if (!parse_preamble(path, pre, avail, total, &hoff, &hlen, err, cap)) return false;
    char *text = malloc(hlen ? hlen : 1);
    if (!text) return fail(path, err, cap, "out of memory for the header");
    bool ok = fseek(f, (long)hoff, SEEK_SET) == 0 && read_exact(f, text, hlen);
    npy_info info = {0};
    if (!ok)
        fail(path, err, cap, "read error in the header");
    else
        ok = parse_dict(path, text, hlen, &info, err, cap);
    free(text);
    if (!ok) return false;
    info.data_off = hoff + hlen;
    if (!check_data(path, &info, total, &bytes, err, cap)) return false;
    if (!make_tensor(path, &info, t, err, cap)) return false;
    if (!read_exact(f, t->data, bytes)) {
        rt_tensor_free(t);
        return fail(path, err, cap, "read error in the data");
    }
    normalise_bool(t, bytes);
    return true;
}

bool rt_npy_read(const char *path, rt_tensor *t, char *err, size_t cap) {
    struct stat st;
    int fd = rt_file_open_read(path, &st, err, cap);
    if (fd < 0) return false;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return fail(path, err, cap, "cannot open: %s", strerror(e));
    }
    bool ok;
    if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX)
        ok = fail(path, err, cap, "file too large");
    else
        ok = read_open(path, f, (size_t)st.st_size, t, err, cap);
    fclose(f);
    return ok;
}

/* ---- writer ------------------------------------------------------------------ */
/* Builds the padded header text (total preamble + header a multiple of 64,
 * ending in '\n') for t into buf; returns its length and the version. */
static size_t build_header(const rt_tensor *t, char *buf, size_t cap, int *version) {
    npy_info info = {.dtype = t->dtype, .rank = t->rank};
    memcpy(info.dim, t->dim, sizeof info.dim);
    char sb[256];
    int n = snprintf(buf, cap, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr_of(t->dtype == IR_BF16 ? IR_F32 : t->dtype),
                     shape_text(&info, sb, sizeof sb));
    size_t len = (size_t)n;
    *version = len + 11 > 65535 ? 2 : 1;
    size_t pre = *version == 1 ? 10 : 12;
    while ((pre + len + 1) % 64 != 0 && len + 2 < cap) buf[len++] = ' ';
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}

/* Writes preamble, header and data of t (already at a stored dtype). */
static bool write_stream(FILE *f, const rt_tensor *t) {
    char hdr[512];
    int version;
    size_t hlen = build_header(t, hdr, sizeof hdr, &version);
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0};
    size_t npre = version == 1 ? 10 : 12;
    for (size_t i = 0; i < npre - 8; i++) pre[8 + i] = (unsigned char)(hlen >> (8 * i));
    size_t bytes;
    if (!rt_tensor_bytes(t, &bytes)) return false;
    return fwrite(pre, 1, npre, f) == npre && fwrite(hdr, 1, hlen, f) == hlen &&
           (bytes == 0 || fwrite(t->data, 1, bytes, f) == bytes);
}

/* Writes t's file image to f (bf16 converted to <f4 first); false with a
 * message on failure. */
static bool stage_one(const char *path, FILE *f, const rt_tensor *t, char *err, size_t cap) {
    if (t->dtype >= IR_NDTYPES || t->rank > IR_MAX_RANK)
        return fail(path, err, cap, "invalid tensor");
    bool ok;
    errno = 0;
    if (t->dtype != IR_BF16) {
        ok = write_stream(f, t);
    } else {
        rt_tensor f32;
        if (!rt_tensor_cast(t, IR_F32, &f32)) return fail(path, err, cap, "out of memory");
        ok = write_stream(f, &f32);
        rt_tensor_free(&f32);
    }
    return ok || fail(path, err, cap, "cannot write: %s", errno ? strerror(errno) : "write error");
}

bool rt_npy_write_all(const char *const *paths, const rt_tensor *ts, unsigned n, char *err,
                      size_t cap) {
    rt_outset *set = rt_outset_new();
    bool ok = true;
    for (unsigned k = 0; k < n && ok; k++) {
        FILE *f = rt_outset_open(set, paths[k], err, cap);
        ok = f && stage_one(paths[k], f, &ts[k], err, cap);
    }
    ok = ok && rt_outset_commit(set, err, cap);
    rt_outset_free(set);
    return ok;
}

bool rt_npy_write(const char *path, const rt_tensor *t, char *err, size_t cap) {
    return rt_npy_write_all(&path, t, 1, err, cap);
}
