/*
 * cct_fit.h - fitting latency/bandwidth models to the measured points of one configuration.
 *
 * time(n) = alpha + n / beta, n in bytes, time in microseconds, beta in GB/s (1e9 B/s), by
 * robust weighted regression: each point weighs by the uncertainty of its median (from its
 * own spread, relative, floored), and a Huber loss keeps a stray point from dragging the
 * line.  Where one line misfits (a launch-bound floor, then a bandwidth line, protocol steps
 * in between), contiguous ranges of sizes get their own lines; the number of lines is chosen
 * by AIC.  Poor fits are flagged in the model, never hidden.  docs/fitting.md gives the
 * reasoning, the criterion and the poor-fit rule.
 *
 * Links GSL, so it lives in the cct_fit library, never in the core the plugin links.
 * Ownership: a cct_fit_result owns its arrays; cct_fit_result_destroy() frees them.  Inputs
 * are only read.  No global state; functions are safe to call from several threads.
 */
#ifndef CCT_FIT_H
#define CCT_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_measure.h"
#include "cct_model.h"
#include "cct_table.h"

/* Most distinct sizes one configuration may have: the exact split search costs O(sizes^2)
 * line fits (256 sizes: well under a second). */
#define CCT_FIT_MAX_SIZES 256

typedef struct cct_fit_options {
    int max_segments;      /* 1..CCT_MODEL_MAX_SEGMENTS; 1 forces a single line (default 6) */
    int min_segment_sizes; /* distinct sizes each line of a multi-line model needs (2) */
    double huber_c;        /* Huber constant, in units of the robust noise scale (1.345) */
    double rel_floor;      /* smallest relative uncertainty granted to a median (0.01) */
    double poor_median;    /* poor_fit when median |pred-meas|/meas exceeds this (0.03) */
    double poor_p95;       /* ... or its 95th percentile exceeds this (0.10) */
    int poor_min_sizes;    /* ... or there are fewer distinct sizes than this (4) */
} cct_fit_options;

typedef struct cct_fit_result {
    cct_model model; /* algo/proto/channels/buffsizes taken from the points */
    size_t n;        /* points used (status OK), the length of the arrays below */
    uint64_t *bytes; /* sorted by size */
    double *measured_us;
    double *predicted_us;
    double *residual_us; /* measured - predicted */
    double *sigma_us;    /* the uncertainty each point was weighted by */
    int n_sizes;         /* distinct sizes */
    double scale;        /* noise scale of the standardized residuals (1: spreads were right) */
    double aic[CCT_MODEL_MAX_SEGMENTS]; /* [k]: AIC with k+1 lines; NAN: not possible */
    double median_rel_err, p95_rel_err, max_rel_err; /* |pred - meas| / meas over the points */
} cct_fit_result;

/* Summary of |pred - meas| / meas over a set of points. */
typedef struct cct_accuracy {
    size_t n;       /* points compared */
    size_t skipped; /* OK points without a model (or, in cross-validation, at an edge) */
    double median, p95, max;
} cct_accuracy;

void cct_fit_options_default(cct_fit_options *opt);

/* Fit the points of ONE configuration (every cct_config field equal, else CCT_EINVAL).
 * Points whose status is not OK are skipped; an OK point with a NaN, infinite, zero or
 * negative median is an error (CCT_EINVAL naming it); 2..CCT_FIT_MAX_SIZES distinct sizes
 * are needed.  opt may be NULL (defaults).  On success *out owns its arrays; on failure it is
 * left zeroed (safe to destroy). */
cct_status cct_fit_model(const cct_point *points, size_t n, const cct_fit_options *opt,
                         cct_fit_result *out, cct_error *err);

/* The same with one line only (max_segments = 1). */
cct_status cct_fit_line(const cct_point *points, size_t n, const cct_fit_options *opt,
                        cct_fit_result *out, cct_error *err);

void cct_fit_result_destroy(cct_fit_result *result);

/* Accuracy of given models over points (the benchmark): each OK, aligned (align 0) point
 * whose configuration has a model (same algo, proto, channels and buffer sizes) is
 * compared with cct_model_predict().  CCT_EINVAL when no point has a model or a point's
 * median is not a positive finite number. */
cct_status cct_fit_accuracy(const cct_point *points, size_t n, const cct_model *models,
                            size_t n_models, cct_accuracy *out, cct_error *err);

/* Leave-one-size-out cross-validation: for every configuration (baseline included) with at
 * least 5 distinct aligned sizes, refit without the points of one interior size and
 * predict them; the smallest and largest size of each configuration are not predicted
 * (that would be extrapolation).  The honest measure of accuracy between measured sizes. */
cct_status cct_fit_cross_validate(const cct_point *points, size_t n, const cct_fit_options *opt,
                                  cct_accuracy *out, cct_error *err);

/* Total order on configurations used for grouping and determinism: coll, ranks, nodes,
 * dtype, buffsize, ll_buffsize, ll128_buffsize, algo, proto, channels, align. */
int cct_fit_config_compare(const cct_config *a, const cct_config *b);

/* Same model key: algo, proto, channels and the three buffer sizes. */
bool cct_fit_model_matches(const cct_model *model, const cct_config *cfg);

#endif
