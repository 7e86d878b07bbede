/*
 * test_store.c - unit tests of the measurement store (src/search/cct_store*.c).
 *
 * Each test works in its own scratch directory and checks what users and the search rely
 * on: a store is created, recognised and reopened; fingerprints are deduplicated; runs go
 * running -> done/failed and can be resumed only with the same plan; every field of a
 * point and every sample comes back exactly; duplicates are refused; files that are not
 * ours (foreign SQLite, text, a newer schema) are refused without being modified; a
 * read-only store (flag, file or directory) and a full disk give clear errors and leave
 * the committed points intact; the point_summary view computes nccl-tests' busbw.
 * Faults are injected through SQLite itself (PRAGMA max_page_count) and RLIMIT_FSIZE;
 * permission cases drop root privileges in a child, since root ignores file modes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cct_store_internal.h"
#include "recorded_test_util.h"
#include "store_test_util.h"

typedef struct fixture {
    char dir[256];
    char path[320];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    store_test_tmpdir(f->dir, sizeof f->dir);
    snprintf(f->path, sizeof f->path, "%s/measurements.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    chmod(f->dir, 0755);
    store_test_rmdir(f->dir);
    free(f);
    return 0;
}

static cct_store *open_ok(const char *path, bool read_only)
{
    cct_store *s = NULL;
    cct_error err;
    cct_error_clear(&err);
    cct_status rc = cct_store_open(path, read_only, &s, &err);
    if (rc != CCT_OK)
        fail_msg("open %s: %s", path, err.msg);
    return s;
}

static int64_t new_run(cct_store *s, const char *host, const char *plan)
{
    cct_error err;
    cct_store_fingerprint fp = store_test_fingerprint(host);
    cct_store_run run;
    memset(&run, 0, sizeof run);
    assert_int_equal(cct_store_put_fingerprint(s, &fp, &run.fingerprint_id, &err), CCT_OK);
    snprintf(run.tool, sizeof run.tool, "ccltune test");
    snprintf(run.source, sizeof run.source, "search");
    snprintf(run.plan_hash, sizeof run.plan_hash, "%s", plan);
    snprintf(run.command, sizeof run.command, "ccltune search --test");
    assert_int_equal(cct_store_begin_run(s, &run, &err), CCT_OK);
    return run.id;
}

static void add_indexed(cct_store *s, int64_t run, unsigned i)
{
    cct_error err;
    cct_point p = store_test_point(i);
    double samples[8];
    size_t n = store_test_n_samples(i);
    for (size_t k = 0; k < n; k++)
        samples[k] = store_test_sample(i, (unsigned)k);
    if (cct_store_add_point(s, run, &p, samples, n, &err) != CCT_OK)
        fail_msg("add point %u: %s", i, err.msg);
}

/* The points of run are exactly indices [0, count) in order, each with its samples. */
static void expect_indexed(cct_store *s, int64_t run, unsigned count)
{
    cct_error err;
    cct_point *pts = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_points(s, &run, 1, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, count);
    for (unsigned i = 0; i < count; i++) {
        cct_point want = store_test_point(i);
        const char *diff = store_test_point_diff(&pts[i], &want);
        if (diff)
            fail_msg("point %u differs in %s", i, diff);
        double *smp = NULL;
        size_t ns = 0;
        assert_int_equal(
            cct_store_load_samples(s, run, &want.cfg, want.bytes, want.in_place, &smp, &ns, &err),
            CCT_OK);
        assert_int_equal(ns, store_test_n_samples(i));
        for (size_t k = 0; k < ns; k++)
            assert_true(smp[k] == store_test_sample(i, (unsigned)k));
        free(smp);
    }
    free(pts);
}

static void test_create_and_reopen(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_store_close(s);
    assert_int_equal(access(f->path, F_OK), 0);

    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "PRAGMA user_version"), CCT_STORE_SCHEMA_VERSION);
    assert_int_equal(store_test_sql_int(db, "PRAGMA application_id"), CCT_STORE_APPLICATION_ID);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM meta WHERE key = 'application' "
                                            "AND value = 'ccltune'"),
                     1);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                            "('fingerprints', 'runs', 'points', 'samples', "
                                            "'point_summary')"),
                     5);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* Reopen for writing keeps what was there; reopen read-only works too. */
    s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    add_indexed(s, run, 0);
    cct_store_close(s);
    s = open_ok(f->path, true);
    expect_indexed(s, run, 1);
    cct_store_close(s);
}

static void test_open_missing_read_only(void **state)
{
    fixture *f = *state;
    cct_store *s = (cct_store *)1;
    cct_error err;
    assert_int_equal(cct_store_open(f->path, true, &s, &err), CCT_ENOTFOUND);
    assert_null(s);
    assert_non_null(strstr(err.msg, f->path));
    assert_int_equal(access(f->path, F_OK), -1); /* reading never creates */
}

static void test_fingerprint_dedup(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    cct_store_fingerprint a = store_test_fingerprint("host-a");
    cct_store_fingerprint b = store_test_fingerprint("host-b");
    b.ll128_allowed = true;
    int64_t ia = 0, ia2 = 0, ib = 0;
    assert_int_equal(cct_store_put_fingerprint(s, &a, &ia, &err), CCT_OK);
    assert_int_equal(cct_store_put_fingerprint(s, &a, &ia2, &err), CCT_OK);
    assert_int_equal(cct_store_put_fingerprint(s, &b, &ib, &err), CCT_OK);
    assert_true(ia > 0);
    assert_int_equal(ia, ia2);
    assert_int_not_equal(ia, ib);

    cct_store_fingerprint got;
    assert_int_equal(cct_store_get_fingerprint(s, ib, &got, &err), CCT_OK);
    assert_string_equal(got.gpu, b.gpu);
    assert_int_equal(got.cc, b.cc);
    assert_int_equal(got.gpus_per_node, b.gpus_per_node);
    assert_int_equal(got.nodes, b.nodes);
    assert_int_equal(got.ranks_per_gpu, b.ranks_per_gpu);
    assert_string_equal(got.links, b.links);
    assert_string_equal(got.nccl, b.nccl);
    assert_string_equal(got.cuda, b.cuda);
    assert_string_equal(got.host, b.host);
    assert_true(got.ll128_allowed);
    assert_string_equal(got.ll128_reason, b.ll128_reason);
    assert_int_equal(cct_store_get_fingerprint(s, ia + ib + 100, &got, &err), CCT_ENOTFOUND);
    assert_non_null(strstr(err.msg, f->path));
    cct_store_close(s);

    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM fingerprints"), 2);
    sqlite3_close(db);
}

