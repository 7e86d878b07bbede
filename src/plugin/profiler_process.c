/*
 * profiler_process.c - the process's recorders and its recording file.
 *
 * CCLTUNE_RECORD=DIR turns recording on; it is read once per load of the library.  A
 * folder that is missing, not a folder or not writable gets one WARN and recording stays
 * off for the process (the job runs as if the variable were unset).  Each communicator's
 * recorder is listed here at init; when the last open communicator finalizes, every
 * recorder of the process (finalized ones included, so communicators created later only
 * add to the file) is written to DIR/ccltune-HOST-PID-N.rec through cct_atomic_file: the
 * file holds the old content or the new, never a part, and no other process's file is
 * touched.  Jobs that never destroy their communicators get their file from the unload
 * destructor (process exit); a forked child never writes its parent's recording.  Init
 * and finalize take a mutex; events never do.
 * Recorders are freed only at unload: NCCL's proxy thread may still report a late kernel
 * channel of a finalized communicator, which must land in memory that is still ours.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cct_atomic_file.h"
#include "plugin_internal.h"
#include "profiler_internal.h"

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char record_dir[4096];
static char record_why[512]; /* why CCLTUNE_RECORD was refused; "" when fine or unset */
static bool record_on;
static bool record_time = true; /* CCLTUNE_RECORD_TIME=0: no kernel-channel events */
static atomic_bool warned;
static atomic_bool profiler_seen, tuner_warned;

static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static cct_recorder *recorders; /* every recorder of this load, newest first */
static int open_count;
static bool dirty; /* something not yet in the file */
static time_t started;
static pid_t owner;               /* the process that opened the first recorder (not a fork) */
static char out_path[4096 + 320]; /* chosen at the first write of this load */

