/*
 * import_test_util.h - helpers shared by the importer/exporter tests: paths under the
 * source tree's tests/ folder (CCT_TEST_SRCDIR, set by tests/meson.build), whole-file
 * reads, string edits of sample logs, and assertions on imported points.
 *
 * Header-only (static functions) so each test stays one program.  Returned strings are
 * malloc'ed and owned by the caller.
 */
#ifndef IMPORT_TEST_UTIL_H
#define IMPORT_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cct_import.h"

/* tests/REL as an absolute path; free() it. */
static inline char *tu_path(const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    if (!src)
        src = "tests";
    size_t n = strlen(src) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", src, rel);
    return p;
}

/* The whole file tests/REL, NUL terminated; *len gets its size. */
static inline char *tu_read(const char *rel, size_t *len)
{
    char *path = tu_path(rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    free(path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* text with the first occurrence of from replaced by to (which must occur). */
static inline char *tu_replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("'%s' not in the sample", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    size_t head = (size_t)(at - text);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

/* Import tests/REL under its base name with opts (NULL: none); returns the status. */
static inline cct_status tu_import(const char *rel, const cct_import_opts *opts,
                                   cct_import_result *r, cct_error *err)
{
    size_t len;
    char *data = tu_read(rel, &len);
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    cct_import_result_init(r);
    cct_status rc = cct_import_buffer(data, len, base, CCT_IMPORT_AUTO, opts, r, err);
    free(data);
    return rc;
}

static inline cct_status tu_import_text(const char *text, const char *name,
                                        const cct_import_opts *opts, cct_import_result *r,
                                        cct_error *err)
{
    cct_import_result_init(r);
    return cct_import_buffer(text, strlen(text), name, CCT_IMPORT_AUTO, opts, r, err);
}

#define tu_assert_contains(haystack, needle)                                                       \
    do {                                                                                           \
        if (!strstr((haystack), (needle)))                                                         \
            fail_msg("'%s' does not contain '%s'", (haystack), (needle));                          \
    } while (0)

#define tu_assert_nan(x)                                                                           \
    do {                                                                                           \
        if (!isnan(x))                                                                             \
            fail_msg("%s = %g, expected NaN", #x, (double)(x));                                    \
    } while (0)

#define tu_assert_double(a, b)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= 1e-9 * (fabs(b_) + 1.0)))                                           \
            fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);                                    \
    } while (0)

#endif
