/*
 * cct_parse.c - strict parsing of numbers from text.
 *
 * One set of rules for every reader of numbers (flags, logs, CSV, environment): decimal
 * digits only where an integer is expected (no spaces, no '+', no hex, no overflow), and a
 * plain decimal or exponent form for reals (finite; no hex floats, inf or nan).
 */
#include "cct_parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

bool cct_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s))
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool cct_parse_long(const char *s, long min, long max, long *out)
{
    if (!s)
        return false;
    bool neg = *s == '-';
    uint64_t mag;
    if (!cct_parse_u64(s + neg, &mag))
        return false;
    if (!neg && mag > (uint64_t)LONG_MAX)
        return false;
    if (neg && mag > (uint64_t)LONG_MAX + 1)
        return false;
    long v = neg ? (mag == (uint64_t)LONG_MAX + 1 ? LONG_MIN : -(long)mag) : (long)mag;
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool cct_parse_double(const char *s, double *out)
{
    if (!s)
        return false;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    size_t digits = 0;
    while (isdigit((unsigned char)*p)) {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p)
        return false;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end != p || !isfinite(v))
        return false;
    *out = v;
    return true;
}
