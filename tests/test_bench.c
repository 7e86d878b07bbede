/*
 * test_bench.c - the bench's plan and report (src/search/cct_bench.c) without a GPU.
 *
 * The plan must hold, per collective the table covers, NCCL's default, the tuned choice,
 * every modelled configuration at the table's buffer sizes, every rule's configuration and
 * every algorithm/protocol NCCL offers there, once each; a topology the
 * table lacks is refused with the topologies it has -- unless the table carries NCCL model
 * constants: then it is benched there with every algorithm/protocol NCCL allows.  The report must
 * join the three kinds of points per size, compute the speed ratios and the geometric mean exactly,
 * and count the sizes below the 0.98 targets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cct_bench.h"
#include "store_test_util.h"

static void make_table(cct_table *t)
{
    cct_table_init(t);
    cct_section *s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 4, 4);
    cct_rule r = cct_rule_blank();
    r.max_bytes = CCT_BYTES_INF;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    const int cfg[][3] = {{CCT_ALGO_RING, CCT_PROTO_LL, 1},
                          {CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0},
                          {CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 2},
                          {CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0}}; /* same again at 1 MiB buffers */
    for (int i = 0; i < 4; i++) {
        cct_model m;
        memset(&m, 0, sizeof m);
        m.algo = cfg[i][0];
        m.proto = cfg[i][1];
        m.channels = cfg[i][2];
        m.buffsize = i == 3 ? 1u << 20 : 0;
        assert_int_equal(cct_section_add_model(s, &m), CCT_OK);
    }
}

/* Count a plan's configurations of one collective that are (algo, proto, channels). */
static int count_cfg(const cct_plan *p, int coll, int algo, int proto, int channels)
{
    int n = 0;
    for (size_t i = 0; i < p->n_configs; i++)
        n += p->configs[i].coll == coll && p->configs[i].algo == algo &&
             p->configs[i].proto == proto && p->configs[i].channels == channels;
    return n;
}

static void test_plan(void **state)
{
    (void)state;
    cct_table t;
    make_table(&t);
    cct_search_opts o;
    memset(&o, 0, sizeof o);
    cct_space_defaults(&o.space);
    o.n_bench_sizes = cct_bench_default_sizes(16u << 20, o.bench_sizes, 64);
    /* 1K 4K 16K 64K 100000 256K 1M 3M 4M 5.5M 12000000 16M */
    assert_int_equal(o.n_bench_sizes, 12);
    for (size_t i = 1; i < o.n_bench_sizes; i++)
        assert_true(o.bench_sizes[i] > o.bench_sizes[i - 1]);
    cct_plan p;
    cct_error err;
    assert_int_equal(cct_bench_build_plan(&o, &t, 4, 4, &p, &err), CCT_OK);
    assert_int_equal(p.space.n_colls, 1); /* only allreduce has a section */
    assert_int_equal(p.n_sessions, 1);
    assert_true(p.sessions[0].bench);
    assert_false(p.sessions[0].unlock);
    /* default, tuned, the 3 distinct default-buffer models (ring/ll ch=1, ring/simple,
     * tree/simple ch=2), the rule's ring/simple (one of them already), and what NCCL offers
     * at NCCL's channel count: ring/ll, tree/ll, tree/simple (no LL128: the verdict) */
    assert_int_equal(p.n_configs, 8);
    assert_int_equal(p.configs[0].algo, CCT_DEFAULT);
    assert_int_equal(p.configs[1].algo, CCT_TUNED);
    assert_int_equal(p.configs[2].channels, 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 2), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_LL, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL128, 0), 0);
    cct_plan_destroy(&p);
    assert_int_equal(cct_bench_build_plan(&o, &t, 8, 8, &p, &err), CCT_ENOTFOUND);
    assert_non_null(strstr(err.msg, "allreduce ranks=4 nodes=4"));
    cct_table_destroy(&t);
}

/* A table with nccl_constants is benchable where it has no section: default, tuned and every
 * algorithm/protocol NCCL allows there; --rules off adds them where it has one. */
