/*
 * cct_backend_nccl.c - measuring real NCCL collectives (see cct_backend_nccl.h).
 *
 * Configuration switches go through the tuner plugin's control interface, loaded with
 * dlopen from the same path NCCL loads it from, so both see one library instance.
 *
 * Watchdog, two layers.  Every wait on the GPU polls an event with a deadline; when it
 * passes, the communicator is aborted (ncclCommAbort makes NCCL's kernels give up) and
 * CCT_ETIMEOUT goes back to the schedule, which stores the hang.  A call that blocks on the
 * host instead (connection set-up to a peer that never answers) is caught by SIGALRM,
 * armed around every backend call, which ends the process with CCT_BACKEND_EXIT_STUCK.
 * The communicator is blocking: NCCL 2.28 runs every collective of a non-blocking
 * communicator through a fresh helper thread, which would add host time between timed
 * calls.
 *
 * Buffer layout: one send and one receive allocation of max_bytes plus 4 KiB, so any
 * alignment offset up to 4 KiB fits, times the session's largest group (op i of a group
 * uses slot i, so every op has its own buffers); a second such pair, registered with
 * ncclCommRegister on first use, serves the registered-buffer configurations; in-place variants use
 * NCCL's in-place conventions (allgather: send = recv + rank * count; reducescatter: recv = send +
 * rank * count). Receive buffers are poisoned (0xff bytes: NaN) before every verified call so that
 * an element NCCL failed to write can never pass as correct.
 */
#include "cct_backend_nccl.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/cct_kernels.h"
#include "../plugin/ccltune_control.h"
#include "cct_chunk.h"
#include "cct_facts.h"
#include "cct_space.h"
#include "cct_say.h"

/* the kernels take the facts table's result codes as plain numbers */
_Static_assert((int)CCT_KOP_ROOT_COPY == (int)CCT_RESULT_ROOT_COPY &&
                   (int)CCT_KOP_SUM == (int)CCT_RESULT_SUM &&
                   (int)CCT_KOP_GATHER == (int)CCT_RESULT_GATHER &&
                   (int)CCT_KOP_SUM_SLICE == (int)CCT_RESULT_SUM_SLICE,
               "verification operation codes differ from cct_result");

typedef struct nccl_ctx {
    cct_nccl_params p;
    ncclComm_t comm;
    bool aborted;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    unsigned char *sendbase, *recvbase;
    size_t buf_bytes;
    void *flush;
    size_t flush_bytes;
    unsigned long long *d_wrong;
    void *d_ctrl;
    size_t ctrl_bytes;
    void *plugin;
    int (*force)(int, int, int);
    void (*last)(ccltune_observation *);
    int (*chunk)(uint64_t);                          /* NULL: a plugin without chunk control */
    void (*chunk_last)(ccltune_chunk_observation *); /* NULL likewise */
    cct_config current;
    bool current_valid;
    /* call modes (grouped ops, registered buffers): see the "call modes" section */
    size_t slot_bytes;                  /* one op's share of each buffer allocation */
    unsigned char *reg_send, *reg_recv; /* NULL unless the session registers buffers */
    void *reg_send_handle, *reg_recv_handle;
    ncclComm_t reg_comm; /* the communicator the buffers were registered with */
    bool reg_tried, reg_ok;
    /* default_without_constants: 'default' runs on comm_nc, initialised with NCCL's own model
     * constants; everything else on comm_main; c->comm is the one selected */
    ncclComm_t comm_main, comm_nc;
    /* NCCL's own choice for the last verified 'default' on comm_nc (see default_on_main) */
    struct {
        bool seen;
        int coll, algo, proto;
        uint64_t bytes;
        long moved, timings; /* how many 'default' timings ran on comm_main, of all */
    } nc_choice;
} nccl_ctx;

static unsigned guard_seconds;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "ccltune search: watchdog: an NCCL call blocked on the host past "
                              "its deadline; this rank exits\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(CCT_BACKEND_EXIT_STUCK);
}

/* Arm (or disarm, 0) the host-side guard for the call that follows. */
static void guard(bool on)
{
    alarm(on ? guard_seconds : 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap(double elapsed)
{
    /* spin briefly for short calls, back off to 1 ms for long ones */
    struct timespec ts = {0, elapsed < 1e-3 ? 2000 : (elapsed < 0.1 ? 50000 : 1000000)};
    nanosleep(&ts, NULL);
}

static cct_status cuda_fail(cct_error *err, cudaError_t e, const char *what)
{
    return cct_error_set(err, CCT_ECUDA, "%s: %s", what, cudaGetErrorString(e));
}

static cct_status abort_comm(nccl_ctx *c, cct_error *err, const char *what)
{
    if (!c->aborted && c->comm) {
        ncclCommAbort(c->comm);
        c->aborted = true;
    }
    return cct_error_set(err, CCT_ETIMEOUT,
                         "watchdog: %s did not finish within %.0f s; "
                         "communicator aborted",
                         what, c->p.timeout_s);
}

/* Non-blocking communicators may answer ncclInProgress: wait for the call to settle. */
static cct_status nccl_settle(nccl_ctx *c, ncclResult_t r, const char *what, cct_error *err)
{
    double t0 = now_s();
    while (r == ncclInProgress) {
        double el = now_s() - t0;
        if (el > c->p.timeout_s)
            return abort_comm(c, err, what);
        nap(el);
        if (ncclCommGetAsyncError(c->comm, &r) != ncclSuccess)
            break;
    }
    if (r != ncclSuccess)
        return cct_error_set(err, CCT_ENCCL, "%s: %s", what, ncclGetErrorString(r));
    return CCT_OK;
}

/* Wait until the stream passes `ev`, with the watchdog. */
static cct_status wait_event(nccl_ctx *c, cudaEvent_t ev, const char *what, cct_error *err)
{
    double t0 = now_s();
    for (;;) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess)
            return CCT_OK;
        if (e != cudaErrorNotReady)
            return cuda_fail(err, e, what);
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(c->comm, &async) == ncclSuccess && async != ncclSuccess &&
            async != ncclInProgress)
            return cct_error_set(err, CCT_ENCCL, "%s: %s", what, ncclGetErrorString(async));
        double el = now_s() - t0;
        if (el > c->p.timeout_s)
            return abort_comm(c, err, what);
        nap(el);
    }
}

