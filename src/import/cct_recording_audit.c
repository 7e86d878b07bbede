/*
 * cct_recording_audit.c - merge recordings by collective, shape, size band and the
 * configuration NCCL ran, and judge each line against a table (cct_recording_audit.h).
 *
 * Every row becomes one line keyed by its band; the lines are sorted by key and equal
 * keys merged, so the work is O(rows log rows) whatever the number of files.
 */
#include <stdlib.h>
#include <string.h>

#include "cct_names.h"
#include "cct_recording_audit.h"
#include "cct_sort_merge.h"

static void power_band(uint64_t bytes, uint64_t *lo, uint64_t *hi)
{
    if (bytes == 0) {
        *lo = 0;
        *hi = 1;
        return;
    }
    int k = 63 - __builtin_clzll(bytes);
    *lo = UINT64_C(1) << k;
    *hi = k == 63 ? CCT_BYTES_INF : UINT64_C(1) << (k + 1);
}

typedef struct gain_source {
    cct_audit_gain_fn fn;
    void *ctx;
} gain_source;

/* The gain of one recorded size that ran as the rule asked, and the time it saved. */
static void weigh(cct_audit_line *l, const cct_rule *r, uint64_t bytes, const gain_source *g)
{
    double gain = 0, lo = 0, hi = 0;
    if (g->fn) {
        if (!g->fn(g->ctx, l->coll, l->ranks, l->nodes, bytes, r, &gain, &lo, &hi))
            gain = 0;
    } else if (r->gain > 0 && !r->no_baseline) {
        gain = r->gain;
        lo = r->gain_lo > 0 ? r->gain_lo : r->gain;
        hi = r->gain_hi > 0 ? r->gain_hi : r->gain;
    }
    if (gain <= 0)
        return;
    l->gain = gain;
    l->gain_lo = lo;
    l->gain_hi = hi;
    if (!l->timed)
        return;
    double t = (double)l->total_ns;
    l->evidence_ns = t;
    l->saved_ns = t * (gain - 1.0);
    l->saved_lo_ns = t * (lo - 1.0);
    l->saved_hi_ns = t * (hi - 1.0);
}

static void judge(cct_audit_line *l, const cct_table *table, uint64_t bytes, const gain_source *g)
{
    l->want_algo = l->want_proto = l->want_channels = -1;
    power_band(bytes, &l->lo, &l->hi);
    if (!table) {
        l->verdict = CCT_AUDIT_NO_TABLE;
        return;
    }
    l->verdict = CCT_AUDIT_LEFT;
    if (l->coll < 0 || l->coll >= CCT_NUM_COLLS)
        return;
    const cct_rule *r = cct_audit_rule(table, l->coll, l->ranks, l->nodes, bytes);
    if (!r)
        return;
    l->lo = r->min_bytes;
    l->hi = r->max_bytes;
    l->want_algo = r->algo;
    l->want_proto = r->proto;
    l->want_channels = r->channels;
    bool same = cct_audit_ran_as_asked(r, l->algo, l->proto, l->channels);
    l->verdict = same ? CCT_AUDIT_AS_ASKED : CCT_AUDIT_MISMATCH;
    if (same)
        weigh(l, r, bytes, g);
}

const cct_rule *cct_audit_rule(const cct_table *table, int coll, int ranks, int nodes,
                               uint64_t bytes)
{
    const cct_section *s = table ? cct_table_find_section(table, coll, ranks, nodes, 1, 0) : NULL;
    return s ? cct_section_lookup(s, bytes) : NULL;
}

bool cct_audit_ran_as_asked(const cct_rule *rule, int algo, int proto, int channels)
{
    return algo == rule->algo && proto == rule->proto &&
           (rule->channels <= 0 || channels <= rule->channels);
}

/* Key order: coll, ranks, nodes, band, configuration. */
static int cmp_key(const cct_audit_line *a, const cct_audit_line *b)
{
    int c;
    if ((c = cct_cmp_int(a->coll, b->coll)) || (c = cct_cmp_int(a->ranks, b->ranks)) ||
        (c = cct_cmp_int(a->nodes, b->nodes)) || (c = cct_cmp_u64(a->lo, b->lo)) ||
        (c = cct_cmp_int(a->algo, b->algo)) || (c = cct_cmp_int(a->proto, b->proto)))
        return c;
    return cct_cmp_int(a->channels, b->channels);
}

static int cmp_key_q(const void *a, const void *b)
{
    return cmp_key(a, b);
}

