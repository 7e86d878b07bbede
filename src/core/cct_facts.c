/*
 * cct_facts.c - the rows of cct_facts.h: one per collective (ncclFunc_t order), algorithm
 * (NCCL_ALGO_*) and protocol (NCCL_PROTO_*).
 *
 * Sources: NCCL's src/include/nccl_common.h (the indices), src/graph/tuning.cc (ring steps,
 * which algorithms each collective has), src/include/comm.h and device.h (default buffer
 * sizes: Simple 1 << 22; LL 8 lines x 512 threads x 8 steps x 16 bytes; LL128 120 elements x
 * 640 threads x 8 steps x 8 bytes), nccl-tests' program names.  The names are looked up by
 * cct_names.c; everything else through the accessors below.
 */
#include "cct_facts.h"

#include <stddef.h>
#include <string.h>

#define BIT(a) (1u << (a))

static const cct_coll_facts colls[CCT_NUM_COLLS] = {
    [CCT_COLL_BROADCAST] = {"broadcast", "Broadcast", "broadcast", 1, 0, CCT_SPAN_ONE, CCT_SPAN_ONE,
                            true, false, CCT_RESULT_ROOT_COPY, BIT(CCT_ALGO_RING), 0},
    [CCT_COLL_REDUCE] = {"reduce", "Reduce", "reduce", 1, 0, CCT_SPAN_ONE, CCT_SPAN_ONE, false,
                         true, CCT_RESULT_SUM, BIT(CCT_ALGO_RING), 0},
    [CCT_COLL_ALLGATHER] = {"allgather", "AllGather", "all_gather", 1, -1, CCT_SPAN_ONE,
                            CCT_SPAN_PER_RANK, false, false, CCT_RESULT_GATHER,
                            BIT(CCT_ALGO_RING) | BIT(CCT_ALGO_COLLNET_DIRECT) | BIT(CCT_ALGO_NVLS) |
                                BIT(CCT_ALGO_PAT),
                            22000},
    [CCT_COLL_REDUCESCATTER] = {"reducescatter", "ReduceScatter", "reduce_scatter", 1, -1,
                                CCT_SPAN_PER_RANK, CCT_SPAN_ONE, false, false, CCT_RESULT_SUM_SLICE,
                                BIT(CCT_ALGO_RING) | BIT(CCT_ALGO_COLLNET_DIRECT) |
                                    BIT(CCT_ALGO_NVLS) | BIT(CCT_ALGO_PAT),
                                22000},
    [CCT_COLL_ALLREDUCE] = {"allreduce", "AllReduce", "all_reduce", 2, -2, CCT_SPAN_ONE,
                            CCT_SPAN_ONE, false, false, CCT_RESULT_SUM,
                            BIT(CCT_ALGO_TREE) | BIT(CCT_ALGO_RING) | BIT(CCT_ALGO_COLLNET_DIRECT) |
                                BIT(CCT_ALGO_COLLNET_CHAIN) | BIT(CCT_ALGO_NVLS) |
                                BIT(CCT_ALGO_NVLS_TREE),
                            0},
};

static const cct_algo_facts algos[CCT_NUM_ALGOS] = {
    [CCT_ALGO_TREE] = {"tree", "Tree"},
    [CCT_ALGO_RING] = {"ring", "Ring"},
    [CCT_ALGO_COLLNET_DIRECT] = {"collnet_direct", "CollnetDirect"},
    [CCT_ALGO_COLLNET_CHAIN] = {"collnet_chain", "CollnetChain"},
    [CCT_ALGO_NVLS] = {"nvls", "NVLS"},
    [CCT_ALGO_NVLS_TREE] = {"nvls_tree", "NVLSTree"},
    [CCT_ALGO_PAT] = {"pat", "PAT"},
};

static const cct_proto_facts protos[CCT_NUM_PROTOS] = {
    [CCT_PROTO_LL] = {"ll", "LL", "NCCL_LL_BUFFSIZE", 8u * 512u * 8u * 16u},
    [CCT_PROTO_LL128] = {"ll128", "LL128", "NCCL_LL128_BUFFSIZE", 120u * 640u * 8u * 8u},
    [CCT_PROTO_SIMPLE] = {"simple", "Simple", "NCCL_BUFFSIZE", 1u << 22},
};

const int cct_buffsize_protos[CCT_NUM_PROTOS] = {CCT_PROTO_SIMPLE, CCT_PROTO_LL, CCT_PROTO_LL128};

const cct_coll_facts *cct_coll_facts_of(int coll)
{
    return coll >= 0 && coll < CCT_NUM_COLLS ? &colls[coll] : NULL;
}

const cct_algo_facts *cct_algo_facts_of(int algo)
{
    return algo >= 0 && algo < CCT_NUM_ALGOS ? &algos[algo] : NULL;
}

const cct_proto_facts *cct_proto_facts_of(int proto)
{
    return proto >= 0 && proto < CCT_NUM_PROTOS ? &protos[proto] : NULL;
}

int cct_coll_ring_steps(int coll, int ranks)
{
    const cct_coll_facts *f = cct_coll_facts_of(coll);
    return f ? f->ring_a * ranks + f->ring_b : 0;
}

bool cct_coll_per_rank(int coll)
{
    const cct_coll_facts *f = cct_coll_facts_of(coll);
    return f && (f->send_span == CCT_SPAN_PER_RANK || f->recv_span == CCT_SPAN_PER_RANK);
}

int cct_coll_size_blocks(int coll, int ranks)
{
    return cct_coll_per_rank(coll) ? ranks : 1;
}

bool cct_coll_has_algo(int coll, int algo)
{
    const cct_coll_facts *f = cct_coll_facts_of(coll);
    return f && algo >= 0 && algo < CCT_NUM_ALGOS && (f->algos & BIT(algo)) != 0;
}

int cct_proto_from_buffsize_env(const char *env)
{
    for (int p = 0; env && p < CCT_NUM_PROTOS; p++)
        if (strcmp(env, protos[p].buffsize_env) == 0)
            return p;
    return -1;
}
