/*
 * cct_fit_table.h - build a complete table (provenance, fingerprint, LL128 verdict,
 * sections) from runs in a measurement store.  Used by `ccltune fit` and `ccltune tune`.
 *
 * Ownership: the caller owns the table (cct_table_destroy); the store stays open.
 */
#ifndef CCT_FIT_TABLE_H
#define CCT_FIT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cct_decide.h"
#include "cct_store.h"
#include "cct_table.h"

#define CCT_FIT_MAX_RUNS 64

typedef struct cct_fit_table_options {
    int64_t runs[CCT_FIT_MAX_RUNS]; /* selected runs; none: every run in the store */
    size_t n_runs;
    int ll128;        /* -1: the fingerprint's verdict; 0/1: override */
    const char *note; /* provenance note, NULL for none */
    /* further NCCL releases the table applies to (fingerprint.nccl_versions, a checked
     * cct_parse_nccl_versions spec), NULL for none: the table then names only its own */
    const char *nccl_versions;
    int cc;              /* compute capability x 10 when the runs do not record it (imports); 0 */
    bool include_failed; /* use runs marked failed too (they stopped on an error) */
    bool include_production; /* use production observations too (runs of source "production") */
    bool no_cycles; /* decide from the points' statistics only, ignoring per-cycle samples */
    bool argmin;    /* the per-size argmin table (cct_argmin.h) instead of the fitter's */
    cct_decide_options decide;
} cct_fit_table_options;

typedef struct cct_fit_table_summary {
    size_t runs, points, sections, rules, models, poor_fits, corrupt, hung;
    size_t skipped;                  /* topologies with only NCCL's default measured: no section */
    size_t failed_runs_left_out;     /* runs marked failed, not used (include_failed false) */
    size_t production_runs_left_out; /* production runs, not used (include_production false) */
} cct_fit_table_summary;

void cct_fit_table_options_default(cct_fit_table_options *opts);

/* Select runs (all must share one fingerprint; runs marked failed only with
 * include_failed, production observations only with include_production, and naming one
 * in runs without its flag is an error), load their points,
 * decide, fill the table.  `created` is the newest selected run's finishing time, so the same store
 * gives byte-identical output. */
cct_status cct_fit_table_from_store(cct_store *store, const cct_fit_table_options *opts,
                                    cct_table *table, cct_fit_table_summary *summary,
                                    cct_error *err);

/* The runs cct_fit_table_from_store uses (the same rules, without the fingerprint check):
 * *ids malloc'ed, free() it. */
cct_status cct_fit_table_runs(cct_store *store, const cct_fit_table_options *opts, int64_t **ids,
                              size_t *n_ids, cct_error *err);

#endif
