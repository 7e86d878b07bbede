/*
 * cct_decide_table.c - a whole table from a run's points: one section per (collective,
 * ranks, nodes), one choice of buffer sizes for all of them.
 *
 * NCCL_BUFFSIZE and its LL/LL128 siblings are read once per communicator from the
 * environment, so a table cannot switch them per size or per collective: one setting is
 * used for every section (cct_dsec_choose_buffers: NCCL's defaults unless another setting
 * is clearly faster on the points measured under both), and recorded in recommended_env
 * when it differs from NCCL's default.
 * Sections are built in sorted order, so the table is the same for any input order.
 */
#include <math.h>
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
    for (size_t i = keep; i < t->n_sections; i++) {
        free(t->sections[i].rules);
        free(t->sections[i].models);
        free(t->sections[i].penalties);
    }
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

static int cmp_buffers(const void *pa, const void *pb)
{
    const cct_buffers *a = pa, *b = pb;
    if (a->buffsize != b->buffsize)
        return a->buffsize < b->buffsize ? -1 : 1;
    if (a->ll_buffsize != b->ll_buffsize)
        return a->ll_buffsize < b->ll_buffsize ? -1 : 1;
    if (a->ll128_buffsize != b->ll128_buffsize)
        return a->ll128_buffsize < b->ll128_buffsize ? -1 : 1;
    return 0;
}

/* The buffer setting for the whole table.  NCCL's defaults unless another setting,
 * measured in every section and as far in size as the defaults for every protocol, is
 * faster than them by more than twice the tie threshold in the geometric mean of every pair
 * of points measured under both (same configuration, same size, a protocol whose buffers
 * the setting changes); with several such settings, the fastest.  When no point was measured at the
 * default buffers at all, the setting that serves the most measured sizes (then loses least) is
 * used instead. */
cct_status cct_dsec_choose_buffers(const cct_dsec *secs, size_t n_secs, double tie,
                                   cct_buffers *out, cct_error *err)
{
    cct_buffers *all = NULL;
    size_t n_all = 0;
    cct_status st = CCT_OK;
    for (size_t s = 0; s < n_secs && st == CCT_OK; s++) {
        cct_buffers *b;
        size_t nb;
        if ((st = cct_dsec_buffers(&secs[s], &b, &nb, err)) != CCT_OK)
            break;
        cct_buffers *grown = realloc(all, sizeof *all * (n_all + nb + 1));
        if (!grown) {
            free(b);
            st = cct_error_set(err, CCT_ENOMEM, "out of memory");
            break;
        }
        all = grown;
        for (size_t i = 0; i < nb; i++) {
            bool seen = false;
            for (size_t k = 0; k < n_all && !seen; k++)
                seen = memcmp(&all[k], &b[i], sizeof b[i]) == 0;
            if (!seen)
                all[n_all++] = b[i];
        }
        free(b);
    }
    *out = (cct_buffers){0, 0, 0};
    if (st != CCT_OK || n_all == 0) {
        free(all);
        return st;
    }
    qsort(all, n_all, sizeof *all, cmp_buffers); /* NCCL's defaults (0) sort first */
    bool have_default =
        all[0].buffsize == 0 && all[0].ll_buffsize == 0 && all[0].ll128_buffsize == 0;
    if (have_default) {
        /* twice the tie threshold: comparisons across sessions carry the session noise */
        double best_gm = 1.0 - 2.0 * tie;
        for (size_t i = 1; i < n_all; i++) {
            /* eligible only if it was measured in every section (it would apply to all),
             * and every protocol measured at the defaults reaches as far under it: a
             * setting whose measurements stop early cannot serve the large sizes */
            bool everywhere = true;
            double sum = 0.0;
            size_t pairs = 0;
            for (size_t s = 0; s < n_secs; s++) {
                size_t before = pairs;
                cct_dsec_pair_buffers(&secs[s], &all[i], &sum, &pairs);
                everywhere &= pairs > before;
                uint64_t rd[CCT_NUM_PROTOS], rb[CCT_NUM_PROTOS];
                cct_dsec_buffers_reach_proto(&secs[s], &all[0], rd);
                cct_dsec_buffers_reach_proto(&secs[s], &all[i], rb);
                for (int p = 0; p < CCT_NUM_PROTOS; p++)
                    everywhere &= rd[p] == 0 || rb[p] >= rd[p];
            }
            double gm = pairs && everywhere ? exp(sum / (double)pairs) : INFINITY;
            if (gm < best_gm) {
                best_gm = gm;
                *out = all[i];
            }
        }
    } else {
        size_t best_cov = 0;
        double best_loss = INFINITY;
        for (size_t i = 0; i < n_all; i++) {
            double loss = 0;
            size_t cov = 0;
            for (size_t s = 0; s < n_secs; s++)
                cct_dsec_score_buffers(&secs[s], &all[i], &loss, &cov);
            if (cov > best_cov || (cov == best_cov && loss < best_loss)) {
                best_cov = cov;
                best_loss = loss;
                *out = all[i];
            }
        }
    }
    free(all);
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
