/*
 * cct_backend_replay.c - a backend that answers from recorded real measurements, and the
 * replay role of `ccltune search --replay DB`.
 *
 * The schedule, the store and resume are the same code whether a GPU or a recording
 * answers, so replay lets CI run the whole search on a machine without a GPU and lets the
 * fault tests kill it at random moments.  A recorded configuration answers with its
 * recorded median time, perturbed by a deterministic noise of its recorded coefficient of
 * variation; sizes between recorded ones are interpolated on log-log axes.  Recorded
 * corruption, hangs and unsupported configurations are replayed as such.  A configuration
 * that was never recorded is reported unsupported rather than invented.  One exception, still
 * a measurement: a forced PAT (NCCL's choice for allgather/reducescatter at small sizes with
 * one rank per node) that the recording never forced -- its stores predate forcing PAT --
 * answers from the recorded default points where NCCL itself ran PAT with that protocol, at
 * NCCL's channel count: forcing it through the plugin makes NCCL run the same thing.
 *
 * Call modes (grouped ops, registered buffers) replay their own recorded points when the
 * recording has them.  A recording of plain calls only answers them from a SYNTHETIC model,
 * there so the pipeline (plan, store, keyed fit, bench) is testable without a GPU and never
 * a measurement: NCCL aggregates a group of k same-size collectives into one call of k x
 * bytes, so one op costs t(k x bytes) / k of the plain curve; Simple additionally pays
 * 10 % per extra op of the group (its pipelined chunks contend), and registered buffers
 * save Simple 15 % (no staging copy).  The tuner keys it reports are numPipeOps =
 * ceil(k / 2), as NCCL 2.28.9 passed for 4 ops on 2 channels (socket ranks on the H200),
 * regBuff as registered, and nBytes = k x bytes.
 *
 * Chunk sizes (tuner v6) replay their own recorded points when the recording has them.
 * Otherwise a SYNTHETIC model answers, again only so the chunk pipeline (search, fit, table,
 * plugin) is testable without a GPU: the chunk NCCL would run (cct_chunk.h) at or above
 * NCCL's own changes nothing; each halving below it makes messages of more than one chunk and
 * up to 16 of NCCL's chunks 4 % faster (at most 20 %: finer pipelining) and larger messages
 * 3 % slower (more steps).  The chunk run is reported as computed.
 *
 * A bench replays too (opts->bench_table): its 'tuned' configuration answers as the recorded
 * forced configuration of the table's rule for the call -- what the plugin would make NCCL
 * run -- and as NCCL's recorded default where the table has no rule.  NCCL model constants
 * are not replayed (a recording cannot say what NCCL would pick with other constants).
 */
#include "cct_backend_replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_bench.h"
#include "cct_chunk.h"
#include "cct_exit.h"
#include "cct_search.h"
#include "cct_search_run.h"
#include "cct_say.h"
#include "cct_table.h"

typedef struct replay_ctx {
    cct_point *points;
    size_t n;
    const cct_table *table; /* a bench's table under test, or NULL */
    uint64_t counter;       /* advances with every timed cycle: the noise sequence */
    double busy_us;         /* simulated GPU time of every call answered (verify and timed) */
} replay_ctx;

static bool same_cfg(const cct_config *a, const cct_config *b)
{
    return a->coll == b->coll && a->algo == b->algo && a->proto == b->proto &&
           a->channels == b->channels && a->buffsize == b->buffsize &&
           a->ll_buffsize == b->ll_buffsize && a->ll128_buffsize == b->ll128_buffsize &&
           a->align == b->align && a->dtype == b->dtype && a->ranks == b->ranks &&
           a->nodes == b->nodes && a->chunk == b->chunk && cct_config_same_mode(a, b);
}

/* Synthetic chunk sizes (a recording without them; see the top of this file). */
#define SYNTH_CHUNK_GAIN 0.04 /* per halving below NCCL's chunk, messages up to 16 chunks */
#define SYNTH_CHUNK_GAIN_MAX 0.20
#define SYNTH_CHUNK_COST 0.03 /* per halving, larger messages */

