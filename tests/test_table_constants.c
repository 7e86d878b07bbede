/*
 * test_table_constants.c - the nccl_constants block of a table (src/cct_constants.c, the
 * reader and the writer): slot numbering, spellings, strict reading, deterministic
 * writing and the checks shared with the plugin.
 *
 * Every slot must have a distinct name that reads back to the same slot; a table with
 * constants and no sections must load (that is "rules off"), write only its set entries
 * and round-trip byte-identically; entries the table leaves out stay NAN; bad names,
 * values and duplicates get FILE:LINE:COLUMN errors (the corpus in tests/bad_tables has
 * more); the writer refuses what the reader would.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cct_constants.h"
#include "cct_table.h"

#define HEAD                                                                                       \
    "ccltune_table: 1\n"                                                                           \
    "provenance: {tool: t, created: c, source: s}\n"                                               \
    "fingerprint: {gpu: NVIDIA H200, cc: \"9.0\", gpus_per_node: 1, nodes: 1, links: nvlink, "     \
    "nccl: \"2.28.9\"}\n"                                                                          \
    "ll128: {allowed: false}\n"                                                                    \
    "collectives: {}\n"

static cct_status load(const char *text, cct_table *t, cct_error *err)
{
    return cct_table_load_buffer(text, strlen(text), "t.yaml", t, err);
}

static char *write_text(const cct_table *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cct_error err;
    cct_status st = cct_table_write(t, f, &err);
    fclose(f);
    if (st != CCT_OK)
        fail_msg("write failed: %s", err.msg);
    return buf;
}

static void test_slots_round_trip(void **state)
{
    (void)state;
    char seen[CCT_CONST_NUM_SLOTS][64];
    for (size_t i = 0; i < CCT_CONST_NUM_SLOTS; i++) {
        cct_const_slot s = cct_const_slot_at(i);
        assert_int_equal(cct_const_slot_index(s), i);
        cct_const_slot_name(s, seen[i], sizeof seen[i]);
        cct_const_slot back;
        assert_true(cct_const_slot_from_name(s.family, seen[i], &back));
        assert_int_equal(cct_const_slot_index(back), i);
        for (size_t j = 0; j < i; j++)
            if (cct_const_slot_at(j).family == s.family)
                assert_string_not_equal(seen[i], seen[j]);
    }
    /* the layout is the v5 ABI's: the last slot is the last NVLS-tree ceiling */
    cct_const_slot last = cct_const_slot_at(CCT_CONST_NUM_SLOTS - 1);
    assert_int_equal(last.family, CCT_CONST_NVLS_TREE_BW);
    assert_int_equal(last.i, CCT_CONST_COMPCAPS - 1);
    assert_int_equal(last.j, CCT_CONST_SCALES - 1);
    assert_int_equal(CCT_CONST_NUM_SLOTS, 21 + 63 + 60);
    char buf[64];
    cct_const_slot s = {CCT_CONST_HW_LATENCY, 0, CCT_ALGO_RING, CCT_PROTO_LL};
    assert_string_equal(cct_const_slot_name(s, buf, sizeof buf), "nvlink/ring/ll");
    s = (cct_const_slot){CCT_CONST_TREE_BW, 2, 2, 0};
    assert_string_equal(cct_const_slot_name(s, buf, sizeof buf), "hopper/3+nodes");
    assert_false(cct_const_slot_from_name(CCT_CONST_BASE_LATENCY, "nvlink/ring/ll", &s));
    assert_int_equal(cct_const_family_from_key("per_ch_max_tree_bw_gbps"), CCT_CONST_TREE_BW);
    assert_int_equal(cct_const_family_from_key("per_ch_max_tree_bw"), -1);
}

static void test_read_constants_only(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    const char *text = HEAD "nccl_constants:\n"
                            "  base_latency_us: {ring/ll: 4.9, tree/simple: 0}\n"
                            "  hw_latency_us: {nvlink/ring/simple: 2.9}\n"
                            "  per_ch_max_tree_bw_gbps: {hopper/1node: 38.7}\n";
    assert_int_equal(load(text, &t, &err), CCT_OK);
    assert_true(t.constants.present);
    assert_int_equal(t.n_sections, 0);
    assert_int_equal(cct_constants_count(&t.constants), 4);
    assert_true(t.constants.base_latency_us[CCT_ALGO_RING][CCT_PROTO_LL] == 4.9);
    assert_true(t.constants.base_latency_us[CCT_ALGO_TREE][CCT_PROTO_SIMPLE] == 0.0);
    assert_true(isnan(t.constants.base_latency_us[CCT_ALGO_TREE][CCT_PROTO_LL]));
    assert_true(t.constants.hw_latency_us[0][CCT_ALGO_RING][CCT_PROTO_SIMPLE] == 2.9);
    assert_true(t.constants.per_ch_max_tree_bw[2][0] == 38.7);
    assert_true(isnan(t.constants.per_ch_max_tree_bw[2][1]));
    assert_true(isnan(t.constants.ll_max_bw[2][0]));
    assert_int_equal(cct_constants_check(&t.constants, &err), CCT_OK);
    cct_table_destroy(&t);

    /* no block: present false, every entry NAN */
    assert_int_equal(load(HEAD, &t, &err), CCT_OK);
    assert_false(t.constants.present);
    assert_int_equal(cct_constants_count(&t.constants), 0);
    cct_table_destroy(&t);
}

