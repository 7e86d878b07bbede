/*
 * cct_measure.h - one measured point: a configuration of NCCL, a message size, and the
 * statistics of its timings.  This is the unit that flows from the search runner and the
 * importers into the measurement store, and from the store into the fitter.
 *
 * A configuration fixes every dimension of the search space.  algo/proto = CCT_DEFAULT
 * means "NCCL's own choice" (the baseline); the point then records, in nccl_algo and
 * nccl_proto, what NCCL actually chose when the tuner could see it.  Sizes are the bytes
 * NCCL passes its tuner (nccl-tests' "size" column): for allgather and reducescatter the
 * whole gathered/scattered buffer, not one rank's share.  A grouped configuration
 * (pipe_ops k > 1) runs k such collectives in one group and records the time per
 * collective (the group's time / k).
 *
 * Plain values: no pointers, no ownership.
 */
#ifndef CCT_MEASURE_H
#define CCT_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "cct_names.h"

#define CCT_DEFAULT (-1) /* algo/proto left to NCCL */
#define CCT_TUNED (-3)   /* algo/proto chosen by the plugin from a table (ccltune bench) */

typedef struct cct_config {
    int coll;                /* cct_coll */
    int algo;                /* cct_algo or CCT_DEFAULT */
    int proto;               /* cct_proto or CCT_DEFAULT */
    int channels;            /* 0: NCCL's count; 64: all the communicator has */
    uint64_t buffsize;       /* NCCL_BUFFSIZE (Simple); 0: NCCL's default */
    uint64_t ll_buffsize;    /* NCCL_LL_BUFFSIZE; 0: default */
    uint64_t ll128_buffsize; /* NCCL_LL128_BUFFSIZE; 0: default */
    unsigned align;          /* byte offset of send and receive buffers from 4 KiB alignment */
    int ranks, nodes;
    int dtype;      /* cct_dtype */
    int pipe_ops;   /* collectives of this kind and size in one ncclGroupStart/End; 0 reads as 1 */
    bool reg_buff;  /* send/receive buffers registered with ncclCommRegister */
    uint64_t chunk; /* chunk size the tuner answers NCCL (v6, NCCL >= 2.30); 0: NCCL's own */
} cct_config;

/* The group size of a configuration (zero-initialised configurations are plain calls). */
/* The field holding protocol proto's buffer size (its *BUFFSIZE variable, cct_facts.h);
 * NULL for an unknown protocol. */
static inline uint64_t *cct_config_buffsize(cct_config *cfg, int proto)
{
    return proto == CCT_PROTO_SIMPLE  ? &cfg->buffsize
           : proto == CCT_PROTO_LL    ? &cfg->ll_buffsize
           : proto == CCT_PROTO_LL128 ? &cfg->ll128_buffsize
                                      : NULL;
}

static inline int cct_config_pipe_ops(const cct_config *cfg)
{
    return cfg->pipe_ops > 1 ? cfg->pipe_ops : 1;
}

/* True when cfg and other measure the same call mode (group size and registration). */
static inline bool cct_config_same_mode(const cct_config *a, const cct_config *b)
{
    return cct_config_pipe_ops(a) == cct_config_pipe_ops(b) && a->reg_buff == b->reg_buff;
}

typedef enum cct_dtype { CCT_DTYPE_FLOAT = 0, CCT_DTYPE_BF16 = 1, CCT_NUM_DTYPES = 2 } cct_dtype;

typedef enum cct_point_status {
    CCT_POINT_OK = 0,
    CCT_POINT_CORRUPT = 1,     /* a wrong element was seen: never usable by a table */
    CCT_POINT_HANG = 2,        /* the watchdog aborted the collective */
    CCT_POINT_UNSUPPORTED = 3, /* NCCL marked the configuration ignored: nothing was timed */
    CCT_POINT_ERROR = 4        /* NCCL or CUDA returned an error */
} cct_point_status;

typedef struct cct_stats {
    int n;            /* samples (each the mean of one cycle of iterations) */
    double median_us; /* time of one collective: the slowest rank's, per iteration */
    double p95_us;
    double min_us;
    double max_us;
    double mean_us;
    double cv; /* coefficient of variation of the samples: stddev / mean */
} cct_stats;

typedef struct cct_point {
    cct_config cfg;
    uint64_t bytes;
    bool in_place;
    cct_stats stats;
    uint64_t wrong; /* wrong elements found by verification, summed over ranks */
    int status;     /* cct_point_status */
    bool noisy;     /* CV stayed above the threshold after re-measuring */
    int nccl_algo;  /* what NCCL ran (known for forced points; for the baseline when the */
    int nccl_proto; /* tuner saw it); -1 when unknown (imported logs) */
    /* What NCCL passed its tuner for this call mode (numPipeOps, regBuff, nBytes): the keys
     * the plugin matches at run time.  -1 / 0 when unknown (imported logs, old stores).
     * NCCL aggregates a group's same-kind collectives into one tuner call, so for pipe_ops
     * > 1 tuner_bytes is the group's total and tuner_pipe_ops its tasks per channel. */
    int tuner_pipe_ops;
    int tuner_reg_buff;
    uint64_t tuner_bytes;
    /* The chunk NCCL ran (cfg.chunk is the one asked for): 0 when unknown (NCCL's own chunk,
     * old stores); chunk_observed says NCCL's output named it, else it was computed by NCCL's
     * cap-and-round rule (cct_chunk.h). */
    uint64_t chunk_used;
    bool chunk_observed;
} cct_point;

/* A plain call mode: one collective per call, unregistered buffers, any chunk size. */
static inline bool cct_point_is_plain_call(const cct_point *p)
{
    return cct_config_pipe_ops(&p->cfg) == 1 && !p->cfg.reg_buff;
}

/* A plain call at NCCL's own chunk size (every point before call modes and chunk sizes
 * existed).  Plots, accuracy, the oracle and the models use only these; the plain sections
 * also read the chunk sizes measured beside them (cct_point_is_plain_call). */
static inline bool cct_point_is_plain(const cct_point *p)
{
    return cct_point_is_plain_call(p) && p->cfg.chunk == 0;
}

/* Bus bandwidth factor as nccl-tests defines it (algbw * factor = busbw). */
double cct_busbw_factor(int coll, int ranks);

/* Size of one element. */
unsigned cct_dtype_size(int dtype);
const char *cct_dtype_name(int dtype);
int cct_dtype_from_name(const char *name);

#endif
