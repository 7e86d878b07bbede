/*
 * cct_model.h - evaluating a fitted latency/bandwidth model (cct_model, in cct_table.h).
 *
 * Part of the GSL-free core so that anything holding a table (explain, diff, the plugin if
 * it ever needs to) can predict a time without linking the fitter.  A model is a set of
 * lines t(n) = alpha_us + n / (beta_gbps * 1e3), each valid from its from_bytes up to the
 * next one's; docs/fitting.md says how the fitter chooses them.
 *
 * Ownership: nothing is allocated; every function reads its arguments only.
 */
#ifndef CCT_MODEL_H
#define CCT_MODEL_H

#include <stdint.h>

#include "cct_table.h"

/* Predicted time in microseconds of one collective of `bytes` bytes.  Uses segments[]
 * when n_segments > 0, else the LINEAR/SEGMENTED fields.  A NAN beta means "flat" (no size
 * term).  Never negative; NAN when the model has no intercept (a hand-written stub). */
double cct_model_predict(const cct_model *model, uint64_t bytes);

/* Number of lines in the model (1 for LINEAR, 2 for SEGMENTED, n_segments otherwise). */
int cct_model_segments(const cct_model *model);

#endif