static void test_run_lifecycle(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t r1 = new_run(s, "host-a", "plan-1");
    int64_t r2 = new_run(s, "host-a", "plan-2");
    assert_true(r1 > 0 && r2 > r1);

    cct_store_run run;
    assert_int_equal(cct_store_get_run(s, r1, &run, &err), CCT_OK);
    assert_int_equal(run.id, r1);
    assert_int_equal(run.state, CCT_RUN_RUNNING);
    assert_string_equal(run.finished, "");
    assert_int_equal(strlen(run.started), 20); /* 2026-11-29T14:00:00Z */
    assert_int_equal(run.started[10], 'T');
    assert_string_equal(run.tool, "ccltune test");
    assert_string_equal(run.source, "search");
    assert_string_equal(run.plan_hash, "plan-1");
    assert_string_equal(run.command, "ccltune search --test");
    assert_int_equal(run.n_points, 0);
    add_indexed(s, r1, 0);
    add_indexed(s, r1, 1);

    assert_int_equal(cct_store_finish_run(s, r1, CCT_RUN_DONE, &err), CCT_OK);
    assert_int_equal(cct_store_get_run(s, r1, &run, &err), CCT_OK);
    assert_int_equal(run.state, CCT_RUN_DONE);
    assert_int_equal(strlen(run.finished), 20);
    assert_int_equal(run.n_points, 2);

    /* A finished run's points are final until it is resumed with the same plan. */
    cct_point p = store_test_point(2);
    assert_int_equal(cct_store_add_point(s, r1, &p, NULL, 0, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "resume"));
    assert_int_equal(cct_store_resume_run(s, r1, "plan-9", &run, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "plan-9"));
    assert_non_null(strstr(err.msg, "plan-1"));
    assert_int_equal(cct_store_resume_run(s, r1, "plan-1", &run, &err), CCT_OK);
    assert_int_equal(run.state, CCT_RUN_RUNNING);
    assert_string_equal(run.finished, "");
    assert_int_equal(run.n_points, 2);
    add_indexed(s, r1, 2);

    assert_int_equal(cct_store_finish_run(s, r2, CCT_RUN_FAILED, &err), CCT_OK);
    /* A failed run stopped on an error: a resume may add to it directly. */
    add_indexed(s, r2, 0);
    assert_int_equal(cct_store_get_run(s, r2, &run, &err), CCT_OK);
    assert_int_equal(run.state, CCT_RUN_FAILED);
    assert_int_equal(run.n_points, 1);
    assert_int_equal(cct_store_finish_run(s, r2, CCT_RUN_RUNNING, &err), CCT_EINVAL);
    assert_int_equal(cct_store_finish_run(s, r2 + 100, CCT_RUN_DONE, &err), CCT_ENOTFOUND);
    assert_int_equal(cct_store_get_run(s, r2 + 100, &run, &err), CCT_ENOTFOUND);
    assert_int_equal(cct_store_resume_run(s, r2 + 100, "plan-2", &run, &err), CCT_ENOTFOUND);

    cct_store_run bad;
    memset(&bad, 0, sizeof bad);
    bad.fingerprint_id = 12345;
    assert_int_equal(cct_store_begin_run(s, &bad, &err), CCT_ENOTFOUND);
    assert_int_equal(cct_store_add_point(s, r2 + 100, &p, NULL, 0, &err), CCT_ENOTFOUND);

    cct_store_run *runs = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_list_runs(s, &runs, &n, &err), CCT_OK);
    assert_int_equal(n, 2);
    assert_int_equal(runs[0].id, r1);
    assert_int_equal(runs[0].state, CCT_RUN_RUNNING);
    assert_int_equal(runs[0].n_points, 3);
    assert_int_equal(runs[1].id, r2);
    assert_int_equal(runs[1].state, CCT_RUN_FAILED);
    assert_int_equal(runs[1].n_points, 1);
    assert_string_equal(runs[1].plan_hash, "plan-2");
    free(runs);
    cct_store_close(s);

    /* Closed while running (as a crash would leave it): still running, points kept. */
    s = open_ok(f->path, false);
    assert_int_equal(cct_store_get_run(s, r1, &run, &err), CCT_OK);
    assert_int_equal(run.state, CCT_RUN_RUNNING);
    assert_int_equal(run.n_points, 3);
    expect_indexed(s, r1, 3);
    cct_store_close(s);
}

/* Points chosen to exercise every field's edge: defaults, unknown NCCL choice, NaN stats,
 * large sizes, every status, zero samples. */
static cct_point edge_point(unsigned k)
{
    cct_point p = store_test_point(k);
    switch (k) {
    case 0:
        p.cfg.algo = p.cfg.proto = CCT_DEFAULT;
        p.nccl_algo = CCT_ALGO_PAT;
        p.nccl_proto = CCT_PROTO_LL128;
        break;
    case 1:
        p.status = CCT_POINT_UNSUPPORTED;
        p.stats.n = 0;
        p.stats.median_us = p.stats.p95_us = p.stats.min_us = NAN;
        p.stats.max_us = p.stats.mean_us = p.stats.cv = NAN;
        p.nccl_algo = p.nccl_proto = -1;
        break;
    case 2:
        p.bytes = (uint64_t)INT64_MAX;
        p.cfg.buffsize = (uint64_t)1 << 40;
        p.cfg.ll_buffsize = 123456789;
        p.cfg.ll128_buffsize = 987654321;
        p.cfg.align = 4095;
        p.cfg.coll = CCT_COLL_REDUCESCATTER;
        p.cfg.algo = CCT_ALGO_NVLS_TREE;
        p.cfg.proto = CCT_PROTO_SIMPLE;
        p.cfg.channels = 64;
        p.cfg.ranks = 1024;
        p.cfg.nodes = 128;
        p.cfg.dtype = CCT_DTYPE_BF16;
        break;
    case 3:
        p.status = CCT_POINT_HANG;
        p.wrong = (uint64_t)1 << 50;
        p.noisy = true;
        break;
    case 4:
        p.status = CCT_POINT_ERROR;
        break;
    case 5:
        p.status = CCT_POINT_CORRUPT;
        p.wrong = 7;
        p.stats.cv = 1e-300;
        p.stats.median_us = 0.1 + 0.2; /* not exactly representable: must still round-trip */
        break;
    }
    return p;
}

