/*
 * test_recording_badinput.c - damaged, foreign and future recordings get one clear
 * "FILE:OFFSET: message" error from the reader (src/import/cct_recording.c), never a
 * crash or a half-read recording.
 *
 * A valid recording is first made by the real profiler (the built plugin, driven as NCCL
 * drives it); then every prefix of it (truncation), every single-byte change, another
 * format version, foreign files (a table, an nccl-tests log, binary) and counts that do
 * not add up are read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plugin_test_util.h"
#include "profiler_test_util.h"

#include "cct_file.h"
#include "cct_recording.h"

static char *good;
static size_t good_len;

/* A recording of two communicators made by the plugin. */
static int make_good(void **state)
{
    (void)state;
    char *dir = pf_tmpdir();
    pf_plugin p;
    setenv("CCLTUNE_RECORD", dir, 1);
    if (!pf_open(&p))
        return -1;
    void *c1 = NULL, *c2 = NULL;
    int mask;
    p.v5->init(&c1, 0x1234, &mask, "a", 2, 2, 0, tu_logger);
    p.v5->init(&c2, 0x5678, &mask, "b", 4, 4, 3, tu_logger);
    for (int i = 0; i < 5; i++) {
        pf_coll(p.v5, c1, "AllReduce", 1024u << i, "ncclFloat16", 2, "RING", "LL", 0, 5000u << i);
        pf_coll(p.v5, c2, "AllGather", 64, "ncclInt32", 1, "PAT", "SIMPLE", 0, 70000);
    }
    p.v5->finalize(c1);
    p.v5->finalize(c2);
    pf_close(&p);
    unsetenv("CCLTUNE_RECORD");
    char *path;
    if (pf_find_rec(dir, &path) != 1)
        return -1;
    cct_error err;
    cct_status st = cct_read_file(path, &good, &good_len, &err);
    free(path);
    pf_rmdir(dir);
    free(dir);
    return st == CCT_OK ? 0 : -1;
}

static int free_good(void **state)
{
    (void)state;
    free(good);
    return 0;
}

/* Read buf; on failure check the "NAME:OFFSET: " form with OFFSET within the buffer. */
static cct_status read_buf(const char *buf, size_t len, cct_error *err)
{
    cct_recording rec;
    cct_status st = cct_recording_load_buffer(buf, len, "rec.rec", &rec, err);
    if (st == CCT_OK) {
        cct_recording_destroy(&rec);
        return st;
    }
    size_t off;
    int used = 0;
    if (sscanf(err->msg, "rec.rec:%zu: %n", &off, &used) != 1 || used == 0)
        fail_msg("not FILE:OFFSET: %s", err->msg);
    if (off > len)
        fail_msg("offset %zu beyond the %zu bytes: %s", off, len, err->msg);
    return st;
}

static void test_good_reads(void **state)
{
    (void)state;
    cct_error err;
    cct_recording rec;
    assert_int_equal(cct_recording_load_buffer(good, good_len, "rec.rec", &rec, &err), CCT_OK);
    assert_int_equal(rec.n_comms, 2);
    cct_recording_destroy(&rec);
}

static void test_every_truncation_fails(void **state)
{
    (void)state;
    cct_error err;
    for (size_t n = 0; n < good_len; n++) {
        char *copy = malloc(n + 1);
        memcpy(copy, good, n);
        if (read_buf(copy, n, &err) == CCT_OK)
            fail_msg("a recording cut at %zu of %zu bytes was accepted", n, good_len);
        free(copy);
    }
}

static void test_byte_changes(void **state)
{
    (void)state;
    cct_error err;
    static const char subst[] = {'x', '9', ' ', '\n', '#', '\0', '='};
    for (size_t i = 0; i < good_len; i++)
        for (size_t s = 0; s < sizeof subst; s++) {
            char *copy = malloc(good_len);
            memcpy(copy, good, good_len);
            copy[i] = subst[s];
            (void)read_buf(copy, good_len, &err); /* error form checked inside */
            free(copy);
        }
}

