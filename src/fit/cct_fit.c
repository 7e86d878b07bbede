/*
 * cct_fit.c - robust weighted piecewise-linear fits of time versus size (cct_fit.h).
 *
 * Every OK point becomes an observation (bytes, median, sigma), sigma being the uncertainty
 * of the median, relative and floored (cct_fit_sigma).  Lines are fitted by iteratively
 * reweighted least squares with the Huber loss on standardized residuals z = (measured -
 * line) / sigma, at one noise scale s for the whole model, estimated beforehand without a
 * model (pseudo-residuals of neighbouring sizes).  The best split of the sorted sizes into K
 * contiguous ranges is found exactly by dynamic programming over all ranges, and K by AIC
 * at that known scale.  A line may not slope down (time does not shrink with size): it is
 * then refitted flat.  Between two lines the break is where they cross if that lies
 * between the last size of one and the first of the next, else their geometric middle (a
 * step).  docs/fitting.md gives the evidence for each choice.
 */
#include "cct_fit.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_fit_internal.h"

#define MAX_IRLS 200
#define SCALE_KEEP 0.8 /* share of pseudo-residuals the noise scale is taken from */

void cct_fit_options_default(cct_fit_options *opt)
{
    opt->max_segments = 6;
    opt->min_segment_sizes = 2;
    opt->huber_c = 1.345; /* 95 % efficiency at the normal distribution */
    opt->rel_floor = 0.01;
    opt->poor_median = 0.03;
    opt->poor_p95 = 0.10;
    opt->poor_min_sizes = 4;
}

/* ---- configurations ---- */

static int cmp_i(long long a, long long b)
{
    return (a > b) - (a < b);
}

