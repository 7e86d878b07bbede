/*
 * test_decide.c - decisions (src/fit/cct_decide*.c) on synthetic sections with known answers.
 *
 * Known lines cross at known sizes: the rules' boundaries must land there and the bands
 * follow.  Near-ties must go by the documented preference (fewer channels, then the
 * protocol least hurt by misalignment, then NCCL's own choice), adjacent equal bands must
 * merge, a one-size blip must not make a band, corrupt/hung/failed configurations and
 * forbidden LL128 must never be chosen, the worst-case alignment option must change the
 * choice when the penalties say so, and the same points shuffled must give bit-identical
 * sections.  Bad input gets clear errors.  No timing assertions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cct_decide.h"
#include "fit_test_util.h"

#define MAXP 1024
#define FIRST 1024 /* sizes 1 KiB .. 64 MiB */
#define N_SIZES 17

typedef struct pts {
    cct_point p[MAXP];
    size_t n;
} pts;

/* One configuration over all sizes: alpha + n/beta times mult, seeded noise rel. */
static void add_line(pts *s, gsl_rng *r, int algo, int proto, int channels, double alpha,
                     double beta, double mult, double rel)
{
    for (int i = 0; i < N_SIZES; i++) {
        uint64_t n = ft_size(FIRST, i);
        assert_true(s->n < MAXP);
        s->p[s->n++] = ft_point(algo, proto, channels, n,
                                ft_line(alpha, beta, n) * mult * (r ? ft_noise(r, rel) : 1.0),
                                rel > 0.01 ? rel : 0.01);
    }
}

static cct_point *last_at(pts *s, int algo, int proto, int channels, uint64_t bytes)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->p[i].cfg.algo == algo && s->p[i].cfg.proto == proto &&
            s->p[i].cfg.channels == channels && s->p[i].bytes == bytes && s->p[i].cfg.align == 0)
            return &s->p[i];
    fail_msg("no such point");
    return NULL;
}

static const cct_section *build(pts *s, const cct_decide_options *opt, cct_table *t)
{
    cct_error err;
    cct_table_init(t);
    cct_status st = cct_build_section(s->p, s->n, opt, t, &err);
    if (st != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(t->n_sections, 1);
    assert_int_equal(cct_table_check(t, NULL), CCT_OK);
    return &t->sections[0];
}

/* A: latency-bound tree/ll (10 us, 1 GB/s); B: bandwidth ring/simple (50 us, 10 GB/s).
 * They cross at 40 / (1/1000 - 1/10000) = 44444.4 bytes. */
static void test_crossover_at_intersection(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    add_line(s, r, CCT_ALGO_TREE, CCT_PROTO_LL, 0, 10.0, 1.0, 1.0, 0.005);
    add_line(s, r, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 50.0, 10.0, 1.0, 0.005);
    cct_table t;
    const cct_section *sec = build(s, NULL, &t);
    assert_int_equal(sec->n_rules, 2);
    assert_int_equal(sec->rules[0].algo, CCT_ALGO_TREE);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_LL);
    assert_int_equal(sec->rules[1].algo, CCT_ALGO_RING);
    assert_int_equal(sec->rules[1].proto, CCT_PROTO_SIMPLE);
    /* the edge sits on the readable grid between the measured sizes (32 and 64 KiB), at the
     * grid point nearest their geometric middle (48 KiB), not where the models cross */
    assert_true(sec->rules[0].max_bytes == 49152);
    assert_int_equal(sec->rules[1].min_bytes, sec->rules[0].max_bytes);
    assert_true(sec->rules[1].max_bytes == CCT_BYTES_INF);
    /* the same root straight from the two models */
    assert_int_equal(sec->n_models, 2);
    double root;
    assert_true(
        cct_decide_crossover(&sec->models[0], 1.0, &sec->models[1], 1.0, 32768, 65536, &root));
    assert_true(fabs(root - 44444.4) / 44444.4 < 0.03);
    assert_false(
        cct_decide_crossover(&sec->models[0], 1.0, &sec->models[1], 1.0, 1024, 16384, &root));
    /* every rule carries its numbers: no baseline here, so no margin_default */
    for (size_t i = 0; i < sec->n_rules; i++) {
        const cct_rule *x = &sec->rules[i];
        assert_true(x->predicted_us > 0.0);
        assert_true(x->margin > 0.0);
        assert_true(isnan(x->margin_default));
        assert_true(x->ref_bytes >= x->min_bytes && x->ref_bytes < x->max_bytes);
        const cct_point *m = last_at(s, x->algo, x->proto, 0, x->ref_bytes);
        assert_true(x->predicted_us == m->stats.median_us); /* measured where measured */
    }
    cct_table_destroy(&t);
    gsl_rng_free(r);
    free(s);
}

