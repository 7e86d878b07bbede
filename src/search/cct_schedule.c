/*
 * cct_schedule.c - executes one session of a plan on a backend (see cct_schedule.h).
 *
 * The unit of work is a group: one collective at one requested size, every configuration
 * of the session.  A group is measured completely before anything of it is stored, and
 * its points are committed one transaction each, so an interruption loses at most the
 * group in flight.  Memory per group is bounded by configurations x samples and reused.
 */
#include "cct_schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
}

size_t cct_schedule_count_points(const cct_plan *plan, size_t session, bool time_in_place)
{
    const cct_session *s = &plan->sessions[session];
    return s->n_configs * plan->n_sizes * (time_in_place ? 2u : 1u);
}

/* Per-configuration state of the group being measured. */
typedef struct slot {
    const cct_config *cfg;
    uint64_t bytes;
    bool in_place;
    bool skip;  /* already stored */
    bool known; /* skipped, and its stored status/median/NCCL choice are in status, stats, obs
                 * (a resumed search rebuilds its pruning state from them) */
    bool timed; /* applied and worth timing */
    int status; /* cct_point_status */
    uint64_t wrong;
    cct_observed obs;
    int iters;
    double *samples; /* per-iteration microseconds, one per cycle */
    size_t n_samples;
    cct_stats stats;
    bool noisy;
    /* adaptive: what the run's earlier sessions (or a stored part of this one) measured at
     * this collective, size and call mode: the fastest aligned time (NAN: nothing) and
     * NCCL's choice as its default point observed it (-1: unknown) */
    double ext_best;
    int ext_algo, ext_proto;
} slot;

typedef struct group {
    slot *slots;
    size_t n;
    double *sample_pool;
    size_t per_slot_cap;
    double *scratch; /* reduction buffer, n * per_slot_cap doubles */
    uint64_t *uscratch;
} group;

/* Statistics of a point that has no samples: unknown, not zero. */
static void stats_unknown(cct_stats *st)
{
    st->n = 0;
    st->median_us = st->p95_us = st->min_us = st->max_us = st->mean_us = st->cv = NAN;
}

