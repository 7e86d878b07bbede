/*
 * cct_import_recording.c - recorded calls to production-observation points
 * (cct_import_recording.h).
 *
 * Each timed row becomes a candidate point (configuration observed, shape, size) with
 * its calls and time; candidates are sorted by key and equal keys merged, so the work is
 * O(rows log rows) over any number of recordings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import_recording.h"
#include "cct_names.h"
#include "cct_recording_audit.h"
#include "cct_sort_merge.h"

typedef struct cand {
    cct_config cfg;
    uint64_t bytes, calls, timed, total_ns;
    int nccl_algo, nccl_proto; /* of the row with the most calls */
    uint64_t top_calls;
    int kind; /* 0 default, 1 tabled, 2 other */
} cand;

/* The configuration a row observed, as the header describes; returns its kind. */
static int observed(const cct_table *t, const cct_rec_comm *m, const cct_rec_row *row,
                    cct_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->coll = row->coll;
    cfg->ranks = m->ranks;
    cfg->nodes = m->nodes;
    cfg->dtype = CCT_DTYPE_FLOAT;
    cfg->algo = cfg->proto = CCT_DEFAULT;
    const cct_rule *r = cct_audit_rule(t, row->coll, m->ranks, m->nodes, row->bytes);
    if (!r || row->algo < 0 || row->proto < 0)
        return 0;
    bool same = cct_audit_ran_as_asked(r, row->algo, row->proto, row->channels);
    cfg->algo = row->algo;
    cfg->proto = row->proto;
    cfg->channels = same ? r->channels : row->channels;
    return same ? 1 : 2;
}

static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    int c;
    if ((c = cct_cmp_int(a->cfg.coll, b->cfg.coll)) ||
        (c = cct_cmp_int(a->cfg.ranks, b->cfg.ranks)) ||
        (c = cct_cmp_int(a->cfg.nodes, b->cfg.nodes)) ||
        (c = cct_cmp_int(a->cfg.algo, b->cfg.algo)) ||
        (c = cct_cmp_int(a->cfg.proto, b->cfg.proto)) ||
        (c = cct_cmp_int(a->cfg.channels, b->cfg.channels)))
        return c;
    return cct_cmp_u64(a->bytes, b->bytes);
}

static void merge(void *pd, const void *ps)
{
    cand *dst = pd;
    const cand *src = ps;
    dst->calls += src->calls;
    dst->timed += src->timed;
    dst->total_ns += src->total_ns;
    if (src->top_calls > dst->top_calls) {
        dst->top_calls = src->top_calls;
        dst->nccl_algo = src->nccl_algo;
        dst->nccl_proto = src->nccl_proto;
    }
}

static cct_point to_point(const cand *c)
{
    cct_point p;
    memset(&p, 0, sizeof p);
    p.cfg = c->cfg;
    p.bytes = c->bytes;
    double mean = (double)c->total_ns / (double)c->timed / 1e3;
    p.stats.n = c->timed > INT32_MAX ? INT32_MAX : (int)c->timed;
    p.stats.median_us = p.stats.mean_us = mean;
    p.stats.p95_us = p.stats.min_us = p.stats.max_us = p.stats.cv = NAN;
    p.status = CCT_POINT_OK;
    p.nccl_algo = c->nccl_algo;
    p.nccl_proto = c->nccl_proto;
    p.tuner_pipe_ops = -1;
    p.tuner_reg_buff = -1;
    p.tuner_bytes = c->bytes;
    return p;
}

static void nccl_version(int code, char *buf, size_t len)
{
    if (code >= 20900)
        snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else if (code > 0)
        snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

/* Candidates of every timed row; counts the rest in sum. */
static size_t collect(const cct_recording *recs, size_t n, const cct_table *t, cand *v,
                      cct_recording_import_summary *sum)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < recs[i].n_comms; c++) {
            const cct_rec_comm *m = &recs[i].comms[c];
            for (size_t r = 0; r < m->n_rows; r++) {
                const cct_rec_row *row = &m->rows[r];
                sum->calls += row->calls;
                if (row->coll < 0 || row->coll >= CCT_NUM_COLLS || row->bytes == 0) {
                    sum->skipped_calls += row->calls;
                    continue;
                }
                sum->untimed_calls += row->calls - row->timed;
                if (!row->timed)
                    continue;
                cand *d = &v[k++];
                memset(d, 0, sizeof *d);
                d->kind = observed(t, m, row, &d->cfg);
                d->bytes = row->bytes;
                d->calls = row->calls;
                d->timed = row->timed;
                d->total_ns = row->total_ns;
                d->nccl_algo = row->algo;
                d->nccl_proto = row->proto;
                d->top_calls = row->calls;
            }
        }
    return k;
}

cct_status cct_import_recordings(const cct_recording *recs, size_t n, const cct_table *table,
                                 cct_import_result *out, cct_recording_import_summary *sum,
                                 cct_error *err)
{
    memset(sum, 0, sizeof *sum);
    size_t total = cct_recording_row_count(recs, n);
    for (size_t i = 0; i < n; i++) {
        if (!out->nccl_version[0])
            nccl_version(recs[i].nccl, out->nccl_version, sizeof out->nccl_version);
        if (!out->host[0])
            snprintf(out->host, sizeof out->host, "%s", recs[i].host);
    }
    out->format = CCT_IMPORT_RECORDING;
    out->runs = (int)n;
    cand *v = total ? calloc(total, sizeof *v) : NULL;
    if (total && !v)
        return cct_error_set(err, CCT_ENOMEM, "recordings: out of memory");
    size_t k = collect(recs, n, table, v, sum);
    size_t w = cct_sort_merge(v, k, sizeof *v, cmp_cand, merge);
    cct_status st = CCT_OK;
    for (size_t i = 0; i < w && st == CCT_OK; i++) {
        cct_point p = to_point(&v[i]);
        st = cct_import_add_point(out, &p, 0, 0, NULL, 0, err);
        size_t *count = v[i].kind == 1   ? &sum->tabled_points
                        : v[i].kind == 2 ? &sum->other_points
                                         : &sum->default_points;
        (*count)++;
    }
    free(v);
    return st;
}

bool cct_import_is_recording(const char *data, size_t len)
{
    static const char magic[] = "ccltune-recording ";
    return len >= sizeof magic - 1 && memcmp(data, magic, sizeof magic - 1) == 0;
}
