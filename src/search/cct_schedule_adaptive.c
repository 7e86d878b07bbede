/*
 * cct_schedule_adaptive.c - the adaptive schedule's decisions (see cct_schedule_adaptive.h):
 * sizes in a coarse-then-fine order, pruning at coarse sizes (strikes, rests, the kept
 * protocol of a buffer session), refinement between them, and misaligned variants only where
 * their aligned sibling is measured.
 *
 * The state is per collective and per slot (the slot order is the same at every size of a
 * collective); what each coarse size taught is kept per size for the sizes between.
 */
#include "cct_schedule_adaptive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static bool has_time(const cct_sched_slot *sl)
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
static double fastest_of_mode(const cct_sched_group *g, size_t k, bool with_earlier_sessions)
{
    size_t best = SIZE_MAX;
    for (size_t j = 0; j < g->n; j++) {
        const cct_sched_slot *sl = &g->slots[j];
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
static void nccl_choice_of_mode(const cct_sched_group *g, size_t k, int *algo, int *proto)
{
    *algo = *proto = -1;
    for (size_t j = 0; j < g->n; j++) {
        const cct_sched_slot *sl = &g->slots[j];
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
static bool rests(const cct_sched_slot *sl, const double *prev, double tbest, uint64_t next_bytes,
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
static void prune_update(const cct_schedule_opts *o, const cct_sched_group *g, prune_state *ps,
                         const uint64_t *next_sizes)
{
    for (size_t k = 0; k < g->n; k++) {
        double tbest = fastest_of_mode(g, k, ps->quiet);
        ps->tbest[k] = tbest;
        if (isnan(ps->first_best[k]) && !isnan(tbest))
            ps->first_best[k] = tbest;
    }
    for (size_t k = 0; k < g->n; k++) {
        cct_sched_slot *sl = &g->slots[k];
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
        bool dominated = ratio > 1.0 + o->prune_margin;
        bool catching = !isnan(ps->last_ratio[k]) && ratio < ps->last_ratio[k] * 0.98;
        ps->last_ratio[k] = ratio;
        int nccl_algo, nccl_proto;
        nccl_choice_of_mode(g, k, &nccl_algo, &nccl_proto);
        bool twin =
            sl->cfg->algo == nccl_algo && sl->cfg->proto == nccl_proto && sl->cfg->channels == 0;
        bool kept = twin || sl->cfg->proto == ps->kept_proto;
        ps->strikes[k] =
            (bandwidth_regime && dominated && !catching && !kept) ? ps->strikes[k] + 1 : 0;
        if (ps->strikes[k] >= o->prune_after)
            ps->dead[k] = true;
        double *prev = ps->prev + 3 * k;
        ps->rest[k] = 0; /* how many of the next coarse sizes the slopes say it still loses */
        while (ps->quiet && !kept && prev[0] > 0.0 && ps->rest[k] < REST_MAX &&
               next_sizes[ps->rest[k]] &&
               rests(sl, prev, tbest, cct_plan_effective_bytes(sl->cfg, next_sizes[ps->rest[k]]),
                     o->rest_margin))
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
static void record_coarse(const cct_sched_group *g, const prune_state *ps, double *ratio,
                          bool *twin)
{
    for (size_t k = 0; k < g->n; k++) {
        const cct_sched_slot *sl = &g->slots[k];
        ratio[k] = has_time(sl) && !isnan(ps->tbest[k]) ? sl->stats.median_us / ps->tbest[k] : NAN;
        int nccl_algo, nccl_proto;
        nccl_choice_of_mode(g, k, &nccl_algo, &nccl_proto);
        twin[k] =
            sl->cfg->algo == nccl_algo && sl->cfg->proto == nccl_proto && sl->cfg->channels == 0;
    }
}

/* The slot that differs from misaligned slot k only in being aligned; SIZE_MAX if none. */
static size_t aligned_sibling(const cct_sched_group *g, size_t k)
{
    const cct_sched_slot *sl = &g->slots[k];
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
static bool fine_wanted(const cct_sched_slot *sl, size_t k, const double *rlo, const double *rhi,
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

struct cct_adaptive {
    const cct_schedule_opts *opts;
    const cct_plan *plan;
    size_t max_group;      /* slots per group at most */
    size_t nz;             /* the plan's sizes */
    prune_state ps;        /* per slot, reset per collective */
    size_t *order;         /* the sizes in the order they are measured (size_order) */
    unsigned char *coarse; /* per size: 0 between coarse sizes, 1 coarse, 2 coarse + misaligned */
    double *cratio;        /* per size and slot: what a coarse size taught (record_coarse) */
    bool *ctwin;
};

void cct_adaptive_destroy(cct_adaptive *a)
{
    if (!a)
        return;
    free(a->order);
    free(a->coarse);
    free(a->cratio);
    free(a->ctwin);
    free(a->ps.dead);
    free(a->ps.strikes);
    free(a->ps.last_ratio);
    free(a->ps.first_best);
    free(a->ps.tbest);
    free(a->ps.rest);
    free(a->ps.prev);
    free(a);
}

cct_status cct_adaptive_create(const cct_schedule *s, size_t max_group, cct_adaptive **out,
                               cct_error *err)
{
    const cct_plan *plan = s->plan;
    *out = NULL;
    cct_adaptive *a = calloc(1, sizeof *a);
    if (!a)
        return cct_error_set(err, CCT_ENOMEM, "out of memory for %zu configurations", max_group);
    a->opts = &s->opts;
    a->plan = plan;
    a->max_group = max_group;
    size_t nz = a->nz = plan->n_sizes;
    a->order = calloc(nz ? nz : 1, sizeof *a->order);
    a->coarse = calloc(nz ? nz : 1, sizeof *a->coarse);
    a->cratio = calloc(nz * max_group + 1, sizeof *a->cratio);
    a->ctwin = calloc(nz * max_group + 1, sizeof *a->ctwin);
    prune_state *ps = &a->ps;
    ps->dead = calloc(max_group, sizeof(bool));
    ps->strikes = calloc(max_group, sizeof(int));
    ps->last_ratio = calloc(max_group, sizeof(double));
    ps->first_best = calloc(max_group, sizeof(double));
    ps->tbest = calloc(max_group, sizeof(double));
    ps->rest = calloc(max_group, sizeof(int));
    ps->prev = calloc(3 * max_group, sizeof(double));
    ps->kept_proto = kept_proto_of(&plan->sessions[s->session]);
    ps->quiet = false;
    if (!ps->dead || !ps->strikes || !ps->last_ratio || !ps->first_best || !ps->tbest ||
        !ps->rest || !ps->prev || !a->order || !a->coarse || !a->cratio || !a->ctwin) {
        cct_adaptive_destroy(a);
        return cct_error_set(err, CCT_ENOMEM, "out of memory for %zu configurations", max_group);
    }
    size_order(plan, &s->opts, a->order, a->coarse);
    *out = a;
    return CCT_OK;
}

cct_status cct_adaptive_read_links(cct_adaptive *a, cct_schedule *s, cct_error *err)
{
    return links_quiet(s, &a->ps.quiet, err);
}

size_t cct_adaptive_size_at(const cct_adaptive *a, size_t oi)
{
    return a->order[oi];
}

void cct_adaptive_reset(cct_adaptive *a)
{
    size_t max_group = a->max_group;
    prune_state *ps = &a->ps;
    memset(ps->dead, 0, max_group * sizeof(bool));
    memset(ps->strikes, 0, max_group * sizeof(int));
    memset(ps->rest, 0, max_group * sizeof(int));
    memset(ps->prev, 0, 3 * max_group * sizeof(double));
    for (size_t k = 0; k < max_group; k++)
        ps->last_ratio[k] = ps->first_best[k] = NAN;
    for (size_t i = 0; i < a->nz * max_group; i++) {
        a->cratio[i] = NAN;
        a->ctwin[i] = false;
    }
}

/* Adaptive: struck, resting or a misaligned variant off its sizes at a coarse size, not
 * wanted by fine_wanted between coarse sizes; a misaligned variant also wherever its aligned
 * sibling is not measured. */
size_t cct_adaptive_prune(cct_adaptive *a, cct_sched_group *g, size_t zi)
{
    if (!a->opts->adaptive)
        return 0;
    prune_state *ps = &a->ps;
    const unsigned char *coarse = a->coarse;
    size_t lo = zi, hi = zi;
    while (!coarse[lo])
        lo--; /* the smallest and the largest size are coarse */
    while (!coarse[hi])
        hi++;
    const double *rlo = a->cratio + lo * a->max_group, *rhi = a->cratio + hi * a->max_group;
    const bool *tlo = a->ctwin + lo * a->max_group, *thi = a->ctwin + hi * a->max_group;
    bool pruned[4096] = {false};
    for (size_t k = 0; k < g->n; k++) {
        bool rested = coarse[zi] && ps->rest[k] > 0;
        if (rested)
            ps->rest[k]--; /* measured again when it reaches 0 */
        pruned[k] = coarse[zi] ? ps->dead[k] || rested || (g->slots[k].cfg->align && coarse[zi] < 2)
                               : !fine_wanted(&g->slots[k], k, rlo, rhi, tlo, thi, a->opts,
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

/* Adaptive, after a coarse size: strike and rest what it showed slower (prune_update) and
 * keep what it taught for the sizes between (record_coarse). */
void cct_adaptive_learn(cct_adaptive *a, const cct_sched_group *g, size_t zi)
{
    if (!a->opts->adaptive || !a->coarse[zi])
        return;
    uint64_t next_coarse[REST_MAX + 1] = {0}; /* the coarse sizes after this one */
    for (size_t z = zi + 1, m = 0; z < a->nz && m < REST_MAX; z++)
        if (a->coarse[z])
            next_coarse[m++] = a->plan->sizes[z];
    prune_update(a->opts, g, &a->ps, next_coarse);
    record_coarse(g, &a->ps, a->cratio + zi * a->max_group, a->ctwin + zi * a->max_group);
}
