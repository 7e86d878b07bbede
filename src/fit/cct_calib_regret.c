/*
 * cct_calib_regret.c - the calibrator's second stage: constants that choose well.
 *
 * A least-squares fit of times (src/cct_calibrate.c) makes NCCL's model close to the
 * measurements on average, but NCCL only uses the model to rank configurations, and a 15 %
 * residual is enough to rank them wrongly near a crossover.  This stage scores constants by
 * the measured regret of NCCL's pick -- log(time of what NCCL's model picks / best measured
 * time) summed over the (rank count, collective, size) grid -- and lowers it with GSL's
 * Nelder-Mead simplex in log-parameter space, starting from the least-squares constants.
 * The regret is piecewise constant in the constants, so the simplex restarts from its best
 * vertex with halved steps; a mild quadratic pull towards the start keeps constants that no
 * choice depends on where least squares put them.  Everything is deterministic: fixed start,
 * steps, restarts and iteration caps, and the values are rounded as the fit's are.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_calibrate_internal.h"
#include "cct_constants.h"

#define REFINE_LOG_RANGE 2.0794415416798357 /* ln 8: each constant within 8x of its start */
#define REFINE_PULL 0.002    /* per constant, mean log regret per (log-factor)^2 from the start */
#define FIT_PULL 0.1         /* mean log regret per relative rise of the time fit's squared error */
#define REFINE_ITER_CAP 300  /* simplex iterations per restart */
#define REFINE_MIN_SIZE 1e-3 /* a simplex this small has converged */
static const double refine_steps[] = {1.0, 0.5, 0.25, 0.125};
#define N_REFINE_STEPS (sizeof refine_steps / sizeof refine_steps[0])
#define SCAN_HALF 16     /* grid points each side of the start: steps of ln 8 / 16 */
#define SCAN_SWEEP_CAP 8 /* coordinate sweeps at most */

cct_status cct_calib_grid_build(const cct_calib_obs_set *set, const cct_nccl_topo *topos,
                                size_t n_topos, cct_calib_grid *grid, cct_error *err)
{
    memset(grid, 0, sizeof *grid);
    cct_constants dflt;
    cct_nccl_constants_default(&dflt);
    cct_nccl_costs *cd = malloc(n_topos * sizeof *cd);
    grid->v = malloc((set->n ? set->n : 1) * sizeof *grid->v);
    if (!cd || !grid->v) {
        free(cd);
        free(grid->v);
        grid->v = NULL;
        return cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
    }
    for (size_t t = 0; t < n_topos; t++)
        cct_nccl_model_compute(&topos[t], &dflt, &cd[t]);
    for (size_t j = 0; j < set->n; j++) {
        const cct_calib_obs *q = &set->v[j];
        bool seen = false;
        for (size_t k = 0; k < j && !seen; k++)
            seen =
                set->v[k].ti == q->ti && set->v[k].coll == q->coll && set->v[k].bytes == q->bytes;
        if (seen)
            continue;
        cct_calib_grid_point g = {.ti = q->ti, .coll = q->coll, .bytes = q->bytes};
        g.best = INFINITY;
        g.worst = 0.0;
        for (int a = 0; a < CCT_NUM_ALGOS; a++)
            for (int p = 0; p < CCT_NUM_PROTOS; p++) {
                if (!cct_calib_is_candidate(&cd[q->ti], q->coll, a, p))
                    continue;
                const cct_calib_obs *m = cct_calib_find_obs(set, q->ti, q->coll, a, p, q->bytes);
                if (!m)
                    continue;
                g.algo[g.n] = (signed char)a;
                g.proto[g.n] = (signed char)p;
                g.t_us[g.n++] = m->t_us;
                g.best = fmin(g.best, m->t_us);
                g.worst = fmax(g.worst, m->t_us);
            }
        if (g.n >= 2) /* only NCCL's own choice measured: nothing to compare */
            grid->v[grid->n++] = g;
    }
    free(cd);
    return CCT_OK;
}

void cct_calib_grid_free(cct_calib_grid *grid)
{
    free(grid->v);
    memset(grid, 0, sizeof *grid);
}

