/*
 * cct_store_points.c - adding measured points with their raw samples, and finding them
 * (see cct_store.h; reading them back is cct_store_load.c).
 *
 * cct_store_add_point is the crash-safety boundary of the whole search: the point row and
 * all its samples go into one IMMEDIATE transaction, so after kill -9 a point is either
 * absent or complete.  The columns of the point's identity are bound in one order (bind_key,
 * then bind_mode and the chunk) for the insert, the lookup and the samples query, so the UNIQUE
 * index that refuses duplicates is also the index that answers has_point.
 * Values that SQLite cannot hold faithfully are refused rather than altered: unsigned
 * counts above INT64_MAX, enums without a name, non-finite samples.  NaN statistics (no
 * timing) are stored as NULL, which is what SQLite would do anyway.
 */
#include "cct_store_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_WHERE                                                                                  \
    "run_id = ? AND coll = ? AND algo = ? AND proto = ? AND channels = ? AND buffsize = ? AND "    \
    "ll_buffsize = ? AND ll128_buffsize = ? AND align = ? AND ranks = ? AND nodes = ? AND "        \
    "dtype = ? AND bytes = ? AND in_place = ? AND pipe_ops = ? AND reg_buff = ? AND chunk = ?"
#define KEY_WHERE_V3 /* schemas 2 to 4: no chunk column */                                         \
    "run_id = ? AND coll = ? AND algo = ? AND proto = ? AND channels = ? AND buffsize = ? AND "    \
    "ll_buffsize = ? AND ll128_buffsize = ? AND align = ? AND ranks = ? AND nodes = ? AND "        \
    "dtype = ? AND bytes = ? AND in_place = ? AND pipe_ops = ? AND reg_buff = ?"
#define KEY_WHERE_V1 /* schema 1: no call-mode columns */                                          \
    "run_id = ? AND coll = ? AND algo = ? AND proto = ? AND channels = ? AND buffsize = ? AND "    \
    "ll_buffsize = ? AND ll128_buffsize = ? AND align = ? AND ranks = ? AND nodes = ? AND "        \
    "dtype = ? AND bytes = ? AND in_place = ?"

const char *cct_store_describe_point(const cct_config *c, uint64_t bytes, bool in_place, char *buf,
                                     size_t len)
{
    const char *algo = cct_store_algo_text(c->algo), *proto = cct_store_proto_text(c->proto);
    snprintf(buf, len,
             "%s %s/%s, %d channels, buffsizes %" PRIu64 "/%" PRIu64 "/%" PRIu64
             ", align %u, %d ranks on %d nodes, %s, %" PRIu64 " B %s%s%s",
             cct_coll_name(c->coll), algo ? algo : "?", proto ? proto : "?", c->channels,
             c->buffsize, c->ll_buffsize, c->ll128_buffsize, c->align, c->ranks, c->nodes,
             cct_dtype_name(c->dtype), bytes, in_place ? "in-place" : "out-of-place",
             cct_config_pipe_ops(c) > 1 ? ", grouped" : "", c->reg_buff ? ", registered" : "");
    if (c->chunk) {
        size_t used = strlen(buf);
        snprintf(buf + used, len > used ? len - used : 0, ", chunk %" PRIu64 " B", c->chunk);
    }
    return buf;
}

static bool dtype_ok(int dtype)
{
    return dtype >= 0 && dtype < CCT_NUM_DTYPES;
}

/* Refuse what the key columns cannot hold, so lookups and inserts agree. */
static cct_status check_key(const char *path, const cct_config *c, uint64_t bytes, cct_error *err)
{
    const char *bad = NULL;
    if (c->coll < 0 || c->coll >= CCT_NUM_COLLS)
        bad = "collective";
    else if (!cct_store_algo_text(c->algo))
        bad = "algorithm";
    else if (!cct_store_proto_text(c->proto))
        bad = "protocol";
    else if (!dtype_ok(c->dtype))
        bad = "data type";
    else if (bytes > INT64_MAX || c->buffsize > INT64_MAX || c->ll_buffsize > INT64_MAX ||
             c->ll128_buffsize > INT64_MAX || c->chunk > INT64_MAX)
        bad = "byte count (above 2^63 - 1)";
    if (!bad)
        return CCT_OK;
    return cct_error_set(err, CCT_EINVAL,
                         "store %s: cannot store a point with an invalid %s (coll %d, algo %d, "
                         "proto %d, dtype %d, %" PRIu64 " B)",
                         path, bad, c->coll, c->algo, c->proto, c->dtype, bytes);
}

