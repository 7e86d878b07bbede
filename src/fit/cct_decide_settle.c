/*
 * cct_decide_settle.c - the settle stage of the decision pipeline: the per-size winners
 * (cct_dbands) made into bands a table can carry (cct_dsettled).
 *
 * Equal neighbours form bands.  Bands resting on fewer than min_band_sizes measured sizes,
 * and interior bands spanning less than min_band_factor (max/min; edge bands are
 * open-ended), are handed to the neighbour that loses least over them, those missing the
 * most sizes first and among them the cheapest to hand over, until none is left.  With
 * per-cycle samples, two neighbouring bands whose configurations are not shown different
 * become one (unless that loses more than a tie against the best at some size), and an end
 * size next to NCCL's choice where the band's gain has faded into a tie goes to NCCL.  A band
 * whose configuration does not beat NCCL's default with evidence -- with per-cycle samples,
 * the mean of its sizes' paired gains significant against the floor (cct_gain_stratified) --
 * is handed back to NCCL's choice (those sizes kept), and the bands are settled again until
 * nothing changes.  Boundaries lie on a readable grid between the last size of one band and
 * the first of the next (cct_grid_edge); next to NCCL's choice, at the measured size.
 * docs/fitting.md, "Decisions" and "Evidence", gives the reasons.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"
#include "cct_decide_stats.h"

static uint64_t boundary(const cct_dview *x, const cct_dband *l, const cct_dband *r)
{
    uint64_t xa = x->grid[l->i1], xb = x->grid[r->i0];
    /* NCCL's choice keeps every size up to the first measured size where another
     * configuration won (and from the one after the last): no guess between. */
    if (r->conf == x->def)
        return cct_grid_above(xa, xb);
    if (l->conf == x->def)
        return xb;
    return cct_grid_edge(xa, xb); /* readable, not where two models happen to cross */
}

/* Runs of equal winners, with their boundaries.  Returns the number of bands. */
static size_t make_bands(const cct_dview *x, const size_t *win, cct_dband *bands)
{
    size_t nb = 0;
    for (size_t i = 0; i < x->n_grid; i++) {
        if (nb && bands[nb - 1].conf == win[i]) {
            bands[nb - 1].i1 = i;
            continue;
        }
        bands[nb++] = (cct_dband){i, i, win[i], 0, CCT_BYTES_INF};
    }
    for (size_t k = 1; k < nb; k++) {
        uint64_t u = boundary(x, &bands[k - 1], &bands[k]);
        bands[k - 1].hi = u;
        bands[k].lo = u;
    }
    return nb;
}

/* Worst slowdown over band b's sizes if choice c took them; INFINITY when c has no time at
 * one of them. */
static double takeover_cost(const cct_dview *x, const cct_dband *b, size_t c)
{
    double worst = 0.0;
    for (size_t i = b->i0; i <= b->i1; i++) {
        double tc = cct_dview_time(x, c, x->grid[i]);
        double tw = cct_dview_time(x, b->conf, x->grid[i]);
        if (isnan(tc))
            return INFINITY;
        if (tc / tw > worst)
            worst = tc / tw;
    }
    return worst;
}

/* How far band k falls short of the minimum width: 0 when wide enough, else larger for
 * narrower bands (fewer measured sizes first, then the smaller span).  Edge bands are
 * open-ended: only the count of sizes applies to them. */
static double shortfall(const cct_dview *x, const cct_dband *bands, size_t nb, size_t k)
{
    const cct_dband *b = &bands[k];
    bool edge = k == 0 || k + 1 == nb;
    double span = edge ? INFINITY : (double)b->hi / (double)b->lo;
    size_t sizes = b->i1 - b->i0 + 1;
    bool few = x->opt->min_band_sizes > 1 && sizes < (size_t)x->opt->min_band_sizes;
    bool thin = x->opt->min_band_factor > 1.0 && span < x->opt->min_band_factor;
    if (!few && !thin)
        return 0.0;
    return (double)(few ? x->opt->min_band_sizes - (int)sizes : 0) + 1.0 / span;
}

static bool band_kept(const bool *kept, const cct_dband *b)
{
    for (size_t i = b->i0; i <= b->i1; i++)
        if (kept[i])
            return true;
    return false;
}

/* Absorb too-narrow bands; returns the final number of bands.  A band holding a kept size
 * (nobody else can serve it, or NCCL's choice by want of evidence) is never absorbed.
 *
 * Order: the bands missing the most measured sizes first; among those, the one a neighbour
 * takes over at the least cost, then the narrowest, then the first.  So two short neighbours
 * that one configuration serves well become one band before either is handed elsewhere.
 * Narrowest first (the span of a one-size band is only where its guessed edges fall) handed
 * the narrower of two such bands to a third configuration and left the other alone, to be
 * absorbed at a larger loss (4-GPU NVLink reducescatter: 4 MiB, 20 % faster than NCCL's
 * default, went back to NCCL). */
