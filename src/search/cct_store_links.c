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

cct_status cct_store_put_links(cct_store *store, int64_t run_id, const char *json, cct_error *err)
{
    static const char doing[] = "storing the link matrix";
    if (!store || !json)
        return cct_error_set(err, CCT_EINVAL, "cct_store_put_links: NULL argument");
    if (!*json)
        return cct_error_set(err, CCT_EINVAL,
                             "store %s: refusing an empty link matrix for run %lld", store->path,
                             (long long)run_id);
    return cct_store_put_run_text(store, run_id,
                                  "INSERT OR REPLACE INTO link_matrices (run_id, stored, json) "
                                  "VALUES (?, ?, ?)",
                                  json, NULL, 0, doing, err);
}

cct_status cct_store_get_links(cct_store *store, int64_t run_id, char **json, cct_error *err)
{
    static const char doing[] = "reading the link matrix";
    if (!store || !json)
        return cct_error_set(err, CCT_EINVAL, "cct_store_get_links: NULL argument");
    *json = NULL;
    if (store->schema < 4)
        return CCT_OK;
    return cct_store_get_run_text(store, run_id, "SELECT json FROM link_matrices WHERE run_id = ?",
                                  json, doing, err);
}
