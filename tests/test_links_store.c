/*
 * test_links_store.c - the link matrix that goes with a run: stored in the store (schema 4,
 * src/search/cct_store_links.c), read back from `ccltune probe --links --json`'s JSON
 * (src/search/cct_probe_links_store.c), summarised into the table's `link_matrix` and
 * written and read by the table's YAML writer and reader.
 *
 * Store: put/get round trip, a run without one, a missing run, empty text; a recorded store
 * of schema 1 (no link_matrices table) read as it is (no matrix) and upgraded when opened for
 * writing.  JSON: the probe's printout read back figure by figure (the whole answer and the
 * member alone), null figures, and malformed files refused with FILE:LINE:COL.  Table: a
 * summary written, read back and written again byte for byte; a table without one writes no
 * `link_matrix`; bad link_matrix mappings refused at their position.  The search's probe
 * (cct_search_links_probe) runs this program as a stand-in `ccltune probe` (argv[1] "probe",
 * behaviour from CCT_FAKE_PROBE): its answer kept, its failure sentence passed on, a hang
 * killed at the timeout, nonsense refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cct_ll128.h"
#include "cct_probe_links.h"
#include "cct_search.h"
#include "cct_store.h"
#include "cct_table.h"
#include "cli_test_util.h"
#include "data_test_util.h"
#include "recorded_test_util.h"

#define RECORDED "data/h200/search-2ranks.db.gz"
#define SYNTHETIC "data/links/synthetic-2gpus.json"

static int64_t new_run(cct_store *s)
{
    cct_store_fingerprint fp;
    memset(&fp, 0, sizeof fp);
    snprintf(fp.gpu, sizeof fp.gpu, "NVIDIA H200");
    fp.cc = 90;
    fp.gpus_per_node = fp.nodes = fp.ranks_per_gpu = 1;
    snprintf(fp.links, sizeof fp.links, "nvlink");
    snprintf(fp.nccl, sizeof fp.nccl, "2.28.9");
    cct_error err;
    int64_t fp_id;
    assert_int_equal(cct_store_put_fingerprint(s, &fp, &fp_id, &err), CCT_OK);
    cct_store_run run;
    memset(&run, 0, sizeof run);
    run.fingerprint_id = fp_id;
    snprintf(run.tool, sizeof run.tool, "test");
    snprintf(run.source, sizeof run.source, "search");
    snprintf(run.plan_hash, sizeof run.plan_hash, "plan");
    assert_int_equal(cct_store_begin_run(s, &run, &err), CCT_OK);
    return run.id;
}

static void store_round_trip(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("links-store");
    char path[4200];
    snprintf(path, sizeof path, "%s/s.db", dir);
    cct_store *s = NULL;
    cct_error err;
    assert_int_equal(cct_store_open(path, false, &s, &err), CCT_OK);
    int64_t a = new_run(s), b = new_run(s);
    char *text = test_data_read(SYNTHETIC);
    assert_int_equal(cct_store_put_links(s, a, text, &err), CCT_OK);
    char *back = NULL;
    assert_int_equal(cct_store_get_links(s, a, &back, &err), CCT_OK);
    assert_non_null(back);
    assert_string_equal(back, text);
    free(back);
    /* a second put replaces the first */
    assert_int_equal(cct_store_put_links(s, a, "{\"link_matrix\": {}}", &err), CCT_OK);
    assert_int_equal(cct_store_get_links(s, a, &back, &err), CCT_OK);
    assert_string_equal(back, "{\"link_matrix\": {}}");
    free(back);
    back = (char *)1;
    assert_int_equal(cct_store_get_links(s, b, &back, &err), CCT_OK);
    assert_null(back);
    assert_int_equal(cct_store_put_links(s, 999, text, &err), CCT_ENOTFOUND);
    assert_int_equal(cct_store_put_links(s, b, "", &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "empty link matrix"));
    cct_store_close(s);
    free(text);
    ct_rm_rf(dir);
    free(dir);
}

