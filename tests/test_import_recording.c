/*
 * test_import_recording.c - `ccltune import RECORDING...` (src/cli/cct_cli_import_rec.c,
 * src/import/cct_import_recording.c) and how the fit treats what it stored.
 *
 * Pinned down: the round trip (two ranks' recordings merged into one run of source
 * "production": per configuration, shape and size the mean GPU time per call over every
 * rank, the timed calls as the count, what NCCL ran in nccl_algo/nccl_proto); with the
 * table the job ran, calls that ran a rule's choice stored as that configuration and a
 * call that ran something else as what ran; the dry run writes nothing; damaged
 * recordings are refused with FILE:OFFSET and nothing written; flags that describe logs
 * are refused with recordings.  With a recorded H200 store: the production run borrows
 * the search run's machine fingerprint, `fit` leaves it out (byte-identical table, and
 * says so), `fit --include-production` uses it, and `fit --run` naming it without the flag
 * is an error; `search --replay` of the store replays only the controlled measurements, and
 * `plot` of every run draws them only (the same files as before the import) unless
 * --include-production.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

#include "cli_test_util.h"
#include "rec_test_util.h"
#include "recorded_test_util.h"

#include "cct_store.h"

static char *dir;
static char rec0[4400], rec1[4400], db[4400], table[4400];

/* rank 0 and rank 1 of a 2-rank job; rank 1's calls take twice as long */
static const rt_row rank0[] = {
    {"allreduce", 65536, "ring", "ll", 1, 10, 1000000},
    {"allreduce", 65536, "ring", "simple", 1, 2, 400000},
    {"allgather", 8192, "ring", "ll", 1, 4, 80000},
    {"broadcast", 0, "ring", "simple", 1, 3, 0},
};
static const rt_row rank1[] = {
    {"allreduce", 65536, "ring", "ll", 1, 10, 2000000},
    {"allreduce", 65536, "ring", "simple", 1, 2, 400000},
    {"allgather", 8192, "ring", "ll", 1, 4, 80000},
    {"broadcast", 0, "ring", "simple", 1, 3, 0},
};

static const char *table_yaml =
    "ccltune_table: 2\n"
    "provenance:\n"
    "  tool: \"ccltune test\"\n"
    "  measured: \"2026-11-29T14:00:00Z\"\n"
    "  source: \"hand-written\"\n"
    "fingerprint:\n"
    "  gpu: \"NVIDIA H200\"\n"
    "  cc: \"9.0\"\n"
    "  gpus_per_node: 1\n"
    "  nodes: 2\n"
    "  ranks_per_gpu: 2\n"
    "  links: socket\n"
    "  nccl: \"2.28.9\"\n"
    "ll128:\n"
    "  allowed: false\n"
    "collectives:\n"
    "  allreduce:\n"
    "    - ranks: 2\n"
    "      nodes: 2\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll, channels: 2}\n";

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("import-rec");
    if (!dir)
        return -1;
    snprintf(rec0, sizeof rec0, "%s/r0.rec", dir);
    snprintf(rec1, sizeof rec1, "%s/r1.rec", dir);
    snprintf(db, sizeof db, "%s/m.db", dir);
    snprintf(table, sizeof table, "%s/t.yaml", dir);
    rt_comm c0 = {2, 2, rank0, 4}, c1 = {2, 2, rank1, 4};
    if (!ct_write_table(table, table_yaml))
        return -1;
    return rt_write(rec0, &c0, 1) && rt_write(rec1, &c1, 1) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    return 0;
}

