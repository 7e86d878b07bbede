/*
 * cct_store_points.c - measured points and their raw samples in the store (see cct_store.h).
 *
 * cct_store_add_point is the crash-safety boundary of the whole search: the point row and
 * all its samples go into one IMMEDIATE transaction, so after kill -9 a point is either
 * absent or complete.  The 14 columns of the point's identity are bound by one function
 * (bind_key) in one order for the insert, the lookup and the samples query, so the UNIQUE
 * index that refuses duplicates is also the index that answers has_point.
 * Values that SQLite cannot hold faithfully are refused rather than altered: unsigned
 * counts above INT64_MAX, enums without a name, non-finite samples.  NaN statistics (no
 * timing) are stored as NULL, which is what SQLite would do anyway, and read back as NaN.
 * Loads run inside one read transaction so they see a single snapshot even while a search
 * in another process keeps committing.
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
    "dtype = ? AND bytes = ? AND in_place = ?"

#define POINT_COLUMNS                                                                              \
    "run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize, align, "          \
    "ranks, nodes, dtype, bytes, in_place, status, wrong_elements, noisy, nccl_algo, "             \
    "nccl_proto, n_samples, median_us, p95_us, min_us, max_us, mean_us, cv"

/* "allreduce ring/simple, 4 channels, 4 ranks on 1 nodes, float, 1048576 B out-of-place"
 * for messages; names every dimension a user could have mistyped. */
static const char *describe(const cct_config *c, uint64_t bytes, bool in_place, char *buf,
                            size_t len)
{
    const char *algo = cct_store_algo_text(c->algo), *proto = cct_store_proto_text(c->proto);
    snprintf(buf, len,
             "%s %s/%s, %d channels, buffsizes %" PRIu64 "/%" PRIu64 "/%" PRIu64
             ", align %u, %d ranks on %d nodes, %s, %" PRIu64 " B %s",
             cct_coll_name(c->coll), algo ? algo : "?", proto ? proto : "?", c->channels,
             c->buffsize, c->ll_buffsize, c->ll128_buffsize, c->align, c->ranks, c->nodes,
             cct_dtype_name(c->dtype), bytes, in_place ? "in-place" : "out-of-place");
    return buf;
}

static bool dtype_ok(int dtype)
{
    return dtype >= 0 && dtype < CCT_NUM_DTYPES;
}

/* Refuse what the key columns cannot hold, so lookups and inserts agree. */
static cct_status check_key(cct_store *s, const cct_config *c, uint64_t bytes, cct_error *err)
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
             c->ll128_buffsize > INT64_MAX)
        bad = "byte count (above 2^63 - 1)";
    if (!bad)
        return CCT_OK;
    return cct_error_set(err, CCT_EINVAL,
                         "store %s: cannot store a point with an invalid %s (coll %d, algo %d, "
                         "proto %d, dtype %d, %" PRIu64 " B)",
                         s->path, bad, c->coll, c->algo, c->proto, c->dtype, bytes);
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

static int bind_real(sqlite3_stmt *st, int idx, double v)
{
    return isnan(v) ? sqlite3_bind_null(st, idx) : sqlite3_bind_double(st, idx, v);
}