static void test_write_round_trip(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    const char *text = HEAD "nccl_constants:\n"
                            "  per_ch_max_tree_bw_gbps: {hopper/3+nodes: 36, hopper/1node: 38.7}\n"
                            "  base_latency_us: {tree/ll: 5.5, ring/ll: 4.9}\n";
    assert_int_equal(load(text, &t, &err), CCT_OK);
    char *a = write_text(&t);
    /* slot order, fixed format, only the set entries; before collectives */
    assert_non_null(strstr(a, "nccl_constants:\n"
                              "  base_latency_us: {tree/ll: 5.5000, ring/ll: 4.9000}\n"
                              "  per_ch_max_tree_bw_gbps: {hopper/1node: 38.7000, "
                              "hopper/3+nodes: 36.0000}\n"
                              "collectives: {}\n"));
    assert_null(strstr(a, "hw_latency_us"));
    cct_table back;
    assert_int_equal(load(a, &back, &err), CCT_OK);
    char *b = write_text(&back);
    assert_string_equal(a, b);
    free(a);
    free(b);
    cct_table_destroy(&back);

    /* an empty block stays an empty block */
    cct_constants_clear(&t.constants);
    t.constants.present = true;
    a = write_text(&t);
    assert_non_null(strstr(a, "nccl_constants: {}\n"));
    assert_int_equal(load(a, &back, &err), CCT_OK);
    assert_true(back.constants.present);
    assert_int_equal(cct_constants_count(&back.constants), 0);
    free(a);
    cct_table_destroy(&back);

    /* no block: nothing written */
    t.constants.present = false;
    a = write_text(&t);
    assert_null(strstr(a, "nccl_constants"));
    free(a);
    cct_table_destroy(&t);
}

static void test_writer_refuses_bad_values(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    assert_int_equal(load(HEAD, &t, &err), CCT_OK);
    t.constants.present = true;
    const struct {
        double *slot;
        double v;
        const char *msg;
    } bad[] = {
        {&t.constants.hw_latency_us[2][1][0], -1.0, "hw_latency_us net/ring/ll: -1 is negative"},
        {&t.constants.ll_max_bw[2][0], 0.0, "ll_max_bw_gbps hopper/1node: 0 must be > 0"},
        {&t.constants.base_latency_us[0][0], INFINITY,
         "base_latency_us tree/ll: inf is not finite"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        *bad[i].slot = bad[i].v;
        assert_int_equal(cct_constants_check(&t.constants, &err), CCT_EINVAL);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("'%s' does not contain '%s'", err.msg, bad[i].msg);
        FILE *f = fopen("/dev/null", "w");
        assert_non_null(f);
        assert_int_equal(cct_table_write(&t, f, &err), CCT_EINVAL);
        assert_non_null(strstr(err.msg, "cannot write the table"));
        fclose(f);
        *bad[i].slot = NAN;
    }
    cct_table_destroy(&t);
}

static void expect_error(const char *block, const char *msg)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", HEAD, block);
    cct_table t;
    cct_error err;
    assert_int_not_equal(load(text, &t, &err), CCT_OK);
    if (!strstr(err.msg, msg))
        fail_msg("'%s' does not contain '%s'", err.msg, msg);
}

static void test_reader_refusals(void **state)
{
    (void)state;
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: -1}\n",
                 "t.yaml:7:30: base_latency_us 'ring/ll' must be >= 0 (a latency), got -1");
    expect_error("nccl_constants:\n  ll_max_bw_gbps: {hopper/1node: 0}\n",
                 "t.yaml:7:34: ll_max_bw_gbps 'hopper/1node' must be > 0");
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: .nan}\n",
                 "t.yaml:7:30: 'ring/ll' must be a finite decimal number, got '.nan'");
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: 1e999}\n",
                 "t.yaml:7:30: 'ring/ll' 1e999 is out of range");
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: \"4\"}\n",
                 "'ring/ll' must be a finite decimal number");
    expect_error("nccl_constants:\n  base_latency_us: {rnig/ll: 4}\n",
                 "t.yaml:7:21: unknown base_latency_us entry 'rnig/ll' (did you mean 'ring/ll'?)");
    expect_error("nccl_constants:\n  hw_latency_us: {ring/ll: 4}\n",
                 "unknown hw_latency_us entry 'ring/ll' (expected link/algorithm/protocol");
    expect_error("nccl_constants:\n  per_ch_max_tree_bw_gbps: {hopper/9nodes: 4}\n",
                 "unknown per_ch_max_tree_bw_gbps entry 'hopper/9nodes'");
    expect_error("nccl_constants:\n  per_ch_max_tree_bw_gbps: {x: 4}\n",
                 "(expected generation/scale, like 'hopper/1node')");
    expect_error("nccl_constants:\n  base_latncy_us: {ring/ll: 4}\n",
                 "t.yaml:7:3: unknown key 'base_latncy_us' (did you mean 'base_latency_us'?)");
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: 4, ring/ll: 5}\n",
                 "t.yaml:7:33: duplicate key 'ring/ll' (first at 7:21)");
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: 4}\n"
                 "  base_latency_us: {tree/ll: 4}\n",
                 "t.yaml:8:3: duplicate key 'base_latency_us' (first at 7:3)");
    expect_error("nccl_constants: [1]\n", "'nccl_constants' must be a mapping, not a sequence");
    expect_error("nccl_constants:\n  base_latency_us: 4\n",
                 "'base_latency_us' must be a mapping, not a scalar");
    expect_error("nccl_constants:\n  base_latency_us: {ring/ll: [4]}\n",
                 "'ring/ll' must be a scalar, not a sequence");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots_round_trip), cmocka_unit_test(test_read_constants_only),
        cmocka_unit_test(test_write_round_trip), cmocka_unit_test(test_writer_refuses_bad_values),
        cmocka_unit_test(test_reader_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
