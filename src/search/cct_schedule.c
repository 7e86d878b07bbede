/*
 * cct_schedule.c - executes one session of a plan on a backend (see cct_schedule.h).
 *
 * The unit of work is a group: one collective at one requested size, every configuration
 * of the session.  A group is measured completely before anything of it is stored, and
 * its points are committed one transaction each, so an interruption loses at most the
 * group in flight.  Memory per group is bounded by configurations x samples and reused.
 * What the adaptive schedule measures (the order of sizes, what a group skips) is decided
 * in cct_schedule_adaptive.c.
 */
#include "cct_schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_schedule_adaptive.h"
#include "cct_schedule_group.h"
#include "cct_stats.h"

void cct_schedule_defaults(cct_schedule_opts *o)
{
    o->warmup = 1;
    o->cycles = 4;
    o->cycle_us = 2000.0;
    o->max_iters = 200;
    o->cv_threshold = 0.05;
    o->max_remeasure = 2;
    o->time_in_place = false;
    o->adaptive = false;
    o->prune_margin = 0.25;
    o->prune_after = 2;
    o->first_cycles = 2;
    o->coarse_factor = 4.0;
    o->fine_margin = 0.10;
    o->rest_margin = 0.5;
    o->noisy_fine_margin = 0.3;
    o->confirm_cycles = 0;
    o->confirm_margin = 0.03;
}

size_t cct_schedule_count_points(const cct_plan *plan, size_t session, bool time_in_place)
{
    const cct_session *s = &plan->sessions[session];
    return s->n_configs * plan->n_sizes * (time_in_place ? 2u : 1u);
}

/* Statistics of a point that has no samples: unknown, not zero. */
static void stats_unknown(cct_stats *st)
{
    st->n = 0;
    st->median_us = st->p95_us = st->min_us = st->max_us = st->mean_us = st->cv = NAN;
}

static cct_status note_hang(cct_schedule *s, const cct_sched_slot *sl, cct_error *err)
{
    s->hung = true;
    s->hang_config = *sl->cfg;
    s->hang_bytes = sl->bytes;
    if (s->store) {
        cct_point p;
        memset(&p, 0, sizeof p);
        p.cfg = *sl->cfg;
        p.bytes = sl->bytes;
        p.in_place = sl->in_place;
        p.status = CCT_POINT_HANG;
        stats_unknown(&p.stats);
        p.nccl_algo = sl->cfg->algo;
        p.nccl_proto = sl->cfg->proto;
        cct_error serr;
        bool found = false;
        if (cct_store_has_point(s->store, s->run_id, sl->cfg, sl->bytes, sl->in_place, &found,
                                &serr) == CCT_OK &&
            !found)
            cct_store_add_point(s->store, s->run_id, &p, NULL, 0, &serr);
    }
    return err ? err->code : CCT_ETIMEOUT;
}

/* Verification of every slot: out of place and in place, counting wrong elements. */
static cct_status verify_group(cct_schedule *s, cct_sched_group *g, cct_error *err)
{
    cct_backend *b = s->backend;
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        g->uscratch[k] = 0;
        if (sl->skip)
            continue;
        cct_status st = b->ops->select(b->ctx, sl->cfg, err);
        for (int variant = 0; st == CCT_OK && variant < 2; variant++) {
            uint64_t wrong = 0;
            cct_observed obs = {false, -1, -1, 0, 0, 0, 0, false};
            st = b->ops->verify(b->ctx, sl->cfg, sl->bytes, variant == 1, &wrong, &obs, err);
            if (st == CCT_OK) {
                g->uscratch[k] += wrong;
                if (variant == 0)
                    sl->obs = obs;
            }
        }
        if (st == CCT_ETIMEOUT)
            return note_hang(s, sl, err);
        if (st != CCT_OK) {
            /* an NCCL/CUDA error on one configuration is recorded, the search goes on */
            sl->status = CCT_POINT_ERROR;
            cct_error_clear(err);
        }
    }
    /* all ranks must agree on wrong counts and on whether the forcing applied */
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        g->uscratch[g->n + k] =
            (!sl->skip && sl->status == CCT_POINT_OK && !sl->obs.applied) ? 1 : 0;
        g->uscratch[2 * g->n + k] = sl->status == CCT_POINT_ERROR ? 1 : 0;
    }
    cct_status st = b->ops->reduce_sum(b->ctx, g->uscratch, 3 * g->n, err);
    if (st == CCT_ETIMEOUT)
        return note_hang(s, &g->slots[0], err);
    if (st != CCT_OK)
        return st;
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        if (sl->skip)
            continue;
        sl->wrong = g->uscratch[k];
        if (g->uscratch[2 * g->n + k]) {
            sl->status = CCT_POINT_ERROR;
        } else if (g->uscratch[g->n + k]) {
            sl->status = CCT_POINT_UNSUPPORTED;
        } else if (sl->wrong) {
            sl->status = CCT_POINT_CORRUPT;
        }
        /* corrupt configurations are still timed: the table must know what it rejects */
        sl->timed = sl->status == CCT_POINT_OK || sl->status == CCT_POINT_CORRUPT;
    }
    return CCT_OK;
}

