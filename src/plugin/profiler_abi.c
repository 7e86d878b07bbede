/*
 * profiler_abi.c - the exported profiler face of libnccl-tuner-ccltune.so:
 * ncclProfiler_v4, _v5 and _v6, thin adapters onto the recorder (profiler_agg.c).
 *
 * NCCL_PROFILER_PLUGIN naming this library makes NCCL dlsym the newest version it knows.
 * init activates only collective and kernel-channel events (collective events alone under
 * CCLTUNE_RECORD_TIME=0), and only when CCLTUNE_RECORD names a usable folder; otherwise it returns
 * eActivationMask 0 and a NULL context, and NCCL calls nothing else (NCCL keeps one mask for the
 * process, and every init here answers the same).  Every entry point returns ncclSuccess: a
 * recorder that cannot record (out of memory, table full) counts or skips, it never fails the job.
 * Events of other types (NCCL still starts group and API events when collectives are active) get a
 * NULL handle, which NCCL never stops.
 */
#include "plugin_internal.h"
#include "profiler_internal.h"

#define PROFILER_NAME "ccltune"

static ncclResult_t init_common(int abi, void **ctx, uint64_t comm_id, int *mask, int nnodes,
                                int nranks, int rank, ncclDebugLogger_t log)
{
    cct_prof_note_init();
    if (ctx)
        *ctx = NULL;
    if (mask)
        *mask = 0;
    if (!ctx || !mask)
        return ncclSuccess;
    cct_recorder *r = cct_prof_open(comm_id, rank, nranks, nnodes, abi, log);
    if (r) {
        *ctx = r;
        *mask = cct_prof_record_time() ? CCT_PROF_COLL | CCT_PROF_KERNEL_CH : CCT_PROF_COLL;
    }
    return ncclSuccess;
}

static ncclResult_t init_v6(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t log)
{
    (void)name;
    return init_common(6, ctx, comm_id, mask, nnodes, nranks, rank, log);
}

static ncclResult_t init_v5(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t log)
{
    (void)name;
    return init_common(5, ctx, comm_id, mask, nnodes, nranks, rank, log);
}

static ncclResult_t init_v4(void **ctx, int *mask, const char *name, uint64_t comm_hash, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t log)
{
    (void)name;
    return init_common(4, ctx, comm_hash, mask, nnodes, nranks, rank, log);
}

/* v5 and v6 descriptors agree on every member read here. */
static ncclResult_t start_v6(void *ctx, void **handle, ncclProfilerEventDescr_v6_t *d)
{
    if (!handle)
        return ncclSuccess;
    *handle = NULL;
    if (!d)
        return ncclSuccess;
    if (d->type == CCT_PROF_COLL && ctx)
        *handle = cct_recorder_coll(ctx, d->coll.func, d->coll.count, d->coll.datatype,
                                    d->coll.nChannels, d->coll.algo, d->coll.proto);
    else if (d->type == CCT_PROF_KERNEL_CH)
        *handle = cct_recorder_channel_start(d->parentObj, d->kernelCh.pTimer);
    return ncclSuccess;
}

static ncclResult_t start_v5(void *ctx, void **handle, ncclProfilerEventDescr_v5_t *d)
{
    return start_v6(ctx, handle, (ncclProfilerEventDescr_v6_t *)(void *)d);
}

static ncclResult_t start_v4(void *ctx, void **handle, ncclProfilerEventDescr_v4_t *d)
{
    if (!handle)
        return ncclSuccess;
    *handle = NULL;
    if (!d)
        return ncclSuccess;
    if (d->type == CCT_PROF_COLL && ctx)
        *handle = cct_recorder_coll(ctx, d->coll.func, d->coll.count, d->coll.datatype,
                                    d->coll.nChannels, d->coll.algo, d->coll.proto);
    else if (d->type == CCT_PROF_KERNEL_CH)
        *handle = cct_recorder_channel_start(d->parentObj, d->kernelCh.pTimer);
    return ncclSuccess;
}

static ncclResult_t stop(void *handle)
{
    cct_recorder_stop(handle);
    return ncclSuccess;
}

static ncclResult_t record(void *handle, ncclProfilerEventState_t state,
                           ncclProfilerEventStateArgs_v5_t *args)
{
    if (handle && args && state == CCT_PROF_STATE_KERNEL_CH_STOP)
        cct_recorder_channel_stamp(handle, args->kernelCh.pTimer);
    return ncclSuccess;
}

static ncclResult_t finalize(void *ctx)
{
    cct_prof_close(ctx);
    return ncclSuccess;
}

CCT_EXPORT ncclProfiler_v6_t ncclProfiler_v6 = {PROFILER_NAME, init_v6, start_v6,
                                                stop,          record,  finalize};
CCT_EXPORT ncclProfiler_v5_t ncclProfiler_v5 = {PROFILER_NAME, init_v5, start_v5,
                                                stop,          record,  finalize};
CCT_EXPORT ncclProfiler_v4_t ncclProfiler_v4 = {PROFILER_NAME, init_v4, start_v4,
                                                stop,          record,  finalize};
