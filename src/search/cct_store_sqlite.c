/*
 * cct_store_sqlite.c - the SQLite plumbing of the measurement store: mapping SQLite result
 * codes to cct_status with a sentence a user can act on, transactions, bounded text, and
 * the text spellings of enums stored in the database.
 *
 * Error messages always name the store's path and what was being done, and for write
 * failures (disk full, I/O error) say that the transaction was rolled back: SQLite's
 * atomic commit guarantees that whatever was committed before is intact, and users who
 * see "disk full" after hours of measuring want to know exactly that.
 * Enums are stored as text ('allreduce', 'ring', 'simple', 'default') so that people can
 * query the store with sqlite3 without a decoder ring.
 */
#include "cct_store_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static cct_status map_code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return CCT_ENOMEM;
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return CCT_EIO;
    case SQLITE_CONSTRAINT:
        return CCT_EINVAL;
    default:
        return CCT_ESTORE;
    }
}

cct_status cct_store_db_error(cct_store *s, int rc, const char *doing, const char *detail,
                              cct_error *err)
{
    const char *path = s->path ? s->path : "?";
    /* errmsg is often more precise than errstr ("UNIQUE constraint failed: ..."). */
    const char *why = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    char extra[CCT_ERROR_MSG_MAX / 2];
    if (detail && *detail)
        snprintf(extra, sizeof extra, "%s; %s", detail, why);
    else
        snprintf(extra, sizeof extra, "%s", why);
    cct_status code = map_code(rc);
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return cct_error_set(err, code,
                             "store %s: the disk is full (or the store reached its size limit) "
                             "while %s (%s); that transaction was rolled back and everything "
                             "committed before it is intact",
                             path, doing, extra);
    case SQLITE_IOERR:
        return cct_error_set(err, code,
                             "store %s: I/O error while %s (%s); that transaction was rolled "
                             "back and everything committed before it is intact",
                             path, doing, extra);
    case SQLITE_READONLY:
        return cct_error_set(err, code,
                             "store %s is read-only while %s (%s): open it for writing, and "
                             "check that the file and its directory are writable",
                             path, doing, extra);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return cct_error_set(err, code,
                             "store %s: %s failed (%s): check that its directory exists and "
                             "that the file, its directory and the -wal/-shm files beside it "
                             "are accessible",
                             path, doing, extra);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return cct_error_set(err, code,
                             "store %s is locked by another process while %s (waited %d ms; %s)",
                             path, doing, CCT_STORE_BUSY_TIMEOUT_MS, extra);
    case SQLITE_NOTADB:
        return cct_error_set(err, code, "%s is not a ccltune store (not an SQLite database: %s)",
                             path, extra);
    case SQLITE_CORRUPT:
        return cct_error_set(err, code,
                             "store %s is damaged while %s (%s); run `sqlite3 %s "
                             "'PRAGMA integrity_check'` and restore it from a backup",
                             path, doing, extra, path);
    default:
        return cct_error_set(err, code, "store %s: %s failed (%s)", path, doing, extra);
    }
}

cct_status cct_store_exec(cct_store *s, const char *sql, const char *doing, cct_error *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return cct_store_db_error(s, rc, doing, NULL, err);
    return CCT_OK;
}

cct_status cct_store_prepare(cct_store *s, const char *sql, sqlite3_stmt **st, const char *doing,
                             cct_error *err)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return cct_store_db_error(s, rc, doing, NULL, err);
    }
    return CCT_OK;
}

cct_status cct_store_begin_write(cct_store *s, const char *doing, cct_error *err)
{
    if (s->read_only)
        return cct_error_set(err, CCT_EIO,
                             "store %s was opened read-only, so %s is not possible (open it "
                             "for writing)",
                             s->path, doing);
    if (s->batch == CCT_BATCH_OPEN)
        return CCT_OK;
    if (s->batch == CCT_BATCH_FAILED)
        return cct_error_set(err, CCT_EIO,
                             "store %s: %s is not possible: an earlier write of the same batch "
                             "failed, and the batch was rolled back",
                             s->path, doing);
    return cct_store_exec(s, "BEGIN IMMEDIATE", doing, err);
}

cct_status cct_store_begin_read(cct_store *s, const char *doing, cct_error *err)
{
    if (s->batch != CCT_BATCH_NONE)
        return CCT_OK;
    return cct_store_exec(s, "BEGIN", doing, err);
}

cct_status cct_store_commit(cct_store *s, const char *doing, cct_error *err)
{
    if (s->batch != CCT_BATCH_NONE)
        return CCT_OK; /* the batch's end commits */
    cct_status st = cct_store_exec(s, "COMMIT", doing, err);
    if (st != CCT_OK)
        cct_store_rollback(s);
    return st;
}

