/*
 * test_bad_tables.c - the malformed-table corpus, and the good tables, through the loader.
 *
 * Every file in tests/bad_tables/ starts with "# expect: TEXT"; the loader must refuse it
 * with a message that names the file and contains TEXT (which includes LINE:COLUMN, so a
 * right message at the wrong place fails).  One cmocka test per file, built at run time
 * from the folder, so a failure names the file.  The good side: every file in
 * tests/data/tables/ loads, also after a UTF-8 byte-order mark (which editors write), and
 * must survive every truncation of itself without a crash or leak (a cheap, deterministic
 * stand-in for the fuzzer).  A corpus file may itself start with a byte-order mark; its
 * "# expect:" line follows the mark.
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
#define BOM "\xEF\xBB\xBF" /* UTF-8 byte-order mark */

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
    const char *first = text + (strncmp(text, BOM, 3) == 0 ? 3 : 0);
    if (strncmp(first, tag, strlen(tag)) != 0)
        fail_msg("%s: the first line must be '# expect: LINE:COL: message'", path);
    const char *start = first + strlen(tag);
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
    size_t n_sections = t.n_sections;
    cct_table_destroy(&t);

    size_t len;
    char *text = read_all(path, &len);
    /* the same text after a byte-order mark loads to the same table */
    char *marked = malloc(len + 3);
    assert_non_null(marked);
    memcpy(marked, BOM, 3);
    memcpy(marked + 3, text, len);
    if (cct_table_load_buffer(marked, len + 3, path, &t, &err) != CCT_OK)
        fail_msg("after a byte-order mark: %s", err.msg);
    assert_int_equal(t.n_sections, n_sections);
    cct_table_destroy(&t);
    free(marked);

    /* every proper prefix is refused or (rarely: a cut at a line end) accepted, never a crash */
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

/* A byte-order mark right before the first key is skipped: positions on its line and on
 * later lines are those an editor shows (it does not count the mark). */
static void test_bom_positions(void **state)
{
    (void)state;
    static const struct {
        const char *text, *expected;
    } cases[] = {
        {BOM "ccltune_table: 9\n", "<bom>:1:16: unsupported format version 9"},
        {BOM "ccltune_table: 1\nprovenance: {tool: t, created: c, source: s}\n"
             "fingerprint: {gpu: g, cc: nine, gpus_per_node: 1, nodes: 1, links: socket, "
             "nccl: \"2.28.9\"}\n",
         "<bom>:3:27: 'cc' must be a compute capability"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cct_table t;
        cct_error err;
        assert_int_not_equal(
            cct_table_load_buffer(cases[i].text, strlen(cases[i].text), "<bom>", &t, &err), CCT_OK);
        if (!strstr(err.msg, cases[i].expected))
            fail_msg("got:      %s\n  expected: %s", err.msg, cases[i].expected);
    }
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
    struct CMUnitTest *tests = calloc(n_bad + n_good + 1, sizeof *tests);
    if (!tests)
        return 1;
    tests[n_bad + n_good] =
        (struct CMUnitTest){"byte-order mark positions", test_bom_positions, NULL, NULL, NULL};
    for (size_t i = 0; i < n_bad; i++)
        tests[i] =
            (struct CMUnitTest){strrchr(bad[i], '/') + 1, test_bad_table, NULL, NULL, bad[i]};
    for (size_t i = 0; i < n_good; i++)
        tests[n_bad + i] =
            (struct CMUnitTest){strrchr(good[i], '/') + 1, test_good_table, NULL, NULL, good[i]};
    int failed = _cmocka_run_group_tests("table corpus", tests, n_bad + n_good + 1, NULL, NULL);
    for (size_t i = 0; i < n_bad; i++)
        free(bad[i]);
    for (size_t i = 0; i < n_good; i++)
        free(good[i]);
    free(bad);
    free(good);
    free(tests);
    return failed;
}
