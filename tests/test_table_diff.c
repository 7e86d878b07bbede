/*
 * test_table_diff.c - cct_table_diff() on hand-written tables: what counts as a change, how
 * ranges are cut and merged, the predicted percentages and the exact wording of the lines.
 *
 * Tables are YAML text loaded with the strict loader, so every case is a table the plugin
 * would accept.  Models are chosen so predictions are exact: a flat model (alpha only)
 * predicts alpha at every size, a linear one alpha + n / (beta * 1e3) microseconds, and a
 * range is predicted at its geometric middle (cct_table_diff_bands.c).
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

#include "cct_rule_model.h"
#include "cct_table.h"
#include "cct_table_diff.h"

#define HEAD                                                                                       \
    "ccltune_table: 1\n"                                                                           \
    "provenance: {tool: \"ccltune 0.1.0\", created: \"2026-11-29T14:00:00Z\", source: measured}\n" \
    "fingerprint: {gpu: NVIDIA H200, cc: 9.0, gpus_per_node: 8, nodes: 1, links: nvlink, "         \
    "nccl: 2.28.9}\n"                                                                              \
    "ll128: {allowed: false}\n"

#define SECTION8 "collectives:\n  allreduce:\n    - ranks: 8\n      nodes: 1\n      rules:\n"

static void load(const char *text, cct_table *t)
{
    cct_error err;
    if (cct_table_load_buffer(text, strlen(text), "test.yaml", t, &err) != CCT_OK)
        fail_msg("table does not load: %s\n%s", err.msg, text);
}

/* Diff two tables given as text; the caller destroys d. */
static void diff_text(const char *a, const char *b, double threshold, cct_diff *d)
{
    cct_table ta, tb;
    load(a, &ta);
    load(b, &tb);
    cct_diff_options opt;
    cct_diff_options_default(&opt);
    if (threshold >= 0)
        opt.threshold = threshold;
    cct_error err;
    if (cct_table_diff(&ta, &tb, &opt, d, &err) != CCT_OK)
        fail_msg("diff failed: %s", err.msg);
    cct_table_destroy(&ta);
    cct_table_destroy(&tb);
}

static void dump(const cct_diff *d)
{
    for (size_t i = 0; i < d->n_changes; i++)
        print_message("  [%d] %s\n", d->changes[i].level, d->changes[i].text);
}

/* The changes of a given level, as their lines joined by '\n' (static buffer). */
static const char *lines(const cct_diff *d, int level)
{
    static char buf[8192];
    buf[0] = '\0';
    for (size_t i = 0; i < d->n_changes; i++)
        if (level < 0 || (int)d->changes[i].level == level) {
            strncat(buf, d->changes[i].text, sizeof buf - strlen(buf) - 2);
            strcat(buf, "\n");
        }
    return buf;
}

static void test_identical(void **state)
{
    (void)state;
    const char *t = HEAD "recommended_env: {NCCL_BUFFSIZE: \"8388608\"}\n" SECTION8
                         "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll}\n"
                         "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: simple, "
                         "channels: 4, chunk_bytes: 128KiB, predicted_us: 10}\n"
                         "      models:\n"
                         "        - {algo: ring, proto: ll, kind: linear, alpha_us: 5, "
                         "beta_gbps: 2}\n";
    cct_diff d;
    diff_text(t, t, -1, &d);
    assert_int_equal(d.n_changes, 0);
    assert_true(cct_diff_decisions_equal(&d));
    assert_int_equal(d.n_level[0] + d.n_level[1] + d.n_level[2], 0);
    cct_diff_destroy(&d);
}

/* A band split in two with the same choice on both halves is no change; a split whose new
 * half chooses differently changes exactly that half. */
static void test_band_split(void **state)
{
    (void)state;
    const char *a =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: "
                      "simple}\n";
    const char *same =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 32KiB, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 32KiB, max_bytes: 64KiB, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: simple}\n";
    const char *changed =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 32KiB, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 32KiB, max_bytes: inf, algo: ring, proto: simple}\n";
    cct_diff d;
    diff_text(a, same, -1, &d);
    assert_int_equal(d.n_changes, 0);
    cct_diff_destroy(&d);

    diff_text(a, changed, -1, &d);
    dump(&d);
    assert_int_equal(d.n_changes, 1);
    const cct_diff_change *c = &d.changes[0];
    assert_int_equal(c->kind, CCT_DIFF_CHOICE);
    assert_int_equal(c->level, CCT_DIFF_DECISION);
    assert_int_equal(c->min_bytes, 32768);
    assert_int_equal(c->max_bytes, 65536);
    assert_int_equal(c->from.proto, CCT_PROTO_LL);
    assert_int_equal(c->to.proto, CCT_PROTO_SIMPLE);
    assert_true(isnan(c->speedup_lo)); /* no models, no predicted_us */
    assert_string_equal(c->text,
                        "allreduce, 8 ranks (1 node), 32 KiB–64 KiB: ring/ll → ring/simple");
    assert_false(cct_diff_decisions_equal(&d));
    cct_diff_destroy(&d);

    /* and the other way round: the band grew back */
    diff_text(changed, a, -1, &d);
    assert_int_equal(d.n_changes, 1);
    assert_string_equal(d.changes[0].text,
                        "allreduce, 8 ranks (1 node), 32 KiB–64 KiB: ring/simple → ring/ll");
    cct_diff_destroy(&d);
}

