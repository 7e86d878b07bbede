/*
 * test_bench_replay.c - a whole `ccltune bench` replayed on the CPU: plan, schedule, store
 * and report, with the recorded H200 measurements answering instead of a GPU.
 *
 * The table is the per-size argmin table (rules, no models) that `ccltune fit --argmin` built
 * from tests/data/h200/retune-2026-12-06/tune-1.db.gz; the bench replays that same store, with
 * the options of the command that failed on the H200 (4 ranks, allgather, allreduce and
 * reducescatter, sizes up to 64 MiB).  'tuned' answers as the recorded configuration of the
 * rule the plugin would apply.  The bench must finish with exit status 0 and a report with
 * a row per collective and size; where the argmin's rule is a measured configuration, the
 * replayed 'tuned' ran exactly it.  A second bench of the same table replays the exhaustive
 * store of another day (tests/data/h200/run-2026-11-29c), where every candidate is recorded
 * at every size up to 16 MiB (channel counts 0, 1, 2 and max: a rule with 4 channels has no
 * recording there, replays as unsupported and leaves its size without a row).  Only the
 * pipeline is checked, not the oracle's figures: the tune store is adaptive, and the replay
 * answers a configuration pruned above some size with its last recorded time there.
 * A third bench judges other tables in the same run (--compare): the fitted table of that
 * store against its argmin and the older fitter's table, and against itself, which must come
 * out exactly even; the argmin's geometric mean is recomputed here from the run's points.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_bench.h"
#include "cct_bench_compare.h"
#include "fixture_test_util.h"
#include "cct_exit.h"
#include "cct_search.h"
#include "store_test_util.h"

static char *argv_bench[] = {"ccltune", "bench", NULL};

/* Whether the recording has an ok point of coll forced to (algo, proto, channels) at default
 * buffers, aligned, in float: what the replay can answer the table's rule with. */
static bool recorded(const cct_point *rec, size_t n, int coll, const cct_rule *r)
{
    for (size_t i = 0; i < n; i++) {
        const cct_config *c = &rec[i].cfg;
        if (c->coll == coll && c->algo == r->algo && c->proto == r->proto &&
            c->channels == r->channels && c->buffsize == 0 && c->ll_buffsize == 0 &&
            c->ll128_buffsize == 0 && c->align == 0 && c->dtype == CCT_DTYPE_FLOAT &&
            rec[i].status == CCT_POINT_OK && !rec[i].in_place)
            return true;
    }
    return false;
}

/* The bench of argmin-1.yaml replayed from the recording `rel` (under tests/data/h200);
 * sizes up to max_bytes.  Returns the summary; *ran_rule counts the tuned points that ran the
 * configuration of the table's rule at their size, *want_rows the collective and size pairs
 * where the recording has that configuration (a configuration it never recorded replays as
 * unsupported, so those sizes have no tuned time and no row). */
