/*
 * test_bad_tables.c - the malformed-table corpus, and the good tables, through the loader.
 *
 * Every file in tests/bad_tables/ starts with "# expect: TEXT"; the loader must refuse it
 * with a message that names the file and contains TEXT (which includes LINE:COLUMN, so a
 * right message at the wrong place fails).  One cmocka test per file, built at run time
 * from the folder, so a failure names the file.  The good side: every file in
 * tests/data/tables/ loads, and so must survive every truncation of itself without a
 * crash or leak (a cheap, deterministic stand-in for the fuzzer).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cct_table.h"
#include "fixture_test_util.h"

#define MIN_BAD_TABLES 35
#define MAX_FILES 512

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(size >= 0);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    *len = fread(buf, 1, (size_t)size, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void test_bad_table(void **state)
{
    const char *path = *state;
    size_t len;
    char *text = read_all(path, &len);
    const char *tag = "# expect: ";
    if (strncmp(text, tag, strlen(tag)) != 0)
        fail_msg("%s: the first line must be '# expect: LINE:COL: message'", path);
    const char *start = text + strlen(tag);
    size_t elen = strcspn(start, "\n");
    char expected[1024];
    assert_true(elen > 0 && elen < sizeof expected);
    memcpy(expected, start, elen);
    expected[elen] = '\0';
    free(text);

    cct_table t;
    cct_error err;
    cct_status st = cct_table_load_file(path, &t, &err);
    if (st == CCT_OK)
        fail_msg("%s loaded; expected: %s", path, expected);
    if (strncmp(err.msg, path, strlen(path)) != 0 || !strstr(err.msg, expected))
        fail_msg("%s\n  got:      %s\n  expected: %s", path, err.msg, expected);
    assert_int_equal(t.n_sections, 0);
    assert_null(t.provenance.tool);
}

static void test_good_table(void **state)
{
    const char *path = *state;
    cct_table t;
    cct_error err;
    if (cct_table_load_file(path, &t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_true(t.n_sections > 0 || t.constants.present); /* constants-only: "rules off" */
    cct_table_destroy(&t);

    /* every proper prefix is refused or (rarely: a cut at a line end) accepted, never a crash */
    size_t len;
    char *text = read_all(path, &len);
    size_t refused = 0;
    for (size_t cut = 0; cut < len; cut++) {
        char *prefix = malloc(cut + 1); /* exact size, so valgrind sees any over-read */
        assert_non_null(prefix);
        memcpy(prefix, text, cut);
        if (cct_table_load_buffer(prefix, cut, "prefix", &t, &err) == CCT_OK)
            cct_table_destroy(&t);
        else
            refused++;
        free(prefix);
    }
    assert_true(refused > len / 2);
    free(text);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Paths of the .yaml files under SRCDIR/rel, sorted; the count goes to *n. */
static char **list_yaml(const char *rel, size_t *n)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    if (!src) {
        fprintf(stderr, "CCT_TEST_SRCDIR is not set\n");
        exit(1);
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", src, rel);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s: %s\n", dir, strerror(errno));
        exit(1);
    }
    char **paths = calloc(MAX_FILES, sizeof *paths);
    *n = 0;
    struct dirent *e;
    while (paths && (e = readdir(d)) && *n < MAX_FILES) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        size_t plen = strlen(dir) + len + 2;
        paths[*n] = malloc(plen);
        if (!paths[*n])
            break;
        snprintf(paths[*n], plen, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    if (paths)
        qsort(paths, *n, sizeof *paths, cmp_str);
    return paths;
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    size_t n_bad, n_good;
    char **bad = list_yaml("bad_tables", &n_bad);
    char **good = list_yaml("data/tables", &n_good);
    if (!bad || !good || n_bad < MIN_BAD_TABLES || n_good == 0) {
        fprintf(stderr, "expected at least %d bad tables and one good one (found %zu, %zu)\n",
                MIN_BAD_TABLES, n_bad, n_good);
        return 1;
    }
    struct CMUnitTest *tests = calloc(n_bad + n_good, sizeof *tests);
    if (!tests)
        return 1;
    for (size_t i = 0; i < n_bad; i++)
        tests[i] =
            (struct CMUnitTest){strrchr(bad[i], '/') + 1, test_bad_table, NULL, NULL, bad[i]};
    for (size_t i = 0; i < n_good; i++)
        tests[n_bad + i] =
            (struct CMUnitTest){strrchr(good[i], '/') + 1, test_good_table, NULL, NULL, good[i]};
    int failed = _cmocka_run_group_tests("table corpus", tests, n_bad + n_good, NULL, NULL);
    for (size_t i = 0; i < n_bad; i++)
        free(bad[i]);
    for (size_t i = 0; i < n_good; i++)
        free(good[i]);
    free(bad);
    free(good);
    free(tests);
    return failed;
}
