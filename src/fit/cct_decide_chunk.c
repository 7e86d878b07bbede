/*
 * cct_decide_chunk.c - a rule's chunk size (tuner v6): the one refinement the rules stage
 * makes after a band's configuration is settled.
 *
 * The chunk sizes a search measured (--chunk) are variants of one configuration -- same
 * algorithm, protocol, channels and buffers -- and never compete with other configurations:
 * a rule of (algorithm, protocol, channels) gets a chunk only where one of its chunk variants
 * beats the same configuration at NCCL's own chunk over the whole band, exactly as any
 * override must beat NCCL: with per-cycle samples its pooled paired gain is significant
 * (cct_gain_significant: the whole interval above the run's noise floor and the guard
 * max_loss_default); without them the median gains pass cct_decide_evidence.  The variant
 * must be measured at every size of the band where the reference was, and lose by more than
 * the tie at none of them.  Ties -- no variant with evidence -- go to NCCL's chunk (none
 * written).  Of several winners the largest gain wins.  The rule carries the chunk NCCL ran
 * when the store recorded it (the asked one capped and rounded), else the chunk asked.
 */
#include <math.h>
#include <stdlib.h>

#include "cct_decide_internal.h"

static bool same_setting(const cct_config *a, const cct_config *b)
{
    return a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
           a->buffsize == b->buffsize && a->ll_buffsize == b->ll_buffsize &&
           a->ll128_buffsize == b->ll128_buffsize;
}

/* The candidate the rule names (NCCL's own chunk), NULL when it was not measured. */
static const cct_dconf *reference(const cct_dview *x, const cct_rule *r)
{
    for (size_t q = 0; q < x->n_cand; q++) {
        const cct_dconf *c = &x->sec->conf[x->cand[q]];
        if (c->cfg.algo == r->algo && c->cfg.proto == r->proto && c->cfg.channels == r->channels)
            return c;
    }
    return NULL;
}

/* The chunk a variant's points say NCCL ran (the first that recorded it), else the asked. */
static uint64_t chunk_ran(const cct_dconf *v)
{
    for (size_t i = 0; i < v->n_all; i++)
        if (v->all[i]->chunk_used > 0)
            return v->all[i]->chunk_used;
    return v->cfg.chunk;
}

/* Whether variant v beats ref over grid indices [i0, i1]; *score its log gain. */
static bool variant_wins(const cct_dview *x, const cct_dconf *ref, const cct_dconf *v, size_t i0,
                         size_t i1, double *score)
{
    const cct_decide_options *o = x->opt;
    size_t n = i1 - i0 + 1, k = 0;
    double *lg = malloc(sizeof *lg * n), *se = malloc(sizeof *se * n);
    bool ok = lg && se;
    for (size_t i = i0; ok && i <= i1; i++) {
        double tr, ur, tv, uv;
        if (!cct_dconf_measured(ref, x->grid[i], o->fit.rel_floor, &tr, &ur))
            continue;
        if (!cct_dconf_measured(v, x->grid[i], o->fit.rel_floor, &tv, &uv))
            ok = false; /* unmeasured where the reference was: no evidence for the band */
        else if (log(tr / tv) < -log1p(o->tie))
            ok = false; /* slower than NCCL's chunk beyond the tie somewhere in the band */
        else {
            lg[k] = log(tr / tv);
            se[k++] = sqrt(ur * ur + uv * uv);
        }
    }
    double mean = 0.0;
    ok = ok && k > 0;
    if (ok && o->cycles && x->pool) {
        size_t m = 0, sizes = 0;
        double noise = 0.0;
        for (size_t i = i0; i <= i1; i++) {
            size_t got = cct_dview_pair(x, ref, v, x->grid[i], x->pool + m);
            m += got;
            sizes += got > 0;
            noise += got > 0 ? x->noise[i] : 0.0;
        }
        if (m >= 2) {
            cct_gain_est g = cct_gain_estimate(x->pool, m);
            ok = cct_gain_significant(&g, noise / (double)sizes, o->max_loss_default);
            mean = g.log_gain;
        } else {
            ok = cct_decide_evidence(lg, se, k, o->max_loss_default, o->evidence_z, &mean, NULL);
        }
    } else if (ok) {
        ok = cct_decide_evidence(lg, se, k, o->max_loss_default, o->evidence_z, &mean, NULL);
    }
    free(lg);
    free(se);
    *score = mean;
    return ok;
}

void cct_decide_chunk(const cct_dview *x, cct_rule *r, size_t i0, size_t i1)
{
    r->chunk_bytes = 0;
    const cct_dconf *ref = reference(x, r);
    if (!ref)
        return;
    double best = 0.0;
    for (size_t i = 0; i < x->sec->n_conf; i++) {
        const cct_dconf *v = &x->sec->conf[i];
        double score;
        if (v->cfg.chunk == 0 || v->excluded || v->n == 0 || !same_setting(&v->cfg, &ref->cfg) ||
            !variant_wins(x, ref, v, i0, i1, &score))
            continue;
        if (r->chunk_bytes == 0 || score > best) {
            best = score;
            r->chunk_bytes = chunk_ran(v);
        }
    }
}
