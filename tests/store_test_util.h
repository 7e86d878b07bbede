/*
 * store_test_util.h - helpers shared by the measurement store tests: a scratch directory
 * per test, deterministic points and samples derived from an index, field-by-field point
 * comparison (NaN equals NaN: the store maps NaN to NULL and back), whole-file snapshots
 * to prove a refused file was not modified, and one-shot SQL against a store file.
 *
 * Header-only (static functions) so each test program stays one file plus this.
 * Ownership: scratch directories are removed by store_test_rmdir; file snapshots are
 * malloc'ed and freed by the caller.
 */
#ifndef STORE_TEST_UTIL_H
#define STORE_TEST_UTIL_H

#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cct_store.h"

static inline void store_test_tmpdir(char *dir, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, len, "%s/cct-store-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
}

static int store_test_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void store_test_rmdir(const char *dir)
{
    nftw(dir, store_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline cct_store_fingerprint store_test_fingerprint(const char *host)
{
    cct_store_fingerprint fp;
    memset(&fp, 0, sizeof fp);
    snprintf(fp.gpu, sizeof fp.gpu, "NVIDIA H200");
    fp.cc = 90;
    fp.gpus_per_node = 1;
    fp.nodes = 4;
    fp.ranks_per_gpu = 4;
    snprintf(fp.links, sizeof fp.links, "socket");
    snprintf(fp.nccl, sizeof fp.nccl, "2.28.9");
    snprintf(fp.cuda, sizeof fp.cuda, "13.0");
    snprintf(fp.host, sizeof fp.host, "%s", host);
    fp.ll128_allowed = false;
    snprintf(fp.ll128_reason, sizeof fp.ll128_reason, "inter-node path is NET/Socket");
    return fp;
}

/* Point number i of a plan: every index gives a distinct key (bytes grows with i). */
static inline cct_point store_test_point(unsigned i)
{
    cct_point p;
    memset(&p, 0, sizeof p);
    p.cfg.coll = (int)(i % CCT_NUM_COLLS);
    p.cfg.algo = i % 3 == 0 ? CCT_DEFAULT : (int)(i % 2);
    p.cfg.proto = i % 3 == 0 ? CCT_DEFAULT : (int)(i % CCT_NUM_PROTOS);
    p.cfg.channels = 1 << (i % 4);
    p.cfg.buffsize = i % 2 ? 4194304 : 0;
    p.cfg.ll_buffsize = 0;
    p.cfg.ll128_buffsize = i % 5 == 0 ? 1048576 : 0;
    p.cfg.align = 4 * (i % 4);
    p.cfg.ranks = 4;
    p.cfg.nodes = 4;
    p.cfg.dtype = (int)(i % 2);
    p.bytes = 1024 + 8 * (uint64_t)i;
    p.in_place = i % 2 == 1;
    p.stats.n = (int)(1 + i % 7);
    p.stats.median_us = 100.0 + i * 0.125;
    p.stats.p95_us = p.stats.median_us * 1.1;
    p.stats.min_us = p.stats.median_us * 0.9;
    p.stats.max_us = p.stats.median_us * 1.3;
    p.stats.mean_us = p.stats.median_us * 1.01;
    p.stats.cv = 0.01 * (i % 10);
    p.wrong = i % 11 == 0 ? i : 0;
    p.status = p.wrong ? CCT_POINT_CORRUPT : CCT_POINT_OK;
    p.noisy = i % 13 == 0;
    p.nccl_algo = p.cfg.algo == CCT_DEFAULT ? (i % 2 ? CCT_ALGO_RING : -1) : p.cfg.algo;
    p.nccl_proto = p.cfg.proto == CCT_DEFAULT ? (i % 2 ? CCT_PROTO_LL : -1) : p.cfg.proto;
    p.cfg.pipe_ops = i % 7 == 3 ? 4 : 0; /* 0: a plain call, as the loader returns it */
    p.cfg.reg_buff = i % 9 == 4;
    if (i % 4 == 1) { /* what NCCL passed its tuner; unknown for the others */
        p.tuner_pipe_ops = 1 + (int)(i % 3);
        p.tuner_reg_buff = (int)(i % 2);
        p.tuner_bytes = 2 * p.bytes;
    }
    return p;
}

/* Sample k of point i: distinct, non-integral values so a swapped or lost sample shows. */
static inline double store_test_sample(unsigned i, unsigned k)
{
    return 100.0 + i * 0.125 + k / 64.0 + 1.0 / 3.0;
}

static inline size_t store_test_n_samples(unsigned i)
{
    return (size_t)(1 + i % 7);
}

static inline bool store_test_same_real(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* Field-by-field equality; returns the name of the first differing field, NULL if equal. */
static inline const char *store_test_point_diff(const cct_point *a, const cct_point *b)
{
#define CMP(f)                                                                                     \
    do {                                                                                           \
        if (a->f != b->f)                                                                          \
            return #f;                                                                             \
    } while (0)
#define CMPR(f)                                                                                    \
    do {                                                                                           \
        if (!store_test_same_real(a->f, b->f))                                                     \
            return #f;                                                                             \
    } while (0)
    CMP(cfg.coll);
    CMP(cfg.algo);
    CMP(cfg.proto);
    CMP(cfg.channels);
    CMP(cfg.buffsize);
    CMP(cfg.ll_buffsize);
    CMP(cfg.ll128_buffsize);
    CMP(cfg.align);
    CMP(cfg.ranks);
    CMP(cfg.nodes);
    CMP(cfg.dtype);
    CMP(cfg.chunk);
    CMP(chunk_used);
    CMP(chunk_observed);
    CMP(bytes);
    CMP(in_place);
    CMP(stats.n);
    CMPR(stats.median_us);
    CMPR(stats.p95_us);
    CMPR(stats.min_us);
    CMPR(stats.max_us);
    CMPR(stats.mean_us);
    CMPR(stats.cv);
    CMP(wrong);
    CMP(status);
    CMP(noisy);
    CMP(nccl_algo);
    CMP(nccl_proto);
    CMP(cfg.pipe_ops);
    CMP(cfg.reg_buff);
    CMP(tuner_pipe_ops);
    CMP(tuner_reg_buff);
    CMP(tuner_bytes);
#undef CMP
#undef CMPR
    return NULL;
}

/* Whole file into memory (NULL if absent); *len gets its size. */
static inline unsigned char *store_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return buf;
}

/* Run SQL on a file through a plain connection (no ccltune code involved). */
static inline int store_test_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* First column of the first row of a query as an integer (-1 on error or no row). */
static inline long long store_test_sql_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

#endif
