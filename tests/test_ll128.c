/*
 * test_ll128.c - NCCL's default LL128 rule per release (src/cct_ll128.c).
 *
 * Every case is a line of src/graph/tuning.cc of the named NCCL release read as a test:
 * the allowed compute capabilities per era (7.0/8.0/9.0 until 2.24; plus 10.0 and 12.0 in
 * 2.25-2.26; any >= 7.0 from 2.27), the inter-node path limits (PXB, PXN from 9.0, P2C and
 * NCCL_LL128_C2C from 2.27, the reordered P2C/PXN of 2.27.5), equal capabilities (mixed
 * >= 9.0 allowed from 2.30), and the CUDA 11.8 ring-allreduce-on-2-ranks exception.  Also
 * the conversion of each release's numeric PATH_* values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "cct_ll128.h"
#include "cct_names.h"

/* A query on an NVLink box: intra NVL, inter LOC (single node), allreduce tree, 8 ranks. */
static cct_ll128_query q_at(int version, int cc)
{
    cct_ll128_query q = cct_ll128_query_blank();
    q.nccl_version = version;
    q.min_cc = q.max_cc = cc;
    q.intra_path = CCT_PATH_NVL;
    q.inter_path = CCT_PATH_LOC;
    q.cudart_version = 12080;
    q.coll = CCT_COLL_ALLREDUCE;
    q.algo = CCT_ALGO_TREE;
    q.nranks = 8;
    return q;
}

static cct_ll128_verdict check(const cct_ll128_query *q)
{
    char reason[256] = "";
    cct_ll128_verdict v = cct_ll128_check(q, reason, sizeof reason);
    assert_true(strlen(reason) > 10); /* always says why */
    return v;
}

#define ALLOWED(q) assert_int_equal(check(&(q)), CCT_LL128_ALLOWED)
#define BLOCKED(q) assert_int_equal(check(&(q)), CCT_LL128_BLOCKED)

static void test_compute_capability_eras(void **state)
{
    (void)state;
    static const int versions[] = {21903, 22003, 22105, 22203, 22304, 22403, 22501,
                                   22602, 22703, 22705, 22809, 22907, 23003};
    for (size_t i = 0; i < sizeof versions / sizeof *versions; i++) {
        int v = versions[i];
        cct_ll128_query q;
        for (int cc = 60; cc <= 120; cc++) {
            q = q_at(v, cc);
            bool want;
            if (v < 22500)
                want = cc == 70 || cc == 80 || cc == 90;
            else if (v < 22700)
                want = cc == 70 || cc == 80 || cc == 90 || cc == 100 || cc == 120;
            else
                want = cc >= 70;
            assert_int_equal(check(&q), want ? CCT_LL128_ALLOWED : CCT_LL128_BLOCKED);
        }
    }
    cct_ll128_query q = q_at(22809, 86); /* Ampere consumer parts: on from 2.27 */
    ALLOWED(q);
    q = q_at(22602, 86);
    BLOCKED(q);
    q = q_at(22809, -1); /* unknown */
    BLOCKED(q);
}

static void test_inter_paths_before_2_27(void **state)
{
    (void)state;
    static const int versions[] = {21903, 22203, 22602};
    for (size_t i = 0; i < 3; i++) {
        cct_ll128_query q = q_at(versions[i], 80);
        q.inter_path = CCT_PATH_PXB;
        ALLOWED(q);
        q.inter_path = CCT_PATH_PIX;
        ALLOWED(q);
        q.inter_path = CCT_PATH_PXN; /* PXN needs 9.0 */
        BLOCKED(q);
        q = q_at(versions[i], 90);
        q.inter_path = CCT_PATH_PXN;
        ALLOWED(q);
        q.inter_path = CCT_PATH_PHB;
        BLOCKED(q);
        q.inter_path = CCT_PATH_NET;
        BLOCKED(q);
        q.inter_path = CCT_PATH_SYS;
        BLOCKED(q);
        q.inter_path = CCT_PATH_P2C; /* does not exist before 2.27 */
        BLOCKED(q);
    }
    cct_ll128_query q = q_at(21903, 90);
    q.inter_path = CCT_PATH_C2C; /* does not exist before 2.26 */
    BLOCKED(q);
    q = q_at(22602, 90);
    q.inter_path = CCT_PATH_C2C;
    ALLOWED(q);
}

