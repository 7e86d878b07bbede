/*
 * cct_decide.c - the size bands of one section: who wins where, and where the bands meet.
 *
 * The evaluation grid is every size at which some candidate was measured.  At each size
 * each candidate's time is its measured median there, else its model's prediction inside
 * its measured range (never extrapolated); configurations within `tie` of the fastest tie,
 * and the tie goes to fewer channels, then the protocol least hurt by misalignment, then
 * NCCL's own choice at that size (from the baseline points), then the faster, then the
 * configuration order.  Equal neighbours form bands.  Bands resting on fewer than
 * min_band_sizes measured sizes, and interior bands spanning less than min_band_factor
 * (max/min; edge bands are open-ended), are handed to the neighbour that loses least over
 * them, those missing the most sizes first and among them the cheapest to hand over, until
 * none is left.  A boundary
 * lies where the two neighbours' models cross between the last size of one band and the
 * first of the next (bisection on log size, to the byte); where they do not cross there, at
 * the geometric middle.  docs/fitting.md, "Decisions", gives the reasons.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_cycles.h"
#include "cct_decide_internal.h"
#include "cct_decide_stats.h"

#define PAIR_MAX 256 /* paired cycles used per size */

/* ---- crossover ---- */

typedef struct cross_fn {
    const cct_model *a, *b;
    double fa, fb;
} cross_fn;

static double cross_diff(uint64_t bytes, const cross_fn *f)
{
    return f->fa * cct_model_predict(f->a, bytes) - f->fb * cct_model_predict(f->b, bytes);
}

/* Bisection over whole bytes, splitting at the geometric middle (the curves' features are
 * spread over orders of magnitude): exact to the byte, deterministic, no global state (GSL's
 * root solvers report through a process-wide error handler). */
bool cct_decide_crossover(const cct_model *a, double factor_a, const cct_model *b, double factor_b,
                          uint64_t lo, uint64_t hi, double *at)
{
    if (!(hi > lo))
        return false;
    cross_fn f = {a, b, factor_a, factor_b};
    double dl = cross_diff(lo, &f), dh = cross_diff(hi, &f);
    if (isnan(dl) || isnan(dh) || dl == 0.0 || dh == 0.0 || (dl < 0) == (dh < 0))
        return false;
    uint64_t l = lo, h = hi;
    while (h - l > 1) {
        double g = l ? sqrt((double)l * (double)h) : (double)h / 2.0;
        uint64_t m = g >= (double)h ? h - 1 : (uint64_t)g;
        if (m <= l)
            m = l + 1;
        double dm = cross_diff(m, &f);
        if (isnan(dm))
            return false;
        if ((dm < 0) == (dl < 0)) {
            l = m;
            dl = dm;
        } else {
            h = m;
            dh = dm;
        }
    }
    *at = (double)l + dl / (dl - dh); /* within the last byte, by linear interpolation */
    return true;
}

/* ---- ranking at one size ---- */

typedef struct ctx {
    const cct_dsec *sec;
    const cct_decide_options *opt;
    size_t *cand; /* indices into sec->conf */
    size_t n_cand;
    const cct_dconf *base; /* the baseline with the chosen buffers, or NULL */
    size_t def; /* the index that stands for "NCCL's own choice" (sec->n_conf); SIZE_MAX when
                 * the baseline or the choice NCCL made is unknown: no rule can name it */
    uint64_t *grid;
    size_t n_grid;
    double *noise; /* per grid index: the A/A noise floor (a log ratio; 0 unknown) */
    double *pool;  /* n_grid * PAIR_MAX log ratios of a band */
} ctx;

static int channel_rank(int channels)
{
    return channels == 0 ? CCT_TABLE_MAX_CHANNELS : channels; /* 0: as many as NCCL likes */
}

static double align_rank(const cct_dsec *sec, int proto)
{
    double p;
    return cct_dsec_worst_penalty(sec, proto, &p) ? p : INFINITY; /* unmeasured: last */
}

/* NCCL's own (algo, proto) at the baseline size nearest to bytes (in log size) among the
 * baseline points that recorded it; false when none did. */
