/*
 * cct_decide_stats.c - paired gains, noise floor, significance, tie order and band-edge grid
 * (see cct_decide_stats.h).
 *
 * The gain is a median of per-cycle ratios because timing noise is one-sided (stalls): one
 * slow cycle of either configuration moves a mean, not a median.  Its interval is Student's
 * t on the log ratios, which a stalled cycle widens (so a spike makes a gain less
 * significant, never more).  Ratios of the same cycle cancel what drifts between cycles
 * (clock, other tenants of a shared GPU), which is most of the session-to-session noise
 * seen over sockets.
 */
#include "cct_decide_stats.h"

#include <math.h>
#include <stdlib.h>

size_t cct_paired_log_ratios(const double *ref, size_t n_ref, const double *conf, size_t n_conf,
                             size_t max_pairs, double *out)
{
    size_t n = n_ref < n_conf ? n_ref : n_conf;
    if (max_pairs && n > max_pairs)
        n = max_pairs;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ref[i] > 0.0 && conf[i] > 0.0 && isfinite(ref[i]) && isfinite(conf[i]))
            out[k++] = log(ref[i] / conf[i]);
    return k;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

double cct_t95(int df)
{
    static const double t[] = {NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447,
                               2.365, 2.306,  2.262, 2.228, 2.201, 2.179, 2.160,
                               2.145, 2.131,  2.120, 2.110, 2.101, 2.093, 2.086};
    if (df < 1)
        return INFINITY;
    if (df <= 20)
        return t[df];
    return 1.96 + 2.4 / (double)df; /* within 0.3 % of the quantile above 20 */
}

