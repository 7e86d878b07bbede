/*
 * cct_model.c - prediction from a fitted model.
 *
 * A model's lines are stored with the size each starts at; prediction finds the last line
 * whose start is <= the size (a linear scan: at most CCT_MODEL_MAX_SEGMENTS entries) and
 * evaluates it.  Tables read from YAML may carry only the LINEAR/SEGMENTED fields
 * (n_segments == 0); those are evaluated directly so both spellings give the same numbers.
 * Bandwidth is in GB/s = 1e9 B/s = 1e3 B/us, hence the factor 1e3 below.
 */
#include "cct_model.h"

#include <math.h>

static double line_us(double alpha_us, double beta_gbps, uint64_t bytes)
{
    if (isnan(alpha_us))
        return NAN;
    double t = alpha_us;
    if (!isnan(beta_gbps) && beta_gbps > 0.0)
        t += (double)bytes / (beta_gbps * 1e3);
    /* a line fitted to the bandwidth region can have a negative intercept; a time cannot */
    return t > 0.0 ? t : 0.0;
}

double cct_model_predict(const cct_model *m, uint64_t bytes)
{
    if (m->n_segments > 0) {
        int n = m->n_segments < CCT_MODEL_MAX_SEGMENTS ? m->n_segments : CCT_MODEL_MAX_SEGMENTS;
        int k = 0;
        while (k + 1 < n && bytes >= m->segments[k + 1].from_bytes)
            k++;
        return line_us(m->segments[k].alpha_us, m->segments[k].beta_gbps, bytes);
    }
    if (m->kind == CCT_MODEL_SEGMENTED && bytes >= m->break_bytes)
        return line_us(m->alpha2_us, m->beta2_gbps, bytes);
    return line_us(m->alpha_us, m->beta_gbps, bytes);
}

int cct_model_segments(const cct_model *m)
{
    if (m->n_segments > 0)
        return m->n_segments;
    return m->kind == CCT_MODEL_SEGMENTED ? 2 : 1;
}
