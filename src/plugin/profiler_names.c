/*
 * profiler_names.c - NCCL's spellings in profiler descriptors to ccltune's numbers.
 *
 * NCCL names a collective's function ("AllReduce"), algorithm ("RING", "NVLS_TREE"),
 * protocol ("LL128", "SIMPLE") and data type ("ncclBfloat16") by string in every
 * collective event.  These decoders run on each collective's path, so they compare a few
 * characters instead of looping over name tables, and never allocate.  Case is ignored:
 * releases have spelled algorithms both "Ring" and "RING".  Anything unknown maps to an
 * explicit "other"/"unknown" value so that the call is still counted.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "cct_names.h"
#include "profiler_internal.h"

static bool eq(const char *s, const char *name)
{
    return s && strcasecmp(s, name) == 0;
}

int cct_prof_func(const char *s)
{
    if (!s || !s[0])
        return CCT_PROF_COLL_OTHER;
    switch (tolower((unsigned char)s[0])) {
    case 'a':
        if (eq(s, "AllReduce"))
            return CCT_COLL_ALLREDUCE;
        if (eq(s, "AllGather"))
            return CCT_COLL_ALLGATHER;
        break;
    case 'r':
        if (eq(s, "ReduceScatter"))
            return CCT_COLL_REDUCESCATTER;
        if (eq(s, "Reduce"))
            return CCT_COLL_REDUCE;
        break;
    case 'b':
        if (eq(s, "Broadcast"))
            return CCT_COLL_BROADCAST;
        break;
    default:
        break;
    }
    return CCT_PROF_COLL_OTHER;
}

int cct_prof_algo(const char *s)
{
    static const char *const names[CCT_NUM_ALGOS] = {
        "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
    static const char *const alt[CCT_NUM_ALGOS] = {
        "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
    if (!s)
        return CCT_PROF_ALGO_UNKNOWN;
    for (int a = 0; a < CCT_NUM_ALGOS; a++)
        if (eq(s, names[a]) || eq(s, alt[a]))
            return a;
    return CCT_PROF_ALGO_UNKNOWN;
}

int cct_prof_proto(const char *s)
{
    if (eq(s, "LL"))
        return CCT_PROTO_LL;
    if (eq(s, "LL128"))
        return CCT_PROTO_LL128;
    if (eq(s, "SIMPLE"))
        return CCT_PROTO_SIMPLE;
    return CCT_PROF_PROTO_UNKNOWN;
}

unsigned cct_prof_type_size(const char *s)
{
    if (!s)
        return 1;
    if (strncasecmp(s, "nccl", 4) == 0)
        s += 4;
    if (strncasecmp(s, "Float8", 6) == 0)
        return 1;
    size_t n = strlen(s);
    if (n >= 2 && strcmp(s + n - 2, "16") == 0)
        return 2;
    if (n >= 2 && strcmp(s + n - 2, "32") == 0)
        return 4;
    if (n >= 2 && strcmp(s + n - 2, "64") == 0)
        return 8;
    if (eq(s, "Half"))
        return 2;
    if (eq(s, "Float"))
        return 4;
    if (eq(s, "Double"))
        return 8;
    return 1; /* Int8, Uint8, Char and anything unknown */
}

const char *cct_prof_coll_name(int coll)
{
    return coll >= 0 && coll < CCT_NUM_COLLS ? cct_coll_name(coll) : "other";
}

const char *cct_prof_algo_name(int algo)
{
    return algo >= 0 && algo < CCT_NUM_ALGOS ? cct_algo_name(algo) : "unknown";
}

const char *cct_prof_proto_name(int proto)
{
    return proto >= 0 && proto < CCT_NUM_PROTOS ? cct_proto_name(proto) : "unknown";
}
