/*
 * test_import_nccltests.c - the nccl-tests importers (text and JSON) on the synthetic
 * format samples in tests/data/nccl-tests (see its README): every sample parses to exactly
 * the points its rows say, the text and JSON of one run give identical points, and each
 * inference rule (collective, ranks, nodes, algorithm/protocol, channels, buffer sizes,
 * alignment, NCCL's own choices) is shown working and shown refusing what contradicts it.
 * Malformed inputs are the badinput suite's (test_import_badinput.c).
 */
#include "import_test_util.h"

#include "cct_nccl_env.h"
#include "cct_nccltests_run.h"

#define NT "data/nccl-tests/"

static void opts_none(cct_import_opts *o)
{
    cct_import_opts_init(o);
}

/* A point as the importer must produce it for a forced or default configuration. */
static void check_point(const cct_point *p, int coll, int algo, int proto, int ranks, int nodes,
                        int dtype, uint64_t bytes, bool in_place, int n, double time)
{
    assert_int_equal(p->cfg.coll, coll);
    assert_int_equal(p->cfg.algo, algo);
    assert_int_equal(p->cfg.proto, proto);
    assert_int_equal(p->cfg.ranks, ranks);
    assert_int_equal(p->cfg.nodes, nodes);
    assert_int_equal(p->cfg.dtype, dtype);
    assert_int_equal(p->bytes, bytes);
    assert_int_equal(p->in_place, in_place);
    assert_int_equal(p->stats.n, n);
    tu_assert_double(p->stats.median_us, time);
    tu_assert_double(p->stats.mean_us, time);
}

static const uint64_t ring_sizes[8] = {8, 64, 512, 4096, 32768, 262144, 2097152, 16777216};
static const double ring_oop[8] = {9.81, 9.95, 10.42, 11.87, 14.63, 28.40, 71.25, 402.9};
static const double ring_ip[8] = {9.77, 9.90, 10.38, 11.90, 14.51, 28.12, 70.88, 401.6};

static void check_ring_simple(const cct_import_result *r)
{
    assert_int_equal(r->n_points, 16);
    assert_int_equal(r->runs, 1);
    assert_string_equal(r->gpu, "NVIDIA H200");
    assert_string_equal(r->host, "h200-node07");
    assert_string_equal(r->nccl_version, "2.28.9");
    for (size_t i = 0; i < 16; i++) {
        const cct_point *p = &r->points[i];
        size_t row = i / 2;
        check_point(p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 4, 1, CCT_DTYPE_FLOAT,
                    ring_sizes[row], i % 2 == 1, 20, i % 2 ? ring_ip[row] : ring_oop[row]);
        assert_int_equal(p->cfg.channels, 0);
        assert_int_equal(p->cfg.buffsize, 0);
        assert_int_equal(p->cfg.ll_buffsize, 0);
        assert_int_equal(p->cfg.ll128_buffsize, 0);
        assert_int_equal(p->cfg.align, 0);
        tu_assert_nan(p->stats.min_us);
        tu_assert_nan(p->stats.max_us);
        tu_assert_nan(p->stats.p95_us);
        tu_assert_nan(p->stats.cv);
        assert_int_equal(p->wrong, 0);
        assert_int_equal(p->status, CCT_POINT_OK);
        assert_false(p->noisy);
        assert_int_equal(p->nccl_algo, CCT_ALGO_RING); /* forced, so known */
        assert_int_equal(p->nccl_proto, CCT_PROTO_SIMPLE);
        assert_int_equal(r->meta[i].n_samples, 0);
        assert_false(r->meta[i].duplicate);
    }
}

static void text_ring_simple(void **state)
{
    (void)state;
    cct_import_opts o;
    opts_none(&o);
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import(NT "allreduce_ring_simple_2.19.txt", &o, &r, &err), CCT_OK);
    assert_int_equal(r.format, CCT_IMPORT_NCCLTESTS);
    check_ring_simple(&r);
    assert_int_equal(r.ranks_per_gpu, 1); /* four bus ids */
    for (size_t i = 0; i < 16; i++)
        assert_int_equal(r.meta[i].line, 27 + i / 2); /* the rows' lines in the file */
    cct_import_result_destroy(&r);
}

