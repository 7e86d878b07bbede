/*
 * test_call_modes.c - grouped collectives (--pipe-ops) and registered buffers (--regbuff)
 * from the plan to the table, without a GPU.
 *
 * Plan: the default plan (and so every existing plan hash) is unchanged; call modes add
 * their own baseline and algorithm x protocol configurations in the plain calls' session,
 * LL128 in the unlocked one; bad values name the flag.  Fit: a mode whose choices differ
 * from the plain section gets a section keyed by what NCCL passed its tuner, at the bytes it
 * passed; a mode that decides the same, or whose key NCCL reports as plain, gets none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide.h"
#include "cct_space.h"
#include "fit_test_util.h"

static cct_space space_for(int ranks, int nodes)
{
    cct_space s;
    cct_space_defaults(&s);
    s.ranks = ranks;
    s.nodes = nodes;
    return s;
}

static void test_default_plan_unchanged(void **state)
{
    (void)state;
    cct_space a = space_for(2, 2), b = space_for(2, 2);
    cct_error err;
    /* the defaults, given explicitly, are the same plan */
    assert_int_equal(cct_space_parse(&b, "--pipe-ops", "1", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&b, "--regbuff", "no", &err), CCT_OK);
    cct_plan pa, pb;
    assert_int_equal(cct_plan_build(&a, &pa, &err), CCT_OK);
    assert_int_equal(cct_plan_build(&b, &pb, &err), CCT_OK);
    assert_string_equal(pa.hash, pb.hash);
    for (size_t i = 0; i < pa.n_configs; i++) {
        assert_int_equal(cct_config_pipe_ops(&pa.configs[i]), 1);
        assert_false(pa.configs[i].reg_buff);
    }
    cct_plan_destroy(&pb);
    assert_int_equal(cct_space_parse(&b, "--pipe-ops", "1,4", &err), CCT_OK);
    assert_int_equal(cct_plan_build(&b, &pb, &err), CCT_OK);
    assert_string_not_equal(pa.hash, pb.hash);
    cct_plan_destroy(&pa);
    cct_plan_destroy(&pb);
}

static void test_modes_in_plan(void **state)
{
    (void)state;
    cct_space s = space_for(2, 2);
    cct_error err;
    assert_int_equal(cct_space_parse(&s, "--colls", "allreduce,allgather", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--pipe-ops", "1,4", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--regbuff", "no,yes", &err), CCT_OK);
    cct_plan p;
    assert_int_equal(cct_plan_build(&s, &p, &err), CCT_OK);
    assert_int_equal(p.n_sessions, 2);
    /* per collective and mode (4,no), (1,yes), (4,yes): a baseline, ring/tree x ll/simple in
     * the first session (and PAT/Simple for allgather: one rank per node), ring/tree x ll128 in
     * the unlocked one; all at NCCL's channels */
    size_t first[2] = {0, 0};
    for (size_t si = 0; si < 2; si++)
        for (size_t k = 0; k < p.sessions[si].n_configs; k++) {
            const cct_config *c = &p.configs[p.sessions[si].first_config + k];
            if (cct_config_pipe_ops(c) == 1 && !c->reg_buff)
                continue;
            first[si]++;
            assert_int_equal(c->channels, 0);
            assert_true(cct_config_pipe_ops(c) == 4 || c->reg_buff);
            assert_true(si == 1 ? c->proto == CCT_PROTO_LL128 : c->proto != CCT_PROTO_LL128);
        }
    assert_int_equal(first[0], 2 * 3 * (1 + 2 * 2) + 3);
    assert_int_equal(first[1], 2 * 3 * 2);
    char line[256];
    cct_config c = {0};
    c.coll = CCT_COLL_ALLREDUCE;
    c.algo = CCT_ALGO_RING;
    c.proto = CCT_PROTO_SIMPLE;
    c.pipe_ops = 4;
    c.reg_buff = true;
    assert_non_null(strstr(cct_config_describe(&c, line, sizeof line), " ops=4 reg"));
    cct_plan_destroy(&p);
}

static void expect_error(const char *flag, const char *value, const char *needle)
{
    cct_space s = space_for(2, 2);
    cct_error err;
    cct_error_clear(&err);
    assert_int_not_equal(cct_space_parse(&s, flag, value, &err), CCT_OK);
    assert_non_null(strstr(err.msg, flag));
    if (!strstr(err.msg, needle))
        fail_msg("%s %s: '%s' lacks '%s'", flag, value, err.msg, needle);
}

static void test_flag_errors(void **state)
{
    (void)state;
    expect_error("--pipe-ops", "0", "not a group size");
    expect_error("--pipe-ops", "17", "1..16");
    expect_error("--pipe-ops", "2x", "not a group size");
    expect_error("--pipe-ops", "-1", "not a group size");
    expect_error("--regbuff", "maybe", "not no or yes");
    expect_error("--regbuff", "", "empty");
}

/* Points of one mode: LL is fastest below `cross` bytes (as NCCL passes them), Simple above;
 * NCCL reported numPipeOps `key_ops`, regBuff `key_reg`, nBytes k x bytes. */
