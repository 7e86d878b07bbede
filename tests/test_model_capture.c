/*
 * test_model_capture.c - the CPU half of capturing NCCL's model printout during a search
 * (src/search/cct_model_capture.c): the probe's environment and collecting its per-rank
 * files into one log.
 *
 * The probe itself needs a GPU (tools/gpu/session.sh stage tunecal); here its files are made
 * from a log NCCL really printed (tests/data/h200/run-2026-11-29c/nccl-model, 4 rank
 * processes sharing an H200), split by process the way NCCL_DEBUG_FILE=dir/rank-R.log
 * splits it.  Checked: the collected text gives the topology of the original log, the other
 * ranks' graphs count (a slower ring on rank 1 slows the result), a missing rank 0, a
 * printout without a TUNING table and one of another rank count are refused with a
 * sentence, and the folder is gone afterwards in every case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cct_import.h"
#include "cct_model_capture.h"
#include "cct_nccl_log.h"
#include "data_test_util.h"

#define LOG4 "data/h200/run-2026-11-29c/nccl-model/model-socket-4ranks.log"

static long line_pid(const char *line)
{
    const char *colon = strchr(line, ':');
    return colon ? strtol(colon + 1, NULL, 10) : -1;
}

/* Split the log by process into dir/rank-R.log: the process that printed the TUNING table
 * is rank 0, the others 1, 2, ... in order of appearance.  narrow_rank1: rank 1's ring graph
 * gets 0.5 GB/s. */
static void split_log(const char *text, const char *dir, bool narrow_rank1, bool drop_table)
{
    long pids[16];
    int n = 0;
    const char *table = strstr(text, "Algorithm   |");
    assert_non_null(table);
    while (table > text && table[-1] != '\n')
        table--;
    pids[n++] = line_pid(table);
    FILE *files[16] = {NULL};
    char path[4200];
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        p += len;
        if (!strstr(line, "NCCL INFO"))
            continue;
        long pid = line_pid(line);
        int r = 0;
        while (r < n && pids[r] != pid)
            r++;
        if (r == n) {
            assert_true(n < 16);
            pids[n++] = pid;
        }
        if (!files[r]) {
            snprintf(path, sizeof path, "%s/rank-%d.log", dir, r);
            files[r] = fopen(path, "w");
            assert_non_null(files[r]);
        }
        if (drop_table && r == 0 && strchr(line, '|'))
            continue;
        char *bw = strstr(line, ", bw ");
        if (narrow_rank1 && r == 1 && strstr(line, "Pattern 4,") && bw) {
            char fixed[4096];
            snprintf(fixed, sizeof fixed, "%.*s, bw 0.500000/0.500000%s", (int)(bw - line), line,
                     strstr(bw, ", type"));
            fputs(fixed, files[r]);
            continue;
        }
        fputs(line, files[r]);
    }
    for (int r = 0; r < 16; r++)
        if (files[r])
            assert_int_equal(fclose(files[r]), 0);
}

static char *fresh_dir(void)
{
    char *dir = malloc(4096);
    cct_error err;
    assert_non_null(dir);
    if (cct_model_capture_mkdir(dir, 4096, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    return dir;
}

static void assert_gone(const char *dir)
{
    struct stat sb;
    assert_int_not_equal(stat(dir, &sb), 0);
}

static void test_environment(void **s)
{
    (void)s;
    setenv("NCCL_DEBUG", "WARN", 1);
    setenv("NCCL_DEBUG_SUBSYS", "NET", 1);
    setenv("NCCL_DEBUG_TIMESTAMP_LEVELS", "ALL", 1);
    setenv("NCCL_DEBUG_TIMESTAMP_FORMAT", "[%F] ", 1);
    cct_model_capture_setenv("/tmp/odd%dir", 3);
    assert_string_equal(getenv("NCCL_DEBUG"), "INFO");
    assert_string_equal(getenv("NCCL_DEBUG_SUBSYS"), "INIT,GRAPH,TUNING");
    assert_string_equal(getenv("NCCL_DEBUG_FILE"), "/tmp/odd%%dir/rank-3.log");
    assert_null(getenv("NCCL_DEBUG_TIMESTAMP_LEVELS"));
    assert_null(getenv("NCCL_DEBUG_TIMESTAMP_FORMAT"));
}

static void test_collect(void **s)
{
    (void)s;
    char *text = test_data_read(LOG4);
    cct_error err;
    cct_nccl_log *whole = malloc(sizeof *whole), *got = malloc(sizeof *got);
    assert_non_null(whole);
    assert_non_null(got);
    assert_int_equal(cct_nccl_log_parse(text, "whole", whole, &err), CCT_OK);
    assert_int_equal(whole->topo.n_ranks, 4);

    char *dir = fresh_dir();
    split_log(text, dir, false, false);
    char *out = NULL;
    if (cct_model_capture_collect(dir, 4, &out, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_gone(dir);
    assert_int_equal(cct_nccl_log_parse(out, "collected", got, &err), CCT_OK);
    assert_memory_equal(&got->topo, &whole->topo, sizeof got->topo);
    assert_memory_equal(got->latency_us, whole->latency_us, sizeof got->latency_us);
    /* rank 0's file comes last: its table closes what the reader takes */
    const char *table = strstr(out, "Algorithm   |");
    assert_non_null(table);
    assert_null(strstr(table, "[1] NCCL INFO"));
    free(out);
    free(dir);

    /* the other ranks' graphs are combined: a slower ring on rank 1 slows the result */
    dir = fresh_dir();
    split_log(text, dir, true, false);
    assert_int_equal(cct_model_capture_collect(dir, 4, &out, &err), CCT_OK);
    assert_int_equal(cct_nccl_log_parse(out, "narrow", got, &err), CCT_OK);
    assert_true(whole->topo.graphs[CCT_ALGO_RING].bw_intra > 1.0);
    assert_true(got->topo.graphs[CCT_ALGO_RING].bw_intra == 0.5);
    assert_true(got->topo.graphs[CCT_ALGO_RING].bw_inter == 0.5);
    free(out);
    free(dir);

    /* another rank count than the run's */
    dir = fresh_dir();
    split_log(text, dir, false, false);
    assert_int_equal(cct_model_capture_collect(dir, 2, &out, &err), CCT_EPARSE);
    assert_null(out);
    assert_non_null(strstr(err.msg, "describes 4 ranks, the run has 2"));
    assert_gone(dir);
    free(dir);

    /* no TUNING table (NCCL_DEBUG_SUBSYS lost TUNING) */
    dir = fresh_dir();
    split_log(text, dir, false, true);
    assert_int_equal(cct_model_capture_collect(dir, 4, &out, &err), CCT_EPARSE);
    assert_non_null(strstr(err.msg, "no TUNING table"));
    assert_gone(dir);
    free(dir);

    /* rank 0 wrote nothing */
    dir = fresh_dir();
    split_log(text, dir, false, false);
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-0.log", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(cct_model_capture_collect(dir, 4, &out, &err), CCT_ENOTFOUND);
    assert_non_null(strstr(err.msg, "NCCL wrote no log for rank 0"));
    assert_gone(dir);
    free(dir);

    /* after a failed probe */
    dir = fresh_dir();
    split_log(text, dir, false, false);
    cct_model_capture_remove(dir);
    assert_gone(dir);
    free(dir);

    free(got);
    free(whole);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_collect),
    };
    return cmocka_run_group_tests_name("model_capture", tests, NULL, NULL);
}
