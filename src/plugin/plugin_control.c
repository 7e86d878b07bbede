/*
 * plugin_control.c - measurement mode: the plugin as ccltune's measuring instrument.
 *
 * The search runner loads this library by path (the same handle NCCL gets), then switches
 * algorithm/protocol/channels per call through ccltune_control_force() instead of creating
 * a communicator per configuration.  External tools get the same through
 * CCLTUNE_FORCE=algo/proto[/channels[/chunk]]; CCLTUNE_MEASURE=1 only records.  In measurement
 * mode every call also records NCCL's own choice (the cheapest entry before the plugin
 * touches the table) and which entries were ignored, for ccltune_control_last().
 *
 * Ordinary jobs never enter this file: getCollInfo tests one relaxed atomic flag and
 * stays lock-free.  Once measurement mode is on, calls and control functions serialise on
 * one mutex, which keeps "the last observation" coherent; measurement runs are not
 * latency-critical on the CPU side.  Forcing never touches an ignored entry and never
 * forces LL128 where NCCL's rule refuses this GPU and NCCL release, or where a loaded
 * table's ll128 verdict says no (cct_ctx_ll128_forceable).  With a cost table (v3+) it does
 * force LL128 where only the link paths would make NCCL refuse and NCCL offers the entry
 * (the search unlocks it with NCCL_PROTO=LL,LL128,Simple): measuring whether LL128 corrupts
 * data there is the point, and the search verifies every result.  Without a cost table
 * (v1/v2) nothing protects the call, so the table mode's verdict applies.
 */
#include <pthread.h>
#include <string.h>

#include "ccltune_control.h"
#include "cct_chunk.h"
#include "plugin_internal.h"

atomic_int cct_measure_on;

static pthread_mutex_t control_mu = PTHREAD_MUTEX_INITIALIZER;
static bool forcing;    /* guarded by control_mu; mirrored in forcing_flag */
static cct_force force; /* guarded by control_mu */
static atomic_bool forcing_flag;
static atomic_bool bypass_flag;          /* leave every call to NCCL (the bench's "NCCL default") */
static atomic_bool constants_suppressed; /* ccltune_control_constants(0) */
static uint64_t force_chunk;             /* guarded by control_mu; 0: NCCL's own chunk */
static ccltune_chunk_observation last_chunk; /* guarded by control_mu */
static ccltune_observation last = {
    .coll = -1, .default_algo = -1, .default_proto = -1, .chosen_algo = -1, .chosen_proto = -1};

static void observation_reset(ccltune_observation *o)
{
    memset(o, 0, sizeof *o);
    o->coll = -1;
    o->default_algo = o->default_proto = -1;
    o->chosen_algo = o->chosen_proto = -1;
}

void cct_control_from_env(const cct_pstate *ps)
{
    if (cct_env_flag("CCLTUNE_MEASURE"))
        atomic_store(&cct_measure_on, 1);
    if (!ps->force_set)
        return;
    pthread_mutex_lock(&control_mu);
    if (!forcing) { /* a runner that forced before the first communicator wins */
        force = ps->force;
        force_chunk = ps->force.chunk;
        forcing = true;
        atomic_store(&forcing_flag, true);
    }
    pthread_mutex_unlock(&control_mu);
    atomic_store(&cct_measure_on, 1);
}

bool cct_control_forcing(void)
{
    return atomic_load_explicit(&forcing_flag, memory_order_relaxed);
}

bool cct_control_constants_on(void)
{
    return !atomic_load(&constants_suppressed);
}

bool cct_control_bypassing(void)
{
    return atomic_load_explicit(&bypass_flag, memory_order_relaxed);
}

static void record_choice(int algo, int proto, int channels, int forced_applied)
{
    last.chosen_algo = algo;
    last.chosen_proto = proto;
    last.channels = channels;
    last.forced_applied = forced_applied;
}

bool cct_control_chunk(int coll, size_t bytes, int algo, int proto, size_t *chunk)
{
    pthread_mutex_lock(&control_mu);
    last_chunk.calls++;
    last_chunk.coll = coll;
    last_chunk.bytes = bytes;
    last_chunk.algo = algo;
    last_chunk.proto = proto;
    last_chunk.nccl_chunk = *chunk;
    bool decided = forcing || atomic_load_explicit(&bypass_flag, memory_order_relaxed);
    /* only the forced configuration gets the forced chunk: where NCCL ignored the forced
     * entry and chose another, its own chunk stays (the point is recorded unsupported) */
    if (forcing && force_chunk > 0 && algo == force.algo && proto == force.proto)
        *chunk = (size_t)cct_chunk_answer(force_chunk, proto);
    last_chunk.answered = *chunk;
    pthread_mutex_unlock(&control_mu);
    return decided;
}

cct_outcome cct_control_coll_costs(cct_pctx *ctx, int coll, size_t bytes, int pipe_ops,
                                   float *costs, int num_algo, int num_proto, int reg_buff,
                                   int *n_channels)
{
    cct_outcome out;
    pthread_mutex_lock(&control_mu);
    last.calls++;
    last.coll = coll;
    last.bytes = bytes;
    last.pipe_ops = pipe_ops;
    last.reg_buff = reg_buff;
    cct_select_default(costs, num_algo, num_proto, &last.default_algo, &last.default_proto);
    cct_select_ignored_mask(costs, num_algo, num_proto, last.ignored_mask, 7);
    if (atomic_load_explicit(&bypass_flag, memory_order_relaxed)) {
        out = CCT_OUT_BYPASSED;
        record_choice(-1, -1, 0, 0);
    } else if (forcing) {
        out = cct_select_apply(costs, num_algo, num_proto, force.algo, force.proto,
                               cct_ctx_ll128_forceable(ctx, coll, force.algo));
        if (out == CCT_OUT_OVERRIDDEN) {
            if (force.channels > 0 && n_channels)
                *n_channels = force.channels;
            record_choice(force.algo, force.proto, n_channels ? force.channels : 0, 1);
        } else {
            record_choice(-1, -1, 0, 0);
        }
    } else if (ctx) {
        cct_decision d = cct_ctx_decide_costs(ctx, coll, bytes, pipe_ops, reg_buff, costs, num_algo,
                                              num_proto, n_channels);
        out = d.outcome;
        record_choice(d.algo, d.proto, d.channels, 0);
    } else {
        out = CCT_OUT_TABLE_ERROR;
        record_choice(-1, -1, 0, 0);
    }
    pthread_mutex_unlock(&control_mu);
    if (ctx)
        cct_ctx_count(ctx, out);
    return out;
}

