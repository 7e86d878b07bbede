/*
 * cct_bench_compare.h - other tables judged in the same bench run (`ccltune bench T
 * --compare OTHER...`).
 *
 * The bench forces every configuration a compared table's rules apply, in the same cycles as
 * NCCL's default and the table under test.  A compared table's time at a size is then the
 * forced point of the rule it would apply there (its section for the communicator's shape;
 * no section: NCCL's default, as the plugin would leave it).  The table under test is judged
 * the same way ("forced"), and its forced time next to its real, plugin-applied time is the
 * forced path's own A/A noise.  Per collective: the geometric-mean speed-up over NCCL's
 * default, the ratio to the table under test (forced), and the sizes where the two differ
 * significantly (two-sided Mann-Whitney U on the per-cycle samples, p < 0.05).
 */
#ifndef CCT_BENCH_COMPARE_H
#define CCT_BENCH_COMPARE_H

#include <stdio.h>

#include "cct_store.h"
#include "cct_table.h"

#define CCT_BENCH_MAX_COMPARE 4

/* One table's standing in one collective (coll CCT_NUM_COLLS: every collective). */
typedef struct cct_compare_line {
    int coll;
    size_t sizes;      /* sizes where this table's choice and the default were both timed */
    double vs_default; /* geometric mean of default / this table */
    double vs_main;    /* geometric mean of main (forced) / this table: > 1, this one is faster */
    size_t faster_sig; /* sizes where it is significantly faster than main (forced) */
    size_t slower_sig; /* ... significantly slower */
} cct_compare_line;

/* Appends to the plan's configuration group of coll (from index first) the configurations
 * the rules of t's section for (coll, ranks, nodes) apply, LL128 only where allowed.  Used
 * by the bench plan; push is its append-unless-present. */
typedef cct_status (*cct_compare_push)(void *ctx, int algo, int proto, int channels,
                                       cct_error *err);
cct_status cct_bench_compare_configs(const cct_table *t, bool ll128_allowed, int coll, int ranks,
                                     int nodes, cct_compare_push push, void *ctx, cct_error *err);

/* Judges, on run_id's points, the table under test as the plugin applied it (row 0), forced
 * (row 1), and tables[k] (row 2 + k), per collective (column c < CCT_NUM_COLLS; sizes 0 where
 * the run has none) and over all (column CCT_NUM_COLLS).  lines holds (n + 2) x
 * (CCT_NUM_COLLS + 1), row-major. */
cct_status cct_bench_compare_lines(cct_store *store, int64_t run_id, const cct_table *main,
                                   const cct_table *tables, size_t n, cct_compare_line *lines,
                                   cct_error *err);

/* The comparison section of a bench report: `main` (the table under test) and tables[0..n)
 * named by names[], judged on run_id's points.  Markdown to out; with say, one summary
 * line per table through cct_say. */
cct_status cct_bench_compare_report(cct_store *store, int64_t run_id, const cct_table *main,
                                    const cct_table *tables, const char *const *names, size_t n,
                                    FILE *out, bool say, cct_error *err);

#endif
