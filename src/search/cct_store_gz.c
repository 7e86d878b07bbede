/*
 * cct_store_gz.c - reading a gzip-compressed store (NAME.db.gz) without unpacking it on disk.
 *
 * Recorded stores are committed gzipped (a SQLite file shrinks about four times); every
 * command that only reads a store accepts the .gz as it is.  The file is decompressed by
 * `gzip -dc` (part of every POSIX system, so ccltune needs no compression library) into
 * memory and handed to SQLite as a read-only in-memory database (sqlite3_deserialize): no
 * temporary file, nothing left behind when the reader is killed.  A store in WAL mode
 * records that in its header, which an in-memory database cannot honour, so the image is
 * marked as a rollback-journal database first; the pages themselves are not touched.
 * Writing into a .gz store is refused by cct_store_open().
 */
#include "cct_store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Largest decompressed store accepted: recorded stores are a few MiB. */
#define CCT_STORE_GZ_MAX ((sqlite3_int64)1 << 32)

bool cct_store_is_gz(const char *path)
{
    size_t len = path ? strlen(path) : 0;
    return len > 3 && strcmp(path + len - 3, ".gz") == 0;
}

/* Start `gzip -dc -- path` with its output on *fd_out and its messages discarded. */
static int spawn_gunzip(const char *path, pid_t *pid, int *fd_out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return errno;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"gzip", "-dc", "--", (char *)path, NULL};
    int rc = posix_spawnp(pid, "gzip", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return rc;
    }
    *fd_out = fds[0];
    return 0;
}

/* Read fd to its end into a buffer from SQLite's allocator (deserialize takes it over). */
static bool read_all(int fd, unsigned char **buf, sqlite3_int64 *len)
{
    sqlite3_int64 cap = 1 << 20, n = 0;
    unsigned char *b = sqlite3_malloc64((sqlite3_uint64)cap);
    while (b) {
        if (n == cap) {
            if (cap >= CCT_STORE_GZ_MAX) {
                sqlite3_free(b);
                return false;
            }
            unsigned char *grown = sqlite3_realloc64(b, (sqlite3_uint64)cap * 2);
            if (!grown)
                break;
            b = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, b + n, (size_t)(cap - n));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        if (got == 0) {
            *buf = b;
            *len = n;
            return true;
        }
        n += got;
    }
    sqlite3_free(b);
    return false;
}

static cct_status gunzip(const char *path, unsigned char **buf, sqlite3_int64 *len, cct_error *err)
{
    if (access(path, R_OK) != 0)
        return cct_error_set(err, errno == ENOENT ? CCT_ENOTFOUND : CCT_EIO,
                             "store %s cannot be read: %s", path, strerror(errno));
    pid_t pid;
    int fd = -1;
    int rc = spawn_gunzip(path, &pid, &fd);
    if (rc != 0)
        return cct_error_set(err, CCT_EIO,
                             "store %s is compressed, and gzip, which reads it, cannot be run: %s",
                             path, strerror(rc));
    bool ok = read_all(fd, buf, len);
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (ok && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return CCT_OK;
    if (ok)
        sqlite3_free(*buf);
    *buf = NULL;
    return cct_error_set(err, CCT_ESTORE,
                         "store %s cannot be decompressed: not a complete gzip file (gzip -t "
                         "%s says why)",
                         path, path);
}

cct_status cct_store_gz_connect(cct_store *s, cct_error *err)
{
    unsigned char *img = NULL;
    sqlite3_int64 len = 0;
    cct_status st = gunzip(s->path, &img, &len, err);
    if (st != CCT_OK)
        return st;
    if (len >= 20 && img[18] == 2 && img[19] == 2)
        img[18] = img[19] = 1; /* WAL -> rollback journal: memory databases have no WAL */
    int rc = sqlite3_open_v2(":memory:", &s->db, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_free(img);
        return cct_store_db_error(s, rc, "opening the decompressed store", NULL, err);
    }
    rc = sqlite3_deserialize(s->db, "main", img, len, len,
                             SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
    if (rc != SQLITE_OK)
        return cct_store_db_error(s, rc, "reading the decompressed store", NULL, err);
    return CCT_OK;
}
