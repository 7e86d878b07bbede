/*
 * test_cli_import.c - `ccltune import` and `ccltune export` as a user runs them.
 *
 * The built binary (CCT_CCLTUNE) runs through cli_test_util.h's ct_run, output captured.  An
 * import must put exactly the points the library parses into one store run (checked by
 * reading the store back), store identical duplicates once, keep per-iteration samples,
 * and write nothing at all when any file or flag is bad: exit 1 with FILE:LINE:COL for a
 * bad file, exit 2 for a bad flag.  An export must write what cct_export_nccl_example_csv
 * writes, to stdout or atomically to -o FILE.
 */
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "import_test_util.h"

#include "cli_test_util.h"

#include "cct_export_csv.h"
#include "cct_store.h"
#include "cct_table.h"
#include "fixture_test_util.h"

typedef ct_result run_result;

/* ccltune with a NULL-terminated argument array (argv[0] excluded). */
static run_result run_argv(const char *const *args)
{
    assert_non_null(getenv("CCT_CCLTUNE"));
    run_result r = ct_run(args);
    if (!r.out || !r.err)
        fail_msg("cannot run %s", getenv("CCT_CCLTUNE"));
    return r;
}

static void run_free(run_result *r)
{
    ct_result_free(r);
}

/* A fresh directory for a store; removed (with what is in it) by rm_dir. */
static char *tmp_dir(void)
{
    char *d = strdup("/tmp/cct-cli-import-XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static void rm_dir(char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
    free(dir);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The library's parse of the given files, as the reference for what the store holds. */
static void reference(char *const *paths, size_t n, cct_import_result *r)
{
    cct_error err;
    for (size_t i = 0; i < n; i++) {
        cct_import_result_init(&r[i]);
        assert_int_equal(cct_import_file(paths[i], CCT_IMPORT_AUTO, NULL, &r[i], &err), CCT_OK);
    }
    assert_int_equal(cct_import_check_duplicates(r, n, NULL, &err), CCT_OK);
}

static bool same_point(const cct_point *a, const cct_point *b)
{
    return memcmp(&a->cfg, &b->cfg, sizeof a->cfg) == 0 && a->bytes == b->bytes &&
           a->in_place == b->in_place && a->stats.n == b->stats.n &&
           a->stats.median_us == b->stats.median_us && a->wrong == b->wrong &&
           a->status == b->status && a->nccl_algo == b->nccl_algo &&
           a->nccl_proto == b->nccl_proto &&
           (a->stats.min_us == b->stats.min_us ||
            (isnan(a->stats.min_us) && isnan(b->stats.min_us)));
}

static void import_into_store(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *store = join(dir, "m.db");
    char *files[3] = {tu_path("data/nccl-tests/allreduce_ring_simple_2.19.txt"),
                      tu_path("data/nccl-tests/allreduce_ring_simple_2.19.json"),
                      tu_path("data/nccl-tests/allreduce_per_iter_timestamps_2.19.txt")};
    const char *args[] = {"import", "--store", store, files[0], files[1], files[2], NULL};
    run_result r = run_argv(args);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    char line[512];
    snprintf(line, sizeof line,
             "imported 22 points into run 1 of %s (16 identical duplicates "
             "stored once)\n",
             store);
    tu_assert_contains(r.out, line);
    snprintf(line, sizeof line,
             "%s: 16 points (nccl-tests, 1 run): allreduce, algo ring, proto "
             "simple, 4 ranks on 1 node\n",
             files[0]);
    tu_assert_contains(r.out, line);
    tu_assert_contains(r.out, "1 with wrong results (stored as corrupt)");
    assert_string_equal(r.err, "");
    run_free(&r);

    /* read the store back: one finished run of source nccl-tests holding the points */
    cct_store *s;
    cct_error err;
    assert_int_equal(cct_store_open(store, true, &s, &err), CCT_OK);
    cct_store_run *runs;
    size_t n_runs;
    assert_int_equal(cct_store_list_runs(s, &runs, &n_runs, &err), CCT_OK);
    assert_int_equal(n_runs, 1);
    assert_string_equal(runs[0].source, "nccl-tests");
    assert_int_equal(runs[0].state, CCT_RUN_DONE);
    assert_int_equal(runs[0].n_points, 22);
    tu_assert_contains(runs[0].command, "ccltune import --store");
    cct_store_fingerprint fp;
    assert_int_equal(cct_store_get_fingerprint(s, runs[0].fingerprint_id, &fp, &err), CCT_OK);
    assert_string_equal(fp.gpu, "NVIDIA H200");
    assert_string_equal(fp.nccl, "2.28.9");
    assert_string_equal(fp.host, "h200-node07");
    assert_int_equal(fp.gpus_per_node, 4);
    assert_int_equal(fp.nodes, 1);
    assert_false(fp.ll128_allowed);
    cct_point *pts;
    size_t n;
    assert_int_equal(cct_store_load_points(s, &runs[0].id, 1, &pts, &n, &err), CCT_OK);
    assert_int_equal(n, 22);
    cct_import_result ref[3];
    reference(files, 3, ref);
    size_t matched = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t f = 0; f < 3; f++)
            for (size_t k = 0; k < ref[f].n_points; k++)
                if (!ref[f].meta[k].duplicate && same_point(&pts[i], &ref[f].points[k]))
                    matched++;
    assert_int_equal(matched, 22); /* every stored point is exactly one parsed point */
    free(pts);
    free(runs);
    cct_store_close(s);
    for (size_t f = 0; f < 3; f++) {
        cct_import_result_destroy(&ref[f]);
        free(files[f]);
    }
    free(store);
    rm_dir(dir);
}

/* Options may follow the files (`ccltune import FILE --store X`), as users type them: the
 * points go to X, and no file named "--store" or X is read as a log. */
static void options_after_files(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *store = join(dir, "after.db");
    char *file = tu_path("data/nccl-tests/allreduce_ring_simple_2.19.txt");
    const char *args[] = {"import", file, "--store", store, NULL};
    run_result r = run_argv(args);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    char line[512];
    snprintf(line, sizeof line, "into run 1 of %s", store);
    tu_assert_contains(r.out, line);
    assert_true(exists(store));
    run_free(&r);
    cct_store *s;
    cct_error err;
    assert_int_equal(cct_store_open(store, true, &s, &err), CCT_OK);
    cct_store_run *runs;
    size_t n_runs;
    assert_int_equal(cct_store_list_runs(s, &runs, &n_runs, &err), CCT_OK);
    assert_int_equal(n_runs, 1);
    assert_int_equal(runs[0].n_points, 16);
    free(runs);
    cct_store_close(s);
    free(file);
    free(store);
    rm_dir(dir);
}

static void samples_reach_the_store(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *store = join(dir, "m.db");
    char *file = tu_path("data/nccl-tests/allgather_per_iter_mpi_2.19.json");
    const char *args[] = {"import", "-s", store, file, NULL};
    run_result r = run_argv(args);
    assert_int_equal(r.status, 0);
    run_free(&r);
    cct_import_result ref;
    reference(&file, 1, &ref);
    cct_store *s;
    cct_error err;
    assert_int_equal(cct_store_open(store, true, &s, &err), CCT_OK);
    double *samples;
    size_t n;
    const cct_point *p = &ref.points[0];
    assert_int_equal(
        cct_store_load_samples(s, 1, &p->cfg, p->bytes, p->in_place, &samples, &n, &err), CCT_OK);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++)
        tu_assert_double(samples[i], ref.samples[ref.meta[0].first_sample + i]);
    free(samples);
    cct_store_close(s);
    cct_import_result_destroy(&ref);
    free(file);
    free(store);
    rm_dir(dir);
}

