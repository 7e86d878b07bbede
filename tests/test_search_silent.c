/*
 * test_search_silent.c - the search library prints nothing of its own: its messages go to
 * the sink the command installs (core/cct_say.h), and without one they are dropped.
 *
 * The replay role (cct_search_replay) runs a small search on a recorded store twice in this
 * process: once with no sink and the process's stdout and stderr redirected to a file, which
 * must stay empty; once with a capturing sink, which must receive the replay's lines in order
 * and the run id on the result stream, so the first case is silent because the messages
 * moved and not because the role did nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cct_exit.h"
#include "cct_say.h"
#include "cct_search.h"
#include "cli_test_util.h"
#include "recorded_test_util.h"

static char *dir, *recording;

typedef struct captured {
    char err[65536], out[256];
    size_t n_err, n_out;
} captured;

static void capture(void *ctx, cct_say_stream stream, const char *text)
{
    captured *c = ctx;
    char *buf = stream == CCT_SAY_OUT ? c->out : c->err;
    size_t *n = stream == CCT_SAY_OUT ? &c->n_out : &c->n_err;
    size_t cap = stream == CCT_SAY_OUT ? sizeof c->out : sizeof c->err;
    size_t len = strlen(text);
    if (*n + len < cap) {
        memcpy(buf + *n, text, len + 1);
        *n += len;
    }
}

/* One replayed search into a fresh store; returns the role's exit status. */
static int replay_into(const char *store_name)
{
    char store[4200];
    snprintf(store, sizeof store, "%s/%s", dir, store_name);
    char *argv[] = {"search", "--replay",   recording,   "--store",     store, "--ranks",
                    "2",      "--colls",    "allreduce", "--max-bytes", "64K", "--cycles",
                    "2",      "--channels", "nccl",      "--align",     "0",   NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
    cct_search_opts opts;
    cct_error err;
    cct_error_clear(&err);
    bool help = false;
    cct_search_opts_init(&opts, argc, argv);
    assert_int_equal(cct_search_parse(argc, argv, &opts, &help, &err), CCT_OK);
    return cct_search_replay(&opts, &err);
}

static void test_no_sink_no_output(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/printed.txt", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    fflush(NULL);
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    cct_say_install(NULL, NULL, false);
    int code = replay_into("silent.db");
    fflush(NULL);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    close(fd);
    assert_int_equal(code, CCT_EXIT_OK);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    if (sb.st_size != 0) {
        int in = open(path, O_RDONLY);
        char *text = ct_slurp_fd(in);
        print_error("the search printed without a sink:\n%s\n", text ? text : "");
        free(text);
    }
    assert_int_equal(sb.st_size, 0);
}

static void test_sink_gets_the_messages(void **state)
{
    (void)state;
    captured *c = calloc(1, sizeof *c);
    assert_non_null(c);
    cct_say_install(capture, c, false);
    int code = replay_into("heard.db");
    cct_say_install(NULL, NULL, false);
    assert_int_equal(code, CCT_EXIT_OK);
    const char *replaying = strstr(c->err, "ccltune search: replaying ");
    const char *session = strstr(c->err, "session 1/");
    const char *simulated = strstr(c->err, "replay: simulated measuring time ");
    assert_non_null(replaying);
    assert_non_null(session);
    assert_non_null(simulated);
    assert_true(replaying < session && session < simulated);
    /* the run id alone on the result stream: "1\n" for the first run of a fresh store */
    assert_string_equal(c->out, "1\n");
    free(c);
}

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("search-silent");
    recording = recorded_copy_into(dir, "h200/search-2ranks.db.gz", "recording.db");
    return recording ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (dir)
        ct_rm_rf(dir);
    free(dir);
    free(recording);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_sink_no_output),
        cmocka_unit_test(test_sink_gets_the_messages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
