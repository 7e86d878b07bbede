/*
 * cct_launch_mpi.c - the mpi role of `ccltune search`: one process per rank under mpirun.
 *
 * Each MPI process launches its own rank's worker for every session, exactly as the local
 * launcher does on one machine; NCCL's unique id travels from rank 0's worker to rank 0,
 * then by MPI_Bcast, then down to every worker.  Workers never call MPI, so each session
 * can start fresh processes (NCCL reads buffer sizes once per process).  Only rank 0 opens
 * the store.  Session outcomes are agreed with MPI_Allreduce so every process restarts or
 * stops together.  Before the first session every process runs its rank of the probe
 * (cct_model_capture.h); rank 0 stores rank 0's printout (the others' files stay on their
 * hosts and are removed).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cct_backend_nccl.h"
#include "cct_bench.h"
#include "cct_exit.h"
#include "cct_config.h"
#include "cct_model_capture.h"
#include "cct_probe.h"
#include "cct_search.h"
#include "cct_search_run.h"
#include "cct_say.h"

#if CCT_HAVE_MPI
#include <mpi.h>

static int wait_child(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
}

static int session_once(cct_search_opts *o, cct_search_run *run, size_t session, int rank, int size,
                        int nodes, int device, const char *plugin, const char *probe_dir)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return CCT_EXIT_FAIL;
    fflush(NULL);
    pid_t pid = cct_spawn_worker(o, run, session, rank, size, nodes, device, plugin, sv, probe_dir);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return CCT_EXIT_FAIL;
    }
    unsigned char id[CCT_NCCL_UNIQUE_ID_BYTES];
    int ok = 1;
    if (rank == 0) {
        size_t got = 0;
        while (got < sizeof id) {
            ssize_t k = read(sv[0], id + got, sizeof id - got);
            if (k <= 0) {
                ok = 0;
                break;
            }
            got += (size_t)k;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int code;
    if (ok) {
        MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank != 0 && write(sv[0], id, sizeof id) != (ssize_t)sizeof id)
            cct_say(CCT_SAY_ERR, "ccltune search: rank %d could not hand the id to its worker\n",
                    rank);
        code = wait_child(pid);
    } else {
        code = wait_child(pid);
        if (code == 0)
            code = CCT_EXIT_FAIL;
    }
    close(sv[0]);
    /* agree: any failure beats a hang, a hang beats success */
    int hang = code == CCT_WORKER_EXIT_HANG || code == CCT_BACKEND_EXIT_STUCK;
    int fail = code != 0 && !hang;
    int any_fail = 0, any_hang = 0;
    MPI_Allreduce(&fail, &any_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&hang, &any_hang, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any_fail ? CCT_EXIT_FAIL : any_hang ? CCT_WORKER_EXIT_HANG : 0;
}

/* The probe of cct_model_capture.h across the MPI processes; rank 0 stores its printout.
 * Never fails the search.  All ranks agree on whether to probe (a resumed run that has the
 * printout is not probed again). */
static void capture_model(cct_search_opts *o, cct_search_run *run, int rank, int size, int nodes,
                          int device, const char *plugin)
{
    cct_error err;
    char *text = NULL;
    int wanted = !o->bench_table;
    if (rank == 0 && wanted && run->store &&
        cct_store_get_nccl_log(run->store, run->run_id, &text, &err) == CCT_OK && text)
        wanted = 0;
    free(text);
    text = NULL;
    MPI_Bcast(&wanted, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!wanted)
        return;
    char dir[PATH_MAX];
    cct_status st = cct_model_capture_mkdir(dir, sizeof dir, &err);
    int ok = st == CCT_OK, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (ok)
            cct_model_capture_remove(dir);
        if (rank == 0)
            cct_say(CCT_SAY_ERR,
                    "ccltune search: warning: NCCL's model printout not captured: %s\n",
                    ok ? "another rank could not create its folder" : err.msg);
        return;
    }
    int code = session_once(o, run, 0, rank, size, nodes, device, plugin, dir);
    if (rank != 0) {
        cct_model_capture_remove(dir);
        return;
    }
    if (code == 0)
        st = cct_model_capture_collect(dir, size, &text, &err);
    else {
        cct_model_capture_remove(dir);
        st = cct_error_set(&err, CCT_ENCCL, "the probe communicator's ranks failed (status %d)",
                           code);
    }
    if (st == CCT_OK)
        st = cct_store_put_nccl_log(run->store, run->run_id, size, nodes, text, &err);
    if (st == CCT_OK)
        cct_say(CCT_SAY_ERR,
                "ccltune search: NCCL's model printout (%zu bytes) stored with run %lld\n",
                strlen(text), (long long)run->run_id);
    else
        cct_say(CCT_SAY_ERR, "ccltune search: warning: NCCL's model printout not captured: %s\n",
                err.msg);
    free(text);
}