/* A store from before schema 4: read-only it has no matrices; writable it is upgraded. */
static void old_store(void **state)
{
    (void)state;
    char src[4096];
    test_data_path(src, sizeof src, RECORDED);
    cct_store *s = NULL;
    cct_error err;
    assert_int_equal(cct_store_open(src, true, &s, &err), CCT_OK);
    cct_store_run *runs = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_list_runs(s, &runs, &n, &err), CCT_OK);
    assert_true(n >= 1);
    char *back = (char *)1;
    assert_int_equal(cct_store_get_links(s, runs[0].id, &back, &err), CCT_OK);
    assert_null(back);
    cct_store_close(s);

    char *dir = ct_tmpdir("links-old");
    char copy[4200];
    snprintf(copy, sizeof copy, "%s/old.db", dir);
    assert_true(recorded_copy(src, copy));
    assert_int_equal(cct_store_open(copy, false, &s, &err), CCT_OK);
    assert_int_equal(cct_store_get_links(s, runs[0].id, &back, &err), CCT_OK);
    assert_null(back);
    assert_int_equal(cct_store_put_links(s, runs[0].id, "{}", &err), CCT_OK);
    assert_int_equal(cct_store_get_links(s, runs[0].id, &back, &err), CCT_OK);
    assert_string_equal(back, "{}");
    free(back);
    cct_store_close(s);
    free(runs);
    ct_rm_rf(dir);
    free(dir);
}

static char *print_json(const cct_links *l, const cct_probe_info *info)
{
    static char *buf;
    static size_t len;
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fputs("{\"ok\": true, ", f);
    cct_links_print_json(f, l, info);
    fputc('}', f);
    fclose(f);
    return buf;
}

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-9 * (fabs(a) + 1.0);
}

/* What the probe prints reads back as the figures it printed (to the printed precision). */
static void json_round_trip(void **state)
{
    (void)state;
    static cct_probe_info info, paths;
    static cct_links l, back;
    info.n_gpus = 3;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            info.path[i][j] = i == j ? CCT_PATH_LOC : i + j == 3 ? CCT_PATH_SYS : CCT_PATH_NVL;
    cct_links_init(&l, 3, (size_t)64 << 20, 5, 1000);
    for (int i = 0; i < 3; i++) {
        l.h2d_gbps[i] = 50.25 + i;
        l.d2h_gbps[i] = 49.5 - i;
        l.host_lat_us[i] = 1.25 + 0.125 * i;
        for (int j = 0; j < 3; j++)
            if (i != j) {
                l.peer_access[i][j] = i + j != 3;
                l.peer_gbps[i][j] = 300.0 + 10 * i + j;
                l.peer_lat_us[i][j] = 0.5 + 0.25 * j;
            }
    }
    l.peer_gbps[2][1] = NAN; /* not measured: null */
    l.wall_s = 1.5;
    snprintf(l.socket_if, sizeof l.socket_if, "ib0");
    snprintf(l.socket_why, sizeof l.socket_why, "NCCL's default order");
    char *js = print_json(&l, &info);
    cct_error err;
    if (cct_links_parse(js, strlen(js), "p.json", &back, &paths, &err) != CCT_OK)
        fail_msg("%s\n%s", err.msg, js);
    assert_int_equal(back.n_gpus, 3);
    assert_int_equal(paths.n_gpus, 3);
    assert_int_equal(back.copy_bytes, (size_t)64 << 20);
    assert_int_equal(back.reps, 5);
    assert_int_equal(back.pingpong_iters, 1000);
    for (int i = 0; i < 3; i++) {
        assert_true(near(back.h2d_gbps[i], l.h2d_gbps[i]));
        assert_true(near(back.d2h_gbps[i], l.d2h_gbps[i]));
        assert_true(near(back.host_lat_us[i], l.host_lat_us[i]));
        for (int j = 0; j < 3; j++) {
            if (i == j)
                continue;
            assert_int_equal(paths.path[i][j], info.path[i][j]);
            assert_int_equal(back.peer_access[i][j], l.peer_access[i][j]);
            if (isnan(l.peer_gbps[i][j]))
                assert_true(isnan(back.peer_gbps[i][j]));
            else
                assert_true(near(back.peer_gbps[i][j], l.peer_gbps[i][j]));
            assert_true(near(back.peer_lat_us[i][j], l.peer_lat_us[i][j]));
        }
    }
    assert_string_equal(back.socket_if, "ib0");
    assert_string_equal(back.socket_why, "NCCL's default order");

    cct_link_summary s;
    assert_int_equal(cct_links_summarize(&back, 7, &s, &err), CCT_OK);
    assert_true(s.present);
    assert_int_equal(s.run, 7);
    assert_int_equal(s.gpus, 3);
    assert_true(near(s.pair_gbps_min, 301.0));
    assert_true(near(s.pair_gbps_max, 320.0)); /* [2][1] = 321 was not measured */
    assert_true(near(s.pair_latency_us_min, 0.5));
    assert_true(near(s.pair_latency_us_max, 1.0));
    assert_true(near(s.h2d_gbps, 50.25));
    assert_true(near(s.d2h_gbps, 47.5));
    assert_true(near(s.host_latency_us, 1.5));
    assert_string_equal(s.socket, "ib0");
    free(s.socket);

    /* the member alone reads the same */
    const char *member = strstr(js, "\"link_matrix\": ") + strlen("\"link_matrix\": ");
    char *alone = strndup(member, strlen(member) - 1);
    assert_int_equal(cct_links_parse(alone, strlen(alone), "m.json", &back, NULL, &err), CCT_OK);
    assert_int_equal(back.n_gpus, 3);
    free(alone);
    free(js);
}