static void test_points_round_trip(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t run = new_run(s, "host-a", "plan-1");
    enum { N = 6 };
    double samples[N][5];
    size_t ns[N];
    for (unsigned k = 0; k < N; k++) {
        ns[k] = k == 1 ? 0 : 1 + k % 5;
        for (size_t j = 0; j < ns[k]; j++)
            samples[k][j] = 1.0 / (3.0 + k + j) + 1e-9 * j;
        cct_point p = edge_point(k);
        if (cct_store_add_point(s, run, &p, ns[k] ? samples[k] : NULL, ns[k], &err) != CCT_OK)
            fail_msg("edge point %u: %s", k, err.msg);
    }
    cct_store_close(s);

    s = open_ok(f->path, true);
    cct_point *pts = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_points(s, NULL, 0, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, N);
    for (unsigned k = 0; k < N; k++) {
        cct_point want = edge_point(k);
        const char *diff = store_test_point_diff(&pts[k], &want);
        if (diff)
            fail_msg("edge point %u differs in %s", k, diff);
        double *got = NULL;
        size_t m = 99;
        assert_int_equal(
            cct_store_load_samples(s, run, &want.cfg, want.bytes, want.in_place, &got, &m, &err),
            CCT_OK);
        assert_int_equal(m, ns[k]);
        for (size_t j = 0; j < m; j++)
            assert_memory_equal(&got[j], &samples[k][j], sizeof(double));
        if (m == 0)
            assert_null(got);
        free(got);
    }
    assert_true(isnan(pts[1].stats.median_us));
    free(pts);

    /* Samples of a point that is not stored: not found, naming the point. */
    cct_point absent = store_test_point(500);
    double *got = NULL;
    size_t m = 0;
    assert_int_equal(
        cct_store_load_samples(s, run, &absent.cfg, absent.bytes, absent.in_place, &got, &m, &err),
        CCT_ENOTFOUND);
    assert_null(got);
    assert_non_null(strstr(err.msg, "5024 B"));
    cct_store_close(s);
}

static void test_duplicate_refused(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t r1 = new_run(s, "host-a", "plan-1");
    int64_t r2 = new_run(s, "host-a", "plan-1");
    add_indexed(s, r1, 3);
    cct_point p = store_test_point(3);
    double other[2] = {1.0, 2.0};
    cct_error_clear(&err);
    assert_int_equal(cct_store_add_point(s, r1, &p, other, 2, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "already stored"));
    assert_non_null(strstr(err.msg, f->path));

    /* The first copy and its samples are untouched; nothing of the refused one remains. */
    double *smp = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_samples(s, r1, &p.cfg, p.bytes, p.in_place, &smp, &n, &err),
                     CCT_OK);
    assert_int_equal(n, store_test_n_samples(3));
    assert_true(smp[0] == store_test_sample(3, 0));
    free(smp);

    /* The same configuration in another run, or the other in_place, is a different point. */
    assert_int_equal(cct_store_add_point(s, r2, &p, other, 2, &err), CCT_OK);
    p.in_place = !p.in_place;
    assert_int_equal(cct_store_add_point(s, r1, &p, other, 2, &err), CCT_OK);
    cct_store_close(s);

    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM points"), 3);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM samples"),
                     (long long)store_test_n_samples(3) + 4);
    sqlite3_close(db);
}

static void test_has_point(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t r1 = new_run(s, "host-a", "plan-1");
    int64_t r2 = new_run(s, "host-a", "plan-1");
    cct_point p = store_test_point(6);
    bool found = true;
    assert_int_equal(cct_store_has_point(s, r1, &p.cfg, p.bytes, p.in_place, &found, &err), CCT_OK);
    assert_false(found);
    add_indexed(s, r1, 6);
    assert_int_equal(cct_store_has_point(s, r1, &p.cfg, p.bytes, p.in_place, &found, &err), CCT_OK);
    assert_true(found);
    assert_int_equal(cct_store_has_point(s, r2, &p.cfg, p.bytes, p.in_place, &found, &err), CCT_OK);
    assert_false(found);
    assert_int_equal(cct_store_has_point(s, r1, &p.cfg, p.bytes + 1, p.in_place, &found, &err),
                     CCT_OK);
    assert_false(found);
    assert_int_equal(cct_store_has_point(s, r1, &p.cfg, p.bytes, !p.in_place, &found, &err),
                     CCT_OK);
    assert_false(found);
    /* Each key dimension takes part in the lookup. */
    cct_config c = p.cfg;
    c.channels++;
    assert_int_equal(cct_store_has_point(s, r1, &c, p.bytes, p.in_place, &found, &err), CCT_OK);
    assert_false(found);
    c = p.cfg;
    c.align += 4;
    assert_int_equal(cct_store_has_point(s, r1, &c, p.bytes, p.in_place, &found, &err), CCT_OK);
    assert_false(found);
    c = p.cfg;
    c.proto = p.cfg.proto == CCT_DEFAULT ? CCT_PROTO_SIMPLE : CCT_DEFAULT;
    assert_int_equal(cct_store_has_point(s, r1, &c, p.bytes, p.in_place, &found, &err), CCT_OK);
    assert_false(found);
    c = p.cfg;
    c.coll = 42;
    assert_int_equal(cct_store_has_point(s, r1, &c, p.bytes, p.in_place, &found, &err), CCT_EINVAL);
    cct_store_close(s);
}

