/*
 * cct_fit_internal.h - pieces of the fitter shared by cct_fit.c, cct_fit_accuracy.c and
 * the decision code (cct_decide*.c); not part of the public API.
 *
 * An observation is one OK point reduced to what the regression needs: its size, its
 * median time and the uncertainty of that median.  Plain values, no ownership.
 */
#ifndef CCT_FIT_INTERNAL_H
#define CCT_FIT_INTERNAL_H

#include "cct_fit.h"

typedef struct cct_obs {
    uint64_t bytes;
    double y;   /* median, us */
    double sig; /* uncertainty of the median, us */
} cct_obs;

/* Uncertainty of a point's median in us: from its spread and sample count, at least
 * rel_floor * median (docs/fitting.md, "Weights"). */
double cct_fit_sigma(const cct_point *p, double rel_floor);

/* CCT_EINVAL naming the point (1-based index) unless its median is positive and finite. */
cct_status cct_fit_check_point(const cct_point *p, size_t index, cct_error *err);

/* Sort by size, then time (makes every fit independent of input order). */
void cct_obs_sort(cct_obs *o, size_t n);

/* Fit sorted-or-not observations (sorted in place).  model's algo/proto/channels/buffsizes
 * are kept, everything else is filled.  res may be NULL; when not, it is filled and owns
 * its arrays.  opt NULL: defaults. */
cct_status cct_fit_obs(cct_obs *o, size_t n, const cct_fit_options *opt, cct_model *model,
                       cct_fit_result *res, cct_error *err);

#endif
