/*
 * test_nccl_model.c - our re-implementation of NCCL's cost model (src/cct_nccl_model.c) and
 * the reader of NCCL's debug printout (src/cct_nccl_log.c).
 *
 * Replay: for every log NCCL 2.28.9 printed on the lent H200
 * (tests/data/h200/run-2026-11-29c/nccl-model: 2, 3, 4 and 8 rank processes sharing one GPU
 * over sockets, and 2 GPUs over NVLink), the topology read from the log plus NCCL's default
 * constants must reproduce every Tree/Ring/PAT latency and bandwidth NCCL printed, within
 * the printout's rounding (one decimal).  Unit tests: the time formula (tree correction, ring
 * plateau, pipelined ops), the argmin, the constants overlay, and malformed logs.
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

#include "cct_nccl_log.h"
#include "cct_nccl_model.h"

#define LOGDIR "data/h200/run-2026-11-29c/nccl-model/"
#define PRINT_TOL 0.0501 /* %.1f rounding, plus float noise */

static void data_path(char *buf, size_t len, const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    snprintf(buf, len, "%s/%s", src ? src : "tests", rel);
}

/* every Tree/Ring/PAT entry NCCL printed matches; CollNet/NVLS are 0 bandwidth on both */
static void replay(const char *file, int expect_ranks, int expect_nodes)
{
    char path[4096];
    data_path(path, sizeof path, file);
    cct_nccl_log log;
    cct_error err;
    cct_status st = cct_nccl_log_load(path, &log, &err);
    if (st != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(log.topo.n_ranks, expect_ranks);
    assert_int_equal(log.topo.n_nodes, expect_nodes);
    assert_string_equal(log.nccl_version, "2.28.9");
    log.topo.cc = 90;
    cct_constants k;
    cct_nccl_constants_default(&k);
    cct_nccl_costs costs;
    cct_nccl_model_compute(&log.topo, &k, &costs);
    int compared = 0, usable = 0;
    for (int c = 0; c < CCT_NUM_COLLS; c++)
        for (int a = 0; a < CCT_NUM_ALGOS; a++)
            for (int p = 0; p < CCT_NUM_PROTOS; p++) {
                assert_true(log.printed[c][a][p]);
                double nl = log.latency_us[c][a][p], nb = log.bandwidth_gbps[c][a][p];
                double ml = costs.latency_us[c][a][p], mb = costs.bandwidth_gbps[c][a][p];
                if (a == CCT_ALGO_TREE || a == CCT_ALGO_RING || a == CCT_ALGO_PAT) {
                    if (fabs(nl - ml) > PRINT_TOL || fabs(nb - mb) > PRINT_TOL)
                        fail_msg("%s: %s %s/%s: NCCL printed %.1f/%.1f, the model gives %.3f/%.3f",
                                 file, cct_coll_name(c), cct_algo_name(a), cct_proto_name(p), nl,
                                 nb, ml, mb);
                    compared++;
                    usable += nb > 0.0;
                } else {
                    assert_true(mb == 0.0);
                    assert_true(nb == 0.0);
                }
            }
    assert_int_equal(compared, CCT_NUM_COLLS * 3 * CCT_NUM_PROTOS);
    assert_true(usable >= 5); /* at least Ring LL and Simple for every collective */
    printf("%s: %d entries reproduced (%d usable), %d ranks on %d nodes, %d channels\n", file,
           compared, usable, log.topo.n_ranks, log.topo.n_nodes,
           log.topo.graphs[CCT_ALGO_RING].n_channels);
}

static void test_replay_socket_2(void **s)
{
    (void)s;
    replay(LOGDIR "model-socket-2ranks.log", 2, 2);
}
static void test_replay_socket_3(void **s)
{
    (void)s;
    replay(LOGDIR "model-socket-3ranks.log", 3, 3);
}
static void test_replay_socket_4(void **s)
{
    (void)s;
    replay(LOGDIR "model-socket-4ranks.log", 4, 4);
}
static void test_replay_socket_8(void **s)
{
    (void)s;
    replay(LOGDIR "model-socket-8ranks.log", 8, 8);
}
static void test_replay_nvlink_2(void **s)
{
    (void)s;
    replay(LOGDIR "model-nvlink-2ranks.log", 2, 1);
}

/* a synthetic 4-node topology: one channel of 1.2 GB/s, tree pattern 3 */
static cct_nccl_topo socket_topo(int ranks)
{
    cct_nccl_topo t;
    memset(&t, 0, sizeof t);
    t.n_ranks = t.n_nodes = ranks;
    t.cc = 90;
    t.comm_channels = 2;
    t.max_tree_pattern = 3;
    cct_nccl_graph g = {true, 4, 1, 1.2, 1.2, 0.0, CCT_NCCL_PATH_LOC, 8 /* PHB */, true};
    t.graphs[CCT_ALGO_RING] = g;
    g.pattern = 3;
    g.bw_intra = 2.4;
    t.graphs[CCT_ALGO_TREE] = t.graphs[CCT_ALGO_PAT] = g;
    return t;
}

static void test_time_formula(void **s)
{
    (void)s;
    cct_nccl_topo t = socket_topo(4);
    cct_constants k;
    cct_nccl_constants_default(&k);
    cct_nccl_costs c;
    cct_nccl_model_compute(&t, &k, &c);
    /* Ring/Simple allreduce: 8.4 + 6 * 14 = 92.4 us, 1.2 * 4/6 = 0.8 GB/s */
    assert_true(fabs(c.latency_us[CCT_COLL_ALLREDUCE][CCT_ALGO_RING][CCT_PROTO_SIMPLE] - 92.4) <
                1e-4);
    assert_true(fabs(c.bandwidth_gbps[CCT_COLL_ALLREDUCE][CCT_ALGO_RING][CCT_PROTO_SIMPLE] - 0.8) <
                1e-6);
    /* small: no plateau (64 B / (2 channels * 4 ranks) < 64) */
    double t64 =
        cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 64, 1);
    assert_true(fabs(t64 - (92.4 + 64 / 800.0)) < 1e-3);
    /* large: the plateau multiplies the latency by 1.4 */
    double t1m =
        cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1 << 20, 1);
    assert_true(fabs(t1m - (92.4 * 1.4 + (1 << 20) / 800.0)) < 1e-2);
    /* four pipelined ops: four ring latencies, one tree latency */
    double r4 = cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 64, 4);
    double r1 = cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 64, 1);
    double lat = c.latency_us[CCT_COLL_ALLREDUCE][CCT_ALGO_RING][CCT_PROTO_LL];
    assert_true(fabs((r4 - r1) - 3 * lat) < 1e-3);
    double tr4 = cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_LL, 64, 4);
    double tr1 = cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_LL, 64, 1);
    assert_true(fabs(tr4 - tr1) < 1e-6);
    /* tree correction: at 64 KiB (log2(64K/64) = 10) Simple's bandwidth is scaled by .6 */
    double bw = c.bandwidth_gbps[CCT_COLL_ALLREDUCE][CCT_ALGO_TREE][CCT_PROTO_SIMPLE];
    double tl = c.latency_us[CCT_COLL_ALLREDUCE][CCT_ALGO_TREE][CCT_PROTO_SIMPLE];
    double tt =
        cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 65536, 1);
    assert_true(fabs(tt - (tl + 65536 / (1000.0 * bw * .6))) < 1e-3);
    /* LL128 is off over the network path (PHB inter type is allowed; NET is not) */
    t.graphs[CCT_ALGO_RING].type_inter = CCT_NCCL_PATH_NET;
    cct_nccl_model_compute(&t, &k, &c);
    assert_true(c.bandwidth_gbps[CCT_COLL_ALLREDUCE][CCT_ALGO_RING][CCT_PROTO_LL128] == 0.0);
    assert_true(cct_nccl_model_time(&c, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL128, 64, 1) <
                0);
    /* out of range is unusable, never a crash */
    assert_true(cct_nccl_model_time(&c, 99, 0, 0, 64, 1) < 0);
}