static ncclDataType_t nccl_type(int dtype)
{
    return dtype == CCT_DTYPE_BF16 ? ncclBfloat16 : ncclFloat32;
}

typedef struct layout {
    void *send, *recv;
    size_t count; /* NCCL count argument */
    size_t esize;
} layout;

static layout layout_on(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place,
                        unsigned char *sendbase, unsigned char *recvbase)
{
    layout l;
    l.esize = cct_dtype_size(cfg->dtype);
    l.count = cct_plan_nccl_count(cfg, bytes);
    unsigned char *send = sendbase + cfg->align;
    unsigned char *recv = recvbase + cfg->align;
    size_t block = l.count * l.esize;
    if (in_place) {
        /* NCCL's in-place layout: the one-block buffer is this rank's block of the other */
        const cct_coll_facts *f = cct_coll_facts_of(cfg->coll);
        if (f->recv_span == CCT_SPAN_PER_RANK) {
            send = recv + (size_t)c->p.rank * block;
        } else if (f->send_span == CCT_SPAN_PER_RANK) {
            send = recv;
            recv = send + (size_t)c->p.rank * block;
        } else {
            send = recv;
        }
    }
    l.send = send;
    l.recv = recv;
    return l;
}

static layout make_layout(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place)
{
    return layout_on(c, cfg, bytes, in_place, c->sendbase, c->recvbase);
}

static ncclResult_t launch(nccl_ctx *c, int coll, int dtype, const layout *l, int op_sum)
{
    ncclDataType_t t = nccl_type(dtype);
    (void)op_sum;
    switch (coll) {
    case CCT_COLL_BROADCAST:
        return ncclBroadcast(l->send, l->recv, l->count, t, 0, c->comm, c->stream);
    case CCT_COLL_REDUCE:
        return ncclReduce(l->send, l->recv, l->count, t, ncclSum, 0, c->comm, c->stream);
    case CCT_COLL_ALLGATHER:
        return ncclAllGather(l->send, l->recv, l->count, t, c->comm, c->stream);
    case CCT_COLL_REDUCESCATTER:
        return ncclReduceScatter(l->send, l->recv, l->count, t, ncclSum, c->comm, c->stream);
    default:
        return ncclAllReduce(l->send, l->recv, l->count, t, ncclSum, c->comm, c->stream);
    }
}

static cct_status apply_selection(nccl_ctx *c, const cct_config *cfg, cct_error *err)
{
    /* NCCL's default: the plugin steps aside even when a table is loaded (bench);
     * tuned: the plugin applies its table; otherwise the forced configuration */
    if (c->comm_nc)
        c->comm = cfg->algo == CCT_DEFAULT ? c->comm_nc : c->comm_main;
    int rc = cfg->algo == CCT_DEFAULT ? c->force(CCLTUNE_CONTROL_BYPASS, 0, 0)
             : cfg->algo == CCT_TUNED ? c->force(-1, -1, 0)
                                      : c->force(cfg->algo, cfg->proto, cfg->channels);
    if (rc == 0 && (cfg->chunk > 0 || c->chunk)) {
        if (!c->chunk || !c->chunk_last)
            return cct_error_set(err, CCT_EUNSUPPORTED,
                                 "%s cannot force a chunk size (no ccltune_control_chunk): "
                                 "rebuild the plugin with this ccltune",
                                 c->p.plugin_path);
        rc = c->chunk(cfg->algo >= 0 ? cfg->chunk : 0);
    }
    if (rc != 0)
        return cct_error_set(err, CCT_EINVAL, "the plugin refused configuration %s/%s/%d",
                             cct_algo_name(cfg->algo), cct_proto_name(cfg->proto), cfg->channels);
    return CCT_OK;
}

static cct_status be_select(void *ctx, const cct_config *cfg, cct_error *err)
{
    nccl_ctx *c = ctx;
    c->current = *cfg;
    c->current_valid = true;
    return apply_selection(c, cfg, err);
}

