/*
 * test_plugin_constants.c - the plugin writes a table's nccl_constants into NCCL's model at
 * v5/v6 init (src/plugin/plugin_constants.c), driven through the built
 * libnccl-tuner-ccltune.so as NCCL drives it, with the stand-in CUDA driver.
 *
 * A v5/v6 init with a matching table changes exactly the entries the table sets (every other
 * byte of ncclTunerConstants_v5_t stays), also at rank counts the table has no section for
 * and for a constants-only table, with one INFO line and no WARN.  A mismatched fingerprint,
 * CCLTUNE_CONSTANTS=0, ccltune_control_constants(0) and the v1-v4 ABIs leave NCCL's
 * constants alone; CCLTUNE_RULES=0 keeps the constants and drops the rules.  The validation
 * (cct_constants_apply) is also tested directly on in-memory constants the reader would
 * never produce.
 */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ccltune_control.h"
#include "plugin_internal.h"
#include "plugin_test_util.h"

#define NA 7
#define NP 3

static const char *rules_8 = "  allreduce:\n"
                             "    - ranks: 8\n"
                             "      nodes: 1\n"
                             "      rules:\n"
                             "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n";
static const char *block = "nccl_constants:\n"
                           "  base_latency_us: {ring/ll: 4.5, tree/simple: 0}\n"
                           "  hw_latency_us: {nvlink/ring/ll: 0.25}\n"
                           "  per_ch_max_tree_bw_gbps: {hopper/1node: 50}\n";

static void *h;
static char *table_path;
static ncclTuner_v6_t *v6;
static ncclTuner_v5_t *v5;
static ncclTuner_v4_t *v4;
static int (*control_constants)(int);

static void env_reset(void)
{
    static const char *vars[] = {"CCLTUNE_TABLE",         "CCLTUNE_CONSTANTS", "CCLTUNE_RULES",
                                 "CCLTUNE_MEASURE",       "CCLTUNE_FORCE",     "CCT_FAKE_GPU_NAME",
                                 "NCCL_TUNER_CONFIG_FILE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    fake_nccl_version = 22809;
    tu_log_clear();
}

/* The table: `collectives` body (may be empty: {}) and, when with_block, the constants. */
static void use_table(const char *collectives, bool with_block)
{
    char body[2048];
    snprintf(body, sizeof body, "%s%s", collectives[0] ? collectives : "  {}\n",
             with_block ? block : "");
    /* tu_table_yaml puts the body under "collectives:"; "  {}" is a valid empty mapping */
    char *text = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, true, body);
    if (!collectives[0]) { /* "collectives:\n  {}\n" -> keep it flow style on one line */
        char *p = strstr(text, "collectives:\n  {}\n");
        assert_non_null(p);
        memmove(p + strlen("collectives: {}\n"), p + strlen("collectives:\n  {}\n"),
                strlen(p + strlen("collectives:\n  {}\n")) + 1);
        memcpy(p, "collectives: {}\n", strlen("collectives: {}\n"));
    }
    if (table_path) {
        unlink(table_path);
        free(table_path);
    }
    table_path = tu_write_temp(text);
    free(text);
    assert_non_null(table_path);
    setenv("CCLTUNE_TABLE", table_path, 1);
}

static void open_plugin(void)
{
    assert_true(tu_load_fake_cuda());
    h = tu_plugin_open();
    assert_non_null(h);
    v6 = tu_sym(h, "ncclTunerPlugin_v6");
    v5 = tu_sym(h, "ncclTunerPlugin_v5");
    v4 = tu_sym(h, "ncclTunerPlugin_v4");
    *(void **)&control_constants = tu_sym(h, "ccltune_control_constants");
    assert_true(v6 && v5 && v4 && control_constants);
}

static void close_plugin(void)
{
    assert_true(tu_plugin_close(h));
    h = NULL;
}

/* NCCL's starting point: every entry a distinct value, so any stray write shows. */
static void nccl_defaults(ncclTunerConstants_v5_t *k)
{
    double *d = (double *)k;
    for (size_t i = 0; i < sizeof *k / sizeof(double); i++)
        d[i] = 100.0 + (double)i;
}