static void json_ring_simple_equals_text(void **state)
{
    (void)state;
    cct_import_opts o;
    opts_none(&o);
    cct_import_result t, j;
    cct_error err;
    assert_int_equal(tu_import(NT "allreduce_ring_simple_2.19.txt", &o, &t, &err), CCT_OK);
    assert_int_equal(tu_import(NT "allreduce_ring_simple_2.19.json", &o, &j, &err), CCT_OK);
    assert_int_equal(j.format, CCT_IMPORT_NCCLTESTS_JSON);
    check_ring_simple(&j);
    assert_int_equal(j.ranks_per_gpu, 0); /* one entry for a 4-GPU process: not known */
    /* the same run in both formats imports to the same points, field by field */
    assert_int_equal(t.n_points, j.n_points);
    for (size_t i = 0; i < t.n_points; i++) {
        const cct_point *a = &t.points[i], *b = &j.points[i];
        assert_memory_equal(&a->cfg, &b->cfg, sizeof a->cfg);
        assert_int_equal(a->bytes, b->bytes);
        assert_int_equal(a->in_place, b->in_place);
        assert_int_equal(a->stats.n, b->stats.n);
        tu_assert_double(a->stats.median_us, b->stats.median_us);
        assert_int_equal(a->wrong, b->wrong);
        assert_int_equal(a->status, b->status);
        assert_int_equal(a->nccl_algo, b->nccl_algo);
        assert_int_equal(a->nccl_proto, b->nccl_proto);
    }
    /* and an import of both is one set of points plus 16 identical duplicates */
    cct_import_result both[2] = {t, j};
    size_t dups = 99;
    assert_int_equal(cct_import_check_duplicates(both, 2, &dups, &err), CCT_OK);
    assert_int_equal(dups, 16);
    for (size_t i = 0; i < 16; i++) {
        assert_false(both[0].meta[i].duplicate);
        assert_true(both[1].meta[i].duplicate);
    }
    cct_import_result_destroy(&both[0]);
    cct_import_result_destroy(&both[1]);
}