static bool recorded_chunk(const replay_ctx *c, uint64_t chunk)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->points[i].cfg.chunk == chunk)
            return true;
    return false;
}

/* The chunk NCCL would run for cfg (cct_chunk.h), 0 for NCCL's own. */
static uint64_t chunk_ran(const cct_config *cfg)
{
    if (cfg->chunk == 0 || cfg->algo < 0)
        return 0;
    uint64_t *buf = cct_config_buffsize((cct_config *)cfg, cfg->proto);
    uint64_t ceiling = cct_chunk_ceiling(cfg->coll, cfg->algo, cfg->proto, buf ? *buf : 0);
    return cct_chunk_used(cct_chunk_answer(cfg->chunk, cfg->proto), ceiling, cfg->proto);
}

/* The synthetic factor of running chunk `used` instead of NCCL's (its buffer ceiling). */
static double synth_chunk_factor(const cct_config *cfg, uint64_t bytes, uint64_t used)
{
    uint64_t own = cct_chunk_ceiling(cfg->coll, cfg->algo, cfg->proto, 0);
    if (used == 0 || own == 0 || used >= own || bytes <= used)
        return 1.0;
    double halvings = log2((double)own / (double)used);
    if (bytes <= 16 * own) {
        double gain = SYNTH_CHUNK_GAIN * halvings;
        return 1.0 - (gain < SYNTH_CHUNK_GAIN_MAX ? gain : SYNTH_CHUNK_GAIN_MAX);
    }
    return 1.0 + SYNTH_CHUNK_COST * halvings;
}

/* cfg with NCCL's own chunk when the recording lacks cfg's, and the synthetic factor. */
static cct_config chunk_base(const replay_ctx *c, const cct_config *cfg, uint64_t bytes,
                             double *factor)
{
    cct_config base = *cfg;
    if (cfg->chunk == 0 || recorded_chunk(c, cfg->chunk))
        return base;
    base.chunk = 0;
    *factor *= synth_chunk_factor(cfg, bytes, chunk_ran(cfg));
    return base;
}

/* Synthetic answers for a call mode the recording lacks (see the top of this file). */
#define SYNTH_SIMPLE_PER_OP 0.10
#define SYNTH_SIMPLE_REGISTERED 0.85

static bool recorded_mode(const replay_ctx *c, const cct_config *cfg)
{
    for (size_t i = 0; i < c->n; i++)
        if (cct_config_same_mode(&c->points[i].cfg, cfg))
            return true;
    return false;
}

/* The plain configuration and size the synthetic model starts from, and its factor. */
static cct_config synth_base(const cct_config *cfg, uint64_t bytes, uint64_t *plain_bytes,
                             double *factor)
{
    int k = cct_config_pipe_ops(cfg);
    cct_config plain = *cfg;
    plain.pipe_ops = 0;
    plain.reg_buff = false;
    *plain_bytes = bytes * (uint64_t)k;
    *factor = 1.0 / k;
    if (cfg->proto == CCT_PROTO_SIMPLE) {
        *factor *= 1.0 + SYNTH_SIMPLE_PER_OP * (k - 1);
        if (cfg->reg_buff)
            *factor *= SYNTH_SIMPLE_REGISTERED;
    }
    return plain;
}

static void synth_keys(const cct_config *cfg, uint64_t bytes, cct_observed *obs)
{
    int k = cct_config_pipe_ops(cfg);
    obs->tuner_pipe_ops = (k + 1) / 2;
    obs->tuner_reg_buff = cfg->reg_buff ? 1 : 0;
    obs->tuner_bytes = bytes * (uint64_t)k;
}

/* NCCL's default point that ran cfg -- a forced PAT at NCCL's channel count -- by itself:
 * the same call NCCL makes when the plugin forces it (see the top of this file). */