static void replay_bench(const char *rel, uint64_t max_bytes, cct_bench_summary *sum,
                         size_t *ran_rule, size_t *want_rows)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char table_rel[1024], table[PATH_MAX], rec[1024], dir[256], store[320], report[320], csv[320];
    snprintf(table_rel, sizeof table_rel, "%s/data/h200/retune-2026-12-06/argmin-1.yaml", src);
    assert_non_null(realpath(table_rel, table));
    snprintf(rec, sizeof rec, "%s/data/h200/%s", src, rel);
    store_test_tmpdir(dir, sizeof dir);
    snprintf(store, sizeof store, "%s/bench.db", dir);
    snprintf(report, sizeof report, "%s/bench.md", dir);
    snprintf(csv, sizeof csv, "%s/bench.csv", dir);

    /* the options `ccltune bench` sets (src/cli/cmd_bench.c), then the failing command's */
    cct_search_opts o;
    cct_error err;
    cct_error_clear(&err);
    cct_search_opts_init(&o, 2, argv_bench);
    o.sched.cycles = 6;
    o.sched.adaptive = false;
    o.space.baseline = true;
    assert_int_equal(cct_search_set_flag(&o, "colls", "allgather,allreduce,reducescatter", &err),
                     CCT_OK);
    o.n_bench_sizes = cct_bench_default_sizes(max_bytes, o.bench_sizes, 64);
    o.store_path = store;
    o.bench_table = table;
    o.bench_report = report;
    o.bench_csv = csv;
    o.replay_path = rec;
    int code = cct_search_replay(&o, &err);
    if (code != CCT_EXIT_OK)
        fail_msg("replay: %s", err.msg);
    /* the bench's own ending: the report, exit status 0 (it was 1 with no oracle) */
    assert_int_equal(cct_bench_finish(&o, 1), 0);

    cct_store *st;
    assert_int_equal(cct_store_open(store, true, &st, &err), CCT_OK);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    if (cct_bench_report(st, 1, out, NULL, sum, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    fclose(out);

    /* the tuned points ran what the table's rule says at their size */
    cct_table t;
    assert_int_equal(cct_table_load_file(table, &t, &err), CCT_OK);
    cct_store *rs;
    cct_point *rp = NULL, *p = NULL;
    size_t rn = 0, n = 0, defaults = 0;
    assert_int_equal(cct_store_open(rec, true, &rs, &err), CCT_OK);
    assert_int_equal(cct_store_load_points(rs, NULL, 0, &rp, &rn, &err), CCT_OK);
    cct_store_close(rs);
    int64_t run = 1;
    assert_int_equal(cct_store_load_points(st, &run, 1, &p, &n, &err), CCT_OK);
    *ran_rule = *want_rows = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].status != CCT_POINT_OK || p[i].in_place || p[i].cfg.algo >= 0)
            continue;
        const cct_section *s = cct_table_find_section(&t, p[i].cfg.coll, 4, 4, 1, 0);
        assert_non_null(s);
        const cct_rule *r = cct_section_lookup(s, p[i].bytes);
        assert_non_null(r);
        if (p[i].cfg.algo == CCT_TUNED) {
            *ran_rule += p[i].nccl_algo == r->algo && p[i].nccl_proto == r->proto;
            assert_int_equal(p[i].nccl_algo, r->algo);
            assert_int_equal(p[i].nccl_proto, r->proto);
        } else {
            defaults++;
            *want_rows += recorded(rp, rn, p[i].cfg.coll, r);
        }
    }
    assert_int_equal(defaults, 3 * o.n_bench_sizes); /* NCCL's default: every size */
    free(rp);
    free(p);
    cct_table_destroy(&t);
    cct_store_close(st);

    /* the markdown and CSV the user gets: a line per row, the geometric mean */
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[1024];
    size_t csv_rows = 0;
    while (fgets(line, sizeof line, f))
        csv_rows++;
    fclose(f);
    assert_int_equal(csv_rows, 1 + sum->rows);
    f = fopen(report, "r");
    assert_non_null(f);
    bool geomean = false;
    while (fgets(line, sizeof line, f))
        geomean |= strstr(line, "geometric-mean speed-up over NCCL's default") != NULL;
    fclose(f);
    assert_true(geomean);
    store_test_rmdir(dir);
}

static void test_bench_argmin_own_store(void **state)
{
    (void)state;
    cct_bench_summary sum;
    size_t ran_rule, rows;
    replay_bench("retune-2026-12-06/tune-1.db.gz", 64u << 20, &sum, &ran_rule, &rows);
    assert_int_equal(rows, 3 * 13); /* its rules are its own measurements: every size */
    print_message("argmin table on its own store: %zu sizes, %.3fx over NCCL's default, worst vs "
                  "default %.3f, worst vs oracle %.3f\n",
                  sum.rows, sum.geomean_vs_default, sum.worst_vs_default, sum.worst_vs_oracle);
    assert_int_equal(sum.rows, rows);
    assert_int_equal(ran_rule, rows);
    assert_true(isfinite(sum.geomean_vs_default) && sum.geomean_vs_default > 0.0);
}

