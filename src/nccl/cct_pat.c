/*
 * cct_pat.c - where NCCL offers PAT (see cct_pat.h for the facts and their sources).
 *
 * Two questions kept apart: whether a PAT kernel exists for the collective and protocol at
 * all (a fact of every release), and whether NCCL enables it by default for a communicator
 * shape (one rank per node, more than one rank).  The search space asks the second, the
 * NCCL model (cct_nccl_model.c) adds the compute capability it knows from the topology.
 */
#include "cct_pat.h"

#include "cct_facts.h"
#include "cct_names.h"

bool cct_pat_has_kernel(int coll, int proto)
{
    return cct_coll_has_algo(coll, CCT_ALGO_PAT) && proto == CCT_PROTO_SIMPLE;
}

bool cct_pat_offered(int coll, int proto, int ranks, int nodes, int nccl_version)
{
    if (!cct_pat_has_kernel(coll, proto))
        return false;
    if (nccl_version > 0 && nccl_version < CCT_NCCL_PAT_SINCE)
        return false;
    return ranks > 1 && nodes == ranks;
}
