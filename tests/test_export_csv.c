/*
 * test_export_csv.c - the exporter to NCCL's example tuner plugin configuration
 * (src/cct_export_csv.c).
 *
 * A small table built in memory must export to exactly the golden text below.  Then the
 * meaning is checked independently of the text: the exported lines are matched the way the
 * example plugin matches them (first line, in file order, whose inclusive [min, max] band
 * and topology fit -- re-implemented here from its documented behaviour), and for sizes at
 * and around every band boundary, and every numPipeOps/regBuff combination, the answer
 * must be what ccltune's own lookup (cct_table_find_section + cct_section_lookup) gives.
 * Comments must stay short and single-line whatever the table's strings hold.
 */
#include "import_test_util.h"

#include <inttypes.h>

#include "cct_export_csv.h"
#include "cct_table.h"

static void add_rule(cct_section *s, uint64_t lo, uint64_t hi, int algo, int proto, int ch,
                     uint64_t chunk)
{
    cct_rule r = cct_rule_blank();
    r.min_bytes = lo;
    r.max_bytes = hi;
    r.algo = algo;
    r.proto = proto;
    r.channels = ch;
    r.chunk_bytes = chunk;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
}

/* Sections deliberately out of order: the exporter sorts them. */
static void build(cct_table *t)
{
    cct_table_init(t);
    t->provenance.tool = strdup("ccltune 0.1.0");
    t->provenance.created = strdup("2026-11-29T14:00:00Z");
    t->provenance.nccl = strdup("2.28.9");
    t->provenance.source = strdup("measured");
    t->fingerprint.gpu = strdup("NVIDIA H200");
    t->fingerprint.cc = 90;
    t->fingerprint.gpus_per_node = 8;
    t->fingerprint.nodes = 1;
    t->fingerprint.links = strdup("nvlink");
    assert_int_equal(cct_table_set_env(t, "NCCL_BUFFSIZE", "8388608"), CCT_OK);
    cct_section *s = cct_table_add_section(t, CCT_COLL_BROADCAST, 16, 2);
    add_rule(s, 0, 1, CCT_ALGO_TREE, CCT_PROTO_LL, 0, 0);
    add_rule(s, 1, CCT_BYTES_INF, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 4, 0);
    s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 8, 1);
    add_rule(s, 0, 65536, CCT_ALGO_RING, CCT_PROTO_LL, 0, 0);
    add_rule(s, 65536, 1048576, CCT_ALGO_RING, CCT_PROTO_LL128, 16, 131072);
    add_rule(s, 1048576, CCT_BYTES_INF, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, 0, 0);
    s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 8, 1);
    s->reg_buff = 1;
    add_rule(s, 0, 4096, CCT_ALGO_TREE, CCT_PROTO_LL, 2, 0);
    add_rule(s, 4096, CCT_BYTES_INF, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 0);
    s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 8, 1);
    s->pipe_ops = 2;
    add_rule(s, 0, CCT_BYTES_INF, CCT_ALGO_COLLNET_DIRECT, CCT_PROTO_SIMPLE, 0, 0);
    s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 8, 1);
    s->pipe_ops = 2;
    s->reg_buff = 0;
    add_rule(s, 0, 2, CCT_ALGO_NVLS_TREE, CCT_PROTO_SIMPLE, 0, 0);
    add_rule(s, 2, CCT_BYTES_INF, CCT_ALGO_PAT, CCT_PROTO_LL, 64, 0);
    assert_int_equal(cct_table_check(t, NULL), CCT_OK);
}

