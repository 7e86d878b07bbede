/*
 * plugin_select.c - the decision itself, as pure functions of their arguments.
 *
 * Cost tables (tuner v3+): NCCL passes float[numAlgo][numProto] with an estimated time per
 * entry and picks the cheapest entry that is >= 0 and not NCCL_ALGO_PROTO_IGNORE (-1.0).
 * Ignored entries are configurations NCCL cannot run here or the user excluded; changing
 * one would make NCCL run something unsupported, so the plugin only ever writes 0.0 into
 * an entry that is already a valid time, and only that one entry.  Bounds come from
 * numAlgo/numProto of the call (releases before 2.23 had 6 algorithms, not 7).
 *
 * v1/v2 (NCCL 2.19-2.21 natively): NCCL takes the returned algorithm/protocol on trust, so
 * cct_select_check_v2 restates what those releases would have allowed for the collective:
 * algorithms per collective, Simple-only algorithms, CollNet/NVLS support flags, NVLS
 * topology limits, the user's NCCL_ALGO/NCCL_PROTO, and the LL128 verdict.
 */

#include "plugin_internal.h"

#include "cct_facts.h"

static bool entry_usable(float cost)
{
    /* NCCL skips IGNORE and anything negative; NaN never compares >= 0 */
    return cost >= 0.0f;
}

/* cct_select_apply is inline in plugin_internal.h: it runs on every call. */

void cct_select_default(const float *costs, int num_algo, int num_proto, int *algo, int *proto)
{
    *algo = -1;
    *proto = -1;
    if (!costs)
        return;
    float best = 3600000000.0f; /* NCCL's starting bound: one hour in microseconds */
    for (int a = 0; a < num_algo; a++) {
        for (int p = 0; p < num_proto; p++) {
            float c = costs[a * num_proto + p];
            if (c == CCT_NCCL_ALGO_PROTO_IGNORE || !entry_usable(c))
                continue;
            if (c < best) {
                best = c;
                *algo = a;
                *proto = p;
            }
        }
    }
}

void cct_select_ignored_mask(const float *costs, int num_algo, int num_proto, int *mask,
                             int mask_len)
{
    for (int a = 0; a < mask_len; a++)
        mask[a] = 0;
    if (!costs)
        return;
    for (int a = 0; a < num_algo && a < mask_len; a++)
        for (int p = 0; p < num_proto && p < 31; p++)
            if (costs[a * num_proto + p] == CCT_NCCL_ALGO_PROTO_IGNORE)
                mask[a] |= 1 << p;
}

/* Algorithms NCCL 2.19-2.21 implement per collective (tuning.cc bandwidth loop): the
 * collective's algorithms in cct_facts.c, CollNetDirect only from the release that has it
 * for that collective (PAT, later still, is refused by the caller). */
static bool algo_implemented(int version, int coll, int algo)
{
    const cct_coll_facts *f = cct_coll_facts_of(coll);
    if (!f || !cct_coll_has_algo(coll, algo))
        return false;
    return algo != CCT_ALGO_COLLNET_DIRECT || version >= f->collnet_direct_since;
}

cct_outcome cct_select_check_v2(const cct_v2_call *c, int algo, int proto, bool ll128_ok)
{
    if (algo < 0 || algo >= CCT_ALGO_PAT || proto < 0 || proto >= CCT_NUM_PROTOS)
        return CCT_OUT_IGNORED; /* PAT does not exist where v1/v2 are native */
    if (!algo_implemented(c->nccl_version, c->coll, algo))
        return CCT_OUT_IGNORED;
    bool collnet = algo == CCT_ALGO_COLLNET_DIRECT || algo == CCT_ALGO_COLLNET_CHAIN;
    bool nvls = algo == CCT_ALGO_NVLS || algo == CCT_ALGO_NVLS_TREE;
    if ((collnet || nvls) && proto != CCT_PROTO_SIMPLE)
        return CCT_OUT_IGNORED;
    if (collnet && c->collnet_support != 1)
        return CCT_OUT_IGNORED;
    if (nvls && c->nvls_support != 1)
        return CCT_OUT_IGNORED;
    if (algo == CCT_ALGO_NVLS && c->nnodes > 1 &&
        (c->collnet_support != 1 || c->coll == CCT_COLL_ALLGATHER ||
         c->coll == CCT_COLL_REDUCESCATTER))
        return CCT_OUT_IGNORED;
    if (algo == CCT_ALGO_NVLS_TREE && c->nnodes == 1)
        return CCT_OUT_IGNORED;
    if (c->env && (!c->env->algo[algo] || !c->env->proto[proto]))
        return CCT_OUT_IGNORED;
    if (proto == CCT_PROTO_LL128 && !ll128_ok)
        return CCT_OUT_LL128;
    return CCT_OUT_OVERRIDDEN;
}