static void test_filter_by_run(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t r1 = new_run(s, "host-a", "plan-1");
    int64_t r2 = new_run(s, "host-b", "plan-2");
    for (unsigned i = 0; i < 5; i++)
        add_indexed(s, r1, i);
    for (unsigned i = 100; i < 103; i++)
        add_indexed(s, r2, i);

    cct_point *pts = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_points(s, &r2, 1, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pts[i].bytes, store_test_point(100 + (unsigned)i).bytes);
    free(pts);

    int64_t both[3] = {r2, r1, r2};
    assert_int_equal(cct_store_load_points(s, both, 3, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 8); /* r2 listed twice, loaded once, in the order asked */
    assert_int_equal(pts[0].bytes, store_test_point(100).bytes);
    assert_int_equal(pts[3].bytes, store_test_point(0).bytes);
    free(pts);

    assert_int_equal(cct_store_load_points(s, NULL, 0, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 8);
    assert_int_equal(pts[0].bytes, store_test_point(0).bytes);
    free(pts);

    int64_t missing = r2 + 7;
    pts = (cct_point *)1;
    assert_int_equal(cct_store_load_points(s, &missing, 1, &pts, &n, &err), CCT_ENOTFOUND);
    assert_null(pts);
    assert_int_equal(n, 0);
    expect_indexed(s, r1, 5);
    cct_store_close(s);
}

static void test_invalid_values_refused(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t run = new_run(s, "host-a", "plan-1");
    double nan_sample[2] = {1.0, NAN};
    cct_point p = store_test_point(1);
    assert_int_equal(cct_store_add_point(s, run, &p, nan_sample, 2, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "sample"));
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 3, &err), CCT_EINVAL);
    p.cfg.coll = CCT_NUM_COLLS;
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "collective"));
    p = store_test_point(1);
    p.cfg.algo = CCT_NUM_ALGOS;
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EINVAL);
    p = store_test_point(1);
    p.cfg.dtype = 7;
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EINVAL);
    p = store_test_point(1);
    p.bytes = (uint64_t)INT64_MAX + 1;
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "2^63"));
    p = store_test_point(1);
    p.status = 9;
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EINVAL);
    p = store_test_point(1);
    p.nccl_proto = 3;
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EINVAL);
    cct_store_run r;
    assert_int_equal(cct_store_get_run(s, run, &r, &err), CCT_OK);
    assert_int_equal(r.n_points, 0);
    cct_store_close(s);
}

/* A store from a newer ccltune: refused by both kinds of open, and left byte-identical. */
static void test_newer_schema_refused(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    add_indexed(s, new_run(s, "host-a", "plan-1"), 0);
    cct_store_close(s);
    assert_int_equal(store_test_sql(f->path, "PRAGMA user_version = 99; "
                                             "CREATE TABLE future_thing (x INTEGER);"),
                     SQLITE_OK);
    size_t len0, len1;
    unsigned char *before = store_test_slurp(f->path, &len0);
    assert_non_null(before);
    for (int ro = 0; ro <= 1; ro++) {
        cct_error err;
        s = (cct_store *)1;
        assert_int_equal(cct_store_open(f->path, ro, &s, &err), CCT_EUNSUPPORTED);
        assert_null(s);
        assert_non_null(strstr(err.msg, f->path));
        assert_non_null(strstr(err.msg, "newer ccltune"));
        assert_non_null(strstr(err.msg, "schema 99"));
        char upto[32];
        snprintf(upto, sizeof upto, "reads up to %d)", CCT_STORE_SCHEMA_VERSION);
        assert_non_null(strstr(err.msg, upto));
        print_message("%s\n", err.msg);
    }
    unsigned char *after = store_test_slurp(f->path, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    free(before);
    free(after);
}

static void expect_foreign(const char *path)
{
    size_t len0, len1;
    unsigned char *before = store_test_slurp(path, &len0);
    for (int ro = 0; ro <= 1; ro++) {
        cct_store *s = (cct_store *)1;
        cct_error err;
        assert_int_equal(cct_store_open(path, ro, &s, &err), CCT_ESTORE);
        assert_null(s);
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, "not a ccltune store"));
        print_message("%s\n", err.msg);
    }
    unsigned char *after = store_test_slurp(path, &len1);
    assert_int_equal(len0, len1);
    if (len0)
        assert_memory_equal(before, after, len0);
    free(before);
    free(after);
}

static void test_foreign_files_refused(void **state)
{
    fixture *f = *state;
    char p[400];
    snprintf(p, sizeof p, "%s/other.db", f->dir);
    assert_int_equal(store_test_sql(p, "CREATE TABLE users (name TEXT); "
                                       "INSERT INTO users VALUES ('ada');"),
                     SQLITE_OK);
    expect_foreign(p);

    /* Another application's user_version must not pass for a newer ccltune schema. */
    snprintf(p, sizeof p, "%s/versioned.db", f->dir);
    assert_int_equal(store_test_sql(p, "CREATE TABLE t (x); PRAGMA user_version = 99;"), SQLITE_OK);
    expect_foreign(p);

    /* A meta table that names another application. */
    snprintf(p, sizeof p, "%s/meta.db", f->dir);
    assert_int_equal(store_test_sql(p, "CREATE TABLE meta (key TEXT, value TEXT); "
                                       "INSERT INTO meta VALUES ('application', 'other');"),
                     SQLITE_OK);
    expect_foreign(p);

    /* Not SQLite at all: a YAML table given by mistake. */
    snprintf(p, sizeof p, "%s/table.yaml", f->dir);
    FILE *y = fopen(p, "w");
    assert_non_null(y);
    for (int i = 0; i < 200; i++)
        fprintf(y, "ccltune_table: 1\ncollectives: {}\n");
    fclose(y);
    expect_foreign(p);

    /* Our tables restored from a dump lose the header ids: refused, with a hint. */
    cct_store *s = open_ok(f->path, false);
    cct_store_close(s);
    assert_int_equal(store_test_sql(f->path, "PRAGMA user_version = 0; "
                                             "PRAGMA application_id = 0;"),
                     SQLITE_OK);
    cct_error err;
    assert_int_equal(cct_store_open(f->path, false, &s, &err), CCT_ESTORE);
    assert_non_null(strstr(err.msg, "dump"));
    print_message("%s\n", err.msg);
}

static void test_read_only_flag(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    add_indexed(s, run, 0);
    cct_store_close(s);

    s = open_ok(f->path, true);
    cct_error err;
    expect_indexed(s, run, 1);
    cct_point p = store_test_point(1);
    assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_EIO);
    assert_non_null(strstr(err.msg, f->path));
    print_message("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "read-only"));
    cct_store_run r;
    memset(&r, 0, sizeof r);
    r.fingerprint_id = 1;
    assert_int_equal(cct_store_begin_run(s, &r, &err), CCT_EIO);
    assert_int_equal(cct_store_finish_run(s, run, CCT_RUN_DONE, &err), CCT_EIO);
    int64_t id;
    cct_store_fingerprint fp = store_test_fingerprint("host-z");
    assert_int_equal(cct_store_put_fingerprint(s, &fp, &id, &err), CCT_EIO);
    cct_store_close(s);

    /* An empty file opened read-only is not a store, and is not turned into one. */
    char p2[400];
    snprintf(p2, sizeof p2, "%s/empty.db", f->dir);
    fclose(fopen(p2, "w"));
    assert_int_equal(cct_store_open(p2, true, &s, &err), CCT_ESTORE);
    struct stat sb;
    assert_int_equal(stat(p2, &sb), 0);
    assert_int_equal(sb.st_size, 0);
}