/* The median of the timed slots' single-call times in g->scratch (0 when none). */
static double group_median_call(const cct_sched_group *g)
{
    double t[4096];
    size_t n = 0;
    for (size_t k = 0; k < g->n && n < sizeof t / sizeof t[0]; k++)
        if (g->slots[k].timed && g->scratch[k] > 0.0)
            t[n++] = g->scratch[k];
    cct_stats st;
    return n && cct_stats_compute(t, n, &st) == CCT_OK ? st.median_us : 0.0;
}

/* Warm-up and iterations per cycle, from the slowest rank's single-call time. */
static cct_status warm_group(cct_schedule *s, cct_sched_group *g, cct_error *err)
{
    cct_backend *b = s->backend;
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        g->scratch[k] = 0.0;
        if (!sl->timed)
            continue;
        cct_status st = b->ops->select(b->ctx, sl->cfg, err);
        double t = 0.0;
        for (int w = 0; st == CCT_OK && w < (s->opts.warmup > 0 ? s->opts.warmup : 1); w++)
            st = b->ops->time(b->ctx, sl->cfg, sl->bytes, sl->in_place, 1, &t, err);
        if (st == CCT_ETIMEOUT)
            return note_hang(s, sl, err);
        if (st != CCT_OK)
            return st;
        g->scratch[k] = t;
    }
    cct_status st = b->ops->reduce_max(b->ctx, g->scratch, g->n, err);
    if (st != CCT_OK)
        return st == CCT_ETIMEOUT ? note_hang(s, &g->slots[0], err) : st;
    /* One iteration count for the group, from the median slot's single-call time, so every
     * configuration is timed over the same number of back-to-back calls.  Per-slot counts
     * follow one noisy warm-up call each, and the share of a cycle's calls already queued
     * when its first event is recorded depends on the count: NCCL's default came out 1.5-4 %
     * faster than the same configuration forced at <= 1 MiB on the H200 x4 (NVLink).  A slot
     * over 4x the median (a clear loser) gets a count that keeps its cycle bounded. */
    double t_ref = group_median_call(g);
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        double t = g->scratch[k] > 0.0 ? g->scratch[k] : 1.0;
        double it = ceil(s->opts.cycle_us / (t_ref > 0.0 && t <= 4.0 * t_ref ? t_ref : t));
        if (it < 1.0)
            it = 1.0;
        if (it > s->opts.max_iters)
            it = s->opts.max_iters;
        sl->iters = (int)it;
    }
    return CCT_OK;
}

