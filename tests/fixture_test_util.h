/*
 * fixture_test_util.h - run a test program on private, safely-moded copies of the tables it
 * reads, whatever the modes of the checkout.
 *
 * Tables are read under the safe-loading rules (src/core/cct_safe_file.c): a file writable
 * by its group is refused.  A checkout made with umask 002, or a tarball extracted by root,
 * has 0664 files, and a test that reads a fixture table where that rule is not under test
 * would fail for the checkout's sake.  fixture_mirror() builds a private copy of the source
 * tree's layout in a fresh temporary folder: the folders named in FIXTURE_TABLE_DIRS get
 * copies of their files and their subfolders' files (not .gz stores), mode 0644 in 0755 folders;
 * every other entry is a symbolic link to the real one (stores, logs, tools).  It then points
 * CCT_TEST_SRCDIR at the copy's tests/ folder, so the program's own path helpers, relative paths
 * under a chdir to the root and messages that name "tests/bad_tables/..." stay as they are.  The
 * copy is removed at exit.  Call it first thing in main(); header-only, no library needed.
 */
#ifndef FIXTURE_TEST_UTIL_H
#define FIXTURE_TEST_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorded_test_util.h"

/* Folders (relative to the source root) whose files, and their subfolders' files, are read as
 * tables by some test (tests/data/h200 and h100 hold the tables each GPU run wrote). */
static const char *const FIXTURE_TABLE_DIRS[] = {
    "tests/bad_tables", "tests/data/tables", "tests/data/plot", "tests/data/proof",
    "tests/data/h200",  "tests/data/h100",   "tables",          NULL};

static char fixture_root[PATH_MAX];
static pid_t fixture_owner; /* a forked child that exits must not remove the parent's copy */

/* Whether the folder rel has its files copied. */
static inline bool fixture_copied(const char *rel)
{
    for (size_t i = 0; FIXTURE_TABLE_DIRS[i]; i++) {
        size_t len = strlen(FIXTURE_TABLE_DIRS[i]);
        if (strncmp(FIXTURE_TABLE_DIRS[i], rel, len) == 0 && (rel[len] == '\0' || rel[len] == '/'))
            return true;
    }
    return false;
}

/* Whether the folder rel is rebuilt rather than linked: it is copied or holds one that is. */
static inline bool fixture_descended(const char *rel)
{
    if (fixture_copied(rel))
        return true;
    size_t len = strlen(rel);
    for (size_t i = 0; FIXTURE_TABLE_DIRS[i]; i++)
        if (strncmp(FIXTURE_TABLE_DIRS[i], rel, len) == 0 &&
            (FIXTURE_TABLE_DIRS[i][len] == '\0' || FIXTURE_TABLE_DIRS[i][len] == '/'))
            return true;
    return false;
}

/* Mirror the folder src (rel below the root) into the new folder dst. */
static inline bool fixture_mirror_dir(const char *src, const char *dst, const char *rel)
{
    if (mkdir(dst, 0755) != 0 || chmod(dst, 0755) != 0)
        return false;
    DIR *d = opendir(src);
    if (!d)
        return false;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char from[PATH_MAX], to[PATH_MAX], sub[PATH_MAX];
        snprintf(from, sizeof from, "%s/%s", src, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dst, e->d_name);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        struct stat st;
        if (lstat(from, &st) != 0)
            ok = false;
        else if (S_ISDIR(st.st_mode) && fixture_descended(sub))
            ok = fixture_mirror_dir(from, to, sub);
        else if (S_ISREG(st.st_mode) && fixture_copied(rel) && !recorded_is_gz(from))
            ok = recorded_copy(from, to);
        else
            ok = symlink(from, to) == 0;
    }
    closedir(d);
    return ok;
}

static inline int fixture_remove_one(const char *path, const struct stat *st, int flag,
                                     struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static inline void fixture_cleanup(void)
{
    if (fixture_root[0] && getpid() == fixture_owner)
        nftw(fixture_root, fixture_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Build the mirror and point CCT_TEST_SRCDIR at it; false (with a message) on failure. */
static inline bool fixture_mirror(void)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    char *tests = src ? realpath(src, NULL) : NULL;
    if (!tests) {
        fprintf(stderr, "fixture_mirror: CCT_TEST_SRCDIR is not set or does not exist\n");
        return false;
    }
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", tests);
    free(tests);
    char *slash = strrchr(root, '/'); /* CCT_TEST_SRCDIR is ROOT/tests */
    if (!slash || slash == root) {
        fprintf(stderr, "fixture_mirror: CCT_TEST_SRCDIR is not a tests folder\n");
        return false;
    }
    *slash = '\0';
    const char *tmp = getenv("TMPDIR");
    char base[PATH_MAX];
    snprintf(base, sizeof base, "%s/cct-fixtures-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("fixture_mirror: mkdtemp");
        return false;
    }
    snprintf(fixture_root, sizeof fixture_root, "%s", base);
    fixture_owner = getpid();
    atexit(fixture_cleanup);
    char copy[PATH_MAX + 8], copy_tests[PATH_MAX + 16];
    snprintf(copy, sizeof copy, "%s/src", base);
    snprintf(copy_tests, sizeof copy_tests, "%s/tests", copy);
    if (!fixture_mirror_dir(root, copy, "") || setenv("CCT_TEST_SRCDIR", copy_tests, 1) != 0) {
        fprintf(stderr, "fixture_mirror: cannot copy the fixtures of %s into %s\n", root, copy);
        return false;
    }
    return true;
}

#endif
