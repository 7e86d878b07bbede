/*
 * cct_cycles.c - an index from a measured point's key to its per-cycle samples (see
 * cct_cycles.h): loaded from a store run by run, sorted once, looked up by binary search.
 *
 * Keys compare with cct_fit_config_compare (which orders every field but the call mode),
 * then the call mode, the size and in place, so two points that the fitter tells apart are
 * told apart here too.
 */
#include "cct_cycles.h"

#include <stdlib.h>
#include <string.h>

#include "cct_fit.h"

void cct_cycles_init(cct_cycles *c)
{
    memset(c, 0, sizeof *c);
}

void cct_cycles_free(cct_cycles *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->e[i].t);
    free(c->e);
    cct_cycles_init(c);
}

static int key_compare(const cct_config *ca, uint64_t ba, bool ia, const cct_config *cb,
                       uint64_t bb, bool ib)
{
    int r = cct_fit_config_compare(ca, cb);
    if (r)
        return r;
    int pa = cct_config_pipe_ops(ca), pb = cct_config_pipe_ops(cb);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    if (ca->reg_buff != cb->reg_buff)
        return ca->reg_buff ? 1 : -1;
    if (ba != bb)
        return ba < bb ? -1 : 1;
    return (int)ia - (int)ib;
}

static int cmp_entry(const void *pa, const void *pb)
{
    const cct_cycles_entry *a = pa, *b = pb;
    return key_compare(&a->cfg, a->bytes, a->in_place, &b->cfg, b->bytes, b->in_place);
}

cct_status cct_cycles_add(cct_cycles *c, const cct_point *p, const double *t, size_t n,
                          cct_error *err)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        cct_cycles_entry *e = realloc(c->e, cap * sizeof *e);
        if (!e)
            return cct_error_set(err, CCT_ENOMEM, "out of memory");
        c->e = e;
        c->cap = cap;
    }
    double *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    if (n)
        memcpy(copy, t, n * sizeof *copy);
    c->e[c->n++] = (cct_cycles_entry){p->cfg, p->bytes, p->in_place, copy, n};
    return CCT_OK;
}

void cct_cycles_sort(cct_cycles *c)
{
    if (c->n > 1)
        qsort(c->e, c->n, sizeof *c->e, cmp_entry); /* equal keys: either may be found */
}

cct_status cct_cycles_load(cct_store *store, const int64_t *runs, size_t n_runs, cct_cycles *c,
                           cct_error *err)
{
    cct_store_run *all = NULL;
    size_t n_all = 0;
    cct_status st = cct_store_list_runs(store, &all, &n_all, err);
    for (size_t r = 0; st == CCT_OK && r < n_all; r++) {
        bool wanted = n_runs == 0;
        for (size_t j = 0; j < n_runs; j++)
            wanted |= runs[j] == all[r].id;
        if (!wanted)
            continue;
        cct_point *pts = NULL;
        size_t n = 0;
        st = cct_store_load_points(store, &all[r].id, 1, &pts, &n, err);
        for (size_t i = 0; st == CCT_OK && i < n; i++) {
            if (pts[i].status != CCT_POINT_OK)
                continue;
            double *t = NULL;
            size_t k = 0;
            st = cct_store_load_samples(store, all[r].id, &pts[i].cfg, pts[i].bytes,
                                        pts[i].in_place, &t, &k, err);
            if (st == CCT_OK && k > 0)
                st = cct_cycles_add(c, &pts[i], t, k, err);
            free(t);
        }
        free(pts);
    }
    free(all);
    cct_cycles_sort(c);
    return st;
}

const double *cct_cycles_find(const cct_cycles *c, const cct_point *p, size_t *n)
{
    *n = 0;
    if (!c)
        return NULL;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cct_cycles_entry *e = &c->e[mid];
        int r = key_compare(&e->cfg, e->bytes, e->in_place, &p->cfg, p->bytes, p->in_place);
        if (r == 0) {
            *n = e->n;
            return e->t;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