static size_t settle_bands(const cct_dview *x, size_t *win, bool *kept, cct_dband *bands)
{
    for (;;) {
        size_t nb = make_bands(x, win, bands);
        if (nb < 2)
            return nb;
        size_t pick_k = SIZE_MAX, to = SIZE_MAX;
        double pick_cost = INFINITY, pick_short = 0.0;
        for (size_t k = 0; k < nb; k++) {
            double f = band_kept(kept, &bands[k]) ? 0.0 : shortfall(x, bands, nb, k);
            if (!(f > 0.0))
                continue;
            double cl = k > 0 ? takeover_cost(x, &bands[k], bands[k - 1].conf) : INFINITY;
            double cr = k + 1 < nb ? takeover_cost(x, &bands[k], bands[k + 1].conf) : INFINITY;
            double c = cl <= cr ? cl : cr;
            /* measured sizes missing: shortfall's whole part */
            double deficit = floor(f), pick_deficit = floor(pick_short);
            if (pick_k == SIZE_MAX || deficit > pick_deficit ||
                (deficit == pick_deficit &&
                 (c < pick_cost || (c == pick_cost && f > pick_short)))) {
                pick_k = k;
                pick_cost = c;
                pick_short = f;
                to = isinf(c) ? SIZE_MAX : cl <= cr ? bands[k - 1].conf : bands[k + 1].conf;
            }
        }
        if (pick_k == SIZE_MAX)
            return nb;
        const cct_dband *b = &bands[pick_k];
        for (size_t i = b->i0; i <= b->i1; i++) {
            if (to == SIZE_MAX)
                kept[i] = true; /* nobody else can serve it: it stays */
            else
                win[i] = to;
        }
    }
}

/* The band's paired evidence: at every size of the band where its configuration and NCCL's
 * default share cycles, their paired gain and its moderated variance (the size's pooled
 * spread as the prior, cct_moderated_variance); the band's gain is the mean over those sizes
 * (cct_gain_stratified), judged by cct_gain_significant against the band's mean noise floor.
 * *ok false when no size has 2 paired cycles. */
static bool band_paired_evidence(const cct_dview *x, const cct_dband *b, cct_stratum *st, bool *ok)
{
    const cct_dconf *w = &x->sec->conf[b->conf];
    size_t n = 0;
    double noise = 0.0;
    for (size_t i = b->i0; i <= b->i1; i++) {
        size_t m = cct_dview_pair(x, x->base, w, x->grid[i], x->pool);
        if (m < 2)
            continue;
        int df;
        double v = cct_moderated_variance(x->pool, m, x->var[i], cct_dview_prior_df(x, i), &df);
        cct_gain_est g = cct_gain_estimate(x->pool, m);
        st[n++] = (cct_stratum){g.log_gain, v / (double)m, df, (int)m};
        noise += x->noise[i];
    }
    *ok = n > 0;
    if (!*ok)
        return false;
    cct_gain_est g = cct_gain_stratified(st, n);
    return cct_gain_significant(&g, noise / (double)n, x->opt->max_loss_default);
}

/* Whether band b's configuration beats NCCL's default with evidence: at the sizes where both
 * were measured, the mean log gain exceeds the guard and evidence_z standard errors
 * (cct_decide_evidence), and at the rule's reference size the default is not faster. */
static bool band_has_evidence(const cct_dview *x, const cct_dband *b, double *lg, double *se,
                              cct_stratum *st)
{
    const cct_dconf *w = &x->sec->conf[b->conf];
    bool paired_ok = false;
    if (x->opt->cycles && !band_paired_evidence(x, b, st, &paired_ok) && paired_ok)
        return false;
    size_t k = 0;
    for (size_t i = b->i0; i <= b->i1; i++) {
        double tw, uw, td, ud;
        uint64_t at = x->grid[i];
        if (!cct_dconf_measured(w, at, x->opt->fit.rel_floor, &tw, &uw) ||
            !cct_dconf_measured(x->base, at, x->opt->fit.rel_floor, &td, &ud))
            continue;
        lg[k] = log(cct_dview_default_time(x, at) / cct_dconf_time(w, at));
        se[k++] = sqrt(uw * uw + ud * ud);
    }
    if (!paired_ok &&
        !cct_decide_evidence(lg, se, k, x->opt->max_loss_default, x->opt->evidence_z, NULL, NULL))
        return false;
    uint64_t ref = x->grid[cct_dview_ref_index(x, b->conf, b->i0, b->i1)];
    double td = cct_dview_default_time(x, ref);
    return !(td < cct_dconf_time(w, ref)); /* margin_default >= 0 (unknown is no loss) */
}