/* Three lines, two crossovers: C (5 us, 0.4 GB/s) below A below B; the bands follow them. */
static void test_bands_follow_crossovers(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_TREE, CCT_PROTO_LL, 0, 10.0, 1.0, 1.0, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 50.0, 10.0, 1.0, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 0, 5.0, 0.4, 1.0, 0.0);
    cct_table t;
    const cct_section *sec = build(s, NULL, &t);
    /* C = A at 5 / (1/400 - 1/1000) = 3333 bytes: between 2 KiB and 4 KiB */
    assert_int_equal(sec->n_rules, 3);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_LL);
    assert_int_equal(sec->rules[0].algo, CCT_ALGO_RING);
    assert_int_equal(sec->rules[1].algo, CCT_ALGO_TREE);
    assert_int_equal(sec->rules[2].algo, CCT_ALGO_RING);
    assert_int_equal(sec->rules[2].proto, CCT_PROTO_SIMPLE);
    /* edges on the readable grid between the measured sizes: 3 KiB (between 2 and 4 KiB),
     * 48 KiB (between 32 and 64 KiB) */
    assert_true(sec->rules[0].max_bytes == 3072);
    assert_true(sec->rules[1].max_bytes == 49152);
    cct_table_destroy(&t);

    /* C's band rests on two sizes (1 and 2 KiB): asking for three hands it to A */
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    opt.min_band_sizes = 3;
    sec = build(s, &opt, &t);
    assert_int_equal(sec->n_rules, 2);
    assert_int_equal(sec->rules[0].algo, CCT_ALGO_TREE);
    assert_true(sec->rules[0].min_bytes == 0);
    cct_table_destroy(&t);
    free(s);
}

static void test_tie_prefers_fewer_channels(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 4, 20.0, 3.0, 1.00, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 2, 20.0, 3.0, 1.03, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 0.99, 0.0);
    cct_table t;
    const cct_section *sec = build(s, NULL, &t);
    assert_int_equal(sec->n_rules, 1);
    assert_int_equal(sec->rules[0].channels, 2);
    assert_true(sec->rules[0].min_bytes == 0 && sec->rules[0].max_bytes == CCT_BYTES_INF);
    /* the preference cost 4 % against the fastest (0 channels): said, not hidden */
    assert_true(fabs(sec->rules[0].margin - (0.99 / 1.03 - 1.0)) < 1e-9);
    cct_table_destroy(&t);

    /* a tighter tie threshold lets speed decide */
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    opt.tie = 0.005;
    sec = build(s, &opt, &t);
    assert_int_equal(sec->n_rules, 1);
    assert_int_equal(sec->rules[0].channels, 0);
    assert_true(fabs(sec->rules[0].margin - (1.00 / 0.99 - 1.0)) < 1e-9);
    cct_table_destroy(&t);
    free(s);
}

/* Misaligned copies of every aligned point of a configuration, slower by pen. */
static void add_misaligned(pts *s, int algo, int proto, int channels, unsigned offset, double pen)
{
    size_t n = s->n;
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &s->p[i];
        if (p->cfg.algo != algo || p->cfg.proto != proto || p->cfg.channels != channels ||
            p->cfg.align != 0)
            continue;
        cct_point q = *p;
        q.cfg.align = offset;
        q.stats.median_us *= 1.0 + pen;
        assert_true(s->n < MAXP);
        s->p[s->n++] = q;
    }
}

