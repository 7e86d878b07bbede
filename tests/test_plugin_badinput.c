/*
 * test_plugin_badinput.c - every malformed table of the corpus (tests/bad_tables) handed to
 * the built plugin through CCLTUNE_TABLE, the way a training job would meet it.
 *
 * For each file: communicators still initialise, exactly one WARN is logged for the whole
 * process and it names FILE:LINE:COLUMN as the file's "# expect:" line says, no call is
 * changed, and the finalize counters say "table_error".  With CCLTUNE_STRICT=1 the same
 * file makes communicator init fail instead.  Nothing may crash, whatever the bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>

#include "plugin_test_util.h"
#include "fixture_test_util.h"

/* "# expect: 11:77: ..." -> "11:77:"; "" when the file gives no position. */
static void expected_position(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "# expect: ");
        unsigned l, c;
        if (p && sscanf(p + 10, "%u:%u:", &l, &c) == 2) {
            snprintf(out, len, "%u:%u:", l, c);
            break;
        }
    }
    fclose(f);
}

static int check_file(const char *path, bool strict)
{
    tu_log_clear();
    setenv("CCLTUNE_TABLE", path, 1);
    if (strict)
        setenv("CCLTUNE_STRICT", "1", 1);
    else
        unsetenv("CCLTUNE_STRICT");
    void *h = tu_plugin_open();
    assert_non_null(h);
    ncclTuner_v5_t *v5 = tu_sym(h, "ncclTunerPlugin_v5");
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 4, 4};
    void *ctx[2] = {NULL, NULL};
    int failures = 0;
    for (int i = 0; i < 2; i++) {
        ncclResult_t res = v5->init(&ctx[i], 7 + (uint64_t)i, 4, 4, tu_logger, &nvl, &k);
        if (strict) {
            if (res == ncclSuccess || ctx[i] != NULL) {
                fprintf(stderr, "%s: strict init succeeded\n", path);
                failures++;
            }
            continue;
        }
        assert_int_equal(res, ncclSuccess);
        float c[21], before[21];
        tu_costs_fill(c, 7, 3);
        memcpy(before, c, sizeof c);
        int nch = 0;
        for (int coll = 0; coll < 5; coll++)
            v5->getCollInfo(ctx[i], coll, 4096, 1, (float **)c, 7, 3, 0, &nch);
        if (memcmp(c, before, sizeof c) != 0 || nch != 0) {
            fprintf(stderr, "%s: a call was changed\n", path);
            failures++;
        }
    }
    int warns = tu_log_count(NCCL_LOG_WARN, NULL);
    char pos[64], want[4200];
    expected_position(path, pos, sizeof pos);
    snprintf(want, sizeof want, "%s:%s", path, pos);
    if (warns != (strict ? 2 : 1) || tu_log_count(NCCL_LOG_WARN, want) != warns) {
        fprintf(stderr, "%s: expected %d WARN naming \"%s\", got %d:\n", path, strict ? 2 : 1, want,
                warns);
        for (int i = 0; i < tu_n_log; i++)
            fprintf(stderr, "  [%d] %s\n", tu_log[i].level, tu_log[i].text);
        failures++;
    }
    for (int i = 0; i < 2; i++)
        if (ctx[i])
            v5->finalize(ctx[i]);
    if (!strict && tu_field(tu_log_find(NCCL_LOG_INFO, "finalize"), "table_error") != 5) {
        fprintf(stderr, "%s: finalize does not count table_error\n", path);
        failures++;
    }
    assert_true(tu_plugin_close(h));
    return failures;
}

static void test_corpus(void **state)
{
    (void)state;
    assert_true(tu_load_fake_cuda());
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/bad_tables", src);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0, failures = 0;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        failures += check_file(path, false);
        failures += check_file(path, true);
        files++;
    }
    closedir(d);
    unsetenv("CCLTUNE_STRICT");
    printf("plugin bad-table corpus: %d files, %d failures\n", files, failures);
    assert_true(files >= 30);
    assert_int_equal(failures, 0);
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_unload_fake_cuda();
    return rc;
}
