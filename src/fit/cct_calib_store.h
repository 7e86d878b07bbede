/*
 * cct_calib_store.h - the calibrator's topologies from measurement stores: NCCL's init-time
 * model printout that `ccltune search` stores with each run (cct_store_get_nccl_log), read
 * with cct_nccl_log_parse, one topology per (rank count, node count).  `ccltune calibrate`
 * uses it when no --nccl-log is given; `ccltune tune` to fit the constants of its table.
 */
#ifndef CCT_CALIB_STORE_H
#define CCT_CALIB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cct_calibrate.h"
#include "cct_error.h"
#include "cct_nccl_model.h"
#include "cct_store.h"

/* Append to topos (*n_topos entries so far, CCT_CALIB_MAX_TOPOS at most) the topology of
 * every stored log of the runs (n_runs 0: every run of the store) whose (ranks, nodes) is
 * not there yet; *n_logs counts the runs that had a log.  cc is written into each topology
 * (the log does not say).  A stored log that does not parse is CCT_EPARSE, its message
 * naming "STORE_NAME run N"; more distinct topologies than fit is CCT_EINVAL. */
cct_status cct_calib_topos_from_store(cct_store *store, const char *store_name, const int64_t *runs,
                                      size_t n_runs, int cc, cct_nccl_topo *topos, size_t *n_topos,
                                      size_t *n_logs, cct_error *err);

/* Calibrate on the points of the runs (n_runs 0: every run) with the topologies of their
 * stored logs (cct_calibrate with opt).  *n_logs 0: no run has a log, nothing is fitted and
 * CCT_OK is returned with res untouched; otherwise cct_calibrate's status. */
cct_status cct_calib_from_store(cct_store *store, const char *store_name, const int64_t *runs,
                                size_t n_runs, int cc, const cct_calib_options *opt,
                                cct_calib_result *res, size_t *n_logs, cct_error *err);

/* Whether fitted constants make NCCL's model agree with the measurements at least as often
 * as its defaults, summed over the fitted (not held-out) rank counts of res. */
bool cct_calib_improves(const cct_calib_result *res);

#endif
