/*
 * test_cli_table.c - `ccltune validate` and `ccltune explain` as a user runs them.
 *
 * Runs the built binary (CCT_CCLTUNE, set by tests/meson.build) through cli_test_util.h's
 * ct_run, stdout and stderr captured, and checks exit codes (0 ok, 1 failure, 2 usage) and
 * the lines a user or a script relies on: "FILE: ok (...)", "FILE:LINE:COL: ..." on stderr,
 * the header and band lines of explain, and the list of topologies when nothing matches.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_test_util.h"
#include "fixture_test_util.h"

typedef ct_result run_result;

/* Run ccltune with the NULL-terminated argument list (argv[0] excluded). */
static run_result run(const char *first, ...)
{
    const char *args[32];
    int n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    assert_non_null(getenv("CCT_CCLTUNE"));
    run_result r = ct_run(args);
    if (!r.out || !r.err)
        fail_msg("cannot run %s", getenv("CCT_CCLTUNE"));
    return r;
}

static void run_free(run_result *r)
{
    ct_result_free(r);
}

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

#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("expected '%s' in:\n%s", (needle), (hay));                                    \
    } while (0)

static void test_validate_good(void **state)
{
    (void)state;
    char *full = data_path("data/tables/full.yaml");
    char *minimal = data_path("data/tables/minimal.yaml");
    run_result r = run("validate", full, minimal, NULL);
    assert_int_equal(r.status, 0);
    char line[4200];
    snprintf(line, sizeof line, "%s: ok (3 sections, 6 rules)\n", full);
    assert_contains(r.out, line);
    snprintf(line, sizeof line, "%s: ok (1 sections, 2 rules)\n", minimal);
    assert_contains(r.out, line);
    assert_string_equal(r.err, "");
    run_free(&r);

    r = run("validate", "--quiet", full, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    run_free(&r);
    free(full);
    free(minimal);
}

static void test_validate_bad(void **state)
{
    (void)state;
    char *good = data_path("data/tables/minimal.yaml");
    char *bad = data_path("bad_tables/unknown-key-rule.yaml");
    /* the bad file first: the good one after it is still checked and reported */
    run_result r = run("validate", bad, good, NULL);
    assert_int_equal(r.status, 1);
    char line[4200];
    snprintf(line, sizeof line, "%s:11:44: unknown key 'algoo' (did you mean 'algo'?)\n", bad);
    assert_string_equal(r.err, line);
    snprintf(line, sizeof line, "%s: ok (1 sections, 2 rules)\n", good);
    assert_string_equal(r.out, line);
    run_free(&r);

    r = run("validate", "--quiet", "/nonexistent/table.yaml", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "/nonexistent/table.yaml: cannot open: No such file or directory");
    run_free(&r);
    free(good);
    free(bad);
}

static void test_validate_usage(void **state)
{
    (void)state;
    run_result r = run("validate", "--bogus", "x.yaml", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "ccltune validate: error: unknown flag '--bogus'");
    run_free(&r);
    r = run("validate", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "no table given");
    run_free(&r);
    r = run("validate", "--help", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "usage: ccltune validate [--quiet] FILE...");
    run_free(&r);
    r = run("--help", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "  validate ");
    assert_contains(r.out, "  explain ");
    run_free(&r);
}

static void test_explain_section(void **state)
{
    (void)state;
    char *full = data_path("data/tables/full.yaml");
    run_result r = run("explain", full, "--coll", "allreduce", "--ranks", "4", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "fingerprint: NVIDIA H200 (cc 9.0), NCCL 2.28.9, CUDA 13.0\n");
    assert_contains(r.out, "topology:    4 rank processes per GPU (MPS), each its own NCCL node: "
                           "never matches a real deployment; links socket: NET/Socket");
    assert_contains(r.out, "LL128:       not allowed: NCCL 2.28 ignores LL128 over NET/Socket\n");
    assert_contains(r.out, "\nallreduce ranks=4 nodes=4\n");
    assert_contains(r.out, "\nallreduce ranks=4 nodes=4 pipe_ops=2 reg_buff=1\n");
    assert_contains(r.out, "  0 B          8 KiB        tree           ll             2       "
                           "nccl    89.000 us   33.0 %   33.0 %\n");
    assert_contains(r.out, "  8 KiB        64 KiB       tree           simple      nccl    "
                           "128 KiB   190.000 us   12.0 %   70.0 %  chunk 128 KiB for tree/simple: "
                           "applied where NCCL asks the tuner (2.30+, tuner v6)\n");
    assert_contains(r.out, "  64 KiB       inf          ring           simple      nccl       "
                           "nccl            -        -        -\n");
    assert_null(strstr(r.out, "allgather"));
    assert_null(strstr(r.out, "left to NCCL")); /* no margin_default: it cannot tell */
    run_free(&r);

    /* a band of NCCL's own choice (channels 0, margin_default 0) says so, and which */
    char *nccl = data_path("data/plot/allreduce-4ranks-nccl.yaml");
    r = run("explain", nccl, "--coll", "allreduce", "--ranks", "4", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "  256 KiB      inf          ring           simple      nccl       "
                           "nccl            -        -    0.0 %  left to NCCL (its default "
                           "here: ring/simple)\n");
    assert_contains(r.out, "  8 KiB        256 KiB      tree           simple         2       "
                           "nccl            -        -        -\n");
    run_free(&r);
    free(nccl);

    /* --pipe-ops/--regbuff: only the section the plugin would pick */
    r = run("explain", full, "--coll", "allreduce", "--ranks", "4", "--pipe-ops", "2", "--regbuff",
            "yes", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "allreduce ranks=4 nodes=4 pipe_ops=2 reg_buff=1\n");
    assert_null(strstr(r.out, "allreduce ranks=4 nodes=4\n"));
    run_free(&r);
    r = run("explain", full, "--coll", "allreduce", "--ranks", "4", "--pipe-ops", "1", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "allreduce ranks=4 nodes=4\n");
    assert_null(strstr(r.out, "pipe_ops=2"));
    run_free(&r);

    r = run("explain", "--coll", "all", "--ranks", "4", "--nodes", "4", full, NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "\nallgather ranks=4 nodes=4\n");
    assert_contains(r.out, "\nallreduce ranks=4 nodes=4\n");
    run_free(&r);
    free(full);
}

/* A 4-process run on one GPU of a 2-GPU host (fingerprint nodes 4, gpus_per_node 2,
 * ranks_per_gpu 4) was printed as "4 nodes x 2 GPUs, 4 ranks per GPU": 32 ranks that never
 * existed.  It is 4 rank processes sharing one GPU; and rules with evidence say it. */
static void test_explain_shared_gpu_topology(void **state)
{
    (void)state;
    char path[] = "/tmp/cct-explain-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(
        "ccltune_table: 2\n"
        "provenance: {tool: t, measured: \"2026-12-01T10:00:00Z\", source: measured,\n"
        "  command: \"ccltune tune --ranks-per-gpu 4\"}\n"
        "fingerprint: {gpu: NVIDIA H200, cc: \"9.0\", gpus_per_node: 2, nodes: 4, "
        "ranks_per_gpu: 4,\n  links: socket, nccl: 2.28.9}\n"
        "ll128: {allowed: false}\n"
        "collectives:\n  allreduce:\n    - ranks: 4\n      nodes: 4\n      rules:\n"
        "        - {min_bytes: 0, max_bytes: 65536, algo: tree, proto: ll, channels: max,\n"
        "           ref_bytes: 32768, evidence: {gain: 1.62, ci: [1.55, 1.7], noise: 0.04, "
        "cycles: 8}}\n"
        "        - {min_bytes: 65536, max_bytes: inf, algo: ring, proto: simple, evidence: none}\n",
        f);
    fclose(f);
    run_result r = run("explain", path, "--coll", "allreduce", "--ranks", "4", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "topology:    4 rank processes sharing one of the host's 2 GPUs (MPS), "
                           "each its own NCCL node: never matches a real deployment");
    assert_null(strstr(r.out, "4 nodes x 2 GPUs"));
    assert_contains(r.out, "measured by: ccltune tune --ranks-per-gpu 4\n");
    assert_contains(r.out, "  0 B          64 KiB       tree           ll           max ");
    assert_contains(r.out, "1.62x faster than NCCL here: gain 1.62x over NCCL at 32 KiB (95 % CI "
                           "1.55-1.70x), noise 4.0 %, 8 cycles\n");
    assert_contains(r.out, "  no NCCL baseline (imported)\n");
    run_free(&r);
    unlink(path);
}

