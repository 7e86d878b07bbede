/*
 * test_chunk.c - chunk size as a search dimension (tuner v6, NCCL >= 2.30), CPU half.
 *
 * Pins down NCCL's cap-and-round rule as ccltune models it (src/nccl/cct_chunk.c: grains,
 * buffer ceilings, what a tuner's answer becomes), the --chunk flag and the plan it builds
 * (chunks crossed with algorithm/protocol/channels, NCCL's own chunk leaving plans and their
 * hashes as they were), the refusal of --chunk on an NCCL before 2.30 through the command
 * line (exit 2, naming the version, nothing measured), and a replayed search on a recording
 * relabelled as NCCL 2.30.7 storing the chunk asked and the chunk computed as run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cct_chunk.h"
#include "cct_exit.h"
#include "cct_say.h"
#include "cct_search.h"
#include "cct_space.h"
#include "cct_store.h"
#include "cli_test_util.h"
#include "recorded_test_util.h"

static char *dir;

static void test_nccl_rule(void **state)
{
    (void)state;
    assert_int_equal(cct_chunk_grain(CCT_PROTO_LL), 16);
    assert_int_equal(cct_chunk_grain(CCT_PROTO_LL128), 1920);
    assert_int_equal(cct_chunk_grain(CCT_PROTO_SIMPLE), 512);
    assert_int_equal(cct_chunk_grain(7), 0);
    /* default 4 MiB Simple buffer, 8 steps: Ring pipelines 4 steps per chunk (2 for
     * broadcast and reduce), every other algorithm 1 */
    assert_int_equal(cct_chunk_ceiling(CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0),
                     2u << 20);
    assert_int_equal(cct_chunk_ceiling(CCT_COLL_BROADCAST, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0),
                     1u << 20);
    assert_int_equal(cct_chunk_ceiling(CCT_COLL_ALLREDUCE, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, 0),
                     512u << 10);
    assert_int_equal(
        cct_chunk_ceiling(CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 16u << 20),
        8u << 20);
    /* LL: half of a step is data; LL128: 15 of 16 words */
    assert_int_equal(cct_chunk_ceiling(CCT_COLL_ALLREDUCE, CCT_ALGO_RING, CCT_PROTO_LL, 0),
                     8u * 512u * 8u * 16u / 8u / 2u);
    assert_int_equal(cct_chunk_ceiling(CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_LL128, 0),
                     120u * 640u * 8u * 8u / 8u / 16u * 15u);
    assert_int_equal(cct_chunk_ceiling(CCT_COLL_ALLREDUCE, CCT_ALGO_NVLS, CCT_PROTO_SIMPLE, 0), 0);
    /* capped, rounded down to the grain, never below one grain */
    assert_int_equal(cct_chunk_used(300000, 2u << 20, CCT_PROTO_SIMPLE), 299520);
    assert_int_equal(cct_chunk_used(4u << 20, 2u << 20, CCT_PROTO_SIMPLE), 2u << 20);
    assert_int_equal(cct_chunk_used(100, 0, CCT_PROTO_LL128), 1920);
    assert_int_equal(cct_chunk_answer(100, CCT_PROTO_LL128), 1920);
    assert_int_equal(cct_chunk_answer(65536, CCT_PROTO_SIMPLE), 65536);
    assert_false(cct_chunk_supported(22809));
    assert_false(cct_chunk_supported(0));
    assert_true(cct_chunk_supported(23000));
    assert_true(cct_chunk_supported(23007));
}

