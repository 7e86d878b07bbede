/*
 * test_plugin_select.c - the plugin's pure decision code, linked directly (no dlopen):
 * applying a choice to synthetic cost tables (src/plugin/plugin_select.c), NCCL's own
 * argmin, the v1/v2 admissibility rules of NCCL 2.19-2.21, and the environment parsers
 * (NCCL_ALGO/NCCL_PROTO with NCCL's list syntax, CCLTUNE_FORCE) of plugin_env.c, and the
 * search indexes of plugin_index.c (rules by size, sections by shape) against the table's
 * reference lookups.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

#define NA 7
#define NP 3

static void fill(float *c)
{
    for (int i = 0; i < NA * NP; i++)
        c[i] = 5.0f + (float)i;
}

static void test_apply_sets_only_the_entry(void **state)
{
    (void)state;
    float c[NA * NP], before[NA * NP];
    fill(c);
    memcpy(before, c, sizeof c);
    assert_int_equal(cct_select_apply(c, NA, NP, CCT_ALGO_RING, CCT_PROTO_LL, false),
                     CCT_OUT_OVERRIDDEN);
    for (int i = 0; i < NA * NP; i++)
        assert_true(i == CCT_ALGO_RING * NP + CCT_PROTO_LL ? c[i] == 0.0f : c[i] == before[i]);
    int a, p;
    cct_select_default(c, NA, NP, &a, &p);
    assert_int_equal(a, CCT_ALGO_RING);
    assert_int_equal(p, CCT_PROTO_LL);
}

static void test_apply_respects_ignored_and_bounds(void **state)
{
    (void)state;
    float c[NA * NP], before[NA * NP];
    fill(c);
    c[CCT_ALGO_TREE * NP + CCT_PROTO_SIMPLE] = -1.0f;
    c[CCT_ALGO_NVLS * NP + CCT_PROTO_SIMPLE] = -3.5f; /* NCCL skips any negative */
    c[CCT_ALGO_PAT * NP + CCT_PROTO_LL] = NAN;
    memcpy(before, c, sizeof c);
    assert_int_equal(cct_select_apply(c, NA, NP, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    assert_int_equal(cct_select_apply(c, NA, NP, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    assert_int_equal(cct_select_apply(c, NA, NP, CCT_ALGO_PAT, CCT_PROTO_LL, true),
                     CCT_OUT_IGNORED);
    assert_int_equal(cct_select_apply(c, 6, NP, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED); /* six algorithms before NCCL 2.23 */
    assert_int_equal(cct_select_apply(c, NA, 2, CCT_ALGO_RING, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    assert_int_equal(cct_select_apply(c, NA, NP, -1, 0, true), CCT_OUT_IGNORED);
    assert_int_equal(cct_select_apply(NULL, NA, NP, 0, 0, true), CCT_OUT_IGNORED);
    assert_int_equal(cct_select_apply(c, NA, NP, CCT_ALGO_RING, CCT_PROTO_LL128, false),
                     CCT_OUT_LL128);
    assert_memory_equal(c, before, sizeof c);
    /* the 0.0 entry of a one-rank communicator stays selectable */
    c[CCT_ALGO_RING * NP + CCT_PROTO_SIMPLE] = 0.0f;
    assert_int_equal(cct_select_apply(c, NA, NP, CCT_ALGO_RING, CCT_PROTO_SIMPLE, false),
                     CCT_OUT_OVERRIDDEN);
}

static void test_stride_follows_num_proto(void **state)
{
    (void)state;
    /* a future NCCL with four protocols: rows are four wide */
    float c[NA * 4];
    for (int i = 0; i < NA * 4; i++)
        c[i] = 1.0f + (float)i;
    assert_int_equal(cct_select_apply(c, NA, 4, CCT_ALGO_RING, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_OVERRIDDEN);
    assert_true(c[1 * 4 + 2] == 0.0f);
    assert_true(c[1 * 3 + 2] == 1.0f + 5.0f);
}

static void test_default_is_nccls_argmin(void **state)
{
    (void)state;
    float c[NA * NP];
    for (int i = 0; i < NA * NP; i++)
        c[i] = -1.0f;
    int a, p;
    cct_select_default(c, NA, NP, &a, &p);
    assert_int_equal(a, -1);
    assert_int_equal(p, -1);
    c[CCT_ALGO_RING * NP + CCT_PROTO_SIMPLE] = 7.0f;
    c[CCT_ALGO_TREE * NP + CCT_PROTO_LL] = 7.0f; /* tie: the first in scan order wins */
    c[CCT_ALGO_NVLS * NP + CCT_PROTO_SIMPLE] = -2.0f;
    cct_select_default(c, NA, NP, &a, &p);
    assert_int_equal(a, CCT_ALGO_TREE);
    assert_int_equal(p, CCT_PROTO_LL);
    cct_select_default(NULL, NA, NP, &a, &p);
    assert_int_equal(a, -1);
    int mask[7];
    cct_select_ignored_mask(c, NA, NP, mask, 7);
    assert_int_equal(mask[CCT_ALGO_TREE], (1 << CCT_PROTO_LL128) | (1 << CCT_PROTO_SIMPLE));
    assert_int_equal(mask[CCT_ALGO_NVLS], (1 << CCT_PROTO_LL) | (1 << CCT_PROTO_LL128));
    assert_int_equal(mask[CCT_ALGO_RING], 3);
}

static cct_v2_call v2_call(int version, int coll, int nnodes)
{
    cct_v2_call c = {version, nnodes, coll, 0, 0, NULL};
    return c;
}

static void test_v2_algorithms_per_collective(void **state)
{
    (void)state;
    cct_v2_call c = v2_call(22105, CCT_COLL_BROADCAST, 1);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_RING, CCT_PROTO_LL, true),
                     CCT_OUT_OVERRIDDEN);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_TREE, CCT_PROTO_LL, true), CCT_OUT_IGNORED);
    c.coll = CCT_COLL_ALLGATHER;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    c.collnet_support = 1;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_COLLNET_DIRECT, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_OVERRIDDEN);
    c.nccl_version = 21903; /* CollNetDirect allgather arrived in 2.20 */
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_COLLNET_DIRECT, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    c = v2_call(22105, CCT_COLL_ALLREDUCE, 1);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_COLLNET_CHAIN, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED); /* no CollNet support */
    c.collnet_support = 1;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_COLLNET_CHAIN, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_OVERRIDDEN);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_COLLNET_CHAIN, CCT_PROTO_LL, true),
                     CCT_OUT_IGNORED); /* CollNet is Simple only */
    c.coll = 7;                        /* not a collective the tuner handles */
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_RING, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
}

