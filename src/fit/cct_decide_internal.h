/*
 * cct_decide_internal.h - the working state of one section's decision as it flows through
 * the pipeline, one way:
 *
 *   prepare (cct_decide_prepare.c, with cct_decide_align.c)  points -> cct_dsec
 *   buffers (cct_decide_buffers.c)                            cct_dsec[] -> cct_buffers
 *   bands   (cct_decide_bands.c)                              cct_dsec + cct_buffers -> cct_dbands
 *   settle  (cct_decide_settle.c)                             cct_dbands -> cct_dsettled
 *   rules   (cct_decide_rules.c)                              cct_dsettled -> cct_section
 *
 * orchestrated by cct_decide.c (one section), cct_decide_table.c (a table) and
 * cct_decide_modes.c (call-mode sections).  What several stages read lies lower:
 * cct_decide_conf.c (a configuration's times) and cct_decide_view.c (one section under one
 * buffer setting: candidates, grid, NCCL's choice, noise floor, per-cycle pairs).
 *
 * Ownership: a cct_dsec owns its arrays (the sorted point pointers, the configurations and
 * the penalties) and is released by cct_dsec_free(); the points themselves belong to the
 * caller and must outlive it.  A cct_dbands owns its view and winners (cct_dbands_free), a
 * cct_dsettled its bands (cct_dsettled_free); each only reads the stage before it.
 */
#ifndef CCT_DECIDE_INTERNAL_H
#define CCT_DECIDE_INTERNAL_H

#include "cct_decide.h"
#include "cct_decide_stats.h"

/* One configuration (alignment aside) of the section. */
typedef struct cct_dconf {
    cct_config cfg;        /* align 0 */
    const cct_point **pts; /* its aligned OK points, sorted by size (into cct_dsec.pts) */
    size_t n;              /* may be 0: only misaligned or failed points */
    const cct_point **all; /* every point of the configuration, any alignment and status */
    size_t n_all;
    uint64_t lo, hi; /* smallest and largest aligned measured size */
    int n_sizes;     /* distinct aligned sizes */
    bool excluded;   /* a corrupt, hung or failed point, or LL128 where forbidden */
    bool baseline;   /* algo == CCT_DEFAULT */
    bool fitted;     /* model is valid (>= 2 sizes) */
    cct_model model;
    double factor; /* multiplier of its times when ranking (worst-case alignment) */
} cct_dconf;

typedef struct cct_dsec {
    int coll, ranks, nodes, dtype;
    const cct_point **pts; /* the section's points of the chosen dtype, sorted */
    size_t n;
    cct_dconf *conf; /* sorted by cct_fit_config_compare */
    size_t n_conf;
    cct_align_penalty *pen; /* sorted by (proto, offset) */
    size_t n_pen;
} cct_dsec;

/* Buffer sizes shared by the rules of a table (process-wide environment variables). */
typedef struct cct_buffers {
    uint64_t buffsize, ll_buffsize, ll128_buffsize;
} cct_buffers;

/* ---- prepare (cct_decide_prepare.c, cct_decide_align.c) ---- */

/* Sort, validate, group and fit one section's points (all with the same coll/ranks/nodes),
 * then its alignment penalties.  On failure sec is left empty. */
cct_status cct_dsec_prepare(const cct_point *points, size_t n, const cct_decide_options *opt,
                            cct_dsec *sec, cct_error *err);

/* Alignment penalties from the section's points (cct_decide_align.c): fills sec->pen and
 * sets each configuration's factor for opt->worst_case_align. */
cct_status cct_dsec_penalties(cct_dsec *sec, const cct_decide_options *opt, cct_error *err);

/* ---- buffers (cct_decide_buffers.c) ---- */

/* The table-wide (or one section's) buffer choice; see cct_decide_buffers.c. */
cct_status cct_dsec_choose_buffers(const cct_dsec *secs, size_t n_secs, double tie,
                                   cct_buffers *out, cct_error *err);

/* ---- shared by the stages (cct_decide_conf.c) ---- */

void cct_dsec_free(cct_dsec *sec);

/* Release a section's rules, models and penalties and zero their counts. */
void cct_section_release(cct_section *s);

/* The worst measured penalty of a protocol (>= 0); false when it was never measured. */
bool cct_dsec_worst_penalty(const cct_dsec *sec, int proto, double *penalty);

/* Whether c can be decided on: not excluded, not the baseline, measured aligned. */
bool cct_dconf_candidate(const cct_dconf *c);

/* Whether any configuration other than NCCL's default can be decided on. */
bool cct_dsec_has_candidates(const cct_dsec *sec);

bool cct_dconf_uses(const cct_dconf *c, const cct_buffers *b);

/* Time of configuration c at size bytes for ranking: the mean measured median where c was
 * measured at that size, else its model inside its measured range, else NAN; times the
 * configuration's factor. */
double cct_dconf_time(const cct_dconf *c, uint64_t bytes);

/* Whether c was measured at bytes: then *t is the mean of its medians there (without the
 * factor) and *rel_se the relative standard error of that mean (cct_fit_sigma, floored at
 * rel_floor, pooled over the repeats). */
bool cct_dconf_measured(const cct_dconf *c, uint64_t bytes, double rel_floor, double *t,
                        double *rel_se);

/* ---- one section under one buffer setting (cct_decide_view.c) ---- */

#define CCT_PAIR_MAX 256 /* paired cycles used per size */

