/*
 * test_plugin_safe.c - the built plugin meets each unsafe table of safe_file_cases.h through
 * CCLTUNE_TABLE, as a training job would.
 *
 * Refused files: communicators initialise, exactly one WARN for the process names the file
 * and the rule ("PATH: unsafe file (rule mode): ..."), no call is changed (NCCL's defaults),
 * and under CCLTUNE_STRICT=1 every init fails.  Accepted files: no WARN and the table's
 * choice is applied.  With CCLTUNE_TABLE_UNSAFE_OK=1 a waivable file is used, with one WARN
 * saying which rule was waived; the others stay refused.  An alarm turns a hang (a FIFO
 * opened for reading) into a failure.
 *
 * Kernel interfaces: /proc and /sys hold "regular files" that pass the access rules (mode
 * 0444, owned by this user or root) but are not stored files -- reading /proc/kmsg as root
 * consumes the kernel's messages.  They must be refused by the filesystem rule before a
 * byte is read, through the core reader and through the plugin, waiver or not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cct_safe_file.h"
#include "cli_test_util.h"
#include "plugin_test_util.h"
#include "safe_file_cases.h"

enum { RING_LL = 1 * 3 + 0 }; /* the table's choice for allreduce 4096 bytes on 4 ranks */

typedef enum mode { NORMAL, STRICT, WAIVED } mode;

static int check_case(const sf_case *c, mode m)
{
    tu_log_clear();
    setenv("CCLTUNE_TABLE", c->path, 1);
    if (m == STRICT)
        setenv("CCLTUNE_STRICT", "1", 1);
    else
        unsetenv("CCLTUNE_STRICT");
    if (m == WAIVED)
        setenv("CCLTUNE_TABLE_UNSAFE_OK", "1", 1);
    else
        unsetenv("CCLTUNE_TABLE_UNSAFE_OK");
    bool refused = c->rule && !(m == WAIVED && c->waivable);
    void *h = tu_plugin_open();
    assert_non_null(h);
    ncclTuner_v5_t *v5 = tu_sym(h, "ncclTunerPlugin_v5");
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 4, 4};
    int failures = 0;
    for (int i = 0; i < 2; i++) {
        void *ctx = NULL;
        ncclResult_t res = v5->init(&ctx, 11 + (uint64_t)i, 4, 4, tu_logger, &nvl, &k);
        if (m == STRICT && refused) {
            if (res == ncclSuccess || ctx) {
                fprintf(stderr, "%s: strict init succeeded\n", c->name);
                failures++;
            }
            continue;
        }
        assert_int_equal(res, ncclSuccess);
        float costs[21];
        tu_costs_fill(costs, 7, 3);
        int nch = 0;
        v5->getCollInfo(ctx, 4, 4096, 1, (float **)costs, 7, 3, 0, &nch);
        bool applied = costs[RING_LL] == 0.0f;
        if (applied == refused) {
            fprintf(stderr, "%s: the table was %s\n", c->name, applied ? "applied" : "not applied");
            failures++;
        }
        v5->finalize(ctx);
    }
    int warns = tu_log_count(NCCL_LOG_WARN, NULL);
    int want = !c->rule ? 0 : (m == STRICT ? 2 : 1); /* strict: one per failed init */
    const char *line = tu_log_find(NCCL_LOG_WARN, c->path);
    bool named =
        !c->rule || (line && strstr(line, c->rule) && (!c->detail || strstr(line, c->detail)));
    if (m == WAIVED && c->rule && c->waivable)
        named = named && line && strstr(line, "used anyway because CCLTUNE_TABLE_UNSAFE_OK=1");
    if (warns != want || tu_log_count(NCCL_LOG_WARN, c->path) != want || !named) {
        fprintf(stderr, "%s (mode %d): expected %d WARN naming the file and \"%s\", got %d:\n",
                c->name, (int)m, want, c->rule ? c->rule : "-", warns);
        for (int i = 0; i < tu_n_log; i++)
            fprintf(stderr, "  [%d] %s\n", tu_log[i].level, tu_log[i].text);
        failures++;
    }
    assert_true(tu_plugin_close(h));
    return failures;
}

static void every_case(void **state)
{
    (void)state;
    assert_true(tu_load_fake_cuda());
    char *dir = ct_tmpdir("plugin-safe");
    assert_non_null(dir);
    sf_case cases[SF_MAX];
    int n = sf_make(dir, cases), tried = 0, failures = 0;
    for (int i = 0; i < n; i++) {
        if (cases[i].skip) {
            print_message("skipped (cannot be set up here): %s\n", cases[i].name);
            continue;
        }
        failures += check_case(&cases[i], NORMAL);
        failures += check_case(&cases[i], STRICT);
        failures += check_case(&cases[i], WAIVED);
        tried++;
    }
    unsetenv("CCLTUNE_STRICT");
    unsetenv("CCLTUNE_TABLE_UNSAFE_OK");
    ct_rm_rf(dir);
    free(dir);
    print_message("%d files, %d failures\n", tried, failures);
    assert_true(tried >= 16);
    assert_int_equal(failures, 0);
}

/* Regular files of procfs/sysfs that pass mode, owner and folder, refused by the filesystem
 * rule with a message naming the file system. */
static const struct {
    const char *path, *fs;
} kernel_files[] = {{"/proc/self/status", "procfs"}, {"/sys/devices/system/cpu/online", "sysfs"}};

static void kernel_interfaces(void **state)
{
    (void)state;
    assert_true(tu_load_fake_cuda());
    int tried = 0;
    for (size_t i = 0; i < sizeof kernel_files / sizeof *kernel_files; i++) {
        const char *path = kernel_files[i].path;
        if (access(path, R_OK) != 0) {
            print_message("skipped (absent here): %s\n", path);
            continue;
        }
        tried++;
        for (int waive = 0; waive < 2; waive++) {
            cct_safe_rules rules = {64u << 20, !waive};
            char *data = NULL;
            size_t len = 0;
            cct_error err, waived;
            cct_status st = cct_safe_read(path, &rules, &data, &len, &err, &waived);
            free(data);
            if (st != CCT_EPERM || !strstr(err.msg, "(rule filesystem)") ||
                !strstr(err.msg, kernel_files[i].fs))
                fail_msg("%s (waiver %d): expected a refusal by the filesystem rule naming %s, "
                         "got status %d \"%s\"",
                         path, waive, kernel_files[i].fs, (int)st, st == CCT_OK ? "" : err.msg);
        }
        /* the plugin: one WARN naming the file and the rule, NCCL's defaults */
        sf_case c = {.name = path, .rule = "rule filesystem", .detail = kernel_files[i].fs};
        snprintf(c.path, sizeof c.path, "%s", path);
        assert_int_equal(check_case(&c, NORMAL), 0);
        assert_int_equal(check_case(&c, STRICT), 0);
        assert_int_equal(check_case(&c, WAIVED), 0);
    }
    unsetenv("CCLTUNE_STRICT");
    unsetenv("CCLTUNE_TABLE_UNSAFE_OK");
    assert_true(tried >= 1);
}

int main(void)
{
    alarm(300);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case),
        cmocka_unit_test(kernel_interfaces),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_unload_fake_cuda();
    return rc;
}
