/*
 * plugin_context.c - one context per communicator: everything decided once at init, so
 * that each getCollInfo is a few loads, a binary search and one relaxed atomic add.
 *
 * At init the context checks the table's fingerprint against this communicator (GPU,
 * NCCL version, ranks/nodes, shared-GPU rule).  If the table does not apply, `mode` holds
 * the reason and every call just counts it.  Otherwise it collects, per collective, the
 * sections for this (nRanks, nNodes) ordered most specific first (pipe_ops and reg_buff
 * before CCT_ANY), and evaluates the LL128 rule per (collective, algorithm) for the running
 * NCCL and this GPU, combined with the table's own verdict (which covered the link paths).
 *
 * With a folder of tables (CCLTUNE_TABLE naming a folder) the table is chosen here, once per
 * communicator, by the fleet precedence (cct_fleet.h); the context then points into that
 * table's index exactly as into a single table's, so the per-call path does not change.
 *
 * The context is read-only after init except for its counters (relaxed atomics: only
 * their final sums matter), so any number of threads may call into it at once.  Its
 * candidates are a range of the process-wide index, so the context itself is its only
 * allocation; finalize poisons it (see the quarantine below).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_fleet.h"
#include "plugin_internal.h"

struct cct_pctx {
    cct_pctx_head head; /* first: the poison word cct_ctx_live() reads */
    int abi;
    uint64_t comm_id;
    char label[32]; /* "0x1a2b..." (v5+) or "#7" (older ABIs have no commId) */
    int nranks, nnodes;
    ncclDebugLogger_t log;
    atomic_int mode; /* CCT_OUT_OVERRIDDEN: the table applies; else every call's outcome */
    bool trace;
    int nccl_version;
    const cct_band_index *cands;    /* this shape's sections in the state's index; NULL: none */
    uint32_t grp[CCT_NUM_COLLS][5]; /* per collective, its sections of score 3, 2, 1, 0:
                                     * cands[grp[c][g] .. grp[c][g + 1]) */
    const cct_band_index *chunk_ix[CCT_NUM_COLLS];  /* what v6 getChunkSize consults; NULL
                                                     * where the section has no chunk rule */
    bool ll128_ok[CCT_NUM_COLLS][CCT_NUM_ALGOS];    /* runtime rule and table verdict */
    bool ll128_force[CCT_NUM_COLLS][CCT_NUM_ALGOS]; /* what measurement mode may force */
    const cct_env_mask *env;                        /* v1/v2 on NCCL < 2.22 only */
    const cct_constants *constants; /* the table's nccl_constants when they apply here */
    const char *table_path;         /* the table in use ("" none); the state owns it */
    atomic_uint_fast64_t count[CCT_NUM_OUTCOMES];
    /* nBytes of the last getCollInfo per collective: getChunkSize is asked per channel range,
     * with that range's bytes, but a rule's band is in the collective's */
    atomic_uint_fast64_t last_bytes[CCT_NUM_COLLS];
    struct cct_pctx *next_dead; /* the quarantine's list */
};

static atomic_uint context_seq;

/* A finalized context is poisoned, not freed at once: it waits in a FIFO quarantine of
 * CTX_QUARANTINE contexts before its memory is reused for a new one, so a second finalize or
 * a getCollInfo after finalize (NCCL never does either) reads CCT_CTX_DEAD and is refused instead
 * of touching freed memory.  The quarantine is freed when the library unloads. */
#define CTX_QUARANTINE 64

static pthread_mutex_t dead_mu = PTHREAD_MUTEX_INITIALIZER;
static cct_pctx *dead_head, *dead_tail; /* oldest first */
static size_t n_dead;

static cct_pctx *ctx_alloc(void)
{
    cct_pctx *ctx = NULL;
    pthread_mutex_lock(&dead_mu);
    if (n_dead > CTX_QUARANTINE) {
        ctx = dead_head;
        dead_head = ctx->next_dead;
        if (!dead_head)
            dead_tail = NULL;
        n_dead--;
    }
    pthread_mutex_unlock(&dead_mu);
    if (ctx)
        memset(ctx, 0, sizeof *ctx);
    else
        ctx = calloc(1, sizeof *ctx);
    return ctx;
}

static void ctx_bury(cct_pctx *ctx)
{
    atomic_store(&ctx->head.magic, CCT_CTX_DEAD);
    ctx->next_dead = NULL;
    pthread_mutex_lock(&dead_mu);
    if (dead_tail)
        dead_tail->next_dead = ctx;
    else
        dead_head = ctx;
    dead_tail = ctx;
    n_dead++;
    pthread_mutex_unlock(&dead_mu);
    cct_pstate_ctx_add(-1);
}

