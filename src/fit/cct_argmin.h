/*
 * cct_argmin.h - the naive peer of the fitter: at every measured size, the fastest measured
 * configuration, as a table.
 *
 * This is what NCCL's example tuner script (plugins/tuner/example/scripts/optimize_config.py)
 * builds for NCCL's example plugin from the same kind of measurements: no model, no test of
 * significance, no tie order.  ccltune builds it from a store so that `ccltune bench` can set
 * the fitter's table against it through the same plugin, and so that its stability across
 * re-tunes can be measured beside the fitter's.
 *
 * Ownership: appends sections to a caller-owned table (cct_table_init/destroy).
 */
#ifndef CCT_ARGMIN_H
#define CCT_ARGMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_error.h"
#include "cct_measure.h"
#include "cct_table.h"

/* One section per (collective, ranks, nodes) of the plain points: at each size where NCCL's
 * default or a candidate was measured (aligned, out of place, NCCL's default buffer sizes),
 * the configuration with the smallest median -- NCCL's own choice (a rule of NCCL's choice)
 * when its default, or the forced twin of its choice, is the fastest.  A configuration with a
 * corrupt, hung or failed point is never chosen, nor LL128 unless ll128_allowed.  Band edges
 * between two measured sizes lie on the readable grid (cct_grid_edge).  Each rule carries its
 * measured time (predicted_us at ref_bytes, the band's first size) and margin_default. */
cct_status cct_build_argmin_table(const cct_point *points, size_t n, bool ll128_allowed,
                                  cct_table *table, cct_error *err);

#endif