/* What a child that opened a store as another user saw. */
typedef struct child_view {
    cct_error err;    /* err.code: the status of cct_store_open */
    long long points; /* points it could load, -1 if it could not */
} child_view;

/* Open path as an unprivileged user (root ignores file modes) in a child and load its
 * points; the child sends back what it saw through a pipe.  Returns false if privileges
 * could not be dropped. */
static bool open_as_nobody(const char *path, bool read_only, child_view *view)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        cct_store *s = NULL;
        child_view v;
        memset(&v, 0, sizeof v); /* the whole struct crosses the pipe */
        v.points = -1;
        v.err.code = cct_store_open(path, read_only, &s, &v.err);
        cct_point *pts = NULL;
        size_t n = 0;
        cct_error e2;
        if (s && cct_store_load_points(s, NULL, 0, &pts, &n, &e2) == CCT_OK)
            v.points = (long long)n;
        free(pts);
        cct_store_close(s);
        ssize_t w = write(fds[1], &v, sizeof v);
        _exit(w == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fds[1]);
    int status = 0;
    ssize_t got = read(fds[0], view, sizeof *view);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        return false;
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(got, sizeof *view);
    return true;
}

static void test_read_only_file(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    add_indexed(s, run, 0);
    add_indexed(s, run, 1);
    cct_store_close(s);
    assert_int_equal(chmod(f->dir, 0755), 0);
    assert_int_equal(chmod(f->path, 0444), 0);
    size_t len0, len1;
    unsigned char *before = store_test_slurp(f->path, &len0);

    child_view v;
    if (!open_as_nobody(f->path, false, &v)) {
        free(before);
        skip(); /* running as root without the right to drop privileges */
    }
    print_message("%s\n", v.err.msg);
    assert_int_equal(v.err.code, CCT_EIO);
    assert_non_null(strstr(v.err.msg, f->path));
    assert_non_null(strstr(v.err.msg, "read-only"));
    assert_int_equal(v.points, -1);

    /* Reading it is still possible. */
    assert_true(open_as_nobody(f->path, true, &v));
    if (v.err.code != CCT_OK)
        fail_msg("read-only open: %s", v.err.msg);
    assert_int_equal(v.points, 2);
    unsigned char *after = store_test_slurp(f->path, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    free(before);
    free(after);
}

static void test_read_only_directory(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    add_indexed(s, run, 0);
    cct_store_close(s);
    /* The file is writable but its directory is not: the WAL files cannot be created. */
    if (geteuid() == 0)
        assert_int_equal(chown(f->path, 65534, 65534), 0);
    assert_int_equal(chmod(f->dir, 0555), 0);

    child_view w, r;
    bool dropped = open_as_nobody(f->path, false, &w) && open_as_nobody(f->path, true, &r);
    assert_int_equal(chmod(f->dir, 0755), 0);
    if (!dropped)
        skip();
    print_message("%s\n", w.err.msg);
    assert_int_equal(w.err.code, CCT_EIO);
    assert_non_null(strstr(w.err.msg, f->path));
    assert_non_null(strstr(w.err.msg, "directory"));
    /* A cleanly closed store can still be read there (nothing is left in a -wal file). */
    if (r.err.code != CCT_OK)
        fail_msg("read-only open: %s", r.err.msg);
    assert_int_equal(r.points, 1);

    s = open_ok(f->path, false);
    expect_indexed(s, run, 1);
    cct_store_close(s);
}

/* A store left by a killed writer (with -wal and -shm) in a directory the reader cannot
 * write: readable through the existing -shm; without it, a clear error, not a wrong read. */
static void test_read_only_after_crash(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    cct_store_close(s);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cct_store *c = NULL;
        cct_error e;
        if (cct_store_open(f->path, false, &c, &e) != CCT_OK)
            _exit(2);
        cct_point p = store_test_point(0);
        double smp = 1.5;
        if (cct_store_add_point(c, run, &p, &smp, 1, &e) != CCT_OK)
            _exit(3);
        raise(SIGKILL); /* leaves the point only in the -wal file */
        _exit(4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char shm[400], wal[400];
    snprintf(shm, sizeof shm, "%s-shm", f->path);
    snprintf(wal, sizeof wal, "%s-wal", f->path);
    assert_int_equal(access(wal, F_OK), 0);
    assert_int_equal(chmod(f->dir, 0755), 0);

    child_view v;
    if (!open_as_nobody(f->path, true, &v))
        skip();
    if (v.err.code != CCT_OK)
        fail_msg("read-only open after a crash: %s", v.err.msg);
    assert_int_equal(v.points, 1); /* the committed point, read from the -wal */

    assert_int_equal(unlink(shm), 0);
    assert_true(open_as_nobody(f->path, true, &v));
    print_message("%s\n", v.err.msg);
    assert_int_equal(v.err.code, CCT_EIO);
    assert_non_null(strstr(v.err.msg, wal));

    s = open_ok(f->path, false); /* the owner's next open recovers the -wal */
    cct_point *pts = NULL;
    size_t n = 0;
    cct_error err;
    assert_int_equal(cct_store_load_points(s, &run, 1, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 1);
    free(pts);
    cct_store_close(s);
}

/* A new store where none can be created: refused at open, naming the path. */
static void test_unwritable_new_path(void **state)
{
    fixture *f = *state;
    char missing[400];
    snprintf(missing, sizeof missing, "%s/no/such/dir/m.db", f->dir);
    cct_store *s = NULL;
    cct_error err;
    assert_int_equal(cct_store_open(missing, false, &s, &err), CCT_EIO);
    assert_null(s);
    assert_non_null(strstr(err.msg, missing));
    assert_int_equal(cct_store_open(f->dir, false, &s, &err), CCT_EINVAL); /* a directory */
    assert_non_null(strstr(err.msg, f->dir));
    assert_non_null(strstr(err.msg, "is a folder, not a store file"));
    assert_int_equal(cct_store_open(f->dir, true, &s, &err), CCT_EINVAL); /* read-only too */

    /* A directory we may not write into. */
    assert_int_equal(chmod(f->dir, 0555), 0);
    child_view v;
    bool dropped = open_as_nobody(f->path, false, &v);
    assert_int_equal(chmod(f->dir, 0755), 0);
    if (!dropped)
        skip();
    print_message("%s\n", v.err.msg);
    assert_int_equal(v.err.code, CCT_EIO);
    assert_non_null(strstr(v.err.msg, f->path));
    assert_non_null(strstr(v.err.msg, "not writable"));
    assert_int_equal(access(f->path, F_OK), -1);
}

/* SQLITE_FULL, simulated by capping the database's pages at what it has now. */
static void test_disk_full(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t run = new_run(s, "host-a", "plan-1");
    for (unsigned i = 0; i < 20; i++)
        add_indexed(s, run, i);
    long long pages = store_test_sql_int(s->db, "PRAGMA page_count");
    assert_true(pages > 0);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", pages);
    assert_int_equal(sqlite3_exec(s->db, sql, NULL, NULL, NULL), SQLITE_OK);

    enum { BIG = 20000 }; /* far more samples than fit in the pages left */
    double *many = malloc(BIG * sizeof *many);
    assert_non_null(many);
    for (size_t k = 0; k < BIG; k++)
        many[k] = 1.0 + (double)k;
    cct_point p = store_test_point(20);
    cct_error_clear(&err);
    assert_int_equal(cct_store_add_point(s, run, &p, many, BIG, &err), CCT_EIO);
    assert_non_null(strstr(err.msg, f->path));
    assert_non_null(strstr(err.msg, "disk is full"));
    assert_non_null(strstr(err.msg, "intact"));
    print_message("%s\n", err.msg);

    /* Nothing of the failed point, everything before it, and the handle still works. */
    bool found = true;
    assert_int_equal(cct_store_has_point(s, run, &p.cfg, p.bytes, p.in_place, &found, &err),
                     CCT_OK);
    assert_false(found);
    expect_indexed(s, run, 20);
    assert_int_equal(store_test_sql_int(s->db, "SELECT count(*) FROM samples WHERE point_id "
                                               "NOT IN (SELECT id FROM points)"),
                     0);
    assert_int_equal(sqlite3_exec(s->db, "PRAGMA max_page_count = 1073741823", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(cct_store_add_point(s, run, &p, many, BIG, &err), CCT_OK);
    free(many);
    cct_store_close(s);

    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM samples WHERE point_id = "
                                            "(SELECT max(id) FROM points)"),
                     BIG);
    sqlite3_close(db);
}

/* A real write failure: the file size limit (RLIMIT_FSIZE) stops the WAL from growing.
 * Done in a child so the limit and SIGXFSZ do not reach the test runner. */
static void test_write_error(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    for (unsigned i = 0; i < 10; i++)
        add_indexed(s, run, i);
    cct_store_close(s);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);
        cct_error e;
        memset(&e, 0, sizeof e); /* the whole struct crosses the pipe */
        cct_store *c = NULL;
        if (cct_store_open(f->path, false, &c, &e) != CCT_OK)
            _exit(2);
        struct rlimit lim = {256 * 1024, 256 * 1024};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(3);
        enum { BIG = 100000 };
        double *many = malloc(BIG * sizeof *many);
        for (size_t k = 0; many && k < BIG; k++)
            many[k] = 2.0 + (double)k;
        cct_point p = store_test_point(10);
        e.code = many ? cct_store_add_point(c, run, &p, many, BIG, &e) : CCT_ENOMEM;
        cct_store_close(c);
        free(many);
        ssize_t w = write(fds[1], &e, sizeof e);
        _exit(w == (ssize_t)sizeof e ? 0 : 1);
    }
    close(fds[1]);
    cct_error err;
    ssize_t got = read(fds[0], &err, sizeof err);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(got, sizeof err);
    assert_int_equal(err.code, CCT_EIO);
    assert_non_null(strstr(err.msg, f->path));
    assert_true(strstr(err.msg, "I/O error") || strstr(err.msg, "disk is full"));
    print_message("%s\n", err.msg);

    s = open_ok(f->path, false);
    expect_indexed(s, run, 10);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    add_indexed(s, run, 10); /* the failed point can be measured again */
    cct_store_close(s);
}

static void test_point_summary_busbw(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    cct_error err;
    int64_t run = new_run(s, "host-a", "plan-1");
    static const struct {
        int coll, ranks;
        uint64_t bytes;
        double median_us;
    } cases[] = {
        {CCT_COLL_ALLREDUCE, 8, 1 << 20, 50.0},    {CCT_COLL_ALLREDUCE, 4, 65536, 180.5},
        {CCT_COLL_ALLGATHER, 4, 1 << 24, 1234.25}, {CCT_COLL_REDUCESCATTER, 2, 4096, 20.0},
        {CCT_COLL_BROADCAST, 8, 8 << 20, 333.0},   {CCT_COLL_REDUCE, 3, 12345, 7.5},
        {CCT_COLL_ALLREDUCE, 1, 1024, 5.0},        {CCT_COLL_ALLREDUCE, 4, 2048, NAN},
    };
    size_t ncases = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < ncases; i++) {
        cct_point p = store_test_point((unsigned)i);
        p.cfg.coll = cases[i].coll;
        p.cfg.ranks = cases[i].ranks;
        p.bytes = cases[i].bytes;
        p.stats.median_us = cases[i].median_us;
        assert_int_equal(cct_store_add_point(s, run, &p, NULL, 0, &err), CCT_OK);
    }
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(s->db,
                                        "SELECT coll, ranks, bytes, busbw_gbps, algbw_gbps, gpu "
                                        "FROM point_summary ORDER BY point_id",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < ncases; i++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), cct_coll_name(cases[i].coll));
        assert_string_equal((const char *)sqlite3_column_text(st, 5), "NVIDIA H200");
        if (isnan(cases[i].median_us)) {
            assert_int_equal(sqlite3_column_type(st, 3), SQLITE_NULL);
            continue;
        }
        double algbw = (double)cases[i].bytes / 1e9 / (cases[i].median_us / 1e6);
        double busbw = algbw * cct_busbw_factor(cases[i].coll, cases[i].ranks);
        double got = sqlite3_column_double(st, 3);
        assert_true(fabs(sqlite3_column_double(st, 4) - algbw) <= 1e-12 * algbw);
        if (fabs(got - busbw) > 1e-12 * fabs(busbw) + 1e-15)
            fail_msg("case %zu: busbw %.17g, expected %.17g", i, got, busbw);
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    cct_store_close(s);
}