static size_t add_mode(cct_point *pts, size_t n, int pipe_ops, bool reg, int key_ops, int key_reg,
                       uint64_t cross)
{
    for (int i = 0; i < 12; i++) {
        uint64_t bytes = ft_size(1024, i);
        uint64_t passed = bytes * (uint64_t)(pipe_ops > 1 ? pipe_ops : 1);
        double beta_simple = 20.0, alpha_simple = 10.0;
        /* LL: alpha 5, and beta such that the lines cross at `cross` */
        double beta_ll = (double)cross / ((double)cross / (beta_simple * 1e3) + 5.0) / 1e3;
        int protos[2] = {CCT_PROTO_LL, CCT_PROTO_SIMPLE};
        for (int k = 0; k < 2; k++) {
            double t =
                k == 0 ? ft_line(5.0, beta_ll, passed) : ft_line(alpha_simple, beta_simple, passed);
            cct_point p = ft_point(CCT_ALGO_RING, protos[k], 0, bytes, t, 0.002);
            p.cfg.pipe_ops = pipe_ops > 1 ? pipe_ops : 0;
            p.cfg.reg_buff = reg;
            if (key_ops > 0) {
                p.tuner_pipe_ops = key_ops;
                p.tuner_reg_buff = key_reg;
                p.tuner_bytes = passed;
            }
            pts[n++] = p;
        }
    }
    return n;
}

static const cct_section *keyed(const cct_table *t, int pipe_ops, int reg_buff)
{
    for (size_t i = 0; i < t->n_sections; i++)
        if (t->sections[i].pipe_ops == pipe_ops && t->sections[i].reg_buff == reg_buff)
            return &t->sections[i];
    return NULL;
}

static void test_keyed_sections(void **state)
{
    (void)state;
    cct_point pts[256];
    size_t n = 0;
    n = add_mode(pts, n, 1, false, 0, 0, 64 << 10); /* plain: crossover at 64 KiB */
    n = add_mode(pts, n, 4, false, 2, 0, 1 << 20);  /* grouped: LL wins up to 1 MiB */
    n = add_mode(pts, n, 1, true, 1, 1, 64 << 10);  /* registered: same as plain */
    n = add_mode(pts, n, 4, true, 1, 0, 1 << 20);   /* NCCL passed plain keys */
    cct_decide_options o;
    cct_decide_options_default(&o);
    cct_table t;
    cct_table_init(&t);
    cct_error err;
    cct_point plain[64];
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        if (cct_point_is_plain(&pts[i]))
            plain[np++] = pts[i];
    assert_int_equal(np, 24);
    assert_int_equal(cct_build_table(plain, np, &o, &t, &err), CCT_OK);
    assert_int_equal(t.n_sections, 1);
    size_t emitted = 99;
    assert_int_equal(cct_build_mode_sections(pts, n, &o, &t, &emitted, &err), CCT_OK);
    assert_int_equal(emitted, 1);
    assert_int_equal(t.n_sections, 2);
    const cct_section *g = keyed(&t, 2, 0);
    assert_non_null(g);
    assert_null(keyed(&t, 1, 1)); /* decides like the plain calls: no section */
    assert_null(keyed(&t, 1, 0)); /* the plugin could not tell it from a plain call */
    /* bands in the bytes NCCL passed: LL up to ~1 MiB of the group's total */
    const cct_rule *r = cct_section_lookup(g, 512 << 10);
    assert_non_null(r);
    assert_int_equal(r->proto, CCT_PROTO_LL);
    r = cct_section_lookup(g, 4 << 20);
    assert_int_equal(r->proto, CCT_PROTO_SIMPLE);
    /* the plain section still says Simple at 512 KiB */
    assert_int_equal(cct_section_lookup(&t.sections[0], 512 << 10)->proto, CCT_PROTO_SIMPLE);
    /* the plugin's lookup picks the keyed section for that key only */
    assert_ptr_equal(cct_table_find_section(&t, CCT_COLL_ALLREDUCE, 4, 4, 2, 0), g);
    assert_ptr_equal(cct_table_find_section(&t, CCT_COLL_ALLREDUCE, 4, 4, 2, 1), &t.sections[0]);
    assert_ptr_equal(cct_table_find_section(&t, CCT_COLL_ALLREDUCE, 4, 4, 1, 1), &t.sections[0]);
    assert_int_equal(cct_table_check(&t, &err), CCT_OK);
    cct_table_destroy(&t);
}

/* Without recorded tuner keys the requested mode is the key, at k x bytes. */
static void test_requested_mode_as_key(void **state)
{
    (void)state;
    cct_point pts[128];
    size_t n = 0;
    n = add_mode(pts, n, 1, false, 0, 0, 64 << 10);
    n = add_mode(pts, n, 1, true, 0, 0, 1 << 20);
    cct_decide_options o;
    cct_decide_options_default(&o);
    cct_table t;
    cct_table_init(&t);
    cct_error err;
    assert_int_equal(cct_build_table(pts, 24, &o, &t, &err), CCT_OK);
    size_t emitted = 0;
    assert_int_equal(cct_build_mode_sections(pts, n, &o, &t, &emitted, &err), CCT_OK);
    assert_int_equal(emitted, 1);
    assert_non_null(keyed(&t, 1, 1));
    cct_table_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_plan_unchanged),
        cmocka_unit_test(test_modes_in_plan),
        cmocka_unit_test(test_flag_errors),
        cmocka_unit_test(test_keyed_sections),
        cmocka_unit_test(test_requested_mode_as_key),
    };
    return cmocka_run_group_tests_name("call_modes", tests, NULL, NULL);
}