/* Fill the inputs of one verified call, poisoning what the collective must overwrite. */
static cct_status fill_inputs(nccl_ctx *c, const cct_config *cfg, const layout *l, bool in_place)
{
    int rank = c->p.rank, n = c->p.nranks;
    size_t count = l->count;
    cudaStream_t s = c->stream;
    int rc = 0;
    const cct_coll_facts *f = cct_coll_facts_of(cfg->coll);
    size_t send_n = f->send_span == CCT_SPAN_PER_RANK ? count * (size_t)n : count;
    size_t recv_n = f->recv_span == CCT_SPAN_PER_RANK ? count * (size_t)n : count;
    size_t first = f->recv_span == CCT_SPAN_PER_RANK ? (size_t)rank * count : 0;
    bool fills = !f->root_source || rank == 0;
    /* poison what the fill does not cover: in place, a one-block receive buffer lies inside
     * this rank's filled send data */
    if (!(in_place && fills && f->recv_span == CCT_SPAN_ONE))
        cudaMemsetAsync(l->recv, 0xff, recv_n * l->esize, s);
    if (fills)
        rc = cct_kernel_fill(l->send, send_n, first, cfg->dtype, rank, n, c->p.seed, s);
    return rc == 0 ? CCT_OK : CCT_ECUDA;
}

static cct_status verify_one(nccl_ctx *c, const cct_config *cfg, const layout *lp, bool in_place,
                             uint64_t *wrong, cct_observed *obs, cct_error *err);
static void observe(nccl_ctx *c, const cct_config *cfg, const ccltune_observation *before,
                    const ccltune_observation *after, cct_observed *obs);
static bool is_mode(const cct_config *cfg);
static cct_status verify_mode(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place,
                              uint64_t *wrong, cct_observed *obs, cct_error *err);
static cct_status time_mode(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place,
                            int iters, double *elapsed_us, cct_error *err);

static void observe_chunk(nccl_ctx *c, const cct_config *cfg, uint64_t bytes,
                          const ccltune_chunk_observation *before, cct_observed *obs);

static cct_status be_verify(void *ctx, const cct_config *cfg, uint64_t bytes, bool in_place,
                            uint64_t *wrong, cct_observed *obs, cct_error *err)
{
    nccl_ctx *c = ctx;
    ccltune_chunk_observation chunk_before;
    memset(&chunk_before, 0, sizeof chunk_before);
    if (c->chunk_last)
        c->chunk_last(&chunk_before);
    cct_status st;
    if (is_mode(cfg)) {
        st = verify_mode(c, cfg, bytes, in_place, wrong, obs, err);
        if (st == CCT_OK)
            observe_chunk(c, cfg, bytes, &chunk_before, obs);
        return st;
    }
    layout l = make_layout(c, cfg, bytes, in_place);
    guard(true);
    st = verify_one(c, cfg, &l, in_place, wrong, obs, err);
    guard(false);
    if (st == CCT_OK)
        observe_chunk(c, cfg, bytes, &chunk_before, obs);
    if (c->comm_nc && cfg->algo == CCT_DEFAULT) {
        c->nc_choice.seen = st == CCT_OK && obs->nccl_algo >= 0 && obs->nccl_proto >= 0;
        c->nc_choice.coll = cfg->coll;
        c->nc_choice.bytes = bytes;
        c->nc_choice.algo = obs->nccl_algo;
        c->nc_choice.proto = obs->nccl_proto;
    }
    return st;
}

/* With a second communicator (the table has NCCL model constants), 'default' is NCCL's own
 * choice on comm_nc, the communicator initialised with NCCL's own constants.  It is verified
 * there (which records the choice), then timed on comm_main with that algorithm and protocol
 * forced at NCCL's channel count: the same kernels NCCL would run, timed on the communicator
 * the table and the forced configurations are timed on, so the communicator is not a factor of
 * the comparison (two communicators over the same ranks read 0-6 % apart with identical
 * choices in the A/A control of docs/benchmarks.md).  Only plain calls: call modes keep
 * 'default' on comm_nc. */
static bool default_on_main(nccl_ctx *c, const cct_config *cfg, uint64_t bytes)
{
    if (!c->comm_nc || cfg->algo != CCT_DEFAULT)
        return false;
    c->nc_choice.timings++;
    if (!c->nc_choice.seen || c->nc_choice.coll != cfg->coll || c->nc_choice.bytes != bytes)
        return false;
    c->comm = c->comm_main;
    if (c->force(c->nc_choice.algo, c->nc_choice.proto, 0) != 0) {
        c->comm = c->comm_nc;
        return false;
    }
    c->nc_choice.moved++;
    return true;
}

/* What the verification kernel checks for this collective (its row in cct_facts.c). */
static cct_verify_spec verify_spec(const cct_config *cfg, size_t count, int rank, int nranks,
                                   uint32_t seed)
{
    const cct_coll_facts *f = cct_coll_facts_of(cfg->coll);
    cct_verify_spec spec = {.op = (int)f->result,
                            .root_only = f->root_result,
                            .dtype = cfg->dtype,
                            .count = count,
                            .rank = rank,
                            .nranks = nranks,
                            .root = 0,
                            .seed = seed};
    return spec;
}