static ncclTunerConstants_v5_t init5(int nranks, void **ctx)
{
    ncclTunerConstants_v5_t k;
    nccl_defaults(&k);
    ncclNvlDomainInfo_v5_t nvl = {1, nranks, nranks};
    assert_int_equal(v5->init(ctx, 0x77 + (uint64_t)nranks, (size_t)nranks, 1, tu_logger, &nvl, &k),
                     ncclSuccess);
    return k;
}

/* Exactly the table's four entries changed, everything else as NCCL had it. */
static void expect_written(const ncclTunerConstants_v5_t *k)
{
    ncclTunerConstants_v5_t want;
    nccl_defaults(&want);
    want.baseLatencies[1][0] = 4.5; /* ring/ll */
    want.baseLatencies[0][2] = 0.0; /* tree/simple */
    want.hwLatencies[0][1][0] = 0.25;
    want.perChMaxTreeBws[2][0] = 50.0;
    assert_memory_equal(k, &want, sizeof want);
}

static void expect_untouched(const ncclTunerConstants_v5_t *k)
{
    ncclTunerConstants_v5_t want;
    nccl_defaults(&want);
    assert_memory_equal(k, &want, sizeof want);
}

/* Ring/LL chosen by the rule, or left to NCCL. */
static bool rule_applied(void *ctx)
{
    float c[NA][NP];
    tu_costs_fill(&c[0][0], NA, NP);
    int nch = 0;
    assert_int_equal(v5->getCollInfo(ctx, 4, 4096, 1, (float **)c, NA, NP, 0, &nch), ncclSuccess);
    return c[1][0] == 0.0f;
}

static void test_written_with_and_without_section(void **state)
{
    (void)state;
    env_reset();
    use_table(rules_8, true);
    open_plugin();
    void *ctx8, *ctx3;
    ncclTunerConstants_v5_t k8 = init5(8, &ctx8);
    expect_written(&k8);
    assert_true(rule_applied(ctx8)); /* the rules still apply where they exist */
    ncclTunerConstants_v5_t k3 = init5(3, &ctx3);
    expect_written(&k3); /* no section for 3 ranks: the constants still apply */
    assert_false(rule_applied(ctx3));
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "wrote 4 NCCL model constants from table"), 2);
    const char *line = tu_log_find(NCCL_LOG_INFO, "wrote 4 NCCL model constants");
    assert_non_null(strstr(line, "base_latency_us ring/ll 103->4.5"));
    assert_non_null(strstr(line, "per_ch_max_tree_bw_gbps hopper/1node"));
    v5->finalize(ctx8);
    v5->finalize(ctx3);
    close_plugin();
}

static void test_constants_only_and_v6(void **state)
{
    (void)state;
    env_reset();
    use_table("", true);
    open_plugin();
    ncclTunerConstants_v6_t k;
    nccl_defaults(&k);
    ncclNvlDomainInfo_v6_t nvl = {1, 2, 2};
    void *ctx = NULL;
    assert_int_equal(v6->init(&ctx, 9, 2, 1, tu_logger, &nvl, &k), ncclSuccess);
    expect_written(&k);
    assert_false(rule_applied(ctx));
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    v6->finalize(ctx);
    close_plugin();
}

static void test_not_written(void **state)
{
    (void)state;
    void *ctx;
    /* a table for another GPU: nothing written, the usual one WARN */
    env_reset();
    use_table(rules_8, true);
    setenv("CCT_FAKE_GPU_NAME", "NVIDIA A100-SXM4-80GB", 1);
    open_plugin();
    ncclTunerConstants_v5_t k = init5(8, &ctx);
    expect_untouched(&k);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "does not apply"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "wrote"), 0);
    v5->finalize(ctx);
    close_plugin();

    /* CCLTUNE_CONSTANTS=0 */
    env_reset();
    use_table(rules_8, true);
    setenv("CCLTUNE_CONSTANTS", "0", 1);
    open_plugin();
    k = init5(8, &ctx);
    expect_untouched(&k);
    assert_true(rule_applied(ctx));
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "not written (CCLTUNE_CONSTANTS=0)"), 1);
    v5->finalize(ctx);
    close_plugin();

    /* the control call: one communicator without, the next with */
    env_reset();
    use_table(rules_8, true);
    open_plugin();
    assert_int_equal(control_constants(2), -1);
    assert_int_equal(control_constants(0), 0);
    k = init5(8, &ctx);
    expect_untouched(&k);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "not written (ccltune_control_constants(0))"), 1);
    void *ctx2;
    assert_int_equal(control_constants(1), 0);
    ncclTunerConstants_v5_t k2 = init5(8, &ctx2);
    expect_written(&k2);
    expect_untouched(&k); /* the first communicator's constants stay NCCL's */
    v5->finalize(ctx);
    v5->finalize(ctx2);
    close_plugin();

    /* no block: nothing written, nothing said */
    env_reset();
    use_table(rules_8, false);
    open_plugin();
    k = init5(8, &ctx);
    expect_untouched(&k);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "constants"), 0);
    v5->finalize(ctx);
    close_plugin();
}

