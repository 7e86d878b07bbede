/*
 * test_h100_proofs.c - the H100 proof run (tests/data/h100/proofs-2026-12-06) replayed
 * through the commands a user runs: audit, import, search --sizes-from and --links-from.
 *
 * The data is real: a PyTorch job (4 rank processes sharing one NVIDIA H100 80GB HBM3, each
 * its own NCCL node) recorded by the profiler half under the tuned table t4.yaml (rec/) and
 * again with NCCL_PROTO=Simple (rec-simple/), t4.yaml's measurement store and the probe's
 * link matrix.  What the commands must say is recounted here from the recordings and the
 * table (every recorded row looked up in t4.yaml's rules), not copied from the logs: the
 * audit of rec/ exits 0 with every call as the table asked, that of rec-simple/ exits 1 with
 * exactly the calls NCCL_PROTO=Simple moved off the table's LL rules; --json has the same
 * counts and, with --steps 110, the job's saving per step and rank process; the recordings
 * imported with the table into a copy of t4's store are a production run the fit leaves out
 * unless --include-production; a replayed search --sizes-from plans the job's collectives at
 * its sizes and their grid neighbours; --links-from stores the probe's matrix, which the fit
 * and explain then show.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <limits.h>
#include <math.h>

#include "cli_test_util.h"
#include "fixture_test_util.h"

#include "cct_json.h"
#include "cct_store.h"
#include "cct_table.h"

#define DAY "data/h100/proofs-2026-12-06"
#define STEPS 110
#define MAX_PAIRS 64

/* What the recordings of one job hold, looked up in t4.yaml. */
typedef struct recount {
    size_t files, calls, asked, mismatched, configs;
    size_t ll_to_simple; /* mismatched calls where the rule asks LL and NCCL ran Simple */
    size_t n_pairs;      /* distinct (collective, size) */
    int pair_coll[MAX_PAIRS];
    uint64_t pair_bytes[MAX_PAIRS];
    /* distinct (rule, what ran) among the mismatched rows: the audit's MISMATCH lines */
    const cct_rule *bad_rule[MAX_PAIRS];
    int bad_algo[MAX_PAIRS], bad_proto[MAX_PAIRS], bad_channels[MAX_PAIRS];
} recount;

static char *scratch;
static cct_table t4;

static void day_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/" DAY "/%s", getenv("CCT_TEST_SRCDIR"), name);
}

