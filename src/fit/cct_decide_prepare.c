/*
 * cct_decide_prepare.c - the first stage of the decision pipeline: one section's points made
 * ready for deciding (a cct_dsec): validated, sorted, grouped into configurations, failed
 * configurations excluded, every usable configuration fitted, and the alignment penalties
 * measured (cct_decide_align.c).
 *
 * Sorting first on every numeric field of a point makes all later work independent of the
 * order the points came in (the determinism contract of cct_decide.h): floating-point sums
 * are then always taken in the same order.  A configuration here is a cct_config without
 * its alignment; its aligned (align 0) OK points feed its model, its other points only the
 * alignment penalties and the exclusion test.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"
#include "cct_fit_internal.h"

static int cmp_d(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static int cmp_point(const void *pa, const void *pb)
{
    const cct_point *a = *(const cct_point *const *)pa, *b = *(const cct_point *const *)pb;
    int c = cct_fit_config_compare(&a->cfg, &b->cfg);
    if (c)
        return c;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    if ((c = (a->status > b->status) - (a->status < b->status)) ||
        (c = (int)a->in_place - (int)b->in_place) ||
        (c = cmp_d(a->stats.median_us, b->stats.median_us)) ||
        (c = cmp_d(a->stats.p95_us, b->stats.p95_us)) ||
        (c = cmp_d(a->stats.min_us, b->stats.min_us)) ||
        (c = cmp_d(a->stats.max_us, b->stats.max_us)) ||
        (c = cmp_d(a->stats.mean_us, b->stats.mean_us)) || (c = cmp_d(a->stats.cv, b->stats.cv)) ||
        (c = (a->stats.n > b->stats.n) - (a->stats.n < b->stats.n)) ||
        (c = (a->nccl_algo > b->nccl_algo) - (a->nccl_algo < b->nccl_algo)) ||
        (c = (a->nccl_proto > b->nccl_proto) - (a->nccl_proto < b->nccl_proto)))
        return c;
    return (int)a->noisy - (int)b->noisy;
}

static bool same_conf(const cct_config *a, const cct_config *b)
{
    cct_config x = *a, y = *b;
    x.align = y.align = 0;
    return cct_fit_config_compare(&x, &y) == 0;
}

static cct_status check_input(const cct_point *points, size_t n, const cct_decide_options *opt,
                              int *dtype, cct_error *err)
{
    if (n == 0 || !points)
        return cct_error_set(err, CCT_EINVAL, "nothing to decide: no points");
    const cct_config *k = &points[0].cfg;
    if (k->coll < 0 || k->coll >= CCT_NUM_COLLS || k->ranks < 1 || k->nodes < 1 ||
        k->nodes > k->ranks)
        return cct_error_set(err, CCT_EINVAL,
                             "point 1: collective %d, ranks %d, nodes %d is not a valid topology",
                             k->coll, k->ranks, k->nodes);
    bool types[CCT_NUM_DTYPES] = {false};
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &points[i];
        if (p->cfg.coll != k->coll || p->cfg.ranks != k->ranks || p->cfg.nodes != k->nodes)
            return cct_error_set(err, CCT_EINVAL,
                                 "point %zu is %s ranks=%d nodes=%d, point 1 %s ranks=%d "
                                 "nodes=%d: a section is one collective on one topology",
                                 i + 1, cct_coll_name(p->cfg.coll), p->cfg.ranks, p->cfg.nodes,
                                 cct_coll_name(k->coll), k->ranks, k->nodes);
        if (p->cfg.dtype < 0 || p->cfg.dtype >= CCT_NUM_DTYPES)
            return cct_error_set(err, CCT_EINVAL, "point %zu: unknown data type %d", i + 1,
                                 p->cfg.dtype);
        if ((p->cfg.algo != CCT_DEFAULT && (p->cfg.algo < 0 || p->cfg.algo >= CCT_NUM_ALGOS)) ||
            (p->cfg.proto != CCT_DEFAULT && (p->cfg.proto < 0 || p->cfg.proto >= CCT_NUM_PROTOS)) ||
            p->cfg.channels < 0 || p->cfg.channels > CCT_TABLE_MAX_CHANNELS)
            return cct_error_set(err, CCT_EINVAL,
                                 "point %zu: algorithm %d, protocol %d or channels %d out of range",
                                 i + 1, p->cfg.algo, p->cfg.proto, p->cfg.channels);
        if ((p->cfg.algo == CCT_DEFAULT) != (p->cfg.proto == CCT_DEFAULT))
            return cct_error_set(err, CCT_EINVAL,
                                 "point %zu: a baseline leaves both algorithm and protocol to "
                                 "NCCL (one of them is forced)",
                                 i + 1);
        if (p->status == CCT_POINT_OK) {
            cct_status st = cct_fit_check_point(p, i, err);
            if (st != CCT_OK)
                return st;
        }
        types[p->cfg.dtype] = true;
    }
    int count = 0, only = -1;
    for (int t = 0; t < CCT_NUM_DTYPES; t++)
        if (types[t]) {
            count++;
            only = t;
        }
    if (opt->dtype >= 0) {
        if (opt->dtype >= CCT_NUM_DTYPES || !types[opt->dtype])
            return cct_error_set(err, CCT_EINVAL, "no point has the data type asked for (%s)",
                                 cct_dtype_name(opt->dtype));
        *dtype = opt->dtype;
    } else if (count > 1) {
        return cct_error_set(err, CCT_EINVAL,
                             "the points mix data types (%s and %s): choose one (dtype option)",
                             cct_dtype_name(0), cct_dtype_name(1));
    } else {
        *dtype = only;
    }
    return CCT_OK;
}

/* Fit one configuration's aligned OK points. */
static cct_status fit_conf(cct_dconf *c, const cct_fit_options *fopt, cct_error *err)
{
    cct_obs *o = malloc(sizeof *o * c->n);
    if (!o)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++) {
        o[i].bytes = c->pts[i]->bytes;
        o[i].y = c->pts[i]->stats.median_us;
        o[i].sig = cct_fit_sigma(c->pts[i], fopt->rel_floor);
    }
    memset(&c->model, 0, sizeof c->model);
    c->model.algo = c->cfg.algo;
    c->model.proto = c->cfg.proto;
    c->model.channels = c->cfg.channels;
    c->model.buffsize = c->cfg.buffsize;
    c->model.ll_buffsize = c->cfg.ll_buffsize;
    c->model.ll128_buffsize = c->cfg.ll128_buffsize;
    cct_status st = cct_fit_obs(o, c->n, fopt, &c->model, NULL, err);
    free(o);
    if (st == CCT_OK)
        c->fitted = true;
    return st;
}

