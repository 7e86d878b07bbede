/*
 * test_h100_bench.c - committed bench reports of H100 runs recomputed from the benches' own
 * stores: the proof run (tests/data/h100/proofs-2026-12-06: `ccltune bench t4.yaml --compare
 * argmin.yaml`) and the two benches of the re-tune run (tests/data/h100/retune-2026-12-06:
 * `ccltune bench tune-N.yaml --compare argmin-N.yaml --compare prevfit-N.yaml --compare
 * oldfit-N.yaml`) and the one of its second/ folder, each on an NVIDIA H100 80GB HBM3 with 4
 * rank processes sharing it.
 *
 * Each store is read back: cct_bench_compare_lines() judges the table under test (as the
 * plugin applied it and forced) and the compared tables on the run's points, and every row of
 * the report's "Tables compared in the same run" section must carry the same sizes,
 * significance counts and ratios to the printed precision; cct_bench_report()'s summary must
 * match the report's "N sizes: geometric-mean ..." line the same way.  A change to how the
 * bench judges a table, or a store that no longer reads as it did, fails here on real GPU
 * data.  The re-tune benches also hold what they showed: the fitter's table faster than the
 * previous fitter's at more sizes than it is slower, and within 2 % of the per-size argmin.
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

#define WIDTH (CCT_NUM_COLLS + 1)
#define MAX_CMP 3

typedef struct bench_case {
    const char *dir, *store, *report, *main;
    const char *compared[MAX_CMP]; /* matched by the end of the report's table name */
    size_t n_compared;
} bench_case;

static const bench_case cases[] = {
    {"data/h100/proofs-2026-12-06", "bench.db.gz", "bench.md", "t4.yaml", {"argmin.yaml"}, 1},
    {"data/h100/retune-2026-12-06",
     "bench-1.db.gz",
     "bench-1.md",
     "tune-1.yaml",
     {"argmin-1.yaml", "prevfit-1.yaml", "oldfit-1.yaml"},
     3},
    {"data/h100/retune-2026-12-06/second",
     "bench-1.db.gz",
     "bench-1.md",
     "tune-1.yaml",
     {"argmin-1.yaml", "prevfit-1.yaml", "oldfit-1.yaml"},
     3},
    {"data/h100/retune-2026-12-06",
     "bench-2.db.gz",
     "bench-2.md",
     "tune-2.yaml",
     {"argmin-2.yaml", "prevfit-2.yaml", "oldfit-2.yaml"},
     3},
};

static void case_path(char *buf, size_t len, const bench_case *c, const char *name)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    snprintf(buf, len, "%s/%s/%s", src, c->dir, name);
}

static char *trim(char *s)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Row index in the compare lines of a report's table name: 0 plugin, 1 forced, 2 + k the k-th
 * compared table. */
static int row_of(const bench_case *c, const char *name)
{
    if (strcmp(name, "under test (plugin)") == 0)
        return 0;
    if (strcmp(name, "under test (forced)") == 0)
        return 1;
    size_t n = strlen(name);
    for (size_t k = 0; k < c->n_compared; k++) {
        size_t m = strlen(c->compared[k]);
        if (n >= m + 1 && name[n - m - 1] == '/' && strcmp(name + n - m, c->compared[k]) == 0)
            return 2 + (int)k;
    }
    return -1;
}

/* The figure as the report prints it. */
static void assert_printed(double value, const char *printed)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", value);
    if (strcmp(buf, printed) != 0)
        fail_msg("recomputed %s, the report says %s", buf, printed);
}

/* One "| coll | table | sizes | vs default | vs main | faster / slower |" row checked
 * against lines; false when the line is not such a row. */
static bool check_row(const bench_case *c, char *line, const cct_compare_line *lines)
{
    char *field[7];
    int n = 0;
    for (char *tok = strtok(line, "|"); tok && n < 7; tok = strtok(NULL, "|")) {
        char *f = trim(tok);
        if (*f)
            field[n++] = f;
    }
    if (n != 6)
        return false;
    int coll = strcmp(field[0], "all") == 0 ? CCT_NUM_COLLS : cct_coll_from_name(field[0]);
    int row = row_of(c, field[1]);
    if (coll < 0 || row < 0)
        return false;
    const cct_compare_line *l = &lines[(size_t)row * WIDTH + (size_t)coll];
    print_message("%-13s %-22s %2zu sizes %.3f %.3f %zu / %zu (report: %s %s %s %s)\n", field[0],
                  field[1], l->sizes, l->vs_default, l->vs_main, l->faster_sig, l->slower_sig,
                  field[2], field[3], field[4], field[5]);
    assert_int_equal(l->sizes, strtoul(field[2], NULL, 10));
    assert_printed(l->vs_default, field[3]);
    assert_printed(l->vs_main, field[4]);
    char sig[32];
    snprintf(sig, sizeof sig, "%zu / %zu", l->faster_sig, l->slower_sig);
    assert_string_equal(sig, field[5]);
    return true;
}

