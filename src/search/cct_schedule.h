/*
 * cct_schedule.h - the measurement schedule: how one session of a plan is measured.
 *
 * For each collective and message size, the configurations of the session form a group
 * that is measured together: every configuration is first verified (out of place and in
 * place), then warmed up to choose its iterations per cycle, then timed over several
 * cycles whose order is mirrored (forward, reverse, forward, ...) so slow drift weighs on
 * every configuration alike.  Points whose coefficient of variation stays above the
 * threshold are measured again, and flagged noisy if they remain so.  Rank 0 commits each
 * group's points to the store as soon as the group is done; on resume, points already in
 * the store are skipped (all ranks agree through a broadcast of rank 0's skip mask).
 *
 * Ranks take identical decisions because every number a decision depends on has been
 * reduced across ranks first (maximum of times, sum of wrong elements).
 */
#ifndef CCT_SCHEDULE_H
#define CCT_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_backend.h"
#include "cct_space.h"
#include "cct_store.h"

typedef struct cct_schedule_opts {
    int warmup;          /* untimed warm-up calls per configuration and size */
    int cycles;          /* timed cycles (>= 2 so the order is mirrored at least once) */
    double cycle_us;     /* target duration of one cycle; sets iterations per cycle */
    int max_iters;       /* upper bound of iterations per cycle */
    double cv_threshold; /* re-measure points whose CV exceeds this */
    int max_remeasure;   /* extra rounds of cycles for noisy points */
    bool time_in_place;  /* also time the in-place variant (always verified) */
    /* Adaptive schedule (the default of `ccltune search`; --exhaustive turns it off):
     * sizes run small to large; a forced configuration slower than the fastest by more
     * than prune_margin at prune_after consecutive sizes, and not catching up (its
     * marginal bandwidth between those sizes no better than the fastest's), is not
     * measured at larger sizes; corrupt and unsupported configurations stop at once.  At
     * each size every configuration gets first_cycles cycles; only those whose spread
     * overlaps the fastest's get the remaining cycles.  Sizes run in two passes: first the
     * coarse grid (the smallest size, then each size at least coarse_factor times the last
     * coarse one, and the largest), where the rules above apply; then the sizes between,
     * measured only for NCCL's default, the twin of NCCL's choice at a neighbouring coarse
     * size, and configurations within fine_margin of the fastest at a neighbouring coarse
     * size (crossovers are refined where they happen). */
    bool adaptive;
    double prune_margin;
    int prune_after;
    int first_cycles;
    double coarse_factor;     /* <= 1: no coarse pass, every size is coarse */
    double fine_margin;       /* quiet links (NVLink): refine crossovers at this margin */
    double noisy_fine_margin; /* noisy links (sockets): refine all within this margin */
    double rest_margin;       /* quiet links: a forced configuration slower than the fastest by more
                               * than this at two coarse sizes, and by the slopes still at the next
                               * one or two, skips those (then measured again); <= 0: never */
    /* Adaptive: where the fastest forced configuration beats NCCL's default by more than
     * confirm_margin at a size, it, NCCL's default and its twin at NCCL's channel count get
     * confirm_cycles more cycles, timed together: the paired cycles the fit's significance
     * test needs before it leaves NCCL's choice (0: off). */
    int confirm_cycles;
    double confirm_margin;
} cct_schedule_opts;

void cct_schedule_defaults(cct_schedule_opts *opts);

typedef void (*cct_progress_fn)(void *arg, size_t done, size_t total, const char *what);

typedef struct cct_schedule {
    const cct_plan *plan;
    size_t session; /* index into plan->sessions */
    cct_backend *backend;
    cct_store *store; /* rank 0 only; NULL on other ranks */
    int64_t run_id;
    cct_schedule_opts opts;
    cct_progress_fn progress; /* rank 0; may be NULL */
    void *progress_arg;
    /* results, identical on every rank */
    size_t points_total, points_done, points_skipped;
    size_t n_corrupt, n_unsupported, n_noisy, n_remeasured, n_confirmed;
    size_t points_pruned; /* adaptive: planned points not measured (dominated) */
    size_t cycles_saved;  /* adaptive: cycles not run because the winner was clear */
    uint64_t rounds;      /* cycle rounds run: seeds each round's configuration order */
    /* set when the watchdog fired: the configuration and size being measured */
    bool hung;
    cct_config hang_config;
    uint64_t hang_bytes;
} cct_schedule;

/* Points the session will produce (configurations x sizes x timed variants). */
size_t cct_schedule_count_points(const cct_plan *plan, size_t session, bool time_in_place);

/* Measure every point of the session that is not yet stored.  CCT_ETIMEOUT when the
 * watchdog fired (rank 0 has then stored a `hang` point for hang_config at hang_bytes, so
 * a resumed session goes past it). */
cct_status cct_schedule_run(cct_schedule *sched, cct_error *err);

#endif
