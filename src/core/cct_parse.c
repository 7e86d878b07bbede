/*
 * cct_parse.c - strict parsing of numbers, byte sizes, lists and enumerations from text.
 *
 * One set of rules for every reader of text (flags, logs, CSV, environment): decimal
 * digits only where an integer is expected (no spaces, no '+', no hex, no overflow), a
 * plain decimal or exponent form for reals (finite; no hex floats, inf or nan), sizes as
 * digits with a binary unit, lists split at commas with no empty item.  The flag forms
 * put the flag and the text in the error, so every command words its errors alike.
 */
#include "cct_parse.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cct_names.h"

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

/* The shift of a size unit ("", "B", "K", "KB", "KiB", ... "TiB", any case); -1 if none. */
static int unit_shift(const char *u)
{
    static const char prefixes[] = "KMGT";
    if (!*u || strcasecmp(u, "B") == 0)
        return 0;
    const char *at = strchr(prefixes, toupper((unsigned char)u[0]));
    if (!at || !u[0])
        return -1;
    const char *rest = u + 1;
    if (*rest && strcasecmp(rest, "B") != 0 && strcasecmp(rest, "iB") != 0)
        return -1;
    return 10 * (int)(at - prefixes + 1);
}

cct_status cct_parse_bytes(const char *text, uint64_t *out, cct_error *err)
{
    if (!text || !*text)
        return cct_error_set(err, CCT_EINVAL, "empty size");
    if (strcasecmp(text, "inf") == 0) {
        *out = CCT_BYTES_INF;
        return CCT_OK;
    }
    size_t n = 0;
    while (isdigit((unsigned char)text[n]))
        n++;
    if (n == 0)
        return cct_error_set(err, CCT_EINVAL, "'%s' is not a size (expected e.g. 4096, 64K, 8MiB)",
                             text);
    char digits[32];
    if (n >= sizeof digits)
        return cct_error_set(err, CCT_EINVAL, "size '%s' is too large", text);
    memcpy(digits, text, n);
    digits[n] = '\0';
    uint64_t value;
    if (!cct_parse_u64(digits, &value))
        return cct_error_set(err, CCT_EINVAL, "size '%s' is too large", text);
    int shift = unit_shift(text + n);
    if (shift < 0)
        return cct_error_set(err, CCT_EINVAL, "size '%s' has an unknown unit '%s'", text, text + n);
    if (shift && value > (UINT64_MAX >> shift))
        return cct_error_set(err, CCT_EINVAL, "size '%s' is too large", text);
    *out = value << shift;
    return CCT_OK;
}

cct_status cct_parse_flag_long(const char *flag, const char *text, long min, long max, long *out,
                               cct_error *err)
{
    if (!cct_parse_long(text, min, max, out))
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not an integer in %ld..%ld", flag,
                             text ? text : "", min, max);
    return CCT_OK;
}

cct_status cct_parse_flag_double(const char *flag, const char *text, double min, double max,
                                 double *out, cct_error *err)
{
    double v = 0.0;
    bool ok = text && *text != '+' && (min < 0 || *text != '-') && cct_parse_double(text, &v);
    if (!ok || !(v >= min && v <= max))
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a number in %g..%g", flag,
                             text ? text : "", min, max);
    *out = v;
    return CCT_OK;
}

cct_status cct_parse_flag_fraction(const char *flag, const char *text, double *out, cct_error *err)
{
    double v = 0.0;
    if (!text || *text == '+' || *text == '-' || !cct_parse_double(text, &v) || !(v < 1.0))
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a fraction in [0, 1)", flag,
                             text ? text : "");
    *out = v;
    return CCT_OK;
}

cct_status cct_parse_flag_size(const char *flag, const char *text, uint64_t min, uint64_t max,
                               uint64_t *out, cct_error *err)
{
    uint64_t v;
    if (!text || cct_parse_bytes(text, &v, NULL) != CCT_OK || v == CCT_BYTES_INF)
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a size (e.g. 4096, 64K, 8MiB)", flag,
                             text ? text : "");
    if (v < min || v > max) {
        char lo[32], hi[32];
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is outside %s..%s", flag, text,
                             cct_format_bytes_exact(min, lo, sizeof lo),
                             cct_format_bytes_exact(max, hi, sizeof hi));
    }
    *out = v;
    return CCT_OK;
}

cct_status cct_parse_enum(const char *flag, const char *text, const cct_enum_name *names, int *out,
                          cct_error *err)
{
    size_t n = 0;
    for (; names[n].name; n++)
        if (text && strcasecmp(text, names[n].name) == 0) {
            *out = names[n].value;
            return CCT_OK;
        }
    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof list; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int k = snprintf(list + used, sizeof list - used, "%s%s", sep, names[i].name);
        used += k > 0 ? (size_t)k : 0;
    }
    return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not %s", flag, text ? text : "", list);
}

cct_status cct_parse_list(const char *flag, const char *text, size_t max_items, cct_list_item_fn fn,
                          void *ctx, cct_error *err)
{
    if (!text || !*text)
        return cct_error_set(err, CCT_EINVAL, "%s: empty value", flag);
    char item[256];
    size_t index = 0;
    for (const char *p = text;; index++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return cct_error_set(err, CCT_EINVAL, "%s: '%s' has an empty item", flag, text);
        if (len >= sizeof item)
            return cct_error_set(err, CCT_EINVAL, "%s: an item of '%.40s...' is too long", flag,
                                 text);
        if (index >= max_items)
            return cct_error_set(err, CCT_EINVAL, "%s: at most %zu values", flag, max_items);
        memcpy(item, p, len);
        item[len] = '\0';
        cct_status st = fn(ctx, flag, item, index, err);
        if (st != CCT_OK)
            return st;
        if (!comma)
            return CCT_OK;
        p = comma + 1;
    }
}

cct_status cct_parse_flag_error(int c, char *const *argv, cct_error *err)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    bool long_flag = arg && strncmp(arg, "--", 2) == 0;
    bool short_flag = !long_flag && optopt > 0 && optopt < 256;
    if (c == ':' && short_flag)
        return cct_error_set(err, CCT_EINVAL, "-%c needs a value", optopt);
    if (c == ':')
        return cct_error_set(err, CCT_EINVAL, "%s needs a value", arg);
    if (long_flag && optopt != 0 && strchr(arg, '='))
        return cct_error_set(err, CCT_EINVAL, "'%s': %.*s takes no value", arg,
                             (int)(strchr(arg, '=') - arg), arg);
    if (short_flag)
        return cct_error_set(err, CCT_EINVAL, "unknown flag '-%c'", optopt);
    return cct_error_set(err, CCT_EINVAL, "unknown flag '%s'", arg);
}