static int bind_key(sqlite3_stmt *st, int64_t run_id, const cct_config *c, uint64_t bytes,
                    bool in_place)
{
    int rc = SQLITE_OK, i = 1;
    rc |= sqlite3_bind_int64(st, i++, run_id);
    rc |= sqlite3_bind_text(st, i++, cct_coll_name(c->coll), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_text(st, i++, cct_store_algo_text(c->algo), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_text(st, i++, cct_store_proto_text(c->proto), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_int(st, i++, c->channels);
    rc |= sqlite3_bind_int64(st, i++, (sqlite3_int64)c->buffsize);
    rc |= sqlite3_bind_int64(st, i++, (sqlite3_int64)c->ll_buffsize);
    rc |= sqlite3_bind_int64(st, i++, (sqlite3_int64)c->ll128_buffsize);
    rc |= sqlite3_bind_int64(st, i++, (sqlite3_int64)c->align);
    rc |= sqlite3_bind_int(st, i++, c->ranks);
    rc |= sqlite3_bind_int(st, i++, c->nodes);
    rc |= sqlite3_bind_text(st, i++, cct_dtype_name(c->dtype), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_int64(st, i++, (sqlite3_int64)bytes);
    rc |= sqlite3_bind_int(st, i++, in_place ? 1 : 0);
    return rc;
}

/* The call-mode key columns, at parameters idx and idx + 1. */
static int bind_mode(sqlite3_stmt *st, int idx, const cct_config *c)
{
    return sqlite3_bind_int(st, idx, cct_config_pipe_ops(c)) |
           sqlite3_bind_int(st, idx + 1, c->reg_buff ? 1 : 0);
}

/* The chunk a point asked for (key) and ran, at parameters idx .. idx + 2. */
static int bind_chunk(sqlite3_stmt *st, int idx, const cct_point *p)
{
    int b = sqlite3_bind_int64(st, idx, (sqlite3_int64)p->cfg.chunk);
    if (p->chunk_used == 0)
        return b | sqlite3_bind_null(st, idx + 1) | sqlite3_bind_null(st, idx + 2);
    return b | sqlite3_bind_int64(st, idx + 1, (sqlite3_int64)p->chunk_used) |
           sqlite3_bind_text(st, idx + 2, p->chunk_observed ? "observed" : "computed", -1,
                             SQLITE_STATIC);
}

static int bind_real(sqlite3_stmt *st, int idx, double v)
{
    return isnan(v) ? sqlite3_bind_null(st, idx) : sqlite3_bind_double(st, idx, v);
}

cct_status cct_store_check_point(const char *path, const cct_point *p, const double *samples,
                                 size_t n, cct_error *err)
{
    if (!p)
        return cct_error_set(err, CCT_EINVAL, "cct_store_check_point: NULL argument");
    if (!path)
        path = "<store>";
    cct_status rc = check_key(path, &p->cfg, p->bytes, err);
    if (rc != CCT_OK)
        return rc;
    char what[512];
    const char *bad = NULL;
    if (!cct_store_status_text(p->status))
        bad = "status";
    else if (p->nccl_algo != -1 && !cct_store_algo_text(p->nccl_algo))
        bad = "NCCL algorithm";
    else if (p->nccl_proto != -1 && !cct_store_proto_text(p->nccl_proto))
        bad = "NCCL protocol";
    else if (p->wrong > INT64_MAX)
        bad = "wrong-element count";
    else if (p->cfg.pipe_ops < 0)
        bad = "group size (pipe_ops)";
    else if (p->tuner_pipe_ops > 0 &&
             (p->tuner_reg_buff < -1 || p->tuner_reg_buff > 1 || p->tuner_bytes > INT64_MAX))
        bad = "record of what NCCL passed its tuner";
    else if (n > 0 && !samples)
        bad = "sample array (NULL)";
    else if (n > (size_t)INT32_MAX)
        bad = "sample count";
    for (size_t i = 0; !bad && samples && i < n; i++)
        if (!isfinite(samples[i]))
            bad = "sample (not finite)";
    if (!bad)
        return CCT_OK;
    return cct_error_set(
        err, CCT_EINVAL, "store %s: cannot store point %s: invalid %s", path,
        cct_store_describe_point(&p->cfg, p->bytes, p->in_place, what, sizeof what), bad);
}

/* The run must exist and not be done: a done run's points are final (tables cite it as
 * their source).  A failed run stopped on an error and may take the points of a resume. */
static cct_status check_run_open(cct_store *s, int64_t run_id, cct_error *err)
{
    sqlite3_stmt *st;
    cct_status rc =
        cct_store_prepare(s, "SELECT state FROM runs WHERE id = ?", &st, "adding a point", err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE)
        rc = cct_error_set(err, CCT_ENOTFOUND, "store %s has no run %lld to add points to", s->path,
                           (long long)run_id);
    else if (step != SQLITE_ROW)
        rc = cct_store_db_error(s, step, "adding a point", NULL, err);
    else if (cct_store_state_value((const char *)sqlite3_column_text(st, 0)) == CCT_RUN_DONE)
        rc = cct_error_set(err, CCT_EINVAL,
                           "store %s: run %lld is done, its points are final; resume it "
                           "(cct_store_resume_run) before adding points",
                           s->path, (long long)run_id);
    sqlite3_finalize(st);
    return rc;
}

static cct_status insert_point(cct_store *s, int64_t run_id, const cct_point *p, int64_t *point_id,
                               cct_error *err)
{
    sqlite3_stmt *st;
    cct_status rc =
        cct_store_prepare(s,
                          "INSERT INTO points (" CCT_STORE_POINT_COLUMNS ", measured) VALUES "
                          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                          "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                          "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                          &st, "adding a point", err);
    if (rc != CCT_OK)
        return rc;
    int b = bind_key(st, run_id, &p->cfg, p->bytes, p->in_place), i = 15;
    b |= sqlite3_bind_text(st, i++, cct_store_status_text(p->status), -1, SQLITE_STATIC);
    b |= sqlite3_bind_int64(st, i++, (sqlite3_int64)p->wrong);
    b |= sqlite3_bind_int(st, i++, p->noisy ? 1 : 0);
    if (p->nccl_algo == -1)
        b |= sqlite3_bind_null(st, i++);
    else
        b |= sqlite3_bind_text(st, i++, cct_store_algo_text(p->nccl_algo), -1, SQLITE_STATIC);
    if (p->nccl_proto == -1)
        b |= sqlite3_bind_null(st, i++);
    else
        b |= sqlite3_bind_text(st, i++, cct_store_proto_text(p->nccl_proto), -1, SQLITE_STATIC);
    b |= sqlite3_bind_int(st, i++, p->stats.n);
    b |= bind_real(st, i++, p->stats.median_us);
    b |= bind_real(st, i++, p->stats.p95_us);
    b |= bind_real(st, i++, p->stats.min_us);
    b |= bind_real(st, i++, p->stats.max_us);
    b |= bind_real(st, i++, p->stats.mean_us);
    b |= bind_real(st, i++, p->stats.cv);
    b |= bind_mode(st, i, &p->cfg);
    i += 2;
    if (p->tuner_pipe_ops > 0) {
        b |= sqlite3_bind_int(st, i++, p->tuner_pipe_ops);
        b |= sqlite3_bind_int(st, i++, p->tuner_reg_buff);
        b |= sqlite3_bind_int64(st, i++, (sqlite3_int64)p->tuner_bytes);
    } else {
        b |= sqlite3_bind_null(st, i++);
        b |= sqlite3_bind_null(st, i++);
        b |= sqlite3_bind_null(st, i++);
    }
    b |= bind_chunk(st, i, p);
    int step = b != SQLITE_OK ? b : sqlite3_step(st);
    char what[512];
    if (step == SQLITE_CONSTRAINT_UNIQUE)
        rc = cct_error_set(
            err, CCT_EINVAL, "store %s: point %s is already stored in run %lld", s->path,
            cct_store_describe_point(&p->cfg, p->bytes, p->in_place, what, sizeof what),
            (long long)run_id);
    else if (step != SQLITE_DONE)
        rc = cct_store_db_error(
            s, step, "adding a point",
            cct_store_describe_point(&p->cfg, p->bytes, p->in_place, what, sizeof what), err);
    *point_id = sqlite3_last_insert_rowid(s->db);
    sqlite3_finalize(st);
    return rc;
}

static cct_status insert_samples(cct_store *s, int64_t point_id, const double *samples, size_t n,
                                 cct_error *err)
{
    sqlite3_stmt *st;
    cct_status rc =
        cct_store_prepare(s, "INSERT INTO samples (point_id, seq, time_us) VALUES (?, ?, ?)", &st,
                          "adding a point's samples", err);
    for (size_t i = 0; rc == CCT_OK && i < n; i++) {
        sqlite3_reset(st);
        int b = sqlite3_bind_int64(st, 1, point_id);
        b |= sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        b |= sqlite3_bind_double(st, 3, samples[i]);
        int step = b != SQLITE_OK ? b : sqlite3_step(st);
        if (step != SQLITE_DONE)
            rc = cct_store_db_error(s, step, "adding a point's samples", NULL, err);
    }
    sqlite3_finalize(st);
    return rc;
}

cct_status cct_store_add_point(cct_store *store, int64_t run_id, const cct_point *point,
                               const double *samples_us, size_t n_samples, cct_error *err)
{
    if (!store || !point)
        return cct_error_set(err, CCT_EINVAL, "cct_store_add_point: NULL argument");
    cct_status rc = cct_store_check_point(store->path, point, samples_us, n_samples, err);
    if (rc != CCT_OK)
        return rc;
    if ((rc = cct_store_begin_write(store, "adding a point", err)) != CCT_OK)
        return rc;
    int64_t point_id = 0;
    if ((rc = check_run_open(store, run_id, err)) == CCT_OK &&
        (rc = insert_point(store, run_id, point, &point_id, err)) == CCT_OK &&
        (rc = insert_samples(store, point_id, samples_us, n_samples, err)) == CCT_OK)
        return cct_store_commit(store, "committing a point", err);
    cct_store_rollback(store);
    return rc;
}

cct_status cct_store_find_point(cct_store *s, int64_t run_id, const cct_config *cfg, uint64_t bytes,
                                bool in_place, int64_t *id, const char *doing, cct_error *err)
{
    *id = 0;
    cct_status rc = check_key(s->path, cfg, bytes, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_stmt *st;
    bool v1 = s->schema < 2; /* no call-mode columns: every point is a plain call */
    bool v3 = s->schema < 5; /* no chunk column: every point ran NCCL's own chunk */
    if ((v1 && (cct_config_pipe_ops(cfg) > 1 || cfg->reg_buff)) || (v3 && cfg->chunk))
        return CCT_OK;
    if ((rc = cct_store_prepare(s,
                                v1   ? "SELECT id FROM points WHERE " KEY_WHERE_V1
                                : v3 ? "SELECT id FROM points WHERE " KEY_WHERE_V3
                                     : "SELECT id FROM points WHERE " KEY_WHERE,
                                &st, doing, err)))
        return rc;
    int step = bind_key(st, run_id, cfg, bytes, in_place) | (v1 ? 0 : bind_mode(st, 15, cfg)) |
               (v3 ? 0 : sqlite3_bind_int64(st, 17, (sqlite3_int64)cfg->chunk));
    if (step == SQLITE_OK)
        step = sqlite3_step(st);
    if (step == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else if (step != SQLITE_DONE)
        rc = cct_store_db_error(s, step, doing, NULL, err);
    sqlite3_finalize(st);
    return rc;
}

cct_status cct_store_has_point(cct_store *store, int64_t run_id, const cct_config *cfg,
                               uint64_t bytes, bool in_place, bool *found, cct_error *err)
{
    if (!store || !cfg || !found)
        return cct_error_set(err, CCT_EINVAL, "cct_store_has_point: NULL argument");
    int64_t id;
    cct_status rc =
        cct_store_find_point(store, run_id, cfg, bytes, in_place, &id, "looking up a point", err);
    *found = rc == CCT_OK && id != 0;
    return rc;
}
