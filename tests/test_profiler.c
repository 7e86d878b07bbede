/*
 * test_profiler.c - the profiler half of libnccl-tuner-ccltune.so driven as NCCL drives it,
 * then its recording read back with the reader `ccltune audit` uses.
 *
 * One dlopen handle gives both plugin types (NCCL 2.28 loads the tuner and the profiler
 * from the same library).  Scenarios: recording off without CCLTUNE_RECORD (activation
 * mask 0, no file); a bad CCLTUNE_RECORD (one WARN, off, the job unaffected); collectives
 * with their algorithm, protocol, channels and GPU stamps through v5, v4 and v6, read back
 * exactly (bytes as the tuner is asked, counts, times, histogram buckets); a full entry
 * table counting drops; late kernel-channel events; communicators finalized one by one
 * (the file is rewritten with all of them); and `ccltune audit` on the recordings, with
 * and without a table, text and JSON, and its exit status.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "plugin_test_util.h"
#include "profiler_test_util.h"

#include "cct_json.h"
#include "cct_recording.h"
#include "cct_recording_audit.h"

static pf_plugin P;
static char *dir;

static int setup(void **state)
{
    (void)state;
    unsetenv("CCLTUNE_RECORD");
    unsetenv("CCLTUNE_TABLE");
    tu_log_clear();
    dir = pf_tmpdir();
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (P.h)
        pf_close(&P);
    pf_rmdir(dir);
    free(dir);
    dir = NULL;
    unsetenv("CCLTUNE_RECORD");
    unsetenv("CCLTUNE_RECORD_TIME");
    return 0;
}

static void *init5(int rank, int nranks, int nnodes, uint64_t id, int *mask)
{
    void *ctx = (void *)1;
    *mask = -1;
    assert_int_equal(P.v5->init(&ctx, id, mask, "test", nnodes, nranks, rank, tu_logger),
                     ncclSuccess);
    return ctx;
}

/* Load the only recording in dir. */
static void load_rec(cct_recording *rec)
{
    char *path;
    assert_int_equal(pf_find_rec(dir, &path), 1);
    cct_error err;
    if (cct_recording_load_file(path, rec, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    free(path);
}

static const cct_rec_row *find_row(const cct_rec_comm *m, int coll, uint64_t bytes, int algo,
                                   int proto, int channels)
{
    for (size_t i = 0; i < m->n_rows; i++) {
        const cct_rec_row *r = &m->rows[i];
        if (r->coll == coll && r->bytes == bytes && r->algo == algo && r->proto == proto &&
            r->channels == channels)
            return r;
    }
    return NULL;
}

static void test_off_without_env(void **state)
{
    (void)state;
    assert_true(pf_open(&P));
    int mask;
    void *ctx = init5(0, 4, 4, 0x11, &mask);
    assert_int_equal(mask, 0);
    assert_null(ctx);
    assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    assert_true(pf_close(&P));
    assert_int_equal(pf_find_rec(dir, NULL), 0);
}

static void test_bad_dir_warns_once(void **state)
{
    (void)state;
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/missing", dir);
    setenv("CCLTUNE_RECORD", bad, 1);
    assert_true(pf_open(&P));
    int mask;
    for (int i = 0; i < 3; i++) {
        void *ctx = init5(i, 4, 4, 0x22, &mask);
        assert_int_equal(mask, 0);
        assert_null(ctx);
        assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
    }
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "CCLTUNE_RECORD"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 1);
    assert_true(pf_close(&P));
    /* a file where a folder is wanted: also one WARN */
    char *file = tu_write_temp("x");
    setenv("CCLTUNE_RECORD", file, 1);
    tu_log_clear();
    assert_true(pf_open(&P));
    void *ctx = init5(0, 4, 4, 0x23, &mask);
    assert_int_equal(mask, 0);
    assert_null(ctx);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "not a folder"), 1);
    assert_true(pf_close(&P));
    unlink(file);
    free(file);
}

