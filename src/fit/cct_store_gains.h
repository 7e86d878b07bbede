/*
 * cct_store_gains.h - measured gains over NCCL's own choice, read from a store, for
 * weighting a recorded job (`ccltune audit RECORDING --table T --store DB`).
 *
 * For a collective, communicator shape and size that ran a rule's choice, the gain is the
 * median time of NCCL's default choice over the median time of the rule's configuration
 * (algorithm, protocol, channel count) at the nearest size the store measured both, when
 * that size is within a factor of 2 of the recorded one; otherwise there is no gain.  A
 * `ccltune bench` store also holds the table as the plugin applied it (CCT_TUNED), timed
 * in the same cycles as NCCL's default: at a size it has, that timing is used instead of
 * the forced configuration's (so pass the bench store of the same table).  Only
 * plain calls at default buffers, aligned, in float, with status ok count, from controlled
 * search runs (production observations are left out).  A size run by `search --sizes-from`
 * is answered at exactly that size.  Medians give a point estimate: no interval.
 *
 * Ownership: cct_store_gains_load fills *out; cct_store_gains_destroy frees it.
 */
#ifndef CCT_STORE_GAINS_H
#define CCT_STORE_GAINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_measure.h"
#include "cct_store.h"
#include "cct_table.h"

typedef struct cct_store_gains {
    cct_point *points; /* the usable points, sorted by coll, ranks, nodes, algo, proto, channels,
                          bytes */
    size_t n;
} cct_store_gains;

cct_status cct_store_gains_load(cct_store *store, cct_store_gains *out, cct_error *err);
void cct_store_gains_destroy(cct_store_gains *g);

/* A cct_audit_gain_fn over ctx = a cct_store_gains. */
bool cct_store_gain(void *ctx, int coll, int ranks, int nodes, uint64_t bytes, const cct_rule *rule,
                    double *gain, double *lo, double *hi);

#endif