static void test_plan_constants(void **state)
{
    (void)state;
    cct_table t;
    make_table(&t);
    cct_search_opts o;
    memset(&o, 0, sizeof o);
    cct_space_defaults(&o.space);
    o.n_bench_sizes = cct_bench_default_sizes(1u << 20, o.bench_sizes, 64);
    cct_plan p, plain;
    cct_error err;
    assert_int_equal(cct_bench_build_plan(&o, &t, 4, 4, &plain, &err), CCT_OK);
    t.constants.present = true;
    t.constants.base_latency_us[CCT_ALGO_RING][CCT_PROTO_LL] = 4.5;
    t.ll128_allowed = false;

    /* 3 ranks, no section: every collective of the space, generic candidates */
    assert_int_equal(cct_bench_build_plan(&o, &t, 3, 3, &p, &err), CCT_OK);
    assert_int_equal(p.space.n_colls, o.space.n_colls);
    assert_true(p.sessions[0].default_no_constants);
    assert_false(p.sessions[0].no_rules);
    size_t want = 0;
    for (size_t ci = 0; ci < o.space.n_colls; ci++) {
        int c = o.space.colls[ci];
        bool ar = c == CCT_COLL_ALLREDUCE;
        assert_int_equal(count_cfg(&p, c, CCT_DEFAULT, CCT_DEFAULT, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_TUNED, CCT_TUNED, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_RING, CCT_PROTO_LL, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_RING, CCT_PROTO_LL128, 0), 0); /* verdict */
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_TREE, CCT_PROTO_LL, 0), ar ? 1 : 0);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0), ar ? 1 : 0);
        /* one rank per node: NCCL offers PAT/Simple for allgather and reducescatter */
        bool pat = c == CCT_COLL_ALLGATHER || c == CCT_COLL_REDUCESCATTER;
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, 0), pat ? 1 : 0);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_PAT, CCT_PROTO_LL, 0), 0);
        want += ar ? 6 : pat ? 5 : 4;
    }
    assert_int_equal(p.n_configs, want);
    for (size_t i = 0; i < p.n_configs; i++)
        assert_true(p.configs[i].ranks == 3 && p.configs[i].nodes == 3);
    cct_plan_destroy(&p);

    /* LL128 allowed: it joins the candidates */
    t.ll128_allowed = true;
    assert_int_equal(cct_bench_build_plan(&o, &t, 3, 3, &p, &err), CCT_OK);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_LL128, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_TREE, CCT_PROTO_LL128, 0), 0);
    cct_plan_destroy(&p);

    /* where it has a section: the plan without constants for that collective, with the two
     * LL128 candidates the verdict now allows, the generic set for the collectives without
     * one; NCCL's default now runs without the constants; a different tag, so an old run
     * cannot be resumed by it */
    assert_int_equal(cct_bench_build_plan(&o, &t, 4, 4, &p, &err), CCT_OK);
    assert_int_equal(p.space.n_colls, o.space.n_colls);
    size_t n_ar = 0;
    for (size_t i = 0; i < p.n_configs; i++)
        n_ar += p.configs[i].coll == CCT_COLL_ALLREDUCE;
    assert_int_equal(n_ar, plain.n_configs + 2);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL128, 0), 1);
    for (size_t i = 0; i < plain.n_configs; i++)
        assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, plain.configs[i].algo,
                                   plain.configs[i].proto, plain.configs[i].channels),
                         1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_LL128, 0), 1);
    assert_true(p.sessions[0].default_no_constants);
    assert_false(plain.sessions[0].default_no_constants);
    assert_string_not_equal(p.hash, plain.hash);
    cct_plan_destroy(&p);

    /* --rules off at the section's topology: its models plus the generic set, once each */
    o.bench_rules_off = true;
    assert_int_equal(cct_bench_build_plan(&o, &t, 4, 4, &p, &err), CCT_OK);
    assert_true(p.sessions[0].no_rules);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 1), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_LL128, 0), 1);
    cct_plan_destroy(&p);

    /* an empty block: benchable, but nothing to keep away from NCCL's default */
    cct_constants_clear(&t.constants);
    t.constants.present = true;
    o.bench_rules_off = false;
    assert_int_equal(cct_bench_build_plan(&o, &t, 3, 3, &p, &err), CCT_OK);
    assert_false(p.sessions[0].default_no_constants);
    cct_plan_destroy(&p);
    cct_plan_destroy(&plain);
    cct_table_destroy(&t);
}