void cct_store_rollback(cct_store *s)
{
    if (s->batch == CCT_BATCH_OPEN)
        s->batch = CCT_BATCH_FAILED;
    if (s->db && !sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void cct_store_end_read(cct_store *s)
{
    if (s->batch == CCT_BATCH_NONE)
        cct_store_rollback(s);
}

cct_status cct_store_begin_batch(cct_store *store, cct_error *err)
{
    if (!store)
        return cct_error_set(err, CCT_EINVAL, "cct_store_begin_batch: NULL argument");
    if (store->batch != CCT_BATCH_NONE)
        return cct_error_set(err, CCT_EINVAL, "store %s: a batch is already open", store->path);
    cct_status st = cct_store_begin_write(store, "starting a batch of writes", err);
    if (st == CCT_OK)
        store->batch = CCT_BATCH_OPEN;
    return st;
}

cct_status cct_store_end_batch(cct_store *store, bool commit, cct_error *err)
{
    if (!store || store->batch == CCT_BATCH_NONE)
        return cct_error_set(err, CCT_EINVAL, "cct_store_end_batch: no batch is open");
    int state = store->batch;
    store->batch = CCT_BATCH_NONE;
    if (state == CCT_BATCH_FAILED) {
        cct_store_rollback(store);
        return commit ? cct_error_set(err, CCT_EIO,
                                      "store %s: a write of the batch failed; the batch was "
                                      "rolled back",
                                      store->path)
                      : CCT_OK;
    }
    if (!commit) {
        cct_store_rollback(store);
        return CCT_OK;
    }
    return cct_store_commit(store, "committing a batch of writes", err);
}

cct_status cct_store_end_batch_with(cct_store *store, cct_status writes, cct_error *err)
{
    cct_error undo;
    cct_status st = cct_store_end_batch(store, writes == CCT_OK, writes == CCT_OK ? err : &undo);
    return writes == CCT_OK ? st : writes;
}

int cct_store_bind_text(sqlite3_stmt *st, int idx, const char *text, size_t cap)
{
    if (!text)
        return sqlite3_bind_text(st, idx, "", 0, SQLITE_STATIC);
    return sqlite3_bind_text(st, idx, text, (int)strnlen(text, cap), SQLITE_TRANSIENT);
}

void cct_store_column_text(sqlite3_stmt *st, int col, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

void cct_store_now(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *cct_store_algo_text(int algo)
{
    if (algo == CCT_DEFAULT)
        return "default";
    if (algo == CCT_TUNED)
        return "tuned";
    return (algo >= 0 && algo < CCT_NUM_ALGOS) ? cct_algo_name(algo) : NULL;
}

const char *cct_store_proto_text(int proto)
{
    if (proto == CCT_DEFAULT)
        return "default";
    if (proto == CCT_TUNED)
        return "tuned";
    return (proto >= 0 && proto < CCT_NUM_PROTOS) ? cct_proto_name(proto) : NULL;
}

bool cct_store_algo_value(const char *text, int *algo)
{
    if (text && strcmp(text, "default") == 0) {
        *algo = CCT_DEFAULT;
        return true;
    }
    if (text && strcmp(text, "tuned") == 0) {
        *algo = CCT_TUNED;
        return true;
    }
    *algo = cct_algo_from_name(text);
    return *algo >= 0;
}

bool cct_store_proto_value(const char *text, int *proto)
{
    if (text && strcmp(text, "default") == 0) {
        *proto = CCT_DEFAULT;
        return true;
    }
    if (text && strcmp(text, "tuned") == 0) {
        *proto = CCT_TUNED;
        return true;
    }
    *proto = cct_proto_from_name(text);
    return *proto >= 0;
}

static const char *const status_texts[] = {"ok", "corrupt", "hang", "unsupported", "error"};
static const char *const state_texts[] = {"running", "done", "failed"};

static int index_in(const char *const *names, int n, const char *text)
{
    for (int i = 0; text && i < n; i++)
        if (strcmp(names[i], text) == 0)
            return i;
    return -1;
}

const char *cct_store_status_text(int status)
{
    return (status >= 0 && status <= CCT_POINT_ERROR) ? status_texts[status] : NULL;
}

int cct_store_status_value(const char *text)
{
    return index_in(status_texts, CCT_POINT_ERROR + 1, text);
}

const char *cct_store_state_text(int state)
{
    return (state >= 0 && state <= CCT_RUN_FAILED) ? state_texts[state] : NULL;
}

int cct_store_state_value(const char *text)
{
    return index_in(state_texts, CCT_RUN_FAILED + 1, text);
}
