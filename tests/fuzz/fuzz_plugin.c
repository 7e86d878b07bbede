/*
 * fuzz_plugin.c - libFuzzer target for what the tuner plugin does with a table it loaded:
 * index it, build communicator contexts on it, and answer getCollInfo.
 *
 * The input is a table file.  If the loader accepts it, a plugin state is built from it
 * exactly as plugin_state.c does (cct_pstate_index_table), and for every (ranks, nodes) the
 * table has a section for, contexts are created through cct_ctx_create_with() -- the code
 * path of a real init -- for tuner ABI v6 (cost table) and v2 (no cost table), on the GPU
 * and NCCL the table's fingerprint names (so the rules apply) and once on another GPU.
 * Then getCollInfo runs for every collective at the edges of every band, on cost tables
 * with ignored (-1) entries chosen from the input's hash, and each answer is checked
 * against an oracle built from the plain table API (cct_table_find_section +
 * cct_section_lookup): only the rule's own entry may change, and only to 0.0; an ignored
 * entry never changes; nChannels is the rule's; nothing changes when no rule applies.
 * Any violation abort()s, so libFuzzer saves the table that caused it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

#define N_ALGO 7
#define N_PROTO 3
#define MAX_SHAPES 8
#define MAX_RULE_EDGES 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The plugin formats every line through this (so format strings get exercised too). */
static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
}

static uint64_t hash_bytes(const uint8_t *data, size_t size)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    return h;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The rule the table gives a call, by the plain API (the oracle). */
static const cct_rule *oracle(const cct_table *t, bool usable, int coll, int ranks, int nodes,
                              int pipe_ops, int reg_buff, uint64_t bytes)
{
    if (!usable)
        return NULL;
    const cct_section *s = cct_table_find_section(t, coll, ranks, nodes, pipe_ops, reg_buff);
    if (!s)
        return NULL;
    return cct_section_lookup(s, bytes == UINT64_MAX ? bytes - 1 : bytes);
}

static void check_costs_call(cct_pctx *ctx, const cct_table *t, bool usable, int coll, int ranks,
                             int nodes, int pipe_ops, int reg_buff, uint64_t bytes, uint64_t *rng)
{
    float table[N_ALGO][N_PROTO], before[N_ALGO][N_PROTO];
    uint64_t mask = next(rng);
    for (int a = 0; a < N_ALGO; a++) {
        for (int p = 0; p < N_PROTO; p++)
            table[a][p] = (mask >> (a * N_PROTO + p)) & 1 ? -1.0f : 1.0f + (float)(a * N_PROTO + p);
    }
    memcpy(before, table, sizeof table);
    int nch = 0;
    /* NCCL passes its float[numAlgo][numProto] array cast to float**, not row pointers */
    cct_outcome out = cct_ctx_coll_costs(ctx, coll, (size_t)bytes, pipe_ops, (float **)table,
                                         N_ALGO, N_PROTO, reg_buff, &nch);
    const cct_rule *r = oracle(t, usable, coll, ranks, nodes, pipe_ops, reg_buff, bytes);
    int changed = 0;
    for (int a = 0; a < N_ALGO; a++)
        for (int p = 0; p < N_PROTO; p++) {
            if (table[a][p] == before[a][p])
                continue;
            changed++;
            if (before[a][p] < 0.0f || table[a][p] != 0.0f || !r || r->algo != a || r->proto != p)
                abort(); /* an ignored entry, a value other than 0.0 or not the rule's entry */
        }
    if (changed > 1 || (changed == 1) != (out == CCT_OUT_OVERRIDDEN))
        abort();
    if (nch != (out == CCT_OUT_OVERRIDDEN && r && r->channels > 0 ? r->channels : 0))
        abort();
    /* a rule whose entry NCCL offers is applied, unless it is LL128 (its own rule) */
    if (r && before[r->algo][r->proto] >= 0.0f && r->proto != CCT_PROTO_LL128 &&
        out != CCT_OUT_OVERRIDDEN)
        abort();
    if (!r && out == CCT_OUT_OVERRIDDEN)
        abort();
}

static void check_v2_call(cct_pctx *ctx, const cct_table *t, bool usable, int coll, int ranks,
                          int nodes, int pipe_ops, uint64_t bytes, uint64_t *rng)
{
    int algo = -1, proto = -1, nch = 0;
    uint64_t x = next(rng);
    cct_outcome out = cct_ctx_coll_v2(ctx, coll, (size_t)bytes, (int)(x & 1), (int)((x >> 1) & 1),
                                      pipe_ops, &algo, &proto, &nch);
    const cct_rule *r = oracle(t, usable, coll, ranks, nodes, pipe_ops, -1, bytes);
    if (out == CCT_OUT_OVERRIDDEN) {
        if (!r || algo != r->algo || proto != r->proto ||
            nch != (r->channels > 0 ? r->channels : 0))
            abort();
    } else if (algo != -1 || proto != -1 || nch != 0) {
        abort(); /* both or neither: a half answer confuses NCCL 2.19-2.21 */
    }
    size_t chunk = 12345;
    cct_ctx_chunk_size(ctx, coll, (size_t)bytes, r ? r->algo : 0, r ? r->proto : 0, 1, &chunk);
    const cct_rule *rc = oracle(t, usable, coll, ranks, nodes, 1, -1, bytes);
    size_t want = 12345;
    if (rc && r && rc->chunk_bytes && rc->algo == r->algo && rc->proto == r->proto)
        want = (size_t)rc->chunk_bytes;
    if (chunk != want)
        abort();
}