static int setup(void **state)
{
    (void)state;
    scratch = ct_tmpdir("h100-proofs");
    char path[PATH_MAX];
    day_path(path, sizeof path, "t4.yaml");
    cct_error err;
    if (!scratch || cct_table_load_file(path, &t4, &err) != CCT_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(scratch);
    free(scratch);
    cct_table_destroy(&t4);
    return 0;
}

/* Whether the recorded (algo, proto, channels) is what rule r asks: its algorithm and
 * protocol, and no more channels than it caps (0: NCCL's count). */
static bool as_asked(const cct_rule *r, int algo, int proto, int channels)
{
    return r->algo == algo && r->proto == proto && (r->channels == 0 || channels <= r->channels);
}

static void add_pair(recount *c, int coll, uint64_t bytes)
{
    for (size_t i = 0; i < c->n_pairs; i++)
        if (c->pair_coll[i] == coll && c->pair_bytes[i] == bytes)
            return;
    assert_true(c->n_pairs < MAX_PAIRS);
    c->pair_coll[c->n_pairs] = coll;
    c->pair_bytes[c->n_pairs++] = bytes;
}

static void add_mismatch(recount *c, const cct_rule *r, int algo, int proto, int channels)
{
    for (size_t i = 0; i < c->configs; i++)
        if (c->bad_rule[i] == r && c->bad_algo[i] == algo && c->bad_proto[i] == proto &&
            c->bad_channels[i] == channels)
            return;
    assert_true(c->configs < MAX_PAIRS);
    c->bad_rule[c->configs] = r;
    c->bad_algo[c->configs] = algo;
    c->bad_proto[c->configs] = proto;
    c->bad_channels[c->configs++] = channels;
}

/* One "row coll=... bytes=... algo=... proto=... channels=... calls=..." line. */
static void count_row(recount *c, const char *line)
{
    char coll[32], algo[32], proto[32];
    uint64_t bytes;
    int channels;
    size_t calls;
    assert_int_equal(sscanf(line,
                            "row coll=%31s bytes=%" SCNu64 " algo=%31s proto=%31s "
                            "channels=%d calls=%zu",
                            coll, &bytes, algo, proto, &channels, &calls),
                     6);
    int ci = cct_coll_from_name(coll), ai = cct_algo_from_name(algo),
        pi = cct_proto_from_name(proto);
    assert_true(ci >= 0 && ai >= 0 && pi >= 0);
    const cct_section *s = cct_table_find_section(&t4, ci, 4, 4, 1, 0);
    assert_non_null(s);
    const cct_rule *r = cct_section_lookup(s, bytes);
    assert_non_null(r);
    c->calls += calls;
    add_pair(c, ci, bytes);
    if (as_asked(r, ai, pi, channels)) {
        c->asked += calls;
        return;
    }
    c->mismatched += calls;
    c->ll_to_simple += r->proto == CCT_PROTO_LL && pi == CCT_PROTO_SIMPLE ? calls : 0;
    add_mismatch(c, r, ai, pi, channels);
}

/* Every recording (*.rec) in the folder sub of the run. */
static recount count_recordings(const char *sub)
{
    recount c;
    memset(&c, 0, sizeof c);
    char dir[PATH_MAX];
    day_path(dir, sizeof dir, sub);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".rec") != 0)
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char line[1024];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "row ", 4) == 0)
                count_row(&c, line);
        fclose(f);
        c.files++;
    }
    closedir(d);
    return c;
}

static ct_result audit(const char *sub, bool json)
{
    char rec[PATH_MAX], table[PATH_MAX];
    day_path(rec, sizeof rec, sub);
    day_path(table, sizeof table, "t4.yaml");
    const char *args[] = {"audit", rec, "--table", table, "--steps", "110", json ? "--json" : NULL,
                          NULL};
    return ct_run(args);
}

static void assert_contains(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("want \"%s\" in:\n%s", want, text);
}

static void test_audit_as_asked(void **state)
{
    (void)state;
    recount c = count_recordings("rec");
    assert_int_equal(c.files, 4);
    assert_true(c.calls > 0);
    assert_int_equal(c.asked, c.calls);
    ct_result r = audit("rec", false);
    if (r.status != 0)
        fail_msg("audit: exit %d: %s%s", r.status, r.out, r.err);
    char want[512];
    snprintf(want, sizeof want, "%zu calls in %zu recordings (%zu communicators)", c.calls, c.files,
             c.files);
    assert_contains(r.out, want);
    snprintf(want, sizeof want,
             "%zu calls ran the table's choice, 0 were left to NCCL, 0 mismatched (0 "
             "configurations)",
             c.asked);
    assert_contains(r.out, want);
    assert_contains(r.out, "4 rank processes recorded, 110 steps");
    assert_null(strstr(r.out, "MISMATCH"));
    ct_result_free(&r);
}