static bool failed(const cct_point *p)
{
    return p->status == CCT_POINT_CORRUPT || p->status == CCT_POINT_HANG ||
           p->status == CCT_POINT_ERROR;
}

cct_status cct_dsec_prepare(const cct_point *points, size_t n, const cct_decide_options *opt,
                            cct_dsec *sec, cct_error *err)
{
    memset(sec, 0, sizeof *sec);
    int dtype = 0;
    cct_status st = check_input(points, n, opt, &dtype, err);
    if (st != CCT_OK)
        return st;
    sec->coll = points[0].cfg.coll;
    sec->ranks = points[0].cfg.ranks;
    sec->nodes = points[0].cfg.nodes;
    sec->dtype = dtype;
    sec->pts = malloc(sizeof *sec->pts * n);
    const cct_point **ok = malloc(sizeof *ok * n);
    sec->conf = calloc(n, sizeof *sec->conf);
    if (!sec->pts || !ok || !sec->conf) {
        free(ok);
        free(sec->pts);
        free(sec->conf);
        memset(sec, 0, sizeof *sec);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (points[i].cfg.dtype == dtype)
            sec->pts[sec->n++] = &points[i];
    qsort(sec->pts, sec->n, sizeof *sec->pts, cmp_point);

    /* group: same configuration apart from alignment is contiguous, aligned points first */
    size_t n_ok = 0;
    for (size_t i = 0; i < sec->n;) {
        size_t j = i;
        while (j < sec->n && same_conf(&sec->pts[j]->cfg, &sec->pts[i]->cfg))
            j++;
        cct_dconf *c = &sec->conf[sec->n_conf++];
        c->cfg = sec->pts[i]->cfg;
        c->cfg.align = 0;
        c->all = &sec->pts[i];
        c->n_all = j - i;
        c->pts = &ok[n_ok];
        c->factor = 1.0;
        c->baseline = c->cfg.algo == CCT_DEFAULT;
        c->excluded = !opt->ll128_allowed && c->cfg.proto == CCT_PROTO_LL128;
        for (size_t q = i; q < j; q++) {
            const cct_point *p = sec->pts[q];
            if (failed(p))
                c->excluded = true;
            if (p->status != CCT_POINT_OK || p->cfg.align != 0)
                continue;
            if (c->n == 0 || p->bytes != c->pts[c->n - 1]->bytes)
                c->n_sizes++;
            ok[n_ok++] = p;
            c->n++;
        }
        if (c->n) {
            c->lo = c->pts[0]->bytes;
            c->hi = c->pts[c->n - 1]->bytes;
        }
        i = j;
    }
    if (sec->n_conf == 0)
        free(ok); /* cct_dsec_free finds the block through conf[0] */
    for (size_t i = 0; i < sec->n_conf && st == CCT_OK; i++) {
        cct_dconf *c = &sec->conf[i];
        if (!c->excluded && c->n_sizes >= 2)
            st = fit_conf(c, &opt->fit, err);
    }
    if (st == CCT_OK)
        st = cct_dsec_penalties(sec, opt, err);
    if (st != CCT_OK)
        cct_dsec_free(sec);
    return st;
}
