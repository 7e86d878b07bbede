/*
 * test_plugin_fleet.c - CCLTUNE_TABLE naming a folder of tables, and RCCL, through the built
 * libnccl-tuner-ccltune.so as NCCL drives it (stand-in CUDA driver and ncclGetVersion).
 *
 * Each table of a folder picks a different algorithm/protocol for the same call, so the
 * entry NCCL's cost table gets zeroed tells which table served the communicator.  Covered:
 * the precedence (exact NCCL release over another patch over major.minor, file order last),
 * the one INFO line naming the pick and why, a tie (first by file name, one WARN), no match
 * (NCCL's defaults, one WARN naming the closest tables), unusable files in the folder (one
 * WARN each, skipped; the rest still used; CCLTUNE_STRICT=1 fails init), an empty folder,
 * and the shared-GPU rule.  RCCL (a stand-in librccl.so.1 loaded first): one WARN, the
 * constants structure untouched, the table's rules still applied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sys/stat.h>

#include "cli_test_util.h"
#include "plugin_test_util.h"

enum { TREE_LL = 0, TREE_SIMPLE = 2, RING_LL = 3, RING_SIMPLE = 5 };

static char *dir;

static void put(const char *name, const char *text, mode_t mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

/* A table for allreduce on 8 ranks, 1 node choosing `choice` ("ring, proto: ll"). */
static void table(const char *name, const char *gpu, const char *nccl, int rpg, const char *choice,
                  const char *extra)
{
    char body[1024];
    snprintf(body, sizeof body,
             "  allreduce:\n"
             "    - ranks: 8\n"
             "      nodes: 1\n"
             "      rules:\n"
             "        - {min_bytes: 0, max_bytes: inf, algo: %s}\n%s",
             choice, extra ? extra : "");
    char *text = tu_table_yaml(gpu, "9.0", nccl, rpg, true, body);
    put(name, text, 0644);
    free(text);
}

static void fresh_dir(void)
{
    if (dir) {
        ct_rm_rf(dir);
        free(dir);
    }
    dir = ct_tmpdir("plugin-fleet");
    assert_non_null(dir);
    chmod(dir, 0755);
    setenv("CCLTUNE_TABLE", dir, 1);
}

/* Load the plugin, init one communicator (8 ranks, 1 node), make one allreduce call:
 * returns the cost entry zeroed (-1: none; -2: init failed).  k may be NULL. */
static int run_once(ncclTunerConstants_v5_t *k)
{
    tu_log_clear();
    void *h = tu_plugin_open();
    assert_non_null(h);
    ncclTuner_v5_t *v5 = tu_sym(h, "ncclTunerPlugin_v5");
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    ncclTunerConstants_v5_t scratch;
    memset(&scratch, 0, sizeof scratch);
    void *ctx = NULL;
    int zero = -2;
    if (v5->init(&ctx, 7, 8, 1, tu_logger, &nvl, k ? k : &scratch) == ncclSuccess) {
        float costs[21];
        tu_costs_fill(costs, 7, 3);
        int nch = 0;
        v5->getCollInfo(ctx, 4, 4096, 1, (float **)costs, 7, 3, 0, &nch);
        zero = -1;
        for (int i = 0; i < 21; i++)
            if (costs[i] == 0.0f)
                zero = i;
        v5->finalize(ctx);
    }
    assert_true(tu_plugin_close(h));
    if (getenv("CCT_TEST_VERBOSE"))
        for (int i = 0; i < tu_n_log; i++)
            fprintf(stderr, "  [%d] %s\n", tu_log[i].level, tu_log[i].text);
    return zero;
}

static int setup(void **state)
{
    (void)state;
    assert_true(tu_load_fake_cuda());
    unsetenv("CCLTUNE_STRICT");
    unsetenv("NCCL_HOSTID");
    unsetenv("CCLTUNE_TABLE_UNSAFE_OK");
    setenv("CCT_FAKE_GPU_NAME", "NVIDIA H200", 1);
    fake_nccl_version = 22809;
    fresh_dir();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    dir = NULL;
    unsetenv("CCLTUNE_TABLE");
    unsetenv("CCLTUNE_STRICT");
    unsetenv("NCCL_HOSTID");
    return 0;
}

static void precedence(void **state)
{
    (void)state;
    table("a-widened.yaml", "NVIDIA H200", "2.28", 1, "ring, proto: ll", NULL);
    table("b-exact.yaml", "NVIDIA H200", "2.28.9", 1, "tree, proto: simple", NULL);
    table("c-h100.yaml", "NVIDIA H100 80GB HBM3", "2.28.9", 1, "ring, proto: simple", NULL);
    table("d-older.yaml", "NVIDIA H200", "2.27.3", 1, "tree, proto: ll", NULL);

    assert_int_equal(run_once(NULL), TREE_SIMPLE); /* exact release */
    const char *info = tu_log_find(NCCL_LOG_INFO, "init comm");
    assert_non_null(info);
    assert_non_null(strstr(info, "b-exact.yaml (from CCLTUNE_TABLE)"));
    assert_non_null(strstr(info, "picked b-exact.yaml of 4 in folder"));
    assert_non_null(strstr(info, "NCCL exact"));
    assert_non_null(strstr(info, "over a-widened.yaml (GPU and cc named, NCCL major.minor)"));
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "picked"), 1);

    fake_nccl_version = 22807; /* 2.28.9 is now another patch: still over major.minor */
    assert_int_equal(run_once(NULL), TREE_SIMPLE);
    assert_non_null(strstr(tu_log_find(NCCL_LOG_INFO, "init comm"), "NCCL other patch"));

    fake_nccl_version = 22703; /* only the 2.27 table */
    assert_int_equal(run_once(NULL), TREE_LL);
    assert_non_null(strstr(tu_log_find(NCCL_LOG_INFO, "init comm"), "the only match"));

    setenv("CCT_FAKE_GPU_NAME", "NVIDIA H100 80GB HBM3", 1);
    fake_nccl_version = 22809;
    assert_int_equal(run_once(NULL), RING_SIMPLE);
    setenv("CCT_FAKE_GPU_NAME", "NVIDIA H200", 1);
}

