/*
 * test_fingerprint.c - matching a table's fingerprint against runtime facts
 * (src/cct_fingerprint.c), on tables built in memory.
 *
 * Covers each verdict, the order in which they are reported (GPU before NCCL before the
 * shared-GPU rule before topology), the NCCL major.minor rule with patch differences
 * accepted, the NCCL_HOSTID rule for tables measured with ranks sharing a GPU, and the
 * version parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cct_fingerprint.h"

static void make_table(cct_table *t, const char *gpu, int cc, const char *nccl, int rpg)
{
    cct_table_init(t);
    t->fingerprint.gpu = gpu ? strdup(gpu) : NULL;
    t->fingerprint.cc = cc;
    t->fingerprint.nccl = nccl ? strdup(nccl) : NULL;
    t->fingerprint.ranks_per_gpu = rpg;
    cct_section *s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 8, 1);
    assert_non_null(s);
    cct_rule r = cct_rule_blank();
    r.max_bytes = CCT_BYTES_INF;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    s = cct_table_add_section(t, CCT_COLL_ALLGATHER, 16, 2);
    assert_non_null(s);
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
}

static cct_runtime rt_h200(void)
{
    cct_runtime rt = {"NVIDIA H200", 90, 22809, 8, 1, false};
    return rt;
}

static cct_fp_verdict run(const cct_table *t, const cct_runtime *rt, char *msg)
{
    cct_fp_verdict v = cct_fingerprint_check(t, rt, msg, 512);
    assert_true(strlen(msg) > 0);
    return v;
}

static void test_match(void **state)
{
    (void)state;
    cct_table t;
    char msg[512];
    make_table(&t, "NVIDIA H200", 90, "2.28.9", 1);
    cct_runtime rt = rt_h200();
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    assert_true(cct_fp_usable(CCT_FP_MATCH));
    rt.gpu = "  nvidia h200 "; /* case and padding do not matter */
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    rt = rt_h200();
    rt.nranks = 16;
    rt.nnodes = 2; /* the other section */
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    rt = rt_h200();
    rt.nccl_version = 22803;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH_OTHER_PATCH);
    assert_non_null(strstr(msg, "2.28.3"));
    assert_true(cct_fp_usable(CCT_FP_MATCH_OTHER_PATCH));
    cct_table_destroy(&t);
}

static void test_mismatches(void **state)
{
    (void)state;
    cct_table t;
    char msg[512];
    make_table(&t, "NVIDIA H200", 90, "2.28.9", 1);
    cct_runtime rt = rt_h200();
    rt.gpu = "NVIDIA H100 80GB HBM3";
    assert_int_equal(run(&t, &rt, msg), CCT_FP_GPU);
    assert_non_null(strstr(msg, "NVIDIA H100 80GB HBM3"));
    assert_non_null(strstr(msg, "NVIDIA H200"));
    rt = rt_h200();
    rt.gpu = NULL;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NO_GPU);
    rt = rt_h200();
    rt.cc = 100;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_CC);
    rt.cc = -1;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NO_GPU);
    rt = rt_h200();
    rt.nccl_version = 22703;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NCCL);
    assert_non_null(strstr(msg, "2.27.3"));
    rt.nccl_version = 32809; /* major differs */
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NCCL);
    rt.nccl_version = 0;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NO_NCCL);
    rt = rt_h200();
    rt.nranks = 4;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_TOPOLOGY);
    rt.nranks = 8;
    rt.nnodes = 2;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_TOPOLOGY);
    for (int v = 0; v < CCT_FP_NUM_VERDICTS; v++)
        assert_string_not_equal(cct_fp_verdict_name(v), "?");
    assert_false(cct_fp_usable(CCT_FP_TOPOLOGY));
    cct_table_destroy(&t);
}

static void test_order_of_verdicts(void **state)
{
    (void)state;
    cct_table t;
    char msg[512];
    make_table(&t, "NVIDIA H200", 90, "2.28.9", 4);
    cct_runtime rt = {"NVIDIA A100", 80, 22105, 3, 3, false};
    assert_int_equal(run(&t, &rt, msg), CCT_FP_GPU);
    rt.gpu = "NVIDIA H200";
    assert_int_equal(run(&t, &rt, msg), CCT_FP_CC);
    rt.cc = 90;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NCCL);
    rt.nccl_version = 22809;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_SHARED_GPU);
    rt.hostid_set = true;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_TOPOLOGY);
    rt.nranks = 8;
    rt.nnodes = 1;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    cct_table_destroy(&t);
}

