/*
 * cct_backend.h - what the measurement schedule needs from "a communicator": select a
 * configuration, run-and-verify one collective, time a cycle of collectives, and agree
 * with the other ranks on control values.
 *
 * The real backend (cct_backend_nccl.c) drives CUDA and NCCL with the tuner plugin as the
 * switch for algorithm/protocol/channels.  The replay backend (cct_backend_replay.c)
 * answers from recorded real measurements, so the schedule, the store and resume are
 * tested on machines without a GPU, and killed at random moments in fault tests.
 *
 * Control reductions run with forcing switched off, so a corrupting configuration under
 * test cannot corrupt the numbers the ranks agree on.  Every call that waits on the GPU is
 * bounded by the backend's watchdog and returns CCT_ETIMEOUT when it fires.
 */
#ifndef CCT_BACKEND_H
#define CCT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_measure.h"

/* What the backend learned from one verified collective. */
typedef struct cct_observed {
    bool applied;   /* the forced configuration ran (false: NCCL marked it ignored) */
    int nccl_algo;  /* what ran: the forced one, or NCCL's own choice for the baseline */
    int nccl_proto; /* -1 when unknown */
    /* What NCCL passed its tuner for the call (numPipeOps, regBuff, nBytes); tuner_pipe_ops
     * 0 when the tuner did not see it.  A group of k same-kind collectives reaches the tuner
     * as one aggregated call. */
    int tuner_pipe_ops;
    int tuner_reg_buff;
    uint64_t tuner_bytes;
    /* A forced chunk (cfg->chunk > 0): what NCCL ran, and whether NCCL said it (observed) or
     * it was computed from NCCL's cap-and-round rule; 0 when no chunk was forced. */
    uint64_t chunk_used;
    bool chunk_observed;
} cct_observed;

typedef struct cct_backend_ops {
    /* Make cfg's algorithm/protocol/channels apply to the following collectives. */
    cct_status (*select)(void *ctx, const cct_config *cfg, cct_error *err);
    /* Fill inputs, run one collective of `bytes` (k of them in one group when cfg->pipe_ops
     * is k > 1, each on its own buffers), verify; *wrong counts this rank's wrong elements
     * over all of them. */
    cct_status (*verify)(void *ctx, const cct_config *cfg, uint64_t bytes, bool in_place,
                         uint64_t *wrong, cct_observed *obs, cct_error *err);
    /* Run `iters` collectives back to back (after an L2 flush); elapsed time of the whole
     * cycle on this rank, in microseconds.  A grouped configuration runs `iters` groups and
     * reports the cycle's time / k, so every backend's answer is per collective. */
    cct_status (*time)(void *ctx, const cct_config *cfg, uint64_t bytes, bool in_place, int iters,
                       double *elapsed_us, cct_error *err);
    /* Element-wise maximum / sum across ranks, in place. */
    cct_status (*reduce_max)(void *ctx, double *values, size_t n, cct_error *err);
    cct_status (*reduce_sum)(void *ctx, uint64_t *values, size_t n, cct_error *err);
    /* Copy rank 0's bytes to every rank. */
    cct_status (*broadcast)(void *ctx, void *data, size_t bytes, cct_error *err);
} cct_backend_ops;

typedef struct cct_backend {
    const cct_backend_ops *ops;
    void *ctx;
    int rank, nranks;
} cct_backend;

#endif
