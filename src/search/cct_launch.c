/*
 * cct_launch.c - the launcher role of `ccltune search` on one machine (see cct_search.h).
 *
 * For every session the launcher forks one worker per rank and execs this same binary
 * with the same arguments; the worker's role and the session's NCCL environment are set
 * between fork and exec.  Each worker gets one end of a socketpair: rank 0 writes NCCL's
 * unique id into it, the launcher copies the id to every other rank.  If any worker exits
 * with an error the others are stopped at once (before their watchdogs could misreport a
 * hang); if a worker reports a hang the session starts again, going past the stored hang.
 * Before the first session of a search, one more set of workers -- the probe -- only sets up
 * a communicator with NCCL's model printout logged to files, which the launcher stores with
 * the run (cct_model_capture.h: logging stays out of the measuring processes).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cct_backend_nccl.h"
#include "cct_bench.h"
#include "cct_exit.h"
#include "cct_facts.h"
#include "cct_model_capture.h"
#include "cct_probe.h"
#include "cct_search.h"
#include "cct_search_run.h"
#include "cct_say.h"

/* The user-facing command name for messages: a bench runs through the same launcher. */
#define CMD(o) ((o)->bench_table ? "bench" : "search")

bool cct_search_under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

static bool mps_running(char *dir, size_t len)
{
    const char *d = getenv("CUDA_MPS_PIPE_DIRECTORY");
    snprintf(dir, len, "%s", d && *d ? d : "/tmp/nvidia-mps");
    char control[PATH_MAX + 16];
    if (strlen(dir) + sizeof "/control" > sizeof control)
        return false;
    memcpy(control, dir, strlen(dir));
    memcpy(control + strlen(dir), "/control", sizeof "/control");
    struct stat st;
    return stat(control, &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode));
}

static void set_session_env(const cct_search_opts *o, const cct_session *s, const char *plugin,
                            int rank)
{
    static const char *const cleared[] = {"NCCL_ALGO",
                                          "NCCL_PROTO",
                                          "CCLTUNE_TABLE",
                                          "CCLTUNE_FORCE",
                                          "NCCL_TUNER_CONFIG_FILE",
                                          "CCLTUNE_RULES",
                                          "CCLTUNE_CONSTANTS"};
    for (size_t i = 0; i < sizeof cleared / sizeof cleared[0]; i++)
        unsetenv(cleared[i]);
    for (int p = 0; p < CCT_NUM_PROTOS; p++)
        unsetenv(cct_proto_facts_of(p)->buffsize_env);
    setenv("NCCL_TUNER_PLUGIN", plugin, 1);
    setenv("CCLTUNE_MEASURE", "1", 1);
    /* an explicit protocol list enables LL128 outright (NCCL's default is "auto"), so the
     * plugin can force it where NCCL would not pick it; verification catches corruption */
    if (s->unlock)
        setenv("NCCL_PROTO", "LL,LL128,Simple", 1);
    if (s->bench && o->bench_table) {
        /* the table under test, applied by the plugin exactly as in a training job, with
         * the environment it recommends (buffer sizes are process-wide) */
        setenv("CCLTUNE_TABLE", o->bench_table, 1);
        cct_table t;
        if (cct_table_load_file(o->bench_table, &t, NULL) == CCT_OK) {
            for (size_t i = 0; i < t.n_env; i++)
                setenv(t.env[i].key, t.env[i].value, 1);
            cct_table_destroy(&t);
        }
    }
    char v[64];
    for (int i = 0; i < CCT_NUM_PROTOS; i++) {
        int p = cct_buffsize_protos[i];
        uint64_t bytes = cct_session_buffsize(s, p);
        if (bytes) {
            snprintf(v, sizeof v, "%llu", (unsigned long long)bytes);
            setenv(cct_proto_facts_of(p)->buffsize_env, v, 1);
        }
    }
    if (o->ranks_per_gpu > 1) {
        /* distinct host ids make NCCL treat each rank process as its own node */
        snprintf(v, sizeof v, "ccltune-%ld-%d", (long)getppid(), rank);
        setenv("NCCL_HOSTID", v, 1);
    }
}