/* Both plugin types from one handle: the tuner decides, the profiler records. */
static void test_record_roundtrip(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    assert_true(pf_open(&P));
    void *tctx = NULL;
    ncclNvlDomainInfo_v5_t nvl = {4, 1, 1};
    assert_int_equal(P.tuner5->init(&tctx, 0x77, 4, 4, tu_logger, &nvl, NULL), ncclSuccess);
    int mask;
    void *ctx = init5(1, 4, 4, 0x77, &mask);
    assert_non_null(ctx);
    assert_int_equal(mask, CCT_PROF_COLL | CCT_PROF_KERNEL_CH);
    /* 10 allreduces of 256 floats on ring/ll/2 channels, each 11 us on the GPU */
    for (int i = 0; i < 10; i++)
        pf_coll(P.v5, ctx, "AllReduce", 256, "ncclFloat32", 2, "RING", "LL", 1000000u * i, 11000);
    /* allgather: bytes as the tuner is asked = count x size x ranks */
    for (int i = 0; i < 3; i++)
        pf_coll(P.v5, ctx, "AllGather", 256, "ncclBfloat16", 4, "RING", "SIMPLE", 5000, 200000);
    /* a collective a tuner never sees, and unknown spellings: counted */
    pf_coll(P.v5, ctx, "SendRecv", 8, "ncclInt8", 1, "Mystery", "XX", 1, 1);
    /* events of types not activated get no handle */
    ncclProfilerEventDescr_v5_t g;
    memset(&g, 0, sizeof g);
    g.type = CCT_PROF_GROUP;
    void *gh = (void *)1;
    P.v5->startEvent(ctx, &gh, &g);
    assert_null(gh);
    assert_int_equal(pf_find_rec(dir, NULL), 0); /* nothing written before finalize */
    assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
    assert_int_equal(P.tuner5->finalize(tctx), ncclSuccess);
    assert_true(pf_close(&P));

    cct_recording rec;
    load_rec(&rec);
    assert_int_equal(rec.n_comms, 1);
    assert_int_equal(rec.nccl, 22809);
    assert_int_equal(rec.pid, (long)getpid());
    const cct_rec_comm *m = &rec.comms[0];
    assert_int_equal(m->id, 0x77);
    assert_int_equal(m->rank, 1);
    assert_int_equal(m->ranks, 4);
    assert_int_equal(m->nodes, 4);
    assert_int_equal(m->abi, 5);
    assert_int_equal(m->n_rows, 3);
    assert_int_equal(m->dropped, 0);
    const cct_rec_row *ar = find_row(m, 4, 1024, 1, 0, 2);
    assert_non_null(ar);
    assert_int_equal(ar->calls, 10);
    assert_int_equal(ar->timed, 10);
    assert_int_equal(ar->total_ns, 10 * 11001); /* span: first start to last stop */
    assert_int_equal(ar->hist[3], 10);          /* 11001 ns in [8192, 16384) */
    const cct_rec_row *ag = find_row(m, 2, 256 * 2 * 4, 1, 2, 4);
    assert_non_null(ag);
    assert_int_equal(ag->calls, 3);
    assert_int_equal(ag->total_ns, 3 * 200003);
    assert_int_equal(ag->hist[7], 3); /* [131072, 262144) */
    const cct_rec_row *other = find_row(m, CCT_RECORDING_OTHER, 8, -1, -1, 1);
    assert_non_null(other);
    assert_int_equal(other->calls, 1);
    cct_recording_destroy(&rec);
}