typedef struct cct_dview {
    const cct_dsec *sec;
    const cct_decide_options *opt;
    size_t *cand; /* indices into sec->conf */
    size_t n_cand;
    const cct_dconf *base; /* the baseline with the chosen buffers, or NULL */
    size_t def;     /* the index that stands for "NCCL's own choice" (sec->n_conf); SIZE_MAX when
                     * the baseline or the choice NCCL made is unknown: no rule can name it */
    uint64_t *grid; /* every size some candidate was measured at, ascending */
    size_t n_grid;
    double *noise; /* per grid index: the A/A noise floor (a log ratio; 0 unknown) */
    double *var;   /* per grid index: the pooled variance of one cycle's log ratio against
                    * NCCL's default (0 unknown) */
    int *var_df;   /* its degrees of freedom */
    double *pool;  /* n_grid * CCT_PAIR_MAX log ratios of a band (scratch; with cycles only) */
} cct_dview;

/* The candidates and grid of sec under buffers b, NCCL's choice and the noise floor.  On
 * error (no usable configuration) v is released. */
cct_status cct_dview_init(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                          cct_dview *v, cct_error *err);
void cct_dview_free(cct_dview *v);

/* NCCL's own (algo, proto) at the baseline size nearest to bytes (in log size) among the
 * baseline points that recorded it; false when none did. */
bool cct_dview_default_choice(const cct_dview *x, uint64_t bytes, int *algo, int *proto);

/* NCCL's default's time at bytes for ranking (measured, else the baseline's model inside its
 * range; at its protocol's worst penalty with worst_case_align), NAN when unknown. */
double cct_dview_default_time(const cct_dview *x, uint64_t bytes);

/* Time of choice i (a configuration, or x->def) at bytes for ranking. */
double cct_dview_time(const cct_dview *x, size_t i, uint64_t bytes);

/* The per-cycle samples of configuration c's first point at bytes that has them. */
const double *cct_dview_samples(const cct_dview *x, const cct_dconf *c, uint64_t bytes, size_t *n);

/* Writes the log ratios log(t_r / t_c) of the cycles r and c share at bytes (at most
 * CCT_PAIR_MAX); returns how many. */
size_t cct_dview_pair(const cct_dview *x, const cct_dconf *r, const cct_dconf *c, uint64_t bytes,
                      double *out);

/* The gain estimate from n log ratios (reordered) of two configurations at grid index gi,
 * with the size's pooled variance as a prior (cct_gain_estimate_pooled). */
cct_gain_est cct_dview_estimate(const cct_dview *x, size_t gi, double *lr, size_t n);

/* The weight, in degrees of freedom, of grid index gi's pooled variance as a prior: prior_df,
 * at most the pool's own degrees of freedom. */
int cct_dview_prior_df(const cct_dview *x, size_t gi);

/* The grid index of bytes; SIZE_MAX when it is not on the grid. */
size_t cct_dview_grid_index(const cct_dview *x, uint64_t bytes);

/* The paired gain of c over r at bytes. */
cct_gain_est cct_dview_paired(const cct_dview *x, const cct_dconf *r, const cct_dconf *c,
                              uint64_t bytes);

/* The grid index whose numbers a rule of choice conf over grid indices [i0, i1] carries: the
 * size nearest the geometric middle of the measured sizes among those where conf is not
 * slower than NCCL's default (all of them when there is none such). */
size_t cct_dview_ref_index(const cct_dview *x, size_t conf, size_t i0, size_t i1);

/* ---- bands (cct_decide_bands.c) ---- */

/* The choice at every grid size, before any band is settled. */
typedef struct cct_dbands {
    cct_dview view;
    size_t *win;  /* per grid index: an index into sec->conf, or view.def */
    size_t *best; /* per grid index: the candidate with the largest paired gain estimate over
                   * NCCL's default that clears the floor, or SIZE_MAX */
} cct_dbands;

cct_status cct_decide_bands(const cct_dsec *sec, const cct_decide_options *opt,
                            const cct_buffers *b, cct_dbands *out, cct_error *err);
void cct_dbands_free(cct_dbands *d);

/* ---- settle (cct_decide_settle.c) ---- */

typedef struct cct_dband {
    size_t i0, i1;   /* grid indices, inclusive */
    size_t conf;     /* an index into sec->conf, or view.def */
    uint64_t lo, hi; /* [lo, hi): hi CCT_BYTES_INF for the last */
} cct_dband;

/* The bands after narrow ones are absorbed, equal neighbours merged and those without
 * evidence against NCCL's default handed back to it. */
typedef struct cct_dsettled {
    const cct_dview *view; /* the bands stage's, which must outlive this */
    cct_dband *bands;
    size_t n_bands;
} cct_dsettled;

cct_status cct_decide_settle(const cct_dbands *in, cct_dsettled *out, cct_error *err);
void cct_dsettled_free(cct_dsettled *s);

/* ---- rules (cct_decide_rules.c) ---- */

/* The rules of the settled bands, the models and the penalties, appended to out (an empty
 * section struct; on error its arrays are released). */
cct_status cct_decide_rules(const cct_dsettled *in, cct_section *out, cct_error *err);

/* ---- chunk sizes (cct_decide_chunk.c) ---- */

/* Give rule r (grid indices [i0, i1] of view x) the chunk size of its configuration's variant
 * that beats NCCL's own chunk there with evidence; chunk_bytes 0 (NCCL's) otherwise. */
void cct_decide_chunk(const cct_dview *x, cct_rule *r, size_t i0, size_t i1);

/* ---- orchestration (cct_decide.c) ---- */

/* Decide with buffers b and fill out (an empty section struct; its arrays are allocated
 * with the cct_section_add_* functions and owned by the caller). */
cct_status cct_dsec_decide(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                           cct_section *out, cct_error *err);

/* Decide with buffers b, check the section and append it to table (unchanged on error). */
cct_status cct_dsec_build(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                          cct_table *table, cct_error *err);

#endif