/* One GPU: no pairs, so no pair figures in the summary. */
static void one_gpu_summary(void **state)
{
    (void)state;
    static const char js[] =
        "{\"link_matrix\": {\"host\": [{\"gpu\": 0, \"h2d_gbps\": 55.5, \"d2h_gbps\": null}],"
        " \"pairs\": []}}";
    static cct_links l;
    cct_error err;
    assert_int_equal(cct_links_parse(js, strlen(js), "one.json", &l, NULL, &err), CCT_OK);
    cct_link_summary s;
    assert_int_equal(cct_links_summarize(&l, 1, &s, &err), CCT_OK);
    assert_int_equal(s.gpus, 1);
    assert_true(isnan(s.pair_gbps_min) && isnan(s.pair_gbps_max));
    assert_true(isnan(s.pair_latency_us_min));
    assert_true(near(s.h2d_gbps, 55.5));
    assert_true(isnan(s.d2h_gbps));
    assert_true(isnan(s.host_latency_us));
    assert_null(s.socket);
}

typedef struct bad_json {
    const char *text;
    const char *where; /* "NAME:LINE:COL" the error must start with */
    const char *says;
} bad_json;

static void bad_json_refused(void **state)
{
    (void)state;
    static const bad_json cases[] = {
        {"{\"link_matrix\": {\"host\": [}", "b.json:1:27", "expected a value"},
        {"[1, 2]", "b.json:1:1", "a JSON object"},
        {"{\"ok\": true}", "b.json:1:1", "no \"link_matrix\""},
        {"{\"link_matrix\": []}", "b.json:1:17", "must be an object, not an array"},
        {"{\"link_matrix\": {\"pairs\": []}}", "b.json:1:17", "needs a member \"host\""},
        {"{\"link_matrix\": {\"host\": [], \"pairs\": []}}", "b.json:1:26", "1 to 64 GPUs"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 1}], \"pairs\": []}}", "b.json:1:35",
         "GPU index 0..0"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0}, {\"gpu\": 0}], \"pairs\": []}}",
         "b.json:1:39", "in order"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0, \"h2d_gbps\": -1}], \"pairs\": []}}",
         "b.json:1:50", "finite number >= 0"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0,\n \"d2h_gbps\": \"fast\"}], \"pairs\": []}}",
         "b.json:2:14", "a number or null"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0}, {\"gpu\": 1}],\n"
         "  \"pairs\": [{\"src\": 1, \"dst\": 1}]}}",
         "b.json:2:13", "two different GPUs"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0}, {\"gpu\": 1}],\n"
         "  \"pairs\": [{\"src\": 0, \"dst\": 2}]}}",
         "b.json:2:31", "GPU index 0..1"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0}], \"pairs\": [],\n"
         "  \"socket\": {\"interface\": 3}}}",
         "b.json:2:27", "\"interface\" must be a string"},
        {"{\"link_matrix\": {\"host\": [{\"gpu\": 0}, {\"gpu\": 1}],\n"
         "  \"pairs\": [{\"src\": 0, \"dst\": 1, \"copy_gbps\": 1e999}]}}",
         "b.json:2:47", "finite number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static cct_links l;
        cct_error err;
        const char *t = cases[i].text;
        if (cct_links_parse(t, strlen(t), "b.json", &l, NULL, &err) == CCT_OK)
            fail_msg("case %zu accepted: %s", i, t);
        if (strncmp(err.msg, cases[i].where, strlen(cases[i].where)) != 0 ||
            !strstr(err.msg, cases[i].says))
            fail_msg("case %zu: got \"%s\", want \"%s...%s\"", i, err.msg, cases[i].where,
                     cases[i].says);
    }
}