static void test_inter_paths_2_27_early(void **state)
{
    (void)state;
    /* 2.27.3: typeInter <= PXB || (cc >= 9.0 && typeInter <= (C2C ? PATH_P2C : PATH_PXN)),
     * with P2C numbered after PXN in that release */
    cct_ll128_query q = q_at(22703, 90);
    q.inter_path = CCT_PATH_P2C;
    ALLOWED(q);
    q.ll128_c2c = 0;
    BLOCKED(q);
    q.inter_path = CCT_PATH_PXN;
    ALLOWED(q); /* without C2C still up to PXN */
    q.ll128_c2c = 1;
    ALLOWED(q);
    q.inter_path = CCT_PATH_PHB;
    BLOCKED(q);
    q = q_at(22703, 80);
    q.inter_path = CCT_PATH_PXN;
    BLOCKED(q);
    q.inter_path = CCT_PATH_PXB;
    ALLOWED(q);
}

static void test_inter_paths_2_27_5_on(void **state)
{
    (void)state;
    static const int versions[] = {22705, 22809, 22907, 23003};
    for (size_t i = 0; i < 4; i++) {
        cct_ll128_query q = q_at(versions[i], 90);
        q.inter_path = CCT_PATH_PXN;
        ALLOWED(q); /* NCCL_LL128_C2C defaults to 1 */
        q.inter_path = CCT_PATH_P2C;
        ALLOWED(q);
        q.ll128_c2c = 0; /* then only up to PXB */
        BLOCKED(q);
        q.inter_path = CCT_PATH_PXN;
        BLOCKED(q);
        q.inter_path = CCT_PATH_PXB;
        ALLOWED(q);
        q = q_at(versions[i], 80); /* below 9.0 the C2C branch never applies */
        q.inter_path = CCT_PATH_PXN;
        BLOCKED(q);
        q.inter_path = CCT_PATH_PXB;
        ALLOWED(q);
        q = q_at(versions[i], 100);
        q.inter_path = CCT_PATH_PHB;
        BLOCKED(q);
    }
}

static void test_intra_path(void **state)
{
    (void)state;
    static const int versions[] = {21903, 22501, 22809, 23003};
    for (size_t i = 0; i < 4; i++) {
        cct_ll128_query q = q_at(versions[i], 90);
        q.intra_path = CCT_PATH_NVB;
        ALLOWED(q);
        q.intra_path = CCT_PATH_LOC;
        ALLOWED(q);
        q.intra_path = CCT_PATH_PIX;
        BLOCKED(q);
        q.intra_path = CCT_PATH_PHB;
        BLOCKED(q);
    }
    cct_ll128_query q = q_at(22809, 90);
    q.intra_path = CCT_PATH_C2C;
    BLOCKED(q);
}

static void test_mixed_capabilities(void **state)
{
    (void)state;
    cct_ll128_query q = q_at(22809, 90);
    q.max_cc = 100;
    BLOCKED(q);
    q = q_at(22907, 90);
    q.max_cc = 100;
    BLOCKED(q);
    q = q_at(23003, 90); /* 2.30: mixed allowed when the lowest is >= 9.0 */
    q.max_cc = 100;
    ALLOWED(q);
    q = q_at(23003, 80);
    q.max_cc = 90;
    BLOCKED(q);
    q = q_at(21903, 70);
    q.max_cc = 80;
    BLOCKED(q);
}

static void test_cuda_11_8_exception(void **state)
{
    (void)state;
    static const int versions[] = {21903, 22203, 22602, 22809, 23003};
    for (size_t i = 0; i < 5; i++) {
        cct_ll128_query q = q_at(versions[i], 90);
        q.algo = CCT_ALGO_RING;
        q.nranks = 2;
        q.cudart_version = 11080;
        BLOCKED(q);
        q.cudart_version = 0;
        assert_int_equal(check(&q), CCT_LL128_UNLESS_CUDA_11_8);
        q.cudart_version = 12020;
        ALLOWED(q);
        q.cudart_version = 11080;
        q.nranks = 4;
        ALLOWED(q);
        q.nranks = 2;
        q.algo = CCT_ALGO_TREE;
        ALLOWED(q);
        q.algo = CCT_ALGO_RING;
        q.coll = CCT_COLL_ALLGATHER;
        ALLOWED(q);
        q = q_at(versions[i], 80);
        q.algo = CCT_ALGO_RING;
        q.nranks = 2;
        q.cudart_version = 11080;
        ALLOWED(q); /* the exception is for 9.0 only */
    }
}

