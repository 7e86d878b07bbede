/*
 * cct_stats.h - summary statistics of timing samples (median, P95, min, max, mean, CV).
 *
 * A sample is the mean time of one collective over one cycle of iterations, already
 * reduced to the slowest rank.  The median is the estimate the fitter uses; P95 and the
 * coefficient of variation say how much to trust it.  Percentiles use linear
 * interpolation between order statistics (type 7 in Hyndman & Fan), as numpy does.
 */
#ifndef CCT_STATS_H
#define CCT_STATS_H

#include <stddef.h>

#include "cct_error.h"
#include "cct_measure.h"

/* Summarise n >= 1 samples.  The input is not modified (a bounded copy is sorted);
 * CCT_EINVAL for n == 0, n above CCT_STATS_MAX_SAMPLES, or non-finite/negative samples. */
#define CCT_STATS_MAX_SAMPLES 4096
cct_status cct_stats_compute(const double *samples, size_t n, cct_stats *out);

/* Percentile q in [0, 1] of sorted data (type 7 interpolation). */
double cct_percentile_sorted(const double *sorted, size_t n, double q);

/* Two-sided p-value of the Mann-Whitney U test that samples a and b come from the same
 * distribution: normal approximation with tie correction and continuity correction.  1.0
 * when either side is empty, either has more than
 * CCT_STATS_MAX_SAMPLES values, or every value is tied. */
double cct_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

#endif