/* A constants-only table: the block is shown, and a rank count without sections is no error
 * (the constants apply at every rank count). */
static void test_explain_constants(void **state)
{
    (void)state;
    char *path = data_path("data/tables/constants-only.yaml");
    run_result r = run("explain", path, "--coll", "allreduce", "--ranks", "3", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "NCCL model:  10 constants written into NCCL's cost model");
    assert_contains(r.out, "  base_latency_us: tree/ll 5.5 ring/ll 4.9 ring/simple 7\n");
    assert_contains(r.out, "  per_ch_max_tree_bw_gbps: hopper/1node 38.7 hopper/3+nodes 36\n");
    assert_contains(r.out, "no section for allreduce ranks=3: NCCL chooses, with the constants");
    run_free(&r);
    r = run("validate", path, NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, ": ok (0 sections, 0 rules, 10 NCCL model constants)\n");
    run_free(&r);
    free(path);
}

static void test_explain_errors(void **state)
{
    (void)state;
    char *full = data_path("data/tables/full.yaml");
    run_result r = run("explain", full, "--coll", "reduce", "--ranks", "4", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "has no section for reduce ranks=4\n");
    assert_contains(r.err, "the table has:\n  allgather ranks=4 nodes=4\n");
    assert_contains(r.err, "  allreduce ranks=4 nodes=4 pipe_ops=2 reg_buff=1\n");
    assert_string_equal(r.out, "");
    run_free(&r);

    r = run("explain", full, "--coll", "allreduce", "--ranks", "4", "--nodes", "2", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "has no section for allreduce ranks=4 nodes=2\n");
    run_free(&r);

    r = run("explain", full, "--coll", "alltoall", "--ranks", "4", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "unknown collective 'alltoall'");
    run_free(&r);
    r = run("explain", full, "--coll", "allreduce", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "--ranks is required");
    run_free(&r);
    r = run("explain", full, "--coll", "allreduce", "--ranks", "4", "--regbuff", "1", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "--regbuff: '1' is not no or yes");
    run_free(&r);
    r = run("explain", full, "--coll", "allreduce", "--ranks", "-4", NULL);
    assert_int_equal(r.status, 2);
    run_free(&r);
    r = run("explain", full, "--frobnicate", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "unknown flag '--frobnicate'");
    run_free(&r);

    char *bad = data_path("bad_tables/gapped-bands.yaml");
    r = run("explain", bad, "--coll", "allreduce", "--ranks", "4", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, ":12:11: allreduce ranks=4 nodes=4 rule 2: gap");
    run_free(&r);
    free(bad);
    free(full);
}