static cct_status verify_one(nccl_ctx *c, const cct_config *cfg, const layout *lp, bool in_place,
                             uint64_t *wrong, cct_observed *obs, cct_error *err)
{
    layout l = *lp;
    if (fill_inputs(c, cfg, &l, in_place) != CCT_OK)
        return cuda_fail(err, cudaGetLastError(), "filling inputs");
    cudaMemsetAsync(c->d_wrong, 0, sizeof *c->d_wrong, c->stream);
    ccltune_observation before, after;
    c->last(&before);
    cct_status st =
        nccl_settle(c, launch(c, cfg->coll, cfg->dtype, &l, 1), "verified collective", err);
    if (st != CCT_OK)
        return st;
    c->last(&after);
    cct_verify_spec spec = verify_spec(cfg, l.count, c->p.rank, c->p.nranks, c->p.seed);
    if (cct_kernel_verify(l.recv, &spec, c->d_wrong, c->stream) != 0)
        return cuda_fail(err, cudaGetLastError(), "verification kernel");
    unsigned long long host_wrong = 0;
    cudaMemcpyAsync(&host_wrong, c->d_wrong, sizeof host_wrong, cudaMemcpyDeviceToHost, c->stream);
    cudaEventRecord(c->stop, c->stream);
    if ((st = wait_event(c, c->stop, "verified collective", err)) != CCT_OK)
        return st;
    *wrong = host_wrong;
    observe(c, cfg, &before, &after, obs);
    return CCT_OK;
}

/* A forced chunk: NCCL asked getChunkSize during the call (before/after: the plugin's chunk
 * records around it) and ran the answer capped to its buffers and rounded to the protocol's
 * grain -- computed here by NCCL's rule (cct_chunk.h), since NCCL's output does not say it
 * for every call.  Without a getChunkSize call (an NCCL before 2.30) the chunk did not apply
 * and the point is recorded unsupported.  Rank 0 logs one line per verified point. */
static void observe_chunk(nccl_ctx *c, const cct_config *cfg, uint64_t bytes,
                          const ccltune_chunk_observation *before, cct_observed *obs)
{
    obs->chunk_used = 0;
    obs->chunk_observed = false;
    if (cfg->chunk == 0 || cfg->algo < 0 || !c->chunk_last)
        return;
    ccltune_chunk_observation after;
    c->chunk_last(&after);
    if (after.calls == before->calls) {
        obs->applied = false;
        if (c->p.rank == 0)
            cct_say(CCT_SAY_ERR,
                    "chunk: %s %s/%s %llu bytes: asked %llu, NCCL never asked the "
                    "tuner (no getChunkSize): not applied\n",
                    cct_coll_name(cfg->coll), cct_algo_name(cfg->algo), cct_proto_name(cfg->proto),
                    (unsigned long long)bytes, (unsigned long long)cfg->chunk);
        return;
    }
    uint64_t buf = 0;
    uint64_t *field = cct_config_buffsize((cct_config *)cfg, cfg->proto);
    if (field)
        buf = *field;
    uint64_t ceiling = cct_chunk_ceiling(cfg->coll, cfg->algo, cfg->proto, buf);
    obs->chunk_used = cct_chunk_used(after.answered, ceiling, cfg->proto);
    if (c->p.rank == 0)
        cct_say(CCT_SAY_ERR,
                "chunk: %s %s/%s ch=%d %llu bytes: asked %llu, NCCL's own %llu (last range "
                "%llu bytes), answered %llu, ran %llu (computed: cap %llu, grain %llu)\n",
                cct_coll_name(cfg->coll), cct_algo_name(cfg->algo), cct_proto_name(cfg->proto),
                cfg->channels, (unsigned long long)bytes, (unsigned long long)cfg->chunk,
                (unsigned long long)after.nccl_chunk, (unsigned long long)after.bytes,
                (unsigned long long)after.answered, (unsigned long long)obs->chunk_used,
                (unsigned long long)ceiling, (unsigned long long)cct_chunk_grain(cfg->proto));
}

/* What the plugin saw of the call(s) between `before` and `after`. */
static void observe(nccl_ctx *c, const cct_config *cfg, const ccltune_observation *before,
                    const ccltune_observation *afterp, cct_observed *obs)
{
    (void)c;
    ccltune_observation after = *afterp;
    bool fresh = after.calls > before->calls;
    obs->tuner_pipe_ops = fresh ? after.pipe_ops : 0;
    obs->tuner_reg_buff = fresh ? after.reg_buff : 0;
    obs->tuner_bytes = fresh ? after.bytes : 0;
    if (cfg->algo == CCT_DEFAULT) {
        obs->applied = true;
        obs->nccl_algo = fresh ? after.default_algo : -1;
        obs->nccl_proto = fresh ? after.default_proto : -1;
    } else if (cfg->algo == CCT_TUNED) {
        /* what ran: the table's choice when the plugin applied it, else NCCL's own */
        bool chosen = fresh && after.chosen_algo >= 0;
        obs->applied = true;
        obs->nccl_algo = !fresh ? -1 : chosen ? after.chosen_algo : after.default_algo;
        obs->nccl_proto = !fresh ? -1 : chosen ? after.chosen_proto : after.default_proto;
    } else {
        obs->applied = fresh && after.forced_applied;
        obs->nccl_algo = obs->applied ? cfg->algo : -1;
        obs->nccl_proto = obs->applied ? cfg->proto : -1;
    }
}

static cct_status time_one(nccl_ctx *c, const cct_config *cfg, const layout *lp, int iters,
                           double *elapsed_us, cct_error *err);

