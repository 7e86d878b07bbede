/*
 * nccl_profiler_abi.h - the NCCL profiler plugin ABI, versions 4 to 6, declared by ccltune.
 *
 * NCCL finds a profiler by dlsym'ing a data symbol `ncclProfiler_vN` (2.26-2.27: v4;
 * 2.28: v5, then v4..v1; 2.29+: v6 first).  The struct is a name and five function
 * pointers: init, startEvent, stopEvent, recordEventState, finalize.  Written from the
 * published facts of that ABI (argument order, field order and types, enum values), not
 * copied from NCCL, so the plugin builds without NCCL's headers.  Layouts must stay
 * byte-exact: NCCL fills these descriptors and passes them by pointer.
 *
 * Only the events the recorder activates are spelled out field by field: collectives
 * (algorithm, protocol and channel count as NCCL chose them) and kernel channels (GPU
 * globaltimer stamps at the start and end of each channel's work).  The other members
 * of the descriptor union are kept as opaque padding of at least their size, so that
 * the offsets of the members we read are right and the union is never smaller than
 * NCCL's.
 */
#ifndef CCT_NCCL_PROFILER_ABI_H
#define CCT_NCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_tuner_abi.h" /* ncclResult_t, ncclDebugLogger_t */

/* Event types (bits of eActivationMask and the descriptor's type). */
enum {
    CCT_PROF_GROUP = 1 << 0,
    CCT_PROF_COLL = 1 << 1,
    CCT_PROF_P2P = 1 << 2,
    CCT_PROF_PROXY_OP = 1 << 3,
    CCT_PROF_PROXY_STEP = 1 << 4,
    CCT_PROF_PROXY_CTRL = 1 << 5,
    CCT_PROF_KERNEL_CH = 1 << 6,
    CCT_PROF_NET_PLUGIN = 1 << 7,
    CCT_PROF_GROUP_API = 1 << 8,
    CCT_PROF_COLL_API = 1 << 9,
    CCT_PROF_P2P_API = 1 << 10,
    CCT_PROF_KERNEL_LAUNCH = 1 << 11
};

/* Event states (recordEventState): only the kernel channel's stop is read. */
typedef int ncclProfilerEventState_t;
#define CCT_PROF_STATE_KERNEL_CH_STOP 22

/* The collective member of the descriptor union (v4 lacks the trailing parentGroup). */
typedef struct {
    uint64_t seqNumber;
    const char *func; /* "AllReduce", "AllGather", ... */
    const void *sendBuff;
    void *recvBuff;
    size_t count; /* elements per rank as passed to the call */
    int root;
    const char *datatype; /* "ncclFloat32", ... */
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;  /* "RING", "TREE", "NVLS_TREE", ... */
    const char *proto; /* "LL", "LL128", "SIMPLE" */
    void *parentGroup; /* v5/v6 only */
} cct_prof_coll_v5;

typedef struct {
    uint8_t channelId;
    uint64_t pTimer; /* GPU globaltimer (ns) when the channel started the work */
} cct_prof_kernel_ch;

/* v5: type is 64-bit; the union's largest member is the collective (88 bytes). */
typedef struct {
    uint64_t type;
    void *parentObj; /* for a kernel channel: the collective's handle */
    int rank;
    union {
        cct_prof_coll_v5 coll;
        cct_prof_kernel_ch kernelCh;
        unsigned char pad_v5[96];
    };
} ncclProfilerEventDescr_v5_t;

/* v6 adds copy-engine members to the union (the largest about 100 bytes); the members
 * v5 has keep their offsets. */
typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        cct_prof_coll_v5 coll;
        cct_prof_kernel_ch kernelCh;
        unsigned char pad_v6[128];
    };
} ncclProfilerEventDescr_v6_t;

/* v4: type is 8-bit, the collective has no parentGroup. */
typedef struct {
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
} cct_prof_coll_v4;

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        cct_prof_coll_v4 coll;
        cct_prof_kernel_ch kernelCh;
        unsigned char pad_v4[88];
    };
} ncclProfilerEventDescr_v4_t;

/* State arguments (the same union in v4..v6); the kernel channel's stop stamp. */
typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer; /* GPU globaltimer (ns) when the channel finished */
    } kernelCh;
} ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v4_t;
typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v6_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,
                         const char *commName, int nNodes, int nranks, int rank,
                         ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void *context, void **eHandle, ncclProfilerEventDescr_v6_t *eDescr);
    ncclResult_t (*stopEvent)(void *eHandle);
    ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,
                                     ncclProfilerEventStateArgs_v6_t *eStateArgs);
    ncclResult_t (*finalize)(void *context);
} ncclProfiler_v6_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,
                         const char *commName, int nNodes, int nranks, int rank,
                         ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void *context, void **eHandle, ncclProfilerEventDescr_v5_t *eDescr);
    ncclResult_t (*stopEvent)(void *eHandle);
    ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,
                                     ncclProfilerEventStateArgs_v5_t *eStateArgs);
    ncclResult_t (*finalize)(void *context);
} ncclProfiler_v5_t;

/* v4: init takes the communicator's hash after its name. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **context, int *eActivationMask, const char *commName,
                         uint64_t commHash, int nNodes, int nranks, int rank,
                         ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void *context, void **eHandle, ncclProfilerEventDescr_v4_t *eDescr);
    ncclResult_t (*stopEvent)(void *eHandle);
    ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,
                                     ncclProfilerEventStateArgs_v4_t *eStateArgs);
    ncclResult_t (*finalize)(void *context);
} ncclProfiler_v4_t;

#endif