static void test_tie_prefers_alignment_tolerant_protocol(void **state)
{
    (void)state;
    for (int flip = 0; flip < 2; flip++) {
        pts *s = calloc(1, sizeof *s);
        add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 1, 20.0, 3.0, 1.00, 0.0);
        add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1, 20.0, 3.0, 1.02, 0.0);
        add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_LL, 1, 4, flip ? 0.01 : 0.20);
        add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1, 4, flip ? 0.20 : 0.01);
        cct_table t;
        const cct_section *sec = build(s, NULL, &t);
        assert_int_equal(sec->n_rules, 1);
        assert_int_equal(sec->rules[0].proto, flip ? CCT_PROTO_LL : CCT_PROTO_SIMPLE);
        /* the penalties are recorded, sorted by protocol */
        assert_int_equal(sec->n_penalties, 2);
        assert_int_equal(sec->penalties[0].proto, CCT_PROTO_LL);
        assert_int_equal(sec->penalties[0].offset, 4);
        assert_true(fabs(sec->penalties[0].penalty - (flip ? 0.01 : 0.20)) < 1e-9);
        assert_int_equal(sec->penalties[1].proto, CCT_PROTO_SIMPLE);
        assert_true(fabs(sec->penalties[1].penalty - (flip ? 0.20 : 0.01)) < 1e-9);
        cct_table_destroy(&t);
        free(s);
    }
}

static void add_baseline(pts *s, int nccl_algo, int nccl_proto, double mult)
{
    for (int i = 0; i < N_SIZES; i++) {
        uint64_t n = ft_size(FIRST, i);
        cct_point p = ft_point(CCT_DEFAULT, CCT_DEFAULT, 0, n, ft_line(20.0, 3.0, n) * mult, 0.01);
        p.nccl_algo = nccl_algo;
        p.nccl_proto = nccl_proto;
        s->p[s->n++] = p;
    }
}

static void test_tie_prefers_nccl_default(void **state)
{
    (void)state;
    for (int which = 0; which < 2; which++) {
        pts *s = calloc(1, sizeof *s);
        add_line(s, NULL, CCT_ALGO_TREE, CCT_PROTO_LL, 2, 20.0, 3.0, 1.00, 0.0);
        add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 2, 20.0, 3.0, 1.02, 0.0);
        if (which == 0)
            add_baseline(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1.25);
        else
            add_baseline(s, CCT_ALGO_TREE, CCT_PROTO_LL, 1.25);
        cct_table t;
        const cct_section *sec = build(s, NULL, &t);
        assert_int_equal(sec->n_rules, 1);
        assert_int_equal(sec->rules[0].algo, which == 0 ? CCT_ALGO_RING : CCT_ALGO_TREE);
        double chosen = which == 0 ? 1.02 : 1.00;
        assert_true(fabs(sec->rules[0].margin_default - (1.25 / chosen - 1.0)) < 1e-9);
        /* the baseline is no rule and no model (it has no algorithm of its own) */
        assert_int_equal(sec->n_models, 2);
        cct_table_destroy(&t);
        free(s);
    }
}

/* A tie-break may not cost more than max_loss_default against NCCL's own choice: with
 * NCCL's default (ring/simple, its own channels) measured at 1.00, the 2-channel config at
 * 1.04 ties with the fastest (ring/simple, NCCL's channels, 1.00) and would win on fewer
 * channels; the guard hands the band to NCCL's choice instead (its twin, channels 0).  A
 * looser guard does not change that: nothing beats the default, so nothing replaces it. */
static void test_tie_break_never_loses_to_default(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.00, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 2, 20.0, 3.0, 1.04, 0.0);
    add_baseline(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1.00);
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    for (int loose = 0; loose < 2; loose++) {
        opt.max_loss_default = loose ? 0.05 : 0.02;
        cct_table t;
        const cct_section *sec = build(s, &opt, &t);
        assert_int_equal(sec->n_rules, 1);
        assert_int_equal(sec->rules[0].algo, CCT_ALGO_RING);
        assert_int_equal(sec->rules[0].proto, CCT_PROTO_SIMPLE);
        assert_int_equal(sec->rules[0].channels, 0);
        assert_true(fabs(sec->rules[0].margin_default) < 1e-9);
        cct_table_destroy(&t);
    }
    free(s);
}