static void test_versions_outside_knowledge(void **state)
{
    (void)state;
    cct_ll128_query q = q_at(21805, 90);
    BLOCKED(q);
    q = q_at(0, 90);
    BLOCKED(q);
    char reason[256];
    q = q_at(23100, 90); /* newer than 2.30: the newest rule, and it says so */
    q.max_cc = 100;
    assert_int_equal(cct_ll128_check(&q, reason, sizeof reason), CCT_LL128_ALLOWED);
    assert_non_null(strstr(reason, "assumed"));
    q = q_at(22809, 90);
    assert_int_equal(cct_ll128_check(&q, NULL, 0), CCT_LL128_ALLOWED);
    q = cct_ll128_query_blank(); /* everything unknown */
    q.nccl_version = 22809;
    q.min_cc = q.max_cc = 90;
    assert_int_equal(cct_ll128_check(&q, reason, sizeof reason), CCT_LL128_ALLOWED);
    assert_non_null(strstr(reason, "not checked"));
}

static void test_path_numbering(void **state)
{
    (void)state;
    /* 2.19-2.25: LOC NVL NVB PIX PXB PXN PHB SYS NET DIS */
    assert_int_equal(cct_path_from_nccl(21903, 3), CCT_PATH_PIX);
    assert_int_equal(cct_path_from_nccl(22501, 5), CCT_PATH_PXN);
    assert_int_equal(cct_path_from_nccl(22105, 8), CCT_PATH_NET);
    assert_int_equal(cct_path_from_nccl(22105, 9), CCT_PATH_DIS);
    assert_int_equal(cct_path_from_nccl(22105, 10), CCT_PATH_UNKNOWN);
    /* 2.26: C2C inserted at 3 */
    assert_int_equal(cct_path_from_nccl(22602, 3), CCT_PATH_C2C);
    assert_int_equal(cct_path_from_nccl(22602, 6), CCT_PATH_PXN);
    assert_int_equal(cct_path_from_nccl(22602, 10), CCT_PATH_DIS);
    /* 2.27.3: P2C after PXN */
    assert_int_equal(cct_path_from_nccl(22703, 6), CCT_PATH_PXN);
    assert_int_equal(cct_path_from_nccl(22703, 7), CCT_PATH_P2C);
    assert_int_equal(cct_path_from_nccl(22703, 11), CCT_PATH_DIS);
    /* 2.27.5 on: P2C before PXN */
    assert_int_equal(cct_path_from_nccl(22705, 6), CCT_PATH_P2C);
    assert_int_equal(cct_path_from_nccl(22809, 7), CCT_PATH_PXN);
    assert_int_equal(cct_path_from_nccl(23003, 11), CCT_PATH_DIS);
    assert_int_equal(cct_path_from_nccl(23003, 12), CCT_PATH_UNKNOWN);
    assert_int_equal(cct_path_from_nccl(23003, -1), CCT_PATH_UNKNOWN);
    assert_string_equal(cct_path_name(CCT_PATH_PXN), "PXN");
    assert_string_equal(cct_path_name(42), "?");
    assert_int_equal(cct_path_from_name("p2c"), CCT_PATH_P2C);
    assert_int_equal(cct_path_from_name("nvlink"), CCT_PATH_UNKNOWN);
    assert_int_equal(cct_path_from_name(NULL), CCT_PATH_UNKNOWN);
    assert_false(cct_path_exists(22602, CCT_PATH_P2C));
    assert_true(cct_path_exists(22703, CCT_PATH_P2C));
    assert_false(cct_path_exists(22501, CCT_PATH_C2C));
    assert_false(cct_path_exists(22809, CCT_NUM_PATHS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_capability_eras),
        cmocka_unit_test(test_inter_paths_before_2_27),
        cmocka_unit_test(test_inter_paths_2_27_early),
        cmocka_unit_test(test_inter_paths_2_27_5_on),
        cmocka_unit_test(test_intra_path),
        cmocka_unit_test(test_mixed_capabilities),
        cmocka_unit_test(test_cuda_11_8_exception),
        cmocka_unit_test(test_versions_outside_knowledge),
        cmocka_unit_test(test_path_numbering),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
