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
    const int shape[] = {ranks, nodes};
    return cct_store_put_run_text(store, run_id,
                                  "INSERT OR REPLACE INTO nccl_logs (run_id, captured, text, "
                                  "ranks, nodes) VALUES (?, ?, ?, ?, ?)",
                                  text, shape, 2, doing, err);
}

cct_status cct_store_get_nccl_log(cct_store *store, int64_t run_id, char **text, cct_error *err)
{
    static const char doing[] = "reading NCCL's model printout";
    if (!store || !text)
        return cct_error_set(err, CCT_EINVAL, "cct_store_get_nccl_log: NULL argument");
    *text = NULL;
    if (store->schema < 3)
        return CCT_OK;
    return cct_store_get_run_text(store, run_id, "SELECT text FROM nccl_logs WHERE run_id = ?",
                                  text, doing, err);
}