static void bad_file_writes_nothing(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *store = join(dir, "m.db");
    char *good = tu_path("data/nccl-tests/allreduce_ring_simple_2.19.txt");
    char *bad = tu_path("bad_logs/negative_size.txt");
    const char *args[] = {"import", "--store", store, good, bad, NULL};
    run_result r = run_argv(args);
    assert_int_equal(r.status, 1);
    char want[600];
    snprintf(want, sizeof want, "ccltune import: error: %s:28:10: negative size '-64'\n", bad);
    tu_assert_contains(r.err, want);
    tu_assert_contains(r.err, "ccltune import: error: 1 of 2 files refused: nothing imported\n");
    assert_false(exists(store)); /* the store was never opened */
    run_free(&r);

    /* two good files that disagree: also nothing */
    char *other = tu_path("bad_logs/duplicate_size_conflict.txt");
    const char *args2[] = {"import", "--store", store, good, other, NULL};
    r = run_argv(args2);
    assert_int_equal(r.status, 1);
    tu_assert_contains(r.err, "duplicate_size_conflict.txt:32:8: size 32768 out-of-place");
    assert_false(exists(store));
    run_free(&r);

    /* CSV and nccl-tests output are two sources */
    char *csv = tu_path("data/tuner-csv/perf.csv");
    const char *args3[] = {"import", "--store", store, good, csv, NULL};
    r = run_argv(args3);
    assert_int_equal(r.status, 1);
    tu_assert_contains(r.err, "is CSV and");
    assert_false(exists(store));
    run_free(&r);
    free(csv);
    free(other);
    free(good);
    free(bad);
    free(store);
    rm_dir(dir);
}