/* Sizes worth asking about in a section: both edges of every band (bounded), 0, the top. */
static size_t edges(const cct_section *s, uint64_t *out, size_t cap)
{
    size_t n = 0;
    out[n++] = 0;
    out[n++] = UINT64_MAX;
    for (size_t i = 0; s && i < s->n_rules && n + 3 <= cap; i++) {
        out[n++] = s->rules[i].min_bytes;
        out[n++] = s->rules[i].max_bytes - 1;
        out[n++] = s->rules[i].max_bytes;
    }
    return n;
}

static void drive(const cct_pstate *ps, const cct_gpu_facts *g, int abi, int ranks, int nodes,
                  uint64_t *rng)
{
    bool fail = false;
    cct_pctx *ctx =
        cct_ctx_create_with(ps, g, abi, next(rng), (size_t)ranks, (size_t)nodes, logger, &fail);
    if (fail)
        abort(); /* not strict: a table problem never fails init */
    if (!ctx)
        return; /* out of memory: NCCL proceeds without a context */
    const cct_table *t = &ps->table;
    cct_runtime rt = {
        g->known ? g->name : NULL, g->cc, ps->nccl_version, ranks, nodes, ps->hostid_set};
    bool usable = cct_fp_usable(cct_fingerprint_check(t, &rt, NULL, 0));
    uint64_t sizes[3 * MAX_RULE_EDGES + 2];
    for (int coll = 0; coll < CCT_NUM_COLLS; coll++) {
        for (int pipe_ops = 1; pipe_ops <= 2; pipe_ops++) {
            for (int reg_buff = 0; reg_buff <= 1; reg_buff++) {
                const cct_section *s =
                    cct_table_find_section(t, coll, ranks, nodes, pipe_ops, reg_buff);
                size_t n = edges(s, sizes, sizeof sizes / sizeof sizes[0]);
                for (size_t i = 0; i < n; i++) {
                    if (abi >= 3)
                        check_costs_call(ctx, t, usable, coll, ranks, nodes, pipe_ops, reg_buff,
                                         sizes[i], rng);
                    else if (reg_buff == 0)
                        check_v2_call(ctx, t, usable, coll, ranks, nodes, pipe_ops, sizes[i], rng);
                }
            }
        }
    }
    /* out-of-range collectives and cost-table shapes NCCL never sends must be left alone */
    float one = 1.0f;
    int nch = 0;
    if (cct_ctx_coll_costs(ctx, CCT_NUM_COLLS, 1, 1, (float **)&one, 1, 1, 0, &nch) ==
            CCT_OUT_OVERRIDDEN ||
        one != 1.0f || nch != 0)
        abort();
    cct_ctx_destroy(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cct_pstate ps; /* large (paths, messages): not on the stack */
    memset(&ps, 0, sizeof ps);
    snprintf(ps.path, sizeof ps.path, "fuzz.yaml");
    ps.path_from = "CCLTUNE_TABLE";
    if (cct_table_load_buffer((const char *)data, size, "fuzz.yaml", &ps.table, &ps.err) != CCT_OK)
        return 0;
    if (cct_pstate_index_table(&ps) != CCT_OK)
        return 0;
    ps.status = CCT_TABLE_OK;
    uint64_t rng = hash_bytes(data, size) | 1;
    const cct_fingerprint *fp = &ps.table.fingerprint;
    int v = fp->nccl ? cct_nccl_version_parse(fp->nccl) : -1;
    ps.nccl_version = v > 0 ? v : 22809;
    ps.hostid_set = fp->ranks_per_gpu > 1; /* shared-GPU tables apply only with NCCL_HOSTID */
    ps.trace = (rng >> 8) & 1;             /* exercise the TRACE lines on half the inputs */
    ps.ll128_c2c = (int)((rng >> 9) % 3) - 1;
    cct_env_mask_parse(NULL, NULL, &ps.env);

    cct_gpu_facts own = {.known = true, .cc = fp->cc};
    snprintf(own.name, sizeof own.name, "%s", fp->gpu ? fp->gpu : "");
    cct_gpu_facts other = {.known = true, .cc = 80};
    snprintf(other.name, sizeof other.name, "Some Other GPU");

    int shapes[MAX_SHAPES][2], n_shapes = 0;
    for (size_t i = 0; i < ps.table.n_sections && n_shapes < MAX_SHAPES; i++) {
        const cct_section *s = &ps.table.sections[i];
        bool seen = false;
        for (int k = 0; k < n_shapes; k++)
            seen |= shapes[k][0] == s->ranks && shapes[k][1] == s->nodes;
        if (!seen) {
            shapes[n_shapes][0] = s->ranks;
            shapes[n_shapes][1] = s->nodes;
            n_shapes++;
        }
    }
    for (int k = 0; k < n_shapes; k++) {
        drive(&ps, &own, 6, shapes[k][0], shapes[k][1], &rng);
        drive(&ps, &own, 2, shapes[k][0], shapes[k][1], &rng);
    }
    if (n_shapes > 0)
        drive(&ps, &other, 6, shapes[0][0], shapes[0][1], &rng);
    cct_pstate_free_table(&ps);
    return 0;
}