static void setenv_long(const char *name, long value)
{
    char v[32];
    snprintf(v, sizeof v, "%ld", value);
    setenv(name, v, 1);
}

pid_t cct_spawn_worker(const cct_search_opts *o, const cct_search_run *run, size_t session,
                       int rank, int ranks, int nodes, int device, const char *plugin, int sv[2],
                       const char *probe_dir)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    close(sv[0]);
    int child_fd = dup(sv[1]); /* dup drops CLOEXEC: this end survives exec */
    if (probe_dir) {
        /* NCCL's defaults: no forced protocols or buffer sizes, no table, no constants */
        static const cct_session neutral;
        set_session_env(o, &neutral, plugin, rank);
        setenv("CCLTUNE_CONSTANTS", "0", 1);
        cct_model_capture_setenv(probe_dir, rank);
        setenv("CCLTUNE_WORKER_PROBE", "1", 1);
        /* NCCL falls back to stdout when it cannot open its file; stdout carries the run id
         * to `ccltune tune` */
        dup2(STDERR_FILENO, STDOUT_FILENO);
        session = 0;
    } else {
        set_session_env(o, &run->plan.sessions[session], plugin, rank);
        unsetenv("CCLTUNE_WORKER_PROBE");
    }
    setenv_long("CCLTUNE_WORKER_RANK", rank);
    setenv_long("CCLTUNE_WORKER_NRANKS", ranks);
    setenv_long("CCLTUNE_WORKER_NODES", nodes);
    setenv_long("CCLTUNE_WORKER_SESSION", (long)session);
    setenv_long("CCLTUNE_WORKER_SESSIONS", (long)run->plan.n_sessions);
    setenv_long("CCLTUNE_WORKER_DEVICE", device);
    setenv_long("CCLTUNE_WORKER_SLOT", rank % o->ranks_per_gpu);
    setenv_long("CCLTUNE_WORKER_SHARE", o->ranks_per_gpu);
    setenv_long("CCLTUNE_WORKER_FD", child_fd);
    setenv_long("CCLTUNE_WORKER_RUN", (long)run->run_id);
    setenv_long("CCLTUNE_WORKER_LL128", run->ll128_allowed ? 1 : 0);
    setenv("CCLTUNE_WORKER_PLUGIN", plugin, 1);
    char *argv[1024];
    int argc = 0;
    argv[argc++] = (char *)"ccltune";
    for (int i = 0; i < o->argc && argc < 1023; i++)
        argv[argc++] = o->argv[i];
    argv[argc] = NULL;
    execv("/proc/self/exe", argv);
    cct_say(CCT_SAY_ERR, "ccltune search: error: exec: %s\n", strerror(errno));
    _exit(127);
}

typedef struct worker_proc {
    pid_t pid;
    int fd;
    int status;
    bool done;
} worker_proc;

static void stop_workers(worker_proc *w, int n)
{
    for (int i = 0; i < n; i++)
        if (!w[i].done && w[i].pid > 0)
            kill(w[i].pid, SIGTERM);
    for (int waited = 0; waited < 50; waited++) {
        bool all = true;
        for (int i = 0; i < n; i++) {
            if (w[i].done || w[i].pid <= 0)
                continue;
            int st;
            if (waitpid(w[i].pid, &st, WNOHANG) == w[i].pid) {
                w[i].done = true;
                w[i].status = st;
            } else {
                all = false;
            }
        }
        if (all)
            return;
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < n; i++)
        if (!w[i].done && w[i].pid > 0) {
            kill(w[i].pid, SIGKILL);
            waitpid(w[i].pid, &w[i].status, 0);
            w[i].done = true;
        }
}

/* Exit code of a finished worker: its exit status, or 128+signal. */
static int worker_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 255;
}