__attribute__((destructor)) static void ctx_free_quarantine(void)
{
    pthread_mutex_lock(&dead_mu);
    while (dead_head) {
        cct_pctx *next = dead_head->next_dead;
        free(dead_head);
        dead_head = next;
    }
    dead_tail = NULL;
    n_dead = 0;
    pthread_mutex_unlock(&dead_mu);
}

/* ---------- the per-call path ---------- */

/* The most specific section for (pipe_ops, reg_buff): score groups in order, each sorted
 * by (pipe_ops, reg_buff), searched for the exact key the group's sections carry. */
/* ix when its section has a chunk rule, else NULL: getChunkSize then has nothing to look up,
 * and getCollInfo need not note its bytes. */
static const cct_band_index *has_chunk_rule(const cct_band_index *ix)
{
    for (size_t r = 0; ix && ix->sec && r < ix->sec->n_rules; r++)
        if (ix->sec->rules[r].chunk_bytes)
            return ix;
    return NULL;
}

static inline const cct_band_index *pick(const cct_pctx *ctx, int coll, int pipe_ops, int reg_buff)
{
    const uint32_t *g = ctx->grp[coll];
    const cct_band_index *c = ctx->cands;
    if (g[0] == g[3]) /* the common case: only sections for any pipe_ops and reg_buff */
        return g[3] < g[4] ? &c[g[3]] : NULL;
    for (int s = 0; s < 4; s++) {
        uint32_t lo = g[s], hi = g[s + 1];
        if (lo == hi)
            continue;
        int qp = s < 2 ? pipe_ops : CCT_ANY;        /* scores 3 and 2 set pipe_ops */
        int qr = (s & 1) == 0 ? reg_buff : CCT_ANY; /* scores 3 and 1 set reg_buff */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (c[mid].pipe_ops < qp || (c[mid].pipe_ops == qp && c[mid].reg_buff < qr))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < g[s + 1] && c[lo].pipe_ops == qp && c[lo].reg_buff == qr)
            return &c[lo];
    }
    return NULL;
}

/* The rule for a call, or NULL with the outcome that explains why not. */
static inline const cct_rule *find_rule(const cct_pctx *ctx, int coll, size_t bytes, int pipe_ops,
                                        int reg_buff, cct_outcome *why)
{
    int mode = atomic_load_explicit(&ctx->mode, memory_order_relaxed);
    if (mode != CCT_OUT_OVERRIDDEN) {
        *why = (cct_outcome)mode;
        return NULL;
    }
    if ((unsigned)coll >= CCT_NUM_COLLS) {
        *why = CCT_OUT_NO_SECTION;
        return NULL;
    }
    const cct_band_index *ix = pick(ctx, coll, pipe_ops, reg_buff);
    if (!ix) {
        *why = CCT_OUT_NO_SECTION;
        return NULL;
    }
    const cct_rule *r = cct_band_lookup(ix, bytes);
    if (!r || r->algo < 0 || r->algo >= CCT_NUM_ALGOS) {
        *why = CCT_OUT_NO_RULE;
        return NULL;
    }
    return r;
}

void cct_ctx_count(cct_pctx *ctx, cct_outcome outcome)
{
    atomic_fetch_add_explicit(&ctx->count[outcome], 1, memory_order_relaxed);
}

/* Inline so the per-call path is one function; cct_ctx_decide_costs wraps it for
 * measurement mode. */
static inline __attribute__((always_inline)) cct_decision
decide_costs(const cct_pctx *ctx, int coll, size_t bytes, int pipe_ops, int reg_buff, float *costs,
             int num_algo, int num_proto, int *n_channels)
{
    cct_decision d = {CCT_OUT_NO_SECTION, -1, -1, 0};
    const cct_rule *r = find_rule(ctx, coll, bytes, pipe_ops, reg_buff, &d.outcome);
    if (!r)
        return d;
    d.outcome = cct_select_apply(costs, num_algo, num_proto, r->algo, r->proto,
                                 ctx->ll128_ok[coll][r->algo]);
    if (d.outcome == CCT_OUT_OVERRIDDEN) {
        d.algo = r->algo;
        d.proto = r->proto;
        if (r->channels > 0 && n_channels) {
            *n_channels = r->channels;
            d.channels = r->channels;
        }
    }
    return d;
}

cct_decision cct_ctx_decide_costs(const cct_pctx *ctx, int coll, size_t bytes, int pipe_ops,
                                  int reg_buff, float *costs, int num_algo, int num_proto,
                                  int *n_channels)
{
    return decide_costs(ctx, coll, bytes, pipe_ops, reg_buff, costs, num_algo, num_proto,
                        n_channels);
}

