/*
 * cct_chunk.h - what NCCL does with the chunk size a tuner answers (tuner v6, NCCL >= 2.30).
 *
 * NCCL asks getChunkSize once per channel range of a collective (so nBytes is the bytes that
 * range carries, not the collective's, and nChannels is 1 for the ring/tree schedule), after
 * it computed its own chunk.  It then caps the answer at what the protocol's buffers allow
 * (one NCCL step of the buffer, times the chunk steps that Ring/Simple pipelines, halved for
 * LL's flag words and cut to 15/16 for LL128's) and rounds it down to the protocol's grain
 * (16 bytes LL, 1920 LL128, 512 Simple).  An answer below the grain would round to zero,
 * so ccltune never gives one.  These facts were read from NCCL 2.30.7's calcCollChunking
 * (enqueue.cc) and device.h; CollNet and NVLS chunks are derived from other buffers and
 * are left out (cct_chunk_ceiling returns 0 for them: unknown).
 */
#ifndef CCT_CHUNK_H
#define CCT_CHUNK_H

#include <stdbool.h>
#include <stdint.h>

/* First NCCL release (NCCL_VERSION_CODE) whose tuner ABI (v6) lets a tuner set the chunk. */
#define CCT_CHUNK_SINCE_NCCL 23000

/* Bytes a chunk of proto is a multiple of (NCCL's ncclProtoGrainSize); 0 for an unknown
 * protocol. */
uint64_t cct_chunk_grain(int proto);

/* The largest chunk NCCL accepts from a tuner for (coll, algo, proto) when the protocol's
 * buffer is buffsize bytes (0: NCCL's default for that protocol); 0 when unknown. */
uint64_t cct_chunk_ceiling(int coll, int algo, int proto, uint64_t buffsize);

/* The chunk NCCL runs when a tuner answers `asked`: capped at ceiling (0: no cap known),
 * rounded down to the grain, never below one grain. */
uint64_t cct_chunk_used(uint64_t asked, uint64_t ceiling, int proto);

/* What a tuner should answer to get `asked` (>= one grain of proto); asked itself otherwise. */
uint64_t cct_chunk_answer(uint64_t asked, int proto);

/* True when NCCL release `version` (NCCL_VERSION_CODE; <= 0 unknown) calls getChunkSize. */
bool cct_chunk_supported(int version);

#endif
