/*
 * test_job_weights.c - a recorded job weighted by measured gains: `ccltune audit RECORDING
 * --table T [--steps N] [--store DB] [--json]` (src/cli/cmd_audit.c,
 * src/import/cct_recording_audit.c, src/fit/cct_store_gains.c).
 *
 * Two rank processes each record allreduce 1 KiB on ring/ll/2 (the first rule, measured
 * gain 1.5, CI 1.25..2.0), 1 MiB on tree/simple (the second rule, no evidence) and 256 KiB
 * on tree/simple.  From the table's evidence only the 1 KiB calls are estimated; from a
 * store (NCCL's default 30 us vs 20 us at 1 KiB, 120 us vs 100 us at 1 MiB, nothing within
 * 2x of 256 KiB) the 1 MiB calls are too, at the store's gain.  The numbers are worked by
 * hand in the comments: per rank process, per step with --steps, and the share of the
 * job's collective time; `explain --weights-from` shows the same per rule band.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli_test_util.h"
#include "rec_test_util.h"

#include "cct_json.h"
#include "cct_store.h"

static char *dir;
static char table[4400], rec0[4400], rec1[4400], store[4400];

static const char *table_yaml =
    "ccltune_table: 2\n"
    "provenance:\n"
    "  tool: \"ccltune test\"\n"
    "  measured: \"2026-11-29T14:00:00Z\"\n"
    "  source: \"hand-written\"\n"
    "fingerprint:\n"
    "  gpu: \"NVIDIA H200\"\n"
    "  cc: \"9.0\"\n"
    "  gpus_per_node: 1\n"
    "  nodes: 4\n"
    "  ranks_per_gpu: 4\n"
    "  links: socket\n"
    "  nccl: \"2.28.9\"\n"
    "ll128:\n"
    "  allowed: false\n"
    "collectives:\n"
    "  allreduce:\n"
    "    - ranks: 4\n"
    "      nodes: 4\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, channels: 2,\n"
    "           predicted_us: 20.0, ref_bytes: 1024,\n"
    "           evidence: {gain: 1.5, ci: [1.25, 2.0], noise: 0.04, cycles: 8}}\n"
    "        - {min_bytes: 64KiB, max_bytes: inf, algo: tree, proto: simple}\n";

/* per process: 1 KiB 100 x 20 us = 2 ms, 1 MiB 10 x 100 us = 1 ms, 256 KiB 10 x 50 us */
static const rt_row rows[] = {
    {"allreduce", 1024, "ring", "ll", 2, 100, 2000000},
    {"allreduce", 1048576, "tree", "simple", 4, 10, 1000000},
    {"allreduce", 262144, "tree", "simple", 4, 10, 500000},
};

static void put(cct_store *s, int64_t run, int algo, int proto, int channels, uint64_t bytes,
                double us)
{
    cct_point p;
    memset(&p, 0, sizeof p);
    p.cfg = (cct_config){.coll = CCT_COLL_ALLREDUCE,
                         .algo = algo,
                         .proto = proto,
                         .channels = channels,
                         .ranks = 4,
                         .nodes = 4};
    p.bytes = bytes;
    p.stats = (cct_stats){4, us, us, us, us, us, 0.01};
    p.status = CCT_POINT_OK;
    p.nccl_algo = p.nccl_proto = -1;
    cct_error err;
    if (cct_store_add_point(s, run, &p, NULL, 0, &err) != CCT_OK)
        fail_msg("%s", err.msg);
}

