/*
 * test_gpu_search.c - `ccltune search` end to end on a real GPU with real NCCL.
 *
 * Suite `gpu`: exits 77 (skipped) without a GPU, or with a single GPU and no MPS daemon
 * (two rank processes on one GPU need it).  Runs a small search with 2 ranks, then reads
 * the store with SQLite and checks what the search promises: every planned point stored
 * once; forced Ring/Tree x LL/Simple points verified correct and timed; NCCL's default
 * recorded with the algorithm it chose; the link matrix measured and stored with the run
 * (`probe --links`' JSON, host bandwidth > 0); resume of the finished run measures nothing
 * and keeps that one matrix.
 * Then chunk sizes (--chunk) into a store of their own: on the NCCL the job loads, either
 * refused before measuring (NCCL before 2.30: exit 2 naming the version, no run stored) or
 * measured, every chunk point verified correct with the chunk NCCL ran recorded (64 KiB as
 * asked; 4 MiB capped to Ring/Simple's 2 MiB at default buffers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cuda_runtime.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], db[320];

static long long query(const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -2;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(h));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

static int run_chunk_search(const char *store, const char *log)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' search --ranks-per-gpu 2 --ranks 2 --colls allreduce --algos ring "
             "--protos simple --channels nccl --chunk nccl,64K,4M --min-bytes 256K "
             "--max-bytes 4M --no-off-grid --cycles 2 --exhaustive --timeout 60 --store '%s' "
             "2> '%s'",
             getenv("CCT_CCLTUNE"), store, log);
    fprintf(stderr, "+ %s\n", cmd);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

static int run_search(const char *extra)
{
    char cmd[2048];
    snprintf(
        cmd, sizeof cmd,
        "'%s' search --ranks-per-gpu 2 --ranks 2 --colls allreduce,allgather --algos ring,tree "
        "--protos ll,simple --channels nccl,2 --min-bytes 4K --max-bytes 1M --no-off-grid "
        "--cycles 2 --exhaustive --timeout 60 --store '%s' %s",
        getenv("CCT_CCLTUNE"), db, extra);
    fprintf(stderr, "+ %s\n", cmd);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

static void test_small_search(void **state)
{
    (void)state;
    assert_int_equal(run_search(""), 0);
    /* sizes 4K..1M by 2 = 9; allreduce and allgather; baseline 1 + forced 2x2x2 = 9 configs */
    assert_int_equal(query("SELECT COUNT(*) FROM points"), 2 * 9 * 9);
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE status = 'corrupt'"), 0);
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE status = 'hang'"), 0);
    /* Ring and Tree with LL and Simple are offered over sockets: all timed */
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE algo IN ('ring','tree') AND "
                           "status = 'ok' AND coll = 'allreduce'"),
                     8 * 9);
    /* NCCL's own choice was observed for every baseline point */
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE algo = 'default' AND nccl_algo IS "
                           "NULL"),
                     0);
    assert_true(query("SELECT MIN(median_us) FROM points WHERE status = 'ok'") > 0);
    long long runs = query("SELECT COUNT(*) FROM runs WHERE state = 'done'");
    assert_int_equal(runs, 1);
    long long run = query("SELECT MAX(id) FROM runs");
    assert_int_equal(query("SELECT COUNT(*) FROM link_matrices WHERE json_extract(json, "
                           "'$.link_matrix.host[0].h2d_gbps') > 0"),
                     1);
    char extra[64];
    snprintf(extra, sizeof extra, "--resume %lld", run);
    assert_int_equal(run_search(extra), 0);
    assert_int_equal(query("SELECT COUNT(*) FROM points"), 2 * 9 * 9);
    assert_int_equal(query("SELECT COUNT(*) FROM link_matrices"), 1);
}

static void test_chunk_search(void **state)
{
    (void)state;
    char store[300], log[300];
    snprintf(store, sizeof store, "%s/chunk.db", dir);
    snprintf(log, sizeof log, "%s/chunk.log", dir);
    int rc = run_chunk_search(store, log);
    FILE *f = fopen(log, "r");
    char text[65536] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    if (rc == 2) { /* an NCCL before 2.30: refused, nothing measured */
        assert_non_null(strstr(text, "does not let a tuner set the chunk size"));
        struct stat sb;
        assert_int_not_equal(stat(store, &sb), 0);
        print_message("chunk sizes refused on this NCCL (before 2.30)\n");
        return;
    }
    if (rc != 0)
        fprintf(stderr, "%s\n", text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "chunk: allreduce ring/simple"));
    snprintf(db, sizeof db, "%s", store);
    /* sizes 256K..4M by 2 = 5; baseline + ring/simple at three chunks */
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE chunk > 0"), 2 * 5);
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE status <> 'ok'"), 0);
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE chunk = 65536 AND chunk_used = 65536 "
                           "AND chunk_source = 'computed'"),
                     5);
    assert_int_equal(query("SELECT COUNT(*) FROM points WHERE chunk = 4194304 AND "
                           "chunk_used = 2097152"),
                     5);
    assert_int_equal(
        query("SELECT COUNT(*) FROM points WHERE chunk = 0 AND chunk_used IS NOT NULL"), 0);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char control[512];
    snprintf(control, sizeof control, "%s/control", mps && *mps ? mps : "/tmp/nvidia-mps");
    struct stat stt;
    if (n < 2 && stat(control, &stt) != 0) {
        printf("one GPU and no MPS daemon (%s): skipped\n", control);
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/cct-gpu-search-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(db, sizeof db, "%s/m.db", dir);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_small_search),
                                       cmocka_unit_test(test_chunk_search)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