/* A grouped or registered measurement is another point than the plain one with the same
 * key: both are stored, found and loaded apart. */
static void test_call_modes_are_keys(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    cct_point plain = store_test_point(2);
    cct_error err;
    assert_int_equal(plain.cfg.pipe_ops, 0);
    assert_false(plain.cfg.reg_buff);
    cct_point grouped = plain, registered = plain;
    grouped.cfg.pipe_ops = 4;
    grouped.stats.median_us = 7.0;
    registered.cfg.reg_buff = true;
    registered.stats.median_us = 9.0;
    bool found = true;
    assert_int_equal(cct_store_add_point(s, run, &plain, NULL, 0, &err), CCT_OK);
    assert_int_equal(
        cct_store_has_point(s, run, &grouped.cfg, grouped.bytes, grouped.in_place, &found, &err),
        CCT_OK);
    assert_false(found);
    assert_int_equal(cct_store_add_point(s, run, &grouped, NULL, 0, &err), CCT_OK);
    assert_int_equal(cct_store_add_point(s, run, &registered, NULL, 0, &err), CCT_OK);
    assert_int_equal(cct_store_add_point(s, run, &grouped, NULL, 0, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "grouped"));
    cct_point *pts = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_points(s, &run, 1, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 3);
    assert_null(store_test_point_diff(&pts[0], &plain));
    assert_null(store_test_point_diff(&pts[1], &grouped));
    assert_null(store_test_point_diff(&pts[2], &registered));
    free(pts);
    cct_point bad = plain;
    bad.cfg.pipe_ops = -2;
    assert_int_equal(cct_store_add_point(s, run, &bad, NULL, 0, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "pipe_ops"));
    cct_store_close(s);
}

