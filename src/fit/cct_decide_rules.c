/*
 * cct_decide_rules.c - the last stage of the decision pipeline: the settled bands
 * (cct_dsettled) written as a section's rules, with the models of its usable configurations
 * and its alignment penalties.
 *
 * A band of a configuration is one rule; a band of NCCL's choice gets one rule per run of
 * grid sizes at which NCCL chose the same algorithm and protocol, split on the readable grid
 * (where NCCL switches between two measured sizes is not known).  Each rule carries the
 * numbers at its reference size (cct_dview_ref_index): the predicted time, the margins over
 * the runner-up and over NCCL's default, and the measured evidence (paired gain and interval,
 * noise floor, cycles).  A rule then gets the chunk size of its configuration that beats
 * NCCL's own chunk over its sizes with evidence (cct_decide_chunk.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cct_decide_internal.h"

/* The measured evidence of a rule of configuration w at grid index gi: the paired gain over
 * NCCL's default with its interval, the noise floor and the cycles; from the two points'
 * statistics when they have no samples (cycles then counts the fewer samples); no_baseline
 * when NCCL's default was not timed; nothing when the default is only modelled there. */
static void rule_evidence(const cct_dview *x, const cct_dconf *w, size_t gi, cct_rule *r)
{
    uint64_t at = x->grid[gi];
    double tw, uw, td, ud;
    if (!x->base || !cct_dconf_measured(x->base, at, x->opt->fit.rel_floor, &td, &ud)) {
        r->no_baseline = !x->base;
        return;
    }
    cct_gain_est g = cct_dview_paired(x, x->base, w, at);
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

static cct_rule make_rule(const cct_dview *x, size_t conf, size_t i0, size_t i1, uint64_t lo,
                          uint64_t hi)
{
    cct_rule r = cct_rule_blank();
    r.min_bytes = lo;
    r.max_bytes = hi;
    size_t gi = cct_dview_ref_index(x, conf, i0, i1);
    uint64_t at = x->grid[gi];
    if (conf == x->def) {
        int da = 0, dp = 0;
        cct_dview_default_choice(x, at, &da, &dp); /* known: x->def is only set when it is */
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
    r.predicted_us = cct_dview_time(x, conf, at);
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
    double td = cct_dview_default_time(x, at);
    if (!isnan(td))
        r.margin_default = td / r.predicted_us - 1.0;
    if (conf != x->def)
        rule_evidence(x, &x->sec->conf[conf], gi, &r);
    return r;
}

/* The rules of one band.  A band of NCCL's choice gets one rule per run of grid sizes at
 * which NCCL chose the same algorithm and protocol, split at the geometric middle (where
 * NCCL switches between two measured sizes is not known). */
static cct_status add_band_rules(const cct_dview *x, const cct_dband *b, cct_section *out)
{
    size_t i0 = b->i0;
    uint64_t lo = b->lo;
    for (size_t i = b->i0; i <= b->i1; i++) {
        uint64_t hi = b->hi;
        if (b->conf == x->def && i < b->i1) {
            int a0 = 0, p0 = 0, a1 = 0, p1 = 0;
            cct_dview_default_choice(x, x->grid[i], &a0, &p0);
            cct_dview_default_choice(x, x->grid[i + 1], &a1, &p1);
            if (a0 == a1 && p0 == p1)
                continue;
            hi = cct_grid_edge(x->grid[i], x->grid[i + 1]);
        } else if (i < b->i1) {
            continue;
        }
        cct_rule r = make_rule(x, b->conf, i0, i, lo, hi);
        cct_decide_chunk(x, &r, i0, i);
        if (cct_section_add_rule(out, &r) != CCT_OK)
            return CCT_ENOMEM;
        i0 = i + 1;
        lo = hi;
    }
    return CCT_OK;
}

static cct_status add_rules(const cct_dview *x, const cct_dband *bands, size_t nb, cct_section *out)
{
    for (size_t k = 0; k < nb; k++)
        if (add_band_rules(x, &bands[k], out) != CCT_OK)
            return CCT_ENOMEM;
    for (size_t i = 0; i < x->sec->n_conf; i++) {
        const cct_dconf *c = &x->sec->conf[i];
        if (c->fitted && !c->excluded && !c->baseline && c->cfg.chunk == 0 &&
            cct_section_add_model(out, &c->model) != CCT_OK)
            return CCT_ENOMEM;
    }
    for (size_t i = 0; i < x->sec->n_pen; i++)
        if (cct_section_add_penalty(out, &x->sec->pen[i]) != CCT_OK)
            return CCT_ENOMEM;
    return CCT_OK;
}

cct_status cct_decide_rules(const cct_dsettled *in, cct_section *out, cct_error *err)
{
    if (add_rules(in->view, in->bands, in->n_bands, out) != CCT_OK) {
        cct_section_release(out);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    return CCT_OK;
}