static void test_v2_nvls_rules(void **state)
{
    (void)state;
    cct_v2_call c = v2_call(22105, CCT_COLL_ALLREDUCE, 1);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
    c.nvls_support = 1;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_OVERRIDDEN);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS, CCT_PROTO_LL, true), CCT_OUT_IGNORED);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS_TREE, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED); /* NVLSTree needs several nodes */
    c.nnodes = 2;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS_TREE, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_OVERRIDDEN);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED); /* multi-node NVLS needs CollNet */
    c.collnet_support = 1;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_OVERRIDDEN);
    c.coll = CCT_COLL_ALLGATHER; /* single-node only for allgather/reducescatter */
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, true),
                     CCT_OUT_IGNORED);
}

static void test_v2_env_and_ll128(void **state)
{
    (void)state;
    cct_env_mask m;
    cct_env_mask_parse("Tree", "^LL128", &m);
    cct_v2_call c = v2_call(22105, CCT_COLL_ALLREDUCE, 1);
    c.env = &m;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_TREE, CCT_PROTO_LL, true),
                     CCT_OUT_OVERRIDDEN);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_RING, CCT_PROTO_LL, true), CCT_OUT_IGNORED);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_TREE, CCT_PROTO_LL128, true),
                     CCT_OUT_IGNORED);
    c.env = NULL;
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_TREE, CCT_PROTO_LL128, false), CCT_OUT_LL128);
    assert_int_equal(cct_select_check_v2(&c, CCT_ALGO_TREE, CCT_PROTO_LL128, true),
                     CCT_OUT_OVERRIDDEN);
}

static void expect_algos(const char *text, const char *want /* "1010001" */)
{
    cct_env_mask m;
    cct_env_mask_parse(text, NULL, &m);
    for (int a = 0; a < CCT_NUM_ALGOS; a++)
        assert_int_equal(m.algo[a], want[a] == '1');
    for (int p = 0; p < CCT_NUM_PROTOS; p++)
        assert_true(m.proto[p]);
}

