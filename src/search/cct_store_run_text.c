/*
 * cct_store_run_text.c - one text kept verbatim per run: the plumbing that the tables
 * keyed by run_id share (nccl_logs in cct_store_logs.c, link_matrices in
 * cct_store_links.c).
 *
 * Writing checks that the run is stored (CCT_ENOTFOUND otherwise), then replaces the
 * run's row in one write transaction (or inside the open batch); reading returns a copy
 * of the text or NULL when the run has none.  What the text must hold, and from which
 * schema the table exists, stays with each caller.
 */
#include "cct_store_internal.h"

#include <stdlib.h>
#include <string.h>

static cct_status insert(cct_store *s, int64_t run_id, const char *sql, const char *text,
                         const int *ints, size_t n_ints, const char *doing, cct_error *err)
{
    char now[32];
    cct_store_now(now);
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(s, sql, &st, doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
    for (size_t i = 0; i < n_ints; i++)
        sqlite3_bind_int(st, 4 + (int)i, ints[i]);
    int step = sqlite3_step(st);
    if (step != SQLITE_DONE)
        rc = cct_store_db_error(s, step, doing, NULL, err);
    sqlite3_finalize(st);
    return rc;
}

cct_status cct_store_put_run_text(cct_store *s, int64_t run_id, const char *sql, const char *text,
                                  const int *ints, size_t n_ints, const char *doing, cct_error *err)
{
    cct_store_run run;
    cct_status rc = cct_store_get_run(s, run_id, &run, err);
    if (rc != CCT_OK)
        return rc;
    if ((rc = cct_store_begin_write(s, doing, err)) != CCT_OK)
        return rc;
    rc = insert(s, run_id, sql, text, ints, n_ints, doing, err);
    if (rc == CCT_OK)
        return cct_store_commit(s, doing, err);
    cct_store_rollback(s);
    return rc;
}

cct_status cct_store_get_run_text(cct_store *s, int64_t run_id, const char *sql, char **text,
                                  const char *doing, cct_error *err)
{
    *text = NULL;
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(s, sql, &st, doing, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (t && !(*text = strdup((const char *)t)))
            rc = cct_error_set(err, CCT_ENOMEM, "out of memory");
    } else if (step != SQLITE_DONE) {
        rc = cct_store_db_error(s, step, doing, NULL, err);
    }
    sqlite3_finalize(st);
    return rc;
}