static void test_equal_bands_merge_and_blips_absorbed(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.0, 0.0);
    add_line(s, NULL, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.2, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 0, 20.0, 3.0, 1.5, 0.0);
    cct_table t;
    const cct_section *sec = build(s, NULL, &t);
    assert_int_equal(sec->n_rules, 1); /* one winner everywhere: one band */
    assert_int_equal(sec->rules[0].algo, CCT_ALGO_RING);
    assert_true(fabs(sec->rules[0].margin - 0.2) < 1e-9);
    cct_table_destroy(&t);

    /* one noisy size where tree wins by 20 % */
    cct_point *blip = last_at(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, ft_size(FIRST, 8));
    blip->stats.median_us *= 1.5;
    sec = build(s, NULL, &t);
    assert_int_equal(sec->n_rules, 1);
    assert_int_equal(sec->rules[0].algo, CCT_ALGO_RING);
    cct_table_destroy(&t);

    /* with the minimum band width off, the blip becomes a band of its own */
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    opt.min_band_sizes = 1;
    opt.min_band_factor = 1.0;
    sec = build(s, &opt, &t);
    assert_int_equal(sec->n_rules, 3);
    assert_int_equal(sec->rules[1].algo, CCT_ALGO_TREE);
    assert_true(sec->rules[1].min_bytes < ft_size(FIRST, 8) &&
                sec->rules[1].max_bytes > ft_size(FIRST, 8));
    /* the factor alone (a band resting on one size spans ~2x, less than 3) also absorbs it */
    opt.min_band_factor = 3.0;
    cct_table_destroy(&t);
    sec = build(s, &opt, &t);
    assert_int_equal(sec->n_rules, 1);
    cct_table_destroy(&t);
    free(s);
}

static void test_failed_configurations_excluded(void **state)
{
    (void)state;
    int statuses[] = {CCT_POINT_CORRUPT, CCT_POINT_HANG, CCT_POINT_ERROR};
    for (size_t k = 0; k < 3; k++) {
        pts *s = calloc(1, sizeof *s);
        add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 0, 5.0, 3.0, 1.0, 0.0); /* fastest */
        add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.0, 0.0);
        /* one bad point, at one size and a misaligned offset, condemns the whole config */
        cct_point bad = *last_at(s, CCT_ALGO_RING, CCT_PROTO_LL, 0, ft_size(FIRST, 3));
        bad.cfg.align = 128;
        bad.status = statuses[k];
        bad.wrong = statuses[k] == CCT_POINT_CORRUPT ? 17 : 0;
        s->p[s->n++] = bad;
        cct_table t;
        const cct_section *sec = build(s, NULL, &t);
        assert_int_equal(sec->n_rules, 1);
        assert_int_equal(sec->rules[0].proto, CCT_PROTO_SIMPLE);
        assert_int_equal(sec->n_models, 1); /* no model for an excluded configuration */
        assert_int_equal(sec->models[0].proto, CCT_PROTO_SIMPLE);
        assert_true(isnan(sec->rules[0].margin)); /* no runner-up left */
        cct_table_destroy(&t);
        free(s);
    }
    /* unsupported points are ignored, not held against the configuration */
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 0, 5.0, 3.0, 1.0, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.0, 0.0);
    cct_point u = *last_at(s, CCT_ALGO_RING, CCT_PROTO_LL, 0, ft_size(FIRST, 3));
    u.status = CCT_POINT_UNSUPPORTED;
    u.stats.median_us = NAN;
    s->p[s->n++] = u;
    cct_table t;
    const cct_section *sec = build(s, NULL, &t);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_LL);
    cct_table_destroy(&t);
    free(s);
}

static void test_ll128_forbidden(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL128, 0, 10.0, 3.0, 1.0, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.0, 0.0);
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    assert_false(opt.ll128_allowed); /* safe by default */
    cct_table t;
    const cct_section *sec = build(s, &opt, &t);
    assert_int_equal(sec->n_rules, 1);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_SIMPLE);
    for (size_t i = 0; i < sec->n_models; i++)
        assert_int_not_equal(sec->models[i].proto, CCT_PROTO_LL128);
    cct_table_destroy(&t);
    opt.ll128_allowed = true;
    sec = build(s, &opt, &t);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_LL128);
    assert_int_equal(sec->n_models, 2);
    cct_table_destroy(&t);
    free(s);
}

