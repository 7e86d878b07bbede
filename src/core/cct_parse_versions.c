/*
 * cct_parse_versions.c - NCCL versions and version specs, in the one parser's rules.
 *
 * A version is MAJOR.MINOR[.PATCH] in decimal digits (major 1..99, minor and patch 0..99),
 * as NCCL_VERSION_CODE reads it: 2.28.9 -> 22809.  A spec is what `--nccl-versions` takes
 * and a table's `fingerprint.nccl_versions` holds: a comma list of at most
 * CCT_NCCL_VERSIONS_MAX items, each a version or a range LOW..HIGH of two (inclusive, LOW
 * not above HIGH).  A version without a patch stands for every patch of that minor release
 * (2.28 is 2.28.0..2.28.99); as a range's low end it starts at .0, as the high end it ends
 * at .99.  Nothing else is accepted: no spaces, no open ends, no wildcards, no suffixes
 * like "-1", so a table says exactly which releases it was widened to.
 */
#include "cct_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Up to len characters of text as MAJOR.MINOR[.PATCH]; the range it stands for. */
static bool version_span(const char *text, size_t len, int *lo, int *hi)
{
    long part[3] = {0, 0, 0};
    size_t i = 0;
    int n = 0;
    while (n < 3) {
        if (i >= len || !isdigit((unsigned char)text[i]))
            return false;
        long v = 0;
        size_t digits = 0;
        while (i < len && isdigit((unsigned char)text[i])) {
            v = v * 10 + (text[i++] - '0');
            if (++digits > 2)
                return false; /* every part is at most 99 */
        }
        part[n++] = v;
        if (i == len)
            break;
        if (text[i++] != '.')
            return false;
    }
    if (i != len || n < 2 || part[0] < 1)
        return false;
    int base = (int)(part[0] * 10000 + part[1] * 100);
    *lo = n == 3 ? base + (int)part[2] : base;
    *hi = n == 3 ? base + (int)part[2] : base + 99;
    return true;
}

int cct_parse_nccl_version(const char *text)
{
    int lo, hi;
    if (!text || !version_span(text, strlen(text), &lo, &hi))
        return -1;
    return lo;
}

typedef struct spec_ctx {
    cct_nccl_versions *out;
} spec_ctx;

static cct_status spec_item(void *ctx, const char *what, const char *item, size_t index,
                            cct_error *err)
{
    (void)index;
    cct_nccl_versions *v = ((spec_ctx *)ctx)->out;
    const char *dots = strstr(item, "..");
    int lo, hi, lo2, hi2;
    if (!dots) {
        if (!version_span(item, strlen(item), &lo, &hi))
            return cct_error_set(err, CCT_EINVAL,
                                 "%s: '%s' is not an NCCL version (MAJOR.MINOR or "
                                 "MAJOR.MINOR.PATCH, e.g. 2.28 or 2.28.9) or a range LOW..HIGH",
                                 what, item);
    } else {
        const char *high = dots + 2;
        if (!version_span(item, (size_t)(dots - item), &lo, &hi) ||
            !version_span(high, strlen(high), &lo2, &hi2))
            return cct_error_set(err, CCT_EINVAL,
                                 "%s: '%s' is not a range of two NCCL versions (e.g. 2.28..2.30)",
                                 what, item);
        if (lo > hi2)
            return cct_error_set(err, CCT_EINVAL, "%s: range '%s' ends below where it starts", what,
                                 item);
        hi = hi2;
    }
    v->lo[v->n] = lo;
    v->hi[v->n] = hi;
    v->n++;
    return CCT_OK;
}

cct_status cct_parse_nccl_versions(const char *what, const char *text, cct_nccl_versions *out,
                                   cct_error *err)
{
    cct_nccl_versions v;
    memset(&v, 0, sizeof v);
    spec_ctx ctx = {&v};
    cct_status st = cct_parse_list(what, text, CCT_NCCL_VERSIONS_MAX, spec_item, &ctx, err);
    if (st == CCT_OK && out)
        *out = v;
    return st;
}

bool cct_nccl_versions_contain(const cct_nccl_versions *v, int code)
{
    for (size_t i = 0; v && i < v->n; i++)
        if (code >= v->lo[i] && code <= v->hi[i])
            return true;
    return false;
}