/* v4 (NCCL 2.26-2.27) and v6 (2.29+) reach the same recorder. */
static void test_v4_and_v6(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    assert_true(pf_open(&P));
    void *c4 = NULL, *c6 = NULL;
    int m4 = 0, m6 = 0;
    assert_int_equal(P.v4->init(&c4, &m4, "four", 0x44, 2, 2, 0, tu_logger), ncclSuccess);
    assert_int_equal(P.v6->init(&c6, 0x66, &m6, "six", 1, 8, 3, tu_logger), ncclSuccess);
    assert_int_equal(m4, CCT_PROF_COLL | CCT_PROF_KERNEL_CH);
    assert_int_equal(m6, m4);
    ncclProfilerEventDescr_v4_t d4;
    memset(&d4, 0, sizeof d4);
    d4.type = CCT_PROF_COLL;
    d4.coll.func = "Broadcast";
    d4.coll.count = 1000;
    d4.coll.datatype = "ncclInt64";
    d4.coll.nChannels = 1;
    d4.coll.algo = "RING";
    d4.coll.proto = "LL128";
    void *h4 = NULL;
    P.v4->startEvent(c4, &h4, &d4);
    assert_non_null(h4);
    ncclProfilerEventDescr_v4_t k4;
    memset(&k4, 0, sizeof k4);
    k4.type = CCT_PROF_KERNEL_CH;
    k4.parentObj = h4;
    k4.kernelCh.pTimer = 100;
    void *kh = NULL;
    P.v4->startEvent(c4, &kh, &k4);
    ncclProfilerEventStateArgs_v4_t a = {.kernelCh = {5100}};
    P.v4->recordEventState(kh, CCT_PROF_STATE_KERNEL_CH_STOP, &a);
    P.v4->stopEvent(kh);
    P.v4->stopEvent(h4);
    ncclProfilerEventDescr_v6_t d6;
    memset(&d6, 0, sizeof d6);
    d6.type = CCT_PROF_COLL;
    d6.coll.func = "ReduceScatter";
    d6.coll.count = 64;
    d6.coll.datatype = "ncclFloat64";
    d6.coll.nChannels = 8;
    d6.coll.algo = "PAT";
    d6.coll.proto = "SIMPLE";
    void *h6 = NULL;
    P.v6->startEvent(c6, &h6, &d6);
    assert_non_null(h6);
    P.v6->stopEvent(h6);
    assert_int_equal(P.v4->finalize(c4), ncclSuccess);
    assert_int_equal(pf_find_rec(dir, NULL), 0); /* c6 still open */
    assert_int_equal(P.v6->finalize(c6), ncclSuccess);
    assert_true(pf_close(&P));
    cct_recording rec;
    load_rec(&rec);
    assert_int_equal(rec.n_comms, 2);
    const cct_rec_comm *m4c = rec.comms[0].id == 0x44 ? &rec.comms[0] : &rec.comms[1];
    const cct_rec_comm *m6c = rec.comms[0].id == 0x44 ? &rec.comms[1] : &rec.comms[0];
    assert_int_equal(m4c->abi, 4);
    assert_int_equal(m6c->abi, 6);
    const cct_rec_row *b = find_row(m4c, 0, 8000, 1, 1, 1);
    assert_non_null(b);
    assert_int_equal(b->timed, 1);
    assert_int_equal(b->total_ns, 5000);
    const cct_rec_row *rs = find_row(m6c, 3, 64 * 8 * 8, 6, 2, 8);
    assert_non_null(rs);
    assert_int_equal(rs->calls, 1);
    assert_int_equal(rs->timed, 0); /* no kernel channel reported */
    cct_recording_destroy(&rec);
}

/* CCLTUNE_RECORD_TIME=0: collective events only (no GPU stamps for NCCL to collect); the
 * calls and configurations are still recorded, untimed. */
static void test_record_without_time(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    setenv("CCLTUNE_RECORD_TIME", "0", 1);
    assert_true(pf_open(&P));
    int mask;
    void *ctx = init5(0, 2, 2, 0x7, &mask);
    assert_int_equal(mask, CCT_PROF_COLL);
    for (int i = 0; i < 4; i++) /* as NCCL calls it then: no kernel-channel events */
        pf_coll(P.v5, ctx, "AllReduce", 64, "ncclFloat32", 0, "TREE", "SIMPLE", 0, 0);
    assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
    assert_true(pf_close(&P));
    unsetenv("CCLTUNE_RECORD_TIME");
    cct_recording rec;
    load_rec(&rec);
    const cct_rec_row *r = find_row(&rec.comms[0], 4, 256, 0, 2, 0);
    assert_non_null(r);
    assert_int_equal(r->calls, 4);
    assert_int_equal(r->timed, 0);
    cct_recording_destroy(&rec);
}

/* More distinct keys than slots: the extra calls are counted as dropped, never lost
 * silently; stops after a collective was timed count as late. */
