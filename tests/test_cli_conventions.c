/*
 * test_cli_conventions.c - the conventions every `ccltune` command keeps, checked on the built
 * binary (CCT_CCLTUNE) for every command that `ccltune --help` lists: `--help` exits 0 and
 * its text ends with an "Exit status:" paragraph; an unknown flag, a flag without its value
 * and a stray word are the one usage error (exit 2, "ccltune CMD: error: ...\nTry 'ccltune
 * CMD --help'.\n").
 *
 * With the argument `tune-no-gpu` it checks `ccltune tune` where no GPU is present (it then
 * fits recorded measurements): the same flags as with a GPU are parsed and refused (bad
 * flags, bad search values, stray words, 10,000 arguments), and valid measurement flags
 * are named in one line as unused.  That part exits 77 (skipped) where a GPU is present.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

typedef struct result {
    int status;
    char *out, *err;
} result;

static char *slurp(int fd)
{
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    char *buf = calloc(1, size > 0 ? (size_t)size + 1 : 1);
    size_t n = 0;
    while (buf && size > 0 && n < (size_t)size) {
        ssize_t got = read(fd, buf + n, (size_t)size - n);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    return buf;
}

/* Run ccltune with argv[1..argc-1] = args (any number), in a private working folder. */
static result run_v(const char *const *args, size_t n_args)
{
    result r = {-1, NULL, NULL};
    const char *exe = getenv("CCT_CCLTUNE");
    assert_non_null(exe);
    char out_path[] = "/tmp/cct-conv-out-XXXXXX", err_path[] = "/tmp/cct-conv-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    assert_true(out_fd >= 0 && err_fd >= 0);
    unlink(out_path);
    unlink(err_path);
    const char **argv = calloc(n_args + 2, sizeof *argv);
    assert_non_null(argv);
    argv[0] = exe;
    memcpy(argv + 1, args, n_args * sizeof *args);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    if (posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, environ) == 0) {
        int wst;
        while (waitpid(pid, &wst, 0) < 0)
            ;
        r.status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
    }
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    r.out = slurp(out_fd);
    r.err = slurp(err_fd);
    return r;
}