/* One attempt at a session.  Returns 0 done, CCT_WORKER_EXIT_HANG, or another failure code. */
static int run_session_once(const cct_search_opts *o, const cct_search_run *run, size_t session,
                            int ranks, int nodes, const char *plugin, int ngpus,
                            const char *probe_dir)
{
    worker_proc w[4096];
    memset(w, 0, sizeof(worker_proc) * (size_t)ranks);
    fflush(NULL);
    for (int r = 0; r < ranks; r++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            cct_say(CCT_SAY_ERR, "ccltune search: error: socketpair: %s\n", strerror(errno));
            stop_workers(w, r);
            return CCT_EXIT_FAIL;
        }
        int device = (r / o->ranks_per_gpu) % (ngpus > 0 ? ngpus : 1);
        pid_t pid =
            cct_spawn_worker(o, run, session, r, ranks, nodes, device, plugin, sv, probe_dir);
        if (pid < 0) {
            cct_say(CCT_SAY_ERR, "ccltune search: error: fork: %s\n", strerror(errno));
            stop_workers(w, r);
            return CCT_EXIT_FAIL;
        }
        close(sv[1]);
        w[r].pid = pid;
        w[r].fd = sv[0];
    }
    /* relay NCCL's unique id from rank 0 to everyone */
    unsigned char id[CCT_NCCL_UNIQUE_ID_BYTES];
    size_t got = 0;
    int code = 0;
    time_t deadline = time(NULL) + 300;
    while (got < sizeof id && code == 0) {
        struct pollfd p = {w[0].fd, POLLIN, 0};
        int pr = poll(&p, 1, 200);
        if (pr > 0) {
            ssize_t k = read(w[0].fd, id + got, sizeof id - got);
            if (k <= 0)
                code = CCT_EXIT_FAIL;
            else
                got += (size_t)k;
        }
        for (int r = 0; r < ranks && code == 0; r++) {
            int st;
            if (!w[r].done && waitpid(w[r].pid, &st, WNOHANG) == w[r].pid) {
                w[r].done = true;
                w[r].status = st;
                code = worker_code(st) ? worker_code(st) : CCT_EXIT_FAIL;
            }
        }
        if (time(NULL) > deadline) {
            cct_say(CCT_SAY_ERR,
                    "ccltune search: error: rank 0 produced no NCCL unique id in 300 s\n");
            code = CCT_EXIT_FAIL;
        }
    }
    for (int r = 1; r < ranks && code == 0; r++) {
        if (write(w[r].fd, id, sizeof id) != (ssize_t)sizeof id)
            code = CCT_EXIT_FAIL;
    }
    /* wait for everyone; the first failure stops the rest */
    int remaining = 0;
    for (int r = 0; r < ranks; r++)
        remaining += !w[r].done;
    while (code == 0 && remaining > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int r = 0; r < ranks; r++) {
            if (w[r].pid != pid)
                continue;
            w[r].done = true;
            w[r].status = st;
            remaining--;
            int c = worker_code(st);
            if (c != 0) {
                if (c != CCT_WORKER_EXIT_HANG && c != CCT_BACKEND_EXIT_STUCK)
                    cct_say(CCT_SAY_ERR, "ccltune search: rank %d exited with status %d\n", r, c);
                code = c;
            }
        }
    }
    if (code != 0)
        stop_workers(w, ranks);
    for (int r = 0; r < ranks; r++)
        close(w[r].fd);
    return code;
}

/* NCCL's model printout for the run (cct_model_capture.h), stored with it.  Never fails the
 * search: without it only the constants of `ccltune tune` are skipped.  A resumed run that
 * has it already is not probed again. */
static void capture_model(const cct_search_opts *o, cct_search_run *run, int ranks, int nodes,
                          const char *plugin, int ngpus)
{
    cct_error err;
    char *text = NULL;
    if (o->bench_table || !run->store)
        return;
    if (cct_store_get_nccl_log(run->store, run->run_id, &text, &err) == CCT_OK && text) {
        free(text);
        return;
    }
    char dir[PATH_MAX];
    cct_status st = cct_model_capture_mkdir(dir, sizeof dir, &err);
    if (st == CCT_OK) {
        int code = run_session_once(o, run, 0, ranks, nodes, plugin, ngpus, dir);
        if (code == 0) {
            st = cct_model_capture_collect(dir, ranks, &text, &err);
        } else {
            cct_model_capture_remove(dir);
            st = cct_error_set(&err, CCT_ENCCL, "the probe communicator's ranks failed (status %d)",
                               code);
        }
    }
    if (st == CCT_OK)
        st = cct_store_put_nccl_log(run->store, run->run_id, ranks, nodes, text, &err);
    if (st == CCT_OK)
        cct_say(CCT_SAY_ERR,
                "ccltune search: NCCL's model printout (%zu bytes) stored with run %lld: ccltune "
                "tune and ccltune calibrate fit NCCL's constants from it\n",
                strlen(text), (long long)run->run_id);
    else
        cct_say(CCT_SAY_ERR,
                "ccltune search: warning: NCCL's model printout not captured: %s (the "
                "measurements are unaffected; ccltune calibrate --nccl-log takes a log made by "
                "hand)\n",
                err.msg);
    free(text);
}

