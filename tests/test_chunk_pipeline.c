/*
 * test_chunk_pipeline.c - chunk sizes from search to the plugin, without a GPU: a replayed
 * `ccltune search --chunk` on a recording relabelled as NCCL 2.30.7 (the replay backend's
 * synthetic chunk model answers: 20 % faster for a chunk far below NCCL's own, a gain above
 * the run's noise floor, see cct_backend_replay.c), `ccltune fit` of it, and the fitted table
 * loaded by the built plugin and asked through its v6 getChunkSize the way NCCL 2.30 asks.
 *
 * Pinned: only a rule whose configuration has a chunk variant that beats NCCL's own chunk
 * with evidence gets one (here Ring/Simple, where the synthetic gain clears the noise; the
 * Tree/Simple variant's smaller gain does not and stays NCCL's); the plugin answers the
 * rule's chunk for the rule's algorithm/protocol and leaves NCCL's chunk for any other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_util.h"
#include "nccl_tuner_abi.h"
#include "plugin_test_util.h"
#include "recorded_test_util.h"

#include "cct_table.h"

enum { A_TREE, A_RING };
enum { P_LL, P_LL128, P_SIMPLE };

static char *dir, *table;

/* search and fit once for every test */
static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("chunk-pipeline");
    char *rec = dir ? recorded_copy_into(dir, "h200/search-2ranks.db.gz", "v6.db") : NULL;
    if (!rec)
        return -1;
    sqlite3 *db;
    int rc = sqlite3_open(rec, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "UPDATE fingerprints SET nccl = '2.30.7'", NULL, NULL, NULL);
    sqlite3_close(db);
    char store[4200];
    snprintf(store, sizeof store, "%s/store.db", dir);
    table = malloc(4200);
    snprintf(table, 4200, "%s/table.yaml", dir);
    const char *search[] = {"search",      "--replay",   rec,       "--store",   store,
                            "--colls",     "allreduce",  "--algos", "ring,tree", "--protos",
                            "ll,simple",   "--channels", "nccl",    "--chunk",   "nccl,32K",
                            "--max-bytes", "16M",        NULL};
    ct_result r = ct_run(search);
    int ok = rc == SQLITE_OK && r.status == 0;
    if (!ok)
        fprintf(stderr, "search: %s\n", r.err ? r.err : "");
    ct_result_free(&r);
    const char *fit[] = {"fit", "--store", store, "-o", table, NULL};
    r = ct_run(fit);
    ok = ok && r.status == 0;
    if (r.status != 0)
        fprintf(stderr, "fit: %s\n", r.err ? r.err : "");
    ct_result_free(&r);
    free(rec);
    return ok ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (dir)
        ct_rm_rf(dir);
    free(dir);
    free(table);
    return 0;
}

static void test_fitted_rules(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file(table, &t, &err), CCT_OK);
    assert_int_equal(t.n_sections, 1);
    const cct_section *s = &t.sections[0];
    size_t with_chunk = 0;
    for (size_t i = 0; i < s->n_rules; i++) {
        const cct_rule *r = &s->rules[i];
        if (r->chunk_bytes == 0)
            continue;
        with_chunk++;
        assert_int_equal(r->algo, CCT_ALGO_RING);
        assert_int_equal(r->proto, CCT_PROTO_SIMPLE);
        assert_int_equal(r->chunk_bytes, 32768);
        assert_true(r->min_bytes > 32768); /* within one chunk nothing changes */
    }
    assert_int_equal(with_chunk, 1);
    /* no model of a chunk variant: models describe configurations at NCCL's chunk */
    for (size_t i = 0; i < s->n_models; i++)
        assert_true(s->models[i].algo == CCT_ALGO_RING || s->models[i].algo == CCT_ALGO_TREE);
    cct_table_destroy(&t);
}

static void test_plugin_applies_them(void **state)
{
    (void)state;
    assert_true(tu_load_fake_cuda());
    setenv("CCLTUNE_TABLE", table, 1);
    unsetenv("CCLTUNE_FORCE");
    unsetenv("CCLTUNE_MEASURE");
    setenv("NCCL_HOSTID", "rank0", 1); /* measured with ranks sharing a GPU, one host id each */
    fake_nccl_version = 23007;
    void *h = tu_plugin_open();
    assert_non_null(h);
    ncclTuner_v6_t *v6 = tu_sym(h, "ncclTunerPlugin_v6");
    assert_non_null(v6);
    ncclNvlDomainInfo_v6_t nvl = {2, 1, 1};
    static ncclTunerConstants_v6_t constants;
    void *ctx = NULL;
    assert_int_equal(v6->init(&ctx, 0x6002, 2, 2, tu_logger, &nvl, &constants), ncclSuccess);
    assert_non_null(ctx);
    size_t chunk = 2u << 20;
    assert_int_equal(v6->getChunkSize(ctx, 4, 4u << 20, A_RING, P_SIMPLE, 1, &chunk), ncclSuccess);
    assert_int_equal(chunk, 32768);
    chunk = 2u << 20; /* NCCL chose something else there: its own chunk */
    v6->getChunkSize(ctx, 4, 4u << 20, A_TREE, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 2u << 20);
    chunk = 1024; /* a size whose rule has no chunk */
    v6->getChunkSize(ctx, 4, 2048, A_TREE, P_LL, 1, &chunk);
    assert_int_equal(chunk, 1024);
    assert_int_equal(v6->finalize(ctx), ncclSuccess);
    assert_true(tu_plugin_close(h));
    unsetenv("CCLTUNE_TABLE");
    unsetenv("NCCL_HOSTID");
}

/* What the commands say of the chunk rule: explain names it, export says its format cannot
 * carry it, diff against the same table without it reports the change. */
static void test_commands_show_them(void **state)
{
    (void)state;
    const char *explain[] = {"explain", table, "--coll", "allreduce", "--ranks", "2", NULL};
    ct_result r = ct_run(explain);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "32 KiB"));
    assert_non_null(strstr(r.out, "chunk 32 KiB for ring/simple: applied where NCCL asks"));
    ct_result_free(&r);
    const char *export[] = {"export", table, "--format", "nccl-example-csv", NULL};
    r = ct_run(export);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "1 rule(s) choose a chunk size"));
    ct_result_free(&r);
    /* the same table without the chunk */
    char *text = NULL;
    FILE *f = fopen(table, "r");
    assert_non_null(f);
    size_t cap = 1 << 20, len = 0;
    text = malloc(cap);
    assert_non_null(text);
    len = fread(text, 1, cap - 1, f);
    fclose(f);
    text[len] = '\0';
    char *at = strstr(text, ", chunk_bytes: 32768");
    assert_non_null(at);
    memmove(at, at + strlen(", chunk_bytes: 32768"),
            strlen(at + strlen(", chunk_bytes: 32768")) + 1);
    char plain[4200];
    snprintf(plain, sizeof plain, "%s/plain.yaml", dir);
    assert_true(ct_write_table(plain, text));
    free(text);
    const char *diff[] = {"diff", plain, table, NULL};
    r = ct_run(diff);
    assert_non_null(strstr(r.out, "(chunk 32 KiB)"));
    ct_result_free(&r);
}

int main(void)
{
    tu_log_echo = getenv("CCT_TEST_VERBOSE") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fitted_rules),
        cmocka_unit_test(test_plugin_applies_them),
        cmocka_unit_test(test_commands_show_them),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