static void no_match(void **state)
{
    (void)state;
    table("a-h100.yaml", "NVIDIA H100 80GB HBM3", "2.28.9", 1, "ring, proto: ll", NULL);
    table("b-nccl27.yaml", "NVIDIA H200", "2.27.3", 1, "tree, proto: simple", NULL);
    fake_nccl_version = 22809;
    assert_int_equal(run_once(NULL), -1); /* NCCL's defaults */
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 1);
    const char *w = tu_log_find(NCCL_LOG_WARN, "no table in folder");
    assert_non_null(w);
    /* nearest first: the NCCL miss before the GPU miss */
    const char *nccl = strstr(w, "b-nccl27.yaml (nccl-mismatch"), *gpu = strstr(w, "a-h100.yaml");
    assert_non_null(nccl);
    assert_non_null(gpu);
    assert_true(nccl < gpu);
    assert_non_null(strstr(tu_log_find(NCCL_LOG_INFO, "finalize"), "mismatch=1"));

    setenv("CCLTUNE_STRICT", "1", 1);
    assert_int_equal(run_once(NULL), -2);
    unsetenv("CCLTUNE_STRICT");
}

static void tie(void **state)
{
    (void)state;
    table("x.yaml", "NVIDIA H200", "2.28.9", 1, "ring, proto: ll", NULL);
    table("y.yaml", "NVIDIA H200", "2.28.9", 1, "tree, proto: simple", NULL);
    assert_int_equal(run_once(NULL), RING_LL);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 1);
    assert_non_null(tu_log_find(NCCL_LOG_WARN, "tables x.yaml and y.yaml"));
    assert_non_null(strstr(tu_log_find(NCCL_LOG_INFO, "init comm"), "first by file name"));
}

static void bad_files(void **state)
{
    (void)state;
    table("good.yaml", "NVIDIA H200", "2.28.9", 1, "ring, proto: ll", NULL);
    put("broken.yaml", "ccltune_table: 1\nfingerprint: [not, a, mapping\n", 0644);
    char *text = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, true, "  {}\n");
    put("open.yaml", text, 0666); /* writable by anyone: the mode rule */
    free(text);
    put(".hidden.yaml", "not even yaml: [", 0644); /* hidden: not a table of the folder */
    put("README.txt", "tables for the fleet\n", 0644);
    assert_int_equal(run_once(NULL), RING_LL);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 2);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "broken.yaml"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "(rule mode)"), 1);
    assert_non_null(strstr(tu_log_find(NCCL_LOG_INFO, "init comm"), "picked good.yaml of 1"));

    setenv("CCLTUNE_STRICT", "1", 1);
    assert_int_equal(run_once(NULL), -2);
    unsetenv("CCLTUNE_STRICT");
}

static void empty_folder(void **state)
{
    (void)state;
    assert_int_equal(run_once(NULL), -1);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 1);
    assert_non_null(tu_log_find(NCCL_LOG_WARN, "folder holds no *.yaml table"));
}

static void shared_gpu(void **state)
{
    (void)state;
    table("plain.yaml", "NVIDIA H200", "2.28.9", 1, "ring, proto: ll", NULL);
    table("shared.yaml", "NVIDIA H200", "2.28.9", 8, "tree, proto: simple", NULL);
    assert_int_equal(run_once(NULL), RING_LL);
    setenv("NCCL_HOSTID", "rank-0", 1);
    assert_int_equal(run_once(NULL), TREE_SIMPLE);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    unsetenv("NCCL_HOSTID");
}

/* ---- RCCL ---- */

static const char *constants_block = "nccl_constants:\n"
                                     "  base_latency_us: {ring/ll: 4.5}\n";

static void rccl(void **state)
{
    (void)state;
    table("h200.yaml", "NVIDIA H200", "2.28.9", 1, "ring, proto: ll", constants_block);
    ncclTunerConstants_v5_t before, k;
    memset(&before, 0x5a, sizeof before);

    /* NCCL: the constant is written (so the check below can fail) */
    k = before;
    assert_int_equal(run_once(&k), RING_LL);
    assert_memory_not_equal(&k, &before, sizeof k);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "RCCL"), 0);

    /* RCCL: nothing written, one WARN, the rules still apply */
    const char *path = getenv("CCT_FAKE_RCCL");
    assert_non_null(path);
    void *r = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(r);
    k = before;
    assert_int_equal(run_once(&k), RING_LL);
    assert_memory_equal(&k, &before, sizeof k);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 1);
    const char *w = tu_log_find(NCCL_LOG_WARN, "RCCL detected");
    assert_non_null(w);
    assert_non_null(strstr(w, "librccl.so.1 is loaded"));
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "wrote"), 0);
    dlclose(r);
}

int main(void)
{
    tu_log_echo = getenv("CCT_TEST_VERBOSE") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(no_match, setup, teardown),
        cmocka_unit_test_setup_teardown(tie, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(shared_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(rccl, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