/* Flat models: ring/ll takes 112 us, ring/simple 100 us at every size, so moving a band
 * from ring/ll to ring/simple is 112/100 - 1 = 12 % faster, and back 12 % slower. */
#define FLAT_MODELS                                                                                \
    "      models:\n"                                                                              \
    "        - {algo: ring, proto: ll, kind: linear, alpha_us: 112}\n"                             \
    "        - {algo: ring, proto: simple, kind: linear, alpha_us: 100}\n"

static void test_algorithm_change_wording(void **state)
{
    (void)state;
    const char *a =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 4MiB, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 4MiB, max_bytes: inf, algo: ring, proto: "
                      "simple}\n" FLAT_MODELS;
    const char *b =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 2MiB, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 2MiB, max_bytes: inf, algo: ring, proto: "
                      "simple}\n" FLAT_MODELS;
    cct_diff d;
    diff_text(a, b, -1, &d);
    dump(&d);
    assert_int_equal(d.n_changes, 1);
    assert_string_equal(
        d.changes[0].text,
        "allreduce, 8 ranks (1 node), 2 MiB–4 MiB: ring/ll → ring/simple, predicted 12 % faster");
    assert_float_equal(d.changes[0].speedup_lo, 0.12, 1e-12);
    assert_float_equal(d.changes[0].speedup_hi, 0.12, 1e-12);
    cct_diff_destroy(&d);

    diff_text(b, a, -1, &d);
    assert_int_equal(d.n_changes, 1);
    assert_string_equal(
        d.changes[0].text,
        "allreduce, 8 ranks (1 node), 2 MiB–4 MiB: ring/simple → ring/ll, predicted 12 % slower");
    assert_true(d.changes[0].speedup_lo < 0);
    cct_diff_destroy(&d);
}

/* Without models, the bands' own predicted_us are compared. */
static void test_predicted_from_bands(void **state)
{
    (void)state;
    const char *a = HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: tree, proto: ll, "
                                  "predicted_us: 150}\n";
    const char *b = HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: tree, proto: "
                                  "simple, predicted_us: 100}\n";
    cct_diff d;
    diff_text(a, b, -1, &d);
    assert_int_equal(d.n_changes, 1);
    assert_string_equal(d.changes[0].text, "allreduce, 8 ranks (1 node), 0 B–inf: tree/ll → "
                                           "tree/simple, predicted 50 % faster");
    cct_diff_destroy(&d);
}

/* Neighbouring ranges with the same change are one line; the percentage spans the ranges.
 * ring/ll is 10 us + n / 100 B/us, ring/simple a flat 50 us: at the middle of [4K, 8K)
 * (5793 B) ring/ll takes 67.93 us (36 % slower), of [8K, 16K) (11585 B) 125.85 us (152 %). */
static void test_merged_ranges(void **state)
{
    (void)state;
    const char *models = "      models:\n"
                         "        - {algo: ring, proto: ll, kind: linear, alpha_us: 10, "
                         "beta_gbps: 0.1}\n"
                         "        - {algo: ring, proto: simple, kind: linear, alpha_us: 50}\n";
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s%s%s", HEAD SECTION8,
             "        - {min_bytes: 0, max_bytes: 16KiB, algo: ring, proto: ll}\n"
             "        - {min_bytes: 16KiB, max_bytes: inf, algo: ring, proto: simple}\n",
             models);
    snprintf(b, sizeof b, "%s%s%s", HEAD SECTION8,
             "        - {min_bytes: 0, max_bytes: 4KiB, algo: ring, proto: ll}\n"
             "        - {min_bytes: 4KiB, max_bytes: 8KiB, algo: ring, proto: simple}\n"
             "        - {min_bytes: 8KiB, max_bytes: 16KiB, algo: ring, proto: simple, "
             "predicted_us: 50}\n"
             "        - {min_bytes: 16KiB, max_bytes: inf, algo: ring, proto: simple}\n",
             models);
    cct_diff d;
    diff_text(a, b, -1, &d);
    dump(&d);
    assert_int_equal(d.n_changes, 1);
    assert_int_equal(d.changes[0].min_bytes, 4096);
    assert_int_equal(d.changes[0].max_bytes, 16384);
    assert_float_equal(d.changes[0].speedup_lo, (10 + 5793 / 100.0) / 50 - 1, 1e-9);
    assert_float_equal(d.changes[0].speedup_hi, (10 + 11585 / 100.0) / 50 - 1, 1e-9);
    assert_string_equal(d.changes[0].text, "allreduce, 8 ranks (1 node), 4 KiB–16 KiB: ring/ll "
                                           "→ ring/simple, predicted 36–152 % faster");
    cct_diff_destroy(&d);
}

