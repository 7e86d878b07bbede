/*
 * cct_decide_view.c - one prepared section seen under one buffer setting, as the bands,
 * settle and rules stages read it: the candidate configurations, the grid (every size some
 * candidate was measured at), NCCL's own choice at a size (from the baseline points that
 * recorded it), NCCL's default's time, the per-cycle pairs of two configurations and the
 * run's A/A noise floor, and the size a rule's numbers are taken at.
 *
 * Shared by the later stages, lower than all of them (cct_decide_internal.h): it calls no
 * stage.  A view owns its arrays (cct_dview_free); the section and options are only read.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_cycles.h"
#include "cct_decide_internal.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* NCCL's own (algo, proto) at the baseline size nearest to bytes (in log size) among the
 * baseline points that recorded it; false when none did. */
bool cct_dview_default_choice(const cct_dview *x, uint64_t bytes, int *algo, int *proto)
{
    const cct_dconf *b = x->base;
    if (!b)
        return false;
    double best = INFINITY;
    double lb = log((double)(bytes ? bytes : 1));
    for (size_t i = 0; i < b->n; i++) {
        const cct_point *p = b->pts[i];
        if (p->nccl_algo < 0 || p->nccl_proto < 0)
            continue;
        double d = fabs(log((double)(p->bytes ? p->bytes : 1)) - lb);
        if (d < best) { /* strict: the smaller size wins a tie */
            best = d;
            *algo = p->nccl_algo;
            *proto = p->nccl_proto;
        }
    }
    return isfinite(best);
}

/* NCCL's default's time at bytes for ranking (measured, else the baseline's model inside its
 * range; at its protocol's worst penalty with worst_case_align), NAN when unknown. */
double cct_dview_default_time(const cct_dview *x, uint64_t bytes)
{
    if (!x->base)
        return NAN;
    double t = cct_dconf_time(x->base, bytes);
    int da, dp;
    double pen;
    if (x->opt->worst_case_align && cct_dview_default_choice(x, bytes, &da, &dp) &&
        cct_dsec_worst_penalty(x->sec, dp, &pen))
        t *= 1.0 + pen;
    return t;
}

/* Time of choice i (a configuration, or x->def) at bytes for ranking. */
double cct_dview_time(const cct_dview *x, size_t i, uint64_t bytes)
{
    return i == x->def ? cct_dview_default_time(x, bytes) : cct_dconf_time(&x->sec->conf[i], bytes);
}

/* The per-cycle samples of configuration c's first point at bytes that has them. */
const double *cct_dview_samples(const cct_dview *x, const cct_dconf *c, uint64_t bytes, size_t *n)
{
    *n = 0;
    if (!x->opt->cycles || !c)
        return NULL;
    for (size_t i = 0; i < c->n; i++) {
        if (c->pts[i]->bytes != bytes)
            continue;
        const double *t = cct_cycles_find(x->opt->cycles, c->pts[i], n);
        if (t && *n)
            return t;
    }
    return NULL;
}

/* Writes the log ratios log(t_r / t_c) of the cycles r and c share at bytes; returns how many. */
size_t cct_dview_pair(const cct_dview *x, const cct_dconf *r, const cct_dconf *c, uint64_t bytes,
                      double *out)
{
    size_t nr, nc;
    const double *tr = cct_dview_samples(x, r, bytes, &nr),
                 *tc = cct_dview_samples(x, c, bytes, &nc);
    return tr && tc ? cct_paired_log_ratios(tr, nr, tc, nc, CCT_PAIR_MAX, out) : 0;
}

size_t cct_dview_grid_index(const cct_dview *x, uint64_t bytes)
{
    size_t lo = 0, hi = x->n_grid;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->grid[mid] < bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->n_grid && x->grid[lo] == bytes ? lo : SIZE_MAX;
}

int cct_dview_prior_df(const cct_dview *x, size_t gi)
{
    return x->opt->prior_df < x->var_df[gi] ? x->opt->prior_df : x->var_df[gi];
}

cct_gain_est cct_dview_estimate(const cct_dview *x, size_t gi, double *lr, size_t n)
{
    if (gi >= x->n_grid || !x->var)
        return cct_gain_estimate(lr, n);
    return cct_gain_estimate_pooled(lr, n, x->var[gi], cct_dview_prior_df(x, gi));
}

/* The paired gain of c over r at bytes. */
cct_gain_est cct_dview_paired(const cct_dview *x, const cct_dconf *r, const cct_dconf *c,
                              uint64_t bytes)
{
    double lr[CCT_PAIR_MAX];
    size_t n = cct_dview_pair(x, r, c, bytes, lr);
    return cct_dview_estimate(x, cct_dview_grid_index(x, bytes), lr, n);
}

