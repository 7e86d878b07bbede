/*
 * test_bench_modelless.c - `ccltune bench` of a table that has rules but no models: the
 * per-size argmin table (`ccltune fit --argmin`) and hand-written tables.
 *
 * The bench's oracle is the fastest forced configuration at a size.  Its candidates must not
 * come from the table's models alone: a table without models would be benched with NCCL's
 * default and its own choice only, and the report would find no size with an oracle.  The
 * plan must force, at every size of every collective, what NCCL offers there (Ring; Tree for
 * allreduce; LL128 only where the table's verdict allows it) and every rule's configuration;
 * the report over a store measured by such a plan must have a row per collective and size
 * and their geometric mean.  The table is the argmin table of a real H200 store
 * (tests/data/h200/retune-2026-12-06); the measurements are synthetic (no GPU here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cct_bench.h"
#include "fixture_test_util.h"
#include "store_test_util.h"

static const int bench_colls[] = {CCT_COLL_ALLGATHER, CCT_COLL_ALLREDUCE, CCT_COLL_REDUCESCATTER};
#define N_BENCH_COLLS 3

static void load_argmin(cct_table *t)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/data/h200/retune-2026-12-06/argmin-1.yaml", src);
    cct_error err;
    if (cct_table_load_file(path, t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
}

/* The options of `ccltune bench TABLE --colls allgather,allreduce,reducescatter
 * --max-bytes 64M` (the command that failed on the H200). */
static void bench_opts(cct_search_opts *o)
{
    memset(o, 0, sizeof *o);
    cct_space_defaults(&o->space);
    o->space.n_colls = 0;
    for (int i = 0; i < N_BENCH_COLLS; i++)
        o->space.colls[o->space.n_colls++] = bench_colls[i];
    o->n_bench_sizes = cct_bench_default_sizes(64u << 20, o->bench_sizes, 64);
}

static bool is_forced(const cct_config *c)
{
    return c->algo >= 0 && c->proto >= 0;
}

static int count_cfg(const cct_plan *p, int coll, int algo, int proto, int channels)
{
    int n = 0;
    for (size_t i = 0; i < p->n_configs; i++)
        n += p->configs[i].coll == coll && p->configs[i].algo == algo &&
             p->configs[i].proto == proto && p->configs[i].channels == channels;
    return n;
}

static size_t count_forced(const cct_plan *p, int coll)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_configs; i++)
        n += p->configs[i].coll == coll && is_forced(&p->configs[i]);
    return n;
}

/* The argmin table of the H200 store (rules, 0 models): every collective gets forced
 * configurations, and every size's own rule is one of them, so the oracle exists at every
 * size and is never slower than the table's choice there by construction. */
static void test_plan_argmin(void **state)
{
    (void)state;
    cct_table t;
    load_argmin(&t);
    for (size_t i = 0; i < t.n_sections; i++)
        assert_int_equal(t.sections[i].n_models, 0);
    assert_false(t.ll128_allowed);
    cct_search_opts o;
    bench_opts(&o);
    cct_plan p;
    cct_error err;
    if (cct_bench_build_plan(&o, &t, 4, 4, &p, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(p.space.n_colls, N_BENCH_COLLS);
    assert_int_equal(p.n_sessions, 1);
    assert_int_equal(p.sessions[0].first_config, 0);
    assert_int_equal(p.sessions[0].n_configs, p.n_configs); /* every config at every size */
    assert_int_equal(p.n_sizes, o.n_bench_sizes);
    for (int ci = 0; ci < N_BENCH_COLLS; ci++) {
        int c = bench_colls[ci];
        bool ar = c == CCT_COLL_ALLREDUCE;
        assert_int_equal(count_cfg(&p, c, CCT_DEFAULT, CCT_DEFAULT, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_TUNED, CCT_TUNED, 0), 1);
        /* what NCCL offers on this path, at NCCL's channel count */
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_RING, CCT_PROTO_LL, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0), 1);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_TREE, CCT_PROTO_LL, 0), ar ? 1 : 0);
        assert_int_equal(count_cfg(&p, c, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0), ar ? 1 : 0);
        for (size_t i = 0; i < p.n_configs; i++)
            if (p.configs[i].coll == c)
                assert_int_not_equal(p.configs[i].proto, CCT_PROTO_LL128); /* the verdict */
        /* the rule that decides each size is forced too */
        const cct_section *sec = cct_table_find_section(&t, c, 4, 4, 1, 0);
        assert_non_null(sec);
        assert_true(count_forced(&p, c) >= (ar ? 4u : 2u));
        for (size_t si = 0; si < p.n_sizes; si++) {
            const cct_rule *r = cct_section_lookup(sec, p.sizes[si]);
            assert_non_null(r);
            assert_int_equal(count_cfg(&p, c, r->algo, r->proto, r->channels), 1);
        }
    }
    cct_plan_destroy(&p);
    cct_table_destroy(&t);
}

