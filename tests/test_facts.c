/*
 * test_facts.c - the facts tables of src/core/cct_facts.c against NCCL's own numbering and
 * the formulas the rest of ccltune relied on before the tables existed.
 *
 * Row i of each table must be the item NCCL numbers i: ncclFunc_t (as the tuner ABI header,
 * copied from NCCL's nccl_tuner.h, defines it), NCCL_ALGO_* and NCCL_PROTO_* (nccl_common.h,
 * listed here as NCCL's header writes them).  A shifted row would make the plugin answer for
 * the wrong collective or protocol, so every index is checked through its NCCL spelling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "cct_facts.h"
#include "cct_measure.h"
#include "nccl_tuner_abi.h"

static void test_collectives_follow_ncclFunc_t(void **state)
{
    (void)state;
    static const struct {
        int nccl;
        const char *nccl_name, *tests_stem;
    } want[] = {{ncclFuncBroadcast, "Broadcast", "broadcast"},
                {ncclFuncReduce, "Reduce", "reduce"},
                {ncclFuncAllGather, "AllGather", "all_gather"},
                {ncclFuncReduceScatter, "ReduceScatter", "reduce_scatter"},
                {ncclFuncAllReduce, "AllReduce", "all_reduce"}};
    assert_int_equal(CCT_NUM_COLLS, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const cct_coll_facts *f = cct_coll_facts_of(want[i].nccl);
        assert_non_null(f);
        assert_string_equal(f->nccl_name, want[i].nccl_name);
        assert_string_equal(f->tests_stem, want[i].tests_stem);
        assert_int_equal(cct_coll_from_name(f->tests_stem), want[i].nccl);
        assert_int_equal(cct_coll_from_name(f->nccl_name), want[i].nccl);
        assert_string_equal(cct_coll_name(want[i].nccl), f->name);
    }
    assert_null(cct_coll_facts_of(-1));
    assert_null(cct_coll_facts_of(CCT_NUM_COLLS));
}

static void test_algorithms_and_protocols_follow_nccl(void **state)
{
    (void)state;
    /* nccl_common.h: NCCL_ALGO_TREE 0 .. NCCL_ALGO_PAT 6; NCCL_PROTO_LL 0, LL128 1, SIMPLE 2 */
    static const char *const algos[] = {"Tree",     "Ring", "CollnetDirect", "CollnetChain", "NVLS",
                                        "NVLSTree", "PAT"};
    static const char *const protos[] = {"LL", "LL128", "Simple"};
    assert_int_equal(CCT_NUM_ALGOS, 7);
    assert_int_equal(CCT_NUM_PROTOS, 3);
    for (int a = 0; a < 7; a++) {
        assert_string_equal(cct_algo_facts_of(a)->nccl_name, algos[a]);
        assert_string_equal(cct_algo_nccl_name(a), algos[a]);
        assert_int_equal(cct_algo_from_name(algos[a]), a);
    }
    for (int p = 0; p < 3; p++) {
        assert_string_equal(cct_proto_facts_of(p)->nccl_name, protos[p]);
        assert_int_equal(cct_proto_from_name(protos[p]), p);
    }
    assert_null(cct_algo_facts_of(7));
    assert_null(cct_proto_facts_of(3));
    assert_string_equal(cct_algo_name(7), "?");
}

static void test_buffer_size_variables(void **state)
{
    (void)state;
    /* NCCL's comm.h: DEFAULT_BUFFSIZE 1 << 22, DEFAULT_LL_BUFFSIZE 8*512*8*16,
     * DEFAULT_LL128_BUFFSIZE 120*640*8*8 */
    assert_string_equal(cct_proto_facts_of(CCT_PROTO_SIMPLE)->buffsize_env, "NCCL_BUFFSIZE");
    assert_string_equal(cct_proto_facts_of(CCT_PROTO_LL)->buffsize_env, "NCCL_LL_BUFFSIZE");
    assert_string_equal(cct_proto_facts_of(CCT_PROTO_LL128)->buffsize_env, "NCCL_LL128_BUFFSIZE");
    assert_int_equal(cct_proto_facts_of(CCT_PROTO_SIMPLE)->buffsize_default, 4194304);
    assert_int_equal(cct_proto_facts_of(CCT_PROTO_LL)->buffsize_default, 524288);
    assert_int_equal(cct_proto_facts_of(CCT_PROTO_LL128)->buffsize_default, 4915200);
    for (int p = 0; p < CCT_NUM_PROTOS; p++)
        assert_int_equal(cct_proto_from_buffsize_env(cct_proto_facts_of(p)->buffsize_env), p);
    assert_int_equal(cct_proto_from_buffsize_env("NCCL_PROTO"), -1);
    assert_int_equal(cct_proto_from_buffsize_env(NULL), -1);
    /* listed Simple first, as NCCL documents them; every protocol once */
    int seen = 0;
    assert_int_equal(cct_buffsize_protos[0], CCT_PROTO_SIMPLE);
    for (int i = 0; i < CCT_NUM_PROTOS; i++)
        seen |= 1 << cct_buffsize_protos[i];
    assert_int_equal(seen, 7);
}