static cct_space small_space(void)
{
    cct_space s;
    cct_space_defaults(&s);
    s.ranks = 2;
    s.nodes = 2;
    cct_error err;
    assert_int_equal(cct_space_parse(&s, "--colls", "allreduce", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--algos", "ring", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--protos", "simple", &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--channels", "nccl,2", &err), CCT_OK);
    return s;
}

static void test_flag_and_plan(void **state)
{
    (void)state;
    cct_space s = small_space();
    assert_false(cct_space_forces_chunk(&s));
    cct_plan base, same, chunked;
    cct_error err;
    assert_int_equal(cct_plan_build(&s, &base, &err), CCT_OK);
    assert_int_equal(cct_space_parse(&s, "--chunk", "nccl", &err), CCT_OK);
    assert_false(cct_space_forces_chunk(&s));
    assert_int_equal(cct_plan_build(&s, &same, &err), CCT_OK);
    assert_string_equal(base.hash, same.hash); /* NCCL's own chunk: the plan of before */
    assert_int_equal(cct_space_parse(&s, "--chunk", "128K,nccl,128k", &err), CCT_OK);
    assert_int_equal(s.n_chunks, 2);
    assert_true(cct_space_forces_chunk(&s));
    assert_int_equal(cct_plan_build(&s, &chunked, &err), CCT_OK);
    assert_string_not_equal(base.hash, chunked.hash);
    /* every forced configuration once per chunk; the baseline keeps NCCL's own */
    assert_int_equal(chunked.n_configs, base.n_configs + 2);
    size_t with_chunk = 0;
    for (size_t i = 0; i < chunked.n_configs; i++) {
        const cct_config *c = &chunked.configs[i];
        if (c->algo == CCT_DEFAULT)
            assert_int_equal(c->chunk, 0);
        if (c->chunk) {
            assert_int_equal(c->chunk, 131072);
            char line[256];
            assert_non_null(strstr(cct_config_describe(c, line, sizeof line), "chunk="));
            with_chunk++;
        }
    }
    assert_int_equal(with_chunk, 2); /* channels nccl and 2 */
    cct_plan_destroy(&base);
    cct_plan_destroy(&same);
    cct_plan_destroy(&chunked);
    static const char *const bad[] = {"12", "2G", "-1", "big", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cct_error_clear(&err);
        assert_int_not_equal(cct_space_parse(&s, "--chunk", bad[i], &err), CCT_OK);
        assert_non_null(strstr(err.msg, "--chunk"));
    }
}

/* On NCCL 2.28.9 (the recording's) --chunk with a size is refused before anything is
 * measured: exit 2, the version named, no store written; --chunk nccl runs. */
static void test_refused_before_v6(void **state)
{
    (void)state;
    char *rec = recorded_copy_into(dir, "h200/search-2ranks.db.gz", "old.db");
    assert_non_null(rec);
    char store[4200];
    snprintf(store, sizeof store, "%s/refused.db", dir);
    const char *args[] = {"search",    "--replay",    rec,  "--store", store,       "--colls",
                          "allreduce", "--max-bytes", "8K", "--chunk", "nccl,256K", NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, CCT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "NCCL 2.28.9"));
    assert_non_null(strstr(r.err, "2.30"));
    assert_non_null(strstr(r.err, "--chunk"));
    struct stat sb;
    assert_int_not_equal(stat(store, &sb), 0); /* nothing measured, nothing stored */
    ct_result_free(&r);
    args[10] = "nccl";
    r = ct_run(args);
    if (r.status != 0)
        print_error("%s\n", r.err);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    free(rec);
}

/* A recording relabelled as NCCL 2.30.7 (its points stand in for 2.30's): the search forces
 * the chunk, and the store holds the chunk asked and the chunk NCCL would run (computed). */
static void test_replayed_on_v6(void **state)
{
    (void)state;
    char *rec = recorded_copy_into(dir, "h200/search-2ranks.db.gz", "v6.db");
    assert_non_null(rec);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(rec, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE fingerprints SET nccl = '2.30.7'", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    char store[4200];
    snprintf(store, sizeof store, "%s/v6-store.db", dir);
    char *argv[] = {"search",      "--replay",   rec,           "--store", store,
                    "--colls",     "allreduce",  "--algos",     "ring",    "--protos",
                    "simple",      "--channels", "nccl",        "--chunk", "nccl,300000,4M",
                    "--min-bytes", "64K",        "--max-bytes", "4M",      "--cycles",
                    "2",           NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
    cct_search_opts opts;
    cct_error err;
    cct_error_clear(&err);
    bool help = false;
    cct_search_opts_init(&opts, argc, argv);
    assert_int_equal(cct_search_parse(argc, argv, &opts, &help, &err), CCT_OK);
    cct_say_install(NULL, NULL, false);
    int code = cct_search_replay(&opts, &err);
    if (code != 0)
        print_error("%s\n", err.msg);
    assert_int_equal(code, CCT_EXIT_OK);
    cct_store *s;
    assert_int_equal(cct_store_open(store, true, &s, &err), CCT_OK);
    cct_point *pts = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_load_points(s, NULL, 0, &pts, &n, &err), CCT_OK);
    cct_store_close(s);
    size_t asked_small = 0, asked_big = 0, own = 0;
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if (p->cfg.algo < 0)
            continue;
        assert_int_equal(p->status, CCT_POINT_OK);
        assert_false(p->chunk_observed);
        if (p->cfg.chunk == 0) {
            assert_int_equal(p->chunk_used, 0);
            own++;
        } else if (p->cfg.chunk == 300000) {
            assert_int_equal(p->chunk_used, 299520); /* Simple's 512-byte grain */
            asked_small++;
        } else {
            assert_int_equal(p->cfg.chunk, 4u << 20);
            assert_int_equal(p->chunk_used, 2u << 20); /* the default buffers' ceiling */
            asked_big++;
        }
    }
    assert_true(own > 0);
    assert_int_equal(asked_small, own);
    assert_int_equal(asked_big, own);
    free(pts);
    free(rec);
}

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("chunk");
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (dir)
        ct_rm_rf(dir);
    free(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_rule),
        cmocka_unit_test(test_flag_and_plan),
        cmocka_unit_test(test_refused_before_v6),
        cmocka_unit_test(test_replayed_on_v6),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