/* With per-cycle samples: two neighbouring bands of two configurations become one when the
 * configuration first in the tie order (NCCL's choice at the pair's middle size) is neither
 * clearly slower than the other over the other band's sizes nor estimated slower there by
 * more than the threshold (their cycles pooled; the median of the log ratios; threshold the
 * larger of paired_tie and the band's mean noise floor), was measured at every one of them,
 * and at each of them is not estimated slower than the best candidate there (best, from the
 * bands stage) by more than paired_tie.  Returns whether a band changed hands (the bands must
 * be settled again). */
static bool merge_equal_neighbours(const cct_dview *x, size_t *win, const bool *kept,
                                   const size_t *best, const cct_dband *bands, size_t nb)
{
    if (!x->opt->cycles)
        return false;
    for (size_t k = 0; k + 1 < nb; k++) {
        const cct_dband *l = &bands[k], *r = &bands[k + 1];
        if (l->conf == x->def || r->conf == x->def)
            continue;
        int da = -1, dp = -1;
        cct_dview_default_choice(x, x->grid[l->i1], &da, &dp);
        const cct_dconf *cl = &x->sec->conf[l->conf], *cr = &x->sec->conf[r->conf];
        bool left_first = cct_decide_tie_order(&cl->cfg, &cr->cfg, da, dp) < 0;
        const cct_dband *other = left_first ? r : l;
        const cct_dconf *keep = left_first ? cl : cr, *lose = left_first ? cr : cl;
        size_t n = 0;
        double noise = 0.0;
        bool all = true;
        for (size_t i = other->i0; i <= other->i1 && all; i++) {
            size_t m = cct_dview_pair(x, keep, lose, x->grid[i], x->pool + n);
            all = m >= 2 && !kept[i];
            n += m;
            noise += x->noise[i];
        }
        if (!all)
            continue;
        noise /= (double)(other->i1 - other->i0 + 1);
        cct_gain_est g = cct_gain_estimate(x->pool, n); /* log(t_keep / t_lose) */
        /* equal: not shown slower, and not estimated slower by more than a tie either (with
         * two noisy cycles a size, 30 % slower is rarely shown) */
        if (cct_clearly_slower(&g, x->pool, noise, x->opt->paired_tie) ||
            cct_estimated_slower(&g, noise, x->opt->paired_tie))
            continue;
        bool near = true; /* and within the tie of the best at each of those sizes: equal
                           * neighbours must not chain two ties into a loss twice as large */
        for (size_t i = other->i0; i <= other->i1 && near; i++) {
            if (best[i] == SIZE_MAX || &x->sec->conf[best[i]] == keep)
                continue;
            double lr[CCT_PAIR_MAX];
            size_t m = cct_dview_pair(x, keep, &x->sec->conf[best[i]], x->grid[i], lr);
            cct_gain_est gb = cct_dview_estimate(x, i, lr, m); /* log(t_keep / t_best) */
            near = m < 2 || !cct_estimated_slower(&gb, 0.0, x->opt->paired_tie);
        }
        if (!near)
            continue;
        for (size_t i = other->i0; i <= other->i1; i++)
            win[i] = left_first ? l->conf : r->conf;
        return true;
    }
    return false;
}

/* Band b's pooled paired gain over NCCL's default: every cycle of every size of the band. */
static cct_gain_est band_gain(const cct_dview *x, const cct_dband *b)
{
    const cct_dconf *w = &x->sec->conf[b->conf];
    size_t k = 0;
    for (size_t i = b->i0; i <= b->i1; i++)
        k += cct_dview_pair(x, x->base, w, x->grid[i], x->pool + k);
    return cct_gain_estimate(x->pool, k);
}

/* Whether the gain of band b's configuration over NCCL's default has faded into a tie at grid
 * index i while the band as a whole clears it: the paired estimate there (the median over
 * the cycles) below the larger of the floor and paired_tie, the band's pooled estimate not.
 * Without two paired cycles there is nothing to judge: not faded. */
static bool end_faded(const cct_dview *x, const cct_dband *b, size_t i)
{
    double tie = fmax(x->noise[i], log1p(x->opt->paired_tie));
    cct_gain_est g = cct_dview_paired(x, x->base, &x->sec->conf[b->conf], x->grid[i]);
    if (!(g.cycles >= 2 && g.log_gain < tie))
        return false;
    cct_gain_est all = band_gain(x, b);
    return all.cycles >= 2 && all.log_gain >= tie;
}

