/*
 * cct_schedule_group.h - what the files of the measurement schedule share and nothing else
 * may rely on: the group being measured (one collective at one size, every configuration of
 * the session in each call mode) and the state of each of its configurations.
 *
 * cct_schedule.c fills, measures and stores groups; cct_schedule_adaptive.c decides from
 * them what the adaptive schedule measures next.  The group's arrays are owned by
 * cct_schedule_run, which sizes them for the session's largest group and reuses them.
 */
#ifndef CCT_SCHEDULE_GROUP_H
#define CCT_SCHEDULE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_schedule.h"
#include "cct_stats.h"

/* Per-configuration state of the group being measured. */
typedef struct cct_sched_slot {
    const cct_config *cfg;
    uint64_t bytes;
    bool in_place;
    bool skip;  /* already stored */
    bool known; /* skipped, and its stored status/median/NCCL choice are in status, stats, obs
                 * (a resumed search rebuilds its pruning state from them) */
    bool timed; /* applied and worth timing */
    int status; /* cct_point_status */
    uint64_t wrong;
    cct_observed obs;
    int iters;
    double *samples; /* per-iteration microseconds, one per cycle */
    size_t n_samples;
    cct_stats stats;
    bool noisy;
    /* adaptive: what the run's earlier sessions (or a stored part of this one) measured at
     * this collective, size and call mode: the fastest aligned time (NAN: nothing) and
     * NCCL's choice as its default point observed it (-1: unknown) */
    double ext_best;
    int ext_algo, ext_proto;
} cct_sched_slot;

typedef struct cct_sched_group {
    cct_sched_slot *slots;
    size_t n;
    double *sample_pool;
    size_t per_slot_cap;
    double *scratch; /* reduction buffer, n * per_slot_cap doubles */
    uint64_t *uscratch;
} cct_sched_group;

#endif
