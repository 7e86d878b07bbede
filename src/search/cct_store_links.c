/*
 * cct_store_links.c - the measured link matrix per run in the measurement store (table
 * link_matrices, schema 4; see cct_store.h and docs/store.md).
 *
 * A search on a GPU measures the links once before its first session (`ccltune probe
 * --links`), or takes a matrix recorded elsewhere with --links-from; the JSON object is
 * kept verbatim, so `ccltune fit` and `explain` read the same figures the probe printed and
 * a later reader can use fields this one ignores.  The store does not parse it: the search
 * checks it (cct_links_parse) before it is put.  A store older than schema 4 opened
 * read-only has no link_matrices table: every run there simply has no matrix.
 */
#include "cct_store_internal.h"

#include <stdlib.h>
#include <string.h>

cct_status cct_store_put_links(cct_store *store, int64_t run_id, const char *json, cct_error *err)
{
    static const char doing[] = "storing the link matrix";
    if (!store || !json)
        return cct_error_set(err, CCT_EINVAL, "cct_store_put_links: NULL argument");
    if (!*json)
        return cct_error_set(err, CCT_EINVAL,
                             "store %s: refusing an empty link matrix for run %lld", store->path,
                             (long long)run_id);
    cct_store_run run;
    cct_status rc = cct_store_get_run(store, run_id, &run, err);
    if (rc != CCT_OK)
        return rc;
    if ((rc = cct_store_begin_write(store, doing, err)) != CCT_OK)
        return rc;
    char now[32];
    cct_store_now(now);
    sqlite3_stmt *st;
    rc = cct_store_prepare(store,
                           "INSERT OR REPLACE INTO link_matrices (run_id, stored, json) "
                           "VALUES (?, ?, ?)",
                           &st, doing, err);
    if (rc == CCT_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, json, -1, SQLITE_STATIC);
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

cct_status cct_store_get_links(cct_store *store, int64_t run_id, char **json, cct_error *err)
{
    static const char doing[] = "reading the link matrix";
    if (!store || !json)
        return cct_error_set(err, CCT_EINVAL, "cct_store_get_links: NULL argument");
    *json = NULL;
    if (store->schema < 4)
        return CCT_OK;
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(store, "SELECT json FROM link_matrices WHERE run_id = ?", &st,
                                      doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (t && !(*json = strdup((const char *)t)))
            rc = cct_error_set(err, CCT_ENOMEM, "out of memory");
    } else if (step != SQLITE_DONE) {
        rc = cct_store_db_error(store, step, doing, NULL, err);
    }
    sqlite3_finalize(st);
    return rc;
}
