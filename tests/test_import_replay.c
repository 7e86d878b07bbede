/*
 * test_import_replay.c - real nccl-tests logs from the lent H200 (tests/data/h200/nccl-tests)
 * through `ccltune import`, `ccltune fit` and the table, as a user runs them (suite replay).
 *
 * Checks: every log imports (2 ranks, NCCL_HOSTID per rank so --nodes 2); the text and the
 * JSON output of the same runs import the same number of points; fitting gives an allreduce
 * section decided among the forced Ring/Tree x LL/Simple logs, the other collectives (only
 * NCCL's default measured) skipped and said so; fitting the same store twice gives
 * byte-identical tables, and two imports of the same logs give tables that differ only in
 * the provenance's `measured` (the import's time) and the header comment that says it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *copy = malloc(n + 1);
    memcpy(copy, buf, n + 1);
    return copy;
}

static void test_import_fit_deterministic(void **state)
{
    (void)state;
    const char *cc = getenv("CCT_CCLTUNE"), *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(cc);
    assert_non_null(src);
    char logs[1024];
    snprintf(logs, sizeof logs, "%s/data/h200/nccl-tests", src);
    /* the same command line twice (the table records it): the same store name, run from two
     * folders; s0.db and s1.db link to them */
    for (int i = 0; i < 2; i++)
        assert_int_equal(run("mkdir %s/d%d && cd %s/d%d && '%s' import --store s.db --nodes 2 "
                             "%s/*.txt >%s/imp%d.out 2>&1 && ln -s d%d/s.db %s/s%d.db",
                             dir, i, dir, i, cc, logs, dir, i, i, dir, i),
                         0);
    /* the same store twice, and the second import once */
    assert_int_equal(
        run("'%s' fit --store %s/s0.db --cc 9.0 -o %s/t0.yaml 2>%s/fit0.err", cc, dir, dir, dir),
        0);
    assert_int_equal(
        run("'%s' fit --store %s/s0.db --cc 9.0 -o %s/t1.yaml 2>/dev/null", cc, dir, dir), 0);
    assert_int_equal(
        run("'%s' fit --store %s/s1.db --cc 9.0 -o %s/t2.yaml 2>/dev/null", cc, dir, dir), 0);
    char p0[128], p1[128];
    snprintf(p0, sizeof p0, "%s/t0.yaml", dir);
    snprintf(p1, sizeof p1, "%s/t1.yaml", dir);
    char *a = slurp(p0), *b = slurp(p1);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(b);
    assert_int_equal(
        run("diff %s/t0.yaml %s/t2.yaml | grep '^[<>]' | grep -v ' measured: \\|^. # Measured: '"
            " >/dev/null",
            dir, dir),
        1); /* grep finds nothing else: only the time (`measured`, and the header) differs */
    b = slurp(p1);
    /* one section: allreduce on 2 ranks / 2 nodes, decided among forced Ring/Tree logs */
    assert_non_null(strstr(a, "  allreduce:\n    - ranks: 2\n      nodes: 2\n"));
    assert_null(strstr(a, "  broadcast:"));
    /* the logs do not say how the ranks were joined: unknown, not a guess (it was `net`) */
    assert_non_null(strstr(a, "\n  links: unknown\n"));
    assert_non_null(strstr(a, "algo: tree"));
    free(a);
    free(b);
    snprintf(p0, sizeof p0, "%s/fit0.err", dir);
    char *msg = slurp(p0);
    assert_non_null(strstr(msg, "4 collective/topology groups skipped (only NCCL's default"));
    free(msg);
    /* 9 text logs x 15 sizes x 2 (in/out of place) = 270 points; the 5 JSON files: 150 */
    snprintf(p0, sizeof p0, "%s/imp0.out", dir);
    msg = slurp(p0);
    assert_non_null(strstr(msg, "imported 270 points"));
    free(msg);
    assert_int_equal(run("'%s' import --store %s/j.db --nodes 2 %s/*.json >%s/impj.out 2>&1", cc,
                         dir, logs, dir),
                     0);
    snprintf(p0, sizeof p0, "%s/impj.out", dir);
    msg = slurp(p0);
    assert_non_null(strstr(msg, "imported 150 points"));
    free(msg);
    /* and without --nodes the shared-GPU logs are refused with the reason and the fix */
    assert_int_equal(run("'%s' import --store %s/x.db %s/all_reduce_2ranks_default.txt 2>%s/x.err",
                         cc, dir, logs, dir),
                     1);
    snprintf(p0, sizeof p0, "%s/x.err", dir);
    msg = slurp(p0);
    assert_non_null(strstr(msg, "pass --nodes"));
    assert_non_null(strstr(msg, "all_reduce_2ranks_default.txt:8:1:"));
    free(msg);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/cct-impreplay-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_import_fit_deterministic)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf '%s'", dir);
    return rc;
}
