/*
 * cct_decide_buffers.c - the buffer-size stage of the decision pipeline: one setting of
 * NCCL_BUFFSIZE and its LL/LL128 siblings for every section of a table.
 *
 * NCCL reads these once per communicator from the environment, so a table cannot switch
 * them per size or per collective: one setting is used for every section, NCCL's defaults
 * unless another setting is clearly faster on the points measured under both (pairs of the
 * same configuration at the same size, so an adaptive search that measured one setting at
 * more sizes than the other cannot bias it).  Input: the prepared sections (cct_dsec);
 * output: a cct_buffers.  Reads the sections through cct_decide_conf.c only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"

/* The distinct buffer settings of the section's candidate configurations. */
static cct_status section_buffers(const cct_dsec *sec, cct_buffers **out, size_t *n, cct_error *err)
{
    *out = NULL;
    *n = 0;
    cct_buffers *b = malloc(sizeof *b * (sec->n_conf ? sec->n_conf : 1));
    if (!b)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *c = &sec->conf[i];
        if (!cct_dconf_candidate(c))
            continue;
        cct_buffers x = {c->cfg.buffsize, c->cfg.ll_buffsize, c->cfg.ll128_buffsize};
        bool seen = false;
        for (size_t k = 0; k < *n && !seen; k++)
            seen = memcmp(&b[k], &x, sizeof x) == 0;
        if (!seen)
            b[(*n)++] = x;
    }
    *out = b;
    return CCT_OK;
}

/* Sum over the section's measured sizes of log(best time with buffers b / best time with
 * any buffers), and how many sizes b could serve. */
static void score_buffers(const cct_dsec *sec, const cct_buffers *b, double *log_loss,
                          size_t *covered)
{
    /* every measured size of a candidate: each configuration's sizes in turn (a size seen
     * by several configurations counts once per configuration; the weighting is the same
     * for every b, so the comparison stays fair) */
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *ci = &sec->conf[i];
        if (!cct_dconf_candidate(ci))
            continue;
        for (size_t p = 0; p < ci->n; p++) {
            uint64_t bytes = ci->pts[p]->bytes;
            if (p > 0 && ci->pts[p - 1]->bytes == bytes)
                continue;
            double best_any = INFINITY, best_b = INFINITY;
            for (size_t k = 0; k < sec->n_conf; k++) {
                const cct_dconf *c = &sec->conf[k];
                if (!cct_dconf_candidate(c))
                    continue;
                double t = cct_dconf_time(c, bytes);
                if (isnan(t))
                    continue;
                best_any = t < best_any ? t : best_any;
                if (cct_dconf_uses(c, b) && t < best_b)
                    best_b = t;
            }
            if (isfinite(best_b)) {
                *log_loss += log(best_b / best_any);
                (*covered)++;
            }
        }
    }
}

/* Paired comparison of buffer setting b against NCCL's default buffers: for every
 * configuration measured under both (same algorithm, protocol, channels) and every size
 * measured under both, add log(t_b / t_default).  Only measured points are compared, so an
 * adaptive search that measured one setting at more sizes than the other cannot bias it. */
static void pair_buffers(const cct_dsec *sec, const cct_buffers *b, double *sum_log, size_t *pairs)
{
    static const cct_buffers dflt = {0, 0, 0};
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *c = &sec->conf[i];
        if (!cct_dconf_candidate(c) || !cct_dconf_uses(c, b))
            continue;
        /* each variable sizes one protocol's buffers; a protocol whose buffers did not
         * change differs between sessions only by session-to-session noise (~10 % seen
         * over sockets), which must not decide the table's environment */
        bool affected = (c->cfg.proto == CCT_PROTO_SIMPLE && b->buffsize) ||
                        (c->cfg.proto == CCT_PROTO_LL && b->ll_buffsize) ||
                        (c->cfg.proto == CCT_PROTO_LL128 && b->ll128_buffsize);
        if (!affected)
            continue;
        for (size_t k = 0; k < sec->n_conf; k++) {
            const cct_dconf *d = &sec->conf[k];
            if (!cct_dconf_candidate(d) || !cct_dconf_uses(d, &dflt) ||
                d->cfg.algo != c->cfg.algo || d->cfg.proto != c->cfg.proto ||
                d->cfg.channels != c->cfg.channels)
                continue;
            size_t q = 0;
            for (size_t p = 0; p < c->n; p++) {
                uint64_t bytes = c->pts[p]->bytes;
                while (q < d->n && d->pts[q]->bytes < bytes)
                    q++;
                if (q < d->n && d->pts[q]->bytes == bytes && c->pts[p]->stats.median_us > 0 &&
                    d->pts[q]->stats.median_us > 0) {
                    *sum_log += log(c->pts[p]->stats.median_us / d->pts[q]->stats.median_us);
                    (*pairs)++;
                }
            }
        }
    }
}

/* Per protocol, the largest size its candidates reach under b (0: none). */
static void reach_proto(const cct_dsec *sec, const cct_buffers *b, uint64_t reach[CCT_NUM_PROTOS])
{
    for (int p = 0; p < CCT_NUM_PROTOS; p++)
        reach[p] = 0;
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *c = &sec->conf[i];
        if (cct_dconf_candidate(c) && cct_dconf_uses(c, b) && c->cfg.proto >= 0 &&
            c->cfg.proto < CCT_NUM_PROTOS && c->hi > reach[c->cfg.proto])
            reach[c->cfg.proto] = c->hi;
    }
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
        if ((st = section_buffers(&secs[s], &b, &nb, err)) != CCT_OK)
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
                pair_buffers(&secs[s], &all[i], &sum, &pairs);
                everywhere &= pairs > before;
                uint64_t rd[CCT_NUM_PROTOS], rb[CCT_NUM_PROTOS];
                reach_proto(&secs[s], &all[0], rd);
                reach_proto(&secs[s], &all[i], rb);
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
                score_buffers(&secs[s], &all[i], &loss, &cov);
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
