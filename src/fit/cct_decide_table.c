/*
 * cct_decide_table.c - a whole table from a run's points, orchestrated: the points grouped
 * by (collective, ranks, nodes), each group prepared (cct_decide_prepare.c), one choice of
 * buffer sizes for all of them (cct_decide_buffers.c: NCCL_BUFFSIZE and its siblings are
 * process-wide), then every section decided (cct_decide.c) and the buffer setting recorded
 * in recommended_env when it differs from NCCL's default.
 * Sections are built in sorted order, so the table is the same for any input order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"

static int cmp_topo(const void *pa, const void *pb)
{
    const cct_point *a = *(const cct_point *const *)pa, *b = *(const cct_point *const *)pb;
    if (a->cfg.coll != b->cfg.coll)
        return a->cfg.coll < b->cfg.coll ? -1 : 1;
    if (a->cfg.ranks != b->cfg.ranks)
        return a->cfg.ranks < b->cfg.ranks ? -1 : 1;
    if (a->cfg.nodes != b->cfg.nodes)
        return a->cfg.nodes < b->cfg.nodes ? -1 : 1;
    return 0;
}

static void drop_sections(cct_table *t, size_t keep)
{
    for (size_t i = keep; i < t->n_sections; i++)
        cct_section_release(&t->sections[i]);
    t->n_sections = keep;
}

static cct_status set_env(cct_table *t, const char *key, uint64_t v, cct_error *err)
{
    if (v == 0)
        return CCT_OK;
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    if (cct_table_set_env(t, key, buf) != CCT_OK)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    return CCT_OK;
}

cct_status cct_build_table(const cct_point *points, size_t n, const cct_decide_options *opt,
                           cct_table *table, cct_error *err)
{
    return cct_build_table_counted(points, n, opt, table, NULL, err);
}

cct_status cct_build_table_counted(const cct_point *points, size_t n, const cct_decide_options *opt,
                                   cct_table *table, size_t *skipped_out, cct_error *err)
{
    cct_decide_options def;
    if (!opt) {
        cct_decide_options_default(&def);
        opt = &def;
    }
    if (n == 0 || !points)
        return cct_error_set(err, CCT_EINVAL, "nothing to decide: no points");
    size_t keep = table->n_sections;
    const cct_point **order = malloc(sizeof *order * n);
    cct_point *copy = malloc(sizeof *copy * n);
    cct_dsec *secs = calloc(n, sizeof *secs);
    size_t n_secs = 0;
    cct_status st = CCT_OK;
    if (!order || !copy || !secs) {
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = &points[i];
    qsort(order, n, sizeof *order, cmp_topo);
    for (size_t i = 0; i < n; i++)
        copy[i] = *order[i];
    for (size_t i = 0; i < n && st == CCT_OK;) {
        size_t j = i;
        while (j < n && cmp_topo(&order[j], &order[i]) == 0)
            j++;
        st = cct_dsec_prepare(copy + i, j - i, opt, &secs[n_secs], err);
        if (st == CCT_OK)
            n_secs++;
        else
            cct_error_prefix(err, "%s ranks=%d nodes=%d", cct_coll_name(copy[i].cfg.coll),
                             copy[i].cfg.ranks, copy[i].cfg.nodes);
        i = j;
    }
    cct_buffers b = {opt->buffsize, opt->ll_buffsize, opt->ll128_buffsize};
    if (st == CCT_OK && opt->auto_buffers)
        st = cct_dsec_choose_buffers(secs, n_secs, opt->tie, &b, err);
    size_t built = 0, skipped = 0;
    for (size_t s = 0; s < n_secs && st == CCT_OK; s++) {
        /* a topology where only NCCL's default was measured (an imported nccl-tests log
         * without NCCL_ALGO/NCCL_PROTO) has nothing to decide: skipped, and counted */
        if (!cct_dsec_has_candidates(&secs[s])) {
            skipped++;
            continue;
        }
        st = cct_dsec_build(&secs[s], opt, &b, table, err);
        built++;
    }
    if (skipped_out)
        *skipped_out = skipped;
    if (st == CCT_OK && built == 0)
        st = cct_error_set(err, CCT_EINVAL,
                           "no collective has a forced configuration measured, only NCCL's "
                           "default: nothing to decide (import logs run with NCCL_ALGO and "
                           "NCCL_PROTO, or measure with ccltune search)");
    if (st == CCT_OK)
        st = cct_table_check(table, err);
    if (st == CCT_OK && (st = set_env(table, "NCCL_BUFFSIZE", b.buffsize, err)) == CCT_OK &&
        (st = set_env(table, "NCCL_LL_BUFFSIZE", b.ll_buffsize, err)) == CCT_OK)
        st = set_env(table, "NCCL_LL128_BUFFSIZE", b.ll128_buffsize, err);
done:
    if (st != CCT_OK && table)
        drop_sections(table, keep);
    for (size_t s = 0; s < n_secs; s++)
        cct_dsec_free(&secs[s]);
    free(secs);
    free(copy);
    free(order);
    return st;
}
