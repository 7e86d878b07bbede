/*
 * cct_import_recording.h - recorded jobs (the profiler's recordings, cct_recording.h) as
 * production observations: points for the store, kept apart from controlled measurements
 * (their run's source is "production"; the fit leaves such runs out unless asked).
 *
 * Which configuration a recorded call observed: with a table (the one the job ran with),
 * a call that ran the rule's choice is a point of that rule's configuration (algorithm,
 * protocol, the rule's channel cap); a call with no rule, or without a table, is a point
 * of NCCL's own choice (algo/proto CCT_DEFAULT, NCCL's channel count), with what NCCL ran
 * in nccl_algo/nccl_proto; a call that ran something else than its rule asked (an
 * environment variable or NCCL's fallback overrode it) is a point of what ran, with its
 * channel count.  Every timed row of every communicator is merged by configuration,
 * shape and size over all recordings (each rank records its own calls): the point's
 * median_us and mean_us are the mean GPU time per call (total / timed; the log2
 * histogram is too coarse for a median), stats.n the timed calls, the other statistics
 * NaN, no raw samples.  The recording does not say the data type: float is stored.
 * Untimed rows and collectives a tuner is never asked about are counted, not stored.
 */
#ifndef CCT_IMPORT_RECORDING_H
#define CCT_IMPORT_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_import.h"
#include "cct_recording.h"
#include "cct_table.h"

typedef struct cct_recording_import_summary {
    size_t default_points, tabled_points, other_points; /* by the configuration observed */
    uint64_t calls, untimed_calls, skipped_calls;       /* skipped: collectives never tuned, 0 B */
} cct_recording_import_summary;

/* Whether data starts like a recording ("ccltune-recording "), for format detection. */
bool cct_import_is_recording(const char *data, size_t len);

/* Append the production observations of recs to out (an initialised result; its name and
 * host are set, nccl_version from the first recording that knows it).  table may be NULL.
 * CCT_ENOMEM is the only failure. */
cct_status cct_import_recordings(const cct_recording *recs, size_t n, const cct_table *table,
                                 cct_import_result *out, cct_recording_import_summary *sum,
                                 cct_error *err);

#endif
