/*
 * cct_store_load.c - reading points and samples back out of the store, for the fitter,
 * the replay backend and re-analysis (see cct_store.h).
 *
 * Names stored as text are decoded with the same tables that wrote them; a name this
 * build does not know is an error naming the column and value, never a silent default.
 * Each load runs inside one read transaction, so it sees a single snapshot even while a
 * search in another process keeps committing (WAL readers never block the writer).
 * NULL statistics (nothing was timed) come back as NaN.
 */
#include "cct_store_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double column_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* Decode one row of CCT_STORE_POINT_COLUMNS; CCT_ESTORE if a name is not one this build knows. */
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
    int ops = sqlite3_column_int(st, 26);
    c->pipe_ops = ops > 1 ? ops : 0; /* plain calls in their zero-initialised form */
    c->reg_buff = sqlite3_column_int(st, 27) != 0;
    if (sqlite3_column_type(st, 28) != SQLITE_NULL) {
        p->tuner_pipe_ops = sqlite3_column_int(st, 28);
        p->tuner_reg_buff = sqlite3_column_int(st, 29);
        p->tuner_bytes = (uint64_t)sqlite3_column_int64(st, 30);
    }
    c->chunk = (uint64_t)sqlite3_column_int64(st, 31);
    p->chunk_used = (uint64_t)sqlite3_column_int64(st, 32); /* NULL reads as 0: unknown */
    const char *source = (const char *)sqlite3_column_text(st, 33);
    p->chunk_observed = source && strcmp(source, "observed") == 0;
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
    int v = store->schema < 2 ? 1 : store->schema < 5 ? 3 : 5;
    const char *sql =
        v == 1   ? (all ? "SELECT " CCT_STORE_POINT_COLUMNS_V1 " FROM points ORDER BY run_id, id"
                        : "SELECT " CCT_STORE_POINT_COLUMNS_V1 " FROM points WHERE run_id = ? "
                          "ORDER BY id")
        : v == 3 ? (all ? "SELECT " CCT_STORE_POINT_COLUMNS_V3 " FROM points ORDER BY run_id, id"
                        : "SELECT " CCT_STORE_POINT_COLUMNS_V3 " FROM points WHERE run_id = ? "
                          "ORDER BY id")
                 : (all ? "SELECT " CCT_STORE_POINT_COLUMNS " FROM points ORDER BY run_id, id"
                        : "SELECT " CCT_STORE_POINT_COLUMNS " FROM points WHERE run_id = ? "
                          "ORDER BY id");
    rc = cct_store_prepare(store, sql, &st, "loading points", err);
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
    cct_store_end_read(store);
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
    if ((rc = cct_store_find_point(store, run_id, cfg, bytes, in_place, &id, doing, err)) ==
            CCT_OK &&
        id == 0)
        rc = cct_error_set(err, CCT_ENOTFOUND, "store %s: run %lld has no point %s", store->path,
                           (long long)run_id,
                           cct_store_describe_point(cfg, bytes, in_place, what, sizeof what));
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
    cct_store_end_read(store);
    if (rc != CCT_OK) {
        free(v);
        return rc;
    }
    *samples = v;
    *n = len;
    return CCT_OK;
}
