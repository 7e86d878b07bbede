/*
 * cct_schedule_adaptive.h - the adaptive schedule's decisions (see cct_schedule_opts): the
 * order sizes are measured in, which configurations a group skips at a size (struck after
 * losing at coarse sizes, resting where the slopes say they still lose, not refined between
 * coarse sizes where nothing crosses), and what each measured coarse size teaches.  With
 * adaptive off it orders the sizes small to large and skips nothing.
 *
 * Every decision rests on numbers every rank holds alike (reduced or broadcast), so ranks
 * decide alike; stored points of a resumed run count like measured ones, so a resumed
 * search decides as one that ran through.  The handle is owned by its creator:
 * cct_adaptive_create allocates it, cct_adaptive_destroy frees it.
 */
#ifndef CCT_SCHEDULE_ADAPTIVE_H
#define CCT_SCHEDULE_ADAPTIVE_H

#include "cct_schedule_group.h"

typedef struct cct_adaptive cct_adaptive;

/* Allocates the state for groups of at most max_group slots of session s->session and orders
 * the sizes; reads nothing (see cct_adaptive_read_links).  *out is NULL on failure
 * (CCT_ENOMEM); s must outlive the handle. */
cct_status cct_adaptive_create(const cct_schedule *s, size_t max_group, cct_adaptive **out,
                               cct_error *err);
void cct_adaptive_destroy(cct_adaptive *a);

/* Adaptive: learns whether the run's links give quiet timings (rank 0 reads the run's
 * fingerprint from the store and broadcasts it); a collective operation of every rank. */
cct_status cct_adaptive_read_links(cct_adaptive *a, cct_schedule *s, cct_error *err);

/* The index of the oi-th size to measure. */
size_t cct_adaptive_size_at(const cct_adaptive *a, size_t oi);

/* A new collective starts with nothing struck and nothing learnt at any size. */
void cct_adaptive_reset(cct_adaptive *a);

/* Marks skipped the slots of g not measured at size zi; returns how many it marked. */
size_t cct_adaptive_prune(cct_adaptive *a, cct_sched_group *g, size_t zi);

/* After size zi was measured (or found stored): what a coarse size teaches. */
void cct_adaptive_learn(cct_adaptive *a, const cct_sched_group *g, size_t zi);

#endif