static void test_worst_case_alignment(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 1, 20.0, 3.0, 1.00, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1, 20.0, 3.0, 1.10, 0.0);
    add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_LL, 1, 4, 0.30);
    add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_LL, 1, 64, 0.10);
    add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1, 4, 0.02);
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    cct_table t;
    const cct_section *sec = build(s, &opt, &t);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_LL); /* aligned: LL is 10 % faster */
    assert_int_equal(sec->n_penalties, 3);
    assert_int_equal(sec->penalties[1].offset, 64);
    assert_true(fabs(sec->penalties[1].penalty - 0.10) < 1e-9);
    cct_table_destroy(&t);
    opt.worst_case_align = true;
    sec = build(s, &opt, &t);
    assert_int_equal(sec->rules[0].proto, CCT_PROTO_SIMPLE); /* 1.10*1.02 < 1.00*1.30 */
    assert_true(fabs(sec->rules[0].predicted_us /
                         last_at(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 1, sec->rules[0].ref_bytes)
                             ->stats.median_us -
                     1.02) < 1e-9);
    cct_table_destroy(&t);
    free(s);
}

/* Compare doubles bit for bit (NaN equal to NaN of the same bits). */
static void same_double(double a, double b)
{
    assert_memory_equal(&a, &b, sizeof a);
}

static void same_section(const cct_section *a, const cct_section *b)
{
    assert_int_equal(a->n_rules, b->n_rules);
    for (size_t i = 0; i < a->n_rules; i++) {
        const cct_rule *x = &a->rules[i], *y = &b->rules[i];
        assert_int_equal(x->min_bytes, y->min_bytes);
        assert_int_equal(x->max_bytes, y->max_bytes);
        assert_int_equal(x->algo, y->algo);
        assert_int_equal(x->proto, y->proto);
        assert_int_equal(x->channels, y->channels);
        assert_int_equal(x->ref_bytes, y->ref_bytes);
        same_double(x->predicted_us, y->predicted_us);
        same_double(x->margin, y->margin);
        same_double(x->margin_default, y->margin_default);
    }
    assert_int_equal(a->n_models, b->n_models);
    for (size_t i = 0; i < a->n_models; i++) {
        const cct_model *x = &a->models[i], *y = &b->models[i];
        assert_int_equal(x->algo, y->algo);
        assert_int_equal(x->proto, y->proto);
        assert_int_equal(x->channels, y->channels);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->n_segments, y->n_segments);
        assert_int_equal(x->poor_fit, y->poor_fit);
        same_double(x->r2, y->r2);
        for (int k = 0; k < x->n_segments; k++) {
            assert_int_equal(x->segments[k].from_bytes, y->segments[k].from_bytes);
            same_double(x->segments[k].alpha_us, y->segments[k].alpha_us);
            same_double(x->segments[k].alpha_ci, y->segments[k].alpha_ci);
            same_double(x->segments[k].beta_gbps, y->segments[k].beta_gbps);
            same_double(x->segments[k].beta_ci, y->segments[k].beta_ci);
        }
    }
    assert_int_equal(a->n_penalties, b->n_penalties);
    for (size_t i = 0; i < a->n_penalties; i++) {
        assert_int_equal(a->penalties[i].proto, b->penalties[i].proto);
        assert_int_equal(a->penalties[i].offset, b->penalties[i].offset);
        same_double(a->penalties[i].penalty, b->penalties[i].penalty);
    }
}