static bool default_choice(const ctx *x, uint64_t bytes, int *algo, int *proto)
{
    const cct_dconf *b = x->base;
    if (!b)
        return false;
    double best = INFINITY;
    double lb = log((double)(bytes ? bytes : 1));
    for (size_t i = 0; i < b->n; i++) {
        const cct_point *p = b->pts[i];
        if (p->nccl_algo < 0 || p->nccl_proto < 0)
            continue;
        double d = fabs(log((double)(p->bytes ? p->bytes : 1)) - lb);
        if (d < best) { /* strict: the smaller size wins a tie */
            best = d;
            *algo = p->nccl_algo;
            *proto = p->nccl_proto;
        }
    }
    return isfinite(best);
}

/* NCCL's default's time at bytes for ranking (measured, else the baseline's model inside its
 * range; at its protocol's worst penalty with worst_case_align), NAN when unknown. */
static double default_time(const ctx *x, uint64_t bytes)
{
    if (!x->base)
        return NAN;
    double t = cct_dconf_time(x->base, bytes);
    int da, dp;
    double pen;
    if (x->opt->worst_case_align && default_choice(x, bytes, &da, &dp) &&
        cct_dsec_worst_penalty(x->sec, dp, &pen))
        t *= 1.0 + pen;
    return t;
}

/* Time of choice i (a configuration, or x->def) at bytes for ranking. */
static double conf_time(const ctx *x, size_t i, uint64_t bytes)
{
    return i == x->def ? default_time(x, bytes) : cct_dconf_time(&x->sec->conf[i], bytes);
}

/* Whether configuration i is what NCCL runs by itself at bytes: its algorithm and protocol
 * at NCCL's channel count (the buffer sizes are the table's either way). */
static bool is_default_twin(const ctx *x, size_t i, uint64_t bytes)
{
    const cct_config *c = &x->sec->conf[i].cfg;
    int da, dp;
    return c->channels == 0 && default_choice(x, bytes, &da, &dp) && c->algo == da &&
           c->proto == dp;
}

/* ---- per-cycle pairs ---- */

/* The per-cycle samples of configuration c's first point at bytes that has them. */
static const double *samples_at(const ctx *x, const cct_dconf *c, uint64_t bytes, size_t *n)
{
    *n = 0;
    if (!x->opt->cycles || !c)
        return NULL;
    for (size_t i = 0; i < c->n; i++) {
        if (c->pts[i]->bytes != bytes)
            continue;
        const double *t = cct_cycles_find(x->opt->cycles, c->pts[i], n);
        if (t && *n)
            return t;
    }
    return NULL;
}

/* Writes the log ratios log(t_r / t_c) of the cycles r and c share at bytes; returns how many. */
static size_t pair_at(const ctx *x, const cct_dconf *r, const cct_dconf *c, uint64_t bytes,
                      double *out)
{
    size_t nr, nc;
    const double *tr = samples_at(x, r, bytes, &nr), *tc = samples_at(x, c, bytes, &nc);
    return tr && tc ? cct_paired_log_ratios(tr, nr, tc, nc, PAIR_MAX, out) : 0;
}

/* The paired gain of c over r at bytes. */
static cct_gain_est paired(const ctx *x, const cct_dconf *r, const cct_dconf *c, uint64_t bytes)
{
    double lr[PAIR_MAX];
    return cct_gain_estimate(lr, pair_at(x, r, c, bytes, lr));
}

/* The forced twin of NCCL's own choice at bytes among the candidates, NULL when unmeasured. */
static const cct_dconf *twin_at(const ctx *x, uint64_t bytes)
{
    int da, dp;
    if (!default_choice(x, bytes, &da, &dp))
        return NULL;
    for (size_t q = 0; q < x->n_cand; q++) {
        const cct_dconf *c = &x->sec->conf[x->cand[q]];
        if (c->cfg.algo == da && c->cfg.proto == dp && c->cfg.channels == 0)
            return c;
    }
    return NULL;
}