/* Whether grid indices [i0, i1] still make a band the settling keeps: min_band_sizes sizes
 * spanning min_band_factor (measured sizes; the band's edges lie beyond them). */
static bool still_wide(const cct_dview *x, size_t i0, size_t i1)
{
    if (i1 < i0)
        return false;
    size_t min = x->opt->min_band_sizes > 1 ? (size_t)x->opt->min_band_sizes : 1;
    double span = (double)x->grid[i1] / (double)x->grid[i0];
    return i1 - i0 + 1 >= min && !(span < x->opt->min_band_factor);
}

/* With per-cycle samples: an end size of a band whose neighbour on that side is NCCL's choice
 * goes to NCCL (kept) when the band's gain has faded there, one size at a time while what
 * remains is still a band settling keeps.  Where a gain fades with size it crosses the significance
 * threshold at a size that noise moves from tune to tune; the tie threshold, well above the floor,
 * places the end where the estimate, not its interval, is small.  A band whose whole gain is
 * below the tie is left to the significance rule alone.  Returns whether a size
 * changed hands. */
static bool trim_faded_ends(const cct_dview *x, size_t *win, bool *kept, const cct_dband *bands,
                            size_t nb)
{
    if (!x->opt->cycles)
        return false;
    for (size_t k = 0; k < nb; k++) {
        const cct_dband *b = &bands[k];
        if (b->conf == x->def)
            continue;
        size_t at = SIZE_MAX;
        if (k + 1 < nb && bands[k + 1].conf == x->def && still_wide(x, b->i0, b->i1 - 1) &&
            end_faded(x, b, b->i1))
            at = b->i1;
        else if (k > 0 && bands[k - 1].conf == x->def && still_wide(x, b->i0 + 1, b->i1) &&
                 end_faded(x, b, b->i0))
            at = b->i0;
        if (at == SIZE_MAX)
            continue;
        win[at] = x->def;
        kept[at] = true;
        return true;
    }
    return false;
}

/* Settle the bands, then hand every band whose configuration does not beat NCCL's default
 * with evidence back to NCCL (those sizes kept: never absorbed again) and settle again,
 * until every band other than NCCL's choice has its evidence.  Returns the number of bands. */
static size_t settle_with_evidence(const cct_dview *x, size_t *win, bool *kept, const size_t *best,
                                   cct_dband *bands, double *scratch, cct_stratum *strata)
{
    for (;;) {
        size_t nb = settle_bands(x, win, kept, bands);
        if (x->def == SIZE_MAX)
            return nb;
        if (merge_equal_neighbours(x, win, kept, best, bands, nb) ||
            trim_faded_ends(x, win, kept, bands, nb))
            continue;
        bool changed = false;
        for (size_t k = 0; k < nb; k++) {
            const cct_dband *b = &bands[k];
            if (b->conf == x->def || band_has_evidence(x, b, scratch, scratch + x->n_grid, strata))
                continue;
            for (size_t i = b->i0; i <= b->i1; i++) {
                if (!isfinite(cct_dview_default_time(x, x->grid[i])))
                    continue; /* no default to fall back to there: the band keeps it */
                win[i] = x->def;
                kept[i] = true;
                changed = true;
            }
        }
        if (!changed)
            return nb;
    }
}

void cct_dsettled_free(cct_dsettled *s)
{
    free(s->bands);
    s->bands = NULL;
    s->n_bands = 0;
}

cct_status cct_decide_settle(const cct_dbands *in, cct_dsettled *out, cct_error *err)
{
    const cct_dview *x = &in->view;
    size_t n1 = x->sec->n ? x->sec->n : 1;
    memset(out, 0, sizeof *out);
    out->view = x;
    size_t *win = malloc(sizeof *win * n1);
    bool *kept = calloc(n1, sizeof *kept);
    double *scratch = malloc(sizeof *scratch * 2 * n1);
    cct_stratum *strata = malloc(sizeof *strata * n1);
    out->bands = malloc(sizeof *out->bands * n1);
    cct_status st = CCT_OK;
    if (!win || !kept || !scratch || !strata || !out->bands) {
        cct_dsettled_free(out);
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    } else {
        memcpy(win, in->win, sizeof *win * x->n_grid);
        out->n_bands = settle_with_evidence(x, win, kept, in->best, out->bands, scratch, strata);
    }
    free(win);
    free(kept);
    free(scratch);
    free(strata);
    return st;
}