cct_outcome cct_control_coll_v2(cct_pctx *ctx, int coll, size_t bytes, int collnet_support,
                                int nvls_support, int pipe_ops, int *algo, int *proto,
                                int *n_channels)
{
    cct_outcome out;
    pthread_mutex_lock(&control_mu);
    last.calls++;
    last.coll = coll;
    last.bytes = bytes;
    last.pipe_ops = pipe_ops;
    last.reg_buff = -1;                          /* v2 does not say */
    last.default_algo = last.default_proto = -1; /* no cost table: NCCL's choice is unseen */
    memset(last.ignored_mask, 0, sizeof last.ignored_mask);
    if (atomic_load_explicit(&bypass_flag, memory_order_relaxed)) {
        out = CCT_OUT_BYPASSED;
        record_choice(-1, -1, 0, 0);
    } else if (forcing && ctx) {
        cct_v2_call call = {cct_ctx_nccl_version(ctx), cct_ctx_nnodes(ctx), coll,
                            collnet_support,           nvls_support,        cct_ctx_env(ctx)};
        out = cct_select_check_v2(&call, force.algo, force.proto,
                                  cct_ctx_ll128_forceable(ctx, coll, force.algo));
        if (out == CCT_OUT_OVERRIDDEN && algo && proto) {
            *algo = force.algo;
            *proto = force.proto;
            if (force.channels > 0 && n_channels)
                *n_channels = force.channels;
            record_choice(force.algo, force.proto, n_channels ? force.channels : 0, 1);
        } else {
            if (out == CCT_OUT_OVERRIDDEN)
                out = CCT_OUT_IGNORED;
            record_choice(-1, -1, 0, 0);
        }
    } else if (ctx) {
        cct_decision d = cct_ctx_decide_v2(ctx, coll, bytes, collnet_support, nvls_support,
                                           pipe_ops, algo, proto, n_channels);
        out = d.outcome;
        record_choice(d.algo, d.proto, d.channels, 0);
    } else {
        out = CCT_OUT_TABLE_ERROR;
        record_choice(-1, -1, 0, 0);
    }
    pthread_mutex_unlock(&control_mu);
    if (ctx)
        cct_ctx_count(ctx, out);
    return out;
}

/* ---------- the exported control API (ccltune_control.h) ---------- */

/* Copy one of the "last observation" records to the caller under the lock, so that it never
 * sees half of one call's and half of the next's; out NULL: nothing. */
static void copy_observed(void *out, const void *observed, size_t size)
{
    if (!out)
        return;
    pthread_mutex_lock(&control_mu);
    memcpy(out, observed, size);
    pthread_mutex_unlock(&control_mu);
}

CCT_EXPORT int ccltune_control_abi(void)
{
    return CCLTUNE_CONTROL_ABI;
}

CCT_EXPORT int ccltune_control_force(int algo, int proto, int channels)
{
    if (algo < CCLTUNE_CONTROL_BYPASS || algo >= CCT_NUM_ALGOS ||
        (algo >= 0 && (proto < 0 || proto >= CCT_NUM_PROTOS)) || channels < 0 ||
        channels > CCT_TABLE_MAX_CHANNELS)
        return -1;
    pthread_mutex_lock(&control_mu);
    atomic_store(&bypass_flag, algo == CCLTUNE_CONTROL_BYPASS);
    forcing = algo >= 0;
    if (forcing) {
        force.algo = algo;
        force.proto = proto;
        force.channels = channels;
    }
    atomic_store(&forcing_flag, forcing);
    pthread_mutex_unlock(&control_mu);
    atomic_store(&cct_measure_on, 1);
    return 0;
}

CCT_EXPORT int ccltune_control_chunk(uint64_t bytes)
{
    if (bytes > CCLTUNE_CONTROL_CHUNK_MAX)
        return -1;
    pthread_mutex_lock(&control_mu);
    force_chunk = bytes;
    pthread_mutex_unlock(&control_mu);
    atomic_store(&cct_measure_on, 1);
    return 0;
}

CCT_EXPORT void ccltune_control_chunk_last(ccltune_chunk_observation *out)
{
    copy_observed(out, &last_chunk, sizeof last_chunk);
}

CCT_EXPORT int ccltune_control_constants(int on)
{
    if (on != 0 && on != 1)
        return -1;
    atomic_store(&constants_suppressed, on == 0);
    return 0;
}

CCT_EXPORT void ccltune_control_last(ccltune_observation *out)
{
    copy_observed(out, &last, sizeof last);
}

CCT_EXPORT void ccltune_control_reset(void)
{
    pthread_mutex_lock(&control_mu);
    observation_reset(&last);
    memset(&last_chunk, 0, sizeof last_chunk);
    pthread_mutex_unlock(&control_mu);
}