/* The noise floor at every grid size: what the A/A control shows as a gain where there is
 * none.  At each size where NCCL's default and the forced twin of its own choice share
 * cycles, their paired gain (the median of the per-cycle log ratios, cct_gain_estimate); the
 * floor is the root mean square of those apparent gains at the size and its two grid
 * neighbours, else over the whole section.  The per-cycle spread itself is not the floor:
 * the paired interval already carries it.  A section with no twin at all takes the default's
 * own cycle-to-cycle spread, times sqrt(2 / n) (the spread of a median of n A/A pairs). */
static void compute_noise(const ctx *x, double *aa, double *app)
{
    double all_ss = 0.0, self_ss = 0.0;
    size_t all_n = 0, self_n = 0;
    for (size_t i = 0; i < x->n_grid; i++) {
        app[i] = NAN;
        const cct_dconf *t = twin_at(x, x->grid[i]);
        size_t k = x->base && t ? pair_at(x, x->base, t, x->grid[i], aa) : 0;
        if (k >= 2) {
            app[i] = cct_gain_estimate(aa, k).log_gain;
            all_ss += app[i] * app[i];
            all_n++;
        }
        size_t nd;
        const double *d = samples_at(x, x->base, x->grid[i], &nd);
        if (nd < 2)
            continue;
        double mean = 0.0, ss = 0.0;
        for (size_t q = 0; q < nd; q++)
            mean += log(d[q]) / (double)nd;
        for (size_t q = 0; q < nd; q++)
            ss += (log(d[q]) - mean) * (log(d[q]) - mean);
        self_ss += 2.0 * ss / (double)(nd - 1) / (double)nd;
        self_n++;
    }
    double section = all_n    ? sqrt(all_ss / (double)all_n)
                     : self_n ? sqrt(self_ss / (double)self_n)
                              : 0.0;
    for (size_t i = 0; i < x->n_grid; i++) {
        double ss = 0.0;
        size_t n = 0;
        for (size_t j = i ? i - 1 : 0; j <= i + 1 && j < x->n_grid; j++)
            if (!isnan(app[j])) {
                ss += app[j] * app[j];
                n++;
            }
        x->noise[i] = n ? sqrt(ss / (double)n) : section;
    }
}

