/*
 * test_h100_bench.c - the committed bench report of the H100 proof run
 * (tests/data/h100/proofs-2026-12-06) recomputed from the bench's own store.
 *
 * `ccltune bench t4.yaml --compare argmin.yaml` ran on an NVIDIA H100 80GB HBM3 (4 rank
 * processes sharing it) and wrote bench.md from the points it stored (bench.db.gz).  Here the
 * store is read back: cct_bench_compare_lines() judges t4.yaml (as the plugin applied it and
 * forced) and argmin.yaml on the run's points, and every row of the report's "Tables compared
 * in the same run" section must carry the same sizes, significance counts and ratios to the
 * printed precision; cct_bench_report()'s summary must match the report's "N sizes:
 * geometric-mean ..." line the same way.  A change to how the bench judges a table, or a
 * store that no longer reads as it did, fails here on real GPU data.
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

#define DAY "data/h100/proofs-2026-12-06"
#define WIDTH (CCT_NUM_COLLS + 1)

static void day_path(char *buf, size_t len, const char *name)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    snprintf(buf, len, "%s/" DAY "/%s", src, name);
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

/* Row index in the compare lines of a report's table name: 0 plugin, 1 forced, 2 argmin. */
static int row_of(const char *name)
{
    if (strcmp(name, "under test (plugin)") == 0)
        return 0;
    if (strcmp(name, "under test (forced)") == 0)
        return 1;
    size_t n = strlen(name);
    return n >= 11 && strcmp(name + n - 11, "argmin.yaml") == 0 ? 2 : -1;
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
static bool check_row(char *line, const cct_compare_line *lines)
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
    int row = row_of(field[1]);
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

static void test_compared_tables(void **state)
{
    (void)state;
    char store_path[PATH_MAX], t4_path[PATH_MAX], argmin_path[PATH_MAX], report[PATH_MAX];
    day_path(store_path, sizeof store_path, "bench.db.gz");
    day_path(t4_path, sizeof t4_path, "t4.yaml");
    day_path(argmin_path, sizeof argmin_path, "argmin.yaml");
    day_path(report, sizeof report, "bench.md");
    cct_error err;
    cct_error_clear(&err);
    cct_table t4, argmin;
    if (cct_table_load_file(t4_path, &t4, &err) != CCT_OK ||
        cct_table_load_file(argmin_path, &argmin, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_store *st;
    if (cct_store_open(store_path, true, &st, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_compare_line lines[3 * WIDTH];
    if (cct_bench_compare_lines(st, 1, &t4, &argmin, 1, lines, &err) != CCT_OK)
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
            rows += check_row(line, lines);
    }
    fclose(f);
    assert_true(section);
    /* three tables in three collectives and over all: every one of them checked */
    assert_int_equal(rows, 3 * 4);
    /* the forced table under test against itself is exactly even */
    assert_true(fabs(lines[1 * WIDTH + CCT_NUM_COLLS].vs_main - 1.0) < 1e-12);
    cct_store_close(st);
    cct_table_destroy(&t4);
    cct_table_destroy(&argmin);
}

static void test_summary_line(void **state)
{
    (void)state;
    char store_path[PATH_MAX], report[PATH_MAX];
    day_path(store_path, sizeof store_path, "bench.db.gz");
    day_path(report, sizeof report, "bench.md");
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
        fail_msg("bench.md has no line \"%s\"", want);
    assert_int_equal(sum.rows, 3 * 13); /* allgather, reducescatter, allreduce: 1 KiB - 64 MiB */
}

int main(void)
{
    if (!fixture_mirror())
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_compared_tables),
                                       cmocka_unit_test(test_summary_line)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
