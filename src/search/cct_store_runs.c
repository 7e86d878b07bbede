/*
 * cct_store_runs.c - fingerprints and runs in the measurement store (see cct_store.h).
 *
 * A fingerprint is stored once: the UNIQUE constraint over all its columns deduplicates,
 * so a second run on the same box points at the same row and the fitter can group runs by
 * hardware with an integer comparison.  A run is a row whose state moves running ->
 * done|failed; a process killed mid-run leaves it 'running', which is exactly what
 * --resume looks for.  Resuming checks the plan hash so a resumed run never mixes points
 * of two different plans.  n_points is counted from the points table on every read, never
 * stored, so it cannot disagree with what is there after a crash.
 */
#include "cct_store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                             "%s (by %s), this command's plan is %s (the same dimensions and "
                             "options are needed, and a ccltune that plans them alike; or start "
                             "a new run)",
                             (long long)run_id, store->path, run->plan_hash,
                             run->tool[0] ? run->tool : "an unknown tool", plan_hash);
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
