/*
 * test_search_space.c - the search space, the plan and the timing statistics
 * (src/search/cct_space.c, cct_stats.c).
 *
 * Planning is what decides how many hours a search takes and whether a resumed run is the
 * same experiment, so the tests pin down: which configurations each design produces (the
 * factorial design keeps the aligned NCCL-channel reference of every side measurement),
 * sessions per buffer size, sizes (grid, off-grid midpoints, extras; rounding to whole
 * elements per rank), the mirrored cycle order, the plan hash, flag errors that name the
 * flag, and the statistics (type-7 percentiles, CV) on hand-computed cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cct_space.h"
#include "cct_stats.h"

static cct_space space_for(int ranks, int nodes)
{
    cct_space s;
    cct_space_defaults(&s);
    s.ranks = ranks;
    s.nodes = nodes;
    return s;
}

static size_t count_configs(const cct_plan *p, int algo, int channels, unsigned align,
                            uint64_t buffsize)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_configs; i++) {
        const cct_config *c = &p->configs[i];
        n += c->algo == algo && c->channels == channels && c->align == align &&
             c->buffsize == buffsize;
    }
    return n;
}

static void test_default_plan(void **state)
{
    (void)state;
    cct_space s = space_for(4, 4);
    cct_plan p;
    cct_error err;
    assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
    /* NCCL's default with forced LL/Simple; then LL128 in an unlocked session of its own */
    assert_int_equal(p.n_sessions, 2);
    assert_true(p.sessions[0].baseline);
    assert_false(p.sessions[0].unlock);
    /* 5 baselines + 5 collectives x (ring, tree) x (ll, simple) x channels {nccl,1,2,4,max},
     * + PAT/Simple for allgather and reducescatter (one rank per node: NCCL offers it) */
    assert_int_equal(p.sessions[0].n_configs, 5 + 5 * 2 * 2 * 5 + 2 * 5);
    assert_false(p.sessions[1].baseline);
    assert_true(p.sessions[1].unlock);
    assert_int_equal(p.sessions[1].n_configs, 5 * 2 * 1 * 5);
    for (size_t k = 0; k < p.sessions[1].n_configs; k++)
        assert_int_equal(p.configs[p.sessions[1].first_config + k].proto, CCT_PROTO_LL128);
    for (size_t k = 0; k < p.sessions[0].n_configs; k++)
        assert_int_not_equal(p.configs[p.sessions[0].first_config + k].proto, CCT_PROTO_LL128);
    assert_int_equal(p.n_configs, 5 + 150 + 10);
    for (size_t i = 0; i < p.n_configs; i++) {
        assert_int_equal(p.configs[i].ranks, 4);
        assert_int_equal(p.configs[i].nodes, 4);
    }
    /* sizes ascending, unique, 1 KiB .. 256 MiB with 1.5x midpoints every other octave */
    assert_int_equal(p.sizes[0], 1024);
    assert_int_equal(p.sizes[p.n_sizes - 1], 256u << 20);
    for (size_t i = 1; i < p.n_sizes; i++)
        assert_true(p.sizes[i] > p.sizes[i - 1]);
    bool has_3k = false, has_6k = false;
    for (size_t i = 0; i < p.n_sizes; i++) {
        has_3k |= p.sizes[i] == 3072;
        has_6k |= p.sizes[i] == 6144;
    }
    assert_true(has_3k);
    assert_false(has_6k);
    cct_plan_destroy(&p);
}