cct_decision cct_ctx_decide_v2(const cct_pctx *ctx, int coll, size_t bytes, int collnet_support,
                               int nvls_support, int pipe_ops, int *algo, int *proto,
                               int *n_channels)
{
    cct_decision d = {CCT_OUT_NO_SECTION, -1, -1, 0};
    /* v1/v2 do not say whether buffers are registered: only reg_buff-agnostic sections */
    const cct_rule *r = find_rule(ctx, coll, bytes, pipe_ops, -1, &d.outcome);
    if (!r)
        return d;
    cct_v2_call call = {ctx->nccl_version, ctx->nnodes,  coll,
                        collnet_support,   nvls_support, ctx->env};
    d.outcome = cct_select_check_v2(&call, r->algo, r->proto, ctx->ll128_ok[coll][r->algo]);
    if (d.outcome == CCT_OUT_OVERRIDDEN && algo && proto) {
        /* NCCL needs both or neither: it fills in only when one of them is UNDEF */
        *algo = d.algo = r->algo;
        *proto = d.proto = r->proto;
        if (r->channels > 0 && n_channels) {
            *n_channels = r->channels;
            d.channels = r->channels;
        }
    } else if (d.outcome == CCT_OUT_OVERRIDDEN) {
        d.outcome = CCT_OUT_IGNORED;
    }
    return d;
}

static void trace_decision(const cct_pctx *ctx, int coll, size_t bytes, int pipe_ops, int reg_buff,
                           const cct_decision *d)
{
    ctx->log(NCCL_LOG_TRACE, CCT_NCCL_SUBSYS_TUNING, "plugin_context.c", __LINE__,
             "ccltune: comm %s %s %zu bytes pipe_ops=%d reg_buff=%d -> %s%s%s channels=%d (%s)",
             ctx->label, cct_coll_name(coll), bytes, pipe_ops, reg_buff,
             d->algo >= 0 ? cct_algo_name(d->algo) : "nccl-default", d->algo >= 0 ? "/" : "",
             d->algo >= 0 ? cct_proto_name(d->proto) : "", d->channels,
             cct_outcome_name(d->outcome));
}

cct_outcome cct_ctx_coll_costs(cct_pctx *ctx, int coll, size_t bytes, int pipe_ops, float **costs,
                               int num_algo, int num_proto, int reg_buff, int *n_channels)
{
    if ((unsigned)coll < CCT_NUM_COLLS && ctx->chunk_ix[coll])
        atomic_store_explicit(&ctx->last_bytes[coll], bytes, memory_order_relaxed);
    if (atomic_load_explicit(&cct_measure_on, memory_order_relaxed))
        return cct_control_coll_costs(ctx, coll, bytes, pipe_ops, (float *)costs, num_algo,
                                      num_proto, reg_buff, n_channels);
    cct_decision d = decide_costs(ctx, coll, bytes, pipe_ops, reg_buff, (float *)costs, num_algo,
                                  num_proto, n_channels);
    cct_ctx_count(ctx, d.outcome);
    if (ctx->trace && ctx->log)
        trace_decision(ctx, coll, bytes, pipe_ops, reg_buff, &d);
    return d.outcome;
}

cct_outcome cct_ctx_coll_v2(cct_pctx *ctx, int coll, size_t bytes, int collnet_support,
                            int nvls_support, int pipe_ops, int *algo, int *proto, int *n_channels)
{
    if (atomic_load_explicit(&cct_measure_on, memory_order_relaxed))
        return cct_control_coll_v2(ctx, coll, bytes, collnet_support, nvls_support, pipe_ops, algo,
                                   proto, n_channels);
    cct_decision d = cct_ctx_decide_v2(ctx, coll, bytes, collnet_support, nvls_support, pipe_ops,
                                       algo, proto, n_channels);
    cct_ctx_count(ctx, d.outcome);
    if (ctx->trace && ctx->log)
        trace_decision(ctx, coll, bytes, pipe_ops, -1, &d);
    return d.outcome;
}

