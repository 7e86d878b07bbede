/*
 * cct_calibrate_internal.h - what the calibrator's two halves share: the observations (one
 * measured time per rank count, collective, algorithm, protocol and size) built by
 * src/cct_calibrate.c, and the choice-regret refinement of src/cct_calib_regret.c that
 * polishes the least-squares constants so that NCCL's pick is fast, not just the fit close.
 * Not installed; nothing outside the calibrator includes it.
 */
#ifndef CCT_CALIBRATE_INTERNAL_H
#define CCT_CALIBRATE_INTERNAL_H

#include <stdint.h>

#include "cct_calibrate.h"

typedef struct cct_calib_obs {
    int ti; /* topology index */
    int coll, algo, proto;
    uint64_t bytes;
    double t_us;
    int n; /* observations averaged */
} cct_calib_obs;

typedef struct cct_calib_obs_set {
    cct_calib_obs *v; /* owned; free() */
    size_t n, cap;
} cct_calib_obs_set;

/* The observation of one configuration at one size, NULL when it was never measured. */
const cct_calib_obs *cct_calib_find_obs(const cct_calib_obs_set *set, int ti, int coll, int algo,
                                        int proto, uint64_t bytes);

/* Whether NCCL's model can pick this entry on this topology (bandwidth > 0 with defaults). */
bool cct_calib_is_candidate(const cct_nccl_costs *dflt_costs, int coll, int algo, int proto);

/* Whether a rank count is among the fitted ones. */
bool cct_calib_fitted(const cct_calib_options *opt, int ranks);

/* The latency constants the least-squares fit solves for: base and hardware latencies of
 * Tree, Ring and PAT per protocol; k-th one in a constants struct. */
#define CCT_CALIB_N_LAT_PARAMS (3 * CCT_NUM_PROTOS * (1 + CCT_CONST_HW_LINKS))
double *cct_calib_lat_param(cct_constants *c, int k);

/* The least-squares time fit as a function of the latency constants alone: each measured time
 * (scaled to model units) is lf * (c0 + sum coef[k] theta[k]) + x * beta[entry], beta the
 * entry's inverse bandwidth, free per entry.  The refinement uses it as its pull: constants
 * that make the times fit worse than least squares did cost in proportion. */
typedef struct cct_calib_resid_row {
    size_t entry; /* index into coef: the (topology, collective, algorithm, protocol) */
    double y;     /* measured time in model units */
    double lf, x; /* latency factor (ring plateau); bytes / 1e6 / bandwidth factor */
} cct_calib_resid_row;

typedef struct cct_calib_resid {
    cct_calib_resid_row *rows; /* owned; cct_calib_resid_free */
    size_t n_rows;
    double (*coef)[CCT_CALIB_N_LAT_PARAMS + 1]; /* owned; per entry, c0 last */
    size_t n_entries;
} cct_calib_resid;

void cct_calib_resid_free(cct_calib_resid *r);
/* Mean squared relative residual of the times with the full constants k (latencies from k,
 * each entry's inverse bandwidth at its best value given them); 0 without rows. */
double cct_calib_resid_mse(const cct_calib_resid *r, const cct_constants *k);

/* The regret grid: every (topology, collective, size) with at least two measured candidate
 * configurations (entries NCCL's model can pick there), with their measured times. */
typedef struct cct_calib_grid_point {
    int ti, coll;
    uint64_t bytes;
    int n; /* measured candidates */
    signed char algo[CCT_NUM_ALGOS * CCT_NUM_PROTOS], proto[CCT_NUM_ALGOS * CCT_NUM_PROTOS];
    double t_us[CCT_NUM_ALGOS * CCT_NUM_PROTOS];
    double best, worst;
} cct_calib_grid_point;

typedef struct cct_calib_grid {
    cct_calib_grid_point *v; /* owned; cct_calib_grid_free */
    size_t n;
} cct_calib_grid;

cct_status cct_calib_grid_build(const cct_calib_obs_set *set, const cct_nccl_topo *topos,
                                size_t n_topos, cct_calib_grid *grid, cct_error *err);
void cct_calib_grid_free(cct_calib_grid *grid);

/* Choice regret of NCCL's model `costs` at topology ti: over the grid points there,
 * log(measured time of NCCL's pick / best measured time); a pick never measured at that size
 * counts as the slowest measured candidate there (and is counted in `unmeasured`), so the
 * constants are never credited for sending NCCL where nobody measured. */
typedef struct cct_calib_regret {
    size_t points, unmeasured;
    double sum; /* sum of log regrets */
} cct_calib_regret;

void cct_calib_grid_regret(const cct_calib_grid *grid, int ti, const cct_nccl_costs *costs,
                           int pipe_ops, cct_calib_regret *out);

/* Refine the fitted constants `fit` (NAN: NCCL's value) in place to lower the regret on the
 * fitted rank counts: Nelder-Mead in log-parameter space over the entries the least-squares
 * fit set, within a factor of 8 of the start, with a mild pull back to it;
 * deterministic (fixed start, steps and iteration cap).  Fills out->refine_*. */
cct_status cct_calib_refine(const cct_calib_grid *grid, const cct_calib_resid *resid,
                            const cct_nccl_topo *topos, size_t n_topos,
                            const cct_calib_options *opt, cct_constants *fit, cct_calib_result *out,
                            cct_error *err);

#endif