static int cmp_u(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

int cct_fit_config_compare(const cct_config *a, const cct_config *b)
{
    int c;
    if ((c = cmp_i(a->coll, b->coll)) || (c = cmp_i(a->ranks, b->ranks)) ||
        (c = cmp_i(a->nodes, b->nodes)) || (c = cmp_i(a->dtype, b->dtype)) ||
        (c = cmp_u(a->buffsize, b->buffsize)) || (c = cmp_u(a->ll_buffsize, b->ll_buffsize)) ||
        (c = cmp_u(a->ll128_buffsize, b->ll128_buffsize)) || (c = cmp_i(a->algo, b->algo)) ||
        (c = cmp_i(a->proto, b->proto)) || (c = cmp_i(a->channels, b->channels)) ||
        (c = cmp_u(a->chunk, b->chunk)))
        return c;
    return cmp_i(a->align, b->align);
}

bool cct_fit_model_matches(const cct_model *m, const cct_config *cfg)
{
    return m->algo == cfg->algo && m->proto == cfg->proto && m->channels == cfg->channels &&
           m->buffsize == cfg->buffsize && m->ll_buffsize == cfg->ll_buffsize &&
           m->ll128_buffsize == cfg->ll128_buffsize;
}

/* ---- observations ---- */

double cct_fit_sigma(const cct_point *p, double rel_floor)
{
    const cct_stats *s = &p->stats;
    double med = s->median_us;
    int n = s->n > 0 ? s->n : 1;
    double spread = NAN;
    /* Timing noise is one-sided (stalls), so take the narrower of the two half-spreads:
     * p95 above the median (1.645 sigma for a normal) and the minimum below it (its
     * expected normal score for n samples, Blom's approximation). */
    if (isfinite(s->p95_us) && s->p95_us > med)
        spread = (s->p95_us - med) / 1.645;
    if (n > 1 && isfinite(s->min_us) && s->min_us < med) {
        double zmin = -gsl_cdf_ugaussian_Pinv((1.0 - 0.375) / (n + 0.25));
        double lo = (med - s->min_us) / zmin;
        spread = isnan(spread) || lo < spread ? lo : spread;
    }
    if (isnan(spread) && isfinite(s->cv) && s->cv > 0.0 && isfinite(s->mean_us))
        spread = s->cv * s->mean_us;
    /* standard error of a median: sqrt(pi/2) sigma / sqrt(n) */
    double rel = isnan(spread) ? 0.0 : 1.2533141373155 * spread / (med * sqrt((double)n));
    return med * (rel > rel_floor ? rel : rel_floor);
}

static int cmp_obs(const void *a, const void *b)
{
    const cct_obs *x = a, *y = b;
    int c = cmp_u(x->bytes, y->bytes);
    if (c)
        return c;
    return (x->y > y->y) - (x->y < y->y);
}

void cct_obs_sort(cct_obs *o, size_t n)
{
    qsort(o, n, sizeof *o, cmp_obs);
}

/* ---- one line by Huber IRLS ---- */

typedef struct line {
    double a, b; /* t = a + b * bytes */
    bool flat;
    double cost; /* sum of 2 s^2 rho(z / s): equals the chi-square of least squares */
    double var_a, var_b;
    int dof;
} line;

static double huber_weight(double z, double c)
{
    double az = fabs(z);
    return az <= c ? 1.0 : c / az;
}

static double huber_2rho(double u, double c)
{
    double au = fabs(u);
    return au <= c ? u * u : 2.0 * c * au - c * c;
}

/* Weighted fit of one line to o[i0, i1) with the scale s and Huber constant c (INFINITY:
 * least squares).  x is scaled by the largest size of the range for conditioning. */
static void fit_line(const cct_obs *o, size_t i0, size_t i1, double s, double c, bool flat,
                     line *out)
{
    double xref = (double)o[i1 - 1].bytes;
    if (xref <= 0.0)
        xref = 1.0;
    double a = 0.0, b = 0.0; /* b in time per xref bytes */
    double hc = isinf(c) ? INFINITY : c * s;
    for (int it = 0; it < MAX_IRLS; it++) {
        double sw = 0, su = 0, sy = 0;
        for (size_t i = i0; i < i1; i++) {
            double r = it ? (o[i].y - a - b * (double)o[i].bytes / xref) / o[i].sig : 0.0;
            double w = huber_weight(r, hc) / (o[i].sig * o[i].sig);
            sw += w;
            su += w * (double)o[i].bytes / xref;
            sy += w * o[i].y;
        }
        double ub = su / sw, yb = sy / sw, suu = 0, suy = 0;
        if (!flat) {
            for (size_t i = i0; i < i1; i++) {
                double r = it ? (o[i].y - a - b * (double)o[i].bytes / xref) / o[i].sig : 0.0;
                double w = huber_weight(r, hc) / (o[i].sig * o[i].sig);
                double du = (double)o[i].bytes / xref - ub;
                suu += w * du * du;
                suy += w * du * (o[i].y - yb);
            }
        }
        double nb = suu > 0.0 ? suy / suu : 0.0;
        double na = yb - nb * ub;
        bool done = it > 0 && fabs(na - a) <= 1e-12 * (fabs(na) + fabs(nb)) &&
                    fabs(nb - b) <= 1e-12 * (fabs(na) + fabs(nb));
        a = na;
        b = nb;
        if (done || isinf(c))
            break;
    }
    if (!flat && b < 0.0) {
        fit_line(o, i0, i1, s, c, true, out);
        return;
    }
    /* cost, and the M-estimator covariance (Huber 1981, 7.6): the least-squares inverse
     * information times mean(psi^2) * n / (n - p) / mean(psi')^2, on standardized rows */
    double cost = 0, psi2 = 0, dpsi = 0, sw = 0, su = 0;
    size_t n = i1 - i0;
    for (size_t i = i0; i < i1; i++) {
        double z = (o[i].y - a - b * (double)o[i].bytes / xref) / o[i].sig;
        double u = isinf(c) ? 0.0 : z / s;
        cost += isinf(c) ? z * z : s * s * huber_2rho(u, c);
        double psi = isinf(c) || fabs(u) <= c ? z : copysign(c * s, z);
        psi2 += psi * psi;
        dpsi += isinf(c) || fabs(u) <= c ? 1.0 : 0.0;
        double w = 1.0 / (o[i].sig * o[i].sig);
        sw += w;
        su += w * (double)o[i].bytes / xref;
    }
    double ub = su / sw, suu = 0;
    for (size_t i = i0; i < i1; i++) {
        double du = (double)o[i].bytes / xref - ub;
        suu += du * du / (o[i].sig * o[i].sig);
    }
    int p = flat ? 1 : 2;
    out->a = a;
    out->b = b / xref;
    out->flat = flat;
    out->cost = cost;
    out->dof = (int)n - p;
    if (out->dof > 0) {
        dpsi /= (double)n;
        if (dpsi < 1.0 / (double)n)
            dpsi = 1.0 / (double)n;
        double f = psi2 / out->dof / (dpsi * dpsi);
        if (flat) {
            out->var_a = f / sw;
            out->var_b = 0.0;
        } else {
            out->var_a = f * (1.0 / sw + ub * ub / suu);
            out->var_b = f / suu / (xref * xref);
        }
    } else {
        out->var_a = out->var_b = NAN;
    }
}

/* ---- the best split into K ranges (dynamic programming) ---- */

typedef struct split_ctx {
    const cct_obs *o;
    size_t m;      /* distinct sizes */
    size_t *start; /* [m + 1]: first observation of each size */
    line *cost;    /* [m * m]: line over sizes a..b at [a * m + b]; dof < -1: not computed */
} split_ctx;

static const line *range_line(split_ctx *x, size_t a, size_t b, double s, double c)
{
    line *l = &x->cost[a * x->m + b];
    if (l->dof < -1)
        fit_line(x->o, x->start[a], x->start[b + 1], s, c, false, l);
    return l;
}

/* Best split of sizes 0..m-1 into exactly k ranges of at least min_len sizes; fills cut[]
 * with each range's first size.  Returns the cost, INFINITY when impossible. */
static double best_split(split_ctx *x, int k, size_t min_len, double s, double c, size_t *cut)
{
    size_t m = x->m;
    if ((size_t)k * min_len > m)
        return INFINITY;
    double *d = malloc(sizeof(double) * (size_t)k * m);
    size_t *from = malloc(sizeof(size_t) * (size_t)k * m);
    if (!d || !from) {
        free(d);
        free(from);
        return NAN;
    }
    for (size_t j = 0; j < m; j++) {
        d[j] = j + 1 >= min_len ? range_line(x, 0, j, s, c)->cost : INFINITY;
        from[j] = 0;
    }
    for (int q = 1; q < k; q++) {
        for (size_t j = 0; j < m; j++) {
            double best = INFINITY;
            size_t arg = 0;
            /* the last range is a..j; the q earlier ones cover 0..a-1 */
            for (size_t a = (size_t)q * min_len; a + min_len <= j + 1; a++) {
                double prev = d[(size_t)(q - 1) * m + a - 1];
                if (isinf(prev))
                    continue;
                double v = prev + range_line(x, a, j, s, c)->cost;
                if (v < best) {
                    best = v;
                    arg = a;
                }
            }
            d[(size_t)q * m + j] = best;
            from[(size_t)q * m + j] = arg;
        }
    }
    double total = d[(size_t)(k - 1) * m + m - 1];
    if (isfinite(total)) {
        size_t j = m - 1;
        for (int q = k - 1; q >= 0; q--) {
            cut[q] = from[(size_t)q * m + j];
            if (q > 0)
                j = cut[q] - 1;
        }
    }
    free(d);
    free(from);
    return total;
}

/* AIC of a K-line model at a known noise scale s (Mallows' Cp form): the robust chi-square
 * plus 2 per parameter, 2K for the lines and K-1 for the break positions. */
static double aic(double cost, double s, int k_lines)
{
    return cost / (s * s) + 2.0 * (3.0 * k_lines - 1.0);
}

/* Choose K and the split at scale s with Huber constant c.  Fills cut, k_out, aic_out. */
static cct_status choose(split_ctx *x, const cct_fit_options *opt, double s, double c, size_t *cut,
                         int *k_out, double *aic_out)
{
    double best = INFINITY;
    size_t tmp[CCT_MODEL_MAX_SEGMENTS];
    for (size_t i = 0; i < x->m * x->m; i++)
        x->cost[i].dof = -2;
    *k_out = 0;
    for (int k = 1; k <= opt->max_segments; k++) {
        size_t min_len = k == 1 ? 1 : (size_t)opt->min_segment_sizes;
        double rss = best_split(x, k, min_len, s, c, tmp);
        if (isnan(rss))
            return CCT_ENOMEM;
        double v = isinf(rss) ? NAN : aic(rss, s, k);
        if (aic_out)
            aic_out[k - 1] = v;
        if (k == 1 || v < best) { /* strictly better: ties keep fewer lines */
            best = k == 1 && isnan(v) ? INFINITY : v;
            *k_out = k;
            memcpy(cut, tmp, sizeof(size_t) * (size_t)k);
        }
    }
    return CCT_OK;
}

static double quantile(double *v, size_t n, double q)
{
    gsl_sort(v, 1, n);
    return gsl_stats_quantile_from_sorted_data(v, 1, n, q);
}

/* Scale of the standardized residuals, without a model: the pseudo-residuals of Gasser,
 * Sroka and Jennen-Steinmetz (1986).  Each interior size is compared with the straight line
 * through its two neighbours; on a piecewise-linear truth that difference is pure noise
 * except next to a break, and a trimmed RMS ignores those few.  Sizes with several points are
 * first reduced to their weighted mean.  Returns 1 when there are fewer than 3 sizes. */
static double noise_scale(const cct_obs *o, const size_t *start, size_t m, double *tmp)
{
    if (m < 3)
        return 1.0;
    double *ym = malloc(sizeof(double) * 2 * m);
    if (!ym)
        return NAN;
    double *sm = ym + m;
    for (size_t g = 0; g < m; g++) {
        double sw = 0, swy = 0;
        for (size_t i = start[g]; i < start[g + 1]; i++) {
            double w = 1.0 / (o[i].sig * o[i].sig);
            sw += w;
            swy += w * o[i].y;
        }
        ym[g] = swy / sw;
        sm[g] = 1.0 / sqrt(sw);
    }
    size_t k = 0;
    for (size_t g = 1; g + 1 < m; g++) {
        double x0 = (double)o[start[g - 1]].bytes, x1 = (double)o[start[g]].bytes;
        double x2 = (double)o[start[g + 1]].bytes;
        double w = (x1 - x0) / (x2 - x0);
        double e = ym[g] - (ym[g - 1] + w * (ym[g + 1] - ym[g - 1]));
        double v = sm[g] * sm[g] + w * w * sm[g + 1] * sm[g + 1] +
                   (1 - w) * (1 - w) * sm[g - 1] * sm[g - 1];
        tmp[k++] = fabs(e) / sqrt(v);
    }
    free(ym);
    /* RMS of the smallest 80 %, made consistent for the normal: more efficient than the MAD
     * (whose noise on ~25 sizes made AIC split single lines) and still blind to breaks */
    gsl_sort(tmp, 1, k);
    size_t kept = (size_t)ceil(SCALE_KEEP * (double)k);
    double ss = 0;
    for (size_t i = 0; i < kept; i++)
        ss += tmp[i] * tmp[i];
    double q = gsl_cdf_ugaussian_Pinv(0.5 + SCALE_KEEP / 2);
    double f = (SCALE_KEEP - 2 * q * gsl_ran_ugaussian_pdf(q)) / SCALE_KEEP;
    double s = sqrt(ss / (double)kept / f);
    return s > 1e-3 ? s : 1e-3;
}

/* ---- building the model ---- */

static uint64_t break_between(const line *l1, const line *l2, uint64_t xa, uint64_t xb)
{
    if (l1->b != l2->b) {
        double at = (l2->a - l1->a) / (l1->b - l2->b);
        if (at > (double)xa && at < (double)xb)
            return (uint64_t)ceil(at);
    }
    double mid = xa == 0 ? (double)xb / 2.0 : sqrt((double)xa * (double)xb);
    uint64_t b = (uint64_t)llround(mid);
    if (b <= xa)
        b = xa + 1;
    if (b > xb)
        b = xb;
    return b;
}

static void fill_segment(cct_model_segment *sg, const line *l)
{
    double t = l->dof > 0 ? gsl_cdf_tdist_Pinv(0.975, (double)l->dof) : NAN;
    sg->alpha_us = l->a;
    sg->alpha_ci = isnan(l->var_a) ? NAN : t * sqrt(l->var_a);
    if (l->flat || l->b <= 0.0) {
        sg->beta_gbps = NAN;
        sg->beta_ci = NAN;
        return;
    }
    sg->beta_gbps = 1.0 / (l->b * 1e3);
    double hb = isnan(l->var_b) ? NAN : t * sqrt(l->var_b);
    /* delta method; an interval on the slope that reaches 0 leaves beta unbounded */
    sg->beta_ci = isnan(hb) || hb >= l->b ? NAN : hb / (l->b * l->b * 1e3);
}

void cct_fit_result_destroy(cct_fit_result *r)
{
    if (!r)
        return;
    free(r->bytes);
    free(r->measured_us);
    free(r->predicted_us);
    free(r->residual_us);
    free(r->sigma_us);
    memset(r, 0, sizeof *r);
}

static cct_status check_options(const cct_fit_options *opt, cct_error *err)
{
    if (opt->max_segments < 1 || opt->max_segments > CCT_MODEL_MAX_SEGMENTS ||
        opt->min_segment_sizes < 2 || !(opt->huber_c > 0.0) || !(opt->rel_floor > 0.0))
        return cct_error_set(err, CCT_EINVAL,
                             "fit options out of range (max_segments 1..%d, min_segment_sizes "
                             ">= 2, huber_c > 0, rel_floor > 0)",
                             CCT_MODEL_MAX_SEGMENTS);
    return CCT_OK;
}

/* The distinct sizes of the n sorted observations x->o: x->start and x->m.  Between 2 and
 * CCT_FIT_MAX_SIZES of them, else an error (and x->start released). */
static cct_status index_sizes(split_ctx *x, size_t n, cct_error *err)
{
    const cct_obs *o = x->o;
    x->start = malloc(sizeof(size_t) * (n + 1));
    if (!x->start)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (i == 0 || o[i].bytes != o[i - 1].bytes)
            x->start[x->m++] = i;
    x->start[x->m] = n;
    cct_status st = CCT_OK;
    if (x->m > CCT_FIT_MAX_SIZES)
        st = cct_error_set(err, CCT_EINVAL,
                           "%zu distinct message sizes: the segment search handles at most %d "
                           "(measure fewer, e.g. powers of two)",
                           x->m, CCT_FIT_MAX_SIZES);
    else if (x->m < 2)
        st = cct_error_set(err, CCT_EINVAL,
                           "a fit needs at least two distinct message sizes (got %zu point%s "
                           "at %zu size%s)",
                           n, n == 1 ? "" : "s", x->m, x->m == 1 ? "" : "s");
    if (st != CCT_OK) {
        free(x->start);
        x->start = NULL;
    }
    return st;
}

/* The model of the chosen split into k lines starting at sizes cut[]: its segments, the
 * breaks between them and the summary fields.  The configuration fields (algorithm,
 * protocol, channels, buffer sizes) are kept, everything else is overwritten. */
static void build_model(const split_ctx *x, const size_t *cut, int k, size_t n, cct_model *m)
{
    const cct_obs *o = x->o;
    int keep_algo = m->algo, keep_proto = m->proto, keep_ch = m->channels;
    uint64_t keep_b = m->buffsize, keep_l = m->ll_buffsize, keep_l128 = m->ll128_buffsize;
    memset(m, 0, sizeof *m);
    m->algo = keep_algo;
    m->proto = keep_proto;
    m->channels = keep_ch;
    m->buffsize = keep_b;
    m->ll_buffsize = keep_l;
    m->ll128_buffsize = keep_l128;
    m->n_segments = k;
    m->kind = k == 1 ? CCT_MODEL_LINEAR : k == 2 ? CCT_MODEL_SEGMENTED : CCT_MODEL_PIECEWISE;
    const line *prev = NULL;
    for (int q = 0; q < k; q++) {
        size_t last = q + 1 < k ? cut[q + 1] - 1 : x->m - 1;
        const line *l = &x->cost[cut[q] * x->m + last];
        fill_segment(&m->segments[q], l);
        if (prev)
            m->segments[q].from_bytes =
                break_between(prev, l, o[x->start[cut[q]] - 1].bytes, o[x->start[cut[q]]].bytes);
        prev = l;
    }
    m->alpha_us = m->segments[0].alpha_us;
    m->alpha_ci = m->segments[0].alpha_ci;
    m->beta_gbps = m->segments[0].beta_gbps;
    m->beta_ci = m->segments[0].beta_ci;
    m->alpha2_us = m->beta2_gbps = NAN;
    if (k > 1) {
        m->break_bytes = m->segments[1].from_bytes;
        m->alpha2_us = m->segments[k - 1].alpha_us;
        m->beta2_gbps = m->segments[k - 1].beta_gbps;
    }
    m->n_points = (int)n;
}

/* How well model m fits the n observations over n_sizes sizes: sets m->r2 (weighted,
 * relative, since weights are ~1/y^2) and m->poor_fit, and returns the median, 95th
 * percentile and largest relative error (tmp: n doubles of scratch). */
static void assess_model(const cct_obs *o, size_t n, size_t n_sizes, const cct_fit_options *opt,
                         cct_model *m, double *tmp, double rel[3])
{
    double sw = 0, swy = 0, ss_res = 0, ss_tot = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / (o[i].sig * o[i].sig);
        sw += w;
        swy += w * o[i].y;
    }
    for (size_t i = 0; i < n; i++) {
        double f = cct_model_predict(m, o[i].bytes);
        double r = o[i].y - f;
        ss_res += r * r / (o[i].sig * o[i].sig);
        double d = o[i].y - swy / sw;
        ss_tot += d * d / (o[i].sig * o[i].sig);
        tmp[i] = fabs(r) / o[i].y;
    }
    m->r2 = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : NAN;
    double max_rel = 0.0;
    for (size_t i = 0; i < n; i++)
        max_rel = tmp[i] > max_rel ? tmp[i] : max_rel;
    double med_rel = quantile(tmp, n, 0.5);
    double p95_rel = gsl_stats_quantile_from_sorted_data(tmp, 1, n, 0.95);
    m->poor_fit =
        (int)n_sizes < opt->poor_min_sizes || med_rel > opt->poor_median || p95_rel > opt->poor_p95;
    rel[0] = med_rel;
    rel[1] = p95_rel;
    rel[2] = max_rel;
}