static void test_audit_proto_simple(void **state)
{
    (void)state;
    recount c = count_recordings("rec-simple");
    assert_int_equal(c.files, 4);
    /* NCCL_PROTO=Simple: every call the table sent to LL ran Simple, and only those */
    assert_true(c.mismatched > 0);
    assert_int_equal(c.ll_to_simple, c.mismatched);
    assert_int_equal(c.asked + c.mismatched, c.calls);
    ct_result r = audit("rec-simple", false);
    if (r.status != 1)
        fail_msg("audit: exit %d (want 1): %s%s", r.status, r.out, r.err);
    char want[512];
    snprintf(want, sizeof want,
             "%zu calls ran the table's choice, 0 were left to NCCL, %zu mismatched (%zu "
             "configurations)",
             c.asked, c.mismatched, c.configs);
    assert_contains(r.out, want);
    /* each MISMATCH line: under a section band that asks LL, what ran is Simple */
    size_t lines = 0;
    const char *asks = NULL;
    for (const char *p = r.out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
        if (strstr(line, "table asks "))
            asks = strstr(p, "table asks ");
        if (!strstr(line, "MISMATCH"))
            continue;
        lines++;
        assert_non_null(asks);
        assert_true(strncmp(strchr(asks, '/'), "/ll", 3) == 0);
        assert_non_null(strstr(line, "/simple/"));
    }
    assert_int_equal(lines, c.configs);
    ct_result_free(&r);
}

/* The number member key of node (NAN when absent). */
static double num(const cct_json_doc *doc, const cct_json_node *node, const char *key)
{
    const cct_json_node *m = cct_json_member(doc, node, key);
    return m && m->type == CCT_JSON_NUMBER ? strtod(cct_json_text(doc, m), NULL) : NAN;
}

/* audit --json --steps 110 of sub: the counts of c, and the job's saving per step and rank
 * process derived from the totals. */
static void check_json(const char *sub, const recount *c, int want_status)
{
    ct_result r = audit(sub, true);
    assert_int_equal(r.status, want_status);
    cct_json_doc doc;
    cct_json_init(&doc);
    cct_error err;
    if (cct_json_parse(&doc, r.out, strlen(r.out), "audit --json", &err) != CCT_OK)
        fail_msg("%s", err.msg);
    const cct_json_node *root = cct_json_root(&doc);
    assert_int_equal((size_t)num(&doc, root, "recordings"), c->files);
    assert_int_equal((size_t)num(&doc, root, "calls"), c->calls);
    assert_int_equal((size_t)num(&doc, root, "as_asked"), c->asked);
    assert_int_equal((size_t)num(&doc, root, "mismatched"), c->mismatched);
    assert_int_equal((size_t)num(&doc, root, "left_to_nccl"), 0);
    const cct_json_node *job = cct_json_member(&doc, root, "job");
    assert_non_null(job);
    assert_int_equal((int)num(&doc, job, "steps"), STEPS);
    assert_int_equal((int)num(&doc, job, "processes"), 4);
    assert_string_equal(cct_json_text(&doc, cct_json_member(&doc, job, "per")), "step_per_process");
    double per = STEPS * 4.0, saved = num(&doc, root, "saved_ns"), gpu = num(&doc, root, "gpu_ns");
    assert_true(saved > 0.0 && gpu > 0.0);
    assert_true(fabs(num(&doc, job, "saved_ns") - saved / per) <= 0.5);
    assert_true(fabs(num(&doc, job, "collective_ns") - gpu / per) <= 0.5);
    assert_true(fabs(num(&doc, job, "nccl_collective_ns") - (gpu + saved) / per) <= 0.5);
    assert_true(fabs(num(&doc, job, "saved_pct") - 100.0 * saved / (gpu + saved)) < 0.001);
    cct_json_destroy(&doc);
    ct_result_free(&r);
    /* the text says the same saving */
    r = audit(sub, false);
    char want[256];
    snprintf(want, sizeof want,
             "for this job the table saves %.3f ms GPU per step per rank "
             "process",
             saved / per / 1e6);
    assert_contains(r.out, want);
    ct_result_free(&r);
}

static void test_audit_json(void **state)
{
    (void)state;
    recount c = count_recordings("rec");
    check_json("rec", &c, 0);
    recount s = count_recordings("rec-simple");
    check_json("rec-simple", &s, 1);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 22);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 22) - 1, f);
    (void)n;
    fclose(f);
    return buf;
}

static ct_result fit(const char *db, const char *out, const char *flag)
{
    const char *args[] = {"fit", "--store", db, "-o", out, flag, NULL};
    return ct_run(args);
}

