/*
 * cct_calibrate.h - fit NCCL's cost-model constants (cct_constants) to measurements, so that
 * NCCL's own model (cct_nccl_model.h) picks what was measured fastest; and score a set of
 * constants by how often NCCL's pick agrees with the measurements.  docs/calibration.md
 * explains the method.
 *
 * Inputs: stored points (any number of runs and rank counts) and, per rank count, the
 * topology NCCL derived at init (read from its debug log, cct_nccl_log.h).  Only points that
 * NCCL itself could produce count: status ok, NCCL's channel count and buffer sizes, aligned
 * buffers; a forced (algorithm, protocol) and NCCL's own choice (what it ran) alike.
 */
#ifndef CCT_CALIBRATE_H
#define CCT_CALIBRATE_H

#include <stddef.h>

#include "cct_error.h"
#include "cct_measure.h"
#include "cct_nccl_model.h"
#include "cct_table.h"

#define CCT_CALIB_MAX_TOPOS 16

typedef struct cct_calib_options {
    int fit_ranks[CCT_CALIB_MAX_TOPOS]; /* rank counts to fit on; n_fit_ranks 0: every one */
    size_t n_fit_ranks;
    double tie;   /* a pick within this fraction of the measured best agrees [0.05] */
    int pipe_ops; /* numPipeOps of the modelled calls [1] */
    bool refine;  /* refine the least-squares constants on the choice regret [true] */
} cct_calib_options;

void cct_calib_options_default(cct_calib_options *opt);

/* Agreement of NCCL's model with the measurements at one rank count. */
typedef struct cct_calib_score {
    int ranks;
    bool held_out;   /* not among the fitted rank counts */
    size_t points;   /* (collective, size) grid points scored */
    size_t unscored; /* grid points skipped: a pick was never measured at that size */
    size_t agree_default, agree_calibrated; /* pick within tie of the measured best */
    size_t nccl_known;      /* points where the store says what NCCL ran by default */
    size_t nccl_reproduced; /* ... and the model with default constants picks the same */
    double kappa;    /* measured / modelled Ring/Simple time at large sizes; NAN if unknown */
    size_t agree_ls; /* ... with the least-squares constants, before the regret refinement */
    /* Choice regret: over the regret_points (collective, size) with at least two measured
     * candidates, the mean of log(measured time of NCCL's pick / best measured time); a pick
     * never measured there counts as the slowest measured candidate (unmeasured_*). */
    size_t regret_points;
    double regret_default, regret_ls, regret_calibrated;
    size_t unmeasured_default, unmeasured_ls, unmeasured_calibrated;
} cct_calib_score;

typedef struct cct_calib_result {
    cct_constants constants; /* the fitted values; NAN where the data says nothing */
    size_t n_scores;
    cct_calib_score scores[CCT_CALIB_MAX_TOPOS]; /* ascending rank count */
    size_t fit_points;                           /* measured times the latency fit used */
    size_t fit_params;                           /* latency constants it moved */
    double fit_rms_rel;                          /* RMS relative residual of that fit */
    cct_constants ls_constants;         /* the least-squares fit, before the regret refinement */
    size_t refine_params;               /* constants the refinement moved freely */
    size_t refine_evals;                /* objective evaluations it took */
    double refine_before, refine_after; /* its objective at the start and at the end */
} cct_calib_result;

/* Fit constants on the rank counts opt->fit_ranks and score default vs fitted constants on
 * every rank count that has both points and a topology.  CCT_EINVAL (with a clear message)
 * when no fitted rank count has a topology and usable points. */
cct_status cct_calibrate(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                         size_t n_topos, const cct_calib_options *opt, cct_calib_result *out,
                         cct_error *err);

/* Score given constants (overlaid on NCCL's defaults) on the points, as cct_calibrate does
 * (the least-squares columns repeat the given constants). */
cct_status cct_calibrate_score(const cct_point *points, size_t n_points, const cct_nccl_topo *topos,
                               size_t n_topos, const cct_constants *constants,
                               const cct_calib_options *opt, cct_calib_result *out, cct_error *err);

/* Score a fit's least-squares and final constants on other points (evaluation stores, never
 * fitted), as cct_calibrate scores them on its own. */
cct_status cct_calibrate_evaluate(const cct_point *points, size_t n_points,
                                  const cct_nccl_topo *topos, size_t n_topos,
                                  const cct_calib_result *fit, const cct_calib_options *opt,
                                  cct_calib_result *out, cct_error *err);

#endif