static void test_deterministic_under_permutation(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 99);
    add_line(s, r, CCT_ALGO_TREE, CCT_PROTO_LL, 0, 10.0, 1.0, 1.0, 0.03);
    add_line(s, r, CCT_ALGO_TREE, CCT_PROTO_LL, 1, 11.0, 0.9, 1.0, 0.03);
    add_line(s, r, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 50.0, 10.0, 1.0, 0.03);
    add_line(s, r, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 2, 52.0, 9.5, 1.0, 0.03);
    add_line(s, r, CCT_ALGO_RING, CCT_PROTO_LL, 0, 9.0, 0.8, 1.0, 0.03);
    add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_LL, 0, 4, 0.05);
    add_misaligned(s, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 4, 0.12);
    add_baseline(s, CCT_ALGO_RING, CCT_PROTO_LL, 1.3);
    /* duplicates at one size (in-place and out-of-place) */
    cct_point d = *last_at(s, CCT_ALGO_TREE, CCT_PROTO_LL, 0, ft_size(FIRST, 5));
    d.in_place = true;
    d.stats.median_us *= 1.01;
    s->p[s->n++] = d;

    cct_table ref;
    const cct_section *want = build(s, NULL, &ref);
    assert_true(want->n_rules >= 2);
    for (int t = 0; t < 20; t++) {
        gsl_ran_shuffle(r, s->p, s->n, sizeof s->p[0]);
        cct_table got;
        same_section(want, build(s, NULL, &got));
        cct_table_destroy(&got);
    }
    cct_table_destroy(&ref);
    gsl_rng_free(r);
    free(s);
}

static void test_build_table_sections_and_buffers(void **state)
{
    (void)state;
    pts *s = calloc(1, sizeof *s);
    /* two topologies, in reverse order, and two buffer settings for ranks=4 */
    size_t first = s->n;
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.0, 0.0);
    for (size_t i = first; i < s->n; i++)
        s->p[i].cfg.ranks = s->p[i].cfg.nodes = 8;
    first = s->n;
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 1.0, 0.0);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 0.8, 0.0);
    for (size_t i = first + N_SIZES; i < s->n; i++)
        s->p[i].cfg.buffsize = 8u << 20; /* the faster one */
    cct_table t;
    cct_table_init(&t);
    cct_error err;
    assert_int_equal(cct_build_table(s->p, s->n, NULL, &t, &err), CCT_OK);
    assert_int_equal(t.n_sections, 2);
    assert_int_equal(t.sections[0].ranks, 4);
    assert_int_equal(t.sections[1].ranks, 8);
    /* one setting for the whole table: 8 MiB serves only ranks=4, the default serves both */
    assert_int_equal(t.n_env, 0);
    assert_true(fabs(t.sections[0].rules[0].predicted_us /
                         ft_line(20.0, 3.0, t.sections[0].rules[0].ref_bytes) -
                     1.0) < 1e-9);
    cct_table_destroy(&t);

    /* measure ranks=8 with 8 MiB too: now 8 MiB serves everything and is faster */
    first = s->n;
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 20.0, 3.0, 0.9, 0.0);
    for (size_t i = first; i < s->n; i++) {
        s->p[i].cfg.ranks = s->p[i].cfg.nodes = 8;
        s->p[i].cfg.buffsize = 8u << 20;
    }
    cct_table_init(&t);
    assert_int_equal(cct_build_table(s->p, s->n, NULL, &t, &err), CCT_OK);
    assert_int_equal(t.n_env, 1);
    assert_string_equal(t.env[0].key, "NCCL_BUFFSIZE");
    assert_string_equal(t.env[0].value, "8388608");
    /* the other setting cannot run in this table: it is no runner-up */
    assert_true(isnan(t.sections[0].rules[0].margin));
    assert_true(fabs(t.sections[0].rules[0].predicted_us /
                         (ft_line(20.0, 3.0, t.sections[0].rules[0].ref_bytes) * 0.8) -
                     1.0) < 1e-9);
    /* models of both settings are kept, told apart by their buffsize */
    assert_int_equal(t.sections[0].n_models, 2);
    assert_true(t.sections[0].models[0].buffsize != t.sections[0].models[1].buffsize);
    cct_table_destroy(&t);

    /* fixed buffers: NCCL's defaults, whatever is faster */
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    opt.auto_buffers = false;
    cct_table_init(&t);
    assert_int_equal(cct_build_table(s->p, s->n, &opt, &t, &err), CCT_OK);
    assert_int_equal(t.n_env, 0);
    assert_true(fabs(t.sections[0].rules[0].predicted_us /
                         ft_line(20.0, 3.0, t.sections[0].rules[0].ref_bytes) -
                     1.0) < 1e-9);
    cct_table_destroy(&t);
    free(s);
}