static void load(cct_point **pts, size_t *n, cct_store_run *run)
{
    cct_store *s;
    cct_error err;
    if (cct_store_open(db, true, &s, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_store_run *runs;
    size_t n_runs;
    assert_int_equal(cct_store_list_runs(s, &runs, &n_runs, &err), CCT_OK);
    assert_true(n_runs >= 1);
    *run = runs[n_runs - 1];
    free(runs);
    assert_int_equal(cct_store_load_points(s, &run->id, 1, pts, n, &err), CCT_OK);
    cct_store_close(s);
}

static const cct_point *find(const cct_point *p, size_t n, int coll, int algo, int proto,
                             int channels, uint64_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (p[i].cfg.coll == coll && p[i].cfg.algo == algo && p[i].cfg.proto == proto &&
            p[i].cfg.channels == channels && p[i].bytes == bytes)
            return &p[i];
    return NULL;
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *args[] = {"import", "--store", db, "--table", "none", rec0, rec1, NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 recordings: 38 calls -> 2 points: 2 of NCCL's own choices"));
    assert_non_null(strstr(r.out, "6 calls of collectives a tuner is never asked about"));
    assert_non_null(strstr(r.out, "source production"));
    ct_result_free(&r);
    cct_point *pts;
    size_t n;
    cct_store_run run;
    load(&pts, &n, &run);
    assert_string_equal(run.source, "production");
    assert_int_equal(n, 2);
    /* allreduce 64 KiB: 24 calls over both ranks, 3.8 ms -> 158.33 us, mostly ring/ll */
    const cct_point *p = find(pts, n, CCT_COLL_ALLREDUCE, CCT_DEFAULT, CCT_DEFAULT, 0, 65536);
    assert_non_null(p);
    assert_int_equal(p->stats.n, 24);
    assert_float_equal(p->stats.median_us, 3800.0 / 24.0, 1e-9);
    assert_int_equal(p->nccl_algo, CCT_ALGO_RING);
    assert_int_equal(p->nccl_proto, CCT_PROTO_LL);
    assert_int_equal(p->cfg.ranks, 2);
    assert_int_equal(p->cfg.nodes, 2);
    p = find(pts, n, CCT_COLL_ALLGATHER, CCT_DEFAULT, CCT_DEFAULT, 0, 8192);
    assert_non_null(p);
    assert_float_equal(p->stats.median_us, 20.0, 1e-9);
    free(pts);
}

static void test_with_table(void **state)
{
    (void)state;
    const char *args[] = {"import", "--store", db, "--table", table, dir, NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "3 points: 1 of NCCL's own choices, 1 of the table's rules, 1 "
                                  "of another configuration"));
    ct_result_free(&r);
    cct_point *pts;
    size_t n;
    cct_store_run run;
    load(&pts, &n, &run);
    assert_int_equal(n, 3);
    /* ring/ll on 1 channel under the rule's cap of 2: the rule's configuration */
    const cct_point *p = find(pts, n, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 2, 65536);
    assert_non_null(p);
    assert_int_equal(p->stats.n, 20);
    assert_float_equal(p->stats.median_us, 150.0, 1e-9);
    /* ring/simple: not what the rule asked, stored as what ran */
    p = find(pts, n, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1, 65536);
    assert_non_null(p);
    assert_float_equal(p->stats.median_us, 200.0, 1e-9);
    /* allgather: no section, NCCL's own */
    assert_non_null(find(pts, n, CCT_COLL_ALLGATHER, CCT_DEFAULT, CCT_DEFAULT, 0, 8192));
    free(pts);
}

static void test_dry_run_and_bad(void **state)
{
    (void)state;
    const char *dry[] = {"import", "--store", db, "--table", "none", "--dry-run", rec0, NULL};
    ct_result r = ct_run(dry);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "dry run: nothing written"));
    ct_result_free(&r);
    struct stat st;
    assert_int_not_equal(stat(db, &st), 0);
    /* rank 1 cut short: refused with its FILE:OFFSET, nothing written */
    assert_int_equal(truncate(rec1, 300), 0);
    const char *bad[] = {"import", "--store", db, "--table", "none", rec0, rec1, NULL};
    r = ct_run(bad);
    assert_int_equal(r.status, 1);
    char want[4500];
    snprintf(want, sizeof want, "%s:", rec1);
    assert_non_null(strstr(r.err, want));
    assert_non_null(strstr(r.err, "nothing imported"));
    ct_result_free(&r);
    assert_int_not_equal(stat(db, &st), 0);
    /* log flags with recordings, a table without them: usage errors */
    const char *coll[] = {"import", "--store", db, "--coll", "allreduce", rec0, NULL};
    r = ct_run(coll);
    assert_int_equal(r.status, 2);
    ct_result_free(&r);
    char log[4500];
    snprintf(log, sizeof log, "%s/data/nccl-tests/allgather_2.13.0_two_hosts.txt",
             getenv("CCT_TEST_SRCDIR"));
    const char *tab[] = {"import", "--store", db, "--table", table, log, NULL};
    r = ct_run(tab);
    assert_int_equal(r.status, 2);
    ct_result_free(&r);
    /* recordings without --table: a tuned job's calls would pass for NCCL's own choices */
    const char *untold[] = {"import", "--store", db, rec0, NULL};
    r = ct_run(untold);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--table none"));
    ct_result_free(&r);
    assert_int_not_equal(stat(db, &st), 0);
}

/* `ccltune fit ARGS` on db; returns the result with stderr. */
static ct_result fit(const char *a, const char *b, const char *out)
{
    const char *args[] = {"fit", "--store", db, "-o", out, a, b, NULL};
    return ct_run(args);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 22);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 22) - 1, f);
    (void)n;
    fclose(f);
    return buf;
}