/* A hand-written table: rules only, one of them LL128 against a verdict that forbids it
 * (not forced: NCCL would not run it in the bench's session), one with a channel count. */
static void test_plan_handwritten(void **state)
{
    (void)state;
    cct_table t;
    cct_table_init(&t);
    t.ll128_allowed = false;
    cct_section *s = cct_table_add_section(&t, CCT_COLL_ALLGATHER, 2, 1);
    assert_non_null(s);
    cct_rule r = cct_rule_blank();
    r.max_bytes = 65536;
    r.proto = CCT_PROTO_LL128;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    r.min_bytes = 65536;
    r.max_bytes = CCT_BYTES_INF;
    r.proto = CCT_PROTO_SIMPLE;
    r.channels = 4;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    cct_search_opts o;
    bench_opts(&o);
    cct_plan p;
    cct_error err;
    assert_int_equal(cct_bench_build_plan(&o, &t, 2, 1, &p, &err), CCT_OK);
    assert_int_equal(p.space.n_colls, 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 4), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_LL, 0), 1);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_LL128, 0), 0);
    assert_int_equal(p.n_configs, 5);
    cct_plan_destroy(&p);
    /* with LL128 allowed, the rule and NCCL's LL128 are the same candidate */
    t.ll128_allowed = true;
    assert_int_equal(cct_bench_build_plan(&o, &t, 2, 1, &p, &err), CCT_OK);
    assert_int_equal(count_cfg(&p, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_LL128, 0), 1);
    assert_int_equal(p.n_configs, 6);
    cct_plan_destroy(&p);
    cct_table_destroy(&t);
}

/* A synthetic latency/bandwidth curve per configuration (us): deterministic, different per
 * algorithm, protocol and channel count, with LL winning small sizes and Simple large. */
static double synth_us(int algo, int proto, int channels, uint64_t bytes)
{
    double alpha = proto == CCT_PROTO_LL ? 10.0 : proto == CCT_PROTO_LL128 ? 14.0 : 25.0;
    double gbps = proto == CCT_PROTO_LL ? 1.5 : proto == CCT_PROTO_LL128 ? 6.0 : 9.0;
    if (algo == CCT_ALGO_TREE) {
        alpha += 4.0;
        gbps *= 1.1;
    }
    if (channels > 0) {
        alpha += 0.5 * (channels > 8 ? 8 : channels);
        gbps *= channels >= 4 ? 1.05 : 0.8;
    }
    return alpha + (double)bytes / (gbps * 1e3);
}

static void add_point(cct_store *st, int64_t run, const cct_config *cfg, uint64_t bytes, double us,
                      int ran_algo, int ran_proto)
{
    cct_point p;
    memset(&p, 0, sizeof p);
    p.cfg = *cfg;
    p.bytes = bytes;
    p.status = CCT_POINT_OK;
    p.stats.n = 6;
    p.stats.median_us = p.stats.p95_us = p.stats.min_us = p.stats.max_us = p.stats.mean_us = us;
    p.nccl_algo = ran_algo;
    p.nccl_proto = ran_proto;
    double samples[6];
    for (int i = 0; i < 6; i++)
        samples[i] = us * (1.0 + 0.002 * (i - 2.5));
    cct_error err;
    assert_int_equal(cct_store_add_point(st, run, &p, samples, 6, &err), CCT_OK);
}

/* The plan of the argmin table measured point by point into a store, as the bench's session
 * stores it: NCCL's default (taken to run ring/ll below 64 KiB, ring/simple above), the
 * table's choice (its rule), every forced candidate.  The report has a row per collective and
 * size, and the geometric mean of default/tuned over them. */
