/*
 * test_atomic_file.c - tables are replaced atomically, and a crash leaves nothing behind
 * that outlives the next write (cct_table_save over cct_atomic_file).
 *
 * A temporary file of ours (".NAME.tmpXXXXXX" beside the table) left by a writer that
 * died -- empty, as kill -9 right after creating it leaves it, or half written -- is
 * removed by the next successful save; one a live writer holds (its lock) and files of
 * other names are not touched.  Writers killed with SIGKILL at random moments never leave
 * a partial table: the path always loads, and the next save leaves no temporary file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cct_table.h"
#include "fixture_test_util.h"

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static char *scratch(void)
{
    const char *base = getenv("TMPDIR");
    char *d = join(base && *base ? base : "/tmp", "cct-atomic-XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static void rm_scratch(char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char *p = join(dir, e->d_name);
            unlink(p);
            free(p);
        }
    closedir(d);
    rmdir(dir);
    free(dir);
}

static bool exists(const char *dir, const char *name)
{
    char *p = join(dir, name);
    struct stat st;
    bool yes = lstat(p, &st) == 0;
    free(p);
    return yes;
}

static void put(const char *dir, const char *name, const char *text)
{
    char *p = join(dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

/* Names in dir that start with ".t.yaml.tmp" (ours for t.yaml). */
static int temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, ".t.yaml.tmp", 11) == 0;
    closedir(d);
    return n;
}

static void load_example(cct_table *t)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char *p = join(src, "data/tables/full.yaml");
    cct_error err;
    if (cct_table_load_file(p, t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    free(p);
}

static void stale_temp_files_are_removed(void **state)
{
    (void)state;
    char *dir = scratch(), *path = join(dir, "t.yaml");
    cct_table t;
    cct_error err;
    load_example(&t);
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    put(dir, ".t.yaml.tmpAbC123", "");                           /* killed right after creating */
    put(dir, ".t.yaml.tmpXyZ789", "ccltune_table: 1\nprovenan"); /* killed while writing */
    put(dir, ".t.yaml.tmp-notours", "");                         /* not a name our writer makes */
    put(dir, ".other.yaml.tmpAbC123", "");                       /* another table's */
    put(dir, "t.yaml.tmpAbC123", "");                            /* no leading dot: not ours */
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    assert_false(exists(dir, ".t.yaml.tmpAbC123"));
    assert_false(exists(dir, ".t.yaml.tmpXyZ789"));
    assert_true(exists(dir, ".t.yaml.tmp-notours"));
    assert_true(exists(dir, ".other.yaml.tmpAbC123"));
    assert_true(exists(dir, "t.yaml.tmpAbC123"));
    cct_table back;
    assert_int_equal(cct_table_load_file(path, &back, &err), CCT_OK);
    cct_table_destroy(&back);
    cct_table_destroy(&t);
    free(path);
    rm_scratch(dir);
}

/* A temporary file whose writer still runs (it holds the lock) is left alone. */
static void live_writers_temp_file_is_kept(void **state)
{
    (void)state;
    char *dir = scratch(), *path = join(dir, "t.yaml"), *live = join(dir, ".t.yaml.tmpLive01");
    put(dir, ".t.yaml.tmpLive01", "ccltune_table: 1\n");
    int fd = open(live, O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    cct_table t;
    cct_error err;
    load_example(&t);
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    assert_true(exists(dir, ".t.yaml.tmpLive01"));
    close(fd);
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    assert_false(exists(dir, ".t.yaml.tmpLive01"));
    cct_table_destroy(&t);
    free(live);
    free(path);
    rm_scratch(dir);
}

/* A table large enough that a save takes a while, so kills land in the middle of it. */
static void big_table(cct_table *t)
{
    load_example(t);
    cct_rule rule = cct_rule_blank();
    rule.algo = CCT_ALGO_RING;
    rule.proto = CCT_PROTO_SIMPLE;
    rule.predicted_us = 12.5;
    for (int ranks = 1000; ranks < 3000; ranks++) {
        cct_section *s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, ranks, 1);
        assert_non_null(s);
        rule.min_bytes = 0;
        rule.max_bytes = 65536;
        assert_int_equal(cct_section_add_rule(s, &rule), CCT_OK);
        rule.min_bytes = 65536;
        rule.max_bytes = CCT_BYTES_INF;
        assert_int_equal(cct_section_add_rule(s, &rule), CCT_OK);
    }
}

static void killed_writers_leave_no_partial_table(void **state)
{
    (void)state;
    char *dir = scratch(), *path = join(dir, "t.yaml");
    cct_table t;
    cct_error err;
    big_table(&t);
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long save_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
    srand(12345);
    int left_behind = 0;
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (;;)
                cct_table_save(&t, path, &err);
        }
        usleep((useconds_t)(save_us / 2 + rand() % (save_us * 2 + 1)));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        cct_table back;
        if (cct_table_load_file(path, &back, &err) != CCT_OK)
            fail_msg("after kill %d: %s", i, err.msg);
        assert_int_equal(back.n_sections, t.n_sections);
        cct_table_destroy(&back);
        left_behind += temp_files(dir) > 0;
    }
    print_message("save takes %ld us; %d of 20 kills left a temporary file\n", save_us,
                  left_behind);
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    assert_int_equal(temp_files(dir), 0);
    cct_table_destroy(&t);
    free(path);
    rm_scratch(dir);
}

int main(void)
{
    if (!fixture_mirror())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_temp_files_are_removed),
        cmocka_unit_test(live_writers_temp_file_is_kept),
        cmocka_unit_test(killed_writers_leave_no_partial_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