static const char golden[] =
    "# NCCL example tuner plugin configuration (NCCL_TUNER_CONFIG_FILE)\n"
    "# exported by ccltune from: tables/h200.yaml\n"
    "# table: ccltune 0.1.0, created 2026-11-29T14:00:00Z, NCCL 2.28.9\n"
    "# measured on: NVIDIA H200, 8 GPUs per node, 1 nodes, links nvlink\n"
    "# format: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
    "numPipeOps,regBuff\n"
    "# bands are inclusive; 18446744073709551615 = no upper limit; channels 0 = NCCL's own "
    "count\n"
    "# note: 1 rule(s) choose a chunk size, which this format cannot carry: NCCL's own "
    "applies\n"
    "# set in the environment as well (no column for it): NCCL_BUFFSIZE=8388608\n"
    "broadcast,0,0,tree,ll,0,2,16,-1,-1\n"
    "broadcast,1,18446744073709551615,ring,simple,4,2,16,-1,-1\n"
    "allreduce,0,1,nvls_tree,simple,0,1,8,2,0\n"
    "allreduce,2,18446744073709551615,pat,ll,64,1,8,2,0\n"
    "allreduce,0,18446744073709551615,collnet_direct,simple,0,1,8,2,-1\n"
    "allreduce,0,4095,tree,ll,2,1,8,-1,1\n"
    "allreduce,4096,18446744073709551615,ring,simple,0,1,8,-1,1\n"
    "allreduce,0,65535,ring,ll,0,1,8,-1,-1\n"
    "allreduce,65536,1048575,ring,ll128,16,1,8,-1,-1\n"
    "allreduce,1048576,18446744073709551615,nvls,simple,0,1,8,-1,-1\n";

static char *export_text(const cct_table *t, const char *source, cct_status *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    cct_error err;
    *rc = cct_export_nccl_example_csv(t, source, m, &err);
    fclose(m);
    return buf;
}

static void golden_output(void **state)
{
    (void)state;
    cct_table t;
    build(&t);
    cct_status rc;
    char *a = export_text(&t, "tables/h200.yaml", &rc);
    assert_int_equal(rc, CCT_OK);
    assert_string_equal(a, golden);
    char *b = export_text(&t, "tables/h200.yaml", &rc); /* deterministic */
    assert_string_equal(a, b);
    free(a);
    free(b);
    cct_table_destroy(&t);
}

/* ---- the example plugin's matching, from its README: first matching line wins ---- */

typedef struct conf_line {
    char coll[32], algo[32], proto[32];
    uint64_t lo, hi;
    int channels, nodes, ranks, pipe_ops, reg_buff;
} conf_line;

static size_t parse_conf(const char *text, conf_line *out, size_t max)
{
    size_t n = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);       /* every line ends */
        assert_true(nl - p < 255); /* the plugin reads lines of up to 255 bytes */
        if (*p != '#' && nl != p) {
            assert_true(n < max);
            conf_line *c = &out[n++];
            int used = 0;
            int k = sscanf(p, "%31[^,],%" SCNu64 ",%" SCNu64 ",%31[^,],%31[^,],%d,%d,%d,%d,%d%n",
                           c->coll, &c->lo, &c->hi, c->algo, c->proto, &c->channels, &c->nodes,
                           &c->ranks, &c->pipe_ops, &c->reg_buff, &used);
            assert_int_equal(k, 10);
            assert_ptr_equal(p + used, nl);
        }
        p = nl + 1;
    }
    return n;
}

static const conf_line *plugin_match(const conf_line *c, size_t n, int coll, uint64_t bytes,
                                     int ranks, int nodes, int pipe_ops, int reg_buff)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(c[i].coll, cct_coll_name(coll)) != 0 || bytes < c[i].lo || bytes > c[i].hi)
            continue;
        if ((c[i].nodes != -1 && c[i].nodes != nodes) || (c[i].ranks != -1 && c[i].ranks != ranks))
            continue;
        if ((c[i].pipe_ops != -1 && c[i].pipe_ops != pipe_ops) ||
            (c[i].reg_buff != -1 && c[i].reg_buff != reg_buff))
            continue;
        return &c[i];
    }
    return NULL;
}