static void test_choose_and_overlay(void **s)
{
    (void)s;
    cct_nccl_topo t = socket_topo(4);
    cct_constants k, over, mixed;
    cct_nccl_constants_default(&k);
    cct_nccl_costs c;
    cct_nccl_model_compute(&t, &k, &c);
    int a, p;
    assert_true(cct_nccl_model_choose(&c, CCT_COLL_ALLREDUCE, 1024, 1, &a, &p));
    assert_int_equal(p, CCT_PROTO_LL); /* small: LL's latency wins */
    assert_true(cct_nccl_model_choose(&c, CCT_COLL_ALLREDUCE, 256u << 20, 1, &a, &p));
    assert_int_equal(a, CCT_ALGO_RING);
    assert_int_equal(p, CCT_PROTO_SIMPLE); /* large: the most bandwidth */
    /* make Ring/LL very expensive: the overlay changes only that entry */
    cct_constants_clear(&over);
    over.present = true;
    over.base_latency_us[CCT_ALGO_RING][CCT_PROTO_LL] = 1000.0;
    over.base_latency_us[CCT_ALGO_TREE][CCT_PROTO_LL] = 1000.0;
    cct_nccl_constants_overlay(&k, &over, &mixed);
    assert_true(mixed.base_latency_us[CCT_ALGO_RING][CCT_PROTO_LL] == 1000.0);
    assert_true(mixed.base_latency_us[CCT_ALGO_RING][CCT_PROTO_SIMPLE] == 8.4);
    assert_true(mixed.ll_max_bw[2][2] == 35.0);
    cct_nccl_model_compute(&t, &mixed, &c);
    assert_true(cct_nccl_model_choose(&c, CCT_COLL_ALLREDUCE, 1024, 1, &a, &p));
    assert_int_not_equal(p, CCT_PROTO_LL);
    /* a one-rank communicator has nothing usable */
    t.n_ranks = t.n_nodes = 1;
    cct_nccl_model_compute(&t, &k, &c);
    assert_false(cct_nccl_model_choose(&c, CCT_COLL_ALLREDUCE, 1024, 1, &a, &p));
}

