/*
 * cct_bench.h - `ccltune bench`: a table's choices against NCCL's defaults and the oracle.
 *
 * A bench is one session of the search engine whose configurations per collective are
 * NCCL's default (the plugin steps aside), the table's choice (the plugin applies the
 * table, exactly as in a training job), and forced one by one every algorithm/protocol NCCL
 * offers on the path, every configuration the table has a model for and every one its
 * rules apply; the oracle at a size is the fastest forced configuration.  All
 * are timed in the same cycles on the same communicators, in mirrored order, at sizes on
 * and off the search grid.  The session runs with NCCL's untouched protocol set, so the
 * defaults are the real defaults.  Points go to the store (algo 'default' / 'tuned' /
 * forced) like any search, so a killed bench loses nothing.
 *
 * Ownership: cct_bench_build_plan fills a plan the caller destroys (cct_plan_destroy).
 */
#ifndef CCT_BENCH_H
#define CCT_BENCH_H

#include <stdio.h>

#include "cct_search.h"
#include "cct_store.h"
#include "cct_table.h"

/* Sizes used when --sizes is not given: a grid every factor 4 from 1 KiB, plus off-grid
 * sizes (100 KB, 3 MiB, 5.5 MiB, 12 MB), up to max_bytes. */
size_t cct_bench_default_sizes(uint64_t max_bytes, uint64_t *sizes, size_t cap);
/* Sort sizes ascending (the order groups are measured in). */
void cct_bench_sort_sizes(uint64_t *sizes, size_t n);

/* The bench plan for a table at ranks/nodes: collectives opts->space.colls that the table
 * has a section for -- every one of them when the table has nccl_constants; sizes
 * opts->bench_sizes.  CCT_ENOTFOUND when the table has no section for that topology and
 * no constants (err lists what it has).  With constants, session 0 sets
 * default_no_constants (and no_rules for opts->bench_rules_off). */
cct_status cct_bench_build_plan(const cct_search_opts *opts, const cct_table *table, int ranks,
                                int nodes, cct_plan *plan, cct_error *err);

/* Whether (algo, proto) is one of the oracle's candidates that NCCL offers for coll on the
 * bench's path (ranks on nodes), whatever the table holds: Ring; Tree for allreduce only; PAT
 * where NCCL offers it (cct_pat_offered: allgather/reducescatter, Simple, one rank per node);
 * LL128 only where the table's ll128 verdict allows it. */
bool cct_bench_generic_candidate(const cct_table *t, int coll, int algo, int proto, int ranks,
                                 int nodes);

/* Per collective and size: default, tuned and oracle medians, the ratios tuned/default
 * (speed-up, >1 is faster) and tuned/oracle, what each chose; the geometric-mean gain
 * over the default.  Markdown to out; CSV to csv if not NULL. */
typedef struct cct_bench_summary {
    size_t rows;
    double geomean_vs_default; /* geometric mean of default/tuned over rows */
    double worst_vs_default;   /* min over rows of default/tuned */
    double worst_vs_oracle;    /* min over rows of oracle/tuned */
    size_t below_098_default;  /* rows where tuned is slower than 0.98 x default speed */
    size_t below_098_oracle;
    /* of those, the rows where the two points' samples differ at the 5 % level (two-sided
     * Mann-Whitney U): the losses the bench itself can tell from its noise */
    size_t below_098_default_sig;
    size_t below_098_oracle_sig;
    /* Rows where NCCL ran the same algorithm and protocol for the table as for its default:
     * the table changed at most the channel count there (where it changed nothing -- a band
     * left to NCCL, or a constants-only table that moved no choice -- the ratio is the
     * bench's own noise).  The rest are where the table changed NCCL's algorithm or
     * protocol. */
    size_t same_choice;
    double geomean_same; /* NAN when same_choice is 0 */
    size_t changed;      /* rows - same_choice (rows where either choice is unknown count here) */
    double geomean_changed;   /* NAN when changed is 0 */
    size_t below_098_changed; /* changed rows below 0.98 x default */
} cct_bench_summary;

cct_status cct_bench_report(cct_store *store, int64_t run_id, FILE *out, FILE *csv,
                            cct_bench_summary *summary, cct_error *err);

/* After a bench run: write the report (opts->bench_report or stdout, and the CSV) and
 * return the process exit status. */
int cct_bench_finish(const cct_search_opts *opts, int64_t run_id);

#endif
