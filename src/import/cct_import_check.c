/*
 * cct_import_check.c - a measured row's numbers checked against each other (see
 * cct_import_check.h).
 *
 * The time check is interval arithmetic: the printed time and bandwidth each stand for an
 * interval (their rounding), and the row fits when some time and bandwidth in those
 * intervals give its size.  So a bandwidth printed as 0.00 bounds the time only from
 * below, and a precise JSON value bounds it tightly.
 */
#include "cct_import_check.h"

#include "cct_facts.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_measure.h"

#define SLACK 0.02

double cct_import_resolution(const char *text)
{
    const char *p = text;
    if (*p == '+' || *p == '-')
        p++;
    int decimals = 0;
    bool digits = false, point = false;
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.' && !point) {
            point = true;
        } else if (isdigit((unsigned char)*p)) {
            digits = true;
            decimals += point;
        } else {
            return 0.0;
        }
    }
    if (!digits)
        return 0.0;
    long exponent = 0;
    if (*p) {
        char *end;
        exponent = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end)
            return 0.0;
    }
    /* strtol saturates; beyond +-1000 pow gives 0 or inf anyway */
    double e = (double)(exponent < -1000 ? -1000 : exponent > 1000 ? 1000 : exponent);
    return 0.5 * pow(10.0, e - decimals);
}

bool cct_import_time_fits(uint64_t bytes, double time_us, double time_res, double gbps,
                          double gbps_res)
{
    if (!isfinite(time_us) || !isfinite(gbps))
        return false;
    double t_lo = fmax(time_us - time_res, 0.0), t_hi = time_us + time_res;
    double b_lo = fmax(gbps - gbps_res, 0.0), b_hi = gbps + gbps_res;
    double lo = b_lo * 1e3 * t_lo * (1.0 - SLACK), hi = b_hi * 1e3 * t_hi * (1.0 + SLACK);
    return (double)bytes >= lo && (double)bytes <= hi;
}

bool cct_import_count_fits(int coll, int ranks, int dtype, uint64_t bytes, uint64_t count)
{
    uint64_t size = cct_dtype_size(dtype);
    if (size == 0 || count > UINT64_MAX / size)
        return false;
    if (count * size == bytes)
        return true;
    if (!cct_coll_per_rank(coll))
        return false;
    uint64_t per_rank = count * size;
    return ranks > 0 && per_rank <= UINT64_MAX / (uint64_t)ranks &&
           per_rank * (uint64_t)ranks == bytes;
}
