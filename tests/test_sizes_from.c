/*
 * test_sizes_from.c - `ccltune search --sizes-from RECORDING` (src/search/cct_search_sizes.c,
 * src/import/cct_recording_set.c): a recorded job's collectives, rank count and sizes
 * become the search's space.
 *
 * Pinned down: the collectives and rank count taken from the recording; the grid from one
 * step below the smallest to one step above the largest recorded size, on the sizes an
 * ordinary search measures whatever that lower bound; recorded sizes off
 * the grid measured exactly, on-grid ones not duplicated; the rank-count rules (--ranks
 * picks among several, one the recordings lack is an error naming those they have);
 * folders and several files; the space's limit on exact sizes keeps the heaviest; a
 * damaged recording is refused with its FILE:OFFSET; and the command's exit status (2)
 * for bad recordings through `search`, `tune` and `bench`, whose --sizes-from takes the
 * recorded sizes only and, replayed from a recorded store, ends with the job line `audit
 * REC --table T --store BENCH.db` prints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli_test_util.h"
#include "fixture_test_util.h"
#include "rec_test_util.h"

#include "cct_search.h"

static char *dir;

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("sizes-from");
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    return 0;
}

static const rt_row job_rows[] = {
    {"allreduce", 1024, "ring", "ll", 2, 100, 2000000},
    {"allreduce", 1200000, "tree", "simple", 4, 100, 90000000},
    {"allgather", 8192, "ring", "ll", 2, 100, 1500000},
    {"allreduce", 1024, "ring", "simple", 2, 3, 90000},
};

static char *write_job(const char *name, const rt_comm *comms, size_t n)
{
    char *path = malloc(4300);
    assert_non_null(path);
    snprintf(path, 4300, "%s/%s", dir, name);
    assert_true(rt_write(path, comms, n));
    return path;
}

/* Parse `search ARGS... --dry-run` into o; returns the status. */
static cct_status parse(cct_search_opts *o, cct_error *err, const char **args)
{
    const char *argv[32] = {"search"};
    int argc = 1;
    while (args[argc - 1])
        argv[argc] = args[argc - 1], argc++;
    argv[argc++] = "--dry-run";
    argv[argc] = NULL;
    bool help;
    return cct_search_parse(argc, (char **)argv, o, &help, err);
}

static bool has_extra(const cct_space *s, uint64_t bytes)
{
    for (size_t i = 0; i < s->n_extra_sizes; i++)
        if (s->extra_sizes[i] == bytes)
            return true;
    return false;
}

static void test_space_from_recording(void **state)
{
    (void)state;
    rt_comm comm = {4, 4, job_rows, 4};
    char *path = write_job("job.rec", &comm, 1);
    cct_search_opts o;
    cct_error err;
    const char *args[] = {"--sizes-from", path, NULL};
    if (parse(&o, &err, args) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(o.ranks, 4);
    assert_int_equal(o.space.n_colls, 2);
    bool ar = false, ag = false;
    for (size_t i = 0; i < o.space.n_colls; i++) {
        ar = ar || o.space.colls[i] == CCT_COLL_ALLREDUCE;
        ag = ag || o.space.colls[i] == CCT_COLL_ALLGATHER;
    }
    assert_true(ar && ag);
    /* 1 KiB is a power of two: the step below is 512 B; 1200000 B: the next grid point 2 MiB */
    assert_int_equal(o.space.min_bytes, 512);
    assert_int_equal(o.space.max_bytes, 2 << 20);
    /* 1 KiB and 8 KiB are on the grid; 1200000 B is measured exactly */
    assert_int_equal(o.space.n_extra_sizes, 1);
    assert_true(has_extra(&o.space, 1200000));
    assert_int_equal(o.sizes_recorded, 3);
    assert_int_equal(o.sizes_dropped, 0);
    /* the plan measures every recorded size */
    o.space.ranks = 4;
    o.space.nodes = 4;
    cct_plan plan;
    assert_int_equal(cct_plan_build(&o.space, &plan, &err), CCT_OK);
    uint64_t want[] = {512, 1024, 8192, 1200000, 2 << 20};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool found = false;
        for (size_t i = 0; i < plan.n_sizes; i++)
            found = found || plan.sizes[i] == want[w];
        assert_true(found);
    }
    assert_int_equal(plan.sizes[0], 512);
    assert_int_equal(plan.sizes[plan.n_sizes - 1], 2 << 20);
    cct_plan_destroy(&plan);
    /* --colls or a size flag with --sizes-from is a usage error */
    const char *both[] = {"--sizes-from", path, "--max-bytes", "4M", NULL};
    assert_int_equal(parse(&o, &err, both), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "--sizes-from"));
    free(path);
}

