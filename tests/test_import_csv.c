/*
 * test_import_csv.c - the importer for NCCL's example tuner scripts' performance CSV:
 * the sample (tests/data/tuner-csv/perf.csv) parses to exactly its rows, the same rows
 * spelled differently (columns reordered, quoted, BOM, CRLF, blank lines, no optional
 * columns) parse to the same points, and "-1" topologies take the flags.  Malformed files
 * are in tests/bad_logs (badinput suite).
 */
#include "import_test_util.h"

typedef struct row {
    int coll, algo, proto, channels, nodes, ranks;
    uint64_t bytes;
    double latency;
} row;

static const row sample[] = {
    {CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_LL, 0, 1, 8, 4096, 11.4},
    {CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 4, 1, 8, 4096, 12.3},
    {CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL128, 8, 1, 8, 262144, 17.6},
    {CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 1, 8, 16777216, 98.1},
    {CCT_COLL_ALLREDUCE, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, 16, 1, 8, 16777216, 82.6},
    {CCT_COLL_REDUCESCATTER, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, 0, 2, 16, 1048576, 17.05},
    {CCT_COLL_ALLGATHER, CCT_ALGO_COLLNET_DIRECT, CCT_PROTO_SIMPLE, 32, 2, 16, 1048576, 16.64},
    {CCT_COLL_BROADCAST, CCT_ALGO_TREE, CCT_PROTO_LL, 0, 2, 16, 0, 6.5},
};
#define N_SAMPLE (sizeof sample / sizeof sample[0])

static void check_sample(const cct_import_result *r)
{
    assert_int_equal(r->format, CCT_IMPORT_CSV);
    assert_int_equal(r->n_points, N_SAMPLE);
    for (size_t i = 0; i < N_SAMPLE; i++) {
        const cct_point *p = &r->points[i];
        const row *e = &sample[i];
        assert_int_equal(p->cfg.coll, e->coll);
        assert_int_equal(p->cfg.algo, e->algo);
        assert_int_equal(p->cfg.proto, e->proto);
        assert_int_equal(p->cfg.channels, e->channels);
        assert_int_equal(p->cfg.nodes, e->nodes);
        assert_int_equal(p->cfg.ranks, e->ranks);
        assert_int_equal(p->cfg.dtype, CCT_DTYPE_FLOAT);
        assert_int_equal(p->cfg.buffsize, 0);
        assert_int_equal(p->cfg.align, 0);
        assert_int_equal(p->bytes, e->bytes);
        assert_false(p->in_place);
        assert_int_equal(p->stats.n, 1);
        tu_assert_double(p->stats.median_us, e->latency);
        tu_assert_double(p->stats.mean_us, e->latency);
        tu_assert_nan(p->stats.p95_us);
        tu_assert_nan(p->stats.cv);
        assert_int_equal(p->status, CCT_POINT_OK);
        assert_int_equal(p->wrong, 0);
        assert_int_equal(p->nccl_algo, e->algo);
        assert_int_equal(p->nccl_proto, e->proto);
    }
}

static void sample_file(void **state)
{
    (void)state;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import("data/tuner-csv/perf.csv", NULL, &r, &err), CCT_OK);
    check_sample(&r);
    for (size_t i = 0; i < N_SAMPLE; i++)
        assert_int_equal(r.meta[i].line, i + 2);
    cct_import_result_destroy(&r);
}

/* The sample rewritten: columns in another order, optional columns dropped, quotes,
 * blanks around fields, a byte order mark, CRLF and blank lines. */
static void same_rows_other_spelling(void **state)
{
    (void)state;
    const char *text =
        "\xEF\xBB\xBF"
        "latency_us,ranks,nodes,collective,algorithm,protocol,channels,size_bytes,regBuff,"
        "pipeOps\r\n"
        "11.4,8,1,allreduce,tree,ll,-1,4096,-1,-1\r\n"
        "\r\n"
        " 12.3 , 8 ,1,\"allreduce\",ring,LL,4,4096,-1,-1\r\n"
        "\"17.6\",8,1,AllReduce,Ring,LL128,8,262144,-1,-1\r\n"
        "98.1,8,1,allreduce,ring,Simple,-1,16777216,-1,-1\r\n"
        "82.6,8,1,allreduce,nvls,simple,16,16777216,-1,-1\n"
        "17.05,16,2,reducescatter,pat,simple,-1,1048576,0,1\n"
        "16.64,16,2,allgather,collnet_direct,simple,32,1048576,1,-1\n"
        "6.5,16,2,broadcast,tree,ll,-1,0,-1,-1\r\n";
    cct_import_result r;
    cct_error err;
    if (tu_import_text(text, "spelled.csv", NULL, &r, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    check_sample(&r);
    assert_int_equal(r.meta[1].line, 4); /* the blank line still counts */
    cct_import_result_destroy(&r);
    /* without the last line end the last row may be cut ("6." of "6.5"): refused */
    char *cut = strdup(text);
    cut[strlen(cut) - 2] = '\0';
    assert_int_equal(tu_import_text(cut, "cut.csv", NULL, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "cut.csv:10:38: the last row has no line end");
    cct_import_result_destroy(&r);
    free(cut);
}

static void any_topology_takes_flags(void **state)
{
    (void)state;
    const char *text = "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,"
                       "regBuff,latency_us\n"
                       "allreduce,1024,ring,ll,-1,-1,-1,-1,-1,9.5\n"
                       "allreduce,2048,ring,ll,-1,1,8,-1,-1,9.9\n";
    cct_import_opts o;
    cct_import_opts_init(&o);
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import_text(text, "any.csv", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "any.csv:2:27: nodes is -1 (any)");
    tu_assert_contains(err.msg, "pass --nodes");
    cct_import_result_destroy(&r);
    o.ranks = 8;
    o.nodes = 1;
    assert_int_equal(tu_import_text(text, "any.csv", &o, &r, &err), CCT_OK);
    assert_int_equal(r.n_points, 2);
    assert_int_equal(r.points[0].cfg.ranks, 8);
    assert_int_equal(r.points[0].cfg.nodes, 1);
    cct_import_result_destroy(&r);
    o.ranks = 16; /* a definite value must agree with the flag */
    assert_int_equal(tu_import_text(text, "any.csv", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "any.csv:3:29: ranks is 8 here but --ranks 16 was given");
    cct_import_result_destroy(&r);
}

static void flags_that_do_not_apply(void **state)
{
    (void)state;
    cct_import_opts o;
    cct_import_opts_init(&o);
    o.algo = CCT_ALGO_RING;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import("data/tuner-csv/perf.csv", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "perf.csv: --coll, --algo and --proto do not apply to CSV");
    assert_int_equal(r.n_points, 0);
    cct_import_result_destroy(&r);
}

static void pipeops_rows_collide(void **state)
{
    (void)state;
    /* pipeOps/regBuff are not stored: two rows that differ only there are one point */
    const char *text = "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,"
                       "regBuff,latency_us\n"
                       "allreduce,1024,ring,ll,-1,1,8,1,-1,9.5\n"
                       "allreduce,1024,ring,ll,-1,1,8,2,-1,9.7\n";
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import_text(text, "pipe.csv", NULL, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "pipe.csv:3:1: size 1024 out-of-place");
    tu_assert_contains(err.msg, "already imported from pipe.csv:2");
    cct_import_result_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sample_file),
        cmocka_unit_test(same_rows_other_spelling),
        cmocka_unit_test(any_topology_takes_flags),
        cmocka_unit_test(flags_that_do_not_apply),
        cmocka_unit_test(pipeops_rows_collide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