static void test_old_abi_says_ignored_once(void **state)
{
    (void)state;
    env_reset();
    use_table(rules_8, true);
    open_plugin();
    void *a = NULL, *b = NULL;
    assert_int_equal(v4->init(8, 1, tu_logger, &a), ncclSuccess);
    assert_int_equal(v4->init(8, 1, tu_logger, &b), ncclSuccess);
    assert_int_equal(
        tu_log_count(NCCL_LOG_INFO, "the table's 4 NCCL model constants are ignored: tuner v4"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    v4->destroy(a);
    v4->destroy(b);
    close_plugin();
}

static void test_rules_off(void **state)
{
    (void)state;
    env_reset();
    use_table(rules_8, true);
    setenv("CCLTUNE_RULES", "0", 1);
    open_plugin();
    void *ctx;
    ncclTunerConstants_v5_t k = init5(8, &ctx);
    expect_written(&k);
    assert_false(rule_applied(ctx));
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "rules off (CCLTUNE_RULES=0)"), 1);
    v5->finalize(ctx);
    assert_int_equal(tu_field(tu_log_find(NCCL_LOG_INFO, "finalize"), "no_section"), 1);
    close_plugin();
}

/* The plugin's own validation, on constants no table file could hold. */
static void test_apply_validates(void **state)
{
    (void)state;
    cct_constants c;
    cct_constants_clear(&c);
    c.present = true;
    ncclTunerConstants_v5_t k;
    nccl_defaults(&k);
    char summary[256];
    cct_error err;
    assert_int_equal(cct_constants_apply(&c, &k, summary, sizeof summary, &err), 0);
    expect_untouched(&k);
    c.base_latency_us[1][0] = 4.5;
    c.ll_max_bw[2][0] = -3.0; /* invalid: nothing at all may be written */
    assert_int_equal(cct_constants_apply(&c, &k, summary, sizeof summary, &err), -1);
    assert_non_null(strstr(err.msg, "ll_max_bw_gbps hopper/1node: -3 must be > 0"));
    expect_untouched(&k);
    c.ll_max_bw[2][0] = NAN;
    c.hw_latency_us[2][0][1] = INFINITY;
    assert_int_equal(cct_constants_apply(&c, &k, summary, sizeof summary, &err), -1);
    assert_non_null(strstr(err.msg, "net/tree/ll128: inf is not finite"));
    c.hw_latency_us[2][0][1] = NAN;
    /* a tiny summary buffer is cut, never overrun */
    char tiny[8];
    assert_int_equal(cct_constants_apply(&c, &k, tiny, sizeof tiny, &err), 1);
    assert_true(strlen(tiny) < sizeof tiny);
    assert_true(k.baseLatencies[1][0] == 4.5);
}

static int teardown(void **state)
{
    (void)state;
    if (h)
        dlclose(h);
    h = NULL;
    return 0;
}

int main(void)
{
    tu_log_echo = getenv("CCT_TEST_VERBOSE") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_written_with_and_without_section, teardown),
        cmocka_unit_test_teardown(test_constants_only_and_v6, teardown),
        cmocka_unit_test_teardown(test_not_written, teardown),
        cmocka_unit_test_teardown(test_old_abi_says_ignored_once, teardown),
        cmocka_unit_test_teardown(test_rules_off, teardown),
        cmocka_unit_test(test_apply_validates),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (table_path) {
        unlink(table_path);
        free(table_path);
    }
    tu_unload_fake_cuda();
    return rc;
}