static void compared_tables(const bench_case *c)
{
    char store_path[PATH_MAX], main_path[PATH_MAX], path[PATH_MAX], report[PATH_MAX];
    case_path(store_path, sizeof store_path, c, c->store);
    case_path(main_path, sizeof main_path, c, c->main);
    case_path(report, sizeof report, c, c->report);
    cct_error err;
    cct_error_clear(&err);
    cct_table main, cmp[MAX_CMP];
    if (cct_table_load_file(main_path, &main, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    for (size_t k = 0; k < c->n_compared; k++) {
        case_path(path, sizeof path, c, c->compared[k]);
        if (cct_table_load_file(path, &cmp[k], &err) != CCT_OK)
            fail_msg("%s", err.msg);
    }
    cct_store *st;
    if (cct_store_open(store_path, true, &st, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_compare_line lines[(2 + MAX_CMP) * WIDTH];
    if (cct_bench_compare_lines(st, 1, &main, cmp, c->n_compared, lines, &err) != CCT_OK)
        fail_msg("%s", err.msg);

    FILE *f = fopen(report, "r");
    assert_non_null(f);
    char line[2048];
    bool section = false;
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "## Tables compared in the same run"))
            section = true;
        else if (section && line[0] == '|' && !strstr(line, "---") && !strstr(line, "| table |"))
            rows += check_row(c, line, lines);
    }
    fclose(f);
    assert_true(section);
    /* every table in three collectives and over all: each row checked */
    assert_int_equal(rows, (2 + c->n_compared) * 4);
    /* the forced table under test against itself is exactly even */
    assert_true(fabs(lines[1 * WIDTH + CCT_NUM_COLLS].vs_main - 1.0) < 1e-12);
    if (c->n_compared == MAX_CMP) {
        const cct_compare_line *argmin = &lines[2 * WIDTH + CCT_NUM_COLLS],
                               *prev = &lines[3 * WIDTH + CCT_NUM_COLLS];
        assert_true(prev->slower_sig > prev->faster_sig); /* the previous fitter lost sizes */
        assert_true(argmin->vs_main > 0.98 && argmin->vs_main < 1.02);
    }
    cct_store_close(st);
    cct_table_destroy(&main);
    for (size_t k = 0; k < c->n_compared; k++)
        cct_table_destroy(&cmp[k]);
}

static void test_compared_tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        compared_tables(&cases[i]);
}

static void summary_line(const bench_case *c)
{
    char store_path[PATH_MAX], report[PATH_MAX];
    case_path(store_path, sizeof store_path, c, c->store);
    case_path(report, sizeof report, c, c->report);
    cct_error err;
    cct_error_clear(&err);
    cct_store *st;
    if (cct_store_open(store_path, true, &st, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    cct_bench_summary sum;
    if (cct_bench_report(st, 1, out, NULL, &sum, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    fclose(out);
    cct_store_close(st);
    char want[512];
    snprintf(want, sizeof want,
             "%zu sizes: geometric-mean speed-up over NCCL's default %.3fx; worst tuned/default "
             "%.3f; worst tuned/oracle %.3f; sizes below 0.98 x default: %zu (%zu of them a "
             "significant loss), below 0.98 x oracle: %zu (%zu significant)",
             sum.rows, sum.geomean_vs_default, sum.worst_vs_default, sum.worst_vs_oracle,
             sum.below_098_default, sum.below_098_default_sig, sum.below_098_oracle,
             sum.below_098_oracle_sig);
    FILE *f = fopen(report, "r");
    assert_non_null(f);
    char line[2048];
    bool found = false;
    while (fgets(line, sizeof line, f))
        found |= strncmp(line, want, strlen(want)) == 0;
    fclose(f);
    if (!found)
        fail_msg("%s has no line \"%s\"", c->report, want);
    assert_int_equal(sum.rows, 3 * 13); /* allgather, reducescatter, allreduce: 1 KiB - 64 MiB */
}

static void test_summary_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        summary_line(&cases[i]);
}

int main(void)
{
    if (!fixture_mirror())
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_compared_tables),
                                       cmocka_unit_test(test_summary_line)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