void cct_calib_grid_regret(const cct_calib_grid *grid, int ti, const cct_nccl_costs *costs,
                           int pipe_ops, cct_calib_regret *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < grid->n; i++) {
        const cct_calib_grid_point *g = &grid->v[i];
        if (g->ti != ti)
            continue;
        int a, p;
        if (!cct_nccl_model_choose(costs, g->coll, g->bytes, pipe_ops, &a, &p))
            continue;
        double t = -1.0;
        for (int k = 0; k < g->n && t < 0.0; k++)
            if (g->algo[k] == a && g->proto[k] == p)
                t = g->t_us[k];
        if (t < 0.0) {
            t = g->worst;
            out->unmeasured++;
        }
        out->points++;
        out->sum += log(t / g->best);
    }
}

/* One refined latency constant: x = max(0, (x0 + 1) e^u - 1), so one that starts at 0 can
 * still move. */
typedef struct refine_param {
    double *slot;
    double x0;
} refine_param;

typedef struct refine_ctx {
    const cct_calib_grid *grid;
    const cct_calib_resid *resid;
    double mse_ls; /* the time fit's mean squared relative residual at the start */
    const cct_nccl_topo *topos;
    size_t n_topos;
    const cct_calib_options *opt;
    cct_constants work; /* the fitted constants, refined entries rewritten per evaluation */
    refine_param params[CCT_CONST_NUM_SLOTS];
    size_t n_params;
    size_t evals;
} refine_ctx;

static double param_value(const refine_param *p, double u)
{
    u = fmax(-REFINE_LOG_RANGE, fmin(REFINE_LOG_RANGE, u));
    return fmax(0.0, (p->x0 + 1.0) * exp(u) - 1.0);
}

/* Mean log regret over the fitted rank counts, for the constants ctx->work. */
static double mean_regret(refine_ctx *c)
{
    cct_constants dflt, full;
    cct_nccl_constants_default(&dflt);
    cct_nccl_constants_overlay(&dflt, &c->work, &full);
    double sum = 0.0;
    size_t points = 0;
    for (size_t t = 0; t < c->n_topos; t++) {
        if (!cct_calib_fitted(c->opt, c->topos[t].n_ranks))
            continue;
        cct_nccl_costs costs;
        cct_nccl_model_compute(&c->topos[t], &full, &costs);
        cct_calib_regret r;
        cct_calib_grid_regret(c->grid, (int)t, &costs, c->opt->pipe_ops, &r);
        sum += r.sum;
        points += r.points;
    }
    c->evals++;
    return points ? sum / (double)points : 0.0;
}

static double objective(const gsl_vector *u, void *arg)
{
    refine_ctx *c = arg;
    double pull = 0.0;
    for (size_t k = 0; k < c->n_params; k++) {
        double uk = gsl_vector_get(u, k);
        *c->params[k].slot = param_value(&c->params[k], uk);
        pull += uk * uk;
    }
    double fit_pull = 0.0;
    if (c->mse_ls > 0.0) {
        cct_constants dflt, full;
        cct_nccl_constants_default(&dflt);
        cct_nccl_constants_overlay(&dflt, &c->work, &full);
        fit_pull = FIT_PULL * fmax(0.0, cct_calib_resid_mse(c->resid, &full) / c->mse_ls - 1.0);
    }
    return mean_regret(c) + REFINE_PULL * pull + fit_pull;
}

/* Set the refined entries from u, rounded as the least-squares fit rounds them. */
static void apply_rounded(refine_ctx *c, const gsl_vector *u)
{
    for (size_t k = 0; k < c->n_params; k++)
        *c->params[k].slot =
            round(param_value(&c->params[k], gsl_vector_get(u, k)) * 1000.0) / 1000.0;
}

/* Coordinate scan: each constant alone over a fixed grid of factors across its whole range
 * (the regret is a step function with plateaus a local step cannot leave), keeping the best
 * point; sweeps until one changes nothing. */