static const rt_row odd_rows[] = {
    {"allreduce", 4096, "ring", "ll", 2, 100, 2000000},
    {"allreduce", 1200000, "tree", "simple", 4, 100, 90000000},
    {"allgather", 20000, "ring", "ll", 2, 100, 1500000},
};

static bool plan_has(const cct_plan *p, uint64_t bytes)
{
    for (size_t i = 0; i < p->n_sizes; i++)
        if (p->sizes[i] == bytes)
            return true;
    return false;
}

/* A recording whose grid starts at 2 KiB (an odd octave from 1 KiB): the planned sizes are
 * the sizes an ordinary search measures (powers of two and the same 1.5x midpoints), or the
 * recorded sizes exactly, so a tune's store replays them without interpolating. */
static void test_grid_of_ordinary_search(void **state)
{
    (void)state;
    rt_comm comm = {4, 4, odd_rows, 3};
    char *path = write_job("odd.rec", &comm, 1);
    cct_search_opts o;
    cct_error err;
    const char *args[] = {"--sizes-from", path, NULL};
    if (parse(&o, &err, args) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(o.space.min_bytes, 2048);
    o.space.ranks = o.space.nodes = 4;
    cct_plan plan, ordinary;
    assert_int_equal(cct_plan_build(&o.space, &plan, &err), CCT_OK);
    cct_space d;
    cct_space_defaults(&d);
    d.colls[0] = CCT_COLL_ALLREDUCE;
    d.n_colls = 1;
    d.ranks = d.nodes = 4;
    assert_int_equal(cct_plan_build(&d, &ordinary, &err), CCT_OK);
    for (size_t i = 0; i < plan.n_sizes; i++) {
        uint64_t b = plan.sizes[i];
        bool recorded = false;
        for (size_t r = 0; r < comm.n_rows; r++)
            recorded = recorded || odd_rows[r].bytes == b;
        if (!plan_has(&ordinary, b) && !recorded)
            fail_msg("planned %llu B is neither on the ordinary grid nor recorded",
                     (unsigned long long)b);
    }
    /* the midpoints between the recorded sizes are there, the grid's own */
    assert_true(plan_has(&plan, 3072) && plan_has(&plan, 12288) && plan_has(&plan, 49152));
    cct_plan_destroy(&plan);
    cct_plan_destroy(&ordinary);
    free(path);
}

static const rt_row pair_rows[] = {
    {"reducescatter", 65536, "ring", "simple", 1, 10, 100000},
    {"allreduce", 3000, "ring", "ll", 1, 10, 100000},
};

static void test_rank_counts(void **state)
{
    (void)state;
    rt_comm comms[] = {{4, 4, job_rows, 4}, {2, 2, pair_rows, 2}, {1, 1, pair_rows, 2}};
    char *path = write_job("two.rec", comms, 3);
    cct_search_opts o;
    cct_error err;
    const char *plain[] = {"--sizes-from", path, NULL};
    assert_int_equal(parse(&o, &err, plain), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "communicators of 4, 2 ranks"));
    assert_non_null(strstr(err.msg, "--ranks"));
    const char *two[] = {"--sizes-from", path, "--ranks", "2", NULL};
    if (parse(&o, &err, two) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(o.ranks, 2);
    assert_int_equal(o.space.n_colls, 2); /* reducescatter and allreduce of the 2-rank comm */
    assert_int_equal(o.space.min_bytes, 2048);
    assert_int_equal(o.space.max_bytes, 131072);
    assert_true(has_extra(&o.space, 3000));
    assert_false(has_extra(&o.space, 1200000));
    const char *eight[] = {"--sizes-from", path, "--ranks", "8", NULL};
    assert_int_equal(parse(&o, &err, eight), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "none of --ranks 8"));
    free(path);
}

