/*
 * cct_decide_evidence.c - when a measured gain over NCCL's default is evidence enough to
 * leave NCCL's choice, and where a boundary goes when nothing better is known.
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

#include "cct_decide_internal.h"

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

uint64_t cct_decide_geometric_middle(uint64_t lo, uint64_t hi)
{
    double mid = lo == 0 ? (double)hi / 2.0 : sqrt((double)lo * (double)hi);
    uint64_t u = (uint64_t)llround(mid);
    if (u <= lo)
        u = lo + 1;
    return u > hi ? hi : u;
}
