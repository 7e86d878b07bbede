/*
 * cct_decide_evidence.c - when a measured gain over NCCL's default is evidence enough to
 * leave NCCL's choice (used by the settle stage), and where two fitted curves cross.
 *
 * A band's configuration W is compared with NCCL's default D at the band's sizes where both
 * were measured: per size the log gain g = log(t_D / t_W) and its standard error u (the two
 * medians' relative standard errors, cct_fit_sigma, added in quadrature).  Pooled over the k
 * sizes, the mean gain G has the standard error sqrt(sum u^2) / k.  W is chosen only when G
 * exceeds both the guard and z standard errors.  The scatter of g from size to size is not
 * taken for noise: the gain really changes where NCCL's own choice does (a step of 40 % from
 * one octave to the next is common).  docs/fitting.md, "Evidence", gives the reasons.
 */
#include <math.h>
#include <stddef.h>

#include "cct_decide.h"

bool cct_decide_evidence(const double *log_gain, const double *se, size_t k, double guard, double z,
                         double *mean_out, double *se_out)
{
    if (k == 0)
        return false;
    double sum = 0.0, var = 0.0;
    for (size_t i = 0; i < k; i++) {
        sum += log_gain[i];
        var += se[i] * se[i];
    }
    double mean = sum / (double)k;
    double err = sqrt(var) / (double)k;
    if (mean_out)
        *mean_out = mean;
    if (se_out)
        *se_out = err;
    if (!(mean > log1p(guard > 0.0 ? guard : 0.0)))
        return false;
    return !(z > 0.0) || mean > z * err;
}

typedef struct cross_fn {
    const cct_model *a, *b;
    double fa, fb;
} cross_fn;

static double cross_diff(uint64_t bytes, const cross_fn *f)
{
    return f->fa * cct_model_predict(f->a, bytes) - f->fb * cct_model_predict(f->b, bytes);
}

/* Bisection over whole bytes, splitting at the geometric middle (the curves' features are
 * spread over orders of magnitude): exact to the byte, deterministic, no global state (GSL's
 * root solvers report through a process-wide error handler). */
bool cct_decide_crossover(const cct_model *a, double factor_a, const cct_model *b, double factor_b,
                          uint64_t lo, uint64_t hi, double *at)
{
    if (!(hi > lo))
        return false;
    cross_fn f = {a, b, factor_a, factor_b};
    double dl = cross_diff(lo, &f), dh = cross_diff(hi, &f);
    if (isnan(dl) || isnan(dh) || dl == 0.0 || dh == 0.0 || (dl < 0) == (dh < 0))
        return false;
    uint64_t l = lo, h = hi;
    while (h - l > 1) {
        double g = l ? sqrt((double)l * (double)h) : (double)h / 2.0;
        uint64_t m = g >= (double)h ? h - 1 : (uint64_t)g;
        if (m <= l)
            m = l + 1;
        double dm = cross_diff(m, &f);
        if (isnan(dm))
            return false;
        if ((dm < 0) == (dl < 0)) {
            l = m;
            dl = dm;
        } else {
            h = m;
            dh = dm;
        }
    }
    *at = (double)l + dl / (dl - dh); /* within the last byte, by linear interpolation */
    return true;
}