static void test_factorial_keeps_references(void **state)
{
    (void)state;
    cct_space s = space_for(2, 2);
    cct_error err;
    assert_int_equal(cct_space_parse(&s, "--channels", "1,2", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--align", "0,4,8", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--buffsize", "default,1M", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--colls", "allreduce", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--algos", "ring", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--protos", "ll,simple", &err), CCT_OK);
    cct_plan p;
    assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
    assert_int_equal(p.n_sessions, 2); /* default buffers (with NCCL's default), 1 MiB */
    /* the baseline, then per protocol channels 1,2 + the NCCL-channel reference + aligns 4, 8 */
    assert_int_equal(p.sessions[0].n_configs, 1 + 2 * (2 + 1 + 2));
    assert_int_equal(count_configs(&p, CCT_ALGO_RING, 0, 0, 0), 2);
    assert_int_equal(count_configs(&p, CCT_ALGO_RING, 0, 4, 0), 2);
    assert_int_equal(count_configs(&p, CCT_ALGO_RING, 1, 4, 0), 0); /* not crossed */
    /* the 1 MiB session only measures the reference point of each protocol */
    assert_int_equal(p.sessions[1].n_configs, 2);
    assert_int_equal(p.sessions[1].buffsize, 1u << 20);
    assert_false(p.sessions[1].baseline);
    assert_int_equal(count_configs(&p, CCT_ALGO_RING, 0, 0, 1u << 20), 2);
    cct_plan_destroy(&p);

    assert_int_equal(cct_space_parse(&s, "--cross", "full", &err), CCT_OK);
    assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
    /* full: channels {1,2} x aligns {0,4,8} x protocols 2, in both buffer sessions, and the
     * baseline at every alignment in the first */
    assert_int_equal(p.sessions[0].n_configs, 3 + 2 * 2 * 3);
    assert_int_equal(p.sessions[1].n_configs, 2 * 2 * 3);
    cct_plan_destroy(&p);
}

static void test_plan_hash(void **state)
{
    (void)state;
    cct_space a = space_for(2, 2), b = space_for(2, 2);
    cct_plan pa, pb;
    cct_error err;
    assert_int_equal(cct_plan_build(&a, &pa, &err), CCT_OK);
    assert_int_equal(cct_plan_build(&b, &pb, &err), CCT_OK);
    assert_string_equal(pa.hash, pb.hash);
    cct_plan_destroy(&pb);
    assert_int_equal(cct_space_parse(&b, "--max-bytes", "128M", &err), CCT_OK);
    assert_int_equal(cct_plan_build(&b, &pb, &err), CCT_OK);
    assert_string_not_equal(pa.hash, pb.hash);
    cct_plan_destroy(&pb);
    b = space_for(4, 4);
    assert_int_equal(cct_plan_build(&b, &pb, &err), CCT_OK);
    assert_string_not_equal(pa.hash, pb.hash);
    cct_plan_destroy(&pa);
    cct_plan_destroy(&pb);
}

static void test_effective_bytes(void **state)
{
    (void)state;
    cct_config c;
    memset(&c, 0, sizeof c);
    c.coll = CCT_COLL_ALLGATHER;
    c.ranks = 3;
    c.dtype = CCT_DTYPE_FLOAT;
    /* whole float elements per rank: multiples of 12 bytes, at least 12 */
    assert_int_equal(cct_plan_effective_bytes(&c, 1024), 1020);
    assert_int_equal(cct_plan_effective_bytes(&c, 5), 12);
    assert_int_equal(cct_plan_nccl_count(&c, 1020), 85);
    c.coll = CCT_COLL_ALLREDUCE;
    assert_int_equal(cct_plan_effective_bytes(&c, 1022), 1020);
    assert_int_equal(cct_plan_nccl_count(&c, 1020), 255);
    c.dtype = CCT_DTYPE_BF16;
    assert_int_equal(cct_plan_effective_bytes(&c, 1023), 1022);
    assert_int_equal(cct_plan_nccl_count(&c, 1022), 511);
}

static void test_mirrored_order(void **state)
{
    (void)state;
    enum { N = 5, PAIRS = 400 };
    size_t even[N], odd[N], again[N];
    size_t first[N] = {0};
    for (int pair = 0; pair < PAIRS; pair++) {
        cct_cycle_order(even, N, 2 * pair, 42);
        cct_cycle_order(odd, N, 2 * pair + 1, 42);
        bool seen[N] = {false};
        for (size_t pos = 0; pos < N; pos++) {
            assert_true(even[pos] < N);
            assert_false(seen[even[pos]]); /* a permutation */
            seen[even[pos]] = true;
            assert_int_equal(odd[pos], even[N - 1 - pos]); /* the odd cycle mirrors it */
        }
        /* over the pair every configuration's mean position is the same */
        for (size_t k = 0; k < N; k++) {
            size_t sum = 0;
            for (size_t pos = 0; pos < N; pos++)
                sum += (even[pos] == k) * pos + (odd[pos] == k) * pos;
            assert_int_equal(sum, N - 1);
        }
        first[even[0]]++;
        cct_cycle_order(again, N, 2 * pair, 42); /* deterministic */
        assert_memory_equal(again, even, sizeof even);
    }
    /* pairs draw their own permutations: every configuration leads some of them (about
     * PAIRS / N = 80 each; 40 is ~5 standard deviations below) */
    for (size_t k = 0; k < N; k++)
        assert_true(first[k] > 40);
    cct_cycle_order(again, N, 0, 43);
    size_t other = 0;
    for (int pair = 0; pair < 8; pair++) {
        cct_cycle_order(even, N, 2 * pair, 42);
        cct_cycle_order(again, N, 2 * pair, 43);
        other += memcmp(even, again, sizeof even) != 0;
    }
    assert_true(other > 0); /* another seed, other orders */
}

/* Values from an independent implementation of the same test (same formula, Python). */
static void test_mann_whitney(void **state)
{
    (void)state;
    const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    assert_float_equal(cct_mann_whitney_p(a, 3, b, 3), 0.0808555983700523, 1e-12);
    assert_float_equal(cct_mann_whitney_p(b, 3, a, 3), 0.0808555983700523, 1e-12); /* two-sided */
    const double c[] = {1, 2, 2, 3}, d[] = {2, 3, 3, 4, 5}; /* ties across the samples */
    assert_float_equal(cct_mann_whitney_p(c, 4, d, 5), 0.09934224785346527, 1e-12);
    const double e[] = {500, 501, 502, 503, 504, 505}, f[] = {520, 521, 522, 523, 524, 525};
    assert_float_equal(cct_mann_whitney_p(e, 6, f, 6), 0.005074868097940257, 1e-12);
    const double same[] = {5, 5, 5};
    assert_float_equal(cct_mann_whitney_p(same, 3, same, 3), 1.0, 0.0); /* all tied */
    assert_float_equal(cct_mann_whitney_p(a, 0, b, 3), 1.0, 0.0);       /* nothing to compare */
    assert_true(cct_mann_whitney_p(e, 6, e, 6) > 0.9);                  /* the same samples */
}

static void expect_flag_error(const char *flag, const char *value, const char *needle)
{
    cct_space s = space_for(2, 2);
    cct_error err;
    cct_error_clear(&err);
    assert_int_equal(cct_space_parse(&s, flag, value, &err), CCT_EINVAL);
    if (!strstr(err.msg, needle) || !strstr(err.msg, flag))
        fail_msg("%s %s: message '%s' lacks '%s' or the flag", flag, value, err.msg, needle);
}

/* PAT configurations of a plan for coll (any protocol when proto < 0). */
static size_t count_pat(const cct_plan *p, int coll, int proto)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_configs; i++) {
        const cct_config *c = &p->configs[i];
        n += c->algo == CCT_ALGO_PAT && c->coll == coll && (proto < 0 || c->proto == proto);
    }
    return n;
}

