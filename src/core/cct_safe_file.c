/*
 * cct_safe_file.c - the safe-loading rules of cct_safe_file.h, applied once for every
 * reader of tables (the plugin's loader, ccltune validate/explain/diff/export).
 *
 * Order: stat() the path first so a FIFO or device is refused without being opened
 * (opening a FIFO blocks until a writer appears; opening some devices has side effects);
 * then open it O_NONBLOCK|O_NOCTTY and judge everything again on fstat() of the descriptor,
 * which is what is read -- a file swapped in between is caught there.  The resolved name
 * (for messages and the directory rule) comes from /proc/self/fd, i.e. the file actually
 * opened, or realpath() where /proc is absent.  The first rule that fails is reported; with
 * the access rules waived their failure goes to `waived` and loading continues.
 *
 * Kernel interfaces (procfs, sysfs, debugfs, ...) hold "regular files" whose reads have side
 * effects (/proc/kmsg consumes the kernel's messages) or never end; fstatfs() of the open
 * descriptor names the file system, and those are refused before the first read.  A file
 * that reports size 0 yet reads non-empty behaves like one of them and is refused too.
 */
#include "cct_safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#define PREFIX "%s: unsafe file (rule %s): "

cct_safe_rules cct_safe_rules_default(uint64_t max_bytes)
{
    cct_safe_rules r = {max_bytes, true};
    const char *v = getenv("CCLTUNE_TABLE_UNSAFE_OK");
    if (v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
              strcasecmp(v, "on") == 0))
        r.check_access = false;
    return r;
}

static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* "it is" or "it leads to RESOLVED," when links were followed. */
static const char *subject(const char *path, const char *resolved, char *buf, size_t len)
{
    if (!resolved[0] || strcmp(path, resolved) == 0)
        return "it is";
    snprintf(buf, len, "it leads to %s, which is", resolved);
    return buf;
}

static cct_status refuse_kind(const char *path, const char *resolved, mode_t m, cct_error *err)
{
    char buf[PATH_MAX + 64];
    return cct_error_set(err, CCT_EPERM, PREFIX "%s %s, not a regular file", path, "regular-file",
                         subject(path, resolved, buf, sizeof buf), kind_name(m));
}

static cct_status refuse_size(const char *path, uint64_t size, bool at_least, uint64_t max,
                              cct_error *err)
{
    char limit[64];
    if (max >= (1u << 20) && max % (1u << 20) == 0)
        snprintf(limit, sizeof limit, "%llu MiB", (unsigned long long)(max >> 20));
    else
        snprintf(limit, sizeof limit, "%llu bytes", (unsigned long long)max);
    return cct_error_set(err, CCT_EPERM, PREFIX "%s%llu bytes, more than the limit of %s", path,
                         "size", at_least ? "at least " : "", (unsigned long long)size, limit);
}

/* File systems whose "files" are kernel interfaces, by statfs f_type (linux/magic.h).
 * devtmpfs shares tmpfs's magic and is covered by the regular-file rule (devices). */
static const struct {
    unsigned long magic;
    const char *name;
} kernel_fs[] = {
    {0x9fa0, "procfs"},           {0x62656572, "sysfs"},      {0x64626720, "debugfs"},
    {0x74726163, "tracefs"},      {0x73636673, "securityfs"}, {0x27e0eb, "cgroupfs"},
    {0x63677270, "cgroup2fs"},    {0xcafe4a11, "bpffs"},      {0x62656570, "configfs"},
    {0x6165676c, "pstorefs"},     {0xde5e81e4, "efivarfs"},   {0x65735543, "fusectl"},
    {0x42494e4d, "binfmt_misc"},  {0xf97cff8c, "selinuxfs"},  {0x43415d53, "smackfs"},
    {0x6e736673, "nsfs"},         {0x1cd1, "devpts"},         {0x19800202, "mqueue"},
    {0x67596969, "rpc_pipefs"},   {0x6e667364, "nfsd"},       {0x9fa2, "usbdevfs"},
    {0x09041934, "anon_inodefs"}, {0x50495045, "pipefs"},     {0x534f434b, "sockfs"},
};

/* The kernel file system fd lives on, or NULL for a file system that stores files (or when
 * fstatfs cannot tell: the other rules still apply). */
static const char *kernel_fs_name(int fd)
{
#ifdef __linux__
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof kernel_fs / sizeof kernel_fs[0]; i++)
        if ((unsigned long)fs.f_type == kernel_fs[i].magic)
            return kernel_fs[i].name;
#else
    (void)fd;
#endif
    return NULL;
}

static cct_status refuse_fs(const char *path, const char *resolved, const char *fs, cct_error *err)
{
    char buf[PATH_MAX + 64];
    return cct_error_set(err, CCT_EPERM,
                         PREFIX "%s on %s, a kernel interface rather than a stored file (reading "
                                "it can have side effects)",
                         path, "filesystem", subject(path, resolved, buf, sizeof buf), fs);
}