static void test_nccl_list_syntax(void **state)
{
    (void)state;
    expect_algos("Ring", "0100000");
    expect_algos("ring,TREE", "1100000");
    expect_algos("^Ring", "1011111");
    expect_algos("^", "1111111");
    expect_algos("", "0000000");            /* NCCL enables nothing either */
    expect_algos("Ring,,Tree,", "1100000"); /* empty tokens skipped */
    expect_algos("Ring,Bogus", "0100000");  /* unknown names ignored */
    expect_algos(" Ring", "0000000");       /* no trimming, like strtok on "," */
    expect_algos("CollNetDirect,nvlstree", "0010010");
    expect_algos("Collnet", "0000000"); /* exact names only */
    expect_algos("^NVLS,NVLSTree", "1111001");
    cct_env_mask m;
    cct_env_mask_parse(NULL, "LL,Simple", &m);
    assert_false(m.algo_set);
    assert_true(m.proto_set);
    assert_true(m.proto[CCT_PROTO_LL]);
    assert_false(m.proto[CCT_PROTO_LL128]);
    assert_true(m.proto[CCT_PROTO_SIMPLE]);
    cct_env_mask_parse(NULL, "^ll128", &m);
    assert_true(m.proto[CCT_PROTO_LL]);
    assert_false(m.proto[CCT_PROTO_LL128]);
    for (int a = 0; a < CCT_NUM_ALGOS; a++)
        assert_true(m.algo[a]);
}

static void test_force_syntax(void **state)
{
    (void)state;
    cct_force f;
    cct_error err;
    assert_int_equal(cct_force_parse("ring/ll/2", &f, &err), CCT_OK);
    assert_int_equal(f.algo, CCT_ALGO_RING);
    assert_int_equal(f.proto, CCT_PROTO_LL);
    assert_int_equal(f.channels, 2);
    assert_int_equal(cct_force_parse("Tree/Simple", &f, &err), CCT_OK);
    assert_int_equal(f.algo, CCT_ALGO_TREE);
    assert_int_equal(f.proto, CCT_PROTO_SIMPLE);
    assert_int_equal(f.channels, 0);
    assert_int_equal(cct_force_parse("nvls_tree/simple/64", &f, &err), CCT_OK);
    assert_int_equal(f.algo, CCT_ALGO_NVLS_TREE);
    assert_int_equal(f.chunk, 0);
    assert_int_equal(cct_force_parse("ring/simple/0/256K", &f, &err), CCT_OK);
    assert_int_equal(f.channels, 0);
    assert_int_equal(f.chunk, 262144);
    /* NCCL's own chunk, spelled as `search --chunk` spells it */
    assert_int_equal(cct_force_parse("ring/simple/2/nccl", &f, &err), CCT_OK);
    assert_int_equal(f.channels, 2);
    assert_int_equal(f.chunk, 0);
    static const char *bad[] = {
        "ring",           "ring/",      "/ll",          "rung/ll",        "ring/ll12",
        "ring/ll/-1",     "ring/ll/65", "ring/ll/2x",   "ring/ll/",       "",
        "ring/ll/2/3",    "ring/ll/2/", "ring/ll/2/2G", "ring/ll/2/4K/1", "ring/ll/2/NCCL",
        "ring/ll/2/nccl/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cct_error_clear(&err);
        assert_int_not_equal(cct_force_parse(bad[i], &f, &err), CCT_OK);
        assert_non_null(strstr(err.msg, "CCLTUNE_FORCE"));
    }
    assert_int_not_equal(cct_force_parse(NULL, &f, &err), CCT_OK);
}

static void test_env_flag(void **state)
{
    (void)state;
    static const char *yes[] = {"1", "true", "YES", "On"};
    static const char *no[] = {"0", "false", "", "2", "enable"};
    for (size_t i = 0; i < 4; i++) {
        setenv("CCT_TEST_FLAG", yes[i], 1);
        assert_true(cct_env_flag("CCT_TEST_FLAG"));
    }
    for (size_t i = 0; i < 5; i++) {
        setenv("CCT_TEST_FLAG", no[i], 1);
        assert_false(cct_env_flag("CCT_TEST_FLAG"));
    }
    unsetenv("CCT_TEST_FLAG");
    assert_false(cct_env_flag("CCT_TEST_FLAG"));
}

/* The plugin's search index answers exactly like cct_section_lookup, at every band edge,
 * bucket edge and random size, for sections of 1 to 5,000 rules with edges anywhere in
 * 0 .. 2^64. */
static uint64_t rng = 88172645463325252ull;
static uint64_t next_rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check_size(const cct_band_index *ix, const cct_section *s, uint64_t bytes)
{
    const cct_rule *want = cct_section_lookup(s, bytes == UINT64_MAX ? bytes - 1 : bytes);
    const cct_rule *got = cct_band_lookup(ix, bytes);
    if (want != got)
        fail_msg("size %llu: index says rule %td, reference %td", (unsigned long long)bytes,
                 got ? got - s->rules : -1, want ? want - s->rules : -1);
}

