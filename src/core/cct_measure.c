/*
 * cct_measure.c - small facts about measured points: element sizes, data type names, and
 * the bus-bandwidth factor that makes numbers comparable with nccl-tests' "busbw" column.
 *
 * busbw = algbw * factor, where algbw = bytes / time and the factor is the fraction of the
 * data each rank must move over its slowest link in an optimal algorithm:
 * allreduce 2(n-1)/n, allgather and reducescatter (n-1)/n, broadcast and reduce 1.
 */
#include "cct_measure.h"

#include <strings.h>

#include "cct_facts.h"

double cct_busbw_factor(int coll, int ranks)
{
    int n = ranks > 0 ? ranks : 1;
    if (!cct_coll_facts_of(coll))
        return 1.0;
    /* the ring's steps per rank: 2(n-1)/n, (n-1)/n, n/n (cct_facts.c) */
    return (double)cct_coll_ring_steps(coll, n) / (double)n;
}

unsigned cct_dtype_size(int dtype)
{
    return dtype == CCT_DTYPE_BF16 ? 2u : 4u;
}

const char *cct_dtype_name(int dtype)
{
    return dtype == CCT_DTYPE_BF16 ? "bfloat16" : dtype == CCT_DTYPE_FLOAT ? "float" : "?";
}

int cct_dtype_from_name(const char *name)
{
    if (!name)
        return -1;
    if (strcasecmp(name, "float") == 0 || strcasecmp(name, "float32") == 0 ||
        strcasecmp(name, "fp32") == 0)
        return CCT_DTYPE_FLOAT;
    if (strcasecmp(name, "bfloat16") == 0 || strcasecmp(name, "bf16") == 0)
        return CCT_DTYPE_BF16;
    return -1;
}
