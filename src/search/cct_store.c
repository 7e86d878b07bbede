/*
 * cct_store.c - opening and closing the measurement store, and its fingerprints and runs
 * (see cct_store.h; points and samples live in cct_store_points.c).
 *
 * Opening configures the connection for crash safety before anything is written: WAL
 * journal (set by the schema code once the file is recognised), synchronous = FULL so a
 * commit that returned survives power loss too, foreign keys on, and a busy timeout so a
 * reader (sqlite3 in another terminal) never makes the search fail.  SQLite silently falls
 * back to read-only when the file is not writable; a store opened for writing checks for
 * that and refuses at once, rather than failing hours later on the first point.
 * A run is a row whose state moves running -> done|failed; a process killed mid-run leaves
 * it 'running', which is exactly what --resume looks for.
 */
#include "cct_store_internal.h"

#include <stdio.h>
#include <stdlib.h>
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
    cct_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return cct_error_set(err, CCT_ENOMEM, "out of memory opening store %s", path);
    }
    s->read_only = read_only;
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

/* ---- fingerprints ---- */

#define FP_COLUMNS                                                                                 \
    "gpu, cc, gpus_per_node, nodes, ranks_per_gpu, links, nccl, cuda, host, ll128_allowed, "       \
    "ll128_reason"

static int bind_fingerprint(sqlite3_stmt *st, const cct_store_fingerprint *fp)
{
    int rc = SQLITE_OK;
    int i = 1;
    rc |= cct_store_bind_text(st, i++, fp->gpu, sizeof fp->gpu);
    rc |= sqlite3_bind_int(st, i++, fp->cc);
    rc |= sqlite3_bind_int(st, i++, fp->gpus_per_node);
    rc |= sqlite3_bind_int(st, i++, fp->nodes);
    rc |= sqlite3_bind_int(st, i++, fp->ranks_per_gpu);
    rc |= cct_store_bind_text(st, i++, fp->links, sizeof fp->links);
    rc |= cct_store_bind_text(st, i++, fp->nccl, sizeof fp->nccl);
    rc |= cct_store_bind_text(st, i++, fp->cuda, sizeof fp->cuda);
    rc |= cct_store_bind_text(st, i++, fp->host, sizeof fp->host);
    rc |= sqlite3_bind_int(st, i++, fp->ll128_allowed ? 1 : 0);
    rc |= cct_store_bind_text(st, i++, fp->ll128_reason, sizeof fp->ll128_reason);
    return rc;
}