/* Two different changes next to each other stay two lines. */
static void test_different_neighbours_not_merged(void **state)
{
    (void)state;
    const char *a =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n";
    const char *b =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 1MiB, algo: tree, proto: ll}\n"
                      "        - {min_bytes: 1MiB, max_bytes: inf, algo: ring, proto: simple}\n";
    cct_diff d;
    diff_text(a, b, -1, &d);
    assert_int_equal(d.n_changes, 2);
    assert_string_equal(lines(&d, -1),
                        "allreduce, 8 ranks (1 node), 0 B–1 MiB: ring/ll → tree/ll\n"
                        "allreduce, 8 ranks (1 node), 1 MiB–inf: ring/ll → ring/simple\n");
    cct_diff_destroy(&d);
}

static void test_channels_and_chunk(void **state)
{
    (void)state;
    const char *a = HEAD SECTION8
        "        - {min_bytes: 0, max_bytes: 64KiB, algo: tree, proto: simple}\n"
        "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: simple, channels: 8}\n";
    const char *b = HEAD SECTION8
        "        - {min_bytes: 0, max_bytes: 64KiB, algo: tree, proto: simple, channels: 2}\n"
        "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: simple, channels: 4, "
        "chunk_bytes: 128KiB}\n";
    cct_diff d;
    diff_text(a, b, -1, &d);
    dump(&d);
    assert_int_equal(d.n_changes, 2);
    assert_int_equal(d.changes[0].kind, CCT_DIFF_TUNING);
    assert_int_equal(d.changes[0].level, CCT_DIFF_DECISION);
    assert_int_equal(d.changes[0].from.channels, 0);
    assert_int_equal(d.changes[0].to.channels, 2);
    assert_string_equal(lines(&d, CCT_DIFF_DECISION),
                        "allreduce, 8 ranks (1 node), 0 B–64 KiB: tree/simple, channels nccl → 2\n"
                        "allreduce, 8 ranks (1 node), 64 KiB–inf: ring/simple, channels 8 → 4, "
                        "chunk nccl → 128 KiB\n");
    cct_diff_destroy(&d);

    /* a channel change together with an algorithm change is one CHOICE line */
    const char *c = HEAD SECTION8
        "        - {min_bytes: 0, max_bytes: 64KiB, algo: tree, proto: simple}\n"
        "        - {min_bytes: 64KiB, max_bytes: inf, algo: tree, proto: ll, channels: 1}\n";
    diff_text(a, c, -1, &d);
    assert_int_equal(d.n_changes, 1);
    assert_int_equal(d.changes[0].kind, CCT_DIFF_CHOICE);
    assert_string_equal(d.changes[0].text, "allreduce, 8 ranks (1 node), 64 KiB–inf: ring/simple "
                                           "(8 channels) → tree/ll (1 channel)");
    cct_diff_destroy(&d);
}

static void test_sections_added_removed(void **state)
{
    (void)state;
    const char *a = HEAD "collectives:\n"
                         "  allgather:\n"
                         "    - {ranks: 8, nodes: 1, rules: [{min_bytes: 0, max_bytes: inf, algo: "
                         "ring, proto: ll}]}\n"
                         "  allreduce:\n"
                         "    - {ranks: 8, nodes: 1, rules: [{min_bytes: 0, max_bytes: inf, algo: "
                         "ring, proto: ll}]}\n";
    const char *b = HEAD "collectives:\n"
                         "  allreduce:\n"
                         "    - {ranks: 8, nodes: 1, rules: [{min_bytes: 0, max_bytes: inf, algo: "
                         "ring, proto: ll}]}\n"
                         "    - {ranks: 16, nodes: 2, rules: [{min_bytes: 0, max_bytes: 1MiB, "
                         "algo: ring, proto: ll}, {min_bytes: 1MiB, max_bytes: inf, algo: ring, "
                         "proto: simple}]}\n"
                         "    - {ranks: 8, nodes: 1, pipe_ops: 2, reg_buff: true, rules: "
                         "[{min_bytes: 0, max_bytes: inf, algo: tree, proto: ll}]}\n";
    cct_diff d;
    diff_text(a, b, -1, &d);
    dump(&d);
    assert_int_equal(d.n_changes, 3);
    assert_int_equal(d.changes[0].kind, CCT_DIFF_SECTION_REMOVED);
    assert_int_equal(d.changes[0].coll, CCT_COLL_ALLGATHER);
    assert_int_equal(d.changes[1].kind, CCT_DIFF_SECTION_ADDED);
    assert_int_equal(d.changes[2].kind, CCT_DIFF_SECTION_ADDED);
    assert_int_equal(d.changes[2].n_bands, 2);
    /* the writer's order: allgather before allreduce, then ranks, pipe_ops "any" first */
    assert_string_equal(lines(&d, -1),
                        "allgather, 8 ranks (1 node): section removed (1 band)\n"
                        "allreduce, 8 ranks (1 node), pipe_ops 2, registered buffers: section "
                        "added (1 band)\n"
                        "allreduce, 16 ranks (2 nodes): section added (2 bands)\n");
    assert_false(cct_diff_decisions_equal(&d));
    cct_diff_destroy(&d);
}