/* One round of mirrored cycles over the slots selected by `want`. */
static cct_status cycle_round(cct_schedule *s, cct_sched_group *g, const bool *want, int cycles,
                              cct_error *err)
{
    cct_backend *b = s->backend;
    size_t active[4096];
    size_t m = 0;
    for (size_t k = 0; k < g->n && m < sizeof active / sizeof active[0]; k++)
        if (want[k])
            active[m++] = k;
    if (m == 0 || cycles < 1)
        return CCT_OK;
    /* the same on every rank: the plan, the session, the group's first point, the rounds so far */
    uint64_t seed = strtoull(s->plan->hash, NULL, 16) ^ (uint64_t)s->session << 56 ^
                    g->slots[0].bytes * 0xff51afd7ed558ccdull ^ (uint64_t)g->slots[0].cfg->coll ^
                    (s->rounds++ << 40);
    size_t order[4096];
    for (int c = 0; c < cycles; c++) {
        cct_cycle_order(order, m, c, seed);
        for (size_t pos = 0; pos < m; pos++) {
            size_t which = order[pos];
            cct_sched_slot *sl = &g->slots[active[which]];
            cct_status st = b->ops->select(b->ctx, sl->cfg, err);
            double elapsed = 0.0;
            if (st == CCT_OK)
                st = b->ops->time(b->ctx, sl->cfg, sl->bytes, sl->in_place, sl->iters, &elapsed,
                                  err);
            if (st == CCT_ETIMEOUT)
                return note_hang(s, sl, err);
            if (st != CCT_OK)
                return st;
            g->scratch[which * (size_t)cycles + (size_t)c] = elapsed / sl->iters;
        }
    }
    cct_status st = b->ops->reduce_max(b->ctx, g->scratch, m * (size_t)cycles, err);
    if (st != CCT_OK)
        return st == CCT_ETIMEOUT ? note_hang(s, &g->slots[active[0]], err) : st;
    for (size_t pos = 0; pos < m; pos++) {
        cct_sched_slot *sl = &g->slots[active[pos]];
        for (int c = 0; c < cycles && sl->n_samples < g->per_slot_cap; c++)
            sl->samples[sl->n_samples++] = g->scratch[pos * (size_t)cycles + (size_t)c];
    }
    return CCT_OK;
}

/* Adaptive: the slot of g that is NCCL's default, the fastest forced one, and the forced one
 * with the fastest's algorithm and protocol at NCCL's channel count (NULL where none). */
static void contenders(const cct_sched_group *g, const cct_sched_slot **dflt,
                       const cct_sched_slot **best, const cct_sched_slot **twin)
{
    *dflt = *best = *twin = NULL;
    for (size_t k = 0; k < g->n; k++) {
        const cct_sched_slot *sl = &g->slots[k];
        if (!sl->timed || sl->status != CCT_POINT_OK || !sl->n_samples)
            continue;
        if (sl->cfg->algo == CCT_DEFAULT)
            *dflt = sl;
        else if (sl->cfg->algo >= 0 && (!*best || sl->stats.median_us < (*best)->stats.median_us))
            *best = sl;
    }
    for (size_t k = 0; *best && (*best)->cfg->channels != 0 && k < g->n; k++) {
        const cct_sched_slot *sl = &g->slots[k];
        if (sl->timed && sl->status == CCT_POINT_OK && sl->n_samples &&
            sl->cfg->algo == (*best)->cfg->algo && sl->cfg->proto == (*best)->cfg->proto &&
            sl->cfg->channels == 0)
            *twin = sl;
    }
}

/* Adaptive: confirmation cycles where the fastest forced configuration would leave NCCL's
 * choice (cct_schedule_opts.confirm_cycles). */
static cct_status confirm_group(cct_schedule *s, cct_sched_group *g, cct_error *err)
{
    const cct_sched_slot *dflt, *best, *twin;
    contenders(g, &dflt, &best, &twin);
    if (!dflt || !best ||
        !(best->stats.median_us < dflt->stats.median_us * (1.0 - s->opts.confirm_margin)))
        return CCT_OK;
    bool want[4096] = {false};
    for (size_t k = 0; k < g->n && k < 4096; k++)
        want[k] = &g->slots[k] == dflt || &g->slots[k] == best || &g->slots[k] == twin;
    cct_status st = cycle_round(s, g, want, s->opts.confirm_cycles, err);
    for (size_t k = 0; st == CCT_OK && k < g->n && k < 4096; k++)
        if (want[k])
            cct_stats_compute(g->slots[k].samples, g->slots[k].n_samples, &g->slots[k].stats);
    s->n_confirmed++;
    return st;
}

/* Time every timed slot; re-measure the noisy ones.  A point is noisy when the samples of
 * its latest round have a CV above the threshold: a transient disturbance in one round is
 * cured by a quiet re-measurement.  Statistics are computed over all samples, so the
 * stored CV still shows what happened. */
/* Adaptive: after the first short round, which slots are not clearly slower than the
 * fastest (their fastest sample is not above the fastest configuration's slowest)? */