static void test_folder_and_limit(void **state)
{
    (void)state;
    /* 40 sizes off the grid in two files of a folder: the 32 with the most GPU time stay */
    rt_row rows[20];
    char *paths[2];
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 20; i++) {
            int k = f * 20 + i;
            rows[i] = (rt_row){"allreduce", 3000 + (uint64_t)k * 1000, "ring", "ll", 1,
                               1,           (uint64_t)(1000 + k)};
        }
        rt_comm comm = {8, 1, rows, 20};
        char name[32];
        snprintf(name, sizeof name, "p%d.rec", f);
        paths[f] = write_job(name, &comm, 1);
    }
    cct_search_opts o;
    cct_error err;
    const char *args[] = {"--sizes-from", dir, NULL};
    if (parse(&o, &err, args) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(o.ranks, 8);
    assert_int_equal(o.sizes_recorded, 40);
    /* multiples of 1000 are never grid points (powers of two, 6144, 24576) */
    assert_int_equal(o.space.n_extra_sizes, 32);
    assert_true(o.sizes_dropped > 0);
    assert_int_equal(o.space.n_extra_sizes + o.sizes_dropped, 40);
    assert_true(has_extra(&o.space, 3000 + 39 * 1000)); /* the heaviest */
    assert_false(has_extra(&o.space, 3000));            /* the lightest */
    /* the same two files named one by one */
    const char *files[] = {"--sizes-from", paths[0], "--sizes-from", paths[1], NULL};
    cct_search_opts o2;
    assert_int_equal(parse(&o2, &err, files), CCT_OK);
    assert_int_equal(o2.space.n_extra_sizes, 32);
    assert_memory_equal(o2.space.extra_sizes, o.space.extra_sizes, sizeof o.space.extra_sizes);
    free(paths[0]);
    free(paths[1]);
}

static void test_bad_recordings(void **state)
{
    (void)state;
    rt_comm comm = {4, 4, job_rows, 4};
    char *path = write_job("cut.rec", &comm, 1);
    /* truncated: no end line */
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    assert_int_equal(truncate(path, len - 20), 0);
    cct_search_opts o;
    cct_error err;
    const char *args[] = {"--sizes-from", path, NULL};
    assert_int_not_equal(parse(&o, &err, args), CCT_OK);
    char want[4400];
    snprintf(want, sizeof want, "%s:", path);
    assert_true(strncmp(err.msg, want, strlen(want)) == 0);
    /* through the commands: exit 2 with the reader's message */
    const char *cmd[] = {"search", "--sizes-from", path, "--dry-run", NULL};
    ct_result r = ct_run(cmd);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, want));
    ct_result_free(&r);
    const char *tune[] = {"tune", "--sizes-from", path, "--recorded", path, NULL};
    r = ct_run(tune);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, want));
    ct_result_free(&r);
    /* a foreign file and a folder without recordings */
    char other[4400], empty[4400];
    snprintf(other, sizeof other, "%s/foreign.txt", dir);
    f = fopen(other, "w");
    assert_non_null(f);
    fputs("hello\n", f);
    fclose(f);
    const char *foreign[] = {"--sizes-from", other, NULL};
    assert_int_not_equal(parse(&o, &err, foreign), CCT_OK);
    assert_non_null(strstr(err.msg, other));
    snprintf(empty, sizeof empty, "%s/empty", dir);
    assert_int_equal(mkdir(empty, 0700), 0);
    const char *none[] = {"--sizes-from", empty, NULL};
    assert_int_not_equal(parse(&o, &err, none), CCT_OK);
    assert_non_null(strstr(err.msg, "no recordings"));
    free(path);
}

static void test_dry_run_command(void **state)
{
    (void)state;
    rt_comm comm = {4, 4, job_rows, 4};
    char *path = write_job("job.rec", &comm, 1);
    const char *cmd[] = {"search", "--sizes-from", path, "--dry-run", NULL};
    ct_result r = ct_run(cmd);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "4 ranks"));
    assert_non_null(strstr(r.out, "512 B .. 2 MiB"));
    ct_result_free(&r);
    free(path);
}