/* Same choice, predicted time moved: a note above the threshold, nothing below it. */
static void test_predicted_time_threshold(void **state)
{
    (void)state;
    char a[1024], b[1024];
    const char *rules = "        - {min_bytes: 0, max_bytes: 1MiB, algo: ring, proto: ll}\n"
                        "        - {min_bytes: 1MiB, max_bytes: inf, algo: ring, proto: simple}\n"
                        "      models:\n"
                        "        - {algo: ring, proto: ll, kind: linear, alpha_us: 100}\n";
    snprintf(a, sizeof a,
             "%s%s        - {algo: ring, proto: simple, kind: linear, alpha_us: 100}\n",
             HEAD SECTION8, rules);
    snprintf(b, sizeof b,
             "%s%s        - {algo: ring, proto: simple, kind: linear, alpha_us: 110}\n",
             HEAD SECTION8, rules);
    cct_diff d;
    diff_text(a, b, -1, &d); /* 10 % slower > 5 % */
    dump(&d);
    assert_true(cct_diff_decisions_equal(&d));
    assert_int_equal(d.n_level[CCT_DIFF_NOTE], 1);
    assert_string_equal(lines(&d, CCT_DIFF_NOTE),
                        "allreduce, 8 ranks (1 node), 1 MiB–inf: ring/simple unchanged, now "
                        "predicted 10 % slower\n");
    /* the refit itself is a record */
    assert_string_equal(lines(&d, CCT_DIFF_RECORD),
                        "allreduce, 8 ranks (1 node): models 1 changed\n");
    cct_diff_destroy(&d);

    diff_text(a, b, 0.2, &d); /* 10 % < 20 % */
    assert_int_equal(d.n_level[CCT_DIFF_NOTE], 0);
    assert_int_equal(d.n_level[CCT_DIFF_RECORD], 1);
    cct_diff_destroy(&d);
}

static void test_table_wide_fields(void **state)
{
    (void)state;
    const char *body = SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n";
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s%s", HEAD "recommended_env: {NCCL_BUFFSIZE: \"8388608\"}\n", body);
    snprintf(b, sizeof b, "%s%s",
             "ccltune_table: 1\n"
             "provenance: {tool: \"ccltune 0.1.0\", created: \"2026-11-30T09:00:00Z\", source: "
             "measured, runs: \"3\"}\n"
             "fingerprint: {gpu: NVIDIA H100, cc: 9.0, gpus_per_node: 8, nodes: 1, links: "
             "nvlink, nccl: 2.28.10, cuda: \"13.0\"}\n"
             "ll128: {allowed: true, reason: measured}\n"
             "recommended_env: {NCCL_LL_BUFFSIZE: \"1048576\"}\n",
             body);
    cct_diff d;
    diff_text(a, b, -1, &d);
    dump(&d);
    assert_string_equal(lines(&d, CCT_DIFF_DECISION),
                        "fingerprint gpu: \"NVIDIA H200\" → \"NVIDIA H100\"\n"
                        "LL128: not allowed → allowed\n"
                        "recommended_env NCCL_BUFFSIZE: \"8388608\" → (none)\n"
                        "recommended_env NCCL_LL_BUFFSIZE: (none) → \"1048576\"\n");
    /* a patch release and the CUDA version do not change where the plugin applies it */
    assert_string_equal(lines(&d, CCT_DIFF_NOTE), "fingerprint nccl: \"2.28.9\" → \"2.28.10\"\n"
                                                  "fingerprint cuda: (none) → \"13.0\"\n");
    assert_string_equal(lines(&d, CCT_DIFF_RECORD),
                        "provenance created: \"2026-11-29T14:00:00Z\" → \"2026-11-30T09:00:00Z\"\n"
                        "provenance runs: (none) → \"3\"\n"
                        "LL128 reason: (none) → \"measured\"\n");
    cct_diff_destroy(&d);
}

/* nccl_constants: entries set, unset and changed are decisions, compared as written. */
static void test_constants(void **state)
{
    (void)state;
    const char *a = HEAD "nccl_constants:\n"
                         "  base_latency_us: {ring/ll: 4.9, tree/ll: 5.5}\n"
                         "  per_ch_max_tree_bw_gbps: {hopper/1node: 38.7}\n"
                         "collectives: {}\n";
    const char *b = HEAD "nccl_constants:\n"
                         "  base_latency_us: {ring/ll: 5.2, tree/ll: 5.50001}\n"
                         "  hw_latency_us: {nvlink/ring/ll: 0.45}\n"
                         "collectives: {}\n";
    cct_diff d;
    diff_text(a, b, -1, &d);
    dump(&d);
    assert_string_equal(
        lines(&d, CCT_DIFF_DECISION),
        "nccl_constants base_latency_us ring/ll: 4.9000 → 5.2000\n"
        "nccl_constants hw_latency_us nvlink/ring/ll: (NCCL's) → 0.4500\n"
        "nccl_constants per_ch_max_tree_bw_gbps hopper/1node: 38.7000 → (NCCL's)\n");
    assert_false(cct_diff_decisions_equal(&d));
    assert_int_equal(d.changes[0].kind, CCT_DIFF_CONSTANT);
    cct_diff_destroy(&d);
    /* an empty block and no block: the same behaviour */
    diff_text(HEAD "nccl_constants: {}\ncollectives: {}\n", HEAD "collectives: {}\n", -1, &d);
    assert_int_equal(d.n_changes, 0);
    cct_diff_destroy(&d);
}

