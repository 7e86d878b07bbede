/*
 * cct_nccl_model.h - our own re-implementation of NCCL's cost model (what NCCL 2.28.9's
 * src/graph/tuning.cc computes at init and src/enqueue.cc uses per call), so that the
 * calibrator can ask "which algorithm/protocol would NCCL pick at this size, given these
 * constants?" without a GPU.
 *
 * Inputs: the constants (cct_constants, fully populated: cct_nccl_constants_default() holds
 * NCCL 2.28.9's values) and the topology NCCL derived at init (ranks, nodes, compute
 * capability, and per algorithm the graph: channels, intra/inter bandwidth, link types).
 * Outputs: per (collective, algorithm, protocol) a latency in microseconds and a bandwidth
 * in GB/s -- the numbers NCCL prints with NCCL_DEBUG_SUBSYS=TUNING -- and the time of one
 * call of n bytes.  Modelled: Tree, Ring and PAT.  CollNet and NVLS are reported
 * unsupported (bandwidth 0): the machines we calibrate on have neither.
 */
#ifndef CCT_NCCL_MODEL_H
#define CCT_NCCL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cct_names.h"
#include "cct_table.h"

/* Link kinds of the constants' hw_latency_us[link] (NCCL_HW_*). */
enum { CCT_NCCL_HW_NVLINK = 0, CCT_NCCL_HW_PCI = 1, CCT_NCCL_HW_NET = 2 };

/* NCCL's path types (topoPathTypeStr order): LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS NET DIS. */
enum {
    CCT_NCCL_PATH_LOC = 0,
    CCT_NCCL_PATH_NVL = 1,
    CCT_NCCL_PATH_NVB = 2,
    CCT_NCCL_PATH_PXB = 5,
    CCT_NCCL_PATH_PXN = 7,
    CCT_NCCL_PATH_NET = 10,
    CCT_NCCL_PATH_DIS = 11
};
/* NCCL_TOPO_PATTERN_TREE: a tree graph with this pattern costs 15 % of its bandwidth. */
#define CCT_NCCL_PATTERN_TREE 3

/* One of NCCL's topology graphs as ncclTopoTuneModel sees it (after the min over ranks). */
typedef struct cct_nccl_graph {
    bool present;
    int pattern;
    int n_channels;
    double bw_intra, bw_inter;  /* GB/s per channel */
    double latency_inter;       /* us; 0 unless the network plugin reports one */
    int type_intra, type_inter; /* CCT_NCCL_PATH_* */
    bool same_channels;
} cct_nccl_graph;

typedef struct cct_nccl_topo {
    int n_ranks, n_nodes;
    int cc;            /* compute capability * 10 (min over ranks; max assumed equal) */
    int comm_channels; /* comm->nChannels (ring plateau test); 0: use the ring graph's */
    bool cpu_amd;      /* CPU vendor AMD (llMaxBw row and net overhead when nodes > 1) */
    int max_tree_pattern;
    /* graphs indexed by cct_algo as NCCL's graphs[]: Tree, Ring, CollNetDirect,
     * CollNetChain, NVLS, NVLSTree, PAT (PAT uses the tree graph) */
    cct_nccl_graph graphs[CCT_NUM_ALGOS];
} cct_nccl_topo;

/* The model's output: NCCL's comm->latencies / comm->bandwidths. */
typedef struct cct_nccl_costs {
    double latency_us[CCT_NUM_COLLS][CCT_NUM_ALGOS][CCT_NUM_PROTOS];
    double bandwidth_gbps[CCT_NUM_COLLS][CCT_NUM_ALGOS][CCT_NUM_PROTOS]; /* 0: unusable */
    int n_ranks, n_nodes, comm_channels, cc;
} cct_nccl_costs;

/* NCCL 2.28.9's default constants (src/graph/tuning.cc, ncclTunerConstantsDefaults),
 * every entry set, present true. */
void cct_nccl_constants_default(cct_constants *out);

/* out = base with every non-NAN entry of overrides written over it (what the plugin does to
 * NCCL's constants at init). */
void cct_nccl_constants_overlay(const cct_constants *base, const cct_constants *overrides,
                                cct_constants *out);

/* The compute-capability row and the scale column NCCL indexes the bandwidth ceilings with. */
int cct_nccl_compcap_index(int cc);
int cct_nccl_scale_index(int n_nodes);
/* The llMaxBws row: the GPU generation on one node, the CPU vendor across nodes. */
int cct_nccl_ll_row(const cct_nccl_topo *topo);

/* Whether NCCL enables LL128 by default for this algorithm on this topology. */
bool cct_nccl_ll128_enabled(const cct_nccl_topo *topo, int algo);

/* Latency and bandwidth of every (collective, algorithm, protocol), as ncclTopoTuneModel. */
void cct_nccl_model_compute(const cct_nccl_topo *topo, const cct_constants *constants,
                            cct_nccl_costs *out);

/* Time in us of one call of n_bytes (NCCL's nBytes: the whole buffer for allgather and
 * reducescatter), as ncclTopoGetAlgoTime; negative when the entry is unusable. */
double cct_nccl_model_time(const cct_nccl_costs *costs, int coll, int algo, int proto,
                           uint64_t n_bytes, int pipe_ops);

/* NCCL's pick: the fastest usable entry, first in (algorithm, protocol) order on ties.
 * Returns false when none is usable. */
bool cct_nccl_model_choose(const cct_nccl_costs *costs, int coll, uint64_t n_bytes, int pipe_ops,
                           int *algo, int *proto);

#endif