int cct_search_mpi(cct_search_opts *o, cct_error *out)
{
    MPI_Init(NULL, NULL);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    int local_rank = 0, local_size = 1;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    int is_leader = local_rank == 0, hosts = 0;
    MPI_Allreduce(&is_leader, &hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&local);
    int nodes = o->ranks_per_gpu > 1 ? size : hosts;

    cct_error err;
    cct_error_clear(&err);
    cct_probe_info *info = calloc(1, sizeof *info);
    int ok = info && cct_probe_collect(info, &err) == CCT_OK;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (!ok)
            cct_search_fail(out, CCT_EXIT_FAIL, "rank %d: %s", rank,
                            info ? err.msg : "out of memory");
        free(info);
        MPI_Finalize();
        return CCT_EXIT_FAIL;
    }
    int device = (local_rank / o->ranks_per_gpu) % info->n_gpus;
    char plugin[PATH_MAX];
    ok = cct_search_find_plugin(o->plugin_path, plugin, sizeof plugin, &err) == CCT_OK;
    cct_search_run run;
    memset(&run, 0, sizeof run);
    long long run_id = 0;
    if (rank == 0 && ok) {
        cct_store_fingerprint fp;
        cct_probe_fingerprint(info, size, nodes, o->ranks_per_gpu, &fp);
        /* under MPI only a matrix given with --links-from goes with the run */
        ok = cct_search_links_load(o, &err) == CCT_OK &&
             cct_search_begin(o, size, nodes, &fp, "search", &run, &err) == CCT_OK;
        cct_search_links_free(o);
        run_id = run.run_id;
    }
    if (!ok)
        cct_search_fail(out, CCT_EXIT_FAIL, "rank %d: %s", rank, err.msg);
    free(info);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Bcast(&run_id, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    int ll128_allowed = run.ll128_allowed;
    MPI_Bcast(&ll128_allowed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok && rank != 0) {
        /* other ranks need the plan and run id to start workers, not the store */
        run.ll128_allowed = ll128_allowed != 0;
        o->space.ll128_default = run.ll128_allowed;
        ok = cct_search_build_plan(o, size, nodes, &run.plan, &err) == CCT_OK;
        run.run_id = run_id;
    }
    int code = ok ? 0 : CCT_EXIT_FAIL;
    if (ok)
        capture_model(o, &run, rank, size, nodes, device, plugin);
    for (size_t s = 0; ok && code == 0 && s < run.plan.n_sessions; s++) {
        if (!cct_search_session_wanted(o, &run.plan, s, ll128_allowed != 0))
            continue;
        for (int restarts = 0;; restarts++) {
            code = session_once(o, &run, s, rank, size, nodes, device, plugin, NULL);
            if (code == CCT_WORKER_EXIT_HANG && restarts < o->max_restarts)
                continue;
            break;
        }
    }
    if (rank == 0 && run.store) {
        if (cct_search_end(&run, code == 0 ? CCT_RUN_DONE : CCT_RUN_FAILED, &err) != CCT_OK)
            cct_say(CCT_SAY_ERR, "ccltune search: warning: %s\n", err.msg);
        if (code == 0 && o->bench_table)
            code = cct_bench_finish(o, run_id);
        else if (code == 0)
            cct_say(CCT_SAY_OUT, "%lld\n", run_id);
        else
            cct_say(CCT_SAY_ERR, "ccltune search: run %lld stopped; resume with --resume %lld\n",
                    run_id, run_id);
    } else {
        cct_plan_destroy(&run.plan);
    }
    MPI_Finalize();
    return code == 0 ? CCT_EXIT_OK : CCT_EXIT_FAIL;
}
#else
int cct_search_mpi(cct_search_opts *o, cct_error *out)
{
    (void)o;
    return cct_search_fail(out, CCT_EXIT_FAIL,
                           "this process runs under mpirun but ccltune was built without "
                           "MPI; rebuild with an MPI installed (meson -Dmpi=enabled)");
}
#endif
