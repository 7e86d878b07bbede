/*
 * nccl_tuner_abi.h - the NCCL tuner plugin ABI, versions 1 to 6, declared by ccltune.
 *
 * NCCL finds a tuner by dlsym'ing a data symbol `ncclTunerPlugin_vN` that is a struct of a
 * name and function pointers; each NCCL release tries a fixed list of N (2.19: v1;
 * 2.20-2.21: v2; 2.22-2.23: v3, v2; 2.24-2.27: v4..v2; 2.28-2.29: v5..v2; 2.30: v6..v2).
 * These declarations are written from the published facts of that ABI (argument order,
 * types, struct layouts and enum values), not copied from NCCL, so the plugin builds
 * without NCCL's headers.  Layouts must stay byte-exact: NCCL reads these structs and
 * passes these arguments by position.
 *
 * Only the C types of the boundary live here; what the plugin does with them is in
 * plugin_abi.c.  Everything here is plain data: no ownership questions arise.
 */
#ifndef CCT_NCCL_TUNER_ABI_H
#define CCT_NCCL_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ncclResult_t: values fixed since NCCL 2.0. */
typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7
} ncclResult_t;

/* ncclFunc_t: the first five are the collectives a tuner is asked about (equal to cct_coll);
 * later releases append point-to-point and other kinds, which the plugin never tunes. */
typedef enum {
    ncclFuncBroadcast = 0,
    ncclFuncReduce = 1,
    ncclFuncAllGather = 2,
    ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4
} ncclFunc_t;

/* ncclDebugLogLevel and the subsystem flags the plugin logs under. */
typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

#define CCT_NCCL_SUBSYS_INIT 0x1UL
#define CCT_NCCL_SUBSYS_TUNING 0x40UL

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

/* Cost-table conventions (v3+): collCostTable is really float[numAlgo][numProto]. */
#define CCT_NCCL_ALGO_PROTO_IGNORE (-1.0f)
#define CCT_NCCL_ALGO_UNDEF (-1)
#define CCT_NCCL_PROTO_UNDEF (-1)

/* ---- v5/v6 init side structures ---- */

typedef struct {
    int nNvlDomains;          /* NVLink domains in the communicator */
    int minRanksPerNvlDomain; /* fewest ranks in any of them */
    int maxRanksPerNvlDomain; /* most ranks in any of them */
} ncclNvlDomainInfo_v5_t;
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;

/* Dimensions of the tuner constants, fixed by the v5 ABI (not the running NCCL's counts). */
#define CCT_NCCL_V5_NUM_ALGORITHMS 7
#define CCT_NCCL_V5_NUM_PROTOCOLS 3
#define CCT_NCCL_V5_NUM_HW_LINKS 3
#define CCT_NCCL_V5_NUM_COMPCAPS 4
#define CCT_NCCL_V5_NUM_TUNING_SCALES 3

/* NCCL's latency/bandwidth model constants, in/out at v5/v6 init (the plugin may rewrite
 * them before NCCL computes its own cost model). */
typedef struct {
    double baseLatencies[CCT_NCCL_V5_NUM_ALGORITHMS][CCT_NCCL_V5_NUM_PROTOCOLS];
    double hwLatencies[CCT_NCCL_V5_NUM_HW_LINKS][CCT_NCCL_V5_NUM_ALGORITHMS]
                      [CCT_NCCL_V5_NUM_PROTOCOLS];
    double llMaxBws[CCT_NCCL_V5_NUM_COMPCAPS][CCT_NCCL_V5_NUM_TUNING_SCALES];
    double perChMaxRingLL128Bws[CCT_NCCL_V5_NUM_COMPCAPS][CCT_NCCL_V5_NUM_TUNING_SCALES];
    double perChMaxTreeLL128Bws[CCT_NCCL_V5_NUM_COMPCAPS][CCT_NCCL_V5_NUM_TUNING_SCALES];
    double perChMaxTreeBws[CCT_NCCL_V5_NUM_COMPCAPS][CCT_NCCL_V5_NUM_TUNING_SCALES];
    double perChMaxNVLSTreeBws[CCT_NCCL_V5_NUM_COMPCAPS][CCT_NCCL_V5_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;

/* ---- the plugin structs, newest first ---- */

/* v6 (NCCL 2.30+): v5 plus an optional chunk-size hook (NULL: NCCL keeps its own). */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t *nvlDomainInfo,
                         ncclTunerConstants_v6_t *constants);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*getChunkSize)(void *ctx, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                                 int nChannels, size_t *chunkSize);
} ncclTuner_v6_t;

/* v5 (NCCL 2.28-2.29): context first, communicator id, NVL domains, model constants. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *ctx);
} ncclTuner_v5_t;

/* v4 (NCCL 2.24-2.27): v3 plus regBuff. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **ctx);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*destroy)(void *ctx);
} ncclTuner_v4_t;

/* v3 (NCCL 2.22-2.23): the cost table replaces algorithm/protocol outputs. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **ctx);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int *nChannels);
    ncclResult_t (*destroy)(void *ctx);
} ncclTuner_v3_t;

/* v2 (NCCL 2.20-2.21 natively; later releases adapt it onto the cost table). */
typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **ctx);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                                int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
                                int *nChannels);
    ncclResult_t (*destroy)(void *ctx);
} ncclTuner_v2_t;

/* v1 (NCCL 2.19): no context at all; one tuner state serves the whole process. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction);
    ncclResult_t (*getCollInfo)(ncclFunc_t collType, size_t nBytes, int collNetSupport,
                                int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
                                int *nChannels);
    ncclResult_t (*destroy)(void);
} ncclTuner_v1_t;

#endif
