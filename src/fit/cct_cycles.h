/*
 * cct_cycles.h - the per-cycle timings behind measured points, for paired comparisons.
 *
 * The search times every configuration of one collective at one size in the same mirrored
 * cycles (src/search/cct_schedule.c) and stores one sample per cycle in measurement order,
 * so sample k of two points of the same group was taken in the same cycle: the ratio of the
 * two is a paired observation, free of what drifted between cycles.  The fitter's
 * significance rule (cct_decide_stats.h) works on these ratios; this index finds a point's
 * samples by its key (configuration, size, in place).
 *
 * Ownership: a cct_cycles owns its entries and their samples; cct_cycles_free releases
 * them.  A loaded index is only read, so any number of threads may look up in it.
 */
#ifndef CCT_CYCLES_H
#define CCT_CYCLES_H

#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_measure.h"
#include "cct_store.h"

typedef struct cct_cycles_entry {
    cct_config cfg;
    uint64_t bytes;
    bool in_place;
    double *t; /* per-cycle microseconds, measurement order */
    size_t n;
} cct_cycles_entry;

typedef struct cct_cycles {
    cct_cycles_entry *e; /* sorted by key */
    size_t n, cap;
} cct_cycles;

void cct_cycles_init(cct_cycles *c);
void cct_cycles_free(cct_cycles *c);

/* Append a point's samples (copied); call cct_cycles_sort after the last.  A key already
 * present keeps its first samples (the lookup finds one of them). */
cct_status cct_cycles_add(cct_cycles *c, const cct_point *p, const double *t, size_t n,
                          cct_error *err);
void cct_cycles_sort(cct_cycles *c);

/* Load the samples of every OK point of the given runs (n_runs 0: every run), sorted. */
cct_status cct_cycles_load(cct_store *store, const int64_t *runs, size_t n_runs, cct_cycles *c,
                           cct_error *err);

/* The samples of the point with p's key; NULL (and *n 0) when none are known. */
const double *cct_cycles_find(const cct_cycles *c, const cct_point *p, size_t *n);

#endif
