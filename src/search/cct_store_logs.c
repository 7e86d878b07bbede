/*
 * cct_store_logs.c - NCCL's init-time model printout per run in the measurement store
 * (table nccl_logs, schema 3; see cct_store.h and docs/store.md).
 *
 * The search captures what NCCL prints about its own cost model when a communicator of the
 * run's shape is set up (communicator line, topology graphs, latency/bandwidth table); the
 * calibrator reads the topology from it.  The text is kept verbatim so that a later, better
 * parser can read more from the same run.  A store older than schema 3 opened read-only has
 * no nccl_logs table: every run there simply has no log.
 */
#include "cct_store_internal.h"

#include <stdlib.h>
#include <string.h>

cct_status cct_store_put_nccl_log(cct_store *store, int64_t run_id, int ranks, int nodes,
                                  const char *text, cct_error *err)
{
    static const char doing[] = "storing NCCL's model printout";
    if (!store || !text)
        return cct_error_set(err, CCT_EINVAL, "cct_store_put_nccl_log: NULL argument");
    if (!*text || ranks < 1 || nodes < 1)
        return cct_error_set(err, CCT_EINVAL, "store %s: refusing an NCCL log for run %lld with %s",
                             store->path, (long long)run_id,
                             *text ? "ranks or nodes below 1" : "no text (NCCL printed nothing)");
    cct_store_run run;
    cct_status rc = cct_store_get_run(store, run_id, &run, err);
    if (rc != CCT_OK)
        return rc;
    if ((rc = cct_store_begin_write(store, doing, err)) != CCT_OK)
        return rc;
    char now[32];
    cct_store_now(now);
    sqlite3_stmt *st;
    rc =
        cct_store_prepare(store,
                          "INSERT OR REPLACE INTO nccl_logs (run_id, ranks, nodes, captured, text) "
                          "VALUES (?, ?, ?, ?, ?)",
                          &st, doing, err);
    if (rc == CCT_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int(st, 2, ranks);
        sqlite3_bind_int(st, 3, nodes);
        sqlite3_bind_text(st, 4, now, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC);
        int step = sqlite3_step(st);
        if (step != SQLITE_DONE)
            rc = cct_store_db_error(store, step, doing, NULL, err);
        sqlite3_finalize(st);
    }
    if (rc == CCT_OK)
        return cct_store_commit(store, doing, err);
    cct_store_rollback(store);
    return rc;
}

cct_status cct_store_get_nccl_log(cct_store *store, int64_t run_id, char **text, cct_error *err)
{
    static const char doing[] = "reading NCCL's model printout";
    if (!store || !text)
        return cct_error_set(err, CCT_EINVAL, "cct_store_get_nccl_log: NULL argument");
    *text = NULL;
    if (store->schema < 3)
        return CCT_OK;
    sqlite3_stmt *st;
    cct_status rc =
        cct_store_prepare(store, "SELECT text FROM nccl_logs WHERE run_id = ?", &st, doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (t) {
            *text = strdup((const char *)t);
            if (!*text)
                rc = cct_error_set(err, CCT_ENOMEM, "out of memory");
        }
    } else if (step != SQLITE_DONE) {
        rc = cct_store_db_error(store, step, doing, NULL, err);
    }
    sqlite3_finalize(st);
    return rc;
}