static size_t ambiguous_slots(const cct_sched_group *g, bool *want)
{
    const cct_sched_slot *best = NULL;
    for (size_t k = 0; k < g->n; k++) {
        const cct_sched_slot *sl = &g->slots[k];
        if (sl->timed && sl->status == CCT_POINT_OK && sl->n_samples &&
            (!best || sl->stats.median_us < best->stats.median_us))
            best = sl;
    }
    size_t n = 0;
    for (size_t k = 0; k < g->n && k < 4096; k++) {
        const cct_sched_slot *sl = &g->slots[k];
        want[k] = sl->timed && sl->n_samples && best &&
                  (sl == best || sl->stats.min_us <= best->stats.max_us ||
                   sl->cfg->algo < 0 /* NCCL's default and the table: always full */);
        n += want[k];
    }
    return n;
}

/* Time every timed slot; re-measure the noisy ones.  A point is noisy when the samples of
 * its latest round have a CV above the threshold: a transient disturbance in one round is
 * cured by a quiet re-measurement.  Statistics are computed over all samples, so the
 * stored CV still shows what happened. */
static cct_status time_group(cct_schedule *s, cct_sched_group *g, cct_error *err)
{
    bool want[4096] = {false};
    size_t n = g->n < 4096 ? g->n : 4096;
    int full = s->opts.cycles;
    int first = s->opts.adaptive && s->opts.first_cycles < full ? s->opts.first_cycles : full;
    for (size_t k = 0; k < n; k++)
        want[k] = g->slots[k].timed;
    cct_status st = cycle_round(s, g, want, first, err);
    for (size_t k = 0; st == CCT_OK && k < n; k++)
        if (g->slots[k].timed && g->slots[k].n_samples)
            cct_stats_compute(g->slots[k].samples, g->slots[k].n_samples, &g->slots[k].stats);
    if (st == CCT_OK && first < full) {
        size_t timed = 0;
        for (size_t k = 0; k < n; k++)
            timed += g->slots[k].timed;
        size_t amb = ambiguous_slots(g, want);
        s->cycles_saved += (timed - amb) * (size_t)(full - first);
        st = cycle_round(s, g, want, full - first, err);
    } else {
        for (size_t k = 0; k < n; k++)
            want[k] = g->slots[k].timed;
    }
    size_t cycles = (size_t)full;
    for (int round = 0; st == CCT_OK && round <= s->opts.max_remeasure; round++) {
        bool any = false;
        for (size_t k = 0; k < n; k++) {
            cct_sched_slot *sl = &g->slots[k];
            bool measured_now = want[k];
            want[k] = false;
            if (!sl->timed || sl->n_samples == 0)
                continue;
            cct_stats_compute(sl->samples, sl->n_samples, &sl->stats);
            if (!measured_now)
                continue;
            cct_stats latest;
            size_t from = sl->n_samples >= cycles ? sl->n_samples - cycles : 0;
            cct_stats_compute(sl->samples + from, sl->n_samples - from, &latest);
            sl->noisy = latest.cv > s->opts.cv_threshold;
            if (sl->noisy && round < s->opts.max_remeasure) {
                want[k] = true;
                any = true;
                s->n_remeasured++;
            }
        }
        if (!any)
            break;
        st = cycle_round(s, g, want, full, err);
    }
    if (st == CCT_OK && s->opts.adaptive && s->opts.confirm_cycles > 0)
        st = confirm_group(s, g, err);
    return st;
}