static void test_bench_argmin_exhaustive(void **state)
{
    (void)state;
    cct_bench_summary sum;
    size_t ran_rule, rows;
    replay_bench("run-2026-11-29c/exhaustive-4.db.gz", 16u << 20, &sum, &ran_rule, &rows);
    print_message("argmin table on the exhaustive store: %zu sizes, %.3fx over NCCL's default, "
                  "worst vs default %.3f, worst vs oracle %.3f\n",
                  sum.rows, sum.geomean_vs_default, sum.worst_vs_default, sum.worst_vs_oracle);
    assert_int_equal(sum.rows, rows);
    assert_int_equal(ran_rule, rows);
    assert_true(isfinite(sum.geomean_vs_default) && sum.geomean_vs_default > 0.0);
}

/* The geometric mean of default / (t's rule forced) over the run's sizes, computed here from
 * the points: the forced point of the rule's configuration, the default where t has no
 * section.  *sizes gets the count. */
static double geomean_forced(const cct_point *p, size_t n, const cct_table *t, size_t *sizes)
{
    double sum = 0.0;
    *sizes = 0;
    for (size_t i = 0; i < n; i++) {
        const cct_point *d = &p[i];
        if (d->cfg.algo != CCT_DEFAULT || d->in_place || d->status != CCT_POINT_OK)
            continue;
        const cct_section *s = cct_table_find_section(t, d->cfg.coll, 4, 4, 1, 0);
        const cct_rule *r = s ? cct_section_lookup(s, d->bytes) : NULL;
        const cct_point *x = r ? NULL : d;
        for (size_t k = 0; r && k < n; k++)
            if (p[k].cfg.coll == d->cfg.coll && p[k].bytes == d->bytes && !p[k].in_place &&
                p[k].status == CCT_POINT_OK && p[k].cfg.algo == r->algo &&
                p[k].cfg.proto == r->proto && p[k].cfg.channels == r->channels)
                x = &p[k];
        if (!x || !(x->stats.median_us > 0) || (r && r->proto == CCT_PROTO_LL128))
            continue;
        sum += log(d->stats.median_us / x->stats.median_us);
        (*sizes)++;
    }
    return exp(sum / (double)*sizes);
}