#define RUN(...)                                                                                   \
    run_v((const char *const[]){__VA_ARGS__},                                                      \
          sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* The commands `ccltune --help` lists (the lines under "Commands:"). */
static size_t listed_commands(char names[][32], size_t max)
{
    result r = RUN("--help");
    assert_int_equal(r.status, 0);
    const char *p = strstr(r.out, "\nCommands:\n");
    assert_non_null(p);
    p += strlen("\nCommands:\n");
    size_t n = 0;
    while (n < max && strncmp(p, "  ", 2) == 0 && p[2] != ' ') {
        size_t len = strcspn(p + 2, " \n");
        assert_true(len < 32);
        memcpy(names[n], p + 2, len);
        names[n++][len] = '\0';
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    result_free(&r);
    assert_true(n >= 13);
    return n;
}

/* The usage error, exactly: one error line and the --help hint. */
static void assert_usage_error(const result *r, const char *cmd, const char *message)
{
    char want[1024];
    snprintf(want, sizeof want, "ccltune %s: error: %s\nTry 'ccltune %s --help'.\n", cmd, message,
             cmd);
    if (r->status != 2 || strcmp(r->err, want) != 0)
        fail_msg("ccltune %s: want exit 2 with\n%s\ngot exit %d with\n%s", cmd, want, r->status,
                 r->err);
}

static void test_help_ends_with_exit_status(void **state)
{
    (void)state;
    char names[32][32];
    size_t n = listed_commands(names, 32);
    for (size_t i = 0; i < n; i++) {
        result r = RUN(names[i], "--help");
        if (r.status != 0)
            fail_msg("ccltune %s --help: exit %d", names[i], r.status);
        size_t len = strlen(r.out);
        while (len > 0 && r.out[len - 1] == '\n')
            len--;
        r.out[len] = '\0';
        const char *last = strstr(r.out, "\n\n");
        for (const char *q = last; q; q = strstr(q + 2, "\n\n"))
            last = q;
        if (!last || strncmp(last + 2, "Exit status:", 12) != 0)
            fail_msg("ccltune %s --help does not end with an 'Exit status:' paragraph", names[i]);
        result_free(&r);
    }
}

static void test_unknown_flag_is_a_usage_error(void **state)
{
    (void)state;
    char names[32][32];
    size_t n = listed_commands(names, 32);
    for (size_t i = 0; i < n; i++) {
        result r = RUN(names[i], "--frobnicate");
        assert_usage_error(&r, names[i], "unknown flag '--frobnicate'");
        result_free(&r);
        r = RUN(names[i], "-Z");
        assert_usage_error(&r, names[i], "unknown flag '-Z'");
        result_free(&r);
        r = RUN(names[i], "--help=yes");
        assert_usage_error(&r, names[i], "'--help=yes': --help takes no value");
        result_free(&r);
    }
}

/* A flag without its value and a word no command takes, on the commands without operands. */
static void test_missing_value_and_stray_word(void **state)
{
    (void)state;
    static const char *const takes_no_word[][2] = {
        {"version", NULL},  {"plot", "--store"}, {"probe", "--ranks"},  {"search", "--colls"},
        {"fit", "--store"}, {"tune", "--store"}, {"doctor", "--table"},
    };
    for (size_t i = 0; i < sizeof takes_no_word / sizeof takes_no_word[0]; i++) {
        const char *cmd = takes_no_word[i][0], *flag = takes_no_word[i][1];
        result r = RUN(cmd, "stray");
        assert_usage_error(&r, cmd, "unexpected argument 'stray'");
        result_free(&r);
        if (!flag)
            continue;
        r = RUN(cmd, flag);
        char want[128];
        snprintf(want, sizeof want, "%s needs a value", flag);
        assert_usage_error(&r, cmd, want);
        result_free(&r);
    }
    /* commands with operands refuse one too many */
    result r = RUN("explain", "a.yaml", "b.yaml", "--coll", "all", "--ranks", "2");
    assert_usage_error(&r, "explain", "unexpected argument 'b.yaml' (one table at a time)");
    result_free(&r);
    r = RUN("bench", "a.yaml", "b.yaml");
    assert_usage_error(&r, "bench", "unexpected argument 'b.yaml' (one table at a time)");
    result_free(&r);
}

/* One spelling per flag: explain takes the search's --regbuff no|yes. */
static void test_one_spelling(void **state)
{
    (void)state;
    result r = RUN("explain", "t.yaml", "--coll", "all", "--ranks", "2", "--reg-buff", "1");
    assert_usage_error(&r, "explain", "unknown flag '--reg-buff'");
    result_free(&r);
    r = RUN("explain", "t.yaml", "--coll", "all", "--ranks", "2", "--regbuff", "1");
    assert_usage_error(&r, "explain", "--regbuff: '1' is not no or yes");
    result_free(&r);
    r = RUN("search", "--dry-run", "--regbuff", "1");
    assert_usage_error(&r, "search", "--regbuff: '1' is not no or yes");
    result_free(&r);
    r = RUN("bench", "t.yaml", "--regbuff", "1");
    assert_usage_error(&r, "bench", "--regbuff: '1' is not no or yes");
    result_free(&r);
    /* bench and search read --cycles by the same rule */
    r = RUN("bench", "t.yaml", "--cycles", "+6");
    assert_usage_error(&r, "bench", "--cycles: '+6' is not an integer in 2..1000");
    result_free(&r);
    r = RUN("search", "--dry-run", "--cycles", "+6");
    assert_usage_error(&r, "search", "--cycles: '+6' is not an integer in 2..1000");
    result_free(&r);
}

/* ---- ccltune tune where no GPU is present ---- */

static void test_tune_refuses_bad_flags(void **state)
{
    (void)state;
    const char *out = "t.yaml";
    result r = RUN("tune", "-o", out, "--bogus");
    assert_usage_error(&r, "tune", "unknown flag '--bogus'");
    result_free(&r);
    r = RUN("tune", "--frobnicate");
    assert_usage_error(&r, "tune", "unknown flag '--frobnicate'");
    result_free(&r);
    r = RUN("tune", "--colls", "alltoall", "--max-bytes", "-1");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "ccltune tune: error: --colls: unknown collective 'alltoall'"));
    result_free(&r);
    r = RUN("tune", "--max-bytes", "-1");
    assert_usage_error(&r, "tune", "--max-bytes: '-1' is not a message size (e.g. 1K, 256M)");
    result_free(&r);
    r = RUN("tune", "--ranks-per-gpu=0");
    assert_usage_error(&r, "tune", "--ranks-per-gpu: '0' is not an integer in 1..64");
    result_free(&r);
    r = RUN("tune", "-o", out, "stray", "words");
    assert_usage_error(&r, "tune", "unexpected argument 'stray'");
    result_free(&r);
    struct stat st;
    assert_int_not_equal(stat(out, &st), 0); /* nothing was written */
}

