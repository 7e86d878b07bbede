/*
 * plugin_abi.c - the exported face of libnccl-tuner-ccltune.so: ncclTunerPlugin_v1..v6.
 *
 * One library serves NCCL 2.19 to 2.30+: each release dlsyms the newest version it knows
 * (and falls back to older ones), so every version is exported, each a thin adapter onto
 * the same context code.  Rules that hold for all of them:
 *  - getCollInfo/getChunkSize always return ncclSuccess: NCCL 2.28 calls them through
 *    NCCLCHECK, so an error would fail the user's collective.  "Not sure" means "touch
 *    nothing".  The one exception is a context finalized already, which NCCL never
 *    passes: every entry point answers ncclInvalidArgument and touches nothing (the
 *    context is poisoned at finalize, plugin_context.c), instead of using freed memory.
 *  - init fails only when CCLTUNE_STRICT=1 asks for it (ncclInvalidUsage); out of memory
 *    yields a NULL context, which every entry point treats as "NCCL decides".
 *  - v1 has no context argument: one process-wide context serves every communicator, so
 *    when communicators of different shapes exist the plugin cannot tell their calls apart
 *    and leaves every call to NCCL (documented limitation, one WARN).
 */
#include <pthread.h>

#include "plugin_internal.h"
#include "profiler_internal.h"

#define PLUGIN_NAME "ccltune"

/* Create the context; then the table's NCCL model constants go into NCCL's (v5/v6; older ABIs
 * pass constants NULL and are told once that the constants are ignored). */
static ncclResult_t init_common(int abi, void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                                ncclDebugLogger_t log, ncclTunerConstants_v5_t *constants)
{
    if (!ctx)
        return ncclInvalidArgument;
    cct_prof_tuner_check(log); /* CCLTUNE_RECORD set without the profiler: one WARN */
    bool fail = false;
    *ctx = cct_ctx_create(abi, comm_id, nranks, nnodes, log, &fail);
    if (fail)
        return ncclInvalidUsage;
    if (*ctx)
        cct_constants_at_init(*ctx, abi, constants, log);
    return ncclSuccess;
}

/* A context finalized already (NCCL never passes one): one WARN per process, an error,
 * nothing touched.  The logger is the one the context was created with. */
static ncclResult_t dead_context(void *ctx, const char *what)
{
    if (cct_warn_first(CCT_WARN_DEAD_CONTEXT))
        CCT_WARN(cct_ctx_logger(ctx),
                 "%s on a communicator context that was finalized already; "
                 "ignored",
                 what);
    return ncclInvalidArgument;
}

static ncclResult_t finalize_common(void *ctx)
{
    return cct_ctx_destroy(ctx) ? ncclSuccess : dead_context(ctx, "finalize");
}

static ncclResult_t coll_costs(void *ctx, ncclFunc_t coll, size_t bytes, int pipe_ops,
                               float **costs, int num_algo, int num_proto, int reg_buff,
                               int *n_channels)
{
    if (!ctx)
        return ncclSuccess;
    if (!cct_ctx_live(ctx))
        return dead_context(ctx, "getCollInfo");
    if (costs && num_algo > 0 && num_proto > 0)
        cct_ctx_coll_costs(ctx, (int)coll, bytes, pipe_ops, costs, num_algo, num_proto, reg_buff,
                           n_channels);
    return ncclSuccess;
}

static ncclResult_t coll_v2(void *ctx, ncclFunc_t coll, size_t bytes, int collnet_support,
                            int nvls_support, int pipe_ops, int *algo, int *proto, int *n_channels)
{
    if (!ctx)
        return ncclSuccess;
    if (!cct_ctx_live(ctx))
        return dead_context(ctx, "getCollInfo");
    cct_ctx_coll_v2(ctx, (int)coll, bytes, collnet_support, nvls_support, pipe_ops, algo, proto,
                    n_channels);
    return ncclSuccess;
}

/* ---- v6 / v5 ---- */

static ncclResult_t init_v6(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t log, ncclNvlDomainInfo_v6_t *nvl,
                            ncclTunerConstants_v6_t *constants)
{
    (void)nvl;
    /* constants are in/out: NCCL tunes its model with them next */
    return init_common(6, ctx, comm_id, nranks, nnodes, log, (ncclTunerConstants_v5_t *)constants);
}

static ncclResult_t init_v5(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t *nvl,
                            ncclTunerConstants_v5_t *constants)
{
    (void)nvl;
    return init_common(5, ctx, comm_id, nranks, nnodes, log, constants);
}