static void scan(refine_ctx *c, gsl_vector *u, gsl_vector *trial, double *best)
{
    for (int sweep = 0; sweep < SCAN_SWEEP_CAP; sweep++) {
        bool improved = false;
        for (size_t k = 0; k < c->n_params; k++)
            for (int g = -SCAN_HALF; g <= SCAN_HALF; g++) {
                gsl_vector_memcpy(trial, u);
                gsl_vector_set(trial, k, REFINE_LOG_RANGE * g / SCAN_HALF);
                double v = objective(trial, c);
                if (v < *best - 1e-12) {
                    *best = v;
                    gsl_vector_memcpy(u, trial);
                    improved = true;
                }
            }
        if (!improved)
            break;
    }
}

/* Nelder-Mead from u, restarted from its best vertex with halved steps. */
static cct_status nelder_mead(refine_ctx *c, gsl_vector *u, double *best, cct_error *err)
{
    size_t np = c->n_params;
    gsl_vector *step = gsl_vector_alloc(np);
    gsl_multimin_fminimizer *m =
        gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, np);
    cct_status st = CCT_OK;
    if (!step || !m)
        st = cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
    gsl_set_error_handler_off();
    gsl_multimin_function f = {objective, np, c};
    for (size_t r = 0; r < N_REFINE_STEPS && st == CCT_OK; r++) {
        gsl_vector_set_all(step, refine_steps[r]);
        if (gsl_multimin_fminimizer_set(m, &f, u, step) != GSL_SUCCESS) {
            st = cct_error_set(err, CCT_EINVAL, "calibrate: the regret refinement failed");
            break;
        }
        for (int it = 0; it < REFINE_ITER_CAP; it++) {
            if (gsl_multimin_fminimizer_iterate(m) != GSL_SUCCESS)
                break;
            if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), REFINE_MIN_SIZE) ==
                GSL_SUCCESS)
                break;
        }
        if (gsl_multimin_fminimizer_minimum(m) < *best) {
            *best = gsl_multimin_fminimizer_minimum(m);
            gsl_vector_memcpy(u, gsl_multimin_fminimizer_x(m));
        }
    }
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(step);
    return st;
}

cct_status cct_calib_refine(const cct_calib_grid *grid, const cct_calib_resid *resid,
                            const cct_nccl_topo *topos, size_t n_topos,
                            const cct_calib_options *opt, cct_constants *fit, cct_calib_result *out,
                            cct_error *err)
{
    refine_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
    c->grid = grid;
    c->resid = resid;
    c->topos = topos;
    c->n_topos = n_topos;
    c->opt = opt;
    c->work = *fit;
    for (size_t n = 0; n < CCT_CONST_NUM_SLOTS; n++) {
        cct_const_slot s = cct_const_slot_at(n);
        double *slot = cct_const_value(&c->work, s);
        if (isnan(*slot))
            continue;
        /* the ceilings are medians of measured bandwidths, which the time-fit pull cannot
         * see: only latencies move (moving llMaxBw on 4 ranks misled the held-out 8) */
        if (cct_const_family_is_bandwidth(s.family))
            continue;
        c->params[c->n_params++] = (refine_param){slot, *slot};
    }
    {
        cct_constants dflt, full;
        cct_nccl_constants_default(&dflt);
        cct_nccl_constants_overlay(&dflt, &c->work, &full);
        c->mse_ls = cct_calib_resid_mse(resid, &full);
    }
    out->refine_params = c->n_params;
    out->refine_before = mean_regret(c);
    out->refine_after = out->refine_before;
    if (c->n_params == 0) {
        free(c);
        return CCT_OK;
    }
    size_t np = c->n_params;
    gsl_vector *u = gsl_vector_calloc(np), *trial = gsl_vector_alloc(np);
    cct_status st = CCT_OK;
    if (!u || !trial) {
        st = cct_error_set(err, CCT_ENOMEM, "calibrate: out of memory");
    } else {
        double best = objective(u, c);
        scan(c, u, trial, &best);
        st = nelder_mead(c, u, &best, err);
        if (st == CCT_OK)
            scan(c, u, trial, &best);
        if (st == CCT_OK) {
            apply_rounded(c, u);
            double after = mean_regret(c);
            if (after <= out->refine_before) { /* rounding never makes it worse than the start */
                *fit = c->work;
                out->refine_after = after;
            }
        }
    }
    out->refine_evals = c->evals;
    gsl_vector_free(u);
    gsl_vector_free(trial);
    free(c);
    return st;
}
