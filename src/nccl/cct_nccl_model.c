/*
 * cct_nccl_model.c - NCCL's cost model re-implemented (see cct_nccl_model.h).  Written from
 * a reading of NCCL 2.28.9's src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime)
 * and src/enqueue.cc (the argmin over the cost table); the formulas are restated here in our
 * own terms, and the replay test (tests/test_nccl_model.c) checks them against the tables
 * NCCL itself printed on the H200.
 */
#include "cct_nccl_model.h"
#include "cct_pat.h"

#include "cct_facts.h"

#include <math.h>
#include <string.h>

/* NCCL_MAX_DEV_WORK_BATCH_COLLS in 2.28.9: 1024 bytes / sizeof(struct ncclDevWorkColl) (96). */
#define NCCL_WORK_BATCH_COLLS 10

void cct_nccl_constants_default(cct_constants *c)
{
    /* NCCL 2.28.9, src/graph/tuning.cc, ncclTunerConstantsDefaults; rows as cct_algo
     * (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT), columns as cct_proto
     * (LL, LL128, Simple). */
    static const double base[CCT_NUM_ALGOS][CCT_NUM_PROTOS] = {
        {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
        {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
    static const double hw[CCT_CONST_HW_LINKS][CCT_NUM_ALGOS][CCT_NUM_PROTOS] = {/* NVLink */
                                                                                 {{.6, 1.25, 4.0},
                                                                                  {.6, 1.9, 3.4},
                                                                                  {0, 0, 3.7},
                                                                                  {0, 0, 2.8},
                                                                                  {0, 0, 25},
                                                                                  {0, 0, 25},
                                                                                  {0, 0, 4.0}},
                                                                                 /* PCI */
                                                                                 {{1.0, 1.9, 4.0},
                                                                                  {1.0, 2.5, 5.7},
                                                                                  {0, 0, 3.7},
                                                                                  {0, 0, 2.8},
                                                                                  {0, 0, 0},
                                                                                  {0, 0, 0},
                                                                                  {0, 0, 4.0}},
                                                                                 /* NET */
                                                                                 {{5.0, 8.5, 14},
                                                                                  {2.7, 4.0, 14.0},
                                                                                  {0, 0, 31},
                                                                                  {0, 0, 30},
                                                                                  {0, 0, 18},
                                                                                  {0, 0, 20.9},
                                                                                  {0, 0, 14}}};
    /* [compute-capability generation: Volta, Ampere, Hopper, Blackwell][scale: 1, 2, >2 nodes];
     * llMaxBws' rows 0 and 1 double as the Intel / AMD CPU rows across nodes. */
    static const double ll[CCT_CONST_COMPCAPS][CCT_CONST_SCALES] = {
        {39.0, 39.0, 20.4},
        {87.7, 22.5, 19.0},
        {141.0, 45.0, 35.0},
        {2 * 141.0, 2 * 45.0, 2 * 35.0}};
    static const double ring_ll128[CCT_CONST_COMPCAPS][CCT_CONST_SCALES] = {
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 34.6, 2 * 36.7}};
    static const double tree_ll128[CCT_CONST_COMPCAPS][CCT_CONST_SCALES] = {
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
    static const double tree[CCT_CONST_COMPCAPS][CCT_CONST_SCALES] = {
        {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
    static const double nvls_tree[CCT_CONST_COMPCAPS][CCT_CONST_SCALES] = {
        {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}};
    c->present = true;
    memcpy(c->base_latency_us, base, sizeof base);
    memcpy(c->hw_latency_us, hw, sizeof hw);
    memcpy(c->ll_max_bw, ll, sizeof ll);
    memcpy(c->per_ch_max_ring_ll128_bw, ring_ll128, sizeof ring_ll128);
    memcpy(c->per_ch_max_tree_ll128_bw, tree_ll128, sizeof tree_ll128);
    memcpy(c->per_ch_max_tree_bw, tree, sizeof tree);
    memcpy(c->per_ch_max_nvls_tree_bw, nvls_tree, sizeof nvls_tree);
}

void cct_nccl_constants_overlay(const cct_constants *base, const cct_constants *overrides,
                                cct_constants *out)
{
    *out = *base;
    if (!overrides || !overrides->present)
        return;
    const double *src = overrides->base_latency_us[0];
    double *dst = out->base_latency_us[0];
    size_t n = (sizeof *out - offsetof(cct_constants, base_latency_us)) / sizeof(double);
    for (size_t i = 0; i < n; i++)
        if (!isnan(src[i]))
            dst[i] = src[i];
}

int cct_nccl_compcap_index(int cc)
{
    return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

int cct_nccl_scale_index(int n_nodes)
{
    return n_nodes <= 2 ? (n_nodes < 1 ? 0 : n_nodes - 1) : 2;
}

int cct_nccl_ll_row(const cct_nccl_topo *topo)
{
    return topo->n_nodes == 1 ? cct_nccl_compcap_index(topo->cc) : (topo->cpu_amd ? 1 : 0);
}

bool cct_nccl_ll128_enabled(const cct_nccl_topo *topo, int algo)
{
    const cct_nccl_graph *g = &topo->graphs[algo];
    if (topo->cc < 70)
        return false;
    /* Hopper and later (NCCL_LL128_C2C=1): up to PXN between nodes; before, up to PXB. */
    int max_inter = topo->cc >= 90 ? CCT_NCCL_PATH_PXN : CCT_NCCL_PATH_PXB;
    return g->type_inter <= max_inter && g->type_intra <= CCT_NCCL_PATH_NVB;
}

static int log2_floor(uint64_t n)
{
    int l = -1;
    while (n) {
        n >>= 1;
        l++;
    }
    return l;
}

static bool modelled(int coll, int algo, int proto, const cct_nccl_topo *topo)
{
    if (algo == CCT_ALGO_RING)
        return true;
    if (algo == CCT_ALGO_TREE)
        return cct_coll_has_algo(coll, algo);
    if (algo == CCT_ALGO_PAT)
        return cct_pat_has_kernel(coll, proto) && topo->cc >= 60 &&
               topo->n_nodes == topo->n_ranks; /* NCCL's tuning model, 1 rank included */
    return false;                              /* CollNet, NVLS: unsupported here */
}

/* Bus bandwidth of one entry after NCCL's refinements, before conversion to algorithm bw. */
static double bus_bandwidth(const cct_nccl_topo *topo, const cct_constants *k, int coll, int algo,
                            int proto)
{
    const cct_nccl_graph *g = &topo->graphs[algo];
    int cci = cct_nccl_compcap_index(topo->cc), sci = cct_nccl_scale_index(topo->n_nodes);
    double ll_max = k->ll_max_bw[cct_nccl_ll_row(topo)][sci];
    float bw = (float)(topo->n_nodes <= 2 ? g->bw_intra : g->bw_inter);
    double bus = (float)(g->n_channels * bw);
    if (algo == CCT_ALGO_RING && proto == CCT_PROTO_LL)
        bus = fmin(ll_max, bus * .5);
    if (algo == CCT_ALGO_RING && proto == CCT_PROTO_LL128)
        bus = fmin(bus * 0.92, g->n_channels * k->per_ch_max_ring_ll128_bw[cci][sci]);
    if (algo == CCT_ALGO_TREE && coll == CCT_COLL_ALLREDUCE)
        bus = fmin(bus * .92, g->n_channels * k->per_ch_max_tree_bw[cci][sci]);
    if (algo == CCT_ALGO_TREE && proto == CCT_PROTO_LL)
        bus = fmin(bus * 1.0 / 3.8, ll_max);
    if (algo == CCT_ALGO_TREE && proto == CCT_PROTO_LL128)
        bus = fmin(bus * (topo->n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g->n_channels * k->per_ch_max_tree_ll128_bw[cci][sci]);
    if (algo == CCT_ALGO_TREE && topo->max_tree_pattern == CCT_NCCL_PATTERN_TREE)
        bus *= .85;
    if (algo == CCT_ALGO_PAT)
        bus *= .75;
    bool ag_rs = coll == CCT_COLL_ALLGATHER || coll == CCT_COLL_REDUCESCATTER;
    if (algo == CCT_ALGO_RING)
        bus *= (double)topo->n_ranks / cct_coll_ring_steps(coll, topo->n_ranks);
    else if (!ag_rs)
        bus *= .5;
    return (float)bus;
}

static double latency(const cct_nccl_topo *topo, const cct_constants *k, int coll, int algo,
                      int proto)
{
    const cct_nccl_graph *g = &topo->graphs[algo];
    int n_ranks = topo->n_ranks, n_nodes = topo->n_nodes;
    int intra_hw = g->type_intra == CCT_NCCL_PATH_NVL ? CCT_NCCL_HW_NVLINK : CCT_NCCL_HW_PCI;
    int hw = n_nodes == 1 ? intra_hw : CCT_NCCL_HW_NET;
    bool one_per_node = n_ranks == n_nodes;
    double lat = k->base_latency_us[algo][proto];
    double intra = k->hw_latency_us[intra_hw][algo][proto];
    /* one rank per node: the latency is fully exposed, NCCL uses the tree's network value */
    double inter =
        (float)k->hw_latency_us[CCT_NCCL_HW_NET][one_per_node ? CCT_ALGO_TREE : algo][proto];
    inter += g->latency_inter;
    if (proto == CCT_PROTO_SIMPLE)
        inter += g->latency_inter; /* the flush */
    int nsteps = cct_coll_ring_steps(coll, n_ranks);
    int ppn = n_ranks / n_nodes;
    if (algo == CCT_ALGO_RING) {
        if (coll == CCT_COLL_BROADCAST || coll == CCT_COLL_REDUCE) {
            double step = k->hw_latency_us[hw][CCT_ALGO_RING][proto];
            if (g->same_channels)
                return (float)(lat + step);
            if (proto == CCT_PROTO_SIMPLE)
                step = k->hw_latency_us[hw][CCT_ALGO_TREE][proto];
            return (float)(lat + nsteps * step);
        }
        double net_overhead = 0.0;
        if (n_nodes > 1)
            net_overhead = (topo->cpu_amd ? 2.0 : 1.0) * (proto == CCT_PROTO_SIMPLE ? 3 : 1);
        intra = fmax((float)intra, net_overhead);
        /* one step per pass of the ring over each node boundary */
        int inter_steps = n_nodes == 1 ? 0 : cct_coll_facts_of(coll)->ring_a * (n_nodes - 1);
        return (float)(lat + (nsteps - inter_steps) * (float)intra + inter_steps * (float)inter);
    }
    if (algo == CCT_ALGO_TREE)
        return (float)(lat + 2 * ((ppn - 1) * (float)intra +
                                  log2_floor((uint64_t)n_nodes) * (float)inter));
    /* PAT */
    return (float)(lat + log2_floor((uint64_t)n_nodes) * ((float)inter / 3.5) + n_ranks * 2.8);
}

void cct_nccl_model_compute(const cct_nccl_topo *topo, const cct_constants *k, cct_nccl_costs *out)
{
    memset(out, 0, sizeof *out);
    out->n_ranks = topo->n_ranks;
    out->n_nodes = topo->n_nodes;
    out->cc = topo->cc;
    out->comm_channels =
        topo->comm_channels > 0 ? topo->comm_channels : topo->graphs[CCT_ALGO_RING].n_channels;
    if (topo->n_ranks <= 1 || topo->n_nodes < 1)
        return;
    for (int c = 0; c < CCT_NUM_COLLS; c++)
        for (int a = 0; a < CCT_NUM_ALGOS; a++)
            for (int p = 0; p < CCT_NUM_PROTOS; p++) {
                if (!modelled(c, a, p, topo) || !topo->graphs[a].present)
                    continue;
                out->latency_us[c][a][p] = latency(topo, k, c, a, p);
                double bw = bus_bandwidth(topo, k, c, a, p);
                if (p == CCT_PROTO_LL128 && !cct_nccl_ll128_enabled(topo, a))
                    bw = 0.0;
                out->bandwidth_gbps[c][a][p] = bw;
            }
}

/* Trees do not follow the model at medium sizes; NCCL applies these factors to the tree's
 * allreduce bandwidth, by protocol, for sizes 64 B << i (tuning.cc, treeCorrectionFactor). */
static const double tree_correction[CCT_NUM_PROTOS][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

double cct_nccl_model_time(const cct_nccl_costs *costs, int coll, int algo, int proto,
                           uint64_t n_bytes, int pipe_ops)
{
    if (coll < 0 || coll >= CCT_NUM_COLLS || algo < 0 || algo >= CCT_NUM_ALGOS || proto < 0 ||
        proto >= CCT_NUM_PROTOS)
        return -1.0;
    double bw = costs->bandwidth_gbps[coll][algo][proto];
    double lat = costs->latency_us[coll][algo][proto];
    if (bw <= 0.0)
        return -1.0;
    int log_size = log2_floor(n_bytes >> 6);
    if (algo == CCT_ALGO_TREE && coll == CCT_COLL_ALLREDUCE && log_size >= 0 && log_size < 23)
        bw *= tree_correction[proto][log_size];
    if (algo == CCT_ALGO_RING && proto == CCT_PROTO_SIMPLE && costs->n_nodes > 1 &&
        coll == CCT_COLL_ALLREDUCE && costs->comm_channels > 0 &&
        n_bytes / ((uint64_t)costs->comm_channels * (uint64_t)costs->n_ranks) >= 64)
        lat *= costs->cc < 80 ? 1.9 : 1.4; /* the ring's plateau */
    if (pipe_ops < 1)
        pipe_ops = 1;
    int lat_count = algo == CCT_ALGO_RING
                        ? pipe_ops
                        : (pipe_ops + NCCL_WORK_BATCH_COLLS - 1) / NCCL_WORK_BATCH_COLLS;
    return lat * lat_count + (double)n_bytes / (1000.0 * bw);
}

bool cct_nccl_model_choose(const cct_nccl_costs *costs, int coll, uint64_t n_bytes, int pipe_ops,
                           int *algo, int *proto)
{
    double best = INFINITY;
    bool found = false;
    for (int a = 0; a < CCT_NUM_ALGOS; a++)
        for (int p = 0; p < CCT_NUM_PROTOS; p++) {
            double t = cct_nccl_model_time(costs, coll, a, p, n_bytes, pipe_ops);
            if (t >= 0.0 && t < best) {
                best = t;
                *algo = a;
                *proto = p;
                found = true;
            }
        }
    return found;
}