/* Provenance alone never makes the tables differ. */
static void test_provenance_only(void **state)
{
    (void)state;
    const char *body = SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n";
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s%s", HEAD, body);
    snprintf(b, sizeof b, "%s%s",
             "ccltune_table: 1\n"
             "provenance: {tool: \"ccltune 0.2.0\", created: \"2026-12-01T00:00:00Z\", source: "
             "measured, note: again}\n"
             "fingerprint: {gpu: NVIDIA H200, cc: 9.0, gpus_per_node: 8, nodes: 1, links: "
             "nvlink, nccl: 2.28.9}\n"
             "ll128: {allowed: false}\n",
             body);
    cct_diff d;
    diff_text(a, b, -1, &d);
    assert_true(cct_diff_decisions_equal(&d));
    assert_int_equal(d.n_level[CCT_DIFF_NOTE], 0);
    assert_int_equal(d.n_level[CCT_DIFF_RECORD], 3);
    for (size_t i = 0; i < d.n_changes; i++)
        assert_int_equal(d.changes[i].kind, CCT_DIFF_PROVENANCE);
    cct_diff_destroy(&d);
}

/* Sections built in memory out of the writer's order still come out in it. */
static void test_in_memory_order(void **state)
{
    (void)state;
    cct_table a, b;
    cct_table_init(&a);
    cct_table_init(&b);
    int colls[3] = {CCT_COLL_ALLREDUCE, CCT_COLL_BROADCAST, CCT_COLL_ALLGATHER};
    for (int i = 0; i < 3; i++) {
        cct_section *s = cct_table_add_section(&b, colls[i], 4, 1);
        assert_non_null(s);
        cct_rule r = cct_rule_blank();
        r.max_bytes = CCT_BYTES_INF;
        assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    }
    cct_diff d;
    cct_error err;
    assert_int_equal(cct_table_diff(&a, &b, NULL, &d, &err), CCT_OK);
    assert_string_equal(lines(&d, -1), "broadcast, 4 ranks (1 node): section added (1 band)\n"
                                       "allgather, 4 ranks (1 node): section added (1 band)\n"
                                       "allreduce, 4 ranks (1 node): section added (1 band)\n");
    cct_diff_destroy(&d);
    assert_int_equal(d.n_changes, 0); /* destroy leaves it empty */

    cct_diff_options opt = {.threshold = -0.1};
    assert_int_equal(cct_table_diff(&a, &b, &opt, &d, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "threshold"));
    assert_int_equal(d.n_changes, 0);
    opt.threshold = NAN;
    assert_int_equal(cct_table_diff(&a, &b, &opt, &d, &err), CCT_EINVAL);
    cct_table_destroy(&a);
    cct_table_destroy(&b);
}

/* What the table shows of where a model was measured (cct_rule_model.h), and which rules
 * leave their band to NCCL. */
static void test_model_span(void **state)
{
    (void)state;
    cct_rule r = cct_rule_blank();
    assert_false(cct_rule_is_nccl_choice(&r)); /* margin_default unknown: cannot tell */
    r.margin_default = 0.0;
    assert_true(cct_rule_is_nccl_choice(&r));
    r.channels = 2;
    assert_false(cct_rule_is_nccl_choice(&r));
    r.channels = 0;
    r.chunk_bytes = 131072;
    assert_false(cct_rule_is_nccl_choice(&r));

    const char *text = HEAD SECTION8
        "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, channels: 0, "
        "margin_default: 0}\n"
        "        - {min_bytes: 64KiB, max_bytes: 1MiB, algo: ring, proto: ll, channels: 2, "
        "margin_default: 0.1}\n"
        "        - {min_bytes: 1MiB, max_bytes: inf, algo: ring, proto: simple, channels: 0, "
        "margin_default: 0}\n"
        "      models:\n"
        "        - {algo: ring, proto: ll, kind: linear, alpha_us: 5}\n"
        "        - {algo: ring, proto: ll, channels: 2, kind: linear, alpha_us: 7}\n"
        "        - {algo: ring, proto: simple, kind: piecewise, segments: [{from_bytes: 0, "
        "alpha_us: 9}, {from_bytes: 4KiB, alpha_us: 10}, {from_bytes: 1MiB, alpha_us: 11}]}\n";
    cct_table t;
    load(text, &t);
    const cct_section *s = &t.sections[0];
    /* ring/ll: one line, only a rule of NCCL's choice uses it: nothing backs it anywhere */
    cct_size_span span = cct_model_table_span(&t, s, &s->models[0]);
    assert_false(span.known);
    assert_false(cct_span_covers(&span, 4096));
    assert_true(isnan(cct_model_predict_within(&s->models[0], &span, 4096)));
    /* ring/ll 2 channels: its own band [64 KiB, 1 MiB), and a factor of 2 either side */
    span = cct_model_table_span(&t, s, &s->models[1]);
    assert_true(span.known);
    assert_int_equal(span.lo, 65536);
    assert_int_equal(span.hi, 1048575);
    assert_true(cct_span_covers(&span, 32768));
    assert_false(cct_span_covers(&span, 32767));
    assert_true(cct_span_covers(&span, 2097150));
    assert_false(cct_span_covers(&span, 2097151));
    assert_float_equal(cct_model_predict_within(&s->models[1], &span, 100000), 7.0, 1e-12);
    /* ring/simple: its line starts (4 KiB, 1 MiB); the band of NCCL's choice adds nothing */
    span = cct_model_table_span(&t, s, &s->models[2]);
    assert_true(span.known);
    assert_int_equal(span.lo, 4096);
    assert_int_equal(span.hi, 1048576);
    assert_true(cct_span_covers(&span, 2048));
    assert_false(cct_span_covers(&span, 2047));
    assert_false(cct_span_covers(&span, 4u << 20));
    cct_table_destroy(&t);
}