static ncclResult_t chunk_size_v6(void *ctx, ncclFunc_t coll, size_t bytes, int algo, int proto,
                                  int n_channels, size_t *chunk)
{
    if (!ctx)
        return ncclSuccess;
    if (!cct_ctx_live(ctx))
        return dead_context(ctx, "getChunkSize");
    cct_ctx_chunk_size(ctx, (int)coll, bytes, algo, proto, n_channels, chunk);
    return ncclSuccess;
}

/* ---- v4 / v3 / v2: init(nRanks, nNodes, logger, &ctx), no communicator id ---- */

static ncclResult_t init_v4(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void **ctx)
{
    return init_common(4, ctx, 0, nranks, nnodes, log, NULL);
}

static ncclResult_t init_v3(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void **ctx)
{
    return init_common(3, ctx, 0, nranks, nnodes, log, NULL);
}

static ncclResult_t init_v2(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void **ctx)
{
    return init_common(2, ctx, 0, nranks, nnodes, log, NULL);
}

static ncclResult_t coll_costs_v3(void *ctx, ncclFunc_t coll, size_t bytes, int pipe_ops,
                                  float **costs, int num_algo, int num_proto, int *n_channels)
{
    /* v3 does not say whether buffers are registered: only reg_buff-agnostic sections */
    return coll_costs(ctx, coll, bytes, pipe_ops, costs, num_algo, num_proto, -1, n_channels);
}

/* ---- v1: one process-wide context ---- */

static pthread_mutex_t v1_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(cct_pctx *) v1_ctx; /* written under v1_mu, read lock-free by getCollInfo */
static int v1_refs;                /* communicators initialised and not yet destroyed */

static ncclResult_t init_v1(size_t nranks, size_t nnodes, ncclDebugLogger_t log)
{
    ncclResult_t res = ncclSuccess;
    pthread_mutex_lock(&v1_mu);
    cct_pctx *cur = atomic_load(&v1_ctx);
    if (v1_refs == 0) {
        void *created = NULL;
        res = init_common(1, &created, 0, nranks, nnodes, log, NULL);
        if (res == ncclSuccess) {
            atomic_store(&v1_ctx, created);
            v1_refs = 1;
        }
    } else {
        v1_refs++;
        if (cur && (cct_ctx_nranks(cur) != (int)nranks || cct_ctx_nnodes(cur) != (int)nnodes)) {
            cct_ctx_set_ambiguous(cur);
            if (cct_warn_first(CCT_WARN_V1_SHAPES))
                CCT_WARN(log,
                         "tuner v1 (NCCL 2.19) gives the plugin no communicator context and "
                         "communicators of different shapes exist (nranks=%d nnodes=%d and "
                         "nranks=%zu nnodes=%zu): every call is left to NCCL from now on",
                         cct_ctx_nranks(cur), cct_ctx_nnodes(cur), nranks, nnodes);
        }
    }
    pthread_mutex_unlock(&v1_mu);
    return res;
}

static ncclResult_t coll_v1(ncclFunc_t coll, size_t bytes, int collnet_support, int nvls_support,
                            int pipe_ops, int *algo, int *proto, int *n_channels)
{
    return coll_v2(atomic_load_explicit(&v1_ctx, memory_order_acquire), coll, bytes,
                   collnet_support, nvls_support, pipe_ops, algo, proto, n_channels);
}

static ncclResult_t destroy_v1(void)
{
    pthread_mutex_lock(&v1_mu);
    if (v1_refs > 0 && --v1_refs == 0) {
        cct_pctx *ctx = atomic_exchange(&v1_ctx, NULL);
        cct_ctx_destroy(ctx);
    }
    pthread_mutex_unlock(&v1_mu);
    return ncclSuccess;
}

/* ---- the exported symbols (non-const: no release writes them, but nothing is gained by
 * betting on it) ---- */

CCT_EXPORT ncclTuner_v6_t ncclTunerPlugin_v6 = {PLUGIN_NAME, init_v6, coll_costs, finalize_common,
                                                chunk_size_v6};
CCT_EXPORT ncclTuner_v5_t ncclTunerPlugin_v5 = {PLUGIN_NAME, init_v5, coll_costs, finalize_common};
CCT_EXPORT ncclTuner_v4_t ncclTunerPlugin_v4 = {PLUGIN_NAME, init_v4, coll_costs, finalize_common};
CCT_EXPORT ncclTuner_v3_t ncclTunerPlugin_v3 = {PLUGIN_NAME, init_v3, coll_costs_v3,
                                                finalize_common};
CCT_EXPORT ncclTuner_v2_t ncclTunerPlugin_v2 = {PLUGIN_NAME, init_v2, coll_v2, finalize_common};
CCT_EXPORT ncclTuner_v1_t ncclTunerPlugin_v1 = {PLUGIN_NAME, init_v1, coll_v1, destroy_v1};
