/*
 * cct_facts.h - what ccltune knows of each collective, algorithm and protocol, one row per
 * item in one table each (cct_facts.c), so adding a collective or a protocol is one row here
 * and not a switch statement in every stage.
 *
 * A collective's row holds its spellings (ours, NCCL's, the nccl-tests program's stem), its
 * ring step count (which gives the bus-bandwidth factor and NCCL's ring model), how its send
 * and receive buffers are laid out per rank (sizes, in-place offsets, what a fill must
 * poison), what its result is (the verification kernel's operation code) and which NCCL
 * algorithms implement it.  A protocol's row holds its spellings and the environment
 * variable that sets its buffer size, with NCCL's default; an algorithm's row its spellings.
 * Row i describes the item whose NCCL index (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*) is i.
 */
#ifndef CCT_FACTS_H
#define CCT_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cct_names.h"

/* How many elements a buffer holds, in units of the NCCL count: one block, or one per rank. */
typedef enum cct_span { CCT_SPAN_ONE = 0, CCT_SPAN_PER_RANK = 1 } cct_span;

/* What a rank's receive buffer holds afterwards; the values are the verification kernel's
 * operation codes (CCT_KOP_* in kernels/cct_kernels.h, which includes nothing of ours). */
typedef enum cct_result {
    CCT_RESULT_ROOT_COPY = 0, /* the root's send buffer */
    CCT_RESULT_SUM = 1,       /* the element-wise sum over ranks */
    CCT_RESULT_GATHER = 2,    /* block b from rank b */
    CCT_RESULT_SUM_SLICE = 3  /* this rank's block of the sum */
} cct_result;

typedef struct cct_coll_facts {
    const char *name;         /* ours: "allreduce" */
    const char *nccl_name;    /* NCCL's: "AllReduce" */
    const char *tests_stem;   /* nccl-tests program without "_perf": "all_reduce" */
    int ring_a, ring_b;       /* ring steps = ring_a * ranks + ring_b (NCCL's nsteps) */
    cct_span send_span;       /* send buffer size in NCCL counts */
    cct_span recv_span;       /* receive buffer size in NCCL counts */
    bool root_source;         /* only the root's send buffer is input (broadcast) */
    bool root_result;         /* only the root's receive buffer is defined (reduce) */
    cct_result result;        /* what the receive buffer holds */
    unsigned algos;           /* bit a: some NCCL release implements algorithm a for it */
    int collnet_direct_since; /* NCCL version from which CollNetDirect implements it */
} cct_coll_facts;

typedef struct cct_algo_facts {
    const char *name;      /* "collnet_direct" */
    const char *nccl_name; /* "CollnetDirect" (NCCL_ALGO, NCCL's logs) */
} cct_algo_facts;

typedef struct cct_proto_facts {
    const char *name;          /* "ll128" */
    const char *nccl_name;     /* "LL128" (NCCL_PROTO, NCCL's logs) */
    const char *buffsize_env;  /* "NCCL_LL128_BUFFSIZE" */
    uint64_t buffsize_default; /* NCCL's default for it, bytes */
} cct_proto_facts;

/* The protocols in the order ccltune lists their buffer sizes (NCCL_BUFFSIZE first, as NCCL's
 * documentation does): Simple, LL, LL128. */
extern const int cct_buffsize_protos[CCT_NUM_PROTOS];

/* The row of an item by NCCL index; NULL when out of range. */
const cct_coll_facts *cct_coll_facts_of(int coll);
const cct_algo_facts *cct_algo_facts_of(int algo);
const cct_proto_facts *cct_proto_facts_of(int proto);

/* NCCL's ring step count for a collective over `ranks` ranks; 0 for an unknown one. */
int cct_coll_ring_steps(int coll, int ranks);
/* True when one of the collective's buffers holds a block per rank (allgather, reducescatter):
 * its size in bytes is the NCCL count's bytes times the ranks. */
bool cct_coll_per_rank(int coll);
/* Blocks of NCCL count in the larger buffer: `ranks` for allgather and reducescatter (a size
 * is the per-rank count times the ranks), 1 otherwise. */
int cct_coll_size_blocks(int coll, int ranks);
/* True when some NCCL release implements `algo` for `coll`. */
bool cct_coll_has_algo(int coll, int algo);
/* The protocol whose buffer size environment variable is `env` ("NCCL_LL_BUFFSIZE"); -1. */
int cct_proto_from_buffsize_env(const char *env);

#endif