/* A forced chunk is another point than NCCL's own chunk at the same key; the chunk NCCL ran
 * and where that came from read back as written. */
static void test_chunk_is_a_key(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    cct_point own = store_test_point(2);
    cct_error err;
    cct_point asked = own, observed = own;
    asked.cfg.chunk = 300000;
    asked.chunk_used = 299520; /* rounded down to Simple's 512-byte grain */
    asked.stats.median_us = 7.0;
    observed.cfg.chunk = 65536;
    observed.chunk_used = 65536;
    observed.chunk_observed = true;
    bool found = true;
    assert_int_equal(cct_store_add_point(s, run, &own, NULL, 0, &err), CCT_OK);
    assert_int_equal(
        cct_store_has_point(s, run, &asked.cfg, asked.bytes, asked.in_place, &found, &err), CCT_OK);
    assert_false(found);
    assert_int_equal(cct_store_add_point(s, run, &asked, NULL, 0, &err), CCT_OK);
    assert_int_equal(cct_store_add_point(s, run, &observed, NULL, 0, &err), CCT_OK);
    assert_int_equal(cct_store_add_point(s, run, &asked, NULL, 0, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "chunk 300000"));
    cct_point *pts = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_points(s, &run, 1, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 3);
    assert_null(store_test_point_diff(&pts[0], &own));
    assert_null(store_test_point_diff(&pts[1], &asked));
    assert_null(store_test_point_diff(&pts[2], &observed));
    assert_int_equal(pts[0].cfg.chunk, 0);
    assert_int_equal(pts[0].chunk_used, 0);
    free(pts);
    cct_store_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM point_summary WHERE "
                                            "chunk_source = 'computed' AND chunk_used = 299520"),
                     1);
    sqlite3_close(db);
}

/* Write the first `keep` bytes of from (all when negative) to to. */
static void truncated_copy(const char *from, const char *to, long keep)
{
    size_t len = 0;
    unsigned char *data = store_test_slurp(from, &len);
    assert_non_null(data);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    size_t n = keep < 0 || (size_t)keep > len ? len : (size_t)keep;
    assert_int_equal(fwrite(data, 1, n, out), n);
    assert_int_equal(fclose(out), 0);
    free(data);
}

/* A committed store is read as it is from its .gz (in memory, no file beside it): the same
 * points as its decompressed copy, WAL header and all; it cannot be opened for writing, and
 * a cut-short or missing .gz is a clear error, never a crash or an empty store. */
static void test_gz_store_is_read_in_place(void **state)
{
    fixture *f = *state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    if (!src)
        skip();
    const char *stores[] = {"search-2ranks.db.gz", "run-2026-11-29d/exhaustive-nvlink-4.db.gz"};
    for (size_t k = 0; k < 2; k++) {
        char gz[512], local[400];
        snprintf(gz, sizeof gz, "%s/data/h200/%s", src, stores[k]);
        snprintf(local, sizeof local, "%s/copy.db.gz", f->dir);
        truncated_copy(gz, local, -1); /* read from a folder the test watches */
        assert_true(recorded_copy(gz, f->path));
        cct_error err;
        cct_point *plain = NULL, *packed = NULL;
        size_t n_plain = 0, n_packed = 0;
        cct_store *s = open_ok(f->path, true);
        assert_int_equal(cct_store_load_points(s, NULL, 0, &plain, &n_plain, &err), CCT_OK);
        cct_store_close(s);
        s = open_ok(local, true);
        assert_int_equal(cct_store_load_points(s, NULL, 0, &packed, &n_packed, &err), CCT_OK);
        cct_store_close(s);
        assert_true(n_plain > 1000);
        assert_int_equal(n_packed, n_plain);
        for (size_t i = 0; i < n_plain; i++) {
            const char *diff = store_test_point_diff(&packed[i], &plain[i]);
            if (diff)
                fail_msg("%s: point %zu differs in %s", stores[k], i, diff);
        }
        free(plain);
        free(packed);
        char side[420];
        snprintf(side, sizeof side, "%s-wal", local);
        assert_int_equal(access(side, F_OK), -1);
        snprintf(side, sizeof side, "%s-shm", local);
        assert_int_equal(access(side, F_OK), -1);

        assert_int_equal(cct_store_open(local, false, &s, &err), CCT_EINVAL);
        assert_null(s);
        assert_non_null(strstr(err.msg, "compressed"));
        assert_non_null(strstr(err.msg, local));

        truncated_copy(gz, local, 4096);
        assert_int_equal(cct_store_open(local, true, &s, &err), CCT_ESTORE);
        assert_null(s);
        assert_non_null(strstr(err.msg, "cannot be decompressed"));
        assert_int_equal(unlink(local), 0);
        assert_int_equal(cct_store_open(local, true, &s, &err), CCT_ENOTFOUND);
        assert_non_null(strstr(err.msg, local));
    }
    /* a gzip file that holds something other than a store */
    char text[400];
    snprintf(text, sizeof text, "%s/notes.db.gz", f->dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "echo 'not a store' | gzip -c > '%s'", text);
    assert_int_equal(system(cmd), 0);
    cct_store *s = NULL;
    cct_error err;
    assert_int_not_equal(cct_store_open(text, true, &s, &err), CCT_OK);
    assert_null(s);
    assert_non_null(strstr(err.msg, text));
}