void cct_ctx_chunk_size(cct_pctx *ctx, int coll, size_t bytes, int algo, int proto, int n_channels,
                        size_t *chunk)
{
    if (!chunk)
        return;
    /* measurement mode: a forced chunk, or NCCL's own while forcing (never the table's) */
    size_t nccls = *chunk;
    if (atomic_load_explicit(&cct_measure_on, memory_order_relaxed) &&
        cct_control_chunk(coll, bytes, algo, proto, chunk)) {
        /* at INFO under TUNING, beside NCCL's own per-call TUNING lines (and its "exceeds
         * buffer max, clamping" line when it caps the answer) */
        if (*chunk != nccls && ctx->log)
            ctx->log(NCCL_LOG_INFO, CCT_NCCL_SUBSYS_TUNING, "plugin_context.c", __LINE__,
                     "ccltune: comm %s %s %zu bytes %s/%s chunk %zu -> %zu (forced)", ctx->label,
                     cct_coll_name(coll), bytes, cct_algo_name(algo), cct_proto_name(proto), nccls,
                     *chunk);
        return;
    }
    if (atomic_load_explicit(&ctx->mode, memory_order_relaxed) != CCT_OUT_OVERRIDDEN ||
        (unsigned)coll >= CCT_NUM_COLLS || !ctx->chunk_ix[coll] || cct_control_forcing() ||
        cct_control_bypassing())
        return;
    /* NCCL asks once per channel range with that range's bytes; the band is the collective's:
     * the last getCollInfo's bytes for this collective when they can hold the range (NCCL
     * decides a group's tasks before it schedules them, so in a group of several same-kind
     * collectives of different sizes this is the last one's -- a known approximation) */
    uint64_t total = atomic_load_explicit(&ctx->last_bytes[coll], memory_order_relaxed);
    const cct_rule *r = cct_band_lookup(ctx->chunk_ix[coll], total >= bytes ? total : bytes);
    /* only for the rule's own configuration: a chunk size tuned for ring/simple means
     * nothing to the tree/ll NCCL may have chosen instead */
    if (!r || r->chunk_bytes == 0 || r->algo != algo || r->proto != proto)
        return;
    size_t before = *chunk;
    *chunk = (size_t)r->chunk_bytes;
    if (ctx->trace && ctx->log)
        ctx->log(NCCL_LOG_TRACE, CCT_NCCL_SUBSYS_TUNING, "plugin_context.c", __LINE__,
                 "ccltune: comm %s %s %zu bytes %s/%s channels=%d chunk %zu -> %zu", ctx->label,
                 cct_coll_name(coll), bytes, cct_algo_name(algo), cct_proto_name(proto), n_channels,
                 before, *chunk);
}

/* ---------- accessors ---------- */

void cct_ctx_counters(const cct_pctx *ctx, uint64_t out[CCT_NUM_OUTCOMES])
{
    for (int i = 0; i < CCT_NUM_OUTCOMES; i++)
        out[i] = atomic_load_explicit(&ctx->count[i], memory_order_relaxed);
}

int cct_ctx_nranks(const cct_pctx *ctx)
{
    return ctx->nranks;
}
int cct_ctx_nnodes(const cct_pctx *ctx)
{
    return ctx->nnodes;
}
int cct_ctx_nccl_version(const cct_pctx *ctx)
{
    return ctx->nccl_version;
}
const cct_env_mask *cct_ctx_env(const cct_pctx *ctx)
{
    return ctx->env;
}

bool cct_ctx_ll128_forceable(const cct_pctx *ctx, int coll, int algo)
{
    if (!ctx || (unsigned)coll >= CCT_NUM_COLLS || (unsigned)algo >= CCT_NUM_ALGOS)
        return false;
    return ctx->ll128_force[coll][algo];
}

const cct_constants *cct_ctx_constants(const cct_pctx *ctx)
{
    return ctx ? ctx->constants : NULL;
}

ncclDebugLogger_t cct_ctx_logger(const cct_pctx *ctx)
{
    return ctx->log;
}

const char *cct_ctx_table_path(const cct_pctx *ctx)
{
    return ctx && ctx->table_path ? ctx->table_path : "";
}

const char *cct_ctx_label(const cct_pctx *ctx)
{
    return ctx->label;
}

void cct_ctx_set_ambiguous(cct_pctx *ctx)
{
    atomic_store(&ctx->mode, CCT_OUT_MISMATCH);
}

/* ---------- init ---------- */

/* This communicator's sections: a range of the state's index, found by binary search
 * (plugin_index.c), so init costs O(log n) whatever the table holds. */
static void build_candidates(cct_pctx *ctx, const cct_table_index *x, size_t *n_sec,
                             size_t *n_rules)
{
    size_t lo, hi;
    cct_table_index_shape(x, ctx->nranks, ctx->nnodes, &lo, &hi);
    *n_sec = hi - lo;
    *n_rules = x->rules_before[hi] - x->rules_before[lo];
    ctx->cands = x->ix + lo;
    for (int c = 0; c < CCT_NUM_COLLS; c++) {
        size_t g[5];
        cct_table_index_groups(x, lo, hi, ctx->nranks, ctx->nnodes, c, g);
        for (int k = 0; k < 5; k++)
            ctx->grp[c][k] = (uint32_t)(g[k] - lo); /* < 2^32: the file size limit */
        /* getChunkSize is not told numPipeOps or regBuff: use the section of a single,
         * unregistered-or-unknown operation */
        ctx->chunk_ix[c] = has_chunk_rule(pick(ctx, c, 1, -1));
    }
}

