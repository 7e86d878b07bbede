/*
 * cct_decide.h - from measured points to a table's decisions: per collective and topology,
 * the best configuration for each band of message sizes.
 *
 * Inputs are measured points of many configurations (algorithm, protocol, channels, buffer
 * sizes, alignment) over sizes, plus the baseline (algo = CCT_DEFAULT: NCCL's own choice).
 * Each configuration gets a model (cct_fit.h); at every measured size the configurations
 * are ranked by measured time where measured, by their model where not; near-ties are
 * broken by a fixed preference; bands are merged, too-narrow bands absorbed, and the
 * boundaries placed where the fitted curves cross.  docs/fitting.md ("Decisions") gives
 * every rule and the reasons.  Same points in any order -> the same section, bit for bit.
 *
 * Ownership: the builders append to a caller-owned cct_table (cct_table_init/destroy);
 * inputs are only read.  Links GSL: part of the cct_fit library, not the core.
 */
#ifndef CCT_DECIDE_H
#define CCT_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_fit.h"
#include "cct_measure.h"
#include "cct_table.h"

typedef struct cct_decide_options {
    double tie;              /* configurations within this fraction of the fastest tie (0.05) */
    double paired_tie;       /* with per-cycle samples: a configuration neither slower than
                              * the best by more than this (or the noise floor) with
                              * significance nor by more than this in the estimate ties with
                              * it (0.05) */
    double channel_tie;      /* with per-cycle samples: a fixed channel count gives way to
                              * NCCL's count (same algorithm and protocol) unless faster with
                              * significance or, in the estimate, by more than this (0.10) */
    double max_loss_default; /* a tie-break may not pick a configuration predicted slower than
                              * NCCL's default by more than this fraction (0.02); then the
                              * fastest, or NCCL's own choice forced, wins instead; and a
                              * band leaves NCCL's choice only when it beats NCCL's default
                              * by more than this */
    double evidence_z;       /* ... and by more than this many standard errors of its mean
                              * gain over the band's measured sizes (2.0); <= 0: guard only */
    double min_band_factor;  /* an interior band must span max/min >= this (2.0); <= 1: off */
    int min_band_sizes;      /* every band must rest on this many measured sizes (2); <=1: off */
    bool ll128_allowed;      /* false: every LL128 configuration is excluded (default false) */
    bool worst_case_align;   /* rank by time at the protocol's worst measured misalignment */
    int dtype;               /* CCT_DTYPE_*; -1: the one data type the points have (default) */
    bool auto_buffers;       /* choose the buffer sizes (default); else use the three below */
    /* Per-cycle samples of the points (cct_cycles.h), or NULL: then decisions use each
     * point's statistics only (imported logs).  With them, NCCL's choice is left only where
     * the paired per-cycle gain is significant and above the run's A/A noise floor. */
    const struct cct_cycles *cycles;
    /* The table this fit replaces, or NULL: with cycles, at each size where its choice is
     * still a candidate and not significantly slower than the best, it stays; where it left
     * the size to NCCL, a new choice must be significant at that size.  A re-tune then
     * changes what the new measurements show changed, not what noise reordered. */
    const cct_table *previous;
    int prior_df; /* with cycles: weight, in degrees of freedom, of the size's pooled spread in
                   * each paired interval (cct_gain_estimate_pooled) (4); 0: each pair alone */
    uint64_t buffsize, ll_buffsize, ll128_buffsize; /* NCCL_*BUFFSIZE of the rules; 0: default */
    cct_fit_options fit;
} cct_decide_options;

void cct_decide_options_default(cct_decide_options *opt);

/* Decide one section from points that all share (coll, ranks, nodes) (else CCT_EINVAL) and
 * append it to table.  Points with status CORRUPT, HANG or ERROR exclude their whole
 * configuration (every size and alignment); UNSUPPORTED points are ignored.  With
 * auto_buffers, the buffer sizes whose configurations are fastest here are used (see
 * cct_build_table for one choice across sections).  The section gets rules covering
 * [0, inf), a model for every configuration that has >= 2 aligned sizes (sorted), and the
 * alignment penalties; it passes cct_table_check_section before it is appended.  On error
 * the table is unchanged.  opt NULL: defaults. */
cct_status cct_build_section(const cct_point *points, size_t n, const cct_decide_options *opt,
                             cct_table *table, cct_error *err);

/* Group points by (coll, ranks, nodes), choose one set of buffer sizes for the whole table
 * (they are process-wide environment variables) when auto_buffers, record non-default
 * ones in recommended_env, build every section (sorted by coll, ranks, nodes) and run
 * cct_table_check.  table must be freshly initialised or hold only provenance/fingerprint
 * (which the caller fills); on error the sections added so far are removed. */
cct_status cct_build_table(const cct_point *points, size_t n, const cct_decide_options *opt,
                           cct_table *table, cct_error *err);

/* cct_build_table that also reports how many (collective, ranks, nodes) groups were
 * skipped because only NCCL's default was measured there (skipped may be NULL). */
cct_status cct_build_table_counted(const cct_point *points, size_t n, const cct_decide_options *opt,
                                   cct_table *table, size_t *skipped, cct_error *err);

/* Sections keyed by call mode (cct_decide_modes.c): the points measured grouped or with
 * registered buffers (plain points are ignored), filed under the numPipeOps/regBuff NCCL
 * passed its tuner, each built like a plain section at NCCL's default buffers and appended
 * only where it beats the table's plain section, timed in that mode, by more than opt->tie
 * at some measured size.  Call after cct_build_table on the plain points; *emitted counts the
 * sections added.  On error the table is as it was. */
cct_status cct_build_mode_sections(const cct_point *points, size_t n, const cct_decide_options *opt,
                                   cct_table *table, size_t *emitted, cct_error *err);

/* Where model a (times factor_a) stops being slower or faster than model b (times
 * factor_b) between sizes lo < hi: the root of the difference of the predictions, found by
 * bisection on log size to the byte.  Returns false (and leaves *at) when the difference
 * does not change sign over [lo, hi].  No global state: safe from several threads. */
bool cct_decide_crossover(const cct_model *a, double factor_a, const cct_model *b, double factor_b,
                          uint64_t lo, uint64_t hi, double *at);

/* Whether a configuration beats NCCL's default with evidence, from its log gains
 * log(t_default / t_config) and their standard errors at k measured sizes: the mean gain must
 * exceed log(1 + guard) and z times its standard error sqrt(sum se^2) / k (z <= 0: the guard
 * only).  k = 0 is no evidence.  The mean and standard error go to *mean and *se when not NULL. */
bool cct_decide_evidence(const double *log_gain, const double *se, size_t k, double guard, double z,
                         double *mean, double *se_out);

#endif