static void conflicting_duplicate_across_files(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_read(NT "allreduce_ring_simple_2.19.txt", &len);
    /* a slower time with its own algbw: a consistent row that differs */
    char *changed = tu_replace(text, "    28.40    9.23", "    28.90    9.07");
    cct_import_result r[2];
    cct_error err;
    assert_int_equal(tu_import_text(text, "a.log", NULL, &r[0], &err), CCT_OK);
    assert_int_equal(tu_import_text(changed, "b.log", NULL, &r[1], &err), CCT_OK);
    assert_int_equal(cct_import_check_duplicates(r, 2, NULL, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "b.log:32:");
    tu_assert_contains(err.msg, "already imported from a.log:32");
    tu_assert_contains(err.msg, "262144 out-of-place");
    cct_import_result_destroy(&r[0]);
    cct_import_result_destroy(&r[1]);
    free(text);
    free(changed);
}

static void text_2_13_blank_redop_two_hosts(void **state)
{
    (void)state;
    cct_import_opts o;
    opts_none(&o);
    cct_import_result r;
    cct_error err;
    /* nccl-tests 2.13.0 does not name its program: the collective must be given */
    assert_int_equal(tu_import(NT "allgather_2.13.0_two_hosts.txt", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "allgather_2.13.0_two_hosts.txt:1:1: ");
    tu_assert_contains(err.msg, "pass --coll");
    assert_int_equal(r.n_points, 0);
    cct_import_result_destroy(&r);

    o.coll = CCT_COLL_ALLGATHER;
    assert_int_equal(tu_import(NT "allgather_2.13.0_two_hosts.txt", &o, &r, &err), CCT_OK);
    static const uint64_t sizes[] = {1024, 4096, 16384, 65536, 262144, 1048576};
    static const double oop[] = {18.52, 19.40, 22.75, 31.08, 58.6, 161.3};
    static const double ip[] = {18.31, 19.22, 22.61, 30.93, 57.9, 160.2};
    assert_int_equal(r.n_points, 12);
    for (size_t i = 0; i < 12; i++) {
        /* 4 ranks listed, 2 distinct hosts; -c 0: N/A wrong counts are unchecked (0) */
        check_point(&r.points[i], CCT_COLL_ALLGATHER, CCT_DEFAULT, CCT_DEFAULT, 4, 2,
                    CCT_DTYPE_FLOAT, sizes[i / 2], i % 2, 50, i % 2 ? ip[i / 2] : oop[i / 2]);
        assert_int_equal(r.points[i].wrong, 0);
        assert_int_equal(r.points[i].status, CCT_POINT_OK);
        assert_int_equal(r.points[i].nccl_algo, -1);
        assert_int_equal(r.points[i].nccl_proto, -1);
    }
    assert_string_equal(r.gpu, "NVIDIA A100-SXM4-80GB");
    assert_string_equal(r.nccl_version, "");
    cct_import_result_destroy(&r);

    /* the wrong collective is caught by busbw/algbw: allgather's factor is 3/4 on 4 ranks */
    o.coll = CCT_COLL_REDUCE;
    assert_int_equal(tu_import(NT "allgather_2.13.0_two_hosts.txt", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "allgather_2.13.0_two_hosts.txt:15:");
    tu_assert_contains(err.msg, "factor");
    cct_import_result_destroy(&r);
}

static void text_2_9_error_column(void **state)
{
    (void)state;
    cct_import_opts o;
    opts_none(&o);
    o.coll = CCT_COLL_BROADCAST;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import(NT "broadcast_2.9_error_column.txt", &o, &r, &err), CCT_OK);
    static const uint64_t sizes[] = {8, 1024, 131072, 16777216, 134217728};
    static const double oop[] = {21.45, 22.10, 41.37, 1452.6, 11104};
    static const double ip[] = {20.87, 21.93, 40.99, 1449.8, 11098};
    assert_int_equal(r.n_points, 10);
    for (size_t i = 0; i < 10; i++) {
        check_point(&r.points[i], CCT_COLL_BROADCAST, CCT_DEFAULT, CCT_DEFAULT, 8, 1,
                    CCT_DTYPE_FLOAT, sizes[i / 2], i % 2, 20, i % 2 ? ip[i / 2] : oop[i / 2]);
        assert_int_equal(r.points[i].status, CCT_POINT_OK); /* "error" is a deviation, 0e+00 */
    }
    assert_string_equal(r.gpu, "Tesla V100-SXM2-32GB");
    cct_import_result_destroy(&r);
}

static void text_tuning_lines_inside_rows(void **state)
{
    (void)state;
    cct_import_opts o;
    opts_none(&o);
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import(NT "reducescatter_tuning_2.18.txt", &o, &r, &err), CCT_OK);
    static const uint64_t sizes[] = {1024, 32768, 1048576};
    static const double oop[] = {12.84, 16.02, 48.31};
    static const double ip[] = {12.60, 15.88, 47.95};
    /* TUNING lines give one rank's share (size / 2): 1024 -> Ring/LL, 32768 -> Ring and
     * PAT (mixed: unknown), 1048576 -> Ring/Simple */
    static const int algo[] = {CCT_ALGO_RING, -1, CCT_ALGO_RING};
    static const int proto[] = {CCT_PROTO_LL, -1, CCT_PROTO_SIMPLE};
    static const unsigned lines[] = {14, 21, 28};
    assert_int_equal(r.n_points, 6);
    for (size_t i = 0; i < 6; i++) {
        const cct_point *p = &r.points[i];
        check_point(p, CCT_COLL_REDUCESCATTER, CCT_DEFAULT, CCT_DEFAULT, 2, 1, CCT_DTYPE_BF16,
                    sizes[i / 2], i % 2, 10, i % 2 ? ip[i / 2] : oop[i / 2]);
        assert_int_equal(p->nccl_algo, algo[i / 2]);
        assert_int_equal(p->nccl_proto, proto[i / 2]);
        assert_int_equal(r.meta[i].line, lines[i / 2]);
    }
    assert_string_equal(r.nccl_version, "2.27.5");
    cct_import_result_destroy(&r);
}

static void text_two_runs(void **state)
{
    (void)state;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import(NT "two_runs_allreduce_reduce_2.19.txt", NULL, &r, &err), CCT_OK);
    assert_int_equal(r.runs, 2);
    assert_int_equal(r.n_points, 12);
    static const uint64_t sizes[] = {65536, 524288, 4194304};
    static const double ar[] = {25.3, 25.1, 39.8, 39.5, 121.7, 120.9};
    static const double rd[] = {19.7, 19.6, 30.2, 30.0, 88.4, 87.9};
    for (size_t i = 0; i < 6; i++) {
        check_point(&r.points[i], CCT_COLL_ALLREDUCE, CCT_DEFAULT, CCT_DEFAULT, 8, 2,
                    CCT_DTYPE_FLOAT, sizes[i / 2], i % 2, 20, ar[i]);
        check_point(&r.points[6 + i], CCT_COLL_REDUCE, CCT_DEFAULT, CCT_DEFAULT, 8, 2,
                    CCT_DTYPE_FLOAT, sizes[i / 2], i % 2, 40, rd[i]);
    }
    cct_import_result_destroy(&r);

    /* without the program names the runs cannot be told apart */
    size_t len;
    char *text = tu_read(NT "two_runs_allreduce_reduce_2.19.txt", &len);
    char *a = tu_replace(text, "# Collective test starting: all_reduce_perf\n", "");
    assert_int_equal(tu_import_text(a, "x.log", NULL, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "x.log:2:1: this run does not name its collective");
    cct_import_result_destroy(&r);
    free(a);
    free(text);
}

static void text_per_iter_env_channels_align(void **state)
{
    (void)state;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import(NT "allreduce_per_iter_timestamps_2.19.txt", NULL, &r, &err),
                     CCT_OK);
    assert_int_equal(r.n_points, 6);
    /* time, min, max, cv% of each side, from the sample */
    static const double v[6][4] = {{8.91, 8.40, 10.21, 4.75},   {8.88, 8.37, 9.96, 4.12},
                                   {9.73, 9.20, 11.04, 5.30},   {9.70, 9.18, 12.33, 7.85},
                                   {14.22, 13.61, 16.90, 6.01}, {14.18, 13.60, 15.87, 3.98}};
    static const uint64_t sizes[] = {4096, 16384, 65536};
    for (size_t i = 0; i < 6; i++) {
        const cct_point *p = &r.points[i];
        /* NCCL_ALGO=Tree, NCCL_MIN/MAX_NCHANNELS=4, NCCL_BUFFSIZE=8388608, -u 3 (floats) */
        check_point(p, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_DEFAULT, 2, 1, CCT_DTYPE_FLOAT,
                    sizes[i / 2], i % 2, 30, v[i][0]);
        assert_int_equal(p->cfg.channels, 4);
        assert_int_equal(p->cfg.buffsize, 8388608);
        assert_int_equal(p->cfg.align, 12);
        tu_assert_double(p->stats.min_us, v[i][1]);
        tu_assert_double(p->stats.max_us, v[i][2]);
        tu_assert_double(p->stats.cv, v[i][3] / 100.0);
        tu_assert_nan(p->stats.p95_us); /* the text report has p99, not p95 */
        assert_int_equal(p->nccl_algo, CCT_ALGO_TREE);
        assert_int_equal(p->nccl_proto, -1);
        bool bad = i == 3; /* 16384 in-place reported 1024 wrong elements */
        assert_int_equal(p->wrong, bad ? 1024 : 0);
        assert_int_equal(p->status, bad ? CCT_POINT_CORRUPT : CCT_POINT_OK);
    }
    cct_import_result_destroy(&r);
}

