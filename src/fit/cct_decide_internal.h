/*
 * cct_decide_internal.h - the working state of one section's decision, shared by
 * cct_decide_prep.c (grouping, exclusion, models), cct_decide_align.c (penalties),
 * cct_decide.c (ranking, bands, rules) and cct_decide_table.c (whole tables).
 *
 * Ownership: a cct_dsec owns its arrays (the sorted point pointers, the configurations and
 * the penalties) and is released by cct_dsec_free(); the points themselves belong to the
 * caller and must outlive it.
 */
#ifndef CCT_DECIDE_INTERNAL_H
#define CCT_DECIDE_INTERNAL_H

#include "cct_decide.h"

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

/* Sort, validate, group and fit one section's points (all with the same coll/ranks/nodes).
 * On failure sec is left empty. */
cct_status cct_dsec_prepare(const cct_point *points, size_t n, const cct_decide_options *opt,
                            cct_dsec *sec, cct_error *err);
void cct_dsec_free(cct_dsec *sec);

/* Alignment penalties from the section's points (cct_decide_align.c): fills sec->pen and
 * sets each configuration's factor for opt->worst_case_align. */
cct_status cct_dsec_penalties(cct_dsec *sec, const cct_decide_options *opt, cct_error *err);

/* The worst measured penalty of a protocol (>= 0); false when it was never measured. */
bool cct_dsec_worst_penalty(const cct_dsec *sec, int proto, double *penalty);

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

/* A boundary between two measured sizes lo < hi when nothing better is known: their
 * geometric middle (hi / 2 when lo is 0), inside (lo, hi]. */
uint64_t cct_decide_geometric_middle(uint64_t lo, uint64_t hi);

/* Sum over the section's measured sizes of log(best time with buffers b / best time with
 * any buffers), and how many sizes b could serve; used to choose buffers. */
void cct_dsec_score_buffers(const cct_dsec *sec, const cct_buffers *b, double *log_loss,
                            size_t *covered);

/* The distinct buffer settings of the section's candidate configurations, sorted. */
cct_status cct_dsec_buffers(const cct_dsec *sec, cct_buffers **out, size_t *n, cct_error *err);
/* Adds log(t_b / t_default) over the points measured under both buffer settings. */
void cct_dsec_pair_buffers(const cct_dsec *sec, const cct_buffers *b, double *sum_log,
                           size_t *pairs);
/* Whether any configuration other than NCCL's default can be decided on. */
bool cct_dsec_has_candidates(const cct_dsec *sec);
/* Per protocol, the largest size its candidates reach under b (0: none measured). */
void cct_dsec_buffers_reach_proto(const cct_dsec *sec, const cct_buffers *b,
                                  uint64_t reach[CCT_NUM_PROTOS]);
uint64_t cct_dsec_buffers_reach(const cct_dsec *sec, const cct_buffers *b);
/* The table-wide (or one section's) buffer choice; see cct_decide_table.c. */
cct_status cct_dsec_choose_buffers(const cct_dsec *secs, size_t n_secs, double tie,
                                   cct_buffers *out, cct_error *err);

/* Decide with buffers b and fill out (an empty section struct; its arrays are allocated
 * with the cct_section_add_* functions and owned by the caller). */
cct_status cct_dsec_decide(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                           cct_section *out, cct_error *err);

/* Decide with buffers b, check the section and append it to table (unchanged on error). */
cct_status cct_dsec_build(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                          cct_table *table, cct_error *err);

#endif