/* The full result of a fit: the model, the split's diagnostics and every observation with
 * its prediction and residual.  On error res is released. */
static cct_status fill_result(const cct_obs *o, size_t n, size_t n_sizes, double s,
                              const double *aic, const double rel[3], const cct_model *m,
                              cct_fit_result *res, cct_error *err)
{
    memset(res, 0, sizeof *res);
    res->model = *m;
    res->n = n;
    res->n_sizes = (int)n_sizes;
    res->scale = s;
    memcpy(res->aic, aic, sizeof res->aic);
    res->median_rel_err = rel[0];
    res->p95_rel_err = rel[1];
    res->max_rel_err = rel[2];
    res->bytes = malloc(sizeof(uint64_t) * n);
    res->measured_us = malloc(sizeof(double) * n);
    res->predicted_us = malloc(sizeof(double) * n);
    res->residual_us = malloc(sizeof(double) * n);
    res->sigma_us = malloc(sizeof(double) * n);
    if (!res->bytes || !res->measured_us || !res->predicted_us || !res->residual_us ||
        !res->sigma_us) {
        cct_fit_result_destroy(res);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        res->bytes[i] = o[i].bytes;
        res->measured_us[i] = o[i].y;
        res->predicted_us[i] = cct_model_predict(m, o[i].bytes);
        res->residual_us[i] = o[i].y - res->predicted_us[i];
        res->sigma_us[i] = o[i].sig;
    }
    return CCT_OK;
}

