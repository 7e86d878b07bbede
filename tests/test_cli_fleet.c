/*
 * test_cli_fleet.c - `ccltune validate FOLDER`: a folder of tables as CCLTUNE_TABLE may name
 * one, checked as a user runs it (the built binary, CCT_CCLTUNE).
 *
 * Every table of the folder is checked (a broken one does not hide the others); two tables
 * that would tie for one box and communicator shape are an error naming both and the shape;
 * tables that precedence tells apart (an exact NCCL release and a major.minor one) are fine;
 * an empty folder is an error.  Exit status 0 / 1 as for files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cli_test_util.h"

#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("expected '%s' in:\n%s", (needle), (hay));                                    \
    } while (0)

static char *full_text; /* tests/data/tables/full.yaml */

static ct_result validate(const char *a, const char *b)
{
    const char *args[] = {"validate", a, b, NULL};
    ct_result r = ct_run(args);
    if (!r.out || !r.err)
        fail_msg("cannot run %s", getenv("CCT_CCLTUNE"));
    return r;
}

/* dir/name holding full.yaml with `from` replaced by `to` (NULL: unchanged). */
static void put(const char *dir, const char *name, const char *from, const char *to)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    const char *at = from ? strstr(full_text, from) : NULL;
    if (from)
        assert_non_null(at);
    if (at) {
        fwrite(full_text, 1, (size_t)(at - full_text), f);
        fputs(to, f);
        fputs(at + strlen(from), f);
    } else {
        fputs(full_text, f);
    }
    fclose(f);
    chmod(path, 0644);
}

static void folders(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char path[4096];
    snprintf(path, sizeof path, "%s/data/tables/full.yaml", src);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    full_text = calloc(1, 1 << 20);
    assert_non_null(full_text);
    assert_true(fread(full_text, 1, (1 << 20) - 1, f) > 0);
    fclose(f);
    char *dir = ct_tmpdir("cli-fleet");
    assert_non_null(dir);

    /* an exact release and major.minor only: precedence decides, no error */
    put(dir, "h200-2.28.9.yaml", NULL, NULL);
    put(dir, "h200-2.28.yaml", "  nccl: \"2.28.9\"\n  cuda", "  nccl: \"2.28\"\n  cuda");
    put(dir, "h100.yaml", "gpu: \"NVIDIA H200\"", "gpu: \"NVIDIA H100 80GB HBM3\"");
    ct_result r = validate(dir, NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "h200-2.28.yaml: ok (");
    assert_contains(r.out, "h100.yaml: ok (");
    assert_contains(r.out, ": ok (folder of 3 tables, no two tie)");
    assert_string_equal(r.err, "");
    ct_result_free(&r);

    /* a second table for the same box: a tie at the shape they share */
    put(dir, "h200-copy.yaml", NULL, NULL);
    /* and a broken one: still reported, the others still checked */
    put(dir, "broken.yaml", "ccltune_table: 1", "ccltune_table: 99");
    r = validate(dir, NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "broken.yaml");
    assert_contains(r.err, "h200-2.28.9.yaml and h200-copy.yaml both match NVIDIA H200");
    assert_contains(r.err, "at ranks=4 nodes=4 with equal precedence");
    assert_contains(r.out, "h200-copy.yaml: ok (");
    assert_true(strstr(r.out, "no two tie") == NULL);
    ct_result_free(&r);
    ct_rm_rf(dir);
    free(dir);

    dir = ct_tmpdir("cli-fleet-empty");
    r = validate(dir, NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "folder holds no *.yaml table");
    ct_result_free(&r);
    ct_rm_rf(dir);
    free(dir);
    free(full_text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(folders)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