/* A band left to NCCL reads "left to NCCL (ALGO/PROTO)", and gets a percentage only where
 * both sides are backed at one size inside the range (its middle, 128 KiB, else a band's
 * ref_bytes): ring/ll128 by its model; NCCL's side by the twin's model within its span, or by
 * the band's predicted_us at exactly its ref_bytes.  The twin below is a flat 10 us fitted on two
 * sizes somewhere: believed, it would read "900 % faster". */
#define LL128_A                                                                                    \
    HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, "             \
                  "margin_default: 0}\n"                                                           \
                  "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: ll128, "        \
                  "margin_default: 0.1, ref_bytes: 1MiB}\n"                                        \
                  "      models:\n"                                                                \
                  "        - {algo: ring, proto: ll128, kind: linear, alpha_us: 100}\n"
#define NCCL_B(PRED, TWIN)                                                                         \
    HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, "             \
                  "margin_default: 0}\n"                                                           \
                  "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: simple, "       \
                  "margin_default: 0" PRED "}\n"                                                   \
                  "      models:\n"                                                                \
                  "        - {algo: ring, proto: ll128, kind: linear, alpha_us: 100}\n" TWIN
#define TWO_SIZE_TWIN                                                                              \
    "        - {algo: ring, proto: simple, kind: linear, alpha_us: 10, n_points: 2}\n"

static void test_left_to_nccl(void **state)
{
    (void)state;
    cct_diff d;
    /* nothing backs NCCL's side at 128 KiB (the range's middle), but NCCL's default was
     * measured at 16 MiB (90 us), where ring/ll128's model says 100 us: both are compared
     * there, at the same size, either way round */
    diff_text(LL128_A, NCCL_B(", predicted_us: 90, ref_bytes: 16MiB", TWO_SIZE_TWIN), -1, &d);
    dump(&d);
    assert_int_equal(d.n_level[CCT_DIFF_DECISION], 1); /* and models added */
    assert_true(d.changes[0].to.nccl);
    assert_false(d.changes[0].from.nccl);
    assert_float_equal(d.changes[0].speedup_lo, 100.0 / 90.0 - 1, 1e-12);
    assert_string_equal(d.changes[0].text,
                        "allreduce, 8 ranks (1 node), 64 KiB–inf: ring/ll128 → left to NCCL "
                        "(ring/simple), predicted 11 % faster");
    cct_diff_destroy(&d);
    diff_text(NCCL_B(", predicted_us: 90, ref_bytes: 16MiB", TWO_SIZE_TWIN), LL128_A, -1, &d);
    assert_int_equal(d.n_level[CCT_DIFF_DECISION], 1); /* and models added */
    assert_string_equal(d.changes[0].text,
                        "allreduce, 8 ranks (1 node), 64 KiB–inf: left to NCCL (ring/simple) → "
                        "ring/ll128, predicted 11 % slower");
    cct_diff_destroy(&d);
    /* measured at 32 KiB, outside the changed range: no percentage */
    diff_text(LL128_A, NCCL_B(", predicted_us: 90, ref_bytes: 32KiB", TWO_SIZE_TWIN), -1, &d);
    assert_true(isnan(d.changes[0].speedup_lo));
    cct_diff_destroy(&d);

    /* NCCL's default measured 90 us at 128 KiB (the band's predicted_us there) */
    diff_text(LL128_A, NCCL_B(", predicted_us: 90, ref_bytes: 128KiB", TWO_SIZE_TWIN), -1, &d);
    assert_int_equal(d.n_level[CCT_DIFF_DECISION], 1); /* and models added */
    assert_float_equal(d.changes[0].speedup_lo, 100.0 / 90.0 - 1, 1e-12);
    assert_string_equal(d.changes[0].text,
                        "allreduce, 8 ranks (1 node), 64 KiB–inf: ring/ll128 → left to NCCL "
                        "(ring/simple), predicted 11 % faster");
    cct_diff_destroy(&d);

    /* a twin measured around 128 KiB (line starts at 32 KiB and 256 KiB) backs it */
    diff_text(LL128_A,
              NCCL_B("", "        - {algo: ring, proto: simple, kind: piecewise, segments: "
                         "[{from_bytes: 0, alpha_us: 50}, {from_bytes: 32KiB, alpha_us: 50}, "
                         "{from_bytes: 256KiB, alpha_us: 50}]}\n"),
              -1, &d);
    assert_int_equal(d.n_level[CCT_DIFF_DECISION], 1); /* and models added */
    assert_string_equal(d.changes[0].text,
                        "allreduce, 8 ranks (1 node), 64 KiB–inf: ring/ll128 → left to NCCL "
                        "(ring/simple), predicted 100 % faster");
    cct_diff_destroy(&d);
}

