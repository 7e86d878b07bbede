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

typedef struct tagged {
    double v;
    int side; /* 0: a, 1: b */
} tagged;

static int cmp_tagged(const void *x, const void *y)
{
    double a = ((const tagged *)x)->v, b = ((const tagged *)y)->v;
    return (a > b) - (a < b);
}

double cct_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
    if (na == 0 || nb == 0 || na > CCT_STATS_MAX_SAMPLES || nb > CCT_STATS_MAX_SAMPLES)
        return 1.0;
    size_t n = na + nb;
    tagged *all = malloc(n * sizeof *all);
    if (!all)
        return 1.0;
    for (size_t i = 0; i < na; i++)
        all[i] = (tagged){a[i], 0};
    for (size_t i = 0; i < nb; i++)
        all[na + i] = (tagged){b[i], 1};
    qsort(all, n, sizeof *all, cmp_tagged);
    double rank_sum_a = 0.0, ties = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && all[j + 1].v == all[i].v)
            j++;
        double rank = ((double)i + (double)j) / 2.0 + 1.0; /* mid-rank of the tie group */
        for (size_t k = i; k <= j; k++)
            if (all[k].side == 0)
                rank_sum_a += rank;
        double t = (double)(j - i + 1);
        ties += t * t * t - t;
        i = j + 1;
    }
    free(all);
    double n1 = (double)na, n2 = (double)nb, nn = (double)n;
    double u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    double mu = n1 * n2 / 2.0;
    double var = n1 * n2 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
    if (!(var > 0.0))
        return 1.0;
    double z = (fabs(u - mu) - 0.5) / sqrt(var);
    return erfc((z > 0.0 ? z : 0.0) / sqrt(2.0));
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