/* with_bench: also the bench's timing of the table as applied at 1 KiB (25 us) */
static void make_store(bool with_bench)
{
    cct_store *s;
    cct_error err;
    if (cct_store_open(store, false, &s, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_store_fingerprint fp;
    memset(&fp, 0, sizeof fp);
    snprintf(fp.gpu, sizeof fp.gpu, "NVIDIA H200");
    fp.cc = 90;
    fp.gpus_per_node = 1;
    fp.nodes = 4;
    fp.ranks_per_gpu = 4;
    snprintf(fp.links, sizeof fp.links, "socket");
    snprintf(fp.nccl, sizeof fp.nccl, "2.28.9");
    snprintf(fp.host, sizeof fp.host, "test");
    cct_store_run run;
    memset(&run, 0, sizeof run);
    assert_int_equal(cct_store_put_fingerprint(s, &fp, &run.fingerprint_id, &err), CCT_OK);
    snprintf(run.tool, sizeof run.tool, "ccltune test");
    snprintf(run.source, sizeof run.source, "search");
    snprintf(run.plan_hash, sizeof run.plan_hash, "0");
    assert_int_equal(cct_store_begin_run(s, &run, &err), CCT_OK);
    put(s, run.id, CCT_DEFAULT, CCT_DEFAULT, 0, 1024, 30.0);
    put(s, run.id, CCT_ALGO_RING, CCT_PROTO_LL, 2, 1024, 20.0);
    if (with_bench)
        put(s, run.id, CCT_TUNED, CCT_TUNED, 0, 1024, 25.0);
    put(s, run.id, CCT_DEFAULT, CCT_DEFAULT, 0, 1048576, 120.0);
    put(s, run.id, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0, 1048576, 100.0);
    /* 64 KiB: 4x from the recorded 256 KiB, too far to answer for it */
    put(s, run.id, CCT_DEFAULT, CCT_DEFAULT, 0, 65536, 60.0);
    put(s, run.id, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0, 65536, 40.0);
    assert_int_equal(cct_store_finish_run(s, run.id, CCT_RUN_DONE, &err), CCT_OK);
    cct_store_close(s);
}

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("weights");
    if (!dir)
        return -1;
    snprintf(table, sizeof table, "%s/t.yaml", dir);
    snprintf(rec0, sizeof rec0, "%s/p0.rec", dir);
    snprintf(rec1, sizeof rec1, "%s/p1.rec", dir);
    snprintf(store, sizeof store, "%s/m.db", dir);
    if (!ct_write_table(table, table_yaml))
        return -1;
    rt_comm comm = {4, 4, rows, 3};
    return rt_write(rec0, &comm, 1) && rt_write(rec1, &comm, 1) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    return 0;
}

static ct_result audit(const char *a, const char *b, const char *c, const char *d, const char *e)
{
    const char *args[] = {"audit", rec0, rec1, "--table", table, a, b, c, d, e, NULL};
    return ct_run(args);
}

static void test_per_step_from_evidence(void **state)
{
    (void)state;
    /* saved: 2 processes x 2 ms x (1.5 - 1) = 2 ms, CI 1..4 ms; per process per step
     * (10 steps): 0.100 ms (0.050..0.200).  Collective time with NCCL's choices: 2 x 3.5 ms
     * recorded + 2 ms saved = 9 ms, 0.450 ms per process per step; 2 / 9 = 22.2 %. */
    ct_result r = audit("--steps", "10", NULL, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "for this job the table saves 0.100 ms GPU per step per rank "
                                  "process (0.050..0.200), 22.2 % of its collective time "
                                  "(0.450 ms per step with NCCL's own choices; 2 rank processes "
                                  "recorded, 10 steps); gains from the rules' measured evidence"));
    assert_non_null(strstr(r.out, "no estimate for 40 calls"));
    ct_result_free(&r);
    /* without --steps: over the recorded job, and the hint */
    r = audit(NULL, NULL, NULL, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "saves 1.000 ms GPU over the recorded job per rank process"));
    assert_non_null(strstr(r.out, "pass --steps N"));
    ct_result_free(&r);
}

static const char *job_text(const cct_json_doc *doc, const char *key)
{
    const cct_json_node *job = cct_json_member(doc, cct_json_root(doc), "job");
    assert_non_null(job);
    const cct_json_node *v = cct_json_member(doc, job, key);
    assert_non_null(v);
    return cct_json_text(doc, v);
}

