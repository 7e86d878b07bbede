/*
 * cct_names.c - name tables for collectives, algorithms and protocols, and byte-size
 * formatting (see cct_names.h; sizes are parsed in cct_parse.c).
 *
 * Each enum has two spellings: ours (lower case with underscores, used in YAML tables and
 * on the command line) and NCCL's (used in NCCL_ALGO/NCCL_PROTO and in NCCL's logs).
 * Lookups accept both, case-insensitively, so an imported nccl-tests log ("NCCL_ALGO set
 * by environment to Ring") and a hand-written table use the same functions.
 */
#include "cct_names.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[CCT_NUM_COLLS] = {"broadcast", "reduce", "allgather",
                                                      "reducescatter", "allreduce"};
static const char *const coll_nccl_names[CCT_NUM_COLLS] = {"Broadcast", "Reduce", "AllGather",
                                                           "ReduceScatter", "AllReduce"};
static const char *const algo_names[CCT_NUM_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const algo_nccl_names[CCT_NUM_ALGOS] = {
    "Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"};
static const char *const proto_names[CCT_NUM_PROTOS] = {"ll", "ll128", "simple"};
static const char *const proto_nccl_names[CCT_NUM_PROTOS] = {"LL", "LL128", "Simple"};

static const char *name_at(const char *const *names, int n, int i)
{
    return (i >= 0 && i < n) ? names[i] : "?";
}

static int index_of(const char *const *a, const char *const *b, int n, const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcasecmp(name, a[i]) == 0 || strcasecmp(name, b[i]) == 0)
            return i;
    return -1;
}

const char *cct_coll_name(int coll)
{
    return name_at(coll_names, CCT_NUM_COLLS, coll);
}
const char *cct_algo_name(int algo)
{
    return name_at(algo_names, CCT_NUM_ALGOS, algo);
}
const char *cct_proto_name(int proto)
{
    return name_at(proto_names, CCT_NUM_PROTOS, proto);
}
const char *cct_algo_nccl_name(int algo)
{
    return name_at(algo_nccl_names, CCT_NUM_ALGOS, algo);
}
const char *cct_proto_nccl_name(int proto)
{
    return name_at(proto_nccl_names, CCT_NUM_PROTOS, proto);
}

int cct_coll_from_name(const char *name)
{
    int i = index_of(coll_names, coll_nccl_names, CCT_NUM_COLLS, name);
    if (i < 0 && name) {
        /* nccl-tests binaries and hyphenated spellings: all_reduce, all-gather, reduce_scatter */
        char squeezed[32];
        size_t k = 0;
        for (const char *p = name; *p && k + 1 < sizeof squeezed; p++)
            if (*p != '_' && *p != '-')
                squeezed[k++] = *p;
        squeezed[k] = '\0';
        i = index_of(coll_names, coll_nccl_names, CCT_NUM_COLLS, squeezed);
    }
    return i;
}

int cct_algo_from_name(const char *name)
{
    return index_of(algo_names, algo_nccl_names, CCT_NUM_ALGOS, name);
}

int cct_proto_from_name(const char *name)
{
    return index_of(proto_names, proto_nccl_names, CCT_NUM_PROTOS, name);
}

const char *cct_format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes == CCT_BYTES_INF) {
        snprintf(buf, len, "inf");
        return buf;
    }
    unsigned u = 0;
    uint64_t whole = bytes;
    while (whole >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        whole >>= 10;
        u++;
    }
    if (u == 0) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    } else {
        uint64_t unit = (uint64_t)1 << (10 * u);
        if (bytes % unit == 0)
            snprintf(buf, len, "%llu %s", (unsigned long long)(bytes / unit), units[u]);
        else
            snprintf(buf, len, "%.4g %s", (double)bytes / (double)unit, units[u]);
    }
    return buf;
}

const char *cct_format_bytes_exact(uint64_t bytes, char *buf, size_t len)
{
    cct_format_bytes(bytes, buf, len);
    if (bytes != CCT_BYTES_INF && bytes >= 1024) {
        uint64_t unit = 1024;
        while (bytes / unit >= 1024 && unit < ((uint64_t)1 << 60))
            unit <<= 10;
        if (bytes % unit != 0)
            snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    }
    return buf;
}
