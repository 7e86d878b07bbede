/*
 * test_safe_file.c - the safe-loading rules (src/cct_safe_file.c) through the table loader
 * and through the commands that read tables: `ccltune validate`, `explain`, `export` and
 * `diff`.
 *
 * Every case of safe_file_cases.h (group/other-writable, foreign owner, oversized, directory,
 * FIFO, socket, device, links to those, world-writable folder without sticky bit) must be
 * refused with "PATH: unsafe file (rule NAME): ..." by cct_table_load_file(), and the CLI
 * must print that to stderr and exit 1 (diff: 2, its "trouble" status, as in diff(1)); the
 * accepted cases must load.  CCLTUNE_TABLE_UNSAFE_OK=1 must waive exactly the mode, owner
 * and directory rules.  A FIFO must be refused without blocking: an alarm fails the test if
 * anything hangs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cct_safe_file.h"
#include "cli_test_util.h"
#include "safe_file_cases.h"

static char *dir;
static sf_case cases[SF_MAX];
static int n_cases;

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("safe");
    if (!dir)
        return -1;
    n_cases = sf_make(dir, cases);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    return 0;
}

/* The refusal names the file first, then the rule and what is wrong. */
static void check_refusal(const sf_case *c, const char *msg)
{
    if (strncmp(msg, c->path, strlen(c->path)) != 0 || !strstr(msg, c->rule) ||
        (c->detail && !strstr(msg, c->detail)))
        fail_msg("%s: expected \"%s: ...%s...%s\", got \"%s\"", c->name, c->path, c->rule,
                 c->detail ? c->detail : "", msg);
}

static void loader(void **state)
{
    (void)state;
    int tried = 0;
    for (int i = 0; i < n_cases; i++) {
        const sf_case *c = &cases[i];
        if (c->skip) {
            print_message("skipped (cannot be set up here): %s\n", c->name);
            continue;
        }
        cct_table t;
        cct_error err;
        cct_status st = cct_table_load_file(c->path, &t, &err);
        if (!c->rule) {
            if (st != CCT_OK)
                fail_msg("%s: refused: %s", c->name, err.msg);
            cct_table_destroy(&t);
        } else {
            assert_int_equal(st, CCT_EPERM);
            check_refusal(c, err.msg);
            assert_int_equal(t.n_sections, 0);
        }
        tried++;
    }
    assert_true(tried >= 16);
}

static void waiver(void **state)
{
    (void)state;
    setenv("CCLTUNE_TABLE_UNSAFE_OK", "1", 1);
    cct_safe_rules rules = cct_safe_rules_default(CCT_TABLE_MAX_FILE_BYTES);
    assert_false(rules.check_access);
    for (int i = 0; i < n_cases; i++) {
        const sf_case *c = &cases[i];
        if (c->skip)
            continue;
        char *data = NULL;
        size_t len = 0;
        cct_error err, waived;
        cct_status st = cct_safe_read(c->path, &rules, &data, &len, &err, &waived);
        if (c->waivable) {
            if (st != CCT_OK)
                fail_msg("%s: refused although waived: %s", c->name, err.msg);
            assert_int_equal(len, strlen(sf_table));
            if (c->rule)
                check_refusal(c, waived.msg); /* what was waived is still said */
            else
                assert_string_equal(waived.msg, "");
            free(data);
        } else {
            assert_int_equal(st, CCT_EPERM);
            check_refusal(c, err.msg);
            assert_null(data);
        }
    }
    unsetenv("CCLTUNE_TABLE_UNSAFE_OK");
    assert_true(cct_safe_rules_default(1).check_access);
}

/* A file whose size stat() cannot tell (procfs says 0) is refused before a byte is read:
 * procfs is a kernel interface, not stored files (the filesystem rule). */
static void limit_while_reading(void **state)
{
    (void)state;
    cct_safe_rules rules = {64, true};
    char *data = NULL;
    size_t len = 0;
    cct_error err;
    assert_int_equal(cct_safe_read("/proc/self/maps", &rules, &data, &len, &err, NULL), CCT_EPERM);
    assert_non_null(strstr(err.msg, "(rule filesystem): "));
    assert_non_null(strstr(err.msg, " on procfs, a kernel interface"));
    assert_null(data);
}

static void missing_files(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/dangling.yaml", dir);
    assert_int_equal(symlink("/nonexistent/table.yaml", path), 0);
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file(path, &t, &err), CCT_EIO);
    assert_non_null(strstr(err.msg, "cannot open: No such file or directory"));
    assert_int_equal(cct_table_load_file("/nonexistent/x.yaml", &t, &err), CCT_EIO);
    unlink(path);
}

/* What a user sees: the same sentence on stderr, exit 1 (diff: 2). */
static void commands(void **state)
{
    (void)state;
    char good[4200], out[4200];
    snprintf(good, sizeof good, "%s/good.yaml", dir);
    snprintf(out, sizeof out, "%s/export.csv", dir);
    int checked = 0;
    for (int i = 0; i < n_cases; i++) {
        const sf_case *c = &cases[i];
        if (c->skip)
            continue;
        const char *const validate[] = {"validate", c->path, NULL};
        const char *const explain[] = {"explain", c->path, "--coll", "allreduce",
                                       "--ranks", "4",     NULL};
        const char *const export[] = {"export", c->path, "--format", "nccl-example-csv",
                                      "-o",     out,     NULL};
        const char *const diff[] = {"diff", good, c->path, NULL};
        const char *const *cmds[] = {validate, explain, export, diff};
        for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
            ct_result r = ct_run(cmds[k]);
            int want_fail = strcmp(cmds[k][0], "diff") == 0 ? 2 : 1;
            if (!c->rule) {
                if (r.status != 0)
                    fail_msg("ccltune %s %s: exit %d: %s", cmds[k][0], c->name, r.status, r.err);
            } else {
                if (r.status != want_fail)
                    fail_msg("ccltune %s %s: exit %d, expected %d", cmds[k][0], c->name, r.status,
                             want_fail);
                const char *line = strstr(r.err, c->path);
                if (!line || !strstr(line, c->rule))
                    fail_msg("ccltune %s %s: stderr lacks \"%s: ...%s\": %s", cmds[k][0], c->name,
                             c->path, c->rule, r.err);
            }
            ct_result_free(&r);
            checked++;
        }
    }
    print_message("%d command runs checked\n", checked);
    assert_true(checked >= 64);
}

int main(void)
{
    alarm(300); /* a FIFO opened for reading would block forever: fail instead */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loader),
        cmocka_unit_test(waiver),
        cmocka_unit_test(limit_while_reading),
        cmocka_unit_test(missing_files),
        cmocka_unit_test(commands),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