static void build_ll128(cct_pctx *ctx, const cct_pstate *ps, const cct_table *t, int cc)
{
    for (int c = 0; c < CCT_NUM_COLLS; c++) {
        for (int a = 0; a < CCT_NUM_ALGOS; a++) {
            cct_ll128_query q = cct_ll128_query_blank();
            q.nccl_version = ps->nccl_version;
            q.min_cc = q.max_cc = cc;
            q.ll128_c2c = ps->ll128_c2c;
            q.coll = c;
            q.algo = a;
            q.nranks = ctx->nranks;
            cct_ll128_verdict v = cct_ll128_check(&q, NULL, 0);
            /* The CUDA 11.8 exception cannot be decided here.  With a cost table and no
             * NCCL_PROTO override, NCCL has applied its own rule already: an LL128 entry
             * it did not enable arrives ignored, so "allowed" is safe.  Without a cost
             * table (v1/v2), or when NCCL_PROTO bypassed NCCL's rule, stay on the safe side. */
            bool ok = v == CCT_LL128_ALLOWED ||
                      (v == CCT_LL128_UNLESS_CUDA_11_8 && ctx->abi >= 3 && !ps->proto_env_set);
            ctx->ll128_ok[c][a] = ok && t && t->ll128_allowed;
            /* Forcing (measurement mode) may go where NCCL enables LL128 only when
             * NCCL_PROTO asks (link paths the plugin cannot see): with a cost table NCCL
             * has offered the entry, and the search verifies the data.  Never where the
             * rule refuses this GPU and release, never past a loaded table's verdict, and
             * without a cost table (v1/v2) only where the table mode would choose it. */
            bool forceable = ctx->abi >= 3 ? v != CCT_LL128_BLOCKED : ok;
            ctx->ll128_force[c][a] = forceable && (!t || t->ll128_allowed);
        }
    }
}

static const char *abi_versions(int abi)
{
    static const char *const v[] = {"?", "v1", "v2", "v3", "v4", "v5", "v6"};
    return (abi >= 1 && abi <= 6) ? v[abi] : "?";
}

/* Settle the context's mode from the table's fingerprint; returns false when strict mode
 * must fail init.  verdict_text receives the fingerprint sentence for the INFO line. */
static bool resolve_table(cct_pctx *ctx, const cct_pstate *ps, const cct_ptable_ref *tr,
                          const cct_gpu_facts *g, char *verdict_text, size_t len, size_t *n_sec,
                          size_t *n_rules)
{
    size_t lo, hi;
    cct_table_index_shape(tr->index, ctx->nranks, ctx->nnodes, &lo, &hi);
    cct_runtime rt = {g->known ? g->name : NULL,
                      g->cc,
                      ps->nccl_version,
                      ctx->nranks,
                      ctx->nnodes,
                      ps->hostid_set};
    char msg[512];
    cct_fp_verdict v = cct_fingerprint_check_shape(tr->table, &rt, hi > lo, msg, sizeof msg);
    char ver[32];
    cct_nccl_version_format(ps->nccl_version, ver, sizeof ver);
    const char *sep = g->why[0] ? "; " : "";
    /* NCCL model constants describe the GPU and NCCL, not a communicator shape: they apply
     * wherever everything but the topology matches (rank counts the search never ran) */
    bool constants = tr->table->constants.present && (cct_fp_usable(v) || v == CCT_FP_TOPOLOGY);
    if (constants)
        ctx->constants = &tr->table->constants;
    if (!cct_fp_usable(v)) {
        atomic_store(&ctx->mode, v == CCT_FP_TOPOLOGY ? CCT_OUT_NO_SECTION : CCT_OUT_MISMATCH);
        snprintf(verdict_text, len, "%s: %s%s%s", cct_fp_verdict_name(v), msg, sep, g->why);
        bool fatal = ps->strict && v != CCT_FP_TOPOLOGY;
        if (constants && !fatal)
            return true; /* no rules here, but the table is used: the INFO lines say so */
        if (cct_warn_first(CCT_WARN_FINGERPRINT + (int)v) || fatal)
            CCT_WARN(ctx->log, "table %s does not apply (%s): %s%s%s; NCCL's defaults are used%s",
                     tr->path, cct_fp_verdict_name(v), msg, sep, g->why,
                     fatal ? "; CCLTUNE_STRICT=1: failing communicator init" : "");
        return !fatal;
    }
    snprintf(verdict_text, len, "%s (%s, cc %d.%d, NCCL %s)%s", msg, g->known ? g->name : "?",
             g->cc / 10, g->cc % 10, ver, ps->rules_off ? "; rules off (CCLTUNE_RULES=0)" : "");
    if (ps->rules_off) {
        atomic_store(&ctx->mode, CCT_OUT_NO_SECTION); /* every call left to NCCL */
        return true;
    }
    build_candidates(ctx, tr->index, n_sec, n_rules);
    return true;
}