static cct_status be_time(void *ctx, const cct_config *cfg, uint64_t bytes, bool in_place,
                          int iters, double *elapsed_us, cct_error *err)
{
    nccl_ctx *c = ctx;
    if (is_mode(cfg))
        return time_mode(c, cfg, bytes, in_place, iters, elapsed_us, err);
    layout l = make_layout(c, cfg, bytes, in_place);
    bool moved = default_on_main(c, cfg, bytes);
    guard(true);
    cct_status st = time_one(c, cfg, &l, iters, elapsed_us, err);
    guard(false);
    if (moved) { /* back to the selection the schedule made */
        c->comm = c->comm_nc;
        c->force(CCLTUNE_CONTROL_BYPASS, 0, 0);
    }
    return st;
}

static cct_status time_one(nccl_ctx *c, const cct_config *cfg, const layout *lp, int iters,
                           double *elapsed_us, cct_error *err)
{
    layout l = *lp;
    if (c->flush && cct_kernel_flush(c->flush, c->flush_bytes, c->stream) != 0)
        return cuda_fail(err, cudaGetLastError(), "L2 flush");
    cudaEventRecord(c->start, c->stream);
    for (int i = 0; i < iters; i++) {
        cct_status st =
            nccl_settle(c, launch(c, cfg->coll, cfg->dtype, &l, 1), "timed collective", err);
        if (st != CCT_OK)
            return st;
    }
    cudaEventRecord(c->stop, c->stream);
    cct_status st = wait_event(c, c->stop, "timed collectives", err);
    if (st != CCT_OK)
        return st;
    float ms = 0.0f;
    cudaError_t e = cudaEventElapsedTime(&ms, c->start, c->stop);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "event timing");
    *elapsed_us = (double)ms * 1000.0;
    return CCT_OK;
}

/* ---- call modes: k collectives in one group, registered buffers ----
 *
 * A grouped configuration (pipe_ops k > 1) issues k collectives of the same kind and size,
 * op i on buffer slot i, between ncclGroupStart and ncclGroupEnd; NCCL aggregates them and
 * asks its tuner once.  Verification fills each op's input with its own seed (seed + i), so
 * an op that read or wrote another op's buffers cannot pass, and checks every op.  Timing
 * runs `iters` groups and reports the cycle's time / k: the time per collective.
 *
 * Registered configurations use the second buffer pair, registered with ncclCommRegister
 * the first time one is selected and deregistered when the backend is destroyed.  When
 * registration fails, the configurations are reported as not applied (stored unsupported)
 * and the search goes on. */

static bool is_mode(const cct_config *cfg)
{
    return cct_config_pipe_ops(cfg) > 1 || cfg->reg_buff;
}

static cct_status register_buffers(nccl_ctx *c)
{
    if (c->reg_tried)
        return c->reg_ok ? CCT_OK : CCT_EUNSUPPORTED;
    c->reg_tried = true;
    if (!c->reg_send || !c->reg_recv)
        return CCT_EUNSUPPORTED;
    size_t bytes = c->slot_bytes * (size_t)(c->p.max_pipe_ops > 1 ? c->p.max_pipe_ops : 1);
    c->reg_comm = c->comm;
    ncclResult_t r = ncclCommRegister(c->comm, c->reg_send, bytes, &c->reg_send_handle);
    if (r == ncclSuccess)
        r = ncclCommRegister(c->comm, c->reg_recv, bytes, &c->reg_recv_handle);
    if (r != ncclSuccess) {
        cct_say(CCT_SAY_ERR,
                "ccltune search: rank %d: ncclCommRegister failed (%s); registered-buffer "
                "configurations are recorded unsupported\n",
                c->p.rank, ncclGetErrorString(r));
        return CCT_EUNSUPPORTED;
    }
    c->reg_ok = true;
    return CCT_OK;
}

static void deregister_buffers(nccl_ctx *c)
{
    if (c->comm && !c->aborted) {
        if (c->reg_send_handle)
            ncclCommDeregister(c->reg_comm, c->reg_send_handle);
        if (c->reg_recv_handle)
            ncclCommDeregister(c->reg_comm, c->reg_recv_handle);
    }
    c->reg_send_handle = c->reg_recv_handle = NULL;
}

/* Layout of op `op` of cfg's group; false when its buffers are unavailable (registration
 * failed, or the group is larger than the session allocated for). */
static bool mode_layout(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place, int op,
                        layout *l)
{
    if (cct_config_pipe_ops(cfg) > (c->p.max_pipe_ops > 1 ? c->p.max_pipe_ops : 1))
        return false;
    unsigned char *send = c->sendbase, *recv = c->recvbase;
    if (cfg->reg_buff) {
        if (register_buffers(c) != CCT_OK)
            return false;
        send = c->reg_send;
        recv = c->reg_recv;
    }
    size_t off = (size_t)op * c->slot_bytes;
    *l = layout_on(c, cfg, bytes, in_place, send + off, recv + off);
    return true;
}

static cct_status launch_group(nccl_ctx *c, const cct_config *cfg, const layout *ls, int k,
                               const char *what, cct_error *err)
{
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; i < k && r == ncclSuccess; i++)
        r = launch(c, cfg->coll, cfg->dtype, &ls[i], 1);
    ncclResult_t end = ncclGroupEnd();
    return nccl_settle(c, r != ncclSuccess ? r : end, what, err);
}

