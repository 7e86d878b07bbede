/*
 * recorded_test_util.h - private copies of the committed recorded stores for test programs.
 *
 * The stores under tests/data are committed gzipped (NAME.db.gz) and, whatever the mode of
 * the checkout's files, a test that writes into a store, changes its mode or hands it to
 * another user works on its own copy: recorded_copy() decompresses a .gz (gzip -dc, as
 * ccltune itself reads one) or copies any other file, and leaves the copy 0644 in a folder
 * the test made.  Commands that only read a store take the .gz as it is.
 * Header-only and dependency-free: include it once per test program.
 */
#ifndef RECORDED_TEST_UTIL_H
#define RECORDED_TEST_UTIL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static inline bool recorded_is_gz(const char *path)
{
    size_t len = strlen(path);
    return len > 3 && strcmp(path + len - 3, ".gz") == 0;
}

/* Copy from (decompressed when it ends in .gz) to the new file to, mode 0644. */
static inline bool recorded_copy(const char *from, const char *to)
{
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0)
        return false;
    bool ok = false;
    if (recorded_is_gz(from)) {
        pid_t pid = fork();
        if (pid == 0) {
            dup2(out, STDOUT_FILENO);
            execlp("gzip", "gzip", "-dc", "--", from, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
    } else {
        int in = open(from, O_RDONLY);
        char buf[65536];
        ssize_t n = 0;
        ok = in >= 0;
        while (ok && (n = read(in, buf, sizeof buf)) > 0)
            ok = write(out, buf, (size_t)n) == n;
        ok = ok && n == 0;
        if (in >= 0)
            close(in);
    }
    ok = fchmod(out, 0644) == 0 && ok;
    return close(out) == 0 && ok;
}

/* recorded_copy of the recorded file REL under $CCT_TEST_SRCDIR/data into DIR/NAME; returns
 * the new path (the caller frees it), NULL on failure. */
static inline char *recorded_copy_into(const char *dir, const char *rel, const char *name)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    char *to = malloc(4200), from[4200];
    if (!src || !dir || !to) {
        free(to);
        return NULL;
    }
    snprintf(from, sizeof from, "%s/data/%s", src, rel);
    snprintf(to, 4200, "%s/%s", dir, name);
    if (!recorded_copy(from, to)) {
        free(to);
        return NULL;
    }
    return to;
}

#endif
