/*
 * cct_store_gains.c - gains over NCCL's default choice from a store's medians, per
 * recorded size (cct_store_gains.h).
 *
 * The usable points are kept in one array; a query scans the points of its collective and
 * shape for the rule's configuration (or the bench's timing of the table as the plugin
 * applied it, CCT_TUNED) and for NCCL's default, pairs them by size and keeps the pair
 * nearest the recorded size on a log scale.  Stores hold thousands of points and
 * a recording a few hundred sizes, so a scan per query is cheap.  Where a run measured the
 * same point twice the later one wins.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_store_gains.h"

static bool usable(const cct_point *p)
{
    const cct_config *c = &p->cfg;
    return p->status == CCT_POINT_OK && !p->in_place && cct_point_is_plain(p) && c->buffsize == 0 &&
           c->ll_buffsize == 0 && c->ll128_buffsize == 0 && c->align == 0 &&
           c->dtype == CCT_DTYPE_FLOAT && isfinite(p->stats.median_us) && p->stats.median_us > 0;
}

/* The ids of the controlled runs (every source but "production"); *n may be 0. */
static cct_status controlled_runs(cct_store *store, int64_t **ids, size_t *n, cct_error *err)
{
    cct_store_run *runs;
    size_t n_runs;
    *ids = NULL;
    *n = 0;
    cct_status st = cct_store_list_runs(store, &runs, &n_runs, err);
    if (st != CCT_OK)
        return st;
    if (n_runs && !(*ids = calloc(n_runs, sizeof **ids)))
        st = cct_error_set(err, CCT_ENOMEM, "store gains: out of memory");
    for (size_t i = 0; st == CCT_OK && i < n_runs; i++)
        if (strcmp(runs[i].source, "production") != 0)
            (*ids)[(*n)++] = runs[i].id;
    free(runs);
    return st;
}

cct_status cct_store_gains_load(cct_store *store, cct_store_gains *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t *ids;
    size_t n_ids;
    cct_status st = controlled_runs(store, &ids, &n_ids, err);
    if (st != CCT_OK || n_ids == 0) {
        free(ids);
        return st;
    }
    cct_point *pts;
    size_t n;
    st = cct_store_load_points(store, ids, n_ids, &pts, &n, err);
    free(ids);
    if (st != CCT_OK)
        return st;
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(&pts[i]))
            pts[w++] = pts[i];
    out->points = pts;
    out->n = w;
    return CCT_OK;
}

void cct_store_gains_destroy(cct_store_gains *g)
{
    free(g->points);
    memset(g, 0, sizeof *g);
}

static bool same_shape(const cct_point *p, int coll, int ranks, int nodes)
{
    return p->cfg.coll == coll && p->cfg.ranks == ranks && p->cfg.nodes == nodes;
}

/* The latest point of (algo, proto, channels) at exactly `bytes`; NULL if none. */
static const cct_point *find(const cct_store_gains *g, int coll, int ranks, int nodes, int algo,
                             int proto, int channels, uint64_t bytes)
{
    const cct_point *hit = NULL;
    for (size_t i = 0; i < g->n; i++) {
        const cct_point *p = &g->points[i];
        if (same_shape(p, coll, ranks, nodes) && p->bytes == bytes && p->cfg.algo == algo &&
            p->cfg.proto == proto && p->cfg.channels == channels)
            hit = p;
    }
    return hit;
}

static bool is_tuned(const cct_point *p)
{
    return p->cfg.algo == CCT_TUNED && p->cfg.proto == CCT_TUNED;
}

bool cct_store_gain(void *ctx, int coll, int ranks, int nodes, uint64_t bytes, const cct_rule *rule,
                    double *gain, double *lo, double *hi)
{
    const cct_store_gains *g = ctx;
    double best = INFINITY;
    bool best_tuned = false;
    const cct_point *tuned = NULL, *nccl = NULL;
    for (size_t i = 0; i < g->n; i++) {
        const cct_point *p = &g->points[i];
        bool bench = is_tuned(p);
        if (!same_shape(p, coll, ranks, nodes) ||
            (!bench && (p->cfg.algo != rule->algo || p->cfg.proto != rule->proto ||
                        p->cfg.channels != rule->channels)))
            continue;
        double d = fabs(log((double)p->bytes / (double)bytes));
        /* nearest first; at one size the bench's timing of the table as applied first */
        if (d > log(2.0) + 1e-9 || d > best + 1e-12 ||
            (fabs(d - best) <= 1e-12 && best_tuned && !bench))
            continue;
        const cct_point *base = find(g, coll, ranks, nodes, CCT_DEFAULT, CCT_DEFAULT, 0, p->bytes);
        if (!base)
            continue;
        best = d;
        best_tuned = bench;
        tuned = p;
        nccl = base;
    }
    if (!tuned)
        return false;
    *gain = *lo = *hi = nccl->stats.median_us / tuned->stats.median_us;
    return true;
}
