/*
 * cct_decide_stats.h - the statistics behind a decision: paired per-cycle gains with their
 * confidence interval, the run's A/A noise floor, the significance rule, the order among
 * configurations that are not significantly different, and the readable grid band edges
 * sit on.  docs/fitting.md ("Stable decisions") gives the reasons.
 *
 * All functions are pure (no allocation, no global state) so that the unit tests can pin
 * each rule down on its own.
 */
#ifndef CCT_DECIDE_STATS_H
#define CCT_DECIDE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_measure.h"

/* A gain of one configuration over a reference, from paired per-cycle log ratios
 * log(t_reference / t_configuration): log_gain is their median, [lo, hi] the 95 % interval of
 * their mean (Student's t, n - 1 degrees of freedom), widened to hold the median. */
typedef struct cct_gain_est {
    double log_gain, lo, hi;
    int cycles; /* paired cycles behind it; 0: no estimate (everything NAN) */
} cct_gain_est;

/* Pair ref[k] with conf[k] (same cycle) for k < min(n_ref, n_conf, max_pairs) (max_pairs 0:
 * no limit); writes log(ref[k] / conf[k]) to out and returns how many.  Non-positive or
 * non-finite samples are skipped. */
size_t cct_paired_log_ratios(const double *ref, size_t n_ref, const double *conf, size_t n_conf,
                             size_t max_pairs, double *out);

/* The estimate from n log ratios (reordered in place); n < 2 gives cycles = n and an
 * unbounded interval (n 0: no estimate). */
cct_gain_est cct_gain_estimate(double *log_ratios, size_t n);

/* The variance of one log ratio from n of them, with a size's pooled variance as a prior
 * (a moderated variance, as in empirical-Bayes tests of many comparisons at once):
 * (prior_df * prior_var + sum of squared deviations) / (prior_df + n - 1), on prior_df + n - 1
 * degrees of freedom (*df).  Two cycles alone give a Student's t of 12.7 and show nothing short
 * of a factor; pooled with the other configurations timed in the same cycles, they show what
 * the run's own spread allows.  prior_df <= 0 or prior_var not > 0: the sample variance
 * alone (NAN for n < 2, *df n - 1). */
double cct_moderated_variance(const double *log_ratios, size_t n, double prior_var, int prior_df,
                              int *df);

/* cct_gain_estimate with the moderated variance: the interval is Student's t on its degrees
 * of freedom around the mean, widened to hold the median; without a prior, cct_gain_estimate. */
cct_gain_est cct_gain_estimate_pooled(double *log_ratios, size_t n, double prior_var, int prior_df);

/* The robust variance of n deviations (reordered in place) that are each normal with the same
 * variance apart from stalls: (1.4826 * median |dev|)^2, 0 for n 0.  A stalled cycle moves a
 * sum of squares by its square, this by one rank. */
double cct_robust_variance(double *dev, size_t n);

/* One size of a band: the paired gain there (a median of log ratios), the variance of that
 * estimate and its degrees of freedom. */
typedef struct cct_stratum {
    double log_gain, var;
    int df, cycles;
} cct_stratum;

/* The band's gain from its sizes (strata): the mean of their gains, its variance the sum of
 * theirs over n^2, the interval Student's t on the summed degrees of freedom.  A gain that
 * differs between sizes is no noise: pooling every cycle of every size as one sample counted
 * that spread against the band.  cycles: the sum; n 0 gives no estimate. */
cct_gain_est cct_gain_stratified(const cct_stratum *s, size_t n);

/* Student's t quantile for a two-sided 95 % interval with df degrees of freedom (>= 1). */
double cct_t95(int df);

/* The run's noise floor from A/A log ratios (NCCL's default against the forced twin of its
 * own choice, same cycles): their root mean square, a log ratio (0 when n is 0). */
double cct_noise_floor(const double *aa_log_ratios, size_t n);

/* The significance rule: the gain is real when its whole 95 % interval lies above both the
 * run's noise floor and log(1 + guard) (at least 2 cycles). */
bool cct_gain_significant(const cct_gain_est *g, double noise, double guard);

/* Whether a configuration is slower than the best one beyond the threshold max(noise,
 * log(1 + tie)), from the paired log ratios log(t_config / t_best) behind g (g.cycles of
 * them, any order): significantly so (cct_gain_significant), or in every paired cycle, which
 * is what the adaptive search saw of a configuration it stopped timing after its first
 * cycles (its fastest cycle slower than the best's slowest). */
bool cct_clearly_slower(const cct_gain_est *g, const double *log_ratios, double noise, double tie);

/* Whether the estimate itself (g's median log ratio) says slower by more than max(noise,
 * log(1 + tie)), shown or not: with two scattered cycles a size a configuration 30 % behind is
 * rarely clearly slower, and equal must not mean that far apart. */
bool cct_estimated_slower(const cct_gain_est *g, double noise, double tie);

/* Order among configurations that are not significantly different, given NCCL's own choice
 * (nccl_algo, nccl_proto; -1 unknown): NCCL's choice itself (its algorithm and protocol at
 * NCCL's channel count) first, then its algorithm and protocol at another channel count, then
 * NCCL's channel count (0) before any fixed one, then fewer channels, then algorithm, protocol
 * and the three buffer sizes ascending.  Negative when a comes first; 0 only for the same
 * configuration. */
int cct_decide_tie_order(const cct_config *a, const cct_config *b, int nccl_algo, int nccl_proto);

/* Readable sizes: 1, 2, 3 and m * 2^k for m in 4..7 (four per octave: 1, 1.25, 1.5 and 1.75
 * times a power of two).  cct_grid_edge: the grid point in (lo, hi] nearest (in log size) to
 * the geometric middle of lo and hi, ties to the smaller; hi when the interval holds none.
 * cct_grid_above: the smallest grid point in (lo, hi], hi when none. */
uint64_t cct_grid_edge(uint64_t lo, uint64_t hi);
uint64_t cct_grid_above(uint64_t lo, uint64_t hi);

#endif