static double column_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static cct_status check_point(cct_store *s, const cct_point *p, const double *samples, size_t n,
                              cct_error *err)
{
    cct_status rc = check_key(s, &p->cfg, p->bytes, err);
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
    else if (n > 0 && !samples)
        bad = "sample array (NULL)";
    else if (n > (size_t)INT32_MAX)
        bad = "sample count";
    for (size_t i = 0; !bad && samples && i < n; i++)
        if (!isfinite(samples[i]))
            bad = "sample (not finite)";
    if (!bad)
        return CCT_OK;
    return cct_error_set(err, CCT_EINVAL, "store %s: cannot store point %s: invalid %s", s->path,
                         describe(&p->cfg, p->bytes, p->in_place, what, sizeof what), bad);
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
    cct_status rc = cct_store_prepare(s,
                                      "INSERT INTO points (" POINT_COLUMNS ", measured) VALUES "
                                      "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                      "?, ?, ?, ?, ?, ?, ?, "
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
    int step = b != SQLITE_OK ? b : sqlite3_step(st);
    char what[512];
    if (step == SQLITE_CONSTRAINT_UNIQUE)
        rc = cct_error_set(err, CCT_EINVAL, "store %s: point %s is already stored in run %lld",
                           s->path, describe(&p->cfg, p->bytes, p->in_place, what, sizeof what),
                           (long long)run_id);
    else if (step != SQLITE_DONE)
        rc = cct_store_db_error(s, step, "adding a point",
                                describe(&p->cfg, p->bytes, p->in_place, what, sizeof what), err);
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
    cct_status rc = check_point(store, point, samples_us, n_samples, err);
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

/* Id of the point with this key: CCT_OK with *id = 0 when it is not stored. */
static cct_status find_point(cct_store *s, int64_t run_id, const cct_config *cfg, uint64_t bytes,
                             bool in_place, int64_t *id, const char *doing, cct_error *err)
{
    *id = 0;
    cct_status rc = check_key(s, cfg, bytes, err);
    if (rc != CCT_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = cct_store_prepare(s, "SELECT id FROM points WHERE " KEY_WHERE, &st, doing, err)))
        return rc;
    int step = bind_key(st, run_id, cfg, bytes, in_place);
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
    cct_status rc = find_point(store, run_id, cfg, bytes, in_place, &id, "looking up a point", err);
    *found = rc == CCT_OK && id != 0;
    return rc;
}

/* Decode one row of POINT_COLUMNS; CCT_ESTORE if a name is not one this build knows. */
static cct_status read_point(cct_store *s, sqlite3_stmt *st, cct_point *p, cct_error *err)
{
    memset(p, 0, sizeof *p);
    const char *coll = (const char *)sqlite3_column_text(st, 1);
    const char *algo = (const char *)sqlite3_column_text(st, 2);
    const char *proto = (const char *)sqlite3_column_text(st, 3);
    const char *dtype = (const char *)sqlite3_column_text(st, 11);
    const char *status = (const char *)sqlite3_column_text(st, 14);
    const char *nalgo = (const char *)sqlite3_column_text(st, 17);
    const char *nproto = (const char *)sqlite3_column_text(st, 18);
    cct_config *c = &p->cfg;
    const char *bad = NULL, *val = NULL;
    c->coll = cct_coll_from_name(coll);
    c->dtype = cct_dtype_from_name(dtype);
    p->status = cct_store_status_value(status);
    p->nccl_algo = p->nccl_proto = -1;
    if (c->coll < 0)
        bad = "coll", val = coll;
    else if (!cct_store_algo_value(algo, &c->algo))
        bad = "algo", val = algo;
    else if (!cct_store_proto_value(proto, &c->proto))
        bad = "proto", val = proto;
    else if (c->dtype < 0)
        bad = "dtype", val = dtype;
    else if (p->status < 0)
        bad = "status", val = status;
    else if (nalgo && !cct_store_algo_value(nalgo, &p->nccl_algo))
        bad = "nccl_algo", val = nalgo;
    else if (nproto && !cct_store_proto_value(nproto, &p->nccl_proto))
        bad = "nccl_proto", val = nproto;
    if (bad)
        return cct_error_set(err, CCT_ESTORE,
                             "store %s: a point of run %lld has %s = '%s', "
                             "which this build does not know",
                             s->path, (long long)sqlite3_column_int64(st, 0), bad,
                             val ? val : "(null)");
    c->channels = sqlite3_column_int(st, 4);
    c->buffsize = (uint64_t)sqlite3_column_int64(st, 5);
    c->ll_buffsize = (uint64_t)sqlite3_column_int64(st, 6);
    c->ll128_buffsize = (uint64_t)sqlite3_column_int64(st, 7);
    c->align = (unsigned)sqlite3_column_int64(st, 8);
    c->ranks = sqlite3_column_int(st, 9);
    c->nodes = sqlite3_column_int(st, 10);
    p->bytes = (uint64_t)sqlite3_column_int64(st, 12);
    p->in_place = sqlite3_column_int(st, 13) != 0;
    p->wrong = (uint64_t)sqlite3_column_int64(st, 15);
    p->noisy = sqlite3_column_int(st, 16) != 0;
    p->stats.n = sqlite3_column_int(st, 19);
    p->stats.median_us = column_real(st, 20);
    p->stats.p95_us = column_real(st, 21);
    p->stats.min_us = column_real(st, 22);
    p->stats.max_us = column_real(st, 23);
    p->stats.mean_us = column_real(st, 24);
    p->stats.cv = column_real(st, 25);
    return CCT_OK;
}

typedef struct point_vec {
    cct_point *v;
    size_t len, cap;
} point_vec;

static cct_status load_run(cct_store *s, sqlite3_stmt *st, int64_t run_id, bool all, point_vec *out,
                           cct_error *err)
{
    sqlite3_reset(st);
    if (!all)
        sqlite3_bind_int64(st, 1, run_id);
    cct_status rc = CCT_OK;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->len == out->cap) {
            size_t ncap = out->cap ? out->cap * 2 : 64;
            cct_point *grown = realloc(out->v, ncap * sizeof *grown);
            if (!grown)
                return cct_error_set(err, CCT_ENOMEM, "out of memory loading points of %s",
                                     s->path);
            out->v = grown;
            out->cap = ncap;
        }
        if ((rc = read_point(s, st, &out->v[out->len], err)) != CCT_OK)
            return rc;
        out->len++;
    }
    if (step != SQLITE_DONE)
        return cct_store_db_error(s, step, "loading points", NULL, err);
    return CCT_OK;
}