static cct_status verify_group_ops(nccl_ctx *c, const cct_config *cfg, layout *ls, int k,
                                   bool in_place, uint64_t *wrong, cct_observed *obs,
                                   cct_error *err)
{
    uint32_t seed = c->p.seed;
    for (int i = 0; i < k; i++) {
        c->p.seed = seed + (uint32_t)i;
        cct_status fs = fill_inputs(c, cfg, &ls[i], in_place);
        c->p.seed = seed;
        if (fs != CCT_OK)
            return cuda_fail(err, cudaGetLastError(), "filling inputs");
    }
    cudaMemsetAsync(c->d_wrong, 0, sizeof *c->d_wrong, c->stream);
    ccltune_observation before, after;
    c->last(&before);
    cct_status st = launch_group(c, cfg, ls, k, "verified group", err);
    if (st != CCT_OK)
        return st;
    c->last(&after);
    for (int i = 0; i < k; i++) {
        cct_verify_spec spec =
            verify_spec(cfg, ls[i].count, c->p.rank, c->p.nranks, seed + (uint32_t)i);
        if (cct_kernel_verify(ls[i].recv, &spec, c->d_wrong, c->stream) != 0)
            return cuda_fail(err, cudaGetLastError(), "verification kernel");
    }
    unsigned long long host_wrong = 0;
    cudaMemcpyAsync(&host_wrong, c->d_wrong, sizeof host_wrong, cudaMemcpyDeviceToHost, c->stream);
    cudaEventRecord(c->stop, c->stream);
    if ((st = wait_event(c, c->stop, "verified group", err)) != CCT_OK)
        return st;
    *wrong = host_wrong;
    observe(c, cfg, &before, &after, obs);
    return CCT_OK;
}

static cct_status verify_mode(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place,
                              uint64_t *wrong, cct_observed *obs, cct_error *err)
{
    int k = cct_config_pipe_ops(cfg);
    layout ls[CCT_PIPE_OPS_MAX];
    *wrong = 0;
    guard(true);
    for (int i = 0; i < k; i++)
        if (!mode_layout(c, cfg, bytes, in_place, i, &ls[i])) {
            guard(false);
            obs->applied = false; /* recorded unsupported; nothing is timed */
            return CCT_OK;
        }
    cct_status st = verify_group_ops(c, cfg, ls, k, in_place, wrong, obs, err);
    guard(false);
    return st;
}

static cct_status time_mode(nccl_ctx *c, const cct_config *cfg, uint64_t bytes, bool in_place,
                            int iters, double *elapsed_us, cct_error *err)
{
    int k = cct_config_pipe_ops(cfg);
    layout ls[CCT_PIPE_OPS_MAX];
    for (int i = 0; i < k; i++)
        if (!mode_layout(c, cfg, bytes, in_place, i, &ls[i]))
            return cct_error_set(err, CCT_EUNSUPPORTED, "buffers of this call mode unavailable");
    guard(true);
    cct_status st = CCT_OK;
    if (c->flush && cct_kernel_flush(c->flush, c->flush_bytes, c->stream) != 0)
        st = cuda_fail(err, cudaGetLastError(), "L2 flush");
    if (st == CCT_OK)
        cudaEventRecord(c->start, c->stream);
    for (int i = 0; i < iters && st == CCT_OK; i++)
        st = launch_group(c, cfg, ls, k, "timed group", err);
    if (st == CCT_OK) {
        cudaEventRecord(c->stop, c->stream);
        st = wait_event(c, c->stop, "timed groups", err);
    }
    guard(false);
    if (st != CCT_OK)
        return st;
    float ms = 0.0f;
    cudaError_t e = cudaEventElapsedTime(&ms, c->start, c->stop);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "event timing");
    *elapsed_us = (double)ms * 1000.0 / k; /* per collective */
    return CCT_OK;
}

/* Allocations for the call modes (called from create, after the plain buffers). */
static cct_status alloc_mode_buffers(nccl_ctx *c, cct_error *err)
{
    if (!c->p.reg_buff)
        return CCT_OK;
    size_t bytes = c->slot_bytes * (size_t)(c->p.max_pipe_ops > 1 ? c->p.max_pipe_ops : 1);
    cudaError_t e;
    if ((e = cudaMalloc((void **)&c->reg_send, bytes)) != cudaSuccess ||
        (e = cudaMalloc((void **)&c->reg_recv, bytes)) != cudaSuccess)
        return cuda_fail(err, e, "allocating the registered buffers");
    return CCT_OK;
}

/* Control collectives run with forcing off, then the selection under test comes back. */
static cct_status control_op(nccl_ctx *c, void *host, size_t bytes, ncclDataType_t t, size_t count,
                             int kind, cct_error *err)
{
    if (bytes > c->ctrl_bytes)
        return cct_error_set(err, CCT_EINVAL, "control message of %zu bytes is too large", bytes);
    c->force(-1, -1, 0);
    if (c->comm_nc)
        c->comm = c->comm_main; /* every rank on the same communicator */
    guard(true);
    cudaMemcpyAsync(c->d_ctrl, host, bytes, cudaMemcpyHostToDevice, c->stream);
    ncclResult_t r;
    if (kind == 0)
        r = ncclAllReduce(c->d_ctrl, c->d_ctrl, count, t, ncclMax, c->comm, c->stream);
    else if (kind == 1)
        r = ncclAllReduce(c->d_ctrl, c->d_ctrl, count, t, ncclSum, c->comm, c->stream);
    else
        r = ncclBroadcast(c->d_ctrl, c->d_ctrl, count, t, 0, c->comm, c->stream);
    cct_status st = nccl_settle(c, r, "control collective", err);
    if (st == CCT_OK) {
        cudaMemcpyAsync(host, c->d_ctrl, bytes, cudaMemcpyDeviceToHost, c->stream);
        cudaEventRecord(c->stop, c->stream);
        st = wait_event(c, c->stop, "control collective", err);
    }
    guard(false);
    if (c->current_valid && st == CCT_OK)
        st = apply_selection(c, &c->current, err);
    return st;
}