static cct_status store_group(cct_schedule *s, cct_sched_group *g, cct_error *err)
{
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        if (sl->skip)
            continue;
        cct_point p;
        memset(&p, 0, sizeof p);
        p.cfg = *sl->cfg;
        p.bytes = sl->bytes;
        p.in_place = sl->in_place;
        p.wrong = sl->wrong;
        p.status = sl->status;
        p.noisy = sl->noisy;
        if (sl->timed && sl->n_samples)
            p.stats = sl->stats;
        else
            stats_unknown(&p.stats);
        bool forced = sl->cfg->algo >= 0;
        p.nccl_algo = forced ? (sl->obs.applied ? sl->cfg->algo : -1) : sl->obs.nccl_algo;
        p.nccl_proto = forced ? (sl->obs.applied ? sl->cfg->proto : -1) : sl->obs.nccl_proto;
        p.tuner_pipe_ops = sl->obs.tuner_pipe_ops;
        p.tuner_reg_buff = sl->obs.tuner_reg_buff;
        p.tuner_bytes = sl->obs.tuner_bytes;
        p.chunk_used = sl->obs.chunk_used;
        p.chunk_observed = sl->obs.chunk_observed;
        s->points_done++;
        if (sl->status == CCT_POINT_CORRUPT)
            s->n_corrupt++;
        if (sl->status == CCT_POINT_UNSUPPORTED)
            s->n_unsupported++;
        if (sl->noisy)
            s->n_noisy++;
        if (!s->store)
            continue;
        cct_status st = cct_store_add_point(s->store, s->run_id, &p, sl->samples,
                                            sl->timed ? sl->n_samples : 0, err);
        if (st != CCT_OK)
            return st;
    }
    return CCT_OK;
}

/* The stored point of slot sl in the run's points loaded at the start (resume), or NULL. */
static const cct_point *stored_point(const cct_point *pts, size_t n, const cct_sched_slot *sl)
{
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        const cct_config *a = &p->cfg, *b = sl->cfg;
        if (p->bytes == sl->bytes && p->in_place == sl->in_place && a->coll == b->coll &&
            a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
            a->buffsize == b->buffsize && a->ll_buffsize == b->ll_buffsize &&
            a->ll128_buffsize == b->ll128_buffsize && a->align == b->align &&
            a->dtype == b->dtype && a->ranks == b->ranks && a->nodes == b->nodes)
            return p;
    }
    return NULL;
}

/* What the run's stored points say about slot sl's collective, size and call mode: out[0]
 * the fastest aligned OK median (NAN: none), out[1] and out[2] NCCL's algorithm and
 * protocol as a default point observed them (-1: none).  Earlier sessions force other
 * protocols or buffers; the fastest of all is what a configuration has to beat. */
static void stored_context(const cct_point *pts, size_t n, const cct_sched_slot *sl, double *out)
{
    out[0] = NAN;
    out[1] = out[2] = -1.0;
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if (p->bytes != sl->bytes || p->in_place != sl->in_place || p->cfg.coll != sl->cfg->coll ||
            p->cfg.ranks != sl->cfg->ranks || p->cfg.nodes != sl->cfg->nodes ||
            p->cfg.dtype != sl->cfg->dtype || !cct_config_same_mode(&p->cfg, sl->cfg))
            continue;
        if (p->cfg.algo == CCT_DEFAULT && p->nccl_algo >= 0) {
            out[1] = p->nccl_algo;
            out[2] = p->nccl_proto;
        }
        if (p->status == CCT_POINT_OK && p->stats.n && p->cfg.align == 0 &&
            (isnan(out[0]) || p->stats.median_us < out[0]))
            out[0] = p->stats.median_us;
    }
}

/* Rank 0 looks the group up in the store; every rank gets the same skip mask and, for the
 * stored points, the same status, median and NCCL choice (the pruning state must not
 * differ between ranks or between a resumed search and one that ran through). */