/* N of "replaying N recorded points" of a small replay from db (its own output store). */
static unsigned long replayed_points(const char *tag)
{
    char out[4500];
    snprintf(out, sizeof out, "%s/replay-%s.db", dir, tag);
    const char *args[] = {
        "search", "--replay",        db,     "--store",  out,         "--ranks",
        "2",      "--ranks-per-gpu", "2",    "--colls",  "allreduce", "--max-bytes",
        "4K",     "--channels",      "nccl", "--cycles", "2",         NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, 0);
    char *line = strstr(r.err, "replaying ");
    assert_non_null(line);
    unsigned long n = strtoul(line + strlen("replaying "), NULL, 10);
    ct_result_free(&r);
    return n;
}

static void test_fit_leaves_production_out(void **state)
{
    (void)state;
    char from[4500], before[4500], after[4500], with[4500];
    snprintf(from, sizeof from, "%s/data/h200/search-2ranks.db.gz", getenv("CCT_TEST_SRCDIR"));
    assert_true(recorded_copy(from, db));
    snprintf(before, sizeof before, "%s/before.yaml", dir);
    snprintf(after, sizeof after, "%s/after.yaml", dir);
    snprintf(with, sizeof with, "%s/with.yaml", dir);
    ct_result r = fit(NULL, NULL, before);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    unsigned long replayed = replayed_points("before");
    assert_true(replayed > 0);
    const char *imp[] = {"import", "--store", db, "--table", "none", rec0, rec1, NULL};
    r = ct_run(imp);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "into run 2 of"));
    assert_non_null(strstr(r.out, "machine: as run 1 (NVIDIA H200"));
    ct_result_free(&r);
    /* by default the same table, byte for byte, and the fit says what it left out */
    r = fit(NULL, NULL, after);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "from 1 run(s)"));
    assert_non_null(strstr(r.err, "1 run(s) of production observations left out"));
    ct_result_free(&r);
    char *a = slurp(before), *b = slurp(after);
    assert_string_equal(a, b);
    free(b);
    /* a replay answers from the controlled measurements only: as many points as before */
    assert_int_equal(replayed_points("after"), replayed);
    /* asked: both runs, 2 more points */
    r = fit("--include-production", NULL, with);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "from 2 run(s)"));
    assert_null(strstr(r.err, "left out (--include-production"));
    ct_result_free(&r);
    free(a);
    /* naming the production run without the flag */
    r = fit("--run", "2", with);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "--include-production"));
    ct_result_free(&r);
}

/* `ccltune plot --no-gnuplot` of db into dir/NAME, with flag when not NULL. */
static void plot(const char *name, const char *flag, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", dir, name);
    const char *args[] = {"plot", "--store", db, "--out", out, "--no-gnuplot", flag, NULL};
    ct_result r = ct_run(args);
    if (r.status != 0)
        fail_msg("plot: exit %d: %s", r.status, r.err);
    bool told = strstr(r.err, "1 run(s) of production observations left out") != NULL;
    assert_true(told == (strcmp(name, "after") == 0));
    ct_result_free(&r);
}

/* Whether folders a and b hold the same files, byte for byte. */
static bool same_files(const char *a, const char *b)
{
    DIR *d = opendir(a);
    assert_non_null(d);
    size_t files = 0, same = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char pa[4600], pb[4600];
        snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
        files++;
        if (access(pb, R_OK) != 0)
            continue;
        char *x = slurp(pa), *y = slurp(pb);
        same += strcmp(x, y) == 0;
        free(x);
        free(y);
    }
    closedir(d);
    assert_true(files > 0);
    return same == files;
}

static void test_plot_leaves_production_out(void **state)
{
    (void)state;
    char from[4500], before[4500], after[4500], with[4500];
    snprintf(from, sizeof from, "%s/data/h200/search-2ranks.db.gz", getenv("CCT_TEST_SRCDIR"));
    assert_true(recorded_copy(from, db));
    plot("before", NULL, before, sizeof before);
    const char *imp[] = {"import", "--store", db, "--table", "none", rec0, rec1, NULL};
    ct_result r = ct_run(imp);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    plot("after", NULL, after, sizeof after);
    assert_true(same_files(before, after) && same_files(after, before));
    plot("with", "--include-production", with, sizeof with);
    assert_false(same_files(with, before) && same_files(before, with));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_with_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_and_bad, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fit_leaves_production_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plot_leaves_production_out, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