/* The table could not be used at all: say so once, fail init under strict. */
static bool no_table(cct_pctx *ctx, const cct_pstate *ps, char *verdict_text, size_t len)
{
    atomic_store(&ctx->mode, CCT_OUT_TABLE_ERROR);
    snprintf(verdict_text, len, "no table: %s", ps->err.msg);
    bool measuring = atomic_load(&cct_measure_on) != 0;
    if (ps->status == CCT_TABLE_NONE && measuring)
        return true; /* measurement mode needs no table */
    bool fatal = ps->strict;
    if (cct_warn_first(CCT_WARN_TABLE) || fatal)
        CCT_WARN(ctx->log, "%s%s; NCCL's defaults are used for every call%s",
                 ps->status == CCT_TABLE_FAILED ? "cannot use table: " : "", ps->err.msg,
                 fatal ? "; CCLTUNE_STRICT=1: failing communicator init" : "");
    return !fatal;
}

/* ---------- a folder of tables ---------- */

static cct_ptable_ref single_ref(const cct_pstate *ps)
{
    cct_ptable_ref r = {ps->path, &ps->table, &ps->index, ps->n_rules, &ps->waived};
    return r;
}

static cct_ptable_ref folder_ref(const cct_ptable *t)
{
    cct_ptable_ref r = {t->path, &t->table, &t->index, t->n_rules, &t->waived};
    return r;
}

/* The folder's files that could not be used: one WARN each, once per process (every init
 * under CCLTUNE_STRICT, which then fails). */
static bool warn_skipped(const cct_pstate *ps, ncclDebugLogger_t log)
{
    if (!ps->folder || ps->n_skipped == 0)
        return true;
    bool fatal = ps->strict;
    if (cct_warn_first(CCT_WARN_FOLDER_SKIPPED) || fatal)
        for (size_t i = 0; i < ps->n_skipped; i++)
            CCT_WARN(log, "table folder %s: skipping a file: %s%s", ps->path, ps->skipped[i].msg,
                     fatal ? "; CCLTUNE_STRICT=1: failing communicator init" : "");
    return !fatal;
}

/* "a.yaml (gpu-mismatch: ...); b.yaml (...)": the near misses of a folder. */
static void describe_closest(const cct_pstate *ps, const cct_fleet_choice *c, const cct_runtime *rt,
                             const bool *shape, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < c->n_closest && used + 1 < len; k++) {
        const cct_ptable *t = &ps->tables[c->closest[k]];
        char msg[512];
        cct_fingerprint_check_shape(&t->table, rt, shape[c->closest[k]], msg, sizeof msg);
        int w = snprintf(out + used, len - used, "%s%s (%s: %s)", k ? "; " : "", t->name,
                         cct_fp_verdict_name(c->closest_verdict[k]), msg);
        used = w < 0 ? used : used + (size_t)w < len ? used + (size_t)w : len - 1;
    }
}

/* Choose the folder's table for this communicator (cct_fleet.h).  *out gets it (table NULL
 * when none matches: then ctx->mode says why, verdict_text lists the closest and one WARN per
 * process does too).  pick_text gets why this one.  Returns false when strict must fail. */