static void test_full_table_and_late(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    assert_true(pf_open(&P));
    int mask;
    void *ctx = init5(0, 2, 2, 0x99, &mask);
    const int n = 1024 + 100;
    for (int i = 0; i < n; i++)
        pf_coll(P.v5, ctx, "AllReduce", (size_t)i + 1, "ncclInt8", 1, "TREE", "LL", 0, 3000);
    /* a stray stop of a channel whose collective is already timed */
    ncclProfilerEventDescr_v5_t d;
    memset(&d, 0, sizeof d);
    d.type = CCT_PROF_COLL;
    d.coll.func = "AllReduce";
    d.coll.count = 1;
    d.coll.datatype = "ncclInt8";
    d.coll.nChannels = 1;
    d.coll.algo = "TREE";
    d.coll.proto = "LL";
    void *h = NULL, *k = NULL;
    P.v5->startEvent(ctx, &h, &d);
    ncclProfilerEventDescr_v5_t kd;
    memset(&kd, 0, sizeof kd);
    kd.type = CCT_PROF_KERNEL_CH;
    kd.parentObj = h;
    P.v5->startEvent(ctx, &k, &kd);
    P.v5->stopEvent(k);
    P.v5->stopEvent(k); /* late: counted, ignored */
    assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
    assert_true(pf_close(&P));
    cct_recording rec;
    load_rec(&rec);
    assert_int_equal(rec.comms[0].n_rows, 1024);
    assert_int_equal(rec.comms[0].dropped, 100);
    assert_int_equal(rec.comms[0].late, 1);
    uint64_t calls = 0;
    for (size_t i = 0; i < rec.comms[0].n_rows; i++)
        calls += rec.comms[0].rows[i].calls;
    assert_int_equal(calls + rec.comms[0].dropped, n + 1);
    cct_recording_destroy(&rec);
}

/* NCCL_PROFILER_PLUGIN=ccltune opens libnccl-profiler-ccltune.so, which `meson install`
 * links to the library: opened through the link it is the copy the tuner already has. */