/* A committed version 1 store (real H200 measurements) is read as it is when opened
 * read-only, and upgraded in place when opened for writing: every point comes back the same,
 * as a plain call, with its samples, and new points with call modes can then be added. */
static void test_version1_store_migrates(void **state)
{
    fixture *f = *state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    if (!src)
        skip();
    char committed[512];
    snprintf(committed, sizeof committed, "%s/data/h200/search-2ranks.db.gz", src);
    assert_true(recorded_copy(committed, f->path));
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "PRAGMA user_version"), 1);
    long long samples_before = store_test_sql_int(db, "SELECT count(*) FROM samples");
    sqlite3_close(db);
    assert_true(samples_before > 0);

    cct_error err;
    cct_point *old = NULL, *now = NULL;
    size_t n_old = 0, n_now = 0;
    cct_store *s = open_ok(f->path, true);
    assert_int_equal(cct_store_load_points(s, NULL, 0, &old, &n_old, &err), CCT_OK);
    assert_true(n_old > 100);
    char *log = (char *)"stale";
    assert_int_equal(cct_store_get_nccl_log(s, 1, &log, &err), CCT_OK); /* no nccl_logs table */
    assert_null(log);
    cct_store_close(s);
    for (size_t i = 0; i < n_old; i++) {
        assert_int_equal(old[i].cfg.pipe_ops, 0);
        assert_false(old[i].cfg.reg_buff);
        assert_int_equal(old[i].tuner_pipe_ops, 0);
        assert_int_equal(old[i].cfg.chunk, 0); /* before chunk sizes: NCCL's own */
        assert_int_equal(old[i].chunk_used, 0);
    }

    s = open_ok(f->path, false); /* upgrades */
    assert_int_equal(cct_store_load_points(s, NULL, 0, &now, &n_now, &err), CCT_OK);
    assert_int_equal(n_now, n_old);
    for (size_t i = 0; i < n_old; i++) {
        const char *diff = store_test_point_diff(&now[i], &old[i]);
        if (diff)
            fail_msg("point %zu changed in %s by the upgrade", i, diff);
    }
    double *smp = NULL;
    size_t ns = 0;
    assert_int_equal(
        cct_store_load_samples(s, 1, &old[0].cfg, old[0].bytes, old[0].in_place, &smp, &ns, &err),
        CCT_OK);
    assert_true(ns > 0 || old[0].stats.n == 0);
    free(smp);
    cct_point grouped = old[0], chunked = old[0];
    grouped.cfg.pipe_ops = 4;
    chunked.cfg.chunk = 131072;
    chunked.chunk_used = 131072;
    int64_t run = new_run(s, "host-b", "plan-2");
    assert_int_equal(cct_store_add_point(s, run, &grouped, NULL, 0, &err), CCT_OK);
    assert_int_equal(cct_store_add_point(s, run, &chunked, NULL, 0, &err), CCT_OK);
    assert_int_equal(cct_store_put_nccl_log(s, 1, 2, 2, "upgraded", &err), CCT_OK);
    cct_store_close(s);
    free(old);
    free(now);

    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "PRAGMA user_version"), CCT_STORE_SCHEMA_VERSION);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM samples"), samples_before);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM points WHERE pipe_ops <> 1 OR "
                                            "reg_buff <> 0"),
                     1);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM points WHERE chunk <> 0"), 1);
    assert_true(store_test_sql_int(db, "SELECT count(*) FROM point_summary") > 100);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM nccl_logs WHERE run_id = 1"), 1);
    sqlite3_close(db);
}

/* NCCL's model printout: stored per run, read back byte for byte, replaced by a second put
 * (ranks and nodes each in their own column); a run without one reads as NULL; bad calls
 * are refused with a sentence. */
static void test_nccl_log_round_trip(void **state)
{
    fixture *f = *state;
    cct_store *s = open_ok(f->path, false);
    int64_t run = new_run(s, "host-a", "plan-1");
    int64_t other = new_run(s, "host-a", "plan-2");
    cct_error err;
    char *text = (char *)"stale";
    assert_int_equal(cct_store_get_nccl_log(s, run, &text, &err), CCT_OK);
    assert_null(text);
    const char *log = "vm:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1\n"
                      "vm:1:1 [0] NCCL INFO   Algorithm   |  Tree  |\n";
    assert_int_equal(cct_store_put_nccl_log(s, run, 2, 2, "first", &err), CCT_OK);
    assert_int_equal(cct_store_put_nccl_log(s, run, 4, 2, log, &err), CCT_OK);
    assert_int_equal(cct_store_get_nccl_log(s, run, &text, &err), CCT_OK);
    assert_non_null(text);
    assert_string_equal(text, log);
    free(text);
    assert_int_equal(cct_store_get_nccl_log(s, other, &text, &err), CCT_OK);
    assert_null(text);

    assert_int_equal(cct_store_put_nccl_log(s, 999, 2, 2, log, &err), CCT_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no run 999"));
    assert_int_equal(cct_store_put_nccl_log(s, run, 2, 2, "", &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "NCCL printed nothing"));
    assert_int_equal(cct_store_put_nccl_log(s, run, 0, 2, log, &err), CCT_EINVAL);
    assert_int_equal(cct_store_get_nccl_log(s, run, NULL, &err), CCT_EINVAL);
    cct_store_close(s);

    s = open_ok(f->path, true); /* readers see it too */
    assert_int_equal(cct_store_get_nccl_log(s, run, &text, &err), CCT_OK);
    assert_string_equal(text, log);
    free(text);
    cct_store_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(store_test_sql_int(db, "SELECT count(*) FROM nccl_logs"), 1);
    assert_int_equal(store_test_sql_int(db, "SELECT ranks * 10 + nodes FROM nccl_logs"), 42);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_missing_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fingerprint_dedup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_points_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_has_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_by_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_values_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_files_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_after_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_new_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_point_summary_busbw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_modes_are_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version1_store_migrates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunk_is_a_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gz_store_is_read_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nccl_log_round_trip, setup, teardown),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