static void test_tune_refuses_10000_args(void **state)
{
    (void)state;
    enum { N = 10000 };
    const char **args = calloc(N, sizeof *args);
    assert_non_null(args);
    args[0] = "tune";
    for (size_t i = 1; i < N; i++)
        args[i] = i % 2 ? "--no-plots" : "word";
    result r = run_v(args, N);
    assert_usage_error(&r, "tune", "unexpected argument 'word'");
    result_free(&r);
    for (size_t i = 1; i < N; i++)
        args[i] = "--frobnicate";
    r = run_v(args, N);
    assert_usage_error(&r, "tune", "unknown flag '--frobnicate'");
    result_free(&r);
    free(args);
}

static void test_tune_names_unused_measurement_flags(void **state)
{
    (void)state;
    const char *out = "t.yaml";
    result r = RUN("tune", "-o", out, "--no-plots", "--no-constants", "--ranks-per-gpu", "4",
                   "--colls=allreduce", "--max-bytes", "64M");
    if (r.status != 0)
        fail_msg("tune exit %d: %s", r.status, r.err);
    const char *line = strstr(r.err, "ccltune tune: no GPU on this machine:");
    assert_non_null(line);
    size_t len = strcspn(line, "\n");
    char *one = strndup(line, len);
    assert_non_null(strstr(one, "recorded real measurements"));
    assert_non_null(strstr(one, "the measurement flags (--ranks-per-gpu, --colls, --max-bytes) "
                                "are not used"));
    free(one);
    result_free(&r);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    unlink(out);
}

static bool have_gpu(void)
{
    result r = RUN("probe");
    bool gpu = r.status == 0;
    result_free(&r);
    return gpu;
}

/* Every run happens in a private folder: a command that wrongly goes ahead (a table, plots)
 * writes there, not into the caller's working directory. */
static char scratch[] = "/tmp/cct-conv-XXXXXX";

static void remove_scratch(void)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", scratch);
}

int main(int argc, char **argv)
{
    if (!mkdtemp(scratch) || chdir(scratch) != 0) {
        perror(scratch);
        return 1;
    }
    atexit(remove_scratch);
    if (argc > 1 && strcmp(argv[1], "tune-no-gpu") == 0) {
        if (have_gpu()) {
            fprintf(stderr, "a GPU is present: tune measures instead (skipped)\n");
            return 77;
        }
        const struct CMUnitTest tune[] = {
            cmocka_unit_test(test_tune_refuses_bad_flags),
            cmocka_unit_test(test_tune_refuses_10000_args),
            cmocka_unit_test(test_tune_names_unused_measurement_flags),
        };
        return cmocka_run_group_tests(tune, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_ends_with_exit_status),
        cmocka_unit_test(test_unknown_flag_is_a_usage_error),
        cmocka_unit_test(test_missing_value_and_stray_word),
        cmocka_unit_test(test_one_spelling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