static cct_status be_reduce_max(void *ctx, double *v, size_t n, cct_error *err)
{
    return control_op(ctx, v, n * sizeof *v, ncclFloat64, n, 0, err);
}

static cct_status be_reduce_sum(void *ctx, uint64_t *v, size_t n, cct_error *err)
{
    return control_op(ctx, v, n * sizeof *v, ncclUint64, n, 1, err);
}

static cct_status be_broadcast(void *ctx, void *data, size_t bytes, cct_error *err)
{
    return control_op(ctx, data, bytes, ncclUint8, bytes, 2, err);
}

static const cct_backend_ops nccl_ops = {be_select,     be_verify,     be_time,
                                         be_reduce_max, be_reduce_sum, be_broadcast};

cct_status cct_nccl_get_unique_id(unsigned char id[CCT_NCCL_UNIQUE_ID_BYTES], cct_error *err)
{
    ncclUniqueId uid;
    _Static_assert(sizeof uid == CCT_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId size changed");
    ncclResult_t r = ncclGetUniqueId(&uid);
    if (r != ncclSuccess)
        return cct_error_set(err, CCT_ENCCL, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    memcpy(id, &uid, sizeof uid);
    return CCT_OK;
}

cct_status cct_nccl_version(char *buf, size_t len, cct_error *err)
{
    int v = 0;
    ncclResult_t r = ncclGetVersion(&v);
    if (r != ncclSuccess)
        return cct_error_set(err, CCT_ENCCL, "ncclGetVersion: %s", ncclGetErrorString(r));
    /* codes are major*10000 + minor*100 + patch since 2.9 */
    snprintf(buf, len, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    return CCT_OK;
}

static cct_status load_plugin(nccl_ctx *c, cct_error *err)
{
    c->plugin = dlopen(c->p.plugin_path, RTLD_NOW | RTLD_LOCAL);
    if (!c->plugin)
        return cct_error_set(err, CCT_EIO, "cannot load the ccltune plugin %s: %s",
                             c->p.plugin_path, dlerror());
    int (*abi)(void) = (int (*)(void))dlsym(c->plugin, "ccltune_control_abi");
    c->force = (int (*)(int, int, int))dlsym(c->plugin, "ccltune_control_force");
    c->last = (void (*)(ccltune_observation *))dlsym(c->plugin, "ccltune_control_last");
    c->chunk = (int (*)(uint64_t))dlsym(c->plugin, "ccltune_control_chunk");
    c->chunk_last =
        (void (*)(ccltune_chunk_observation *))dlsym(c->plugin, "ccltune_control_chunk_last");
    if (!abi || !c->force || !c->last)
        return cct_error_set(err, CCT_EUNSUPPORTED, "%s lacks the ccltune control interface",
                             c->p.plugin_path);
    if (abi() != CCLTUNE_CONTROL_ABI)
        return cct_error_set(err, CCT_EUNSUPPORTED,
                             "%s speaks control ABI %d, this ccltune needs %d (rebuild both)",
                             c->p.plugin_path, abi(), CCLTUNE_CONTROL_ABI);
    return CCT_OK;
}

/* A second communicator over the same ranks whose init runs with the plugin's constants
 * suppressed (ccltune_control_constants(0)), so 'default' is NCCL's default with NCCL's own
 * model while the table's configurations run with the table's constants. */
static cct_status create_default_comm(nccl_ctx *c, ncclConfig_t *config, cct_error *err)
{
    int (*constants)(int) = (int (*)(int))dlsym(c->plugin, "ccltune_control_constants");
    if (!constants)
        return cct_error_set(err, CCT_EUNSUPPORTED,
                             "%s lacks ccltune_control_constants (rebuild the plugin)",
                             c->p.plugin_path);
    c->comm_main = c->comm;
    constants(0);
    ncclResult_t r = ncclCommSplit(c->comm_main, 0, c->p.rank, &c->comm_nc, config);
    constants(1);
    cct_status st = nccl_settle(c, r, "ncclCommSplit (NCCL's own constants)", err);
    if (st != CCT_OK)
        c->comm_nc = NULL;
    return st;
}

cct_status cct_nccl_backend_create(const cct_nccl_params *params, cct_backend *backend,
                                   cct_error *err)
{
    nccl_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    c->p = *params;
    backend->ops = &nccl_ops;
    backend->ctx = c;
    backend->rank = params->rank;
    backend->nranks = params->nranks;
    cct_status st = load_plugin(c, err);
    if (st != CCT_OK)
        return st;
    cudaError_t e = cudaSetDevice(params->device);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "cudaSetDevice");
    if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaEventCreate(&c->start)) != cudaSuccess ||
        (e = cudaEventCreate(&c->stop)) != cudaSuccess)
        return cuda_fail(err, e, "creating stream and events");
    /* one slot per op of the largest group, each 4 KiB aligned */
    c->slot_bytes = ((size_t)params->max_bytes + 4096 + params->max_align + 4095) & ~(size_t)4095;
    c->buf_bytes = params->max_pipe_ops > 1 ? c->slot_bytes * (size_t)params->max_pipe_ops
                                            : (size_t)params->max_bytes + 4096 + params->max_align;
    if ((e = cudaMalloc((void **)&c->sendbase, c->buf_bytes)) != cudaSuccess ||
        (e = cudaMalloc((void **)&c->recvbase, c->buf_bytes)) != cudaSuccess)
        return cuda_fail(err, e, "allocating 2 x buffers for the largest message");
    if ((st = alloc_mode_buffers(c, err)) != CCT_OK)
        return st;
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, params->device);
    c->flush_bytes = l2 > 0 ? 2 * (size_t)l2 : 0;
    if (c->flush_bytes && (e = cudaMalloc(&c->flush, c->flush_bytes)) != cudaSuccess)
        return cuda_fail(err, e, "allocating the L2 flush buffer");
    c->ctrl_bytes = 1 << 20;
    if ((e = cudaMalloc((void **)&c->d_wrong, sizeof *c->d_wrong)) != cudaSuccess ||
        (e = cudaMalloc(&c->d_ctrl, c->ctrl_bytes)) != cudaSuccess)
        return cuda_fail(err, e, "allocating control buffers");
    ncclUniqueId uid;
    memcpy(&uid, params->unique_id, sizeof uid);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    guard_seconds = (unsigned)(params->timeout_s * 2.0) + 1;
    signal(SIGALRM, on_alarm);
    /* communicator set-up waits for every rank: allow it a few watchdog periods */
    alarm(guard_seconds * 3);
    ncclResult_t r = ncclCommInitRankConfig(&c->comm, params->nranks, uid, params->rank, &config);
    st = nccl_settle(c, r, "ncclCommInitRankConfig", err);
    if (st == CCT_OK && params->default_without_constants)
        st = create_default_comm(c, &config, err);
    guard(false);
    return st;
}