static bool pick_from_folder(cct_pctx *ctx, const cct_pstate *ps, const cct_gpu_facts *g,
                             cct_ptable_ref *out, char *pick_text, size_t pick_len,
                             char *verdict_text, size_t len)
{
    const cct_table *tabs[CCT_FLEET_MAX_FILES];
    bool shape[CCT_FLEET_MAX_FILES];
    size_t n = ps->n_tables < CCT_FLEET_MAX_FILES ? ps->n_tables : CCT_FLEET_MAX_FILES;
    for (size_t i = 0; i < n; i++) {
        size_t lo, hi;
        cct_table_index_shape(&ps->tables[i].index, ctx->nranks, ctx->nnodes, &lo, &hi);
        tabs[i] = &ps->tables[i].table;
        shape[i] = hi > lo;
    }
    cct_runtime rt = {g->known ? g->name : NULL,
                      g->cc,
                      ps->nccl_version,
                      ctx->nranks,
                      ctx->nnodes,
                      ps->hostid_set};
    cct_fleet_choice c;
    cct_fleet_choose(tabs, shape, n, &rt, &c);
    if (c.chosen >= 0) {
        const cct_ptable *t = &ps->tables[c.chosen];
        *out = folder_ref(t);
        char why[128], other[128] = "";
        cct_fleet_rank best = cct_fleet_rank_of(&t->table, &rt);
        cct_fleet_rank_text(&best, why, sizeof why);
        if (c.runner_up >= 0) {
            cct_fleet_rank r2 = cct_fleet_rank_of(&ps->tables[c.runner_up].table, &rt);
            cct_fleet_rank_text(&r2, other, sizeof other);
        }
        snprintf(pick_text, pick_len, "; picked %s of %zu in folder %s (%s)%s%s%s%s%s", t->name,
                 ps->n_tables, ps->path, why,
                 c.runner_up < 0 ? ", the only match"
                 : c.tie         ? ", tied with "
                                 : ", over ",
                 c.runner_up >= 0 ? ps->tables[c.runner_up].name : "", c.runner_up >= 0 ? " (" : "",
                 other,
                 c.runner_up < 0 ? ""
                 : c.tie         ? "): first by file name"
                                 : ")");
        if (c.tie && cct_warn_first(CCT_WARN_FOLDER_TIE))
            CCT_WARN(ctx->log,
                     "tables %s and %s of folder %s both match nranks=%d nnodes=%d with equal "
                     "precedence; using %s (first by file name).  Remove one or narrow a "
                     "fingerprint (ccltune validate %s)",
                     t->name, ps->tables[c.runner_up].name, ps->path, ctx->nranks, ctx->nnodes,
                     t->name, ps->path);
        return true;
    }
    out->table = NULL;
    out->path = ps->path;
    bool topology = c.n_closest > 0 && c.closest_verdict[0] == CCT_FP_TOPOLOGY;
    atomic_store(&ctx->mode, topology ? CCT_OUT_NO_SECTION : CCT_OUT_MISMATCH);
    char closest[1536];
    describe_closest(ps, &c, &rt, shape, closest, sizeof closest);
    char ver[32];
    snprintf(verdict_text, len, "no table of the folder matches; closest: %s", closest);
    bool fatal = ps->strict && !topology;
    if (cct_warn_first(CCT_WARN_FOLDER_NONE) || fatal)
        CCT_WARN(ctx->log,
                 "no table in folder %s matches this process (%s, cc %d.%d, NCCL %s, nranks=%d "
                 "nnodes=%d%s); NCCL's defaults are used; closest: %s%s",
                 ps->path, g->known ? g->name : "GPU unknown", g->cc / 10, g->cc % 10,
                 cct_nccl_version_format(ps->nccl_version, ver, sizeof ver), ctx->nranks,
                 ctx->nnodes, ps->hostid_set ? ", NCCL_HOSTID set" : "", closest,
                 fatal ? "; CCLTUNE_STRICT=1: failing communicator init" : "");
    return !fatal;
}

cct_pctx *cct_ctx_create(int abi, uint64_t comm_id, size_t nranks, size_t nnodes,
                         ncclDebugLogger_t log, bool *fail)
{
    const cct_pstate *ps = cct_pstate_get();
    cct_gpu_facts g;
    g.why[0] = '\0';
    g.known = cct_device_current_gpu(g.name, sizeof g.name, &g.cc, g.why, sizeof g.why);
    return cct_ctx_create_with(ps, &g, abi, comm_id, nranks, nnodes, log, fail);
}

