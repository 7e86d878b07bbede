/*
 * cct_decide_bands.c - the bands stage of the decision pipeline: who wins at each measured
 * size of a prepared section under the chosen buffers (cct_dsec + cct_buffers -> cct_dbands).
 *
 * The evaluation grid is every size at which some candidate was measured.  With per-cycle
 * samples, NCCL's choice stays unless a candidate's paired gain estimate over NCCL's default
 * clears the run's noise floor and the guard; then the first in the tie order among those
 * neither clearly slower than the best nor estimated slower by more than paired_tie, at
 * NCCL's channel count unless a fixed count is faster by itself.  Whether the gain is real is
 * judged over the band the sizes form (cct_decide_settle.c).
 * Otherwise each candidate's time is its measured median, else its model's prediction
 * inside its measured range (never extrapolated); configurations within `tie` of the fastest
 * tie, and the tie goes to fewer channels, then the protocol least hurt by misalignment,
 * then NCCL's own choice at that size, then the faster, then the configuration order; NCCL's
 * choice is left only for a gain above max_loss_default.  The runs of equal winners are
 * settled next (cct_decide_settle.c).  docs/fitting.md, "Decisions", gives the reasons.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"
#include "cct_decide_stats.h"

static int channel_rank(int channels)
{
    return channels == 0 ? CCT_TABLE_MAX_CHANNELS : channels; /* 0: as many as NCCL likes */
}

static double align_rank(const cct_dsec *sec, int proto)
{
    double p;
    return cct_dsec_worst_penalty(sec, proto, &p) ? p : INFINITY; /* unmeasured: last */
}

/* Whether configuration i is what NCCL runs by itself at bytes: its algorithm and protocol
 * at NCCL's channel count (the buffer sizes are the table's either way). */
static bool is_default_twin(const cct_dview *x, size_t i, uint64_t bytes)
{
    const cct_config *c = &x->sec->conf[i].cfg;
    int da, dp;
    return c->channels == 0 && cct_dview_default_choice(x, bytes, &da, &dp) && c->algo == da &&
           c->proto == dp;
}

/* Negative when configuration i is preferred over k at bytes (both tied). */
static int prefer(const cct_dview *x, size_t i, size_t k, double ti, double tk, uint64_t bytes)
{
    const cct_dconf *a = &x->sec->conf[i], *b = &x->sec->conf[k];
    int ca = channel_rank(a->cfg.channels), cb = channel_rank(b->cfg.channels);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    double pa = align_rank(x->sec, a->cfg.proto), pb = align_rank(x->sec, b->cfg.proto);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    int da, dp;
    if (cct_dview_default_choice(x, bytes, &da, &dp)) {
        bool ma = a->cfg.algo == da && a->cfg.proto == dp;
        bool mb = b->cfg.algo == da && b->cfg.proto == dp;
        if (ma != mb)
            return ma ? -1 : 1;
    }
    if (ti != tk)
        return ti < tk ? -1 : 1;
    return i < k ? -1 : i > k;
}

/* The choice at bytes: an index into sec->conf, or x->def. */
static size_t pick(const cct_dview *x, uint64_t bytes)
{
    double best = INFINITY;
    size_t fastest = SIZE_MAX;
    for (size_t q = 0; q < x->n_cand; q++) {
        double t = cct_dconf_time(&x->sec->conf[x->cand[q]], bytes);
        if (t < best) {
            best = t;
            fastest = x->cand[q];
        }
    }
    size_t win = SIZE_MAX;
    double tw = NAN;
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        double t = cct_dconf_time(&x->sec->conf[i], bytes);
        if (!(t <= best * (1.0 + x->opt->tie)))
            continue;
        if (win == SIZE_MAX || prefer(x, i, win, t, tw, bytes) < 0) {
            win = i;
            tw = t;
        }
    }
    double tb = cct_dview_default_time(x, bytes);
    if (win == SIZE_MAX || !isfinite(tb))
        return win;
    double guard = 1.0 + x->opt->max_loss_default;
    if (x->def != SIZE_MAX) {
        /* Leave NCCL's choice only for a gain larger than the guard: the preferred tie, else
         * the fastest; the forced twin of NCCL's choice is NCCL's choice. */
        if (!(tw * guard < tb))
            win = best * guard < tb ? fastest : x->def;
        return win != x->def && is_default_twin(x, win, bytes) ? x->def : win;
    }
    /* NCCL's choice unknown (no baseline point recorded it): the preference among ties must
     * not cost more than the guard against NCCL's default; fall back to the fastest. */
    return tw > tb * guard ? fastest : win;
}

