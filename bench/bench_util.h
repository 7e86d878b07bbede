/*
 * bench_util.h - the clock and the sort comparator every benchmark under bench/ uses
 * (header-only): nanoseconds from CLOCK_MONOTONIC, and doubles in ascending order for
 * medians and percentiles with qsort.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <time.h>

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