int cct_search_run_sessions(const cct_search_opts *o, cct_search_run *run, int ranks, int nodes,
                            const char *plugin, int ngpus)
{
    capture_model(o, run, ranks, nodes, plugin, ngpus);
    for (size_t s = 0; s < run->plan.n_sessions; s++) {
        if (!cct_search_session_wanted(o, &run->plan, s, run->ll128_allowed)) {
            cct_say(CCT_SAY_ERR,
                    "ccltune search: session %zu skipped: it forces LL128, which NCCL "
                    "does not enable here (--exhaustive measures it)\n",
                    s + 1);
            continue;
        }
        int restarts = 0;
        for (;;) {
            int code = run_session_once(o, run, s, ranks, nodes, plugin, ngpus, NULL);
            if (code == 0)
                break;
            bool hang = code == CCT_WORKER_EXIT_HANG || code == CCT_BACKEND_EXIT_STUCK;
            if (hang && restarts < o->max_restarts) {
                restarts++;
                cct_say(CCT_SAY_ERR, "ccltune search: session %zu restarts after a %s (%d/%d)\n",
                        s + 1,
                        code == CCT_WORKER_EXIT_HANG ? "hang (stored)" : "call stuck on the host",
                        restarts, o->max_restarts);
                continue;
            }
            return hang ? CCT_EXIT_FAIL : code;
        }
    }
    return 0;
}

/* The link matrix of a new run (cct_search_links.c): measured by `ccltune probe --links` in
 * a child unless --no-links, --links-from, --resume or a bench; a failed measurement is a
 * warning, the run goes on without. */
static void measure_links(cct_search_opts *o, int ranks, int nodes)
{
    if (o->links_json || o->no_links || o->resume_run || o->dry_run || o->bench_table)
        return;
    cct_error err;
    if (cct_search_links_probe(o, "/proc/self/exe", ranks, nodes, CCT_LINKS_PROBE_TIMEOUT_S,
                               &err) != CCT_OK) {
        cct_say(CCT_SAY_ERR,
                "ccltune search: warning: the link matrix was not measured (%s); the run "
                "goes on without one (--no-links skips the measurement)\n",
                err.msg);
        return;
    }
    cct_say(CCT_SAY_ERR, "ccltune search: link matrix measured (ccltune probe --links); stored "
                         "with the run\n");
}