/* A rule of NCCL's choice and one naming the same configuration with NCCL's channels make the
 * plugin do the same: no change, and no moved prediction either (NCCL's default runs). */
static void test_left_to_nccl_same_config(void **state)
{
    (void)state;
    const char *chosen =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: simple, "
                      "margin_default: 0.2}\n"
                      "      models:\n"
                      "        - {algo: ring, proto: simple, kind: linear, alpha_us: 100}\n";
    const char *faster =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: simple, "
                      "margin_default: 0.3}\n"
                      "      models:\n"
                      "        - {algo: ring, proto: simple, kind: linear, alpha_us: 50}\n";
    const char *left =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: simple, "
                      "margin_default: 0}\n"
                      "      models:\n"
                      "        - {algo: ring, proto: simple, kind: linear, alpha_us: 50}\n";
    cct_diff d;
    diff_text(chosen, faster, -1, &d); /* the control: the table's own choice got faster */
    assert_string_equal(lines(&d, -1), "allreduce, 8 ranks (1 node), 0 B–inf: ring/simple "
                                       "unchanged, now predicted 100 % faster\n"
                                       "allreduce, 8 ranks (1 node): models 1 changed\n");
    cct_diff_destroy(&d);
    diff_text(chosen, left, -1, &d);
    dump(&d);
    assert_true(cct_diff_decisions_equal(&d));
    assert_int_equal(d.n_level[CCT_DIFF_NOTE], 0);
    assert_string_equal(lines(&d, -1), "allreduce, 8 ranks (1 node): models 1 changed\n");
    cct_diff_destroy(&d);
}

/* Ranges merged into one line get a percentage only when every one of them has one: here
 * [0, 4 KiB) has no prediction for ring/simple, [4 KiB, inf) has its predicted_us. */
static void test_merged_partly_unknown(void **state)
{
    (void)state;
    const char *a = HEAD SECTION8
        "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll, predicted_us: 100}\n";
    const char *b =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 4KiB, algo: ring, proto: simple}\n"
                      "        - {min_bytes: 4KiB, max_bytes: inf, algo: ring, proto: simple, "
                      "predicted_us: 50, ref_bytes: 8KiB}\n";
    cct_diff d;
    diff_text(a, b, -1, &d);
    assert_int_equal(d.n_changes, 1);
    assert_true(isnan(d.changes[0].speedup_lo) && isnan(d.changes[0].speedup_hi));
    assert_string_equal(d.changes[0].text,
                        "allreduce, 8 ranks (1 node), 0 B–inf: ring/ll → ring/simple");
    cct_diff_destroy(&d);
}

/* The evidence of a rule: gain over NCCL's choice with its interval, the run's noise floor. */
static void evidence(cct_rule *r, double gain, double lo, double hi, double noise)
{
    r->gain = gain;
    r->gain_lo = lo;
    r->gain_hi = hi;
    r->noise = noise;
    r->cycles = 4;
}

#define ONE_BAND(ALGO, PROTO, MD)                                                                  \
    HEAD SECTION8 "        - {min_bytes: 0, max_bytes: inf, algo: " ALGO ", proto: " PROTO         \
                  ", margin_default: " MD ", ref_bytes: 64KiB}\n"

/* Diff a (ring/ll, evidence ea) against b (cb's rule with evidence eb); gains as given. */
static void diff_evidence(const char *ta_text, const double *ea, const char *tb_text,
                          const double *eb, cct_diff *d)
{
    cct_table ta, tb;
    load(ta_text, &ta);
    load(tb_text, &tb);
    if (ea)
        evidence(&ta.sections[0].rules[0], ea[0], ea[1], ea[2], ea[3]);
    if (eb)
        evidence(&tb.sections[0].rules[0], eb[0], eb[1], eb[2], eb[3]);
    cct_error err;
    if (cct_table_diff(&ta, &tb, NULL, d, &err) != CCT_OK)
        fail_msg("diff failed: %s", err.msg);
    cct_table_destroy(&ta);
    cct_table_destroy(&tb);
}

/* A changed band is within noise when neither choice's measured gain over NCCL lies above the
 * other's by more than the larger noise floor; significant when one does, or when a side has
 * no evidence.  A band left to NCCL has gain 1 exactly. */