static bool default_ran(const cct_point *p, const cct_config *cfg)
{
    if (cfg->algo != CCT_ALGO_PAT || cfg->channels != 0 || p->cfg.algo != CCT_DEFAULT ||
        p->nccl_algo != cfg->algo || p->nccl_proto != cfg->proto)
        return false;
    cct_config d = *cfg;
    d.algo = d.proto = CCT_DEFAULT;
    return same_cfg(&p->cfg, &d);
}

static bool recorded_cfg(const replay_ctx *c, const cct_config *cfg)
{
    for (size_t i = 0; i < c->n; i++)
        if (same_cfg(&c->points[i].cfg, cfg))
            return true;
    return false;
}

/* The recorded points of cfg bracketing bytes (out of place preferred).  A forced PAT the
 * recording never forced answers from the default points where NCCL ran it, only between
 * the smallest and the largest of them (no extrapolation to sizes where NCCL ran another). */
static void bracket(const replay_ctx *c, const cct_config *cfg, uint64_t bytes,
                    const cct_point **lo, const cct_point **hi, const cct_point **exact)
{
    *lo = *hi = *exact = NULL;
    bool by_default = cfg->algo == CCT_ALGO_PAT && !recorded_cfg(c, cfg);
    for (size_t i = 0; i < c->n; i++) {
        const cct_point *p = &c->points[i];
        if (p->in_place || !(by_default ? default_ran(p, cfg) : same_cfg(&p->cfg, cfg)))
            continue;
        if (p->bytes == bytes)
            *exact = p;
        if (p->status != CCT_POINT_OK && p->status != CCT_POINT_CORRUPT)
            continue;
        if (p->bytes <= bytes && (!*lo || p->bytes > (*lo)->bytes))
            *lo = p;
        if (p->bytes >= bytes && (!*hi || p->bytes < (*hi)->bytes))
            *hi = p;
    }
    if (by_default && !*exact && (!*lo || !*hi))
        *lo = *hi = NULL;
}

static double interpolate(const cct_point *lo, const cct_point *hi, uint64_t bytes, double *cv)
{
    if (!lo)
        lo = hi;
    if (!hi)
        hi = lo;
    *cv = 0.5 * (lo->stats.cv + hi->stats.cv);
    if (lo->bytes == hi->bytes)
        return lo->stats.median_us;
    double x = log((double)bytes), x0 = log((double)lo->bytes), x1 = log((double)hi->bytes);
    double y0 = log(lo->stats.median_us), y1 = log(hi->stats.median_us);
    return exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0));
}