/* A point whose samples are us + spread[i] (its median is us when spread is symmetric). */
static void add_spread(cct_store *st, int64_t run, int algo, int proto, int channels,
                       uint64_t bytes, double us, int ran_algo, const double *spread, size_t n)
{
    cct_point p;
    memset(&p, 0, sizeof p);
    p.cfg.coll = CCT_COLL_ALLREDUCE;
    p.cfg.algo = algo;
    p.cfg.proto = proto;
    p.cfg.channels = channels;
    p.cfg.ranks = p.cfg.nodes = 4;
    p.bytes = bytes;
    p.status = CCT_POINT_OK;
    p.stats.n = (int)n;
    p.stats.median_us = p.stats.p95_us = p.stats.min_us = p.stats.max_us = p.stats.mean_us = us;
    p.nccl_algo = ran_algo;
    p.nccl_proto = CCT_PROTO_SIMPLE;
    cct_error err;
    double samples[16];
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++)
        samples[i] = us + spread[i];
    assert_int_equal(cct_store_add_point(st, run, &p, samples, n, &err), CCT_OK);
}

static void add(cct_store *st, int64_t run, int algo, int proto, int channels, uint64_t bytes,
                double us, int ran_algo)
{
    static const double none[] = {0.0};
    add_spread(st, run, algo, proto, channels, bytes, us, ran_algo, none, 1);
}

static void test_report(void **state)
{
    (void)state;
    char dir[256], path[320];
    store_test_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench.db", dir);
    cct_store *st;
    cct_error err;
    assert_int_equal(cct_store_open(path, false, &st, &err), CCT_OK);
    cct_store_fingerprint fp = store_test_fingerprint("bench");
    int64_t fpid;
    assert_int_equal(cct_store_put_fingerprint(st, &fp, &fpid, &err), CCT_OK);
    cct_store_run r;
    memset(&r, 0, sizeof r);
    r.fingerprint_id = fpid;
    snprintf(r.source, sizeof r.source, "bench");
    assert_int_equal(cct_store_begin_run(st, &r, &err), CCT_OK);
    /* 4 KiB: default 100, tuned 80 (1.25x), oracle 78; 1 MiB: default 500, tuned 520, oracle 490.
     * Samples: at 4 KiB tuned and the oracle overlap (80 +- 3 vs 78 +- 3: a loss of 0.975x
     * inside the noise); at 1 MiB the six samples of each point are apart (520 +- 2.5 vs
     * 500 +- 2.5 and 490 +- 2.5: p = 0.005, significant both ways) */
    static const double wide[] = {-3, -2, -1, 1, 2, 3}, tight[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5};
    add_spread(st, r.id, CCT_DEFAULT, CCT_DEFAULT, 0, 4096, 100.0, CCT_ALGO_RING, wide, 6);
    add_spread(st, r.id, CCT_TUNED, CCT_TUNED, 0, 4096, 80.0, CCT_ALGO_TREE, wide, 6);
    add_spread(st, r.id, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 2, 4096, 78.0, CCT_ALGO_TREE, wide, 6);
    add(st, r.id, CCT_ALGO_RING, CCT_PROTO_LL, 1, 4096, 90.0, CCT_ALGO_RING);
    add_spread(st, r.id, CCT_DEFAULT, CCT_DEFAULT, 0, 1 << 20, 500.0, CCT_ALGO_RING, tight, 6);
    add_spread(st, r.id, CCT_TUNED, CCT_TUNED, 0, 1 << 20, 520.0, CCT_ALGO_RING, tight, 6);
    add_spread(st, r.id, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 1 << 20, 490.0, CCT_ALGO_RING, tight,
               6);
    /* a size with no tuned point is not a row */
    add(st, r.id, CCT_DEFAULT, CCT_DEFAULT, 0, 1 << 24, 900.0, CCT_ALGO_RING);
    char md[400];
    snprintf(md, sizeof md, "%s/report.md", dir);
    FILE *out = fopen(md, "w");
    cct_bench_summary sum;
    assert_int_equal(cct_bench_report(st, r.id, out, NULL, &sum, &err), CCT_OK);
    fclose(out);
    assert_int_equal(sum.rows, 2);
    assert_float_equal(sum.geomean_vs_default, sqrt(1.25 * (500.0 / 520.0)), 1e-12);
    assert_float_equal(sum.worst_vs_default, 500.0 / 520.0, 1e-12);
    assert_float_equal(sum.worst_vs_oracle, 490.0 / 520.0, 1e-12);
    assert_int_equal(sum.below_098_default, 1);
    assert_int_equal(sum.below_098_oracle, 2);
    assert_int_equal(sum.below_098_default_sig, 1); /* 1 MiB */
    assert_int_equal(sum.below_098_oracle_sig, 1);  /* 1 MiB; 4 KiB is inside the noise */
    /* 4 KiB: NCCL ran ring for the default and tree for the table (changed); 1 MiB: ring/simple
     * both times (same choice: the 500/520 ratio is noise) */
    assert_int_equal(sum.changed, 1);
    assert_float_equal(sum.geomean_changed, 1.25, 1e-12);
    assert_int_equal(sum.below_098_changed, 0);
    assert_int_equal(sum.same_choice, 1);
    assert_float_equal(sum.geomean_same, 500.0 / 520.0, 1e-12);
    out = fopen(md, "r");
    char text[4096];
    size_t got = fread(text, 1, sizeof text - 1, out);
    text[got] = '\0';
    fclose(out);
    assert_non_null(strstr(text, "| allreduce | 4 KiB | 100.0 | 80.0 | 78.0 | 1.250 | 0.975 | "
                                 "ring/simple | tree/simple | tree/simple ch=2 |  |\n"));
    assert_non_null(strstr(text, "| 1 MiB | 500.0 | 520.0 | 490.0 | 0.962 | 0.942 | ring/simple | "
                                 "ring/simple | ring/simple ch=0 | vs default and oracle |"));
    assert_non_null(strstr(text, "below 0.98 x default: 1 (1 of them a significant loss), below "
                                 "0.98 x oracle: 2 (1 significant)"));
    assert_non_null(strstr(text, "Where the table changed NCCL's algorithm or protocol: 1 sizes, "
                                 "geometric mean 1.250x, 0 below 0.98 x default.  Where NCCL ran "
                                 "the same algorithm and protocol both times: 1 sizes, geometric "
                                 "mean 0.962x"));
    cct_store_close(st);
    store_test_rmdir(dir);
}

