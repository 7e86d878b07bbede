/*
 * test_table_read.c - the strict table loader on valid tables and on chosen bad ones.
 *
 * The valid side checks that every field of tests/data/tables/full.yaml lands in the
 * model with its value, and that a minimal hand-written table gets the documented defaults.
 * The invalid side checks exact FILE:LINE:COLUMN positions for errors from each layer (YAML
 * syntax, schema, semantic checks of a section, whole-table checks), that a failed load
 * leaves the table empty, and that hostile inputs (deep nesting, oversize, anchors) are
 * refused without crashing.  The exhaustive bad-input corpus is test_bad_tables.c.
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

#include "cct_constants.h"
#include "cct_table.h"
#include "fixture_test_util.h"

static char *data_path(const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    size_t n = strlen(src) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", src, rel);
    return p;
}

static cct_status load_text(const char *text, cct_table *t, cct_error *err)
{
    return cct_table_load_buffer(text, strlen(text), "t.yaml", t, err);
}

/* Load text, expect failure with exactly this message (file name included). */
static void expect_error(const char *text, const char *message)
{
    cct_table t;
    cct_error err;
    cct_status st = load_text(text, &t, &err);
    if (st == CCT_OK)
        fail_msg("loaded, expected: %s", message);
    if (strcmp(err.msg, message) != 0)
        fail_msg("got      '%s'\nexpected '%s'", err.msg, message);
    assert_int_equal(t.n_sections, 0);
    assert_null(t.provenance.tool);
    assert_null(t.sections);
}

#define HEAD                                                                                       \
    "ccltune_table: 1\n"                                                                           \
    "provenance: {tool: t, created: c, source: s}\n"                                               \
    "fingerprint: {gpu: g, cc: \"9.0\", gpus_per_node: 1, nodes: 1, links: socket, nccl: "         \
    "\"2.28\"}\n"                                                                                  \
    "ll128: {allowed: true}\n"