static double noise(uint64_t *counter, double cv)
{
    /* splitmix64 -> two uniforms -> a normal deviate (Box-Muller) */
    uint64_t x = (*counter += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    double u1 = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
    double u2 = ((double)((x * 2654435761u) >> 11) + 0.5) / 9007199254740992.0;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    double f = 1.0 + cv * z;
    return f > 0.2 ? f : 0.2;
}

/* What a call runs on the recorded machine: a bench's 'tuned' is the configuration of the
 * table's rule for the call, as the plugin would apply it, or NCCL's default where the table
 * has no rule for it (or no table was given). */
static cct_config resolve_tuned(const replay_ctx *c, const cct_config *cfg, uint64_t bytes)
{
    cct_config r = *cfg;
    if (cfg->algo != CCT_TUNED)
        return r;
    r.algo = r.proto = CCT_DEFAULT;
    r.channels = 0;
    const cct_section *s =
        c->table ? cct_table_find_section(c->table, cfg->coll, cfg->ranks, cfg->nodes,
                                          cct_config_pipe_ops(cfg), cfg->reg_buff ? 1 : 0)
                 : NULL;
    const cct_rule *rule = s ? cct_section_lookup(s, bytes) : NULL;
    if (rule) {
        r.algo = rule->algo;
        r.proto = rule->proto;
        r.channels = rule->channels;
        r.chunk = rule->chunk_bytes;
    }
    return r;
}

static cct_status rp_select(void *ctx, const cct_config *cfg, cct_error *err)
{
    (void)ctx;
    (void)cfg;
    (void)err;
    return CCT_OK;
}

static cct_status rp_verify(void *ctx, const cct_config *call, uint64_t bytes, bool in_place,
                            uint64_t *wrong, cct_observed *obs, cct_error *err)
{
    replay_ctx *c = ctx;
    (void)in_place;
    cct_config ran = resolve_tuned(c, call, bytes);
    const cct_config *cfg = &ran;
    const cct_point *lo, *hi, *exact;
    bool synth = !recorded_mode(c, cfg);
    uint64_t at = bytes;
    double factor = 1.0;
    cct_config base = synth ? synth_base(cfg, bytes, &at, &factor) : *cfg;
    base = chunk_base(c, &base, at, &factor);
    bracket(c, &base, at, &lo, &hi, &exact);
    *wrong = 0;
    obs->applied = false;
    obs->nccl_algo = obs->nccl_proto = -1;
    if (synth)
        synth_keys(cfg, bytes, obs);
    else if (exact && exact->tuner_pipe_ops > 0) {
        obs->tuner_pipe_ops = exact->tuner_pipe_ops;
        obs->tuner_reg_buff = exact->tuner_reg_buff;
        obs->tuner_bytes = exact->tuner_bytes;
    }
    if (exact && exact->status == CCT_POINT_HANG)
        return cct_error_set(err, CCT_ETIMEOUT, "replayed hang");
    if (exact && exact->status == CCT_POINT_UNSUPPORTED)
        return CCT_OK;
    if (!lo && !hi)
        return CCT_OK; /* never recorded: unsupported, not invented */
    const cct_point *ref = exact ? exact : (lo ? lo : hi);
    double cv;
    double t = exact && exact->stats.n ? exact->stats.median_us : interpolate(lo, hi, bytes, &cv);
    if (isfinite(t))
        c->busy_us += t; /* one checked call */
    *wrong = ref->wrong;
    obs->applied = true;
    obs->chunk_used = chunk_ran(cfg); /* computed: a recording cannot observe it */
    obs->chunk_observed = false;
    obs->nccl_algo = cfg->algo == CCT_DEFAULT ? ref->nccl_algo : cfg->algo;
    obs->nccl_proto = cfg->proto == CCT_DEFAULT ? ref->nccl_proto : cfg->proto;
    return CCT_OK;
}

static cct_status rp_time(void *ctx, const cct_config *call, uint64_t bytes, bool in_place,
                          int iters, double *elapsed_us, cct_error *err)
{
    replay_ctx *c = ctx;
    (void)in_place;
    cct_config ran = resolve_tuned(c, call, bytes);
    const cct_config *cfg = &ran;
    const cct_point *lo, *hi, *exact;
    uint64_t at = bytes;
    double factor = 1.0;
    cct_config base = recorded_mode(c, cfg) ? *cfg : synth_base(cfg, bytes, &at, &factor);
    base = chunk_base(c, &base, at, &factor);
    bracket(c, &base, at, &lo, &hi, &exact);
    if (!lo && !hi)
        return cct_error_set(err, CCT_EINVAL, "replay has no recording for this configuration");
    double cv;
    double t = exact && exact->stats.n ? exact->stats.median_us : interpolate(lo, hi, at, &cv);
    if (exact && exact->stats.n)
        cv = exact->stats.cv;
    *elapsed_us = t * factor * iters * noise(&c->counter, cv);
    c->busy_us += *elapsed_us;
    return CCT_OK;
}

static cct_status rp_reduce_max(void *ctx, double *v, size_t n, cct_error *err)
{
    (void)ctx, (void)v, (void)n, (void)err;
    return CCT_OK;
}

static cct_status rp_reduce_sum(void *ctx, uint64_t *v, size_t n, cct_error *err)
{
    (void)ctx, (void)v, (void)n, (void)err;
    return CCT_OK;
}

static cct_status rp_broadcast(void *ctx, void *d, size_t n, cct_error *err)
{
    (void)ctx, (void)d, (void)n, (void)err;
    return CCT_OK;
}

static const cct_backend_ops replay_ops = {rp_select,     rp_verify,     rp_time,
                                           rp_reduce_max, rp_reduce_sum, rp_broadcast};

cct_status cct_replay_backend_create(const cct_point *points, size_t n, uint64_t seed,
                                     cct_backend *backend, cct_error *err)
{
    replay_ctx *c = calloc(1, sizeof *c);
    cct_point *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (!c || (n && !copy)) {
        free(c);
        free(copy);
        return cct_error_set(err, CCT_ENOMEM, "out of memory for %zu recorded points", n);
    }
    if (n)
        memcpy(copy, points, n * sizeof *copy);
    c->points = copy;
    c->n = n;
    c->counter = seed;
    backend->ops = &replay_ops;
    backend->ctx = c;
    backend->rank = 0;
    backend->nranks = 1;
    return CCT_OK;
}

void cct_replay_backend_set_table(cct_backend *backend, const cct_table *table)
{
    replay_ctx *c = backend->ctx;
    c->table = table;
}

double cct_replay_backend_busy_us(const cct_backend *backend)
{
    const replay_ctx *c = backend->ctx;
    return c ? c->busy_us : 0.0;
}

void cct_replay_backend_destroy(cct_backend *backend)
{
    replay_ctx *c = backend->ctx;
    if (c) {
        free(c->points);
        free(c);
    }
    backend->ctx = NULL;
}

/* The topology most of the recording was measured on. */
static void recorded_topology(const cct_point *p, size_t n, int *ranks, int *nodes)
{
    *ranks = 0;
    *nodes = 0;
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < n; j++)
            count += p[j].cfg.ranks == p[i].cfg.ranks && p[j].cfg.nodes == p[i].cfg.nodes;
        if (count > best) {
            best = count;
            *ranks = p[i].cfg.ranks;
            *nodes = p[i].cfg.nodes;
        }
        if (best > n / 2)
            break;
    }
}

