/*
 * fit_test_util.h - synthetic measured points for the fitter and decision tests.
 *
 * A point's median is its true time times (1 + N(0, rel)) drawn from GSL's MT19937 with a
 * seed the test chooses, and its spread statistics (p95, min, CV over 15 samples) are made
 * consistent with that noise, so that cct_fit_sigma() sees an uncertainty of about
 * rel * median (never below the 1 % floor).  Header-only: each test program includes it
 * once.  Ownership: plain values; rngs are allocated and freed by the caller.
 */
#ifndef FIT_TEST_UTIL_H
#define FIT_TEST_UTIL_H

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "cct_measure.h"

#define FT_SAMPLES 15

static inline cct_point ft_point(int algo, int proto, int channels, uint64_t bytes, double median,
                                 double rel)
{
    cct_point p;
    memset(&p, 0, sizeof p);
    p.cfg.coll = CCT_COLL_ALLREDUCE;
    p.cfg.algo = algo;
    p.cfg.proto = proto;
    p.cfg.channels = channels;
    p.cfg.ranks = 4;
    p.cfg.nodes = 4;
    p.cfg.dtype = CCT_DTYPE_FLOAT;
    p.bytes = bytes;
    p.status = CCT_POINT_OK;
    p.nccl_algo = p.nccl_proto = -1;
    /* sample sigma such that the standard error of the median is rel * median */
    double s = rel * sqrt((double)FT_SAMPLES) / 1.2533141373155;
    p.stats.n = FT_SAMPLES;
    p.stats.median_us = median;
    p.stats.mean_us = median;
    p.stats.p95_us = median * (1.0 + 1.645 * s);
    p.stats.min_us = median * (1.0 - 1.736 * s > 0.05 ? 1.0 - 1.736 * s : 0.05);
    p.stats.max_us = median * (1.0 + 2.5 * s);
    p.stats.cv = s;
    return p;
}

/* t(n) = alpha + n / (beta * 1e3): alpha in us, beta in GB/s. */
static inline double ft_line(double alpha_us, double beta_gbps, uint64_t bytes)
{
    return alpha_us + (double)bytes / (beta_gbps * 1e3);
}

/* Sizes first * 2^i, i < count. */
static inline uint64_t ft_size(uint64_t first, int i)
{
    return first << i;
}

/* One multiplicative noise factor 1 + N(0, rel). */
static inline double ft_noise(gsl_rng *r, double rel)
{
    return rel > 0.0 ? 1.0 + gsl_ran_gaussian(r, rel) : 1.0;
}

#endif
