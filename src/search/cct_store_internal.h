/*
 * cct_store_internal.h - what the files of the measurement store share and nothing else
 * may rely on: the handle's layout and the SQLite plumbing (error mapping, transactions,
 * bounded text binding, enum <-> text names).
 *
 * The store is split by concern: cct_store.c (open/close), cct_store_runs.c
 * (fingerprints, runs), cct_store_schema.c (recognising, creating, migrating the file),
 * cct_store_points.c (adding and finding points), cct_store_load.c (reading them back),
 * cct_store_run_text.c (a text kept per run: NCCL logs, link matrices) and
 * cct_store_sqlite.c (the plumbing below).
 * Tests include this header to reach the sqlite3 handle for fault injection
 * (PRAGMA max_page_count); production code goes through cct_store.h only.
 *
 * Ownership: the handle owns db and path; both are released by cct_store_close().
 */
#ifndef CCT_STORE_INTERNAL_H
#define CCT_STORE_INTERNAL_H

#include <sqlite3.h>

#include "cct_store.h"

/* PRAGMA application_id of every ccltune store: "cclt" in ASCII.  It lets the store be
 * recognised from its header alone, even when a newer schema has reshaped the tables. */
#define CCT_STORE_APPLICATION_ID 0x63636c74

/* Milliseconds a statement waits for another process's lock before giving up. */
#define CCT_STORE_BUSY_TIMEOUT_MS 10000

/* A batch (cct_store_begin_batch) turns the writes inside it into one transaction. */
enum { CCT_BATCH_NONE = 0, CCT_BATCH_OPEN = 1, CCT_BATCH_FAILED = 2 /* rolled back */ };

struct cct_store {
    sqlite3 *db;
    char *path;
    bool read_only;
    int schema; /* PRAGMA user_version once attached: a read-only older store stays as is */
    int batch;  /* CCT_BATCH_* */
};

/* Turn a failed SQLite call into a cct_status and one sentence naming the store's path and
 * what was being done ("adding a point"); detail (may be NULL) is appended in parentheses.
 * Reads sqlite3_errmsg, so call it before anything else touches the connection. */
cct_status cct_store_db_error(cct_store *s, int rc, const char *doing, const char *detail,
                              cct_error *err);

/* Whether path names a gzip-compressed store (ends in .gz). */
bool cct_store_is_gz(const char *path);

/* Open s->path, a gzipped store, as a read-only in-memory database into s->db
 * (cct_store_gz.c); the caller configures the connection and attaches the schema. */
cct_status cct_store_gz_connect(cct_store *s, cct_error *err);

/* Run SQL without results (DDL, PRAGMA, BEGIN/COMMIT). */
cct_status cct_store_exec(cct_store *s, const char *sql, const char *doing, cct_error *err);
cct_status cct_store_prepare(cct_store *s, const char *sql, sqlite3_stmt **st, const char *doing,
                             cct_error *err);

/* Write transactions take the lock up front (BEGIN IMMEDIATE) so that waiting for another
 * writer happens here, under busy_timeout, never half way through.  Reads use a deferred
 * BEGIN to see one consistent snapshot across several statements.  Inside a batch these
 * open nothing (the batch's transaction is open) and commit nothing; a rollback there rolls
 * the whole batch back, and the batch's later writes fail. */
cct_status cct_store_begin_write(cct_store *s, const char *doing, cct_error *err);
cct_status cct_store_begin_read(cct_store *s, const char *doing, cct_error *err);
cct_status cct_store_commit(cct_store *s, const char *doing, cct_error *err);
/* Roll back if a transaction is open (SQLite may already have rolled back on FULL/IOERR). */
void cct_store_rollback(cct_store *s);
/* End a read transaction begun by cct_store_begin_read (nothing inside a batch). */
void cct_store_end_read(cct_store *s);

/* Bind at most cap bytes of a caller's fixed-size char array (need not be terminated). */
int cct_store_bind_text(sqlite3_stmt *st, int idx, const char *text, size_t cap);
/* Copy column col into dst[cap], truncated and terminated; NULL becomes "". */
void cct_store_column_text(sqlite3_stmt *st, int col, char *dst, size_t cap);

