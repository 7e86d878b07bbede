/*
 * cct_recording_set.h - several recordings at once, as the commands take them: each path a
 * recording file or a folder standing for every *.rec file in it (sorted by name), and
 * the job's size profile drawn from them.
 *
 * The size profile is what tuning needs from a recorded job: for each collective a tuner
 * is asked about, communicator shape (ranks, nodes) and exact message size, the calls and
 * GPU time over every configuration NCCL ran, every communicator and every recording.
 * `search --sizes-from` measures at those sizes; job weighting multiplies its calls and
 * times by measured gains.
 *
 * Ownership: cct_recording_set_load fills *out, cct_recording_set_destroy frees it;
 * cct_recording_sizes returns a malloc'ed array the caller frees.
 */
#ifndef CCT_RECORDING_SET_H
#define CCT_RECORDING_SET_H

#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_recording.h"

typedef struct cct_recording_set {
    cct_recording *recs;
    size_t n;
} cct_recording_set;

/* Load every recording the paths name.  Errors: the reader's "FILE:OFFSET: message" for
 * a damaged file (CCT_EPARSE), "PATH: ..." for a file or folder that cannot be read or a
 * folder without *.rec files (CCT_EIO), CCT_ENOMEM. */
cct_status cct_recording_set_load(const char *const *paths, size_t n, cct_recording_set *out,
                                  cct_error *err);
void cct_recording_set_destroy(cct_recording_set *set);

typedef struct cct_rec_size {
    int coll, ranks, nodes;
    uint64_t bytes;
    uint64_t calls, timed, total_ns; /* calls per rank, summed over the recordings */
} cct_rec_size;

/* The size profile, sorted by (coll, ranks, nodes, bytes); rows of collectives a tuner is
 * never asked about (CCT_RECORDING_OTHER) and of 0 bytes are left out.  *out is NULL when
 * nothing is left.  CCT_ENOMEM is the only failure. */
cct_status cct_recording_sizes(const cct_recording *recs, size_t n, cct_rec_size **out,
                               size_t *n_out, cct_error *err);

#endif