static void test_band_index_matches_reference(void **state)
{
    (void)state;
    static const int counts[] = {1, 2, 3, 4, 5, 7, 17, 64, 256, 257, 300, 5000};
    for (int round = 0; round < 120; round++) {
        cct_section s;
        memset(&s, 0, sizeof s);
        int n = counts[round % 12];
        uint64_t lo = 0;
        for (int i = 0; i < n; i++) {
            cct_rule r = cct_rule_blank();
            r.min_bytes = lo;
            if (i + 1 == n) {
                r.max_bytes = CCT_BYTES_INF;
            } else {
                unsigned shift = (unsigned)(next_rnd() % 64);
                uint64_t step = 1 + (next_rnd() >> shift) / (uint64_t)(n + 1);
                if (round % 3 == 0)
                    step = 1 + next_rnd() % 3; /* dense small bands */
                r.max_bytes = lo + step;
                if (r.max_bytes <= lo || r.max_bytes == CCT_BYTES_INF) {
                    r.max_bytes = CCT_BYTES_INF; /* ran out of numbers: close here */
                    n = i + 1;
                }
            }
            assert_int_equal(cct_section_add_rule(&s, &r), CCT_OK);
            lo = r.max_bytes;
        }
        cct_band_index ix;
        assert_int_equal(cct_band_index_build(&s, &ix), CCT_OK);
        for (size_t i = 0; i < s.n_rules; i++) {
            uint64_t e = s.rules[i].min_bytes;
            check_size(&ix, &s, e);
            if (e)
                check_size(&ix, &s, e - 1);
            check_size(&ix, &s, e + 1);
        }
        for (unsigned b = 0; b < 64; b++) {
            uint64_t p = (uint64_t)1 << b;
            for (uint64_t q = p > 4 ? p - 4 : 0; q < p + 4 && q >= (p > 4 ? p - 4 : 0); q++)
                check_size(&ix, &s, q);
            check_size(&ix, &s, p + (p >> 2));
            check_size(&ix, &s, p + (p >> 1) + (p >> 2) - 1);
        }
        for (int i = 0; i < 20000; i++)
            check_size(&ix, &s, next_rnd() >> (next_rnd() % 64));
        check_size(&ix, &s, UINT64_MAX);
        check_size(&ix, &s, UINT64_MAX - 1);
        cct_band_index_free(&ix);
        free(s.rules);
    }
    /* an unusable section answers NULL */
    cct_section empty;
    memset(&empty, 0, sizeof empty);
    cct_band_index ix;
    assert_int_equal(cct_band_index_build(&empty, &ix), CCT_OK);
    assert_null(cct_band_lookup(&ix, 42));
    cct_band_index_free(&ix);
    for (uint64_t v = 0; v < 70000; v++) /* buckets are monotone and contiguous */
        assert_true(cct_band_bucket(v + 1) - cct_band_bucket(v) <= 1);
    assert_int_equal(cct_band_bucket(UINT64_MAX), CCT_BAND_BUCKETS - 1);
}

/* The per-process shape index (plugin_index.c) and a context's section choice against the
 * reference, cct_table_find_section + cct_section_lookup, on random tables of many shapes:
 * sections with and without pipe_ops/reg_buff in random file order, duplicates included
 * (the first in file order wins), every key a call can bring, absent shapes too. */