static cct_status skip_mask(cct_schedule *s, cct_sched_group *g, const cct_point *stored,
                            size_t n_stored, cct_error *err)
{
    unsigned char mask[4096];
    memset(mask, 0, sizeof mask);
    if (s->store) {
        for (size_t k = 0; k < g->n; k++) {
            bool found = false;
            cct_status st =
                cct_store_has_point(s->store, s->run_id, g->slots[k].cfg, g->slots[k].bytes,
                                    g->slots[k].in_place, &found, err);
            if (st != CCT_OK)
                return st;
            mask[k] = found;
        }
    }
    cct_status st = s->backend->ops->broadcast(s->backend->ctx, mask, g->n, err);
    if (st != CCT_OK)
        return st;
    double *known = g->scratch; /* 8 per slot: status (-1: unknown), median, algo, proto,
                                 * the run's fastest time and NCCL's choice there, CV */
    for (size_t k = 0; k < g->n; k++) {
        const cct_point *p = mask[k] ? stored_point(stored, n_stored, &g->slots[k]) : NULL;
        known[8 * k] = p ? p->status : -1.0;
        known[8 * k + 1] = p && p->stats.n ? p->stats.median_us : NAN;
        known[8 * k + 2] = p ? p->nccl_algo : -1.0;
        known[8 * k + 3] = p ? p->nccl_proto : -1.0;
        known[8 * k + 7] = p && p->stats.n ? p->stats.cv : NAN;
        stored_context(stored, n_stored, &g->slots[k], known + 8 * k + 4);
    }
    st = s->backend->ops->broadcast(s->backend->ctx, known, 8 * g->n * sizeof *known, err);
    if (st != CCT_OK)
        return st;
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
        sl->skip = mask[k] != 0;
        sl->known = sl->skip && known[8 * k] >= 0.0;
        sl->ext_best = known[8 * k + 4];
        sl->ext_algo = (int)known[8 * k + 5];
        sl->ext_proto = (int)known[8 * k + 6];
        if (!sl->known)
            continue;
        sl->status = (int)known[8 * k];
        sl->stats.median_us = known[8 * k + 1];
        sl->stats.cv = known[8 * k + 7];
        sl->obs.nccl_algo = (int)known[8 * k + 2];
        sl->obs.nccl_proto = (int)known[8 * k + 3];
    }
    return CCT_OK;
}

static void reset_slot(cct_sched_slot *sl, double *samples)
{
    const cct_config *cfg = sl->cfg;
    uint64_t bytes = sl->bytes;
    bool in_place = sl->in_place;
    memset(sl, 0, sizeof *sl);
    sl->cfg = cfg;
    sl->bytes = bytes;
    sl->in_place = in_place;
    sl->samples = samples;
    sl->obs.nccl_algo = -1;
    sl->obs.nccl_proto = -1;
    sl->status = CCT_POINT_OK;
    sl->ext_best = NAN;
    sl->ext_algo = sl->ext_proto = -1;
}

/* Everything one session's run allocates, sized for its largest group (every configuration
 * of one collective in every call mode) and owned here: run_state_init allocates it,
 * run_state_destroy frees it, whatever the outcome. */
typedef struct run_state {
    size_t variants; /* call modes timed: 1 (out of place), 2 (and in place) */
    cct_sched_group g;
    cct_adaptive *adaptive; /* the order of sizes, and with opts.adaptive what is skipped */
    cct_point *stored;      /* rank 0: what the run already holds (resume, restart) */
    size_t n_stored;
} run_state;

static void run_state_destroy(run_state *r)
{
    cct_adaptive_destroy(r->adaptive);
    free(r->stored);
    free(r->g.slots);
    free(r->g.sample_pool);
    free(r->g.scratch);
    free(r->g.uscratch);
}

/* Allocates r for session s (r is destroyed by the caller on any outcome); then, for the
 * adaptive schedule, loads what the run already stored and whether its links are quiet. */
static cct_status run_state_init(run_state *r, cct_schedule *s, size_t max_group, cct_error *err)
{
    memset(r, 0, sizeof *r);
    r->variants = s->opts.time_in_place ? 2 : 1;
    cct_sched_group *g = &r->g;
    g->per_slot_cap = (size_t)s->opts.cycles * (size_t)(s->opts.max_remeasure + 1) +
                      (size_t)(s->opts.confirm_cycles > 0 ? s->opts.confirm_cycles : 0);
    g->slots = calloc(max_group, sizeof *g->slots);
    g->sample_pool = calloc(max_group * g->per_slot_cap, sizeof *g->sample_pool);
    size_t scratch_n = max_group * g->per_slot_cap + 8 * max_group;
    g->scratch = calloc(scratch_n, sizeof *g->scratch);
    g->uscratch = calloc(3 * max_group, sizeof *g->uscratch);
    if (!g->slots || !g->sample_pool || !g->scratch || !g->uscratch)
        return cct_error_set(err, CCT_ENOMEM, "out of memory for %zu configurations", max_group);
    cct_status st = cct_adaptive_create(s, max_group, &r->adaptive, err);
    if (st != CCT_OK)
        return st;
    if (s->opts.adaptive && s->store &&
        (st = cct_store_load_points(s->store, &s->run_id, 1, &r->stored, &r->n_stored, err)) !=
            CCT_OK)
        return st;
    if (s->opts.adaptive && (st = cct_adaptive_read_links(r->adaptive, s, err)) != CCT_OK)
        return st;
    return CCT_OK;
}

