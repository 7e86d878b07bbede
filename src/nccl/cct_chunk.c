/*
 * cct_chunk.c - NCCL's rule for a tuner's chunk size (see cct_chunk.h), as ccltune needs it:
 * the plugin keeps its forced answers at least one grain, and the search records which
 * chunk NCCL ran when nothing in NCCL's output says so.
 *
 * The constants: NCCL divides each protocol's buffer into 8 steps; Ring/Simple moves 4 steps
 * per chunk for allreduce, allgather and reducescatter (2 for broadcast and reduce); the
 * other algorithms and protocols 1.  An LL line carries 8 data bytes in 16; an LL128 line
 * 120 in 128.  Grains: LL 16 bytes, LL128 a warp's 8 lines of 120 data bytes each
 * (32 x 8 / 16 x 15 x 8 = 1920), Simple 512.
 */
#include "cct_chunk.h"

#include "cct_facts.h"
#include "cct_names.h"

#define NCCL_STEPS 8

uint64_t cct_chunk_grain(int proto)
{
    return proto == CCT_PROTO_LL       ? 16
           : proto == CCT_PROTO_LL128  ? 1920
           : proto == CCT_PROTO_SIMPLE ? 512
                                       : 0;
}

static uint64_t chunk_steps(int coll, int algo, int proto)
{
    if (proto != CCT_PROTO_SIMPLE || algo != CCT_ALGO_RING)
        return 1;
    return coll == CCT_COLL_BROADCAST || coll == CCT_COLL_REDUCE ? NCCL_STEPS / 4 : NCCL_STEPS / 2;
}

uint64_t cct_chunk_ceiling(int coll, int algo, int proto, uint64_t buffsize)
{
    if (algo == CCT_ALGO_COLLNET_DIRECT || algo == CCT_ALGO_COLLNET_CHAIN ||
        algo == CCT_ALGO_NVLS || algo == CCT_ALGO_NVLS_TREE)
        return 0;
    const cct_proto_facts *f = cct_proto_facts_of(proto);
    if (!f)
        return 0;
    uint64_t buf = buffsize ? buffsize : f->buffsize_default;
    uint64_t chunk = buf / NCCL_STEPS * chunk_steps(coll, algo, proto);
    if (proto == CCT_PROTO_LL)
        chunk /= 2;
    else if (proto == CCT_PROTO_LL128)
        chunk = chunk / 16 * 15;
    return chunk;
}

uint64_t cct_chunk_used(uint64_t asked, uint64_t ceiling, int proto)
{
    uint64_t grain = cct_chunk_grain(proto);
    uint64_t c = ceiling && asked > ceiling ? ceiling : asked;
    if (grain == 0)
        return c;
    c = c / grain * grain;
    return c < grain ? grain : c;
}

uint64_t cct_chunk_answer(uint64_t asked, int proto)
{
    uint64_t grain = cct_chunk_grain(proto);
    return asked < grain ? grain : asked;
}

bool cct_chunk_supported(int version)
{
    return version >= CCT_CHUNK_SINCE_NCCL;
}