static cct_status run_exists(cct_store *s, int64_t run_id, cct_error *err)
{
    cct_store_run run;
    return cct_store_get_run(s, run_id, &run, err);
}

cct_status cct_store_load_points(cct_store *store, const int64_t *run_ids, size_t n_runs,
                                 cct_point **points, size_t *n, cct_error *err)
{
    if (!store || !points || !n || (n_runs > 0 && !run_ids))
        return cct_error_set(err, CCT_EINVAL, "cct_store_load_points: NULL argument");
    *points = NULL;
    *n = 0;
    bool all = n_runs == 0;
    sqlite3_stmt *st = NULL;
    point_vec vec = {0};
    cct_status rc = cct_store_begin_read(store, "loading points", err);
    if (rc != CCT_OK)
        return rc;
    rc = cct_store_prepare(store,
                           all ? "SELECT " POINT_COLUMNS " FROM points ORDER BY run_id, id"
                               : "SELECT " POINT_COLUMNS " FROM points WHERE run_id = ? "
                                 "ORDER BY id",
                           &st, "loading points", err);
    for (size_t r = 0; rc == CCT_OK && r < (all ? 1 : n_runs); r++) {
        bool repeated = false;
        for (size_t q = 0; !all && q < r; q++)
            repeated = repeated || run_ids[q] == run_ids[r];
        if (repeated)
            continue;
        if (!all && (rc = run_exists(store, run_ids[r], err)) != CCT_OK)
            break;
        rc = load_run(store, st, all ? 0 : run_ids[r], all, &vec, err);
    }
    sqlite3_finalize(st);
    cct_store_rollback(store); /* ends the read transaction */
    if (rc != CCT_OK) {
        free(vec.v);
        return rc;
    }
    *points = vec.v;
    *n = vec.len;
    return CCT_OK;
}

cct_status cct_store_load_samples(cct_store *store, int64_t run_id, const cct_config *cfg,
                                  uint64_t bytes, bool in_place, double **samples, size_t *n,
                                  cct_error *err)
{
    static const char doing[] = "loading samples";
    if (!store || !cfg || !samples || !n)
        return cct_error_set(err, CCT_EINVAL, "cct_store_load_samples: NULL argument");
    *samples = NULL;
    *n = 0;
    cct_status rc = cct_store_begin_read(store, doing, err);
    if (rc != CCT_OK)
        return rc;
    int64_t id;
    sqlite3_stmt *st = NULL;
    double *v = NULL;
    size_t len = 0, cap = 0;
    char what[512];
    if ((rc = find_point(store, run_id, cfg, bytes, in_place, &id, doing, err)) == CCT_OK &&
        id == 0)
        rc = cct_error_set(err, CCT_ENOTFOUND, "store %s: run %lld has no point %s", store->path,
                           (long long)run_id, describe(cfg, bytes, in_place, what, sizeof what));
    if (rc == CCT_OK)
        rc = cct_store_prepare(store, "SELECT time_us FROM samples WHERE point_id = ? ORDER BY seq",
                               &st, doing, err);
    if (rc == CCT_OK) {
        sqlite3_bind_int64(st, 1, id);
        int step;
        while (rc == CCT_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
            if (len == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                double *grown = realloc(v, ncap * sizeof *grown);
                if (!grown) {
                    rc = cct_error_set(err, CCT_ENOMEM, "out of memory %s from %s", doing,
                                       store->path);
                    break;
                }
                v = grown;
                cap = ncap;
            }
            v[len++] = sqlite3_column_double(st, 0);
        }
        if (rc == CCT_OK && step != SQLITE_DONE)
            rc = cct_store_db_error(store, step, doing, NULL, err);
    }
    sqlite3_finalize(st);
    cct_store_rollback(store);
    if (rc != CCT_OK) {
        free(v);
        return rc;
    }
    *samples = v;
    *n = len;
    return CCT_OK;
}
