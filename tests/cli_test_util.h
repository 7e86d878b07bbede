/*
 * cli_test_util.h - run the built `ccltune` (CCT_CCLTUNE, set by tests/meson.build) the way a
 * user does, for the reliability tests (safe loading, store faults, kill and resume).
 *
 * ct_run() spawns it with an argument vector, stdin from /dev/null, stdout and stderr
 * captured in unlinked temporary files, and waits; ct_spawn() only starts it (for tests that
 * kill it) with output thrown away.  ct_tmpdir() makes a private scratch folder and
 * ct_rm_rf() removes one.  Include in one translation unit per program, after cmocka.h.
 */
#ifndef CCT_CLI_TEST_UTIL_H
#define CCT_CLI_TEST_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct ct_result {
    int status; /* exit code; 128 + signal when killed */
    char *out, *err;
} ct_result;

static char *ct_slurp_fd(int fd)
{
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    char *buf = malloc(size > 0 ? (size_t)size + 1 : 1);
    size_t n = 0;
    while (buf && size > 0 && n < (size_t)size) {
        ssize_t got = read(fd, buf + n, (size_t)size - n);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    if (buf)
        buf[n] = '\0';
    close(fd);
    return buf;
}

static pid_t ct_spawn_fds(const char *const *args, int out_fd, int err_fd)
{
    const char *exe = getenv("CCT_CCLTUNE");
    if (!exe)
        return -1;
    const char *argv[64] = {exe};
    int argc = 1;
    for (int i = 0; args[i] && argc < 63; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

/* Start ccltune with args (NULL-terminated, argv[0] excluded), output discarded. */
static __attribute__((unused)) pid_t ct_spawn(const char *const *args)
{
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_t pid = ct_spawn_fds(args, null_fd, null_fd);
    close(null_fd);
    return pid;
}

static int ct_wait(pid_t pid)
{
    int wst;
    while (waitpid(pid, &wst, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
}

/* Run ccltune to completion with args (NULL-terminated, argv[0] excluded). */
static __attribute__((unused)) ct_result ct_run(const char *const *args)
{
    char out_path[] = "/tmp/cct-ct-out-XXXXXX", err_path[] = "/tmp/cct-ct-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    ct_result r = {-1, NULL, NULL};
    if (out_fd < 0 || err_fd < 0)
        return r;
    unlink(out_path);
    unlink(err_path);
    pid_t pid = ct_spawn_fds(args, out_fd, err_fd);
    r.status = pid > 0 ? ct_wait(pid) : -1;
    r.out = ct_slurp_fd(out_fd);
    r.err = ct_slurp_fd(err_fd);
    return r;
}

static __attribute__((unused)) void ct_result_free(ct_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Writes text to path as a table the plugin's loader accepts whatever the umask: mode 0644
 * (it refuses group-writable tables).  False on any failure. */
static __attribute__((unused)) bool ct_write_table(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text, f) >= 0;
    ok = f && fclose(f) == 0 && ok;
    return ok && chmod(path, 0644) == 0;
}

/* A fresh private folder under TMPDIR (or /tmp); the caller frees the returned path. */
static __attribute__((unused)) char *ct_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    if (!path)
        return NULL;
    snprintf(path, 4096, "%s/cct-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

/* rm -rf for a scratch folder of flat files and folders (no symlink is followed). */
static __attribute__((unused)) void ct_rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            ct_rm_rf(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

#endif
