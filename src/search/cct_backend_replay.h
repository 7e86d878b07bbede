/*
 * cct_backend_replay.h - a measurement backend that answers from recorded points (see
 * cct_backend_replay.c): the search pipeline without a GPU, for CI and fault tests.
 *
 * Ownership: cct_replay_backend_create() copies the points; destroy releases the copy.
 */
#ifndef CCT_BACKEND_REPLAY_H
#define CCT_BACKEND_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "cct_backend.h"
#include "cct_table.h"

cct_status cct_replay_backend_create(const cct_point *points, size_t n, uint64_t seed,
                                     cct_backend *backend, cct_error *err);
/* A bench's table under test (not copied: it must outlive the backend's use; NULL: none).
 * The bench's 'tuned' configuration then answers as the table's rule for the call would
 * run -- its recorded forced configuration -- or as NCCL's default where the table has no
 * rule for it. */
void cct_replay_backend_set_table(cct_backend *backend, const cct_table *table);
/* Simulated GPU time so far: the recorded time of every call answered (each verified call
 * once, each timed cycle as timed), in microseconds. */
double cct_replay_backend_busy_us(const cct_backend *backend);
void cct_replay_backend_destroy(cct_backend *backend);

#endif