static void text_hostid_nodes_from_nccl(void **state)
{
    (void)state;
    cct_import_opts o;
    opts_none(&o);
    cct_import_result r;
    cct_error err;
    /* one host, four rank processes with their own NCCL_HOSTID: NCCL says nNodes 4 */
    assert_int_equal(tu_import(NT "allreduce_ll128_4proc_hostid_2.19.txt", &o, &r, &err), CCT_OK);
    assert_int_equal(r.n_points, 4);
    assert_int_equal(r.ranks_per_gpu, 4); /* four rank lines, one host, one bus id */
    static const double t[] = {121.3, 118.6, 331.9, 327.4};
    for (size_t i = 0; i < 4; i++) {
        check_point(&r.points[i], CCT_COLL_ALLREDUCE, CCT_DEFAULT, CCT_PROTO_LL128, 4, 4,
                    CCT_DTYPE_FLOAT, i < 2 ? 4096 : 65536, i % 2, 20, t[i]);
        assert_int_equal(r.points[i].nccl_algo, -1);
        assert_int_equal(r.points[i].nccl_proto, CCT_PROTO_LL128);
    }
    cct_import_result_destroy(&r);

    /* without NCCL's nNodes lines the host names would say 1 node: refused */
    size_t len;
    char *text = tu_read(NT "allreduce_ll128_4proc_hostid_2.19.txt", &len);
    char *cut = text;
    for (int k = 0; k < 4; k++) {
        char from[128];
        snprintf(from, sizeof from, " nRanks 4 nNodes 4 localRanks 1 localRank 0 MNNVL 0\n");
        char *next = tu_replace(cut, from, " (line edited)\n");
        if (cut != text)
            free(cut);
        cut = next;
    }
    assert_int_equal(tu_import_text(cut, "lent.log", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "lent.log:3:1: NCCL_HOSTID is set");
    cct_import_result_destroy(&r);
    o.nodes = 4;
    assert_int_equal(tu_import_text(cut, "lent.log", &o, &r, &err), CCT_OK);
    assert_int_equal(r.points[0].cfg.nodes, 4);
    cct_import_result_destroy(&r);
    /* --nodes against NCCL's own count */
    o.nodes = 1;
    assert_int_equal(tu_import(NT "allreduce_ll128_4proc_hostid_2.19.txt", &o, &r, &err),
                     CCT_EINVAL);
    tu_assert_contains(err.msg, "allreduce_ll128_4proc_hostid_2.19.txt:12:");
    tu_assert_contains(err.msg, "NCCL reports nNodes 4 but --nodes 1 was given");
    cct_import_result_destroy(&r);
    free(cut);
    free(text);
}

static void rank_lines_must_add_up(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_read(NT "allgather_2.13.0_two_hosts.txt", &len);
    /* 2 GPUs per process: three rank lines cannot be whole processes */
    char *cut = tu_replace(text,
                           "#   Rank  3 Pid   5101 on      dgx-b device  1 [0x47] "
                           "NVIDIA A100-SXM4-80GB\n",
                           "");
    cct_import_opts o;
    cct_import_opts_init(&o);
    o.coll = CCT_COLL_ALLGATHER;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import_text(cut, "cut.log", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "cut.log:4:1: the log lists 3 ranks, not a multiple of nThread x "
                                "nGpus = 2");
    cct_import_result_destroy(&r);
    /* a gap in the numbering */
    char *gap = tu_replace(text, "#   Rank  3 Pid", "#   Rank  5 Pid");
    assert_int_equal(tu_import_text(gap, "gap.log", &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "gap.log:4:1: the rank lines of this run do not list ranks 0..3 "
                                "once each (rank 3 is missing)");
    cct_import_result_destroy(&r);
    free(gap);
    free(cut);
    free(text);
}

static void json_per_iter_samples(void **state)
{
    (void)state;
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import(NT "allgather_per_iter_mpi_2.19.json", NULL, &r, &err), CCT_OK);
    assert_int_equal(r.n_points, 4);
    assert_int_equal(r.n_samples, 16);
    assert_int_equal(r.ranks_per_gpu, 1);
    /* times_us after the 2 skipped iterations, and their summary */
    static const double samples[4][4] = {{35.0, 35.5, 36.0, 35.5},
                                         {35.1, 35.3, 35.2, 35.2},
                                         {92.0, 92.5, 92.3, 92.2},
                                         {91.8, 91.9, 92.0, 91.9}};
    static const double t[] = {35.5, 35.2, 92.25, 91.9};
    for (size_t i = 0; i < 4; i++) {
        const cct_point *p = &r.points[i];
        /* allgather from args[0]; NCCL_PROTO=^LL128;allgather:LL128 forces LL128 for it;
         * 4 device entries x 1 GPU = 4 ranks on 2 hosts; --unalign 16 floats = 64 bytes */
        check_point(p, CCT_COLL_ALLGATHER, CCT_DEFAULT, CCT_PROTO_LL128, 4, 2, CCT_DTYPE_FLOAT,
                    i < 2 ? 1048576 : 4194304, i % 2, 4, t[i]);
        assert_int_equal(p->cfg.align, 64);
        assert_int_equal(r.meta[i].n_samples, 4);
        double lo = 1e9, hi = 0;
        for (int k = 0; k < 4; k++) {
            tu_assert_double(r.samples[r.meta[i].first_sample + k], samples[i][k]);
            lo = fmin(lo, samples[i][k]);
            hi = fmax(hi, samples[i][k]);
        }
        tu_assert_double(p->stats.min_us, lo);
        tu_assert_double(p->stats.max_us, hi);
        tu_assert_double(p->stats.p95_us, hi);
        assert_true(p->stats.cv > 0 && p->stats.cv < 0.02);
        assert_int_equal(r.meta[i].line, 1); /* one-line JSON: the column tells the row */
        assert_true(r.meta[i].col > 1);
    }
    cct_import_result_destroy(&r);
}

static void flags_against_the_log(void **state)
{
    (void)state;
    cct_import_opts o;
    cct_import_result r;
    cct_error err;
    const char *f = NT "allreduce_ring_simple_2.19.txt";

    opts_none(&o);
    o.algo = CCT_ALGO_TREE;
    assert_int_equal(tu_import(f, &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg,
                       "allreduce_ring_simple_2.19.txt:11:71: the log says NCCL_ALGO=Ring");
    tu_assert_contains(err.msg, "--algo tree");
    cct_import_result_destroy(&r);

    opts_none(&o);
    o.algo = CCT_ALGO_RING; /* agreeing flags are fine */
    o.proto = CCT_PROTO_SIMPLE;
    o.ranks = 4;
    o.nodes = 1;
    o.coll = CCT_COLL_ALLREDUCE;
    assert_int_equal(tu_import(f, &o, &r, &err), CCT_OK);
    check_ring_simple(&r);
    cct_import_result_destroy(&r);

    opts_none(&o);
    o.coll = CCT_COLL_BROADCAST;
    assert_int_equal(tu_import(f, &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, ":2:29: the log measured allreduce but --coll broadcast");
    cct_import_result_destroy(&r);

    opts_none(&o);
    o.ranks = 8;
    assert_int_equal(tu_import(f, &o, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "shows 4 ranks but --ranks 8");
    cct_import_result_destroy(&r);

    /* a default log takes the flag as the truth about what was forced */
    opts_none(&o);
    o.algo = CCT_ALGO_PAT;
    assert_int_equal(tu_import(NT "two_runs_allreduce_reduce_2.19.txt", &o, &r, &err), CCT_OK);
    assert_int_equal(r.points[0].cfg.algo, CCT_ALGO_PAT);
    assert_int_equal(r.points[0].nccl_algo, CCT_ALGO_PAT);
    assert_int_equal(r.points[0].cfg.proto, CCT_DEFAULT);
    cct_import_result_destroy(&r);
}

static void accepted_without_footer(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_read(NT "allreduce_ring_simple_2.19.txt", &len);
    /* a job killed between two sizes: complete rows, no footer */
    char *cut = strstr(text, "        4096          1024");
    assert_non_null(cut);
    cut = strchr(cut, '\n') + 1;
    *cut = '\0';
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import_text(text, "cut.log", NULL, &r, &err), CCT_OK);
    assert_int_equal(r.n_points, 8);
    cct_import_result_destroy(&r);
    /* the same without the last line end: refused */
    cut[-1] = '\0';
    assert_int_equal(tu_import_text(text, "cut.log", NULL, &r, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "cut.log:30:");
    tu_assert_contains(err.msg, "no line end");
    assert_int_equal(r.n_points, 0);
    cct_import_result_destroy(&r);
    free(text);
}

static void crlf_and_timestamped_info(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_read(NT "allreduce_ring_simple_2.19.txt", &len);
    /* CRLF line ends, and an INFO line with NCCL_DEBUG_TIMESTAMP_LEVELS' prefix */
    char *crlf = malloc(2 * len + 1);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            crlf[k++] = '\r';
        crlf[k++] = text[i];
    }
    crlf[k] = '\0';
    char *ts = tu_replace(crlf, "h200-node07:41234:41234 [0] NCCL INFO NCCL_ALGO",
                          "[2026-11-29 14:00:00] h200-node07:41234:41234 [0] NCCL INFO NCCL_ALGO");
    cct_import_result r;
    cct_error err;
    assert_int_equal(tu_import_text(ts, "crlf.log", NULL, &r, &err), CCT_OK);
    check_ring_simple(&r);
    cct_import_result_destroy(&r);
    free(ts);
    free(crlf);
    free(text);
}

static void program_names(void **state)
{
    (void)state;
    cct_nt_run run;
    cct_error err;
    cct_nt_run_init(&run, 1);
    assert_int_equal(cct_nt_run_set_program(&run, "all_reduce_perf_mpi", "n", 1, 1, &err), CCT_OK);
    assert_int_equal(run.coll, CCT_COLL_ALLREDUCE);
    assert_int_equal(cct_nt_run_set_program(&run, "/opt/b/reduce_scatter_perf", "n", 1, 1, &err),
                     CCT_OK);
    assert_int_equal(run.coll, CCT_COLL_REDUCESCATTER);
    assert_int_equal(cct_nt_run_set_program(&run, "C:\\t\\all_gather_perf.exe", "n", 1, 1, &err),
                     CCT_OK);
    assert_int_equal(run.coll, CCT_COLL_ALLGATHER);
    assert_int_equal(cct_nt_run_set_program(&run, "alltoall_perf", "n", 3, 4, &err),
                     CCT_EUNSUPPORTED);
    tu_assert_contains(err.msg, "n:3:4: alltoall_perf measures alltoall");
    assert_int_equal(cct_nt_run_set_program(&run, "sendrecv_perf", "n", 1, 1, &err),
                     CCT_EUNSUPPORTED);
    assert_int_equal(cct_nt_run_set_program(&run, "ib_write_bw", "n", 1, 1, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "not an nccl-tests program");
    cct_nt_run_destroy(&run);
}

/* NCCL's list syntax for NCCL_ALGO/NCCL_PROTO, resolved for one collective. */
static cct_status resolve(const char *algo, const char *proto, int coll, int flag_algo,
                          int flag_proto, cct_config *cfg, cct_error *err)
{
    cct_nccl_env env;
    cct_nccl_env_init(&env);
    if (algo)
        assert_int_equal(cct_nccl_env_record(&env, "NCCL_ALGO", algo, "e", 5, 9, err), CCT_OK);
    if (proto)
        assert_int_equal(cct_nccl_env_record(&env, "NCCL_PROTO", proto, "e", 6, 9, err), CCT_OK);
    cct_import_opts o;
    cct_import_opts_init(&o);
    o.algo = flag_algo;
    o.proto = flag_proto;
    memset(cfg, 0, sizeof *cfg);
    cfg->coll = coll;
    return cct_nccl_env_apply(&env, &o, "e", cfg, err);
}

static void nccl_list_syntax(void **state)
{
    (void)state;
    const int F = CCT_IMPORT_FROM_INPUT;
    cct_config c;
    cct_error err;
    assert_int_equal(resolve("ring", "LL128", CCT_COLL_ALLREDUCE, F, F, &c, &err), CCT_OK);
    assert_int_equal(c.algo, CCT_ALGO_RING);
    assert_int_equal(c.proto, CCT_PROTO_LL128);
    /* the prefixed entry applies to its collective only */
    assert_int_equal(resolve("ring;allreduce:tree", NULL, CCT_COLL_ALLREDUCE, F, F, &c, &err),
                     CCT_OK);
    assert_int_equal(c.algo, CCT_ALGO_TREE);
    assert_int_equal(resolve("ring;allreduce:tree", NULL, CCT_COLL_BROADCAST, F, F, &c, &err),
                     CCT_OK);
    assert_int_equal(c.algo, CCT_ALGO_RING);
    /* everything but one of three protocols is a restriction, not a choice */
    assert_int_equal(resolve(NULL, "^LL128", CCT_COLL_ALLREDUCE, F, F, &c, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "e:6:9: NCCL_PROTO=^LL128 lets NCCL choose among several");
    assert_int_equal(resolve(NULL, "^LL128", CCT_COLL_ALLREDUCE, F, CCT_DEFAULT, &c, &err), CCT_OK);
    assert_int_equal(c.proto, CCT_DEFAULT);
    assert_int_equal(resolve(NULL, "^LL,LL128", CCT_COLL_ALLREDUCE, F, F, &c, &err), CCT_OK);
    assert_int_equal(c.proto, CCT_PROTO_SIMPLE);
    /* all enabled is NCCL's default */
    assert_int_equal(resolve(NULL, "LL,LL128,Simple", CCT_COLL_ALLREDUCE, F, F, &c, &err), CCT_OK);
    assert_int_equal(c.proto, CCT_DEFAULT);
    assert_int_equal(resolve("Tree,Ring", NULL, CCT_COLL_ALLREDUCE, F, F, &c, &err), CCT_EINVAL);
    assert_int_equal(resolve("Tree,Ring", NULL, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, F, &c, &err),
                     CCT_OK);
    assert_int_equal(c.algo, CCT_ALGO_RING);
    assert_int_equal(resolve("Rnig", NULL, CCT_COLL_ALLREDUCE, F, F, &c, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "unknown algorithm 'Rnig'");
    assert_int_equal(resolve("^Tree,Ring,CollNetDirect,CollNetChain,NVLS,NVLSTree,PAT", NULL,
                             CCT_COLL_ALLREDUCE, F, F, &c, &err),
                     CCT_EINVAL);
    tu_assert_contains(err.msg, "enables no algorithm");
    /* a forced value and a different flag contradict */
    assert_int_equal(resolve("Ring", NULL, CCT_COLL_ALLREDUCE, CCT_DEFAULT, F, &c, &err),
                     CCT_EINVAL);
    tu_assert_contains(err.msg, "but --algo default was given");
}

static void nccl_env_numbers(void **state)
{
    (void)state;
    cct_nccl_env env;
    cct_error err;
    cct_import_opts o;
    cct_import_opts_init(&o);
    cct_config c = {.coll = CCT_COLL_ALLREDUCE};
    cct_nccl_env_init(&env);
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_LL128_BUFFSIZE", "0x100000.", "e", 1, 1, &err),
                     CCT_OK);
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_LL_BUFFSIZE", "262144", "e", 2, 1, &err),
                     CCT_OK);
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_SOCKET_IFNAME", "eth0", "e", 2, 1, &err),
                     CCT_OK); /* ignored */
    assert_int_equal(cct_nccl_env_apply(&env, &o, "e", &c, &err), CCT_OK);
    assert_int_equal(c.ll128_buffsize, 1048576);
    assert_int_equal(c.ll_buffsize, 262144);
    assert_int_equal(c.channels, 0);
    /* the same key twice with different values: the processes disagree */
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_LL_BUFFSIZE", "262144.", "e", 7, 3, &err),
                     CCT_OK);
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_LL_BUFFSIZE", "131072", "e", 8, 3, &err),
                     CCT_EINVAL);
    tu_assert_contains(err.msg, "e:8:3: NCCL_LL_BUFFSIZE=131072 here but NCCL_LL_BUFFSIZE=262144 "
                                "at line 2");
    /* one channel bound leaves NCCL free: refused */
    cct_nccl_env_init(&env);
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_MAX_NCHANNELS", "8.", "e", 4, 2, &err),
                     CCT_OK);
    assert_int_equal(cct_nccl_env_apply(&env, &o, "e", &c, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "e:4:2: NCCL_MIN_NCHANNELS=unset and NCCL_MAX_NCHANNELS=8");
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_MIN_NCHANNELS", "8", "e", 5, 2, &err), CCT_OK);
    assert_int_equal(cct_nccl_env_apply(&env, &o, "e", &c, &err), CCT_OK);
    assert_int_equal(c.channels, 8);
    cct_nccl_env_init(&env);
    assert_int_equal(cct_nccl_env_record(&env, "NCCL_BUFFSIZE", "4M", "e", 9, 2, &err), CCT_OK);
    assert_int_equal(cct_nccl_env_apply(&env, &o, "e", &c, &err), CCT_EINVAL);
    tu_assert_contains(err.msg, "NCCL_BUFFSIZE=4M is not a positive byte count");
}

static void detection(void **state)
{
    (void)state;
    assert_int_equal(cct_import_detect("  \n{\"version\":3}", 15), CCT_IMPORT_NCCLTESTS_JSON);
    const char *csv = "\xEF\xBB\xBF"
                      "collective,size_bytes,algorithm\n";
    assert_int_equal(cct_import_detect(csv, strlen(csv)), CCT_IMPORT_CSV);
    const char *log = "# nThread 1 nGpus 1 minBytes 8, maxBytes 8 collective size_bytes\n";
    assert_int_equal(cct_import_detect(log + 2, strlen(log) - 2), CCT_IMPORT_CSV);
    assert_int_equal(cct_import_detect(log, 20), CCT_IMPORT_NCCLTESTS);
    assert_int_equal(cct_import_detect("", 0), CCT_IMPORT_NCCLTESTS);
    assert_int_equal(cct_import_format_from_name("nccl-tests-json"), CCT_IMPORT_NCCLTESTS_JSON);
    assert_int_equal(cct_import_format_from_name("xml"), -1);
    assert_string_equal(cct_import_format_name(CCT_IMPORT_CSV), "csv");
}

static void strict_numbers(void **state)
{
    (void)state;
    double d;
    uint64_t u;
    long l;
    assert_true(cct_parse_double("1.23457e+06", &d));
    tu_assert_double(d, 1234570.0);
    assert_true(cct_parse_double(".5", &d));
    assert_false(cct_parse_double("0x10", &d));
    assert_false(cct_parse_double("inf", &d));
    assert_false(cct_parse_double("nan", &d));
    assert_false(cct_parse_double("1e999", &d));
    assert_false(cct_parse_double("1.5 ", &d));
    assert_false(cct_parse_double("", &d));
    assert_true(cct_parse_u64("18446744073709551615", &u));
    assert_int_equal(u, UINT64_MAX);
    assert_false(cct_parse_u64("18446744073709551616", &u));
    assert_false(cct_parse_u64("+1", &u));
    assert_true(cct_parse_long("-1", -1, 5, &l));
    assert_int_equal(l, -1);
    assert_false(cct_parse_long("-2", -1, 5, &l));
    assert_false(cct_parse_long("-", -1, 5, &l));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_ring_simple),
        cmocka_unit_test(json_ring_simple_equals_text),
        cmocka_unit_test(conflicting_duplicate_across_files),
        cmocka_unit_test(text_2_13_blank_redop_two_hosts),
        cmocka_unit_test(text_2_9_error_column),
        cmocka_unit_test(text_tuning_lines_inside_rows),
        cmocka_unit_test(text_two_runs),
        cmocka_unit_test(text_per_iter_env_channels_align),
        cmocka_unit_test(text_hostid_nodes_from_nccl),
        cmocka_unit_test(rank_lines_must_add_up),
        cmocka_unit_test(json_per_iter_samples),
        cmocka_unit_test(flags_against_the_log),
        cmocka_unit_test(accepted_without_footer),
        cmocka_unit_test(crlf_and_timestamped_info),
        cmocka_unit_test(program_names),
        cmocka_unit_test(nccl_list_syntax),
        cmocka_unit_test(nccl_env_numbers),
        cmocka_unit_test(detection),
        cmocka_unit_test(strict_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