/* Fills the group with every configuration of collective coll in the session, in each call
 * mode, at size zi; the slot order is the same at every size. */
static void fill_group(const cct_schedule *s, run_state *r, int coll, size_t zi)
{
    const cct_plan *plan = s->plan;
    const cct_session *sess = &plan->sessions[s->session];
    cct_sched_group *g = &r->g;
    g->n = 0;
    for (size_t k = 0; k < sess->n_configs; k++) {
        const cct_config *cfg = &plan->configs[sess->first_config + k];
        if (cfg->coll != coll)
            continue;
        for (size_t v = 0; v < r->variants; v++) {
            cct_sched_slot *sl = &g->slots[g->n];
            sl->cfg = cfg;
            sl->bytes = cct_plan_effective_bytes(cfg, plan->sizes[zi]);
            sl->in_place = v == 1;
            reset_slot(sl, g->sample_pool + g->n * g->per_slot_cap);
            g->n++;
        }
    }
}

/* One group: collective coll at size zi -- what is stored or pruned is skipped, the rest
 * verified, warmed up, timed and stored; then what it taught the adaptive schedule. */
static cct_status run_size(cct_schedule *s, run_state *r, int coll, size_t zi, cct_error *err)
{
    cct_sched_group *g = &r->g;
    fill_group(s, r, coll, zi);
    if (g->n == 0)
        return CCT_OK;
    cct_status st;
    if ((st = skip_mask(s, g, r->stored, r->n_stored, err)) != CCT_OK)
        return st;
    size_t pruned_now = cct_adaptive_prune(r->adaptive, g, zi);
    s->points_pruned += pruned_now;
    size_t todo = 0;
    for (size_t k = 0; k < g->n; k++)
        todo += !g->slots[k].skip;
    s->points_skipped += g->n - todo - pruned_now;
    if (todo == 0) {
        /* everything here was stored before (a resume or restart): the stored times
         * still decide what an uninterrupted run would have pruned by now */
        cct_adaptive_learn(r->adaptive, g, zi);
        return CCT_OK;
    }
    if ((st = verify_group(s, g, err)) != CCT_OK)
        return st;
    if ((st = warm_group(s, g, err)) != CCT_OK)
        return st;
    if ((st = time_group(s, g, err)) != CCT_OK)
        return st;
    if ((st = store_group(s, g, err)) != CCT_OK)
        return st;
    cct_adaptive_learn(r->adaptive, g, zi);
    if (s->progress) {
        char what[96], b[32];
        snprintf(what, sizeof what, "%s %s", cct_coll_name(coll),
                 cct_format_bytes(s->plan->sizes[zi], b, sizeof b));
        s->progress(s->progress_arg, s->points_done + s->points_skipped + s->points_pruned,
                    s->points_total, what);
    }
    return CCT_OK;
}

cct_status cct_schedule_run(cct_schedule *s, cct_error *err)
{
    const cct_plan *plan = s->plan;
    const cct_session *sess = &plan->sessions[s->session];
    if (s->opts.cycles < 1 || s->opts.max_iters < 1)
        return cct_error_set(err, CCT_EINVAL, "cycles and iterations must be at least 1");
    size_t max_group = sess->n_configs * (s->opts.time_in_place ? 2 : 1);
    if (max_group > 4096)
        return cct_error_set(err, CCT_EINVAL,
                             "a session has %zu configurations x variants; at most 4096 are "
                             "supported (narrow the space)",
                             max_group);
    s->points_total = cct_schedule_count_points(plan, s->session, s->opts.time_in_place);
    run_state r;
    cct_status st = run_state_init(&r, s, max_group, err);
    for (size_t ci = 0; ci < plan->space.n_colls && st == CCT_OK; ci++) {
        cct_adaptive_reset(r.adaptive);
        for (size_t oi = 0; oi < plan->n_sizes && st == CCT_OK; oi++)
            st = run_size(s, &r, plan->space.colls[ci], cct_adaptive_size_at(r.adaptive, oi), err);
    }
    run_state_destroy(&r);
    return st;
}