/* Negative when configuration i is preferred over k at bytes (both tied). */
static int prefer(const ctx *x, size_t i, size_t k, double ti, double tk, uint64_t bytes)
{
    const cct_dconf *a = &x->sec->conf[i], *b = &x->sec->conf[k];
    int ca = channel_rank(a->cfg.channels), cb = channel_rank(b->cfg.channels);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    double pa = align_rank(x->sec, a->cfg.proto), pb = align_rank(x->sec, b->cfg.proto);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    int da, dp;
    if (default_choice(x, bytes, &da, &dp)) {
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
static size_t pick(const ctx *x, uint64_t bytes)
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
    double tb = default_time(x, bytes);
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

/* The choice at grid index gi from per-cycle pairs: NCCL's choice unless a candidate measured
 * here beats NCCL's default significantly and above the noise floor (cct_gain_significant);
 * then, among those that do and are not significantly slower than the best (by more than
 * the tie, or the noise), the first in the tie order (cct_decide_tie_order).  *ok false: no
 * paired data here, the statistics-only pick() decides. */
static size_t pick_paired(const ctx *x, size_t gi, bool *ok)
{
    uint64_t bytes = x->grid[gi];
    size_t nd;
    *ok = false;
    if (x->def == SIZE_MAX || !samples_at(x, x->base, bytes, &nd) || nd < 2)
        return SIZE_MAX;
    *ok = true;
    int da = -1, dp = -1;
    default_choice(x, bytes, &da, &dp);
    const cct_dconf *conf = x->sec->conf;
    double guard = x->opt->max_loss_default, noise = x->noise[gi];
    size_t best = SIZE_MAX;
    cct_gain_est gb = {0};
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        cct_gain_est g = paired(x, x->base, &conf[i], bytes);
        if (!cct_gain_significant(&g, noise, guard))
            continue;
        if (best == SIZE_MAX || g.log_gain > gb.log_gain ||
            (g.log_gain == gb.log_gain &&
             cct_decide_tie_order(&conf[i].cfg, &conf[best].cfg, da, dp) < 0)) {
            best = i;
            gb = g;
        }
    }
    if (best == SIZE_MAX)
        return x->def;
    size_t win = best;
    for (size_t q = 0; q < x->n_cand; q++) {
        size_t i = x->cand[q];
        if (i == best || cct_decide_tie_order(&conf[i].cfg, &conf[win].cfg, da, dp) >= 0)
            continue;
        cct_gain_est g = paired(x, x->base, &conf[i], bytes);
        double lr[PAIR_MAX];
        size_t k = pair_at(x, &conf[i], &conf[best], bytes, lr);
        cct_gain_est behind = cct_gain_estimate(lr, k);
        if (cct_gain_significant(&g, noise, guard) &&
            !cct_clearly_slower(&behind, lr, noise, x->opt->paired_tie))
            win = i;
    }
    return is_default_twin(x, win, bytes) ? x->def : win;
}

/* ---- bands ---- */

typedef struct band {
    size_t i0, i1;   /* grid indices, inclusive */
    size_t conf;     /* an index into sec->conf, or ctx.def */
    uint64_t lo, hi; /* [lo, hi): hi CCT_BYTES_INF for the last */
} band;

static uint64_t boundary(const ctx *x, const band *l, const band *r)
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
static size_t make_bands(const ctx *x, const size_t *win, band *bands)
{
    size_t nb = 0;
    for (size_t i = 0; i < x->n_grid; i++) {
        if (nb && bands[nb - 1].conf == win[i]) {
            bands[nb - 1].i1 = i;
            continue;
        }
        bands[nb++] = (band){i, i, win[i], 0, CCT_BYTES_INF};
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
static double takeover_cost(const ctx *x, const band *b, size_t c)
{
    double worst = 0.0;
    for (size_t i = b->i0; i <= b->i1; i++) {
        double tc = conf_time(x, c, x->grid[i]);
        double tw = conf_time(x, b->conf, x->grid[i]);
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
static double shortfall(const ctx *x, const band *bands, size_t nb, size_t k)
{
    const band *b = &bands[k];
    bool edge = k == 0 || k + 1 == nb;
    double span = edge ? INFINITY : (double)b->hi / (double)b->lo;
    size_t sizes = b->i1 - b->i0 + 1;
    bool few = x->opt->min_band_sizes > 1 && sizes < (size_t)x->opt->min_band_sizes;
    bool thin = x->opt->min_band_factor > 1.0 && span < x->opt->min_band_factor;
    if (!few && !thin)
        return 0.0;
    return (double)(few ? x->opt->min_band_sizes - (int)sizes : 0) + 1.0 / span;
}

static bool band_kept(const bool *kept, const band *b)
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
static size_t settle_bands(const ctx *x, size_t *win, bool *kept, band *bands)
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
        const band *b = &bands[pick_k];
        for (size_t i = b->i0; i <= b->i1; i++) {
            if (to == SIZE_MAX)
                kept[i] = true; /* nobody else can serve it: it stays */
            else
                win[i] = to;
        }
    }
}

/* ---- evidence against NCCL's default ---- */

/* The grid index whose numbers a rule of choice conf over grid indices [i0, i1] carries: the
 * size nearest the geometric middle of the measured sizes among those where conf is not
 * slower than NCCL's default (all of them when there is none such). */
static size_t ref_index(const ctx *x, size_t conf, size_t i0, size_t i1)
{
    double g0 = (double)(x->grid[i0] ? x->grid[i0] : 1), g1 = (double)x->grid[i1];
    double centre = 0.5 * (log(g0) + log(g1 > g0 ? g1 : g0));
    size_t ref = SIZE_MAX, any = i0;
    double best = INFINITY, best_any = INFINITY;
    for (size_t i = i0; i <= i1; i++) {
        double d = fabs(log((double)(x->grid[i] ? x->grid[i] : 1)) - centre);
        if (d < best_any) {
            best_any = d;
            any = i;
        }
        bool loses = default_time(x, x->grid[i]) < conf_time(x, conf, x->grid[i]);
        if (!loses && d < best) {
            best = d;
            ref = i;
        }
    }
    return ref != SIZE_MAX ? ref : any;
}

/* Whether band b's configuration beats NCCL's default with evidence: at the sizes where both
 * were measured, the mean log gain exceeds the guard and evidence_z standard errors
 * (cct_decide_evidence), and at the rule's reference size the default is not faster. */
/* The band's pooled paired evidence: the per-cycle log gains of its configuration over NCCL's
 * default at every size of the band where both have samples, judged by cct_gain_significant
 * against the band's mean noise floor.  *ok false when fewer than 2 cycles pair up. */
static bool band_paired_evidence(const ctx *x, const band *b, bool *ok)
{
    const cct_dconf *w = &x->sec->conf[b->conf];
    size_t k = 0, sizes = 0;
    double noise = 0.0;
    for (size_t i = b->i0; i <= b->i1; i++) {
        size_t m = pair_at(x, x->base, w, x->grid[i], x->pool + k);
        k += m;
        sizes += m > 0;
        noise += m > 0 ? x->noise[i] : 0.0;
    }
    *ok = k >= 2;
    if (!*ok)
        return false;
    cct_gain_est g = cct_gain_estimate(x->pool, k);
    return cct_gain_significant(&g, noise / (double)sizes, x->opt->max_loss_default);
}

static bool band_has_evidence(const ctx *x, const band *b, double *lg, double *se)
{
    const cct_dconf *w = &x->sec->conf[b->conf];
    bool paired_ok = false;
    if (x->opt->cycles && !band_paired_evidence(x, b, &paired_ok) && paired_ok)
        return false;
    size_t k = 0;
    for (size_t i = b->i0; i <= b->i1; i++) {
        double tw, uw, td, ud;
        uint64_t at = x->grid[i];
        if (!cct_dconf_measured(w, at, x->opt->fit.rel_floor, &tw, &uw) ||
            !cct_dconf_measured(x->base, at, x->opt->fit.rel_floor, &td, &ud))
            continue;
        lg[k] = log(default_time(x, at) / cct_dconf_time(w, at));
        se[k++] = sqrt(uw * uw + ud * ud);
    }
    if (!paired_ok &&
        !cct_decide_evidence(lg, se, k, x->opt->max_loss_default, x->opt->evidence_z, NULL, NULL))
        return false;
    uint64_t ref = x->grid[ref_index(x, b->conf, b->i0, b->i1)];
    double td = default_time(x, ref);
    return !(td < cct_dconf_time(w, ref)); /* margin_default >= 0 (unknown is no loss) */
}

/* Settle the bands, then hand every band whose configuration does not beat NCCL's default
 * with evidence back to NCCL (those sizes kept: never absorbed again) and settle again,
 * until every band other than NCCL's choice has its evidence.  Returns the number of bands. */
/* With per-cycle samples: two neighbouring bands of two configurations become one when the
 * configuration first in the tie order (NCCL's choice at the pair's middle size) is not
 * clearly slower than the other over the other band's sizes (their cycles pooled, threshold
 * the larger of paired_tie and the band's mean noise floor) and was measured at every one of
 * them.  Returns whether a band changed hands (the bands must be settled again). */
static bool merge_equal_neighbours(const ctx *x, size_t *win, const bool *kept, const band *bands,
                                   size_t nb)
{
    if (!x->opt->cycles)
        return false;
    for (size_t k = 0; k + 1 < nb; k++) {
        const band *l = &bands[k], *r = &bands[k + 1];
        if (l->conf == x->def || r->conf == x->def)
            continue;
        int da = -1, dp = -1;
        default_choice(x, x->grid[l->i1], &da, &dp);
        const cct_dconf *cl = &x->sec->conf[l->conf], *cr = &x->sec->conf[r->conf];
        bool left_first = cct_decide_tie_order(&cl->cfg, &cr->cfg, da, dp) < 0;
        const band *other = left_first ? r : l;
        const cct_dconf *keep = left_first ? cl : cr, *lose = left_first ? cr : cl;
        size_t n = 0;
        double noise = 0.0;
        bool all = true;
        for (size_t i = other->i0; i <= other->i1 && all; i++) {
            size_t m = pair_at(x, keep, lose, x->grid[i], x->pool + n);
            all = m >= 2 && !kept[i];
            n += m;
            noise += x->noise[i];
        }
        if (!all)
            continue;
        noise /= (double)(other->i1 - other->i0 + 1);
        cct_gain_est g = cct_gain_estimate(x->pool, n); /* log(t_keep / t_lose) */
        if (cct_clearly_slower(&g, x->pool, noise, x->opt->paired_tie))
            continue;
        for (size_t i = other->i0; i <= other->i1; i++)
            win[i] = left_first ? l->conf : r->conf;
        return true;
    }
    return false;
}

static size_t decide_bands(const ctx *x, size_t *win, bool *kept, band *bands, double *scratch)
{
    for (;;) {
        size_t nb = settle_bands(x, win, kept, bands);
        if (x->def == SIZE_MAX)
            return nb;
        if (merge_equal_neighbours(x, win, kept, bands, nb))
            continue;
        bool changed = false;
        for (size_t k = 0; k < nb; k++) {
            const band *b = &bands[k];
            if (b->conf == x->def || band_has_evidence(x, b, scratch, scratch + x->n_grid))
                continue;
            for (size_t i = b->i0; i <= b->i1; i++) {
                if (!isfinite(default_time(x, x->grid[i])))
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

/* ---- rules ---- */

/* The measured evidence of a rule of configuration w at grid index gi: the paired gain over
 * NCCL's default with its interval, the noise floor and the cycles; from the two points'
 * statistics when they have no samples (cycles then counts the fewer samples); no_baseline
 * when NCCL's default was not timed; nothing when the default is only modelled there. */
static void rule_evidence(const ctx *x, const cct_dconf *w, size_t gi, cct_rule *r)
{
    uint64_t at = x->grid[gi];
    double tw, uw, td, ud;
    if (!x->base || !cct_dconf_measured(x->base, at, x->opt->fit.rel_floor, &td, &ud)) {
        r->no_baseline = !x->base;
        return;
    }
    cct_gain_est g = paired(x, x->base, w, at);
    if (g.cycles >= 2) {
        r->gain = exp(g.log_gain);
        r->gain_lo = exp(g.lo);
        r->gain_hi = exp(g.hi);
        r->noise = expm1(x->noise[gi]);
        r->cycles = g.cycles;
        return;
    }
    if (!cct_dconf_measured(w, at, x->opt->fit.rel_floor, &tw, &uw))
        return;
    double lg = log(td / tw), se = sqrt(uw * uw + ud * ud);
    r->gain = td / tw;
    r->gain_lo = exp(lg - 1.96 * se);
    r->gain_hi = exp(lg + 1.96 * se);
    int n = INT32_MAX;
    for (size_t i = 0; i < w->n; i++)
        if (w->pts[i]->bytes == at && w->pts[i]->stats.n < n)
            n = w->pts[i]->stats.n;
    for (size_t i = 0; i < x->base->n; i++)
        if (x->base->pts[i]->bytes == at && x->base->pts[i]->stats.n < n)
            n = x->base->pts[i]->stats.n;
    r->cycles = n == INT32_MAX || n < 0 ? 0 : n;
}

static cct_rule make_rule(const ctx *x, size_t conf, size_t i0, size_t i1, uint64_t lo, uint64_t hi)
{
    cct_rule r = cct_rule_blank();
    r.min_bytes = lo;
    r.max_bytes = hi;
    size_t gi = ref_index(x, conf, i0, i1);
    uint64_t at = x->grid[gi];
    if (conf == x->def) {
        int da = 0, dp = 0;
        default_choice(x, at, &da, &dp); /* known: x->def is only set when it is */
        r.algo = da;
        r.proto = dp;
        r.channels = 0;
    } else {
        const cct_config *c = &x->sec->conf[conf].cfg;
        r.algo = c->algo;
        r.proto = c->proto;
        r.channels = c->channels;
    }
    r.ref_bytes = at;
    r.predicted_us = conf_time(x, conf, at);
    double runner = INFINITY;
    for (size_t q = 0; q < x->n_cand; q++) {
        if (x->cand[q] == conf)
            continue;
        double t = cct_dconf_time(&x->sec->conf[x->cand[q]], at);
        if (t < runner)
            runner = t;
    }
    if (isfinite(runner))
        r.margin = runner / r.predicted_us - 1.0;
    double td = default_time(x, at);
    if (!isnan(td))
        r.margin_default = td / r.predicted_us - 1.0;
    if (conf != x->def)
        rule_evidence(x, &x->sec->conf[conf], gi, &r);
    return r;
}

/* The rules of one band.  A band of NCCL's choice gets one rule per run of grid sizes at
 * which NCCL chose the same algorithm and protocol, split at the geometric middle (where
 * NCCL switches between two measured sizes is not known). */
static cct_status add_band_rules(const ctx *x, const band *b, cct_section *out)
{
    size_t i0 = b->i0;
    uint64_t lo = b->lo;
    for (size_t i = b->i0; i <= b->i1; i++) {
        uint64_t hi = b->hi;
        if (b->conf == x->def && i < b->i1) {
            int a0 = 0, p0 = 0, a1 = 0, p1 = 0;
            default_choice(x, x->grid[i], &a0, &p0);
            default_choice(x, x->grid[i + 1], &a1, &p1);
            if (a0 == a1 && p0 == p1)
                continue;
            hi = cct_grid_edge(x->grid[i], x->grid[i + 1]);
        } else if (i < b->i1) {
            continue;
        }
        cct_rule r = make_rule(x, b->conf, i0, i, lo, hi);
        if (cct_section_add_rule(out, &r) != CCT_OK)
            return CCT_ENOMEM;
        i0 = i + 1;
        lo = hi;
    }
    return CCT_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void section_free(cct_section *s)
{
    free(s->rules);
    free(s->models);
    free(s->penalties);
    s->rules = NULL;
    s->models = NULL;
    s->penalties = NULL;
    s->n_rules = s->n_models = s->n_penalties = 0;
}

static cct_status fill_section(const ctx *x, const band *bands, size_t nb, cct_section *out)
{
    for (size_t k = 0; k < nb; k++)
        if (add_band_rules(x, &bands[k], out) != CCT_OK)
            return CCT_ENOMEM;
    for (size_t i = 0; i < x->sec->n_conf; i++) {
        const cct_dconf *c = &x->sec->conf[i];
        if (c->fitted && !c->excluded && !c->baseline &&
            cct_section_add_model(out, &c->model) != CCT_OK)
            return CCT_ENOMEM;
    }
    for (size_t i = 0; i < x->sec->n_pen; i++)
        if (cct_section_add_penalty(out, &x->sec->pen[i]) != CCT_OK)
            return CCT_ENOMEM;
    return CCT_OK;
}

cct_status cct_dsec_decide(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                           cct_section *out, cct_error *err)
{
    ctx x = {.sec = sec, .opt = opt, .def = SIZE_MAX};
    x.cand = malloc(sizeof *x.cand * (sec->n_conf ? sec->n_conf : 1));
    x.grid = malloc(sizeof *x.grid * (sec->n ? sec->n : 1));
    size_t *win = malloc(sizeof *win * (sec->n ? sec->n : 1));
    bool *kept = calloc(sec->n ? sec->n : 1, sizeof *kept);
    band *bands = malloc(sizeof *bands * (sec->n ? sec->n : 1));
    double *scratch = malloc(sizeof *scratch * 2 * (sec->n ? sec->n : 1));
    size_t ng1 = sec->n ? sec->n : 1;
    x.noise = calloc(ng1, sizeof *x.noise);
    x.pool = opt->cycles ? malloc(sizeof *x.pool * ng1 * PAIR_MAX) : NULL;
    double *app = opt->cycles ? malloc(sizeof *app * ng1) : NULL;
    cct_status st = CCT_OK;
    if (!x.cand || !x.grid || !win || !kept || !bands || !scratch || !x.noise ||
        (opt->cycles && (!x.pool || !app))) {
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *c = &sec->conf[i];
        if (!cct_dconf_uses(c, b) || c->excluded || c->n == 0)
            continue;
        if (c->baseline) {
            if (!x.base)
                x.base = c;
            continue;
        }
        x.cand[x.n_cand++] = i;
        for (size_t p = 0; p < c->n; p++)
            x.grid[x.n_grid++] = c->pts[p]->bytes;
    }
    if (x.n_cand == 0) {
        char key[128];
        cct_section tmp = {.coll = sec->coll,
                           .ranks = sec->ranks,
                           .nodes = sec->nodes,
                           .pipe_ops = CCT_ANY,
                           .reg_buff = CCT_ANY};
        st = cct_error_set(err, CCT_EINVAL,
                           "%s: no usable configuration (buffsize %llu, ll %llu, ll128 %llu): "
                           "each is excluded (corrupt, hung or failed points, or LL128 where "
                           "forbidden), unmeasured, or a baseline",
                           cct_section_describe(&tmp, key, sizeof key),
                           (unsigned long long)b->buffsize, (unsigned long long)b->ll_buffsize,
                           (unsigned long long)b->ll128_buffsize);
        goto done;
    }
    qsort(x.grid, x.n_grid, sizeof *x.grid, cmp_u64);
    size_t ng = 0;
    for (size_t i = 0; i < x.n_grid; i++)
        if (ng == 0 || x.grid[i] != x.grid[ng - 1])
            x.grid[ng++] = x.grid[i];
    x.n_grid = ng;
    int da, dp;
    if (default_choice(&x, 0, &da, &dp))
        x.def = sec->n_conf; /* NCCL's choice is known: a rule can name it */
    if (opt->cycles)
        compute_noise(&x, x.pool, app); /* the pool is free until the bands are judged */
    for (size_t i = 0; i < x.n_grid; i++) {
        bool paired_ok = false;
        win[i] = opt->cycles ? pick_paired(&x, i, &paired_ok) : SIZE_MAX;
        if (!paired_ok)
            win[i] = pick(&x, x.grid[i]);
        if (win[i] == SIZE_MAX) { /* cannot happen: each grid size is someone's measurement */
            st = cct_error_set(err, CCT_EINVAL, "no configuration has a time at %llu bytes",
                               (unsigned long long)x.grid[i]);
            goto done;
        }
    }
    size_t nb = decide_bands(&x, win, kept, bands, scratch);
    if (fill_section(&x, bands, nb, out) != CCT_OK) {
        section_free(out);
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
done:
    free(x.cand);
    free(x.grid);
    free(win);
    free(kept);
    free(bands);
    free(scratch);
    free(x.noise);
    free(x.pool);
    free(app);
    return st;
}

cct_status cct_dsec_build(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                          cct_table *table, cct_error *err)
{
    cct_section s;
    memset(&s, 0, sizeof s);
    s.coll = sec->coll;
    s.ranks = sec->ranks;
    s.nodes = sec->nodes;
    s.pipe_ops = CCT_ANY;
    s.reg_buff = CCT_ANY;
    cct_status st = cct_dsec_decide(sec, opt, b, &s, err);
    if (st == CCT_OK)
        st = cct_table_check_section(&s, err);
    if (st == CCT_OK) {
        cct_section *dst = cct_table_add_section(table, s.coll, s.ranks, s.nodes);
        if (!dst)
            st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        else
            *dst = s;
    }
    if (st != CCT_OK)
        section_free(&s);
    return st;
}

cct_status cct_build_section(const cct_point *points, size_t n, const cct_decide_options *opt,
                             cct_table *table, cct_error *err)
{
    cct_decide_options def;
    if (!opt) {
        cct_decide_options_default(&def);
        opt = &def;
    }
    cct_dsec sec;
    cct_status st = cct_dsec_prepare(points, n, opt, &sec, err);
    if (st != CCT_OK)
        return st;
    cct_buffers b = {opt->buffsize, opt->ll_buffsize, opt->ll128_buffsize};
    if (opt->auto_buffers)
        st = cct_dsec_choose_buffers(&sec, 1, opt->tie, &b, err);
    size_t before = table->n_sections;
    if (st == CCT_OK)
        st = cct_dsec_build(&sec, opt, &b, table, err);
    if (st == CCT_OK && (st = cct_table_check(table, err)) != CCT_OK) {
        /* e.g. a section for this topology was already there: leave the table as it was */
        cct_section *last = &table->sections[before];
        free(last->rules);
        free(last->models);
        free(last->penalties);
        table->n_sections = before;
    }
    cct_dsec_free(&sec);
    return st;
}