static void test_shape_index_matches_reference(void **state)
{
    (void)state;
    static const int ranks[] = {2, 3, 8, 1 << 20}, nodes[] = {1, 2};
    static const int pipes[] = {CCT_ANY, 1, 2, 3}, regs[] = {CCT_ANY, 0, 1};
    for (int round = 0; round < 40; round++) {
        static cct_pstate ps; /* large: not on the stack */
        memset(&ps, 0, sizeof ps);
        cct_table_init(&ps.table);
        ps.table.ll128_allowed = true;
        int n_sections = 1 + (int)(next_rnd() % 120);
        for (int i = 0; i < n_sections; i++) {
            cct_section *sec = cct_table_add_section(&ps.table, (int)(next_rnd() % CCT_NUM_COLLS),
                                                     ranks[next_rnd() % 3], nodes[next_rnd() % 2]);
            assert_non_null(sec);
            sec->pipe_ops = pipes[next_rnd() % 4];
            sec->reg_buff = regs[next_rnd() % 3];
            int n_rules = 1 + (int)(next_rnd() % 3);
            for (int k = 0; k < n_rules; k++) {
                cct_rule r = cct_rule_blank();
                r.min_bytes = k == 0 ? 0 : (uint64_t)1 << (10 * k);
                r.max_bytes = k + 1 == n_rules ? CCT_BYTES_INF : (uint64_t)1 << (10 * (k + 1));
                r.algo = (int)(next_rnd() % 2) ? CCT_ALGO_RING : CCT_ALGO_TREE;
                r.proto = (int)(next_rnd() % 2) ? CCT_PROTO_SIMPLE : CCT_PROTO_LL;
                r.channels = 1 + (int)(next_rnd() % 64); /* tells sections apart */
                assert_int_equal(cct_section_add_rule(sec, &r), CCT_OK);
            }
        }
        assert_int_equal(cct_pstate_index_table(&ps), CCT_OK);
        ps.status = CCT_TABLE_OK;
        ps.nccl_version = 22809;
        cct_env_mask_parse(NULL, NULL, &ps.env);
        cct_gpu_facts g = {.known = true, .cc = 90};
        snprintf(g.name, sizeof g.name, "NVIDIA H200");
        for (int ri = 0; ri < 4; ri++) {
            for (int ni = 0; ni < 2; ni++) {
                bool fail = false;
                cct_pctx *ctx = cct_ctx_create_with(&ps, &g, 5, 1, (size_t)ranks[ri],
                                                    (size_t)nodes[ni], NULL, &fail);
                assert_non_null(ctx);
                for (int coll = -1; coll <= CCT_NUM_COLLS; coll++) {
                    for (int pipe = -1; pipe <= 4; pipe++) {
                        for (int reg = -1; reg <= 1; reg++) {
                            for (uint64_t bytes = 1; bytes < ((uint64_t)1 << 40); bytes <<= 5) {
                                const cct_section *want_s = cct_table_find_section(
                                    &ps.table, coll, ranks[ri], nodes[ni], pipe, reg);
                                const cct_rule *want =
                                    want_s ? cct_section_lookup(want_s, bytes) : NULL;
                                float c[NA * NP];
                                fill(c);
                                int nch = 0;
                                cct_decision d = cct_ctx_decide_costs(ctx, coll, bytes, pipe, reg,
                                                                      c, NA, NP, &nch);
                                bool same = want ? d.algo == want->algo && d.proto == want->proto &&
                                                       d.channels == want->channels
                                                 : d.algo == -1;
                                if (!same)
                                    fail_msg("round %d ranks %d nodes %d coll %d pipe_ops %d "
                                             "reg_buff %d bytes %llu: chose %d/%d/%d, reference "
                                             "%d/%d/%d",
                                             round, ranks[ri], nodes[ni], coll, pipe, reg,
                                             (unsigned long long)bytes, d.algo, d.proto, d.channels,
                                             want ? want->algo : -1, want ? want->proto : -1,
                                             want ? want->channels : 0);
                            }
                        }
                    }
                }
                assert_true(cct_ctx_destroy(ctx));
                assert_false(cct_ctx_destroy(ctx)); /* poisoned: refused, nothing freed twice */
            }
        }
        cct_pstate_free_table(&ps);
    }
}

static void test_outcome_names(void **state)
{
    (void)state;
    for (int i = 0; i < CCT_NUM_OUTCOMES; i++)
        assert_string_not_equal(cct_outcome_name(i), "?");
    assert_string_equal(cct_outcome_name(CCT_NUM_OUTCOMES), "?");
    assert_true(cct_warn_first(CCT_WARN_TABLE));
    assert_false(cct_warn_first(CCT_WARN_TABLE));
    assert_true(cct_warn_first(CCT_WARN_FINGERPRINT + CCT_FP_GPU));
    assert_false(cct_warn_first(CCT_NUM_WARN_TOPICS));
    cct_warn_reset();
    assert_true(cct_warn_first(CCT_WARN_TABLE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_sets_only_the_entry),
        cmocka_unit_test(test_apply_respects_ignored_and_bounds),
        cmocka_unit_test(test_stride_follows_num_proto),
        cmocka_unit_test(test_default_is_nccls_argmin),
        cmocka_unit_test(test_v2_algorithms_per_collective),
        cmocka_unit_test(test_v2_nvls_rules),
        cmocka_unit_test(test_v2_env_and_ll128),
        cmocka_unit_test(test_nccl_list_syntax),
        cmocka_unit_test(test_force_syntax),
        cmocka_unit_test(test_env_flag),
        cmocka_unit_test(test_band_index_matches_reference),
        cmocka_unit_test(test_shape_index_matches_reference),
        cmocka_unit_test(test_outcome_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
