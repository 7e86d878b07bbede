/*
 * fault_enospc.c - an LD_PRELOAD library that makes a disk fill up under a running program:
 * once CCT_FAULT_ENOSPC_AFTER bytes have been written to files whose path starts with
 * CCT_FAULT_PATH, every further write to them fails with ENOSPC, as on a full file system.
 *
 * It wraps write, pwrite and pwrite64 (what SQLite's unix VFS uses), resolves each
 * descriptor's path through /proc/self/fd and passes everything else through untouched.
 * Mounting a small tmpfs would need privileges CI does not have; this needs none, and the
 * budget makes the failure land at a chosen point of the run (0: the very first write).
 * The store fault test (tests/test_cli_store_faults.c) runs `ccltune search` under it.
 */
#undef _FILE_OFFSET_BITS /* define pwrite and pwrite64 each under its own name */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static atomic_llong written;

/* How many of n bytes to fd may still be written: n, or 0 once the budget is spent. */
static bool disk_full(int fd, size_t n)
{
    const char *prefix = getenv("CCT_FAULT_PATH");
    const char *budget = getenv("CCT_FAULT_ENOSPC_AFTER");
    if (!prefix || !budget || n == 0)
        return false;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (len <= 0)
        return false;
    path[len] = '\0';
    if (strncmp(path, prefix, strlen(prefix)) != 0)
        return false;
    long long limit = atoll(budget);
    return atomic_fetch_add(&written, (long long)n) + (long long)n > limit;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (disk_full(fd, n)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (disk_full(fd, n)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n, off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
    if (disk_full(fd, n)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n, off);
}