static void test_import_production(void **state)
{
    (void)state;
    recount c = count_recordings("rec");
    char gz[PATH_MAX], db[PATH_MAX], rec[PATH_MAX], table[PATH_MAX], before[PATH_MAX],
        after[PATH_MAX], with[PATH_MAX];
    day_path(gz, sizeof gz, "t4.db.gz");
    day_path(rec, sizeof rec, "rec");
    day_path(table, sizeof table, "t4.yaml");
    snprintf(db, sizeof db, "%s/t4.db", scratch);
    snprintf(before, sizeof before, "%s/before.yaml", scratch);
    snprintf(after, sizeof after, "%s/after.yaml", scratch);
    snprintf(with, sizeof with, "%s/with.yaml", scratch);
    assert_true(recorded_copy(gz, db));
    ct_result r = fit(db, before, NULL);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);

    const char *imp[] = {"import", "--store", db, "--table", table, rec, NULL};
    r = ct_run(imp);
    if (r.status != 0)
        fail_msg("import: exit %d: %s", r.status, r.err);
    char want[512];
    snprintf(want, sizeof want,
             "%zu recordings: %zu calls -> %zu points: 0 of NCCL's own choices, %zu of the "
             "table's rules, 0 of another configuration",
             c.files, c.calls, c.n_pairs, c.n_pairs);
    assert_contains(r.out, want);
    assert_contains(r.out, "into run 2 of");
    assert_contains(r.out, "source production");
    assert_contains(r.out, "machine: as run 1 (NVIDIA H100 80GB HBM3");
    ct_result_free(&r);

    /* left out by default: the same table byte for byte, and the fit says so */
    r = fit(db, after, NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "from 1 run(s)");
    assert_contains(r.err, "1 run(s) of production observations left out");
    ct_result_free(&r);
    char *a = slurp(before), *b = slurp(after);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* asked for: both runs, the job's points on top of the search's */
    r = fit(db, with, "--include-production");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "from 2 run(s)");
    ct_result_free(&r);
    char *w = slurp(with);
    assert_contains(w, "runs: \"1,2\"");
    free(w);
}

/* The distinct sizes of coll among n points, sorted, into out (at most cap); the count. */
static size_t sizes_of(const cct_point *p, size_t n, int coll, uint64_t *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].cfg.coll != coll)
            continue;
        size_t j = 0;
        while (j < k && out[j] != p[i].bytes)
            j++;
        if (j == k && k < cap)
            out[k++] = p[i].bytes;
    }
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            uint64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return k;
}