static void test_full_table_every_field(void **state)
{
    (void)state;
    char *path = data_path("data/tables/full.yaml");
    cct_table t;
    cct_error err;
    cct_status st = cct_table_load_file(path, &t, &err);
    if (st != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(t.format, CCT_TABLE_FORMAT); /* a version-1 file, in today's model */
    assert_string_equal(t.provenance.tool, "ccltune 0.1.0");
    assert_string_equal(t.provenance.created, "2026-11-29T14:00:00Z");
    assert_string_equal(t.provenance.nccl, "2.28.9");
    assert_string_equal(t.provenance.source, "measured");
    assert_string_equal(t.provenance.runs, "3,4");
    assert_non_null(strstr(t.provenance.note, "MPS"));
    assert_string_equal(t.fingerprint.gpu, "NVIDIA H200");
    assert_int_equal(t.fingerprint.cc, 90);
    assert_int_equal(t.fingerprint.gpus_per_node, 1);
    assert_int_equal(t.fingerprint.nodes, 1);
    assert_int_equal(t.fingerprint.ranks_per_gpu, 4);
    assert_string_equal(t.fingerprint.links, "socket");
    assert_string_equal(t.fingerprint.nccl, "2.28.9");
    assert_string_equal(t.fingerprint.cuda, "13.0");
    assert_false(t.ll128_allowed);
    assert_non_null(strstr(t.ll128_reason, "Socket"));
    assert_int_equal(t.n_env, 2);
    assert_string_equal(t.env[0].key, "NCCL_BUFFSIZE");
    assert_string_equal(t.env[0].value, "8388608");
    assert_string_equal(t.env[1].key, "NCCL_NTHREADS");
    assert_string_equal(t.env[1].value, "256"); /* an unquoted integer keeps its text */

    assert_int_equal(t.n_sections, 3);
    const cct_section *ag = cct_table_find_section(&t, CCT_COLL_ALLGATHER, 4, 4, 1, 0);
    assert_non_null(ag);
    assert_int_equal(ag->n_rules, 1);
    const cct_section *ar = cct_table_find_section(&t, CCT_COLL_ALLREDUCE, 4, 4, 1, 0);
    assert_non_null(ar);
    assert_int_equal(ar->pipe_ops, CCT_ANY);
    assert_int_equal(ar->reg_buff, CCT_ANY);
    assert_int_equal(ar->n_rules, 3);
    const cct_rule *r = &ar->rules[0];
    assert_int_equal(r->min_bytes, 0);
    assert_int_equal(r->max_bytes, 8192);
    assert_int_equal(r->algo, CCT_ALGO_TREE);
    assert_int_equal(r->proto, CCT_PROTO_LL);
    assert_int_equal(r->channels, 2);
    assert_int_equal(r->chunk_bytes, 0);
    assert_true(r->predicted_us == 89.0);
    assert_true(r->margin == 0.33);
    assert_true(r->margin_default == 0.33);
    assert_int_equal(r->ref_bytes, 4096);
    r = &ar->rules[1];
    assert_int_equal(r->ref_bytes, 0);
    assert_int_equal(r->proto, CCT_PROTO_SIMPLE);
    assert_int_equal(r->chunk_bytes, 131072);
    r = &ar->rules[2];
    assert_int_equal(r->max_bytes, CCT_BYTES_INF);
    assert_true(isnan(r->predicted_us) && isnan(r->margin) && isnan(r->margin_default));

    assert_int_equal(ar->n_models, 4);
    const cct_model *m = &ar->models[0];
    assert_int_equal(m->algo, CCT_ALGO_TREE);
    assert_int_equal(m->kind, CCT_MODEL_LINEAR);
    assert_true(m->alpha_us == 30.1 && m->alpha_ci == 1.2);
    assert_true(m->beta_gbps == 3.2 && m->beta_ci == 0.1);
    assert_true(m->r2 == 0.998);
    assert_int_equal(m->n_points, 19);
    assert_false(m->poor_fit);
    assert_true(isnan(m->alpha2_us));
    assert_int_equal(m->n_segments, 0);
    m = &ar->models[1];
    assert_int_equal(m->ll_buffsize, 0);
    assert_true(isnan(m->alpha_ci) && isnan(m->r2));
    m = &ar->models[2];
    assert_int_equal(m->kind, CCT_MODEL_PIECEWISE);
    assert_int_equal(m->ll_buffsize, 1048576);
    assert_int_equal(m->ll128_buffsize, 4194304);
    assert_int_equal(m->n_segments, 3);
    assert_int_equal(m->segments[0].from_bytes, 0);
    assert_true(m->segments[0].alpha_us == 20.0 && m->segments[0].alpha_ci == 0.5);
    assert_true(isnan(m->segments[0].beta_gbps)); /* flat */
    assert_int_equal(m->segments[1].from_bytes, 16384);
    assert_true(m->segments[1].beta_gbps == 1.5 && m->segments[1].beta_ci == 0.05);
    assert_true(isnan(m->segments[1].alpha_ci));
    assert_int_equal(m->segments[2].from_bytes, 262144);
    /* the line fields mirror the segments, as the fitter leaves them */
    assert_true(m->alpha_us == 20.0 && m->alpha_ci == 0.5 && isnan(m->beta_gbps));
    assert_int_equal(m->break_bytes, 16384);
    assert_true(m->alpha2_us == 80.0 && m->beta2_gbps == 2.75);
    m = &ar->models[3];
    assert_int_equal(m->kind, CCT_MODEL_SEGMENTED);
    assert_int_equal(m->buffsize, 8388608);
    assert_int_equal(m->break_bytes, 1048576);
    assert_true(m->alpha2_us == 150.0 && m->beta2_gbps == 4.0);
    assert_true(isnan(m->alpha_ci));
    assert_true(m->poor_fit);
    assert_int_equal(ar->n_penalties, 2);
    assert_int_equal(ar->penalties[0].proto, CCT_PROTO_LL);
    assert_int_equal(ar->penalties[0].offset, 4);
    assert_true(ar->penalties[0].penalty == 0.03);

    const cct_section *ar2 = cct_table_find_section(&t, CCT_COLL_ALLREDUCE, 4, 4, 2, 1);
    assert_non_null(ar2);
    assert_ptr_not_equal(ar2, ar);
    assert_int_equal(ar2->pipe_ops, 2);
    assert_int_equal(ar2->reg_buff, 1);
    assert_int_equal(ar2->rules[0].max_bytes, 1 << 20); /* "1MiB" */
    assert_int_equal(cct_section_lookup(ar2, (1 << 20) - 1)->proto, CCT_PROTO_LL);
    assert_int_equal(cct_section_lookup(ar2, 1 << 20)->channels, 4);
    /* the last band is open-ended: the largest size there is falls in it too */
    assert_ptr_equal(cct_section_lookup(ar2, UINT64_MAX), &ar2->rules[ar2->n_rules - 1]);
    assert_ptr_equal(cct_section_lookup(ar2, UINT64_MAX - 1), &ar2->rules[ar2->n_rules - 1]);
    cct_table_destroy(&t);
    free(path);
}

static void test_minimal_table_defaults(void **state)
{
    (void)state;
    char *path = data_path("data/tables/minimal.yaml");
    cct_table t;
    cct_error err;
    cct_status st = cct_table_load_file(path, &t, &err);
    if (st != CCT_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(t.provenance.created, "2026-11-29");
    assert_null(t.provenance.nccl);
    assert_null(t.provenance.runs);
    assert_null(t.provenance.note);
    assert_string_equal(t.fingerprint.gpu, "NVIDIA H200");
    assert_int_equal(t.fingerprint.cc, 90); /* an unquoted 9.0 is read as its text */
    assert_int_equal(t.fingerprint.ranks_per_gpu, 1);
    assert_null(t.fingerprint.cuda);
    assert_null(t.ll128_reason);
    assert_int_equal(t.n_env, 0);
    assert_int_equal(t.n_sections, 1);
    const cct_section *s = &t.sections[0];
    assert_int_equal(s->coll, CCT_COLL_ALLREDUCE);
    assert_int_equal(s->pipe_ops, CCT_ANY);
    assert_int_equal(s->n_models, 0);
    assert_int_equal(s->rules[0].max_bytes, 65536);
    assert_int_equal(s->rules[0].channels, 0);
    assert_true(isnan(s->rules[0].predicted_us));
    assert_int_equal(s->rules[1].algo, CCT_ALGO_TREE);
    cct_table_destroy(&t);
    free(path);
}

static void test_no_sections_is_valid(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    assert_int_equal(load_text(HEAD "collectives: {}\n", &t, &err), CCT_OK);
    assert_int_equal(t.n_sections, 0);
    assert_true(t.ll128_allowed);
    cct_table_destroy(&t);
}

static void test_positions_schema(void **state)
{
    (void)state;
    expect_error(HEAD "collectives:\n  allreduce:\n    - ranks: 2\n      nodes: 1\n      rules:\n"
                      "        - {min_bytes: 0, max_bytes: inf, algoo: ring, proto: ll}\n",
                 "t.yaml:10:42: unknown key 'algoo' (did you mean 'algo'?)");
    expect_error(HEAD "collectives:\n  allreduce:\n    - ranks: 2\n      nodes: 1\n      rules:\n"
                      "        - {min_bytes: 0, max_bytes: inf, algo: ring}\n",
                 "t.yaml:10:11: a rule is missing the required key 'proto'");
    expect_error(HEAD "collectives:\n  allreduce:\n    - ranks: 2\n      nodes: x\n",
                 "t.yaml:8:14: 'nodes' must be an integer, got 'x'");
    expect_error(HEAD "collectives: []\n", "t.yaml:5:14: 'collectives' must be a mapping, not a "
                                           "sequence");
    /* columns count characters, not bytes: the key follows a 2-byte and a 4-byte character */
    expect_error("ccltune_table: 1\nprovenance: {tool: \"\xc3\xa9\xf0\x9f\x98\x80\", x: 1}\n",
                 "t.yaml:2:26: unknown key 'x'");
}

static void test_positions_syntax(void **state)
{
    (void)state;
    expect_error("ccltune_table: 1\nprovenance: {tool: t, created: c]\n",
                 "t.yaml:2:33: YAML syntax error: did not find expected ',' or '}' (while "
                 "parsing a flow mapping at 2:13)");
    expect_error("ccltune_table: 1\nprovenance: {tool: \"a\x01\"}\n",
                 "t.yaml:2:22: invalid input: control characters are not allowed (#x1)");
}

static void test_positions_semantic(void **state)
{
    (void)state;
    /* the band check runs in cct_table_check_section; the reader points at the rule */
    expect_error(HEAD "collectives:\n  reduce:\n    - ranks: 2\n      nodes: 1\n      rules:\n"
                      "        - {min_bytes: 0, max_bytes: 100, algo: ring, proto: ll}\n"
                      "        - {min_bytes: 50, max_bytes: inf, algo: ring, proto: ll}\n",
                 "t.yaml:11:11: reduce ranks=2 nodes=1 rule 2: overlaps or is out of order with "
                 "rule 1");
    expect_error(HEAD "collectives:\n  reduce:\n    - ranks: 2\n      nodes: 3\n      rules:\n"
                      "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n",
                 "t.yaml:7:7: reduce ranks=2 nodes=3: nodes must be 1..ranks");
    /* duplicates across collectives' lists: reported at the second, naming the first */
    expect_error(HEAD "collectives:\n  reduce:\n"
                      "    - {ranks: 2, nodes: 1, rules: [{min_bytes: 0, max_bytes: inf, algo: "
                      "ring, proto: ll}]}\n"
                      "    - {ranks: 2, nodes: 1, rules: [{min_bytes: 0, max_bytes: inf, algo: "
                      "tree, proto: ll}]}\n",
                 "t.yaml:8:7: duplicate section reduce ranks=2 nodes=1 (first at 7:7)");
}

#define HEAD2                                                                                      \
    "ccltune_table: 2\n"                                                                           \
    "provenance: {tool: t, measured: \"2026-12-01T10:00:00Z\", source: s,\n"                       \
    "  command: \"ccltune search --channels nccl,1,max\\nccltune search --cycles 8\"}\n"           \
    "fingerprint: {gpu: g, cc: \"9.0\", gpus_per_node: 4, nodes: 1, links: unknown, nccl: "        \
    "\"2.28.9\"}\n"                                                                                \
    "ll128: {allowed: true}\n"

/* Format 2: provenance `measured` and `command`, rules' `evidence` (numbers or none),
 * `channels: max` in rules and models, links `unknown`, and rules laid over several lines. */
static void test_format2_fields(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    const char *text =
        HEAD2 "collectives:\n  allreduce:\n    - ranks: 4\n      nodes: 1\n      rules:\n"
              "        - {min_bytes: 0, max_bytes: 65536, algo: tree, proto: ll, channels: max,  "
              "# 0 B to 64 KiB\n"
              "           ref_bytes: 32768,  # a comment inside the flow\n"
              "           evidence: {gain: 1.62, ci: [1.55, 1.7], noise: 0.04, cycles: 8}}\n"
              "        - {min_bytes: 65536, max_bytes: inf, algo: ring, proto: simple,\n"
              "           evidence: none}  # no NCCL baseline\n"
              "      models:\n"
              "        - {algo: tree, proto: ll, channels: max, kind: linear, alpha_us: 3}\n";
    if (load_text(text, &t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(t.provenance.created, "2026-12-01T10:00:00Z");
    assert_string_equal(t.provenance.command,
                        "ccltune search --channels nccl,1,max\nccltune search --cycles 8");
    assert_string_equal(t.fingerprint.links, "unknown");
    const cct_section *s = &t.sections[0];
    const cct_rule *r = &s->rules[0];
    assert_int_equal(r->channels, CCT_TABLE_MAX_CHANNELS);
    assert_int_equal(r->ref_bytes, 32768);
    assert_true(r->gain == 1.62 && r->gain_lo == 1.55 && r->gain_hi == 1.7);
    assert_true(r->noise == 0.04);
    assert_int_equal(r->cycles, 8);
    assert_false(r->no_baseline);
    assert_true(s->rules[1].no_baseline);
    assert_int_equal(s->rules[1].cycles, 0);
    assert_true(s->rules[1].gain == 0);
    assert_int_equal(s->models[0].channels, CCT_TABLE_MAX_CHANNELS);
    cct_table_destroy(&t);
}

/* Each new key is refused where its version does not have it, with a message that says so. */
static void test_format2_keys_by_version(void **state)
{
    (void)state;
    const char *rules =
        "collectives:\n  allreduce:\n    - ranks: 4\n      nodes: 1\n      rules:\n";
    char text[2048];
    snprintf(text, sizeof text,
             "%s%s        - {min_bytes: 0, max_bytes: inf, algo: ring, "
             "proto: ll, evidence: none}\n",
             HEAD, rules);
    expect_error(text, "t.yaml:10:75: 'evidence' is new in format 2, but this table says "
                       "'ccltune_table: 1'");
    snprintf(text, sizeof text,
             "%s%s        - {min_bytes: 0, max_bytes: inf, algo: ring, "
             "proto: ll, channels: max}\n",
             HEAD, rules);
    expect_error(text, "t.yaml:10:75: 'channels: max' is new in format 2, but this table says "
                       "'ccltune_table: 1'");
    expect_error("ccltune_table: 2\nprovenance: {tool: t, created: c, source: s}\n",
                 "t.yaml:2:32: 'created' is called 'measured' since format 2 (it is when the "
                 "measurements were taken, not when the file was written)");
    expect_error("ccltune_table: 1\nprovenance: {tool: t, measured: c, source: s}\n",
                 "t.yaml:2:33: 'measured' is new in format 2, but this table says "
                 "'ccltune_table: 1'");
    expect_error("ccltune_table: 2\nprovenance: {tool: t, source: s}\n",
                 "t.yaml:2:13: 'provenance' is missing the required key 'measured'");
    expect_error("ccltune_table: 1\nprovenance: {tool: t, source: s}\n",
                 "t.yaml:2:13: 'provenance' is missing the required key 'created'");
}

static bool same_num(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Everything the plugin, explain, diff and plot read from a table, equal in a and b. */
static void assert_same_table(const cct_table *a, const cct_table *b, const char *what)
{
    const cct_provenance *p = &a->provenance, *q = &b->provenance;
    if (!same_str(p->tool, q->tool) || !same_str(p->created, q->created) ||
        !same_str(p->nccl, q->nccl) || !same_str(p->source, q->source) ||
        !same_str(p->runs, q->runs) || !same_str(p->note, q->note))
        fail_msg("%s: provenance differs", what);
    const cct_fingerprint *f = &a->fingerprint, *g = &b->fingerprint;
    if (!same_str(f->gpu, g->gpu) || f->cc != g->cc || f->gpus_per_node != g->gpus_per_node ||
        f->nodes != g->nodes || f->ranks_per_gpu != g->ranks_per_gpu ||
        !same_str(f->links, g->links) || !same_str(f->nccl, g->nccl) || !same_str(f->cuda, g->cuda))
        fail_msg("%s: fingerprint differs", what);
    assert_int_equal(a->ll128_allowed, b->ll128_allowed);
    assert_int_equal(a->n_env, b->n_env);
    assert_int_equal(a->constants.present, b->constants.present);
    assert_int_equal(cct_constants_count(&a->constants), cct_constants_count(&b->constants));
    assert_int_equal(a->n_sections, b->n_sections);
    for (size_t i = 0; i < a->n_sections; i++) {
        const cct_section *s = &a->sections[i];
        const cct_section *t =
            cct_table_find_section(b, s->coll, s->ranks, s->nodes, s->pipe_ops, s->reg_buff);
        assert_non_null(t);
        assert_int_equal(s->n_rules, t->n_rules);
        assert_int_equal(s->n_models, t->n_models);
        assert_int_equal(s->n_penalties, t->n_penalties);
        for (size_t j = 0; j < s->n_rules; j++) {
            const cct_rule *x = &s->rules[j], *y = &t->rules[j];
            if (x->min_bytes != y->min_bytes || x->max_bytes != y->max_bytes ||
                x->algo != y->algo || x->proto != y->proto || x->channels != y->channels ||
                x->chunk_bytes != y->chunk_bytes || !same_num(x->predicted_us, y->predicted_us) ||
                !same_num(x->margin, y->margin) ||
                !same_num(x->margin_default, y->margin_default) || x->ref_bytes != y->ref_bytes ||
                x->gain != y->gain || x->cycles != y->cycles || x->no_baseline != y->no_baseline)
                fail_msg("%s: %s rule %zu differs", what, cct_coll_name(s->coll), j + 1);
        }
    }
}

/* Tables written by earlier builds in format 1 (the real ones under tests/data, fitted on the
 * H200, and the hand-made fixtures) load, and written again in today's format they load back
 * with the same content. */
static void test_version1_tables_load(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && find -L data/h200 data/tables data/plot data/proof -name '*.yaml' "
             "! -name '*malformed*' | sort",
             src);
    FILE *list = popen(cmd, "r");
    assert_non_null(list);
    char rel[1024];
    int n_v1 = 0;
    while (fgets(rel, sizeof rel, list)) {
        rel[strcspn(rel, "\n")] = '\0';
        char *path = data_path(rel);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char first[64] = "";
        while (fgets(first, sizeof first, f) && first[0] == '#')
            ;
        fclose(f);
        n_v1 += strcmp(first, "ccltune_table: 1\n") == 0;
        cct_table a, b;
        cct_error err;
        if (cct_table_load_file(path, &a, &err) != CCT_OK)
            fail_msg("%s", err.msg);
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        assert_non_null(mem);
        if (cct_table_write(&a, mem, &err) != CCT_OK)
            fail_msg("%s: %s", rel, err.msg);
        fclose(mem);
        assert_non_null(strstr(text, "\nccltune_table: 2\n"));
        if (cct_table_load_buffer(text, len, rel, &b, &err) != CCT_OK)
            fail_msg("%s written again: %s", rel, err.msg);
        assert_same_table(&a, &b, rel);
        cct_table_destroy(&a);
        cct_table_destroy(&b);
        free(text);
        free(path);
    }
    pclose(list);
    assert_true(n_v1 >= 20); /* the real tables of the H200 runs, and the fixtures */
}

static void test_version_and_structure(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    assert_int_equal(load_text("ccltune_table: 7\n", &t, &err), CCT_EUNSUPPORTED);
    assert_string_equal(err.msg,
                        "t.yaml:1:16: unsupported format version 7 (this build reads versions 1 "
                        "to 2)");
    assert_int_equal(load_text("ccltune_table: 0\n", &t, &err), CCT_EUNSUPPORTED);
    expect_error("ccltune_table: \"1\"\n",
                 "t.yaml:1:16: 'ccltune_table' must be the format version, an integer; got '1'");
    expect_error("", "t.yaml: empty file: no table in it");
    expect_error(HEAD "collectives: {}\n---\n",
                 "t.yaml:6:1: a second YAML document; a table file holds exactly one");
    expect_error("ccltune_table: 1\nprovenance: &a {tool: t}\n",
                 "t.yaml:2:13: anchors are not allowed in a table");
}

static void test_failed_load_leaves_table_empty(void **state)
{
    (void)state;
    /* fails late: provenance, fingerprint, env and one section were already read */
    const char *text = HEAD "recommended_env: {A: \"1\"}\ncollectives:\n  reduce:\n"
                            "    - {ranks: 2, nodes: 1, rules: [{min_bytes: 0, max_bytes: inf, "
                            "algo: ring, proto: ll}]}\n  allreduce: 5\n";
    cct_table t;
    cct_error err;
    assert_int_not_equal(load_text(text, &t, &err), CCT_OK);
    assert_non_null(strstr(err.msg, "t.yaml:9:14: 'allreduce' must be a sequence"));
    assert_int_equal(t.n_sections, 0);
    assert_int_equal(t.n_env, 0);
    assert_null(t.env);
    assert_null(t.provenance.tool);
    assert_null(t.fingerprint.gpu);
}

static void test_hostile_inputs(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    /* a million nested sequences: refused at the first level, whatever follows */
    size_t n = 1000000;
    char *deep = malloc(2 * n + 1);
    assert_non_null(deep);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    assert_int_not_equal(cct_table_load_buffer(deep, 2 * n, "deep", &t, &err), CCT_OK);
    assert_string_equal(err.msg, "deep:1:1: the table must be a mapping, not a sequence");
    /* ... and nested inside a value the schema wants as a scalar */
    const char *prefix = "ccltune_table: 1\nprovenance: {tool: ";
    size_t plen = strlen(prefix);
    char *inner = malloc(plen + 2 * n + 1);
    assert_non_null(inner);
    memcpy(inner, prefix, plen);
    memcpy(inner + plen, deep, 2 * n + 1);
    assert_int_not_equal(cct_table_load_buffer(inner, plen + 2 * n, "deep", &t, &err), CCT_OK);
    assert_string_equal(err.msg, "deep:2:20: 'tool' must be a scalar, not a sequence");
    free(inner);
    free(deep);

    /* one byte over the size limit is refused before it is parsed */
    size_t big = (size_t)CCT_TABLE_MAX_FILE_BYTES + 1;
    char *huge = malloc(big);
    assert_non_null(huge);
    memset(huge, ' ', big);
    assert_int_equal(cct_table_load_buffer(huge, big, "huge", &t, &err), CCT_EPERM);
    assert_non_null(strstr(err.msg, "more than the limit of 64 MiB"));
    free(huge);

    /* a NUL byte inside the text: the reader refuses it as a control character */
    const char nul[] = "ccltune_table: 1\nprovenance: {tool: \"a\0b\"}\n";
    assert_int_not_equal(cct_table_load_buffer(nul, sizeof nul - 1, "nul", &t, &err), CCT_OK);
    assert_non_null(strstr(err.msg, "nul:2:22:"));
    /* the escape \0 gives a NUL inside a string, which a C string cannot hold */
    expect_error("ccltune_table: 1\nprovenance: {tool: \"a\\0b\"}\n",
                 "t.yaml:2:20: 'tool' contains a NUL character");
}

static void test_missing_file(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file("/nonexistent/x.yaml", &t, &err), CCT_EIO);
    assert_string_equal(err.msg, "/nonexistent/x.yaml: cannot open: No such file or directory");
    assert_int_equal(t.n_sections, 0);
}

static void test_size_spellings(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    const char *text =
        HEAD "collectives:\n  broadcast:\n"
             "    - ranks: 8\n      nodes: 2\n      rules:\n"
             "        - {min_bytes: 0, max_bytes: 4K, algo: nvls_tree, proto: ll128}\n"
             "        - {min_bytes: 4096, max_bytes: 2GiB, algo: pat, proto: ll}\n"
             "        - {min_bytes: 2147483648, max_bytes: inf, algo: collnet_chain, "
             "proto: simple, chunk_bytes: 512KiB}\n";
    if (load_text(text, &t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    const cct_section *s = &t.sections[0];
    assert_int_equal(s->rules[0].max_bytes, 4096);
    assert_int_equal(s->rules[0].algo, CCT_ALGO_NVLS_TREE);
    assert_int_equal(s->rules[0].proto, CCT_PROTO_LL128);
    assert_int_equal(s->rules[1].max_bytes, 2147483648ull);
    assert_int_equal(s->rules[2].algo, CCT_ALGO_COLLNET_CHAIN);
    assert_int_equal(s->rules[2].chunk_bytes, 512 * 1024);
    cct_table_destroy(&t);
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_table_every_field),
        cmocka_unit_test(test_minimal_table_defaults),
        cmocka_unit_test(test_no_sections_is_valid),
        cmocka_unit_test(test_positions_schema),
        cmocka_unit_test(test_positions_syntax),
        cmocka_unit_test(test_positions_semantic),
        cmocka_unit_test(test_version_and_structure),
        cmocka_unit_test(test_format2_fields),
        cmocka_unit_test(test_format2_keys_by_version),
        cmocka_unit_test(test_version1_tables_load),
        cmocka_unit_test(test_failed_load_leaves_table_empty),
        cmocka_unit_test(test_hostile_inputs),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_size_spellings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
