/*
 * test_cli_diff.c - `ccltune diff` as a reviewer or a CI script runs it: the lines on
 * stdout, the summary line, and the exit status (0 same decisions, 1 different, 2 usage
 * error or a table that does not load, with the loader's FILE:LINE:COL message on stderr).
 *
 * The tables are written to a temporary folder by setup(); OLD and NEW differ in one band
 * edge whose range moves from ring/ll (a flat 112 us model) to ring/simple (a flat 100 us),
 * so the line and its "12 % faster" are known exactly.
 */
#include "report_test_util.h"

#define HEAD(created)                                                                              \
    "ccltune_table: 1\n"                                                                           \
    "provenance: {tool: \"ccltune 0.1.0\", created: \"" created "\", source: measured}\n"          \
    "fingerprint: {gpu: NVIDIA H200, cc: 9.0, gpus_per_node: 8, nodes: 1, links: nvlink, "         \
    "nccl: 2.28.9}\n"                                                                              \
    "ll128: {allowed: false}\n"                                                                    \
    "collectives:\n  allreduce:\n    - ranks: 8\n      nodes: 1\n      rules:\n"

#define MODELS(simple_us)                                                                          \
    "      models:\n"                                                                              \
    "        - {algo: ring, proto: ll, kind: linear, alpha_us: 112}\n"                             \
    "        - {algo: ring, proto: simple, kind: linear, alpha_us: " simple_us "}\n"

static const char *OLD = HEAD(
    "2026-11-29T14:00:00Z") "        - {min_bytes: 0, max_bytes: 4MiB, algo: ring, proto: ll}\n"
                            "        - {min_bytes: 4MiB, max_bytes: inf, algo: ring, proto: "
                            "simple}\n" MODELS("100");
static const char *NEW = HEAD(
    "2026-11-29T14:00:00Z") "        - {min_bytes: 0, max_bytes: 2MiB, algo: ring, proto: ll}\n"
                            "        - {min_bytes: 2MiB, max_bytes: inf, algo: ring, proto: "
                            "simple}\n" MODELS("100");
/* OLD re-made a day later: provenance only */
static const char *LATER = HEAD(
    "2026-11-30T14:00:00Z") "        - {min_bytes: 0, max_bytes: 4MiB, algo: ring, proto: ll}\n"
                            "        - {min_bytes: 4MiB, max_bytes: inf, algo: ring, proto: "
                            "simple}\n" MODELS("100");
/* OLD refitted: ring/simple now predicted 10 % slower, same choices */
static const char *SLOWER = HEAD(
    "2026-11-29T14:00:00Z") "        - {min_bytes: 0, max_bytes: 4MiB, algo: ring, proto: ll}\n"
                            "        - {min_bytes: 4MiB, max_bytes: inf, algo: ring, proto: "
                            "simple}\n" MODELS("110");

typedef struct files {
    char dir[64];
    char old_t[128], new_t[128], later[128], slower[128];
} files;

static int setup(void **state)
{
    files *f = calloc(1, sizeof *f);
    rp_tmpdir(f->dir, sizeof f->dir);
    const struct {
        char *path;
        const char *name, *text;
    } all[] = {{f->old_t, "old.yaml", OLD},
               {f->new_t, "new.yaml", NEW},
               {f->later, "later.yaml", LATER},
               {f->slower, "slower.yaml", SLOWER}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        snprintf(all[i].path, 128, "%s/%s", f->dir, all[i].name);
        rp_write(all[i].path, all[i].text);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    files *f = *state;
    rp_rmdir(f->dir);
    free(f);
    return 0;
}

static void test_equal(void **state)
{
    files *f = *state;
    rp_result r = rp_run("diff", f->old_t, f->old_t);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "decisions unchanged\n0 significant changes, 0 within noise\n");
    assert_string_equal(r.err, "");
    rp_free(&r);
}

static void test_different(void **state)
{
    files *f = *state;
    rp_result r = rp_run("diff", f->old_t, f->new_t);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "allreduce, 8 ranks (1 node), 2 MiB–4 MiB: ring/ll → ring/simple, "
                               "predicted 12 % faster\n"
                               "1 decision change\n"
                               "1 significant change, 0 within noise\n");
    assert_string_equal(r.err, "");
    rp_free(&r);
    /* a change these tables carry no measured evidence for is significant */
    r = rp_run("diff", "--fail-on", "significant", f->old_t, f->new_t);
    assert_int_equal(r.status, 1);
    rp_free(&r);
    r = rp_run("diff", "--fail-on", "significant", f->old_t, f->slower);
    assert_int_equal(r.status, 0);
    rp_free(&r);
    r = rp_run("diff", "--fail-on", "everything", f->old_t, f->new_t);
    assert_int_equal(r.status, 2);
    rp_assert_contains(r.err, "--fail-on: 'everything' is not any or significant");
    rp_free(&r);
}