cct_gain_est cct_gain_estimate(double *lr, size_t n)
{
    cct_gain_est g = {NAN, NAN, NAN, (int)n};
    if (n == 0)
        return g;
    qsort(lr, n, sizeof *lr, cmp_double);
    g.log_gain = n % 2 ? lr[n / 2] : 0.5 * (lr[n / 2 - 1] + lr[n / 2]);
    if (n < 2) {
        g.lo = -INFINITY;
        g.hi = INFINITY;
        return g;
    }
    double mean = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += lr[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (lr[i] - mean) * (lr[i] - mean);
    double half = cct_t95((int)n - 1) * sqrt(ss / (double)(n - 1) / (double)n);
    g.lo = fmin(mean - half, g.log_gain);
    g.hi = fmax(mean + half, g.log_gain);
    return g;
}

double cct_moderated_variance(const double *lr, size_t n, double prior_var, int prior_df, int *df)
{
    bool prior = prior_df > 0 && prior_var > 0.0 && isfinite(prior_var);
    double mean = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += lr[i];
    mean = n ? mean / (double)n : 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (lr[i] - mean) * (lr[i] - mean);
    int d = (n ? (int)n - 1 : 0) + (prior ? prior_df : 0);
    *df = d;
    if (d < 1)
        return NAN;
    return ((prior ? (double)prior_df * prior_var : 0.0) + ss) / (double)d;
}

cct_gain_est cct_gain_estimate_pooled(double *lr, size_t n, double prior_var, int prior_df)
{
    if (prior_df <= 0 || !(prior_var > 0.0) || !isfinite(prior_var) || n == 0)
        return cct_gain_estimate(lr, n);
    int df;
    double var = cct_moderated_variance(lr, n, prior_var, prior_df, &df);
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += lr[i];
    mean /= (double)n;
    cct_gain_est g = cct_gain_estimate(lr, n); /* the median; sorts */
    double half = cct_t95(df) * sqrt(var / (double)n);
    g.lo = fmin(mean - half, g.log_gain);
    g.hi = fmax(mean + half, g.log_gain);
    return g;
}

double cct_robust_variance(double *dev, size_t n)
{
    if (n == 0)
        return 0.0;
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(dev[i]);
    qsort(dev, n, sizeof *dev, cmp_double);
    double med = n % 2 ? dev[n / 2] : 0.5 * (dev[n / 2 - 1] + dev[n / 2]);
    return (1.4826 * med) * (1.4826 * med);
}

cct_gain_est cct_gain_stratified(const cct_stratum *s, size_t n)
{
    cct_gain_est g = {NAN, NAN, NAN, 0};
    if (n == 0)
        return g;
    double sum = 0.0, var = 0.0;
    int df = 0;
    for (size_t i = 0; i < n; i++) {
        sum += s[i].log_gain;
        var += s[i].var;
        df += s[i].df;
        g.cycles += s[i].cycles;
    }
    g.log_gain = sum / (double)n;
    double half = cct_t95(df) * sqrt(var) / (double)n;
    g.lo = g.log_gain - half;
    g.hi = g.log_gain + half;
    return g;
}

double cct_noise_floor(const double *aa, size_t n)
{
    if (n == 0)
        return 0.0;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += aa[i] * aa[i];
    return sqrt(ss / (double)n);
}

bool cct_gain_significant(const cct_gain_est *g, double noise, double guard)
{
    if (g->cycles < 2)
        return false;
    return g->lo > fmax(noise, log1p(guard > 0.0 ? guard : 0.0));
}

bool cct_clearly_slower(const cct_gain_est *g, const double *lr, double noise, double tie)
{
    if (cct_gain_significant(g, noise, tie))
        return true;
    if (g->cycles < 2)
        return false;
    double floor = fmax(noise, log1p(tie > 0.0 ? tie : 0.0));
    for (int i = 0; i < g->cycles; i++)
        if (!(lr[i] > floor))
            return false;
    return true;
}

bool cct_estimated_slower(const cct_gain_est *g, double noise, double tie)
{
    return g->cycles >= 1 && g->log_gain > fmax(noise, log1p(tie > 0.0 ? tie : 0.0));
}

static int channel_rank(int channels)
{
    return channels; /* 0, NCCL's count, first: a fixed count must earn its place */
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

int cct_decide_tie_order(const cct_config *a, const cct_config *b, int nccl_algo, int nccl_proto)
{
    bool sa = a->algo == nccl_algo && a->proto == nccl_proto;
    bool sb = b->algo == nccl_algo && b->proto == nccl_proto;
    bool na = sa && a->channels == 0, nb = sb && b->channels == 0;
    if (na != nb)
        return na ? -1 : 1;
    if (sa != sb)
        return sa ? -1 : 1;
    int ca = channel_rank(a->channels), cb = channel_rank(b->channels);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (a->algo != b->algo)
        return a->algo < b->algo ? -1 : 1;
    if (a->proto != b->proto)
        return a->proto < b->proto ? -1 : 1;
    int r = cmp_u64(a->buffsize, b->buffsize);
    if (!r)
        r = cmp_u64(a->ll_buffsize, b->ll_buffsize);
    if (!r)
        r = cmp_u64(a->ll128_buffsize, b->ll128_buffsize);
    return r;
}

/* The largest grid point <= v (v >= 1). */
static uint64_t grid_floor(uint64_t v)
{
    if (v < 4)
        return v;
    int k = 63 - __builtin_clzll(v); /* 2^k <= v < 2^(k+1) */
    uint64_t step = (uint64_t)1 << (k - 2);
    return v / step * step; /* m * 2^(k-2), m in 4..7 */
}

/* The smallest grid point > v. */
static uint64_t grid_next(uint64_t v)
{
    if (v < 4)
        return v + 1;
    int k = 63 - __builtin_clzll(v);
    uint64_t step = (uint64_t)1 << (k - 2);
    return (v / step + 1) * step;
}

uint64_t cct_grid_above(uint64_t lo, uint64_t hi)
{
    uint64_t g = grid_next(lo);
    return g <= hi ? g : hi;
}

uint64_t cct_grid_edge(uint64_t lo, uint64_t hi)
{
    if (hi <= lo + 1)
        return hi;
    double mid = lo ? 0.5 * (log((double)lo) + log((double)hi)) : log((double)hi / 2.0);
    uint64_t below = grid_floor((uint64_t)exp(mid));
    if (below <= lo)
        below = grid_next(lo);
    uint64_t above = grid_next(below);
    if (below > hi)
        return hi;
    if (above > hi)
        return below;
    double db = fabs(log((double)below) - mid), da = fabs(log((double)above) - mid);
    return da < db ? above : below;
}