/* The report on real bench stores recorded on the lent H200 (tests/data/h200/run-2026-11-29c):
 * the A/A control (a table that leaves NCCL's model as it is) has the same choice at every
 * size, and its ratio is the bench's own bias (1.003x at 3 ranks); the committed 2-rank table
 * changed NCCL's algorithm or protocol at some sizes and lost nowhere there by more than 2 %. */
static void report_of(const char *rel, cct_bench_summary *sum)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/data/h200/run-2026-11-29c/%s", src, rel);
    cct_store *st;
    cct_error err;
    if (cct_store_open(path, true, &st, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    assert_int_equal(cct_bench_report(st, 1, out, NULL, sum, &err), CCT_OK);
    fclose(out);
    cct_store_close(st);
}

static void test_report_recorded(void **state)
{
    (void)state;
    cct_bench_summary aa, committed;
    report_of("calib-aa/calib-3.db.gz", &aa);
    assert_int_equal(aa.rows, 24);
    assert_int_equal(aa.same_choice, 24);
    assert_int_equal(aa.changed, 0);
    assert_true(isnan(aa.geomean_changed));
    assert_float_equal(aa.geomean_same, aa.geomean_vs_default, 1e-12);
    assert_float_equal(aa.geomean_same, 1.003, 0.0005);
    report_of("bench-committed/bench-h200-socket-2ranks.db.gz", &committed);
    assert_int_equal(committed.rows, 60);
    assert_int_equal(committed.same_choice + committed.changed, committed.rows);
    assert_true(committed.changed > 0 && committed.same_choice > 0);
    assert_int_equal(committed.below_098_changed, 0);
    assert_true(committed.geomean_changed > 1.1);
    /* the significance counts of an independent Mann-Whitney (Python) on the same pairs */
    assert_int_equal(committed.below_098_default, 13);
    assert_int_equal(committed.below_098_default_sig, 3);
    assert_int_equal(committed.below_098_oracle, 33);
    assert_int_equal(committed.below_098_oracle_sig, 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan), cmocka_unit_test(test_plan_constants),
        cmocka_unit_test(test_report), cmocka_unit_test(test_report_recorded)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
