/*
 * cct_store.c - opening and closing the measurement store (see cct_store.h; fingerprints
 * and runs are in cct_store_runs.c, points in cct_store_points.c and cct_store_load.c).
 *
 * Opening configures the connection for crash safety before anything is written: WAL
 * journal (set by the schema code once the file is recognised), synchronous = FULL so a
 * commit that returned survives power loss too, foreign keys on, and a busy timeout so a
 * reader (sqlite3 in another terminal) never makes the search fail.  SQLite silently falls
 * back to read-only when the file is not writable; a store opened for writing checks for
 * that and refuses at once, rather than failing hours later on the first point.  Failures
 * caused by the directory (WAL needs -wal and -shm files beside the store) are explained
 * as such, and a reader in a directory it cannot write still gets a cleanly closed store.
 * A NAME.gz store is read from memory (cct_store_gz.c) and only ever read.
 */
#include "cct_store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

static void close_db(cct_store *s)
{
    /* sqlite3_close_v2 never fails for lack of finalized statements; we finalize them all
     * anyway, so this only releases the file (and checkpoints the WAL if we were last). */
    if (s->db)
        sqlite3_close_v2(s->db);
    s->db = NULL;
}

static cct_status configure(cct_store *s, cct_error *err)
{
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, CCT_STORE_BUSY_TIMEOUT_MS);
    return cct_store_exec(s, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL",
                          "configuring the connection", err);
}

/* A reader of a WAL store needs the -shm file; in a directory it may not write, with no
 * -wal file left (the last writer closed cleanly and checkpointed), the database file is
 * complete and nobody can be writing it, so it is read as immutable.  A -wal file means a
 * writer is active or crashed: then reading the file alone could miss committed points,
 * and the caller gets the error instead. */
static bool has_wal(const char *path)
{
    size_t len = strlen(path);
    char *wal = malloc(len + 5);
    if (!wal)
        return true; /* the cautious answer */
    memcpy(wal, path, len);
    memcpy(wal + len, "-wal", 5);
    bool exists = access(wal, F_OK) == 0;
    free(wal);
    return exists;
}

static bool may_read_immutable(const char *path)
{
    return !has_wal(path) && access(path, R_OK) == 0;
}

/* SQLite reports an unwritable directory as a read-only database or as "unable to open";
 * the user needs to hear which directory and why it must be writable (WAL creates the
 * -wal and -shm files beside the store).  Keeps err as it is when the directory is fine. */
static void explain_directory(const char *path, bool read_only, cct_error *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (read_only) {
        if (access(dir, W_OK | X_OK) != 0 && has_wal(path))
            cct_error_set(err, CCT_EIO,
                          "store %s cannot be read from here: a search is writing it or was "
                          "interrupted (%s-wal exists), and reading it then needs %s-shm, which "
                          "cannot be created in directory %s; read a copy, or let its owner "
                          "open it once for writing",
                          path, path, path, dir);
    } else if (access(dir, F_OK) != 0)
        cct_error_set(err, CCT_EIO, "store %s cannot be created: directory %s does not exist", path,
                      dir);
    else if (access(dir, W_OK | X_OK) != 0)
        cct_error_set(err, CCT_EIO,
                      "store %s cannot be written: its directory %s is not writable, and the "
                      "store needs to create %s-wal and %s-shm there; make the directory "
                      "writable or put the store elsewhere",
                      path, dir, path, path);
}

/* "file:" URI of path with immutable=1; every byte that URIs reserve is %-escaped so a
 * path with '?' or '#' still names the same file. */
static char *immutable_uri(const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t len = strlen(path);
    char *uri = malloc(len * 3 + sizeof "file:?immutable=1");
    if (!uri)
        return NULL;
    char *o = uri;
    o += sprintf(o, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/-._~", *c)) {
            *o++ = (char)*c;
        } else {
            *o++ = '%';
            *o++ = hex[*c >> 4];
            *o++ = hex[*c & 15];
        }
    }
    strcpy(o, "?immutable=1");
    return uri;
}

/* Open name with flags, configure the connection and recognise the file.  *file_ro tells
 * that the file itself is not writable (as opposed to its directory). */
static cct_status connect(cct_store *s, const char *name, int flags, bool *file_ro, cct_error *err)
{
    int rc = sqlite3_open_v2(name, &s->db, flags, NULL);
    if (rc != SQLITE_OK) {
        if (s->read_only && (rc & 0xff) == SQLITE_CANTOPEN && access(s->path, F_OK) != 0)
            return cct_error_set(err, CCT_ENOTFOUND, "store %s does not exist", s->path);
        return cct_store_db_error(s, rc, "opening the file", NULL, err);
    }
    *file_ro = !s->read_only && sqlite3_db_readonly(s->db, "main") == 1;
    if (*file_ro)
        return cct_error_set(err, CCT_EIO,
                             "store %s is read-only (no write permission on the file): cannot "
                             "record measurements in it; fix its permissions or choose another "
                             "path",
                             s->path);
    cct_status st = configure(s, err);
    return st == CCT_OK ? cct_store_schema_attach(s, err) : st;
}

cct_status cct_store_open(const char *path, bool read_only, cct_store **out, cct_error *err)
{
    if (!out)
        return cct_error_set(err, CCT_EINVAL, "cct_store_open: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return cct_error_set(err, CCT_EINVAL, "store path is empty");
    struct stat st_path;
    if (stat(path, &st_path) == 0 && S_ISDIR(st_path.st_mode))
        return cct_error_set(err, CCT_EINVAL,
                             "store %s is a folder, not a store file: give a file name such as "
                             "%s/measurements.db",
                             path, path);
    cct_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return cct_error_set(err, CCT_ENOMEM, "out of memory opening store %s", path);
    }
    s->read_only = read_only;
    if (cct_store_is_gz(path)) {
        cct_status gz = read_only ? cct_store_gz_connect(s, err)
                                  : cct_error_set(err, CCT_EINVAL,
                                                  "store %s is compressed: it can be read but not "
                                                  "recorded into (decompress it with gzip -dk %s "
                                                  "and use the .db)",
                                                  path, path);
        if (gz == CCT_OK && (gz = configure(s, err)) == CCT_OK)
            gz = cct_store_schema_attach(s, err);
        if (gz != CCT_OK) {
            cct_store_close(s);
            return gz;
        }
        *out = s;
        return CCT_OK;
    }
    int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    bool file_ro = false;
    cct_status st = connect(s, path, flags, &file_ro, err);
    if (st == CCT_EIO && read_only && may_read_immutable(path)) {
        char *uri = immutable_uri(path);
        close_db(s);
        st = uri ? connect(s, uri, flags | SQLITE_OPEN_URI, &file_ro, err)
                 : cct_error_set(err, CCT_ENOMEM, "out of memory opening store %s", path);
        free(uri);
    }
    if (st == CCT_EIO && !file_ro)
        explain_directory(path, read_only, err);
    if (st != CCT_OK) {
        cct_store_close(s);
        return st;
    }
    *out = s;
    return CCT_OK;
}

void cct_store_close(cct_store *store)
{
    if (!store)
        return;
    cct_store_rollback(store);
    close_db(store);
    free(store->path);
    free(store);
}