static void same_decisions_as_ccltune(void **state)
{
    (void)state;
    cct_table t;
    build(&t);
    cct_status rc;
    char *text = export_text(&t, NULL, &rc);
    assert_int_equal(rc, CCT_OK);
    conf_line lines[64];
    size_t n = parse_conf(text, lines, 64);
    assert_int_equal(n, 10);
    static const uint64_t edges[] = {0, 1, 2, 4096, 65536, 1048576, UINT64_MAX};
    static const int colls[] = {CCT_COLL_ALLREDUCE, CCT_COLL_BROADCAST};
    static const int topo[][2] = {{8, 1}, {16, 2}, {8, 2}};
    size_t checked = 0;
    for (size_t c = 0; c < 2; c++)
        for (size_t tp = 0; tp < 3; tp++)
            for (int pipe = 1; pipe <= 3; pipe++)
                for (int reg = 0; reg <= 1; reg++)
                    for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
                        for (int d = -1; d <= 1; d++) {
                            if ((edges[e] == 0 && d < 0) || (edges[e] == UINT64_MAX && d > 0))
                                continue;
                            uint64_t bytes = edges[e] + (uint64_t)(int64_t)d;
                            const cct_section *s = cct_table_find_section(&t, colls[c], topo[tp][0],
                                                                          topo[tp][1], pipe, reg);
                            /* cct_section_lookup's bands are [min, max) even for the last,
                             * so it has no band for UINT64_MAX itself (no real message is
                             * that large); the open band is what covers it */
                            uint64_t probe = bytes == UINT64_MAX ? bytes - 1 : bytes;
                            const cct_rule *want = s ? cct_section_lookup(s, probe) : NULL;
                            const conf_line *got = plugin_match(
                                lines, n, colls[c], bytes, topo[tp][0], topo[tp][1], pipe, reg);
                            if (!want) {
                                assert_null(got);
                                continue;
                            }
                            if (!got)
                                fail_msg("%s %" PRIu64 " B pipe %d reg %d: no line matches",
                                         cct_coll_name(colls[c]), bytes, pipe, reg);
                            assert_string_equal(got->algo, cct_algo_name(want->algo));
                            assert_string_equal(got->proto, cct_proto_name(want->proto));
                            assert_int_equal(got->channels, want->channels);
                            checked++;
                        }
    assert_true(checked > 100);
    free(text);
    cct_table_destroy(&t);
}

static void comments_stay_comments(void **state)
{
    (void)state;
    cct_table t;
    build(&t);
    free(t.fingerprint.gpu);
    char gpu[600];
    memset(gpu, 'G', sizeof gpu - 1);
    gpu[sizeof gpu - 1] = '\0';
    memcpy(gpu + 10, "\nallreduce,0,18446744073709551615,ring,ll,1,-1,-1,-1,-1\n", 57);
    t.fingerprint.gpu = strdup(gpu);
    char source[400];
    memset(source, 's', sizeof source - 1);
    source[sizeof source - 1] = '\0';
    source[5] = '\r';
    cct_status rc;
    char *text = export_text(&t, source, &rc);
    assert_int_equal(rc, CCT_OK);
    conf_line lines[64];
    assert_int_equal(parse_conf(text, lines, 64), 10); /* nothing smuggled in */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        if (*p == '#')
            assert_true((size_t)(nl - p) <= CCT_EXPORT_CSV_MAX_COMMENT);
        for (const char *q = p; q < nl; q++)
            assert_true((unsigned char)*q >= 0x20);
        p = nl + 1;
    }
    free(text);
    cct_table_destroy(&t);
}

static void invalid_table_refused(void **state)
{
    (void)state;
    cct_table t;
    build(&t);
    t.sections[0].rules[1].min_bytes = 2; /* a gap after [0, 1) */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cct_error err;
    assert_int_not_equal(cct_export_nccl_example_csv(&t, "gap.yaml", m, &err), CCT_OK);
    fclose(m);
    tu_assert_contains(err.msg, "cannot export gap.yaml: ");
    assert_int_equal(len, 0); /* nothing written */
    free(buf);
    cct_table_destroy(&t);
}

static void empty_table(void **state)
{
    (void)state;
    cct_table t;
    cct_table_init(&t);
    cct_status rc;
    char *text = export_text(&t, "empty.yaml", &rc);
    assert_int_equal(rc, CCT_OK);
    conf_line lines[4];
    assert_int_equal(parse_conf(text, lines, 4), 0);
    tu_assert_contains(text, "# table: ?, created ?, NCCL ?\n");
    free(text);
    cct_table_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_output),
        cmocka_unit_test(same_decisions_as_ccltune),
        cmocka_unit_test(comments_stay_comments),
        cmocka_unit_test(invalid_table_refused),
        cmocka_unit_test(empty_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
