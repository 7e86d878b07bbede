/*
 * cct_calibrate.c - fit NCCL's cost-model constants to measurements (cct_calibrate.h).
 *
 * 1. Observations: one measured time per (rank count, collective, algorithm, protocol,
 *    size), from forced points and from NCCL's own choice alike (averaged when repeated).
 * 2. Scale: NCCL only compares times, and Ring/Simple's modelled bandwidth has no constant
 *    in it, so every measured time at a rank count is divided by kappa = measured / modelled
 *    Ring/Simple time at large sizes.  Scaled, the times are in NCCL's model units.
 * 3. Latencies: NCCL's latency of an entry is linear in the base and hardware latency
 *    constants with coefficients fixed by the topology (found here by probing the model one
 *    constant at a time).  One weighted linear least-squares fit (relative residuals) solves
 *    for the latency constants and one inverse bandwidth per entry together, with a weak pull
 *    towards NCCL's defaults (so constants the data cannot tell apart stay near them) and
 *    constants kept non-negative.
 * 4. Ceilings: each fitted entry bandwidth implies a value of the ceiling constant that caps
 *    it (llMaxBw, perChMax*); the median implied value is kept where it binds (the measured
 *    bandwidth is below NCCL's uncapped model) or where NCCL's default ceiling bound wrongly.
 * Constants no observation depends on stay NAN (NCCL keeps its value).
 */
#include "cct_calibrate.h"
#include "cct_calibrate_internal.h"

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PRIOR_WEIGHT 0.1 /* pull of a latency constant towards NCCL's default, relative */
#define KAPPA_MIN_BYTES (1u << 20)

/* The algorithms whose constants are fitted. */
static const int fit_algos[] = {CCT_ALGO_TREE, CCT_ALGO_RING, CCT_ALGO_PAT};
#define N_FIT_ALGOS 3
#define N_LAT_PARAMS CCT_CALIB_N_LAT_PARAMS

void cct_calib_options_default(cct_calib_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->tie = 0.05;
    opt->pipe_ops = 1;
    opt->refine = true;
}

static bool usable(const cct_point *p)
{
    const cct_config *c = &p->cfg;
    return p->status == CCT_POINT_OK && c->channels == 0 && c->chunk == 0 && c->buffsize == 0 &&
           c->ll_buffsize == 0 && c->ll128_buffsize == 0 && c->align == 0 &&
           p->stats.median_us > 0.0 && isfinite(p->stats.median_us);
}

static int topo_index(const cct_nccl_topo *topos, size_t n_topos, int ranks, int nodes)
{
    for (size_t i = 0; i < n_topos; i++)
        if (topos[i].n_ranks == ranks && topos[i].n_nodes == nodes)
            return (int)i;
    return -1;
}

static cct_status build_obs(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                            size_t n_topos, cct_calib_obs_set *set, cct_error *err)
{
    memset(set, 0, sizeof *set);
    for (size_t i = 0; i < n_points; i++) {
        const cct_point *p = &points[i];
        if (!usable(p))
            continue;
        int algo = p->cfg.algo >= 0 ? p->cfg.algo : p->nccl_algo;
        int proto = p->cfg.proto >= 0 ? p->cfg.proto : p->nccl_proto;
        if (algo < 0 || algo >= CCT_NUM_ALGOS || proto < 0 || proto >= CCT_NUM_PROTOS ||
            p->cfg.coll < 0 || p->cfg.coll >= CCT_NUM_COLLS)
            continue;
        int ti = topo_index(topos, n_topos, p->cfg.ranks, p->cfg.nodes);
        if (ti < 0)
            continue;
        cct_calib_obs *o = NULL;
        for (size_t j = 0; j < set->n; j++) {
            cct_calib_obs *q = &set->v[j];
            if (q->ti == ti && q->coll == p->cfg.coll && q->algo == algo && q->proto == proto &&
                q->bytes == p->bytes) {
                o = q;
                break;
            }
        }
        if (o) {
            o->t_us = (o->t_us * o->n + p->stats.median_us) / (o->n + 1);
            o->n++;
            continue;
        }
        if (set->n == set->cap) {
            size_t cap = set->cap ? set->cap * 2 : 256;
            cct_calib_obs *v = realloc(set->v, cap * sizeof *v);
            if (!v) {
                free(set->v);
                return cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
            }
            set->v = v;
            set->cap = cap;
        }
        set->v[set->n++] =
            (cct_calib_obs){ti, p->cfg.coll, algo, proto, p->bytes, p->stats.median_us, 1};
    }
    return CCT_OK;
}

