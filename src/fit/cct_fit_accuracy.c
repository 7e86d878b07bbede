/*
 * cct_fit_accuracy.c - how well models predict measured times: the benchmark's numbers.
 *
 * Two measures of |predicted - measured| / measured over points (median, P95, max):
 * cct_fit_accuracy() compares given models with the points they were fitted to (what a
 * table claims), cct_fit_cross_validate() refits each configuration without one size at a
 * time and predicts the left-out size (what a model is worth between measured sizes, where
 * decisions rely on it).  P95 is the linearly interpolated quantile of the sorted errors.
 */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_fit.h"
#include "cct_fit_internal.h"

static void summarize(double *e, size_t n, cct_accuracy *out)
{
    out->n = n;
    if (n == 0) {
        out->median = out->p95 = out->max = NAN;
        return;
    }
    gsl_sort(e, 1, n);
    out->median = gsl_stats_quantile_from_sorted_data(e, 1, n, 0.5);
    out->p95 = gsl_stats_quantile_from_sorted_data(e, 1, n, 0.95);
    out->max = e[n - 1];
}

cct_status cct_fit_accuracy(const cct_point *points, size_t n, const cct_model *models,
                            size_t n_models, cct_accuracy *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    out->median = out->p95 = out->max = NAN;
    double *e = malloc(sizeof(double) * (n ? n : 1));
    if (!e)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &points[i];
        if (p->status != CCT_POINT_OK || p->cfg.align != 0)
            continue;
        cct_status st = cct_fit_check_point(p, i, err);
        if (st != CCT_OK) {
            free(e);
            return st;
        }
        const cct_model *m = NULL;
        for (size_t j = 0; j < n_models && !m; j++)
            if (cct_fit_model_matches(&models[j], &p->cfg))
                m = &models[j];
        if (!m) {
            out->skipped++;
            continue;
        }
        e[k++] = fabs(cct_model_predict(m, p->bytes) - p->stats.median_us) / p->stats.median_us;
    }
    summarize(e, k, out);
    free(e);
    if (k == 0)
        return cct_error_set(err, CCT_EINVAL, "no point has a model to compare with");
    return CCT_OK;
}

static int cmp_point(const void *a, const void *b)
{
    const cct_point *x = *(const cct_point *const *)a, *y = *(const cct_point *const *)b;
    int c = cct_fit_config_compare(&x->cfg, &y->cfg);
    if (c)
        return c;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return (x->stats.median_us > y->stats.median_us) - (x->stats.median_us < y->stats.median_us);
}

/* Cross-validate one configuration: p[0..n) sorted by size. */
static cct_status validate_config(const cct_point *const *p, size_t n, const cct_fit_options *opt,
                                  cct_obs *o, double *e, size_t *k, size_t *skipped, cct_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || p[i]->bytes != p[i - 1]->bytes)
            m++;
    if (m < 5) {
        *skipped += n;
        return CCT_OK;
    }
    uint64_t lo = p[0]->bytes, hi = p[n - 1]->bytes;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j]->bytes == p[i]->bytes)
            j++;
        if (p[i]->bytes == lo || p[i]->bytes == hi) {
            *skipped += j - i;
            i = j;
            continue;
        }
        size_t no = 0;
        for (size_t q = 0; q < n; q++) {
            if (q >= i && q < j)
                continue;
            o[no].bytes = p[q]->bytes;
            o[no].y = p[q]->stats.median_us;
            o[no].sig = cct_fit_sigma(p[q], opt->rel_floor);
            no++;
        }
        cct_model model;
        memset(&model, 0, sizeof model);
        cct_status st = cct_fit_obs(o, no, opt, &model, NULL, err);
        if (st != CCT_OK)
            return st;
        for (size_t q = i; q < j; q++)
            e[(*k)++] = fabs(cct_model_predict(&model, p[q]->bytes) - p[q]->stats.median_us) /
                        p[q]->stats.median_us;
        i = j;
    }
    return CCT_OK;
}

cct_status cct_fit_cross_validate(const cct_point *points, size_t n, const cct_fit_options *opt,
                                  cct_accuracy *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    out->median = out->p95 = out->max = NAN;
    cct_fit_options def;
    if (!opt) {
        cct_fit_options_default(&def);
        opt = &def;
    }
    const cct_point **p = malloc(sizeof *p * (n ? n : 1));
    cct_obs *o = malloc(sizeof *o * (n ? n : 1));
    double *e = malloc(sizeof(double) * (n ? n : 1));
    if (!p || !o || !e) {
        free(p);
        free(o);
        free(e);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    size_t np = 0, k = 0;
    cct_status st = CCT_OK;
    for (size_t i = 0; i < n && st == CCT_OK; i++) {
        if (points[i].status != CCT_POINT_OK || points[i].cfg.align != 0)
            continue;
        st = cct_fit_check_point(&points[i], i, err);
        p[np++] = &points[i];
    }
    if (st == CCT_OK)
        qsort(p, np, sizeof *p, cmp_point);
    for (size_t i = 0; i < np && st == CCT_OK;) {
        size_t j = i;
        while (j < np && cct_fit_config_compare(&p[j]->cfg, &p[i]->cfg) == 0)
            j++;
        st = validate_config(p + i, j - i, opt, o, e, &k, &out->skipped, err);
        i = j;
    }
    if (st == CCT_OK) {
        summarize(e, k, out);
        if (k == 0)
            st = cct_error_set(err, CCT_EINVAL,
                               "no configuration has the 5 distinct sizes cross-validation "
                               "needs");
    }
    free(p);
    free(o);
    free(e);
    return st;
}