static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    char *text = ct_slurp_fd(fd);
    close(fd);
    assert_non_null(text);
    return text;
}

/* fit --nccl-versions writes fingerprint.nccl_versions (and nothing without the flag); the
 * table loads back, explain shows the widening, and a bad spec is a usage error. */
static void test_fit_nccl_versions(void **state)
{
    (void)state;
    char *store = data_path("data/h200/run-2026-11-29b/tune-2.db.gz");
    char *dir = ct_tmpdir("ncclv");
    char wide[512], plain[512];
    snprintf(wide, sizeof wide, "%s/wide.yaml", dir);
    snprintf(plain, sizeof plain, "%s/plain.yaml", dir);
    run_result r =
        run("fit", "--store", store, "--nccl-versions", "2.28..2.30,2.31.1", "-o", wide, NULL);
    assert_int_equal(r.status, 0);
    run_free(&r);
    r = run("fit", "--store", store, "-o", plain, NULL);
    assert_int_equal(r.status, 0);
    run_free(&r);
    char *text = slurp(wide);
    assert_contains(text, "\n  nccl: \"2.28.9\"\n  nccl_versions: \"2.28..2.30,2.31.1\"\n");
    free(text);
    text = slurp(plain);
    assert_null(strstr(text, "nccl_versions"));
    free(text);
    r = run("validate", wide, NULL);
    assert_int_equal(r.status, 0);
    run_free(&r);
    r = run("explain", wide, "--coll", "allreduce", "--ranks", "2", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "widened at fit time, to 2.28..2.30,2.31.1 (nccl_versions)\n");
    run_free(&r);
    r = run("explain", plain, "--coll", "allreduce", "--ranks", "2", NULL);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "nccl_versions"));
    run_free(&r);
    r = run("diff", plain, wide, NULL); /* where the plugin applies it: a decision */
    assert_int_equal(r.status, 1);
    assert_contains(r.out, "fingerprint nccl_versions: (none) → \"2.28..2.30,2.31.1\"\n");
    run_free(&r);
    static const char *const bad[] = {"2.x", "2.30..2.28", "", "2.28,", ">=2.28"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = run("fit", "--store", store, "--nccl-versions", bad[i], "-o", plain, NULL);
        assert_int_equal(r.status, 2);
        assert_contains(r.err, "--nccl-versions: ");
        run_free(&r);
        r = run("tune", "--recorded", store, "--no-plots", "--nccl-versions", bad[i], "-o", plain,
                NULL);
        assert_int_equal(r.status, 2);
        assert_contains(r.err, "--nccl-versions: ");
        run_free(&r);
    }
    ct_rm_rf(dir);
    free(dir);
    free(store);
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_good),
        cmocka_unit_test(test_validate_bad),
        cmocka_unit_test(test_validate_usage),
        cmocka_unit_test(test_explain_section),
        cmocka_unit_test(test_explain_shared_gpu_topology),
        cmocka_unit_test(test_explain_errors),
        cmocka_unit_test(test_fit_nccl_versions),
        cmocka_unit_test(test_explain_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