static void test_json(void **state)
{
    (void)state;
    ct_result r = audit("--steps", "10", "--json", NULL, NULL);
    assert_int_equal(r.status, 0);
    cct_json_doc doc;
    cct_json_init(&doc);
    cct_error err;
    if (cct_json_parse(&doc, r.out, strlen(r.out), "audit.json", &err) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(job_text(&doc, "saved_ns"), "100000");
    assert_string_equal(job_text(&doc, "nccl_collective_ns"), "450000");
    assert_string_equal(job_text(&doc, "steps"), "10");
    assert_string_equal(job_text(&doc, "processes"), "2");
    assert_string_equal(job_text(&doc, "per"), "step_per_process");
    assert_string_equal(job_text(&doc, "gains_from"), "table_evidence");
    cct_json_destroy(&doc);
    ct_result_free(&r);
}

static void test_gains_from_store(void **state)
{
    (void)state;
    make_store(false);
    /* 1 KiB: 30 / 20 = 1.5 -> 2 ms saved; 1 MiB: 120 / 100 = 1.2 -> 2 x 1 ms x 0.2 = 0.4 ms;
     * 256 KiB: the nearest measured size, 64 KiB, is 4x away -> no estimate.  Per process
     * per step: 2.4 / 2 / 10 = 0.120 ms; 2.4 / (7 + 2.4) = 25.5 % */
    ct_result r = audit("--steps", "10", "--store", store, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "saves 0.120 ms GPU per step per rank process (0.120..0.120), "
                                  "25.5 % of its collective time"));
    assert_non_null(strstr(r.out, "gains from the measurements in"));
    assert_non_null(strstr(r.out, "no estimate for 20 calls"));
    ct_result_free(&r);
}

static void test_gains_from_bench_store(void **state)
{
    (void)state;
    make_store(true);
    /* 1 KiB: the bench's table timing wins over the forced ring/ll/2: 30 / 25 = 1.2 ->
     * 4 ms x 0.2 = 0.8 ms; 1 MiB as before 0.4 ms.  Per process per step 1.2 / 20 = 0.060 ms */
    ct_result r = audit("--steps", "10", "--store", store, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "saves 0.060 ms GPU per step per rank process"));
    ct_result_free(&r);
}

static void test_bad_flags(void **state)
{
    (void)state;
    const char *no_table[] = {"audit", rec0, "--steps", "10", NULL};
    ct_result r = ct_run(no_table);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "needs --table"));
    ct_result_free(&r);
    r = audit("--steps", "0", NULL, NULL, NULL);
    assert_int_equal(r.status, 2);
    ct_result_free(&r);
    char missing[4500];
    snprintf(missing, sizeof missing, "%s/none.db", dir);
    r = audit("--store", missing, NULL, NULL, NULL);
    assert_int_equal(r.status, 2);
    ct_result_free(&r);
}

static void test_explain_weights(void **state)
{
    (void)state;
    /* per process per step: 1 KiB 100 calls / 10 = 10.0, 2 ms / 10 = 0.200 ms, saving
     * 0.100 ms; the second band 20 calls, 1.5 ms -> 2.0 calls, 0.150 ms, no estimate */
    const char *args[] = {
        "explain",        table, "--coll",  "allreduce", "--ranks", "4", "--weights-from", rec0,
        "--weights-from", rec1,  "--steps", "10",        NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, 0);
    assert_non_null(
        strstr(r.out, "job: 10.0 calls, 0.200 ms GPU per step per rank process, saves 0.100 ms\n"));
    assert_non_null(strstr(r.out, "job: 2.0 calls, 0.150 ms GPU per step per rank process\n"));
    assert_non_null(strstr(r.out, "for this job the table saves 0.100 ms GPU per step"));
    ct_result_free(&r);
    /* a folder stands for its recordings: the same numbers */
    const char *folder[] = {"explain",        table, "--coll",  "allreduce", "--ranks", "4",
                            "--weights-from", dir,   "--steps", "10",        NULL};
    r = ct_run(folder);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "job: 10.0 calls, 0.200 ms GPU per step per rank process"));
    ct_result_free(&r);
    /* --steps without recordings: usage; a damaged recording: exit 1 with FILE:OFFSET */
    const char *steps[] = {"explain", table,     "--coll", "allreduce", "--ranks",
                           "4",       "--steps", "10",     NULL};
    r = ct_run(steps);
    assert_int_equal(r.status, 2);
    ct_result_free(&r);
    assert_int_equal(truncate(rec1, 50), 0);
    const char *bad[] = {"explain",        table, "--coll", "allreduce", "--ranks", "4",
                         "--weights-from", rec1,  NULL};
    r = ct_run(bad);
    assert_int_equal(r.status, 1);
    char want[4500];
    snprintf(want, sizeof want, "%s:", rec1);
    assert_non_null(strstr(r.err, want));
    ct_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_per_step_from_evidence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gains_from_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gains_from_bench_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_flags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain_weights, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