static void read_env(void)
{
    const char *dir = getenv("CCLTUNE_RECORD");
    if (!dir || !dir[0])
        return;
    struct stat st;
    if (strlen(dir) >= sizeof record_dir - 64)
        snprintf(record_why, sizeof record_why, "CCLTUNE_RECORD is longer than %zu bytes",
                 sizeof record_dir - 64);
    else if (stat(dir, &st) != 0)
        snprintf(record_why, sizeof record_why, "CCLTUNE_RECORD=%s: %s", dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        snprintf(record_why, sizeof record_why, "CCLTUNE_RECORD=%s: not a folder", dir);
    else if (access(dir, W_OK | X_OK) != 0)
        snprintf(record_why, sizeof record_why, "CCLTUNE_RECORD=%s: not writable: %s", dir,
                 strerror(errno));
    else {
        snprintf(record_dir, sizeof record_dir, "%s", dir);
        record_on = true;
        record_time = !cct_env_off("CCLTUNE_RECORD_TIME");
    }
}

const char *cct_prof_record_dir(ncclDebugLogger_t log)
{
    pthread_once(&env_once, read_env);
    if (record_why[0] && !atomic_exchange(&warned, true))
        CCT_WARN(log, "%s; recording what NCCL ran is off for this process", record_why);
    return record_on ? record_dir : NULL;
}

bool cct_prof_record_time(void)
{
    pthread_once(&env_once, read_env);
    return record_time;
}

void cct_prof_note_init(void)
{
    atomic_store(&profiler_seen, true);
}

void cct_prof_tuner_check(ncclDebugLogger_t log)
{
    const char *dir = getenv("CCLTUNE_RECORD");
    if (!dir || !dir[0] || atomic_load(&profiler_seen) || atomic_exchange(&tuner_warned, true))
        return;
    CCT_WARN(log, "CCLTUNE_RECORD is set but NCCL did not load this library as its profiler: "
                  "nothing is recorded (set NCCL_PROFILER_PLUGIN to this library's path; "
                  "NCCL 2.26 or later)");
}

cct_recorder *cct_prof_open(uint64_t comm_id, int rank, int nranks, int nnodes, int abi,
                            ncclDebugLogger_t log)
{
    if (!cct_prof_record_dir(log))
        return NULL;
    cct_recorder *r = calloc(1, sizeof *r); /* zero pages: only the slots used cost memory */
    if (!r) {
        CCT_WARN(log, "out of memory for the recorder of communicator %016llx; not recorded",
                 (unsigned long long)comm_id);
        return NULL;
    }
    cct_recorder_setup(r, comm_id, rank, nranks, nnodes, abi);
    r->log = log;
    pthread_mutex_lock(&list_mu);
    if (!recorders) {
        started = time(NULL);
        owner = getpid();
    }
    r->next_rec = recorders;
    recorders = r;
    open_count++;
    dirty = true;
    pthread_mutex_unlock(&list_mu);
    return r;
}

static void write_rows(FILE *f, cct_recorder *r, size_t *rows)
{
    for (int i = 0; i < CCT_REC_SLOTS; i++) {
        cct_rec_entry *e = &r->entries[i];
        uint64_t key = atomic_load_explicit(&e->key, memory_order_acquire);
        uint64_t calls = atomic_load_explicit(&e->calls, memory_order_relaxed);
        if (!key || !calls)
            continue;
        uint64_t bytes;
        int coll, algo, proto, ch;
        cct_rec_key_unpack(key, &bytes, &coll, &algo, &proto, &ch);
        fprintf(f,
                "row coll=%s bytes=%llu algo=%s proto=%s channels=%d calls=%llu timed=%llu "
                "total_ns=%llu hist=",
                cct_prof_coll_name(coll), (unsigned long long)bytes, cct_prof_algo_name(algo),
                cct_prof_proto_name(proto), ch, (unsigned long long)calls,
                (unsigned long long)atomic_load_explicit(&e->timed, memory_order_relaxed),
                (unsigned long long)atomic_load_explicit(&e->total_ns, memory_order_relaxed));
        bool any = false;
        for (int b = 0; b < CCT_REC_HIST_BUCKETS; b++) {
            uint32_t n = atomic_load_explicit(&e->hist[b], memory_order_relaxed);
            if (n) {
                fprintf(f, "%s%d:%u", any ? "," : "", b, n);
                any = true;
            }
        }
        fputs(any ? "\n" : "-\n", f);
        (*rows)++;
    }
}

static size_t count_rows(cct_recorder *r)
{
    size_t n = 0;
    for (int i = 0; i < CCT_REC_SLOTS; i++)
        n += atomic_load_explicit(&r->entries[i].key, memory_order_acquire) &&
             atomic_load_explicit(&r->entries[i].calls, memory_order_relaxed);
    return n;
}

/* gethostname with every character but [A-Za-z0-9._-] replaced by '_'. */
static void host_name(char *host, size_t len)
{
    host[0] = '\0';
    if (gethostname(host, len - 1) != 0 || !host[0])
        snprintf(host, len, "unknown");
    host[len - 1] = '\0';
    for (char *p = host; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            *p = '_';
}

void cct_prof_write_all(FILE *f)
{
    char host[256];
    host_name(host, sizeof host);
    fprintf(f, "%s %d\n", CCT_REC_MAGIC, CCT_REC_VERSION);
    fprintf(f, "# what NCCL ran, recorded by libnccl-tuner-ccltune.so (docs/plugin.md)\n");
    fprintf(f,
            "process host=%s pid=%ld nccl=%d started=%lld written=%lld clock=gpu "
            "hist_base_ns=%d hist_buckets=%d\n",
            host, (long)getpid(), cct_device_nccl_version(), (long long)started,
            (long long)time(NULL), 1 << CCT_REC_HIST_BASE_SHIFT, CCT_REC_HIST_BUCKETS);
    size_t comms = 0, rows = 0;
    for (cct_recorder *r = recorders; r; r = r->next_rec) {
        fprintf(
            f, "comm id=%016llx rank=%d ranks=%d nodes=%d abi=%d dropped=%llu late=%llu rows=%zu\n",
            (unsigned long long)r->comm_id, r->rank > 0 ? r->rank : 0,
            r->nranks > 0 ? r->nranks : 0, r->nnodes > 0 ? r->nnodes : 0, r->abi,
            (unsigned long long)atomic_load(&r->dropped), (unsigned long long)atomic_load(&r->late),
            count_rows(r));
        write_rows(f, r, &rows);
        comms++;
    }
    fprintf(f, "end comms=%zu rows=%zu\n", comms, rows);
}

/* The file of this load: DIR/ccltune-HOST-PID-N.rec with the first N whose file does not
 * exist (list_mu held), so that a library loaded again in the same process, or a process
 * that reuses an earlier one's id, adds a file instead of replacing one. */
static bool choose_path(cct_error *err)
{
    if (out_path[0])
        return true;
    char host[256];
    host_name(host, sizeof host);
    struct stat st;
    for (int n = 0; n < 10000; n++) {
        snprintf(out_path, sizeof out_path, "%s/ccltune-%s-%ld-%d.rec", record_dir, host,
                 (long)getpid(), n);
        if (lstat(out_path, &st) != 0 && errno == ENOENT)
            return true;
    }
    out_path[0] = '\0';
    cct_error_set(err, CCT_EIO, "%s: no free file name ccltune-%s-%ld-N.rec", record_dir, host,
                  (long)getpid());
    return false;
}

/* Write the file (list_mu held).  false and why on failure. */
static bool write_file(cct_error *err)
{
    if (getpid() != owner)
        return true; /* a forked child: the recording is its parent's to write */
    if (!choose_path(err))
        return false;
    const char *path = out_path;
    cct_atomic_file a;
    if (cct_atomic_open(&a, path, 0644, err) != CCT_OK)
        return false;
    cct_prof_write_all(a.f);
    if (ferror(a.f)) {
        cct_atomic_abort(&a);
        cct_error_set(err, CCT_EIO, "%s: write failed", path);
        return false;
    }
    return cct_atomic_commit(&a, err) == CCT_OK;
}

void cct_prof_close(cct_recorder *r)
{
    if (!r)
        return;
    cct_recorder_flush_all(r);
    pthread_mutex_lock(&list_mu);
    if (!r->closed) {
        r->closed = true;
        open_count--;
    }
    bool ok = true;
    cct_error err;
    if (open_count == 0 && dirty) {
        ok = write_file(&err);
        dirty = !ok;
    }
    pthread_mutex_unlock(&list_mu);
    if (!ok)
        CCT_WARN(r->log, "recording not written: %s", err.msg);
}

__attribute__((destructor)) static void at_unload(void)
{
    /* at exit another thread may still be inside an init or finalize: wait for it at most
     * about a second rather than risk hanging the exit */
    int tries = 0;
    while (pthread_mutex_trylock(&list_mu) != 0) {
        if (++tries > 1000)
            return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (dirty && record_on) {
        for (cct_recorder *r = recorders; r; r = r->next_rec)
            if (!r->closed)
                cct_recorder_flush_all(r);
        cct_error err;
        dirty = !write_file(&err);
    }
    /* at exit with communicators still open, proxy threads may still run: keep them */
    cct_recorder *r = open_count == 0 ? recorders : NULL;
    if (r)
        recorders = NULL;
    pthread_mutex_unlock(&list_mu);
    while (r) {
        cct_recorder *next = r->next_rec;
        free(r);
        r = next;
    }
}
