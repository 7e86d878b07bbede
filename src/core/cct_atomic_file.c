/*
 * cct_atomic_file.c - temporary file, lock, rename (see cct_atomic_file.h).
 *
 * The lock is what tells a dead writer's file from a live one: flock belongs to the open
 * file, so it lasts exactly as long as the writer's descriptor, and the kernel drops it when
 * the writer dies however it dies.  A cleaner that gets the lock (non-blocking) on a file of
 * our name pattern, and finds the name still on that same file, removes it.  The one window
 * left is the mkostemp fallback's few instructions between creating the file and locking it.
 */
#include "cct_atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SUFFIX ".tmp"
#define RANDOM_CHARS 6 /* as mkstemp's XXXXXX */

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* Whether name is "." base ".tmp" and six characters of mkstemp's alphabet. */
static bool is_our_temp(const char *name, const char *base)
{
    size_t nb = strlen(base), ns = strlen(SUFFIX);
    if (name[0] != '.' || strncmp(name + 1, base, nb) != 0 ||
        strncmp(name + 1 + nb, SUFFIX, ns) != 0)
        return false;
    const char *tail = name + 1 + nb + ns;
    if (strlen(tail) != RANDOM_CHARS)
        return false;
    for (const char *c = tail; *c; c++)
        if (!strchr(alphabet, *c))
            return false;
    return true;
}

/* Remove dir/name if it is a regular file nobody holds locked. */
static bool remove_if_dead(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat held, now;
    bool removed = false;
    if (fstat(fd, &held) == 0 && S_ISREG(held.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == held.st_dev &&
        now.st_ino == held.st_ino)
        removed = unlinkat(dfd, name, 0) == 0;
    close(fd);
    return removed;
}

/* Split path into its folder and base name (malloc'ed). */
static bool split_path(const char *path, char **dir, char **base)
{
    char *d = strdup(path), *b = strdup(path);
    *dir = d ? strdup(dirname(d)) : NULL;
    *base = b ? strdup(basename(b)) : NULL;
    free(d);
    free(b);
    if (*dir && *base)
        return true;
    free(*dir);
    free(*base);
    return false;
}

int cct_atomic_remove_stale(const char *path)
{
    char *dir, *base;
    if (!split_path(path, &dir, &base))
        return 0;
    int removed = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (is_our_temp(e->d_name, base))
            removed += remove_if_dead(dirfd(d), e->d_name);
    if (d)
        closedir(d);
    free(dir);
    free(base);
    return removed;
}

/* "dir/.base.tmpXXXXXX", the pattern of mkostemp (malloc'ed). */
static char *temp_pattern(const char *dir, const char *base)
{
    size_t n = strlen(dir) + strlen(base) + strlen(SUFFIX) + RANDOM_CHARS + 3;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%s/.%s%sXXXXXX", dir, base, SUFFIX);
    return t;
}

/* The pattern with its X's replaced by random characters. */
static char *temp_name(const char *dir, const char *base)
{
    char *t = temp_pattern(dir, base);
    if (!t)
        return NULL;
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20) ^ ((uint64_t)++counter << 40);
    char *tail = t + strlen(t) - RANDOM_CHARS;
    for (int i = 0; i < RANDOM_CHARS; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        tail[i] = alphabet[(x >> 33) % (sizeof alphabet - 1)];
    }
    return t;
}

static void release(cct_atomic_file *a)
{
    if (a->f)
        fclose(a->f);
    free(a->path);
    free(a->dir);
    free(a->tmp);
    memset(a, 0, sizeof *a);
}

static cct_status fail(cct_atomic_file *a, cct_error *err, const char *what, int e)
{
    cct_status st = cct_error_at(err, e == ENOMEM ? CCT_ENOMEM : CCT_EIO, a->path, 0, 0, "%s: %s",
                                 what, strerror(e));
    cct_atomic_abort(a);
    return st;
}

/* A nameless file in dir (O_TMPFILE), when the system has it and /proc can name it later. */
static int open_unnamed(const char *dir)
{
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) != 0)
        return -1;
    return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
    (void)dir;
    return -1;
#endif
}

cct_status cct_atomic_open(cct_atomic_file *a, const char *path, mode_t mode, cct_error *err)
{
    memset(a, 0, sizeof *a);
    char *base = NULL;
    a->path = strdup(path);
    if (!a->path || !split_path(path, &a->dir, &base)) {
        free(a->path);
        a->path = NULL;
        return cct_error_at(err, CCT_ENOMEM, path, 0, 0, "out of memory");
    }
    cct_atomic_remove_stale(path);
    int fd = open_unnamed(a->dir);
    a->unnamed = fd >= 0;
    if (fd < 0 && (a->tmp = temp_pattern(a->dir, base)) != NULL)
        fd = mkostemp(a->tmp, O_CLOEXEC);
    free(base);
    if (fd < 0) {
        int e = a->tmp || a->unnamed ? errno : ENOMEM;
        free(a->tmp);
        a->tmp = NULL; /* nothing was created */
        return fail(a, err, "cannot create a temporary file beside it", e);
    }
    /* the lock marks the file as a live writer's for cct_atomic_remove_stale */
    if (flock(fd, LOCK_EX) != 0 || fchmod(fd, mode) != 0 || !(a->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        return fail(a, err, "cannot write", e);
    }
    return CCT_OK;
}

/* Give the nameless file a temporary name beside the target. */
static int link_unnamed(cct_atomic_file *a, int fd, const char *base)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    for (int tries = 0; tries < 16; tries++) {
        free(a->tmp);
        a->tmp = temp_name(a->dir, base);
        if (!a->tmp)
            return ENOMEM;
        if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        int e = errno;
        free(a->tmp);
        a->tmp = NULL;
        if (e != EEXIST)
            return e;
    }
    return EEXIST;
}

/* fsync a folder so that a rename inside it survives a crash. */
static void sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

cct_status cct_atomic_commit(cct_atomic_file *a, cct_error *err)
{
    int fd = fileno(a->f);
    if (fflush(a->f) != 0 || ferror(a->f) || fsync(fd) != 0)
        return fail(a, err, "cannot write", errno ? errno : EIO);
    if (a->unnamed) {
        char *d = strdup(a->path), *base = d ? basename(d) : NULL;
        int e = base ? link_unnamed(a, fd, base) : ENOMEM;
        free(d);
        if (e != 0)
            return fail(a, err, "cannot name the temporary file", e);
    }
    if (rename(a->tmp, a->path) != 0)
        return fail(a, err, "cannot replace", errno);
    free(a->tmp);
    a->tmp = NULL; /* it is the target now */
    sync_dir(a->dir);
    release(a); /* closes the file, and the lock goes with it, after the rename */
    return CCT_OK;
}

void cct_atomic_abort(cct_atomic_file *a)
{
    if (a->tmp)
        unlink(a->tmp); /* still locked by us: nobody else removes or reuses it */
    release(a);
}