/* The recorded store's points from controlled runs: production observations (imported job
 * recordings) are not measurements a search could have taken. */
static cct_status load_measured(cct_store *rec, cct_point **points, size_t *n, cct_error *err)
{
    cct_store_run *runs = NULL;
    size_t n_runs = 0, k = 0;
    *points = NULL;
    *n = 0;
    cct_status st = cct_store_list_runs(rec, &runs, &n_runs, err);
    int64_t *ids = st == CCT_OK && n_runs ? calloc(n_runs, sizeof *ids) : NULL;
    if (st == CCT_OK && n_runs && !ids)
        st = cct_error_set(err, CCT_ENOMEM, "replay: out of memory");
    for (size_t i = 0; st == CCT_OK && i < n_runs; i++)
        if (strcmp(runs[i].source, "production") != 0)
            ids[k++] = runs[i].id;
    if (st == CCT_OK && k)
        st = cct_store_load_points(rec, ids, k, points, n, err);
    free(ids);
    free(runs);
    return st;
}

int cct_search_replay(cct_search_opts *o, cct_error *out)
{
    cct_error err;
    cct_error_clear(&err);
    cct_store *rec = NULL;
    cct_point *points = NULL;
    size_t n = 0;
    /* a replay has no links of its own: only --links-from's recorded matrix is stored */
    if (cct_search_links_load(o, &err) != CCT_OK)
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    if (cct_store_open(o->replay_path, true, &rec, &err) != CCT_OK ||
        load_measured(rec, &points, &n, &err) != CCT_OK) {
        cct_store_close(rec);
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    }
    if (n == 0) {
        cct_store_close(rec);
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s holds no measurements to replay",
                               o->replay_path);
    }
    int ranks, nodes;
    recorded_topology(points, n, &ranks, &nodes);
    if (o->ranks)
        ranks = o->ranks;
    /* the recording's fingerprint, marked as replayed */
    cct_store_fingerprint fp;
    memset(&fp, 0, sizeof fp);
    cct_store_run *runs = NULL;
    size_t n_runs = 0;
    if (cct_store_list_runs(rec, &runs, &n_runs, &err) == CCT_OK && n_runs)
        cct_store_get_fingerprint(rec, runs[0].fingerprint_id, &fp, &err);
    free(runs);
    cct_store_close(rec);
    char host[sizeof fp.host];
    snprintf(host, sizeof host, "replay of %s", o->replay_path);
    memcpy(fp.host, host, sizeof fp.host);
    if (cct_search_check_chunk(o, &fp, &err) != CCT_OK) {
        free(points);
        return cct_search_fail(out, CCT_EXIT_USAGE, "%s", err.msg);
    }
    cct_search_run run;
    cct_status begun = cct_search_begin(o, ranks, nodes, &fp, "replay", &run, &err);
    cct_search_links_free(o);
    if (begun != CCT_OK) {
        free(points);
        return cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    }
    cct_say(CCT_SAY_ERR,
            "ccltune search: replaying %zu recorded points from %s (no GPU is used); run %lld "
            "in %s, %zu sessions\n",
            n, o->replay_path, (long long)run.run_id, o->store_path, run.plan.n_sessions);
    cct_backend backend;
    int code = CCT_EXIT_OK;
    /* a bench: 'tuned' answers as the table's rules would run (the plan loaded it already) */
    cct_table table;
    cct_table_init(&table);
    if (o->bench_table && cct_table_load_file(o->bench_table, &table, &err) != CCT_OK) {
        code = cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    } else if (cct_replay_backend_create(points, n, o->seed, &backend, &err) != CCT_OK) {
        code = cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
    } else {
        cct_replay_backend_set_table(&backend, o->bench_table ? &table : NULL);
        for (size_t s = 0; s < run.plan.n_sessions && code == CCT_EXIT_OK; s++) {
            if (!cct_search_session_wanted(o, &run.plan, s, run.ll128_allowed)) {
                cct_say(CCT_SAY_ERR, "session %zu/%zu: skipped (forces LL128, not enabled here)\n",
                        s + 1, run.plan.n_sessions);
                continue;
            }
            cct_schedule sched;
            cct_status st;
            int restarts = 0;
            do {
                /* like the launcher: a hang is stored, the session restarts past it */
                memset(&sched, 0, sizeof sched);
                sched.plan = &run.plan;
                sched.session = s;
                sched.backend = &backend;
                sched.store = run.store;
                sched.run_id = run.run_id;
                sched.opts = o->sched;
                st = cct_schedule_run(&sched, &err);
            } while (st == CCT_ETIMEOUT && restarts++ < o->max_restarts);
            if (st != CCT_OK)
                code = cct_search_fail(out, CCT_EXIT_FAIL, "%s", err.msg);
            else
                cct_say(CCT_SAY_ERR,
                        "session %zu/%zu: %zu measured, %zu already stored, %zu corrupt, "
                        "%zu unsupported, %zu noisy, %d restart(s) after hangs\n",
                        s + 1, run.plan.n_sessions, sched.points_done, sched.points_skipped,
                        sched.n_corrupt, sched.n_unsupported, sched.n_noisy, restarts);
        }
        /* the recorded times of every call the schedule made: what the search would have
         * spent measuring on the recorded machine (start-up and host work aside) */
        cct_say(CCT_SAY_ERR, "replay: simulated measuring time %.3f s\n",
                cct_replay_backend_busy_us(&backend) / 1e6);
        cct_replay_backend_destroy(&backend);
    }
    cct_table_destroy(&table);
    int64_t id = run.run_id;
    cct_search_end(&run, code == CCT_EXIT_OK ? CCT_RUN_DONE : CCT_RUN_FAILED, &err);
    free(points);
    if (code == CCT_EXIT_OK && o->bench_table) /* a bench ends with its report, as launched */
        return cct_bench_finish(o, id);
    if (code == CCT_EXIT_OK)
        cct_say(CCT_SAY_OUT, "%lld\n", (long long)id);
    return code;
}