static void bad_flags_exit_2(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *store = join(dir, "m.db");
    char *good = tu_path("data/nccl-tests/allreduce_ring_simple_2.19.txt");
    const char *cases[][9] = {
        {"import", "--store", store, "--algo", "bogus", good, NULL},
        {"import", "--store", store, "--proto", "LL64", good, NULL},
        {"import", "--store", store, "--coll", "alltoall", good, NULL},
        {"import", "--store", store, "--ranks", "0", good, NULL},
        {"import", "--store", store, "--nodes", "-1", good, NULL},
        {"import", "--store", store, "--ranks", "4", "--nodes", "8", good, NULL},
        {"import", "--store", store, "--format", "xml", good, NULL},
        {"import", "--store", store, "--frobnicate", good, NULL},
        {"import", "--store", store, NULL},
        {"import", "--store", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_argv(cases[i]);
        if (r.status != 2)
            fail_msg("case %zu: exit %d, stderr '%s'", i, r.status, r.err);
        tu_assert_contains(r.err, "ccltune import: error: ");
        tu_assert_contains(r.err, "Try 'ccltune import --help'.");
        assert_false(exists(store));
        run_free(&r);
    }
    const char *help[] = {"import", "--help", NULL};
    run_result r = run_argv(help);
    assert_int_equal(r.status, 0);
    tu_assert_contains(r.out, "usage: ccltune import");
    run_free(&r);
    const char *dry[] = {"import", "--dry-run", "--store", store, good, NULL};
    r = run_argv(dry);
    assert_int_equal(r.status, 0);
    tu_assert_contains(r.out, "dry run: nothing written");
    assert_false(exists(store));
    run_free(&r);
    free(good);
    free(store);
    rm_dir(dir);
}

/* A log that does not say its NCCL version: --nccl gives it, so the fitted table names a
 * version the plugin can match (the reader refuses "unknown"); a log that says another
 * version, or a flag that is not a version, is refused. */
static void nccl_version_flag(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *store = join(dir, "m.db"), *table = join(dir, "t.yaml");
    char *old = tu_path("data/nccl-tests/allgather_2.13.0_two_hosts.txt");
    char *says = tu_path("data/nccl-tests/allreduce_ring_simple_2.19.txt"); /* 2.28.9 */
    const char *imp[] = {"import",  "--store", store,    "--coll", "allgather", "--algo", "ring",
                         "--proto", "simple",  "--nccl", "2.27.3", old,         NULL};
    run_result r = run_argv(imp);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    run_free(&r);
    const char *fit[] = {"fit", "--store", store, "--cc", "9.0", "-o", table, NULL};
    r = run_argv(fit);
    if (r.status != 0)
        fail_msg("fit: exit %d: %s", r.status, r.err);
    run_free(&r);
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file(table, &t, &err), CCT_OK);
    assert_string_equal(t.fingerprint.nccl, "2.27.3");
    cct_table_destroy(&t);

    const char *other[] = {"import", "--dry-run", "--store", store, "--nccl", "2.27.3", says, NULL};
    r = run_argv(other);
    assert_int_equal(r.status, 1);
    tu_assert_contains(r.err, "ran NCCL 2.28.9 but --nccl 2.27.3 was given");
    run_free(&r);
    const char *bad[] = {"import", "--store", store, "--nccl", "2.28.x", says, NULL};
    r = run_argv(bad);
    assert_int_equal(r.status, 2);
    tu_assert_contains(r.err, "--nccl wants an NCCL version like 2.28.9, not '2.28.x'");
    run_free(&r);
    free(old);
    free(says);
    free(table);
    free(store);
    rm_dir(dir);
}

static void export_cli(void **state)
{
    (void)state;
    char *table = tu_path("data/tables/golden-small.yaml");
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file(table, &t, &err), CCT_OK);
    char *want = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&want, &len);
    assert_int_equal(cct_export_nccl_example_csv(&t, table, m, &err), CCT_OK);
    fclose(m);
    cct_table_destroy(&t);

    const char *to_stdout[] = {"export", table, "--format", "nccl-example-csv", NULL};
    run_result r = run_argv(to_stdout);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want);
    run_free(&r);

    char *dir = tmp_dir();
    char *out = join(dir, "tuner.conf");
    const char *to_file[] = {"export", "-f", "nccl-example-csv", "-o", out, table, NULL};
    r = run_argv(to_file);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    run_free(&r);
    char *got = NULL;
    size_t got_len = 0;
    assert_int_equal(cct_read_file(out, &got, &got_len, &err), CCT_OK);
    assert_string_equal(got, want);
    free(got);

    const char *no_format[] = {"export", table, NULL};
    r = run_argv(no_format);
    assert_int_equal(r.status, 2);
    tu_assert_contains(r.err, "--format is required");
    run_free(&r);
    char *bad = tu_path("bad_tables/gapped-bands.yaml");
    const char *bad_table[] = {"export", bad, "--format", "nccl-example-csv", "-o", out, NULL};
    unlink(out);
    r = run_argv(bad_table);
    assert_int_equal(r.status, 1);
    char where[600];
    snprintf(where, sizeof where, "ccltune export: error: %s:12:11: ", bad);
    tu_assert_contains(r.err, where);
    assert_false(exists(out));
    run_free(&r);
    const char *help[] = {"export", "--help", NULL};
    r = run_argv(help);
    assert_int_equal(r.status, 0);
    tu_assert_contains(r.out, "usage: ccltune export");
    run_free(&r);
    free(bad);
    free(out);
    rm_dir(dir);
    free(want);
    free(table);
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(import_into_store),       cmocka_unit_test(options_after_files),
        cmocka_unit_test(samples_reach_the_store), cmocka_unit_test(bad_file_writes_nothing),
        cmocka_unit_test(bad_flags_exit_2),        cmocka_unit_test(export_cli),
        cmocka_unit_test(nccl_version_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