cct_status cct_nccl_probe_comm(int rank, int nranks, int device,
                               const unsigned char unique_id[CCT_NCCL_UNIQUE_ID_BYTES],
                               double timeout_s, cct_error *err)
{
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "cudaSetDevice");
    ncclUniqueId uid;
    memcpy(&uid, unique_id, sizeof uid);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    guard_seconds = (unsigned)(timeout_s * 2.0) + 1;
    signal(SIGALRM, on_alarm);
    alarm(guard_seconds * 3);
    ncclComm_t comm = NULL;
    ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, uid, rank, &config);
    if (r == ncclSuccess) {
        r = ncclCommFinalize(comm);
        if (r == ncclSuccess)
            r = ncclCommDestroy(comm);
        else
            ncclCommAbort(comm);
    }
    guard(false);
    if (r != ncclSuccess)
        return cct_error_set(err, CCT_ENCCL, "the probe communicator: %s", ncclGetErrorString(r));
    return CCT_OK;
}

void cct_nccl_backend_destroy(cct_backend *backend)
{
    nccl_ctx *c = backend->ctx;
    if (!c)
        return;
    deregister_buffers(c);
    if (c->comm_nc && c->p.rank == 0)
        cct_say(CCT_SAY_ERR,
                "ccltune bench: NCCL's default timed on the main communicator (its choice from "
                "the second one forced) in %ld of %ld timings\n",
                c->nc_choice.moved, c->nc_choice.timings);
    if (c->comm_nc) {
        /* the communicator not selected now goes first (the same one on every rank: ranks
         * select in lockstep); after a hang the selected one is already aborted */
        ncclComm_t active = c->comm;
        bool active_aborted = c->aborted;
        c->comm = active == c->comm_nc ? c->comm_main : c->comm_nc;
        if (c->aborted) {
            ncclCommAbort(c->comm);
        } else {
            cct_error ignored;
            if (nccl_settle(c, ncclCommFinalize(c->comm), "ncclCommFinalize", &ignored) == CCT_OK)
                ncclCommDestroy(c->comm);
            else if (!c->aborted)
                ncclCommAbort(c->comm);
        }
        c->comm = active;
        c->aborted = active_aborted; /* a hang of the other one leaves this one to finalise */
    }
    if (c->comm) {
        if (c->aborted) {
            /* ncclCommAbort already released it */
        } else {
            ncclResult_t r = ncclCommFinalize(c->comm);
            cct_error ignored;
            if (nccl_settle(c, r, "ncclCommFinalize", &ignored) == CCT_OK)
                ncclCommDestroy(c->comm);
            else if (!c->aborted)
                ncclCommAbort(c->comm);
        }
    }
    if (c->force)
        c->force(-1, -1, 0);
    cudaFree(c->sendbase);
    cudaFree(c->recvbase);
    cudaFree(c->reg_send);
    cudaFree(c->reg_recv);
    cudaFree(c->flush);
    cudaFree(c->d_wrong);
    cudaFree(c->d_ctrl);
    if (c->start)
        cudaEventDestroy(c->start);
    if (c->stop)
        cudaEventDestroy(c->stop);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    /* the plugin stays loaded: NCCL may still reference it until process exit */
    free(c);
    backend->ctx = NULL;
}
