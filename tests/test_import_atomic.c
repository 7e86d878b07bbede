/*
 * test_import_atomic.c - an import is all or nothing, and a failed run feeds no fit unless
 * asked.
 *
 * Through the built `ccltune` (CCT_CCLTUNE, cli_test_util.h): `import --dry-run` refuses
 * what the import refuses (a size the store cannot hold), with the same message; an import
 * whose store write fails half way (the disk fills: tests/fault/fault_enospc.so under
 * LD_PRELOAD) leaves the store holding exactly what it held before, and no run behind; a
 * store batch rolled back by a refused write leaves nothing (cct_store_begin_batch); and
 * `ccltune fit` leaves runs marked failed out, says so, and uses them only with
 * --include-failed (naming one with --run without the flag is an error).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "import_test_util.h"

#include "cli_test_util.h"

#include "cct_store.h"

#define GOOD "data/nccl-tests/allreduce_ring_simple_2.19.txt"
#define OTHER "data/h200/nccl-tests/all_reduce_2ranks_default.json"

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static ct_result run(const char *const *args)
{
    assert_non_null(getenv("CCT_CCLTUNE"));
    ct_result r = ct_run(args);
    assert_true(r.out && r.err);
    return r;
}

/* Runs of the store (state of each in states[], up to 8) and points of all of them. */
static size_t store_runs(const char *path, int *states, size_t *points)
{
    cct_store *s = NULL;
    cct_error err;
    if (cct_store_open(path, true, &s, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_store_run *runs = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_list_runs(s, &runs, &n, &err), CCT_OK);
    for (size_t i = 0; i < n && i < 8; i++)
        states[i] = runs[i].state;
    cct_point *p = NULL;
    assert_int_equal(cct_store_load_points(s, NULL, 0, &p, points, &err), CCT_OK);
    free(p);
    free(runs);
    cct_store_close(s);
    return n;
}

/* The log of a size above INT64_MAX: refused by the dry run as by the import, alike. */
static void dry_run_refuses_what_import_refuses(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("import-atomic");
    char *store = join(dir, "m.db");
    char *log = tu_path("bad_logs/size_above_int64.txt");
    const char *dry[] = {"import", "--dry-run", "--store", store, log, NULL};
    const char *real[] = {"import", "--store", store, log, NULL};
    ct_result d = run(dry), r = run(real);
    assert_int_equal(d.status, 1);
    assert_int_equal(r.status, 1);
    tu_assert_contains(d.err, "size_above_int64.txt:30:1: size 18446744073709551615 is above");
    assert_string_equal(d.err, r.err);
    struct stat st;
    assert_int_not_equal(stat(store, &st), 0); /* never opened */
    ct_result_free(&d);
    ct_result_free(&r);
    free(log);
    free(store);
    ct_rm_rf(dir);
    free(dir);
}

/* The disk fills while the second import writes: exit 1, and the store is as it was. */
static void full_disk_leaves_store_as_it_was(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("import-atomic");
    char *store = join(dir, "m.db");
    char *good = tu_path(GOOD), *other = tu_path(OTHER);
    const char *first[] = {"import", "--store", store, good, NULL};
    ct_result r = run(first);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    int states[8];
    size_t points_before, points_after;
    assert_int_equal(store_runs(store, states, &points_before), 1);

    /* a budget that lets a point-by-point import commit its run and some points */
    const char *lib = getenv("CCT_FAULT_LIB");
    assert_non_null(lib);
    setenv("LD_PRELOAD", lib, 1);
    setenv("CCT_FAULT_PATH", store, 1);
    setenv("CCT_FAULT_ENOSPC_AFTER", "25000", 1);
    const char *asan = getenv("ASAN_OPTIONS"); /* the preload comes before ASan's runtime */
    char *asan_old = asan ? strdup(asan) : NULL;
    char asan_new[2048];
    snprintf(asan_new, sizeof asan_new, "%s%sverify_asan_link_order=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_new, 1);
    const char *second[] = {"import", "--nodes", "1", "--store", store, other, NULL};
    r = run(second);
    unsetenv("LD_PRELOAD");
    unsetenv("CCT_FAULT_PATH");
    unsetenv("CCT_FAULT_ENOSPC_AFTER");
    if (asan_old)
        setenv("ASAN_OPTIONS", asan_old, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(asan_old);
    assert_int_equal(r.status, 1);
    tu_assert_contains(r.err, "nothing imported");
    ct_result_free(&r);
    assert_int_equal(store_runs(store, states, &points_after), 1);
    assert_int_equal(states[0], CCT_RUN_DONE);
    assert_int_equal(points_after, points_before);

    /* with space again the same import goes in whole */
    r = run(second);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    assert_int_equal(store_runs(store, states, &points_after), 2);
    assert_int_equal(points_after, points_before + 30);
    free(good);
    free(other);
    free(store);
    ct_rm_rf(dir);
    free(dir);
}

/* A write refused inside a batch rolls back everything the batch wrote before it. */
static void refused_write_rolls_back_the_batch(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("import-atomic");
    char *path = join(dir, "m.db");
    cct_store *s = NULL;
    cct_error err;
    assert_int_equal(cct_store_open(path, false, &s, &err), CCT_OK);
    cct_import_result r;
    assert_int_equal(tu_import(GOOD, NULL, &r, &err), CCT_OK);
    cct_store_fingerprint fp = {.gpu = "g", .nodes = 1, .gpus_per_node = 4, .ranks_per_gpu = 1};
    cct_store_run run = {.tool = "t", .source = "nccl-tests"};
    assert_int_equal(cct_store_begin_batch(s, &err), CCT_OK);
    assert_int_equal(cct_store_put_fingerprint(s, &fp, &run.fingerprint_id, &err), CCT_OK);
    assert_int_equal(cct_store_begin_run(s, &run, &err), CCT_OK);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(cct_store_add_point(s, run.id, &r.points[i], NULL, 0, &err), CCT_OK);
    /* the same point again: refused, and with it the whole batch */
    assert_int_equal(cct_store_add_point(s, run.id, &r.points[0], NULL, 0, &err), CCT_EINVAL);
    assert_int_not_equal(cct_store_add_point(s, run.id, &r.points[4], NULL, 0, &err), CCT_OK);
    assert_int_not_equal(cct_store_end_batch(s, true, &err), CCT_OK);
    tu_assert_contains(err.msg, "rolled back");
    cct_store_close(s);
    int states[8];
    size_t points;
    assert_int_equal(store_runs(path, states, &points), 0);
    assert_int_equal(points, 0);
    cct_import_result_destroy(&r);
    free(path);
    ct_rm_rf(dir);
    free(dir);
}

/* Ending a batch by its writes' outcome: a failed write's status and message come back
 * untouched and nothing is stored; writes that all went in are committed. */
static void batch_ends_by_the_writes_outcome(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("import-atomic");
    char *path = join(dir, "m.db");
    cct_store *s = NULL;
    cct_error err;
    assert_int_equal(cct_store_open(path, false, &s, &err), CCT_OK);
    cct_import_result r;
    assert_int_equal(tu_import(GOOD, NULL, &r, &err), CCT_OK);
    cct_store_fingerprint fp = {.gpu = "g", .nodes = 1, .gpus_per_node = 4, .ranks_per_gpu = 1};
    cct_store_run run = {.tool = "t", .source = "nccl-tests"};
    for (int pass = 0; pass < 2; pass++) {
        bool fail = pass == 0;
        assert_int_equal(cct_store_begin_batch(s, &err), CCT_OK);
        cct_status st = cct_store_put_fingerprint(s, &fp, &run.fingerprint_id, &err);
        if (st == CCT_OK)
            st = cct_store_begin_run(s, &run, &err);
        for (size_t i = 0; i < 3 && st == CCT_OK; i++)
            st = cct_store_add_point(s, run.id, &r.points[fail ? 0 : i], NULL, 0, &err);
        assert_int_equal(st, fail ? CCT_EINVAL : CCT_OK);
        char msg[sizeof err.msg];
        memcpy(msg, err.msg, sizeof msg);
        assert_int_equal(cct_store_end_batch_with(s, st, &err), st);
        if (fail)
            assert_string_equal(err.msg, msg); /* the refusal, not the rollback */
        int states[8];
        size_t points;
        assert_int_equal(store_runs(path, states, &points), fail ? 0 : 1);
        assert_int_equal(points, fail ? 0 : 3);
    }
    cct_store_close(s);
    cct_import_result_destroy(&r);
    free(path);
    ct_rm_rf(dir);
    free(dir);
}

/* A run marked failed (a copy of the good run's points, all twice as slow) is left out. */
static void fit_leaves_failed_runs_out(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("import-atomic");
    char *store = join(dir, "m.db");
    char *good = tu_path(GOOD);
    const char *imp[] = {"import", "--store", store, good, NULL};
    ct_result r = run(imp);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);

    cct_store *s = NULL;
    cct_error err;
    assert_int_equal(cct_store_open(store, false, &s, &err), CCT_OK);
    cct_store_run first;
    assert_int_equal(cct_store_get_run(s, 1, &first, &err), CCT_OK);
    cct_store_run failed = first;
    assert_int_equal(cct_store_begin_run(s, &failed, &err), CCT_OK);
    cct_point *p = NULL;
    size_t n = 0;
    int64_t one = 1;
    assert_int_equal(cct_store_load_points(s, &one, 1, &p, &n, &err), CCT_OK);
    for (size_t i = 0; i < n; i++) {
        p[i].stats.median_us *= 2;
        p[i].stats.mean_us *= 2;
        assert_int_equal(cct_store_add_point(s, failed.id, &p[i], NULL, 0, &err), CCT_OK);
    }
    assert_int_equal(cct_store_finish_run(s, failed.id, CCT_RUN_FAILED, &err), CCT_OK);
    free(p);
    cct_store_close(s);

    const char *fit[] = {"fit", "--store", store, "--cc", "9.0", NULL};
    r = run(fit);
    assert_int_equal(r.status, 0);
    tu_assert_contains(r.out, "runs: \"1\"");
    tu_assert_contains(r.err, "from 1 run(s)");
    tu_assert_contains(r.err, "1 run(s) marked failed left out (--include-failed uses them)");
    ct_result_free(&r);

    const char *fit_all[] = {"fit", "--store", store, "--cc", "9.0", "--include-failed", NULL};
    r = run(fit_all);
    assert_int_equal(r.status, 0);
    tu_assert_contains(r.out, "runs: \"1,2\"");
    tu_assert_contains(r.err, "from 2 run(s)");
    ct_result_free(&r);

    const char *fit_named[] = {"fit", "--store", store, "--cc", "9.0", "--run", "2", NULL};
    r = run(fit_named);
    assert_int_equal(r.status, 1);
    tu_assert_contains(r.err, "run 2 is marked failed");
    tu_assert_contains(r.err, "--include-failed");
    ct_result_free(&r);

    /* --accuracy measures on the same runs: as if only run 1 were named */
    const char *acc[] = {"fit", "--store", store, "--cc", "9.0", "--accuracy", NULL};
    const char *acc1[] = {"fit", "--store", store, "--cc", "9.0", "--accuracy", "--run", "1", NULL};
    ct_result a = run(acc), a1 = run(acc1);
    assert_int_equal(a.status, 0);
    assert_int_equal(a1.status, 0);
    tu_assert_contains(a.out, "leave-one-size-out");
    assert_string_equal(strstr(a.out, "accuracy"), strstr(a1.out, "accuracy"));
    ct_result_free(&a);
    ct_result_free(&a1);

    const char *help[] = {"fit", "--help", NULL};
    r = run(help);
    tu_assert_contains(r.out, "--include-failed");
    ct_result_free(&r);
    free(good);
    free(store);
    ct_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dry_run_refuses_what_import_refuses),
        cmocka_unit_test(full_disk_leaves_store_as_it_was),
        cmocka_unit_test(refused_write_rolls_back_the_batch),
        cmocka_unit_test(batch_ends_by_the_writes_outcome),
        cmocka_unit_test(fit_leaves_failed_runs_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