cct_status cct_store_put_fingerprint(cct_store *store, const cct_store_fingerprint *fp, int64_t *id,
                                     cct_error *err)
{
    static const char doing[] = "registering a fingerprint";
    if (!store || !fp || !id)
        return cct_error_set(err, CCT_EINVAL, "cct_store_put_fingerprint: NULL argument");
    cct_status rc = cct_store_begin_write(store, doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_stmt *ins = NULL, *sel = NULL;
    /* The UNIQUE constraint over every column deduplicates; the SELECT finds the row
     * whether it was just inserted or already there. */
    rc = cct_store_prepare(store,
                           "INSERT OR IGNORE INTO fingerprints (" FP_COLUMNS ") VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           &ins, doing, err);
    if (rc == CCT_OK)
        rc = cct_store_prepare(
            store,
            "SELECT id FROM fingerprints WHERE gpu = ? AND cc = ? AND gpus_per_node = ? AND "
            "nodes = ? AND ranks_per_gpu = ? AND links = ? AND nccl = ? AND cuda = ? AND "
            "host = ? AND ll128_allowed = ? AND ll128_reason = ?",
            &sel, doing, err);
    int step = SQLITE_OK;
    if (rc == CCT_OK && (step = bind_fingerprint(ins, fp)) == SQLITE_OK &&
        (step = sqlite3_step(ins)) == SQLITE_DONE &&
        (step = bind_fingerprint(sel, fp)) == SQLITE_OK)
        step = sqlite3_step(sel);
    if (rc == CCT_OK && step == SQLITE_ROW)
        *id = sqlite3_column_int64(sel, 0);
    else if (rc == CCT_OK)
        rc = cct_store_db_error(store, step, doing, NULL, err);
    sqlite3_finalize(ins);
    sqlite3_finalize(sel);
    if (rc == CCT_OK)
        return cct_store_commit(store, doing, err);
    cct_store_rollback(store);
    return rc;
}

cct_status cct_store_get_fingerprint(cct_store *store, int64_t id, cct_store_fingerprint *fp,
                                     cct_error *err)
{
    static const char doing[] = "reading a fingerprint";
    if (!store || !fp)
        return cct_error_set(err, CCT_EINVAL, "cct_store_get_fingerprint: NULL argument");
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(store, "SELECT " FP_COLUMNS " FROM fingerprints WHERE id = ?",
                                      &st, doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        memset(fp, 0, sizeof *fp);
        int i = 0;
        cct_store_column_text(st, i++, fp->gpu, sizeof fp->gpu);
        fp->cc = sqlite3_column_int(st, i++);
        fp->gpus_per_node = sqlite3_column_int(st, i++);
        fp->nodes = sqlite3_column_int(st, i++);
        fp->ranks_per_gpu = sqlite3_column_int(st, i++);
        cct_store_column_text(st, i++, fp->links, sizeof fp->links);
        cct_store_column_text(st, i++, fp->nccl, sizeof fp->nccl);
        cct_store_column_text(st, i++, fp->cuda, sizeof fp->cuda);
        cct_store_column_text(st, i++, fp->host, sizeof fp->host);
        fp->ll128_allowed = sqlite3_column_int(st, i++) != 0;
        cct_store_column_text(st, i++, fp->ll128_reason, sizeof fp->ll128_reason);
    } else if (step == SQLITE_DONE) {
        rc = cct_error_set(err, CCT_ENOTFOUND, "store %s has no fingerprint %lld", store->path,
                           (long long)id);
    } else {
        rc = cct_store_db_error(store, step, doing, NULL, err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- runs ---- */

#define RUN_SELECT                                                                                 \
    "SELECT r.id, r.fingerprint_id, r.started, r.finished, r.state, r.tool, r.source, "            \
    "r.plan_hash, r.command, (SELECT count(*) FROM points AS p WHERE p.run_id = r.id) "            \
    "FROM runs AS r"

static cct_status read_run(cct_store *s, sqlite3_stmt *st, cct_store_run *run, cct_error *err)
{
    memset(run, 0, sizeof *run);
    run->id = sqlite3_column_int64(st, 0);
    run->fingerprint_id = sqlite3_column_int64(st, 1);
    cct_store_column_text(st, 2, run->started, sizeof run->started);
    cct_store_column_text(st, 3, run->finished, sizeof run->finished);
    const char *state = (const char *)sqlite3_column_text(st, 4);
    run->state = cct_store_state_value(state);
    cct_store_column_text(st, 5, run->tool, sizeof run->tool);
    cct_store_column_text(st, 6, run->source, sizeof run->source);
    cct_store_column_text(st, 7, run->plan_hash, sizeof run->plan_hash);
    cct_store_column_text(st, 8, run->command, sizeof run->command);
    run->n_points = sqlite3_column_int64(st, 9);
    if (run->state < 0)
        return cct_error_set(err, CCT_ESTORE, "store %s: run %lld has an unknown state '%s'",
                             s->path, (long long)run->id, state ? state : "(null)");
    return CCT_OK;
}

cct_status cct_store_begin_run(cct_store *store, cct_store_run *run, cct_error *err)
{
    static const char doing[] = "starting a run";
    if (!store || !run)
        return cct_error_set(err, CCT_EINVAL, "cct_store_begin_run: NULL argument");
    cct_status rc = cct_store_begin_write(store, doing, err);
    if (rc != CCT_OK)
        return rc;
    char now[32];
    cct_store_now(now);
    sqlite3_stmt *st;
    rc = cct_store_prepare(store,
                           "INSERT INTO runs (fingerprint_id, started, finished, state, tool, "
                           "source, plan_hash, command) VALUES (?, ?, NULL, 'running', ?, ?, ?, ?)",
                           &st, doing, err);
    if (rc != CCT_OK) {
        cct_store_rollback(store);
        return rc;
    }
    sqlite3_bind_int64(st, 1, run->fingerprint_id);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    cct_store_bind_text(st, 3, run->tool, sizeof run->tool);
    cct_store_bind_text(st, 4, run->source, sizeof run->source);
    cct_store_bind_text(st, 5, run->plan_hash, sizeof run->plan_hash);
    cct_store_bind_text(st, 6, run->command, sizeof run->command);
    int step = sqlite3_step(st);
    if (step == SQLITE_CONSTRAINT_FOREIGNKEY)
        rc = cct_error_set(err, CCT_ENOTFOUND, "store %s has no fingerprint %lld for the new run",
                           store->path, (long long)run->fingerprint_id);
    else if (step != SQLITE_DONE)
        rc = cct_store_db_error(store, step, doing, NULL, err);
    int64_t id = sqlite3_last_insert_rowid(store->db);
    sqlite3_finalize(st);
    if (rc == CCT_OK)
        rc = cct_store_commit(store, doing, err);
    else
        cct_store_rollback(store);
    if (rc != CCT_OK)
        return rc;
    run->id = id;
    memcpy(run->started, now, sizeof run->started);
    run->finished[0] = '\0';
    run->state = CCT_RUN_RUNNING;
    run->n_points = 0;
    return CCT_OK;
}

cct_status cct_store_get_run(cct_store *store, int64_t run_id, cct_store_run *run, cct_error *err)
{
    static const char doing[] = "reading a run";
    if (!store || !run)
        return cct_error_set(err, CCT_EINVAL, "cct_store_get_run: NULL argument");
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(store, RUN_SELECT " WHERE r.id = ?", &st, doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW)
        rc = read_run(store, st, run, err);
    else if (step == SQLITE_DONE)
        rc = cct_error_set(err, CCT_ENOTFOUND, "store %s has no run %lld", store->path,
                           (long long)run_id);
    else
        rc = cct_store_db_error(store, step, doing, NULL, err);
    sqlite3_finalize(st);
    return rc;
}

/* Set a run's state and finished time (NULL reopens it); CCT_ENOTFOUND if it is absent. */
static cct_status set_run_state(cct_store *store, int64_t run_id, int state, bool finished,
                                const char *doing, cct_error *err)
{
    cct_status rc = cct_store_begin_write(store, doing, err);
    if (rc != CCT_OK)
        return rc;
    char now[32];
    cct_store_now(now);
    sqlite3_stmt *st;
    rc = cct_store_prepare(store, "UPDATE runs SET state = ?, finished = ? WHERE id = ?", &st,
                           doing, err);
    if (rc == CCT_OK) {
        sqlite3_bind_text(st, 1, cct_store_state_text(state), -1, SQLITE_STATIC);
        if (finished)
            sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(st, 2);
        sqlite3_bind_int64(st, 3, run_id);
        int step = sqlite3_step(st);
        if (step != SQLITE_DONE)
            rc = cct_store_db_error(store, step, doing, NULL, err);
        else if (sqlite3_changes(store->db) == 0)
            rc = cct_error_set(err, CCT_ENOTFOUND, "store %s has no run %lld", store->path,
                               (long long)run_id);
        sqlite3_finalize(st);
    }
    if (rc == CCT_OK)
        return cct_store_commit(store, doing, err);
    cct_store_rollback(store);
    return rc;
}

cct_status cct_store_finish_run(cct_store *store, int64_t run_id, int state, cct_error *err)
{
    if (!store)
        return cct_error_set(err, CCT_EINVAL, "cct_store_finish_run: NULL store");
    if (state != CCT_RUN_DONE && state != CCT_RUN_FAILED)
        return cct_error_set(err, CCT_EINVAL,
                             "a run can only finish as done or failed (state %d); use "
                             "cct_store_resume_run to reopen it",
                             state);
    return set_run_state(store, run_id, state, true, "finishing a run", err);
}

cct_status cct_store_resume_run(cct_store *store, int64_t run_id, const char *plan_hash,
                                cct_store_run *run, cct_error *err)
{
    if (!store || !plan_hash || !run)
        return cct_error_set(err, CCT_EINVAL, "cct_store_resume_run: NULL argument");
    cct_status rc = cct_store_get_run(store, run_id, run, err);
    if (rc != CCT_OK)
        return rc;
    if (strcmp(run->plan_hash, plan_hash) != 0)
        return cct_error_set(err, CCT_EINVAL,
                             "cannot resume run %lld of store %s: it was measured with plan "
                             "%s, this command's plan is %s (same dimensions and options "
                             "needed; or start a new run)",
                             (long long)run_id, store->path, run->plan_hash, plan_hash);
    if (run->state != CCT_RUN_RUNNING &&
        (rc = set_run_state(store, run_id, CCT_RUN_RUNNING, false, "resuming a run", err)))
        return rc;
    return cct_store_get_run(store, run_id, run, err);
}

cct_status cct_store_list_runs(cct_store *store, cct_store_run **runs, size_t *n, cct_error *err)
{
    static const char doing[] = "listing runs";
    if (!store || !runs || !n)
        return cct_error_set(err, CCT_EINVAL, "cct_store_list_runs: NULL argument");
    *runs = NULL;
    *n = 0;
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(store, RUN_SELECT " ORDER BY r.id", &st, doing, err);
    if (rc != CCT_OK)
        return rc;
    cct_store_run *arr = NULL;
    size_t len = 0, cap = 0;
    int step;
    while (rc == CCT_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            cct_store_run *grown = realloc(arr, ncap * sizeof *arr);
            if (!grown) {
                rc =
                    cct_error_set(err, CCT_ENOMEM, "out of memory listing runs of %s", store->path);
                break;
            }
            arr = grown;
            cap = ncap;
        }
        rc = read_run(store, st, &arr[len++], err);
    }
    if (rc == CCT_OK && step != SQLITE_DONE)
        rc = cct_store_db_error(store, step, doing, NULL, err);
    sqlite3_finalize(st);
    if (rc != CCT_OK) {
        free(arr);
        return rc;
    }
    *runs = arr;
    *n = len;
    return CCT_OK;
}