static void test_significance_classes(void **state)
{
    (void)state;
    cct_diff d;
    const char *a = ONE_BAND("ring", "ll", "0.3"), *b = ONE_BAND("ring", "simple", "0.3");
    /* 1.30 [1.25, 1.35] vs 1.32 [1.26, 1.38], noise 3 %: the two runs cannot tell them apart */
    const double e_a[] = {1.30, 1.25, 1.35, 0.03}, e_close[] = {1.32, 1.26, 1.38, 0.03};
    diff_evidence(a, e_a, b, e_close, &d);
    assert_int_equal(d.n_level[CCT_DIFF_DECISION], 1);
    assert_true(d.changes[0].within_noise);
    assert_int_equal(d.n_within_noise, 1);
    assert_int_equal(d.n_significant, 0);
    assert_true(cct_diff_no_significant(&d));
    assert_false(cct_diff_decisions_equal(&d));
    assert_non_null(strstr(d.changes[0].text, "[within noise]"));
    cct_diff_destroy(&d);
    /* 1.60 [1.55, 1.66]: its interval is above the old one's by 14 %, beyond the 3 % noise */
    const double e_far[] = {1.60, 1.55, 1.66, 0.03};
    diff_evidence(a, e_a, b, e_far, &d);
    assert_false(d.changes[0].within_noise);
    assert_false(d.changes[0].no_evidence);
    assert_int_equal(d.n_significant, 1);
    assert_null(strstr(d.changes[0].text, "noise"));
    cct_diff_destroy(&d);
    /* ... and the same the other way round (slower) */
    diff_evidence(b, e_far, a, e_a, &d);
    assert_int_equal(d.n_significant, 1);
    cct_diff_destroy(&d);
    /* the gap (1.55 over 1.35: 14 %) within a 20 % noise floor of either run */
    const double e_far_noisy[] = {1.60, 1.55, 1.66, 0.20};
    diff_evidence(a, e_a, b, e_far_noisy, &d);
    assert_true(d.changes[0].within_noise);
    cct_diff_destroy(&d);
    /* left to NCCL (gain 1) against a 3 % gain whose interval reaches 1: within noise */
    const char *nccl = ONE_BAND("ring", "simple", "0");
    const double e_small[] = {1.03, 0.99, 1.08, 0.04}, e_big[] = {1.50, 1.40, 1.60, 0.04};
    diff_evidence(a, e_small, nccl, NULL, &d);
    assert_true(d.changes[0].to.nccl);
    assert_true(d.changes[0].within_noise);
    cct_diff_destroy(&d);
    diff_evidence(a, e_big, nccl, NULL, &d);
    assert_false(d.changes[0].within_noise);
    cct_diff_destroy(&d);
    /* no evidence on one side (a table written before evidence): significant */
    diff_evidence(a, NULL, b, e_close, &d);
    assert_false(d.changes[0].within_noise);
    assert_true(d.changes[0].no_evidence);
    assert_int_equal(d.n_significant, 1);
    assert_false(cct_diff_no_significant(&d));
    cct_diff_destroy(&d);
    /* a rule without a baseline (imported logs) has no gain to compare */
    cct_table ta, tb;
    load(a, &ta);
    load(b, &tb);
    evidence(&ta.sections[0].rules[0], 1.30, 1.25, 1.35, 0.03);
    tb.sections[0].rules[0].no_baseline = true;
    cct_error err;
    assert_int_equal(cct_table_diff(&ta, &tb, NULL, &d, &err), CCT_OK);
    assert_true(d.changes[0].no_evidence);
    assert_int_equal(d.n_significant, 1);
    cct_diff_destroy(&d);
    cct_table_destroy(&ta);
    cct_table_destroy(&tb);
}

/* Two tables' numbers are compared at the same size: a band's predicted_us only at its own
 * ref_bytes, against the other configuration's model there -- not against the other table's
 * number at another size (both models agree within 5 %: no "96 % faster"). */
static void test_percentages_at_one_size(void **state)
{
    (void)state;
    const char *a =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 8MiB, algo: ring, proto: ll, "
                      "margin_default: 0, predicted_us: 100, ref_bytes: 1MiB}\n"
                      "        - {min_bytes: 8MiB, max_bytes: inf, algo: ring, proto: simple, "
                      "channels: 64, margin_default: 0.1, predicted_us: 1000, ref_bytes: 32MiB}\n";
    const char *b =
        HEAD SECTION8 "        - {min_bytes: 0, max_bytes: 8MiB, algo: ring, proto: ll, "
                      "margin_default: 0, predicted_us: 100, ref_bytes: 1MiB}\n"
                      "        - {min_bytes: 8MiB, max_bytes: inf, algo: ring, proto: simple, "
                      "margin_default: 0, predicted_us: 510, ref_bytes: 16MiB}\n";
    /* at 16 MiB the old table says nothing about ring/simple with 64 channels (its number is
     * for 32 MiB, no model): no percentage rather than 1000 us against 510 us */
    cct_diff d;
    diff_text(a, b, -1, &d);
    assert_int_equal(d.n_level[CCT_DIFF_DECISION], 1);
    assert_true(isnan(d.changes[0].speedup_lo));
    cct_diff_destroy(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical),
        cmocka_unit_test(test_band_split),
        cmocka_unit_test(test_algorithm_change_wording),
        cmocka_unit_test(test_predicted_from_bands),
        cmocka_unit_test(test_merged_ranges),
        cmocka_unit_test(test_different_neighbours_not_merged),
        cmocka_unit_test(test_channels_and_chunk),
        cmocka_unit_test(test_sections_added_removed),
        cmocka_unit_test(test_predicted_time_threshold),
        cmocka_unit_test(test_table_wide_fields),
        cmocka_unit_test(test_provenance_only),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_in_memory_order),
        cmocka_unit_test(test_model_span),
        cmocka_unit_test(test_left_to_nccl),
        cmocka_unit_test(test_left_to_nccl_same_config),
        cmocka_unit_test(test_merged_partly_unknown),
        cmocka_unit_test(test_significance_classes),
        cmocka_unit_test(test_percentages_at_one_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