/* Within a band, the configuration with the most calls first. */
static int cmp_report(const void *pa, const void *pb)
{
    const cct_audit_line *a = pa, *b = pb;
    int c;
    if ((c = cct_cmp_int(a->coll, b->coll)) || (c = cct_cmp_int(a->ranks, b->ranks)) ||
        (c = cct_cmp_int(a->nodes, b->nodes)) || (c = cct_cmp_u64(a->lo, b->lo)) ||
        (c = cct_cmp_u64(b->calls, a->calls)))
        return c;
    return cmp_key(a, b);
}

static void merge_into(void *pd, const void *ps)
{
    cct_audit_line *dst = pd;
    const cct_audit_line *src = ps;
    dst->calls += src->calls;
    dst->timed += src->timed;
    dst->total_ns += src->total_ns;
    if (src->min_bytes < dst->min_bytes)
        dst->min_bytes = src->min_bytes;
    if (src->max_bytes > dst->max_bytes)
        dst->max_bytes = src->max_bytes;
    for (int b = 0; b < CCT_RECORDING_HIST; b++)
        dst->hist[b] += src->hist[b];
    if (dst->gain <= 0) {
        dst->gain = src->gain;
        dst->gain_lo = src->gain_lo;
        dst->gain_hi = src->gain_hi;
    }
    dst->evidence_ns += src->evidence_ns;
    dst->saved_ns += src->saved_ns;
    dst->saved_lo_ns += src->saved_lo_ns;
    dst->saved_hi_ns += src->saved_hi_ns;
}

static void tally(cct_audit *a)
{
    for (size_t i = 0; i < a->n_lines; i++) {
        const cct_audit_line *l = &a->lines[i];
        a->calls += l->calls;
        a->timed += l->timed;
        a->total_ns += l->total_ns;
        if (l->verdict == CCT_AUDIT_AS_ASKED) {
            a->as_asked += l->calls;
            a->evidence_ns += l->evidence_ns;
            a->saved_ns += l->saved_ns;
            a->saved_lo_ns += l->saved_lo_ns;
            a->saved_hi_ns += l->saved_hi_ns;
        } else if (l->verdict == CCT_AUDIT_LEFT)
            a->left += l->calls;
        else if (l->verdict == CCT_AUDIT_MISMATCH) {
            a->mismatched += l->calls;
            a->mismatch_lines++;
        }
    }
}

cct_status cct_audit_run(const cct_recording *recs, size_t n, const cct_table *table,
                         cct_audit *out, cct_error *err)
{
    return cct_audit_run_gains(recs, n, table, NULL, NULL, out, err);
}

cct_status cct_audit_run_gains(const cct_recording *recs, size_t n, const cct_table *table,
                               cct_audit_gain_fn gain, void *ctx, cct_audit *out, cct_error *err)
{
    gain_source g = {gain, ctx};
    memset(out, 0, sizeof *out);
    size_t total = cct_recording_row_count(recs, n);
    out->n_recordings = n;
    if (total && !(out->lines = calloc(total, sizeof *out->lines)))
        return cct_error_set(err, CCT_ENOMEM, "audit: out of memory");
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < recs[i].n_comms; c++) {
            const cct_rec_comm *m = &recs[i].comms[c];
            out->n_comms++;
            out->dropped += m->dropped;
            out->late += m->late;
            for (size_t r = 0; r < m->n_rows; r++) {
                const cct_rec_row *row = &m->rows[r];
                cct_audit_line *l = &out->lines[out->n_lines++];
                l->coll = row->coll;
                l->ranks = m->ranks;
                l->nodes = m->nodes;
                l->algo = row->algo;
                l->proto = row->proto;
                l->channels = row->channels;
                l->calls = row->calls;
                l->timed = row->timed;
                l->total_ns = row->total_ns;
                l->min_bytes = l->max_bytes = row->bytes;
                memcpy(l->hist, row->hist, sizeof l->hist);
                judge(l, table, row->bytes, &g);
                if (l->verdict == CCT_AUDIT_AS_ASKED && !(l->evidence_ns > 0))
                    out->no_evidence_calls += l->calls;
            }
        }
    out->n_lines =
        cct_sort_merge(out->lines, out->n_lines, sizeof *out->lines, cmp_key_q, merge_into);
    if (out->n_lines)
        qsort(out->lines, out->n_lines, sizeof *out->lines, cmp_report);
    tally(out);
    return CCT_OK;
}

void cct_audit_destroy(cct_audit *audit)
{
    free(audit->lines);
    memset(audit, 0, sizeof *audit);
}

const char *cct_audit_verdict_name(cct_audit_verdict v)
{
    switch (v) {
    case CCT_AUDIT_AS_ASKED:
        return "as_asked";
    case CCT_AUDIT_LEFT:
        return "left_to_nccl";
    case CCT_AUDIT_MISMATCH:
        return "mismatch";
    default:
        return "no_table";
    }
}
