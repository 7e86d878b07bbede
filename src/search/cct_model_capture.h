/*
 * cct_model_capture.h - capturing NCCL's init-time model printout during a search, so that
 * `ccltune tune` and `ccltune calibrate` can fit NCCL's cost-model constants from the same
 * run (docs/calibration.md, "Where the log comes from").
 *
 * NCCL prints its model (communicator line, topology graphs, the TUNING latency/bandwidth
 * table) at communicator init when NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS has INIT, GRAPH and
 * TUNING.  It reads those variables once per process, and at INFO the TUNING subsystem also
 * prints a line for every collective rank 0 enqueues (NCCL 2.28.9, enqueue.cc), so logging
 * cannot be on in the measuring processes.  The launcher therefore starts one extra set of
 * worker processes before the first session -- the probe: each joins a communicator of the
 * run's shape (same ranks, GPUs, host ids, plugin in measurement mode with no table, NCCL's
 * default protocols and buffers), writes NCCL's printout to dir/rank-R.log and exits.  The
 * measuring processes are started afterwards with the user's own NCCL_DEBUG untouched.
 */
#ifndef CCT_MODEL_CAPTURE_H
#define CCT_MODEL_CAPTURE_H

#include <stddef.h>

#include "cct_error.h"

/* A fresh private folder for one probe's files under $TMPDIR (or /tmp). */
cct_status cct_model_capture_mkdir(char *dir, size_t len, cct_error *err);

/* In a probe worker between fork and exec: NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING, NCCL_DEBUG_FILE=dir/rank-R.log ('%' escaped for
 * NCCL), and NCCL's timestamp settings cleared so every line reads as NCCL's default. */
void cct_model_capture_setenv(const char *dir, int rank);

/* The probe's printout: every other rank's file present in dir, then rank 0's (which holds
 * the TUNING table; the reader combines the graphs of all ranks before it), concatenated
 * into *text (malloc'ed) and checked with cct_nccl_log_parse, so only a usable printout is
 * returned.  CCT_ENOTFOUND without rank 0's file, CCT_EPARSE when it is not usable.  The
 * files and dir are removed in every case. */
cct_status cct_model_capture_collect(const char *dir, int ranks, char **text, cct_error *err);

/* Remove dir and every probe file (rank-R.log) in it (after a failed probe). */
void cct_model_capture_remove(const char *dir);

#endif
