/*
 * cct_argmin.c - the per-size argmin table (see cct_argmin.h).
 *
 * Points are sorted by (collective, ranks, nodes, size) so the result does not depend on the
 * order of the store; at one size the fastest median wins, ties to the earlier configuration
 * in cct_fit_config_compare order (NCCL's default sorts first).
 */
#include "cct_argmin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_stats.h"
#include "cct_fit.h"

static int cmp_point(const void *pa, const void *pb)
{
    const cct_point *a = *(const cct_point *const *)pa, *b = *(const cct_point *const *)pb;
    if (a->cfg.coll != b->cfg.coll)
        return a->cfg.coll < b->cfg.coll ? -1 : 1;
    if (a->cfg.ranks != b->cfg.ranks)
        return a->cfg.ranks < b->cfg.ranks ? -1 : 1;
    if (a->cfg.nodes != b->cfg.nodes)
        return a->cfg.nodes < b->cfg.nodes ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return cct_fit_config_compare(&a->cfg, &b->cfg);
}

static bool same_config(const cct_config *a, const cct_config *b)
{
    return a->coll == b->coll && a->ranks == b->ranks && a->nodes == b->nodes &&
           a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
           a->buffsize == b->buffsize && a->ll_buffsize == b->ll_buffsize &&
           a->ll128_buffsize == b->ll128_buffsize && a->dtype == b->dtype;
}

/* A configuration with a failed point at any size or alignment is unsafe. */
static bool unsafe(const cct_point *pts, size_t n, const cct_config *c)
{
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if ((p->status == CCT_POINT_CORRUPT || p->status == CCT_POINT_HANG ||
             p->status == CCT_POINT_ERROR) &&
            cct_point_is_plain(p) && same_config(&p->cfg, c))
            return true;
    }
    return false;
}

static bool usable(const cct_point *p, bool ll128_allowed)
{
    return cct_point_is_plain(p) && p->status == CCT_POINT_OK && p->cfg.align == 0 &&
           !p->in_place && p->cfg.buffsize == 0 && p->cfg.ll_buffsize == 0 &&
           p->cfg.ll128_buffsize == 0 && isfinite(p->stats.median_us) && p->stats.median_us > 0 &&
           (ll128_allowed || p->cfg.proto != CCT_PROTO_LL128);
}

/* The decision at one size: a rule without edges. */
static cct_rule decide_size(const cct_point *const *at, size_t k, const cct_point *all, size_t n)
{
    const cct_point *best = NULL, *def = NULL;
    for (size_t i = 0; i < k; i++) {
        if (at[i]->cfg.algo == CCT_DEFAULT) {
            if (!def)
                def = at[i];
            continue;
        }
        if (unsafe(all, n, &at[i]->cfg))
            continue;
        if (!best || at[i]->stats.median_us < best->stats.median_us)
            best = at[i];
    }
    cct_rule r = cct_rule_blank();
    bool nccl_known = def && def->nccl_algo >= 0 && def->nccl_proto >= 0;
    bool def_wins = def && (!best || def->stats.median_us <= best->stats.median_us);
    bool twin = best && nccl_known && best->cfg.channels == 0 && best->cfg.algo == def->nccl_algo &&
                best->cfg.proto == def->nccl_proto;
    if (nccl_known && (def_wins || twin)) {
        r.algo = def->nccl_algo;
        r.proto = def->nccl_proto;
        r.predicted_us = def->stats.median_us;
        r.margin_default = 0.0;
    } else if (best) {
        r.algo = best->cfg.algo;
        r.proto = best->cfg.proto;
        r.channels = best->cfg.channels;
        r.predicted_us = best->stats.median_us;
        if (def)
            r.margin_default = def->stats.median_us / best->stats.median_us - 1.0;
    } else {
        r.algo = -1; /* nothing usable here */
    }
    r.ref_bytes = at[0]->bytes;
    return r;
}

static bool same_decision(const cct_rule *a, const cct_rule *b)
{
    return a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
           (a->margin_default == 0.0) == (b->margin_default == 0.0);
}

static cct_status add_section(cct_table *t, const cct_point *const *v, size_t n_v,
                              const cct_point *all, size_t n, cct_error *err)
{
    cct_section *s = cct_table_add_section(t, v[0]->cfg.coll, v[0]->cfg.ranks, v[0]->cfg.nodes);
    if (!s)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    cct_rule cur;
    bool open = false;
    uint64_t prev = 0;
    for (size_t i = 0; i < n_v;) {
        size_t j = i;
        while (j < n_v && v[j]->bytes == v[i]->bytes)
            j++;
        cct_rule r = decide_size(v + i, j - i, all, n);
        uint64_t size = v[i]->bytes;
        i = j;
        if (r.algo < 0)
            continue;
        if (open && same_decision(&cur, &r)) {
            prev = size;
            continue;
        }
        if (open) {
            cur.max_bytes = cct_grid_edge(prev, size);
            r.min_bytes = cur.max_bytes;
            if (cct_section_add_rule(s, &cur) != CCT_OK)
                return cct_error_set(err, CCT_ENOMEM, "out of memory");
        } else {
            r.min_bytes = 0;
        }
        cur = r;
        open = true;
        prev = size;
    }
    if (!open)
        return cct_error_set(err, CCT_EINVAL, "%s, %d ranks: no usable measurement",
                             cct_coll_name(v[0]->cfg.coll), v[0]->cfg.ranks);
    cur.max_bytes = CCT_BYTES_INF;
    if (cct_section_add_rule(s, &cur) != CCT_OK)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    return cct_table_check_section(s, err);
}

cct_status cct_build_argmin_table(const cct_point *points, size_t n, bool ll128_allowed,
                                  cct_table *table, cct_error *err)
{
    const cct_point **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(&points[i], ll128_allowed))
            v[k++] = &points[i];
    qsort(v, k, sizeof *v, cmp_point);
    cct_status st = CCT_OK;
    for (size_t i = 0; st == CCT_OK && i < k;) {
        size_t j = i;
        while (j < k && v[j]->cfg.coll == v[i]->cfg.coll && v[j]->cfg.ranks == v[i]->cfg.ranks &&
               v[j]->cfg.nodes == v[i]->cfg.nodes)
            j++;
        st = add_section(table, v + i, j - i, points, n, err);
        i = j;
    }
    free(v);
    if (st == CCT_OK)
        st = cct_table_check(table, err);
    return st;
}
