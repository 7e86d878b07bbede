/*
 * cct_worker.c - the worker role of `ccltune search`: one rank of one session.
 *
 * A worker learns its role from CCLTUNE_WORKER_* variables set by its launcher, rebuilds
 * the plan from the shared command line, binds to cores near its GPU, exchanges NCCL's
 * unique id through the socket its launcher gave it (rank 0 sends, others receive), joins
 * the communicator and runs the schedule.  Rank 0 commits every point to the store.  A
 * hang (watchdog) ends the worker with CCT_WORKER_EXIT_HANG after the hang is stored, and
 * the launcher restarts the session.  A probe worker (CCLTUNE_WORKER_PROBE, see
 * cct_model_capture.h) only joins a communicator, so that NCCL logs its model, and exits.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cct_backend_nccl.h"
#include "cct_bind.h"
#include "cct_exit.h"
#include "cct_progress.h"
#include "cct_search.h"
#include "cct_search_run.h"
#include "cct_say.h"

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    return (end && *end == '\0') ? x : fallback;
}

/* Read or write exactly n bytes, waiting at most timeout_ms for each chunk. */
static cct_status exchange(int fd, unsigned char *buf, size_t n, bool writing, int timeout_ms,
                           cct_error *err)
{
    size_t done = 0;
    while (done < n) {
        struct pollfd p = {fd, (short)(writing ? POLLOUT : POLLIN), 0};
        int r = poll(&p, 1, timeout_ms);
        if (r == 0)
            return cct_error_set(err, CCT_ETIMEOUT,
                                 "no NCCL unique id from the launcher within %d s",
                                 timeout_ms / 1000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cct_error_set(err, CCT_EIO, "poll: %s", strerror(errno));
        ssize_t k = writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
        if (k <= 0)
            return cct_error_set(err, CCT_EIO, "launcher channel closed");
        done += (size_t)k;
    }
    return CCT_OK;
}

int cct_search_worker(cct_search_opts *opts, cct_error *out)
{
    cct_error err;
    cct_error_clear(&err);
    int rank = (int)env_long("CCLTUNE_WORKER_RANK", -1);
    int nranks = (int)env_long("CCLTUNE_WORKER_NRANKS", 0);
    int nodes = (int)env_long("CCLTUNE_WORKER_NODES", 0);
    long session = env_long("CCLTUNE_WORKER_SESSION", -1);
    long n_sessions = env_long("CCLTUNE_WORKER_SESSIONS", 1);
    int device = (int)env_long("CCLTUNE_WORKER_DEVICE", 0);
    int slot = (int)env_long("CCLTUNE_WORKER_SLOT", 0);
    int share = (int)env_long("CCLTUNE_WORKER_SHARE", 1);
    int fd = (int)env_long("CCLTUNE_WORKER_FD", -1);
    int64_t run_id = env_long("CCLTUNE_WORKER_RUN", 0);
    const char *plugin = getenv("CCLTUNE_WORKER_PLUGIN");
    if (rank < 0 || nranks < 1 || rank >= nranks || session < 0 || fd < 0 || !plugin)
        return cct_search_fail(out, CCT_EXIT_FAIL,
                               "worker started without a complete CCLTUNE_WORKER_* role");

    /* the launcher's fingerprint verdict: the plan's session layout depends on it */
    opts->space.ll128_default = env_long("CCLTUNE_WORKER_LL128", 0) != 0;
    cct_plan plan;
    if (cct_search_build_plan(opts, nranks, nodes, &plan, &err) != CCT_OK)
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    if ((size_t)session >= plan.n_sessions) {
        cct_plan_destroy(&plan);
        return cct_search_fail(out, CCT_EXIT_FAIL, "worker session %ld is not in the plan",
                               session);
    }
    const cct_session *sess = &plan.sessions[session];

    char where[256] = "";
    if (cct_bind_to_gpu(device, slot, share, where, sizeof where, &err) != CCT_OK)
        cct_say(CCT_SAY_ERR, "ccltune search: rank %d: warning: %s (running unbound)\n", rank,
                err.msg);

    unsigned char id[CCT_NCCL_UNIQUE_ID_BYTES];
    cct_status st;
    if (rank == 0) {
        st = cct_nccl_get_unique_id(id, &err);
        if (st == CCT_OK)
            st = exchange(fd, id, sizeof id, true, 60000, &err);
    } else {
        st = exchange(fd, id, sizeof id, false, 600000, &err);
    }
    if (st == CCT_OK && getenv("CCLTUNE_WORKER_PROBE")) {
        st = cct_nccl_probe_comm(rank, nranks, device, id, opts->timeout_s, &err);
        cct_plan_destroy(&plan);
        close(fd);
        return st == CCT_OK ? CCT_EXIT_OK
                            : cct_search_fail(out, CCT_EXIT_FAIL, "rank %d: NCCL log probe: %s",
                                              rank, err.msg);
    }
    if (st != CCT_OK) {
        cct_plan_destroy(&plan);
        return cct_search_fail(out, CCT_EXIT_FAIL, "rank %d: %s", rank, err.msg);
    }

    uint64_t max_bytes = 0;
    unsigned max_align = 0;
    int max_pipe_ops = 1;
    bool reg_buff = false;
    for (size_t k = 0; k < sess->n_configs; k++) {
        const cct_config *cfg = &plan.configs[sess->first_config + k];
        uint64_t b = cct_plan_effective_bytes(cfg, plan.sizes[plan.n_sizes - 1]);
        if (b > max_bytes)
            max_bytes = b;
        if (cfg->align > max_align)
            max_align = cfg->align;
        if (cct_config_pipe_ops(cfg) > max_pipe_ops)
            max_pipe_ops = cct_config_pipe_ops(cfg);
        reg_buff |= cfg->reg_buff;
    }
    cct_nccl_params params = {rank,       nranks,       device,   id,
                              max_bytes,  max_align,    plugin,   opts->timeout_s,
                              opts->seed, max_pipe_ops, reg_buff, sess->default_no_constants};
    if (sess->no_rules) /* read by the plugin at its first communicator, below */
        setenv("CCLTUNE_RULES", "0", 1);
    cct_backend backend = {0};
    st = cct_nccl_backend_create(&params, &backend, &err);
    cct_store *store = NULL;
    if (st == CCT_OK && rank == 0)
        st = cct_store_open(opts->store_path, false, &store, &err);
    int exit_code = CCT_EXIT_OK;
    if (st != CCT_OK) {
        exit_code = cct_search_fail(out, CCT_EXIT_FAIL, "rank %d: %s", rank, err.msg);
        goto out;
    }
    cct_progress progress;
    cct_progress_init(&progress, (int)session, (int)n_sessions);
    cct_schedule sched;
    memset(&sched, 0, sizeof sched);
    sched.plan = &plan;
    sched.session = (size_t)session;
    sched.backend = &backend;
    sched.store = store;
    sched.run_id = run_id;
    sched.opts = opts->sched;
    if (rank == 0) {
        sched.progress = cct_progress_update;
        sched.progress_arg = &progress;
        if (where[0])
            cct_say(CCT_SAY_ERR, "ccltune search: rank 0 bound to %s\n", where);
    }
    st = cct_schedule_run(&sched, &err);
    if (rank == 0)
        cct_progress_finish(&progress, &sched);
    if (st == CCT_ETIMEOUT) {
        char what[256];
        if (rank == 0)
            cct_say(CCT_SAY_ERR,
                    "ccltune search: HANG: %s at %llu bytes did not finish; recorded as a hang, "
                    "the session restarts past it\n",
                    cct_config_describe(&sched.hang_config, what, sizeof what),
                    (unsigned long long)sched.hang_bytes);
        /* the device may still be wedged: leave without touching it again */
        cct_store_close(store);
        fflush(NULL);
        _exit(CCT_WORKER_EXIT_HANG);
    } else if (st != CCT_OK) {
        exit_code = cct_search_fail(out, CCT_EXIT_FAIL, "rank %d: %s", rank, err.msg);
    }
out:
    cct_store_close(store);
    if (backend.ctx)
        cct_nccl_backend_destroy(&backend);
    cct_plan_destroy(&plan);
    close(fd);
    return exit_code;
}