/* Configuration win (chosen at grid index gi) with NCCL's channel count instead of its fixed
 * one, unless the fixed count by itself is faster than the same algorithm, protocol and
 * buffers at NCCL's count, paired in the same cycles: significantly (cct_gain_significant,
 * against the noise floor and the guard), or by more than channel_tie in the estimate (the
 * adaptive search stops timing a slower twin after two cycles, too few to show 40 %).  The channel
 * count of a configuration that wins by its algorithm or protocol is usually within noise of NCCL's
 * (tree/ll with 1 channel or NCCL's over sockets), and which one a session finds significant over
 * NCCL's default flipped between re-tunes.  Not for NCCL's own algorithm and protocol: there NCCL's
 * count is NCCL's choice, and the gain over NCCL's default already is the channel change by itself.
 * Kept when the twin at NCCL's count was not timed in the same cycles. */
static size_t channels_to_nccl(const cct_dview *x, size_t win, size_t gi, int da, int dp)
{
    const cct_config *w = &x->sec->conf[win].cfg;
    if (w->channels == 0 || (w->algo == da && w->proto == dp))
        return win;
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        const cct_config *z = &x->sec->conf[i].cfg;
        if (z->channels != 0 || z->algo != w->algo || z->proto != w->proto ||
            z->buffsize != w->buffsize || z->ll_buffsize != w->ll_buffsize ||
            z->ll128_buffsize != w->ll128_buffsize)
            continue;
        double lr[CCT_PAIR_MAX];
        size_t k = cct_dview_pair(x, &x->sec->conf[i], &x->sec->conf[win], x->grid[gi], lr);
        cct_gain_est g = cct_dview_estimate(x, gi, lr, k); /* log(t_nccl_count / t_fixed) */
        if (k < 2 || cct_gain_significant(&g, x->noise[gi], x->opt->max_loss_default) ||
            cct_estimated_slower(&g, x->noise[gi], x->opt->channel_tie))
            return win;
        return i;
    }
    return win;
}

/* Whether a paired gain over NCCL's default is a candidate for a band at its size: its
 * estimate (the median over at least 2 cycles) above the run's noise floor and the guard.
 * Significance is judged over the band (cct_decide_settle.c): one size's two or four
 * cycles rarely show a real 15 % gain, its band's sizes together do. */
static bool clears(const cct_gain_est *g, double noise, double guard)
{
    return g->cycles >= 2 && g->log_gain > fmax(noise, log1p(guard));
}

/* The previous table's choice at grid index gi given this fit's choice win (an index into
 * sec->conf, not x->def) and the best candidate best: its configuration (algorithm, protocol,
 * channels) where it still clears the floor and the guard here and is not significantly slower
 * than the best beyond the tie; NCCL's choice where the previous table left the size to NCCL
 * and win's gain is not significant here; else win.  The previous rule's buffer sizes are the
 * table's, as are this fit's. */
static size_t keep_previous(const cct_dview *x, size_t gi, size_t win, size_t best, int da, int dp)
{
    const cct_table *prev = x->opt->previous;
    const cct_section *ps =
        prev ? cct_table_find_section(prev, x->sec->coll, x->sec->ranks, x->sec->nodes, 1, 0)
             : NULL;
    uint64_t bytes = x->grid[gi];
    const cct_rule *pr = ps ? cct_section_lookup(ps, bytes) : NULL;
    if (!pr)
        return win;
    const cct_dconf *conf = x->sec->conf;
    double noise = x->noise[gi], guard = x->opt->max_loss_default;
    if (pr->channels == 0 && pr->algo == da && pr->proto == dp) {
        cct_gain_est g = cct_dview_paired(x, x->base, &conf[win], bytes);
        return cct_gain_significant(&g, noise, guard) ? win : x->def;
    }
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        const cct_config *c = &conf[i].cfg;
        if (c->algo != pr->algo || c->proto != pr->proto || c->channels != pr->channels)
            continue;
        if (i == win)
            return win;
        cct_gain_est g = cct_dview_paired(x, x->base, &conf[i], bytes);
        double lr[CCT_PAIR_MAX];
        size_t k = cct_dview_pair(x, &conf[i], &conf[best], bytes, lr);
        cct_gain_est behind = cct_dview_estimate(x, gi, lr, k); /* log(t_i / t_best) */
        return clears(&g, noise, guard) && !cct_gain_significant(&behind, noise, x->opt->paired_tie)
                   ? i
                   : win;
    }
    return win;
}