/* The agreement of two tables' decisions at 4 sizes per octave: the two differ on
 * [2 MiB, 4 MiB), i.e. at 2, 2.38, 2.83 and 3.36 MiB of the 65 sizes from 1 KiB to 64 MiB. */
static void test_agreement(void **state)
{
    files *f = *state;
    rp_result r = rp_run("diff", "--agreement", f->old_t, f->new_t);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "allreduce: 61 of 65 sizes agree (93.8 %)\n"
                               "agreement: 61 of 65 sizes (93.8 %)\n");
    rp_free(&r);
    r = rp_run("diff", "--agreement", "--max-bytes", "1M", f->old_t, f->new_t);
    rp_assert_contains(r.out, "agreement: 41 of 41 sizes (100.0 %)");
    rp_free(&r);
    r = rp_run("diff", "--agreement", "--min-bytes", "huge", f->old_t, f->new_t);
    assert_int_equal(r.status, 2);
    rp_free(&r);
}

static void test_provenance_only(void **state)
{
    files *f = *state;
    rp_result r = rp_run("diff", f->old_t, f->later);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "decisions unchanged; 1 record change (provenance, models) not "
                               "shown, --all lists it\n0 significant changes, 0 within noise\n");
    rp_free(&r);
    r = rp_run("diff", "--all", f->old_t, f->later);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "provenance created: \"2026-11-29T14:00:00Z\" → "
                               "\"2026-11-30T14:00:00Z\"\n"
                               "decisions unchanged, 1 record change (provenance, models)\n"
                               "0 significant changes, 0 within noise\n");
    rp_free(&r);
}

static void test_threshold(void **state)
{
    files *f = *state;
    rp_result r = rp_run("diff", f->old_t, f->slower);
    assert_int_equal(r.status, 0); /* a moved prediction is a note, not a decision */
    rp_assert_contains(r.out, "allreduce, 8 ranks (1 node), 4 MiB–inf: ring/simple unchanged, "
                              "now predicted 10 % slower\n");
    rp_assert_contains(r.out, "decisions unchanged, 1 note;");
    rp_free(&r);
    r = rp_run("diff", "--threshold", "0.2", f->old_t, f->slower);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "now predicted"));
    rp_free(&r);
}

static void test_usage_errors(void **state)
{
    files *f = *state;
    const char *const cases[][5] = {
        {"diff", NULL},
        {"diff", f->old_t, NULL},
        {"diff", f->old_t, f->new_t, f->later, NULL},
        {"diff", "--threshold", "abc", f->old_t, f->new_t},
        {"diff", "--threshold", "-0.1", f->old_t, f->new_t},
        {"diff", "--bogus", f->old_t, f->new_t, NULL},
        {"diff", f->old_t, f->new_t, "--threshold", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[6] = {0};
        memcpy(args, cases[i], sizeof cases[i]);
        rp_result r = rp_run_env(NULL, args);
        if (r.status != 2)
            fail_msg("case %zu: exit %d, stderr:\n%s", i, r.status, r.err);
        rp_assert_contains(r.err, "ccltune diff: error: ");
        rp_assert_contains(r.err, "Try 'ccltune diff --help'.");
        assert_string_equal(r.out, "");
        rp_free(&r);
    }
    rp_result r = rp_run("diff", "--help");
    assert_int_equal(r.status, 0);
    assert_int_equal(strncmp(r.out, "usage: ccltune diff ", 20), 0);
    rp_assert_contains(r.out, "Exit status: 0 the decisions are equal, 1 they differ, 2");
    rp_free(&r);
}

static void test_bad_files(void **state)
{
    files *f = *state;
    char *src = rp_path("bad_tables/unknown-key-rule.yaml"), bad[128];
    snprintf(bad, sizeof bad, "%s/unknown-key-rule.yaml", f->dir);
    rp_copy(src, bad); /* private and 0644: only the key is wrong, not the file's mode */
    free(src);
    char expect[4200];
    snprintf(expect, sizeof expect, "%s:11:44: unknown key 'algoo' (did you mean 'algo'?)\n", bad);
    rp_result r = rp_run("diff", f->old_t, bad);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, expect);
    assert_string_equal(r.out, "");
    rp_free(&r);
    r = rp_run("diff", bad, f->old_t); /* the old side too */
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, expect);
    rp_free(&r);

    char missing[128];
    snprintf(missing, sizeof missing, "%s/absent.yaml", f->dir);
    r = rp_run("diff", f->old_t, missing);
    assert_int_equal(r.status, 2);
    rp_assert_contains(r.err, missing);
    rp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal),           cmocka_unit_test(test_different),
        cmocka_unit_test(test_provenance_only), cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_usage_errors),    cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_agreement),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