cct_pctx *cct_ctx_create_with(const cct_pstate *ps, const cct_gpu_facts *gpu, int abi,
                              uint64_t comm_id, size_t nranks, size_t nnodes, ncclDebugLogger_t log,
                              bool *fail)
{
    *fail = false;
    const cct_gpu_facts g = *gpu;
    cct_pctx *ctx = ctx_alloc();
    if (!ctx) {
        if (cct_warn_first(CCT_WARN_NO_MEMORY))
            CCT_WARN(log, "out of memory creating a tuner context; NCCL's defaults are used");
        return NULL;
    }
    atomic_store(&ctx->head.magic, CCT_CTX_LIVE);
    ctx->abi = abi;
    ctx->comm_id = comm_id;
    ctx->nranks = nranks > (size_t)CCT_TABLE_MAX_RANKS ? -1 : (int)nranks;
    ctx->nnodes = nnodes > (size_t)CCT_TABLE_MAX_RANKS ? -1 : (int)nnodes;
    ctx->log = log;
    ctx->trace = ps->trace;
    ctx->nccl_version = ps->nccl_version;
    unsigned seq = atomic_fetch_add(&context_seq, 1) + 1;
    if (abi >= 5)
        snprintf(ctx->label, sizeof ctx->label, "0x%" PRIx64, comm_id);
    else
        snprintf(ctx->label, sizeof ctx->label, "#%u", seq);
    /* user restrictions matter only where NCCL itself does not apply them (no cost table) */
    if (abi <= 2 && ps->nccl_version < 22200)
        ctx->env = &ps->env;
    cct_pstate_ctx_add(1);

    bool ok = warn_skipped(ps, log);
    char verdict[2048] = "", pick[4608] = "";
    cct_ptable_ref tr = {ps->path, NULL, NULL, 0, NULL};
    bool have = ps->status == CCT_TABLE_OK;
    if (have && ps->folder && ok)
        ok = pick_from_folder(ctx, ps, &g, &tr, pick, sizeof pick, verdict, sizeof verdict);
    else if (have && !ps->folder)
        tr = single_ref(ps);
    build_ll128(ctx, ps, tr.table, g.known ? g.cc : -1);

    if (ps->force_env_bad && (cct_warn_first(CCT_WARN_FORCE) || ps->strict)) {
        CCT_WARN(log, "%s; not forcing anything%s", ps->force_err.msg,
                 ps->strict ? "; CCLTUNE_STRICT=1: failing communicator init" : "");
        ok = !ps->strict;
    }
    size_t n_sec = 0, n_rules = 0;
    if (ok && tr.table && tr.waived->msg[0] && cct_warn_first(CCT_WARN_UNSAFE_OK))
        CCT_WARN(log, "%s; used anyway because CCLTUNE_TABLE_UNSAFE_OK=1", tr.waived->msg);
    if (ok && tr.table)
        ok = resolve_table(ctx, ps, &tr, &g, verdict, sizeof verdict, &n_sec, &n_rules);
    else if (ok && !have)
        ok = no_table(ctx, ps, verdict, sizeof verdict);
    ctx->table_path = tr.table ? tr.path : "";
    if (!ok) {
        *fail = true;
        ctx_bury(ctx); /* no finalize line: for NCCL this communicator never existed */
        return NULL;
    }
    char ver[32];
    CCT_INFO(log,
             "init comm %s nranks=%d nnodes=%d tuner %s NCCL %s: table %s%s%s%s, %zu sections / "
             "%zu rules, %zu sections / %zu rules apply here; fingerprint %s%s%s",
             ctx->label, ctx->nranks, ctx->nnodes, abi_versions(abi),
             cct_nccl_version_format(ps->nccl_version, ver, sizeof ver),
             tr.path[0] ? tr.path : "(none)", ps->path_from ? " (from " : "",
             ps->path_from ? ps->path_from : "", ps->path_from ? ")" : "",
             tr.table ? tr.table->n_sections : 0, tr.n_rules, n_sec, n_rules, verdict, pick,
             atomic_load(&cct_measure_on) ? "; measurement mode on" : "");
    return ctx;
}

bool cct_ctx_destroy(cct_pctx *ctx)
{
    if (!ctx)
        return true;
    uint_fast64_t live = CCT_CTX_LIVE;
    if (!atomic_compare_exchange_strong(&ctx->head.magic, &live, CCT_CTX_DEAD))
        return false; /* finalized already (or never a context): touch nothing */
    uint64_t n[CCT_NUM_OUTCOMES], calls = 0;
    cct_ctx_counters(ctx, n);
    for (int i = 0; i < CCT_NUM_OUTCOMES; i++)
        calls += n[i];
    CCT_INFO(ctx->log,
             "finalize comm %s nranks=%d nnodes=%d: calls=%" PRIu64 " overridden=%" PRIu64
             " left_to_nccl: no_section=%" PRIu64 " no_rule=%" PRIu64 " ignored_entry=%" PRIu64
             " ll128_blocked=%" PRIu64 " mismatch=%" PRIu64 " table_error=%" PRIu64
             " bypassed=%" PRIu64,
             ctx->label, ctx->nranks, ctx->nnodes, calls, n[CCT_OUT_OVERRIDDEN],
             n[CCT_OUT_NO_SECTION], n[CCT_OUT_NO_RULE], n[CCT_OUT_IGNORED], n[CCT_OUT_LL128],
             n[CCT_OUT_MISMATCH], n[CCT_OUT_TABLE_ERROR], n[CCT_OUT_BYPASSED]);
    ctx_bury(ctx);
    return true;
}