/* Sort, index the sizes, estimate the noise scale without a model, then choose K and the
 * split by AIC with Huber at that scale, and build and assess the model. */
cct_status cct_fit_obs(cct_obs *o, size_t n, const cct_fit_options *opt, cct_model *model,
                       cct_fit_result *res, cct_error *err)
{
    cct_fit_options def;
    if (!opt) {
        cct_fit_options_default(&def);
        opt = &def;
    }
    cct_status st = check_options(opt, err);
    if (st != CCT_OK)
        return st;
    cct_obs_sort(o, n);
    split_ctx x = {.o = o};
    if ((st = index_sizes(&x, n, err)) != CCT_OK)
        return st;
    x.cost = malloc(sizeof(line) * x.m * x.m);
    double *tmp = malloc(sizeof(double) * n);
    if (!x.cost || !tmp) {
        free(x.start);
        free(x.cost);
        free(tmp);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    size_t cut[CCT_MODEL_MAX_SEGMENTS];
    int k = 0;
    double aic[CCT_MODEL_MAX_SEGMENTS];
    for (int i = 0; i < CCT_MODEL_MAX_SEGMENTS; i++)
        aic[i] = NAN;
    double s = noise_scale(o, x.start, x.m, tmp);
    st = isnan(s) ? CCT_ENOMEM : choose(&x, opt, s, opt->huber_c, cut, &k, aic);
    if (st != CCT_OK) {
        st = cct_error_set(err, st, "out of memory");
    } else {
        double rel[3];
        build_model(&x, cut, k, n, model);
        assess_model(o, n, x.m, opt, model, tmp, rel);
        if (res)
            st = fill_result(o, n, x.m, s, aic, rel, model, res, err);
    }
    free(x.start);
    free(x.cost);
    free(tmp);
    return st;
}

/* ---- from points ---- */

cct_status cct_fit_check_point(const cct_point *p, size_t index, cct_error *err)
{
    if (!isfinite(p->stats.median_us) || p->stats.median_us <= 0.0)
        return cct_error_set(err, CCT_EINVAL,
                             "point %zu (%s %s/%s, %llu bytes): median time %g us is not a "
                             "positive finite number",
                             index + 1, cct_coll_name(p->cfg.coll),
                             p->cfg.algo == CCT_DEFAULT ? "default" : cct_algo_name(p->cfg.algo),
                             p->cfg.proto == CCT_DEFAULT ? "default" : cct_proto_name(p->cfg.proto),
                             (unsigned long long)p->bytes, p->stats.median_us);
    return CCT_OK;
}

cct_status cct_fit_model(const cct_point *points, size_t n, const cct_fit_options *opt,
                         cct_fit_result *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    cct_fit_options def;
    if (!opt) {
        cct_fit_options_default(&def);
        opt = &def;
    }
    if (n == 0 || !points)
        return cct_error_set(err, CCT_EINVAL, "nothing to fit: no points");
    for (size_t i = 1; i < n; i++)
        if (cct_fit_config_compare(&points[i].cfg, &points[0].cfg) != 0)
            return cct_error_set(err, CCT_EINVAL,
                                 "point %zu belongs to another configuration than point 1: "
                                 "fit one configuration at a time",
                                 i + 1);
    cct_obs *o = malloc(sizeof *o * n);
    if (!o)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (points[i].status != CCT_POINT_OK)
            continue;
        cct_status st = cct_fit_check_point(&points[i], i, err);
        if (st != CCT_OK) {
            free(o);
            return st;
        }
        o[k].bytes = points[i].bytes;
        o[k].y = points[i].stats.median_us;
        o[k].sig = cct_fit_sigma(&points[i], opt->rel_floor);
        k++;
    }
    if (k == 0) {
        free(o);
        return cct_error_set(err, CCT_EINVAL, "nothing to fit: none of the %zu points is OK", n);
    }
    cct_model m;
    memset(&m, 0, sizeof m);
    m.algo = points[0].cfg.algo;
    m.proto = points[0].cfg.proto;
    m.channels = points[0].cfg.channels;
    m.buffsize = points[0].cfg.buffsize;
    m.ll_buffsize = points[0].cfg.ll_buffsize;
    m.ll128_buffsize = points[0].cfg.ll128_buffsize;
    cct_status st = cct_fit_obs(o, k, opt, &m, out, err);
    free(o);
    return st;
}

cct_status cct_fit_line(const cct_point *points, size_t n, const cct_fit_options *opt,
                        cct_fit_result *out, cct_error *err)
{
    cct_fit_options one;
    if (opt)
        one = *opt;
    else
        cct_fit_options_default(&one);
    one.max_segments = 1;
    return cct_fit_model(points, n, &one, out, err);
}