static void expect_parse_error(const char *text, const char *needle)
{
    cct_nccl_log log;
    cct_error err;
    cct_status st = cct_nccl_log_parse(text, "x.log", &log, &err);
    assert_int_not_equal(st, CCT_OK);
    if (!strstr(err.msg, needle))
        fail_msg("expected '%s' in: %s", needle, err.msg);
}

#define P "vm:1:1 [0] NCCL INFO "
static void test_bad_logs(void **s)
{
    (void)s;
    expect_parse_error("", "no TUNING table");
    expect_parse_error("hello\nworld\n", "no TUNING table");
    expect_parse_error(P "  Algorithm   |   Bogus   |\n", "x.log:1:");
    expect_parse_error(P "  Algorithm   |   Tree   |   Ring   |   CollNetDirect   |\n" P
                         "    AllReduce |    16.8/   0.2 |  oops |\n",
                       "x.log:2:");
    expect_parse_error(P "  Algorithm   |   Tree   |   Ring   |   CollNetDirect   |\n" P
                         "    AllReduce |    16.8/   0.2 |\n",
                       "too few columns");
    expect_parse_error(P "Pattern 4, crossNic 0, nChannels x\n", "malformed GRAPH line");
    expect_parse_error(P "Pattern 4, crossNic 0, nChannels 1, bw 1.2/1.2, type ZZZ/PHB, "
                         "sameChannels 1\n",
                       "unknown link type");
    expect_parse_error(P "comm 0x1 rank 0 nRanks 2 nNodes 3 localRanks 1\n", "communicator line");
    /* numbers a log never prints (found by fuzz_nccl_log): strtod and %lf read them */
    expect_parse_error(P "  Algorithm   |   Tree   |\n" P
                         "    AllReduce |  1.0/ inf |  1.0/ 1.0 |  1.0/ 1.0 |\n",
                       "x.log:2:39: not a finite number");
    expect_parse_error(P "  Algorithm   |   Tree   |\n" P
                         "    AllReduce |  1.0/ 1.0 |  1e999/ 1.0 |  1.0/ 1.0 |\n",
                       "x.log:2:51: not a finite number");
    expect_parse_error(P "Pattern 4, crossNic 0, nChannels 1, bw inf/1.2, type NVL/PHB, "
                         "sameChannels 1\n",
                       "negative or non-finite value");
    expect_parse_error(P "-3 coll channels, 2 collnet channels\n", "x.log:1:22: channel count");
    /* a table but no graphs */
    char path[4096];
    data_path(path, sizeof path, "data/h200/nccl-tests/all_reduce_2ranks_default.txt");
    cct_nccl_log log;
    cct_error err;
    assert_int_equal(cct_nccl_log_load(path, &log, &err), CCT_EPARSE);
    assert_non_null(strstr(err.msg, "GRAPH"));
    assert_int_equal(cct_nccl_log_load("/nonexistent/x.log", &log, &err), CCT_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_socket_2),    cmocka_unit_test(test_replay_socket_3),
        cmocka_unit_test(test_replay_socket_4),    cmocka_unit_test(test_replay_socket_8),
        cmocka_unit_test(test_replay_nvlink_2),    cmocka_unit_test(test_time_formula),
        cmocka_unit_test(test_choose_and_overlay), cmocka_unit_test(test_bad_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