static char *write_table(const cct_table *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cct_error err;
    if (cct_table_write(t, f, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    fclose(f);
    return buf;
}

static void fill_table(cct_table *t)
{
    cct_table_init(t);
    t->provenance.tool = strdup("ccltune test");
    t->provenance.created = strdup("2026-12-06T00:00:00Z");
    t->provenance.source = strdup("measured");
    t->fingerprint.gpu = strdup("NVIDIA H200");
    t->fingerprint.cc = 90;
    t->fingerprint.gpus_per_node = t->fingerprint.nodes = 1;
    t->fingerprint.links = strdup("nvlink");
    t->fingerprint.nccl = strdup("2.28.9");
}

static void table_round_trip(void **state)
{
    (void)state;
    cct_table t, back;
    cct_error err;
    fill_table(&t);
    char *plain = write_table(&t);
    assert_null(strstr(plain, "link_matrix"));
    static cct_links l;
    char *js = test_data_read(SYNTHETIC);
    assert_int_equal(cct_links_parse(js, strlen(js), SYNTHETIC, &l, NULL, &err), CCT_OK);
    assert_int_equal(cct_links_summarize(&l, 3, &t.link_matrix, &err), CCT_OK);
    char *text = write_table(&t);
    assert_non_null(strstr(text, "link_matrix:  # stored with run 3"));
    assert_non_null(strstr(text, "  pair_gbps_min: 368.20\n  pair_gbps_max: 370.50\n"));
    assert_non_null(strstr(text, "  h2d_gbps: 51.00\n  d2h_gbps: 49.80\n"));
    assert_non_null(strstr(text, "  host_latency_us: 1.310\n  socket: \"eth0\"\n"));
    if (cct_table_load_buffer(text, strlen(text), "t.yaml", &back, &err) != CCT_OK)
        fail_msg("%s\n%s", err.msg, text);
    assert_true(back.link_matrix.present);
    assert_int_equal(back.link_matrix.run, 3);
    assert_int_equal(back.link_matrix.gpus, 2);
    assert_true(near(back.link_matrix.pair_latency_us_min, 0.95));
    char *again = write_table(&back);
    assert_string_equal(again, text);
    free(again);
    free(text);
    free(plain);
    free(js);
    cct_table_destroy(&back);
    cct_table_destroy(&t);
}

static void table_bad_link_matrix(void **state)
{
    (void)state;
    static const char head[] =
        "ccltune_table: 2\n"
        "provenance: {tool: t, measured: x, source: hand-written}\n"
        "fingerprint: {gpu: g, cc: \"9.0\", gpus_per_node: 1, nodes: 1, links: nvlink, nccl: "
        "2.28.9}\n"
        "ll128: {allowed: false}\n"
        "collectives: {}\n";
    static const struct {
        const char *lm, *where, *says;
    } cases[] = {
        {"link_matrix: {run: 1, gpus: 2, pair_gbps_min: 3}\n", "t.yaml:6:32",
         "'pair_gbps_min' needs 'pair_gbps_max'"},
        {"link_matrix: {run: 1, gpus: 2, pair_latency_us_min: 3, pair_latency_us_max: 2}\n",
         "t.yaml:6:32", "is above"},
        {"link_matrix: {run: 1, gpus: 2, h2d: 3}\n", "t.yaml:6:32", "unknown key 'h2d'"},
        {"link_matrix: {run: 1}\n", "t.yaml:6:14", "'gpus'"},
        {"link_matrix: {run: 1, gpus: 1, d2h_gbps: -2}\n", "t.yaml:6:42", ">= 0"},
        {"link_matrix: {run: 0, gpus: 1}\n", "t.yaml:6:20", "'run' must be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", head, cases[i].lm);
        cct_table t;
        cct_error err;
        if (cct_table_load_buffer(text, strlen(text), "t.yaml", &t, &err) == CCT_OK)
            fail_msg("case %zu accepted", i);
        if (strncmp(err.msg, cases[i].where, strlen(cases[i].where)) != 0 ||
            !strstr(err.msg, cases[i].says))
            fail_msg("case %zu: got \"%s\", want \"%s...%s\"", i, err.msg, cases[i].where,
                     cases[i].says);
    }
    /* a format-1 table has no link_matrix */
    char text[1024];
    snprintf(text, sizeof text, "%s", head);
    text[strlen("ccltune_table: ")] = '1';
    char *measured = strstr(text, "measured");
    memcpy(measured, "created ", 8); /* same length: "measured" -> "created " */
    strcat(text, "link_matrix: {run: 1, gpus: 1}\n");
    cct_table t;
    cct_error err;
    assert_int_not_equal(cct_table_load_buffer(text, strlen(text), "t.yaml", &t, &err), CCT_OK);
    assert_non_null(strstr(err.msg, "new in format 2"));
}

/* The stand-in `ccltune probe --links --json`: checks the arguments the search passes. */
static int fake_probe(int argc, char **argv)
{
    static const char *const want[] = {"probe",   "--links", "--json",          "--ranks", "4",
                                       "--nodes", "4",       "--ranks-per-gpu", "4"};
    if (argc != 10)
        return 3;
    for (int i = 0; i < 9; i++)
        if (strcmp(argv[i + 1], want[i]) != 0)
            return 3;
    const char *mode = getenv("CCT_FAKE_PROBE");
    if (strcmp(mode, "ok") == 0) {
        char *text = test_data_read(SYNTHETIC);
        fputs(text, stdout);
        free(text);
        return 0;
    }
    if (strcmp(mode, "fail") == 0) {
        puts("{\"ok\": false, \"error\": \"no GPU visible\"}");
        fputs("ccltune probe: error: no GPU visible\n", stderr);
        return 1;
    }
    if (strcmp(mode, "hang") == 0) {
        fflush(stdout);
        sleep(60);
        return 0;
    }
    puts("{\"link_matrix\": 5}");
    return 0;
}

static cct_status probe_as(const char *mode, cct_search_opts *o, double timeout_s, cct_error *err)
{
    setenv("CCT_FAKE_PROBE", mode, 1);
    return cct_search_links_probe(o, "/proc/self/exe", 4, 4, timeout_s, err);
}

static void search_probe(void **state)
{
    (void)state;
    cct_search_opts o;
    char *argv[] = {(char *)"search", NULL};
    cct_search_opts_init(&o, 1, argv);
    o.ranks_per_gpu = 4;
    cct_error err;
    assert_int_equal(probe_as("ok", &o, 60, &err), CCT_OK);
    char *want = test_data_read(SYNTHETIC);
    assert_non_null(o.links_json);
    assert_string_equal(o.links_json, want);
    free(want);
    cct_search_links_free(&o);
    assert_null(o.links_json);

    assert_int_equal(probe_as("fail", &o, 60, &err), CCT_EIO);
    assert_string_equal(err.msg, "`ccltune probe --links` exited with 1: no GPU visible");
    assert_null(o.links_json);
    assert_int_equal(probe_as("nonsense", &o, 60, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "`ccltune probe --links --json`:1:17: "));
    assert_null(o.links_json);
    o.ranks_per_gpu = 2; /* the stand-in refuses other arguments */
    assert_int_equal(probe_as("ok", &o, 60, &err), CCT_EIO);
    assert_non_null(strstr(err.msg, "exited with 3"));
    o.ranks_per_gpu = 4;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(probe_as("hang", &o, 0.5, &err), CCT_EIO);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_non_null(strstr(err.msg, "did not finish"));
    assert_true(t1.tv_sec - t0.tv_sec < 10); /* killed, not waited for */
    assert_null(o.links_json);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "probe") == 0)
        return fake_probe(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(store_round_trip),      cmocka_unit_test(old_store),
        cmocka_unit_test(json_round_trip),       cmocka_unit_test(one_gpu_summary),
        cmocka_unit_test(bad_json_refused),      cmocka_unit_test(table_round_trip),
        cmocka_unit_test(table_bad_link_matrix), cmocka_unit_test(search_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