static void test_wrong_version(void **state)
{
    (void)state;
    char *copy = strdup(good);
    char *v = strstr(copy, "ccltune-recording 1");
    assert_ptr_equal(v, copy);
    v[18] = '2';
    cct_error err;
    assert_int_not_equal(read_buf(copy, good_len, &err), CCT_OK);
    assert_non_null(strstr(err.msg, "rec.rec:18: recording format version 2"));
    free(copy);
}

static void test_foreign_files(void **state)
{
    (void)state;
    static const char *const foreign[] = {
        "",
        "ccltune_table: 1\nprovenance:\n  tool: x\n",
        "#  out-of-place                       in-place\n#       size         count\n",
        "ccltune-recording\n",
        "ccltune-recordings 1\n",
    };
    cct_error err;
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
        assert_int_not_equal(read_buf(foreign[i], strlen(foreign[i]), &err), CCT_OK);
        assert_non_null(strstr(err.msg, "rec.rec:0: not a ccltune recording"));
    }
    static const char bin[] = "\x7f"
                              "ELF\x02\x01\x01\0\0\0";
    assert_int_not_equal(read_buf(bin, sizeof bin - 1, &err), CCT_OK);
    /* from a file: the path names it */
    char *path = tu_write_temp("hello\n");
    assert_non_null(path);
    if (!path)
        return;
    cct_recording rec;
    assert_int_not_equal(cct_recording_load_file(path, &rec, &err), CCT_OK);
    char want[4200];
    snprintf(want, sizeof want, "%s:0: not a ccltune recording", path);
    assert_non_null(strstr(err.msg, want));
    unlink(path);
    free(path);
}

/* Replace the first occurrence of from by to and expect an error containing msg. */
static void expect_edit(const char *from, const char *to, const char *msg)
{
    const char *at = strstr(good, from);
    if (!at)
        fail_msg("'%s' is not in the recording:\n%s", from, good);
    size_t pre = (size_t)(at - good), len = good_len - strlen(from) + strlen(to);
    char *copy = malloc(len + 1);
    memcpy(copy, good, pre);
    memcpy(copy + pre, to, strlen(to));
    memcpy(copy + pre + strlen(to), at + strlen(from), good_len - pre - strlen(from));
    copy[len] = '\0';
    cct_error err;
    assert_int_not_equal(read_buf(copy, len, &err), CCT_OK);
    if (!strstr(err.msg, msg))
        fail_msg("want '%s', got '%s'", msg, err.msg);
    free(copy);
}

static void test_counts_must_agree(void **state)
{
    (void)state;
    expect_edit(" timed=1 ", " timed=7 ", "timed <= calls");
    expect_edit(" total_ns=", " totalns=", "expected ' total_ns=...'");
    expect_edit("end comms=2", "end comms=3", "totals do not match");
    expect_edit(" hist=", " hist=0:1,", "histogram");
    expect_edit(" clock=gpu", " clock=host", "clock 'host' is not 'gpu'");
    expect_edit(" hist_buckets=20", " hist_buckets=16", "hist_buckets must be 20");
    expect_edit(" coll=allreduce", " coll=alltoallv", "unknown collective 'alltoallv'");
    expect_edit(" algo=ring", " algo=zigzag", "unknown algorithm 'zigzag'");
    expect_edit(" bytes=", " bytes=-", "'bytes' is not a number");
    expect_edit(" bytes=", " bytes=99999999999999999999999", "'bytes' is not a number");
    expect_edit("end comms=2 rows=6\n", "end comms=2 rows=6\nrow\n", "after the end line");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_reads),    cmocka_unit_test(test_every_truncation_fails),
        cmocka_unit_test(test_byte_changes),  cmocka_unit_test(test_wrong_version),
        cmocka_unit_test(test_foreign_files), cmocka_unit_test(test_counts_must_agree),
    };
    return cmocka_run_group_tests(tests, make_good, free_good);
}