/* The access rules on an opened file; CCT_EPERM with the first failure in `out`. */
static cct_status check_access(const char *path, const char *resolved, const struct stat *sb,
                               cct_error *out)
{
    uid_t me = geteuid();
    if (sb->st_mode & (S_IWGRP | S_IWOTH))
        return cct_error_set(out, CCT_EPERM,
                             PREFIX "writable by %s (mode %04o), and whoever can write it steers "
                                    "every job that reads it; run chmod go-w %s",
                             path, "mode",
                             (sb->st_mode & S_IWGRP) && (sb->st_mode & S_IWOTH) ? "group and others"
                             : (sb->st_mode & S_IWGRP)                          ? "its group"
                                                                                : "others",
                             (unsigned)(sb->st_mode & 07777), path);
    if (sb->st_uid != 0 && sb->st_uid != me)
        return cct_error_set(out, CCT_EPERM,
                             PREFIX "owned by uid %u, neither root nor this process's user (uid "
                                    "%u), who could change it under every job; have root or uid "
                                    "%u own it",
                             path, "owner", (unsigned)sb->st_uid, (unsigned)me, (unsigned)me);
    if (!resolved[0])
        return CCT_OK;
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", resolved);
    const char *dir = dirname(copy);
    struct stat db;
    /* the file was opened through this folder, so it exists; a stat that fails anyway (a
     * racing rename) leaves the rule unjudged rather than refusing a good table */
    if (stat(dir, &db) == 0 && (db.st_mode & S_IWOTH) && !(db.st_mode & S_ISVTX))
        return cct_error_set(out, CCT_EPERM,
                             PREFIX "its folder %s is writable by everyone without the sticky bit "
                                    "(mode %04o), so anyone can rename another file over it; "
                                    "move it or run chmod o-w %s",
                             path, "directory", dir, (unsigned)(db.st_mode & 07777), dir);
    return CCT_OK;
}

static void resolve_fd(int fd, const char *path, char *out, size_t len)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, len - 1);
    if (n > 0 && out[0] == '/') {
        out[n] = '\0';
        return;
    }
    char *r = realpath(path, NULL);
    snprintf(out, len, "%s", r ? r : "");
    free(r);
}

cct_status cct_safe_open(const char *path, const cct_safe_rules *rules, int *fd, cct_error *err,
                         cct_error *waived)
{
    *fd = -1;
    cct_error_clear(err);
    cct_error_clear(waived);
    char resolved[PATH_MAX];
    struct stat sb;
    if (stat(path, &sb) != 0)
        return cct_error_set(err, CCT_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) {
        char *r = realpath(path, NULL);
        snprintf(resolved, sizeof resolved, "%s", r ? r : "");
        free(r);
        return refuse_kind(path, resolved, sb.st_mode, err);
    }
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (f < 0)
        return cct_error_set(err, CCT_EIO, "%s: cannot open: %s", path, strerror(errno));
    resolve_fd(f, path, resolved, sizeof resolved);
    cct_status st = CCT_OK;
    const char *kfs;
    if (fstat(f, &sb) != 0)
        st = cct_error_set(err, CCT_EIO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = refuse_kind(path, resolved, sb.st_mode, err);
    else if ((kfs = kernel_fs_name(f)) != NULL)
        st = refuse_fs(path, resolved, kfs, err);
    else if ((uint64_t)sb.st_size > rules->max_bytes)
        st = refuse_size(path, (uint64_t)sb.st_size, false, rules->max_bytes, err);
    else if (rules->check_access)
        st = check_access(path, resolved, &sb, err);
    else if (waived)
        check_access(path, resolved, &sb, waived);
    if (st != CCT_OK) {
        close(f);
        return st;
    }
    *fd = f;
    return CCT_OK;
}

cct_status cct_safe_read(const char *path, const cct_safe_rules *rules, char **data, size_t *len,
                         cct_error *err, cct_error *waived)
{
    *data = NULL;
    *len = 0;
    int fd;
    cct_status st = cct_safe_open(path, rules, &fd, err, waived);
    if (st != CCT_OK)
        return st;
    struct stat sb;
    bool empty = fstat(fd, &sb) == 0 && sb.st_size == 0;
    size_t cap = !empty && sb.st_size > 0 ? (size_t)sb.st_size + 1 : 4096;
    if ((uint64_t)cap > rules->max_bytes + 1)
        cap = (size_t)rules->max_bytes + 1; /* one byte past the limit tells "too large" */
    size_t n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        st = cct_error_set(err, CCT_ENOMEM, "%s: out of memory reading it", path);
    /* read to EOF rather than trusting st_size: the file may be growing */
    while (st == CCT_OK) {
        if (n == cap) {
            if ((uint64_t)n > rules->max_bytes) {
                st = refuse_size(path, (uint64_t)n, true, rules->max_bytes, err);
                break;
            }
            size_t ncap = cap * 2;
            if ((uint64_t)ncap > rules->max_bytes + 1)
                ncap = (size_t)rules->max_bytes + 1;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                st = cct_error_set(err, CCT_ENOMEM, "%s: out of memory reading it", path);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            st = cct_error_set(err, CCT_EIO, "%s: cannot read: %s", path, strerror(errno));
        else if (got == 0)
            break;
        else
            n += (size_t)got;
    }
    close(fd);
    if (st == CCT_OK && (uint64_t)n > rules->max_bytes)
        st = refuse_size(path, (uint64_t)n, true, rules->max_bytes, err);
    if (st == CCT_OK && empty && n > 0)
        st = cct_error_set(err, CCT_EPERM,
                           PREFIX "it reports size 0 but reads %zu bytes, as kernel interfaces "
                                  "do, not a stored file",
                           path, "filesystem", n);
    if (st != CCT_OK) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return CCT_OK;
}