const cct_calib_obs *cct_calib_find_obs(const cct_calib_obs_set *set, int ti, int coll, int algo,
                                        int proto, uint64_t bytes)
{
    for (size_t j = 0; j < set->n; j++) {
        const cct_calib_obs *q = &set->v[j];
        if (q->ti == ti && q->coll == coll && q->algo == algo && q->proto == proto &&
            q->bytes == bytes)
            return q;
    }
    return NULL;
}

/* measured / modelled Ring/Simple time at large sizes (median); NAN without such points */
static double kappa_of(const cct_calib_obs_set *set, int ti, const cct_nccl_costs *costs,
                       int pipe_ops)
{
    double r[512];
    size_t n = 0;
    for (size_t j = 0; j < set->n && n < 512; j++) {
        const cct_calib_obs *q = &set->v[j];
        if (q->ti != ti || q->algo != CCT_ALGO_RING || q->proto != CCT_PROTO_SIMPLE ||
            q->bytes < KAPPA_MIN_BYTES)
            continue;
        double m = cct_nccl_model_time(costs, q->coll, q->algo, q->proto, q->bytes, pipe_ops);
        if (m > 0)
            r[n++] = q->t_us / m;
    }
    if (n == 0)
        return NAN;
    for (size_t i = 1; i < n; i++) /* insertion sort: n is small */
        for (size_t k = i; k > 0 && r[k - 1] > r[k]; k--) {
            double t = r[k];
            r[k] = r[k - 1];
            r[k - 1] = t;
        }
    return n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
}

/* Pointer to latency parameter k (base latencies first, then hw latencies by link). */
double *cct_calib_lat_param(cct_constants *c, int k)
{
    int per = N_FIT_ALGOS * CCT_NUM_PROTOS;
    int which = k / per, rest = k % per;
    int a = fit_algos[rest / CCT_NUM_PROTOS], p = rest % CCT_NUM_PROTOS;
    return which == 0 ? &c->base_latency_us[a][p] : &c->hw_latency_us[which - 1][a][p];
}

/* Latency of (coll, algo, proto) = c0 + sum coef[k] * theta[k]: probe the model. */
static void latency_coefficients(const cct_nccl_topo *topo, int coll, int algo, int proto,
                                 double *c0, double coef[N_LAT_PARAMS])
{
    cct_constants zero;
    cct_nccl_constants_default(&zero);
    for (int k = 0; k < N_LAT_PARAMS; k++)
        *cct_calib_lat_param(&zero, k) = 0.0;
    cct_nccl_costs costs;
    cct_nccl_model_compute(topo, &zero, &costs);
    *c0 = costs.latency_us[coll][algo][proto];
    for (int k = 0; k < N_LAT_PARAMS; k++) {
        cct_constants probe = zero;
        *cct_calib_lat_param(&probe, k) = 1000.0;
        cct_nccl_model_compute(topo, &probe, &costs);
        double d = (costs.latency_us[coll][algo][proto] - *c0) / 1000.0;
        coef[k] = fabs(d) < 1e-6 ? 0.0 : round(d * 1e4) / 1e4;
    }
}

/* The factors NCCL applies to an entry at n bytes: on the latency (ring plateau) and on the
 * bandwidth (tree correction), read back from the model with unit latency/bandwidth. */
static void size_factors(const cct_nccl_costs *costs, int coll, int algo, int proto, uint64_t n,
                         int pipe_ops, double *lat_factor, double *bw_factor)
{
    cct_nccl_costs unit = *costs;
    unit.latency_us[coll][algo][proto] = 1.0;
    unit.bandwidth_gbps[coll][algo][proto] = 1e30;
    *lat_factor = cct_nccl_model_time(&unit, coll, algo, proto, n, pipe_ops);
    unit.latency_us[coll][algo][proto] = 0.0;
    unit.bandwidth_gbps[coll][algo][proto] = 1.0;
    double t = cct_nccl_model_time(&unit, coll, algo, proto, n, pipe_ops);
    *bw_factor = t > 0 ? (double)n / (1000.0 * t) : 1.0;
}