int cct_search_launch(cct_search_opts *o, cct_error *out)
{
    cct_error err;
    cct_error_clear(&err);
    cct_probe_info *info = calloc(1, sizeof *info);
    if (!info)
        return cct_search_fail(out, CCT_EXIT_FAIL, "out of memory");
    if (cct_probe_collect(info, &err) != CCT_OK) {
        free(info);
        return cct_search_fail(out, CCT_EXIT_FAIL,
                               "%s. Measuring real NCCL collectives needs a GPU; `ccltune tune` "
                               "without a GPU runs the pipeline on recorded measurements instead",
                               err.msg);
    }
    int capacity = info->n_gpus * o->ranks_per_gpu;
    int ranks = o->ranks ? o->ranks : capacity;
    if (ranks > capacity) {
        int ngpus = info->n_gpus;
        free(info);
        return cct_search_fail(out, CCT_EXIT_USAGE,
                               "%d ranks do not fit on %d GPU(s) with --ranks-per-gpu %d; "
                               "raise --ranks-per-gpu (shared GPUs need MPS) or lower --ranks",
                               ranks, ngpus, o->ranks_per_gpu);
    }
    if (ranks < 2) {
        free(info);
        return cct_search_fail(out, CCT_EXIT_USAGE,
                               "a collective needs at least 2 ranks; this machine "
                               "has 1 GPU: use --ranks-per-gpu 2 (or more) with MPS");
    }
    char mpsdir[PATH_MAX];
    if (o->ranks_per_gpu > 1 && o->check_mps && !mps_running(mpsdir, sizeof mpsdir)) {
        free(info);
        return cct_search_fail(
            out, CCT_EXIT_FAIL,
            "--ranks-per-gpu %d needs the CUDA MPS daemon so the rank processes' "
            "kernels run side by side (without it every collective waits for a "
            "time slice, ~4.5 ms). No MPS control socket in %s. Start it with\n"
            "    nvidia-cuda-mps-control -d\n"
            "(set CUDA_MPS_PIPE_DIRECTORY for both if you use another folder), or "
            "pass --no-mps-check to measure without it",
            o->ranks_per_gpu, mpsdir);
    }
    int nodes = o->ranks_per_gpu > 1 ? ranks : 1;
    char plugin[PATH_MAX];
    if (cct_search_find_plugin(o->plugin_path, plugin, sizeof plugin, &err) != CCT_OK) {
        free(info);
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    }
    if (getenv("NCCL_ALGO") || getenv("NCCL_PROTO"))
        cct_say(CCT_SAY_ERR,
                "ccltune search: note: NCCL_ALGO/NCCL_PROTO are set; the search controls "
                "algorithms and protocols itself and clears them for its workers\n");
    cct_store_fingerprint fp;
    cct_probe_fingerprint(info, ranks, nodes, o->ranks_per_gpu, &fp);
    int ngpus = info->n_gpus;
    if (cct_search_check_chunk(o, &fp, &err) != CCT_OK) {
        free(info);
        return cct_search_fail(out, CCT_EXIT_USAGE, "%s", err.msg);
    }
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    if (cct_search_links_load(o, &err) != CCT_OK) {
        free(info);
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    }
    measure_links(o, ranks, nodes);
    free(info);
    cct_search_run run;
    cct_status begun = cct_search_begin(o, ranks, nodes, &fp, "search", &run, &err);
    cct_search_links_free(o);
    if (begun != CCT_OK)
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    cct_say(CCT_SAY_ERR,
            "ccltune search: run %lld%s in %s: %d ranks (%d per GPU), %d NCCL nodes, plan %s, "
            "%zu sessions, %zu configurations x %zu sizes; LL128 by default: %s\n",
            (long long)run.run_id, run.resumed ? " (resumed)" : "", o->store_path, ranks,
            o->ranks_per_gpu, nodes, run.plan.hash, run.plan.n_sessions, run.plan.n_configs,
            run.plan.n_sizes, fp.ll128_allowed ? "allowed" : "not allowed");
    int code = cct_search_run_sessions(o, &run, ranks, nodes, plugin, ngpus);
    int64_t run_id = run.run_id;
    if (cct_search_end(&run, code == 0 ? CCT_RUN_DONE : CCT_RUN_FAILED, &err) != CCT_OK)
        cct_say(CCT_SAY_ERR, "ccltune search: warning: %s\n", err.msg);
    if (code != 0) {
        cct_say(CCT_SAY_ERR,
                "ccltune search: run %lld stopped; everything measured so far is in %s. "
                "Continue with: ccltune search ... --resume %lld\n",
                (long long)run_id, o->store_path, (long long)run_id);
        return CCT_EXIT_FAIL;
    }
    struct timespec ended;
    clock_gettime(CLOCK_MONOTONIC, &ended);
    /* wall time of the whole run: model capture, every session's start-up and measuring */
    cct_say(CCT_SAY_ERR, "ccltune search: run %lld complete in %s (%.1f s)\n", (long long)run_id,
            o->store_path,
            (double)(ended.tv_sec - started.tv_sec) +
                1e-9 * (double)(ended.tv_nsec - started.tv_nsec));
    if (o->bench_table)
        return cct_bench_finish(o, run_id);
    cct_say(CCT_SAY_OUT, "%lld\n", (long long)run_id);
    return CCT_EXIT_OK;
}