static void test_bad_input(void **state)
{
    (void)state;
    cct_table t;
    cct_table_init(&t);
    cct_error err;
    assert_int_equal(cct_build_section(NULL, 0, NULL, &t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "no points"));
    assert_int_equal(cct_build_table(NULL, 0, NULL, &t, &err), CCT_EINVAL);
    assert_int_equal(t.n_sections, 0);

    /* one point, or one size: a thin but valid decision, no model */
    cct_point one = ft_point(CCT_ALGO_RING, CCT_PROTO_LL, 0, 4096, 30.0, 0.01);
    assert_int_equal(cct_build_section(&one, 1, NULL, &t, &err), CCT_OK);
    assert_int_equal(t.sections[0].n_rules, 1);
    assert_int_equal(t.sections[0].n_models, 0);
    assert_true(t.sections[0].rules[0].predicted_us == 30.0);
    cct_table_destroy(&t);
    cct_point same[3] = {one, one, one};
    same[1].cfg.proto = CCT_PROTO_SIMPLE;
    same[1].stats.median_us = 20.0;
    assert_int_equal(cct_build_section(same, 3, NULL, &t, &err), CCT_OK);
    assert_int_equal(t.sections[0].rules[0].proto, CCT_PROTO_SIMPLE);
    cct_table_destroy(&t);

    pts *s = calloc(1, sizeof *s);
    add_line(s, NULL, CCT_ALGO_RING, CCT_PROTO_LL, 0, 5.0, 3.0, 1.0, 0.0);
    s->p[4].stats.median_us = NAN;
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "point 5"));
    assert_int_equal(t.n_sections, 0);
    s->p[4].stats.median_us = -1.0;
    assert_int_equal(cct_build_table(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "positive finite"));
    assert_non_null(strstr(err.msg, "allreduce ranks=4"));
    s->p[4].stats.median_us = 10.0;

    s->p[2].cfg.ranks = 8;
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "one collective on one topology"));
    s->p[2].cfg.ranks = 4;

    s->p[3].cfg.dtype = CCT_DTYPE_BF16;
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "data types"));
    cct_decide_options opt;
    cct_decide_options_default(&opt);
    opt.dtype = CCT_DTYPE_BF16; /* choosing one works */
    assert_int_equal(cct_build_section(s->p, s->n, &opt, &t, &err), CCT_OK);
    cct_table_destroy(&t);
    s->p[3].cfg.dtype = CCT_DTYPE_FLOAT;

    s->p[0].cfg.algo = CCT_DEFAULT; /* half a baseline */
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    s->p[0].cfg.algo = CCT_ALGO_RING;
    s->p[0].cfg.nodes = 9;
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    s->p[0].cfg.nodes = 4;

    /* the same topology twice: the second is refused and the table left as it was */
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_OK);
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    assert_int_equal(t.n_sections, 1);
    assert_int_equal(cct_table_check(&t, NULL), CCT_OK);
    cct_table_destroy(&t);

    /* nothing usable: every configuration corrupt */
    for (size_t i = 0; i < s->n; i++)
        s->p[i].status = CCT_POINT_CORRUPT;
    assert_int_equal(cct_build_section(s->p, s->n, NULL, &t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "no usable configuration"));
    assert_int_equal(t.n_sections, 0);
    /* only a baseline: nothing to choose from either */
    pts *b = calloc(1, sizeof *b);
    add_baseline(b, -1, -1, 1.0);
    assert_int_equal(cct_build_section(b->p, b->n, NULL, &t, &err), CCT_EINVAL);
    cct_table_destroy(&t);
    free(b);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crossover_at_intersection),
        cmocka_unit_test(test_bands_follow_crossovers),
        cmocka_unit_test(test_tie_prefers_fewer_channels),
        cmocka_unit_test(test_tie_prefers_alignment_tolerant_protocol),
        cmocka_unit_test(test_tie_prefers_nccl_default),
        cmocka_unit_test(test_tie_break_never_loses_to_default),
        cmocka_unit_test(test_equal_bands_merge_and_blips_absorbed),
        cmocka_unit_test(test_failed_configurations_excluded),
        cmocka_unit_test(test_ll128_forbidden),
        cmocka_unit_test(test_worst_case_alignment),
        cmocka_unit_test(test_deterministic_under_permutation),
        cmocka_unit_test(test_build_table_sections_and_buffers),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