/* The default space forces PAT exactly where NCCL offers it: allgather and reducescatter,
 * Simple, one rank per node; --algos naming pat forces it everywhere asked (what NCCL then
 * ignores is recorded unsupported). */
static void test_pat_where_offered(void **state)
{
    (void)state;
    static const struct {
        int ranks, nodes;
        bool offered;
    } shapes[] = {{4, 4, true},  {2, 2, true},  {8, 8, true}, {4, 1, false},
                  {8, 2, false}, {2, 1, false}, {1, 1, false}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        cct_space s = space_for(shapes[i].ranks, shapes[i].nodes);
        cct_plan p;
        cct_error err;
        assert_int_equal(cct_space_parse(&s, "--pipe-ops", "1,2", &err), CCT_OK);
        assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
        for (int c = 0; c < CCT_NUM_COLLS; c++) {
            bool has =
                shapes[i].offered && (c == CCT_COLL_ALLGATHER || c == CCT_COLL_REDUCESCATTER);
            /* channels {nccl,1,2,4,max} plain, and one grouped (pipe-ops 2) reference */
            assert_int_equal(count_pat(&p, c, CCT_PROTO_SIMPLE), has ? 5 + 1 : 0);
            assert_int_equal(count_pat(&p, c, -1), count_pat(&p, c, CCT_PROTO_SIMPLE));
            assert_int_equal(cct_space_forces(&s, c, CCT_ALGO_PAT, CCT_PROTO_SIMPLE), has);
            assert_false(cct_space_forces(&s, c, CCT_ALGO_PAT, CCT_PROTO_LL));
            assert_true(cct_space_forces(&s, c, CCT_ALGO_TREE, CCT_PROTO_LL));
        }
        cct_plan_destroy(&p);

        /* named: forced wherever asked, whatever the shape */
        s = space_for(shapes[i].ranks, shapes[i].nodes);
        assert_int_equal(cct_space_parse(&s, "--algos", "ring,pat", &err), CCT_OK);
        assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
        for (int c = 0; c < CCT_NUM_COLLS; c++)
            assert_int_equal(count_pat(&p, c, -1), 3 * 5);
        cct_plan_destroy(&p);
        s = space_for(shapes[i].ranks, shapes[i].nodes);
        assert_int_equal(cct_space_parse(&s, "--algos", "ring,tree", &err), CCT_OK);
        assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
        for (int c = 0; c < CCT_NUM_COLLS; c++)
            assert_int_equal(count_pat(&p, c, -1), 0);
        cct_plan_destroy(&p);
    }
    /* the default with PAT differs from ring,tree only by PAT: another plan hash */
    cct_space a = space_for(4, 4), b = space_for(4, 4);
    cct_plan pa, pb;
    cct_error err;
    assert_int_equal(cct_space_parse(&b, "--algos", "ring,tree", &err), CCT_OK);
    assert_int_equal(cct_plan_build(&a, &pa, &err), CCT_OK);
    assert_int_equal(cct_plan_build(&b, &pb, &err), CCT_OK);
    assert_int_equal(pa.n_configs, pb.n_configs + 2 * 5);
    assert_string_not_equal(pa.hash, pb.hash);
    cct_plan_destroy(&pa);
    cct_plan_destroy(&pb);
}

