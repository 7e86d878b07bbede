/*
 * cct_store.h - the measurement store: a SQLite database (measurements.db by default)
 * holding runs, hardware fingerprints, measured points and their raw samples.
 *
 * Crash safety is the point of this module.  Every point is committed in its own
 * transaction together with its samples, as soon as it is measured, in WAL mode with
 * synchronous=FULL: `kill -9` at any moment loses at most the point being measured, never
 * a committed one, and never leaves half a point.  A run records the hash of its plan so
 * `--resume RUN` can refuse to continue with a different plan, and the UNIQUE key of a
 * point (run, configuration, size, in-place) makes re-measuring a stored point impossible.
 * The schema is versioned (PRAGMA user_version); a store from a newer ccltune is refused
 * with a clear error instead of being modified.  docs/store.md documents the schema for
 * users who query it with sqlite3.
 *
 * Ownership: cct_store_open() returns a handle owned by the caller, released by
 * cct_store_close().  Arrays returned by the load functions are owned by the caller and
 * released with free().  A handle is used from one thread at a time.
 */
#ifndef CCT_STORE_H
#define CCT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_measure.h"

/* 2: call modes (pipe_ops, reg_buff, tuner_*); 3: nccl_logs (NCCL's model printout per run);
 * 4: link_matrices (the measured link matrix per run); 5: chunk sizes (chunk, chunk_used,
 * chunk_source) */
#define CCT_STORE_SCHEMA_VERSION 5

typedef struct cct_store cct_store;

/* What a run was measured on; stored once per distinct fingerprint. */
typedef struct cct_store_fingerprint {
    char gpu[128]; /* "NVIDIA H200" */
    int cc;        /* 90 */
    int gpus_per_node;
    int nodes;
    int ranks_per_gpu; /* > 1: rank processes shared a GPU (MPS + per-rank NCCL_HOSTID) */
    char links[32];    /* nvlink | pcie | net | socket */
    char nccl[32];     /* "2.28.9" */
    char cuda[32];     /* driver version, "13.0" */
    char host[128];
    bool ll128_allowed;
    char ll128_reason[256];
} cct_store_fingerprint;

typedef enum cct_run_state {
    CCT_RUN_RUNNING = 0, /* started and not finished: interrupted if its process is gone */
    CCT_RUN_DONE = 1,
    CCT_RUN_FAILED = 2
} cct_run_state;

typedef struct cct_store_run {
    int64_t id;
    int64_t fingerprint_id;
    char started[32];   /* ISO 8601 UTC */
    char finished[32];  /* "" while running */
    int state;          /* cct_run_state */
    char tool[64];      /* "ccltune 0.1.0" */
    char source[32];    /* "search", "nccl-tests", "csv" */
    char plan_hash[65]; /* hex digest of the plan; resume requires equality */
    char command[1024]; /* the command line, for the record */
    int64_t n_points;
} cct_store_run;

/* Open (creating if needed) the store at path.  Refuses a newer schema (CCT_EUNSUPPORTED)
 * and files that are not ccltune stores (CCT_ESTORE), naming the path in err. */
cct_status cct_store_open(const char *path, bool read_only, cct_store **out, cct_error *err);
void cct_store_close(cct_store *store);

/* Group every write that follows, up to cct_store_end_batch, into one transaction: they
 * reach the file together or not at all, also after kill -9 (an import that fails half
 * way leaves the store as it was).  A write that fails inside the batch rolls the whole
 * batch back; the batch's later writes then fail, and ending it with commit says so.
 * One batch at a time (CCT_EINVAL for a second); reads inside it see its writes. */
cct_status cct_store_begin_batch(cct_store *store, cct_error *err);
/* commit: make the batch's writes durable (CCT_OK only if all of them are); false: undo
 * them.  CCT_EINVAL when no batch is open. */
cct_status cct_store_end_batch(cct_store *store, bool commit, cct_error *err);
/* End the batch by the outcome of its writes: commit when writes is CCT_OK and return the
 * commit's status; otherwise undo them and return writes, leaving err (which holds the
 * failed write's message) as it is. */
cct_status cct_store_end_batch_with(cct_store *store, cct_status writes, cct_error *err);

/* Register a fingerprint (deduplicated) and return its id. */
cct_status cct_store_put_fingerprint(cct_store *store, const cct_store_fingerprint *fp, int64_t *id,
                                     cct_error *err);
cct_status cct_store_get_fingerprint(cct_store *store, int64_t id, cct_store_fingerprint *fp,
                                     cct_error *err);

/* Start a run: fills run->id and run->started; state RUNNING.  The caller fills
 * fingerprint_id (CCT_ENOTFOUND if not registered), tool, source, plan_hash and command. */