static cct_status note_hang(cct_schedule *s, const slot *sl, cct_error *err)
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
static cct_status verify_group(cct_schedule *s, group *g, cct_error *err)
{
    cct_backend *b = s->backend;
    for (size_t k = 0; k < g->n; k++) {
        slot *sl = &g->slots[k];
        g->uscratch[k] = 0;
        if (sl->skip)
            continue;
        cct_status st = b->ops->select(b->ctx, sl->cfg, err);
        for (int variant = 0; st == CCT_OK && variant < 2; variant++) {
            uint64_t wrong = 0;
            cct_observed obs = {false, -1, -1, 0, 0, 0};
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
        slot *sl = &g->slots[k];
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
        slot *sl = &g->slots[k];
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
static double group_median_call(const group *g)
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
static cct_status warm_group(cct_schedule *s, group *g, cct_error *err)
{
    cct_backend *b = s->backend;
    for (size_t k = 0; k < g->n; k++) {
        slot *sl = &g->slots[k];
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
        slot *sl = &g->slots[k];
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
static cct_status cycle_round(cct_schedule *s, group *g, const bool *want, int cycles,
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
            slot *sl = &g->slots[active[which]];
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
        slot *sl = &g->slots[active[pos]];
        for (int c = 0; c < cycles && sl->n_samples < g->per_slot_cap; c++)
            sl->samples[sl->n_samples++] = g->scratch[pos * (size_t)cycles + (size_t)c];
    }
    return CCT_OK;
}

/* Time every timed slot; re-measure the noisy ones.  A point is noisy when the samples of
 * its latest round have a CV above the threshold: a transient disturbance in one round is
 * cured by a quiet re-measurement.  Statistics are computed over all samples, so the
 * stored CV still shows what happened. */
/* Adaptive: after the first short round, which slots are not clearly slower than the
 * fastest (their fastest sample is not above the fastest configuration's slowest)? */
static size_t ambiguous_slots(const group *g, bool *want)
{
    const slot *best = NULL;
    for (size_t k = 0; k < g->n; k++) {
        const slot *sl = &g->slots[k];
        if (sl->timed && sl->status == CCT_POINT_OK && sl->n_samples &&
            (!best || sl->stats.median_us < best->stats.median_us))
            best = sl;
    }
    size_t n = 0;
    for (size_t k = 0; k < g->n && k < 4096; k++) {
        const slot *sl = &g->slots[k];
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
static cct_status time_group(cct_schedule *s, group *g, cct_error *err)
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
            slot *sl = &g->slots[k];
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
    return st;
}

static cct_status store_group(cct_schedule *s, group *g, cct_error *err)
{
    for (size_t k = 0; k < g->n; k++) {
        slot *sl = &g->slots[k];
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
static const cct_point *stored_point(const cct_point *pts, size_t n, const slot *sl)
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
static void stored_context(const cct_point *pts, size_t n, const slot *sl, double *out)
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
static cct_status skip_mask(cct_schedule *s, group *g, const cct_point *stored, size_t n_stored,
                            cct_error *err)
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
        slot *sl = &g->slots[k];
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

static void reset_slot(slot *sl, double *samples)
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

/* Adaptive pruning state of one collective's configurations across sizes (slot order is
 * the same at every size of a collective). */
typedef struct prune_state {
    bool *dead;
    int *strikes;
    double *last_ratio; /* time / fastest time at the previous size it was measured; NAN */
    double *first_best; /* per slot: the fastest time of its call mode at the collective's
                         * smallest measured size */
    double *tbest;      /* per slot: the fastest time of its call mode at this size */
    int kept_proto;     /* never struck: the protocol whose buffer the session varies; -1 */
    int *rest;          /* coarse sizes to skip from the next one on (then measured again) */
    double *prev;       /* 3 per slot: bytes, time and fastest time at the last coarse size
                         * the slot had a time (bytes 0: none yet) */
    bool quiet;         /* the run's links give quiet timings (links_quiet) */
} prune_state;

/* Whether the slot has a time this size: measured now, or stored before a resume. */
static bool has_time(const slot *sl)
{
    if (sl->skip)
        return sl->known && sl->status == CCT_POINT_OK && !isnan(sl->stats.median_us);
    return sl->timed && sl->status == CCT_POINT_OK && sl->n_samples;
}

/* Whether the run's links give quiet timings: NVLink (or one GPU), where a configuration's
 * median repeats to ~1-2 % from one session to the next.  Over sockets between processes
 * sharing a GPU (fingerprint links "socket") and over a network, medians of the same
 * configuration differ by 5-15 % between sessions (docs/benchmarks.md, the noise floor):
 * there the ratios the quiet-only economies rest on are below the noise.  Rank 0 reads the
 * run's fingerprint; every rank gets its answer.  No store: not quiet. */
static cct_status links_quiet(cct_schedule *s, bool *quiet, cct_error *err)
{
    unsigned char q = 0;
    if (s->store) {
        cct_store_run *runs = NULL;
        size_t n = 0;
        cct_status st = cct_store_list_runs(s->store, &runs, &n, err);
        for (size_t i = 0; st == CCT_OK && i < n; i++) {
            if (runs[i].id != s->run_id)
                continue;
            cct_store_fingerprint fp;
            memset(&fp, 0, sizeof fp);
            st = cct_store_get_fingerprint(s->store, runs[i].fingerprint_id, &fp, err);
            q = st == CCT_OK && (!strcmp(fp.links, "nvlink") || !strcmp(fp.links, "local"));
        }
        free(runs);
        if (st != CCT_OK)
            return st;
    }
    cct_status st = s->backend->ops->broadcast(s->backend->ctx, &q, 1, err);
    *quiet = q != 0;
    return st;
}

/* "The fastest" is the fastest of the slot's own call mode: grouped and registered calls
 * are compared only with their own kind (their per-op times are another curve).  It
 * includes what the run's earlier sessions measured there (a session that forces LL128 or
 * other buffers is judged against LL and Simple of the first session, not just itself). */
static double fastest_of_mode(const group *g, size_t k, bool with_earlier_sessions)
{
    size_t best = SIZE_MAX;
    for (size_t j = 0; j < g->n; j++) {
        const slot *sl = &g->slots[j];
        if (has_time(sl) && cct_config_same_mode(sl->cfg, g->slots[k].cfg) &&
            (best == SIZE_MAX || sl->stats.median_us < g->slots[best].stats.median_us))
            best = j;
    }
    double t = best == SIZE_MAX ? NAN : g->slots[best].stats.median_us,
           ext = with_earlier_sessions ? g->slots[k].ext_best : NAN;
    return isnan(t) || ext < t ? ext : t;
}

/* NCCL's own choice at this size in the slot's call mode, as its default slot observed it
 * (measured now or stored before a resume); -1 when unknown. */
static void nccl_choice_of_mode(const group *g, size_t k, int *algo, int *proto)
{
    *algo = *proto = -1;
    for (size_t j = 0; j < g->n; j++) {
        const slot *sl = &g->slots[j];
        if (sl->cfg->algo == CCT_DEFAULT && (!sl->skip || sl->known) &&
            cct_config_same_mode(sl->cfg, g->slots[k].cfg)) {
            *algo = sl->obs.nccl_algo;
            *proto = sl->obs.nccl_proto;
        }
    }
    if (*algo < 0) { /* no default in this session: as the run's first session saw it */
        *algo = g->slots[k].ext_algo;
        *proto = g->slots[k].ext_proto;
    }
}

/* At most this many coarse sizes in a row are skipped by a configuration that loses. */
#define REST_MAX 2

/* Whether a configuration that had a time at this coarse size and at the last one may skip
 * the next coarse size: slower than the fastest by more than `margin` at both, and the
 * straight lines through its two times and through the fastest times at the same sizes still
 * more than `margin` apart at the next size.  In the latency regime the curves are flat and
 * a protocol that loses there (Simple against LL) wins later: its slope is what says when,
 * and it is measured again at the coarse size after (never two coarse sizes in a row
 * skipped).  The fastest's slope is taken as at least zero, so noise never makes the
 * fastest look faster ahead. */
static bool rests(const slot *sl, const double *prev, double tbest, uint64_t next_bytes,
                  double margin)
{
    double n0 = prev[0], t0 = prev[1], b0 = prev[2], n1 = (double)sl->bytes,
           t1 = sl->stats.median_us;
    if (margin <= 0.0 || !(n1 > n0) || !((double)next_bytes > n1) || !(t0 > (1.0 + margin) * b0) ||
        !(t1 > (1.0 + margin) * tbest))
        return false;
    double slope = (t1 - t0) / (n1 - n0), slope_best = (tbest - b0) / (n1 - n0);
    if (slope_best < 0.0)
        slope_best = 0.0;
    double ahead = (double)next_bytes - n1;
    double t = t1 + slope * ahead, best = tbest + slope_best * ahead;
    return t > (1.0 + margin) * best;
}

/* After a size is measured: strike the forced configurations that are clearly slower than
 * the fastest and not catching up; stop corrupt and unsupported ones at once.  Nothing is
 * struck while the fastest time is still within 2x of its value at the smallest size: in
 * the latency-bound region every protocol's curve is flat and noise decides the order, and
 * a configuration that loses there (Simple against LL) is often the one that wins later.
 * "Catching up" is a falling ratio to the fastest (by more than 2 % since the last size).
 * Never struck: the forced twin of NCCL's own choice at this size (its algorithm and
 * protocol at NCCL's channel count -- the table's fallback where nothing beats the default
 * by enough), and in a session that changes a buffer size, the protocol that buffer serves
 * (what the session is there to measure). */
static void prune_update(cct_schedule *s, group *g, prune_state *ps, const uint64_t *next_sizes)
{
    for (size_t k = 0; k < g->n; k++) {
        double tbest = fastest_of_mode(g, k, ps->quiet);
        ps->tbest[k] = tbest;
        if (isnan(ps->first_best[k]) && !isnan(tbest))
            ps->first_best[k] = tbest;
    }
    for (size_t k = 0; k < g->n; k++) {
        slot *sl = &g->slots[k];
        if ((sl->skip && !sl->known) || sl->cfg->algo < 0)
            continue; /* NCCL's default (and the table) are always measured */
        if (sl->status == CCT_POINT_CORRUPT || sl->status == CCT_POINT_UNSUPPORTED ||
            sl->status == CCT_POINT_ERROR) {
            ps->dead[k] = true; /* never usable by a table: nothing to learn at larger sizes */
            continue;
        }
        double tbest = ps->tbest[k];
        bool bandwidth_regime = !isnan(tbest) && tbest >= 2.0 * ps->first_best[k];
        if (!has_time(sl) || isnan(tbest))
            continue;
        double ratio = sl->stats.median_us / tbest;
        bool dominated = ratio > 1.0 + s->opts.prune_margin;
        bool catching = !isnan(ps->last_ratio[k]) && ratio < ps->last_ratio[k] * 0.98;
        ps->last_ratio[k] = ratio;
        int nccl_algo, nccl_proto;
        nccl_choice_of_mode(g, k, &nccl_algo, &nccl_proto);
        bool twin =
            sl->cfg->algo == nccl_algo && sl->cfg->proto == nccl_proto && sl->cfg->channels == 0;
        bool kept = twin || sl->cfg->proto == ps->kept_proto;
        ps->strikes[k] =
            (bandwidth_regime && dominated && !catching && !kept) ? ps->strikes[k] + 1 : 0;
        if (ps->strikes[k] >= s->opts.prune_after)
            ps->dead[k] = true;
        double *prev = ps->prev + 3 * k;
        ps->rest[k] = 0; /* how many of the next coarse sizes the slopes say it still loses */
        while (ps->quiet && !kept && prev[0] > 0.0 && ps->rest[k] < REST_MAX &&
               next_sizes[ps->rest[k]] &&
               rests(sl, prev, tbest, cct_plan_effective_bytes(sl->cfg, next_sizes[ps->rest[k]]),
                     s->opts.rest_margin))
            ps->rest[k]++;
        prev[0] = (double)sl->bytes;
        prev[1] = sl->stats.median_us;
        prev[2] = tbest;
    }
}

/* The order sizes are measured in, and how coarse each is: 0 a size between coarse ones,
 * 1 coarse, 2 coarse and also a size where misaligned variants are measured.  The
 * exhaustive schedule measures small to large, every size at level 2.  The adaptive one
 * measures the coarse grid first -- the smallest size, each size at least coarse_factor
 * times the last coarse one, and the largest -- with every configuration the pruning rules
 * leave, then the sizes between.  Misaligned variants are measured at every other coarse
 * size and the largest: their penalty is a property of the protocol, pooled over sizes. */
static void size_order(const cct_plan *plan, const cct_schedule_opts *o, size_t *order,
                       unsigned char *level)
{
    size_t n = plan->n_sizes, m = 0, rank = 0;
    double last = 0.0;
    for (size_t z = 0; z < n; z++) {
        bool coarse = !o->adaptive || o->coarse_factor <= 1.0 || z == 0 || z + 1 == n ||
                      (double)plan->sizes[z] >= o->coarse_factor * last;
        level[z] = 0;
        if (!coarse)
            continue;
        last = (double)plan->sizes[z];
        level[z] = !o->adaptive || rank % 2 == 0 || z + 1 == n ? 2 : 1;
        rank++;
    }
    for (size_t z = 0; z < n; z++)
        if (level[z])
            order[m++] = z;
    for (size_t z = 0; z < n; z++)
        if (!level[z])
            order[m++] = z;
}

/* What a coarse size taught about each slot: its time over the fastest of its call mode
 * (NAN where it has no time) and whether it is the forced twin of NCCL's choice there.
 * Stored and resumed points count like measured ones, so a resumed search decides alike. */
static void record_coarse(const group *g, const prune_state *ps, double *ratio, bool *twin)
{
    for (size_t k = 0; k < g->n; k++) {
        const slot *sl = &g->slots[k];
        ratio[k] = has_time(sl) && !isnan(ps->tbest[k]) ? sl->stats.median_us / ps->tbest[k] : NAN;
        int nccl_algo, nccl_proto;
        nccl_choice_of_mode(g, k, &nccl_algo, &nccl_proto);
        twin[k] =
            sl->cfg->algo == nccl_algo && sl->cfg->proto == nccl_proto && sl->cfg->channels == 0;
    }
}

/* The slot that differs from misaligned slot k only in being aligned; SIZE_MAX if none. */
static size_t aligned_sibling(const group *g, size_t k)
{
    const slot *sl = &g->slots[k];
    if (!sl->cfg->align)
        return SIZE_MAX;
    for (size_t j = 0; j < g->n; j++) {
        const cct_config *a = g->slots[j].cfg, *b = sl->cfg;
        if (a->align == 0 && g->slots[j].in_place == sl->in_place && a->coll == b->coll &&
            a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
            a->buffsize == b->buffsize && a->ll_buffsize == b->ll_buffsize &&
            a->ll128_buffsize == b->ll128_buffsize && a->dtype == b->dtype &&
            cct_config_same_mode(a, b))
            return j;
    }
    return SIZE_MAX;
}

/* Whether slot k is measured at a size between two coarse ones (lo and hi: what each
 * taught, record_coarse).  NCCL's default always, and the twin of NCCL's choice at either.
 * Where timings are quiet (NVLink): the fastest at either, and a configuration within
 * `margin` of the fastest at one and beyond twice that at the other -- a crossover happens
 * in between, and this is where the table's band edge goes (the twin in a session that
 * varies another protocol's buffer is not refined: it is the same data path).  A configuration
 * close at both (or far at both) keeps its place across the interval: the fit interpolates its
 * model between the coarse sizes.  Misaligned variants are not refined (their penalty is a property
 * of the protocol) and neither are the protocols a buffer session does not vary. Where timings are
 * noisy (sockets), every aligned configuration within `noisy_margin` of the fastest at either: a
 * single coarse ratio is not to be trusted there.  Corrupt, unsupported, failed and pruned
 * configurations have no ratio (NAN) and are not refined. */
static bool fine_wanted(const slot *sl, size_t k, const double *rlo, const double *rhi,
                        const bool *tlo, const bool *thi, const cct_schedule_opts *o,
                        int kept_proto, bool quiet)
{
    if (sl->cfg->algo < 0)
        return true;
    if (!quiet)
        return tlo[k] || thi[k] ||
               (!sl->cfg->align &&
                (rlo[k] <= 1.0 + o->noisy_fine_margin || rhi[k] <= 1.0 + o->noisy_fine_margin));
    if (sl->cfg->align || (kept_proto >= 0 && sl->cfg->proto != kept_proto))
        return false;
    if (tlo[k] || thi[k])
        return true;
    double m = o->fine_margin;
    bool close_lo = rlo[k] <= 1.0 + m, close_hi = rhi[k] <= 1.0 + m;
    bool far_lo = !(rlo[k] <= 1.0 + 2.0 * m), far_hi = !(rhi[k] <= 1.0 + 2.0 * m);
    return rlo[k] <= 1.0 || rhi[k] <= 1.0 || (close_lo && far_hi) || (close_hi && far_lo);
}

/* Everything one session's run allocates, sized for its largest group (every configuration
 * of one collective in every call mode) and owned here: run_state_init allocates it,
 * run_state_destroy frees it, whatever the outcome. */
typedef struct run_state {
    size_t variants;  /* call modes timed: 1 (out of place), 2 (and in place) */
    size_t max_group; /* the session's configurations x variants */
    size_t nz;        /* the plan's sizes */
    group g;
    prune_state ps;
    size_t *order;         /* the sizes in the order they are measured (size_order) */
    unsigned char *coarse; /* per size: 0 between coarse sizes, 1 coarse, 2 coarse + misaligned */
    double *cratio;        /* per size and slot: what a coarse size taught (record_coarse) */
    bool *ctwin;
    cct_point *stored; /* rank 0: what the run already holds (resume, restart) */
    size_t n_stored;
} run_state;

static void run_state_destroy(run_state *r)
{
    free(r->order);
    free(r->coarse);
    free(r->cratio);
    free(r->ctwin);
    free(r->stored);
    free(r->ps.dead);
    free(r->ps.strikes);
    free(r->ps.last_ratio);
    free(r->ps.first_best);
    free(r->ps.tbest);
    free(r->ps.rest);
    free(r->ps.prev);
    free(r->g.slots);
    free(r->g.sample_pool);
    free(r->g.scratch);
    free(r->g.uscratch);
}

/* In a session with other buffer sizes, the protocol those buffers serve is never cut short
 * (cutting Simple at NCCL_BUFFSIZE=1M left the table nothing to serve the large sizes with);
 * the others are pruned as anywhere. */
static int kept_proto_of(const cct_session *sess)
{
    if (sess->buffsize)
        return CCT_PROTO_SIMPLE;
    if (sess->ll_buffsize)
        return CCT_PROTO_LL;
    if (sess->ll128_buffsize)
        return CCT_PROTO_LL128;
    return -1;
}

/* Allocates r for session s (r is destroyed by the caller on any outcome); then, for the
 * adaptive schedule, loads what the run already stored and whether its links are quiet, and
 * orders the sizes. */
static cct_status run_state_init(run_state *r, cct_schedule *s, size_t max_group, cct_error *err)
{
    const cct_plan *plan = s->plan;
    memset(r, 0, sizeof *r);
    r->variants = s->opts.time_in_place ? 2 : 1;
    r->max_group = max_group;
    group *g = &r->g;
    g->per_slot_cap = (size_t)s->opts.cycles * (size_t)(s->opts.max_remeasure + 1);
    g->slots = calloc(max_group, sizeof *g->slots);
    g->sample_pool = calloc(max_group * g->per_slot_cap, sizeof *g->sample_pool);
    size_t scratch_n = max_group * g->per_slot_cap + 8 * max_group;
    g->scratch = calloc(scratch_n, sizeof *g->scratch);
    g->uscratch = calloc(3 * max_group, sizeof *g->uscratch);
    size_t nz = r->nz = plan->n_sizes;
    r->order = calloc(nz ? nz : 1, sizeof *r->order);
    r->coarse = calloc(nz ? nz : 1, sizeof *r->coarse);
    r->cratio = calloc(nz * max_group + 1, sizeof *r->cratio);
    r->ctwin = calloc(nz * max_group + 1, sizeof *r->ctwin);
    prune_state *ps = &r->ps;
    ps->dead = calloc(max_group, sizeof(bool));
    ps->strikes = calloc(max_group, sizeof(int));
    ps->last_ratio = calloc(max_group, sizeof(double));
    ps->first_best = calloc(max_group, sizeof(double));
    ps->tbest = calloc(max_group, sizeof(double));
    ps->rest = calloc(max_group, sizeof(int));
    ps->prev = calloc(3 * max_group, sizeof(double));
    ps->kept_proto = kept_proto_of(&plan->sessions[s->session]);
    ps->quiet = false;
    if (!g->slots || !g->sample_pool || !g->scratch || !g->uscratch || !ps->dead || !ps->strikes ||
        !ps->last_ratio || !ps->first_best || !ps->tbest || !ps->rest || !ps->prev || !r->order ||
        !r->coarse || !r->cratio || !r->ctwin)
        return cct_error_set(err, CCT_ENOMEM, "out of memory for %zu configurations", max_group);
    cct_status st;
    if (s->opts.adaptive && s->store &&
        (st = cct_store_load_points(s->store, &s->run_id, 1, &r->stored, &r->n_stored, err)) !=
            CCT_OK)
        return st;
    if (s->opts.adaptive && (st = links_quiet(s, &ps->quiet, err)) != CCT_OK)
        return st;
    size_order(plan, &s->opts, r->order, r->coarse);
    return CCT_OK;
}

/* A new collective starts with nothing struck and nothing learnt at any size. */
static void reset_collective(run_state *r)
{
    size_t max_group = r->max_group;
    prune_state *ps = &r->ps;
    memset(ps->dead, 0, max_group * sizeof(bool));
    memset(ps->strikes, 0, max_group * sizeof(int));
    memset(ps->rest, 0, max_group * sizeof(int));
    memset(ps->prev, 0, 3 * max_group * sizeof(double));
    for (size_t k = 0; k < max_group; k++)
        ps->last_ratio[k] = ps->first_best[k] = NAN;
    for (size_t i = 0; i < r->nz * max_group; i++) {
        r->cratio[i] = NAN;
        r->ctwin[i] = false;
    }
}

/* Fills the group with every configuration of collective coll in the session, in each call
 * mode, at size zi; the slot order is the same at every size. */
static void fill_group(const cct_schedule *s, run_state *r, int coll, size_t zi)
{
    const cct_plan *plan = s->plan;
    const cct_session *sess = &plan->sessions[s->session];
    group *g = &r->g;
    g->n = 0;
    for (size_t k = 0; k < sess->n_configs; k++) {
        const cct_config *cfg = &plan->configs[sess->first_config + k];
        if (cfg->coll != coll)
            continue;
        for (size_t v = 0; v < r->variants; v++) {
            slot *sl = &g->slots[g->n];
            sl->cfg = cfg;
            sl->bytes = cct_plan_effective_bytes(cfg, plan->sizes[zi]);
            sl->in_place = v == 1;
            reset_slot(sl, g->sample_pool + g->n * g->per_slot_cap);
            g->n++;
        }
    }
}

/* Adaptive: marks skipped the slots not measured at size zi -- struck, resting or a
 * misaligned variant off its sizes at a coarse size, not wanted by fine_wanted between
 * coarse sizes -- and returns how many it marked. */
static size_t prune_group(const cct_schedule *s, run_state *r, size_t zi)
{
    group *g = &r->g;
    prune_state *ps = &r->ps;
    const unsigned char *coarse = r->coarse;
    size_t lo = zi, hi = zi;
    while (!coarse[lo])
        lo--; /* the smallest and the largest size are coarse */
    while (!coarse[hi])
        hi++;
    const double *rlo = r->cratio + lo * r->max_group, *rhi = r->cratio + hi * r->max_group;
    const bool *tlo = r->ctwin + lo * r->max_group, *thi = r->ctwin + hi * r->max_group;
    bool pruned[4096] = {false};
    for (size_t k = 0; k < g->n; k++) {
        bool rested = coarse[zi] && ps->rest[k] > 0;
        if (rested)
            ps->rest[k]--; /* measured again when it reaches 0 */
        pruned[k] = coarse[zi] ? ps->dead[k] || rested || (g->slots[k].cfg->align && coarse[zi] < 2)
                               : !fine_wanted(&g->slots[k], k, rlo, rhi, tlo, thi, &s->opts,
                                              ps->kept_proto, ps->quiet);
    }
    size_t pruned_now = 0;
    for (size_t k = 0; k < g->n; k++) {
        /* a misaligned variant is compared with its aligned sibling at the same size:
         * without it the point says nothing */
        size_t sib = aligned_sibling(g, k);
        if (sib != SIZE_MAX && pruned[sib])
            pruned[k] = true;
        if (pruned[k] && !g->slots[k].skip) {
            g->slots[k].skip = true; /* dominated: not measured at this size */
            pruned_now++;
        }
    }
    return pruned_now;
}

/* Adaptive, after a coarse size zi: strike and rest what it showed slower (prune_update) and
 * keep what it taught for the sizes between (record_coarse). */
static void learn_coarse(cct_schedule *s, run_state *r, size_t zi)
{
    if (!s->opts.adaptive || !r->coarse[zi])
        return;
    uint64_t next_coarse[REST_MAX + 1] = {0}; /* the coarse sizes after this one */
    for (size_t z = zi + 1, m = 0; z < r->nz && m < REST_MAX; z++)
        if (r->coarse[z])
            next_coarse[m++] = s->plan->sizes[z];
    prune_update(s, &r->g, &r->ps, next_coarse);
    record_coarse(&r->g, &r->ps, r->cratio + zi * r->max_group, r->ctwin + zi * r->max_group);
}

/* One group: collective coll at size zi -- what is stored or pruned is skipped, the rest
 * verified, warmed up, timed and stored; then what it taught the adaptive schedule. */
static cct_status run_size(cct_schedule *s, run_state *r, int coll, size_t zi, cct_error *err)
{
    group *g = &r->g;
    fill_group(s, r, coll, zi);
    if (g->n == 0)
        return CCT_OK;
    cct_status st;
    if ((st = skip_mask(s, g, r->stored, r->n_stored, err)) != CCT_OK)
        return st;
    size_t pruned_now = s->opts.adaptive ? prune_group(s, r, zi) : 0;
    s->points_pruned += pruned_now;
    size_t todo = 0;
    for (size_t k = 0; k < g->n; k++)
        todo += !g->slots[k].skip;
    s->points_skipped += g->n - todo - pruned_now;
    if (todo == 0) {
        /* everything here was stored before (a resume or restart): the stored times
         * still decide what an uninterrupted run would have pruned by now */
        learn_coarse(s, r, zi);
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
    learn_coarse(s, r, zi);
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
        reset_collective(&r);
        for (size_t oi = 0; oi < r.nz && st == CCT_OK; oi++)
            st = run_size(s, &r, plan->space.colls[ci], r.order[oi], err);
    }
    run_state_destroy(&r);
    return st;
}