static void test_shared_gpu_rule(void **state)
{
    (void)state;
    cct_table t;
    char msg[512];
    make_table(&t, "NVIDIA H200", 90, "2.28.9", 4);
    cct_runtime rt = rt_h200();
    assert_int_equal(run(&t, &rt, msg), CCT_FP_SHARED_GPU);
    assert_non_null(strstr(msg, "NCCL_HOSTID"));
    rt.hostid_set = true;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    cct_table_destroy(&t);
    make_table(&t, "NVIDIA H200", 90, "2.28.9", 1); /* a real deployment table */
    rt.hostid_set = true;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    cct_table_destroy(&t);
}

static void test_unset_table_fields(void **state)
{
    (void)state;
    cct_table t;
    char msg[512];
    make_table(&t, NULL, 0, NULL, 0);
    cct_runtime rt = {NULL, -1, 0, 8, 1, false};
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    cct_table_destroy(&t);
    make_table(&t, "NVIDIA H200", 90, "two.28", 1);
    rt = rt_h200();
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NCCL);
    assert_non_null(strstr(msg, "two.28"));
    cct_table_destroy(&t);
}

static void test_version_parse(void **state)
{
    (void)state;
    assert_int_equal(cct_nccl_version_parse("2.28.9"), 22809);
    assert_int_equal(cct_nccl_version_parse("2.19.3"), 21903);
    assert_int_equal(cct_nccl_version_parse("2.30"), 23000);
    assert_int_equal(cct_nccl_version_parse("2"), -1);
    assert_int_equal(cct_nccl_version_parse("2.28.9.1"), -1);
    assert_int_equal(cct_nccl_version_parse("2.28.9+cuda12.9"), -1);
    assert_int_equal(cct_nccl_version_parse("v2.28.9"), -1);
    assert_int_equal(cct_nccl_version_parse("2.128.9"), -1);
    assert_int_equal(cct_nccl_version_parse(""), -1);
    assert_int_equal(cct_nccl_version_parse(NULL), -1);
    assert_int_equal(cct_nccl_version_parse("2..9"), -1);
    char buf[32];
    assert_string_equal(cct_nccl_version_format(22809, buf, sizeof buf), "2.28.9");
    assert_string_equal(cct_nccl_version_format(23003, buf, sizeof buf), "2.30.3");
}

/* fingerprint.nccl_versions widens the releases a table applies to; the mismatch sentence
 * (the plugin's WARN, the doctor's line) says how to re-tune or widen. */
static void test_widened_versions(void **state)
{
    (void)state;
    cct_table t;
    char msg[512];
    make_table(&t, "NVIDIA H200", 90, "2.28.9", 1);
    cct_runtime rt = rt_h200();
    rt.nccl_version = 23007;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NCCL);
    assert_non_null(strstr(msg, "ccltune tune"));
    assert_non_null(strstr(msg, "--nccl-versions 2.30"));
    t.fingerprint.nccl_versions = strdup("2.26,2.30..2.31");
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH_OTHER_PATCH);
    assert_non_null(strstr(msg, "2.30.7"));
    assert_non_null(strstr(msg, "nccl_versions 2.26,2.30..2.31"));
    assert_true(cct_fp_widened(&t.fingerprint, 23007));
    rt.nccl_version = 22603;
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH_OTHER_PATCH);
    rt.nccl_version = 22809; /* its own release stays exact */
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH);
    rt.nccl_version = 22805; /* and its own patches */
    assert_int_equal(run(&t, &rt, msg), CCT_FP_MATCH_OTHER_PATCH);
    assert_false(cct_fp_widened(&t.fingerprint, 22805));
    rt.nccl_version = 22701; /* outside: refused, naming both */
    assert_int_equal(run(&t, &rt, msg), CCT_FP_NCCL);
    assert_non_null(strstr(msg, "2.26,2.30..2.31"));
    assert_non_null(strstr(msg, "--nccl-versions 2.27"));
    /* the widening does not reach past the GPU check */
    rt.nccl_version = 23007;
    rt.gpu = "NVIDIA H100";
    assert_int_equal(run(&t, &rt, msg), CCT_FP_GPU);
    cct_table_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_mismatches),
        cmocka_unit_test(test_order_of_verdicts),
        cmocka_unit_test(test_shared_gpu_rule),
        cmocka_unit_test(test_unset_table_fields),
        cmocka_unit_test(test_version_parse),
        cmocka_unit_test(test_widened_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