static void test_flag_errors(void **state)
{
    (void)state;
    expect_flag_error("--colls", "allreduce,alltoall", "'alltoall'");
    expect_flag_error("--algos", "rnig", "'rnig'");
    expect_flag_error("--algos", "pat,", "empty item");
    expect_flag_error("--algos", "pat_simple", "'pat_simple'");
    expect_flag_error("--algos", "", "empty");
    expect_flag_error("--algos", "ring,,pat", "empty item");
    expect_flag_error("--protos", "ll256", "'ll256'");
    expect_flag_error("--channels", "0", "'0'");
    expect_flag_error("--channels", "65", "'65'");
    expect_flag_error("--channels", "-1", "'-1'");
    expect_flag_error("--buffsize", "1K", "4 KiB");
    expect_flag_error("--buffsize", "lots", "'lots'");
    expect_flag_error("--align", "4096", "'4096'");
    expect_flag_error("--align", "4,x", "'x'");
    expect_flag_error("--dtype", "fp8", "'fp8'");
    expect_flag_error("--min-bytes", "0", "'0'");
    expect_flag_error("--max-bytes", "32G", "16 GiB");
    expect_flag_error("--factor", "1", "'1'");
    expect_flag_error("--cross", "partial", "'partial'");
    expect_flag_error("--colls", "", "empty");

    cct_space s = space_for(2, 2);
    cct_error err;
    assert_int_equal(cct_space_parse(&s, "--align", "2", &err), CCT_OK);
    assert_int_equal(cct_space_check(&s, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "--align"));
    s = space_for(2, 2);
    assert_int_equal(cct_space_parse(&s, "--min-bytes", "1M", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--max-bytes", "1K", &err), CCT_OK);
    assert_int_equal(cct_space_check(&s, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "--min-bytes"));
}

static void test_stats(void **state)
{
    (void)state;
    double x[] = {4.0, 1.0, 3.0, 2.0, 5.0};
    cct_stats st;
    assert_int_equal(cct_stats_compute(x, 5, &st), CCT_OK);
    assert_int_equal(st.n, 5);
    assert_float_equal(st.median_us, 3.0, 1e-12);
    assert_float_equal(st.p95_us, 4.8, 1e-12); /* 1 + 0.95 * 4 = position 3.8 */
    assert_float_equal(st.min_us, 1.0, 1e-12);
    assert_float_equal(st.max_us, 5.0, 1e-12);
    assert_float_equal(st.mean_us, 3.0, 1e-12);
    assert_float_equal(st.cv, sqrt(2.5) / 3.0, 1e-12);
    assert_float_equal(x[0], 4.0, 0.0); /* input order untouched */
    double even[] = {10.0, 20.0, 30.0, 40.0};
    assert_int_equal(cct_stats_compute(even, 4, &st), CCT_OK);
    assert_float_equal(st.median_us, 25.0, 1e-12);
    double one = 7.0;
    assert_int_equal(cct_stats_compute(&one, 1, &st), CCT_OK);
    assert_float_equal(st.cv, 0.0, 0.0);
    assert_float_equal(st.p95_us, 7.0, 0.0);
    double bad[] = {1.0, NAN};
    assert_int_equal(cct_stats_compute(bad, 2, &st), CCT_EINVAL);
    double neg[] = {-1.0};
    assert_int_equal(cct_stats_compute(neg, 1, &st), CCT_EINVAL);
    assert_int_equal(cct_stats_compute(x, 0, &st), CCT_EINVAL);
}

static void test_estimate_and_describe(void **state)
{
    (void)state;
    cct_space s = space_for(2, 2);
    cct_error err;
    assert_int_equal(cct_space_parse(&s, "--colls", "allreduce", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--min-bytes", "1M", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--max-bytes", "1M", &err), CCT_OK);
    s.baseline = false;
    cct_plan p;
    assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
    assert_int_equal(p.n_sizes, 1);
    /* 1 MiB at 40 us + 2 GB/s = 564.288 us per call; a 2000 us cycle needs 4 calls */
    cct_estimate e = cct_plan_estimate(&p, 1, 4, 2000.0, 40.0, 2.0);
    assert_int_equal(e.points, p.n_configs);
    assert_int_equal(e.calls, p.n_configs * (2 + 1 + 4 * 4));
    assert_float_equal(e.seconds, (double)e.calls * 564.288e-6, 1e-9);
    char line[256];
    cct_config_describe(&p.configs[0], line, sizeof line);
    assert_string_equal(
        line, "allreduce ring/ll ch=nccl buf=default ll=default ll128=default align=0 float");
    cct_plan_destroy(&p);

    /* with 4-op groups the grouped configurations count 4 collectives per call: 2257.152 us
     * per group, 1 group fills a 2000 us cycle */
    assert_int_equal(cct_space_parse(&s, "--pipe-ops", "1,4", &err), CCT_OK);
    assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
    size_t plain = 0, grouped = 0;
    for (size_t k = 0; k < p.n_configs; k++)
        *(cct_config_pipe_ops(&p.configs[k]) > 1 ? &grouped : &plain) += 1;
    assert_true(grouped > 0);
    e = cct_plan_estimate(&p, 1, 4, 2000.0, 40.0, 2.0);
    assert_int_equal(e.points, p.n_configs);
    assert_int_equal(e.calls, plain * (2 + 1 + 4 * 4) + grouped * 4 * (2 + 1 + 4 * 1));
    assert_float_equal(e.seconds,
                       (double)plain * 19 * 564.288e-6 + (double)grouped * 7 * 2257.152e-6, 1e-9);
    cct_plan_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_plan),
        cmocka_unit_test(test_factorial_keeps_references),
        cmocka_unit_test(test_plan_hash),
        cmocka_unit_test(test_effective_bytes),
        cmocka_unit_test(test_mirrored_order),
        cmocka_unit_test(test_mann_whitney),
        cmocka_unit_test(test_pat_where_offered),
        cmocka_unit_test(test_flag_errors),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_estimate_and_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