/* One text per run (cct_store_run_text.c).  Put: CCT_ENOTFOUND unless run_id is stored,
 * then sql (an INSERT OR REPLACE) runs in a write transaction with ?1 = run_id, ?2 = the
 * current time, ?3 = text (not copied: it must outlive the call) and ?4... = ints[0..n_ints).
 * Get: sql selects the text with ?1 = run_id; *text is a malloc'ed copy the caller frees,
 * or NULL when the run has no row or a NULL text. */
cct_status cct_store_put_run_text(cct_store *s, int64_t run_id, const char *sql, const char *text,
                                  const int *ints, size_t n_ints, const char *doing,
                                  cct_error *err);
cct_status cct_store_get_run_text(cct_store *s, int64_t run_id, const char *sql, char **text,
                                  const char *doing, cct_error *err);

/* Current UTC time as "2026-11-29T14:00:00Z". */
void cct_store_now(char out[32]);

/* Names stored for enums: cct_algo_name/cct_proto_name plus "default" for CCT_DEFAULT.
 * NULL when the value cannot be stored.  The reverse returns false on unknown text. */
const char *cct_store_algo_text(int algo);
const char *cct_store_proto_text(int proto);
bool cct_store_algo_value(const char *text, int *algo);
bool cct_store_proto_value(const char *text, int *proto);
const char *cct_store_status_text(int status);
int cct_store_status_value(const char *text); /* -1 when unknown */
const char *cct_store_state_text(int state);
int cct_store_state_value(const char *text); /* -1 when unknown */

/* Point columns in the order the loader decodes them (cct_store_load.c). */
#define CCT_STORE_POINT_COLUMNS                                                                    \
    "run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize, align, "          \
    "ranks, nodes, dtype, bytes, in_place, status, wrong_elements, noisy, nccl_algo, "             \
    "nccl_proto, n_samples, median_us, p95_us, min_us, max_us, mean_us, cv, pipe_ops, "            \
    "reg_buff, tuner_pipe_ops, tuner_reg_buff, tuner_bytes, chunk, chunk_used, chunk_source"
/* The same from a version 2 or 3 store (opened read-only, so not migrated): NCCL's own chunk. */
#define CCT_STORE_POINT_COLUMNS_V3                                                                 \
    "run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize, align, "          \
    "ranks, nodes, dtype, bytes, in_place, status, wrong_elements, noisy, nccl_algo, "             \
    "nccl_proto, n_samples, median_us, p95_us, min_us, max_us, mean_us, cv, pipe_ops, "            \
    "reg_buff, tuner_pipe_ops, tuner_reg_buff, tuner_bytes, 0, NULL, NULL"
/* The same columns from a version 1 store (opened read-only, so not migrated): every point
 * there is a plain call, and what NCCL passed its tuner is unknown. */
#define CCT_STORE_POINT_COLUMNS_V1                                                                 \
    "run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize, align, "          \
    "ranks, nodes, dtype, bytes, in_place, status, wrong_elements, noisy, nccl_algo, "             \
    "nccl_proto, n_samples, median_us, p95_us, min_us, max_us, mean_us, cv, 1, 0, NULL, NULL, "    \
    "NULL, 0, NULL, NULL"

/* "allreduce ring/simple, 4 channels, ... 1048576 B out-of-place" for messages: names every
 * dimension a user could have mistyped.  Returns buf. */
const char *cct_store_describe_point(const cct_config *c, uint64_t bytes, bool in_place, char *buf,
                                     size_t len);
/* Id of the point with this key: CCT_OK with *id = 0 when it is not stored; CCT_EINVAL for
 * a key the store could never hold. */
cct_status cct_store_find_point(cct_store *s, int64_t run_id, const cct_config *cfg, uint64_t bytes,
                                bool in_place, int64_t *id, const char *doing, cct_error *err);

/* Recognise the opened file as a ccltune store, create the schema in an empty file, and
 * switch a writable store to WAL.  Never modifies a file it does not recognise. */
cct_status cct_store_schema_attach(cct_store *s, cct_error *err);

#endif