/* The pooled cycle-to-cycle variance of one log ratio against NCCL's default at every grid
 * size: every candidate's deviations from its own mean there, each scaled to unit variance
 * (by sqrt(n / (n - 1))), robustly (cct_robust_variance); degrees of freedom the sum of n - 1.
 * A size with fewer than 4 takes the section's pool. */
static cct_status compute_variance(const cct_dview *x, double *lr, cct_error *err)
{
    size_t cap = x->n_cand * CCT_PAIR_MAX + 1, n_all = 0;
    double *dev = malloc(sizeof *dev * cap), *all = malloc(sizeof *all * cap * x->n_grid);
    if (!dev || !all) {
        free(dev);
        free(all);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    int all_df = 0;
    for (size_t i = 0; i < x->n_grid; i++) {
        size_t m = 0;
        int df = 0;
        for (size_t q = 0; q < x->n_cand && x->base; q++) {
            size_t k = cct_dview_pair(x, x->base, &x->sec->conf[x->cand[q]], x->grid[i], lr);
            if (k < 2)
                continue;
            double mean = 0.0;
            for (size_t j = 0; j < k; j++)
                mean += lr[j] / (double)k;
            double scale = sqrt((double)k / (double)(k - 1));
            for (size_t j = 0; j < k; j++) {
                dev[m++] = (lr[j] - mean) * scale;
                all[n_all++] = (lr[j] - mean) * scale;
            }
            df += (int)k - 1;
        }
        x->var[i] = cct_robust_variance(dev, m);
        x->var_df[i] = df;
        all_df += df;
    }
    double section = cct_robust_variance(all, n_all);
    for (size_t i = 0; i < x->n_grid; i++)
        if (x->var_df[i] < 4) {
            x->var[i] = section;
            x->var_df[i] = all_df;
        }
    free(dev);
    free(all);
    return CCT_OK;
}

/* The forced twin of NCCL's own choice at bytes among the candidates, NULL when unmeasured. */
static const cct_dconf *twin_at(const cct_dview *x, uint64_t bytes)
{
    int da, dp;
    if (!cct_dview_default_choice(x, bytes, &da, &dp))
        return NULL;
    for (size_t q = 0; q < x->n_cand; q++) {
        const cct_dconf *c = &x->sec->conf[x->cand[q]];
        if (c->cfg.algo == da && c->cfg.proto == dp && c->cfg.channels == 0)
            return c;
    }
    return NULL;
}

/* The noise floor at every grid size: what the A/A control shows as a gain where there is
 * none.  At each size where NCCL's default and the forced twin of its own choice share
 * cycles, their paired gain (the median of the per-cycle log ratios, cct_gain_estimate); the
 * floor is the root mean square of those apparent gains over the whole section, the same at
 * every size.  One size's apparent gain is a median of a few cycles, so a floor from a size
 * and its neighbours swung by a factor of 5 between re-tunes and moved marginal decisions;
 * over the section it is stable, and what differs between sizes is carried by each paired
 * interval.  A section with no twin at all takes the default's own cycle-to-cycle spread,
 * times sqrt(2 / n) (the spread of a median of n A/A pairs). */
static void compute_noise(const cct_dview *x, double *aa)
{
    double all_ss = 0.0, self_ss = 0.0;
    size_t all_n = 0, self_n = 0;
    for (size_t i = 0; i < x->n_grid; i++) {
        const cct_dconf *t = twin_at(x, x->grid[i]);
        size_t k = x->base && t ? cct_dview_pair(x, x->base, t, x->grid[i], aa) : 0;
        if (k >= 2) {
            double app = cct_gain_estimate(aa, k).log_gain;
            all_ss += app * app;
            all_n++;
        }
        size_t nd;
        const double *d = cct_dview_samples(x, x->base, x->grid[i], &nd);
        if (nd < 2)
            continue;
        double mean = 0.0, ss = 0.0;
        for (size_t q = 0; q < nd; q++)
            mean += log(d[q]) / (double)nd;
        for (size_t q = 0; q < nd; q++)
            ss += (log(d[q]) - mean) * (log(d[q]) - mean);
        self_ss += 2.0 * ss / (double)(nd - 1) / (double)nd;
        self_n++;
    }
    double section = all_n    ? sqrt(all_ss / (double)all_n)
                     : self_n ? sqrt(self_ss / (double)self_n)
                              : 0.0;
    for (size_t i = 0; i < x->n_grid; i++)
        x->noise[i] = section;
}

/* The grid index whose numbers a rule of choice conf over grid indices [i0, i1] carries: the
 * size nearest the geometric middle of the measured sizes among those where conf is not
 * slower than NCCL's default (all of them when there is none such). */
size_t cct_dview_ref_index(const cct_dview *x, size_t conf, size_t i0, size_t i1)
{
    double g0 = (double)(x->grid[i0] ? x->grid[i0] : 1), g1 = (double)x->grid[i1];
    double centre = 0.5 * (log(g0) + log(g1 > g0 ? g1 : g0));
    size_t ref = SIZE_MAX, any = i0;
    double best = INFINITY, best_any = INFINITY;
    for (size_t i = i0; i <= i1; i++) {
        double d = fabs(log((double)(x->grid[i] ? x->grid[i] : 1)) - centre);
        if (d < best_any) {
            best_any = d;
            any = i;
        }
        bool loses = cct_dview_default_time(x, x->grid[i]) < cct_dview_time(x, conf, x->grid[i]);
        if (!loses && d < best) {
            best = d;
            ref = i;
        }
    }
    return ref != SIZE_MAX ? ref : any;
}

void cct_dview_free(cct_dview *v)
{
    free(v->cand);
    free(v->grid);
    free(v->noise);
    free(v->var);
    free(v->var_df);
    free(v->pool);
    memset(v, 0, sizeof *v);
}

cct_status cct_dview_init(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                          cct_dview *v, cct_error *err)
{
    memset(v, 0, sizeof *v);
    v->sec = sec;
    v->opt = opt;
    v->def = SIZE_MAX;
    size_t ng1 = sec->n ? sec->n : 1;
    v->cand = malloc(sizeof *v->cand * (sec->n_conf ? sec->n_conf : 1));
    v->grid = malloc(sizeof *v->grid * ng1);
    v->noise = calloc(ng1, sizeof *v->noise);
    v->var = calloc(ng1, sizeof *v->var);
    v->var_df = calloc(ng1, sizeof *v->var_df);
    v->pool = opt->cycles ? malloc(sizeof *v->pool * ng1 * CCT_PAIR_MAX) : NULL;
    if (!v->cand || !v->grid || !v->noise || !v->var || !v->var_df || (opt->cycles && !v->pool)) {
        cct_dview_free(v);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *c = &sec->conf[i];
        if (!cct_dconf_uses(c, b) || c->excluded || c->n == 0 || c->cfg.chunk != 0)
            continue; /* a chunk size only refines its configuration's rule (rules stage) */
        if (c->baseline) {
            if (!v->base)
                v->base = c;
            continue;
        }
        v->cand[v->n_cand++] = i;
        for (size_t p = 0; p < c->n; p++)
            v->grid[v->n_grid++] = c->pts[p]->bytes;
    }
    if (v->n_cand == 0) {
        char key[128];
        cct_section tmp = {.coll = sec->coll,
                           .ranks = sec->ranks,
                           .nodes = sec->nodes,
                           .pipe_ops = CCT_ANY,
                           .reg_buff = CCT_ANY};
        cct_status st = cct_error_set(
            err, CCT_EINVAL,
            "%s: no usable configuration (buffsize %llu, ll %llu, ll128 %llu): "
            "each is excluded (corrupt, hung or failed points, or LL128 where "
            "forbidden), unmeasured, or a baseline",
            cct_section_describe(&tmp, key, sizeof key), (unsigned long long)b->buffsize,
            (unsigned long long)b->ll_buffsize, (unsigned long long)b->ll128_buffsize);
        cct_dview_free(v);
        return st;
    }
    qsort(v->grid, v->n_grid, sizeof *v->grid, cmp_u64);
    size_t ng = 0;
    for (size_t i = 0; i < v->n_grid; i++)
        if (ng == 0 || v->grid[i] != v->grid[ng - 1])
            v->grid[ng++] = v->grid[i];
    v->n_grid = ng;
    int da, dp;
    if (cct_dview_default_choice(v, 0, &da, &dp))
        v->def = sec->n_conf; /* NCCL's choice is known: a rule can name it */
    if (opt->cycles) {
        compute_noise(v, v->pool); /* the pool is free until the bands are settled */
        cct_status st = compute_variance(v, v->pool, err);
        if (st != CCT_OK) {
            cct_dview_free(v);
            return st;
        }
    }
    return CCT_OK;
}