/* The choice at grid index gi from per-cycle pairs: NCCL's choice unless a candidate measured
 * here clears the noise floor and the guard in its estimate (clears); then, among those that
 * do, are not clearly slower than the best and not estimated slower than it by more than
 * paired_tie, the first in the tie order (cct_decide_tie_order); with a previous table, its
 * choice where it still holds (keep_previous).  *ok false: no paired data here, the
 * statistics-only pick() decides. */
static size_t pick_paired(const cct_dview *x, size_t gi, bool *ok, size_t *best_out)
{
    uint64_t bytes = x->grid[gi];
    size_t nd;
    *ok = false;
    if (x->def == SIZE_MAX || !cct_dview_samples(x, x->base, bytes, &nd) || nd < 2)
        return SIZE_MAX;
    *ok = true;
    int da = -1, dp = -1;
    cct_dview_default_choice(x, bytes, &da, &dp);
    const cct_dconf *conf = x->sec->conf;
    double guard = x->opt->max_loss_default, noise = x->noise[gi];
    size_t best = SIZE_MAX;
    cct_gain_est gb = {0};
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        cct_gain_est g = cct_dview_paired(x, x->base, &conf[i], bytes);
        if (!clears(&g, noise, guard))
            continue;
        if (best == SIZE_MAX || g.log_gain > gb.log_gain ||
            (g.log_gain == gb.log_gain &&
             cct_decide_tie_order(&conf[i].cfg, &conf[best].cfg, da, dp) < 0)) {
            best = i;
            gb = g;
        }
    }
    *best_out = best;
    if (best == SIZE_MAX)
        return x->def;
    size_t win = best;
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        if (i == best || cct_decide_tie_order(&conf[i].cfg, &conf[win].cfg, da, dp) >= 0)
            continue;
        cct_gain_est g = cct_dview_paired(x, x->base, &conf[i], bytes);
        double lr[CCT_PAIR_MAX];
        size_t k = cct_dview_pair(x, &conf[i], &conf[best], bytes, lr);
        cct_gain_est behind = cct_dview_estimate(x, gi, lr, k);
        if (clears(&g, noise, guard) &&
            !cct_clearly_slower(&behind, lr, noise, x->opt->paired_tie) &&
            !cct_estimated_slower(&behind, 0.0, x->opt->paired_tie))
            win = i;
    }
    win = channels_to_nccl(x, win, gi, da, dp);
    win = keep_previous(x, gi, win, best, da, dp);
    return win != x->def && is_default_twin(x, win, bytes) ? x->def : win;
}

void cct_dbands_free(cct_dbands *d)
{
    cct_dview_free(&d->view);
    free(d->win);
    free(d->best);
    d->win = NULL;
    d->best = NULL;
}

cct_status cct_decide_bands(const cct_dsec *sec, const cct_decide_options *opt,
                            const cct_buffers *b, cct_dbands *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    cct_status st = cct_dview_init(sec, opt, b, &out->view, err);
    if (st != CCT_OK)
        return st;
    const cct_dview *x = &out->view;
    out->win = malloc(sizeof *out->win * (sec->n ? sec->n : 1));
    out->best = malloc(sizeof *out->best * (sec->n ? sec->n : 1));
    if (!out->win || !out->best) {
        cct_dbands_free(out);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->n_grid; i++) {
        bool paired_ok = false;
        out->best[i] = SIZE_MAX;
        out->win[i] = opt->cycles ? pick_paired(x, i, &paired_ok, &out->best[i]) : SIZE_MAX;
        if (!paired_ok)
            out->win[i] = pick(x, x->grid[i]);
        if (out->win[i] == SIZE_MAX) { /* cannot happen: each grid size is someone's measurement */
            st = cct_error_set(err, CCT_EINVAL, "no configuration has a time at %llu bytes",
                               (unsigned long long)x->grid[i]);
            cct_dbands_free(out);
            return st;
        }
    }
    return CCT_OK;
}