static void test_profiler_name_is_the_same_copy(void **state)
{
    (void)state;
    assert_true(pf_open(&P));
    char link_path[4200];
    snprintf(link_path, sizeof link_path, "%s/libnccl-profiler-ccltune.so", dir);
    assert_int_equal(symlink(getenv("CCT_PLUGIN"), link_path), 0);
    void *h = dlopen(link_path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    assert_ptr_equal(dlsym(h, "ncclProfiler_v5"), P.v5);
    assert_ptr_equal(dlsym(h, "ncclTunerPlugin_v5"), P.tuner5);
    dlclose(h);
    unlink(link_path);
    assert_true(pf_close(&P));
}

/* CCLTUNE_RECORD set but NCCL never initialised the profiler (NCCL_PROFILER_PLUGIN unset):
 * the tuner's init says once that nothing is recorded; with the profiler loaded it is
 * silent. */
static void test_record_without_profiler_warns(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    ncclNvlDomainInfo_v5_t nvl = {2, 1, 1};
    for (int with_profiler = 0; with_profiler < 2; with_profiler++) {
        tu_log_clear();
        assert_true(pf_open(&P));
        void *t[3], *p = NULL;
        int mask;
        if (with_profiler)
            p = init5(0, 2, 2, 0x5, &mask);
        for (int i = 0; i < 3; i++)
            assert_int_equal(P.tuner5->init(&t[i], 0x5, 2, 2, tu_logger, &nvl, NULL), ncclSuccess);
        assert_int_equal(tu_log_count(NCCL_LOG_WARN, "NCCL_PROFILER_PLUGIN"),
                         with_profiler ? 0 : 1);
        for (int i = 0; i < 3; i++)
            P.tuner5->finalize(t[i]);
        if (p)
            P.v5->finalize(p);
        assert_true(pf_close(&P));
    }
}

/* The library unloaded (last communicator gone) and loaded again in the same process adds
 * a second file instead of replacing the first; a forked child writes nothing. */
static void test_reload_and_fork(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    for (int load = 0; load < 2; load++) {
        assert_true(pf_open(&P));
        int mask;
        void *ctx = init5(0, 2, 2, 0x100 + (uint64_t)load, &mask);
        pf_coll(P.v5, ctx, "AllReduce", 16, "ncclFloat32", 1, "RING", "LL", 0, 4000);
        if (load == 1) {
            pid_t child = fork();
            assert_true(child >= 0);
            if (child == 0) {
                P.v5->finalize(ctx); /* the child's last communicator: no file */
                exit(0);             /* the unload destructor runs: no file either */
            }
            int st;
            assert_int_equal(waitpid(child, &st, 0), child);
            assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
            assert_int_equal(pf_find_rec(dir, NULL), 1);
        }
        assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
        assert_true(pf_close(&P));
        assert_int_equal(pf_find_rec(dir, NULL), load + 1);
    }
}

/* ---- ccltune audit ---- */

static const char *audit_table =
    "  allreduce:\n"
    "    - ranks: 4\n"
    "      nodes: 4\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, channels: 2,\n"
    "           predicted_us: 20.0, ref_bytes: 1024,\n"
    "           evidence: {gain: 1.5, ci: [1.25, 2.0], noise: 0.04, cycles: 8}}\n"
    "        - {min_bytes: 64KiB, max_bytes: inf, algo: tree, proto: simple}\n";

/* Record rank r of a 4-rank job: allreduce 1 KiB ring/ll/2 and ring/ll/1, 1 MiB
 * tree/simple, allgather 4 KiB (no section in the table); with `bad`, that many more 1 KiB
 * calls on ring/simple and two on ring/ll/4 (over the rule's 2 channels). */
static void record_rank(int r, int bad)
{
    int mask;
    void *ctx = init5(r, 4, 4, 0xabc, &mask);
    assert_non_null(ctx);
    for (int i = 0; i < 20; i++)
        pf_coll(P.v5, ctx, "AllReduce", 256, "ncclFloat32", 2, "RING", "LL", 0, 20000);
    for (int i = 0; i < 5; i++)
        pf_coll(P.v5, ctx, "AllReduce", 262144, "ncclFloat32", 4, "TREE", "SIMPLE", 0, 900000);
    for (int i = 0; i < 7; i++)
        pf_coll(P.v5, ctx, "AllGather", 256, "ncclFloat32", 2, "RING", "LL", 0, 15000);
    /* fewer channels than the rule's cap: NCCL spreads small messages thin, as asked */
    for (int i = 0; i < 4; i++)
        pf_coll(P.v5, ctx, "AllReduce", 256, "ncclFloat32", 1, "RING", "LL", 0, 21000);
    for (int i = 0; i < bad; i++)
        pf_coll(P.v5, ctx, "AllReduce", 256, "ncclFloat32", 2, "RING", "SIMPLE", 0, 30000);
    /* more channels than the cap: not what the rule asked */
    for (int i = 0; i < (bad ? 2 : 0); i++)
        pf_coll(P.v5, ctx, "AllReduce", 256, "ncclFloat32", 4, "RING", "LL", 0, 9000);
    assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
}

/* Run `ccltune audit ARGS` (a shell word list); stdout into *out (malloc'ed). */
static int run_audit(const char *args, char **out)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' audit %s 2>&1", getenv("CCT_CCLTUNE"), args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *buf = calloc(1, cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - 1 - n, p)) > 0)
        n += got;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_audit(void **state)
{
    (void)state;
    setenv("CCLTUNE_RECORD", dir, 1);
    assert_true(pf_open(&P));
    record_rank(0, 0);
    assert_true(pf_close(&P));
    char *text = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, false, audit_table);
    /* evidence needs table format 2, where `created` is called `measured` */
    memcpy(strstr(text, "ccltune_table: 1"), "ccltune_table: 2", 16);
    char *created = strstr(text, "  created:");
    memmove(created + 11, created + 10, strlen(created + 10) + 1);
    memcpy(created, "  measured:", 11);
    char *table = tu_write_temp(text);
    free(text);

    cct_recording rec;
    load_rec(&rec);
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file(table, &t, &err), CCT_OK);
    cct_audit a;
    assert_int_equal(cct_audit_run(&rec, 1, &t, &a, &err), CCT_OK);
    assert_int_equal(a.calls, 36);
    assert_int_equal(a.as_asked, 29);
    assert_int_equal(a.left, 7);
    assert_int_equal(a.mismatched, 0);
    /* ring/ll: 20 calls x 20001 ns + 4 x 21000 ns under a measured gain of 1.5 [1.25, 2];
     * tree/simple has no evidence: 5 calls not estimated */
    double ll_ns = 20 * 20001.0 + 4 * 21000.0;
    assert_true(fabs(a.evidence_ns - ll_ns) < 1e-6);
    assert_true(fabs(a.saved_ns - 0.5 * ll_ns) < 1e-6);
    assert_true(fabs(a.saved_lo_ns - 0.25 * ll_ns) < 1e-6);
    assert_true(fabs(a.saved_hi_ns - 1.0 * ll_ns) < 1e-6);
    assert_int_equal(a.no_evidence_calls, 5);
    cct_audit_destroy(&a);
    assert_int_equal(cct_audit_run(&rec, 1, NULL, &a, &err), CCT_OK);
    assert_int_equal(a.n_lines, 4);
    assert_int_equal(a.as_asked + a.left + a.mismatched, 0);
    cct_audit_destroy(&a);

    char args[8192], *out;
    snprintf(args, sizeof args, "'%s' --table '%s'", dir, table);
    assert_int_equal(run_audit(args, &out), 0);
    assert_non_null(strstr(out, "29 calls ran the table's choice, 7 were left to NCCL, 0 "
                                "mismatched"));
    assert_null(strstr(out, "MISMATCH"));
    assert_non_null(strstr(out, "estimated saving: 0.242 ms GPU (95 % CI 0.121..0.484)"));
    assert_non_null(strstr(out, "no estimate for 5 calls"));
    free(out);

    /* a second process (another rank) ran 1 KiB on ring/simple: NCCL did not run the rule */
    pf_rmdir(dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_true(pf_open(&P));
    record_rank(1, 3);
    assert_true(pf_close(&P));
    char *bad_path;
    assert_int_equal(pf_find_rec(dir, &bad_path), 1);
    cct_recording_destroy(&rec);
    assert_int_equal(cct_recording_load_file(bad_path, &rec, &err), CCT_OK);
    assert_int_equal(cct_audit_run(&rec, 1, &t, &a, &err), CCT_OK);
    assert_int_equal(a.mismatched, 5);
    assert_int_equal(a.mismatch_lines, 2);
    cct_audit_destroy(&a);
    cct_recording_destroy(&rec);

    snprintf(args, sizeof args, "'%s' --table '%s'", bad_path, table);
    assert_int_equal(run_audit(args, &out), 1);
    assert_non_null(strstr(out, "MISMATCH"));
    assert_non_null(strstr(out, "table asks ring/ll/2"));
    assert_non_null(strstr(out, "5 mismatched (2 configurations)"));
    free(out);

    /* JSON: one object, the same counts */
    snprintf(args, sizeof args, "--json --table '%s' '%s'", table, bad_path);
    assert_int_equal(run_audit(args, &out), 1);
    cct_json_doc doc;
    cct_json_init(&doc);
    if (cct_json_parse(&doc, out, strlen(out), "audit.json", &err) != CCT_OK)
        fail_msg("%s\n%s", err.msg, out);
    const cct_json_node *root = cct_json_root(&doc);
    assert_string_equal(cct_json_text(&doc, cct_json_member(&doc, root, "mismatched")), "5");
    assert_string_equal(cct_json_text(&doc, cct_json_member(&doc, root, "as_asked")), "29");
    assert_string_equal(cct_json_text(&doc, cct_json_member(&doc, root, "calls")), "41");
    cct_json_destroy(&doc);
    free(out);

    /* without a table: exit 0, no verdicts */
    snprintf(args, sizeof args, "'%s'", bad_path);
    assert_int_equal(run_audit(args, &out), 0);
    assert_null(strstr(out, "MISMATCH"));
    assert_non_null(strstr(out, "41 calls in 1 recording (1 communicator)"));
    free(out);

    /* a damaged recording: exit 2 and FILE:OFFSET */
    char *broken = tu_write_temp("ccltune-recording 1\nprocess host=x\n");
    snprintf(args, sizeof args, "'%s'", broken);
    assert_int_equal(run_audit(args, &out), 2);
    char want[4200];
    snprintf(want, sizeof want, "%s:34:", broken);
    assert_non_null(strstr(out, want));
    free(out);
    unlink(broken);
    free(broken);
    /* usage */
    assert_int_equal(run_audit("", &out), 2);
    free(out);

    cct_table_destroy(&t);
    free(bad_path);
    unlink(table);
    free(table);
}

int main(void)
{
    tu_log_echo = getenv("CCT_TEST_VERBOSE") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_off_without_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_dir_warns_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v4_and_v6, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_without_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_table_and_late, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_and_fork, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_without_profiler_warns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profiler_name_is_the_same_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
