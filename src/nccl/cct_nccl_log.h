/*
 * cct_nccl_log.h - read what NCCL prints about its own cost model: the latency/bandwidth
 * table of ncclTopoTuneModel (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING), the topology graphs
 * (GRAPH: "Pattern 4, crossNic 0, nChannels 2, bw 0.6/0.6, type NVL/PIX, sameChannels 1")
 * and the communicator's size (INIT: "comm 0x... rank 0 nRanks 4 nNodes 4 ...").
 *
 * From them the calibrator gets the topology (cct_nccl_topo) its model needs, and the replay
 * test gets NCCL's own numbers to compare the model with.  Only the first communicator's
 * table in a log is read; the graphs are combined over every rank the way NCCL does (minimum
 * of channels and bandwidths, maximum of link types).
 */
#ifndef CCT_NCCL_LOG_H
#define CCT_NCCL_LOG_H

#include <stdbool.h>

#include "cct_error.h"
#include "cct_nccl_model.h"

typedef struct cct_nccl_log {
    cct_nccl_topo topo; /* cc is 0: the log does not say; the caller sets it */
    bool printed[CCT_NUM_COLLS][CCT_NUM_ALGOS][CCT_NUM_PROTOS];
    double latency_us[CCT_NUM_COLLS][CCT_NUM_ALGOS][CCT_NUM_PROTOS];
    double bandwidth_gbps[CCT_NUM_COLLS][CCT_NUM_ALGOS][CCT_NUM_PROTOS];
    char nccl_version[32]; /* "2.28.9"; "" when the log does not say */
} cct_nccl_log;

/* Parse a log held in memory; `name` is used in messages ("name:line:column: ...").
 * CCT_EPARSE when a table row is malformed, when there is no TUNING table, no graph lines
 * or no communicator line (each message says which NCCL_DEBUG_SUBSYS is missing). */
cct_status cct_nccl_log_parse(const char *text, const char *name, cct_nccl_log *out,
                              cct_error *err);

/* Read and parse a file (CCT_EIO when it cannot be read). */
cct_status cct_nccl_log_load(const char *path, cct_nccl_log *out, cct_error *err);

#endif