static void test_ring_steps_and_bus_bandwidth(void **state)
{
    (void)state;
    for (int n = 1; n <= 16; n++) {
        /* NCCL's tuning.cc nsteps, and nccl-tests' busbw factors */
        assert_int_equal(cct_coll_ring_steps(CCT_COLL_ALLREDUCE, n), 2 * (n - 1));
        assert_int_equal(cct_coll_ring_steps(CCT_COLL_ALLGATHER, n), n - 1);
        assert_int_equal(cct_coll_ring_steps(CCT_COLL_REDUCESCATTER, n), n - 1);
        assert_int_equal(cct_coll_ring_steps(CCT_COLL_BROADCAST, n), n);
        assert_int_equal(cct_coll_ring_steps(CCT_COLL_REDUCE, n), n);
        double d = n;
        assert_true(cct_busbw_factor(CCT_COLL_ALLREDUCE, n) == 2.0 * (d - 1.0) / d);
        assert_true(cct_busbw_factor(CCT_COLL_ALLGATHER, n) == (d - 1.0) / d);
        assert_true(cct_busbw_factor(CCT_COLL_REDUCESCATTER, n) == (d - 1.0) / d);
        assert_true(cct_busbw_factor(CCT_COLL_BROADCAST, n) == 1.0);
        assert_true(cct_busbw_factor(CCT_COLL_REDUCE, n) == 1.0);
    }
    assert_true(cct_busbw_factor(99, 8) == 1.0);
}

static void test_layouts_and_algorithms(void **state)
{
    (void)state;
    for (int c = 0; c < CCT_NUM_COLLS; c++) {
        bool per_rank = c == CCT_COLL_ALLGATHER || c == CCT_COLL_REDUCESCATTER;
        assert_int_equal(cct_coll_per_rank(c), per_rank);
        assert_int_equal(cct_coll_size_blocks(c, 8), per_rank ? 8 : 1);
        /* tree only for allreduce; PAT only for allgather and reducescatter; ring for all */
        assert_int_equal(cct_coll_has_algo(c, CCT_ALGO_TREE), c == CCT_COLL_ALLREDUCE);
        assert_int_equal(cct_coll_has_algo(c, CCT_ALGO_PAT), per_rank);
        assert_true(cct_coll_has_algo(c, CCT_ALGO_RING));
        assert_false(cct_coll_has_algo(c, CCT_NUM_ALGOS));
    }
    const cct_coll_facts *ag = cct_coll_facts_of(CCT_COLL_ALLGATHER);
    const cct_coll_facts *rs = cct_coll_facts_of(CCT_COLL_REDUCESCATTER);
    assert_int_equal(ag->recv_span, CCT_SPAN_PER_RANK);
    assert_int_equal(ag->send_span, CCT_SPAN_ONE);
    assert_int_equal(rs->send_span, CCT_SPAN_PER_RANK);
    assert_int_equal(rs->recv_span, CCT_SPAN_ONE);
    assert_true(cct_coll_facts_of(CCT_COLL_BROADCAST)->root_source);
    assert_true(cct_coll_facts_of(CCT_COLL_REDUCE)->root_result);
    assert_int_equal(cct_coll_facts_of(CCT_COLL_ALLREDUCE)->result, CCT_RESULT_SUM);
    assert_int_equal(rs->result, CCT_RESULT_SUM_SLICE);
    assert_int_equal(ag->result, CCT_RESULT_GATHER);
    assert_false(cct_coll_has_algo(-1, CCT_ALGO_RING));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collectives_follow_ncclFunc_t),
        cmocka_unit_test(test_algorithms_and_protocols_follow_nccl),
        cmocka_unit_test(test_buffer_size_variables),
        cmocka_unit_test(test_ring_steps_and_bus_bandwidth),
        cmocka_unit_test(test_layouts_and_algorithms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