static void test_report_modelless(void **state)
{
    (void)state;
    cct_table t;
    load_argmin(&t);
    cct_search_opts o;
    bench_opts(&o);
    cct_plan p;
    cct_error err;
    assert_int_equal(cct_bench_build_plan(&o, &t, 4, 4, &p, &err), CCT_OK);
    char dir[256], path[320];
    store_test_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench.db", dir);
    cct_store *st;
    assert_int_equal(cct_store_open(path, false, &st, &err), CCT_OK);
    cct_store_fingerprint fp = store_test_fingerprint("bench");
    int64_t fpid;
    assert_int_equal(cct_store_put_fingerprint(st, &fp, &fpid, &err), CCT_OK);
    cct_store_run run;
    memset(&run, 0, sizeof run);
    run.fingerprint_id = fpid;
    snprintf(run.source, sizeof run.source, "bench");
    assert_int_equal(cct_store_begin_run(st, &run, &err), CCT_OK);
    double log_sum = 0.0, worst_vs_oracle = INFINITY;
    size_t rows = 0;
    for (size_t i = 0; i < p.n_configs; i++) {
        const cct_config *c = &p.configs[i];
        const cct_section *sec = cct_table_find_section(&t, c->coll, 4, 4, 1, 0);
        for (size_t si = 0; si < p.n_sizes; si++) {
            uint64_t b = cct_plan_effective_bytes(c, p.sizes[si]);
            int d_proto = b < 65536 ? CCT_PROTO_LL : CCT_PROTO_SIMPLE;
            const cct_rule *r = cct_section_lookup(sec, b);
            double dflt = synth_us(CCT_ALGO_RING, d_proto, 0, b);
            double tuned = synth_us(r->algo, r->proto, r->channels, b);
            if (c->algo == CCT_DEFAULT) {
                add_point(st, run.id, c, b, dflt, CCT_ALGO_RING, d_proto);
            } else if (c->algo == CCT_TUNED) {
                add_point(st, run.id, c, b, tuned, r->algo, r->proto);
                /* the expected summary, from the same curves */
                double oracle = INFINITY;
                for (size_t k = 0; k < p.n_configs; k++)
                    if (p.configs[k].coll == c->coll && is_forced(&p.configs[k]))
                        oracle = fmin(oracle, synth_us(p.configs[k].algo, p.configs[k].proto,
                                                       p.configs[k].channels, b));
                log_sum += log(dflt / tuned);
                worst_vs_oracle = fmin(worst_vs_oracle, oracle / tuned);
                rows++;
            } else {
                add_point(st, run.id, c, b, synth_us(c->algo, c->proto, c->channels, b), c->algo,
                          c->proto);
            }
        }
    }
    assert_int_equal(rows, N_BENCH_COLLS * p.n_sizes);
    char md[400];
    snprintf(md, sizeof md, "%s/report.md", dir);
    FILE *out = fopen(md, "w");
    assert_non_null(out);
    cct_bench_summary sum;
    cct_status rc = cct_bench_report(st, run.id, out, NULL, &sum, &err);
    fclose(out);
    if (rc != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(sum.rows, rows);
    assert_float_equal(sum.geomean_vs_default, exp(log_sum / (double)rows), 1e-9);
    assert_true(isfinite(sum.geomean_vs_default) && sum.geomean_vs_default > 0.0);
    assert_float_equal(sum.worst_vs_oracle, worst_vs_oracle, 1e-9);
    assert_true(sum.worst_vs_oracle <= 1.0);
    assert_int_equal(sum.same_choice + sum.changed, sum.rows);
    out = fopen(md, "r");
    assert_non_null(out);
    char line[1024];
    size_t table_rows = 0;
    bool geomean = false;
    while (fgets(line, sizeof line, out)) {
        for (int ci = 0; ci < N_BENCH_COLLS; ci++) {
            char head[64];
            snprintf(head, sizeof head, "| %s | ", cct_coll_name(bench_colls[ci]));
            table_rows += strncmp(line, head, strlen(head)) == 0;
        }
        geomean |= strstr(line, "geometric-mean speed-up over NCCL's default") != NULL;
    }
    fclose(out);
    assert_int_equal(table_rows, rows);
    assert_true(geomean);
    cct_store_close(st);
    store_test_rmdir(dir);
    cct_plan_destroy(&p);
    cct_table_destroy(&t);
}

int main(void)
{
    if (!fixture_mirror())
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_plan_argmin),
                                       cmocka_unit_test(test_plan_handwritten),
                                       cmocka_unit_test(test_report_modelless)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