cct_status cct_store_begin_run(cct_store *store, cct_store_run *run, cct_error *err);
/* A run whose process was killed stays RUNNING; n_points counts what it committed. */
cct_status cct_store_get_run(cct_store *store, int64_t run_id, cct_store_run *run, cct_error *err);
/* state is CCT_RUN_DONE or CCT_RUN_FAILED (CCT_EINVAL otherwise); CCT_ENOTFOUND if absent. */
cct_status cct_store_finish_run(cct_store *store, int64_t run_id, int state, cct_error *err);
/* Continue run_id (--resume): CCT_EINVAL naming both hashes if plan_hash differs from the
 * run's; a done or failed run is set RUNNING again (finished cleared).  Fills *run, whose
 * n_points says how much is already stored; skip those points with cct_store_has_point. */
cct_status cct_store_resume_run(cct_store *store, int64_t run_id, const char *plan_hash,
                                cct_store_run *run, cct_error *err);
/* All runs, oldest first.  *runs is malloc'ed; free() it. */
cct_status cct_store_list_runs(cct_store *store, cct_store_run **runs, size_t *n, cct_error *err);

/* Commit one point and its raw samples (per-cycle times in microseconds) atomically.
 * CCT_EINVAL if the same (run, config, bytes, in_place) is already stored, if a value
 * cannot be stored faithfully (an enum out of range, a byte count above INT64_MAX, a
 * non-finite sample) or if the run is DONE (resume it first); CCT_ENOTFOUND if the
 * run does not exist.  n_samples may differ from point->stats.n (an importer may have
 * statistics without raw samples); samples_us may be NULL when n_samples is 0.
 * Statistics that are NaN are stored as NULL and load back as NaN. */
cct_status cct_store_add_point(cct_store *store, int64_t run_id, const cct_point *point,
                               const double *samples_us, size_t n_samples, cct_error *err);
/* The checks cct_store_add_point makes before writing, without a store: whether the point
 * and its samples can be stored faithfully (CCT_EINVAL naming what cannot).  path names the
 * store in the message.  `import --dry-run` runs it on every point. */
cct_status cct_store_check_point(const char *path, const cct_point *point, const double *samples_us,
                                 size_t n_samples, cct_error *err);
/* Whether that point is already stored in run_id (used by --resume). */
cct_status cct_store_has_point(cct_store *store, int64_t run_id, const cct_config *cfg,
                               uint64_t bytes, bool in_place, bool *found, cct_error *err);

/* Load every point of the given runs (n_runs == 0: all runs), ordered by run and then in
 * the order they were committed; CCT_ENOTFOUND if a listed run does not exist.
 * *points is malloc'ed (NULL when *n is 0). */
cct_status cct_store_load_points(cct_store *store, const int64_t *run_ids, size_t n_runs,
                                 cct_point **points, size_t *n, cct_error *err);
/* Raw samples of one stored point in measurement order, for re-analysis; CCT_ENOTFOUND if
 * the point is not stored.  *samples is malloc'ed (NULL when *n is 0). */
cct_status cct_store_load_samples(cct_store *store, int64_t run_id, const cct_config *cfg,
                                  uint64_t bytes, bool in_place, double **samples, size_t *n,
                                  cct_error *err);

/* NCCL's init-time model printout for a run (NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT,GRAPH,
 * TUNING: its communicator line, topology graphs and latency/bandwidth table), captured by
 * the search for the run's communicator of `ranks` ranks on `nodes` NCCL nodes.  One per
 * run: a second put replaces the first.  CCT_ENOTFOUND if the run does not exist; CCT_EINVAL
 * for empty text or ranks/nodes < 1. */
cct_status cct_store_put_nccl_log(cct_store *store, int64_t run_id, int ranks, int nodes,
                                  const char *text, cct_error *err);
/* The run's printout: *text malloc'ed (free() it), or NULL with CCT_OK when the run has none
 * -- always so in a store older than schema 3, which is read as it is. */
cct_status cct_store_get_nccl_log(cct_store *store, int64_t run_id, char **text, cct_error *err);

/* The link matrix measured for a run (`ccltune probe --links --json`'s object, or the file
 * given with --links-from), stored verbatim; the caller checks it first (cct_links_parse).
 * One per run: a second put replaces the first.  CCT_ENOTFOUND if the run does not exist;
 * CCT_EINVAL for empty text. */
cct_status cct_store_put_links(cct_store *store, int64_t run_id, const char *json, cct_error *err);
/* The run's matrix: *json malloc'ed (free() it), or NULL with CCT_OK when the run has none --
 * always so in a store older than schema 4, which is read as it is. */
cct_status cct_store_get_links(cct_store *store, int64_t run_id, char **json, cct_error *err);

#endif