static void test_bench_sizes(void **state)
{
    (void)state;
    rt_comm comms[] = {{4, 4, job_rows, 4}, {2, 2, pair_rows, 2}};
    char *path = write_job("bench.rec", comms, 2);
    cct_search_opts o;
    cct_search_opts_init(&o, 0, NULL);
    o.sizes_from[o.n_sizes_from++] = path;
    cct_error err;
    /* two rank counts, none asked: the search's rule */
    assert_int_equal(cct_search_bench_sizes_from(&o, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "--ranks"));
    o.ranks = 4;
    if (cct_search_bench_sizes_from(&o, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    /* exactly the recorded sizes of the 4-rank communicator, the heaviest first */
    assert_int_equal(o.n_bench_sizes, 3);
    assert_int_equal(o.bench_sizes[0], 1200000);
    assert_int_equal(o.space.n_colls, 2);
    assert_int_equal(o.sizes_dropped, 0);
    /* through the command: a damaged recording or --sizes with it are usage errors */
    char table[4400];
    snprintf(table, sizeof table, "%s/../tables/h200-socket-4ranks.yaml",
             getenv("CCT_TEST_SRCDIR"));
    const char *both[] = {"bench", table, "--sizes-from", path, "--sizes", "1K", NULL};
    ct_result r = ct_run(both);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--sizes-from"));
    ct_result_free(&r);
    assert_int_equal(truncate(path, 100), 0);
    const char *bad[] = {"bench", table, "--sizes-from", path, NULL};
    r = ct_run(bad);
    assert_int_equal(r.status, 2);
    char want[4400];
    snprintf(want, sizeof want, "%s:", path);
    assert_non_null(strstr(r.err, want));
    ct_result_free(&r);
    free(path);
}

static const rt_row bench_rows[] = {
    {"allreduce", 65536, "ring", "ll", 4, 100, 2000000},
    {"allreduce", 1200000, "ring", "simple", 4, 50, 9000000},
    {"allgather", 8192, "ring", "ll", 4, 100, 1500000},
};

/* The first line of text that starts with prefix, up to its newline, into buf. */
static bool line_of(const char *text, const char *prefix, char *buf, size_t len)
{
    const char *p = text ? strstr(text, prefix) : NULL;
    if (!p)
        return false;
    size_t n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return true;
}

/* A replayed bench --sizes-from ends its summary with the job line audit gives from the
 * bench's store. */
static void test_bench_job_line(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char table[4400], rec[4400], store[4400], report[4400];
    snprintf(table, sizeof table, "%s/data/h200/retune-2026-12-06/argmin-1.yaml", src);
    snprintf(rec, sizeof rec, "%s/data/h200/retune-2026-12-06/tune-1.db.gz", src);
    snprintf(store, sizeof store, "%s/bench.db", dir);
    snprintf(report, sizeof report, "%s/bench.md", dir);
    rt_comm comm = {4, 4, bench_rows, 3};
    char *job = write_job("bench.rec", &comm, 1);
    const char *bench[] = {"bench", table, "--replay", rec, "--sizes-from", job, "--store",
                           store,   "-o",  report,     NULL};
    ct_result r = ct_run(bench);
    if (r.status != 0)
        fail_msg("bench: exit %d: %s", r.status, r.err);
    const char *audit[] = {"audit", job, "--table", table, "--store", store, NULL};
    ct_result a = ct_run(audit);
    char want[1024], got[1024];
    if (!line_of(a.out, "for this job the table saves ", want, sizeof want))
        fail_msg("audit: no job line: %s", a.out);
    if (!line_of(r.err, "ccltune bench: for this job", got, sizeof got))
        fail_msg("bench: no job line: %s", r.err);
    assert_string_equal(got + strlen("ccltune bench: "), want);
    /* the summary ends with it: nothing but the line after it */
    const char *at = strstr(r.err, got) + strlen(got);
    assert_true(at[0] == '\n' && at[1] == '\0');
    ct_result_free(&a);
    ct_result_free(&r);
    free(job);
}

int main(void)
{
    if (!fixture_mirror()) /* the argmin table read whatever the checkout's modes */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_space_from_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_of_ordinary_search, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_and_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_recordings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_job_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
