/*
 * cct_stats.c - timing sample statistics (see cct_stats.h).
 *
 * Sorting a copy keeps callers' sample order intact (the store keeps samples in the order
 * they were taken, which is what a drift analysis needs).  The standard deviation uses the
 * n-1 denominator; with one sample the CV is 0 by definition, and the noise policy in the
 * schedule requires several cycles anyway.
 */
#include "cct_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cct_percentile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0.0)
        return sorted[0];
    if (q >= 1.0)
        return sorted[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (h - (double)lo) * (sorted[hi] - sorted[lo]);
}

cct_status cct_stats_compute(const double *samples, size_t n, cct_stats *out)
{
    if (n == 0 || n > CCT_STATS_MAX_SAMPLES)
        return CCT_EINVAL;
    double sorted[CCT_STATS_MAX_SAMPLES];
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(samples[i]) || samples[i] < 0.0)
            return CCT_EINVAL;
        sorted[i] = samples[i];
        sum += samples[i];
    }
    qsort(sorted, n, sizeof sorted[0], cmp_double);
    double mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (samples[i] - mean) * (samples[i] - mean);
    double sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    memset(out, 0, sizeof *out);
    out->n = (int)n;
    out->median_us = cct_percentile_sorted(sorted, n, 0.5);
    out->p95_us = cct_percentile_sorted(sorted, n, 0.95);
    out->min_us = sorted[0];
    out->max_us = sorted[n - 1];
    out->mean_us = mean;
    out->cv = mean > 0.0 ? sd / mean : 0.0;
    return CCT_OK;
}