static void test_bench_compare(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char rel[1024], table[PATH_MAX], argmin[PATH_MAX], oldfit[PATH_MAX], rec[1024], dir[256],
        store[320], report[320];
    const char *day = "data/h200/retune-2026-12-06";
    snprintf(rel, sizeof rel, "%s/%s/tune-1.yaml", src, day);
    assert_non_null(realpath(rel, table));
    snprintf(rel, sizeof rel, "%s/%s/argmin-1.yaml", src, day);
    assert_non_null(realpath(rel, argmin));
    snprintf(rel, sizeof rel, "%s/%s/oldfit-1.yaml", src, day);
    assert_non_null(realpath(rel, oldfit));
    snprintf(rec, sizeof rec, "%s/%s/tune-1.db.gz", src, day);
    store_test_tmpdir(dir, sizeof dir);
    snprintf(store, sizeof store, "%s/bench.db", dir);
    snprintf(report, sizeof report, "%s/bench.md", dir);

    cct_search_opts o;
    cct_error err;
    cct_error_clear(&err);
    cct_search_opts_init(&o, 2, argv_bench);
    o.sched.cycles = 6;
    o.sched.adaptive = false;
    o.space.baseline = true;
    assert_int_equal(cct_search_set_flag(&o, "ranks-per-gpu", "4", &err), CCT_OK);
    assert_int_equal(cct_search_set_flag(&o, "ranks", "4", &err), CCT_OK);
    assert_int_equal(cct_search_set_flag(&o, "colls", "allgather,allreduce,reducescatter", &err),
                     CCT_OK);
    o.n_bench_sizes = cct_bench_default_sizes(64u << 20, o.bench_sizes, 64);
    o.store_path = store;
    o.bench_table = table;
    o.bench_report = report;
    o.bench_compare[0] = argmin;
    o.bench_compare[1] = oldfit;
    o.bench_compare[2] = table;
    o.n_bench_compare = 3;
    o.replay_path = rec;
    if (cct_search_replay(&o, &err) != CCT_EXIT_OK)
        fail_msg("replay: %s", err.msg);
    assert_int_equal(cct_bench_finish(&o, 1), 0);

    FILE *f = fopen(report, "r");
    assert_non_null(f);
    char line[1024];
    size_t compared_rows = 0;
    bool section = false;
    while (fgets(line, sizeof line, f)) {
        section |= strstr(line, "## Tables compared in the same run") != NULL;
        compared_rows += section && strstr(line, "oldfit-1.yaml |") != NULL;
    }
    fclose(f);
    assert_true(section);
    assert_int_equal(compared_rows, 4); /* three collectives and all */

    cct_table t[4];
    const char *paths[4] = {table, argmin, oldfit, table};
    for (int i = 0; i < 4; i++)
        assert_int_equal(cct_table_load_file(paths[i], &t[i], &err), CCT_OK);
    cct_store *st;
    assert_int_equal(cct_store_open(store, true, &st, &err), CCT_OK);
    size_t width = CCT_NUM_COLLS + 1;
    cct_compare_line lines[5 * (CCT_NUM_COLLS + 1)];
    assert_int_equal(cct_bench_compare_lines(st, 1, &t[0], &t[1], 3, lines, &err), CCT_OK);
    const cct_compare_line *forced = &lines[1 * width + CCT_NUM_COLLS],
                           *am = &lines[2 * width + CCT_NUM_COLLS],
                           *old = &lines[3 * width + CCT_NUM_COLLS],
                           *self = &lines[4 * width + CCT_NUM_COLLS];
    print_message("forced %zu sizes %.3fx; argmin %zu sizes %.3fx (vs table %.3f, +%zu/-%zu); "
                  "older fitter %zu sizes %.3fx (vs table %.3f, +%zu/-%zu)\n",
                  forced->sizes, forced->vs_default, am->sizes, am->vs_default, am->vs_main,
                  am->faster_sig, am->slower_sig, old->sizes, old->vs_default, old->vs_main,
                  old->faster_sig, old->slower_sig);
    /* the table against itself: the same points, exactly even */
    assert_int_equal(self->sizes, forced->sizes);
    assert_true(self->sizes > 0);
    assert_true(fabs(self->vs_main - 1.0) < 1e-12);
    assert_true(fabs(self->vs_default - forced->vs_default) < 1e-12);
    assert_int_equal(self->faster_sig + self->slower_sig, 0);
    /* the argmin's figure, recomputed from the run's points */
    cct_point *p = NULL;
    size_t n = 0, sizes = 0;
    int64_t run = 1;
    assert_int_equal(cct_store_load_points(st, &run, 1, &p, &n, &err), CCT_OK);
    double g = geomean_forced(p, n, &t[1], &sizes);
    assert_int_equal(sizes, am->sizes);
    assert_true(fabs(g - am->vs_default) < 1e-9);
    /* per collective lines add up to the overall count */
    size_t per_coll = 0;
    for (int c = 0; c < CCT_NUM_COLLS; c++)
        per_coll += lines[2 * width + (size_t)c].sizes;
    assert_int_equal(per_coll, am->sizes);
    free(p);
    cct_store_close(st);
    for (int i = 0; i < 4; i++)
        cct_table_destroy(&t[i]);
    store_test_rmdir(dir);
}

int main(void)
{
    if (!fixture_mirror())
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bench_argmin_own_store),
                                       cmocka_unit_test(test_bench_argmin_exhaustive),
                                       cmocka_unit_test(test_bench_compare)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