typedef struct entry {
    int ti, coll, algo, proto;
} entry;

/* Where q's entry stands in entries[0..n), or n when it is not there yet. */
static size_t entry_of(const entry *entries, size_t n, const cct_calib_obs *q)
{
    size_t e = 0;
    while (e < n && !(entries[e].ti == q->ti && entries[e].coll == q->coll &&
                      entries[e].algo == q->algo && entries[e].proto == q->proto))
        e++;
    return e;
}

bool cct_calib_fitted(const cct_calib_options *opt, int ranks)
{
    if (opt->n_fit_ranks == 0)
        return true;
    for (size_t i = 0; i < opt->n_fit_ranks; i++)
        if (opt->fit_ranks[i] == ranks)
            return true;
    return false;
}

typedef struct ceiling_vote {
    double *slot; /* the constant in the fitted set */
    double dflt;  /* NCCL's default value of it */
    double implied[64], threshold[64];
    int n;
} ceiling_vote;

static void vote(ceiling_vote *votes, int *n_votes, double *slot, double dflt, double implied,
                 double threshold)
{
    ceiling_vote *v = NULL;
    for (int i = 0; i < *n_votes; i++)
        if (votes[i].slot == slot)
            v = &votes[i];
    if (!v) {
        if (*n_votes >= 32)
            return;
        v = &votes[(*n_votes)++];
        memset(v, 0, sizeof *v);
        v->slot = slot;
        v->dflt = dflt;
    }
    if (v->n < 64 && isfinite(implied) && implied > 0) {
        v->implied[v->n] = implied;
        v->threshold[v->n] = threshold;
        v->n++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void decide_ceiling(ceiling_vote *v)
{
    if (v->n == 0)
        return;
    double sorted[64], max_threshold = 0.0;
    memcpy(sorted, v->implied, v->n * sizeof(double));
    qsort(sorted, (size_t)v->n, sizeof(double), cmp_double);
    for (int i = 0; i < v->n; i++)
        max_threshold = fmax(max_threshold, v->threshold[i]);
    double median = v->n % 2 ? sorted[v->n / 2] : 0.5 * (sorted[v->n / 2 - 1] + sorted[v->n / 2]);
    /* neither NCCL's value nor the measured one caps any entry: nothing to say */
    if (median >= max_threshold && v->dflt >= max_threshold)
        return;
    *v->slot = round(median * 1000.0) / 1000.0;
}

/* Each fitted entry bandwidth b (model units, GB/s) votes for the ceiling that caps it. */
static void ceiling_votes(const cct_nccl_topo *topo, const cct_constants *dflt, int coll, int algo,
                          int proto, double b, cct_constants *fit, ceiling_vote *votes,
                          int *n_votes)
{
    const cct_nccl_graph *g = &topo->graphs[algo];
    int cci = cct_nccl_compcap_index(topo->cc), sci = cct_nccl_scale_index(topo->n_nodes);
    int llr = cct_nccl_ll_row(topo);
    double nch = g->n_channels > 0 ? g->n_channels : 1;
    double bus = nch * (topo->n_nodes <= 2 ? g->bw_intra : g->bw_inter);
    double pattern = topo->max_tree_pattern == CCT_NCCL_PATTERN_TREE ? .85 : 1.0;
    int nsteps = coll == CCT_COLL_ALLREDUCE ? 2 * (topo->n_ranks - 1)
                 : coll == CCT_COLL_ALLGATHER || coll == CCT_COLL_REDUCESCATTER ? topo->n_ranks - 1
                                                                                : topo->n_ranks;
    double ring_ratio = (double)topo->n_ranks / nsteps;
    if (algo == CCT_ALGO_RING && proto == CCT_PROTO_LL)
        vote(votes, n_votes, &fit->ll_max_bw[llr][sci], dflt->ll_max_bw[llr][sci], b / ring_ratio,
             bus * .5);
    else if (algo == CCT_ALGO_RING && proto == CCT_PROTO_LL128)
        vote(votes, n_votes, &fit->per_ch_max_ring_ll128_bw[cci][sci],
             dflt->per_ch_max_ring_ll128_bw[cci][sci], b / ring_ratio / nch, bus * .92 / nch);
    else if (algo == CCT_ALGO_TREE && coll == CCT_COLL_ALLREDUCE) {
        double tree_bus = fmin(bus * .92, nch * dflt->per_ch_max_tree_bw[cci][sci]);
        double per_algbw = .5 * pattern;
        if (proto == CCT_PROTO_SIMPLE)
            vote(votes, n_votes, &fit->per_ch_max_tree_bw[cci][sci],
                 dflt->per_ch_max_tree_bw[cci][sci], b / per_algbw / nch, bus * .92 / nch);
        else if (proto == CCT_PROTO_LL)
            vote(votes, n_votes, &fit->ll_max_bw[llr][sci], dflt->ll_max_bw[llr][sci],
                 b / per_algbw, tree_bus / 3.8);
        else
            vote(votes, n_votes, &fit->per_ch_max_tree_ll128_bw[cci][sci],
                 dflt->per_ch_max_tree_ll128_bw[cci][sci], b / per_algbw / nch,
                 tree_bus * (topo->n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0) / nch);
    }
}

/* Weighted least squares with non-negative latency constants: columns [0, n_lat) are latency
 * constants (clamped at 0 by fixing them and refitting), the rest inverse bandwidths. */
static cct_status solve(gsl_matrix *X, gsl_vector *y, size_t n_lat, gsl_vector *beta, double *rms,
                        cct_error *err)
{
    size_t rows = X->size1, cols = X->size2;
    bool *fixed = calloc(cols, sizeof *fixed);
    if (!fixed)
        return cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
    cct_status st = CCT_OK;
    for (int round_no = 0; round_no < (int)n_lat + 1; round_no++) {
        size_t free_cols = 0;
        for (size_t j = 0; j < cols; j++)
            free_cols += !fixed[j];
        gsl_matrix *A = gsl_matrix_alloc(rows, free_cols);
        gsl_vector *c = gsl_vector_alloc(free_cols);
        gsl_matrix *cov = gsl_matrix_alloc(free_cols, free_cols);
        gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(rows, free_cols);
        if (!A || !c || !cov || !w) {
            st = cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
        } else {
            for (size_t i = 0, k = 0; i < cols; i++)
                if (!fixed[i]) {
                    for (size_t r = 0; r < rows; r++)
                        gsl_matrix_set(A, r, k, gsl_matrix_get(X, r, i));
                    k++;
                }
            double chisq;
            gsl_set_error_handler_off();
            if (gsl_multifit_linear(A, y, c, cov, &chisq, w) != 0)
                st = cct_error_set(err, CCT_EINVAL, "calibrate: the least-squares fit failed");
            *rms = sqrt(chisq / (double)rows);
            bool clamped = false;
            for (size_t i = 0, k = 0; st == CCT_OK && i < cols; i++) {
                if (fixed[i]) {
                    gsl_vector_set(beta, i, 0.0);
                    continue;
                }
                double v = gsl_vector_get(c, k++);
                if (i < n_lat && v < 0.0) {
                    fixed[i] = true;
                    clamped = true;
                }
                gsl_vector_set(beta, i, v);
            }
            if (!clamped) {
                round_no = (int)n_lat + 1;
            }
        }
        gsl_matrix_free(A);
        gsl_vector_free(c);
        gsl_matrix_free(cov);
        if (w)
            gsl_multifit_linear_free(w);
        if (st != CCT_OK)
            break;
    }
    free(fixed);
    return st;
}

bool cct_calib_is_candidate(const cct_nccl_costs *dflt_costs, int coll, int algo, int proto)
{
    return dflt_costs->bandwidth_gbps[coll][algo][proto] > 0.0;
}

/* Whether observation q enters the fit: at a fitted rank count, with a finite calibration
 * factor for its topology, and a candidate NCCL could pick. */
static bool obs_fitted(const cct_calib_options *opt, const cct_nccl_topo *topos,
                       const double *kappa, const cct_nccl_costs *costs, const cct_calib_obs *q)
{
    return cct_calib_fitted(opt, topos[q->ti].n_ranks) && isfinite(kappa[q->ti]) &&
           cct_calib_is_candidate(&costs[q->ti], q->coll, q->algo, q->proto);
}

static cct_status fit_constants(const cct_calib_obs_set *set, const cct_nccl_topo *topos,
                                size_t n_topos, const cct_calib_options *opt, const double *kappa,
                                cct_calib_result *out, cct_calib_resid *resid, cct_error *err)
{
    cct_constants dflt;
    cct_nccl_constants_default(&dflt);
    cct_nccl_costs costs[CCT_CALIB_MAX_TOPOS];
    for (size_t t = 0; t < n_topos; t++)
        cct_nccl_model_compute(&topos[t], &dflt, &costs[t]);

    /* the entries (topology, collective, algorithm, protocol) to fit */
    entry entries[CCT_CALIB_MAX_TOPOS * CCT_NUM_COLLS * N_FIT_ALGOS * CCT_NUM_PROTOS];
    size_t n_entries = 0, n_rows = 0;
    for (size_t j = 0; j < set->n; j++) {
        const cct_calib_obs *q = &set->v[j];
        if (!obs_fitted(opt, topos, kappa, costs, q))
            continue;
        size_t e = entry_of(entries, n_entries, q);
        if (e == n_entries)
            entries[n_entries++] = (entry){q->ti, q->coll, q->algo, q->proto};
        n_rows++;
    }
    if (n_rows == 0)
        return cct_error_set(err, CCT_EINVAL,
                             "calibrate: no usable measurement at a fitted rank count (ok points "
                             "at NCCL's channels and buffer sizes, aligned, with a topology and "
                             "Ring/Simple points of at least 1 MiB)");

    /* which latency constants any observation depends on */
    double coef_cache[CCT_CALIB_MAX_TOPOS * CCT_NUM_COLLS * N_FIT_ALGOS * CCT_NUM_PROTOS]
                     [N_LAT_PARAMS + 1];
    bool used[N_LAT_PARAMS] = {false};
    for (size_t e = 0; e < n_entries; e++) {
        latency_coefficients(&topos[entries[e].ti], entries[e].coll, entries[e].algo,
                             entries[e].proto, &coef_cache[e][N_LAT_PARAMS], coef_cache[e]);
        for (int k = 0; k < N_LAT_PARAMS; k++)
            used[k] = used[k] || coef_cache[e][k] != 0.0;
    }
    int lat_col[N_LAT_PARAMS], n_lat = 0;
    for (int k = 0; k < N_LAT_PARAMS; k++)
        lat_col[k] = used[k] ? n_lat++ : -1;
    size_t cols = (size_t)n_lat + n_entries, rows = n_rows + (size_t)n_lat;
    gsl_matrix *X = gsl_matrix_calloc(rows, cols);
    gsl_vector *y = gsl_vector_calloc(rows);
    gsl_vector *beta = gsl_vector_calloc(cols);
    resid->rows = malloc(n_rows * sizeof *resid->rows);
    resid->coef = malloc(n_entries * sizeof *resid->coef);
    if (!X || !y || !beta || !resid->rows || !resid->coef) {
        gsl_matrix_free(X);
        gsl_vector_free(y);
        gsl_vector_free(beta);
        cct_calib_resid_free(resid);
        return cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
    }
    memcpy(resid->coef, coef_cache, n_entries * sizeof *resid->coef);
    resid->n_entries = n_entries;
    size_t r = 0;
    for (size_t j = 0; j < set->n; j++) {
        const cct_calib_obs *q = &set->v[j];
        if (!obs_fitted(opt, topos, kappa, costs, q))
            continue;
        size_t e = entry_of(entries, n_entries, q); /* there: the first pass added it */
        double target = q->t_us / kappa[q->ti];
        double lf, bf;
        size_factors(&costs[q->ti], q->coll, q->algo, q->proto, q->bytes, opt->pipe_ops, &lf, &bf);
        double w = 1.0 / target; /* relative residuals */
        gsl_vector_set(y, r, (target - lf * coef_cache[e][N_LAT_PARAMS]) * w);
        for (int k = 0; k < N_LAT_PARAMS; k++)
            if (lat_col[k] >= 0)
                gsl_matrix_set(X, r, (size_t)lat_col[k], lf * coef_cache[e][k] * w);
        /* inverse bandwidth in us per MB: time = n / (1000 bw) = (n / 1e6) * (1000 / bw) */
        gsl_matrix_set(X, r, (size_t)n_lat + e, (double)q->bytes / 1e6 / bf * w);
        resid->rows[resid->n_rows++] =
            (cct_calib_resid_row){e, target, lf, (double)q->bytes / 1e6 / bf};
        r++;
    }
    /* weak prior: each latency constant near NCCL's default, relative to a 1 us scale */
    for (int k = 0; k < N_LAT_PARAMS; k++) {
        if (lat_col[k] < 0)
            continue;
        double d = *cct_calib_lat_param(&dflt, k);
        double scale = fmax(d, 1.0);
        gsl_matrix_set(X, r, (size_t)lat_col[k], PRIOR_WEIGHT / scale);
        gsl_vector_set(y, r, PRIOR_WEIGHT * d / scale);
        r++;
    }
    double rms = 0.0;
    cct_status st = solve(X, y, (size_t)n_lat, beta, &rms, err);
    if (st == CCT_OK) {
        cct_constants *fit = &out->constants;
        cct_constants_clear(fit);
        fit->present = true;
        for (int k = 0; k < N_LAT_PARAMS; k++)
            if (lat_col[k] >= 0)
                *cct_calib_lat_param(fit, k) =
                    round(gsl_vector_get(beta, (size_t)lat_col[k]) * 1000.0) / 1000.0;
        out->fit_points = n_rows;
        out->fit_params = (size_t)n_lat;
        out->fit_rms_rel = rms;
        ceiling_vote votes[32];
        int n_votes = 0;
        for (size_t e = 0; e < n_entries; e++) {
            double inv = gsl_vector_get(beta, (size_t)n_lat + e); /* 1000 / bw */
            if (!(inv > 0.0))
                continue;
            ceiling_votes(&topos[entries[e].ti], &dflt, entries[e].coll, entries[e].algo,
                          entries[e].proto, 1000.0 / inv, fit, votes, &n_votes);
        }
        for (int i = 0; i < n_votes; i++)
            decide_ceiling(&votes[i]);
        /* across nodes llMaxBw's row is the CPU vendor (Intel 0, AMD 1), which NCCL's log does
         * not print: give both rows the fitted value (rows 0/1 beyond one node are CPU rows) */
        for (int sc = 1; sc < CCT_CONST_SCALES; sc++) {
            double *intel = &fit->ll_max_bw[0][sc], *amd = &fit->ll_max_bw[1][sc];
            if (!isnan(*intel) && isnan(*amd))
                *amd = *intel;
            else if (isnan(*intel) && !isnan(*amd))
                *intel = *amd;
        }
    }
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(beta);
    return st;
}

void cct_calib_resid_free(cct_calib_resid *r)
{
    free(r->rows);
    free(r->coef);
    memset(r, 0, sizeof *r);
}

double cct_calib_resid_mse(const cct_calib_resid *r, const cct_constants *k)
{
    if (r->n_rows == 0)
        return 0.0;
    cct_constants full = *k;
    double theta[N_LAT_PARAMS];
    for (int j = 0; j < N_LAT_PARAMS; j++)
        theta[j] = *cct_calib_lat_param(&full, j);
    double *sums = calloc(2 * r->n_entries, sizeof *sums), *lat = calloc(r->n_entries, sizeof *lat);
    if (!sums || !lat) {
        free(sums);
        free(lat);
        return INFINITY;
    }
    for (size_t e = 0; e < r->n_entries; e++) {
        lat[e] = r->coef[e][N_LAT_PARAMS];
        for (int j = 0; j < N_LAT_PARAMS; j++)
            if (r->coef[e][j] != 0.0)
                lat[e] += r->coef[e][j] * theta[j];
    }
    /* each entry's inverse bandwidth: the 1-D weighted least squares given the latencies */
    for (size_t i = 0; i < r->n_rows; i++) {
        const cct_calib_resid_row *w = &r->rows[i];
        double wt = 1.0 / w->y, rest = (w->y - w->lf * lat[w->entry]) * wt, xw = w->x * wt;
        sums[2 * w->entry] += rest * xw;
        sums[2 * w->entry + 1] += xw * xw;
    }
    double sse = 0.0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const cct_calib_resid_row *w = &r->rows[i];
        double sxx = sums[2 * w->entry + 1];
        double b = sxx > 0.0 ? sums[2 * w->entry] / sxx : 0.0;
        double res = (w->y - w->lf * lat[w->entry] - w->x * b) / w->y;
        sse += res * res;
    }
    free(sums);
    free(lat);
    return sse / (double)r->n_rows;
}

/* Agreement and regret at topology t of the three constant sets: NCCL's defaults, the
 * least-squares fit and the final (refined) constants. */
static void score_topo(const cct_calib_grid *grid, const cct_nccl_topo *topos, size_t t,
                       const cct_constants *ls, const cct_constants *final,
                       const cct_calib_options *opt, cct_calib_score *s)
{
    cct_constants k[3];
    cct_nccl_constants_default(&k[0]);
    cct_nccl_constants_overlay(&k[0], ls, &k[1]);
    cct_nccl_constants_overlay(&k[0], final, &k[2]);
    cct_nccl_costs costs[3];
    cct_calib_regret r[3];
    for (int i = 0; i < 3; i++) {
        cct_nccl_model_compute(&topos[t], &k[i], &costs[i]);
        cct_calib_grid_regret(grid, (int)t, &costs[i], opt->pipe_ops, &r[i]);
    }
    s->regret_points = r[0].points;
    double n = r[0].points ? (double)r[0].points : 1.0;
    s->regret_default = r[0].sum / n;
    s->regret_ls = r[1].sum / n;
    s->regret_calibrated = r[2].sum / n;
    s->unmeasured_default = r[0].unmeasured;
    s->unmeasured_ls = r[1].unmeasured;
    s->unmeasured_calibrated = r[2].unmeasured;
    /* agreement: only where every pick was measured */
    for (size_t g = 0; g < grid->n; g++) {
        const cct_calib_grid_point *gp = &grid->v[g];
        if (gp->ti != (int)t)
            continue;
        double tp[3];
        bool measured = true;
        for (int i = 0; i < 3 && measured; i++) {
            int a, p;
            tp[i] = -1.0;
            if (cct_nccl_model_choose(&costs[i], gp->coll, gp->bytes, opt->pipe_ops, &a, &p))
                for (int c = 0; c < gp->n; c++)
                    if (gp->algo[c] == a && gp->proto[c] == p)
                        tp[i] = gp->t_us[c];
            measured = tp[i] > 0.0;
        }
        if (!measured) {
            s->unscored++;
            continue;
        }
        double limit = (1.0 + opt->tie) * gp->best;
        s->points++;
        s->agree_default += tp[0] <= limit;
        s->agree_ls += tp[1] <= limit;
        s->agree_calibrated += tp[2] <= limit;
    }
}

static void score(const cct_calib_grid *grid, const cct_nccl_topo *topos, size_t n_topos,
                  const cct_constants *ls, const cct_constants *final, const cct_calib_options *opt,
                  const double *kappa, cct_calib_result *out)
{
    out->n_scores = 0;
    for (size_t t = 0; t < n_topos; t++) {
        cct_calib_score s = {.ranks = topos[t].n_ranks,
                             .held_out = !cct_calib_fitted(opt, topos[t].n_ranks),
                             .kappa = kappa[t]};
        score_topo(grid, topos, t, ls, final, opt, &s);
        out->scores[out->n_scores++] = s;
    }
    /* ascending rank count */
    for (size_t i = 1; i < out->n_scores; i++)
        for (size_t k = i; k > 0 && out->scores[k - 1].ranks > out->scores[k].ranks; k--) {
            cct_calib_score tmp = out->scores[k];
            out->scores[k] = out->scores[k - 1];
            out->scores[k - 1] = tmp;
        }
}

/* How often the model with default constants picks what NCCL actually ran (default points). */
static void reproduce_nccl(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                           size_t n_topos, const cct_calib_options *opt, cct_calib_result *out)
{
    cct_constants dflt;
    cct_nccl_constants_default(&dflt);
    for (size_t i = 0; i < out->n_scores; i++) {
        cct_calib_score *s = &out->scores[i];
        int ti = -1;
        for (size_t t = 0; t < n_topos; t++)
            if (topos[t].n_ranks == s->ranks)
                ti = (int)t;
        cct_nccl_costs cd;
        cct_nccl_model_compute(&topos[ti], &dflt, &cd);
        for (size_t j = 0; j < n_points; j++) {
            const cct_point *p = &points[j];
            if (!usable(p) || p->cfg.algo != CCT_DEFAULT || p->nccl_algo < 0 ||
                p->cfg.ranks != s->ranks || p->cfg.nodes != topos[ti].n_nodes)
                continue;
            int a, pr;
            if (!cct_nccl_model_choose(&cd, p->cfg.coll, p->bytes, opt->pipe_ops, &a, &pr))
                continue;
            s->nccl_known++;
            s->nccl_reproduced += a == p->nccl_algo && pr == p->nccl_proto;
        }
    }
}

/* Fit (given NULL) or take given constants (given_ls: the least-squares ones, given: the
 * final ones), then score them on the points. */
static cct_status run(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                      size_t n_topos, const cct_constants *given_ls, const cct_constants *given,
                      const cct_calib_options *opt, cct_calib_result *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    cct_constants_clear(&out->constants);
    if (n_topos == 0 || n_topos > CCT_CALIB_MAX_TOPOS)
        return cct_error_set(err, CCT_EINVAL, "calibrate: between 1 and %d topologies needed",
                             CCT_CALIB_MAX_TOPOS);
    cct_calib_obs_set set;
    cct_status st = build_obs(points, n_points, topos, n_topos, &set, err);
    if (st != CCT_OK)
        return st;
    double kappa[CCT_CALIB_MAX_TOPOS];
    cct_constants dflt;
    cct_nccl_constants_default(&dflt);
    for (size_t t = 0; t < n_topos; t++) {
        cct_nccl_costs c;
        cct_nccl_model_compute(&topos[t], &dflt, &c);
        kappa[t] = kappa_of(&set, (int)t, &c, opt->pipe_ops);
    }
    cct_calib_grid grid;
    st = cct_calib_grid_build(&set, topos, n_topos, &grid, err);
    if (st != CCT_OK) {
        free(set.v);
        return st;
    }
    if (given) {
        out->constants = *given;
    } else {
        cct_calib_resid resid = {0};
        st = fit_constants(&set, topos, n_topos, opt, kappa, out, &resid, err);
        out->ls_constants = out->constants;
        if (st == CCT_OK && opt->refine)
            st = cct_calib_refine(&grid, &resid, topos, n_topos, opt, &out->constants, out, err);
        cct_calib_resid_free(&resid);
    }
    if (given)
        out->ls_constants = given_ls ? *given_ls : *given;
    if (st == CCT_OK) {
        score(&grid, topos, n_topos, &out->ls_constants, &out->constants, opt, kappa, out);
        reproduce_nccl(points, n_points, topos, n_topos, opt, out);
    }
    cct_calib_grid_free(&grid);
    free(set.v);
    return st;
}

cct_status cct_calibrate(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                         size_t n_topos, const cct_calib_options *opt, cct_calib_result *out,
                         cct_error *err)
{
    return run(points, n_points, topos, n_topos, NULL, NULL, opt, out, err);
}

cct_status cct_calibrate_score(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                               size_t n_topos, const cct_constants *constants,
                               const cct_calib_options *opt, cct_calib_result *out, cct_error *err)
{
    return run(points, n_points, topos, n_topos, NULL, constants, opt, out, err);
}

cct_status cct_calibrate_evaluate(const cct_point *points, size_t n_points,
                                  const cct_nccl_topo *topos, size_t n_topos,
                                  const cct_calib_result *fit, const cct_calib_options *opt,
                                  cct_calib_result *out, cct_error *err)
{
    return run(points, n_points, topos, n_topos, &fit->ls_constants, &fit->constants, opt, out,
               err);
}
