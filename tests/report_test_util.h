/*
 * report_test_util.h - helpers shared by the tests of `ccltune diff` and `ccltune plot`:
 * running the built ccltune (CCT_CCLTUNE) with captured stdout/stderr and an optional
 * environment, paths under tests/ (CCT_TEST_SRCDIR), temporary folders, whole-file reads.
 *
 * Header-only (static functions) so each test stays one program.  Returned strings and
 * rp_result buffers are malloc'ed and owned by the caller (rp_free()).
 */
#ifndef REPORT_TEST_UTIL_H
#define REPORT_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdarg.h>
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

typedef struct rp_result {
    int status; /* exit code, -1 when killed by a signal */
    char *out, *err;
} rp_result;

static inline char *rp_slurp_fd(int fd)
{
    off_t size = lseek(fd, 0, SEEK_END);
    assert_true(size >= 0);
    lseek(fd, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    ssize_t n = read(fd, buf, (size_t)size);
    assert_true(n == size);
    buf[n] = '\0';
    close(fd);
    return buf;
}

/* Run ccltune with argv (NULL-terminated, ccltune itself excluded) under envp (NULL: ours). */
static inline rp_result rp_run_env(char *const *envp, const char *const *args)
{
    const char *exe = getenv("CCT_CCLTUNE");
    assert_non_null(exe);
    const char *argv[64] = {exe};
    int argc = 1;
    for (; args[argc - 1] && argc < 63; argc++)
        argv[argc] = args[argc - 1];
    argv[argc] = NULL;
    char out_path[] = "/tmp/cct-rp-out-XXXXXX", err_path[] = "/tmp/cct-rp-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    assert_true(out_fd >= 0 && err_fd >= 0);
    unlink(out_path);
    unlink(err_path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        fail_msg("cannot run %s: %s", exe, strerror(rc));
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    rp_result r;
    r.status = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
    r.out = rp_slurp_fd(out_fd);
    r.err = rp_slurp_fd(err_fd);
    return r;
}

#define rp_run(...) rp_run_env(NULL, (const char *const[]){__VA_ARGS__, NULL})

static inline void rp_free(rp_result *r)
{
    free(r->out);
    free(r->err);
}

/* tests/REL as a path; free() it. */
static inline char *rp_path(const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    size_t n = strlen(src) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", src, rel);
    return p;
}

/* A fresh temporary folder, its path in dir. */
static inline void rp_tmpdir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/cct-report-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static int rp_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void rp_rmdir(const char *dir)
{
    nftw(dir, rp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The whole file, NUL terminated; *len its size (may be NULL).  NULL when it is absent. */
static inline char *rp_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    assert_true(size >= 0);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    buf[size] = '\0';
    if (len)
        *len = (size_t)size;
    return buf;
}

/* Files are written 0644 whatever the umask: ccltune refuses tables that others can write
 * (cct_safe_file.h), and a checkout made under umask 002 has group-writable data files. */
static inline void rp_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0644), 0);
}

/* Copy src to dst byte for byte, mode 0644 (see rp_write). */
static inline void rp_copy(const char *src, const char *dst)
{
    size_t len = 0;
    char *data = rp_read(src, &len);
    if (!data)
        fail_msg("cannot read %s", src);
    FILE *f = fopen(dst, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(dst, 0644), 0);
    free(data);
}

#define rp_assert_contains(hay, needle)                                                            \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("expected '%s' in:\n%s", (needle), (hay));                                    \
    } while (0)

#endif