static bool has(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static void load_run1(const char *path, cct_point **p, size_t *n)
{
    cct_error err;
    cct_store *st;
    if (cct_store_open(path, true, &st, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    int64_t run = 1;
    if (cct_store_load_points(st, &run, 1, p, n, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_store_close(st);
}

static void test_search_sizes_from(void **state)
{
    (void)state;
    recount c = count_recordings("rec");
    char gz[PATH_MAX], rec[PATH_MAX], store[PATH_MAX];
    day_path(gz, sizeof gz, "t4.db.gz");
    day_path(rec, sizeof rec, "rec");
    snprintf(store, sizeof store, "%s/sizes.db", scratch);
    const char *args[] = {"search", "--replay", gz,  "--sizes-from", rec,   "--ranks-per-gpu",
                          "4",      "--ranks",  "4", "--store",      store, NULL};
    ct_result r = ct_run(args);
    if (r.status != 0)
        fail_msg("search: exit %d: %s", r.status, r.err);
    char want[256];
    snprintf(want, sizeof want,
             "--sizes-from: 4 ranks, %zu recorded (collective, size) pairs; 0 sizes off the "
             "grid measured exactly",
             c.n_pairs);
    assert_contains(r.err, want);
    ct_result_free(&r);

    cct_point *p = NULL, *tp = NULL;
    size_t n = 0, tn = 0;
    load_run1(store, &p, &n);
    load_run1(gz, &tp, &tn);
    uint64_t planned[64], tuned[64];
    for (int coll = 0; coll < CCT_NUM_COLLS; coll++) {
        size_t k = sizes_of(p, n, coll, planned, 64), tk = sizes_of(tp, tn, coll, tuned, 64);
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < c.n_pairs; i++)
            if (c.pair_coll[i] == coll) {
                lo = c.pair_bytes[i] < lo ? c.pair_bytes[i] : lo;
                hi = c.pair_bytes[i] > hi ? c.pair_bytes[i] : hi;
            }
        if (hi == 0) { /* a collective the job never called: not planned */
            assert_int_equal(k, 0);
            continue;
        }
        /* the grid from one step below the smallest to one step above the largest */
        assert_int_equal(planned[0], lo / 2);
        assert_int_equal(planned[k - 1], hi * 2);
        /* the search's grid between them: every power of two, midpoints at 1.5x one */
        size_t interpolated = 0;
        for (uint64_t b = lo / 2; b <= hi * 2; b *= 2)
            assert_true(has(planned, k, b));
        for (size_t i = 0; i < k; i++) {
            uint64_t v = planned[i];
            bool pow2 = (v & (v - 1)) == 0, mid = v % 3 == 0 && ((v / 3) & (v / 3 - 1)) == 0;
            assert_true(pow2 || mid);
            assert_true(!pow2 || has(tuned, tk, v)); /* the tune measured every power of two */
            interpolated += !has(tuned, tk, v);
            /* the grid is the tune's own: a size it lacks can only be a job's size off it */
            bool recorded = false;
            for (size_t j = 0; j < c.n_pairs; j++)
                recorded = recorded || (c.pair_coll[j] == coll && c.pair_bytes[j] == v);
            if (!has(tuned, tk, v) && !recorded)
                fail_msg("%s: planned %" PRIu64 " B is off the tune's grid", cct_coll_name(coll),
                         v);
        }
        for (size_t i = 0; i < c.n_pairs; i++) {
            if (c.pair_coll[i] != coll)
                continue;
            /* the job's size, measured neighbours on both sides within a factor 2, and a
             * measurement of it in the tune's store to replay */
            uint64_t s = c.pair_bytes[i];
            size_t at = 0;
            while (at < k && planned[at] != s)
                at++;
            assert_true(at > 0 && at + 1 < k);
            assert_true(planned[at - 1] >= s / 2 && planned[at + 1] <= s * 2);
            assert_true(has(tuned, tk, s));
        }
        print_message("%s: %zu sizes planned %" PRIu64 "-%" PRIu64 " B, %zu of them between the "
                      "tune's sizes (the replay interpolates them)\n",
                      cct_coll_name(coll), k, planned[0], planned[k - 1], interpolated);
    }
    free(p);
    free(tp);
}

/* The link matrix's host figures of probe-links.json. */
typedef struct probe_links {
    double h2d, d2h, latency, wall_s;
    size_t gpus;
    char socket[32];
} probe_links;

static probe_links read_probe(const char *path)
{
    char *text = slurp(path);
    cct_json_doc doc;
    cct_json_init(&doc);
    cct_error err;
    if (cct_json_parse(&doc, text, strlen(text), path, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    const cct_json_node *root = cct_json_root(&doc);
    const cct_json_node *lm = cct_json_member(&doc, root, "link_matrix");
    assert_non_null(lm);
    const cct_json_node *host = cct_json_first(&doc, cct_json_member(&doc, lm, "host"));
    assert_non_null(host);
    probe_links l = {num(&doc, host, "h2d_gbps"),
                     num(&doc, host, "d2h_gbps"),
                     num(&doc, host, "latency_us"),
                     num(&doc, lm, "wall_s"),
                     cct_json_member(&doc, root, "gpus")->count,
                     ""};
    const cct_json_node *sock = cct_json_member(&doc, lm, "socket");
    snprintf(l.socket, sizeof l.socket, "%s",
             cct_json_text(&doc, cct_json_member(&doc, sock, "interface")));
    cct_json_destroy(&doc);
    free(text);
    return l;
}

static ct_result explain(const char *table, const char *links_store)
{
    const char *args[] = {"explain", table,     "--coll",    "allreduce", "--ranks",
                          "4",       "--links", links_store, NULL};
    return ct_run(args);
}

static void test_links_from_probe(void **state)
{
    (void)state;
    char gz[PATH_MAX], json[PATH_MAX], store[PATH_MAX], table[PATH_MAX];
    day_path(gz, sizeof gz, "t4.db.gz");
    day_path(json, sizeof json, "logs/probe-links.json");
    snprintf(store, sizeof store, "%s/links.db", scratch);
    snprintf(table, sizeof table, "%s/links.yaml", scratch);
    probe_links l = read_probe(json);
    assert_int_equal(l.gpus, 1);
    const char *search[] = {
        "search",    "--replay", gz,  "--links-from", json,  "--store",         store, "--colls",
        "allreduce", "--ranks",  "4", "--max-bytes",  "64K", "--ranks-per-gpu", "4",   NULL};
    ct_result r = ct_run(search);
    if (r.status != 0)
        fail_msg("search: exit %d: %s", r.status, r.err);
    ct_result_free(&r);
    r = fit(store, table, NULL);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    /* the table carries the probe's figures (not those the tune measured for t4.yaml) */
    char *text = slurp(table), want[512];
    snprintf(want, sizeof want,
             "link_matrix:  # stored with run 1 (ccltune probe --links)\n  run: 1\n  gpus: %zu\n"
             "  h2d_gbps: %.2f\n  d2h_gbps: %.2f\n  host_latency_us: %.3f\n  socket: \"%s\"\n",
             l.gpus, l.h2d, l.d2h, l.latency, l.socket);
    assert_contains(text, want);
    free(text);

    const char *plain[] = {"explain", table, "--coll", "allreduce", "--ranks", "4", NULL};
    r = ct_run(plain);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "links:       stored with run 1, 1 GPU\n");
    snprintf(want, sizeof want,
             "host (slowest GPU): %.1f GB/s H2D, %.1f GB/s D2H, %.2f us one way; sockets over "
             "%s\n",
             l.h2d, l.d2h, l.latency, l.socket);
    assert_contains(r.out, want);
    ct_result_free(&r);

    r = explain(table, store);
    if (r.status != 0)
        fail_msg("explain --links: exit %d: %s", r.status, r.err);
    snprintf(want, sizeof want, "link matrix:   measured in %.2f s", l.wall_s);
    assert_contains(r.out, want);
    snprintf(want, sizeof want,
             "GPU 0 host: H2D %.1f GB/s, D2H %.1f GB/s, one-way latency to a host thread %.2f us",
             l.h2d, l.d2h, l.latency);
    assert_contains(r.out, want);
    assert_contains(r.out, "GPU pairs:   none (1 GPU)");
    ct_result_free(&r);

    /* the tuned table with its own store: the matrix the tune measured */
    char t4_path[PATH_MAX];
    day_path(t4_path, sizeof t4_path, "t4.yaml");
    r = explain(t4_path, gz);
    if (r.status != 0)
        fail_msg("explain t4.yaml --links: exit %d: %s", r.status, r.err);
    assert_contains(r.out, "link matrix:   measured in");
    assert_contains(r.out, "GPU pairs:   none (1 GPU)");
    ct_result_free(&r);
}

int main(void)
{
    if (!fixture_mirror())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audit_as_asked),    cmocka_unit_test(test_audit_proto_simple),
        cmocka_unit_test(test_audit_json),        cmocka_unit_test(test_import_production),
        cmocka_unit_test(test_search_sizes_from), cmocka_unit_test(test_links_from_probe),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
